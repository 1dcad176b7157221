/*
 * test_nic -- the NUIOA layer (topo/nic) on the real machines' XMLs that
 * carry network cards, no MPI:
 *   - the cards found, against hwloc's OS devices walked here (the
 *     OpenFabrics device first, OS devices of one PCI function grouped,
 *     the locality equal to the non-I/O ancestor's cpuset), TOPOCOLL_NIC
 *     filters (names, bus ids, rail order, unknown names), and no card on
 *     the XMLs without I/O;
 *   - the score of every PU against the card, from its definition;
 *   - the election: ties to the lowest local rank, rails distinct, per-
 *     domain leaders, the source rule;
 *   - the link-crossing count on the NUIOA example (32-core XML, socket
 *     round-robin, 4 processes per node, InfiniBand near package 1), with
 *     the figures worked out by hand in the comments.
 *
 *   test_nic DIR
 */
#include "topo/nic.h"
#include "topo/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static tc_topo_t *load(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    tc_topo_t *t = NULL;
    if (tc_topo_load(path, &t) != 0) {
        fprintf(stderr, "cannot load %s\n", path);
        exit(2);
    }
    return t;
}

/* hwloc's own answer for OS device @name: its non-I/O ancestor's cpuset. */
static hwloc_bitmap_t ancestor_set(hwloc_topology_t hw, const char *name)
{
    for (hwloc_obj_t o = hwloc_get_next_osdev(hw, NULL); o; o = hwloc_get_next_osdev(hw, o))
        if (o->name && strcmp(o->name, name) == 0)
            return hwloc_bitmap_dup(hwloc_get_non_io_ancestor_obj(hw, o)->cpuset);
    return NULL;
}

