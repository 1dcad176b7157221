/* coll/bcast -- see bcast.h. */
#include "bcast.h"
#include "plan.h"

#include "../base/sync.h"
#include "../xfer/region.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tags.h"

_Static_assert(TC_BCAST_MAXPART >= TC_RAIL_MAX, "a part per rail");
_Static_assert(TC_BCAST_OWN_INLINE <= TC_BCAST_INLINE, "a block's first segment fits the stage");

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };

int tc_bcast_uses_single_copy(const tc_ctx_t *ctx, size_t bytes)
{
    return ctx->shm && ctx->shm->single_copy && bytes > ctx->cfg->bcast_cico_max;
}

int tc_bcast_rails(const tc_ctx_t *ctx, size_t bytes)
{
    const tc_nodemap_t *m = &ctx->map;
    if (m->nnodes < 2 || !tc_bcast_uses_single_copy(ctx, bytes)) return 1;
    return tc_lead_rails_used(m->nrails, bytes, ctx->cfg->multileader_min);
}

/* The communicator rank that represents node @n in rail @r's tree: the
 * root on its node for rail 0, else the node's rail leader (topo/nic). */
static int node_rep(const tc_nodemap_t *m, int n, int root, int r)
{
    if (n == m->node_of[root] && (r == 0 || m->rail_of[n * TC_RAIL_MAX + r] == root)) return root;
    return m->rail_of[n * TC_RAIL_MAX + r];
}

/* Local rank @i's source of part @r (see tc_lead_source): -1 for the
 * network representative of a node without the root, and for the root. */
static int part_source(const tc_bcast_t *op, int i, int r, int root_node)
{
    const tc_nodemap_t *m = &op->ctx->map;
    int producer =
        root_node ? m->lrank_of[op->root] : m->lrank_of[node_rep(m, m->node, op->root, r)];
    return tc_lead_source(i, producer, op->relays ? m->dom_of : NULL,
                          op->relays ? m->dom_leader : NULL);
}

/* Part @r of @nparts of a broadcast of @bytes: R contiguous ranges, page
 * aligned. */
static void part_range(size_t bytes, int nparts, int r, size_t *off, size_t *len)
{
    size_t per = nparts > 1 ? ((bytes / (size_t)nparts) + 4095) & ~(size_t)4095 : bytes;
    *off = (size_t)r * per < bytes ? (size_t)r * per : bytes;
    *len = r == nparts - 1 ? bytes - *off : (*off + per < bytes ? per : bytes - *off);
}

/* Part @p's (rail @r's) place in the tree of nodes and its segments, for
 * its length p->len: the same inputs give the same tree on every node. */
static void net_layout(tc_bcast_t *op, tc_bcast_part_t *p, int r)
{
    const tc_ctx_t *ctx = op->ctx;
    const tc_nodemap_t *m = &ctx->map;
    const int root = op->root;
    int nn = m->nnodes, rn = m->node_of[root], vn = (m->node - rn + nn) % nn, mask = 1;
    p->parent = -1;
    p->nchild = 0;
    if (tc_plan_chain(ctx, TC_CI_BCAST, p->len)) {
        /* Chain of nodes from the root's: the root's node sends the
         * message once, every node forwards each segment as it lands. */
        if (vn > 0) p->parent = node_rep(m, (vn - 1 + rn) % nn, root, r);
        if (vn + 1 < nn) p->child[p->nchild++] = node_rep(m, (vn + 1 + rn) % nn, root, r);
    } else {
        /* Binomial tree over nodes, numbered relative to the root's node. */
        while (mask < nn) {
            if (vn & mask) {
                p->parent = node_rep(m, (vn - mask + rn) % nn, root, r);
                break;
            }
            mask <<= 1;
        }
        for (mask >>= 1; mask > 0; mask >>= 1) /* biggest subtree first */
            if (vn + mask < nn && p->nchild < TC_BCAST_MAXCHILD)
                p->child[p->nchild++] = node_rep(m, (vn + mask + rn) % nn, root, r);
    }
    p->seg = tc_plan_bcast_seg(ctx, p->len, root);
    p->nseg = p->len ? (p->len + p->seg - 1) / p->seg : 0;
}

/* Block @b of @nb of a broadcast of @bytes under the block owners: the
 * message's 64-byte lines spread evenly, contiguous, in order (empty
 * blocks only when it has fewer lines than blocks). */
static void block_range(size_t bytes, int nb, int b, size_t *off, size_t *len)
{
    const size_t lines = (bytes + 63) / 64, lo = lines * (size_t)b / (size_t)nb * 64,
                 hi = lines * (size_t)(b + 1) / (size_t)nb * 64;
    *off = lo < bytes ? lo : bytes;
    *len = (hi < bytes ? hi : bytes) - *off;
}

/* Block @p's tree and segments, for its length p->len: from the root to
 * the block's owner (node b + 1 from the root's), from the owner to the
 * N - 2 others, each owner starting with the next owner's node (so that
 * their first segments go to different nodes, not all into one). */
