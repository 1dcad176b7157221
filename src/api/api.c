/*
 * api/api -- the public native API (topocoll.h): argument screening, the
 * fallback to the underlying MPI, datatype handling, and the blocking
 * drivers that loop over the collectives' state machines.
 *
 * Owns: nothing beyond the calls.  May call: coll/, xfer/, base/, PMPI.
 */
#include "topocoll.h"

#include "../base/log.h"
#include "../base/sync.h"
#include "../coll/allgather.h"
#include "../coll/allreduce.h"
#include "../coll/barrier.h"
#include "../coll/bcast.h"
#include "../coll/ctx.h"
#include "../hier/hier.h"
#include "../coll/reduce.h"
#include "../coll/xtune.h"
#include "../xfer/region.h"
#include "../nbc/nbc.h"
#include "api_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *topocoll_strerror(int err)
{
    switch (err) {
    case TOPOCOLL_SUCCESS: return "success";
    case TOPOCOLL_ERR_INVAL: return "invalid argument";
    case TOPOCOLL_ERR_BOUNDS: return "copy outside the region's bounds";
    case TOPOCOLL_ERR_RIGHTS: return "copy direction not granted by the region";
    case TOPOCOLL_ERR_STALE: return "stale or unknown cookie";
    case TOPOCOLL_ERR_NOSUPPORT: return "single copy unavailable on this node";
    case TOPOCOLL_ERR_NOSPACE: return "region table full";
    case TOPOCOLL_ERR_SYS: return "the kernel refused the copy";
    case TOPOCOLL_ERR_NOCTX: return "communicator not attached to topocoll";
    case TOPOCOLL_COPY_PENDING: return "asynchronous copy still pending";
    default: return "unknown error";
    }
}

/* A collective topocoll ran (@what) failed with @rc: its context is never
 * kept for reuse (requests may be left in flight), and @comm's handler is
 * called.  Under MPI_ERRORS_ARE_FATAL the job ends here, through PMPI_Abort
 * on @comm, after one line saying why: the standard's "abort all executing
 * processes" (MPI-4.0 section 9.3).  MPICH's own fatal path ends only the
 * calling process (MPID_Abort without a communicator exits), and its Hydra
 * launcher does not end a job for an exit code, so the processes on other
 * hosts, waiting for this one inside the collective, would wait forever. */
static void call_failed(tc_ctx_t *c, MPI_Comm comm, int rc, const char *what)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int fatal = 0, rank = -1;
    c->tainted = 1;
    if (PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL) {
        fatal = eh == MPI_ERRORS_ARE_FATAL;
        PMPI_Errhandler_free(&eh);
    }
    if (fatal) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0, cls = MPI_ERR_OTHER;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Error_class(rc, &cls); /* (the class's string is one line; a code's may not be) */
        PMPI_Error_string(cls, msg, &len);
        tc_log_line("topocoll: ",
                    "%s failed on rank %d: %s (a process of the job may be gone); "
                    "the handler is MPI_ERRORS_ARE_FATAL: aborting the job",
                    what, rank, msg);
        PMPI_Abort(comm, cls);
    }
    PMPI_Comm_call_errhandler(comm, rc);
}

int topocoll_comm_attach(MPI_Comm comm)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
    if (!tc_ctx_get(comm, TC_CTX_NOW)) return MPI_ERR_NO_MEM;
    return tc_hier_attach(comm); /* the processes' hierarchy paths, for local queries */
}

