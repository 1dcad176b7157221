/* coll/exchange -- see exchange.h. */
#include "exchange.h"

#include "fold.h"

#include "tags.h"

#include "../xfer/region.h"

#include <limits.h>

#include <stdlib.h>
#include <string.h>

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };

/* Bytes of the item a writer of @kind puts (eager): Gather's writers
 * their block, Scatter's root and Alltoall's every process @n blocks. */
static size_t item_bytes(int kind, size_t block, int n)
{
    return kind == TC_XC_GATHER ? block : block * (size_t)n;
}

int tc_exchange_eager(const tc_ctx_t *c, int kind, size_t block)
{
    return block <= TC_EAGER_MAX && block * (size_t)c->map.lsize <= TC_EAGER_NODE &&
           item_bytes(kind, block, c->map.lsize) <= c->cfg->cico_slot;
}

int tc_exchange_sliced(const tc_ctx_t *c, size_t block)
{
    const tc_nodemap_t *m = &c->map;
    return m->nnodes > 1 && c->minlocal == c->maxlocal && (c->all_sc || m->lsize == 1) &&
           block > c->cfg->flat_max[TC_CI_ALLTOALL] && block * (size_t)m->lsize <= (size_t)INT_MAX;
}

int tc_exchange_fits(const tc_ctx_t *c, int kind, size_t block)
{
    if (block == 0) return 0;
    if (c->map.nnodes > 1) return kind == TC_XC_ALLTOALL && tc_exchange_sliced(c, block);
    if (!c->shm) return 0;
    return c->all_sc || tc_exchange_eager(c, kind, block);
}

/* This call's tag for the slices' messages (coll/tags: its epoch). */
static int xc_tag(const tc_exchange_t *op) { return TC_TAG_EPOCH(TC_TAG_ALLTOALL, op->seq); }

/* The per-slice exchange's tables and staging (several nodes). */
static tc_status_t init_sliced(tc_exchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const size_t ppn = (size_t)m->lsize, msg = ppn * op->block, steps = (size_t)m->nnodes - 1;
    op->multi = 1;
    op->ppn = m->lsize;
    op->rank_at = malloc(sizeof(int) * (size_t)m->nnodes * ppn);
    op->incs = calloc(ppn, sizeof(uint64_t));
    /* the context's buffer, kept between calls: a fresh allocation of this
     * size is a new mapping whose every page faults (coll/ctx tc_ctx_buf) */
    op->sstage = tc_ctx_buf(op->ctx, TC_BUF_NET, 2 * steps * msg);
    if (!op->rank_at || !op->incs || !op->sstage) return TC_ERR_NOMEM;
    TC_RETURN_IF_FAILED(tc_pieces_init(&op->net, op->ctx->pcomm, 2 * steps * tc_pieces_of(msg)));
    op->rstage = op->sstage + steps * msg;
    for (int r = 0; r < m->size; r++)
        op->rank_at[(size_t)m->node_of[r] * ppn + (size_t)m->lrank_of[r]] = r;
    return TC_OK;
}

tc_status_t tc_exchange_init(tc_exchange_t *op, tc_ctx_t *ctx, int kind, const void *in, void *out,
                             size_t block, int root)
{
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->kind = kind;
    op->root = root;
    op->in = in;
    op->out = out;
    op->block = block;
    op->seq = ++ctx->seq;
    op->state = ST_START;
    if (ctx->map.nnodes == 1 && tc_exchange_eager(ctx, kind, block)) {
        op->eager = 1;
        tc_ctx_eager(ctx, op->seq, &op->eager_slot, &op->eager_wait);
        return TC_OK;
    }
    if (kind == TC_XC_ALLTOALL && !(op->cookies = calloc((size_t)ctx->map.lsize, sizeof(uint64_t))))
        return TC_ERR_NOMEM;
    return ctx->map.nnodes > 1 ? init_sliced(op) : TC_OK;
}

/* ---- Eager: the items ------------------------------------------------------- */

/* 1 when local process @i's item holds bytes [0, @need) of its @bytes for
 * this call, 0 not yet; < 0 the status of a failed tc_shm_item_avail (an
 * item of another size: the counts differ; a newer tag). */
