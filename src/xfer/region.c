/* xfer/region -- see region.h. */
#define _GNU_SOURCE
#include "region.h"

#include "../base/status.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define COOKIE(owner, slot, gen)                                                \
    (((uint64_t)(uint16_t)(owner) << 48) | ((uint64_t)(uint16_t)(slot) << 32) | \
     (uint64_t)(uint32_t)(gen))
#define COOKIE_OWNER(c) ((int)((c) >> 48))
#define COOKIE_SLOT(c)  ((int)(((c) >> 32) & 0xffff))
#define COOKIE_GEN(c)   ((uint32_t)(c))

static tc_region_desc_t *desc_of(tc_shm_t *s, int owner, int slot)
{
    return &s->regions[(size_t)owner * TC_REGION_SLOTS + (size_t)slot];
}

int tc_region_create(tc_shm_t *s, const struct iovec *iov, int niov, unsigned rights,
                     uint64_t *cookie)
{
    if (!iov || !cookie || niov < 1 || niov > TC_REGION_MAX_IOV ||
        (rights & ~(TC_RIGHT_READ | TC_RIGHT_WRITE)) != 0)
        return TC_ERR_INVAL;
    if (s->region_used == ~0ULL) return TC_ERR_NOSPACE;
    int slot = __builtin_ctzll(~s->region_used);
    tc_region_desc_t *d = desc_of(s, s->me, slot);
    /* Only this process writes its descriptors: relaxed accesses suffice for
     * its own fields; the release store of gen below publishes them. */
    uint32_t gen = atomic_load_explicit(&d->gen, memory_order_relaxed) + 1; /* even -> odd */
    uint64_t total = 0;
    for (int i = 0; i < niov; i++) {
        atomic_store_explicit(&d->iov[i].base, (uint64_t)(uintptr_t)iov[i].iov_base,
                              memory_order_relaxed);
        atomic_store_explicit(&d->iov[i].len, (uint64_t)iov[i].iov_len, memory_order_relaxed);
        total += iov[i].iov_len;
    }
    atomic_store_explicit(&d->niov, (uint32_t)niov, memory_order_relaxed);
    atomic_store_explicit(&d->len, total, memory_order_relaxed);
    atomic_store_explicit(&d->rights, rights, memory_order_relaxed);
    /* Release: a copier that acquires gen == cookie's gen sees the fields above. */
    atomic_store_explicit(&d->gen, gen, memory_order_release);
    s->region_used |= 1ULL << slot;
    *cookie = COOKIE(s->me, slot, gen);
    return TC_OK;
}

int tc_region_destroy(tc_shm_t *s, uint64_t cookie)
{
    int slot = COOKIE_SLOT(cookie);
    if (COOKIE_OWNER(cookie) != s->me || slot >= TC_REGION_SLOTS) return TC_ERR_INVAL;
    tc_region_desc_t *d = desc_of(s, s->me, slot);
    if (!(s->region_used & (1ULL << slot)) ||
        atomic_load_explicit(&d->gen, memory_order_relaxed) != COOKIE_GEN(cookie))
        return TC_ERR_STALE;
    /* odd -> even: copiers that load gen afterwards see the region dead. */
    atomic_store_explicit(&d->gen, COOKIE_GEN(cookie) + 1, memory_order_release);
    s->region_used &= ~(1ULL << slot);
    return TC_OK;
}

/* Advance an iovec array by @n bytes (CMA may move fewer bytes than asked). */
static void iov_advance(struct iovec **iov, int *cnt, size_t n)
{
    while (n > 0 && *cnt > 0) {
        if (n >= (*iov)->iov_len) {
            n -= (*iov)->iov_len;
            (*iov)++;
            (*cnt)--;
        } else {
            (*iov)->iov_base = (char *)(*iov)->iov_base + n;
            (*iov)->iov_len -= n;
            n = 0;
        }
    }
    while (*cnt > 0 && (*iov)->iov_len == 0) {
        (*iov)++;
        (*cnt)--;
    }
}

/* Gather the segments of region @d covering [offset, offset + total) into @rv (*@nr of them),
 * then check the region still lives at @gen: 0 or TC_ERR_STALE. */
