/*
 * tools/topocoll_bench -- OSU-style latency benchmark of topocoll's
 * collectives against the native MPI in the same run.
 *
 * Collectives: bcast, reduce, allreduce, allgather, gather, scatter,
 * alltoall (message size = the vector for bcast/reduce/allreduce, doubles
 * summed for the reductions; the per-rank block for the others, as OSU
 * does), and barrier.
 * For each size: R repetitions; in each, the native collective (PMPI_*)
 * and topocoll's run back to back (their order alternates between
 * repetitions), each for I iterations over a pool of rotating buffers
 * whose total exceeds the last-level cache, so neither side gets
 * cache-hot data.  A repetition's figure is the slowest rank's mean
 * latency; the table reports the median over repetitions, the ratio
 * native/topocoll (> 1: we are faster), and the memory-traffic reference:
 * the bytes each process must at least move (bcast: n; reduce: n(p-1)/p;
 * allreduce: 2n(p-1)/p; allgather, gather, scatter, alltoall: (p-1)n,
 * n the block) divided by the memcpy
 * bandwidth measured in the same run between cold buffers: once on one
 * core alone (ref_us), and once with every process of the host copying at
 * the same time (ref_all_us: the host's memory-bandwidth limit, which is
 * what the collectives actually share; on this 2-core VM it is the
 * tighter bound).
 * Every result is validated against the native one before timing.
 *
 * --warm, --imb: the warm regimes, one buffer reused as an iterative
 * application (and OSU, IMB) does.  --warm is OSU's method: untimed
 * warm-up calls, then each call timed alone with a barrier after it, the
 * per-rank mean reported as its average, minimum and maximum across ranks
 * in OSU's columns ("Avg Latency(us)" ...); --imb is IMB-MPI1's: the calls
 * back to back after a barrier, t_min/t_max/t_avg.  Native and topocoll
 * still alternate repetition by repetition, each column the median over
 * repetitions; the ratio compares the averages; the reference is the
 * memcpy between the same two warm buffers, every process of the host at
 * once.
 *
 * --mech (allgather, every process on one host): two copy-mechanism floors
 * timed in the same repetitions, so a figure can be read against what the
 * host allows.  Each is the least an Allgather needs with that mechanism:
 * a barrier (the peers' send buffers are ready), our own block by memcpy,
 * every peer's block copied straight from its send buffer, a barrier (the
 * peers are done with ours); the barriers are topocoll's.  mapped_us reads
 * the peers' send buffers mapped in our address space (what XPMEM gives;
 * here a send pool in an MPI_Win_allocate_shared window, which the
 * collectives cannot ask of a user's buffer); cma_us reads them from their
 * malloc'd pool with process_vm_readv (the single-copy mechanism Linux
 * has, and the native MPI's).  Both results are checked against the
 * native Allgather's; topocoll's own CICO is topocoll_us.
 *
 * Across hosts: --link RATE (bits/s: 1G, 100M) prints the link bound
 * beside each figure, the least time the busiest host's link needs for
 * the bytes it must send or receive (N hosts, ppn processes on the
 * fullest, L = RATE / 8 bytes/s; n = the vector, or the block):
 *   bcast, reduce: n / L;  allreduce: 2 (N - 1) / N n / L;
 *   allgather, gather, scatter: (N - 1) ppn n / L;
 *   alltoall: (N - 1) ppn^2 n / L;
 * and --net counts the bytes every host's network interfaces (all but
 * lo, from /proc/net/dev) sent and received around each timed block, so
 * the table shows, per call, the busiest host's bytes on the wire (the
 * larger of sent and received, headers included), native and topocoll,
 * beside the model's count (link_B: the bound's bytes).  Hosts are the
 * MPI library's shared-memory domains (MPI_COMM_TYPE_SHARED).
 *
 *   mpirun -np 2 topocoll_bench [--coll bcast|reduce|allreduce|allgather|gather|scatter|
 *          alltoall|barrier]
 *          [--min 4K] [--max 16M] [--reps 11] [--iters N] [--root R] [--pool 64M]
 *          [--csv FILE] [--link RATE] [--net] [--warm | --imb]
 *
 * --overlap [--size 2M]: the nonblocking collectives' overlap, built like
 * the progress-threads paper's tool (section 7, IMB-NBC's method): for
 * Ibcast, Ireduce, Iallreduce, Iallgather (size / p per block), Iscan
 * (size / 2, as the paper) and Ibarrier, native (PMPI_I*) and topocoll:
 * the pure time (start, then wait at once), the computation time
 * (t_cpu = t_pure: sized for perfect overlap), the overlapped time (start,
 * compute t_cpu without any MPI call, wait) and the overlap as IMB-NBC
 * defines it: 100 * max(0, min(1, (t_pure + t_cpu - t_ovrl) /
 * min(t_pure, t_cpu))).  Medians over --reps of the slowest rank.  The
 * progress configuration (TOPOCOLL_COMM_CORES, _PROGRESS_PLACEMENT,
 * _NBC_ALG, _SPLIT_TREE_S) is the environment's, printed in the header
 * with the model's S; scripts/overlap.sh sweeps it.
 *
 * May call: the native API, PMPI.
 */
#define _GNU_SOURCE /* process_vm_readv (--mech) */
#include "topocoll.h"

#include "base/config.h"
#include "coll/tree.h"
#include "coll/model.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct opts {
    const char *coll;
    size_t min, max, pool;
    int reps, iters, root;
    const char *csv;
    int overlap;
    size_t size;     /* --overlap: buffer bytes */
    int mech;        /* --mech: allgather copy-mechanism floors */
    double link;     /* --link: bits/s of each host's link, 0 = none */
    int net;         /* --net: count the hosts' interface bytes */
    int churn;       /* --comm-churn: communicator dup + calls + free */
    int churn_calls; /* --calls: collectives per communicator */
    int size_set;    /* --size given */
    int regime;      /* R_COLD (rotating pool), R_OSU (--warm), R_IMB (--imb) */
    int nb;          /* --nb: topocoll's blocking call against its nonblocking one */
} opts_t;

/* The regimes: a rotating pool larger than the last-level cache (every
 * call starts cold), or one buffer reused as OSU (barrier between calls,
 * each call timed alone) and IMB (calls back to back) measure. */
enum { R_COLD, R_OSU, R_IMB };

/* The hosts (--link, --net): this process's host communicator, the number
 * of hosts, the most processes on one, and whether we read the counters. */
typedef struct hosts {
    MPI_Comm host;
    int nhosts, ppn, counter;
} hosts_t;
static hosts_t g_hosts;

enum { C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_GATHER, C_SCATTER, C_ALLTOALL, C_N };
static const char *coll_names[] = { "bcast",  "reduce",  "allreduce", "allgather",
                                    "gather", "scatter", "alltoall" };

/* A call's send and receive buffer bytes for a message of @bytes (the
 * block per rank for the gathers, scatter and alltoall) among @size. */
