/*
 * pmpi/fortran -- Open MPI's Fortran entry points.  Open MPI's Fortran
 * libraries call PMPI_* (libmpi_mpifh: mpif.h and `use mpi`, whose
 * mpi_bcast_, mpi_bcast__, mpi_bcast and MPI_BCAST are aliases of
 * ompi_bcast_f; libmpi_usempif08: `use mpi_f08`, whose mpi_bcast_f08_
 * calls ompi_bcast_f), so the C interposition never sees a Fortran
 * program's calls.  Here each of those names is defined for the
 * registry's collectives (base/colls.def) and the calls around them
 * (MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Comm_split_type, the
 * persistent collectives' MPIX_<COLL>_INIT, MPI_START(ALL), MPI_REQUEST_FREE
 * and the completion calls, which progress topocoll's requests): the handles are
 * converted (MPI_*_f2c), Fortran's MPI_IN_PLACE and MPI_BOTTOM (addresses
 * of common blocks, not the C values) recognised, and the C entry point
 * of this library called, as MPICH's Fortran library does by itself
 * (libmpichfort calls MPI_*, which pmpi.c takes, but for the calls of its
 * mpi_f08 at the end of this file).
 * The error code goes to ierror when present (optional in mpi_f08).
 *
 * Owns nothing.  May call: topocoll.h, the registry, the C entry points of
 * pmpi.c.
 */
#include "topocoll.h"

#ifdef OPEN_MPI

#include "shapes.h"

#include <mpi-ext.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#pragma GCC visibility push(default)

/* Open MPI's Fortran constants (libmpi.so's common blocks). */
extern MPI_Fint mpi_fortran_in_place_, mpi_fortran_bottom_;
extern MPI_Fint mpi_fortran_status_ignore_, mpi_fortran_statuses_ignore_;

static void *fbuf(void *p)
{
    if (p == (void *)&mpi_fortran_in_place_) return MPI_IN_PLACE;
    if (p == (void *)&mpi_fortran_bottom_) return MPI_BOTTOM;
    return p;
}

/* ---- MPI_ALLTOALLW's arrays of datatype handles ------------------------------
 * ftypes() converts one for the call being made (this thread's conv[]);
 * after the call conv_after() frees them, or for a nonblocking or
 * persistent call hands them to the held list until its request
 * completes or is freed: Open MPI's own nonblocking and persistent
 * Alltoallw (where the call goes native) keeps the arrays' address and
 * reads them again at completion to release the derived datatypes
 * (ompi_coll_base_retain_datatypes_w), as its Fortran binding allows.  The
 * completion calls below drop what the requests they complete held
 * (held_take, held_end). */
static _Thread_local MPI_Datatype *conv[2];

typedef struct held {
    MPI_Fint req; /* the request, in Fortran */
    MPI_Datatype *t[2];
    struct held *next;
} held_t;
static struct {
    pthread_mutex_t lock;
    _Atomic int n;
    held_t *head;
} g_held = { PTHREAD_MUTEX_INITIALIZER, 0, NULL };

/* A Fortran array of datatype handles, one per rank of @comm, as C
 * handles in conv[@slot] (0: the send side, 1: the receive side) for the
 * call being made.  NULL where @comm is invalid or memory is short: the
 * call then reports an error. */
static const MPI_Datatype *ftypes(const MPI_Fint *f, MPI_Fint comm, int slot)
{
    MPI_Comm c = PMPI_Comm_f2c(comm);
    int n = 0, inter = 0;
    free(conv[slot]); /* (a conversion whose call never came: none) */
    conv[slot] = NULL;
    if (!f || c == MPI_COMM_NULL || PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS ||
        PMPI_Comm_size(c, &n) != MPI_SUCCESS)
        return NULL;
    if (inter) PMPI_Comm_remote_size(c, &n);
    if (!(conv[slot] = malloc(sizeof(MPI_Datatype) * (size_t)(n > 0 ? n : 1)))) return NULL;
    for (int r = 0; r < n; r++) conv[slot][r] = PMPI_Type_f2c(f[r]);
    return conv[slot];
}

/* After a collective's call: this thread's converted arrays (if any)
 * freed, or held until @req (a nonblocking or persistent request the call
 * made, in Fortran; @pending 0: none) completes or is freed. */
