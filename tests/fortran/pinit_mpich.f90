! pinit_mpich -- colls_body.inc's persistent Allreduce init under MPICH 4
! (MPI 4.0's MPI_ALLREDUCE_INIT; Open MPI: pinit_openmpi.f90).  Integer
! handles (mpif.h and use mpi alike).
subroutine tc_allreduce_init(s, r, n, dt, op, comm, info, req, e)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: n, dt, op, comm, info
  double precision :: s(n), r(n)
  integer, intent(out) :: req, e
  call MPI_ALLREDUCE_INIT(s, r, n, dt, op, comm, info, req, e)
end subroutine tc_allreduce_init