static void block_layout(tc_bcast_t *op, tc_bcast_part_t *p)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int nn = m->nnodes, rn = m->node_of[op->root], b = p->block;
    const int vn = (m->node - rn + nn) % nn, owner = node_rep(m, (b + 1 + rn) % nn, op->root, 0);
    p->parent = -1;
    p->nchild = 0;
    if (vn == 0)
        p->child[p->nchild++] = owner;
    else if (vn != b + 1)
        p->parent = owner;
    else {
        p->parent = op->root;
        for (int k = 1; k < nn - 1; k++) /* (nn - 2 <= TC_BCAST_MAXCHILD: coll/plan) */
            p->child[p->nchild++] = node_rep(m, (rn + 1 + (b + k) % (nn - 1)) % nn, op->root, 0);
    }
    size_t seg = (p->len + TC_BCAST_OWN_SEGS - 1) / TC_BCAST_OWN_SEGS;
    p->seg = seg > TC_BCAST_OWN_PIECE ? seg : TC_BCAST_OWN_PIECE;
    p->nseg = (p->len + p->seg - 1) / p->seg;
}

/* The block owners (coll/plan tc_plan_bcast_net): this leader's place in
 * each of the N - 1 blocks' trees. */
static tc_status_t blocks_init(tc_bcast_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    op->nblk = m->nnodes - 1; /* (the mode, even when the blocks cannot be had) */
    if (!(op->blk = malloc((size_t)op->nblk * sizeof *op->blk))) return TC_ERR_NOMEM;
    for (int b = 0; b < op->nblk; b++) {
        tc_bcast_part_t *q = &op->blk[b];
        memset(q, 0, offsetof(tc_bcast_part_t, child));
        q->block = b;
        q->rep = 1;
        q->src = -1;
        block_range(op->bytes, op->nblk, b, &q->off, &q->len);
        if (m->rank == op->root) q->have = q->len;
        block_layout(op, q);
    }
    return TC_OK;
}

tc_status_t tc_bcast_init(tc_bcast_t *op, tc_ctx_t *ctx, void *buf, size_t bytes, int root, int alt)
{
    const tc_nodemap_t *m = &ctx->map;
    memset(op, 0, offsetof(tc_bcast_t, part)); /* the parts in use: below */
    op->ctx = ctx;
    op->buf = buf;
    op->bytes = bytes;
    op->root = root;
    op->seq = ++ctx->seq;
    op->sc = tc_bcast_uses_single_copy(ctx, bytes);
    op->sc = !tc_tune_choose(&op->tune, ctx, TC_TUNE_BCAST, bytes, !op->sc, op->seq);
    op->relays = tc_ctx_relays(ctx, bytes, op->sc);
    op->nparts = tc_bcast_rails(ctx, bytes);
    op->state = ST_START;
    const int root_node = m->node == m->node_of[root];
    op->producer = m->lrank_of[node_rep(m, m->node, root, 0)];
    /* Root share: one node only (a leader with children keeps forwarding
     * first, as in HierKNEM), single copy, large enough to pay the extra
     * region and flag, no relays. */
    if (op->sc && m->nnodes == 1 && !op->relays && bytes >= ctx->cfg->bcast_share_min)
        op->share = (bytes / (size_t)m->lsize) & ~(size_t)4095;
    const int owners = m->nnodes > 2 && tc_plan_bcast_net(ctx, bytes, alt) == TC_ALG_OWNERS;

    for (int r = 0; r < op->nparts; r++) {
        tc_bcast_part_t *p = &op->part[r];
        memset(p, 0, offsetof(tc_bcast_part_t, child));
        part_range(bytes, op->nparts, r, &p->off, &p->len);
        p->block = -1;
        p->parent = -1;
        int rep = node_rep(m, m->node, root, r);
        p->rep = rep == m->rank;
        p->src = m->lsize > 1 ? part_source(op, m->lrank, r, root_node) : -1;
        if (p->rep && !root_node) p->src = -1; /* from the network */
        if (m->rank == root) p->have = p->len;
        for (int i = 0; i < m->lsize && !op->am_source; i++)
            op->am_source = part_source(op, i, r, root_node) == m->lrank;
        if (p->rep && m->nnodes > 1 && !owners) net_layout(op, p, r);
    }
    /* (owners: one rail, coll/plan) */
    if (owners && op->part[0].rep) TC_RETURN_IF_FAILED(blocks_init(op));
    /* CICO: one producer feeds everybody through its slots. */
    if (!op->sc) op->am_source = op->producer == m->lrank && m->lsize > 1;
    /* Eager: same inputs on every process, so the same runs everywhere. */
    if (!op->sc && ctx->shm && m->lsize > 1 && op->tune.bucket < 0 && bytes > 0 &&
        bytes <= ctx->cfg->bcast_cico_max && bytes <= ctx->cfg->cico_slot && op->nparts == 1) {
        op->eager = 1;
        tc_ctx_eager(ctx, op->seq, &op->eager_slot, &op->eager_wait);
    }
    return TC_OK;
}

