/* coll/ctx -- see ctx.h. */
#include "ctx.h"

#include "tune.h"
#include "vexchange.h"
#include "../base/log.h"

#include <stdatomic.h>

#include <stdlib.h>
#include <string.h>

/* ---- The contexts kept for reuse ------------------------------------------
 *
 * A group (the ordered MPI_COMM_WORLD ranks of a communicator's processes)
 * has up to 64 context ids, each either in use by a live communicator's
 * context or kept here after its communicator was freed.  Building a
 * context, every rank offers the ids it keeps (free) and the ids it knows
 * of (used); one MPI_Allreduce (bitwise AND) gives the ids kept on every
 * rank, and the ids nobody uses.  A kept id is taken over; else the new
 * context gets the lowest unused id (none left: it is not kept).  The
 * ranks need not free and build in the same order: an id one rank still
 * uses is never offered by it, so never taken.  Offered ids are reserved
 * until the agreement ends, so concurrent builds on one process never
 * take the same one; with MPI_THREAD_MULTIPLE ids are not kept at all
 * (two threads' new ids could collide across processes). */

enum { TC_POOL_IDS = 64 };

typedef struct tc_group {
    struct tc_group *next;
    int size;
    int *wrank; /* [size] MPI_COMM_WORLD rank of each rank */
    uint64_t hash;
    uint64_t used;     /* ids alive or kept */
    uint64_t reserved; /* kept ids offered to a build in progress */
    int holds;         /* builds in progress on this group */
    tc_ctx_t *kept[TC_POOL_IDS];
    uint64_t stamp[TC_POOL_IDS]; /* when each was kept (eviction order) */
} tc_group_t;

static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_finalizing; /* MPI_Finalize began: nothing more is kept (lock) */
static tc_group_t *g_groups;
static int g_nkept;
static uint64_t g_clock;

/* Called with a context before it goes (tc_ctx_on_release): set once. */
static _Atomic(void (*)(tc_ctx_t *)) g_release_hook;

void tc_ctx_on_release(void (*hook)(tc_ctx_t *c))
{
    atomic_store_explicit(&g_release_hook, hook, memory_order_release);
}

/* The layers above let go of @c (outstanding nonblocking operations
 * complete first). */
static void release_hook(tc_ctx_t *c)
{
    void (*hook)(tc_ctx_t *) = atomic_load_explicit(&g_release_hook, memory_order_acquire);
    if (hook) hook(c);
}

static void ctx_free(tc_ctx_t *c)
{
    release_hook(c);
    tc_tune_report(c);
    tc_shm_destroy(c->shm);
    free(c->scratch);
    for (int i = 0; i < TC_CTX_BUFS; i++) free(c->buf[i]);
    tc_nodemap_free(&c->map);
    /* A collective that failed across nodes may have left sends in flight
     * that MPI cannot cancel (coll/bcast's fini lets them go): freeing their
     * communicator under them crashed Open MPI 4.1.4 (libnbc, free() of an
     * invalid pointer in a later MPI_Comm_split).  Those communicators are
     * left to MPI_Finalize: a bounded leak after an erroneous call. */
    if (!c->sends_let_go) {
        if (c->llcomm != MPI_COMM_NULL) PMPI_Comm_free(&c->llcomm);
        if (c->slice != MPI_COMM_NULL) PMPI_Comm_free(&c->slice);
        if (c->pcomm != MPI_COMM_NULL) PMPI_Comm_free(&c->pcomm);
    }
    free(c);
}

