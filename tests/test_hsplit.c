/*
 * test_hsplit -- hardware-topology communicators checked against
 * hwloc's own answer.  Each process's location (node, binding, switches)
 * comes from topocoll_location(); every communicator made by a split is
 * compared with the set computed here directly from hwloc objects and
 * cpusets: the descent (MPI_COMM_TYPE_PHYSICAL_TOPOLOGY, then again on the
 * result), strict subsets, rank order, level information and info keys,
 * HW_GUIDED for every resource type, HW_UNGUIDED, hsplit_with_roots,
 * get_min_hlevel for every pair, and the error classes.  Under MPICH 4
 * with real binding, HW_GUIDED is also compared with MPICH's own wherever
 * MPICH returns a communicator.
 *
 * Runs through libtopocoll_pmpi.so (linked): MPI_Comm_split_type and
 * MPI_Comm_get_info are the interposed ones.
 */
#include <topocoll.h>

#include <hwloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_rank, g_size;
static long g_native; /* comparisons with MPICH's own HW_GUIDED */
static hwloc_topology_t g_hw;
static topocoll_location_t *g_loc; /* [g_size] */
static hwloc_bitmap_t *g_set;      /* [g_size] */

/* World ranks of @comm's ranks. */
static int *world_ranks(MPI_Comm comm, int *n)
{
    MPI_Group g, w;
    MPI_Comm_size(comm, n);
    int *in = malloc(sizeof(int) * (size_t)*n), *out = malloc(sizeof(int) * (size_t)*n);
    for (int i = 0; i < *n; i++) in[i] = i;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, *n, in, w, out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    free(in);
    return out;
}

static int same_node(int a, int b) { return strcmp(g_loc[a].node, g_loc[b].node) == 0; }

/* Is there an object of type @t whose cpuset equals @set? */
static int type_has_set(hwloc_obj_type_t t, hwloc_const_bitmap_t set)
{
    int n = hwloc_get_nbobjs_by_type(g_hw, t);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(g_hw, t, (unsigned)i);
        if (o->cpuset && hwloc_bitmap_isequal(o->cpuset, set)) return 1;
    }
    return 0;
}

/* A level's name must be hwloc's for @set, and the highest object with
 * that cpuset in hwloc's tree (redundant levels named once, from the top),
 * a Group giving way to a Package or Die it only wraps; "Machine" for the
 * whole node. */
static int name_fits(const char *name, hwloc_const_bitmap_t set)
{
    hwloc_obj_type_t t;
    if (hwloc_bitmap_isequal(set, hwloc_get_root_obj(g_hw)->cpuset))
        return strcmp(name, "Machine") == 0;
    if (hwloc_type_sscanf(name, &t, NULL, 0) != 0 || !type_has_set(t, set)) return 0;
    hwloc_obj_t o = hwloc_get_obj_covering_cpuset(g_hw, set), top = NULL;
    for (; o && o->parent && hwloc_bitmap_isequal(o->cpuset, set); o = o->parent)
        if (o->type != HWLOC_OBJ_GROUP || !top) top = o;
    return top && top->type == t;
}

/* The expected unguided split of @C (world ranks) for me: fills @M (world
 * ranks, in @C's order) and returns its size (0: MPI_COMM_NULL); @kind is
 * "Switch", "Machine" or "obj", and @O the hwloc object (obj). */
