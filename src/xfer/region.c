/* xfer/region -- see region.h. */
#define _GNU_SOURCE
#include "region.h"

#include "../base/status.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* A cookie: the owner's local rank, the slot of its table and the region's random key (the
 * descriptor's key): the first two say where to look, before anything is read; the key, that it is
 * this region and not an earlier or a guessed one. */
#define KEY_MASK ((1ULL << TC_COOKIE_KEY_BITS) - 1)
#define COOKIE(owner, slot, key)                                                                  \
    (((uint64_t)(owner) << (TC_COOKIE_KEY_BITS + 6)) | ((uint64_t)(slot) << TC_COOKIE_KEY_BITS) | \
     (key))
#define COOKIE_OWNER(c) ((int)((c) >> (TC_COOKIE_KEY_BITS + 6)))
#define COOKIE_SLOT(c)  ((int)(((c) >> TC_COOKIE_KEY_BITS) & 63))
#define COOKIE_KEY(c)   ((c)&KEY_MASK)
_Static_assert(TC_REGION_SLOTS == 64, "a cookie has 6 bits of slot");
_Static_assert(TC_COOKIE_KEY_BITS + 6 + 12 == 64, "owner (12 bits), slot, key");

static tc_region_desc_t *desc_of(tc_shm_t *s, int owner, int slot)
{
    return &s->regions[(size_t)owner * TC_REGION_SLOTS + (size_t)slot];
}

/* ---- Descriptors: snapshot, validation, seal, segments ----------------------------- */

static uint64_t seal_mix(uint64_t h, uint64_t v)
{
    /* each step is a bijection of h for a given v: a change of any one word changes the seal */
    h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

uint64_t tc_region_seal(const tc_region_snap_t *r, int slot, uint64_t secret)
{
    uint32_t n = r->niov < TC_REGION_MAX_IOV ? r->niov : TC_REGION_MAX_IOV;
    uint64_t h = seal_mix(secret, (uint64_t)r->gen << 32 | (uint32_t)slot);
    h = seal_mix(h, (uint64_t)r->rights << 32 | r->niov);
    h = seal_mix(h, r->key);
    h = seal_mix(h, r->len);
    for (uint32_t i = 0; i < n; i++) h = seal_mix(seal_mix(h, r->iov[i].base), r->iov[i].len);
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    return h ^ (h >> 32);
}

int tc_region_snapshot(const tc_region_desc_t *d, tc_region_snap_t *r)
{
    /* Acquire: pairs with the owner's release of the odd gen in tc_region_create: the fields
     * below are at least those it published with it. */
    r->gen = atomic_load_explicit(&d->gen, memory_order_acquire);
    r->niov = atomic_load_explicit(&d->niov, memory_order_relaxed);
    if (!(r->gen & 1) || r->niov < 1 || r->niov > TC_REGION_MAX_IOV) return TC_ERR_STALE;
    r->rights = atomic_load_explicit(&d->rights, memory_order_relaxed);
    r->key = atomic_load_explicit(&d->key, memory_order_relaxed);
    r->len = atomic_load_explicit(&d->len, memory_order_relaxed);
    r->seal = atomic_load_explicit(&d->seal, memory_order_relaxed);
    for (uint32_t i = 0; i < r->niov; i++) {
        r->iov[i].base = atomic_load_explicit(&d->iov[i].base, memory_order_relaxed);
        r->iov[i].len = atomic_load_explicit(&d->iov[i].len, memory_order_relaxed);
    }
    /* Acquire fence: if a load above read a field of a later create (stored after that create's
     * release fence, which follows the destroy's even gen), the load below reads that even gen
     * or a later one: a torn snapshot is seen as one. */
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&d->gen, memory_order_relaxed) == r->gen ? TC_OK : TC_ERR_STALE;
}

