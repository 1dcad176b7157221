/*
 * topo/node -- which processes of a communicator share a node, with
 * emulation: TOPOCOLL_VIRTUAL_NODES=K cuts each host's processes into K
 * virtual nodes so inter-node algorithms run on one host.
 *
 * Owns: tc_nodemap_t (node of every rank, local ranks, the elected
 * leaders, the nodes' leaf switches, this process's binding and place in
 * its node's hierarchy) and the node communicator.  May call: PMPI (setup only), topo/topo,
 * topo/loc (the process's virtual node and binding), topo/nic (the NICs
 * and the election), base/.
 */
#ifndef TC_TOPO_NODE_H
#define TC_TOPO_NODE_H

#include "../base/config.h"
#include "nic.h"
#include "topo.h"

#include <mpi.h>

typedef struct tc_nodemap {
    int rank, size;          /* in the communicator */
    int node, nnodes;        /* this process's node index; nodes spanned */
    int lrank, lsize;        /* rank and size on the node */
    int vnode;               /* virtual node index on this host */
    int host_size;           /* processes of the communicator on this host */
    int *node_of;            /* [size] node index of every rank */
    int *lrank_of;           /* [size] local rank of every rank */
    int *first_of;           /* [nnodes] each node's lowest rank: nodes are numbered
                                in the order of their lowest ranks */
    int *leader_of;          /* [nnodes] communicator rank of each node's leader,
                                elected by topo/nic (TOPOCOLL_LEADERS) */
    int leader_lrank;        /* local rank of this node's leader */
    tc_lead_policy_t policy; /* the election's policy */
    int nrails;              /* rails every node has a distinct leader for (>= 1) */
    int *rail_of;            /* [nnodes * TC_RAIL_MAX] rank of rail r's leader of
                                node n at [n * TC_RAIL_MAX + r] (rail 0: leader_of) */
    int *dom_leader;         /* [lsize] local rank of each local process's domain
                                (package or NUMA node) leader, -1: none */
    int *dom_of;             /* [lsize] each local process's domain, -1: none */
    tc_lead_in_t *lead_in;   /* [lsize] what this node's processes reported to
                                the election (tools re-run it under other policies) */
    int dom_split;           /* 1: the node's processes span several domains and a
                                domain other than the leader's holds >= 2 of them
                                (per-domain leaders save link crossings) */
    int score;               /* this process's score against NIC 0 (tc_nic_score) */
    int *size_of;            /* [nnodes] processes on each node */
    /* The nodes' leaf switches (topo/loc: TOPOCOLL_NETWORK_TOPOLOGY; the
     * nodes under no switch count as one more group).  Groups are
     * numbered in the order of their lowest node, a group's nodes in
     * node order. */
    int nswg;              /* switch groups among the nodes (1: one, or no file) */
    int swg_k;             /* nodes in every group when all hold as many, else 0 */
    int *swg_node;         /* [nnodes] when swg_k: group g's node p at g * swg_k + p */
    int *swg_pos;          /* [nnodes] when swg_k: node n's index in swg_node */
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
