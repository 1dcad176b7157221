/* coll/vroot -- Gatherv and Scatterv on several nodes (see vexchange.h). */
#include "vexchange_int.h"

#include "ctl.h"
#include "plan.h"
#include "tags.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>

enum { VR_START = 0, VR_WORK, VR_ACK, VR_DONE = TC_VX_STATE_DONE };

/* The communicator rank of local rank @j of node @b. */
static int vr_rank(const tc_vexchange_t *op, int b, int j) { return op->rank_at[op->nbase[b] + j]; }

/* This call's tags: a node's message; a block sent on its own. */
static int node_tag(const tc_vexchange_t *op) { return TC_TAG_EPOCH(TC_TAG_VROOT, op->seq); }
static int block_tag(const tc_vexchange_t *op) { return TC_TAG_EPOCH(TC_TAG_VEXCHANGE, op->seq); }

static int is_root(const tc_vexchange_t *op) { return op->ctx->map.rank == op->root; }
static int at_home(const tc_vexchange_t *op) { return op->ctx->map.node == op->vnode; }

/* A node whose message said nothing we can trust: a block sent on its own
 * may be left unreceived, so the call's failure takes topocoll off the
 * communicator (coll/ctx net_dirty).  Returns the failure, held. */
static tc_status_t garbage(tc_vexchange_t *op)
{
    op->ctx->net_dirty = 1;
    return tc_vx_defer(op, TC_ERR_PROTO);
}

/* A node message that says nothing: no entries (its receiver fails the
 * call; a Scatterv collector puts it as its item instead of a message
 * that does not fit one). */
static const uint64_t g_none[2] = { 0, 0 };

/* A node message that says nothing (16 bytes: its receiver fails the
 * call) to @to: on request @k where there is one, else at once (eager). */
static tc_status_t send_none(tc_vexchange_t *op, int to, int k)
{
    MPI_Comm pc = op->ctx->pcomm;
    return tc_status_mpi(op->mreq
                             ? PMPI_Isend(g_none, 16, MPI_BYTE, to, node_tag(op), pc, &op->mreq[k])
                             : PMPI_Send(g_none, 16, MPI_BYTE, to, node_tag(op), pc));
}

tc_status_t tc_vroot_init(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes;
    size_t nq = 0;
    op->rooted = 1;
    op->flat = tc_plan_vroot(op->ctx, op->ci) == TC_ALG_LINEAR;
    op->vnode = m->node_of[op->root];
    op->vcol = at_home(op) ? op->root : m->leader_of[m->node];
    op->rank_at = malloc(sizeof(int) * (size_t)m->size);
    op->nbase = malloc(sizeof(int) * (size_t)(N + 1));
    op->mreq = malloc(sizeof(MPI_Request) * (size_t)N);
    if (!op->rank_at || !op->nbase || !op->mreq) return TC_ERR_NOMEM;
    op->nbase[0] = 0;
    for (int b = 0; b < N; b++) {
        op->nbase[b + 1] = op->nbase[b] + m->size_of[b];
        op->mreq[b] = MPI_REQUEST_NULL;
    }
    for (int r = 0; r < m->size; r++) op->rank_at[op->nbase[m->node_of[r]] + m->lrank_of[r]] = r;
    /* pieces: the root's blocks of the other nodes, or ours */
    for (int r = 0; is_root(op) && r < m->size; r++)
        if (m->node_of[r] != op->vnode) nq += tc_pieces_of(op->len[r]);
    if (!is_root(op)) nq = tc_pieces_of(op->own);
    TC_RETURN_IF_FAILED(tc_pieces_init(&op->net, op->ctx->pcomm, nq));
    op->netup = 1;
    /* room for the node messages we take, at their largest, before any
     * is matched (recv_msg) */
    size_t most = 0;
    for (int b = 0; !op->flat && op->kind == TC_VX_GATHERV && is_root(op) && b < N; b++) {
        const size_t P = (size_t)m->size_of[b], z = TC_VX_HEAD(P) + P * op->vmax;
        most = b != op->vnode && z > most ? z : most;
    }
    if (!op->flat && op->kind == TC_VX_SCATTERV && !at_home(op) && m->rank == op->vcol)
        most = TC_VX_HEAD(m->lsize) + (size_t)m->lsize * op->vmax;
    return most && !tc_ctx_buf(op->ctx, TC_BUF_NET, most + 1) ? TC_ERR_NOMEM : TC_OK;
}

