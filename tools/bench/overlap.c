/*
 * tools/bench/overlap.c -- the nonblocking collectives' overlap
 * (--overlap, IMB-NBC's method; main.c's comment) and what a communicator
 * costs (--comm-churn).  The one file with internal headers besides
 * options.c: --overlap shows the progress configuration (bench.h).
 */
#include "bench.h"

#include "base/config.h" /* tc_config_get: the progress configuration */
#include "coll/tree.h"   /* tc_ctx_lookup, tc_tree_split: the S the operations use */
#include "coll/model.h"  /* tc_st_best_s: the model's S */

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- --overlap: the nonblocking collectives' overlap (IMB-NBC method) ------- */

enum { NB_IBCAST, NB_IREDUCE, NB_IALLREDUCE, NB_IALLGATHER, NB_ISCAN, NB_IBARRIER, NB_N };
static const char *nb_names[] = { "ibcast",     "ireduce", "iallreduce",
                                  "iallgather", "iscan",   "ibarrier" };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Computation for @sec seconds, no MPI call (a progress thread, if any,
 * is the only thing advancing communication meanwhile). */
static double compute(double sec)
{
    volatile double x = 1.0;
    double t0 = now();
    while (now() - t0 < sec)
        for (int i = 0; i < 2000; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

/* Start nonblocking collective @c on @buf (native or topocoll) over @n
 * bytes (doubles for the reductions). */
static int nb_start(int c, int native, double *in, double *out, size_t bytes, int size,
                    MPI_Request *r)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = (int)(bytes / sizeof(double)), blk = (int)(bytes / (size_t)size / sizeof(double));
    switch (c) {
    case NB_IBCAST:
        return native ? PMPI_Ibcast(in, n, MPI_DOUBLE, 0, w, r)
                      : topocoll_ibcast(in, n, MPI_DOUBLE, 0, w, r);
    case NB_IREDUCE:
        return native ? PMPI_Ireduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, w, r)
                      : topocoll_ireduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, w, r);
    case NB_IALLREDUCE:
        return native ? PMPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, w, r)
                      : topocoll_iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, w, r);
    case NB_IALLGATHER:
        return native ? PMPI_Iallgather(in, blk, MPI_DOUBLE, out, blk, MPI_DOUBLE, w, r)
                      : topocoll_iallgather(in, blk, MPI_DOUBLE, out, blk, MPI_DOUBLE, w, r);
    case NB_ISCAN:
        return native ? PMPI_Iscan(in, out, n / 2, MPI_DOUBLE, MPI_SUM, w, r)
                      : topocoll_iscan(in, out, n / 2, MPI_DOUBLE, MPI_SUM, w, r);
    default: return native ? PMPI_Ibarrier(w, r) : topocoll_ibarrier(w, r);
    }
}

static void nb_wait(int native, MPI_Request *r)
{
    if (native)
        PMPI_Wait(r, MPI_STATUS_IGNORE);
    else
        topocoll_wait(r, MPI_STATUS_IGNORE);
}

/* One measurement: start, compute @cpu seconds (0: none), wait; the
 * slowest rank's time. */
