/*
 * coll/hscan -- MPI_Scan and MPI_Exscan (MPI 4.0 sections 6.11.1-6.11.2)
 * on several nodes that each hold a range of consecutive ranks, by the node
 * prefix (the hierarchical scan the MPC paper's runtime and HAN describe:
 * intra-node, then among the leaders, then applied on the node), as a
 * resumable state machine (init/work/fini; work never blocks but where
 * the blocking call drives it):
 *
 *  1. every process exposes its operand and folds, by single copy, the
 *     operands of its node's lower local ranks (and its own, for Scan): its
 *     local prefix, in canonical order; the node's leader also folds the
 *     node's total;
 *  2. the leaders run the MPI library's exclusive scan of the node totals
 *     (recursive doubling) on the leaders' communicator (llcomm, ranked by
 *     node, so in rank order): each gets the prefix of the nodes before its
 *     own, and exposes it;
 *  3. every process of a node but the first combines it with its local
 *     prefix (node prefix op local prefix: the lower ranks stay the left
 *     operand, so non-commutative ops keep their order).
 *
 * A process reads its node's lower operands (l x the vector for local
 * rank l): made for the scans' usual small vectors on nodes with a core
 * per process, where the chain's N x ppn steps cost latency.  Chosen by
 * TOPOCOLL_SCAN_ALG=leader (TOPOCOLL_EXSCAN_ALG) only: on 4 emulated
 * hosts sharing 2 cores its waits on the node cost naps and the leaders'
 * recursive doubling sends large vectors log2 N times, and the chain
 * (coll/scan) was faster at every size (docs/performance.md).
 * MPI_IN_PLACE: the result overwrites the operand once no local peer
 * reads it.
 *
 * Owns: tc_hscan_t.  May call: coll/ctx, coll/ctl, coll/fold, coll/op,
 * xfer/, PMPI (the leaders' exclusive scan), libc.
 */
#ifndef TC_COLL_HSCAN_H
#define TC_COLL_HSCAN_H

#include "ctx.h"
#include "fold.h"
#include "op.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tc_hscan {
    tc_ctx_t *ctx;
    tc_rtype_t t;
    const char *in; /* our operand (== out in place) */
    char *out;
    size_t count;
    int exclusive, blocking, state, leader, started;
    uint64_t seq;
    uint64_t cookie, pcookie; /* our exposed operand; the leader's exposed node prefix */
    uint64_t *cookies, *pcookies;
    tc_fold_scratch_t f;
    char *acc;   /* our local prefix (out, unless in place) */
    char *total; /* the leader: the node's total */
    char *pre;   /* the leader: the prefix of the nodes before ours; the others: its copy */
    MPI_Request req;
} tc_hscan_t;

/** Prepare an inclusive (@exclusive 0) or exclusive scan of @count (> 0)
 *  elements of @t from @in into @out (@in == @out: MPI_IN_PLACE) on
 *  @ctx (several nodes of consecutive ranks, each process with a node
 *  segment: coll/plan decides).  @blocking: the leaders' step blocks in
 *  the MPI library.  TC_OK or TC_ERR_NOMEM (call fini either way). */
tc_status_t tc_hscan_init(tc_hscan_t *op, tc_ctx_t *ctx, const void *in, void *out, size_t count,
                          const tc_rtype_t *t, int exclusive, int blocking);
/** Advance: TC_INPROGRESS until TC_OK or a failure (base/status). */
tc_status_t tc_hscan_work(tc_hscan_t *op);
void tc_hscan_fini(tc_hscan_t *op);

#endif
