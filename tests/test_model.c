/*
 * test_model -- the split-tree model and the progress-thread placements
 * (coll/model) against tables worked out by hand from the paper's
 * equations (progress-threads paper, sections 4 to 6), and against the
 * paper's own figures.  No MPI.
 */
#include "coll/cost.h"
#include "coll/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-3)

/* coll/cost against figures worked out by hand from its formulas (cost.h):
 * alpha 10 us, link 1e8 B/s, 1 us on a node, copy and MPI_SUM 1e9 B/s. */
static void cost_model(void)
{
    tc_cost_params_t p;
    tc_cost_defaults(&p, 8e8);
    CHECK(p.link == 1e8 && p.chain_min == 128u << 10, "defaults: link %g", p.link);
    p.alpha = 10e-6, p.alpha_node = 1e-6, p.copy = 1e9, p.op = 1e9, p.xtune_max = 0;
    tc_cost_t c;
#define T(fn, coll, n, pp, b, want)                                                     \
    do {                                                                                \
        CHECK(fn(coll, n, pp, b, &p, &c) == 0 && fabs(c.t - (want)) < 1e-9,             \
              #fn " %s %dx%d %zu B: %.9f s, want %.9f", tc_cost_coll_name(coll), n, pp, \
              (size_t)(b), c.t, (double)(want));                                        \
    } while (0)
    /* chain of 3 hops, 32 segments of 32 KiB: (3 + 31)(10e-6 + 32768 / 1e8), then the
     * node reads the last segment: 1e-6 + 32768 / 1e9 */
    T(tc_cost_topocoll, TC_COST_BCAST, 4, 2, 1 << 20, 34 * 337.68e-6 + 33.768e-6);
    /* native: tuned's fixed decision at 8 ranks, 1 MiB: linear; the root's 6
     * sends to other nodes one after the other on its link, the last lands
     * 6 n / link + alpha after the start */
    T(tc_cost_native, TC_COST_BCAST, 4, 2, 1 << 20, 6 * 10.48576e-3 + 10e-6);
    CHECK(strcmp(c.alg, "linear") == 0 && c.wire == 6 * 1048576.0 && c.wire_all == c.wire,
          "native 8-rank Bcast: %s, wire %.0f", c.alg, c.wire);
    /* at 16 ranks and 4 MiB, scatter + allgather: the root's node sends n / 2 +
     * n / 4 + n / 8 (its scatter steps to other nodes), then the doubling
     * sends 2 x (2, 4, 8) x n / 16 a node: 2.625 n in all, as topocoll_bench
     * --net counted (11.03 MB at 16 x 4 MiB, 8 hosts x 2) */
    CHECK(tc_cost_native(TC_COST_BCAST, 8, 2, 4 << 20, &p, &c) == 0 &&
              strcmp(c.alg, "scatter + allgather") == 0 && c.wire == 2.625 * (4 << 20),
          "native 16-rank Bcast of 4 MiB: %s, wire %.0f", c.alg, c.wire);
    /* Reduce's binomial tree is the in-order one: at 4 ranks 0 <- 1, 2 and
     * 2 <- 3: one vector crosses (Open MPI moved 65766 B for 64 KiB) */
    CHECK(tc_cost_native(TC_COST_REDUCE, 2, 2, 65536, &p, &c) == 0 && c.wire == 65536.0,
          "native 4-rank Reduce of 64 KiB: %s, wire %.0f", c.alg, c.wire);
    /* Rabenseifner at 4 ranks: distance 1 (n / 2, on the node), then 2 (n / 4
     * from each rank), and back: n a node (Open MPI moved 66152 B for 64 KiB) */
    CHECK(tc_cost_native(TC_COST_ALLREDUCE, 2, 2, 65536, &p, &c) == 0 && c.wire == 65536.0,
          "native 4-rank Allreduce of 64 KiB: %s, wire %.0f", c.alg, c.wire);
    /* on 2 nodes no chain: lg(2) X(n) + the node's read of a segment of n / 8 */
    T(tc_cost_topocoll, TC_COST_BCAST, 2, 2, 1 << 20, 10e-6 + 10.48576e-3 + 1e-6 + 131072e-9);
    /* Allreduce: fold 1e-6 + 524288 x 2e-9; rings 6 (10e-6 + 1 MiB / 4e8); the slices'
     * sums 3 x 131072e-9; the reads 1e-6 + 524288e-9 */
    T(tc_cost_topocoll, TC_COST_ALLREDUCE, 4, 2, 1 << 20,
      1.049576e-3 + 6 * 2.63144e-3 + 0.393216e-3 + 0.525288e-3);
    /* 8 B at or below the flat maximum: the native recursive doubling at 8
     * ranks: distance 1 on the node (I(8) + 8 / op), 2 and 4 between nodes
     * (2 ranks x 8 B on the link: alpha + 16 / link, + 8 / op) */
    T(tc_cost_topocoll, TC_COST_ALLREDUCE, 4, 2, 8, 1.016e-6 + 2 * (10.16e-6 + 8e-9));
    CHECK(strncmp(c.alg, "native", 6) == 0, "8 B Allreduce: %s", c.alg);
    /* Alltoall of 64 KiB blocks: pack and place 2 x 3 x 2 blocks, the node's own
     * 1, 3 messages of P^2 b: 1e-6 + 13 x 65536e-9 + 3 (10e-6 + 4 x 65536 / 1e8) */
    T(tc_cost_topocoll, TC_COST_ALLTOALL, 4, 2, 65536, 1e-6 + 13 * 65536e-9 + 3 * 2631.44e-6);
    CHECK(c.wire == 3 * 4 * 65536.0, "Alltoall wire %.0f", c.wire);
    CHECK(fabs(tc_cost_bound(TC_COST_ALLTOALL, 4, 2, 65536, &p) - 3 * 4 * 65536 / 1e8) < 1e-12,
          "Alltoall bound");
    CHECK(fabs(tc_cost_bound(TC_COST_ALLREDUCE, 4, 2, 1 << 20, &p) - 1.5 * 1048576 / 1e8) < 1e-12,
          "Allreduce bound");
    /* Reduce between 8 leaders, 96 KiB: the block owners (3 segments of 32 KiB, 7 pieces
     * each): the first exchange (6 pieces out), 3 rounds of a segment on a link, 4
     * latencies, the owners' folds of 6 pieces a segment and the root's last segment; the
     * halving's 2 x 3 steps carry n / 2 + n / 4 + n / 8 twice (1.87 ms): the faster */
    {
        const double piece = 32768.0 / 7, ex = 6 * piece;
        T(tc_cost_topocoll, TC_COST_REDUCE, 8, 1, 98304,
          1e-6 + 4 * 10e-6 + ex / 1e8 + 3 * 32768 / 1e8 + 3 * ex / 1e9 + 32768 / 1e9);
        CHECK(strstr(c.alg, "block owners") != NULL && c.wire == 98304.0, "Reduce 8x1 96 KiB: %s",
              c.alg);
    }
    /* Bcast between 8 leaders, 112 KiB: the block owners (7 blocks of 16 KiB, 4 segments
     * of 4 KiB): 2 latencies, 4 rounds of a segment of each block on the root's link, the
     * owners' last 6 segments, the node's read of all blocks but the first; the binomial
     * tree's 3 x n (3.5 ms) */
    T(tc_cost_topocoll, TC_COST_BCAST, 8, 1, 114688,
      2 * 10e-6 + 114688 / 1e8 + 6 * 4096 / 1e8 + 1e-6 + 98304 / 1e9);
    CHECK(strstr(c.alg, "block owners") != NULL && c.wire == 114688.0, "Bcast 8x1 112 KiB: %s",
          c.alg);
    /* two levels: 2 leaf switches of 4 nodes, uplinks at half the link (5e7 B/s) */
    tc_cost_t flat;
    CHECK(tc_cost_native(TC_COST_ALLREDUCE, 8, 2, 1 << 20, &p, &flat) == 0, "flat Allreduce");
    p.switches = 2, p.uplink = 5e7;
    /* Allreduce by switch, 1 MiB: fold 1e-6 + 524288 x 2e-9; 2 (k + S - 2) = 8 latencies;
     * the uplink's 2 (S - 1) / S n = 1 MiB at 5e7 (the link's 1.75 MiB at 1e8 is less);
     * the slices' sums 7 x 65536e-9; the reads 1e-6 + 524288e-9 */
    T(tc_cost_topocoll, TC_COST_ALLREDUCE, 8, 2, 1 << 20,
      1.049576e-3 + 80e-6 + 20.97152e-3 + 458.752e-6 + 525.288e-6);
    CHECK(strstr(c.alg, "by switch") != NULL, "Allreduce under switches: %s", c.alg);
    CHECK(fabs(tc_cost_bound(TC_COST_ALLREDUCE, 8, 2, 1 << 20, &p) - 20.97152e-3) < 1e-12,
          "Allreduce bound under switches");
    /* Allgather by switch, 64 KiB blocks: the node's copies 1e-6 + 15 x 65536e-9; k + S - 2
     * = 4 latencies; the ring across, a node's 128 KiB from each of the k = 4 leaders
     * through the uplink at 5e7, its node then 3 hops in the switch at 1e8 (the switch's
     * ring's 6 nodes' blocks at 1e8 take less) */
    T(tc_cost_topocoll, TC_COST_ALLGATHER, 8, 2, 65536,
      984.04e-6 + 40e-6 + 10.48576e-3 + 3 * 131072e-8);
    /* it takes precedence over the leaders' recursive doubling (8 KiB blocks) */
    CHECK(tc_cost_topocoll(TC_COST_ALLGATHER, 8, 2, 8192, &p, &c) == 0 &&
              strstr(c.alg, "by switch") != NULL,
          "Allgather of 8 KiB blocks under switches: %s", c.alg);
    /* Reduce between 8 leaders (Rabenseifner, 96 KiB): the halving step at distance 4 sends
     * n / 2 from every leader across, the 4 of a switch through its uplink together (4 x
     * 48 KiB at 5e7: 3.93 ms); the gather back at distance 4, one leader a switch; the steps
     * at distances 2 and 1 stay in the switch */
    CHECK(tc_cost_topocoll(TC_COST_REDUCE, 8, 1, 98304, &p, &c) == 0 &&
              strstr(c.alg, "Rabenseifner") != NULL,
          "Reduce under switches: %s (the owners' 16 pieces a round through an uplink are slower)",
          c.alg);
    {
        const double m1 = 49152, m2 = 24576, m3 = 12288;
        const double want = 1e-6 + (10e-6 + 4 * m1 / 5e7) + m1 / 1e9 + (10e-6 + m1 / 5e7) +
                            2 * (10e-6 + m2 / 1e8) + m2 / 1e9 + 2 * (10e-6 + m3 / 1e8) + m3 / 1e9;
        CHECK(fabs(c.t - want) < 1e-9, "Reduce under switches: %.9f s, want %.9f", c.t, want);
    }
    CHECK(fabs(tc_cost_bound(TC_COST_ALLGATHER, 8, 2, 65536, &p) - 10.48576e-3) < 1e-12,
          "Allgather bound under switches");
    /* native Rabenseifner at 16 ranks: its two steps at distance 8 send all 8 ranks of a
     * switch through its uplink, n / 16 each: n / 2 at 5e7 where the node's link carried
     * 2 x n / 16 at 1e8 */
    CHECK(tc_cost_native(TC_COST_ALLREDUCE, 8, 2, 1 << 20, &p, &c) == 0 &&
              fabs(c.t - flat.t - 2 * (10.48576e-3 - 1.31072e-3)) < 1e-9,
          "native Allreduce under switches: %.9f s, flat %.9f s", c.t, flat.t);
    /* an uplink far faster than the links changes nothing (the trees: native binomial Bcast
     * at 16 ranks, 6000 B) */
    p.uplink = 0; /* unlimited */
    CHECK(tc_cost_native(TC_COST_BCAST, 4, 4, 6000, &p, &flat) == 0, "Bcast");
    p.uplink = 1e12;
    CHECK(tc_cost_native(TC_COST_BCAST, 4, 4, 6000, &p, &c) == 0 && fabs(c.t - flat.t) < 1e-9,
          "native Bcast, uplinks at 1e12: %.9f s, unlimited %.9f s", c.t, flat.t);
    p.uplink = 5e7;
    CHECK(tc_cost_native(TC_COST_BCAST, 4, 4, 6000, &p, &c) == 0 && c.t > flat.t,
          "native Bcast, uplinks at 5e7: %.9f s, unlimited %.9f s", c.t, flat.t);
    /* switches with unlimited uplinks: the switches' plans, at the links' pace */
    CHECK(tc_cost_topocoll(TC_COST_ALLREDUCE, 8, 2, 1 << 20, &p, &c) == 0 && isfinite(c.t) &&
              strstr(c.alg, "by switch") != NULL,
          "Allreduce under switches, uplinks unlimited: %g s (%s)", c.t, c.alg);
    CHECK(tc_cost_topocoll(TC_COST_ALLGATHER, 8, 2, 65536, &p, &c) == 0 && isfinite(c.t),
          "Allgather under switches, uplinks unlimited: %g s", c.t);
    p.uplink = 5e7, p.switches = 3;
    CHECK(tc_cost_topocoll(TC_COST_ALLREDUCE, 8, 2, 1 << 20, &p, &c) == -1,
          "3 switches do not divide 8 nodes");
    p.switches = 0, p.uplink = 0;
    /* emulation: 8 ranks on 2 cores wait 3 x sched more per message: the
     * 2-node binomial Bcast of 8 B, X(8) + the flag: (10 + 30) + (1 + 30) us + 8 B */
    p.cores = 2, p.sched = 10e-6, p.cpu = 0;
    T(tc_cost_topocoll, TC_COST_BCAST, 4, 2, 8, 2 * (40e-6 + 8e-8) + 31e-6 + 8e-9);
    /* and its floor: the node copies 4 x 1 x 1 MiB over 2 cores at 1e9 B/s, and
     * 3 MiB on the links at 1e6 B/s */
    p.sched = 0, p.cpu = 1e6;
    T(tc_cost_topocoll, TC_COST_BCAST, 4, 2, 1 << 20, 3 * 1048576 / 1e6 + 4 * 1048576 / 2e9);
    CHECK(tc_cost_native(TC_COST_NCOLLS, 4, 2, 8, &p, &c) == -1 &&
              tc_cost_topocoll(TC_COST_BCAST, 0, 2, 8, &p, &c) == -1,
          "bad collective, bad shape");
    CHECK(tc_cost_coll("alltoall") == TC_COST_ALLTOALL && tc_cost_coll("gatherv") == -1, "names");
#undef T
}

