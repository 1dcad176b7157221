! colls_usempi -- MPI collectives through the Fortran 90 module (use mpi):
! the checks are colls_body.inc's (see there).
program colls_usempi
  use mpi
  implicit none
  character(len=*), parameter :: IFACE = 'usempi'
  include 'colls_body.inc'
end program colls_usempi
