/* hier/hier -- see hier.h. */
#include "hier.h"

#include "../topo/loc.h"
#include "../base/cattr.h"
#include "../base/log.h"
#include "../topo/topo.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Paths ------------------------------------------------------------------ */

/* Order of types that share a cpuset: the highest in hwloc 2's tree names
 * the level (a Package over its NUMA node and L3, as hwloc draws it; a
 * Package over a Group that only carries distances).  -1: not a level. */
static int type_rank(hwloc_obj_type_t t)
{
    switch (t) {
    case HWLOC_OBJ_MACHINE: return 0;
    case HWLOC_OBJ_PACKAGE: return 1;
    case HWLOC_OBJ_DIE: return 2;
    case HWLOC_OBJ_NUMANODE: return 3;
    case HWLOC_OBJ_GROUP: return 4;
    case HWLOC_OBJ_L5CACHE: return 5;
    case HWLOC_OBJ_L4CACHE: return 6;
    case HWLOC_OBJ_L3CACHE: return 7;
    case HWLOC_OBJ_L3ICACHE: return 8;
    case HWLOC_OBJ_L2CACHE: return 9;
    case HWLOC_OBJ_L2ICACHE: return 10;
    case HWLOC_OBJ_L1CACHE: return 11;
    case HWLOC_OBJ_L1ICACHE: return 12;
    case HWLOC_OBJ_CORE: return 13;
    case HWLOC_OBJ_PU: return 14;
    default: return -1;
    }
}

static tc_hpath_t g_self;
static int g_self_ok;
static pthread_once_t g_self_once = PTHREAD_ONCE_INIT;

static int hel_cmp_depth(const void *a, const void *b)
{
    const tc_hel_t *x = a, *y = b;
    if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1; /* larger first */
    return type_rank((hwloc_obj_type_t)x->type) - type_rank((hwloc_obj_type_t)y->type);
}

static void self_build(void)
{
    const tc_loc_t *l = tc_loc_process();
    const tc_topo_t *t = tc_topo_process();
    tc_hpath_t *p = &g_self;
    if (!l->ok || !t) return;
    memset(p, 0, sizeof(*p));
    p->bound = l->bound;
    for (int i = 0; i < l->nswitch && p->n < TC_HPATH_MAX; i++)
        p->el[p->n++] =
            (tc_hel_t){ .node = 0, .kind = TC_HK_SWITCH, .type = -1, .idx = l->sw_index[i] };
    hwloc_obj_t root = hwloc_get_root_obj(t->hw);
    uint32_t wmach = (uint32_t)hwloc_bitmap_weight(root->cpuset);
    p->el[p->n++] = (tc_hel_t){ .node = l->node_id,
                                .kind = TC_HK_NODE,
                                .type = HWLOC_OBJ_MACHINE,
                                .idx = l->vnode,
                                .weight = wmach };
    int first = p->n;
    /* Every object containing the binding: the covering object and its
     * ancestors (the CPU tree), and the NUMA nodes (memory children in
     * hwloc 2, so not on that chain). */
    hwloc_obj_t o =
        hwloc_bitmap_iszero(l->cpuset) ? NULL : hwloc_get_obj_covering_cpuset(t->hw, l->cpuset);
    for (; o && o->parent && p->n < TC_HPATH_MAX; o = o->parent)
        if (type_rank(o->type) > 0 && o->cpuset)
            p->el[p->n++] = (tc_hel_t){ .node = l->node_id,
                                        .kind = TC_HK_OBJ,
                                        .type = o->type,
                                        .idx = (int32_t)o->logical_index,
                                        .weight = (uint32_t)hwloc_bitmap_weight(o->cpuset) };
    int nn = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < nn && p->n < TC_HPATH_MAX; i++) {
        hwloc_obj_t m = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (m->cpuset && !hwloc_bitmap_iszero(m->cpuset) && !hwloc_bitmap_iszero(l->cpuset) &&
            hwloc_bitmap_isincluded(l->cpuset, m->cpuset))
            p->el[p->n++] = (tc_hel_t){ .node = l->node_id,
                                        .kind = TC_HK_OBJ,
                                        .type = HWLOC_OBJ_NUMANODE,
                                        .idx = (int32_t)m->logical_index,
                                        .weight = (uint32_t)hwloc_bitmap_weight(m->cpuset) };
    }
    qsort(&p->el[first], (size_t)(p->n - first), sizeof(tc_hel_t), hel_cmp_depth);
    g_self_ok = 1;
}

