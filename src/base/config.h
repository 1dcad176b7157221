/*
 * base/config -- process-wide configuration, parsed once from TOPOCOLL_*
 * environment variables into one read-only struct.
 *
 * Owns: tc_config_t.  May call: libc only.  Every layer reads it; nobody
 * writes it after tc_config_get() returns.
 */
#ifndef TC_BASE_CONFIG_H
#define TC_BASE_CONFIG_H

#include "colls.h"

#include <stddef.h>

typedef enum { TC_SC_AUTO = 0, TC_SC_CMA, TC_SC_NONE } tc_sc_mode_t;
typedef enum { TC_VN_BLOCK = 0, TC_VN_CYCLIC } tc_vn_order_t;
typedef enum { TC_PLACE_BIND = 0, TC_PLACE_NUMA, TC_PLACE_ODDEVEN } tc_place_policy_t;
enum { TC_TUNE_OFF = 0, TC_TUNE_ON = 1, TC_TUNE_FORCE_CICO = 2 }; /* tc_config_t.tune */

typedef struct tc_config {
    int disable;                  /* TOPOCOLL_DISABLE=1: every call goes to PMPI */
    int comm_lazy;                /* TOPOCOLL_COMM_LAZY: collectives on a communicator
                                     that go to PMPI before its context is built */
    int comm_keep;                /* TOPOCOLL_COMM_KEEP: contexts of freed communicators kept */
    size_t comm_lazy_min;         /* TOPOCOLL_COMM_LAZY_MIN (0: off): a call of at least this many
                                     bytes builds the context at once */
    int verbose;                  /* TOPOCOLL_VERBOSE=0..2 */
    int report;                   /* TOPOCOLL_REPORT: the report at MPI_Finalize */
    const char *report_file;      /* TOPOCOLL_REPORT_FILE, or NULL: stderr */
    const char *topology_xml;     /* TOPOCOLL_TOPOLOGY, NULL = this host */
    const char *binding;          /* TOPOCOLL_BINDING, NULL = real binding */
    int virtual_nodes;            /* TOPOCOLL_VIRTUAL_NODES, >= 1 */
    tc_vn_order_t vn_order;       /* TOPOCOLL_VIRTUAL_NODES_ORDER=block|cyclic */
    tc_sc_mode_t single_copy;     /* TOPOCOLL_SINGLE_COPY=auto|cma|none */
    size_t bcast_segsize;         /* TOPOCOLL_BCAST_SEGSIZE, 0 = HierKNEM Table 1 */
    size_t bcast_cico_max;        /* TOPOCOLL_BCAST_CICO_MAX: CICO at or below (bytes) */
    size_t flat_max[TC_NCOLLS];   /* TOPOCOLL_<COLL>_FLAT_MAX (base/colls.def FLAT 1; else
                                     0): on several nodes, at or below this size (bytes:
                                     the message, a block) the native collective runs (its
                                     flat algorithms beat a hierarchy's hand-offs for
                                     small messages) */
    int alg[TC_NCOLLS];           /* TOPOCOLL_<COLL>_ALG: TC_ALG_AUTO, or the tc_alg_t
                                     forced (coll/plan) */
    int xtune;                    /* TOPOCOLL_XTUNE: 1 = on several nodes, above the
                                     FLAT_MAX, measure native and topocoll (coll/xtune) */
    size_t xtune_max;             /* TOPOCOLL_XTUNE_MAX: up to this size (bytes) */
    int barrier_flat;             /* TOPOCOLL_BARRIER_FLAT: 1 = the native barrier on
                                     several nodes */
    size_t chain_min;             /* TOPOCOLL_CHAIN_MIN: from this size, with 3 nodes or
                                     more, Bcast and Reduce segments travel along a chain
                                     of nodes (pipelined) instead of a binomial tree */
    size_t halving_min;           /* TOPOCOLL_HALVING_MIN: from this size, with 4 nodes or
                                     more, Reduce's leaders run Rabenseifner's reduce below
                                     the chain's sizes (coll/plan tc_plan_reduce_net) */
    size_t bcast_owners_min;      /* TOPOCOLL_BCAST_OWNERS_MIN: from this size, with 3 nodes
                                     or more, below the chain's sizes, coll/xtune measures
                                     Bcast's block owners (coll/plan tc_plan_bcast_net) */
    size_t bcast_share_min;       /* TOPOCOLL_BCAST_ROOT_SHARE_MIN: from this size the
                                     root writes a share of each receiver's buffer */
    size_t cico_slot;             /* TOPOCOLL_CICO_SLOT: bytes per CICO slot */
    int cico_slots;               /* TOPOCOLL_CICO_SLOTS: slots per process (16) */
    size_t red_segsize;           /* TOPOCOLL_REDUCE_SEGSIZE: pipeline segment of Reduce
                                     and Allreduce (bytes), 0 = automatic */
    size_t red_cico_max;          /* TOPOCOLL_REDUCE_CICO_MAX: Reduce/Allreduce through
                                     the CICO slots at or below (bytes per process) */
    size_t red_eager_max;         /* TOPOCOLL_REDUCE_EAGER_MAX: one-node Reduce eager at or
                                     below (bytes per process) */
    size_t root_share_min;        /* TOPOCOLL_ROOT_SHARE_MIN: one-node Gather/Scatter
                                     blocks the root copies a share of, at or above
                                     (bytes; 0: never) */
    size_t vx_share_min;          /* TOPOCOLL_VCOLL_SHARE_MIN: the same, Gatherv/Scatterv */
    size_t allgather_cico_max;    /* TOPOCOLL_ALLGATHER_CICO_MAX: same, per block */
    size_t allgather_rd_max;      /* TOPOCOLL_ALLGATHER_RD_MAX: leaders by recursive doubling up
                                     to this many bytes per node */
    int alltoall_window;          /* TOPOCOLL_ALLTOALL_WINDOW: Alltoall across nodes,
                                     steps out ahead of the steps in (0: all; -1: by
                                     the node count, coll/exchange) */
    size_t vx_item_max;           /* TOPOCOLL_VCOLL_ITEM_MAX: the irregular exchanges'
                                     longest block carried in its sender's item (0: by
                                     the MPI library, coll/vexchange TC_VX_EAGER_MAX) */
    int tune;                     /* TOPOCOLL_TUNE=0|1|cico: one-node Reduce/Allreduce/
                                     Allgather/Bcast choose CICO or single copy online
                                     above their CICO_MAX (coll/tune's range); 0: single
                                     copy there; cico (TC_TUNE_FORCE_CICO): CICO there */
    int tune_explore;             /* TOPOCOLL_TUNE_EXPLORE: every Nth call of a size
                                     class re-tries the slower method */
    const char *leaders;          /* TOPOCOLL_LEADERS=auto|nic|first|numa|package (topo/nic
                                     parses it), NULL = auto */
    size_t multileader_min;       /* TOPOCOLL_MULTILEADER_MIN: under policy auto, Bcast and
                                     Allgather use per-package leaders from this size */
    int nap_us;                   /* TOPOCOLL_NAP: us a waiter sleeps after 16 yields;
                                     -1 = auto (tc_config_nap) */
    int spin_count;               /* TOPOCOLL_SPIN: polls before yielding; -1 = auto
                                     (200, or 0 when the host is oversubscribed) */
    int comm_cores;               /* TOPOCOLL_COMM_CORES: communication cores per node,
                                     0 = progress only in the application's calls */
    tc_place_policy_t placement;  /* TOPOCOLL_PROGRESS_PLACEMENT=bind|numa|odd-even */
    int nbc_split_tree;           /* TOPOCOLL_NBC_ALG: 1 = split tree for Ibcast/Ireduce
                                     (default when comm_cores > 0), 0 = hierarchical */
    int persist;                  /* TOPOCOLL_PERSIST: 1 = topocoll's persistent requests
                                     (starts in the same order everywhere), 0 = native */
    int split_tree_s;             /* TOPOCOLL_SPLIT_TREE_S: tree levels run in the
                                     initiating call; -1 = the model's choice */
    const char *nic;              /* TOPOCOLL_NIC: cards in rail order (topo/nic parses
                                     it), NULL = InfiniBand/RDMA cards, else network */
    const char *network_topology; /* TOPOCOLL_NETWORK_TOPOLOGY: Slurm topology.conf
                                  (topo/loc reads it), NULL = no network levels */
} tc_config_t;

