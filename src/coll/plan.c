/* coll/plan -- see plan.h. */
#include "plan.h"

#include "bcast.h"
#include "exchange.h"
#include "fold.h"
#include "vexchange.h"
#include "xtune.h"

const char *tc_plan_native_why(const tc_ctx_t *c, int ci, size_t bytes)
{
    static const char *const forced[TC_NCOLLS] = {
#define TC_COLL(ID, Name, lower, SHAPE, ...) "TOPOCOLL_" #ID "_ALG=native",
#include "../base/colls.def"
#undef TC_COLL
    };
    int f = tc_plan_forced(c, ci);
    if (f == TC_ALG_NATIVE) return forced[ci];
    if (f != TC_ALG_AUTO) return NULL; /* forced: it runs, whatever the size */
    if (ci == TC_CI_BARRIER)
        return c->map.nnodes > 1 && c->cfg->barrier_flat ? "several nodes, TOPOCOLL_BARRIER_FLAT=1"
                                                         : NULL;
    return tc_xtune_native_why(c, ci, bytes);
}

int tc_plan_chain(const tc_ctx_t *c, int ci, size_t bytes)
{
    int f = tc_plan_forced(c, ci);
    if (c->map.nnodes > 1 && (f == TC_ALG_CHAIN || f == TC_ALG_BINOMIAL)) return f == TC_ALG_CHAIN;
    return c->map.nnodes > 2 && bytes >= c->cfg->chain_min;
}

/* 1 if Bcast's block owners can run on @c for @bytes: 3 nodes or more,
 * an owner's children (the other owners) fit a part's, one rail. */
static int bcast_owners_fit(const tc_ctx_t *c, size_t bytes)
{
    const int N = c->map.nnodes;
    return N >= 3 && N - 2 <= TC_BCAST_MAXCHILD && tc_bcast_rails(c, bytes) == 1;
}

int tc_plan_alt(const tc_ctx_t *c, int ci, size_t bytes)
{
    if (tc_plan_forced(c, ci) != TC_ALG_AUTO || bytes >= c->cfg->chain_min) return 0;
    if (ci == TC_CI_BCAST) return bytes >= c->cfg->bcast_owners_min && bcast_owners_fit(c, bytes);
    return ci == TC_CI_REDUCE && c->map.nnodes >= 4;
}

int tc_plan_bcast_net(const tc_ctx_t *c, size_t bytes, int alt)
{
    const int f = tc_plan_forced(c, TC_CI_BCAST);
    if (f == TC_ALG_OWNERS && bcast_owners_fit(c, bytes)) return TC_ALG_OWNERS;
    if (f == TC_ALG_AUTO && alt && tc_plan_alt(c, TC_CI_BCAST, bytes)) return TC_ALG_OWNERS;
    return tc_plan_chain(c, TC_CI_BCAST, bytes) ? TC_ALG_CHAIN : TC_ALG_BINOMIAL;
}

int tc_plan_reduce_net(const tc_ctx_t *c, size_t bytes, int alt)
{
    const int N = c->map.nnodes, f = tc_plan_forced(c, TC_CI_REDUCE);
    if (N > 1 &&
        (f == TC_ALG_CHAIN || f == TC_ALG_BINOMIAL || f == TC_ALG_HALVING || f == TC_ALG_OWNERS))
        return f;
    if (tc_plan_alt(c, TC_CI_REDUCE, bytes)) { /* (coll/xtune may have measured the other faster) */
        if (bytes >= c->cfg->halving_min) return alt ? TC_ALG_OWNERS : TC_ALG_HALVING;
        return alt ? TC_ALG_HALVING : TC_ALG_BINOMIAL;
    }
    return tc_plan_chain(c, TC_CI_REDUCE, bytes) ? TC_ALG_CHAIN : TC_ALG_BINOMIAL;
}

