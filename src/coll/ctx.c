/* coll/ctx -- see ctx.h. */
#include "ctx.h"

#include "../base/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Process-wide: the keyval and the list of live contexts (for finalize).
 * Both change only when a context is created or destroyed, under g_lock.
 * The collectives' path reads the keyval without the lock: it is written
 * (under the lock) with a release store, read with an acquire load. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_keyval = MPI_KEYVAL_INVALID;
static int g_self_keyval = MPI_KEYVAL_INVALID;
static tc_ctx_t *g_live;

static void ctx_destroy(tc_ctx_t *c)
{
    pthread_mutex_lock(&g_lock);
    if (c->prev) c->prev->next = c->next; else if (g_live == c) g_live = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_unlock(&g_lock);
    tc_shm_destroy(c->shm);
    free(c->scratch);
    tc_ctx_free_types(c);
    tc_nodemap_free(&c->map);
    if (c->llcomm != MPI_COMM_NULL) PMPI_Comm_free(&c->llcomm);
    if (c->slice_red != MPI_COMM_NULL) PMPI_Comm_free(&c->slice_red);
    if (c->slice_bc != MPI_COMM_NULL) PMPI_Comm_free(&c->slice_bc);
    if (c->pcomm != MPI_COMM_NULL) PMPI_Comm_free(&c->pcomm);
    free(c);
}

static int ctx_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm; (void)keyval; (void)extra;
    ctx_destroy(attr);
    return MPI_SUCCESS;
}

/* Runs at the start of MPI_Finalize (MPI_COMM_SELF's attributes are
 * deleted first): release every context still alive, then the keyvals. */
static int self_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm; (void)keyval; (void)attr; (void)extra;
    for (;;) {
        pthread_mutex_lock(&g_lock);
        tc_ctx_t *c = g_live;
        pthread_mutex_unlock(&g_lock);
        if (!c) break;
        /* runs ctx_delete_fn, which unlinks c */
        if (PMPI_Comm_delete_attr(c->comm, atomic_load_explicit(&g_keyval, memory_order_relaxed)) != MPI_SUCCESS)
            ctx_destroy(c);
    }
    pthread_mutex_lock(&g_lock);
    int k = atomic_load_explicit(&g_keyval, memory_order_relaxed);
    atomic_store_explicit(&g_keyval, MPI_KEYVAL_INVALID, memory_order_release);
    PMPI_Comm_free_keyval(&k);
    pthread_mutex_unlock(&g_lock);
    return MPI_SUCCESS;
}

static int keyval_get(void)
{
    pthread_mutex_lock(&g_lock);
    int k = atomic_load_explicit(&g_keyval, memory_order_relaxed);
    if (k == MPI_KEYVAL_INVALID) {
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ctx_delete_fn, &k, NULL);
        atomic_store_explicit(&g_keyval, k, memory_order_release);
        if (g_self_keyval == MPI_KEYVAL_INVALID) {
            PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &g_self_keyval, NULL);
            PMPI_Comm_set_attr(MPI_COMM_SELF, g_self_keyval, NULL);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return k;
}

void tc_ctx_free_types(tc_ctx_t *c)
{
    for (int n = 0; c->ag_types && n < c->map.nnodes; n++)
        if (c->ag_types[n] != MPI_DATATYPE_NULL) PMPI_Type_free(&c->ag_types[n]);
    free(c->ag_types);
    c->ag_types = NULL;
    c->ag_block = 0;
}

int tc_ctx_slices(tc_ctx_t *c)
{
    if (c->slice_ready) return MPI_SUCCESS;
    int color = c->map.lrank < c->minlocal ? c->map.lrank : MPI_UNDEFINED, rc;
    if ((rc = PMPI_Comm_split(c->pcomm, color, c->map.rank, &c->slice_red)) != MPI_SUCCESS) return rc;
    if ((rc = PMPI_Comm_split(c->pcomm, color, c->map.rank, &c->slice_bc)) != MPI_SUCCESS) return rc;
    c->slice_ready = 1;
    return MPI_SUCCESS;
}