int topocoll_comm_query(MPI_Comm comm, topocoll_comm_info_t *info)
{
    tc_ctx_t *c = tc_ctx_lookup(comm);
    if (!c || !info) return TOPOCOLL_ERR_NOCTX;
    memset(info, 0, sizeof(*info));
    info->enabled = c->enabled;
    PMPI_Comm_rank(comm, &info->rank);
    PMPI_Comm_size(comm, &info->size);
    info->bcast_calls = c->bcast_calls;
    info->bcast_fallbacks = c->bcast_fallbacks;
    info->barrier_calls = c->barrier_calls;
    info->bytes_bcast_net = c->bytes_bcast_net;
    info->reduce_calls = c->reduce_calls;
    info->reduce_fallbacks = c->reduce_fallbacks;
    info->allreduce_calls = c->allreduce_calls;
    info->allreduce_fallbacks = c->allreduce_fallbacks;
    info->allgather_calls = c->allgather_calls;
    info->allgather_fallbacks = c->allgather_fallbacks;
    info->nb_calls = c->nb_calls;
    info->built = !c->cold;
    info->lazy_calls = c->cold_calls;
    info->reused = c->reused;
    info->bcast_native = c->bcast_flat;
    info->reduce_native = c->reduce_flat;
    info->allreduce_native = c->allreduce_flat;
    info->allgather_native = c->allgather_flat;
    if (!c->enabled) {
        snprintf(info->mechanism_why, sizeof(info->mechanism_why), "%s",
                 c->cfg->disable ? "TOPOCOLL_DISABLE=1"
                 : c->cold       ? "not built yet: native MPI collectives (TOPOCOLL_COMM_LAZY)"
                                 : "set-up failed: native MPI collectives");
        return MPI_SUCCESS;
    }
    info->node = c->map.node;
    info->nnodes = c->map.nnodes;
    info->local_rank = c->map.lrank;
    info->local_size = c->map.lsize;
    _Static_assert(TOPOCOLL_RAIL_MAX == TC_RAIL_MAX, "public and internal rail counts");
    info->leader = c->map.leader_of[c->map.node];
    snprintf(info->leaders_policy, sizeof(info->leaders_policy), "%s",
             tc_lead_policy_name(c->map.policy));
    info->rails = c->map.nrails;
    for (int r = 0; r < TOPOCOLL_RAIL_MAX; r++)
        info->rail_leader[r] = c->map.rail_of[c->map.node * TC_RAIL_MAX + r];
    int dl = c->map.dom_leader[c->map.lrank];
    info->domain_leader = -1;
    for (int r = 0; r < c->map.size && dl >= 0; r++)
        if (c->map.node_of[r] == c->map.node && c->map.lrank_of[r] == dl) info->domain_leader = r;
    info->nic_score = c->map.lead_in[c->map.lrank].nrails ? c->map.score : -1;
    if (c->shm) {
        info->single_copy = c->shm->single_copy;
        snprintf(info->mechanism_why, sizeof(info->mechanism_why), "%s", c->shm->why);
        info->bytes_single_copy = c->shm->bytes_sc;
        info->bytes_cico = c->shm->bytes_cico;
    } else {
        snprintf(info->mechanism_why, sizeof(info->mechanism_why),
                 "one process on the node: no intra-node copy");
    }
    return MPI_SUCCESS;
}

/* The node's shared segment of an attached communicator, or NULL. */
static tc_shm_t *shm_of(MPI_Comm comm, int *err)
{
    tc_ctx_t *c = tc_ctx_lookup(comm);
    *err = TOPOCOLL_ERR_NOCTX;
    if (!c || !c->enabled) return NULL;
    if (!c->shm) *err = TOPOCOLL_ERR_NOSUPPORT; /* alone on the node */
    return c->shm;
}

int topocoll_region_create(MPI_Comm comm, const struct iovec *iov, int niov, unsigned rights,
                           topocoll_cookie_t *cookie)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    return s ? tc_region_create(s, iov, niov, rights, cookie) : err;
}

int topocoll_region_destroy(MPI_Comm comm, topocoll_cookie_t cookie)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    return s ? tc_region_destroy(s, cookie) : err;
}

long long topocoll_copy(MPI_Comm comm, topocoll_cookie_t cookie, size_t offset,
                        const struct iovec *local, int nlocal, int direction)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    return s ? tc_region_copy(s, cookie, offset, local, nlocal, direction) : err;
}

long long topocoll_region_copy(MPI_Comm comm, topocoll_cookie_t src, size_t src_offset,
                               topocoll_cookie_t dst, size_t dst_offset, size_t length)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    return s ? tc_region_copy2(s, src, src_offset, dst, dst_offset, length) : err;
}