static double nb_once(int c, int native, double *in, double *out, size_t bytes, int size,
                      double cpu)
{
    MPI_Request r;
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    nb_start(c, native, in, out, bytes, size, &r);
    if (cpu > 0) compute(cpu);
    nb_wait(native, &r);
    double t = now() - t0, tmax;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

/* The progress configuration of this run (bench.h: why internal). */
static void progress_get(const bench_t *b, progress_t *p)
{
    const tc_config_t *cfg = tc_config_get();
    int n = b->info->local_size, size = b->size;
    p->comm_cores = cfg->comm_cores;
    p->placement = (int)cfg->placement;
    p->split_tree = cfg->nbc_split_tree;
    p->h = 0;
    while ((1 << p->h) < size) p->h++;
    p->model_s = -1;
    if (cfg->comm_cores > 0) { p->model_s = tc_st_best_s(n, n + cfg->comm_cores, 0); }
    const tc_ctx_t *ctx = tc_ctx_lookup(MPI_COMM_WORLD);
    p->s_used = ctx && ctx->enabled ? tc_tree_split(ctx, cfg->comm_cores)
                                    : -1; /* what the operations use */
}

/* topocoll's nonblocking collective @c against the native one.  Returns
 * nonzero (every rank) if they differ. */
static int nb_validate(int c, size_t bytes, int rank, int size)
{
    double *ref = malloc(bytes), *got = malloc(bytes), *b1 = malloc(bytes), *b2 = malloc(bytes);
    for (size_t k = 0; k < bytes / sizeof(double); k++)
        b1[k] = b2[k] = (double)((k * 3 + (size_t)rank) % 11);
    memset(ref, 0, bytes);
    memset(got, 0, bytes);
    MPI_Request r;
    if (c == NB_IBCAST && rank != 0) {
        memset(b1, 0, bytes);
        memset(b2, 0, bytes);
    }
    nb_start(c, 1, b1, ref, bytes, size, &r);
    nb_wait(1, &r);
    nb_start(c, 0, b2, got, bytes, size, &r);
    nb_wait(0, &r);
    size_t cmp = c == NB_IALLGATHER ? bytes / (size_t)size * (size_t)size
                 : c == NB_ISCAN    ? bytes / 2
                                    : bytes;
    int bad = c == NB_IBCAST ? memcmp(b1, b2, bytes) != 0
              : (c == NB_IREDUCE && rank != 0)
                  ? 0
                  : memcmp(ref, got, cmp / sizeof(double) * sizeof(double)) != 0;
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad && rank == 0) fprintf(stderr, "topocoll_bench: %s VALIDATION FAILED\n", nb_names[c]);
    free(ref);
    free(got);
    free(b1);
    free(b2);
    return bad;
}

/* @c's pure, computation and overlapped times (s) and its overlap (%)
 * into @t, medians over the repetitions over the @npool buffers. */
static void nb_measure(const bench_t *b, int c, int native, double **in, double **out, int npool,
                       size_t bytes, double *v, double t[4])
{
    int size = b->size, reps = b->o->reps;
    nb_once(c, native, in[0], out[0], bytes, size, 0); /* warm-up */
    for (int r = 0; r < reps; r++)
        v[r] = nb_once(c, native, in[r % npool], out[r % npool], bytes, size, 0);
    double tp = median(v, reps), tc = tp;
    for (int r = 0; r < reps; r++)
        v[r] = nb_once(c, native, in[r % npool], out[r % npool], bytes, size, tc);
    double to = median(v, reps);
    double mn = tp < tc ? tp : tc, ov = mn > 0 ? (tp + tc - to) / mn : 0;
    ov = 100.0 * (ov < 0 ? 0 : ov > 1 ? 1 : ov);
    t[0] = tp;
    t[1] = tc;
    t[2] = to;
    t[3] = ov;
}

int bench_overlap(const bench_t *b)
{
    int rank = b->rank, size = b->size;
    size_t bytes = b->o->size / ((size_t)size * sizeof(double)) * (size_t)size * sizeof(double);
    if (bytes == 0) bytes = (size_t)size * sizeof(double);
    enum { npool = 4 };
    double *in[npool], *out[npool];
    for (int i = 0; i < npool; i++) {
        in[i] = malloc(bytes);
        out[i] = malloc(bytes);
        for (size_t k = 0; k < bytes / sizeof(double); k++)
            in[i][k] = (double)((k + (size_t)rank) % 7);
        memset(out[i], 0, bytes);
    }
    progress_t p;
    progress_get(b, &p);
    if (rank == 0) out_overlap_header(b, bytes, &p);
    int bad_any = 0;
    double *v = malloc((size_t)b->o->reps * sizeof(double)), t[4];
    for (int c = 0; c < NB_N; c++) {
        /* validation: topocoll's result equals the native one */
        if (c != NB_IBARRIER) bad_any |= nb_validate(c, bytes, rank, size);
        for (int native = 1; native >= 0; native--) {
            nb_measure(b, c, native, in, out, npool, bytes, v, t);
            if (rank == 0) out_overlap_row(b, nb_names[c], native, bytes, &p, t);
        }
    }
    free(v);
    for (int i = 0; i < npool; i++) {
        free(in[i]);
        free(out[i]);
    }
    return bad_any;
}

