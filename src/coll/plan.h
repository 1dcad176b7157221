/*
 * coll/plan -- the plan of one collective call: which algorithm runs
 * (the native MPI's, or one of topocoll's, base/algs.def) and why, chosen
 * by one set of functions that every path takes: the blocking calls, the
 * nonblocking engine's starts, topocoll_info and the report.  A plan
 * depends only on the context (node map, configuration, coll/xtune's
 * decided choices), the collective and the call's byte count, so every
 * rank of a correct program takes the same one (as HAN's and tuned's
 * decision functions do); TOPOCOLL_<COLL>_ALG forces one where it
 * applies (Open MPI's coll_tuned_<coll>_algorithm, HAN's per-level
 * module choice).
 *
 * The decisions, and every size threshold between algorithms, live here
 * (the collectives take them through these functions); the intra-node
 * mechanism (single copy, CICO, eager) is the collective's, with
 * coll/tune's measured choice where it applies.
 *
 * Owns: tc_plan_t and the choice rules.  May call: coll/ctx, coll/xtune,
 * the collectives' fit tests (coll/exchange, coll/fold, coll/vexchange),
 * base/.
 */
#ifndef TC_COLL_PLAN_H
#define TC_COLL_PLAN_H

#include "../base/colls.h"
#include "ctx.h"

#include <stddef.h>

/* A collective call's plan.  @why is a static phrase. */
typedef struct tc_plan {
    int coll;        /* TC_CI_* (base/colls.def) */
    tc_alg_t alg;    /* what runs: TC_ALG_NATIVE or topocoll's, never TC_ALG_AUTO */
    int forced;      /* 1: TOPOCOLL_<COLL>_ALG chose it */
    const char *why; /* why that algorithm, one phrase */
} tc_plan_t;

/** Why collective @ci (TC_CI_*) of @bytes (the message; a block for
 *  Allgather and Alltoall) on @c, a built and enabled context, goes to
 *  the native MPI by the plan, or NULL: TOPOCOLL_<COLL>_ALG=native; on
 *  several nodes, unless an algorithm is forced, a message at most
 *  TOPOCOLL_<COLL>_FLAT_MAX, or coll/xtune's decided choice.  Local and
 *  read-only (the blocking calls measure on top of it: tc_xtune_begin);
 *  the same on every rank. */
const char *tc_plan_native_why(const tc_ctx_t *c, int ci, size_t bytes);

/** The algorithm TOPOCOLL_<COLL>_ALG forces for collective @ci on @c
 *  (TC_ALG_AUTO: none).  A forced algorithm that cannot run on @c's
 *  nodes (a chain on one node) is the plan's choice instead. */
static inline int tc_plan_forced(const tc_ctx_t *c, int ci) { return c->cfg->alg[ci]; }

/** 1 if a Bcast (part) or Reduce (@ci) of @bytes moves between nodes
 *  along a chain from or to the root's node, else a binomial tree: forced
 *  (TOPOCOLL_<COLL>_ALG=chain|binomial, on 2 nodes or more), else from
 *  TOPOCOLL_CHAIN_MIN on 3 nodes or more: the root's node then sends or
 *  receives the data once, where a binomial tree has it send or receive
 *  log2(N) times; pipelined in S segments, a chain takes S + N - 2
 *  segment times, about one link's time for the message.  The same on
 *  every process. */
int tc_plan_chain(const tc_ctx_t *c, int ci, size_t bytes);

/** 1 if topocoll has a second algorithm for collective @ci of @bytes on
 *  @c, which coll/xtune measures as a third method (TC_XT_ALT), both
 *  unforced and below TOPOCOLL_CHAIN_MIN: Reduce on 4 nodes or more
 *  (below TOPOCOLL_HALVING_MIN the leaders' binomial tree and
 *  Rabenseifner's reduce, from it Rabenseifner's reduce and the block
 *  owners: tc_plan_reduce_net); Bcast on 3 nodes or more from
 *  TOPOCOLL_BCAST_OWNERS_MIN, over one rail (the leaders' binomial tree
 *  and the block owners: tc_plan_bcast_net).  The same on every
 *  process. */
