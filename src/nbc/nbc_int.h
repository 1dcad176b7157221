/*
 * nbc/nbc_int -- what the engine (nbc.c) and the persistent requests
 * (persist.c) and the completion calls (complete.c) share inside the
 * layer; each file calls only the ones before it in this list: nbc.c,
 * persist.c, complete.c.  Not for other layers: they use nbc.h.
 *
 * Owns nothing.  May call: nbc.h.
 */
#ifndef TC_NBC_NBC_INT_H
#define TC_NBC_NBC_INT_H

#include "../base/sync.h"
#include "nbc.h"

/* ---- nbc.c (the engine: calls neither file below) ---- */

/** Give @op its context's queue and its rank: MPI_SUCCESS, or
 *  MPI_ERR_NO_MEM without memory for a queue. */
int tc_nb_attach(tc_nb_t *op);
/** Start @op (attached) as a nonblocking operation: its generalized
 *  request in *@req, queued.  MPI_SUCCESS or an MPI error code (@op not
 *  started, still the caller's). */
int tc_nb_launch(tc_nb_t *op, MPI_Request *req);
/** Also run @hook when a context goes (after its operations completed). */
void tc_nb_on_release(void (*hook)(tc_ctx_t *c));

/** Queue @op (its queue op->q set) behind its communicator's earlier
 *  operations, count it outstanding and advance what can be advanced. */
void tc_nb_enqueue(tc_nb_t *op);
/** Start persistent operation @op (reset, its queue set): directly on
 *  this thread where the engine is idle (nbc.c), else queued. */
void tc_nb_restart(tc_nb_t *op);
/** Advance a directly started @op once (@wait: to its end, as a blocking
 *  call does); afterwards it may be finished (done) or handed to its
 *  queue.  Application thread. */
void tc_nb_direct_advance(tc_nb_t *op, int wait);
/** Polls before a waiter of the engine yields. */
int tc_nb_spin(void);
/** Drive the MPI library's progress engine every 16th poll past the spin
 *  of @b (as the blocking calls' waits do: native traffic others need
 *  from us, and the application's requests, stall otherwise), on @c's
 *  private communicator (MPI_COMM_SELF without one). */
void tc_nb_poke(const tc_ctx_t *c, const tc_backoff_t *b);

/* ---- persist.c (persistent requests, tc_nb_start; calls nbc.c) ---- */

/** MPI_Testall over native requests (no request is completed unless all
 *  are); over a native persistent collective request without
 *  PMPI_Testall (persist.c says why). */
int tc_nb_native_testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]);

/** 1 if one of the @n requests at @reqs is a persistent request of ours
 *  (one relaxed load when there is none). */
int tc_np_any(int n, const MPI_Request reqs[]);
/* The completion calls where one of the requests is (MPI 4.0 sections
 * 3.7.3, 3.7.5; an inactive persistent request completes at once with an
 * empty status).  @flag NULL: wait (Waitall, Waitany); @wait for some. */
int tc_np_wait(MPI_Request *req, MPI_Status *st);
int tc_np_test(MPI_Request *req, int *flag, MPI_Status *st);
int tc_np_all(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]);
int tc_np_any_of(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st);
int tc_np_some(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[], int wait);
int tc_np_get_status(MPI_Request req, int *flag, MPI_Status *st);

#endif
