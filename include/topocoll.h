/*
 * topocoll.h -- public native API of topocoll.
 *
 * topocoll makes MPI collectives topology-aware and kernel-assisted:
 *  - a KNEM-style single-copy engine (declared regions, cookies, rights,
 *    vectorial buffers) over Linux Cross-Memory Attach
 *    (KNEM paper, sections 3.1-3.2 and 4.2);
 *  - hierarchical collectives (HierKNEM paper, sections 3.2-3.4: Bcast,
 *    Algorithm 1; Reduce, Algorithm 2; Allgather, leader-based and
 *    physical ring), Allreduce and Barrier built from the same pieces.
 *
 * Most users never include this header: they run an unmodified MPI program
 * with libtopocoll_pmpi.so preloaded or linked, which routes MPI_Bcast,
 * MPI_Reduce, MPI_Allreduce, MPI_Allgather and MPI_Barrier to the
 * topocoll_* functions below.  This header is for programs that call topocoll
 * directly and for tools.
 *
 * Conventions
 *  - Every function returns an int.  MPI entry points (topocoll_bcast,
 *    topocoll_reduce, ...) return MPI error codes; the engine functions return TOPOCOLL_SUCCESS
 *    (0) or a negative TOPOCOLL_ERR_* code.
 *  - Sizes named *_bytes or "len" are in bytes; "count" is in elements of
 *    the given MPI datatype.
 *  - Thread safety: functions on different communicators may be called
 *    concurrently (MPI_THREAD_MULTIPLE); calls on the same communicator
 *    follow the MPI rule for collectives (one at a time, same order on
 *    every rank).  Region functions on one communicator may be called
 *    concurrently from several threads of the owning process only if they
 *    touch different cookies.
 */
#ifndef TOPOCOLL_H
#define TOPOCOLL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library exports only the functions declared here (it is built with
 * -fvisibility=hidden; its internal tc_* functions stay inside). */
#if defined(__GNUC__)
#define TOPOCOLL_API __attribute__((visibility("default")))
#else
#define TOPOCOLL_API
#endif

#define TOPOCOLL_VERSION_MAJOR 0
#define TOPOCOLL_VERSION_MINOR 5

/* ---- Error codes of the engine functions --------------------------------- */
#define TOPOCOLL_SUCCESS       0
#define TOPOCOLL_ERR_INVAL     (-1) /* bad argument (NULL, niov out of range) */
#define TOPOCOLL_ERR_BOUNDS    (-2) /* offset+length beyond the region */
#define TOPOCOLL_ERR_RIGHTS    (-3) /* direction not granted by the region */
#define TOPOCOLL_ERR_STALE     (-4) /* cookie destroyed (or never existed) */
#define TOPOCOLL_ERR_NOSUPPORT (-5) /* single copy unavailable on this node */
#define TOPOCOLL_ERR_NOSPACE   (-6) /* the owner's region table is full */
#define TOPOCOLL_ERR_SYS       (-7) /* the kernel refused the copy (errno kept) */
#define TOPOCOLL_ERR_NOCTX     (-8) /* communicator not attached (see attach) */
#define TOPOCOLL_COPY_PENDING  (-9) /* an asynchronous copy's status before it ran */

/** Human-readable name of a TOPOCOLL_ERR_* code (static string). */
TOPOCOLL_API const char *topocoll_strerror(int err);

/* ---- Communicator attachment ---------------------------------------------- */

/**
 * Build topocoll's per-communicator context: node discovery (real and
 * virtual nodes), leaders, the per-node shared segment, single-copy
 * detection.  Collective over @comm.  The collectives build it lazily:
 * the first TOPOCOLL_COMM_LAZY calls on a communicator (64 by default)
 * go to the underlying MPI, the next one (or, where it is set, the first
 * of TOPOCOLL_COMM_LAZY_MIN bytes or more) builds it; attach builds it at
 * once (call it before using the region API).  Idempotent.  When @comm is
 * freed the context is kept for the next communicator of the same group
 * (MPI_Comm_dup, a split into the same processes), which takes it over
 * without set-up; kept ones are released at MPI_Finalize.
 *
 * Returns MPI_SUCCESS, or an MPI error class (MPI_ERR_COMM for an
 * intercommunicator or MPI_COMM_NULL).  If topocoll cannot set up
 * (e.g. no shared memory), the call still succeeds and the collectives
 * fall back to the underlying MPI; topocoll_comm_query() says so.
 */
TOPOCOLL_API int topocoll_comm_attach(MPI_Comm comm);

/** What topocoll knows about a communicator (filled by topocoll_comm_query). */
#define TOPOCOLL_RAIL_MAX 4 /* rails (NICs) the collectives split traffic over */

/** The collectives topocoll counts: the index of topocoll_comm_info_t's
 *  coll[] (topocoll_coll_name gives each one's MPI name).  New collectives
 *  take the next values; existing values never change.  Since 0.6. */
typedef enum topocoll_coll {
    TOPOCOLL_COLL_BCAST = 0,
    TOPOCOLL_COLL_BARRIER,
    TOPOCOLL_COLL_REDUCE,
    TOPOCOLL_COLL_ALLREDUCE,
    TOPOCOLL_COLL_ALLGATHER,
    TOPOCOLL_COLL_SCAN,
    TOPOCOLL_COLL_GATHER,
    TOPOCOLL_COLL_SCATTER,
    TOPOCOLL_COLL_ALLTOALL,
    TOPOCOLL_COLL_EXSCAN,
    TOPOCOLL_COLL_GATHERV,
    TOPOCOLL_COLL_SCATTERV,
    TOPOCOLL_COLL_ALLGATHERV,
    TOPOCOLL_COLL_ALLTOALLV,
    TOPOCOLL_COLL_REDUCE_SCATTER_BLOCK,
    TOPOCOLL_COLL_REDUCE_SCATTER,
    TOPOCOLL_COLL_ALLTOALLW, /* since 0.6 */
    TOPOCOLL_COLL_COUNT      /* collectives this version counts */
} topocoll_coll_t;
#define TOPOCOLL_COLL_MAX 32 /* coll[]'s room: later collectives fit without a new layout */

