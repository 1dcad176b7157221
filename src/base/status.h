/*
 * base/status -- topocoll's one internal status space (as UCX's
 * ucs_status_t and Open MPI's OMPI_ERR_*): what every layer below the
 * bindings returns, the collectives' init and work steps included.
 *
 *   TC_OK (0)          done;
 *   TC_INPROGRESS (1)  a work step that must be called again (positive, so
 *                      "st < 0" is "failed" everywhere);
 *   TC_ERR_* (< 0)     failed, with the cause: a region's (stale cookie,
 *                      rights, bounds...), the kernel's (TC_ERR_SYS, with its
 *                      errno in tc_status_errno()), no memory, or an error an
 *                      MPI call returned (TC_ERR_MPI - code: tc_status_mpi).
 *
 * Only the bindings (api/, pmpi/) turn a status into an MPI error class or
 * a public TOPOCOLL_ERR_* code, and they say the cause in one line.  The
 * region errors keep the public codes' values, because the status word of
 * an asynchronous copy (topocoll_copy_async) is written below and read by
 * the application (api/ asserts they match).
 *
 * Owns: the thread's last errno of a TC_ERR_SYS.  May call: libc, MPI (codes).
 */
#ifndef TC_BASE_STATUS_H
#define TC_BASE_STATUS_H

#include <limits.h>
#include <mpi.h>

typedef enum tc_status {
    TC_OK = 0,
    TC_INPROGRESS = 1,
    TC_ERR_INVAL = -1,     /* bad argument */
    TC_ERR_BOUNDS = -2,    /* offset + length beyond a region */
    TC_ERR_RIGHTS = -3,    /* copy direction not granted by the region */
    TC_ERR_STALE = -4,     /* cookie destroyed, or never existed */
    TC_ERR_NOSUPPORT = -5, /* single copy unavailable on this node */
    TC_ERR_NOSPACE = -6,   /* the owner's region table is full */
    TC_ERR_SYS = -7,       /* the kernel refused (errno: tc_status_errno) */
    TC_ERR_NOCTX = -8,     /* communicator without a context */
    TC_COPY_PENDING = -9,  /* an asynchronous copy's status word before it ran */
    TC_ERR_NOMEM = -10,    /* out of memory */
    TC_ERR_PROTO = -11,    /* a peer broke a shared-memory protocol (a newer tag) */
    TC_ERR_TRUNCATE = -12, /* a message longer than the receive buffer (counts differ) */
    TC_ERR_REMOTE = -13,   /* a process on another node failed the collective */
    TC_ERR_LAST = -13,     /* the lowest TC_ERR_* above TC_ERR_MPI */
    TC_ERR_MPI = -1000     /* an MPI call failed: TC_ERR_MPI - its error code (and
                              every value below it) */
} tc_status_t;

/** @rc of an MPI call as a status: TC_OK, or TC_ERR_MPI - @rc. */
static inline tc_status_t tc_status_mpi(int rc)
{
    return rc == MPI_SUCCESS ? TC_OK : TC_ERR_MPI - rc;
}

/** The MPI error code inside @st (tc_status_mpi), else 0. */
static inline int tc_status_mpi_code(tc_status_t st)
{
    return st <= TC_ERR_MPI ? TC_ERR_MPI - st : 0;
}

/** 1 if @st is a failure topocoll can return (a TC_ERR_* or an MPI
 *  error code inside TC_ERR_MPI): the check of a status read from a
 *  peer. */
static inline int tc_status_is_error(long long st)
{
    return (st < 0 && st >= TC_ERR_LAST && st != TC_COPY_PENDING) ||
           (st <= TC_ERR_MPI && st >= INT_MIN);
}

/**
 * tc_assert(cond): an invariant of the code (a state machine's transition,
 * a lock held, a sequence number's order), checked in debug builds
 * (CMAKE_BUILD_TYPE=Debug: TC_DEBUG), where a violation prints one line
 * naming it and aborts; compiled out otherwise (as UCX's ucs_assert).
 * Never for input from users or peers: those get a status.
 */
#ifdef TC_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define tc_assert(cond)                                                                  \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "topocoll: assertion failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                           \
            abort();                                                                     \
        }                                                                                \
    } while (0)
#else
#define tc_assert(cond) ((void)0)
#endif

/** TC_ERR_SYS, remembering @err (an errno) for this thread's next report. */
tc_status_t tc_status_sys(int err);

/** The errno of this thread's last TC_ERR_SYS (0: none). */
int tc_status_errno(void);

/** A short name of @st's cause ("stale cookie", "the kernel refused the
 *  copy", "MPI error"...); static string. */
const char *tc_status_name(tc_status_t st);

#endif