static void cards(const char *dir)
{
    /* 32-core XML: mlx5_0 + ib0 on PCI 04:00.0 near package 1; eth0, eth1
     * on 81:00.0 and 81:00.1, also near package 1. */
    tc_topo_t *t = load(dir, "32em64t-2n8c2t-pci-normalio.xml");
    tc_nics_t n;
    CHECK(tc_nics_find(t, NULL, &n) == 1, "32-core XML: %d NICs by default (one OpenFabrics card)",
          n.n);
    hwloc_bitmap_t ref = ancestor_set(t->hw, "mlx5_0");
    CHECK(n.n == 1 && strcmp(n.nic[0].name, "mlx5_0") == 0 && n.nic[0].klass == TC_NIC_OPENFABRICS,
          "default NIC is mlx5_0 (%s)", n.n ? n.nic[0].name : "-");
    CHECK(n.n == 1 && strstr(n.nic[0].osdevs, "ib0") && strstr(n.nic[0].osdevs, "mlx5_0"),
          "ib0 and mlx5_0: one card (%s)", n.n ? n.nic[0].osdevs : "-");
    CHECK(n.n == 1 && ref && hwloc_bitmap_isequal(ref, n.nic[0].cpuset),
          "locality = non-I/O ancestor's cpuset");
    CHECK(n.n == 1 && n.nic[0].pkg == 1 && n.nic[0].numa == 1 &&
              strcmp(n.nic[0].near, "Package:1") == 0,
          "mlx5_0 near package 1, NUMA node 1 (%d, %d, %s)", n.nic[0].pkg, n.nic[0].numa,
          n.nic[0].near);
    /* every PU: the score from its definition */
    int npu = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU);
    for (int i = 0; i < npu && n.n == 1; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_PU, (unsigned)i);
        int want = hwloc_bitmap_isincluded(pu->cpuset, ref)
                       ? 0
                       : 11; /* other package: NUMA distance rank 1 */
        CHECK(tc_nic_score(t, &n.nic[0], pu->cpuset, 1) == want, "PU %d score %d, want %d", i,
              tc_nic_score(t, &n.nic[0], pu->cpuset, 1), want);
    }
    CHECK(tc_nic_score(t, &n.nic[0], hwloc_get_root_obj(t->hw)->cpuset, 0) == TC_NIC_SCORE_UNBOUND,
          "unbound");
    if (ref) hwloc_bitmap_free(ref);
    tc_nics_free(&n);

    /* filters: rail order as given, two names of one card are one rail,
     * bus ids with or without the domain, unknown names reported */
    CHECK(tc_nics_find(t, "eth1,mlx5_0", &n) == 2 && strcmp(n.nic[0].name, "eth1") == 0 &&
              strcmp(n.nic[1].name, "mlx5_0") == 0,
          "TOPOCOLL_NIC=eth1,mlx5_0: 2 rails in that order");
    tc_nics_free(&n);
    CHECK(tc_nics_find(t, "ib0,mlx5_0", &n) == 1, "ib0 and mlx5_0 name one card: %d rails", n.n);
    tc_nics_free(&n);
    CHECK(tc_nics_find(t, "0000:81:00.0,81:00.1", &n) == 2 && strcmp(n.nic[0].name, "eth0") == 0 &&
              strcmp(n.nic[1].name, "eth1") == 0,
          "bus ids select eth0, eth1");
    tc_nics_free(&n);
    CHECK(tc_nics_find(t, "bogus0,eth0", &n) == 1 && strstr(n.why, "bogus0: not found"),
          "unknown name: %s", n.why);
    tc_nics_free(&n);
    tc_topo_free(t);

    /* 24-core XML: eth2, ib0 and mlx4_0 are one card (PCI 05:00.0) near
     * package 0; eth0/eth1 are other cards. */
    t = load(dir, "24em64t-2n6c2t-pci.xml");
    CHECK(tc_nics_find(t, NULL, &n) == 1 && strcmp(n.nic[0].name, "mlx4_0") == 0 &&
              n.nic[0].pkg == 0,
          "24-core XML: mlx4_0 near package 0");
    CHECK(n.n == 1 && strstr(n.nic[0].osdevs, "eth2") && strstr(n.nic[0].osdevs, "ib0"),
          "one card: %s", n.nic[0].osdevs);
    tc_nics_free(&n);
    CHECK(tc_nics_find(t, "eth2,ib0,eth0", &n) == 2, "eth2 and ib0 share a card: 2 rails, got %d",
          n.n);
    tc_nics_free(&n);
    tc_topo_free(t);

    /* no I/O in these XMLs */
    t = load(dir, "16amd64-8n2c-cpusets.xml");
    CHECK(tc_nics_find(t, NULL, &n) == 0, "16-core XML: no NIC");
    tc_nics_free(&n);
    tc_topo_free(t);
}