int topocoll_copy_async(MPI_Comm comm, topocoll_cookie_t cookie, size_t offset,
                        const struct iovec *local, int nlocal, int direction, long long *status)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    if (!s) return err;
    if (direction != TC_DIR_FROM_REGION && direction != TC_DIR_TO_REGION) return TOPOCOLL_ERR_INVAL;
    if ((err = tc_async_submit_inline(s, cookie, offset, local, nlocal, direction, status)) == 0)
        tc_nb_watch(tc_ctx_lookup(comm));
    return err;
}

int topocoll_region_copy_async(MPI_Comm comm, topocoll_cookie_t src, size_t src_offset,
                               topocoll_cookie_t dst, size_t dst_offset, size_t length,
                               long long *status)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    if (!s) return err;
    if ((err = tc_async_submit_region(s, src, src_offset, dst, dst_offset, length, status)) == 0)
        tc_nb_watch(tc_ctx_lookup(comm));
    return err;
}

long long topocoll_copy_poll(const long long *status)
{
    if (!status) return TOPOCOLL_ERR_INVAL;
    long long r = tc_async_status(status);
    if (r != TOPOCOLL_COPY_PENDING) return r;
    tc_nb_progress();
    return tc_async_status(status);
}

/* One wait step of a blocking call: a process waiting on shared-memory
 * flags must still drive the MPI progress engine: the application's own
 * pending requests, and native traffic other ranks still need from us,
 * stall otherwise (seen: a hang under MPICH's weak progress).  Iprobe only
 * polls, but it runs the whole progress engine: not during the short spin
 * (+6 us on a 16 KiB Bcast when probing every 32 polls there), and only
 * every 16th poll after it (probing on every poll cost ASP on rome99 10%
 * and MPICH's 16 KiB Bcast 3x). */
static void wait_step(const tc_ctx_t *c, tc_backoff_t *b)
{
    /* operations of other communicators others may be waiting for */
    if (tc_nb_outstanding()) tc_nb_progress();
    if (b->polls >= b->spin && ((b->polls - b->spin) & 15) == 0) {
        int flag;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->pcomm, &flag, MPI_STATUS_IGNORE);
    }
    tc_backoff(b);
}

/* Drive a broadcast of contiguous bytes to completion. */
static int bcast_bytes(tc_ctx_t *c, void *buf, size_t bytes, int root)
{
    tc_bcast_t op;
    tc_backoff_t b;
    int rc;
    tc_bcast_init(&op, c, buf, bytes, root);
    tc_backoff_init(&b, c->spin);
    b.nap_us = c->nap;
    while ((rc = tc_bcast_work(&op)) == TC_OP_PENDING) wait_step(c, &b);
    tc_bcast_fini(&op);
    return rc;
}

int topocoll_barrier(MPI_Comm comm)
{
    int size, inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return PMPI_Barrier(comm);
    if (size == 1) return MPI_SUCCESS;
    tc_ctx_t *c = tc_ctx_get(comm, 0);
    if (!c || !c->enabled) return PMPI_Barrier(comm);
    if (c->cfg->barrier_flat && c->map.nnodes > 1) {
        tc_api_why_native("MPI_Barrier", "several nodes, TOPOCOLL_BARRIER_FLAT=1");
        return PMPI_Barrier(comm);
    }
    tc_nb_drain(c); /* this communicator's nonblocking operations come first */
    /* With one process on every node the machine below degenerates by
     * itself to the leaders' (native) barrier over the whole group. */
    tc_barrier_t op;
    tc_backoff_t b;
    int rc;
    tc_barrier_init(&op, c, 1);
    tc_backoff_init(&b, c->spin);
    b.nap_us = c->nap;
    while ((rc = tc_barrier_work(&op)) == TC_OP_PENDING) wait_step(c, &b);
    c->barrier_calls++;
    if (rc != MPI_SUCCESS) call_failed(c, comm, rc, "MPI_Barrier");
    return rc;
}