static int item_has(const tc_exchange_t *op, int i, size_t bytes, size_t need)
{
    size_t a = tc_shm_item_avail(op->ctx->shm, i, op->eager_slot, op->seq, bytes);
    if (a >= TC_SHM_ITEM_OTHERSIZE) return (int)tc_shm_item_error(a);
    return a >= need;
}

/* 1 if we read local process @i's item: the Gather root every writer's,
 * a Scatter non-root the root's, every Alltoall process everyone's. */
static int eager_reads(const tc_exchange_t *op, int i)
{
    const int me = op->ctx->shm->me;
    if (i == me) return 0;
    if (op->kind == TC_XC_GATHER) return me == op->root;
    if (op->kind == TC_XC_SCATTER) return me != op->root && i == op->root;
    return 1;
}

/* Our own block, where a Gather root, a Scatter root or an Alltoall
 * process keeps it (nothing when it is there already: MPI_IN_PLACE). */
static void own_block(const tc_exchange_t *op)
{
    const int me = op->ctx->map.rank; /* (one node: the local rank) */
    const size_t b = op->block, at = (size_t)me * b;
    if (op->kind == TC_XC_ALLTOALL) memcpy(op->out + at, op->in + at, b);
    if (op->kind == TC_XC_GATHER && me == op->root && op->in != op->out + at)
        memcpy(op->out + at, op->in, b);
    if (op->kind == TC_XC_SCATTER && me == op->root && op->out != op->in + at)
        memcpy(op->out, op->in + at, b);
}

/* 1 if local process @i posted for call @seq (coll/fold tc_fold_post:
 * it took single copy). */
static int posted(const tc_shm_t *s, int i, uint64_t seq)
{
    /* Acquire: pairs with the release in tc_fold_post. */
    return atomic_load_explicit(&tc_cctl(s, i)->post_seq, memory_order_acquire) == seq;
}

/* 1 if local process @i wrote an eager item for call @seq (it took the
 * eager path). */
static int wrote_item(const tc_exchange_t *op, int i)
{
    const tc_item_line_t *l = &op->ctx->shm->ctl[i].item[tc_ctx_eager_slot(op->ctx, op->seq)];
    return atomic_load_explicit(&l->tag, memory_order_acquire) == op->seq;
}

/* Eager: put our item (if we write one), then copy what we need out of the
 * others' items once they hold it. */
static tc_status_t eager_work(tc_exchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int n = s->nlocal, me = s->me, root = op->root;
    const size_t b = op->block, ib = item_bytes(op->kind, b, n);
    const int writes = op->kind == TC_XC_ALLTOALL || (op->kind == TC_XC_GATHER) != (me == root);
    if (op->state == ST_START) {
        if (writes && !tc_shm_item_put(s, op->in, ib, op->eager_slot, op->seq, op->eager_wait))
            return TC_INPROGRESS;
        own_block(op);
        op->state = ST_WORK;
    }
    for (int i = 0; i < n; i++) { /* what we read, once all of it is there */
        if (!eager_reads(op, i)) continue;
        int h = item_has(op, i, ib, op->kind == TC_XC_SCATTER ? (size_t)(me + 1) * b : ib);
        if (h < 0) return (tc_status_t)h;
        /* A writer that posted for this call took single copy: its block
         * is not ours (counts that differ across the eager size), and it
         * waits for what we never post (sc_work). */
        if (!h && posted(s, i, op->seq)) return TC_ERR_TRUNCATE;
        if (!h) return TC_INPROGRESS;
    }
    const char *item;
    switch (op->kind) {
    case TC_XC_GATHER:
        for (int i = 0; i < n && me == root; i++)
            if (i != me)
                memcpy(op->out + (size_t)i * b, tc_shm_item_data(s, i, op->eager_slot, b), b);
        break;
    case TC_XC_SCATTER:
        item = tc_shm_item_data(s, root, op->eager_slot, ib);
        if (me != root) memcpy(op->out, item + (size_t)me * b, b);
        break;
    default:
        for (int i = 0; i < n; i++) {
            if (i == me) continue;
            item = tc_shm_item_data(s, i, op->eager_slot, ib);
            memcpy(op->out + (size_t)i * b, item + (size_t)me * b, b);
        }
    }
    s->bytes_cico += b * (size_t)(n - 1);
    tc_cctl_finish(s, op->seq);
    op->state = ST_DONE;
    return TC_OK;
}

