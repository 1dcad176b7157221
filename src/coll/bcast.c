/* coll/bcast -- see bcast.h. */
#include "bcast.h"

#include "../base/sync.h"
#include "../xfer/region.h"

#include <string.h>

#define TC_TAG_BCAST 0x7c01

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };

size_t tc_bcast_segsize(const tc_ctx_t *ctx, size_t bytes, int root)
{
    const tc_nodemap_t *m = &ctx->map;
    if (ctx->cfg->bcast_segsize) return ctx->cfg->bcast_segsize;
    /* A pipeline needs something to overlap: forwarding (a tree deeper than
     * one hop) or readers on the receiving node.  Without either, segments
     * only add per-message costs (measured: 0.45x native at 32 KiB with one
     * process per virtual node).  Every producer decides alike: the inputs
     * are global. */
    if (m->nnodes == 2 && m->size_of[1 - m->node_of[root]] == 1) return bytes;
    /* HierKNEM Table 1 (IB20G) as the floor, but at most ~8 segments: an
     * 8-stage pipeline keeps the overlap, and per-message costs of the
     * underlying MPI dominate beyond (measured with one process per
     * virtual node: 64 KiB segments cost 20% at 16 MiB, bytes/8 is at par). */
    size_t table1 = bytes < (64 << 10) ? (8 << 10) : (64 << 10);
    size_t eighth = ((bytes / 8) + 4095) & ~(size_t)4095;
    return eighth > table1 ? eighth : table1;
}

int tc_bcast_uses_single_copy(const tc_ctx_t *ctx, size_t bytes)
{
    return ctx->shm && ctx->shm->single_copy && bytes > ctx->cfg->bcast_cico_max;
}

/* The communicator rank that represents node @n in the inter-node tree. */
static int node_rep(const tc_nodemap_t *m, int n, int root)
{
    return n == m->node_of[root] ? root : m->leader_of[n];
}

