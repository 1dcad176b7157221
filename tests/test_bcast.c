/*
 * test_bcast -- topocoll_bcast against the native MPI_Bcast (PMPI_Bcast):
 * every root, counts 0, 1, odd, around the CICO switch-over and 1 MiB+3,
 * several datatypes (contiguous, derived contiguous, non-contiguous vector,
 * and mixed types of one signature across ranks), on the world
 * communicator, a dup, a split with reversed key order and a split into
 * halves; runs of small broadcasts with nothing between them to
 * synchronise (the eager root runs ahead).  Also checks the copy accounting (a non-producer copies
 * each byte exactly once) and that erroneous arguments give the native error class. Run under any
 * np, with any TOPOCOLL_* emulation.
 */
#include "topocoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int wrank;

/* One broadcast, checked against PMPI_Bcast of the same arguments. */
static void one(MPI_Comm comm, const char *cname, int count, MPI_Datatype dt, const char *tname,
                int root, size_t span, unsigned seed)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    unsigned char *a = malloc(span + 1), *b = malloc(span + 1);
    if (rank == root) {
        tc_fill(a, span, seed);
        memcpy(b, a, span);
    } else {
        tc_fill(a, span, seed + 7777);
        memcpy(b, a, span);
    } /* same garbage on both */
    int rc = topocoll_bcast(a, count, dt, root, comm);
    PMPI_Bcast(b, count, dt, root, comm);
    CHECK(rc == MPI_SUCCESS, "%s %s count %d root %d: rc %d", cname, tname, count, root, rc);
    CHECK(memcmp(a, b, span) == 0, "%s %s count %d root %d: differs from native", cname, tname,
          count, root);
    free(a);
    free(b);
}

static void suite(MPI_Comm comm, const char *cname, int big)
{
    int size;
    MPI_Comm_size(comm, &size);
    static const int counts[] = { 0, 1, 7, 1023, 8192, 8193, 32768, 32769, 65535, 65537, 262147 };
    MPI_Datatype vec, pair;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec); /* non-contiguous: gaps */
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(3, MPI_DOUBLE, &pair); /* derived but contiguous */
    MPI_Type_commit(&pair);
    unsigned seed = 1;
    for (int root = 0; root < size; root++) {
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            int c = counts[i];
            one(comm, cname, c, MPI_BYTE, "byte", root, (size_t)c, seed++);
            if (c < 70000) one(comm, cname, c, MPI_INT, "int", root, (size_t)c * 4, seed++);
            if (c < 10000) one(comm, cname, c, pair, "3double", root, (size_t)c * 24, seed++);
            if (c < 10000)
                one(comm, cname, c, vec, "vector", root,
                    (size_t)(c ? (c - 1) * 13 * 4 + 12 * 4 + 8 : 0), seed++);
        }
        if (big || root == size - 1)
            one(comm, cname, (1 << 20) + 3, MPI_BYTE, "byte", root, (1u << 20) + 3, seed++);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&pair);
}

/* Mixed datatypes of one signature: the root sends 2n contiguous ints, the
 * others receive them into one vector of n blocks of 2 with stride 4. */
static void mixed(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vec;
    const int n = 900;
    MPI_Type_vector(n, 2, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int root = 0; root < size; root++) {
        int buf[4000];
        for (int i = 0; i < 4000; i++) buf[i] = rank == root ? i : -1;
        int rc = rank == root ? topocoll_bcast(buf, 2 * n, MPI_INT, root, comm)
                              : topocoll_bcast(buf, 1, vec, root, comm);
        CHECK(rc == MPI_SUCCESS, "mixed root %d rc %d", root, rc);
        if (rank != root) {
            int ok = 1, k = 0;
            for (int i = 0; i < 4000; i++) {
                int want = (i / 4 < n && i % 4 < 2) ? k++ : -1;
                if (buf[i] != want) ok = 0;
            }
            CHECK(ok, "mixed datatypes root %d: wrong data", root);
        }
    }
    MPI_Type_free(&vec);
}

/* Eager run-ahead: back-to-back small broadcasts (the root changes every
 * 3 calls, sizes up to one 32 KiB slot) with no native call between them
 * to synchronise, 8 KiB Allreduces every few calls and a Barrier every 41 (they
 * use the slots and flags the eager root does not wait for); the root
 * scribbles over its buffer once the call returns, and every result is
 * checked after the run. */
