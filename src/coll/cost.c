/* coll/cost -- see cost.h. */
#include "cost.h"
#include "owners.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[TC_COST_NCOLLS] = { "bcast",     "reduce",   "allreduce",
                                                   "allgather", "alltoall", "barrier" };

int tc_cost_coll(const char *name)
{
    for (int c = 0; c < TC_COST_NCOLLS; c++)
        if (strcmp(name, names[c]) == 0) return c;
    return -1;
}

const char *tc_cost_coll_name(int coll)
{
    return coll >= 0 && coll < TC_COST_NCOLLS ? names[coll] : "?";
}

void tc_cost_defaults(tc_cost_params_t *p, double link_bps)
{
    /* docs/scaling.md, "The model's parameters": the 1 Gbit/s ping-pong's
     * latency between two emulated hosts, the node's rates measured on one
     * host (topocoll_bench). */
    *p = (tc_cost_params_t){ .alpha = 25e-6,
                             .link = link_bps / 8,
                             .alpha_node = 1e-6,
                             .copy = 4e9,
                             .op = 4e9,
                             .chain_min = 128u << 10,
                             .halving_min = 64u << 10,
                             .bcast_owners_min = 16u << 10,
                             .allgather_rd_max = 16u << 10,
                             .xtune_max = 256u << 10,
                             .flat_max = { [TC_COST_REDUCE] = 8u << 10,
                                           [TC_COST_ALLREDUCE] = 64u << 10,
                                           [TC_COST_ALLGATHER] = 4u << 10,
                                           [TC_COST_ALLTOALL] = 32u << 10 } };
}

/* ceil(log2 x), 0 for x <= 1 */
static int lg(int x)
{
    int h = 0;
    while ((1LL << h) < x) h++;
    return h;
}

/* The model's working state for one call. */
typedef struct shape {
    int N, P, R;
    int S, k;     /* leaf switches (1: one level), nodes under each */
    double up;    /* B/s: a switch's uplink; 0: unlimited (or one level) */
    double n;     /* the vector, or the block */
    double a, an; /* a message between nodes, a handoff on a node (s), emulation included */
    const tc_cost_params_t *p;
} shape_t;

static double X(const shape_t *s, double m) { return s->a + m / s->p->link; }
static double I(const shape_t *s, double m) { return s->an + m / s->p->copy; }
/* s per byte through an uplink (0 where unlimited) */
static double up_per_byte(const shape_t *s) { return s->up > 0 ? 1 / s->up : 0; }
static double dmax(double a, double b) { return a > b ? a : b; }
/* s per byte of a message between nodes that crosses switches (@cross),
 * alone on the uplinks: the slower of the node's link and the uplink */
static double per_byte(const shape_t *s, int cross)
{
    return cross ? dmax(1 / s->p->link, up_per_byte(s)) : 1 / s->p->link;
}
/* s: @m bytes through an uplink (0 where unlimited) */
static double up_time(const shape_t *s, double m) { return m * up_per_byte(s); }
/* s per byte each node sends in a step where every node exchanges with
 * the node @d away (recursive doubling, halving): from @d >= k on, the k
 * nodes of each switch through its uplink together */
static double at_distance(const shape_t *s, int d)
{
    double l = 1 / s->p->link;
    return d >= s->k ? dmax(l, s->k * up_per_byte(s)) : l;
}

static void shape_of(shape_t *s, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p)
{
    s->N = nodes;
    s->P = ppn;
    s->R = nodes * ppn;
    s->n = (double)bytes;
    s->p = p;
    s->S = p->switches > 1 ? p->switches : 1;
    s->k = nodes / s->S;
    s->up = s->S > 1 && p->uplink > 0 ? p->uplink : 0;
    double over = p->cores > 0 && s->R > p->cores ? (double)s->R / p->cores - 1 : 0;
    s->a = p->alpha + p->sched * over;
    s->an = p->alpha_node + p->sched * over;
}

/* A chain of @hops stages (each @stage s) carrying @k segments. */
static double chain(int hops, double k, double stage) { return (hops + k - 1) * stage; }

/* ---- native: Open MPI's tuned, its fixed decision over R ranks placed by slot ---------- */

/* The algorithms of coll/tuned's fixed decision (coll_tuned_decision_fixed.c,
 * the tables since Open MPI 4.1; segments 0: whole messages), by their
 * numbers there.  A row: below ranks @r, the first threshold above the
 * size gives the algorithm; the last entry (size 0) is the rest. */
typedef struct rule {
    int r;
    struct {
        double below;
        int alg;
    } s[12];
} rule_t;
#define E(b, a) \
    {           \
        b, a    \
    }
#define ANY(a) \
    {          \
        0, a   \
    }
