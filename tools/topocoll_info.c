/*
 * tools/topocoll_info -- what topocoll sees and decides for a run:
 * topology (real or emulated), each rank's binding and place in the node's
 * hierarchy, the (virtual) nodes and their leaders, the intra-node transfer
 * mechanism and why, the physical ring order, and the method each
 * collective (Bcast, Reduce, Allreduce, Allgather) chooses per message
 * size: the sizes given as arguments (bytes, K/M suffixes allowed), or a
 * default list.  Reductions are shown for MPI_DOUBLE/MPI_SUM, Allgather
 * sizes are per-rank blocks.  Also the network interfaces found (NUIOA),
 * the leaders every policy of TOPOCOLL_LEADERS would elect, and the NUIOA
 * paper's Figure 2 argument as a count: the bytes a Bcast from rank 0
 * moves across the inter-socket links under each policy (--model SIZE,
 * default 4 MiB).
 *
 *   mpirun -np 4 env TOPOCOLL_TOPOLOGY=x.xml TOPOCOLL_BINDING=socket-rr \
 *          TOPOCOLL_VIRTUAL_NODES=2 topocoll_info [--model SIZE] [--comm-cores C] [SIZE...]
 *
 * --comm-cores C also prints the split-tree model's table (progress-
 * threads paper, section 6.2) for this run's N ranks and C communication
 * cores: T_nb and T_ov for S = 0..H(N) and the S the model chooses.
 *
 * --config prints every TOPOCOLL_* parameter (base/config's table) with
 * its default, this process's value and where it came from, like
 * ompi_info --param; --config --markdown prints the table of
 * docs/tuning.md.  --config, --help and --version need no mpiexec (they
 * run before MPI_Init).  A bad option or value: a message on stderr and
 * exit status 2.
 *
 * May call: the native API and the internal headers (read-only).
 */
#include "topocoll.h"

#include "base/config.h"
#include "coll/allgather.h"
#include "coll/exchange.h"
#include "coll/allreduce.h"
#include "coll/bcast.h"
#include "coll/ctx.h"
#include "coll/reduce.h"
#include "coll/tune.h"
#include "coll/xtune.h"
#include "hier/hier.h"
#include "coll/cost.h"
#include "coll/model.h"
#include "info_model.h"
#include "coll/plan.h"
#include "progress/progress.h"
#include "nbc/nbc.h"
#include "topo/nic.h"
#include "topo/topo.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TOPOCOLL_VERSION
#error "TOPOCOLL_VERSION (the CMake project version) is defined by the build"
#endif

#define LINE 512
#define TUNED                                                               \
    (c->cfg->tune == TC_TUNE_FORCE_CICO                                     \
         ? "CICO (TOPOCOLL_TUNE=cico; pipelined above the slots' capacity)" \
         : "CICO or single copy, chosen online per size class "             \
           "(coll/tune; TOPOCOLL_TUNE=0: static)")

/* A row for collective @ci (TC_CI_*) of @b bytes that the plan leaves to
 * the native MPI (coll/plan: the choice the blocking and nonblocking
 * calls take): 1 printed, 0 not native. */
static int native_row(const tc_ctx_t *c, const char *name, int ci, size_t b)
{
    const char *why = tc_plan_native_why(c, ci, b);
    if (why) printf("    %-10s native MPI: %s\n", name, why);
    return why != NULL;
}

/* The nodes' shape of a chain-or-tree collective (Bcast, Reduce: @ci) of
 * @b bytes per part (coll/plan tc_plan_chain, as coll/bcast and
 * coll/reduce take it). */
static const char *node_shape(const tc_ctx_t *c, int ci, size_t b)
{
    return tc_plan_chain(c, ci, b) ? "a pipelined chain of" : "a binomial tree over";
}

/* The plan of every collective of the registry (coll/plan tc_plan_select)
 * at each size: one row per size, one column per collective. */
static void plan_table(const tc_ctx_t *c, const size_t *sizes, int ns)
{
    printf("plans by message size (coll/plan; TOPOCOLL_<COLL>_ALG forces one; reductions and "
           "scans: bytes of the vector; allgather, gather, scatter, alltoall: block per rank):\n");
    printf("  %10s", "bytes");
    for (int ci = 0; ci < TC_NCOLLS; ci++) printf(" %-13s", tc_coll_call(ci) + 4);
    printf("\n");
    for (int i = 0; i < ns; i++) {
        printf("  %10zu", sizes[i]);
        for (int ci = 0; ci < TC_NCOLLS; ci++) {
            tc_plan_t p;
            tc_plan_select(c, ci, sizes[i], &p);
            printf(" %-13s", tc_alg_word(p.alg));
        }
        printf("\n");
    }
}

