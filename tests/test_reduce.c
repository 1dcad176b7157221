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
 * own MPI_Reduce crashes with MPI_IN_PLACE at a non-zero root).
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
    K_LD_INT
};
enum { C_INT, C_FLOAT, C_COMPLEX, C_LOGICAL, C_BYTE, C_PAIR };

typedef struct {
    MPI_Datatype dt;
    const char *name;
    int cls, kind;
} tdesc_t;

static int ikind(size_t sz, int sgn)
{
    return sz == 1   ? (sgn ? K_I8 : K_U8)
           : sz == 2 ? (sgn ? K_I16 : K_U16)
           : sz == 4 ? (sgn ? K_I32 : K_U32)
                     : (sgn ? K_I64 : K_U64);
}

static int types(tdesc_t *t)
{
    int n = 0;
#define T(d, c, k) t[n++] = (tdesc_t){ d, #d, c, k }
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
    T(MPI_AINT, C_INT, ikind(sizeof(MPI_Aint), 1));
    T(MPI_OFFSET, C_INT, ikind(sizeof(MPI_Offset), 1));
    T(MPI_COUNT, C_INT, ikind(sizeof(MPI_Count), 1));
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

static int allowed(int oi, int cls)
{
    if (oi <= 1) return cls == C_INT || cls == C_FLOAT || cls == C_COMPLEX;
    if (oi <= 3) return cls == C_INT || cls == C_FLOAT;
    if (oi <= 6) return cls == C_INT || cls == C_LOGICAL;
    if (oi <= 9) return cls == C_INT || cls == C_BYTE;
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

/* One Allreduce (in place or not) and one Reduce at @root, against the
 * native Allreduce of the same inputs. */
static void one(MPI_Comm comm, const char *cname, const tdesc_t *t, int oi, MPI_Op op,
                const char *oname, int count, int root, unsigned seed)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t->dt, &lb, &ext);
    size_t n = (size_t)count, bytes = n * (size_t)ext + 16;
    char *in = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes), *inpl = malloc(bytes);
    memset(in, 0, bytes);
    fill(in, t, (size_t)ext, n, rank, seed, oi == 1);
    memset(ref, 0x5a, bytes);
    memset(got, 0xa5, bytes);
    PMPI_Allreduce(in, ref, count, t->dt, op, comm);
    int rc = topocoll_allreduce(in, got, count, t->dt, op, comm);
    CHECK(rc == MPI_SUCCESS, "%s allreduce %s %s count %d: rc %d", cname, t->name, oname, count,
          rc);
    size_t d = first_diff(ref, got, t, (size_t)ext, n);
    CHECK(d == (size_t)-1, "%s allreduce %s %s count %d: element %zu differs", cname, t->name,
          oname, count, d);

    CHECK((unsigned char)got[n * (size_t)ext + 8] == 0xa5,
          "%s allreduce %s %s count %d: wrote past the end", cname, t->name, oname, count);

    memcpy(inpl, in, bytes);
    rc = topocoll_allreduce(MPI_IN_PLACE, inpl, count, t->dt, op, comm);
    d = first_diff(ref, inpl, t, (size_t)ext, n);
    CHECK(rc == MPI_SUCCESS && d == (size_t)-1,
          "%s allreduce IN_PLACE %s %s count %d: rc %d element %zu", cname, t->name, oname, count,
          rc, d);

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
 * copy); 1: every pair at 5001; 0: the hot pairs only (below). */
static void suite(MPI_Comm comm, const char *cname, int level)
{
    int size;
    MPI_Comm_size(comm, &size);
    tdesc_t t[64];
    int nt = types(t);
    unsigned seed = 1;
    static const int counts[] = { 1, 7, 5001 };
    for (int ti = 0; ti < nt && level > 0; ti++)
        for (int oi = 0; oi < (int)(sizeof(ops) / sizeof(ops[0])); oi++) {
            if (!allowed(oi, t[ti].cls)) continue;
            for (int c = 0; c < (level == 2 ? 3 : 1); c++) {
                int count = level == 2 ? counts[c] : 5001;
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
    suite(MPI_COMM_WORLD, "world", over ? 1 : 2);
    suite(rev, "reversed", over ? 0 : 1);
    suite(dup, "dup", 0);
    suite(half, "half", over ? 0 : 1);
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
