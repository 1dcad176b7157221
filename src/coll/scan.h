/*
 * coll/scan -- the chain-based prefix reductions (MPI_Scan / MPI_Iscan,
 * and the exclusive MPI_Exscan / MPI_Iexscan) the progress-threads paper
 * studies (section 5, after libNBC): rank r receives the prefix of ranks
 * 0..r-1 from rank r-1, combines it with its own input and sends the
 * result on to rank r+1 (Exscan keeps what it received as its result).  From 3 ranks
 * the vector is cut into up to 8 segments (at least TC_SCAN_SEGSIZE
 * each) so that the chain is a pipeline: rank r forwards segment k while
 * segment k+1 is still on its way from r-1; 2 ranks send it whole.  The order of
 * combination is the canonical rank order, so non-commutative ops are
 * exact and every run gives the same bits.
 *
 * As a resumable state machine: init (segments, buffers), work (never
 * blocks: posts the receives of a window of segments, folds each arrived
 * segment into the output and posts its send), fini.  The chain runs
 * over the context's private communicator (pcomm), so its messages never
 * match the application's.
 *
 * Owns: tc_scan_t and its receive window.  May call: coll/ctx, coll/op,
 * PMPI point-to-point.
 */
#ifndef TC_COLL_SCAN_H
#define TC_COLL_SCAN_H

#include "ctx.h"
#include "op.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define TC_SCAN_WINDOW  4           /* segments in flight per link */
#define TC_SCAN_SEGSIZE (64u << 10) /* smallest pipeline segment (bytes) */

typedef struct tc_scan {
    tc_ctx_t *ctx;
    tc_rtype_t t;
    const char *in;          /* this rank's input (out when MPI_IN_PLACE) */
    char *out;               /* the prefix result, count elements */
    size_t count, seg, nseg; /* elements, elements per segment, segments */
    int rank, size;
    char *rbuf; /* [TC_SCAN_WINDOW] segments from the left neighbour */
    size_t rposted, rdone, sposted, sdone;
    MPI_Request rreq[TC_SCAN_WINDOW], sreq[TC_SCAN_WINDOW];
    uint64_t seq;
    int tag;
    int exclusive; /* MPI_Exscan: out gets the lower ranks' prefix alone */
    char *acc;     /* exclusive, ranks that send: prefix op input, sent on */
} tc_scan_t;

/** Prepare an inclusive scan (@exclusive 0: MPI_Scan) or an exclusive one
 *  (1: MPI_Exscan; rank 0's @out is left as it is) of @count elements
 *  (> 0) of @t over ctx's communicator; @in may equal @out
 *  (MPI_IN_PLACE).  TC_OK or TC_ERR_NOMEM.  Messages use pcomm with a tag
 *  derived from ctx->seq, so scans on one communicator may follow each
 *  other back to back. */
tc_status_t tc_scan_init(tc_scan_t *op, tc_ctx_t *ctx, const void *in, void *out, size_t count,
                         const tc_rtype_t *t, int exclusive);
/** Advance: TC_OK, TC_INPROGRESS or an MPI error code. */
tc_status_t tc_scan_work(tc_scan_t *op);
/** Release the receive window (after DONE or an error; cancels nothing:
 *  call it only once work returned DONE or an error). */
void tc_scan_fini(tc_scan_t *op);

#endif
