/*
 * test_tune -- the online choice between copy-in/copy-out and single copy
 * (coll/tune) on one node: Reduce, Allreduce, Allgather and Iallreduce at
 * sizes of the tuned range (16-96 KiB), interleaved with Bcast and
 * Barrier (every collective advances the sequence the choice is tied
 * to), and Allreduce and Allgather at 1 MiB (their copy-in/copy-out is
 * pipelined), each
 * result checked against the native MPI.  Run with TOPOCOLL_TUNE_EXPLORE
 * small, the choice changes every few calls; every process must derive
 * the same method for every call (a mismatch hangs or corrupts the
 * results, which the checks catch).  Then the byte
 * counters must show that both methods ran (tuning on) or that only
 * single copy did (TOPOCOLL_TUNE=0, the static 8 KiB thresholds).
 */
#include "topocoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int wrank;

static void fill(double *d, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        d[i] = (double)(x % 1000) - 500.0;
    }
}

static void rounds(MPI_Comm comm, const char *cname, int calls)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* 16 KiB, 32 KiB + 24 B, 96 KiB of doubles (through the slots whole),
     * 1 MiB + 24 B (Allreduce: pipelined through the lanes; Allgather:
     * through the broadcast rings) */
    static const int counts[] = { 2048, 4099, 12000, 131075 };
    size_t maxn = 131075;
    double *in = malloc(maxn * sizeof(double)), *got = malloc(maxn * sizeof(double) * (size_t)size),
           *ref = malloc(maxn * sizeof(double) * (size_t)size);
    for (int k = 0; k < calls; k++) {
        int n = counts[k % 3], root = k % size;
        /* every other (I)allreduce and allgather: the large one */
        if ((k % 5 == 0 || k % 5 == 2 || k % 5 == 3) && k % 2) n = counts[3];
        size_t bytes = (size_t)n * sizeof(double);
        fill(in, (size_t)n, (unsigned)(k * 131 + rank));
        switch (k % 5) {
        case 0:
            PMPI_Allreduce(in, ref, n, MPI_DOUBLE, MPI_SUM, comm);
            CHECK(topocoll_allreduce(in, got, n, MPI_DOUBLE, MPI_SUM, comm) == MPI_SUCCESS &&
                      memcmp(got, ref, bytes) == 0,
                  "%s call %d: allreduce of %d doubles differs", cname, k, n);
            break;
        case 1:
            PMPI_Reduce(in, ref, n, MPI_DOUBLE, MPI_MAX, root, comm);
            CHECK(topocoll_reduce(in, got, n, MPI_DOUBLE, MPI_MAX, root, comm) == MPI_SUCCESS &&
                      (rank != root || memcmp(got, ref, bytes) == 0),
                  "%s call %d: reduce of %d doubles root %d differs", cname, k, n, root);
            break;
        case 2:
            PMPI_Allgather(in, n, MPI_DOUBLE, ref, n, MPI_DOUBLE, comm);
            CHECK(topocoll_allgather(in, n, MPI_DOUBLE, got, n, MPI_DOUBLE, comm) == MPI_SUCCESS &&
                      memcmp(got, ref, bytes * (size_t)size) == 0,
                  "%s call %d: allgather of %d doubles differs", cname, k, n);
            break;
        case 3: {
            MPI_Request rq;
            PMPI_Allreduce(in, ref, n, MPI_DOUBLE, MPI_SUM, comm);
            int rc = topocoll_iallreduce(in, got, n, MPI_DOUBLE, MPI_SUM, comm, &rq);
            if (rc == MPI_SUCCESS) rc = topocoll_wait(&rq, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && memcmp(got, ref, bytes) == 0,
                  "%s call %d: iallreduce of %d doubles differs", cname, k, n);
            break;
        }
        default: /* other collectives between: they advance the sequence too */
            if (k % 2) {
                if (rank == root) memcpy(got, in, bytes);
                CHECK(topocoll_bcast(got, n, MPI_DOUBLE, root, comm) == MPI_SUCCESS,
                      "%s call %d: bcast", cname, k);
            } else {
                CHECK(topocoll_barrier(comm) == MPI_SUCCESS, "%s call %d: barrier", cname, k);
            }
        }
    }
    free(in);
    free(got);
    free(ref);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    tc_rank = wrank;
    tc_print_max = 39;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *tune = getenv("TOPOCOLL_TUNE");
    int tuned = !(tune && strcmp(tune, "0") == 0);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    topocoll_comm_info_t a = TOPOCOLL_COMM_INFO_INIT, b = TOPOCOLL_COMM_INFO_INIT;
    int calls = 400;
    topocoll_barrier(dup); /* attach */
    int q = topocoll_comm_query(dup, &a);
    rounds(dup, "dup", calls);
    rounds(MPI_COMM_WORLD, "world", calls / 4);
    if (q == MPI_SUCCESS && topocoll_comm_query(dup, &b) == MPI_SUCCESS && a.enabled &&
        a.nnodes == 1 && a.size > 1 && a.single_copy) {
        uint64_t cico = b.bytes_cico - a.bytes_cico, sc = b.bytes_single_copy - a.bytes_single_copy;
        if (tuned) {
            CHECK(cico > 0 && sc > 0,
                  "tuning on: both methods should have run (CICO %llu B, single copy %llu B)",
                  (unsigned long long)cico, (unsigned long long)sc);
        } else {
            CHECK(cico == 0 && sc > 0,
                  "tuning off: single copy only above 8 KiB (CICO %llu B, single copy %llu B)",
                  (unsigned long long)cico, (unsigned long long)sc);
        }
    }
    MPI_Comm_free(&dup);
    int tot[2] = { tc_failures, tc_checks }, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_tune np=%d (tuning %s): %d checks, %d failures\n", size, tuned ? "on" : "off",
               sum[1], sum[0]);
    MPI_Finalize();
    return wrank == 0 && sum[0] ? 1 : (tc_failures ? 1 : 0);
}