int tc_region_validate(const tc_region_snap_t *r, int slot, uint64_t key, uint64_t secret)
{
    if (key == 0 || r->key != key || !(r->gen & 1)) return TC_ERR_STALE;
    if (r->niov < 1 || r->niov > TC_REGION_MAX_IOV ||
        (r->rights & ~(TC_RIGHT_READ | TC_RIGHT_WRITE)) != 0)
        return TC_ERR_STALE;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < r->niov; i++) {
        uint64_t b = r->iov[i].base, l = r->iov[i].len;
        if (b > UINTPTR_MAX || l > UINTPTR_MAX - b || l > UINT64_MAX - sum) return TC_ERR_STALE;
        sum += l;
    }
    if (sum != r->len || r->len > SIZE_MAX) return TC_ERR_STALE;
    return r->seal == tc_region_seal(r, slot, secret) ? TC_OK : TC_ERR_STALE;
}

int tc_region_span(const tc_region_snap_t *r, size_t off, size_t len, struct iovec *rv)
{
    int n = 0;
    for (uint32_t i = 0; i < r->niov && i < TC_REGION_MAX_IOV && len > 0; i++) {
        size_t l = (size_t)r->iov[i].len;
        if (off >= l) {
            off -= l;
            continue;
        }
        size_t take = l - off < len ? l - off : len;
        rv[n].iov_base = (void *)(uintptr_t)(r->iov[i].base + off);
        rv[n].iov_len = take;
        n++;
        len -= take;
        off = 0;
    }
    return len == 0 ? n : TC_ERR_BOUNDS;
}

/* The region @cookie names, validated: *@out points at this process's private copy for its own
 * regions (the shared table is not read), else at @tmp, the snapshot of the owner's descriptor.
 * 0 or TC_ERR_STALE; the owner and slot are checked before anything is indexed. */
static tc_status_t region_get(tc_shm_t *s, uint64_t cookie, tc_region_snap_t *tmp,
                              const tc_region_snap_t **out)
{
    int owner = COOKIE_OWNER(cookie), slot = COOKIE_SLOT(cookie);
    if (owner >= s->nlocal) return TC_ERR_STALE;
    if (owner == s->me) {
        const tc_region_snap_t *r = &s->own[slot];
        if (!(r->gen & 1) || r->key != COOKIE_KEY(cookie)) return TC_ERR_STALE;
        *out = r;
        return TC_OK;
    }
    int rc = tc_region_snapshot(desc_of(s, owner, slot), tmp);
    if (rc == TC_OK) rc = tc_region_validate(tmp, slot, COOKIE_KEY(cookie), s->peer[owner].seal);
    *out = tmp;
    return rc;
}

/* 1 if region @cookie, of snapshot @r, still lives (its gen unchanged: no re-read). */
static int region_live(tc_shm_t *s, uint64_t cookie, const tc_region_snap_t *r)
{
    int owner = COOKIE_OWNER(cookie), slot = COOKIE_SLOT(cookie);
    if (owner == s->me) return s->own[slot].gen == r->gen;
    /* Acquire: pairs with the owner's release of the even gen in tc_region_destroy. */
    return atomic_load_explicit(&desc_of(s, owner, slot)->gen, memory_order_acquire) == r->gen;
}

/* ---- Create, destroy --------------------------------------------------------------- */

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                  \
    do {                                                          \
        v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32); \
        v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                    \
        v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                    \
        v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32); \
    } while (0)

/* SipHash-1-3 of the 8-byte message @m under key @k: a pseudorandom function, so one output
 * tells nothing of the next without the key. */
static uint64_t siphash13_u64(const uint64_t k[2], uint64_t m)
{
    uint64_t v0 = 0x736f6d6570736575ULL ^ k[0], v1 = 0x646f72616e646f6dULL ^ k[1];
    uint64_t v2 = 0x6c7967656e657261ULL ^ k[0], v3 = 0x7465646279746573ULL ^ k[1];
    const uint64_t b = 8ULL << 56; /* the length, no tail bytes */
    v3 ^= m;
    SIPROUND;
    v0 ^= m;
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* A fresh nonzero key: the next value of SipHash under the process's secret (128 bits from
 * getrandom at setup), so keys are unpredictable without a system call per region. */
