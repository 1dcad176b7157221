/*
 * test_xtune [BYTES...] -- coll/xtune, the online choice between the native
 * collective and topocoll's on several nodes (run it on virtual or real
 * nodes with TOPOCOLL_XTUNE=1).  For each size, calls of each of Bcast
 * (rotating roots), Reduce (rotating roots), Allreduce and Allgather
 * (blocks of that size), the measurement's calls and a few more, each
 * result checked against the native one;
 * then, per collective, this size's calls taken by topocoll and left to
 * the native MPI must add up, be the same on every rank (the ranks agreed
 * on every call's method without a message, and on the decision by one),
 * include the native calls of the measurement inside TOPOCOLL_XTUNE_MAX
 * (256 KiB), and be none above it.  On 4 nodes or more a Reduce below
 * TOPOCOLL_CHAIN_MIN (128 KiB) measures three methods (topocoll's two
 * leaders' algorithms and the native): 12 runs, 4 of each; so does a
 * Bcast from TOPOCOLL_BCAST_OWNERS_MIN (16 KiB) on 3 nodes or more.
 */
#include "check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <topocoll.h>

/* coll/xtune's runs: about 1 MiB of the size class's least message, 4 to
 * 64 calls; a class's measurement is 8 runs, 4 of them native (12 with
 * topocoll's alternative algorithm). */
static int run_calls(size_t bytes)
{
    size_t cls = 1;
    while (cls * 2 <= bytes) cls *= 2;
    size_t n = (1u << 20) / cls;
    return n < 4 ? 4 : n > 64 ? 64 : (int)n;
}