static void bcast_method(const tc_ctx_t *c, size_t b)
{
    if (native_row(c, "bcast", TC_CI_BCAST, b)) return;
    int sc = tc_bcast_uses_single_copy(c, b), rails = tc_bcast_rails(c, b);
    if (tc_tune_range(c, TC_TUNE_BCAST, b)) {
        printf("    bcast      %s\n", TUNED);
        return;
    }
    printf("    bcast      %s", !sc ? "CICO (shared segment)"
                                : c->map.nnodes == 1 && b >= c->cfg->bcast_share_min
                                    ? "single copy, root writes 1/n of each receiver"
                                    : "single copy");
    if (c->map.nnodes > 1 &&
        tc_plan_bcast_net(c, b, tc_xtune_alt(c, TC_CI_BCAST, b)) == TC_ALG_OWNERS)
        printf(", the root sends the %d other leaders a block each, which each passes on "
               "to the others (block owners)",
               c->map.nnodes - 1);
    else if (c->map.nnodes > 1) /* (each rail's part, as coll/bcast cuts it) */
        printf(", %s %d leaders, %zu B segments (root 0)",
               node_shape(c, TC_CI_BCAST, b / (size_t)rails), c->map.nnodes,
               tc_plan_bcast_seg(c, b / (size_t)rails, 0));
    if (rails > 1) printf(", %d rails (one leader per NIC, a part each)", rails);
    if (tc_ctx_relays(c, b, sc))
        printf(", per-%s relays", c->map.policy == TC_LEAD_NUMA ? "NUMA-node" : "package");
    printf("\n");
}

static void reduce_methods(const tc_ctx_t *c, size_t b)
{
    tc_rtype_t t;
    tc_op_classify(MPI_DOUBLE, MPI_SUM, &t);
    size_t n = b / sizeof(double);
    const tc_nodemap_t *m = &c->map;
    if (n == 0) {
        printf("    reduce     (under one double)\n");
        return;
    }
    if (native_row(c, "reduce", TC_CI_REDUCE, b)) {
        /* (said) */
    } else if (tc_tune_range(c, TC_TUNE_REDUCE, b))
        printf("    reduce     %s\n", TUNED);
    else if (tc_fold_uses_cico(c, b))
        printf("    reduce     CICO: %s\n",
               m->nnodes == 1 ? "every process folds a slice out of the slots, the root copies them"
                              : "leaders fold their node, PMPI_Reduce between leaders");
    else if (!c->all_sc)
        printf("    reduce     native MPI (no single copy above the CICO size)\n");
    else if (m->nnodes == 1)
        printf("    reduce     single copy: %d workers fold slices (root 2x) into the root's "
               "buffer, %zu B segments\n",
               m->lsize, tc_fold_segsize(c, &t, n, m->lsize) * t.extent);
    else {
        const int net = tc_plan_reduce_net(c, b, tc_xtune_alt(c, TC_CI_REDUCE, b));
        size_t seg = tc_fold_segsize(c, &t, n, 1); /* (coll/reduce: a segment at most the vector) */
        char how[160];
        if (net == TC_ALG_HALVING)
            snprintf(how, sizeof how,
                     "the %d leaders reduce it by recursive halving, then gather it at the root's "
                     "(Rabenseifner)",
                     m->nnodes);
        else if (net == TC_ALG_OWNERS)
            snprintf(how, sizeof how,
                     "the %d other leaders reduce a block of each segment each and send it to the "
                     "root's (block owners)",
                     m->nnodes - 1);
        else
            snprintf(how, sizeof how, "leaders reduce %zu B segments along %s %d nodes",
                     (seg < n ? seg : n) * t.extent, node_shape(c, TC_CI_REDUCE, b), m->nnodes);
        printf("    reduce     HierKNEM Alg. 2: %d worker(s) per node fold by single copy into the "
               "leader's buffer, %s\n",
               m->lsize > 1 ? m->lsize - 1 : 1, how);
    }
    if (native_row(c, "allreduce", TC_CI_ALLREDUCE, b)) {
        /* (said) */
    } else if (tc_tune_range(c, TC_TUNE_ALLREDUCE, b))
        printf("    allreduce  %s\n", TUNED);
    else if (tc_fold_uses_cico(c, b))
        printf("    allreduce  CICO: %s\n",
               m->nnodes == 1 ? "reduce-scatter and allgather through the slots"
                              : "leaders fold their node, reduce + bcast between leaders");
    else if (!c->all_sc)
        printf("    allreduce  native MPI (no single copy above the CICO size)\n");
    else if (m->nnodes == 1)
        printf("    allreduce  single copy: %d workers fold pieces and write them into every peer, "
               "%zu B segments\n",
               m->lsize, tc_allreduce_segsize(c, &t, n) * t.extent);
    else if (tc_plan_allreduce_net(c) == TC_ALG_SWITCHES)
        printf("    allreduce  single copy: %d workers fold pieces and write them into every peer, "
               "%zu B segments; each piece along its slice's rings inside each of %d switches "
               "(%d nodes), across them, inside again\n",
               c->minlocal, tc_allreduce_segsize(c, &t, n) * t.extent, m->nswg, m->swg_k);
    else
        printf("    allreduce  single copy: %d workers fold pieces and write them into every peer, "
               "%zu B segments; each piece along its slice's ring over %d nodes\n",
               c->minlocal, tc_allreduce_segsize(c, &t, n) * t.extent, m->nnodes);
}

