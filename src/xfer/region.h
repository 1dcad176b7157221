/*
 * xfer/region -- the single-copy engine: KNEM's declared regions, cookies
 * and inline copies (KNEM paper, sections 3.2 and 4.2), over Linux CMA
 * (process_vm_readv/writev) instead of the KNEM module.
 *
 * A cookie is (owner local rank, table slot, generation).  The owner writes
 * the region's segments into its table in the node's shared segment and
 * publishes the odd generation with a release store; a copier validates the
 * cookie's generation, the rights and the bounds before any byte moves,
 * then lets the kernel copy.  Destroying bumps the generation, so later
 * copies with the cookie fail as stale.  The rights are enforced here, by
 * the library on the copier's side: CMA itself would let a process read any
 * address of a peer it may ptrace (the KNEM paper's section 4.2 discusses
 * the same trust model for exclusive HPC nodes).
 *
 * Owns: the region tables of shmseg.  May call: shmseg, libc (CMA).
 */
#ifndef TC_XFER_REGION_H
#define TC_XFER_REGION_H

#include "shmseg.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define TC_RIGHT_READ 0x1u
#define TC_RIGHT_WRITE 0x2u
#define TC_DIR_FROM_REGION 0
#define TC_DIR_TO_REGION 1

/** Declare a region (see topocoll_region_create). 0 or a TOPOCOLL_ERR_*. */
int tc_region_create(tc_shm_t *s, const struct iovec *iov, int niov, unsigned rights,
                     uint64_t *cookie);
/** Destroy a region of the calling process. 0 or a TOPOCOLL_ERR_*. */
int tc_region_destroy(tc_shm_t *s, uint64_t cookie);
/** Inline copy (see topocoll_copy): bytes moved, or a TOPOCOLL_ERR_*. */
long long tc_region_copy(tc_shm_t *s, uint64_t cookie, size_t offset,
                         const struct iovec *local, int nlocal, int dir);

/** Contiguous read: @len bytes at @offset of region @cookie into @dst. */
static inline long long tc_region_read(tc_shm_t *s, uint64_t cookie, size_t offset,
                                       void *dst, size_t len)
{
    struct iovec l = { dst, len };
    return tc_region_copy(s, cookie, offset, &l, 1, TC_DIR_FROM_REGION);
}

#endif