static void conv_after(int pending, MPI_Fint req)
{
    if (!conv[0] && !conv[1]) return;
    held_t *h = pending ? malloc(sizeof(*h)) : NULL;
    if (!h) { /* (blocking, failed, or no memory: nothing refers to them) */
        free(conv[0]);
        free(conv[1]);
    } else {
        h->req = req;
        h->t[0] = conv[0];
        h->t[1] = conv[1];
        pthread_mutex_lock(&g_held.lock);
        h->next = g_held.head;
        g_held.head = h;
        atomic_fetch_add_explicit(&g_held.n, 1, memory_order_relaxed);
        pthread_mutex_unlock(&g_held.lock);
    }
    conv[0] = conv[1] = NULL;
}

/* What request @req (Fortran) holds, taken off the list before a
 * completion call (while the handle is still its own: once the request is
 * freed, another thread's next request may get the same handle); NULL if
 * nothing.  held_end after the call. */
static held_t *held_take(MPI_Fint req)
{
    if (atomic_load_explicit(&g_held.n, memory_order_relaxed) == 0) return NULL;
    held_t *h = NULL;
    pthread_mutex_lock(&g_held.lock);
    for (held_t **pp = &g_held.head; *pp; pp = &(*pp)->next)
        if ((*pp)->req == req) {
            h = *pp;
            *pp = h->next;
            atomic_fetch_sub_explicit(&g_held.n, 1, memory_order_relaxed);
            break;
        }
    pthread_mutex_unlock(&g_held.lock);
    return h;
}

/* After the completion call: @h (held_take's) freed if its request @r is
 * now MPI_REQUEST_NULL (completed or freed), else back on the list. */
static void held_end(held_t *h, MPI_Request r)
{
    if (!h) return;
    if (r != MPI_REQUEST_NULL) {
        pthread_mutex_lock(&g_held.lock);
        h->next = g_held.head;
        g_held.head = h;
        atomic_fetch_add_explicit(&g_held.n, 1, memory_order_relaxed);
        pthread_mutex_unlock(&g_held.lock);
        return;
    }
    free(h->t[0]);
    free(h->t[1]);
    free(h);
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr) *ierr = (MPI_Fint)rc;
}

/* Fortran LOGICAL values (gfortran: .true. is 1) */
#define F_TRUE  1
#define F_FALSE 0

/* Every Fortran name of MPI_<Name>: ompi_<lower>_f and its aliases. */
#define F_NAMES(lower, UPPER, PARAMS)                                         \
    void mpi_##lower(PARAMS) __attribute__((alias("ompi_" #lower "_f")));     \
    void mpi_##lower##_(PARAMS) __attribute__((alias("ompi_" #lower "_f")));  \
    void mpi_##lower##__(PARAMS) __attribute__((alias("ompi_" #lower "_f"))); \
    void MPI_##UPPER(PARAMS) __attribute__((alias("ompi_" #lower "_f")));

/* Open MPI's mpi_f08 calls the test calls by their Fortran profiling name
 * (pmpi_test_, ...): that name too, or its MPI_Test never progresses a
 * topocoll request. */
#define F_PNAME(lower, PARAMS) \
    void pmpi_##lower##_(PARAMS) __attribute__((alias("ompi_" #lower "_f")));

/* the irregular exchanges pass Fortran count arrays as C's int arrays */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is a C int");