/* Gather, Scatter and Alltoall of @b bytes per rank (coll/exchange). */
static void exchange_methods(const tc_ctx_t *c, size_t b)
{
    static const char *name[] = { "gather", "scatter", "alltoall" };
    for (int k = TC_XC_GATHER; k <= TC_XC_ALLTOALL; k++) {
        const char *how = "single copy (the others read or write the root's buffer)";
        if (!tc_exchange_fits(c, k, b))
            how = c->map.nnodes > 1 ? "native MPI (several nodes)" : "native MPI (no single copy)";
        else if (tc_exchange_eager(c, k, b))
            how = "eager items (shared segment)";
        else if (k == TC_XC_ALLTOALL)
            how = c->map.nnodes > 1 ? "node-aggregated: one message per slice and pair of nodes, "
                                      "placed by single copy"
                                    : "single copy (each writes into every peer's buffer)";
        printf("    %-10s %s\n", name[k], how);
    }
}

static void allgather_method(const tc_ctx_t *c, size_t b)
{
    int alg = tc_allgather_alg(c, b);
    if (native_row(c, "allgather", TC_CI_ALLGATHER, b)) {
        /* (said) */
    } else if (tc_tune_range(c, TC_TUNE_ALLGATHER, b))
        printf("    allgather  %s\n", TUNED);
    else if (alg != TC_AG_USE_CICO && !c->all_sc)
        printf("    allgather  native MPI (no single copy)\n");
    else
        printf("    allgather  %s%s%s\n", tc_allgather_alg_name(alg),
               alg != TC_AG_USE_LEADER || c->map.nnodes == 1 ? ""
               : tc_allgather_sw(c)
                   ? ", the leaders by switch (across the switches and inside at once)"
               : tc_allgather_rd(c, b)
                   ? (c->map.nnodes & (c->map.nnodes - 1) ? ", the leaders by Bruck's concatenation"
                                                          : ", the leaders by recursive doubling")
                   : "",
               alg == TC_AG_USE_LEADER &&
                       tc_ctx_relays(c, b * (size_t)(c->map.size - c->map.lsize), c->all_sc)
                   ? (c->map.policy == TC_LEAD_NUMA ? ", per-NUMA-node relays"
                                                    : ", per-package relays")
                   : "");
}

/* The split-tree model's table (progress-threads paper, eqs. 6 and 7) for
 * this run's N processes and @cc communication cores besides them. */
static void split_tree_table(int n, int cc)
{
    int nproc = n + cc, h = tc_st_height(n);
    printf("split-tree model (N = %d tasks, %d communication core(s), Nproc = %d; unit: one buffer "
           "transfer):\n",
           n, cc, nproc);
    printf("  C(N) = %.3f (computation sized for perfect overlap)\n", tc_st_compute(n, nproc));
    printf("  %3s %10s %10s %10s %10s\n", "S", "T_nb", "T_ov", "T_nb(var)", "T_ov(var)");
    for (int s = 0; s <= h; s++)
        printf("  %3d %10.3f %10.3f %10.3f %10.3f\n", s, tc_st_time_nb(s, n, nproc, 0),
               tc_st_time_ov(s, n, nproc, 0), tc_st_time_nb(s, n, nproc, 1),
               tc_st_time_ov(s, n, nproc, 1));
    printf("  model's S: %d (Bcast/Reduce), %d (Gather/Scatter weights)\n",
           tc_st_best_s(n, nproc, 0), tc_st_best_s(n, nproc, 1));
}

/* Children of node @n in the Bcast's binomial tree rooted at node @rn. */
static int tree_children(int n, int rn, int nn)
{
    int vn = (n - rn + nn) % nn, mask = 1, c = 0;
    while (mask < nn && !(vn & mask)) mask <<= 1;
    for (mask >>= 1; mask > 0; mask >>= 1) c += vn + mask < nn;
    return c;
}

/* The NICs of this process, and each rank's distance to rail 0's. */
static void nics_report(const tc_nics_t *nics, const tc_lead_in_t *all, int size)
{
    printf("network interfaces (NUIOA): %d: %s\n", nics->n, nics->why);
    for (int i = 0; i < nics->n; i++) {
        const tc_nic_t *k = &nics->nic[i];
        char cpus[96];
        hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), k->cpuset);
        printf("  rail %d: %-8s (%s) PCI %s, %s, near %s (PUs %s), package %d, NUMA node %d\n", i,
               k->name, k->osdevs, k->busid,
               k->klass == TC_NIC_OPENFABRICS ? "OpenFabrics" : "network", k->near, cpus, k->pkg,
               k->numa);
    }
    if (nics->ignored[0]) printf("  ignored: %s\n", nics->ignored);
    printf("  scores (0: inside the NIC's locality, 1: its NUMA node, 2: its package, 10+: by NUMA "
           "distance, "
           "%d: unbound):",
           TC_NIC_SCORE_UNBOUND);
    for (int r = 0; r < size; r++) printf(" %d", all[r].nrails ? all[r].score[0] : -1);
    printf("\n");
}

