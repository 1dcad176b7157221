/*
 * apps/asp -- All-pairs shortest paths (Floyd-Warshall) as in the HierKNEM
 * paper's application study: the distance matrix is distributed by blocks
 * of rows; at iteration k the owner of row k broadcasts it and every
 * process relaxes its rows through k.  Reads a DIMACS shortest-path graph
 * (.gr), runs once with the native MPI_Bcast (PMPI_Bcast) and once with
 * topocoll_bcast, checks that both give the same checksum, and checks the
 * rows of a few sources against a serial Dijkstra.
 *
 *   mpirun -np 2 asp [--graph FILE.gr] [--sources K] [--mode both|native|topocoll]
 *   asp --help | --version        (no mpirun needed)
 *
 * Exit status 0 only if every check passed; 2 on a bad option or value
 * (message on stderr).
 */
#include "topocoll.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ASP_DEFAULT_GRAPH
#define ASP_DEFAULT_GRAPH "data/rome99.gr" /* from the repository's root */
#endif

#ifndef TOPOCOLL_VERSION
#error "TOPOCOLL_VERSION (the CMake project version) is defined by the build"
#endif

#define INF (INT32_MAX / 2)

typedef struct graph {
    int n;
    long m;
    int *off, *to, *w;
} graph_t;
typedef int (*bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);

static int native_bcast(void *b, int c, MPI_Datatype d, int r, MPI_Comm m)
{
    return PMPI_Bcast(b, c, d, r, m);
}

/* DIMACS .gr: "p sp N M", then "a U V W" (1-based).  CSR adjacency. */
static int read_gr(const char *path, graph_t *g)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long na = 0, cap = 0;
    int *au = NULL, *av = NULL, *aw = NULL;
    if (!f) return -1;
    g->n = 0;
    while (fgets(line, sizeof(line), f)) {
        int u, v, w;
        long m;
        if (line[0] == 'p' && sscanf(line, "p sp %d %ld", &g->n, &m) == 2) {
            cap = m;
            au = malloc((size_t)cap * sizeof(int));
            av = malloc((size_t)cap * sizeof(int));
            aw = malloc((size_t)cap * sizeof(int));
        } else if (line[0] == 'a' && sscanf(line, "a %d %d %d", &u, &v, &w) == 3) {
            if (na >= cap || u < 1 || v < 1 || u > g->n || v > g->n || w < 0) {
                fclose(f);
                return -1;
            }
            au[na] = u - 1;
            av[na] = v - 1;
            aw[na] = w;
            na++;
        }
    }
    fclose(f);
    if (g->n <= 0 || !au) return -1;
    g->m = na;
    g->off = calloc((size_t)g->n + 1, sizeof(int));
    g->to = malloc((size_t)na * sizeof(int));
    g->w = malloc((size_t)na * sizeof(int));
    for (long i = 0; i < na; i++) g->off[au[i] + 1]++;
    for (int i = 0; i < g->n; i++) g->off[i + 1] += g->off[i];
    int *pos = malloc((size_t)g->n * sizeof(int));
    memcpy(pos, g->off, (size_t)g->n * sizeof(int));
    for (long i = 0; i < na; i++) {
        g->to[pos[au[i]]] = av[i];
        g->w[pos[au[i]]++] = aw[i];
    }
    free(pos);
    free(au);
    free(av);
    free(aw);
    return 0;
}

/* Serial Dijkstra (binary heap) from @src into @dist. */
static void dijkstra(const graph_t *g, int src, int *dist)
{
    /* lazy deletion: at most one entry per arc plus the source */
    int *heap = malloc(sizeof(int) * (size_t)(g->m + 2));
    int *hk = malloc(sizeof(int) * (size_t)(g->m + 2)), hn = 0;
    for (int i = 0; i < g->n; i++) dist[i] = INF;
    dist[src] = 0;
    /* lazy-deletion heap of (dist, node) pairs */
    heap[hn] = src;
    hk[hn++] = 0;
    while (hn) {
        int u = heap[0], du = hk[0];
        hn--;
        heap[0] = heap[hn];
        hk[0] = hk[hn];
        for (int i = 0;;) { /* sift down */
            int l = 2 * i + 1, r = l + 1, s = i;
            if (l < hn && hk[l] < hk[s]) s = l;
            if (r < hn && hk[r] < hk[s]) s = r;
            if (s == i) break;
            int t = heap[i];
            heap[i] = heap[s];
            heap[s] = t;
            t = hk[i];
            hk[i] = hk[s];
            hk[s] = t;
            i = s;
        }
        if (du > dist[u]) continue;
        for (int e = g->off[u]; e < g->off[u + 1]; e++) {
            int v = g->to[e], nd = du + g->w[e];
            if (nd < dist[v]) {
                dist[v] = nd;
                int i = hn++;
                heap[i] = v;
                hk[i] = nd;
                while (i > 0 && hk[(i - 1) / 2] > hk[i]) { /* sift up */
                    int p = (i - 1) / 2, t = heap[i];
                    heap[i] = heap[p];
                    heap[p] = t;
                    t = hk[i];
                    hk[i] = hk[p];
                    hk[p] = t;
                    i = p;
                }
            }
        }
    }
    free(heap);
    free(hk);
}

