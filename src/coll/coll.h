/*
 * coll/coll -- the collectives' operations table (as Open MPI's XHC and
 * HAN drive every collective through one table per kind): for each kind
 * of operation, its state machine's init, work and fini steps and the
 * context's statistics slot it counts in.  Every driver runs a collective
 * through it alike: the blocking calls' loop (api/), the nonblocking
 * engine (nbc/) and so the progress threads.  Adding a collective is one
 * entry here plus its state machine.
 *
 * The steps: init prepares the operation on a context (TC_OK or a
 * failure; fini is called either way), work advances it without blocking
 * (TC_INPROGRESS until TC_OK or a failure: base/status), fini releases
 * what it holds.  One operation per context runs at a time.
 *
 * Owns: tc_coll_ops_t, tc_coll_args_t, tc_coll_state_t and the table.
 * May call: the collectives of coll/.
 */
#ifndef TC_COLL_COLL_H
#define TC_COLL_COLL_H

#include "allgather.h"
#include "allreduce.h"
#include "barrier.h"
#include "bcast.h"
#include "ctx.h"
#include "exchange.h"
#include "hscan.h"
#include "vexchange.h"
#include "op.h"
#include "redscat.h"
#include "reduce.h"
#include "scan.h"
#include "tree.h"

#include <stddef.h>

typedef enum {
    TC_COLL_BCAST = 0,
    TC_COLL_BARRIER,
    TC_COLL_REDUCE,
    TC_COLL_ALLREDUCE,
    TC_COLL_ALLGATHER,
    TC_COLL_SCAN,
    TC_COLL_TREE_BCAST,     /* the split tree (coll/tree) */
    TC_COLL_TREE_REDUCE,    /* idem, to a root */
    TC_COLL_TREE_ALLREDUCE, /* idem: Reduce to rank 0, then Bcast */
    TC_COLL_GATHER,         /* coll/exchange, in TC_XC_* order */
    TC_COLL_SCATTER,
    TC_COLL_ALLTOALL,
    TC_COLL_EXSCAN,  /* coll/scan, exclusive */
    TC_COLL_GATHERV, /* coll/vexchange, in TC_VX_* order */
    TC_COLL_SCATTERV,
    TC_COLL_ALLGATHERV,
    TC_COLL_ALLTOALLV,
    TC_COLL_REDUCE_SCATTER_BLOCK, /* coll/redscat */
    TC_COLL_REDUCE_SCATTER,
    TC_COLL_HSCAN, /* coll/hscan: Scan by the node prefix */
    TC_COLL_HEXSCAN,
    TC_COLL_ALLTOALLW,     /* coll/vexchange's Alltoallv, counted as Alltoallw */
    TC_COLL_GATHER_NODES,  /* several nodes: coll/vroot's Gatherv, counted as Gather */
    TC_COLL_SCATTER_NODES, /* idem: Scatterv, counted as Scatter */
    TC_COLL_KINDS
} tc_coll_kind_t;

/* An operation's arguments, as its init takes them.  Buffers are
 * contiguous bytes (the bindings pack what is not). */
typedef struct tc_coll_args {
    const void *in;         /* input: a reduction's operand, Allgather's block */
    void *out;              /* output; the Bcast buffer */
    size_t n;               /* bytes (Bcast), elements (reductions), bytes per block (Allgather) */
    const tc_rtype_t *t;    /* reductions: the datatype and op */
    int root;               /* Bcast, Reduce */
    int split;              /* split tree: leaf-side levels the application runs (S) */
    int blocking;           /* 1: a blocking call drives it (it may block in MPI calls) */
    int alt;                /* 1: topocoll's alternative algorithm between nodes (coll/plan
                               tc_plan_alt), as coll/xtune chose it at the call, in program
                               order: the blocking call's measured method, else the decided
                               choice (tc_xtune_alt), the same on every process */
    const size_t *vlen;     /* the irregular exchanges (coll/vexchange): each rank's bytes, */
    const size_t *voff;     /*   and byte offsets, where significant (else NULL); n: ours */
    const int *counts;      /* the reduce-scatters: each rank's elements (NULL: n each) */
    const size_t *vstab;    /* Alltoallv: our block for each rank, length and offset from in */
    size_t vspan;           /*   within vspan bytes */
    tc_region_keep_t *keep; /* a persistent request's regions, kept across its starts
                               (xfer/region; NULL: declared and destroyed per call) */
} tc_coll_args_t;

/* The state of any one operation. */
typedef union tc_coll_state {
    tc_bcast_t bcast;
    tc_barrier_t barrier;
    tc_reduce_t reduce;
    tc_allreduce_t allreduce;
    tc_allgather_t allgather;
    tc_scan_t scan;
    tc_tree_t tree;
    tc_tree_allreduce_t tree_allreduce;
    tc_exchange_t exchange;
    tc_vexchange_t vexchange;
    tc_redscat_t redscat;
    tc_hscan_t hscan;
} tc_coll_state_t;

typedef struct tc_coll_ops {
    const char *call; /* the MPI call it implements, for messages: "MPI_Bcast" */
    tc_status_t (*init)(tc_coll_state_t *st, tc_ctx_t *ctx, const tc_coll_args_t *a);
    /* @exec: who calls (TC_EXEC_ANY, or the split tree's TC_EXEC_APP/COMM) */
    tc_status_t (*work)(tc_coll_state_t *st, int exec);
    void (*fini)(tc_coll_state_t *st);
    /* NULL, or (the split tree, all-to-one) 1 once the part the initiating
     * call runs is done: its leaf-side levels */
    int (*leaves_done)(const tc_coll_state_t *st);
    int stat; /* the context's statistics slot it counts in (TC_STAT_*) */
    /* NULL, or after a failure (published or seen by tc_cctl_settle), the
     * step that finishes the operation's network traffic so nothing stays
     * in flight (coll/bcast): TC_INPROGRESS until TC_OK; never blocks */
    tc_status_t (*drain)(tc_coll_state_t *st);
} tc_coll_ops_t;

_Static_assert(TC_COLL_SCATTER - TC_COLL_GATHER == TC_XC_SCATTER &&
                   TC_COLL_ALLTOALL - TC_COLL_GATHER == TC_XC_ALLTOALL,
               "the exchange kinds in coll/exchange's order");
_Static_assert(TC_COLL_SCATTERV - TC_COLL_GATHERV == TC_VX_SCATTERV &&
                   TC_COLL_ALLGATHERV - TC_COLL_GATHERV == TC_VX_ALLGATHERV &&
                   TC_COLL_ALLTOALLV - TC_COLL_GATHERV == TC_VX_ALLTOALLV,
               "the irregular exchange kinds in coll/vexchange's order");

/** The operations of @kind (a tc_coll_kind_t). */
const tc_coll_ops_t *tc_coll_ops(int kind);

#endif
