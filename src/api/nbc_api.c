/*
 * api/nbc_api -- the nonblocking collectives and the completion calls of
 * the public API (topocoll.h): argument screening as in the blocking
 * calls (the same answer on every rank of a correct program, so either
 * every rank queues the operation or every rank passes it to PMPI_I*),
 * buffers packed when not contiguous, then nbc/ queues the operation.
 *
 * Owns nothing beyond the calls.  May call: progress/, nbc/, coll/, base/,
 * PMPI.
 */
#include "topocoll.h"

#include "../base/log.h"
#include "../coll/fold.h"
#include "../nbc/nbc.h"
#include "../progress/progress.h"
#include "api_int.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The engine's error hook (tc_nb_on_error): set once, before the first
 * nonblocking operation starts. */
static pthread_once_t g_hook_once = PTHREAD_ONCE_INIT;
static void hook_init(void) { tc_nb_on_error(tc_api_error_rank); }

tc_nb_t *tc_api_nb_new(const tc_api_call_t *plan, int kind, const char *call)
{
    pthread_once(&g_hook_once, hook_init);
    tc_report_ran(tc_coll_ops(kind)->stat);
    return tc_nb_new(plan->ctx, kind, call);
}

/* A local resource failure after the decision (api_int.h): the call fails
 * on this rank, said in one line, through @comm's handler. */
static int nb_nomem(tc_ctx_t *c, MPI_Comm comm, const char *call)
{
    return tc_api_finish(c, comm, TC_ERR_NOMEM, call);
}

int tc_api_nb_keep_type(tc_nb_t *op, void *ubuf, int ucount, MPI_Datatype dt)
{
    if (PMPI_Type_dup(dt, &op->utype) != MPI_SUCCESS) return -1;
    op->ubuf = ubuf;
    op->ucount = ucount;
    return 0;
}

int tc_api_nb_keep_pack(tc_nb_t *op, const void *src, int count, MPI_Datatype dt, char *dst,
                        size_t bytes)
{
    op->repack = 1;
    if (!dst || !tc_nb_persist_pending()) return 0;
    if (PMPI_Type_dup(dt, &op->pk_type) != MPI_SUCCESS) return -1;
    op->pk_in = 1;
    op->pk_src = src;
    op->pk_count = count;
    op->pk_dst = dst;
    op->pk_bytes = (int)bytes;
    return 0;
}

void tc_api_nb_discard(tc_nb_t *op)
{
    tc_nb_free_copies(op);
    free(op);
}

/* Start a reduction-type operation (@kind) of @count elements screened in
 * @plan. */
static int nb_reduction(const tc_api_call_t *plan, int kind, const char *call, void *out, int count,
                        int root, int split, MPI_Comm comm, MPI_Request *request)
{
    tc_nb_t *op = tc_api_nb_new(plan, kind, call);
    if (!op) return nb_nomem(plan->ctx, comm, call);
    op->a.in = plan->in;
    op->a.out = out;
    op->a.n = (size_t)count;
    op->t = plan->t;
    op->a.root = root;
    /* (the class's decided choice, now: the call's place in program order) */
    op->a.alt = kind == TC_COLL_REDUCE && tc_xtune_alt(plan->ctx, TC_CI_REDUCE, plan->bytes);
    if (split) op->a.split = tc_tree_split(plan->ctx, tc_progress_comm_cores());
    return tc_nb_start(op, request);
}

