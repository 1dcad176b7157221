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
#include "../xfer/region.h"
#include "../nbc/nbc.h"
#include "api_int.h"

#include <limits.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

const char *topocoll_strerror(int err)
{
    /* the public codes are the engine's region statuses (asserted below):
     * one string table, base/status's */
    if (err == TOPOCOLL_SUCCESS || (err < 0 && err >= TC_ERR_NOCTX) || err == TOPOCOLL_COPY_PENDING)
        return tc_status_name((tc_status_t)err);
    return "unknown error";
}

int topocoll_comm_attach(MPI_Comm comm)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
    if (!tc_ctx_get(comm, TC_CTX_NOW, 0)) return MPI_ERR_NO_MEM;
    return tc_hier_attach(comm); /* the processes' hierarchy paths, for local queries */
}

/* topocoll_coll_t is the registry's order (base/colls.def), which gives
 * coll/ctx's statistics slots. */
#define TC_COLL(ID, Name, lower, SHAPE, ...) \
    _Static_assert((int)TOPOCOLL_COLL_##ID == TC_STAT_##ID, "topocoll_coll_t: " #ID);
#include "../base/colls.def"
#undef TC_COLL
_Static_assert((int)TOPOCOLL_COLL_COUNT == TC_STATS && TC_STATS <= (int)TOPOCOLL_COLL_MAX,
               "the public collectives are the registry's");

const char *topocoll_coll_name(int coll) { return tc_coll_call(coll); }

/* @c's placement and mechanism into @info (an enabled context). */
static void query_placement(const tc_ctx_t *c, topocoll_comm_info_t *info)
{
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
        info->regions_declared =
            atomic_load_explicit(&c->shm->regions_declared, memory_order_relaxed);
    } else {
        snprintf(info->mechanism_why, sizeof(info->mechanism_why),
                 "one process on the node: no intra-node copy");
    }
}

int topocoll_comm_query(MPI_Comm comm, topocoll_comm_info_t *info)
{
    tc_ctx_t *c = tc_ctx_lookup(comm);
    if (!info || info->struct_size < offsetof(topocoll_comm_info_t, mechanism_why))
        return TOPOCOLL_ERR_INVAL;
    if (!c) return TOPOCOLL_ERR_NOCTX;
    topocoll_comm_info_t all;
    memset(&all, 0, sizeof(all));
    all.struct_size = info->struct_size;
    all.enabled = c->enabled;
    PMPI_Comm_rank(comm, &all.rank);
    PMPI_Comm_size(comm, &all.size);
    for (int k = 0; k < TC_STATS; k++) {
        all.coll[k].calls = c->stat[k].calls;
        all.coll[k].nonblocking = c->stat[k].nonblocking;
        all.coll[k].fallbacks = c->stat[k].fallbacks;
        all.coll[k].native = c->stat[k].native;
        all.nb_calls += c->stat[k].nonblocking;
    }
    all.bytes_bcast_net = c->bytes_bcast_net;
    all.built = !c->cold;
    all.lazy_calls = c->cold_calls;
    all.reused = c->reused;
    if (!c->enabled)
        snprintf(all.mechanism_why, sizeof(all.mechanism_why), "%s",
                 c->cfg->disable ? "TOPOCOLL_DISABLE=1"
                 : c->cold       ? "not built yet: native MPI collectives (TOPOCOLL_COMM_LAZY)"
                                 : "set-up failed: native MPI collectives");
    else
        query_placement(c, &all);
    /* only what the caller's struct holds (an older, shorter layout) */
    memcpy(info, &all, info->struct_size < sizeof(all) ? info->struct_size : sizeof(all));
    return MPI_SUCCESS;
}

/* The public code of an engine status (base/status): the region errors
 * keep their values (an asynchronous copy's status word is written below
 * the API and read by the application), anything else is the kernel's or
 * the context's. */
_Static_assert(TC_ERR_INVAL == TOPOCOLL_ERR_INVAL && TC_ERR_BOUNDS == TOPOCOLL_ERR_BOUNDS &&
                   TC_ERR_RIGHTS == TOPOCOLL_ERR_RIGHTS && TC_ERR_STALE == TOPOCOLL_ERR_STALE &&
                   TC_ERR_NOSUPPORT == TOPOCOLL_ERR_NOSUPPORT &&
                   TC_ERR_NOSPACE == TOPOCOLL_ERR_NOSPACE && TC_ERR_SYS == TOPOCOLL_ERR_SYS &&
                   TC_ERR_NOCTX == TOPOCOLL_ERR_NOCTX && TC_COPY_PENDING == TOPOCOLL_COPY_PENDING,
               "the region errors are the public codes");
