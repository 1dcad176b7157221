/*
 * tests/check.h -- the tests' one assertion: CHECK(cond, fmt, ...) counts
 * a check, and on failure counts it and prints one line naming the rank,
 * file and line.  A test sums tc_failures over its ranks for its exit
 * status.  Set tc_rank after MPI_Init.
 */
#ifndef TC_TESTS_CHECK_H
#define TC_TESTS_CHECK_H

#include <stdio.h>

static int tc_checks, tc_failures, tc_rank;

#define CHECK(cond, ...) do { tc_checks++; if (!(cond)) { tc_failures++; \
        fprintf(stderr, "[rank %d] FAIL %s:%d: ", tc_rank, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#endif