int tc_allgather_alg(const tc_ctx_t *c, size_t block)
{
    const tc_nodemap_t *m = &c->map;
    int f = tc_plan_forced(c, TC_CI_ALLGATHER);
    if (m->nnodes == 1 && block <= c->cfg->allgather_cico_max &&
        block <= (size_t)c->cfg->cico_slots * c->cfg->cico_slot)
        return TC_AG_USE_CICO;
    if (f == TC_ALG_RING || f == TC_ALG_LEADER)
        return f == TC_ALG_RING ? TC_AG_USE_RING : TC_AG_USE_LEADER;
    if (m->nnodes == 1) return TC_AG_USE_RING;
    return c->maxlocal > 6 && block >= (8u << 10) ? TC_AG_USE_RING : TC_AG_USE_LEADER;
}

int tc_allgather_sw(const tc_ctx_t *c) { return c->map.nswg >= 2 && c->map.swg_k >= 2; }

int tc_allgather_rd(const tc_ctx_t *c, size_t block)
{
    const int N = c->map.nnodes;
    return N >= 4 && block * (size_t)c->maxlocal <= c->cfg->allgather_rd_max && !tc_allgather_sw(c);
}

size_t tc_plan_bcast_seg(const tc_ctx_t *ctx, size_t bytes, int root)
{
    const tc_nodemap_t *m = &ctx->map;
    if (ctx->cfg->bcast_segsize) return ctx->cfg->bcast_segsize;
    /* A pipeline needs something to overlap: forwarding (a tree deeper than
     * one hop) or readers on the receiving node.  Without either, segments
     * only add per-message costs (measured: 0.45x native at 32 KiB with one
     * process per virtual node).  Every producer decides alike: the inputs
     * are global. */
    if (m->nnodes == 2 && m->size_of[1 - m->node_of[root]] == 1) return bytes;
    /* Along a chain: TC_NET_SEG (see ctx.h). */
    if (tc_plan_chain(ctx, TC_CI_BCAST, bytes)) return TC_NET_SEG;
    /* HierKNEM Table 1 (IB20G) as the floor, but at most ~8 segments: an
     * 8-stage pipeline keeps the overlap, and per-message costs of the
     * underlying MPI dominate beyond (measured with one process per
     * virtual node: 64 KiB segments cost 20% at 16 MiB, bytes/8 is at par). */
    size_t table1 = bytes < (64 << 10) ? (8 << 10) : (64 << 10);
    size_t eighth = ((bytes / 8) + 4095) & ~(size_t)4095;
    return eighth > table1 ? eighth : table1;
}

/* The irregular exchanges on several nodes, whatever the counts (no rank
 * knows them all): Gatherv and Scatterv through each node's collector
 * (coll/vroot) wherever single copy runs; Allgatherv and Alltoallv by the
 * per-slice exchange (coll/vexchange) where it runs; the native MPI's
 * elsewhere. */
static tc_alg_t vx_multi(const tc_ctx_t *c, int ci, const char **why)
{
    const int rooted =
        ci == TC_CI_GATHERV || ci == TC_CI_SCATTERV || ci == TC_CI_GATHER || ci == TC_CI_SCATTER;
    if (rooted && !c->all_sc && c->maxlocal > 1)
        *why = "several nodes without single copy";
    else if (rooted && !tc_vexchange_fits(c))
        *why = "more ranks than an item's header holds (TOPOCOLL_CICO_SLOT / 16 - 1)";
    else if (rooted)
        return (tc_alg_t)tc_plan_vroot(c, ci);
    else if (!tc_vexchange_sliced(c))
        *why = "several nodes, unequal or without single copy";
    else if ((ci == TC_CI_ALLTOALLV || ci == TC_CI_ALLTOALLW) && !tc_vexchange_fits(c))
        *why = "more ranks than an item's header holds (TOPOCOLL_CICO_SLOT / 16 - 1)";
    else
        return TC_ALG_AGGREGATE;
    return TC_ALG_NATIVE;
}

int tc_plan_allreduce_net(const tc_ctx_t *c)
{
    if (tc_plan_forced(c, TC_CI_ALLREDUCE) == TC_ALG_SLICES) return TC_ALG_SLICES;
    return tc_allgather_sw(c) ? TC_ALG_SWITCHES : TC_ALG_SLICES; /* (the same switch test) */
}

