/* coll/allgather -- see allgather.h. */
#include "allgather.h"

#include "fold.h" /* tc_fold_post / tc_fold_all_posted: the cookie exchange */
#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

#include "tags.h"

enum { ST_START = 0, ST_WORK, ST_ACK, ST_DONE };

const char *tc_allgather_alg_name(int alg)
{
    return alg == TC_AG_USE_CICO   ? "copy-in/copy-out"
           : alg == TC_AG_USE_RING ? "ring (physical order)"
                                   : "leader-based";
}

/* Node n's runs of consecutive ranks: op->runs[2 * i] first rank,
 * [2 * i + 1] ranks, for i in [op->run_of[n], op->run_of[n + 1]). */
static tc_status_t node_runs(tc_allgather_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    int nn = m->nnodes, i = 0;
    op->run_of = malloc(sizeof(int) * ((size_t)nn + 1 + 2 * (size_t)m->size));
    if (!op->run_of) return TC_ERR_NOMEM;
    op->runs = op->run_of + nn + 1;
    for (int n = 0; n < nn; n++) {
        op->run_of[n] = i;
        for (int r = 0; r < m->size; r++) {
            if (m->node_of[r] != n) continue;
            if (i > op->run_of[n] && op->runs[2 * (i - 1)] + op->runs[2 * (i - 1) + 1] == r) {
                op->runs[2 * (i - 1) + 1]++;
            } else {
                op->runs[2 * i] = r;
                op->runs[2 * i + 1] = 1;
                i++;
            }
        }
    }
    op->run_of[nn] = i;
    return TC_OK;
}

/* The node whose blocks step k sends (@recv 0) or receives (@recv 1). */
static int step_node(const tc_allgather_t *op, int k, int recv)
{
    int nn = op->ctx->map.nnodes;
    return ((op->ctx->map.node - k - recv) % nn + nn) % nn;
}

/* The piece at cursor @u (the node of its step: @n): its bytes in out. */
static void piece(const tc_allgather_t *op, const tc_ag_cur_t *u, int n, char **p, size_t *len)
{
    const int *run = op->runs + 2 * (op->run_of[n] + u->run);
    size_t span = (size_t)run[1] * op->block;
    *p = op->out + (size_t)run[0] * op->block + u->off;
    *len = span - u->off < TC_NET_SEG ? span - u->off : TC_NET_SEG;
}

/* Move @u, at a piece of node @n, to the next piece. */
static void advance_in(const tc_allgather_t *op, tc_ag_cur_t *u, int n)
{
    const int *run = op->runs + 2 * (op->run_of[n] + u->run);
    u->q++;
    u->off += TC_NET_SEG;
    if (u->off < (size_t)run[1] * op->block) return;
    u->off = 0;
    if (++u->run < op->run_of[n + 1] - op->run_of[n]) return;
    u->run = 0;
    u->k++;
}

/* Move @u to the next piece (@recv: of the receive stream). */
static void advance(const tc_allgather_t *op, tc_ag_cur_t *u, int recv)
{
    advance_in(op, u, step_node(op, u->k, recv));
}

/* Pieces of node n. */
static size_t node_pieces(const tc_allgather_t *op, int n)
{
    size_t c = 0;
    for (int i = op->run_of[n]; i < op->run_of[n + 1]; i++)
        c += ((size_t)op->runs[2 * i + 1] * op->block + TC_NET_SEG - 1) / TC_NET_SEG;
    return c;
}

/* The node leader's streams of pieces to and from the other nodes (the
 * leaders' ring): the node runs, each step's first piece, the requests. */
static tc_status_t init_leader_streams(tc_allgather_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    tc_status_t rc = node_runs(op);
    if (rc != TC_OK) return rc;
    /* the streams' bases: pieces before each step */
    if (!(op->rbase = malloc(sizeof(size_t) * 2 * (size_t)m->nnodes))) return TC_ERR_NOMEM;
    op->sbase = op->rbase + m->nnodes;
    op->rbase[0] = op->sbase[0] = 0;
    for (int k = 1; k < m->nnodes; k++) {
        op->rbase[k] = op->rbase[k - 1] + node_pieces(op, step_node(op, k - 1, 1));
        op->sbase[k] = op->sbase[k - 1] + node_pieces(op, step_node(op, k - 1, 0));
    }
    op->stotal = op->sbase[m->nnodes - 1];
    op->rreq = malloc(sizeof(MPI_Request) * 2 * TC_AG_WINDOW);
    if (!op->rreq) return TC_ERR_NOMEM;
    op->sreq = op->rreq + TC_AG_WINDOW;
    for (int i = 0; i < 2 * TC_AG_WINDOW; i++) op->rreq[i] = MPI_REQUEST_NULL;
    return TC_OK;
}

/* The leader's recursive doubling: the node runs and the requests (a
 * step's receives and sends, at most every other rank's block each). */
static tc_status_t init_leader_rd(tc_allgather_t *op)
{
    tc_status_t rc = node_runs(op);
    if (rc != TC_OK) return rc;
    const size_t n = 2 * (size_t)op->ctx->map.size;
    if (!(op->rreq = malloc(sizeof(MPI_Request) * n))) return TC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) op->rreq[i] = MPI_REQUEST_NULL;
    return TC_OK;
}

