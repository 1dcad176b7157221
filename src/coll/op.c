/* coll/op -- see op.h.  Compiled with -O3 (CMakeLists.txt) so the loops
 * below vectorise. */
#include "op.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

enum { K_NONE = 0, K_F32, K_F64, K_I32, K_I64, K_NTYPES, K_SIZE = 0x7f };
enum { OP_SUM = 0, OP_MAX, OP_MIN };

/* Datatype groups of MPI 4.0 section 6.9.2 (C_PAIR: the MINLOC/MAXLOC
 * types of 6.9.4). */
enum {
    C_NONE = 0,
    C_INT,     /* C integer */
    C_FINT,    /* Fortran integer */
    C_MULTI,   /* multi-language types: MPI_AINT, MPI_OFFSET, MPI_COUNT */
    C_FLOAT,   /* floating point (C and Fortran) */
    C_COMPLEX, /* complex (C, C++ and Fortran) */
    C_LOGICAL, /* MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL */
    C_BYTE,
    C_PAIR
};

/* The predefined datatypes topocoll reduces, with their group and kernel
 * family: K_SIZE for signed integers and IEEE floats, whose kernel the
 * element size picks (PMPI_Type_size: 4 and 8 bytes have one, others go
 * to MPI_Reduce_local), K_NONE for the rest (unsigned integers: our MAX
 * and MIN are signed).  Scanned only when tc_op_classify meets a new
 * (datatype, op) pair.  Fortran's sized types are optional (Open MPI's
 * mpi.h defines them only when its Fortran compiler has them), and a
 * handle an MPI build lacks may be MPI_DATATYPE_NULL or have size 0:
 * classify rejects both.  Not here, so passed to the native MPI: types
 * 6.9.2 gives no op (MPI_CHAR, MPI_WCHAR, MPI_CHARACTER, MPI_PACKED);
 * 6.9.2's optional MPI_INTEGER16, MPI_REAL2/16, MPI_COMPLEX4/32, which
 * the libraries reduce unevenly (MPICH 4.0.2: MPI_INTEGER16 null, no op
 * on MPI_COMPLEX32); MPI_LOGICAL1..8 and MPI_2COMPLEX (not in MPI 4.0). */
typedef struct {
    MPI_Datatype dt;
    unsigned char cls, kty;
} dtype_t;

