/*
 * nbc/persist -- persistent collective requests (MPI 4.0 section 6.13),
 * see nbc.h: the table of topocoll's persistent requests, their starts,
 * their release, and the completion calls where one of them takes part.
 *
 * A persistent request is a tc_nb_t made once by the nonblocking call
 * (screening, plan, its arguments) and queued again at each start: the
 * start costs a table lookup, the queue's lock and one progress pass.
 * Its handle is a generalized request that never completes before the
 * application frees it, so no MPI call mistakes it for a finished one;
 * the completion calls look the handle up and read the operation's done
 * flag instead.  The single-copy regions of its buffers are declared at
 * its first start and kept (op->a.keep, xfer/region) until it is freed
 * or its communicator goes; a start that fails before every local peer
 * is done with them drops them.
 *
 * A request made before its communicator's context was built (deferred)
 * holds the native MPI's request and its binding's way to make it again
 * (tc_nb_persist_defer): its starts are the native nonblocking call until
 * one finds the context built, which makes topocoll's request and hands
 * it the application's handle (adopt); the native persistent request
 * runs them only where the redo answered native or the context went.
 */
#include "../base/log.h"
#include "../base/sync.h"
#include "../xfer/region.h"
#include "nbc_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NP_BUCKETS 256 /* the table's chains (a job holds few persistent requests) */

/* The table, handle -> operation.  Process-wide: the requests belong to
 * the process, not to one communicator. */
static struct {
    pthread_mutex_t lock; /* guards the chains */
    tc_nb_t *chain[NP_BUCKETS];
    _Atomic int count;    /* requests in the table: 0 spares the lookups */
    _Atomic unsigned gen; /* bumped when a request goes (the threads' caches) */
    /* the native MPI's persistent requests made by topocoll_*_init */
    MPI_Request *nat;
    int nnat, capnat;
    _Atomic int anynat; /* nnat != 0 */
} g_np = { .lock = PTHREAD_MUTEX_INITIALIZER };

void tc_nb_persist_native(MPI_Request req)
{
    pthread_mutex_lock(&g_np.lock);
    if (g_np.nnat == g_np.capnat) {
        int cap = g_np.capnat ? 2 * g_np.capnat : 16;
        MPI_Request *r = realloc(g_np.nat, (size_t)cap * sizeof(*r));
        if (r) g_np.nat = r, g_np.capnat = cap;
    }
    if (g_np.nnat < g_np.capnat) g_np.nat[g_np.nnat++] = req; /* (no memory: unknown) */
    atomic_store_explicit(&g_np.anynat, g_np.nnat != 0, memory_order_relaxed);
    pthread_mutex_unlock(&g_np.lock);
}

/* @req, being freed, is no native persistent request of ours any more. */
static void native_forget(MPI_Request req)
{
    if (!atomic_load_explicit(&g_np.anynat, memory_order_relaxed)) return;
    pthread_mutex_lock(&g_np.lock);
    for (int i = 0; i < g_np.nnat; i++)
        if (g_np.nat[i] == req) {
            g_np.nat[i] = g_np.nat[--g_np.nnat];
            break;
        }
    atomic_store_explicit(&g_np.anynat, g_np.nnat != 0, memory_order_relaxed);
    pthread_mutex_unlock(&g_np.lock);
}

/* 1 if one of the @n requests is a native persistent request made by an
 * init (tc_nb_persist_native). */
static int tc_np_native_any(int n, const MPI_Request reqs[])
{
    if (!atomic_load_explicit(&g_np.anynat, memory_order_relaxed) || n <= 0 || !reqs) return 0;
    int found = 0;
    pthread_mutex_lock(&g_np.lock);
    for (int i = 0; i < n && !found; i++)
        for (int j = 0; j < g_np.nnat && !found; j++) found = reqs[i] == g_np.nat[j];
    pthread_mutex_unlock(&g_np.lock);
    return found;
}

/* The persistent mode of this thread (tc_nb_persist_next). */
static _Thread_local int tl_taking;

void tc_nb_persist_next(int on) { tl_taking = on; }
int tc_nb_persist_pending(void) { return tl_taking; }