/* nuioa_report's per-rank scratch arrays ([size] each). */
typedef struct lead_scratch {
    tc_lead_in_t *in;
    int *rk, *dl, *dof, *src, *pkg;
} lead_scratch_t;

/* Node @n's leaders under policy @pol (election @out, @R rails) and the
 * bytes its share of the Bcast of @bytes from rank 0 moves across the
 * inter-socket links, which it returns; prints the node's line. */
static double node_report(const tc_ctx_t *c, int pol, int n, int R, size_t bytes,
                          const tc_lead_in_t *all, const tc_nics_t *nics, lead_scratch_t *s,
                          tc_lead_out_t *out)
{
    const tc_nodemap_t *m = &c->map;
    const int nn = m->nnodes, rn = m->node_of[0];
    int k = 0;
    for (int r = 0; r < m->size; r++)
        if (m->node_of[r] == n) {
            s->rk[k] = r;
            s->in[k] = all[r];
            s->pkg[k] = all[r].pkg;
            k++;
        }
    tc_lead_elect((tc_lead_policy_t)pol, s->in, k, out, s->dl, s->dof);
    int relays = tc_lead_relays_used((tc_lead_policy_t)pol, tc_lead_dom_split(k, out, s->dl), k,
                                     bytes, c->cfg->multileader_min);
    double x = 0;
    int root_here = n == rn, nchild = nn > 1 ? tree_children(n, rn, nn) : 0;
    for (int r = 0; r < R; r++) {
        int rootl = m->lrank_of[0];
        int rep =
            root_here ? (r == 0 || out->rail[r] == rootl ? rootl : out->rail[r]) : out->rail[r];
        int producer = root_here ? rootl : rep;
        for (int i = 0; i < k; i++)
            s->src[i] = tc_lead_source(i, producer, relays ? s->dof : NULL, relays ? s->dl : NULL);
        int nic_pkg = r < nics->n ? nics->nic[r].pkg : -1;
        x += tc_lead_link_bytes(k, s->pkg, s->src, rep, (root_here ? 0 : 1) + nchild,
                                nn > 1 ? nic_pkg : -1, (double)bytes / R);
    }
    char rails[64] = "", doms[160] = "";
    for (int r = 0; r < R; r++)
        snprintf(rails + strlen(rails), sizeof(rails) - strlen(rails), "%s%d", r ? "," : "",
                 s->rk[out->rail[r]]);
    for (int i = 0; i < k && relays; i++)
        if (s->dl[i] == i)
            snprintf(doms + strlen(doms), sizeof(doms) - strlen(doms), "%s%s%d:%d",
                     doms[0] ? " " : "", pol == TC_LEAD_NUMA ? "N" : "P", s->dof[i], s->rk[i]);
    printf("  %-8s node %2d: leader %3d  rails {%s}  domain leaders {%s}  %s%.1f MiB across\n",
           tc_lead_policy_name((tc_lead_policy_t)pol), n, s->rk[out->leader], rails,
           relays ? doms : "-", root_here ? "(root) " : "", x / (1 << 20));
    return x;
}

/* The NICs, and under each policy of TOPOCOLL_LEADERS: every node's
 * leaders (from what its processes reported to the election, re-run
 * here) and the bytes a Bcast of @bytes from rank 0 moves across the
 * inter-socket links (tc_lead_link_bytes).  Collective; prints on rank 0. */
