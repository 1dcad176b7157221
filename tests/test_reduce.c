/*
 * test_reduce -- topocoll_allreduce and topocoll_reduce against the
 * native MPI: every predefined op on every predefined C datatype the MPI
 * standard defines it for (MINLOC/MAXLOC on the pair types), counts 1,
 * odd, across the CICO/single-copy switch-over and 1 MiB+3, MPI_IN_PLACE,
 * every root, a user-defined commutative op and a non-commutative one,
 * bitwise identity of double Allreduce results across ranks and between
 * runs, on the world communicator, a dup, a split with reversed key order
 * and a split into halves; erroneous arguments give the native error
 * class.  Reduce references are computed with PMPI_Allreduce (MPICH 4.0.2's
 * own MPI_Reduce crashes with MPI_IN_PLACE at a non-zero root).  The
 * Fortran and C++ types (MPI 4.0, 6.9.2: MPI_INTEGER..., MPI_REAL...,
 * MPI_LOGICAL, MPI_2REAL..., MPI_CXX_BOOL...), on the world communicator:
 * every op allowed on them at one count, against a serial reference
 * computed here in C, and that topocoll ran them itself.
 * Values are small integers, so every combination order gives the exact
 * same result and comparisons can be exact for floating types too.
 */
#include "topocoll.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int wrank;

enum {
    K_I8,
    K_U8,
    K_I16,
    K_U16,
    K_I32,
    K_U32,
    K_I64,
    K_U64,
    K_F,
    K_D,
    K_LD,
    K_CF,
    K_CD,
    K_CLD,
    K_BOOL,
    K_BYTE,
    K_FLOAT_INT,
    K_DOUBLE_INT,
    K_LONG_INT,
    K_2INT,
    K_SHORT_INT,
    K_LD_INT,
    K_FLOG, /* Fortran LOGICAL (gfortran: a 4-byte int, .true. 1, .false. 0) */
    K_2F,   /* MPI_2REAL: two floats */
    K_2D    /* MPI_2DOUBLE_PRECISION: two doubles */
};
/* MPI 4.0, 6.9.2's groups: C integer, Fortran integer, multi-language
 * (MPI_AINT, MPI_OFFSET, MPI_COUNT), floating point, complex, logical,
 * byte; pairs: MINLOC/MAXLOC (6.9.4). */
enum { C_INT, C_FINT, C_MULTI, C_FLOAT, C_COMPLEX, C_LOGICAL, C_BYTE, C_PAIR };

typedef struct {
    MPI_Datatype dt;
    const char *name;
    int cls, kind;
    int extra; /* a Fortran or C++ type: one count, serial reference */
} tdesc_t;

static int ikind(size_t sz, int sgn)
{
    return sz == 1   ? (sgn ? K_I8 : K_U8)
           : sz == 2 ? (sgn ? K_I16 : K_U16)
           : sz == 4 ? (sgn ? K_I32 : K_U32)
                     : (sgn ? K_I64 : K_U64);
}

/* Bytes of one element of @kind as fill() writes it. */
static size_t ksize(int kind)
{
    switch (kind) {
    case K_I8:
    case K_U8:
    case K_BYTE: return 1;
    case K_I16:
    case K_U16: return 2;
    case K_I32:
    case K_U32:
    case K_FLOG: return 4;
    case K_I64:
    case K_U64: return 8;
    case K_F: return sizeof(float);
    case K_D: return sizeof(double);
    case K_LD: return sizeof(long double);
    case K_CF: return sizeof(float complex);
    case K_CD: return sizeof(double complex);
    case K_CLD: return sizeof(long double complex);
    case K_BOOL: return sizeof(bool);
    case K_2INT: return 2 * sizeof(int);
    case K_2F: return 2 * sizeof(float);
    case K_2D: return 2 * sizeof(double);
    default: return 0; /* C pair types: not sized here */
    }
}

/* The kind of a Fortran type of @size bytes in group @cls, @pair: 1 a
 * MINLOC/MAXLOC pair of reals, 2 of integers (-1: none of ours has that
 * size, the type is not tested). */
static int fkind(int cls, int size, int pair)
{
    if (pair == 1)
        return size == 2 * (int)sizeof(float) ? K_2F : size == 2 * (int)sizeof(double) ? K_2D : -1;
    if (pair == 2) return size == 2 * (int)sizeof(int) ? K_2INT : -1;
    switch (cls) {
    case C_FINT:
        return size == 1 || size == 2 || size == 4 || size == 8 ? ikind((size_t)size, 1) : -1;
    case C_FLOAT: return size == 4 ? K_F : size == 8 ? K_D : -1;
    case C_COMPLEX: return size == 8 ? K_CF : size == 16 ? K_CD : -1;
    default: return -1;
    }
}

/* Add Fortran/C++ type @d of @kind (-2: by its size, -3: a pair of reals
 * by its size, -4: of integers) if this MPI build has it with the size we
 * model. */
