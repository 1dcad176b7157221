/* coll/reduce -- see reduce.h. */
#include "reduce.h"
#include "plan.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

#include "tags.h"

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };

/* An eager Reduce: these fields only (eager_work, fini); clearing the
 * whole operation was a tenth of a small Reduce. */
static tc_status_t init_eager(tc_reduce_t *op, tc_ctx_t *ctx, const void *in, void *out,
                              size_t count, const tc_rtype_t *t, int root, uint64_t seq,
                              const tc_tune_t *tune)
{
    op->ctx = ctx;
    op->t = *t;
    op->in = in;
    op->count = count;
    op->root = root;
    op->am_root = ctx->map.rank == root;
    op->out = op->am_root ? out : NULL;
    op->seq = seq;
    op->state = ST_START;
    op->cico = 1;
    op->tune = *tune;
    op->f.acc = op->f.in = NULL;
    op->eager_done = 0;
    op->eager = 1;
    tc_ctx_eager(ctx, seq, &op->eager_slot, &op->eager_wait);
    return TC_OK;
}

/* Single copy: the pieces every local process folds (see reduce.h). */
static void init_pieces(tc_reduce_t *op)
{
    const tc_ctx_t *ctx = op->ctx;
    const tc_nodemap_t *m = &ctx->map;
    const tc_rtype_t *t = &op->t;
    int nw = m->lsize;
    op->wid = m->lrank;
    /* Several nodes: the segment is the leaders' pipeline unit and must be
     * the same on every node, whatever its number of workers. */
    size_t seg = tc_fold_segsize(ctx, t, op->count, op->multi ? 1 : nw);
    op->chain = op->net == TC_ALG_CHAIN;
    if (op->chain && !ctx->cfg->red_segsize) /* TC_NET_SEG (see ctx.h) */
        seg = (TC_NET_SEG / t->extent) ? (TC_NET_SEG / t->extent) : 1;
    tc_part_init(&op->part, op->count, seg, nw);
    /* One node: the root writes its pieces into its own buffer, the others
     * pay an extra single-copy write: the root takes twice their share
     * (measured at np=2, 128 KiB-16 MiB: 1:1 gave 0.85-1.00x native,
     * 3:2 1.05-1.47x, 2:1 1.19-1.38x, 3:1 1.11-1.27x). */
    if (!op->multi) tc_part_weigh(&op->part, op->root_local, 2, 1);
    /* Small vectors on one node: the root reads and folds everything (the
     * others only expose their inputs), one synchronisation fewer on its
     * path (measured at np=2, 16 KiB: 4.2-4.3 us against 5.1 with shares;
     * from 32 KiB shares win: 7.8 against 9.1-9.7 us). */
    if (!op->multi && tc_span(t, op->count) <= TC_REDUCE_SOLO_MAX)
        tc_part_weigh(&op->part, op->root_local, 1, 0);
    else
        tc_part_weigh(&op->part, op->first, 2, 1); /* the leader writes its pieces locally too */
}

/* Single copy: the cookies' table, the fold scratch, and the leaders'
 * buffers (@lead: this process is its node's leader). */
static tc_status_t init_buffers(tc_reduce_t *op, int lead, const void *in, const void *out)
{
    tc_ctx_t *ctx = op->ctx;
    const tc_nodemap_t *m = &ctx->map;
    const size_t span = tc_span(&op->t, op->count);
    if (ctx->shm && !(op->cookies = calloc(2 * (size_t)m->lsize, sizeof(uint64_t))))
        return TC_ERR_NOMEM;
    if (op->wid >= 0 && ctx->shm && tc_fold_scratch_get(ctx, &op->f) != 0) return TC_ERR_NOMEM;
    /* a middle node of the chain: what arrives, folded with ours, before it goes on */
    if (op->chain && lead && m->node != op->llroot &&
        m->node != (op->llroot + m->nnodes - 1) % m->nnodes &&
        !(op->acc = tc_ctx_buf(ctx, TC_BUF_NET, span)))
        return TC_ERR_NOMEM;
    if (!op->multi || !lead) return TC_OK;
    if (m->lsize > 1) {
        if (!(op->nb = tc_ctx_buf(ctx, TC_BUF_NODE, 2 * span))) return TC_ERR_NOMEM;
        op->src = op->nb;
    } else if (op->am_root && in == out) {
        /* no MPI_IN_PLACE at a non-zero root of the leaders' comm
         * (MPICH 4.0.2 crashes there): reduce from a copy */
        if (!(op->nb = tc_ctx_buf(ctx, TC_BUF_NODE, span))) return TC_ERR_NOMEM;
        memcpy(op->nb, in, span);
        op->src = op->nb;
    } else {
        op->src = in;
    }
    return TC_OK;
}

/* The owners' segments: as many as keep a piece (a block of a segment)
 * at TC_OWN_PIECE bytes or more, at most TC_OWN_SEGS. */