/* ---- Single copy --------------------------------------------------------------- */

/* Expose our buffer (the Gather root's receive buffer, the Scatter root's
 * send buffer, every Alltoall process's receive buffer) and copy our own
 * block.  Nobody reads our previous exposure any more once every process
 * has finished the previous collective. */
static tc_status_t expose(tc_exchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t b = op->block, all = b * (size_t)op->ctx->map.size;
    if (s && (op->kind == TC_XC_ALLTOALL || s->me == op->root)) {
        if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
        int scatter = op->kind == TC_XC_SCATTER;
        struct iovec iov = { scatter ? (void *)op->in : op->out, all };
        TC_RETURN_IF_FAILED(tc_region_acquire(
            s, op->keep, &iov, 1, scatter ? TC_RIGHT_READ : TC_RIGHT_WRITE, &op->cookie));
        if (op->multi) { /* the local slices read our blocks for the other nodes */
            struct iovec in = { (void *)op->in, all };
            TC_RETURN_IF_FAILED(
                tc_region_acquire(s, op->keep, &in, 1, TC_RIGHT_READ, &op->in_cookie));
        }
        tc_fold_post(s, op->seq, scatter ? op->cookie : op->in_cookie, scatter ? 0 : op->cookie);
    }
    own_block(op);
    return TC_OK;
}

/* Gather, Scatter: the head of a non-root's block it copies itself
 * (coll/ctx tc_ctx_share_head); the root copies the rest. */
static size_t share_head(const tc_exchange_t *op)
{
    return op->kind == TC_XC_ALLTOALL
               ? op->block
               : tc_ctx_share_head(op->ctx, op->block, op->ctx->cfg->root_share_min);
}

/* The Gather, Scatter root: the tail of every other process's block
 * (share_head), out of its send buffer or into its receive buffer, which
 * it exposes and posts (resumable: op->next).  One that finished without
 * posting, posted no buffer, or a buffer of another length than our
 * block has a count of its own: each side splits its own length, so
 * nothing else would tell. */
static tc_status_t root_share(tc_exchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t b = op->block, h = share_head(op);
    const int gather = op->kind == TC_XC_GATHER;
    if (h == b) return TC_OK; /* (the others copy all of theirs) */
    for (; op->next < s->nlocal - 1; op->next++) {
        const int i = (s->me + 1 + op->next) % s->nlocal;
        if (!posted(s, i, op->seq)) {
            /* Acquire: a post before its finish is seen now */
            if (atomic_load_explicit(&s->ctl[i].done_seq, memory_order_acquire) < op->seq)
                return TC_INPROGRESS;
            if (!posted(s, i, op->seq)) return TC_ERR_TRUNCATE; /* (finished without) */
        }
        const tc_cctl_t *c = tc_cctl(s, i);
        /* (relaxed: after the acquire of its post) */
        const uint64_t cookie =
            atomic_load_explicit(gather ? &c->in_cookie : &c->out_cookie, memory_order_relaxed);
        if (!cookie ||
            !tc_region_len_is(s, cookie, b, gather ? TC_DIR_FROM_REGION : TC_DIR_TO_REGION))
            return TC_ERR_TRUNCATE;
        char *at = (gather ? op->out : (char *)op->in) + (size_t)i * b + h;
        TC_RETURN_IF_FAILED(tc_counted(gather ? tc_region_read(s, cookie, h, at, b - h)
                                              : tc_region_write(s, cookie, h, at, b - h)));
        s->bytes_sc += b - h;
    }
    return TC_OK;
}

