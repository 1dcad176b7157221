/*
 * tools/bench/output.c -- what topocoll_bench shows (bench.h): the tables'
 * headers and rows on stdout, the CSV's header lines and rows.  The
 * formats are what docs/performance.md's tables and scripts/plot.sh read.
 * Only rank 0 calls these (the CSV file is rank 0's).
 */
#include "bench.h"

#include <unistd.h>

void out_csv_header(FILE *csv, int kind)
{
    switch (kind) {
    case CSV_COLD:
        fprintf(csv,
                "coll,np,nodes,bytes,native_us,topocoll_us,ratio,ref_us,memcpy_GBps,ref_all_us,"
                "memcpy_all_GBps,mapped_us,cma_us,link_us,net_native_B,net_topocoll_B,link_B\n");
        break;
    case CSV_WARM:
        fprintf(csv,
                "coll,np,nodes,bytes,native_us,topocoll_us,ratio,ref_us,memcpy_GBps,ref_all_us,"
                "memcpy_all_GBps,regime,iters,native_min_us,native_max_us,topocoll_min_us,"
                "topocoll_max_us,mapped_us,cma_us\n");
        break;
    case CSV_OVERLAP:
        fprintf(csv, "coll,impl,np,bytes,comm_cores,placement,S,model_S,t_pure_us,t_cpu_us,t_"
                     "ovrl_us,overlap\n");
        break;
    default: fprintf(csv, "coll,np,step,bytes,calls,native_us,topocoll_us,ratio\n"); break;
    }
}

/* ---- The cold regime (rotating pool) ------------------------------------------- */

void out_cold_header(const bench_t *b)
{
    const opts_t *o = b->o;
    int coll = b->coll;
    printf("# topocoll_bench %s: np=%d on %d node(s) (%d per node), %ld cores on this host%s\n",
           o->coll, b->size, b->info->nnodes, b->info->local_size, sysconf(_SC_NPROCESSORS_ONLN),
           coll_reduces(coll) ? "; MPI_DOUBLE, MPI_SUM" : "");
    printf("# intra-node: %s; rotating pool %zu MiB per process; median of %d reps%s\n",
           b->info->single_copy ? "single copy (CMA)" : "copy-in/copy-out", o->pool >> 20, o->reps,
           coll_rooted(coll) ? (o->root ? "; root != 0" : "; root 0") : "");
    printf("# bytes = %s; latency = slowest rank's mean per call; ratio = native/topocoll (>1: "
           "faster)\n",
           coll_blocks(coll) ? "block per rank" : "vector");
    printf("# ref = bytes each process must move / memcpy bandwidth (GB/s, cold buffers): one "
           "core alone\n"
           "# (ref_us, GB/s), every process of the host copying at once (ref_all_us, GB/s_all)\n");
    if (o->mech)
        printf("# mapped_us, cma_us (--mech): an Allgather's least time reading the peers' "
               "send buffers\n"
               "# mapped in memory (XPMEM-like) or by process_vm_readv; same reps, same "
               "rotation\n");
    if (o->link > 0)
        printf("# %d hosts, at most %d processes each; link %.3g bit/s: link_us = the busiest "
               "host's bytes\n"
               "# (link_B) / the link rate, x = topocoll_us / link_us\n",
               g_hosts.nhosts, g_hosts.ppn, o->link);
    if (o->net)
        printf("# net_*_B: the busiest host's bytes on the wire per call (max of sent, "
               "received; all\n"
               "# interfaces but lo), native and topocoll\n");
    printf("%10s %12s %12s %7s %10s %8s %10s %8s%s%s%s\n", "bytes", "native_us", "topocoll_us",
           "ratio", "ref_us", "GB/s", "ref_all_us", "GB/s_all",
           o->mech ? "  mapped_us     cma_us" : "", o->link > 0 ? "    link_us      x" : "",
           o->net ? "  net_nat_B   net_topo_B       link_B" : "");
}

static void cold_csv(const bench_t *b, const row_t *r)
{
    const opts_t *o = b->o;
    double mn = r->nat[0], mt = r->top[0];
    fprintf(b->csv, "%s,%d,%d,%zu,%.3f,%.3f,%.4f,%.3f,%.3f,%.3f,%.3f,", o->coll, b->size,
            b->info->nnodes, r->bytes, mn, mt, mn / mt, r->ref, r->bw, r->refa, r->bwa);
    if (r->mapped > 0) fprintf(b->csv, "%.3f", r->mapped);
    fputc(',', b->csv);
    if (r->cma > 0) fprintf(b->csv, "%.3f", r->cma);
    fputc(',', b->csv);
    if (o->link > 0) fprintf(b->csv, "%.3f", r->link_us);
    fputc(',', b->csv);
    if (o->net)
        fprintf(b->csv, "%.0f,%.0f,%.0f", r->net_nat, r->net_top, r->lb);
    else
        fputs(",,", b->csv);
    fputc('\n', b->csv);
}

