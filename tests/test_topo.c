/*
 * test_topo -- the topology layer on every real machine's XML in a folder
 * (data/topologies), with every binding policy, for 1 to 40 ranks per
 * node: each rank's place is checked against hwloc's own answer (the
 * ancestors of the object covering its cpuset), and each policy against
 * its definition.  No MPI.
 *
 *   test_topo DIR
 */
#include "topo/loc.h"
#include "topo/topo.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* hwloc's answer: logical index of the level-@l object containing @set,
 * found by walking up from the deepest object covering it. */
static int hwloc_answer(hwloc_topology_t hw, hwloc_const_bitmap_t set, tc_level_t l)
{
    hwloc_obj_t o = hwloc_get_obj_covering_cpuset(hw, set);
    hwloc_obj_type_t t = tc_level_type(l);
    if (l == TC_LVL_NUMA) {
        /* NUMA nodes hang off normal objects as memory children */
        for (; o; o = o->parent)
            for (hwloc_obj_t m = o->memory_first_child; m; m = m->next_sibling)
                if (m->type == HWLOC_OBJ_NUMANODE && hwloc_bitmap_isincluded(set, m->cpuset))
                    return (int)m->logical_index;
        return -1;
    }
    for (; o; o = o->parent)
        if (o->type == t) return (int)o->logical_index;
    return -1;
}

