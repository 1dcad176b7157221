/* coll/vexchange -- see vexchange.h. */
#include "vexchange.h"

#include "fold.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };

tc_status_t tc_vexchange_init(tc_vexchange_t *op, tc_ctx_t *ctx, int kind, const void *in,
                              void *out, size_t own, const size_t *len, const size_t *off, int root)
{
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->kind = kind;
    op->root = root;
    op->in = in;
    op->out = out;
    op->own = own;
    op->len = len;
    op->off = off;
    op->seq = ++ctx->seq;
    op->state = ST_START;
    op->cookies = calloc((size_t)ctx->map.size, sizeof(uint64_t));
    if (kind == TC_VX_ALLTOALLV) op->tcookies = calloc((size_t)ctx->map.size, sizeof(uint64_t));
    return op->cookies && (kind != TC_VX_ALLTOALLV || op->tcookies) ? TC_OK : TC_ERR_NOMEM;
}

/* 1 if we expose a buffer: every Allgatherv process, the non-roots of
 * Gatherv and Scatterv. */
static int exposes(const tc_vexchange_t *op)
{
    return op->kind >= TC_VX_ALLGATHERV || op->ctx->map.rank != op->root;
}

/* Alltoallv: expose our send buffer and table, copy our own block. */
static tc_status_t expose_alltoallv(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int me = op->ctx->map.rank, n = op->ctx->map.size;
    if (op->span) {
        struct iovec iov = { (void *)op->in, op->span };
        TC_RETURN_IF_FAILED(tc_region_create(s, &iov, 1, TC_RIGHT_READ, &op->cookie));
    }
    struct iovec t = { (void *)op->stab, 2 * (size_t)n * sizeof(size_t) };
    TC_RETURN_IF_FAILED(tc_region_create(s, &t, 1, TC_RIGHT_READ, &op->tcookie));
    tc_fold_post(s, op->seq, op->cookie, op->tcookie);
    if (op->stab[2 * me] != op->len[me]) return TC_ERR_TRUNCATE;
    if (op->len[me] && op->in + op->stab[2 * me + 1] != op->out + op->off[me])
        memcpy(op->out + op->off[me], op->in + op->stab[2 * me + 1], op->len[me]);
    return TC_OK;
}

/* Expose our block (readable; Scatterv: writable) and post its cookie;
 * put our own block where it goes.  Nobody reads our previous exposure
 * any more once every local process has finished the previous call. */
static tc_status_t expose(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int me = op->ctx->map.rank;
    if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
    if (op->kind == TC_VX_ALLTOALLV) return expose_alltoallv(op);
    if (exposes(op) && op->own) {
        int scatter = op->kind == TC_VX_SCATTERV;
        struct iovec iov = { scatter ? op->out : (void *)op->in, op->own };
        TC_RETURN_IF_FAILED(
            tc_region_create(s, &iov, 1, scatter ? TC_RIGHT_WRITE : TC_RIGHT_READ, &op->cookie));
    }
    tc_fold_post(s, op->seq, op->cookie, 0);
    /* our own block, where we hold the table (it must be as long as ours) */
    if (op->len && op->len[me] != op->own) return TC_ERR_TRUNCATE;
    if (op->kind == TC_VX_SCATTERV && me == op->root && op->out != op->in + op->off[me])
        memcpy(op->out, op->in + op->off[me], op->own);
    else if (op->kind != TC_VX_SCATTERV && op->len && op->in != op->out + op->off[me])
        memcpy(op->out + op->off[me], op->in, op->own);
    return TC_OK;
}

/* Alltoallv: peer @j's block for us, its length checked against ours. */
static tc_status_t read_alltoallv(tc_vexchange_t *op, int j)
{
    tc_shm_t *s = op->ctx->shm;
    size_t e[2]; /* j's length and offset for us */
    TC_RETURN_IF_FAILED(
        tc_region_read(s, op->tcookies[j], 2 * (size_t)s->me * sizeof(size_t), e, sizeof(e)));
    if (e[0] != op->len[j]) return TC_ERR_TRUNCATE;
    if (!e[0]) return TC_OK;
    TC_RETURN_IF_FAILED(tc_region_read(s, op->cookies[j], e[1], op->out + op->off[j], e[0]));
    s->bytes_sc += e[0];
    return TC_OK;
}

/* The copies: the Gatherv root and every Allgatherv process read each
 * other's block, the Scatterv root writes each other's, every Alltoallv
 * process reads its block out of each other's send buffer. */
static tc_status_t copy(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int n = s->nlocal, me = s->me;
    if (op->kind == TC_VX_ALLTOALLV) {
        if (!tc_fold_all_posted(s, op->seq, op->cookies, op->tcookies)) return TC_INPROGRESS;
        for (int k = 1; k < n; k++) TC_RETURN_IF_FAILED(read_alltoallv(op, (me + k) % n));
        return TC_OK;
    }
    if (op->kind != TC_VX_ALLGATHERV && me != op->root) return TC_OK;
    if (!tc_fold_all_posted(s, op->seq, op->cookies, NULL)) return TC_INPROGRESS;
    for (int k = 1; k < n; k++) {
        const int j = (me + k) % n; /* (one node: local rank = rank) */
        if (!op->len[j]) continue;
        if (op->kind == TC_VX_SCATTERV)
            TC_RETURN_IF_FAILED(
                tc_region_write(s, op->cookies[j], 0, op->in + op->off[j], op->len[j]));
        else
            TC_RETURN_IF_FAILED(
                tc_region_read(s, op->cookies[j], 0, op->out + op->off[j], op->len[j]));
        s->bytes_sc += op->len[j];
    }
    return TC_OK;
}

tc_status_t tc_vexchange_work(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_status_t rc;
    switch (op->state) {
    case ST_START:
        if ((rc = expose(op)) != TC_OK) return rc;
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        if ((rc = copy(op)) != TC_OK) return rc;
        tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* an exposed buffer is read or written until the others finish */
        if (exposes(op) && !tc_shm_all_done(s, op->seq)) return TC_INPROGRESS;
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

void tc_vexchange_fini(tc_vexchange_t *op)
{
    if (op->cookie) tc_region_destroy(op->ctx->shm, op->cookie);
    if (op->tcookie) tc_region_destroy(op->ctx->shm, op->tcookie);
    op->cookie = op->tcookie = 0;
    free(op->cookies);
    free(op->tcookies);
    op->cookies = op->tcookies = NULL;
}