static const dtype_t dtypes[] = {
    /* the hot ones first */
    { MPI_DOUBLE, C_FLOAT, K_SIZE },
    { MPI_FLOAT, C_FLOAT, K_SIZE },
    { MPI_INT, C_INT, K_SIZE },
    { MPI_LONG, C_INT, K_SIZE },
    { MPI_DOUBLE_PRECISION, C_FLOAT, K_SIZE },
    { MPI_REAL, C_FLOAT, K_SIZE },
    { MPI_INTEGER, C_FINT, K_SIZE },
    /* C integer */
    { MPI_SHORT, C_INT, K_SIZE },
    { MPI_UNSIGNED_SHORT, C_INT, K_NONE },
    { MPI_UNSIGNED, C_INT, K_NONE },
    { MPI_UNSIGNED_LONG, C_INT, K_NONE },
    { MPI_LONG_LONG_INT, C_INT, K_SIZE },
    { MPI_LONG_LONG, C_INT, K_SIZE },
    { MPI_UNSIGNED_LONG_LONG, C_INT, K_NONE },
    { MPI_SIGNED_CHAR, C_INT, K_SIZE },
    { MPI_UNSIGNED_CHAR, C_INT, K_NONE },
    { MPI_INT8_T, C_INT, K_SIZE },
    { MPI_INT16_T, C_INT, K_SIZE },
    { MPI_INT32_T, C_INT, K_SIZE },
    { MPI_INT64_T, C_INT, K_SIZE },
    { MPI_UINT8_T, C_INT, K_NONE },
    { MPI_UINT16_T, C_INT, K_NONE },
    { MPI_UINT32_T, C_INT, K_NONE },
    { MPI_UINT64_T, C_INT, K_NONE },
/* Fortran integer */
#ifdef MPI_INTEGER1
    { MPI_INTEGER1, C_FINT, K_SIZE },
#endif
#ifdef MPI_INTEGER2
    { MPI_INTEGER2, C_FINT, K_SIZE },
#endif
#ifdef MPI_INTEGER4
    { MPI_INTEGER4, C_FINT, K_SIZE },
#endif
#ifdef MPI_INTEGER8
    { MPI_INTEGER8, C_FINT, K_SIZE },
#endif
    /* multi-language types: signed, but reduced as the library does it
     * (Open MPI 4.1.4's MAX and MIN on MPI_OFFSET compare unsigned) */
    { MPI_AINT, C_MULTI, K_NONE },
    { MPI_OFFSET, C_MULTI, K_NONE },
    { MPI_COUNT, C_MULTI, K_NONE },
    /* floating point; long double: 16 bytes here, no kernel (were it 8,
     * it would be a double) */
    { MPI_LONG_DOUBLE, C_FLOAT, K_SIZE },
#ifdef MPI_REAL4
    { MPI_REAL4, C_FLOAT, K_SIZE },
#endif
#ifdef MPI_REAL8
    { MPI_REAL8, C_FLOAT, K_SIZE },
#endif
    /* complex */
    { MPI_C_FLOAT_COMPLEX, C_COMPLEX, K_NONE },
    { MPI_C_COMPLEX, C_COMPLEX, K_NONE },
    { MPI_C_DOUBLE_COMPLEX, C_COMPLEX, K_NONE },
    { MPI_C_LONG_DOUBLE_COMPLEX, C_COMPLEX, K_NONE },
#ifdef MPI_CXX_FLOAT_COMPLEX
    { MPI_CXX_FLOAT_COMPLEX, C_COMPLEX, K_NONE },
#endif
#ifdef MPI_CXX_DOUBLE_COMPLEX
    { MPI_CXX_DOUBLE_COMPLEX, C_COMPLEX, K_NONE },
#endif
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
    { MPI_CXX_LONG_DOUBLE_COMPLEX, C_COMPLEX, K_NONE },
#endif
    { MPI_COMPLEX, C_COMPLEX, K_NONE },
    { MPI_DOUBLE_COMPLEX, C_COMPLEX, K_NONE },
#ifdef MPI_COMPLEX8
    { MPI_COMPLEX8, C_COMPLEX, K_NONE },
#endif
#ifdef MPI_COMPLEX16
    { MPI_COMPLEX16, C_COMPLEX, K_NONE },
#endif
    /* logical */
    { MPI_C_BOOL, C_LOGICAL, K_NONE },
#ifdef MPI_CXX_BOOL
    { MPI_CXX_BOOL, C_LOGICAL, K_NONE },
#endif
    { MPI_LOGICAL, C_LOGICAL, K_NONE },
    /* byte */
    { MPI_BYTE, C_BYTE, K_NONE },
    /* MINLOC/MAXLOC pairs */
    { MPI_DOUBLE_INT, C_PAIR, K_NONE },
    { MPI_FLOAT_INT, C_PAIR, K_NONE },
    { MPI_LONG_INT, C_PAIR, K_NONE },
    { MPI_2INT, C_PAIR, K_NONE },
    { MPI_SHORT_INT, C_PAIR, K_NONE },
    { MPI_LONG_DOUBLE_INT, C_PAIR, K_NONE },
    { MPI_2REAL, C_PAIR, K_NONE },
    { MPI_2DOUBLE_PRECISION, C_PAIR, K_NONE },
    { MPI_2INTEGER, C_PAIR, K_NONE },
};

/* @dt's group (C_NONE: not a predefined type topocoll reduces) and
 * kernel family (K_SIZE or K_NONE).  A handle equal to MPI_DATATYPE_NULL
 * (a type this MPI build lacks) never gets here: classify checks first. */
static int dt_class(MPI_Datatype dt, int *kty)
{
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
        if (dt == dtypes[i].dt) {
            *kty = dtypes[i].kty;
            return dtypes[i].cls;
        }
    *kty = K_NONE;
    return C_NONE;
}

/* The kernel type of a K_SIZE element of @size bytes in group @c: signed
 * two's complement integers of 4 and 8 bytes, IEEE single and double. */
static int sized_kernel(int c, int size)
{
    if (c == C_FLOAT) return size == 4 ? K_F32 : size == 8 ? K_F64 : K_NONE;
    return size == 4 ? K_I32 : size == 8 ? K_I64 : K_NONE; /* C_INT, C_FINT */
}

