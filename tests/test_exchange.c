/*
 * test_exchange -- topocoll_gather, topocoll_scatter, topocoll_alltoall
 * and their nonblocking forms against the native PMPI_* results, byte for
 * byte: blocks of 0, 1 and odd bytes, the eager items' sizes, around
 * them, and single copy up to 1 MiB + 3; every root; MPI_IN_PLACE where
 * MPI allows it; contiguous and non-contiguous (vector) datatypes, and
 * send and receive types of one signature but different layouts; on the
 * world communicator, a dup and a split with reversed ranks; insignificant
 * arguments left as garbage (MPI_DATATYPE_NULL) where MPI allows; the
 * calls counted as run by topocoll on one node, and on several (Gather
 * and Scatter by the collectors, Alltoall by the slices where the nodes
 * are equal).  Erroneous arguments give their MPI error class.
 */
#include "topocoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { GATHER, SCATTER, ALLTOALL };
static const char *kname[] = { "gather", "scatter", "alltoall" };

/* One call of @kind through topocoll (@nb: nonblocking + wait) or natively. */
static int call(int kind, int topo, int nb, const void *s, int sc, MPI_Datatype st, void *r, int rc,
                MPI_Datatype rt, int root, MPI_Comm comm)
{
    MPI_Request q;
    int e;
    if (!topo) {
        if (kind == GATHER) return PMPI_Gather(s, sc, st, r, rc, rt, root, comm);
        if (kind == SCATTER) return PMPI_Scatter(s, sc, st, r, rc, rt, root, comm);
        return PMPI_Alltoall(s, sc, st, r, rc, rt, comm);
    }
    if (!nb) {
        if (kind == GATHER) return topocoll_gather(s, sc, st, r, rc, rt, root, comm);
        if (kind == SCATTER) return topocoll_scatter(s, sc, st, r, rc, rt, root, comm);
        return topocoll_alltoall(s, sc, st, r, rc, rt, comm);
    }
    if (kind == GATHER)
        e = topocoll_igather(s, sc, st, r, rc, rt, root, comm, &q);
    else if (kind == SCATTER)
        e = topocoll_iscatter(s, sc, st, r, rc, rt, root, comm, &q);
    else
        e = topocoll_ialltoall(s, sc, st, r, rc, rt, comm, &q);
    return e != MPI_SUCCESS ? e : topocoll_wait(&q, MPI_STATUS_IGNORE);
}

/* @count elements of @st per block sent, @rcount of @rt received. */
static void one(MPI_Comm comm, const char *cname, int kind, int nb, int count, MPI_Datatype st,
                int rcount, MPI_Datatype rt, const char *tname, int in_place, int root,
                unsigned seed)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Aint lb, sext, rext;
    MPI_Type_get_extent(st, &lb, &sext);
    MPI_Type_get_extent(rt, &lb, &rext);
    int many_s = kind != GATHER, many_r = kind != SCATTER; /* size blocks on that side */
    size_t sspan = (size_t)count * (size_t)sext * (many_s ? (size_t)size : 1) + 64,
           rspan = (size_t)rcount * (size_t)rext * (many_r ? (size_t)size : 1) + 64;
    unsigned char *s = malloc(sspan), *a = malloc(rspan), *b = malloc(rspan);
    unsigned char *s2 = malloc(sspan);
    tc_fill(s, sspan, seed + (unsigned)rank * 31);
    memcpy(s2, s, sspan);
    tc_fill(a, rspan, seed + 5);
    memcpy(b, a, rspan);
    int isroot = rank == root, e1, e2;
    /* what MPI leaves insignificant is garbage here */
    MPI_Datatype gst = kind == SCATTER && !isroot ? MPI_DATATYPE_NULL : st;
    MPI_Datatype grt = kind == GATHER && !isroot ? MPI_DATATYPE_NULL : rt;
    if (in_place && kind == ALLTOALL) {
        e1 = call(kind, 1, nb, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, rcount, rt, root, comm);
        e2 = call(kind, 0, 0, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, rcount, rt, root, comm);
    } else if (in_place && kind == GATHER && isroot) {
        e1 = call(kind, 1, nb, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, rcount, rt, root, comm);
        e2 = call(kind, 0, 0, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, rcount, rt, root, comm);
    } else if (in_place && kind == SCATTER && isroot) {
        e1 = call(kind, 1, nb, s, count, st, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm);
        e2 = call(kind, 0, 0, s2, count, st, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm);
    } else {
        e1 = call(kind, 1, nb, s, count, gst, a, rcount, grt, root, comm);
        e2 = call(kind, 0, 0, s2, count, gst, b, rcount, grt, root, comm);
    }
    CHECK(e1 == MPI_SUCCESS && e2 == MPI_SUCCESS, "%s %s%s %s count %d root %d%s: rc %d/%d", cname,
          nb ? "i" : "", kname[kind], tname, count, root, in_place ? " IN_PLACE" : "", e1, e2);
    size_t d = 0;
    while (d < rspan && a[d] == b[d]) d++;
    CHECK(d == rspan, "%s %s%s %s count %d root %d%s: byte %zu of %zu differs from native", cname,
          nb ? "i" : "", kname[kind], tname, count, root, in_place ? " IN_PLACE" : "", d, rspan);
    d = 0;
    while (d < sspan && s[d] == s2[d]) d++;
    CHECK(d == sspan, "%s %s%s: the send buffer changed (byte %zu)", cname, nb ? "i" : "",
          kname[kind], d);
    free(s);
    free(s2);
    free(a);
    free(b);
}

