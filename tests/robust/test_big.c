/*
 * test_big COLL -- one collective above 2 GiB through the interposed MPI_*
 * call (linked with libtopocoll_pmpi), checked element by element against
 * its closed form: bcast, reduce, allreduce: a vector of 2 GiB + 128 B
 * (268,435,472 doubles); allgather: blocks of 1 GiB + 64 B, so every rank
 * receives 2 GiB + 128 B at np=2.  One collective per run (memory: up to 4
 * GiB per process).  Prints "test_big COLL np=N: ... 0 failed"; exit status
 * 0 only if every element is right.
 */
#include "../check.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int size, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    const char *coll = argc > 1 ? argv[1] : "bcast";
    const size_t n = ((size_t)2 << 30) / sizeof(double) + 128 / sizeof(double); /* 2 GiB + 128 B */
    size_t bad = 0;
    double *a = NULL, *b = NULL;
    if (strcmp(coll, "allgather") == 0) {
        size_t k = n / 2; /* doubles per block: 1 GiB + 64 B */
        a = malloc(k * sizeof(double));
        b = malloc(k * (size_t)size * sizeof(double));
        CHECK(a && b, "no memory for %zu bytes", k * (size_t)(size + 1) * sizeof(double));
        if (a && b) {
            for (size_t i = 0; i < k; i++) a[i] = (double)(rank * 1000 + (int)(i % 1000));
            MPI_Allgather(a, (int)k, MPI_DOUBLE, b, (int)k, MPI_DOUBLE, MPI_COMM_WORLD);
            for (int p = 0; p < size; p++)
                for (size_t i = 0; i < k; i++)
                    bad += b[(size_t)p * k + i] != (double)(p * 1000 + (int)(i % 1000));
        }
    } else {
        int red = strcmp(coll, "bcast") != 0, all = strcmp(coll, "allreduce") == 0;
        a = malloc(n * sizeof(double));
        b = red ? malloc(n * sizeof(double)) : NULL;
        CHECK(a && (b || !red), "no memory for %zu bytes", (red ? 2 : 1) * n * sizeof(double));
        if (a && (b || !red)) {
            for (size_t i = 0; i < n; i++)
                a[i] = red || rank == 0 ? (double)(rank + (int)(i % 1000)) : -1.0;
            if (!red)
                MPI_Bcast(a, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            else if (all)
                MPI_Allreduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            else
                MPI_Reduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD);
            double base = (double)size * (size - 1) / 2;
            for (size_t i = 0; !red && i < n; i++) bad += a[i] != (double)(int)(i % 1000);
            for (size_t i = 0; red && (all || rank == size - 1) && i < n; i++)
                bad += b[i] != base + (double)size * (double)(int)(i % 1000);
        }
    }
    CHECK(bad == 0, "%s above 2 GiB: %zu elements wrong", coll, bad);
    free(a);
    free(b);
    int nf = 0;
    MPI_Allreduce(&tc_failures, &nf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_big %s np=%d: %d checks, %d failed\n", coll, size, tc_checks, nf);
    MPI_Finalize();
    return nf ? 1 : 0;
}
