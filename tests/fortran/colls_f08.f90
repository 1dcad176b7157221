! colls_f08 -- MPI collectives through the Fortran 2008 module (use
! mpi_f08): the checks of colls_body.inc (see there), with the handles
! TYPE(MPI_Comm), TYPE(MPI_Request), TYPE(MPI_Status), and several calls
! without their optional ierror (an error then goes to the communicator's
! handler: MPI_ERRORS_ARE_FATAL on these).  On a mismatch it prints
! "FAIL <what>/<comm>/n=<count> rank=<r>" and aborts with 1; rank 0 prints
! "PASS colls_f08" at the end.
!
! MPICH 4.0.x's MPI_Reduce(MPI_IN_PLACE) at a non-zero root crashes (a
! segfault in the root's memmove) above 2 KiB, with or without topocoll:
! under MPICH 4.0 the in-place Reduces of more than 256 elements go to
! root 0 instead (said in one note line); the smaller ones keep their
! non-zero roots.  COLLS_INPLACE_ROOT_ALL=1 in the environment keeps every
! root (e.g. under topocoll, whose MPI_Reduce avoids the defect).
program colls_f08
  use mpi_f08
  implicit none
  interface
    subroutine tc_allreduce_init_f08(s, r, n, comm, req, e)
      use mpi_f08
      integer, intent(in) :: n
      double precision, asynchronous :: s(n), r(n)
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: req
      integer, intent(out) :: e
    end subroutine tc_allreduce_init_f08
  end interface
  integer, parameter :: NCOUNT = 4
  integer, parameter :: counts(NCOUNT) = (/ 1, 7, 1000, 524288 /)
  character(len=5), parameter :: cnames(3) = (/ 'world', 'split', 'dup  ' /)
  integer :: ierr, wrank, wsize, ic, k
  type(MPI_Comm) :: comms(3)
  character(len=40) :: ctx
  logical :: inplace_root_defect

  call MPI_Init()
  ctx = 'init'
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
  call chk(ierr, 'comm_size')
  inplace_root_defect = mpich40()
  if (inplace_root_defect .and. wrank == 0) write (*, '(a)') 'note: MPICH 4.0: MPI_Reduce(MPI_IN_PLACE)' &
    // ' at a non-zero root crashes above 2 KiB; in-place Reduces above 256 elements use root 0'
  comms(1) = MPI_COMM_WORLD
  call MPI_Comm_split(MPI_COMM_WORLD, mod(wrank, 2), wsize - wrank, comms(2), ierr)
  call chk(ierr, 'comm_split')
  call MPI_Comm_dup(MPI_COMM_WORLD, comms(3), ierr)
  call chk(ierr, 'comm_dup')
  do ic = 1, 3
    do k = 1, NCOUNT
      write (ctx, '(a,"/n=",i0)') trim(cnames(ic)), counts(k)
      call t_bcast(comms(ic), counts(k))
      call t_allreduce(comms(ic), counts(k))
      call t_reduce(comms(ic), counts(k))
      call t_scan(comms(ic), counts(k))
      call t_exchange(comms(ic), counts(k))
      call t_nonblocking(comms(ic), counts(k))
      call MPI_Barrier(comms(ic))
    end do
  end do
  call t_split_type()
  call t_errors()
  call MPI_Comm_free(comms(2), ierr)
  call chk(ierr, 'comm_free')
  call MPI_Comm_free(comms(3))
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call chk(ierr, 'barrier')
  if (wrank == 0) write (*, '(a)') 'PASS colls_f08'
  call MPI_Finalize()

