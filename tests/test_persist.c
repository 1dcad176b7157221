/*
 * test_persist -- the persistent collectives (MPI 4.0 section 6.13):
 * MPI_<Coll>_init (MPICH) / MPIX_<Coll>_init (Open MPI), MPI_Start,
 * MPI_Startall, the completion calls on persistent requests (active,
 * inactive, mixed with native ones) and MPI_Request_free, through
 * libtopocoll_pmpi.  Each request is started several times with new data
 * and every result is checked against the native MPI's blocking call
 * (PMPI_*) on the same data; the counters must show that topocoll ran the
 * starts where its context is enabled.  Exit status: 0 when every check
 * passed.
 */
#include "topocoll.h"

#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#define PINIT(Name) MPIX_##Name##_init
#else
#define PINIT(Name) MPI_##Name##_init
#endif

#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { STARTS = 4 };
static int wrank, size;
static MPI_Status sts[16]; /* (MPICH's MPI_STATUSES_IGNORE trips GCC's bounds checks) */

/* this process's rank in @comm (the tests use a reversed split) */
static int rank_in(MPI_Comm comm)
{
    int r;
    MPI_Comm_rank(comm, &r);
    return r;
}

/* Complete @r (a started persistent request: topocoll's if @ours) by way
 * @how, with a native point-to-point pair beside it for the array calls. */
static void complete(int how, MPI_Request *r, MPI_Comm comm, int ours)
{
    MPI_Request a[3] = { *r, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    const int rank = rank_in(comm);
    /* MPICH 4.0.2's own persistent collective requests break its Testall
     * (MPI_ERR_IN_STATUS) and Waitany/Waitsome (an inactive one counts) */
    if (!ours) how %= 3;
    int token = rank, got = -1, flag = 0, idx, n = 0, done = 0, oc, ids[3];
    if (how >= 2) { /* a native pair in the same array */
        PMPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 77, comm, &a[1]);
        PMPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 77, comm, &a[2]);
        n = 3;
    }
    switch (how) {
    case 0: MPI_Wait(r, MPI_STATUS_IGNORE); return;
    case 1:
        while (!flag) MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        return;
    case 2: MPI_Waitall(n, a, sts); break;
    case 3:
        while (!flag) MPI_Testall(n, a, &flag, sts);
        break;
    case 4: /* a Testany first: no completion gives MPI_UNDEFINED */
        idx = -7;
        MPI_Testany(n, a, &idx, &flag, MPI_STATUS_IGNORE);
        CHECK(flag ? idx >= 0 && idx < n : idx == MPI_UNDEFINED, "Testany: flag %d index %d", flag,
              idx);
        for (done = flag; done < n; done++) {
            MPI_Waitany(n, a, &idx, MPI_STATUS_IGNORE);
            CHECK(idx >= 0 && idx < n, "Waitany index %d", idx);
        }
        MPI_Waitany(n, a, &idx, MPI_STATUS_IGNORE);
        /* (MPICH 4.0.2's own persistent collective request, inactive, gives 0) */
        CHECK(idx == MPI_UNDEFINED || !ours, "Waitany with nothing active: %d", idx);
        break;
    default:
        while (done < n) {
            MPI_Waitsome(n, a, &oc, ids, sts);
            CHECK(oc != MPI_UNDEFINED && oc > 0, "Waitsome outcount %d", oc);
            done += oc > 0 ? oc : n;
        }
        MPI_Testsome(n, a, &oc, ids, sts);
        CHECK(oc == MPI_UNDEFINED || !ours, "Testsome with nothing active: %d", oc);
        break;
    }
    CHECK(got == (rank + size - 1) % size, "native pair beside it (way %d): got %d", how, got);
    CHECK(a[0] == *r, "the persistent handle changed");
}

static uint64_t nb_runs(MPI_Comm comm, int coll)
{
    topocoll_comm_info_t i = TOPOCOLL_COMM_INFO_INIT;
    if (topocoll_comm_query(comm, &i) != MPI_SUCCESS || !i.enabled) return 0;
    return i.coll[coll].nonblocking;
}

/* Allreduce (and Reduce at a non-zero root) of @count doubles. */
static void reductions(MPI_Comm comm, int count, int in_place, int how)
{
    const int rank = rank_in(comm);
    double *s = calloc(count + 1, sizeof(double)), *d = malloc((count + 1) * sizeof(double));
    double *ref = malloc((count + 1) * sizeof(double)), *rd = malloc((count + 1) * sizeof(double));
    int root = size - 1, bad = 0;
    MPI_Request ra, rr;
    PINIT(Allreduce)
    (in_place ? MPI_IN_PLACE : s, in_place ? s : d, count, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL,
     &ra);
    PINIT(Reduce)(s, rd, count, MPI_DOUBLE, MPI_MAX, root, comm, MPI_INFO_NULL, &rr);
    uint64_t before = nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE);
    int ours = 0;
    for (int it = 0; it < STARTS; it++) {
        for (int i = 0; i < count; i++) s[i] = (double)((rank + 1) * (i % 97) + it);
        PMPI_Allreduce(s, ref, count, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Start(&ra);
        if (it == 0) { /* then whose request it is shows in the counters */
            MPI_Wait(&ra, MPI_STATUS_IGNORE);
            ours = nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE) > before;
        } else {
            complete((how + it) % 6, &ra, comm, ours);
        }
        double *res = in_place ? s : d;
        bad = 0;
        for (int i = 0; i < count; i++) bad += res[i] != ref[i];
        CHECK(!bad, "Allreduce_init count %d in_place %d start %d: %d wrong", count, in_place, it,
              bad);
        for (int i = 0; i < count; i++) s[i] = (double)((rank * 7 + i) % 113 + it);
        PMPI_Allreduce(s, ref, count, MPI_DOUBLE, MPI_MAX, comm);
        MPI_Start(&rr);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        bad = 0;
        for (int i = 0; rank == root && i < count; i++) bad += rd[i] != ref[i];
        CHECK(!bad, "Reduce_init count %d start %d: %d wrong", count, it, bad);
    }
    /* on one node topocoll runs every Allreduce with something to move;
     * whatever it ran once, it ran at every start */
    topocoll_comm_info_t ci = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &ci);
    if ((ci.enabled && ci.nnodes == 1 && count > 0) || ours)
        CHECK(nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE) - before == STARTS,
              "Allreduce_init count %d: topocoll ran %llu of %d starts", count,
              (unsigned long long)(nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE) - before), STARTS);
    MPI_Request_free(&ra);
    MPI_Request_free(&rr);
    CHECK(ra == MPI_REQUEST_NULL && rr == MPI_REQUEST_NULL, "Request_free left a handle");
    free(s), free(d), free(ref), free(rd);
}

