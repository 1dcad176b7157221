/*
 * test_nuioa -- NIC-aware leader election (NUIOA paper, section 3.2) across
 * processes, under the policy, NICs, topology, binding and virtual nodes
 * of the environment (TOPOCOLL_LEADERS, TOPOCOLL_NIC, TOPOCOLL_TOPOLOGY,
 * TOPOCOLL_BINDING, TOPOCOLL_VIRTUAL_NODES).
 *
 * The reference is computed here from hwloc directly: the NICs are the
 * OS devices named by TOPOCOLL_NIC (else the OpenFabrics ones), a NIC's
 * locality is its non-I/O ancestor's cpuset, and each process's binding
 * comes from topocoll_location().  Per node, the leader must be the lowest
 * rank among the closest processes (inside the locality, else in the
 * NIC's package, else anywhere; unbound processes last), rail r's leader
 * the closest to NIC r among those not elected for a lower rail, and the
 * domain leaders (policy package/numa/auto) the node leader in its own
 * package or NUMA node and the lowest rank elsewhere.  Every process of a
 * node must agree, and a 1 MiB Bcast from rank 0 must reach each other
 * node through its (rail) leaders only: they alone receive from the
 * network, and every byte arrives once.
 *
 *   mpirun -np 8 env TOPOCOLL_TOPOLOGY=x.xml TOPOCOLL_BINDING=socket-rr \
 *          TOPOCOLL_VIRTUAL_NODES=2 test_nuioa
 */
#include "topocoll.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int wrank;

#define MAXNIC 4
typedef struct {
    int rank, node, bound;
    char cpus[256];
} proc_t;

/* Closeness of @set to a NIC whose locality is @nic: 0 inside, 1 in its
 * package, 2 elsewhere, 3 unbound (the library's scores, coarser). */
static int closeness(hwloc_topology_t hw, hwloc_const_bitmap_t nic, hwloc_const_bitmap_t set,
                     int bound)
{
    if (!bound) return 3;
    if (hwloc_bitmap_isincluded(set, nic)) return 0;
    hwloc_obj_t pkg = hwloc_get_next_obj_covering_cpuset_by_type(hw, nic, HWLOC_OBJ_PACKAGE, NULL);
    if (pkg && hwloc_bitmap_isincluded(set, pkg->cpuset)) return 1;
    return 2;
}

/* Logical index of the @type object containing @set, -1 if none. */
static int domain(hwloc_topology_t hw, hwloc_obj_type_t type, hwloc_const_bitmap_t set)
{
    int n = hwloc_get_nbobjs_by_type(hw, type);
    for (int i = 0; i < n; i++)
        if (hwloc_bitmap_isincluded(set, hwloc_get_obj_by_type(hw, type, (unsigned)i)->cpuset))
            return i;
    return -1;
}

/* The NICs' localities, in rail order: TOPOCOLL_NIC's names (one per
 * PCI device), else every OpenFabrics device. */