static void check_topology(const char *path)
{
    tc_topo_t *t;
    CHECK(tc_topo_load(path, &t) == 0, "load %s", path);
    if (tc_failures) return;
    hwloc_topology_t hw = t->hw;
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    CHECK(t->emulated && t->nobjs[TC_LVL_PU] > 0 && t->nobjs[TC_LVL_CORE] > 0, "%s: levels", name);
    static const char *policies[] = { "core",     "socket-rr", "numa-rr",      "none",
                                      "random:1", "random:42", "list:0,3,5,1", "real" };
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), seen = hwloc_bitmap_alloc();
    for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
        tc_binding_t b;
        CHECK(tc_binding_parse(policies[p], &b) == 0, "parse %s", policies[p]);
        char txt[64];
        tc_binding_format(&b, txt, sizeof(txt));
        CHECK(strcmp(txt, policies[p]) == 0, "format %s gave %s", policies[p], txt);
        for (int lsize = 1; lsize <= 40; lsize += 13) {
            hwloc_bitmap_zero(seen);
            for (int r = 0; r < lsize; r++) {
                int bound = -1;
                CHECK(tc_topo_bind(t, &b, r, lsize, set, &bound) == 0, "%s %s rank %d", name,
                      policies[p], r);
                CHECK(!hwloc_bitmap_iszero(set) &&
                          hwloc_bitmap_isincluded(set, hwloc_topology_get_topology_cpuset(hw)),
                      "%s %s rank %d: cpuset outside the machine", name, policies[p], r);
                int unbound =
                    b.kind == TC_BIND_NONE || b.kind == TC_BIND_REAL; /* REAL on an XML: unbound */
                CHECK(bound == !unbound, "%s %s: bound flag %d", name, policies[p], bound);
                tc_place_t pl;
                tc_topo_place(t, set, &pl);
                for (int l = TC_LVL_MACHINE + 1; l < TC_NLEVELS; l++) {
                    int want = t->nobjs[l] ? hwloc_answer(hw, set, (tc_level_t)l) : -1;
                    CHECK(pl.idx[l] == want, "%s %s rank %d: %s index %d, hwloc says %d", name,
                          policies[p], r, tc_level_name((tc_level_t)l), pl.idx[l], want);
                }
                hwloc_obj_t core =
                    pl.idx[TC_LVL_CORE] >= 0
                        ? hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)pl.idx[TC_LVL_CORE])
                        : NULL;
                switch (b.kind) {
                case TC_BIND_CORE:
                    CHECK(core && (int)core->logical_index == r % t->nobjs[TC_LVL_CORE] &&
                              hwloc_bitmap_isequal(core->cpuset, set),
                          "%s core: rank %d not on core %d", name, r, r % t->nobjs[TC_LVL_CORE]);
                    break;
                case TC_BIND_SOCKET_RR:
                    if (t->nobjs[TC_LVL_PACKAGE] > 0)
                        CHECK(pl.idx[TC_LVL_PACKAGE] == r % t->nobjs[TC_LVL_PACKAGE],
                              "%s socket-rr: rank %d in package %d", name, r,
                              pl.idx[TC_LVL_PACKAGE]);
                    break;
                case TC_BIND_NUMA_RR: {
                    /* the i-th NUMA node that has cores, i = rank modulo their number */
                    int with[64], nw = 0;
                    for (int i = 0; i < t->nobjs[TC_LVL_NUMA] && nw < 64; i++) {
                        hwloc_obj_t m = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE, (unsigned)i);
                        if (hwloc_get_nbobjs_inside_cpuset_by_type(hw, m->cpuset, HWLOC_OBJ_CORE) >
                            0)
                            with[nw++] = i;
                    }
                    if (nw > 0)
                        CHECK(pl.idx[TC_LVL_NUMA] == with[r % nw],
                              "%s numa-rr: rank %d in NUMA node %d, want %d", name, r,
                              pl.idx[TC_LVL_NUMA], with[r % nw]);
                    break;
                }
                case TC_BIND_RANDOM:
                    CHECK(pl.idx[TC_LVL_PU] >= 0, "%s random: rank %d not on one PU", name, r);
                    if (r < t->nobjs[TC_LVL_PU])
                        CHECK(!hwloc_bitmap_intersects(seen, set),
                              "%s random: PU reused before all were used", name);
                    break;
                case TC_BIND_LIST:
                    CHECK(pl.idx[TC_LVL_PU] == b.list[r % b.nlist], "%s list: rank %d on PU %d",
                          name, r, pl.idx[TC_LVL_PU]);
                    break;
                default:
                    if (t->nobjs[TC_LVL_PACKAGE] > 1)
                        CHECK(pl.idx[TC_LVL_PACKAGE] == -1, "%s unbound has a package", name);
                    break;
                }
                /* core-based policies give distinct cores while cores remain */
                if ((b.kind == TC_BIND_CORE || b.kind == TC_BIND_SOCKET_RR ||
                     b.kind == TC_BIND_NUMA_RR) &&
                    r < t->nobjs[TC_LVL_CORE] && lsize <= t->nobjs[TC_LVL_CORE])
                    CHECK(!hwloc_bitmap_intersects(seen, set), "%s %s: rank %d shares a core", name,
                          policies[p], r);
                hwloc_bitmap_or(seen, seen, set);
            }
        }
    }
    /* The same seed gives the same placement on every process. */
    tc_binding_t b1;
    tc_binding_parse("random:7", &b1);
    hwloc_bitmap_t again = hwloc_bitmap_alloc();
    int bd;
    for (int r = 0; r < 8; r++) {
        tc_topo_bind(t, &b1, r, 8, set, &bd);
        tc_topo_bind(t, &b1, r, 8, again, &bd);
        CHECK(hwloc_bitmap_isequal(set, again), "%s random:7 not deterministic", name);
    }
    /* A PU index beyond the machine is refused. */
    tc_binding_t big;
    char spec[32];
    snprintf(spec, sizeof(spec), "list:%d", t->nobjs[TC_LVL_PU]);
    tc_binding_parse(spec, &big);
    CHECK(tc_topo_bind(t, &big, 0, 1, set, &bd) != 0, "%s: %s accepted", name, spec);
    hwloc_bitmap_free(again);
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(seen);
    printf("  %-36s Package x%d NUMANode x%d L3 x%d Core x%d PU x%d: ok\n", name,
           t->nobjs[TC_LVL_PACKAGE], t->nobjs[TC_LVL_NUMA], t->nobjs[TC_LVL_L3],
           t->nobjs[TC_LVL_CORE], t->nobjs[TC_LVL_PU]);
    tc_topo_free(t);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_topo DIR\n");
        return 2;
    }
    /* Policy syntax. */
    tc_binding_t b;
    static const char *bad[] = { "bogus",   "list:",     "list:1,x", "list:-1",
                                 "random:", "random:3x", "core2" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(tc_binding_parse(bad[i], &b) != 0, "parse accepted %s", bad[i]);
    CHECK(tc_binding_parse(NULL, &b) == 0 && b.kind == TC_BIND_REAL, "NULL policy is real binding");

    /* Slurm hostlists and topology.conf (network levels, topo/loc). */
    static const struct {
        const char *list, *name;
        int match;
    } hl[] = { { "vn[0-3]", "vn2", 1 },        { "vn[0-3]", "vn4", 0 },
               { "vn[0-1,5]", "vn5", 1 },      { "a,vn[2-3],b", "b", 1 },
               { "node[01-10]", "node07", 1 }, { "node[01-10]", "node7", 0 },
               { "node[1-10]", "node07", 0 },  { "n[1-2]x", "n2x", 1 },
               { "n[1-2]x", "n2", 0 },         { "host", "host", 1 },
               { "host", "hostx", 0 },         { "vn[0-3]", "vn", 0 },
               { "vn[0-3", "vn1", 0 },         { "", "vn0", 0 } };
    for (size_t i = 0; i < sizeof(hl) / sizeof(hl[0]); i++)
        CHECK(tc_hostlist_match(hl[i].list, hl[i].name) == hl[i].match, "hostlist %s vs %s",
              hl[i].list, hl[i].name);
    {
        char tmpl[] = "/tmp/test_topo_netXXXXXX", err[160],
             names[TC_LOC_MAX_SWITCHES][TC_LOC_NAME_MAX];
        int idx[TC_LOC_MAX_SWITCHES], fd = mkstemp(tmpl);
        FILE *f = fdopen(fd, "w");
        fprintf(f,
                "# comment\nSwitchName=s0 Nodes=vn[0-1]\nSwitchName=s1 Nodes=vn[2-3] LinkSpeed=1\n"
                "SwitchName=top Switches=s[0-1]\n");
        fclose(f);
        int n = tc_netconf_path(tmpl, "vn3", idx, names, err, sizeof(err));
        CHECK(n == 2 && strcmp(names[0], "top") == 0 && strcmp(names[1], "s1") == 0 &&
                  idx[0] == 2 && idx[1] == 1,
              "topology.conf path of vn3: %d %s", n, n > 0 ? names[0] : err);
        CHECK(tc_netconf_path(tmpl, "vn9", idx, names, err, sizeof(err)) == 0,
              "vn9 is under no switch");
        f = fopen(tmpl, "w");
        fprintf(f, "SwitchName=a Switches=b Nodes=x\nSwitchName=b Switches=a\n"); /* a cycle */
        fclose(f);
        CHECK(tc_netconf_path(tmpl, "x", idx, names, err, sizeof(err)) < 0,
              "a switch cycle is refused");
        f = fopen(tmpl, "w");
        fprintf(f, "Nodes=x\n"); /* no SwitchName */
        fclose(f);
        CHECK(tc_netconf_path(tmpl, "x", idx, names, err, sizeof(err)) < 0,
              "a line without SwitchName is refused");
        unlink(tmpl);
        CHECK(tc_netconf_path(tmpl, "x", idx, names, err, sizeof(err)) < 0,
              "a missing file is refused");
    }

    /* This host, real binding. */
    tc_topo_t *host;
    CHECK(tc_topo_load(NULL, &host) == 0 && !host->emulated, "load this host");
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int bound;
    CHECK(tc_topo_bind(host, &b, 0, 1, set, &bound) == 0 && !hwloc_bitmap_iszero(set),
          "real binding");
    hwloc_bitmap_free(set);
    tc_topo_free(host);

    DIR *d = opendir(argv[1]);
    CHECK(d != NULL, "cannot open %s", argv[1]);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".xml") != 0) continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
        check_topology(path);
        n++;
    }
    if (d) closedir(d);
    CHECK(n >= 4, "only %d XML topologies found in %s", n, argv[1]);
    printf("test_topo: %d topologies, %d checks, %d failed\n", n, tc_checks, tc_failures);
    return tc_failures ? 1 : 0;
}