static unsigned bucket(MPI_Request r)
{
    uint64_t k = 0; /* an int (MPICH) or a pointer (Open MPI) */
    memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
    k ^= k >> 29;
    k *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 56) % NP_BUCKETS;
}

/* The operation whose handle is @r, or NULL.  Lock held. */
static tc_nb_t *find_locked(MPI_Request r)
{
    for (tc_nb_t *op = g_np.chain[bucket(r)]; op; op = op->pnext)
        if (op->greq == r) return op;
    return NULL;
}

/* Each thread's last request found: a start and its completion call look
 * the same handle up, without the lock (valid while no request went). */
static _Thread_local struct {
    MPI_Request r;
    tc_nb_t *op;
    unsigned gen;
} tl_last;

static tc_nb_t *lookup(MPI_Request r)
{
    if (r == MPI_REQUEST_NULL || atomic_load_explicit(&g_np.count, memory_order_relaxed) == 0)
        return NULL;
    unsigned gen = atomic_load_explicit(&g_np.gen, memory_order_acquire);
    if (tl_last.op && tl_last.r == r && tl_last.gen == gen) return tl_last.op;
    pthread_mutex_lock(&g_np.lock);
    tc_nb_t *op = find_locked(r);
    pthread_mutex_unlock(&g_np.lock);
    if (op) tl_last.r = r, tl_last.op = op, tl_last.gen = gen;
    return op;
}

int tc_np_any(int n, const MPI_Request reqs[])
{
    if (atomic_load_explicit(&g_np.count, memory_order_relaxed) == 0 || n <= 0 || !reqs) return 0;
    for (int i = 0; i < n; i++)
        if (lookup(reqs[i])) return 1;
    return 0;
}

/* ---- The handle: a generalized request completed only at its release ---------- */

static int handle_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}
static int handle_free(void *extra)
{
    (void)extra; /* the operation is freed by tc_nb_pfree, not by MPI */
    return MPI_SUCCESS;
}
static int handle_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void tc_nb_persist_orphan(tc_ctx_t *c);

/* A deferred request's own part (tc_nb_t.dfr). */
struct tc_nb_defer {
    tc_nb_redo_t redo;
    MPI_Request nat; /* the native MPI's persistent request */
    MPI_Request cur; /* a start's native request: @nat, or the redo's native_start's */
    int settled;     /* 1: @nat's for good (the redo went native; the context went) */
    int inner;       /* 1: @cur started and not yet seen complete */
    int adopted;     /* 1: the redo's request runs the starts; @nat is kept until the
                        request is freed (MPICH frees a communicator with its last
                        request: freed now, its context would go under the request) */
};

/* Put @op in the table under its handle. */
static void table_add(tc_nb_t *op)
{
    pthread_mutex_lock(&g_np.lock);
    unsigned b = bucket(op->greq);
    op->pnext = g_np.chain[b];
    g_np.chain[b] = op;
    atomic_fetch_add_explicit(&g_np.count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g_np.lock);
}

/* Take @op out of the table (lock held). */
static void table_remove_locked(tc_nb_t *op)
{
    for (tc_nb_t **pp = &g_np.chain[bucket(op->greq)]; *pp; pp = &(*pp)->pnext)
        if (*pp == op) {
            *pp = op->pnext;
            break;
        }
    atomic_fetch_sub_explicit(&g_np.count, 1, memory_order_relaxed);
    /* release: the caches that saw the old generation drop @op before it
     * is freed (a thread using a request another frees is erroneous) */
    atomic_fetch_add_explicit(&g_np.gen, 1, memory_order_release);
}

/* Make @op (attached) a persistent request, its handle in *@req, the mode
 * off: MPI_SUCCESS, TC_NB_PERSIST_NATIVE or an MPI error code. */