static void owners_plan(tc_reduce_t *op)
{
    const size_t M = (size_t)op->ctx->map.nnodes - 1, span = tc_span(&op->t, op->count);
    size_t k = span / (M * TC_OWN_PIECE);
    k = k < 1 ? 1 : k > TC_OWN_SEGS ? TC_OWN_SEGS : k;
    op->oseg = (op->count + k - 1) / k;
    op->onseg = (int)((op->count + op->oseg - 1) / op->oseg);
}

tc_status_t tc_reduce_init(tc_reduce_t *op, tc_ctx_t *ctx, const void *in, void *out, size_t count,
                           const tc_rtype_t *t, int root, int may_block, int alt)
{
    const tc_nodemap_t *m = &ctx->map;
    const size_t span = tc_span(t, count);
    const uint64_t seq = ++ctx->seq;
    tc_tune_t tune;
    int cico = tc_tune_choose(&tune, ctx, TC_TUNE_REDUCE, span, tc_fold_uses_cico(ctx, span), seq);
    if (cico &&
        (tc_ctx_eager_reduce_fits(ctx, span) || (tune.bucket < 0 && tc_ctx_eager_fits(ctx, span))))
        return init_eager(op, ctx, in, out, count, t, root, seq, &tune);
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->t = *t;
    op->in = in;
    op->count = count;
    op->root = root;
    op->may_block = may_block;
    op->am_root = m->rank == root;
    op->out = op->am_root ? out : NULL;
    op->root_local = m->node_of[root] == m->node ? m->lrank_of[root] : -1;
    op->seq = seq;
    op->multi = m->nnodes > 1;
    op->first = op->multi ? m->leader_lrank : op->root_local; /* the elected leader (topo/nic) */
    op->llroot = m->node_of[root];
    op->net = op->multi ? tc_plan_reduce_net(ctx, span, alt) : TC_ALG_NODE;
    op->halving = op->net == TC_ALG_HALVING; /* (the chain: single copy only, init_pieces) */
    if ((op->owners = op->net == TC_ALG_OWNERS)) owners_plan(op);
    op->cico = cico;
    op->tune = tune;
    op->wid = -1;
    for (int w = 0; w < TC_REDUCE_WINDOW; w++) op->rreq[w] = op->sreq[w] = MPI_REQUEST_NULL;
    int lead = m->lrank == op->first;
    if (op->cico) {
        /* the folding process needs a node buffer when it is not the root */
        if (op->multi && lead && !op->am_root && !(op->nb = tc_ctx_buf(ctx, TC_BUF_NODE, 2 * span)))
            return TC_ERR_NOMEM;
        if (!op->multi && ctx->shm && tc_fold_scratch_get(ctx, &op->f) != 0) return TC_ERR_NOMEM;
        return TC_OK;
    }
    init_pieces(op);
    return init_buffers(op, lead, in, out);
}

/* ---- leaders' network part (first leader, several nodes) ------------------ */

/* The leader's result buffer for segment data at byte offset @off. */
static char *final_at(tc_reduce_t *op, size_t off)
{
    if (op->am_root) return op->out + off;
    if (op->root_local >= 0) return op->nb + tc_span(&op->t, op->count) + off;
    return NULL;
}

/* The chain (tc_plan_chain): leaders from the root's node (position 0)
 * to the farthest (N - 1).  Segment i leaves the tail as it is folded on
 * its node, and each leader on the way receives it from the next position,
 * folds its own node's segment in and sends it on; the root's leader folds
 * it into the final result.  Receives are posted a window ahead.
 * red_posted counts the receives posted, red_done the segments folded (and
 * sent on), sent the sends completed.  Never blocks. */
static tc_status_t chain_network(tc_reduce_t *op, size_t avail)
{
    tc_ctx_t *c = op->ctx;
    const int W = TC_REDUCE_WINDOW, N = c->map.nnodes;
    const int pos = (c->map.node - op->llroot + N) % N;
    const int up = (op->llroot + pos + 1) % N, down = (op->llroot + pos - 1 + N) % N;
    const size_t nseg = op->part.nseg, ext = op->t.extent;
    int flag, rc;
    /* a middle leader folds into its accumulator, the root's into the result */
    char *acc = pos == 0 ? final_at(op, 0) : op->acc;
    /* MPI_IN_PLACE at a root that leads: the result lands over the input,
     * which the node's workers read until they folded the segment */
    const size_t lim = pos == 0 && op->am_root && op->in == op->out ? avail : nseg;
    for (;;) {
        int moved = 0;
        while (pos < N - 1 && op->red_posted < lim && op->red_posted - op->sent < (size_t)W) {
            size_t i = op->red_posted, first = i * op->part.seg;
            size_t n = op->count - first < op->part.seg ? op->count - first : op->part.seg;
            rc = tc_status_mpi(PMPI_Irecv(acc + first * ext, (int)n, op->t.dt, up, TC_TAG_RCHAIN,
                                          c->llcomm, &op->rreq[i % W]));
            if (rc != TC_OK) return rc;
            op->red_posted++;
            moved = 1;
        }
        if (op->red_done < avail && op->red_done - op->sent < (size_t)W) {
            size_t i = op->red_done, first = i * op->part.seg;
            size_t n = op->count - first < op->part.seg ? op->count - first : op->part.seg;
            char *mine = (char *)op->src + first * ext, *out = mine;
            flag = 1;
            if (pos < N - 1 && (rc = tc_status_mpi(PMPI_Test(&op->rreq[i % W], &flag,
                                                             MPI_STATUS_IGNORE))) != TC_OK)
                return rc;
            if (flag) {
                if (pos < N - 1) { /* what came from upstream, with ours folded in */
                    out = acc + first * ext;
                    if ((rc = tc_op_apply(&op->t, mine, out, n)) != TC_OK) return rc;
                }
                if (pos > 0) {
                    rc = tc_status_mpi(PMPI_Isend(out, (int)n, op->t.dt, down, TC_TAG_RCHAIN,
                                                  c->llcomm, &op->sreq[i % W]));
                    if (rc != TC_OK) return rc;
                }
                op->red_done++;
                moved = 1;
            }
        }
        while (op->sent < op->red_done) {
            if (pos > 0) {
                if ((rc = tc_status_mpi(
                         PMPI_Test(&op->sreq[op->sent % W], &flag, MPI_STATUS_IGNORE))) != TC_OK)
                    return rc;
                if (!flag) break;
            }
            op->sent++;
            moved = 1;
        }
        if (!moved) return TC_OK;
    }
}

