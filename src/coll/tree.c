/* coll/tree -- see tree.h. */
#include "tree.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "tags.h"

int tc_tree_split(const tc_ctx_t *ctx, int comm_cores)
{
    int n = ctx->map.size, h = tc_st_height(n);
    int s = ctx->cfg->split_tree_s;
    if (s < 0) s = tc_st_best_s(ctx->map.lsize, ctx->map.lsize + comm_cores, 0);
    return s > h ? h : s;
}

tc_status_t tc_tree_init(tc_tree_t *op, tc_ctx_t *ctx, int kind, const void *in, void *out,
                         size_t count, const tc_rtype_t *t, size_t bytes, int root, int s)
{
    int rank, n;
    memset(op, 0, sizeof(*op));
    PMPI_Comm_rank(ctx->pcomm, &rank);
    PMPI_Comm_size(ctx->pcomm, &n);
    op->ctx = ctx;
    op->kind = kind;
    op->root = root;
    op->height = tc_st_height(n);
    op->s = s;
    op->seq = ++ctx->seq;
    op->tag = TC_TAG_TREE;
    op->req = MPI_REQUEST_NULL;
    int vr = (rank - root + n) % n;
    int lr = vr ? __builtin_ctz((unsigned)vr) + 1 : op->height + 1; /* vr's receive (Bcast) level */
    if (kind == TC_TREE_BCAST) {
        op->buf = out;
        op->bytes = bytes;
        if (vr)
            op->step[op->nstep++] = (tc_tree_step_t){ lr, (vr - (1 << (lr - 1)) + root) % n, 1 };
        for (int i = lr - 1; i >= 1; i--) {
            int child = vr + (1 << (i - 1));
            if (child < n) op->step[op->nstep++] = (tc_tree_step_t){ i, (child + root) % n, 0 };
        }
        return TC_OK;
    }
    op->t = *t;
    op->count = count;
    op->in = in;
    op->out = out;
    op->bytes = tc_span(t, count);
    /* children at levels 1 .. lr-1, then the parent at level lr */
    for (int i = 1; i < lr; i++) {
        int child = vr + (1 << (i - 1));
        if (child < n) op->step[op->nstep++] = (tc_tree_step_t){ i, (child + root) % n, 1 };
    }
    if (vr) op->step[op->nstep++] = (tc_tree_step_t){ lr, (vr - (1 << (lr - 1)) + root) % n, 0 };
    /* the context's buffers: a fresh allocation above glibc's mmap
     * threshold would fault every page on every call (tc_ctx_buf) */
    op->buf = vr == 0 ? out : tc_ctx_buf(ctx, TC_BUF_TREE_ACC, op->bytes);
    op->tmp = op->nstep && op->step[0].recv ? tc_ctx_buf(ctx, TC_BUF_TREE_TMP, op->bytes) : NULL;
    if (!op->buf || (op->nstep && op->step[0].recv && !op->tmp)) return TC_ERR_NOMEM;
    if (op->buf != in) memcpy(op->buf, in, op->bytes);
    return TC_OK;
}

static int owns(const tc_tree_t *op, int level, int who)
{
    return who == TC_EXEC_ANY || (who == TC_EXEC_APP) == (level <= op->s);
}

int tc_tree_leaves_done(const tc_tree_t *op)
{
    for (int k = op->cur; k < op->nstep; k++)
        if (op->step[k].level <= op->s) return 0;
    return 1;
}

