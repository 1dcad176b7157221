/* coll/pieces -- see pieces.h. */
#include "pieces.h"

#include <stdlib.h>

enum {
    PC_SEND = 0, /* sent (posted) */
    PC_RECV,     /* received in place, posted ahead */
    PC_PROBE,    /* the last piece, not matched yet (or draining) */
    PC_MRECV,    /* matched, being received (in place, or the scratch) */
    PC_OVER      /* over (ok says how) */
};

tc_status_t tc_pieces_init(tc_pieces_t *ps, MPI_Comm comm, size_t cap)
{
    *ps = (tc_pieces_t){ .comm = comm, .fail = TC_OK };
    ps->req = malloc(cap * sizeof(*ps->req));
    ps->p = calloc(cap, sizeof(*ps->p));
    if (!ps->req || !ps->p) return TC_ERR_NOMEM;
    for (size_t q = 0; q < cap; q++) ps->req[q] = MPI_REQUEST_NULL;
    ps->cap = (int)cap;
    return TC_OK;
}

static tc_status_t post1(tc_pieces_t *ps, char *buf, size_t len, int peer, int tag, int state,
                         int last)
{
    const int q = ps->n;
    if (q >= ps->cap) return TC_ERR_INVAL; /* (the caller's count: a bug) */
    ps->n++;
    ps->p[q] = (tc_piece_t){ buf, len, peer, tag, (unsigned char)state, (unsigned char)last, 0, 0 };
    if (state == PC_SEND)
        return tc_status_mpi(PMPI_Isend(buf, (int)len, MPI_BYTE, peer, tag, ps->comm, &ps->req[q]));
    if (state == PC_RECV)
        return tc_status_mpi(PMPI_Irecv(buf, (int)len, MPI_BYTE, peer, tag, ps->comm, &ps->req[q]));
    return TC_OK; /* (probed when driven) */
}

tc_status_t tc_pieces_post(tc_pieces_t *ps, char *buf, size_t bytes, int peer, int tag, int send,
                           int *first)
{
    if (first) *first = ps->n;
    for (size_t off = 0;; off += TC_NET_SEG) {
        const size_t len = bytes - off < TC_NET_SEG ? bytes - off : TC_NET_SEG;
        const int last = len < TC_NET_SEG;
        TC_RETURN_IF_FAILED(post1(ps, buf + off, len, peer, tag,
                                  send   ? PC_SEND
                                  : last ? PC_PROBE
                                         : PC_RECV,
                                  last));
        if (last) return TC_OK;
    }
}

tc_status_t tc_pieces_send1(tc_pieces_t *ps, char *buf, size_t len, int peer, int tag)
{
    return post1(ps, buf, len < TC_NET_SEG ? len : TC_NET_SEG, peer, tag, PC_SEND, 1);
}

/* The message of piece @q failed: the pieces after it that are posted
 * ahead are cancelled (the sender's stream ended early), its last one is
 * not probed for. */
static void cut_after(tc_pieces_t *ps, int q)
{
    for (int x = q; !ps->p[x].last;) {
        tc_piece_t *p = &ps->p[++x];
        if (p->state == PC_RECV)
            PMPI_Cancel(&ps->req[x]); /* (completes, cancelled, when tested) */
        else if (p->state == PC_PROBE)
            p->state = PC_OVER;
    }
}

/* Piece @q, the last of its message (or one drained after it): probe the
 * sender's next piece, receive it in place if as long as expected, else
 * into the scratch (a full one: more follow, drained the same way). */
static tc_status_t probe(tc_pieces_t *ps, int q)
{
    tc_piece_t *p = &ps->p[q];
    MPI_Message msg;
    MPI_Status st;
    int flag = 0, got = 0;
    TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Improbe(p->peer, p->tag, ps->comm, &flag, &msg, &st)));
    if (!flag) return TC_INPROGRESS;
    TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Get_count(&st, MPI_BYTE, &got)));
    if (got < 0 || (size_t)got > TC_NET_SEG) return TC_ERR_PROTO; /* (not a piece of ours) */
    char *to = p->buf;
    if (p->more || (size_t)got != p->len) { /* (disagrees, or drained) */
        ps->fail = TC_ERR_TRUNCATE;
        if (!ps->scratch && !(ps->scratch = malloc(TC_NET_SEG))) return TC_ERR_NOMEM;
        to = ps->scratch;
        p->more = (size_t)got == TC_NET_SEG; /* (the stream goes on) */
    } else {
        p->ok = 1;
    }
    p->state = PC_MRECV;
    return tc_status_mpi(PMPI_Imrecv(to, got, MPI_BYTE, &msg, &ps->req[q]));
}

tc_status_t tc_pieces_test(tc_pieces_t *ps, int q)
{
    tc_piece_t *p = &ps->p[q];
    for (;;) {
        MPI_Status st;
        int flag = 0, got = 0, cancelled = 0;
        switch (p->state) {
        case PC_OVER: return TC_OK;
        case PC_PROBE: TC_RETURN_IF_FAILED(probe(ps, q)); continue;
        default: break;
        }
        TC_RETURN_IF_FAILED(tc_status_mpi(PMPI_Test(&ps->req[q], &flag, &st)));
        if (!flag) return TC_INPROGRESS;
        if (p->state == PC_SEND) {
            p->ok = 1;
        } else if (p->state == PC_MRECV) {
            if (p->more) { /* drain the sender's next piece too */
                p->state = PC_PROBE;
                continue;
            }
        } else { /* PC_RECV: posted for a full piece */
            PMPI_Test_cancelled(&st, &cancelled);
            if (!cancelled && PMPI_Get_count(&st, MPI_BYTE, &got) == MPI_SUCCESS &&
                (size_t)got == p->len) {
                p->ok = 1;
            } else if (!cancelled) { /* a short one: the sender's stream ended */
                ps->fail = TC_ERR_TRUNCATE;
                cut_after(ps, q);
            }
        }
        p->state = PC_OVER;
        return TC_OK;
    }
}

tc_status_t tc_pieces_progress(tc_pieces_t *ps)
{
    for (; ps->done < ps->n; ps->done++) { /* (each test drives progress) */
        const tc_status_t rc = tc_pieces_test(ps, ps->done);
        if (rc == TC_INPROGRESS) break;
        if (rc != TC_OK) return rc;
    }
    /* The later messages' last pieces probed now, not once every piece
     * before them is over: where a piece goes by rendezvous, its transfer
     * starts once matched.  (A probe sees a stream's last piece only once
     * the receives posted ahead for it have matched theirs: MPI's
     * non-overtaking order, one message per peer and tag in a call.) */
    for (int q = ps->done + 1; q < ps->n; q++) {
        if (ps->p[q].state != PC_PROBE) continue;
        const tc_status_t rc = tc_pieces_test(ps, q);
        if (rc != TC_OK && rc != TC_INPROGRESS) return rc;
    }
    return ps->done < ps->n ? TC_INPROGRESS : TC_OK;
}

void tc_pieces_fini(tc_pieces_t *ps)
{
    if (ps->req) tc_req_abandon(ps->req, ps->n);
    free(ps->req);
    free(ps->p);
    free(ps->scratch);
    *ps = (tc_pieces_t){ .comm = MPI_COMM_NULL };
}
