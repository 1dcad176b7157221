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
    char *tmp[2]; /* owned copies of the application's data (packed
                     buffers), freed when the operation completes */
    char *own;    /* owned memory the call derived from its arguments alone
                     (the v-collectives' tables), freed with the operation
                     (a persistent one: with its request) */
    /* The v-collectives (repack: 1): a persistent start packs the input
     * again (pk_in: pk_count of pk_type at pk_src into pk_bytes at pk_dst,
     * one of tmp; pk_type owned) and each completion unpacks the output
     * (ubuf), so their packed copies need not send them native */
    int repack, pk_in, pk_count, pk_bytes;
    const void *pk_src;
    MPI_Datatype pk_type;
    char *pk_dst;
    /* persistent (MPI 4.0 section 6.13): made once, started many times */
    int persistent;          /* 1: greq is the application's handle, never completed
                                until the request is freed (nbc/persist) */
    int active;              /* started and not yet completed toward the
                                application (its thread) */
    int direct;              /* running on the application's thread, outside the
                                queues (nbc.c: direct starts) */
    _Atomic int done;        /* finished this start: written (release) by whoever
                                completed it, read (acquire) by the completion calls */
    struct tc_nb *pnext;     /* the persistent table's chain (nbc/persist) */
    MPI_Comm ucomm;          /* persistent: the application's communicator (errors) */
    struct tc_nb_defer *dfr; /* persistent, made before its context was built:
                                the native request it runs until then (nbc/persist) */
    /* (its state, while it runs, is its queue's: nbc.c state_of) */
} tc_nb_t;

/** Free what @op owns besides itself: its copies, tables, kept types. */
void tc_nb_free_copies(tc_nb_t *op);

/** A new operation of @kind (tc_coll_kind_t) on @ctx (enabled), started by
 *  @call ("MPI_Ibcast"), zeroed but for the kind and the context; NULL
 *  without memory.  Fill its arguments (op->a), then start it. */
tc_nb_t *tc_nb_new(tc_ctx_t *ctx, int kind, const char *call);

/** Queue @op behind the communicator's earlier operations, create the
 *  application's request in @req and advance what can be advanced now.
 *  MPI_SUCCESS or an MPI error code (op released).  Local. */
int tc_nb_start(tc_nb_t *op, MPI_Request *req);

/* ---- Persistent operations (MPI 4.0 section 6.13; nbc/persist.c) ------------

 * topocoll_*_init runs the nonblocking call with the persistent mode on
 * (tc_nb_persist_next): the screening and the plan are made once, and the
 * operation tc_nb_start would have queued becomes a persistent request
 * instead, started by tc_nb_pstart as often as the application likes with
 * no screening, no plan, no allocation and no MPI request per start.  A
 * call that would go native or needs packed copies (non-contiguous
 * buffers, which must be packed at each start) but for the v-collectives,
 * which redo them at each start (repack), returns
 * TC_NB_PERSIST_NATIVE and the binding makes the native persistent
 * request.  The application's handle is a generalized request that
 * completes only when it is freed; the completion calls below recognise
 * it. */

/** tc_nb_start's answer in the persistent mode when the call must go to
 *  the native MPI's persistent request (never an MPI error code). */
#define TC_NB_PERSIST_NATIVE (-7013)

/** @on: the next tc_nb_start on this thread makes a persistent request;
 *  0: the mode ends (whether or not a start took it). */
void tc_nb_persist_next(int on);
/** 1 while the persistent mode is on (the API's native branches then
 *  answer TC_NB_PERSIST_NATIVE instead of starting a native call). */
int tc_nb_persist_pending(void);

/** MPI_Start on @req: 1 and *@rc set if @req is a persistent request of
 *  topocoll's (started, or an MPI error code: already active
 *  (MPI_ERR_REQUEST), its communicator freed (MPI_ERR_COMM), with the
 *  communicator whose handler to raise it through in *@comm); 0 if it is
 *  not one (the caller passes it to PMPI_Start).  Local. */
int tc_nb_pstart(MPI_Request req, int *rc, MPI_Comm *comm);
/** The communicator of persistent request @req (made by topocoll_*_init),
 *  whose error handler a failed start raises (set by the init). */
void tc_nb_persist_comm(MPI_Request req, MPI_Comm comm);

/** How a binding makes its persistent request again: @redo runs the
 *  init with @args (the persistent mode on), giving topocoll's request in
 *  *@out (MPI_SUCCESS), TC_NB_PERSIST_NATIVE, or an MPI error code;
 *  @native_start starts the native MPI's nonblocking call with @args;
 *  @release frees @args. */
typedef struct tc_nb_redo {
    int (*redo)(void *args, MPI_Request *out);
    int (*native_start)(void *args, MPI_Request *out); /* the native nonblocking call */
    void (*release)(void *args);
    void *args;
} tc_nb_redo_t;

/** A persistent init (@call, "MPI_Bcast_init") on @comm, whose context @c is not built yet
 *  (TOPOCOLL_COMM_LAZY), went to the native MPI's request @nat: make the
 *  application's handle in *@req, whose starts are the native nonblocking
 *  call (@redo's native_start) until one finds @c built and enabled.  That start runs @redo, which
 * every process reaches at the same start (a context is built by the same collective everywhere,
 * and topocoll assumes starts ordered alike with the communicator's other collectives:
 * TOPOCOLL_PERSIST); from then on the request is
 * topocoll's, or @nat's for good (its starts @nat's) if the redo answers TC_NB_PERSIST_NATIVE or @c
 * goes first (Open MPI releases it when the application frees the communicator, MPICH with the
 * communicator's last request, @nat among them, which the request keeps until it is freed).  The
 * init asks @c to build at its next blocking collective.  A start's or completion's failure of @nat
 *  is raised by the native MPI.  MPI_SUCCESS
 *  (@nat and @redo's args are the request's now) or an MPI error code
 *  (both stay the caller's).  Local. */
int tc_nb_persist_defer(tc_ctx_t *c, MPI_Comm comm, const char *call, MPI_Request nat,
                        const tc_nb_redo_t *redo, MPI_Request *req);

/** The native MPI made persistent request @req for topocoll_*_init
 *  (MPICH 4.0.2's fail its MPI_Testall: the completion calls avoid that
 *  call on arrays holding one); MPI_Request_free forgets it. */
void tc_nb_persist_native(MPI_Request req);

/** MPI_Request_free on @req: 1 and *@rc set if it was topocoll's
 *  persistent request (an active one is completed first; *@req becomes
 *  MPI_REQUEST_NULL); 0 if not.  Local but for that wait. */
int tc_nb_pfree(MPI_Request *req, int *rc);

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