/* Rabenseifner's reduce between the N leaders (tc_plan_reduce_net), on
 * virtual ranks v = node - root's node (mod N), so the root's leader is
 * v = 0.  With N' the power of two at most N and r = N - N': the last 2r
 * leaders pair up first, the odd one of each pair sending its vector to
 * the even one, which folds it (step 0); the N' left (new ranks u: v below
 * N' - r, then the pairs' even ones) reduce-scatter by recursive halving
 * (steps 1 .. L, L = log2 N', distance N' / 2 down to 1: u keeps the half
 * of its blocks [lo, lo + 2d) on its side of bit d, sends the other half
 * to u ^ d and folds what u ^ d sends of its own), each ending with block
 * u of N', then gather them at u = 0 along a binomial tree (steps L + 1 ..
 * 2L, distance 1 up to N' / 2: u with bit d set sends its blocks [u, u +
 * d) to u - d and is done, the others receive [u + d, u + 2d)).  Block i
 * is elements [count i / N', count (i + 1) / N').  One step at a time,
 * both its messages posted together. */

typedef struct hstep {
    int peer;              /* llcomm rank; -1: no step (skipped) */
    size_t sfirst, scount; /* elements sent */
    size_t rfirst, rcount; /* elements received */
    int fold;              /* 1: the received ones are folded into acc, 0: land there */
    int last;              /* 1: this process's last step */
} hstep_t;

/* Step @k of this leader's halving into *@st: 1, or 0 past its last. */
static int halving_step(const tc_reduce_t *op, int k, hstep_t *st)
{
    const int N = op->ctx->map.nnodes;
    const int v = (op->ctx->map.node - op->llroot + N) % N;
    int P = 1, L = 0;
    while (2 * P <= N) P *= 2, L++;
    const int r = N - P, tail = P - r; /* pairs from v = tail */
    const size_t n = op->count;
#define HBLK(i)  (n * (size_t)(i) / (size_t)P)
#define HNODE(w) (((w) + op->llroot) % N)
    /* the virtual rank of new rank u */
#define HV(u) ((u) < tail ? (u) : tail + 2 * ((u)-tail))
    memset(st, 0, sizeof(*st));
    st->peer = -1;
    if (k == 0) {
        if (v < tail) return 1; /* (no step 0) */
        st->fold = 1;
        st->last = (v - tail) & 1;
        if (st->last) { /* the odd one: our vector to the even one, then done */
            st->peer = HNODE(v - 1);
            st->scount = n;
        } else {
            st->peer = HNODE(v + 1);
            st->rcount = n;
        }
        return 1;
    }
    if ((v - tail) & 1 && v >= tail) return 0; /* gone at step 0 */
    const int u = v < tail ? v : tail + (v - tail) / 2;
    if (k <= L) { /* recursive halving, distance d */
        const int d = P >> k, lo = u & ~(2 * d - 1), keep = (u & d) ? lo + d : lo,
                  give = (u & d) ? lo : lo + d;
        st->peer = HNODE(HV(u ^ d));
        st->sfirst = HBLK(give), st->scount = HBLK(give + d) - HBLK(give);
        st->rfirst = HBLK(keep), st->rcount = HBLK(keep + d) - HBLK(keep);
        st->fold = 1;
        return 1;
    }
    if (k > 2 * L) return 0;
    const int d = 1 << (k - L - 1);
    if (u & (d - 1)) return 0; /* (sent at an earlier step) */
    if (u & d) {               /* our blocks [u, u + d) to u - d: done */
        st->peer = HNODE(HV(u - d));
        st->sfirst = HBLK(u), st->scount = HBLK(u + d) - HBLK(u);
        st->last = 1;
    } else {
        st->peer = HNODE(HV(u + d));
        st->rfirst = HBLK(u + d), st->rcount = HBLK(u + 2 * d) - HBLK(u + d);
    }
    return 1;
#undef HBLK
#undef HNODE
#undef HV
}

