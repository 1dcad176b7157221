/*
 * pmpi/shapes -- the argument lists of the registry's shapes
 * (base/colls.def), for the C interposition (pmpi.c) and Open MPI's
 * Fortran entry points (fortran.c); the C ones (S_<SHAPE>_C, _ARGS) are
 * the registry's (base/shapes.h):
 *   S_<SHAPE>_BYTES   the bytes the report counts (topocoll_report_call)
 *   S_<SHAPE>_F       the Fortran parameters (mpif.h ABI: every argument by
 *                     reference, the error code last, added by the user)
 *   S_<SHAPE>_FARGS   the C call's arguments from them (handles converted,
 *                     Fortran MPI_IN_PLACE / MPI_BOTTOM by fbuf(); arrays of
 *                     datatype handles by ftypes(), fortran.c)
 * A nonblocking call adds its request after these.
 *
 * Owns nothing.  May call: topocoll.h, mpi.h.
 */
#ifndef TC_PMPI_SHAPES_H
#define TC_PMPI_SHAPES_H

#include "topocoll.h"

#include "../base/shapes.h"

/* @count elements of @dt in bytes (0 for a bad count or datatype: the call
 * reports the error). */
static inline size_t tc_pmpi_bytes(int count, MPI_Datatype dt)
{
    int size = 0;
    if (count <= 0 || dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS) return 0;
    return (size_t)count * (size_t)(size > 0 ? size : 0);
}

/* A block exchange's block: the sending side's, or the receiving side's
 * where the send side is in place or, for Scatter (@recv_side), means
 * nothing off the root. */
static inline size_t tc_pmpi_block(int recv_side, const void *sendbuf, int sendcount,
                                   MPI_Datatype sendtype, const void *recvbuf, int recvcount,
                                   MPI_Datatype recvtype)
{
    if (recv_side ? recvbuf != MPI_IN_PLACE : sendbuf == MPI_IN_PLACE)
        return tc_pmpi_bytes(recvcount, recvtype);
    return tc_pmpi_bytes(sendcount, sendtype);
}

/* Alltoallv: the bytes this rank sends (0 in place or on bad arguments). */
static inline size_t tc_pmpi_vbytes(const void *sendbuf, const int *counts, MPI_Datatype dt,
                                    MPI_Comm comm)
{
    int n = 0, inter = 1;
    size_t sum = 0;
    if (sendbuf == MPI_IN_PLACE || !counts || comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    for (int r = 0; r < n; r++) sum += tc_pmpi_bytes(counts[r], dt);
    return sum;
}

/* Alltoallw: the bytes this rank sends (0 in place or on bad arguments). */
static inline size_t tc_pmpi_wbytes(const void *sendbuf, const int *counts,
                                    const MPI_Datatype *types, MPI_Comm comm)
{
    int n = 0, inter = 1;
    size_t sum = 0;
    if (sendbuf == MPI_IN_PLACE || !counts || !types || comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    for (int r = 0; r < n; r++) sum += tc_pmpi_bytes(counts[r], types[r]);
    return sum;
}

/* MPI_Reduce_scatter: this rank's block in bytes (0 on bad arguments). */
static inline size_t tc_pmpi_rsbytes(const int *counts, MPI_Datatype dt, MPI_Comm comm)
{
    int r = 0, inter = 1;
    if (!counts || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        inter || PMPI_Comm_rank(comm, &r) != MPI_SUCCESS)
        return 0;
    return tc_pmpi_bytes(counts[r], dt);
}

#define S_BCAST_BYTES(ID) tc_pmpi_bytes(count, datatype)
#define S_BCAST_F         void *buf, MPI_Fint *count, MPI_Fint *dt, MPI_Fint *root, MPI_Fint *comm
#define S_BCAST_FARGS     fbuf(buf), *count, PMPI_Type_f2c(*dt), *root, PMPI_Comm_f2c(*comm)

#define S_BARRIER_BYTES(ID) 0
#define S_BARRIER_F         MPI_Fint *comm
#define S_BARRIER_FARGS     PMPI_Comm_f2c(*comm)

#define S_REDUCE_BYTES(ID) tc_pmpi_bytes(count, datatype)
#define S_REDUCE_F                                                                   \
    void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op, \
        MPI_Fint *root, MPI_Fint *comm
#define S_REDUCE_FARGS                                                                       \
    fbuf(sendbuf), fbuf(recvbuf), *count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), *root, \
        PMPI_Comm_f2c(*comm)

#define S_ALLRED_BYTES(ID) tc_pmpi_bytes(count, datatype)
#define S_ALLRED_F \
    void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op, MPI_Fint *comm
#define S_ALLRED_FARGS                                                                \
    fbuf(sendbuf), fbuf(recvbuf), *count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), \
        PMPI_Comm_f2c(*comm)