const tc_hpath_t *tc_hpath_self(void)
{
    pthread_once(&g_self_once, self_build);
    return g_self_ok ? &g_self : NULL;
}

static int hel_eq(const tc_hel_t *a, const tc_hel_t *b)
{
    return a->node == b->node && a->kind == b->kind && a->type == b->type && a->idx == b->idx;
}

/* The levels of a path: switches, the node, then one object per distinct
 * cpuset below the node's (the first in depth order names it). */
static int path_levels(const tc_hpath_t *p, tc_hel_t *out)
{
    int n = 0;
    uint32_t wnode = 0, wlast = 0;
    for (int i = 0; i < p->n; i++) {
        const tc_hel_t *e = &p->el[i];
        if (e->kind == TC_HK_SWITCH)
            out[n++] = *e;
        else if (e->kind == TC_HK_NODE) {
            out[n++] = *e;
            wnode = wlast = e->weight;
        } else if (e->weight < wnode && e->weight != wlast) {
            out[n++] = *e;
            wlast = e->weight;
        }
    }
    return n;
}

const char *tc_hel_name(const tc_hel_t *e)
{
    if (e->kind == TC_HK_SWITCH) return "Switch";
    if (e->kind == TC_HK_NODE) return "Machine";
    return hwloc_obj_type_string((hwloc_obj_type_t)e->type);
}

void tc_hpath_format(char *out, size_t len)
{
    const tc_hpath_t *p = tc_hpath_self();
    const tc_loc_t *l = tc_loc_process();
    tc_hel_t lv[TC_HPATH_MAX];
    size_t o = 0;
    out[0] = 0;
    if (!p) {
        snprintf(out, len, "(unknown)");
        return;
    }
    int n = path_levels(p, lv);
    for (int i = 0, sw = 0; i < n && o < len; i++) {
        const char *sep = i ? " > " : "";
        if (lv[i].kind == TC_HK_SWITCH)
            o += (size_t)snprintf(out + o, len - o, "%sSwitch %s", sep,
                                  sw < l->nswitch ? l->sw_name[sw] : "?"),
                sw++;
        else if (lv[i].kind == TC_HK_NODE)
            o += (size_t)snprintf(out + o, len - o, "%sMachine %s", sep, l->nodename);
        else
            o += (size_t)snprintf(out + o, len - o, "%s%s L#%d", sep, tc_hel_name(&lv[i]),
                                  lv[i].idx);
    }
}

/* ---- The per-communicator table (an attribute) ------------------------------ */

typedef struct tc_htab {
    tc_cattr_t link; /* first: the communicator, the live list */
    int size;
    tc_hpath_t *paths; /* [size], by rank */
    int has_level;     /* made by a split: the fields below are set */
    int num, index;
    char type[TC_HTYPE_MAX];     /* the paper's level type (hwloc names) */
    char mpi_type[TC_HTYPE_MAX]; /* MPI 4.0's mpi_hw_resource_type value */
} tc_htab_t;

static void htab_destroy(tc_cattr_t *link)
{
    tc_htab_t *h = (tc_htab_t *)link;
    free(h->paths);
    free(h);
}

/* The tables: released with their communicator, or at MPI_Finalize
 * (MPI_COMM_WORLD's, and those of communicators never freed). */
static tc_cattr_class_t g_htabs = TC_CATTR_CLASS_INIT(htab_destroy);

static tc_htab_t *htab_get(MPI_Comm comm) { return tc_cattr_get(&g_htabs, comm); }

static tc_htab_t *htab_new(int size)
{
    tc_htab_t *h = calloc(1, sizeof(*h));
    if (!h) return NULL;
    h->size = size;
    h->paths = malloc((size_t)size * sizeof(tc_hpath_t));
    if (!h->paths) {
        free(h);
        return NULL;
    }
    return h;
}

static int htab_attach(MPI_Comm comm, tc_htab_t *h)
{
    int rc = tc_cattr_set(&g_htabs, comm, &h->link);
    if (rc != MPI_SUCCESS) htab_destroy(&h->link);
    return rc;
}

/* The paths of @comm's ranks taken from @src's table through the groups
 * (local).  NULL if some rank of @comm is not in @src. */
