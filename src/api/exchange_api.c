/*
 * api/exchange_api -- MPI_Gather, MPI_Scatter, MPI_Alltoall and their
 * nonblocking forms (topocoll.h) over coll/exchange, and on several nodes
 * Gather and Scatter over coll/vroot (Gatherv's and Scatterv's collectors,
 * the root's table of equal blocks made here): one screening and one
 * buffer preparation shared by the blocking and nonblocking calls (only
 * the arguments MPI makes significant on each rank are read), then the
 * operations table.
 *
 * Owns nothing beyond the calls.  May call: nbc/, coll/, base/, PMPI.
 */
#include "topocoll.h"

#include "../base/log.h"
#include "../coll/exchange.h"
#include "../nbc/nbc.h"
#include "api_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One call's arguments, the MPI names. */
typedef struct xc_call {
    const char *name;
    int kind, stat;
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    int root;
    MPI_Comm comm;
} xc_call_t;

/* Which sides are significant on this rank (MPI-4.0 sections 6.5, 6.6,
 * 6.8): Gather's receive side and Scatter's send side at the root only;
 * MPI_IN_PLACE makes the root's other side insignificant. */
static void sides(const xc_call_t *x, int rank, int *send, int *recv)
{
    int root = rank == x->root;
    *send = x->kind == TC_XC_ALLTOALL ? x->sendbuf != MPI_IN_PLACE
            : x->kind == TC_XC_GATHER ? !(root && x->sendbuf == MPI_IN_PLACE)
                                      : root;
    *recv = x->kind == TC_XC_ALLTOALL ? 1
            : x->kind == TC_XC_GATHER ? root
                                      : !(root && x->recvbuf == MPI_IN_PLACE);
}

/* The checks MPI's own would make on this rank's significant arguments:
 * TC_API_RUN, or the error class raised. */
static int check_args(const xc_call_t *x, int size, int rank, size_t *block)
{
    int send, recv, ts = 0, tr = 0;
    if (x->kind != TC_XC_ALLTOALL && (x->root < 0 || x->root >= size))
        return tc_api_arg_error(x->comm, MPI_ERR_ROOT, x->name, "invalid root", x->root);
    sides(x, rank, &send, &recv);
    if ((send && x->sendcount < 0) || (recv && x->recvcount < 0))
        return tc_api_arg_error(x->comm, MPI_ERR_COUNT, x->name, "negative count",
                                send && x->sendcount < 0 ? x->sendcount : x->recvcount);
    if ((send && x->sendtype == MPI_DATATYPE_NULL) || (recv && x->recvtype == MPI_DATATYPE_NULL))
        return tc_api_arg_error(x->comm, MPI_ERR_TYPE, x->name, "datatype is MPI_DATATYPE_NULL", 0);
    if ((send && PMPI_Type_size(x->sendtype, &ts) != MPI_SUCCESS) ||
        (recv && PMPI_Type_size(x->recvtype, &tr) != MPI_SUCCESS))
        return tc_api_arg_error(x->comm, MPI_ERR_TYPE, x->name, "invalid datatype", 0);
    size_t sb = (size_t)ts * (size_t)x->sendcount, rb = (size_t)tr * (size_t)x->recvcount;
    *block = send ? sb : rb;
    /* (send and receive blocks that differ: erroneous, the native's to judge) */
    return send && recv && sb != rb ? TC_API_NATIVE : TC_API_RUN;
}

/* The screening of every exchange call: TC_API_RUN with @plan (its bytes:
 * the block), TC_API_NATIVE, or an error class raised. */
