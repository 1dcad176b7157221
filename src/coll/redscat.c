/* coll/redscat -- see redscat.h. */
#include "redscat.h"

#include "../xfer/region.h"
#include "tags.h"

#include <stdlib.h>
#include <string.h>

enum { ST_START = 0, ST_FOLD, ST_NET, ST_ACK, ST_DONE };

/* Several nodes: the slice's blocks (node order) in acc, the ring's
 * requests and receive buffer.  *@acc: acc's elements. */
static tc_status_t init_ring(tc_redscat_t *op, size_t *acc)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes;
    size_t most = 0;
    op->rank_at = malloc((size_t)N * sizeof(int));
    op->boff = malloc((size_t)N * sizeof(size_t));
    if (!op->rank_at || !op->boff) return TC_ERR_NOMEM;
    for (int j = 0; j < N; j++) op->rank_at[j] = -1;
    for (int r = 0; r < m->size; r++)
        if (m->lrank_of[r] == m->lrank) op->rank_at[m->node_of[r]] = r;
    *acc = 0;
    for (int j = 0; j < N; j++) {
        if (op->rank_at[j] < 0) return TC_ERR_INVAL; /* unequal nodes: coll/plan's to screen */
        const size_t c = op->cnt[op->rank_at[j]];
        op->boff[j] = *acc;
        *acc += c;
        if (c > most) most = c;
    }
    op->seg = TC_NET_SEG / op->t.extent ? TC_NET_SEG / op->t.extent : 1;
    op->nreq = (int)((most + op->seg - 1) / op->seg);
    op->rreq = malloc(2 * (size_t)(op->nreq ? op->nreq : 1) * sizeof(MPI_Request));
    if (!op->rreq) return TC_ERR_NOMEM;
    op->sreq = op->rreq + op->nreq;
    for (int i = 0; i < 2 * op->nreq; i++) op->rreq[i] = MPI_REQUEST_NULL;
    if (most && !(op->tmp = tc_ctx_buf(op->ctx, TC_BUF_TREE_TMP, tc_span(&op->t, most))))
        return TC_ERR_NOMEM;
    return TC_OK;
}

tc_status_t tc_redscat_init(tc_redscat_t *op, tc_ctx_t *ctx, const void *in, void *out,
                            const tc_rtype_t *t, const int *counts, size_t count)
{
    const tc_nodemap_t *m = &ctx->map;
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->t = *t;
    op->in = in;
    op->out = out;
    op->in_place = in == out;
    op->seq = ++ctx->seq; /* (first: a failure below is this call's, published) */
    op->state = ST_START;
    if (!ctx->shm) return TC_ERR_NOSUPPORT; /* (coll/plan: never alone on a node) */
    if (!(op->cookies = calloc((size_t)m->lsize, sizeof(uint64_t))) ||
        !(op->cnt = malloc(2 * (size_t)m->size * sizeof(size_t))) ||
        tc_fold_scratch_get(ctx, &op->f) != 0)
        return TC_ERR_NOMEM;
    op->first = op->cnt + m->size;
    size_t at = 0;
    for (int r = 0; r < m->size; r++) {
        op->cnt[r] = counts ? (size_t)counts[r] : count;
        op->first[r] = at;
        at += op->cnt[r];
    }
    size_t acc = op->in_place ? op->cnt[m->rank] : 0;
    if (m->nnodes > 1) TC_RETURN_IF_FAILED(init_ring(op, &acc));
    /* (several nodes: a buffer even when our slice's blocks are empty) */
    if ((acc || m->nnodes > 1) && !(op->acc = tc_ctx_buf(ctx, TC_BUF_NET, tc_span(t, acc) + 1)))
        return TC_ERR_NOMEM;
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
        TC_RETURN_IF_FAILED(tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_READ, &op->cookie));
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

/* Elements of slice block @b (node order). */
static size_t bcount(const tc_redscat_t *op, int b) { return op->cnt[op->rank_at[b]]; }

