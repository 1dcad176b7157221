/* coll/vexchange -- see vexchange.h. */
#include "vexchange_int.h"

#include "fold.h"
#include "tags.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

/* (ST_DONE is coll/vroot's VR_DONE too: the fini tells a finished operation by it) */
enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE = TC_VX_STATE_DONE };

/* The communicator rank of local rank @j of node @b (several nodes); @b
 * may be any integer: taken modulo the node count. */
static int rank_at(const tc_vexchange_t *op, int b, int j)
{
    const int N = op->ctx->map.nnodes;
    return op->rank_at[(size_t)(((b % N) + N) % N) * (size_t)op->ppn + (size_t)j];
}

/* This call's tag for the slices' messages (coll/tags: its epoch). */
static int vx_tag(const tc_vexchange_t *op) { return TC_TAG_EPOCH(TC_TAG_VEXCHANGE, op->seq); }

/* (tc_vx_defer, shorter) */
static tc_status_t defer(tc_vexchange_t *op, tc_status_t st) { return tc_vx_defer(op, st); }

/* The span of the @n blocks at @len/@off (op->rbase: the first block's
 * byte, op->span: from it to the last's).  Displacements may be
 * negative: offsets compared signed. */
static void blocks_span(tc_vexchange_t *op, int n)
{
    ptrdiff_t first = -1, end = 0;
    int any = 0;
    for (int r = 0; r < n; r++) {
        ptrdiff_t o = (ptrdiff_t)op->off[r], e = o + (ptrdiff_t)op->len[r];
        if (!op->len[r]) continue;
        if (!any || o < first) first = o;
        if (!any || e > end) end = e;
        any = 1;
    }
    op->rbase = any ? first : 0;
    op->span = any ? (size_t)(end - first) : 0;
}

int tc_vexchange_sliced(const tc_ctx_t *c)
{
    return c->map.nnodes > 1 && c->minlocal == c->maxlocal && (c->all_sc || c->maxlocal == 1);
}

/* 1 if an Allgatherv relays (the same on every process: every one holds
 * every count): 3 nodes or more (at most TC_VX_RELAY_NODES: the tags),
 * blocks of a piece or more, and nodes whose shares differ so much that
 * sending each block straight to every node, (N - 1) x the largest node
 * share out of its node, takes 1/8 longer than the most any node must
 * receive (all but its share).  Relayed, a node sends its share once and
 * forwards (N - 2) / (N - 1) of the others': within the receive bound. */
static int relayed(const tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes;
    size_t total = 0, big = 0, most = 0, least = SIZE_MAX;
    if (N < 3 || N > TC_VX_RELAY_NODES) return 0;
    for (int b = 0; b < N; b++) {
        size_t share = 0;
        for (int j = 0; j < op->ppn; j++) {
            const size_t l = op->len[rank_at(op, b, j)];
            share += l;
            big = l > big ? l : big;
        }
        total += share;
        most = share > most ? share : most;
        least = share < least ? share : least;
    }
    return big >= TC_NET_SEG && (double)(N - 1) * (double)most > 1.125 * (double)(total - least);
}

/* The per-slice exchange's tables (several nodes): who is where, each
 * step's request pair; Allgatherv: our receive buffer's span and the
 * blocks' offsets in it (exposed), and room for a peer's. */
static tc_status_t init_sliced(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const size_t ppn = (size_t)m->lsize, N = (size_t)m->nnodes, n = (size_t)m->size;
    op->multi = 1;
    op->ppn = m->lsize;
    op->rank_at = malloc(sizeof(int) * N * ppn);
    op->mlen = calloc(2 * (N - 1), sizeof(size_t));
    op->xtab = malloc(sizeof(size_t) * (op->kind == TC_VX_ALLTOALLV ? 2 * n * ppn : 2 * n));
    if (!op->rank_at || !op->mlen || !op->xtab) return TC_ERR_NOMEM;
    for (int r = 0; r < m->size; r++)
        op->rank_at[(size_t)m->node_of[r] * ppn + (size_t)m->lrank_of[r]] = r;
    if (op->kind == TC_VX_ALLTOALLV) return TC_OK;
    blocks_span(op, m->size);
    for (size_t r = 0; r < n; r++)
        op->xtab[r] = op->len[r] ? (size_t)((ptrdiff_t)op->off[r] - op->rbase) : 0;
    op->relay = relayed(op);
    return TC_OK;
}

tc_status_t tc_vexchange_init(tc_vexchange_t *op, tc_ctx_t *ctx, int kind, const void *in,
                              void *out, size_t own, const size_t *len, const size_t *off, int root,
                              int ci)
{
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->kind = kind;
    op->ci = ci;
    op->root = root;
    op->in = in;
    op->out = out;
    op->own = own;
    op->len = len;
    op->off = off;
    op->seq = ++ctx->seq;
    op->state = ST_START;
    op->rcut = -1;
    if (ctx->map.nnodes == 1 || kind != TC_VX_ALLGATHERV) { /* the items */
        tc_ctx_eager(ctx, op->seq, &op->eager_slot, &op->eager_wait);
        op->vmax = ctx->vx_eager_max;
        if (ctx->map.nnodes == 1) return TC_OK;
        if (kind <= TC_VX_SCATTERV) return tc_vroot_init(op);
    }
    op->cookies = calloc((size_t)ctx->map.size, sizeof(uint64_t));
    op->tcookies = calloc((size_t)ctx->map.size, sizeof(uint64_t));
    if (!op->cookies || !op->tcookies) return TC_ERR_NOMEM;
    return init_sliced(op); /* (Allgatherv, Alltoallv) */
}