/* Is predefined @op defined on datatype group @c (MPI 4.0, 6.9.2)?
 * (A predefined op on a derived datatype: class C_NONE, not accelerated.) */
static int op_allowed(MPI_Op op, int c)
{
    if (op == MPI_SUM || op == MPI_PROD)
        return c == C_INT || c == C_FINT || c == C_MULTI || c == C_FLOAT || c == C_COMPLEX;
    if (op == MPI_MAX || op == MPI_MIN)
        return c == C_INT || c == C_FINT || c == C_MULTI || c == C_FLOAT;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return c == C_INT || c == C_LOGICAL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return c == C_INT || c == C_FINT || c == C_MULTI || c == C_BYTE;
    if (op == MPI_MINLOC || op == MPI_MAXLOC) return c == C_PAIR;
    return 0; /* MPI_REPLACE, MPI_NO_OP: not reduction ops */
}

static int is_predefined(MPI_Op op)
{
    static const MPI_Op ops[] = { MPI_SUM,    MPI_PROD,   MPI_MAX,     MPI_MIN,  MPI_LAND,
                                  MPI_LOR,    MPI_LXOR,   MPI_BAND,    MPI_BOR,  MPI_BXOR,
                                  MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (op == ops[i]) return 1;
    return 0;
}

/* The last predefined (datatype, op) pairs classified by this thread: their
 * handles name the same thing for the whole run, so the answers hold (a
 * small reduction spent a tenth of its time classifying).  A few entries,
 * so a program alternating between pairs (a double sum, an integer max)
 * does not classify every call; the entry that answered last is tried
 * first, so the common case costs what one entry did. */
#define OP_CACHE 8
static _Thread_local struct {
    struct {
        MPI_Datatype dt;
        MPI_Op op;
        int ok;
        tc_rtype_t t;
    } e[OP_CACHE];
    unsigned n;    /* entries filled */
    unsigned last; /* the entry that answered last */
    unsigned next; /* the entry the next new pair replaces (round robin) */
} g_last;

static int classify(MPI_Datatype dt, MPI_Op op, tc_rtype_t *t, int *cacheable);

int tc_op_classify(MPI_Datatype dt, MPI_Op op, tc_rtype_t *t)
{
    unsigned l = g_last.last;
    if (g_last.n && dt == g_last.e[l].dt && op == g_last.e[l].op) {
        *t = g_last.e[l].t;
        return g_last.e[l].ok;
    }
    for (unsigned i = 0; i < g_last.n; i++)
        if (dt == g_last.e[i].dt && op == g_last.e[i].op) {
            g_last.last = i;
            *t = g_last.e[i].t;
            return g_last.e[i].ok;
        }
    int cacheable, ok = classify(dt, op, t, &cacheable);
    if (cacheable) {
        unsigned i = g_last.next;
        g_last.next = (i + 1) % OP_CACHE;
        if (g_last.n < OP_CACHE) g_last.n++;
        g_last.e[i].dt = dt;
        g_last.e[i].op = op;
        g_last.e[i].ok = ok;
        g_last.e[i].t = *t;
        g_last.last = i;
    }
    return ok;
}

/* *@cacheable: a predefined op on a predefined datatype of the table
 * (derived datatypes and user ops can be freed and their handles reused). */
static int classify(MPI_Datatype dt, MPI_Op op, tc_rtype_t *t, int *cacheable)
{
    int kty, size, commute = 0;
    MPI_Aint lb, ext, tlb, text;
    memset(t, 0, sizeof(*t));
    *cacheable = 0;
    if (dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL) return 0;
    int c = dt_class(dt, &kty), pre = is_predefined(op);
    *cacheable = c != C_NONE && pre;
    if (pre && !op_allowed(op, c)) return 0;
    if (PMPI_Type_size(dt, &size) != MPI_SUCCESS || size <= 0) return 0;
    PMPI_Type_get_extent(dt, &lb, &ext);
    PMPI_Type_get_true_extent(dt, &tlb, &text);
    /* Element spans are copied whole.  Predefined types: their only gaps
     * are C struct padding (MPI_SHORT_INT, the pair types' tail, long
     * double), copying it is harmless.  Derived types: only when they have
     * no gap at all, so no byte of the user's buffer outside the type map
     * is ever written. */
    if (lb != 0 || tlb != 0 || ext < text) return 0;
    if (c == C_NONE && (text != size || ext != text)) return 0;
    if (PMPI_Op_commutative(op, &commute) != MPI_SUCCESS) return 0;
    t->dt = dt;
    t->op = op;
    t->extent = (size_t)ext;
    t->tsize = (size_t)text;
    t->commutative = commute;
    /* our kernels: dense elements (extent == size) of a 4- or 8-byte type */
    if (kty == K_SIZE && ext == size)
        kty = sized_kernel(c, size);
    else
        kty = K_NONE;
    if (kty != K_NONE && (op == MPI_SUM || op == MPI_MAX || op == MPI_MIN))
        t->kernel = kty * 3 + (op == MPI_SUM ? OP_SUM : op == MPI_MAX ? OP_MAX : OP_MIN);
    return 1;
}

/* Our kernels: inout = in op inout.  restrict + -O3: vectorised loops. */
#define KERNELS(T, NAME)                                                      \
    static void NAME##_sum(const T *restrict in, T *restrict io, size_t n)    \
    {                                                                         \
        for (size_t i = 0; i < n; i++) io[i] = in[i] + io[i];                 \
    }                                                                         \
    static void NAME##_max(const T *restrict in, T *restrict io, size_t n)    \
    {                                                                         \
        for (size_t i = 0; i < n; i++) io[i] = in[i] > io[i] ? in[i] : io[i]; \
    }                                                                         \
    static void NAME##_min(const T *restrict in, T *restrict io, size_t n)    \
    {                                                                         \
        for (size_t i = 0; i < n; i++) io[i] = in[i] < io[i] ? in[i] : io[i]; \
    }
KERNELS(float, f32)
KERNELS(double, f64)
KERNELS(int32_t, i32)
KERNELS(int64_t, i64)

/* MAX/MIN on floats: MPI leaves NaN handling unspecified; the loops above
 * return io[i] when the comparison is false, as Open MPI's and MPICH's
 * generic kernels do (checked against them by the tests). */

int tc_op_apply(const tc_rtype_t *t, const void *in, void *inout, size_t n)
{
    switch (t->kernel) {
    case K_F32 * 3 + OP_SUM: f32_sum(in, inout, n); return MPI_SUCCESS;
    case K_F32 * 3 + OP_MAX: f32_max(in, inout, n); return MPI_SUCCESS;
    case K_F32 * 3 + OP_MIN: f32_min(in, inout, n); return MPI_SUCCESS;
    case K_F64 * 3 + OP_SUM: f64_sum(in, inout, n); return MPI_SUCCESS;
    case K_F64 * 3 + OP_MAX: f64_max(in, inout, n); return MPI_SUCCESS;
    case K_F64 * 3 + OP_MIN: f64_min(in, inout, n); return MPI_SUCCESS;
    case K_I32 * 3 + OP_SUM: i32_sum(in, inout, n); return MPI_SUCCESS;
    case K_I32 * 3 + OP_MAX: i32_max(in, inout, n); return MPI_SUCCESS;
    case K_I32 * 3 + OP_MIN: i32_min(in, inout, n); return MPI_SUCCESS;
    case K_I64 * 3 + OP_SUM: i64_sum(in, inout, n); return MPI_SUCCESS;
    case K_I64 * 3 + OP_MAX: i64_max(in, inout, n); return MPI_SUCCESS;
    case K_I64 * 3 + OP_MIN: i64_min(in, inout, n); return MPI_SUCCESS;
    default: break;
    }
    const char *src = in;
    char *dst = inout;
    while (n > 0) { /* MPI counts are ints */
        int k = n > (size_t)INT_MAX ? INT_MAX : (int)n;
        int rc = PMPI_Reduce_local(src, dst, k, t->dt, t->op);
        if (rc != MPI_SUCCESS) return tc_status_mpi(rc);
        src += (size_t)k * t->extent;
        dst += (size_t)k * t->extent;
        n -= (size_t)k;
    }
    return MPI_SUCCESS;
}

const char *tc_op_kernel_name(const tc_rtype_t *t)
{
    static const char *names[] = { "float sum",  "float max",  "float min", "double sum",
                                   "double max", "double min", "int32 sum", "int32 max",
                                   "int32 min",  "int64 sum",  "int64 max", "int64 min" };
    if (t->kernel >= K_F32 * 3 && t->kernel < K_NTYPES * 3) return names[t->kernel - 3];
    return "MPI_Reduce_local";
}
