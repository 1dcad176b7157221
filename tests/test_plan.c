/*
 * tests/test_plan -- the blocking and the nonblocking form of a collective
 * take the same plan: on several nodes both leave a small message to the
 * native MPI (TOPOCOLL_*_FLAT_MAX, coll/xtune's measured choice) and both
 * run topocoll's hierarchy above it.  Each call's plan is read from the
 * communicator's counters (topocoll_comm_query: calls topocoll ran, calls
 * left native by choice); the results are checked too.
 *
 * Usage: test_plan [expect|native|forced]  where expect, on several nodes
 * with the default TOPOCOLL_*_FLAT_MAX, checks the defaults' plans: 1 KiB
 * Allreduce native, 1 MiB topocoll; native (every TOPOCOLL_<COLL>_ALG=native)
 * checks every call of every size went native; forced (Bcast, Reduce and
 * Allgather forced to one of topocoll's algorithms, on several nodes, with
 * the default FLAT_MAX) checks those ran topocoll at every size, 8 B too.
 */
#include <mpi.h>

#include "check.h"
#include "topocoll.h"

#include <stdlib.h>
#include <string.h>

enum { BCAST, REDUCE, ALLREDUCE, ALLGATHER, NCOLL };
static const char *name[NCOLL] = { "Bcast", "Reduce", "Allreduce", "Allgather" };
static int rank, size;

/* The counters of collective @k: calls topocoll ran, calls left native. */
static void counters(MPI_Comm comm, int k, uint64_t *ran, uint64_t *native)
{
    topocoll_comm_info_t in = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &in);
    const uint64_t r[NCOLL] = { in.coll[TOPOCOLL_COLL_BCAST].calls,
                                in.coll[TOPOCOLL_COLL_REDUCE].calls,
                                in.coll[TOPOCOLL_COLL_ALLREDUCE].calls,
                                in.coll[TOPOCOLL_COLL_ALLGATHER].calls };
    const uint64_t n[NCOLL] = { in.coll[TOPOCOLL_COLL_BCAST].native,
                                in.coll[TOPOCOLL_COLL_REDUCE].native,
                                in.coll[TOPOCOLL_COLL_ALLREDUCE].native,
                                in.coll[TOPOCOLL_COLL_ALLGATHER].native };
    *ran = r[k];
    *native = n[k];
}

/* Collective @k of @n doubles (Allgather: a block of @n), blocking or not;
 * the result checked. */
static void run(MPI_Comm comm, int k, int n, int nonblocking)
{
    double *in = malloc(sizeof(double) * (size_t)n * (size_t)size);
    double *out = malloc(sizeof(double) * (size_t)n * (size_t)size);
    MPI_Request r = MPI_REQUEST_NULL;
    for (int i = 0; i < n * size; i++) in[i] = rank + i;
    memset(out, 0, sizeof(double) * (size_t)n * (size_t)size);
    int bad = 0;
    if (k == BCAST) {
        double *b = rank == 0 ? in : out;
        if (nonblocking)
            MPI_Ibcast(b, n, MPI_DOUBLE, 0, comm, &r);
        else
            MPI_Bcast(b, n, MPI_DOUBLE, 0, comm);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < n && !bad; i++) bad = b[i] != i;
    } else if (k == REDUCE || k == ALLREDUCE) {
        if (k == REDUCE && nonblocking)
            MPI_Ireduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, comm, &r);
        else if (k == REDUCE)
            MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, comm);
        else if (nonblocking)
            MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm, &r);
        else
            MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < n && !bad && (k == ALLREDUCE || rank == 0); i++)
            bad = out[i] != (double)size * (size - 1) / 2 + (double)size * i;
    } else {
        if (nonblocking)
            MPI_Iallgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm, &r);
        else
            MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int p = 0; p < size && !bad; p++)
            for (int i = 0; i < n && !bad; i++) bad = out[p * n + i] != p + i;
    }
    CHECK(!bad, "%s%s of %d doubles: wrong result", nonblocking ? "I" : "", name[k], n);
    free(in);
    free(out);
}

/* The plan a call took: 1 topocoll ran it, 0 native by choice, -1 other
 * (a fallback, or a cold context). */
static int plan_of(MPI_Comm comm, int k, int n, int nonblocking)
{
    uint64_t r0, n0, r1, n1;
    counters(comm, k, &r0, &n0);
    run(comm, k, n, nonblocking);
    counters(comm, k, &r1, &n1);
    return r1 == r0 + 1 && n1 == n0 ? 1 : r1 == r0 && n1 == n0 + 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    const char *mode = argc > 1 ? argv[1] : "";
    int expect = strcmp(mode, "expect") == 0, native = strcmp(mode, "native") == 0,
        forced = strcmp(mode, "forced") == 0;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    topocoll_comm_attach(comm);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &info);
    const int counts[] = { 1, 128, 8192, 131072 }; /* 8 B, 1 KiB, 64 KiB, 1 MiB */
    for (int k = 0; k < NCOLL; k++)
        for (int c = 0; c < 4; c++) {
            int n = counts[c], pb = plan_of(comm, k, n, 0), pn = plan_of(comm, k, n, 1);
            CHECK(pb == pn && pb >= 0, "%s of %d B: the blocking call %s, the nonblocking one %s",
                  name[k], n * 8,
                  pb == 1   ? "ran topocoll"
                  : pb == 0 ? "native"
                            : "other",
                  pn == 1   ? "ran topocoll"
                  : pn == 0 ? "native"
                            : "other");
            if (rank == 0)
                printf("plan %s %d B: %s\n", name[k], n * 8, pb == 1 ? "topocoll" : "native");
            if (expect && info.nnodes > 1 && k == ALLREDUCE && n == 128)
                CHECK(pb == 0, "a 1 KiB Allreduce across nodes runs native (FLAT_MAX 64K)");
            if (expect && k == ALLREDUCE && n == 131072)
                CHECK(pb == 1, "a 1 MiB Allreduce runs topocoll");
            if (native) CHECK(pb == 0, "%s of %d B runs native (forced)", name[k], n * 8);
            if (forced && k != ALLREDUCE)
                CHECK(pb == 1, "%s of %d B runs topocoll (its algorithm forced)", name[k], n * 8);
        }
    MPI_Comm_free(&comm);
    int f = tc_report("test_plan");
    MPI_Finalize();
    return f != 0;
}