static const rule_t bcast_rules[] = {
    { 4,
      { E(32, 3), E(256, 5), E(512, 3), E(1024, 7), E(32768, 1), E(131072, 5), E(262144, 2),
        E(524288, 1), E(1048576, 6), ANY(5) } },
    { 8, { E(64, 5), E(128, 6), E(2048, 5), E(8192, 6), E(1048576, 1), ANY(2) } },
    { 16, { E(8, 7), E(64, 5), E(4096, 7), E(16384, 5), E(32768, 6), ANY(1) } },
    { 32, { E(4096, 7), E(1048576, 6), ANY(8) } },
    { 64, { E(2048, 6), ANY(7) } },
    { 128, { ANY(7) } },
    { 256, { E(2, 6), E(16384, 5), E(32768, 1), E(65536, 5), ANY(7) } },
    { 1024, { E(16384, 7), E(32768, 4), ANY(7) } },
    { 2048, { E(524288, 7), ANY(8) } },
    { 4096, { E(262144, 7), ANY(8) } },
    { 1 << 30, { E(8192, 7), E(16384, 5), E(262144, 7), ANY(8) } },
};
static const rule_t reduce_rules[] = {
    /* commutative ops */
    { 4, { E(8, 7), E(16, 4), E(32, 3), E(262144, 1), E(524288, 3), E(1048576, 2), ANY(3) } },
    { 8, { E(4096, 4), E(65536, 2), E(262144, 5), E(524288, 1), E(1048576, 5), ANY(1) } },
    { 16, { E(8192, 4), ANY(5) } },
    { 32, { E(4096, 4), ANY(5) } },
    { 256, { ANY(5) } },
    { 512, { E(8192, 5), E(16384, 6), ANY(5) } },
    { 2048, { ANY(5) } },
    { 4096, { E(512, 5), E(1024, 6), E(8192, 5), E(16384, 6), ANY(5) } },
    { 1 << 30, { E(16, 5), E(32, 6), E(1024, 5), E(2048, 6), E(8192, 5), E(16384, 6), ANY(5) } },
};
static const rule_t allreduce_rules[] = {
    /* commutative ops */
    { 4, { E(8, 4), E(4096, 3), E(8192, 4), E(16384, 3), E(65536, 4), E(262144, 5), ANY(6) } },
    { 8, { E(16, 4), E(8192, 3), ANY(6) } },
    { 16, { E(8192, 3), ANY(6) } },
    { 32, { E(64, 5), E(4096, 3), ANY(6) } },
    { 64, { E(128, 5), ANY(6) } },
    { 128, { E(262144, 3), ANY(6) } },
    { 256, { E(131072, 2), E(262144, 3), ANY(6) } },
    { 512, { E(4096, 2), ANY(6) } },
    { 2048, { E(2048, 2), E(16384, 3), ANY(6) } },
    { 4096, { E(2048, 2), E(4096, 5), E(16384, 3), ANY(6) } },
    { 1 << 30, { E(2048, 2), E(16384, 5), E(32768, 3), ANY(6) } },
};
static const rule_t allgather_rules[] = {
    { 3, { ANY(6) } },
    { 32, { ANY(3) } },
    { 64, { E(1024, 3), E(65536, 5), ANY(4) } },
    { 128, { E(512, 3), E(65536, 5), ANY(4) } },
    { 256, { E(512, 3), E(131072, 5), E(524288, 4), E(1048576, 5), ANY(4) } },
    { 512, { E(32, 3), E(128, 2), E(1024, 3), E(131072, 5), E(524288, 4), E(1048576, 5), ANY(4) } },
    { 1024, { E(64, 3), E(256, 2), E(2048, 3), ANY(5) } },
    { 2048, { E(4, 3), E(8, 2), E(16, 3), E(32, 2), E(256, 3), E(512, 2), E(4096, 3), ANY(5) } },
    { 4096, { E(32, 2), E(128, 3), E(512, 2), E(4096, 3), ANY(5) } },
    { 1 << 30, { E(2, 3), E(8, 2), E(16, 3), E(512, 2), E(4096, 3), ANY(5) } },
};
static const rule_t alltoall_rules[] = {
    { 3,
      { E(2, 2), E(4, 5), E(16, 2), E(64, 5), E(256, 2), E(4096, 5), E(32768, 2), E(262144, 4),
        E(1048576, 5), ANY(2) } },
    { 8, { E(8192, 4), E(16384, 1), E(65536, 4), E(524288, 1), E(1048576, 2), ANY(1) } },
    { 16, { E(262144, 4), ANY(1) } },
    { 32, { E(4, 4), E(512, 3), E(8192, 4), E(32768, 1), E(262144, 4), E(524288, 1), ANY(4) } },
    { 64, { E(512, 3), E(524288, 1), ANY(4) } },
    { 128, { E(1024, 3), E(2048, 1), E(4096, 4), E(262144, 1), ANY(2) } },
    { 256, { E(1024, 3), E(2048, 4), E(262144, 1), ANY(2) } },
    { 512, { E(1024, 3), E(8192, 4), E(32768, 1), ANY(2) } },
    { 1024, { E(512, 3), E(8192, 4), E(16384, 1), E(131072, 4), E(262144, 1), ANY(2) } },
    { 2048, { E(512, 3), E(1024, 4), E(2048, 1), E(16384, 4), E(262144, 1), ANY(4) } },
    { 4096, { E(1024, 3), E(4096, 4), E(8192, 1), E(131072, 4), ANY(1) } },
    { 1 << 30, { E(2048, 3), E(8192, 4), E(16384, 1), E(32768, 4), E(65536, 1), ANY(4) } },
};
#undef E
#undef ANY

