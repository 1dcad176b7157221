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
 * exits non-zero when any check failed.
 */
#ifndef TC_TESTS_CHECK_H
#define TC_TESTS_CHECK_H

#include <limits.h>
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

#endif
