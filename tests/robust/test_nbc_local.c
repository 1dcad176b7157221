/*
 * tests/robust/test_nbc_local -- a nonblocking collective's start is local
 * (MPI 4.0 section 6.12): programs that the native MPI completes must not
 * deadlock under topocoll.  Each scenario orders calls so that a start
 * waiting for other ranks (a context built with a blocking PMPI_Allreduce,
 * a slice communicator split inside the call) hangs the job:
 *
 *  1. the first nonblocking calls on two fresh MPI_Comm_dups, started in
 *     opposite orders on even and odd ranks (512 KiB Iallreduce, Iallgather);
 *  2. rank 0: Iallreduce, then Send to 1; rank 1: Recv from 0, then
 *     Iallreduce;
 *  3. the same crossed starts on communicators whose contexts are built;
 *  4. a storm: random nonblocking collectives on 4 communicators (a user
 *     op among them), point-to-point pairs, at most WINDOW outstanding,
 *     completed by every completion call, with rank-dependent delays (in
 *     the manner of MPICH's coll/nonblocking3, written anew here);
 *  5. with a progress thread, rank 0 blocks in a collective that goes
 *     native while its nonblocking one is outstanding, which the others
 *     wait for first.
 *
 * Every result is checked.  alarm() ends a hung run (the test then fails
 * on its missing summary line, not on ctest's timeout).
 */
#include <mpi.h>

#include "../check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* @n ints of rank @r's contribution: r + i */
static void fill(int *b, int n, int r)
{
    for (int i = 0; i < n; i++) b[i] = r + i;
}

/* the sum over ranks of r + i */
static int sum_at(int i) { return size * (size - 1) / 2 + size * i; }

static void check_sum(const int *b, int n, const char *what)
{
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) bad = b[i] != sum_at(i);
    CHECK(!bad, "%s: wrong sum", what);
}

static void check_gather(const int *b, int n, const char *what)
{
    int bad = 0;
    for (int r = 0; r < size && !bad; r++)
        for (int i = 0; i < n && !bad; i++) bad = b[r * n + i] != r + i;
    CHECK(!bad, "%s: wrong block", what);
}

/* 1 and 3: Iallreduce (and Iallgather) on two communicators, started in
 * opposite orders on even and odd ranks. */
static void crossed(MPI_Comm a, MPI_Comm b, int n, const char *what)
{
    int *in = malloc(sizeof(int) * (size_t)n), *o1 = malloc(sizeof(int) * (size_t)n);
    int *o2 = malloc(sizeof(int) * (size_t)n);
    int *g1 = malloc(sizeof(int) * 64 * (size_t)size),
        *g2 = malloc(sizeof(int) * 64 * (size_t)size);
    MPI_Comm first = rank % 2 ? b : a, second = rank % 2 ? a : b;
    MPI_Request r[4];
    MPI_Status st[4]; /* (MPICH's annotations reject MPI_STATUSES_IGNORE under -Werror) */
    fill(in, n, rank);
    MPI_Iallreduce(in, rank % 2 ? o2 : o1, n, MPI_INT, MPI_SUM, first, &r[0]);
    MPI_Iallreduce(in, rank % 2 ? o1 : o2, n, MPI_INT, MPI_SUM, second, &r[1]);
    MPI_Iallgather(in, 64, MPI_INT, rank % 2 ? g2 : g1, 64, MPI_INT, first, &r[2]);
    MPI_Iallgather(in, 64, MPI_INT, rank % 2 ? g1 : g2, 64, MPI_INT, second, &r[3]);
    MPI_Waitall(4, r, st);
    check_sum(o1, n, what);
    check_sum(o2, n, what);
    check_gather(g1, 64, what);
    check_gather(g2, 64, what);
    free(in);
    free(o1);
    free(o2);
    free(g1);
    free(g2);
}

/* 2: a start followed by a point-to-point message the other rank waits
 * for before its own start. */
static void then_send(MPI_Comm comm, int n)
{
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n), tok = 7;
    MPI_Request r = MPI_REQUEST_NULL;
    fill(in, n, rank);
    if (rank == 1) MPI_Recv(&tok, 1, MPI_INT, 0, 11, comm, MPI_STATUS_IGNORE);
    MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, comm, &r);
    if (rank == 0) MPI_Send(&tok, 1, MPI_INT, 1, 11, comm);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check_sum(out, n, "Iallreduce then Send");
    CHECK(tok == 7, "token");
    free(in);
    free(out);
}

/* ---- 4: the storm ---------------------------------------------------------- */

enum { NCOMMS = 4, WINDOW = 8, OPS = 600 };

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

typedef struct op {
    int kind, n, root;
    MPI_Comm comm;
    int *in, *out;
} op_t;