static void nuioa_report(const tc_ctx_t *c, size_t bytes)
{
    const tc_nodemap_t *m = &c->map;
    int size = m->size;
    tc_lead_in_t *all = m->rank == 0 ? malloc(sizeof(tc_lead_in_t) * (size_t)size) : NULL;
    MPI_Gather(&m->lead_in[m->lrank], (int)sizeof(tc_lead_in_t), MPI_BYTE, all,
               (int)sizeof(tc_lead_in_t), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (m->rank != 0) return;
    const tc_nics_t *nics = tc_nics_process();
    nics_report(nics, all, size);
    printf("leaders by policy (TOPOCOLL_LEADERS, now %s) and a %zu B Bcast from rank 0: bytes "
           "across the "
           "inter-socket links per node (model, tc_lead_link_bytes)\n",
           tc_lead_policy_name(m->policy), bytes);
    const int nn = m->nnodes;
    lead_scratch_t s = {
        malloc(sizeof(tc_lead_in_t) * (size_t)size), malloc(sizeof(int) * (size_t)size),
        malloc(sizeof(int) * (size_t)size),          malloc(sizeof(int) * (size_t)size),
        malloc(sizeof(int) * (size_t)size),          malloc(sizeof(int) * (size_t)size)
    };
    for (int pol = TC_LEAD_AUTO; pol <= TC_LEAD_PACKAGE; pol++) {
        tc_lead_out_t out[64];
        int R = TC_RAIL_MAX;
        for (int n = 0; n < nn && n < 64; n++) {
            int k = 0;
            for (int r = 0; r < size; r++)
                if (m->node_of[r] == n) s.in[k++] = all[r];
            tc_lead_elect((tc_lead_policy_t)pol, s.in, k, &out[n], NULL, NULL);
            if (out[n].nrails < R) R = out[n].nrails;
        }
        R = nn < 2 ? 1 : tc_lead_rails_used(R, bytes, c->cfg->multileader_min);
        double total = 0;
        for (int n = 0; n < nn && n < 64; n++)
            total += node_report(c, pol, n, R, bytes, all, nics, &s, &out[n]);
        printf("  %-8s all nodes: %.1f MiB across the inter-socket links\n",
               tc_lead_policy_name((tc_lead_policy_t)pol), total / (1 << 20));
    }
    free(s.in);
    free(s.rk);
    free(s.dl);
    free(s.dof);
    free(s.src);
    free(s.pkg);
    free(all);
}

/* --comm-cores C: where each rank's progress thread goes under each
 * placement (nbc/progress: bind, numa = eq. 1, odd-even = eq. 2), on the
 * process topology (emulated or this host) and binding.  Collective. */
static void placement_report(const tc_ctx_t *c, int comm_cores, int rank, int size)
{
    const tc_topo_t *t = tc_topo_process();
    int mine[3] = { -1, -1, -1 };
    for (int p = 0; p < 3 && t && c && c->enabled; p++) {
        hwloc_obj_t core = tc_progress_place(t->hw, c->map.bound, c->map.cpuset, c->map.lrank,
                                             c->map.lsize, comm_cores, (tc_place_policy_t)p);
        mine[p] = core ? (int)core->logical_index : -1;
    }
    int *all = rank == 0 ? malloc(sizeof(int) * 3 * (size_t)size) : NULL;
    MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("progress-thread placement (TOPOCOLL_PROGRESS_PLACEMENT; %d communication core(s) "
               "per node; "
               "core logical index per rank):\n",
               comm_cores);
        for (int p = 0; p < 3; p++) {
            printf("  %-9s", tc_place_name((tc_place_policy_t)p));
            for (int r = 0; r < size; r++) printf(" %d", all[3 * r + p]);
            printf("\n");
        }
    }
    free(all);
}

/* ---- Options: parsed before MPI_Init ------------------------------------------ */

#define MAXSIZES 64

typedef struct opts {
    size_t model;           /* --model SIZE: the Bcast of the NUIOA count */
    int comm_cores;         /* --comm-cores C: the split-tree model's table, -1 = none */
    int config, markdown;   /* --config [--markdown] */
    size_t sizes[MAXSIZES]; /* SIZE...: the message sizes of the methods' table */
    int nsizes;
    info_model_t cost; /* --model NxP: the cost model (no MPI), cost.nodes > 0 */
} opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -np N topocoll_info [--model SIZE] [--comm-cores C] [SIZE...]\n"
            "       topocoll_info --config [--markdown]\n"
            "       topocoll_info --model NODESxPPN [--link RATE] [--alpha US]\n"
            "                     [--switches S[:UPLINK]] [--emulate CORES:SCHED_US:CPU_MBPS]\n"
            "                     [--check CSV [--fit[=K]]] [SIZE...]\n"
            "       topocoll_info --help | --version\n"
            "\n"
            "What topocoll sees and decides for this run: topology, binding, (virtual) nodes and\n"
            "leaders, intra-node transfers, the method of each collective per message SIZE\n"
            "(bytes, K/M/G suffixes; default 8 4K 16K 64K 256K 1M 16M), the network interfaces\n"
            "and the leaders of every TOPOCOLL_LEADERS policy.\n"
            "\n"
            "  --model SIZE      Bcast size of the inter-socket link count (default 4M)\n"
            "  --model NxP       no MPI: the cost model's time of each collective, native and\n"
            "                    topocoll, on N nodes of P processes (SIZE...: default 8 64K 1M\n"
            "                    4M; docs/scaling.md)\n"
            "  --link RATE       the nodes' link in bits/s (1G, 100M; default 1G)\n"
            "  --alpha US        latency of a message between nodes (default 25)\n"
            "  --switches S[:R]  the nodes under S leaf switches (N / S consecutive nodes\n"
            "                    each), each switch's uplink at R bits/s (default: unlimited)\n"
            "  --emulate C:S:M   emulated hosts sharing C cores: S us more per message and\n"
            "                    process beyond a core, M MB/s through all links together\n"
            "  --check CSV       the model against scripts/scale_bench.sh's summary CSV\n"
            "  --fit[=K]         with --check: --alpha and --emulate's S and M (2 cores unless\n"
            "                    given) fitted on the Bcast rows (of at most K hosts)\n"
            "  --comm-cores C    also the split-tree model's table and the progress threads'\n"
            "                    placement for C communication cores per node\n"
            "  --config          every TOPOCOLL_* parameter: default, value now and its source\n"
            "                    (no mpiexec needed)\n"
            "  --markdown        with --config: the markdown table of docs/tuning.md\n"
            "  -h, --help        this help\n"
            "  -V, --version     the version\n");
}