static int ref_unguided(const int *C, int nc, int me, int *M, const char **kind, hwloc_obj_t *O)
{
    int d = 0, nm = 0;
    /* common switch prefix */
    for (;; d++) {
        int same = 1;
        for (int i = 0; i < nc && same; i++)
            same = g_loc[C[i]].nswitches > d && g_loc[C[0]].nswitches > d &&
                   strcmp(g_loc[C[i]].switches[d], g_loc[C[0]].switches[d]) == 0;
        if (!same) break;
    }
    int swdiff = 0, nodediff = 0;
    for (int i = 0; i < nc; i++) {
        if (g_loc[C[i]].nswitches != d) swdiff = 1;
        if (!same_node(C[i], C[0])) nodediff = 1;
    }
    *O = NULL;
    if (swdiff && g_loc[me].nswitches > d) {
        *kind = "Switch";
        for (int i = 0; i < nc; i++)
            if (g_loc[C[i]].nswitches > d &&
                strcmp(g_loc[C[i]].switches[d], g_loc[me].switches[d]) == 0)
                M[nm++] = C[i];
        return nm;
    }
    if (swdiff || nodediff) {
        *kind = "Machine";
        for (int i = 0; i < nc; i++)
            if (g_loc[C[i]].nswitches == d && same_node(C[i], me)) M[nm++] = C[i];
        return nm;
    }
    /* one node: the highest object strictly below the one covering C */
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    for (int i = 0; i < nc; i++) hwloc_bitmap_or(all, all, g_set[C[i]]);
    hwloc_obj_t A = hwloc_get_obj_covering_cpuset(g_hw, all);
    hwloc_obj_t o = hwloc_get_obj_covering_cpuset(g_hw, g_set[me]);
    hwloc_bitmap_free(all);
    if (!A || !o || hwloc_bitmap_isequal(o->cpuset, A->cpuset)) return 0;
    while (o->parent && !hwloc_bitmap_isequal(o->parent->cpuset, A->cpuset)) o = o->parent;
    *kind = "obj";
    *O = o;
    for (int i = 0; i < nc; i++)
        if (hwloc_bitmap_isincluded(g_set[C[i]], o->cpuset)) M[nm++] = C[i];
    return nm;
}

static void check_info(MPI_Comm c, const char *want)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Comm_get_info(c, &info);
    MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&info);
    CHECK(flag && strcmp(v, want) == 0, "mpi_hw_resource_type is '%s' (found %d), want '%s'", v,
          flag, want);
}

/* Compare a split result with the expected members (world ranks, in
 * parent order when @ordered). */
