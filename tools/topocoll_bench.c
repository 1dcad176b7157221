/*
 * tools/topocoll_bench -- OSU-style latency benchmark of topocoll's
 * collectives against the native MPI in the same run.
 *
 * Collectives: bcast, reduce, allreduce, allgather (message size = the
 * vector for bcast/reduce/allreduce, doubles summed for the reductions;
 * the per-rank block for allgather, as OSU does), and barrier.
 * For each size: R repetitions; in each, the native collective (PMPI_*)
 * and topocoll's run back to back (their order alternates between
 * repetitions), each for I iterations over a pool of rotating buffers
 * whose total exceeds the last-level cache, so neither side gets
 * cache-hot data.  A repetition's figure is the slowest rank's mean
 * latency; the table reports the median over repetitions, the ratio
 * native/topocoll (> 1: we are faster), and the memory-traffic reference:
 * the bytes each process must at least move (bcast: n; reduce: n(p-1)/p;
 * allreduce: 2n(p-1)/p; allgather: (p-1)n) divided by the memcpy
 * bandwidth measured in the same run between cold buffers: once on one
 * core alone (ref_us), and once with every process of the host copying at
 * the same time (ref_all_us: the host's memory-bandwidth limit, which is
 * what the collectives actually share; on this 2-core VM it is the
 * tighter bound).
 * Every result is validated against the native one before timing.
 *
 *   mpirun -np 2 topocoll_bench [--coll bcast|reduce|allreduce|allgather|barrier]
 *          [--min 4K] [--max 16M] [--reps 11] [--iters N] [--root R] [--pool 64M]
 *          [--csv FILE]
 *
 * May call: the native API, PMPI.
 */
#include "topocoll.h"

#include "base/config.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct opts {
    const char *coll;
    size_t min, max, pool;
    int reps, iters, root;
    const char *csv;
} opts_t;

enum { C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER };
static const char *coll_names[] = { "bcast", "reduce", "allreduce", "allgather" };

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
    fprintf(stderr, "usage: topocoll_bench [--coll bcast|reduce|allreduce|allgather|barrier] [--min SIZE]\n"
                    "                      [--max SIZE] [--reps R] [--iters N] [--root R] [--pool SIZE]\n"
                    "                      [--csv FILE]\n");
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
    int known = strcmp(o->coll, "barrier") == 0;
    for (int c = 0; c < 4; c++) known |= strcmp(o->coll, coll_names[c]) == 0;
    if (!known) {
        fprintf(stderr, "topocoll_bench: --coll %s: bcast, reduce, allreduce, allgather or barrier\n", o->coll);
        return -1;
    }
    return (o->reps < 1 || o->min > o->max) ? -1 : 0;
}

/* One call of collective @coll, native (PMPI) or topocoll.  @bytes is the
 * message size (doubles for the reductions, bytes otherwise). */
static int run(int coll, int native, char *sbuf, char *rbuf, size_t bytes, int root)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = (int)(bytes / sizeof(double));
    switch (coll) {
    case C_BCAST: return native ? PMPI_Bcast(sbuf, (int)bytes, MPI_BYTE, root, w)
                                : topocoll_bcast(sbuf, (int)bytes, MPI_BYTE, root, w);
    case C_REDUCE: return native ? PMPI_Reduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, root, w)
                                 : topocoll_reduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, root, w);
    case C_ALLREDUCE: return native ? PMPI_Allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, w)
                                    : topocoll_allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, w);
    default: return native ? PMPI_Allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w)
                           : topocoll_allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w);
    }
}

/* Mean latency (s) of @iters calls, slowest rank, over rotating buffers. */
static double time_coll(int coll, int native, char **spool, char **rpool, int npool, size_t bytes, int iters,
                        int root)
{
    double t0, t, tmax;
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) run(coll, native, spool[i % npool], rpool[i % npool], bytes, root);
    t = (MPI_Wtime() - t0) / iters;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

/* topocoll's result equals the native one (reductions of small integers
 * are exact in any order).  Returns nonzero on any rank's mismatch. */
