/* progress/progress -- progress threads on communication cores and their
 * placement (progress-threads paper, sections 4.2 and 5); see progress.h. */
#define _GNU_SOURCE 1 /* pthread_setname_np */
#include "progress.h"

#include "../nbc/nbc.h"
#include "../coll/model.h"

#include "../base/log.h"
#include "../topo/loc.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

const char *tc_place_name(tc_place_policy_t policy)
{
    switch (policy) {
    case TC_PLACE_BIND: return "bind";
    case TC_PLACE_NUMA: return "numa";
    case TC_PLACE_ODDEVEN: return "odd-even";
    }
    return "?";
}

/* The @k-th core (logical order) inside @set. */
static hwloc_obj_t core_in(hwloc_topology_t t, hwloc_const_cpuset_t set, int k)
{
    return hwloc_get_obj_inside_cpuset_by_type(t, set, HWLOC_OBJ_CORE, (unsigned)k);
}

hwloc_obj_t tc_progress_place(hwloc_topology_t t, int bound, hwloc_const_cpuset_t bind, int hrank,
                              int hsize, int comm_cores, tc_place_policy_t policy)
{
    int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    if (ncores <= 0) return NULL;
    if (comm_cores > ncores) comm_cores = ncores; /* (tc_progress_start said so) */
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t);
    hwloc_obj_t mine = NULL;
    if (bound && bind)
        mine = hwloc_get_next_obj_covering_cpuset_by_type(t, bind, HWLOC_OBJ_CORE, NULL);
    if (bound && bind && !mine)
        mine = hwloc_get_obj_inside_cpuset_by_type(t, bind, HWLOC_OBJ_CORE, 0);
    if (!mine) mine = core_in(t, all, hrank % ncores);
    (void)hsize;
    switch (policy) {
    case TC_PLACE_BIND: return mine;
    case TC_PLACE_NUMA: {
        int ndom = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
        hwloc_const_cpuset_t dom = all;
        for (int d = 0; d < ndom; d++) {
            hwloc_obj_t nn = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)d);
            if (nn->cpuset && hwloc_bitmap_isincluded(mine->cpuset, nn->cpuset)) {
                dom = nn->cpuset;
                break;
            }
        }
        if (ndom < 1) ndom = 1;
        int ncd = hwloc_get_nbobjs_inside_cpuset_by_type(t, dom, HWLOC_OBJ_CORE);
        int per = comm_cores / ndom > 0 ? comm_cores / ndom : (comm_cores > 0);
        int m = 0;
        while (m < ncd && core_in(t, dom, m) != mine) m++;
        int pos = tc_place_numa(ncd, ncd - per, m);
        return pos >= 0 && pos < ncd ? core_in(t, dom, pos) : mine;
    }
    case TC_PLACE_ODDEVEN: {
        int pos = tc_place_oddeven(ncores, ncores - comm_cores, hrank);
        return pos >= 0 && pos < ncores ? core_in(t, all, pos) : mine;
    }
    }
    return mine;
}

/* ---- The thread ---------------------------------------------------------------- */

static struct {
    pthread_mutex_t lock; /* guards start/stop */
    pthread_t th;
    int running;
    _Atomic int stop;
    int core;  /* OS index of the core it is bound to, -1 */
    int yield; /* 1: shares its core with the application (bind) */
    hwloc_topology_t topo;
    hwloc_cpuset_t set;
    _Atomic int comm_cores; /* TOPOCOLL_COMM_CORES within the host's cores */
} g_pt = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, -1, 0, NULL, NULL, -1 };

/* TOPOCOLL_COMM_CORES, clamped to the @ncores cores of this host (one
 * warning per process when it asks for more). */
static int comm_cores_within(const tc_config_t *cfg, int ncores)
{
    int cc = cfg->comm_cores;
    if (ncores > 0 && cc > ncores) {
        tc_warn("TOPOCOLL_COMM_CORES=%d: this host has %d core(s); using %d", cc, ncores, ncores);
        cc = ncores;
    }
    atomic_store_explicit(&g_pt.comm_cores, cc, memory_order_relaxed);
    return cc;
}

int tc_progress_comm_cores(void)
{
    int cc = atomic_load_explicit(&g_pt.comm_cores, memory_order_relaxed);
    return cc >= 0 ? cc : tc_config_get()->comm_cores;
}

static void *progress_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "tc-progress");
    tc_nb_mark_progress_thread();
    if (g_pt.set && hwloc_set_cpubind(g_pt.topo, g_pt.set, HWLOC_CPUBIND_THREAD) != 0)
        tc_warn("progress thread: cannot bind to core %d; running unbound", g_pt.core);
    while (!atomic_load_explicit(&g_pt.stop, memory_order_acquire)) {
        if (tc_nb_outstanding() == 0) {
            tc_nb_wait_for_work(&g_pt.stop);
            continue;
        }
        tc_nb_sweep_try();
        /* On a communication core the thread polls (the core is its own);
         * sharing the application's core it gives the core back after
         * each pass. */
        if (g_pt.yield)
            sched_yield();
        else
            tc_cpu_relax();
    }
    return NULL;
}

