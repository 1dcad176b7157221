/* coll/tune -- see tune.h. */
#include "tune.h"

#include "../base/log.h"

#include <stdint.h>
#include <time.h>

#define TUNE_WARM                                                              \
    4                   /* samples of each method before trusting the averages \
                           (the first one, cold, is dropped; the median of     \
                           the three others starts the average) */
#define TUNE_ALPHA 0.25 /* weight of a new sample in the moving average */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Size class: ceil(log2(bytes)) - 13, so 8 KiB + 1 .. 16 KiB is class 1;
 * the classes above TC_TUNE_BUCKETS - 1 share the last one. */
static int bucket_of(size_t bytes)
{
    int lg = 0;
    while (lg < 62 && ((size_t)1 << lg) < bytes) lg++;
    int b = lg - 13;
    return b < 0 ? 0 : b >= TC_TUNE_BUCKETS ? TC_TUNE_BUCKETS - 1 : b;
}

static _Atomic uint64_t *word_of(const tc_ctx_t *ctx, int kind, int bucket)
{
    return &tc_cctl(ctx->shm, 0)->tune[kind * TC_TUNE_BUCKETS + bucket];
}

static int mode_at(uint64_t w, uint64_t seq)
{
    return seq >= (w >> 2) ? (int)((w >> 1) & 1) : (int)(w & 1);
}

int tc_tune_range(const tc_ctx_t *ctx, int kind, size_t bytes)
{
    const tc_shm_t *s = ctx->shm;
    const tc_config_t *cfg = ctx->cfg;
    size_t cap = (size_t)cfg->cico_slots * cfg->cico_slot, lo;
    switch (kind) {
    case TC_TUNE_BCAST:
        lo = cfg->bcast_cico_max;
        cap = SIZE_MAX;
        break;
    case TC_TUNE_ALLGATHER: /* above the slots: pipelined through the broadcast ring */
        lo = cfg->allgather_cico_max;
        if (s && tc_shm_ring_bytes(s) >= 4096) cap = SIZE_MAX;
        break;
    case TC_TUNE_ALLREDUCE: /* above the slots: pipelined through the lanes */
        lo = cfg->red_cico_max;
        if (s && tc_shm_lanes_usable(s)) cap = SIZE_MAX;
        break;
    default: lo = cfg->red_cico_max; break;
    }
    return cfg->tune && s && s->single_copy && ctx->all_sc && ctx->map.nnodes == 1 && bytes > lo &&
           bytes <= cap;
}

int tc_tune_choose(tc_tune_t *tu, const tc_ctx_t *ctx, int kind, size_t bytes, int static_cico,
                   uint64_t seq)
{
    tu->kind = kind;
    tu->bucket = -1;
    tu->cico = static_cico;
    tu->t0_ns = 0;
    if (!tc_tune_range(ctx, kind, bytes)) return static_cico;
    if (ctx->cfg->tune == TC_TUNE_FORCE_CICO) return tu->cico = 1; /* same everywhere, not timed */
    tu->bucket = bucket_of(bytes);
    /* The first call of a method is cold; an eager Reduce's CICO first
     * touches the slot under each of its rotating items (measured: 15-19 us
     * against 4 us warm at 32 KiB, which kept single copy, 1.4x slower) */
    tu->cold[0] = 1;
    tu->cold[1] =
        1 + (kind == TC_TUNE_REDUCE && bytes <= ctx->cfg->red_eager_max ? TC_SHM_ITEMS : 0);
    /* Relaxed: the word that decides @seq (written at the start of a call
     * <= seq - 2 that this process has finished) is ordered before this
     * read by that call's synchronisation (every tuned collective acquires
     * the tuner's post, which follows its write); a newer word, or the one
     * before it, gives the same method for @seq (see tune.h). */
    uint64_t w = atomic_load_explicit(word_of(ctx, kind, tu->bucket), memory_order_relaxed);
    tu->cico = mode_at(w, seq);
    return tu->cico;
}

