/*
 * tools/topocoll_bench -- OSU-style latency benchmark of topocoll's
 * collectives against the native MPI in the same run.
 *
 * For each message size: R repetitions; in each, the native collective
 * (PMPI_*) and topocoll's run back to back (their order alternates between
 * repetitions), each for I iterations over a pool of rotating buffers whose
 * total exceeds the last-level cache, so neither side gets cache-hot data.
 * A repetition's figure is the slowest rank's mean latency; the table
 * reports the median over repetitions, the ratio native/topocoll (> 1: we
 * are faster), and the physical reference: the median time of one memcpy
 * of the same bytes between rotating buffers on one process (a single-copy
 * transfer cannot beat it).  Every result is validated against the root's
 * data before timing.
 *
 *   mpirun -np 2 topocoll_bench [--coll bcast] [--min 4K] [--max 16M]
 *          [--reps 11] [--iters N] [--root R] [--pool 64M] [--csv FILE]
 *
 * May call: the native API, PMPI.
 */
#include "topocoll.h"

#include "base/config.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);

typedef struct opts {
    const char *coll;
    size_t min, max, pool;
    int reps, iters, root;
    const char *csv;
} opts_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void usage(void)
{
    fprintf(stderr, "usage: topocoll_bench [--coll bcast] [--min SIZE] [--max SIZE] [--reps R]\n"
                    "                      [--iters N] [--root R] [--pool SIZE] [--csv FILE]\n");
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {
        { "coll", required_argument, 0, 'c' }, { "min", required_argument, 0, 'm' },
        { "max", required_argument, 0, 'M' },  { "reps", required_argument, 0, 'r' },
        { "iters", required_argument, 0, 'i' }, { "root", required_argument, 0, 'R' },
        { "pool", required_argument, 0, 'p' }, { "csv", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' },       { 0, 0, 0, 0 }
    };
    *o = (opts_t){ "bcast", 4096, 16 << 20, 64 << 20, 11, 0, 0, NULL };
    int ch;
    long long v;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'c': o->coll = optarg; break;
        case 'm': if ((v = tc_parse_size(optarg)) < 1) return -1; o->min = (size_t)v; break;
        case 'M': if ((v = tc_parse_size(optarg)) < 1) return -1; o->max = (size_t)v; break;
        case 'p': if ((v = tc_parse_size(optarg)) < 1) return -1; o->pool = (size_t)v; break;
        case 'r': o->reps = atoi(optarg); break;
        case 'i': o->iters = atoi(optarg); break;
        case 'R': o->root = atoi(optarg); break;
        case 'o': o->csv = optarg; break;
        default: return -1;
        }
    }
    if (strcmp(o->coll, "bcast") != 0 && strcmp(o->coll, "barrier") != 0) {
        fprintf(stderr, "topocoll_bench: --coll %s: bcast or barrier in this version\n", o->coll);
        return -1;
    }
    return (o->reps < 1 || o->min > o->max) ? -1 : 0;
}