static int screen(const xc_call_t *x, tc_api_call_t *plan)
{
    int size = 0, rank = 0;
    int rc = tc_api_comm_of(x->comm, x->name, plan, &size, &rank);
    if (rc == TC_API_RUN && (rc = check_args(x, size, rank, &plan->bytes)) == TC_API_NATIVE &&
        !plan->ctx && plan->bytes && size > 1 && plan->bytes <= (size_t)INT_MAX / (size_t)size)
        /* (erroneous: counted on a cold context as on the other ranks, where they would) */
        (void)tc_ctx_get(x->comm, plan->bytes, tc_api_nonblocking(x->name));
    if (rc != TC_API_RUN) return rc; /* (TC_API_NATIVE: plan->why says so) */
    /* (the root's buffer, size blocks, is counted in int by MPI_Pack & co.:
     * every rank decides alike on the block and the size) */
    if (plan->bytes == 0 || size == 1 || plan->bytes > (size_t)INT_MAX / (size_t)size) {
        plan->why = "nothing to move, or 2 GiB in all";
        return TC_API_NATIVE;
    }
    if ((rc = tc_api_ctx_of(x->comm, x->name, plan->bytes, plan)) != TC_API_RUN) return rc;
    tc_ctx_t *c = plan->ctx;
    if (c->map.nnodes > 1 && x->kind != TC_XC_ALLTOALL) return TC_API_RUN; /* (the plan's) */
    if (!tc_exchange_fits(c, x->kind, plan->bytes)) {
        plan->why = c->map.nnodes > 1 ? "several nodes: unequal, without single copy, or blocks "
                                        "at most TOPOCOLL_ALLTOALL_FLAT_MAX"
                                      : "single copy unavailable";
        plan->fallback = 1;
        return TC_API_NATIVE;
    }
    return TC_API_RUN;
}

/* A packed copy of the input: @count of @type at @src into @bytes at
 * @dst (a persistent start makes it again: nbc.h tc_nb_t.pk_*). */
typedef struct xc_pack {
    const void *src;
    int count;
    MPI_Datatype type;
    char *dst;
    size_t bytes;
} xc_pack_t;

/* Gather's buffers (@n ranks, we are @me, blocks of @b bytes): see
 * buffers. */
static tc_status_t gather_buffers(const xc_call_t *x, int n, int me, size_t b, const char **in,
                                  char **out, char *tmp[2], xc_pack_t *pk)
{
    char *v = NULL;
    tc_status_t st = TC_OK;
    if (me == x->root) {
        st = tc_api_view(x->recvbuf, x->recvcount * n, x->recvtype, b * (size_t)n, 0, x->comm, out,
                         &tmp[0]);
        if (st == TC_OK && x->sendbuf == MPI_IN_PLACE) { /* our block, in place */
            MPI_Aint lb, ext;
            PMPI_Type_get_extent(x->recvtype, &lb, &ext);
            const char *mine = (const char *)x->recvbuf + (MPI_Aint)me * x->recvcount * ext;
            int pos = 0;
            if (tmp[0]) {
                PMPI_Pack(mine, x->recvcount, x->recvtype, tmp[0] + (size_t)me * b, (int)b, &pos,
                          x->comm);
                *pk = (xc_pack_t){ mine, x->recvcount, x->recvtype, tmp[0] + (size_t)me * b, b };
            }
            *in = *out + (size_t)me * b;
        }
    }
    if (st == TC_OK && !*in) {
        st = tc_api_view(x->sendbuf, x->sendcount, x->sendtype, b, 1, x->comm, &v, &tmp[1]);
        if (tmp[1]) *pk = (xc_pack_t){ x->sendbuf, x->sendcount, x->sendtype, tmp[1], b };
    }
    if (v) *in = v;
    return st;
}

/* The call's contiguous input and output (coll/exchange's shapes), packed
 * copies in @tmp[1] (input) and @tmp[0] (output: unpack it after the call
 * into x->recvbuf, x->recvcount * @nout elements); the input's packing in
 * *@pk (dst NULL: none).  TC_OK or TC_ERR_NOMEM (@tmp freed). */
