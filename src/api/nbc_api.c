/*
 * api/nbc_api -- the nonblocking collectives and the completion calls of
 * the public API (topocoll.h): argument screening as in the blocking
 * calls (the same answer on every rank of a correct program, so either
 * every rank queues the operation or every rank passes it to PMPI_I*),
 * buffers packed when not contiguous, then nbc/ queues the operation.
 *
 * Owns nothing beyond the calls.  May call: nbc/, coll/, base/, PMPI.
 */
#include "topocoll.h"

#include "../base/log.h"
#include "../coll/fold.h"
#include "../nbc/nbc.h"
#include "api_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Keep a reference to the user's datatype until the operation completes
 * (the application may free its handle once the call returns). */
static int keep_type(tc_nb_t *op, void *ubuf, int ucount, MPI_Datatype dt)
{
    if (PMPI_Type_dup(dt, &op->utype) != MPI_SUCCESS) return -1;
    op->ubuf = ubuf;
    op->ucount = ucount;
    return 0;
}

/* Queue a reduction-type operation (@kind) of @count elements of @t. */
static int nb_reduction(tc_ctx_t *c, int kind, const void *in, void *out, int count,
                        const tc_rtype_t *t, int root, int split, MPI_Request *request)
{
    tc_nb_t *op = tc_nb_new(c, kind);
    if (!op) return -1;
    op->in = in;
    op->out = out;
    op->n = (size_t)count;
    op->t = *t;
    op->root = root;
    if (split) op->split = tc_tree_split(c, c->cfg->comm_cores);
    return tc_nb_start(op, request);
}

static void nb_discard(tc_nb_t *op)
{
    free(op->tmp[0]);
    free(op->tmp[1]);
    if (op->ubuf) PMPI_Type_free(&op->utype);
    free(op);
}

int topocoll_ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    int size, tsize, inter = 0, rank;
    MPI_Aint lb;
    if (!request || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        inter || datatype == MPI_DATATYPE_NULL || count < 0 ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS || root < 0 || root >= size ||
        PMPI_Type_size(datatype, &tsize) != MPI_SUCCESS)
        goto native;
    size_t bytes = (size_t)tsize * (size_t)count;
    if (size == 1 || bytes == 0)
        goto native; /* nothing to move: the native call's trivial request */
    tc_ctx_t *c = tc_ctx_get(comm, bytes);
    if (!c) goto native;
    if (!c->enabled) {
        c->bcast_fallbacks += !c->cold;
        goto native;
    }
    /* with communication cores: the split tree (progress-threads paper, section 6) */
    int tree = c->cfg->nbc_split_tree &&
               bytes <= (size_t)INT_MAX; /* (the tree sends the bytes as one message) */
    tc_nb_t *op = tc_nb_new(c, tree ? TC_NB_TREE_BCAST : TC_NB_BCAST);
    if (!op) goto native;
    op->n = bytes;
    op->root = root;
    if (tree) op->split = tc_tree_split(c, c->cfg->comm_cores);
    if (tc_api_contiguous(count, datatype, bytes, &lb)) {
        op->out = (char *)buffer + lb;
    } else {
        /* packed into a copy; the receivers unpack it at completion */
        int pos = 0;
        PMPI_Comm_rank(comm, &rank);
        if (!(op->tmp[0] = malloc(bytes)) ||
            (rank != root && keep_type(op, buffer, count, datatype) != 0)) {
            nb_discard(op);
            goto native;
        }
        if (rank == root) PMPI_Pack(buffer, count, datatype, op->tmp[0], (int)bytes, &pos, comm);
        op->out = op->tmp[0];
    }
    return tc_nb_start(op, request);
native:
    tc_api_why_native("MPI_Ibcast", "argument the native MPI will check, or topocoll disabled");
    return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
}

