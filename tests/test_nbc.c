/*
 * test_nbc -- the nonblocking collectives (MPI_Ibcast, MPI_Ibarrier,
 * MPI_Ireduce, MPI_Iallreduce, MPI_Iallgather, MPI_Iscan through
 * libtopocoll_pmpi) against the native blocking results (PMPI_*), with
 * several operations outstanding on one communicator and on several,
 * completed by every completion call mixed with native point-to-point
 * requests, MPI_Request_free, blocking collectives behind outstanding
 * ones, non-contiguous datatypes, and a pattern that deadlocks unless
 * waiting on a native request progresses topocoll's operations.
 * The counters of topocoll_comm_query prove topocoll (not the native MPI)
 * ran them.  Exit status: 0 when every check passed.
 */
#include "topocoll.h"
#include "coll/model.h" /* the split tree's S, to know what may complete unattended */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

/* processes on this rank's node (topocoll's view of MPI_COMM_WORLD) */
static int after_ls(void)
{
    topocoll_comm_info_t i = TOPOCOLL_COMM_INFO_INIT;
    return topocoll_comm_query(MPI_COMM_WORLD, &i) == MPI_SUCCESS && i.enabled ? i.local_size
                                                                               : size;
}

/* A non-commutative op (2x2 integer matrix product, row-major): the
 * result shows any departure from rank order. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3] };
        for (int i = 0; i < 4; i++) b[i] = r[i] & 0xffff;
    }
}

/* Complete @n requests in one of several ways, chosen by @how. */
static void complete(int how, int n, MPI_Request *r)
{
    int done = 0, idx[64], oc, flag, i;
    MPI_Status st[64]; /* (MPICH's MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
    switch (how % 6) {
    case 0: { /* Waitall in reverse order */
        MPI_Request rev[64];
        for (i = 0; i < n; i++) rev[i] = r[n - 1 - i];
        CHECK(MPI_Waitall(n, rev, st) == MPI_SUCCESS, "Waitall");
        for (i = 0; i < n; i++) r[i] = rev[n - 1 - i];
        break;
    }
    case 1: /* Waitany until all done */
        while (done < n) {
            CHECK(MPI_Waitany(n, r, &i, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Waitany");
            if (i == MPI_UNDEFINED) break;
            done++;
        }
        break;
    case 2: /* Testall polling */
        do CHECK(MPI_Testall(n, r, &flag, st) == MPI_SUCCESS, "Testall");
        while (!flag);
        break;
    case 3: /* Waitsome */
        while (done < n) {
            CHECK(MPI_Waitsome(n, r, &oc, idx, st) == MPI_SUCCESS, "Waitsome");
            if (oc == MPI_UNDEFINED) break;
            done += oc;
        }
        break;
    case 4: /* Wait each, last first */
        for (i = n - 1; i >= 0; i--)
            CHECK(MPI_Wait(&r[i], MPI_STATUS_IGNORE) == MPI_SUCCESS, "Wait");
        break;
    case 5: /* Test each, then Testany */
        for (i = 0; i < n; i++) {
            do MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE);
            while (!flag);
        }
        MPI_Testany(n, r, &i, &flag, MPI_STATUS_IGNORE);
        CHECK(flag && i == MPI_UNDEFINED, "Testany on completed requests");
        break;
    }
    for (i = 0; i < n; i++) CHECK(r[i] == MPI_REQUEST_NULL, "request %d not freed", i);
}

/* One round on @comm: every nonblocking collective at @count elements,
 * outstanding together with a native Isend/Irecv ring exchange. */