static tc_status_t buffers(const xc_call_t *x, const tc_api_call_t *plan, const char **in,
                           char **out, char *tmp[2], int *nout, xc_pack_t *pk)
{
    const int n = plan->ctx->map.size, me = plan->ctx->map.rank, root = me == x->root;
    const size_t b = plan->bytes;
    char *v = NULL;
    tc_status_t st = TC_OK;
    tmp[0] = tmp[1] = NULL;
    *in = NULL;
    *out = NULL;
    *nout = 0;
    pk->dst = NULL;
    if (x->kind == TC_XC_GATHER) {
        if (root) *nout = n;
        st = gather_buffers(x, n, me, b, in, out, tmp, pk);
    } else if (x->kind == TC_XC_SCATTER) {
        if (root)
            st = tc_api_view(x->sendbuf, x->sendcount * n, x->sendtype, b * (size_t)n, 1, x->comm,
                             &v, &tmp[1]);
        if (tmp[1])
            *pk = (xc_pack_t){ x->sendbuf, x->sendcount * n, x->sendtype, tmp[1], b * (size_t)n };
        *in = v;
        if (st == TC_OK && root && x->recvbuf == MPI_IN_PLACE) {
            *out = v + (size_t)me * b; /* our block stays in the send buffer */
        } else if (st == TC_OK) {
            *nout = 1;
            st = tc_api_view(x->recvbuf, x->recvcount, x->recvtype, b, 0, x->comm, out, &tmp[0]);
        }
    } else {
        *nout = n;
        st = tc_api_view(x->recvbuf, x->recvcount * n, x->recvtype, b * (size_t)n, 0, x->comm, out,
                         &tmp[0]);
        if (st == TC_OK && x->sendbuf == MPI_IN_PLACE) { /* the input: a copy of recvbuf */
            int pos = 0;
            if (!(tmp[1] = malloc(b * (size_t)n))) st = TC_ERR_NOMEM;
            if (st == TC_OK) {
                PMPI_Pack(x->recvbuf, x->recvcount * n, x->recvtype, tmp[1], (int)(b * (size_t)n),
                          &pos, x->comm);
                *pk =
                    (xc_pack_t){ x->recvbuf, x->recvcount * n, x->recvtype, tmp[1], b * (size_t)n };
            }
            *in = tmp[1];
        } else if (st == TC_OK) {
            st = tc_api_view(x->sendbuf, x->sendcount * n, x->sendtype, b * (size_t)n, 1, x->comm,
                             &v, &tmp[1]);
            if (tmp[1])
                *pk =
                    (xc_pack_t){ x->sendbuf, x->sendcount * n, x->sendtype, tmp[1], b * (size_t)n };
            *in = v;
        }
    }
    if (st != TC_OK) {
        free(tmp[0]);
        free(tmp[1]);
        tmp[0] = tmp[1] = NULL;
    }
    return st;
}

/* Gather and Scatter on several nodes run as Gatherv and Scatterv
 * (coll/vroot, the plan's leader or linear): their operation, and at the
 * root the table of @n blocks of @b bytes (lengths, then offsets) in
 * @local (@nlocal words) or, larger, malloc'd (*@tab), or -1 without
 * memory for it.  Elsewhere no table, and the regular operation. */
static int nodes_kind(const xc_call_t *x, const tc_api_call_t *p, size_t *local, int nlocal,
                      size_t **tab)
{
    const int n = p->ctx->map.size;
    *tab = NULL;
    if (p->plan.alg != TC_ALG_LEADER && p->plan.alg != TC_ALG_LINEAR)
        return x->kind + TC_COLL_GATHER;
    if (p->ctx->map.rank == x->root) {
        *tab = 2 * n <= nlocal ? local : malloc(2 * sizeof(size_t) * (size_t)n);
        if (!*tab) return -1;
        for (int r = 0; r < n; r++) {
            (*tab)[r] = p->bytes;
            (*tab)[n + r] = (size_t)r * p->bytes;
        }
    }
    return x->kind == TC_XC_GATHER ? TC_COLL_GATHER_NODES : TC_COLL_SCATTER_NODES;
}

static int native(const xc_call_t *x, MPI_Request *request)
{
    if (request && tc_nb_persist_pending()) return TC_NB_PERSIST_NATIVE;
    if (x->kind == TC_XC_GATHER)
        return request ? PMPI_Igather(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf,
                                      x->recvcount, x->recvtype, x->root, x->comm, request)
                       : PMPI_Gather(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf,
                                     x->recvcount, x->recvtype, x->root, x->comm);
    if (x->kind == TC_XC_SCATTER)
        return request ? PMPI_Iscatter(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf,
                                       x->recvcount, x->recvtype, x->root, x->comm, request)
                       : PMPI_Scatter(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf,
                                      x->recvcount, x->recvtype, x->root, x->comm);
    return request ? PMPI_Ialltoall(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf, x->recvcount,
                                    x->recvtype, x->comm, request)
                   : PMPI_Alltoall(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf, x->recvcount,
                                   x->recvtype, x->comm);
}

