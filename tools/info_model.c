/* tools/info_model -- see info_model.h. */
#include "info_model.h"

#include "base/config.h"
#include "coll/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int info_model_shape(const char *arg, info_model_t *m)
{
    char *end;
    long n = strtol(arg, &end, 10);
    if (end == arg || (*end != 'x' && *end != 'X')) return -1;
    const char *q = end + 1;
    long p = strtol(q, &end, 10);
    if (end == q || *end || n < 1 || p < 1 || n * p > TC_COST_MAX_RANKS) return -1;
    m->nodes = (int)n;
    m->ppn = (int)p;
    return 0;
}

/* The parameters for @m at @bps, with its overrides and emulation. */
static int params(const info_model_t *m, double bps, tc_cost_params_t *p)
{
    tc_cost_defaults(p, bps);
    if (m->alpha_us > 0) p->alpha = m->alpha_us * 1e-6;
    p->switches = m->switches;
    p->uplink = m->uplink_bps / 8;
    if (m->emulate) {
        int cores;
        double sched_us, cpu_mbps;
        char tail;
        if (sscanf(m->emulate, "%d:%lf:%lf%c", &cores, &sched_us, &cpu_mbps, &tail) != 3 ||
            cores < 1 || sched_us < 0 || cpu_mbps < 0) {
            fprintf(stderr,
                    "topocoll_info: --emulate %s: CORES:SCHED_US:CPU_MBPS (2:40:300; 0 for "
                    "no cpu floor)\n",
                    m->emulate);
            return -1;
        }
        p->cores = cores;
        p->sched = sched_us * 1e-6;
        p->cpu = cpu_mbps * 1e6;
    }
    return 0;
}

static void fmt_time(char *b, size_t n, double s)
{
    if (s < 1e-3)
        snprintf(b, n, "%.1f us", s * 1e6);
    else if (s < 1)
        snprintf(b, n, "%.2f ms", s * 1e3);
    else
        snprintf(b, n, "%.2f s", s);
}

static int table(const info_model_t *m)
{
    tc_cost_params_t p;
    if (params(m, m->link_bps, &p) != 0) return 2;
    static const size_t dflt[] = { 8, 65536, 1 << 20, 4 << 20 };
    const size_t *sizes = m->nsizes ? m->sizes : dflt;
    int ns = m->nsizes ? m->nsizes : 4;
    if (m->switches > 1 && m->nodes % m->switches) {
        fprintf(stderr, "topocoll_info: --switches %d: does not divide the %d nodes\n", m->switches,
                m->nodes);
        return 2;
    }
    printf("cost model (coll/cost): %d nodes x %d processes, link %.3g bit/s, latency %.1f us "
           "between nodes, %.1f us on a node, single copy %.2g GB/s, MPI_SUM %.2g GB/s%s\n",
           m->nodes, m->ppn, m->link_bps, p.alpha * 1e6, p.alpha_node * 1e6, p.copy / 1e9,
           p.op / 1e9, p.cores ? "" : "; each node its own cores");
    if (m->switches > 1)
        printf("two levels: %d leaf switches of %d consecutive nodes, uplinks %.3g bit/s%s\n",
               m->switches, m->nodes / m->switches, m->uplink_bps,
               m->uplink_bps > 0 ? "" : " (unlimited)");
    if (p.cores)
        printf("emulated: %d cores shared by all nodes, %.1f us more per message and process "
               "beyond a core, links together %.0f MB/s\n",
               p.cores, p.sched * 1e6, p.cpu / 1e6);
    printf("sizes: the vector (bcast, reduce, allreduce), each rank's block (allgather, "
           "alltoall); ratio = native / topocoll; x = topocoll / link bound\n");
    printf("%-9s %9s %10s %10s %6s %10s %6s  %s | %s\n", "coll", "bytes", "native", "topocoll",
           "ratio", "bound", "x", "native's algorithm", "topocoll's");
    for (int c = 0; c < TC_COST_BARRIER; c++)
        for (int i = 0; i < ns; i++) {
            tc_cost_t a, b;
            if (tc_cost_native(c, m->nodes, m->ppn, sizes[i], &p, &a) != 0 ||
                tc_cost_topocoll(c, m->nodes, m->ppn, sizes[i], &p, &b) != 0)
                return 2;
            double bound = tc_cost_bound(c, m->nodes, m->ppn, sizes[i], &p);
            char ta[32], tb[32], tl[32];
            fmt_time(ta, sizeof ta, a.t);
            fmt_time(tb, sizeof tb, b.t);
            fmt_time(tl, sizeof tl, bound);
            printf("%-9s %9zu %10s %10s %6.2f %10s %6.2f  %s | %s\n", tc_cost_coll_name(c),
                   sizes[i], ta, tb, a.t / b.t, bound > 0 ? tl : "-", bound > 0 ? b.t / bound : 0,
                   a.alg, b.alg);
        }
    return 0;
}

