/* nbc/nbc -- see nbc.h: requests, queues and the progress engine. */
#include "nbc.h"

#include "../base/sync.h"
#include "nbc_int.h"
#include "../topo/loc.h"
#include "../xfer/region.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum {
    NB_QUEUED = 0,
    NB_RUNNING,
    NB_DRAINING,
    NB_FINISHED
}; /* (draining: failed, its
       network traffic finishing) */

/* A context's queue: its outstanding operations, a FIFO run one at a time
 * in call order (the same order on every rank), and its link in the list
 * of queues with work.  Created with the context's first nonblocking
 * operation, freed when the context goes (tc_ctx_on_release).  Progress
 * lock. */
typedef struct tc_nb_queue {
    tc_ctx_t *ctx;
    tc_nb_t *head, *tail;
    struct tc_nb_queue *next;        /* every queue of the process */
    struct tc_nb_queue *active_next; /* the queues with work */
    int listed;                      /* 1: on the active list */
    /* The running operation's state: its head's, or its direct
     * operation's while the queue is empty (one runs at a time per
     * context, from its init to its fini).  Here, not in each tc_nb_t: a
     * request stays small, and a persistent one started again finds the
     * state where its communicator's last operation left it, in cache. */
    tc_coll_state_t u;
} tc_nb_queue_t;

/* The state of @op, which is running (its queue's head or direct). */
static inline tc_coll_state_t *state_of(const tc_nb_t *op) { return &op->q->u; }

/* The progress engine's state: the one piece of process-wide mutable
 * state outside the contexts (a progress engine needs a list of what is
 * outstanding; Open MPI's opal_progress keeps its callbacks the same way). */
static struct {
    pthread_mutex_t lock;    /* guards the queues, active, fin */
    tc_nb_queue_t *queues;   /* every context's queue */
    tc_nb_queue_t *active;   /* the queues whose FIFO is not empty */
    tc_nb_t *fin, *fin_tail; /* finished, not yet completed toward MPI */
    _Atomic int outstanding; /* started and not yet completed toward MPI */
    pthread_cond_t work;     /* signalled when an operation is queued */
    int spin;                /* polls before a waiter yields (set once) */
    pthread_once_t once;
    _Atomic int threads;                  /* progress threads running (progress/) */
    _Atomic int thread_yields;            /* 1: the thread shares the application's core */
    _Atomic(tc_nb_error_hook_t) on_error; /* the bindings' (set once) */
} g_nb = { .lock = PTHREAD_MUTEX_INITIALIZER,
           .work = PTHREAD_COND_INITIALIZER,
           .once = PTHREAD_ONCE_INIT };

static void release_ctx(tc_ctx_t *c);
static void adopt_direct(void);
/* what else runs when a context goes (tc_nb_on_release; set once) */
static _Atomic(void (*)(tc_ctx_t *)) g_also_release;
static void list_queue_locked(struct tc_nb_queue *q);

/* Once per process: the spin count, and the engine's hook on contexts
 * that go. */
static void engine_init(void)
{
    const tc_loc_t *l = tc_loc_process();
    g_nb.spin = tc_config_spin(tc_config_get(), l ? l->hsize : 1);
    tc_ctx_on_release(release_ctx);
}

static int waiter_spin(void)
{
    pthread_once(&g_nb.once, engine_init);
    return atomic_load_explicit(&g_nb.thread_yields, memory_order_relaxed) ? 0 : g_nb.spin;
}

void tc_nb_threads_attach(int shares_core)
{
    adopt_direct();
    atomic_store_explicit(&g_nb.thread_yields, shares_core, memory_order_relaxed);
    atomic_store_explicit(&g_nb.threads, 1, memory_order_release);
}

void tc_nb_threads_detach(void)
{
    atomic_store_explicit(&g_nb.threads, 0, memory_order_release);
    atomic_store_explicit(&g_nb.thread_yields, 0, memory_order_relaxed);
}

void tc_nb_on_error(tc_nb_error_hook_t hook)
{
    atomic_store_explicit(&g_nb.on_error, hook, memory_order_release);
}

/* 1 on the progress thread: the split tree gives it the root-side levels. */
static _Thread_local int tl_comm_core;

void tc_nb_mark_progress_thread(void) { tl_comm_core = 1; }

