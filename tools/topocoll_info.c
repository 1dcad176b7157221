/*
 * tools/topocoll_info -- what topocoll sees and decides for a run:
 * topology (real or emulated), each rank's binding and place in the node's
 * hierarchy, the (virtual) nodes and their leaders, the intra-node transfer
 * mechanism and why, the physical ring order, and the method each
 * collective (Bcast, Reduce, Allreduce, Allgather) chooses per message
 * size: the sizes given as arguments (bytes, K/M suffixes allowed), or a
 * default list.  Reductions are shown for MPI_DOUBLE/MPI_SUM, Allgather
 * sizes are per-rank blocks.
 *
 *   mpirun -np 4 env TOPOCOLL_TOPOLOGY=x.xml TOPOCOLL_BINDING=socket-rr \
 *          TOPOCOLL_VIRTUAL_NODES=2 topocoll_info [SIZE...]
 *
 * May call: the native API and the internal headers (read-only).
 */
#include "topocoll.h"

#include "base/config.h"
#include "coll/allgather.h"
#include "coll/allreduce.h"
#include "coll/bcast.h"
#include "coll/ctx.h"
#include "coll/reduce.h"
#include "hier/hier.h"
#include "topo/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 512

static void bcast_method(const tc_ctx_t *c, size_t b)
{
    int sc = tc_bcast_uses_single_copy(c, b);
    printf("    bcast      %s", !sc ? "CICO (shared segment)"
           : c->map.nnodes == 1 && b >= c->cfg->bcast_share_min ? "single copy, root writes 1/n of each receiver"
           : "single copy");
    if (c->map.nnodes > 1)
        printf(", binomial tree over %d leaders, %zu B segments (root 0)", c->map.nnodes, tc_bcast_segsize(c, b, 0));
    printf("\n");
}

static void reduce_methods(const tc_ctx_t *c, size_t b)
{
    tc_rtype_t t;
    tc_op_classify(MPI_DOUBLE, MPI_SUM, &t);
    size_t n = b / sizeof(double);
    const tc_nodemap_t *m = &c->map;
    if (n == 0) { printf("    reduce     (under one double)\n"); return; }
    if (tc_fold_uses_cico(c, b))
        printf("    reduce     CICO: %s\n", m->nnodes == 1 ? "every process folds a slice out of the slots, the root copies them"
                                                        : "leaders fold their node, PMPI_Reduce between leaders");
    else if (!c->all_sc)
        printf("    reduce     native MPI (no single copy above the CICO size)\n");
    else if (m->nnodes == 1)
        printf("    reduce     single copy: %d workers fold slices (root 2x) into the root's buffer, %zu B segments\n",
               m->lsize, tc_fold_segsize(c, &t, n, m->lsize) * t.extent);
    else
        printf("    reduce     HierKNEM Alg. 2: %d worker(s) per node fold by single copy into the leader's buffer, "
               "leaders reduce %zu B segments over MPI\n", m->lsize > 1 ? m->lsize - 1 : 1,
               tc_fold_segsize(c, &t, n, 1) * t.extent);
    if (tc_fold_uses_cico(c, b))
        printf("    allreduce  CICO: %s\n", m->nnodes == 1 ? "reduce-scatter and allgather through the slots"
                                                        : "leaders fold their node, reduce + bcast between leaders");
    else if (!c->all_sc)
        printf("    allreduce  native MPI (no single copy above the CICO size)\n");
    else
        printf("    allreduce  single copy: %d workers fold pieces and write them into every peer, %zu B segments%s\n",
               m->nnodes > 1 ? c->minlocal : m->lsize,
               tc_fold_segsize(c, &t, n, m->nnodes > 1 ? c->minlocal : m->lsize) * t.extent,
               m->nnodes > 1 ? "; each piece reduced + broadcast over its slice communicator" : "");
}