static void election(void)
{
    /* The NUIOA example's node: 4 processes, socket round-robin over 2 packages:
     * local ranks 0, 2 on package 0 (score 11), 1, 3 on package 1 (0). */
    tc_lead_in_t in[4];
    memset(in, 0, sizeof(in));
    for (int i = 0; i < 4; i++) {
        in[i].nrails = 1;
        in[i].pkg = in[i].numa = i % 2;
        in[i].score[0] = i % 2 ? 0 : 11;
    }
    tc_lead_out_t out;
    int dl[4], dof[4], src[4], pkg[4] = { 0, 1, 0, 1 };
    tc_lead_elect(TC_LEAD_FIRST, in, 4, &out, dl, dof);
    CHECK(out.leader == 0 && out.nrails == 1 && dl[1] == -1 && dof[1] == -1,
          "first: local rank 0, no domains");
    tc_lead_elect(TC_LEAD_NIC, in, 4, &out, dl, dof);
    CHECK(out.leader == 1 && dl[0] == -1, "nic: local rank 1 (package 1), got %d", out.leader);
    tc_lead_elect(TC_LEAD_PACKAGE, in, 4, &out, dl, dof);
    CHECK(out.leader == 1 && dl[0] == 0 && dl[2] == 0 && dl[1] == 1 && dl[3] == 1,
          "package: domain leaders 0, 1");
    CHECK(tc_lead_dom_split(4, &out, dl) == 1, "package 0 holds 2 processes: split");
    /* sources: data entering at the leader (1) */
    for (int i = 0; i < 4; i++) src[i] = tc_lead_source(i, 1, dof, dl);
    CHECK(src[1] == -1 && src[3] == 1 && src[0] == 1 && src[2] == 0,
          "relay: 0 reads the leader, 2 reads 0");
    /* Figure 2 as a count, 4 MiB, a node that receives one copy:
     *   first (leader 0, package 0): NIC -> leader crosses (4), 1 and 3
     *     read the leader across (8): 12 MiB;
     *   nic (leader 1): 0 + 0 and 2 read across (8): 8 MiB;
     *   package: 0 + 0 reads across once (4), 2 reads 0: 4 MiB. */
    const double M = 4.0 * (1 << 20);
    int flat0[4], flat1[4];
    for (int i = 0; i < 4; i++) {
        flat0[i] = tc_lead_source(i, 0, NULL, NULL);
        flat1[i] = tc_lead_source(i, 1, NULL, NULL);
    }
    CHECK(tc_lead_link_bytes(4, pkg, flat0, 0, 1, 1, M) == 3 * M, "first: 12 MiB");
    CHECK(tc_lead_link_bytes(4, pkg, flat1, 1, 1, 1, M) == 2 * M, "nic: 8 MiB");
    CHECK(tc_lead_link_bytes(4, pkg, src, 1, 1, 1, M) == M, "package: 4 MiB");
    /* The root's node (root = local rank 0): it sends one copy from
     * package 0 (4); readers 1, 3 across (8) or relay 1 only (4). */
    for (int i = 0; i < 4; i++) src[i] = tc_lead_source(i, 0, dof, dl);
    CHECK(src[0] == -1 && src[1] == 0 && src[3] == 1 && src[2] == 0,
          "root's node: package 1 relays");
    CHECK(tc_lead_link_bytes(4, pkg, flat0, 0, 1, 1, M) == 3 * M &&
              tc_lead_link_bytes(4, pkg, src, 0, 1, 1, M) == 2 * M,
          "root's node: 12 MiB flat, 8 MiB with relays");

    /* two rails: distinct leaders, each the closest left */
    for (int i = 0; i < 4; i++) {
        in[i].nrails = 2;
        in[i].score[1] = i % 2 ? 0 : 11;
    }
    tc_lead_elect(TC_LEAD_NIC, in, 4, &out, NULL, NULL);
    CHECK(out.nrails == 2 && out.rail[0] == 1 && out.rail[1] == 3, "rails: 1 and 3 (got %d, %d)",
          out.rail[0], out.rail[1]);
    tc_lead_elect(TC_LEAD_NIC, in, 1, &out, NULL, NULL);
    CHECK(out.nrails == 1 && out.rail[1] == out.leader, "one process: one rail");
    /* unbound or no NIC: the lowest local rank */
    for (int i = 0; i < 4; i++) {
        in[i].score[0] = in[i].score[1] = TC_NIC_SCORE_UNBOUND;
        in[i].pkg = in[i].numa = -1;
    }
    tc_lead_elect(TC_LEAD_AUTO, in, 4, &out, dl, dof);
    CHECK(out.leader == 0 && dl[2] == -1 && tc_lead_dom_split(4, &out, dl) == 0,
          "unbound: rank 0, no domains");
    for (int i = 0; i < 4; i++) in[i].nrails = 0;
    tc_lead_elect(TC_LEAD_NIC, in, 4, &out, NULL, NULL);
    CHECK(out.leader == 0 && out.nrails == 1, "no NIC: rank 0");
    CHECK(tc_lead_policy_parse("package") == TC_LEAD_PACKAGE && tc_lead_policy_parse("x") == -1,
          "policy names");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_nic DIR\n");
        return 2;
    }
    cards(argv[1]);
    election();
    printf("test_nic: %d checks, %d failures\n", tc_checks, tc_failures);
    return tc_failures != 0;
}
