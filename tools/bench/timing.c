/*
 * tools/bench/timing.c -- topocoll_bench's calls and timing methods
 * (bench.h): the cold rotating pool, the warm regimes (OSU's, IMB's), the
 * barrier, the memcpy reference, and the validation before each size.
 */
#include "bench.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Each collective's calls by argument shape (the registry's SHAPE):
 * topocoll's blocking call, the native one (PMPI), topocoll's
 * nonblocking one. */
typedef int (*f_bcast)(void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*f_ibcast)(void *, int, MPI_Datatype, int, MPI_Comm, MPI_Request *);
typedef int (*f_barrier)(MPI_Comm);
typedef int (*f_ibarrier)(MPI_Comm, MPI_Request *);
typedef int (*f_reduce)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*f_ireduce)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm,
                         MPI_Request *);
typedef int (*f_allred)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*f_iallred)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
typedef int (*f_allg)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
typedef int (*f_iallg)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                       MPI_Request *);
typedef int (*f_rootg)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*f_irootg)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm,
                        MPI_Request *);
typedef int (*f_gatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                         MPI_Datatype, int, MPI_Comm);
typedef int (*f_igatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                          MPI_Datatype, int, MPI_Comm, MPI_Request *);
typedef int (*f_scatterv)(const void *, const int *, const int *, MPI_Datatype, void *, int,
                          MPI_Datatype, int, MPI_Comm);
typedef int (*f_iscatterv)(const void *, const int *, const int *, MPI_Datatype, void *, int,
                           MPI_Datatype, int, MPI_Comm, MPI_Request *);
typedef int (*f_allgv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                       MPI_Datatype, MPI_Comm);
typedef int (*f_iallgv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                        MPI_Datatype, MPI_Comm, MPI_Request *);
typedef int (*f_alltoallv)(const void *, const int *, const int *, MPI_Datatype, void *,
                           const int *, const int *, MPI_Datatype, MPI_Comm);
typedef int (*f_ialltoallv)(const void *, const int *, const int *, MPI_Datatype, void *,
                            const int *, const int *, MPI_Datatype, MPI_Comm, MPI_Request *);
typedef int (*f_alltoallw)(const void *, const int *, const int *, const MPI_Datatype *, void *,
                           const int *, const int *, const MPI_Datatype *, MPI_Comm);
typedef int (*f_ialltoallw)(const void *, const int *, const int *, const MPI_Datatype *, void *,
                            const int *, const int *, const MPI_Datatype *, MPI_Comm,
                            MPI_Request *);
typedef int (*f_redscat)(const void *, void *, const int *, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*f_iredscat)(const void *, void *, const int *, MPI_Datatype, MPI_Op, MPI_Comm,
                          MPI_Request *);
typedef union calls {
    struct {
        f_bcast topo, native;
        f_ibcast nb;
    } BCAST;
    struct {
        f_barrier topo, native;
        f_ibarrier nb;
    } BARRIER;
    struct {
        f_reduce topo, native;
        f_ireduce nb;
    } REDUCE;
    struct {
        f_allred topo, native;
        f_iallred nb;
    } ALLRED;
    struct {
        f_allg topo, native;
        f_iallg nb;
    } ALLG;
    struct {
        f_rootg topo, native;
        f_irootg nb;
    } ROOTG;
    struct {
        f_gatherv topo, native;
        f_igatherv nb;
    } GATHERV;
    struct {
        f_scatterv topo, native;
        f_iscatterv nb;
    } SCATTERV;
    struct {
        f_allgv topo, native;
        f_iallgv nb;
    } ALLGV;
    struct {
        f_alltoallv topo, native;
        f_ialltoallv nb;
    } ALLTOALLV;
    struct {
        f_alltoallw topo, native;
        f_ialltoallw nb;
    } ALLTOALLW;
    struct {
        f_redscat topo, native;
        f_iredscat nb;
    } REDSCAT;
} calls_t;

/* Counts and displacements, kept between calls: the irregular
 * exchanges' blocks of (r + 1) x @b bytes for rank r on @n ranks, back to
 * back; with @me >= 0, Alltoallv's send side instead: (@me + 1) x @b to
 * each rank.  @slot 0 or 1: two sets at a time. */
