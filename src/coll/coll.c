/* coll/coll -- see coll.h: the operations table. */
#include "coll.h"

static tc_status_t bcast_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    tc_status_t rc = tc_bcast_init(&st->bcast, c, a->out, a->n, a->root, a->alt);
    st->bcast.keep = a->keep;
    return rc;
}
static tc_status_t bcast_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_bcast_work(&st->bcast);
}
static void bcast_fini(tc_coll_state_t *st) { tc_bcast_fini(&st->bcast); }
static tc_status_t bcast_drain(tc_coll_state_t *st) { return tc_bcast_drain(&st->bcast); }

static tc_status_t barrier_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_barrier_init(&st->barrier, c, a->blocking);
}
static tc_status_t barrier_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_barrier_work(&st->barrier);
}
static void barrier_fini(tc_coll_state_t *st) { (void)st; }

static tc_status_t reduce_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    tc_status_t rc =
        tc_reduce_init(&st->reduce, c, a->in, a->out, a->n, a->t, a->root, a->blocking, a->alt);
    st->reduce.keep = a->keep;
    return rc;
}
static tc_status_t reduce_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_reduce_work(&st->reduce);
}
static void reduce_fini(tc_coll_state_t *st) { tc_reduce_fini(&st->reduce); }

static tc_status_t allreduce_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    tc_status_t rc = tc_allreduce_init(&st->allreduce, c, a->in, a->out, a->n, a->t);
    st->allreduce.keep = a->keep;
    return rc;
}
static tc_status_t allreduce_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_allreduce_work(&st->allreduce);
}
static void allreduce_fini(tc_coll_state_t *st) { tc_allreduce_fini(&st->allreduce); }

static tc_status_t allgather_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    tc_status_t rc = tc_allgather_init(&st->allgather, c, a->in, a->out, a->n);
    st->allgather.keep = a->keep;
    return rc;
}
static tc_status_t allgather_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_allgather_work(&st->allgather);
}
static void allgather_fini(tc_coll_state_t *st) { tc_allgather_fini(&st->allgather); }

static tc_status_t scan_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_scan_init(&st->scan, c, a->in, a->out, a->n, a->t, 0);
}
static tc_status_t exscan_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_scan_init(&st->scan, c, a->in, a->out, a->n, a->t, 1);
}
static tc_status_t scan_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_scan_work(&st->scan);
}
static void scan_fini(tc_coll_state_t *st) { tc_scan_fini(&st->scan); }

static tc_status_t tree_bcast_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_tree_init(&st->tree, c, TC_TREE_BCAST, NULL, a->out, 0, NULL, a->n, a->root,
                        a->split);
}
static tc_status_t tree_reduce_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_tree_init(&st->tree, c, TC_TREE_REDUCE, a->in, a->out, a->n, a->t, 0, a->root,
                        a->split);
}
static tc_status_t tree_work(tc_coll_state_t *st, int exec)
{
    return tc_tree_work(&st->tree, exec);
}
static void tree_fini(tc_coll_state_t *st) { tc_tree_fini(&st->tree); }
static int tree_leaves_done(const tc_coll_state_t *st) { return tc_tree_leaves_done(&st->tree); }

static tc_status_t tree_allreduce_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_tree_allreduce_init(&st->tree_allreduce, c, a->in, a->out, a->n, a->t, a->split);
}
static tc_status_t tree_allreduce_work(tc_coll_state_t *st, int exec)
{
    return tc_tree_allreduce_work(&st->tree_allreduce, exec);
}
static void tree_allreduce_fini(tc_coll_state_t *st)
{
    tc_tree_allreduce_fini(&st->tree_allreduce);
}
static int tree_allreduce_leaves_done(const tc_coll_state_t *st)
{
    return tc_tree_allreduce_leaves_done(&st->tree_allreduce);
}

