/*
 * api/api_int -- what the blocking calls (api.c) and the nonblocking ones
 * (nbc_api.c) share (api/screen.c): each collective's argument screening
 * and buffer preparation, written once; the blocking driver over coll/'s
 * operations table; and the one place a failure becomes an MPI error.
 *
 * Screening answers the same on every rank of a correct program, so
 * either every rank runs the call through topocoll or every rank passes
 * it to the native MPI.
 *
 * Failures.  A failure every rank sees alike (the context's set-up, a
 * datatype/op pair topocoll does not handle) sends the call to the native
 * MPI, said in a debug line.  A resource failure on one rank after the
 * decision (no memory for a packed copy or a request) cannot go native:
 * the other ranks are already inside topocoll's algorithm, and a native
 * call on one rank would hang the job.  It fails the call on that rank
 * with MPI_ERR_NO_MEM through the communicator's error handler, after one
 * line saying so.  topocoll itself never aborts the job; the handler
 * MPI_ERRORS_ARE_FATAL does, on the whole communicator (tc_api_finish).
 *
 * Owns nothing.  May call: nbc/, coll/, xfer/, base/, PMPI.
 */
#ifndef TC_API_INT_H
#define TC_API_INT_H

#include "../base/status.h"
#include "../coll/coll.h"
#include "../coll/ctx.h"
#include "../coll/op.h"
#include "../coll/plan.h"
#include "../coll/xtune.h"
#include "../nbc/nbc.h"

#include <mpi.h>
#include <stddef.h>
#include <string.h>

/* What a screening decided (an MPI error class already raised otherwise). */
enum {
    TC_API_RUN = -1,    /* topocoll runs the call: the plan says on what */
    TC_API_NATIVE = -2, /* the native MPI runs it: the plan says why */
    TC_API_NOTHING = -3 /* nothing to move: MPI_SUCCESS (or the native's trivial request) */
};

/* A nonblocking call's native start @call; while topocoll_*_init makes a
 * persistent request (nbc.h), TC_NB_PERSIST_NATIVE instead: the init then
 * makes the native MPI's persistent request. */
#define TC_API_INATIVE(call) (tc_nb_persist_pending() ? TC_NB_PERSIST_NATIVE : (call))

/* A screened call, and its plan (coll/plan) once chosen. */
typedef struct tc_api_call {
    tc_ctx_t *ctx;   /* the context (may be set for a native call: its statistics) */
    const char *why; /* native: why (TOPOCOLL_VERBOSE=2) */
    int fallback;    /* native: 1 counts as a fallback in ctx's statistics */
    size_t bytes;    /* Bcast's bytes, a reduction's span, Allgather's block */
    tc_rtype_t t;    /* reductions: datatype and op */
    const void *in;  /* reductions: the operand (MPI_IN_PLACE resolved) */
    tc_plan_t plan;  /* tc_api_choose's */
} tc_api_call_t;

/** An erroneous argument: one line on stderr, the error class through
 *  @comm's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL), returned. */
int tc_api_arg_error(MPI_Comm comm, int cls, const char *call, const char *what, long long v);

/** 1 if @call (an MPI function name, "MPI_Ibcast") is a nonblocking
 *  collective: its start must be local, so it never builds a context
 *  (coll/ctx tc_ctx_get). */
static inline int tc_api_nonblocking(const char *call) { return strncmp(call, "MPI_I", 5) == 0; }

/** Debug line (TOPOCOLL_VERBOSE=2): @call passed to the native MPI. */
void tc_api_why_native(const char *call, const char *why);

/** @plan's native call: counted (fallback) and said; then the caller
 *  calls the native MPI. */
void tc_api_native(const char *call, const tc_api_call_t *plan, int stat);

/** The plan of a screened call (@rc from a screening: anything but
 *  TC_API_RUN is returned as it is) of collective @ci (TC_CI_*), into
 *  @call->plan (coll/plan tc_plan_select): TC_API_RUN, or TC_API_NATIVE
 *  with @call->why, counted as a choice.  A blocking call passes @xt:
 *  above the FLAT_MAX, unless an algorithm is forced, coll/xtune measures
 *  there (tc_xtune_begin; collective over the communicator), and the
 *  caller passes @xt to tc_xtune_end when the call returns, native or
 *  not.  A nonblocking start passes NULL and takes the decided choice,
 *  so both forms run the same plan.  A persistent init (nbc's persistent
 *  mode) of a collective whose own persistent form the MPI library gets
 *  wrong (tc_api_native_persist_broken) takes topocoll's algorithm
 *  wherever one applies (coll/plan tc_plan_select_own). */