static unsigned next(unsigned *x)
{
    *x = *x * 1103515245u + 12345u;
    return *x >> 8;
}

/* Start a random operation (the same kind, size and root on every rank:
 * @x is the same sequence everywhere). */
static void start(op_t *o, MPI_Comm comm, unsigned *x, MPI_Request *r)
{
    static const int sizes[] = { 10, 1000, 70001 };
    o->kind = (int)(next(x) % 11);
    o->n = sizes[next(x) % 3];
    o->root = (int)(next(x) % (unsigned)size);
    o->comm = comm;
    o->in = malloc(sizeof(int) * (size_t)o->n * (size_t)size);
    o->out = malloc(sizeof(int) * (size_t)o->n * (size_t)size);
    memset(o->out, 0xff, sizeof(int) * (size_t)o->n * (size_t)size);
    fill(o->in, o->n * size, rank);
    MPI_Op uop;
    switch (o->kind) {
    case 0: MPI_Iallreduce(o->in, o->out, o->n, MPI_INT, MPI_SUM, comm, r); break;
    case 1:
        MPI_Op_create(user_sum, 1, &uop); /* freed before the wait, as MPI allows */
        MPI_Ireduce(o->in, o->out, o->n, MPI_INT, uop, o->root, comm, r);
        MPI_Op_free(&uop);
        break;
    case 2: MPI_Ibcast(rank == o->root ? o->in : o->out, o->n, MPI_INT, o->root, comm, r); break;
    case 3: MPI_Ibarrier(comm, r); break;
    case 4: MPI_Iallgather(o->in, o->n, MPI_INT, o->out, o->n, MPI_INT, comm, r); break;
    case 5: MPI_Igather(o->in, o->n, MPI_INT, o->out, o->n, MPI_INT, o->root, comm, r); break;
    case 6: MPI_Iscatter(o->in, o->n, MPI_INT, o->out, o->n, MPI_INT, o->root, comm, r); break;
    case 7: MPI_Ialltoall(o->in, o->n, MPI_INT, o->out, o->n, MPI_INT, comm, r); break;
    case 8: MPI_Iscan(o->in, o->out, o->n, MPI_INT, MPI_SUM, comm, r); break;
    case 9: MPI_Ireduce(o->in, o->out, o->n, MPI_INT, MPI_SUM, o->root, comm, r); break;
    default: /* a point-to-point pair: even ranks send to the next odd one */
        if (rank % 2 == 0 && rank + 1 < size)
            MPI_Isend(o->in, o->n, MPI_INT, rank + 1, 5, comm, r);
        else if (rank % 2)
            MPI_Irecv(o->out, o->n, MPI_INT, rank - 1, 5, comm, r);
        else
            *r = MPI_REQUEST_NULL;
    }
}

/* Rank r's element i of the whole input: r + i. */
static int scan_at(int i) { return rank * (rank + 1) / 2 + (rank + 1) * i; }

static void verify(op_t *o)
{
    int n = o->n, bad = 0, me = rank;
    switch (o->kind) {
    case 0: check_sum(o->out, n, "storm Iallreduce"); break;
    case 1:
    case 9:
        if (rank == o->root) check_sum(o->out, n, "storm Ireduce");
        break;
    case 2:
        if (rank != o->root)
            for (int i = 0; i < n && !bad; i++) bad = o->out[i] != o->root + i;
        CHECK(!bad, "storm Ibcast");
        break;
    case 4: check_gather(o->out, n, "storm Iallgather"); break;
    case 5:
        if (rank == o->root) check_gather(o->out, n, "storm Igather");
        break;
    case 6:
        for (int i = 0; i < n && !bad; i++) bad = o->out[i] != o->root + me * n + i;
        CHECK(!bad, "storm Iscatter");
        break;
    case 7:
        for (int r = 0; r < size && !bad; r++)
            for (int i = 0; i < n && !bad; i++) bad = o->out[r * n + i] != r + me * n + i;
        CHECK(!bad, "storm Ialltoall");
        break;
    case 8:
        for (int i = 0; i < n && !bad; i++) bad = o->out[i] != scan_at(i);
        CHECK(!bad, "storm Iscan");
        break;
    case 10:
        if (rank % 2)
            for (int i = 0; i < n && !bad; i++) bad = o->out[i] != rank - 1 + i;
        CHECK(!bad, "storm point-to-point");
        break;
    default: break;
    }
    free(o->in);
    free(o->out);
    o->in = o->out = NULL;
}

/* Complete at least one outstanding operation of @r[WINDOW] by a
 * completion call chosen at random (this rank's own choice). */
