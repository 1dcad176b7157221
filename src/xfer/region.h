/*
 * xfer/region -- the single-copy engine: KNEM's declared regions, cookies
 * and inline copies (KNEM paper, sections 3.2 and 4.2), over Linux CMA
 * (process_vm_readv/writev) instead of the KNEM module.
 *
 * A cookie is (owner local rank, table slot, key): 12, 6 and 46 bits, the
 * key drawn from getrandom(2) for each region, so a cookie is neither
 * predictable nor revived when its slot is reused.  The owner keeps a
 * private copy of each of its regions and writes the descriptor into its
 * table in the node's shared segment (key, seal, segments), publishing the
 * odd generation with a release store.  A copier checks the cookie's owner
 * and slot against the table's size before it indexes anything, takes ONE
 * snapshot of the descriptor (the generation unchanged across it), and
 * uses only that snapshot: the key equal to the cookie's, the fields
 * sane (1..TC_REGION_MAX_IOV segments, none wrapping the address space,
 * their lengths summing to the region's), the seal right (a keyed check
 * under the owner's seal key, which came through MPI at setup), then the
 * rights and the bounds, before any byte moves; the kernel copies at the
 * owner's pid from the same setup exchange.  A process's copies with its
 * own regions use its private copy, never the shared table.  Every
 * failure is a status (stale, rights, bounds), never a crash: every local
 * process can write any byte of the segment (docs/security.md).
 * Destroying changes the generation and clears the key, so later copies
 * with the cookie fail as stale.  The rights are enforced here, by the
 * library on the copier's side: CMA itself would let a process read any
 * address of a peer it may ptrace (the KNEM paper's section 4.2 discusses
 * the same trust model for exclusive HPC nodes).
 *
 * Owns: the region tables of shmseg.  May call: shmseg, base/, libc (CMA).
 */
#ifndef TC_XFER_REGION_H
#define TC_XFER_REGION_H

#include "../base/status.h"
#include "shmseg.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define TC_RIGHT_READ      0x1u
#define TC_RIGHT_WRITE     0x2u
#define TC_DIR_FROM_REGION 0
#define TC_DIR_TO_REGION   1
#define TC_COOKIE_KEY_BITS 46   /* random bits of a cookie */
#define TC_COOKIE_OWNERS   4096 /* local processes a cookie can name (12 bits) */

/* ---- A descriptor read from shared memory (the copier's side) ----
 * Exposed for the tests (tests/fuzz/region): the copies use them. */
/** One consistent copy of descriptor @d into @r (the generation odd, and
 *  the same before and after, the segment count at most
 *  TC_REGION_MAX_IOV, else nothing more is read): 0 or TC_ERR_STALE. */
int tc_region_snapshot(const tc_region_desc_t *d, tc_region_snap_t *r);
/** Whether snapshot @r of slot @slot is a live region with key @key and
 *  sane fields (1..TC_REGION_MAX_IOV segments, known rights, no segment
 *  wrapping the address space, lengths summing to len without overflow)
 *  sealed under @secret: 0 or TC_ERR_STALE. */
int tc_region_validate(const tc_region_snap_t *r, int slot, uint64_t key, uint64_t secret);
/** The seal of @r in slot @slot under @secret (what tc_region_validate
 *  expects in r->seal): a keyed, non-cryptographic check of every field. */
uint64_t tc_region_seal(const tc_region_snap_t *r, int slot, uint64_t secret);
/** The segments of validated @r covering [@off, @off + @len) (the caller
 *  checked @off + @len <= r->len) into @rv (TC_REGION_MAX_IOV entries at
 *  most, each inside one of r's): their count, or TC_ERR_BOUNDS if r's
 *  segments do not cover the range. */
int tc_region_span(const tc_region_snap_t *r, size_t off, size_t len, struct iovec *rv);

/** Declare a region (see topocoll_region_create). TC_OK or a TC_ERR_*
 *  (TC_ERR_INVAL also for a segment wrapping the address space,
 *  TC_ERR_NOSUPPORT past TC_COOKIE_OWNERS local processes). */
tc_status_t tc_region_create(tc_shm_t *s, const struct iovec *iov, int niov, unsigned rights,
                             uint64_t *cookie);
/** Destroy a region of the calling process. TC_OK or a TC_ERR_*. */
tc_status_t tc_region_destroy(tc_shm_t *s, uint64_t cookie);
/* ---- Registrations kept across calls (a persistent request's) ----
 * KNEM declares a region once and copies with its cookie many times
 * (KNEM paper, sections 3.2 and 5.5): a persistent collective (MPI 4.0
 * section 6.13) keeps its buffers' regions from one start to the next
 * instead of declaring and destroying them at every start.  A keep
 * belongs to one request and is used by one thread at a time (the
 * engine's serialisation); at most TC_REGION_KEPT_MAX of a process's
 * TC_REGION_SLOTS regions are kept, so the calls always find slots. */
#define TC_REGION_KEEP     4  /* regions one keep holds */
#define TC_REGION_KEPT_MAX 32 /* kept regions per process and segment */
#define TC_REGION_KEEP_IOV 2  /* segments of a region a keep holds */
typedef struct tc_region_keep {
    int n; /* entries in use */
    struct {
        struct iovec iov[TC_REGION_KEEP_IOV];
        int niov;
        unsigned rights;
        uint64_t cookie;
    } e[TC_REGION_KEEP];
} tc_region_keep_t;

/** A region of @iov (@niov segments) with @rights for one call: the one
 *  @keep holds for the same segments and rights, else a new one, which
 *  @keep then holds if it has room and the process's budget allows
 *  (@keep NULL: always a new one, as tc_region_create).  TC_OK with the
 *  cookie in *@cookie, or tc_region_create's TC_ERR_*. */