/* Bcast at root 1, Allgather, Alltoall, and the v-forms with rank r's
 * block (r + 1) * @b bytes, started together with MPI_Startall. */
static void exchanges(MPI_Comm comm, int b)
{
    const int rank = rank_in(comm);
    int root = 1 % size, tot = 0, bad = 0;
    int *cnt = malloc(size * sizeof(int)), *dsp = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++) cnt[r] = (r + 1) * b, dsp[r] = tot + r, tot += cnt[r] + 1;
    int my = cnt[rank];
    int *acnt = malloc(size * sizeof(int)), *adsp = malloc(size * sizeof(int));
    int *rcnt = malloc(size * sizeof(int)), *rdsp = malloc(size * sizeof(int));
    int at = 0, rt = 0;
    for (int r = 0; r < size; r++) {
        acnt[r] = b * ((rank + r) % 3), adsp[r] = at, at += acnt[r];
        rcnt[r] = b * ((r + rank) % 3), rdsp[r] = rt, rt += rcnt[r];
    }
    size_t big = (size_t)tot + (size_t)b * size * 3 + 64;
    char *sb = calloc(big, 1), *bc = malloc(big), *ag = malloc(big), *agv = malloc(big);
    char *atv = malloc(big), *ref = malloc(big), *at2 = malloc(big), *gv = malloc(big);
    char *atw = malloc(big);
    MPI_Datatype *ct = malloc(sizeof(MPI_Datatype) * (size_t)size); /* Alltoallw's: MPI_CHAR */
    for (int q = 0; q < size; q++) ct[q] = MPI_CHAR;
    MPI_Request r[7];
    PINIT(Bcast)(bc, b, MPI_CHAR, root, comm, MPI_INFO_NULL, &r[0]);
    PINIT(Allgather)(sb, b, MPI_CHAR, ag, b, MPI_CHAR, comm, MPI_INFO_NULL, &r[1]);
    PINIT(Allgatherv)(sb, my, MPI_CHAR, agv, cnt, dsp, MPI_CHAR, comm, MPI_INFO_NULL, &r[2]);
    PINIT(Alltoallv)
    (sb, acnt, adsp, MPI_CHAR, atv, rcnt, rdsp, MPI_CHAR, comm, MPI_INFO_NULL, &r[3]);
    PINIT(Alltoall)(sb, b, MPI_CHAR, at2, b, MPI_CHAR, comm, MPI_INFO_NULL, &r[4]);
    PINIT(Gatherv)(sb, my, MPI_CHAR, gv, cnt, dsp, MPI_CHAR, root, comm, MPI_INFO_NULL, &r[5]);
    PINIT(Alltoallw)(sb, acnt, adsp, ct, atw, rcnt, rdsp, ct, comm, MPI_INFO_NULL, &r[6]);
    for (int it = 0; it < STARTS; it++) {
        tc_fill((unsigned char *)sb, big, 31u * rank + it);
        if (rank == root) memcpy(bc, sb, b);
        uint64_t ag0 = nb_runs(comm, TOPOCOLL_COLL_ALLGATHER);
        uint64_t agv0 = nb_runs(comm, TOPOCOLL_COLL_ALLGATHERV);
        uint64_t gv0 = nb_runs(comm, TOPOCOLL_COLL_GATHERV);
        uint64_t atv0 = nb_runs(comm, TOPOCOLL_COLL_ALLTOALLV);
        uint64_t atw0 = nb_runs(comm, TOPOCOLL_COLL_ALLTOALLW);
        MPI_Startall(7, r);
        if (it % 2)
            MPI_Waitall(7, r, sts);
        else
            for (int k = 0; k < 7; k++) MPI_Wait(&r[k], MPI_STATUS_IGNORE);
        PMPI_Bcast(sb, b, MPI_CHAR, root, comm); /* (sb changes: refilled next start) */
        bad = memcmp(bc, sb, b) != 0;
        CHECK(!bad, "Bcast_init %d B start %d", b, it);
        tc_fill((unsigned char *)sb, big, 31u * rank + it);
        PMPI_Allgather(sb, b, MPI_CHAR, ref, b, MPI_CHAR, comm);
        /* (MPICH 4.0.2's own MPI_Allgather_init gives wrong blocks from the
         * second start on: only topocoll's requests are checked there) */
        int native_ag = nb_runs(comm, TOPOCOLL_COLL_ALLGATHER) == ag0;
#if defined(OPEN_MPI)
        native_ag = 0;
#endif
        CHECK(native_ag || !memcmp(ag, ref, (size_t)b * size), "Allgather_init %d B start %d", b,
              it);
        PMPI_Allgatherv(sb, my, MPI_CHAR, ref, cnt, dsp, MPI_CHAR, comm);
        bad = 0;
        for (int q = 0; q < size; q++) bad += memcmp(agv + dsp[q], ref + dsp[q], cnt[q]) != 0;
        CHECK(!bad, "Allgatherv_init %d B start %d: %d blocks wrong", b, it, bad);
        if (rank == root) {
            bad = 0;
            for (int q = 0; q < size; q++) bad += memcmp(gv + dsp[q], ref + dsp[q], cnt[q]) != 0;
            CHECK(!bad, "Gatherv_init %d B start %d: %d blocks wrong", b, it, bad);
        }
        PMPI_Alltoallv(sb, acnt, adsp, MPI_CHAR, ref, rcnt, rdsp, MPI_CHAR, comm);
        CHECK(!memcmp(atv, ref, rt), "Alltoallv_init %d B start %d", b, it);
        CHECK(!memcmp(atw, ref, rt), "Alltoallw_init %d B start %d", b, it);
        PMPI_Alltoall(sb, b, MPI_CHAR, ref, b, MPI_CHAR, comm);
        CHECK(!memcmp(at2, ref, (size_t)b * size), "Alltoall_init %d B start %d", b, it);
        /* on one node with single copy topocoll runs the irregular
         * exchanges at every size (their tables kept) */
        topocoll_comm_info_t ci = TOPOCOLL_COMM_INFO_INIT;
        topocoll_comm_query(comm, &ci);
        if (ci.enabled && ci.nnodes == 1 && ci.single_copy)
            CHECK(nb_runs(comm, TOPOCOLL_COLL_ALLGATHERV) > agv0 &&
                      nb_runs(comm, TOPOCOLL_COLL_GATHERV) > gv0 &&
                      nb_runs(comm, TOPOCOLL_COLL_ALLTOALLV) > atv0 &&
                      nb_runs(comm, TOPOCOLL_COLL_ALLTOALLW) > atw0,
                  "Allgatherv_init, Gatherv_init, Alltoallv_init, Alltoallw_init %d B start %d: "
                  "not topocoll's",
                  b, it);
    }
    for (int k = 0; k < 7; k++) MPI_Request_free(&r[k]);
    free(sb), free(bc), free(ag), free(agv), free(atv), free(ref), free(at2), free(gv);
    free(atw), free(ct);
    free(cnt), free(dsp), free(acnt), free(adsp), free(rcnt), free(rdsp);
}