static void buf_bytes(int coll, size_t bytes, int size, size_t *sb, size_t *rb)
{
    size_t all = bytes * (size_t)size;
    *sb = coll == C_SCATTER || coll == C_ALLTOALL ? all : bytes;
    *rb = coll == C_ALLGATHER || coll == C_GATHER || coll == C_ALLTOALL ? all : bytes;
    if (coll == C_REDUCE || coll == C_ALLREDUCE)
        *sb = *rb = bytes / sizeof(double) * sizeof(double);
}

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

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: topocoll_bench [--coll bcast|reduce|allreduce|allgather|gather|scatter|alltoall|\n"
        "                       barrier] [--min SIZE]\n"
        "                      [--max SIZE] [--reps R] [--iters N] [--root R] [--pool SIZE]\n"
        "                      [--csv FILE] [--mech] [--link RATE] [--net] [--warm | --imb]\n"
        "       topocoll_bench --overlap [--size 2M] [--reps R] [--csv FILE]\n"
        "       topocoll_bench --comm-churn [--coll C] [--size 8K] [--calls K] [--iters N] [--reps "
        "R]\n"
        "       topocoll_bench --help | --version\n"
        "\n"
        "OSU-style latency of topocoll's collectives against the native MPI in the same run\n"
        "(mpiexec -np N topocoll_bench ...).  SIZE: bytes, K/M/G suffixes.\n"
        "\n"
        "  --coll C        the collective (default bcast)\n"
        "  --min, --max    message sizes, doubling (default 4K..16M; allgather, gather,\n"
        "                  scatter, alltoall: per-rank block)\n"
        "  --reps R        repetitions, the median is reported (default 11)\n"
        "  --iters N       calls per repetition (default: by size)\n"
        "  --root R        root of bcast and reduce (default 0)\n"
        "  --pool SIZE     rotating buffers per process (default 64M): the cold regime\n"
        "  --warm          one buffer reused, OSU's method: warm-up calls, each call timed\n"
        "                  alone with a barrier after it; avg/min/max across ranks\n"
        "  --imb           one buffer reused, IMB's method: calls back to back; t_min/t_max/t_avg\n"
        "  --nb            topocoll's blocking call (native columns) against its nonblocking call\n"
        "                  followed at once by the wait (topocoll columns)\n"
        "  --csv FILE      also write the table as CSV\n"
        "  --mech          allgather on one host: the mapped and CMA copy floors\n"
        "  --link RATE     link bits/s (1G, 100M): the link bound beside each figure\n"
        "  --net           count the hosts' interface bytes on the wire per call\n"
        "  --overlap       the nonblocking collectives' overlap (IMB-NBC's method)\n"
        "  --size SIZE     --overlap: buffer bytes (default 2M, at least 64);\n"
        "                  --comm-churn: the message (default 8K)\n"
        "  --comm-churn    MPI_Comm_dup, K collectives, MPI_Comm_free: each step's cost\n"
        "  --calls K       --comm-churn: collectives per communicator (default 1)\n"
        "  -h, --help      this help\n"
        "  -V, --version   the version\n");
}

/* A size option's value, at least @min; else a message and -1. */
static int opt_size(const char *opt, const char *arg, long long min, size_t *out)
{
    long long v = tc_parse_size(arg);
    if (v < min) {
        fprintf(stderr,
                "topocoll_bench: --%s %s: not a size of at least %lld bytes (K/M/G suffixes)\n",
                opt, arg, min);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* An integer option's value, at least @min; else a message and -1. */
static int opt_int(const char *opt, const char *arg, long min, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || v < min || v > (1L << 30)) {
        fprintf(stderr, "topocoll_bench: --%s %s: not an integer of at least %ld\n", opt, arg, min);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Before MPI_Init.  0: run; 1: done (--help, --version: exit 0); -1: bad
 * usage (message on stderr, exit 2).  --root is checked against the size
 * of MPI_COMM_WORLD later. */
static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = { { "coll", required_argument, 0, 'c' },
                                        { "min", required_argument, 0, 'm' },
                                        { "max", required_argument, 0, 'M' },
                                        { "reps", required_argument, 0, 'r' },
                                        { "iters", required_argument, 0, 'i' },
                                        { "root", required_argument, 0, 'R' },
                                        { "pool", required_argument, 0, 'p' },
                                        { "csv", required_argument, 0, 'o' },
                                        { "overlap", no_argument, 0, 'O' },
                                        { "size", required_argument, 0, 's' },
                                        { "mech", no_argument, 0, 'X' },
                                        { "help", no_argument, 0, 'h' },
                                        { "link", required_argument, 0, 'L' },
                                        { "net", no_argument, 0, 'N' },
                                        { "version", no_argument, 0, 'V' },
                                        { "comm-churn", no_argument, 0, 'C' },
                                        { "calls", required_argument, 0, 'k' },
                                        { "warm", no_argument, 0, 'W' },
                                        { "imb", no_argument, 0, 'I' },
                                        { "nb", no_argument, 0, 'B' },
                                        { 0, 0, 0, 0 } };
    *o = (opts_t){ "bcast", 4096, 16 << 20, 64 << 20, 11, 0, 0, NULL,   0,
                   2 << 20, 0,    0,        0,        0,  1, 0, R_COLD, 0 };
    int ch;
    opterr = 0; /* our messages, on stderr */
    while ((ch = getopt_long(argc, argv, ":hV", lo, NULL)) != -1) {
        switch (ch) {
        case 'h': usage(stdout); return 1;
        case 'V': printf("topocoll_bench (topocoll) %s\n", TOPOCOLL_VERSION); return 1;
        case 'c': o->coll = optarg; break;
        case 'm':
            if (opt_size("min", optarg, 1, &o->min) != 0) return -1;
            break;
        case 'M':
            if (opt_size("max", optarg, 1, &o->max) != 0) return -1;
            break;
        case 'p':
            if (opt_size("pool", optarg, 1, &o->pool) != 0) return -1;
            break;
        case 'r':
            if (opt_int("reps", optarg, 1, &o->reps) != 0) return -1;
            break;
        case 'i':
            if (opt_int("iters", optarg, 0, &o->iters) != 0) return -1;
            break;
        case 'R':
            if (opt_int("root", optarg, 0, &o->root) != 0) return -1;
            break;
        case 'o': o->csv = optarg; break;
        case 'O': o->overlap = 1; break;
        case 'X': o->mech = 1; break;
        case 'N': o->net = 1; break;
        case 'C': o->churn = 1; break;
        case 'W': o->regime = R_OSU; break;
        case 'I': o->regime = R_IMB; break;
        case 'B': o->nb = 1; break;
        case 'k':
            if (opt_int("calls", optarg, 0, &o->churn_calls) != 0) return -1;
            break;
        case 'L': {
            char *end;
            o->link = strtod(optarg, &end);
            switch (*end) { /* decimal, as link rates are given */
            case 'k':
            case 'K':
                o->link *= 1e3;
                end++;
                break;
            case 'm':
            case 'M':
                o->link *= 1e6;
                end++;
                break;
            case 'g':
            case 'G':
                o->link *= 1e9;
                end++;
                break;
            default: break;
            }
            if (strncmp(end, "bit", 3) == 0) end += 3;
            if (*end || o->link <= 0) {
                fprintf(stderr, "topocoll_bench: --link %s: a rate in bits/s (1G, 100M, 1gbit)\n",
                        optarg);
                return -1;
            }
            break;
        }
        case 's':
            if (opt_size("size", optarg, 8, &o->size) != 0) return -1;
            o->size_set = 1;
            break;
        default:
            fprintf(stderr, "topocoll_bench: %s: %s\n", argv[optind - 1],
                    ch == ':' ? "missing value" : "unknown option");
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "topocoll_bench: %s: unexpected argument\n", argv[optind]);
        return -1;
    }
    int known = strcmp(o->coll, "barrier") == 0;
    for (int c = 0; c < C_N; c++) known |= strcmp(o->coll, coll_names[c]) == 0;
    if (!known) {
        fprintf(stderr,
                "topocoll_bench: --coll %s: bcast, reduce, allreduce, allgather, gather, scatter, "
                "alltoall or barrier\n",
                o->coll);
        return -1;
    }
    if (o->overlap && o->size < 64) {
        fprintf(stderr, "topocoll_bench: --size %zu: --overlap needs at least 64 bytes\n", o->size);
        return -1;
    }
    if (o->min > o->max) {
        fprintf(stderr, "topocoll_bench: --min %zu is above --max %zu\n", o->min, o->max);
        return -1;
    }
    return 0;
}

/* --nb: the "native" side is topocoll's blocking call, the "topocoll" side
 * its nonblocking one followed at once by the wait. */
static int g_nb_vs_blocking;

/* topocoll's nonblocking collective @coll, then its wait. */
static int run_nb(MPI_Comm w, int coll, char *sbuf, char *rbuf, size_t bytes, int root)
{
    int n = (int)(bytes / sizeof(double)), rc;
    MPI_Request r;
    switch (coll) {
    case C_BCAST: rc = topocoll_ibcast(sbuf, (int)bytes, MPI_BYTE, root, w, &r); break;
    case C_REDUCE: rc = topocoll_ireduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, root, w, &r); break;
    case C_ALLREDUCE: rc = topocoll_iallreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, w, &r); break;
    case C_GATHER:
        rc = topocoll_igather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, root, w, &r);
        break;
    case C_SCATTER:
        rc = topocoll_iscatter(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, root, w, &r);
        break;
    case C_ALLTOALL:
        rc = topocoll_ialltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w, &r);
        break;
    default:
        rc = topocoll_iallgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w, &r);
        break;
    }
    return rc != MPI_SUCCESS ? rc : topocoll_wait(&r, MPI_STATUS_IGNORE);
}

