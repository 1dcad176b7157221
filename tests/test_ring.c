/*
 * test_ring -- the physical ring of the Allgather (HierKNEM section 3.4):
 * along the ring, consecutive processes change node exactly once per node
 * boundary, and inside a node change package exactly (packages used - 1)
 * times, whatever the rank placement (binding policies, virtual nodes,
 * cyclic order).  Checked against every rank's place as topocoll sees it.
 */
#include "topocoll.h"

#include "coll/ctx.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    topocoll_comm_attach(MPI_COMM_WORLD);
    tc_ctx_t *c = tc_ctx_lookup(MPI_COMM_WORLD);
    if (!c || !c->enabled) {
        if (rank == 0) printf("test_ring: topocoll disabled\n");
        MPI_Finalize();
        return 1;
    }
    int mine[2] = { c->map.node, c->map.place.idx[TC_LVL_PACKAGE] },
        *all = malloc(sizeof(int) * 2 * (size_t)size);
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    const int *ring = c->map.ring;
    int node_changes = 0, pkg_changes = 0, want_pkg = 0;
    for (int i = 0; i < size; i++) {
        int a = ring[i], b = ring[(i + 1) % size];
        if (all[2 * a] != all[2 * b])
            node_changes++;
        else if (all[2 * a + 1] != all[2 * b + 1] && size > 1)
            pkg_changes++;
    }
    for (int n = 0; n < c->map.nnodes; n++) { /* packages used on node n */
        int used[4096] = { 0 }, k = 0;
        for (int r = 0; r < size; r++)
            if (all[2 * r] == n && all[2 * r + 1] >= 0 && all[2 * r + 1] < 4096 &&
                !used[all[2 * r + 1]]++)
                k++;
        want_pkg += k > 1 ? k - 1 : 0;
    }
    /* one node: the ring closes inside it, one more package change */
    if (c->map.nnodes == 1 && want_pkg > 0) want_pkg++;
    int want_node = c->map.nnodes > 1 ? c->map.nnodes : 0;
    if (node_changes != want_node || pkg_changes != want_pkg) bad = 1;
    int seen[1 << 12] = { 0 }; /* a permutation of the ranks */
    for (int i = 0; i < size && size < (1 << 12); i++)
        if (ring[i] < 0 || ring[i] >= size || seen[ring[i]]++) bad = 1;
    if (rank == 0) printf("test_ring np=%d nodes=%d: ring", size, c->map.nnodes);
    for (int i = 0; rank == 0 && i < size; i++) printf(" %d", ring[i]);
    if (rank == 0)
        printf("; node changes %d (want %d), package changes %d (want %d): %s\n", node_changes,
               want_node, pkg_changes, want_pkg, bad ? "FAIL" : "ok");
    free(all);
    MPI_Finalize();
    return bad;
}