static int validate(int coll, char *sbuf, char *rbuf, size_t sbytes, size_t rbytes, int root, int rank)
{
    char *ref = malloc(rbytes > sbytes ? rbytes : sbytes);
    int bad = 0, anybad;
    size_t cmp = coll == C_BCAST ? sbytes : coll == C_REDUCE && rank != root ? 0 : rbytes;
    if (coll == C_REDUCE || coll == C_ALLREDUCE) {
        double *dv = (void *)sbuf;   /* malloc'd: suitably aligned */
        for (size_t i = 0; i < sbytes / sizeof(double); i++) dv[i] = (double)((i * 7 + (size_t)rank) % 13);
    } else
        for (size_t i = 0; i < sbytes; i++) sbuf[i] = (char)(i * 131 + (size_t)rank * 17 + sbytes);
    if (coll == C_BCAST) {
        if (rank != root) memset(sbuf, 0, sbytes);
        memcpy(ref, sbuf, sbytes);
        run(coll, 1, ref, NULL, sbytes, root);
        run(coll, 0, sbuf, NULL, sbytes, root);
        bad = memcmp(ref, sbuf, cmp) != 0;
    } else {
        memset(rbuf, 0, rbytes);
        run(coll, 1, sbuf, ref, sbytes, root);
        run(coll, 0, sbuf, rbuf, sbytes, root);
        bad = memcmp(ref, rbuf, cmp) != 0;
    }
    free(ref);
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return anybad;
}

/* Median time of one memcpy of @bytes between rotating buffers.  With
 * @host != MPI_COMM_NULL every process of @host copies at the same time
 * and a repetition counts its slowest process. */
static double memcpy_ref(char **pool, int npool, size_t bytes, int reps, MPI_Comm host)
{
    double v[64] = { 0 };
    int n = reps < 64 ? reps : 64;
    for (int r = 0; r < n; r++) {
        int iters = (int)((64u << 20) / bytes) + 2;
        if (host != MPI_COMM_NULL) PMPI_Barrier(host);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) memcpy(pool[(2 * i) % npool], pool[(2 * i + 1) % npool], bytes);
        v[r] = (MPI_Wtime() - t0) / iters;
        if (host != MPI_COMM_NULL) PMPI_Allreduce(MPI_IN_PLACE, &v[r], 1, MPI_DOUBLE, MPI_MAX, host);
    }
    return median(v, n);
}

