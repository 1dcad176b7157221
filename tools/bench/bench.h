/*
 * tools/bench/bench.h -- topocoll_bench's shared declarations (what it
 * measures and how: main.c's comment).  Each file owns one part:
 *
 *  options.c  the command line: opts_t, parse() and usage(); and the table
 *             of the collectives (the registry's: names, shapes, buffer
 *             bytes, the bytes each process must move, the link bound's).
 *  timing.c   calling a collective (native or topocoll, blocking or its
 *             nonblocking call and wait), validating topocoll's result
 *             against the native one, and the timing methods: the cold
 *             rotating pool, the warm regimes (--warm: OSU's, --imb: IMB's),
 *             the barrier, the memcpy reference.
 *  mech.c     --mech: the Allgather's copy-mechanism floors (mapped, CMA).
 *  overlap.c  the nonblocking overlap (--overlap, IMB-NBC's method) and
 *             the communicator churn (--comm-churn).
 *  output.c   everything the tables and the CSV show: headers, rows, the
 *             CSV's header lines.  Nothing else writes the tables or the
 *             CSV (--help and --version: options.c; the error messages go
 *             to stderr where they arise).
 *  main.c     MPI's start and end, the hosts, the choice of the method.
 *
 * The public API (include/topocoll.h) and PMPI, with three exceptions:
 *  - the collectives' list is the library's registry, base/colls.def (an
 *    X-macro list: names, argument shapes);
 *  - options.c: base/config.h's tc_parse_size, so that sizes take the
 *    same K/M/G syntax as the library's TOPOCOLL_* settings (one parser);
 *  - overlap.c: --overlap's header and CSV show the progress configuration
 *    the run used (TOPOCOLL_COMM_CORES, _PROGRESS_PLACEMENT, _NBC_ALG:
 *    base/config.h's tc_config_get) and the split tree's S, the one the
 *    operations use (coll/tree.h's tc_tree_split on MPI_COMM_WORLD's
 *    context) and the model's (coll/model.h's tc_st_best_s); the public API
 *    has none of them.
 * Nothing else includes an internal header.
 */
#ifndef TOPOCOLL_BENCH_H
#define TOPOCOLL_BENCH_H

#include "topocoll.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- options.c: the command line and the collectives --------------------------- */

#define BENCH_MAX_SIZES 64

typedef struct opts {
    const char *coll;
    size_t min, max, pool;
    size_t sizes[BENCH_MAX_SIZES]; /* the sizes measured, ascending: --sizes, or --min doubling
                                      to --max */
    int nsizes;
    int reps, iters, root;
    int settle; /* --settle: untimed topocoll calls before each size (the cold regime) */
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
    int nb;          /* --nb (1): topocoll's blocking call against its nonblocking one;
                        --persist (2): against its persistent request */
} opts_t;

/* The regimes: a rotating pool larger than the last-level cache (every
 * call starts cold), or one buffer reused as OSU (barrier between calls,
 * each call timed alone) and IMB (calls back to back) measure. */
enum { R_COLD, R_OSU, R_IMB };

/* The collectives: the registry's (base/colls.def), in the public
 * topocoll_coll_t order; a new line there is a new --coll here. */
enum {
#define TC_COLL(ID, Name, lower, SHAPE, ...) C_##ID = TOPOCOLL_COLL_##ID,
#include "base/colls.def"
#undef TC_COLL
    C_N = TOPOCOLL_COLL_COUNT
};
/* Their argument shapes (the registry's SHAPE column, pmpi/shapes.h):
 * a buffer and a root, none, a rooted reduction, a reduction to all (and
 * the scans), a block exchange to all, a rooted block exchange, the
 * irregular exchanges (rank r's block: (r + 1) x the size, vtotal;
 * Alltoallv, Alltoallw (MPI_BYTE for every rank): rank r sends (r + 1) x
 * the size to every rank), the
 * reduce-scatter with a count per rank (rank r's block: (r + 1) x u of
 * the vector's doubles). */
enum {
    SH_BCAST,
    SH_BARRIER,
    SH_REDUCE,
    SH_ALLRED,
    SH_ALLG,
    SH_ROOTG,
    SH_GATHERV,
    SH_SCATTERV,
    SH_ALLGV,
    SH_ALLTOALLV,
    SH_ALLTOALLW,
    SH_REDSCAT
};
/* Collective @coll's --coll name ("bcast"; NULL out of range), shape. */
const char *coll_name(int coll);
int coll_shape(int coll);
/* 1 if @coll reduces MPI_DOUBLEs (its sizes: the vector's bytes); if its
 * size is a block per rank (Allgather, Gather, ...); if it has a root. */
int coll_reduces(int coll);
/* 1 if @coll is an irregular exchange; the bytes of all its blocks for
 * a size of @b among @n ranks (rank r's block: (r + 1) x @b). */
int coll_irregular(int coll);
size_t vtotal(size_t b, int n);
int coll_blocks(int coll);
int coll_rooted(int coll);

