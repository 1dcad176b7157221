/* coll/scan -- see scan.h. */
#include "scan.h"

#include <stdlib.h>
#include <string.h>

#include "tags.h"

tc_status_t tc_scan_init(tc_scan_t *op, tc_ctx_t *ctx, const void *in, void *out, size_t count,
                         const tc_rtype_t *t, int exclusive)
{
    memset(op, 0, sizeof(*op));
    op->ctx = ctx;
    op->t = *t;
    op->in = in;
    op->out = out;
    op->count = count;
    op->seq = ++ctx->seq;
    op->exclusive = exclusive;
    op->tag = TC_TAG_SCAN + (int)(op->seq & 0xff);
    PMPI_Comm_rank(ctx->pcomm, &op->rank);
    PMPI_Comm_size(ctx->pcomm, &op->size);
    /* Segments pay only along a chain of 3 or more (a rank forwards one
     * while the next arrives): 2 ranks send the vector whole; longer
     * chains cut it into up to 8 segments of at least TC_SCAN_SEGSIZE. */
    size_t ext = t->extent ? t->extent : 1, per = TC_SCAN_SEGSIZE / ext;
    if (per == 0) per = 1;
    if (op->size <= 2)
        per = count;
    else if (count / 8 > per)
        per = count / 8;
    op->seg = per;
    op->nseg = (count + op->seg - 1) / op->seg;
    for (int w = 0; w < TC_SCAN_WINDOW; w++) op->rreq[w] = op->sreq[w] = MPI_REQUEST_NULL;
    if (!exclusive && in != out) memcpy(out, in, tc_span(t, count));
    if (op->rank > 0 && !(op->rbuf = malloc(TC_SCAN_WINDOW * tc_span(t, op->seg))))
        return TC_ERR_NOMEM;
    if (exclusive && op->rank + 1 < op->size && !(op->acc = malloc(tc_span(t, count))))
        return TC_ERR_NOMEM;
    return TC_OK;
}

static void seg_range(const tc_scan_t *op, size_t k, size_t *first, size_t *n)
{
    *first = k * op->seg;
    *n = op->count - *first < op->seg ? op->count - *first : op->seg;
}

/* Post the receives of the next segments from the left, a window at a
 * time: a slot is free once its segment has been folded (sposted). */
static tc_status_t post_receives(tc_scan_t *op, size_t span)
{
    const size_t W = TC_SCAN_WINDOW;
    size_t first, n;
    while (op->rank > 0 && op->rposted < op->nseg && op->rposted - op->sposted < W) {
        seg_range(op, op->rposted, &first, &n);
        int rc = tc_status_mpi(PMPI_Irecv(op->rbuf + (op->rposted % W) * span, (int)n, op->t.dt,
                                          op->rank - 1, op->tag, op->ctx->pcomm,
                                          &op->rreq[op->rposted % W]));
        if (rc != TC_OK) return rc;
        op->rposted++;
    }
    return TC_OK;
}

/* Segment k (elements [@first, @first + @n)) with the lower ranks'
 * prefix: inclusive, out = prefix op out; exclusive, acc = prefix op in
 * (rank 0: in), then out = prefix.  Returns what goes on to the right,
 * or NULL with *@rc set. */
static char *fold_segment(tc_scan_t *op, size_t k, size_t first, size_t n, size_t span,
                          tc_status_t *rc)
{
    const size_t at = first * op->t.extent, bytes = tc_span(&op->t, n);
    const char *prefix = op->rbuf + (k % TC_SCAN_WINDOW) * span;
    *rc = TC_OK;
    if (!op->exclusive) {
        /* out = prefix(0..r-1) op out: the left operand is the lower ranks' */
        if (op->rank > 0) *rc = tc_op_apply(&op->t, prefix, op->out + at, n);
        return *rc == TC_OK ? op->out + at : NULL;
    }
    char *send = op->acc ? op->acc + at : NULL;
    if (send) memcpy(send, op->in + at, bytes); /* (before out: in may be out) */
    if (op->rank > 0 && send) *rc = tc_op_apply(&op->t, prefix, send, n);
    if (op->rank > 0) memcpy(op->out + at, prefix, bytes);
    return *rc == TC_OK ? (send ? send : op->out + at) : NULL;
}

tc_status_t tc_scan_work(tc_scan_t *op)
{
    const int W = TC_SCAN_WINDOW;
    MPI_Comm pc = op->ctx->pcomm;
    size_t span = tc_span(&op->t, op->seg), first, n;
    int flag, rc;
    if (op->rank == 0) op->rdone = op->nseg; /* the chain starts here: nothing to receive */
    if ((rc = post_receives(op, span)) != TC_OK) return rc;
    for (;;) {
        /* a segment may be folded once it arrived and, on a rank with a
         * right neighbour, once its send slot is free again */
        size_t k = op->sposted;
        if (k >= op->nseg) break;
        if (op->rank > 0 && k >= op->rdone) {
            if (k >= op->rposted) break;
            if ((rc = tc_status_mpi(PMPI_Test(&op->rreq[k % W], &flag, MPI_STATUS_IGNORE))) !=
                TC_OK)
                return rc;
            if (!flag) break;
            op->rdone++;
        }
        if (op->rank + 1 < op->size && k - op->sdone >= (size_t)W) {
            if ((rc = tc_status_mpi(
                     PMPI_Test(&op->sreq[op->sdone % W], &flag, MPI_STATUS_IGNORE))) != TC_OK)
                return rc;
            if (!flag) break;
            op->sdone++;
        }
        seg_range(op, k, &first, &n);
        char *o = fold_segment(op, k, first, n, span, &rc);
        if (!o) return rc;
        if (op->rank + 1 < op->size) {
            rc = tc_status_mpi(
                PMPI_Isend(o, (int)n, op->t.dt, op->rank + 1, op->tag, pc, &op->sreq[k % W]));
            if (rc != TC_OK) return rc;
        }
        op->sposted++;
        /* the receive slot k % W is free again: post the next receive */
        if ((rc = post_receives(op, span)) != TC_OK) return rc;
    }
    if (op->sposted < op->nseg) return TC_INPROGRESS;
    while (op->rank + 1 < op->size && op->sdone < op->sposted) {
        if ((rc = tc_status_mpi(PMPI_Test(&op->sreq[op->sdone % W], &flag, MPI_STATUS_IGNORE))) !=
            TC_OK)
            return rc;
        if (!flag) return TC_INPROGRESS;
        op->sdone++;
    }
    /* every collective of the context ends so: the next one on the node
     * may rely on this process being done with this sequence number */
    if (op->ctx->shm) tc_cctl_finish(op->ctx->shm, op->seq);
    return TC_OK;
}

void tc_scan_fini(tc_scan_t *op)
{
    free(op->rbuf);
    free(op->acc);
    op->rbuf = op->acc = NULL;
}