static int tc_nb_persist_make(tc_nb_t *op, MPI_Request *req)
{
    tl_taking = 0;
    /* Native: packed copies (they would be made again at each start) but
     * the v-collectives' (repack: redone at each start), and reductions
     * through MPI_Reduce_local, which keep the datatype's and the op's
     * handles (the application may free both after the init).  The
     * v-collectives must not go native by their copies: whether a process
     * packs depends on its own datatypes, and every process of the call
     * must take the same path. */
    if (((op->tmp[0] || op->tmp[1] || op->ubuf) && !op->repack) || (op->t.extent && !op->t.kernel))
        return TC_NB_PERSIST_NATIVE;
    int rc = PMPI_Grequest_start(handle_query, handle_free, handle_cancel, NULL, &op->greq);
    if (rc != MPI_SUCCESS) return rc;
    op->a.keep = calloc(1, sizeof(*op->a.keep)); /* (no memory: declared at each start) */
    tc_nb_on_release(tc_nb_persist_orphan);      /* (the same hook each time) */
    op->persistent = 1;
    op->active = 0;
    op->ucomm = MPI_COMM_WORLD;
    atomic_store_explicit(&op->done, 1, memory_order_relaxed);
    atomic_store_explicit(&op->refs, 1, memory_order_relaxed);
    table_add(op);
    *req = op->greq;
    return MPI_SUCCESS;
}

int tc_nb_persist_defer(tc_ctx_t *c, MPI_Comm comm, const char *call, MPI_Request nat,
                        const tc_nb_redo_t *redo, MPI_Request *req)
{
    tc_nb_t *op = calloc(1, sizeof(*op));
    struct tc_nb_defer *d = calloc(1, sizeof(*d));
    int rc = op && d
                 ? PMPI_Grequest_start(handle_query, handle_free, handle_cancel, NULL, &op->greq)
                 : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(op);
        free(d);
        return rc;
    }
    d->redo = *redo;
    d->nat = nat;
    op->dfr = d;
    op->ctx = c;
    op->call = call;
    op->persistent = 1;
    op->ucomm = comm;
    atomic_store_explicit(&op->done, 1, memory_order_relaxed);
    tc_nb_on_release(tc_nb_persist_orphan); /* (the context may go first) */
    c->build_due = 1;                       /* (a request is made to be started often) */
    table_add(op);
    *req = op->greq;
    return MPI_SUCCESS;
}

/* Free deferred request @op's own part: its native request (inactive),
 * the redo's arguments. */
static void defer_free(tc_nb_t *op)
{
    struct tc_nb_defer *d = op->dfr;
    if (d->nat != MPI_REQUEST_NULL) PMPI_Request_free(&d->nat);
    if (d->redo.release) d->redo.release(d->redo.args);
    free(d);
    op->dfr = NULL;
}

/* Deferred request @op (inactive) becomes @n, the persistent request its
 * redo made with handle @r: @n takes @op's handle and its deferred part
 * (adopted), @r and @op go. */
static tc_nb_t *adopt(tc_nb_t *op, tc_nb_t *n, MPI_Request r)
{
    pthread_mutex_lock(&g_np.lock);
    table_remove_locked(n);
    table_remove_locked(op);
    n->greq = op->greq;
    n->ucomm = op->ucomm;
    unsigned b = bucket(n->greq);
    n->pnext = g_np.chain[b];
    g_np.chain[b] = n;
    atomic_fetch_add_explicit(&g_np.count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g_np.lock);
    PMPI_Grequest_complete(r);
    PMPI_Request_free(&r);
    n->dfr = op->dfr;
    n->dfr->adopted = 1;
    free(op);
    return n;
}

/* MPI_Start on deferred request @op (inactive): its native request's
 * start, or, the first time its context is built, the redo's request
 * (*@op then points to it, to be started by the caller: returns 1).
 * *@rc: MPI_SUCCESS or an MPI error code; *@raised: 1 if the native call
 * that failed raised it already. */
