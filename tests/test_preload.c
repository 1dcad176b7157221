/*
 * test_preload -- an ordinary MPI program (it does not include topocoll.h
 * nor link topocoll) run with LD_PRELOAD=libtopocoll_pmpi.so:
 *  - MPI_Bcast, MPI_Reduce, MPI_Allreduce and MPI_Allgather give the
 *    right data and really went through topocoll (topocoll_comm_query,
 *    looked up with dlsym, counts the calls);
 *  - 40 communicators created, used and freed leave nothing behind: no
 *    name in /dev/shm at any time (the segment is unlinked once mapped),
 *    no mapping of ours after MPI_Comm_free, none after MPI_Finalize.
 * Exit status 0 only if all of that holds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int rank;

/* Mirrors topocoll_comm_info_t (this program does not include
 * topocoll.h): the versioned layout, struct_size first, the counters per
 * collective in coll[] (topocoll_coll_t: 0 Bcast, 2 Reduce, 3 Allreduce,
 * 4 Allgather). */
typedef struct {
    size_t struct_size;
    int enabled, rank, size, node, nnodes, local_rank, local_size, leader, single_copy;
    char why[128];
    char leaders_policy[16];
    int rails, rail_leader[4], domain_leader, nic_score, built, reused;
    uint64_t lazy_calls, bytes_sc, bytes_cico, bytes_net, nb_calls;
    struct {
        uint64_t calls, nonblocking, fallbacks, native;
    } coll[32];
} info_t;
enum { BCAST = 0, REDUCE = 2, ALLREDUCE = 3, ALLGATHER = 4 };

/* Segment names are "topocoll-<creator pid>-...": count those of this
 * job's processes (other jobs on the host may be creating theirs). */
static int *g_pids, g_npids;

static int shm_names(void)
{
    int n = 0;
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, "topocoll-", 9) != 0) continue;
        int pid = atoi(e->d_name + 9);
        for (int i = 0; i < g_npids; i++)
            if (g_pids[i] == pid) {
                n++;
                break;
            }
    }
    if (d) closedir(d);
    return n;
}

