/* topo/node -- see node.h. */
#include "node.h"

#include "../base/log.h"
#include "loc.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

/* One rank's row of the map's Allgather:
 * first, local rank, place, nrails, scores, bound, leaf switch */
enum { W = 2 + TC_NLEVELS + 1 + TC_RAIL_MAX + 2 };
enum { W_BOUND = W - 2, W_SWITCH = W - 1 }; /* 1 if bound; leaf switch's index, -1: none */

/* The node communicator: the process's host, cut to its virtual node. */
static void node_comm_split(MPI_Comm comm, const tc_loc_t *loc, tc_nodemap_t *m)
{
    MPI_Comm hcomm = MPI_COMM_NULL;
    int hsize;

    /* Real hosts, then the process's virtual node (topo/loc: fixed per
     * process, so every communicator sees the same nodes). */
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &hcomm);
    PMPI_Comm_size(hcomm, &hsize);
    m->host_size = hsize;
    m->vnode = loc->vnode;
    PMPI_Comm_split(hcomm, m->vnode, m->rank, &m->lcomm);
    PMPI_Comm_free(&hcomm);
    PMPI_Comm_rank(m->lcomm, &m->lrank);
    PMPI_Comm_size(m->lcomm, &m->lsize);
}

/* The map's arrays, every rank's row (@all) and the election's input
 * (@lin); 0 when one of them could not be allocated. */
static int nodemap_alloc(tc_nodemap_t *m, int **all, tc_lead_in_t **lin)
{
    *all = malloc(W * sizeof(int) * (size_t)m->size);
    m->ring = malloc(sizeof(int) * (size_t)m->size);
    m->node_of = malloc(sizeof(int) * (size_t)m->size);
    m->lrank_of = malloc(sizeof(int) * (size_t)m->size);
    m->first_of = malloc(sizeof(int) * (size_t)m->size);
    m->leader_of = malloc(sizeof(int) * (size_t)m->size);
    m->rail_of = malloc(sizeof(int) * TC_RAIL_MAX * (size_t)m->size);
    m->dom_leader = malloc(sizeof(int) * (size_t)m->lsize);
    m->dom_of = malloc(sizeof(int) * (size_t)m->lsize);
    m->lead_in = malloc(sizeof(tc_lead_in_t) * (size_t)m->lsize);
    m->size_of = calloc((size_t)m->size, sizeof(int));
    m->swg_node = malloc(sizeof(int) * 2 * (size_t)m->size); /* then scratch (switch_groups) */
    m->swg_pos = malloc(sizeof(int) * (size_t)m->size);
    m->cpuset = hwloc_bitmap_alloc();
    *lin = malloc(sizeof(tc_lead_in_t) * (size_t)m->size);
    return !(!*all || !m->node_of || !m->lrank_of || !m->first_of || !m->leader_of || !m->rail_of ||
             !m->dom_leader || !m->dom_of || !m->lead_in || !m->size_of || !m->cpuset || !m->ring ||
             !m->swg_node || !m->swg_pos || !*lin);
}

/* This process's row (@sendw) from what @ok says is there: its binding,
 * place and NIC scores; 0 when the binding or the topology is missing. */
static int process_row(tc_nodemap_t *m, const tc_loc_t *loc, int ok, int *sendw)
{
    /* The process's binding (topo/loc), its place, its scores (topo/nic). */
    const tc_topo_t *topo = tc_topo_process();
    const tc_nics_t *nics = tc_nics_process();
    if (!loc->ok || !topo) ok = 0;
    memset(sendw, 0, sizeof(int) * W);
    if (ok) {
        hwloc_bitmap_copy(m->cpuset, loc->cpuset);
        m->bound = loc->bound;
        snprintf(m->binding, sizeof(m->binding), "%s", loc->binding);
        tc_topo_place(topo, m->cpuset, &m->place);
        int nr = nics->n < TC_RAIL_MAX ? nics->n : TC_RAIL_MAX;
        sendw[2 + TC_NLEVELS] = nr;
        for (int r = 0; r < nr; r++)
            sendw[3 + TC_NLEVELS + r] = tc_nic_score(topo, &nics->nic[r], m->cpuset, m->bound);
        m->score = nr ? sendw[3 + TC_NLEVELS] : 0;
        sendw[W_BOUND] = m->bound; /* (the NIC score tells it only where there are NICs) */
    }
    return ok;
}