/** One collective's counters on a communicator, since it was attached
 *  (this process only).  A call counts once, in one of calls, fallbacks,
 *  native. */
typedef struct topocoll_coll_counters {
    uint64_t calls;       /* calls topocoll ran, blocking and nonblocking */
    uint64_t nonblocking; /* of those, nonblocking ones (counted once finished) */
    uint64_t fallbacks;   /* calls passed to the native MPI as a fallback (a datatype/op
                             pair not handled, no single copy, a set-up that failed) */
    uint64_t native;      /* calls left to the native MPI by choice on several nodes:
                             at or below TOPOCOLL_*_FLAT_MAX, or measured faster */
} topocoll_coll_counters_t;

/** Versioned: set struct_size to sizeof(topocoll_comm_info_t) before the
 *  query (TOPOCOLL_COMM_INFO_INIT does); the library writes only the
 *  struct_size bytes the caller has, so a program built against this
 *  header reads a later library's answer correctly.  Since 0.6 (0.5's
 *  layout, without struct_size, is not compatible: SOVERSION 1). */
typedef struct topocoll_comm_info {
    size_t struct_size;      /* in: sizeof(topocoll_comm_info_t) of the caller */
    int enabled;             /* 1 if topocoll accelerates collectives on it */
    int rank, size;          /* in the communicator */
    int node;                /* index of this process's (virtual) node, 0..nnodes-1 */
    int nnodes;              /* number of (virtual) nodes spanned */
    int local_rank;          /* rank among the processes of the node */
    int local_size;          /* processes on the node */
    int leader;              /* communicator rank of this node's leader: elected by
                                TOPOCOLL_LEADERS (NUIOA paper, section 3.2) */
    int single_copy;         /* 1: CMA single copy; 0: copy-in/copy-out only */
    char mechanism_why[128]; /* why that mechanism was chosen */
    /* NIC-aware leaders (NUIOA paper, section 3.2). */
    char leaders_policy[16]; /* the election's policy: auto|nic|first|numa|package */
    int rails;               /* rails: NICs every node has a distinct leader for (>= 1) */
    int rail_leader[TOPOCOLL_RAIL_MAX]; /* communicator rank of this node's leader of
                             each rail (rail 0: leader; unused entries: leader) */
    int domain_leader;                  /* communicator rank of this process's package / NUMA
                                           node leader (HierKNEM 4.1), -1 when the policy
                                           has none or the process is unbound */
    int nic_score;                      /* this process's distance to rail 0's NIC: 0 inside its
                                           locality, 1 same NUMA node, 2 same package, 10+ by
                                           NUMA distance, 1000 unbound; -1 without a NIC */
    /* The context's life (cheap communicators). */
    int built;           /* 0: not built yet (the first TOPOCOLL_COMM_LAZY
                            collectives go to the native MPI; enabled is 0) */
    int reused;          /* 1: built by taking over the context of a freed
                            communicator of the same group (no set-up) */
    uint64_t lazy_calls; /* collectives passed to the native MPI before it was built */
    /* Bytes since attach (this process only). */
    uint64_t bytes_single_copy; /* bytes this process copied by CMA */
    uint64_t bytes_cico;        /* bytes this process copied through the segment */
    uint64_t bytes_bcast_net;   /* Bcast bytes this process received from another
                                   node (as a leader, or a rail leader: NUIOA) */
    uint64_t nb_calls;          /* nonblocking collectives topocoll ran (all kinds) */
    /* Per collective, indexed by topocoll_coll_t (entries past
     * TOPOCOLL_COLL_COUNT: zero). */
    topocoll_coll_counters_t coll[TOPOCOLL_COLL_MAX];
    /* Single-copy regions (KNEM's registrations, KNEM paper section 3.2)
     * this process declared for the collectives since attach: one per
     * exposed buffer and call, but once per buffer for a persistent
     * request, which keeps them across its starts.  Since 0.6. */
    uint64_t regions_declared;
} topocoll_comm_info_t;

/** An initializer for topocoll_comm_info_t: struct_size set, the rest zero. */
#define TOPOCOLL_COMM_INFO_INIT                     \
    {                                               \
        .struct_size = sizeof(topocoll_comm_info_t) \
    }

/** The MPI name of collective @coll (topocoll_coll_t: "MPI_Bcast"), or
 *  NULL out of range.  Thread-safe, local. */
TOPOCOLL_API const char *topocoll_coll_name(int coll);

/* ---- The report (TOPOCOLL_REPORT=1; docs/report.md) ------------------------ */

/** 1 if the report is on (TOPOCOLL_REPORT=1), else 0.  Thread-safe once
 *  MPI is initialised.  Since 0.6. */
TOPOCOLL_API int topocoll_report_enabled(void);

/** Count one call of collective @coll (topocoll_coll_t) moving @bytes
 *  bytes (the message, or one block of a block exchange) that spent
 *  @seconds inside the call; the interposition library counts every call
 *  it takes.  No effect with the report off or @coll out of range.
 *  Thread-safe.  Since 0.6. */
TOPOCOLL_API void topocoll_report_call(int coll, size_t bytes, double seconds);

/** Write the report: collective over @comm (the interposition library
 *  calls it on MPI_COMM_WORLD in MPI_Finalize): every rank's counts are
 *  gathered, and rank 0 writes one line per collective called to
 *  TOPOCOLL_REPORT_FILE, or stderr:
 *    topocoll: report MPI_Bcast calls=N accelerated=N bytes=N time_s=S native=N (reason)
 *  calls and bytes summed over the ranks, time_s the most any rank spent
 *  inside the calls, reason the most frequent one a rank gave.
 *  MPI_SUCCESS, MPI_ERR_NO_MEM, or an MPI error of the gather.  Since 0.6. */
TOPOCOLL_API int topocoll_report_write(MPI_Comm comm);

/**
 * Query @comm's context into @info, whose struct_size the caller has set
 * (TOPOCOLL_COMM_INFO_INIT); at most struct_size bytes are written.
 * Local (not collective).  Returns MPI_SUCCESS, TOPOCOLL_ERR_NOCTX if
 * @comm has no context, TOPOCOLL_ERR_INVAL for a NULL @info or a
 * struct_size smaller than the fields before mechanism_why.
 */