int topocoll_ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    tc_api_call_t p;
    int rc = tc_api_screen_bcast("MPI_Ibcast", count, datatype, root, comm, &p);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    rc = tc_api_choose(rc, &p, TC_CI_BCAST, NULL);
    if (rc != TC_API_RUN) { /* (nothing to move: the native call's trivial request) */
        tc_api_native("MPI_Ibcast", &p, TC_STAT_BCAST);
        return TC_API_INATIVE(PMPI_Ibcast(buffer, count, datatype, root, comm, request));
    }
    tc_ctx_t *c = p.ctx;
    /* with communication cores: the split tree (progress-threads paper,
     * section 6), which sends the bytes as one message */
    int tree = c->cfg->nbc_split_tree && p.bytes <= (size_t)INT_MAX;
    tc_nb_t *op = tc_api_nb_new(&p, tree ? TC_COLL_TREE_BCAST : TC_COLL_BCAST, "MPI_Ibcast");
    if (!op) return nb_nomem(c, comm, "MPI_Ibcast");
    op->a.n = p.bytes;
    op->a.root = root;
    op->a.alt = tc_xtune_alt(c, TC_CI_BCAST, p.bytes); /* (as Ireduce's) */
    if (tree) op->a.split = tc_tree_split(c, tc_progress_comm_cores());
    if (tc_api_bcast_buffer(&p, buffer, count, datatype, root, comm, &op->a.out, &op->tmp[0]) !=
            TC_OK ||
        (op->tmp[0] && c->map.rank != root &&
         tc_api_nb_keep_type(op, buffer, count, datatype) != 0) ||
        tc_api_nb_keep_pack(op, buffer, count, datatype, c->map.rank == root ? op->tmp[0] : NULL,
                            p.bytes) != 0) {
        tc_api_nb_discard(op); /* (the receivers unpack the packed copy at completion) */
        return nb_nomem(c, comm, "MPI_Ibcast");
    }
    return tc_nb_start(op, request);
}

int topocoll_ibarrier(MPI_Comm comm, MPI_Request *request)
{
    int size, inter = 0;
    if (!request || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        inter || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return TC_API_INATIVE(PMPI_Ibarrier(comm, request));
    if (size == 1) return TC_API_INATIVE(PMPI_Ibarrier(comm, request));
    tc_api_call_t p = { .ctx = tc_ctx_get(comm, 0, 1) };
    if (!p.ctx || !p.ctx->enabled) return TC_API_INATIVE(PMPI_Ibarrier(comm, request));
    if (tc_api_choose(TC_API_RUN, &p, TC_CI_BARRIER, NULL) == TC_API_NATIVE) {
        tc_api_native("MPI_Ibarrier", &p, TC_STAT_BARRIER);
        return TC_API_INATIVE(PMPI_Ibarrier(comm, request));
    }
    tc_nb_t *op = tc_api_nb_new(&p, TC_COLL_BARRIER, "MPI_Ibarrier");
    if (!op) return nb_nomem(p.ctx, comm, "MPI_Ibarrier");
    return tc_nb_start(op, request);
}

int topocoll_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op_, int root, MPI_Comm comm, MPI_Request *request)
{
    tc_api_call_t p;
    int rc =
        tc_api_screen_reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op_, root, comm, &p);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    rc = tc_api_choose(rc, &p, TC_CI_REDUCE, NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native("MPI_Ireduce", &p, TC_STAT_REDUCE);
        return TC_API_INATIVE(
            PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op_, root, comm, request));
    }
    if (rc != TC_API_RUN) return rc;
    int tree = p.ctx->cfg->nbc_split_tree && p.t.commutative;
    return nb_reduction(&p, tree ? TC_COLL_TREE_REDUCE : TC_COLL_REDUCE, "MPI_Ireduce", recvbuf,
                        count, root, tree, comm, request);
}

/* The slice communicators an Iallreduce by single copy across nodes uses
 * are made with the context (coll/ctx): a start is local, it makes none. */
static int slices_ready(tc_api_call_t *p)
{
    tc_ctx_t *c = p->ctx;
    if (tc_fold_uses_cico(c, p->bytes) || c->map.nnodes == 1 || c->slice_ready) return 1;
    p->why = "slice communicators";
    p->fallback = 1;
    return 0;
}

int topocoll_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op_, MPI_Comm comm, MPI_Request *request)
{
    tc_api_call_t p;
    int rc =
        tc_api_screen_allreduce("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op_, comm, &p);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    rc = tc_api_choose(rc, &p, TC_CI_ALLREDUCE, NULL);
    /* with communication cores: the split tree (its Bcast phase sends the
     * bytes as one message) */
    int tree = rc == TC_API_RUN && p.ctx->cfg->nbc_split_tree && p.t.commutative &&
               p.bytes <= (size_t)INT_MAX;
    if (rc == TC_API_RUN && !tree && (!tc_api_single_copy_ok(&p) || !slices_ready(&p)))
        rc = TC_API_NATIVE;
    if (rc == TC_API_NATIVE) {
        tc_api_native("MPI_Iallreduce", &p, TC_STAT_ALLREDUCE);
        return TC_API_INATIVE(
            PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op_, comm, request));
    }
    if (rc != TC_API_RUN) return rc;
    return nb_reduction(&p, tree ? TC_COLL_TREE_ALLREDUCE : TC_COLL_ALLREDUCE, "MPI_Iallreduce",
                        recvbuf, count, 0, tree, comm, request);
}

