/*
 * coll/tree -- the split binomial tree of the progress-threads paper
 * (section 6): a flat binomial Bcast or Reduce over the communicator's
 * processes whose levels (1 = the leaves' level, H = ceil(log2 N) = the
 * root's) are split between two executors: the S leaf-side levels run on
 * the application's core, the H - S root-side levels on the communication
 * core (the progress thread).  Bcast: the progress thread runs the upper
 * levels first, the application the last S inside MPI_Wait; Reduce: the
 * application runs the S leaf-side levels inside the initiating call,
 * then the progress thread the upper ones (the paper's section 6.1 and
 * the implementer notes).
 *
 * As a resumable state machine: init (the process's steps: at most one
 * receive and log2 N sends for Bcast, the reverse for Reduce, each tagged
 * with its level), work (never blocks: runs the steps the calling
 * executor owns, in order, and stops at the first one owned by the other
 * executor or not yet possible), fini.  Messages go over pcomm with the
 * underlying MPI's point-to-point (its shared-memory transport on one
 * node).  Commutative ops only (the combination order follows the tree).
 *
 * Owns: tc_tree_t (its reduction buffers are the context's, tc_ctx_buf).  May call: coll/ctx,
 * coll/model, coll/op, PMPI point-to-point.
 */
#ifndef TC_COLL_TREE_H
#define TC_COLL_TREE_H

#include "ctx.h"
#include "op.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define TC_TREE_MAXSTEP 34 /* one receive and up to 32 sends (or the reverse), + 1 */

enum { TC_TREE_BCAST = 0, TC_TREE_REDUCE };
enum { TC_EXEC_ANY = 0, TC_EXEC_APP, TC_EXEC_COMM }; /* who calls work */

typedef struct tc_tree_step {
    int level; /* 1 = leaves' level */
    int peer;  /* pcomm rank */
    int recv;  /* 1: receive, 0: send */
} tc_tree_step_t;

typedef struct tc_tree {
    tc_ctx_t *ctx;
    int kind, root, height, s;
    char *buf;      /* Bcast: the buffer; Reduce: the accumulator */
    const char *in; /* Reduce: this process's input */
    char *out;      /* Reduce: the root's result */
    char *tmp;      /* Reduce: a child's contribution */
    size_t count, bytes;
    tc_rtype_t t;
    uint64_t seq;
    int tag;
    int nstep, cur; /* steps, next step to run */
    tc_tree_step_t step[TC_TREE_MAXSTEP];
    MPI_Request req; /* the current step's request */
    int posted;
    MPI_Request sreq[TC_TREE_MAXSTEP]; /* Bcast: sends in flight */
    int nsend, sdone;
} tc_tree_t;

/** Levels of the split tree the application runs: TOPOCOLL_SPLIT_TREE_S
 *  (clipped to H), else the model's best S (coll/model: tc_st_best_s with N
 *  the processes of the node and N + TOPOCOLL_COMM_CORES cores). */
int tc_tree_split(const tc_ctx_t *ctx, int comm_cores);

/** Prepare a split-tree Bcast of @bytes at @buf from @root (kind
 *  TC_TREE_BCAST), or Reduce of @count elements of @t from @in into
 *  @root's @out (TC_TREE_REDUCE; @in may equal @out at the root).
 *  @s: leaf-side levels for the application.  MPI_SUCCESS or
 *  MPI_ERR_NO_MEM. */
tc_status_t tc_tree_init(tc_tree_t *op, tc_ctx_t *ctx, int kind, const void *in, void *out,
                         size_t count, const tc_rtype_t *t, size_t bytes, int root, int s);
/** Advance the steps @who owns (TC_EXEC_APP: levels <= S; TC_EXEC_COMM:
 *  levels > S; TC_EXEC_ANY: all): TC_OK, TC_INPROGRESS or an MPI
 *  error code. */
tc_status_t tc_tree_work(tc_tree_t *op, int who);
/** 1 when every step at a level <= S is done (Reduce's initiating call
 *  returns then). */
int tc_tree_leaves_done(const tc_tree_t *op);
void tc_tree_fini(tc_tree_t *op);

/* The split tree's Allreduce: a split-tree Reduce to rank 0, then a
 * split-tree Bcast of its result (bit-identical everywhere). */
typedef struct tc_tree_allreduce {
    tc_tree_t tree;
    int phase; /* 0 the Reduce, 1 the Bcast */
    int s;
    void *out;
    size_t bytes;
} tc_tree_allreduce_t;

/** Prepare it: @count elements of @t from @in into every process's @out. */
tc_status_t tc_tree_allreduce_init(tc_tree_allreduce_t *op, tc_ctx_t *ctx, const void *in,
                                   void *out, size_t count, const tc_rtype_t *t, int s);
/** As tc_tree_work, over both phases. */
tc_status_t tc_tree_allreduce_work(tc_tree_allreduce_t *op, int who);
/** 1 when the initiating call's part is done: the Reduce's leaf-side levels. */
int tc_tree_allreduce_leaves_done(const tc_tree_allreduce_t *op);
void tc_tree_allreduce_fini(tc_tree_allreduce_t *op);

#endif