int topocoll_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    int size, tsize, inter = 0, rc;
    MPI_Aint lb, extent, tlb, textent;

    /* Erroneous or unusual arguments go to the native MPI, which raises the
     * error class the user expects through comm's error handler.  Every
     * test below gives the same answer on every rank of a correct program. */
    /* A built context hangs only on an intracommunicator and knows its size */
    tc_ctx_t *c = comm == MPI_COMM_NULL ? NULL : tc_ctx_lookup(comm);
    int hot = c && !c->cold && c->enabled;
    if (comm == MPI_COMM_NULL || datatype == MPI_DATATYPE_NULL || count < 0 ||
        (!hot && (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
                  PMPI_Comm_size(comm, &size) != MPI_SUCCESS)))
        goto native;
    if (hot) size = c->map.size;
    if (root < 0 || root >= size || PMPI_Type_size(datatype, &tsize) != MPI_SUCCESS) goto native;
    size_t bytes = (size_t)tsize * (size_t)count;
    if (size == 1 || bytes == 0) return MPI_SUCCESS;
    if (!hot) c = tc_ctx_get(comm, bytes);
    if (!c) goto native;
    if (!c->enabled) {
        c->bcast_fallbacks += !c->cold;
        goto native;
    }
    if (tc_ctx_flat(c, bytes, c->cfg->bcast_flat_max)) {
        c->bcast_flat++;
        tc_api_why_native("MPI_Bcast", "small message across nodes (TOPOCOLL_BCAST_FLAT_MAX)");
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    }
    tc_xt_call_t xt;
    if (tc_xtune_begin(c, TC_XT_BCAST, bytes, &xt) == TC_XT_NATIVE) {
        c->bcast_flat++;
        tc_api_why_native("MPI_Bcast",
                          "the native was faster at this size (measured, TOPOCOLL_XTUNE)");
        rc = PMPI_Bcast(buffer, count, datatype, root, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    tc_nb_drain(c);

    PMPI_Type_get_extent(datatype, &lb, &extent);
    PMPI_Type_get_true_extent(datatype, &tlb, &textent);
    if ((size_t)textent == (size_t)tsize && (count == 1 || extent == (MPI_Aint)tsize)) {
        rc = bcast_bytes(c, (char *)buffer + tlb, bytes, root); /* contiguous */
    } else {
        /* Non-contiguous: flatten by packing, broadcast the bytes, unpack.
         * (Every rank takes this same path whatever its own datatype, so
         * ranks with different datatypes of one signature still match.) */
        int psize = 0, pos = 0, rank;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Pack_size(count, datatype, comm, &psize);
        char *tmp = malloc(bytes);
        if (!tmp || (size_t)psize != bytes) {
            /* cannot happen on the homogeneous nodes we support */
            free(tmp);
            tc_warn("cannot pack %zu bytes; aborting", bytes);
            return PMPI_Abort(comm, MPI_ERR_INTERN);
        }
        if (rank == root) PMPI_Pack(buffer, count, datatype, tmp, psize, &pos, comm);
        rc = bcast_bytes(c, tmp, bytes, root);
        pos = 0;
        if (rc == MPI_SUCCESS && rank != root)
            PMPI_Unpack(tmp, psize, &pos, buffer, count, datatype, comm);
        free(tmp);
    }
    tc_xtune_end(&xt);
    c->bcast_calls++;
    if (rc != MPI_SUCCESS) call_failed(c, comm, rc, "MPI_Bcast");
    return rc;

native:
    tc_debug(tc_config_get(), 2, "MPI_Bcast passed to the native MPI (%s)",
             comm == MPI_COMM_NULL      ? "MPI_COMM_NULL"
             : inter                    ? "intercommunicator"
             : tc_config_get()->disable ? "TOPOCOLL_DISABLE=1"
                                        : "argument the native MPI will check");
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}

/* ---- Reduce, Allreduce, Allgather ------------------------------------------- */

/* Drive a state machine to completion (blocking call). */
static int drive(const tc_ctx_t *c, void *op, int (*work)(void *))
{
    tc_backoff_t b;
    int rc;
    tc_backoff_init(&b, c->spin);
    b.nap_us = c->nap;
    while ((rc = work(op)) == TC_OP_PENDING) wait_step(c, &b);
    return rc;
}
static int reduce_work(void *op) { return tc_reduce_work(op); }
static int allreduce_work(void *op) { return tc_allreduce_work(op); }
static int allgather_work(void *op) { return tc_allgather_work(op); }

/* An erroneous argument: one line on stderr, the error class through the
 * communicator's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL, as
 * the standard puts errors without a communicator), returned.  Checked
 * here rather than left to the native MPI: Debian's MPICH 4.0.2 does not
 * check counts in MPI_Allreduce (it aborts in a memcpy of -4 bytes). */
int tc_api_arg_error(MPI_Comm comm, int cls, const char *call, const char *what, long long v)
{
    if (cls == MPI_ERR_COUNT || cls == MPI_ERR_ROOT)
        fprintf(stderr, "topocoll: %s: %s %lld\n", call, what, v);
    else
        fprintf(stderr, "topocoll: %s: %s\n", call, what);
    PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, cls);
    return cls;
}