/* The halving, once the node's vector is complete (@avail == @total
 * segments; then red_done = @total): never blocks. */
static tc_status_t halving_network(tc_reduce_t *op, size_t avail, size_t total)
{
    tc_ctx_t *c = op->ctx;
    const size_t ext = op->t.extent, span = tc_span(&op->t, op->count);
    int flag, rc;
    if (avail < total || op->red_done >= total) return TC_OK;
    if (op->red_posted < total) { /* our vector where the blocks are folded (but an odd one's) */
        hstep_t st0;
        halving_step(op, 0, &st0);
        char *fin = final_at(op, 0);
        op->red_posted = total; /* (started: cico_work folds the node once) */
        if (!st0.last) {        /* (the odd one of a pair sends its node's vector as it is) */
            op->acc = fin ? fin : tc_ctx_buf(c, TC_BUF_NET, span);
            op->htmp = tc_ctx_buf(c, TC_BUF_TREE_TMP, span);
            if (!op->acc || !op->htmp) return TC_ERR_NOMEM;
            memcpy(op->acc, op->src, span);
        }
    }
    for (;;) {
        hstep_t st;
        if (!halving_step(op, op->hstep, &st)) break;
        if (st.peer < 0) {
            op->hstep++;
            continue;
        }
        const char *sbuf = (op->acc ? op->acc : op->src) + st.sfirst * ext;
        char *rbuf = st.fold ? op->htmp : op->acc + st.rfirst * ext;
        if (!op->hposted) {
            if (st.rcount &&
                (rc = tc_status_mpi(PMPI_Irecv(rbuf, (int)st.rcount, op->t.dt, st.peer,
                                               TC_TAG_RHALF, c->llcomm, &op->rreq[0]))) != TC_OK)
                return rc;
            if (st.scount &&
                (rc = tc_status_mpi(PMPI_Isend(sbuf, (int)st.scount, op->t.dt, st.peer,
                                               TC_TAG_RHALF, c->llcomm, &op->sreq[0]))) != TC_OK)
                return rc;
            op->hposted = 1;
        }
        if ((rc = tc_status_mpi(PMPI_Test(&op->rreq[0], &flag, MPI_STATUS_IGNORE))) != TC_OK)
            return rc;
        if (!flag) return TC_OK;
        if ((rc = tc_status_mpi(PMPI_Test(&op->sreq[0], &flag, MPI_STATUS_IGNORE))) != TC_OK)
            return rc;
        if (!flag) return TC_OK;
        op->hposted = 0;
        if (st.fold && st.rcount &&
            (rc = tc_op_apply(&op->t, op->htmp, op->acc + st.rfirst * ext, st.rcount)) != TC_OK)
            return rc;
        op->hstep++;
        if (st.last) break;
    }
    op->red_posted = op->red_done = total;
    return TC_OK;
}

/* The block owners (TC_ALG_OWNERS), on virtual ranks v = node - root's
 * node (mod N) as the halving's: the vector goes in onseg segments of
 * oseg elements, segment s of ns elements in M = N - 1 blocks, block b
 * elements [ns b / M, ns (b + 1) / M) of it, owned by v = b + 1.  For
 * each segment in turn an owner sends every other owner its node's piece
 * of that owner's block and receives theirs of its own (the exchange),
 * folds them into its node's piece and sends the block to the root's
 * leader, which folds the M blocks of every segment into its node's
 * vector as they land.  The next segment's exchange goes out with the
 * block just sent, so the root's link, which carries the vector once,
 * stays busy: about (1 + 1 / onseg) n / L, where the halving's carries
 * 2 (N' - 1) / N' n.  Once the node's vector is complete; never blocks. */

/* Elements [*first, *first + *n) of block @b of segment @s. */
static void owners_block(const tc_reduce_t *op, int s, int b, size_t *first, size_t *n)
{
    const size_t M = (size_t)op->ctx->map.nnodes - 1, s0 = (size_t)s * op->oseg;
    const size_t ns = op->count - s0 < op->oseg ? op->count - s0 : op->oseg;
    *first = s0 + ns * (size_t)b / M;
    *n = s0 + ns * (size_t)(b + 1) / M - *first;
}

/* An owner's virtual rank v (its block is v - 1). */
static int owners_v(const tc_reduce_t *op)
{
    const int N = op->ctx->map.nnodes;
    return (op->ctx->map.node - op->llroot + N) % N;
}

/* Elements in an owner's receive slot: a block's most. */
static size_t owners_slot(const tc_reduce_t *op)
{
    return op->oseg / (size_t)(op->ctx->map.nnodes - 1) + 1;
}

/* An owner's slot for owner @w's piece of its block (in htmp). */
static char *owners_piece(const tc_reduce_t *op, int w)
{
    return op->htmp + (size_t)(w - 1) * owners_slot(op) * op->t.extent;
}

/* The root's leader: every block of every segment posted at once, folded
 * into the result as it lands. */