/* ---- The items (one node; Alltoallv on several: see vexchange.h) -------------- */

/* (An item's layout: vexchange_int.h) */

size_t tc_vexchange_eager_max(const tc_ctx_t *c)
{
    const size_t n = (size_t)c->map.size, slot = c->cfg->cico_slot;
    if (slot <= TC_VX_HEAD(n)) return 0;
    const size_t m = ((slot - TC_VX_HEAD(n)) / (n > 1 ? n - 1 : 1)) & ~(size_t)63;
    const size_t want = c->cfg->vx_item_max ? c->cfg->vx_item_max : TC_VX_EAGER_MAX;
    return m < want ? m : want;
}

int tc_vexchange_fits(const tc_ctx_t *c) { return TC_VX_HEAD(c->map.size) <= c->cfg->cico_slot; }

/* Gatherv, Scatterv on one node: of a block of @len bytes left to single
 * copy, the head its non-root copies (coll/ctx tc_ctx_share_head); the
 * root copies the rest. */
static size_t split_at(const tc_vexchange_t *op, size_t len)
{
    return op->kind > TC_VX_SCATTERV || len <= op->vmax
               ? len
               : tc_ctx_share_head(op->ctx, len, op->ctx->cfg->vx_share_min);
}

/* Entry @j of what we send (Scatterv's root, Alltoallv: one per rank;
 * Gatherv's non-roots and Allgatherv: one, our block): its length, its
 * first byte, its offset in the region we would expose. */
static size_t block_out(const tc_vexchange_t *op, int j, const char **src, size_t *roff)
{
    if (op->kind == TC_VX_SCATTERV) {
        *roff = op->len[j] ? (size_t)((ptrdiff_t)op->off[j] - op->rbase) : 0;
        *src = op->in + op->off[j];
        return op->len[j];
    }
    if (op->kind == TC_VX_ALLTOALLV) {
        *roff = op->stab[2 * j + 1];
        *src = op->in + *roff;
        return op->stab[2 * j];
    }
    *roff = 0;
    *src = op->in;
    return op->own;
}

/* The buffer our item names (its @span bytes), as op->cookie: written
 * into, the Gatherv root's receive span and a Scatterv reader's block;
 * read, a send buffer. */
static tc_status_t expose_span(tc_vexchange_t *op, size_t span)
{
    const int root = op->ctx->map.rank == op->root;
    const int into = op->kind == TC_VX_GATHERV ? root : op->kind == TC_VX_SCATTERV && !root;
    struct iovec iov = { into                         ? op->out + (root ? op->rbase : 0)
                         : op->kind == TC_VX_SCATTERV ? (char *)op->in + op->rbase
                                                      : (char *)op->in,
                         span };
    return tc_region_acquire(op->ctx->shm, op->keep, &iov, 1, into ? TC_RIGHT_WRITE : TC_RIGHT_READ,
                             &op->cookie);
}

/* Put our item: the blocks of at most op->vmax bytes in it, the others
 * left to single copy in our exposed buffer (its cookie in the header);
 * the Gatherv root's entries say where each rank writes a block too long
 * for an item, and it writes none when there is no such block.  Then
 * our own block where it goes. */