static int nic_sets(hwloc_topology_t hw, hwloc_bitmap_t *out)
{
    const char *f = getenv("TOPOCOLL_NIC");
    int n = 0;
    hwloc_obj_t seen[MAXNIC] = { NULL };
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", f ? f : "");
    char *save = NULL, *tok = f ? strtok_r(buf, ",", &save) : NULL;
    for (hwloc_obj_t o = hwloc_get_next_osdev(hw, NULL); n < MAXNIC;) {
        hwloc_obj_t pick = NULL;
        if (f) {
            if (!tok) break;
            for (hwloc_obj_t d = hwloc_get_next_osdev(hw, NULL); d; d = hwloc_get_next_osdev(hw, d))
                if (d->name && strcmp(d->name, tok) == 0) pick = d;
            tok = strtok_r(NULL, ",", &save);
        } else {
            if (!o) break;
            if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) pick = o;
            o = hwloc_get_next_osdev(hw, o);
        }
        if (!pick) continue;
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= seen[i] == pick->parent;
        if (dup) continue;
        seen[n] = pick->parent;
        out[n++] = hwloc_bitmap_dup(hwloc_get_non_io_ancestor_obj(hw, pick)->cpuset);
    }
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    tc_rank = wrank;
    tc_print_max = 39;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    topocoll_comm_attach(MPI_COMM_WORLD);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_location_t loc;
    if (topocoll_comm_query(MPI_COMM_WORLD, &info) != MPI_SUCCESS || !info.enabled ||
        topocoll_location(&loc) != MPI_SUCCESS) {
        CHECK(size == 1, "not attached");
        MPI_Finalize();
        return tc_failures != 0;
    }
    hwloc_topology_t hw;
    hwloc_topology_init(&hw);
    const char *xml = getenv("TOPOCOLL_TOPOLOGY");
    if (xml) hwloc_topology_set_xml(hw, xml);
    hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_load(hw);
    hwloc_bitmap_t nics[MAXNIC];
    int nn = nic_sets(hw, nics);
    const char *pol = getenv("TOPOCOLL_LEADERS") ? getenv("TOPOCOLL_LEADERS") : "auto";
    CHECK(strcmp(info.leaders_policy, pol) == 0, "policy %s, want %s", info.leaders_policy, pol);

    /* everybody's node, binding and view of the leaders */
    proc_t me = { wrank, info.node, loc.bound, "" }, *all = malloc(sizeof(proc_t) * (size_t)size);
    snprintf(me.cpus, sizeof(me.cpus), "%s", loc.cpuset);
    MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
    int view[2 + TOPOCOLL_RAIL_MAX], *views = malloc(sizeof(view) * (size_t)size);
    view[0] = info.leader;
    view[1] = info.rails;
    for (int r = 0; r < TOPOCOLL_RAIL_MAX; r++) view[2 + r] = info.rail_leader[r];
    MPI_Allgather(view, 2 + TOPOCOLL_RAIL_MAX, MPI_INT, views, 2 + TOPOCOLL_RAIL_MAX, MPI_INT,
                  MPI_COMM_WORLD);

    /* the reference for this process's node */
    int first = strcmp(pol, "first") == 0;
    int k = 0, *node = malloc(sizeof(int) * (size_t)size);
    hwloc_bitmap_t *set = malloc(sizeof(hwloc_bitmap_t) * (size_t)size);
    for (int r = 0; r < size; r++) {
        set[r] = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(set[r], all[r].cpus);
        if (all[r].node == info.node) node[k++] = r;
    }
    int rails = first || nn == 0 ? 1 : (nn < k ? nn : k), want[MAXNIC] = { -1, -1, -1, -1 };
    if (rails > TOPOCOLL_RAIL_MAX) rails = TOPOCOLL_RAIL_MAX;
    for (int q = 0; q < rails; q++) {
        int best = -1, bc = 99;
        for (int i = 0; i < k; i++) {
            int r = node[i], dup = 0;
            for (int p = 0; p < q; p++) dup |= want[p] == r;
            int c = first || nn == 0 ? 0 : closeness(hw, nics[q], set[r], all[r].bound);
            if (!dup && c < bc) {
                bc = c;
                best = r;
            }
        }
        want[q] = best;
    }
    CHECK(info.leader == want[0], "node %d: leader %d, want %d", info.node, info.leader, want[0]);
    for (int q = 1; q < rails; q++)
        CHECK(info.rail_leader[q] == want[q], "node %d: rail %d leader %d, want %d", info.node, q,
              info.rail_leader[q], want[q]);
    /* rails is the minimum over nodes */
    CHECK(info.rails <= rails && info.rails >= 1, "rails %d, at most %d here", info.rails, rails);
    for (int i = 0; i < k; i++)
        CHECK(memcmp(&views[(2 + TOPOCOLL_RAIL_MAX) * node[i]], view, sizeof(view)) == 0,
              "rank %d sees other leaders than rank %d", node[i], wrank);

    /* domain leaders */
    int dpol = strcmp(pol, "numa") == 0                                  ? 2
               : strcmp(pol, "package") == 0 || strcmp(pol, "auto") == 0 ? 1
                                                                         : 0;
    int wdl = -1;
    if (dpol && loc.bound) {
        hwloc_obj_type_t ty = dpol == 2 ? HWLOC_OBJ_NUMANODE : HWLOC_OBJ_PACKAGE;
        int d = domain(hw, ty, set[wrank]);
        if (d >= 0) {
            if (all[want[0]].bound && domain(hw, ty, set[want[0]]) == d) wdl = want[0];
            for (int i = 0; i < k && wdl < 0; i++)
                if (all[node[i]].bound && domain(hw, ty, set[node[i]]) == d) wdl = node[i];
        }
    }
    CHECK(info.domain_leader == wdl, "domain leader %d, want %d", info.domain_leader, wdl);

    /* The traffic follows the election: a 1 MiB Bcast from rank 0. */
    const size_t n = 1 << 20;
    char *buf = malloc(n), *ref = malloc(n);
    for (size_t i = 0; i < n; i++) ref[i] = (char)(i * 7 + 3);
    memcpy(buf, wrank == 0 ? ref : buf, n);
    if (wrank != 0) memset(buf, 0, n);
    topocoll_comm_info_t before = TOPOCOLL_COMM_INFO_INIT, after = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(MPI_COMM_WORLD, &before);
    topocoll_bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    topocoll_comm_query(MPI_COMM_WORLD, &after);
    CHECK(memcmp(buf, ref, n) == 0, "Bcast result");
    uint64_t net = after.bytes_bcast_net - before.bytes_bcast_net;
    uint64_t moved = (after.bytes_single_copy - before.bytes_single_copy) +
                     (after.bytes_cico - before.bytes_cico);
    int root_node = info.node == all[0].node, is_rail = 0;
    for (int q = 0; q < info.rails; q++) is_rail |= info.rail_leader[q] == wrank;
    if (info.nnodes > 1 && !root_node && !is_rail)
        CHECK(net == 0, "rank %d, no leader, received %llu B from the network", wrank,
              (unsigned long long)net);
    if (info.nnodes > 1 && !root_node && info.rails == 1 && wrank == info.leader)
        CHECK(net == n, "leader received %llu B of %zu from the network", (unsigned long long)net,
              n);
    if (info.nnodes > 1 && !root_node && is_rail)
        CHECK(net > 0, "rail leader %d received nothing", wrank);
    if (wrank != 0 && info.local_size > 1 && info.nnodes > 1)
        CHECK(net + moved == n, "rank %d: %llu B from the network + %llu copied, of %zu", wrank,
              (unsigned long long)net, (unsigned long long)moved, n);

    int sum[2] = { tc_failures, tc_checks }, tot[2];
    MPI_Reduce(sum, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_nuioa np=%d policy=%s nics=%d: %d checks, %d failed\n", size, pol, nn, tot[1],
               tot[0]);
    for (int r = 0; r < size; r++) hwloc_bitmap_free(set[r]);
    for (int i = 0; i < nn; i++) hwloc_bitmap_free(nics[i]);
    hwloc_topology_destroy(hw);
    free(set);
    free(node);
    free(all);
    free(views);
    free(buf);
    free(ref);
    int bad = tc_failures;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad != 0;
}