static int rule_alg(const rule_t *t, size_t n, int R, double bytes)
{
    size_t i = 0;
    while (i + 1 < n && R >= t[i].r) i++;
    for (int k = 0;; k++)
        if (t[i].s[k].below == 0 || bytes < t[i].s[k].below) return t[i].s[k].alg;
}
#define RULE(t, R, b) rule_alg(t, sizeof(t) / sizeof(t[0]), R, b)

/* The time of @m bytes from rank @from to rank @to after @t0, sharing the
 * nodes' links (out of @from's, into @to's: busy until @out, @in). */
typedef struct net {
    const shape_t *s;
    double *out, *in; /* per node: the link busy until */
    double *ob, *ib;  /* per node: bytes sent, received */
    double *uo, *ui;  /* per switch: the bytes through its uplink so far, out and in */
    tc_cost_t *o;
} net_t;

static double send_at(net_t *w, int from, int to, double m, double t0)
{
    const shape_t *s = w->s;
    int a = from / s->P, b = to / s->P;
    if (a == b) {
        w->o->copy_all += m;
        return t0 + I(s, m);
    }
    const int ga = a / s->k, gb = b / s->k, cross = ga != gb && s->up > 0;
    double start = t0;
    if (w->out[a] > start) start = w->out[a];
    if (w->in[b] > start) start = w->in[b];
    double end = start + m / s->p->link;
    if (cross) { /* the uplinks too: no sooner than they can have carried all they carry so
                    far (bytes from time 0, so the order the sends are taken in does not
                    matter) */
        w->uo[ga] += m, w->ui[gb] += m;
        end = dmax(end, dmax(w->uo[ga], w->ui[gb]) / s->up);
    }
    w->out[a] = w->in[b] = end;
    w->ob[a] += m, w->ib[b] += m;
    w->o->wire_all += m;
    return end + s->a;
}

/* The children of @r in the flat tree @alg of bcast's numbering (1 linear,
 * 2 and 3 chain: the fixed decision passes no fanout, so one chain, 4
 * split binary, 5 binary, 6 binomial, 7 knomial of radix 4), in the order
 * the sends are posted; the count. */
static int children(int alg, int r, int R, int *c)
{
    int k = 0;
    switch (alg) {
    case 1:
        if (r == 0)
            for (int i = 1; i < R; i++) c[k++] = i;
        break;
    case 2:
    case 3:
        if (r + 1 < R) c[k++] = r + 1;
        break;
    case 4:
    case 5:
        for (int i = 1; i <= 2; i++)
            if (2 * r + i < R) c[k++] = 2 * r + i;
        break;
    case 6: {
        int mask = 1;
        while (mask <= r) mask <<= 1; /* the next power of two above r */
        for (; r + mask < R; mask <<= 1)
            if (r == 0 || mask > r) c[k++] = r + mask;
        break;
    }
    case 9: /* in-order binomial (Reduce's): r + 2^j below r's lowest set bit */
        for (int mask = 1; r + mask < R && (r == 0 || mask < (r & -r)); mask <<= 1)
            c[k++] = r + mask;
        break;
    default: { /* knomial, radix 4: the largest step first */
        int mask = 1;
        while (mask < R && r % (4 * mask) == 0) mask *= 4;
        for (; mask > 0; mask /= 4)
            for (int j = 1; j < 4; j++)
                if (r % (4 * mask) == 0 && r + j * mask < R) c[k++] = r + j * mask;
        break;
    }
    }
    return k;
}

/* A flat tree's Bcast of @m bytes from rank 0 (whole messages): the last
 * rank's arrival.  Ranks are taken in the order they receive. */
static double tree_bcast(net_t *w, int alg, double m)
{
    int R = w->s->R, *c = malloc(sizeof(int) * (size_t)R), *order = malloc(sizeof(int) * (size_t)R);
    double *at = malloc(sizeof(double) * (size_t)R), last = 0;
    if (!c || !order || !at) {
        free(c), free(order), free(at);
        return HUGE_VAL;
    }
    int head = 0, tail = 0;
    at[0] = 0;
    order[tail++] = 0;
    while (head < tail) { /* the earliest arrival first: a small selection sort */
        int best = head;
        for (int i = head + 1; i < tail; i++)
            if (at[order[i]] < at[order[best]]) best = i;
        int r = order[best];
        order[best] = order[head];
        order[head++] = r;
        if (at[r] > last) last = at[r];
        int k = children(alg, r, R, c);
        for (int i = 0; i < k; i++) {
            at[c[i]] = send_at(w, r, c[i], m, at[r]);
            order[tail++] = c[i];
        }
    }
    free(c), free(order), free(at);
    return last;
}

/* A flat tree's Reduce of @m bytes to rank 0: each rank folds its
 * children's vectors as they come.  A child's number is above its
 * parent's in every tree here, so the ranks go from the last down. */
/* @c[0..k) by @ready, ascending (insertion: k is small but for linear roots) */
static void by_ready(int *c, int k, const double *ready)
{
    for (int i = 1; i < k; i++) {
        int x = c[i], j = i;
        for (; j > 0 && ready[c[j - 1]] > ready[x]; j--) c[j] = c[j - 1];
        c[j] = x;
    }
}

