/*
 * tools/bench/main.c: topocoll_bench -- OSU-style latency benchmark of topocoll's
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
 *   the irregular exchanges (rank r's block (r + 1) n, T units in all, a
 *   host's ranks own units of them): gatherv, scatterv: T - own of root
 *   0's host; allgatherv: the most T - own of any host; alltoallv: the
 *   most of any host's ppn (T - own) in and own (size - ppn) out, x n / L;
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
 * The files and what each owns: bench.h.
 *
 * May call: the native API, PMPI.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

hosts_t g_hosts;
int g_size = 1;
int g_nb_vs_blocking;

/* The processes sharing this host's memory bandwidth (g_hosts); returns
 * how many share this one. */
static int hosts_init(void)
{
    MPI_Comm host;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    int host_size, host_rank;
    PMPI_Comm_size(host, &host_size);
    PMPI_Comm_rank(host, &host_rank);
    g_hosts.host = host;
    g_hosts.counter = host_rank == 0;
    PMPI_Allreduce(&g_hosts.counter, &g_hosts.nhosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&host_size, &g_hosts.ppn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    /* the reduce-scatters' least share of the vector one host's ranks hold
     * (blocks alike, or rank r's r + 1 units) */
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    double mine[2] = { 1.0 / size, (double)(rank + 1) / (double)vtotal(1, size) }, on[2], least[2];
    PMPI_Allreduce(mine, on, 2, MPI_DOUBLE, MPI_SUM, host);
    PMPI_Allreduce(on, least, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    g_hosts.rs_least[0] = least[0];
    g_hosts.rs_least[1] = least[1];
    /* the irregular exchanges' busiest link, in units of the block unit
     * (rank r's block r + 1 units, T in all; a host's ranks hold own):
     * Gatherv and Scatterv, rank 0's host takes or gives T - own; each
     * host receives T - own of an Allgatherv; an Alltoallv host receives
     * T - own for each of its ranks and sends each of its units to every
     * rank elsewhere */
    double T = (double)vtotal(1, size), own = 0, r1 = rank + 1, hs = host_size, u[3], umax[3];
    PMPI_Allreduce(&r1, &own, 1, MPI_DOUBLE, MPI_SUM, host);
    u[0] = rank == 0 ? T - own : 0;
    u[1] = T - own;
    u[2] = hs * (T - own) > own * (size - hs) ? hs * (T - own) : own * (size - hs);
    PMPI_Allreduce(u, umax, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    memcpy(g_hosts.v_units, umax, sizeof(umax));
    return host_size;
}

/* Everything but --comm-churn, once MPI_COMM_WORLD is attached: --overlap,
 * the barrier, or the collective in the warm or the cold regime.  Returns
 * the exit status. */
static int bench_attached(bench_t *b, opts_t *o, int host_size)
{
    int rank = b->rank;
    if (o->overlap) {
        if (b->csv) out_csv_header(b->csv, CSV_OVERLAP);
        return bench_overlap(b) ? 1 : 0;
    }
    if (strcmp(o->coll, "barrier") == 0) {
        if (rank == 0) out_barrier_header(b);
        bench_barrier(b);
        return 0;
    }
    b->coll = coll_index(o->coll);
    g_nb_vs_blocking = o->nb;
    if (o->nb && rank == 0) out_nb_note(o->nb);
    if (o->mech && (b->coll != C_ALLGATHER || host_size != b->size)) {
        if (rank == 0)
            fprintf(stderr,
                    "topocoll_bench: --mech is for allgather with every process on one host\n");
        o->mech = 0;
    }
    if (o->regime != R_COLD) {
        if (rank == 0 && (o->link > 0 || o->net))
            fprintf(
                stderr,
                "topocoll_bench: --link and --net are for the rotating pool (not --warm, --imb)\n");
        return bench_warm(b) ? 1 : 0;
    }
    return bench_cold(b) ? 1 : 0;
}

/* After MPI_Init: the run.  Returns the exit status. */
static int bench_run(opts_t *o, int rank, int size)
{
    FILE *csv = NULL;
    if (rank == 0 && o->csv && !(csv = fopen(o->csv, "w"))) perror(o->csv);
    if (csv && !o->churn && o->regime == R_COLD) out_csv_header(csv, CSV_COLD);
    int host_size = hosts_init();
    bench_t b = { o, C_BARRIER, rank, size, csv, g_hosts.host, NULL };
    int rc = 0;
    if (o->churn) { /* before anything attaches: nothing else is built */
        b.coll = coll_index(o->coll);
        if (b.coll == C_BARRIER) b.coll = C_ALLREDUCE; /* barrier: the default */
        if (csv) out_csv_header(csv, CSV_CHURN);
        bench_churn(&b);
    } else {
        topocoll_comm_attach(MPI_COMM_WORLD);
        topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
        topocoll_comm_query(MPI_COMM_WORLD, &info);
        b.info = &info;
        rc = bench_attached(&b, o, host_size);
    }
    if (csv) fclose(csv);
    PMPI_Comm_free(&g_hosts.host);
    return rc;
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
    int rc = 2;
    if (o.root >= size) {
        if (rank == 0)
            fprintf(stderr, "topocoll_bench: --root %d: not a rank of the %d processes\n", o.root,
                    size);
    } else
        rc = bench_run(&o, rank, size);
    topocoll_progress_fini();
    MPI_Finalize();
    return rc;
}