static tc_status_t put_item(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int n = op->ctx->map.size, me = op->ctx->map.rank, root = me == op->root;
    const int many = op->kind == TC_VX_ALLTOALLV || (op->kind == TC_VX_SCATTERV && root);
    const int nent = many || (op->kind == TC_VX_GATHERV && root) ? n : 1;
    /* a Gatherv writer, a Scatterv reader whose block the root shares:
     * its send (receive) buffer, for the root's part */
    const int shared = op->kind <= TC_VX_SCATTERV && !root && split_at(op, op->own) < op->own;
    size_t bytes = TC_VX_HEAD(nent), span = 0, roff;
    int sc = 0; /* blocks left to single copy */
    const char *src;
    if (op->kind == TC_VX_GATHERV && root) {
        for (int j = 0; j < n; j++) sc += j != me && op->len[j] > op->vmax;
        if (!sc) return TC_OK; /* (every block comes in its writer's item) */
        blocks_span(op, n);
        span = op->span;
    } else if (op->kind == TC_VX_SCATTERV && !root) {
        if (!shared) return TC_OK; /* (we only read) */
        sc = 1;
        span = op->own;
    } else {
        for (int j = 0; j < nent; j++) {
            const size_t l = block_out(op, j, &src, &roff);
            if (many && j == me) continue;
            if (l > op->vmax)
                sc++;
            else
                bytes += l;
        }
        if (op->kind == TC_VX_SCATTERV) blocks_span(op, n);
        span = op->kind == TC_VX_ALLGATHERV || op->kind == TC_VX_GATHERV ? op->own : op->span;
    }
    if (bytes > s->cico_slot) return TC_ERR_PROTO; /* (the plan's tc_vexchange_fits) */
    char *it = tc_shm_item_begin(s, bytes, op->eager_slot, op->seq, op->eager_wait);
    if (!it) return TC_INPROGRESS;
    uint64_t head[2] = { 0, (uint64_t)nent };
    /* (a Gatherv writer exposes nothing unless the root shares its block) */
    if (sc && span && (op->kind != TC_VX_GATHERV || root || shared))
        TC_RETURN_IF_FAILED(expose_span(op, span));
    head[0] = op->cookie;
    memcpy(it, head, sizeof(head));
    size_t at = TC_VX_HEAD(nent);
    for (int j = 0; j < nent; j++) {
        uint64_t e[2];
        if (op->kind == TC_VX_GATHERV && root) {
            e[0] = op->len[j];
            e[1] = TC_VX_SC | (op->len[j] ? (uint64_t)((ptrdiff_t)op->off[j] - op->rbase) : 0);
        } else if (op->kind == TC_VX_SCATTERV && !root) { /* (a reader: our block, at 0) */
            e[0] = op->own;
            e[1] = TC_VX_SC;
        } else {
            e[0] = block_out(op, j, &src, &roff);
            if (many && j == me) {
                e[1] = 0;
            } else if (e[0] > op->vmax) {
                e[1] = TC_VX_SC | roff;
            } else {
                e[1] = at;
                memcpy(it + at, src, e[0]);
                at += e[0];
            }
        }
        memcpy(it + 16 + 16 * (size_t)j, e, sizeof(e));
    }
    tc_shm_item_publish(s, bytes, op->eager_slot, op->seq);
    return TC_OK;
}

/* Our own block's length against our count for ourselves (the Gatherv,
 * Scatterv roots, Allgatherv and Alltoallv): checked before we expose
 * anything. */
static tc_status_t own_check(const tc_vexchange_t *op)
{
    const int me = op->ctx->map.rank; /* (one node: the local rank) */
    if (op->kind == TC_VX_ALLTOALLV)
        return op->stab[2 * me] != op->len[me] ? TC_ERR_TRUNCATE : TC_OK;
    if (op->kind <= TC_VX_SCATTERV && me != op->root) return TC_OK;
    return op->len[me] != op->own ? TC_ERR_TRUNCATE : TC_OK;
}

/* Our own block where it goes (own_check's; nothing when it is there
 * already: MPI_IN_PLACE). */
static void own_block(tc_vexchange_t *op)
{
    const int me = op->ctx->map.rank;
    if (op->kind == TC_VX_ALLTOALLV) {
        if (op->len[me] && op->in + op->stab[2 * me + 1] != op->out + op->off[me])
            memcpy(op->out + op->off[me], op->in + op->stab[2 * me + 1], op->len[me]);
        return;
    }
    if (op->kind <= TC_VX_SCATTERV && me != op->root) return;
    if (op->kind == TC_VX_SCATTERV && op->out != op->in + op->off[me])
        memcpy(op->out, op->in + op->off[me], op->own);
    else if (op->kind != TC_VX_SCATTERV && op->in != op->out + op->off[me])
        memcpy(op->out + op->off[me], op->in, op->own);
}

/* tc_vx_take, of a block left to single copy the first @part bytes only
 * (split_at's head; a carried block whole). */
static tc_status_t take_head(tc_vexchange_t *op, int j, size_t e, char *buf, size_t want,
                             size_t part, int write)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t size = tc_shm_item_whole(s, j, op->eager_slot, op->seq);
    if (size == TC_SHM_ITEM_BROKEN) return TC_ERR_PROTO;
    if (!size) return TC_INPROGRESS;
    const char *it = tc_shm_item_data(s, j, op->eager_slot, size);
    uint64_t head[2], ent[2];
    if (size < TC_VX_HEAD(e + 1)) return TC_ERR_PROTO;
    memcpy(head, it, sizeof(head));
    memcpy(ent, it + 16 + 16 * e, sizeof(ent));
    if (ent[0] != want) return TC_ERR_TRUNCATE;
    const int carried = !(ent[1] & TC_VX_SC);
    if (carried != (want <= op->vmax)) return TC_ERR_TRUNCATE;
    if (!want) return TC_OK;
    if (carried) {
        if (write || ent[1] > size || want > size - ent[1]) return TC_ERR_PROTO;
        memcpy(buf, it + ent[1], want);
        s->bytes_cico += want;
        return TC_OK;
    }
    const size_t off = (size_t)(ent[1] & ~TC_VX_SC);
    if (!head[0]) return TC_ERR_PROTO;
    TC_RETURN_IF_FAILED(tc_counted(write ? tc_region_write(s, head[0], off, buf, part)
                                         : tc_region_read(s, head[0], off, buf, part)));
    s->bytes_sc += part;
    return TC_OK;
}

/* (declared in vexchange_int.h) */
tc_status_t tc_vx_take(tc_vexchange_t *op, int j, size_t e, char *buf, size_t want, int write)
{
    return take_head(op, j, e, buf, want, want, write);
}