/* ---- Gatherv ------------------------------------------------------------------- */

/* A Gatherv process other than its node's collector: its item, one entry:
 * its block carried, or left to single copy in its exposed send buffer
 * (the root's node: the root reads it), or sent on its own to the root
 * (another node: the collector's message says so). */
static tc_status_t put_block(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int big = op->own > op->vmax, home = at_home(op);
    const size_t bytes = TC_VX_HEAD(1) + (big ? 0 : op->own);
    if (big && home && !op->cookie) {
        struct iovec iov = { (void *)op->in, op->own };
        TC_RETURN_IF_FAILED(tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_READ, &op->cookie));
    }
    char *it = tc_shm_item_begin(s, bytes, op->eager_slot, op->seq, op->eager_wait);
    if (!it) return TC_INPROGRESS;
    const uint64_t w[4] = { op->cookie, 1, op->own,
                            !big   ? TC_VX_HEAD(1)
                            : home ? TC_VX_SC
                                   : TC_VX_DIRECT };
    memcpy(it, w, sizeof(w));
    if (!big) memcpy(it + TC_VX_HEAD(1), op->in, op->own);
    tc_shm_item_publish(s, bytes, op->eager_slot, op->seq);
    return TC_OK;
}

/* Local process @j's entry (another node than the root's), once its item
 * is whole: @e its length and TC_VX_DIRECT, or (carried) 0 and *@blk the
 * block; TC_VX_FAILED for an item that is not as the protocol says (a
 * peer's: every field checked).  0 not yet, else 1. */
static int member_entry(const tc_vexchange_t *op, int j, uint64_t e[2], const char **blk)
{
    tc_shm_t *s = op->ctx->shm;
    const size_t z = tc_shm_item_whole(s, j, op->eager_slot, op->seq);
    uint64_t w[4];
    *blk = NULL;
    if (!z) return 0;
    e[0] = 0;
    e[1] = TC_VX_FAILED;
    if (z == TC_SHM_ITEM_BROKEN || z < TC_VX_HEAD(1)) return 1;
    const char *it = tc_shm_item_data(s, j, op->eager_slot, z);
    memcpy(w, it, sizeof(w));
    if (w[1] != 1 || w[2] > TC_VX_LEN_MAX) return 1;
    if (w[3] == TC_VX_DIRECT) {
        e[0] = w[2];
        e[1] = TC_VX_DIRECT;
    } else if (!(w[3] & TC_VX_FAILED) && w[2] <= op->vmax && w[3] <= z && w[2] <= z - w[3]) {
        e[0] = w[2];
        e[1] = 0;
        *blk = it + w[3];
    }
    return 1;
}

/* Gatherv, the collector of another node than the root's: once every
 * local item is whole, the node's message to the root (one item's layout:
 * an entry per local rank, then the carried blocks). */
static tc_status_t send_node(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int P = m->lsize, i = m->lrank;
    const int big = op->own > op->vmax;
    uint64_t e[2];
    const char *blk;
    size_t bytes = TC_VX_HEAD(P) + (big ? 0 : op->own);
    for (int j = 0; j < P; j++) {
        if (j == i) continue;
        if (!member_entry(op, j, e, &blk)) return TC_INPROGRESS;
        bytes += blk ? e[0] : 0;
    }
    char *msg = op->mbuf = tc_ctx_buf(op->ctx, TC_BUF_NET, bytes);
    if (!msg) { /* (no room: the root fails the call) */
        tc_vx_defer(op, TC_ERR_NOMEM);
        return send_none(op, op->root, 0);
    }
    const uint64_t head[2] = { 0, (uint64_t)P };
    memcpy(msg, head, sizeof(head));
    size_t at = TC_VX_HEAD(P);
    for (int j = 0; j < P; j++) {
        if (j == i) {
            e[0] = op->own;
            e[1] = big ? TC_VX_DIRECT : 0;
            blk = big ? NULL : op->in;
        } else {
            member_entry(op, j, e, &blk); /* (read again: bounded by the first reading) */
        }
        if (blk && e[0] > bytes - at) {
            e[0] = 0;
            e[1] = TC_VX_FAILED;
            blk = NULL;
        }
        if (blk) {
            e[1] = at;
            memcpy(msg + at, blk, e[0]);
            at += e[0];
        }
        memcpy(msg + TC_VX_HEAD(j), e, sizeof(e));
    }
    return tc_status_mpi(PMPI_Isend(msg, (int)bytes, MPI_BYTE, op->root, node_tag(op),
                                    op->ctx->pcomm, &op->mreq[0]));
}

