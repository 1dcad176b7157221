/* topo/topo -- see topo.h. */
#include "topo.h"

#include "../base/config.h"
#include "../base/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[TC_NLEVELS] = { "Machine", "Package", "NUMANode",
                                                     "L3Cache", "Core",    "PU" };
static const hwloc_obj_type_t level_types[TC_NLEVELS] = { HWLOC_OBJ_MACHINE,  HWLOC_OBJ_PACKAGE,
                                                          HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE,
                                                          HWLOC_OBJ_CORE,     HWLOC_OBJ_PU };

const char *tc_level_name(tc_level_t lvl) { return level_names[lvl]; }
hwloc_obj_type_t tc_level_type(tc_level_t lvl) { return level_types[lvl]; }

int tc_topo_load(const char *xml, tc_topo_t **out)
{
    tc_topo_t *t = calloc(1, sizeof(*t));
    if (!t) return -1;
    if (hwloc_topology_init(&t->hw) != 0) {
        free(t);
        return -1;
    }
    if (xml) {
        if (hwloc_topology_set_xml(t->hw, xml) != 0) { /* (the caller says so) */
            hwloc_topology_destroy(t->hw);
            free(t);
            return -1;
        }
        t->emulated = 1;
        snprintf(t->source, sizeof(t->source), "%s", xml);
    } else {
        snprintf(t->source, sizeof(t->source), "this host");
    }
    /* I/O devices are kept (a later layer elects leaders near NICs). */
    hwloc_topology_set_io_types_filter(t->hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t->hw) != 0) {
        hwloc_topology_destroy(t->hw);
        free(t);
        return -1;
    }
    for (int l = 0; l < TC_NLEVELS; l++) {
        int n = hwloc_get_nbobjs_by_type(t->hw, level_types[l]);
        t->nobjs[l] = n < 0 ? 0 : n;
    }
    *out = t;
    return 0;
}

void tc_topo_free(tc_topo_t *t)
{
    if (!t) return;
    hwloc_topology_destroy(t->hw);
    free(t);
}

static tc_topo_t *g_topo; /* process-wide, read-only after the once */
static pthread_once_t g_topo_once = PTHREAD_ONCE_INIT;

static void topo_process_load(void)
{
    const tc_config_t *cfg = tc_config_get();
    if (tc_topo_load(cfg->topology_xml, &g_topo) != 0) {
        tc_warn_once("hwloc could not load %s: topocoll leaves every collective to the native MPI",
                     cfg->topology_xml ? cfg->topology_xml : "this host's topology");
        g_topo = NULL;
    }
}

const tc_topo_t *tc_topo_process(void)
{
    pthread_once(&g_topo_once, topo_process_load);
    return g_topo;
}

size_t tc_topo_l2_bytes(const tc_topo_t *t)
{
    size_t least = 0;
    if (!t) return 0;
    int n = hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_L2CACHE);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_L2CACHE, (unsigned)i);
        if (!o->attr || o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION || !o->attr->cache.size)
            continue;
        if (!least || o->attr->cache.size < least) least = (size_t)o->attr->cache.size;
    }
    return least;
}

int tc_binding_parse(const char *spec, tc_binding_t *b)
{
    memset(b, 0, sizeof(*b));
    if (!spec || !*spec || strcmp(spec, "real") == 0) {
        b->kind = TC_BIND_REAL;
        return 0;
    }
    if (strcmp(spec, "none") == 0) {
        b->kind = TC_BIND_NONE;
        return 0;
    }
    if (strcmp(spec, "core") == 0) {
        b->kind = TC_BIND_CORE;
        return 0;
    }
    if (strcmp(spec, "socket-rr") == 0) {
        b->kind = TC_BIND_SOCKET_RR;
        return 0;
    }
    if (strcmp(spec, "numa-rr") == 0) {
        b->kind = TC_BIND_NUMA_RR;
        return 0;
    }
    if (strncmp(spec, "random:", 7) == 0) {
        char *end;
        b->kind = TC_BIND_RANDOM;
        b->seed = strtoull(spec + 7, &end, 10);
        return (end == spec + 7 || *end) ? -1 : 0;
    }
    if (strncmp(spec, "list:", 5) == 0) {
        const char *p = spec + 5;
        b->kind = TC_BIND_LIST;
        while (*p) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p || v < 0 || b->nlist == TC_BIND_LIST_MAX) return -1;
            b->list[b->nlist++] = (int)v;
            p = end;
            if (*p == ',')
                p++;
            else if (*p)
                return -1;
        }
        return b->nlist > 0 ? 0 : -1;
    }
    return -1;
}