static long long public_code(long long st)
{
    if (st >= 0) return st; /* bytes, or TC_OK */
    switch ((int)st) {
    case TC_ERR_INVAL:
    case TC_ERR_BOUNDS:
    case TC_ERR_RIGHTS:
    case TC_ERR_STALE:
    case TC_ERR_NOSUPPORT:
    case TC_ERR_NOSPACE:
    case TC_ERR_SYS:
    case TC_ERR_NOCTX:
    case TC_COPY_PENDING: return st;
    default: return TOPOCOLL_ERR_SYS; /* no memory, MPI: the system's */
    }
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
    return s ? (int)public_code(tc_region_create(s, iov, niov, rights, cookie)) : err;
}

int topocoll_region_destroy(MPI_Comm comm, topocoll_cookie_t cookie)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    return s ? (int)public_code(tc_region_destroy(s, cookie)) : err;
}

long long topocoll_copy(MPI_Comm comm, topocoll_cookie_t cookie, size_t offset,
                        const struct iovec *local, int nlocal, int direction)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    size_t moved = 0;
    if (!s) return err;
    tc_status_t st = tc_region_copy(s, cookie, offset, local, nlocal, direction, &moved);
    return st == TC_OK ? (long long)moved : public_code(st);
}

long long topocoll_region_copy(MPI_Comm comm, topocoll_cookie_t src, size_t src_offset,
                               topocoll_cookie_t dst, size_t dst_offset, size_t length)
{
    int err;
    tc_shm_t *s = shm_of(comm, &err);
    if (!s) return err;
    tc_status_t st = tc_region_copy2(s, src, src_offset, dst, dst_offset, length);
    return st == TC_OK ? (long long)length : public_code(st);
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
    return (int)public_code(err);
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
    return (int)public_code(err);
}

long long topocoll_copy_poll(const long long *status)
{
    if (!status) return TOPOCOLL_ERR_INVAL;
    long long r = tc_async_status(status);
    if (r != TOPOCOLL_COPY_PENDING) return public_code(r);
    tc_nb_progress();
    return public_code(tc_async_status(status));
}

/* ---- Blocking collectives: screen (api/screen), then run or pass on --------- */

int topocoll_barrier(MPI_Comm comm)
{
    int size, inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return PMPI_Barrier(comm);
    if (size == 1) return MPI_SUCCESS;
    tc_api_call_t p = { .ctx = tc_ctx_get(comm, 0, 0) };
    tc_ctx_t *c = p.ctx;
    if (!c || !c->enabled) return PMPI_Barrier(comm);
    if (tc_api_choose(TC_API_RUN, &p, TC_CI_BARRIER, NULL) == TC_API_NATIVE) {
        tc_api_native("MPI_Barrier", &p, TC_STAT_BARRIER);
        return PMPI_Barrier(comm);
    }
    tc_nb_drain(c); /* this communicator's nonblocking operations come first */
    /* With one process on every node the machine below degenerates by
     * itself to the leaders' (native) barrier over the whole group. */
    tc_coll_args_t a = { .blocking = 1 };
    return tc_api_finish(c, comm, tc_api_run(c, TC_COLL_BARRIER, &a), "MPI_Barrier");
}