static int defer_start(tc_nb_t **opp, int *rc, int *raised)
{
    tc_nb_t *op = *opp;
    struct tc_nb_defer *d = op->dfr;
    if (!d->settled && (!op->ctx || !op->ctx->cold)) {
        MPI_Request r = MPI_REQUEST_NULL;
        int e = op->ctx && op->ctx->enabled ? d->redo.redo(d->redo.args, &r) : TC_NB_PERSIST_NATIVE;
        tc_nb_t *n = e == MPI_SUCCESS ? lookup(r) : NULL;
        if (n) {
            *opp = adopt(op, n, r);
            return 1;
        }
        if (e == MPI_SUCCESS) { /* (not ours: cannot be) */
            PMPI_Request_free(&r);
            e = MPI_ERR_INTERN;
        }
        if (e != TC_NB_PERSIST_NATIVE) {
            *rc = e; /* (the caller raises it) */
            return 0;
        }
        d->settled = 1;
    }
    /* Until the context is built, each start is the native nonblocking
     * call (MPICH 4.0.2's persistent forms break a derived datatype's
     * reference count at each start: limitations.md); for good, the
     * native persistent request (also where the communicator went: it
     * holds it). */
    if (d->settled) {
        d->cur = d->nat;
        *rc = PMPI_Start(&d->nat);
    } else {
        *rc = d->redo.native_start(d->redo.args, &d->cur);
    }
    *raised = *rc != MPI_SUCCESS;
    if (*rc != MPI_SUCCESS) return 0;
    atomic_store_explicit(&op->rc, MPI_SUCCESS, memory_order_relaxed);
    atomic_store_explicit(&op->done, 0, memory_order_relaxed);
    d->inner = 1;
    op->active = 1;
    return 0;
}

/* @c goes (tc_nb_on_release): its persistent requests can no longer
 * start, and the regions they kept go now, while its segment is there (a
 * context kept for reuse holds none of them). */
static void tc_nb_persist_orphan(tc_ctx_t *c)
{
    if (atomic_load_explicit(&g_np.count, memory_order_relaxed) == 0) return;
    pthread_mutex_lock(&g_np.lock);
    for (int b = 0; b < NP_BUCKETS; b++)
        for (tc_nb_t *op = g_np.chain[b]; op; op = op->pnext)
            if (op->ctx == c) {
                tc_region_keep_clear(c->shm, op->a.keep);
                op->ctx = NULL, op->q = NULL;
            }
    pthread_mutex_unlock(&g_np.lock);
}

/* ---- Start and release ---------------------------------------------------------- */

int tc_nb_start(tc_nb_t *op, MPI_Request *req)
{
    int rc = tc_nb_attach(op);
    if (rc == MPI_SUCCESS) rc = tl_taking ? tc_nb_persist_make(op, req) : tc_nb_launch(op, req);
    if (rc != MPI_SUCCESS) { /* (the persistent mode's native answer included) */
        tc_nb_free_copies(op);
        free(op);
    }
    return rc;
}

void tc_nb_persist_comm(MPI_Request req, MPI_Comm comm)
{
    tc_nb_t *op = lookup(req);
    if (op) op->ucomm = comm;
}

int tc_nb_pstart(MPI_Request req, int *rc, MPI_Comm *comm)
{
    tc_nb_t *op = lookup(req);
    if (!op) return 0;
    *comm = op->ctx || op->dfr ? op->ucomm : MPI_COMM_WORLD;
    if (op->active) {
        tc_warn("%s: MPI_Start on a persistent request that is already active", op->call);
        *rc = MPI_ERR_REQUEST;
        return 1;
    }
    if (op->dfr && !op->dfr->adopted) {
        int raised = 0;
        if (!defer_start(&op, rc, &raised)) {
            if (raised) *comm = MPI_COMM_NULL; /* (raised by the native call that failed) */
            return 1;
        }
        *comm = op->ctx ? op->ucomm : MPI_COMM_WORLD; /* (adopted) */
    }
    if (!op->ctx) {
        tc_warn("%s: MPI_Start after its communicator was freed", op->call);
        *rc = MPI_ERR_COMM;
        return 1;
    }
    if (!op->ctx->enabled) { /* (a failure across nodes: messages may be in flight) */
        tc_warn("%s: MPI_Start after an earlier start of it failed", op->call);
        *rc = MPI_ERR_OTHER;
        return 1;
    }
    if (op->pk_in) { /* the input as the application holds it now */
        int pos = 0;
        *rc = PMPI_Pack(op->pk_src, op->pk_count, op->pk_type, op->pk_dst, op->pk_bytes, &pos,
                        MPI_COMM_SELF);
        if (*rc != MPI_SUCCESS) return 1;
    }
    /* what the engine set in the last start; the state's init sets the rest */
    op->next = NULL;
    op->st = TC_OK;
    op->drained = 0;
    atomic_store_explicit(&op->rc, MPI_SUCCESS, memory_order_relaxed);
    atomic_store_explicit(&op->done, 0, memory_order_relaxed);
    op->active = 1;
    tc_nb_restart(op);
    *rc = MPI_SUCCESS;
    return 1;
}