tc_ctx_t *tc_ctx_lookup(MPI_Comm comm)
{
    void *attr = NULL;
    int flag = 0;
    if (comm == MPI_COMM_NULL) return NULL;
    int k = atomic_load_explicit(&g_keyval, memory_order_acquire);   /* no lock: hot path */
    if (k == MPI_KEYVAL_INVALID) return NULL;
    PMPI_Comm_get_attr(comm, k, &attr, &flag);
    return flag ? attr : NULL;
}

tc_ctx_t *tc_ctx_get(MPI_Comm comm)
{
    int inter = 0, rank;
    if (comm == MPI_COMM_NULL) return NULL;
    tc_ctx_t *c = tc_ctx_lookup(comm);
    if (c) return c;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return NULL;

    c = calloc(1, sizeof(*c));
    if (!c) return NULL;   /* no memory: PMPI (a later call retries, collectively the same) */
    c->comm = comm;
    c->pcomm = c->llcomm = c->slice_red = c->slice_bc = MPI_COMM_NULL;
    c->map.lcomm = MPI_COMM_NULL;
    c->cfg = tc_config_get();
    if (!c->cfg->disable) {
        PMPI_Comm_rank(comm, &rank);
        /* split, not dup: dup would run the application's attribute copy callbacks */
        PMPI_Comm_split(comm, 0, rank, &c->pcomm);
        PMPI_Comm_set_errhandler(c->pcomm, MPI_ERRORS_RETURN);
        if (tc_nodemap_build(c->pcomm, c->cfg, &c->map) == 0) {
            int ok[2] = { 1, 1 }, all[2] = { 0, 0 };
            if (c->map.lsize > 1 && tc_shm_create(c->map.lcomm, c->cfg, &c->shm) != 0) ok[0] = 0;
            ok[1] = c->shm ? c->shm->single_copy : 1;
            PMPI_Allreduce(ok, all, 2, MPI_INT, MPI_MIN, c->pcomm);
            int all_ok = all[0];
            c->enabled = all_ok;
            c->all_sc = all[1];
            c->minlocal = c->maxlocal = c->map.lsize;
            for (int n = 0; n < c->map.nnodes; n++) {
                if (c->map.size_of[n] < c->minlocal) c->minlocal = c->map.size_of[n];
                if (c->map.size_of[n] > c->maxlocal) c->maxlocal = c->map.size_of[n];
            }
            PMPI_Comm_split(c->pcomm, c->map.lrank == 0 ? 0 : MPI_UNDEFINED, c->map.rank, &c->llcomm);
            /* Spinning pays only if the process waited for is running: with
             * more ranks than cores on the host (measured: 4 ranks on 2
             * cores, small Bcasts 2x slower with 200 polls), yield at once. */
            c->spin = c->cfg->spin_count >= 0 ? c->cfg->spin_count
                    : c->map.host_size > sysconf(_SC_NPROCESSORS_ONLN) ? 0 : 200;
            if (!all_ok) { tc_shm_destroy(c->shm); c->shm = NULL; }
        }
        if (!c->enabled && c->map.rank == 0)
            tc_warn("set-up failed on a communicator of %d processes; using the native MPI collectives", c->map.size);
        if (c->enabled && c->map.rank == 0)
            tc_debug(c->cfg, 1, "communicator of %d processes: %d node(s), %d on rank 0's node, intra-node %s (%s)%s",
                     c->map.size, c->map.nnodes, c->map.lsize,
                     c->shm && c->shm->single_copy ? "single copy" : "copy-in/copy-out",
                     c->shm ? c->shm->why : "alone on the node", c->spin == 0 ? ", oversubscribed: no spinning" : "");
    }
    pthread_mutex_lock(&g_lock);
    c->next = g_live;
    if (g_live) g_live->prev = c;
    g_live = c;
    pthread_mutex_unlock(&g_lock);
    PMPI_Comm_set_attr(comm, keyval_get(), c);
    return c;
}
