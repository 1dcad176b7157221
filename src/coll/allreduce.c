/* coll/allreduce -- see allreduce.h. */
#include "allreduce.h"

#include "../xfer/region.h"
#include "plan.h"

#include <stdlib.h>
#include <string.h>

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };
enum { NET_IDLE = 0, NET_REDUCE, NET_BCAST, NET_DONE };

#include "tags.h"

/* An eager Allreduce: the rest of its fields (eager_work, fini). */
static tc_status_t init_eager(tc_allreduce_t *op)
{
    op->state = ST_START;
    op->eager_done = 0;
    op->eager = 1;
    tc_ctx_eager(op->ctx, op->seq, &op->eager_slot, &op->eager_wait);
    return TC_OK;
}

size_t tc_allreduce_segsize(const tc_ctx_t *ctx, const tc_rtype_t *t, size_t count)
{
    const tc_nodemap_t *m = &ctx->map;
    if (m->nnodes == 1 || ctx->cfg->red_segsize)
        return tc_fold_segsize(ctx, t, count, m->nnodes > 1 ? ctx->minlocal : m->lsize);
    /* ring chunks of TC_NET_SEG (see ctx.h): a ring cuts a piece in N or k chunks */
    int cut = tc_plan_allreduce_net(ctx) == TC_ALG_SWITCHES ? m->swg_k : m->nnodes;
    size_t e = (size_t)TC_NET_SEG * (size_t)cut * (size_t)ctx->minlocal / t->extent;
    return e ? e : 1;
}

/* The rings a slice's segment goes through (tc_allreduce_t's stage): one
 * over the N nodes, or under S leaf switches of k nodes each
 * (TC_ALG_SWITCHES): reduce-scatter along the switch's ring (k - 1 steps,
 * after which the node at place p holds chunk p + 1 of k, folded over its
 * switch), the allreduce of that chunk along the ring of the nodes at
 * place p of every switch (2 (S - 1) steps), the allgather along the
 * switch's ring (k - 1 steps). */
static void ring_stages(tc_allreduce_t *op, int sw)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int r = op->ring_rank, N = m->nnodes;
    struct tc_ring_stage *st = op->stage;
    memset(st, 0, sizeof(op->stage));
    op->ring_stage = op->ring_step = 0;
    if (!sw) {
        st[0] = (struct tc_ring_stage){ N, r, (r + N - 1) % N, (r + 1) % N, 0, 2 * (N - 1), 0, 0 };
        op->nstage = 1;
        return;
    }
    const int k = m->swg_k, S = m->nswg, pos = m->swg_pos[r], g = pos / k, p = pos % k;
    const int *node = m->swg_node;
    const int in_prev = node[g * k + (p + k - 1) % k], in_next = node[g * k + (p + 1) % k];
    st[0] = (struct tc_ring_stage){ k, p, in_prev, in_next, 0, k - 1, 0, 0 };
    st[1] = (struct tc_ring_stage){
        S, g, node[(g + S - 1) % S * k + p], node[(g + 1) % S * k + p], 0, 2 * (S - 1), k, p
    };
    st[2] = (struct tc_ring_stage){ k, p, in_prev, in_next, k - 1, 2 * (k - 1), 0, 0 };
    op->nstage = 3;
}

/* Single copy: the pieces each worker folds, the slices' rings on several
 * nodes, the cookies' table and the fold scratch. */