static void allgather_method(const tc_ctx_t *c, size_t b)
{
    int alg = tc_allgather_alg(c, b);
    if (alg != TC_AG_USE_CICO && !c->all_sc) printf("    allgather  native MPI (no single copy)\n");
    else printf("    allgather  %s\n", tc_allgather_alg_name(alg));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    topocoll_comm_attach(MPI_COMM_WORLD);
    const tc_config_t *cfg = tc_config_get();
    tc_ctx_t *c = tc_ctx_lookup(MPI_COMM_WORLD);
    topocoll_comm_info_t info;
    topocoll_comm_query(MPI_COMM_WORLD, &info);

    char line[LINE], host[MPI_MAX_PROCESSOR_NAME] = "";
    int hl;
    MPI_Get_processor_name(host, &hl);
    if (c && c->enabled) {
        char cpus[96], place[128];
        hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), c->map.cpuset);
        tc_place_format(&c->map.place, place, sizeof(place));
        snprintf(line, LINE, "  rank %3d  host %-12.12s node %2d (vnode %d)  local %2d/%-2d %-6s  cpus %-10.96s %.128s",
                 rank, host, c->map.node, c->map.vnode, c->map.lrank, c->map.lsize,
                 c->map.lrank == 0 ? "leader" : "", c->map.bound ? cpus : "(unbound)", place);
    } else {
        snprintf(line, LINE, "  rank %3d  host %.64s: topocoll disabled (%.128s)", rank, host, info.mechanism_why);
    }
    char *all = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);

    /* Per node: the mechanism and why, from each node's leader. */
    char mech[LINE] = "";
    if (c && c->enabled && c->map.lrank == 0)
        snprintf(mech, LINE, "  node %2d: %d processes, leader rank %d, intra-node transfers: %s (%.128s)",
                 info.node, info.local_size, info.leader,
                 info.single_copy ? "single copy (CMA)" : "copy-in/copy-out", info.mechanism_why);
    char *mechs = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    MPI_Gather(mech, LINE, MPI_CHAR, mechs, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    char hpath[LINE];
    tc_hpath_format(hpath, sizeof(hpath));
    char *paths = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    MPI_Gather(hpath, LINE, MPI_CHAR, paths, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        const tc_topo_t *t = tc_topo_process();
        printf("topocoll %d.%d\n", TOPOCOLL_VERSION_MAJOR, TOPOCOLL_VERSION_MINOR);
        printf("topology: %s%s\n", t ? t->source : "(hwloc failed)",
               t && t->emulated ? " (emulated, TOPOCOLL_TOPOLOGY)" : "");
        if (t) {
            printf("  levels:");
            for (int l = TC_LVL_PACKAGE; l < TC_NLEVELS; l++) printf(" %s x%d", tc_level_name(l), t->nobjs[l]);
            printf("\n");
        }
        printf("binding: %s\n", c && c->enabled ? c->map.binding : "-");
        printf("virtual nodes per host: %d (%s order)%s\n", cfg->virtual_nodes,
               cfg->vn_order == TC_VN_CYCLIC ? "cyclic" : "block",
               cfg->virtual_nodes > 1 ? " (emulated, TOPOCOLL_VIRTUAL_NODES)" : "");
        printf("single copy requested: %s\n",
               cfg->single_copy == TC_SC_NONE ? "none" : cfg->single_copy == TC_SC_CMA ? "cma" : "auto");
        printf("nodes: %d, processes: %d\n", info.nnodes, size);
        for (int r = 0; r < size; r++)
            if (mechs[(size_t)r * LINE]) printf("%s\n", mechs + (size_t)r * LINE);
        printf("ranks:\n");
        for (int r = 0; r < size; r++) printf("%s\n", all + (size_t)r * LINE);
        printf("hardware hierarchy (levels of MPI_COMM_TYPE_HW_UNGUIDED / PHYSICAL_TOPOLOGY, top first):\n");
        for (int r = 0; r < size; r++) printf("  rank %3d  %s\n", r, paths + (size_t)r * LINE);
        if (c && c->enabled) {
            printf("physical ring (Allgather):");
            for (int i = 0; i < size; i++) printf(" %d", c->map.ring[i]);
            printf("\n");
            static const size_t dflt[] = { 8, 4096, 16384, 65536, 262144, 1 << 20, 16 << 20 };
            size_t sizes[64];
            int ns = 0;
            for (int a = 1; a < argc && ns < 64; a++) {
                long long v = tc_parse_size(argv[a]);
                if (v > 0) sizes[ns++] = (size_t)v;
                else fprintf(stderr, "topocoll_info: %s: not a size, ignored\n", argv[a]);
            }
            if (ns == 0) for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) sizes[ns++] = dflt[i];
            printf("methods by message size (reductions: MPI_DOUBLE/MPI_SUM; allgather: block per rank):\n");
            for (int i = 0; i < ns; i++) {
                printf("  %zu B:\n", sizes[i]);
                bcast_method(c, sizes[i]);
                reduce_methods(c, sizes[i]);
                allgather_method(c, sizes[i]);
            }
        }
        free(all);
        free(mechs);
        free(paths);
    }
    MPI_Finalize();
    return 0;
}