TOPOCOLL_API int topocoll_comm_query(MPI_Comm comm, topocoll_comm_info_t *info);

/* ---- Single-copy engine: regions and cookies (KNEM paper, section 3.2) ---- */

typedef uint64_t topocoll_cookie_t;

#define TOPOCOLL_RIGHT_READ     0x1u /* peers may copy from the region */
#define TOPOCOLL_RIGHT_WRITE    0x2u /* peers may copy into the region */
#define TOPOCOLL_REGION_MAX_IOV 16   /* segments per region */

/**
 * Declare a region made of @niov (1..TOPOCOLL_REGION_MAX_IOV) memory
 * segments of the calling process, with @rights (TOPOCOLL_RIGHT_*), on the
 * node of attached communicator @comm; the region's byte stream is the
 * concatenation of the segments.  The cookie can be passed to any process
 * of the same node (by any means) and stays valid until destroyed.
 * Non-blocking, no system call.  Local.
 *
 * Returns TOPOCOLL_SUCCESS, TOPOCOLL_ERR_INVAL, TOPOCOLL_ERR_NOSPACE (64
 * live regions per process and communicator, of which the persistent
 * collective requests on it may hold 32), TOPOCOLL_ERR_NOCTX.
 */
TOPOCOLL_API int topocoll_region_create(MPI_Comm comm, const struct iovec *iov, int niov,
                                        unsigned rights, topocoll_cookie_t *cookie);

/**
 * Destroy a region created by the calling process.  Copies submitted with
 * the cookie afterwards fail with TOPOCOLL_ERR_STALE.  The caller must
 * ensure no copy is in flight (as with KNEM, destruction does not wait).
 * Returns TOPOCOLL_SUCCESS, TOPOCOLL_ERR_STALE, TOPOCOLL_ERR_INVAL.
 */
TOPOCOLL_API int topocoll_region_destroy(MPI_Comm comm, topocoll_cookie_t cookie);

#define TOPOCOLL_COPY_FROM_REGION 0 /* read: region -> local segments */
#define TOPOCOLL_COPY_TO_REGION   1 /* write: local segments -> region */

/**
 * KNEM "inline copy": copy between the region named by @cookie (owned by
 * another process of the same node, or by the caller), starting @offset
 * bytes into it, and @nlocal local segments; the length is the sum of the
 * local segments.  Synchronous: on success all bytes were moved.
 *
 * The region's bounds and rights are checked before any byte moves:
 * TOPOCOLL_ERR_BOUNDS, TOPOCOLL_ERR_RIGHTS, TOPOCOLL_ERR_STALE are returned
 * without copying.  TOPOCOLL_ERR_NOSUPPORT when the node has no working
 * single copy (TOPOCOLL_SINGLE_COPY=none, or CMA refused by the kernel).
 * Returns the number of bytes copied (>= 0) on success.
 */
TOPOCOLL_API long long topocoll_copy(MPI_Comm comm, topocoll_cookie_t cookie, size_t offset,
                                     const struct iovec *local, int nlocal, int direction);

/**
 * KNEM "region copy" (KNEM paper, section 3.4): copy @length bytes from
 * region @src at @src_offset to region @dst at @dst_offset; neither region
 * need belong to the caller, so a process (or its progress thread) can
 * move data between two other processes of its node.  Rights (READ on
 * @src, WRITE on @dst) and bounds are checked on both before any byte
 * moves.  Linux CMA has no third-party copy: when the caller owns neither
 * region the bytes go through a 256 KiB bounce buffer of the caller's
 * (two kernel copies; KNEM made one).  Returns @length, or a
 * TOPOCOLL_ERR_*.  Local; not thread-safe on one communicator.
 */
TOPOCOLL_API long long topocoll_region_copy(MPI_Comm comm, topocoll_cookie_t src, size_t src_offset,
                                            topocoll_cookie_t dst, size_t dst_offset,
                                            size_t length);

/**
 * Asynchronous copies (KNEM paper, sections 3.4 and 4.3): as
 * topocoll_copy and topocoll_region_copy, but the call only checks its
 * arguments and queues the copy; *@status is TOPOCOLL_COPY_PENDING until
 * the copy has run, then its result (bytes moved, or a TOPOCOLL_ERR_*).
 * The copy runs on this process's progress thread when one runs
 * (TOPOCOLL_COMM_CORES > 0: the paper's offload to another core), else
 * in topocoll_copy_poll / topocoll_progress.  @local, the regions and
 * @status must stay valid until the status is final.  Returns
 * TOPOCOLL_SUCCESS, or TOPOCOLL_ERR_INVAL, TOPOCOLL_ERR_NOSPACE (64
 * copies pending), TOPOCOLL_ERR_NOCTX, TOPOCOLL_ERR_NOSUPPORT.
 */
TOPOCOLL_API int topocoll_copy_async(MPI_Comm comm, topocoll_cookie_t cookie, size_t offset,
                                     const struct iovec *local, int nlocal, int direction,
                                     long long *status);
TOPOCOLL_API int topocoll_region_copy_async(MPI_Comm comm, topocoll_cookie_t src, size_t src_offset,
                                            topocoll_cookie_t dst, size_t dst_offset, size_t length,
                                            long long *status);
/** Poll an asynchronous copy's @status (knem_poll_copy_status): runs
 *  pending copies if no progress thread has, then returns the status
 *  (TOPOCOLL_COPY_PENDING, bytes moved, or a TOPOCOLL_ERR_*). */
TOPOCOLL_API long long topocoll_copy_poll(const long long *status);

/* ---- Collectives (HierKNEM paper, sections 3.2-3.4) ----------------------- */

/**
 * MPI_Bcast semantics.  @count elements of @datatype from @root's @buffer
 * to every rank of @comm.  Hierarchical: an inter-node pipelined binomial
 * tree between node leaders (the root leads its own node), and single-copy
 * reads by the other processes of each node as each segment lands; copy-in/
 * copy-out through the node's shared segment below TOPOCOLL_BCAST_CICO_MAX
 * bytes or when single copy is unavailable.  Non-contiguous datatypes are
 * packed.  Intercommunicators and erroneous arguments are passed to
 * PMPI_Bcast, so errors are the native MPI's, raised through @comm's error
 * handler.  Collective; returns an MPI error code.
 */
