/* base/status -- see status.h. */
#include "status.h"

static _Thread_local int tl_errno;

tc_status_t tc_status_sys(int err)
{
    tl_errno = err;
    return TC_ERR_SYS;
}

int tc_status_errno(void) { return tl_errno; }

const char *tc_status_name(tc_status_t st)
{
    if (st <= TC_ERR_MPI) return "an MPI call failed";
    switch ((int)st) { /* (int: values below TC_ERR_MPI are no enumerator) */
    case TC_OK: return "success";
    case TC_INPROGRESS: return "in progress";
    case TC_ERR_INVAL: return "invalid argument";
    case TC_ERR_BOUNDS: return "copy outside the region's bounds";
    case TC_ERR_RIGHTS: return "copy direction not granted by the region";
    case TC_ERR_STALE: return "stale or unknown cookie";
    case TC_ERR_NOSUPPORT: return "single copy unavailable on this node";
    case TC_ERR_NOSPACE: return "region table full";
    case TC_ERR_SYS: return "the kernel refused the copy";
    case TC_ERR_NOCTX: return "communicator not attached to topocoll";
    case TC_COPY_PENDING: return "asynchronous copy still pending";
    case TC_ERR_NOMEM: return "out of memory";
    case TC_ERR_PROTO: return "a peer broke the shared-memory protocol";
    case TC_ERR_TRUNCATE: return "message longer than the receive buffer (counts differ)";
    case TC_ERR_REMOTE: return "a process on another node failed the collective";
    }
    return "unknown status";
}
