/* xfer/region -- see region.h. */
#define _GNU_SOURCE
#include "region.h"

#include "topocoll.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define COOKIE(owner, slot, gen) \
    (((uint64_t)(uint16_t)(owner) << 48) | ((uint64_t)(uint16_t)(slot) << 32) | (uint64_t)(uint32_t)(gen))
#define COOKIE_OWNER(c) ((int)((c) >> 48))
#define COOKIE_SLOT(c) ((int)(((c) >> 32) & 0xffff))
#define COOKIE_GEN(c) ((uint32_t)(c))

static tc_region_desc_t *desc_of(tc_shm_t *s, int owner, int slot)
{
    return &s->regions[(size_t)owner * TC_REGION_SLOTS + (size_t)slot];
}

int tc_region_create(tc_shm_t *s, const struct iovec *iov, int niov, unsigned rights,
                     uint64_t *cookie)
{
    if (!iov || !cookie || niov < 1 || niov > TC_REGION_MAX_IOV ||
        (rights & ~(TC_RIGHT_READ | TC_RIGHT_WRITE)) != 0)
        return TOPOCOLL_ERR_INVAL;
    if (s->region_used == ~0ULL) return TOPOCOLL_ERR_NOSPACE;
    int slot = __builtin_ctzll(~s->region_used);
    tc_region_desc_t *d = desc_of(s, s->me, slot);
    /* Only this process writes its descriptors: relaxed accesses suffice for
     * its own fields; the release store of gen below publishes them. */
    uint32_t gen = atomic_load_explicit(&d->gen, memory_order_relaxed) + 1; /* even -> odd */
    uint64_t total = 0;
    for (int i = 0; i < niov; i++) {
        atomic_store_explicit(&d->iov[i].base, (uint64_t)(uintptr_t)iov[i].iov_base, memory_order_relaxed);
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
    return TOPOCOLL_SUCCESS;
}

int tc_region_destroy(tc_shm_t *s, uint64_t cookie)
{
    int slot = COOKIE_SLOT(cookie);
    if (COOKIE_OWNER(cookie) != s->me || slot >= TC_REGION_SLOTS) return TOPOCOLL_ERR_INVAL;
    tc_region_desc_t *d = desc_of(s, s->me, slot);
    if (!(s->region_used & (1ULL << slot)) ||
        atomic_load_explicit(&d->gen, memory_order_relaxed) != COOKIE_GEN(cookie))
        return TOPOCOLL_ERR_STALE;
    /* odd -> even: copiers that load gen afterwards see the region dead. */
    atomic_store_explicit(&d->gen, COOKIE_GEN(cookie) + 1, memory_order_release);
    s->region_used &= ~(1ULL << slot);
    return TOPOCOLL_SUCCESS;
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
    while (*cnt > 0 && (*iov)->iov_len == 0) { (*iov)++; (*cnt)--; }
}

long long tc_region_copy(tc_shm_t *s, uint64_t cookie, size_t offset,
                         const struct iovec *local, int nlocal, int dir)
{
    int owner = COOKIE_OWNER(cookie), slot = COOKIE_SLOT(cookie);
    if (nlocal < 0 || (nlocal > 0 && !local) || (dir != TC_DIR_FROM_REGION && dir != TC_DIR_TO_REGION))
        return TOPOCOLL_ERR_INVAL;
    if (owner >= s->nlocal || slot >= TC_REGION_SLOTS || !(COOKIE_GEN(cookie) & 1))
        return TOPOCOLL_ERR_STALE;
    tc_region_desc_t *d = desc_of(s, owner, slot);
    /* Acquire: pairs with the owner's release in tc_region_create. */
    if (atomic_load_explicit(&d->gen, memory_order_acquire) != COOKIE_GEN(cookie))
        return TOPOCOLL_ERR_STALE;
    unsigned rights = atomic_load_explicit(&d->rights, memory_order_relaxed);
    uint64_t rlen = atomic_load_explicit(&d->len, memory_order_relaxed);
    int rn = (int)atomic_load_explicit(&d->niov, memory_order_relaxed);
    if (!(rights & (dir == TC_DIR_FROM_REGION ? TC_RIGHT_READ : TC_RIGHT_WRITE)))
        return TOPOCOLL_ERR_RIGHTS;
    size_t total = 0;
    for (int i = 0; i < nlocal; i++) total += local[i].iov_len;
    if (offset > rlen || total > rlen - offset) return TOPOCOLL_ERR_BOUNDS;
    if (total == 0) return 0;
    if (owner != s->me && !s->single_copy) return TOPOCOLL_ERR_NOSUPPORT;

    /* Remote segments covering [offset, offset + total). */
    struct iovec rv[TC_REGION_MAX_IOV];
    int nr = 0;
    size_t skip = offset, want = total;
    for (int i = 0; i < rn && want > 0; i++) {
        size_t b = (size_t)atomic_load_explicit(&d->iov[i].base, memory_order_relaxed);
        size_t l = (size_t)atomic_load_explicit(&d->iov[i].len, memory_order_relaxed);
        if (skip >= l) { skip -= l; continue; }
        size_t take = l - skip < want ? l - skip : want;
        rv[nr].iov_base = (void *)(b + skip);
        rv[nr].iov_len = take;
        nr++;
        want -= take;
        skip = 0;
    }
    /* The descriptor may have been recycled while we read it (the owner
     * destroyed the region concurrently, a user error): detect it. */
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&d->gen, memory_order_relaxed) != COOKIE_GEN(cookie))
        return TOPOCOLL_ERR_STALE;

    struct iovec lstore[16], *lbuf = lstore;
    if (nlocal > 16 && !(lbuf = malloc((size_t)nlocal * sizeof(*lbuf)))) return TOPOCOLL_ERR_INVAL;
    memcpy(lbuf, local, (size_t)nlocal * sizeof(*lbuf));
    struct iovec *lv = lbuf, *rp = rv;
    int nl = nlocal;
    size_t done = 0;
    long long rc = 0;
    iov_advance(&lv, &nl, 0);             /* skip empty local segments */
    while (done < total) {
        size_t moved;
        if (owner == s->me) {
            moved = lv->iov_len < rp->iov_len ? lv->iov_len : rp->iov_len;
            if (dir == TC_DIR_FROM_REGION) memcpy(lv->iov_base, rp->iov_base, moved);
            else memcpy(rp->iov_base, lv->iov_base, moved);
        } else {
            unsigned long nlc = nl > IOV_MAX ? IOV_MAX : (unsigned long)nl;
            ssize_t n = dir == TC_DIR_FROM_REGION
                ? process_vm_readv(s->ctl[owner].pid, lv, nlc, rp, (unsigned long)nr, 0)
                : process_vm_writev(s->ctl[owner].pid, lv, nlc, rp, (unsigned long)nr, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) { rc = TOPOCOLL_ERR_SYS; break; }
            moved = (size_t)n;
            s->bytes_sc += moved;
        }
        done += moved;
        iov_advance(&lv, &nl, moved);
        iov_advance(&rp, &nr, moved);
    }
    if (lbuf != lstore) free(lbuf);
    if (rc < 0) return rc;
    return (long long)done;
}