TOPOCOLL_API int topocoll_bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                                MPI_Comm comm);

/**
 * MPI_Barrier semantics, hierarchical: the processes of each node meet on
 * single-writer flags in the node's shared segment (no system call while
 * they arrive close together), the node leaders run the underlying MPI's
 * barrier between nodes, then release their nodes (HierKNEM paper, the
 * two-level composition of sections 3-4).  Intercommunicators and
 * MPI_COMM_NULL go to PMPI_Barrier (native error).  Collective; returns an
 * MPI error code.  Waiting processes spin briefly, then yield the core and
 * poll the MPI progress engine.
 */
TOPOCOLL_API int topocoll_barrier(MPI_Comm comm);

/**
 * MPI_Reduce semantics (HierKNEM paper, section 3.3, Algorithm 2).
 * @count elements of @datatype from every rank's @sendbuf (MPI_IN_PLACE at
 * @root: the root's input is in @recvbuf) combined with @op into @root's
 * @recvbuf (ignored elsewhere).  Several nodes: the node leaders reduce
 * over the underlying MPI, one pipeline segment at a time
 * (TOPOCOLL_REDUCE_SEGSIZE bytes, default HierKNEM Table 1), while the
 * node's other processes fold the next segment by single-copy reads of
 * every local input and push it into the leader's buffer by single-copy
 * write.  One node: every process folds a slice and writes it into the
 * root's buffer.  At or below TOPOCOLL_REDUCE_CICO_MAX bytes: through the
 * shared segment.
 * Ops: every predefined op on the predefined C datatypes MPI defines it
 * for (MINLOC/MAXLOC on the pair types), user ops through
 * MPI_Reduce_local; a non-commutative op is combined in rank order on one
 * node and passed to PMPI_Reduce across nodes.  Passed to PMPI_Reduce as
 * well: intercommunicators, erroneous arguments (native error class
 * through @comm's error handler), datatypes whose elements are not one
 * contiguous run, predefined ops on derived datatypes, and messages above
 * the CICO size where single copy is unavailable.
 * Collective; returns an MPI error code.
 */
TOPOCOLL_API int topocoll_reduce(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);

/**
 * MPI_Allreduce semantics (MPI_IN_PLACE: input in @recvbuf).  Inside each
 * node a reduce-scatter by single-copy reads (every local process folds
 * one slice of each pipeline segment), between nodes each slice reduced
 * and broadcast over the underlying MPI by the processes owning it (every
 * core drives the network), then an allgather by single-copy reads.
 * Every rank receives bit-identical results, reproducible run to run for
 * a given communicator layout (fixed combination order), floating point
 * included.  Ops, datatypes and fallbacks as topocoll_reduce.
 * Collective; returns an MPI error code.
 */
TOPOCOLL_API int topocoll_allreduce(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/**
 * MPI_Allgather semantics (HierKNEM paper, section 3.4): block r of
 * @recvbuf (@recvcount elements of @recvtype, at r * recvcount * extent)
 * receives rank r's @sendbuf (MPI_IN_PLACE: block r of @recvbuf already
 * holds it).  Leader-based (non-leaders write their block into the
 * leader's buffer and fetch each node's blocks as the leaders' ring
 * delivers them) or a ring in physical order (node, package, NUMA node,
 * core); TOPOCOLL_ALLGATHER_ALG=auto|leader|ring.  Non-contiguous
 * datatypes are packed.  Passed to PMPI_Allgather: intercommunicators,
 * erroneous arguments, blocks of 2 GiB or more, and messages above the
 * CICO size where single copy is unavailable.
 * Collective; returns an MPI error code.
 */
TOPOCOLL_API int topocoll_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm);

/* ---- Nonblocking collectives and progress -----------------------------------
 * Progress-threads paper (Didelot, Carribault, Perache, Jalby), sections 4
 * to 6.  Each call has the blocking call's semantics, screening and
 * fallbacks (to the native PMPI_I* call) and returns at once with
 * @request, an MPI generalized request: MPI_Wait, MPI_Test, MPI_Waitall,
 * MPI_Testall, MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome,
 * MPI_Request_get_status and MPI_Request_free accept it mixed with native
 * requests.  A communicator's operations run one after the other in call
 * order; operations on different communicators progress independently.
 *
 * Progress.  The underlying MPI cannot progress a generalized request, so
 * topocoll progresses its operations in: topocoll's calls (every
 * collective, and topocoll_wait & co. below, which libtopocoll_pmpi.so
 * installs as MPI_Wait & co.); and, with TOPOCOLL_COMM_CORES > 0 and
 * MPI_THREAD_MULTIPLE, a progress thread per process placed by
 * TOPOCOLL_PROGRESS_PLACEMENT (bind | numa | odd-even: sections 4.2 and 5).
 * Without a progress thread an operation does not advance while the
 * application computes or blocks in a native call (MPI_Recv): call
 * topocoll_progress() (or MPI_Test) now and then, as with most MPI
 * libraries' nonblocking collectives.
 * Buffers belong to the operation until it completes (MPI semantics).
 * Thread safety: as the MPI calls; the progress thread is topocoll's own.
 */

/** MPI_Ibcast semantics (see topocoll_bcast).  Returns an MPI error code. */
TOPOCOLL_API int topocoll_ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
                                 MPI_Comm comm, MPI_Request *request);
/** MPI_Ibarrier semantics (see topocoll_barrier). */
TOPOCOLL_API int topocoll_ibarrier(MPI_Comm comm, MPI_Request *request);
/** MPI_Ireduce semantics (see topocoll_reduce).  Erroneous arguments are
 *  raised at the call, through @comm's error handler. */
TOPOCOLL_API int topocoll_ireduce(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                  MPI_Request *request);
/** MPI_Iallreduce semantics (see topocoll_allreduce). */
TOPOCOLL_API int topocoll_iallreduce(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *request);
/** MPI_Iallgather semantics (see topocoll_allgather). */
TOPOCOLL_API int topocoll_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Request *request);

