/* nbc/nbc -- see nbc.h: requests, queues and the progress engine. */
#include "nbc.h"

#include "../base/sync.h"
#include "../topo/loc.h"
#include "../xfer/region.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { NB_QUEUED = 0, NB_RUNNING, NB_FINISHED };

/* The progress engine's state: the one piece of process-wide mutable
 * state outside the contexts (a progress engine needs a list of what is
 * outstanding; Open MPI's opal_progress keeps its callbacks the same way). */
static struct {
    pthread_mutex_t lock;    /* guards the contexts' FIFOs, active, fin */
    tc_ctx_t *active;        /* contexts whose FIFO is not empty */
    tc_nb_t *fin, *fin_tail; /* finished, not yet completed toward MPI */
    _Atomic int outstanding; /* started and not yet completed toward MPI */
    pthread_cond_t work;     /* signalled when an operation is queued */
    int spin;                /* polls before a waiter yields (set once) */
    pthread_once_t spin_once;
} g_nb = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, 0, PTHREAD_COND_INITIALIZER, 0,
           PTHREAD_ONCE_INIT };

static void spin_init(void)
{
    const tc_loc_t *l = tc_loc_process();
    g_nb.spin = tc_config_spin(tc_config_get(), l ? l->hsize : 1);
}

static int waiter_spin(void)
{
    pthread_once(&g_nb.spin_once, spin_init);
    return tc_nb_thread_shares_core() ? 0 : g_nb.spin;
}

/* ---- The operations' steps, by kind ------------------------------------------ */

/* 1 on the progress thread: the split tree gives it the root-side levels. */
static _Thread_local int tl_comm_core;

void tc_nb_mark_progress_thread(void) { tl_comm_core = 1; }

static int executor(void)
{
    if (!tc_nb_threads_running()) return TC_EXEC_ANY; /* nobody else will run them */
    return tl_comm_core ? TC_EXEC_COMM : TC_EXEC_APP;
}

static int op_init(tc_nb_t *op)
{
    tc_ctx_t *c = op->ctx;
    switch (op->kind) {
    case TC_NB_BCAST: tc_bcast_init(&op->u.bcast, c, op->out, op->n, op->root); return MPI_SUCCESS;
    case TC_NB_BARRIER: tc_barrier_init(&op->u.barrier, c, 0); return MPI_SUCCESS;
    case TC_NB_REDUCE:
        return tc_reduce_init(&op->u.reduce, c, op->in, op->out, op->n, &op->t, op->root, 0);
    case TC_NB_ALLREDUCE:
        return tc_allreduce_init(&op->u.allreduce, c, op->in, op->out, op->n, &op->t);
    case TC_NB_ALLGATHER: return tc_allgather_init(&op->u.allgather, c, op->in, op->out, op->n);
    case TC_NB_SCAN: return tc_scan_init(&op->u.scan, c, op->in, op->out, op->n, &op->t);
    case TC_NB_TREE_BCAST:
        return tc_tree_init(&op->u.tree, c, TC_TREE_BCAST, NULL, op->out, 0, NULL, op->n, op->root,
                            op->split);
    case TC_NB_TREE_REDUCE:
        return tc_tree_init(&op->u.tree, c, TC_TREE_REDUCE, op->in, op->out, op->n, &op->t, 0,
                            op->root, op->split);
    case TC_NB_TREE_ALLREDUCE:
        return tc_tree_init(&op->u.tree, c, TC_TREE_REDUCE, op->in, op->out, op->n, &op->t, 0, 0,
                            op->split);
    }
    return MPI_ERR_INTERN;
}

static int op_work(tc_nb_t *op)
{
    switch (op->kind) {
    case TC_NB_BCAST: return tc_bcast_work(&op->u.bcast);
    case TC_NB_BARRIER: return tc_barrier_work(&op->u.barrier);
    case TC_NB_REDUCE: return tc_reduce_work(&op->u.reduce);
    case TC_NB_ALLREDUCE: return tc_allreduce_work(&op->u.allreduce);
    case TC_NB_ALLGATHER: return tc_allgather_work(&op->u.allgather);
    case TC_NB_SCAN: return tc_scan_work(&op->u.scan);
    case TC_NB_TREE_BCAST:
    case TC_NB_TREE_REDUCE: return tc_tree_work(&op->u.tree, executor());
    case TC_NB_TREE_ALLREDUCE: {
        /* the tree parts of Allreduce: a split-tree Reduce to rank 0, then
         * a split-tree Bcast of its result (bit-identical everywhere) */
        int rc = tc_tree_work(&op->u.tree, executor());
        if (rc != TC_OP_DONE || op->phase) return rc;
        tc_tree_fini(&op->u.tree);
        op->phase = 1;
        rc = tc_tree_init(&op->u.tree, op->ctx, TC_TREE_BCAST, NULL, op->out, 0, NULL,
                          tc_span(&op->t, op->n), 0, op->split);
        return rc != MPI_SUCCESS ? rc : tc_tree_work(&op->u.tree, executor());
    }
    }
    return MPI_ERR_INTERN;
}