static uint64_t next_key(tc_shm_t *s)
{
    uint64_t key;
    do
        key = siphash13_u64(s->key_secret,
                            atomic_fetch_add_explicit(&s->key_next, 1, memory_order_relaxed)) &
              KEY_MASK;
    while (key == 0);
    return key;
}

/* Publish private copy @r as descriptor @d (this process's, slot @slot). */
static void region_publish(tc_region_desc_t *d, const tc_region_snap_t *r)
{
    /* Release fence: the even gen of the destroy before (or the zeroed segment) is ordered
     * before every field stored below: a copier that reads one of them fails its gen check
     * (tc_region_snapshot's acquire fence). */
    atomic_thread_fence(memory_order_release);
    for (uint32_t i = 0; i < r->niov; i++) {
        atomic_store_explicit(&d->iov[i].base, r->iov[i].base, memory_order_relaxed);
        atomic_store_explicit(&d->iov[i].len, r->iov[i].len, memory_order_relaxed);
    }
    atomic_store_explicit(&d->niov, r->niov, memory_order_relaxed);
    atomic_store_explicit(&d->len, r->len, memory_order_relaxed);
    atomic_store_explicit(&d->rights, r->rights, memory_order_relaxed);
    atomic_store_explicit(&d->key, r->key, memory_order_relaxed);
    atomic_store_explicit(&d->seal, r->seal, memory_order_relaxed);
    /* Release: a copier that acquires the odd gen sees the fields above. */
    atomic_store_explicit(&d->gen, r->gen, memory_order_release);
}

tc_status_t tc_region_create(tc_shm_t *s, const struct iovec *iov, int niov, unsigned rights,
                             uint64_t *cookie)
{
    if (!iov || !cookie || niov < 1 || niov > TC_REGION_MAX_IOV ||
        (rights & ~(TC_RIGHT_READ | TC_RIGHT_WRITE)) != 0)
        return TC_ERR_INVAL;
    uint64_t total = 0, key;
    for (int i = 0; i < niov; i++) {
        uintptr_t b = (uintptr_t)iov[i].iov_base;
        if (iov[i].iov_len > UINTPTR_MAX - b || iov[i].iov_len > SIZE_MAX - total)
            return TC_ERR_INVAL; /* wraps around the address space */
        total += iov[i].iov_len;
    }
    if (s->me >= TC_COOKIE_OWNERS) return TC_ERR_NOSUPPORT;
    /* The slot claimed by one atomic exchange: the only word two threads
     * of the process may both write (a request freed beside a call).
     * Acquire on success: pairs with the release of the destroy that
     * freed the slot, so the claimer reads that thread's last gen and
     * key (the slot's private copy is then the claimer's alone). */
    uint64_t used = atomic_load_explicit(&s->region_used, memory_order_relaxed);
    int slot;
    do {
        if (used == ~0ULL) return TC_ERR_NOSPACE;
        slot = __builtin_ctzll(~used);
    } while (!atomic_compare_exchange_weak_explicit(&s->region_used, &used, used | 1ULL << slot,
                                                    memory_order_acquire, memory_order_relaxed));
    key = next_key(s);
    /* Only this process writes its descriptors, from its private copy (never read back). */
    tc_region_snap_t *r = &s->own[slot];
    r->gen++; /* even -> odd */
    r->rights = rights;
    r->niov = (uint32_t)niov;
    r->key = key;
    r->len = total;
    for (int i = 0; i < niov; i++) {
        r->iov[i].base = (uint64_t)(uintptr_t)iov[i].iov_base;
        r->iov[i].len = (uint64_t)iov[i].iov_len;
    }
    r->seal = tc_region_seal(r, slot, s->peer[s->me].seal);
    region_publish(desc_of(s, s->me, slot), r);
    *cookie = COOKIE(s->me, slot, key);
    atomic_fetch_add_explicit(&s->regions_declared, 1, memory_order_relaxed);
    return TC_OK;
}

