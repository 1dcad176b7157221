/*
 * pingpong -- the link calibration of scripts/cluster.sh (`calib`): plain
 * MPI (no topocoll) between ranks 0 and 1, which cluster.sh places on two
 * different emulated hosts.  Prints the one-way latency of an 8-byte
 * message (half the round trip, median of ITERS timed batches) and the
 * bandwidth of 4 MiB messages (bytes / half the round trip, best and
 * median of the reps).  Ranks other than 0 and 1 only take part in the
 * barriers.
 *
 *   pingpong [lat_iters [bw_reps]]      (defaults 1000 and 10)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Round trips of @n bytes, @reps of them timed one by one; returns the
 * sorted half round-trip times (seconds) in @t (rank 0 only). */
static void rounds(char *buf, int n, int reps, int warm, int rank, double *t)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + reps; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= warm) t[i - warm] = (MPI_Wtime() - t0) / 2;
        } else if (rank == 1) {
            MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) qsort(t, (size_t)reps, sizeof(double), cmp_double);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME], peer[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    if (size < 2) {
        fprintf(stderr, "pingpong: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = argc > 1 ? atoi(argv[1]) : 1000, reps = argc > 2 ? atoi(argv[2]) : 10;
    if (iters < 1) iters = 1;
    if (reps < 1) reps = 1;
    if (rank == 1) MPI_Send(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(peer, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    const int big = 4 << 20;
    char *buf = malloc((size_t)big);
    double *t = malloc(sizeof(double) * (size_t)(iters > reps ? iters : reps));
    if (!buf || !t) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(buf, 0x5a, (size_t)big);

    rounds(buf, 8, iters, 100, rank, t);
    double lat = rank == 0 ? t[iters / 2] : 0, latmin = rank == 0 ? t[0] : 0;
    rounds(buf, big, reps, 2, rank, t);
    if (rank == 0) {
        double best = t[0], med = t[reps / 2];
        printf("pingpong %s <-> %s: latency 8 B: %.1f us one-way (median of %d, min %.1f us); "
               "bandwidth 4 MiB: %.1f MB/s (%.3f Gbit/s; median of %d, best %.1f MB/s)\n",
               host, peer, lat * 1e6, iters, latmin * 1e6, big / med / 1e6, big * 8 / med / 1e9, reps,
               big / best / 1e6);
        if (strcmp(host, peer) == 0) printf("pingpong: WARNING: ranks 0 and 1 are on the same host\n");
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
