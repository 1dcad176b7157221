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
 * Owns nothing beyond the calls.  May call: nbc/, base/ (the registry's
 * shapes), PMPI.
 */
#include "topocoll.h"

#include "../base/shapes.h"
#include "../nbc/nbc.h"

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

#define TC_COLL(ID, Name, lower, SHAPE, ...)                                        \
    int topocoll_##lower##_init(S_##SHAPE##_C, MPI_Info info, MPI_Request *request) \
    {                                                                               \
        int rc = TC_NB_PERSIST_NATIVE;                                              \
        if (request) { /* (NULL: the native MPI's error) */                         \
            tc_nb_persist_next(1);                                                  \
            rc = topocoll_i##lower(S_##SHAPE##_ARGS, request);                      \
            tc_nb_persist_next(0);                                                  \
        }                                                                           \
        if (rc == MPI_SUCCESS) tc_nb_persist_comm(*request, comm);                  \
        if (rc != TC_NB_PERSIST_NATIVE) return rc;                                  \
        rc = NATIVE_INIT(Name, S_##SHAPE##_ARGS, info, request);                    \
        if (rc == MPI_SUCCESS) tc_nb_persist_native(*request);                      \
        return rc;                                                                  \
    }
#include "../base/colls.def"
#undef TC_COLL

int topocoll_start(MPI_Request *request)
{
    int rc = MPI_SUCCESS;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (!request || !tc_nb_pstart(*request, &rc, &comm)) return PMPI_Start(request);
    if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc); /* (said why: nbc/persist) */
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