static void round_on(MPI_Comm comm, int count, int root, int how, int in_place)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t c = (size_t)count, cc = c ? c : 1;
    int *bc = malloc(cc * sizeof(int)), *bc_ref = malloc(cc * sizeof(int));
    double *rin = malloc(cc * sizeof(double)), *rout = calloc(cc, sizeof(double)),
           *rref = calloc(cc, sizeof(double));
    int *ain = malloc(cc * sizeof(int)), *aout = malloc(cc * sizeof(int)),
        *aref = malloc(cc * sizeof(int));
    int *gin = malloc(cc * sizeof(int)), *gout = malloc(cc * (size_t)n * sizeof(int)),
        *gref = malloc(cc * (size_t)n * sizeof(int));
    long *sin = malloc(cc * sizeof(long)), *sout = malloc(cc * sizeof(long)),
         *sref = malloc(cc * sizeof(long));
    for (size_t i = 0; i < c; i++) {
        bc[i] = bc_ref[i] = me == root ? (int)(i * 7 + 3 + how) : -1;
        rin[i] = (double)((me + 1) * (int)(i % 1000)) * 0.5;
        ain[i] = aout[i] = (int)(i % 97) + me * 3;
        gin[i] = me * 1000003 + (int)i;
        sin[i] = sout[i] = (long)(i % 13) * (me + 1) - 5;
    }
    int sendv = me * 11, recvv = -1;
    MPI_Request r[8];
    int k = 0;
    MPI_Ibcast(bc, count, MPI_INT, root, comm, &r[k++]);
    MPI_Ireduce(rin, rout, count, MPI_DOUBLE, MPI_MAX, root, comm, &r[k++]);
    MPI_Iallreduce(in_place ? MPI_IN_PLACE : ain, aout, count, MPI_INT, MPI_SUM, comm, &r[k++]);
    MPI_Irecv(&recvv, 1, MPI_INT, (me + n - 1) % n, 42, comm, &r[k++]);
    MPI_Iallgather(gin, count, MPI_INT, gout, count, MPI_INT, comm, &r[k++]);
    MPI_Iscan(in_place ? MPI_IN_PLACE : sin, sout, count, MPI_LONG, MPI_SUM, comm, &r[k++]);
    MPI_Ibarrier(comm, &r[k++]);
    MPI_Isend(&sendv, 1, MPI_INT, (me + 1) % n, 42, comm, &r[k++]);
    complete(how, k, r);

    /* references, blocking and native */
    PMPI_Bcast(bc_ref, count, MPI_INT, root, comm);
    PMPI_Reduce(rin, rref, count, MPI_DOUBLE, MPI_MAX, root, comm);
    PMPI_Allreduce(ain, aref, count, MPI_INT, MPI_SUM, comm);
    PMPI_Allgather(gin, count, MPI_INT, gref, count, MPI_INT, comm);
    PMPI_Scan(sin, sref, count, MPI_LONG, MPI_SUM, comm);
    CHECK(recvv == ((me + n - 1) % n) * 11, "native Irecv got %d", recvv);
    CHECK(!memcmp(bc, bc_ref, c * sizeof(int)), "Ibcast count %d root %d", count, root);
    if (me == root)
        CHECK(!memcmp(rout, rref, c * sizeof(double)), "Ireduce count %d root %d", count, root);
    CHECK(!memcmp(aout, aref, c * sizeof(int)), "Iallreduce count %d in_place %d", count, in_place);
    CHECK(!memcmp(gout, gref, c * (size_t)n * sizeof(int)), "Iallgather count %d", count);
    CHECK(!memcmp(sout, sref, c * sizeof(long)), "Iscan count %d in_place %d", count, in_place);
    free(bc);
    free(bc_ref);
    free(rin);
    free(rout);
    free(rref);
    free(ain);
    free(aout);
    free(aref);
    free(gin);
    free(gout);
    free(gref);
    free(sin);
    free(sout);
    free(sref);
}

