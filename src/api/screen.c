/*
 * api/screen -- see api_int.h: each collective's screening and buffers,
 * shared by its blocking and nonblocking calls; the blocking driver; the
 * one place a failure becomes an MPI error.
 */
#include "api_int.h"

#include "../base/log.h"
#include "../base/sync.h"
#include "../coll/allgather.h"
#include "../coll/fold.h"
#include "../nbc/nbc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* An erroneous argument: one line on stderr, the error class through the
 * communicator's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL, as
 * the standard puts errors without a communicator), returned.  Checked
 * here rather than left to the native MPI: Debian's MPICH 4.0.2 does not
 * check counts in MPI_Allreduce (it aborts in a memcpy of -4 bytes). */
int tc_api_arg_error(MPI_Comm comm, int cls, const char *call, const char *what, long long v)
{
    if (cls == MPI_ERR_COUNT || cls == MPI_ERR_ROOT)
        tc_log_line("topocoll: ", "%s: %s %lld", call, what, v);
    else
        tc_log_line("topocoll: ", "%s: %s", call, what);
    PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, cls);
    return cls;
}

void tc_api_why_native(const char *call, const char *why)
{
    tc_report_native(call, why);
    tc_debug(tc_config_get(), 2, "%s passed to the native MPI (%s)", call, why);
}

void tc_api_native(const char *call, const tc_api_call_t *plan, int stat)
{
    if (plan->ctx && plan->fallback) plan->ctx->stat[stat].fallbacks++;
    tc_api_why_native(call, plan->why);
}

int tc_api_contiguous(int count, MPI_Datatype dt, size_t bytes, MPI_Aint *lb_out)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    *lb_out = tlb;
    int tsize;
    PMPI_Type_size(dt, &tsize);
    return (size_t)textent == (size_t)tsize && (count == 1 || extent == (MPI_Aint)tsize) &&
           (size_t)tsize * (size_t)count == bytes;
}

int tc_api_native_persist_broken(int ci)
{
    /* (seen in MPICH 4.0.2; every MPICH-derived library is taken alike,
     * not knowing which release fixed them) */
#if defined(MPICH_NUMVERSION)
    return ci == TC_CI_ALLGATHER || ci == TC_CI_GATHER || ci == TC_CI_SCATTER;
#else
    (void)ci;
    return 0;
#endif
}

int tc_api_choose(int rc, tc_api_call_t *call, int ci, tc_xt_call_t *xt)
{
    if (xt) { /* (a call not measured: topocoll's default method) */
        xt->cls = NULL;
        xt->method = TC_XT_TOPO;
    }
    if (rc != TC_API_RUN) return rc;
    tc_plan_t *p = &call->plan;
    if (!xt && tc_nb_persist_pending() && tc_api_native_persist_broken(ci))
        tc_plan_select_own(call->ctx, ci, call->bytes,
                           "persistent: the MPI library's own persistent form is wrong "
                           "(docs/limitations.md)",
                           p);
    else
        tc_plan_select(call->ctx, ci, call->bytes, p);
    if (p->alg != TC_ALG_NATIVE && xt && !p->forced &&
        tc_xtune_begin(call->ctx, ci, call->bytes, tc_plan_alt(call->ctx, ci, call->bytes), xt) ==
            TC_XT_NATIVE) {
        p->alg = TC_ALG_NATIVE;
        p->why = "the native was faster at this size (measured, TOPOCOLL_XTUNE)";
    }
    if (p->alg != TC_ALG_NATIVE) return TC_API_RUN;
    call->ctx->stat[ci].native++;
    call->why = p->why;
    call->fallback = 0;
    return TC_API_NATIVE;
}

int tc_api_comm_of(MPI_Comm comm, const char *call, tc_api_call_t *p, int *size, int *rank)
{
    int inter = 0;
    memset(p, 0, sizeof(*p));
    p->why = "argument the native MPI will check";
    if (comm == MPI_COMM_NULL)
        return tc_api_arg_error(comm, MPI_ERR_COMM, call, "invalid communicator MPI_COMM_NULL", 0);
    /* A built context hangs only on an intracommunicator and knows its
     * size and our rank: the common case asks MPI nothing. */
    tc_ctx_t *hot = tc_ctx_lookup(comm);
    if (hot && !hot->cold && hot->enabled) {
        *size = hot->map.size;
        *rank = hot->map.rank;
        p->ctx = hot;
        return TC_API_RUN;
    }
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        p->why = "intercommunicator";
        return TC_API_NATIVE;
    }
    PMPI_Comm_size(comm, size);
    PMPI_Comm_rank(comm, rank);
    return TC_API_RUN;
}

