/*
 * test_churn -- cheap communicators (coll/ctx): results against the native
 * MPI across a context's life, and what the context costs.
 *
 *  1. lazy: on a new communicator the first TOPOCOLL_COMM_LAZY collectives
 *     (the environment's value, 64 by default) go to the native MPI and
 *     leave the context unbuilt; the next one builds it; a call of
 *     TOPOCOLL_COMM_LAZY_MIN bytes or more (set by the tests) builds it at once.
 *  2. reuse: a communicator of a freed one's group (dup, and a split into
 *     the same processes) takes its context over; a split into other
 *     groups builds its own; a context holding a live region of the
 *     application is not kept.
 *  3. churn: 10,000 rounds (np <= 4; 2,000 above) of dup or split, one
 *     collective (Bcast, Reduce, Allreduce, Allgather or Barrier, small or
 *     large, so contexts are built, kept, taken over and evicted: the
 *     groups are the world, its halves, its rotations, reversed), free;
 *     every result checked against its closed form.  After the first tenth, this process's
 *     resident memory, open file descriptors and mappings must stay flat.
 *
 * Exit status 0 only if every check held.
 */
#define _GNU_SOURCE
#include "topocoll.h"
#include "check.h"

#include <dirent.h>
#include <sys/uio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static topocoll_comm_info_t query(MPI_Comm comm)
{
    topocoll_comm_info_t i = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &i);
    return i;
}

/* An Allreduce of @n doubles on @comm through topocoll, checked. */
static void allreduce_check(MPI_Comm comm, int n, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *in = malloc(sizeof(double) * (size_t)n), *out = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) in[i] = rank + 1 + i % 7;
    topocoll_allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != (double)size * (size + 1) / 2 + (double)size * (i % 7);
    CHECK(bad == 0, "%s: Allreduce of %d doubles: %d wrong", what, n, bad);
    free(in);
    free(out);
}

static void test_lazy(int lazy)
{
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    for (int k = 0; k < lazy; k++) {
        allreduce_check(d, 8, "lazy");
        topocoll_comm_info_t i = query(d);
        CHECK(!i.built && !i.enabled && i.coll[TOPOCOLL_COLL_ALLREDUCE].calls == 0 &&
                  i.coll[TOPOCOLL_COLL_ALLREDUCE].fallbacks == 0 && i.lazy_calls == (uint64_t)k + 1,
              "call %d of %d: built %d enabled %d calls %llu fallbacks %llu lazy %llu", k + 1, lazy,
              i.built, i.enabled, (unsigned long long)i.coll[TOPOCOLL_COLL_ALLREDUCE].calls,
              (unsigned long long)i.coll[TOPOCOLL_COLL_ALLREDUCE].fallbacks,
              (unsigned long long)i.lazy_calls);
    }
    allreduce_check(d, 8, "lazy: the call that builds");
    topocoll_comm_info_t i = query(d);
    /* (on several nodes a small Allreduce is the native's by choice: TOPOCOLL_ALLREDUCE_FLAT_MAX)
     */
    CHECK(i.built && i.enabled && (i.coll[TOPOCOLL_COLL_ALLREDUCE].calls == 1 || i.nnodes > 1),
          "after %d calls: built %d enabled %d "
          "calls %llu (%s)",
          lazy + 1, i.built, i.enabled, (unsigned long long)i.coll[TOPOCOLL_COLL_ALLREDUCE].calls,
          i.mechanism_why);
    MPI_Comm_free(&d);

    /* a 512 KiB call builds at once where TOPOCOLL_COMM_LAZY_MIN (off by
     * default) is set below it, else it counts as any other */
    const char *lm = getenv("TOPOCOLL_COMM_LAZY_MIN");
    const int by_size = lm && atoll(lm) > 0 && lazy > 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    allreduce_check(d, 1 << 16, "lazy: 512 KiB");
    i = query(d);
    if (by_size)
        CHECK(i.built && i.enabled && i.coll[TOPOCOLL_COLL_ALLREDUCE].calls == 1,
              "a 512 KiB call did not build: built %d calls %llu", i.built,
              (unsigned long long)i.coll[TOPOCOLL_COLL_ALLREDUCE].calls);
    else if (lazy > 0)
        CHECK(!i.built, "a 512 KiB call built without TOPOCOLL_COMM_LAZY_MIN");
    MPI_Comm_free(&d);
}

static void test_reuse(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    topocoll_comm_attach(a);
    /* test_lazy's communicators were freed: their context was kept */
    CHECK(query(a).reused == (size > 1), "a dup after freed ones: reused %d", query(a).reused);
    MPI_Comm_dup(MPI_COMM_WORLD, &b); /* a is alive: b builds its own */
    topocoll_comm_attach(b);
    CHECK(!query(b).reused, "a dup beside a live one reused its context");
    allreduce_check(a, 100, "reuse: a");
    allreduce_check(b, 100, "reuse: b");
    MPI_Comm_free(&a);
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &a); /* the same group again */
    topocoll_comm_attach(a);
    CHECK(query(a).reused, "a split into a freed communicator's group built a new context");
    allreduce_check(a, 1 << 16, "reuse: taken over");
    allreduce_check(b, 1 << 16, "reuse: b beside it");
    MPI_Comm_free(&b);
    MPI_Comm_free(&a);
    /* a communicator holding a live region of the application: its
     * context dies with it (the cookie must not outlive it) */
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    topocoll_comm_attach(a);
    char mem[64];
    struct iovec iov = { mem, sizeof(mem) };
    topocoll_cookie_t cookie;
    int have_region = size > 1 && topocoll_region_create(a, &iov, 1, TOPOCOLL_RIGHT_READ,
                                                         &cookie) == TOPOCOLL_SUCCESS;
    MPI_Comm_free(&a);
    MPI_Comm_dup(MPI_COMM_WORLD, &a); /* may take over another kept context, never that one */
    topocoll_comm_attach(a);
    char got[64];
    struct iovec l = { got, sizeof(got) };
    CHECK(
        !have_region || topocoll_copy(a, cookie, 0, &l, 1, TOPOCOLL_COPY_FROM_REGION) < 0,
        "the cookie of a region on a freed communicator still works on the next one of its group");
    MPI_Comm_free(&a);
    if (size > 1) {
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &a); /* reversed: another group */
        topocoll_comm_attach(a);
        CHECK(!query(a).reused, "a reversed split took over a context of the world's order");
        allreduce_check(a, 1000, "reuse: reversed");
        MPI_Comm_free(&a);
    }
}

