/*
 * nbc/nbc -- the nonblocking collectives' engine (progress-threads paper,
 * section 4): requests, the per-communicator queues and the progress pass.
 *
 * A nonblocking collective is one of coll/'s operations (coll/coll's
 * table: the same init/work/fini the blocking calls loop over) held in a
 * tc_nb_t.  Each communicator's operations form a FIFO, the engine's queue
 * of its context, and run one at a time in call order, which MPI makes
 * the same on every rank: they share the context's sequence numbers,
 * control lines and scratch exactly as consecutive blocking collectives
 * do.  Operations on different communicators progress independently.
 *
 * The request the application holds is an MPI generalized request
 * (MPI_Grequest_start), so the native completion calls (MPI_Wait,
 * MPI_Waitall, ... mixed with native requests) complete it.  Neither MPI
 * library gives a generalized request a progress hook usable in both
 * (Open MPI 4.1 exports none; MPICH's MPIX_Grequest_class has one), so
 * progress comes from: our completion wrappers (tc_nb_wait & co., which
 * the interposed MPI_Wait & co. are), our blocking collectives' wait
 * loops, every nonblocking call, and the progress threads (progress/,
 * the layer above, which tells the engine it runs: tc_nb_threads_attach).
 *
 * Failures: an operation ends with a tc_status_t; the bindings' hook
 * (tc_nb_on_error) turns a failure into the MPI error code the request
 * completes with, and says why.
 *
 * Locking: one mutex (the progress lock) guards the queues and the list
 * of queues with work; whoever holds it advances operations.  The
 * application thread takes it in progress calls; a progress thread takes
 * it with trylock and never waits for it.  A blocking collective on a
 * communicator first drains that communicator's queue, so the blocking
 * state machine never runs beside a queued one of the same context.
 *
 * Owns: tc_nb_t, the queues (one per context with nonblocking work, kept
 * here, not in the context), the progress lock, the active list.
 * May call: coll/, xfer/ (asynchronous copies), topo/, base/, PMPI.
 */
#ifndef TC_NBC_NBC_H
#define TC_NBC_NBC_H

#include "../base/status.h"
#include "../coll/coll.h"
#include "../coll/ctx.h"

#include <mpi.h>
#include <stdatomic.h>

typedef struct tc_nb {
    struct tc_nb *next;    /* the queue's FIFO, then the finished list */
    struct tc_nb_queue *q; /* its context's queue */
    tc_ctx_t *ctx;
    const tc_coll_ops_t *ops; /* what it is (coll/coll's table) */
    const char *call;         /* the MPI call that started it, for messages */
    int rank;                 /* our rank in the communicator, for messages */
    int state;                /* queued, running, finished (nbc.c) */
    _Atomic int rc;           /* MPI_SUCCESS or the MPI error code it ended with:
                                 written (release) before MPI_Grequest_complete by
                                 the thread that finished it, read (acquire) by the
                                 query callback in the application's completion call */
    tc_status_t st;           /* its status (progress lock) */
    int drained;              /* failed, and its drain step finished cleanly */
    MPI_Request greq;         /* the application's handle */
    _Atomic int refs;         /* 2 at start: the engine's and MPI's (MPICH runs
                                 the free callback in MPI_Request_free, before
                                 the operation has finished); freed at 0 */
    tc_coll_args_t a;         /* its arguments (buffers contiguous: packed copies
                                 otherwise), used when it reaches the queue's head */
    tc_rtype_t t;             /* reductions: a.t points here */
    /* after success, unpack @a.out into the user's non-contiguous buffer */
    void *ubuf;
    int ucount;
    MPI_Datatype utype;
    char *tmp[2];      /* owned copies, freed when the operation completes */
    tc_coll_state_t u; /* the operation's state (not zeroed: its init sets it) */
} tc_nb_t;

/** A new operation of @kind (tc_coll_kind_t) on @ctx (enabled), started by
 *  @call ("MPI_Ibcast"), zeroed but for the kind and the context; NULL
 *  without memory.  Fill its arguments (op->a), then start it. */
tc_nb_t *tc_nb_new(tc_ctx_t *ctx, int kind, const char *call);

/** Queue @op behind the communicator's earlier operations, create the
 *  application's request in @req and advance what can be advanced now.
 *  MPI_SUCCESS or an MPI error code (op released).  Local. */
int tc_nb_start(tc_nb_t *op, MPI_Request *req);

/** Advance every outstanding operation of this process once and complete
 *  the finished ones toward MPI.  Returns the number still outstanding.
 *  Application thread; never blocks. */
int tc_nb_progress(void);

/** An asynchronous copy was queued on @ctx's node segment (xfer/region):
 *  list the context so progress (the thread, or tc_nb_progress) runs it;
 *  it counts as outstanding until it has run.  Application thread. */
void tc_nb_watch(tc_ctx_t *ctx);

/** Operations started and not yet completed toward MPI (any thread). */
int tc_nb_outstanding(void);

/** Progress until @ctx's queue is empty (blocking; the application
 *  thread, before a blocking collective on @ctx, and when @ctx goes). */
void tc_nb_drain(tc_ctx_t *ctx);

/* Completion calls with progress: the semantics of MPI_Wait, MPI_Test,
 * ...; they work on native and topocoll requests alike, and progress
 * topocoll's operations while they wait. */
int tc_nb_wait(MPI_Request *req, MPI_Status *st);
int tc_nb_test(MPI_Request *req, int *flag, MPI_Status *st);
int tc_nb_waitall(int n, MPI_Request reqs[], MPI_Status sts[]);
int tc_nb_testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]);
int tc_nb_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st);
int tc_nb_testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st);
int tc_nb_waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[]);
int tc_nb_testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[]);
int tc_nb_request_get_status(MPI_Request req, int *flag, MPI_Status *st);

/** The bindings' hook: turns the failure @st of operation @call on rank
 *  @rank into the MPI error code its request completes with (and says
 *  why).  Called outside the progress lock, after the operation's context
 *  may have gone.  Set once, before the first operation; without it,
 *  MPI_ERR_INTERN. */
typedef int (*tc_nb_error_hook_t)(int rank, tc_status_t st, const char *call);
void tc_nb_on_error(tc_nb_error_hook_t hook);

/* ---- For the progress threads (progress/) ---------------------------------- */

/** One progress pass if the lock is free (1 if it ran). */
int tc_nb_sweep_try(void);
/** Sleep until an operation is queued or *@stop. */
void tc_nb_wait_for_work(_Atomic int *stop);
/** Wake the sleepers of tc_nb_wait_for_work. */
void tc_nb_wake(void);
/** A progress thread runs (from now until tc_nb_threads_detach); @shares_core:
 *  1 when it has no core of its own (the application's waits then yield:
 *  spinning would take the core from the thread they wait for).  The split
 *  tree then gives it the root-side levels. */
void tc_nb_threads_attach(int shares_core);
void tc_nb_threads_detach(void);
/** The calling thread is the communication core's progress thread. */
void tc_nb_mark_progress_thread(void);

#endif