static void check_members(MPI_Comm nc, const int *M, int nm, const char *what)
{
    if (nm == 0) {
        CHECK(nc == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
        return;
    }
    CHECK(nc != MPI_COMM_NULL, "%s: expected %d processes, got MPI_COMM_NULL", what, nm);
    if (nc == MPI_COMM_NULL) return;
    int n, *w = world_ranks(nc, &n), ok = n == nm;
    for (int i = 0; i < n && ok; i++) ok = w[i] == M[i];
    CHECK(ok, "%s: got %d processes (first %d), want %d (first %d)", what, n, w[0], nm, M[0]);
    free(w);
}

/* The descent from @top: every level against the hwloc reference. */
static void descent(MPI_Comm top, int expect_first_switch)
{
    MPI_Comm c = top;
    int level = 0;
    for (;;) {
        MPI_Comm nc = MPI_COMM_NULL;
        int nC = 0, *C = NULL, crank = 0;
        if (c != MPI_COMM_NULL) {
            MPI_Comm_rank(c, &crank);
            C = world_ranks(c, &nC);
            MPI_Comm_split_type(c, TOPOCOLL_COMM_TYPE_PHYSICAL_TOPOLOGY, crank, MPI_INFO_NULL, &nc);
            int *M = malloc(sizeof(int) * (size_t)nC), nm;
            const char *kind;
            hwloc_obj_t O;
            nm = ref_unguided(C, nC, g_rank, M, &kind, &O);
            char what[64];
            snprintf(what, sizeof(what), "descent level %d", level);
            check_members(nc, M, nm, what);
            if (nc != MPI_COMM_NULL && nm > 0) {
                int cmp, num, idx;
                char type[TOPOCOLL_HLEVEL_TYPE_MAX];
                MPI_Comm_compare(c, nc, &cmp);
                CHECK(cmp == MPI_UNEQUAL, "level %d: not a strict subset (compare %d)", level, cmp);
                topocoll_comm_get_hlevel_info(nc, &num, &idx, type);
                if (strcmp(kind, "obj") == 0) {
                    CHECK(name_fits(type, O->cpuset), "level %d: type %s does not name %s L#%u",
                          level, type, hwloc_obj_type_string(O->type), O->logical_index);
                    check_info(nc, type);
                } else {
                    CHECK(strcmp(type, kind) == 0, "level %d: type %s, want %s", level, type, kind);
                    check_info(nc, strcmp(kind, "Machine") == 0 ? "mpi_shared_memory" : kind);
                }
                if (level == 0 && expect_first_switch)
                    CHECK(strcmp(type, "Switch") == 0, "first level is %s, want Switch", type);
                /* siblings: distinct expected sets over C, numbered by lowest rank */
                int nsib = 0, mysib = -1, *Mq = malloc(sizeof(int) * (size_t)nC);
                int *lead = malloc(sizeof(int) * (size_t)nC);
                for (int i = 0; i < nC; i++) {
                    const char *k2;
                    hwloc_obj_t O2;
                    int n2 = ref_unguided(C, nC, C[i], Mq, &k2, &O2), s = -1;
                    if (n2 == 0) continue;
                    for (int j = 0; j < nsib && s < 0; j++)
                        if (lead[j] == Mq[0]) s = j;
                    if (s < 0) {
                        lead[nsib] = Mq[0];
                        s = nsib++;
                    }
                    if (C[i] == g_rank) mysib = s;
                }
                CHECK(num == nsib && idx == mysib, "level %d: hlevel info %d of %d, want %d of %d",
                      level, idx, num, mysib, nsib);
                free(Mq);
                free(lead);
            }
            free(M);
            free(C);
        }
        int any = nc != MPI_COMM_NULL, anyall;
        MPI_Allreduce(&any, &anyall, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (c != top && c != MPI_COMM_NULL) MPI_Comm_free(&c);
        c = nc;
        if (!anyall) break;
        level++;
    }
}

/* HW_GUIDED for resource @val on @comm (key: @key), against hwloc. */
static void guided(MPI_Comm comm, const char *val, int reversed)
{
    int crank;
    MPI_Comm_rank(comm, &crank);
    int key = reversed ? -crank : crank;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Comm nc;
    if (val) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_hw_resource_type", val);
    }
    MPI_Comm_split_type(comm, TOPOCOLL_COMM_TYPE_HW_GUIDED, key, info, &nc);
    /* reference */
    int nC, *C = world_ranks(comm, &nC), nm = 0, *M = malloc(sizeof(int) * (size_t)nC);
    const char *name = val ? (strncmp(val, "hwloc://", 8) == 0 ? val + 8 : val) : NULL;
    hwloc_obj_type_t t = HWLOC_OBJ_MACHINE;
    int node = name && (strcmp(name, "mpi_shared_memory") == 0 || strcmp(name, "Machine") == 0);
    int known = node || (name && strcmp(name, "HWThread") == 0 && (t = HWLOC_OBJ_PU, 1)) ||
                (name && hwloc_type_sscanf(name, &t, NULL, 0) == 0 && t != HWLOC_OBJ_MISC &&
                 t != HWLOC_OBJ_BRIDGE && t != HWLOC_OBJ_PCI_DEVICE && t != HWLOC_OBJ_OS_DEVICE &&
                 t != HWLOC_OBJ_MEMCACHE);
    hwloc_obj_t mine = NULL;
    if (known && !node) { /* the largest object of type t containing my binding */
        int n = hwloc_get_nbobjs_by_type(g_hw, t);
        for (int i = 0; i < n; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(g_hw, t, (unsigned)i);
            if (o->cpuset && !hwloc_bitmap_iszero(o->cpuset) &&
                hwloc_bitmap_isincluded(g_set[g_rank], o->cpuset) &&
                (!mine || hwloc_bitmap_weight(o->cpuset) > hwloc_bitmap_weight(mine->cpuset)))
                mine = o;
        }
    }
    if (node || mine)
        for (int i = 0; i < nC; i++)
            if (same_node(C[i], g_rank) &&
                (node || hwloc_bitmap_isincluded(g_set[C[i]], mine->cpuset)))
                M[nm++] = C[i];
    if (reversed)
        for (int i = 0; i < nm / 2; i++) {
            int x = M[i];
            M[i] = M[nm - 1 - i];
            M[nm - 1 - i] = x;
        }
    char what[96];
    snprintf(what, sizeof(what), "HW_GUIDED %s (key %s)", val ? val : "MPI_INFO_NULL",
             reversed ? "reversed" : "rank");
    check_members(nc, M, nm, what);
    if (nc != MPI_COMM_NULL) {
        check_info(nc, val);
        MPI_Comm_free(&nc);
    }

#if defined(MPI_COMM_TYPE_HW_GUIDED) && defined(MPICH)
    /* MPICH's own, where it gives a communicator (it has known gaps) */
    if (!getenv("TOPOCOLL_TOPOLOGY") && !getenv("TOPOCOLL_BINDING") &&
        !getenv("TOPOCOLL_VIRTUAL_NODES") && val) {
        MPI_Comm native;
        PMPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, key, info, &native);
        if (native != MPI_COMM_NULL) {
            check_members(native, M, nm, "MPICH's own HW_GUIDED vs hwloc");
            g_native++;
            MPI_Comm_free(&native);
        }
    }
#endif
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    free(C);
    free(M);
}