int tc_progress_thread_level(int required)
{
    return tc_config_get()->comm_cores > 0 ? MPI_THREAD_MULTIPLE : required;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first thing: the thread
 * stops there even when the application (native API) did not call
 * topocoll_progress_fini. */
static int self_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)attr;
    (void)extra;
    tc_progress_stop();
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

/* Where every process of the host may run (the host's bindings,
 * exchanged: collective over MPI_COMM_WORLD), into @used; @mine, this
 * process's binding, is the whole machine when it is unbound. */
static void host_cpus(hwloc_cpuset_t mine, int bound, hwloc_cpuset_t used)
{
    enum { W = 256 };
    char me[W] = "", *all = NULL;
    MPI_Comm host;
    int hs = 1;
    hwloc_cpuset_t other = hwloc_bitmap_alloc();
    if (!bound) hwloc_bitmap_copy(mine, hwloc_topology_get_topology_cpuset(g_pt.topo));
    if (hwloc_bitmap_list_snprintf(me, W, mine) >= W)
        snprintf(me, W, "0-%d", 1 << 20); /* too long: all */
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
        MPI_SUCCESS) {
        PMPI_Comm_size(host, &hs);
        if ((all = malloc((size_t)hs * W)) &&
            PMPI_Allgather(me, W, MPI_CHAR, all, W, MPI_CHAR, host) == MPI_SUCCESS)
            for (int i = 0; i < hs; i++)
                if (hwloc_bitmap_list_sscanf(other, all + (size_t)i * W) == 0)
                    hwloc_bitmap_or(used, used, other);
        PMPI_Comm_free(&host);
    }
    free(all);
    hwloc_bitmap_free(other);
}

int tc_progress_start(int provided)
{
    const tc_config_t *cfg = tc_config_get();
    if (cfg->comm_cores <= 0 || cfg->disable) return 0;
    pthread_mutex_lock(&g_pt.lock);
    if (g_pt.running) {
        pthread_mutex_unlock(&g_pt.lock);
        return 1;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        pthread_mutex_unlock(&g_pt.lock);
        tc_warn("TOPOCOLL_COMM_CORES=%d needs MPI_THREAD_MULTIPLE, which the MPI library did not "
                "provide; "
                "progress in the application's calls only",
                cfg->comm_cores);
        return 0;
    }
    /* The real host's cores (an emulated XML topology has nothing to bind to). */
    g_pt.core = -1;
    const tc_loc_t *l = tc_loc_process();
    /* The thread polls only on a core of its own; it yields after each
     * pass under bind, or when a process of the host may run on its core
     * (the host's bindings are exchanged: an unbound process may run
     * anywhere). */
    g_pt.yield = 1;
    if (hwloc_topology_init(&g_pt.topo) == 0 && hwloc_topology_load(g_pt.topo) == 0) {
        hwloc_cpuset_t mine = hwloc_bitmap_alloc(), used = hwloc_bitmap_alloc();
        int bound = hwloc_get_cpubind(g_pt.topo, mine, HWLOC_CPUBIND_PROCESS) == 0 &&
                    !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(g_pt.topo), mine);
        int cc = comm_cores_within(cfg, hwloc_get_nbobjs_by_type(g_pt.topo, HWLOC_OBJ_CORE));
        hwloc_obj_t core = tc_progress_place(g_pt.topo, bound, mine, l ? l->hrank : 0,
                                             l ? l->hsize : 1, cc, cfg->placement);
        host_cpus(mine, bound, used);
        if (core) {
            g_pt.set = hwloc_bitmap_dup(core->cpuset);
            g_pt.core = (int)core->os_index;
            g_pt.yield = cfg->placement == TC_PLACE_BIND || hwloc_bitmap_iszero(used) ||
                         hwloc_bitmap_intersects(core->cpuset, used);
        }
        hwloc_bitmap_free(mine);
        hwloc_bitmap_free(used);
    }
    atomic_store(&g_pt.stop, 0);
    if (pthread_create(&g_pt.th, NULL, progress_main, NULL) != 0) {
        pthread_mutex_unlock(&g_pt.lock);
        tc_warn("cannot create the progress thread; progress in the application's calls only");
        return 0;
    }
    g_pt.running = 1;
    tc_nb_threads_attach(g_pt.yield);
    pthread_mutex_unlock(&g_pt.lock);
    int kv;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &kv, NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
    tc_debug(cfg, 1, "progress thread on core %d (placement %s, %d communication core(s))",
             g_pt.core, tc_place_name(cfg->placement), tc_progress_comm_cores());
    return 1;
}

void tc_progress_stop(void)
{
    pthread_mutex_lock(&g_pt.lock);
    if (g_pt.running) {
        atomic_store_explicit(&g_pt.stop, 1, memory_order_release);
        tc_nb_wake();
        pthread_join(g_pt.th, NULL);
        g_pt.running = 0;
        tc_nb_threads_detach();
    }
    if (g_pt.set) hwloc_bitmap_free(g_pt.set);
    if (g_pt.topo) hwloc_topology_destroy(g_pt.topo);
    g_pt.set = NULL;
    g_pt.topo = NULL;
    g_pt.core = -1;
    pthread_mutex_unlock(&g_pt.lock);
}

int tc_progress_core(void) { return g_pt.running ? g_pt.core : -1; }