/* The ring over every process: neighbours and requests. */
static tc_status_t init_ring(tc_allgather_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    int n = m->size, p = m->ring_pos;
    op->left = m->ring[(p - 1 + n) % n];
    op->right = m->ring[(p + 1) % n];
    op->lsame = m->node_of[op->left] == m->node;
    op->rsame = m->node_of[op->right] == m->node;
    op->rreq = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    if (!op->rreq) return TC_ERR_NOMEM;
    op->sreq = op->rreq + n;
    for (int i = 0; i < 2 * n; i++) op->rreq[i] = MPI_REQUEST_NULL;
    return TC_OK;
}

tc_status_t tc_allgather_init(tc_allgather_t *op, tc_ctx_t *ctx, const void *in, void *out,
                              size_t block)
{
    const tc_nodemap_t *m = &ctx->map;
    const uint64_t seq = ++ctx->seq;
    int alg = tc_allgather_alg(ctx, block);
    tc_tune_t tune;
    if (tc_tune_choose(&tune, ctx, TC_TUNE_ALLGATHER, block, alg == TC_AG_USE_CICO, seq))
        alg = TC_AG_USE_CICO;
    if (alg == TC_AG_USE_CICO && tune.bucket < 0 && tc_ctx_eager_fits(ctx, block)) {
        /* Eager: these fields only (eager_work, fini) */
        op->ctx = ctx;
        op->in = in;
        op->out = out;
        op->block = block;
        op->seq = seq;
        op->state = ST_START;
        op->alg = alg;
        op->tune = tune;
        op->eager = 1;
        tc_ctx_eager(ctx, seq, &op->eager_slot, &op->eager_wait);
        return TC_OK;
    }
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->in = in;
    op->out = out;
    op->block = block;
    op->seq = seq;
    op->alg = alg;
    op->tune = tune;
    if (op->alg == TC_AG_USE_CICO && block > (size_t)ctx->cfg->cico_slots * ctx->cfg->cico_slot) {
        op->pipe = 1; /* tuned (tc_tune_range): one node, a usable ring */
        if (!(op->pgot = calloc(2 * (size_t)m->lsize, sizeof(uint64_t)))) return TC_ERR_NOMEM;
    }
    if (ctx->shm && !(op->cookies = calloc(2 * (size_t)m->lsize, sizeof(uint64_t))))
        return TC_ERR_NOMEM;
    if (op->alg == TC_AG_USE_LEADER && m->nnodes > 1)
        op->rd = tc_allgather_sw(ctx) ? TC_AG_SW : tc_allgather_rd(ctx, block) ? TC_AG_RD : 0;
    if (op->alg == TC_AG_USE_LEADER && m->lrank == m->leader_lrank && m->nnodes > 1) {
        tc_status_t rc = op->rd ? init_leader_rd(op) : init_leader_streams(op);
        if (rc != TC_OK) return rc;
    }
    if (op->alg == TC_AG_USE_LEADER && ctx->shm) {
        /* Per-domain relays: each package's relay reads the other nodes'
         * blocks from the leader once, its package reads them from it. */
        int rel = tc_ctx_relays(ctx, block * (size_t)(m->size - m->lsize), ctx->shm->single_copy);
        int L = m->leader_lrank;
        op->src = tc_lead_source(m->lrank, L, rel ? m->dom_of : NULL, rel ? m->dom_leader : NULL);
        for (int i = 0; i < m->lsize && rel; i++)
            op->relay |=
                i != m->lrank && tc_lead_source(i, L, m->dom_of, m->dom_leader) == m->lrank;
    }
    if (op->alg == TC_AG_USE_RING) return init_ring(op);
    return TC_OK;
}

/* Write our block into every other local process's receive buffer, and
 * into ours, chunk by chunk: the CMA writes copy from the chunk just
 * brought into cache, so the input is read from memory once (letting each
 * peer read it instead costs one more pass over memory per peer). */
static tc_status_t push_block(tc_allgather_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    const size_t chunk = op->ctx->copy_chunk; /* in L2: the CMA writes read it from there */
    char *mine = op->out + (size_t)m->rank * op->block;
    const uint64_t *outc = op->cookies + s->nlocal;
    for (size_t off = 0; off < op->block; off += chunk) {
        size_t len = op->block - off < chunk ? op->block - off : chunk;
        if (op->in != mine) memcpy(mine + off, op->in + off, len);
        for (int d = 1; d < s->nlocal; d++) { /* a different first peer for each process */
            int i = (s->me + d) % s->nlocal;
            TC_RETURN_IF_FAILED(
                tc_region_write(s, outc[i], (size_t)m->rank * op->block + off, mine + off, len));
        }
    }
    /* Release: our block in every peer's buffer before the flag. */
    atomic_store_explicit(&tc_cctl(s, s->me)->push_seq, op->seq, memory_order_release);
    return TC_OK;
}

/* 1 when the block of local process @i is in our buffer. */
static int block_here(const tc_allgather_t *op, int i)
{
    const tc_shm_t *s = op->ctx->shm;
    return i == s->me ||
           atomic_load_explicit(&tc_cctl(s, i)->push_seq, memory_order_acquire) == op->seq;
}

/* ---- one node, small blocks ------------------------------------------------- */

