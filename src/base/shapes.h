/*
 * base/shapes -- the C parameter lists of the registry's shapes
 * (base/colls.def: a collective's SHAPE), text only:
 *   S_<SHAPE>_C       the C parameters (MPI 4.0 chapter 6's bindings)
 *   S_<SHAPE>_ARGS    the same, as arguments
 * A nonblocking call adds its request after these, a persistent one its
 * info and request.  Used where a binding is made for every collective of
 * the registry (pmpi/, api/persist_api.c).
 *
 * Owns nothing.  May call: nothing (mpi.h's types).
 */
#ifndef TC_BASE_SHAPES_H
#define TC_BASE_SHAPES_H

#define S_BCAST_C void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm

#define S_BCAST_ARGS buffer, count, datatype, root, comm

#define S_BARRIER_C MPI_Comm comm

#define S_BARRIER_ARGS comm

#define S_REDUCE_C                                                                             \
    const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, \
        MPI_Comm comm

#define S_REDUCE_ARGS sendbuf, recvbuf, count, datatype, op, root, comm

#define S_ALLRED_C \
    const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm

#define S_ALLRED_ARGS sendbuf, recvbuf, count, datatype, op, comm

#define S_ALLG_C                                                                             \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, \
        MPI_Datatype recvtype, MPI_Comm comm

#define S_ALLG_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm

#define S_ROOTG_C                                                                            \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, \
        MPI_Datatype recvtype, int root, MPI_Comm comm

#define S_ROOTG_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm

#define S_GATHERV_C                                                           \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, \
        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm

#define S_GATHERV_ARGS \
    sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm

#define S_SCATTERV_C                                                                        \
    const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, \
        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm

#define S_SCATTERV_ARGS \
    sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm

#define S_ALLGV_C                                                             \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, \
        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm

#define S_ALLGV_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm

#define S_REDSCAT_C                                                                               \
    const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, \
        MPI_Comm comm

#define S_REDSCAT_ARGS sendbuf, recvbuf, recvcounts, datatype, op, comm

#define S_ALLTOALLV_C                                                                        \
    const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, \
        void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,   \
        MPI_Comm comm

#define S_ALLTOALLV_ARGS \
    sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm

#define S_ALLTOALLW_C                                                          \
    const void *sendbuf, const int sendcounts[], const int sdispls[],          \
        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], \
        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm

#define S_ALLTOALLW_ARGS \
    sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm

#endif
