/* coll/barrier -- see barrier.h. */
#include "barrier.h"

#include "bcast.h"   /* TC_OP_DONE / TC_OP_PENDING */

enum { ST_ARRIVE = 0, ST_GATHER, ST_NETWORK, ST_RELEASE, ST_DONE };

void tc_barrier_init(tc_barrier_t *op, tc_ctx_t *ctx, int may_block)
{
    op->may_block = may_block;
    op->ctx = ctx;
    op->seq = ++ctx->seq;
    op->state = ST_ARRIVE;
    op->req = MPI_REQUEST_NULL;
}

int tc_barrier_work(tc_barrier_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    const int L = c->map.leader_lrank;
    int leader = c->map.lrank == L, flag, rc;

    switch (op->state) {
    case ST_ARRIVE:
        /* Release: everything this process did before the barrier
         * happens-before what the others do after it. */
        if (s) atomic_store_explicit(&s->ctl[s->me].arrive_seq, op->seq, memory_order_release);
        op->state = leader ? ST_GATHER : ST_RELEASE;
        /* fall through */
    case ST_GATHER:
        if (leader && s) {
            for (int i = 0; i < s->nlocal; i++)   /* acquire: pairs with their arrival */
                if (i != L && atomic_load_explicit(&s->ctl[i].arrive_seq, memory_order_acquire) < op->seq)
                    return TC_OP_PENDING;
        }
        if (leader && c->map.nnodes > 1 && op->may_block) {
            if ((rc = PMPI_Barrier(c->llcomm)) != MPI_SUCCESS) return rc;
            op->state = ST_RELEASE;
        } else if (leader && c->map.nnodes > 1) {
            op->state = ST_NETWORK;
            if ((rc = PMPI_Ibarrier(c->llcomm, &op->req)) != MPI_SUCCESS) return rc;
        } else {
            op->state = ST_RELEASE;
        }
        /* fall through */
    case ST_NETWORK:
        if (op->state == ST_NETWORK) {
            if ((rc = PMPI_Test(&op->req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return rc;
            if (!flag) return TC_OP_PENDING;
            op->state = ST_RELEASE;
        }
        /* fall through */
    case ST_RELEASE:
        if (s) {
            if (leader) {
                /* Release: every arrival we acquired (and the other nodes',
                 * ordered by the leaders' barrier) before our release. */
                atomic_store_explicit(&s->ctl[L].release_seq, op->seq, memory_order_release);
            } else if (atomic_load_explicit(&s->ctl[L].release_seq, memory_order_acquire) < op->seq) {
                return TC_OP_PENDING;
            }
            tc_shm_finish(s, op->seq);
        }
        op->state = ST_DONE;
        /* fall through */
    default:
        return TC_OP_DONE;
    }
}
