/* coll/xtune -- see xtune.h. */
#include "xtune.h"

#include "../base/log.h"

#include <stdint.h>
#include <stdio.h>

/* A class explores its nm methods (k->nm) in runs, in turn: nm runs not
 * timed (one of each method: first-use set-up), then nm x TC_XT_TIMED
 * timed: topocoll, native[, topocoll's alternative], ... */
enum {
    TC_XT_RUN_MIN = 4,  /* calls per run, at least */
    TC_XT_RUN_MAX = 64, /* and at most */
    TC_XT_PERIOD = 4096 /* calls of a class between two measurements, at least */
};
#define TC_XT_RUN_BYTES ((size_t)1 << 20) /* a run moves about this much */
/* The native wins only when faster by 10%: topocoll puts no more bytes on
 * the network (fewer with ranks by slot), and repeated measurements of one
 * application here (ASP's 13 KiB Bcast, 4 hosts x 2 by node) spread by
 * that much: 213-320 us topocoll, 205-359 us native.  At 5%, two ASP jobs
 * of three kept the native Bcast and ran 0.95-0.98x, against 1.27-1.56x
 * with topocoll's. */
#define TC_XT_MARGIN 0.9

/* The slot in tc_ctx_t.xt of each collective (TC_CI_*): the registry's
 * XT column, else -1 (not measured). */
static const int xt_slot[TC_NCOLLS] = {
#define TC_COLL(ID, Name, lower, SHAPE, FLAT, FLAT_DFLT, XT, ALGS) TC_SEL_##XT(TC_XT_##ID, -1),
#include "../base/colls.def"
#undef TC_COLL
};

/* floor(log2(bytes)), at most TC_XT_CLASSES - 1 (on every blocking call
 * in range: one instruction, not a loop) */
static int size_class(size_t bytes)
{
    int k = bytes ? 63 - __builtin_clzll((unsigned long long)bytes) : 0;
    return k < TC_XT_CLASSES - 1 ? k : TC_XT_CLASSES - 1;
}

/* Calls per run for messages of @bytes (a size class's least): about TC_XT_RUN_BYTES, so that a
 * link's or a switch's buffers (a token bucket's burst on emulated hosts)
 * cannot hide a method's bytes on the wire. */
static uint32_t run_calls(size_t bytes)
{
    size_t n = TC_XT_RUN_BYTES / (bytes ? bytes : 1);
    return n < TC_XT_RUN_MIN ? TC_XT_RUN_MIN : n > TC_XT_RUN_MAX ? TC_XT_RUN_MAX : (uint32_t)n;
}

/* The median of a method's timed runs on this rank. */
static int64_t median_run(const tc_xt_class_t *k, int m)
{
    int64_t v[TC_XT_TIMED];
    int n = k->nrun[m];
    for (int i = 0; i < n; i++) { /* insertion sort of at most TC_XT_TIMED */
        int j = i;
        while (j > 0 && v[j - 1] > k->run_ns[m][i]) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = k->run_ns[m][i];
    }
    return n ? v[n / 2] : 0;
}

/* The decision, collective over c->pcomm: each method's median run on
 * the slowest rank; topocoll's faster algorithm (its alternative when
 * measured and faster), then the native only when faster than that by
 * TC_XT_MARGIN (topocoll's default algorithm when a method has no run or
 * the maximum cannot be taken). */
static int decide(const tc_ctx_t *c, const tc_xt_class_t *k, int coll, size_t bytes, uint32_t calls)
{
    int64_t mine[3] = { median_run(k, TC_XT_TOPO), median_run(k, TC_XT_NATIVE),
                        k->nm > 2 ? median_run(k, TC_XT_ALT) : 0 },
            all[3];
    if (PMPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MAX, c->pcomm) != MPI_SUCCESS)
        return TC_XT_TOPO;
    int m =
        k->nm > 2 && all[TC_XT_TOPO] > 0 && all[TC_XT_ALT] > 0 && all[TC_XT_ALT] < all[TC_XT_TOPO]
            ? TC_XT_ALT
            : TC_XT_TOPO;
    if (all[m] > 0 && all[TC_XT_NATIVE] > 0 &&
        (double)all[TC_XT_NATIVE] < TC_XT_MARGIN * (double)all[m])
        m = TC_XT_NATIVE;
    if (c->map.rank == 0) {
        double per = (double)(calls - 1) * 1e3;
        char alt[48] = "";
        if (k->nm > 2)
            snprintf(alt, sizeof alt, ", its alternative %.1f", (double)all[TC_XT_ALT] / per);
        tc_debug(c->cfg, 1,
                 "%s of %zu B and up (a size class) on %d processes, us per call (median of %d "
                 "runs of %u, slowest rank): topocoll %.1f%s, native %.1f: %s",
                 tc_coll_call(coll), bytes, c->map.size, TC_XT_TIMED, calls,
                 (double)all[TC_XT_TOPO] / per, alt, (double)all[TC_XT_NATIVE] / per,
                 m == TC_XT_NATIVE ? "native"
                 : m == TC_XT_ALT  ? "topocoll's alternative"
                                   : "topocoll");
    }
    return m;
}

