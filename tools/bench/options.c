/*
 * tools/bench/options.c -- topocoll_bench's command line (parse, usage)
 * and the table of the collectives it knows (bench.h).
 */
#include "bench.h"

#include "base/config.h" /* tc_parse_size, tc_parse_rate: the library's syntax (bench.h) */

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int shape;
} g_colls[C_N] = {
#define TC_COLL(ID, Name, lower, SHAPE, ...) [C_##ID] = { #lower, SH_##SHAPE },
#include "base/colls.def"
#undef TC_COLL
};

const char *coll_name(int coll) { return coll >= 0 && coll < C_N ? g_colls[coll].name : NULL; }
int coll_shape(int coll) { return coll >= 0 && coll < C_N ? g_colls[coll].shape : -1; }

int coll_reduces(int coll)
{
    return coll_shape(coll) == SH_REDUCE || coll_shape(coll) == SH_ALLRED ||
           coll_shape(coll) == SH_REDSCAT;
}
int coll_irregular(int coll)
{
    int s = coll_shape(coll);
    return s == SH_GATHERV || s == SH_SCATTERV || s == SH_ALLGV || s == SH_ALLTOALLV ||
           s == SH_ALLTOALLW;
}
int coll_blocks(int coll)
{
    return coll_shape(coll) == SH_ALLG || coll_shape(coll) == SH_ROOTG || coll_irregular(coll);
}
int coll_rooted(int coll)
{
    int s = coll_shape(coll);
    return s == SH_BCAST || s == SH_REDUCE || s == SH_ROOTG || s == SH_GATHERV || s == SH_SCATTERV;
}
size_t vtotal(size_t b, int n) { return b * (size_t)n * (size_t)(n + 1) / 2; }

int coll_index(const char *name)
{
    int c = 0;
    while (c < C_N && strcmp(name, g_colls[c].name) != 0) c++;
    return c;
}

void buf_bytes(int coll, size_t bytes, int size, size_t *sb, size_t *rb)
{
    size_t all = bytes * (size_t)size;
    *sb = coll == C_SCATTER || coll == C_ALLTOALL ? all : bytes;
    *rb = coll == C_ALLGATHER || coll == C_GATHER || coll == C_ALLTOALL ? all : bytes;
    if (coll_reduces(coll)) *sb = *rb = bytes / sizeof(double) * sizeof(double);
    if (coll_irregular(coll)) { /* the largest block is size x bytes */
        *sb = coll == C_SCATTERV                           ? vtotal(bytes, size)
              : coll == C_ALLTOALLV || coll == C_ALLTOALLW ? all * size
                                                           : all;
        *rb = coll == C_SCATTERV ? all : vtotal(bytes, size);
    }
}

/* Scan and Exscan: each process but the last (first) passes a prefix on
 * (at least n bytes each, as a chain does). */
double must_move(int coll, size_t n, int p)
{
    switch (coll) {
    case C_BCAST:
    case C_SCAN:
    case C_EXSCAN: return (double)n;
    case C_REDUCE:
    case C_REDUCE_SCATTER_BLOCK: /* every block but our own, from each peer's once */
    case C_REDUCE_SCATTER: return (double)n * (p - 1) / p;
    case C_ALLREDUCE: return 2.0 * (double)n * (p - 1) / p;
    case C_BARRIER: return 0;
    case C_GATHERV: /* the root's (rank 0's) share of all blocks but its own */
    case C_SCATTERV:
    case C_ALLGATHERV:
    case C_ALLTOALLV:
    case C_ALLTOALLW: return (double)(vtotal(n, p) - n);
    default: return (double)n * (p - 1);
    }
}

double link_bytes(int coll, size_t n)
{
    int N = g_hosts.nhosts;
    if (N < 2) return 0;
    switch (coll) {
    case C_BCAST:
    case C_REDUCE:
    case C_SCAN: /* a node's prefix crosses each link once */
    case C_EXSCAN: return (double)n;
    case C_ALLREDUCE: return 2.0 * (double)n * (N - 1) / N;
    case C_REDUCE_SCATTER_BLOCK: /* the host holding the least sends the rest, once */
    case C_REDUCE_SCATTER: return (double)n * (1 - g_hosts.rs_least[coll == C_REDUCE_SCATTER]);
    case C_ALLTOALL: return (double)n * g_hosts.ppn * g_hosts.ppn * (N - 1);
    case C_BARRIER: return 0;
    case C_GATHERV: /* what the other hosts' ranks hold, into (out of) root 0's host */
    case C_SCATTERV: return (double)n * g_hosts.v_units[0];
    case C_ALLGATHERV: return (double)n * g_hosts.v_units[1]; /* what the others hold, in */
    case C_ALLTOALLV:
    case C_ALLTOALLW: return (double)n * g_hosts.v_units[2]; /* the busier direction */
    default: return (double)n * g_hosts.ppn * (N - 1);       /* allgather, gather, scatter */
    }
}