static tc_status_t exchange_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a,
                                 int kind)
{
    tc_status_t rc = tc_exchange_init(&st->exchange, c, kind, a->in, a->out, a->n, a->root);
    st->exchange.keep = a->keep;
    return rc;
}
static tc_status_t gather_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return exchange_init(st, c, a, TC_XC_GATHER);
}
static tc_status_t scatter_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return exchange_init(st, c, a, TC_XC_SCATTER);
}
static tc_status_t alltoall_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return exchange_init(st, c, a, TC_XC_ALLTOALL);
}
static tc_status_t exchange_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_exchange_work(&st->exchange);
}
static void exchange_fini(tc_coll_state_t *st) { tc_exchange_fini(&st->exchange); }
static tc_status_t exchange_drain(tc_coll_state_t *st) { return tc_exchange_drain(&st->exchange); }

/* An irregular exchange of @kind (TC_VX_*) whose TOPOCOLL_<COLL>_ALG is
 * collective @ci's (TC_CI_*). */
static tc_status_t vx_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a, int kind,
                           int ci)
{
    tc_status_t rc = tc_vexchange_init(&st->vexchange, c, kind, a->in, a->out, a->n, a->vlen,
                                       a->voff, a->root, ci);
    if (kind == TC_VX_ALLTOALLV) tc_vexchange_send_table(&st->vexchange, a->vstab, a->vspan);
    st->vexchange.keep = a->keep;
    return rc;
}
static tc_status_t vexchange_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a,
                                  int kind)
{
    static const int ci[] = { TC_CI_GATHERV, TC_CI_SCATTERV, TC_CI_ALLGATHERV, TC_CI_ALLTOALLV };
    return vx_init(st, c, a, kind, ci[kind]);
}
static tc_status_t gatherv_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return vexchange_init(st, c, a, TC_VX_GATHERV);
}
static tc_status_t scatterv_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return vexchange_init(st, c, a, TC_VX_SCATTERV);
}
/* Gather, Scatter on several nodes: Gatherv's and Scatterv's collectors
 * (coll/vroot) over the caller's table of equal blocks. */
static tc_status_t gather_nodes_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return vx_init(st, c, a, TC_VX_GATHERV, TC_CI_GATHER);
}
static tc_status_t scatter_nodes_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return vx_init(st, c, a, TC_VX_SCATTERV, TC_CI_SCATTER);
}
static tc_status_t allgatherv_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return vexchange_init(st, c, a, TC_VX_ALLGATHERV);
}
static tc_status_t alltoallv_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return vexchange_init(st, c, a, TC_VX_ALLTOALLV);
}
static tc_status_t vexchange_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_vexchange_work(&st->vexchange);
}
static void vexchange_fini(tc_coll_state_t *st) { tc_vexchange_fini(&st->vexchange); }
static tc_status_t vexchange_drain(tc_coll_state_t *st)
{
    return tc_vexchange_drain(&st->vexchange);
}

static tc_status_t redscat_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    tc_status_t rc = tc_redscat_init(&st->redscat, c, a->in, a->out, a->t, a->counts, a->n);
    st->redscat.keep = a->keep;
    return rc;
}
static tc_status_t redscat_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_redscat_work(&st->redscat);
}
static void redscat_fini(tc_coll_state_t *st) { tc_redscat_fini(&st->redscat); }

static tc_status_t hscan_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_hscan_init(&st->hscan, c, a->in, a->out, a->n, a->t, 0, a->blocking);
}
static tc_status_t hexscan_init(tc_coll_state_t *st, tc_ctx_t *c, const tc_coll_args_t *a)
{
    return tc_hscan_init(&st->hscan, c, a->in, a->out, a->n, a->t, 1, a->blocking);
}
static tc_status_t hscan_work(tc_coll_state_t *st, int exec)
{
    (void)exec;
    return tc_hscan_work(&st->hscan);
}
static void hscan_fini(tc_coll_state_t *st) { tc_hscan_fini(&st->hscan); }