/* The irregular exchanges whose processes pack differently (their
 * datatypes have gaps on some ranks only, in place on some): every
 * process must take the same path, topocoll's (one node with single copy:
 * counted), packing again at each start.  Alltoallw: rank p's block for q
 * is 3 + p + q + @b ints, sent one int every two on odd ranks, received
 * so on ranks 1 mod 3, in place on the last rank's second request;
 * Gatherv to the last rank, received one int every two, sent so by rank
 * 1; Allgatherv in place, one int every two on rank 0; Gather and
 * Alltoall of k = 5 + @b ints a block, sent and received with
 * Alltoallw's types (Gather's root: one int every two). */
static int pval(int p, int q, int i, int it) { return p * 100003 + q * 1009 + i * 7 + it * 13 + 1; }
static void packed(MPI_Comm comm, int b)
{
    const int me = rank_in(comm), root = size - 1;
    MPI_Datatype every2;
    MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &every2);
    MPI_Type_commit(&every2);
    int *sc = malloc(sizeof(int) * 6 * (size_t)size), *sd = sc + size, *rc = sd + size,
        *rd = rc + size, *gc = rd + size, *gd = gc + size;
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * (size_t)size), *rt = st + size;
    const int ss = me % 2 ? 2 : 1, rs = me % 3 == 1 ? 2 : 1;
    int sat = 0, rat = 0, gat = 0;
    for (int q = 0; q < size; q++) {
        sc[q] = rc[q] = 3 + me + q + b;
        st[q] = ss == 2 ? every2 : MPI_INT;
        rt[q] = rs == 2 ? every2 : MPI_INT;
        sd[q] = sat * (int)sizeof(int);
        rd[q] = rat * (int)sizeof(int);
        sat += sc[q] * ss;
        rat += rc[q] * rs;
        gc[q] = 2 + q + b; /* Gatherv, Allgatherv: rank q's block, displacements in elements */
        gd[q] = gat;
        gat += gc[q];
    }
    int *sbuf = malloc(sizeof(int) * ((size_t)sat + 1)),
        *rbuf = malloc(sizeof(int) * 2 * ((size_t)rat + 1));
    int *ibuf = rbuf + rat + 1, *gbuf = malloc(sizeof(int) * 2 * ((size_t)gat + 1));
    int *abuf = malloc(sizeof(int) * 2 * ((size_t)gat + 1)),
        *mine = malloc(sizeof(int) * 2 * ((size_t)gc[me] + 1));
    const int inplace = me == root;
    const int k = 5 + b;
    int *xs = malloc(sizeof(int) * 14 * (size_t)k * (size_t)size), *xr = xs + 2 * k * size,
        *xg = xr + 2 * k * size, *xa = xg + 2 * k * size, *xb = xa + 2 * k * size,
        *xv = xb + 2 * k * size, *xc = xv + 2 * k * size;
    int *kc = malloc(sizeof(int) * 2 * (size_t)size), *kd = kc + size;
    for (int q = 0; q < size; q++) kc[q] = k, kd[q] = q * k;
    MPI_Request r[10];
    PINIT(Alltoallw)(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, MPI_INFO_NULL, &r[0]);
    PINIT(Alltoallw)
    (inplace ? MPI_IN_PLACE : sbuf, sc, sd, st, ibuf, rc, rd, rt, comm, MPI_INFO_NULL, &r[1]);
    PINIT(Gatherv)
    (mine, gc[me], me == 1 ? every2 : MPI_INT, gbuf, gc, gd, every2, root, comm, MPI_INFO_NULL,
     &r[2]);
    PINIT(Allgatherv)
    (MPI_IN_PLACE, 0, MPI_INT, abuf, gc, gd, me == 0 ? every2 : MPI_INT, comm, MPI_INFO_NULL,
     &r[3]);
    PINIT(Gather)
    (xs, k, ss == 2 ? every2 : MPI_INT, xg, k, every2, root, comm, MPI_INFO_NULL, &r[4]);
    PINIT(Alltoall)
    (xs, k, ss == 2 ? every2 : MPI_INT, xr, k, rs == 2 ? every2 : MPI_INT, comm, MPI_INFO_NULL,
     &r[5]);
    PINIT(Bcast)(xb, k, ss == 2 ? every2 : MPI_INT, root, comm, MPI_INFO_NULL, &r[6]);
    PINIT(Allgather)
    (xs, k, ss == 2 ? every2 : MPI_INT, xa, k, rs == 2 ? every2 : MPI_INT, comm, MPI_INFO_NULL,
     &r[7]);
    PINIT(Scatterv)
    (xs, kc, kd, ss == 2 ? every2 : MPI_INT, xc, k, rs == 2 ? every2 : MPI_INT, root, comm,
     MPI_INFO_NULL, &r[8]);
    PINIT(Alltoallv)
    (xs, kc, kd, ss == 2 ? every2 : MPI_INT, xv, kc, kd, rs == 2 ? every2 : MPI_INT, comm,
     MPI_INFO_NULL, &r[9]);
    const int as = me == 0 ? 2 : 1, ms = me == 1 ? 2 : 1;
    for (int it = 0; it < STARTS; it++) {
        uint64_t w0 = nb_runs(comm, TOPOCOLL_COLL_ALLTOALLW),
                 g0 = nb_runs(comm, TOPOCOLL_COLL_GATHERV),
                 x0 = nb_runs(comm, TOPOCOLL_COLL_GATHER),
                 a0 = nb_runs(comm, TOPOCOLL_COLL_ALLGATHER);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < sc[q]; i++) {
                sbuf[sd[q] / (int)sizeof(int) + i * ss] = pval(me, q, i, it);
                rbuf[rd[q] / (int)sizeof(int) + i * rs] = -7;
                ibuf[rd[q] / (int)sizeof(int) + i * rs] = inplace ? pval(me, q, i, it) : -7;
            }
        for (int i = 0; i < gc[me]; i++) mine[i * ms] = pval(me, 0, i, it);
        for (int i = 0; i < 2 * gat; i++) gbuf[i] = abuf[i] = -7;
        for (int i = 0; i < gc[me]; i++) abuf[(gd[me] + i) * as] = pval(me, 1, i, it);
        for (int i = 0; i < k * size; i++) xs[i * ss] = pval(me, 2, i, it);
        for (int i = 0; i < 2 * k * size; i++) xr[i] = xg[i] = xa[i] = xb[i] = xv[i] = xc[i] = -7;
        for (int i = 0; me == root && i < k; i++) xb[i * ss] = pval(root, 3, i, it);
        MPI_Startall(10, r);
        MPI_Waitall(10, r, sts);
        int bad = 0;
        for (int q = 0; q < size; q++)
            for (int i = 0; i < rc[q]; i++)
                bad += (rbuf[rd[q] / (int)sizeof(int) + i * rs] != pval(q, me, i, it)) +
                       (ibuf[rd[q] / (int)sizeof(int) + i * rs] != pval(q, me, i, it));
        CHECK(!bad, "Alltoallw_init packed b=%d start %d: %d wrong", b, it, bad);
        bad = 0;
        for (int q = 0; q < size; q++)
            for (int i = 0; i < gc[q]; i++) {
                if (me == root) bad += gbuf[(gd[q] + i) * 2] != pval(q, 0, i, it);
                bad += abuf[(gd[q] + i) * as] != pval(q, 1, i, it);
            }
        CHECK(!bad, "Gatherv_init, Allgatherv_init packed b=%d start %d: %d wrong", b, it, bad);
        /* (MPICH 4.0.2's own MPI_Gather_init leaves a root's receive type
         * with gaps unfilled: only topocoll's request is checked there) */
        int check_gather = nb_runs(comm, TOPOCOLL_COLL_GATHER) > x0;