int topocoll_ibarrier(MPI_Comm comm, MPI_Request *request)
{
    int size, inter = 0;
    if (!request || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        inter || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return PMPI_Ibarrier(comm, request);
    if (size == 1) return PMPI_Ibarrier(comm, request);
    tc_ctx_t *c = tc_ctx_get(comm, 0);
    tc_nb_t *op = c && c->enabled ? tc_nb_new(c, TC_NB_BARRIER) : NULL;
    if (!op) return PMPI_Ibarrier(comm, request);
    return tc_nb_start(op, request);
}

int topocoll_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op_, int root, MPI_Comm comm, MPI_Request *request)
{
    tc_rtype_t t;
    int fb = 0, size = 0, rank = 0, err, inter = 0;
    const char *why = "";
    tc_ctx_t *c = NULL;
    if ((err = tc_api_check_reduction("MPI_Ireduce", count, datatype, op_, comm)) ==
        TC_API_TO_NATIVE)
        return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op_, root, comm, request);
    if (err != MPI_SUCCESS) return err;
    if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&
        PMPI_Comm_size(comm, &size) == MPI_SUCCESS && (root < 0 || root >= size))
        return tc_api_arg_error(comm, MPI_ERR_ROOT, "MPI_Ireduce", "invalid root", root);
    if (!request) goto native;
    c = tc_api_reduction_ctx(count, datatype, op_, comm, &t, &fb, &why);
    if (!c || fb) goto native;
    PMPI_Comm_rank(comm, &rank);
    if (sendbuf == MPI_IN_PLACE && rank != root) {
        why = "MPI_IN_PLACE at a non-root";
        goto native;
    }
    const char *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (rank == root && in == recvbuf && sendbuf != MPI_IN_PLACE) {
        why = "aliased buffers";
        goto native;
    }
    if (!tc_fold_uses_cico(c, tc_span(&t, (size_t)count)) && !c->all_sc) {
        why = "single copy unavailable";
        fb = 1;
        goto native;
    }
    int tree = c->cfg->nbc_split_tree && t.commutative;
    int rc = nb_reduction(c, tree ? TC_NB_TREE_REDUCE : TC_NB_REDUCE, in, recvbuf, count, &t, root,
                          tree, request);
    if (rc >= 0) return rc;
native:
    if (c && fb) c->reduce_fallbacks++;
    tc_api_why_native("MPI_Ireduce", why);
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op_, root, comm, request);
}

int topocoll_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op_, MPI_Comm comm, MPI_Request *request)
{
    tc_rtype_t t;
    int fb = 0, err;
    const char *why = "";
    tc_ctx_t *c = NULL;
    if ((err = tc_api_check_reduction("MPI_Iallreduce", count, datatype, op_, comm)) ==
        TC_API_TO_NATIVE)
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op_, comm, request);
    if (err != MPI_SUCCESS) return err;
    if (!request) goto native;
    c = tc_api_reduction_ctx(count, datatype, op_, comm, &t, &fb, &why);
    if (!c || fb) goto native;
    const char *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (in == recvbuf && sendbuf != MPI_IN_PLACE) {
        why = "aliased buffers";
        fb = 1;
        goto native;
    }
    if (c->cfg->nbc_split_tree && t.commutative && tc_span(&t, (size_t)count) <= (size_t)INT_MAX) {
        /* with communication cores: the split tree (its Bcast phase sends the bytes as one message)
         */
        int rc = nb_reduction(c, TC_NB_TREE_ALLREDUCE, in, recvbuf, count, &t, 0, 1, request);
        if (rc >= 0) return rc;
        goto native;
    }
    int cico = tc_fold_uses_cico(c, tc_span(&t, (size_t)count));
    if (!cico && !c->all_sc) {
        why = "single copy unavailable";
        fb = 1;
        goto native;
    }
    if (!cico && c->map.nnodes > 1 && !c->slice_ready) {
        /* The slice communicators are made once, by a blocking split: with
         * this communicator's queue empty, on every rank at this call. */
        tc_nb_drain(c);
        if (tc_ctx_slices(c) != MPI_SUCCESS) {
            why = "slice communicators";
            fb = 1;
            goto native;
        }
    }
    int rc = nb_reduction(c, TC_NB_ALLREDUCE, in, recvbuf, count, &t, 0, 0, request);
    if (rc >= 0) return rc;
native:
    if (c && fb) c->allreduce_fallbacks++;
    tc_api_why_native("MPI_Iallreduce", why);
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op_, comm, request);
}

