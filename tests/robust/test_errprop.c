/*
 * tests/robust/test_errprop -- a failure one rank sees inside a collective
 * reaches the others: an erroneous MPI_Bcast (the root's count 1 MiB, the
 * others' 512 KiB) under MPI_ERRORS_RETURN must return an error on every
 * rank, of the class the native MPI gives (MPI_ERR_TRUNCATE), and hang
 * none (alarm() ends a hung run; the test then lacks its summary line).
 * Then the communicator still works: a correct Bcast and Allreduce.
 *
 * With "v": the same for the exchanges between nodes whose messages carry
 * no header (coll/pieces): an MPI_Allgatherv where one rank's send count
 * is not the others' receive count for it (twice it, then half), an
 * MPI_Alltoallv and an MPI_Alltoallw where one rank sends another twice
 * (half) the block that one expects, and an MPI_Alltoall where one rank's block is twice (half)
 * the others'.  Allgatherv must fail at that rank and at every rank of
 * the other nodes (they receive its block through their node's slice
 * process, which fails), Alltoallv(w) at the receiving rank, Alltoall at
 * that rank and every rank of the other nodes (its node's slice processes
 * find its send buffer's length wrong), with MPI_ERR_TRUNCATE; then each
 * runs correctly, in
 * topocoll, on the same communicator (no piece of the failed calls is
 * left to match).  Rank r's block is (r + 1) x bytes / 4 (the shares of
 * 3 nodes differ enough for Allgatherv to relay, coll/vexchange).
 *
 * Usage: test_errprop [bytes] [v]  (Bcast: the root's count, the others'
 * is half)
 */
#include <mpi.h>
#include <topocoll.h>

#include "../check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* 1 if topocoll ran nothing on @comm: its context there is not built yet
 * (TOPOCOLL_COMM_LAZY), so the call went native. */
static int went_native(MPI_Comm comm)
{
    topocoll_comm_info_t info = { .struct_size = sizeof info };
    int rc = topocoll_comm_query(comm, &info);
    return rc == TOPOCOLL_ERR_NOCTX || (rc == MPI_SUCCESS && !info.enabled);
}

/* 1 if this rank is alone on its node (virtual nodes included). */
static int alone_on_node(MPI_Comm comm)
{
    topocoll_comm_info_t info = { .struct_size = sizeof info };
    return topocoll_comm_query(comm, &info) == MPI_SUCCESS && info.local_size == 1;
}

/* One erroneous Bcast from @root on @comm: every rank's error class. */
static void mismatched(MPI_Comm comm, int root, int bytes)
{
    char *buf = malloc((size_t)bytes);
    memset(buf, rank == root ? 7 : 0, (size_t)bytes);
    int n = rank == root ? bytes : bytes / 2, cls = MPI_SUCCESS;
    int rc = MPI_Bcast(buf, n, MPI_BYTE, root, comm);
    MPI_Error_class(rc, &cls);
    /* Never a hang.  Success only at the root, and only where it cannot
     * know: alone on its node (every other node's leader told by the
     * header of the first message: coll/bcast), or an eager Bcast (at most
     * TOPOCOLL_BCAST_CICO_MAX, 32 KiB: the root returns once its item is
     * written, as native eager sends do).  A call that went native has the
     * native's answer: Open MPI's root returns success, MPICH's ranks
     * MPI_ERR_TRUNCATE where they see the count and MPI_ERR_OTHER where
     * they learn of another's failure. */
    const int native = went_native(comm);
    CHECK(rc != MPI_SUCCESS || (rank == root && (native || alone_on_node(comm) || n <= (32 << 10))),
          "root %d: %d bytes against %d: returned success", root, n, bytes);
    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE || (native && cls == MPI_ERR_OTHER),
          "root %d: error class %d", root, cls);
    if (rank == 0 && rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(cls, s, &len);
        printf("root %d, %d bytes: rank 0 returned class %d (%s)\n", root, bytes, cls, s);
    }
    free(buf);
}

/* The node of each rank (topocoll's view: virtual nodes included), by the
 * name topocoll gives each. */