/* The Gatherv, Scatterv root: local process @j's long block, @want bytes
 * at our @buf, left to single copy: its item must say so for as many
 * bytes; where we share it (split_at) we then copy its tail, out of @j's
 * send buffer (Gatherv) or into its receive buffer (Scatterv), which its
 * item's header names. */
static tc_status_t root_part(tc_vexchange_t *op, int j, char *buf, size_t want)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t size = tc_shm_item_whole(s, j, op->eager_slot, op->seq);
    if (size == TC_SHM_ITEM_BROKEN || (size && size < TC_VX_HEAD(1))) return TC_ERR_PROTO;
    if (!size) return TC_INPROGRESS;
    uint64_t head[2], ent[2];
    const char *it = tc_shm_item_data(s, j, op->eager_slot, size);
    memcpy(head, it, sizeof(head));
    memcpy(ent, it + 16, sizeof(ent));
    if (ent[0] != want || !(ent[1] & TC_VX_SC)) return TC_ERR_TRUNCATE;
    const size_t h = split_at(op, want);
    if (h == want) return TC_OK;
    if (!head[0]) return TC_ERR_PROTO;
    const int scatter = op->kind == TC_VX_SCATTERV;
    TC_RETURN_IF_FAILED(tc_counted(scatter ? tc_region_write(s, head[0], h, buf + h, want - h)
                                           : tc_region_read(s, head[0], h, buf + h, want - h)));
    s->bytes_sc += want - h;
    return TC_OK;
}

/* The Gatherv root: local process @j's block, @want bytes at our @buf:
 * out of its item, or, left to single copy, written by @j itself (and
 * its tail by us: root_part). */
static tc_status_t gathered(tc_vexchange_t *op, int j, char *buf, size_t want)
{
    if (want <= op->vmax) return tc_vx_take(op, j, 0, buf, want, 0);
    return root_part(op, j, buf, want);
}

/* The Scatterv root: our share of local process @j's block (root_part),
 * if any. */
static tc_status_t scattered(tc_vexchange_t *op, int j)
{
    const size_t want = op->len[j];
    if (split_at(op, want) == want) return TC_OK; /* (@j reads it all) */
    return root_part(op, j, (char *)op->in + op->off[j], want);
}

/* Alltoallv (several nodes): our item (the same as on one node: every
 * local process reads its blocks, and slice i its node's blocks for slice
 * i of the other nodes, out of it or from our exposed send buffer), then
 * our own block. */
static tc_status_t start_alltoallv(tc_vexchange_t *op)
{
    const int me = op->ctx->map.rank;
    if (op->ctx->shm) { /* (alone on our node: nobody reads it) */
        const tc_status_t rc = put_item(op);
        if (rc != TC_OK) return rc;
    }
    if (op->stab[2 * me] != op->len[me]) return defer(op, TC_ERR_TRUNCATE);
    if (op->len[me] && op->in + op->stab[2 * me + 1] != op->out + op->off[me])
        memcpy(op->out + op->off[me], op->in + op->stab[2 * me + 1], op->len[me]);
    return TC_OK;
}

/* ---- Several nodes: the per-slice exchange (see vexchange.h) ------------------ */

/* Room for @n pieces (every step's, received and sent). */
static tc_status_t reqs_alloc(tc_vexchange_t *op, size_t n)
{
    TC_RETURN_IF_FAILED(tc_pieces_init(&op->net, op->ctx->pcomm, n));
    op->netup = 1;
    return TC_OK;
}

/* Post the message of @bytes at @buf to (@send) or from rank @peer, piece
 * by piece (coll/pieces).  A relay (@relay, receiving) lists each piece to
 * forward. */
static tc_status_t post_msg(tc_vexchange_t *op, char *buf, size_t bytes, int peer, int tag,
                            int send, int relay)
{
    int first;
    TC_RETURN_IF_FAILED(tc_pieces_post(&op->net, buf, bytes, peer, tag, send, &first));
    for (int q = first; relay && q < op->net.n; q++)
        op->relayp[op->nrelay++] =
            (tc_vx_piece_t){ q, tag & 0xff, first, op->net.p[q].buf, op->net.p[q].len };
    return TC_OK;
}

/* TC_OK once every piece is over; a message whose counts disagreed (the
 * sender's and ours) is a failure held until then (defer). */
static tc_status_t steps_done(tc_vexchange_t *op)
{
    TC_RETURN_IF_FAILED(tc_pieces_progress(&op->net));
    return defer(op, op->net.fail);
}

/* Allgatherv, direct: our block to slice i of every other node, theirs
 * straight into place. */
static tc_status_t post_direct(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, a = m->node, i = m->lrank;
    size_t nq = (size_t)(N - 1) * tc_pieces_of(op->own);
    for (int k = 1; k < N; k++) nq += tc_pieces_of(op->len[rank_at(op, a - k, i)]);
    TC_RETURN_IF_FAILED(reqs_alloc(op, nq));
    for (int k = 1; k < N; k++) { /* (every receive first: the pieces arrive to a posted one) */
        const int from = rank_at(op, a - k, i);
        TC_RETURN_IF_FAILED(
            post_msg(op, op->out + op->off[from], op->len[from], from, vx_tag(op), 0, 0));
    }
    for (int k = 1; k < N; k++) {
        const int to = rank_at(op, a + k, i);
        TC_RETURN_IF_FAILED(post_msg(op, (char *)op->in, op->own, to, vx_tag(op), 1, 0));
    }
    return TC_OK;
}

