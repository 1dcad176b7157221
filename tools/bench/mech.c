/*
 * tools/bench/mech.c -- --mech (allgather, every process on one host): the
 * two copy-mechanism floors, the least an Allgather needs reading the
 * peers' send buffers mapped in memory (XPMEM-like: an MPI shared window)
 * or by process_vm_readv (CMA); main.c's comment says more.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Copies every block of pool entry @i into @rbuf by mechanism @m.
 * Returns 0, or -1 if process_vm_readv failed. */
static int mech_copy(const mech_t *x, int m, int i, char *rbuf, size_t bytes, int rank, int size)
{
    const char *own = m == M_MAPPED ? x->mapped[(size_t)rank * x->npool + i]
                                    : (const char *)(uintptr_t)x->addr[(size_t)rank * x->npool + i];
    memcpy(rbuf + (size_t)rank * bytes, own, bytes);
    for (int d = 1; d < size; d++) {
        int j = (rank + d) % size;
        char *dst = rbuf + (size_t)j * bytes;
        if (m == M_MAPPED) {
            memcpy(dst, x->mapped[(size_t)j * x->npool + i], bytes);
            continue;
        }
        for (size_t off = 0; off < bytes;) { /* a short read is resumed */
            struct iovec l = { dst + off, bytes - off };
            struct iovec r = { (void *)(uintptr_t)(x->addr[(size_t)j * x->npool + i] + off),
                               bytes - off };
            ssize_t got = process_vm_readv((pid_t)x->pid[j], &l, 1, &r, 1, 0);
            if (got <= 0) return -1;
            off += (size_t)got;
        }
    }
    return 0;
}

/* Mean latency (s) of @iters floors of mechanism @m, slowest rank. */
double time_mech(const mech_t *x, int m, char **rpool, size_t bytes, int iters, int rank, int size)
{
    double t0, t, tmax;
    int bad = 0;
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) { /* the syncs: topocoll's barrier, the cheapest here */
        topocoll_barrier(MPI_COMM_WORLD);
        bad |= mech_copy(x, m, i % x->npool, rpool[i % x->npool], bytes, rank, size);
        topocoll_barrier(MPI_COMM_WORLD);
    }
    t = bad ? -1.0 : (MPI_Wtime() - t0) / iters;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return bad ? -1.0 : tmax;
}

/* Sets up both mechanisms over @spool (the CMA pool) and a mapped pool of
 * the same shape filled with the same bytes; checks each against the
 * native Allgather of entry 0.  Returns 0, or -1 (message printed) if
 * the mapped floor cannot be measured; a refused CMA only clears cma_ok. */
int mech_init(mech_t *x, char **spool, int npool, size_t bytes, int rank, int size)
{
    char *base;
    memset(x, 0, sizeof *x);
    x->npool = npool;
    if (MPI_Win_allocate_shared((MPI_Aint)(bytes * (size_t)npool), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                &base, &x->win) != MPI_SUCCESS)
        return -1;
    x->mapped = malloc((size_t)npool * size * sizeof(char *));
    x->addr = malloc((size_t)npool * size * sizeof(uint64_t));
    uint64_t *mine = malloc((size_t)npool * sizeof(uint64_t));
    x->pid = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < npool; i++) {
        memcpy(base + (size_t)i * bytes, spool[i], bytes);
        mine[i] = (uint64_t)(uintptr_t)spool[i];
    }
    for (int r = 0; r < size; r++) {
        MPI_Aint wsz;
        int du;
        char *p;
        MPI_Win_shared_query(x->win, r, &wsz, &du, &p);
        for (int i = 0; i < npool; i++) x->mapped[(size_t)r * npool + i] = p + (size_t)i * bytes;
    }
    int me = (int)getpid();
    PMPI_Allgather(&me, 1, MPI_INT, x->pid, 1, MPI_INT, MPI_COMM_WORLD);
    PMPI_Allgather(mine, npool, MPI_UINT64_T, x->addr, npool, MPI_UINT64_T, MPI_COMM_WORLD);
    free(mine);
    PMPI_Barrier(MPI_COMM_WORLD); /* every mapped pool is filled */
    char *ref = malloc(bytes * (size_t)size), *got = malloc(bytes * (size_t)size);
    PMPI_Allgather(spool[0], (int)bytes, MPI_BYTE, ref, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    int bad[2] = { 0, 0 };
    for (int m = M_MAPPED; m <= M_CMA; m++) {
        memset(got, 0, bytes * (size_t)size);
        bad[m] = mech_copy(x, m, 0, got, bytes, rank, size) != 0 ||
                 memcmp(ref, got, bytes * (size_t)size) != 0;
    }
    free(ref);
    free(got);
    PMPI_Allreduce(MPI_IN_PLACE, bad, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    x->cma_ok = !bad[M_CMA];
    if (bad[M_MAPPED] && rank == 0)
        fprintf(stderr, "topocoll_bench --mech: the mapped pool gave wrong data\n");
    if (!x->cma_ok && rank == 0)
        fprintf(stderr, "topocoll_bench --mech: process_vm_readv refused or wrong; no cma_us\n");
    return bad[M_MAPPED] ? -1 : 0;
}

void mech_fini(mech_t *x)
{
    PMPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&x->win);
    free(x->mapped);
    free(x->addr);
    free(x->pid);
}