#define COMMA ,
#define TC_COLL(ID, Name, lower, SHAPE, ...)                                 \
    void ompi_##lower##_f(S_##SHAPE##_F, MPI_Fint *ierr)                     \
    {                                                                        \
        set_ierr(ierr, MPI_##Name(S_##SHAPE##_FARGS));                       \
        conv_after(0, 0);                                                    \
    }                                                                        \
    F_NAMES(lower, ID, S_##SHAPE##_F COMMA MPI_Fint *ierr)                   \
    void ompi_i##lower##_f(S_##SHAPE##_F, MPI_Fint *request, MPI_Fint *ierr) \
    {                                                                        \
        MPI_Request r = MPI_REQUEST_NULL;                                    \
        int rc = MPI_I##lower(S_##SHAPE##_FARGS, &r);                        \
        if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(r);               \
        conv_after(rc == MPI_SUCCESS && r != MPI_REQUEST_NULL, *request);    \
        set_ierr(ierr, rc);                                                  \
    }                                                                        \
    F_NAMES(i##lower, I##ID, S_##SHAPE##_F COMMA MPI_Fint *request COMMA MPI_Fint *ierr)
#include "../base/colls.def"
#undef TC_COLL

/* Persistent collectives: Open MPI 4.1's MPIX_<COLL>_INIT (ompix_<coll>_init_f
 * and its aliases; mpi_f08's calls ompix_<coll>_init_f). */
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define FX_NAMES(lower, UPPER, PARAMS)                                                    \
    void mpix_##lower##_init(PARAMS) __attribute__((alias("ompix_" #lower "_init_f")));   \
    void mpix_##lower##_init_(PARAMS) __attribute__((alias("ompix_" #lower "_init_f")));  \
    void mpix_##lower##_init__(PARAMS) __attribute__((alias("ompix_" #lower "_init_f"))); \
    void MPIX_##UPPER##_INIT(PARAMS) __attribute__((alias("ompix_" #lower "_init_f")));
#define TC_COLL(ID, Name, lower, SHAPE, ...)                                                      \
    void ompix_##lower##_init_f(S_##SHAPE##_F, MPI_Fint *info, MPI_Fint *request, MPI_Fint *ierr) \
    {                                                                                             \
        MPI_Request r = MPI_REQUEST_NULL;                                                         \
        int rc = MPIX_##Name##_init(S_##SHAPE##_FARGS, PMPI_Info_f2c(*info), &r);                 \
        if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(r);                                    \
        conv_after(rc == MPI_SUCCESS && r != MPI_REQUEST_NULL, *request);                         \
        set_ierr(ierr, rc);                                                                       \
    }                                                                                             \
    FX_NAMES(lower, ID,                                                                           \
             S_##SHAPE##_F COMMA MPI_Fint *info COMMA MPI_Fint *request COMMA MPI_Fint *ierr)
#include "../base/colls.def"
#undef TC_COLL
#endif

void ompi_start_f(MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    set_ierr(ierr, MPI_Start(&r));
}
F_NAMES(start, START, MPI_Fint *request COMMA MPI_Fint *ierr)

void ompi_request_free_f(MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    held_t *h = held_take(*request);
    int rc = MPI_Request_free(&r);
    held_end(h, rc == MPI_SUCCESS ? MPI_REQUEST_NULL : r);
    if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(MPI_REQUEST_NULL);
    set_ierr(ierr, rc);
}
F_NAMES(request_free, REQUEST_FREE, MPI_Fint *request COMMA MPI_Fint *ierr)

/* ---- Set-up and the hardware communicators ------------------------------------- */

void ompi_init_f(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    set_ierr(ierr, MPI_Init(&argc, &argv));
}
F_NAMES(init, INIT, MPI_Fint *ierr)

void ompi_init_thread_f(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0, got = MPI_THREAD_SINGLE;
    char **argv = NULL;
    int rc = MPI_Init_thread(&argc, &argv, *required, &got);
    *provided = got;
    set_ierr(ierr, rc);
}
F_NAMES(init_thread, INIT_THREAD, MPI_Fint *required COMMA MPI_Fint *provided COMMA MPI_Fint *ierr)

void ompi_finalize_f(MPI_Fint *ierr) { set_ierr(ierr, MPI_Finalize()); }
F_NAMES(finalize, FINALIZE, MPI_Fint *ierr)

void ompi_comm_split_type_f(MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info,
                            MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(PMPI_Comm_f2c(*comm), *split_type, *key, PMPI_Info_f2c(*info), &c);
    if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
    set_ierr(ierr, rc);
}
F_NAMES(comm_split_type, COMM_SPLIT_TYPE,
        MPI_Fint *comm COMMA MPI_Fint *split_type COMMA MPI_Fint *key COMMA MPI_Fint *info COMMA
            MPI_Fint *newcomm COMMA MPI_Fint *ierr)

/* ---- The completion calls -------------------------------------------------------- */

/* A Fortran status is MPI_STATUS_SIZE integers: sizeof(MPI_Status) here. */
enum { F_STATUS = sizeof(MPI_Status) / sizeof(MPI_Fint) };

static void status_out(const MPI_Status *c, MPI_Fint *f)
{
    if (f != &mpi_fortran_status_ignore_) PMPI_Status_c2f(c, f);
}

void ompi_wait_f(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status s;
    held_t *h = held_take(*request);
    int rc = MPI_Wait(&r, &s);
    held_end(h, r);
    if (rc == MPI_SUCCESS || r == MPI_REQUEST_NULL) *request = PMPI_Request_c2f(r);
    if (rc == MPI_SUCCESS) status_out(&s, status);
    set_ierr(ierr, rc);
}
F_NAMES(wait, WAIT, MPI_Fint *request COMMA MPI_Fint *status COMMA MPI_Fint *ierr)

void ompi_test_f(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status s;
    held_t *h = held_take(*request);
    int done = 0, rc = MPI_Test(&r, &done, &s);
    held_end(h, r);
    if (rc != MPI_SUCCESS && r == MPI_REQUEST_NULL) *request = PMPI_Request_c2f(r);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        *flag = done ? F_TRUE : F_FALSE;
        if (done) status_out(&s, status);
    }
    set_ierr(ierr, rc);
}
F_NAMES(test, TEST,
        MPI_Fint *request COMMA MPI_Fint *flag COMMA MPI_Fint *status COMMA MPI_Fint *ierr)
F_PNAME(test, MPI_Fint *request COMMA MPI_Fint *flag COMMA MPI_Fint *status COMMA MPI_Fint *ierr)

void ompi_request_get_status_f(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status s;
    int done = 0, rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &done, &s);
    if (rc == MPI_SUCCESS) {
        *flag = done ? F_TRUE : F_FALSE;
        if (done) status_out(&s, status);
    }
    set_ierr(ierr, rc);
}
F_NAMES(request_get_status, REQUEST_GET_STATUS,
        MPI_Fint *request COMMA MPI_Fint *flag COMMA MPI_Fint *status COMMA MPI_Fint *ierr)
F_PNAME(request_get_status,
        MPI_Fint *request COMMA MPI_Fint *flag COMMA MPI_Fint *status COMMA MPI_Fint *ierr)

/* ---- Arrays of requests: C copies (on the stack up to ONSTACK) ------------------- */

enum { ONSTACK = 16 };

typedef struct {
    MPI_Request *r;
    MPI_Status *s;
    held_t **h; /* NULL, or what each request holds (held_take) */
    int n;
    MPI_Request r_stack[ONSTACK];
    MPI_Status s_stack[ONSTACK];
    held_t *h_stack[ONSTACK];
} reqs_t;

/* @n requests of @f in @q (and room for @n statuses), what they hold
 * taken: MPI_SUCCESS or MPI_ERR_NO_MEM / MPI_ERR_COUNT. */
static int reqs_in(reqs_t *q, int n, const MPI_Fint *f)
{
    if (n < 0) return MPI_ERR_COUNT;
    const int held = atomic_load_explicit(&g_held.n, memory_order_relaxed) > 0;
    q->r = q->r_stack;
    q->s = q->s_stack;
    q->h = held ? q->h_stack : NULL;
    q->n = n;
    if (n > ONSTACK) {
        q->r = malloc((size_t)n * sizeof(*q->r));
        q->s = malloc((size_t)n * sizeof(*q->s));
        if (held) q->h = malloc((size_t)n * sizeof(*q->h));
        if (!q->r || !q->s || (held && !q->h)) {
            free(q->r);
            free(q->s);
            if (held) free(q->h);
            return MPI_ERR_NO_MEM;
        }
    }
    for (int i = 0; i < n; i++) {
        q->r[i] = PMPI_Request_f2c(f[i]);
        if (q->h) q->h[i] = held_take(f[i]);
    }
    return MPI_SUCCESS;
}

/* @q freed, what its requests hold back on the list (nothing completed). */
static void reqs_drop(reqs_t *q)
{
    for (int i = 0; q->h && i < q->n; i++) held_end(q->h[i], q->r[i]);
    if (q->h && q->h != q->h_stack) free(q->h);
    if (q->r != q->r_stack) {
        free(q->r);
        free(q->s);
    }
}

/* The @n requests back into @f, the first @count statuses into @st unless
 * it is NULL or MPI_STATUSES_IGNORE; @q freed. */
static void reqs_out(reqs_t *q, int n, MPI_Fint *f, int count, MPI_Fint *st)
{
    for (int i = 0; i < n; i++) f[i] = PMPI_Request_c2f(q->r[i]);
    if (st != &mpi_fortran_statuses_ignore_ && st)
        for (int i = 0; i < count; i++) PMPI_Status_c2f(&q->s[i], st + (size_t)i * F_STATUS);
    reqs_drop(q);
}

void ompi_waitall_f(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
    reqs_t q;
    int rc = reqs_in(&q, *count, requests);
    if (rc != MPI_SUCCESS) {
        set_ierr(ierr, rc);
        return;
    }
    rc = MPI_Waitall(*count, q.r, q.s);
    reqs_out(&q, *count, requests, *count, statuses);
    set_ierr(ierr, rc);
}
F_NAMES(waitall, WAITALL,
        MPI_Fint *count COMMA MPI_Fint *requests COMMA MPI_Fint *statuses COMMA MPI_Fint *ierr)

void ompi_testall_f(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                    MPI_Fint *ierr)
{
    reqs_t q;
    int done = 0, rc = reqs_in(&q, *count, requests);
    if (rc != MPI_SUCCESS) {
        set_ierr(ierr, rc);
        return;
    }
    rc = MPI_Testall(*count, q.r, &done, q.s);
    *flag = done ? F_TRUE : F_FALSE;
    if (done || rc != MPI_SUCCESS)
        reqs_out(&q, *count, requests, done ? *count : 0, statuses);
    else
        reqs_drop(&q); /* nothing completed: the handles stand */
    set_ierr(ierr, rc);
}
F_NAMES(testall, TESTALL,
        MPI_Fint *count COMMA MPI_Fint *requests COMMA MPI_Fint *flag COMMA MPI_Fint *statuses COMMA
            MPI_Fint *ierr)
F_PNAME(testall, MPI_Fint *count COMMA MPI_Fint *requests COMMA MPI_Fint *flag COMMA
                     MPI_Fint *statuses COMMA MPI_Fint *ierr)

/* Waitany and Testany: the index is 1-based in Fortran. */
static void any_out(reqs_t *q, int n, MPI_Fint *requests, int index, int done, MPI_Fint *findex,
                    MPI_Fint *status)
{
    *findex = index == MPI_UNDEFINED ? MPI_UNDEFINED : index + 1;
    if (done && index != MPI_UNDEFINED) status_out(&q->s[0], status);
    reqs_out(q, n, requests, 0, NULL);
}

void ompi_waitany_f(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                    MPI_Fint *ierr)
{
    reqs_t q;
    int i = MPI_UNDEFINED, rc = reqs_in(&q, *count, requests);
    if (rc != MPI_SUCCESS) {
        set_ierr(ierr, rc);
        return;
    }
    rc = MPI_Waitany(*count, q.r, &i, &q.s[0]);
    any_out(&q, *count, requests, i, rc == MPI_SUCCESS, index, status);
    set_ierr(ierr, rc);
}
F_NAMES(waitany, WAITANY,
        MPI_Fint *count COMMA MPI_Fint *requests COMMA MPI_Fint *index COMMA MPI_Fint *status COMMA
            MPI_Fint *ierr)

void ompi_testany_f(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                    MPI_Fint *status, MPI_Fint *ierr)
{
    reqs_t q;
    int i = MPI_UNDEFINED, done = 0, rc = reqs_in(&q, *count, requests);
    if (rc != MPI_SUCCESS) {
        set_ierr(ierr, rc);
        return;
    }
    rc = MPI_Testany(*count, q.r, &i, &done, &q.s[0]);
    *flag = done ? F_TRUE : F_FALSE;
    any_out(&q, *count, requests, i, rc == MPI_SUCCESS && done, index, status);
    set_ierr(ierr, rc);
}
F_NAMES(testany, TESTANY,
        MPI_Fint *count COMMA MPI_Fint *requests COMMA MPI_Fint *index COMMA MPI_Fint *flag COMMA
            MPI_Fint *status COMMA MPI_Fint *ierr)
F_PNAME(testany, MPI_Fint *count COMMA MPI_Fint *requests COMMA MPI_Fint *index COMMA MPI_Fint *flag
                     COMMA MPI_Fint *status COMMA MPI_Fint *ierr)

/* Waitsome and Testsome: 1-based indices, statuses in their order. */
static int some(int wait, MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                MPI_Fint *indices, MPI_Fint *statuses)
{
    reqs_t q;
    int out = MPI_UNDEFINED, rc = reqs_in(&q, *incount, requests);
    if (rc != MPI_SUCCESS) return rc;
    int *idx = *incount > ONSTACK ? malloc((size_t)*incount * sizeof(int)) : NULL,
        idx_stack[ONSTACK];
    if (*incount > ONSTACK && !idx) {
        reqs_drop(&q);
        return MPI_ERR_NO_MEM;
    }
    if (!idx) idx = idx_stack;
    rc = wait ? MPI_Waitsome(*incount, q.r, &out, idx, q.s)
              : MPI_Testsome(*incount, q.r, &out, idx, q.s);
    int n = rc == MPI_SUCCESS && out != MPI_UNDEFINED ? out : 0;
    /* the C statuses are in completion order: q.s[k] is idx[k]'s */
    for (int k = 0; k < n; k++)
        if (statuses != &mpi_fortran_statuses_ignore_)
            PMPI_Status_c2f(&q.s[k], statuses + (size_t)k * F_STATUS);
    for (int k = 0; k < n; k++) indices[k] = idx[k] + 1;
    *outcount = rc == MPI_SUCCESS ? out : 0;
    reqs_out(&q, *incount, requests, 0, NULL);
    if (idx != idx_stack) free(idx);
    return rc;
}

void ompi_waitsome_f(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                     MPI_Fint *statuses, MPI_Fint *ierr)
{
    set_ierr(ierr, some(1, incount, requests, outcount, indices, statuses));
}
F_NAMES(waitsome, WAITSOME,
        MPI_Fint *incount COMMA MPI_Fint *requests COMMA MPI_Fint *outcount COMMA MPI_Fint *indices
            COMMA MPI_Fint *statuses COMMA MPI_Fint *ierr)

void ompi_testsome_f(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                     MPI_Fint *statuses, MPI_Fint *ierr)
{
    set_ierr(ierr, some(0, incount, requests, outcount, indices, statuses));
}
F_NAMES(testsome, TESTSOME,
        MPI_Fint *incount COMMA MPI_Fint *requests COMMA MPI_Fint *outcount COMMA MPI_Fint *indices
            COMMA MPI_Fint *statuses COMMA MPI_Fint *ierr)
F_PNAME(testsome, MPI_Fint *incount COMMA MPI_Fint *requests COMMA MPI_Fint *outcount COMMA
                      MPI_Fint *indices COMMA MPI_Fint *statuses COMMA MPI_Fint *ierr)

void ompi_startall_f(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
    reqs_t q;
    int rc = reqs_in(&q, *count, requests);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Startall(*count, q.r);
        reqs_drop(&q);
    }
    set_ierr(ierr, rc);
}
F_NAMES(startall, STARTALL, MPI_Fint *count COMMA MPI_Fint *requests COMMA MPI_Fint *ierr)

#pragma GCC visibility pop

#elif defined(MPICH)

/* MPICH's `use mpi_f08` calls PMPI_Init, PMPI_Init_thread, PMPI_Finalize,
 * PMPI_Comm_split_type and the PMPI completion calls (its collectives and
 * mpif.h call MPI_*): those are taken here, by their names in libmpichfort.
 * Handles are one integer passed by reference (MPICH's C handles are the
 * same integers), a status is a C MPI_Status, ierror is optional, and
 * MPI_STATUS(ES)_IGNORE are the objects MPI 4.0's MPI_F08_STATUS(ES)_IGNORE
 * point to. */
#pragma GCC visibility push(default)

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr) *ierr = (MPI_Fint)rc;
}