static double tree_reduce(net_t *w, int alg, double m)
{
    int R = w->s->R, *c = malloc(sizeof(int) * (size_t)R);
    double *ready = malloc(sizeof(double) * (size_t)R), t = HUGE_VAL;
    if (c && ready) {
        for (int r = R - 1; r >= 0; r--) {
            int k = children(alg, r, R, c);
            by_ready(c, k, ready);
            double at = 0;
            for (int i = 0; i < k; i++) {
                double got = send_at(w, c[i], r, m, ready[c[i]]);
                at = (got > at ? got : at) + m / w->s->p->op;
            }
            ready[r] = at;
        }
        t = ready[0];
    }
    free(c), free(ready);
    return t;
}

/* One step in which every rank sends @m bytes to the rank @d further on
 * (mod R; @d < 0: the rank r XOR -@d, recursive doubling's partner) and
 * receives as much: the busiest node's link, or the copy. */
static double step(const shape_t *s, int d, double m, tc_cost_t *o)
{
    double out = 0, up = 0;
    for (int r = 0; r < s->P; r++) { /* node 0 stands for every node (by slot, R = N P) */
        int to = d < 0 ? r ^ -d : (r + d) % s->R;
        if (to >= s->R) continue; /* no partner (R not a power of two) */
        if (to / s->P != 0) out += m;
    }
    const int G = s->k * s->P; /* switch 0 stands for every switch */
    for (int r = 0; s->up > 0 && r < G; r++) {
        int to = d < 0 ? r ^ -d : (r + d) % s->R;
        if (to < s->R && to / G != 0) up += m;
    }
    o->wire_all += out * s->N;
    o->copy_all += (s->P * m - out) * s->N;
    double tx = out > 0 ? s->a + dmax(out / s->p->link, up_time(s, up)) : 0,
           tn = s->an + m / s->p->copy;
    o->wire += out; /* every node alike: node 0's link carries each step's */
    return tx > tn ? tx : tn;
}

/* Recursive doubling over R ranks (a power of two assumed; the others
 * take the same steps), each step's message @m0 x 2^j (@grow) or @m0. */
static double doubling(const shape_t *s, double m0, int grow, double op, tc_cost_t *o)
{
    double t = 0, m = m0;
    for (int d = 1; d < s->R; d *= 2, m = grow ? 2 * m : m) t += step(s, -d, m, o) + op * m;
    return t;
}

static void native_bcast(const shape_t *s, net_t *w, tc_cost_t *o)
{
    static const char *const bc[] = { "?",
                                      "linear",
                                      "chain",
                                      "pipeline (chain)",
                                      "split binary tree",
                                      "binary tree",
                                      "binomial tree",
                                      "knomial tree (radix 4)",
                                      "scatter + allgather" };
    int R = s->R, alg = RULE(bcast_rules, R, s->n);
    double n = s->n;
    o->alg = bc[alg];
    if (alg == 8) { /* binomial scatter of n / R pieces, recursive-doubling allgather */
        double t = 0, m = n / 2;
        for (int d = R / 2; d >= 1; d /= 2, m /= 2) {
            double out = d >= s->P ? m : 0; /* the root's node: one sender a step */
            t += out > 0 ? s->a + out * per_byte(s, d >= s->k * s->P) : s->an + m / s->p->copy;
            o->wire_all += out * (R / (2 * d));
            o->wire += out;
        }
        o->t = t + doubling(s, n / R, 1, 0, o);
    } else {
        o->t = tree_bcast(w, alg == 4 ? 5 : alg, alg == 4 ? n / 2 : n);
        if (alg == 4) o->t += step(s, R / 2, n / 2, o); /* the halves swapped */
    }
}

static void native_reduce(const shape_t *s, net_t *w, tc_cost_t *o)
{
    /* reduce's numbering; its binomial tree is the in-order one (9) */
    static const int as_tree[] = { 0, 1, 2, 3, 5, 9, 5, 9, 7 };
    static const char *const rd[] = { "?",
                                      "linear",
                                      "chain",
                                      "pipeline",
                                      "binary tree",
                                      "binomial tree",
                                      "in-order binary tree",
                                      "Rabenseifner",
                                      "knomial tree" };
    int alg = RULE(reduce_rules, s->R, s->n);
    o->alg = rd[alg];
    o->t = tree_reduce(w, as_tree[alg], s->n);
}