static tc_status_t net_progress(tc_bcast_t *op, tc_bcast_part_t *p);
static tc_status_t net_over(tc_bcast_part_t *p);
static tc_status_t leaders_progress(tc_bcast_t *op, tc_bcast_part_t *p);
static tc_status_t leaders_over(tc_bcast_t *op, tc_bcast_part_t *p);

/* Eager: the node's producer (the root, or the leader that receives from
 * the parent node and forwards to the child nodes at once) copies into
 * its slot and tags it; the others copy out once the tag is theirs.  Tags
 * only grow (the producer rewrites slot i for call s + E only after
 * everyone on the node finished s): a newer tag than ours means the
 * protocol broke, an error rather than a wait forever. */
static tc_status_t eager_work(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    char *slot = tc_shm_item_data(s, op->producer, op->eager_slot, op->bytes);
    tc_bcast_part_t *p = &op->part[0];
    const int net = s->me == op->producer && op->ctx->map.nnodes > 1;
    tc_status_t rc;
    if (net && (rc = leaders_progress(op, p)) != TC_OK) return rc;
    if (op->err != TC_OK) return op->err; /* counts differ across nodes */
    if (op->state == ST_START) {
        if (s->me == op->producer) {
            if (p->have < op->bytes ||
                !tc_shm_item_put(s, op->buf, op->bytes, op->eager_slot, op->seq, op->eager_wait))
                return TC_INPROGRESS;
            s->bytes_cico += op->bytes;
        }
        op->state = ST_WORK;
    }
    if (op->state == ST_WORK) {
        if (s->me != op->producer) {
            /* the pieces published so far (acquire: their bytes are visible) */
            size_t a = tc_shm_item_avail(s, op->producer, op->eager_slot, op->seq, op->bytes);
            if (a >= TC_SHM_ITEM_OTHERSIZE) return tc_shm_item_error(a);
            /* The producer runs this call as a non-eager one: its count is
             * above the eager sizes and ours is not (an erroneous call). */
            if (a == 0 && atomic_load_explicit(&tc_cctl(s, op->producer)->ready_seq,
                                               memory_order_acquire) == op->seq)
                return TC_ERR_TRUNCATE;
            if (a > op->eager_got) {
                memcpy(op->buf + op->eager_got, slot + op->eager_got, a - op->eager_got);
                s->bytes_cico += a - op->eager_got;
                op->eager_got = a;
            }
            if (op->eager_got < op->bytes) return TC_INPROGRESS;
        } else if (net && (rc = leaders_over(op, p)) != TC_OK) {
            return rc; /* the child nodes' sends still read our buffer */
        }
        /* Release: our reads of the slot before the producer may reuse it. */
        tc_cctl_finish(s, op->seq);
        op->state = ST_DONE;
    }
    return TC_OK;
}

static size_t seg_len(const tc_bcast_part_t *p, size_t i)
{
    size_t off = i * p->seg;
    return p->len - off < p->seg ? p->len - off : p->seg;
}

/* Where segment @i of part @p lands or is sent from: buf, or the scratch
 * ring of a failed call whose counts differ. */
static char *seg_at(const tc_bcast_t *op, const tc_bcast_part_t *p, size_t i)
{
    if (p->ring) return p->ring + (i % TC_BCAST_WINDOW) * p->seg;
    return op->buf + p->off + i * p->seg;
}

/* The sender's count differs from ours (an erroneous call): fail, but take
 * part @p in the sender's layout, @total bytes, into a scratch ring (the
 * same tree of nodes when the size thresholds agree: ctx.h), and forward
 * it, so that every send of the call completes. */
static tc_status_t relay_foreign(tc_bcast_t *op, tc_bcast_part_t *p, uint64_t total)
{
    if (total == 0 || total > (uint64_t)INT64_MAX) return TC_ERR_PROTO;
    if (p->block >= 0) { /* (the block owners: the sender's block b) */
        block_range((size_t)total, op->nblk, p->block, &p->off, &p->len);
        block_layout(op, p);
    } else {
        int r = (int)(p - op->part), nparts = tc_bcast_rails(op->ctx, (size_t)total);
        if (r >= nparts) return TC_ERR_PROTO;
        part_range((size_t)total, nparts, r, &p->off, &p->len);
        net_layout(op, p, r);
    }
    size_t n = p->nseg < TC_BCAST_WINDOW ? p->nseg : TC_BCAST_WINDOW;
    if (n && !(p->ring = malloc(n * p->seg))) return TC_ERR_NOMEM;
    if (op->err == TC_OK) op->err = TC_ERR_TRUNCATE;
    return TC_OK;
}