#if defined(OPEN_MPI)
        check_gather = 1;
#endif
        bad = 0;
        for (int q = 0; q < size; q++)
            for (int i = 0; i < k; i++) {
                if (me == root && check_gather) bad += xg[(q * k + i) * 2] != pval(q, 2, i, it);
                bad += xr[(q * k + i) * rs] != pval(q, 2, me * k + i, it);
            }
        CHECK(!bad, "Gather_init, Alltoall_init packed b=%d start %d: %d wrong", b, it, bad);
        /* (MPICH 4.0.2's own MPI_Allgather_init: see exchanges; where
         * topocoll's context runs, topocoll takes the request instead) */
        int check_ag = nb_runs(comm, TOPOCOLL_COLL_ALLGATHER) > a0;
#if defined(OPEN_MPI)
        check_ag = 1;
#else
        /* (where single copy works and native is not asked for: an
         * Allgather across nodes or of blocks above the segment's needs it) */
        topocoll_comm_info_t ai = TOPOCOLL_COMM_INFO_INIT;
        topocoll_comm_query(comm, &ai);
        const char *ag_alg = getenv("TOPOCOLL_ALLGATHER_ALG");
        CHECK(!ai.enabled || !ai.single_copy || (ag_alg && !strcmp(ag_alg, "native")) || check_ag,
              "Allgather_init packed b=%d start %d: left to MPICH's own persistent form", b, it);