int tc_plan_alt(const tc_ctx_t *c, int ci, size_t bytes);

/** How a Bcast of @bytes moves between the node leaders (coll/bcast):
 *  TC_ALG_CHAIN, TC_ALG_OWNERS or TC_ALG_BINOMIAL.  Forced
 *  (TOPOCOLL_BCAST_ALG; the block owners need 3 nodes or more,
 *  TC_BCAST_MAXCHILD + 2 at most, and one rail: else tc_plan_chain's
 *  choice); else the block owners where tc_plan_alt holds and @alt says
 *  coll/xtune took topocoll's alternative for the call (the root sends
 *  each other leader a block of the message, which it passes on to the
 *  N - 2 others: the root's link carries it once, a binomial tree's
 *  log2 N times); else tc_plan_chain's choice.  The same on every
 *  process for the same @alt (coll/coll tc_coll_args_t.alt). */
int tc_plan_bcast_net(const tc_ctx_t *c, size_t bytes, int alt);

/** How a Reduce of @bytes moves between the node leaders (coll/reduce):
 *  TC_ALG_CHAIN, TC_ALG_HALVING, TC_ALG_OWNERS or TC_ALG_BINOMIAL.
 *  Forced (TOPOCOLL_REDUCE_ALG, on 2 nodes or more); else on N >= 4
 *  nodes from TOPOCOLL_HALVING_MIN up to TOPOCOLL_CHAIN_MIN,
 *  Rabenseifner's reduce (recursive halving, then a binomial gather: the
 *  root's link carries 2 (N' - 1) / N' vectors, N' the power of two at
 *  most N, where a binomial tree's carries log2 N; on 3 nodes both carry
 *  2), or the block owners where @alt says coll/xtune took topocoll's
 *  alternative for the call (the other N - 1 leaders reduce a block of
 *  each segment each and send it to the root's, whose link carries the
 *  vector once, in 2 N - 3 messages a segment per leader); below it the
 *  binomial tree, or Rabenseifner's reduce where @alt; else
 *  tc_plan_chain's choice.  The same on every process for the same @alt
 *  (coll/coll tc_coll_args_t.alt). */
int tc_plan_reduce_net(const tc_ctx_t *c, size_t bytes, int alt);

/** How an Allreduce's slices (coll/allreduce) run between the nodes:
 *  TC_ALG_SWITCHES where the nodes sit under 2 or more leaf switches
 *  (TOPOCOLL_NETWORK_TOPOLOGY) holding as many nodes each, 2 or more
 *  (tc_nodemap_t's swg_*), unless TOPOCOLL_ALLREDUCE_ALG=slices: each
 *  slice reduce-scatters its piece along a ring inside every switch,
 *  the nodes with the same place in their switch then allreduce their
 *  chunk along a ring across the switches, and the switch's ring
 *  allgathers it (Patarasuk and Yuan's ring Allreduce in two
 *  dimensions, as the 2D-torus all-reduce of Mikami et al., 2018, with
 *  the switches as one dimension).  Each host sends
 *  what the single ring's does, 2 (N - 1) / N of the vector, in
 *  2 (k + S - 2) steps instead of 2 (N - 1) (S switches of k nodes), and
 *  a switch's uplink carries the vector 2 (S - 1) / S times each way
 *  instead of 2 (N - 1) / N times per ring crossing (8 hosts under 2
 *  switches: 1 against 1.75).  Else TC_ALG_SLICES: one ring over every
 *  node.  The same on every process. */
int tc_plan_allreduce_net(const tc_ctx_t *c);

/** Gatherv's or Scatterv's (@ci) algorithm on several nodes (coll/vroot):
 *  TC_ALG_LEADER (one message between the root and each other node's
 *  collector; the default) or TC_ALG_LINEAR (every other node's processes
 *  straight to or from the root: TOPOCOLL_<COLL>_ALG=linear).  The same
 *  on every process. */