tc_status_t tc_region_acquire(tc_shm_t *s, tc_region_keep_t *keep, const struct iovec *iov,
                              int niov, unsigned rights, uint64_t *cookie);
/** The end of the call that acquired @cookie: destroyed unless @keep
 *  holds it and @ok, which the callers pass as "every local peer is done
 *  with the call's buffers" (their state machine's end): a call that
 *  failed before that may still have peers copying, so its regions go
 *  and are declared again.  Never fails. */
void tc_region_release(tc_shm_t *s, tc_region_keep_t *keep, uint64_t cookie, int ok);
/** Destroy every region @keep holds (its request is freed); @s NULL (its
 *  segment is gone with them): only forget them. */
void tc_region_keep_clear(tc_shm_t *s, tc_region_keep_t *keep);

/** Inline copy (see topocoll_copy) between @local (@nlocal segments) and
 *  region @cookie from byte @offset, in direction @dir: TC_OK with the
 *  bytes moved in *@copied (NULL: not wanted), all of @local's unless the
 *  kernel stopped short, or a TC_ERR_* (rights, bounds, stale cookie, the
 *  kernel's errno). */
tc_status_t tc_region_copy(tc_shm_t *s, uint64_t cookie, size_t offset, const struct iovec *local,
                           int nlocal, int dir, size_t *copied);

/**
 * KNEM's region copy (KNEM paper, section 3.4, knem_region_copy): @len
 * bytes from region @src at @soff to region @dst at @doff, neither of
 * which need belong to the caller (a progress thread copying on behalf
 * of two other processes).  Both cookies are checked (READ on the
 * source, WRITE on the destination, bounds) before a byte moves.  When
 * the caller owns one of them it is one CMA call; otherwise CMA, which
 * has no third-party copy, goes through the caller's bounce buffer
 * (256 KiB chunks: two kernel copies where KNEM makes one).
 * Returns TC_OK once all @len bytes moved, or a TC_ERR_* (partial
 * copies: TC_ERR_SYS).
 */
tc_status_t tc_region_copy2(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst, size_t doff,
                            size_t len);

/**
 * Asynchronous copies (KNEM paper, sections 3.4 and 4.3): submit an
 * inline copy (as tc_region_copy) or a region copy (as tc_region_copy2);
 * *@status becomes TC_COPY_PENDING at once and the copy's result
 * (bytes or a TC_ERR_*) once it has run, published with a release
 * store (read it with tc_async_status).  The copy runs in
 * tc_async_run: the process's progress thread, or the caller's own
 * polls.  The local segments and the status word must stay valid until
 * then.  TC_OK, or TC_ERR_INVAL / TC_ERR_NOSPACE
 * (TC_ASYNC_SLOTS copies pending).  The submitting thread only.
 */
tc_status_t tc_async_submit_inline(tc_shm_t *s, uint64_t cookie, size_t offset,
                                   const struct iovec *local, int nlocal, int dir,
                                   long long *status);
tc_status_t tc_async_submit_region(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst,
                                   size_t doff, size_t len, long long *status);
/** Run the queued copies (one executor at a time: the caller serialises,
 *  nbc's progress lock).  Returns how many ran. */
int tc_async_run(tc_shm_t *s);
/** Copies queued and not yet run. */
static inline int tc_async_pending(const tc_shm_t *s)
{
    return s ? atomic_load_explicit(&s->async_queued, memory_order_acquire) : 0;
}
/** Read a status word written by tc_async_run (acquire). */
static inline long long tc_async_status(const long long *status)
{
    return __atomic_load_n(status, __ATOMIC_ACQUIRE);
}

/** 1 if region @cookie is exactly @len bytes long and grants @dir
 *  (TC_DIR_FROM_REGION: read, TC_DIR_TO_REGION: write): a zero-byte copy
 *  at @len is taken and one at @len + 1 refused, bounds only, no system
 *  call.  A peer's exposed buffer checked against our count. */
static inline int tc_region_len_is(tc_shm_t *s, uint64_t cookie, size_t len, int dir)
{
    struct iovec none = { NULL, 0 };
    return tc_region_copy(s, cookie, len, &none, 1, dir, NULL) == TC_OK &&
           tc_region_copy(s, cookie, len + 1, &none, 1, dir, NULL) == TC_ERR_BOUNDS;
}

/** Contiguous read: all @len bytes at @offset of region @cookie into
 *  @dst: TC_OK, or a TC_ERR_* (a short copy: TC_ERR_SYS, errno EIO). */
static inline tc_status_t tc_region_read(tc_shm_t *s, uint64_t cookie, size_t offset, void *dst,
                                         size_t len)
{
    struct iovec l = { dst, len };
    size_t got = 0;
    tc_status_t st = tc_region_copy(s, cookie, offset, &l, 1, TC_DIR_FROM_REGION, &got);
    return st != TC_OK || got == len ? st : tc_status_sys(EIO);
}

/** Contiguous write: all @len bytes of @src into region @cookie at
 *  @offset: TC_OK, or a TC_ERR_* (a short copy: TC_ERR_SYS, errno EIO). */
static inline tc_status_t tc_region_write(tc_shm_t *s, uint64_t cookie, size_t offset,
                                          const void *src, size_t len)
{
    struct iovec l = { (void *)src, len };
    size_t got = 0;
    tc_status_t st = tc_region_copy(s, cookie, offset, &l, 1, TC_DIR_TO_REGION, &got);
    return st != TC_OK || got == len ? st : tc_status_sys(EIO);
}

#endif