static void nodes_of(MPI_Comm comm, int *node)
{
    topocoll_comm_info_t info = { .struct_size = sizeof info };
    int me = topocoll_comm_query(comm, &info) == MPI_SUCCESS ? info.node : -1;
    MPI_Allgather(&me, 1, MPI_INT, node, 1, MPI_INT, comm);
}

/* "share" after "v": the root shares single-copy blocks on one node from
 * TOPOCOLL_ROOT_SHARE_MIN bytes (set by the test's run), and either side
 * of a shared block checks the other's buffer length: a regular Gather or
 * Scatter whose blocks both go by single copy must fail too where either
 * block is that long.  0: not asked. */
static long long shared;

/* Irregular exchanges whose counts disagree at rank @x (Alltoallv: its
 * block for rank @y) by the factor @num / 2: each rank's error class. */
static void mismatched_v(MPI_Comm comm, int x, int y, int num, int bytes)
{
    int *node = malloc(sizeof(int) * (size_t)size), *cnt = malloc(sizeof(int) * (size_t)size),
        *dsp = malloc(sizeof(int) * (size_t)size), *scnt = malloc(sizeof(int) * (size_t)size),
        *sdsp = malloc(sizeof(int) * (size_t)size);
    nodes_of(comm, node);
    int total = 0, unit = bytes / 4, cls;
    for (int r = 0; r < size; r++) {
        cnt[r] = (r + 1) * unit;
        dsp[r] = total;
        total += cnt[r];
    }
    char *in = malloc((size_t)(2 * (size + 1)) * (size_t)unit * (size_t)size),
         *out = malloc((size_t)total + (size_t)bytes * 2);
    memset(in, 3, (size_t)(2 * (size + 1)) * (size_t)unit * (size_t)size);
    int own = rank == x ? cnt[x] * num / 2 : cnt[rank];
    int rc = MPI_Allgatherv(in, own, MPI_BYTE, out, cnt, dsp, MPI_BYTE, comm);
    MPI_Error_class(rc, &cls);
    if (node[0] >= 0)
        CHECK(rc != MPI_SUCCESS || (rank != x && node[rank] == node[x]),
              "Allgatherv, rank %d sending %d of %d bytes: success", x, own, cnt[x]);
    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Allgatherv: error class %d", cls);
    /* Alltoallv: rank r's block for each is (r + 1) units; x's for y off */
    for (int r = 0, o = 0; r < size; r++) {
        scnt[r] = rank == x && r == y ? cnt[rank] * num / 2 : cnt[rank];
        sdsp[r] = o;
        o += scnt[r];
    }
    rc = MPI_Alltoallv(in, scnt, sdsp, MPI_BYTE, out, cnt, dsp, MPI_BYTE, comm);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS || rank != y,
          "Alltoallv, rank %d sending %d of %d bytes to %d: success", x, cnt[x] * num / 2, cnt[x],
          y);
    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Alltoallv: error class %d", cls);
    /* Alltoallw: the same blocks, a datatype per rank (MPI_BYTE) */
    MPI_Datatype *bt = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int r = 0; r < size; r++) bt[r] = MPI_BYTE;
    rc = MPI_Alltoallw(in, scnt, sdsp, bt, out, cnt, dsp, bt, comm);
    free(bt);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS || rank != y,
          "Alltoallw, rank %d sending %d of %d bytes to %d: success", x, cnt[x] * num / 2, cnt[x],
          y);
    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Alltoallw: error class %d", cls);
    /* Gatherv, Scatterv (on one node and across nodes): x's count off,
     * the root the rank after x.  Gatherv: the root must fail (and x where
     * its block goes by single copy); Scatterv: x must fail. */
    int one_node = 1;
    for (int r = 0; r < size; r++) one_node &= node[r] == node[0] && node[0] >= 0;
    const int root = (x + 1) % size;
    {
        rc = MPI_Gatherv(in, own, MPI_BYTE, out, cnt, dsp, MPI_BYTE, root, comm);
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS || rank != root,
              "Gatherv, rank %d sending %d of %d bytes to root %d: success", x, own, cnt[x], root);
        CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Gatherv: error class %d", cls);
        rc = MPI_Scatterv(in, cnt, dsp, MPI_BYTE, out, own, MPI_BYTE, root, comm);
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS || rank != x,
              "Scatterv, rank %d receiving %d of %d bytes from root %d: success", x, own, cnt[x],
              root);
        CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Scatterv: error class %d", cls);
        /* the regular forms, x's block off: across nodes (Gatherv's and
         * Scatterv's collectors, every length checked), and on one node
         * with at least one side eager (2 KiB; both by single copy, a
         * shorter block is not seen: limitations.md, unless the root
         * shares the blocks) */
        const int c = rank == x ? unit * num / 2 : unit;
        if (!one_node || unit * num / 2 <= 2048 || unit <= 2048 ||
            (shared && (unit >= shared || unit * num / 2 >= shared))) {
            rc = MPI_Gather(in, c, MPI_BYTE, out, unit, MPI_BYTE, root, comm);
            MPI_Error_class(rc, &cls);
            CHECK(rc != MPI_SUCCESS || rank != root,
                  "Gather, rank %d sending %d of %d bytes to root %d: success", x, c, unit, root);
            CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Gather: error class %d", cls);
            rc = MPI_Scatter(in, unit, MPI_BYTE, out, c, MPI_BYTE, root, comm);
            MPI_Error_class(rc, &cls);
            CHECK(rc != MPI_SUCCESS || rank != x,
                  "Scatter, rank %d receiving %d of %d bytes from root %d: success", x, c, unit,
                  root);
            CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Scatter: error class %d", cls);
        }
    }
    /* Alltoall: x's block (sent and received) off for everyone (one node,
     * by single copy: rank 0's longer block stays in bounds, not seen) */
    int c = rank == x ? unit * num / 2 : unit;
    rc = MPI_Alltoall(in, c, MPI_BYTE, out, c, MPI_BYTE, comm);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS || (rank != x && node[rank] == node[x]) ||
              (one_node && x == 0 && num > 2),
          "Alltoall, rank %d's block %d of %d bytes: success", x, c, unit);
    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "Alltoall: error class %d", cls);
    if (rank == 0)
        printf("v: rank %d x %d/2 (to %d): rank 0 %s\n", x, num, y, rc ? "failed" : "succeeded");
    free(node);
    free(cnt);
    free(dsp);
    free(scnt);
    free(sdsp);
    free(in);
    free(out);
}

