/*
 * progress/progress -- progress threads on communication cores and their
 * placement (progress-threads paper, sections 4.2 and 5, equations 1 and
 * 2).  With TOPOCOLL_COMM_CORES > 0 and MPI_THREAD_MULTIPLE, one thread per
 * process, bound by the placement policy (bind | numa | odd-even,
 * TOPOCOLL_PROGRESS_PLACEMENT), sweeps the nonblocking engine's queues
 * while the application computes.  It tells the engine it runs
 * (tc_nb_threads_attach): the engine never calls this layer.
 *
 * Owns: the progress thread.  May call: nbc/, coll/model, topo/, base/,
 * hwloc, PMPI.
 */
#ifndef TC_PROGRESS_PROGRESS_H
#define TC_PROGRESS_PROGRESS_H

#include "../base/config.h"

#include <hwloc.h>

/**
 * The core a progress thread goes to (the paper's placements; hwloc
 * topology @t, possibly an XML): @bound/@bind the process's binding (when
 * unbound, processes are assumed placed in block order, rank @hrank on
 * the @hrank-th core); @hsize processes on the host; @comm_cores free
 * cores per node.
 *  - TC_PLACE_BIND: the process's own core;
 *  - TC_PLACE_NUMA (eq. 1): the free core closing the process's group in
 *    its NUMA node (comm_cores split evenly over the NUMA nodes);
 *  - TC_PLACE_ODDEVEN (eq. 2): the comm_cores free cores of the node taken
 *    in turn by consecutive ranks (a chain's sender and receiver get
 *    different cores).
 * Returns the core object, or NULL when the topology has no cores.
 */
hwloc_obj_t tc_progress_place(hwloc_topology_t t, int bound, hwloc_const_cpuset_t bind, int hrank,
                              int hsize, int comm_cores, tc_place_policy_t policy);
const char *tc_place_name(tc_place_policy_t policy);

/** Thread level to request from MPI_Init_thread: MPI_THREAD_MULTIPLE when
 *  TOPOCOLL_COMM_CORES > 0, else @required unchanged. */
int tc_progress_thread_level(int required);

/** After MPI_Init: start the progress thread when communication cores
 *  are configured and MPI provided MPI_THREAD_MULTIPLE (@provided), bound
 *  by the placement policy; a one-line warning and no thread otherwise.
 *  Collective over MPI_COMM_WORLD when it starts threads (the host's
 *  bindings are exchanged: the thread polls only on a core no process of
 *  the host runs on).  Returns 1 if a thread runs. */
int tc_progress_start(int provided);

/** Stop and join the progress thread (before MPI_Finalize; idempotent). */
void tc_progress_stop(void);

/** The core (OS index) the progress thread is bound to, -1 if none runs
 *  or it is unbound. */
int tc_progress_core(void);

/** The communication cores per node in force: TOPOCOLL_COMM_CORES, clamped
 *  to the host's cores (with one warning) once the progress thread has
 *  started.  Thread-safe. */
int tc_progress_comm_cores(void);

#endif