static void add_extra(tdesc_t *t, int *n, MPI_Datatype d, const char *name, int cls, int kind)
{
    int size = 0;
    if (d == MPI_DATATYPE_NULL || MPI_Type_size(d, &size) != MPI_SUCCESS || size <= 0) return;
    if (kind < 0) kind = fkind(cls, size, -2 - kind);
    if (kind < 0 || ksize(kind) != (size_t)size) return;
    t[(*n)++] = (tdesc_t){ d, name, cls, kind, 1 };
}

static int types(tdesc_t *t)
{
    int n = 0;
#define T(d, c, k) t[n++] = (tdesc_t){ d, #d, c, k, 0 }
    T(MPI_INT, C_INT, ikind(sizeof(int), 1));
    T(MPI_LONG, C_INT, ikind(sizeof(long), 1));
    T(MPI_SHORT, C_INT, ikind(sizeof(short), 1));
    T(MPI_UNSIGNED_SHORT, C_INT, ikind(sizeof(short), 0));
    T(MPI_UNSIGNED, C_INT, ikind(sizeof(unsigned), 0));
    T(MPI_UNSIGNED_LONG, C_INT, ikind(sizeof(long), 0));
    T(MPI_LONG_LONG_INT, C_INT, K_I64);
    T(MPI_LONG_LONG, C_INT, K_I64);
    T(MPI_UNSIGNED_LONG_LONG, C_INT, K_U64);
    T(MPI_SIGNED_CHAR, C_INT, K_I8);
    T(MPI_UNSIGNED_CHAR, C_INT, K_U8);
    T(MPI_INT8_T, C_INT, K_I8);
    T(MPI_INT16_T, C_INT, K_I16);
    T(MPI_INT32_T, C_INT, K_I32);
    T(MPI_INT64_T, C_INT, K_I64);
    T(MPI_UINT8_T, C_INT, K_U8);
    T(MPI_UINT16_T, C_INT, K_U16);
    T(MPI_UINT32_T, C_INT, K_U32);
    T(MPI_UINT64_T, C_INT, K_U64);
    T(MPI_AINT, C_MULTI, ikind(sizeof(MPI_Aint), 1));
    T(MPI_OFFSET, C_MULTI, ikind(sizeof(MPI_Offset), 1));
    T(MPI_COUNT, C_MULTI, ikind(sizeof(MPI_Count), 1));
    T(MPI_FLOAT, C_FLOAT, K_F);
    T(MPI_DOUBLE, C_FLOAT, K_D);
    T(MPI_LONG_DOUBLE, C_FLOAT, K_LD);
    T(MPI_C_FLOAT_COMPLEX, C_COMPLEX, K_CF);
    T(MPI_C_COMPLEX, C_COMPLEX, K_CF);
    T(MPI_C_DOUBLE_COMPLEX, C_COMPLEX, K_CD);
    T(MPI_C_LONG_DOUBLE_COMPLEX, C_COMPLEX, K_CLD);
    T(MPI_C_BOOL, C_LOGICAL, K_BOOL);
    T(MPI_BYTE, C_BYTE, K_BYTE);
    T(MPI_FLOAT_INT, C_PAIR, K_FLOAT_INT);
    T(MPI_DOUBLE_INT, C_PAIR, K_DOUBLE_INT);
    T(MPI_LONG_INT, C_PAIR, K_LONG_INT);
    T(MPI_2INT, C_PAIR, K_2INT);
    T(MPI_SHORT_INT, C_PAIR, K_SHORT_INT);
    T(MPI_LONG_DOUBLE_INT, C_PAIR, K_LD_INT);
#undef T
    /* Fortran and C++ types, kinds by their size; skipped where this MPI
     * build lacks one (a null handle, size 0, or a size we do not model) */
#define F(d, c, k)     add_extra(t, &n, d, #d, c, k)
#define FS(d, c, pair) add_extra(t, &n, d, #d, c, -2 - (pair))
    FS(MPI_INTEGER, C_FINT, 0);
#ifdef MPI_INTEGER1
    FS(MPI_INTEGER1, C_FINT, 0);
#endif
#ifdef MPI_INTEGER2
    FS(MPI_INTEGER2, C_FINT, 0);
#endif
#ifdef MPI_INTEGER4
    FS(MPI_INTEGER4, C_FINT, 0);
#endif
#ifdef MPI_INTEGER8
    FS(MPI_INTEGER8, C_FINT, 0);
#endif
    FS(MPI_REAL, C_FLOAT, 0);
    FS(MPI_DOUBLE_PRECISION, C_FLOAT, 0);
#ifdef MPI_REAL4
    FS(MPI_REAL4, C_FLOAT, 0);
#endif
#ifdef MPI_REAL8
    FS(MPI_REAL8, C_FLOAT, 0);
#endif
    FS(MPI_COMPLEX, C_COMPLEX, 0);
    FS(MPI_DOUBLE_COMPLEX, C_COMPLEX, 0);
#ifdef MPI_COMPLEX8
    FS(MPI_COMPLEX8, C_COMPLEX, 0);
#endif
#ifdef MPI_COMPLEX16
    FS(MPI_COMPLEX16, C_COMPLEX, 0);
#endif
    F(MPI_LOGICAL, C_LOGICAL, K_FLOG);
    FS(MPI_2REAL, C_PAIR, 1);
    FS(MPI_2DOUBLE_PRECISION, C_PAIR, 1);
    FS(MPI_2INTEGER, C_PAIR, 2);
#ifdef MPI_CXX_BOOL
    F(MPI_CXX_BOOL, C_LOGICAL, K_BOOL);
#endif
#ifdef MPI_CXX_FLOAT_COMPLEX
    F(MPI_CXX_FLOAT_COMPLEX, C_COMPLEX, K_CF);
#endif
#ifdef MPI_CXX_DOUBLE_COMPLEX
    F(MPI_CXX_DOUBLE_COMPLEX, C_COMPLEX, K_CD);
#endif
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
    F(MPI_CXX_LONG_DOUBLE_COMPLEX, C_COMPLEX, K_CLD);
#endif
#undef F
#undef FS
    return n;
}