static void suite(MPI_Comm comm, const char *cname, MPI_Datatype vec)
{
    int size;
    MPI_Comm_size(comm, &size);
    static const int counts[] = { 0, 1, 3, 48, 49, 1000, 2048, 2049, 8191, 65536, (1 << 20) + 3 };
    unsigned seed = 1;
    for (int kind = GATHER; kind <= ALLTOALL; kind++)
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            int n = counts[i];
            if (kind == ALLTOALL && (size_t)n * (size_t)size > (8u << 20)) continue;
            for (int nb = 0; nb < 2; nb++) {
                int root = (int)(i + (size_t)nb) % size;
                one(comm, cname, kind, nb, n, MPI_BYTE, n, MPI_BYTE, "byte", 0, root, seed++);
                if (n % 4 == 0)
                    one(comm, cname, kind, nb, n / 4, MPI_INT, n, MPI_BYTE, "int/byte", 0, root,
                        seed++);
            }
            int root = (int)(i * 7) % size;
            one(comm, cname, kind, 0, n, MPI_BYTE, n, MPI_BYTE, "byte", 1, root, seed++);
            one(comm, cname, kind, 1, n, MPI_BYTE, n, MPI_BYTE, "byte", 1, (root + 1) % size,
                seed++);
            if (n <= 65536) { /* a vector of doubles with holes, against contiguous doubles */
                one(comm, cname, kind, 0, n, vec, n, MPI_DOUBLE, "vector/double", 0, root, seed++);
                one(comm, cname, kind, 1, n, MPI_DOUBLE, n, vec, "double/vector", 0, root, seed++);
            }
        }
}

/* Erroneous arguments under MPI_ERRORS_RETURN: their classes. */
static void errors(void)
{
    int size, x = 0, y[64];
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = topocoll_gather(&x, 1, MPI_INT, y, 1, MPI_INT, size, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ROOT, "gather with root %d: class %d", size, cls);
    e = topocoll_alltoall(&x, -1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COUNT, "alltoall with count -1: class %d", cls);
    e = topocoll_scatter(&x, 1, MPI_INT, y, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TYPE, "scatter with a null receive type: class %d", cls);
    e = topocoll_gather(&x, 1, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_NULL);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COMM, "gather on MPI_COMM_NULL: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_print_max = 20;
    topocoll_comm_attach(MPI_COMM_WORLD);
    MPI_Datatype vec;
    MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &vec); /* one double, extent of two: a hole */
    MPI_Datatype vecr;
    MPI_Type_create_resized(vec, 0, 2 * (MPI_Aint)sizeof(double), &vecr);
    MPI_Type_commit(&vecr);
    MPI_Type_free(&vec);
    suite(MPI_COMM_WORLD, "world", vecr);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(MPI_COMM_WORLD, &info);
    if (info.nnodes > 1 && info.local_size * info.nnodes == size && info.single_copy)
        CHECK(info.coll[TOPOCOLL_COLL_ALLTOALL].calls > 0,
              "several nodes: topocoll ran no alltoall (the slices')");
    if (info.nnodes > 1 && info.single_copy) /* (equal nodes or not) */
        CHECK(info.coll[TOPOCOLL_COLL_GATHER].calls > 0 &&
                  info.coll[TOPOCOLL_COLL_SCATTER].calls > 0,
              "several nodes: topocoll ran %llu gathers, %llu scatters (the collectors')",
              (unsigned long long)info.coll[TOPOCOLL_COLL_GATHER].calls,
              (unsigned long long)info.coll[TOPOCOLL_COLL_SCATTER].calls);
    if (info.nnodes == 1 && info.single_copy)
        CHECK(info.coll[TOPOCOLL_COLL_GATHER].calls > 0 &&
                  info.coll[TOPOCOLL_COLL_SCATTER].calls > 0 &&
                  info.coll[TOPOCOLL_COLL_ALLTOALL].calls > 0,
              "one node: topocoll ran %llu gathers, %llu scatters, %llu alltoalls",
              (unsigned long long)info.coll[TOPOCOLL_COLL_GATHER].calls,
              (unsigned long long)info.coll[TOPOCOLL_COLL_SCATTER].calls,
              (unsigned long long)info.coll[TOPOCOLL_COLL_ALLTOALL].calls);
    MPI_Comm dup, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    topocoll_comm_attach(dup);
    suite(dup, "dup", vecr);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - tc_rank, &rev);
    topocoll_comm_attach(rev);
    suite(rev, "reversed", vecr);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    errors();
    MPI_Type_free(&vecr);
    int f = tc_report("test_exchange");
    MPI_Finalize();
    return f != 0;
}