/*
 * The parameters: ONE table in config.c (name, kind, default as text,
 * range or values, floor, one-line description, field of tc_config_t)
 * parses the environment and lists itself (topocoll_info --config,
 * docs/tuning.md).  A value the table rejects warns once (naming the
 * variable and the default used); so does a TOPOCOLL_* variable the table
 * does not know, and a size below its parameter's floor (naming the value
 * given and the floor used instead).
 */
typedef enum {
    TC_PARAM_SIZE,  /* bytes, K/M/G suffixes (tc_parse_size) -> size_t */
    TC_PARAM_INT,   /* integer (same suffixes, may be negative) -> int */
    TC_PARAM_ENUM,  /* one of a list of words -> an int or enum field */
    TC_PARAM_STRING /* free text -> const char *, NULL when unset or empty */
} tc_param_kind_t;

typedef enum {
    TC_PARAM_DEFAULT = 0, /* unset (or empty): the default */
    TC_PARAM_ENV,         /* the environment's value */
    TC_PARAM_REJECTED,    /* the environment's value was rejected: the default */
    TC_PARAM_RAISED       /* the environment's size was below the floor: the floor */
} tc_param_src_t;

typedef struct tc_param_choice {
    const char *name; /* the word, e.g. "cyclic" */
    int value;        /* what lands in the field */
    int alias;        /* 1: accepted, but not listed ("oddeven") */
} tc_param_choice_t;

