/*
 * coll/vexchange -- Gatherv, Scatterv, Allgatherv and Alltoallv inside a node, as
 * resumable state machines (init/work/fini; work never blocks): each
 * block either through its sender's item in the node segment (blocks of
 * at most tc_vexchange_eager_max bytes: copied in and out, no system
 * call) or by single copy over the exposed buffers (KNEM paper, sections
 * 3.3 and 5.5: the irregular calls are the regular ones with per-process
 * lengths and offsets into one region).  No rank knows every block's
 * size, so the sender of each block decides, by its size, and says so:
 *
 *  - every writer puts one item per call (xfer/shmseg's tagged items,
 *    coll/ctx tc_ctx_eager): a header (the cookie of the buffer it
 *    exposes, or 0; one entry per destination: the block's length and
 *    where it is, in the item or at an offset of that buffer), then the
 *    blocks it carries.  Writers: every Allgatherv and Alltoallv
 *    process, the Scatterv root (an entry per rank), the Gatherv
 *    non-roots (one entry: their block, or "single copy");
 *  - a reader takes its entry, checks the length against its own count
 *    (a length that differs, or a block left to single copy that its
 *    rule would have carried: MPI_ERR_TRUNCATE) and copies the block out
 *    of the item or reads it from the writer's buffer (one system call);
 *  - Gatherv: the root exposes its receive buffer, and puts an item of
 *    its offsets, only when one of its counts is above the carried size;
 *    a non-root whose block is that long writes it there (one system
 *    call), the others return once their item is written, as a native
 *    eager send does;
 *  - Gatherv, Scatterv: a block of at least TOPOCOLL_VCOLL_SHARE_MIN is
 *    copied from both ends at once: the non-root copies its head, the
 *    root its tail (1/nlocal of it), out of or into the buffer the
 *    non-root then exposes in its item, so the root's core copies too
 *    instead of waiting (a Scatterv reader puts an item only then);
 *  - a process that exposed a buffer waits until every local process has
 *    finished the call, and fails if one of them failed it.
 *
 * A call whose blocks are all small costs each process an item and the
 * reads of the items it needs, with no wait for the others to arrive
 * beyond them (the items' tags; a writer runs at most the items' count of
 * calls ahead).
 *
 * Allgatherv and Alltoallv on several nodes (the same number of processes
 * on each, single copy on every node or one process per node): the
 * per-slice exchange (HierKNEM's node-level aggregation, spread over the
 * node's processes as coll/exchange's Alltoall does).  Local rank i of
 * node a is slice i's process there; for every k = 1..N-1, all in flight
 * at once, it exchanges one message with local rank i of node a + k
 * (to) and of node a - k (from):
 *
 *  - Allgatherv: it sends its block and receives from's straight into
 *    its receive buffer; then every local process reads the remote blocks
 *    slice i received out of i's receive buffer (exposed readable with
 *    its table of offsets, once i says all have landed), so each block
 *    crosses each link once, not once per receiving process.  Where the
 *    nodes' shares differ (relayed: the rule at vexchange.c relayed), a
 *    node sending its share to each of the N - 1 others would take longer
 *    than the receive bound: instead slice i cuts its block in N - 1
 *    parts, sends part t to slice i of node a + 1 + t only, and that
 *    relay forwards it, piece by piece as it lands, to the N - 2 others
 *    (the NUIOA/HierKNEM idea of spreading a large node's sends);
 *  - Alltoallv: it sends the blocks every process of node a has for to,
 *    taken out of their items or read by single copy out of their send
 *    buffers (every local process puts the item it puts on one node: its
 *    entries are the send table, its small blocks in it), and receives
 *    from node a - k the blocks for itself: a node sends another ppn
 *    messages instead of ppn^2.
 *
 * Each message goes as a stream of pieces that is never truncated
 * (coll/pieces), so a sender and a receiver whose counts disagree both
 * end the message and the receiver fails (Alltoallv's message holds
 * several blocks: its total is checked, not how it splits); a relay
 * passes a failed piece on as one of another length; a failure of ours
 * waits until our messages are out (defer), and a slice process that
 * failed never tells its node its remote blocks have landed.  The
 * blocks between processes of one node go as on one node (Alltoallv: out
 * of the items or by single copy).
 *
 * Gatherv and Scatterv on several nodes (coll/vroot; single copy on every
 * node, or one process per node): each node has a collector, the root on
 * its own node and the node's leader (topo/node leader_of: NIC-aware) on
 * the others, and one message between the root and each other node's
 * collector (HierKNEM's node-level aggregation of the small blocks):
 *
 *  - that message has an item's layout (vexchange_int.h): an entry per
 *    process of the node (its block's length; where it is in the
 *    message, or TC_VX_DIRECT), then the blocks of at most the carried
 *    size.  A longer block goes between nodes as a message of its own,
 *    straight between the root's buffer and its process's (as the
 *    native's linear algorithms send it: no copy, no staging);
 *  - Gatherv: every process but a collector puts an item as on one node
 *    (its block carried; longer, on the root's node left to single copy
 *    in its exposed send buffer, the root reads it; elsewhere sent to the
 *    root, and marked so); a collector sends its node's message once
 *    every local item is there; the root takes each node's message as it
 *    comes (probed: it holds what the senders decided), places the
 *    carried blocks and posts a receive for each block sent on its own;
 *  - Scatterv: the root sends each node's message and the long blocks,
 *    then puts its own node's item (as on one node); a collector receives
 *    its node's message and puts it as its item, from which every local
 *    process takes its block, or learns that its block comes on its own.
 *
 * So whatever the counts, every message that is sent is received: a
 * length that differs from the receiver's count fails the call there
 * (TC_ERR_TRUNCATE), and a block sent on its own is still received
 * (coll/pieces), by what the message says the sender did.
 *
 * Contiguous blocks (the bindings pack what is not).  A zero count moves
 * nothing; an exposed buffer stays exposed until every local process has
 * finished the call.
 *
 * Owns: tc_vexchange_t, the items' layout (vexchange.c, vroot.c).  May call: coll/ctx,
 * coll/ctl, coll/fold (the cookies' post between nodes), coll/pieces
 * (the messages between nodes), coll/tags, xfer/, PMPI, libc.
 */
