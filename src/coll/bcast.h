/*
 * coll/bcast -- hierarchical broadcast, HierKNEM Algorithm 1 (HierKNEM
 * paper, section 3.2), with NUIOA leaders (NUIOA paper, section 3.3.1),
 * several rails and per-domain leaders (HierKNEM 4.1), as a resumable
 * state machine:
 *   init  - decide roles (producer of each node: the root on its node, the
 *           elected leader elsewhere; with R rails the message is cut into
 *           R parts, part r travels between rail r's leaders; with
 *           per-domain leaders each package's leader reads the data across
 *           the inter-socket link once and its package reads it from
 *           there), mechanism (single copy or CICO), segments;
 *   start - every process others read from declares its buffer as a
 *           read-only region and publishes the cookie; with the root
 *           share, receivers declare theirs writable;
 *   work  - never blocks: forwards segments down the inter-node binomial
 *           tree (a chain of nodes for large messages) (PMPI_Isend/Irecv between producers, a
 * window of W segments in flight), publishes each landed segment to the node, and non-producers
 * copy what has been published (single copy from the producer's region, or out of its CICO slots);
 *           or, with the block owners (coll/plan tc_plan_bcast_net), the
 *           N - 1 other leaders own a block of the message each, which
 *           travels down a tree of its own: the root's node sends it to
 *           its owner, the owner to the N - 2 others (the scatter and
 *           allgather of van de Geijn's broadcast, the root's node
 *           outside the allgather: its link carries the message once);
 *   ack   - each process signals it is done (done_seq); a single-copy
 *           producer waits for these acks before its buffer may change;
 *   fini  - the region is destroyed.
 * The blocking call loops over work; a nonblocking request or a progress
 * thread can drive the same steps.
 * Root share (one node, large messages): the root is otherwise idle while
 * the others read, so it writes the tail 1/n of each receiver's buffer
 * (single-copy write into the receiver's region) while the receiver reads
 * the rest: two cores copy at once (KNEM paper, section 3.2: the model
 * lets the library choose which process performs each copy).
 *
 * Eager (CICO, one slot: up to TOPOCOLL_BCAST_CICO_MAX): a node's
 * producer (the root on its node, elsewhere the leader, which forwards
 * to the child nodes as soon as the bytes arrive) need not wait for the
 * previous collective to finish on its node, so a run of small broadcasts
 * pipelines like the native eager protocols.  Call s goes through the
 * producer's eager item s mod E (E = min(TC_SHM_ITEMS, slots); up to
 * 48 bytes in the tag's cache line, else its slot s mod E, in pieces:
 * xfer/shmseg), tagged s; the producer waits only until every process of
 * the node has finished call s - E (the item's last use) and the last
 * collective before this run of eager ones (which may have used any slot
 * or flag): coll/ctx tc_ctx_eager.  The receivers copy each piece as it
 * lands.  A non-eager collective still starts after every process of the
 * node finished the one before, eager or not.
 *
 * Owns: tc_bcast_t.  May call: coll/ctx, xfer/, PMPI point-to-point.
 */
#ifndef TC_COLL_BCAST_H
#define TC_COLL_BCAST_H

#include "../xfer/region.h"
#include "ctx.h"
#include "owners.h" /* (TC_BCAST_OWN_*, TC_BCAST_MAXCHILD) */
#include "tune.h"
#include "../xfer/shmseg.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define TC_BCAST_WINDOW 4 /* inter-node segments in flight per producer */

#define TC_BCAST_MAXPART TC_CTL_PARTS /* rails a broadcast is split over */

/* The first message of a part on each link between nodes: this header (the
 * sender's byte count of the whole broadcast), with the part's segments
 * behind it when the part fits TC_BCAST_INLINE (one message for a
 * broadcast up to 64 KiB), else alone before the segments (a block of the
 * block owners: with its first segment when that is at most
 * TC_BCAST_OWN_INLINE).  The receiver posts it
 * TC_BCAST_INLINE bytes beyond the header, so it is never truncated, and
 * posts the segments only once the header said the sender's layout: the
 * segments it receives always have the size the sender sends.  When the
 * counts differ (an erroneous program: MPI 4.0 section 6.1 requires equal
 * signatures), the receiving node's producer fails with TC_ERR_TRUNCATE
 * but still receives the sender's segments, in the sender's layout, into
 * a scratch ring, and forwards them to its child nodes, so every send of
 * the failed call completes and nothing of it stays in flight. */
typedef struct tc_bcast_hdr {
    uint64_t magic; /* TC_BCAST_MAGIC */
    uint64_t total; /* the sender's byte count of the broadcast */
} tc_bcast_hdr_t;

#define TC_BCAST_MAGIC  0x7463426361737431ull /* "tcBcast1" */
#define TC_BCAST_INLINE (64u << 10)

/* One part of the message: a contiguous byte range carried over one
 * rail's tree between nodes and spread inside each node; or one block of
 * the block owners, carried over its own tree (the node reads part 0). */