/* Before MPI_Init.  0: run; 1: done (--help, --version: exit 0); -1: bad
 * usage (message on stderr, exit 2). */
int parse(int argc, char **argv, opts_t *o);
void usage(FILE *f);
/* @name's collective (C_*: "barrier" is C_BARRIER), C_N if none. */
int coll_index(const char *name);
/* A call's send and receive buffer bytes for a message of @bytes (the
 * block per rank for the gathers, scatter and alltoall) among @size. */
void buf_bytes(int coll, size_t bytes, int size, size_t *sb, size_t *rb);
/* Bytes each process must at least move (main.c's comment). */
double must_move(int coll, size_t n, int p);
/* Bytes the busiest host's link must carry in one direction (g_hosts). */
double link_bytes(int coll, size_t n);

/* ---- main.c: the run ------------------------------------------------------------ */

/* The hosts (--link, --net): this process's host communicator, the number
 * of hosts, the most processes on one, and whether we read the counters. */
typedef struct hosts {
    MPI_Comm host;
    int nhosts, ppn, counter;
    double rs_least[2]; /* the least share of a reduce-scatter's vector that one host's
                           ranks hold: [0] blocks alike, [1] rank r's (r + 1) units */
    double v_units[3];  /* the irregular exchanges' (rank r's block: r + 1 units) busiest
                           link, in units: [0] Gatherv, Scatterv (root 0), [1]
                           Allgatherv, [2] Alltoallv */
} hosts_t;
extern hosts_t g_hosts;
/* The world's size (set once in main). */
extern int g_size;
/* --nb: the "native" side is topocoll's blocking call, the "topocoll" side
 * its nonblocking one followed at once by the wait. */
extern int g_nb_vs_blocking;

/* What every method gets: the options, the collective (C_*), this
 * process, the CSV file (rank 0's, or NULL), the host communicator and
 * MPI_COMM_WORLD's description (NULL for --comm-churn). */
typedef struct bench {
    const opts_t *o;
    int coll, rank, size;
    FILE *csv;
    MPI_Comm host;
    const topocoll_comm_info_t *info;
} bench_t;

/* ---- timing.c, mech.c, overlap.c: the methods; nonzero: a wrong result --------- */

int bench_cold(const bench_t *b);
int bench_warm(const bench_t *b);
void bench_barrier(const bench_t *b);
int bench_overlap(const bench_t *b);
void bench_churn(const bench_t *b);

/* One call of @coll on MPI_COMM_WORLD or @w (run_on), native or topocoll. */
int run(int coll, int native, char *sbuf, char *rbuf, size_t bytes, int root);
int run_on(MPI_Comm w, int coll, int native, char *sbuf, char *rbuf, size_t bytes, int root);
/* The median of @v[0..n) (sorts it). */
double median(double *v, int n);

/* --mech (mech.c) */
enum { M_MAPPED, M_CMA };
typedef struct mech {
    MPI_Win win;    /* the mapped send pool */
    char **mapped;  /* [size * npool]: peer r's mapped buffer i at [r * npool + i] */
    uint64_t *addr; /* the same for the malloc'd pools (CMA) */
    int *pid;       /* [size] */
    int npool, cma_ok;
} mech_t;
int mech_init(mech_t *x, char **spool, int npool, size_t bytes, int rank, int size);
double time_mech(const mech_t *x, int m, char **rpool, size_t bytes, int iters, int rank, int size);
void mech_fini(mech_t *x);

/* ---- output.c: the tables and the CSV ------------------------------------------- */

/* One size's figures, as the table and the CSV show them (us, GB/s). */
typedef struct row {
    size_t bytes;              /* the memcpy reference's copy: the vector, or one block */
    int iters, bad;            /* bad: validation failed */
    double nat[3], top[3];     /* native, topocoll: average (cold: median), minimum, maximum */
    double ref, bw, refa, bwa; /* memcpy reference: one core, all of the host */
    double mapped, cma;        /* --mech; -1: not measured */
    double link_us, net_nat, net_top, lb; /* --link, --net */
} row_t;

/* The progress configuration --overlap shows (overlap.c). */
typedef struct progress {
    int comm_cores, placement, split_tree;
    int h, s_used, model_s;
} progress_t;

enum { CSV_COLD, CSV_WARM, CSV_OVERLAP, CSV_CHURN };
void out_csv_header(FILE *csv, int kind);
void out_cold_header(const bench_t *b);
void out_cold_row(const bench_t *b, const row_t *r);
void out_warm_header(const bench_t *b);
void out_warm_row(const bench_t *b, const row_t *r);
void out_nb_note(int mode); /* 1: --nb, 2: --persist, 3: --persist-native */
void out_barrier_header(const bench_t *b);
void out_barrier_row(const bench_t *b, double mn, double mt);
void out_overlap_header(const bench_t *b, size_t bytes, const progress_t *p);
void out_overlap_row(const bench_t *b, const char *name, int native, size_t bytes,
                     const progress_t *p, const double t[4]);
void out_churn(const bench_t *b, size_t bytes, int iters, double (*tn)[5], double (*tt)[5]);

#endif