typedef struct {
    MPI_Op op;
    const char *name;
} odesc_t;
static const odesc_t ops[] = {
    { MPI_SUM, "SUM" },   { MPI_PROD, "PROD" }, { MPI_MAX, "MAX" },       { MPI_MIN, "MIN" },
    { MPI_LAND, "LAND" }, { MPI_LOR, "LOR" },   { MPI_LXOR, "LXOR" },     { MPI_BAND, "BAND" },
    { MPI_BOR, "BOR" },   { MPI_BXOR, "BXOR" }, { MPI_MINLOC, "MINLOC" }, { MPI_MAXLOC, "MAXLOC" }
};

/* MPI 4.0, 6.9.2 */
static int allowed(int oi, int cls)
{
    if (oi <= 1)
        return cls == C_INT || cls == C_FINT || cls == C_MULTI || cls == C_FLOAT ||
               cls == C_COMPLEX;
    if (oi <= 3) return cls == C_INT || cls == C_FINT || cls == C_MULTI || cls == C_FLOAT;
    if (oi <= 6) return cls == C_INT || cls == C_LOGICAL;
    if (oi <= 9) return cls == C_INT || cls == C_FINT || cls == C_MULTI || cls == C_BYTE;
    return cls == C_PAIR;
}

/* Small values: -3..3 (0..6 unsigned); products of 8 stay exact. */
static int val(int rank, size_t i, unsigned seed)
{
    uint32_t x = (uint32_t)(rank + 1) * 2654435761u ^ (uint32_t)i * 40503u ^ seed * 69069u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (int)(x % 7) - 3;
}

static void fill(void *buf, const tdesc_t *t, size_t ext, size_t n, int rank, unsigned seed,
                 int for_prod)
{
    for (size_t i = 0; i < n; i++) {
        void *e = (char *)buf + i * ext;
        int v = val(rank, i, seed);
        if (for_prod && v == 0) v = 1; /* keep products away from all-zero */
        switch (t->kind) {
        case K_I8: *(int8_t *)e = (int8_t)v; break;
        case K_U8: *(uint8_t *)e = (uint8_t)(v + 3); break;
        case K_I16: *(int16_t *)e = (int16_t)v; break;
        case K_U16: *(uint16_t *)e = (uint16_t)(v + 3); break;
        case K_I32: *(int32_t *)e = v; break;
        case K_U32: *(uint32_t *)e = (uint32_t)(v + 3); break;
        case K_I64: *(int64_t *)e = v; break;
        case K_U64: *(uint64_t *)e = (uint64_t)(v + 3); break;
        case K_F: *(float *)e = (float)v; break;
        case K_D: *(double *)e = v; break;
        case K_LD: *(long double *)e = v; break;
        case K_CF: *(float complex *)e = (float)v + (float)(v % 2) * I; break;
        case K_CD: *(double complex *)e = v + (v % 2) * I; break;
        case K_CLD: *(long double complex *)e = v + (v % 2) * I; break;
        case K_BOOL: *(bool *)e = v > 0; break;
        case K_BYTE: *(unsigned char *)e = (unsigned char)(v * 37 + rank); break;
        case K_FLOAT_INT: {
            struct {
                float v;
                int i;
            } *p = (void *)e;
            p->v = (float)v;
            p->i = rank;
            break;
        }
        case K_DOUBLE_INT: {
            struct {
                double v;
                int i;
            } *p = (void *)e;
            p->v = v;
            p->i = rank;
            break;
        }
        case K_LONG_INT: {
            struct {
                long v;
                int i;
            } *p = (void *)e;
            p->v = v;
            p->i = rank;
            break;
        }
        case K_2INT: {
            struct {
                int v;
                int i;
            } *p = (void *)e;
            p->v = v;
            p->i = rank;
            break;
        }
        case K_SHORT_INT: {
            struct {
                short v;
                int i;
            } *p = (void *)e;
            p->v = (short)v;
            p->i = rank;
            break;
        }
        case K_LD_INT: {
            struct {
                long double v;
                int i;
            } *p = (void *)e;
            p->v = v;
            p->i = rank;
            break;
        }
        case K_FLOG: *(int *)e = v > 0; break;
        case K_2F: ((float *)e)[0] = (float)v, ((float *)e)[1] = (float)rank; break;
        case K_2D: ((double *)e)[0] = v, ((double *)e)[1] = rank; break;
        }
    }
}

