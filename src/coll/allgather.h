/*
 * coll/allgather -- the two HierKNEM Allgather algorithms (section 3.4),
 * as resumable state machines (start/work/ack/fini; work never blocks).
 *
 * Leader-based (small nodes): every non-leader writes its block into the
 * leader's receive buffer by single copy (and, while that block is in its
 * cache, into its other local peers' buffers); the leaders run a ring over
 * the underlying MPI, one message per step carrying a whole node's blocks
 * (an hindexed datatype: a node's ranks need not be contiguous); as each
 * node's blocks land in the leader's buffer the non-leaders fetch them by
 * single copy, so gathering, exchanging and fetching overlap.  On 4 nodes
 * or more with small blocks (tc_allgather_rd) the leaders exchange in
 * ceil(log2 N) steps instead of the ring's N - 1, the same bytes: by
 * recursive doubling on 4, 8, 16 ... nodes (Thakur, Rabenseifner and
 * Gropp 2005, 3.1), by Bruck's concatenation on the others (Bruck et al.
 * 1997, 3), the non-leaders fetching each step's nodes as it completes.
 * Under leaf switches of as many nodes each (tc_allgather_sw), at every
 * size, two rings at once: across the switches among the nodes at one
 * place, and inside the switch, which forwards each node's blocks as
 * they come in, so each node's blocks cross into every other switch
 * once.
 * Ring (large nodes): all processes form one ring ordered by physical
 * distance (node, package, NUMA node, cache, core: topo/node's ring), not
 * by rank; each process takes block after block from its left neighbour,
 * by single-copy read out of the neighbour's receive buffer when the two
 * share a node, by MPI otherwise.  Only the ring's edges between groups
 * cross a slow link, and they carry only the blocks the receiving node
 * lacks.  A block whose owner shares our node does not travel the ring:
 * its owner writes it into every local peer's buffer from its cache (on
 * one node the ring is then all direct writes, every process copying in
 * parallel, and the input is read from memory once).
 * Small blocks on one node go through the CICO slots.  On one node,
 * between 8 KiB and any size, coll/tune picks CICO or single copy by
 * measuring both; above the slots' capacity its CICO is pipelined: each
 * process copies its block chunk by chunk into its broadcast ring (and
 * into its own receive buffer, from the same cache lines), the others copy
 * each chunk out as soon as it lands.
 * Choice: TOPOCOLL_ALLGATHER_ALG, else ring when a node holds more than 6
 * processes and blocks are 8 KiB or more (the paper's 2-6 cores per node
 * for the leader-based one, Fig. 4), else leader-based.
 *
 * Owns: tc_allgather_t.  May call: coll/ctx, coll/plan, xfer/, PMPI.
 */
#ifndef TC_COLL_ALLGATHER_H
#define TC_COLL_ALLGATHER_H

#include "../xfer/region.h"
#include "ctx.h"
#include "plan.h"
#include "tune.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The leaders' exchange in steps (tc_allgather_t's rd). */
enum { TC_AG_RD = 1, TC_AG_SW = 2 };

/* The leaders' ring pieces in flight, each way. */
#define TC_AG_WINDOW 8
/* By switch: pieces in flight each way, and sends ahead of receives. */
#define TC_AG_PACE 2

/* A position in a leader's stream of ring pieces: step, run of the
 * step's node, offset in the run (bytes), index in the stream. */
typedef struct tc_ag_cur {
    int k, run;
    size_t off, q;
} tc_ag_cur_t;

/* By switch: one ring's streams of pieces (coll/allgather leaders_sw):
 * cursors .k counting arrival indexes from the stream's first. */
typedef struct tc_ag_stream {
    tc_ag_cur_t rpost, rdone, spost;
    size_t sdone_q; /* sends completed */
} tc_ag_stream_t;

typedef struct tc_allgather {
    tc_ctx_t *ctx;
    tc_region_keep_t *keep; /* a persistent request's regions kept across its
                               starts (coll/coll sets it after init; NULL: per call) */
    const char *in;         /* this rank's block (inside out when MPI_IN_PLACE) */
    char *out;              /* size blocks of @block bytes, rank order */
    size_t block;
    uint64_t seq;
    int state, alg;
    uint64_t out_cookie;
    uint64_t *cookies; /* [nlocal] inputs, then [nlocal] receive buffers
                          of the local processes */
    int posted, wrote;
    /* leader-based */
    int *run_of, *runs;              /* leaders: each node's runs of consecutive ranks */
    size_t *rbase, *sbase;           /* leaders: [nnodes] pieces before each ring step,
                                        received and sent */
    size_t stotal;                   /* leaders: pieces to send */
    tc_ag_cur_t rpost, rdone, spost; /* leaders: the streams' cursors */
    size_t sdone_q;                  /* leaders: sends completed */
    size_t steps;                    /* leaders: ring steps completed */
    int rd;                          /* the leaders in steps: TC_AG_RD, ceil(log2 N) of them
                                        (tc_allgather_rd), TC_AG_SW, by switch
                                        (tc_allgather_sw); 0: the ring */
    int rd_step, rd_n;               /* leaders, in steps: the step, its requests
                                        posted (rreq[0 .. rd_n); 0: none yet; by
                                        switch: the streams' 4 TC_AG_PACE) */
    int rd_done;                     /* leaders, in steps: all done */
    tc_ag_stream_t sw[2];            /* leaders by switch: the ring across the switches,
                                        the switch's ring */
    size_t got;                      /* non-leaders: nodes copied */
    int src;                         /* non-leaders: local rank whose buffer they read the
                                        other nodes' blocks from (the leader, or their
                                        package's relay: HierKNEM 4.1) */
    int relay;                       /* 1: another local process reads from us */
    /* ring */
    int left, right, lsame, rsame;
    size_t have, sent, sdone, rposted;
    MPI_Request *rreq, *sreq;
    /* one node, CICO above the slots' capacity: pipelined through the
       broadcast rings (tc_shm_ring_slot), chunk by chunk */
    int pipe;
    uint64_t pbase, psent; /* our ring: items before this call, chunks posted */
    uint64_t *pgot;        /* [nlocal] chunks copied out of each process's ring,
                              then [nlocal] its items before this call */
    tc_tune_t tune;        /* CICO or single copy on one node (coll/tune) */
    int eager, eager_slot; /* eager (one node, small: coll/ctx tc_ctx_eager) and its item */
    uint64_t eager_wait;   /* every process has finished this call before we write the item */
} tc_allgather_t;

/** The name of Allgather method @alg (TC_AG_USE_*, coll/plan). */
const char *tc_allgather_alg_name(int alg);

/** Prepare (ctx enabled, block > 0, size > 1).  @in == out + rank*block
 *  means MPI_IN_PLACE.  MPI_SUCCESS or an error code (then call fini). */
tc_status_t tc_allgather_init(tc_allgather_t *op, tc_ctx_t *ctx, const void *in, void *out,
                              size_t block);
tc_status_t tc_allgather_work(tc_allgather_t *op);
void tc_allgather_fini(tc_allgather_t *op);

#endif