static tc_status_t init_single_copy(tc_allreduce_t *op)
{
    tc_ctx_t *ctx = op->ctx;
    const tc_nodemap_t *m = &ctx->map;
    const tc_rtype_t *t = &op->t;
    int nw = op->multi ? ctx->minlocal : m->lsize;
    if (m->lrank < nw) op->wid = m->lrank;
    const int sw = op->multi && tc_plan_allreduce_net(ctx) == TC_ALG_SWITCHES;
    const int cut = sw ? m->swg_k : m->nnodes; /* a ring cuts a piece in as many chunks */
    tc_part_init(&op->part, op->count, tc_allreduce_segsize(ctx, t, op->count), nw);
    if (op->multi) {
        tc_status_t rc = tc_status_mpi(tc_ctx_slices(ctx));
        if (rc != TC_OK) return rc;
        if (op->wid >= 0) {
            PMPI_Comm_rank(ctx->slice, &op->ring_rank);
            ring_stages(op, sw);
            /* a ring chunk is at most a piece's 1/cut, rounded up */
            size_t piece = op->part.seg / (size_t)nw + 1;
            op->ring_tmp = tc_ctx_buf(ctx, TC_BUF_NET, tc_span(t, piece / (size_t)cut + 1));
            if (!op->ring_tmp) return TC_ERR_NOMEM;
        }
    }
    int nl = m->lsize;
    op->cookies = calloc(3 * (size_t)nl, sizeof(uint64_t));
    if (!op->cookies || (op->wid >= 0 && tc_fold_scratch_get(ctx, &op->f) != 0))
        return TC_ERR_NOMEM;
    op->push = op->cookies + 2 * nl;
    return TC_OK;
}

tc_status_t tc_allreduce_init(tc_allreduce_t *op, tc_ctx_t *ctx, const void *in, void *out,
                              size_t count, const tc_rtype_t *t)
{
    const tc_nodemap_t *m = &ctx->map;
    const size_t span = tc_span(t, count);
    const uint64_t seq = ++ctx->seq;
    tc_tune_t tune;
    int cico =
        tc_tune_choose(&tune, ctx, TC_TUNE_ALLREDUCE, span, tc_fold_uses_cico(ctx, span), seq);
    if (cico && tune.bucket < 0 && tc_ctx_eager_fits(ctx, span)) {
        /* Eager: these fields only (eager_work, fini) */
        op->ctx = ctx;
        op->t = *t;
        op->in = in;
        op->out = out;
        op->count = count;
        op->seq = seq;
        op->cico = 1;
        op->tune = tune;
        return init_eager(op);
    }
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->t = *t;
    op->in = in;
    op->out = out;
    op->count = count;
    op->req = op->rreq = op->sreq = MPI_REQUEST_NULL;
    op->seq = seq;
    op->multi = m->nnodes > 1;
    op->cico = cico;
    op->tune = tune;
    if (op->cico && tc_allreduce_piped(ctx, tc_span(t, count))) {
        int nl = m->lsize;
        op->ce = tc_shm_lane_bytes(ctx->shm) / t->extent;
        if (op->ce == 0) {
            /* elements larger than a lane slot (the same on every process) */
            op->cico = op->tune.cico = 0;
        } else {
            op->pipe = 1;
            op->sent = calloc(2 * (size_t)nl, sizeof(size_t));
            op->base = calloc(3 * (size_t)nl, sizeof(uint64_t));
            if (!op->sent || !op->base) return TC_ERR_NOMEM;
            op->got = op->sent + nl;
            return TC_OK;
        }
    }
    op->wid = -1;
    if (op->cico) return TC_OK;

    return init_single_copy(op);
}

/* ---- small vectors: through the CICO slots -------------------------------- */

/* Leaders: reduce to node 0's leader, then broadcast (two steps instead of
 * the native allreduce: the result is then bit-identical everywhere). */
static tc_status_t cico_network(tc_allreduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    int flag, rc, lr;
    PMPI_Comm_rank(c->llcomm, &lr);
    int n = (int)op->count;
    for (;;) {
        switch (op->net_state) {
        case NET_IDLE:
            rc = tc_status_mpi(PMPI_Ireduce(lr == 0 ? MPI_IN_PLACE : op->out,
                                            lr == 0 ? op->out : NULL, n, op->t.dt, op->t.op, 0,
                                            c->llcomm, &op->req));
            if (rc != TC_OK) return rc;
            op->net_state = NET_REDUCE;
            break;
        case NET_REDUCE:
        case NET_BCAST:
            if ((rc = tc_status_mpi(PMPI_Test(&op->req, &flag, MPI_STATUS_IGNORE))) != TC_OK)
                return rc;
            if (!flag) return TC_INPROGRESS;
            if (op->net_state == NET_BCAST) {
                op->net_state = NET_DONE;
                return TC_OK;
            }
            if ((rc = tc_status_mpi(PMPI_Ibcast(op->out, n, op->t.dt, 0, c->llcomm, &op->req))) !=
                TC_OK)
                return rc;
            op->net_state = NET_BCAST;
            break;
        default: return TC_OK;
        }
    }
}