int topocoll_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int size, rank, fb, rc;
    const char *why;
    tc_ctx_t *c;
    size_t block = 0;
    int in_place = sendbuf == MPI_IN_PLACE;
    if ((rc = tc_api_allgather_screen("MPI_Iallgather", sendbuf, sendcount, sendtype, recvcount,
                                      recvtype, comm, &block, &c, &fb, &why)) != MPI_SUCCESS)
        return rc;
    if (!request || !c || fb) goto native;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);

    tc_nb_t *op = tc_nb_new(c, TC_NB_ALLGATHER);
    if (!op) {
        fb = 1;
        goto native;
    }
    op->n = block;
    MPI_Aint rlb, slb, rext, rlb2;
    PMPI_Type_get_extent(recvtype, &rlb2, &rext);
    int rcontig = tc_api_contiguous(recvcount, recvtype, block, &rlb) &&
                  (size_t)rext * (size_t)recvcount == block;
    int scontig = in_place || tc_api_contiguous(sendcount, sendtype, block, &slb);
    if (rcontig) {
        op->out = (char *)recvbuf + rlb;
    } else {
        if (!(op->tmp[0] = malloc(block * (size_t)size)) ||
            keep_type(op, recvbuf, recvcount * size, recvtype) != 0) {
            nb_discard(op);
            fb = 1;
            goto native;
        }
        op->out = op->tmp[0];
    }
    char *out = op->out;
    if (in_place) {
        if (!rcontig) {
            int pos = 0;
            PMPI_Pack((char *)recvbuf + (MPI_Aint)rank * recvcount * rext, recvcount, recvtype,
                      out + (size_t)rank * block, (int)block, &pos, comm);
        }
        op->in = out + (size_t)rank * block;
    } else if (scontig) {
        op->in = (const char *)sendbuf + slb;
    } else {
        int pos = 0;
        if (!(op->tmp[1] = malloc(block))) {
            nb_discard(op);
            fb = 1;
            goto native;
        }
        PMPI_Pack(sendbuf, sendcount, sendtype, op->tmp[1], (int)block, &pos, comm);
        op->in = op->tmp[1];
    }
    return tc_nb_start(op, request);
native:
    if (c && fb) c->allgather_fallbacks++;
    tc_api_why_native("MPI_Iallgather", why);
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request);
}

int topocoll_iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_,
                   MPI_Comm comm, MPI_Request *request)
{
    tc_rtype_t t;
    int err, inter = 0, size;
    const char *why = "";
    if ((err = tc_api_check_reduction("MPI_Iscan", count, datatype, op_, comm)) == TC_API_TO_NATIVE)
        return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op_, comm, request);
    if (err != MPI_SUCCESS) return err;
    if (!request || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        why = "intercommunicator";
        goto native;
    }
    if (!tc_op_classify(datatype, op_, &t)) {
        why = "datatype/op pair not handled";
        goto native;
    }
    const char *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (in == recvbuf && sendbuf != MPI_IN_PLACE) {
        why = "aliased buffers";
        goto native;
    }
    PMPI_Comm_size(comm, &size);
    if (count == 0 || size == 1) {
        why = "nothing to combine";
        goto native;
    }
    tc_ctx_t *c = tc_ctx_get(comm, tc_span(&t, (size_t)count));
    if (!c || !c->enabled) {
        why = "topocoll disabled on this communicator, or not built yet";
        goto native;
    }
    int rc = nb_reduction(c, TC_NB_SCAN, in, recvbuf, count, &t, 0, 0, request);
    if (rc >= 0) return rc;
native:
    tc_api_why_native("MPI_Iscan", why);
    return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op_, comm, request);
}

/* ---- Completion and progress ------------------------------------------------- */

int topocoll_progress(void) { return tc_nb_progress(); }
int topocoll_wait(MPI_Request *r, MPI_Status *st) { return tc_nb_wait(r, st); }
int topocoll_test(MPI_Request *r, int *flag, MPI_Status *st) { return tc_nb_test(r, flag, st); }
int topocoll_waitall(int n, MPI_Request r[], MPI_Status st[]) { return tc_nb_waitall(n, r, st); }
int topocoll_testall(int n, MPI_Request r[], int *flag, MPI_Status st[])
{
    return tc_nb_testall(n, r, flag, st);
}
int topocoll_waitany(int n, MPI_Request r[], int *i, MPI_Status *st)
{
    return tc_nb_waitany(n, r, i, st);
}
int topocoll_testany(int n, MPI_Request r[], int *i, int *flag, MPI_Status *st)
{
    return tc_nb_testany(n, r, i, flag, st);
}
int topocoll_waitsome(int n, MPI_Request r[], int *oc, int idx[], MPI_Status st[])
{
    return tc_nb_waitsome(n, r, oc, idx, st);
}
int topocoll_testsome(int n, MPI_Request r[], int *oc, int idx[], MPI_Status st[])
{
    return tc_nb_testsome(n, r, oc, idx, st);
}
int topocoll_request_get_status(MPI_Request r, int *flag, MPI_Status *st)
{
    return tc_nb_request_get_status(r, flag, st);
}

int topocoll_progress_thread_level(int required) { return tc_nb_thread_level(required); }

int topocoll_progress_init(int provided) { return tc_nb_threads_start(provided); }

void topocoll_progress_fini(void)
{
    /* operations the application released with MPI_Request_free still run */
    tc_backoff_t b;
    tc_backoff_init(&b, 0);
    while (tc_nb_progress() > 0) tc_backoff(&b);
    tc_nb_threads_stop();
}

int topocoll_progress_core(void) { return tc_nb_thread_core(); }