static void native_allreduce(const shape_t *s, net_t *w, tc_cost_t *o)
{
    int R = s->R, alg = RULE(allreduce_rules, R, s->n);
    double n = s->n, op = 1 / s->p->op;
    if (alg == 3) {
        o->alg = "recursive doubling";
        o->t = doubling(s, n, 0, op, o);
    } else if (alg == 4 || alg == 5) {
        o->alg = alg == 4 ? "ring" : "segmented ring";
        o->t = 2 * (R - 1) * step(s, 1, n / R, o) + (R - 1) * n / R * op;
        o->wire *= 2 * (R - 1), o->wire_all *= 2 * (R - 1), o->copy_all *= 2 * (R - 1);
    } else if (alg == 6) { /* recursive halving (distance 1, 2, ...; n / 2, n / 4, ...),
                              then the same steps back */
        o->alg = "Rabenseifner (reduce-scatter, allgather)";
        double t = 0, m = n / 2;
        for (int d = 1; d < R; d *= 2, m /= 2) t += step(s, -d, m, o) + step(s, -d, m, o) + m * op;
        o->t = t;
    } else { /* nonoverlapping or linear: a Reduce then a Bcast */
        o->alg = alg == 2 ? "reduce + bcast" : "linear reduce + bcast";
        o->t = tree_reduce(w, alg == 2 ? 9 : 1, n);
        for (int i = 0; i < 2 * s->N; i++) w->out[i] = 0; /* busy times (out, in), not bytes */
        for (int i = 0; i < 2 * s->S; i++) w->uo[i] = 0;  /* (and the uplinks' bytes) */
        o->t += tree_bcast(w, alg == 2 ? 6 : 1, n);
    }
}

static void native_allgather(const shape_t *s, tc_cost_t *o)
{
    int R = s->R, alg = RULE(allgather_rules, R, s->n);
    double b = s->n;
    if (alg == 3 || alg == 2 || alg == 6) {
        o->alg = alg == 2 ? "Bruck" : alg == 3 ? "recursive doubling" : "two processes";
        o->t = doubling(s, b, 1, 0, o);
    } else {
        o->alg = alg == 4 ? "ring" : "neighbor exchange";
        double per = alg == 4 ? step(s, 1, b, o) : step(s, 1, 2 * b, o);
        int steps = alg == 4 ? R - 1 : R / 2;
        o->t = steps * per;
        o->wire *= steps, o->wire_all *= steps, o->copy_all *= steps;
    }
}

static void native_alltoall(const shape_t *s, tc_cost_t *o)
{
    int R = s->R, alg = RULE(alltoall_rules, R, s->n);
    double b = s->n, t = 0;
    if (alg == 1 || alg == 4) {
        o->alg = alg == 1 ? "linear (every message at once)" : "linear, synchronised";
        o->wire = (double)(R - s->P) * s->P * b;
        o->wire_all = s->N * o->wire;
        o->copy_all = (double)s->N * s->P * (s->P - 1) * b;
        const double G = (double)s->k * s->P; /* what leaves a switch */
        o->t = s->a + (R - 1) * s->an + dmax(o->wire / s->p->link, up_time(s, G * (R - G) * b));
    } else if (alg == 3) {
        o->alg = "modified Bruck";
        for (int d = 1; d < R; d *= 2) t += step(s, d, b * R / 2, o);
        o->t = t;
    } else {
        o->alg = alg == 2 ? "pairwise exchange" : "two processes";
        for (int d = 1; d < R; d++) t += step(s, d, b, o);
        o->t = t;
    }
}

/* Tuned's algorithm for @coll at this size and rank count, its cost into @o. */
static void native_alg(const shape_t *s, int coll, tc_cost_t *o)
{
    int N = s->N;
    double *links = calloc(4 * (size_t)N + 2 * (size_t)s->S, sizeof(double));
    if (!links) {
        o->t = HUGE_VAL;
        o->alg = "?";
        return;
    }
    net_t w = {
        s, links, links + N, links + 2 * N, links + 3 * N, links + 4 * N, links + 4 * N + s->S, o
    };
    switch (coll) {
    case TC_COST_BCAST: native_bcast(s, &w, o); break;
    case TC_COST_REDUCE: native_reduce(s, &w, o); break;
    case TC_COST_ALLREDUCE: native_allreduce(s, &w, o); break;
    case TC_COST_ALLGATHER: native_allgather(s, o); break;
    default: native_alltoall(s, o); break;
    }
    for (int i = 0; i < N; i++) { /* the trees' links: the busiest node's bytes */
        if (w.ob[i] > o->wire) o->wire = w.ob[i];
        if (w.ib[i] > o->wire) o->wire = w.ib[i];
    }
    free(links);
}

/* ---- topocoll ------------------------------------------------------------------------ */

/* s: a step of Rabenseifner's reduce between leaders where each leader
 * v that sends (@gather: the senders of the gather at distance @d, else
 * every leader) sends @m bytes to its partner, leaders numbered as
 * coll/reduce does (u < @tail is node u, above it node tail + 2 (u -
 * tail)): its link, or the uplink of the switch that sends the most
 * across.  @d 0: the first fold, node tail + 2 i + 1 to tail + 2 i. */
static double halving_step(const shape_t *s, int P, int tail, int d, int gather, double m)
{
    double t = s->a + m / s->p->link;
    if (s->up <= 0) return t;
    int *out = calloc((size_t)s->S, sizeof(int)), most = 0;
    if (!out) return HUGE_VAL;
    for (int u = 0; u < (d ? P : s->N); u++) {
        int a, b;
        if (!d) { /* the fold's pairs */
            if (u < tail || (u - tail) % 2 == 0) continue;
            a = u, b = u - 1;
        } else {
            if (gather && (u & (2 * d - 1)) != d) continue; /* (not a sender at d) */
            a = u < tail ? u : tail + 2 * (u - tail);
            b = (u ^ d) < tail ? u ^ d : tail + 2 * ((u ^ d) - tail);
        }
        if (a / s->k != b / s->k && ++out[a / s->k] > most) most = out[a / s->k];
    }
    free(out);
    return dmax(t, s->a + most * m / s->up);
}

