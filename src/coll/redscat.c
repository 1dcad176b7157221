/* coll/redscat -- see redscat.h. */
#include "redscat.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

enum { ST_START = 0, ST_FOLD, ST_NET, ST_ACK, ST_DONE };

tc_status_t tc_redscat_init(tc_redscat_t *op, tc_ctx_t *ctx, const void *in, void *out,
                            const tc_rtype_t *t, const size_t *cnt, const size_t *first,
                            int blocking)
{
    const tc_nodemap_t *m = &ctx->map;
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->t = *t;
    op->in = in;
    op->out = out;
    op->cnt = cnt;
    op->first = first;
    op->in_place = in == out;
    op->blocking = blocking;
    op->req = MPI_REQUEST_NULL;
    op->seq = ++ctx->seq;
    op->state = ST_START;
    if (!ctx->shm) return TC_ERR_NOSUPPORT; /* (coll/plan: never alone on a node) */
    if (!(op->cookies = calloc((size_t)m->lsize, sizeof(uint64_t))) ||
        tc_fold_scratch_get(ctx, &op->f) != 0)
        return TC_ERR_NOMEM;
    size_t acc = op->in_place ? cnt[m->rank] : 0;
    if (m->nnodes > 1) {
        const int N = m->nnodes;
        op->rank_at = malloc(2 * (size_t)N * sizeof(int));
        if (!op->rank_at) return TC_ERR_NOMEM;
        op->scount = op->rank_at + N;
        for (int j = 0; j < N; j++) op->rank_at[j] = -1;
        for (int r = 0; r < m->size; r++)
            if (m->lrank_of[r] == m->lrank) op->rank_at[m->node_of[r]] = r;
        acc = 0;
        for (int j = 0; j < N; j++) {
            if (op->rank_at[j] < 0) return TC_ERR_INVAL; /* unequal nodes: coll/plan's to screen */
            op->scount[j] = (int)cnt[op->rank_at[j]];
            acc += cnt[op->rank_at[j]];
        }
        TC_RETURN_IF_FAILED(tc_status_mpi(tc_ctx_slices(ctx)));
    }
    if (acc && !(op->acc = tc_ctx_buf(ctx, TC_BUF_NET, tc_span(t, acc)))) return TC_ERR_NOMEM;
    return TC_OK;
}

/* Expose our operand (every block, readable) and post its cookie, once
 * every local process is done with the previous collective (nobody reads
 * our previous exposure then). */
static tc_status_t expose(tc_redscat_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int n = op->ctx->map.size;
    if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
    const size_t span = tc_span(&op->t, op->first[n - 1] + op->cnt[n - 1]);
    if (span) {
        struct iovec iov = { (void *)op->in, span };
        TC_RETURN_IF_FAILED(tc_region_create(s, &iov, 1, TC_RIGHT_READ, &op->cookie));
    }
    tc_fold_post(s, op->seq, op->cookie, 0);
    return TC_OK;
}

/* tc_fold_piece's destination for a piece from element @first that goes
 * to @dst: the base an operand-shaped buffer would have (the fold writes
 * at first * extent from it).  Integer arithmetic: the base may lie
 * outside any object, and is never dereferenced itself. */
static char *laid_out(char *dst, const tc_rtype_t *t, size_t first)
{
    return (char *)((uintptr_t)dst - first * t->extent);
}

/* Fold rank @g's block of every local operand into @dst. */
static tc_status_t fold_block(tc_redscat_t *op, int g, char *dst)
{
    const size_t f = op->first[g];
    return tc_fold_piece(op->ctx->shm, &op->t, op->cookies, op->in, f, op->cnt[g],
                         laid_out(dst, &op->t, f), NULL, 0, &op->f);
}

/* One node: our block (in place: into acc, copied over once no peer
 * reads our operand).  Several nodes: our slice's blocks, node order. */
static tc_status_t fold(tc_redscat_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    if (!tc_fold_all_posted(op->ctx->shm, op->seq, op->cookies, NULL)) return TC_INPROGRESS;
    if (m->nnodes == 1) return fold_block(op, m->rank, op->in_place ? op->acc : op->out);
    size_t at = 0;
    for (int j = 0; j < m->nnodes; j++) {
        const int g = op->rank_at[j];
        TC_RETURN_IF_FAILED(fold_block(op, g, op->acc + at * op->t.extent));
        at += op->cnt[g];
    }
    return TC_OK;
}

/* Several nodes: the slice's reduce-scatter of acc, our block into out.
 * In place, out is our operand: written once no local peer reads it. */
static tc_status_t net(tc_redscat_t *op)
{
    const MPI_Comm sl = op->ctx->slice;
    int flag = 0;
    if (op->in_place && !tc_shm_all_done(op->ctx->shm, op->seq)) return TC_INPROGRESS;
    if (op->blocking)
        return tc_status_mpi(
            PMPI_Reduce_scatter(op->acc, op->out, op->scount, op->t.dt, op->t.op, sl));
    if (!op->started) {
        TC_RETURN_IF_FAILED(tc_status_mpi(
            PMPI_Ireduce_scatter(op->acc, op->out, op->scount, op->t.dt, op->t.op, sl, &op->req)));
        op->started = 1;
    }
    TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&op->req, &flag, MPI_STATUS_IGNORE)));
    return flag ? TC_OK : TC_INPROGRESS;
}

tc_status_t tc_redscat_work(tc_redscat_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    tc_status_t rc;
    switch (op->state) {
    case ST_START:
        if ((rc = expose(op)) != TC_OK) return rc;
        op->state = ST_FOLD;
        /* fall through */
    case ST_FOLD:
        if ((rc = fold(op)) != TC_OK) return rc;
        tc_cctl_finish(s, op->seq); /* (our reads are done) */
        op->state = ST_NET;
        /* fall through */
    case ST_NET:
        if (m->nnodes > 1 && (rc = net(op)) != TC_OK) return rc;
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* our operand is exposed until every local peer has read it */
        if (!tc_shm_all_done(s, op->seq)) return TC_INPROGRESS;
        if (m->nnodes == 1 && op->in_place && op->acc)
            memcpy(op->out, op->acc, tc_span(&op->t, op->cnt[m->rank]));
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

void tc_redscat_fini(tc_redscat_t *op)
{
    if (op->req != MPI_REQUEST_NULL) tc_req_abandon(&op->req, 1);
    if (op->cookie) tc_region_destroy(op->ctx->shm, op->cookie);
    op->cookie = 0;
    tc_fold_scratch_put(&op->f);
    free(op->cookies);
    free(op->rank_at);
    op->cookies = NULL;
    op->rank_at = op->scount = NULL;
}