#ifndef TC_COLL_VEXCHANGE_H
#define TC_COLL_VEXCHANGE_H

#include "../xfer/region.h"
#include "ctx.h"
#include "pieces.h"

#include <stddef.h>
#include <stdint.h>

enum { TC_VX_GATHERV = 0, TC_VX_SCATTERV, TC_VX_ALLGATHERV, TC_VX_ALLTOALLV };

/* Allgatherv relayed: the nodes the tags allow (coll/tags TC_TAG_VRELAY_OF). */
#define TC_VX_RELAY_NODES 256
/* The state both machines (coll/vexchange, coll/vroot) end a finished
 * operation in (tc_vexchange_t.state). */
#define TC_VX_STATE_DONE 3

/* A piece a relay received, to forward once it has landed. */
typedef struct tc_vx_piece {
    int q, node, msg; /* its index (coll/pieces); its origin node; its message's first */
    char *buf;        /* where it landed (our receive buffer) */
    size_t len;
} tc_vx_piece_t;

typedef struct tc_vexchange {
    tc_ctx_t *ctx;
    tc_region_keep_t *keep; /* a persistent request's regions kept across its
                               starts (coll/coll sets it after init; NULL: per call) */
    int kind, root, state;
    uint64_t seq;
    const char *in;    /* our block (Gatherv, Allgatherv; Scatterv: the root's send buffer) */
    char *out;         /* Gatherv root, Allgatherv: the receive buffer; Scatterv: our block */
    size_t own;        /* bytes of our block (sent, or for Scatterv received) */
    const size_t *len; /* [size] the root's or every Allgatherv process's: bytes per rank */
    const size_t *off; /* [size] their byte offsets in the receive (send) buffer */
    uint64_t cookie;   /* our exposed buffer, or 0 */
    uint64_t *cookies; /* [nlocal] the others' */
    /* Alltoallv: the send side */
    const size_t *stab; /* [2 * size]: length, offset (from @in) of our block for each rank */
    size_t span;        /* bytes of the send buffer from @in that hold them (the Gatherv,
                           Scatterv root: of its buffer from rbase) */
    ptrdiff_t rbase;    /*   its first block's byte in its buffer */
    uint64_t tcookie;   /* Allgatherv on several nodes: our exposed offsets and span */
    uint64_t *tcookies; /* [nlocal] the others' (Alltoallv on several: their items' sizes) */
    /* Allgatherv, Alltoallv on several nodes: the per-slice exchange */
    int multi, ppn, posted, next, netup; /* netup: our messages posted */
    int *rank_at;          /* [nnodes * ppn] communicator rank of (node, local rank) */
    size_t *xtab;          /* Allgatherv: [size] each block's offset in our exposed receive
                              span (from rbase); Alltoallv: [ppn][2 * size] the local
                              processes' send tables */
    size_t *mlen;          /* Alltoallv: [nnodes - 1] step k's message out, [nnodes - 1] in */
    char *sstage;          /* Alltoallv: the messages out, then in (the context's TC_BUF_NET) */
    tc_pieces_t net;       /* every step's pieces, received then sent */
    int relay;             /* Allgatherv: relayed (see above) */
    tc_vx_piece_t *relayp; /* the pieces we relay, nrelay of them, fwd forwarded */
    int nrelay, fwd, rcut; /* rcut: the message whose failure we passed on */
    tc_status_t fail;      /* a failure held until our messages are through (defer) */
    /* Gatherv, Scatterv on several nodes (coll/vroot) */
    int rooted;        /* 1: this call runs there */
    int ci;            /*   the registry collective whose TOPOCOLL_<COLL>_ALG
                            picks the algorithm (Gatherv's, or Gather's) */
    int flat;          /*   linear (tc_plan_vroot): no node messages */
    int vnode, vcol;   /* the root's node; our node's collector (the root, or the leader) */
    int *nbase;        /* [nnodes + 1]: local rank j of node b is rank_at[nbase[b] + j] */
    MPI_Request *mreq; /* [nnodes] the node messages (coll/vroot) */
    char *mbuf;        /* a node message (the context's TC_BUF_NET) */
    size_t msize;      /*   its bytes */
    int got;           /* the node messages taken, or this node's taken and put */
    /* One node: the items (see above) */
    int eager_slot;      /* this call's item (coll/ctx tc_ctx_eager) */
    uint64_t eager_wait; /*   written once every local process has finished this call */
    size_t vmax;         /* the longest block an item carries (tc_vexchange_eager_max) */
} tc_vexchange_t;