int tc_plan_vroot(const tc_ctx_t *c, int ci);

/* Allgather's methods (coll/allgather). */
enum { TC_AG_USE_CICO = 0, TC_AG_USE_LEADER, TC_AG_USE_RING };

/** The method of an Allgather of @block bytes per process on @c
 *  (TC_AG_USE_*; coll/tune may then take CICO on one node): CICO on one
 *  node up to TOPOCOLL_ALLGATHER_CICO_MAX within the slots; else forced
 *  (ring, leader), else the ring of every process (physical order) on one
 *  node (direct reads between neighbours, every process copying in
 *  parallel; leader-based would serialise on the leader) and across nodes
 *  when a node holds more than 6 processes and blocks are 8 KiB or more
 *  (the leader's serial gather then costs more than the ring's N - 1
 *  steps); else leader-based.  The same on every process. */
int tc_allgather_alg(const tc_ctx_t *c, size_t block);

/** 1 if a leader-based Allgather on @c has its leaders exchange by leaf
 *  switch: the nodes sit under 2 or more leaf switches holding as many
 *  nodes each, 2 or more (TOPOCOLL_NETWORK_TOPOLOGY; tc_nodemap_t's
 *  swg_*).  S switches of k nodes: S - 1 steps along the ring of the
 *  nodes at the same place under every switch, each passing on one
 *  node's blocks, then k - 1 steps along the switch's ring, each passing
 *  on S nodes' blocks; a node's blocks cross into every other switch
 *  once, so an uplink carries (S - 1) / S of the result each way, the
 *  least it can, where the ring's crossings carry (N - 1) / N and
 *  recursive doubling's up to N / 2 nodes' blocks per leader.  Every
 *  size: the switches take precedence over tc_allgather_rd.  The same on
 *  every process. */
int tc_allgather_sw(const tc_ctx_t *c);

/** 1 if a leader-based Allgather of @block bytes per process on @c has
 *  its leaders exchange in ceil(log2 N) steps, else along the ring (N - 1
 *  steps): N from 4, the largest node's blocks at most
 *  TOPOCOLL_ALLGATHER_RD_MAX, and not by switch (tc_allgather_sw).  N a power of two: recursive
 * doubling (step j swaps the 2^j nodes' blocks each holds with node ^ 2^j); else Bruck's
 *  concatenation (step j sends them to node - 2^j, the last step only
 *  those still missing there).  The same on every process. */
int tc_allgather_rd(const tc_ctx_t *c, size_t block);

/** Inter-node segment size (bytes) of a broadcast (part) of @bytes from
 *  @root: TOPOCOLL_BCAST_SEGSIZE; else the whole message when the
 *  pipeline has nothing to overlap (two nodes, one process on the
 *  receiving one); along a chain, TC_NET_SEG (32 KiB); else the HierKNEM
 *  Table 1 value for the IB cluster (8 KiB below 64 KiB, 64 KiB above)
 *  raised to bytes/8 (4 KiB aligned): at most ~8 segments. */
size_t tc_plan_bcast_seg(const tc_ctx_t *ctx, size_t bytes, int root);

/** The plan of collective @ci of @bytes on @c (a built, enabled
 *  context): the native MPI (tc_plan_native_why), or topocoll's algorithm
 *  for the call.  Local and read-only; the same on every rank. */
void tc_plan_select(const tc_ctx_t *c, int ci, size_t bytes, tc_plan_t *p);
/** As tc_plan_select, but topocoll's algorithm wherever one applies,
 *  where the plan chose the native MPI for speed alone (the flat rule,
 *  coll/xtune's measurements): for a call the native MPI cannot be
 *  trusted with (@why: the reason the plan records).  The native MPI
 *  still where TOPOCOLL_<COLL>_ALG=native asks for it or none applies. */
void tc_plan_select_own(const tc_ctx_t *c, int ci, size_t bytes, const char *why, tc_plan_t *p);

#endif