static int copy_gather(tc_region_desc_t *d, uint32_t gen, int rn, size_t offset, size_t total,
                       struct iovec *rv, int *nr)
{
    /* Remote segments covering [offset, offset + total). */
    size_t skip = offset, want = total;
    *nr = 0;
    for (int i = 0; i < rn && want > 0; i++) {
        size_t b = (size_t)atomic_load_explicit(&d->iov[i].base, memory_order_relaxed);
        size_t l = (size_t)atomic_load_explicit(&d->iov[i].len, memory_order_relaxed);
        if (skip >= l) {
            skip -= l;
            continue;
        }
        size_t take = l - skip < want ? l - skip : want;
        rv[*nr].iov_base = (void *)(b + skip);
        rv[*nr].iov_len = take;
        (*nr)++;
        want -= take;
        skip = 0;
    }
    /* The descriptor may have been recycled while we read it (the owner
     * destroyed the region concurrently, a user error): detect it, and
     * segments that no longer cover what len promised. */
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&d->gen, memory_order_relaxed) != gen || want > 0) return TC_ERR_STALE;
    return TC_OK;
}

/* Copy @total bytes between local segments @lv and @owner's region segments @rp, by memcpy
 * for our own region, by CMA otherwise: the bytes copied or a TC_ERR_*. */