static long statm_rss_kib(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    if (f) fclose(f);
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static int count_maps(void)
{
    int n = 0, ch;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && (ch = fgetc(f)) != EOF) n += ch == '\n';
    if (f) fclose(f);
    return n;
}

/* One collective of @bytes on @comm, kind @k, checked against its closed
 * form (not against the native MPI: MPICH 4.0.2's MPI_Reduce at a non-zero
 * root across hosts gave wrong sums in this very test, run natively). */
static void one_call(MPI_Comm comm, int k, size_t bytes, int round)
{
    int rank, size, n = (int)(bytes / sizeof(int)), bad = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (n < 1) n = 1;
    int *in = malloc(sizeof(int) * (size_t)n),
        *out = malloc(sizeof(int) * (size_t)n * (size_t)size);
    for (int i = 0; i < n; i++) in[i] = rank * 31 + i + round;
    int root = round % size;
    switch (k) {
    case 0:
        memcpy(out, in, sizeof(int) * (size_t)n);
        topocoll_bcast(out, n, MPI_INT, root, comm);
        for (int i = 0; i < n; i++) bad += out[i] != root * 31 + i + round;
        break;
    case 1:
        topocoll_reduce(in, out, n, MPI_INT, MPI_SUM, root, comm);
        for (int i = 0; rank == root && i < n; i++)
            bad += out[i] != 31 * size * (size - 1) / 2 + size * (i + round);
        break;
    case 2:
        topocoll_allreduce(in, out, n, MPI_INT, MPI_MAX, comm);
        for (int i = 0; i < n; i++) bad += out[i] != (size - 1) * 31 + i + round;
        break;
    case 3:
        topocoll_allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++)
                bad += out[(size_t)p * (size_t)n + (size_t)i] != p * 31 + i + round;
        break;
    default: topocoll_barrier(comm); break;
    }
    CHECK(bad == 0, "churn round %d: collective %d of %zu bytes: %d elements wrong", round, k,
          bytes, bad);
    free(in);
    free(out);
}

static void test_churn(int rounds)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long rss0 = 0;
    int fd0 = 0, maps0 = 0, warm = rounds / 10, built = 0, reused = 0;
    for (int r = 0; r < rounds; r++) {
        MPI_Comm c;
        switch (r % 4) {
        case 0: MPI_Comm_dup(MPI_COMM_WORLD, &c); break;
        case 1: MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c); break;           /* halves */
        case 2: MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + r / 4) % size, &c); break; /* rotations */
        default: MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c); break;          /* reversed */
        }
        size_t bytes =
            r % 8 == 3 ? (size_t)300 << 10 : (size_t)8 << (r % 11); /* some build at once */
        one_call(c, (r / 4) % 5, bytes, r);
        if (r % 16 == 5)
            for (int k = 0; k < 17; k++) one_call(c, 2, 64, r); /* past the lazy calls */
        topocoll_comm_info_t i = query(c);
        built += i.built;
        reused += i.reused;
        MPI_Comm_free(&c);
        if (r == warm) {
            rss0 = statm_rss_kib();
            fd0 = count_fds();
            maps0 = count_maps();
        }
    }
    long rss = statm_rss_kib();
    int fds = count_fds(), maps = count_maps();
    CHECK(fds <= fd0, "churn: open file descriptors %d -> %d", fd0, fds);
#if !defined(__SANITIZE_ADDRESS__) /* (ASan's quarantine keeps freed memory, and its mappings) */
    CHECK(maps <= maps0 + 8, "churn: mappings %d -> %d", maps0, maps);
    CHECK(rss <= rss0 + 8192, "churn: resident memory %ld -> %ld KiB", rss0, rss);
#endif
    const char *keep =
        getenv("TOPOCOLL_COMM_KEEP"); /* the default keeps one context per group here */
    int reuse_expected = !keep || atoi(keep) >= 4;
    CHECK(size == 1 || (built >= rounds / 20 && (!reuse_expected || reused >= built / 2)),
          "churn: %d contexts built, %d taken over", built, reused);
    if (rank == 0)
        printf("churn: %d rounds, %d contexts built (%d taken over); rss %ld -> %ld KiB, fds %d -> "
               "%d, mappings "
               "%d -> %d\n",
               rounds, built, reused, rss0, rss, fd0, fds, maps0, maps);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *l = getenv("TOPOCOLL_COMM_LAZY");
    int lazy = l && *l ? atoi(l) : 64;
    if (size > 1) test_lazy(lazy);
    test_reuse();
    test_churn(argc > 1 ? atoi(argv[1]) : size <= 4 ? 10000 : 2000);
    int all = 0;
    MPI_Allreduce(&tc_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (tc_rank == 0) printf("test_churn np=%d: %d checks, %d failed\n", size, tc_checks, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