void usage(FILE *f)
{
    fprintf(
        f,
        "usage: topocoll_bench [--coll C] [--min SIZE]\n"
        "                      [--max SIZE | --sizes LIST] [--reps R] [--iters N] [--settle N] "
        "[--root R] "
        "[--pool SIZE]\n"
        "                      [--csv FILE] [--mech] [--link RATE] [--net] [--warm | --imb] [--nb "
        "| --persist]\n"
        "       topocoll_bench --overlap [--size 2M] [--reps R] [--csv FILE]\n"
        "       topocoll_bench --comm-churn [--coll C] [--size 8K] [--calls K] [--iters N] [--reps "
        "R]\n"
        "       topocoll_bench --help | --version\n"
        "\n"
        "OSU-style latency of topocoll's collectives against the native MPI in the same run\n"
        "(mpiexec -np N topocoll_bench ...).  SIZE: bytes, K/M/G suffixes.\n"
        "\n"
        "  --coll C        the collective (default bcast; the list below)\n"
        "  --sizes LIST    these sizes instead (comma-separated, ascending: 8,64K,1M)\n"
        "  --min, --max    message sizes, doubling (default 4K..16M; allgather, gather,\n"
        "                  scatter, alltoall: per-rank block; gatherv, scatterv,\n"
        "                  allgatherv: rank r's block is (r + 1) x SIZE; reductions and\n"
        "                  scans: the vector of MPI_DOUBLE, MPI_SUM)\n"
        "  --reps R        repetitions, the median is reported (default 11)\n"
        "  --iters N       calls per repetition (default: by size)\n"
        "  --settle N      N untimed topocoll calls before each size (cold regime): coll/xtune's\n"
        "                  measurement (up to 768 calls a size) out of the timed calls, as in a\n"
        "                  long-running application (default 0)\n"
        "  --root R        root of bcast and reduce (default 0)\n"
        "  --pool SIZE     rotating buffers per process (default 64M): the cold regime\n"
        "  --warm          one buffer reused, OSU's method: warm-up calls, each call timed\n"
        "                  alone with a barrier after it; avg/min/max across ranks\n"
        "  --imb           one buffer reused, IMB's method: calls back to back; t_min/t_max/t_avg\n"
        "  --nb            topocoll's blocking call (native columns) against its nonblocking call\n"
        "                  followed at once by the wait (topocoll columns)\n"
        "  --persist       bcast, reduce, allreduce: topocoll's blocking call (native columns)\n"
        "                  against its persistent request, started and waited for (topocoll\n"
        "                  columns; one request per buffer pair, made before it is timed)\n"
        "  --persist-native  bcast, reduce, allreduce: the native MPI's persistent request\n"
        "                  (native columns) against topocoll's, both started and waited for\n"
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
        "  -V, --version   the version\n"
        "\n"
        "collectives (--coll):");
    for (int c = 0; c < C_N; c++) fprintf(f, " %s", g_colls[c].name);
    fprintf(f, "\n");
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

/* --link's value: bits/s, decimal K/M/G suffixes, "bit" allowed after
 * them; else a message and -1. */
static int opt_link(const char *arg, double *out)
{
    if ((*out = tc_parse_rate(arg)) < 0) {
        fprintf(stderr, "topocoll_bench: --link %s: a rate in bits/s (1G, 100M, 1gbit)\n", arg);
        return -1;
    }
    return 0;
}

/* --sizes' value: a comma-separated list of ascending sizes (K/M/G), at
 * most BENCH_MAX_SIZES; else a message and -1. */
static int opt_sizes(const char *arg, opts_t *o)
{
    char buf[1024];
    if (strlen(arg) >= sizeof(buf)) {
        fprintf(stderr, "topocoll_bench: --sizes: list too long\n");
        return -1;
    }
    strcpy(buf, arg);
    o->nsizes = 0;
    char *save = NULL;
    if (buf[0] == ',' || strstr(buf, ",,") || buf[strlen(buf) - 1] == ',') {
        fprintf(stderr, "topocoll_bench: --sizes %s: an empty size\n", arg);
        return -1;
    }
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t v;
        if (opt_size("sizes", t, 1, &v) != 0) return -1;
        if (o->nsizes == BENCH_MAX_SIZES || (o->nsizes && v <= o->sizes[o->nsizes - 1])) {
            fprintf(stderr, "topocoll_bench: --sizes %s: at most %d sizes, ascending\n", arg,
                    BENCH_MAX_SIZES);
            return -1;
        }
        o->sizes[o->nsizes++] = v;
    }
    if (o->nsizes == 0) {
        fprintf(stderr, "topocoll_bench: --sizes %s: no size\n", arg);
        return -1;
    }
    return 0;
}