/* Gatherv root: node @b's message, @size bytes at @msg (a peer's: checked):
 * each carried block into place, and for each block sent on its own a
 * receive posted straight into place.  A length that is not our count
 * fails the call (TC_ERR_TRUNCATE), held; such a block sent on its own is
 * still received (coll/pieces: it fails). */
static tc_status_t take_node(tc_vexchange_t *op, int b, const char *msg, size_t size)
{
    const int P = op->ctx->map.size_of[b];
    uint64_t head[2] = { 0, 0 }, e[2];
    if (size >= sizeof(head)) memcpy(head, msg, sizeof(head));
    if (head[1] != (uint64_t)P || size < TC_VX_HEAD(P)) return garbage(op);
    for (int j = 0; j < P; j++) {
        const int r = vr_rank(op, b, j);
        memcpy(e, msg + TC_VX_HEAD(j), sizeof(e));
        if (e[1] == TC_VX_DIRECT) {
            TC_RETURN_IF_FAILED(tc_pieces_post(&op->net, op->out + op->off[r], op->len[r], r,
                                               block_tag(op), 0, NULL));
            tc_vx_defer(op, e[0] != op->len[r] ? TC_ERR_TRUNCATE : TC_OK);
        } else if (e[1] == TC_VX_FAILED) {
            garbage(op);
        } else if (e[0] != op->len[r]) {
            tc_vx_defer(op, TC_ERR_TRUNCATE);
        } else if (e[0] > op->vmax || e[1] > size || e[0] > size - e[1]) {
            garbage(op);
        } else {
            memcpy(op->out + op->off[r], msg + e[1], e[0]);
        }
    }
    return TC_OK;
}

/* The message from (Gatherv root: the collector of node @b; a Scatterv
 * collector: the root) whose size we do not know: probed, then received
 * into op->mbuf.  TC_OK once it is there (op->msize), TC_INPROGRESS. */
static tc_status_t recv_msg(tc_vexchange_t *op, int from)
{
    int flag = 0;
    if (op->mreq[0] == MPI_REQUEST_NULL) {
        MPI_Message msg;
        MPI_Status st;
        int cnt = 0;
        TC_RETURN_IF_FAILED(
            tc_status_mpi(PMPI_Improbe(from, node_tag(op), op->ctx->pcomm, &flag, &msg, &st)));
        if (!flag) return TC_INPROGRESS;
        TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Get_count(&st, MPI_BYTE, &cnt)));
        op->msize = cnt > 0 ? (size_t)cnt : 0;
        op->mbuf = tc_ctx_buf(op->ctx, TC_BUF_NET, op->msize + 1);
        if (!op->mbuf) { /* (longer than any node message: a peer's garbage) matched,
                            never received */
            op->netup = 0;
            op->ctx->net_dirty = 1;
            return TC_ERR_NOMEM;
        }
        TC_RETURN_IF_FAILED(
            tc_status_mpi(PMPI_Imrecv(op->mbuf, cnt, MPI_BYTE, &msg, &op->mreq[0])));
    }
    TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&op->mreq[0], &flag, MPI_STATUS_IGNORE)));
    return flag ? TC_OK : TC_INPROGRESS;
}

