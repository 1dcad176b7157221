/*
 * test_hostile -- a hostile (or corrupted) local process: the last rank, H,
 * writes garbage into what it shares in the node segment of a
 * communicator, and the other ranks, which then copy from and into its
 * regions or run collectives it feeds, must get an error status: never a
 * crash, a hang (alarm), a byte written outside the buffers they gave
 * (guard zones) or into another process's memory (the victim, rank 0,
 * checks its buffer), nor a read outside a region.
 *
 *  1. Region descriptors (one region per corruption, copied through the
 *     native API: reads, writes, at offsets inside and past the region,
 *     region copies to and from the copier's own region, asynchronous
 *     copies): 300 segments (the segments themselves written on past the
 *     descriptor), a huge length, a segment wrapping the address space,
 *     segments not summing to the length, the generation changed, garbage
 *     rights, another region's descriptor copied over it, and a segment
 *     aimed at the victim's buffer with the victim's pid written in the
 *     tail of H's control line (where 0.5 kept the pid CMA used).
 *     Then cookies: random words, H's cookies with bits flipped.  Then H
 *     shifts the victim's descriptor (in the victim's table): the victim's
 *     own copies use its private copy, the others' fail.
 *  2. Eager items: H's item lines say a Bcast's item (4 KiB) holds far
 *     more (1 TiB; 64 bytes more) than it can, or carry a newer tag.
 *  3. Cookie words in H's control line: a single-copy Bcast rooted at H
 *     whose published cookie names a corrupted descriptor, garbage, a key
 *     with a bit flipped, a destroyed region.
 *  4. Afterwards, on a fresh communicator, everything works.
 * Arguments: the parts to run (regions, eager, cookies; all by default),
 * so each can be run alone against an older library that crashes early.
 * Each corruption gets a fresh communicator (a failed collective leaves
 * its own broken); H never calls the collectives it corrupts.  Links
 * topocoll_internal to reach the segment (coll/ctx).  One node, np >= 3.
 */
#include "topocoll.h"

#include "coll/ctx.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"

#define REG   (64u << 10) /* bytes of each of H's regions */
#define GUARD 256         /* guard bytes each side of a local buffer */
#define GBYTE 0x5c

static int rank, size, H;

/* A local buffer of @n bytes between two guard zones. */
static unsigned char *guarded(size_t n)
{
    unsigned char *b = malloc(n + 2 * GUARD);
    memset(b, GBYTE, n + 2 * GUARD);
    return b + GUARD;
}

static int guards_ok(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < GUARD; i++)
        if (p[-(long)GUARD + (long)i] != GBYTE || p[n + i] != GBYTE) return 0;
    return 1;
}

static void unguard(unsigned char *p) { free(p - GUARD); }

/* A fresh communicator over every rank, attached, errors returned. */
static MPI_Comm fresh(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    topocoll_comm_attach(c);
    return c;
}

static tc_shm_t *shm_of(MPI_Comm c)
{
    tc_ctx_t *x = tc_ctx_lookup(c);
    return x ? x->shm : NULL;
}

/* Local process @owner's live descriptor whose first segment starts at @base (or, @base NULL,
 * whose length is @len), found by scanning its table (whatever the cookie's layout). */
static tc_region_desc_t *find_desc(tc_shm_t *s, int owner, const void *base, uint64_t len)
{
    for (int k = 0; k < TC_REGION_SLOTS; k++) {
        tc_region_desc_t *d = &s->regions[(size_t)owner * TC_REGION_SLOTS + (size_t)k];
        if (!(atomic_load(&d->gen) & 1)) continue;
        if (base ? atomic_load(&d->iov[0].base) == (uint64_t)(uintptr_t)base
                 : atomic_load(&d->len) == len)
            return d;
    }
    return NULL;
}

/* ---- 1. Region descriptors --------------------------------------------------------- */

/* (C_NIOV last: its segments run on over the descriptors of the slots after its own) */
enum { C_LEN, C_WRAP, C_SUM, C_GEN, C_RIGHTS, C_OTHER, C_PID, C_NIOV, NCASES };
static const char *const case_name[NCASES] = { "len huge",
                                               "segment wraps",
                                               "sum != len",
                                               "gen changed",
                                               "rights garbage",
                                               "another's descriptor",
                                               "pid/base of the victim",
                                               "niov 300" };