/* Rabenseifner's reduce between the N leaders (coll/reduce's halving)
 * after the node's @fold: the time, and the busiest link's bytes (each
 * node's bytes in and out, counted step by step). */
static void topo_halving(const shape_t *s, double fold, tc_cost_t *o)
{
    const int N = s->N;
    int P = 1, L = 0;
    while (2 * P <= N) P *= 2, L++;
    const int r = N - P, tail = P - r;
    const double n = s->n, op = s->p->op;
    o->alg = "Rabenseifner's reduce between leaders (recursive halving, gather)";
    o->t = fold + (r ? halving_step(s, P, tail, 0, 0, n) + n / op : 0);
    for (int j = 1; j <= L; j++) { /* halving at distance P / 2^j, and the gather back */
        const int d = P >> j;
        const double m = n / (1 << j);
        o->t += halving_step(s, P, tail, d, 0, m) + m / op + halving_step(s, P, tail, d, 1, m);
    }
    o->wire = 0;
    o->wire_all = r * n + (P - 1) * n + (P - 1) / (double)P * n; /* pairs, halving, gather */
    for (int v = 0; v < N; v++) {
        if (v >= tail && (v - tail) & 1) { /* the odd one of a pair: its vector out */
            if (n > o->wire) o->wire = n;
            continue;
        }
        int u = v < tail ? v : tail + (v - tail) / 2;
        double in = (v >= tail ? n : 0) + (P - 1) / (double)P * n, out = (P - 1) / (double)P * n;
        for (int d = 1; d < P; d *= 2) {
            if (u & (d - 1)) break;
            if (u & d) {
                out += d * n / P;
                break;
            }
            in += d * n / P;
        }
        if (in > o->wire) o->wire = in;
        if (out > o->wire) o->wire = out;
    }
}

/* The block owners between the N leaders (coll/reduce, TC_ALG_OWNERS)
 * after the node's @fold: K segments (TC_OWN_PIECE, TC_OWN_SEGS), each
 * in M = N - 1 pieces; the first segment's exchange (an owner sends M - 1
 * pieces), then K rounds of a segment each on an owner's link (its block
 * to the root's and the next exchange) and on the root's (M blocks in);
 * under switches the k N - k^2 pieces a round that cross an uplink (a
 * switch's owners to the owners and the root elsewhere, or in). */
static void topo_owners(const shape_t *s, double fold, tc_cost_t *o)
{
    const double N = s->N, M = N - 1, n = s->n, op = s->p->op, link = s->p->link;
    double K = floor(n / (M * TC_OWN_PIECE));
    K = K < 1 ? 1 : K > TC_OWN_SEGS ? TC_OWN_SEGS : K;
    const double seg = n / K, piece = seg / M, ex = (M - 1) * piece;
    const double up = s->S > 1 ? s->k * (N - s->k) * piece * up_per_byte(s) : 0;
    o->alg = "the block owners between leaders (a reduce-scatter without the root, pipelined)";
    o->t = fold + (K + 1) * s->a + dmax(ex / link, up) + K * dmax(seg / link, up) + K * ex / op +
           seg / op;
    o->wire = n;
    o->wire_all = M * n;
}

/* Bcast's block owners between the N leaders (coll/bcast, TC_ALG_OWNERS):
 * M = N - 1 blocks of K segments (TC_BCAST_OWN_PIECE, _SEGS);
 * a round puts a segment of every block on the root's link and each
 * owner's last segment on its way to the M - 1 others: K + 1 rounds, the
 * last the owners' alone; under switches the k (N - k) segments a round
 * that cross an uplink.  The node reads the blocks' landed prefix: the
 * first block early, the rest once the last is in. */
static void topo_bcast_owners(const shape_t *s, tc_cost_t *o)
{
    const double N = s->N, M = N - 1, n = s->n, link = s->p->link, b = n / M;
    const double seg = dmax(TC_BCAST_OWN_PIECE, ceil(b / TC_BCAST_OWN_SEGS)), K = ceil(b / seg);
    const double up = s->S > 1 ? s->k * (N - s->k) * (b / K) * up_per_byte(s) : 0;
    o->alg =
        "the block owners between leaders (the root's scatter, each owner's block to the others)";
    o->t = 2 * s->a + K * dmax(n / K / link, up) + dmax((M - 1) * (b / K) / link, up) + I(s, n - b);
    o->wire = n;
}

