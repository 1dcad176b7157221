/*
 * hier/hier -- hardware-topology communicators (Goglin, Jeannot, Mansouri,
 * Mercier, "A Hierarchical Model to Manage Hardware Topology in MPI
 * Applications", sections 3 and 4; MPI 4.0 section 7.4.2 for
 * MPI_COMM_TYPE_HW_GUIDED / HW_UNGUIDED).
 *
 * A process's *path* is the chain of resources that contain it, top first:
 * the network switches (topo/loc), its node, then every hwloc object whose
 * cpuset contains its binding (never below the binding: section 3.2.4).
 * The *levels* of a path drop the objects whose cpuset equals the one
 * above (redundant levels, section 3.2.2), keeping the highest type's name.
 * An unguided split cuts a communicator at the first level where its
 * processes' level lists differ (Algorithm 1 generalised to switches and
 * nodes), so each result is a strict subset of its input.
 *
 * Owns: the paths of a communicator's processes, cached on it as an MPI
 * attribute (tc_htab_t, released through base/cattr), with the level
 * information of section 3.3.  May call: PMPI, topo/, base/.
 */
#ifndef TC_HIER_HIER_H
#define TC_HIER_HIER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define TC_HPATH_MAX 24
#define TC_HTYPE_MAX 64

enum { TC_HK_SWITCH = 0, TC_HK_NODE = 1, TC_HK_OBJ = 2 };

/** One resource on a path.  Two elements are the same resource iff node,
 *  kind, type and idx are equal. */
typedef struct tc_hel {
    uint64_t node;   /* node id (0 for switches) */
    int32_t kind;    /* TC_HK_* */
    int32_t type;    /* hwloc_obj_type_t for objects and the node (Machine) */
    int32_t idx;     /* switch index, virtual node, or hwloc logical index */
    uint32_t weight; /* PUs in the object's cpuset (objects and node) */
} tc_hel_t;

typedef struct tc_hpath {
    int32_t n;
    int32_t bound;
    tc_hel_t el[TC_HPATH_MAX];
} tc_hpath_t;

/** This process's path (computed once from topo/loc).  NULL if the
 *  location is unknown (hwloc failed; a warning was printed). */
const tc_hpath_t *tc_hpath_self(void);

/** The split types (values from topocoll.h). */
typedef enum { TC_SPLIT_UNGUIDED = 0, TC_SPLIT_GUIDED } tc_split_mode_t;

/**
 * Split @comm (an intracommunicator) by hardware: unguided (highest level
 * that strictly splits, MPI_COMM_TYPE_HW_UNGUIDED and the paper's
 * MPI_COMM_TYPE_PHYSICAL_TOPOLOGY) or guided by resource type @rtype
 * ("mpi_shared_memory", "Machine", hwloc type names such as "Package",
 * "NUMANode", "L3Cache", "Core", "PU", the MPI synonym "HWThread", with an
 * optional "hwloc://" prefix).  Ranks are ordered by @key, ties by rank in
 * @comm.  MPI_COMM_NULL where the process has no such resource, or (guided)
 * when @rtype is NULL or unknown.  The new communicator carries its table
 * and level information.  Collective over @comm.  Returns MPI_SUCCESS or
 * an MPI error code (MPI_ERR_INFO_VALUE: ranks gave different @rtype).
 */
int tc_hier_split(MPI_Comm comm, tc_split_mode_t mode, const char *rtype, int key,
                  MPI_Comm *newcomm);

/** hsplit_with_roots (section 3.2.3, Algorithm 2): the unguided split with
 *  the rank as key, and the communicator of the new communicators' rank-0
 *  processes (MPI_COMM_NULL elsewhere).  Collective over @comm. */
int tc_hier_split_roots(MPI_Comm comm, MPI_Comm *newcomm, MPI_Comm *rootscomm);

/** Section 3.3.1: sibling count, index among siblings (ordered by their
 *  lowest rank in the parent), level type.  Local.  A communicator not made
 *  by a split gets 1, 0 and the lowest level all its processes share when
 *  its processes' paths are known ("Unknown" otherwise). */
void tc_hier_level_info(MPI_Comm comm, int *num, int *index, char type[TC_HTYPE_MAX]);

/** Section 3.3.2: the lowest level shared by @ranks of @comm ("Unknown" if
 *  the caller is not among them; "Cluster" when nothing is shared).  Local
 *  when @comm's paths are known (made by a split, or translated from
 *  MPI_COMM_WORLD's once tc_hier_world_init ran); else returns
 *  MPI_ERR_COMM.  MPI_SUCCESS otherwise. */
int tc_hier_min_level(MPI_Comm comm, int nranks, const int *ranks, char type[TC_HTYPE_MAX]);

/** Add the level keys of @comm (mpi_hw_resource_type, topocoll_hlevel_*)
 *  to @info.  Local. */
void tc_hier_info_add(MPI_Comm comm, MPI_Info info);

/** Exchange the paths over MPI_COMM_WORLD and cache them there; first
 *  gives topo/loc the host ranks when the launcher exported none.
 *  Collective over MPI_COMM_WORLD; idempotent.  MPI_SUCCESS or an error. */
int tc_hier_world_init(void);

/** Make sure @comm's paths are cached (collective over @comm the first
 *  time).  MPI_SUCCESS or an MPI error code. */
int tc_hier_attach(MPI_Comm comm);

/** This process's levels as text, top first: "Switch top > Switch s0 >
 *  Machine vn0 > Package L#1 > Core L#3" ("(unknown)" if no path). */
void tc_hpath_format(char *out, size_t len);

/** The name of a level element: "Switch", "Machine", hwloc type names. */
const char *tc_hel_name(const tc_hel_t *e);

#endif