static long long copy_segments(tc_shm_t *s, int owner, int dir, struct iovec *lv, int nl,
                               struct iovec *rp, int nr, size_t total)
{
    size_t done = 0;
    iov_advance(&lv, &nl, 0); /* skip empty local segments */
    while (done < total) {
        size_t moved;
        if (owner == s->me) {
            moved = lv->iov_len < rp->iov_len ? lv->iov_len : rp->iov_len;
            if (dir == TC_DIR_FROM_REGION)
                memcpy(lv->iov_base, rp->iov_base, moved);
            else
                memcpy(rp->iov_base, lv->iov_base, moved);
        } else {
            unsigned long nlc = nl > IOV_MAX ? IOV_MAX : (unsigned long)nl;
            ssize_t n =
                dir == TC_DIR_FROM_REGION
                    ? process_vm_readv(s->ctl[owner].pid, lv, nlc, rp, (unsigned long)nr, 0)
                    : process_vm_writev(s->ctl[owner].pid, lv, nlc, rp, (unsigned long)nr, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return tc_status_sys(n < 0 ? errno : EIO); /* (0: nothing moved) */
            moved = (size_t)n;
            s->bytes_sc += moved;
        }
        done += moved;
        iov_advance(&lv, &nl, moved);
        iov_advance(&rp, &nr, moved);
    }
    return (long long)done;
}

long long tc_region_copy(tc_shm_t *s, uint64_t cookie, size_t offset, const struct iovec *local,
                         int nlocal, int dir)
{
    int owner = COOKIE_OWNER(cookie), slot = COOKIE_SLOT(cookie);
    if (nlocal < 0 || (nlocal > 0 && !local) ||
        (dir != TC_DIR_FROM_REGION && dir != TC_DIR_TO_REGION))
        return TC_ERR_INVAL;
    if (owner >= s->nlocal || slot >= TC_REGION_SLOTS || !(COOKIE_GEN(cookie) & 1))
        return TC_ERR_STALE;
    tc_region_desc_t *d = desc_of(s, owner, slot);
    /* Acquire: pairs with the owner's release in tc_region_create. */
    if (atomic_load_explicit(&d->gen, memory_order_acquire) != COOKIE_GEN(cookie))
        return TC_ERR_STALE;
    unsigned rights = atomic_load_explicit(&d->rights, memory_order_relaxed);
    uint64_t rlen = atomic_load_explicit(&d->len, memory_order_relaxed);
    int rn = (int)atomic_load_explicit(&d->niov, memory_order_relaxed);
    if (!(rights & (dir == TC_DIR_FROM_REGION ? TC_RIGHT_READ : TC_RIGHT_WRITE)))
        return TC_ERR_RIGHTS;
    size_t total = 0;
    for (int i = 0; i < nlocal; i++) total += local[i].iov_len;
    if (offset > rlen || total > rlen - offset) return TC_ERR_BOUNDS;
    if (total == 0) return 0;
    if (owner != s->me && !s->single_copy) return TC_ERR_NOSUPPORT;

    struct iovec rv[TC_REGION_MAX_IOV];
    int nr;
    if (copy_gather(d, COOKIE_GEN(cookie), rn, offset, total, rv, &nr) != TC_OK)
        return TC_ERR_STALE;

    struct iovec lstore[16], *lbuf = lstore;
    if (nlocal > 16 && !(lbuf = malloc((size_t)nlocal * sizeof(*lbuf))))
        return tc_status_sys(ENOMEM);
    memcpy(lbuf, local, (size_t)nlocal * sizeof(*lbuf));
    long long rc = copy_segments(s, owner, dir, lbuf, nlocal, rv, nr, total);
    if (lbuf != lstore) free(lbuf);
    return rc;
}

/* ---- Region copy (two cookies) --------------------------------------------- */

/* Validate @cookie for @right and [off, off + len): 0 or a TC_ERR_*. */
static int region_check(tc_shm_t *s, uint64_t cookie, unsigned right, size_t off, size_t len)
{
    int owner = COOKIE_OWNER(cookie), slot = COOKIE_SLOT(cookie);
    if (owner >= s->nlocal || slot >= TC_REGION_SLOTS || !(COOKIE_GEN(cookie) & 1))
        return TC_ERR_STALE;
    tc_region_desc_t *d = desc_of(s, owner, slot);
    if (atomic_load_explicit(&d->gen, memory_order_acquire) != COOKIE_GEN(cookie))
        return TC_ERR_STALE;
    if (!(atomic_load_explicit(&d->rights, memory_order_relaxed) & right)) return TC_ERR_RIGHTS;
    uint64_t rlen = atomic_load_explicit(&d->len, memory_order_relaxed);
    if (off > rlen || len > rlen - off) return TC_ERR_BOUNDS;
    return TC_OK;
}

/* The caller's own region @cookie, [off, off + len), as local segments. */
static int own_segments(tc_shm_t *s, uint64_t cookie, size_t off, size_t len, struct iovec *v,
                        int *n)
{
    tc_region_desc_t *d = desc_of(s, s->me, COOKIE_SLOT(cookie));
    int rn = (int)atomic_load_explicit(&d->niov, memory_order_relaxed);
    *n = 0;
    for (int i = 0; i < rn && len > 0; i++) {
        size_t b = (size_t)atomic_load_explicit(&d->iov[i].base, memory_order_relaxed);
        size_t l = (size_t)atomic_load_explicit(&d->iov[i].len, memory_order_relaxed);
        if (off >= l) {
            off -= l;
            continue;
        }
        size_t take = l - off < len ? l - off : len;
        v[*n].iov_base = (void *)(b + off);
        v[*n].iov_len = take;
        (*n)++;
        len -= take;
        off = 0;
    }
    return len == 0 ? TC_OK : TC_ERR_BOUNDS;
}

#define TC_BOUNCE (256u << 10)

/* tc_region_copy2 through the bounce buffer *@bounce (allocated on first use). */
static long long region_copy2(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst, size_t doff,
                              size_t len, char **bounce)
{
    int rc;
    if ((rc = region_check(s, src, TC_RIGHT_READ, soff, len)) != 0) return rc;
    if ((rc = region_check(s, dst, TC_RIGHT_WRITE, doff, len)) != 0) return rc;
    if (len == 0) return 0;
    struct iovec v[TC_REGION_MAX_IOV];
    int n;
    if (COOKIE_OWNER(src) == s->me) { /* our source: one write into dst */
        if ((rc = own_segments(s, src, soff, len, v, &n)) != 0) return rc;
        return tc_region_copy(s, dst, doff, v, n, TC_DIR_TO_REGION);
    }
    if (COOKIE_OWNER(dst) == s->me) { /* our destination: one read from src */
        if ((rc = own_segments(s, dst, doff, len, v, &n)) != 0) return rc;
        return tc_region_copy(s, src, soff, v, n, TC_DIR_FROM_REGION);
    }
    if (!*bounce && !(*bounce = malloc(TC_BOUNCE))) return tc_status_sys(ENOMEM);
    size_t done = 0;
    while (done < len) {
        size_t k = len - done < TC_BOUNCE ? len - done : TC_BOUNCE;
        long long r = tc_region_read(s, src, soff + done, *bounce, k);
        if (r == (long long)k) {
            struct iovec b = { *bounce, k };
            r = tc_region_copy(s, dst, doff + done, &b, 1, TC_DIR_TO_REGION);
        }
        if (r < 0) return done ? tc_status_sys(tc_status_errno()) : r;
        if (r != (long long)k) return TC_ERR_SYS;
        done += k;
    }
    return (long long)done;
}

long long tc_region_copy2(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst, size_t doff,
                          size_t len)
{
    return region_copy2(s, src, soff, dst, doff, len, &s->bounce);
}

/* ---- Asynchronous copies ------------------------------------------------------ */

static tc_async_t *async_slot(tc_shm_t *s)
{
    for (int i = 0; i < TC_ASYNC_SLOTS; i++)
        if (atomic_load_explicit(&s->async[i].state, memory_order_acquire) == TC_ASYNC_FREE)
            return &s->async[i];
    return NULL;
}

static void async_queue(tc_shm_t *s, tc_async_t *a, long long *status)
{
    a->status = status;
    __atomic_store_n(status, (long long)TC_COPY_PENDING, __ATOMIC_RELAXED);
    /* Release: the executor that acquires QUEUED sees the descriptor. */
    atomic_store_explicit(&a->state, TC_ASYNC_QUEUED, memory_order_release);
    atomic_fetch_add_explicit(&s->async_queued, 1, memory_order_release);
}

int tc_async_submit_inline(tc_shm_t *s, uint64_t cookie, size_t offset, const struct iovec *local,
                           int nlocal, int dir, long long *status)
{
    if (!status || nlocal < 0 || nlocal > TC_REGION_MAX_IOV || (nlocal > 0 && !local))
        return TC_ERR_INVAL;
    tc_async_t *a = async_slot(s);
    if (!a) return TC_ERR_NOSPACE;
    a->region_copy = 0;
    a->cookie = cookie;
    a->offset = offset;
    a->dir = dir;
    a->nlocal = nlocal;
    if (nlocal) memcpy(a->local, local, (size_t)nlocal * sizeof(*local));
    async_queue(s, a, status);
    return TC_OK;
}

int tc_async_submit_region(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst, size_t doff,
                           size_t len, long long *status)
{
    if (!status) return TC_ERR_INVAL;
    tc_async_t *a = async_slot(s);
    if (!a) return TC_ERR_NOSPACE;
    a->region_copy = 1;
    a->cookie = src;
    a->offset = soff;
    a->cookie2 = dst;
    a->offset2 = doff;
    a->len = len;
    async_queue(s, a, status);
    return TC_OK;
}

int tc_async_run(tc_shm_t *s)
{
    int ran = 0;
    if (!tc_async_pending(s)) return 0;
    for (int i = 0; i < TC_ASYNC_SLOTS; i++) {
        tc_async_t *a = &s->async[i];
        if (atomic_load_explicit(&a->state, memory_order_acquire) != TC_ASYNC_QUEUED) continue;
        long long r = a->region_copy
                          ? region_copy2(s, a->cookie, a->offset, a->cookie2, a->offset2, a->len,
                                         &s->bounce_async)
                          : tc_region_copy(s, a->cookie, a->offset, a->local, a->nlocal, a->dir);
        long long *st = a->status;
        atomic_store_explicit(&a->state, TC_ASYNC_FREE, memory_order_release);
        atomic_fetch_sub_explicit(&s->async_queued, 1, memory_order_release);
        /* Release: the submitter that reads the result sees the copied bytes. */
        __atomic_store_n(st, r, __ATOMIC_RELEASE);
        ran++;
    }
    return ran;
}