int tc_api_choose(int rc, tc_api_call_t *call, int ci, tc_xt_call_t *xt);
/** 1 if the MPI library's own persistent form of collective @ci
 *  (MPI_<Coll>_init) is known to be wrong: MPICH 4.0's MPI_Allgather_init
 *  gives wrong blocks from its second start and drops a reference to its
 *  datatypes at each one, its MPI_Gather_init leaves a root's receive
 *  datatype with gaps unfilled, its MPI_Scatter_init fails its second
 *  start at np=4 (docs/limitations.md).  0 under Open MPI. */
int tc_api_native_persist_broken(int ci);

/** 1 if @count elements of @dt are one contiguous run of @bytes bytes,
 *  starting at buf + *@lb_out. */
int tc_api_contiguous(int count, MPI_Datatype dt, size_t bytes, MPI_Aint *lb_out);

/* ---- Screening, one per collective ----------------------------------------- */

/** Bcast (MPI_Bcast, MPI_Ibcast). */
int tc_api_screen_bcast(const char *call, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                        tc_api_call_t *plan);

/** Reduce (MPI_Reduce, MPI_Ireduce): the arguments MPI checks, the root,
 *  MPI_IN_PLACE at a non-root, aliasing, single copy. */
int tc_api_screen_reduce(const char *call, const void *sendbuf, const void *recvbuf, int count,
                         MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, tc_api_call_t *plan);

/** Allreduce (MPI_Allreduce, MPI_Iallreduce): as Reduce, without a root.
 *  Single copy is the caller's check (tc_api_single_copy_ok): the split
 *  tree does without. */
int tc_api_screen_allreduce(const char *call, const void *sendbuf, const void *recvbuf, int count,
                            MPI_Datatype dt, MPI_Op op, MPI_Comm comm, tc_api_call_t *plan);

/** Scan (MPI_Iscan). */
int tc_api_screen_scan(const char *call, const void *sendbuf, const void *recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm, tc_api_call_t *plan);

/** Allgather (MPI_Allgather, MPI_Iallgather). */
/** The operation of a Scan (@exclusive: Exscan) the plan chose (coll/plan:
 *  TC_ALG_LEADER, the node prefix; else the chain). */
static inline int tc_api_scan_kind(const tc_api_call_t *p, int exclusive)
{
    if (p->plan.alg == TC_ALG_LEADER) return exclusive ? TC_COLL_HEXSCAN : TC_COLL_HSCAN;
    return exclusive ? TC_COLL_EXSCAN : TC_COLL_SCAN;
}

/** MPI_Reduce_scatter_block (@counts NULL, @count elements a block) or
 *  MPI_Reduce_scatter (@counts, a count per rank; the caller passes a
 *  NULL array to the native MPI): the reduction's screening over the
 *  whole vector (plan->bytes: its span, the same on every rank;
 *  plan->in: the operand). */
int tc_api_screen_redscat(const char *call, const void *sendbuf, const void *recvbuf,
                          const int *counts, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          tc_api_call_t *plan);
int tc_api_screen_allgather(const char *call, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, tc_api_call_t *plan);

/** The exchanges' first screening step: @p cleared; MPI_COMM_NULL raises
 *  MPI_ERR_COMM (returned), an intercommunicator is TC_API_NATIVE; else
 *  TC_API_RUN with *@size and *@rank (and p->ctx when @comm's context is
 *  built and enabled: nothing asked of MPI). */
int tc_api_comm_of(MPI_Comm comm, const char *call, tc_api_call_t *p, int *size, int *rank);

/** The exchanges' last step: @p's context (p->ctx, or built or found by
 *  tc_ctx_get for a call of @bytes: the same on every rank, else 0),
 *  TC_API_RUN, or TC_API_NATIVE when it is cold or disabled (a
 *  fallback). */
int tc_api_ctx_of(MPI_Comm comm, const char *call, size_t bytes, tc_api_call_t *p);

/** A nonblocking call without a request pointer: TC_API_NATIVE (the
 *  native MPI raises what it raises). */
static inline int tc_api_no_request(tc_api_call_t *plan)
{
    plan->why = "no request pointer";
    plan->fallback = 0;
    return TC_API_NATIVE;
}