/* 4c. Nonblocking calls queued while the cross-node tuner measures
 * (TOPOCOLL_XTUNE=1 on 3 nodes or more; a no-op check elsewhere): two
 * Ibcasts of 16 KiB outstanding, the second queued behind the first, then
 * the blocking Bcast that begins the tuner's run of topocoll's
 * alternative (the class's third run of 64 calls, after topocoll's
 * default and the native: coll/xtune).  Rank 0 drives the first to its
 * end, so its engine starts the second before that Bcast; the others
 * start it inside it.  Every rank must run each with the same algorithm
 * (the tuner's choice travels with the call: tc_coll_args_t.alt), or the
 * leaders wait for each other for ever. */
static void queued_while_measuring(void)
{
    enum { N = 4096, RUN = 64 }; /* ints: 16 KiB, TOPOCOLL_BCAST_OWNERS_MIN */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* (a fresh tuner) */
    int *x1 = malloc(N * sizeof(int)), *x2 = malloc(N * sizeof(int)), *y = malloc(N * sizeof(int));
    for (int k = 0; k < 2 * RUN; k++) MPI_Bcast(y, N, MPI_INT, k % size, comm);
    for (int i = 0; i < N; i++) {
        x1[i] = rank == 0 ? i : -1;
        x2[i] = rank == size - 1 ? 3 * i : -1;
        y[i] = rank == 1 % size ? 5 * i : -1;
    }
    MPI_Request r[2];
    MPI_Ibcast(x1, N, MPI_INT, 0, comm, &r[0]);
    MPI_Ibcast(x2, N, MPI_INT, size - 1, comm, &r[1]);
    if (rank == 0) {
        int flag = 0;
        while (!flag) MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(y, N, MPI_INT, 1 % size, comm);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += x1[i] != i || x2[i] != 3 * i || y[i] != 5 * i;
    CHECK(!bad, "Ibcasts queued while the tuner measures: %d wrong", bad);
    free(x1);
    free(x2);
    free(y);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tc_rank = rank;
    tc_print_max = 10;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    topocoll_comm_attach(MPI_COMM_WORLD);
    topocoll_comm_info_t before = TOPOCOLL_COMM_INFO_INIT, after = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(MPI_COMM_WORLD, &before);

    /* 1. every collective, several outstanding, every completion call */
    const int counts[] = { 0, 1, 7, 1000, 4099, 65536 + 3, 262147 };
    const int ncounts = (int)(sizeof(counts) / sizeof(counts[0]));
    MPI_Comm comms[3] = { MPI_COMM_WORLD, dup, rev };
    int how = 0, world_bcasts = 0;
    for (int ci = 0; ci < 3; ci++)
        for (int i = 0; i < ncounts; i++, how++) {
            round_on(comms[ci], counts[i], (i + ci) % size, how, i & 1);
            if (ci == 0 && counts[i] > 0 && size > 1) world_bcasts++;
        }

    /* 2. two communicators outstanding, completed in opposite orders on
     *    even and odd ranks */
    {
        enum { N = 300000 };
        int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
        for (int i = 0; i < N; i++) {
            a[i] = rank == size - 1 ? i : 0;
            b[i] = rank + i;
        }
        MPI_Request ra, rb;
        MPI_Ibcast(a, N, MPI_INT, size - 1, dup, &ra);
        MPI_Iallreduce(MPI_IN_PLACE, b, N, MPI_INT, MPI_SUM, rev, &rb);
        if (rank % 2) {
            MPI_Wait(&rb, MPI_STATUS_IGNORE);
            MPI_Wait(&ra, MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&ra, MPI_STATUS_IGNORE);
            MPI_Wait(&rb, MPI_STATUS_IGNORE);
        }
        int bad = 0;
        for (int i = 0; i < N; i++) bad += a[i] != i || b[i] != size * (size - 1) / 2 + size * i;
        CHECK(!bad, "two communicators: %d wrong elements", bad);
        free(a);
        free(b);
    }

    /* 3. MPI_Request_free on a running Iallreduce, then blocking collectives
     *    on the same communicator (they come after it).  MPI makes freeing
     *    a nonblocking collective's request erroneous (MPI 3.1, 5.12; MPICH
     *    4.0 refuses it); topocoll's generalized requests allow it, so it
     *    is tested where the request is topocoll's (size > 1). */
    if (size > 1) {
        int v[5] = { rank, rank, rank, rank, rank }, w = rank, wsum;
        MPI_Request r;
        MPI_Iallreduce(MPI_IN_PLACE, v, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL, "Request_free");
        MPI_Allreduce(&w, &wsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(v[4] == size * (size - 1) / 2 && wsum == v[0],
              "freed Iallreduce %d, then Allreduce %d", v[4], wsum);
    }

    /* 4. a blocking Bcast behind an outstanding Ibcast on one communicator */
    {
        int x[3000], y[3000];
        for (int i = 0; i < 3000; i++) {
            x[i] = rank == 0 ? i : -1;
            y[i] = rank == size - 1 ? 2 * i : -1;
        }
        MPI_Request r;
        MPI_Ibcast(x, 3000, MPI_INT, 0, MPI_COMM_WORLD, &r);
        MPI_Bcast(y, 3000, MPI_INT, size - 1, MPI_COMM_WORLD);
        int flag = 0;
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        if (!flag) MPI_Wait(&r, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < 3000; i++) bad += x[i] != i || y[i] != 2 * i;
        CHECK(!bad, "Bcast behind Ibcast: %d wrong", bad);
        world_bcasts += size > 1 ? 2 : 0;
    }

    /* 4b. MPI_Comm_free with an operation outstanding: it completes (the
     *     communicator goes once its operations are done), then the
     *     request is waited for */
    {
        MPI_Comm tmp;
        MPI_Comm_dup(MPI_COMM_WORLD, &tmp);
        /* built by a blocking call first: a nonblocking start never builds,
         * and natively Open MPI 4.1.4's libnbc crashes on this program
         * (mca_pml_ob1_isend on the freed communicator, np=5) */
        MPI_Barrier(tmp);
        enum { N = 200000 };
        int *x = malloc(N * sizeof(int)), bad = 0;
        for (int i = 0; i < N; i++) x[i] = rank == 0 ? i ^ 0x55 : 0;
        MPI_Request r;
        MPI_Ibcast(x, N, MPI_INT, 0, tmp, &r);
        MPI_Comm_free(&tmp);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) bad += x[i] != (i ^ 0x55);
        CHECK(!bad && tmp == MPI_COMM_NULL, "Ibcast on a freed communicator: %d wrong", bad);
        free(x);
    }

    queued_while_measuring(); /* 4c */

    /* 5. non-contiguous datatype, freed right after the call */
    {
        MPI_Datatype vec;
        MPI_Type_vector(500, 1, 3, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int buf[1500], i, bad = 0;
        for (i = 0; i < 1500; i++) buf[i] = rank == 1 % size ? i : -7;
        MPI_Request r;
        MPI_Ibcast(buf, 1, vec, 1 % size, MPI_COMM_WORLD, &r);
        MPI_Type_free(&vec);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (i = 0; i < 1500; i++) bad += buf[i] != (i % 3 == 0 || rank == 1 % size ? i : -7);
        CHECK(!bad, "vector Ibcast: %d wrong", bad);
        world_bcasts += size > 1;
    }

    /* 6. progress while waiting on a native request: rank 0 waits for a
     *    message that rank 1 sends only after its Ibcast completed */
    if (size > 1) {
        enum { N = 1 << 20 };
        char *big = malloc(N);
        memset(big, rank == 0 ? 'x' : 0, N);
        MPI_Request rb, rr;
        int token = 0;
        MPI_Ibcast(big, N, MPI_CHAR, 0, MPI_COMM_WORLD, &rb);
        if (rank == 0) {
            MPI_Irecv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &rr);
            MPI_Wait(&rr, MPI_STATUS_IGNORE);
            MPI_Wait(&rb, MPI_STATUS_IGNORE);
            CHECK(token == 99, "token %d", token);
        } else {
            MPI_Wait(&rb, MPI_STATUS_IGNORE);
            if (rank == 1) {
                token = 99;
                MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
            }
        }
        int bad = 0;
        for (int i = 0; i < N; i++) bad += big[i] != 'x';
        CHECK(!bad, "progress-dependent Ibcast: %d wrong", bad);
        free(big);
        world_bcasts++;
    }

    /* 7. a non-commutative user op in Iscan: rank order kept */
    {
        MPI_Op mm;
        MPI_Op_create(matmul, 0, &mm);
        MPI_Datatype m4;
        MPI_Type_contiguous(4, MPI_INT, &m4);
        MPI_Type_commit(&m4);
        int in[8], out[8], all[64 * 8];
        for (int k = 0; k < 2; k++) {
            in[4 * k] = 1 + rank;
            in[4 * k + 1] = k + 1;
            in[4 * k + 2] = rank % 3;
            in[4 * k + 3] = 1;
        }
        MPI_Request r;
        MPI_Iscan(in, out, 2, m4, mm, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (size <= 64) {
            PMPI_Allgather(in, 8, MPI_INT, all, 8, MPI_INT, MPI_COMM_WORLD);
            int ref[8];
            memcpy(ref, all, sizeof(ref));
            for (int q = 1; q <= rank; q++) { /* ref = ref * in_q, in rank order */
                int len = 2, tmp[8];
                memcpy(tmp, all + 8 * q, sizeof(tmp));
                matmul(ref, tmp, &len, NULL);
                memcpy(ref, tmp, sizeof(ref));
            }
            CHECK(!memcmp(ref, out, sizeof(ref)), "non-commutative Iscan");
        }
        MPI_Op_free(&mm);
        MPI_Type_free(&m4);
    }

    /* 8. errors: an invalid root comes back as MPI_ERR_ROOT */
    {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int x = 1, y, cls = -1;
        MPI_Request r = MPI_REQUEST_NULL;
        int rc = MPI_Ireduce(&x, &y, 1, MPI_INT, MPI_SUM, size + 3, MPI_COMM_WORLD, &r);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_ROOT, "Ireduce invalid root: class %d", cls);
        rc = MPI_Iallreduce(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_COUNT, "Iallreduce negative count: class %d", cls);
    }

    /* 9. progress threads (TOPOCOLL_COMM_CORES > 0): the operations
     *    complete while every process computes and calls nothing; the
     *    native PMPI_Test, which cannot progress them, sees them done */
    const char *cc = getenv("TOPOCOLL_COMM_CORES");
    if (cc && atoi(cc) > 0) {
        CHECK(topocoll_progress_core() >= 0, "no progress thread running");
        enum { N = 1 << 18 };
        int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
        for (int i = 0; i < N; i++) {
            a[i] = rank + i;
            b[i] = rank == 0 ? i : -1;
        }
        MPI_Request r[2];
        MPI_Status st[2];
        int flag = 0, bflag = 0;
        /* Under the split tree (TOPOCOLL_NBC_ALG=split-tree, the default with
         * communication cores) the levels <= S belong to the application
         * (the split tree's Iallreduce: a Reduce to 0, then a Bcast, over
         * the same levels).  A rank whose steps are all above S completes
         * unattended; a rank that receives the Ibcast at a level <= S
         * cannot (the root starts last, so nothing has arrived while the
         * others were in MPI_Ibcast). */
        const char *alg = getenv("TOPOCOLL_NBC_ALG"), *ss = getenv("TOPOCOLL_SPLIT_TREE_S");
        int split = !alg || strcmp(alg, "hier") != 0, minlevel, h = tc_st_height(size);
        int S = ss ? atoi(ss) : tc_st_best_s(after_ls(), after_ls() + atoi(cc), 0);
        if (S > h) S = h;
        int lr = rank ? __builtin_ctz((unsigned)rank) + 1 : h + 1; /* receive level (root 0) */
        minlevel = rank ? lr : 1 << 20;
        for (int i = 1; i < lr && i < 31; i++)
            if (rank + (1 << (i - 1)) < size) {
                minlevel = i;
                break;
            } /* lowest send level */
        int all_comm = !split || minlevel > S, recv_app = split && rank != 0 && lr <= S;
        volatile double x = 0;
        double t0 = MPI_Wtime();
        MPI_Iallreduce(MPI_IN_PLACE, a, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
        while (all_comm && !flag && MPI_Wtime() - t0 < 5.0) {
            for (int i = 0; i < 1000000; i++) x += i * 0.5; /* computation, no MPI call */
            PMPI_Test(&r[0], &flag, &st[0]);
        }
        if (all_comm)
            CHECK(flag,
                  "progress thread (S=%d): Iallreduce not complete after %.1f s of computation", S,
                  MPI_Wtime() - t0);
        if (!flag)
            MPI_Wait(&r[0], &st[0]); /* the application's levels (would hang without progress) */
        if (rank != 0) MPI_Ibcast(b, N, MPI_INT, 0, MPI_COMM_WORLD, &r[1]);
        PMPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) MPI_Ibcast(b, N, MPI_INT, 0, MPI_COMM_WORLD, &r[1]);
        world_bcasts += size > 1;
        double t1 = MPI_Wtime();
        while ((all_comm || recv_app) && !bflag && MPI_Wtime() - t1 < (all_comm ? 5.0 : 0.3)) {
            for (int i = 0; i < 1000000; i++) x += i * 0.5;
            PMPI_Test(&r[1], &bflag, &st[1]);
        }
        if (all_comm)
            CHECK(bflag, "S=%d: rank %d (lowest level %d) Ibcast not complete unattended", S, rank,
                  minlevel);
        if (recv_app)
            CHECK(!bflag,
                  "S=%d: rank %d receives at level %d <= S, yet its Ibcast completed unattended", S,
                  rank, lr);
        if (!bflag) MPI_Wait(&r[1], &st[1]); /* the application's levels */
        int bad = 0;
        for (int i = 0; i < N; i++) bad += a[i] != size * (size - 1) / 2 + size * i || b[i] != i;
        CHECK(!bad, "progress thread: %d wrong", bad);
        if (rank == 0)
            printf("progress thread on core %d: completed during %.3f s of computation\n",
                   topocoll_progress_core(), MPI_Wtime() - t0);
        free(a);
        free(b);
    }

    topocoll_comm_query(MPI_COMM_WORLD, &after);
    if (size > 1 && after.enabled)
        CHECK(after.coll[TOPOCOLL_COLL_BCAST].calls - before.coll[TOPOCOLL_COLL_BCAST].calls ==
                  (unsigned long long)world_bcasts,
              "topocoll ran %llu broadcasts on MPI_COMM_WORLD, expected %d",
              (unsigned long long)(after.coll[TOPOCOLL_COLL_BCAST].calls -
                                   before.coll[TOPOCOLL_COLL_BCAST].calls),
              world_bcasts);
    if (size > 1 && after.enabled) CHECK(after.nb_calls > before.nb_calls, "nb_calls did not grow");
    CHECK(topocoll_progress() == 0, "operations left outstanding");

    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    int all = 0;
    PMPI_Allreduce(&tc_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_nbc: %d processes, %s (%d failures)\n", size, all ? "FAILED" : "passed", all);
    MPI_Finalize();
    /* no progress thread survives MPI_Finalize */
    char path[300], name[32];
    int left = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(name, sizeof(name), f) && !strncmp(name, "tc-progress", 11)) left++;
        fclose(f);
    }
    if (d) closedir(d);
    if (left)
        fprintf(stderr, "rank %d: FAIL: %d progress thread(s) alive after MPI_Finalize\n", rank,
                left);
    return all != 0 || left;
}