static tc_htab_t *htab_translate(MPI_Comm comm, MPI_Comm src, const tc_htab_t *st)
{
    MPI_Group g, sg;
    int size;
    PMPI_Comm_size(comm, &size);
    tc_htab_t *h = htab_new(size);
    int *in = malloc(2 * (size_t)size * sizeof(int)), ok = h && in;
    if (ok) {
        PMPI_Comm_group(comm, &g);
        PMPI_Comm_group(src, &sg);
        for (int i = 0; i < size; i++) in[i] = i;
        PMPI_Group_translate_ranks(g, size, in, sg, in + size);
        PMPI_Group_free(&g);
        PMPI_Group_free(&sg);
        for (int i = 0; i < size && ok; i++) {
            int r = in[size + i];
            if (r == MPI_UNDEFINED || r < 0 || r >= st->size)
                ok = 0;
            else
                h->paths[i] = st->paths[r];
        }
    }
    free(in);
    if (!ok && h) {
        htab_destroy(&h->link);
        h = NULL;
    }
    return h;
}

/* The table of @comm without communication: its own, or translated from
 * MPI_COMM_WORLD's (then attached).  Every rank gets the same outcome. */
static tc_htab_t *htab_local(MPI_Comm comm)
{
    tc_htab_t *h = htab_get(comm), *w;
    if (h || comm == MPI_COMM_WORLD || !(w = htab_get(MPI_COMM_WORLD))) return h;
    h = htab_translate(comm, MPI_COMM_WORLD, w);
    if (h && htab_attach(comm, h) != MPI_SUCCESS) h = NULL;
    return h;
}

int tc_hier_attach(MPI_Comm comm)
{
    if (htab_local(comm)) return MPI_SUCCESS;
    int size, rc;
    PMPI_Comm_size(comm, &size);
    const tc_hpath_t *self = tc_hpath_self();
    tc_hpath_t mine;
    if (self)
        mine = *self;
    else {
        memset(&mine, 0, sizeof(mine));
        mine.n = -1;
    }
    tc_htab_t *h = htab_new(size);
    int ok = h != NULL, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        if (h) htab_destroy(&h->link);
        return MPI_ERR_NO_MEM;
    }
    rc = PMPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, h->paths, (int)sizeof(mine), MPI_BYTE,
                        comm);
    for (int r = 0; rc == MPI_SUCCESS && r < size; r++)
        if (h->paths[r].n < 0) rc = MPI_ERR_OTHER; /* same verdict on every rank */
    if (rc != MPI_SUCCESS) {
        if (mine.n >= 0) /* (else this process's topology warning said it) */
            tc_warn_once("hardware hierarchy unknown on another process (hwloc failed there); "
                         "hardware splits "
                         "refused");
        htab_destroy(&h->link);
        return rc;
    }
    return htab_attach(comm, h);
}

int tc_hier_world_init(void)
{
    if (htab_get(MPI_COMM_WORLD)) return MPI_SUCCESS;
    if (!tc_loc_host_from_env()) {
        MPI_Comm host;
        int hr, hs;
        PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
        PMPI_Comm_rank(host, &hr);
        PMPI_Comm_size(host, &hs);
        PMPI_Comm_free(&host);
        tc_loc_set_host(hr, hs);
    }
    return tc_hier_attach(MPI_COMM_WORLD);
}

/* ---- Splits ------------------------------------------------------------------ */