/* The arguments every reduction checks; MPI_SUCCESS or the error raised. */
int tc_api_check_reduction(const char *call, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return tc_api_arg_error(comm, MPI_ERR_COMM, call, "invalid communicator MPI_COMM_NULL", 0);
    if (count < 0) return tc_api_arg_error(comm, MPI_ERR_COUNT, call, "negative count", count);
    /* The native MPI's own class for these (Open MPI 4.1.4 says MPI_ERR_OP
     * for a null datatype); topocoll's screening must not touch them
     * (PMPI_Type_size on MPI_DATATYPE_NULL raises on MPI_COMM_WORLD). */
    (void)call;
    if (dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL) return TC_API_TO_NATIVE;
    return MPI_SUCCESS;
}

void tc_api_why_native(const char *call, const char *why)
{
    tc_debug(tc_config_get(), 2, "%s passed to the native MPI (%s)", call, why);
}

/* Screening shared by Reduce and Allreduce: the context and the reduction
 * type when topocoll handles the call, NULL (and @why) otherwise.  Every
 * test gives the same answer on every rank of a correct program. */
/* tc_api_reduction_ctx with @hot, comm's context as tc_ctx_lookup gave it
 * (or NULL), already looked up. */
static tc_ctx_t *reduction_ctx(tc_ctx_t *hot, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                               tc_rtype_t *t, int *is_fallback, const char **why)
{
    int inter = 0, size;
    *is_fallback = 0;
    /* A built context hangs only on an intracommunicator and knows its size:
     * the common case asks MPI nothing */
    if (hot && !hot->cold && hot->enabled) {
        size = hot->map.size;
    } else if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
               inter) {
        *why = comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "intercommunicator";
        return NULL;
    } else if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        *why = "no size";
        return NULL;
    }
    if (count <= 0 || size == 1) {
        *why = count < 0 ? "negative count" : "nothing to combine";
        return NULL;
    }
    if (!tc_op_classify(dt, op, t)) {
        *why = "datatype/op pair not accelerated or erroneous";
        *is_fallback = hot != NULL && !hot->cold;
        return hot && !hot->cold ? hot : NULL; /* counted, then passed on */
    }
    tc_ctx_t *c = hot && !hot->cold ? hot : tc_ctx_get(comm, tc_span(t, (size_t)count));
    if (c && c->cold) {
        *why = "context not built yet (TOPOCOLL_COMM_LAZY)";
        return NULL;
    } /* not a fallback */
    if (!c || !c->enabled) {
        *why = c ? "topocoll disabled on this communicator" : "no context";
        *is_fallback = c != NULL;
        return c;
    }
    if (!t->commutative && c->map.nnodes > 1) {
        *why = "non-commutative op across nodes";
        *is_fallback = 1;
        return c;
    }
    return c;
}