static const tc_coll_ops_t g_table[TC_COLL_KINDS] = {
    [TC_COLL_BCAST] = { "MPI_Bcast", bcast_init, bcast_work, bcast_fini, NULL, TC_STAT_BCAST,
                        bcast_drain },
    [TC_COLL_BARRIER] = { "MPI_Barrier", barrier_init, barrier_work, barrier_fini, NULL,
                          TC_STAT_BARRIER },
    [TC_COLL_REDUCE] = { "MPI_Reduce", reduce_init, reduce_work, reduce_fini, NULL,
                         TC_STAT_REDUCE },
    [TC_COLL_ALLREDUCE] = { "MPI_Allreduce", allreduce_init, allreduce_work, allreduce_fini, NULL,
                            TC_STAT_ALLREDUCE },
    [TC_COLL_ALLGATHER] = { "MPI_Allgather", allgather_init, allgather_work, allgather_fini, NULL,
                            TC_STAT_ALLGATHER },
    [TC_COLL_SCAN] = { "MPI_Scan", scan_init, scan_work, scan_fini, NULL, TC_STAT_SCAN },
    [TC_COLL_TREE_BCAST] = { "MPI_Bcast", tree_bcast_init, tree_work, tree_fini, NULL,
                             TC_STAT_BCAST },
    [TC_COLL_TREE_REDUCE] = { "MPI_Reduce", tree_reduce_init, tree_work, tree_fini,
                              tree_leaves_done, TC_STAT_REDUCE },
    [TC_COLL_TREE_ALLREDUCE] = { "MPI_Allreduce", tree_allreduce_init, tree_allreduce_work,
                                 tree_allreduce_fini, tree_allreduce_leaves_done,
                                 TC_STAT_ALLREDUCE },
    [TC_COLL_GATHER] = { "MPI_Gather", gather_init, exchange_work, exchange_fini, NULL,
                         TC_STAT_GATHER, exchange_drain },
    [TC_COLL_SCATTER] = { "MPI_Scatter", scatter_init, exchange_work, exchange_fini, NULL,
                          TC_STAT_SCATTER, exchange_drain },
    [TC_COLL_ALLTOALL] = { "MPI_Alltoall", alltoall_init, exchange_work, exchange_fini, NULL,
                           TC_STAT_ALLTOALL, exchange_drain },
    [TC_COLL_EXSCAN] = { "MPI_Exscan", exscan_init, scan_work, scan_fini, NULL, TC_STAT_EXSCAN },
    [TC_COLL_GATHERV] = { "MPI_Gatherv", gatherv_init, vexchange_work, vexchange_fini, NULL,
                          TC_STAT_GATHERV, vexchange_drain },
    [TC_COLL_SCATTERV] = { "MPI_Scatterv", scatterv_init, vexchange_work, vexchange_fini, NULL,
                           TC_STAT_SCATTERV, vexchange_drain },
    [TC_COLL_ALLGATHERV] = { "MPI_Allgatherv", allgatherv_init, vexchange_work, vexchange_fini,
                             NULL, TC_STAT_ALLGATHERV, vexchange_drain },
    [TC_COLL_ALLTOALLV] = { "MPI_Alltoallv", alltoallv_init, vexchange_work, vexchange_fini, NULL,
                            TC_STAT_ALLTOALLV, vexchange_drain },
    [TC_COLL_REDUCE_SCATTER_BLOCK] = { "MPI_Reduce_scatter_block", redscat_init, redscat_work,
                                       redscat_fini, NULL, TC_STAT_REDUCE_SCATTER_BLOCK },
    [TC_COLL_HSCAN] = { "MPI_Scan", hscan_init, hscan_work, hscan_fini, NULL, TC_STAT_SCAN },
    [TC_COLL_HEXSCAN] = { "MPI_Exscan", hexscan_init, hscan_work, hscan_fini, NULL,
                          TC_STAT_EXSCAN },
    [TC_COLL_REDUCE_SCATTER] = { "MPI_Reduce_scatter", redscat_init, redscat_work, redscat_fini,
                                 NULL, TC_STAT_REDUCE_SCATTER },
    [TC_COLL_ALLTOALLW] = { "MPI_Alltoallw", alltoallv_init, vexchange_work, vexchange_fini, NULL,
                            TC_STAT_ALLTOALLW, vexchange_drain },
    [TC_COLL_GATHER_NODES] = { "MPI_Gather", gather_nodes_init, vexchange_work, vexchange_fini,
                               NULL, TC_STAT_GATHER, vexchange_drain },
    [TC_COLL_SCATTER_NODES] = { "MPI_Scatter", scatter_nodes_init, vexchange_work, vexchange_fini,
                                NULL, TC_STAT_SCATTER, vexchange_drain },
};

const tc_coll_ops_t *tc_coll_ops(int kind) { return &g_table[kind]; }
