/*
 * topo/node -- which processes of a communicator share a node, with
 * emulation: TOPOCOLL_VIRTUAL_NODES=K cuts each host's processes into K
 * virtual nodes so inter-node algorithms run on one host.
 *
 * Owns: tc_nodemap_t (node of every rank, local ranks, leaders, this
 * process's binding and place in its node's hierarchy) and the node
 * communicator.  May call: PMPI (setup only), topo/topo, topo/loc (the
 * process's virtual node and binding), base/.
 */
#ifndef TC_TOPO_NODE_H
#define TC_TOPO_NODE_H

#include "../base/config.h"
#include "topo.h"

#include <mpi.h>

typedef struct tc_nodemap {
    int rank, size;        /* in the communicator */
    int node, nnodes;      /* this process's node index; nodes spanned */
    int lrank, lsize;      /* rank and size on the node */
    int vnode;             /* virtual node index on this host */
    int host_size;         /* processes of the communicator on this host */
    int *node_of;          /* [size] node index of every rank */
    int *lrank_of;         /* [size] local rank of every rank */
    int *leader_of;        /* [nnodes] communicator rank of each node's leader
                              (the node's lowest rank) */
    int *size_of;          /* [nnodes] processes on each node */
    int *ring;             /* [size] ranks in physical order: by node, then
                              package, NUMA node, cache, core (HierKNEM 3.4) */
    int ring_pos;          /* this rank's position in ring */
    MPI_Comm lcomm;        /* the node's processes, ordered by rank */
    hwloc_bitmap_t cpuset; /* binding (real or emulated) */
    int bound;             /* 0: unbound, cpuset is the whole machine */
    tc_place_t place;      /* position in the hierarchy */
    char binding[64];      /* policy used, as text */
} tc_nodemap_t;

/** Build the map of @comm (collective over @comm).  0, or -1 with nothing
 *  allocated (then on every rank: the outcome is agreed). */
int tc_nodemap_build(MPI_Comm comm, const tc_config_t *cfg, tc_nodemap_t *m);
void tc_nodemap_free(tc_nodemap_t *m);

#endif
