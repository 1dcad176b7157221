/*
 * api/api_int -- argument screening shared by the blocking calls (api.c)
 * and the nonblocking ones (nbc_api.c).  Internal.
 *
 * Owns nothing.  May call: coll/, PMPI.
 */
#ifndef TC_API_INT_H
#define TC_API_INT_H

#include "../coll/ctx.h"
#include "../coll/op.h"

#include <mpi.h>
#include <stddef.h>

/** An erroneous argument: one line on stderr, the error class through
 *  @comm's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL), returned. */
int tc_api_arg_error(MPI_Comm comm, int cls, const char *call, const char *what, long long v);

/** tc_api_check_reduction's answer for arguments only the native MPI
 *  judges (no MPI error code is negative). */
#define TC_API_TO_NATIVE (-2)

/** The checks every reduction makes: MPI_SUCCESS, the error raised
 *  (MPI_COMM_NULL, negative count: the native MPI may not survive them),
 *  or TC_API_TO_NATIVE (null datatype or op): the caller passes the call
 *  to the native MPI, whose error class the user expects. */
int tc_api_check_reduction(const char *call, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);

/** The context and reduction type when topocoll handles a reduction,
 *  NULL (with @why) when it goes native; *@is_fallback when the context
 *  exists but the call is passed on (counted as a fallback). */
tc_ctx_t *tc_api_reduction_ctx(int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, tc_rtype_t *t,
                               int *is_fallback, const char **why);

/** 1 if @count elements of @dt are one contiguous run of @bytes bytes,
 *  starting at buf + *@lb_out. */
int tc_api_contiguous(int count, MPI_Datatype dt, size_t bytes, MPI_Aint *lb_out);

/** The screening MPI_Allgather and MPI_Iallgather share.  Returns the error
 *  class already raised for an erroneous argument, else MPI_SUCCESS with
 *  *@ctx the context topocoll runs the call on (NULL: native), or with
 *  *@is_fallback set when the context exists but the call goes native
 *  (counted as a fallback); *@block the bytes per rank, *@why the reason.
 *  Every test gives the same answer on every rank of a correct program. */
int tc_api_allgather_screen(const char *call, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, size_t *block, tc_ctx_t **ctx, int *is_fallback,
                            const char **why);

/** Debug line (TOPOCOLL_VERBOSE=2): @call passed to the native MPI. */
void tc_api_why_native(const char *call, const char *why);

#endif
