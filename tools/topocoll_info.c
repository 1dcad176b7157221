/*
 * tools/topocoll_info -- what topocoll sees and decides for a run:
 * topology (real or emulated), each rank's binding and place in the node's
 * hierarchy, the (virtual) nodes and their leaders, the intra-node transfer
 * mechanism and why, and the Bcast method per message size.
 *
 *   mpirun -np 4 env TOPOCOLL_TOPOLOGY=x.xml TOPOCOLL_BINDING=socket-rr \
 *          TOPOCOLL_VIRTUAL_NODES=2 topocoll_info
 *
 * May call: the native API and the internal headers (read-only).
 */
#include "topocoll.h"

#include "base/config.h"
#include "coll/bcast.h"
#include "coll/ctx.h"
#include "topo/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 512

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
        if (c && c->enabled) {
            printf("bcast method by message size (this node):\n");
            static const size_t sizes[] = { 1, 4096, 16384, 16385, 32768, 65536, 1 << 20, 16 << 20 };
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                size_t b = sizes[i];
                int sc = tc_bcast_uses_single_copy(c, b);
                printf("  %9zu B: %s", b, !sc ? "CICO (shared segment)"
                       : info.nnodes == 1 && b >= cfg->bcast_share_min ? "single copy, root writes 1/n of each receiver"
                       : "single copy");
                if (info.nnodes > 1)
                    printf(", binomial tree over %d leaders, %zu B segments (root 0)", info.nnodes,
                           tc_bcast_segsize(c, b, 0));
                printf("\n");
            }
        }
        free(all);
        free(mechs);
    }
    MPI_Finalize();
    return 0;
}