tc_status_t tc_region_destroy(tc_shm_t *s, uint64_t cookie)
{
    int slot = COOKIE_SLOT(cookie);
    if (COOKIE_OWNER(cookie) != s->me) return TC_ERR_INVAL;
    tc_region_snap_t *r = &s->own[slot];
    if (!(atomic_load_explicit(&s->region_used, memory_order_relaxed) & (1ULL << slot)) ||
        r->key != COOKIE_KEY(cookie))
        return TC_ERR_STALE;
    r->gen++; /* odd -> even */
    r->key = 0;
    tc_region_desc_t *d = desc_of(s, s->me, slot);
    /* Release: copiers that load gen afterwards see the region dead. */
    atomic_store_explicit(&d->gen, r->gen, memory_order_release);
    atomic_store_explicit(&d->key, 0, memory_order_relaxed);
    /* Release: our stores to the slot's private copy (gen, key) before
     * the slot is free for another thread's create (its acquire). */
    atomic_fetch_and_explicit(&s->region_used, ~(1ULL << slot), memory_order_release);
    return TC_OK;
}

/* ---- Registrations kept across calls ------------------------------------------------ */

static int keep_match(const tc_region_keep_t *k, int i, const struct iovec *iov, int niov,
                      unsigned rights)
{
    if (k->e[i].niov != niov || k->e[i].rights != rights) return 0;
    for (int j = 0; j < niov; j++)
        if (k->e[i].iov[j].iov_base != iov[j].iov_base || k->e[i].iov[j].iov_len != iov[j].iov_len)
            return 0;
    return 1;
}

tc_status_t tc_region_acquire(tc_shm_t *s, tc_region_keep_t *keep, const struct iovec *iov,
                              int niov, unsigned rights, uint64_t *cookie)
{
    if (keep && iov && niov >= 1 && niov <= TC_REGION_KEEP_IOV)
        for (int i = 0; i < keep->n; i++)
            if (keep_match(keep, i, iov, niov, rights)) {
                *cookie = keep->e[i].cookie;
                return TC_OK;
            }
    tc_status_t st = tc_region_create(s, iov, niov, rights, cookie);
    if (st != TC_OK || !keep || keep->n == TC_REGION_KEEP || niov > TC_REGION_KEEP_IOV) return st;
    if (atomic_fetch_add_explicit(&s->region_kept, 1, memory_order_relaxed) >=
        TC_REGION_KEPT_MAX) { /* (the budget's: declared per call) */
        atomic_fetch_sub_explicit(&s->region_kept, 1, memory_order_relaxed);
        return st;
    }
    int i = keep->n++;
    for (int j = 0; j < niov; j++) keep->e[i].iov[j] = iov[j];
    keep->e[i].niov = niov;
    keep->e[i].rights = rights;
    keep->e[i].cookie = *cookie;
    return TC_OK;
}

/* Entry @i of @keep goes (its region destroyed unless @s is NULL). */
static void keep_drop(tc_shm_t *s, tc_region_keep_t *keep, int i)
{
    if (s) {
        tc_region_destroy(s, keep->e[i].cookie);
        atomic_fetch_sub_explicit(&s->region_kept, 1, memory_order_relaxed);
    }
    keep->e[i] = keep->e[--keep->n];
}

void tc_region_release(tc_shm_t *s, tc_region_keep_t *keep, uint64_t cookie, int ok)
{
    if (!cookie) return;
    for (int i = 0; keep && i < keep->n; i++)
        if (keep->e[i].cookie == cookie) {
            if (!ok) keep_drop(s, keep, i);
            return;
        }
    tc_region_destroy(s, cookie);
}

void tc_region_keep_clear(tc_shm_t *s, tc_region_keep_t *keep)
{
    while (keep && keep->n > 0) keep_drop(s, keep, keep->n - 1);
}

/* ---- Copies -------------------------------------------------------------------------- */

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

/* Copy @total bytes between local segments @lv and @owner's region segments @rp, by memcpy
 * for our own region, by CMA otherwise (at the pid of the setup exchange): TC_OK with the
 * bytes copied in *@copied, or a TC_ERR_*. */
