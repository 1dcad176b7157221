/*
 * test_barrier -- topocoll_barrier's guarantee, checked with the host-wide
 * monotonic clock: in every round, no rank leaves before the last rank
 * entered.  Ranks enter at random times (some sleep up to 300 us), and
 * barriers are interleaved with topocoll_bcast calls of every path (CICO,
 * single copy, root share) so the collectives' shared sequence protocol is
 * exercised; the broadcasts are checked too.  World, a reversed split and
 * halves.  Exit status 0 only if every round and every check held.
 */
#define _GNU_SOURCE
#include "topocoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int wrank;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void rounds(MPI_Comm comm, const char *name, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *t = malloc(2 * sizeof(double) * (size_t)n),
           *all = malloc(2 * sizeof(double) * (size_t)n * (size_t)size);
    static const int sizes[] = { 5, 4000, 70000, 300000 };
    char *buf = malloc(300000);
    unsigned seed = 12345u + (unsigned)rank * 7919u;
    topocoll_comm_info_t before = TOPOCOLL_COMM_INFO_INIT, after = TOPOCOLL_COMM_INFO_INIT;
    topocoll_barrier(comm);
    int attached = topocoll_comm_query(comm, &before) == MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 3 == 0) usleep((seed >> 8) % 300);
        t[2 * i] = now();
        CHECK(topocoll_barrier(comm) == MPI_SUCCESS, "%s round %d rc", name, i);
        t[2 * i + 1] = now();
        if (i % 3 == 1) {
            int bytes = sizes[(i / 3) % 4], root = i % size;
            memset(buf, rank == root ? (char)(i + 1) : 0, (size_t)bytes);
            topocoll_bcast(buf, bytes, MPI_BYTE, root, comm);
            int ok = 1;
            for (int k = 0; k < bytes; k++)
                if (buf[k] != (char)(i + 1)) {
                    ok = 0;
                    break;
                }
            CHECK(ok, "%s round %d: bcast of %d bytes from %d wrong", name, i, bytes, root);
        }
    }
    PMPI_Allgather(t, 2 * n, MPI_DOUBLE, all, 2 * n, MPI_DOUBLE, comm);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double last_in = 0, first_out = 1e300;
        for (int r = 0; r < size; r++) {
            double in = all[(size_t)r * 2 * n + 2 * i], out = all[(size_t)r * 2 * n + 2 * i + 1];
            if (in > last_in) last_in = in;
            if (out < first_out) first_out = out;
        }
        if (first_out < last_in) bad++;
    }
    CHECK(bad == 0, "%s: %d of %d rounds let a rank leave before the last one entered", name, bad,
          n);
    if (size > 1) {
        /* on several nodes the native barrier by default (TOPOCOLL_BARRIER_FLAT) */
        const char *fe = getenv("TOPOCOLL_BARRIER_FLAT");
        int ok = attached && topocoll_comm_query(comm, &after) == MPI_SUCCESS;
        int flat = (fe && *fe ? atoi(fe) : 1) && after.nnodes > 1;
        CHECK(ok && after.coll[TOPOCOLL_COLL_BARRIER].calls ==
                        before.coll[TOPOCOLL_COLL_BARRIER].calls + (flat ? 0 : (uint64_t)n),
              "%s: barriers %s topocoll", name,
              flat ? "handled by (TOPOCOLL_BARRIER_FLAT)" : "not handled by");
    }
    free(t);
    free(all);
    free(buf);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    tc_rank = wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm rev, half;
    rounds(MPI_COMM_WORLD, "world", 300);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev);
    rounds(rev, "reversed", 150);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, size - wrank, &half);
    rounds(half, "half", 150);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    int tot[2] = { tc_failures, tc_checks }, sum[2];
    PMPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) printf("test_barrier np=%d: %d checks, %d failed\n", size, sum[1], sum[0]);
    MPI_Finalize();
    return tc_failures ? 1 : 0;
}