static void op_fini(tc_nb_t *op)
{
    tc_ctx_t *c = op->ctx;
    switch (op->kind) {
    case TC_NB_BCAST:
        tc_bcast_fini(&op->u.bcast);
        c->bcast_calls++;
        break;
    case TC_NB_BARRIER: c->barrier_calls++; break;
    case TC_NB_REDUCE:
        tc_reduce_fini(&op->u.reduce);
        c->reduce_calls++;
        break;
    case TC_NB_ALLREDUCE:
        tc_allreduce_fini(&op->u.allreduce);
        c->allreduce_calls++;
        break;
    case TC_NB_ALLGATHER:
        tc_allgather_fini(&op->u.allgather);
        c->allgather_calls++;
        break;
    case TC_NB_SCAN: tc_scan_fini(&op->u.scan); break;
    case TC_NB_TREE_BCAST:
        tc_tree_fini(&op->u.tree);
        c->bcast_calls++;
        break;
    case TC_NB_TREE_REDUCE:
        tc_tree_fini(&op->u.tree);
        c->reduce_calls++;
        break;
    case TC_NB_TREE_ALLREDUCE:
        tc_tree_fini(&op->u.tree);
        c->allreduce_calls++;
        break;
    }
}

/* ---- Generalized-request callbacks -------------------------------------------- */

static int greq_query(void *extra, MPI_Status *st)
{
    tc_nb_t *op = extra;
    /* a collective's status carries nothing but its error */
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    int rc = op ? atomic_load_explicit(&op->rc, memory_order_acquire) : MPI_SUCCESS;
    st->MPI_ERROR = rc;
    return rc;
}

static void op_release(tc_nb_t *op)
{
    if (op && atomic_fetch_sub_explicit(&op->refs, 1, memory_order_acq_rel) == 1) free(op);
}

static int greq_free(void *extra)
{
    op_release(extra); /* MPI is done with the request */
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* a collective cannot be cancelled: it completes normally */
}

/* ---- Queues and progress ------------------------------------------------------ */

/* Advance @c's FIFO: its head until it is pending, starting each next
 * operation as the previous one finishes.  Progress lock held. */
static void advance_ctx(tc_ctx_t *c)
{
    tc_nb_t *op;
    while ((op = c->nb_head)) {
        int rc = MPI_SUCCESS;
        if (op->state == NB_QUEUED) {
            rc = op_init(op);
            op->state = NB_RUNNING;
        }
        if (rc == MPI_SUCCESS && (rc = op_work(op)) == TC_OP_PENDING) return;
        op_fini(op);
        if (rc != MPI_SUCCESS) c->tainted = 1; /* (coll/ctx: never kept for reuse) */
        atomic_store_explicit(&op->rc, rc, memory_order_release);
        op->state = NB_FINISHED;
        c->nb_head = op->next;
        if (!c->nb_head) c->nb_tail = NULL;
        op->next = NULL;
        if (g_nb.fin_tail)
            g_nb.fin_tail->next = op;
        else
            g_nb.fin = op;
        g_nb.fin_tail = op;
    }
}

/* Advance every listed context once; unlist the emptied ones.  Lock held. */
static void sweep_locked(void)
{
    tc_ctx_t **pp = &g_nb.active;
    while (*pp) {
        tc_ctx_t *c = *pp;
        advance_ctx(c);
        int ran = tc_async_run(c->shm); /* KNEM asynchronous copies */
        if (ran) atomic_fetch_sub_explicit(&g_nb.outstanding, ran, memory_order_release);
        if (!c->nb_head && !tc_async_pending(c->shm)) {
            *pp = c->nb_next;
            c->nb_next = NULL;
            c->nb_listed = 0;
        } else {
            pp = &c->nb_next;
        }
    }
}