static tc_status_t cico_work(tc_allreduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    size_t span = tc_span(&op->t, op->count);
    int rc;
    if (!s) { /* alone on the node */
        if (op->net_state == NET_IDLE && op->in != op->out) memcpy(op->out, op->in, span);
        return cico_network(op);
    }
    if (!tc_fold_all_posted(s, op->seq, NULL, NULL)) return TC_INPROGRESS;
    if (!op->multi) {
        /* One node: a reduce-scatter and an allgather through the slots.
         * Process j folds piece j of every slot into its output, then puts
         * the result over its own input's piece j (only it reads piece j);
         * the others copy it from there. */
        if (!op->folded) {
            if ((rc = tc_fold_slots_share(s, &op->t, op->count, op->out, 1, NULL)) != TC_OK)
                return rc;
            op->folded = 1;
        }
        return tc_fold_slots_gather(s, &op->t, op->count, op->out, &op->pushed);
    }
    const int L = c->map.leader_lrank;
    if (c->map.lrank == L) {
        if (op->net_state == NET_IDLE &&
            (rc = tc_fold_slots(s, &op->t, 0, op->count, op->out)) != TC_OK)
            return rc;
        if ((rc = cico_network(op)) != TC_OK) return rc;
        /* Nobody reads our slots any more (only the leader folds here). */
        memcpy(tc_shm_cico(s, L, 0), op->out, span);
        /* Release: the result in the slots before prog. */
        atomic_store_explicit(&tc_cctl(s, L)->prog, 1, memory_order_release);
        return TC_OK;
    }
    if (atomic_load_explicit(&tc_cctl(s, L)->prog, memory_order_acquire) < 1) return TC_INPROGRESS;
    memcpy(op->out, tc_shm_cico(s, L, 0), span);
    s->bytes_cico += span;
    return TC_OK;
}

/* ---- one node, pipelined copy-in/copy-out through the lanes ------------------ */

int tc_allreduce_piped(const tc_ctx_t *ctx, size_t bytes)
{
    const tc_shm_t *s = ctx->shm;
    return s && ctx->map.nnodes == 1 && bytes > (size_t)s->cico_slots * s->cico_slot &&
           tc_shm_lanes_usable(s);
}

/* Chunk @c of piece @j: first element and count. */
static size_t pipe_chunk(const tc_allreduce_t *op, const tc_part_t *p, int j, size_t c, size_t *k)
{
    size_t first, n;
    tc_part_piece(p, 0, j, &first, &n);
    size_t a = first + c * op->ce;
    *k = first + n - a < op->ce ? first + n - a : op->ce;
    return a;
}

static size_t pipe_chunks(const tc_allreduce_t *op, const tc_part_t *p, int j)
{
    size_t first, n;
    tc_part_piece(p, 0, j, &first, &n);
    return (n + op->ce - 1) / op->ce;
}

/* Pipelined CICO, copy-in: chunk after chunk of piece j of our input into
 * our lane to j.  1 if it moved anything. */
static int pipe_copy_in(tc_allreduce_t *op, const tc_part_t *p)
{
    tc_shm_t *s = op->ctx->shm;
    const int nl = s->nlocal, me = s->me;
    const size_t ext = op->t.extent;
    int progress = 0;
    size_t k;
    for (int d = 1; d < nl; d++) {
        int j = (me + d) % nl;
        for (size_t K = pipe_chunks(op, p, j); op->sent[j] < K; op->sent[j]++) {
            uint64_t item = op->base[j] + op->sent[j];
            /* Acquire: j is done with the item two before, in this slot. */
            if (item - atomic_load_explicit(tc_shm_lane_got(s, j, me), memory_order_acquire) >= 2)
                break;
            size_t a = pipe_chunk(op, p, j, op->sent[j], &k);
            memcpy(tc_shm_lane_slot(s, me, j, item), op->in + a * ext, k * ext);
            /* Release: the chunk before the count. */
            atomic_store_explicit(tc_shm_lane_sent(s, me, j), item + 1, memory_order_release);
            progress = 1;
        }
    }
    return progress;
}