/* The application's status for @op's completion (NULL: ignored). */
static void fill_status(MPI_Status *st, int rc)
{
    if (st == MPI_STATUS_IGNORE) return;
    handle_query(NULL, st);
    st->MPI_SOURCE = MPI_ANY_SOURCE; /* an empty status (MPI 4.0 section 3.7.3) */
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = rc;
}

/* A deferred request's native start: over (its error code kept)? */
static int defer_finished(tc_nb_t *op)
{
    struct tc_nb_defer *d = op->dfr;
    if (!d->inner) return 1;
    MPI_Request *r = d->settled ? &d->nat : &d->cur;
    int flag = 0, e = PMPI_Test(r, &flag, MPI_STATUS_IGNORE);
    if (e == MPI_SUCCESS && !flag) return 0;
    d->inner = 0;
    atomic_store_explicit(&op->rc, e, memory_order_relaxed);
    atomic_store_explicit(&op->done, 1, memory_order_relaxed);
    return 1;
}

static int finished(tc_nb_t *op)
{
    if (op->dfr && !op->dfr->adopted && op->active) return defer_finished(op);
    return !op->active || atomic_load_explicit(&op->done, memory_order_acquire);
}

/* @op finished: inactive again; its error code. */
static int complete(tc_nb_t *op, MPI_Status *st)
{
    int rc = op->active ? atomic_load_explicit(&op->rc, memory_order_relaxed) : MPI_SUCCESS;
    op->active = 0;
    fill_status(st, rc);
    return rc;
}

static void wait_done(tc_nb_t *op)
{
    tc_backoff_t b;
    tc_backoff_init(&b, tc_nb_spin());
    while (!finished(op)) {
        tc_nb_progress();
        tc_nb_poke(op->ctx, &b);
        tc_backoff(&b);
    }
}

/* A failed completion @rc of @op goes through its communicator's error
 * handler (that of MPI_COMM_WORLD once the communicator is gone). */
static int with_handler(const tc_nb_t *op, int rc)
{
    /* (a deferred request's native start raised its failure itself) */
    if (rc != MPI_SUCCESS && !(op->dfr && !op->dfr->adopted))
        PMPI_Comm_call_errhandler(op->ctx ? op->ucomm : MPI_COMM_WORLD, rc);
    return rc;
}

int tc_nb_pfree(MPI_Request *req, int *rc)
{
    tc_nb_t *op = req ? lookup(*req) : NULL;
    if (!op) {
        if (req) native_forget(*req);
        return 0;
    }
    wait_done(op); /* (freeing an active one is erroneous: it completes first) */
    pthread_mutex_lock(&g_np.lock);
    /* its regions, under the lock: a thread freeing the communicator
     * meanwhile (tc_nb_persist_orphan) either cleared them and op->ctx
     * first, or waits until they are gone (xfer/region's slots are
     * claimed atomically, so this thread may destroy them beside another
     * thread's call) */
    if (op->ctx) tc_region_keep_clear(op->ctx->shm, op->a.keep);
    table_remove_locked(op);
    pthread_mutex_unlock(&g_np.lock);
    PMPI_Grequest_complete(op->greq);
    *rc = PMPI_Request_free(&op->greq);
    if (op->dfr) defer_free(op);
    free(op->a.keep);
    tc_nb_free_copies(op);
    free(op);
    *req = MPI_REQUEST_NULL;
    return 1;
}

