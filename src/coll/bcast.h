/*
 * coll/bcast -- hierarchical broadcast, HierKNEM Algorithm 1 (HierKNEM
 * paper, section 3.2), as a resumable state machine:
 *   init  - decide roles (producer of each node: the root on its node, the
 *           leader elsewhere), mechanism (single copy or CICO), segments;
 *   start - the producer declares its buffer as a read-only region and
 *           publishes the cookie; with the root share, receivers declare
 *           theirs writable;
 *   work  - never blocks: forwards segments down the inter-node binomial
 *           tree (PMPI_Isend/Irecv between producers, a window of W
 *           segments in flight), publishes each landed segment to the
 *           node, and non-producers copy what has been published (single
 *           copy from the producer's region, or out of its CICO slots);
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
 * Owns: tc_bcast_t.  May call: coll/ctx, xfer/, PMPI point-to-point.
 */
#ifndef TC_COLL_BCAST_H
#define TC_COLL_BCAST_H

#include "ctx.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define TC_BCAST_WINDOW 4     /* inter-node segments in flight per producer */
#define TC_BCAST_MAXCHILD 32  /* binomial tree children (log2 of nodes) */

typedef struct tc_bcast {
    tc_ctx_t *ctx;
    char *buf;
    size_t bytes;
    int root;
    uint64_t seq;
    int producer;          /* local rank of this node's producer */
    int am_producer;
    int sc;                /* 1: single copy inside the node, 0: CICO */
    int state;
    /* inter-node pipeline (producers only) */
    int parent;            /* pcomm rank, -1 at the root */
    int nchild;
    int child[TC_BCAST_MAXCHILD];
    size_t seg, nseg;
    size_t recv_posted, recv_done, send_done;
    MPI_Request rreq[TC_BCAST_WINDOW];
    MPI_Request sreq[TC_BCAST_WINDOW][TC_BCAST_MAXCHILD];
    size_t net_bytes;      /* bytes present in the producer's buffer */
    /* intra-node */
    uint64_t cookie;
    size_t published;      /* producer: bytes published to the node */
    size_t consumed;       /* non-producer: bytes copied into buf */
    size_t share;          /* root share: tail bytes of every receiver's buffer
                              that the root writes (0: receivers read all) */
    int share_next;        /* producer: next local rank to serve */
    uint64_t recv_cookie;  /* non-producer: its buffer, writable, when share > 0 */
} tc_bcast_t;

/** Inter-node segment size for a broadcast of @bytes from @root:
 *  TOPOCOLL_BCAST_SEGSIZE; else the whole message when the pipeline has
 *  nothing to overlap (two nodes, one process on the receiving one); else
 *  the HierKNEM Table 1 value for the IB cluster (8 KiB below 64 KiB,
 *  64 KiB above) raised to bytes/8 (4 KiB aligned): at most ~8 segments. */
size_t tc_bcast_segsize(const tc_ctx_t *ctx, size_t bytes, int root);

/** 1 if a broadcast of @bytes uses single copy inside the node, 0 if CICO. */
int tc_bcast_uses_single_copy(const tc_ctx_t *ctx, size_t bytes);

/** Prepare a broadcast of @bytes contiguous bytes at @buf from @root
 *  (ctx must be enabled, bytes > 0). */
void tc_bcast_init(tc_bcast_t *op, tc_ctx_t *ctx, void *buf, size_t bytes, int root);
/** Advance; TC_OP_DONE (MPI_SUCCESS), TC_OP_PENDING (-1), or an MPI error code. */
int tc_bcast_work(tc_bcast_t *op);
/** Release what init/work acquired (after DONE, or after an error). */
void tc_bcast_fini(tc_bcast_t *op);

#endif