/* Complete the operations of list @fin toward MPI (not under the lock:
 * Grequest_complete may run the free callback). */
static void complete_list(tc_nb_t *fin)
{
    while (fin) {
        tc_nb_t *op = fin;
        fin = op->next;
        if (atomic_load_explicit(&op->rc, memory_order_relaxed) == MPI_SUCCESS && op->ubuf) {
            int pos = 0, psize = 0;
            PMPI_Pack_size(op->ucount, op->utype, MPI_COMM_SELF, &psize);
            PMPI_Unpack(op->out, psize, &pos, op->ubuf, op->ucount, op->utype, MPI_COMM_SELF);
        }
        if (op->ubuf) PMPI_Type_free(&op->utype);
        free(op->tmp[0]);
        free(op->tmp[1]);
        op->tmp[0] = op->tmp[1] = NULL;
        atomic_fetch_sub_explicit(&g_nb.outstanding, 1, memory_order_release);
        PMPI_Grequest_complete(op->greq);
        op_release(op); /* the engine's reference */
    }
}

/* One progress pass; @block: wait for the lock (else skip when another
 * thread holds it: that thread is progressing).  1 if it ran. */
static int progress_pass(int block)
{
    if (block)
        pthread_mutex_lock(&g_nb.lock);
    else if (pthread_mutex_trylock(&g_nb.lock) != 0)
        return 0;
    sweep_locked();
    tc_nb_t *fin = g_nb.fin;
    g_nb.fin = g_nb.fin_tail = NULL;
    pthread_mutex_unlock(&g_nb.lock);
    complete_list(fin);
    return 1;
}

int tc_nb_outstanding(void)
{
    return atomic_load_explicit(&g_nb.outstanding, memory_order_acquire);
}

int tc_nb_progress(void)
{
    if (tc_nb_outstanding() == 0) return 0;
    progress_pass(0);
    return tc_nb_outstanding();
}

int tc_nb_sweep_try(void)
{
    if (tc_nb_outstanding() == 0) return 0;
    return progress_pass(0);
}

void tc_nb_wait_for_work(_Atomic int *stop)
{
    pthread_mutex_lock(&g_nb.lock);
    while (!atomic_load(stop) && !g_nb.active && !g_nb.fin)
        pthread_cond_wait(&g_nb.work, &g_nb.lock);
    pthread_mutex_unlock(&g_nb.lock);
}

void tc_nb_wake(void)
{
    pthread_mutex_lock(&g_nb.lock);
    pthread_cond_broadcast(&g_nb.work);
    pthread_mutex_unlock(&g_nb.lock);
}

static void drain_hook(tc_ctx_t *c) { tc_nb_drain(c); }

void tc_nb_drain(tc_ctx_t *c)
{
    if (tc_nb_outstanding() == 0) return;
    tc_backoff_t b;
    tc_backoff_init(&b, waiter_spin());
    for (;;) {
        pthread_mutex_lock(&g_nb.lock);
        int empty = c->nb_head == NULL && !tc_async_pending(c->shm);
        pthread_mutex_unlock(&g_nb.lock);
        if (empty) break;
        progress_pass(0);
        tc_backoff(&b);
    }
    progress_pass(1); /* complete what finished (the context may be going) */
}

/* Put @c on the active list (once) and wake a sleeping progress thread.
 * Progress lock held. */
static void list_ctx_locked(tc_ctx_t *c)
{
    c->nb_drain = drain_hook;
    if (!c->nb_listed) {
        c->nb_listed = 1;
        c->nb_next = g_nb.active;
        g_nb.active = c;
    }
    pthread_cond_broadcast(&g_nb.work);
}

tc_nb_t *tc_nb_new(tc_ctx_t *ctx, int kind)
{
    /* Not calloc: the union holds a Bcast's 5 KiB, which its init (like
     * every collective's) sets up itself; zeroing it cost a small
     * nonblocking call as much as the call. */
    tc_nb_t *op = malloc(sizeof(*op));
    if (!op) return NULL;
    memset(op, 0, offsetof(tc_nb_t, u));
    op->ctx = ctx;
    op->kind = kind;
    op->greq = MPI_REQUEST_NULL;
    return op;
}

