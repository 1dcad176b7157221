/*
 * coll/cost -- a LogGP-style cost model of topocoll's algorithms across
 * nodes and of the flat algorithms a node-unaware MPI runs in their place:
 * the time of one call from a few measured parameters (a message's
 * latency between nodes, the link's rate, a handoff between processes of
 * a node, the single-copy and reduction rates) and the algorithm's shape
 * (tree, chain, ring, pairwise exchange).  What topocoll_info --model
 * prints, and what docs/scaling.md validates against the emulated hosts.
 *
 * The shapes (N nodes of P processes, R = N x P ranks placed by node,
 * lg(x) = ceil(log2 x), X(m) = alpha + m / link a message between nodes,
 * I(m) = alpha_node + m / copy a handoff and copy on a node):
 *   topocoll (the plan's choices, coll/plan; HierKNEM sections 3-4):
 *     Bcast: pipelined chain of leaders, 32 KiB segments, from
 *       TOPOCOLL_CHAIN_MIN on more than 2 nodes: (N - 1 + k - 1) X(s) + I(s);
 *       else a binomial tree of leaders: lg(N) X(n) + I(seg);
 *     Reduce: the node's fold by slices, then the same trees reversed,
 *       each stage adding its operation; on N >= 4 nodes from
 *       TOPOCOLL_HALVING_MIN up to TOPOCOLL_CHAIN_MIN, Rabenseifner's
 *       reduce between leaders (N' = 2^floor(log2 N),
 *       r = N - N' pairs folded first): [r > 0] (X(n) + n / op) + sum over
 *       j = 1 .. log2 N' of (2 alpha + n / 2^j (2 / link + 1 / op));
 *     Allreduce: fold, the P slices' rings across nodes (each carrying
 *       n / P), then each process reads the other slices:
 *       2 (N - 1) (alpha + n / (N link)) and the folds and reads;
 *     Allgather: the leaders' ring of node blocks, each process reading
 *       them from its leader: (N - 1) X(P b) + (R - P) b / copy; on 4, 8,
 *       16 ... nodes up to TOPOCOLL_ALLGATHER_RD_MAX bytes a node the
 *       leaders' recursive doubling, on other N from 4 Bruck's
 *       concatenation: ceil(log2 N) alpha + (N - 1) P b / link;
 *     Alltoall: one message per slice and pair of nodes:
 *       (N - 1) (alpha + P^2 b / link) and the packing copies;
 *     at or below TOPOCOLL_<COLL>_FLAT_MAX: the native algorithm; above
 *     it and up to TOPOCOLL_XTUNE_MAX the faster of both (what the
 *     communicator's tuner measures and keeps).
 *   native (Open MPI's tuned component: its fixed decision's tables, the
 *   same in 4.1.4 and later, which pick an algorithm by rank count and
 *   size and pass no segment size; ranks placed by slot, so a flat tree
 *   or ring crosses nodes where rank distances reach P):
 *     trees (linear, chain, binary, split binary, binomial, Reduce's
 *       in-order binomial, knomial of radix 4) simulated rank by rank,
 *       whole messages, each node's link taken by one transfer at a time;
 *     recursive doubling, Rabenseifner, rings, neighbor exchange,
 *       pairwise, Bruck, scatter + allgather counted step by step, every
 *       node's link carrying the bytes its ranks send off the node.
 *   The link bound: the busiest node's bytes on its link / link (the same
 *   count as topocoll_bench --link).
 * Two levels (switches S >= 2): S leaf switches of k = N / S consecutive
 * nodes (N a multiple of S), each joined to a core switch by an uplink of
 * rate uplink.  A message between switches takes its node links and both
 * uplinks (the trees: each uplink one transfer at a time; the steps: every
 * message of a switch through its uplink together).  topocoll's
 * Allreduce and Allgather run by switch where k >= 2 (coll/plan):
 * Allgather's ring across (S - 1 nodes' blocks, the k leaders of a
 * switch through its uplink together) and the switch's ring ((k - 1) S
 * nodes' blocks, each forwarded once it is in) at once; Allreduce's stages in the switch (2 (k - 1)
 * / k n on the link) and across (2 (S - 1) / S n through the uplink), added up, or overlapping (the
 * slower of the two) with several slices and ring segments, which drift apart.  Every other
 * algorithm as above, each message or step that crosses a switch at its uplink's share (Reduce's
 * halving: the switch whose leaders send the most across).  The bound: also
 * the bytes that must cross an uplink (Bcast, Reduce n; Allreduce
 * 2 (S - 1) / S n; Allgather k (S - 1) P b; Alltoall k P (N - k) P b).
 * Emulated hosts sharing one machine's cores (cores > 0): each message and
 * handoff waits sched x (R / cores - 1) more, and a call takes at least
 * its bytes on every link together / cpu plus its node copies spread over
 * the cores.
 *
 * Units: seconds, bytes, bytes per second.  Sizes as topocoll_bench counts
 * them: the vector (Bcast, Reduce, Allreduce), each rank's block
 * (Allgather, Alltoall).
 *
 * Owns: nothing (stateless, thread-safe).  May call: libc (math).
 */