/* The segments of part @p that travel in its first message: all of them
 * when the part fits TC_BCAST_INLINE, else none (the same for sender and
 * receiver once the header gave the sender's layout); a block's first
 * (below).  A rail's part never some: a first
 * message above the transport's eager size goes by rendezvous, and over a
 * stream (TCP) the rest of it would queue behind every eager segment sent
 * after it, so each node would hold the pipeline for a whole part. */
static size_t inline_segs(const tc_bcast_part_t *p)
{
    /* A block's segments pipeline through its owner: its first (at most
     * TC_BCAST_OWN_INLINE, within TCP's eager size) rides with the
     * header, one message fewer on each of the N - 1 links an owner
     * feeds. */
    if (p->block >= 0) return p->nseg && p->seg <= TC_BCAST_OWN_INLINE ? 1 : 0;
    return p->len <= TC_BCAST_INLINE ? p->nseg : 0;
}

/* Part @p's stage for its first message: the header and up to
 * TC_BCAST_INLINE bytes, in the context's cached buffer (one operation
 * runs on a context at a time). */
static char *stage_of(tc_bcast_t *op, const tc_bcast_part_t *p)
{
    const size_t each = sizeof(tc_bcast_hdr_t) + TC_BCAST_INLINE;
    const int i = p->block >= 0 ? p->block : (int)(p - op->part);
    char *b = tc_ctx_buf(op->ctx, TC_BUF_STAGE, each * (size_t)(op->nblk ? op->nblk : op->nparts));
    return b ? b + (size_t)i * each : NULL;
}

/* The first message from the parent node (tc_bcast_hdr_t, bcast.h): posted
 * with room for the largest inline segment, so never truncated; checked,
 * segment 0 taken out, and forwarded as it came to the child nodes. */
static tc_status_t first_recv(tc_bcast_t *op, tc_bcast_part_t *p)
{
    MPI_Comm pc = op->ctx->pcomm;
    const int cap = (int)(sizeof(tc_bcast_hdr_t) + TC_BCAST_INLINE);
    MPI_Status st;
    int flag, n = 0;
    if (p->first == 0) {
        if (!(p->stage = stage_of(op, p))) return TC_ERR_NOMEM;
        TC_RETURN_IF_FAILED(tc_status_mpi(
            PMPI_Irecv(p->stage, cap, MPI_BYTE, p->parent, TC_TAG_BCAST, pc, &p->hreq)));
        p->first = 1;
    }
    TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&p->hreq, &flag, &st)));
    if (!flag) return TC_OK;
    PMPI_Get_count(&st, MPI_BYTE, &n);
    tc_bcast_hdr_t h;
    if (n < (int)sizeof h) return TC_ERR_PROTO;
    memcpy(&h, p->stage, sizeof h);
    if (h.magic != TC_BCAST_MAGIC) return TC_ERR_PROTO;
    if (h.total != op->bytes) TC_RETURN_IF_FAILED(relay_foreign(op, p, h.total));
    size_t inl = (size_t)n - sizeof h, k = inline_segs(p);
    if (inl && inl != (k * p->seg < p->len ? k * p->seg : p->len)) return TC_ERR_PROTO;
    if (inl) {
        p->inl = k;
        for (size_t i = 0; i < k && i < TC_BCAST_WINDOW; i++)
            p->rreq[i] = MPI_REQUEST_NULL; /* (these segments are here: no receive) */
        p->recv_posted = k;
        if (!p->ring) memcpy(op->buf + p->off, p->stage + sizeof h, inl);
    }
    for (int c = 0; c < p->nchild; c++)
        TC_RETURN_IF_FAILED(tc_status_mpi(
            PMPI_Isend(p->stage, n, MPI_BYTE, p->child[c], TC_TAG_BCAST, pc, &p->hsreq[c])));
    p->first = 2;
    return TC_OK;
}

/* The first message to the child nodes, from a process with the data (the
 * root, or a rail leader of the root's node once it has segment 0; while
 * draining a failure, the header alone when it has not). */
static tc_status_t first_send(tc_bcast_t *op, tc_bcast_part_t *p)
{
    const tc_bcast_hdr_t h = { TC_BCAST_MAGIC, op->bytes };
    size_t k = inline_segs(p), s0 = k * p->seg < p->len ? k * p->seg : p->len;
    if (k && p->have < s0) {
        if (!op->failing) return TC_OK; /* those segments not here yet */
        k = s0 = 0;
    }
    size_t n = sizeof h + s0;
    if (!(p->stage = stage_of(op, p))) return TC_ERR_NOMEM;
    memcpy(p->stage, &h, sizeof h);
    if (s0) memcpy(p->stage + sizeof h, op->buf + p->off, s0);
    for (int c = 0; c < p->nchild; c++)
        TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Isend(p->stage, (int)n, MPI_BYTE, p->child[c],
                                                     TC_TAG_BCAST, op->ctx->pcomm, &p->hsreq[c])));
    p->inl = k;
    p->first = 2;
    return TC_OK;
}

/* Segment @i's receive completed: its size checked (the sender's layout is
 * ours, so only an empty segment, a failed node above, differs); *@empty
 * says so. */
