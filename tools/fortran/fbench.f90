! fbench -- a Fortran program's collectives, topocoll against the native
! MPI in one run: each repetition calls MPI_BCAST / MPI_ALLREDUCE (taken by
! libtopocoll_pmpi.so when preloaded) and the MPI library's C PMPI_Bcast /
! PMPI_Allreduce (never taken; through native.c: MPICH's Fortran
! PMPI_BCAST calls the C MPI_Bcast, so topocoll would take it), alternating,
! on warm buffers of DOUBLE PRECISION.  Each call is timed on every rank
! (a barrier before it); a repetition's time is the slowest rank's, so a
! root that returns before its data has arrived gains nothing.  Rank 0
! prints the medians and their ratio.
! Usage: fbench [doubles [repetitions]]  (default 524288 = 4 MiB, 41)
program fbench
  implicit none
  include 'mpif.h'
  integer :: rank, np, n, reps, i, k, ierr, argc
  character(len=32) :: arg
  double precision, allocatable :: a(:), b(:), t(:,:), tmax(:,:)
  double precision :: t0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  n = 524288
  reps = 41
  argc = command_argument_count()
  if (argc >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (argc >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) reps
  end if
  allocate (a(n), b(n), t(reps, 4), tmax(reps, 4))
  a = 1d0
  do i = 1, reps + 2            ! two warm-up rounds, not kept
    do k = 1, 4
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      t0 = MPI_WTIME()
      select case (k)
      case (1)
        call MPI_BCAST(a, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      case (2)
        call fbench_native_bcast(a, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      case (3)
        call MPI_ALLREDUCE(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
      case (4)
        call fbench_native_allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
      end select
      if (i > 2) t(i - 2, k) = MPI_WTIME() - t0
    end do
  end do
  if (b(n) /= dble(np)) then
    print '(a,i0)', 'fbench: wrong Allreduce result on rank ', rank
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  call PMPI_REDUCE(t, tmax, 4 * reps, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a,i0,a,i0,a,i0,a)', 'fbench: np=', np, ', ', n, ' doubles (', 8 * n, ' bytes), warm, slowest rank'
    print '(a)', 'call            topocoll_us  native_us  ratio(native/topocoll)'
    call row('MPI_BCAST    ', tmax(:, 1), tmax(:, 2))
    call row('MPI_ALLREDUCE', tmax(:, 3), tmax(:, 4))
  end if
  call MPI_FINALIZE(ierr)
contains
  subroutine row(name, x, y)
    character(len=*), intent(in) :: name
    double precision, intent(in) :: x(:), y(:)
    print '(a,3x,f11.1,f11.1,f10.2)', name, median(x) * 1d6, median(y) * 1d6, median(y) / median(x)
  end subroutine
  double precision function median(v)
    double precision, intent(in) :: v(:)
    double precision :: w(size(v)), s
    integer :: p, q
    w = v
    do p = 2, size(w)          ! insertion sort: a few dozen values
      s = w(p)
      q = p - 1
      do while (q >= 1)
        if (w(q) <= s) exit
        w(q + 1) = w(q)
        q = q - 1
      end do
      w(q + 1) = s
    end do
    median = w((size(w) + 1) / 2)
  end function
end program