/* H: corrupt its descriptor of case @k (region at @hb + k * REG); @vbase: the victim's buffer. */
static void corrupt(tc_shm_t *s, int k, unsigned char *hb, uint64_t vbase, pid_t vpid)
{
    tc_region_desc_t *d = find_desc(s, s->me, hb + (size_t)k * REG, 0);
    CHECK(d != NULL, "descriptor of case %d not found", k);
    if (!d) return;
    uint64_t *w = (uint64_t *)(void *)d->iov;
    switch (k) {
    case C_NIOV: /* 300 one-byte segments, written on over the next descriptors */
        for (int i = 0; i < 300; i++) {
            w[2 * i] = (uint64_t)(uintptr_t)hb;
            w[2 * i + 1] = 1;
        }
        atomic_store(&d->niov, 300);
        break;
    case C_LEN:
        atomic_store(&d->len, 1ULL << 62);
        atomic_store(&d->iov[0].len, 1ULL << 62);
        break;
    case C_WRAP: atomic_store(&d->iov[0].base, UINT64_MAX - 100); break;
    case C_SUM: atomic_store(&d->iov[0].len, 10); break;
    case C_GEN: atomic_store(&d->gen, atomic_load(&d->gen) ^ 2); break;
    case C_RIGHTS: atomic_store(&d->rights, 0xffffffffu); break;
    case C_OTHER: { /* the C_RIGHTS region's descriptor (before its change) over this one */
        tc_region_desc_t *o = find_desc(s, s->me, hb + (size_t)C_RIGHTS * REG, 0);
        if (o) memcpy((void *)d, (const void *)o, sizeof(*d));
        break;
    }
    case C_PID: { /* aim at the victim: its buffer's address, its pid in our line's tail */
        atomic_store(&d->iov[0].base, vbase);
        tc_ctl_t *l = &s->ctl[s->me];
        char *tail = (char *)&l->item[TC_SHM_ITEMS], *end = (char *)(l + 1);
        if (end - tail >= 16) {
            int32_t p = (int32_t)vpid;
            memcpy(tail, &p, sizeof(p));
            memcpy(tail + 8, &vbase, sizeof(vbase));
        }
        break;
    }
    }
}

/* A copier: every kind of copy with H's cookie @ck must fail, moving nothing. */
static void copy_all_fail(MPI_Comm c, uint64_t ck, topocoll_cookie_t mine, const char *what)
{
    enum { N = 4096 };
    unsigned char *l = guarded(N);
    memset(l, 0xab, N);
    struct iovec v = { l, N };
    long long n;
    n = topocoll_copy(c, ck, 0, &v, 1, TOPOCOLL_COPY_FROM_REGION);
    CHECK(n < 0, "%s: read returned %lld", what, n);
    n = topocoll_copy(c, ck, 1u << 20, &v, 1, TOPOCOLL_COPY_FROM_REGION);
    CHECK(n < 0, "%s: read past the region returned %lld", what, n);
    n = topocoll_copy(c, ck, 0, &v, 1, TOPOCOLL_COPY_TO_REGION);
    CHECK(n < 0, "%s: write returned %lld", what, n);
    n = topocoll_region_copy(c, ck, 0, mine, 0, N);
    CHECK(n < 0, "%s: region copy from it returned %lld", what, n);
    n = topocoll_region_copy(c, mine, 0, ck, 0, N);
    CHECK(n < 0, "%s: region copy into it returned %lld", what, n);
    long long st = 0;
    if (topocoll_copy_async(c, ck, 0, &v, 1, TOPOCOLL_COPY_FROM_REGION, &st) == 0) {
        for (int i = 0; i < 1000000 && topocoll_copy_poll(&st) == TOPOCOLL_COPY_PENDING; i++)
            ;
        CHECK(st < 0 && st != TOPOCOLL_COPY_PENDING, "%s: async read: status %lld", what, st);
    }
    CHECK(guards_ok(l, N), "%s: a copy wrote outside the local buffer", what);
    unguard(l);
}

/* H shifts the victim's descriptor (another process's table) by 64 bytes: the victim's own copy
 * still reads its region as declared (its private copy), the others' copies fail. */
static void third_party(MPI_Comm c, tc_shm_t *s, const unsigned char *vb, topocoll_cookie_t vck)
{
    if (rank == H) {
        tc_region_desc_t *vd = find_desc(s, 0, NULL, REG + 1);
        if (vd) atomic_fetch_add(&vd->iov[0].base, 64);
    }
    MPI_Barrier(c);
    unsigned char *l = guarded(REG + 1);
    struct iovec v = { l, REG + 1 };
    long long n = topocoll_copy(c, vck, 0, &v, 1, TOPOCOLL_COPY_FROM_REGION);
    if (rank == 0) {
        int ok = n == REG + 1;
        for (size_t i = 0; ok && i <= REG; i++) ok &= l[i] == vb[i];
        CHECK(ok, "the owner's copy from its own region, its descriptor shifted: %lld", n);
    } else if (rank != H) {
        CHECK(n < 0, "a copy from the victim's shifted descriptor returned %lld", n);
    }
    CHECK(guards_ok(l, REG + 1), "a copy wrote outside the local buffer");
    unguard(l);
    MPI_Barrier(c);
}

