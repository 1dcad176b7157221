/* native.c -- fbench's native column: the MPI library's C profiling entries
 * (PMPI_Bcast, PMPI_Allreduce), called from Fortran with Fortran handles.
 *
 * Why not the Fortran PMPI_BCAST: MPICH's libmpichfort defines PMPI_BCAST,
 * pmpi_bcast_ and mpi_bcast_ at one address, which calls the C MPI_Bcast,
 * so under the preload its Fortran profiling entries reach topocoll too.
 * PMPI_Bcast from C is never taken by topocoll, under either MPI.
 * Fortran calling convention: every argument by reference; names mangled
 * with one trailing underscore (gfortran). */
#include <mpi.h>

void fbench_native_bcast_(void *buf, const MPI_Fint *count, const MPI_Fint *type,
                          const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *ierr);
void fbench_native_allreduce_(const void *sbuf, void *rbuf, const MPI_Fint *count,
                              const MPI_Fint *type, const MPI_Fint *op, const MPI_Fint *comm,
                              MPI_Fint *ierr);

void fbench_native_bcast_(void *buf, const MPI_Fint *count, const MPI_Fint *type,
                          const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = (MPI_Fint)PMPI_Bcast(buf, (int)*count, MPI_Type_f2c(*type), (int)*root,
                                 MPI_Comm_f2c(*comm));
}

void fbench_native_allreduce_(const void *sbuf, void *rbuf, const MPI_Fint *count,
                              const MPI_Fint *type, const MPI_Fint *op, const MPI_Fint *comm,
                              MPI_Fint *ierr)
{
    *ierr = (MPI_Fint)PMPI_Allreduce(sbuf, rbuf, (int)*count, MPI_Type_f2c(*type), MPI_Op_f2c(*op),
                                     MPI_Comm_f2c(*comm));
}