static tc_status_t seg_landed(tc_bcast_t *op, tc_bcast_part_t *p, size_t i, int *flag, int *empty)
{
    MPI_Status st;
    int n = 0;
    *empty = 0;
    if (i < p->inl) {
        *flag = 1;
        return TC_OK;
    }
    TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&p->rreq[i % TC_BCAST_WINDOW], flag, &st)));
    if (!*flag) return TC_OK;
    PMPI_Get_count(&st, MPI_BYTE, &n);
    if (n == 0) {
        *empty = 1;
        p->empty = 1;
        if (op->err == TC_OK) op->err = TC_ERR_REMOTE;
        return TC_OK;
    }
    return (size_t)n == seg_len(p, i) ? TC_OK : TC_ERR_PROTO;
}

/* Inter-node forwarding of one part: receive segments from the parent
 * into buf (a window of TC_BCAST_WINDOW), send each segment present to
 * the children.  Without a parent a segment is present once the part's
 * bytes cover it (the root; or a rail leader of the root's node, as it
 * reads them from the root).  The first message goes before the segments
 * (first_recv, first_send).  Returns TC_OK or an error; never blocks. */
static tc_status_t net_progress(tc_bcast_t *op, tc_bcast_part_t *p)
{
    MPI_Comm pc = op->ctx->pcomm;
    int flag, empty, rc;
    const int W = TC_BCAST_WINDOW;

    if (p->first < 2) {
        rc = p->parent >= 0 ? first_recv(op, p) : first_send(op, p);
        if (rc != TC_OK || p->first < 2) return rc;
    }
    size_t before;
    do {
        before = p->recv_posted + p->recv_done + p->send_done;
        if (p->parent >= 0) {
            while (p->recv_posted < p->nseg && p->recv_posted - p->send_done < (size_t)W) {
                size_t i = p->recv_posted;
                rc = tc_status_mpi(PMPI_Irecv(seg_at(op, p, i), (int)seg_len(p, i), MPI_BYTE,
                                              p->parent, TC_TAG_BCAST, pc, &p->rreq[i % W]));
                if (rc != TC_OK) return rc;
                p->recv_posted++;
            }
        } else if (op->failing) {
            p->recv_posted = p->nseg; /* what is missing goes empty */
        } else {
            p->recv_posted = p->have / p->seg + (p->have == p->len ? (p->len % p->seg != 0) : 0);
            if (p->recv_posted > p->nseg) p->recv_posted = p->nseg;
        }
        while (p->recv_done < p->recv_posted && p->recv_done - p->send_done < (size_t)W) {
            size_t i = p->recv_done;
            if (p->parent >= 0) {
                if ((rc = seg_landed(op, p, i, &flag, &empty)) != TC_OK) return rc;
                if (!flag) break;
            } else {
                empty = p->have < i * p->seg + seg_len(p, i); /* (failing only) */
            }
            for (int c = 0; c < p->nchild; c++) {
                if (i < p->inl) { /* sent with the first message */
                    p->sreq[i % W][c] = MPI_REQUEST_NULL;
                    continue;
                }
                rc = tc_status_mpi(PMPI_Isend(seg_at(op, p, i), empty ? 0 : (int)seg_len(p, i),
                                              MPI_BYTE, p->child[c], TC_TAG_BCAST, pc,
                                              &p->sreq[i % W][c]));
                if (rc != TC_OK) return rc;
            }
            p->recv_done++;
            if (p->parent >= 0 && !empty && !p->ring) {
                p->have += seg_len(p, i);
                op->ctx->bytes_bcast_net += seg_len(p, i);
            }
        }
        while (p->send_done < p->recv_done) {
            /* completed requests become MPI_REQUEST_NULL, so re-testing is cheap */
            MPI_Request *r = p->sreq[p->send_done % W];
            int all = 1;
            for (int c = 0; c < p->nchild && all; c++) {
                rc = tc_status_mpi(PMPI_Test(&r[c], &flag, MPI_STATUS_IGNORE));
                if (rc != TC_OK) return rc;
                all = flag;
            }
            if (!all) break;
            p->send_done++;
        }
    } while (p->recv_posted + p->recv_done + p->send_done != before);
    return TC_OK;
}

/* TC_OK once part @p's traffic between nodes is over (every segment
 * received and sent, the first message's sends completed), TC_INPROGRESS
 * before, or an error. */
static tc_status_t net_over(tc_bcast_part_t *p)
{
    int flag = 0;
    if (p->first < 2 || p->recv_done < p->nseg || p->send_done < p->nseg) return TC_INPROGRESS;
    for (int c = 0; c < p->nchild; c++) {
        TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&p->hsreq[c], &flag, MPI_STATUS_IGNORE)));
        if (!flag) return TC_INPROGRESS;
    }
    return TC_OK;
}

/* A leader's traffic between nodes for part @p: its tree's, or with the
 * block owners every block's, p->have then the blocks' landed prefix
 * (what the node may read).  TC_OK or an error; never blocks. */
