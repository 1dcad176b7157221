#!/usr/bin/python3
"""test_mpi4py -- an mpi4py program under LD_PRELOAD=libtopocoll_pmpi.so.

Bcast, Reduce, Allreduce (also MPI.IN_PLACE) and Allgather of numpy
arrays (float64 and int32; 1 element to over 1 MiB, odd counts; root 0
and non-zero roots), then comm.Split_type(MPI.COMM_TYPE_SHARED) and
collectives on the new communicator.  Every result is compared with a
reference numpy computes from the inputs (every rank's input is a known
function of its rank), not with another MPI call.

--expect-topocoll: the calls must also have gone through topocoll:
topocoll_comm_query (found with ctypes in the preloaded library) counts,
on each communicator, at least one call of each kind handled by topocoll,
every call of 1 MiB or more among them, and never more calls than were
made.  Without it (a run without the preload) only the data is checked.

Prints one summary line (rank 0); exit status 0 only if every check
passed.  77 (ctest's skip) when numpy or mpi4py cannot be imported.
Run with Debian's /usr/bin/python3: its python3-mpi4py is built against
Open MPI.
"""
import ctypes
import sys

try:
    import numpy as np
    from mpi4py import MPI
except ImportError as e:  # pragma: no cover - depends on the host
    print(f"test_mpi4py: SKIP: {e}", flush=True)
    sys.exit(77)

EXPECT = "--expect-topocoll" in sys.argv[1:]
KINDS = ("bcast", "reduce", "allreduce", "allgather")
BIG = 1 << 20                      # a call of this many bytes is never "small"
FCOUNTS = (1, 7, 1001, 40963, 131073)        # float64: 131073 * 8 B > 1 MiB
ICOUNTS = (3, 4099, 262147)                  # int32:   262147 * 4 B > 1 MiB

world = MPI.COMM_WORLD
wrank, wsize = world.Get_rank(), world.Get_size()
failures = 0
checks = 0


def check(ok, what):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
        print(f"[rank {wrank}] FAIL: {what}", file=sys.stderr, flush=True)


def same(got, want, what):
    ok = got.shape == want.shape and np.array_equal(got, want)
    if not ok and got.shape == want.shape:
        bad = np.flatnonzero(got != want)
        what += f" ({bad.size} wrong elements, first at {bad[0]}: {got[bad[0]]} != {want[bad[0]]})"
    check(ok, what)


def data(dtype, n, r, salt):
    """Rank r's input: exact in float64 (small dyadic values, so any
    summation order gives the same bits) and far from int32 overflow."""
    i = np.arange(n, dtype=np.int64)
    v = (i * 7 + r * 1009 + salt * 31) % 1999 - 999
    if dtype == np.float64:
        return v.astype(np.float64) * 0.25
    return v.astype(np.int32)


# ---- topocoll's counters (libtopocoll_pmpi.so preloaded) ---------------------
class Counters(ctypes.Structure):   # topocoll_coll_counters_t
    _fields_ = [("calls", ctypes.c_uint64), ("nonblocking", ctypes.c_uint64),
                ("fallbacks", ctypes.c_uint64), ("native", ctypes.c_uint64)]


COLL = {"bcast": 0, "barrier": 1, "reduce": 2, "allreduce": 3, "allgather": 4}  # topocoll_coll_t


class Info(ctypes.Structure):   # topocoll_comm_info_t (topocoll.h): versioned by struct_size
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("enabled", ctypes.c_int), ("rank", ctypes.c_int), ("size", ctypes.c_int),
                ("node", ctypes.c_int), ("nnodes", ctypes.c_int), ("local_rank", ctypes.c_int),
                ("local_size", ctypes.c_int), ("leader", ctypes.c_int), ("single_copy", ctypes.c_int),
                ("why", ctypes.c_char * 128), ("leaders_policy", ctypes.c_char * 16),
                ("rails", ctypes.c_int), ("rail_leader", ctypes.c_int * 4),
                ("domain_leader", ctypes.c_int), ("nic_score", ctypes.c_int),
                ("built", ctypes.c_int), ("reused", ctypes.c_int),
                ("lazy_calls", ctypes.c_uint64), ("bytes_sc", ctypes.c_uint64),
                ("bytes_cico", ctypes.c_uint64), ("bytes_net", ctypes.c_uint64),
                ("nb_calls", ctypes.c_uint64), ("coll", Counters * 32)]

    def calls(self, kind):
        return self.coll[COLL[kind]].calls

    def fallbacks(self, kind):
        return self.coll[COLL[kind]].fallbacks


try:
    _query = ctypes.CDLL(None).topocoll_comm_query   # the global scope: LD_PRELOAD's libraries
    # MPI_Comm: a pointer under Open MPI, an int under MPICH
    _query.argtypes = [ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p)
                       else ctypes.c_int, ctypes.POINTER(Info)]
    _query.restype = ctypes.c_int
except AttributeError:
    _query = None


def query(comm):
    info = Info(struct_size=ctypes.sizeof(Info))
    rc = _query(MPI._handleof(comm), ctypes.byref(info))
    return info if rc == 0 else None


class Counted:
    """The calls this program made on a communicator, by kind: all, and
    those of BIG bytes or more."""

    def __init__(self):
        self.all = dict.fromkeys(KINDS, 0)
        self.big = dict.fromkeys(KINDS, 0)

    def add(self, kind, nbytes):
        self.all[kind] += 1
        self.big[kind] += nbytes >= BIG


