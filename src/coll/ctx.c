/* coll/ctx -- see ctx.h. */
#include "ctx.h"

#include "tune.h"
#include "../base/log.h"

#include <stdlib.h>
#include <string.h>

static void ctx_destroy(tc_cattr_t *link)
{
    tc_ctx_t *c = (tc_ctx_t *)link;
    if (c->nb_drain) c->nb_drain(c);   /* outstanding nonblocking operations complete first */
    tc_tune_report(c);
    tc_shm_destroy(c->shm);
    free(c->scratch);
    for (int i = 0; i < TC_CTX_BUFS; i++) free(c->buf[i]);
    tc_ctx_free_types(c);
    tc_nodemap_free(&c->map);
    if (c->llcomm != MPI_COMM_NULL) PMPI_Comm_free(&c->llcomm);
    if (c->slice != MPI_COMM_NULL) PMPI_Comm_free(&c->slice);
    if (c->pcomm != MPI_COMM_NULL) PMPI_Comm_free(&c->pcomm);
    free(c);
}

/* The contexts: released with their communicator, or at MPI_Finalize. */
static tc_cattr_class_t g_ctxs = TC_CATTR_CLASS_INIT(ctx_destroy);

void tc_ctx_free_types(tc_ctx_t *c)
{
    for (int n = 0; c->ag_types && n < c->map.nnodes; n++)
        if (c->ag_types[n] != MPI_DATATYPE_NULL) PMPI_Type_free(&c->ag_types[n]);
    free(c->ag_types);
    c->ag_types = NULL;
    c->ag_block = 0;
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
        PMPI_Cancel(&r[i]);   /* a send may complete instead: either way it ends */
        PMPI_Wait(&r[i], MPI_STATUS_IGNORE);
    }
}

int tc_ctx_chain(const tc_ctx_t *c, size_t bytes)
{
    return c->map.nnodes > 2 && bytes >= c->cfg->chain_min;
}

int tc_ctx_flat(const tc_ctx_t *c, size_t bytes, size_t flat_max)
{
    return c->map.nnodes > 1 && bytes <= flat_max;
}

tc_ctx_t *tc_ctx_lookup(MPI_Comm comm)
{
    return tc_cattr_get(&g_ctxs, comm);   /* no lock: hot path */
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
    c->pcomm = c->llcomm = c->slice = MPI_COMM_NULL;
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
            /* the leaders, ranked by node index (llcomm rank == node) */
            PMPI_Comm_split(c->pcomm, c->map.lrank == c->map.leader_lrank ? 0 : MPI_UNDEFINED, c->map.node,
                            &c->llcomm);
            /* Spinning pays only if the process waited for is running: with
             * more ranks than cores on the host (measured: 4 ranks on 2
             * cores, small Bcasts 2x slower with 200 polls), yield at once. */
            c->spin = tc_config_spin(c->cfg, c->map.host_size);
            c->nap = tc_config_nap(c->cfg, c->map.host_size, c->map.host_size < c->map.size);
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
    if (tc_cattr_set(&g_ctxs, comm, &c->link) != MPI_SUCCESS) {
        ctx_destroy(&c->link);
        return NULL;
    }
    return c;
}

int tc_ctx_relays(const tc_ctx_t *c, size_t bytes, int sc)
{
    const tc_nodemap_t *m = &c->map;
    return sc && tc_lead_relays_used(m->policy, m->dom_split, m->lsize, bytes, c->cfg->multileader_min);
}