/* One node: the longest block an item carries, at most (a header of 16
 * bytes a rank and the blocks must also fit a CICO slot).  np=2 here,
 * cold pool, native/topocoll from 512 B to 16 KiB units: with 2 KiB
 * 0.97-1.54, 4 KiB 1.07-4.30, 8 KiB 1.12-5.39 (at 2-4 KiB, where the
 * native's shared memory turns to its rendezvous); warm, 8 KiB items
 * were slower than single copy (0.65-0.88x native at 4-8 KiB), 4 KiB
 * 0.85-1.33x: copying a block twice between cores that share no cache
 * costs more than one system call from about 8 KiB (Open MPI).  MPICH's
 * shared memory copies blocks eagerly up to 16 KiB: np=2, 512 B-32 KiB
 * units, Gatherv and Allgatherv, with 4 KiB items 0.23-0.53x native at
 * 4 KiB units (8 KiB blocks by single copy), with 8 KiB 0.84-5.82x, with
 * 16 KiB 0.82-5.79x (at 16 KiB blocks carried warm Allgatherv fell from
 * 4.7x to 2.3x): 8 KiB there.  TOPOCOLL_VCOLL_ITEM_MAX overrides. */
#ifdef MPICH
#define TC_VX_EAGER_MAX (8u << 10)
#else
#define TC_VX_EAGER_MAX (4u << 10)
#endif

/** The longest block of @c's irregular exchanges that goes through the
 *  sender's item (copied twice) rather than by single copy:
 *  TC_VX_EAGER_MAX, or less where a CICO slot must hold a header of an
 *  entry per rank of @c and size - 1 such blocks.  The same on every
 *  process. */
size_t tc_vexchange_eager_max(const tc_ctx_t *c);

/** 1 if an item's header (16 bytes per rank of @c) fits a CICO slot: the
 *  irregular exchanges on one node and Alltoallv on several need it
 *  (TOPOCOLL_CICO_SLOT; 32 KiB: up to 2046 ranks).  The same on every
 *  process. */
int tc_vexchange_fits(const tc_ctx_t *c);

/** 1 if an Allgatherv or Alltoallv on @c runs the per-slice exchange:
 *  several nodes, as many processes on each, and single copy on every
 *  node or one process per node.  The same on every process. */
int tc_vexchange_sliced(const tc_ctx_t *c);

/** Prepare a @kind (TC_VX_*) on @ctx (one node, single copy; Gatherv and
 *  Scatterv: or several nodes, single copy or one process per node;
 *  Allgatherv and Alltoallv: or tc_vexchange_sliced).  @in, @out:
 *  as above (the root's own block may be in place: @in == @out + its
 *  offset, Scatterv @out == @in + its offset); @own our block's bytes;
 *  @len, @off: each rank's block, bytes and byte offset in the receive
 *  buffer (Scatterv: the send buffer), the root's or every Allgatherv
 *  process's (NULL elsewhere), the caller's until fini; @ci: the
 *  registry collective (TC_CI_*) the call is, whose TOPOCOLL_<COLL>_ALG
 *  applies (TC_CI_GATHER, TC_CI_SCATTER: a regular call run as Gatherv,
 *  Scatterv on several nodes, a block each).  TC_OK or TC_ERR_NOMEM
 *  (call fini either way). */
tc_status_t tc_vexchange_init(tc_vexchange_t *op, tc_ctx_t *ctx, int kind, const void *in,
                              void *out, size_t own, const size_t *len, const size_t *off, int root,
                              int ci);

/** Alltoallv's send side, after init: @stab (length and offset from @in
 *  of our block for each rank, 2 x size words, the caller's until fini)
 *  within @span bytes from @in. */
static inline void tc_vexchange_send_table(tc_vexchange_t *op, const size_t *stab, size_t span)
{
    op->stab = stab;
    op->span = span;
}
/** After a failure: drive the messages between nodes to their end (post
 *  ours if the failure came first: Alltoallv's out empty), so none is left
 *  to match a later call's.  TC_OK once all are over, TC_INPROGRESS, or an
 *  MPI failure.  Never blocks; the caller loops (api/screen). */
tc_status_t tc_vexchange_drain(tc_vexchange_t *op);

/** Advance: TC_INPROGRESS until TC_OK or a failure (base/status). */
tc_status_t tc_vexchange_work(tc_vexchange_t *op);
void tc_vexchange_fini(tc_vexchange_t *op);

#endif
