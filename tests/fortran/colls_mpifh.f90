! colls_mpifh -- MPI collectives through the Fortran 77-style interface
! (include 'mpif.h'): the checks are colls_body.inc's (see there).  Built
! with -fallow-argument-mismatch (gfortran >= 10 rejects one external
! procedure called with buffers of several types in one file otherwise).
program colls_mpifh
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: IFACE = 'mpifh'
  include 'colls_body.inc'
end program colls_mpifh
