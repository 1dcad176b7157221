/*
 * examples/hcompute -- the hierarchical computation of the
 * hierarchical-model paper (section 6, Algorithm 4; the pyramid of
 * section 7.4): build the communicator hierarchy once with
 * hsplit_with_roots, then run one collective per level.  Here: a sum of
 * vectors, reduced level by level from the deepest resource up to
 * MPI_COMM_WORLD's rank 0 over the roots communicators, then broadcast back
 * down the same pyramid; checked against the flat MPI_Allreduce.
 *
 * At each level only the roots of the level below take part (the paper's
 * "fewer processes per level"); a process whose binding stops above a
 * level (no communicator there) stands as its own root.
 *
 *   mpiexec -np 8 env TOPOCOLL_VIRTUAL_NODES=2 TOPOCOLL_TOPOLOGY=... \
 *       TOPOCOLL_BINDING=socket-rr ./hcompute [elements]
 */
#include <topocoll.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXL 32

int main(int argc, char **argv)
{
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 100000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (n < 1) n = 1;

    /* The pyramid: up[l] holds the processes that carry level l's partial
     * sums into level l-1 (the roots communicator of level l, plus any
     * process of the parent without a level-l communicator); bottom is the
     * deepest communicator, all of whose members contribute. */
    MPI_Comm up[MAXL], down[MAXL], bottom, owned[2 * MAXL];
    char type[MAXL][TOPOCOLL_HLEVEL_TYPE_MAX];
    int L = 0, nowned = 0;
    MPI_Comm old = MPI_COMM_WORLD;
    while (L < MAXL) {
        MPI_Comm nc = MPI_COMM_NULL, rc = MPI_COMM_NULL;
        int have = 0, orank;
        if (old != MPI_COMM_NULL) topocoll_comm_hsplit_with_roots(old, MPI_INFO_NULL, &nc, &rc);
        int mine = nc != MPI_COMM_NULL, any = 0, lacking = 0;
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (!any) break; /* old is as deep as it goes */
        if (old != MPI_COMM_NULL) {
            int nomine = !mine;
            MPI_Allreduce(&nomine, &lacking, 1, MPI_INT, MPI_LOR, old);
            MPI_Comm_rank(old, &orank);
            if (lacking) { /* roots plus the processes without a child */
                int nr = -1;
                if (nc != MPI_COMM_NULL) MPI_Comm_rank(nc, &nr);
                if (rc != MPI_COMM_NULL) MPI_Comm_free(&rc);
                MPI_Comm_split(old, (nc == MPI_COMM_NULL || nr == 0) ? 0 : MPI_UNDEFINED, orank,
                               &rc);
            }
            have = 1;
        }
        int num, idx;
        strcpy(type[L], "-");
        if (nc != MPI_COMM_NULL) topocoll_comm_get_hlevel_info(nc, &num, &idx, type[L]);
        up[L] = have ? rc : MPI_COMM_NULL;
        if (rc != MPI_COMM_NULL) owned[nowned++] = rc;
        if (nc != MPI_COMM_NULL) owned[nowned++] = nc;
        down[L] = nc;
        old = nc;
        L++;
    }
    /* the deepest level's communicators (absent where a binding stopped
     * higher: those processes are roots of their own level) */
    bottom = L ? down[L - 1] : MPI_COMM_WORLD;
    if (rank == 0) {
        printf("# %d processes, %d levels below MPI_COMM_WORLD:", size, L);
        for (int l = 0; l < L; l++) printf(" %s", type[l]);
        printf("\n");
    }

    double *v = malloc(sizeof(double) * (size_t)n), *part = malloc(sizeof(double) * (size_t)n);
    double *tmp = malloc(sizeof(double) * (size_t)n), *flat = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) v[i] = (double)(rank + 1) * (double)(i % 1000 + 1); /* exact sums */

    double t_h = 1e30, t_f = 1e30;
    for (int rep = 0; rep < 10; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        memcpy(part, v, sizeof(double) * (size_t)n);
        /* up the pyramid: the deepest communicator, then each level's roots */
        if (bottom != MPI_COMM_NULL) {
            MPI_Reduce(part, tmp, n, MPI_DOUBLE, MPI_SUM, 0, bottom);
            memcpy(part, tmp, sizeof(double) * (size_t)n);
        }
        for (int l = L - 1; l >= 0; l--)
            if (up[l] != MPI_COMM_NULL) {
                MPI_Reduce(part, tmp, n, MPI_DOUBLE, MPI_SUM, 0, up[l]);
                memcpy(part, tmp, sizeof(double) * (size_t)n);
            }
        /* and back down */
        for (int l = 0; l < L; l++)
            if (up[l] != MPI_COMM_NULL) MPI_Bcast(part, n, MPI_DOUBLE, 0, up[l]);
        if (bottom != MPI_COMM_NULL) MPI_Bcast(part, n, MPI_DOUBLE, 0, bottom);
        double t1 = MPI_Wtime();
        MPI_Allreduce(v, flat, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        if (t1 - t0 < t_h) t_h = t1 - t0;
        if (t2 - t1 < t_f) t_f = t2 - t1;
    }
    int bad = memcmp(part, flat, sizeof(double) * (size_t)n) != 0, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    double th, tf;
    MPI_Reduce(&t_h, &th, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_f, &tf, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(
            "hierarchical sum of %d doubles: %s on every rank; best of 10: pyramid %.1f us, flat "
            "MPI_Allreduce %.1f us\n",
            n, anybad ? "WRONG" : "equal to MPI_Allreduce", th * 1e6, tf * 1e6);
    for (int i = 0; i < nowned; i++) MPI_Comm_free(&owned[i]);
    free(v);
    free(part);
    free(tmp);
    free(flat);
    MPI_Finalize();
    return anybad;
}
