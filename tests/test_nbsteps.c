/*
 * test_nbsteps -- the Reduce and Allreduce state machines driven with
 * may_block = 0, as a nonblocking request or a progress thread will drive
 * them: the inter-node steps are then pipelined PMPI_Ireduce/PMPI_Ibcast
 * (windows of segments in flight) instead of blocking calls.  Results are
 * checked against PMPI_Allreduce for several sizes, roots and MPI_IN_PLACE.
 * Run it on virtual nodes (that is where the inter-node steps exist).
 */
#include "topocoll.h"

#include "base/sync.h"
#include "coll/allreduce.h"
#include "coll/reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank;

static void drain(tc_ctx_t *c, int (*work)(void *), void *op, int *rc)
{
    tc_backoff_t b;
    tc_backoff_init(&b, c->spin);
    int flag;
    while ((*rc = work(op)) == TC_INPROGRESS) { /* the MPI progress a request would give */
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->pcomm, &flag, MPI_STATUS_IGNORE);
        tc_backoff(&b);
    }
}
static int rwork(void *op) { return tc_reduce_work(op); }
static int awork(void *op) { return tc_allreduce_work(op); }

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tc_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    topocoll_comm_attach(MPI_COMM_WORLD);
    tc_ctx_t *c = tc_ctx_lookup(MPI_COMM_WORLD);
    if (!c || !c->enabled || size == 1) {
        if (rank == 0) printf("test_nbsteps np=%d: nothing to drive\n", size);
        MPI_Finalize();
        return 0;
    }
    tc_rtype_t t;
    tc_op_classify(MPI_DOUBLE, MPI_SUM, &t);
    static const int counts[] = { 1, 1000, 5001, 65537, 262147 };
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        int n = counts[k];
        double *in = malloc(sizeof(double) * (size_t)n), *ref = malloc(sizeof(double) * (size_t)n);
        double *out = malloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++) in[i] = (double)((i * 7 + rank * 3) % 11);
        PMPI_Allreduce(in, ref, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int ip = 0; ip < 2; ip++) {
            tc_allreduce_t a;
            int rc;
            if (ip)
                memcpy(out, in, sizeof(double) * (size_t)n);
            else
                memset(out, 0, sizeof(double) * (size_t)n);
            rc = tc_allreduce_init(&a, c, ip ? out : in, out, (size_t)n, &t);
            if (rc == MPI_SUCCESS) drain(c, awork, &a, &rc);
            tc_allreduce_fini(&a);
            CHECK(rc == MPI_SUCCESS && memcmp(out, ref, sizeof(double) * (size_t)n) == 0,
                  "allreduce count %d%s: rc %d or wrong result", n, ip ? " in place" : "", rc);
        }
        for (int root = 0; root<size; root += size> 2 ? size - 1 : 1) {
            for (int ip = 0; ip < 2; ip++) {
                tc_reduce_t r;
                int rc, me_ip = ip && rank == root;
                if (me_ip)
                    memcpy(out, in, sizeof(double) * (size_t)n);
                else
                    memset(out, 0, sizeof(double) * (size_t)n);
                rc = tc_reduce_init(&r, c, me_ip ? out : in, out, (size_t)n, &t, root, 0, 0);
                if (rc == MPI_SUCCESS) drain(c, rwork, &r, &rc);
                tc_reduce_fini(&r);
                CHECK(rc == MPI_SUCCESS, "reduce count %d root %d: rc %d", n, root, rc);
                if (rank == root)
                    CHECK(memcmp(out, ref, sizeof(double) * (size_t)n) == 0,
                          "reduce count %d root %d%s: wrong result", n, root,
                          me_ip ? " in place" : "");
            }
        }
        free(in);
        free(ref);
        free(out);
    }
    int tot[2] = { tc_failures, tc_checks }, sum[2];
    PMPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_nbsteps np=%d nodes=%d: %d checks, %d failures\n", size, c->map.nnodes, sum[1],
               sum[0]);
    MPI_Finalize();
    return tc_failures ? 1 : 0;
}