/* Part @t (0..N-2) of a block of @len bytes cut in N - 1: [*lo, *hi). */
static void part_of(size_t len, int t, int N, size_t *lo, size_t *hi)
{
    *lo = len / (size_t)(N - 1) * (size_t)t;
    *hi = t == N - 2 ? len : *lo + len / (size_t)(N - 1);
}

/* Allgatherv, relayed (see vexchange.h): part t of our block to slice i
 * of node a + 1 + t, which forwards it to the other nodes; every other
 * node's parts into place, from their origin or their relay (tag: the
 * origin node, so the pieces of different origins may interleave). */
static tc_status_t post_relay(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, a = m->node, i = m->lrank;
    size_t nq = 0, nr = 0, lo, hi;
    for (int b = 0; b < N; b++) { /* (ours: as long as we hold it) */
        const size_t len = b == a ? op->own : op->len[rank_at(op, b, i)];
        for (int t = 0; t < N - 1; t++) {
            part_of(len, t, N, &lo, &hi);
            nq += tc_pieces_of(hi - lo); /* (sent by b, received, or relayed to N - 2) */
            if ((b + 1 + t) % N == a && b != a) nr += tc_pieces_of(hi - lo);
        }
    }
    TC_RETURN_IF_FAILED(reqs_alloc(op, nq + nr * (size_t)(N - 2)));
    if (!(op->relayp = malloc((nr + 1) * sizeof(*op->relayp)))) return TC_ERR_NOMEM;
    for (int b = 0; b < N; b++) { /* the other nodes' parts */
        const int o = rank_at(op, b, i);
        for (int t = 0; b != a && t < N - 1; t++) {
            const int r = (b + 1 + t) % N;
            part_of(op->len[o], t, N, &lo, &hi);
            TC_RETURN_IF_FAILED(post_msg(op, op->out + op->off[o] + lo, hi - lo,
                                         r == a ? o : rank_at(op, r, i),
                                         TC_TAG_VRELAY_OF(op->seq, b), 0, r == a));
        }
    }
    for (int t = 0; t < N - 1; t++) { /* ours, to the relays */
        part_of(op->own, t, N, &lo, &hi);
        TC_RETURN_IF_FAILED(post_msg(op, (char *)op->in + lo, hi - lo, rank_at(op, a + 1 + t, i),
                                     TC_TAG_VRELAY_OF(op->seq, a), 1, 0));
    }
    return TC_OK;
}

/* Relay: each piece we received for forwarding, once over (in order), to
 * slice i of every node but its origin's and ours: as it came, or, where
 * its message failed (the origin's count is not ours), once per message a
 * piece of another length than expected (0 bytes, or 1), which ends the
 * stream there for the receivers and fails it. */
static tc_status_t relay_forward(tc_vexchange_t *op)
{
    static char one; /* (the 1-byte piece) */
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, a = m->node, i = m->lrank;
    for (; op->fwd < op->nrelay; op->fwd++) {
        const tc_vx_piece_t *p = &op->relayp[op->fwd];
        const tc_status_t rc = tc_pieces_test(&op->net, p->q);
        if (rc != TC_OK) return rc;
        const int ok = op->net.p[p->q].ok;
        if (!ok && p->msg == op->rcut) continue; /* (passed on already) */
        if (!ok) op->rcut = p->msg;
        for (int k = 1; k < N; k++) {
            const int c = (a + k) % N;
            if (c == p->node) continue;
            TC_RETURN_IF_FAILED(tc_pieces_send1(&op->net, ok ? p->buf : &one,
                                                ok ? p->len : p->len == 0, rank_at(op, c, i),
                                                TC_TAG_VRELAY_OF(op->seq, p->node)));
        }
    }
    return TC_OK;
}

/* Allgatherv: expose our block and our receive span behind the table of
 * the blocks' offsets in it, put our own block, and post the messages
 * between the slices (direct or relayed). */
static tc_status_t expose_sliced(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const int me = m->rank;
    const size_t n = (size_t)m->size;
    /* The messages first, our block as long as we hold it: whatever fails
     * after, the other nodes' receivers fail on a length (a count that
     * differs) or drain, rather than wait for what never comes. */
    TC_RETURN_IF_FAILED(op->relay ? post_relay(op) : post_direct(op));
    if (s) {
        if (op->own) {
            struct iovec iov = { (void *)op->in, op->own };
            TC_RETURN_IF_FAILED(
                tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_READ, &op->cookie));
        }
        /* (the table and receive buffer's region is declared per call: the
         * table is the operation's) */
        struct iovec t[2] = { { op->xtab, n * sizeof(size_t) }, { op->out + op->rbase, op->span } };
        TC_RETURN_IF_FAILED(tc_region_create(s, t, op->span ? 2 : 1, TC_RIGHT_READ, &op->tcookie));
        tc_fold_post(s, op->seq, op->cookie, op->tcookie);
    }
    if (op->len[me] != op->own) return defer(op, TC_ERR_TRUNCATE);
    if (op->own && op->in != op->out + op->off[me]) memcpy(op->out + op->off[me], op->in, op->own);
    return TC_OK;
}