void tc_tune_start(tc_tune_t *tu, tc_ctx_t *ctx, uint64_t seq)
{
    if (!tc_tune_waits(tu, ctx)) return;
    tu->t0_ns = now_ns();
    tc_tune_stat_t *st = &ctx->tune[tu->kind][tu->bucket];
    st->calls++;
    int want;
    if (st->n[1] < tu->cold[1] + TUNE_WARM - 1)
        want = 1;
    else if (st->n[0] < tu->cold[0] + TUNE_WARM - 1)
        want = 0;
    else {
        /* The slower method is retried every TOPOCOLL_TUNE_EXPLORE calls,
         * less often the further behind it is (each retry costs that gap:
         * measured, 2 MiB Allgathers at 3.5x single copy's time through
         * CICO cost 3-5% at the plain rate). */
        int best = st->us[1] <= st->us[0];
        double gap = st->us[!best] / (st->us[best] > 0 ? st->us[best] : 1e-9);
        unsigned every = (unsigned)ctx->cfg->tune_explore * (gap >= 2 ? 8u : gap >= 1.25 ? 2u : 1u);
        want = st->calls % every == 0 ? !best : best;
    }
    _Atomic uint64_t *wp = word_of(ctx, tu->kind, tu->bucket);
    uint64_t w = atomic_load_explicit(wp, memory_order_relaxed); /* our own word */
    if ((w >> 2) > seq) return;    /* the last change is not in force yet */
    int cur = (int)((w >> 1) & 1); /* in force at seq */
    if (want == cur) return;
    /* Relaxed: published to the others by our post of this call (release),
     * which every local process acquires before it completes (tune.h). */
    atomic_store_explicit(wp, (uint64_t)cur | (uint64_t)want << 1 | (seq + 2) << 2,
                          memory_order_relaxed);
}

void tc_tune_end(tc_tune_t *tu, tc_ctx_t *ctx)
{
    if (!tc_tune_waits(tu, ctx) || !tu->t0_ns) return;
    double us = (double)(now_ns() - tu->t0_ns) / 1e3;
    tc_tune_stat_t *st = &ctx->tune[tu->kind][tu->bucket];
    int m = tu->cico;
    tu->t0_ns = 0;
    if (st->n[m]++ < tu->cold[m]) return; /* cold calls (tc_tune_choose) */
    /* Warm-up: the median of the next three samples (one slow call,
     * preempted or faulting, must not decide a size class that sees few
     * calls; nor one lucky call: the best of them kept CICO for 2 MiB
     * Allgathers 3.5x slower than single copy for a fifth of the calls). */
    unsigned k = st->n[m] - tu->cold[m]; /* 1..: kept samples */
    if (k < TUNE_WARM) {
        double *w = st->warm[m];
        w[k - 1] = us;
        if (k == TUNE_WARM - 1) {
            double lo = w[0] < w[1] ? w[0] : w[1], hi = w[0] < w[1] ? w[1] : w[0];
            st->us[m] = w[2] < lo ? lo : w[2] > hi ? hi : w[2];
        }
        return;
    }
    /* a preempted call (oversubscription) counts as 4x the average at most */
    if (us > 4 * st->us[m]) us = 4 * st->us[m];
    st->us[m] += TUNE_ALPHA * (us - st->us[m]);
}

void tc_tune_report(const tc_ctx_t *ctx)
{
    static const char *const kind[TC_TUNE_KINDS] = { "reduce", "allreduce", "allgather", "bcast" };
    if (!ctx->shm || ctx->shm->me != 0 || ctx->cfg->verbose < 1) return;
    for (int k = 0; k < TC_TUNE_KINDS; k++)
        for (int b = 0; b < TC_TUNE_BUCKETS; b++) {
            const tc_tune_stat_t *st = &ctx->tune[k][b];
            if (!st->calls) continue;
            tc_debug(ctx->cfg, 1,
                     "tune: %s %s %zu KiB: %u calls; single copy %.1f us (%u), CICO %.1f us (%u)",
                     kind[k], b == TC_TUNE_BUCKETS - 1 ? "above" : "up to",
                     ((size_t)1 << (b + 13 - (b == TC_TUNE_BUCKETS - 1))) >> 10, st->calls,
                     st->us[0], st->n[0], st->us[1], st->n[1]);
        }
}