/**
 * MPI_Gather, MPI_Scatter, MPI_Alltoall semantics (MPI-4.0 sections 6.5,
 * 6.6, 6.8), MPI_IN_PLACE where MPI allows it.  On one node, by single
 * copy (KNEM paper, sections 3.3 and 5.5): Gather's senders write their
 * blocks into the root's receive buffer, Scatter's receivers read theirs
 * out of the root's send buffer, Alltoall's processes write block j into
 * process j's receive buffer, each starting with a different peer; blocks
 * of at most 2 KiB go through the node's shared items (no system call).
 * Non-contiguous datatypes are packed.  Passed to the native MPI:
 * intercommunicators, several nodes, blocks of 2 GiB or more, erroneous
 * arguments after the checks MPI makes (negative counts, null datatypes,
 * an invalid root raise their class through the communicator's handler).
 * Only the arguments MPI makes significant on a rank are read there.
 * Collective; returns an MPI error code.
 */
TOPOCOLL_API int topocoll_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm);
TOPOCOLL_API int topocoll_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm);
TOPOCOLL_API int topocoll_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm);
/**
 * MPI_Scan and MPI_Exscan semantics (MPI-4.0 section 6.11): the chain of
 * the progress-threads paper (section 5): rank r receives the prefix of
 * ranks 0..r-1 from r-1 over the MPI library's point-to-point, combines
 * it with its input in rank order (non-commutative ops exact, the same
 * bits on every run) and sends the result on, pipelined in segments from
 * 3 ranks.  MPI_IN_PLACE allowed; MPI_Exscan leaves rank 0's recvbuf as
 * it is.  Every predefined datatype/op pair topocoll handles (coll/op);
 * others, intercommunicators and erroneous arguments go to the native MPI.
 * Collective; returns an MPI error code.
 */
TOPOCOLL_API int topocoll_scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm);
TOPOCOLL_API int topocoll_exscan(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/** MPI_Iexscan semantics (see topocoll_exscan; topocoll_iscan: MPI_Iscan). */
TOPOCOLL_API int topocoll_iexscan(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  MPI_Request *request);

/** MPI_Igather, MPI_Iscatter, MPI_Ialltoall semantics (see topocoll_gather). */
TOPOCOLL_API int topocoll_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Request *request);
TOPOCOLL_API int topocoll_iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm, MPI_Request *request);
TOPOCOLL_API int topocoll_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Request *request);
/**
 * MPI_Iscan semantics: @recvbuf of rank r receives the combination of the
 * @sendbufs of ranks 0..r in rank order (MPI_IN_PLACE: input in @recvbuf).
 * The chain algorithm the paper studies (section 5): each rank receives
 * the prefix from r-1, combines and sends to r+1, pipelined by 64 KiB
 * segments; every predefined op/type pair and user ops (commutative or
 * not: the order is the canonical one).  Returns an MPI error code.
 */
TOPOCOLL_API int topocoll_iscan(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request);

/**
 * MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv semantics (MPI-4.0 sections
 * 6.5, 6.6, 6.7): blocks of per-rank counts (elements of the receive or
 * send type) at per-rank displacements (in extents), zero counts and gaps
 * included, MPI_IN_PLACE where MPI allows it.  On one node (with single
 * copy), every size: each block's sender puts it in its shared-memory
 * item when it is at most 4 KiB, else leaves it to single copy over its
 * exposed buffer (KNEM paper, sections 3.3 and 5.5: one CMA call), and
 * says which in the item; Gatherv's non-roots write their long blocks
 * into the root's buffer, Scatterv's and Allgatherv's readers read them.
 * Counts that disagree fail with MPI_ERR_TRUNCATE.  Non-contiguous
 * datatypes are packed (an indexed type over the user's).  Allgatherv
 * also runs across nodes of as many processes each (the per-slice
 * exchange).  Passed to the native MPI: Gatherv and Scatterv on several
 * nodes, communicators of more than TOPOCOLL_CICO_SLOT / 16 - 1 ranks,
 * intercommunicators, erroneous arguments after the checks MPI makes.  Only the arguments MPI makes
 * significant on a rank are read there.  Collective; returns an MPI error
 * code.
 */
TOPOCOLL_API int topocoll_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, int root, MPI_Comm comm);
TOPOCOLL_API int topocoll_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                   MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   MPI_Datatype recvtype, int root, MPI_Comm comm);
TOPOCOLL_API int topocoll_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm);
/**
 * MPI_Alltoallv semantics (MPI-4.0 section 6.8): on one node, every
 * process's item holds its send table and its blocks of at most 4 KiB;
 * each process copies its block out of every other's item, or reads it
 * by single copy out of that process's send buffer (one system call),
 * into its receive buffer at its own displacement.  Counts that disagree
 * fail with MPI_ERR_TRUNCATE.  MPI_IN_PLACE, zero counts, gaps and
 * non-contiguous datatypes (packed) allowed.  Several nodes of as many
 * processes each: the per-slice exchange (one message per pair of slices
 * and nodes); otherwise the native MPI.  Collective; returns an MPI error
 * code.
 */
TOPOCOLL_API int topocoll_alltoallv(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm);
/** MPI_Ialltoallv semantics (see topocoll_alltoallv). */
TOPOCOLL_API int topocoll_ialltoallv(const void *sendbuf, const int sendcounts[],
                                     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
/**
 * MPI_Alltoallw semantics (MPI-4.0 section 6.8): MPI_Alltoallv with a
 * datatype per rank on each side and displacements in bytes.  Each block
 * goes as its bytes (counts[r] x the size of types[r]; the two sides'
 * type signatures must match, as MPI requires), the same way as
 * topocoll_alltoallv's: out of items or by single copy on one node, the
 * per-slice exchange on several nodes of as many processes each, else the
 * native MPI.  Where a side's datatypes are all contiguous its blocks are
 * read or written in place; otherwise that side is packed (or unpacked)
 * with a struct type of its counts, displacements and datatypes (MPI-4.0
 * section 5.1.2).  MPI_IN_PLACE, zero counts and gaps allowed; the
 * datatype of a zero count is not read (it may be MPI_DATATYPE_NULL);
 * MPI_DATATYPE_NULL for a count above 0: MPI_ERR_TYPE.  Counts that
 * disagree fail with MPI_ERR_TRUNCATE.  A persistent Alltoallw (and any
 * persistent irregular exchange) packs a side with gaps again at each
 * MPI_Start.  Collective; returns an MPI error code.  Since 0.6.
 */
TOPOCOLL_API int topocoll_alltoallw(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], const MPI_Datatype sendtypes[],
                                    void *recvbuf, const int recvcounts[], const int rdispls[],
                                    const MPI_Datatype recvtypes[], MPI_Comm comm);