int topocoll_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    tc_api_call_t p;
    tc_xt_call_t xt;
    int rc = tc_api_screen_bcast("MPI_Bcast", count, datatype, root, comm, &p);
    if (rc == TC_API_NOTHING) return MPI_SUCCESS;
    rc = tc_api_choose(rc, &p, TC_CI_BCAST, &xt);
    if (rc == TC_API_NATIVE) {
        tc_api_native("MPI_Bcast", &p, TC_STAT_BCAST);
        rc = PMPI_Bcast(buffer, count, datatype, root, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *c = p.ctx;
    tc_nb_drain(c);
    char *tmp;
    tc_coll_args_t a = { .n = p.bytes, .root = root, .blocking = 1, .alt = xt.method == TC_XT_ALT };
    tc_status_t st = tc_api_bcast_buffer(&p, buffer, count, datatype, root, comm, &a.out, &tmp);
    if (st == TC_OK) st = tc_api_run(c, TC_COLL_BCAST, &a);
    if (st == TC_OK && tmp && c->map.rank != root) {
        int pos = 0;
        PMPI_Unpack(tmp, (int)p.bytes, &pos, buffer, count, datatype, comm);
    }
    free(tmp);
    tc_xtune_end(&xt);
    return tc_api_finish(c, comm, st, "MPI_Bcast");
}

int topocoll_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm)
{
    tc_api_call_t p;
    tc_xt_call_t xt;
    int rc =
        tc_api_screen_allreduce("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm, &p);
    if (rc == TC_API_RUN && !tc_api_single_copy_ok(&p)) rc = TC_API_NATIVE;
    rc = tc_api_choose(rc, &p, TC_CI_ALLREDUCE, &xt);
    if (rc == TC_API_NATIVE) {
        tc_api_native("MPI_Allreduce", &p, TC_STAT_ALLREDUCE);
        rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *c = p.ctx;
    tc_nb_drain(c);
    tc_coll_args_t a = { .in = p.in, .out = recvbuf, .n = (size_t)count, .t = &p.t, .blocking = 1 };
    tc_status_t st = tc_api_run(c, TC_COLL_ALLREDUCE, &a);
    tc_xtune_end(&xt);
    return tc_api_finish(c, comm, st, "MPI_Allreduce");
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
    tc_api_call_t p;
    tc_xt_call_t xt;
    int rc =
        tc_api_screen_reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, &p);
    rc = tc_api_choose(rc, &p, TC_CI_REDUCE, &xt);
    if (rc == TC_API_NATIVE) {
        tc_api_native("MPI_Reduce", &p, TC_STAT_REDUCE);
        rc = native_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *c = p.ctx;
    tc_nb_drain(c);
    tc_coll_args_t a = { .in = p.in,
                         .out = recvbuf,
                         .n = (size_t)count,
                         .t = &p.t,
                         .root = root,
                         .blocking = 1,
                         .alt = xt.method == TC_XT_ALT };
    tc_status_t st = tc_api_run(c, TC_COLL_REDUCE, &a);
    tc_xtune_end(&xt);
    return tc_api_finish(c, comm, st, "MPI_Reduce");
}

int topocoll_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    tc_api_call_t p;
    tc_xt_call_t xt;
    int rc = tc_api_screen_allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvcount,
                                     recvtype, comm, &p);
    rc = tc_api_choose(rc, &p, TC_CI_ALLGATHER, &xt);
    if (rc == TC_API_NATIVE) {
        tc_api_native("MPI_Allgather", &p, TC_STAT_ALLGATHER);
        rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
        tc_xtune_end(&xt);
        return rc;
    }
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *c = p.ctx;
    char *tmp[2];
    tc_coll_args_t a = { .n = p.bytes, .blocking = 1 };
    char *out;
    tc_status_t st = tc_api_allgather_buffers(&p, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                              recvtype, comm, &a.in, &out, tmp);
    a.out = out;
    if (st == TC_OK) {
        tc_nb_drain(c);
        st = tc_api_run(c, TC_COLL_ALLGATHER, &a);
    }
    if (st == TC_OK && tmp[0]) {
        int pos = 0, size = c->map.size;
        PMPI_Unpack(tmp[0], (int)(p.bytes * (size_t)size), &pos, recvbuf, recvcount * size,
                    recvtype, comm);
    }
    free(tmp[0]);
    free(tmp[1]);
    tc_xtune_end(&xt);
    return tc_api_finish(c, comm, st, "MPI_Allgather");
}

/* Scan and Exscan: the chain (coll/scan) or the node prefix (coll/hscan). */
static int scan_blocking(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, int exclusive)
{
    const char *call = exclusive ? "MPI_Exscan" : "MPI_Scan";
    const int stat = exclusive ? TC_STAT_EXSCAN : TC_STAT_SCAN;
    tc_api_call_t p;
    int rc = tc_api_screen_scan(call, sendbuf, recvbuf, count, datatype, op, comm, &p);
    rc = tc_api_choose(rc, &p, exclusive ? TC_CI_EXSCAN : TC_CI_SCAN, NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native(call, &p, stat);
        return exclusive ? PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm)
                         : PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    }
    if (rc != TC_API_RUN) return rc;
    tc_nb_drain(p.ctx);
    tc_coll_args_t a = { .in = p.in, .out = recvbuf, .n = (size_t)count, .t = &p.t, .blocking = 1 };
    tc_status_t st = tc_api_run(p.ctx, tc_api_scan_kind(&p, exclusive), &a);
    return tc_api_finish(p.ctx, comm, st, call);
}

int topocoll_scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return scan_blocking(sendbuf, recvbuf, count, datatype, op, comm, 0);
}

int topocoll_exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm)
{
    return scan_blocking(sendbuf, recvbuf, count, datatype, op, comm, 1);
}