static tc_status_t owners_root(tc_reduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    const int N = c->map.nnodes, M = N - 1;
    const size_t ext = op->t.extent;
    int rc;
    if (!op->oxp) {
        for (int s = 0; s < op->onseg; s++)
            for (int b = 0; b < M; b++) {
                size_t first, n;
                owners_block(op, s, b, &first, &n);
                if ((rc = tc_status_mpi(PMPI_Irecv(op->htmp + first * ext, (int)n, op->t.dt,
                                                   (op->llroot + b + 1) % N, TC_TAG_ROWN, c->llcomm,
                                                   &op->oreq[s * M + b]))) != TC_OK)
                    return rc;
            }
        op->oxp = op->onseg;
    }
    for (int i = 0; i < op->onreq; i++) { /* (a completed receive's request is null) */
        int flag;
        size_t first, n;
        if (op->oreq[i] == MPI_REQUEST_NULL) continue;
        if ((rc = tc_status_mpi(PMPI_Test(&op->oreq[i], &flag, MPI_STATUS_IGNORE))) != TC_OK)
            return rc;
        if (!flag) continue;
        owners_block(op, i / M, i % M, &first, &n);
        if ((rc = tc_op_apply(&op->t, op->htmp + first * ext, op->acc + first * ext, n)) != TC_OK)
            return rc;
        op->osd++;
    }
    return TC_OK;
}

/* An owner, v = b + 1: segment oxp's exchange posted once the segment
 * before it is folded and on its way to the root's leader. */
static tc_status_t owners_exchange(tc_reduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    const int N = c->map.nnodes, M = N - 1, v = owners_v(op);
    const size_t ext = op->t.extent;
    int j = 0, rc;
    for (int w = 1; w <= M; w++) {
        size_t first, n;
        if (w == v) continue;
        owners_block(op, op->oxp, v - 1, &first, &n); /* theirs of our block */
        if ((rc = tc_status_mpi(PMPI_Irecv(owners_piece(op, w), (int)n, op->t.dt,
                                           (op->llroot + w) % N, TC_TAG_ROWN, c->llcomm,
                                           &op->oreq[j++]))) != TC_OK)
            return rc;
        owners_block(op, op->oxp, w - 1, &first, &n); /* ours of theirs */
        if ((rc = tc_status_mpi(PMPI_Isend(op->src + first * ext, (int)n, op->t.dt,
                                           (op->llroot + w) % N, TC_TAG_ROWN, c->llcomm,
                                           &op->oreq[j++]))) != TC_OK)
            return rc;
    }
    op->oxp++;
    return TC_OK;
}

static tc_status_t owners_block_send(tc_reduce_t *op)
{
    const int M = op->ctx->map.nnodes - 1, v = owners_v(op);
    const size_t ext = op->t.extent;
    size_t first, n;
    int rc;
    owners_block(op, op->oxd, v - 1, &first, &n);
    char *blk = op->acc + first * ext;
    memcpy(blk, op->src + first * ext, tc_span(&op->t, n));
    for (int w = 1; w <= M; w++) /* (commutative: any order) */
        if (w != v && (rc = tc_op_apply(&op->t, owners_piece(op, w), blk, n)) != TC_OK) return rc;
    rc = tc_status_mpi(PMPI_Isend(blk, (int)n, op->t.dt, op->llroot, TC_TAG_ROWN, op->ctx->llcomm,
                                  &op->oreq[2 * (M - 1) + op->oxd]));
    if (rc != TC_OK) return rc;
    op->oxd++;
    return TC_OK;
}

/* *@all = 1 if the @n requests at @r all completed (PMPI_Test each: null once complete). */
static tc_status_t tests_all(MPI_Request *r, int n, int *all)
{
    *all = 1;
    for (int i = 0; i < n; i++) {
        int flag = 1;
        if (r[i] != MPI_REQUEST_NULL)
            TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&r[i], &flag, MPI_STATUS_IGNORE)));
        if (!flag) *all = 0;
    }
    return TC_OK;
}

static tc_status_t owners_network(tc_reduce_t *op, size_t avail, size_t total)
{
    tc_ctx_t *c = op->ctx;
    const int N = c->map.nnodes, M = N - 1;
    int flag, rc;
    if (avail < total || op->red_done >= total) return TC_OK;
    if (!op->oreq) { /* the node's vector is complete: start */
        const size_t span = tc_span(&op->t, op->count);
        const int root = c->map.node == op->llroot;
        op->onreq = root ? op->onseg * M : 2 * (M - 1) + op->onseg;
        size_t tmp = root ? span : (size_t)M * owners_slot(op) * op->t.extent;
        if (!(op->oreq = malloc((size_t)op->onreq * sizeof(MPI_Request)))) return TC_ERR_NOMEM;
        for (int i = 0; i < op->onreq; i++) op->oreq[i] = MPI_REQUEST_NULL;
        op->acc = root && final_at(op, 0) ? final_at(op, 0) : tc_ctx_buf(c, TC_BUF_NET, span);
        op->htmp = tc_ctx_buf(c, TC_BUF_TREE_TMP, tmp);
        if (!op->acc || !op->htmp) return TC_ERR_NOMEM;
        op->red_posted = total; /* (started: cico_work folds the node once) */
        if (root) memcpy(op->acc, op->src, span);
    }
    if (c->map.node == op->llroot) {
        if ((rc = owners_root(op)) != TC_OK) return rc;
        if (op->osd < op->onreq) return TC_OK;
    } else {
        for (;;) {
            if (op->oxp == op->oxd && op->oxp < op->onseg && (rc = owners_exchange(op)) != TC_OK)
                return rc;
            if (op->oxd == op->onseg) break;
            if ((rc = tests_all(op->oreq, 2 * (M - 1), &flag)) != TC_OK) return rc;
            if (!flag) return TC_OK;
            if ((rc = owners_block_send(op)) != TC_OK) return rc;
        }
        if ((rc = tests_all(op->oreq + 2 * (M - 1), op->onseg, &flag)) != TC_OK) return rc;
        if (!flag) return TC_OK;
    }
    op->red_done = total;
    return TC_OK;
}