/* Drop id @id of @g (lock held); the group goes with its last id. */
static void group_release_locked(tc_group_t *g, int id)
{
    if (id >= 0) g->used &= ~(1ull << id);
    if (g->used || g->holds) return;
    for (tc_group_t **pp = &g_groups; *pp; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    free(g->wrank);
    free(g);
}

/* Remove and return the kept context kept longest ago (lock held). */
static tc_ctx_t *evict_locked(void)
{
    tc_group_t *og = NULL;
    int oid = -1;
    for (tc_group_t *g = g_groups; g; g = g->next)
        for (int i = 0; i < TC_POOL_IDS; i++)
            if (g->kept[i] && !(g->reserved >> i & 1) && (!og || g->stamp[i] < og->stamp[oid])) {
                og = g;
                oid = i;
            }
    if (!og) return NULL;
    tc_ctx_t *c = og->kept[oid];
    og->kept[oid] = NULL;
    g_nkept--;
    c->group = NULL;
    group_release_locked(og, oid);
    return c;
}

static void ctx_destroy(tc_cattr_t *link)
{
    tc_ctx_t *c = (tc_ctx_t *)link;
    release_hook(c);
    tc_group_t *g = c->group;
    if (!g) {
        ctx_free(c);
        return;
    }
    tc_ctx_t *old = NULL;
    pthread_mutex_lock(&g_pool_lock);
    /* Not kept: a context a collective failed on (requests may still be in
     * flight on its communicators), one holding the user's regions (their
     * cookies must die with the communicator), and any at MPI_Finalize. */
    if (!c->enabled || c->tainted ||
        (c->shm && atomic_load_explicit(&c->shm->region_used, memory_order_relaxed)) ||
        g_finalizing || c->cfg->comm_keep == 0) {
        c->group = NULL;
        group_release_locked(g, c->pool_id);
    } else {
        /* what was this communicator's, not the context's */
        memset(c->stat, 0, sizeof(c->stat));
        c->bytes_bcast_net = 0;
        if (c->shm) {
            c->shm->bytes_sc = c->shm->bytes_cico = 0;
            atomic_store_explicit(&c->shm->regions_declared, 0, memory_order_relaxed);
        }
        c->link.comm = MPI_COMM_NULL;
        g->kept[c->pool_id] = c;
        g->stamp[c->pool_id] = ++g_clock;
        if (++g_nkept > c->cfg->comm_keep) old = evict_locked();
        c = NULL;
    }
    pthread_mutex_unlock(&g_pool_lock);
    if (c) ctx_free(c);
    if (old) ctx_free(old);
}

/* The contexts: released with their communicator, or at MPI_Finalize. */
static tc_cattr_class_t g_ctxs = TC_CATTR_CLASS_INIT(ctx_destroy);

/* At MPI_Finalize (before the live contexts go: MPI_COMM_SELF's attributes
 * are deleted in the reverse order of their setting), the kept ones. */
static int pool_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)attr;
    (void)extra;
    pthread_mutex_lock(&g_pool_lock);
    g_finalizing = 1; /* the live contexts, destroyed after (or before) this, are not kept */
    pthread_mutex_unlock(&g_pool_lock);
    for (;;) {
        pthread_mutex_lock(&g_pool_lock);
        tc_ctx_t *c = evict_locked();
        pthread_mutex_unlock(&g_pool_lock);
        if (!c) break;
        ctx_free(c);
    }
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

/* The group of @comm as MPI_COMM_WORLD ranks, into a new array; NULL when
 * a process is outside MPI_COMM_WORLD (spawned) or no memory. */
static int *group_wranks(MPI_Comm comm, int size, uint64_t *hash)
{
    MPI_Group gc, gw;
    int *r = malloc(2 * sizeof(int) * (size_t)size), ok = r != NULL;
    if (!ok) return NULL;
    PMPI_Comm_group(comm, &gc);
    PMPI_Comm_group(MPI_COMM_WORLD, &gw);
    for (int i = 0; i < size; i++) r[size + i] = i;
    if (PMPI_Group_translate_ranks(gc, size, r + size, gw, r) != MPI_SUCCESS) ok = 0;
    PMPI_Group_free(&gc);
    PMPI_Group_free(&gw);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int i = 0; ok && i < size; i++) {
        if (r[i] == MPI_UNDEFINED) ok = 0;
        h = (h ^ (uint64_t)(unsigned)r[i]) * 1099511628211ull;
    }
    if (!ok) {
        free(r);
        return NULL;
    }
    *hash = h;
    return r;
}

/* The entry of group @wr (taking @wr), created if needed (lock held). */
static tc_group_t *group_find_locked(int *wr, int size, uint64_t hash)
{
    for (tc_group_t *g = g_groups; g; g = g->next)
        if (g->hash == hash && g->size == size &&
            memcmp(g->wrank, wr, sizeof(int) * (size_t)size) == 0) {
            free(wr);
            return g;
        }
    tc_group_t *g = calloc(1, sizeof(*g));
    if (!g) {
        free(wr);
        return NULL;
    }
    g->size = size;
    g->wrank = wr;
    g->hash = hash;
    g->next = g_groups;
    g_groups = g;
    return g;
}