void mpi_init_f08_(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    set_ierr(ierr, MPI_Init(&argc, &argv));
}

void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0, got = MPI_THREAD_SINGLE;
    char **argv = NULL;
    int rc = MPI_Init_thread(&argc, &argv, *required, &got);
    *provided = got;
    set_ierr(ierr, rc);
}

void mpi_finalize_f08_(MPI_Fint *ierr) { set_ierr(ierr, MPI_Finalize()); }

void mpi_comm_split_type_f08_(MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info,
                              MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(PMPI_Comm_f2c(*comm), *split_type, *key, PMPI_Info_f2c(*info), &c);
    if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(c);
    set_ierr(ierr, rc);
}

_Static_assert(sizeof(MPI_Request) == sizeof(MPI_Fint), "MPICH's requests are Fortran integers");

static MPI_Status *st1(MPI_Status *s)
{
    return !s || (void *)s == (void *)MPI_F08_STATUS_IGNORE ? MPI_STATUS_IGNORE : s;
}
static MPI_Status *stn(MPI_Status *s)
{
    return !s || (void *)s == (void *)MPI_F08_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : s;
}
static void index_out(MPI_Fint *f, int c) { *f = c == MPI_UNDEFINED ? c : c + 1; }

/* (its persistent inits call MPI_<Coll>_init: pmpi.c's) */
void mpi_start_f08_(MPI_Fint *request, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Start((MPI_Request *)request));
}
void mpi_startall_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Startall(*count, (MPI_Request *)requests));
}
void mpi_request_free_f08_(MPI_Fint *request, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Request_free((MPI_Request *)request));
}