static int executor(void)
{
    if (!atomic_load_explicit(&g_nb.threads, memory_order_acquire))
        return TC_EXEC_ANY; /* nobody else will run them */
    return tl_comm_core ? TC_EXEC_COMM : TC_EXEC_APP;
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

/* @c's queue, created when @create (NULL: none, or no memory).  Lock held. */
static tc_nb_queue_t *queue_of_locked(tc_ctx_t *c, int create)
{
    for (tc_nb_queue_t *q = g_nb.queues; q; q = q->next)
        if (q->ctx == c) return q;
    if (!create) return NULL;
    tc_nb_queue_t *q = calloc(1, sizeof(*q));
    if (!q) return NULL;
    q->ctx = c;
    q->next = g_nb.queues;
    g_nb.queues = q;
    return q;
}

/* Finish @op with status @st: off its queue, onto the finished list.
 * Lock held. */
static void finish_locked(tc_nb_queue_t *q, tc_nb_t *op, tc_status_t st)
{
    tc_assert(q->head == op && (op->state == NB_RUNNING || op->state == NB_DRAINING) &&
              st != TC_INPROGRESS);
    const int drained = op->state == NB_DRAINING && op->drained;
    op->ops->fini(state_of(op));
    q->ctx->stat[op->ops->stat].calls++;
    if (st != TC_OK)
        tc_ctx_failed(q->ctx, drained); /* (coll/ctx: never kept; native across
                                           nodes unless drained) */
    op->st = st;
    op->state = NB_FINISHED;
    q->head = op->next;
    if (!q->head) q->tail = NULL;
    op->next = NULL;
    if (g_nb.fin_tail)
        g_nb.fin_tail->next = op;
    else
        g_nb.fin = op;
    g_nb.fin_tail = op;
}

/* Advance @q's FIFO: its head until it is in progress, starting each next
 * operation as the previous one finishes.  Lock held. */
static void advance_queue(tc_nb_queue_t *q)
{
    tc_nb_t *op;
    while ((op = q->head)) {
        tc_status_t st = TC_OK;
        if (op->state == NB_DRAINING) { /* a failed one finishing its network traffic */
            tc_status_t d = op->ops->drain(state_of(op));
            if (d == TC_INPROGRESS) return;
            op->drained = d == TC_OK;
            finish_locked(q, op, op->st);
            continue;
        }
        if (op->state == NB_QUEUED) {
            st = op->ops->init(state_of(op), q->ctx, &op->a);
            op->state = NB_RUNNING;
        }
        /* the way out of every wait: a local process failed it */
        if (st == TC_OK && (st = op->ops->work(state_of(op), executor())) == TC_INPROGRESS &&
            (st = tc_cctl_peer_failed(q->ctx->shm, q->ctx->seq)) == TC_OK)
            return;
        if (st < 0) st = tc_cctl_settle(q->ctx->shm, q->ctx->seq, st);
        if (st < 0 && op->ops->drain) {
            op->st = st;
            op->state = NB_DRAINING;
            continue;
        }
        finish_locked(q, op, st);
    }
}

/* Advance every listed queue once; unlist the emptied ones.  Lock held. */
static void sweep_locked(void)
{
    tc_nb_queue_t **pp = &g_nb.active;
    while (*pp) {
        tc_nb_queue_t *q = *pp;
        advance_queue(q);
        int ran = tc_async_run(q->ctx->shm); /* KNEM asynchronous copies */
        if (ran) atomic_fetch_sub_explicit(&g_nb.outstanding, ran, memory_order_release);
        if (!q->head && !tc_async_pending(q->ctx->shm)) {
            *pp = q->active_next;
            q->active_next = NULL;
            q->listed = 0;
        } else {
            pp = &q->active_next;
        }
    }
}

/* The MPI error code @op completes with (the bindings' hook says why). */
static int op_error(tc_nb_t *op)
{
    if (op->st == TC_OK) return MPI_SUCCESS;
    /* (not the context: the communicator may be freed by now; the lock
     * marked it tainted when the operation finished) */
    tc_nb_error_hook_t hook = atomic_load_explicit(&g_nb.on_error, memory_order_acquire);
    return hook ? hook(op->rank, op->st, op->call) : MPI_ERR_INTERN;
}

/* @op's packed output (a.out) into the application's buffer. */
static void unpack_out(tc_nb_t *op)
{
    int pos = 0, psize = 0;
    PMPI_Pack_size(op->ucount, op->utype, MPI_COMM_SELF, &psize);
    PMPI_Unpack(op->a.out, psize, &pos, op->ubuf, op->ucount, op->utype, MPI_COMM_SELF);
}

void tc_nb_free_copies(tc_nb_t *op)
{
    if (op->ubuf) PMPI_Type_free(&op->utype);
    if (op->pk_in) PMPI_Type_free(&op->pk_type);
    free(op->tmp[0]);
    free(op->tmp[1]);
    free(op->own);
    op->tmp[0] = op->tmp[1] = op->own = NULL;
    op->ubuf = NULL;
    op->pk_in = 0;
}

/* Complete the operations of list @fin toward MPI (not under the lock:
 * Grequest_complete may run the free callback). */
static void complete_list(tc_nb_t *fin)
{
    while (fin) {
        tc_nb_t *op = fin;
        fin = op->next;
        int rc = op_error(op);
        if (op->persistent) { /* no request: its done flag (copies: kept) */
            if (rc == MPI_SUCCESS && op->ubuf) unpack_out(op);
            atomic_store_explicit(&op->rc, rc, memory_order_relaxed);
            atomic_fetch_sub_explicit(&g_nb.outstanding, 1, memory_order_release);
            /* release: the operation's writes to the application's buffers
             * (and rc) before done; the completion calls read it acquire */
            atomic_store_explicit(&op->done, 1, memory_order_release);
            continue;
        }
        if (rc == MPI_SUCCESS && op->ubuf) unpack_out(op);
        tc_nb_free_copies(op);
        atomic_store_explicit(&op->rc, rc, memory_order_release);
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

/* ---- Direct starts of persistent operations ----------------------------------

 * A persistent operation started while the engine is idle (nothing
 * outstanding, no progress thread, the MPI library below
 * MPI_THREAD_MULTIPLE) runs on the application's thread as a blocking
 * call does (one at a time): its start inits it and advances it once, its completion
 * call advances it to the end, with no lock and no queue.  Whatever would
 * need the engine (another operation started, a blocking collective's
 * drain, a progress call, a completion call over other requests) first
 * hands every direct operation to its queue, where it goes on as any
 * other.  The list is the application thread's only (no
 * MPI_THREAD_MULTIPLE, no progress thread). */
static tc_nb_t *g_direct;       /* the direct operations, through ->next */
static _Atomic int g_ndirect;   /* how many (read by tc_nb_outstanding) */
static int g_direct_level = -1; /* 1: the thread level allows them (set once) */

static int direct_allowed(void)
{
    if (g_direct_level < 0) {
        int lvl = MPI_THREAD_MULTIPLE;
        if (PMPI_Query_thread(&lvl) != MPI_SUCCESS) lvl = MPI_THREAD_MULTIPLE;
        g_direct_level = lvl != MPI_THREAD_MULTIPLE;
    }
    return g_direct_level && !atomic_load_explicit(&g_nb.threads, memory_order_acquire) &&
           tc_nb_outstanding() == 0; /* (one direct operation at a time) */
}

static void direct_unlink(tc_nb_t *op)
{
    for (tc_nb_t **pp = &g_direct; *pp; pp = &(*pp)->next)
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    op->next = NULL;
    op->direct = 0;
    atomic_fetch_sub_explicit(&g_ndirect, 1, memory_order_relaxed);
}

/* Hand direct @op (running, or failed: @st) to the head of its queue (the
 * queue is empty of others: they start after this). */
static void adopt(tc_nb_t *op, tc_status_t st)
{
    direct_unlink(op);
    tc_nb_queue_t *q = op->q;
    atomic_fetch_add_explicit(&g_nb.outstanding, 1, memory_order_relaxed);
    pthread_mutex_lock(&g_nb.lock);
    op->st = st;
    op->state = st == TC_INPROGRESS ? NB_RUNNING : NB_DRAINING;
    op->next = q->head;
    q->head = op;
    if (!q->tail) q->tail = op;
    list_queue_locked(q);
    pthread_mutex_unlock(&g_nb.lock);
}

static void adopt_direct(void)
{
    while (g_direct) adopt(g_direct, TC_INPROGRESS);
}

/* Direct @op ended with @st: finished here as finish_locked does, or, a
 * failure with network traffic to drain, handed to its queue. */
static void direct_end(tc_nb_t *op, tc_status_t st)
{
    tc_ctx_t *c = op->ctx;
    if (st < 0) st = tc_cctl_settle(c->shm, c->seq, st);
    if (st < 0 && op->ops->drain) {
        adopt(op, st); /* (the engine drains it and completes it) */
        return;
    }
    direct_unlink(op);
    op->ops->fini(state_of(op));
    c->stat[op->ops->stat].calls++;
    if (st != TC_OK) tc_ctx_failed(c, 0);
    op->st = st;
    op->state = NB_FINISHED;
    const int rc = op_error(op);
    if (rc == MPI_SUCCESS && op->ubuf) unpack_out(op); /* (a persistent v-collective's) */
    atomic_store_explicit(&op->rc, rc, memory_order_relaxed);
    atomic_store_explicit(&op->done, 1, memory_order_release);
}

void tc_nb_poke(const tc_ctx_t *c, const tc_backoff_t *b)
{
    if (b->polls < b->spin || ((b->polls - b->spin) & 15) != 0) return;
    int flag;
    /* (a context not built yet has no private communicator) */
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                c && c->pcomm != MPI_COMM_NULL ? c->pcomm : MPI_COMM_SELF, &flag,
                MPI_STATUS_IGNORE);
}

void tc_nb_direct_advance(tc_nb_t *op, int wait)
{
    tc_backoff_t b;
    tc_backoff_init(&b, op->ctx->spin);
    b.nap_us = op->ctx->nap;
    while (op->direct) {
        tc_status_t st = op->ops->work(state_of(op), TC_EXEC_ANY);
        /* the way out of every wait: a local process failed it */
        if (st == TC_INPROGRESS && (st = tc_cctl_peer_failed(op->ctx->shm, op->ctx->seq)) == TC_OK)
            st = TC_INPROGRESS;
        if (st != TC_INPROGRESS) {
            direct_end(op, st);
            return;
        }
        if (!wait) return;
        tc_nb_poke(op->ctx, &b);
        tc_backoff(&b);
    }
}

void tc_nb_restart(tc_nb_t *op)
{
    if (!direct_allowed() || op->ops->leaves_done) {
        tc_nb_enqueue(op);
        return;
    }
    op->direct = 1;
    op->state = NB_RUNNING;
    op->next = g_direct;
    g_direct = op;
    atomic_fetch_add_explicit(&g_ndirect, 1, memory_order_relaxed);
    op->ctx->stat[op->ops->stat].nonblocking++;
    tc_status_t st = op->ops->init(state_of(op), op->ctx, &op->a);
    if (st != TC_OK) {
        direct_end(op, st);
        return;
    }
    tc_nb_direct_advance(op, 0); /* (publishes what the others read) */
}

int tc_nb_outstanding(void)
{
    return atomic_load_explicit(&g_nb.outstanding, memory_order_acquire) +
           atomic_load_explicit(&g_ndirect, memory_order_relaxed);
}

int tc_nb_progress(void)
{
    if (tc_nb_outstanding() == 0) return 0;
    adopt_direct();
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

int tc_nb_spin(void) { return waiter_spin(); }

void tc_nb_drain(tc_ctx_t *c)
{
    if (tc_nb_outstanding() == 0) return;
    adopt_direct();
    tc_backoff_t b;
    tc_backoff_init(&b, waiter_spin());
    for (;;) {
        pthread_mutex_lock(&g_nb.lock);
        tc_nb_queue_t *q = queue_of_locked(c, 0);
        int empty = (!q || !q->head) && !tc_async_pending(c->shm);
        pthread_mutex_unlock(&g_nb.lock);
        if (empty) break;
        progress_pass(0);
        tc_backoff(&b);
    }
    progress_pass(1); /* complete what finished (the context may be going) */
}

/* coll/ctx's hook: @c goes (freed, or kept for another communicator).  Its
 * operations complete first; then its queue goes. */
static void release_ctx(tc_ctx_t *c)
{
    tc_nb_drain(c);
    pthread_mutex_lock(&g_nb.lock);
    tc_nb_queue_t *q = NULL;
    for (tc_nb_queue_t **pp = &g_nb.queues; *pp; pp = &(*pp)->next)
        if ((*pp)->ctx == c) {
            q = *pp;
            *pp = q->next;
            break;
        }
    /* (a queue may still be listed with nothing outstanding: an
     * asynchronous copy run before its watch counted it) */
    for (tc_nb_queue_t **pp = &g_nb.active; q && q->listed && *pp; pp = &(*pp)->active_next)
        if (*pp == q) {
            *pp = q->active_next;
            break;
        }
    pthread_mutex_unlock(&g_nb.lock);
    free(q);
    void (*also)(tc_ctx_t *) = atomic_load_explicit(&g_also_release, memory_order_acquire);
    if (also) also(c); /* (nbc/persist: its persistent requests can no longer start) */
}

void tc_nb_on_release(void (*hook)(tc_ctx_t *c))
{
    atomic_store_explicit(&g_also_release, hook, memory_order_release);
    pthread_once(&g_nb.once, engine_init); /* (which asks coll/ctx to call it) */
}

/* Put @q on the active list (once) and wake a sleeping progress thread.
 * Lock held. */
static void list_queue_locked(tc_nb_queue_t *q)
{
    if (!q->listed) {
        q->listed = 1;
        q->active_next = g_nb.active;
        g_nb.active = q;
    }
    pthread_cond_broadcast(&g_nb.work);
}

tc_nb_t *tc_nb_new(tc_ctx_t *ctx, int kind, const char *call)
{
    pthread_once(&g_nb.once, engine_init);
    tc_nb_t *op = calloc(1, sizeof(*op)); /* (the state is its queue's) */
    if (!op) return NULL;
    op->ctx = ctx;
    op->ops = tc_coll_ops(kind);
    op->call = call;
    op->greq = MPI_REQUEST_NULL;
    op->a.t = &op->t;
    return op;
}

/* The initiating call of a split-tree all-to-one operation runs its S
 * leaf-side levels before the progress thread takes the rest. */
static void run_leaves(tc_nb_t *op)
{
    tc_backoff_t b;
    tc_backoff_init(&b, waiter_spin());
    for (;;) {
        pthread_mutex_lock(&g_nb.lock);
        int left = op->state != NB_FINISHED &&
                   (op->state != NB_RUNNING || !op->ops->leaves_done(state_of(op)));
        pthread_mutex_unlock(&g_nb.lock);
        if (!left) break;
        progress_pass(1);
        tc_backoff(&b);
    }
}

int tc_nb_attach(tc_nb_t *op)
{
    pthread_mutex_lock(&g_nb.lock);
    tc_nb_queue_t *q = queue_of_locked(op->ctx, 1);
    pthread_mutex_unlock(&g_nb.lock);
    op->q = q;
    op->rank = op->ctx->map.rank;
    return q ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int tc_nb_launch(tc_nb_t *op, MPI_Request *req)
{
    int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, op, &op->greq);
    if (rc != MPI_SUCCESS) return rc;
    *req = op->greq;
    atomic_store_explicit(&op->refs, 2, memory_order_relaxed);
    tc_nb_enqueue(op);
    return MPI_SUCCESS;
}

void tc_nb_enqueue(tc_nb_t *op)
{
    adopt_direct(); /* (they run before it) */
    tc_nb_queue_t *q = op->q;
    op->state = NB_QUEUED;
    atomic_fetch_add_explicit(&g_nb.outstanding, 1, memory_order_relaxed);
    pthread_mutex_lock(&g_nb.lock);
    op->ctx->stat[op->ops->stat].nonblocking++;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
    list_queue_locked(q);
    pthread_mutex_unlock(&g_nb.lock);
    /* Start it now if it is at the head: processes that others read from
     * publish their buffers at once (and one pass over the others). */
    progress_pass(0);
    if (op->ops->leaves_done && atomic_load_explicit(&g_nb.threads, memory_order_acquire))
        run_leaves(op);
}

void tc_nb_watch(tc_ctx_t *c)
{
    if (!c) return;
    adopt_direct();
    pthread_once(&g_nb.once, engine_init);
    pthread_mutex_lock(&g_nb.lock);
    tc_nb_queue_t *q = queue_of_locked(c, 1);
    if (q) {
        atomic_fetch_add_explicit(&g_nb.outstanding, 1, memory_order_relaxed);
        list_queue_locked(q);
    }
    pthread_mutex_unlock(&g_nb.lock);
    if (!q) tc_async_run(c->shm); /* no memory for a queue: the copies run now */
}