void tc_bcast_init(tc_bcast_t *op, tc_ctx_t *ctx, void *buf, size_t bytes, int root)
{
    const tc_nodemap_t *m = &ctx->map;
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->buf = buf;
    op->bytes = bytes;
    op->root = root;
    op->seq = ++ctx->seq;
    int rep = node_rep(m, m->node, root);
    op->producer = m->lrank_of[rep];
    op->am_producer = rep == m->rank;
    op->sc = tc_bcast_uses_single_copy(ctx, bytes);
    op->parent = -1;
    op->state = ST_START;
    /* Root share: one node only (a leader with children keeps forwarding
     * first, as in HierKNEM), single copy, large enough to pay the extra
     * region and flag. */
    if (op->sc && m->nnodes == 1 && bytes >= ctx->cfg->bcast_share_min)
        op->share = (bytes / (size_t)m->lsize) & ~(size_t)4095;
    if (!op->am_producer) return;

    /* Binomial tree over nodes, numbered relative to the root's node. */
    int nn = m->nnodes, vn = (m->node - m->node_of[root] + nn) % nn, mask = 1;
    while (mask < nn) {
        if (vn & mask) {
            op->parent = node_rep(m, (vn - mask + m->node_of[root]) % nn, root);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)        /* biggest subtree first */
        if (vn + mask < nn && op->nchild < TC_BCAST_MAXCHILD)
            op->child[op->nchild++] = node_rep(m, (vn + mask + m->node_of[root]) % nn, root);
    op->seg = tc_bcast_segsize(ctx, bytes, root);
    op->nseg = nn > 1 ? (bytes + op->seg - 1) / op->seg : 0;   /* one node: no network */
    op->net_bytes = op->parent < 0 ? bytes : 0;
}

static size_t seg_len(const tc_bcast_t *op, size_t i)
{
    size_t off = i * op->seg;
    return op->bytes - off < op->seg ? op->bytes - off : op->seg;
}

/* Inter-node forwarding: receive segments from the parent into buf (a
 * window of TC_BCAST_WINDOW), send each landed one to the children.
 * Returns MPI_SUCCESS or an error; never blocks. */
static int net_progress(tc_bcast_t *op)
{
    MPI_Comm pc = op->ctx->pcomm;
    int flag, rc;
    const int W = TC_BCAST_WINDOW;

    size_t before;
    do {
        before = op->recv_posted + op->recv_done + op->send_done;
        if (op->parent >= 0) {
            while (op->recv_posted < op->nseg && op->recv_posted - op->send_done < (size_t)W) {
                size_t i = op->recv_posted;
                rc = PMPI_Irecv(op->buf + i * op->seg, (int)seg_len(op, i), MPI_BYTE, op->parent,
                                TC_TAG_BCAST, pc, &op->rreq[i % W]);
                if (rc != MPI_SUCCESS) return rc;
                op->recv_posted++;
            }
        } else {
            op->recv_posted = op->nseg;   /* the root has every segment */
        }
        while (op->recv_done < op->recv_posted && op->recv_done - op->send_done < (size_t)W) {
            size_t i = op->recv_done;
            if (op->parent >= 0) {
                rc = PMPI_Test(&op->rreq[i % W], &flag, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS) return rc;
                if (!flag) break;
            }
            for (int c = 0; c < op->nchild; c++) {
                rc = PMPI_Isend(op->buf + i * op->seg, (int)seg_len(op, i), MPI_BYTE, op->child[c],
                                TC_TAG_BCAST, pc, &op->sreq[i % W][c]);
                if (rc != MPI_SUCCESS) return rc;
            }
            op->recv_done++;
            if (op->parent >= 0) op->net_bytes += seg_len(op, i);
        }
        while (op->send_done < op->recv_done) {
            /* completed requests become MPI_REQUEST_NULL, so re-testing is cheap */
            MPI_Request *r = op->sreq[op->send_done % W];
            int all = 1;
            for (int c = 0; c < op->nchild && all; c++) {
                rc = PMPI_Test(&r[c], &flag, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS) return rc;
                all = flag;
            }
            if (!all) break;
            op->send_done++;
        }
    } while (op->recv_posted + op->recv_done + op->send_done != before);
    return MPI_SUCCESS;
}

/* Lowest CICO progress of the other local processes (bytes). */
static size_t min_consumed(const tc_shm_t *s)
{
    uint64_t lo = UINT64_MAX;
    for (int i = 0; i < s->nlocal; i++) {
        if (i == s->me) continue;
        /* Acquire: pairs with the consumer's release after it read a slot,
         * so our overwrite of that slot happens after its reads. */
        uint64_t v = atomic_load_explicit(&s->ctl[i].cons_bytes, memory_order_acquire);
        if (v < lo) lo = v;
    }
    return (size_t)lo;
}

/* Producer: make newly landed bytes visible to the node. */
static void publish(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_ctl_t *me = &s->ctl[s->me];
    if (op->sc) {
        if (op->net_bytes > op->published) {
            op->published = op->net_bytes;
            /* Release: the segment's bytes (landed by MPI in our buffer)
             * happen-before a reader's acquire of ready_bytes. */
            atomic_store_explicit(&me->ready_bytes, op->published, memory_order_release);
        }
        return;
    }
    const size_t slot = s->cico_slot, ns = (size_t)s->cico_slots;
    while (op->published < op->bytes) {
        size_t k = op->published / slot;
        size_t end = (k + 1) * slot < op->bytes ? (k + 1) * slot : op->bytes;
        if (op->net_bytes < end) break;                          /* not landed yet */
        if (k >= ns && min_consumed(s) < (k - ns + 1) * slot) break;  /* slot busy */
        memcpy(tc_shm_cico(s, s->me, (int)(k % ns)), op->buf + op->published, end - op->published);
        s->bytes_cico += end - op->published;
        op->published = end;
        /* Release: the slot's contents happen-before the reader's acquire. */
        atomic_store_explicit(&me->ready_bytes, op->published, memory_order_release);
    }
}

/* Non-producer: copy what the producer has published. */
static int consume(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_ctl_t *p = &s->ctl[op->producer];
    /* Acquire: pairs with the producer's release of ready_seq in start,
     * after which its cookie and ready_bytes (reset) are visible. */
    if (atomic_load_explicit(&p->ready_seq, memory_order_acquire) != op->seq) return 0;
    size_t avail = (size_t)atomic_load_explicit(&p->ready_bytes, memory_order_acquire);
    if (avail > op->bytes - op->share) avail = op->bytes - op->share;   /* the tail is the root's */
    if (avail <= op->consumed) return 0;
    if (op->sc) {
        uint64_t cookie = atomic_load_explicit(&p->cookie, memory_order_relaxed);
        long long n = tc_region_read(s, cookie, op->consumed, op->buf + op->consumed, avail - op->consumed);
        if (n < 0) return MPI_ERR_INTERN;
        op->consumed = avail;
        return 0;
    }
    const size_t slot = s->cico_slot, ns = (size_t)s->cico_slots;
    while (op->consumed < avail) {
        size_t k = op->consumed / slot;
        size_t end = (k + 1) * slot < avail ? (k + 1) * slot : avail;
        memcpy(op->buf + op->consumed, tc_shm_cico(s, op->producer, (int)(k % ns)) + (op->consumed - k * slot),
               end - op->consumed);
        s->bytes_cico += end - op->consumed;
        op->consumed = end;
        /* Release: our reads of the slot happen-before the producer reuses it. */
        atomic_store_explicit(&s->ctl[s->me].cons_bytes, op->consumed, memory_order_release);
    }
    return 0;
}

/* Root share: write the tail of each receiver's buffer, in local-rank
 * order, as each one exposes it (never waits). */
static int write_shares(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    while (op->share_next < s->nlocal) {
        int i = op->share_next;
        if (i != s->me) {
            tc_ctl_t *c = &s->ctl[i];
            /* Acquire: pairs with the receiver's release of recv_seq. */
            if (atomic_load_explicit(&c->recv_seq, memory_order_acquire) != op->seq) return MPI_SUCCESS;
            struct iovec l = { op->buf + (op->bytes - op->share), op->share };
            if (tc_region_copy(s, atomic_load_explicit(&c->recv_cookie, memory_order_relaxed), 0, &l, 1,
                               TC_DIR_TO_REGION) != (long long)op->share)
                return MPI_ERR_INTERN;
            /* Release: our writes into its buffer before it reads the flag. */
            atomic_store_explicit(&s->inbox[i].share_seq, op->seq, memory_order_release);
        }
        op->share_next++;
    }
    return MPI_SUCCESS;
}

int tc_bcast_work(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    int rc;

    switch (op->state) {
    case ST_START:
        if (op->am_producer && s) {
            /* Our ready words and CICO slots may still be read by a process
             * that has not finished the previous collective. */
            if (!tc_shm_all_done(s, op->seq - 1)) return TC_OP_PENDING;
            tc_ctl_t *me = &s->ctl[s->me];
            if (op->sc) {
                struct iovec iov = { op->buf, op->bytes };
                if (tc_region_create(s, &iov, 1, TC_RIGHT_READ, &op->cookie) != 0) return MPI_ERR_INTERN;
                atomic_store_explicit(&me->cookie, op->cookie, memory_order_relaxed);
            }
            atomic_store_explicit(&me->ready_bytes, 0, memory_order_relaxed);
            /* Release: cookie and the reset ready_bytes before ready_seq. */
            atomic_store_explicit(&me->ready_seq, op->seq, memory_order_release);
        } else if (op->share) {
            tc_ctl_t *me = &s->ctl[s->me];
            struct iovec iov = { op->buf + (op->bytes - op->share), op->share };
            if (tc_region_create(s, &iov, 1, TC_RIGHT_WRITE, &op->recv_cookie) != 0) return MPI_ERR_INTERN;
            atomic_store_explicit(&me->recv_cookie, op->recv_cookie, memory_order_relaxed);
            /* Release: the cookie before recv_seq. */
            atomic_store_explicit(&me->recv_seq, op->seq, memory_order_release);
        }
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        if (op->am_producer) {
            if (op->ctx->map.nnodes > 1 && (rc = net_progress(op)) != MPI_SUCCESS) return rc;
            if (s) publish(op);
            if (op->share && (rc = write_shares(op)) != MPI_SUCCESS) return rc;
            if (op->send_done < op->nseg || (s && op->published < op->bytes) ||
                (op->share && op->share_next < s->nlocal))
                return TC_OP_PENDING;
        } else {
            if ((rc = consume(op)) != 0) return rc;
            if (op->consumed < op->bytes - op->share) return TC_OP_PENDING;
            /* Acquire: pairs with the producer's release after its write. */
            if (op->share && atomic_load_explicit(&s->inbox[s->me].share_seq, memory_order_acquire) != op->seq)
                return TC_OP_PENDING;
        }
        if (s) tc_shm_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* A single-copy producer's buffer is read by the others until they ack. */
        if (op->am_producer && op->sc && !tc_shm_all_done(s, op->seq)) return TC_OP_PENDING;
        op->state = ST_DONE;
        /* fall through */
    default:
        return TC_OP_DONE;
    }
}

void tc_bcast_fini(tc_bcast_t *op)
{
    if (op->cookie) tc_region_destroy(op->ctx->shm, op->cookie);
    if (op->recv_cookie) tc_region_destroy(op->ctx->shm, op->recv_cookie);
    op->cookie = op->recv_cookie = 0;
}