/* Gatherv root: every other node's message, one node after the other. */
static tc_status_t recv_nodes(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    while (op->got < m->nnodes - 1) {
        const int b = (op->vnode + 1 + op->got) % m->nnodes;
        const tc_status_t rc = recv_msg(op, m->leader_of[b]);
        if (rc != TC_OK) return rc;
        op->got++; /* (taken: a failure placing it never probes for it again) */
        TC_RETURN_IF_FAILED(take_node(op, b, op->mbuf, op->msize));
    }
    return TC_OK;
}

/* Gatherv root: the other nodes' messages as they come, and our node's
 * blocks out of their items or by single copy (resumable: op->next). */
static tc_status_t gather_root(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int P = m->lsize, i = m->lrank;
    const tc_status_t rc = op->flat ? TC_OK : recv_nodes(op);
    if (rc < 0) return rc;
    for (; op->next < P - 1; op->next++) {
        const int j = (i + 1 + op->next) % P, r = vr_rank(op, op->vnode, j);
        tc_status_t t = tc_vx_take(op, j, 0, op->out + op->off[r], op->len[r], 0);
        if (t == TC_INPROGRESS) return t;
        /* a region gone under our copy: its owner left after a failure,
         * whose cause is the one to say */
        if (t == TC_ERR_STALE && op->ctx->shm && tc_cctl_peer_failed(op->ctx->shm, op->seq) < 0)
            t = tc_cctl_peer_failed(op->ctx->shm, op->seq);
        tc_vx_defer(op, t);
    }
    return TC_OK;
}

/* ---- Scatterv ------------------------------------------------------------------ */

/* Scatterv root: each other node's message to its collector (an entry per
 * local rank there, then the carried blocks), then the blocks sent on
 * their own, straight from our send buffer. */
static tc_status_t send_nodes(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int N = m->nnodes;
    size_t total = 0;
    for (int b = 0; b < N; b++)
        for (int j = 0; b != op->vnode && j < m->size_of[b]; j++) {
            const size_t l = op->len[vr_rank(op, b, j)];
            total += (j ? 0 : TC_VX_HEAD(m->size_of[b])) + (l > op->vmax ? 0 : l);
        }
    char *o = op->mbuf = tc_ctx_buf(op->ctx, TC_BUF_NET, total + 1);
    if (!o) return TC_ERR_NOMEM; /* (drain: a failed message to each) */
    for (int k = 1; k < N; k++) {
        const int b = (op->vnode + k) % N, P = m->size_of[b];
        char *msg = o;
        const uint64_t head[2] = { 0, (uint64_t)P };
        memcpy(msg, head, sizeof(head));
        o += TC_VX_HEAD(P);
        for (int j = 0; j < P; j++) {
            const int r = vr_rank(op, b, j);
            uint64_t e[2] = { op->len[r], TC_VX_DIRECT };
            if (op->len[r] <= op->vmax) {
                e[1] = (uint64_t)(o - msg);
                memcpy(o, op->in + op->off[r], op->len[r]);
                o += op->len[r];
            }
            memcpy(msg + TC_VX_HEAD(j), e, sizeof(e));
        }
        TC_RETURN_IF_FAILED(
            tc_status_mpi(PMPI_Isend(msg, (int)(o - msg), MPI_BYTE, m->leader_of[b], node_tag(op),
                                     op->ctx->pcomm, &op->mreq[k - 1])));
        for (int j = 0; j < P; j++) {
            const int r = vr_rank(op, b, j);
            if (op->len[r] > op->vmax)
                TC_RETURN_IF_FAILED(tc_pieces_post(&op->net, (char *)op->in + op->off[r],
                                                   op->len[r], r, block_tag(op), 1, NULL));
        }
    }
    return TC_OK;
}

/* Scatterv root: our node's item (an entry per local rank: its block
 * carried, or left to single copy in our exposed send buffer). */