/** MPI_Ialltoallw semantics (see topocoll_alltoallw): the arrays are read
 *  at the call (the standard lets the caller keep them until completion;
 *  topocoll does not need them after). */
TOPOCOLL_API int topocoll_ialltoallw(const void *sendbuf, const int sendcounts[],
                                     const int sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, const int recvcounts[], const int rdispls[],
                                     const MPI_Datatype recvtypes[], MPI_Comm comm,
                                     MPI_Request *request);
/**
 * MPI_Reduce_scatter_block and MPI_Reduce_scatter semantics (MPI-4.0
 * sections 6.10.1, 6.10.2): every process's @sendbuf holds the blocks of
 * all ranks back to back (@recvcount elements each, or @recvcounts[r] for
 * rank r; the same counts on every rank); rank r's @recvbuf gets its
 * block reduced over every process with @op.  MPI_IN_PLACE: the operand
 * is @recvbuf, whose first block gets the result.  On one node by single
 * copy, from 16 KiB blocks on average: each process folds its own block
 * of every process's exposed operand (no message, no intermediate copy;
 * canonical order for non-commutative ops).  Several nodes with as many
 * processes each, commutative ops: each process folds, over its node, the
 * blocks of the processes with its local rank on every node, then those
 * processes run a ring reduce-scatter among themselves in 32 KiB messages
 * (each node sends (N-1)/N of the vector once, spread over its
 * processes).  The datatype/op pairs of topocoll_allreduce.  Passed to
 * the native MPI: smaller blocks on one node, up to
 * TOPOCOLL_REDUCE_SCATTER[_BLOCK]_FLAT_MAX bytes (the whole vector) on
 * several nodes, unequal nodes, non-commutative ops across nodes,
 * datatypes topocoll does not reduce, intercommunicators.  Collective;
 * returns an MPI error code (negative counts: MPI_ERR_COUNT).
 */
TOPOCOLL_API int topocoll_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
TOPOCOLL_API int topocoll_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/** MPI_Ireduce_scatter_block, MPI_Ireduce_scatter semantics (see
 *  topocoll_reduce_scatter_block); @recvcounts must stay as it is until
 *  the request completes. */
TOPOCOLL_API int topocoll_ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                MPI_Request *request);
TOPOCOLL_API int topocoll_ireduce_scatter(const void *sendbuf, void *recvbuf,
                                          const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                          MPI_Comm comm, MPI_Request *request);
/** MPI_Igatherv, MPI_Iscatterv, MPI_Iallgatherv semantics (see
 *  topocoll_gatherv); the count and displacement arrays must stay as they
 *  are until the request completes (MPI-4.0 section 6.12). */
TOPOCOLL_API int topocoll_igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, int root, MPI_Comm comm,
                                   MPI_Request *request);
TOPOCOLL_API int topocoll_iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                                    MPI_Request *request);
TOPOCOLL_API int topocoll_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, const int recvcounts[], const int displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);

/** Advance every outstanding nonblocking operation of this process once,
 *  without blocking; returns how many are still outstanding. */
TOPOCOLL_API int topocoll_progress(void);

/* MPI_Wait, MPI_Test, ... with progress: the same arguments and results
 * as the MPI calls, for native and topocoll requests alike. */
TOPOCOLL_API int topocoll_wait(MPI_Request *request, MPI_Status *status);
TOPOCOLL_API int topocoll_test(MPI_Request *request, int *flag, MPI_Status *status);
TOPOCOLL_API int topocoll_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
TOPOCOLL_API int topocoll_testall(int count, MPI_Request requests[], int *flag,
                                  MPI_Status statuses[]);
TOPOCOLL_API int topocoll_waitany(int count, MPI_Request requests[], int *index,
                                  MPI_Status *status);
TOPOCOLL_API int topocoll_testany(int count, MPI_Request requests[], int *index, int *flag,
                                  MPI_Status *status);
TOPOCOLL_API int topocoll_waitsome(int count, MPI_Request requests[], int *outcount, int indices[],
                                   MPI_Status statuses[]);
TOPOCOLL_API int topocoll_testsome(int count, MPI_Request requests[], int *outcount, int indices[],
                                   MPI_Status statuses[]);
TOPOCOLL_API int topocoll_request_get_status(MPI_Request request, int *flag, MPI_Status *status);

/**
 * Persistent collectives (MPI-4.0 section 6.13): MPI_<Coll>_init semantics
 * (MPICH 4; Open MPI 4.1's MPIX_<Coll>_init), the arguments of the
 * blocking call then @info (ignored) and @request.  Local.  The screening
 * and the plan are made here, once: where topocoll runs the call, the
 * request is topocoll's and each topocoll_start queues the same operation
 * again (no screening, plan, allocation or MPI request per start); where the native MPI runs it
 * (the cases of the blocking call, non-contiguous buffers), the request is the native MPI's
 * persistent request.  On a communicator whose context is not built yet
 * (TOPOCOLL_COMM_LAZY) the native MPI's nonblocking call runs each start until a
 * blocking collective there builds it; the first start after that makes
 * the request topocoll's, under the same handle (derived datatypes the
 * call reads are duplicated for it; MPI_Alltoallw and user-defined
 * operations stay native).  Buffers, counts and displacements belong to the
 * request from here until it is freed.  Start with topocoll_start /
 * topocoll_startall, complete with topocoll_wait & co. (which return an
 * inactive request's empty status at once), free with
 * topocoll_request_free.  Errors: as the nonblocking call; MPI_Start on
 * an active request gives MPI_ERR_REQUEST, on one whose communicator was
 * freed MPI_ERR_COMM.  Thread safety: as the MPI calls.
 */
