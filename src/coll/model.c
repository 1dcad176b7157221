/* coll/model -- see model.h. */
#include "model.h"

#include <math.h>

int tc_st_height(int n)
{
    int h = 0;
    while (n > 1 && (1 << h) < n) h++;
    return h;
}

int tc_st_messages(int n, int level)
{
    /* floor(N / 2^i + 1/2) = floor((N + 2^(i-1)) / 2^i) in integers */
    if (level < 1) return 0;
    long long p = 1LL << level;
    return (int)(((long long)n + p / 2) / p);
}

double tc_st_compute(int n, int nproc)
{
    return n > 0 ? (double)nproc / n * tc_st_height(nproc) : 0.0;
}

/* The H(N) - S folded levels on P communication cores. */
static double folded(int s, int n, int nproc, int var)
{
    int h = tc_st_height(n), p = nproc - n;
    double t = 0;
    for (int i = s + 1; i <= h; i++) {
        if (p <= 0) return HUGE_VAL;
        int f = tc_st_messages(n, i);
        t += (double)((f + p - 1) / p) * (var ? (double)(1LL << (i - 1)) : 1.0);
    }
    return t;
}

/* The S levels on the application cores: min(S, H), or W(N, S) = sum of
 * 2^(i-1) for i <= min(S, H) with @var. */
static double on_app(int s, int n, int var)
{
    int h = tc_st_height(n), k = s < h ? s : h;
    return var ? (double)((1LL << k) - 1) : (double)k;
}

double tc_st_time_nb(int s, int n, int nproc, int var)
{
    return on_app(s, n, var) + folded(s, n, nproc, var);
}

double tc_st_time_ov(int s, int n, int nproc, int var)
{
    double f = folded(s, n, nproc, var), c = tc_st_compute(n, nproc);
    return on_app(s, n, var) + (f > c ? f : c);
}

int tc_st_best_s(int n, int nproc, int var)
{
    int best = 0, h = tc_st_height(n);
    for (int s = 1; s <= h; s++)
        if (tc_st_time_ov(s, n, nproc, var) < tc_st_time_ov(best, n, nproc, var)) best = s;
    return best;
}

int tc_place_numa(int ncores, int ntasks, int m)
{
    if (ntasks >= ncores) return m;
    if (ntasks < 0) ntasks = 0; /* more communication cores than cores: every core is one */
    int d = ncores / (ncores - ntasks);
    return (m / d + 1) * d - 1;
}

int tc_place_oddeven(int ncores, int ntasks, int r)
{
    if (ntasks >= ncores) return -1;
    if (ntasks < 0) ntasks = 0;
    int free = ncores - ntasks, q = ncores / free;
    return q * (r % free) + q - 1;
}