/** 1 if a reduction of plan->bytes can run on plan->ctx: through the
 *  shared segment, or by single copy where every node has it; else
 *  TC_API_NATIVE's plan (a fallback). */
int tc_api_single_copy_ok(tc_api_call_t *plan);

/* ---- Buffers: contiguous bytes, packed copies otherwise ----------------------- */

/** A contiguous view of @count @dt at @buf (@bytes, their size): the
 *  buffer itself, or a copy in *@tmp, packed from @buf when @pack.  TC_OK
 *  or TC_ERR_NOMEM. */
tc_status_t tc_api_view(const void *buf, int count, MPI_Datatype dt, size_t bytes, int pack,
                        MPI_Comm comm, char **v, char **tmp);

/** The bytes a Bcast of @count @dt at @buffer moves: @buffer's own when
 *  contiguous (*@tmp NULL), else a packed copy in *@tmp (the root packs
 *  it; the others unpack it after the call: tc_api_bcast_unpack).
 *  TC_OK or TC_ERR_NOMEM. */
tc_status_t tc_api_bcast_buffer(const tc_api_call_t *plan, void *buffer, int count, MPI_Datatype dt,
                                int root, MPI_Comm comm, void **bytes, char **tmp);

/** An Allgather's contiguous input and output: *@in our block, *@out the
 *  size blocks; packed copies in @tmp[0] (output: unpack it after the call
 *  into @recvbuf) and @tmp[1] (input) when the datatypes are not
 *  contiguous.  TC_OK or TC_ERR_NOMEM (@tmp freed). */
tc_status_t tc_api_allgather_buffers(const tc_api_call_t *plan, const void *sendbuf, int sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, const void **in,
                                     char **out, char *tmp[2]);

/* ---- Running and failing ----------------------------------------------------- */

/** Run operation @kind (coll/coll) with @a on @c to completion (the
 *  blocking calls), counting it.  Its status. */
tc_status_t tc_api_run(tc_ctx_t *c, int kind, const tc_coll_args_t *a);

/** The MPI error code of a failure @st of @call on @c (TC_OK:
 *  MPI_SUCCESS): one line naming the cause (stale cookie, rights, the
 *  kernel's errno, the MPI error), and @c is never kept for reuse. */
int tc_api_error(tc_ctx_t *c, tc_status_t st, const char *call);
/** The same for rank @rank, without a context (the nonblocking engine's
 *  hook: the communicator may be gone). */
int tc_api_error_rank(int rank, tc_status_t st, const char *call);

/** A blocking call's end: MPI_SUCCESS, or @st's MPI error code through
 *  @comm's error handler (tc_api_error). */
int tc_api_finish(tc_ctx_t *c, MPI_Comm comm, tc_status_t st, const char *call);

/* ---- The report (report.c, TOPOCOLL_REPORT) ------------------------------------ */

/** Count a call topocoll runs, of statistics slot @stat (TC_STAT_*). */
void tc_report_ran(int stat);
/** Count @call (an MPI name, "MPI_Ibcast") passed to the native MPI
 *  because of @why. */
void tc_report_native(const char *call, const char *why);

/* ---- Nonblocking operations (nbc_api.c) ---------------------------------------- */

struct tc_nb;
/** A new operation of @kind (coll/coll) on @plan's context started by
 *  @call, or NULL (no memory); its arguments are the caller's to fill. */
struct tc_nb *tc_api_nb_new(const tc_api_call_t *plan, int kind, const char *call);
/** Keep a reference to the user's datatype @dt until the operation
 *  completes (the application may free its handle once the call returns),
 *  and unpack the operation's output into @ubuf (@ucount elements) then.
 *  0, or -1. */
int tc_api_nb_keep_type(struct tc_nb *op, void *ubuf, int ucount, MPI_Datatype dt);
/** The operation's input packing (@count of @dt at @src into @bytes at
 *  @dst, one of its copies; @dst NULL: none), kept for a persistent
 *  request to redo at each start (nbc.h tc_nb_t.pk_*, @dt duplicated);
 *  marks the operation as one that repacks, so that its packed copies do
 *  not send it native when persistent (whether a process packs depends on
 *  its own datatypes).  0, or -1 without memory. */
int tc_api_nb_keep_pack(struct tc_nb *op, const void *src, int count, MPI_Datatype dt, char *dst,
                        size_t bytes);
/** Free an operation never started, with its copies. */
void tc_api_nb_discard(struct tc_nb *op);

#endif