static tc_status_t leaders_progress(tc_bcast_t *op, tc_bcast_part_t *p)
{
    if (!op->nblk) return net_progress(op, p);
    if (!op->blk) return TC_ERR_NOMEM; /* (init could not have them: nothing drained) */
    size_t prefix = 0;
    int whole = 1;
    for (int b = 0; b < op->nblk; b++) {
        tc_bcast_part_t *q = &op->blk[b];
        TC_RETURN_IF_FAILED(net_progress(op, q));
        if (whole) prefix += q->have;
        whole = whole && q->have == q->len;
    }
    if (prefix > p->have) p->have = prefix;
    return TC_OK;
}

/* net_over for part @p, or every block's with the block owners. */
static tc_status_t leaders_over(tc_bcast_t *op, tc_bcast_part_t *p)
{
    if (!op->nblk) return net_over(p);
    if (!op->blk) return TC_ERR_NOMEM;
    for (int b = 0; b < op->nblk; b++) {
        tc_status_t rc = net_over(&op->blk[b]);
        if (rc != TC_OK) return rc;
    }
    return TC_OK;
}

/* Lowest CICO progress of the other local processes (bytes). */
static size_t min_consumed(const tc_shm_t *s)
{
    uint64_t lo = UINT64_MAX;
    for (int i = 0; i < s->nlocal; i++) {
        if (i == s->me) continue;
        /* Acquire: pairs with the consumer's release after it read a slot,
         * so our overwrite of that slot happens after its reads. */
        uint64_t v = atomic_load_explicit(&tc_cctl(s, i)->cons_bytes, memory_order_acquire);
        if (v < lo) lo = v;
    }
    return (size_t)lo;
}

/* Source: make newly present bytes visible to the node. */
static void publish(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_cctl_t *me = tc_cctl(s, s->me);
    if (op->sc) {
        for (int r = 0; r < op->nparts; r++) {
            tc_bcast_part_t *p = &op->part[r];
            if (p->have > p->published) {
                p->published = p->have;
                /* Release: the part's bytes (landed by MPI, or copied by
                 * us) happen-before a reader's acquire of ready_bytes. */
                atomic_store_explicit(&me->ready_bytes[r], p->published, memory_order_release);
            }
        }
        return;
    }
    tc_bcast_part_t *p = &op->part[0]; /* CICO: one part */
    const size_t slot = s->cico_slot, ns = (size_t)s->cico_slots;
    while (p->published < op->bytes) {
        size_t k = p->published / slot;
        size_t end = (k + 1) * slot < op->bytes ? (k + 1) * slot : op->bytes;
        if (p->have < end) break;                                    /* not landed yet */
        if (k >= ns && min_consumed(s) < (k - ns + 1) * slot) break; /* slot busy */
        memcpy(tc_shm_cico(s, s->me, (int)(k % ns)), op->buf + p->published, end - p->published);
        s->bytes_cico += end - p->published;
        p->published = end;
        /* Release: the slot's contents happen-before the reader's acquire. */
        atomic_store_explicit(&me->ready_bytes[0], p->published, memory_order_release);
    }
}

/* Copy what part @r's source has published. */
static tc_status_t consume(tc_bcast_t *op, int r)
{
    tc_shm_t *s = op->ctx->shm;
    tc_bcast_part_t *p = &op->part[r];
    tc_cctl_t *src = tc_cctl(s, p->src);
    /* Acquire: pairs with the source's release of ready_seq in start,
     * after which its cookie and ready_bytes (reset) are visible. */
    if (atomic_load_explicit(&src->ready_seq, memory_order_acquire) != op->seq) {
        /* The producer runs this call eagerly: its count is an eager size
         * and ours is not (an erroneous call). */
        int e = tc_ctx_eager_slot(op->ctx, op->seq);
        if (atomic_load_explicit(&s->ctl[op->producer].item[e].tag, memory_order_acquire) ==
            op->seq)
            return TC_ERR_TRUNCATE;
        return 0;
    }
    if (atomic_load_explicit(&src->total, memory_order_relaxed) != op->bytes)
        return TC_ERR_TRUNCATE; /* the root's count is not ours: an erroneous call */
    size_t avail = (size_t)atomic_load_explicit(&src->ready_bytes[r], memory_order_acquire);
    size_t lim = p->len - (r == op->nparts - 1 ? op->share : 0); /* the tail is the root's */
    if (avail > lim) avail = lim;
    if (avail <= p->have) return 0;
    if (op->sc) {
        uint64_t cookie = atomic_load_explicit(&src->cookie, memory_order_relaxed);
        TC_RETURN_IF_FAILED(tc_region_read(s, cookie, p->off + p->have, op->buf + p->off + p->have,
                                           avail - p->have));
        p->have = avail;
        return 0;
    }
    const size_t slot = s->cico_slot, ns = (size_t)s->cico_slots;
    while (p->have < avail) {
        size_t k = p->have / slot;
        size_t end = (k + 1) * slot < avail ? (k + 1) * slot : avail;
        memcpy(op->buf + p->have, tc_shm_cico(s, p->src, (int)(k % ns)) + (p->have - k * slot),
               end - p->have);
        s->bytes_cico += end - p->have;
        p->have = end;
        /* Release: our reads of the slot happen-before the producer reuses it. */
        atomic_store_explicit(&tc_cctl(s, s->me)->cons_bytes, p->have, memory_order_release);
    }
    return 0;
}