/* Pipelined CICO, fold: chunk red of our piece once every process's copy
 * of it has landed and every reader is done with our broadcast slot.
 * *@progress set if it folded anything. */
static tc_status_t pipe_fold(tc_allreduce_t *op, const tc_part_t *p, int *progress)
{
    tc_shm_t *s = op->ctx->shm;
    const int nl = s->nlocal, me = s->me;
    const size_t ext = op->t.extent;
    tc_status_t rc;
    size_t k;
    for (size_t K = pipe_chunks(op, p, me); op->red < K; op->red++) {
        uint64_t bitem = op->base[me] + op->red;
        int ready = 1;
        for (int i = 0; i < nl && ready; i++) {
            if (i == me) continue;
            /* Acquire: the reader's copy-out two items back; the producer's chunk. */
            ready = bitem - atomic_load_explicit(tc_shm_lane_bgot(s, i, me), memory_order_acquire) <
                        2 &&
                    atomic_load_explicit(tc_shm_lane_sent(s, i, me), memory_order_acquire) >
                        op->base[nl + i] + op->red;
        }
        if (!ready) break;
        size_t a = pipe_chunk(op, p, me, op->red, &k);
        char *acc = tc_shm_lane_slot(s, me, me, bitem);
        /* canonical order: x_0 op (x_1 op (... op x_{nl-1})) */
#define X(r) \
    ((r) == me ? op->in + a * ext : tc_shm_lane_slot(s, (r), me, op->base[nl + (r)] + op->red))
        memcpy(acc, X(nl - 1), k * ext);
        for (int r = nl - 2; r >= 0; r--)
            if ((rc = tc_op_apply(&op->t, X(r), acc, k)) != TC_OK) return rc;
#undef X
        memcpy(op->out + a * ext, acc, k * ext); /* MPI_IN_PLACE: our operand is read */
        s->bytes_cico += k * ext * (size_t)nl;
        /* Release: the producers' slots are free; our result is published. */
        for (int i = 0; i < nl; i++)
            if (i != me)
                atomic_store_explicit(tc_shm_lane_got(s, me, i), op->base[nl + i] + op->red + 1,
                                      memory_order_release);
        atomic_store_explicit(tc_shm_lane_sent(s, me, me), bitem + 1, memory_order_release);
        *progress = 1;
    }
    return TC_OK;
}

/* Pipelined CICO, copy-out: the other owners' finished chunks.  1 if it
 * moved anything. */
static int pipe_copy_out(tc_allreduce_t *op, const tc_part_t *p)
{
    tc_shm_t *s = op->ctx->shm;
    const int nl = s->nlocal, me = s->me;
    const size_t ext = op->t.extent;
    int progress = 0;
    size_t k;
    for (int d = 1; d < nl; d++) {
        int j = (me - d + nl) % nl;
        for (size_t K = pipe_chunks(op, p, j); op->got[j] < K; op->got[j]++) {
            uint64_t item = op->base[2 * nl + j] + op->got[j];
            /* Acquire: pairs with the owner's publication. */
            if (atomic_load_explicit(tc_shm_lane_sent(s, j, j), memory_order_acquire) <= item)
                break;
            size_t a = pipe_chunk(op, p, j, op->got[j], &k);
            memcpy(op->out + a * ext, tc_shm_lane_slot(s, j, j, item), k * ext);
            s->bytes_cico += k * ext;
            /* Release: our copy is done, the owner may reuse the slot. */
            atomic_store_explicit(tc_shm_lane_bgot(s, me, j), item + 1, memory_order_release);
            progress = 1;
        }
    }
    return progress;
}

