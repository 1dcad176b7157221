/*
 * api/report -- the report (TOPOCOLL_REPORT=1, docs/report.md): this
 * process's counts per collective of the registry (base/colls.def):
 * calls, calls topocoll ran, bytes, seconds inside the call, and the
 * reasons calls went to the native MPI; summed over a communicator's
 * ranks and written by its rank 0 (topocoll_report_write, which the
 * interposition library calls at MPI_Finalize).
 *
 * Counts are relaxed atomics (any thread may call a collective, the
 * progress threads included); the reasons' table takes a lock, only on a
 * native call with the report on.  Off (the default), every hook is one
 * predictable branch.
 *
 * Owns the counts.  May call: base/, PMPI.
 */
#include "topocoll.h"

#include "../base/config.h"
#include "../base/log.h"
#include "api_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { NREASONS = 8, REASON_LEN = 96 };

typedef struct {
    _Atomic uint64_t calls, ran, bytes, ns;
    char why[NREASONS][REASON_LEN]; /* reasons said (copied: a caller's may not last) */
    uint64_t why_n[NREASONS];
} coll_count_t;

static coll_count_t g_count[TC_STATS];
static pthread_mutex_t g_why_lock = PTHREAD_MUTEX_INITIALIZER;
/* -1: not read yet; then TOPOCOLL_REPORT (written once, read by any
 * thread: relaxed, every writer stores the same value) */
static _Atomic int g_on = -1;

int topocoll_report_enabled(void)
{
    int on = atomic_load_explicit(&g_on, memory_order_relaxed);
    if (on < 0) {
        on = tc_config_get()->report;
        atomic_store_explicit(&g_on, on, memory_order_relaxed);
    }
    return on;
}

void topocoll_report_call(int coll, size_t bytes, double seconds)
{
    if (!topocoll_report_enabled() || coll < 0 || coll >= TC_STATS) return;
    coll_count_t *k = &g_count[coll];
    atomic_fetch_add_explicit(&k->calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->ns, (uint64_t)(seconds * 1e9), memory_order_relaxed);
}

void tc_report_ran(int stat)
{
    if (atomic_load_explicit(&g_on, memory_order_relaxed) <= 0 || stat < 0 || stat >= TC_STATS)
        return;
    atomic_fetch_add_explicit(&g_count[stat].ran, 1, memory_order_relaxed);
}

/* The registry's slot of MPI function @call ("MPI_Ibcast": MPI_Bcast's),
 * or -1. */
static int slot_of(const char *call)
{
    if (strncmp(call, "MPI_", 4) != 0) return -1;
    for (int i = 0; i < TC_STATS; i++) {
        const char *n = tc_coll_call(i) + 4, *c = call + 4; /* after "MPI_" */
        if (c[0] == 'I' && strcasecmp(c + 1, n) == 0) return i;
        if (strcmp(c, n) == 0) return i;
    }
    return -1;
}

void tc_report_native(const char *call, const char *why)
{
    int i = atomic_load_explicit(&g_on, memory_order_relaxed) > 0 && why ? slot_of(call) : -1;
    if (i < 0) return;
    coll_count_t *k = &g_count[i];
    pthread_mutex_lock(&g_why_lock);
    int j = 0;
    while (j < NREASONS && k->why[j][0] && strncmp(k->why[j], why, REASON_LEN - 1) != 0) j++;
    if (j == NREASONS) j = NREASONS - 1; /* the table's last row: "and others" */
    if (!k->why[j][0]) snprintf(k->why[j], REASON_LEN, "%s", why);
    k->why_n[j]++;
    pthread_mutex_unlock(&g_why_lock);
}

/* One rank's contribution: the counts, and its most frequent reason per
 * collective with its count. */
typedef struct {
    uint64_t n[TC_STATS][5]; /* calls, ran, bytes, ns, the top reason's count */
    char why[TC_STATS][REASON_LEN];
} rank_report_t;

static void local_report(rank_report_t *r)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_lock(&g_why_lock);
    for (int i = 0; i < TC_STATS; i++) {
        coll_count_t *k = &g_count[i];
        r->n[i][0] = atomic_load_explicit(&k->calls, memory_order_relaxed);
        r->n[i][1] = atomic_load_explicit(&k->ran, memory_order_relaxed);
        r->n[i][2] = atomic_load_explicit(&k->bytes, memory_order_relaxed);
        r->n[i][3] = atomic_load_explicit(&k->ns, memory_order_relaxed);
        for (int j = 0; j < NREASONS && k->why[j][0]; j++)
            if (k->why_n[j] > r->n[i][4]) {
                r->n[i][4] = k->why_n[j];
                snprintf(r->why[i], REASON_LEN, "%s", k->why[j]);
            }
    }
    pthread_mutex_unlock(&g_why_lock);
}

/* Rank 0's lines into @f from every rank's reports @all (@size of them). */
static void write_lines(FILE *f, const rank_report_t *all, int size)
{
    for (int i = 0; i < TC_STATS; i++) {
        uint64_t calls = 0, ran = 0, bytes = 0, ns = 0, top = 0;
        const char *why = NULL;
        for (int r = 0; r < size; r++) {
            calls += all[r].n[i][0];
            ran += all[r].n[i][1];
            bytes += all[r].n[i][2];
            ns = all[r].n[i][3] > ns ? all[r].n[i][3] : ns;
            if (all[r].n[i][4] > top) top = all[r].n[i][4], why = all[r].why[i];
        }
        if (!calls) continue;
        uint64_t native = calls > ran ? calls - ran : 0;
        fprintf(f,
                "topocoll: report %s calls=%llu accelerated=%llu bytes=%llu time_s=%.6f "
                "native=%llu (%s)\n",
                tc_coll_call(i), (unsigned long long)calls, (unsigned long long)ran,
                (unsigned long long)bytes, (double)ns / 1e9, (unsigned long long)native,
                native == 0 ? "-"
                : why       ? why
                            : "trivial or not screened");
    }
}

int topocoll_report_write(MPI_Comm comm)
{
    int rank, size, rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS) return rc;
    PMPI_Comm_size(comm, &size);
    rank_report_t mine, *all = NULL;
    local_report(&mine);
    if (rank == 0 && !(all = malloc((size_t)size * sizeof(*all)))) return MPI_ERR_NO_MEM;
    rc = PMPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0, comm);
    if (rank == 0 && rc == MPI_SUCCESS) {
        const char *path = tc_config_get()->report_file;
        FILE *f = path ? fopen(path, "w") : stderr;
        if (!f) {
            tc_log_line("topocoll: ", "TOPOCOLL_REPORT_FILE=%s: %s; the report goes to stderr",
                        path, strerror(errno));
            f = stderr;
        }
        write_lines(f, all, size);
        if (f != stderr) fclose(f);
    }
    free(all);
    return rc;
}