typedef struct tc_bcast_part {
    size_t off, len; /* bytes of buf */
    int block;       /* the block owners: block b's tree (the root's node, its
                        owner, the others), -1: a rail's */
    int rep;         /* 1: this process carries the part over the network */
    int src;         /* local rank the part is read from, -1: none */
    int parent;      /* pcomm rank, -1: no parent (the data is local) */
    int nchild;
    size_t seg, nseg;
    size_t recv_posted, recv_done, send_done;
    size_t have;      /* bytes of the part present in buf (from the
                         network, a local source, or our own) */
    size_t published; /* bytes of the part published to the node */
    /* The first message (tc_bcast_hdr_t above) */
    char *stage; /* header + inline segments (the context's TC_BUF_STAGE) */
    int first;   /* 0: not yet; 1: its receive is posted; 2: done */
    size_t inl;  /* segments that travelled in the first message */
    /* Failure */
    char *ring; /* counts differ: the sender's segments land here, a
                   window of TC_BCAST_WINDOW (not in buf) */
    int empty;  /* 1: an empty segment arrived: a node above failed */
    /* Last, and not cleared by init (1 KiB each; a small Bcast spent a
     * third of its time zeroing them): child[i] is written before nchild
     * counts it, and every request by its PMPI_Isend/Irecv before it is
     * tested. */
    int child[TC_BCAST_MAXCHILD];
    MPI_Request hreq; /* the first message's receive */
    MPI_Request rreq[TC_BCAST_WINDOW];
    MPI_Request hsreq[TC_BCAST_MAXCHILD]; /* the first message's sends */
    MPI_Request sreq[TC_BCAST_WINDOW][TC_BCAST_MAXCHILD];
} tc_bcast_part_t;

typedef struct tc_bcast {
    tc_ctx_t *ctx;
    tc_region_keep_t *keep; /* a persistent request's regions kept across its
                               starts (coll/coll sets it after init; NULL: per call) */
    char *buf;
    size_t bytes;
    int root;
    uint64_t seq;
    int producer;  /* local rank where the data enters the node
                      (rail 0's: the root on its node, else the leader) */
    int am_source; /* 1: some local process reads from our buffer */
    int sc;        /* 1: single copy inside the node, 0: CICO */
    int relays;    /* 1: per-domain leaders relay the data (HierKNEM 4.1) */
    int state;
    int nparts; /* rails used (>= 1) */
    /* intra-node */
    uint64_t cookie;      /* our buffer, readable, when am_source (single copy) */
    size_t share;         /* root share: tail bytes of every receiver's buffer
                             that the root writes (0: receivers read all) */
    int share_next;       /* producer: next local rank to serve */
    uint64_t recv_cookie; /* non-producer: its buffer, writable, when share > 0 */
    tc_tune_t tune;       /* one node: CICO or single copy (coll/tune) */
    int eager;            /* 1: eager (above), through CICO slot eager_slot */
    int eager_slot;
    uint64_t eager_wait; /* root: every process has finished this call first */
    size_t eager_got;    /* receivers: bytes copied out of the producer's item */
    tc_status_t err;     /* the failure the network found (counts differ,
                            an empty segment), TC_OK before */
    int failing;         /* 1: draining after a failure (tc_bcast_drain) */
    /* The block owners (a leader's, one rail): part[0] stands for the
     * node (its source, what is published); the blocks' trees carry it
     * between nodes, part[0].have their landed prefix.  NULL: the parts'
     * own trees. */
    tc_bcast_part_t *blk;                   /* [nblk], malloc'd by init, freed by fini */
    int nblk;                               /* N - 1 */
    tc_bcast_part_t part[TC_BCAST_MAXPART]; /* last: init clears only part[0, nparts) */
} tc_bcast_t;

/** Rails a broadcast of @bytes uses: several when the nodes have a leader
 *  per NIC (topo/nic), single copy is on, and each rail gets at least
 *  TOPOCOLL_MULTILEADER_MIN / 2 bytes; else 1.  The same on every process. */
int tc_bcast_rails(const tc_ctx_t *ctx, size_t bytes);

/** 1 if a broadcast of @bytes uses single copy inside the node, 0 if CICO. */
int tc_bcast_uses_single_copy(const tc_ctx_t *ctx, size_t bytes);

/** Prepare a broadcast of @bytes contiguous bytes at @buf from @root
 *  (ctx must be enabled, bytes > 0); @alt: coll/xtune's choice for the
 *  call (tc_coll_args_t.alt, coll/plan tc_plan_bcast_net).  TC_OK, or
 *  TC_ERR_NOMEM (the block owners' blocks; then drain and fini). */
tc_status_t tc_bcast_init(tc_bcast_t *op, tc_ctx_t *ctx, void *buf, size_t bytes, int root,
                          int alt);
/** Advance; TC_OK (MPI_SUCCESS), TC_INPROGRESS (-1), or an MPI error code. */
tc_status_t tc_bcast_work(tc_bcast_t *op);
/** After a failure (this process's or a local peer's: the drivers call it
 *  once tc_cctl_settle published or saw it): finish the broadcast's
 *  network traffic so nothing of it stays in flight: receive what the
 *  parent node sends (into buf, or the scratch ring when counts differ)
 *  and forward it to the child nodes; a segment this process cannot have
 *  any more (a rail leader of the root's node whose root failed) goes as
 *  an empty message, which fails the nodes below with TC_ERR_REMOTE.
 *  Never blocks: TC_INPROGRESS until done, then TC_OK; an error if MPI
 *  fails (fini then lets the rest go). */
tc_status_t tc_bcast_drain(tc_bcast_t *op);
/** Release what init/work acquired (after DONE, or after an error).  Sets
 *  ctx->net_dirty when it had to abandon network requests (a failure not
 *  drained). */
void tc_bcast_fini(tc_bcast_t *op);

#endif
