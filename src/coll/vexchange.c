/* coll/vexchange -- see vexchange.h. */
#include "vexchange.h"

#include "fold.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };

/* The Gatherv or Scatterv root's table: each rank's length and offset
 * from the first block's byte (op->rbase from the buffer), and the span
 * of the blocks.  Displacements may be negative: offsets compared signed. */
static tc_status_t root_table(tc_vexchange_t *op)
{
    const int n = op->ctx->map.size;
    ptrdiff_t first = -1, end = 0;
    int any = 0;
    if (!(op->rtab = malloc(2 * (size_t)n * sizeof(size_t)))) return TC_ERR_NOMEM;
    for (int r = 0; r < n; r++) {
        ptrdiff_t o = (ptrdiff_t)op->off[r], e = o + (ptrdiff_t)op->len[r];
        if (!op->len[r]) continue;
        if (!any || o < first) first = o;
        if (!any || e > end) end = e;
        any = 1;
    }
    op->rbase = any ? first : 0;
    op->span = any ? (size_t)(end - first) : 0;
    for (int r = 0; r < n; r++) {
        op->rtab[2 * r] = op->len[r];
        op->rtab[2 * r + 1] = op->len[r] ? (size_t)((ptrdiff_t)op->off[r] - op->rbase) : 0;
    }
    return TC_OK;
}

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
    op->tcookies = calloc((size_t)ctx->map.size, sizeof(uint64_t));
    if (!op->cookies || !op->tcookies) return TC_ERR_NOMEM;
    return kind <= TC_VX_SCATTERV && ctx->map.rank == root ? root_table(op) : TC_OK;
}

/* 1 if we expose a buffer: every Allgatherv and Alltoallv process, the
 * root of Gatherv and Scatterv. */
static int exposes(const tc_vexchange_t *op)
{
    return op->kind >= TC_VX_ALLGATHERV || op->ctx->map.rank == op->root;
}

/* Gatherv, Scatterv: the root exposes its receive (send) buffer, from its
 * first block's byte to its last's, and the table of the blocks' lengths
 * and offsets in it; each other process reads its entry (one system
 * call) and writes (reads) its block, all in parallel. */
static tc_status_t expose_root(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int n = op->ctx->map.size, gather = op->kind == TC_VX_GATHERV;
    if (op->span) {
        struct iovec iov = { (gather ? op->out : (char *)op->in) + op->rbase, op->span };
        TC_RETURN_IF_FAILED(
            tc_region_create(s, &iov, 1, gather ? TC_RIGHT_WRITE : TC_RIGHT_READ, &op->cookie));
    }
    struct iovec t = { op->rtab, 2 * (size_t)n * sizeof(size_t) };
    TC_RETURN_IF_FAILED(tc_region_create(s, &t, 1, TC_RIGHT_READ, &op->tcookie));
    tc_fold_post(s, op->seq, op->cookie, op->tcookie);
    return TC_OK;
}

/* A Gatherv or Scatterv non-root: our block into (out of) the root's
 * exposed buffer, at the offset its table gives, its length checked. */
static tc_status_t copy_nonroot(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int r = op->root;
    size_t e[2]; /* the root's length and offset for us */
    if (!tc_fold_all_posted(s, op->seq, op->cookies, op->tcookies)) return TC_INPROGRESS;
    TC_RETURN_IF_FAILED(
        tc_region_read(s, op->tcookies[r], 2 * (size_t)s->me * sizeof(size_t), e, sizeof(e)));
    if (e[0] != op->own) return TC_ERR_TRUNCATE;
    if (!e[0]) return TC_OK;
    if (op->kind == TC_VX_GATHERV)
        TC_RETURN_IF_FAILED(tc_region_write(s, op->cookies[r], e[1], op->in, e[0]));
    else
        TC_RETURN_IF_FAILED(tc_region_read(s, op->cookies[r], e[1], op->out, e[0]));
    s->bytes_sc += e[0];
    return TC_OK;
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
    if (op->kind != TC_VX_ALLGATHERV) { /* Gatherv, Scatterv */
        if (me != op->root) {
            tc_fold_post(s, op->seq, 0, 0);
            return TC_OK;
        }
        TC_RETURN_IF_FAILED(expose_root(op));
    } else {
        if (op->own) {
            struct iovec iov = { (void *)op->in, op->own };
            TC_RETURN_IF_FAILED(tc_region_create(s, &iov, 1, TC_RIGHT_READ, &op->cookie));
        }
        tc_fold_post(s, op->seq, op->cookie, 0);
    }
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

/* The copies: every Allgatherv process reads each other's block, every
 * Alltoallv process its block out of each other's send buffer, the
 * Gatherv and Scatterv non-roots write or read theirs in the root's. */
static tc_status_t copy(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int n = s->nlocal, me = s->me;
    if (op->kind == TC_VX_ALLTOALLV) {
        if (!tc_fold_all_posted(s, op->seq, op->cookies, op->tcookies)) return TC_INPROGRESS;
        for (int k = 1; k < n; k++) TC_RETURN_IF_FAILED(read_alltoallv(op, (me + k) % n));
        return TC_OK;
    }
    if (op->kind != TC_VX_ALLGATHERV) return me == op->root ? TC_OK : copy_nonroot(op);
    if (!tc_fold_all_posted(s, op->seq, op->cookies, NULL)) return TC_INPROGRESS;
    for (int k = 1; k < n; k++) {
        const int j = (me + k) % n; /* (one node: local rank = rank) */
        if (!op->len[j]) continue;
        TC_RETURN_IF_FAILED(tc_region_read(s, op->cookies[j], 0, op->out + op->off[j], op->len[j]));
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
    free(op->rtab);
    op->cookies = op->tcookies = NULL;
    op->rtab = NULL;
}