TOPOCOLL_API int topocoll_bcast_init(void *buffer, int count, MPI_Datatype datatype, int root,
                                     MPI_Comm comm, MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_reduce_init(const void *sendbuf, void *recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                      MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_allreduce_init(const void *sendbuf, void *recvbuf, int count,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                         MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_scan_init(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request);
TOPOCOLL_API int topocoll_exscan_init(const void *sendbuf, void *recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                      MPI_Comm comm, MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                       int root, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request);
TOPOCOLL_API int topocoll_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, int root, MPI_Comm comm,
                                       MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_scatterv_init(const void *sendbuf, const int sendcounts[],
                                        const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                        int recvcount, MPI_Datatype recvtype, int root,
                                        MPI_Comm comm, MPI_Info info, MPI_Request *request);
TOPOCOLL_API int topocoll_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, const int recvcounts[], const int displs[],
                                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request);
TOPOCOLL_API int topocoll_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                         const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int rdispls[],
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request);
TOPOCOLL_API int topocoll_reduce_scatter_block_init(const void *sendbuf, void *recvbuf,
                                                    int recvcount, MPI_Datatype datatype, MPI_Op op,
                                                    MPI_Comm comm, MPI_Info info,
                                                    MPI_Request *request);
TOPOCOLL_API int topocoll_reduce_scatter_init(const void *sendbuf, void *recvbuf,
                                              const int recvcounts[], MPI_Datatype datatype,
                                              MPI_Op op, MPI_Comm comm, MPI_Info info,
                                              MPI_Request *request);
TOPOCOLL_API int topocoll_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                         const int sdispls[], const MPI_Datatype sendtypes[],
                                         void *recvbuf, const int recvcounts[], const int rdispls[],
                                         const MPI_Datatype recvtypes[], MPI_Comm comm,
                                         MPI_Info info, MPI_Request *request);
/** MPI_Start, MPI_Startall, MPI_Request_free semantics (MPI-4.0 sections
 *  3.9, 3.7.3) for topocoll's persistent requests and native ones alike;
 *  freeing an active persistent collective request (erroneous) waits for
 *  it first. */
TOPOCOLL_API int topocoll_start(MPI_Request *request);
TOPOCOLL_API int topocoll_startall(int count, MPI_Request requests[]);
TOPOCOLL_API int topocoll_request_free(MPI_Request *request);

/** The thread level to ask MPI_Init_thread for: MPI_THREAD_MULTIPLE when
 *  TOPOCOLL_COMM_CORES > 0, else @required. */
TOPOCOLL_API int topocoll_progress_thread_level(int required);
/** After MPI_Init_thread (@provided: what MPI gave): start the progress
 *  thread if communication cores are configured and @provided is
 *  MPI_THREAD_MULTIPLE (else a one-line warning).  1 if a thread runs.
 *  Collective over MPI_COMM_WORLD (call it on every process, right after
 *  MPI_Init_thread).  libtopocoll_pmpi.so calls it from MPI_Init /
 *  MPI_Init_thread. */
TOPOCOLL_API int topocoll_progress_init(int provided);
/** Before MPI_Finalize: finish the operations still running (released
 *  with MPI_Request_free) and join the progress thread.
 *  libtopocoll_pmpi.so calls it from MPI_Finalize. */
TOPOCOLL_API void topocoll_progress_fini(void);
/** OS index of the core the progress thread is bound to; -1 if none. */
TOPOCOLL_API int topocoll_progress_core(void);

/* ---- Hardware-topology communicators ----------------------------------------
 * Goglin, Jeannot, Mansouri, Mercier, "A Hierarchical Model to Manage
 * Hardware Topology in MPI Applications" (RR-9077), sections 3 and 4, and
 * MPI 4.0 section 7.4.2 (MPI_COMM_TYPE_HW_GUIDED / HW_UNGUIDED).
 *
 * A process belongs to a chain of resources, top first: the network
 * switches above its node (a Slurm topology.conf named by
 * TOPOCOLL_NETWORK_TOPOLOGY), its node (a host, or a virtual node
 * "vn<k>" under TOPOCOLL_VIRTUAL_NODES), then every hwloc object that
 * contains its binding: never below it (section 3.2.4), so an unbound
 * process stops at its node.  Objects whose cpuset equals the one above
 * are one level (section 3.2.2), named after the highest type in hwloc 2's
 * tree (Package over its NUMANode and L3Cache).  Level type strings are
 * "Switch", "Machine" and hwloc's type names ("Package", "NUMANode",
 * "L3Cache", "L2Cache", "L1Cache", "Core", "PU", "Group", "Die").
 *
 * The MPI_ prefix belongs to the MPI library: the split types are
 * TOPOCOLL_COMM_TYPE_*.  With libtopocoll_pmpi.so, MPI_Comm_split_type
 * accepts them (and MPI_COMM_TYPE_HW_GUIDED/HW_UNGUIDED where mpi.h has
 * them, replacing the native implementation), MPI_Comm_get_info reports
 * the level keys, and MPI_Init exchanges every process's location once.
 */

/** The paper's MPI_COMM_TYPE_PHYSICAL_TOPOLOGY: the highest level that
 *  strictly splits the communicator (same as HW_UNGUIDED). */
#define TOPOCOLL_COMM_TYPE_PHYSICAL_TOPOLOGY 0x7c0001
#ifdef MPI_COMM_TYPE_HW_GUIDED
#define TOPOCOLL_COMM_TYPE_HW_GUIDED   MPI_COMM_TYPE_HW_GUIDED
#define TOPOCOLL_COMM_TYPE_HW_UNGUIDED MPI_COMM_TYPE_HW_UNGUIDED
#else /* MPI 3.1 libraries (Open MPI 4.1): our own values */
#define TOPOCOLL_COMM_TYPE_HW_GUIDED   0x7c0002
#define TOPOCOLL_COMM_TYPE_HW_UNGUIDED 0x7c0003
#endif
/** Bytes of a level type string, with its terminating NUL. */
#define TOPOCOLL_HLEVEL_TYPE_MAX 64