static tc_status_t bcast_work(tc_tree_t *op, int who)
{
    MPI_Comm pc = op->ctx->pcomm;
    int flag, rc;
    while (op->cur < op->nstep) {
        tc_tree_step_t *st = &op->step[op->cur];
        if (!owns(op, st->level, who)) break;
        if (st->recv) {
            if (!op->posted) {
                rc = tc_status_mpi(
                    PMPI_Irecv(op->buf, (int)op->bytes, MPI_BYTE, st->peer, op->tag, pc, &op->req));
                if (rc != TC_OK) return rc;
                op->posted = 1;
            }
            if ((rc = tc_status_mpi(PMPI_Test(&op->req, &flag, MPI_STATUS_IGNORE))) != TC_OK)
                return rc;
            if (!flag) return TC_INPROGRESS;
            op->posted = 0;
        } else {
            rc = tc_status_mpi(PMPI_Isend(op->buf, (int)op->bytes, MPI_BYTE, st->peer, op->tag, pc,
                                          &op->sreq[op->nsend++]));
            if (rc != TC_OK) return rc;
        }
        op->cur++;
    }
    /* the sends complete under whoever owns them: test them all here */
    while (op->sdone < op->nsend) {
        if ((rc = tc_status_mpi(PMPI_Test(&op->sreq[op->sdone], &flag, MPI_STATUS_IGNORE))) !=
            TC_OK)
            return rc;
        if (!flag) return TC_INPROGRESS;
        op->sdone++;
    }
    return op->cur == op->nstep ? TC_OK : TC_INPROGRESS;
}

static tc_status_t reduce_work(tc_tree_t *op, int who)
{
    MPI_Comm pc = op->ctx->pcomm;
    int flag, rc;
    int n = (int)op->count;
    while (op->cur < op->nstep) {
        tc_tree_step_t *st = &op->step[op->cur];
        if (!owns(op, st->level, who)) return TC_INPROGRESS;
        if (!op->posted) {
            rc = tc_status_mpi(
                st->recv ? PMPI_Irecv(op->tmp, n, op->t.dt, st->peer, op->tag, pc, &op->req)
                         : PMPI_Isend(op->buf, n, op->t.dt, st->peer, op->tag, pc, &op->req));
            if (rc != TC_OK) return rc;
            op->posted = 1;
        }
        if ((rc = tc_status_mpi(PMPI_Test(&op->req, &flag, MPI_STATUS_IGNORE))) != TC_OK) return rc;
        if (!flag) return TC_INPROGRESS;
        op->posted = 0;
        if (st->recv && (rc = tc_op_apply(&op->t, op->tmp, op->buf, op->count)) != TC_OK) return rc;
        op->cur++;
    }
    return TC_OK;
}

tc_status_t tc_tree_work(tc_tree_t *op, int who)
{
    int rc = op->kind == TC_TREE_BCAST ? bcast_work(op, who) : reduce_work(op, who);
    if (rc == TC_OK && op->ctx->shm) tc_cctl_finish(op->ctx->shm, op->seq);
    return rc;
}

void tc_tree_fini(tc_tree_t *op) { op->buf = op->tmp = NULL; /* the context's (tc_ctx_buf) */ }

tc_status_t tc_tree_allreduce_init(tc_tree_allreduce_t *op, tc_ctx_t *ctx, const void *in,
                                   void *out, size_t count, const tc_rtype_t *t, int s)
{
    op->phase = 0;
    op->s = s;
    op->out = out;
    op->bytes = tc_span(t, count);
    return tc_tree_init(&op->tree, ctx, TC_TREE_REDUCE, in, out, count, t, 0, 0, s);
}

tc_status_t tc_tree_allreduce_work(tc_tree_allreduce_t *op, int who)
{
    tc_status_t rc = tc_tree_work(&op->tree, who);
    if (rc != TC_OK || op->phase) return rc;
    tc_ctx_t *ctx = op->tree.ctx;
    tc_tree_fini(&op->tree);
    op->phase = 1;
    rc = tc_tree_init(&op->tree, ctx, TC_TREE_BCAST, NULL, op->out, 0, NULL, op->bytes, 0, op->s);
    return rc != TC_OK ? rc : tc_tree_work(&op->tree, who);
}

int tc_tree_allreduce_leaves_done(const tc_tree_allreduce_t *op)
{
    return op->phase || tc_tree_leaves_done(&op->tree);
}

void tc_tree_allreduce_fini(tc_tree_allreduce_t *op) { tc_tree_fini(&op->tree); }