def verify_through_topocoll(comm, made, name):
    if comm.Get_size() == 1:
        return   # no collective to run: topocoll returns at once
    info = query(comm)
    check(info is not None, f"{name}: topocoll_comm_query: communicator not attached")
    if info is None:
        return
    check(info.enabled == 1, f"{name}: topocoll not enabled ({info.why.decode(errors='replace')})")
    for k in KINDS:
        calls, fb = info.calls(k), info.fallbacks(k)
        check(calls >= 1, f"{name}: no MPI_{k.capitalize()} went through topocoll")
        check(calls >= made.big[k], f"{name}: {calls} {k} calls handled by topocoll, "
              f"but {made.big[k]} of >= 1 MiB were made")
        check(calls + fb <= made.all[k], f"{name}: topocoll counts {calls}+{fb} {k} calls, "
              f"{made.all[k]} were made")


# ---- the collectives ---------------------------------------------------------
def run_suite(comm, name, salt):
    made = Counted()
    rank, size = comm.Get_rank(), comm.Get_size()
    roots = sorted({0, size - 1, 1 % size})
    cases = [(np.float64, n) for n in FCOUNTS] + [(np.int32, n) for n in ICOUNTS]
    for ci, (dt, n) in enumerate(cases):
        tag = f"{name} {np.dtype(dt).name}[{n}]"
        nbytes = n * np.dtype(dt).itemsize
        for root in roots:
            s = salt + ci * 17 + root
            # Bcast: the root's array everywhere, the others' sentinels overwritten
            buf = data(dt, n, root, s) if rank == root else np.full(n, -5, dtype=dt)
            comm.Bcast(buf, root=root)
            made.add("bcast", nbytes)
            same(buf, data(dt, n, root, s), f"{tag} Bcast root {root}")
            # Reduce: SUM (float64) / MAX (int32) at the root
            x = data(dt, n, rank, s)
            op, fold, opname = (MPI.SUM, np.add, "SUM") if dt == np.float64 else (MPI.MAX, np.maximum, "MAX")
            want = data(dt, n, 0, s)
            for r in range(1, size):
                want = fold(want, data(dt, n, r, s))
            out = np.full(n, 3, dtype=dt)
            comm.Reduce(x, out if rank == root else None, op=op, root=root)
            made.add("reduce", nbytes)
            if rank == root:
                same(out, want, f"{tag} Reduce {opname} root {root}")
            check(np.array_equal(x, data(dt, n, rank, s)), f"{tag} Reduce root {root}: send buffer changed")
        # Allreduce: SUM, out of place then in place
        s = salt + ci * 17
        want = sum((data(dt, n, r, s) for r in range(1, size)), data(dt, n, 0, s)).astype(dt)
        x = data(dt, n, rank, s)
        out = np.zeros(n, dtype=dt)
        comm.Allreduce(x, out, op=MPI.SUM)
        made.add("allreduce", nbytes)
        same(out, want, f"{tag} Allreduce SUM")
        comm.Allreduce(MPI.IN_PLACE, x, op=MPI.SUM)
        made.add("allreduce", nbytes)
        same(x, want, f"{tag} Allreduce SUM MPI.IN_PLACE")
        if dt == np.int32:
            y = data(dt, n, rank, s + 1)
            comm.Allreduce(MPI.IN_PLACE, y, op=MPI.MIN)
            made.add("allreduce", nbytes)
            want = data(dt, n, 0, s + 1)
            for r in range(1, size):
                want = np.minimum(want, data(dt, n, r, s + 1))
            same(y, want, f"{tag} Allreduce MIN MPI.IN_PLACE")
        # Allgather: n elements per rank
        blk = data(dt, n, rank, s + 2)
        out = np.full(n * size, -7, dtype=dt)
        comm.Allgather(blk, out)
        made.add("allgather", nbytes)
        same(out, np.concatenate([data(dt, n, r, s + 2) for r in range(size)]), f"{tag} Allgather")
    return made


comm = world.Dup()   # the counters of this communicator count this program's calls only
made = run_suite(comm, "dup(COMM_WORLD)", 1)

# The processes sharing memory (MPI's own split type: topocoll passes it
# through), then collectives on the result
shm = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_size() - comm.Get_rank())
check(shm != MPI.COMM_NULL, "Split_type(COMM_TYPE_SHARED) returned MPI.COMM_NULL")
g_shm, g_comm = shm.Get_group(), comm.Get_group()
try:   # a class method in mpi4py 3, a method in 4
    ranks = MPI.Group.Translate_ranks(g_shm, list(range(shm.Get_size())), g_comm)
except TypeError:
    ranks = g_shm.Translate_ranks(list(range(shm.Get_size())), g_comm)
g_shm.Free()
g_comm.Free()
# key: reversed order, so the new rank 0 is the highest rank of comm
check(all(ranks[i] > ranks[i + 1] for i in range(len(ranks) - 1)), f"shared comm's order: {ranks}")
shm_made = run_suite(shm, "Split_type(SHARED)", 2)

if EXPECT:
    check(_query is not None, "topocoll_comm_query not found: libtopocoll_pmpi.so is not preloaded")
    if _query is not None:
        verify_through_topocoll(comm, made, "dup(COMM_WORLD)")
        verify_through_topocoll(shm, shm_made, "Split_type(SHARED)")
        info = query(comm) if comm.Get_size() > 1 else None
        if info is not None and wrank == 0:
            print(f"test_mpi4py: through topocoll on dup(COMM_WORLD): {info.nnodes} node(s), "
                  + ", ".join(f"{k} {info.calls(k)}/{made.all[k]}" for k in KINDS), flush=True)

shm.Free()
comm.Free()
tot = np.array([failures, checks], dtype=np.int64)
world.Allreduce(MPI.IN_PLACE, tot, op=MPI.SUM)
if wrank == 0:
    print(f"test_mpi4py np={wsize}: {int(tot[1])} checks, {int(tot[0])} failed"
          f"{' (topocoll counters checked)' if EXPECT else ''}", flush=True)
sys.exit(1 if tot[0] else 0)