/**
 * MPI_Comm_split_type for the hardware split types; any other @split_type
 * is passed to PMPI_Comm_split_type.  Collective over @comm.
 *
 * - TOPOCOLL_COMM_TYPE_PHYSICAL_TOPOLOGY and TOPOCOLL_COMM_TYPE_HW_UNGUIDED:
 *   each new communicator is the processes of @comm sharing the highest
 *   level at which @comm's processes differ (Algorithm 1 of the paper,
 *   extended to switches and nodes).  A strict subset of @comm
 *   (MPI_Comm_compare gives MPI_UNEQUAL); MPI_COMM_NULL for a process
 *   whose binding stops at that level, and for all when no split exists.
 *   Applied again to the result, it descends one level.
 * - TOPOCOLL_COMM_TYPE_HW_GUIDED: @info's "mpi_hw_resource_type" names the
 *   resource ("mpi_shared_memory", "Machine", an hwloc type name, "HWThread",
 *   optionally prefixed "hwloc://"); each new communicator is the processes
 *   bound inside one instance.  MPI_COMM_NULL where the process is not
 *   bound inside one, and everywhere when @info is MPI_INFO_NULL, lacks the
 *   key or names an unknown type (MPI 4.0).  Every process must give the
 *   same value (else MPI_ERR_INFO_VALUE).
 *
 * Ranks are ordered by @key, ties by rank in @comm.  The new communicator
 * carries "mpi_hw_resource_type" (the guided value, or the level's type;
 * "mpi_shared_memory" for the node level) and the level information of
 * topocoll_comm_get_hlevel_info (see topocoll_comm_get_info).
 * Errors, through @comm's error handler (MPI_COMM_WORLD's for
 * MPI_COMM_NULL): MPI_ERR_COMM (MPI_COMM_NULL, intercommunicator),
 * MPI_ERR_ARG (@newcomm NULL), MPI_ERR_INFO_VALUE.  Thread-safe as MPI
 * communicator creation is (one collective per communicator at a time).
 */
TOPOCOLL_API int topocoll_comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                          MPI_Comm *newcomm);

/**
 * The paper's MPI_Comm_hsplit_with_roots (section 3.2.3, Algorithm 2):
 * @newcomm as topocoll_comm_split_type(comm, PHYSICAL_TOPOLOGY, rank),
 * and @rootscomm, the communicator of the rank-0 processes of all the new
 * communicators (MPI_COMM_NULL on every other process).  @info is
 * accepted for the paper's signature and not used.  Collective over
 * @comm.  Errors as topocoll_comm_split_type.
 */
TOPOCOLL_API int topocoll_comm_hsplit_with_roots(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                                 MPI_Comm *rootscomm);

/**
 * The paper's MPI_Comm_get_hlevel_info (section 3.3.1): for a communicator
 * made by a hardware split, *@num_comms communicators were made from the
 * same parent, this one is number *@index (0-based, ordered by lowest
 * parent rank) and @type (TOPOCOLL_HLEVEL_TYPE_MAX bytes) names its level.
 * Any other communicator: 1, 0 and the lowest level all its processes
 * share ("Unknown" when their locations are not known; see
 * topocoll_comm_get_min_hlevel).  Local.  Errors: MPI_ERR_COMM, MPI_ERR_ARG.
 */
TOPOCOLL_API int topocoll_comm_get_hlevel_info(MPI_Comm comm, int *num_comms, int *index,
                                               char *type);

/**
 * The paper's MPI_Comm_get_min_hlevel (section 3.3.2): in @type
 * (TOPOCOLL_HLEVEL_TYPE_MAX bytes) the lowest level shared by the @nranks
 * processes @ranks of @comm: "Unknown" if the caller is not among them,
 * "Cluster" when they share nothing (different nodes under no common
 * switch), "Switch", "Machine", or an hwloc type name.  Local when the
 * locations of @comm's processes are known: @comm made by a hardware
 * split, or any communicator once MPI_COMM_WORLD's are (MPI_Init under
 * libtopocoll_pmpi.so, topocoll_init_world(), or any hardware split or
 * attach on MPI_COMM_WORLD); otherwise MPI_ERR_COMM.  Errors also
 * MPI_ERR_ARG (@nranks < 1, NULL), MPI_ERR_RANK (a rank out of range).
 */
TOPOCOLL_API int topocoll_comm_get_min_hlevel(MPI_Comm comm, int nranks, const int ranks[],
                                              char *type);

/**
 * MPI_Comm_get_info plus the level keys of a communicator made by a
 * hardware split ("mpi_hw_resource_type", "topocoll_hlevel_type",
 * "topocoll_hlevel_num", "topocoll_hlevel_index"): both MPI libraries drop
 * keys they do not know.  The caller frees *@info.  Local.
 */
TOPOCOLL_API int topocoll_comm_get_info(MPI_Comm comm, MPI_Info *info);

/**
 * Exchange every process's location over MPI_COMM_WORLD once (the host
 * rank for virtual nodes where the launcher exports none, and the
 * hierarchy paths).  Called by MPI_Init/MPI_Init_thread under
 * libtopocoll_pmpi.so; programs linking libtopocoll.so alone call it right
 * after MPI_Init.  Collective over MPI_COMM_WORLD; idempotent.  Returns an
 * MPI error code.
 */
TOPOCOLL_API int topocoll_init_world(void);

/** Where the calling process is (filled by topocoll_location). */
typedef struct topocoll_location {
    char node[64];      /* host name, or "vn<k>" for a virtual node */
    int vnode, nvnodes; /* virtual node index, virtual nodes per host */
    int bound;          /* 0: unbound (may run anywhere on the node) */
    char cpuset[256];   /* binding as an hwloc list ("0-1,16"), in the
                           PU numbering of TOPOCOLL_TOPOLOGY's XML when set */
    char binding[64];   /* policy: "real", "core", "socket-rr", ... */
    int nswitches;      /* switches above the node, top first */
    char switches[8][64];
} topocoll_location_t;

/** This process's location (local, thread-safe).  MPI_SUCCESS, or
 *  MPI_ERR_OTHER when hwloc could not load the topology. */
TOPOCOLL_API int topocoll_location(topocoll_location_t *loc);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_H */