/* Compare data fields only (padding of long double and pair types is not data). */
static size_t first_diff(const void *a, const void *b, const tdesc_t *t, size_t ext, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const void *x = (const char *)a + i * ext, *y = (const char *)b + i * ext;
        int same;
        switch (t->kind) {
        /* floating: by value (the sign of a zero product depends on the
         * combination order, which MPI leaves to the implementation) */
        case K_F: same = *(const float *)x == *(const float *)y; break;
        case K_D: same = *(const double *)x == *(const double *)y; break;
        case K_CF: same = *(const float complex *)x == *(const float complex *)y; break;
        case K_CD: same = *(const double complex *)x == *(const double complex *)y; break;
        case K_LD: same = *(const long double *)x == *(const long double *)y; break;
        case K_CLD:
            same = *(const long double complex *)x == *(const long double complex *)y;
            break;
        case K_BOOL: same = (*(const bool *)x) == (*(const bool *)y); break;
        case K_2F:
            same = ((const float *)x)[0] == ((const float *)y)[0] &&
                   ((const float *)x)[1] == ((const float *)y)[1];
            break;
        case K_2D:
            same = ((const double *)x)[0] == ((const double *)y)[0] &&
                   ((const double *)x)[1] == ((const double *)y)[1];
            break;
        case K_FLOAT_INT: {
            const struct {
                float v;
                int i;
            } *p = (const void *)x, *q = (const void *)y;
            same = p->v == q->v && p->i == q->i;
            break;
        }
        case K_DOUBLE_INT: {
            const struct {
                double v;
                int i;
            } *p = (const void *)x, *q = (const void *)y;
            same = p->v == q->v && p->i == q->i;
            break;
        }
        case K_LONG_INT: {
            const struct {
                long v;
                int i;
            } *p = (const void *)x, *q = (const void *)y;
            same = p->v == q->v && p->i == q->i;
            break;
        }
        case K_SHORT_INT: {
            const struct {
                short v;
                int i;
            } *p = (const void *)x, *q = (const void *)y;
            same = p->v == q->v && p->i == q->i;
            break;
        }
        case K_LD_INT: {
            const struct {
                long double v;
                int i;
            } *p = (const void *)x, *q = (const void *)y;
            same = p->v == q->v && p->i == q->i;
            break;
        }
        default: {
            int sz;
            MPI_Type_size(t->dt, &sz);
            same = memcmp(x, y, (size_t)sz) == 0;
        }
        }
        if (!same) return i;
    }
    return (size_t)-1;
}

/* The serial reference, in C: b = a op b on one element of @kind, op
 * ops[@oi] (integer wrap-around as the MPI libraries' C loops have it). */
#define ARITH(T)                                   \
    do {                                           \
        T x_ = *(const T *)a, y_ = *(T *)b;        \
        *(T *)b = oi == 0   ? (T)(x_ + y_)         \
                  : oi == 1 ? (T)(x_ * y_)         \
                  : oi == 2 ? (x_ > y_ ? x_ : y_)  \
                            : (x_ < y_ ? x_ : y_); \
    } while (0)
#define INTOP(T)                                  \
    do {                                          \
        T x_ = *(const T *)a, y_ = *(T *)b;       \
        if (oi <= 3)                              \
            ARITH(T);                             \
        else                                      \
            *(T *)b = oi == 4   ? (T)(x_ && y_)   \
                      : oi == 5 ? (T)(x_ || y_)   \
                      : oi == 6 ? (T)(!x_ != !y_) \
                      : oi == 7 ? (T)(x_ & y_)    \
                      : oi == 8 ? (T)(x_ | y_)    \
                                : (T)(x_ ^ y_);   \
    } while (0)
#define LOGOP(T) /* LAND, LOR, LXOR: 0 or 1 */                                         \
    do {                                                                               \
        T x_ = *(const T *)a, y_ = *(T *)b;                                            \
        *(T *)b = oi == 4 ? (T)(x_ && y_) : oi == 5 ? (T)(x_ || y_) : (T)(!x_ != !y_); \
    } while (0)
#define CPLX(T)                                \
    do {                                       \
        T x_ = *(const T *)a, y_ = *(T *)b;    \
        *(T *)b = oi == 0 ? x_ + y_ : x_ * y_; \
    } while (0)