#endif
        bad = 0;
        for (int i = 0; i < k; i++) bad += xb[i * ss] != pval(root, 3, i, it);
        CHECK(!bad, "Bcast_init packed b=%d start %d: %d wrong", b, it, bad);
        bad = 0;
        for (int q = 0; check_ag && q < size; q++)
            for (int i = 0; i < k; i++) bad += xa[(q * k + i) * rs] != pval(q, 2, i, it);
        CHECK(!bad, "Allgather_init packed b=%d start %d: %d wrong", b, it, bad);
        bad = 0; /* (Scatterv: the root's xs, Alltoallv: as Alltoall's) */
        for (int i = 0; i < k; i++) bad += xc[i * rs] != pval(root, 2, me * k + i, it);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < k; i++) bad += xv[(q * k + i) * rs] != pval(q, 2, me * k + i, it);
        CHECK(!bad, "Scatterv_init, Alltoallv_init packed b=%d start %d: %d wrong", b, it, bad);
        topocoll_comm_info_t ci = TOPOCOLL_COMM_INFO_INIT;
        topocoll_comm_query(comm, &ci);
        if (ci.enabled && ci.nnodes == 1 && ci.single_copy)
            CHECK(nb_runs(comm, TOPOCOLL_COLL_ALLTOALLW) == w0 + 2 &&
                      nb_runs(comm, TOPOCOLL_COLL_GATHERV) == g0 + 1,
                  "packed persistent requests b=%d start %d: not topocoll's", b, it);
    }
    for (int q = 0; q < 10; q++) MPI_Request_free(&r[q]);
    free(kc);
    MPI_Type_free(&every2);
    free(sc), free(st), free(sbuf), free(rbuf), free(gbuf), free(abuf), free(mine), free(xs);
}

/* Reduce_scatter(_block), Scan, Exscan, Barrier, Scatter(v), Gather of
 * ints, started in a loop with MPI_Start each. */
static void others(MPI_Comm comm, int n)
{
    const int rank = rank_in(comm);
    int *s = calloc((size_t)n * size, sizeof(int)), *d = malloc((size_t)n * size * sizeof(int));
    int *ref = malloc((size_t)n * size * sizeof(int)), *cnt = malloc(size * sizeof(int));
    int *e = malloc((size_t)n * (size + 3) * sizeof(int)), *sc = malloc((size_t)n * sizeof(int));
    int *dsp = malloc(size * sizeof(int)), *sv = malloc((size_t)n * sizeof(int));
    int root = size > 2 ? 2 : 0, off = 0;
    for (int r = 0; r < size; r++) cnt[r] = r % 2 ? n : n / 2 + 1, dsp[r] = off, off += cnt[r];
    MPI_Request q[7];
    PINIT(Reduce_scatter_block)(s, d, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[0]);
    PINIT(Scan)(s, e, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[1]);
    PINIT(Barrier)(comm, MPI_INFO_NULL, &q[2]);
    /* MPICH 4.0.2's own MPI_Scatter_init fails its second start (np=4):
     * there, only where topocoll runs it (one node); a barrier instead */
    topocoll_comm_info_t ci = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &ci);
    int scatter = 1;
#if !defined(OPEN_MPI)
    scatter = ci.enabled && ci.nnodes == 1;
#endif
    int rc = scatter ? PINIT(Scatter)(s, n / size + 1, MPI_INT, sc, n / size + 1, MPI_INT, root,
                                      comm, MPI_INFO_NULL, &q[3])
                     : PINIT(Barrier)(comm, MPI_INFO_NULL, &q[3]);
    (void)rc; /* (an error aborts: MPI_ERRORS_ARE_FATAL) */
    PINIT(Reduce_scatter)(s, e + n, cnt, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &q[4]);
    PINIT(Exscan)(s, sv, n, MPI_INT, MPI_BXOR, comm, MPI_INFO_NULL, &q[5]);
    PINIT(Scatterv)
    (s, cnt, dsp, MPI_INT, e + 2 * n, cnt[rank], MPI_INT, root, comm, MPI_INFO_NULL, &q[6]);
    for (int it = 0; it < STARTS; it++) {
        for (int i = 0; i < n * size; i++) s[i] = (rank + 3) * (i % 31) - it * 5 + (i ^ rank);
        for (int k = 0; k < 7; k++) MPI_Start(&q[k]);
        MPI_Waitall(7, q, sts);
        PMPI_Reduce_scatter_block(s, ref, n, MPI_INT, MPI_SUM, comm);
        CHECK(!memcmp(d, ref, n * sizeof(int)), "Reduce_scatter_block_init %d start %d", n, it);
        PMPI_Scan(s, ref, n, MPI_INT, MPI_SUM, comm);
        CHECK(!memcmp(e, ref, n * sizeof(int)), "Scan_init %d start %d", n, it);
        PMPI_Scatter(s, n / size + 1, MPI_INT, ref, n / size + 1, MPI_INT, root, comm);
        CHECK(!scatter || !memcmp(sc, ref, (n / size + 1) * sizeof(int)),
              "Scatter_init %d start %d", n, it);
        PMPI_Reduce_scatter(s, ref, cnt, MPI_INT, MPI_MAX, comm);
        CHECK(!memcmp(e + n, ref, cnt[rank] * sizeof(int)), "Reduce_scatter_init %d start %d", n,
              it);
        PMPI_Exscan(s, ref, n, MPI_INT, MPI_BXOR, comm);
        CHECK(rank == 0 || !memcmp(sv, ref, n * sizeof(int)), "Exscan_init %d start %d", n, it);
        PMPI_Scatterv(s, cnt, dsp, MPI_INT, ref, cnt[rank], MPI_INT, root, comm);
        CHECK(!memcmp(e + 2 * n, ref, cnt[rank] * sizeof(int)), "Scatterv_init %d start %d", n, it);
    }
    for (int k = 0; k < 7; k++) MPI_Request_free(&q[k]);
    free(s), free(d), free(ref), free(cnt), free(e), free(sc), free(dsp), free(sv);
}