static void phase_regions(void)
{
    MPI_Comm c = fresh();
    tc_shm_t *s = shm_of(c);
    CHECK(s != NULL, "no segment");
    if (!s) return;
    unsigned char *hb = NULL, *vb = NULL, *mb = malloc(REG);
    topocoll_cookie_t ck[NCASES] = { 0 }, vck = 0, mine = 0;
    pid_t vpid = getpid();
    MPI_Bcast(&vpid, 1, MPI_INT, 0, c);
    if (rank == 0) { /* the victim's buffer, declared so H finds its address */
        vb = malloc(REG + 1);
        memset(vb, 0x11, REG + 1);
        struct iovec v = { vb, REG + 1 };
        CHECK(topocoll_region_create(c, &v, 1, TOPOCOLL_RIGHT_READ, &vck) == 0, "victim create");
    }
    if (rank == H) {
        hb = malloc((size_t)NCASES * REG);
        memset(hb, 0x22, (size_t)NCASES * REG);
        for (int k = 0; k < NCASES; k++) {
            struct iovec v = { hb + (size_t)k * REG, REG };
            CHECK(topocoll_region_create(c, &v, 1, TOPOCOLL_RIGHT_READ | TOPOCOLL_RIGHT_WRITE,
                                         &ck[k]) == 0,
                  "create %d", k);
        }
    } else {
        struct iovec v = { mb, REG };
        CHECK(topocoll_region_create(c, &v, 1, TOPOCOLL_RIGHT_READ | TOPOCOLL_RIGHT_WRITE, &mine) ==
                  0,
              "create own");
    }
    MPI_Bcast(ck, NCASES, MPI_UINT64_T, H, c);
    MPI_Bcast(&vck, 1, MPI_UINT64_T, 0, c);
    MPI_Barrier(c);
    if (rank == H) {
        tc_region_desc_t *vd = find_desc(s, 0, NULL, REG + 1);
        uint64_t vbase = vd ? atomic_load(&vd->iov[0].base) : 0;
        CHECK(vbase != 0, "the victim's descriptor not found");
        for (int k = NCASES - 1; k >= 0; k--) corrupt(s, k, hb, vbase, vpid);
    }
    MPI_Barrier(c);
    if (rank != H)
        for (int k = 0; k < NCASES; k++) copy_all_fail(c, ck[k], mine, case_name[k]);
    MPI_Barrier(c);
    if (rank != H) { /* cookies: garbage, and H's with bits flipped */
        unsigned char b[64];
        struct iovec v = { b, sizeof(b) };
        uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(rank + 1);
        int bad = 0;
        for (int i = 0; i < 2000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t w = i < 64 ? ck[C_LEN] ^ (1ULL << i) : x;
            if (topocoll_copy(c, w, 0, &v, 1, TOPOCOLL_COPY_FROM_REGION) >= 0) bad++;
        }
        CHECK(bad == 0, "%d forged or random cookies were accepted", bad);
        CHECK(topocoll_copy(c, ~0ULL, 0, &v, 1, 0) == TOPOCOLL_ERR_STALE, "cookie ~0");
        CHECK(topocoll_copy(c, 0, 0, &v, 1, 0) < 0, "cookie 0");
    }
    MPI_Barrier(c);
    third_party(c, s, vb, vck);
    if (rank == 0) {
        int ok = 1;
        for (size_t i = 0; i <= REG; i++) ok &= vb[i] == 0x11;
        CHECK(ok, "the victim's buffer was written through H's region");
    }
    if (rank == H) {
        int ok = 1;
        for (size_t i = 0; i < (size_t)NCASES * REG; i++) ok &= hb[i] == 0x22;
        CHECK(ok, "H's regions were written to");
    }
    MPI_Barrier(c);
    free(hb);
    free(vb);
    free(mb);
}

/* ---- 2. Eager items ----------------------------------------------------------------- */

