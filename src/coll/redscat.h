/*
 * coll/redscat -- MPI_Reduce_scatter_block and MPI_Reduce_scatter (MPI 4.0
 * sections 6.10.1-6.10.2), and their nonblocking forms, as resumable state
 * machines (init/work/fini; work never blocks).  Every process's operand is the whole vector, the
 * blocks of all ranks back to back; rank r's result is its block, reduced over every process.
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
 *    node order) into one buffer, then the slice of local rank l (one
 *    process per node) runs a ring reduce-scatter on it: N - 1 steps, in
 *    each a process sends one block to the next node and folds the block
 *    the previous one sends, so each process ends with its own block.
 *    Each node sends (N-1)/N of the vector once over its links, spread
 *    over all its processes, the bound of a reduce-scatter ((N-1)/N x n /
 *    L).  Blocks move in TC_NET_SEG messages (coll/ctx: below the TCP
 *    eager limit, none waits for a rendezvous), folded as they arrive.
 *    (The MPI library's reduce-scatter on the slice instead: 1.35-2.2x
 *    the link bound at 512 KiB-16 MiB, 4 hosts x 2 ranks, 1 Gbit/s.)
 *
 * MPI_IN_PLACE: the operand is the receive buffer, whose first block the
 * result overwrites once no local peer reads the operand any more.
 *
 * Owns: tc_redscat_t.  May call: coll/ctx, coll/ctl, coll/fold, coll/op,
 * xfer/, PMPI point-to-point (the slice's ring), libc.
 */
#ifndef TC_COLL_REDSCAT_H
#define TC_COLL_REDSCAT_H

#include "../xfer/region.h"
#include "ctx.h"
#include "fold.h"
#include "op.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tc_redscat {
    tc_ctx_t *ctx;
    tc_region_keep_t *keep; /* a persistent request's regions kept across its
                               starts (coll/coll sets it after init; NULL: per call) */
    tc_rtype_t t;
    const char *in; /* our operand: every rank's block, in rank order */
    char *out;      /* our block's result */
    size_t *cnt;    /* [size] elements of each rank's block (owned) */
    size_t *first;  /* [size] its first element in the operand */
    int state, in_place;
    /* several nodes: the ring */
    size_t *boff;                   /* [nnodes] each slice block's first element in acc */
    char *tmp;                      /* a block received from the previous node, before its fold */
    size_t seg;                     /* elements per message */
    int nreq;                       /* requests room: the most messages of a block */
    int step, posted, folded, sent; /* ring step; its receives folded, sends done */
    MPI_Request *rreq, *sreq;       /* [nreq] each: the step's receives and sends */
    uint64_t seq;
    uint64_t cookie;   /* our exposed operand, or 0 */
    uint64_t *cookies; /* [nlocal] the node's operands */
    tc_fold_scratch_t f;
    char *acc;    /* several nodes: our slice's blocks, node order; in place: our result */
    int *rank_at; /* [nnodes] several nodes: the rank with our local rank on each node */
} tc_redscat_t;

/** Prepare a reduce-scatter on @ctx of @t: @in (the operand: rank r's
 *  block of @counts[r] elements, or @count each when @counts is NULL, in
 *  rank order; @in == @out for MPI_IN_PLACE) into @out (our block).
 *  @counts: the caller's until fini.  Several nodes: every node has
 *  ctx->minlocal processes and @t is commutative (coll/plan decides).
 *  TC_OK or TC_ERR_NOMEM (call fini either way). */
tc_status_t tc_redscat_init(tc_redscat_t *op, tc_ctx_t *ctx, const void *in, void *out,
                            const tc_rtype_t *t, const int *counts, size_t count);
/** Advance: TC_INPROGRESS until TC_OK or a failure (base/status). */
tc_status_t tc_redscat_work(tc_redscat_t *op);
void tc_redscat_fini(tc_redscat_t *op);

#endif