/* Gatherv, Scatterv on several nodes (4 hosts x 2, 1 Gbit/s, 8 B-4 KiB
 * units: docs/performance.md): through the leaders Scatterv ran
 * 1.55-4.37x native up to 256 B, linear 0.92-1.34x; Gatherv 0.93-1.13x
 * and 0.77-0.93x up to 128 B; from 512 B all at par.  Leaders by
 * default: the root takes one message per node, not one per process. */
int tc_plan_vroot(const tc_ctx_t *c, int ci)
{
    return tc_plan_forced(c, ci) == TC_ALG_LINEAR ? TC_ALG_LINEAR : TC_ALG_LEADER;
}

/* The reduce-scatters (coll/redscat) of a vector of @bytes: single copy
 * on one node from 16 KiB a block on average (a peer's block costs a
 * system call: np=2 here, 4.5-6 us where the native takes 0.6-2.5 us up
 * to 4 KiB blocks; at 8 KiB Open MPI's 1.1-1.4x, MPICH's 0.4-0.55x; from
 * 16 KiB 1.2-2.9x both: docs/performance.md); on several nodes the
 * slices, which need as many processes on every node
 * (TOPOCOLL_REDUCE_SCATTER*_FLAT_MAX keeps small vectors native there).
 * Non-commutative ops across nodes: the screening's. */
#define TC_RS_SC_MIN (16u << 10)
static tc_alg_t redscat_alg(const tc_ctx_t *c, int ci, size_t bytes, const char **why)
{
    if (c->map.nnodes == 1 && tc_plan_forced(c, ci) == TC_ALG_AUTO &&
        bytes < TC_RS_SC_MIN * (size_t)c->map.size)
        *why = "blocks under 16 KiB on average (the native's shared memory is faster)";
    else if (c->maxlocal < 2)
        *why = "one process per node: nothing to fold by single copy";
    else if (c->minlocal != c->maxlocal)
        *why = "unequal nodes";
    else if (!c->all_sc || !c->shm)
        *why = "no single copy";
    else
        return c->map.nnodes > 1 ? TC_ALG_SLICES : TC_ALG_NODE;
    return TC_ALG_NATIVE;
}

/* Scan, Exscan: the chain (coll/scan; TC_ALG_NODE on one node), or with
 * TOPOCOLL_SCAN_ALG=leader the node prefix (coll/hscan: a node's local
 * prefixes by single copy, the leaders' exclusive scan) where every node
 * holds consecutive ranks and a node segment with single copy.  Not the
 * default: 4 emulated hosts x 2 ranks on 2 cores, 1 Gbit/s, it ran
 * 0.10-0.16x native to 256 B (its waits on the node, each a nap when
 * ranks outnumber cores) and 0.6-0.8x from 1 MiB (the leaders' recursive
 * doubling sends the vector log2 N times), where the pipelined chain
 * crosses each link once: 0.85-1.33x (docs/performance.md). */
static tc_alg_t scan_alg(const tc_ctx_t *c, int ci)
{
    if (c->map.nnodes == 1) return TC_ALG_NODE;
    if (tc_plan_forced(c, ci) == TC_ALG_LEADER && c->blocked && c->minlocal >= 2 && c->all_sc)
        return TC_ALG_LEADER;
    return TC_ALG_CHAIN;
}

/* Topocoll's algorithm for @ci of @bytes on @c, or TC_ALG_NATIVE where
 * topocoll has none for the call (*@why says why). */