/* MINLOC/MAXLOC (6.9.4): the smaller index on equal values */
#define LOC(TV, TI)                                                                     \
    do {                                                                                \
        const struct {                                                                  \
            TV v;                                                                       \
            TI i;                                                                       \
        } *p_ = a;                                                                      \
        struct {                                                                        \
            TV v;                                                                       \
            TI i;                                                                       \
        } *q_ = b;                                                                      \
        int better_ = oi == 10 ? p_->v < q_->v : p_->v > q_->v;                         \
        if (better_ || (p_->v == q_->v && p_->i < q_->i)) q_->v = p_->v, q_->i = p_->i; \
    } while (0)

static void combine(int kind, int oi, const void *a, void *b)
{
    switch (kind) {
    case K_I8: INTOP(int8_t); break;
    case K_U8: INTOP(uint8_t); break;
    case K_I16: INTOP(int16_t); break;
    case K_U16: INTOP(uint16_t); break;
    case K_I32: INTOP(int32_t); break;
    case K_U32: INTOP(uint32_t); break;
    case K_I64: INTOP(int64_t); break;
    case K_U64: INTOP(uint64_t); break;
    case K_BYTE: INTOP(unsigned char); break;
    case K_FLOG: LOGOP(int); break;
    case K_BOOL: LOGOP(bool); break;
    case K_F: ARITH(float); break;
    case K_D: ARITH(double); break;
    case K_LD: ARITH(long double); break;
    case K_CF: CPLX(float complex); break;
    case K_CD: CPLX(double complex); break;
    case K_CLD: CPLX(long double complex); break;
    case K_FLOAT_INT: LOC(float, int); break;
    case K_DOUBLE_INT: LOC(double, int); break;
    case K_LONG_INT: LOC(long, int); break;
    case K_2INT: LOC(int, int); break;
    case K_SHORT_INT: LOC(short, int); break;
    case K_LD_INT: LOC(long double, int); break;
    case K_2F: LOC(float, float); break;
    case K_2D: LOC(double, double); break;
    }
}
#undef ARITH
#undef INTOP
#undef LOGOP
#undef CPLX
#undef LOC

/* @n elements of the reduction of fill()'s data of ranks 0..@size-1:
 * s0 op (s1 op (... op s_{size-1})), computed in C into @out. */
static void serial(void *out, const tdesc_t *t, int oi, size_t ext, size_t n, int size,
                   unsigned seed)
{
    char *tmp = malloc(n * ext + 16), *o = out;
    memset(tmp, 0, n * ext + 16);
    memset(o, 0, n * ext);
    fill(o, t, ext, n, size - 1, seed, oi == 1);
    for (int r = size - 2; r >= 0; r--) {
        fill(tmp, t, ext, n, r, seed, oi == 1);
        for (size_t i = 0; i < n; i++) combine(t->kind, oi, tmp + i * ext, o + i * ext);
    }
    free(tmp);
}

/* One Allreduce (in place or not) and one Reduce at @root, against the
 * native Allreduce of the same inputs (@t->extra: against the serial
 * reference, and no in-place Allreduce). */
static void one(MPI_Comm comm, const char *cname, const tdesc_t *t, int oi, MPI_Op op,
                const char *oname, int count, int root, unsigned seed)
{
    int rank, csize;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &csize);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t->dt, &lb, &ext);
    size_t n = (size_t)count, bytes = n * (size_t)ext + 16;
    char *in = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes), *inpl = malloc(bytes);
    memset(in, 0, bytes);
    fill(in, t, (size_t)ext, n, rank, seed, oi == 1);
    memset(ref, 0x5a, bytes);
    memset(got, 0xa5, bytes);
    if (t->extra) /* the serial reference; the C types': the native MPI's (Open MPI
                   * 4.1.4's MAX and MIN on MPI_OFFSET compare unsigned) */
        serial(ref, t, oi, (size_t)ext, n, csize, seed);
    else
        PMPI_Allreduce(in, ref, count, t->dt, op, comm);
    int rc = topocoll_allreduce(in, got, count, t->dt, op, comm);
    CHECK(rc == MPI_SUCCESS, "%s allreduce %s %s count %d: rc %d", cname, t->name, oname, count,
          rc);
    size_t d = first_diff(ref, got, t, (size_t)ext, n);
    CHECK(d == (size_t)-1, "%s allreduce %s %s count %d: element %zu differs", cname, t->name,
          oname, count, d);

    CHECK((unsigned char)got[n * (size_t)ext + 8] == 0xa5,
          "%s allreduce %s %s count %d: wrote past the end", cname, t->name, oname, count);

    if (!t->extra) { /* (in place: the same path for every type) */
        memcpy(inpl, in, bytes);
        rc = topocoll_allreduce(MPI_IN_PLACE, inpl, count, t->dt, op, comm);
        d = first_diff(ref, inpl, t, (size_t)ext, n);
        CHECK(rc == MPI_SUCCESS && d == (size_t)-1,
              "%s allreduce IN_PLACE %s %s count %d: rc %d element %zu", cname, t->name, oname,
              count, rc, d);
    }

    memset(got, 0xa5, bytes);
    memcpy(inpl, in, bytes);
    if (rank == root && (seed & 1))
        rc = topocoll_reduce(MPI_IN_PLACE, inpl, count, t->dt, op, root, comm);
    else
        rc = topocoll_reduce(in, got, count, t->dt, op, root, comm);
    CHECK(rc == MPI_SUCCESS, "%s reduce %s %s count %d root %d: rc %d", cname, t->name, oname,
          count, root, rc);
    if (rank == root) {
        d = first_diff(ref, (seed & 1) ? inpl : got, t, (size_t)ext, n);
        CHECK(d == (size_t)-1, "%s reduce%s %s %s count %d root %d: element %zu differs", cname,
              (seed & 1) ? " IN_PLACE" : "", t->name, oname, count, root, d);
    } else {
        CHECK((unsigned char)got[0] == 0xa5, "%s reduce: non-root receive buffer written", cname);
    }
    free(in);
    free(ref);
    free(got);
    free(inpl);
}