/* The root's cookie for this call once it is exposed (0 before). */
static uint64_t root_cookie(const tc_exchange_t *op)
{
    const tc_cctl_t *r = tc_cctl(op->ctx->shm, op->root);
    /* Acquire: pairs with the root's release in tc_fold_post. */
    if (atomic_load_explicit(&r->post_seq, memory_order_acquire) != op->seq) return 0;
    return atomic_load_explicit(op->kind == TC_XC_SCATTER ? &r->in_cookie : &r->out_cookie,
                                memory_order_relaxed);
}

/* Alltoall: block j of our input into process j's receive buffer, the
 * peers taken from me + 1 on (every process starts with a different one). */
static tc_status_t alltoall_push(tc_exchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    if (!s) return TC_OK; /* alone on our node */
    const int n = s->nlocal, me = s->me;
    const size_t b = op->block;
    if (op->next == 0 && !tc_fold_all_posted(s, op->seq, op->multi ? op->incs : NULL, op->cookies))
        return TC_INPROGRESS;
    for (; op->next < n - 1; op->next++) {
        int j = (me + 1 + op->next) % n;
        int to = op->multi ? op->rank_at[(size_t)m->node * (size_t)n + (size_t)j] : j;
        TC_RETURN_IF_FAILED(tc_counted(
            tc_region_write(s, op->cookies[j], (size_t)m->rank * b, op->in + (size_t)to * b, b)));
    }
    return TC_OK;
}

/* Step @k's message out (coll/pieces): the blocks our node's processes
 * have for slice i of node a + k, packed by single-copy reads out of
 * their send buffers.  A failure (a read refused or out of bounds; one
 * before) is held (op->fail) and the messages from it on go out empty,
 * so the receivers fail on the length instead of waiting. */
static tc_status_t post_send(tc_exchange_t *op, int k)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, ppn = op->ppn, i = m->lrank, a = m->node;
    const size_t b = op->block, P = (size_t)ppn, msg = P * b;
    const int to = op->rank_at[(size_t)((a + k) % N) * P + (size_t)i];
    char *out = op->sstage + (size_t)(k - 1) * msg;
    for (int j = 0; j < ppn && op->fail == TC_OK; j++) {
        if (j == i)
            memcpy(out + (size_t)j * b, op->in + (size_t)to * b, b);
        else
            op->fail =
                tc_counted(tc_region_read(s, op->incs[j], (size_t)to * b, out + (size_t)j * b, b));
    }
    op->sent = k;
    return tc_pieces_post(&op->net, out, op->fail == TC_OK ? msg : 0, to, xc_tag(op), 1, NULL);
}

/* The window of the steps out (TOPOCOLL_ALLTOALL_WINDOW; -1: 2 from 8
 * nodes, else 0, every step at once).  Every step's message in flight at
 * once keeps every link busy, but from 8 nodes the ppn x (N - 1) flows
 * out of each host overflow its link's queue: 8 emulated hosts x 2 at
 * 100 Mbit/s, 64 KiB blocks, 218-260 ms a call with 1 or 2 steps ahead
 * against 390-433 ms with all 7 (native: 318-392); at 4 hosts the window
 * cost 5-20% (docs/scaling.md). */
static int window(const tc_exchange_t *op)
{
    const int w = op->ctx->cfg->alltoall_window;
    return w >= 0 ? w : op->ctx->map.nnodes >= 8 ? 2 : 0;
}

/* Post the messages out that may go (window w: step k's once every
 * step's message in up to k - w has landed, all at once when w is 0 or a
 * failure is held).  The receives are the first pieces, in step order,
 * so op->net.done counts the steps in that landed. */
static tc_status_t post_sends(tc_exchange_t *op)
{
    const int N = op->ctx->map.nnodes, w = window(op);
    const size_t pp = tc_pieces_of((size_t)op->ppn * op->block);
    while (op->sent < N - 1 && (!w || op->fail != TC_OK || op->sent + 1 - w <= 0 ||
                                (size_t)op->net.done >= (size_t)(op->sent + 1 - w) * pp))
        TC_RETURN_IF_FAILED(post_send(op, op->sent + 1));
    return TC_OK;
}