static const struct option long_opts[] = { { "coll", required_argument, 0, 'c' },
                                           { "min", required_argument, 0, 'm' },
                                           { "max", required_argument, 0, 'M' },
                                           { "reps", required_argument, 0, 'r' },
                                           { "iters", required_argument, 0, 'i' },
                                           { "settle", required_argument, 0, 'S' },
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
                                           { "persist", no_argument, 0, 'P' },
                                           { "persist-native", no_argument, 0, 'Q' },
                                           { "sizes", required_argument, 0, 'Z' },
                                           { 0, 0, 0, 0 } };

/* One option @ch (getopt_long's answer): 0, 1 (--help, --version: done)
 * or -1 (message printed). */
static int parse_one(int ch, char **argv, opts_t *o)
{
    switch (ch) {
    case 'h': usage(stdout); return 1;
    case 'V': printf("topocoll_bench (topocoll) %s\n", TOPOCOLL_VERSION); return 1;
    case 'c': o->coll = optarg; return 0;
    case 'm': return opt_size("min", optarg, 1, &o->min);
    case 'M': return opt_size("max", optarg, 1, &o->max);
    case 'p': return opt_size("pool", optarg, 1, &o->pool);
    case 'r': return opt_int("reps", optarg, 1, &o->reps);
    case 'i': return opt_int("iters", optarg, 0, &o->iters);
    case 'S': return opt_int("settle", optarg, 0, &o->settle);
    case 'R': return opt_int("root", optarg, 0, &o->root);
    case 'o': o->csv = optarg; return 0;
    case 'O': o->overlap = 1; return 0;
    case 'X': o->mech = 1; return 0;
    case 'N': o->net = 1; return 0;
    case 'C': o->churn = 1; return 0;
    case 'W': o->regime = R_OSU; return 0;
    case 'I': o->regime = R_IMB; return 0;
    case 'B': o->nb = 1; return 0;
    case 'P': o->nb = 2; return 0;
    case 'Q': o->nb = 3; return 0;
    case 'k': return opt_int("calls", optarg, 0, &o->churn_calls);
    case 'L': return opt_link(optarg, &o->link);
    case 'Z': return opt_sizes(optarg, o);
    case 's':
        if (opt_size("size", optarg, 8, &o->size) != 0) return -1;
        o->size_set = 1;
        return 0;
    default:
        fprintf(stderr, "topocoll_bench: %s: %s\n", argv[optind - 1],
                ch == ':' ? "missing value" : "unknown option");
        return -1;
    }
}

/* --root is checked against the size of MPI_COMM_WORLD later. */
int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){ .coll = "bcast",
                   .min = 4096,
                   .max = 16 << 20,
                   .pool = 64 << 20,
                   .reps = 11,
                   .size = 2 << 20,
                   .churn_calls = 1,
                   .regime = R_COLD };
    int ch;
    opterr = 0; /* our messages, on stderr */
    while ((ch = getopt_long(argc, argv, ":hV", long_opts, NULL)) != -1) {
        int rc = parse_one(ch, argv, o);
        if (rc != 0) return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "topocoll_bench: %s: unexpected argument\n", argv[optind]);
        return -1;
    }
    if (coll_index(o->coll) == C_N) {
        fprintf(stderr, "topocoll_bench: --coll %s: one of", o->coll);
        for (int c = 0; c < C_N; c++) fprintf(stderr, " %s", g_colls[c].name);
        fprintf(stderr, "\n");
        return -1;
    }
    if (o->nb >= 2 && coll_index(o->coll) != C_BCAST && coll_index(o->coll) != C_REDUCE &&
        coll_index(o->coll) != C_ALLREDUCE) {
        fprintf(stderr,
                "topocoll_bench: --persist, --persist-native: bcast, reduce or allreduce\n");
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
    if (o->nsizes == 0) /* --min doubling to --max */
        for (size_t v = o->min; v <= o->max && o->nsizes < BENCH_MAX_SIZES; v *= 2)
            o->sizes[o->nsizes++] = v;
    return 0;
}
