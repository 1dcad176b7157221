/*
 * test_threads -- MPI_THREAD_MULTIPLE: T threads per rank (default 3), each
 * driving its own communicator (a dup of MPI_COMM_WORLD) through the
 * interposed MPI_* calls (linked with libtopocoll_pmpi): Bcast, Reduce,
 * Allreduce, Allgather, Barrier and their nonblocking forms, 8 B to
 * 512 KiB (so contexts are built lazily and at once, per thread), and every
 * 40 rounds a dup of its communicator replacing it (contexts freed and
 * kept while the other threads run collectives).  Every result is checked
 * against its closed form.  Run under ThreadSanitizer in CI.
 * Prints "test_threads np=N: K checks, F failed"; exit status 0 only if
 * every check held and the library gave MPI_THREAD_MULTIPLE.
 */
#include "../check.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 240 };

static int g_size, g_rank;
static atomic_int g_fail, g_checks;

#define TCHECK(cond, ...)                                                          \
    do {                                                                           \
        atomic_fetch_add(&g_checks, 1);                                            \
        if (!(cond)) {                                                             \
            atomic_fetch_add(&g_fail, 1);                                          \
            fprintf(stderr, "[rank %d] FAIL %s:%d: ", g_rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
        }                                                                          \
    } while (0)

typedef struct {
    int id;
    MPI_Comm comm;
} job_t;

static void *worker(void *arg)
{
    job_t *j = arg;
    static const int counts[] = { 2, 17, 256, 4096, 20000, 131072 }; /* ints: 8 B .. 512 KiB */
    int *a = malloc(sizeof(int) * 131072 * (size_t)g_size),
        *b = malloc(sizeof(int) * 131072 * (size_t)g_size);
    for (int r = 0; r < ROUNDS; r++) {
        int n = counts[(r / 5 + j->id) % 6], kind = r % 5, root = (r + j->id) % g_size, bad = 0;
        MPI_Request q;
        int nb = r % 2;
        for (int i = 0; i < n; i++) a[i] = g_rank * 7 + i + r + j->id;
        switch (kind) {
        case 0: /* Bcast */
            if (g_rank != root) memset(a, 0, sizeof(int) * (size_t)n);
            if (nb) {
                MPI_Ibcast(a, n, MPI_INT, root, j->comm, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else
                MPI_Bcast(a, n, MPI_INT, root, j->comm);
            for (int i = 0; i < n; i++) bad += a[i] != root * 7 + i + r + j->id;
            break;
        case 1: /* Reduce */
            if (nb) {
                MPI_Ireduce(a, b, n, MPI_INT, MPI_SUM, root, j->comm, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else
                MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, j->comm);
            for (int i = 0; g_rank == root && i < n; i++)
                bad += b[i] != 7 * g_size * (g_size - 1) / 2 + g_size * (i + r + j->id);
            break;
        case 2: /* Allreduce */
            if (nb) {
                MPI_Iallreduce(a, b, n, MPI_INT, MPI_MAX, j->comm, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else
                MPI_Allreduce(a, b, n, MPI_INT, MPI_MAX, j->comm);
            for (int i = 0; i < n; i++) bad += b[i] != (g_size - 1) * 7 + i + r + j->id;
            break;
        case 3: { /* Allgather of n / size ints each */
            int k = n / g_size > 0 ? n / g_size : 1;
            if (nb) {
                MPI_Iallgather(a, k, MPI_INT, b, k, MPI_INT, j->comm, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else
                MPI_Allgather(a, k, MPI_INT, b, k, MPI_INT, j->comm);
            for (int p = 0; p < g_size; p++)
                for (int i = 0; i < k; i++) bad += b[p * k + i] != p * 7 + i + r + j->id;
            break;
        }
        default:
            if (nb) {
                MPI_Ibarrier(j->comm, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else
                MPI_Barrier(j->comm);
            break;
        }
        TCHECK(bad == 0, "thread %d round %d: collective %d%s of %d ints: %d wrong", j->id, r, kind,
               nb ? " (I)" : "", n, bad);
        if (r % 40 == 39) { /* a new communicator for this thread */
            MPI_Comm d;
            MPI_Comm_dup(j->comm, &d);
            MPI_Comm_free(&j->comm);
            j->comm = d;
        }
    }
    free(a);
    free(b);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE, nt = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    tc_rank = g_rank;
    CHECK(provided == MPI_THREAD_MULTIPLE,
          "the library gave thread level %d, not MPI_THREAD_MULTIPLE", provided);
    if (nt < 1 || nt > 16) nt = 3;
    job_t jobs[16];
    pthread_t th[16];
    for (int t = 0; t < nt && provided == MPI_THREAD_MULTIPLE; t++) {
        jobs[t].id = t;
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    for (int t = 0; t < nt && provided == MPI_THREAD_MULTIPLE; t++)
        pthread_create(&th[t], NULL, worker, &jobs[t]);
    for (int t = 0; t < nt && provided == MPI_THREAD_MULTIPLE; t++) {
        pthread_join(th[t], NULL);
        MPI_Comm_free(&jobs[t].comm);
    }
    tc_checks += atomic_load(&g_checks);
    tc_failures += atomic_load(&g_fail);
    int all = 0;
    MPI_Allreduce(&tc_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_threads np=%d, %d threads: %d checks, %d failed\n", g_size, nt, tc_checks,
               all);
    MPI_Finalize();
    return all ? 1 : 0;
}
