/* coll/barrier -- see barrier.h. */
#include "barrier.h"

#include "bcast.h" /* TC_OK / TC_INPROGRESS */

enum { ST_ARRIVE = 0, ST_GATHER, ST_NETWORK, ST_RELEASE, ST_DONE };

/* A process's arrive_seq once it signalled round @k of barrier @seq
 * (k <= 32 rounds: up to 2^32 local processes). */
#define ARRIVE(seq, k) ((uint64_t)(seq)*64u + (uint64_t)(k) + 1u)

tc_status_t tc_barrier_init(tc_barrier_t *op, tc_ctx_t *ctx, int may_block)
{
    op->may_block = may_block;
    op->ctx = ctx;
    op->seq = ++ctx->seq;
    op->state = ST_ARRIVE;
    op->round = 0;
    op->req = MPI_REQUEST_NULL;
    return TC_OK;
}

tc_status_t tc_barrier_work(tc_barrier_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    const int L = c->map.leader_lrank;
    int leader = c->map.lrank == L, flag, rc;

    switch (op->state) {
    case ST_ARRIVE:
        /* Release: everything this process did before the barrier
         * happens-before what the others do after it (round 0's signal). */
        if (s)
            atomic_store_explicit(&tc_cctl(s, s->me)->arrive_seq, ARRIVE(op->seq, 0),
                                  memory_order_release);
        op->state = ST_GATHER;
        /* fall through */
    case ST_GATHER:
        /* Dissemination: round k's signal is ARRIVE(seq, k), stored once
         * round k-1's partner was seen; flags only grow, so a partner
         * already further along also satisfies the test. */
        for (; s && (1 << op->round) < s->nlocal; op->round++) {
            int from = (s->me - (1 << op->round) + s->nlocal) % s->nlocal;
            /* Acquire: pairs with the partner's release; with the chain of
             * rounds, every local arrival happens-before our exit. */
            if (atomic_load_explicit(&tc_cctl(s, from)->arrive_seq, memory_order_acquire) <
                ARRIVE(op->seq, op->round))
                return TC_INPROGRESS;
            atomic_store_explicit(&tc_cctl(s, s->me)->arrive_seq, ARRIVE(op->seq, op->round + 1),
                                  memory_order_release);
        }
        if (!leader) { /* one node: done; several: the leader's release */
            op->state = ST_RELEASE;
            goto release;
        }
        if (c->map.nnodes > 1 && op->may_block) {
            if ((rc = tc_status_mpi(PMPI_Barrier(c->llcomm))) != TC_OK) return rc;
            op->state = ST_RELEASE;
        } else if (c->map.nnodes > 1) {
            op->state = ST_NETWORK;
            if ((rc = tc_status_mpi(PMPI_Ibarrier(c->llcomm, &op->req))) != TC_OK) return rc;
        } else {
            op->state = ST_RELEASE;
        }
        /* fall through */
    case ST_NETWORK:
        if (op->state == ST_NETWORK) {
            if ((rc = tc_status_mpi(PMPI_Test(&op->req, &flag, MPI_STATUS_IGNORE))) != TC_OK)
                return rc;
            if (!flag) return TC_INPROGRESS;
            op->state = ST_RELEASE;
        }
        /* fall through */
    case ST_RELEASE:
    release:
        if (s && c->map.nnodes > 1) {
            if (leader) {
                /* Release: every arrival we acquired (and the other nodes',
                 * ordered by the leaders' barrier) before our release. */
                atomic_store_explicit(&tc_cctl(s, L)->release_seq, op->seq, memory_order_release);
            } else if (atomic_load_explicit(&tc_cctl(s, L)->release_seq, memory_order_acquire) <
                       op->seq) {
                return TC_INPROGRESS;
            }
        }
        if (s) tc_cctl_finish(s, op->seq);
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}
