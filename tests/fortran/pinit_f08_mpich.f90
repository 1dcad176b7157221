! pinit_f08_mpich -- colls_f08.f90's persistent Allreduce init: MPICH 4's MPI_Allreduce_init (MPI 4.0).
! Integer handles' version: pinit_mpich.f90.
subroutine tc_allreduce_init_f08(s, r, n, comm, req, e)
  use mpi_f08
  implicit none
  integer, intent(in) :: n
  double precision, asynchronous :: s(n), r(n)
  type(MPI_Comm), intent(in) :: comm
  type(MPI_Request), intent(out) :: req
  integer, intent(out) :: e
  call MPI_Allreduce_init(s, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, MPI_INFO_NULL, req, e)
end subroutine tc_allreduce_init_f08
