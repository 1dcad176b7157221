/*
 * test_allgather -- topocoll_allgather against the native PMPI_Allgather:
 * block sizes 1 byte, odd, around the CICO switch-over, 1 MiB+3 bytes;
 * MPI_IN_PLACE; contiguous, derived-contiguous and non-contiguous
 * (vector) receive types; send types differing from the receive type
 * with the same signature; on the world communicator, a dup, a split with
 * reversed key order and a split into halves; erroneous arguments give
 * the native error class.  Run with TOPOCOLL_ALLGATHER_ALG=leader|ring
 * and virtual nodes to cover both algorithms.
 */
#include "topocoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int wrank;

/* @count elements of @st sent, @rcount of @rt received per rank. */
static void one(MPI_Comm comm, const char *cname, int count, MPI_Datatype st, int rcount,
                MPI_Datatype rt, const char *tname, int in_place, unsigned seed)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Aint lb, sext, rext;
    MPI_Type_get_extent(st, &lb, &sext);
    MPI_Type_get_extent(rt, &lb, &rext);
    size_t sspan = (size_t)count * (size_t)sext + 64,
           rspan = (size_t)rcount * (size_t)rext * (size_t)size + 64;
    unsigned char *s = malloc(sspan), *a = malloc(rspan), *b = malloc(rspan);
    tc_fill(s, sspan, seed + (unsigned)rank * 31);
    tc_fill(a, rspan, seed + 5);
    memcpy(b, a, rspan);
    int rc;
    if (in_place) {
        /* our block already sits in the receive buffer: put it there via native pack/unpack */
        int psz, pos = 0;
        MPI_Pack_size(count, st, comm, &psz);
        char *tmp = malloc((size_t)psz);
        MPI_Pack(s, count, st, tmp, psz, &pos, comm);
        int p2 = 0;
        MPI_Unpack(tmp, psz, &p2, a + (size_t)rank * (size_t)rcount * (size_t)rext, rcount, rt,
                   comm);
        p2 = 0;
        MPI_Unpack(tmp, psz, &p2, b + (size_t)rank * (size_t)rcount * (size_t)rext, rcount, rt,
                   comm);
        free(tmp);
        rc = topocoll_allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, rcount, rt, comm);
        PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, rcount, rt, comm);
    } else {
        rc = topocoll_allgather(s, count, st, a, rcount, rt, comm);
        PMPI_Allgather(s, count, st, b, rcount, rt, comm);
    }
    CHECK(rc == MPI_SUCCESS, "%s %s count %d%s: rc %d", cname, tname, count,
          in_place ? " IN_PLACE" : "", rc);
    size_t d = 0;
    while (d < rspan && a[d] == b[d]) d++;
    CHECK(d == rspan, "%s %s count %d%s: byte %zu of %zu differs from native", cname, tname, count,
          in_place ? " IN_PLACE" : "", d, rspan);
    free(s);
    free(a);
    free(b);
}

static void suite(MPI_Comm comm, const char *cname)
{
    static const int bytes[] = { 1, 7, 4099, 16384, 16385, 65537, (1 << 20) + 3 };
    unsigned seed = 1;
    MPI_Datatype vec, tri;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec); /* 6 ints with gaps */
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(6, MPI_INT, &tri); /* same signature, contiguous */
    MPI_Type_commit(&tri);
    for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
        for (int ip = 0; ip < 2; ip++) {
            one(comm, cname, bytes[i], MPI_BYTE, bytes[i], MPI_BYTE, "byte", ip, seed++);
            if (bytes[i] % 4 == 0 || bytes[i] < 8) {
                int n = bytes[i] < 8 ? bytes[i] : bytes[i] / 4;
                one(comm, cname, n, MPI_INT, n, MPI_INT, "int", ip, seed++);
            }
        }
    }
    /* non-contiguous receive type; send types of the same signature */
    for (int n = 1; n <= 2000; n = n * 7 + 3) {
        one(comm, cname, n, vec, n, vec, "vector/vector", 0, seed++);
        one(comm, cname, n, vec, n, vec, "vector IN_PLACE", 1, seed++);
        one(comm, cname, 6 * n, MPI_INT, n, vec, "int/vector", 0, seed++);
        one(comm, cname, n, tri, 6 * n, MPI_INT, "contiguous6/int", 0, seed++);
        int rank;
        MPI_Comm_rank(comm, &rank); /* ranks use different send types of one signature */
        if (rank % 2)
            one(comm, cname, n, vec, 6 * n, MPI_INT, "mixed", 0, seed++);
        else
            one(comm, cname, 6 * n, MPI_INT, 6 * n, MPI_INT, "mixed", 0, seed++);
    }
    /* count 0 */
    char x = 1, y[1];
    CHECK(topocoll_allgather(&x, 0, MPI_BYTE, y, 0, MPI_BYTE, comm) == MPI_SUCCESS, "count 0");
    MPI_Type_free(&vec);
    MPI_Type_free(&tri);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    tc_rank = wrank;
    tc_print_max = 39;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, rev, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
    suite(MPI_COMM_WORLD, "world");
    suite(rev, "reversed");
    suite(dup, "dup");
    suite(half, "half");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, x[4] = { 0 }, y[64];
    MPI_Error_class(topocoll_allgather(x, -1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count: class %d", cls);
    MPI_Error_class(topocoll_allgather(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_NULL), &cls);
    CHECK(cls == MPI_ERR_COMM, "null comm: class %d", cls);
    MPI_Error_class(topocoll_allgather(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, MPI_COMM_WORLD),
                    &cls);
    CHECK(cls == MPI_ERR_TYPE, "null datatype: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    if (topocoll_comm_query(MPI_COMM_WORLD, &info) == MPI_SUCCESS)
        /* without single copy only one-node Allgathers are ours (CICO) */
        CHECK(size == 1 || !info.enabled || info.coll[TOPOCOLL_COLL_ALLGATHER].calls > 0 ||
                  (!info.single_copy && info.nnodes > 1 &&
                   info.coll[TOPOCOLL_COLL_ALLGATHER].fallbacks > 0),
              "no Allgather handled by topocoll");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    int tot[2] = { tc_failures, tc_checks }, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) printf("test_allgather np=%d: %d checks, %d failures\n", size, sum[1], sum[0]);
    MPI_Finalize();
    return tc_failures ? 1 : (wrank == 0 && sum[0] ? 1 : 0);
}