/* get_min_hlevel for every pair with me, and a list without me. */
static void min_levels(void)
{
    char type[TOPOCOLL_HLEVEL_TYPE_MAX];
    for (int r = 0; r < g_size; r++) {
        int pair[2] = { g_rank, r };
        topocoll_comm_get_min_hlevel(MPI_COMM_WORLD, 2, pair, type);
        if (!same_node(r, g_rank)) {
            int shared = g_loc[r].nswitches > 0 && g_loc[g_rank].nswitches > 0 &&
                         strcmp(g_loc[r].switches[0], g_loc[g_rank].switches[0]) == 0;
            CHECK(strcmp(type, shared ? "Switch" : "Cluster") == 0, "min_hlevel(%d,%d) = %s",
                  g_rank, r, type);
        } else {
            hwloc_bitmap_t both = hwloc_bitmap_alloc();
            hwloc_bitmap_or(both, g_set[r], g_set[g_rank]);
            hwloc_obj_t o = hwloc_get_obj_covering_cpuset(g_hw, both);
            CHECK(o && name_fits(type, o->cpuset), "min_hlevel(%d,%d) = %s, hwloc says %s", g_rank,
                  r, type, o ? hwloc_obj_type_string(o->type) : "?");
            hwloc_bitmap_free(both);
        }
    }
    if (g_size > 1) {
        int other = (g_rank + 1) % g_size;
        topocoll_comm_get_min_hlevel(MPI_COMM_WORLD, 1, &other, type);
        CHECK(strcmp(type, "Unknown") == 0, "min_hlevel without the caller = %s", type);
    }
}