/* Agree with the other ranks of @c's communicator on a kept context to
 * take over (moved into @c: 1), or on @c's new id (0).  Collective. */
static int pool_take(tc_ctx_t *c, MPI_Comm comm)
{
    static _Atomic int finalize_hook;
    int size, level = MPI_THREAD_SINGLE;
    uint64_t hash = 0, mine = 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Query_thread(&level);
    int *wr = level < MPI_THREAD_MULTIPLE ? group_wranks(comm, size, &hash) : NULL;
    if (wr && !atomic_exchange(&finalize_hook, 1)) {
        int kv;
        if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, pool_finalize, &kv, NULL) == MPI_SUCCESS)
            PMPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
    }
    uint64_t offer[2] = { 0, 0 }, all[2]; /* kept here; ids unused here */
    pthread_mutex_lock(&g_pool_lock);
    tc_group_t *g = wr ? group_find_locked(wr, size, hash) : NULL;
    if (g) {
        for (int i = 0; i < TC_POOL_IDS; i++)
            if (g->kept[i] && !(g->reserved >> i & 1)) mine |= 1ull << i;
        g->reserved |= mine;
        g->holds++;
        offer[0] = mine;
        offer[1] = ~(g->used | g->reserved);
    }
    pthread_mutex_unlock(&g_pool_lock);
    int rc = PMPI_Allreduce(offer, all, 2, MPI_UINT64_T, MPI_BAND, comm);
    if (rc != MPI_SUCCESS) all[0] = all[1] = 0;
    pthread_mutex_lock(&g_pool_lock);
    int taken = 0;
    if (g) {
        g->reserved &= ~mine;
        g->holds--;
        int id = -1;
        if (all[0]) {
            id = __builtin_ctzll(all[0]);
            tc_ctx_t *k = g->kept[id];
            g->kept[id] = NULL;
            g_nkept--;
            tc_cattr_t link = c->link;
            uint64_t cold = c->cold_calls;
            *c = *k;
            c->link = link;
            c->cold_calls = cold;
            c->reused = 1;
            free(k);
            taken = 1;
        } else if (all[1]) {
            id = __builtin_ctzll(all[1]);
        }
        if (id >= 0) {
            g->used |= 1ull << id;
            c->group = g;
            c->pool_id = id;
        } else {
            group_release_locked(g, -1); /* goes if nothing else holds it */
        }
    }
    pthread_mutex_unlock(&g_pool_lock);
    return taken;
}

char *tc_ctx_buf(tc_ctx_t *c, int which, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (c->buf_size[which] < bytes) {
        free(c->buf[which]);
        c->buf_size[which] = 0;
        if (!(c->buf[which] = malloc(bytes))) return NULL;
        c->buf_size[which] = bytes;
    }
    return c->buf[which];
}

int tc_ctx_slices(tc_ctx_t *c)
{
    if (c->slice_ready) return MPI_SUCCESS;
    int color = c->map.lrank < c->minlocal ? c->map.lrank : MPI_UNDEFINED, rc;
    /* keyed by node: the ring's neighbours are the next and previous nodes */
    if ((rc = PMPI_Comm_split(c->pcomm, color, c->map.node, &c->slice)) != MPI_SUCCESS) return rc;
    c->slice_ready = 1;
    return MPI_SUCCESS;
}

void tc_req_abandon(MPI_Request *r, int n)
{
    for (int i = 0; i < n; i++) {
        if (r[i] == MPI_REQUEST_NULL) continue;
        PMPI_Cancel(&r[i]); /* a send may complete instead: either way it ends */
        PMPI_Wait(&r[i], MPI_STATUS_IGNORE);
    }
}

int tc_ctx_flat(const tc_ctx_t *c, size_t bytes, size_t flat_max)
{
    return c->map.nnodes > 1 && bytes <= flat_max;
}

tc_ctx_t *tc_ctx_lookup(MPI_Comm comm)
{
    return tc_cattr_get(&g_ctxs, comm); /* no lock: hot path */
}

/* Build cold context @c of @comm (collective over @comm): take over a
 * kept context of the same group, or make one. */