static int our_mappings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "/topocoll-")) n++;
    if (f) fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tc_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int (*query)(MPI_Comm, info_t *) =
        (int (*)(MPI_Comm, info_t *))dlsym(RTLD_DEFAULT, "topocoll_comm_query");
    CHECK(query != NULL, "libtopocoll_pmpi.so is not preloaded");

    int me = (int)getpid();
    g_npids = size;
    g_pids = malloc(sizeof(int) * (size_t)size);
    PMPI_Allgather(&me, 1, MPI_INT, g_pids, 1, MPI_INT, MPI_COMM_WORLD);
    int base_maps = our_mappings();
    for (int it = 0; it < 40; it++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, it % 2 ? 0 : rank % 2, size - rank, &c);
        int csize;
        MPI_Comm_size(c, &csize);
        int n = 5000 + it * 3001, *buf = malloc((size_t)n * sizeof(int)), crank;
        MPI_Comm_rank(c, &crank);
        int root = it % csize;
        for (int i = 0; i < n; i++) buf[i] = crank == root ? i * it : -1;
        CHECK(MPI_Bcast(buf, n, MPI_INT, root, c) == MPI_SUCCESS, "bcast rc");
        int ok = 1;
        for (int i = 0; i < n; i++)
            if (buf[i] != i * it) ok = 0;
        CHECK(ok, "iteration %d: wrong data", it);
        /* Reduce and Allreduce of doubles (exact sums), Allgather of ints */
        double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
        for (int i = 0; i < n; i++) x[i] = (double)(i % 97 + crank);
        CHECK(MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, c) == MPI_SUCCESS, "allreduce rc");
        ok = 1;
        for (int i = 0; i < n; i++)
            if (y[i] != (double)(i % 97) * csize + csize * (csize - 1) / 2.0) ok = 0;
        CHECK(ok, "iteration %d: wrong Allreduce result", it);
        memset(y, 0, (size_t)n * sizeof(double));
        CHECK(MPI_Reduce(x, y, n, MPI_DOUBLE, MPI_MAX, root, c) == MPI_SUCCESS, "reduce rc");
        ok = 1;
        for (int i = 0; crank == root && i < n; i++)
            if (y[i] != (double)(i % 97 + csize - 1)) ok = 0;
        CHECK(ok, "iteration %d: wrong Reduce result", it);
        int per = n / csize, *all = malloc((size_t)per * (size_t)csize * sizeof(int));
        for (int i = 0; i < per; i++) buf[i] = crank * 1000003 + i;
        CHECK(MPI_Allgather(buf, per, MPI_INT, all, per, MPI_INT, c) == MPI_SUCCESS,
              "allgather rc");
        ok = 1;
        for (int r = 0; r < csize; r++)
            for (int i = 0; i < per; i++)
                if (all[(size_t)r * per + i] != r * 1000003 + i) ok = 0;
        CHECK(ok, "iteration %d: wrong Allgather result", it);
        free(x);
        free(y);
        free(all);
        info_t info = { .struct_size = sizeof(info_t) };
        if (query && csize > 1) {
            CHECK(query(c, &info) == MPI_SUCCESS && info.coll[BCAST].calls == 1,
                  "MPI_Bcast did not go through topocoll");
            CHECK(info.coll[REDUCE].calls == 1 && info.coll[ALLREDUCE].calls == 1 &&
                      info.coll[ALLGATHER].calls == 1,
                  "MPI_Reduce/Allreduce/Allgather did not go through topocoll (%llu %llu %llu)",
                  (unsigned long long)info.coll[REDUCE].calls,
                  (unsigned long long)info.coll[ALLREDUCE].calls,
                  (unsigned long long)info.coll[ALLGATHER].calls);
            /* its segment, beside the kept contexts' (TOPOCOLL_COMM_KEEP, 4) */
            const char *ke = getenv("TOPOCOLL_COMM_KEEP");
            int keep = ke && *ke ? atoi(ke) : 4, live = info.local_size > 1;
            CHECK(our_mappings() >= base_maps + live && our_mappings() <= base_maps + live + keep,
                  "live communicator: %d mappings", our_mappings());
        }
        /* every rank between its communicator's set-up and the next one's
         * (ranks of the other communicator would otherwise be creating
         * theirs: the name exists until all its processes mapped it);
         * the native barrier, so MPI_COMM_WORLD gets no segment here */
        PMPI_Barrier(MPI_COMM_WORLD);
        CHECK(shm_names() == 0, "a name is left in /dev/shm while the communicator lives");
        PMPI_Barrier(MPI_COMM_WORLD);
        free(buf);
        MPI_Comm_free(&c);
        /* a freed communicator's context (its segment) is kept for the next
         * one of its group, at most TOPOCOLL_COMM_KEEP of them (4) */
        const char *ke = getenv("TOPOCOLL_COMM_KEEP");
        int keep = ke && *ke ? atoi(ke) : 4;
        CHECK(keep ? our_mappings() <= base_maps + keep : our_mappings() == base_maps,
              "%d segments still mapped after MPI_Comm_free (TOPOCOLL_COMM_KEEP=%d)",
              our_mappings() - base_maps, keep);
    }
    int world[4] = { 1, 2, 3, 4 };
    MPI_Bcast(world, 4, MPI_INT, size - 1, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int tot[2] = { tc_failures, tc_checks }, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    CHECK(our_mappings() == 0, "%d segments still mapped after MPI_Finalize", our_mappings());
    CHECK(shm_names() == 0, "names left in /dev/shm after MPI_Finalize");
    if (rank == 0)
        printf("test_preload np=%d: %d checks, %d failed\n", size, sum[1] + 2,
               sum[0] + tc_failures);
    free(g_pids);
    return tc_failures ? 1 : 0;
}