static tc_status_t put_home(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int P = op->ctx->map.lsize, me = op->ctx->map.lrank;
    size_t bytes = TC_VX_HEAD(P);
    ptrdiff_t lo = 0, hi = 0;
    int sc = 0;
    for (int j = 0; j < P; j++) {
        const int r = vr_rank(op, op->vnode, j);
        const ptrdiff_t o = (ptrdiff_t)op->off[r], e = o + (ptrdiff_t)op->len[r];
        if (j == me || op->len[r] <= op->vmax) {
            bytes += j == me ? 0 : op->len[r];
            continue;
        }
        lo = !sc || o < lo ? o : lo;
        hi = !sc++ || e > hi ? e : hi;
    }
    if (sc && !op->cookie) {
        struct iovec iov = { (char *)op->in + lo, (size_t)(hi - lo) };
        TC_RETURN_IF_FAILED(tc_region_acquire(s, op->keep, &iov, 1, TC_RIGHT_READ, &op->cookie));
    }
    char *it = tc_shm_item_begin(s, bytes, op->eager_slot, op->seq, op->eager_wait);
    if (!it) return TC_INPROGRESS;
    const uint64_t head[2] = { op->cookie, (uint64_t)P };
    memcpy(it, head, sizeof(head));
    size_t at = TC_VX_HEAD(P);
    for (int j = 0; j < P; j++) {
        const int r = vr_rank(op, op->vnode, j);
        uint64_t e[2] = { op->len[r], 0 };
        if (j != me && op->len[r] > op->vmax) {
            e[1] = TC_VX_SC | (uint64_t)((ptrdiff_t)op->off[r] - lo);
        } else if (j != me) {
            e[1] = at;
            memcpy(it + at, op->in + op->off[r], op->len[r]);
            at += op->len[r];
        }
        memcpy(it + TC_VX_HEAD(j), e, sizeof(e));
    }
    tc_shm_item_publish(s, bytes, op->eager_slot, op->seq);
    return TC_OK;
}

/* Scatterv, another node than the root's: our entry of the root's message
 * (@it, @z bytes: our collector's item, or the message itself): our block
 * out of it, or its receive from the root posted.  A peer's: checked. */
static tc_status_t take_entry(tc_vexchange_t *op, const char *it, size_t z)
{
    const int i = op->ctx->map.lrank;
    uint64_t head[2], e[2];
    if (z < TC_VX_HEAD(i + 1)) return garbage(op);
    memcpy(head, it, sizeof(head));
    memcpy(e, it + TC_VX_HEAD(i), sizeof(e));
    if (head[1] != (uint64_t)op->ctx->map.lsize || e[1] == TC_VX_FAILED) return garbage(op);
    if (e[1] == TC_VX_DIRECT) {
        TC_RETURN_IF_FAILED(
            tc_pieces_post(&op->net, op->out, op->own, op->root, block_tag(op), 0, NULL));
        return tc_vx_defer(op, e[0] != op->own ? TC_ERR_TRUNCATE : TC_OK);
    }
    if (e[0] != op->own) return tc_vx_defer(op, TC_ERR_TRUNCATE);
    if ((e[1] & TC_VX_FAILED) || e[0] > op->vmax || e[1] > z || e[0] > z - e[1]) return garbage(op);
    memcpy(op->out, it + e[1], op->own);
    return TC_OK;
}

/* Scatterv, another node than the root's: (the collector) the root's
 * message, put as our item (it has an item's layout; one that does not
 * fit an item: a failed one); then our entry, out of our collector's
 * item.  Resumable: op->got 0 receiving, 1 received, 2 our entry taken. */
static tc_status_t scatter_away(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    const int c = op->ctx->map.lrank_of[op->vcol];
    if (op->ctx->map.rank == op->vcol && op->got == 0) {
        const tc_status_t rc = recv_msg(op, op->root);
        if (rc != TC_OK) return rc;
        op->got = 1;
    }
    if (op->ctx->map.rank == op->vcol && s) {
        const int fits = op->msize <= s->cico_slot && op->msize >= TC_VX_HEAD(0);
        const size_t z = fits ? op->msize : sizeof(g_none);
        char *it = tc_shm_item_begin(s, z, op->eager_slot, op->seq, op->eager_wait);
        if (!it) return TC_INPROGRESS;
        memcpy(it, fits ? op->mbuf : (const char *)g_none, z);
        tc_shm_item_publish(s, z, op->eager_slot, op->seq);
    }
    if (op->ctx->map.rank == op->vcol) return take_entry(op, op->mbuf, op->msize);
    const size_t z = tc_shm_item_whole(s, c, op->eager_slot, op->seq);
    if (!z) return TC_INPROGRESS;
    if (z == TC_SHM_ITEM_BROKEN) return garbage(op);
    return take_entry(op, tc_shm_item_data(s, c, op->eager_slot, z), z);
}