/* d[j] = min(d[j], dik + row[j]): the hot loop, cloned for AVX2/AVX-512. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
relax(int *restrict d, const int *restrict row, int dik, int n)
{
    for (int j = 0; j < n; j++) {
        int v = dik + row[j];
        d[j] = v < d[j] ? v : d[j];
    }
}

/* Rows [lo, hi) of rank r: balanced blocks. */
static int block_lo(int r, int n, int size) { return (int)((long long)r * n / size); }

static double run(const graph_t *g, int *d, int lo, int hi, bcast_fn bc, MPI_Comm comm)
{
    int n = g->n, rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int i = lo; i < hi; i++) {
        int *row = d + (size_t)(i - lo) * (size_t)n;
        for (int j = 0; j < n; j++) row[j] = INF;
        row[i] = 0;
        for (int e = g->off[i]; e < g->off[i + 1]; e++)
            if (g->w[e] < row[g->to[e]]) row[g->to[e]] = g->w[e];
    }
    int *rowk = malloc((size_t)n * sizeof(int));
    PMPI_Barrier(comm);
    double t0 = MPI_Wtime();
    int owner = 0;
    for (int k = 0; k < n; k++) {
        while (owner + 1 < size && k >= block_lo(owner + 1, n, size)) owner++;
        if (owner == rank) memcpy(rowk, d + (size_t)(k - lo) * (size_t)n, (size_t)n * sizeof(int));
        bc(rowk, n, MPI_INT, owner, comm);
        for (int i = lo; i < hi; i++) {
            int *row = d + (size_t)(i - lo) * (size_t)n;
            if (row[k] < INF) relax(row, rowk, row[k], n);
        }
    }
    PMPI_Barrier(comm);
    double t = MPI_Wtime() - t0;
    free(rowk);
    return t;
}

/* Checksum: sum of finite distances and count of unreachable pairs. */
static void checksum(const int *d, size_t cells, MPI_Comm comm, unsigned long long out[2])
{
    unsigned long long loc[2] = { 0, 0 };
    for (size_t i = 0; i < cells; i++) {
        if (d[i] >= INF)
            loc[1]++;
        else
            loc[0] += (unsigned long long)d[i];
    }
    PMPI_Allreduce(loc, out, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: mpiexec -np N asp [--graph FILE.gr] [--sources K] [--mode both|native|topocoll]\n"
        "       asp --help | --version\n"
        "\n"
        "All-pairs shortest paths (Floyd-Warshall, one row broadcast per iteration) on a DIMACS\n"
        "graph, with the native MPI_Bcast and with topocoll's; checks both against each other\n"
        "and K source rows against a serial Dijkstra.  Exit status 0 only if every check passed.\n"
        "\n"
        "  --graph FILE.gr  DIMACS shortest-path graph (default %s)\n"
        "  --sources K      source rows checked against Dijkstra (default 5)\n"
        "  --mode M         both (default), native or topocoll\n"
        "  -h, --help       this help\n"
        "  -V, --version    the version\n",
        ASP_DEFAULT_GRAPH);
}

/* Before MPI_Init.  0: run; 1: done (exit 0); -1: bad usage (message on
 * stderr, exit 2). */
