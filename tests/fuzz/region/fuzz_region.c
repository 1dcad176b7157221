/*
 * fuzz_region -- libFuzzer target: a region descriptor read from the node's
 * shared segment (xfer/region), where any local process may have written
 * anything.  The input is a header and the descriptor's bytes:
 *
 *   0       slot (mod 64)          8..15   the owner's seal key
 *   1       flags (below)          16..23  the cookie's key
 *   2..7    unused                 24..31  the copy's offset
 *                                  32..39  the copy's length
 *   40..    the descriptor, as it lies in shared memory (zero-filled)
 *
 * flags nudge the descriptor towards validity, so the fuzzer also explores
 * what lies behind each check: 1 segment count in 1..16, 2 len the sum of
 * the segments (wrapping), 4 the key the cookie's, 8 gen odd, 16 the seal
 * recomputed on the snapshot.
 *
 * Contracts (abort on a breach): tc_region_snapshot reads at most
 * TC_REGION_MAX_IOV segments and says OK only for an odd gen and 1..16
 * segments; tc_region_validate says OK only for a sane snapshot (key,
 * rights, no segment wrapping, lengths summing to len, seal); then for any
 * request inside len, tc_region_span returns at most niov segments, each
 * inside one of the region's, summing to the request.
 */
#include "xfer/region.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HDR 40

static uint64_t word(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

#define REQUIRE(c)                  \
    do {                            \
        if (!(c)) __builtin_trap(); \
    } while (0)

/* The nudges of @flags, on the shared copy @d (before the snapshot). */
static void nudge(tc_region_desc_t *d, unsigned flags, uint64_t key)
{
    if (flags & 1) atomic_store(&d->niov, 1 + atomic_load(&d->niov) % TC_REGION_MAX_IOV);
    if (flags & 2) {
        uint32_t n = atomic_load(&d->niov);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < n && i < TC_REGION_MAX_IOV; i++)
            sum += atomic_load(&d->iov[i].len);
        atomic_store(&d->len, sum);
    }
    if (flags & 4) atomic_store(&d->key, key);
    if (flags & 8) atomic_store(&d->gen, atomic_load(&d->gen) | 1);
}

/* A validated snapshot's invariants. */
static void check_valid(const tc_region_snap_t *r, uint64_t key)
{
    REQUIRE(r->gen & 1);
    REQUIRE(r->key == key && key != 0);
    REQUIRE(r->niov >= 1 && r->niov <= TC_REGION_MAX_IOV);
    REQUIRE((r->rights & ~(TC_RIGHT_READ | TC_RIGHT_WRITE)) == 0);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < r->niov; i++) {
        REQUIRE(r->iov[i].base + r->iov[i].len >= r->iov[i].base); /* no wrap */
        REQUIRE(sum + r->iov[i].len >= sum);
        sum += r->iov[i].len;
    }
    REQUIRE(sum == r->len);
}

/* The segments tc_region_span gives for [off, off + len) of valid @r. */
static void check_span(const tc_region_snap_t *r, uint64_t off, uint64_t len)
{
    struct iovec rv[TC_REGION_MAX_IOV + 1];
    memset(rv, 0, sizeof(rv));
    int n = tc_region_span(r, (size_t)off, (size_t)len, rv);
    REQUIRE(n >= 0 && (uint32_t)n <= r->niov);
    REQUIRE(rv[TC_REGION_MAX_IOV].iov_base == NULL && rv[TC_REGION_MAX_IOV].iov_len == 0);
    uint64_t got = 0;
    for (int k = 0; k < n; k++) {
        uint64_t b = (uint64_t)(uintptr_t)rv[k].iov_base, l = rv[k].iov_len;
        int inside = 0;
        for (uint32_t i = 0; i < r->niov && !inside; i++)
            inside = b >= r->iov[i].base && l <= r->iov[i].len &&
                     b - r->iov[i].base <= r->iov[i].len - l;
        REQUIRE(inside && l > 0);
        got += l;
    }
    REQUIRE(got == len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HDR) return 0;
    const int slot = data[0] % TC_REGION_SLOTS;
    const unsigned flags = data[1];
    const uint64_t secret = word(data + 8), key = word(data + 16);
    const uint64_t off = word(data + 24), len = word(data + 32);
    static tc_region_desc_t d; /* (64-byte aligned, as in the segment) */
    memset((void *)&d, 0, sizeof(d));
    memcpy((void *)&d, data + HDR, size - HDR < sizeof(d) ? size - HDR : sizeof(d));
    nudge(&d, flags, key);

    tc_region_snap_t r;
    memset(&r, 0xa5, sizeof(r));
    int rc = tc_region_snapshot(&d, &r);
    REQUIRE(rc == TC_OK || rc == TC_ERR_STALE);
    if (rc != TC_OK) return 0;
    REQUIRE((r.gen & 1) && r.niov >= 1 && r.niov <= TC_REGION_MAX_IOV);
    if (flags & 16) r.seal = tc_region_seal(&r, slot, secret);
    rc = tc_region_validate(&r, slot, key, secret);
    REQUIRE(rc == TC_OK || rc == TC_ERR_STALE);
    if (rc != TC_OK) return 0;
    check_valid(&r, key);
    /* any single field changed: the seal no longer matches */
    tc_region_snap_t t = r;
    t.iov[0].base ^= 1;
    REQUIRE(tc_region_validate(&t, slot, key, secret) == TC_ERR_STALE);
    if (off <= r.len && len <= r.len - off) check_span(&r, off, len);
    return 0;
}