/* Post every step's receive (coll/pieces), check the local processes'
 * send buffers, then the messages out that may go (post_sends; @bad: a
 * failure before, nothing read: every one goes out empty). */
static tc_status_t post_steps(tc_exchange_t *op, tc_status_t bad)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, ppn = op->ppn, i = m->lrank, a = m->node;
    const size_t b = op->block, P = (size_t)ppn, msg = P * b;
    op->posted = 1;
    for (int k = 1; k < N; k++) {
        const int from = op->rank_at[(size_t)((a - k + N) % N) * P + (size_t)i];
        TC_RETURN_IF_FAILED(tc_pieces_post(&op->net, op->rstage + (size_t)(k - 1) * msg, msg, from,
                                           xc_tag(op), 0, NULL));
    }
    /* a local process's send buffer of another length than ours (its
     * block not ours: counts that disagree) would be read at our offsets,
     * wrong: it must be size blocks of ours long */
    const size_t end = (size_t)m->size * b;
    for (int j = 0; j < ppn && bad == TC_OK; j++)
        if (j != i && !tc_region_len_is(s, op->incs[j], end, TC_DIR_FROM_REGION))
            bad = TC_ERR_TRUNCATE;
    if (op->fail == TC_OK) op->fail = bad;
    return post_sends(op);
}

/* The per-slice exchange between nodes (see exchange.h): for every
 * k = 1..N-1 at once, the message to slice i of node a + k and the one
 * from node a - k (post_steps; the messages out held back by
 * TOPOCOLL_ALLTOALL_WINDOW, post_sends); once all have landed, unpack.
 * All steps in flight together keep every link busy (one step at a time
 * left them idle between steps: 1.6x the link bound at 1 MiB blocks,
 * 4 hosts x 2). */
static tc_status_t sliced_exchange(tc_exchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, ppn = op->ppn, a = m->node;
    const size_t b = op->block, P = (size_t)ppn, msg = P * b;
    if (!op->posted) TC_RETURN_IF_FAILED(post_steps(op, TC_OK));
    tc_status_t rc;
    while ((rc = tc_pieces_progress(&op->net)) >= 0 && op->sent < N - 1) {
        const int sent = op->sent;
        if (op->fail == TC_OK) op->fail = op->net.fail;
        TC_RETURN_IF_FAILED(post_sends(op));
        if (op->sent == sent) return TC_INPROGRESS; /* (the window is full) */
    }
    if (rc != TC_OK) return rc;
    if (op->fail == TC_OK) op->fail = op->net.fail;
    if (op->fail != TC_OK) return op->fail;
    for (int k = 1; k < N; k++) {
        const int sn = (a - k + N) % N;
        for (int j = 0; j < ppn; j++)
            memcpy(op->out + (size_t)op->rank_at[(size_t)sn * P + (size_t)j] * b,
                   op->rstage + (size_t)(k - 1) * msg + (size_t)j * b, b);
    }
    return TC_OK;
}

/* The single-copy steps: TC_OK once this process's part is done. */
static tc_status_t sc_work(tc_exchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    if (op->kind == TC_XC_ALLTOALL) {
        tc_status_t rc = alltoall_push(op);
        return rc == TC_OK && op->multi ? sliced_exchange(op) : rc;
    }
    const int me = s->me; /* (Gather, Scatter: one node, a segment) */
    if (me == op->root) return root_share(op);
    const size_t h = share_head(op);
    const int gather = op->kind == TC_XC_GATHER;
    if ((gather || h < op->block) && !op->posted) {
        /* say we took single copy, so an eager root (counts that differ
         * across the eager size) fails instead of waiting for our item,
         * with the buffer whose tail the root copies (share_head);
         * posting waits, as every post does, until nobody reads our
         * previous one */
        if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
        if (h < op->block) {
            struct iovec iov = { gather ? (void *)op->in : op->out, op->block };
            TC_RETURN_IF_FAILED(tc_region_acquire(
                s, op->keep, &iov, 1, gather ? TC_RIGHT_READ : TC_RIGHT_WRITE, &op->cookie));
        }
        tc_fold_post(s, op->seq, gather ? op->cookie : 0, gather ? 0 : op->cookie);
        op->posted = 1;
    }
    uint64_t cookie = root_cookie(op);
    if (!cookie && op->kind == TC_XC_SCATTER && wrote_item(op, op->root))
        return TC_ERR_TRUNCATE; /* (an eager root: our counts differ) */
    if (!cookie) return TC_INPROGRESS;
    /* we copy only our head: the root must share our block, so its buffer
     * must be size of our blocks long, else its count differs and it may
     * not copy our tail */
    if (h < op->block && !tc_region_len_is(s, cookie, op->block * (size_t)s->nlocal,
                                           gather ? TC_DIR_TO_REGION : TC_DIR_FROM_REGION))
        return TC_ERR_TRUNCATE;
    if (op->kind == TC_XC_SCATTER) {
        TC_RETURN_IF_FAILED(
            tc_counted(tc_region_read(s, cookie, (size_t)me * op->block, op->out, h)));
    } else {
        TC_RETURN_IF_FAILED(
            tc_counted(tc_region_write(s, cookie, (size_t)me * op->block, op->in, h)));
    }
    return TC_OK;
}