static tc_alg_t topo_alg(const tc_ctx_t *c, int ci, size_t bytes, const char **why)
{
    const int multi = c->map.nnodes > 1;
    const char *no_sc = "no single copy above the CICO size";
    switch (ci) {
    case TC_CI_BCAST:
        return multi ? tc_plan_bcast_net(c, bytes, tc_xtune_alt(c, ci, bytes)) : TC_ALG_NODE;
    case TC_CI_REDUCE:
        if (tc_fold_uses_cico(c, bytes)) return multi ? TC_ALG_LEADERS_CICO : TC_ALG_NODE;
        if (!c->all_sc) break;
        if (!multi) return TC_ALG_NODE;
        return tc_plan_reduce_net(c, bytes, tc_xtune_alt(c, ci, bytes));
    case TC_CI_ALLREDUCE:
        if (tc_fold_uses_cico(c, bytes)) return multi ? TC_ALG_LEADERS_CICO : TC_ALG_NODE;
        if (!c->all_sc) break;
        return multi ? tc_plan_allreduce_net(c) : TC_ALG_NODE;
    case TC_CI_ALLGATHER: {
        int ag = tc_allgather_alg(c, bytes);
        if (ag == TC_AG_USE_CICO) return TC_ALG_NODE;
        if (!c->all_sc) break;
        return ag == TC_AG_USE_RING ? TC_ALG_RING : TC_ALG_LEADER;
    }
    case TC_CI_GATHER:
    case TC_CI_SCATTER:
        /* several nodes: Gatherv's and Scatterv's collectors (coll/vroot) */
        if (multi) return vx_multi(c, ci, why);
        /* fall through */
    case TC_CI_ALLTOALL:
        if (!tc_exchange_fits(c, ci - TC_CI_GATHER + TC_XC_GATHER, bytes)) {
            *why = multi ? "several nodes, or unequal nodes" : "no single copy";
            return TC_ALG_NATIVE;
        }
        return multi ? TC_ALG_AGGREGATE : TC_ALG_NODE;
    case TC_CI_GATHERV:
    case TC_CI_SCATTERV:
    case TC_CI_ALLGATHERV:
    case TC_CI_ALLTOALLV:
    case TC_CI_ALLTOALLW:
        /* one node: every size (each block's sender picks its item or
         * single copy by the block's size: coll/vexchange) */
        if (multi) return vx_multi(c, ci, why);
        if (!c->shm || !c->all_sc) {
            *why = "no single copy";
            return TC_ALG_NATIVE;
        }
        if (!tc_vexchange_fits(c)) {
            *why = "more ranks than an item's header holds (TOPOCOLL_CICO_SLOT / 16 - 1)";
            return TC_ALG_NATIVE;
        }
        return TC_ALG_NODE;
    case TC_CI_REDUCE_SCATTER_BLOCK:
    case TC_CI_REDUCE_SCATTER: return redscat_alg(c, ci, bytes, why);
    case TC_CI_BARRIER: return TC_ALG_DISSEMINATION;
    case TC_CI_SCAN:
    case TC_CI_EXSCAN: return scan_alg(c, ci);
    default: break;
    }
    *why = no_sc;
    return TC_ALG_NATIVE;
}

void tc_plan_select(const tc_ctx_t *c, int ci, size_t bytes, tc_plan_t *p)
{
    const int f = tc_plan_forced(c, ci);
    p->coll = ci;
    p->forced = f != TC_ALG_AUTO;
    if ((p->why = tc_plan_native_why(c, ci, bytes))) {
        p->alg = TC_ALG_NATIVE;
        return;
    }
    p->alg = topo_alg(c, ci, bytes, &p->why);
    if (p->why) return;
    p->why = f == (int)p->alg     ? "forced (TOPOCOLL_<COLL>_ALG)"
             : p->forced          ? "the forced algorithm does not apply here: the plan's choice"
             : c->map.nnodes == 1 ? "one node"
                                  : "by size and placement";
}

void tc_plan_select_own(const tc_ctx_t *c, int ci, size_t bytes, const char *why, tc_plan_t *p)
{
    tc_plan_select(c, ci, bytes, p);
    if (p->alg != TC_ALG_NATIVE || tc_plan_forced(c, ci) == TC_ALG_NATIVE) return;
    const char *none = NULL;
    const tc_alg_t alg = topo_alg(c, ci, bytes, &none);
    if (alg == TC_ALG_NATIVE) return; /* (none applies: the plan's reason stands) */
    p->alg = alg;
    p->why = why;
}