/* Bcast (@reduce: Reduce) between the leaders after (before) the node's part. */
static void topo_bcast(const shape_t *s, int reduce, tc_cost_t *o)
{
    double n = s->n, fold = 0;
    o->wire_all = (s->N - 1) * n;
    o->copy_all = (double)s->N * (s->P - 1) * n;
    if (reduce) /* the node's fold, by slices: (P - 1) n / P read and reduced each */
        fold = s->an + (s->P - 1) * (n / s->P) * (1 / s->p->copy + 1 / s->p->op);
    /* coll/plan tc_plan_reduce_net */
    if (reduce && s->N >= 4 && n >= (double)s->p->halving_min && n < (double)s->p->chain_min) {
        tc_cost_t w = *o; /* coll/xtune takes the faster of the two */
        topo_halving(s, fold, o);
        topo_owners(s, fold, &w);
        if (w.t < o->t) *o = w;
        return;
    }
    if (s->N > 2 && n >= (double)s->p->chain_min) {
        double seg = 32768, k = ceil(n / seg), op = reduce ? seg / s->p->op : 0;
        o->alg = "pipelined chain of leaders, 32 KiB segments";
        /* the slowest hop sets the pace: one that crosses switches */
        const double hop = s->a + seg * per_byte(s, s->S > 1);
        o->t = fold + chain(s->N - 1, k, hop + op) + (reduce ? 0 : I(s, seg));
        o->wire = n;
        return;
    }
    /* the binomial tree of leaders; the node reads behind its leader a segment late */
    double seg = n < 65536 ? 8192 : 65536, eighth = ceil(n / 8 / 4096) * 4096;
    if (eighth > seg) seg = eighth;
    if (seg > n) seg = n;
    o->alg = "binomial tree of leaders";
    /* its lg(S) steps between switches, one message through an uplink at a time */
    const int across = lg(s->S);
    o->t = fold + lg(s->N) * (X(s, n) + (reduce ? n / s->p->op : 0)) +
           across * n * (per_byte(s, 1) - per_byte(s, 0)) + (reduce ? 0 : I(s, seg));
    o->wire = lg(s->N) * n;
    /* coll/plan tc_plan_bcast_net: coll/xtune takes the faster of the two */
    if (!reduce && s->N >= 3 && s->N - 2 <= TC_BCAST_MAXCHILD &&
        n >= (double)s->p->bcast_owners_min) {
        tc_cost_t w = *o;
        topo_bcast_owners(s, &w);
        if (w.t < o->t) *o = w;
    }
}

static void topo_allreduce(const shape_t *s, tc_cost_t *o)
{
    double n = s->n, N = s->N, P = s->P;
    double fold = s->an + (P - 1) * (n / P) * (1 / s->p->copy + 1 / s->p->op);
    const double ops = (N - 1) * n / (P * N) / s->p->op, reads = I(s, (P - 1) * n / P);
    if (s->S > 1 && s->k > 1) { /* coll/plan TC_ALG_SWITCHES */
        const double S = s->S, k = s->k;
        /* a slice takes each segment (TC_NET_SEG a ring chunk) through the stage in the
         * switch, across (the k nodes through the uplink together), in it again; with
         * several slices and segments they drift apart and the links and uplinks overlap,
         * else the stages add up */
        const double in = 2 * (k - 1) / k * n / s->p->link,
                     across = 2 * (S - 1) / S * n * dmax(1 / (k * s->p->link), up_per_byte(s)),
                     segs = ceil(n / (32768.0 * k * P));
        o->alg = "node fold, the slices' rings by switch (in it, across, in it), node reads";
        o->t = fold + 2 * (k + S - 2) * s->a +
               (P > 1 && segs > 1 ? dmax(in, across) : in + across) + ops + reads;
    } else {
        /* one ring over the nodes: each step waits for its hop between switches */
        o->alg = "node fold, the slices' rings between nodes, node reads";
        o->t = fold + 2 * (N - 1) * (s->a + n / N * per_byte(s, s->S > 1)) + ops + reads;
    }
    o->wire = 2 * (N - 1) / N * n;
    o->wire_all = N * o->wire;
    o->copy_all = 2 * N * (P - 1) * n;
}

static void topo_allgather(const shape_t *s, tc_cost_t *o)
{
    double b = s->n, P = s->P;
    const double node = I(s, (P - 1) * b) + (s->R - P) * b / s->p->copy;
    if (s->S > 1 && s->k > 1 && !(P > 6 && b >= 8192)) {
        /* coll/plan tc_allgather_sw (not the ring of every process, tc_allgather_alg): the
         * ring across the switches (S - 1 nodes' blocks, the k leaders of a switch through
         * its uplink together) and the switch's ring ((k - 1) S nodes' blocks, each
         * forwarded once it is in) at once: the slower of the two, the last node in from
         * across still to go k - 1 hops */
        const double S = s->S, k = s->k, nb = P * b;
        const double across = (S - 1) * nb * dmax(1 / s->p->link, k * up_per_byte(s));
        o->alg = "leaders by switch (across and in it at once), processes read from their leader";
        o->t = node + (k + S - 2) * s->a +
               dmax(across + (k - 1) * nb / s->p->link, (k - 1) * S * nb / s->p->link);
    } else if (s->N >= 4 && P * b <= (double)s->p->allgather_rd_max) {
        /* coll/plan tc_allgather_rd: step j sends 2^j nodes' blocks */
        o->alg =
            s->N & (s->N - 1)
                ? "leaders' Bruck concatenation of node blocks, processes read from their leader"
                : "leaders' recursive doubling of node blocks, processes read from their leader";
        o->t = node + lg(s->N) * s->a;
        for (int d = 1; d < s->N; d *= 2)
            o->t += d * P * b * at_distance(s, d); /* d nodes' blocks */
    } else {
        o->alg = "leaders' ring of node blocks, processes read from their leader";
        o->t = node + (s->N - 1) * (s->a + P * b * per_byte(s, s->S > 1));
    }
    o->wire = (s->N - 1) * P * b;
    o->wire_all = s->N * o->wire;
    o->copy_all = (double)s->R * (s->R - 1) * b;
}