static void counters(MPI_Comm comm, uint64_t v[8])
{
    topocoll_comm_info_t in = TOPOCOLL_COMM_INFO_INIT;
    memset(v, 0, 8 * sizeof(uint64_t));
    if (topocoll_comm_query(comm, &in) != 0) return;
    uint64_t w[8] = {
        in.coll[TOPOCOLL_COLL_BCAST].calls,     in.coll[TOPOCOLL_COLL_BCAST].native,
        in.coll[TOPOCOLL_COLL_REDUCE].calls,    in.coll[TOPOCOLL_COLL_REDUCE].native,
        in.coll[TOPOCOLL_COLL_ALLREDUCE].calls, in.coll[TOPOCOLL_COLL_ALLREDUCE].native,
        in.coll[TOPOCOLL_COLL_ALLGATHER].calls, in.coll[TOPOCOLL_COLL_ALLGATHER].native
    };
    memcpy(v, w, sizeof(w));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    topocoll_comm_attach(comm);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &info);
    if (rank == 0) printf("test_xtune: np=%d, %d nodes\n", size, info.nnodes);
    size_t sizes[16] = { 8, 1000, 16384, 200000, 1 << 20 }, nsizes = 5;
    if (argc > 1) { /* the sizes to test (bytes), instead */
        nsizes = 0;
        for (int i = 1; i < argc && nsizes < 16; i++)
            sizes[nsizes++] = (size_t)strtoull(argv[i], NULL, 10);
    }
    const char *names[] = { "Bcast", "Reduce", "Allreduce", "Allgather" };
    for (size_t si = 0; si < nsizes; si++) {
        size_t bytes = sizes[si], n = bytes / sizeof(int);
        int *a = malloc(bytes), *b = malloc(bytes), *ref = malloc(bytes);
        int *ga = malloc(bytes * (size_t)size), *gref = malloc(bytes * (size_t)size);
        uint64_t before[8], after[8], lo[8], hi[8];
        const int run = run_calls(bytes), calls = (info.nnodes >= 3 ? 12 : 8) * run + 8;
        counters(comm, before);
        for (int k = 0; k < calls; k++) {
            int root = k % size;
            for (size_t i = 0; i < n; i++) a[i] = (int)(i * 7 + (size_t)k * 13 + (size_t)rank);
            memcpy(b, a, bytes);
            memcpy(ref, a, bytes);
            topocoll_bcast(b, (int)n, MPI_INT, root, comm);
            MPI_Bcast(ref, (int)n, MPI_INT, root, MPI_COMM_WORLD);
            CHECK(memcmp(b, ref, bytes) == 0, "%zu B Bcast root %d call %d", bytes, root, k);
            memset(b, 0, bytes);
            memset(ref, 0, bytes);
            topocoll_reduce(a, b, (int)n, MPI_INT, MPI_SUM, root, comm);
            MPI_Reduce(a, ref, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
            CHECK(rank != root || memcmp(b, ref, bytes) == 0, "%zu B Reduce root %d call %d", bytes,
                  root, k);
            topocoll_allreduce(a, b, (int)n, MPI_INT, MPI_MAX, comm);
            MPI_Allreduce(a, ref, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            CHECK(memcmp(b, ref, bytes) == 0, "%zu B Allreduce call %d", bytes, k);
            topocoll_allgather(a, (int)n, MPI_INT, ga, (int)n, MPI_INT, comm);
            MPI_Allgather(a, (int)n, MPI_INT, gref, (int)n, MPI_INT, MPI_COMM_WORLD);
            CHECK(memcmp(ga, gref, bytes * (size_t)size) == 0, "%zu B Allgather call %d", bytes, k);
        }
        counters(comm, after);
        for (int i = 0; i < 8; i++) after[i] -= before[i];
        MPI_Allreduce(after, lo, 8, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(after, hi, 8, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        for (int c = 0; c < 4; c++) {
            uint64_t ran = after[2 * c], native = after[2 * c + 1];
            CHECK(lo[2 * c] == hi[2 * c] && lo[2 * c + 1] == hi[2 * c + 1],
                  "%zu B %s: ranks disagree (topocoll %llu-%llu, native %llu-%llu calls)", bytes,
                  names[c], (unsigned long long)lo[2 * c], (unsigned long long)hi[2 * c],
                  (unsigned long long)lo[2 * c + 1], (unsigned long long)hi[2 * c + 1]);
            CHECK(ran + native == (uint64_t)calls, "%zu B %s: %llu + %llu calls, not %d", bytes,
                  names[c], (unsigned long long)ran, (unsigned long long)native, calls);
            if (info.nnodes > 1 && bytes <= (256u << 10))
                CHECK(native >= (uint64_t)(4 * run) && ran >= (uint64_t)(4 * run),
                      "%zu B %s: %llu native and %llu topocoll calls, the measurement makes %d of "
                      "each",
                      bytes, names[c], (unsigned long long)native, (unsigned long long)ran,
                      4 * run);
            if (c == 0 && info.nnodes >= 3 && bytes >= (16u << 10) && bytes < (128u << 10))
                CHECK(ran >= (uint64_t)(8 * run),
                      "%zu B Bcast: %llu topocoll calls, the measurement of its two algorithms "
                      "makes %d",
                      bytes, (unsigned long long)ran, 8 * run);
            if (c == 1 && info.nnodes >= 4 && bytes < (128u << 10))
                CHECK(ran >= (uint64_t)(8 * run),
                      "%zu B Reduce: %llu topocoll calls, the "
                      "measurement of its two algorithms makes %d",
                      bytes, (unsigned long long)ran, 8 * run);
            if (bytes > (256u << 10))
                CHECK(native == 0, "%zu B %s: %llu native calls above TOPOCOLL_XTUNE_MAX", bytes,
                      names[c], (unsigned long long)native);
            if (rank == 0)
                printf("test_xtune: %7zu B %-9s topocoll %2llu native %2llu\n", bytes, names[c],
                       (unsigned long long)ran, (unsigned long long)native);
        }
        free(a);
        free(b);
        free(ref);
        free(ga);
        free(gref);
    }
    MPI_Comm_free(&comm);
    int nf = 0;
    MPI_Allreduce(&tc_failures, &nf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_xtune np=%d: %d checks, %d failed\n", size, tc_checks, nf);
    MPI_Finalize();
    return nf ? 1 : 0;
}