/* ---- Linear ------------------------------------------------------------------- */

/* Linear (tc_plan_vroot): every block of the other nodes straight between
 * the root's buffer and its process's, whatever its size. */
static tc_status_t post_flat(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int scatter = op->kind == TC_VX_SCATTERV;
    if (!is_root(op))
        return at_home(op) ? TC_OK
                           : tc_pieces_post(&op->net, scatter ? op->out : (char *)op->in, op->own,
                                            op->root, block_tag(op), !scatter, NULL);
    for (int r = 0; r < m->size; r++) {
        if (m->node_of[r] == op->vnode) continue;
        char *at = scatter ? (char *)op->in + op->off[r] : op->out + op->off[r];
        TC_RETURN_IF_FAILED(
            tc_pieces_post(&op->net, at, op->len[r], r, block_tag(op), scatter, NULL));
    }
    return TC_OK;
}

/* ---- The state machine --------------------------------------------------------- */

/* The start: what needs no other process (our block sent on its own, the
 * Scatterv root's messages, our item). */
static tc_status_t vr_start(tc_vexchange_t *op)
{
    const int me = op->ctx->map.rank;
    if (!op->posted) {
        op->posted = 1;
        if (op->flat) TC_RETURN_IF_FAILED(post_flat(op));
        if (op->kind == TC_VX_SCATTERV && is_root(op) && !op->flat) {
            TC_RETURN_IF_FAILED(send_nodes(op));
            op->got = 1; /* (sent) */
        }
        if (op->kind == TC_VX_GATHERV && !at_home(op) && op->own > op->vmax && !op->flat)
            TC_RETURN_IF_FAILED(tc_pieces_post(&op->net, (char *)op->in, op->own, op->root,
                                               block_tag(op), 1, NULL));
    }
    if (is_root(op)) {
        const int sc = op->kind == TC_VX_SCATTERV;
        if (sc && op->ctx->shm) {
            const tc_status_t rc = put_home(op);
            if (rc != TC_OK) return rc;
        }
        if (op->len[me] != op->own) return tc_vx_defer(op, TC_ERR_TRUNCATE);
        char *to = sc ? op->out : op->out + op->off[me];
        const char *from = sc ? op->in + op->off[me] : op->in;
        if (op->own && to != from) memcpy(to, from, op->own);
        return TC_OK;
    }
    if (op->kind == TC_VX_GATHERV && me != op->vcol) return put_block(op);
    return TC_OK;
}

/* What needs the other processes (their items, the node messages) until
 * this process is done with theirs. */
static tc_status_t vr_steps(tc_vexchange_t *op)
{
    const int me = op->ctx->map.rank;
    if (op->kind == TC_VX_GATHERV) {
        if (is_root(op)) return gather_root(op);
        if (me == op->vcol && !op->got && !op->flat) { /* (got: sent) */
            const tc_status_t rc = send_node(op);
            if (rc != TC_OK) return rc;
            op->got = 1;
        }
        return TC_OK;
    }
    if (is_root(op)) return TC_OK;
    if (at_home(op))
        return tc_vx_take(op, op->ctx->map.lrank_of[op->root], (size_t)op->ctx->map.lrank, op->out,
                          op->own, 0);
    if (op->got == 2 || op->flat) return TC_OK;
    const tc_status_t rc = scatter_away(op);
    if (rc == TC_OK) op->got = 2;
    return rc;
}

