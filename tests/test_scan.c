/*
 * test_scan -- topocoll_scan, topocoll_exscan, topocoll_iscan and
 * topocoll_iexscan against the native PMPI_Scan / PMPI_Exscan, byte for
 * byte (the chain combines in rank order, as the native's result for
 * exact types): int sum, double sum (small integers: exact in any order),
 * a non-commutative user op (2x2 matrix product modulo 1000), unsigned
 * max; counts 0, 1, odd, a pipeline's worth (1 Mi doubles); MPI_IN_PLACE;
 * on the world communicator and a split with reversed ranks.  MPI_Exscan
 * leaves rank 0's buffer unspecified: it is not compared there.
 */
#include "topocoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* inout = in x inout, 2x2 integer matrices modulo 1000 (not commutative) */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int c[4] = { (a[0] * b[0] + a[1] * b[2]) % 1000, (a[0] * b[1] + a[1] * b[3]) % 1000,
                     (a[2] * b[0] + a[3] * b[2]) % 1000, (a[2] * b[1] + a[3] * b[3]) % 1000 };
        memcpy(b, c, sizeof(c));
    }
}

enum { SCAN, EXSCAN, ISCAN, IEXSCAN };
static const char *names[] = { "scan", "exscan", "iscan", "iexscan" };

static int topo(int how, const void *s, void *r, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    MPI_Request q;
    int e;
    switch (how) {
    case SCAN: return topocoll_scan(s, r, n, dt, op, c);
    case EXSCAN: return topocoll_exscan(s, r, n, dt, op, c);
    case ISCAN: e = topocoll_iscan(s, r, n, dt, op, c, &q); break;
    default: e = topocoll_iexscan(s, r, n, dt, op, c, &q); break;
    }
    return e != MPI_SUCCESS ? e : topocoll_wait(&q, MPI_STATUS_IGNORE);
}

/* The user op's prefix computed here, from every rank's input, in the
 * canonical order x_0 op (x_1 op (... op x_r)), r our rank (exclusive:
 * r - 1): a reference that depends on no MPI library's algorithm. */
static void user_ref(MPI_Comm comm, const unsigned char *s, int n, int excl, unsigned char *ref)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t bytes = (size_t)n * 16;
    unsigned char *all = malloc(bytes * (size_t)size + 1);
    PMPI_Allgather(s, n * 4, MPI_INT, all, n * 4, MPI_INT, comm);
    int last = excl ? rank - 1 : rank, len = n;
    MPI_Datatype dt = MPI_INT;
    if (last >= 0) {
        memcpy(ref, all + (size_t)last * bytes, bytes);
        for (int j = last - 1; j >= 0; j--) matmul(all + (size_t)j * bytes, ref, &len, &dt);
    }
    free(all);
}

static void one(MPI_Comm comm, const char *cname, int how, int n, MPI_Datatype dt, int esize,
                MPI_Op op, const char *tname, int in_place)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    size_t bytes = (size_t)n * (size_t)esize + 16;
    unsigned char *s = malloc(bytes), *a = malloc(bytes), *b = malloc(bytes);
    for (size_t i = 0; i < bytes; i++) s[i] = (unsigned char)((i * 7 + (size_t)rank * 13) % 11);
    if (dt == MPI_DOUBLE)
        for (int i = 0; i < n; i++) ((double *)(void *)s)[i] = (double)((i + rank) % 17);
    if (esize == 16) /* matrix entries below 1000: the product modulo 1000 is associative */
        for (int i = 0; i < 4 * n; i++) ((int *)(void *)s)[i] = (i * 7 + rank * 13) % 1000;
    memset(a, 0xa5, bytes);
    memset(b, 0xa5, bytes);
    int excl = how == EXSCAN || how == IEXSCAN, e1, e2;
    if (in_place) {
        memcpy(a, s, bytes);
        memcpy(b, s, bytes);
        e1 = topo(how, MPI_IN_PLACE, a, n, dt, op, comm);
        e2 = excl ? PMPI_Exscan(MPI_IN_PLACE, b, n, dt, op, comm)
                  : PMPI_Scan(MPI_IN_PLACE, b, n, dt, op, comm);
    } else {
        e1 = topo(how, s, a, n, dt, op, comm);
        e2 = excl ? PMPI_Exscan(s, b, n, dt, op, comm) : PMPI_Scan(s, b, n, dt, op, comm);
    }
    CHECK(e1 == MPI_SUCCESS && e2 == MPI_SUCCESS, "%s %s %s n %d: rc %d/%d", cname, names[how],
          tname, n, e1, e2);
    if (esize == 16 && n > 0) user_ref(comm, s, n, excl, b); /* the user op: computed here */
    if (!(excl && rank == 0))
        CHECK(memcmp(a, b, (size_t)n * (size_t)esize) == 0, "%s %s %s n %d%s: differs from native",
              cname, names[how], tname, n, in_place ? " IN_PLACE" : "");
    free(s);
    free(a);
    free(b);
}

static void suite(MPI_Comm comm, const char *cname, MPI_Datatype mat, MPI_Op mop)
{
    static const int counts[] = { 0, 1, 7, 1000, 65537, 1 << 20 };
    for (int how = SCAN; how <= IEXSCAN; how++)
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            int n = counts[i];
            one(comm, cname, how, n, MPI_INT, 4, MPI_SUM, "int sum", 0);
            one(comm, cname, how, n, MPI_DOUBLE, 8, MPI_SUM, "double sum", (int)i % 2);
            one(comm, cname, how, n, MPI_UNSIGNED, 4, MPI_MAX, "unsigned max", (int)(i + 1) % 2);
            if (n <= 65537) one(comm, cname, how, n, mat, 16, mop, "matrix product", (int)i % 2);
        }
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_print_max = 20;
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op mop;
    MPI_Op_create(matmul, 0, &mop);
    topocoll_comm_attach(MPI_COMM_WORLD);
    suite(MPI_COMM_WORLD, "world", mat, mop);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - tc_rank, &rev);
    topocoll_comm_attach(rev);
    suite(rev, "reversed", mat, mop);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(MPI_COMM_WORLD, &info);
    CHECK(!info.enabled || (info.coll[TOPOCOLL_COLL_SCAN].calls > 0 &&
                            info.coll[TOPOCOLL_COLL_EXSCAN].calls > 0),
          "topocoll ran %llu scans, %llu exscans",
          (unsigned long long)info.coll[TOPOCOLL_COLL_SCAN].calls,
          (unsigned long long)info.coll[TOPOCOLL_COLL_EXSCAN].calls);
    MPI_Comm_free(&rev);
    MPI_Op_free(&mop);
    MPI_Type_free(&mat);
    int f = tc_report("test_scan");
    MPI_Finalize();
    return f != 0;
}
