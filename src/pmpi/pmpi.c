/*
 * pmpi/pmpi -- MPI interposition (libtopocoll_pmpi.so): defines the MPI_*
 * collectives topocoll implements and routes them to the native API, which
 * falls back to PMPI_* itself.  Preload it (LD_PRELOAD) or link it before
 * the MPI library.  The collectives are the registry's (base/colls.def);
 * Open MPI's Fortran entry points are in fortran.c.  May call: topocoll.h,
 * the registry (data only).
 */
#include "topocoll.h"

#include "shapes.h"

#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#include <time.h>

/* Every function defined below is an MPI_* function it interposes: exported
 * (the library is built with -fvisibility=hidden). */
#pragma GCC visibility push(default)

/* The collectives of the registry (base/colls.def), blocking and
 * nonblocking, in the shapes of pmpi/shapes.h.  With the report on
 * (TOPOCOLL_REPORT=1, read once in MPI_Init) each call is timed and
 * counted. */
static int g_report;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define REPORTED(ID, SHAPE, CALL)                                                     \
    do {                                                                              \
        if (!g_report) return CALL;                                                   \
        double t0_ = now();                                                           \
        int rc_ = CALL;                                                               \
        topocoll_report_call(TOPOCOLL_COLL_##ID, S_##SHAPE##_BYTES(ID), now() - t0_); \
        return rc_;                                                                   \
    } while (0)

#define TC_COLL(ID, Name, lower, SHAPE, ...)                                                   \
    int MPI_##Name(S_##SHAPE##_C) { REPORTED(ID, SHAPE, topocoll_##lower(S_##SHAPE##_ARGS)); } \
    int MPI_I##lower(S_##SHAPE##_C, MPI_Request *request)                                      \
    {                                                                                          \
        REPORTED(ID, SHAPE, topocoll_i##lower(S_##SHAPE##_ARGS, request));                     \
    }
#include "../base/colls.def"
#undef TC_COLL

/* ---- Persistent collectives (MPI 4.0 section 6.13): MPI_<Coll>_init in an
 * MPI 4 library (MPICH), MPIX_<Coll>_init in Open MPI 4.1's mpi-ext.h;
 * MPI_Start & co. start, and the completion calls complete, topocoll's
 * persistent requests and native ones alike. -------------------------------- */
#if defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define TC_COLL(ID, Name, lower, SHAPE, ...)                                   \
    int MPIX_##Name##_init(S_##SHAPE##_C, MPI_Info info, MPI_Request *request) \
    {                                                                          \
        return topocoll_##lower##_init(S_##SHAPE##_ARGS, info, request);       \
    }
#include "../base/colls.def"
#undef TC_COLL
#elif !defined(OPEN_MPI) && MPI_VERSION >= 4
#define TC_COLL(ID, Name, lower, SHAPE, ...)                                  \
    int MPI_##Name##_init(S_##SHAPE##_C, MPI_Info info, MPI_Request *request) \
    {                                                                         \
        return topocoll_##lower##_init(S_##SHAPE##_ARGS, info, request);      \
    }
#include "../base/colls.def"
#undef TC_COLL
#endif

int MPI_Start(MPI_Request *request) { return topocoll_start(request); }
int MPI_Startall(int count, MPI_Request requests[]) { return topocoll_startall(count, requests); }
int MPI_Request_free(MPI_Request *request) { return topocoll_request_free(request); }

/* ---- The completion calls (they progress topocoll's nonblocking operations) -- */

int MPI_Wait(MPI_Request *request, MPI_Status *status) { return topocoll_wait(request, status); }
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return topocoll_test(request, flag, status);
}
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    return topocoll_waitall(count, requests, statuses);
}
int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    return topocoll_testall(count, requests, flag, statuses);
}
int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    return topocoll_waitany(count, requests, index, status);
}
int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    return topocoll_testany(count, requests, index, flag, status);
}
int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    return topocoll_waitsome(incount, requests, outcount, indices, statuses);
}
int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    return topocoll_testsome(incount, requests, outcount, indices, statuses);
}
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    return topocoll_request_get_status(request, flag, status);
}

/* ---- Hardware-topology communicators and the set-up hook ------------------- */

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    return topocoll_comm_split_type(comm, split_type, key, info, newcomm);
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    return topocoll_comm_get_info(comm, info_used);
}

/* Every process's location is exchanged once, while every process is in
 * MPI_Init: later queries on any communicator are then local. */
/* With communication cores, MPI is asked for MPI_THREAD_MULTIPLE (the
 * progress thread calls it beside the application); the application is
 * told the level it asked for (at most what MPI gave). */
int MPI_Init(int *argc, char ***argv)
{
    int provided = MPI_THREAD_SINGLE, level = topocoll_progress_thread_level(MPI_THREAD_SINGLE);
    int rc = level == MPI_THREAD_SINGLE ? PMPI_Init(argc, argv)
                                        : PMPI_Init_thread(argc, argv, level, &provided);
    if (rc == MPI_SUCCESS) {
        topocoll_init_world();
        g_report = topocoll_report_enabled(); /* before any progress thread */
        if (level != MPI_THREAD_SINGLE) topocoll_progress_init(provided);
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int got = required, level = topocoll_progress_thread_level(required);
    int rc = PMPI_Init_thread(argc, argv, level, &got);
    if (rc == MPI_SUCCESS) {
        topocoll_init_world();
        g_report = topocoll_report_enabled();
        topocoll_progress_init(got);
        if (provided) *provided = got < required ? got : required;
    }
    return rc;
}

int MPI_Finalize(void)
{
    topocoll_progress_fini();
    if (g_report) topocoll_report_write(MPI_COMM_WORLD);
    return PMPI_Finalize();
}

#pragma GCC visibility pop
