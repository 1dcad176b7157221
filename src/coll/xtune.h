/*
 * coll/xtune -- online choice, per communicator and size class, between
 * the native collective and topocoll's hierarchical one, on several nodes.
 *
 * Why: across nodes, which of the two wins for messages of 8 B to a few
 * hundred KiB depends on what no static threshold sees: how the ranks are
 * mapped onto the nodes (by slot or by node, which decides how many bytes
 * the native algorithms put on each host's link), the native library's
 * own algorithm choice, the link's latency.  Measured on 4 emulated hosts
 * x 2 ranks at 1 Gbit/s, Open MPI: an Allgather of 8 KiB blocks takes 691
 * µs through the leaders whatever the mapping, natively 828 µs by slot
 * but 417 µs by node (its recursive doubling then puts only each host's
 * own blocks on the link, at 1.06x the link bound).  So, as STAR-MPI does
 * for algorithms and as HAN's and MPICH's tables do offline, each
 * communicator measures both and keeps the faster.
 *
 * Protocol.  Collectives on a communicator are called in the same order
 * on every rank with the same message size, so every rank counts the same
 * calls in each (collective, size class) and needs no message to agree on
 * a method until the decision.  A class's first calls are runs of
 * consecutive calls of one method, alternating: topocoll, native
 * (untimed: first-use set-up such as TCP connections), then three of
 * each, timed.  A run is about 1 MiB of messages (4 to 64 calls), so that
 * the buffers of a link or a switch (a token bucket's burst on emulated
 * hosts) cannot hide the bytes a method puts on the wire.  Each rank
 * times a run's calls, entry to return, but its first (which absorbs the
 * other method's stragglers), plus a barrier on the private communicator
 * after its last: the barrier pays what the run left queued (a Reduce's
 * eager sends still crossing the link, which timed call by call were
 * charged to the next run, the other method's), while the application's
 * work between calls is not counted.  The next call takes each method's
 * median run on the slowest rank (one MPI_Allreduce with MPI_MAX of three
 * int64 on the private communicator: every rank gets the same integers,
 * so the same answer): the native runs from then on if it was faster by
 * TC_XT_MARGIN, topocoll otherwise.  The median, so that one lucky or
 * unlucky run cannot decide.  Where topocoll has two algorithms for the
 * size (coll/plan tc_plan_alt: Reduce's leaders by a binomial tree or by
 * Rabenseifner's reduce, or from TOPOCOLL_HALVING_MIN by Rabenseifner's
 * reduce or the block owners; Bcast's by a binomial tree or the block
 * owners from TOPOCOLL_BCAST_OWNERS_MIN; their crossovers move with the
 * link's rate and latency) the class measures the alternative as a third method, and
 * topocoll's faster one stands against the native.
 * The class measures again after TC_XT_PERIOD calls, and at least 16
 * times its measurement's length.
 * Blocking calls measure; nonblocking ones take the class's decided
 * choice (tc_xtune_native_why) and measure nothing.
 *
 * Range: the collectives of the registry's XT column (base/colls.def),
 * several nodes, TOPOCOLL_XTUNE=1 (default), messages (Allgather:
 * blocks) above the collective's TOPOCOLL_*_FLAT_MAX, where the native
 * always runs, and at most TOPOCOLL_XTUNE_MAX.
 *
 * Owns: the statistics (tc_ctx_t.xt).  May call: coll/ctx, base/, PMPI.
 */
#ifndef TC_COLL_XTUNE_H
#define TC_COLL_XTUNE_H

#include "ctx.h"

#include <stddef.h>

/* the methods: topocoll (its default algorithm), the native, topocoll's
 * alternative algorithm (coll/plan tc_plan_alt) */
enum { TC_XT_TOPO = 0, TC_XT_NATIVE = 1, TC_XT_ALT = 2 };

/* One call's part (on the caller's stack). */
typedef struct tc_xt_call {
    tc_xt_class_t *cls; /* its class when the call is timed, else NULL */
    int method;         /* TC_XT_* */
    int last;           /* 1: it ends a timed run */
    double t0;          /* PMPI_Wtime at entry */
    tc_ctx_t *c;
} tc_xt_call_t;

/**
 * The method for this call of collective @coll (TC_CI_*, base/colls.h) moving
 * @bytes (Allgather: the block) on @c, a built context; @alt: 1 if
 * topocoll has an alternative algorithm for it (coll/plan tc_plan_alt),
 * measured as a third method.  Collective over @c's communicator when it
 * decides (one MPI_Allreduce): call it on every rank, at the same point
 * of the call, with the same @bytes.  Fills @x; pass it to tc_xtune_end
 * when the call returns.  Outside the range (above) it returns
 * TC_XT_TOPO and measures nothing.
 */
int tc_xtune_begin(tc_ctx_t *c, int coll, size_t bytes, int alt, tc_xt_call_t *x);

/** 1 if the class of collective @coll of @bytes on @c has decided for
 *  topocoll's alternative algorithm (TC_XT_ALT), 0 before it decides or
 *  after it starts measuring again.  Read-only; the same on every rank at
 *  the same point of the program.  The nonblocking and persistent calls
 *  take it when called, and topocoll_info; a blocking call takes the
 *  method tc_xtune_begin gave it (tc_xt_call_t.method), which it may be
 *  measuring.  Either travels with the call (coll/coll
 *  tc_coll_args_t.alt): an operation queued behind others starts later,
 *  after blocking calls may have moved the class on. */
int tc_xtune_alt(const tc_ctx_t *c, int coll, size_t bytes);

/** The call of @x returned: when it ends a timed run, the run joins its class's samples. */
void tc_xtune_end(const tc_xt_call_t *x);

/** TOPOCOLL_<COLL>_FLAT_MAX of collective @coll (TC_CI_*): at or below it
 *  (bytes: the message, Allgather's block) the native collective runs on
 *  several nodes. */
size_t tc_xtune_flat_max(const tc_ctx_t *c, int coll);

/** Why collective @coll (TC_CI_*) of @bytes on @c, a built context, is
 *  left to the native MPI by choice across nodes, or NULL (topocoll runs
 *  it): a small message (tc_xtune_flat_max), or the class's measured
 *  choice once decided.  Local and read-only (it counts and measures
 *  nothing): the nonblocking calls and topocoll_info take it, so they run
 *  and print what the blocking call runs (which measures through
 *  tc_xtune_begin); the same on every rank. */
const char *tc_xtune_native_why(const tc_ctx_t *c, int coll, size_t bytes);

#endif