void mpi_wait_f08_(MPI_Fint *request, MPI_Status *status, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Wait((MPI_Request *)request, st1(status)));
}

void mpi_test_f08_(MPI_Fint *request, MPI_Fint *flag, MPI_Status *status, MPI_Fint *ierr)
{
    int done = 0, rc = MPI_Test((MPI_Request *)request, &done, st1(status));
    *flag = done;
    set_ierr(ierr, rc);
}

void mpi_request_get_status_f08_(MPI_Fint *request, MPI_Fint *flag, MPI_Status *status,
                                 MPI_Fint *ierr)
{
    int done = 0, rc = MPI_Request_get_status((MPI_Request)*request, &done, st1(status));
    *flag = done;
    set_ierr(ierr, rc);
}

void mpi_waitall_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Status *statuses, MPI_Fint *ierr)
{
    set_ierr(ierr, MPI_Waitall(*count, (MPI_Request *)requests, stn(statuses)));
}

void mpi_testall_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Status *statuses,
                      MPI_Fint *ierr)
{
    int done = 0, rc = MPI_Testall(*count, (MPI_Request *)requests, &done, stn(statuses));
    *flag = done;
    set_ierr(ierr, rc);
}

void mpi_waitany_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Status *status,
                      MPI_Fint *ierr)
{
    int i = MPI_UNDEFINED, rc = MPI_Waitany(*count, (MPI_Request *)requests, &i, st1(status));
    index_out(index, i);
    set_ierr(ierr, rc);
}

void mpi_testany_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                      MPI_Status *status, MPI_Fint *ierr)
{
    int i = MPI_UNDEFINED, done = 0;
    int rc = MPI_Testany(*count, (MPI_Request *)requests, &i, &done, st1(status));
    index_out(index, i);
    *flag = done;
    set_ierr(ierr, rc);
}

static int some08(int wait, MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                  MPI_Fint *indices, MPI_Status *statuses)
{
    int out = MPI_UNDEFINED;
    int rc = wait ? MPI_Waitsome(*incount, (MPI_Request *)requests, &out, indices, stn(statuses))
                  : MPI_Testsome(*incount, (MPI_Request *)requests, &out, indices, stn(statuses));
    *outcount = out;
    for (int k = 0; rc == MPI_SUCCESS && out != MPI_UNDEFINED && k < out; k++) indices[k]++;
    return rc;
}

void mpi_waitsome_f08_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Status *statuses, MPI_Fint *ierr)
{
    set_ierr(ierr, some08(1, incount, requests, outcount, indices, statuses));
}

void mpi_testsome_f08_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Status *statuses, MPI_Fint *ierr)
{
    set_ierr(ierr, some08(0, incount, requests, outcount, indices, statuses));
}

#pragma GCC visibility pop

#endif