static tc_status_t steps(tc_exchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_status_t rc;
    switch (op->state) {
    case ST_START:
        if ((rc = expose(op)) != TC_OK) return rc;
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        if ((rc = sc_work(op)) != TC_OK) return rc;
        if (s) tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* An exposed buffer is written or read by the others until they
         * have finished. */
        if (op->cookie && !tc_shm_all_done(s, op->seq)) return TC_INPROGRESS;
        op->state = ST_DONE;
        /* one that failed writing or reading ours (counts that differ:
         * our buffer is shorter than its) fails us too, and so does a
         * Gather writer that took the eager path (its count differs) */
        if (op->cookie && op->kind == TC_XC_GATHER && s->me == op->root)
            for (int i = 0; i < s->nlocal; i++)
                if (i != s->me && wrote_item(op, i)) return TC_ERR_TRUNCATE;
        if (op->cookie) return tc_cctl_peer_failed(s, op->seq);
        /* fall through */
    default: return TC_OK;
    }
}

/* steps, where a failure of ours on one node after we exposed a buffer
 * (a count that differs) is said to the local processes at once and
 * returned once none of them copies into or out of it any more. */
tc_status_t tc_exchange_work(tc_exchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    if (op->eager) return eager_work(op);
    if (op->multi) return steps(op);
    if (op->fail == TC_OK) {
        const tc_status_t rc = steps(op);
        if (rc >= 0 || !op->cookie || op->state == ST_DONE) return rc;
        op->fail = tc_cctl_fail_exposed(s, op->seq, rc);
    }
    return tc_shm_all_done(s, op->seq) ? op->fail : TC_INPROGRESS;
}

tc_status_t tc_exchange_drain(tc_exchange_t *op)
{
    if (op->ctx->map.nnodes < 2) return TC_OK; /* (nothing between nodes) */
    if (!op->multi || !op->net.p || !op->sstage)
        return TC_ERR_NOMEM; /* (its init failed: nothing of it went) */
    if (!op->posted) TC_RETURN_IF_FAILED(post_steps(op, TC_ERR_REMOTE)); /* (out empty) */
    if (op->fail == TC_OK) op->fail = TC_ERR_REMOTE; /* (the steps not out yet: empty) */
    TC_RETURN_IF_FAILED(post_sends(op));
    return tc_pieces_progress(&op->net);
}

void tc_exchange_fini(tc_exchange_t *op)
{
    tc_region_release(op->ctx->shm, op->keep, op->cookie, op->state == ST_DONE);
    tc_region_release(op->ctx->shm, op->keep, op->in_cookie, op->state == ST_DONE);
    op->cookie = op->in_cookie = 0;
    tc_pieces_fini(&op->net); /* (a failure may leave some in flight) */
    op->posted = 0;
    free(op->cookies);
    free(op->incs);
    free(op->rank_at);
    op->cookies = op->incs = NULL;
    op->rank_at = NULL;
    op->sstage = op->rstage = NULL;
}