void tc_binding_format(const tc_binding_t *b, char *out, size_t len)
{
    switch (b->kind) {
    case TC_BIND_REAL: snprintf(out, len, "real"); break;
    case TC_BIND_NONE: snprintf(out, len, "none"); break;
    case TC_BIND_CORE: snprintf(out, len, "core"); break;
    case TC_BIND_SOCKET_RR: snprintf(out, len, "socket-rr"); break;
    case TC_BIND_NUMA_RR: snprintf(out, len, "numa-rr"); break;
    case TC_BIND_RANDOM: snprintf(out, len, "random:%llu", b->seed); break;
    case TC_BIND_LIST: {
        size_t o = (size_t)snprintf(out, len, "list:");
        for (int i = 0; i < b->nlist && o < len; i++)
            o += (size_t)snprintf(out + o, len - o, i ? ",%d" : "%d", b->list[i]);
        break;
    }
    }
}

/* Round robin over the objects of type @gtype that contain cores (local
 * rank i -> i-th such group modulo their number), then over the cores
 * inside the group.  Groups without cores (CPU-less NUMA nodes, restricted
 * cpusets) are skipped; no such group at all: plain core order. */
static hwloc_obj_t core_rr(hwloc_topology_t hw, hwloc_obj_type_t gtype, int lrank)
{
    int ng = hwloc_get_nbobjs_by_type(hw, gtype), nuse = 0;
    hwloc_obj_t use[256];
    for (int i = 0; i < ng && nuse < 256; i++) {
        hwloc_obj_t g = hwloc_get_obj_by_type(hw, gtype, (unsigned)i);
        if (g->cpuset && hwloc_get_nbobjs_inside_cpuset_by_type(hw, g->cpuset, HWLOC_OBJ_CORE) > 0)
            use[nuse++] = g;
    }
    if (nuse == 0)
        return hwloc_get_obj_by_type(
            hw, HWLOC_OBJ_CORE, (unsigned)(lrank % hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE)));
    hwloc_obj_t g = use[lrank % nuse];
    int nc = hwloc_get_nbobjs_inside_cpuset_by_type(hw, g->cpuset, HWLOC_OBJ_CORE);
    return hwloc_get_obj_inside_cpuset_by_type(hw, g->cpuset, HWLOC_OBJ_CORE,
                                               (unsigned)((lrank / nuse) % nc));
}

static unsigned long long splitmix64(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int tc_topo_bind(const tc_topo_t *t, const tc_binding_t *b, int lrank, int lsize,
                 hwloc_bitmap_t out, int *bound)
{
    hwloc_topology_t hw = t->hw;
    hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(hw);
    int npu = t->nobjs[TC_LVL_PU];
    hwloc_obj_t o = NULL;
    (void)lsize;

    *bound = 1;
    switch (b->kind) {
    case TC_BIND_REAL:
        if (t->emulated || hwloc_get_cpubind(hw, out, HWLOC_CPUBIND_PROCESS) != 0 ||
            hwloc_bitmap_isincluded(all, out)) {
            hwloc_bitmap_copy(out, all);
            *bound = 0;
        }
        return 0;
    case TC_BIND_NONE:
        hwloc_bitmap_copy(out, all);
        *bound = 0;
        return 0;
    case TC_BIND_CORE:
        o = hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)(lrank % t->nobjs[TC_LVL_CORE]));
        break;
    case TC_BIND_SOCKET_RR: o = core_rr(hw, HWLOC_OBJ_PACKAGE, lrank); break;
    case TC_BIND_NUMA_RR: o = core_rr(hw, HWLOC_OBJ_NUMANODE, lrank); break;
    case TC_BIND_RANDOM: {
        int *perm = malloc((size_t)npu * sizeof(int));
        unsigned long long s = b->seed;
        if (!perm) return -1;
        for (int i = 0; i < npu; i++) perm[i] = i;
        for (int i = npu - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)(splitmix64(&s) % (unsigned long long)(i + 1));
            int tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        o = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)perm[lrank % npu]);
        free(perm);
        break;
    }
    case TC_BIND_LIST: {
        int pu = b->list[lrank % b->nlist];
        if (pu >= npu) return -1;
        o = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)pu);
        break;
    }
    }
    if (!o || !o->cpuset) return -1;
    hwloc_bitmap_copy(out, o->cpuset);
    return 0;
}

void tc_topo_place(const tc_topo_t *t, hwloc_const_bitmap_t set, tc_place_t *p)
{
    for (int l = 0; l < TC_NLEVELS; l++) {
        p->idx[l] = -1;
        for (int i = 0; i < t->nobjs[l]; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, level_types[l], (unsigned)i);
            if (o->cpuset && !hwloc_bitmap_iszero(set) && hwloc_bitmap_isincluded(set, o->cpuset)) {
                p->idx[l] = (int)o->logical_index;
                break;
            }
        }
    }
}

void tc_place_format(const tc_place_t *p, char *out, size_t len)
{
    size_t o = 0;
    out[0] = 0;
    for (int l = TC_LVL_PACKAGE; l < TC_NLEVELS && o < len; l++)
        if (p->idx[l] >= 0)
            o += (size_t)snprintf(out + o, len - o, "%s%s:%d", o ? " " : "", level_names[l],
                                  p->idx[l]);
    if (!out[0]) snprintf(out, len, "Machine (unbound)");
}