static void roots(void)
{
    MPI_Comm nc, rc;
    topocoll_comm_hsplit_with_roots(MPI_COMM_WORLD, MPI_INFO_NULL, &nc, &rc);
    int nr = -1;
    if (nc != MPI_COMM_NULL) MPI_Comm_rank(nc, &nr);
    int *all = malloc(sizeof(int) * (size_t)g_size), *M = malloc(sizeof(int) * (size_t)g_size),
        nm = 0;
    MPI_Allgather(&nr, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < g_size; r++)
        if (all[r] == 0) M[nm++] = r;
    check_members(rc, nr == 0 ? M : NULL, nr == 0 ? nm : 0, "hsplit_with_roots roots");
    if (nc != MPI_COMM_NULL) { /* same communicator as the plain split */
        MPI_Comm pc;
        int cmp;
        MPI_Comm_split_type(MPI_COMM_WORLD, TOPOCOLL_COMM_TYPE_HW_UNGUIDED, g_rank, MPI_INFO_NULL,
                            &pc);
        CHECK(pc != MPI_COMM_NULL,
              "HW_UNGUIDED gave MPI_COMM_NULL where hsplit_with_roots did not");
        if (pc != MPI_COMM_NULL) {
            MPI_Comm_compare(pc, nc, &cmp);
            CHECK(cmp == MPI_CONGRUENT, "HW_UNGUIDED and hsplit_with_roots differ (%d)", cmp);
            MPI_Comm_free(&pc);
        }
        MPI_Comm_free(&nc);
    } else {
        MPI_Comm pc;
        MPI_Comm_split_type(MPI_COMM_WORLD, TOPOCOLL_COMM_TYPE_HW_UNGUIDED, g_rank, MPI_INFO_NULL,
                            &pc);
        CHECK(pc == MPI_COMM_NULL,
              "HW_UNGUIDED gave a communicator where hsplit_with_roots did not");
        if (pc != MPI_COMM_NULL) MPI_Comm_free(&pc);
    }
    if (rc != MPI_COMM_NULL) MPI_Comm_free(&rc);
    free(all);
    free(M);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm nc = MPI_COMM_WORLD;
    char type[TOPOCOLL_HLEVEL_TYPE_MAX];
    int cls, rc = MPI_Comm_split_type(MPI_COMM_NULL, TOPOCOLL_COMM_TYPE_PHYSICAL_TOPOLOGY, 0,
                                      MPI_INFO_NULL, &nc);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "split of MPI_COMM_NULL: class %d", cls);
    int bad = g_size;
    rc = topocoll_comm_get_min_hlevel(MPI_COMM_WORLD, 1, &bad, type);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "min_hlevel rank out of range: class %d", cls);
    rc = topocoll_comm_get_min_hlevel(MPI_COMM_WORLD, 0, &bad, type);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "min_hlevel nranks 0: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    tc_rank = g_rank;
    tc_print_max = 19;
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int expect_switch = argc > 1 && strcmp(argv[1], "--expect-switch") == 0;

    const char *xml = getenv("TOPOCOLL_TOPOLOGY");
    hwloc_topology_init(&g_hw);
    if (xml && *xml) hwloc_topology_set_xml(g_hw, xml);
    hwloc_topology_load(g_hw);

    topocoll_location_t me;
    CHECK(topocoll_location(&me) == MPI_SUCCESS, "no location");
    g_loc = malloc(sizeof(*g_loc) * (size_t)g_size);
    g_set = malloc(sizeof(*g_set) * (size_t)g_size);
    MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, g_loc, (int)sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
    hwloc_const_bitmap_t whole = hwloc_get_root_obj(g_hw)->cpuset;
    for (int r = 0; r < g_size; r++) {
        g_set[r] = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(g_set[r], g_loc[r].cpuset);
        CHECK(!hwloc_bitmap_iszero(g_set[r]) && hwloc_bitmap_isincluded(g_set[r], whole),
              "rank %d's binding %s is not in the topology", r, g_loc[r].cpuset);
        CHECK(g_loc[r].bound || hwloc_bitmap_isequal(g_set[r], whole),
              "rank %d unbound but not on the whole node", r);
    }

    descent(MPI_COMM_WORLD, expect_switch);
    { /* the descent again from a split communicator with reversed rank order */
        MPI_Comm rev;
        MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &rev);
        descent(rev, expect_switch);
        guided(rev, "Package", 0);
        guided(rev, "Core", 1);
        MPI_Comm_free(&rev);
    }
    static const char *types[] = {
        "mpi_shared_memory", "Machine", "Package", "NUMANode",   "L3Cache",
        "L2Cache",           "L1Cache", "Core",    "PU",         "HWThread",
        "hwloc://Package",   "Group",   "Die",     "NoSuchThing"
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        guided(MPI_COMM_WORLD, types[i], 0);
    guided(MPI_COMM_WORLD, "Core", 1); /* key order */
    guided(MPI_COMM_WORLD, NULL, 0);   /* MPI_INFO_NULL */
    roots();
    min_levels();
    errors();

    long native = 0;
    int total = 0, fails = 0;
    MPI_Reduce(&tc_checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&g_native, &native, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&tc_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_hsplit np=%d (%s, binding %s, %d virtual node(s)%s): %d checks (%ld against "
               "MPICH's own "
               "HW_GUIDED), %d failed\n",
               g_size, xml ? xml : "this host", me.binding, me.nvnodes,
               me.nswitches ? ", switches" : "", total, native, fails);
    for (int r = 0; r < g_size; r++) hwloc_bitmap_free(g_set[r]);
    free(g_set);
    free(g_loc);
    hwloc_topology_destroy(g_hw);
    MPI_Finalize();
    return fails ? 1 : 0;
}