/* The communicator after the errors: a correct Allgatherv, Alltoallv,
 * Gatherv and Scatterv (rank r's block for each is r + 1 units of its
 * rank's byte), Alltoall, Gather and Scatter (a unit each). */
static void still_works_v(MPI_Comm comm, int bytes)
{
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size),
        *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int total = 0, unit = bytes / 4, bad = 0;
    for (int r = 0; r < size; r++) {
        cnt[r] = (r + 1) * unit;
        dsp[r] = total;
        total += cnt[r];
        sc[r] = (rank + 1) * unit;
        sd[r] = r * sc[r];
    }
    char *in = malloc((size_t)sc[0] * (size_t)size), *out = malloc((size_t)total);
    memset(in, rank + 1, (size_t)sc[0] * (size_t)size);
    topocoll_comm_info_t i0 = { .struct_size = sizeof i0 }, i1 = i0;
    topocoll_comm_query(comm, &i0);
    memset(out, 0, (size_t)total);
    int rc = MPI_Allgatherv(in, cnt[rank], MPI_BYTE, out, cnt, dsp, MPI_BYTE, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < cnt[r] && !bad; i++) bad = out[dsp[r] + i] != (char)(r + 1);
    CHECK(rc == MPI_SUCCESS && !bad, "Allgatherv after the errors: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    memset(out, 0, (size_t)total);
    rc = MPI_Alltoallv(in, sc, sd, MPI_BYTE, out, cnt, dsp, MPI_BYTE, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < cnt[r] && !bad; i++) bad = out[dsp[r] + i] != (char)(r + 1);
    CHECK(rc == MPI_SUCCESS && !bad, "Alltoallv after the errors: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    memset(out, 0, (size_t)total);
    rc = MPI_Alltoall(in, unit, MPI_BYTE, out, unit, MPI_BYTE, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < unit && !bad; i++) bad = out[r * unit + i] != (char)(r + 1);
    CHECK(rc == MPI_SUCCESS && !bad, "Alltoall after the errors: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    memset(out, 0, (size_t)total);
    rc = MPI_Gatherv(in, cnt[rank], MPI_BYTE, out, cnt, dsp, MPI_BYTE, size - 1, comm);
    for (int r = 0; rank == size - 1 && r < size; r++)
        for (int i = 0; i < cnt[r] && !bad; i++) bad = out[dsp[r] + i] != (char)(r + 1);
    CHECK(rc == MPI_SUCCESS && !bad, "Gatherv after the errors: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    for (int r = 0; r < size; r++) memset(out + dsp[r], r + 1, (size_t)cnt[r]);
    memset(in, 0, (size_t)cnt[rank]);
    rc = MPI_Scatterv(out, cnt, dsp, MPI_BYTE, in, cnt[rank], MPI_BYTE, 0, comm);
    for (int i = 0; i < cnt[rank] && !bad; i++) bad = in[i] != (char)(rank + 1);
    CHECK(rc == MPI_SUCCESS && !bad, "Scatterv after the errors: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    /* the regular rooted calls, which failed above with disagreeing counts */
    bad = 0;
    memset(in, rank + 1, (size_t)unit);
    memset(out, 0, (size_t)total);
    rc = MPI_Gather(in, unit, MPI_BYTE, out, unit, MPI_BYTE, size - 1, comm);
    for (int r = 0; rank == size - 1 && r < size; r++)
        for (int i = 0; i < unit && !bad; i++) bad = out[r * unit + i] != (char)(r + 1);
    CHECK(rc == MPI_SUCCESS && !bad, "Gather after the errors: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    for (int r = 0; r < size; r++) memset(out + (size_t)r * (size_t)unit, r + 1, (size_t)unit);
    memset(in, 0, (size_t)unit);
    bad = 0;
    rc = MPI_Scatter(out, unit, MPI_BYTE, in, unit, MPI_BYTE, 0, comm);
    for (int i = 0; i < unit && !bad; i++) bad = in[i] != (char)(rank + 1);
    CHECK(rc == MPI_SUCCESS && !bad, "Scatter after the errors: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    /* (and in topocoll: the failed calls drained, the communicator kept) */
    topocoll_comm_query(comm, &i1);
    CHECK(i1.coll[TOPOCOLL_COLL_ALLGATHERV].calls > i0.coll[TOPOCOLL_COLL_ALLGATHERV].calls &&
              i1.coll[TOPOCOLL_COLL_ALLTOALLV].calls > i0.coll[TOPOCOLL_COLL_ALLTOALLV].calls &&
              i1.coll[TOPOCOLL_COLL_ALLTOALL].calls > i0.coll[TOPOCOLL_COLL_ALLTOALL].calls &&
              i1.coll[TOPOCOLL_COLL_GATHERV].calls > i0.coll[TOPOCOLL_COLL_GATHERV].calls &&
              i1.coll[TOPOCOLL_COLL_SCATTERV].calls > i0.coll[TOPOCOLL_COLL_SCATTERV].calls &&
              i1.coll[TOPOCOLL_COLL_GATHER].calls > i0.coll[TOPOCOLL_COLL_GATHER].calls &&
              i1.coll[TOPOCOLL_COLL_SCATTER].calls > i0.coll[TOPOCOLL_COLL_SCATTER].calls,
          "after the errors: Allgatherv, Alltoallv, Alltoall, Gatherv, Scatterv, Gather or "
          "Scatter went native");
    free(cnt);
    free(dsp);
    free(sc);
    free(sd);
    free(in);
    free(out);
}

/* The communicator after the error: a correct Bcast and Allreduce. */
static void still_works(MPI_Comm comm, int bytes)
{
    char *buf = malloc((size_t)bytes);
    memset(buf, rank == 0 ? 9 : 0, (size_t)bytes);
    int rc = MPI_Bcast(buf, bytes, MPI_BYTE, 0, comm), bad = 0;
    for (int i = 0; i < bytes && !bad; i++) bad = buf[i] != 9;
    CHECK(rc == MPI_SUCCESS && !bad, "Bcast after the error: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    int one = 1, sum = 0;
    rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(rc == MPI_SUCCESS && sum == size, "Allreduce after the error: rc %d, sum %d", rc, sum);
    free(buf);
}

/* With lazy contexts (TOPOCOLL_COMM_LAZY > 0): an erroneous Bcast, Allgather
 * and Gather the native MPI survives, where one rank's send signature differs
 * from its receive one (that rank passes the call native on its own), on
 * a cold communicator, then correct calls past the build.  Every rank
 * must count those calls alike and build at the same call: before, the
 * erroneous rank counted one call less, built one call later than the
 * others, and an Allreduce returned a wrong sum, then crashed or hung. */
static void cold_counts(void)
{
    const char *lz = getenv("TOPOCOLL_COMM_LAZY");
    if (!lz || atoi(lz) <= 0 || size < 2) return;
    enum { N = 64 };
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int *s = calloc((size_t)N * size, sizeof(int)), *r = calloc((size_t)N * size, sizeof(int));
    /* a Bcast whose counts differ on both sides of 256 KiB (where
     * TOPOCOLL_COMM_LAZY_MIN once built the context on the root alone:
     * a hang) */
    char *big = calloc(400 << 10, 1);
    (void)MPI_Bcast(big, rank == 0 ? 400 << 10 : 200 << 10, MPI_BYTE, 0, c);
    free(big);
    (void)MPI_Allgather(s, rank == 1 ? N / 2 : N, MPI_INT, r, N, MPI_INT, c);
    (void)MPI_Gather(s, rank == 0 ? N / 2 : N, MPI_INT, r, N, MPI_INT, 0, c);
    for (int k = 0, bad = 0; k < 2 * atoi(lz) + 8 && !bad; k++) {
        int v[3] = { rank + k, 1, k }, w[3] = { 0, 0, 0 };
        int rc = MPI_Allreduce(v, w, 3, MPI_INT, MPI_SUM, c);
        bad = rc != MPI_SUCCESS || w[0] != size * (size - 1) / 2 + size * k || w[1] != size ||
              w[2] != size * k;
        CHECK(!bad, "after erroneous calls on a cold communicator: Allreduce %d wrong (rc %d)", k,
              rc);
    }
    topocoll_comm_info_t info = { .struct_size = sizeof info };
    CHECK(topocoll_comm_query(c, &info) == MPI_SUCCESS && info.built,
          "after erroneous calls on a cold communicator: not built");
    free(s);
    free(r);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    alarm(120);
    int bytes = argc > 1 ? atoi(argv[1]) : 1 << 20;
    cold_counts();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Barrier(comm); /* (its context built: the erroneous call runs in topocoll) */
    const int v = argc > 2 && !strcmp(argv[2], "v");
    if (argc > 3 && !strcmp(argv[3], "share") && getenv("TOPOCOLL_ROOT_SHARE_MIN"))
        shared = atoll(getenv("TOPOCOLL_ROOT_SHARE_MIN"));
    if (v) {
        mismatched_v(comm, size - 1, 0, 4, bytes); /* (longer: the receivers drain) */
        mismatched_v(comm, 0, size - 1, 1, bytes); /* (shorter: they cut) */
        /* (longer at offset 0: a shared block's copies stay in bounds) */
        if (shared) mismatched_v(comm, 0, size - 1, 4, bytes);
        still_works_v(comm, bytes);
    } else {
        mismatched(comm, 0, bytes);
        mismatched(comm, size - 1, bytes);
    }
    /* the same communicator: nothing of the failed calls is left in flight
     * (across nodes their segments were drained: coll/bcast) */
    still_works(comm, bytes);
    MPI_Comm_free(&comm);
    /* a fresh communicator: whatever the error left behind is gone with the old one */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    still_works(comm, bytes);
    if (v) still_works_v(comm, bytes);
    MPI_Comm_free(&comm);
    int f = tc_report("test_errprop");
    MPI_Finalize();
    return f != 0;
}