/* Allgather's input packing (tc_api_allgather_buffers'): our block out
 * of the receive buffer in place, or the send buffer. */
static int allgather_pack(tc_nb_t *op, const tc_api_call_t *p, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype)
{
    const int me = p->ctx->map.rank;
    if (sendbuf != MPI_IN_PLACE)
        return tc_api_nb_keep_pack(op, sendbuf, sendcount, sendtype, op->tmp[1], p->bytes);
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(recvtype, &lb, &ext);
    return tc_api_nb_keep_pack(op, (char *)recvbuf + (MPI_Aint)me * recvcount * ext, recvcount,
                               recvtype, op->tmp[0] ? op->tmp[0] + (size_t)me * p->bytes : NULL,
                               p->bytes);
}

int topocoll_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    tc_api_call_t p;
    int rc = tc_api_screen_allgather("MPI_Iallgather", sendbuf, sendcount, sendtype, recvcount,
                                     recvtype, comm, &p);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    rc = tc_api_choose(rc, &p, TC_CI_ALLGATHER, NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native("MPI_Iallgather", &p, TC_STAT_ALLGATHER);
        return TC_API_INATIVE(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                              recvtype, comm, request));
    }
    if (rc != TC_API_RUN) return rc;
    tc_nb_t *op = tc_api_nb_new(&p, TC_COLL_ALLGATHER, "MPI_Iallgather");
    if (!op) return nb_nomem(p.ctx, comm, "MPI_Iallgather");
    op->a.n = p.bytes;
    char *out;
    if (tc_api_allgather_buffers(&p, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, &op->a.in, &out, op->tmp) != TC_OK ||
        (op->tmp[0] &&
         tc_api_nb_keep_type(op, recvbuf, recvcount * p.ctx->map.size, recvtype) != 0) ||
        allgather_pack(op, &p, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype) != 0) {
        tc_api_nb_discard(op);
        return nb_nomem(p.ctx, comm, "MPI_Iallgather");
    }
    op->a.out = out;
    return tc_nb_start(op, request);
}

static int iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_,
                 MPI_Comm comm, MPI_Request *request, int exclusive)
{
    const char *call = exclusive ? "MPI_Iexscan" : "MPI_Iscan";
    const int stat = exclusive ? TC_STAT_EXSCAN : TC_STAT_SCAN;
    tc_api_call_t p;
    int rc = tc_api_screen_scan(call, sendbuf, recvbuf, count, datatype, op_, comm, &p);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    rc = tc_api_choose(rc, &p, exclusive ? TC_CI_EXSCAN : TC_CI_SCAN, NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native(call, &p, stat);
        return TC_API_INATIVE(
            exclusive ? PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op_, comm, request)
                      : PMPI_Iscan(sendbuf, recvbuf, count, datatype, op_, comm, request));
    }
    if (rc != TC_API_RUN) return rc;
    return nb_reduction(&p, tc_api_scan_kind(&p, exclusive), call, recvbuf, count, 0, 0, comm,
                        request);
}

int topocoll_iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_,
                   MPI_Comm comm, MPI_Request *request)
{
    return iscan(sendbuf, recvbuf, count, datatype, op_, comm, request, 0);
}

int topocoll_iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op_, MPI_Comm comm, MPI_Request *request)
{
    return iscan(sendbuf, recvbuf, count, datatype, op_, comm, request, 1);
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

int topocoll_progress_thread_level(int required) { return tc_progress_thread_level(required); }

int topocoll_progress_init(int provided) { return tc_progress_start(provided); }

void topocoll_progress_fini(void)
{
    /* operations the application released with MPI_Request_free still run */
    tc_backoff_t b;
    tc_backoff_init(&b, 0);
    while (tc_nb_progress() > 0) tc_backoff(&b);
    tc_progress_stop();
}

int topocoll_progress_core(void) { return tc_progress_core(); }
