/*
 * test_region -- the single-copy engine (KNEM semantics over CMA): reads
 * and writes through cookies, bounds and rights refused before any byte
 * moves, vectorial regions and local vectors, stale cookies, a full region
 * table, cookies that are not predictable (random keys, not a counter),
 * bad arguments, an unattached communicator, and (when run with
 * TOPOCOLL_SINGLE_COPY=none) the refusal of remote copies; KNEM's region
 * copy between two other processes' regions and the asynchronous copies
 * (polled, or run by the progress thread under TOPOCOLL_COMM_CORES).  Rank 0 owns the
 * regions; every other rank copies.  All ranks must share one node.
 */
#include "topocoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank;

static unsigned char pat(size_t i) { return (unsigned char)(i * 7 + 3); }

int main(int argc, char **argv)
{
    int size;
    /* the native API's way to a progress thread (libtopocoll_pmpi.so's
     * MPI_Init does the same) */
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, topocoll_progress_thread_level(MPI_THREAD_SINGLE), &provided);
    /* without MPI_THREAD_MULTIPLE: a warning and no thread, not a crash */
    int none_started =
        topocoll_progress_init(MPI_THREAD_FUNNELED) == 0 && topocoll_progress_core() == -1;
    topocoll_progress_init(provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tc_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm = MPI_COMM_WORLD;
    CHECK(none_started, "a progress thread started without MPI_THREAD_MULTIPLE");
    topocoll_comm_attach(comm);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    CHECK(topocoll_comm_query(comm, &info) == MPI_SUCCESS, "query");
    const char *scenv = getenv("TOPOCOLL_SINGLE_COPY");
    int none = scenv && strcmp(scenv, "none") == 0;
    CHECK(info.local_size == size, "all ranks must share a node (local size %d)", info.local_size);
    CHECK(info.single_copy == !none, "single copy %d with TOPOCOLL_SINGLE_COPY=%s (%s)",
          info.single_copy, scenv ? scenv : "unset", info.mechanism_why);
    int remote_err =
        none ? TOPOCOLL_ERR_NOSUPPORT : 0; /* what a remote copy returns on failure mode */

    /* 1. a read-only region */
    enum { N = 4096 };
    unsigned char *a = malloc(N), got[N];
    for (size_t i = 0; i < N; i++) a[i] = rank == 0 ? pat(i) : 0;
    topocoll_cookie_t ck = 0;
    if (rank == 0) {
        struct iovec iv = { a, N };
        CHECK(topocoll_region_create(comm, &iv, 1, TOPOCOLL_RIGHT_READ, &ck) == TOPOCOLL_SUCCESS,
              "create");
    }
    PMPI_Bcast(&ck, 1, MPI_UINT64_T, 0, comm);
    if (rank > 0) {
        struct iovec l = { got, 1000 };
        long long n = topocoll_copy(comm, ck, 100, &l, 1, TOPOCOLL_COPY_FROM_REGION);
        if (none)
            CHECK(n == TOPOCOLL_ERR_NOSUPPORT, "remote read without single copy gave %lld", n);
        else {
            CHECK(n == 1000, "read returned %lld", n);
            int ok = 1;
            for (size_t i = 0; i < 1000; i++)
                if (got[i] != pat(100 + i)) ok = 0;
            CHECK(ok, "read data wrong");
        }
        memset(got, 0xee, sizeof(got));
        l.iov_len = 200;
        CHECK(topocoll_copy(comm, ck, 4000, &l, 1, TOPOCOLL_COPY_FROM_REGION) ==
                  TOPOCOLL_ERR_BOUNDS,
              "bounds: tail");
        CHECK(topocoll_copy(comm, ck, 5000, &l, 1, TOPOCOLL_COPY_FROM_REGION) ==
                  TOPOCOLL_ERR_BOUNDS,
              "bounds: offset");
        CHECK(topocoll_copy(comm, ck, (size_t)-100, &l, 1, TOPOCOLL_COPY_FROM_REGION) ==
                  TOPOCOLL_ERR_BOUNDS,
              "bounds: wrap");
        CHECK(got[0] == 0xee, "a refused copy moved bytes");
        CHECK(topocoll_copy(comm, ck, 0, &l, 1, TOPOCOLL_COPY_TO_REGION) == TOPOCOLL_ERR_RIGHTS,
              "rights: write to read-only");
        l.iov_len = 0;
        CHECK(topocoll_copy(comm, ck, N, &l, 1, TOPOCOLL_COPY_FROM_REGION) == 0,
              "empty copy at the end");
        CHECK(topocoll_copy(comm, ck, 0, &l, 1, 7) == TOPOCOLL_ERR_INVAL, "bad direction");
    }
    PMPI_Barrier(comm);

    /* 2. a vectorial read-write region: segments of 100, 1 and 5000 bytes */
    unsigned char *s0 = malloc(100), s1[1], *s2 = malloc(5000);
    const size_t V = 5101;
    for (size_t i = 0; i < V; i++) {
        unsigned char v = rank == 0 ? pat(i + 11) : 0;
        if (i < 100)
            s0[i] = v;
        else if (i == 100)
            s1[0] = v;
        else
            s2[i - 101] = v;
    }
    topocoll_cookie_t cv = 0;
    if (rank == 0) {
        struct iovec iv[3] = { { s0, 100 }, { s1, 1 }, { s2, 5000 } };
        CHECK(topocoll_region_create(comm, iv, 3, TOPOCOLL_RIGHT_READ | TOPOCOLL_RIGHT_WRITE,
                                     &cv) == 0,
              "create iov");
    }
    PMPI_Bcast(&cv, 1, MPI_UINT64_T, 0, comm);
    if (rank > 0) {
        unsigned char *x = malloc(3000), *y = malloc(2101);
        struct iovec l[3] = { { x, 3000 }, { NULL, 0 }, { y, 2101 } };
        long long n = topocoll_copy(comm, cv, 0, l, 3, TOPOCOLL_COPY_FROM_REGION);
        if (!none) {
            CHECK(n == (long long)V, "iov read returned %lld", n);
            int ok = 1;
            for (size_t i = 0; i < V; i++)
                if ((i < 3000 ? x[i] : y[i - 3000]) != pat(i + 11)) ok = 0;
            CHECK(ok, "iov read data wrong");
        } else {
            CHECK(n == remote_err, "iov read without single copy gave %lld", n);
        }
        free(x);
        free(y);
    }
    PMPI_Barrier(comm); /* every read done before anyone writes */
    if (rank > 0 && !none) {
        /* each rank writes 10 bytes of its own across the segment boundaries */
        unsigned char w[10];
        memset(w, 0x40 + rank, sizeof(w));
        struct iovec lw = { w, 10 };
        size_t off = 95 + (size_t)(rank - 1) * 10;
        CHECK(topocoll_copy(comm, cv, off, &lw, 1, TOPOCOLL_COPY_TO_REGION) == 10, "iov write");
    }
    PMPI_Barrier(comm);
    if (rank == 0 && !none) {
        int ok = 1;
        for (int r = 1; r < size; r++)
            for (size_t i = 95 + (size_t)(r - 1) * 10; i < 105 + (size_t)(r - 1) * 10; i++) {
                unsigned char v = i < 100 ? s0[i] : i == 100 ? s1[0] : s2[i - 101];
                if (v != 0x40 + r) ok = 0;
            }
        CHECK(ok, "writes into the vectorial region wrong");
    }
    if (rank == 0) { /* the owner may copy from its own region, single copy or not */
        unsigned char x[200];
        struct iovec l = { x, 200 };
        CHECK(topocoll_copy(comm, cv, 2000, &l, 1, TOPOCOLL_COPY_FROM_REGION) == 200 &&
                  x[0] == pat(2011),
              "local copy from own region");
    }
    PMPI_Barrier(comm);

    /* 3. stale cookies */
    if (rank == 0) {
        CHECK(topocoll_region_destroy(comm, ck) == 0, "destroy");
        CHECK(topocoll_region_destroy(comm, ck) == TOPOCOLL_ERR_STALE, "destroy twice");
        CHECK(topocoll_region_destroy(comm, cv) == 0, "destroy iov");
    }
    PMPI_Barrier(comm);
    if (rank > 0) {
        struct iovec l = { got, 10 };
        CHECK(topocoll_copy(comm, ck, 0, &l, 1, TOPOCOLL_COPY_FROM_REGION) == TOPOCOLL_ERR_STALE,
              "stale read");
        CHECK(topocoll_copy(comm, cv, 0, &l, 1, TOPOCOLL_COPY_TO_REGION) == TOPOCOLL_ERR_STALE,
              "stale write");
        CHECK(topocoll_copy(comm, 0xffff000000000001ULL, 0, &l, 1, TOPOCOLL_COPY_FROM_REGION) ==
                  TOPOCOLL_ERR_STALE,
              "unknown owner");
        CHECK(topocoll_region_destroy(comm, ck) == TOPOCOLL_ERR_INVAL,
              "destroying another process's region");
    }
    /* A slot reused by a new region does not revive the old cookie. */
    topocoll_cookie_t again = 0;
    if (rank == 0) {
        struct iovec iv = { a, N };
        CHECK(topocoll_region_create(comm, &iv, 1, TOPOCOLL_RIGHT_READ, &again) == 0 && again != ck,
              "reuse slot");
        CHECK(again - ck != 2, "the reused slot's cookie is the old one plus 2 (predictable)");
    }
    PMPI_Barrier(comm);
    if (rank > 0) {
        struct iovec l = { got, 10 };
        CHECK(topocoll_copy(comm, ck, 0, &l, 1, TOPOCOLL_COPY_FROM_REGION) == TOPOCOLL_ERR_STALE,
              "old cookie after reuse");
    }
    PMPI_Barrier(comm);
    if (rank == 0) topocoll_region_destroy(comm, again);

    /* 4. a full table, 5. bad arguments (local) */
    topocoll_cookie_t many[65];
    struct iovec iv = { a, N };
    int made = 0;
    while (made < 65 && topocoll_region_create(comm, &iv, 1, TOPOCOLL_RIGHT_READ, &many[made]) == 0)
        made++;
    CHECK(made == 64, "table held %d regions", made);
    int same = 0; /* cookies carry random keys: no two alike in their low 32 bits */
    for (int i = 0; i < made; i++)
        for (int j = 0; j < i; j++) same += (uint32_t)many[i] == (uint32_t)many[j];
    CHECK(same == 0, "%d pairs of cookies share their low 32 bits (predictable)", same);
    CHECK(topocoll_region_create(comm, &iv, 1, TOPOCOLL_RIGHT_READ, &many[0]) ==
              TOPOCOLL_ERR_NOSPACE,
          "no space");
    for (int i = 0; i < made; i++) topocoll_region_destroy(comm, many[i]);
    struct iovec iv17[17];
    for (int i = 0; i < 17; i++) iv17[i] = iv;
    topocoll_cookie_t c2;
    CHECK(topocoll_region_create(comm, &iv, 0, TOPOCOLL_RIGHT_READ, &c2) == TOPOCOLL_ERR_INVAL,
          "niov 0");
    CHECK(topocoll_region_create(comm, iv17, 17, TOPOCOLL_RIGHT_READ, &c2) == TOPOCOLL_ERR_INVAL,
          "niov 17");
    CHECK(topocoll_region_create(comm, &iv, 1, 4, &c2) == TOPOCOLL_ERR_INVAL, "bad rights");
    MPI_Comm other;
    MPI_Comm_dup(comm, &other);
    CHECK(topocoll_region_create(other, &iv, 1, TOPOCOLL_RIGHT_READ, &c2) == TOPOCOLL_ERR_NOCTX,
          "unattached comm");
    MPI_Comm_free(&other);

    /* 6. a large region read into many small local segments (CMA loop) */
    const size_t B = 8u << 20;
    unsigned char *big = malloc(B);
    for (size_t i = 0; i < B; i++) big[i] = rank == 0 ? pat(i * 3) : 0;
    topocoll_cookie_t cb = 0;
    if (rank == 0) {
        struct iovec bv = { big, B };
        topocoll_region_create(comm, &bv, 1, TOPOCOLL_RIGHT_READ, &cb);
    }
    PMPI_Bcast(&cb, 1, MPI_UINT64_T, 0, comm);
    if (rank > 0 && !none) {
        enum { NL = 2000 }; /* more than IOV_MAX (1024) local segments */
        struct iovec *lv = malloc(NL * sizeof(*lv));
        size_t per = B / NL;
        for (int i = 0; i < NL; i++) {
            lv[i].iov_base = big + (size_t)i * per;
            lv[i].iov_len = i == NL - 1 ? B - per * (NL - 1) : per;
        }
        CHECK(topocoll_copy(comm, cb, 0, lv, NL, TOPOCOLL_COPY_FROM_REGION) == (long long)B,
              "big read");
        int ok = 1;
        for (size_t i = 0; i < B; i++)
            if (big[i] != pat(i * 3)) {
                ok = 0;
                break;
            }
        CHECK(ok, "big read data wrong");
        free(lv);
    }
    PMPI_Barrier(comm);
    if (rank == 0) topocoll_region_destroy(comm, cb);

    /* 9. KNEM region copy between two other processes' regions (rank
     *    size-1 moves rank 0's bytes into rank 1's buffer: third party when
     *    np >= 3), more than the 256 KiB bounce buffer, rights and bounds;
     *    then the asynchronous inline and region copies, polled, or (with
     *    TOPOCOLL_COMM_CORES) run by the progress thread without a poll. */
    if (size >= 2) {
        enum { R = 600000 };
        unsigned char *rb = malloc(R), *ro = malloc(R), *loc = malloc(R);
        for (size_t i = 0; i < R; i++) {
            rb[i] = (unsigned char)(pat(i) + rank);
            ro[i] = 0;
        }
        topocoll_cookie_t mine, rdonly, cks[64], rcks[64];
        struct iovec v2[2] = { { rb, R / 3 }, { rb + R / 3, R - R / 3 } }; /* vectorial */
        CHECK(topocoll_region_create(comm, v2, 2, TOPOCOLL_RIGHT_READ | TOPOCOLL_RIGHT_WRITE,
                                     &mine) == 0,
              "create rw");
        struct iovec vo = { ro, R };
        CHECK(topocoll_region_create(comm, &vo, 1, TOPOCOLL_RIGHT_READ, &rdonly) == 0, "create ro");
        PMPI_Allgather(&mine, 1, MPI_UINT64_T, cks, 1, MPI_UINT64_T, comm);
        PMPI_Allgather(&rdonly, 1, MPI_UINT64_T, rcks, 1, MPI_UINT64_T, comm);
        const size_t L = R - 1000;
        int mover = size - 1;
        if (rank == mover) {
            long long n = topocoll_region_copy(comm, cks[0], 10, cks[1], 20, L);
            if (none)
                CHECK(n == TOPOCOLL_ERR_NOSUPPORT, "region copy without single copy gave %lld", n);
            else
                CHECK(n == (long long)L, "region copy returned %lld", n);
            CHECK(topocoll_region_copy(comm, cks[0], 0, rcks[1], 0, 10) == TOPOCOLL_ERR_RIGHTS,
                  "read-only destination");
            CHECK(topocoll_region_copy(comm, cks[0], 10, cks[1], R - 5, 10) == TOPOCOLL_ERR_BOUNDS,
                  "destination bounds");
            CHECK(topocoll_region_copy(comm, cks[0], R - 5, cks[1], 0, 10) == TOPOCOLL_ERR_BOUNDS,
                  "source bounds");
        }
        PMPI_Barrier(comm);
        if (rank == 1 && !none) {
            int ok = 1;
            for (size_t i = 0; i < R; i++) {
                unsigned char want = i >= 20 && i < 20 + L ? (unsigned char)(pat(i - 10))
                                                           : (unsigned char)(pat(i) + 1);
                if (rb[i] != want) {
                    ok = 0;
                    break;
                }
            }
            CHECK(ok, "region copy: rank 1's buffer wrong");
        }
        PMPI_Barrier(comm);
        /* asynchronous: rank size-1 copies all of rank 0's region over rank
         * 1's (region copy) and reads rank 0's region into a local buffer
         * (inline copy) */
        const char *ccs = getenv("TOPOCOLL_COMM_CORES");
        int thread = ccs && atoi(ccs) > 0;
        if (rank == mover && !none) {
            long long st1 = 12345, st2 = 12345;
            struct iovec lv = { loc, R };
            CHECK(topocoll_region_copy_async(comm, cks[0], 0, cks[1], 0, R, &st1) == 0,
                  "submit region copy");
            CHECK(topocoll_copy_async(comm, cks[0], 0, &lv, 1, TOPOCOLL_COPY_FROM_REGION, &st2) ==
                      0,
                  "submit inline");
            CHECK(thread || st1 == TOPOCOLL_COPY_PENDING, "status %lld right after submit",
                  thread ? 0LL : st1);
            double t0 = MPI_Wtime();
            if (thread) { /* no poll: the progress thread runs them */
                while ((__atomic_load_n(&st1, __ATOMIC_ACQUIRE) == TOPOCOLL_COPY_PENDING ||
                        __atomic_load_n(&st2, __ATOMIC_ACQUIRE) == TOPOCOLL_COPY_PENDING) &&
                       MPI_Wtime() - t0 < 10)
                    ;
            } else {
                while ((topocoll_copy_poll(&st1) == TOPOCOLL_COPY_PENDING ||
                        topocoll_copy_poll(&st2) == TOPOCOLL_COPY_PENDING) &&
                       MPI_Wtime() - t0 < 10)
                    ;
            }
            CHECK(st1 == R && st2 == R, "async statuses %lld %lld (want %d)", st1, st2, R);
            int ok = 1;
            for (size_t i = 0; i < R; i++)
                if (loc[i] != pat(i)) {
                    ok = 0;
                    break;
                }
            CHECK(ok, "async inline read wrong");
            long long st3 = 0;
            CHECK(topocoll_region_copy_async(comm, cks[0], 0, rcks[1], 0, 10, &st3) == 0,
                  "submit bad");
            while (topocoll_copy_poll(&st3) == TOPOCOLL_COPY_PENDING)
                ;
            CHECK(st3 == TOPOCOLL_ERR_RIGHTS, "async copy into a read-only region: %lld", st3);
            /* A sweep publishes a copy's status, then retires its count:
             * with a progress thread the count may lag the status a moment */
            int left;
            double t1 = MPI_Wtime();
            while ((left = topocoll_progress()) != 0 && MPI_Wtime() - t1 < 10)
                ;
            CHECK(left == 0, "copies left pending: %d", left);
        }
        PMPI_Barrier(comm);
        if (rank == 1 && !none) {
            int ok = 1;
            for (size_t i = 0; i < R; i++)
                if (rb[i] != pat(i)) {
                    ok = 0;
                    break;
                }
            CHECK(ok, "async region copy: rank 1's buffer wrong");
        }
        PMPI_Barrier(comm);
        topocoll_region_destroy(comm, mine);
        topocoll_region_destroy(comm, rdonly);
        free(rb);
        free(ro);
        free(loc);
    }

    free(big);
    free(a);
    free(s0);
    free(s2);
    int tot[2] = { tc_failures, tc_checks }, sum[2];
    PMPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, comm);
    if (rank == 0)
        printf("test_region np=%d single_copy=%s: %d checks, %d failed\n", size,
               none ? "none" : "cma", sum[1], sum[0]);
    topocoll_progress_fini();
    MPI_Finalize();
    return tc_failures ? 1 : 0;
}