/* Root share: write the tail of each receiver's buffer, in local-rank
 * order, as each one exposes it (never waits). */
static tc_status_t write_shares(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    while (op->share_next < s->nlocal) {
        int i = op->share_next;
        if (i != s->me) {
            tc_cctl_t *c = tc_cctl(s, i);
            /* Acquire: pairs with the receiver's release of recv_seq. */
            if (atomic_load_explicit(&c->recv_seq, memory_order_acquire) != op->seq) return TC_OK;
            tc_status_t st =
                tc_region_write(s, atomic_load_explicit(&c->recv_cookie, memory_order_relaxed), 0,
                                op->buf + (op->bytes - op->share), op->share);
            if (st == TC_ERR_BOUNDS)
                return TC_ERR_TRUNCATE; /* its buffer is smaller: counts differ */
            TC_RETURN_IF_FAILED(st);
            /* Release: our writes into its buffer before it reads the flag. */
            atomic_store_explicit(&s->inbox[i].seq, op->seq, memory_order_release);
        }
        op->share_next++;
    }
    return TC_OK;
}

/* ST_START: the tuner's start, then the source's and the receivers'
 * announcements (cookies, ready words, the share's region). */
static tc_status_t bcast_start(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    if (tc_tune_waits(&op->tune, op->ctx) && !op->tune.t0_ns) {
        /* The tuner: its choice word may change only once every local
         * process has finished the previous call (coll/tune). */
        if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
        tc_tune_start(&op->tune, op->ctx, op->seq);
        /* Release: the word before the start every process acquires. */
        atomic_store_explicit(&tc_cctl(s, 0)->tune_seq, op->seq, memory_order_release);
    }
    if (op->am_source && s) {
        /* Our ready words and CICO slots may still be read by a process
         * that has not finished the previous collective. */
        if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
        tc_cctl_t *me = tc_cctl(s, s->me);
        if (op->sc) {
            struct iovec iov = { op->buf, op->bytes };
            TC_RETURN_IF_FAILED(
                tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_READ, &op->cookie));
            atomic_store_explicit(&me->cookie, op->cookie, memory_order_relaxed);
        }
        for (int r = 0; r < op->nparts; r++)
            atomic_store_explicit(&me->ready_bytes[r], 0, memory_order_relaxed);
        atomic_store_explicit(&me->total, op->bytes, memory_order_relaxed);
        /* Release: cookie, total and the reset ready_bytes before ready_seq. */
        atomic_store_explicit(&me->ready_seq, op->seq, memory_order_release);
    }
    if (op->share && !(s && s->me == op->producer)) {
        tc_cctl_t *me = tc_cctl(s, s->me);
        struct iovec iov = { op->buf + (op->bytes - op->share), op->share };
        TC_RETURN_IF_FAILED(
            tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_WRITE, &op->recv_cookie));
        atomic_store_explicit(&me->recv_cookie, op->recv_cookie, memory_order_relaxed);
        /* Release: the cookie before recv_seq. */
        atomic_store_explicit(&me->recv_seq, op->seq, memory_order_release);
    }
    return TC_OK;
}

/* ST_WORK: one pass over the parts (copy in, network, publish, shares);
 * TC_OK once this process has all of its data and has given out what
 * others need from it. */
static tc_status_t bcast_advance(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int producer = s && s->me == op->producer;
    int pending = 0;
    tc_status_t rc;
    for (int r = 0; r < op->nparts; r++) {
        tc_bcast_part_t *p = &op->part[r];
        if (p->src >= 0 && (rc = consume(op, r)) != TC_OK) return rc;
        const int net = p->rep && op->ctx->map.nnodes > 1;
        if (net && (rc = leaders_progress(op, p)) != TC_OK) return rc;
        if (op->err != TC_OK) return op->err; /* counts differ across nodes */
        size_t need = p->len - (r == op->nparts - 1 && !producer ? op->share : 0);
        if (p->have < need) pending = 1;
        if (net && (rc = leaders_over(op, p)) != TC_OK) {
            if (rc != TC_INPROGRESS) return rc;
            pending = 1;
        }
    }
    if (op->am_source && s) {
        publish(op);
        for (int r = 0; r < op->nparts; r++)
            if (op->part[r].published < (op->sc ? op->part[r].len : op->bytes)) pending = 1;
    }
    if (op->share && producer) {
        if ((rc = write_shares(op)) != TC_OK) return rc;
        if (op->share_next < s->nlocal) pending = 1;
    }
    /* Acquire: pairs with the producer's release after its write. */
    if (op->share && !producer &&
        atomic_load_explicit(&s->inbox[s->me].seq, memory_order_acquire) != op->seq)
        pending = 1;
    /* A tuned call: the tuner's start (and its choice word) before our
     * completion (coll/tune). */
    if (op->tune.bucket >= 0 &&
        atomic_load_explicit(&tc_cctl(s, 0)->tune_seq, memory_order_acquire) < op->seq)
        pending = 1;
    return pending ? TC_INPROGRESS : TC_OK;
}