static void vcounts(size_t b, int me, int n, int slot, int **counts, int **displs)
{
    static int *c[2], *d[2], cn[2];
    if (cn[slot] < n) {
        free(c[slot]);
        free(d[slot]);
        c[slot] = malloc(sizeof(int) * (size_t)n);
        d[slot] = malloc(sizeof(int) * (size_t)n);
        cn[slot] = n;
    }
    for (int r = 0, at = 0; r < n; r++) {
        c[slot][r] = (int)(b * (size_t)((me >= 0 ? me : r) + 1));
        d[slot][r] = at;
        at += c[slot][r];
    }
    *counts = c[slot];
    *displs = d[slot];
}

/* @n MPI_BYTEs: Alltoallw's datatypes (kept between calls). */
static const MPI_Datatype *bytes_types(int n)
{
    static MPI_Datatype *t;
    static int room;
    if (n > room) {
        free(t);
        t = malloc(sizeof(MPI_Datatype) * (size_t)n);
        room = t ? n : 0;
        for (int r = 0; r < room; r++) t[r] = MPI_BYTE;
    }
    return t;
}
static int np_of(MPI_Comm w)
{
    int n = 1;
    PMPI_Comm_size(w, &n);
    return n;
}

static const calls_t g_calls[C_N] = {
#define TC_COLL(ID, Name, lower, SHAPE, ...) \
    [C_##ID] = { .SHAPE = { topocoll_##lower, PMPI_##Name, topocoll_i##lower } },
#include "base/colls.def"
#undef TC_COLL
};

/* The counts of a call of @coll of @bytes on @w: the irregular
 * exchanges' (*@vc, *@vd; Alltoallv's send side *@sc, *@sd; *@me our
 * rank), the reduce-scatters' (the vector's *@n doubles: a block of
 * *@n / size each, or rank r's (r + 1) x u in *@vc; *@n becomes the
 * block form's count). */
static void counts(MPI_Comm w, int coll, size_t bytes, int *n, int *me, int **vc, int **vd,
                   int **sc, int **sd)
{
    int np = 1;
    if (coll_irregular(coll)) {
        PMPI_Comm_rank(w, me);
        PMPI_Comm_size(w, &np);
        vcounts(bytes, -1, np, 0, vc, vd);
    }
    if (coll == C_ALLTOALLV || coll == C_ALLTOALLW) vcounts(bytes, *me, np, 1, sc, sd);
    if (coll == C_REDUCE_SCATTER_BLOCK || coll == C_REDUCE_SCATTER) {
        PMPI_Comm_size(w, &np);
        if (coll == C_REDUCE_SCATTER) vcounts((size_t)*n / vtotal(1, np), -1, np, 0, vc, vd);
        *n /= np;
    }
}

/* One call of collective @coll on @w: topocoll's blocking call, the
 * native one (@native), or topocoll's nonblocking one and its wait
 * (@nb).  @bytes is the message size (the vector's bytes of MPI_DOUBLE
 * for the reductions and scans, bytes of MPI_BYTE otherwise; a block
 * for the block exchanges). */
static int call(MPI_Comm w, int coll, int native, int nb, char *sbuf, char *rbuf, size_t bytes,
                int root)
{
    const calls_t *f = &g_calls[coll];
    int n = (int)(bytes / sizeof(double)), b = (int)bytes;
    const MPI_Datatype D = MPI_DOUBLE, B = MPI_BYTE;
    MPI_Request r;
    int rc = MPI_SUCCESS, me = 0, *vc = NULL, *vd = NULL, *sc = NULL, *sd = NULL;
    counts(w, coll, bytes, &n, &me, &vc, &vd, &sc, &sd);
    switch (coll_shape(coll)) {
    case SH_BCAST:
        if (!nb) return (native ? f->BCAST.native : f->BCAST.topo)(sbuf, b, B, root, w);
        rc = f->BCAST.nb(sbuf, b, B, root, w, &r);
        break;
    case SH_BARRIER:
        if (!nb) return (native ? f->BARRIER.native : f->BARRIER.topo)(w);
        rc = f->BARRIER.nb(w, &r);
        break;
    case SH_REDUCE:
        if (!nb)
            return (native ? f->REDUCE.native : f->REDUCE.topo)(sbuf, rbuf, n, D, MPI_SUM, root, w);
        rc = f->REDUCE.nb(sbuf, rbuf, n, D, MPI_SUM, root, w, &r);
        break;
    case SH_ALLRED:
        if (!nb) return (native ? f->ALLRED.native : f->ALLRED.topo)(sbuf, rbuf, n, D, MPI_SUM, w);
        rc = f->ALLRED.nb(sbuf, rbuf, n, D, MPI_SUM, w, &r);
        break;
    case SH_ALLG:
        if (!nb) return (native ? f->ALLG.native : f->ALLG.topo)(sbuf, b, B, rbuf, b, B, w);
        rc = f->ALLG.nb(sbuf, b, B, rbuf, b, B, w, &r);
        break;
    case SH_ROOTG:
        if (!nb) return (native ? f->ROOTG.native : f->ROOTG.topo)(sbuf, b, B, rbuf, b, B, root, w);
        rc = f->ROOTG.nb(sbuf, b, B, rbuf, b, B, root, w, &r);
        break;
    case SH_GATHERV:
        if (!nb)
            return (native ? f->GATHERV.native : f->GATHERV.topo)(sbuf, vc[me], B, rbuf, vc, vd, B,
                                                                  root, w);
        rc = f->GATHERV.nb(sbuf, vc[me], B, rbuf, vc, vd, B, root, w, &r);
        break;
    case SH_SCATTERV:
        if (!nb)
            return (native ? f->SCATTERV.native : f->SCATTERV.topo)(sbuf, vc, vd, B, rbuf, vc[me],
                                                                    B, root, w);
        rc = f->SCATTERV.nb(sbuf, vc, vd, B, rbuf, vc[me], B, root, w, &r);
        break;
    case SH_ALLGV:
        if (!nb)
            return (native ? f->ALLGV.native : f->ALLGV.topo)(sbuf, vc[me], B, rbuf, vc, vd, B, w);
        rc = f->ALLGV.nb(sbuf, vc[me], B, rbuf, vc, vd, B, w, &r);
        break;
    case SH_ALLTOALLW: {
        const MPI_Datatype *T = bytes_types(np_of(w));
        if (!nb)
            return (native ? f->ALLTOALLW.native : f->ALLTOALLW.topo)(sbuf, sc, sd, T, rbuf, vc, vd,
                                                                      T, w);
        rc = f->ALLTOALLW.nb(sbuf, sc, sd, T, rbuf, vc, vd, T, w, &r);
        break;
    }
    case SH_REDSCAT:
        if (!nb)
            return (native ? f->REDSCAT.native : f->REDSCAT.topo)(sbuf, rbuf, vc, D, MPI_SUM, w);
        rc = f->REDSCAT.nb(sbuf, rbuf, vc, D, MPI_SUM, w, &r);
        break;
    default:
        if (!nb)
            return (native ? f->ALLTOALLV.native : f->ALLTOALLV.topo)(sbuf, sc, sd, B, rbuf, vc, vd,
                                                                      B, w);
        rc = f->ALLTOALLV.nb(sbuf, sc, sd, B, rbuf, vc, vd, B, w, &r);
        break;
    }
    return rc != MPI_SUCCESS ? rc : topocoll_wait(&r, MPI_STATUS_IGNORE);
}

/* --persist: the persistent requests made so far, one per buffer pair,
 * size and root (the cold regime's pool rotates buffers: a request each),
 * kept until the run ends (the process exits).  Found through a hash of
 * the buffers (open addressing), as an application keeps its request
 * beside its buffers: the lookup is O(1), not a search charged to the
 * persistent column. */
enum { PERSIST_MAX = 8192, PERSIST_SLOTS = 2 * PERSIST_MAX /* a power of 2 */ };
static struct preq {
    int coll, root, nat; /* nat: the native MPI's request (--persist-native) */
    MPI_Comm w;
    const char *sbuf;
    char *rbuf;
    size_t bytes;
    MPI_Request r;
} g_preq[PERSIST_MAX];
static int g_npreq;
static int g_pslot[PERSIST_SLOTS]; /* 1 + the index in g_preq; 0: empty */

static unsigned preq_hash(const char *sbuf, const char *rbuf, size_t bytes)
{
    uint64_t k = (uint64_t)(uintptr_t)sbuf * 0x9e3779b97f4a7c15ull;
    k ^= (uint64_t)(uintptr_t)rbuf + (k >> 31);
    k = (k ^ bytes) * 0xbf58476d1ce4e5b9ull;
    return (unsigned)(k >> 40) & (PERSIST_SLOTS - 1);
}

/* The native MPI's persistent collectives (MPI 4: MPI_<Coll>_init; Open
 * MPI 4.1: MPIX_<Coll>_init in mpi-ext.h), without topocoll (PMPI). */
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define NATIVE_INIT(Name, ...) PMPIX_##Name##_init(__VA_ARGS__)
#elif MPI_VERSION >= 4
#define NATIVE_INIT(Name, ...) PMPI_##Name##_init(__VA_ARGS__)
#else
#define NATIVE_INIT(Name, ...) MPI_ERR_UNSUPPORTED_OPERATION
#endif

/* The persistent request of @coll (Bcast, Reduce, Allreduce) on these
 * arguments, made at its first use (topocoll_<coll>_init; @nat: the
 * native MPI's). */
static int persistent(MPI_Comm w, int coll, int nat, char *sbuf, char *rbuf, size_t bytes, int root,
                      MPI_Request **r)
{
    unsigned h = preq_hash(sbuf, rbuf, bytes);
    for (; g_pslot[h]; h = (h + 1) & (PERSIST_SLOTS - 1)) {
        struct preq *q = &g_preq[g_pslot[h] - 1];
        if (q->coll == coll && q->nat == nat && q->w == w && q->sbuf == sbuf && q->rbuf == rbuf &&
            q->bytes == bytes && q->root == root) {
            *r = &q->r;
            return MPI_SUCCESS;
        }
    }
    if (g_npreq == PERSIST_MAX) return MPI_ERR_NO_MEM;
    struct preq *q = &g_preq[g_npreq];
    int n = (int)(bytes / sizeof(double)), rc;
    if (coll == C_BCAST)
        rc = nat ? NATIVE_INIT(Bcast, sbuf, (int)bytes, MPI_BYTE, root, w, MPI_INFO_NULL, &q->r)
                 : topocoll_bcast_init(sbuf, (int)bytes, MPI_BYTE, root, w, MPI_INFO_NULL, &q->r);
    else if (coll == C_REDUCE)
        rc = nat ? NATIVE_INIT(Reduce, sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, root, w, MPI_INFO_NULL,
                               &q->r)
                 : topocoll_reduce_init(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, root, w, MPI_INFO_NULL,
                                        &q->r);
    else if (coll == C_ALLREDUCE)
        rc = nat ? NATIVE_INIT(Allreduce, sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, w, MPI_INFO_NULL,
                               &q->r)
                 : topocoll_allreduce_init(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, w, MPI_INFO_NULL,
                                           &q->r);
    else
        return MPI_ERR_OTHER; /* (options.c allows these three only) */
    if (rc != MPI_SUCCESS) return rc;
    *q = (struct preq){ coll, root, nat, w, sbuf, rbuf, bytes, q->r };
    g_pslot[h] = ++g_npreq;
    *r = &q->r;
    return MPI_SUCCESS;
}

/* One call of collective @coll, native (PMPI) or topocoll (--nb: the
 * blocking call against the nonblocking one; --persist: against its
 * persistent request, started and waited for). */
int run_on(MPI_Comm w, int coll, int native, char *sbuf, char *rbuf, size_t bytes, int root)
{
    if ((g_nb_vs_blocking == 2 && !native) || g_nb_vs_blocking == 3) {
        MPI_Request *r = NULL;
        const int nat = g_nb_vs_blocking == 3 && native;
        int rc = persistent(w, coll, nat, sbuf, rbuf, bytes, root, &r);
        if (rc != MPI_SUCCESS) { /* (a call that did nothing would be timed) */
            fprintf(stderr, "topocoll_bench: no persistent request (%d requests made)\n", g_npreq);
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
        rc = nat ? PMPI_Start(r) : topocoll_start(r);
        if (rc != MPI_SUCCESS) return rc;
        return nat ? PMPI_Wait(r, MPI_STATUS_IGNORE) : topocoll_wait(r, MPI_STATUS_IGNORE);
    }
    if (g_nb_vs_blocking) return call(w, coll, 0, !native, sbuf, rbuf, bytes, root);
    return call(w, coll, native, 0, sbuf, rbuf, bytes, root);
}

/* One call on MPI_COMM_WORLD; @bytes: the send buffer's (buf_bytes), of
 * which Scatter and Alltoall send a block per rank. */
int run(int coll, int native, char *sbuf, char *rbuf, size_t bytes, int root)
{
    if (coll == C_SCATTER || coll == C_ALLTOALL || coll == C_GATHERV || coll == C_ALLGATHERV)
        bytes /= (size_t)g_size;
    if (coll == C_ALLTOALLV || coll == C_ALLTOALLW) bytes /= (size_t)g_size * (size_t)g_size;
    if (coll == C_SCATTERV) bytes /= vtotal(1, g_size);
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

/* topocoll's result equals the native one (reductions of small integers
 * are exact in any order).  Returns nonzero on any rank's mismatch. */
static int validate(int coll, char *sbuf, char *rbuf, size_t sbytes, size_t rbytes, int root,
                    int rank)
{
    /* (zeroed: an irregular exchange writes part of the receive buffer) */
    char *ref = calloc(1, rbytes > sbytes ? rbytes : sbytes);
    int bad = 0, anybad;
    size_t cmp = coll == C_BCAST ? sbytes
                 : (coll == C_REDUCE || coll == C_GATHER || coll == C_GATHERV) && rank != root ? 0
                 : coll == C_EXSCAN && rank == 0 ? 0 /* undefined */
                                                 : rbytes;
    if (coll_reduces(coll)) {
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

void bench_barrier(const bench_t *b)
{
    const opts_t *o = b->o;
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
    if (b->rank == 0) out_barrier_row(b, mn, mt);
    free(tn);
    free(tt);
}

/* The memcpy reference of @row (see main.c's comment): rank 0 copies
 * alone, then every process of the host at once; the figures are rank
 * 0's. */
static void reference(const bench_t *b, char **pool, int npool, row_t *row)
{
    size_t refb = row->bytes;
    double mc = 0;
    if (b->rank == 0)
        mc = memcpy_ref(pool, npool, refb, b->o->reps, MPI_COMM_NULL) * 1e6; /* one copy */
    PMPI_Barrier(MPI_COMM_WORLD);
    double mca =
        memcpy_ref(pool, npool, refb, b->o->reps, b->host) * 1e6; /* all of the host at once */
    if (b->rank != 0) return;
    double bw = (double)refb / mc / 1e3, bwa = (double)refb / mca / 1e3; /* GB/s */
    row->ref = must_move(b->coll, refb, b->size) / (bw * 1e3);
    row->refa = must_move(b->coll, refb, b->size) / (bwa * 1e3);
    row->bw = bw;
    row->bwa = bwa;
}

/* Validates topocoll's @coll on @sbuf, @rbuf against the native one (a
 * message on a failure) and primes both before the first size.  Returns
 * nonzero if a result differed. */
static int check(const bench_t *b, size_t bytes, char *sbuf, char *rbuf, size_t sbytes,
                 size_t rbytes)
{
    int bad = validate(b->coll, sbuf, rbuf, sbytes, rbytes, b->o->root, b->rank);
    static int primed; /* before the first size measured (one run per process) */
    if (!primed) prime(b->coll, sbuf, rbuf, sbytes, b->o->root);
    primed = 1;
    if (bad && b->rank == 0)
        fprintf(stderr, "topocoll_bench: VALIDATION FAILED at %zu bytes\n", bytes);
    return bad;
}

/* ---- --warm, --imb: one buffer reused (OSU's and IMB's method) ---------------- */

/* The warm regimes' per-repetition figures: [rep][avg, min, max] (s). */
typedef struct warm {
    double (*tn)[3], (*tt)[3], *v, *tm, *tc;
} warm_t;

/* OSU: 1000 calls up to 8 KiB, 100 above; fewer on big messages. */
static int warm_iters(const opts_t *o, size_t bytes, size_t sbytes, size_t rbytes, int size)
{
    size_t traffic = (sbytes + rbytes) * (size_t)(size > 1 ? size : 2);
    int iters = o->iters ? o->iters : (int)((256u << 20) / traffic);
    if (!o->iters)
        iters = iters < 10                             ? 10
                : iters > (bytes <= 8192 ? 1000 : 100) ? (bytes <= 8192 ? 1000 : 100)
                                                       : iters;
    return iters;
}

/* The repetitions of one warm size, native and topocoll interleaved (and
 * the --mech floors, when @mx), the medians into @row. */
static void warm_reps(const bench_t *b, char **sb, char **rb, size_t sbytes, mech_t *mx, warm_t *w,
                      row_t *row)
{
    const opts_t *o = b->o;
    int imb = o->regime == R_IMB, iters = row->iters, rank = b->rank, size = b->size;
    int skip = iters / 5 < 2 ? 2 : iters / 5;
    for (int r = 0; r < o->reps; r++) {
        int first = r % 2 == 0; /* 1: the native first */
        time_warm(b->coll, first, sb[0], rb[0], sbytes, skip, iters, o->root, imb,
                  first ? w->tn[r] : w->tt[r]);
        time_warm(b->coll, !first, sb[0], rb[0], sbytes, skip, iters, o->root, imb,
                  first ? w->tt[r] : w->tn[r]);
        if (mx) w->tm[r] = time_mech(mx, M_MAPPED, rb, sbytes, iters, rank, size);
        if (mx && mx->cma_ok) w->tc[r] = time_mech(mx, M_CMA, rb, sbytes, iters, rank, size);
    }
    row->mapped = mx ? median(w->tm, o->reps) * 1e6 : -1;
    row->cma = mx && mx->cma_ok ? median(w->tc, o->reps) * 1e6 : -1;
    for (int k = 0; k < 3; k++) { /* [avg, min, max], us */
        for (int r = 0; r < o->reps; r++) w->v[r] = w->tn[r][k];
        row->nat[k] = median(w->v, o->reps) * 1e6;
        for (int r = 0; r < o->reps; r++) w->v[r] = w->tt[r][k];
        row->top[k] = median(w->v, o->reps) * 1e6;
    }
}

/* One size of the warm regimes into @row.  Returns nonzero if a result
 * was wrong or the --mech floors could not be measured. */
static int warm_size(const bench_t *b, size_t bytes, warm_t *w, row_t *row)
{
    const opts_t *o = b->o;
    int rank = b->rank, size = b->size;
    size_t sbytes, rbytes;
    buf_bytes(b->coll, bytes, size, &sbytes, &rbytes);
    /* the memcpy reference's copy: the vector, or one block */
    row->bytes = coll_blocks(b->coll) ? bytes : sbytes;
    char *sb[2], *rb[2]; /* [0]: the collectives' buffers; [1]: memcpy_ref's source */
    for (int i = 0; i < 2; i++) {
        sb[i] = malloc(sbytes);
        rb[i] = malloc(rbytes);
        memset(sb[i], rank, sbytes);
        memset(rb[i], rank, rbytes);
    }
    row->iters = warm_iters(o, bytes, sbytes, rbytes, size);
    row->bad = check(b, bytes, sb[0], rb[0], sbytes, rbytes);
    mech_t mx; /* --mech: the floors on the same warm buffers */
    int mech = o->mech && mech_init(&mx, sb, 1, sbytes, rank, size) == 0;
    warm_reps(b, sb, rb, sbytes, mech ? &mx : NULL, w, row);
    if (mech) mech_fini(&mx);
    reference(b, rb, 2, row);
    for (int i = 0; i < 2; i++) {
        free(sb[i]);
        free(rb[i]);
    }
    return row->bad || (o->mech && !mech);
}

int bench_warm(const bench_t *b)
{
    const opts_t *o = b->o;
    int invalid = 0;
    if (b->rank == 0) out_warm_header(b);
    if (b->csv) out_csv_header(b->csv, CSV_WARM);
    warm_t w = { calloc((size_t)o->reps, sizeof(*w.tn)), calloc((size_t)o->reps, sizeof(*w.tt)),
                 malloc((size_t)o->reps * sizeof(double)), calloc((size_t)o->reps, sizeof(double)),
                 calloc((size_t)o->reps, sizeof(double)) };
    for (int i = 0; i < o->nsizes; i++) {
        size_t bytes = o->sizes[i], sbytes, rbytes;
        buf_bytes(b->coll, bytes, b->size, &sbytes, &rbytes);
        if (sbytes == 0) continue;
        row_t row = { 0 };
        invalid |= warm_size(b, bytes, &w, &row);
        if (b->rank == 0) out_warm_row(b, &row);
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    free(w.v);
    free(w.tn);
    free(w.tt);
    free(w.tm);
    free(w.tc);
    return invalid;
}

/* ---- The cold regime: rotating buffers ------------------------------------------ */

/* The cold regime's per-repetition figures (s; wire: bytes per call). */
typedef struct cold {
    double *tn, *tt, *tm, *tc, *wn, *wt;
} cold_t;

/* The repetitions of one cold size over @npool rotating buffers, native
 * and topocoll alternately (and the --mech floors, when @mx), the medians
 * into @row. */
static void cold_reps(const bench_t *b, char **spool, char **rpool, int npool, size_t sbytes,
                      mech_t *mx, row_t *row)
{
    const opts_t *o = b->o;
    int coll = b->coll, iters = row->iters, rank = b->rank, size = b->size;
    size_t n = (size_t)o->reps;
    cold_t c = {
        malloc(n * sizeof(double)), malloc(n * sizeof(double)), calloc(n, sizeof(double)),
        calloc(n, sizeof(double)),  calloc(n, sizeof(double)),  calloc(n, sizeof(double))
    };
    for (int r = 0; r < o->reps; r++) {
        if (r % 2 == 0) {
            c.tn[r] = time_coll(coll, 1, spool, rpool, npool, sbytes, iters, o->root,
                                o->net ? &c.wn[r] : NULL);
            c.tt[r] = time_coll(coll, 0, spool, rpool, npool, sbytes, iters, o->root,
                                o->net ? &c.wt[r] : NULL);
        } else {
            c.tt[r] = time_coll(coll, 0, spool, rpool, npool, sbytes, iters, o->root,
                                o->net ? &c.wt[r] : NULL);
            c.tn[r] = time_coll(coll, 1, spool, rpool, npool, sbytes, iters, o->root,
                                o->net ? &c.wn[r] : NULL);
        }
        if (mx) c.tm[r] = time_mech(mx, M_MAPPED, rpool, sbytes, iters, rank, size);
        if (mx && mx->cma_ok) c.tc[r] = time_mech(mx, M_CMA, rpool, sbytes, iters, rank, size);
    }
    row->nat[0] = median(c.tn, o->reps) * 1e6;
    row->top[0] = median(c.tt, o->reps) * 1e6;
    row->net_nat = median(c.wn, o->reps);
    row->net_top = median(c.wt, o->reps);
    row->lb = link_bytes(coll, row->bytes);
    row->link_us = o->link > 0 ? row->lb / (o->link / 8) * 1e6 : 0;
    row->mapped = mx ? median(c.tm, o->reps) * 1e6 : -1;
    row->cma = mx && mx->cma_ok ? median(c.tc, o->reps) * 1e6 : -1;
    free(c.tn);
    free(c.tt);
    free(c.tm);
    free(c.tc);
    free(c.wn);
    free(c.wt);
}

/* One size of the cold regime into @row.  Returns nonzero if a result
 * was wrong or the --mech floors could not be measured. */
static int cold_size(const bench_t *b, size_t bytes, row_t *row)
{
    const opts_t *o = b->o;
    int coll = b->coll, rank = b->rank, size = b->size;
    size_t sbytes, rbytes;
    buf_bytes(coll, bytes, size, &sbytes, &rbytes);
    /* the memcpy reference's copy: the vector, or one block */
    row->bytes = coll_blocks(coll) ? bytes : sbytes;
    int npool = (int)(o->pool / (sbytes + rbytes));
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
    int iters = o->iters
                    ? o->iters
                    : (int)((256u << 20) / ((sbytes + rbytes) * (size_t)(size > 1 ? size : 2)));
    if (iters < 5) iters = 5;
    if (iters > 2000) iters = 2000;
    row->iters = iters;
    row->bad = check(b, bytes, spool[0], rpool[0], sbytes, rbytes);
    time_coll(coll, 1, spool, rpool, npool, sbytes, 2, o->root, NULL); /* warm-up */
    time_coll(coll, 0, spool, rpool, npool, sbytes, 2 + o->settle, o->root, NULL);
    mech_t mx;
    int mech = o->mech && mech_init(&mx, spool, npool, sbytes, rank, size) == 0;
    cold_reps(b, spool, rpool, npool, sbytes, mech ? &mx : NULL, row);
    if (mech) mech_fini(&mx);
    reference(b, rpool, npool, row);
    for (int i = 0; i < npool; i++) {
        free(spool[i]);
        free(rpool[i]);
    }
    free(spool);
    free(rpool);
    return row->bad || (o->mech && !mech);
}

int bench_cold(const bench_t *b)
{
    int invalid = 0;
    if (b->rank == 0) out_cold_header(b);
    for (int i = 0; i < b->o->nsizes; i++) {
        size_t bytes = b->o->sizes[i], sbytes, rbytes;
        buf_bytes(b->coll, bytes, b->size, &sbytes, &rbytes);
        if (sbytes == 0) continue;
        row_t row = { 0 };
        invalid |= cold_size(b, bytes, &row);
        if (b->rank == 0) out_cold_row(b, &row);
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    return invalid;
}