static tc_status_t pipe_work(tc_allreduce_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int nl = s->nlocal, me = s->me;
    tc_part_t p;
    tc_part_init(&p, op->count, op->count, nl); /* one segment, piece j owned by local rank j */
    if (!op->posted) {
        if (!tc_fold_all_posted(s, op->seq, NULL, NULL)) return TC_INPROGRESS;
        op->posted = 1;
    }
    int progress = 1;
    while (progress) {
        progress = pipe_copy_in(op, &p);
        tc_status_t rc = pipe_fold(op, &p, &progress);
        if (rc != TC_OK) return rc;
        progress |= pipe_copy_out(op, &p);
    }
    if (op->red < pipe_chunks(op, &p, me)) return TC_INPROGRESS;
    for (int j = 0; j < nl; j++)
        if (j != me &&
            (op->sent[j] < pipe_chunks(op, &p, j) || op->got[j] < pipe_chunks(op, &p, j)))
            return TC_INPROGRESS;
    return TC_OK;
}

/* ---- single copy ---------------------------------------------------------- */

/* Chunk @c (of N) of a piece of @n elements: first element and count. */
static size_t ring_chunk(size_t n, int N, int c, size_t *k)
{
    size_t a = n * (size_t)c / (size_t)N, b = n * (size_t)(c + 1) / (size_t)N;
    *k = b - a;
    return a;
}

/* Worker: the inter-node Allreduce of its piece of each folded segment, a
 * ring over the slice (one process per node, this local rank on every
 * node): N - 1 reduce-scatter steps (send chunk r - k to the next node,
 * receive chunk r - k - 1 from the previous one and fold it into ours),
 * then N - 1 allgather steps (send chunk r + 1 - k, receive chunk r - k
 * over ours).  Each host sends 2 (N - 1) / N of the vector in all, the
 * least an Allreduce between N hosts needs, where a reduce to one node
 * and a broadcast back (binomial trees) had the root host send and
 * receive the vector log2(N) times; and every chunk is folded once, by
 * one process, in an order fixed by the layout, so the result is
 * bit-identical everywhere.  Under leaf switches the same ring runs in
 * the three stages of ring_stages, each on its members and its part of
 * the piece (still every element folded once, then copied).  The
 * slices' rings run side by side, so every core of the node drives the
 * network (each at 1/minlocal of the data).  Segment i's ring starts
 * once it is folded, while the next segment folds.  Never blocks: one
 * step's receive and send are in flight at a time, tested here.  (Two
 * nodes exchange along every stage in the same order, so MPI's
 * non-overtaking rule matches each receive with its send.) */
static tc_status_t slice_network(tc_allreduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    MPI_Comm sc = c->slice;
    const size_t ext = op->t.extent;
    int flag, rc;
    while (op->bc_done < op->folded) {
        const struct tc_ring_stage *g = &op->stage[op->ring_stage];
        const int M = g->M, q = g->q;
        size_t first, n, k;
        tc_part_piece(&op->part, op->bc_done, op->wid, &first, &n);
        char *piece = op->out + first * ext;
        if (g->kin) { /* the chunk the switch's reduce-scatter left here */
            size_t a = ring_chunk(n, g->kin, (g->kpos + 1) % g->kin, &n);
            piece += a * ext;
        }
        const int rs = op->ring_step < M - 1; /* reduce-scatter, else allgather */
        const int kk = rs ? op->ring_step : op->ring_step - (M - 1);
        if (!op->ring_posted) {
            int sc_chunk = rs ? (q - kk + M) % M : (q + 1 - kk + 2 * M) % M;
            int rc_chunk = rs ? (q - kk - 1 + 2 * M) % M : (q - kk + M) % M;
            size_t a = ring_chunk(n, M, rc_chunk, &k);
            /* reduce-scatter: into the ring buffer, folded below; allgather: in place */
            rc = tc_status_mpi(PMPI_Irecv(rs ? op->ring_tmp : piece + a * ext, (int)k, op->t.dt,
                                          g->prev, TC_TAG_ARING, sc, &op->rreq));
            if (rc != TC_OK) return rc;
            a = ring_chunk(n, M, sc_chunk, &k);
            rc = tc_status_mpi(PMPI_Isend(piece + a * ext, (int)k, op->t.dt, g->next, TC_TAG_ARING,
                                          sc, &op->sreq));
            if (rc != TC_OK) return rc;
            op->ring_posted = 1;
        }
        /* completed requests become MPI_REQUEST_NULL: re-testing is cheap */
        if ((rc = tc_status_mpi(PMPI_Test(&op->rreq, &flag, MPI_STATUS_IGNORE))) != TC_OK)
            return rc;
        if (!flag) return TC_OK;
        if ((rc = tc_status_mpi(PMPI_Test(&op->sreq, &flag, MPI_STATUS_IGNORE))) != TC_OK)
            return rc;
        if (!flag) return TC_OK;
        if (rs) {
            size_t a = ring_chunk(n, M, (q - kk - 1 + 2 * M) % M, &k);
            if ((rc = tc_op_apply(&op->t, op->ring_tmp, piece + a * ext, k)) != TC_OK) return rc;
        }
        op->ring_posted = 0;
        if (++op->ring_step == g->s1) {
            if (++op->ring_stage == op->nstage) {
                op->ring_stage = 0;
                op->bc_done++;
            }
            op->ring_step = op->stage[op->ring_stage].s0;
        }
    }
    return TC_OK;
}