tc_status_t tc_bcast_work(tc_bcast_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_status_t rc;
    if (op->eager) return eager_work(op);
    switch (op->state) {
    case ST_START:
        if ((rc = bcast_start(op)) != TC_OK) return rc;
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        if ((rc = bcast_advance(op)) != TC_OK) return rc;
        if (s) tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* A single-copy source's buffer is read by the others until they ack. */
        if (((op->am_source && op->sc) || tc_tune_waits(&op->tune, op->ctx)) &&
            !tc_shm_all_done(s, op->seq))
            return TC_INPROGRESS;
        /* A local process that failed has finished too (tc_cctl_abort):
         * its failure is ours, not a success. */
        if (op->am_source && (rc = tc_cctl_peer_failed(s, op->seq)) != TC_OK) return rc;
        tc_tune_end(&op->tune, op->ctx);
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

tc_status_t tc_bcast_drain(tc_bcast_t *op)
{
    tc_status_t rc, over = TC_OK;
    op->failing = 1;
    for (int r = 0; r < op->nparts && op->ctx->map.nnodes > 1; r++) {
        tc_bcast_part_t *p = &op->part[r];
        if (!p->rep) continue;
        if ((rc = leaders_progress(op, p)) != TC_OK) return rc;
        if ((rc = leaders_over(op, p)) < 0) return rc;
        if (rc == TC_INPROGRESS) over = TC_INPROGRESS;
    }
    return over;
}

/* A failed operation that could not drain (tc_bcast_drain) leaves part
 * @p's network requests in flight, never to match later: its receives
 * are abandoned (*@dirty), its sends let go, not waited for (*@let_go: a
 * rendezvous send to a node that stopped never completes, and MPI cannot
 * cancel it). */
static void part_abandon(tc_bcast_part_t *p, int *dirty, int *let_go)
{
    const size_t W = TC_BCAST_WINDOW;
    if (p->first == 1) {
        tc_req_abandon(&p->hreq, 1);
        *dirty = 1;
    }
    for (size_t i = p->recv_done; p->parent >= 0 && i < p->recv_posted; i++) {
        *dirty |= p->rreq[i % W] != MPI_REQUEST_NULL;
        tc_req_abandon(&p->rreq[i % W], 1);
    }
    for (int c = 0; c < p->nchild && p->first == 2; c++)
        if (p->hsreq[c] != MPI_REQUEST_NULL) {
            PMPI_Request_free(&p->hsreq[c]);
            *let_go = 1;
        }
    for (size_t i = p->send_done; i < p->recv_done; i++)
        for (int c = 0; c < p->nchild; c++)
            if (p->sreq[i % W][c] != MPI_REQUEST_NULL) {
                PMPI_Request_free(&p->sreq[i % W][c]);
                *let_go = 1;
            }
}

void tc_bcast_fini(tc_bcast_t *op)
{
    int dirty = 0, let_go = 0;
    const int net = op->ctx->map.nnodes > 1;
    for (int r = 0; r < op->nparts && net; r++)
        if (op->state != ST_DONE && op->part[r].rep) part_abandon(&op->part[r], &dirty, &let_go);
    for (int b = 0; b < op->nblk && op->blk && op->state != ST_DONE; b++)
        part_abandon(&op->blk[b], &dirty, &let_go);
    /* (a send let go may still read a ring: it is left, a bounded leak
     * after an erroneous call) */
    for (int r = 0; r < op->nparts && net; r++) {
        if (!let_go) free(op->part[r].ring);
        op->part[r].ring = op->part[r].stage = NULL;
    }
    for (int b = 0; b < op->nblk && op->blk && !let_go; b++) free(op->blk[b].ring);
    free(op->blk); /* (the requests let go are MPI's now) */
    op->blk = NULL;
    op->nblk = 0;
    /* (and the stage: the context lets its buffer go) */
    if (let_go) tc_ctx_buf_leave(op->ctx, TC_BUF_STAGE);
    if (let_go) op->ctx->sends_let_go = 1;
    if (dirty || let_go) op->ctx->net_dirty = 1;
    tc_region_release(op->ctx->shm, op->keep, op->cookie, op->state == ST_DONE);
    tc_region_release(op->ctx->shm, op->keep, op->recv_cookie, op->state == ST_DONE);
    op->cookie = op->recv_cookie = 0;
}
