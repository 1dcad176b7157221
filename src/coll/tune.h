/*
 * coll/tune -- online choice, per communicator, between copy-in/copy-out
 * (CICO) and single copy for one-node Reduce, Allreduce, Allgather and
 * Bcast in the size range where neither wins everywhere.
 *
 * Why: above TOPOCOLL_*_CICO_MAX (8 KiB; Bcast 32 KiB), up to the CICO
 * slots' capacity (512 KiB by default; any size for Bcast, Allreduce and
 * Allgather, pipelined through the slots), the faster intra-node method
 * depends on whether the processes share a last-level cache.  On this project's 2-vCPU host
 * that changes over minutes (the vCPUs move between host caches): CICO
 * measured 2-4x native in one state and 0.5x in the other, single copy
 * 0.8-1.3x in both.  A static threshold loses in one state or the other;
 * so, as STAR-MPI does for algorithms, the communicator measures both and
 * keeps the faster, re-trying the other now and then.
 *
 * Protocol (single writer, no extra synchronisation): local rank 0, the
 * tuner, times its own calls (from its start to the moment every local
 * process has finished) and keeps per size class (powers of two) the
 * moving average of each method.  It publishes its choice in one word per
 * (collective, size class) of its control line: (old, new, from_seq); a
 * call with sequence s uses new when s >= from_seq, old before.  The
 * tuner writes only at the start of a call L (after every local process
 * finished L-1, so nobody still needs a sequence below L, and nobody can
 * read for one above L+1), with from_seq = L+2 and old = the method
 * already in force at L, and only once the previous change is in force
 * (its from_seq <= L).  Every process therefore derives the same method
 * for every call, whatever the timing of its reads.
 *
 * The last step of that argument, that a process which finished call L
 * has seen the word written at L's start, holds because every process of
 * a tuned Reduce, Allreduce or Allgather acquires the tuner's post of L
 * (or, in the pipelined Allgather, the count of the tuner's first chunk,
 * released after that post) before completing.  A Bcast's receivers
 * synchronise with its source only, so in a tuned Bcast the tuner
 * publishes tune_seq = L (release) after its write, and every process
 * acquires it before completing.
 *
 * Only on one node (several nodes: the methods differ in their inter-node
 * part too), with single copy working, and TOPOCOLL_TUNE=1 (default).
 *
 * Owns: the tuner's statistics (in tc_ctx_t) and the choice words (in
 * local rank 0's tc_cctl_t).  May call: coll/ctx, xfer/shmseg, libc.
 */
#ifndef TC_COLL_TUNE_H
#define TC_COLL_TUNE_H

#include "ctx.h"

#include <stddef.h>
#include <stdint.h>

enum { TC_TUNE_REDUCE = 0, TC_TUNE_ALLREDUCE, TC_TUNE_ALLGATHER, TC_TUNE_BCAST };

/* One call's part in the tuning (kept in the collective's op). */
typedef struct tc_tune {
    int kind;         /* TC_TUNE_* */
    int bucket;       /* size class, -1: not tuned (static choice) */
    int cico;         /* the method of this call: 1 CICO, 0 single copy */
    unsigned cold[2]; /* samples of each method dropped as cold (first
                         touches) before its warm-up samples */
    uint64_t t0_ns;   /* tuner: when the call started */
} tc_tune_t;

/** 1 if calls of collective @kind moving @bytes per process (per block
 *  for Allgather) on @ctx are tuned online: TOPOCOLL_TUNE=1, one node,
 *  single copy working everywhere, @bytes above the kind's
 *  TOPOCOLL_*_CICO_MAX and, for Reduce (whose CICO path holds the whole
 *  message in the slots), at most the slots' capacity; Bcast's, and with
 *  slots of 4 KiB or more Allreduce's (lanes) and Allgather's (broadcast
 *  rings), CICO paths are pipelined through the slots: any size. */
int tc_tune_range(const tc_ctx_t *ctx, int kind, size_t bytes);

/**
 * The method of the call with sequence @seq of collective @kind moving
 * @bytes per process (per block for Allgather), on @ctx.  @static_cico is
 * the static choice (thresholds), used outside the tuned range
 * (tc_tune_range) and when tuning is off.  Fills @tu.
 * Local (reads the tuner's word); every local process gets the same
 * answer for the same @seq.  Returns @tu->cico.
 */
int tc_tune_choose(tc_tune_t *tu, const tc_ctx_t *ctx, int kind, size_t bytes, int static_cico,
                   uint64_t seq);

/** At the start of call @seq, once every local process has finished
 *  @seq - 1 (the collectives' ST_START): the tuner stamps the start time
 *  and may publish a new choice.  No-op elsewhere and when not tuned. */
void tc_tune_start(tc_tune_t *tu, tc_ctx_t *ctx, uint64_t seq);

/** 1 if this process must, before completing, wait until every local
 *  process has finished the call (the tuner measures the whole call). */
static inline int tc_tune_waits(const tc_tune_t *tu, const tc_ctx_t *ctx)
{
    return tu->bucket >= 0 && ctx->shm && ctx->shm->me == 0;
}

/** The tuner, once every local process has finished the call: record its
 *  duration.  No-op elsewhere and when not tuned. */
void tc_tune_end(tc_tune_t *tu, tc_ctx_t *ctx);

/** The tuner's averages, one line per size class used, on stderr
 *  (TOPOCOLL_VERBOSE >= 1; the context's release calls it). */
void tc_tune_report(const tc_ctx_t *ctx);

#endif