/* ---- --check CSV [--fit] --------------------------------------------------------- */

typedef struct row {
    double bps;
    int hosts, ppn, coll;
    size_t size, block; /* what the row stands for (scale_bench.sh), the bench's size */
    double nat_us, top_us;
} row_t;

/* The native-peer rows of a scale_bench summary; NULL (message) on failure. */
static row_t *read_rows(const char *path, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "topocoll_info: --check %s: cannot open\n", path);
        return NULL;
    }
    char line[512];
    int cap = 0;
    row_t *r = NULL;
    *n = 0;
    if (!fgets(line, sizeof line, f) || strncmp(line, "rate,hosts,ppn,coll,", 20) != 0) {
        fprintf(stderr, "topocoll_info: --check %s: not a scale_bench.sh summary\n", path);
        fclose(f);
        return NULL;
    }
    while (fgets(line, sizeof line, f)) {
        char rate[32], coll[32], peer[32];
        row_t x;
        unsigned long long size, block;
        if (sscanf(line, "%31[^,],%d,%d,%31[^,],%llu,%llu,%31[^,],%lf,%lf", rate, &x.hosts, &x.ppn,
                   coll, &size, &block, peer, &x.nat_us, &x.top_us) != 9)
            continue;
        if (strcmp(peer, "native") != 0 || (x.bps = tc_parse_rate(rate)) < 0 ||
            (x.coll = tc_cost_coll(coll)) < 0 || !(x.nat_us > 0) || !(x.top_us > 0) ||
            x.hosts < 2 || x.ppn < 1 || (long long)x.hosts * x.ppn > TC_COST_MAX_RANKS)
            continue; /* not a native row between nodes the model takes */
        x.block = (size_t)block;
        x.size = (size_t)size;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            row_t *g = realloc(r, (size_t)cap * sizeof(*r));
            if (!g) break;
            r = g;
        }
        r[(*n)++] = x;
    }
    fclose(f);
    if (*n == 0) {
        fprintf(stderr, "topocoll_info: --check %s: no native rows\n", path);
        free(r);
        return NULL;
    }
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* |log(pred / meas)| of the rows of @coll (-1: all but Bcast; -2: all) on
 * @hosts hosts (0: any; below 0: at most -@hosts) from @min bytes (the
 * size the row stands for) (the row's size as the bench counts it), native (@which
 * bit 1) and topocoll (bit 2), into @e; the count. */
static int errors(const row_t *r, int n, int coll, int hosts, int which, size_t min,
                  const tc_cost_params_t *base, double *e)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (coll >= 0 ? r[i].coll != coll : coll == -1 && r[i].coll == TC_COST_BCAST) continue;
        if (r[i].size < min || (hosts > 0 && r[i].hosts != hosts) ||
            (hosts < 0 && r[i].hosts > -hosts))
            continue;
        tc_cost_params_t p = *base;
        p.link = r[i].bps / 8;
        tc_cost_t a, b;
        tc_cost_native(r[i].coll, r[i].hosts, r[i].ppn, r[i].block, &p, &a);
        tc_cost_topocoll(r[i].coll, r[i].hosts, r[i].ppn, r[i].block, &p, &b);
        if (which & 1) e[k++] = fabs(log(a.t / (r[i].nat_us * 1e-6)));
        if (which & 2) e[k++] = fabs(log(b.t / (r[i].top_us * 1e-6)));
    }
    return k;
}

static double median_of(double *e, int k)
{
    if (k == 0) return 0;
    qsort(e, (size_t)k, sizeof(*e), cmp_double);
    return k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
}

/* alpha and the emulation's sched and cpu (cores: 2 unless given)
 * minimising the median error over the Bcast rows of at most @max_hosts
 * hosts (0: all; the calibration set, the others validate); -1 if there
 * is no such row. */
static int fit(const row_t *r, int n, int max_hosts, tc_cost_params_t *p, double *e)
{
    double best = HUGE_VAL, ba = p->alpha, bs = 0, bc = 0;
    if (p->cores < 1) p->cores = 2;
    for (double a = 5e-6; a <= 50e-6; a += 2.5e-6)
        for (double s = 0; s <= 100e-6; s += 5e-6)
            for (double cpu = 50e6; cpu <= 3.2e9; cpu *= 1.1) {
                tc_cost_params_t q = *p;
                q.alpha = a;
                q.sched = s;
                q.cpu = cpu;
                int k = errors(r, n, TC_COST_BCAST, -max_hosts, 3, 0, &q, e);
                if (k == 0) return -1;
                double m = median_of(e, k);
                if (m < best) best = m, ba = a, bs = s, bc = cpu;
            }
    p->alpha = ba;
    p->sched = bs;
    p->cpu = bc;
    return 0;
}

