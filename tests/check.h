/*
 * tests/check.h -- the tests' one assertion.  CHECK(cond, fmt, ...) counts
 * a check in tc_checks; when cond is false it counts a failure in
 * tc_failures and prints one line to stderr naming the rank, file and line:
 *
 *     [rank 3] FAIL test_x.c:42: <fmt, ...>
 *
 * tc_rank: set it after MPI_Init (MPI_COMM_WORLD rank).  It starts at -1,
 * meaning "no rank": a test without MPI leaves it so and its lines read
 * "FAIL test_x.c:42: ...".
 * tc_print_max: at most this many failures are printed (the first ones),
 * every one is still counted; a test whose failures come in floods sets it
 * at the start of main.  No limit unless set.
 *
 * An MPI test sums tc_failures over its ranks for its summary line and
 * exits non-zero when any check failed (tc_report does both sums and the
 * line).  tc_fill: the tests' pseudo-random data.
 */
#ifndef TC_TESTS_CHECK_H
#define TC_TESTS_CHECK_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

static int tc_checks, tc_failures, tc_rank = -1, tc_print_max = INT_MAX;

#define CHECK(cond, ...)                                                                \
    do {                                                                                \
        tc_checks++;                                                                    \
        if (!(cond) && ++tc_failures <= tc_print_max) {                                 \
            if (tc_rank >= 0)                                                           \
                fprintf(stderr, "[rank %d] FAIL %s:%d: ", tc_rank, __FILE__, __LINE__); \
            else                                                                        \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                    \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
        }                                                                               \
    } while (0)

/* @n bytes of a pseudo-random pattern of @seed at @b (xorshift: the same
 * bytes on every run; seeds differing by rank give different blocks). */
static inline void tc_fill(unsigned char *b, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = (unsigned char)x;
    }
}

#ifdef MPI_VERSION
/* The end of an MPI test: the checks and failures of every rank of
 * MPI_COMM_WORLD summed, one line "@name np=N: C checks, F failed" on
 * rank 0; returns F (the exit status is F != 0). */
static inline int tc_report(const char *name)
{
    int f = 0, c = 0, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&tc_failures, &f, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&tc_checks, &c, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (tc_rank == 0) printf("%s np=%d: %d checks, %d failed\n", name, size, c, f);
    return f;
}
#endif

#endif