#define S_ALLG_BYTES(ID) \
    tc_pmpi_block(0, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)
#define S_ALLG_F                                                                                \
    void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcount, \
        MPI_Fint *recvtype, MPI_Fint *comm
#define S_ALLG_FARGS                                                                \
    fbuf(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), fbuf(recvbuf), *recvcount, \
        PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm)

#define S_ROOTG_BYTES(ID)                                                                    \
    tc_pmpi_block(TOPOCOLL_COLL_##ID == TOPOCOLL_COLL_SCATTER, sendbuf, sendcount, sendtype, \
                  recvbuf, recvcount, recvtype)
#define S_ROOTG_F                                                                               \
    void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcount, \
        MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm
#define S_ROOTG_FARGS                                                               \
    fbuf(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), fbuf(recvbuf), *recvcount, \
        PMPI_Type_f2c(*recvtype), *root, PMPI_Comm_f2c(*comm)

/* The irregular exchanges: our block (the receiving side's count at a
 * root in place, which only the root's arrays give: 0 there). */
#define S_GATHERV_BYTES(ID) (sendbuf == MPI_IN_PLACE ? 0 : tc_pmpi_bytes(sendcount, sendtype))
#define S_GATHERV_F                                                                              \
    void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcounts, \
        MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm
#define S_GATHERV_FARGS                                                                     \
    fbuf(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), fbuf(recvbuf), recvcounts, displs, \
        PMPI_Type_f2c(*recvtype), *root, PMPI_Comm_f2c(*comm)

#define S_SCATTERV_BYTES(ID) (recvbuf == MPI_IN_PLACE ? 0 : tc_pmpi_bytes(recvcount, recvtype))
#define S_SCATTERV_F                                                                          \
    void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *displs, MPI_Fint *sendtype, void *recvbuf, \
        MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm
#define S_SCATTERV_FARGS                                                                    \
    fbuf(sendbuf), sendcounts, displs, PMPI_Type_f2c(*sendtype), fbuf(recvbuf), *recvcount, \
        PMPI_Type_f2c(*recvtype), *root, PMPI_Comm_f2c(*comm)

#define S_ALLGV_BYTES(ID) (sendbuf == MPI_IN_PLACE ? 0 : tc_pmpi_bytes(sendcount, sendtype))
#define S_ALLGV_F                                                                                \
    void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcounts, \
        MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *comm
#define S_ALLGV_FARGS                                                                       \
    fbuf(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), fbuf(recvbuf), recvcounts, displs, \
        PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm)

/* MPI_Reduce_scatter: our block's bytes (its arrays give them). */
#define S_REDSCAT_BYTES(ID) tc_pmpi_rsbytes(recvcounts, datatype, comm)
#define S_REDSCAT_F                                                                       \
    void *sendbuf, void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *datatype, MPI_Fint *op, \
        MPI_Fint *comm
#define S_REDSCAT_FARGS                                                                   \
    fbuf(sendbuf), fbuf(recvbuf), recvcounts, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), \
        PMPI_Comm_f2c(*comm)

#define S_ALLTOALLV_BYTES(ID) tc_pmpi_vbytes(sendbuf, sendcounts, sendtype, comm)
#define S_ALLTOALLV_F                                                                          \
    void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtype, void *recvbuf, \
        MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *comm
#define S_ALLTOALLV_FARGS                                                                    \
    fbuf(sendbuf), sendcounts, sdispls, PMPI_Type_f2c(*sendtype), fbuf(recvbuf), recvcounts, \
        rdispls, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm)

#define S_ALLTOALLW_BYTES(ID) tc_pmpi_wbytes(sendbuf, sendcounts, sendtypes, comm)
#define S_ALLTOALLW_F                                                                           \
    void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtypes, void *recvbuf, \
        MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtypes, MPI_Fint *comm
#define S_ALLTOALLW_FARGS                                                                  \
    fbuf(sendbuf), sendcounts, sdispls,                                                    \
        fbuf(sendbuf) == MPI_IN_PLACE ? NULL : ftypes(sendtypes, *comm, 0), fbuf(recvbuf), \
        recvcounts, rdispls, ftypes(recvtypes, *comm, 1), PMPI_Comm_f2c(*comm)

#endif
