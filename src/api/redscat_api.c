/*
 * api/redscat_api -- MPI_Reduce_scatter_block, MPI_Reduce_scatter and their
 * nonblocking forms (topocoll.h) over coll/redscat: the reduction's
 * screening over the whole vector (every rank holds the same counts, so
 * every rank decides alike), then the operations table.
 *
 * Owns nothing beyond the calls.  May call: nbc/, coll/, base/, PMPI.
 */
#include "topocoll.h"

#include "../nbc/nbc.h"
#include "api_int.h"

#include <string.h>

/* One call's arguments: @counts NULL for the block form (@count a block). */
typedef struct rs_call {
    const char *name;
    const void *sendbuf;
    void *recvbuf;
    int count;
    const int *counts;
    int irregular; /* MPI_Reduce_scatter (counts), else the block form (count) */
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
} rs_call_t;

static int native(const rs_call_t *x, MPI_Request *request)
{
    if (request && tc_nb_persist_pending()) return TC_NB_PERSIST_NATIVE;
    if (x->irregular)
        return request
                   ? PMPI_Ireduce_scatter(x->sendbuf, x->recvbuf, x->counts, x->dt, x->op, x->comm,
                                          request)
                   : PMPI_Reduce_scatter(x->sendbuf, x->recvbuf, x->counts, x->dt, x->op, x->comm);
    return request
               ? PMPI_Ireduce_scatter_block(x->sendbuf, x->recvbuf, x->count, x->dt, x->op, x->comm,
                                            request)
               : PMPI_Reduce_scatter_block(x->sendbuf, x->recvbuf, x->count, x->dt, x->op, x->comm);
}

/* The screening (tc_api_choose's input): a NULL count array goes native. */
static int screen(const rs_call_t *x, tc_api_call_t *p)
{
    if (x->irregular && !x->counts) {
        memset(p, 0, sizeof(*p));
        p->why = "argument the native MPI will check";
        return TC_API_NATIVE;
    }
    return tc_api_screen_redscat(x->name, x->sendbuf, x->recvbuf, x->irregular ? x->counts : NULL,
                                 x->count, x->dt, x->op, x->comm, p);
}

static int ci_of(const rs_call_t *x)
{
    return x->irregular ? TC_CI_REDUCE_SCATTER : TC_CI_REDUCE_SCATTER_BLOCK;
}
static int kind_of(const rs_call_t *x)
{
    return x->irregular ? TC_COLL_REDUCE_SCATTER : TC_COLL_REDUCE_SCATTER_BLOCK;
}

static int run_blocking(const rs_call_t *x)
{
    tc_api_call_t p;
    int rc = tc_api_choose(screen(x, &p), &p, ci_of(x), NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native(x->name, &p, ci_of(x));
        return native(x, NULL);
    }
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *c = p.ctx;
    tc_nb_drain(c); /* this communicator's nonblocking operations come first */
    tc_coll_args_t a = { .in = p.in,
                         .out = x->recvbuf,
                         .n = (size_t)x->count,
                         .t = &p.t,
                         .blocking = 1,
                         .counts = x->irregular ? x->counts : NULL };
    tc_status_t st = tc_api_run(c, kind_of(x), &a);
    return tc_api_finish(c, x->comm, st, x->name);
}

static int run_nonblocking(const rs_call_t *x, MPI_Request *request)
{
    tc_api_call_t p;
    int rc = screen(x, &p);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    rc = tc_api_choose(rc, &p, ci_of(x), NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native(x->name, &p, ci_of(x));
        return native(x, request);
    }
    if (rc != TC_API_RUN) return rc;
    tc_nb_t *op = tc_api_nb_new(&p, kind_of(x), x->name);
    if (!op) return tc_api_finish(p.ctx, x->comm, TC_ERR_NOMEM, x->name);
    op->a.in = p.in;
    op->a.out = x->recvbuf;
    op->a.n = (size_t)x->count;
    op->t = p.t;
    op->a.counts = x->irregular ? x->counts : NULL; /* (MPI: unchanged until completion) */
    return tc_nb_start(op, request);
}

int topocoll_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    rs_call_t x = {
        "MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount, NULL, 0, datatype, op, comm
    };
    return run_blocking(&x);
}

int topocoll_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    rs_call_t x = { "MPI_Reduce_scatter", sendbuf, recvbuf, 0, recvcounts, 1, datatype, op, comm };
    return run_blocking(&x);
}

int topocoll_ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                   MPI_Request *request)
{
    rs_call_t x = {
        "MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, NULL, 0, datatype, op, comm
    };
    return run_nonblocking(&x, request);
}

int topocoll_ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    rs_call_t x = { "MPI_Ireduce_scatter", sendbuf, recvbuf, 0, recvcounts, 1, datatype, op, comm };
    return run_nonblocking(&x, request);
}
