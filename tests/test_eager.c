/*
 * test_eager -- the eager small collectives of one node (Bcast, Reduce,
 * Allreduce, Allgather through tagged items, coll/ctx tc_ctx_eager), where writers
 * run ahead of their readers by up to the eager slots: thousands of
 * back-to-back calls, a reader (rank 0, or the root) slowed now and then
 * so the others fill the window, roots rotating, MPI_IN_PLACE, items in
 * the tag's line (8-48 bytes), in the slots and in pieces of them (up to
 * 32 KiB), several
 * datatypes, and runs of eager calls broken by collectives that use the
 * slots otherwise (a 64 KiB Allreduce, a 4 KiB-block Allgather) or none
 * (Barrier).
 * Every result is checked against its exact value (small integers), and
 * topocoll's counters say topocoll ran the calls, not the native MPI.
 */
#include "topocoll.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 4000
#define MAXN   4096 /* doubles: 32 KiB, the eager Reduce's limit (Allreduce, Allgather: 2 KiB) */

/* Rank @r's element @k of round @i (small: sums stay exact). */
static double val(int r, int i, int k) { return (double)((r * 7 + i * 3 + k) % 17); }

static int count_of(int i)
{
    /* in the tag's line (up to 48 bytes), in a slot, in several pieces
     * of a slot (8 KiB), and past the eager limits */
    static const int n[] = { 1, 3, 6, 2, 40, 255, 7, 128, 5, 256, 1500, 4096, 1025, 3 };
    return n[i % 14];
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    double *in = malloc(MAXN * sizeof(double)), *out = malloc(MAXN * sizeof(double));
    long long *li = malloc(MAXN * sizeof(long long)), *lo = malloc(MAXN * sizeof(long long));
    const int big = 8192; /* doubles: a 64 KiB Allreduce, not eager */
    double *bin = malloc(big * sizeof(double)), *bout = malloc(big * sizeof(double));
    const int gb = 4096; /* an Allgather block that is not eager */
    char *gin = malloc(gb), *gout = malloc(gb * (size_t)size);
    int reduce_calls = 0, allreduce_calls = 0, bcast_calls = 0, allgather_calls = 0;
    for (int i = 0; i < ROUNDS; i++) {
        int n = count_of(i), root = (i / 3) % size;
        /* a slow reader now and then: the writers fill the eager window */
        if (i % 97 == 0 && tc_rank == root) usleep(200);
        switch (i % 5) {
        case 0: /* Reduce, double SUM, rotating root, MPI_IN_PLACE every other time */
        case 1: {
            for (int k = 0; k < n; k++) in[k] = val(tc_rank, i, k);
            int inplace = i % 2 && tc_rank == root;
            if (inplace) memcpy(out, in, (size_t)n * sizeof(double));
            topocoll_reduce(inplace ? MPI_IN_PLACE : in, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
            reduce_calls++;
            if (tc_rank != root) break;
            for (int k = 0; k < n; k++) {
                double want = 0;
                for (int r = 0; r < size; r++) want += val(r, i, k);
                CHECK(out[k] == want, "round %d Reduce[%d] = %g, want %g", i, k, out[k], want);
            }
            break;
        }
        case 2: { /* Allreduce, long long MAX, MPI_IN_PLACE every other time */
            for (int k = 0; k < n; k++) li[k] = (long long)val(tc_rank, i, k) - 8;
            int inplace = i % 2;
            if (inplace) memcpy(lo, li, (size_t)n * sizeof(long long));
            topocoll_allreduce(inplace ? MPI_IN_PLACE : li, lo, n, MPI_LONG_LONG, MPI_MAX, comm);
            allreduce_calls++;
            for (int k = 0; k < n; k++) {
                long long want = -100;
                for (int r = 0; r < size; r++)
                    if ((long long)val(r, i, k) - 8 > want) want = (long long)val(r, i, k) - 8;
                CHECK(lo[k] == want, "round %d Allreduce[%d] = %lld, want %lld", i, k, lo[k], want);
            }
            break;
        }
        case 3: { /* Bcast of n bytes (eager: in the line, or in a slot), or Allgather of n-byte
                     blocks */
            char *b = (char *)out;
            if (i % 2) {
                char *blk = (char *)li, *all = (char *)lo; /* n * size <= 2 KiB */
                for (int k = 0; k < n; k++) blk[k] = (char)(tc_rank * 31 + i + k);
                topocoll_allgather(blk, n, MPI_BYTE, all, n, MPI_BYTE, comm);
                allgather_calls++;
                for (int r = 0; r < size; r++)
                    for (int k = 0; k < n; k++)
                        CHECK(all[r * n + k] == (char)(r * 31 + i + k),
                              "round %d Allgather[%d][%d]", i, r, k);
                break;
            }
            int nb = 8 * n; /* up to 32 KiB: the Bcast's pieces too */
            for (int k = 0; k < nb; k++) b[k] = tc_rank == root ? (char)(i + k) : 0;
            topocoll_bcast(b, nb, MPI_BYTE, root, comm);
            bcast_calls++;
            for (int k = 0; k < nb; k++) CHECK(b[k] == (char)(i + k), "round %d Bcast[%d]", i, k);
            break;
        }
        default: /* a collective that is not eager ends the run of eager ones */
            if (i % 15 == 4) {
                for (int k = 0; k < big; k++) bin[k] = val(tc_rank, i, k);
                topocoll_allreduce(bin, bout, big, MPI_DOUBLE, MPI_SUM, comm);
                double want = 0;
                for (int r = 0; r < size; r++) want += val(r, i, big - 1);
                CHECK(bout[big - 1] == want, "round %d big Allreduce", i);
            } else if (i % 15 == 9) {
                memset(gin, tc_rank + 1, gb);
                topocoll_allgather(gin, gb, MPI_BYTE, gout, gb, MPI_BYTE, comm);
                allgather_calls++;
                for (int r = 0; r < size; r++)
                    CHECK(gout[r * gb + gb - 1] == r + 1, "round %d Allgather", i);
            } else {
                topocoll_barrier(comm);
            }
        }
    }
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &info);
    CHECK(info.enabled, "topocoll not enabled on the communicator");
    CHECK(info.coll[TOPOCOLL_COLL_REDUCE].calls == (unsigned long long)reduce_calls,
          "reduce calls %llu, ran %d", (unsigned long long)info.coll[TOPOCOLL_COLL_REDUCE].calls,
          reduce_calls);
    CHECK(info.coll[TOPOCOLL_COLL_ALLREDUCE].calls >= (unsigned long long)allreduce_calls,
          "allreduce calls %llu < %d", (unsigned long long)info.coll[TOPOCOLL_COLL_ALLREDUCE].calls,
          allreduce_calls);
    CHECK(info.coll[TOPOCOLL_COLL_ALLGATHER].calls == (unsigned long long)allgather_calls,
          "allgather calls %llu, ran %d",
          (unsigned long long)info.coll[TOPOCOLL_COLL_ALLGATHER].calls, allgather_calls);
    CHECK(info.coll[TOPOCOLL_COLL_BCAST].calls == (unsigned long long)bcast_calls,
          "bcast calls %llu, ran %d", (unsigned long long)info.coll[TOPOCOLL_COLL_BCAST].calls,
          bcast_calls);
    MPI_Comm_free(&comm);
    free(in);
    free(out);
    free(li);
    free(lo);
    free(bin);
    free(bout);
    free(gin);
    free(gout);
    int all = 0;
    MPI_Allreduce(&tc_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (tc_rank == 0)
        printf("test_eager: %d checks on rank 0, %d failures in all\n", tc_checks, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