/* The messages between nodes over (the Gatherv root: every node's taken). */
static tc_status_t net_done(tc_vexchange_t *op)
{
    int flag = 0;
    if (op->kind == TC_VX_GATHERV && is_root(op) && !op->flat) {
        const tc_status_t rc = recv_nodes(op);
        if (rc != TC_OK) return rc;
    } else {
        for (int k = 0, n = is_root(op) ? op->ctx->map.nnodes : 1; k < n; k++) {
            TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&op->mreq[k], &flag, MPI_STATUS_IGNORE)));
            if (!flag) return TC_INPROGRESS;
        }
    }
    TC_RETURN_IF_FAILED(tc_pieces_progress(&op->net));
    return tc_vx_defer(op, op->net.fail);
}

tc_status_t tc_vroot_work(tc_vexchange_t *op)
{
    tc_shm_t *s = op->ctx->shm;
    tc_status_t rc;
    switch (op->state) {
    case VR_START:
        if ((rc = vr_start(op)) != TC_OK) return rc;
        op->state = VR_WORK;
        /* fall through */
    case VR_WORK:
        if ((rc = vr_steps(op)) != TC_OK) return rc;
        if (s) tc_cctl_finish(s, op->seq);
        op->state = VR_ACK;
        /* fall through */
    case VR_ACK:
        if ((rc = net_done(op)) != TC_OK) return rc;
        /* an exposed buffer is read until the others finish; a failure of
         * ours waits for them too, so none of them takes it for its own
         * (the abort word) while it still has messages to take */
        if ((op->cookie || op->fail != TC_OK) && s && !tc_shm_all_done(s, op->seq))
            return TC_INPROGRESS;
        op->state = VR_DONE;
        /* fall through */
    default: return op->fail;
    }
}

/* After a failure (ours, or a local process's): a node message this
 * process owes and never sent goes as one that says nothing (the Scatterv
 * root's, a Gatherv collector's), and what it receives is taken, so that
 * no other node waits and no message is left.  A Scatterv process of
 * another node that never read its entry reads it if its collector's item
 * is there; otherwise it cannot know whether a block comes on its own:
 * not drained (topocoll steps aside on the communicator). */
tc_status_t tc_vroot_drain(tc_vexchange_t *op)
{
    const tc_nodemap_t *m = &op->ctx->map;
    const int root = is_root(op), col = m->rank == op->vcol && !at_home(op);
    for (int k = 1; !op->flat && op->kind == TC_VX_SCATTERV && root && !op->got && k < m->nnodes;
         k++)
        TC_RETURN_IF_FAILED(send_none(op, m->leader_of[(op->vnode + k) % m->nnodes], k - 1));
    if (!op->flat && ((op->kind == TC_VX_SCATTERV && root) || (op->kind == TC_VX_GATHERV && col)) &&
        !op->got) {
        if (op->kind == TC_VX_GATHERV) TC_RETURN_IF_FAILED(send_none(op, op->root, 0));
        op->got = 1;
    }
    if (!op->rank_at || !op->nbase || !op->mreq || !op->netup)
        return TC_ERR_NOMEM; /* (its init failed, or a message it matched it could not take) */
    if (!op->flat && op->kind == TC_VX_SCATTERV && !root && !at_home(op) && op->got < 2) {
        tc_shm_t *s = op->ctx->shm;
        const int c = m->lrank_of[op->vcol];
        const size_t z = s && !col ? tc_shm_item_whole(s, c, op->eager_slot, op->seq) : 0;
        if (!col && (!z || z == TC_SHM_ITEM_BROKEN)) return TC_ERR_REMOTE;
        if (col && op->got == 0) {
            const tc_status_t rc = recv_msg(op, op->root);
            if (rc != TC_OK) return rc;
            op->got = 1;
            op->ctx->net_dirty = 1; /* (our node's blocks sent on their own: never read) */
        }
        TC_RETURN_IF_FAILED(take_entry(
            op, col ? op->mbuf : tc_shm_item_data(s, c, op->eager_slot, z), col ? op->msize : z));
        op->got = 2;
    }
    return net_done(op);
}

void tc_vroot_fini(tc_vexchange_t *op)
{
    if (op->mreq) tc_req_abandon(op->mreq, op->ctx->map.nnodes);
    free(op->mreq);
    free(op->nbase);
    op->mreq = NULL;
    op->nbase = NULL;
    op->mbuf = NULL;
}