/* One call of collective @coll, native (PMPI) or topocoll.  @bytes is the
 * message size (doubles for the reductions, bytes otherwise). */
static int run_on(MPI_Comm w, int coll, int native, char *sbuf, char *rbuf, size_t bytes, int root)
{
    int n = (int)(bytes / sizeof(double));
    if (g_nb_vs_blocking) {
        if (!native) return run_nb(w, coll, sbuf, rbuf, bytes, root);
        native = 0; /* topocoll's blocking call */
    }
    switch (coll) {
    case C_BCAST:
        return native ? PMPI_Bcast(sbuf, (int)bytes, MPI_BYTE, root, w)
                      : topocoll_bcast(sbuf, (int)bytes, MPI_BYTE, root, w);
    case C_REDUCE:
        return native ? PMPI_Reduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, root, w)
                      : topocoll_reduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, root, w);
    case C_ALLREDUCE:
        return native ? PMPI_Allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, w)
                      : topocoll_allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, w);
    case C_GATHER:
        return native ? PMPI_Gather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, root, w)
                      : topocoll_gather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE,
                                        root, w);
    case C_SCATTER:
        return native
                   ? PMPI_Scatter(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, root, w)
                   : topocoll_scatter(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, root,
                                      w);
    case C_ALLTOALL:
        return native
                   ? PMPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w)
                   : topocoll_alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w);
    default:
        return native
                   ? PMPI_Allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w)
                   : topocoll_allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, w);
    }
}

/* The world's size (set once in main). */
static int g_size = 1;

/* One call on MPI_COMM_WORLD; @bytes: the send buffer's (buf_bytes), of
 * which Scatter and Alltoall send a block per rank. */
static int run(int coll, int native, char *sbuf, char *rbuf, size_t bytes, int root)
{
    if (coll == C_SCATTER || coll == C_ALLTOALL) bytes /= (size_t)g_size;
    return run_on(MPI_COMM_WORLD, coll, native, sbuf, rbuf, bytes, root);
}

/* Bytes this host's network interfaces (all but lo) have received and
 * sent so far (this network namespace's /proc/net/dev); 0 where it
 * cannot be read. */
static void net_counters(uint64_t *rx, uint64_t *tx)
{
    *rx = *tx = 0;
    FILE *f = fopen("/proc/net/dev", "r"); /* this network namespace's interfaces */
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':'), *name = line;
        if (!colon) continue; /* the two header lines */
        *colon = 0;
        while (*name == ' ') name++;
        if (strcmp(name, "lo") == 0) continue;
        unsigned long long v[9];
        /* rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes */
        if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9) {
            *rx += v[0];
            *tx += v[8];
        }
    }
    fclose(f);
}

/* Mean latency (s) of @iters calls, slowest rank, over rotating buffers.
 * With --net, *@wire gets the busiest host's bytes on the wire per call
 * (the larger of received and sent), measured between two barriers. */