void out_cold_row(const bench_t *b, const row_t *r)
{
    const opts_t *o = b->o;
    double mn = r->nat[0], mt = r->top[0], lus = r->link_us;
    printf("%10zu %12.2f %12.2f %7.2f %10.2f %8.2f %10.2f %8.2f", r->bytes, mn, mt, mn / mt, r->ref,
           r->bw, r->refa, r->bwa);
    if (o->mech) printf(" %10.2f %10.2f", r->mapped, r->cma); /* -1: not measured */
    if (o->link > 0 && lus > 0)
        printf(" %10.2f %6.2f", lus, mt / lus);
    else if (o->link > 0)
        printf(" %10s %6s", "-", "-"); /* one host: no link to bound */
    if (o->net) printf(" %12.0f %12.0f %12.0f", r->net_nat, r->net_top, r->lb);
    printf("%s\n", r->bad ? "  INVALID" : "");
    if (b->csv) cold_csv(b, r);
    fflush(stdout);
}

/* ---- --warm, --imb: one buffer reused (OSU's and IMB's method) ---------------- */

void out_warm_header(const bench_t *b)
{
    const opts_t *o = b->o;
    const topocoll_comm_info_t *info = b->info;
    int coll = b->coll, size = b->size;
    int imb = o->regime == R_IMB;
    printf("# topocoll_bench %s: np=%d on %d node(s) (%d per node), %ld cores on this host%s\n",
           o->coll, size, info->nnodes, info->local_size, sysconf(_SC_NPROCESSORS_ONLN),
           coll_reduces(coll) ? "; MPI_DOUBLE, MPI_SUM" : "");
    printf("# %s: one buffer reused (warm caches), %s; intra-node %s; median of %d reps,\n"
           "# native and topocoll interleaved%s\n",
           imb ? "IMB's method (--imb)" : "OSU's method (--warm)",
           imb ? "untimed warm-up calls, then the calls back to back after a barrier"
               : "untimed warm-up calls, then each call timed alone with a barrier after it",
           info->single_copy ? "single copy (CMA)" : "copy-in/copy-out", o->reps,
           coll_rooted(coll) ? (o->root ? "; root != 0" : "; root 0") : "");
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

void out_warm_row(const bench_t *b, const row_t *r)
{
    const opts_t *o = b->o;
    int imb = o->regime == R_IMB;
    double ratio = r->nat[0] / r->top[0];
    if (imb)
        printf("%13zu %12d %12.2f %12.2f %12.2f %12.2f %12.2f %12.2f %7.2f %10.2f %8.2f", r->bytes,
               r->iters, r->top[1], r->top[2], r->top[0], r->nat[1], r->nat[2], r->nat[0], ratio,
               r->refa, r->bwa);
    else
        printf("%-10zu%18.2f%18.2f%18.2f%12d%12.2f%12.2f%12.2f%8.2f%11.2f%9.2f", r->bytes,
               r->top[0], r->top[1], r->top[2], r->iters, r->nat[0], r->nat[1], r->nat[2], ratio,
               r->refa, r->bwa);
    if (o->mech) printf(" %10.2f %10.2f", r->mapped, r->cma); /* -1: not measured */
    printf("%s\n", r->bad ? "  INVALID" : "");
    if (b->csv) {
        fprintf(b->csv,
                "%s,%d,%d,%zu,%.3f,%.3f,%.4f,%.3f,%.3f,%.3f,%.3f,%s,%d,%.3f,%.3f,%.3f,%.3f,",
                o->coll, b->size, b->info->nnodes, r->bytes, r->nat[0], r->top[0], ratio, r->ref,
                r->bw, r->refa, r->bwa, imb ? "imb" : "osu", r->iters, r->nat[1], r->nat[2],
                r->top[1], r->top[2]);
        if (r->mapped > 0) fprintf(b->csv, "%.3f", r->mapped);
        fputc(',', b->csv);
        if (r->cma > 0) fprintf(b->csv, "%.3f", r->cma);
        fputc('\n', b->csv);
    }
    fflush(stdout);
}

void out_nb_note(int mode)
{
    if (mode == 3) {
        printf("# --persist-native: the native columns are the native MPI's persistent request "
               "(MPI_Allreduce_init\n"
               "# & co. without topocoll), the topocoll columns topocoll's, both started and "
               "waited for\n");
        return;
    }
    if (mode == 2) {
        printf("# --persist: the native columns are topocoll's blocking call, the topocoll "
               "columns its\n"
               "# persistent request (MPI_Allreduce_init & co.) started and waited for "
               "(ratio > 1: faster)\n");
        return;
    }
    printf("# --nb: the native columns are topocoll's blocking call, the topocoll columns its "
           "nonblocking\n"
           "# call followed at once by MPI_Wait (ratio > 0.91: within 10%%)\n");
}

/* ---- Barrier -------------------------------------------------------------------- */

void out_barrier_header(const bench_t *b)
{
    printf("# topocoll_bench barrier: np=%d on %d node(s) (%d per node), %ld cores on this "
           "host; "
           "median of %d reps of the slowest rank's mean\n",
           b->size, b->info->nnodes, b->info->local_size, sysconf(_SC_NPROCESSORS_ONLN),
           b->o->reps);
}

void out_barrier_row(const bench_t *b, double mn, double mt)
{
    printf("%10s %12s %12s %7s\n", "barrier", "native_us", "topocoll_us", "ratio");
    printf("%10s %12.3f %12.3f %7.2f\n", "", mn, mt, mn / mt);
    if (b->csv)
        fprintf(b->csv, "barrier,%d,%d,0,%.4f,%.4f,%.4f,,\n", b->size, b->info->nnodes, mn, mt,
                mn / mt);
}

/* ---- --overlap ------------------------------------------------------------------- */

void out_overlap_header(const bench_t *b, size_t bytes, const progress_t *p)
{
    const char *pl[] = { "bind", "numa", "odd-even" };
    int size = b->size;
    printf("# topocoll_bench --overlap: np=%d on %d node(s), %ld cores on this host; buffer "
           "%zu bytes "
           "(iallgather: %zu per rank, iscan: %zu); median of %d reps of the slowest rank\n",
           size, b->info->nnodes, sysconf(_SC_NPROCESSORS_ONLN), bytes, bytes / (size_t)size,
           bytes / 2, b->o->reps);
    if (p->comm_cores > 0)
        printf("# progress: TOPOCOLL_COMM_CORES=%d, placement %s, thread on core %d; "
               "Ibcast/Ireduce: %s, "
               "H=%d, S=%d (model's S=%d)\n",
               p->comm_cores, pl[p->placement], topocoll_progress_core(),
               p->split_tree ? "split tree" : "hierarchical", p->h, p->split_tree ? p->s_used : -1,
               p->model_s);
    else
        printf("# progress: no communication core (progress only inside MPI calls); "
               "Ibcast/Ireduce: %s\n",
               p->split_tree ? "split tree" : "hierarchical");
    printf("# t_cpu = t_pure (perfect-overlap sizing); overlap%% = "
           "100*max(0,min(1,(t_pure+t_cpu-t_ovrl)/"
           "min(t_pure,t_cpu))) (IMB-NBC)\n");
    printf("%11s %9s %10s %10s %10s %9s\n", "collective", "impl", "t_pure_us", "t_cpu_us",
           "t_ovrl_us", "overlap%");
}

/* @t: t_pure, t_cpu, t_ovrl (s), overlap (%). */
void out_overlap_row(const bench_t *b, const char *name, int native, size_t bytes,
                     const progress_t *p, const double t[4])
{
    printf("%11s %9s %10.1f %10.1f %10.1f %9.1f\n", name, native ? "native" : "topocoll",
           t[0] * 1e6, t[1] * 1e6, t[2] * 1e6, t[3]);
    if (b->csv)
        fprintf(b->csv, "%s,%s,%d,%zu,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f\n", name,
                native ? "native" : "topocoll", b->size, bytes, p->comm_cores, p->placement,
                p->split_tree ? p->s_used : -1, p->model_s, t[0] * 1e6, t[1] * 1e6, t[2] * 1e6,
                t[3]);
    fflush(stdout);
}

/* ---- --comm-churn ---------------------------------------------------------------- */

/* @tn, @tt: [rep][dup, first, rest, free, total] (s). */
void out_churn(const bench_t *b, size_t bytes, int iters, double (*tn)[5], double (*tt)[5])
{
    const opts_t *o = b->o;
    static const char *step[5] = { "dup", "first", "rest", "free", "total" };
    printf("# topocoll_bench --comm-churn: np=%d, %ld cores on this host; "
           "MPI_Comm_dup(MPI_COMM_WORLD),\n"
           "# %d %s of %zu bytes, MPI_Comm_free; %d rounds per rep, median of %d reps of the "
           "slowest\n"
           "# rank's mean per round; first = the first collective, rest = the other %d\n",
           b->size, sysconf(_SC_NPROCESSORS_ONLN), o->churn_calls, o->coll, bytes, iters, o->reps,
           o->churn_calls > 1 ? o->churn_calls - 1 : 0);
    printf("%8s %12s %12s %7s\n", "step", "native_us", "topocoll_us", "ratio");
    for (int k = 0; k < 5; k++) {
        double vn[64], vt[64];
        int n = o->reps < 64 ? o->reps : 64;
        for (int r = 0; r < n; r++) {
            vn[r] = tn[r][k];
            vt[r] = tt[r][k];
        }
        double mn = median(vn, n) * 1e6, mt = median(vt, n) * 1e6;
        printf("%8s %12.2f %12.2f %7.2f\n", step[k], mn, mt, mt > 0 ? mn / mt : 0);
        if (b->csv)
            fprintf(b->csv, "%s,%d,%s,%zu,%d,%.3f,%.3f,%.4f\n", o->coll, b->size, step[k], bytes,
                    o->churn_calls, mn, mt, mt > 0 ? mn / mt : 0);
    }
}
