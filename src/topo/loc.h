/*
 * topo/loc -- where this process lives: its node (host, or virtual node of
 * an emulated cluster), its binding inside the node, and the network
 * switches above the node.  A property of the process, not of a
 * communicator: every communicator, every split and every collective sees
 * the same answer (the "one source of truth for who shares what").
 *
 * Owns: tc_loc_t (process-wide, computed once, read-only afterwards) and
 * the Slurm topology.conf reader (TOPOCOLL_NETWORK_TOPOLOGY).  May call:
 * topo/topo, base/, libc.  No MPI: the local rank on the host comes from
 * the launcher's environment (Open MPI, MPICH/Hydra), or from the host
 * exchange hier/hier does once over MPI_COMM_WORLD (tc_loc_set_host).
 */
#ifndef TC_TOPO_LOC_H
#define TC_TOPO_LOC_H

#include "topo.h"

#include <stdint.h>
#include <stdio.h>

#define TC_LOC_NAME_MAX     64
#define TC_LOC_MAX_SWITCHES 8 /* switch levels above a node */

typedef struct tc_loc {
    char nodename[TC_LOC_NAME_MAX]; /* host name, or "vn<k>" for virtual node k */
    uint64_t node_id;               /* hash of (host name, virtual node): equal iff same node */
    int hrank, hsize;               /* rank and size among MPI_COMM_WORLD's processes on the host */
    int vnode, nvnodes;             /* virtual node of this process, virtual nodes per host */
    int vlrank, vlsize;             /* rank and size inside the virtual node (emulated binding) */
    hwloc_bitmap_t cpuset;          /* binding: real, or emulated by TOPOCOLL_BINDING */
    int bound;                      /* 0: unbound (cpuset is the whole node) */
    char binding[64];               /* the policy, as text */
    int nswitch;                    /* switches above the node, top first */
    int sw_index[TC_LOC_MAX_SWITCHES]; /* index in the topology file */
    char sw_name[TC_LOC_MAX_SWITCHES][TC_LOC_NAME_MAX];
    int ok; /* 0: the location could not be computed (see warning) */
} tc_loc_t;

/**
 * This process's location, computed on first call (thread-safe): the host
 * rank from the launcher's environment (OMPI_COMM_WORLD_LOCAL_RANK/SIZE or
 * MPI_LOCALRANKID/MPI_LOCALNRANKS) unless tc_loc_set_host() came first,
 * then the virtual node (TOPOCOLL_VIRTUAL_NODES, _ORDER), the binding
 * (TOPOCOLL_TOPOLOGY, TOPOCOLL_BINDING) and the switches
 * (TOPOCOLL_NETWORK_TOPOLOGY).  Never NULL; check ->ok.
 */
const tc_loc_t *tc_loc_process(void);

/** Give the host rank and size found by an exchange over MPI_COMM_WORLD
 *  (used when the launcher exports none).  Effective only before the first
 *  tc_loc_process(); returns 0, or -1 when too late. */
int tc_loc_set_host(int hrank, int hsize);

/** 1 if the launcher's environment gives the host rank (no exchange needed). */
int tc_loc_host_from_env(void);

/* ---- Slurm topology.conf (network levels) ----------------------------------- */

/**
 * The switches above node @nodename in a Slurm topology.conf file (lines
 * "SwitchName=NAME [Nodes=HOSTLIST] [Switches=HOSTLIST] [LinkSpeed=N]",
 * '#' comments, hostlists such as "vn[0-3,8],host7": one bracket per item,
 * numbers of at most 9 digits, ranges low-high).  Fills @idx/@names top
 * first (at most TC_LOC_MAX_SWITCHES) and returns their number: 0 when the
 * node is under no switch.  -1 rejects the whole file, with one message in
 * @err: "PATH:LINE: why" for the first line not understood (not
 * KEY=VALUE, an unknown or repeated key, no SwitchName, a name that is
 * not one name, a SwitchName given again, a hostlist that is empty, has
 * an unterminated, backwards or overlong range, or a NUL byte), followed
 * by "; also lines L1, L2 and N more" when there are others; "PATH: cannot
 * open|cannot read (reason)" (a directory reads as an error); "PATH: no
 * SwitchName line"; or more levels than TC_LOC_MAX_SWITCHES (or a cycle).
 */
int tc_netconf_path(const char *path, const char *nodename, int *idx, char names[][TC_LOC_NAME_MAX],
                    char *err, size_t errlen);

/** tc_netconf_path() on the open stream @f (not closed), called @fname in
 *  the messages: a file, or memory through fmemopen (the fuzz target). */
int tc_netconf_read(FILE *f, const char *fname, const char *nodename, int *idx,
                    char names[][TC_LOC_NAME_MAX], char *err, size_t errlen);

/** 1 if @name belongs to Slurm hostlist @list ("a[0-3,7],b"), else 0.
 *  Safe on any NUL-terminated @list; the syntax is checked where lists
 *  are read (tc_netconf_path), a malformed list is matched here as far as
 *  it reads.  A name whose number has over 9 digits matches no range. */
int tc_hostlist_match(const char *list, const char *name);

#endif