/* Worker: write its finished pieces into every other local process's
 * output (one node: from cache, during the fold; several nodes: after the
 * slice's inter-node step), then report them.  (Handing them over through
 * the CICO slots instead was measured: as fast at best, 2x slower in half
 * the runs, likely when the two vCPUs do not share a last-level cache.) */
static tc_status_t sc_work(tc_allreduce_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    int rc;
    if (s && !op->posted) {
        if (!tc_fold_all_posted(s, op->seq, op->cookies, op->cookies + s->nlocal))
            return TC_INPROGRESS;
        /* the other local processes' outputs, where our pieces go */
        for (int i = 0, k = 0; i < s->nlocal; i++)
            if (i != s->me) op->push[k++] = op->cookies[s->nlocal + i];
        op->posted = 1;
    }
    int npush = s ? s->nlocal - 1 : 0;
    if (op->wid >= 0) {
        if (op->folded < op->part.nseg) { /* one segment per step: the network overlaps */
            size_t first, n;
            tc_part_piece(&op->part, op->folded, op->wid, &first, &n);
            if (s) {
                rc = tc_fold_piece(s, &op->t, op->cookies, op->in, first, n, op->out, op->push,
                                   op->multi ? 0 : npush, &op->f);
                if (rc != TC_OK) return rc;
            } else if (op->in != op->out) {
                memcpy(op->out + first * op->t.extent, op->in + first * op->t.extent,
                       tc_span(&op->t, n));
            }
            op->folded++;
        }
        size_t final = op->folded;
        if (op->multi) {
            if ((rc = slice_network(op)) != TC_OK) return rc;
            for (; op->pushed < op->bc_done; op->pushed++) { /* final pieces to the node */
                size_t first, n;
                tc_part_piece(&op->part, op->pushed, op->wid, &first, &n);
                if (s &&
                    (rc = tc_fold_push(s, &op->t, op->out, first, n, op->push, npush)) != TC_OK)
                    return rc;
            }
            final = op->pushed;
        }
        /* Release: our pieces, written into the peers' outputs, before prog. */
        if (s && final > atomic_load_explicit(&tc_cctl(s, s->me)->prog, memory_order_relaxed))
            atomic_store_explicit(&tc_cctl(s, s->me)->prog, final, memory_order_release);
        if (final < op->part.nseg) return TC_INPROGRESS;
    }
    /* Acquire: pairs with each worker's release; its pieces are in our output. */
    for (int j = 0; s && j < op->part.nw; j++)
        if (j != op->wid &&
            atomic_load_explicit(&tc_cctl(s, j)->prog, memory_order_acquire) < op->part.nseg)
            return TC_INPROGRESS;
    return TC_OK;
}

