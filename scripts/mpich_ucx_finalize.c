/*
 * mpich_ucx_finalize -- preloaded by scripts/cluster.sh into the ranks of
 * MPICH jobs across emulated hosts: works around a deadlock in MPI_Finalize
 * of MPICH 4.0.x (ch4:ucx) over UCX's TCP transport.
 *
 * MPICH 4.0's finalize (src/mpid/ch4/netmod/ucx/ucx_init.c) calls
 * ucp_disconnect_nb() on every endpoint, spins on ucp_worker_progress()
 * until all those requests complete, and only then enters a PMI barrier.
 * Over TCP a disconnect can need the peer's progress; a peer that finished
 * its own disconnects first sits in the PMI barrier (no UCX progress) and
 * the other side spins forever.  Seen here with Debian 12's MPICH 4.0.2 and
 * UCX 1.13.1 whenever a host runs two or more ranks (ranks stuck in
 * PMPI_Finalize -> ucp_worker_progress, the others in the PMI read).  MPICH
 * removed that barrier upstream (pmodels/mpich pull request 6596, "having
 * the process stuck in PMI_barrier may prevent other processes to complete
 * the previous ucp_disconnect_nb").
 *
 * The same reordering, from outside: ucp_disconnect_nb() starts the close
 * as before but reports it complete at once, keeping the request; MPICH
 * goes on to its PMI barrier, which every process now reaches; then
 * ucp_worker_destroy() first progresses the worker until the kept closes
 * complete (all processes are progressing by then), at most 20 seconds,
 * and destroys it.  Nothing else changes.
 *
 *   cc -shared -fPIC -O2 -o mpich_ucx_finalize.so mpich_ucx_finalize.c -lucp -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucp/api/ucp.h>

static void **g_req;
static size_t g_n, g_cap;

ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
    static ucs_status_ptr_t (*close_nb)(ucp_ep_h, unsigned);
    if (!close_nb) close_nb = (ucs_status_ptr_t (*)(ucp_ep_h, unsigned))dlsym(RTLD_NEXT, "ucp_ep_close_nb");
    ucs_status_ptr_t r = close_nb(ep, UCP_EP_CLOSE_MODE_FLUSH);
    if (!UCS_PTR_IS_PTR(r)) return r;   /* done (or failed) at once: as before */
    if (g_n == g_cap) {
        size_t cap = g_cap ? 2 * g_cap : 64;
        void **q = realloc(g_req, cap * sizeof(*q));
        if (!q) return r;                /* cannot keep it: MPICH waits for it itself */
        g_req = q;
        g_cap = cap;
    }
    g_req[g_n++] = r;
    return NULL;                         /* "completed": MPICH moves on to its PMI barrier */
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ucp_worker_destroy(ucp_worker_h worker)
{
    static void (*destroy)(ucp_worker_h);
    if (!destroy) destroy = (void (*)(ucp_worker_h))dlsym(RTLD_NEXT, "ucp_worker_destroy");
    double t0 = now();
    size_t left = g_n;
    while (left > 0 && now() - t0 < 20.0) {
        ucp_worker_progress(worker);
        left = 0;
        for (size_t i = 0; i < g_n; i++) {
            if (!g_req[i]) continue;
            if (ucp_request_check_status(g_req[i]) == UCS_INPROGRESS) { left++; continue; }
            ucp_request_free(g_req[i]);
            g_req[i] = NULL;
        }
    }
    if (left > 0)
        fprintf(stderr, "mpich_ucx_finalize: %zu endpoint close(s) still pending after 20 s; destroying the worker\n",
                left);
    else {
        free(g_req);
        g_req = NULL;
        g_n = g_cap = 0;
    }
    destroy(worker);
}