/* H: its item lines claim @bytes under tag next + @ahead; the others Bcast 4 KiB from H. */
static void eager_case(uint64_t bytes, uint64_t ahead, const char *what)
{
    enum { N = 4096 };
    MPI_Comm c = fresh();
    tc_shm_t *s = shm_of(c);
    tc_ctx_t *x = tc_ctx_lookup(c);
    if (rank == H && s) {
        for (int i = 0; i < TC_SHM_ITEMS; i++) {
            tc_item_line_t *l = &s->ctl[s->me].item[i];
            atomic_store_explicit(&l->bytes, bytes, memory_order_relaxed);
            atomic_store_explicit(&l->tag, x->seq + 1 + ahead, memory_order_release);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != H) {
        unsigned char *b = guarded(N);
        int rc = topocoll_bcast(b, N, MPI_BYTE, H, c);
        CHECK(rc != MPI_SUCCESS, "%s: the Bcast succeeded", what);
        CHECK(guards_ok(b, N), "%s: the Bcast wrote outside its buffer", what);
        unguard(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- 3. Cookie words of the control line ------------------------------------------------ */

enum { K_CORRUPT, K_GARBAGE, K_FLIPPED, K_DESTROYED, NKINDS };

/* H publishes, as the source of a single-copy Bcast, a cookie of kind @kind; the others run it. */
static void cookie_case(int kind)
{
    enum { N = 64 << 10 };
    static const char *const what[NKINDS] = { "cookie of a corrupt descriptor", "garbage cookie",
                                              "cookie with a flipped key bit",
                                              "cookie of a destroyed region" };
    MPI_Comm c = fresh();
    tc_shm_t *s = shm_of(c);
    tc_ctx_t *x = tc_ctx_lookup(c);
    unsigned char *hb = NULL;
    if (rank == H && s) {
        hb = malloc(N);
        memset(hb, 0x33, N);
        topocoll_cookie_t ck = 0;
        struct iovec v = { hb, N };
        CHECK(topocoll_region_create(c, &v, 1, TOPOCOLL_RIGHT_READ, &ck) == 0, "create");
        tc_region_desc_t *d = find_desc(s, s->me, hb, 0);
        if (kind == K_CORRUPT && d) { /* as C_NIOV */
            uint64_t *w = (uint64_t *)(void *)d->iov;
            for (int i = 0; i < 300; i++) w[2 * i] = (uint64_t)(uintptr_t)hb, w[2 * i + 1] = 1;
            atomic_store(&d->niov, 300);
        }
        if (kind == K_GARBAGE) ck = 0xdeadbeefcafef00dULL;
        if (kind == K_FLIPPED) ck ^= 1;
        if (kind == K_DESTROYED) topocoll_region_destroy(c, ck);
        tc_cctl_t *m = tc_cctl(s, s->me);
        atomic_store_explicit(&m->total, N, memory_order_relaxed); /* the right size */
        atomic_store_explicit(&m->cookie, ck, memory_order_relaxed);
        for (int r = 0; r < TC_CTL_PARTS; r++)
            atomic_store_explicit(&m->ready_bytes[r], N, memory_order_relaxed);
        atomic_store_explicit(&m->ready_seq, x->seq + 1, memory_order_release);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != H) {
        unsigned char *b = guarded(N);
        memset(b, 0, N);
        int rc = topocoll_bcast(b, N, MPI_BYTE, H, c);
        CHECK(rc != MPI_SUCCESS, "%s: the Bcast succeeded", what[kind]);
        CHECK(guards_ok(b, N), "%s: the Bcast wrote outside its buffer", what[kind]);
        unguard(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(hb);
}

/* ---- 4. Afterwards ------------------------------------------------------------------------ */

static void phase_sane(void)
{
    enum { N = 64 << 10 };
    MPI_Comm c = fresh();
    unsigned char *b = malloc(N);
    for (size_t i = 0; i < N; i++) b[i] = rank == H ? (unsigned char)(i * 7) : 0;
    CHECK(topocoll_bcast(b, N, MPI_BYTE, H, c) == MPI_SUCCESS, "a sane Bcast failed");
    int ok = 1;
    for (size_t i = 0; i < N; i++) ok &= b[i] == (unsigned char)(i * 7);
    CHECK(ok, "a sane Bcast's data wrong");
    free(b);
}

/* 1 if part @name is to run: named in argv, or no part named. */
static int part(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0) return 1;
    return argc < 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    H = size - 1;
    alarm(240); /* a hang is a failure, not a stuck test */
    MPI_Comm probe = fresh();
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    CHECK(topocoll_comm_query(probe, &info) == MPI_SUCCESS, "query");
    CHECK(size >= 3 && info.local_size == size, "np >= 3 on one node (local size %d)",
          info.local_size);
    if (tc_failures == 0) {
        if (part(argc, argv, "regions")) phase_regions();
        if (part(argc, argv, "eager")) {
            eager_case(1ULL << 40, 0, "eager item of 1 TiB");
            eager_case(4096 + 64, 0, "eager item 64 bytes too long");
            eager_case(4096, 3, "eager item with a newer tag");
        }
        int cookies = part(argc, argv, "cookies");
        if (cookies && info.single_copy)
            for (int k = 0; k < NKINDS; k++) cookie_case(k);
        else if (cookies && rank == 0)
            printf("test_hostile: no single copy here (%s): cookie words not tried\n",
                   info.mechanism_why);
        phase_sane();
    }
    int f = tc_report("test_hostile");
    MPI_Finalize();
    return f ? 1 : 0;
}