contains

  include 'colls_gen.inc'

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (*, '("FAIL ",a,"/",a," rank=",i0)') what, trim(ctx), wrank
    flush (6)
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine fail

  subroutine chk(e, what)
    integer, intent(in) :: e
    character(len=*), intent(in) :: what
    if (e /= MPI_SUCCESS) call fail(what // '_ierror')
  end subroutine chk

  ! Is this MPICH 4.0.x (MPI_Get_library_version)?
  logical function mpich40()
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: v
    integer :: l, e
    v = ' '
    call MPI_Get_library_version(v, l, e)
    call chk(e, 'get_library_version')
    mpich40 = index(v, 'MPICH Version:' // char(9) // '4.0.') > 0
    call get_environment_variable('COLLS_INPLACE_ROOT_ALL', v)
    if (trim(v) == '1') mpich40 = .false.
  end function mpich40

  ! the roots: the last rank, and the middle one
  pure integer function root_of(np, which)
    integer, intent(in) :: np, which
    if (which == 1) then
      root_of = np - 1
    else
      root_of = np / 2
    end if
  end function root_of

  subroutine t_bcast(comm, n)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: n
    double precision, allocatable :: d(:)
    integer, allocatable :: v(:)
    integer :: me, np, w, root, i, e
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, np)
    allocate (d(n), v(n))
    do w = 1, 2
      root = root_of(np, w)
      if (w == 2 .and. root == root_of(np, 1)) exit
      do i = 1, n
        if (me == root) then
          d(i) = gd(root, i)
          v(i) = gi(root, i)
        else
          d(i) = -1.0d300
          v(i) = -huge(1)
        end if
      end do
      call MPI_Bcast(d, n, MPI_DOUBLE_PRECISION, root, comm, e)
      call chk(e, 'bcast_dp')
      call MPI_Bcast(v, n, MPI_INTEGER, root, comm)
      do i = 1, n
        if (d(i) /= gd(root, i)) call fail('bcast_dp')
        if (v(i) /= gi(root, i)) call fail('bcast_int')
      end do
    end do
  end subroutine t_bcast

  subroutine t_allreduce(comm, n)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: n
    double precision, allocatable :: ds(:), dr(:), ms(:, :), mr(:, :)
    integer, allocatable :: is(:), ir(:)
    real, allocatable :: rs(:), rr(:)
    complex(kind(1.0d0)), allocatable :: zs(:), zr(:)
    logical, allocatable :: ls(:), lr(:)
    double precision :: v, loc
    integer :: me, np, i, e, p1
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, np)
    p1 = np - 1
    allocate (ds(n), dr(n), is(n), ir(n), rs(n), rr(n), zs(n), zr(n), ls(n), lr(n))
    allocate (ms(2, n), mr(2, n))
    do i = 1, n
      ds(i) = gd(me, i)
      is(i) = gi(me, i)
      rs(i) = gr(me, i)
      zs(i) = gz(me, i)
      ls(i) = gl(me, i)
      ms(1, i) = gm(me, i)
      ms(2, i) = dble(me)
    end do
    call MPI_Allreduce(ds, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, e)
    call chk(e, 'allreduce_dp_sum')
    do i = 1, n
      if (dr(i) /= xsum_d(0, p1, i)) call fail('allreduce_dp_sum')
    end do
    call MPI_Allreduce(ds, dr, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, e)
    call chk(e, 'allreduce_dp_max')
    do i = 1, n
      if (dr(i) /= xmax_d(0, p1, i)) call fail('allreduce_dp_max')
    end do
    call MPI_Allreduce(is, ir, n, MPI_INTEGER, MPI_SUM, comm, e)
    call chk(e, 'allreduce_int_sum')
    do i = 1, n
      if (ir(i) /= xsum_i(0, p1, i)) call fail('allreduce_int_sum')
    end do
    call MPI_Allreduce(is, ir, n, MPI_INTEGER, MPI_MIN, comm, e)
    call chk(e, 'allreduce_int_min')
    do i = 1, n
      if (ir(i) /= xmin_i(0, p1, i)) call fail('allreduce_int_min')
    end do
    call MPI_Allreduce(rs, rr, n, MPI_REAL, MPI_SUM, comm, e)
    call chk(e, 'allreduce_real_sum')
    do i = 1, n
      if (rr(i) /= xsum_r(0, p1, i)) call fail('allreduce_real_sum')
    end do
    call MPI_Allreduce(zs, zr, n, MPI_DOUBLE_COMPLEX, MPI_SUM, comm, e)
    call chk(e, 'allreduce_dcomplex_sum')
    do i = 1, n
      if (zr(i) /= xsum_z(0, p1, i)) call fail('allreduce_dcomplex_sum')
    end do
    call MPI_Allreduce(ls, lr, n, MPI_LOGICAL, MPI_LAND, comm, e)
    call chk(e, 'allreduce_logical_land')
    do i = 1, n
      if (lr(i) .neqv. xand_l(0, p1, i)) call fail('allreduce_logical_land')
    end do
    call MPI_Allreduce(ls, lr, n, MPI_LOGICAL, MPI_LOR, comm, e)
    call chk(e, 'allreduce_logical_lor')
    do i = 1, n
      if (lr(i) .neqv. xor_l(0, p1, i)) call fail('allreduce_logical_lor')
    end do
    call MPI_Allreduce(ms, mr, n, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, comm, e)
    call chk(e, 'allreduce_2dp_maxloc')
    do i = 1, n
      call xmaxloc(0, p1, i, v, loc)
      if (mr(1, i) /= v .or. mr(2, i) /= loc) call fail('allreduce_2dp_maxloc')
    end do
    ! MPI_IN_PLACE
    dr = ds
    call MPI_Allreduce(MPI_IN_PLACE, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, e)
    call chk(e, 'allreduce_inplace_dp_sum')
    do i = 1, n
      if (dr(i) /= xsum_d(0, p1, i)) call fail('allreduce_inplace_dp_sum')
    end do
    ir = is
    call MPI_Allreduce(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_MIN, comm, e)
    call chk(e, 'allreduce_inplace_int_min')
    do i = 1, n
      if (ir(i) /= xmin_i(0, p1, i)) call fail('allreduce_inplace_int_min')
    end do
  end subroutine t_allreduce

  subroutine t_reduce(comm, n)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: n
    double precision, allocatable :: ds(:), dr(:)
    integer, allocatable :: is(:), ir(:)
    integer :: me, np, w, root, iroot, i, e, p1
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, np)
    p1 = np - 1
    allocate (ds(n), dr(n), is(n), ir(n))
    do w = 1, 2
      root = root_of(np, w)
      if (w == 2 .and. root == root_of(np, 1)) exit
      iroot = root   ! the in-place Reduces' root
      if (inplace_root_defect .and. n > 256) iroot = 0
      do i = 1, n
        ds(i) = gd(me, i)
        is(i) = gi(me, i)
      end do
      dr = -1.0d300
      call MPI_Reduce(ds, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, e)
      call chk(e, 'reduce_dp_sum')
      if (me == root) then
        do i = 1, n
          if (dr(i) /= xsum_d(0, p1, i)) call fail('reduce_dp_sum')
        end do
      end if
      ! MPI_IN_PLACE at the root (the others' receive buffers: not significant)
      if (me == iroot) then
        call MPI_Reduce(MPI_IN_PLACE, is, n, MPI_INTEGER, MPI_SUM, iroot, comm, e)
      else
        call MPI_Reduce(is, ir, n, MPI_INTEGER, MPI_SUM, iroot, comm, e)
      end if
      call chk(e, 'reduce_inplace_int_sum')
      if (me == iroot) then
        do i = 1, n
          if (is(i) /= xsum_i(0, p1, i)) call fail('reduce_inplace_int_sum')
        end do
      end if
      if (me == iroot) then
        call MPI_Reduce(MPI_IN_PLACE, ds, n, MPI_DOUBLE_PRECISION, MPI_MAX, iroot, comm, e)
      else
        call MPI_Reduce(ds, dr, n, MPI_DOUBLE_PRECISION, MPI_MAX, iroot, comm, e)
      end if
      call chk(e, 'reduce_inplace_dp_max')
      if (me == iroot) then
        do i = 1, n
          if (ds(i) /= xmax_d(0, p1, i)) call fail('reduce_inplace_dp_max')
        end do
      end if
    end do
  end subroutine t_reduce

  subroutine t_scan(comm, n)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: n
    double precision, allocatable :: ds(:), dr(:)
    integer, allocatable :: is(:), ir(:)
    integer :: me, np, i, e
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, np)
    allocate (ds(n), dr(n), is(n), ir(n))
    do i = 1, n
      ds(i) = gd(me, i)
      is(i) = gi(me, i)
    end do
    call MPI_Scan(ds, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, e)
    call chk(e, 'scan_dp_sum')
    do i = 1, n
      if (dr(i) /= xsum_d(0, me, i)) call fail('scan_dp_sum')
    end do
    call MPI_Scan(is, ir, n, MPI_INTEGER, MPI_SUM, comm, e)
    call chk(e, 'scan_int_sum')
    do i = 1, n
      if (ir(i) /= xsum_i(0, me, i)) call fail('scan_int_sum')
    end do
    ir = -huge(1)
    call MPI_Exscan(is, ir, n, MPI_INTEGER, MPI_SUM, comm, e)
    call chk(e, 'exscan_int_sum')
    if (me > 0) then   ! (rank 0's result is undefined)
      do i = 1, n
        if (ir(i) /= xsum_i(0, me - 1, i)) call fail('exscan_int_sum')
      end do
    end if
  end subroutine t_scan

  subroutine t_exchange(comm, n)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: n
    double precision, allocatable :: ds(:), dr(:), da(:)
    integer, allocatable :: is(:), ir(:), ia(:)
    integer :: me, np, m, i, j, p, e, root, t
    integer, allocatable :: vc(:), vd(:), vi(:), sc(:), sd(:)
    double precision, allocatable :: vs(:), vr(:), va(:), vo(:)
    type(MPI_Datatype) :: tw
    type(MPI_Request) :: wreq
    type(MPI_Datatype), allocatable :: wst(:), wrt(:)
    integer, allocatable :: wsd(:), wrd(:)
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, np)
    m = blockcount(n)
    allocate (ds(m), dr(m * np), da(m * np), is(m), ir(m * np), ia(m * np))
    do i = 1, m
      ds(i) = gd(me, i)
      is(i) = gi(me, i)
    end do
    ! Allgather: block p is rank p's
    dr = -1.0d300
    call MPI_Allgather(ds, m, MPI_DOUBLE_PRECISION, dr, m, MPI_DOUBLE_PRECISION, comm, e)
    call chk(e, 'allgather_dp')
    ir = -huge(1)
    call MPI_Allgather(is, m, MPI_INTEGER, ir, m, MPI_INTEGER, comm)
    do p = 0, np - 1
      do j = 1, m
        if (dr(p * m + j) /= gd(p, j)) call fail('allgather_dp')
        if (ir(p * m + j) /= gi(p, j)) call fail('allgather_int')
      end do
    end do
    ! Gather to the last rank
    root = root_of(np, 1)
    dr = -1.0d300
    call MPI_Gather(ds, m, MPI_DOUBLE_PRECISION, dr, m, MPI_DOUBLE_PRECISION, root, comm, e)
    call chk(e, 'gather_dp')
    if (me == root) then
      do p = 0, np - 1
        do j = 1, m
          if (dr(p * m + j) /= gd(p, j)) call fail('gather_dp')
        end do
      end do
    end if
    ! Scatter from the middle rank: rank p gets block p of the root's gi
    root = root_of(np, 2)
    do i = 1, m * np
      ia(i) = gi(root, i)
    end do
    ir = -huge(1)
    call MPI_Scatter(ia, m, MPI_INTEGER, ir, m, MPI_INTEGER, root, comm, e)
    call chk(e, 'scatter_int')
    do j = 1, m
      if (ir(j) /= gi(root, me * m + j)) call fail('scatter_int')
    end do
    ! Alltoall: rank p sends element q*m+j of its gi/gd to rank q
    do i = 1, m * np
      da(i) = gd(me, i)
      ia(i) = gi(me, i)
    end do
    dr = -1.0d300
    call MPI_Alltoall(da, m, MPI_DOUBLE_PRECISION, dr, m, MPI_DOUBLE_PRECISION, comm, e)
    call chk(e, 'alltoall_dp')
    ir = -huge(1)
    call MPI_Alltoall(ia, m, MPI_INTEGER, ir, m, MPI_INTEGER, comm, e)
    call chk(e, 'alltoall_int')
    do p = 0, np - 1
      do j = 1, m
        if (dr(p * m + j) /= gd(p, me * m + j)) call fail('alltoall_dp')
        if (ir(p * m + j) /= gi(p, me * m + j)) call fail('alltoall_int')
      end do
    end do
    ! Allgatherv, Gatherv, Scatterv: rank p's block is m + p elements
    allocate (vc(np), vd(np))
    t = 0
    do p = 0, np - 1
      vc(p + 1) = m + p
      vd(p + 1) = t
      t = t + m + p
    end do
    allocate (vs(m + me), vr(t), vi(t))
    do j = 1, m + me
      vs(j) = gd(me, j)
    end do
    vr = -1.0d300
    call MPI_Allgatherv(vs, m + me, MPI_DOUBLE_PRECISION, vr, vc, vd, MPI_DOUBLE_PRECISION, &
                        comm, e)
    call chk(e, 'allgatherv_dp')
    do p = 0, np - 1
      do j = 1, m + p
        if (vr(vd(p + 1) + j) /= gd(p, j)) call fail('allgatherv_dp')
      end do
    end do
    root = root_of(np, 1)
    vr = -1.0d300
    call MPI_Gatherv(vs, m + me, MPI_DOUBLE_PRECISION, vr, vc, vd, MPI_DOUBLE_PRECISION, root, &
                     comm, e)
    call chk(e, 'gatherv_dp')
    if (me == root) then
      do p = 0, np - 1
        do j = 1, m + p
          if (vr(vd(p + 1) + j) /= gd(p, j)) call fail('gatherv_dp')
        end do
      end do
    end if
    root = root_of(np, 2)
    do i = 1, t
      vi(i) = gi(root, i)
    end do
    ir = -huge(1)
    call MPI_Scatterv(vi, vc, vd, MPI_INTEGER, ir, m + me, MPI_INTEGER, root, comm, e)
    call chk(e, 'scatterv_int')
    do j = 1, m + me
      if (ir(j) /= gi(root, vd(me + 1) + j)) call fail('scatterv_int')
    end do
    ! Alltoallv: rank p sends m + p elements to each rank
    allocate (sc(np), sd(np), va(np * (m + me)))
    do p = 0, np - 1
      sc(p + 1) = m + me
      sd(p + 1) = p * (m + me)
      do j = 1, m + me
        va(p * (m + me) + j) = gd(me, p * 1000 + j)
      end do
    end do
    vr = -1.0d300
    call MPI_Alltoallv(va, sc, sd, MPI_DOUBLE_PRECISION, vr, vc, vd, MPI_DOUBLE_PRECISION, &
                       comm, e)
    call chk(e, 'alltoallv_dp')
    do p = 0, np - 1
      do j = 1, m + p
        if (vr(vd(p + 1) + j) /= gd(p, me * 1000 + j)) call fail('alltoallv_dp')
      end do
    end do
    ! Alltoallw: the same blocks at byte displacements, a datatype per
    ! rank: MPI_DOUBLE_PRECISION, or for odd ranks a contiguous type of one
    ! (another handle of the same signature)
    call MPI_Type_contiguous(1, MPI_DOUBLE_PRECISION, tw)
    call MPI_Type_commit(tw)
    allocate (wst(np), wrt(np), wsd(np), wrd(np))
    do p = 0, np - 1
      wst(p + 1) = MPI_DOUBLE_PRECISION
      if (mod(p, 2) == 1) wst(p + 1) = tw
      wrt(p + 1) = MPI_DOUBLE_PRECISION
      if (mod(p + me, 2) == 1) wrt(p + 1) = tw
      wsd(p + 1) = sd(p + 1) * 8
      wrd(p + 1) = vd(p + 1) * 8
    end do
    vr = -1.0d300
    call MPI_Alltoallw(va, sc, wsd, wst, vr, vc, wrd, wrt, comm, e)
    call chk(e, 'alltoallw_dp')
    do p = 0, np - 1
      do j = 1, m + p
        if (vr(vd(p + 1) + j) /= gd(p, me * 1000 + j)) call fail('alltoallw_dp')
      end do
    end do
    ! and nonblocking (the derived type's arrays must live until the wait)
    vr = -1.0d300
    call MPI_Ialltoallw(va, sc, wsd, wst, vr, vc, wrd, wrt, comm, wreq, e)
    call chk(e, 'ialltoallw_dp')
    call MPI_Wait(wreq, MPI_STATUS_IGNORE)
    do p = 0, np - 1
      do j = 1, m + p
        if (vr(vd(p + 1) + j) /= gd(p, me * 1000 + j)) call fail('ialltoallw_dp')
      end do
    end do
    call MPI_Type_free(tw)
    deallocate (wst, wrt, wsd, wrd)
    ! Reduce_scatter (rank p's block: m + p elements), Reduce_scatter_block
    ! in place (m each)
    allocate (vo(t))
    do i = 1, t
      vo(i) = gd(me, i)
    end do
    vr = -1.0d300
    call MPI_Reduce_scatter(vo, vr, vc, MPI_DOUBLE_PRECISION, MPI_SUM, comm, e)
    call chk(e, 'reduce_scatter_dp')
    do j = 1, m + me
      if (vr(j) /= xsum_d(0, np - 1, vd(me + 1) + j)) call fail('reduce_scatter_dp')
    end do
    call MPI_Reduce_scatter_block(MPI_IN_PLACE, vo, m, MPI_DOUBLE_PRECISION, MPI_SUM, comm, e)
    call chk(e, 'reduce_scatter_block_dp')
    do j = 1, m
      if (vo(j) /= xsum_d(0, np - 1, me * m + j)) call fail('reduce_scatter_block_dp')
    end do
    deallocate (vo)
    deallocate (sc, sd, va)
    deallocate (vc, vd, vs, vr, vi)
  end subroutine t_exchange

  subroutine t_nonblocking(comm, n)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: n
    double precision, allocatable, asynchronous :: b(:), s(:), r(:)
    integer, allocatable, asynchronous :: is(:), ir(:)
    type(MPI_Request) :: req(3)
    type(MPI_Status) :: st(3), st1
    integer :: me, np, i, j, e, pass, root1, root2, p1
    logical :: flag
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_size(comm, np)
    p1 = np - 1
    root1 = root_of(np, 1)
    root2 = root_of(np, 2)
    allocate (b(n), s(n), r(n), is(n), ir(n))
    ! three collectives in flight, completed 3 ways
    do pass = 1, 3
      do i = 1, n
        if (me == root1) then
          b(i) = gd(root1, i)
        else
          b(i) = -1.0d300
        end if
        s(i) = gd(me, i)
        is(i) = gi(me, i)
      end do
      r = -1.0d300
      ir = -huge(1)
      call MPI_Ibcast(b, n, MPI_DOUBLE_PRECISION, root1, comm, req(1), e)
      call chk(e, 'ibcast_dp')
      call MPI_Iallreduce(s, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, req(2), e)
      call chk(e, 'iallreduce_dp_sum')
      call MPI_Ireduce(is, ir, n, MPI_INTEGER, MPI_SUM, root2, comm, req(3), e)
      call chk(e, 'ireduce_int_sum')
      select case (pass)
      case (1)
        call MPI_Waitall(3, req, st, e)
        call chk(e, 'waitall_statuses')
      case (2)
        call MPI_Waitall(3, req, MPI_STATUSES_IGNORE, e)
        call chk(e, 'waitall_statuses_ignore')
      case default
        call MPI_Wait(req(3), st1, e)
        call chk(e, 'wait')
        call MPI_Wait(req(1), MPI_STATUS_IGNORE)
        call MPI_Wait(req(2), st1, e)
        call chk(e, 'wait')
      end select
      do j = 1, 3
        if (req(j) /= MPI_REQUEST_NULL) call fail('wait_request_not_null')
      end do
      do i = 1, n
        if (b(i) /= gd(root1, i)) call fail('ibcast_dp')
        if (r(i) /= xsum_d(0, p1, i)) call fail('iallreduce_dp_sum')
      end do
      if (me == root2) then
        do i = 1, n
          if (ir(i) /= xsum_i(0, p1, i)) call fail('ireduce_int_sum')
        end do
      end if
    end do
    ! an Iallreduce completed by an MPI_Test loop
    call MPI_Iallreduce(is, ir, n, MPI_INTEGER, MPI_MIN, comm, req(1), e)
    call chk(e, 'iallreduce_int_min')
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req(1), flag, st1)
    end do
    if (req(1) /= MPI_REQUEST_NULL) call fail('test_request_not_null')
    do i = 1, n
      if (ir(i) /= xmin_i(0, p1, i)) call fail('iallreduce_int_min')
    end do
    ! a persistent Allreduce (MPI 4.0 section 6.13; the init's name is the
    ! MPI's: pinit_f08_<mpi>.f90) started three times with new data,
    ! completed by MPI_Wait and MPI_Waitall (the handle stays), then freed
    call tc_allreduce_init_f08(s, r, n, comm, req(1), e)
    call chk(e, 'allreduce_init')
    do pass = 1, 3
      do i = 1, n
        s(i) = gd(me, i) * pass
      end do
      r = -1.0d300
      call MPI_Start(req(1), e)
      call chk(e, 'start')
      if (pass == 2) then
        call MPI_Waitall(1, req, st, e)
      else
        call MPI_Wait(req(1), st1, e)
      end if
      call chk(e, 'wait_persistent')
      if (req(1) == MPI_REQUEST_NULL) call fail('persistent_request_null')
      do i = 1, n
        if (r(i) /= xsum_d(0, p1, i) * pass) call fail('allreduce_init')
      end do
    end do
    call MPI_Request_free(req(1), e)
    call chk(e, 'request_free')
    if (req(1) /= MPI_REQUEST_NULL) call fail('request_free_not_null')
  end subroutine t_nonblocking

  subroutine t_split_type()
    type(MPI_Comm) :: shm
    integer :: ns, me, one, total, e
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, shm, e)
    ctx = 'shared'
    call chk(e, 'comm_split_type')
    if (shm == MPI_COMM_NULL) call fail('comm_split_type_null')
    call MPI_Comm_size(shm, ns)
    call MPI_Comm_rank(shm, me)
    one = 1
    total = -1
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, shm, e)
    call chk(e, 'shared_allreduce_count')
    if (total /= ns) call fail('shared_allreduce_count')
    ctx = 'shared/n=1000'
    call t_allreduce(shm, 1000)
    ctx = 'shared/n=524288'
    call t_bcast(shm, 524288)
    call MPI_Comm_free(shm)
  end subroutine t_split_type

  ! Erroneous Bcasts under MPI_ERRORS_RETURN: every rank detects them
  ! locally (root = size; count = -1), and the communicator still works.
  subroutine t_errors()
    type(MPI_Comm) :: ec
    integer :: np, me, cls, e, e2, i
    integer :: v(7)
    character(len=32) :: tag
    ctx = 'errors'
    call MPI_Comm_dup(MPI_COMM_WORLD, ec, e)
    call chk(e, 'comm_dup')
    call MPI_Comm_set_errhandler(ec, MPI_ERRORS_RETURN, e)
    call chk(e, 'comm_set_errhandler')
    call MPI_Comm_size(ec, np)
    call MPI_Comm_rank(ec, me)
    v = 0
    call MPI_Bcast(v, 7, MPI_INTEGER, np, ec, e)
    if (e == MPI_SUCCESS) call fail('bcast_root_eq_size_accepted')
    call MPI_Error_class(e, cls, e2)
    call chk(e2, 'error_class')
    if (cls /= MPI_ERR_ROOT) then
      write (tag, '("bcast_bad_root_class=",i0)') cls
      call fail(trim(tag))
    end if
    call MPI_Bcast(v, -1, MPI_INTEGER, 0, ec, e)
    if (e == MPI_SUCCESS) call fail('bcast_count_minus1_accepted')
    call MPI_Error_class(e, cls, e2)
    call chk(e2, 'error_class')
    if (cls /= MPI_ERR_COUNT) then
      write (tag, '("bcast_bad_count_class=",i0)') cls
      call fail(trim(tag))
    end if
    ! and the communicator still works
    do i = 1, 7
      if (me == np - 1) then
        v(i) = gi(np - 1, i)
      else
        v(i) = -huge(1)
      end if
    end do
    call MPI_Bcast(v, 7, MPI_INTEGER, np - 1, ec, e)
    call chk(e, 'bcast_after_errors')
    do i = 1, 7
      if (v(i) /= gi(np - 1, i)) call fail('bcast_after_errors')
    end do
    call MPI_Comm_free(ec, e)
    call chk(e, 'comm_free')
  end subroutine t_errors
end program colls_f08
