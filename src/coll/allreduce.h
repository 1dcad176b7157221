/*
 * coll/allreduce -- hierarchical Allreduce (not in the HierKNEM paper; its
 * building blocks), as a resumable state machine:
 *   start - every local process exposes its input and its output buffer
 *           as read-only regions and posts the cookies;
 *   work  - never blocks.  Reduce-scatter inside the node: worker j folds
 *           piece j of every pipeline segment, reading its peers' inputs
 *           by single copy (coll/fold).  Between nodes: the workers with
 *           the same local rank (a slice) run a ring Allreduce of their
 *           piece, reduce-scatter then allgather (PMPI_Isend/Irecv), so
 *           every core drives the network and each host sends
 *           2 (N - 1) / N of the vector, the least N hosts need; segment
 *           i's ring runs while segment i+1 folds.  Under several leaf
 *           switches of as many nodes each (coll/plan
 *           tc_plan_allreduce_net), a slice's ring runs in three stages
 *           instead: reduce-scatter inside the switch, allreduce of the
 *           node's chunk across the switches, allgather inside the
 *           switch, so an uplink carries the vector about once each way
 *           rather than about twice.  Allgather inside the
 *           node: each
 *           worker writes its finished pieces into every other local
 *           process's output by single copy (on one node straight from
 *           the cache-resident accumulator), then reports them;
 *   ack   - every process waits until its peers finished reading it;
 *   fini  - regions and scratch are released.
 * Small vectors (TOPOCOLL_REDUCE_CICO_MAX) go through the CICO slots:
 * every process folds all inputs itself (one node), or the leader folds
 * and the leaders reduce and broadcast over MPI.  On one node, when the
 * online choice (coll/tune) says copy-in/copy-out for a vector larger
 * than the slots, the same reduce-scatter and allgather run pipelined
 * through the slots' lanes (tc_shm_lane_*): every process copies each
 * chunk of piece j of its input into its lane to j, owner j folds the
 * chunks as they land (canonical order) into its broadcast lane and its
 * output, and every process copies the finished chunks out: two copies
 * through cache instead of one single copy (measured faster on this
 * host in some states, slower in others: hence the tuner).
 * Results are bit-identical on every rank: each element is computed once,
 * in a fixed order (fold order of coll/fold; the underlying MPI's reduce
 * over nodes), then copied.
 *
 * Owns: tc_allreduce_t.  May call: coll/ctx, coll/plan, coll/fold, coll/op, xfer/, PMPI.
 */
#ifndef TC_COLL_ALLREDUCE_H
#define TC_COLL_ALLREDUCE_H

#include "../xfer/region.h"
#include "fold.h"
#include "tune.h"

typedef struct tc_allreduce {
    tc_ctx_t *ctx;
    tc_region_keep_t *keep; /* a persistent request's regions kept across its
                               starts (coll/coll sets it after init; NULL: per call) */
    tc_rtype_t t;
    const char *in; /* this process's input (rbuf when MPI_IN_PLACE) */
    char *out;
    size_t count;
    uint64_t seq;
    int state;
    int cico;  /* small path */
    int multi; /* more than one node */
    tc_part_t part;
    int wid; /* this process's worker index, -1 if none */
    uint64_t in_cookie, out_cookie;
    uint64_t *cookies; /* [nlocal] inputs, [nlocal] outputs, then */
    uint64_t *push;    /* [nlocal-1] the other processes' outputs */
    int posted;
    size_t folded, bc_done, pushed; /* segments folded, through the ring, pushed */
    int ring_rank;                  /* rank in the slice communicator (= node order) */
    /* The rings a segment's piece goes through, one after the other: one
     * over every node, or three under the switches (tc_ring_stage_t). */
    struct tc_ring_stage {
        int M, q;       /* members, this node's place among them */
        int prev, next; /* slice ranks of the neighbours */
        int s0, s1;     /* its steps [s0, s1) of 2 (M - 1): reduce-scatter, allgather */
        int kin;        /* 0: on the whole piece; k: on chunk (place + 1) mod k of k */
        int kpos;       /*   (that place) */
    } stage[3];
    int nstage;
    int ring_stage;         /* of the current segment: 0 .. nstage */
    int ring_step;          /* in that stage: s0 .. s1 */
    int ring_posted;        /* this step's receive and send are posted */
    char *ring_tmp;         /* a received chunk before it is folded (the context's) */
    MPI_Request rreq, sreq; /* the ring step's receive and send */
    MPI_Request req;        /* CICO path, leaders */
    int net_state;
    tc_fold_scratch_t f;
    tc_tune_t tune;        /* CICO or single copy (coll/tune) */
    int eager, eager_slot; /* eager (one node, small: tc_ctx_eager) and its slot */
    uint64_t eager_wait;   /* every process has finished this call before we write the slot */
    size_t eager_done;     /* elements folded (eager) */
    /* one node, pipelined CICO (lanes) */
    int pipe;
    size_t ce;          /* elements per chunk */
    size_t *sent, *got; /* [nlocal] chunks posted to each owner, consumed
                           from each owner's broadcast lane */
    uint64_t *base;     /* [3 * nlocal] the lane counters at the start */
    size_t red;         /* chunks of our piece folded and published */
} tc_allreduce_t;

/** 1 if one-node copy-in/copy-out of @bytes per process on @ctx runs
 *  through the lanes (above the slots' capacity, lanes of 4 KiB or
 *  more).  Config-derived only: the same on every process. */
int tc_allreduce_piped(const tc_ctx_t *ctx, size_t bytes);

/** Elements per pipeline segment of a single-copy Allreduce of @count
 *  elements of @t on @ctx: the fold's (coll/fold) on one node or with
 *  TOPOCOLL_REDUCE_SEGSIZE; across nodes, as many that each ring message
 *  is TC_NET_SEG bytes (a piece per slice, cut in a chunk per node of
 *  the ring: N, or k under the switches).  The same on every process. */
size_t tc_allreduce_segsize(const tc_ctx_t *ctx, const tc_rtype_t *t, size_t count);

/** Prepare.  @in may equal @out (MPI_IN_PLACE).  Every step is nonblocking,
 *  whoever drives it.  ctx enabled, count > 0, size > 1.  Returns MPI_SUCCESS or an error (then
 * call fini). */
tc_status_t tc_allreduce_init(tc_allreduce_t *op, tc_ctx_t *ctx, const void *in, void *out,
                              size_t count, const tc_rtype_t *t);
/** Advance: TC_OK, TC_INPROGRESS or an MPI error code. */
tc_status_t tc_allreduce_work(tc_allreduce_t *op);
void tc_allreduce_fini(tc_allreduce_t *op);

#endif