/* 1 if the tuner measures collectives of @bytes on @c: on, several nodes,
 * up to TOPOCOLL_XTUNE_MAX (the one range check of begin and native_why). */
static int tuned(const tc_ctx_t *c, int coll, size_t bytes)
{
    return c->cfg->xtune && xt_slot[coll] >= 0 && c->map.nnodes >= 2 && bytes <= c->cfg->xtune_max;
}

/* Calls of size class @cls explored before the choice, @nm methods (runs
 * of b calls). */
static uint32_t explore_calls(int cls, int nm)
{
    return (uint32_t)(nm + nm * TC_XT_TIMED) * run_calls((size_t)1 << cls);
}

int tc_xtune_begin(tc_ctx_t *c, int coll, size_t bytes, int alt, tc_xt_call_t *x)
{
    x->cls = NULL;
    x->method = TC_XT_TOPO;
    if (!tuned(c, coll, bytes)) return TC_XT_TOPO;
    int cls = size_class(bytes);
    tc_xt_class_t *k = &c->xt[xt_slot[coll]][cls];
    if (k->calls == 0) k->nm = alt ? 3 : 2; /* (a measurement begins) */
    const uint32_t b = run_calls((size_t)1 << cls), explore = explore_calls(cls, k->nm);
    uint32_t i = k->calls++;
    if (i < explore) {
        uint32_t run = i / b, j = i % b;
        x->method = (int)(run % (uint32_t)k->nm);
        if (x->method == TC_XT_ALT && !alt) x->method = TC_XT_TOPO, j = 0; /* (not timed) */
        if (run < (uint32_t)k->nm || j == 0)
            return x->method; /* (j 0: the other method's stragglers) */
        x->cls = k;
        x->last = j == b - 1;
        x->c = c;
        x->t0 = PMPI_Wtime();
        return x->method;
    }
    if (i == explore) k->choice = decide(c, k, coll, (size_t)1 << cls, b);
    if (i >= explore + TC_XT_PERIOD + 16 * explore) { /* measure again from the next call */
        k->calls = 0;
        k->nrun[0] = k->nrun[1] = k->nrun[2] = 0;
    }
    x->method = k->choice == TC_XT_ALT && !alt ? TC_XT_TOPO : k->choice;
    return x->method;
}

int tc_xtune_alt(const tc_ctx_t *c, int coll, size_t bytes)
{
    if (!tuned(c, coll, bytes)) return 0;
    int cls = size_class(bytes);
    const tc_xt_class_t *k = &c->xt[xt_slot[coll]][cls];
    return k->calls > explore_calls(cls, k->nm) && k->choice == TC_XT_ALT;
}

void tc_xtune_end(const tc_xt_call_t *x)
{
    if (!x->cls) return;
    tc_xt_class_t *k = x->cls;
    k->t_run += PMPI_Wtime() - x->t0;
    if (!x->last) return;
    /* The run's end: a barrier, timed, pays what the run left queued. */
    double t0 = PMPI_Wtime();
    PMPI_Barrier(x->c->pcomm);
    int64_t ns = (int64_t)((k->t_run + PMPI_Wtime() - t0) * 1e9);
    if (k->nrun[x->method] < TC_XT_TIMED) k->run_ns[x->method][k->nrun[x->method]++] = ns;
    k->t_run = 0;
}

size_t tc_xtune_flat_max(const tc_ctx_t *c, int coll) { return c->cfg->flat_max[coll]; }

const char *tc_xtune_native_why(const tc_ctx_t *c, int coll, size_t bytes)
{
    /* 1: the collective has a TOPOCOLL_<ID>_FLAT_MAX */
    static const unsigned char has_flat[TC_NCOLLS] = {
#define TC_COLL(ID, Name, lower, SHAPE, FLAT, ...) FLAT,
#include "../base/colls.def"
#undef TC_COLL
    };
    if (has_flat[coll] && tc_ctx_flat(c, bytes, tc_xtune_flat_max(c, coll)))
        return "small message across nodes (TOPOCOLL_*_FLAT_MAX)";
    if (!tuned(c, coll, bytes)) return NULL;
    int cls = size_class(bytes);
    const tc_xt_class_t *k = &c->xt[xt_slot[coll]][cls];
    const uint32_t explore = explore_calls(cls, k->nm);
    /* (decided once the blocking calls have explored: k->choice) */
    return k->calls > explore && k->choice == TC_XT_NATIVE
               ? "the native was faster at this size (measured, TOPOCOLL_XTUNE)"
               : NULL;
}