static void complete_some(MPI_Request *r, op_t *o, unsigned *mine)
{
    int idx[WINDOW], n = 0, i, flag = 0;
    MPI_Status st[WINDOW];
    switch (next(mine) % 4) {
    case 0:
        MPI_Waitany(WINDOW, r, &i, MPI_STATUS_IGNORE);
        if (i != MPI_UNDEFINED) idx[n++] = i;
        break;
    case 1: MPI_Waitsome(WINDOW, r, &n, idx, st); break;
    case 2:
        do MPI_Testany(WINDOW, r, &i, &flag, MPI_STATUS_IGNORE);
        while (!flag);
        if (i != MPI_UNDEFINED) idx[n++] = i;
        break;
    default:
        for (i = 0; i < WINDOW; i++)
            if (r[i] != MPI_REQUEST_NULL || o[i].in) {
                MPI_Wait(&r[i], MPI_STATUS_IGNORE);
                idx[n++] = i;
                break;
            }
    }
    for (int k = 0; k < n; k++)
        if (o[idx[k]].in) verify(&o[idx[k]]);
}

static void storm(void)
{
    MPI_Comm comms[NCOMMS];
    MPI_Request r[WINDOW];
    op_t o[WINDOW];
    unsigned shared = 12345, mine = 777u + (unsigned)rank;
    memset(o, 0, sizeof(o));
    for (int c = 0; c < NCOMMS; c++) MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]);
    for (int w = 0; w < WINDOW; w++) r[w] = MPI_REQUEST_NULL;
    for (int k = 0; k < OPS; k++) {
        int w = k % WINDOW;
        if (o[w].in) { /* its slot's previous operation first */
            MPI_Wait(&r[w], MPI_STATUS_IGNORE);
            verify(&o[w]);
        }
        start(&o[w], comms[next(&shared) % NCOMMS], &shared, &r[w]);
        if (next(&mine) % 97 == 0) usleep(2000u * (unsigned)rank);
        if (next(&mine) % 3 == 0) complete_some(r, o, &mine);
    }
    MPI_Status st[WINDOW];
    MPI_Waitall(WINDOW, r, st);
    for (int w = 0; w < WINDOW; w++)
        if (o[w].in) verify(&o[w]);
    for (int c = 0; c < NCOMMS; c++) MPI_Comm_free(&comms[c]);
}

/* 5. Rank 0 blocks in a collective that goes native (on a fresh
 * communicator, not built: TOPOCOLL_COMM_LAZY) while its nonblocking one on
 * built communicator @a is outstanding; the others wait for that one
 * before they call the native one.  The native MPI progresses its own
 * nonblocking collectives inside any call; topocoll's progress there only
 * with a progress thread (TOPOCOLL_COMM_CORES > 0), which the run must
 * set: docs/limitations.md.  (Running the native call as its nonblocking
 * form while topocoll progresses would match nothing: the other ranks'
 * is blocking, MPI 4.0 section 6.12.) */
static void native_while_outstanding(MPI_Comm a)
{
    const char *lz = getenv("TOPOCOLL_COMM_LAZY"), *cc = getenv("TOPOCOLL_COMM_CORES");
    if (!lz || atoi(lz) <= 0 || !cc || atoi(cc) <= 0) return;
    enum { N = 1000 };
    static int in[N], out[N];
    for (int rep = 0; rep < 3; rep++) {
        MPI_Comm b;
        MPI_Comm_dup(MPI_COMM_WORLD, &b);
        int x = rank, y = -1;
        MPI_Request r;
        fill(in, N, rank);
        MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, a, &r);
        if (rank == 0) {
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, b);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, b);
        }
        check_sum(out, N, "Iallreduce beside a native Allreduce");
        CHECK(y == size * (size - 1) / 2, "native Allreduce beside an Iallreduce: %d", y);
        MPI_Comm_free(&b);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    tc_print_max = 20;
    alarm(240); /* a deadlock ends the run (SIGALRM) instead of hanging ctest */
    MPI_Comm a, b;
    const int big = 128 << 10; /* 512 KiB of ints: past TOPOCOLL_COMM_LAZY_MIN (the tests') */
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    crossed(a, b, big, "fresh communicators, crossed");
    crossed(a, b, 1000, "fresh communicators, crossed, small");
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    if (size >= 2) {
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        then_send(a, big);
        MPI_Comm_free(&a);
    }
    /* built contexts: a blocking collective of 512 KiB on each first */
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    {
        int *in = malloc(sizeof(int) * big), *out = malloc(sizeof(int) * big);
        fill(in, big, rank);
        MPI_Allreduce(in, out, big, MPI_INT, MPI_SUM, a);
        MPI_Allreduce(in, out, big, MPI_INT, MPI_SUM, b);
        check_sum(out, big, "blocking Allreduce");
        free(in);
        free(out);
    }
    crossed(a, b, big, "built communicators, crossed");
    native_while_outstanding(a);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    storm();
    int f = tc_report("test_nbc_local");
    MPI_Finalize();
    return f != 0;
}
