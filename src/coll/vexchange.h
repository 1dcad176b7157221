/*
 * coll/vexchange -- Gatherv, Scatterv, Allgatherv and Alltoallv inside a node, by
 * single copy over exposed buffers (KNEM paper, sections 3.3 and 5.5: the
 * irregular calls are the regular ones with per-process lengths and
 * offsets into one region), as resumable state machines (init/work/fini;
 * work never blocks).  Every process copies with the counts and
 * displacements it holds, or reads the one entry it needs of a peer's
 * exposed table (no message):
 *
 *  - Allgatherv: every process exposes its block (a readable region) and
 *    reads every other's into its receive buffer at its own displacement
 *    for that process (the displacements may differ between processes;
 *    MPI 4.0 section 6.7);
 *  - Gatherv, Scatterv: the root exposes its receive (send) buffer and its
 *    table of the blocks (each rank's length and offset, 16 bytes a rank,
 *    readable); each other process reads its entry (one system call),
 *    checks the length against its own count, and writes (reads) its
 *    block there, all at once, as Gather's writers do;
 *  - Alltoallv: every process exposes its send buffer and its send table
 *    (each peer's length and offset, 16 bytes a peer, readable); each
 *    reads peer j's entry for it (one system call), checks the length
 *    against its own count for j, and reads the block into its receive
 *    buffer at its displacement for j.  (The peer's displacements are
 *    the one thing a single-copy reader lacks: the exposed table gives
 *    them without a message.)
 *
 * One node, contiguous blocks (the bindings screen what is not: native).
 * A zero count moves nothing; an exposed buffer stays exposed until every
 * local process has finished the call.
 *
 * Owns: tc_vexchange_t.  May call: coll/ctx, coll/ctl, coll/fold (the
 * cookies' post), xfer/, libc.
 */
#ifndef TC_COLL_VEXCHANGE_H
#define TC_COLL_VEXCHANGE_H

#include "ctx.h"

#include <stddef.h>
#include <stdint.h>

enum { TC_VX_GATHERV = 0, TC_VX_SCATTERV, TC_VX_ALLGATHERV, TC_VX_ALLTOALLV };

typedef struct tc_vexchange {
    tc_ctx_t *ctx;
    int kind, root, state;
    uint64_t seq;
    const char *in;    /* our block (Gatherv, Allgatherv; Scatterv: the root's send buffer) */
    char *out;         /* Gatherv root, Allgatherv: the receive buffer; Scatterv: our block */
    size_t own;        /* bytes of our block (sent, or for Scatterv received) */
    const size_t *len; /* [size] the root's or every Allgatherv process's: bytes per rank */
    const size_t *off; /* [size] their byte offsets in the receive (send) buffer */
    uint64_t cookie;   /* our exposed buffer, or 0 */
    uint64_t *cookies; /* [nlocal] the others' */
    /* Alltoallv: the send side */
    const size_t *stab; /* [2 * size]: length, offset (from @in) of our block for each rank */
    size_t span;        /* bytes of the send buffer from @in that hold them (the Gatherv,
                           Scatterv root: of its buffer from rbase) */
    size_t *rtab;       /* the Gatherv, Scatterv root: length, offset from rbase of each
                           rank's block (owned) */
    ptrdiff_t rbase;    /*   its first block's byte in its buffer */
    uint64_t tcookie;   /* our exposed table */
    uint64_t *tcookies; /* [nlocal] the others' */
} tc_vexchange_t;

/** Prepare a @kind (TC_VX_*) on @ctx (one node, single copy).  @in, @out:
 *  as above (the root's own block may be in place: @in == @out + its
 *  offset, Scatterv @out == @in + its offset); @own our block's bytes;
 *  @len, @off: each rank's block, bytes and byte offset in the receive
 *  buffer (Scatterv: the send buffer), the root's or every Allgatherv
 *  process's (NULL elsewhere), the caller's until fini.  TC_OK or
 *  TC_ERR_NOMEM (call fini either way). */
tc_status_t tc_vexchange_init(tc_vexchange_t *op, tc_ctx_t *ctx, int kind, const void *in,
                              void *out, size_t own, const size_t *len, const size_t *off,
                              int root);

/** Alltoallv's send side, after init: @stab (length and offset from @in
 *  of our block for each rank, 2 x size words, the caller's until fini)
 *  within @span bytes from @in. */
static inline void tc_vexchange_send_table(tc_vexchange_t *op, const size_t *stab, size_t span)
{
    op->stab = stab;
    op->span = span;
}
/** Advance: TC_INPROGRESS until TC_OK or a failure (base/status). */
tc_status_t tc_vexchange_work(tc_vexchange_t *op);
void tc_vexchange_fini(tc_vexchange_t *op);

#endif