static tc_status_t cico_work(tc_allgather_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    if (!tc_fold_all_posted(s, op->seq, NULL, NULL)) return TC_INPROGRESS;
    for (int i = 0; i < m->lsize; i++) { /* one node: local rank == rank */
        if (i == s->me) continue;
        memcpy(op->out + (size_t)i * op->block, tc_shm_cico(s, i, 0), op->block);
        s->bytes_cico += op->block;
    }
    return TC_OK;
}

/* Chunk @c of a block cut into @S-byte chunks: its offset, and its
 * length in @len. */
static size_t ring_chunk(const tc_allgather_t *op, size_t S, uint64_t c, size_t *len)
{
    size_t off = (size_t)c * S;
    *len = op->block - off < S ? op->block - off : S;
    return off;
}

/* Pipelined CICO: our block into our broadcast ring chunk by chunk (and
 * into our own receive buffer from the same cache lines), the others'
 * chunks out of theirs as they land.  Counters are the broadcast lane's:
 * cumulative, single writer each. */
static tc_status_t pipe_work(tc_allgather_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int nl = s->nlocal, me = s->me;
    const size_t S = tc_shm_ring_bytes(s), nc = (op->block + S - 1) / S;
    char *mine = op->out + (size_t)me * op->block; /* one node: local rank == rank */
    /* No wait for the posts: the counters order everything, and each
     * process acquires the tuner's count (released after its post, so
     * after its tune word: tune.h) when it copies out the tuner's first
     * chunk, which it does before completing (nc >= 1). */
    int progress = 1;
    while (progress) {
        progress = 0;
        for (; op->psent < nc; op->psent++) {
            uint64_t item = op->pbase + op->psent;
            int free_slot = 1;
            for (int i = 0; i < nl && free_slot;
                 i++) /* Acquire: every reader is done with the slot */
                free_slot = i == me || item - atomic_load_explicit(tc_shm_lane_bgot(s, i, me),
                                                                   memory_order_acquire) <
                                           TC_SHM_RING;
            if (!free_slot) break;
            size_t len, off = ring_chunk(op, S, op->psent, &len);
            memcpy(tc_shm_ring_slot(s, me, item), op->in + off, len);
            /* Release: the chunk before the count. */
            atomic_store_explicit(tc_shm_lane_sent(s, me, me), item + 1, memory_order_release);
            /* then our own copy, from the cache lines just read */
            if (op->in != mine) memcpy(mine + off, op->in + off, len);
            progress = 1;
        }
        for (int d = 1; d < nl; d++) {
            int j = (me - d + nl) % nl;
            for (; op->pgot[j] < nc; op->pgot[j]++) {
                uint64_t item = op->pgot[nl + j] + op->pgot[j];
                /* Acquire: pairs with the owner's count. */
                if (atomic_load_explicit(tc_shm_lane_sent(s, j, j), memory_order_acquire) <= item)
                    break;
                size_t len, off = ring_chunk(op, S, op->pgot[j], &len);
                memcpy(op->out + (size_t)j * op->block + off, tc_shm_ring_slot(s, j, item), len);
                s->bytes_cico += len;
                /* Release: our copy is done, the owner may reuse the slot. */
                atomic_store_explicit(tc_shm_lane_bgot(s, me, j), item + 1, memory_order_release);
                progress = 1;
            }
        }
    }
    if (op->psent < nc) return TC_INPROGRESS;
    for (int j = 0; j < nl; j++)
        if (j != me && op->pgot[j] < nc) return TC_INPROGRESS;
    return TC_OK;
}

/* ---- leader-based ------------------------------------------------------------ */

/* Leaders: the ring between leaders.  At step k a leader forwards node
 * (node-k)'s blocks to the right and receives node (node-k-1)'s from the
 * left.  A node's blocks are its runs of consecutive ranks (one run by
 * slot, one per rank by node), cut into pieces of at most TC_NET_SEG: no
 * message waits for a rendezvous, and a piece goes on as soon as it
 * arrived (one node's blocks per message took 1.27x the link bound at
 * 1 MiB blocks, 1.85x at 64 KiB on 4 emulated hosts x 2 ranks).  Both
 * neighbours enumerate the same pieces in the same order (MPI keeps a
 * pair's messages of one tag in order), TC_AG_WINDOW receives and sends
 * in flight. */