/* Allgatherv: the local processes' blocks out of their send buffers; the
 * network's; then, slice by slice, the remote blocks each local process
 * received, out of its receive buffer at the offsets its table gives. */
static tc_status_t sliced_allgatherv(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, a = m->node, ppn = op->ppn, me = m->lrank;
    const size_t n = (size_t)m->size;
    tc_status_t rc = relay_forward(op); /* (first: the other nodes wait for them) */
    if (rc < 0) return rc;
    if (s && !op->posted) {
        if (!tc_fold_all_posted(s, op->seq, op->cookies, op->tcookies)) return TC_INPROGRESS;
        for (int k = 1; k < ppn && op->fail == TC_OK; k++) {
            const int j = (me + k) % ppn, r = rank_at(op, a, j);
            if (!op->len[r]) continue;
            defer(op, tc_counted(
                          tc_region_read(s, op->cookies[j], 0, op->out + op->off[r], op->len[r])));
            s->bytes_sc += op->len[r];
        }
    }
    op->posted = 1;
    if (op->net.done < op->net.n || op->fwd < op->nrelay) {
        /* every forward posted before steps_done tests the rest (it would
         * complete a relayed piece's request unseen, and finish without
         * the forwards) */
        TC_RETURN_IF_FAILED(relay_forward(op));
        if (op->fwd < op->nrelay) return TC_INPROGRESS;
        TC_RETURN_IF_FAILED(steps_done(op));
        /* our slice's remote blocks have landed; a failure of ours is
         * returned instead (the local processes then fail, tc_cctl_abort,
         * rather than read them) */
        if (op->fail != TC_OK) return op->fail;
        if (s) tc_fold_progress(s, 1);
    }
    size_t *peer = op->xtab + n; /* a local process's table */
    for (; s && op->fail == TC_OK && op->next < ppn - 1; op->next++) {
        const int j = (me + 1 + op->next) % ppn;
        if (tc_fold_peer_progress(s, j) < 1) return TC_INPROGRESS;
        TC_RETURN_IF_FAILED(tc_region_read(s, op->tcookies[j], 0, peer, n * sizeof(size_t)));
        for (int b = 0; b < N; b++) {
            const int r = rank_at(op, b, j);
            if (b == a || !op->len[r]) continue;
            if (peer[r] > TC_VX_LEN_MAX) return TC_ERR_PROTO; /* (a peer's table: input) */
            TC_RETURN_IF_FAILED(tc_region_read(s, op->tcookies[j], n * sizeof(size_t) + peer[r],
                                               op->out + op->off[r], op->len[r]));
            s->bytes_sc += op->len[r];
        }
    }
    return op->fail;
}

/* Alltoallv: the block local process @j (@i: we) has at @where (its
 * item's entry) into @dst, @len bytes: out of its item (op->tcookies[j]:
 * the item's size), or by single copy from its send buffer. */
static tc_status_t block_from(tc_vexchange_t *op, int j, int i, uint64_t where, size_t len,
                              char *dst)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t off = (size_t)(where & ~TC_VX_SC);
    if (j == i) {
        memcpy(dst, op->in + off, len);
        return TC_OK;
    }
    if (where & TC_VX_SC) {
        s->bytes_sc += len;
        return op->cookies[j] ? tc_counted(tc_region_read(s, op->cookies[j], off, dst, len))
                              : TC_ERR_PROTO;
    }
    const size_t size = (size_t)op->tcookies[j];
    if (off > size || len > size - off) return TC_ERR_PROTO; /* (a peer's entry) */
    memcpy(dst, tc_shm_item_data(s, j, op->eager_slot, size) + off, len);
    s->bytes_cico += len;
    return TC_OK;
}

/* Alltoallv: each local process's entries (its send table) into its row
 * of op->xtab, and its cookie; ours from our send table, every block
 * from our buffer.  TC_ERR_PROTO for an item too short to hold them. */
static tc_status_t read_tables(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int i = op->ctx->map.lrank, ppn = op->ppn;
    const size_t n = (size_t)op->ctx->map.size, tw = 2 * n;
    for (int j = 0; j < ppn; j++) {
        size_t *row = op->xtab + (size_t)j * tw;
        if (j == i) { /* ours: every block from our buffer */
            for (size_t r = 0; r < n; r++) {
                row[2 * r] = op->stab[2 * r];
                row[2 * r + 1] = (size_t)(TC_VX_SC | op->stab[2 * r + 1]);
            }
            continue;
        }
        const size_t size = (size_t)op->tcookies[j];
        const char *it = tc_shm_item_data(s, j, op->eager_slot, size);
        uint64_t head[2];
        if (size < TC_VX_HEAD(n)) return TC_ERR_PROTO;
        memcpy(head, it, sizeof(head));
        op->cookies[j] = head[0];
        memcpy(row, it + 16, tw * sizeof(size_t));
    }
    return TC_OK;
}