/* The cost model's options and --model SIZE (parse_opts): 0, or -1 (message printed). */
static int parse_model_opt(int ch, const char *arg, opts_t *o)
{
    long long v;
    char *end;
    switch (ch) {
    case 'm':
        if (strchr(arg, 'x') || strchr(arg, 'X')) {
            if (info_model_shape(arg, &o->cost) != 0) {
                fprintf(stderr, "topocoll_info: --model %s: NODESxPPN (32x24), at most %d ranks\n",
                        arg, TC_COST_MAX_RANKS);
                return -1;
            }
            return 0;
        }
        if ((v = tc_parse_size(arg)) < 1) {
            fprintf(stderr,
                    "topocoll_info: --model %s: not a size in bytes (K/M/G suffixes) nor "
                    "NODESxPPN\n",
                    arg);
            return -1;
        }
        o->model = (size_t)v;
        return 0;
    case 'l':
        if ((o->cost.link_bps = tc_parse_rate(arg)) < 0) {
            fprintf(stderr, "topocoll_info: --link %s: a rate in bits/s (1G, 100M)\n", arg);
            return -1;
        }
        return 0;
    case 'a':
        o->cost.alpha_us = strtod(arg, &end);
        if (end == arg || *end || !(o->cost.alpha_us > 0) || o->cost.alpha_us > 1e6) {
            fprintf(stderr, "topocoll_info: --alpha %s: microseconds above 0\n", arg);
            return -1;
        }
        return 0;
    case 's': {
        long sw = strtol(arg, &end, 10);
        if (end == arg || (*end && *end != ':') || sw < 1 || sw > TC_COST_MAX_RANKS ||
            (*end == ':' && (o->cost.uplink_bps = tc_parse_rate(end + 1)) <= 0)) {
            fprintf(stderr,
                    "topocoll_info: --switches %s: S[:UPLINK], S leaf switches (at least 1), "
                    "the uplink a rate in bits/s (2:50M)\n",
                    arg);
            return -1;
        }
        o->cost.switches = (int)sw;
        return 0;
    }
    case 'e': o->cost.emulate = arg; break;
    case 'k': o->cost.check = arg; break;
    default: /* --fit[=MAXHOSTS] */
        o->cost.fit = 1;
        if (arg) {
            long v = strtol(arg, &end, 10);
            if (end == arg || *end || v < 2 || v > (1L << 20)) {
                fprintf(stderr, "topocoll_info: --fit=%s: a host count of at least 2\n", arg);
                return -1;
            }
            o->cost.fit_hosts = (int)v;
        }
        break;
    }
    return 0;
}

/* The cost model's options given without what they go with (message printed): 1. */
static int model_opts_apart(const opts_t *o, int cost_opt)
{
    if ((cost_opt && o->cost.nodes == 0 && !o->cost.check) || (o->cost.fit && !o->cost.check)) {
        fprintf(stderr, "topocoll_info: --link, --alpha, --emulate go with --model NxP or --check; "
                        "--fit with --check\n");
        return 1;
    }
    if (o->cost.switches && (o->cost.check || o->cost.nodes == 0)) {
        fprintf(stderr, "topocoll_info: --switches goes with --model NxP (a --check CSV's rows "
                        "have one level)\n");
        return 1;
    }
    return 0;
}

/* topocoll_info's long options (parse_opts) */
static const struct option info_opts[] = { { "model", required_argument, 0, 'm' },
                                           { "link", required_argument, 0, 'l' },
                                           { "alpha", required_argument, 0, 'a' },
                                           { "emulate", required_argument, 0, 'e' },
                                           { "switches", required_argument, 0, 's' },
                                           { "check", required_argument, 0, 'k' },
                                           { "fit", optional_argument, 0, 'f' },
                                           { "comm-cores", required_argument, 0, 'c' },
                                           { "config", no_argument, 0, 'C' },
                                           { "markdown", no_argument, 0, 'M' },
                                           { "help", no_argument, 0, 'h' },
                                           { "version", no_argument, 0, 'V' },
                                           { 0, 0, 0, 0 } };

