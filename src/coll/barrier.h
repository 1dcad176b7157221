/*
 * coll/barrier -- hierarchical barrier (HierKNEM paper, section 4.4's
 * two-level composition): inside a node, single-writer
 * shared-memory flags and no system call on the fast path; between nodes,
 * the leaders' barrier of the underlying MPI (PMPI_Ibarrier on the
 * leaders' communicator, tested, never waited on).  A resumable state
 * machine like Bcast:
 *   arrive  - every process publishes its arrival (arrive_seq);
 *   gather  - a dissemination barrier inside the node (Hensgen, Finkel
 *             and Manber): in round k each process signals through its
 *             own flag and waits for the flag of local rank me - 2^k, so
 *             after ceil(log2 n) rounds every process knows that all have
 *             arrived; each round costs one cache-line transfer, all
 *             pairs in parallel (a central leader costs two in series:
 *             arrivals in, release out; measured at np=2 in the same
 *             runs: 0.31 us against 0.44-0.59 us, native 0.45-0.50 us);
 *   network - the leader runs the leaders' barrier (several nodes):
 *             PMPI_Ibarrier, tested, when driven by a nonblocking request or
 *             a progress thread; PMPI_Barrier when the caller may block
 *             (measured: Open MPI's Ibarrier + test loop is 3x slower);
 *   release - several nodes only: the leader publishes release_seq = seq
 *             after the leaders' barrier, the others wait for it;
 *   finish  - done_seq = seq (the sequence protocol every collective shares).
 *
 * Owns: tc_barrier_t.  May call: coll/ctx, xfer/shmseg, PMPI.
 */
#ifndef TC_COLL_BARRIER_H
#define TC_COLL_BARRIER_H

#include "ctx.h"

typedef struct tc_barrier {
    tc_ctx_t *ctx;
    uint64_t seq;
    int state;
    MPI_Request req; /* leaders' PMPI_Ibarrier */
    int may_block;   /* the caller is a blocking MPI_Barrier */
    int round;       /* gather: dissemination rounds completed */
} tc_barrier_t;

/** Prepare a barrier on an enabled context; @may_block: the leaders' step
 *  may call the blocking PMPI_Barrier (only from a blocking call). */
tc_status_t tc_barrier_init(tc_barrier_t *op, tc_ctx_t *ctx, int may_block);
/** Advance; TC_OK (MPI_SUCCESS), TC_INPROGRESS (-1) or an MPI error. */
tc_status_t tc_barrier_work(tc_barrier_t *op);

#endif