static tc_status_t copy_segments(tc_shm_t *s, int owner, int dir, struct iovec *lv, int nl,
                                 struct iovec *rp, int nr, size_t total, size_t *copied)
{
    size_t done = 0;
    const pid_t pid = (pid_t)s->peer[owner].pid;
    iov_advance(&lv, &nl, 0); /* skip empty local segments */
    while (done < total && nl > 0 && nr > 0) {
        size_t moved;
        if (owner == s->me) {
            moved = lv->iov_len < rp->iov_len ? lv->iov_len : rp->iov_len;
            if (dir == TC_DIR_FROM_REGION)
                memcpy(lv->iov_base, rp->iov_base, moved);
            else
                memcpy(rp->iov_base, lv->iov_base, moved);
        } else {
            unsigned long nlc = nl > IOV_MAX ? IOV_MAX : (unsigned long)nl;
            ssize_t n = dir == TC_DIR_FROM_REGION
                            ? process_vm_readv(pid, lv, nlc, rp, (unsigned long)nr, 0)
                            : process_vm_writev(pid, lv, nlc, rp, (unsigned long)nr, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return tc_status_sys(n < 0 ? errno : EIO); /* (0: nothing moved) */
            moved = (size_t)n;
            s->bytes_sc += moved;
        }
        done += moved;
        iov_advance(&lv, &nl, moved);
        iov_advance(&rp, &nr, moved);
    }
    *copied = done;
    return TC_OK;
}

/* Inline copy with region @r (validated) of @owner: rights, bounds, then the copy (the bytes
 * copied in *@copied). */
static tc_status_t copy_with(tc_shm_t *s, int owner, const tc_region_snap_t *r, size_t offset,
                             const struct iovec *local, int nlocal, int dir, size_t *copied)
{
    if (!(r->rights & (dir == TC_DIR_FROM_REGION ? TC_RIGHT_READ : TC_RIGHT_WRITE)))
        return TC_ERR_RIGHTS;
    size_t total = 0;
    for (int i = 0; i < nlocal; i++) {
        if (local[i].iov_len > SIZE_MAX - total) return TC_ERR_BOUNDS;
        total += local[i].iov_len;
    }
    if (offset > r->len || total > r->len - offset) return TC_ERR_BOUNDS;
    if (total == 0) return TC_OK;
    if (owner != s->me && !s->single_copy) return TC_ERR_NOSUPPORT;

    struct iovec rv[TC_REGION_MAX_IOV];
    int nr = tc_region_span(r, offset, total, rv);
    if (nr < 0) return (tc_status_t)nr;
    struct iovec lstore[16], *lbuf = lstore;
    if (nlocal > 16 && !(lbuf = malloc((size_t)nlocal * sizeof(*lbuf))))
        return tc_status_sys(ENOMEM);
    memcpy(lbuf, local, (size_t)nlocal * sizeof(*lbuf));
    tc_status_t rc = copy_segments(s, owner, dir, lbuf, nlocal, rv, nr, total, copied);
    if (lbuf != lstore) free(lbuf);
    return rc;
}

tc_status_t tc_region_copy(tc_shm_t *s, uint64_t cookie, size_t offset, const struct iovec *local,
                           int nlocal, int dir, size_t *copied)
{
    size_t ignored;
    if (!copied) copied = &ignored;
    *copied = 0;
    if (nlocal < 0 || (nlocal > 0 && !local) ||
        (dir != TC_DIR_FROM_REGION && dir != TC_DIR_TO_REGION))
        return TC_ERR_INVAL;
    tc_region_snap_t tmp;
    const tc_region_snap_t *r;
    tc_status_t rc = region_get(s, cookie, &tmp, &r);
    if (rc != TC_OK) return rc;
    return copy_with(s, COOKIE_OWNER(cookie), r, offset, local, nlocal, dir, copied);
}

/* ---- Region copy (two cookies) --------------------------------------------- */

/* Region @cookie for @right and [off, off + len): its validated snapshot in *@out (see
 * region_get), 0 or a TC_ERR_*. */
static tc_status_t region_check(tc_shm_t *s, uint64_t cookie, unsigned right, size_t off,
                                size_t len, tc_region_snap_t *tmp, const tc_region_snap_t **out)
{
    tc_status_t rc = region_get(s, cookie, tmp, out);
    if (rc != TC_OK) return rc;
    if (!((*out)->rights & right)) return TC_ERR_RIGHTS;
    if (off > (*out)->len || len > (*out)->len - off) return TC_ERR_BOUNDS;
    return TC_OK;
}

#define TC_BOUNCE (256u << 10)

/* tc_region_copy2 through the bounce buffer *@bounce (allocated on first use).  Each region is
 * snapshotted once; between bounce chunks only its generation is looked at again. */
static tc_status_t region_copy2(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst, size_t doff,
                                size_t len, char **bounce)
{
    tc_region_snap_t ts, td;
    const tc_region_snap_t *rs, *rd;
    tc_status_t rc;
    int so = COOKIE_OWNER(src), dow = COOKIE_OWNER(dst);
    if ((rc = region_check(s, src, TC_RIGHT_READ, soff, len, &ts, &rs)) != 0) return rc;
    if ((rc = region_check(s, dst, TC_RIGHT_WRITE, doff, len, &td, &rd)) != 0) return rc;
    if (len == 0) return TC_OK;
    struct iovec v[TC_REGION_MAX_IOV];
    size_t got = 0;
    if (so == s->me || dow == s->me) { /* one write into dst, or one read from src */
        int n = so == s->me ? tc_region_span(rs, soff, len, v) : tc_region_span(rd, doff, len, v);
        if (n < 0) return (tc_status_t)n;
        rc = so == s->me ? copy_with(s, dow, rd, doff, v, n, TC_DIR_TO_REGION, &got)
                         : copy_with(s, so, rs, soff, v, n, TC_DIR_FROM_REGION, &got);
        return rc != TC_OK || got == len ? rc : TC_ERR_SYS;
    }
    if (!*bounce && !(*bounce = malloc(TC_BOUNCE))) return tc_status_sys(ENOMEM);
    size_t done = 0;
    while (done < len) {
        size_t k = len - done < TC_BOUNCE ? len - done : TC_BOUNCE;
        struct iovec b = { *bounce, k };
        tc_status_t r = TC_ERR_STALE;
        got = 0;
        if (region_live(s, src, rs))
            r = copy_with(s, so, rs, soff + done, &b, 1, TC_DIR_FROM_REGION, &got);
        if (r == TC_OK && got == k) {
            r = TC_ERR_STALE;
            got = 0;
            if (region_live(s, dst, rd))
                r = copy_with(s, dow, rd, doff + done, &b, 1, TC_DIR_TO_REGION, &got);
        }
        if (r < 0) return done ? tc_status_sys(tc_status_errno()) : r;
        if (got != k) return TC_ERR_SYS;
        done += k;
    }
    return TC_OK;
}

tc_status_t tc_region_copy2(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst, size_t doff,
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

tc_status_t tc_async_submit_inline(tc_shm_t *s, uint64_t cookie, size_t offset,
                                   const struct iovec *local, int nlocal, int dir,
                                   long long *status)
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

tc_status_t tc_async_submit_region(tc_shm_t *s, uint64_t src, size_t soff, uint64_t dst,
                                   size_t doff, size_t len, long long *status)
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
        size_t got = a->len;
        tc_status_t rc = a->region_copy ? region_copy2(s, a->cookie, a->offset, a->cookie2,
                                                       a->offset2, a->len, &s->bounce_async)
                                        : tc_region_copy(s, a->cookie, a->offset, a->local,
                                                         a->nlocal, a->dir, &got);
        long long r = rc != TC_OK ? (long long)rc : (long long)got; /* (the public word) */
        long long *st = a->status;
        atomic_store_explicit(&a->state, TC_ASYNC_FREE, memory_order_release);
        atomic_fetch_sub_explicit(&s->async_queued, 1, memory_order_release);
        /* Release: the submitter that reads the result sees the copied bytes. */
        __atomic_store_n(st, r, __ATOMIC_RELEASE);
        ran++;
    }
    return ran;
}