tc_ctx_t *tc_api_reduction_ctx(int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, tc_rtype_t *t,
                               int *is_fallback, const char **why)
{
    return reduction_ctx(comm == MPI_COMM_NULL ? NULL : tc_ctx_lookup(comm), count, dt, op, comm, t,
                         is_fallback, why);
}

int topocoll_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm)
{
    tc_rtype_t t;
    int fb, err;
    const char *why = "";
    if ((err = tc_api_check_reduction("MPI_Allreduce", count, datatype, op, comm)) ==
        TC_API_TO_NATIVE)
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    if (err != MPI_SUCCESS) return err;
    tc_ctx_t *c = tc_api_reduction_ctx(count, datatype, op, comm, &t, &fb, &why);
    if (!c || fb) goto native;
    const char *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (in == recvbuf && sendbuf != MPI_IN_PLACE) {
        why = "aliased buffers";
        fb = 1;
        goto native;
    }
    if (!tc_fold_uses_cico(c, tc_span(&t, (size_t)count)) && !c->all_sc) {
        why = "single copy unavailable";
        fb = 1;
        goto native;
    }
    if (tc_ctx_flat(c, tc_span(&t, (size_t)count), c->cfg->allreduce_flat_max)) {
        c->allreduce_flat++;
        why = "small vector across nodes (TOPOCOLL_ALLREDUCE_FLAT_MAX)";
        goto native;
    }
    tc_xt_call_t xt;
    int rc;
    if (tc_xtune_begin(c, TC_XT_ALLREDUCE, tc_span(&t, (size_t)count), &xt) == TC_XT_NATIVE) {
        c->allreduce_flat++;
        tc_api_why_native("MPI_Allreduce",
                          "the native was faster at this size (measured, TOPOCOLL_XTUNE)");
        rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    tc_nb_drain(c);
    tc_allreduce_t a;
    rc = tc_allreduce_init(&a, c, in, recvbuf, (size_t)count, &t);
    if (rc == MPI_SUCCESS) rc = drive(c, &a, allreduce_work);
    tc_allreduce_fini(&a);
    tc_xtune_end(&xt);
    c->allreduce_calls++;
    if (rc != MPI_SUCCESS) call_failed(c, comm, rc, "MPI_Allreduce");
    return rc;
native:
    if (c && fb) c->allreduce_fallbacks++;
    tc_api_why_native("MPI_Allreduce", why);
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

/* PMPI_Reduce, except that MPI_IN_PLACE at a non-zero root reduces from a
 * copy of the root's buffer: MPICH 4.0.2 crashes on it (seen here with
 * np=2, MPI_SHORT_INT/MPI_MINLOC at root 1).  Erroneous arguments go to
 * PMPI_Reduce unchanged. */
static int native_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                         int root, MPI_Comm comm)
{
    int rank, size, inter = 0;
    MPI_Aint lb, ext, tlb, text;
    if (sendbuf != MPI_IN_PLACE || root == 0 || count <= 0 || dt == MPI_DATATYPE_NULL ||
        comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Comm_size(comm, &size) != MPI_SUCCESS ||
        root >= size || rank != root || PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dt, &tlb, &text) != MPI_SUCCESS)
        return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
    size_t span = (size_t)(count - 1) * (size_t)ext + (size_t)text;
    char *tmp = malloc(span ? span : 1);
    if (!tmp) return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
    memcpy(tmp, (char *)recvbuf + tlb, span);
    int rc = PMPI_Reduce(tmp - tlb, recvbuf, count, dt, op, root, comm);
    free(tmp);
    return rc;
}

