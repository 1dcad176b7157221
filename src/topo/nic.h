/*
 * topo/nic -- Non-Uniform I/O Access (NUIOA paper, sections 2.2 and 3.2):
 * which network interfaces a node has, which cores are closest to each,
 * and the election of the node's leaders near them.
 *
 * A NIC is a PCI device carrying network OS devices (an OpenFabrics
 * device such as mlx5_0, and/or network interfaces such as ib0 or eth0;
 * several OS devices of one card are one NIC).  Its locality is the cpuset
 * of its nearest non-I/O ancestor in hwloc's tree (a package, a NUMA node's
 * parent, or the machine).  Loopback and virtual interfaces (no PCI
 * device, or names such as lo, veth*, docker*, virbr*) are ignored.
 *
 * The election is a pure function of what every process of a node
 * reports (its score against each NIC, its package and NUMA node), so
 * every process of the communicator computes the same leaders from the
 * node map's one exchange, with no further communication.
 *
 * Owns: tc_nics_t (the process-wide NIC list, read-only once found) and
 * the election rules.  May call: hwloc, topo/topo, base/.  No MPI.
 */
#ifndef TC_TOPO_NIC_H
#define TC_TOPO_NIC_H

#include "topo.h"

#include <stddef.h>

#define TC_NIC_MAX      8 /* NICs (rails) considered per node */
#define TC_NIC_NAME_MAX 32

typedef enum { TC_NIC_OPENFABRICS = 0, TC_NIC_NETWORK } tc_nic_class_t;

typedef struct tc_nic {
    char name[TC_NIC_NAME_MAX]; /* preferred OS device: the OpenFabrics one, else the first network
                                   one */
    char osdevs[96];            /* every OS device of the card, comma-separated */
    char busid[16];             /* PCI "dddd:bb:dd.f" */
    tc_nic_class_t klass;
    hwloc_bitmap_t cpuset; /* cpuset of the nearest non-I/O ancestor */
    char near[48];         /* that ancestor, "Package:1" (hwloc type:logical index) */
    int pkg, numa;         /* logical index of the package / NUMA node whose cpuset
                              contains the NIC's locality, -1 if none does */
} tc_nic_t;

typedef struct tc_nics {
    int n; /* NICs chosen, in rail order */
    tc_nic_t nic[TC_NIC_MAX];
    char why[256];     /* how they were chosen, one line */
    char ignored[256]; /* OS devices ignored and why ("lo: no PCI device; ...") */
} tc_nics_t;

/**
 * Find the NICs of topology @t (loaded with I/O devices).  @filter NULL or
 * "": the OpenFabrics cards if there are any (several: multi-rail), else
 * the cards carrying network interfaces.  @filter "a,b": the cards with an
 * OS device or PCI bus id named a, b, in that order (rail order); names
 * not found are reported in ->why.  Fills @out (free with tc_nics_free);
 * returns the number of NICs (0: none, leaders fall back to the lowest
 * rank).  Not thread-safe on @out; @t read-only.
 */
int tc_nics_find(const tc_topo_t *t, const char *filter, tc_nics_t *out);
void tc_nics_free(tc_nics_t *n);

/** The NICs of the process-wide topology with TOPOCOLL_NIC, found once
 *  (thread-safe); never NULL (n = 0 when hwloc failed). */
const tc_nics_t *tc_nics_process(void);

/**
 * Distance score of a process bound to @cpuset from NIC @nic (NUIOA 3.2,
 * the NUIOA rule): 0 inside the NIC's locality cpuset (its NUMA node or
 * package), 1 in the same NUMA node, 2 in the same package, 10 + the
 * hwloc NUMA latency rank (the position of the NIC's NUMA node among the
 * process's NUMA node's distances) when hwloc has a distance matrix, 100
 * otherwise; TC_NIC_SCORE_UNBOUND for an unbound process (@bound 0).
 * Lower is closer.
 */
#define TC_NIC_SCORE_UNBOUND 1000
int tc_nic_score(const tc_topo_t *t, const tc_nic_t *nic, hwloc_const_bitmap_t cpuset, int bound);

/* ---- election ------------------------------------------------------------- */