static tc_status_t leaders_ring(tc_allgather_t *op)
{
    tc_ctx_t *c = op->ctx;
    const tc_nodemap_t *m = &c->map;
    const int nn = m->nnodes, last = nn - 1; /* steps */
    int left = m->leader_of[(m->node - 1 + nn) % nn], right = m->leader_of[(m->node + 1) % nn];
    int flag, rc;
    char *p;
    size_t len;
    for (;;) {
        int moved = 0;
        /* receives: post up to the window, complete in order */
        while (op->rpost.k < last && op->rpost.q < op->rdone.q + TC_AG_WINDOW) {
            piece(op, &op->rpost, step_node(op, op->rpost.k, 1), &p, &len);
            rc = tc_status_mpi(PMPI_Irecv(p, (int)len, MPI_BYTE, left, TC_TAG_ALLGATHER, c->pcomm,
                                          &op->rreq[op->rpost.q % TC_AG_WINDOW]));
            if (rc != TC_OK) return rc;
            advance(op, &op->rpost, 1);
        }
        if (op->rdone.q < op->rpost.q) {
            if ((rc = tc_status_mpi(PMPI_Test(&op->rreq[op->rdone.q % TC_AG_WINDOW], &flag,
                                              MPI_STATUS_IGNORE))) != TC_OK)
                return rc;
            if (flag) {
                int k = op->rdone.k;
                advance(op, &op->rdone, 1);
                moved = 1;
                if (op->rdone.k > k) { /* node (node-k-1)'s blocks are all here */
                    op->steps = (size_t)op->rdone.k;
                    /* Release: the node's blocks (landed by MPI) before the report. */
                    if (c->shm)
                        atomic_store_explicit(&tc_cctl(c->shm, m->leader_lrank)->prog,
                                              op->steps + 1, memory_order_release);
                }
            }
        }
        /* sends: step 0's pieces are ours; step k's arrived at step k-1 */
        while (op->spost.k < last && op->spost.q < op->sdone_q + TC_AG_WINDOW &&
               (op->spost.k == 0 ||
                op->spost.q - op->sbase[op->spost.k] + op->rbase[op->spost.k - 1] < op->rdone.q)) {
            piece(op, &op->spost, step_node(op, op->spost.k, 0), &p, &len);
            rc = tc_status_mpi(PMPI_Isend(p, (int)len, MPI_BYTE, right, TC_TAG_ALLGATHER, c->pcomm,
                                          &op->sreq[op->spost.q % TC_AG_WINDOW]));
            if (rc != TC_OK) return rc;
            advance(op, &op->spost, 0);
            moved = 1;
        }
        if (op->sdone_q < op->spost.q) {
            if ((rc = tc_status_mpi(PMPI_Test(&op->sreq[op->sdone_q % TC_AG_WINDOW], &flag,
                                              MPI_STATUS_IGNORE))) != TC_OK)
                return rc;
            if (flag) {
                op->sdone_q++;
                moved = 1;
            }
        }
        if (!moved) return TC_OK;
    }
}

/* The node whose blocks arrive @i-th at a leader (0: its own): along the
 * ring node - i, by recursive doubling node ^ i, by Bruck's node + i; by
 * switch (S switches of k nodes, this node at place p of switch g) the
 * node at place p - i / S of switch g - i % S. */
static int arrival_node(const tc_allgather_t *op, int i)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes;
    if (op->rd == TC_AG_SW) {
        const int S = m->nswg, k = m->swg_k, pos = m->swg_pos[m->node];
        const int g = pos / k, p = pos % k;
        return m->swg_node[(g - i % S + S) % S * k + (p - i / S % k + k) % k];
    }
    if (!op->rd) return (m->node - i + N) % N;
    return (N & (N - 1)) ? (m->node + i) % N : m->node ^ i;
}

/* Step @st of the leaders' recursive doubling or Bruck: the nodes it
 * sends to (@to) and receives from (@from), the arrival indexes
 * (arrival_node) of the @cnt nodes it sends, from @s0, and receives, from
 * @r0.  0 past the last step.  The receiver's (r0 + i)-th node is always
 * the sender's (s0 + i)-th. */
static int exchange_step(const tc_allgather_t *op, int st, int *to, int *from, int *s0, int *r0,
                         int *cnt)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes, node = m->node;
    const int d = 1 << st, pof2 = !(N & (N - 1));
    if (d >= N) return 0;
    *to = pof2 ? node ^ d : (node + N - d) % N;
    *from = pof2 ? node ^ d : (node + d) % N;
    *s0 = 0;
    *r0 = d;
    *cnt = d < N - d ? d : N - d;
    return 1;
}

/* Leaders: recursive doubling, or Bruck's concatenation where N is not a
 * power of two (tc_allgather_rd).  Before step j (distance d = 2^j) a
 * leader holds the blocks of the d nodes arrival_node(0 .. d): by
 * recursive doubling node ^ i, the nodes that differ from its own in the
 * bits below j, swapped with node ^ d; by Bruck's node + i, sent to node
 * - d while node + d's come in, the last step carrying only the N - d
 * nodes still missing.  Either way the receiver's (d + i)-th node is the
 * sender's i-th: one message per run of consecutive ranks (by slot one
 * per node, by node one per rank), both sides enumerating the nodes in
 * that order, then their runs, as MPI keeps one pair's messages in order
 * (Bruck, Ho, Kipnis, Upfal and Weathersby 1997, section 3; Thakur,
 * Rabenseifner and Gropp 2005, 3.1).  Never blocks. */