/* Alltoallv, once every local process's item is there: their entries
 * (the send tables), each step's messages sized, packed and posted (the
 * blocks our node has for slice i of node a + k), and our blocks from the
 * local processes.  A peer's item is input: each length is bounded before
 * use, an offset in it by its size, one in its buffer by the region.  A
 * failure here (a peer's garbage, a copy refused; @bad: one before,
 * nothing read) still posts every message, those out empty from the
 * failure on: the receivers fail on the length instead of waiting. */
static tc_status_t post_alltoallv(tc_vexchange_t *op, tc_status_t bad)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, a = m->node, i = m->lrank, ppn = op->ppn, steps = N - 1;
    const size_t n = (size_t)m->size, P = (size_t)ppn, tw = 2 * n;
    size_t total = 0, nq = 0;
    if (bad == TC_OK) bad = read_tables(op);
    for (int k = 1; k < N; k++) { /* the messages' lengths, out and in */
        const int to = rank_at(op, a + k, i);
        const size_t sn = (size_t)((a - k + N) % N);
        size_t out = 0, in = 0;
        for (size_t j = 0; j < P; j++) {
            const size_t l = bad == TC_OK ? op->xtab[j * tw + 2 * (size_t)to] : 0;
            if (l > TC_VX_LEN_MAX) bad = TC_ERR_PROTO; /* (no sum of them wraps) */
            out += bad == TC_OK ? l : 0;
            in += op->len[rank_at(op, (int)sn, (int)j)];
        }
        op->mlen[k - 1] = out;
        op->mlen[steps + k - 1] = in;
        total += out + in;
        nq += tc_pieces_of(out) + tc_pieces_of(in);
    }
    char *o = op->sstage = tc_ctx_buf(op->ctx, TC_BUF_NET, total + 1);
    if (!o) return TC_ERR_NOMEM; /* (before reqs_alloc: drain posts the messages) */
    TC_RETURN_IF_FAILED(reqs_alloc(op, nq));
    char *r = o + total;
    for (int k = steps; k >= 1; k--) r -= op->mlen[steps + k - 1]; /* (the messages in) */
    for (int k = 1; k < N; k++) {                                  /* (every receive first) */
        const int from = rank_at(op, a - k, i);
        TC_RETURN_IF_FAILED(post_msg(op, r, op->mlen[steps + k - 1], from, vx_tag(op), 0, 0));
        r += op->mlen[steps + k - 1];
    }
    for (int k = 1; k < N; k++) {
        const int to = rank_at(op, a + k, i);
        char *msg = o;
        for (int j = 0; j < ppn && bad == TC_OK; j++) {
            const size_t *t = op->xtab + (size_t)j * tw + 2 * (size_t)to;
            if (!t[0]) continue;
            bad = block_from(op, j, i, t[1], t[0], o);
            o += t[0];
        }
        TC_RETURN_IF_FAILED(
            post_msg(op, msg, bad == TC_OK ? op->mlen[k - 1] : 0, to, vx_tag(op), 1, 0));
    }
    for (int k = 1; k < ppn && bad == TC_OK; k++) { /* our blocks from the local processes */
        const int j = (i + k) % ppn, pr = rank_at(op, a, j);
        const size_t *t = op->xtab + (size_t)j * tw + 2 * (size_t)m->rank;
        if (t[0] != op->len[pr])
            bad = TC_ERR_TRUNCATE;
        else if (t[0])
            bad = tc_counted(block_from(op, j, i, t[1], t[0], op->out + op->off[pr]));
    }
    return defer(op, bad);
}

/* Alltoallv: post; once the messages have landed, the blocks from each
 * remote node into place. */
static tc_status_t sliced_alltoallv(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, a = m->node;
    const size_t P = (size_t)op->ppn;
    if (!op->posted) {
        tc_status_t bad = TC_OK;
        for (int j = 0; s && j < op->ppn; j++) { /* every local process's item, whole */
            if (j == s->me) continue;
            const size_t z = tc_shm_item_whole(s, j, op->eager_slot, op->seq);
            if (!z) return TC_INPROGRESS;
            if (z == TC_SHM_ITEM_BROKEN) bad = TC_ERR_PROTO;
            op->tcookies[j] = z;
        }
        op->posted = 1;
        TC_RETURN_IF_FAILED(post_alltoallv(op, bad));
    }
    TC_RETURN_IF_FAILED(steps_done(op));
    if (op->fail != TC_OK) return op->fail;
    const char *r = op->sstage;
    for (int k = 1; k < N; k++) r += op->mlen[k - 1];
    for (int k = 1; k < N; k++) {
        const size_t sn = (size_t)((a - k + N) % N);
        for (size_t j = 0; j < P; j++) {
            const int pr = rank_at(op, (int)sn, (int)j);
            memcpy(op->out + op->off[pr], r, op->len[pr]);
            r += op->len[pr];
        }
    }
    return TC_OK;
}

/* Several nodes: Allgatherv exposes what the local processes read (our
 * block, our receive span) once nobody reads our previous exposure (every
 * local process has finished the previous call); Alltoallv puts its
 * item.  Then our own block where it goes. */