/* Post ring step @k: receive block r - k - 2 from the previous node (into
 * tmp), send block r - k - 1 (folded at step k - 1) to the next, in
 * messages of seg elements.  (Messages of one step, and of the steps in
 * turn, match in order: one source, one tag, posted in that order.) */
static tc_status_t ring_post(tc_redscat_t *op, int k)
{
    const int N = op->ctx->map.nnodes, r = op->ctx->map.node;
    const int rb = (r - k - 2 + 2 * N) % N, sb = (r - k - 1 + N) % N;
    const MPI_Comm sl = op->ctx->slice;
    const size_t ext = op->t.extent;
    for (size_t at = 0, i = 0; at < bcount(op, rb); at += op->seg, i++) {
        size_t c = bcount(op, rb) - at < op->seg ? bcount(op, rb) - at : op->seg;
        TC_RETURN_IF_FAILED(
            tc_status_mpi(PMPI_Irecv(op->tmp + at * ext, (int)c, op->t.dt, (r + N - 1) % N,
                                     TC_TAG_RSRING, sl, &op->rreq[i])));
    }
    const char *src = op->acc + op->boff[sb] * ext;
    for (size_t at = 0, i = 0; at < bcount(op, sb); at += op->seg, i++) {
        size_t c = bcount(op, sb) - at < op->seg ? bcount(op, sb) - at : op->seg;
        TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Isend(src + at * ext, (int)c, op->t.dt, (r + 1) % N,
                                                     TC_TAG_RSRING, sl, &op->sreq[i])));
    }
    return TC_OK;
}

/* Several nodes: the slice's ring reduce-scatter of acc (N - 1 steps,
 * each message folded as it arrives), then our block into out; in place,
 * out is our operand: written once no local peer reads it. */
static tc_status_t net(tc_redscat_t *op)
{
    const int N = op->ctx->map.nnodes, r = op->ctx->map.node;
    const size_t ext = op->t.extent;
    int flag = 0;
    for (; op->step < N - 1; op->step++, op->posted = 0) {
        const int rb = (r - op->step - 2 + 2 * N) % N;
        const int nr = (int)((bcount(op, rb) + op->seg - 1) / op->seg);
        if (!op->posted) {
            TC_RETURN_IF_FAILED(ring_post(op, op->step));
            op->posted = 1;
            op->folded = op->sent = 0;
        }
        for (; op->folded < nr; op->folded++) {
            const size_t at = (size_t)op->folded * op->seg;
            const size_t c = bcount(op, rb) - at < op->seg ? bcount(op, rb) - at : op->seg;
            TC_RETURN_IF_FAILED(
                tc_status_mpi(PMPI_Test(&op->rreq[op->folded], &flag, MPI_STATUS_IGNORE)));
            if (!flag) return TC_INPROGRESS;
            TC_RETURN_IF_FAILED(
                tc_op_apply(&op->t, op->tmp + at * ext, op->acc + (op->boff[rb] + at) * ext, c));
        }
        for (; op->sent < op->nreq; op->sent++) { /* (unused slots: MPI_REQUEST_NULL) */
            TC_RETURN_IF_FAILED(
                tc_status_mpi(PMPI_Test(&op->sreq[op->sent], &flag, MPI_STATUS_IGNORE)));
            if (!flag) return TC_INPROGRESS;
        }
    }
    if (op->in_place && !tc_shm_all_done(op->ctx->shm, op->seq)) return TC_INPROGRESS;
    if (bcount(op, r)) memcpy(op->out, op->acc + op->boff[r] * ext, tc_span(&op->t, bcount(op, r)));
    return TC_OK;
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
    if (op->rreq) tc_req_abandon(op->rreq, 2 * op->nreq); /* (after a failure) */
    tc_region_release(op->ctx->shm, op->keep, op->cookie, op->state == ST_DONE);
    op->cookie = 0;
    tc_fold_scratch_put(&op->f);
    free(op->cookies);
    free(op->cnt);
    free(op->rank_at);
    free(op->boff);
    free(op->rreq);
    op->cookies = NULL;
    op->cnt = op->first = NULL;
    op->rank_at = NULL;
    op->boff = NULL;
    op->rreq = op->sreq = NULL;
}