static tc_status_t leaders_rd(tc_allgather_t *op)
{
    tc_ctx_t *c = op->ctx;
    const tc_nodemap_t *m = &c->map;
    int flag, rc, to, from, s0, r0, cnt;
    while (exchange_step(op, op->rd_step, &to, &from, &s0, &r0, &cnt)) {
        if (!op->rd_n) { /* (every step has a message: a node holds a rank) */
            int q = 0;
            for (int pass = 0; pass < 2; pass++) { /* receives first, then sends */
                const int peer = m->leader_of[pass ? to : from];
                for (int k = 0; k < cnt; k++) {
                    const int n = arrival_node(op, (pass ? s0 : r0) + k);
                    for (int i = op->run_of[n]; i < op->run_of[n + 1]; i++) {
                        char *p = op->out + (size_t)op->runs[2 * i] * op->block;
                        const int len = (int)((size_t)op->runs[2 * i + 1] * op->block);
                        rc = tc_status_mpi(
                            pass ? PMPI_Isend(p, len, MPI_BYTE, peer, TC_TAG_ALLGATHER, c->pcomm,
                                              &op->rreq[q])
                                 : PMPI_Irecv(p, len, MPI_BYTE, peer, TC_TAG_ALLGATHER, c->pcomm,
                                              &op->rreq[q]));
                        if (rc != TC_OK) return rc;
                        op->rd_n = ++q;
                    }
                }
            }
        }
        /* (one by one: a completed request is MPI_REQUEST_NULL, tested at once) */
        for (int q = 0; q < op->rd_n; q++) {
            rc = tc_status_mpi(PMPI_Test(&op->rreq[q], &flag, MPI_STATUS_IGNORE));
            if (rc != TC_OK) return rc;
            if (!flag) return TC_OK;
        }
        op->rd_n = 0;
        op->rd_step++;
        /* Release: the step's nodes' blocks (landed by MPI) before the report. */
        if (c->shm)
            atomic_store_explicit(&tc_cctl(c->shm, m->leader_lrank)->prog, (uint64_t)(r0 + cnt),
                                  memory_order_release);
    }
    op->rd_done = 1;
    return TC_OK;
}

/* By switch: the pieces (TC_NET_SEG) of the nodes arrival_node(first +
 * k), k < cnt, then their runs.  The piece at cursor @u, 0 past the
 * last. */
static int sw_piece(const tc_allgather_t *op, const tc_ag_cur_t *u, int first, int cnt, char **p,
                    size_t *len)
{
    if (u->k >= cnt) return 0;
    piece(op, u, arrival_node(op, first + u->k), p, len);
    return 1;
}

static void sw_advance(const tc_allgather_t *op, tc_ag_cur_t *u, int first)
{
    advance_in(op, u, arrival_node(op, first + u->k));
}

/* By switch (S switches of k nodes, this node at place p of switch g):
 * stream 0 runs along the ring of the nodes at place p of every switch
 * (to switch g + 1, from g - 1), sending arrival indexes 0 .. S - 2 and
 * receiving 1 .. S - 1, a node's blocks each; stream 1 along the
 * switch's ring (to place p + 1, from p - 1), sending 0 .. (k - 1) S - 1
 * and receiving S .. k S - 1.  Its first arrival index sent, received,
 * count; its peers. */
static void sw_stream(const tc_allgather_t *op, int x, int *s0, int *r0, int *cnt, int *to,
                      int *from)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int S = m->nswg, k = m->swg_k, pos = m->swg_pos[m->node];
    const int g = pos / k, p = pos % k, *at = m->swg_node;
    *s0 = 0;
    if (x == 0) {
        *r0 = 1, *cnt = S - 1;
        *to = at[(g + 1) % S * k + p], *from = at[(g + S - 1) % S * k + p];
    } else {
        *r0 = S, *cnt = (k - 1) * S;
        *to = at[g * k + (p + 1) % k], *from = at[g * k + (p + k - 1) % k];
    }
}

/* By switch: the nodes' blocks here, as a count of arrival indexes from 0
 * (its own, then stream 0's, then stream 1's). */
static int sw_have(const tc_allgather_t *op)
{
    const int S = op->ctx->map.nswg;
    return op->sw[0].rdone.k < S - 1 ? 1 + op->sw[0].rdone.k : S + op->sw[1].rdone.k;
}

/* One pass over stream @x (sw_stream): receives posted up to TC_AG_PACE
 * in flight, sends up to as many, each while fewer than TC_AG_PACE pieces
 * ahead of what the stream has received or behind it in whole nodes (the
 * receives clock the sends), and only of nodes whose blocks are here.
 * *@moved set when something completed or went out; *@done when the
 * stream is complete. */
