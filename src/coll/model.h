/*
 * coll/model -- the split-tree performance model (progress-threads paper,
 * section 6.2, equations 3 to 9) and the progress-thread placements
 * (sections 4 and 5, equations 1 and 2).  Pure arithmetic: no MPI, no
 * threads; coll/tree and the nonblocking layer use it to choose S (the number of
 * leaf-side tree levels run on the application cores) and where progress
 * threads go, and topocoll_info prints its table.
 *
 * Units: the time to transfer one buffer of the collective's size between
 * two processes (the paper's unit); computation is sized for perfect
 * overlap, C(Nproc) = H(Nproc).
 *
 * Owns: nothing (stateless, thread-safe).  May call: libc (math).
 */
#ifndef TC_COLL_MODEL_H
#define TC_COLL_MODEL_H

/** H(N) = ceil(log2 N): levels of a binomial tree over N tasks (eq. 3); 0 for N <= 1. */
int tc_st_height(int n);

/** F(N, i) = floor(N / 2^i + 1/2): messages at level i (1 = leaves) of
 *  that tree (eq. 5): F(16, .) = 8 4 2 1, F(23, .) = 12 6 3 1 1. */
int tc_st_messages(int n, int level);

/** C(N) = (Nproc / N) * H(Nproc): computation per task when a fixed total
 *  work sized to the blocking collective on Nproc cores runs on N (eq. 4,
 *  with the ratio as the paper's figures use it). */
double tc_st_compute(int n, int nproc);

/**
 * Time of the nonblocking collective with S leaf-side levels on the
 * application cores and the H(N) - S others folded on the P(N) = Nproc - N
 * communication cores (eq. 6; @var: gather/scatter weights 2^(i-1), eq. 8),
 * and the time of that collective overlapped with C(N) of computation
 * (eq. 7; eq. 9 with @var).  With no communication core (Nproc <= N) the
 * folded part cannot run: HUGE_VAL unless S >= H(N).
 */
double tc_st_time_nb(int s, int n, int nproc, int var);
double tc_st_time_ov(int s, int n, int nproc, int var);

/** The S in 0..H(N) minimising tc_st_time_ov (ties: the smallest S). */
int tc_st_best_s(int n, int nproc, int var);

/**
 * Placement of progress threads (the core, as a position among the cores
 * of a NUMA node or of the machine):
 *  - numa (eq. 1): task at core position @m of a NUMA node of @ncores
 *    cores holding @ntasks tasks: m itself when the node is full, else
 *    (floor(m / d) + 1) * d - 1 with d = ncores / (ncores - ntasks), the
 *    free core closing its group (tasks must leave the cores
 *    (k + 1) * d - 1 free);
 *  - odd-even (eq. 2, chain patterns): rank @r of @ntasks tasks on
 *    @ncores cores: (p / (p - n)) * (r mod (p - n)) + p / (p - n) - 1, so
 *    consecutive ranks' threads land on different communication cores.
 * Integer division throughout; -1 when there is no free core.  @ntasks
 * below 0 (more communication cores asked for than cores) counts as 0.
 */
int tc_place_numa(int ncores, int ntasks, int m);
int tc_place_oddeven(int ncores, int ntasks, int r);

#endif
