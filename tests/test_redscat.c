/*
 * tests/test_redscat -- MPI_Reduce_scatter_block, MPI_Reduce_scatter and
 * their nonblocking forms, through the interposed MPI calls, against
 * values computed here: double and float sums, int max, MPI_DOUBLE_INT
 * minloc (a pair type with a gap), a non-commutative user op (the left
 * operand wins: the result is rank 0's block, so any other order shows);
 * blocks of 1 to 70001 elements, counts per rank ((r + 1) x b, a shuffle
 * with zero counts, and odd ranks' zero: a slice with nothing), MPI_IN_PLACE, MPI_COMM_WORLD, a dup
 * and a reversed split, blocking and nonblocking; a negative count must fail with MPI_ERR_COUNT.
 * Bytes of the receive buffer beyond the block must stay as they were.  The communicator's counters
 * say whether topocoll ran the calls (with "expect", on one node or on equal nodes, it must).
 *
 * Usage: test_redscat [expect] [quick]  (quick: blocks up to 1000 elements,
 * double sum and minloc only)
 */
#include <mpi.h>

#include "check.h"
#include "topocoll.h"

#include <stdlib.h>
#include <string.h>

static int wrank, quick;
static MPI_Op g_left; /* the user op: inout = in (non-commutative) */

enum { DSUM, FSUM, IMAX, MINLOC, LEFT, NTYP };
static const char *tname[NTYP] = { "double sum", "float sum", "int max", "double-int minloc",
                                   "user left" };
typedef struct {
    double v;
    int i;
} dint_t;

static void left_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

static size_t esize(int typ)
{
    return typ == DSUM ? sizeof(double) : typ == MINLOC ? sizeof(dint_t) : 4;
}
static MPI_Datatype dtype(int typ)
{
    return typ == DSUM     ? MPI_DOUBLE
           : typ == FSUM   ? MPI_FLOAT
           : typ == MINLOC ? MPI_DOUBLE_INT
                           : MPI_INT;
}
static MPI_Op optype(int typ)
{
    return typ == IMAX ? MPI_MAX : typ == MINLOC ? MPI_MINLOC : typ == LEFT ? g_left : MPI_SUM;
}

/* Element @i of rank @r's operand into @p. */
static void put(int typ, char *p, int r, size_t i)
{
    const int x = (int)((size_t)r * 31 + i * 17) % 1000;
    switch (typ) {
    case DSUM: *(double *)(void *)p = x * 0.5; break;
    case FSUM: *(float *)(void *)p = (float)(x % 64); break;
    case MINLOC:
        ((dint_t *)(void *)p)->v = x % 7;
        ((dint_t *)(void *)p)->i = r;
        break;
    default: *(int *)(void *)p = x; break;
    }
}

/* The expected element @i over @size ranks, compared with @p. */
static int same(int typ, const char *p, int size, size_t i)
{
    char e[sizeof(dint_t)], o[sizeof(dint_t)];
    put(typ, e, 0, i);
    for (int r = 1; r < size; r++) {
        put(typ, o, r, i);
        if (typ == DSUM) *(double *)(void *)e += *(double *)(void *)o;
        if (typ == FSUM) *(float *)(void *)e += *(float *)(void *)o;
        if (typ == IMAX && *(int *)(void *)o > *(int *)(void *)e) memcpy(e, o, 4);
        if (typ == MINLOC && ((dint_t *)(void *)o)->v < ((dint_t *)(void *)e)->v)
            memcpy(e, o, sizeof(dint_t));
    }
    if (typ == MINLOC) /* (the pair's padding is not data) */
        return ((const dint_t *)(const void *)p)->v == ((dint_t *)(void *)e)->v &&
               ((const dint_t *)(const void *)p)->i == ((dint_t *)(void *)e)->i;
    return memcmp(p, e, esize(typ)) == 0;
}

/* One call on @comm: @irregular (MPI_Reduce_scatter, rank r's count
 * (r + 1) x b, or with @shuffle 1 0 for every third and (size - r) x b,
 * with 2 0 for odd ranks) or
 * the block form (b each); @inplace; @nb: the nonblocking call. */