static tc_status_t sw_pass(tc_allgather_t *op, int x, int *moved, int *done)
{
    tc_ctx_t *c = op->ctx;
    const tc_nodemap_t *m = &c->map;
    const int W = TC_AG_PACE;
    tc_ag_stream_t *t = &op->sw[x];
    MPI_Request *rr = op->rreq + 2 * W * x, *sr = rr + W;
    int flag, rc, s0, r0, cnt, to, from;
    char *p;
    size_t len;
    sw_stream(op, x, &s0, &r0, &cnt, &to, &from);
    while (t->rpost.q < t->rdone.q + (size_t)W && sw_piece(op, &t->rpost, r0, cnt, &p, &len)) {
        rc = tc_status_mpi(PMPI_Irecv(p, (int)len, MPI_BYTE, m->leader_of[from], TC_TAG_ALLGATHER,
                                      c->pcomm, &rr[t->rpost.q % W]));
        if (rc != TC_OK) return rc;
        sw_advance(op, &t->rpost, r0);
    }
    while (t->rdone.q < t->rpost.q) {
        rc = tc_status_mpi(PMPI_Test(&rr[t->rdone.q % W], &flag, MPI_STATUS_IGNORE));
        if (rc != TC_OK) return rc;
        if (!flag) break;
        sw_advance(op, &t->rdone, r0);
        *moved = 1;
    }
    const int rall = !sw_piece(op, &t->rdone, r0, cnt, &p, &len);
    const int have = sw_have(op);
    /* (pieces counted against pieces, or whole nodes against whole nodes: the nodes' blocks
     * need not be as many pieces, and a send waiting for its node to be here must not wait
     * behind pieces its neighbour holds back for the same reason) */
    while (t->spost.q < t->sdone_q + (size_t)W &&
           (rall || t->spost.q < t->rdone.q + (size_t)W || t->rdone.k > t->spost.k) &&
           s0 + t->spost.k < have && sw_piece(op, &t->spost, s0, cnt, &p, &len)) {
        rc = tc_status_mpi(PMPI_Isend(p, (int)len, MPI_BYTE, m->leader_of[to], TC_TAG_ALLGATHER,
                                      c->pcomm, &sr[t->spost.q % W]));
        if (rc != TC_OK) return rc;
        sw_advance(op, &t->spost, s0);
        *moved = 1;
    }
    while (t->sdone_q < t->spost.q) {
        rc = tc_status_mpi(PMPI_Test(&sr[t->sdone_q % W], &flag, MPI_STATUS_IGNORE));
        if (rc != TC_OK) return rc;
        if (!flag) break;
        t->sdone_q++;
        *moved = 1;
    }
    *done = rall && t->sdone_q == t->spost.q && !sw_piece(op, &t->spost, s0, cnt, &p, &len);
    return TC_OK;
}

/* Leaders by switch (tc_allgather_sw): the two rings of sw_stream at
 * once, each a stream of pieces, so the switch's ring forwards each
 * node's blocks as they come in from the other switches (its own first)
 * while the uplinks carry the rest: the slower of the uplinks' and the
 * switch's bytes, where one ring after the other took both.  At most
 * TC_AG_PACE pieces in flight each way on each ring, the sends clocked by
 * the receives: whole-node messages posted at once overflowed the shared
 * uplinks (k leaders of a switch sending across together), and TCP's
 * losses at the uplink cost retransmission timeouts.  The node's
 * processes are told each node as its blocks are in (prog, by arrival
 * index).  Never blocks. */
static tc_status_t leaders_sw(tc_allgather_t *op)
{
    tc_ctx_t *c = op->ctx;
    const tc_nodemap_t *m = &c->map;
    op->rd_n = 4 * TC_AG_PACE; /* (fini abandons what is in flight) */
    for (;;) {
        int moved = 0, done0, done1;
        const int before = sw_have(op);
        tc_status_t rc = sw_pass(op, 0, &moved, &done0);
        if (rc == TC_OK) rc = sw_pass(op, 1, &moved, &done1);
        if (rc != TC_OK) return rc;
        const int have = sw_have(op);
        /* Release: those nodes' blocks (landed by MPI) before the report. */
        if (c->shm && have > before)
            atomic_store_explicit(&tc_cctl(c->shm, m->leader_lrank)->prog, (uint64_t)have,
                                  memory_order_release);
        if (done0 && done1) break;
        if (!moved) return TC_OK;
    }
    op->rd_n = 0;
    op->rd_done = 1;
    return TC_OK;
}

static tc_status_t leader_work(tc_allgather_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    const tc_nodemap_t *m = &c->map;
    int rc;
    if (s && !op->posted) {
        if (!tc_fold_all_posted(s, op->seq, op->cookies, op->cookies + s->nlocal))
            return TC_INPROGRESS;
        op->posted = 1;
    }
    /* Step 1, the node's blocks: every process writes its block into the
     * others' buffers (the leader's included: the paper's gather by
     * single-copy writes of the non-leaders, extended to all). */
    if (s && !op->wrote) {
        if ((rc = push_block(op)) != TC_OK) return rc;
        op->wrote = 1;
    }
    if (s && op->got == 0) {
        for (int i = 0; i < s->nlocal; i++)
            if (!block_here(op, i)) return TC_INPROGRESS;
        op->got = 1;
        if (m->lrank == m->leader_lrank)
            atomic_store_explicit(&tc_cctl(s, m->leader_lrank)->prog, 1, memory_order_release);
    }
    if (m->lrank == m->leader_lrank) { /* step 2: the leaders' ring */
        if (m->nnodes > 1 && op->rd) {
            if ((rc = op->rd == TC_AG_SW ? leaders_sw(op) : leaders_rd(op)) != TC_OK) return rc;
            if (!op->rd_done) return TC_INPROGRESS;
        } else if (m->nnodes > 1) {
            if ((rc = leaders_ring(op)) != TC_OK) return rc;
            if (op->steps < (size_t)m->nnodes - 1 || op->sdone_q < op->stotal) return TC_INPROGRESS;
        }
        return TC_OK;
    }
    /* step 3: the other nodes' blocks, as the leader (or our relay) reports them */
    const uint64_t *outc = op->cookies + s->nlocal;
    /* Release: a relay's report, the blocks it holds (its node's at first). */
    if (op->relay && op->got == 1)
        atomic_store_explicit(&tc_cctl(s, s->me)->prog, 1, memory_order_release);
    size_t ready = (size_t)atomic_load_explicit(&tc_cctl(s, op->src)->prog, memory_order_acquire);
    if (ready > (size_t)m->nnodes) return TC_ERR_PROTO; /* a peer's word: at most every node */
    while (op->got < ready) {
        int n = arrival_node(op, (int)op->got);
        for (int r = 0; r < m->size; r++) {
            if (m->node_of[r] != n) continue;
            size_t off = (size_t)r * op->block;
            TC_RETURN_IF_FAILED(tc_region_read(s, outc[op->src], off, op->out + off, op->block));
        }
        op->got++;
        /* Release: node n's blocks in our buffer before the report. */
        if (op->relay)
            atomic_store_explicit(&tc_cctl(s, s->me)->prog, op->got, memory_order_release);
    }
    return op->got < (size_t)m->nnodes ? TC_INPROGRESS : TC_OK;
}