/* An inactive request, a start of an active one, a non-contiguous Bcast
 * (native persistent request), a persistent request beside a native
 * persistent point-to-point pair in one MPI_Startall. */
static void semantics(MPI_Comm comm)
{
    const int rank = rank_in(comm);
    double x = rank, y = 0;
    MPI_Request r, a[3];
    MPI_Status st;
    PINIT(Allreduce)(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &r);
    uint64_t before = nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    /* topocoll's request (MPICH 4.0.2's own hangs in MPI_Wait when never
     * started, and does not check a second start) */
    const int ours = nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE) > before;
    topocoll_comm_info_t ci = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &ci);
    CHECK(ours || !ci.enabled || ci.nnodes > 1,
          "Allreduce_init of one on one node: not topocoll's");
    int flag = 0;
    if (ours) {
        CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r != MPI_REQUEST_NULL,
              "Wait on an inactive persistent request");
        CHECK(st.MPI_ERROR == MPI_SUCCESS && st.MPI_TAG == MPI_ANY_TAG, "inactive: empty status");
        CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag, "Test on inactive");
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Start(&r);
    if (ours) {
        int rc = MPI_Start(&r), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST, "Start of an active request: class %d", cls);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(y == size * (size - 1) / 2.0, "Allreduce_init of one: %g", y);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);

    int sendv = rank * 10, recvv = -1, vec[30];
    MPI_Datatype v;
    MPI_Type_vector(10, 1, 3, MPI_INT, &v);
    MPI_Type_commit(&v);
    for (int i = 0; i < 30; i++) vec[i] = rank == 0 ? i : -1;
    PINIT(Bcast)(vec, 1, v, 0, comm, MPI_INFO_NULL, &a[0]);
    MPI_Send_init(&sendv, 1, MPI_INT, (rank + 1) % size, 5, comm, &a[1]);
    MPI_Recv_init(&recvv, 1, MPI_INT, (rank + size - 1) % size, 5, comm, &a[2]);
    for (int it = 0; it < 3; it++) {
        MPI_Startall(3, a);
        MPI_Waitall(3, a, sts);
        int bad = 0;
        for (int i = 0; i < 30; i++) bad += vec[i] != (i % 3 == 0 || rank == 0 ? i : -1);
        CHECK(!bad && recvv == ((rank + size - 1) % size) * 10,
              "Startall of a vector Bcast_init and a native pair: %d wrong, got %d", bad, recvv);
    }
    for (int k = 0; k < 3; k++) MPI_Request_free(&a[k]);
    MPI_Type_free(&v);
    MPI_Request_free(&r);
}

static topocoll_comm_info_t query(MPI_Comm comm)
{
    topocoll_comm_info_t i = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(comm, &i);
    return i;
}

/* A persistent request declares each buffer's single-copy region once
 * (KNEM's registration), not at every start: an Allreduce and a Bcast of
 * 1 MiB, STARTS * 2 starts, declare at most their four buffers' regions,
 * where the same blocking calls declare one or two per call.  Freed
 * requests leave no region behind: the communicator's context is then
 * taken over by the next communicator of its group, which a live region
 * prevents (request freed first, or communicator freed first). */