/* Nodes numbered by their lowest rank: every rank's node and local rank,
 * each node's first rank and size. */
static void nodes_number(tc_nodemap_t *m, const int *all)
{
    m->nnodes = 0;
    for (int r = 0; r < m->size; r++) {
        m->lrank_of[r] = all[W * r + 1];
        if (all[W * r] == r) m->first_of[m->nnodes++] = r; /* ascending rank order */
    }
    for (int r = 0; r < m->size; r++) {
        int first = all[W * r], n = 0;
        while (m->first_of[n] != first) n++;
        m->node_of[r] = n;
        m->size_of[n]++;
    }
    m->node = m->node_of[m->rank];
}

/* The nodes' leaf switches, grouped: switch groups in the order of their
 * lowest node, and, when every group holds as many nodes, each group's
 * nodes in node order (tc_nodemap_t's swg_*). */
static void switch_groups(tc_nodemap_t *m, const int *all)
{
    int *grp = m->swg_pos, *cnt = m->swg_node + m->size; /* first: each node's group; scratch */
    m->nswg = 0;
    for (int n = 0; n < m->nnodes; n++) {
        int sw = all[W * m->first_of[n] + W_SWITCH], g = 0;
        while (g < n && all[W * m->first_of[g] + W_SWITCH] != sw) g++;
        grp[n] = g < n ? grp[g] : m->nswg++; /* a switch seen at an earlier node, or a new one */
    }
    memset(cnt, 0, sizeof(int) * (size_t)m->nswg);
    for (int n = 0; n < m->nnodes; n++) cnt[grp[n]]++;
    const int k = cnt[0];
    m->swg_k = 0;
    for (int g = 0; g < m->nswg; g++)
        if (cnt[g] != k) return; /* groups of different sizes */
    m->swg_k = k;
    memset(cnt, 0, sizeof(int) * (size_t)m->nswg);
    for (int n = 0; n < m->nnodes; n++) m->swg_node[grp[n] * k + cnt[grp[n]]++] = n;
    for (int i = 0; i < m->nnodes; i++) m->swg_pos[m->swg_node[i]] = i;
}

/* The election's policy: TOPOCOLL_LEADERS, auto when unset or unknown. */
static tc_lead_policy_t lead_policy(const tc_config_t *cfg, int rank)
{
    tc_lead_policy_t policy = TC_LEAD_AUTO;
    if (cfg->leaders) {
        int p = tc_lead_policy_parse(cfg->leaders);
        if (p < 0 && rank == 0)
            tc_warn_once("TOPOCOLL_LEADERS=%s unknown (auto|nic|first|numa|package); using auto",
                         cfg->leaders);
        if (p >= 0) policy = (tc_lead_policy_t)p;
    }
    return policy;
}

/* Node @n's input to the election (@lin, in local rank order) from the
 * rows of its ranks; returns how many processes it has. */
static int node_lead_in(const tc_nodemap_t *m, const int *all, int n, tc_lead_in_t *lin)
{
    int k = 0;
    for (int r = 0; r < m->size; r++) {
        if (m->node_of[r] != n) continue; /* ranks ascending = local ranks ascending */
        const int *a = &all[W * r];
        tc_lead_in_t *li = &lin[k++];
        memset(li, 0, sizeof(*li));
        li->nrails = a[2 + TC_NLEVELS];
        for (int q = 0; q < li->nrails; q++) li->score[q] = a[3 + TC_NLEVELS + q];
        int bound = a[W_BOUND]; /* an unbound process belongs to no package or NUMA domain */
        li->pkg = bound ? a[2 + TC_LVL_PACKAGE] : -1;
        li->numa = bound ? a[2 + TC_LVL_NUMA] : -1;
    }
    return k;
}

/* Every node's leaders (one per rail) and the rails they all have. */
static void leaders_elect(tc_nodemap_t *m, const tc_config_t *cfg, const int *all,
                          tc_lead_in_t *lin)
{
    /* The election (topo/nic), node by node, on every process alike. */
    m->policy = lead_policy(cfg, m->rank);
    m->nrails = TC_RAIL_MAX;
    for (int n = 0; n < m->nnodes; n++) {
        int k = node_lead_in(m, all, n, lin);
        tc_lead_out_t out;
        tc_lead_elect(m->policy, lin, k, &out, NULL, NULL);
        if (n == m->node) memcpy(m->lead_in, lin, sizeof(tc_lead_in_t) * (size_t)k);
        /* local rank -> communicator rank */
        for (int q = 0; q < TC_RAIL_MAX; q++) {
            int want = out.rail[q], seen = 0;
            for (int r = 0; r < m->size; r++)
                if (m->node_of[r] == n && seen++ == want) m->rail_of[n * TC_RAIL_MAX + q] = r;
        }
        m->leader_of[n] = m->rail_of[n * TC_RAIL_MAX];
        if (n == m->node) m->leader_lrank = out.leader;
        if (out.nrails < m->nrails) m->nrails = out.nrails;
    }
}

