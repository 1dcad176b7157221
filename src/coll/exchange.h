/*
 * coll/exchange -- Gather, Scatter and Alltoall inside a node, by single
 * copy (KNEM paper, sections 3.3 and 5.5: a scatter reads different parts
 * of one cookie; a gather moves the copies into the senders, so the root
 * serializes nothing), as resumable state machines (init/work/fini; work
 * never blocks).
 *
 *  - Gather: the root exposes its receive buffer (a writable region); every
 *    other process writes its block into it, all at once.
 *  - Scatter: the root exposes its send buffer (a readable region); every
 *    other process reads its block out of it.
 *  - Gather, Scatter: a block of at least TOPOCOLL_ROOT_SHARE_MIN is copied
 *    from both ends at once: the non-root copies its head, the root its
 *    tail (1/nlocal of it) out of or into the buffer the non-root then
 *    exposes and posts, so the root's core copies too instead of waiting;
 *    such a non-root waits until every local process has finished.
 *  - Alltoall: every process exposes its receive buffer and writes block j
 *    of its send buffer into process j's, starting each with a different
 *    peer (me + 1, me + 2, ...) so that no receiver takes every writer at
 *    once.
 *
 * Small blocks (at most TC_EAGER_MAX per process, coll/ctx) go through the
 * eager items instead, one exchange with no system call: Gather's writers
 * put their block in their item, the root copies them out; Scatter's root
 * puts its send buffer in its item, each process copies its block out;
 * Alltoall's every process puts its send buffer in its item and copies
 * block me out of everyone's.
 *
 * Alltoall on several nodes (the same number of processes on each, blocks
 * above TOPOCOLL_ALLTOALL_FLAT_MAX): the per-slice node-aggregated
 * exchange.  Local rank i of node a is slice i's process there; for every
 * k = 1..N-1 it sends to local rank i of node a + k, in one message (cut
 * in TC_NET_SEG pieces), the blocks every process of node a has for that
 * process (read by single copy out of their send buffers), and receives
 * the same from node a - k (coll/pieces: a block size that disagrees
 * fails, never truncates), all steps in flight at once; every core
 * drives the network, every link is loaded alike, and a node sends
 * another ppn messages instead of ppn^2.  The
 * blocks between processes of one node go by single copy, as on one node.
 * Gather and Scatter on several nodes: the native MPI's.
 * Blocks are contiguous bytes (the bindings pack what is not).
 *
 * Owns: tc_exchange_t.  May call: coll/ctx, coll/ctl, coll/pieces, xfer/,
 * libc.
 */
#ifndef TC_COLL_EXCHANGE_H
#define TC_COLL_EXCHANGE_H

#include "../xfer/region.h"
#include "ctx.h"
#include "pieces.h"

#include <stddef.h>
#include <stdint.h>

enum { TC_XC_GATHER = 0, TC_XC_SCATTER, TC_XC_ALLTOALL };

typedef struct tc_exchange {
    tc_ctx_t *ctx;
    tc_region_keep_t *keep; /* a persistent request's regions kept across its
                               starts (coll/coll sets it after init; NULL: per call) */
    int kind, root, state;
    uint64_t seq;
    const char *in;    /* Gather: our block; Scatter (root), Alltoall: size blocks */
    char *out;         /* Gather (root), Alltoall: size blocks; Scatter: our block */
    size_t block;      /* bytes per process */
    uint64_t cookie;   /* our exposed buffer (Gather root: out; Scatter root: in;
                          Alltoall: out; a Gather, Scatter non-root whose block
                          the root shares: in, out) */
    uint64_t *cookies; /* Alltoall: [nlocal] the others' receive buffers */
    int next;          /* Alltoall: peers written so far; Gather, Scatter root:
                          blocks shared so far */
    /* Alltoall on several nodes: the per-slice exchange */
    int multi, ppn, posted, sent; /* sent: steps whose message out is posted */
    uint64_t in_cookie;           /* our send buffer, readable by the local processes */
    uint64_t *incs;               /* [nlocal] the local processes' send buffers */
    int *rank_at;                 /* [nnodes * ppn] communicator rank of (node, local rank) */
    char *sstage, *rstage;        /* [nnodes - 1][ppn] blocks each: the messages out and in
                                     (the context's TC_BUF_NET) */
    tc_pieces_t net;              /* every step's pieces, received then sent */
    tc_status_t fail;             /* a failure held until our messages are out (one node:
                                     until no local process uses our exposed buffer) */
    int eager, eager_slot;
    uint64_t eager_wait;
} tc_exchange_t;

/** 1 if coll/exchange runs a @kind of @block bytes per process on @c: one
 *  node with a shared segment, and single copy there or a block small
 *  enough for the eager items.  The same on every process. */
int tc_exchange_fits(const tc_ctx_t *c, int kind, size_t block);

/** 1 if an Alltoall of @block bytes per process on @c runs the per-slice
 *  exchange across nodes (several nodes, the same number of processes on
 *  each, single copy on every node or one process per node, blocks above
 *  TOPOCOLL_ALLTOALL_FLAT_MAX). */
int tc_exchange_sliced(const tc_ctx_t *c, size_t block);

/** 1 if it goes through the eager items (a block of at most TC_EAGER_MAX,
 *  the node's share and the writer's item within bounds). */
int tc_exchange_eager(const tc_ctx_t *c, int kind, size_t block);

/** Prepare a @kind of @block bytes (> 0) per process rooted at @root
 *  (Gather, Scatter).  Buffers, contiguous:
 *   - Gather: @in our block (the root: may be @out + root * block, its
 *     MPI_IN_PLACE); @out, at the root only, size blocks in rank order;
 *   - Scatter: @in, at the root only, size blocks; @out our block (the
 *     root: may be @in + root * block, its MPI_IN_PLACE);
 *   - Alltoall: @in size blocks (block j for rank j), @out size blocks
 *     (block i from rank i); not the same buffer (the bindings copy an
 *     MPI_IN_PLACE input first).
 *  TC_OK or TC_ERR_NOMEM (call fini either way). */
tc_status_t tc_exchange_init(tc_exchange_t *op, tc_ctx_t *ctx, int kind, const void *in, void *out,
                             size_t block, int root);
/** After a failure: drive the messages between nodes to their end
 *  (posting ours, out empty, if the failure came first), so none is left
 *  to match a later call's.  TC_OK once all are over, TC_INPROGRESS, or
 *  an MPI failure.  Never blocks. */
tc_status_t tc_exchange_drain(tc_exchange_t *op);

/** Advance: TC_INPROGRESS until TC_OK or a failure (base/status). */
tc_status_t tc_exchange_work(tc_exchange_t *op);
void tc_exchange_fini(tc_exchange_t *op);

#endif