static void kept_regions(void)
{
    enum { N = 1 << 17, K = 2 * STARTS };
    double *a = malloc(N * sizeof(double)), *r = malloc(N * sizeof(double));
    double *ref = malloc(N * sizeof(double));
    /* whether a freed communicator's context is taken over here at all
     * (not with a progress thread's communication core) */
    MPI_Comm c0;
    MPI_Comm_dup(MPI_COMM_WORLD, &c0);
    MPI_Barrier(c0);
    MPI_Comm_free(&c0);
    MPI_Comm_dup(MPI_COMM_WORLD, &c0);
    MPI_Barrier(c0);
    const int reuse = query(c0).reused;
    MPI_Comm_free(&c0);
    for (int order = 0; order < 2; order++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Barrier(comm); /* (built) */
        const int rank = rank_in(comm);
        MPI_Request req[2];
        PINIT(Allreduce)(a, r, N, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &req[0]);
        PINIT(Bcast)(r, N, MPI_DOUBLE, 1 % size, comm, MPI_INFO_NULL, &req[1]);
        const uint64_t d0 = query(comm).regions_declared;
        for (int it = 0; it < K; it++) {
            for (int i = 0; i < N; i++) a[i] = (double)(rank + 1) * (i % 31) + it;
            PMPI_Allreduce(a, ref, N, MPI_DOUBLE, MPI_SUM, comm);
            MPI_Start(&req[0]);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            int bad = 0;
            for (int i = 0; i < N; i++) bad += r[i] != ref[i];
            CHECK(!bad, "kept regions: Allreduce start %d: %d wrong", it, bad);
            if (rank == 1 % size)
                for (int i = 0; i < N; i++) r[i] = (double)(i + it);
            MPI_Start(&req[1]);
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            bad = 0;
            for (int i = 0; i < N; i++) bad += r[i] != (double)(i + it);
            CHECK(!bad, "kept regions: Bcast start %d: %d wrong", it, bad);
        }
        const uint64_t persist = query(comm).regions_declared - d0;
        for (int it = 0; it < K; it++) {
            MPI_Allreduce(a, r, N, MPI_DOUBLE, MPI_SUM, comm);
            MPI_Bcast(r, N, MPI_DOUBLE, 1 % size, comm);
        }
        const uint64_t blocking = query(comm).regions_declared - d0 - persist;
        const topocoll_comm_info_t ci = query(comm);
        CHECK(persist <= 4, "%d starts of a persistent Allreduce and Bcast declared %llu regions",
              K, (unsigned long long)persist);
        /* with the static choice (TOPOCOLL_TUNE=0) they run by single copy,
         * so the check above can fail: the blocking calls declare at each */
        const char *tune = getenv("TOPOCOLL_TUNE");
        if (tune && !strcmp(tune, "0") && ci.enabled && ci.single_copy && size > 1) {
            CHECK(blocking >= K, "%d blocking Allreduce and Bcast declared %llu regions", K,
                  (unsigned long long)blocking);
            CHECK(persist >= 1, "%d single-copy starts declared no region", K);
        }
        if (order == 0) {
            MPI_Request_free(&req[0]);
            MPI_Request_free(&req[1]);
            MPI_Comm_free(&comm);
        } else { /* the communicator first: its context takes the regions */
            MPI_Comm_free(&comm);
            MPI_Request_free(&req[0]);
            MPI_Request_free(&req[1]);
        }
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Barrier(comm);
        if (reuse)
            CHECK(query(comm).reused,
                  "freed persistent requests (%s first) left regions behind: "
                  "the next communicator did not reuse the context",
                  order ? "communicator" : "requests");
        MPI_Comm_free(&comm);
    }
    free(a), free(r), free(ref);
}

/* TOPOCOLL_PERSIST=0: every persistent request is the native MPI's, on a
 * built context too; the blocking call stays topocoll's. */