/* Bytes each process must at least move (see the header). */
static double must_move(int coll, size_t n, int p)
{
    switch (coll) {
    case C_BCAST: return (double)n;
    case C_REDUCE: return (double)n * (p - 1) / p;
    case C_ALLREDUCE: return 2.0 * (double)n * (p - 1) / p;
    default: return (double)n * (p - 1);
    }
}

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
    if (csv) fprintf(csv, "coll,np,nodes,bytes,native_us,topocoll_us,ratio,ref_us,memcpy_GBps,ref_all_us,"
                          "memcpy_all_GBps\n");
    MPI_Comm host;   /* the processes sharing this host's memory bandwidth */
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);

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
        PMPI_Comm_free(&host);
        MPI_Finalize();
        return 0;
    }
    int coll = 0;
    while (strcmp(o.coll, coll_names[coll]) != 0) coll++;
    if (rank == 0) {
        printf("# topocoll_bench %s: np=%d on %d node(s) (%d per node), %ld cores on this host%s\n", o.coll, size,
               info.nnodes, info.local_size, sysconf(_SC_NPROCESSORS_ONLN),
               coll == C_REDUCE || coll == C_ALLREDUCE ? "; MPI_DOUBLE, MPI_SUM" : "");
        printf("# intra-node: %s; rotating pool %zu MiB per process; median of %d reps%s\n",
               info.single_copy ? "single copy (CMA)" : "copy-in/copy-out", o.pool >> 20, o.reps,
               coll == C_BCAST || coll == C_REDUCE ? (o.root ? "; root != 0" : "; root 0") : "");
        printf("# bytes = %s; latency = slowest rank's mean per call; ratio = native/topocoll (>1: faster)\n",
               coll == C_ALLGATHER ? "block per rank" : "vector");
        printf("# ref = bytes each process must move / memcpy bandwidth (GB/s, cold buffers): one core alone\n"
               "# (ref_us, GB/s), every process of the host copying at once (ref_all_us, GB/s_all)\n");
        printf("%10s %12s %12s %7s %10s %8s %10s %8s\n", "bytes", "native_us", "topocoll_us", "ratio", "ref_us",
               "GB/s", "ref_all_us", "GB/s_all");
    }
    int invalid = 0;
    for (size_t bytes = o.min; bytes <= o.max; bytes *= 2) {
        size_t sbytes = bytes, rbytes = coll == C_ALLGATHER ? bytes * (size_t)size : bytes;
        if (coll == C_REDUCE || coll == C_ALLREDUCE) sbytes = rbytes = bytes / sizeof(double) * sizeof(double);
        if (sbytes == 0) continue;
        int npool = (int)(o.pool / (sbytes + rbytes));
        if (npool < 2) npool = 2;
        if (npool > 256) npool = 256;
        char **spool = malloc((size_t)npool * sizeof(char *)), **rpool = malloc((size_t)npool * sizeof(char *));
        for (int i = 0; i < npool; i++) {
            spool[i] = malloc(sbytes);
            rpool[i] = malloc(rbytes);
            memset(spool[i], rank, sbytes);     /* fault the pages in */
            memset(rpool[i], rank, rbytes);
        }
        int iters = o.iters ? o.iters : (int)((256u << 20) / ((sbytes + rbytes) * (size_t)(size > 1 ? size : 2)));
        if (iters < 5) iters = 5;
        if (iters > 2000) iters = 2000;
        int bad = validate(coll, spool[0], rpool[0], sbytes, rbytes, o.root, rank);
        invalid |= bad;
        if (bad && rank == 0) fprintf(stderr, "topocoll_bench: VALIDATION FAILED at %zu bytes\n", bytes);
        time_coll(coll, 1, spool, rpool, npool, sbytes, 2, o.root);   /* warm-up */
        time_coll(coll, 0, spool, rpool, npool, sbytes, 2, o.root);
        double *tn = malloc((size_t)o.reps * sizeof(double)), *tt = malloc((size_t)o.reps * sizeof(double));
        for (int r = 0; r < o.reps; r++) {
            if (r % 2 == 0) {
                tn[r] = time_coll(coll, 1, spool, rpool, npool, sbytes, iters, o.root);
                tt[r] = time_coll(coll, 0, spool, rpool, npool, sbytes, iters, o.root);
            } else {
                tt[r] = time_coll(coll, 0, spool, rpool, npool, sbytes, iters, o.root);
                tn[r] = time_coll(coll, 1, spool, rpool, npool, sbytes, iters, o.root);
            }
        }
        double mn = median(tn, o.reps) * 1e6, mt = median(tt, o.reps) * 1e6;
        double mc = 0;
        if (rank == 0) mc = memcpy_ref(rpool, npool, sbytes, o.reps, MPI_COMM_NULL) * 1e6; /* one copy */
        PMPI_Barrier(MPI_COMM_WORLD);
        double mca = memcpy_ref(rpool, npool, sbytes, o.reps, host) * 1e6;   /* all of the host at once */
        if (rank == 0) {
            double bw = (double)sbytes / mc / 1e3, bwa = (double)sbytes / mca / 1e3;   /* GB/s */
            double ref = must_move(coll, sbytes, size) / (bw * 1e3), refa = must_move(coll, sbytes, size) / (bwa * 1e3);
            printf("%10zu %12.2f %12.2f %7.2f %10.2f %8.2f %10.2f %8.2f%s\n", sbytes, mn, mt, mn / mt, ref, bw, refa,
                   bwa, bad ? "  INVALID" : "");
            if (csv) fprintf(csv, "%s,%d,%d,%zu,%.3f,%.3f,%.4f,%.3f,%.3f,%.3f,%.3f\n", o.coll, size, info.nnodes,
                             sbytes, mn, mt, mn / mt, ref, bw, refa, bwa);
            fflush(stdout);
        }
        free(tn);
        free(tt);
        for (int i = 0; i < npool; i++) { free(spool[i]); free(rpool[i]); }
        free(spool);
        free(rpool);
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    if (csv) fclose(csv);
    PMPI_Comm_free(&host);
    MPI_Finalize();
    return invalid ? 1 : 0;
}