int tc_nb_start(tc_nb_t *op, MPI_Request *req)
{
    int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, op, &op->greq);
    if (rc != MPI_SUCCESS) {
        free(op->tmp[0]);
        free(op->tmp[1]);
        if (op->ubuf) PMPI_Type_free(&op->utype);
        free(op);
        return rc;
    }
    *req = op->greq;
    atomic_store_explicit(&op->refs, 2, memory_order_relaxed);
    tc_ctx_t *c = op->ctx;
    c->nb_calls++;
    atomic_fetch_add_explicit(&g_nb.outstanding, 1, memory_order_relaxed);
    pthread_mutex_lock(&g_nb.lock);
    if (c->nb_tail)
        c->nb_tail->next = op;
    else
        c->nb_head = op;
    c->nb_tail = op;
    list_ctx_locked(c);
    pthread_mutex_unlock(&g_nb.lock);
    /* Start it now if it is at the head: processes that others read from
     * publish their buffers at once (and one pass over the others). */
    progress_pass(0);
    if ((op->kind == TC_NB_TREE_REDUCE || op->kind == TC_NB_TREE_ALLREDUCE) &&
        tc_nb_threads_running()) {
        /* Split tree, all-to-one: the S leaf-side levels run here, in the
         * initiating call, before the progress thread takes the rest
         * (Allreduce: those of its Reduce phase). */
        tc_backoff_t b;
        tc_backoff_init(&b, waiter_spin());
        for (;;) {
            pthread_mutex_lock(&g_nb.lock);
            int left = op->state != NB_FINISHED && !op->phase &&
                       (op->state != NB_RUNNING || !tc_tree_leaves_done(&op->u.tree));
            pthread_mutex_unlock(&g_nb.lock);
            if (!left) break;
            progress_pass(1);
            tc_backoff(&b);
        }
    }
    return MPI_SUCCESS;
}

void tc_nb_watch(tc_ctx_t *c)
{
    if (!c) return;
    atomic_fetch_add_explicit(&g_nb.outstanding, 1, memory_order_relaxed);
    pthread_mutex_lock(&g_nb.lock);
    list_ctx_locked(c);
    pthread_mutex_unlock(&g_nb.lock);
}

/* ---- Completion calls with progress --------------------------------------------- */

/* Repeat @test (a native Test* call) with progress in between until it
 * reports completion; once nothing of ours is outstanding, @wait (the
 * native Wait* call) finishes the job. */
#define WAIT_LOOP(test_call, done_cond, wait_call)             \
    do {                                                       \
        if (tc_nb_outstanding() == 0) return (wait_call);      \
        tc_backoff_t b_;                                       \
        tc_backoff_init(&b_, waiter_spin());                   \
        for (;;) {                                             \
            tc_nb_progress();                                  \
            int rc_ = (test_call);                             \
            if (rc_ != MPI_SUCCESS || (done_cond)) return rc_; \
            if (tc_nb_outstanding() == 0) return (wait_call);  \
            tc_backoff(&b_);                                   \
        }                                                      \
    } while (0)

int tc_nb_wait(MPI_Request *req, MPI_Status *st)
{
    int flag = 0;
    WAIT_LOOP(PMPI_Test(req, &flag, st), flag, PMPI_Wait(req, st));
}

int tc_nb_test(MPI_Request *req, int *flag, MPI_Status *st)
{
    tc_nb_progress();
    return PMPI_Test(req, flag, st);
}

int tc_nb_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    int flag = 0;
    WAIT_LOOP(PMPI_Testall(n, reqs, &flag, sts), flag, PMPI_Waitall(n, reqs, sts));
}

int tc_nb_testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    tc_nb_progress();
    return PMPI_Testall(n, reqs, flag, sts);
}

int tc_nb_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    int flag = 0;
    WAIT_LOOP(PMPI_Testany(n, reqs, index, &flag, st), flag, PMPI_Waitany(n, reqs, index, st));
}

int tc_nb_testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    tc_nb_progress();
    return PMPI_Testany(n, reqs, index, flag, st);
}

int tc_nb_waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    WAIT_LOOP(PMPI_Testsome(n, reqs, outcount, idx, sts), *outcount != 0,
              PMPI_Waitsome(n, reqs, outcount, idx, sts));
}

int tc_nb_testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    tc_nb_progress();
    return PMPI_Testsome(n, reqs, outcount, idx, sts);
}

int tc_nb_request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    tc_nb_progress();
    return PMPI_Request_get_status(req, flag, st);
}