/* 0: run; 1: done (exit 0); -1: bad usage (message printed, exit 2). */
static int parse_opts(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){ .model = 4u << 20, .comm_cores = -1, .cost = { .link_bps = 1e9 } };
    int cost_opt = 0; /* --link, --alpha, --switches, --emulate, --check, --fit seen */
    int ch;
    long long v;
    char *end;
    opterr = 0; /* our messages, on stderr */
    while ((ch = getopt_long(argc, argv, ":hV", info_opts, NULL)) != -1) {
        switch (ch) {
        case 'h': usage(stdout); return 1;
        case 'V': printf("topocoll_info (topocoll) %s\n", TOPOCOLL_VERSION); return 1;
        case 'C': o->config = 1; break;
        case 'M': o->markdown = 1; break;
        case 'm':
        case 'l':
        case 'a':
        case 'e':
        case 's':
        case 'k':
        case 'f':
            if (parse_model_opt(ch, optarg, o) != 0) return -1;
            cost_opt |= ch != 'm';
            break;
        case 'c':
            v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 4096) {
                fprintf(stderr, "topocoll_info: --comm-cores %s: not an integer in [0, 4096]\n",
                        optarg);
                return -1;
            }
            o->comm_cores = (int)v;
            break;
        default:
            fprintf(stderr, "topocoll_info: %s: %s\n", argv[optind - 1],
                    ch == ':' ? "missing value" : "unknown option");
            return -1;
        }
    }
    if (model_opts_apart(o, cost_opt)) return -1;
    if (o->markdown && !o->config) {
        fprintf(stderr, "topocoll_info: --markdown goes with --config\n");
        return -1;
    }
    for (int a = optind; a < argc; a++) {
        if (o->config) {
            fprintf(stderr, "topocoll_info: %s: --config takes no sizes\n", argv[a]);
            return -1;
        }
        if ((v = tc_parse_size(argv[a])) < 1) {
            fprintf(stderr, "topocoll_info: %s: not a size in bytes (K/M/G suffixes)\n", argv[a]);
            return -1;
        }
        if (o->nsizes == MAXSIZES) {
            fprintf(stderr, "topocoll_info: at most %d sizes\n", MAXSIZES);
            return -1;
        }
        o->sizes[o->nsizes++] = (size_t)v;
    }
    return 0;
}

/* A markdown table cell: '|' escaped. */
static void md_cell(const char *s, int code)
{
    printf(" %s", code ? "`" : "");
    for (; *s; s++) {
        if (*s == '|') putchar('\\');
        putchar(*s);
    }
    printf("%s |", code ? "`" : "");
}

/* --config: base/config's table, this process's values (no MPI). */
static void print_config(int markdown)
{
    int n = tc_config_nparams();
    if (markdown) {
        printf("| variable | default | meaning |\n|---|---|---|\n");
        for (int i = 0; i < n; i++) {
            const tc_param_t *p = tc_config_param(i);
            printf("|");
            md_cell(p->name, 1);
            md_cell(p->dflt, p->kind != TC_PARAM_STRING);
            md_cell(p->desc, 0);
            printf("\n");
        }
        return;
    }
    printf("topocoll %s: %d parameters, read once per process from the environment (this process's "
           "values)\n",
           TOPOCOLL_VERSION, n);
    for (int i = 0; i < n; i++) {
        const tc_param_t *p = tc_config_param(i);
        int str = p->kind == TC_PARAM_STRING, unset = str && !p->value[0];
        printf("%s (current value: %s%s%s, data source: %s, default: %s%s%s, type: %s%s%s)\n",
               p->name, unset ? "" : "\"", unset ? "unset" : p->value, unset ? "" : "\"", p->source,
               str ? "unset = " : "\"", p->dflt, str ? "" : "\"", tc_param_kind_name(p->kind),
               p->allowed[0] ? ", allowed: " : "", p->allowed);
        printf("    %s\n", p->desc);
    }
}

/* This rank's line of the ranks' table into @line, and, on a node's
 * leader, the node's mechanism line into @mech ("" elsewhere). */
static void rank_lines(const tc_ctx_t *c, const topocoll_comm_info_t *info, int rank,
                       char line[LINE], char mech[LINE])
{
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int hl;
    MPI_Get_processor_name(host, &hl);
    if (c && c->enabled) {
        char cpus[96], place[128];
        hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), c->map.cpuset);
        tc_place_format(&c->map.place, place, sizeof(place));
        snprintf(line, LINE,
                 "  rank %3d  host %-12.12s node %2d (vnode %d)  local %2d/%-2d %-6s  cpus "
                 "%-10.96s %.128s",
                 rank, host, c->map.node, c->map.vnode, c->map.lrank, c->map.lsize,
                 c->map.lrank == c->map.leader_lrank ? "leader" : "",
                 c->map.bound ? cpus : "(unbound)", place);
    } else {
        snprintf(line, LINE, "  rank %3d  host %.64s: topocoll disabled (%.128s)", rank, host,
                 info->mechanism_why);
    }
    /* Per node: the mechanism and why, from each node's leader. */
    mech[0] = 0;
    if (c && c->enabled && c->map.lrank == c->map.leader_lrank)
        snprintf(mech, LINE,
                 "  node %2d: %d processes, leader rank %d, intra-node transfers: %s (%.128s)",
                 info->node, info->local_size, info->leader,
                 info->single_copy ? "single copy (CMA)" : "copy-in/copy-out", info->mechanism_why);
}

