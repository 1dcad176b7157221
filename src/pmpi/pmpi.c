/*
 * pmpi/pmpi -- MPI interposition (libtopocoll_pmpi.so): defines the MPI_*
 * collectives topocoll implements and routes them to the native API, which
 * falls back to PMPI_* itself.  Preload it (LD_PRELOAD) or link it before
 * the MPI library.  May call: topocoll.h only.
 */
#include "topocoll.h"

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return topocoll_bcast(buffer, count, datatype, root, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    return topocoll_barrier(comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm)
{
    return topocoll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return topocoll_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    return topocoll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
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
int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) topocoll_init_world();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) topocoll_init_world();
    return rc;
}