static void topo_alltoall(const shape_t *s, tc_cost_t *o)
{
    double b = s->n, P = s->P, N = s->N;
    o->alg = "node-aggregated exchange, one message per slice and pair of nodes";
    /* each slice packs (N - 1) P blocks from its node's processes and places as many */
    const double k = s->k;
    o->t = s->an + 2 * (N - 1) * P * b / s->p->copy + (P - 1) * b / s->p->copy + (N - 1) * s->a +
           dmax((N - 1) * P * P * b / s->p->link, up_time(s, k * (N - k) * P * P * b));
    o->wire = (N - 1) * P * P * b;
    o->wire_all = N * o->wire;
    o->copy_all = N * P * (2 * (N - 1) * P + P - 1) * b;
}

/* The emulation's floor: every link's bytes through the shared cores, and the
 * node copies spread over them. */
static void emulated(const tc_cost_params_t *p, tc_cost_t *o)
{
    if (p->cores <= 0) return;
    double floor = (p->cpu > 0 ? o->wire_all / p->cpu : 0) + o->copy_all / (p->cores * p->copy);
    if (floor > o->t) o->t = floor;
}

/* A call's arguments checked (-1: unknown collective, shape out of range),
 * its shape into @s, @out zeroed. */
static int begin(int coll, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p, shape_t *s,
                 tc_cost_t *out)
{
    if (coll < 0 || coll >= TC_COST_NCOLLS || nodes < 1 || ppn < 1 ||
        (long long)nodes * ppn > TC_COST_MAX_RANKS || (p->switches > 1 && nodes % p->switches))
        return -1;
    shape_of(s, nodes, ppn, bytes, p);
    *out = (tc_cost_t){ 0 };
    return 0;
}

int tc_cost_native(int coll, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p,
                   tc_cost_t *out)
{
    shape_t s;
    if (begin(coll, nodes, ppn, bytes, p, &s, out) != 0) return -1;
    if (coll == TC_COST_BARRIER) { /* recursive doubling or Bruck */
        out->alg = "recursive doubling";
        out->t = lg(nodes) * s.a + lg(ppn) * s.an;
    } else if (s.R > 1) {
        native_alg(&s, coll, out);
    } else {
        out->alg = "one process";
    }
    emulated(p, out);
    return 0;
}

int tc_cost_topocoll(int coll, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p,
                     tc_cost_t *out)
{
    shape_t s;
    if (begin(coll, nodes, ppn, bytes, p, &s, out) != 0) return -1;
    tc_cost_t nat;
    int alt = nodes > 1 && coll != TC_COST_BARRIER &&
              tc_cost_native(coll, nodes, ppn, bytes, p, &nat) == 0;
    if (alt && bytes <= p->flat_max[coll]) {
        *out = nat;
        out->alg = "native (TOPOCOLL_<COLL>_FLAT_MAX)";
        return 0;
    }
    switch (coll) {
    case TC_COST_BCAST: topo_bcast(&s, 0, out); break;
    case TC_COST_REDUCE: topo_bcast(&s, 1, out); break;
    case TC_COST_ALLREDUCE: topo_allreduce(&s, out); break;
    case TC_COST_ALLGATHER: topo_allgather(&s, out); break;
    case TC_COST_ALLTOALL: topo_alltoall(&s, out); break;
    default:
        out->alg = "dissemination among leaders, the node's around it";
        out->t = lg(nodes) * s.a + 2 * s.an;
        break;
    }
    emulated(p, out);
    if (alt && bytes <= p->xtune_max && nat.t < out->t) { /* the tuner keeps the native one */
        *out = nat;
        out->alg = "native (faster; the communicator's tuner keeps it)";
    }
    return 0;
}

double tc_cost_bound(int coll, int nodes, int ppn, size_t bytes, const tc_cost_params_t *p)
{
    double n = (double)bytes, N = nodes, P = ppn, b, u;
    if (nodes < 2 || p->link <= 0) return 0;
    const double S = p->switches > 1 && nodes % p->switches == 0 ? p->switches : 1, k = N / S;
    switch (coll) { /* b: a node's link; u: a switch's uplink */
    case TC_COST_BCAST:
    case TC_COST_REDUCE: b = u = n; break;
    case TC_COST_ALLREDUCE: b = 2 * n * (N - 1) / N, u = 2 * n * (S - 1) / S; break;
    case TC_COST_ALLGATHER: b = n * P * (N - 1), u = k * (S - 1) * P * n; break;
    case TC_COST_ALLTOALL: b = n * P * P * (N - 1), u = k * P * (N - k) * P * n; break;
    default: b = u = 0; break;
    }
    return dmax(b / p->link, S > 1 && p->uplink > 0 ? u / p->uplink : 0);
}