static int parse(int argc, char **argv, const char **path, int *nsrc, const char **mode)
{
    static const struct option lo[] = { { "graph", 1, 0, 'g' },   { "sources", 1, 0, 's' },
                                        { "mode", 1, 0, 'm' },    { "help", 0, 0, 'h' },
                                        { "version", 0, 0, 'V' }, { 0, 0, 0, 0 } };
    char *end;
    long v;
    opterr = 0; /* our messages, on stderr */
    for (int ch; (ch = getopt_long(argc, argv, ":hV", lo, NULL)) != -1;) {
        switch (ch) {
        case 'h': usage(stdout); return 1;
        case 'V': printf("asp (topocoll) %s\n", TOPOCOLL_VERSION); return 1;
        case 'g': *path = optarg; break;
        case 's':
            v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 1000000) {
                fprintf(stderr, "asp: --sources %s: not an integer in [0, 1000000]\n", optarg);
                return -1;
            }
            *nsrc = (int)v;
            break;
        case 'm':
            if (strcmp(optarg, "both") != 0 && strcmp(optarg, "native") != 0 &&
                strcmp(optarg, "topocoll") != 0) {
                fprintf(stderr, "asp: --mode %s: both, native or topocoll\n", optarg);
                return -1;
            }
            *mode = optarg;
            break;
        default:
            fprintf(stderr, "asp: %s: %s\n", argv[optind - 1],
                    ch == ':' ? "missing value" : "unknown option");
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "asp: %s: unexpected argument\n", argv[optind]);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = ASP_DEFAULT_GRAPH, *mode = "both";
    int nsrc = 5, rank, size, status = 0;
    int pr = parse(argc, argv, &path, &nsrc, &mode);
    if (pr > 0) return 0;
    if (pr < 0) {
        fprintf(stderr, "Try 'asp --help'.\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    graph_t g;
    if (read_gr(path, &g) != 0) {
        if (!rank) fprintf(stderr, "asp: cannot read DIMACS graph %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = g.n, lo_row = block_lo(rank, n, size), hi_row = block_lo(rank + 1, n, size);
    int *d = malloc((size_t)(hi_row - lo_row) * (size_t)n * sizeof(int) + 1);
    if (!rank)
        printf(
            "ASP (Floyd-Warshall, row broadcast per iteration) on %s: %d nodes, %ld arcs, np=%d\n",
            path, n, g.m, size);

    topocoll_comm_attach(MPI_COMM_WORLD);
    struct {
        const char *name;
        bcast_fn fn;
    } impl[2] = { { "native", native_bcast }, { "topocoll", topocoll_bcast } };
    unsigned long long sum[2][2] = { { 0, 0 }, { 0, 0 } };
    double t[2] = { 0, 0 };
    int ran[2] = { strcmp(mode, "topocoll") != 0, strcmp(mode, "native") != 0 };
    for (int m = 0; m < 2; m++) {
        if (!ran[m]) continue;
        t[m] = run(&g, d, lo_row, hi_row, impl[m].fn, MPI_COMM_WORLD);
        checksum(d, (size_t)(hi_row - lo_row) * (size_t)n, MPI_COMM_WORLD, sum[m]);
        if (!rank)
            printf("  %-8s bcast: %8.3f s   checksum %llu (+%llu unreachable pairs)\n",
                   impl[m].name, t[m], sum[m][0], sum[m][1]);
    }
    /* The last run's matrix is still in d: check source rows against Dijkstra. */
    int bad = 0, checked = 0, *ref = malloc((size_t)n * sizeof(int));
    for (int s = 0; s < nsrc; s++) {
        int src = (int)((long long)s * (n - 1) / (nsrc > 1 ? nsrc - 1 : 1));
        if (src < lo_row || src >= hi_row) continue;
        dijkstra(&g, src, ref);
        checked++;
        if (memcmp(ref, d + (size_t)(src - lo_row) * (size_t)n, (size_t)n * sizeof(int)) != 0)
            bad++;
    }
    int tot[2] = { bad, checked }, all[2];
    PMPI_Allreduce(tot, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all[0]) status = 1;
    if (ran[0] && ran[1] && (sum[0][0] != sum[1][0] || sum[0][1] != sum[1][1])) status = 1;
    if (!rank) {
        printf("  Dijkstra check of %d source rows: %s\n", all[1],
               all[0] ? "MISMATCH" : "identical");
        if (ran[0] && ran[1])
            printf("  checksums %s; speed-up native/topocoll = %.2fx (np=%d, %ld cores on this "
                   "host)\n",
                   status ? "DIFFER" : "identical", t[0] / t[1], size,
                   sysconf(_SC_NPROCESSORS_ONLN));
        printf("ASP %s\n", status ? "FAILED" : "OK");
    }
    free(ref);
    free(d);
    MPI_Finalize();
    return status;
}