/* The blocking call. */
static int run_blocking(const xc_call_t *x)
{
    tc_api_call_t p;
    int rc = tc_api_choose(screen(x, &p), &p, x->stat, NULL); /* (TC_STAT_* are TC_CI_*) */
    if (rc == TC_API_NATIVE) {
        tc_api_native(x->name, &p, x->stat);
        return native(x, NULL);
    }
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *c = p.ctx;
    char *tmp[2] = { NULL, NULL }, *out;
    const char *in;
    int nout;
    xc_pack_t pk;
    size_t local[128], *tab;
    const int kind = nodes_kind(x, &p, local, 128, &tab);
    tc_status_t st = kind < 0 ? TC_ERR_NOMEM : buffers(x, &p, &in, &out, tmp, &nout, &pk);
    if (st == TC_OK) {
        tc_nb_drain(c); /* this communicator's nonblocking operations come first */
        const int n = c->map.size;
        tc_coll_args_t a = { .in = in,
                             .out = out,
                             .n = p.bytes,
                             .root = x->root,
                             .blocking = 1,
                             .vlen = tab,
                             .voff = tab ? tab + n : NULL };
        st = tc_api_run(c, kind, &a);
    }
    if (tab != local) free(tab);
    if (st == TC_OK && tmp[0]) {
        int pos = 0;
        PMPI_Unpack(tmp[0], (int)(p.bytes * (size_t)nout), &pos, x->recvbuf, x->recvcount * nout,
                    x->recvtype, x->comm);
    }
    free(tmp[0]);
    free(tmp[1]);
    return tc_api_finish(c, x->comm, st, x->name);
}

/* The nonblocking call. */
static int run_nonblocking(const xc_call_t *x, MPI_Request *request)
{
    tc_api_call_t p;
    int rc = tc_api_choose(screen(x, &p), &p, x->stat, NULL);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    if (rc == TC_API_NATIVE) {
        tc_api_native(x->name, &p, x->stat);
        return native(x, request);
    }
    if (rc != TC_API_RUN) return rc;
    size_t *tab;
    const int kind = nodes_kind(x, &p, NULL, 0, &tab);
    tc_nb_t *op = kind < 0 ? NULL : tc_api_nb_new(&p, kind, x->name);
    if (!op) {
        free(tab);
        return tc_api_finish(p.ctx, x->comm, TC_ERR_NOMEM, x->name);
    }
    op->own = (char *)tab; /* (the table, freed with the operation) */
    char *out;
    const char *in;
    int nout;
    xc_pack_t pk = { 0 };
    if (buffers(x, &p, &in, &out, op->tmp, &nout, &pk) != TC_OK ||
        (op->tmp[0] &&
         tc_api_nb_keep_type(op, x->recvbuf, x->recvcount * nout, x->recvtype) != 0) ||
        tc_api_nb_keep_pack(op, pk.src, pk.count, pk.type, pk.dst, pk.bytes) != 0) {
        tc_api_nb_discard(op);
        return tc_api_finish(p.ctx, x->comm, TC_ERR_NOMEM, x->name);
    }
    op->a.in = in;
    op->a.out = out;
    op->a.n = p.bytes;
    op->a.root = x->root;
    op->a.vlen = tab;
    op->a.voff = tab ? tab + p.ctx->map.size : NULL;
    return tc_nb_start(op, request);
}

/* The call's arguments. */
static xc_call_t xc(const char *name, int kind, int stat, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm)
{
    xc_call_t x = { name,    kind,      stat,     sendbuf, sendcount, sendtype,
                    recvbuf, recvcount, recvtype, root,    comm };
    return x;
}

int topocoll_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    xc_call_t x = xc("MPI_Gather", TC_XC_GATHER, TC_STAT_GATHER, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, root, comm);
    return run_blocking(&x);
}

int topocoll_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    xc_call_t x = xc("MPI_Scatter", TC_XC_SCATTER, TC_STAT_SCATTER, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, root, comm);
    return run_blocking(&x);
}

int topocoll_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    xc_call_t x = xc("MPI_Alltoall", TC_XC_ALLTOALL, TC_STAT_ALLTOALL, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, 0, comm);
    return run_blocking(&x);
}

int topocoll_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    xc_call_t x = xc("MPI_Igather", TC_XC_GATHER, TC_STAT_GATHER, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, root, comm);
    return run_nonblocking(&x, request);
}

int topocoll_iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    xc_call_t x = xc("MPI_Iscatter", TC_XC_SCATTER, TC_STAT_SCATTER, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, root, comm);
    return run_nonblocking(&x, request);
}

int topocoll_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    xc_call_t x = xc("MPI_Ialltoall", TC_XC_ALLTOALL, TC_STAT_ALLTOALL, sendbuf, sendcount,
                     sendtype, recvbuf, recvcount, recvtype, 0, comm);
    return run_nonblocking(&x, request);
}