/* A guided resource type: the element kind and hwloc type; 0 if unknown. */
static int parse_rtype(const char *s, int *kind, hwloc_obj_type_t *type)
{
    if (!s) return 0;
    if (strncmp(s, "hwloc://", 8) == 0) s += 8;
    if (strcmp(s, "mpi_shared_memory") == 0 || strcmp(s, "Machine") == 0) {
        *kind = TC_HK_NODE;
        *type = HWLOC_OBJ_MACHINE;
        return 1;
    }
    *kind = TC_HK_OBJ;
    if (strcmp(s, "HWThread") == 0) {
        *type = HWLOC_OBJ_PU;
        return 1;
    }
    if (hwloc_type_sscanf(s, type, NULL, 0) != 0) return 0;
    return type_rank(*type) > 0;
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    if (!s) return 1;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Guided: whether every rank named the same type (one Allreduce on its
 * hash); MPI_ERR_INFO_VALUE when not. */
static int guided_types_agree(MPI_Comm comm, const char *rtype)
{
    /* every rank must name the same type */
    uint64_t h = str_hash(rtype);
    long long mm[2] = { (long long)(h >> 1), -(long long)(h >> 1) }, out[2];
    PMPI_Allreduce(mm, out, 2, MPI_LONG_LONG, MPI_MAX, comm);
    if (out[0] != -out[1]) {
        fprintf(stderr, "topocoll: MPI_Comm_split_type: processes gave different "
                        "mpi_hw_resource_type values\n");
        return MPI_ERR_INFO_VALUE;
    }
    return MPI_SUCCESS;
}

/* Guided parts: each rank's resource of type @rtype on its path, or none
 * (none for every rank when the type is unknown). */
static void parts_guided(const tc_htab_t *t, int size, const char *rtype, const tc_hel_t **sel)
{
    int gkind = 0;
    hwloc_obj_type_t gtype = HWLOC_OBJ_MACHINE;
    int known = parse_rtype(rtype, &gkind, &gtype);
    for (int r = 0; r < size; r++) {
        sel[r] = NULL;
        if (!known) continue;
        const tc_hpath_t *p = &t->paths[r];
        for (int i = 0; i < p->n && !sel[r]; i++)
            if (p->el[i].kind == gkind && p->el[i].type == (int32_t)gtype) sel[r] = &p->el[i];
    }
}

/* Unguided parts: each rank's first level below those every rank shares
 * (its levels in @lv, @nlv of them), or none when it has no level below. */
static void parts_unguided(const tc_htab_t *t, int size, tc_hel_t *lv, int *nlv,
                           const tc_hel_t **sel)
{
    for (int r = 0; r < size; r++) {
        sel[r] = NULL;
        nlv[r] = path_levels(&t->paths[r], lv + (size_t)r * TC_HPATH_MAX);
    }
    int d = nlv[0];
    for (int r = 1; r < size; r++) {
        int i = 0;
        while (i < d && i < nlv[r] && hel_eq(&lv[i], &lv[(size_t)r * TC_HPATH_MAX + i])) i++;
        d = i;
    }
    for (int r = 0; r < size; r++)
        if (nlv[r] > d) sel[r] = &lv[(size_t)r * TC_HPATH_MAX + d];
}

/* Each rank's part index (@sib, MPI_UNDEFINED: none); returns how many. */
static int parts_number(int size, const tc_hel_t *const *sel, int *sib)
{
    /* Siblings numbered by their lowest rank. */
    int nsib = 0;
    for (int r = 0; r < size; r++) {
        sib[r] = MPI_UNDEFINED;
        if (!sel[r]) continue;
        for (int q = 0; q < r && sib[r] == MPI_UNDEFINED; q++)
            if (sel[q] && hel_eq(sel[q], sel[r])) sib[r] = sib[q];
        if (sib[r] == MPI_UNDEFINED) sib[r] = nsib++;
    }
    return nsib;
}

/* The new communicator's table (from @comm's @t): its level, part @part,
 * @index among @num, attached; the key handed to the MPI library too. */
static int level_attach(MPI_Comm newcomm, MPI_Comm comm, tc_htab_t *t, tc_split_mode_t mode,
                        const char *rtype, const tc_hel_t *part, int num, int index)
{
    tc_htab_t *h = htab_translate(newcomm, comm, t);
    if (!h) return MPI_ERR_NO_MEM;
    h->has_level = 1;
    h->num = num;
    h->index = index;
    snprintf(h->type, sizeof(h->type), "%s", tc_hel_name(part));
    if (mode == TC_SPLIT_GUIDED)
        snprintf(h->mpi_type, sizeof(h->mpi_type), "%s", rtype);
    else
        snprintf(h->mpi_type, sizeof(h->mpi_type), "%s",
                 part->kind == TC_HK_NODE ? "mpi_shared_memory" : tc_hel_name(part));
    int rc = htab_attach(newcomm, h);
    if (rc == MPI_SUCCESS) { /* also hand the key to the MPI library (it may keep it) */
        MPI_Info info;
        if (PMPI_Info_create(&info) == MPI_SUCCESS) {
            PMPI_Info_set(info, "mpi_hw_resource_type", h->mpi_type);
            PMPI_Comm_set_info(newcomm, info);
            PMPI_Info_free(&info);
        }
    }
    return rc;
}

int tc_hier_split(MPI_Comm comm, tc_split_mode_t mode, const char *rtype, int key,
                  MPI_Comm *newcomm)
{
    int rc = tc_hier_attach(comm), rank, size;
    *newcomm = MPI_COMM_NULL;
    if (rc != MPI_SUCCESS) return rc;
    if (mode == TC_SPLIT_GUIDED && (rc = guided_types_agree(comm, rtype)) != MPI_SUCCESS) return rc;
    tc_htab_t *t = htab_get(comm);
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);

    /* sel[r]: the resource that names rank r's part, or none. */
    tc_hel_t *lv = malloc((size_t)size * TC_HPATH_MAX * sizeof(tc_hel_t));
    int *nlv = malloc((size_t)size * sizeof(int)), *sib = malloc((size_t)size * sizeof(int));
    const tc_hel_t **sel = malloc((size_t)size * sizeof(*sel));
    if (!lv || !nlv || !sib || !sel) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if (mode == TC_SPLIT_UNGUIDED)
        parts_unguided(t, size, lv, nlv, sel);
    else
        parts_guided(t, size, rtype, sel);
    int nsib = parts_number(size, sel, sib);
    rc = PMPI_Comm_split(comm, sib[rank], key, newcomm);
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
        rc = level_attach(*newcomm, comm, t, mode, rtype, sel[rank], nsib, sib[rank]);
out:
    free(lv);
    free(nlv);
    free(sib);
    free(sel);
    return rc;
}

