/*
 * tools/info_model.h -- topocoll_info's cost-model mode (coll/cost): the
 * predicted time of each collective, native and topocoll, for a node
 * count, processes per node and link rate; its check against the
 * emulated hosts' measurements (scripts/scale_bench.sh's CSV); the fit of
 * the emulation's two parameters.  No MPI: it runs before MPI_Init.
 *
 * May call: coll/cost, base/config (tc_parse_rate), libc.
 */
#ifndef TC_TOOLS_INFO_MODEL_H
#define TC_TOOLS_INFO_MODEL_H

#include <stddef.h>

typedef struct info_model {
    int nodes, ppn;      /* --model NxP */
    double link_bps;     /* --link RATE (bits/s); default 1e9 */
    double alpha_us;     /* --alpha US: latency between nodes; <= 0: the default */
    int switches;        /* --switches S[:UPLINK]: leaf switches (0, 1: one level) */
    double uplink_bps;   /* their uplinks (bits/s); 0: unlimited */
    const char *emulate; /* --emulate CORES:SCHED_US:CPU_MBPS, or NULL */
    const char *check;   /* --check CSV: predictions against a scale_bench summary */
    int fit;             /* --fit (with --check): alpha and the emulation's sched, cpu fitted */
    int fit_hosts;       /* --fit=K: on the rows of at most K hosts (0: all) */
    const size_t *sizes; /* the sizes (bytes), or none: 8 64K 1M 4M */
    int nsizes;
} info_model_t;

/** Parses "NxP" into @m (1 <= N, P <= 1<<20); 0, or -1. */
int info_model_shape(const char *arg, info_model_t *m);

/** Runs the mode: the table, or the check (and fit).  Returns the exit status. */
int info_model_run(const info_model_t *m);

#endif