int tc_api_ctx_of(MPI_Comm comm, const char *call, size_t bytes, tc_api_call_t *p)
{
    tc_ctx_t *c = p->ctx ? p->ctx : tc_ctx_get(comm, bytes, tc_api_nonblocking(call));
    if (!c || c->cold) {
        p->why = "context not built yet (TOPOCOLL_COMM_LAZY)";
        return TC_API_NATIVE;
    }
    p->ctx = c;
    p->fallback = 1;
    if (!c->enabled) {
        p->why = "topocoll disabled on this communicator";
        return TC_API_NATIVE;
    }
    p->fallback = 0;
    return TC_API_RUN;
}

/* @plan says native, because of @why (a fallback when @fallback). */
static int native(tc_api_call_t *plan, const char *why, int fallback)
{
    plan->why = why;
    plan->fallback = fallback;
    return TC_API_NATIVE;
}

/* The built context of @comm, if any: it hangs only on an
 * intracommunicator and knows its size, so the common case asks MPI
 * nothing. */
static tc_ctx_t *built(MPI_Comm comm)
{
    tc_ctx_t *c = comm == MPI_COMM_NULL ? NULL : tc_ctx_lookup(comm);
    return c && !c->cold && c->enabled ? c : NULL;
}

/* @comm's size when it is an intracommunicator, else 0 (*@inter set). */
static int intra_size(MPI_Comm comm, const tc_ctx_t *hot, int *inter)
{
    int size = 0;
    *inter = 0;
    if (hot) return hot->map.size;
    if (PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS || *inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return 0;
    return size;
}

/* ---- Bcast ------------------------------------------------------------------ */

/* Erroneous or unusual arguments go to the native MPI, which raises the
 * error class the user expects through comm's error handler. */
int tc_api_screen_bcast(const char *call, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                        tc_api_call_t *plan)
{
    int inter = 0, tsize;
    memset(plan, 0, sizeof(*plan));
    if (comm == MPI_COMM_NULL) return native(plan, "MPI_COMM_NULL", 0);
    if (dt == MPI_DATATYPE_NULL || count < 0)
        return native(plan, "argument the native MPI will check", 0);
    tc_ctx_t *c = built(comm);
    int size = intra_size(comm, c, &inter);
    if (size <= 0) return native(plan, inter ? "intercommunicator" : "no size", 0);
    if (root < 0 || root >= size || PMPI_Type_size(dt, &tsize) != MPI_SUCCESS)
        return native(plan, "argument the native MPI will check", 0);
    plan->bytes = (size_t)tsize * (size_t)count;
    if (size == 1 || plan->bytes == 0) {
        native(plan, "nothing to move", 0);
        return TC_API_NOTHING;
    }
    if (!c) c = tc_ctx_get(comm, plan->bytes, tc_api_nonblocking(call));
    plan->ctx = c;
    if (!c) return native(plan, "no context", 0);
    if (!c->enabled) {
        (void)call;
        return native(plan,
                      c->cfg->disable ? "TOPOCOLL_DISABLE=1"
                      : c->cold       ? "context not built yet (TOPOCOLL_COMM_LAZY)"
                                      : "topocoll disabled on this communicator",
                      !c->cold);
    }
    return TC_API_RUN;
}

tc_status_t tc_api_view(const void *buf, int count, MPI_Datatype dt, size_t bytes, int pack,
                        MPI_Comm comm, char **v, char **tmp)
{
    /* (@bytes is @count elements of @dt's size: its extents tell; a second
     * PMPI_Type_size costs a small call 10 ns) */
    MPI_Aint lb, extent, tlb, textent;
    *tmp = NULL;
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    if ((size_t)textent * (size_t)count == bytes && (count == 1 || extent == textent)) {
        *v = (char *)buf + tlb;
        return TC_OK;
    }
    /* Non-contiguous: a packed copy.  (Every rank moves the same bytes
     * whatever its own datatype, so ranks with different datatypes of one
     * signature still match.) */
    int psize = 0, pos = 0;
    PMPI_Pack_size(count, dt, comm, &psize);
    if ((size_t)psize != bytes || !(*tmp = malloc(bytes ? bytes : 1))) return TC_ERR_NOMEM;
    if (pack) PMPI_Pack(buf, count, dt, *tmp, psize, &pos, comm);
    *v = *tmp;
    return TC_OK;
}

tc_status_t tc_api_bcast_buffer(const tc_api_call_t *plan, void *buffer, int count, MPI_Datatype dt,
                                int root, MPI_Comm comm, void **bytes, char **tmp)
{
    char *v = NULL; /* (the root packs; the others unpack after the call) */
    tc_status_t st =
        tc_api_view(buffer, count, dt, plan->bytes, plan->ctx->map.rank == root, comm, &v, tmp);
    *bytes = v;
    return st;
}

/* ---- Reductions ------------------------------------------------------------- */

/* The checks every reduction makes: TC_API_RUN, an error raised
 * (MPI_COMM_NULL, negative count: the native MPI may not survive them),
 * or TC_API_NATIVE (null datatype or op: the native MPI's own class for
 * these, Open MPI 4.1.4 says MPI_ERR_OP for a null datatype; topocoll's
 * screening must not touch them: PMPI_Type_size on MPI_DATATYPE_NULL
 * raises on MPI_COMM_WORLD). */
static int check_reduction(const char *call, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                           tc_api_call_t *plan)
{
    memset(plan, 0, sizeof(*plan));
    if (comm == MPI_COMM_NULL)
        return tc_api_arg_error(comm, MPI_ERR_COMM, call, "invalid communicator MPI_COMM_NULL", 0);
    if (count < 0) return tc_api_arg_error(comm, MPI_ERR_COUNT, call, "negative count", count);
    if (dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
        return native(plan, "argument the native MPI will check", 0);
    return TC_API_RUN;
}

/* The context and reduction type of a reduction topocoll may run (@hot:
 * the built context, or NULL; @size: comm's size, 0 if not an
 * intracommunicator). */
static int reduction_ctx(const char *call, tc_ctx_t *hot, int size, int inter, int count,
                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm, tc_api_call_t *plan)
{
    if (size <= 0) return native(plan, inter ? "intercommunicator" : "no size", 0);
    if (count == 0 || size == 1) return native(plan, "nothing to combine", 0);
    tc_ctx_t *any = hot ? hot : tc_ctx_lookup(comm);
    if (!tc_op_classify(dt, op, &plan->t)) {
        plan->ctx = any && !any->cold ? any : NULL; /* counted, then passed on */
        return native(plan, "datatype/op pair not accelerated or erroneous", plan->ctx != NULL);
    }
    plan->bytes = tc_span(&plan->t, (size_t)count);
    tc_ctx_t *c = hot ? hot : tc_ctx_get(comm, plan->bytes, tc_api_nonblocking(call));
    plan->ctx = c;
    if (c && c->cold) {
        plan->ctx = NULL; /* not a fallback */
        return native(plan, "context not built yet (TOPOCOLL_COMM_LAZY)", 0);
    }
    if (!c || !c->enabled)
        return native(plan, c ? "topocoll disabled on this communicator" : "no context", c != NULL);
    if (!plan->t.commutative && c->map.nnodes > 1)
        return native(plan, "non-commutative op across nodes", 1);
    return TC_API_RUN;
}

int tc_api_single_copy_ok(tc_api_call_t *plan)
{
    if (tc_fold_uses_cico(plan->ctx, plan->bytes) || plan->ctx->all_sc) return 1;
    native(plan, "single copy unavailable", 1);
    return 0;
}

int tc_api_screen_reduce(const char *call, const void *sendbuf, const void *recvbuf, int count,
                         MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, tc_api_call_t *plan)
{
    int rc = check_reduction(call, count, dt, op, comm, plan), inter;
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *hot = built(comm);
    int size = intra_size(comm, hot, &inter);
    if (size > 0 && (root < 0 || root >= size))
        return tc_api_arg_error(comm, MPI_ERR_ROOT, call, "invalid root", root);
    if ((rc = reduction_ctx(call, hot, size, inter, count, dt, op, comm, plan)) != TC_API_RUN)
        return rc;
    int rank = plan->ctx->map.rank;
    if (sendbuf == MPI_IN_PLACE && rank != root)
        return native(plan, "MPI_IN_PLACE at a non-root", 0);
    plan->in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (rank == root && plan->in == recvbuf && sendbuf != MPI_IN_PLACE)
        return native(plan, "aliased buffers", 0);
    return tc_api_single_copy_ok(plan) ? TC_API_RUN : TC_API_NATIVE;
}

int tc_api_screen_allreduce(const char *call, const void *sendbuf, const void *recvbuf, int count,
                            MPI_Datatype dt, MPI_Op op, MPI_Comm comm, tc_api_call_t *plan)
{
    int rc = check_reduction(call, count, dt, op, comm, plan), inter;
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *hot = built(comm);
    int size = intra_size(comm, hot, &inter);
    if ((rc = reduction_ctx(call, hot, size, inter, count, dt, op, comm, plan)) != TC_API_RUN)
        return rc;
    plan->in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (plan->in == recvbuf && sendbuf != MPI_IN_PLACE) return native(plan, "aliased buffers", 1);
    return TC_API_RUN;
}

int tc_api_screen_scan(const char *call, const void *sendbuf, const void *recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm, tc_api_call_t *plan)
{
    int rc = check_reduction(call, count, dt, op, comm, plan), inter;
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *hot = built(comm);
    int size = intra_size(comm, hot, &inter);
    if (size <= 0) return native(plan, inter ? "intercommunicator" : "no size", 0);
    if (!tc_op_classify(dt, op, &plan->t)) return native(plan, "datatype/op pair not handled", 0);
    plan->in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (plan->in == recvbuf && sendbuf != MPI_IN_PLACE) return native(plan, "aliased buffers", 0);
    if (count == 0 || size == 1) return native(plan, "nothing to combine", 0);
    plan->bytes = tc_span(&plan->t, (size_t)count);
    tc_ctx_t *c = hot ? hot : tc_ctx_get(comm, plan->bytes, tc_api_nonblocking(call));
    plan->ctx = c && !c->cold ? c : NULL;
    if (!c || !c->enabled)
        return native(plan, "topocoll disabled on this communicator, or not built yet",
                      plan->ctx != NULL);
    return TC_API_RUN;
}

int tc_api_screen_redscat(const char *call, const void *sendbuf, const void *recvbuf,
                          const int *counts, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          tc_api_call_t *plan)
{
    int rc = check_reduction(call, counts ? 0 : count, dt, op, comm, plan), inter;
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *hot = built(comm);
    int size = intra_size(comm, hot, &inter);
    size_t total = counts ? 0 : (size_t)count * (size_t)(size > 0 ? size : 0);
    if (counts)
        for (int r = 0; r < size; r++) {
            if (counts[r] < 0)
                return tc_api_arg_error(comm, MPI_ERR_COUNT, call, "negative count", counts[r]);
            total += (size_t)counts[r];
        }
    if (total > (size_t)INT_MAX) return native(plan, "a vector of more than INT_MAX elements", 0);
    if ((rc = reduction_ctx(call, hot, size, inter, (int)total, dt, op, comm, plan)) != TC_API_RUN)
        return rc;
    plan->in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (plan->in == recvbuf && sendbuf != MPI_IN_PLACE) return native(plan, "aliased buffers", 1);
    return TC_API_RUN;
}

/* ---- Allgather ---------------------------------------------------------------- */

int tc_api_screen_allgather(const char *call, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, tc_api_call_t *plan)
{
    int inter = 0, size, rsize, ssize = 0, in_place = sendbuf == MPI_IN_PLACE;
    memset(plan, 0, sizeof(*plan));
    /* (Open MPI 4.1.4's PMPI_Allgather dereferences MPI_COMM_NULL: seen) */
    if (comm == MPI_COMM_NULL)
        return tc_api_arg_error(comm, MPI_ERR_COMM, call, "invalid communicator MPI_COMM_NULL", 0);
    if (recvcount < 0 || (!in_place && sendcount < 0))
        return tc_api_arg_error(comm, MPI_ERR_COUNT, call, "negative count",
                                recvcount < 0 ? recvcount : sendcount);
    if (recvtype == MPI_DATATYPE_NULL || (!in_place && sendtype == MPI_DATATYPE_NULL))
        return tc_api_arg_error(comm, MPI_ERR_TYPE, call, "datatype is MPI_DATATYPE_NULL", 0);
    tc_ctx_t *hot = built(comm);
    if ((size = intra_size(comm, hot, &inter)) <= 0)
        return native(plan, inter ? "intercommunicator" : "no size", 0);
    if (PMPI_Type_size(recvtype, &rsize) != MPI_SUCCESS ||
        (!in_place && PMPI_Type_size(sendtype, &ssize) != MPI_SUCCESS))
        return native(plan, "argument the native MPI will check", 0);
    plan->bytes = (size_t)rsize * (size_t)recvcount;
    if (!in_place && (size_t)ssize * (size_t)sendcount != plan->bytes) {
        /* signature mismatch: erroneous, but counted on a cold context as
         * on the other ranks (where they would, by the receive side's
         * size), or the calls that build it would differ */
        if (!hot && plan->bytes && size > 1 && plan->bytes <= (size_t)INT_MAX)
            (void)tc_ctx_get(comm, plan->bytes, tc_api_nonblocking(call));
        return native(plan, "argument the native MPI will check", 0);
    }
    if (plan->bytes == 0 || size == 1 || plan->bytes > (size_t)INT_MAX)
        return native(plan, "nothing to exchange or block too large", 0);
    tc_ctx_t *c = hot ? hot : tc_ctx_get(comm, plan->bytes, tc_api_nonblocking(call));
    if (!c) return native(plan, "no context", 0);
    if (c->cold) return native(plan, "context not built yet (TOPOCOLL_COMM_LAZY)", 0);
    plan->ctx = c;
    if (!c->enabled) return native(plan, "topocoll disabled on this communicator", 1);
    if (tc_allgather_alg(c, plan->bytes) != TC_AG_USE_CICO && !c->all_sc)
        return native(plan, "single copy unavailable", 1);
    return TC_API_RUN;
}

/* Our block, out of recvbuf's layout, into the packed output @out. */
static void pack_own_block(const tc_api_call_t *plan, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Aint rext, MPI_Comm comm, char *out)
{
    int pos = 0, rank = plan->ctx->map.rank;
    PMPI_Pack((char *)recvbuf + (MPI_Aint)rank * recvcount * rext, recvcount, recvtype,
              out + (size_t)rank * plan->bytes, (int)plan->bytes, &pos, comm);
}

tc_status_t tc_api_allgather_buffers(const tc_api_call_t *plan, const void *sendbuf, int sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, const void **in,
                                     char **out, char *tmp[2])
{
    const size_t block = plan->bytes, size = (size_t)plan->ctx->map.size;
    const int rank = plan->ctx->map.rank, in_place = sendbuf == MPI_IN_PLACE;
    MPI_Aint rlb, slb, rext, rlb2;
    tmp[0] = tmp[1] = NULL;
    PMPI_Type_get_extent(recvtype, &rlb2, &rext);
    int rcontig = tc_api_contiguous(recvcount, recvtype, block, &rlb) &&
                  (size_t)rext * (size_t)recvcount == block;
    int scontig = in_place || tc_api_contiguous(sendcount, sendtype, block, &slb);
    /* Contiguous buffers are used in place; others are packed (every rank
     * moves the same bytes whatever its own datatypes). */
    if (!rcontig && !(tmp[0] = malloc(block * size))) return TC_ERR_NOMEM;
    *out = rcontig ? (char *)recvbuf + rlb : tmp[0];
    if (in_place) {
        if (!rcontig) pack_own_block(plan, recvbuf, recvcount, recvtype, rext, comm, *out);
        *in = *out + (size_t)rank * block;
    } else if (scontig) {
        *in = (const char *)sendbuf + slb;
    } else {
        int pos = 0;
        if (!(tmp[1] = malloc(block))) {
            free(tmp[0]);
            tmp[0] = NULL;
            return TC_ERR_NOMEM;
        }
        PMPI_Pack(sendbuf, sendcount, sendtype, tmp[1], (int)block, &pos, comm);
        *in = tmp[1];
    }
    return TC_OK;
}

/* ---- Running and failing ------------------------------------------------------- */

/* One wait step of a blocking call: a process waiting on shared-memory
 * flags must still drive the MPI progress engine: the application's own
 * pending requests, and native traffic other ranks still need from us,
 * stall otherwise (seen: a hang under MPICH's weak progress).  Iprobe only
 * polls, but it runs the whole progress engine: not during the short spin
 * (+6 us on a 16 KiB Bcast when probing every 32 polls there), and only
 * every 16th poll after it (probing on every poll cost ASP on rome99 10%
 * and MPICH's 16 KiB Bcast 3x). */
static tc_status_t wait_step(const tc_ctx_t *c, uint64_t seq, tc_backoff_t *b)
{
    tc_status_t peer = TC_OK;
    /* operations of other communicators others may be waiting for */
    if (tc_nb_outstanding()) tc_nb_progress();
    if (b->polls >= b->spin && ((b->polls - b->spin) & 15) == 0) {
        int flag;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->pcomm, &flag, MPI_STATUS_IGNORE);
        peer = tc_cctl_peer_failed(c->shm, seq); /* the way out of every wait */
    }
    tc_backoff(b);
    return peer;
}

/* A failed operation's drain step to its end (coll/coll): its network
 * traffic is the MPI library's to finish, as in any MPI call. */
static tc_status_t drain(const tc_ctx_t *c, const tc_coll_ops_t *ops, tc_coll_state_t *st)
{
    tc_backoff_t b;
    tc_status_t rc;
    tc_backoff_init(&b, c->spin);
    b.nap_us = c->nap;
    while ((rc = ops->drain(st)) == TC_INPROGRESS) {
        if (tc_nb_outstanding()) tc_nb_progress();
        tc_backoff(&b);
    }
    return rc;
}

tc_status_t tc_api_run(tc_ctx_t *c, int kind, const tc_coll_args_t *a)
{
    const tc_coll_ops_t *ops = tc_coll_ops(kind);
    tc_coll_state_t st;
    tc_backoff_t b;
    tc_status_t rc = ops->init(&st, c, a);
    const uint64_t seq = c->seq;    /* (init numbered the operation) */
    tc_assert(rc != TC_INPROGRESS); /* init prepares; only work is resumable */
    if (rc == TC_OK) {
        tc_backoff_init(&b, c->spin);
        b.nap_us = c->nap;
        while ((rc = ops->work(&st, TC_EXEC_ANY)) == TC_INPROGRESS)
            if ((rc = wait_step(c, seq, &b)) != TC_OK) break; /* a local process failed it */
    }
    int drained = 0;
    if (rc < 0) {
        rc = tc_cctl_settle(c->shm, seq, rc); /* (the local processes told first) */
        drained = ops->drain && drain(c, ops, &st) == TC_OK;
    }
    ops->fini(&st);
    c->stat[ops->stat].calls++;
    tc_report_ran(ops->stat);
    if (rc < 0) tc_ctx_failed(c, drained);
    return rc;
}

int tc_api_error(tc_ctx_t *c, tc_status_t st, const char *call)
{
    if (st == TC_OK) return MPI_SUCCESS;
    if (c) c->tainted = 1; /* requests may be in flight: never kept for reuse */
    return tc_api_error_rank(c ? c->map.rank : -1, st, call);
}

int tc_api_error_rank(int rank, tc_status_t st, const char *call)
{
    if (st == TC_OK) return MPI_SUCCESS;
    int code = st == TC_ERR_NOMEM            ? MPI_ERR_NO_MEM
               : st == TC_ERR_TRUNCATE       ? MPI_ERR_TRUNCATE
               : st == TC_ERR_REMOTE         ? MPI_ERR_OTHER
               : tc_status_mpi_code(st) != 0 ? tc_status_mpi_code(st)
                                             : MPI_ERR_INTERN;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = MPI_ERR_OTHER;
    PMPI_Error_class(code, &cls); /* (the class's string is one line; a code's may not be) */
    PMPI_Error_string(cls, msg, &len);
    int e = st == TC_ERR_SYS ? tc_status_errno() : 0;
    tc_log_line("topocoll: ", "%s failed on rank %d: %s%s%s (%s)", call, rank, tc_status_name(st),
                e ? ": " : "", e ? strerror(e) : "", msg);
    return code;
}

/* The handler of @comm is MPI_ERRORS_ARE_FATAL. */
static int fatal_handler(MPI_Comm comm)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int fatal = 0;
    if (PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL) {
        fatal = eh == MPI_ERRORS_ARE_FATAL;
        PMPI_Errhandler_free(&eh);
    }
    return fatal;
}

/* Under MPI_ERRORS_ARE_FATAL the job ends here, through PMPI_Abort on
 * @comm: the standard's "abort all executing processes" (MPI-4.0 section
 * 9.3).  MPICH's own fatal path ends only the calling process (MPID_Abort
 * without a communicator exits), and its Hydra launcher does not end a job
 * for an exit code, so the processes on other hosts, waiting for this one
 * inside the collective, would wait forever. */
int tc_api_finish(tc_ctx_t *c, MPI_Comm comm, tc_status_t st, const char *call)
{
    if (st == TC_OK) return MPI_SUCCESS;
    int code = tc_api_error(c, st, call);
    if (fatal_handler(comm)) {
        int cls = MPI_ERR_OTHER;
        PMPI_Error_class(code, &cls);
        tc_log_line("topocoll: ", "%s: the handler is MPI_ERRORS_ARE_FATAL: aborting the job",
                    call);
        PMPI_Abort(comm, cls);
    }
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}