typedef enum {
    TC_LEAD_AUTO = 0, /* nic where a NIC is found, else first; per-package leaders
                         for large Bcast/Allgather when they save link crossings */
    TC_LEAD_NIC,      /* one leader per node (per NIC with several), nearest the NIC */
    TC_LEAD_FIRST,    /* the node's lowest rank (HierKNEM's rule) */
    TC_LEAD_NUMA,     /* nic, plus one leader per NUMA node (HierKNEM 4.1) */
    TC_LEAD_PACKAGE   /* nic, plus one leader per package (HierKNEM 4.1) */
} tc_lead_policy_t;

/** "auto", "nic", "first", "numa", "package". */
const char *tc_lead_policy_name(tc_lead_policy_t p);
/** Parse one of those names; -1 if unknown. */
int tc_lead_policy_parse(const char *s);

#define TC_RAIL_MAX 4 /* rails used by the collectives */

/** What one process of a node reports to the election. */
typedef struct tc_lead_in {
    int score[TC_RAIL_MAX]; /* tc_nic_score against rail r's NIC */
    int nrails;             /* NICs its host has (capped at TC_RAIL_MAX) */
    int pkg, numa;          /* logical indexes containing its binding, -1 if none / unbound */
} tc_lead_in_t;

typedef struct tc_lead_out {
    int leader;            /* local rank of the node leader (rail 0) */
    int nrails;            /* rails with a distinct leader on this node (>= 1) */
    int rail[TC_RAIL_MAX]; /* local rank of each rail's leader */
    int domains;           /* 1: domain leaders below (numa/package/auto) */
} tc_lead_out_t;

/**
 * Elect the leaders of one node of @n processes (@in indexed by local
 * rank) under @policy: the node leader is the process with the lowest
 * rail-0 score, ties to the lowest local rank (so policy first, no NIC,
 * unbound processes or a NIC at machine level all give local rank 0);
 * rail r's leader is the closest to NIC r among the processes not
 * already elected for a lower rail.  When @policy is numa, package or
 * auto, @dom_of[i] is process i's domain (its NUMA node, or package for
 * package and auto; -1 when unbound) and @dom_leader[i] the local rank of
 * its domain's leader (the node leader in its own domain, else the
 * domain's lowest local rank); both -1 under nic and first.  @dom_of and
 * @dom_leader may be NULL.  Deterministic: every process computes the
 * same result.
 */
void tc_lead_elect(tc_lead_policy_t policy, const tc_lead_in_t *in, int n, tc_lead_out_t *out,
                   int *dom_leader, int *dom_of);

/**
 * Where local process @i reads data that enters its node at local rank
 * @producer (the root, or the leader receiving it from the network),
 * HierKNEM 4.1's per-domain leaders: -1 for the producer itself; the
 * producer when @dom_of is NULL (no domain leaders), when i has no domain,
 * shares the producer's domain, or leads its own domain; else i's domain
 * leader (which reads it from the producer first).  So each domain other
 * than the producer's receives the data across the inter-socket link once.
 */
int tc_lead_source(int i, int producer, const int *dom_of, const int *dom_leader);

/** 1 when, after tc_lead_elect, a domain other than the node leader's
 *  holds two processes or more (some process reads from a domain leader
 *  that is neither the node leader nor itself): per-domain leaders then
 *  save link crossings.  @dom_leader as tc_lead_elect filled it. */
int tc_lead_dom_split(int n, const tc_lead_out_t *out, const int *dom_leader);

/**
 * The NUIOA paper's Figure 2 argument as a count: bytes a broadcast of
 * @bytes moves across the links between packages of one node of @n
 * processes (@pkg[i]: package of local rank i, -1 unknown), when each
 * process reads it from @src[i] (tc_lead_source; -1: none) and local rank
 * @net_at exchanges @net_msgs copies with the network (1 received on a
 * non-root node, plus one sent per child in the inter-node tree) through
 * a NIC attached to package @nic_pkg (-1: unknown, not counted).  A copy crosses when its two ends
 * are in different known packages.
 */
/** Rails a message of @bytes uses over @nrails rails: as many as give
 *  each rail at least @min / 2 bytes (at least 1). */
int tc_lead_rails_used(int nrails, size_t bytes, size_t min);

/** 1 if per-domain relays carry @bytes on a node of @n processes under
 *  @policy: numa/package always, auto when @split (tc_lead_dom_split) and
 *  @bytes >= @min; never below 3 processes. */
int tc_lead_relays_used(tc_lead_policy_t policy, int split, int n, size_t bytes, size_t min);

double tc_lead_link_bytes(int n, const int *pkg, const int *src, int net_at, int net_msgs,
                          int nic_pkg, double bytes);

#endif