static void ctx_build(tc_ctx_t *c, MPI_Comm comm)
{
    int rank;
    tc_assert(c->cold); /* built once */
    c->cold = 0;
    if (c->cfg->disable) return;
    if (pool_take(c, comm)) {
        if (c->map.rank == 0)
            tc_debug(c->cfg, 1, "communicator of %d processes: a kept context of its group",
                     c->map.size);
        return;
    }
    int size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
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
        /* nodes are numbered by their lowest ranks: consecutive iff non-decreasing */
        c->blocked = 1;
        for (int r = 1; r < c->map.size; r++)
            if (c->map.node_of[r] < c->map.node_of[r - 1]) c->blocked = 0;
        /* the leaders, ranked by node index (llcomm rank == node) */
        PMPI_Comm_split(c->pcomm, c->map.lrank == c->map.leader_lrank ? 0 : MPI_UNDEFINED,
                        c->map.node, &c->llcomm);
        /* the slices, now: a nonblocking call may need them and must not
         * make them (its start is local) */
        if (c->map.nnodes > 1 && tc_ctx_slices(c) != MPI_SUCCESS) c->enabled = 0;
        /* Spinning pays only if the process waited for is running: with
         * more ranks than cores on the host (measured: 4 ranks on 2
         * cores, small Bcasts 2x slower with 200 polls), yield at once. */
        c->spin = tc_config_spin(c->cfg, c->map.host_size);
        c->nap = tc_config_nap(c->cfg, c->map.host_size, c->map.host_size < c->map.size);
        c->copy_chunk = tc_ctx_copy_chunk(tc_topo_l2_bytes(tc_topo_process()));
        c->vx_eager_max = tc_vexchange_eager_max(c);
        if (!all_ok) {
            tc_shm_destroy(c->shm);
            c->shm = NULL;
        }
    }
    if (!c->enabled && rank == 0 &&
        tc_topo_process()) /* (a topology that failed said so already) */
        tc_warn_once("set-up failed on a communicator of %d processes (see the lines above); using "
                     "the native "
                     "MPI collectives there",
                     size);
    if (c->enabled && c->map.rank == 0)
        tc_debug(
            c->cfg, 1,
            "communicator of %d processes: %d node(s), %d on rank 0's node, intra-node %s (%s)%s",
            c->map.size, c->map.nnodes, c->map.lsize,
            c->shm && c->shm->single_copy ? "single copy" : "copy-in/copy-out",
            c->shm ? c->shm->why : "alone on the node",
            c->spin == 0 ? ", oversubscribed: no spinning" : "");
}

size_t tc_ctx_copy_chunk(size_t l2)
{
    size_t c = l2 ? l2 : (size_t)256 << 10;
    return c < ((size_t)64 << 10) ? (size_t)64 << 10 : c > ((size_t)4 << 20) ? (size_t)4 << 20 : c;
}

tc_ctx_t *tc_ctx_get(MPI_Comm comm, size_t bytes, int local)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL) return NULL;
    tc_ctx_t *c = tc_ctx_lookup(comm);
    if (c && !c->cold) return c;
    if (!c) {
        if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return NULL;
        /* no memory: PMPI for this call; this process's count of cold calls
         * then lags the others' by one (a build would mismatch), but a
         * process that cannot allocate 2 KiB fails elsewhere first */
        if (!(c = calloc(1, sizeof(*c)))) return NULL;
        c->pcomm = c->llcomm = c->slice = MPI_COMM_NULL;
        c->map.lcomm = MPI_COMM_NULL;
        c->cfg = tc_config_get();
        c->cold = 1;
        c->pool_id = -1;
        if (tc_cattr_set(&g_ctxs, comm, &c->link) != MPI_SUCCESS) {
            free(c);
            return NULL;
        }
    }
    /* cold: the same decision on every rank (the call count, the size,
     * and whether an earlier call asked for the build) */
    const size_t lazy_min = c->cfg->comm_lazy_min;
    if (!c->build_due && bytes != TC_CTX_NOW && (!lazy_min || bytes < lazy_min) &&
        c->cold_calls < (uint64_t)c->cfg->comm_lazy) {
        c->cold_calls++;
        return c;
    }
    if (local) { /* a nonblocking call: the build waits for a blocking one */
        c->cold_calls++;
        c->build_due = 1;
        return c;
    }
    ctx_build(c, comm);
    return c;
}

int tc_ctx_relays(const tc_ctx_t *c, size_t bytes, int sc)
{
    const tc_nodemap_t *m = &c->map;
    return sc &&
           tc_lead_relays_used(m->policy, m->dom_split, m->lsize, bytes, c->cfg->multileader_min);
}