int main(void)
{
    /* eq. 5, Figure 11: F(16, .) = 8 4 2 1, F(23, .) = 12 6 3 1 1 */
    static const int f16[] = { 8, 4, 2, 1 }, f23[] = { 12, 6, 3, 1, 1 };
    CHECK(tc_st_height(16) == 4 && tc_st_height(23) == 5 && tc_st_height(1) == 0 &&
              tc_st_height(2) == 1,
          "H");
    for (int i = 1; i <= 4; i++)
        CHECK(tc_st_messages(16, i) == f16[i - 1], "F(16,%d) = %d", i, tc_st_messages(16, i));
    for (int i = 1; i <= 5; i++)
        CHECK(tc_st_messages(23, i) == f23[i - 1], "F(23,%d) = %d", i, tc_st_messages(23, i));

    /* Figure 10's case, N = 16 on 18 cores (P = 2), by hand:
     * C(16) = 18/16 * H(18) = 18/16 * 5 = 5.625; folded levels ceil(F/2) = 4 2 1 1.
     *   S=0: 0 + max(5.625, 8) = 8        S=1: 1 + max(5.625, 4) = 6.625
     *   S=2: 2 + max(5.625, 2) = 7.625    S=3: 3 + 5.625 = 8.625    S=4: 9.625
     * non-overlapped (eq. 6): 8, 5, 4, 4, 4.  Best S = 1. */
    static const double ov16[] = { 8, 6.625, 7.625, 8.625, 9.625 }, nb16[] = { 8, 5, 4, 4, 4 };
    for (int s = 0; s <= 4; s++) {
        CHECK(NEAR(tc_st_time_ov(s, 16, 18, 0), ov16[s]), "T_ov(S=%d, 16, 18) = %.3f, want %.3f", s,
              tc_st_time_ov(s, 16, 18, 0), ov16[s]);
        CHECK(NEAR(tc_st_time_nb(s, 16, 18, 0), nb16[s]), "T_nb(S=%d, 16, 18) = %.3f", s,
              tc_st_time_nb(s, 16, 18, 0));
    }
    CHECK(tc_st_best_s(16, 18, 0) == 1, "N=16 on 18 cores: best S %d", tc_st_best_s(16, 18, 0));
    /* Figure 9: 16 tasks folded on 2 communication cores take 8 rounds (S = 0) instead of 4. */
    CHECK(NEAR(tc_st_time_nb(0, 16, 18, 0), 8) && NEAR(tc_st_time_nb(4, 16, 18, 0), 4), "Figure 9");

    /* Figure 11's tree, N = 23: on 24 cores (P = 1), C = 24/23 * 5 = 5.217,
     * folded ceil(F/1) = 12 6 3 1 1:
     *   S=0: max(5.217, 23) = 23   S=1: 1 + 11 = 12   S=2: 2 + max(5.217, 5) = 7.217
     *   S=3: 8.217   S=4: 9.217   S=5: 10.217                          best S = 2;
     * on 26 cores (P = 3), C = 26/23 * 5 = 5.652, folded ceil(F/3) = 4 2 1 1 1:
     *   S=0: max(5.652, 9) = 9   S=1: 1 + max(5.652, 5) = 6.652   S=2: 7.652 ...  best S = 1. */
    static const double ov23a[] = { 23, 12, 7.217, 8.217, 9.217, 10.217 };
    for (int s = 0; s <= 5; s++)
        CHECK(NEAR(tc_st_time_ov(s, 23, 24, 0), ov23a[s]), "T_ov(S=%d, 23, 24) = %.3f, want %.3f",
              s, tc_st_time_ov(s, 23, 24, 0), ov23a[s]);
    CHECK(tc_st_best_s(23, 24, 0) == 2 && tc_st_best_s(23, 26, 0) == 1,
          "N=23: best S %d (24 cores), %d (26)", tc_st_best_s(23, 24, 0), tc_st_best_s(23, 26, 0));
    CHECK(NEAR(tc_st_time_ov(0, 23, 26, 0), 9) && NEAR(tc_st_time_ov(1, 23, 26, 0), 6.652),
          "N=23 on 26 cores");

    /* The paper's discussion (Nproc = 64): minimum 7.529 at N = 51, S = 0;
     * best S = 1 at N = 57, 2 at N = 60, 3 at N = 62; switches at 52, 58, 62. */
    double bestt = HUGE_VAL;
    int bestn = 0;
    for (int n = 2; n < 64; n++) {
        double t = tc_st_time_ov(tc_st_best_s(n, 64, 0), n, 64, 0);
        if (t < bestt) {
            bestt = t;
            bestn = n;
        }
    }
    CHECK(bestn == 51 && NEAR(bestt, 7.529) && tc_st_best_s(51, 64, 0) == 0, "optimum N=%d T=%.3f",
          bestn, bestt);
    CHECK(tc_st_best_s(57, 64, 0) == 1 && tc_st_best_s(60, 64, 0) == 2 &&
              tc_st_best_s(62, 64, 0) == 3,
          "best S at 57/60/62: %d %d %d", tc_st_best_s(57, 64, 0), tc_st_best_s(60, 64, 0),
          tc_st_best_s(62, 64, 0));
    CHECK(tc_st_best_s(51, 64, 0) == 0 && tc_st_best_s(52, 64, 0) == 1 &&
              tc_st_best_s(57, 64, 0) == 1 && tc_st_best_s(58, 64, 0) == 2 &&
              tc_st_best_s(61, 64, 0) == 2,
          "switch points 52, 58, 62");
    /* Nproc = 16: S = 0 up to N = 12, 1 for 13-14, 2 for 15; optimum at N = 12 */
    for (int n = 2; n <= 12; n++)
        CHECK(tc_st_best_s(n, 16, 0) == 0, "16 cores, N=%d: S %d", n, tc_st_best_s(n, 16, 0));
    CHECK(tc_st_best_s(13, 16, 0) == 1 && tc_st_best_s(14, 16, 0) == 1 &&
              tc_st_best_s(15, 16, 0) == 2,
          "16 cores, 13-15");
    bestt = HUGE_VAL;
    for (int n = 2; n < 16; n++) {
        double t = tc_st_time_ov(tc_st_best_s(n, 16, 0), n, 16, 0);
        if (t < bestt) {
            bestt = t;
            bestn = n;
        }
    }
    CHECK(bestn == 12, "16 cores: optimum at N=%d", bestn);
    /* no communication core: only S = H is finite */
    CHECK(isinf(tc_st_time_ov(0, 16, 16, 0)) && NEAR(tc_st_time_ov(4, 16, 16, 0), 4 + 4) &&
              tc_st_best_s(16, 16, 0) == 4,
          "no communication core");
    /* gather/scatter weights (eq. 8), N = 16 on 18 cores, by hand:
     * S=0: 4*1 + 2*2 + 1*4 + 1*8 = 20; S=2: W = 1 + 2 = 3, + 1*4 + 1*8 = 15 */
    CHECK(NEAR(tc_st_time_nb(0, 16, 18, 1), 20) && NEAR(tc_st_time_nb(2, 16, 18, 1), 15), "eq. 8");

    /* placements: eq. 1 and eq. 2, the notes' checks */
    for (int m = 0; m < 3; m++)
        CHECK(tc_place_numa(4, 3, m) == 3, "4-core NUMA node, 3 tasks: core 3");
    for (int m = 0; m <= 30; m++) CHECK(tc_place_numa(64, 62, m) == 31, "KNL: core %d -> 31", m);
    for (int m = 32; m <= 62; m++) CHECK(tc_place_numa(64, 62, m) == 63, "KNL: core %d -> 63", m);
    CHECK(tc_place_numa(4, 4, 2) == 2, "full NUMA node: bind");
    for (int r = 0; r < 62; r++)
        CHECK(tc_place_oddeven(64, 62, r) == (r % 2 ? 63 : 31), "odd-even: rank %d -> %d", r,
              tc_place_oddeven(64, 62, r));
    CHECK(tc_place_oddeven(16, 14, 3) == 15 && tc_place_oddeven(16, 14, 4) == 7,
          "odd-even on 16 cores");
    CHECK(tc_place_oddeven(2, 2, 0) == -1, "no free core");
    /* more communication cores asked for than the node has (TOPOCOLL_COMM_CORES=3 on
     * 2 cores): every core is a communication core, no division by zero */
    CHECK(tc_place_numa(2, -1, 1) == 1 && tc_place_numa(2, -1, 0) == 0, "numa: 3 on 2 cores");
    CHECK(tc_place_oddeven(2, -1, 1) == 1, "odd-even: 3 on 2 cores");

    cost_model();
    printf("test_model: %d checks, %d failures\n", tc_checks, tc_failures);
    return tc_failures != 0;
}