static tc_status_t leaders_network(tc_reduce_t *op, size_t avail, size_t total)
{
    tc_ctx_t *c = op->ctx;
    const int W = TC_REDUCE_WINDOW;
    int flag, rc;
    if (op->chain) return chain_network(op, avail);
    if (op->halving) return halving_network(op, avail, total);
    if (op->owners) return owners_network(op, avail, total);
    while (op->red_posted < avail && op->red_posted - op->red_done < (size_t)W) {
        size_t i = op->red_posted, first = i * op->part.seg;
        size_t n = op->count - first < op->part.seg ? op->count - first : op->part.seg;
        size_t off = first * op->t.extent;
        if (op->may_block) {
            /* A blocking call: the leader has nothing else to do meanwhile
             * (the workers fold the next segments on their own), and
             * Open MPI's nonblocking reduction, progressed only by our
             * tests, was 2-3x slower when oversubscribed. */
            rc = tc_status_mpi(PMPI_Reduce(op->src + off, final_at(op, off), (int)n, op->t.dt,
                                           op->t.op, op->llroot, c->llcomm));
            if (rc != TC_OK) return rc;
            op->red_posted++;
            op->red_done++;
            continue;
        }
        rc = tc_status_mpi(PMPI_Ireduce(op->src + off, final_at(op, off), (int)n, op->t.dt,
                                        op->t.op, op->llroot, c->llcomm, &op->rreq[i % W]));
        if (rc != TC_OK) return rc;
        op->red_posted++;
    }
    while (op->red_done < op->red_posted) {
        if ((rc = tc_status_mpi(
                 PMPI_Test(&op->rreq[op->red_done % W], &flag, MPI_STATUS_IGNORE))) != TC_OK)
            return rc;
        if (!flag) break;
        op->red_done++;
    }
    return TC_OK;
}

/* ---- small vectors --------------------------------------------------------- */

static tc_status_t cico_work(tc_reduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    size_t span = tc_span(&op->t, op->count);
    int lead = c->map.lrank == op->first, rc;
    if (!op->multi) {
        /* One node: process j folds piece j of every slot and puts the
         * result over its own input's piece j (only it reads piece j);
         * the root copies the pieces out. */
        if (!tc_fold_all_posted(s, op->seq, NULL, NULL)) return TC_INPROGRESS;
        if (!op->folded) {
            /* the root keeps its piece; the others publish theirs for it */
            rc = tc_fold_slots_share(s, &op->t, op->count, op->am_root ? op->out : NULL,
                                     !op->am_root, &op->f);
            if (rc != TC_OK) return rc;
            op->folded = 1;
        }
        if (!op->am_root) return TC_OK;
        return tc_fold_slots_gather(s, &op->t, op->count, op->out, &op->got);
    }
    if (lead) {
        if (op->red_posted == 0) {
            char *nb = op->am_root ? op->out : op->nb;
            if (s) {
                if (!tc_fold_all_posted(s, op->seq, NULL, NULL)) return TC_INPROGRESS;
                if ((rc = tc_fold_slots(s, &op->t, 0, op->count, nb)) != TC_OK) return rc;
            } else if (nb != op->in) {
                memcpy(nb, op->in, span);
            }
            /* the root reduces into its own buffer from a copy (no IN_PLACE) */
            if (op->am_root) {
                if (!op->nb && !(op->nb = tc_ctx_buf(op->ctx, TC_BUF_NODE, span)))
                    return TC_ERR_NOMEM;
                memcpy(op->nb, nb, span);
            }
            op->src = op->nb;
            op->part.seg = op->count; /* one segment */
        }
        if ((rc = leaders_network(op, 1, 1)) != TC_OK) return rc;
        if (op->red_done < 1) return TC_INPROGRESS;
        if (s && op->root_local >= 0 && !op->am_root) {
            /* the root reads the result from our slots (nobody else does) */
            memcpy(tc_shm_cico(s, s->me, 0), final_at(op, 0), span);
            atomic_store_explicit(&tc_cctl(s, s->me)->prog, 1, memory_order_release);
        }
        return TC_OK;
    }
    if (!op->am_root) return TC_OK;
    /* Acquire: pairs with the leader's release of prog. */
    if (atomic_load_explicit(&tc_cctl(s, op->first)->post_seq, memory_order_acquire) != op->seq ||
        atomic_load_explicit(&tc_cctl(s, op->first)->prog, memory_order_acquire) < 1)
        return TC_INPROGRESS;
    memcpy(op->out, tc_shm_cico(s, op->first, 0), span);
    s->bytes_cico += span;
    return TC_OK;
}

