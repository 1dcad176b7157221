/* coll/hscan -- see hscan.h. */
#include "hscan.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

enum { ST_START = 0, ST_FOLD, ST_NET, ST_APPLY, ST_COPY, ST_ACK, ST_DONE };

/* progress values a process publishes (tc_fold_progress) */
enum { PROG_READ = 1, PROG_PREFIX = 2 };

tc_status_t tc_hscan_init(tc_hscan_t *op, tc_ctx_t *ctx, const void *in, void *out, size_t count,
                          const tc_rtype_t *t, int exclusive, int blocking)
{
    const tc_nodemap_t *m = &ctx->map;
    const size_t span = tc_span(t, count);
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->t = *t;
    op->in = in;
    op->out = out;
    op->count = count;
    op->exclusive = exclusive;
    op->blocking = blocking;
    op->leader = m->lrank == m->leader_lrank;
    op->req = MPI_REQUEST_NULL;
    op->seq = ++ctx->seq;
    if (!ctx->shm) return TC_ERR_NOSUPPORT; /* (coll/plan: never alone on a node) */
    op->cookies = calloc(2 * (size_t)m->lsize, sizeof(uint64_t));
    if (!op->cookies || tc_fold_scratch_get(ctx, &op->f) != 0) return TC_ERR_NOMEM;
    op->pcookies = op->cookies + m->lsize;
    op->acc = in == out ? tc_ctx_buf(ctx, TC_BUF_TREE_ACC, span) : out;
    op->pre = tc_ctx_buf(ctx, TC_BUF_TREE_TMP, span);
    if (op->leader) op->total = tc_ctx_buf(ctx, TC_BUF_NET, span);
    return op->acc && op->pre && (!op->leader || op->total) ? TC_OK : TC_ERR_NOMEM;
}

/* Expose our operand (the leader: its node prefix too) and post them,
 * once every local process is done with the previous collective. */
static tc_status_t expose(tc_hscan_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t span = tc_span(&op->t, op->count);
    if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
    struct iovec iov = { (void *)op->in, span };
    TC_RETURN_IF_FAILED(tc_region_create(s, &iov, 1, TC_RIGHT_READ, &op->cookie));
    if (op->leader) {
        struct iovec p = { op->pre, span };
        TC_RETURN_IF_FAILED(tc_region_create(s, &p, 1, TC_RIGHT_READ, &op->pcookie));
    }
    tc_fold_post(s, op->seq, op->cookie, op->pcookie);
    return TC_OK;
}

/* Our local prefix (local ranks below ours, and ours for Scan) into acc;
 * the leader's node total into total (Scan's last local rank: its prefix). */
static tc_status_t fold(tc_hscan_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const int upto = op->exclusive ? m->lrank : m->lrank + 1;
    if (!tc_fold_all_posted(s, op->seq, op->cookies, op->pcookies)) return TC_INPROGRESS;
    TC_RETURN_IF_FAILED(
        tc_fold_prefix(s, &op->t, op->cookies, op->in, upto, op->count, op->acc, &op->f));
    if (op->leader && upto == m->lsize)
        op->total = op->acc;
    else if (op->leader)
        TC_RETURN_IF_FAILED(
            tc_fold_prefix(s, &op->t, op->cookies, op->in, m->lsize, op->count, op->total, &op->f));
    tc_fold_progress(s, PROG_READ); /* (nobody's operand is read by us any more) */
    return TC_OK;
}

/* The leaders: the exclusive scan of the node totals (llcomm is ranked by
 * node, and the nodes by their consecutive ranks). */
static tc_status_t net(tc_hscan_t *op)
{
    const MPI_Comm ll = op->ctx->llcomm;
    const int n = (int)op->count;
    int flag = 0;
    if (op->blocking)
        return tc_status_mpi(PMPI_Exscan(op->total, op->pre, n, op->t.dt, op->t.op, ll));
    if (!op->started) {
        TC_RETURN_IF_FAILED(
            tc_status_mpi(PMPI_Iexscan(op->total, op->pre, n, op->t.dt, op->t.op, ll, &op->req)));
        op->started = 1;
    }
    TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&op->req, &flag, MPI_STATUS_IGNORE)));
    return flag ? TC_OK : TC_INPROGRESS;
}

/* Off the first node: acc = the node prefix op acc (the leader's, read
 * once it published it); an Exscan's local rank 0 takes it alone. */
static tc_status_t apply(tc_hscan_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const size_t span = tc_span(&op->t, op->count);
    const int j = m->leader_lrank;
    if (m->node == 0) return TC_OK;
    if (!op->leader) {
        if (tc_fold_peer_progress(s, j) < PROG_PREFIX) return TC_INPROGRESS;
        TC_RETURN_IF_FAILED(tc_region_read(s, op->pcookies[j], 0, op->pre, span));
    }
    if (op->exclusive && m->lrank == 0) {
        memcpy(op->acc, op->pre, span);
        return TC_OK;
    }
    return tc_op_apply(&op->t, op->pre, op->acc, op->count);
}

/* In place: the result over our operand once no local peer reads it. */
static tc_status_t copy_out(tc_hscan_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    if (op->acc == op->out) return TC_OK;
    if (op->exclusive && m->node == 0 && m->lrank == 0) return TC_OK; /* rank 0: undefined */
    for (int j = 0; j < m->lsize; j++)
        if (j != m->lrank && tc_fold_peer_progress(s, j) < PROG_READ) return TC_INPROGRESS;
    memcpy(op->out, op->acc, tc_span(&op->t, op->count));
    return TC_OK;
}

tc_status_t tc_hscan_work(tc_hscan_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_status_t rc;
    switch (op->state) {
    case ST_START:
        if ((rc = expose(op)) != TC_OK) return rc;
        op->state = ST_FOLD;
        /* fall through */
    case ST_FOLD:
        if ((rc = fold(op)) != TC_OK) return rc;
        op->state = ST_NET;
        /* fall through */
    case ST_NET:
        if (op->leader) {
            if ((rc = net(op)) != TC_OK) return rc;
            tc_fold_progress(s, PROG_PREFIX); /* (release: the node prefix before) */
        }
        op->state = ST_APPLY;
        /* fall through */
    case ST_APPLY:
        if ((rc = apply(op)) != TC_OK) return rc;
        op->state = ST_COPY;
        /* fall through */
    case ST_COPY:
        if ((rc = copy_out(op)) != TC_OK) return rc;
        tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* our operand and node prefix are exposed until every local peer is done */
        if (!tc_shm_all_done(s, op->seq)) return TC_INPROGRESS;
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

void tc_hscan_fini(tc_hscan_t *op)
{
    if (op->req != MPI_REQUEST_NULL) {
        /* after a failure: a nonblocking collective cannot be cancelled
         * (MPI 4.0 section 6.12); it is let go, and the buffers it may still
         * write are left to it (the context, failed, is not kept) */
        tc_ctx_buf_leave(op->ctx, TC_BUF_TREE_TMP);
        tc_ctx_buf_leave(op->ctx, TC_BUF_NET);
        op->ctx->net_dirty = 1;
    }
    if (op->cookie) tc_region_destroy(op->ctx->shm, op->cookie);
    if (op->pcookie) tc_region_destroy(op->ctx->shm, op->pcookie);
    op->cookie = op->pcookie = 0;
    tc_fold_scratch_put(&op->f);
    free(op->cookies);
    op->cookies = op->pcookies = NULL;
}