/* ---- ring in physical order ----------------------------------------------------- */

/* Held block j (0 = ours) of the ring belongs to rank ring[p - j]. */
static int ring_rank(const tc_nodemap_t *m, size_t j)
{
    const int n = m->size, p = m->ring_pos;
    return m->ring[(p - (int)(j) % n + n) % n];
}

/* The ring's start: every local process's buffers known, our block in
 * every local peer's buffer, and the receives from the left node posted
 * (every block not owned by our node, in order). */
static tc_status_t ring_start(tc_allgather_t *op)
{
    tc_ctx_t *c = op->ctx;
    tc_shm_t *s = c->shm;
    const tc_nodemap_t *m = &c->map;
    tc_status_t rc;
    if (s && !op->posted) {
        if (!tc_fold_all_posted(s, op->seq, op->cookies, op->cookies + s->nlocal))
            return TC_INPROGRESS;
        op->posted = 1;
    }
    if (s && !op->wrote) { /* our block into every local peer's buffer */
        if ((rc = push_block(op)) != TC_OK) return rc;
        op->wrote = 1;
    }
    if (op->have == 0) op->have = 1;
    if (!op->lsame && op->rposted == 0) {
        for (int j = 1; j < m->size; j++) {
            int r = ring_rank(m, (size_t)j);
            if (m->node_of[r] == m->node) continue;
            rc = tc_status_mpi(PMPI_Irecv(op->out + (size_t)r * op->block, (int)op->block, MPI_BYTE,
                                          op->left, TC_TAG_ALLGATHER, c->pcomm, &op->rreq[j]));
            if (rc != TC_OK) return rc;
        }
        op->rposted = 1;
    }
    return TC_OK;
}

/* The blocks that have arrived, in ring order: written here by their
 * owner (our node's), read from the left neighbour (same node), or
 * received from the left node. */
static tc_status_t ring_collect(tc_allgather_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    int flag;
    tc_status_t rc;
    while (op->have < (size_t)m->size) {
        int r = ring_rank(m, op->have);
        size_t off = (size_t)r * op->block;
        if (m->node_of[r] == m->node) {
            /* a block of our node: its owner writes it here */
            if (!block_here(op, m->lrank_of[r])) break;
        } else if (op->lsame) {
            /* from another node: along the ring, once the left neighbour holds it */
            int li = m->lrank_of[op->left];
            if ((size_t)atomic_load_explicit(&tc_cctl(s, li)->prog, memory_order_acquire) <
                op->have)
                break;
            TC_RETURN_IF_FAILED(
                tc_region_read(s, op->cookies[s->nlocal + li], off, op->out + off, op->block));
        } else {
            rc = tc_status_mpi(PMPI_Test(&op->rreq[op->have], &flag, MPI_STATUS_IGNORE));
            if (rc != TC_OK) return rc;
            if (!flag) break;
        }
        op->have++;
    }
    /* Release: blocks in our buffer before the right neighbour reads them. */
    if (s) atomic_store_explicit(&tc_cctl(s, s->me)->prog, op->have, memory_order_release);
    return TC_OK;
}

/* To the right node: every block it does not own, in order, as we hold it. */
static tc_status_t ring_forward(tc_allgather_t *op)
{
    tc_ctx_t *c = op->ctx;
    const tc_nodemap_t *m = &c->map;
    const int n = m->size, rnode = m->node_of[op->right];
    while (op->sent < (size_t)n - 1 && op->sent < op->have) {
        int r = ring_rank(m, op->sent);
        if (m->node_of[r] != rnode) {
            tc_status_t rc = tc_status_mpi(
                PMPI_Isend(op->out + (size_t)r * op->block, (int)op->block, MPI_BYTE, op->right,
                           TC_TAG_ALLGATHER, c->pcomm, &op->sreq[op->sent]));
            if (rc != TC_OK) return rc;
        }
        op->sent++;
    }
    return TC_OK;
}

static tc_status_t ring_work(tc_allgather_t *op)
{
    const int n = op->ctx->map.size;
    int flag;
    tc_status_t rc = ring_start(op);
    if (rc != TC_OK) return rc;
    for (;;) {
        size_t before = op->have + op->sent;
        if ((rc = ring_collect(op)) != TC_OK) return rc;
        if (!op->rsame && (rc = ring_forward(op)) != TC_OK) return rc;
        if (op->have + op->sent == before) break;
    }
    if (op->have < (size_t)n) return TC_INPROGRESS;
    if (!op->rsame) {
        while (op->sdone < (size_t)n - 1) { /* MPI_REQUEST_NULL for the skipped ones */
            rc = tc_status_mpi(PMPI_Test(&op->sreq[op->sdone], &flag, MPI_STATUS_IGNORE));
            if (rc != TC_OK) return rc;
            if (!flag) return TC_INPROGRESS;
            op->sdone++;
        }
    }
    return TC_OK;
}