/* ---- --comm-churn: what a communicator costs --------------------------------- */

enum { CH_DUP, CH_FIRST, CH_REST, CH_FREE, CH_TOTAL, CH_N };

/* @iters rounds of MPI_Comm_dup(MPI_COMM_WORLD), @calls collectives on the
 * copy, MPI_Comm_free; the mean of each step (s) into @t, slowest rank.
 * The dup and free are the native calls either way: topocoll's context
 * hangs on the communicator as an attribute, built by its first
 * collective and released (or kept for the group) by the free. */
static void time_churn(int coll, int native, char *sbuf, char *rbuf, size_t bytes, int calls,
                       int iters, double *t)
{
    double sum[CH_N] = { 0 };
    PMPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Comm d;
        double t0 = MPI_Wtime();
        PMPI_Comm_dup(MPI_COMM_WORLD, &d);
        double t1 = MPI_Wtime();
        if (calls > 0) run_on(d, coll, native, sbuf, rbuf, bytes, 0);
        double t2 = MPI_Wtime();
        for (int k = 1; k < calls; k++) run_on(d, coll, native, sbuf, rbuf, bytes, 0);
        double t3 = MPI_Wtime();
        PMPI_Comm_free(&d);
        double t4 = MPI_Wtime();
        sum[CH_DUP] += t1 - t0;
        sum[CH_FIRST] += t2 - t1;
        sum[CH_REST] += t3 - t2;
        sum[CH_FREE] += t4 - t3;
    }
    sum[CH_TOTAL] = MPI_Wtime() - start;
    for (int k = 0; k < CH_N; k++) sum[k] /= iters;
    PMPI_Allreduce(sum, t, CH_N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

void bench_churn(const bench_t *b)
{
    const opts_t *o = b->o;
    int coll = b->coll;
    size_t bytes = o->size_set ? o->size : 8192;
    if (coll_reduces(coll)) bytes = (bytes + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    size_t sbytes, rbytes;
    buf_bytes(coll, bytes, b->size, &sbytes, &rbytes);
    char *sbuf = malloc(sbytes), *rbuf = malloc(rbytes);
    memset(sbuf, 1, sbytes);
    memset(rbuf, 0, rbytes);
    int iters = o->iters ? o->iters : 200;
    double(*tn)[CH_N] = calloc((size_t)o->reps, sizeof(*tn)),
    (*tt)[CH_N] = calloc((size_t)o->reps, sizeof(*tt));
    double tmp[CH_N];
    time_churn(coll, 1, sbuf, rbuf, bytes, o->churn_calls, 10, tmp); /* warm-up */
    time_churn(coll, 0, sbuf, rbuf, bytes, o->churn_calls, 10, tmp);
    for (int r = 0; r < o->reps; r++) {
        int first_native = r % 2 == 0;
        time_churn(coll, first_native, sbuf, rbuf, bytes, o->churn_calls, iters,
                   first_native ? tn[r] : tt[r]);
        time_churn(coll, !first_native, sbuf, rbuf, bytes, o->churn_calls, iters,
                   first_native ? tt[r] : tn[r]);
    }
    if (b->rank == 0) out_churn(b, bytes, iters, tn, tt);
    free(tn);
    free(tt);
    free(sbuf);
    free(rbuf);
}