static void one(MPI_Comm comm, int typ, int irregular, int b, int shuffle, int inplace, int nb)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *cnt = malloc(sizeof(int) * (size_t)size);
    size_t total = 0, first = 0, es = esize(typ);
    for (int r = 0; r < size; r++) {
        cnt[r] = !irregular     ? b
                 : shuffle == 2 ? (r % 2 ? 0 : (r + 1) * b) /* a slice with no element */
                 : shuffle      ? (r % 3 == 1 ? 0 : (size - r) * b)
                                : (r + 1) * b;
        if (r < rank) first += (size_t)cnt[r];
        total += (size_t)cnt[r];
    }
    const size_t mine = (size_t)cnt[rank], guard = 8;
    char *in = malloc(total * es + 1), *out = malloc((inplace ? total : mine + guard) * es + 1);
    for (size_t i = 0; i < total; i++) put(typ, (inplace ? out : in) + i * es, rank, i);
    if (!inplace) memset(out, 0x5a, (mine + guard) * es);
    const void *sb = inplace ? MPI_IN_PLACE : in;
    MPI_Request rq = MPI_REQUEST_NULL;
    int rc;
    if (irregular)
        rc = nb ? MPI_Ireduce_scatter(sb, out, cnt, dtype(typ), optype(typ), comm, &rq)
                : MPI_Reduce_scatter(sb, out, cnt, dtype(typ), optype(typ), comm);
    else
        rc = nb ? MPI_Ireduce_scatter_block(sb, out, b, dtype(typ), optype(typ), comm, &rq)
                : MPI_Reduce_scatter_block(sb, out, b, dtype(typ), optype(typ), comm);
    if (nb && rc == MPI_SUCCESS) rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "%s %s b=%d: rc %d", irregular ? "Reduce_scatter" : "block",
          tname[typ], b, rc);
    int bad = 0;
    for (size_t i = 0; i < mine && !bad; i++)
        if (!same(typ, out + i * es, size, first + i)) bad = 1 + (int)i;
    CHECK(!bad, "%s %s b=%d shuffle=%d inplace=%d nb=%d: element %d wrong",
          irregular ? "Reduce_scatter" : "block", tname[typ], b, shuffle, inplace, nb, bad - 1);
    for (size_t i = mine * es; !inplace && i < (mine + guard) * es; i++)
        if ((unsigned char)out[i] != 0x5a) bad = 1;
    CHECK(!bad, "%s b=%d: bytes beyond the block written", tname[typ], b);
    free(in);
    free(out);
    free(cnt);
}

/* A negative count fails with MPI_ERR_COUNT, under MPI_ERRORS_RETURN. */
static void errors(MPI_Comm comm)
{
    int size, cls = 0;
    double x[8] = { 0 };
    MPI_Comm_size(comm, &size);
    int *cnt = calloc((size_t)size, sizeof(int));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rc = MPI_Reduce_scatter_block(x, x + 4, -1, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COUNT, "block form, count -1: class %d", cls);
    cnt[size - 1] = -2;
    rc = MPI_Reduce_scatter(x, x + 4, cnt, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COUNT, "counts with -2: class %d", cls);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    free(cnt);
}

static void cases(MPI_Comm comm)
{
    const int bs[] = { 1, 3, 1000, 70001 };
    for (int typ = 0; typ < NTYP; typ++)
        for (size_t bi = 0; bi < sizeof(bs) / sizeof(bs[0]) - (size_t)quick; bi++)
            for (int nb = 0; nb < 2 && !(quick && typ != DSUM && typ != MINLOC); nb++) {
                one(comm, typ, 0, bs[bi], 0, 0, nb);
                one(comm, typ, 0, bs[bi], 0, 1, nb);
                one(comm, typ, 1, bs[bi], (int)bi & 1, 0, nb);
                one(comm, typ, 1, bs[bi], 1, (int)bi & 1, nb);
                one(comm, typ, 1, bs[bi], 2, 0, nb); /* (not in place: MPICH's own aborts) */
            }
    one(comm, DSUM, 0, 0, 0, 0, 0); /* count 0: nothing to do */
}

static unsigned long long ran(MPI_Comm comm)
{
    topocoll_comm_info_t in = TOPOCOLL_COMM_INFO_INIT;
    if (topocoll_comm_query(comm, &in) != MPI_SUCCESS) return 0;
    return in.coll[TOPOCOLL_COLL_REDUCE_SCATTER_BLOCK].calls +
           in.coll[TOPOCOLL_COLL_REDUCE_SCATTER].calls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    tc_rank = wrank;
    tc_print_max = 20;
    MPI_Op_create(left_fn, 0, &g_left);
    int expect = 0;
    for (int a = 1; a < argc; a++) {
        expect |= strcmp(argv[a], "expect") == 0;
        quick |= strcmp(argv[a], "quick") == 0;
    }
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &split); /* reversed order */
    topocoll_comm_attach(dup);
    cases(MPI_COMM_WORLD);
    cases(dup);
    cases(split);
    errors(dup);
    if (expect) {
        topocoll_comm_info_t in = TOPOCOLL_COMM_INFO_INIT;
        topocoll_comm_query(dup, &in);
        if (in.single_copy)
            CHECK(ran(dup) > 0, "topocoll ran the reduce-scatters (%d nodes)", in.nnodes);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Op_free(&g_left);
    int f = tc_report("test_redscat");
    MPI_Finalize();
    return f != 0;
}