/* User ops: a commutative one (max of absolute values) and a
 * non-commutative associative one (2x2 integer matrix product). */
static void absmax(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = io;
    for (int i = 0; i < *len; i++) {
        int x = abs(a[i]), y = abs(b[i]);
        b[i] = x > y ? x : y;
    }
}

static void matmul(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = io; /* b = a * b (in op inout) */
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        int r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0 & 0xffff;
        b[1] = r1 & 0xffff;
        b[2] = r2 & 0xffff;
        b[3] = r3 & 0xffff;
    }
}

static void user_ops(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Op amax, mm;
    MPI_Datatype mat;
    MPI_Op_create(absmax, 1, &amax);
    MPI_Op_create(matmul, 0, &mm);
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    static const int counts[] = { 1, 7, 5001, 300001 };
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];
        int *in = malloc(sizeof(int) * 4 * (size_t)n), *ref = malloc(sizeof(int) * 4 * (size_t)n);
        int *got = malloc(sizeof(int) * 4 * (size_t)n);
        for (int i = 0; i < 4 * n; i++) in[i] = val(rank, (size_t)i, 99) * (i % 3 + 1);
        PMPI_Allreduce(in, ref, n, MPI_INT, amax, comm);
        int rc = topocoll_allreduce(in, got, n, MPI_INT, amax, comm);
        CHECK(rc == MPI_SUCCESS && memcmp(ref, got, sizeof(int) * (size_t)n) == 0,
              "%s allreduce user commutative count %d", cname, n);
        for (int root = 0; root < size; root += (size > 3 ? size - 1 : 1)) {
            memset(got, 0, sizeof(int) * 4 * (size_t)n);
            rc = topocoll_reduce(in, got, n, MPI_INT, amax, root, comm);
            if (rank == root)
                CHECK(rc == MPI_SUCCESS && memcmp(ref, got, sizeof(int) * (size_t)n) == 0,
                      "%s reduce user commutative count %d root %d", cname, n, root);
        }
        /* non-commutative: matrices with small entries, rank order matters */
        for (int i = 0; i < n; i++) {
            in[4 * i] = 1 + (rank + i) % 3;
            in[4 * i + 1] = (rank * i) % 2;
            in[4 * i + 2] = (rank + 2 * i) % 2;
            in[4 * i + 3] = 1;
        }
        PMPI_Allreduce(in, ref, n, mat, mm, comm);
        rc = topocoll_allreduce(in, got, n, mat, mm, comm);
        CHECK(rc == MPI_SUCCESS && memcmp(ref, got, sizeof(int) * 4 * (size_t)n) == 0,
              "%s allreduce user non-commutative count %d", cname, n);
        int root = size - 1;
        memset(got, 0, sizeof(int) * 4 * (size_t)n);
        rc = topocoll_reduce(in, got, n, mat, mm, root, comm);
        if (rank == root)
            CHECK(rc == MPI_SUCCESS && memcmp(ref, got, sizeof(int) * 4 * (size_t)n) == 0,
                  "%s reduce user non-commutative count %d root %d", cname, n, root);
        free(in);
        free(ref);
        free(got);
    }
    MPI_Op_free(&amax);
    MPI_Op_free(&mm);
    MPI_Type_free(&mat);
}

/* Random doubles: results must be bit-identical on every rank and
 * between two runs (fixed combination order). */
static void bitwise(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const int counts[] = { 3, 1001, 262147 };
    for (size_t c = 0; c < 3; c++) {
        int n = counts[c];
        double *in = malloc(sizeof(double) * (size_t)n), *a = malloc(sizeof(double) * (size_t)n);
        double *b = malloc(sizeof(double) * (size_t)n), *all = NULL;
        uint64_t x = 88172645463325252ull + (uint64_t)rank * 7919;
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            in[i] = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1e3 * (double)(1 + (i % 17));
        }
        topocoll_allreduce(in, a, n, MPI_DOUBLE, MPI_SUM, comm);
        topocoll_allreduce(in, b, n, MPI_DOUBLE, MPI_SUM, comm);
        CHECK(memcmp(a, b, sizeof(double) * (size_t)n) == 0,
              "%s: two Allreduce runs differ (count %d)", cname, n);
        if (rank == 0) all = malloc(sizeof(double) * (size_t)n * (size_t)size);
        PMPI_Gather(a, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, comm);
        if (rank == 0)
            for (int r = 1; r < size; r++)
                CHECK(memcmp(all, all + (size_t)r * (size_t)n, sizeof(double) * (size_t)n) == 0,
                      "%s: rank %d's Allreduce result differs from rank 0's (count %d)", cname, r,
                      n);
        free(in);
        free(a);
        free(b);
        free(all);
    }
}