static double time_coll(int coll, int native, char **spool, char **rpool, int npool, size_t bytes,
                        int iters, int root, double *wire)
{
    double t0, t, tmax;
    uint64_t rx0 = 0, tx0 = 0, rx1, tx1;
    PMPI_Barrier(MPI_COMM_WORLD);
    if (wire && g_hosts.counter) net_counters(&rx0, &tx0);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        run(coll, native, spool[i % npool], rpool[i % npool], bytes, root);
    t = (MPI_Wtime() - t0) / iters;
    if (wire) {
        double b = 0;
        PMPI_Barrier(MPI_COMM_WORLD); /* every call's traffic is over */
        if (g_hosts.counter) {
            net_counters(&rx1, &tx1);
            b = (double)(rx1 - rx0 > tx1 - tx0 ? rx1 - rx0 : tx1 - tx0) / iters;
        }
        PMPI_Allreduce(&b, wire, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

/* One repetition on one reused buffer (the warm regimes): @skip untimed
 * calls, then @iters timed ones.  OSU (@imb 0) times each call alone and
 * puts a barrier after it (osu_bcast's loop); IMB (@imb 1) times the
 * @iters calls back to back after one barrier (IMB-MPI1's loop).  @t gets
 * the mean per call across ranks, seconds: t[0] average, t[1] minimum,
 * t[2] maximum (OSU's Avg/Min/Max Latency, IMB's t_avg/t_min/t_max). */
static void time_warm(int coll, int native, char *sbuf, char *rbuf, size_t bytes, int skip,
                      int iters, int root, int imb, double t[3])
{
    double timer = 0, sum;
    int size;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < skip; i++) {
        run(coll, native, sbuf, rbuf, bytes, root);
        if (!imb) PMPI_Barrier(MPI_COMM_WORLD);
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    if (imb) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) run(coll, native, sbuf, rbuf, bytes, root);
        timer = MPI_Wtime() - t0;
    } else {
        for (int i = 0; i < iters; i++) {
            double t0 = MPI_Wtime();
            run(coll, native, sbuf, rbuf, bytes, root);
            timer += MPI_Wtime() - t0;
            PMPI_Barrier(MPI_COMM_WORLD);
        }
    }
    double lat = timer / iters;
    PMPI_Allreduce(&lat, &t[1], 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&lat, &t[2], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Allreduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t[0] = sum / size;
}

/* Before the first size of a run: both sides alternately for about
 * 20 ms, so the first row does not pay for the run's start (the first
 * calls, the cores' clocks; measured: the first size read 5-20% low on
 * either side whatever it was). */
static void prime(int coll, char *sbuf, char *rbuf, size_t bytes, int root)
{
    double t0 = MPI_Wtime(), t = 0;
    for (int i = 0; t < 0.02; i++) {
        run(coll, i % 2, sbuf, rbuf, bytes, root);
        if (i % 16 == 15) { /* every rank leaves together */
            t = MPI_Wtime() - t0;
            PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
    }
}

/* Bytes the busiest host's link must carry in one direction (see the
 * header): the link bound is this over the link's bytes/s. */
static double link_bytes(int coll, size_t n)
{
    int N = g_hosts.nhosts;
    if (N < 2) return 0;
    switch (coll) {
    case C_BCAST:
    case C_REDUCE: return (double)n;
    case C_ALLREDUCE: return 2.0 * (double)n * (N - 1) / N;
    case C_ALLTOALL: return (double)n * g_hosts.ppn * g_hosts.ppn * (N - 1);
    default: return (double)n * g_hosts.ppn * (N - 1); /* allgather, gather, scatter */
    }
}

/* topocoll's result equals the native one (reductions of small integers
 * are exact in any order).  Returns nonzero on any rank's mismatch. */
static int validate(int coll, char *sbuf, char *rbuf, size_t sbytes, size_t rbytes, int root,
                    int rank)
{
    char *ref = malloc(rbytes > sbytes ? rbytes : sbytes);
    int bad = 0, anybad;
    size_t cmp = coll == C_BCAST                                          ? sbytes
                 : (coll == C_REDUCE || coll == C_GATHER) && rank != root ? 0
                                                                          : rbytes;
    if (coll == C_REDUCE || coll == C_ALLREDUCE) {
        double *dv = (void *)sbuf; /* malloc'd: suitably aligned */
        for (size_t i = 0; i < sbytes / sizeof(double); i++)
            dv[i] = (double)((i * 7 + (size_t)rank) % 13);
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
        int iters = bytes >= 64 ? (int)((64u << 20) / bytes) + 2 : 1 << 20;
        if (host != MPI_COMM_NULL) PMPI_Barrier(host);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            memcpy(pool[(2 * i) % npool], pool[(2 * i + 1) % npool], bytes);
        v[r] = (MPI_Wtime() - t0) / iters;
        if (host != MPI_COMM_NULL)
            PMPI_Allreduce(MPI_IN_PLACE, &v[r], 1, MPI_DOUBLE, MPI_MAX, host);
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

/* ---- --mech: the Allgather's copy-mechanism floors (see the header) -------- */

enum { M_MAPPED, M_CMA };

typedef struct mech {
    MPI_Win win;    /* the mapped send pool */
    char **mapped;  /* [size * npool]: peer r's mapped buffer i at [r * npool + i] */
    uint64_t *addr; /* the same for the malloc'd pools (CMA) */
    int *pid;       /* [size] */
    int npool, cma_ok;
} mech_t;

/* Copies every block of pool entry @i into @rbuf by mechanism @m.
 * Returns 0, or -1 if process_vm_readv failed. */
static int mech_copy(const mech_t *x, int m, int i, char *rbuf, size_t bytes, int rank, int size)
{
    const char *own = m == M_MAPPED ? x->mapped[(size_t)rank * x->npool + i]
                                    : (const char *)(uintptr_t)x->addr[(size_t)rank * x->npool + i];
    memcpy(rbuf + (size_t)rank * bytes, own, bytes);
    for (int d = 1; d < size; d++) {
        int j = (rank + d) % size;
        char *dst = rbuf + (size_t)j * bytes;
        if (m == M_MAPPED) {
            memcpy(dst, x->mapped[(size_t)j * x->npool + i], bytes);
            continue;
        }
        for (size_t off = 0; off < bytes;) { /* a short read is resumed */
            struct iovec l = { dst + off, bytes - off };
            struct iovec r = { (void *)(uintptr_t)(x->addr[(size_t)j * x->npool + i] + off),
                               bytes - off };
            ssize_t got = process_vm_readv((pid_t)x->pid[j], &l, 1, &r, 1, 0);
            if (got <= 0) return -1;
            off += (size_t)got;
        }
    }
    return 0;
}

/* Mean latency (s) of @iters floors of mechanism @m, slowest rank. */
static double time_mech(const mech_t *x, int m, char **rpool, size_t bytes, int iters, int rank,
                        int size)
{
    double t0, t, tmax;
    int bad = 0;
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) { /* the syncs: topocoll's barrier, the cheapest here */
        topocoll_barrier(MPI_COMM_WORLD);
        bad |= mech_copy(x, m, i % x->npool, rpool[i % x->npool], bytes, rank, size);
        topocoll_barrier(MPI_COMM_WORLD);
    }
    t = bad ? -1.0 : (MPI_Wtime() - t0) / iters;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return bad ? -1.0 : tmax;
}

/* Sets up both mechanisms over @spool (the CMA pool) and a mapped pool of
 * the same shape filled with the same bytes; checks each against the
 * native Allgather of entry 0.  Returns 0, or -1 (message printed) if
 * the mapped floor cannot be measured; a refused CMA only clears cma_ok. */
static int mech_init(mech_t *x, char **spool, int npool, size_t bytes, int rank, int size)
{
    char *base;
    memset(x, 0, sizeof *x);
    x->npool = npool;
    if (MPI_Win_allocate_shared((MPI_Aint)(bytes * (size_t)npool), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                &base, &x->win) != MPI_SUCCESS)
        return -1;
    x->mapped = malloc((size_t)npool * size * sizeof(char *));
    x->addr = malloc((size_t)npool * size * sizeof(uint64_t));
    uint64_t *mine = malloc((size_t)npool * sizeof(uint64_t));
    x->pid = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < npool; i++) {
        memcpy(base + (size_t)i * bytes, spool[i], bytes);
        mine[i] = (uint64_t)(uintptr_t)spool[i];
    }
    for (int r = 0; r < size; r++) {
        MPI_Aint wsz;
        int du;
        char *p;
        MPI_Win_shared_query(x->win, r, &wsz, &du, &p);
        for (int i = 0; i < npool; i++) x->mapped[(size_t)r * npool + i] = p + (size_t)i * bytes;
    }
    int me = (int)getpid();
    PMPI_Allgather(&me, 1, MPI_INT, x->pid, 1, MPI_INT, MPI_COMM_WORLD);
    PMPI_Allgather(mine, npool, MPI_UINT64_T, x->addr, npool, MPI_UINT64_T, MPI_COMM_WORLD);
    free(mine);
    PMPI_Barrier(MPI_COMM_WORLD); /* every mapped pool is filled */
    char *ref = malloc(bytes * (size_t)size), *got = malloc(bytes * (size_t)size);
    PMPI_Allgather(spool[0], (int)bytes, MPI_BYTE, ref, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    int bad[2] = { 0, 0 };
    for (int m = M_MAPPED; m <= M_CMA; m++) {
        memset(got, 0, bytes * (size_t)size);
        bad[m] = mech_copy(x, m, 0, got, bytes, rank, size) != 0 ||
                 memcmp(ref, got, bytes * (size_t)size) != 0;
    }
    free(ref);
    free(got);
    PMPI_Allreduce(MPI_IN_PLACE, bad, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    x->cma_ok = !bad[M_CMA];
    if (bad[M_MAPPED] && rank == 0)
        fprintf(stderr, "topocoll_bench --mech: the mapped pool gave wrong data\n");
    if (!x->cma_ok && rank == 0)
        fprintf(stderr, "topocoll_bench --mech: process_vm_readv refused or wrong; no cma_us\n");
    return bad[M_MAPPED] ? -1 : 0;
}

static void mech_fini(mech_t *x)
{
    PMPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&x->win);
    free(x->mapped);
    free(x->addr);
    free(x->pid);
}

/* ---- --warm, --imb: one buffer reused (OSU's and IMB's method) ---------------- */

static void warm_header(const opts_t *o, int coll, int size, const topocoll_comm_info_t *info)
{
    int imb = o->regime == R_IMB;
    printf("# topocoll_bench %s: np=%d on %d node(s) (%d per node), %ld cores on this host%s\n",
           o->coll, size, info->nnodes, info->local_size, sysconf(_SC_NPROCESSORS_ONLN),
           coll == C_REDUCE || coll == C_ALLREDUCE ? "; MPI_DOUBLE, MPI_SUM" : "");
    printf("# %s: one buffer reused (warm caches), %s; intra-node %s; median of %d reps,\n"
           "# native and topocoll interleaved%s\n",
           imb ? "IMB's method (--imb)" : "OSU's method (--warm)",
           imb ? "untimed warm-up calls, then the calls back to back after a barrier"
               : "untimed warm-up calls, then each call timed alone with a barrier after it",
           info->single_copy ? "single copy (CMA)" : "copy-in/copy-out", o->reps,
           coll == C_BCAST || coll == C_REDUCE ? (o->root ? "; root != 0" : "; root 0") : "");
    printf(
        "# first columns: topocoll in %s's format (per-rank mean per call; average, minimum, "
        "maximum\n"
        "# across ranks); then the native's; ratio = native/topocoll on the average (>1: faster);\n"
        "# ref_all_us = bytes each process must move / memcpy bandwidth, every process of the "
        "host\n"
        "# copying at once between the same two warm buffers\n",
        imb ? "IMB" : "OSU");
    if (imb)
        printf("%13s %12s %12s %12s %12s %12s %12s %12s %7s %10s %8s%s\n", "#bytes", "#repetitions",
               "t_min[usec]", "t_max[usec]", "t_avg[usec]", "nat_t_min", "nat_t_max", "nat_t_avg",
               "ratio", "ref_all_us", "GB/s_all", o->mech ? "  mapped_us     cma_us" : "");
    else
        printf("%-10s%18s%18s%18s%12s%12s%12s%12s%8s%11s%9s%s\n", "# Size", "Avg Latency(us)",
               "Min Latency(us)", "Max Latency(us)", "Iterations", "native_avg", "native_min",
               "native_max", "ratio", "ref_all_us", "GB/s_all",
               o->mech ? "  mapped_us     cma_us" : "");
    if (o->mech)
        printf("# mapped_us, cma_us (--mech): an Allgather's least time reading the peers' send "
               "buffers mapped\n"
               "# in memory (XPMEM-like) or by process_vm_readv, with two barriers, calls back to "
               "back\n");
}

/* The warm regimes (see time_warm): native and topocoll interleaved, the
 * median of each column over the repetitions.  Returns nonzero if a
 * result differed from the native one. */
static int bench_warm(const opts_t *o, int coll, int rank, int size, FILE *csv, MPI_Comm host,
                      const topocoll_comm_info_t *info)
{
    int imb = o->regime == R_IMB, invalid = 0;
    if (rank == 0) warm_header(o, coll, size, info);
    if (csv)
        fprintf(csv,
                "coll,np,nodes,bytes,native_us,topocoll_us,ratio,ref_us,memcpy_GBps,ref_all_us,"
                "memcpy_all_GBps,regime,iters,native_min_us,native_max_us,topocoll_min_us,"
                "topocoll_max_us,mapped_us,cma_us\n");
    double(*tn)[3] = calloc((size_t)o->reps, sizeof(*tn)),
    (*tt)[3] = calloc((size_t)o->reps, sizeof(*tt));
    double *v = malloc((size_t)o->reps * sizeof(double));
    double *tm = calloc((size_t)o->reps, sizeof(double)),
           *tc = calloc((size_t)o->reps, sizeof(double));
    for (size_t bytes = o->min; bytes <= o->max; bytes *= 2) {
        size_t sbytes, rbytes;
        buf_bytes(coll, bytes, size, &sbytes, &rbytes);
        if (sbytes == 0) continue;
        /* the memcpy reference's copy: the vector, or one block */
        const size_t refb = coll >= C_ALLGATHER ? bytes : sbytes;
        char *sb[2], *rb[2]; /* [0]: the collectives' buffers; [1]: memcpy_ref's source */
        for (int i = 0; i < 2; i++) {
            sb[i] = malloc(sbytes);
            rb[i] = malloc(rbytes);
            memset(sb[i], rank, sbytes);
            memset(rb[i], rank, rbytes);
        }
        /* OSU: 1000 calls up to 8 KiB, 100 above; fewer on big messages */
        size_t traffic = (sbytes + rbytes) * (size_t)(size > 1 ? size : 2);
        int iters = o->iters ? o->iters : (int)((256u << 20) / traffic);
        if (!o->iters)
            iters = iters < 10                             ? 10
                    : iters > (bytes <= 8192 ? 1000 : 100) ? (bytes <= 8192 ? 1000 : 100)
                                                           : iters;
        int skip = iters / 5 < 2 ? 2 : iters / 5;
        int bad = validate(coll, sb[0], rb[0], sbytes, rbytes, o->root, rank);
        invalid |= bad;
        if (bytes == o->min) prime(coll, sb[0], rb[0], sbytes, o->root);
        if (bad && rank == 0)
            fprintf(stderr, "topocoll_bench: VALIDATION FAILED at %zu bytes\n", bytes);
        mech_t mx; /* --mech: the floors on the same warm buffers */
        int mech = o->mech && mech_init(&mx, sb, 1, sbytes, rank, size) == 0;
        invalid |= o->mech && !mech;
        for (int r = 0; r < o->reps; r++) {
            int first = r % 2 == 0; /* 1: the native first */
            time_warm(coll, first, sb[0], rb[0], sbytes, skip, iters, o->root, imb,
                      first ? tn[r] : tt[r]);
            time_warm(coll, !first, sb[0], rb[0], sbytes, skip, iters, o->root, imb,
                      first ? tt[r] : tn[r]);
            if (mech) tm[r] = time_mech(&mx, M_MAPPED, rb, sbytes, iters, rank, size);
            if (mech && mx.cma_ok) tc[r] = time_mech(&mx, M_CMA, rb, sbytes, iters, rank, size);
        }
        double mm = mech ? median(tm, o->reps) * 1e6 : -1,
               mcma = mech && mx.cma_ok ? median(tc, o->reps) * 1e6 : -1;
        if (mech) mech_fini(&mx);
        double m[2][3]; /* [native, topocoll][avg, min, max], us */
        for (int k = 0; k < 3; k++) {
            for (int r = 0; r < o->reps; r++) v[r] = tn[r][k];
            m[0][k] = median(v, o->reps) * 1e6;
            for (int r = 0; r < o->reps; r++) v[r] = tt[r][k];
            m[1][k] = median(v, o->reps) * 1e6;
        }
        double mc = 0;
        if (rank == 0) mc = memcpy_ref(rb, 2, refb, o->reps, MPI_COMM_NULL) * 1e6;
        PMPI_Barrier(MPI_COMM_WORLD);
        double mca = memcpy_ref(rb, 2, refb, o->reps, host) * 1e6;
        if (rank == 0) {
            double bw = (double)refb / mc / 1e3, bwa = (double)refb / mca / 1e3; /* GB/s */
            double ref = must_move(coll, refb, size) / (bw * 1e3),
                   refa = must_move(coll, refb, size) / (bwa * 1e3);
            double ratio = m[0][0] / m[1][0];
            if (imb)
                printf("%13zu %12d %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f %7.2f %10.2f %8.2f",
                       refb, iters, m[1][1], m[1][2], m[1][0], m[0][1], m[0][2], m[0][0], ratio,
                       refa, bwa);
            else
                printf("%-10zu%18.2f%18.2f%18.2f%12d%12.2f%12.2f%12.2f%8.2f%11.2f%9.2f", refb,
                       m[1][0], m[1][1], m[1][2], iters, m[0][0], m[0][1], m[0][2], ratio, refa,
                       bwa);
            if (o->mech) printf(" %10.2f %10.2f", mm, mcma); /* -1: not measured */
            printf("%s\n", bad ? "  INVALID" : "");
            if (csv) {
                fprintf(
                    csv,
                    "%s,%d,%d,%zu,%.3f,%.3f,%.4f,%.3f,%.3f,%.3f,%.3f,%s,%d,%.3f,%.3f,%.3f,%.3f,",
                    o->coll, size, info->nnodes, refb, m[0][0], m[1][0], ratio, ref, bw, refa, bwa,
                    imb ? "imb" : "osu", iters, m[0][1], m[0][2], m[1][1], m[1][2]);
                if (mm > 0) fprintf(csv, "%.3f", mm);
                fputc(',', csv);
                if (mcma > 0) fprintf(csv, "%.3f", mcma);
                fputc('\n', csv);
            }
            fflush(stdout);
        }
        for (int i = 0; i < 2; i++) {
            free(sb[i]);
            free(rb[i]);
        }
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    free(v);
    free(tn);
    free(tt);
    free(tm);
    free(tc);
    return invalid;
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
    double *tn = malloc((size_t)o->reps * sizeof(double)),
           *tt = malloc((size_t)o->reps * sizeof(double));
    time_barrier(PMPI_Barrier, 10);
    time_barrier(topocoll_barrier, 10);
    for (int r = 0; r < o->reps; r++) {
        if (r % 2 == 0) {
            tn[r] = time_barrier(PMPI_Barrier, iters);
            tt[r] = time_barrier(topocoll_barrier, iters);
        } else {
            tt[r] = time_barrier(topocoll_barrier, iters);
            tn[r] = time_barrier(PMPI_Barrier, iters);
        }
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

static int bench_overlap(const opts_t *o, int rank, int size, FILE *csv,
                         const topocoll_comm_info_t *info)
{
    const tc_config_t *cfg = tc_config_get();
    size_t bytes = o->size / ((size_t)size * sizeof(double)) * (size_t)size * sizeof(double);
    if (bytes == 0) bytes = (size_t)size * sizeof(double);
    const int npool = 4;
    double *in[4], *out[4];
    for (int i = 0; i < npool; i++) {
        in[i] = malloc(bytes);
        out[i] = malloc(bytes);
        for (size_t k = 0; k < bytes / sizeof(double); k++)
            in[i][k] = (double)((k + (size_t)rank) % 7);
        memset(out[i], 0, bytes);
    }
    int n = info->local_size, h = 0;
    while ((1 << h) < size) h++;
    int model_s = -1;
    if (cfg->comm_cores > 0) { model_s = tc_st_best_s(n, n + cfg->comm_cores, 0); }
    const tc_ctx_t *ctx = tc_ctx_lookup(MPI_COMM_WORLD);
    int s_used = ctx && ctx->enabled ? tc_tree_split(ctx, cfg->comm_cores)
                                     : -1; /* what the operations use */
    if (rank == 0) {
        const char *pl[] = { "bind", "numa", "odd-even" };
        printf("# topocoll_bench --overlap: np=%d on %d node(s), %ld cores on this host; buffer "
               "%zu bytes "
               "(iallgather: %zu per rank, iscan: %zu); median of %d reps of the slowest rank\n",
               size, info->nnodes, sysconf(_SC_NPROCESSORS_ONLN), bytes, bytes / (size_t)size,
               bytes / 2, o->reps);
        if (cfg->comm_cores > 0)
            printf("# progress: TOPOCOLL_COMM_CORES=%d, placement %s, thread on core %d; "
                   "Ibcast/Ireduce: %s, "
                   "H=%d, S=%d (model's S=%d)\n",
                   cfg->comm_cores, pl[cfg->placement], topocoll_progress_core(),
                   cfg->nbc_split_tree ? "split tree" : "hierarchical", h,
                   cfg->nbc_split_tree ? s_used : -1, model_s);
        else
            printf("# progress: no communication core (progress only inside MPI calls); "
                   "Ibcast/Ireduce: %s\n",
                   cfg->nbc_split_tree ? "split tree" : "hierarchical");
        printf("# t_cpu = t_pure (perfect-overlap sizing); overlap%% = "
               "100*max(0,min(1,(t_pure+t_cpu-t_ovrl)/"
               "min(t_pure,t_cpu))) (IMB-NBC)\n");
        printf("%11s %9s %10s %10s %10s %9s\n", "collective", "impl", "t_pure_us", "t_cpu_us",
               "t_ovrl_us", "overlap%");
    }
    int bad_any = 0;
    double *v = malloc((size_t)o->reps * sizeof(double));
    for (int c = 0; c < NB_N; c++) {
        /* validation: topocoll's result equals the native one */
        if (c != NB_IBARRIER) {
            double *ref = malloc(bytes), *got = malloc(bytes), *b1 = malloc(bytes),
                   *b2 = malloc(bytes);
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
            bad_any |= bad;
            if (bad && rank == 0)
                fprintf(stderr, "topocoll_bench: %s VALIDATION FAILED\n", nb_names[c]);
            free(ref);
            free(got);
            free(b1);
            free(b2);
        }
        for (int native = 1; native >= 0; native--) {
            nb_once(c, native, in[0], out[0], bytes, size, 0); /* warm-up */
            for (int r = 0; r < o->reps; r++)
                v[r] = nb_once(c, native, in[r % npool], out[r % npool], bytes, size, 0);
            double tp = median(v, o->reps), tc = tp;
            for (int r = 0; r < o->reps; r++)
                v[r] = nb_once(c, native, in[r % npool], out[r % npool], bytes, size, tc);
            double to = median(v, o->reps);
            double mn = tp < tc ? tp : tc, ov = mn > 0 ? (tp + tc - to) / mn : 0;
            ov = 100.0 * (ov < 0 ? 0 : ov > 1 ? 1 : ov);
            if (rank == 0) {
                printf("%11s %9s %10.1f %10.1f %10.1f %9.1f\n", nb_names[c],
                       native ? "native" : "topocoll", tp * 1e6, tc * 1e6, to * 1e6, ov);
                if (csv)
                    fprintf(csv, "%s,%s,%d,%zu,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f\n", nb_names[c],
                            native ? "native" : "topocoll", size, bytes, cfg->comm_cores,
                            (int)cfg->placement, cfg->nbc_split_tree ? s_used : -1, model_s,
                            tp * 1e6, tc * 1e6, to * 1e6, ov);
                fflush(stdout);
            }
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

static void bench_churn(const opts_t *o, int coll, int rank, int size, FILE *csv)
{
    size_t bytes = o->size_set ? o->size : 8192;
    if (coll == C_REDUCE || coll == C_ALLREDUCE)
        bytes = (bytes + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    size_t sbytes, rbytes;
    buf_bytes(coll, bytes, size, &sbytes, &rbytes);
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
    if (rank == 0) {
        static const char *step[CH_N] = { "dup", "first", "rest", "free", "total" };
        printf("# topocoll_bench --comm-churn: np=%d, %ld cores on this host; "
               "MPI_Comm_dup(MPI_COMM_WORLD),\n"
               "# %d %s of %zu bytes, MPI_Comm_free; %d rounds per rep, median of %d reps of the "
               "slowest\n"
               "# rank's mean per round; first = the first collective, rest = the other %d\n",
               size, sysconf(_SC_NPROCESSORS_ONLN), o->churn_calls, o->coll, bytes, iters, o->reps,
               o->churn_calls > 1 ? o->churn_calls - 1 : 0);
        printf("%8s %12s %12s %7s\n", "step", "native_us", "topocoll_us", "ratio");
        for (int k = 0; k < CH_N; k++) {
            double vn[64], vt[64];
            int n = o->reps < 64 ? o->reps : 64;
            for (int r = 0; r < n; r++) {
                vn[r] = tn[r][k];
                vt[r] = tt[r][k];
            }
            double mn = median(vn, n) * 1e6, mt = median(vt, n) * 1e6;
            printf("%8s %12.2f %12.2f %7.2f\n", step[k], mn, mt, mt > 0 ? mn / mt : 0);
            if (csv)
                fprintf(csv, "%s,%d,%s,%zu,%d,%.3f,%.3f,%.4f\n", o->coll, size, step[k], bytes,
                        o->churn_calls, mn, mt, mt > 0 ? mn / mt : 0);
        }
    }
    free(tn);
    free(tt);
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    int rank, size, provided = MPI_THREAD_SINGLE;
    opts_t o;
    int pr = parse(argc, argv, &o); /* before MPI_Init: --help and --version need no mpiexec */
    if (pr > 0) return 0;
    if (pr < 0) {
        fprintf(stderr, "Try 'topocoll_bench --help'.\n");
        return 2;
    }
    /* progress threads when TOPOCOLL_COMM_CORES asks for them */
    MPI_Init_thread(&argc, &argv, topocoll_progress_thread_level(MPI_THREAD_SINGLE), &provided);
    topocoll_progress_init(provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_size = size;
    if (o.root >= size) {
        if (rank == 0)
            fprintf(stderr, "topocoll_bench: --root %d: not a rank of the %d processes\n", o.root,
                    size);
        topocoll_progress_fini();
        MPI_Finalize();
        return 2;
    }
    FILE *csv = NULL;
    if (rank == 0 && o.csv && !(csv = fopen(o.csv, "w"))) perror(o.csv);
    if (csv && !o.churn && o.regime == R_COLD)
        fprintf(csv,
                "coll,np,nodes,bytes,native_us,topocoll_us,ratio,ref_us,memcpy_GBps,ref_all_us,"
                "memcpy_all_GBps,mapped_us,cma_us,link_us,net_native_B,net_topocoll_B,link_B\n");
    MPI_Comm host; /* the processes sharing this host's memory bandwidth */
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    int host_size, host_rank;
    PMPI_Comm_size(host, &host_size);
    PMPI_Comm_rank(host, &host_rank);
    g_hosts.host = host;
    g_hosts.counter = host_rank == 0;
    PMPI_Allreduce(&g_hosts.counter, &g_hosts.nhosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&host_size, &g_hosts.ppn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

    if (o.churn) { /* before anything attaches: nothing else is built */
        int coll = 0;
        while (coll < C_N && strcmp(o.coll, coll_names[coll]) != 0) coll++;
        if (coll == C_N) coll = C_ALLREDUCE; /* barrier: the default */
        if (csv) fprintf(csv, "coll,np,step,bytes,calls,native_us,topocoll_us,ratio\n");
        bench_churn(&o, coll, rank, size, csv);
        if (csv) fclose(csv);
        PMPI_Comm_free(&host);
        topocoll_progress_fini();
        MPI_Finalize();
        return 0;
    }
    topocoll_comm_attach(MPI_COMM_WORLD);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(MPI_COMM_WORLD, &info);
    if (o.overlap) {
        if (csv)
            fprintf(csv, "coll,impl,np,bytes,comm_cores,placement,S,model_S,t_pure_us,t_cpu_us,t_"
                         "ovrl_us,overlap\n");
        int bad = bench_overlap(&o, rank, size, csv, &info);
        if (csv) fclose(csv);
        PMPI_Comm_free(&host);
        topocoll_progress_fini();
        MPI_Finalize();
        return bad ? 1 : 0;
    }
    if (strcmp(o.coll, "barrier") == 0) {
        if (rank == 0)
            printf("# topocoll_bench barrier: np=%d on %d node(s) (%d per node), %ld cores on this "
                   "host; "
                   "median of %d reps of the slowest rank's mean\n",
                   size, info.nnodes, info.local_size, sysconf(_SC_NPROCESSORS_ONLN), o.reps);
        bench_barrier(&o, rank, csv, size, info.nnodes);
        if (csv) fclose(csv);
        PMPI_Comm_free(&host);
        topocoll_progress_fini();
        MPI_Finalize();
        return 0;
    }
    int coll = 0;
    while (strcmp(o.coll, coll_names[coll]) != 0) coll++;
    g_nb_vs_blocking = o.nb;
    if (o.nb && rank == 0)
        printf("# --nb: the native columns are topocoll's blocking call, the topocoll columns its "
               "nonblocking\n"
               "# call followed at once by MPI_Wait (ratio > 0.91: within 10%%)\n");
    if (o.mech && (coll != C_ALLGATHER || host_size != size)) {
        if (rank == 0)
            fprintf(stderr,
                    "topocoll_bench: --mech is for allgather with every process on one host\n");
        o.mech = 0;
    }
    if (o.regime != R_COLD) {
        if (rank == 0 && (o.link > 0 || o.net))
            fprintf(
                stderr,
                "topocoll_bench: --link and --net are for the rotating pool (not --warm, --imb)\n");
        int bad = bench_warm(&o, coll, rank, size, csv, host, &info);
        if (csv) fclose(csv);
        PMPI_Comm_free(&host);
        topocoll_progress_fini();
        MPI_Finalize();
        return bad ? 1 : 0;
    }
    if (rank == 0) {
        printf("# topocoll_bench %s: np=%d on %d node(s) (%d per node), %ld cores on this host%s\n",
               o.coll, size, info.nnodes, info.local_size, sysconf(_SC_NPROCESSORS_ONLN),
               coll == C_REDUCE || coll == C_ALLREDUCE ? "; MPI_DOUBLE, MPI_SUM" : "");
        printf("# intra-node: %s; rotating pool %zu MiB per process; median of %d reps%s\n",
               info.single_copy ? "single copy (CMA)" : "copy-in/copy-out", o.pool >> 20, o.reps,
               coll == C_BCAST || coll == C_REDUCE ? (o.root ? "; root != 0" : "; root 0") : "");
        printf("# bytes = %s; latency = slowest rank's mean per call; ratio = native/topocoll (>1: "
               "faster)\n",
               coll >= C_ALLGATHER ? "block per rank" : "vector");
        printf(
            "# ref = bytes each process must move / memcpy bandwidth (GB/s, cold buffers): one "
            "core alone\n"
            "# (ref_us, GB/s), every process of the host copying at once (ref_all_us, GB/s_all)\n");
        if (o.mech)
            printf("# mapped_us, cma_us (--mech): an Allgather's least time reading the peers' "
                   "send buffers\n"
                   "# mapped in memory (XPMEM-like) or by process_vm_readv; same reps, same "
                   "rotation\n");
        if (o.link > 0)
            printf("# %d hosts, at most %d processes each; link %.3g bit/s: link_us = the busiest "
                   "host's bytes\n"
                   "# (link_B) / the link rate, x = topocoll_us / link_us\n",
                   g_hosts.nhosts, g_hosts.ppn, o.link);
        if (o.net)
            printf("# net_*_B: the busiest host's bytes on the wire per call (max of sent, "
                   "received; all\n"
                   "# interfaces but lo), native and topocoll\n");
        printf("%10s %12s %12s %7s %10s %8s %10s %8s%s%s%s\n", "bytes", "native_us", "topocoll_us",
               "ratio", "ref_us", "GB/s", "ref_all_us", "GB/s_all",
               o.mech ? "  mapped_us     cma_us" : "", o.link > 0 ? "    link_us      x" : "",
               o.net ? "  net_nat_B   net_topo_B       link_B" : "");
    }
    int invalid = 0;
    for (size_t bytes = o.min; bytes <= o.max; bytes *= 2) {
        size_t sbytes, rbytes;
        buf_bytes(coll, bytes, size, &sbytes, &rbytes);
        if (sbytes == 0) continue;
        /* the memcpy reference's copy: the vector, or one block */
        const size_t refb = coll >= C_ALLGATHER ? bytes : sbytes;
        int npool = (int)(o.pool / (sbytes + rbytes));
        if (npool < 2) npool = 2;
        if (npool > 256) npool = 256;
        char **spool = malloc((size_t)npool * sizeof(char *)),
             **rpool = malloc((size_t)npool * sizeof(char *));
        for (int i = 0; i < npool; i++) {
            spool[i] = malloc(sbytes);
            rpool[i] = malloc(rbytes);
            memset(spool[i], rank, sbytes); /* fault the pages in */
            memset(rpool[i], rank, rbytes);
        }
        int iters = o.iters
                        ? o.iters
                        : (int)((256u << 20) / ((sbytes + rbytes) * (size_t)(size > 1 ? size : 2)));
        if (iters < 5) iters = 5;
        if (iters > 2000) iters = 2000;
        int bad = validate(coll, spool[0], rpool[0], sbytes, rbytes, o.root, rank);
        invalid |= bad;
        if (bytes == o.min) prime(coll, spool[0], rpool[0], sbytes, o.root);
        if (bad && rank == 0)
            fprintf(stderr, "topocoll_bench: VALIDATION FAILED at %zu bytes\n", bytes);
        time_coll(coll, 1, spool, rpool, npool, sbytes, 2, o.root, NULL); /* warm-up */
        time_coll(coll, 0, spool, rpool, npool, sbytes, 2, o.root, NULL);
        mech_t mx;
        int mech = o.mech && mech_init(&mx, spool, npool, sbytes, rank, size) == 0;
        invalid |= o.mech && !mech;
        double *tn = malloc((size_t)o.reps * sizeof(double)),
               *tt = malloc((size_t)o.reps * sizeof(double));
        double *tm = calloc((size_t)o.reps, sizeof(double)),
               *tc = calloc((size_t)o.reps, sizeof(double));
        double *wn = calloc((size_t)o.reps, sizeof(double)),
               *wt = calloc((size_t)o.reps, sizeof(double));
        for (int r = 0; r < o.reps; r++) {
            if (r % 2 == 0) {
                tn[r] = time_coll(coll, 1, spool, rpool, npool, sbytes, iters, o.root,
                                  o.net ? &wn[r] : NULL);
                tt[r] = time_coll(coll, 0, spool, rpool, npool, sbytes, iters, o.root,
                                  o.net ? &wt[r] : NULL);
            } else {
                tt[r] = time_coll(coll, 0, spool, rpool, npool, sbytes, iters, o.root,
                                  o.net ? &wt[r] : NULL);
                tn[r] = time_coll(coll, 1, spool, rpool, npool, sbytes, iters, o.root,
                                  o.net ? &wn[r] : NULL);
            }
            if (mech) tm[r] = time_mech(&mx, M_MAPPED, rpool, sbytes, iters, rank, size);
            if (mech && mx.cma_ok) tc[r] = time_mech(&mx, M_CMA, rpool, sbytes, iters, rank, size);
        }
        double mn = median(tn, o.reps) * 1e6, mt = median(tt, o.reps) * 1e6;
        double nwn = median(wn, o.reps), nwt = median(wt, o.reps), lb = link_bytes(coll, refb);
        double lus = o.link > 0 ? lb / (o.link / 8) * 1e6 : 0;
        free(wn);
        free(wt);
        double mm = mech ? median(tm, o.reps) * 1e6 : -1,
               mcma = mech && mx.cma_ok ? median(tc, o.reps) * 1e6 : -1;
        if (mech) mech_fini(&mx);
        free(tm);
        free(tc);
        double mc = 0;
        if (rank == 0)
            mc = memcpy_ref(rpool, npool, refb, o.reps, MPI_COMM_NULL) * 1e6; /* one copy */
        PMPI_Barrier(MPI_COMM_WORLD);
        double mca =
            memcpy_ref(rpool, npool, refb, o.reps, host) * 1e6; /* all of the host at once */
        if (rank == 0) {
            double bw = (double)refb / mc / 1e3, bwa = (double)refb / mca / 1e3; /* GB/s */
            double ref = must_move(coll, refb, size) / (bw * 1e3),
                   refa = must_move(coll, refb, size) / (bwa * 1e3);
            printf("%10zu %12.2f %12.2f %7.2f %10.2f %8.2f %10.2f %8.2f", refb, mn, mt, mn / mt,
                   ref, bw, refa, bwa);
            if (o.mech) printf(" %10.2f %10.2f", mm, mcma); /* -1: not measured */
            if (o.link > 0 && lus > 0)
                printf(" %10.2f %6.2f", lus, mt / lus);
            else if (o.link > 0)
                printf(" %10s %6s", "-", "-"); /* one host: no link to bound */
            if (o.net) printf(" %12.0f %12.0f %12.0f", nwn, nwt, lb);
            printf("%s\n", bad ? "  INVALID" : "");
            if (csv) {
                fprintf(csv, "%s,%d,%d,%zu,%.3f,%.3f,%.4f,%.3f,%.3f,%.3f,%.3f,", o.coll, size,
                        info.nnodes, refb, mn, mt, mn / mt, ref, bw, refa, bwa);
                if (mm > 0) fprintf(csv, "%.3f", mm);
                fputc(',', csv);
                if (mcma > 0) fprintf(csv, "%.3f", mcma);
                fputc(',', csv);
                if (o.link > 0) fprintf(csv, "%.3f", lus);
                fputc(',', csv);
                if (o.net)
                    fprintf(csv, "%.0f,%.0f,%.0f", nwn, nwt, lb);
                else
                    fputs(",,", csv);
                fputc('\n', csv);
            }
            fflush(stdout);
        }
        free(tn);
        free(tt);
        for (int i = 0; i < npool; i++) {
            free(spool[i]);
            free(rpool[i]);
        }
        free(spool);
        free(rpool);
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    if (csv) fclose(csv);
    PMPI_Comm_free(&host);
    topocoll_progress_fini();
    MPI_Finalize();
    return invalid ? 1 : 0;
}
