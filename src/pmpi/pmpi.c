/*
 * pmpi/pmpi -- MPI interposition (libtopocoll_pmpi.so): defines the MPI_*
 * collectives topocoll implements and routes them to the native API, which
 * falls back to PMPI_* itself.  Preload it (LD_PRELOAD) or link it before
 * the MPI library.  May call: topocoll.h only.
 */
#include "topocoll.h"

/* Every function defined below is an MPI_* function it interposes: exported
 * (the library is built with -fvisibility=hidden). */
#pragma GCC visibility push(default)

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return topocoll_bcast(buffer, count, datatype, root, comm);
}

int MPI_Barrier(MPI_Comm comm) { return topocoll_barrier(comm); }

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    return topocoll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return topocoll_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return topocoll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return topocoll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return topocoll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return topocoll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return topocoll_igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return topocoll_iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                             request);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return topocoll_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    return topocoll_scan(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    return topocoll_exscan(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    return topocoll_iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

/* ---- Nonblocking collectives and the completion calls (they progress ours) --- */

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    return topocoll_ibcast(buffer, count, datatype, root, comm, request);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) { return topocoll_ibarrier(comm, request); }

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    return topocoll_ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    return topocoll_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return topocoll_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    return topocoll_iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

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
        topocoll_progress_init(got);
        if (provided) *provided = got < required ? got : required;
    }
    return rc;
}

int MPI_Finalize(void)
{
    topocoll_progress_fini();
    return PMPI_Finalize();
}

#pragma GCC visibility pop
