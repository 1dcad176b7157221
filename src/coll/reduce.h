/*
 * coll/reduce -- hierarchical Reduce, HierKNEM Algorithm 2 (section 3.3),
 * as a resumable state machine (start/work/ack/fini; work never blocks).
 *
 * Several nodes: the first leader (local rank 0) runs the inter-node
 * reduction over the underlying MPI, one reduction per pipeline segment on
 * the leaders' communicator (PMPI_Reduce from a blocking call; pipelined
 * PMPI_Ireduce, a window of TC_REDUCE_WINDOW, otherwise); for large
 * vectors on 3 nodes or more (tc_plan_chain) along a chain of leaders
 * ending at the root's node instead (PMPI_Isend/Irecv, each leader
 * folding its node's segment into what passes), so the root's host
 * receives the vector once, not log2(N) times; for mid-size vectors on 4
 * nodes or more (tc_plan_reduce_net) by Rabenseifner's reduce between the
 * leaders once their node's vector is folded (Thakur, Rabenseifner and
 * Gropp 2005, section 4.2: a reduce-scatter by recursive halving, then a
 * binomial gather of the blocks at the root's leader; PMPI_Isend/Irecv),
 * where the root's host receives 2 (N' - 1) / N' vectors; or, where
 * coll/xtune measured them faster there, by the block owners: the other
 * N - 1 leaders each own a block of every pipeline segment, exchange
 * their node's pieces of the segment's blocks, fold their own and send it
 * to the root's leader while the next segment's exchange runs, so the
 * root's host receives the vector once and the others send it once (a
 * reduce-scatter that leaves the root out, the gather to it a segment
 * behind; PMPI_Isend/Irecv).  The node's
 * other processes are the "second leaders" of the paper, the intra-node
 * work spread over them: worker j reads piece j of each segment from every
 * local process's input by single copy, folds it (coll/fold) and pushes
 * the node result into the first leader's node buffer by single-copy
 * write, then reports the segment; the first leader starts the inter-node
 * reduction of segment i as soon as every worker reported it, so the
 * intra-node reduction of segment i+1 overlaps the inter-node reduction of
 * segment i.  Unlike the paper, the first leader folds a share too (twice
 * a worker's, written locally) between its network steps: with one worker
 * per node that worker otherwise carried the whole node (np=4 on 2 virtual
 * nodes: 0.5-0.7x native with an idle leader).  On the
 * root's node, when the root is not the first leader, it copies each
 * final segment out of the leader's buffer as it completes.
 * One node: every process, the root included, is a worker and writes its
 * pieces straight into the root's receive buffer.  One process per node:
 * the leaders' reduction alone (the paper's degenerate case).
 * Small vectors go through the CICO slots (the root, or the leader, folds).
 * Non-commutative operations are reduced here only on one node (canonical
 * rank order); across nodes the caller passes them to the native MPI.
 *
 * Owns: tc_reduce_t.  May call: coll/ctx, coll/fold, coll/op, xfer/, PMPI.
 */
#ifndef TC_COLL_REDUCE_H
#define TC_COLL_REDUCE_H

#include "../xfer/region.h"
#include "fold.h"
#include "owners.h" /* (TC_OWN_PIECE, TC_OWN_SEGS) */
#include "tune.h"

#define TC_REDUCE_WINDOW 4
#define TC_REDUCE_SOLO_MAX                               \
    (16u << 10) /* one node, single copy: the root folds \
                   everything at or below (bytes) */

typedef struct tc_reduce {
    tc_ctx_t *ctx;
    tc_region_keep_t *keep; /* a persistent request's regions kept across its
                               starts (coll/coll sets it after init; NULL: per call) */
    tc_rtype_t t;
    const char *in; /* input (the root's rbuf when MPI_IN_PLACE) */
    char *out;      /* the root's receive buffer (NULL elsewhere) */
    size_t count;
    int root, am_root, root_local; /* root_local: root's local rank, -1 if off-node */
    int first;                     /* local rank of the first leader */
    uint64_t seq;
    int state;
    int cico, multi, may_block;
    tc_part_t part;
    int wid; /* worker index, -1 if not a worker */
    uint64_t in_cookie, out_cookie;
    uint64_t *cookies; /* [nlocal] inputs, then [nlocal] outputs */
    char *nb;          /* first leader (the context's TC_BUF_NODE): node result, then (root's node,
                          root elsewhere) the final result: 2 spans */
    const char *src;   /* first leader: what it sends to the network */
    size_t folded, ready, red_posted, red_done, got;
    int net;            /* how the leaders reduce (tc_plan_reduce_net; TC_ALG_NODE: one node) */
    int chain;          /* the leaders reduce along a chain (net; single copy) */
    int halving;        /* the leaders run Rabenseifner's reduce (net) */
    int hstep, hposted; /* halving: the step running, its messages posted */
    char *acc;          /* chain, middle leaders: received segments folded with
                           the node's; halving: this leader's vector, then its blocks
                           (the context's TC_BUF_NET; the result buffer at the root's) */
    char *htmp;         /* halving: a received half; owners: the pieces received (the
                           context's TC_BUF_TREE_TMP) */
    int owners;         /* the other leaders reduce a block each (net: TC_ALG_OWNERS) */
    int onseg;          /* owners: segments */
    size_t oseg;        /* owners: elements per segment */
    int oxp, oxd, osd;  /* owners: exchanges posted, segments folded (their block sent
                           on), sends to the root's leader complete */
    int onreq;          /* owners: requests in oreq */
    MPI_Request *oreq;  /* owners: the root's receives [onseg x (N - 1)]; elsewhere a
                           segment's exchange [2 (N - 2)], then the sends to the root [onseg] */
    size_t sent;        /* chain: segments whose send downstream completed */
    MPI_Request rreq[TC_REDUCE_WINDOW], sreq[TC_REDUCE_WINDOW];
    int llroot; /* root's node = its rank in the leaders' comm */
    tc_fold_scratch_t f;
    tc_tune_t tune;        /* CICO or single copy (coll/tune) */
    int eager, eager_slot; /* eager (one node, small: tc_ctx_eager) and its slot */
    uint64_t eager_wait;   /* every process has finished this call before we write the slot */
    size_t eager_done;     /* elements folded (eager) */
} tc_reduce_t;

/** Prepare.  @out is the root's buffer (ignored elsewhere); @in == @out
 *  at the root means MPI_IN_PLACE.  @may_block: called from a blocking
 *  collective, the leaders' steps may be blocking MPI calls.  @alt:
 *  coll/xtune's choice for the call (tc_coll_args_t.alt, coll/plan
 *  tc_plan_reduce_net).  ctx enabled, count > 0, size > 1.
 *  MPI_SUCCESS or an error code (then call fini). */
tc_status_t tc_reduce_init(tc_reduce_t *op, tc_ctx_t *ctx, const void *in, void *out, size_t count,
                           const tc_rtype_t *t, int root, int may_block, int alt);
tc_status_t tc_reduce_work(tc_reduce_t *op);
void tc_reduce_fini(tc_reduce_t *op);

#endif