typedef struct tc_param {
    /* the table (config.c) */
    const char *name; /* "TOPOCOLL_..." */
    tc_param_kind_t kind;
    const char *dflt;                 /* default as text; STRING: what unset means */
    long long lo, hi;                 /* SIZE, INT: accepted range */
    long long min;                    /* SIZE: the floor: a value in [lo, min) other
                                         than 0 is raised to it (0 keeps its meaning:
                                         automatic, none); 0: no floor */
    const tc_param_choice_t *choices; /* ENUM: the words, {NULL}-terminated */
    size_t offset;                    /* where the value lands in tc_config_t */
    const char *desc;                 /* one line (markdown) */
    /* this process's, filled when the configuration is parsed */
    tc_param_src_t src;
    char value[64];   /* current value as text */
    char source[128]; /* "default", "environment",
                         "environment (rejected: TEXT)",
                         "environment (raised to the floor: TEXT)" */
    char allowed[96]; /* "4K..16M", "0..1G, 1..4095 -> 4K", "block|cyclic",
                         "" (string) */
} tc_param_t;

/** Number of parameters in the table. */
int tc_config_nparams(void);

/** Parameter @i (0 <= i < tc_config_nparams(), table order) with this
 *  process's value and its source; parses the configuration first.
 *  NULL when @i is out of range. */
const tc_param_t *tc_config_param(int i);

/** The value text @s gives parameter @p (no environment, no warning:
 *  what the configuration's parse does with it, the fuzz target's entry):
 *  TC_PARAM_DEFAULT for NULL or "" (*@v untouched), TC_PARAM_REJECTED for
 *  text out of the kind's syntax or range (*@v untouched), else
 *  TC_PARAM_ENV, or TC_PARAM_RAISED with *@v the floor.  SIZE, INT: *@v
 *  the number; ENUM: the choice's value; STRING: *@v untouched. */
tc_param_src_t tc_param_parse_value(const tc_param_t *p, const char *s, long long *v);

/** The kind's name: "size", "int", "enum", "string". */
const char *tc_param_kind_name(tc_param_kind_t k);

/** The configuration (parsed on first call, thread-safe, never NULL). */
const tc_config_t *tc_config_get(void);

/** Polls before a waiter yields its core: TOPOCOLL_SPIN, else 200, or 0
 *  when the host runs more processes (@host_procs) than it has cores
 *  (spinning pays only if the process waited for is running). */
int tc_config_spin(const tc_config_t *cfg, int host_procs);

/** Microseconds a waiter sleeps once it has yielded 16 times in a row:
 *  TOPOCOLL_NAP, else 50 when this host runs more processes
 *  (@host_procs) than it has cores and the communicator spans
 *  @several_hosts, else 0.  Measured on 4 emulated hosts x 2 ranks on 2
 *  cores, 1 Gbit/s links, 2-4 MiB: Bcast 1.2-1.3x the link bound with
 *  20 us, 1.05-1.1x with 50-200 us, against 2-6x yielding only (every
 *  spinner stays runnable, so the process that has data to forward
 *  waits for its turn). */
int tc_config_nap(const tc_config_t *cfg, int host_procs, int several_hosts);

/** Parse a size such as "64K", "1M", "4096", "2MiB" (bytes: decimal digits,
 *  then K, M or G with an optional "i", then an optional "B").  Returns -1
 *  on error (no leading digit, other text, or over LLONG_MAX). */
long long tc_parse_size(const char *s);

/** Parse a link rate in bits/s such as "1G", "100M", "1gbit", "2.5e9"
 *  (decimal K, M or G, then an optional "bit").  Returns -1 on error (no
 *  number, other text, not above 0, not finite). */
double tc_parse_rate(const char *s);

#endif