/* ---- single copy ------------------------------------------------------------ */

/* Single copy, several nodes: the node's leader folds its own pieces,
 * waits for the workers' and runs the leaders' network part. */
static tc_status_t sc_leader_work(tc_reduce_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t nseg = op->part.nseg;
    size_t avail = nseg;
    tc_status_t rc;
    if (s) {
        /* our own pieces first, one segment per step (the workers fold
         * theirs meanwhile; the network step below may block) */
        if (op->folded < nseg) {
            size_t first, n;
            tc_part_piece(&op->part, op->folded, op->wid, &first, &n);
            rc = tc_fold_piece(s, &op->t, op->cookies, op->in, first, n, op->nb, NULL, 0, &op->f);
            if (rc != TC_OK) return rc;
            op->folded++;
        }
        avail = op->folded;
        /* segments every worker has pushed into our node buffer */
        for (int w = 0; w < s->nlocal; w++) {
            if (w == s->me) continue;
            /* Acquire: pairs with the worker's release after its write. */
            size_t p = (size_t)atomic_load_explicit(&tc_cctl(s, w)->prog, memory_order_acquire);
            if (p < avail) avail = p;
        }
    }
    if ((rc = leaders_network(op, avail, nseg)) != TC_OK) return rc;
    if (s && op->root_local >= 0 && !op->am_root) /* Release: final segments for the root */
        atomic_store_explicit(&tc_cctl(s, s->me)->prog, op->red_done, memory_order_release);
    /* along a chain, our sends downstream must be complete too */
    return (op->chain ? op->sent : op->red_done) < nseg ? TC_INPROGRESS : TC_OK;
}

/* Single copy, several nodes: a worker (the paper's second leader) folds
 * its pieces into the leader's buffer; at the root, it then copies the
 * final segments out of it. */
static tc_status_t sc_worker_work(tc_reduce_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t nseg = op->part.nseg;
    if (op->folded < nseg) {
        size_t first, n;
        tc_part_piece(&op->part, op->folded, op->wid, &first, &n);
        tc_status_t rc = tc_fold_piece(s, &op->t, op->cookies, op->in, first, n, NULL,
                                       &op->cookies[s->nlocal + op->first], 1, &op->f);
        if (rc != TC_OK) return rc;
        op->folded++;
        /* Release: our write into the leader's buffer before the report. */
        atomic_store_explicit(&tc_cctl(s, s->me)->prog, op->folded, memory_order_release);
    }
    if (op->am_root) { /* copy the final segments out of the leader's buffer */
        size_t fin =
            (size_t)atomic_load_explicit(&tc_cctl(s, op->first)->prog, memory_order_acquire);
        if (op->part.seg && fin > (op->count + op->part.seg - 1) / op->part.seg)
            return TC_ERR_PROTO; /* a peer's word: at most every segment */
        if (fin > op->got) {
            size_t a = op->got * op->part.seg,
                   b = fin * op->part.seg < op->count ? fin * op->part.seg : op->count;
            size_t off = a * op->t.extent, span = tc_span(&op->t, b - a);
            TC_RETURN_IF_FAILED(tc_region_read(s, op->cookies[s->nlocal + op->first],
                                               tc_span(&op->t, op->count) + off, op->out + off,
                                               span));
            op->got = fin;
        }
        if (op->got < nseg) return TC_INPROGRESS;
    }
    return op->folded < nseg ? TC_INPROGRESS : TC_OK;
}

static tc_status_t sc_work(tc_reduce_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t nseg = op->part.nseg;
    if (s && !tc_fold_all_posted(s, op->seq, op->cookies, op->cookies + s->nlocal))
        return TC_INPROGRESS;
    if (op->multi) return op->ctx->map.lrank == op->first ? sc_leader_work(op) : sc_worker_work(op);
    /* one node: every process writes its pieces into the root's buffer */
    if (op->folded < nseg) {
        size_t first, n;
        tc_part_piece(&op->part, op->folded, op->wid, &first, &n);
        tc_status_t rc =
            tc_fold_piece(s, &op->t, op->cookies, op->in, first, n, op->out,
                          &op->cookies[s->nlocal + op->first], op->am_root ? 0 : 1, &op->f);
        if (rc != TC_OK) return rc;
        op->folded++;
    }
    return op->folded < nseg ? TC_INPROGRESS : TC_OK;
}

/* Eager (one node; tc_ctx_eager): every process but the root copies its
 * operand into its item and tags it, the root folds them as their pieces
 * land, reading its own operand in place.  The others return at once: a
 * later writer of the item waits for the root to have finished this call.
 * A tuned call (the CICO method of coll/tune above TOPOCOLL_REDUCE_CICO_MAX)
 * keeps the tuner's protocol: the tuner starts once every local process
 * finished the previous call, stamps the time, publishes its start, and
 * ends once all finished this one; the others complete only after its
 * start (so they have seen its choice word: tune.h). */
