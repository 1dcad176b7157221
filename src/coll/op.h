/*
 * coll/op -- reduction operators: which (op, datatype) pairs topocoll
 * accelerates, and the kernels that apply them.
 *
 * Every predefined op is accepted on the predefined C, C++ and Fortran
 * datatypes the MPI standard (4.0, section 6.9.2) defines it for (a
 * Fortran program's MPI_DOUBLE_PRECISION sum included); pairs outside
 * that table go to the native collective, which raises the error the
 * user expects.  User-defined ops are applied with MPI_Reduce_local.  Our
 * own kernels (plain loops the compiler vectorises) exist only for
 * SUM/MAX/MIN on float, double, int32 and int64 elements, whichever
 * language names them (MPI_REAL, MPI_INTEGER8...; chosen by the type's
 * size), the hot cases where they beat the library's
 * dispatch; everything else goes through MPI_Reduce_local.
 *
 * Order: tc_op_apply(in, inout) computes inout = in op inout, as
 * MPI_Reduce_local does; the collectives fold operands right to left
 * (s0 op (s1 op (... op s_{n-1}))), the canonical rank order, so the
 * result does not depend on which process computes it.
 *
 * Owns nothing.  May call: PMPI (type queries, Reduce_local).
 */
#ifndef TC_COLL_OP_H
#define TC_COLL_OP_H

#include "../base/status.h"

#include <mpi.h>
#include <stddef.h>

/* The shape of a reduction buffer: @count elements @extent bytes apart,
 * each with @tsize bytes of data starting at offset 0 (pair types such as
 * MPI_DOUBLE_INT have tsize < extent).  Byte span of n elements:
 * tc_span(). */
typedef struct tc_rtype {
    MPI_Datatype dt;
    MPI_Op op;
    size_t extent; /* bytes between elements */
    size_t tsize;  /* true extent of one element (bytes) */
    int commutative;
    int kernel; /* our own kernel id, 0 = MPI_Reduce_local */
} tc_rtype_t;

/** Bytes spanned by @n elements (0 for n == 0). */
static inline size_t tc_span(const tc_rtype_t *t, size_t n)
{
    return n ? (n - 1) * t->extent + t->tsize : 0;
}

/**
 * Classify (@dt, @op) for acceleration.  Returns 1 and fills @t when
 * topocoll can reduce this pair itself: a predefined op on a predefined
 * datatype it is defined for, or a user op on a datatype whose elements
 * are contiguous with lower bound 0.  Returns 0 otherwise (the caller
 * passes the call to the native MPI).  Local; no communication.  The
 * answers for predefined pairs are kept per thread (the last few pairs),
 * so a repeated pair costs two handle comparisons.
 */
int tc_op_classify(MPI_Datatype dt, MPI_Op op, tc_rtype_t *t);

/** inout[k] = in[k] op inout[k] for @n elements of @t.  @in and @inout
 *  must not overlap.  Returns MPI_SUCCESS or an MPI error code. */
tc_status_t tc_op_apply(const tc_rtype_t *t, const void *in, void *inout, size_t n);

/** Name of the kernel tc_op_apply uses for @t ("double sum (vectorised)",
 *  "MPI_Reduce_local"), for topocoll_info and the benchmark. */
const char *tc_op_kernel_name(const tc_rtype_t *t);

#endif