static tc_status_t expose(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    if (op->kind == TC_VX_ALLTOALLV) return start_alltoallv(op);
    if (s && !tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
    return expose_sliced(op);
}

/* One node: put our item and our own block; then what we read, peer by
 * peer from the one after us (resumable: op->next); then, where we
 * exposed a buffer, wait until every local process is done with it. */
static tc_status_t node_steps(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int n = s->nlocal, me = s->me, r = op->root;
    tc_status_t rc;
    switch (op->state) {
    case ST_START:
        TC_RETURN_IF_FAILED(own_check(op));
        if ((rc = put_item(op)) != TC_OK) return rc;
        own_block(op);
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        if (op->kind == TC_VX_GATHERV && me != r && op->own > op->vmax)
            rc = take_head(op, r, (size_t)me, (char *)op->in, op->own, split_at(op, op->own), 1);
        else if (op->kind == TC_VX_SCATTERV && me != r)
            rc = take_head(op, r, (size_t)me, op->out, op->own, split_at(op, op->own), 0);
        else
            rc = TC_OK;
        if (rc != TC_OK) return rc;
        for (; (op->kind > TC_VX_SCATTERV || me == r) && op->next < n - 1; op->next++) {
            const int j = (me + 1 + op->next) % n;
            char *buf = op->out + op->off[j];
            if (op->kind == TC_VX_SCATTERV)
                rc = scattered(op, j);
            else if (op->kind == TC_VX_GATHERV)
                rc = gathered(op, j, buf, op->len[j]);
            else
                rc = tc_vx_take(op, j, op->kind == TC_VX_ALLTOALLV ? (size_t)me : 0, buf,
                                op->len[j], 0);
            if (rc != TC_OK) return rc;
        }
        tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* an exposed buffer is read or written until the others finish */
        if (op->cookie && !tc_shm_all_done(s, op->seq)) return TC_INPROGRESS;
        op->state = ST_DONE;
        /* one that failed copying out of or into ours fails us too */
        if (op->cookie) return tc_cctl_peer_failed(s, op->seq);
        /* fall through */
    default: return TC_OK;
    }
}

/* One node: node_steps, where a failure of ours after we exposed a buffer
 * (a count that differs) is said to the local processes at once and
 * returned once none of them copies into or out of it any more (after our
 * item, nobody waits for anything of ours: they all finish). */
static tc_status_t node_work(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    if (op->fail == TC_OK) {
        const tc_status_t rc = node_steps(op);
        if (rc >= 0 || !op->cookie || op->state == ST_DONE) return rc;
        op->fail = tc_cctl_fail_exposed(s, op->seq, rc);
    }
    return tc_shm_all_done(s, op->seq) ? op->fail : TC_INPROGRESS;
}

tc_status_t tc_vexchange_work(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_status_t rc;
    if (op->rooted) return tc_vroot_work(op);
    if (!op->multi) return node_work(op);
    switch (op->state) {
    case ST_START:
        if ((rc = expose(op)) != TC_OK) return rc;
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        rc = op->kind == TC_VX_ALLTOALLV ? sliced_alltoallv(op) : sliced_allgatherv(op);
        if (rc != TC_OK) return rc;
        if (s) tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* an exposed buffer is read or written until the others finish */
        if (s && (op->cookie || op->kind == TC_VX_ALLGATHERV) && !tc_shm_all_done(s, op->seq))
            return TC_INPROGRESS;
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

tc_status_t tc_vexchange_drain(tc_vexchange_t *op)
{
    if (op->ctx->map.nnodes < 2) return TC_OK; /* (nothing between nodes) */
    if (op->kind <= TC_VX_SCATTERV) return tc_vroot_drain(op);
    if (!op->multi || !op->rank_at || !op->mlen || !op->xtab)
        return TC_ERR_NOMEM; /* (its init failed: nothing of it went) */
    if (!op->netup) {        /* failed before our messages went: they go now */
        op->posted = 1;
        if (op->kind == TC_VX_ALLTOALLV)
            TC_RETURN_IF_FAILED(post_alltoallv(op, TC_ERR_REMOTE)); /* (out empty) */
        else
            TC_RETURN_IF_FAILED(op->relay ? post_relay(op) : post_direct(op));
    }
    TC_RETURN_IF_FAILED(relay_forward(op));
    return tc_pieces_progress(&op->net);
}

void tc_vexchange_fini(tc_vexchange_t *op)
{
    tc_region_release(op->ctx->shm, op->keep, op->cookie, op->state == ST_DONE);
    if (op->tcookie) tc_region_destroy(op->ctx->shm, op->tcookie);
    op->cookie = op->tcookie = 0;
    tc_pieces_fini(&op->net); /* (a failure may leave some in flight) */
    free(op->relayp);
    op->relayp = NULL;
    op->nrelay = op->fwd = 0;
    free(op->cookies);
    free(op->tcookies);
    free(op->rank_at);
    free(op->xtab);
    free(op->mlen);
    op->cookies = op->tcookies = NULL;
    op->xtab = op->mlen = NULL;
    op->rank_at = NULL;
    op->sstage = NULL;
    tc_vroot_fini(op);
}