int topocoll_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, MPI_Comm comm)
{
    tc_rtype_t t;
    int fb, size = 0, rank = 0, err, inter = 0;
    const char *why = "";
    if ((err = tc_api_check_reduction("MPI_Reduce", count, datatype, op, comm)) == TC_API_TO_NATIVE)
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    if (err != MPI_SUCCESS) return err;
    tc_ctx_t *hot = tc_ctx_lookup(comm); /* built: an intracommunicator of known size */
    if (hot && !hot->cold && hot->enabled)
        size = hot->map.size;
    else if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
             PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        size = 0;
    if (size > 0 && (root < 0 || root >= size))
        return tc_api_arg_error(comm, MPI_ERR_ROOT, "MPI_Reduce", "invalid root", root);
    tc_ctx_t *c = reduction_ctx(hot, count, datatype, op, comm, &t, &fb, &why);
    if (!c || fb) goto native;
    size = c->map.size;
    rank = c->map.rank;
    if (root < 0 || root >= size) {
        why = "invalid root";
        goto native;
    }
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
    if (tc_ctx_flat(c, tc_span(&t, (size_t)count), c->cfg->reduce_flat_max)) {
        c->reduce_flat++;
        why = "small vector across nodes (TOPOCOLL_REDUCE_FLAT_MAX)";
        goto native;
    }
    tc_xt_call_t xt;
    int rc;
    if (tc_xtune_begin(c, TC_XT_REDUCE, tc_span(&t, (size_t)count), &xt) == TC_XT_NATIVE) {
        c->reduce_flat++;
        tc_api_why_native("MPI_Reduce",
                          "the native was faster at this size (measured, TOPOCOLL_XTUNE)");
        rc = native_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    tc_nb_drain(c);
    tc_reduce_t r;
    rc = tc_reduce_init(&r, c, in, recvbuf, (size_t)count, &t, root, 1);
    if (rc == MPI_SUCCESS) rc = drive(c, &r, reduce_work);
    tc_reduce_fini(&r);
    tc_xtune_end(&xt);
    c->reduce_calls++;
    if (rc != MPI_SUCCESS) call_failed(c, comm, rc, "MPI_Reduce");
    return rc;
native:
    if (c && fb) c->reduce_fallbacks++;
    tc_api_why_native("MPI_Reduce", why);
    return native_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

/* 1 if @count elements of @dt are one contiguous run of @bytes bytes
 * starting at buf + *lb_out. */
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

int tc_api_allgather_screen(const char *call, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, size_t *block, tc_ctx_t **ctx, int *is_fallback,
                            const char **why)
{
    int inter = 0, size, rsize, ssize = 0, in_place = sendbuf == MPI_IN_PLACE;
    *ctx = NULL;
    *is_fallback = 0;
    *why = "argument the native MPI will check";
    /* (Open MPI 4.1.4's PMPI_Allgather dereferences MPI_COMM_NULL: seen) */
    if (comm == MPI_COMM_NULL)
        return tc_api_arg_error(comm, MPI_ERR_COMM, call, "invalid communicator MPI_COMM_NULL", 0);
    if (recvcount < 0 || (!in_place && sendcount < 0))
        return tc_api_arg_error(comm, MPI_ERR_COUNT, call, "negative count",
                                recvcount < 0 ? recvcount : sendcount);
    if (recvtype == MPI_DATATYPE_NULL || (!in_place && sendtype == MPI_DATATYPE_NULL))
        return tc_api_arg_error(comm, MPI_ERR_TYPE, call, "datatype is MPI_DATATYPE_NULL", 0);
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        *why = "intercommunicator";
        return MPI_SUCCESS;
    }
    if (PMPI_Type_size(recvtype, &rsize) != MPI_SUCCESS) return MPI_SUCCESS;
    if (!in_place && PMPI_Type_size(sendtype, &ssize) != MPI_SUCCESS) return MPI_SUCCESS;
    *block = (size_t)rsize * (size_t)recvcount;
    if (!in_place && (size_t)ssize * (size_t)sendcount != *block)
        return MPI_SUCCESS; /* signature mismatch */
    PMPI_Comm_size(comm, &size);
    if (*block == 0 || size == 1 || *block > (size_t)INT_MAX) {
        *why = "nothing to exchange or block too large";
        return MPI_SUCCESS;
    }
    tc_ctx_t *c = tc_ctx_get(comm, *block);
    if (!c) return MPI_SUCCESS;
    if (c->cold) {
        *why = "context not built yet (TOPOCOLL_COMM_LAZY)";
        return MPI_SUCCESS;
    } /* *ctx NULL: native */
    *is_fallback = 1;
    if (!c->enabled) {
        *why = "topocoll disabled on this communicator";
        *ctx = c;
        return MPI_SUCCESS;
    }
    if (tc_allgather_alg(c, *block) != TC_AG_USE_CICO && !c->all_sc) {
        *why = "single copy unavailable";
        *ctx = c;
        return MPI_SUCCESS;
    }
    *is_fallback = 0;
    *ctx = c;
    return MPI_SUCCESS;
}

int topocoll_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int size, rank, fb, rc;
    const char *why;
    tc_ctx_t *c;
    size_t block = 0;
    int in_place = sendbuf == MPI_IN_PLACE;
    if ((rc = tc_api_allgather_screen("MPI_Allgather", sendbuf, sendcount, sendtype, recvcount,
                                      recvtype, comm, &block, &c, &fb, &why)) != MPI_SUCCESS)
        return rc;
    if (!c || fb) goto native;
    if (tc_ctx_flat(c, block, c->cfg->allgather_flat_max)) {
        c->allgather_flat++;
        why = "small blocks across nodes (TOPOCOLL_ALLGATHER_FLAT_MAX)";
        goto native;
    }
    tc_xt_call_t xt;
    if (tc_xtune_begin(c, TC_XT_ALLGATHER, block, &xt) == TC_XT_NATIVE) {
        c->allgather_flat++;
        tc_api_why_native("MPI_Allgather",
                          "the native was faster at this size (measured, TOPOCOLL_XTUNE)");
        rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);

    /* Contiguous buffers are used in place; others are packed (every rank
     * takes this same path whatever its own datatypes). */
    MPI_Aint rlb, slb, rext, rlb2;
    PMPI_Type_get_extent(recvtype, &rlb2, &rext);
    int rcontig = tc_api_contiguous(recvcount, recvtype, block, &rlb) &&
                  (size_t)rext * (size_t)recvcount == block;
    int scontig = in_place || tc_api_contiguous(sendcount, sendtype, block, &slb);
    char *rtmp = NULL, *stmp = NULL;
    char *out = rcontig ? (char *)recvbuf + rlb : NULL;
    /* (no memory: a failure on this rank, not the native path, which the
     * other ranks are not taking) */
    if (!rcontig && !(rtmp = malloc(block * (size_t)size))) {
        rc = MPI_ERR_NO_MEM;
        goto done;
    }
    if (!rcontig) out = rtmp;
    const char *in;
    if (in_place) {
        if (rcontig) {
            in = out + (size_t)rank * block;
        } else { /* our block, out of recvbuf's layout, into the packed buffer */
            int pos = 0;
            PMPI_Pack((char *)recvbuf + (MPI_Aint)rank * recvcount * rext, recvcount, recvtype,
                      out + (size_t)rank * block, (int)block, &pos, comm);
            in = out + (size_t)rank * block;
        }
    } else if (scontig) {
        in = (const char *)sendbuf + slb;
    } else {
        int pos = 0;
        if (!(stmp = malloc(block))) {
            rc = MPI_ERR_NO_MEM;
            goto done;
        }
        PMPI_Pack(sendbuf, sendcount, sendtype, stmp, (int)block, &pos, comm);
        in = stmp;
    }
    tc_nb_drain(c);
    tc_allgather_t g;
    rc = tc_allgather_init(&g, c, in, out, block);
    if (rc == MPI_SUCCESS) rc = drive(c, &g, allgather_work);
    tc_allgather_fini(&g);
    if (rc == MPI_SUCCESS && !rcontig) {
        int pos = 0;
        PMPI_Unpack(rtmp, (int)(block * (size_t)size), &pos, recvbuf, recvcount * size, recvtype,
                    comm);
    }
done:
    free(rtmp);
    free(stmp);
    tc_xtune_end(&xt);
    c->allgather_calls++;
    if (rc != MPI_SUCCESS) call_failed(c, comm, rc, "MPI_Allgather");
    return rc;
native:
    if (c && fb) c->allgather_fallbacks++;
    tc_api_why_native("MPI_Allgather", why);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