/* This node's domain (package or NUMA node) leaders, and whether they pay. */
static void domain_leaders_elect(tc_nodemap_t *m)
{
    /* Per-domain leaders pay when a domain other than the leader's has
     * two processes or more: they read once across the link instead of
     * each reading the leader's buffer. */
    tc_lead_out_t mine_out;
    tc_lead_elect(m->policy, m->lead_in, m->lsize, &mine_out, m->dom_leader, m->dom_of);
    m->dom_split = tc_lead_dom_split(m->lsize, &mine_out, m->dom_leader);
}

/* The ranks in physical order, and this rank's position among them. */
static void ring_order(tc_nodemap_t *m, const int *all)
{
    /* The physical ring (HierKNEM 3.4): by node, then package, NUMA node,
     * cache, core, PU; rank breaks ties (unbound processes).  Insertion
     * sort: communicators are small enough, and it is stable. */
    for (int r = 0; r < m->size; r++) {
        int j = r;
        while (j > 0) {
            int a = m->ring[j - 1], cmp = m->node_of[a] - m->node_of[r];
            for (int l = 0; l < TC_NLEVELS && cmp == 0; l++)
                cmp = all[W * a + 2 + l] - all[W * r + 2 + l];
            if (cmp <= 0) break;
            m->ring[j] = a;
            j--;
        }
        m->ring[j] = r;
    }
    for (int i = 0; i < m->size; i++)
        if (m->ring[i] == m->rank) m->ring_pos = i;
}

int tc_nodemap_build(MPI_Comm comm, const tc_config_t *cfg, tc_nodemap_t *m)
{
    int all_ok = 0, sendw[W], *all = NULL;
    tc_lead_in_t *lin = NULL;

    memset(m, 0, sizeof(*m));
    m->lcomm = MPI_COMM_NULL;
    PMPI_Comm_rank(comm, &m->rank);
    PMPI_Comm_size(comm, &m->size);

    /* virtual nodes and binding: topo/loc reads the configuration */
    const tc_loc_t *loc = tc_loc_process();
    node_comm_split(comm, loc, m);

    /* Every rank's node (its lowest rank) and local rank. */
    int mine[2] = { m->rank, m->lrank };
    PMPI_Bcast(&mine[0], 1, MPI_INT, 0, m->lcomm); /* local rank 0 = the node's lowest rank */
    int ok = nodemap_alloc(m, &all, &lin);
    ok = process_row(m, loc, ok, sendw);
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        free(all);
        free(lin);
        tc_nodemap_free(m);
        return -1;
    }
    sendw[0] = mine[0];
    sendw[1] = mine[1];
    for (int l = 0; l < TC_NLEVELS; l++) sendw[2 + l] = m->place.idx[l];
    sendw[W_SWITCH] = loc->nswitch > 0 ? loc->sw_index[loc->nswitch - 1] : -1;
    PMPI_Allgather(sendw, W, MPI_INT, all, W, MPI_INT, comm);
    nodes_number(m, all);
    switch_groups(m, all);
    leaders_elect(m, cfg, all, lin);
    domain_leaders_elect(m);
    ring_order(m, all);
    free(all);
    free(lin);
    return 0;
}

void tc_nodemap_free(tc_nodemap_t *m)
{
    if (m->lcomm != MPI_COMM_NULL) PMPI_Comm_free(&m->lcomm);
    free(m->node_of);
    free(m->lrank_of);
    free(m->leader_of);
    free(m->first_of);
    free(m->rail_of);
    free(m->dom_leader);
    free(m->dom_of);
    free(m->lead_in);
    free(m->size_of);
    free(m->swg_node);
    free(m->swg_pos);
    free(m->ring);
    if (m->cpuset) hwloc_bitmap_free(m->cpuset);
    memset(m, 0, sizeof(*m));
    m->lcomm = MPI_COMM_NULL;
}