/* The @idx-th smallest host count of the rows (0 first), or 0. */
static int nth_hosts(const row_t *r, int n, int idx)
{
    int prev = 0;
    for (int k = 0; k <= idx; k++) {
        int next = 0;
        for (int i = 0; i < n; i++)
            if (r[i].hosts > prev && (next == 0 || r[i].hosts < next)) next = r[i].hosts;
        if (next == 0) return 0;
        prev = next;
    }
    return prev;
}

/* The errors' summary: by collective and by host count, native and topocoll. */
static void summary(const row_t *r, int n, const tc_cost_params_t *pp, double *e)
{
    const tc_cost_params_t p = *pp;
    printf("error = model / measured - 1; median |error|, share within 25%%, worst factor; "
           "sizes as the rows count them:\n");
    printf("  %-14s %-26s %-26s %-26s\n", "", "native, all sizes", "topocoll, all sizes",
           "topocoll, from 64 KiB");
    /* the rows: all, all but Bcast, each collective, then each host count */
    for (int row = -2;; row++) {
        int c = row < TC_COST_BARRIER ? row : -2,
            hosts = row < TC_COST_BARRIER ? 0 : nth_hosts(r, n, row - TC_COST_BARRIER);
        if (row >= TC_COST_BARRIER && hosts == 0) break;
        char cell[3][40], label[32];
        static const int which[3] = { 1, 2, 2 };
        static const size_t min[3] = { 0, 0, 65536 };
        int any = 0;
        for (int j = 0; j < 3; j++) {
            int k = errors(r, n, c, hosts, which[j], min[j], &p, e);
            cell[j][0] = 0;
            if (k == 0) continue;
            any = 1;
            double med = median_of(e, k);
            int in = 0;
            for (int i = 0; i < k; i++) in += e[i] <= log(1.25);
            snprintf(cell[j], sizeof cell[j], "%3.0f%% %3.0f%% x%-5.2f (%d)", 100 * expm1(med),
                     100.0 * in / k, exp(e[k - 1]), k);
        }
        if (hosts)
            snprintf(label, sizeof label, "%d hosts", hosts);
        else
            snprintf(label, sizeof label, "%s",
                     c == -2   ? "all"
                     : c == -1 ? "all but bcast"
                               : tc_cost_coll_name(c));
        if (any) printf("  %-14s %-26s %-26s %-26s\n", label, cell[0], cell[1], cell[2]);
    }
}

static int check(const info_model_t *m)
{
    tc_cost_params_t p;
    if (params(m, m->link_bps, &p) != 0) return 2;
    int n;
    row_t *r = read_rows(m->check, &n);
    if (!r) return 2;
    double *e = malloc(sizeof(double) * 2 * (size_t)n);
    if (!e) {
        free(r);
        return 1;
    }
    if (m->fit) {
        if (fit(r, n, m->fit_hosts ? m->fit_hosts : 1 << 30, &p, e) != 0) {
            fprintf(stderr, "topocoll_info: --check %s: no Bcast rows to fit on\n", m->check);
            free(e);
            free(r);
            return 2;
        }
        printf("fitted on the Bcast rows%s: --alpha %.1f --emulate %d:%.0f:%.0f (latency between "
               "nodes; cores, us more per message and process beyond a core, MB/s of all links "
               "together)\n",
               m->fit_hosts ? " of at most --fit hosts" : "", p.alpha * 1e6, p.cores, p.sched * 1e6,
               p.cpu / 1e6);
    }
    printf("%-9s %6s %9s %9s | %11s %11s %7s | %11s %11s %7s\n", "coll", "hosts", "rate", "bytes",
           "native_us", "model_us", "err", "topocoll_us", "model_us", "err");
    for (int i = 0; i < n; i++) {
        tc_cost_params_t q = p;
        q.link = r[i].bps / 8;
        tc_cost_t a, b;
        tc_cost_native(r[i].coll, r[i].hosts, r[i].ppn, r[i].block, &q, &a);
        tc_cost_topocoll(r[i].coll, r[i].hosts, r[i].ppn, r[i].block, &q, &b);
        printf("%-9s %3dx%-2d %8.0fM %9zu | %11.1f %11.1f %+6.0f%% | %11.1f %11.1f %+6.0f%%\n",
               tc_cost_coll_name(r[i].coll), r[i].hosts, r[i].ppn, r[i].bps / 1e6, r[i].block,
               r[i].nat_us, a.t * 1e6, 100 * (a.t * 1e6 / r[i].nat_us - 1), r[i].top_us, b.t * 1e6,
               100 * (b.t * 1e6 / r[i].top_us - 1));
    }
    summary(r, n, &p, e);
    free(e);
    free(r);
    return 0;
}

int info_model_run(const info_model_t *m) { return m->check ? check(m) : table(m); }
