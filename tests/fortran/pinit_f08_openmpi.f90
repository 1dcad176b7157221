! pinit_f08_openmpi -- colls_f08.f90's persistent Allreduce init: Open MPI 4.1's MPIX_Allreduce_init (mpi_f08_ext).
! Integer handles' version: pinit_openmpi.f90.
subroutine tc_allreduce_init_f08(s, r, n, comm, req, e)
  use mpi_f08
  use mpi_f08_ext
  implicit none
  integer, intent(in) :: n
  double precision, asynchronous :: s(n), r(n)
  type(MPI_Comm), intent(in) :: comm
  type(MPI_Request), intent(out) :: req
  integer, intent(out) :: e
  call MPIX_Allreduce_init(s, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, MPI_INFO_NULL, req, e)
end subroutine tc_allreduce_init_f08