static tc_status_t eager_work(tc_reduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    const int tuner = tc_tune_waits(&op->tune, c);
    int rc;
    if (op->state == ST_START) {
        if (tuner && !op->tune.t0_ns) {
            if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
            tc_tune_start(&op->tune, c, op->seq);
            /* Release: the choice word before the start the others acquire. */
            atomic_store_explicit(&tc_cctl(s, 0)->tune_seq, op->seq, memory_order_release);
        }
        /* the root reads its own operand where it is */
        if (!op->am_root && (rc = tc_fold_eager_post(s, &op->t, op->count, op->in, op->eager_slot,
                                                     op->seq, op->eager_wait)) != TC_OK)
            return rc;
        op->state = ST_WORK;
    }
    if (op->state == ST_WORK) {
        if (op->am_root) {
            /* MPI_IN_PLACE: the fold runs in the context's scratch */
            if (op->in == op->out && !op->f.acc && tc_fold_scratch_get(c, &op->f) != 0)
                return TC_ERR_NOMEM;
            rc = tc_fold_eager(s, &op->t, op->count, op->eager_slot, op->seq, op->in, op->out,
                               op->f.acc, &op->eager_done);
            if (rc != TC_OK) return rc;
        }
        /* Acquire: pairs with the tuner's release of its start. */
        if (op->tune.bucket >= 0 && !tuner &&
            atomic_load_explicit(&tc_cctl(s, 0)->tune_seq, memory_order_acquire) < op->seq)
            return TC_INPROGRESS;
        tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
    }
    if (op->state == ST_ACK) {
        if (tuner && !tc_shm_all_done(s, op->seq)) return TC_INPROGRESS;
        tc_tune_end(&op->tune, c);
        op->state = ST_DONE;
    }
    return TC_OK;
}

tc_status_t tc_reduce_work(tc_reduce_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    int rc;
    if (op->eager) return eager_work(op);
    switch (op->state) {
    case ST_START:
        if (s) {
            if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
            tc_tune_start(&op->tune, op->ctx, op->seq); /* before our post: see tune.h */
            size_t span = tc_span(&op->t, op->count);
            if (op->cico) {
                memcpy(tc_shm_cico(s, s->me, 0), op->in, span);
                tc_fold_post(s, op->seq, 0, 0);
            } else {
                int lead = op->ctx->map.lrank == op->first;
                struct iovec iov = { (void *)op->in, span };
                unsigned in_rights = TC_RIGHT_READ;
                if (op->am_root && op->in == op->out && !op->multi) in_rights |= TC_RIGHT_WRITE;
                TC_RETURN_IF_FAILED(
                    tc_region_acquire(s, op->keep, &iov, 1, in_rights, &op->in_cookie));
                if (lead && op->multi) { /* the node buffer (and final result) */
                    iov.iov_base = op->nb;
                    iov.iov_len = 2 * span;
                    TC_RETURN_IF_FAILED(tc_region_create(s, &iov, 1, TC_RIGHT_READ | TC_RIGHT_WRITE,
                                                         &op->out_cookie));
                } else if (lead && op->in != op->out) { /* one node: the root's buffer */
                    iov.iov_base = op->out;
                    TC_RETURN_IF_FAILED(
                        tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_WRITE, &op->out_cookie));
                }
                tc_fold_post(s, op->seq, op->in_cookie,
                             op->out_cookie ? op->out_cookie : op->in_cookie);
            }
        }
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        rc = op->cico ? cico_work(op) : sc_work(op);
        if (rc != TC_OK) return rc;
        if (s) tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* Single copy: peers read our input (and write the root's buffer)
         * until they finish.  CICO: the next collective's start waits. */
        if (s && (!op->cico || tc_tune_waits(&op->tune, op->ctx)) && !tc_shm_all_done(s, op->seq))
            return TC_INPROGRESS;
        tc_tune_end(&op->tune, op->ctx);
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

void tc_reduce_fini(tc_reduce_t *op)
{
    if (op->eager) {
        tc_fold_scratch_put(&op->f);
        return;
    } /* holds nothing else */
    tc_shm_t *s = op->ctx->shm;
    /* after an error the chain's receives and sends may be in flight (off
     * the chain rreq holds the leaders' PMPI_Ireduce, which cannot be
     * cancelled) */
    if (op->chain || op->halving) tc_req_abandon(op->rreq, TC_REDUCE_WINDOW);
    if (op->oreq) tc_req_abandon(op->oreq, op->onreq);
    free(op->oreq);
    op->oreq = NULL;
    tc_req_abandon(op->sreq, TC_REDUCE_WINDOW);
    /* (the node buffer's region is never kept: the context's buffer) */
    tc_region_release(s, op->keep, op->in_cookie, op->state == ST_DONE);
    tc_region_release(s, op->keep, op->out_cookie, op->state == ST_DONE);
    op->in_cookie = op->out_cookie = 0;
    tc_fold_scratch_put(&op->f);
    free(op->cookies);
    op->cookies = NULL;
    op->nb = NULL;
}