/* ---- Completion calls ------------------------------------------------------------ */

int tc_nb_native_testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    *flag = 0;
    if (!tc_np_native_any(n, reqs)) return PMPI_Testall(n, reqs, flag, sts);
    /* Not PMPI_Testall over a native persistent collective request:
     * MPICH 4.0.2's returns MPI_ERR_IN_STATUS, through the error handler,
     * when one completed.  Each request's status is read without freeing
     * it; once all completed, the native Waitall returns at once (and
     * says which failed). */
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL) continue;
        MPI_Status st;
        int f = 0, rc = PMPI_Request_get_status(reqs[i], &f, &st);
        if (!f) return rc;
    }
    *flag = 1;
    return PMPI_Waitall(n, reqs, sts);
}

int tc_np_wait(MPI_Request *req, MPI_Status *st)
{
    tc_nb_t *op = lookup(*req);
    if (op->direct) tc_nb_direct_advance(op, 1); /* (done, or handed to the engine) */
    wait_done(op);
    return with_handler(op, complete(op, st));
}

int tc_np_test(MPI_Request *req, int *flag, MPI_Status *st)
{
    tc_nb_t *op = lookup(*req);
    if (op->direct)
        tc_nb_direct_advance(op, 0);
    else
        tc_nb_progress();
    *flag = finished(op);
    return *flag ? with_handler(op, complete(op, st)) : MPI_SUCCESS;
}

int tc_np_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    tc_nb_t *op = lookup(req);
    if (op->direct)
        tc_nb_direct_advance(op, 0);
    else
        tc_nb_progress();
    *flag = finished(op);
    if (*flag)
        fill_status(st, op->active ? atomic_load_explicit(&op->rc, memory_order_relaxed) : 0);
    return MPI_SUCCESS;
}

/* An array's persistent requests of ours, and the rest for the native
 * calls (ours replaced by MPI_REQUEST_NULL). */
typedef struct {
    tc_nb_t **op;
    MPI_Request *rest;
    tc_nb_t *op_s[16];
    MPI_Request rest_s[16];
} np_split_t;

static int split(np_split_t *s, int n, const MPI_Request reqs[])
{
    s->op = n <= 16 ? s->op_s : malloc((size_t)n * sizeof(*s->op));
    s->rest = n <= 16 ? s->rest_s : malloc((size_t)n * sizeof(*s->rest));
    if (!s->op || !s->rest) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        s->op[i] = lookup(reqs[i]);
        s->rest[i] = s->op[i] ? MPI_REQUEST_NULL : reqs[i];
    }
    return MPI_SUCCESS;
}

static void split_free(np_split_t *s)
{
    if (s->op != s->op_s) free(s->op);
    if (s->rest != s->rest_s) free(s->rest);
}

/* Waitall's and Testall's end once all completed (@rc: the native call's
 * answer): ours made inactive, the others' handles back in @reqs; a
 * failure of ours gives MPI_ERR_IN_STATUS (every other status's error
 * set) through its communicator's handler, or its code without statuses. */
static int all_complete(np_split_t *s, int n, MPI_Request reqs[], MPI_Status sts[], int rc)
{
    const int ignore = sts == MPI_STATUSES_IGNORE, native_err = rc == MPI_ERR_IN_STATUS;
    int failed = -1, code = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!s->op[i]) {
            reqs[i] = s->rest[i];
            continue;
        }
        int e = complete(s->op[i], ignore ? MPI_STATUS_IGNORE : &sts[i]);
        if (e != MPI_SUCCESS && failed < 0) failed = i, code = e;
    }
    if (failed < 0) return rc;
    if (ignore) return with_handler(s->op[failed], code);
    for (int i = 0; i < n && !native_err; i++)
        if (!s->op[i]) sts[i].MPI_ERROR = MPI_SUCCESS;
    return with_handler(s->op[failed], MPI_ERR_IN_STATUS);
}

/* Waitall (@flag NULL) and Testall: ours finished first (Testall must not
 * complete any request unless all have), then the native ones at once. */
