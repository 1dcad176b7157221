/*
 * api/persist_api -- the persistent collectives of the public API
 * (topocoll.h; MPI 4.0 section 6.13), one per collective of the registry
 * (base/colls.def), and MPI_Start, MPI_Startall, MPI_Request_free.
 *
 * topocoll_<coll>_init runs the nonblocking call in nbc/'s persistent
 * mode: the same screening and plan, so the same answer on every rank;
 * where that answer is topocoll's, the operation becomes a persistent
 * request (nbc/persist); where it is the native MPI's (or the buffers
 * need packing at each start), the native MPI makes its own persistent
 * request (MPI_<Coll>_init in MPICH 4, MPIX_<Coll>_init in Open MPI's
 * mpi-ext.h), and MPI_Start & co. pass it through.
 *
 * Where the native answer is only because the communicator's context is
 * not built yet (TOPOCOLL_COMM_LAZY: an init right after the
 * communicator's creation, the usual place), the request is deferred
 * (nbc/persist tc_nb_persist_defer): the native nonblocking call runs its
 * starts until the context is built, then the init is made again from the
 * arguments kept here, at the same start on every process.  Kept: the
 * buffers and arrays (MPI 4.0 section 6.13: the application leaves them
 * alone until it frees the request), a duplicate of each significant
 * derived datatype (it may free its own).  Not deferred: MPI_Alltoallw
 * (a datatype per rank) and user-defined reduction operations (their
 * handles may go after the init); on every process alike, since the op
 * is the same everywhere.
 *
 * Owns the kept arguments.  May call: nbc/, coll/ctx (the context's
 * state), base/ (the registry's shapes), PMPI.
 */
#include "topocoll.h"

#include "../base/config.h"
#include "../base/log.h"
#include "../base/shapes.h"
#include "../coll/ctx.h"
#include "../nbc/nbc.h"

#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define NATIVE_INIT(Name, ...) PMPIX_##Name##_init(__VA_ARGS__)
#elif MPI_VERSION >= 4
#define NATIVE_INIT(Name, ...) PMPI_##Name##_init(__VA_ARGS__)
#else /* an MPI without persistent collectives: topocoll's or none */
#define NATIVE_INIT(Name, ...) MPI_ERR_UNSUPPORTED_OPERATION
#endif

/* ---- A deferred request's arguments ---------------------------------------------- */

/* Every shape's parameters but MPI_Alltoallw's, by their names in
 * base/shapes.h: a shape's are set, the others zero. */
typedef struct {
    void *buffer, *recvbuf;
    const void *sendbuf;
    int count, sendcount, recvcount, root;
    const int *sendcounts, *recvcounts, *displs, *sdispls, *rdispls;
    MPI_Datatype datatype, sendtype, recvtype;
    MPI_Op op;
    MPI_Comm comm;
    int dups; /* bit k: the k-th of datatype, sendtype, recvtype is our duplicate */
} kept_t;

/* The parameters of each shape, for KEEP1 */
#define F_BCAST(X)   X(buffer) X(count) X(datatype) X(root) X(comm)
#define F_BARRIER(X) X(comm)
#define F_REDUCE(X)  X(sendbuf) X(recvbuf) X(count) X(datatype) X(op) X(root) X(comm)
#define F_ALLRED(X)  X(sendbuf) X(recvbuf) X(count) X(datatype) X(op) X(comm)
#define F_ALLG(X)    X(sendbuf) X(sendcount) X(sendtype) X(recvbuf) X(recvcount) X(recvtype) X(comm)
#define F_ROOTG(X)   F_ALLG(X) X(root)
#define F_GATHERV(X) \
    X(sendbuf)       \
    X(sendcount) X(sendtype) X(recvbuf) X(recvcounts) X(displs) X(recvtype) X(root) X(comm)
#define F_SCATTERV(X) \
    X(sendbuf)        \
    X(sendcounts) X(displs) X(sendtype) X(recvbuf) X(recvcount) X(recvtype) X(root) X(comm)
#define F_ALLGV(X) \
    X(sendbuf) X(sendcount) X(sendtype) X(recvbuf) X(recvcounts) X(displs) X(recvtype) X(comm)
#define F_REDSCAT(X) X(sendbuf) X(recvbuf) X(recvcounts) X(datatype) X(op) X(comm)
#define F_ALLTOALLV(X) \
    X(sendbuf)         \
    X(sendcounts) X(sdispls) X(sendtype) X(recvbuf) X(recvcounts) X(rdispls) X(recvtype) X(comm)