static void persist_off(void)
{
    enum { N = 1000 };
    static double s[N], d[N], ref[N];
    static double big[1 << 16];
    MPI_Allreduce(MPI_IN_PLACE, big, 1 << 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* (builds) */
    topocoll_comm_info_t ci = TOPOCOLL_COMM_INFO_INIT;
    CHECK(topocoll_comm_query(MPI_COMM_WORLD, &ci) == MPI_SUCCESS && ci.built,
          "persist off: the context is not built");
    MPI_Request r;
    PINIT(Allreduce)(s, d, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    const uint64_t before = nb_runs(MPI_COMM_WORLD, TOPOCOLL_COLL_ALLREDUCE);
    for (int it = 0; it < STARTS; it++) {
        for (int i = 0; i < N; i++) s[i] = (double)(wrank * 3 + i % 71 + it);
        PMPI_Allreduce(s, ref, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(!memcmp(d, ref, sizeof d), "persist off: start %d wrong", it);
    }
    CHECK(nb_runs(MPI_COMM_WORLD, TOPOCOLL_COLL_ALLREDUCE) == before,
          "persist off: topocoll ran %d starts",
          (int)(nb_runs(MPI_COMM_WORLD, TOPOCOLL_COLL_ALLREDUCE) - before));
    MPI_Request_free(&r);
}

/* A deferred request (below) that outlives its communicator, freed
 * before the request: first thing in the process, before any nonblocking
 * call starts the engine.  What fails here is the sanitizer build's
 * check (a context read after it was freed), not this test's. */
static void deferred_orphan(void)
{
    const char *lz = getenv("TOPOCOLL_COMM_LAZY");
    if (!lz || atoi(lz) <= 0) return;
    MPI_Comm comm;
    double s[64] = { 0 }, d[64];
    MPI_Request r;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    PINIT(Allreduce)(s, d, 64, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &r);
    MPI_Comm_free(&comm);
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "deferred: Request_free after Comm_free");
}

/* Requests made on a communicator whose context is not built yet (run
 * with TOPOCOLL_COMM_LAZY > 0; a new communicator, the usual place of an
 * init): the native MPI runs their starts until a blocking collective
 * builds the context (the init asks for it), then topocoll does, under the
 * same handles.  A derived datatype freed after its init must still be
 * right at every start. */
static void deferred(void)
{
    const char *lz = getenv("TOPOCOLL_COMM_LAZY");
    if (!lz || atoi(lz) <= 0) return;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const int n = 1000, b = 3000, root = size - 1, rank = rank_in(comm);
    double *s = malloc(n * sizeof(double)), *d = malloc(n * sizeof(double)),
           *ref = malloc(n * sizeof(double));
    int *cnt = malloc(size * sizeof(int)), *dsp = malloc(size * sizeof(int)), tot = 0;
    for (int r = 0; r < size; r++) cnt[r] = (r + 1) * b, dsp[r] = tot, tot += cnt[r];
    char *bc = malloc(b), *sb = malloc(cnt[rank] * 2), *agv = malloc(tot * 2);
    MPI_Datatype pair; /* two chars: freed after the inits */
    MPI_Type_contiguous(2, MPI_CHAR, &pair);
    MPI_Type_commit(&pair);
    MPI_Request r[3];
    PINIT(Allreduce)(s, d, n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &r[0]);
    PINIT(Bcast)(bc, b, MPI_CHAR, root, comm, MPI_INFO_NULL, &r[1]);
    PINIT(Allgatherv)(sb, cnt[rank], pair, agv, cnt, dsp, pair, comm, MPI_INFO_NULL, &r[2]);
    MPI_Type_free(&pair);
    topocoll_comm_info_t ci = TOPOCOLL_COMM_INFO_INIT;
    CHECK(topocoll_comm_query(comm, &ci) != MPI_SUCCESS || !ci.built,
          "deferred: the context was built by an init");
    enum { BUILD_AT = 2, RUNS = 6 };
    for (int it = 0; it < RUNS; it++) {
        if (it == BUILD_AT) { /* a blocking collective: it builds the context */
            int one = 1, all = 0;
            MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, comm);
            CHECK(all == size, "deferred: Allreduce %d", all);
        }
        for (int i = 0; i < n; i++) s[i] = (double)((rank + 1) * (i % 89) + it);
        if (rank == root)
            for (int i = 0; i < b; i++) bc[i] = (char)(i * 7 + it);
        for (int i = 0; i < cnt[rank] * 2; i++) sb[i] = (char)(rank * 31 + i + it);
        uint64_t ar0 = nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE),
                 bc0 = nb_runs(comm, TOPOCOLL_COLL_BCAST),
                 agv0 = nb_runs(comm, TOPOCOLL_COLL_ALLGATHERV);
        MPI_Startall(3, r);
        if (it % 2)
            MPI_Waitall(3, r, sts);
        else
            for (int k = 0; k < 3; k++) complete((it + k) % 6, &r[k], comm, 1);
        PMPI_Allreduce(s, ref, n, MPI_DOUBLE, MPI_SUM, comm);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += d[i] != ref[i];
        CHECK(!bad, "deferred Allreduce_init start %d: %d wrong", it, bad);
        bad = 0;
        for (int i = 0; i < b; i++) bad += bc[i] != (char)(i * 7 + it);
        CHECK(!bad, "deferred Bcast_init start %d: %d wrong", it, bad);
        bad = 0; /* (rank q's cnt[q] pairs at pair dsp[q]) */
        for (int q = 0; q < size; q++)
            for (int i = 0; i < cnt[q] * 2; i++)
                bad += agv[2 * dsp[q] + i] != (char)(q * 31 + i + it);
        CHECK(!bad, "deferred Allgatherv_init start %d: %d wrong", it, bad);
        CHECK(topocoll_comm_query(comm, &ci) == MPI_SUCCESS && ci.built == (it >= BUILD_AT),
              "deferred: built %d at start %d", ci.built, it);
        /* before the build the native MPI ran them; after it, topocoll */
        const uint64_t want = it >= BUILD_AT && ci.enabled;
        CHECK(nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE) - ar0 == want &&
                  nb_runs(comm, TOPOCOLL_COLL_BCAST) - bc0 == want &&
                  nb_runs(comm, TOPOCOLL_COLL_ALLGATHERV) - agv0 == want,
              "deferred start %d: topocoll ran %d %d %d, want %d", it,
              (int)(nb_runs(comm, TOPOCOLL_COLL_ALLREDUCE) - ar0),
              (int)(nb_runs(comm, TOPOCOLL_COLL_BCAST) - bc0),
              (int)(nb_runs(comm, TOPOCOLL_COLL_ALLGATHERV) - agv0), (int)want);
    }
    for (int k = 0; k < 3; k++) MPI_Request_free(&r[k]);
    CHECK(r[0] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL, "deferred: Request_free");
    MPI_Comm_free(&comm);
    free(s), free(d), free(ref), free(cnt), free(dsp), free(bc), free(sb), free(agv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = wrank;
    tc_print_max = 20;
    const char *po = getenv("TOPOCOLL_PERSIST");
    if (po && !strcmp(po, "0")) {
        persist_off();
        int f = tc_report("test_persist");
        MPI_Finalize();
        return f != 0;
    }
    deferred_orphan();
    /* built by blocking calls first: an init is local, it never builds a
     * context (then the native MPI makes the request) */
    MPI_Comm rev, dup;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    static double big[1 << 16];
    MPI_Allreduce(MPI_IN_PLACE, big, 1 << 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, big, 1 << 16, MPI_DOUBLE, MPI_SUM, rev);
    semantics(MPI_COMM_WORLD);
    semantics(rev); /* (its errors go through rev's handler) */
    const int counts[] = { 0, 1, 7, 1000, 8192, 70001 };
    for (int i = 0; i < 6; i++) reductions(MPI_COMM_WORLD, counts[i], i % 2, i);
    reductions(rev, 8192, 0, 3);
    reductions(dup, 513, 1, 1); /* (not built: the native MPI's requests) */
    const int blocks[] = { 1, 100, 3000, 70001 };
    for (int i = 0; i < 4; i++) exchanges(i % 2 ? rev : MPI_COMM_WORLD, blocks[i]);
    packed(MPI_COMM_WORLD, 1);
    packed(rev, 3000);
    others(MPI_COMM_WORLD, 5);
    others(rev, 40000);
    kept_regions();
    deferred();
    MPI_Comm_free(&rev);
    MPI_Comm_free(&dup);
    int f = tc_report("test_persist");
    MPI_Finalize();
    return f != 0;
}
