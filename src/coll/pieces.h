/*
 * coll/pieces -- messages between nodes as streams of pieces that are
 * never truncated, for the collectives whose counts differ per rank
 * (coll/vexchange), where only the sender knows its count for sure.
 *
 * A message of n bytes goes as n / TC_NET_SEG pieces of TC_NET_SEG bytes
 * (coll/ctx: below the TCP transports' eager limit) and a shorter last one
 * (0 bytes when n is a multiple): a piece shorter than TC_NET_SEG ends
 * the sender's stream, whatever the receiver expected.  The receiver
 * posts every piece but the last ahead, in place (room TC_NET_SEG, and no
 * piece is longer); the last one it probes first (MPI_Improbe, MPI-4.0
 * section 3.8.2) and receives in place (MPI_Imrecv) only when it is as
 * long as expected.  So a count that disagrees with the sender's never
 * reaches the MPI library's truncation (Open MPI 4.1's shared-memory
 * transport writes a truncated piece past the buffer; MPICH 4.0 raises
 * it on MPI_COMM_WORLD), and no piece of it is left to match a later
 * call's receive:
 *  - a short piece where a full one was due ends the stream early: the
 *    message's receives after it are cancelled;
 *  - a last piece of another length lands in a scratch piece, and while
 *    the sender's pieces are full, the next one too (drained).
 * Such a message counts as failed (TC_ERR_TRUNCATE in tc_pieces_t.fail);
 * the others complete as usual.
 *
 * One operation owns a tc_pieces_t and drives it from one thread.
 *
 * Owns: tc_pieces_t, the piece protocol.  May call: coll/ctx (TC_NET_SEG,
 * tc_req_abandon), PMPI, libc.
 */
#ifndef TC_COLL_PIECES_H
#define TC_COLL_PIECES_H

#include "ctx.h"

#include <stddef.h>

/* One piece: sent, or received (posted ahead, or probed then received). */
typedef struct tc_piece {
    char *buf;           /* where it comes from, or goes */
    size_t len;          /* bytes sent, or expected */
    int peer, tag;       /* (a probed one's source and tag) */
    unsigned char state; /* (pieces.c) */
    unsigned char last;  /* the last piece of its message */
    unsigned char ok;    /* over: sent, or received as long as expected */
    unsigned char more;  /* draining: the piece in flight is a full one */
} tc_piece_t;

typedef struct tc_pieces {
    MPI_Comm comm;
    MPI_Request *req; /* [cap] */
    tc_piece_t *p;    /* [cap] */
    int n, cap, done; /* posted, room, over in order (tc_pieces_progress) */
    char *scratch;    /* TC_NET_SEG bytes where a disagreeing piece lands (owned) */
    tc_status_t fail; /* TC_ERR_TRUNCATE once a message disagreed, else TC_OK */
} tc_pieces_t;

/** Pieces of a message of @bytes: bytes / TC_NET_SEG + 1. */
static inline size_t tc_pieces_of(size_t bytes) { return bytes / TC_NET_SEG + 1; }

/** Room for @cap pieces on @comm.  TC_OK or TC_ERR_NOMEM (fini either way). */
tc_status_t tc_pieces_init(tc_pieces_t *ps, MPI_Comm comm, size_t cap);

/** Post the message of @bytes at @buf to (@send) or from rank @peer with
 *  @tag, tc_pieces_of(@bytes) pieces; *@first (may be NULL): the first
 *  piece's index.  TC_OK or an MPI failure. */
tc_status_t tc_pieces_post(tc_pieces_t *ps, char *buf, size_t bytes, int peer, int tag, int send,
                           int *first);

/** Send one piece of @len (at most TC_NET_SEG) bytes: a relay forwarding
 *  a piece as it came (a piece shorter than TC_NET_SEG ends the stream). */
tc_status_t tc_pieces_send1(tc_pieces_t *ps, char *buf, size_t len, int peer, int tag);

/** Drive piece @q: TC_OK once it is over (p[q].ok: as expected; else the
 *  message failed), TC_INPROGRESS, or an MPI failure.  Never blocks. */
tc_status_t tc_pieces_test(tc_pieces_t *ps, int q);

/** Drive every piece, in order: TC_OK once all are over (see fail),
 *  TC_INPROGRESS, or an MPI failure.  Never blocks. */
tc_status_t tc_pieces_progress(tc_pieces_t *ps);

/** Cancel what is still in flight (an operation that failed early), free. */
void tc_pieces_fini(tc_pieces_t *ps);

#endif