static void run_ahead(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    enum { N = 400, MAXB = 32768 };
    static const int sz[] = { 1, 100, 4096, 8191, MAXB };
    unsigned char *bufs = malloc((size_t)N * MAXB), *want = malloc(MAXB);
    int bad = 0;
    for (int k = 0; k < N; k++) {
        int root = (k / 3) % size, n = sz[k % 5];
        unsigned char *b = bufs + (size_t)k * MAXB;
        if (rank == root)
            tc_fill(b, (size_t)n, 1000u + (unsigned)k);
        else
            memset(b, 0xEE, (size_t)n);
        CHECK(topocoll_bcast(b, n, MPI_BYTE, root, comm) == MPI_SUCCESS, "run-ahead call %d", k);
        if (rank == root) memset(b, 0x55, (size_t)n);
        if (k % 23 == 22 || k % 7 == 3) { /* 8 KiB: through the slots the eager root writes next */
            enum { NR = 1024 };
            double x[NR], y[NR];
            for (int i = 0; i < NR; i++) x[i] = rank + i + k;
            int ok = topocoll_allreduce(x, y, NR, MPI_DOUBLE, MPI_SUM, comm) == MPI_SUCCESS;
            for (int i = 0; i < NR && ok; i++)
                ok = y[i] == (double)size * (i + k) + (double)size * (size - 1) / 2;
            CHECK(ok, "run-ahead allreduce at %d", k);
        }
        if (k % 41 == 40)
            CHECK(topocoll_barrier(comm) == MPI_SUCCESS, "run-ahead barrier at %d", k);
    }
    for (int k = 0; k < N; k++) {
        int root = (k / 3) % size, n = sz[k % 5];
        if (rank == root) continue;
        tc_fill(want, (size_t)n, 1000u + (unsigned)k);
        if (memcmp(bufs + (size_t)k * MAXB, want, (size_t)n) != 0 && bad++ < 5)
            CHECK(0, "run-ahead call %d (%d bytes from %d): wrong data", k, n, root);
    }
    CHECK(bad == 0, "run-ahead: %d of %d broadcasts wrong", bad, N);
    free(bufs);
    free(want);
}

/* Copy accounting (HierKNEM: a leader only forwards; KNEM: every byte is
 * copied once).  On one node with single copy the root writes the tail
 * 1/n (page aligned) of each receiver's buffer and the receiver reads the
 * rest (root share, default from 32 KiB); otherwise every byte reaches a
 * process once, copied from a local process or received from the network
 * (a leader receives all of it, a rail leader its rail's part), and a
 * single-copy producer copies none. */
static void accounting(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    topocoll_comm_info_t before = TOPOCOLL_COMM_INFO_INIT, after = TOPOCOLL_COMM_INFO_INIT;
    const size_t n = 1 << 20;
    char *buf = malloc(n);
    memset(buf, rank == 0 ? 'x' : 0, n);
    topocoll_bcast(buf, 1, MPI_BYTE, 0, comm); /* attach (not on one process) */
    if (topocoll_comm_query(comm, &before) != MPI_SUCCESS) {
        CHECK(size == 1, "communicator of %d processes not attached", size);
        free(buf);
        return;
    }
    topocoll_bcast(buf, (int)n, MPI_BYTE, 0, comm);
    topocoll_comm_query(comm, &after);
    uint64_t moved = (after.bytes_single_copy - before.bytes_single_copy) +
                     (after.bytes_cico - before.bytes_cico);
    uint64_t net = after.bytes_bcast_net - before.bytes_bcast_net;
    /* the root; elected leaders (and rail leaders) take theirs from the network */
    int producer = rank == 0 || (net == n && before.node != 0);
    /* TOPOCOLL_TUNE=cico: one node goes through the slots (the producer
     * copies every byte in, each receiver every byte out) */
    const char *tune = getenv("TOPOCOLL_TUNE");
    int cico = tune && strcmp(tune, "cico") == 0 && after.single_copy && after.nnodes == 1;
    int shared =
        !cico && after.single_copy && after.nnodes == 1 && !getenv("TOPOCOLL_BCAST_ROOT_SHARE_MIN");
    size_t share = shared ? (n / (size_t)after.local_size) & ~(size_t)4095 : 0;
    if (before.enabled && before.local_size > 1) {
        if (!producer) /* every byte arrives once: from a local process or from the network */
            CHECK(moved + net == n - share,
                  "non-producer copied %llu bytes + %llu from the network, of %zu "
                  "(share %zu)",
                  (unsigned long long)moved, (unsigned long long)net, n, share);
        else if (cico)
            CHECK(moved == n, "CICO producer copied %llu bytes into the slots",
                  (unsigned long long)moved);
        else if (after.single_copy)
            CHECK(moved == share * (size_t)(after.local_size - 1),
                  "single-copy producer copied %llu bytes", (unsigned long long)moved);
    }
    CHECK(after.coll[TOPOCOLL_COLL_BCAST].calls == before.coll[TOPOCOLL_COLL_BCAST].calls + 1,
          "call not handled by topocoll");
    free(buf);
}

static void errors(MPI_Comm comm)
{
    int size, cls, buf[4] = { 0 };
    MPI_Comm_size(comm, &size);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rc = topocoll_bcast(buf, 4, MPI_INT, size, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "invalid root gave class %d", cls);
    rc = topocoll_bcast(buf, -1, MPI_INT, 0, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count gave class %d", cls);
    rc = topocoll_bcast(buf, 4, MPI_DATATYPE_NULL, 0, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "null datatype gave class %d", cls);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    tc_rank = wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int big = size <= 4;
    MPI_Comm dup, rev, half;
    suite(MPI_COMM_WORLD, "world", big);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    suite(dup, "dup", 0);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev);
    suite(rev, "reversed", 0);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, size - wrank, &half);
    suite(half, "half", 0);
    mixed(MPI_COMM_WORLD);
    mixed(rev);
    run_ahead(MPI_COMM_WORLD);
    run_ahead(half);
    accounting(MPI_COMM_WORLD);
    accounting(rev);
    errors(dup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);

    int tot[2] = { tc_failures, tc_checks }, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) printf("test_bcast np=%d: %d checks, %d failed\n", size, sum[1], sum[0]);
    MPI_Finalize();
    return tc_failures ? 1 : 0;
}