int tc_hier_split_roots(MPI_Comm comm, MPI_Comm *newcomm, MPI_Comm *rootscomm)
{
    int rank, nrank = -1;
    *rootscomm = MPI_COMM_NULL;
    PMPI_Comm_rank(comm, &rank);
    int rc = tc_hier_split(comm, TC_SPLIT_UNGUIDED, NULL, rank, newcomm);
    if (rc != MPI_SUCCESS) return rc;
    if (*newcomm != MPI_COMM_NULL) PMPI_Comm_rank(*newcomm, &nrank);
    rc = PMPI_Comm_split(comm, nrank == 0 ? 0 : MPI_UNDEFINED, rank, rootscomm);
    if (rc == MPI_SUCCESS && *rootscomm != MPI_COMM_NULL) {
        tc_htab_t *h = htab_translate(*rootscomm, comm, htab_get(comm));
        if (h) {
            /* no level of its own: its type is the lowest level its
             * processes share (the parent level) */
            rc = htab_attach(*rootscomm, h);
        }
    }
    return rc;
}

/* ---- Queries ----------------------------------------------------------------- */

static int min_level(const tc_htab_t *t, int n, const int *ranks, char type[TC_HTYPE_MAX])
{
    tc_hel_t a[TC_HPATH_MAX], b[TC_HPATH_MAX];
    int na = path_levels(&t->paths[ranks[0]], a);
    for (int i = 1; i < n; i++) {
        int nb = path_levels(&t->paths[ranks[i]], b), j = 0;
        while (j < na && j < nb && hel_eq(&a[j], &b[j])) j++;
        na = j;
    }
    snprintf(type, TC_HTYPE_MAX, "%s", na ? tc_hel_name(&a[na - 1]) : "Cluster");
    return MPI_SUCCESS;
}

int tc_hier_min_level(MPI_Comm comm, int nranks, const int *ranks, char type[TC_HTYPE_MAX])
{
    int rank, in = 0;
    PMPI_Comm_rank(comm, &rank);
    for (int i = 0; i < nranks; i++) in |= ranks[i] == rank;
    if (!in) {
        snprintf(type, TC_HTYPE_MAX, "Unknown");
        return MPI_SUCCESS;
    }
    tc_htab_t *t = htab_local(comm);
    if (!t) return MPI_ERR_COMM;
    return min_level(t, nranks, ranks, type);
}

void tc_hier_level_info(MPI_Comm comm, int *num, int *index, char type[TC_HTYPE_MAX])
{
    tc_htab_t *t = htab_local(comm);
    *num = 1;
    *index = 0;
    snprintf(type, TC_HTYPE_MAX, "Unknown");
    if (!t) return;
    if (t->has_level) {
        *num = t->num;
        *index = t->index;
        snprintf(type, TC_HTYPE_MAX, "%s", t->type);
        return;
    }
    int *all = malloc((size_t)t->size * sizeof(int));
    if (!all) return;
    for (int i = 0; i < t->size; i++) all[i] = i;
    min_level(t, t->size, all, type);
    free(all);
}

void tc_hier_info_add(MPI_Comm comm, MPI_Info info)
{
    tc_htab_t *t = htab_get(comm);
    char v[32];
    if (!t || !t->has_level) return;
    PMPI_Info_set(info, "mpi_hw_resource_type", t->mpi_type);
    PMPI_Info_set(info, "topocoll_hlevel_type", t->type);
    snprintf(v, sizeof(v), "%d", t->num);
    PMPI_Info_set(info, "topocoll_hlevel_num", v);
    snprintf(v, sizeof(v), "%d", t->index);
    PMPI_Info_set(info, "topocoll_hlevel_index", v);
}
