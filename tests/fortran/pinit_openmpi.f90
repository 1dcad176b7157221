! pinit_openmpi -- colls_body.inc's persistent Allreduce init under Open MPI
! 4.1, whose MPI 4.0 persistent collectives are the MPIX_<COLL>_INIT of
! its mpi-ext (MPICH: pinit_mpich.f90).  Integer handles (mpif.h and
! use mpi alike).
subroutine tc_allreduce_init(s, r, n, dt, op, comm, info, req, e)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: n, dt, op, comm, info
  double precision :: s(n), r(n)
  integer, intent(out) :: req, e
  call MPIX_ALLREDUCE_INIT(s, r, n, dt, op, comm, info, req, e)
end subroutine tc_allreduce_init