#define F_ALLTOALLW(X) /* (not deferred) */
#define KEEP1(f)       k->f = f;

/* The kept parameters as the locals a shape's S_<SHAPE>_ARGS names. */
#define LOAD_ALL(k)                                                                                \
    void *buffer = (k)->buffer, *recvbuf = (k)->recvbuf;                                           \
    const void *sendbuf = (k)->sendbuf;                                                            \
    int count = (k)->count, sendcount = (k)->sendcount, recvcount = (k)->recvcount,                \
        root = (k)->root;                                                                          \
    const int *sendcounts = (k)->sendcounts, *recvcounts = (k)->recvcounts, *displs = (k)->displs, \
              *sdispls = (k)->sdispls, *rdispls = (k)->rdispls;                                    \
    MPI_Datatype datatype = (k)->datatype, sendtype = (k)->sendtype, recvtype = (k)->recvtype;     \
    const MPI_Datatype *sendtypes = NULL, *recvtypes = NULL; /* (Alltoallw: never run) */          \
    MPI_Op op = (k)->op;                                                                           \
    MPI_Comm comm = (k)->comm;                                                                     \
    (void)buffer, (void)recvbuf, (void)sendbuf, (void)count, (void)sendcount, (void)recvcount,     \
        (void)root, (void)sendcounts, (void)recvcounts, (void)displs, (void)sdispls,               \
        (void)rdispls, (void)datatype, (void)sendtype, (void)recvtype, (void)op, (void)comm,       \
        (void)sendtypes, (void)recvtypes

/* 1 if @op is one of MPI's predefined reduction operations (or none: a
 * shape without one). */
static int predefined_op(MPI_Op op)
{
    static const MPI_Op ops[] = { MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                  MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                  MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP };
    if (op == MPI_OP_NULL) return 1;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (op == ops[i]) return 1;
    return 0;
}

/* Which of the block exchanges' datatypes this rank's call reads (MPI 4.0
 * sections 6.5-6.8: the root's side of Gather(v) and Scatter(v), the
 * other side but with MPI_IN_PLACE); the reductions' and Bcast's always. */
static void significant(int id, const kept_t *k, int rank, int *send, int *recv)
{
    const int root = rank == k->root;
    const int gather = id == TOPOCOLL_COLL_GATHER || id == TOPOCOLL_COLL_GATHERV,
              scatter = id == TOPOCOLL_COLL_SCATTER || id == TOPOCOLL_COLL_SCATTERV;
    *send = gather    ? !(root && k->sendbuf == MPI_IN_PLACE)
            : scatter ? root
                      : k->sendbuf != MPI_IN_PLACE;
    *recv = gather ? root : scatter ? !(root && k->recvbuf == MPI_IN_PLACE) : 1;
}

/* A duplicate of derived datatype *@dt (bit @bit of k->dups), which the
 * application may free after the init; a named one stays. */