#ifndef TC_COLL_COST_H
#define TC_COLL_COST_H

#include <stddef.h>

/** The most ranks (nodes x processes) the model takes. */
#define TC_COST_MAX_RANKS (1 << 14)

/** The collectives the model knows, in this order. */
enum {
    TC_COST_BCAST,
    TC_COST_REDUCE,
    TC_COST_ALLREDUCE,
    TC_COST_ALLGATHER,
    TC_COST_ALLTOALL,
    TC_COST_BARRIER,
    TC_COST_NCOLLS
};

/** The model's parameters (see the header's comment). */
typedef struct tc_cost_params {
    double alpha;       /**< s: a message between nodes, one way (half an 8 B round trip) */
    double link;        /**< B/s: a node's link, each direction */
    double alpha_node;  /**< s: a handoff between two processes of one node */
    double copy;        /**< B/s: one process's single copy (CMA) */
    double op;          /**< B/s: one process applying MPI_SUM to doubles, per input byte */
    int cores;          /**< emulation: the cores every node shares; 0: each node its own */
    double sched;       /**< s: emulation: each message's extra wait per process beyond a core */
    double cpu;         /**< B/s: emulation: bytes on all links together the cores carry */
    int switches;       /**< leaf switches of nodes / switches consecutive nodes each; 0, 1: one */
    double uplink;      /**< B/s: a leaf switch's uplink, each direction; 0: unlimited */
    size_t chain_min;   /**< TOPOCOLL_CHAIN_MIN */
    size_t halving_min; /**< TOPOCOLL_HALVING_MIN */
    size_t bcast_owners_min;         /**< TOPOCOLL_BCAST_OWNERS_MIN */
    size_t allgather_rd_max;         /**< TOPOCOLL_ALLGATHER_RD_MAX */
    size_t flat_max[TC_COST_NCOLLS]; /**< TOPOCOLL_<COLL>_FLAT_MAX: native at or below */
    size_t xtune_max;                /**< TOPOCOLL_XTUNE_MAX: the faster of both up to it */
} tc_cost_params_t;

/** One call's predicted cost. */
typedef struct tc_cost {
    double t;        /**< s: the call */
    double wire;     /**< B: the busiest node's link, its busier direction */
    double wire_all; /**< B: sent on all links together */
    double copy_all; /**< B: copied within the nodes, all processes together */
    const char *alg; /**< the algorithm modelled, in words */
} tc_cost_t;

/** Parameters of one node per machine with a @link_bps link (bits/s):
 *  the latency and copy rates measured on this project's reference host
 *  (docs/scaling.md), topocoll's default thresholds, no emulation. */
void tc_cost_defaults(tc_cost_params_t *p, double link_bps);

/** The collective's index for a topocoll_bench --coll name, or -1. */
int tc_cost_coll(const char *name);
/** The collective's name. */
const char *tc_cost_coll_name(int coll);

/**
 * The native MPI's (tuned's flat algorithms) and topocoll's cost of
 * @coll on @nodes nodes of @ppn processes, @bytes as the header says, into
 * @out.  0, or -1 for an unknown collective, a shape below 1 x 1 or above
 * TC_COST_MAX_RANKS ranks, p->switches above 1 that does not divide @nodes.
 */
int tc_cost_native(int coll, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p,
                   tc_cost_t *out);
int tc_cost_topocoll(int coll, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p,
                     tc_cost_t *out);

/** The link bound (s): the least bytes the busiest node's link must carry
 *  for @coll, at p->link, or under leaf switches the least bytes a
 *  switch's uplink must carry at p->uplink, whichever takes longer. */
double tc_cost_bound(int coll, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p);

#endif
