/* topo/node -- see node.h. */
#include "node.h"

#include "../base/log.h"
#include "loc.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

int tc_nodemap_build(MPI_Comm comm, const tc_config_t *cfg, tc_nodemap_t *m)
{
    MPI_Comm hcomm = MPI_COMM_NULL;
    (void)cfg;   /* virtual nodes and binding: topo/loc reads the configuration */
    int hsize, ok = 1, all_ok = 0;

    memset(m, 0, sizeof(*m));
    m->lcomm = MPI_COMM_NULL;
    PMPI_Comm_rank(comm, &m->rank);
    PMPI_Comm_size(comm, &m->size);

    /* Real hosts, then the process's virtual node (topo/loc: fixed per
     * process, so every communicator sees the same nodes). */
    const tc_loc_t *loc = tc_loc_process();
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &hcomm);
    PMPI_Comm_size(hcomm, &hsize);
    m->host_size = hsize;
    m->vnode = loc->vnode;
    PMPI_Comm_split(hcomm, m->vnode, m->rank, &m->lcomm);
    PMPI_Comm_free(&hcomm);
    PMPI_Comm_rank(m->lcomm, &m->lrank);
    PMPI_Comm_size(m->lcomm, &m->lsize);

    /* Every rank's node leader and local rank. */
    int mine[2] = { m->rank, m->lrank };
    PMPI_Bcast(&mine[0], 1, MPI_INT, 0, m->lcomm);  /* leader = local rank 0 = lowest rank */
    enum { W = 2 + TC_NLEVELS };   /* leader, local rank, place */
    int *all = malloc(W * sizeof(int) * (size_t)m->size);
    m->ring = malloc(sizeof(int) * (size_t)m->size);
    m->node_of = malloc(sizeof(int) * (size_t)m->size);
    m->lrank_of = malloc(sizeof(int) * (size_t)m->size);
    m->leader_of = malloc(sizeof(int) * (size_t)m->size);
    m->size_of = calloc((size_t)m->size, sizeof(int));
    m->cpuset = hwloc_bitmap_alloc();
    if (!all || !m->node_of || !m->lrank_of || !m->leader_of || !m->size_of || !m->cpuset || !m->ring) ok = 0;

    /* The process's binding (topo/loc) and its place. */
    const tc_topo_t *topo = tc_topo_process();
    if (!loc->ok || !topo) ok = 0;
    if (ok) {
        hwloc_bitmap_copy(m->cpuset, loc->cpuset);
        m->bound = loc->bound;
        snprintf(m->binding, sizeof(m->binding), "%s", loc->binding);
        tc_topo_place(topo, m->cpuset, &m->place);
    }
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        free(all);
        tc_nodemap_free(m);
        return -1;
    }
    int sendw[W];
    sendw[0] = mine[0];
    sendw[1] = mine[1];
    for (int l = 0; l < TC_NLEVELS; l++) sendw[2 + l] = m->place.idx[l];
    PMPI_Allgather(sendw, W, MPI_INT, all, W, MPI_INT, comm);
    m->nnodes = 0;
    for (int r = 0; r < m->size; r++) {
        m->lrank_of[r] = all[W * r + 1];
        if (all[W * r] == r) m->leader_of[m->nnodes++] = r;  /* ascending rank order */
    }
    for (int r = 0; r < m->size; r++) {
        int lead = all[W * r], n = 0;
        while (m->leader_of[n] != lead) n++;
        m->node_of[r] = n;
        m->size_of[n]++;
    }
    m->node = m->node_of[m->rank];
    /* The physical ring (HierKNEM 3.4): by node, then package, NUMA node,
     * cache, core, PU; rank breaks ties (unbound processes).  Insertion
     * sort: communicators are small enough, and it is stable. */
    for (int r = 0; r < m->size; r++) {
        int j = r;
        while (j > 0) {
            int a = m->ring[j - 1], cmp = m->node_of[a] - m->node_of[r];
            for (int l = 0; l < TC_NLEVELS && cmp == 0; l++) cmp = all[W * a + 2 + l] - all[W * r + 2 + l];
            if (cmp <= 0) break;
            m->ring[j] = a;
            j--;
        }
        m->ring[j] = r;
    }
    for (int i = 0; i < m->size; i++) if (m->ring[i] == m->rank) m->ring_pos = i;
    free(all);
    return 0;
}

void tc_nodemap_free(tc_nodemap_t *m)
{
    if (m->lcomm != MPI_COMM_NULL) PMPI_Comm_free(&m->lcomm);
    free(m->node_of);
    free(m->lrank_of);
    free(m->leader_of);
    free(m->size_of);
    free(m->ring);
    if (m->cpuset) hwloc_bitmap_free(m->cpuset);
    memset(m, 0, sizeof(*m));
    m->lcomm = MPI_COMM_NULL;
}