/* level 2: every op/type pair at counts 1, 7 and 5001 (CICO and single
 * copy); 1: every pair at 5001; 0: the hot pairs only (below).  @extra:
 * the Fortran and C++ types as well, every pair at one count (7 or 5001,
 * by turns): they share the C types' paths, only their classification
 * and Reduce_local's work on them are new. */
static void suite(MPI_Comm comm, const char *cname, int level, int extra)
{
    int size;
    MPI_Comm_size(comm, &size);
    tdesc_t t[96];
    int nt = types(t);
    unsigned seed = 1;
    static const int counts[] = { 1, 7, 5001 };
    for (int ti = 0; ti < nt && level > 0; ti++)
        for (int oi = 0; oi < (int)(sizeof(ops) / sizeof(ops[0])); oi++) {
            if (!allowed(oi, t[ti].cls) || (t[ti].extra && !extra)) continue;
            int nc = t[ti].extra ? 1 : level == 2 ? 3 : 1;
            for (int c = 0; c < nc; c++) {
                int count = t[ti].extra ? ((seed & 2) ? 7 : 5001) : level == 2 ? counts[c] : 5001;
                one(comm, cname, &t[ti], oi, ops[oi].op, ops[oi].name, count,
                    (int)(seed % (unsigned)size), seed);
                seed++;
            }
        }
    /* every root, large and odd, the hot kernels and a pair type */
    const tdesc_t *dbl = NULL, *in = NULL, *di = NULL;
    for (int ti = 0; ti < nt; ti++) {
        if (t[ti].dt == MPI_DOUBLE) dbl = &t[ti];
        if (t[ti].dt == MPI_INT) in = &t[ti];
        if (t[ti].dt == MPI_DOUBLE_INT) di = &t[ti];
    }
    for (int root = 0; root < size; root++) {
        one(comm, cname, dbl, 0, MPI_SUM, "SUM", (1 << 20) / 8 + 3, root,
            seed++); /* 1 MiB + 3 elements */
        one(comm, cname, in, 2, MPI_MAX, "MAX", 262147, root, seed++);
        one(comm, cname, di, 10, MPI_MINLOC, "MINLOC", 65537, root, seed++);
    }
    user_ops(comm, cname);
    bitwise(comm, cname);
    /* count 0 is a no-op */
    int dummy = 42;
    CHECK(topocoll_allreduce(&dummy, &dummy + 1, 0, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS,
          "count 0");
    CHECK(topocoll_reduce(&dummy, &dummy + 1, 0, MPI_INT, MPI_SUM, 0, comm) == MPI_SUCCESS,
          "count 0 reduce");
}

/* The Fortran types ran in topocoll, not passed to the native MPI as a
 * pair it does not handle: around one Allreduce of each, MPI_COMM_WORLD's
 * counters moved by one call (run, or left to the native MPI by choice:
 * TOPOCOLL_*_FLAT_MAX, tuning), no fallback.  And pairs 6.9.2 does not
 * allow are fallbacks (the native MPI's verdict: both libraries sum
 * MPI_CHAR, MPICH 4.0.2 takes MPI_LAND on MPI_INTEGER, Open MPI 4.1.4
 * refuses it). */
static void ran_in_topocoll(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const struct {
        MPI_Datatype dt;
        MPI_Op op;
        const char *name;
        int ours;
    } c[] = {
        { MPI_DOUBLE_PRECISION, MPI_SUM, "MPI_DOUBLE_PRECISION SUM", 1 },
        { MPI_REAL, MPI_MIN, "MPI_REAL MIN", 1 },
        { MPI_INTEGER, MPI_MAX, "MPI_INTEGER MAX", 1 },
        { MPI_INTEGER, MPI_BXOR, "MPI_INTEGER BXOR", 1 },
        { MPI_DOUBLE_COMPLEX, MPI_PROD, "MPI_DOUBLE_COMPLEX PROD", 1 },
        { MPI_LOGICAL, MPI_LOR, "MPI_LOGICAL LOR", 1 },
        { MPI_2DOUBLE_PRECISION, MPI_MAXLOC, "MPI_2DOUBLE_PRECISION MAXLOC", 1 },
        { MPI_CHAR, MPI_SUM, "MPI_CHAR SUM", 0 },
        { MPI_WCHAR, MPI_MAX, "MPI_WCHAR MAX", 0 },
        { MPI_INTEGER, MPI_LAND, "MPI_INTEGER LAND", 0 },
        { MPI_AINT, MPI_LOR, "MPI_AINT LOR", 0 },
        { MPI_REAL, MPI_BXOR, "MPI_REAL BXOR", 0 },
        { MPI_COMPLEX, MPI_MAX, "MPI_COMPLEX MAX", 0 },
        { MPI_LOGICAL, MPI_BAND, "MPI_LOGICAL BAND", 0 },
        { MPI_2INTEGER, MPI_SUM, "MPI_2INTEGER SUM", 0 },
    };
    double in[64] = { 0 }, out[64]; /* 16 elements of at most 16 bytes: zeros */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
        topocoll_comm_info_t a = TOPOCOLL_COMM_INFO_INIT, b = TOPOCOLL_COMM_INFO_INIT;
        int sz = 0;
        if (c[k].dt == MPI_DATATYPE_NULL || MPI_Type_size(c[k].dt, &sz) != MPI_SUCCESS || sz <= 0 ||
            sz > 16)
            continue; /* not in this MPI build */
        int qa = topocoll_comm_query(MPI_COMM_WORLD, &a);
        int rc = topocoll_allreduce(in, out, 16, c[k].dt, c[k].op, MPI_COMM_WORLD);
        int qb = topocoll_comm_query(MPI_COMM_WORLD, &b);
        CHECK(rc == MPI_SUCCESS || !c[k].ours, "%s: rc %d", c[k].name, rc);
        if (qa != MPI_SUCCESS || qb != MPI_SUCCESS || size == 1 || !a.enabled) continue;
        const topocoll_coll_counters_t *x = &a.coll[TOPOCOLL_COLL_ALLREDUCE],
                                       *y = &b.coll[TOPOCOLL_COLL_ALLREDUCE];
        uint64_t ran = (y->calls - x->calls) + (y->native - x->native);
        uint64_t fell = y->fallbacks - x->fallbacks;
        if (c[k].ours)
            CHECK(ran == 1 && fell == 0,
                  "%s Allreduce not run by topocoll: %llu run or native by choice, %llu fallbacks",
                  c[k].name, (unsigned long long)ran, (unsigned long long)fell);
        else
            CHECK(ran == 0 && fell == 1, "%s Allreduce: %llu run, %llu fallbacks (expected 0, 1)",
                  c[k].name, (unsigned long long)ran, (unsigned long long)fell);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void errors(void)
{
    int size, x[4] = { 0 }, y[4];
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, rc;
    rc = topocoll_reduce(x, y, 4, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "invalid root: class %d", cls);
    rc = topocoll_allreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count: class %d", cls);
    int ncls;
    /* a null datatype or op: the native MPI's class (Open MPI 4.1.4: MPI_ERR_OP for both) */
    rc = topocoll_allreduce(x, y, 4, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    MPI_Error_class(PMPI_Allreduce(x, y, 4, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD), &ncls);
    CHECK(cls != MPI_SUCCESS && cls == ncls, "null datatype: class %d, native %d", cls, ncls);
    rc = topocoll_reduce(x, y, -2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "reduce negative count: class %d", cls);
    rc = topocoll_allreduce(x, y, 4, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    MPI_Error_class(PMPI_Allreduce(x, y, 4, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), &ncls);
    CHECK(cls != MPI_SUCCESS && cls == ncls, "null op: class %d, native %d", cls, ncls);
    /* op undefined on the type: the native MPI's verdict */
    rc = topocoll_allreduce(x, y, 4, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    MPI_Error_class(PMPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), &ncls);
    CHECK(cls != MPI_SUCCESS && cls == ncls, "BAND on double: class %d, native %d", cls, ncls);
    rc = topocoll_allreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "null comm: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    tc_rank = wrank;
    tc_print_max = 39;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, rev, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
    /* Oversubscribed (more ranks than cores): fewer calls, same coverage of
     * paths; every op/type pair still runs on the world communicator. */
    int over = size > (int)sysconf(_SC_NPROCESSORS_ONLN) || getenv("TEST_REDUCE_QUICK");
    suite(MPI_COMM_WORLD, "world", over ? 1 : 2, 1);
    suite(rev, "reversed", over ? 0 : 1, 0);
    suite(dup, "dup", 0, 0);
    suite(half, "half", over ? 0 : 1, 0);
    ran_in_topocoll();
    errors();
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    if (topocoll_comm_query(MPI_COMM_WORLD, &info) == MPI_SUCCESS)
        CHECK(size == 1 || !info.enabled || info.coll[TOPOCOLL_COLL_ALLREDUCE].calls > 0,
              "no Allreduce handled by topocoll");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    int tot[2] = { tc_failures, tc_checks }, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) printf("test_reduce np=%d: %d checks, %d failures\n", size, sum[1], sum[0]);
    MPI_Finalize();
    return wrank == 0 && sum[0] ? 1 : (tc_failures ? 1 : 0);
}