/* Eager (one node, small blocks; coll/ctx tc_ctx_eager): every process
 * puts its block in its item and tags it, then copies every other item
 * out once all are tagged: one exchange; nobody waits for the others to
 * finish (a later writer of the item does). */
static tc_status_t eager_work(tc_allgather_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    if (op->state == ST_START) {
        if (!tc_shm_item_put(s, op->in, op->block, op->eager_slot, op->seq, op->eager_wait))
            return TC_INPROGRESS;
        char *mine = op->out + (size_t)s->me * op->block; /* one node: local rank == rank */
        if (op->in != mine) memcpy(mine, op->in, op->block);
        op->state = ST_WORK;
    }
    if (op->state == ST_WORK) {
        int ready = tc_shm_item_ready(s, op->eager_slot, op->seq, op->block);
        if (ready <= 0) return ready < 0 ? (tc_status_t)ready : TC_INPROGRESS;
        for (int i = 0; i < s->nlocal; i++)
            if (i != s->me)
                memcpy(op->out + (size_t)i * op->block,
                       tc_shm_item_data(s, i, op->eager_slot, op->block), op->block);
        s->bytes_cico += op->block * (size_t)(s->nlocal - 1);
        tc_cctl_finish(s, op->seq);
        op->state = ST_DONE;
    }
    return TC_OK;
}

tc_status_t tc_allgather_work(tc_allgather_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const tc_nodemap_t *m = &op->ctx->map;
    int rc;
    if (op->eager) return eager_work(op);
    switch (op->state) {
    case ST_START:
        if (s && !tc_shm_all_done(s, op->seq - 1)) return TC_INPROGRESS;
        tc_tune_start(&op->tune, op->ctx, op->seq); /* before our post: see tune.h */
        if (s) {
            if (op->pipe) {
                /* our own counters: every item of the calls before is consumed */
                op->pbase =
                    atomic_load_explicit(tc_shm_lane_sent(s, s->me, s->me), memory_order_relaxed);
                for (int j = 0; j < s->nlocal; j++)
                    op->pgot[s->nlocal + j] =
                        atomic_load_explicit(tc_shm_lane_bgot(s, s->me, j), memory_order_relaxed);
                tc_fold_post(s, op->seq, 0, 0);
            } else if (op->alg == TC_AG_USE_CICO) {
                memcpy(tc_shm_cico(s, s->me, 0), op->in, op->block);
                tc_fold_post(s, op->seq, 0, 0);
            } else {
                /* our receive buffer: the local peers write their blocks
                 * into it; blocks from other nodes are read out of it
                 * along the ring or from the leader */
                struct iovec iov = { op->out, (size_t)m->size * op->block };
                TC_RETURN_IF_FAILED(tc_region_acquire(
                    s, op->keep, &iov, 1, TC_RIGHT_READ | TC_RIGHT_WRITE, &op->out_cookie));
                tc_fold_post(s, op->seq, 0, op->out_cookie);
            }
        }
        op->state = ST_WORK;
        /* our own block (push_block and pipe_work copy it otherwise) */
        if (!s || (op->alg == TC_AG_USE_CICO && !op->pipe)) {
            char *mine = op->out + (size_t)m->rank * op->block;
            if (op->in != mine) memcpy(mine, op->in, op->block);
        }
        /* fall through */
    case ST_WORK:
        rc = op->pipe                    ? pipe_work(op)
             : op->alg == TC_AG_USE_CICO ? cico_work(op)
             : op->alg == TC_AG_USE_RING ? ring_work(op)
                                         : leader_work(op);
        if (rc != TC_OK) return rc;
        if (s) tc_cctl_finish(s, op->seq);
        op->state = ST_ACK;
        /* fall through */
    case ST_ACK:
        if (s && (op->alg != TC_AG_USE_CICO || tc_tune_waits(&op->tune, op->ctx)) &&
            !tc_shm_all_done(s, op->seq))
            return TC_INPROGRESS;
        tc_tune_end(&op->tune, op->ctx);
        op->state = ST_DONE;
        /* fall through */
    default: return TC_OK;
    }
}

void tc_allgather_fini(tc_allgather_t *op)
{
    if (op->eager) return; /* holds nothing */
    tc_region_release(op->ctx->shm, op->keep, op->out_cookie, op->state == ST_DONE);
    op->out_cookie = 0;
    if (op->rd && op->rd_n) tc_req_abandon(op->rreq, op->rd_n); /* (after a failure) */
    free(op->rreq);
    free(op->run_of);
    free(op->rbase);
    op->run_of = op->runs = NULL;
    op->rbase = op->sbase = NULL;
    free(op->cookies);
    free(op->pgot);
    op->pgot = NULL;
    op->rreq = op->sreq = NULL;
    op->cookies = NULL;
}