/* Rank 0: the topology, the binding, the nodes and every rank's line
 * (@mechs, @all, @paths: the gathered lines, LINE bytes per rank). */
static void print_summary(const tc_ctx_t *c, const topocoll_comm_info_t *info, int size,
                          const char *mechs, const char *all, const char *paths)
{
    const tc_config_t *cfg = tc_config_get();
    const tc_topo_t *t = tc_topo_process();
    printf("topocoll %d.%d\n", TOPOCOLL_VERSION_MAJOR, TOPOCOLL_VERSION_MINOR);
    printf("topology: %s%s\n", t ? t->source : "(hwloc failed)",
           t && t->emulated ? " (emulated, TOPOCOLL_TOPOLOGY)" : "");
    if (t) {
        printf("  levels:");
        for (int l = TC_LVL_PACKAGE; l < TC_NLEVELS; l++)
            printf(" %s x%d", tc_level_name(l), t->nobjs[l]);
        printf("\n");
    }
    printf("binding: %s\n", c && c->enabled ? c->map.binding : "-");
    printf("virtual nodes per host: %d (%s order)%s\n", cfg->virtual_nodes,
           cfg->vn_order == TC_VN_CYCLIC ? "cyclic" : "block",
           cfg->virtual_nodes > 1 ? " (emulated, TOPOCOLL_VIRTUAL_NODES)" : "");
    printf("single copy requested: %s\n", cfg->single_copy == TC_SC_NONE  ? "none"
                                          : cfg->single_copy == TC_SC_CMA ? "cma"
                                                                          : "auto");
    printf("nodes: %d, processes: %d\n", info->nnodes, size);
    for (int r = 0; r < size; r++)
        if (mechs[(size_t)r * LINE]) printf("%s\n", mechs + (size_t)r * LINE);
    printf("ranks:\n");
    for (int r = 0; r < size; r++) printf("%s\n", all + (size_t)r * LINE);
    printf("hardware hierarchy (levels of MPI_COMM_TYPE_HW_UNGUIDED / PHYSICAL_TOPOLOGY, top "
           "first):\n");
    for (int r = 0; r < size; r++) printf("  rank %3d  %s\n", r, paths + (size_t)r * LINE);
}

/* Rank 0, topocoll enabled: the physical ring and the methods each
 * collective takes for the message sizes of @o (default: a few). */
static void print_methods(const tc_ctx_t *c, opts_t *o, int size)
{
    printf("physical ring (Allgather):");
    for (int i = 0; i < size; i++) printf(" %d", c->map.ring[i]);
    printf("\n");
    static const size_t dflt[] = { 8, 4096, 16384, 65536, 262144, 1 << 20, 16 << 20 };
    size_t *sizes = o->sizes;
    int ns = o->nsizes;
    if (ns == 0)
        for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) sizes[ns++] = dflt[i];
    plan_table(c, sizes, ns);
    printf("methods by message size (reductions: MPI_DOUBLE/MPI_SUM; allgather, gather, "
           "scatter, alltoall: block per rank):\n");
    for (int i = 0; i < ns; i++) {
        printf("  %zu B:\n", sizes[i]);
        bcast_method(c, sizes[i]);
        reduce_methods(c, sizes[i]);
        allgather_method(c, sizes[i]);
        exchange_methods(c, sizes[i]);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    opts_t o;
    int pr = parse_opts(argc, argv, &o);
    if (pr > 0) return 0;
    if (pr < 0) {
        fprintf(stderr, "Try 'topocoll_info --help'.\n");
        return 2;
    }
    if (o.config) {
        print_config(o.markdown);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (o.cost.nodes > 0 || o.cost.check) {
        o.cost.sizes = o.sizes;
        o.cost.nsizes = o.nsizes;
        int rc = info_model_run(&o.cost);
        return fflush(stdout) == 0 ? rc : 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    topocoll_comm_attach(MPI_COMM_WORLD);
    tc_ctx_t *c = tc_ctx_lookup(MPI_COMM_WORLD);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(MPI_COMM_WORLD, &info);

    size_t model = o.model;
    int comm_cores = o.comm_cores;
    char line[LINE], mech[LINE];
    rank_lines(c, &info, rank, line, mech);
    char *all = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    char *mechs = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    MPI_Gather(mech, LINE, MPI_CHAR, mechs, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    char hpath[LINE];
    tc_hpath_format(hpath, sizeof(hpath));
    char *paths = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    MPI_Gather(hpath, LINE, MPI_CHAR, paths, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        print_summary(c, &info, size, mechs, all, paths);
        if (c && c->enabled) print_methods(c, &o, size);
        free(all);
        free(mechs);
        free(paths);
    }
    fflush(stdout);
    if (c && c->enabled) nuioa_report(c, model);
    if (rank == 0 && comm_cores >= 0) split_tree_table(size, comm_cores);
    fflush(stdout);
    if (comm_cores >= 0) placement_report(c, comm_cores, rank, size);
    MPI_Finalize();
    return 0;
}