static int keep_type(kept_t *k, MPI_Datatype *dt, int bit)
{
    int ni, na, nd, comb;
    if (*dt == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(*dt, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb == MPI_COMBINER_NAMED)
        return MPI_SUCCESS;
    int rc = PMPI_Type_dup(*dt, dt);
    if (rc == MPI_SUCCESS) k->dups |= 1 << bit;
    return rc;
}

static void kept_release(void *p)
{
    kept_t *k = p;
    MPI_Datatype *t[3] = { &k->datatype, &k->sendtype, &k->recvtype };
    for (int i = 0; i < 3; i++)
        if (k->dups >> i & 1) PMPI_Type_free(t[i]);
    free(k);
}

/* Defer native persistent request *@request of collective @id (its kept
 * arguments @k, ours from here: freed on every path) if its communicator's
 * context is not built yet: *@request becomes the deferred request's
 * handle.  MPI_SUCCESS (deferred or not) or an MPI error code. */
static int defer(int id, const char *call, kept_t *k, int (*redo)(void *, MPI_Request *),
                 int (*native_start)(void *, MPI_Request *), MPI_Request *request)
{
    tc_ctx_t *c = tc_ctx_lookup(k->comm);
    int rank = 0, send, recv, rc = MPI_SUCCESS;
    if (!c || !c->cold || c->cfg->disable || id == TOPOCOLL_COLL_ALLTOALLW ||
        !predefined_op(k->op)) {
        free(k);
        tc_nb_persist_native(*request);
        return MPI_SUCCESS;
    }
    PMPI_Comm_rank(k->comm, &rank);
    significant(id, k, rank, &send, &recv);
    rc = keep_type(k, &k->datatype, 0);
    if (rc == MPI_SUCCESS && send) rc = keep_type(k, &k->sendtype, 1);
    if (rc == MPI_SUCCESS && recv) rc = keep_type(k, &k->recvtype, 2);
    tc_nb_redo_t r = { redo, native_start, kept_release, k };
    if (rc == MPI_SUCCESS) rc = tc_nb_persist_defer(c, k->comm, call, *request, &r, request);
    if (rc != MPI_SUCCESS) {
        MPI_Comm comm = k->comm;
        kept_release(k);
        PMPI_Request_free(request);
        tc_warn("%s: its arguments could not be kept (no memory, or a datatype not duplicated)",
                call);
        PMPI_Comm_call_errhandler(comm, rc);
    }
    return rc;
}

/* ---- The bindings ------------------------------------------------------------------ */

#define TC_COLL(ID, Name, lower, SHAPE, ...)                                                    \
    static int native_##lower(void *p, MPI_Request *out)                                        \
    {                                                                                           \
        LOAD_ALL((kept_t *)p);                                                                  \
        return PMPI_I##lower(S_##SHAPE##_ARGS, out);                                            \
    }                                                                                           \
    static int redo_##lower(void *p, MPI_Request *out)                                          \
    {                                                                                           \
        LOAD_ALL((kept_t *)p);                                                                  \
        tc_nb_persist_next(1);                                                                  \
        int rc = topocoll_i##lower(S_##SHAPE##_ARGS, out);                                      \
        tc_nb_persist_next(0);                                                                  \
        if (rc == MPI_SUCCESS) tc_nb_persist_comm(*out, comm);                                  \
        return rc;                                                                              \
    }                                                                                           \
    int topocoll_##lower##_init(S_##SHAPE##_C, MPI_Info info, MPI_Request *request)             \
    {                                                                                           \
        int rc = TC_NB_PERSIST_NATIVE;                                                          \
        if (request && tc_config_get()->persist) { /* (NULL: the native's error) */             \
            tc_nb_persist_next(1);                                                              \
            rc = topocoll_i##lower(S_##SHAPE##_ARGS, request);                                  \
            tc_nb_persist_next(0);                                                              \
        }                                                                                       \
        if (rc == MPI_SUCCESS) tc_nb_persist_comm(*request, comm);                              \
        if (rc != TC_NB_PERSIST_NATIVE) return rc;                                              \
        rc = NATIVE_INIT(Name, S_##SHAPE##_ARGS, info, request);                                \
        if (rc != MPI_SUCCESS) return rc;                                                       \
        kept_t *k = tc_config_get()->persist ? calloc(1, sizeof(*k)) : NULL;                    \
        if (!k) {                                                                               \
            tc_nb_persist_native(*request);                                                     \
            return MPI_SUCCESS;                                                                 \
        }                                                                                       \
        k->datatype = k->sendtype = k->recvtype = MPI_DATATYPE_NULL;                            \
        k->op = MPI_OP_NULL;                                                                    \
        F_##SHAPE(KEEP1);                                                                       \
        k->comm = comm;                                                                         \
        return defer(TOPOCOLL_COLL_##ID, "MPI_" #Name "_init", k, redo_##lower, native_##lower, \
                     request);                                                                  \
    }
#include "../base/colls.def"
#undef TC_COLL

int topocoll_start(MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (!request || !tc_nb_pstart(*request, &rc, &comm)) return PMPI_Start(request);
    /* (said why: nbc/persist; MPI_COMM_NULL: raised already) */
    if (rc != MPI_SUCCESS && comm != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

int topocoll_startall(int count, MPI_Request requests[])
{
    /* one by one: each start is local, in the order given */
    for (int i = 0; i < count && requests; i++) {
        int rc = topocoll_start(&requests[i]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return count > 0 && !requests ? PMPI_Startall(count, requests) : MPI_SUCCESS;
}

int topocoll_request_free(MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    if (tc_nb_pfree(request, &rc)) return rc;
    return PMPI_Request_free(request);
}
