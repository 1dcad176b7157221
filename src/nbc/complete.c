/*
 * nbc/complete -- the completion calls (nbc.h: tc_nb_wait & co., the
 * semantics of MPI_Wait, MPI_Test, ...) over native requests, topocoll's
 * nonblocking ones (generalized requests) and its persistent ones
 * (nbc/persist), progressing topocoll's operations while they wait.
 */
#include "../base/sync.h"
#include "nbc_int.h"

/* Repeat @test (a native Test* call) with progress in between until it
 * reports completion; once nothing of ours is outstanding, @wait (the
 * native Wait* call) finishes the job. */
#define WAIT_LOOP(test_call, done_cond, wait_call)             \
    do {                                                       \
        if (tc_nb_outstanding() == 0) return (wait_call);      \
        tc_backoff_t b_;                                       \
        tc_backoff_init(&b_, tc_nb_spin());                    \
        for (;;) {                                             \
            tc_nb_progress();                                  \
            int rc_ = (test_call);                             \
            if (rc_ != MPI_SUCCESS || (done_cond)) return rc_; \
            if (tc_nb_outstanding() == 0) return (wait_call);  \
            tc_backoff(&b_);                                   \
        }                                                      \
    } while (0)

int tc_nb_wait(MPI_Request *req, MPI_Status *st)
{
    if (tc_np_any(1, req)) return tc_np_wait(req, st);
    int flag = 0;
    WAIT_LOOP(PMPI_Test(req, &flag, st), flag, PMPI_Wait(req, st));
}

int tc_nb_test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (tc_np_any(1, req)) return tc_np_test(req, flag, st);
    tc_nb_progress();
    return PMPI_Test(req, flag, st);
}

int tc_nb_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (tc_np_any(n, reqs)) return tc_np_all(n, reqs, NULL, sts);
    int flag = 0;
    WAIT_LOOP(tc_nb_native_testall(n, reqs, &flag, sts), flag, PMPI_Waitall(n, reqs, sts));
}

int tc_nb_testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    if (tc_np_any(n, reqs)) return tc_np_all(n, reqs, flag, sts);
    tc_nb_progress();
    return tc_nb_native_testall(n, reqs, flag, sts);
}

int tc_nb_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    if (tc_np_any(n, reqs)) return tc_np_any_of(n, reqs, index, NULL, st);
    int flag = 0;
    WAIT_LOOP(PMPI_Testany(n, reqs, index, &flag, st), flag, PMPI_Waitany(n, reqs, index, st));
}

int tc_nb_testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    if (tc_np_any(n, reqs)) return tc_np_any_of(n, reqs, index, flag, st);
    tc_nb_progress();
    return PMPI_Testany(n, reqs, index, flag, st);
}

int tc_nb_waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (tc_np_any(n, reqs)) return tc_np_some(n, reqs, outcount, idx, sts, 1);
    WAIT_LOOP(PMPI_Testsome(n, reqs, outcount, idx, sts), *outcount != 0,
              PMPI_Waitsome(n, reqs, outcount, idx, sts));
}

int tc_nb_testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (tc_np_any(n, reqs)) return tc_np_some(n, reqs, outcount, idx, sts, 0);
    tc_nb_progress();
    return PMPI_Testsome(n, reqs, outcount, idx, sts);
}

int tc_nb_request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (tc_np_any(1, &req)) return tc_np_get_status(req, flag, st);
    tc_nb_progress();
    return PMPI_Request_get_status(req, flag, st);
}
