/*
 * coll/redscat -- MPI_Reduce_scatter_block and MPI_Reduce_scatter (MPI 4.0
 * sections 6.10.1-6.10.2), and their nonblocking forms, as resumable state
 * machines (init/work/fini; work never blocks but where the blocking call
 * drives it).  Every process's operand is the whole vector, the blocks of
 * all ranks back to back; rank r's result is its block, reduced over every
 * process.
 *
 *  - One node, by single copy (HierKNEM section 3.3's node reduction, cut
 *    at the blocks): every process exposes its operand (a readable
 *    region) and folds its own block of every local operand, reading the
 *    peers' straight from their buffers (coll/fold's tc_fold_piece: a
 *    cache-sized accumulator, canonical order for non-commutative ops).
 *    No message, no intermediate copy: each byte of input is read once.
 *  - Several nodes, equal processes per node (the slices of coll/ctx,
 *    commutative ops): local rank l of every node folds, over its node's
 *    processes, the blocks of local rank l of every node (one per node,
 *    node order) into one buffer, then the slice of local rank l runs the
 *    MPI library's reduce-scatter on it, so that each process gets its own
 *    block.  Each node sends (N-1)/N of the vector once over its links,
 *    spread over all its processes, the bound of a reduce-scatter
 *    ((N-1)/N x n / L); the inter-node algorithm (ring, recursive
 *    halving) is the MPI library's choice for the slice's size.
 *
 * MPI_IN_PLACE: the operand is the receive buffer, whose first block the
 * result overwrites once no local peer reads the operand any more.
 *
 * Owns: tc_redscat_t.  May call: coll/ctx, coll/ctl, coll/fold, coll/op,
 * xfer/, PMPI (the slice's reduce-scatter), libc.
 */
#ifndef TC_COLL_REDSCAT_H
#define TC_COLL_REDSCAT_H

#include "ctx.h"
#include "fold.h"
#include "op.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tc_redscat {
    tc_ctx_t *ctx;
    tc_rtype_t t;
    const char *in;      /* our operand: every rank's block, in rank order */
    char *out;           /* our block's result */
    const size_t *cnt;   /* [size] elements of each rank's block (the caller's until fini) */
    const size_t *first; /* [size] its first element in the operand */
    int state, in_place, blocking;
    int started; /* several nodes, nonblocking: the slice's reduce-scatter is posted (req) */
    uint64_t seq;
    uint64_t cookie;   /* our exposed operand, or 0 */
    uint64_t *cookies; /* [nlocal] the node's operands */
    tc_fold_scratch_t f;
    char *acc;    /* several nodes: our slice's blocks, node order; in place: our result */
    int *rank_at; /* [nnodes] several nodes: the rank with our local rank on each node */
    int *scount;  /* [nnodes]   its block's elements, for the slice's reduce-scatter */
    MPI_Request req;
} tc_redscat_t;

/** Prepare a reduce-scatter on @ctx of @t: @in (the operand, the blocks
 *  @cnt[r] elements long at element @first[r]; @in == @out for
 *  MPI_IN_PLACE) into @out (cnt[rank] elements).  Several nodes: every
 *  node has ctx->minlocal processes and @t is commutative (coll/plan
 *  decides).  @blocking: a blocking call drives it (the slice's step then
 *  blocks in the MPI library).  TC_OK or TC_ERR_NOMEM (call fini either
 *  way). */
tc_status_t tc_redscat_init(tc_redscat_t *op, tc_ctx_t *ctx, const void *in, void *out,
                            const tc_rtype_t *t, const size_t *cnt, const size_t *first,
                            int blocking);
/** Advance: TC_INPROGRESS until TC_OK or a failure (base/status). */
tc_status_t tc_redscat_work(tc_redscat_t *op);
void tc_redscat_fini(tc_redscat_t *op);

#endif