int tc_np_all(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    np_split_t s;
    int rc = split(&s, n, reqs), f = 0;
    tc_backoff_t b;
    tc_backoff_init(&b, tc_nb_spin());
    while (rc == MPI_SUCCESS) {
        tc_nb_progress();
        int ours = 1, first = -1;
        for (int i = 0; i < n && ours; i++)
            if (s.op[i]) ours = finished(s.op[i]), first = first < 0 ? i : first;
        if (ours) rc = tc_nb_native_testall(n, s.rest, &f, sts);
        if ((ours && f) || flag || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) break;
        tc_nb_poke(first >= 0 ? s.op[first]->ctx : NULL, &b); /* (no native call yet) */
        tc_backoff(&b);
    }
    if (flag) *flag = f;
    if (f) rc = all_complete(&s, n, reqs, sts, rc);
    split_free(&s);
    return rc;
}

/* One pass of Waitany/Testany: 1 if it completed one (or there is none
 * active). */
static int any_pass(np_split_t *s, int n, MPI_Request reqs[], int *index, MPI_Status *st, int *rc)
{
    int live = 0;
    *index = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        if (!s->op[i] || !s->op[i]->active) continue;
        live = 1;
        if (!finished(s->op[i])) continue;
        *index = i;
        *rc = with_handler(s->op[i], complete(s->op[i], st));
        return 1;
    }
    int f = 0, idx = MPI_UNDEFINED;
    *rc = PMPI_Testany(n, s->rest, &idx, &f, st);
    if (idx != MPI_UNDEFINED && idx >= 0 && idx < n) reqs[idx] = s->rest[idx];
    if (*rc != MPI_SUCCESS || (f && idx != MPI_UNDEFINED)) {
        *index = idx;
        return 1;
    }
    if (f && !live) { /* nothing active at all */
        *index = MPI_UNDEFINED;
        fill_status(st, MPI_SUCCESS);
        return 1;
    }
    return 0;
}

int tc_np_any_of(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    np_split_t s;
    int rc = split(&s, n, reqs), f = 0;
    tc_backoff_t b;
    tc_backoff_init(&b, tc_nb_spin());
    while (rc == MPI_SUCCESS) {
        tc_nb_progress();
        if ((f = any_pass(&s, n, reqs, index, st, &rc)) || flag) break;
        tc_backoff(&b);
    }
    if (flag) *flag = f;
    split_free(&s);
    return rc;
}

/* Waitsome (@wait) and Testsome: the native ones' completions, then ours. */
int tc_np_some(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[], int wait)
{
    np_split_t s;
    int rc = split(&s, n, reqs);
    tc_backoff_t b;
    tc_backoff_init(&b, tc_nb_spin());
    while (rc == MPI_SUCCESS) {
        tc_nb_progress();
        int oc = 0, live = 0;
        rc = PMPI_Testsome(n, s.rest, &oc, idx, sts);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) break;
        int none = oc == MPI_UNDEFINED, failed = -1;
        if (none) oc = 0;
        const int native_oc = oc, native_err = rc == MPI_ERR_IN_STATUS;
        for (int j = 0; j < oc; j++) reqs[idx[j]] = s.rest[idx[j]];
        for (int i = 0; i < n; i++) {
            if (!s.op[i] || !s.op[i]->active) continue;
            live = 1;
            if (!finished(s.op[i])) continue;
            idx[oc] = i;
            int e = complete(s.op[i], sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[oc]);
            if (e != MPI_SUCCESS && failed < 0) failed = i, rc = e;
            oc++;
        }
        if (failed >= 0 && sts != MPI_STATUSES_IGNORE) { /* (every status's error set) */
            for (int j = 0; j < native_oc && !native_err; j++) sts[j].MPI_ERROR = MPI_SUCCESS;
            rc = MPI_ERR_IN_STATUS;
        }
        if (failed >= 0) with_handler(s.op[failed], rc);
        *outcount = oc == 0 && none && !live ? MPI_UNDEFINED : oc;
        if (*outcount != 0 || !wait) break;
        tc_backoff(&b);
    }
    split_free(&s);
    return rc;
}
