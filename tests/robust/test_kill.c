/*
 * test_kill [--no-kill] -- SIGKILL inside a collective: every rank loops
 * 16 MiB Allreduces and Bcasts through the interposed calls (linked with
 * libtopocoll_pmpi); on the last rank a thread kills the process 300 ms in,
 * while the others wait for it inside a collective.  The launcher must end
 * the job; tests/robust/check_kill.sh then checks that no process and
 * nothing in /dev/shm is left, and that the next job (--no-kill: 5 rounds,
 * checked) runs.
 */
#include "../check.h"

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *killer(void *arg)
{
    (void)arg;
    usleep(300000);
    kill(getpid(), SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    int size, rank, nokill = argc > 1 && strcmp(argv[1], "--no-kill") == 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    const int n = (16 << 20) / (int)sizeof(double);
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) a[i] = rank + 1;
    pthread_t t;
    if (!nokill && rank == size - 1) {
        printf("test_kill: rank %d kills itself in 300 ms\n", rank);
        fflush(stdout);
        pthread_create(&t, NULL, killer, NULL);
    }
    for (int r = 0; nokill ? r < 5 : 1; r++) {
        MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CHECK(b[0] == (double)size * (size + 1) / 2 && b[n - 1] == b[0], "round %d: Allreduce %g",
              r, b[0]);
        MPI_Bcast(b, n, MPI_DOUBLE, r % size, MPI_COMM_WORLD);
    }
    free(a);
    free(b);
    int nf = 0;
    MPI_Allreduce(&tc_failures, &nf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_kill np=%d: %d checks, %d failed\n", size, tc_checks, nf);
    MPI_Finalize();
    return nf ? 1 : 0;
}
