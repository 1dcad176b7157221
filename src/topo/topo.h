/*
 * topo/topo -- the machine a node runs on, as hwloc reports it, and where a
 * process sits in it (machine > package > NUMA node > L3 > core > PU).
 *
 * Owns: the process-wide topology (real, or loaded from an hwloc XML file
 * for emulation), read-only once loaded; binding policies that place the
 * ranks of an emulated node on its PUs.  May call: hwloc, base/.  No MPI
 * here: node discovery, which needs MPI, is in topo/node.h.
 */
#ifndef TC_TOPO_TOPO_H
#define TC_TOPO_TOPO_H

#include <hwloc.h>
#include <stddef.h>

typedef enum {
    TC_LVL_MACHINE = 0,
    TC_LVL_PACKAGE,
    TC_LVL_NUMA,
    TC_LVL_L3,
    TC_LVL_CORE,
    TC_LVL_PU,
    TC_NLEVELS
} tc_level_t;

/** "Machine", "Package", "NUMANode", "L3Cache", "Core", "PU" (hwloc's names). */
const char *tc_level_name(tc_level_t lvl);
/** The hwloc object type of a level. */
hwloc_obj_type_t tc_level_type(tc_level_t lvl);

typedef struct tc_topo {
    hwloc_topology_t hw;
    int emulated;          /* 1: loaded from an XML file, not this host */
    char source[256];      /* "this host" or the XML path */
    int nobjs[TC_NLEVELS]; /* objects per level (0 when the level is absent) */
} tc_topo_t;

/** Load this host's topology (@xml NULL) or an XML export.  0 or -1. */
int tc_topo_load(const char *xml, tc_topo_t **out);
void tc_topo_free(tc_topo_t *t);

/** The process-wide topology from TOPOCOLL_TOPOLOGY (loaded once, thread
 *  safe; NULL if hwloc failed, with a warning). */
const tc_topo_t *tc_topo_process(void);

/** Bytes of the smallest level-2 data (or unified) cache of @t, the
 *  per-core cache a copy loop should stay within; 0 if hwloc reports none. */
size_t tc_topo_l2_bytes(const tc_topo_t *t);

typedef enum {
    TC_BIND_REAL = 0,  /* the process's own binding (hwloc_get_cpubind) */
    TC_BIND_NONE,      /* emulate unbound processes */
    TC_BIND_CORE,      /* local rank i on core i (mod cores) */
    TC_BIND_SOCKET_RR, /* round robin over packages, then cores inside */
    TC_BIND_NUMA_RR,   /* round robin over NUMA nodes, then cores inside */
    TC_BIND_RANDOM,    /* a seeded random permutation of the PUs */
    TC_BIND_LIST       /* explicit PU logical indexes */
} tc_bind_kind_t;

#define TC_BIND_LIST_MAX 1024
typedef struct tc_binding {
    tc_bind_kind_t kind;
    unsigned long long seed;
    int nlist;
    int list[TC_BIND_LIST_MAX];
} tc_binding_t;

/** Parse core|socket-rr|numa-rr|none|random:SEED|list:a,b,...; NULL or
 *  "real" gives TC_BIND_REAL.  0 or -1 (syntax error). */
int tc_binding_parse(const char *spec, tc_binding_t *b);
/** Canonical text of a policy (for printing). */
void tc_binding_format(const tc_binding_t *b, char *out, size_t len);

/**
 * The cpuset of local rank @lrank of @lsize processes on a node of
 * topology @t under policy @b (TC_BIND_REAL: this process's binding on the
 * real host).  *@bound is 0 when the process is not bound (its cpuset is
 * then the whole machine).  0, or -1 (list index out of range, hwloc error).
 */
int tc_topo_bind(const tc_topo_t *t, const tc_binding_t *b, int lrank, int lsize,
                 hwloc_bitmap_t out, int *bound);

/** Where a cpuset sits: logical index of the object of each level that
 *  contains it, -1 when no single object does (or the level is absent). */
typedef struct tc_place {
    int idx[TC_NLEVELS];
} tc_place_t;
void tc_topo_place(const tc_topo_t *t, hwloc_const_bitmap_t set, tc_place_t *p);
/** "Package:1 NUMANode:1 L3Cache:1 Core:9 PU:18" (levels at -1 omitted). */
void tc_place_format(const tc_place_t *p, char *out, size_t len);

#endif