/* Eager (one node, small vectors; tc_ctx_eager): every process copies its
 * operand into its slot, tags it, and folds every slot once every tag is
 * there, in the same order: one exchange, and the same bytes everywhere.
 * Nobody waits for the others to finish: a later writer of the slot
 * does. */
static tc_status_t eager_work(tc_allreduce_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    int rc;
    if (op->state == ST_START) {
        rc = tc_fold_eager_post(s, &op->t, op->count, op->in, op->eager_slot, op->seq,
                                op->eager_wait);
        if (rc != TC_OK) return rc;
        op->state = ST_WORK;
    }
    if (op->state == ST_WORK) {
        rc = tc_fold_eager(s, &op->t, op->count, op->eager_slot, op->seq, NULL, op->out, NULL,
                           &op->eager_done);
        if (rc != TC_OK) return rc;
        tc_cctl_finish(s, op->seq);
        op->state = ST_DONE;
    }
    return TC_OK;
}

tc_status_t tc_allreduce_work(tc_allreduce_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    int rc;
    if (op->eager) return eager_work(op);
    switch (op->state) {
    case ST_START:
        if (s) {
            /* Our flags, slots and cookies may still be read for the
             * previous collective. */
            if (!tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
            tc_tune_start(&op->tune, op->ctx, op->seq); /* before our post: see tune.h */
            if (op->pipe) {
                /* Lane counters now: every item of the previous calls has
                 * been consumed (all finished), so they line up pairwise. */
                for (int i = 0; i < s->nlocal; i++) {
                    op->base[i] =
                        atomic_load_explicit(tc_shm_lane_sent(s, s->me, i), memory_order_relaxed);
                    op->base[s->nlocal + i] =
                        atomic_load_explicit(tc_shm_lane_got(s, s->me, i), memory_order_relaxed);
                    op->base[2 * s->nlocal + i] =
                        atomic_load_explicit(tc_shm_lane_bgot(s, s->me, i), memory_order_relaxed);
                }
                tc_fold_post(s, op->seq, 0, 0);
            } else if (op->cico) {
                memcpy(tc_shm_cico(s, s->me, 0), op->in, tc_span(&op->t, op->count));
                tc_fold_post(s, op->seq, 0, 0);
            } else {
                /* the workers write their results into our output */
                struct iovec iov = { op->out, tc_span(&op->t, op->count) };
                TC_RETURN_IF_FAILED(tc_region_acquire(
                    s, op->keep, &iov, 1, TC_RIGHT_READ | TC_RIGHT_WRITE, &op->out_cookie));
                if (op->in != op->out) {
                    iov.iov_base = (void *)op->in;
                    TC_RETURN_IF_FAILED(
                        tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_READ, &op->in_cookie));
                }
                tc_fold_post(s, op->seq, op->in != op->out ? op->in_cookie : op->out_cookie,
                             op->out_cookie);
            }
        }
        op->state = ST_WORK;
        /* fall through */
    case ST_WORK:
        rc = op->pipe ? pipe_work(op) : op->cico ? cico_work(op) : sc_work(op);
        if (rc != TC_OK) return rc;
        if (s) tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        /* Peers read our input, output or slots until they finish. */
        if (s && !tc_shm_all_done(s, op->seq)) return TC_INPROGRESS;
        tc_tune_end(&op->tune, op->ctx);
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

void tc_allreduce_fini(tc_allreduce_t *op)
{
    if (op->eager) return; /* holds nothing */
    tc_shm_t *s = op->ctx->shm;
    /* after an error the ring's receive and send may be in flight (the
     * leaders' nonblocking collective, op->req, cannot be cancelled) */
    tc_req_abandon(&op->rreq, 1);
    tc_req_abandon(&op->sreq, 1);
    tc_region_release(s, op->keep, op->in_cookie, op->state == ST_DONE);
    tc_region_release(s, op->keep, op->out_cookie, op->state == ST_DONE);
    op->in_cookie = op->out_cookie = 0;
    tc_fold_scratch_put(&op->f);
    free(op->cookies);
    free(op->sent);
    free(op->base);
    op->cookies = op->push = NULL;
    op->sent = op->got = NULL;
    op->base = NULL;
}