/* Mean latency (s) of @iters calls of @fn, slowest rank. */
static double time_bcast(bcast_fn fn, char **pool, int npool, size_t bytes, int iters, int root)
{
    double t0, t, tmax;
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) fn(pool[i % npool], (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    t = (MPI_Wtime() - t0) / iters;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static int validate(bcast_fn fn, char *buf, size_t bytes, int root, int rank)
{
    for (size_t i = 0; i < bytes; i++) buf[i] = (char)(rank == root ? (i * 131 + bytes) : 0);
    fn(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    int bad = 0, anybad;
    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != (char)(i * 131 + bytes)) { bad = 1; break; }
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return anybad;
}

/* Median time of one memcpy of @bytes between rotating buffers. */
static double memcpy_ref(char **pool, int npool, size_t bytes, int reps)
{
    double v[64] = { 0 };
    int n = reps < 64 ? reps : 64;
    for (int r = 0; r < n; r++) {
        int iters = (int)((64u << 20) / bytes) + 2;
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) memcpy(pool[(2 * i) % npool], pool[(2 * i + 1) % npool], bytes);
        v[r] = (MPI_Wtime() - t0) / iters;
    }
    return median(v, n);
}

static int bcast_native(void *b, int c, MPI_Datatype d, int r, MPI_Comm m) { return PMPI_Bcast(b, c, d, r, m); }

/* Barrier: mean latency (s) of @iters calls, slowest rank. */
static double time_barrier(int (*fn)(MPI_Comm), int iters)
{
    double t0, t, tmax;
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) fn(MPI_COMM_WORLD);
    t = (MPI_Wtime() - t0) / iters;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static void bench_barrier(const opts_t *o, int rank, FILE *csv, int size, int nnodes)
{
    int iters = o->iters ? o->iters : 2000;
    double *tn = malloc((size_t)o->reps * sizeof(double)), *tt = malloc((size_t)o->reps * sizeof(double));
    time_barrier(PMPI_Barrier, 10);
    time_barrier(topocoll_barrier, 10);
    for (int r = 0; r < o->reps; r++) {
        if (r % 2 == 0) { tn[r] = time_barrier(PMPI_Barrier, iters); tt[r] = time_barrier(topocoll_barrier, iters); }
        else { tt[r] = time_barrier(topocoll_barrier, iters); tn[r] = time_barrier(PMPI_Barrier, iters); }
    }
    double mn = median(tn, o->reps) * 1e6, mt = median(tt, o->reps) * 1e6;
    if (rank == 0) {
        printf("%10s %12s %12s %7s\n", "barrier", "native_us", "topocoll_us", "ratio");
        printf("%10s %12.3f %12.3f %7.2f\n", "", mn, mt, mn / mt);
        if (csv) fprintf(csv, "barrier,%d,%d,0,%.4f,%.4f,%.4f,,\n", size, nnodes, mn, mt, mn / mt);
    }
    free(tn);
    free(tt);
}

int main(int argc, char **argv)
{
    int rank, size;
    opts_t o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parse(argc, argv, &o) != 0 || o.root < 0 || o.root >= size) {
        if (rank == 0) usage();
        MPI_Finalize();
        return 2;
    }
    FILE *csv = NULL;
    if (rank == 0 && o.csv && !(csv = fopen(o.csv, "w"))) perror(o.csv);
    if (csv) fprintf(csv, "coll,np,nodes,bytes,native_us,topocoll_us,ratio,memcpy_us,memcpy_GBps\n");

    topocoll_comm_attach(MPI_COMM_WORLD);
    topocoll_comm_info_t info;
    topocoll_comm_query(MPI_COMM_WORLD, &info);
    if (strcmp(o.coll, "barrier") == 0) {
        if (rank == 0)
            printf("# topocoll_bench barrier: np=%d on %d node(s) (%d per node), %ld cores on this host; "
                   "median of %d reps of the slowest rank's mean\n", size, info.nnodes, info.local_size,
                   sysconf(_SC_NPROCESSORS_ONLN), o.reps);
        bench_barrier(&o, rank, csv, size, info.nnodes);
        if (csv) fclose(csv);
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        printf("# topocoll_bench %s: np=%d on %d node(s) (%d per node), %ld cores on this host\n",
               o.coll, size, info.nnodes, info.local_size, sysconf(_SC_NPROCESSORS_ONLN));
        printf("# intra-node: %s; rotating pool %zu MiB per process; median of %d reps; root %d\n",
               info.single_copy ? "single copy (CMA)" : "copy-in/copy-out", o.pool >> 20, o.reps, o.root);
        printf("# latency = slowest rank's mean per call; ratio = native/topocoll (>1: topocoll faster)\n");
        printf("# memcpy = one copy of the same bytes between cold buffers on one core (the floor for a\n"
               "#          single-copy transfer); GB/s is that copy's bandwidth\n");
        printf("%10s %12s %12s %7s %11s %8s\n", "bytes", "native_us", "topocoll_us", "ratio", "memcpy_us", "GB/s");
    }
    int invalid = 0;
    for (size_t bytes = o.min; bytes <= o.max; bytes *= 2) {
        int npool = (int)(o.pool / bytes);
        if (npool < 2) npool = 2;
        if (npool > 256) npool = 256;
        char **pool = malloc((size_t)npool * sizeof(char *));
        for (int i = 0; i < npool; i++) {
            pool[i] = malloc(bytes);
            memset(pool[i], rank, bytes);     /* fault the pages in */
        }
        int iters = o.iters ? o.iters : (int)((256u << 20) / (bytes * (size_t)(size > 1 ? size : 2)));
        if (iters < 5) iters = 5;
        if (iters > 2000) iters = 2000;
        int bad = validate(bcast_native, pool[0], bytes, o.root, rank) |
                  (validate(topocoll_bcast, pool[0], bytes, o.root, rank) << 1);
        invalid |= bad;
        if (bad && rank == 0) fprintf(stderr, "topocoll_bench: VALIDATION FAILED at %zu bytes (%s)\n",
                                      bytes, bad & 2 ? "topocoll" : "native");
        time_bcast(bcast_native, pool, npool, bytes, 2, o.root);       /* warm-up */
        time_bcast(topocoll_bcast, pool, npool, bytes, 2, o.root);
        double *tn = malloc((size_t)o.reps * sizeof(double)), *tt = malloc((size_t)o.reps * sizeof(double));
        for (int r = 0; r < o.reps; r++) {
            if (r % 2 == 0) {
                tn[r] = time_bcast(bcast_native, pool, npool, bytes, iters, o.root);
                tt[r] = time_bcast(topocoll_bcast, pool, npool, bytes, iters, o.root);
            } else {
                tt[r] = time_bcast(topocoll_bcast, pool, npool, bytes, iters, o.root);
                tn[r] = time_bcast(bcast_native, pool, npool, bytes, iters, o.root);
            }
        }
        double mn = median(tn, o.reps) * 1e6, mt = median(tt, o.reps) * 1e6;
        double mc = 0;
        if (rank == 0) mc = memcpy_ref(pool, npool, bytes, o.reps) * 1e6;
        if (rank == 0) {
            printf("%10zu %12.2f %12.2f %7.2f %11.2f %8.2f%s\n", bytes, mn, mt, mn / mt, mc,
                   (double)bytes / mc / 1e3, bad ? "  INVALID" : "");
            if (csv) fprintf(csv, "%s,%d,%d,%zu,%.3f,%.3f,%.4f,%.3f,%.3f\n", o.coll, size, info.nnodes,
                             bytes, mn, mt, mn / mt, mc, (double)bytes / mc / 1e3);
            fflush(stdout);
        }
        free(tn);
        free(tt);
        for (int i = 0; i < npool; i++) free(pool[i]);
        free(pool);
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    if (csv) fclose(csv);
    MPI_Finalize();
    return invalid ? 1 : 0;
}
