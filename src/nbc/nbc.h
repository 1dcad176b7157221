/*
 * nbc/nbc -- nonblocking collectives (progress-threads paper, section 4):
 * requests, the per-communicator queues, the progress engine and the
 * progress threads.
 *
 * A nonblocking collective is one of coll/'s state machines (the same
 * init/work/fini the blocking calls loop over) held in a tc_nb_t.  Each
 * communicator's operations form a FIFO on its context and run one at a
 * time in call order, which MPI makes the same on every rank: they share
 * the context's sequence numbers, control lines and scratch exactly as
 * consecutive blocking collectives do.  Operations on different
 * communicators progress independently.
 *
 * The request the application holds is an MPI generalized request
 * (MPI_Grequest_start), so the native completion calls (MPI_Wait,
 * MPI_Waitall, ... mixed with native requests) complete it.  Neither MPI
 * library gives a generalized request a progress hook usable in both
 * (Open MPI 4.1 exports none; MPICH's MPIX_Grequest_class has one), so
 * progress comes from: our completion wrappers (tc_nb_wait & co., which
 * the interposed MPI_Wait & co. are), our blocking collectives' wait
 * loops, every nonblocking call, and the progress threads.
 *
 * Progress threads (TOPOCOLL_COMM_CORES > 0, MPI_THREAD_MULTIPLE): one per
 * process, bound by the placement policy (bind | numa | odd-even,
 * TOPOCOLL_PROGRESS_PLACEMENT: the paper's sections 4.2 and 5, equations
 * 1 and 2), sweeps the queues while the application computes.
 *
 * Locking: one mutex (the progress lock) guards the queues and the list
 * of contexts with work; whoever holds it advances operations.  The
 * application thread takes it in progress calls; a progress thread takes
 * it with trylock and never waits for it.  A blocking collective on a
 * communicator first drains that communicator's queue, so the blocking
 * state machine never runs beside a queued one of the same context.
 *
 * Owns: tc_nb_t, the progress lock, the active list, the progress
 * threads.  May call: coll/, topo/, base/, PMPI.
 */
#ifndef TC_NBC_NBC_H
#define TC_NBC_NBC_H

#include "../coll/allgather.h"
#include "../coll/allreduce.h"
#include "../coll/barrier.h"
#include "../coll/bcast.h"
#include "../coll/ctx.h"
#include "../coll/reduce.h"
#include "../coll/scan.h"
#include "../coll/tree.h"

#include <hwloc.h>
#include <mpi.h>
#include <stdatomic.h>

typedef enum {
    TC_NB_BCAST = 1,
    TC_NB_BARRIER,
    TC_NB_REDUCE,
    TC_NB_ALLREDUCE,
    TC_NB_ALLGATHER,
    TC_NB_SCAN,
    TC_NB_TREE_BCAST,
    TC_NB_TREE_REDUCE,   /* the split tree (coll/tree) */
    TC_NB_TREE_ALLREDUCE /* split-tree Reduce to 0, then split-tree Bcast */
} tc_nb_kind_t;

typedef struct tc_nb {
    struct tc_nb *next; /* the context's FIFO, then the finished list */
    tc_ctx_t *ctx;
    int kind;
    int state;        /* queued, running, finished (nbc.c) */
    _Atomic int rc;   /* MPI_SUCCESS or the error the operation ended with:
                         written (release) before MPI_Grequest_complete by
                         the thread that finished it, read (acquire) by the
                         query callback in the application's completion call */
    MPI_Request greq; /* the application's handle */
    _Atomic int refs; /* 2 at start: the engine's and MPI's (MPICH runs
                         the free callback in MPI_Request_free, before
                         the operation has finished); freed at 0 */
    /* arguments, used when the operation reaches the head of its FIFO */
    const void *in; /* input bytes (contiguous; a packed copy otherwise) */
    void *out;      /* output bytes (idem) */
    size_t n;       /* bytes (Bcast), elements (reductions), bytes per block (Allgather) */
    int root;
    int split; /* split tree: leaf-side levels the application runs (S) */
    int phase; /* TREE_ALLREDUCE: 0 reduce, 1 broadcast */
    tc_rtype_t t;
    /* after success, unpack @out into the user's non-contiguous buffer */
    void *ubuf;
    int ucount;
    MPI_Datatype utype;
    char *tmp[2]; /* owned copies, freed when the operation completes */
    union {
        tc_bcast_t bcast;
        tc_barrier_t barrier;
        tc_reduce_t reduce;
        tc_allreduce_t allreduce;
        tc_allgather_t allgather;
        tc_scan_t scan;
        tc_tree_t tree;
    } u;
} tc_nb_t;

/** A new operation of @kind on @ctx (enabled), zeroed but for the kind and
 *  the context; NULL without memory.  Fill the arguments, then start it. */
tc_nb_t *tc_nb_new(tc_ctx_t *ctx, int kind);

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

/* ---- Progress threads ------------------------------------------------------ */

/* For nbc/progress: one progress pass if the lock is free (1 if it ran);
 * sleep until an operation is queued or *@stop; wake the sleepers. */
int tc_nb_sweep_try(void);
void tc_nb_mark_progress_thread(void); /* the calling thread is the communication core's */
void tc_nb_wait_for_work(_Atomic int *stop);
void tc_nb_wake(void);

/**
 * The core a progress thread goes to (the paper's placements; hwloc
 * topology @t, possibly an XML): @bound/@bind the process's binding (when
 * unbound, processes are assumed placed in block order, rank @hrank on
 * the @hrank-th core); @hsize processes on the host; @comm_cores free
 * cores per node.
 *  - TC_PLACE_BIND: the process's own core;
 *  - TC_PLACE_NUMA (eq. 1): the free core closing the process's group in
 *    its NUMA node (comm_cores split evenly over the NUMA nodes);
 *  - TC_PLACE_ODDEVEN (eq. 2): the comm_cores free cores of the node taken
 *    in turn by consecutive ranks (a chain's sender and receiver get
 *    different cores).
 * Returns the core object, or NULL when the topology has no cores.
 */
hwloc_obj_t tc_nb_place(hwloc_topology_t t, int bound, hwloc_const_cpuset_t bind, int hrank,
                        int hsize, int comm_cores, tc_place_policy_t policy);
const char *tc_place_name(tc_place_policy_t policy);

/** Thread level to request from MPI_Init_thread: MPI_THREAD_MULTIPLE when
 *  TOPOCOLL_COMM_CORES > 0, else @required unchanged. */
int tc_nb_thread_level(int required);

/** After MPI_Init: start the progress thread when communication cores
 *  are configured and MPI provided MPI_THREAD_MULTIPLE (@provided), bound
 *  by the placement policy; a one-line warning and no thread otherwise.
 *  Collective over MPI_COMM_WORLD when it starts threads (the host's
 *  bindings are exchanged: the thread polls only on a core no process of
 *  the host runs on).  Returns 1 if a thread runs. */
int tc_nb_threads_start(int provided);

/** Stop and join the progress thread (before MPI_Finalize; idempotent). */
void tc_nb_threads_stop(void);

/** The core (OS index) the progress thread is bound to, -1 if none runs
 *  or it is unbound; and the number of running progress threads. */
int tc_nb_thread_core(void);
int tc_nb_threads_running(void);
/** 1 when a progress thread runs without a core of its own (it then
 *  yields, and so do the application's waits: spinning would take the
 *  core from the thread they wait for). */
int tc_nb_thread_shares_core(void);

#endif
