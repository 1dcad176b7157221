/*
 * tests/robust/test_errprop -- a failure one rank sees inside a collective
 * reaches the others: an erroneous MPI_Bcast (the root's count 1 MiB, the
 * others' 512 KiB) under MPI_ERRORS_RETURN must return an error on every
 * rank, of the class the native MPI gives (MPI_ERR_TRUNCATE), and hang
 * none (alarm() ends a hung run; the test then lacks its summary line).
 * Then the communicator still works: a correct Bcast and Allreduce.
 *
 * Usage: test_errprop [bytes]  (the root's count; the others' is half)
 */
#include <mpi.h>
#include <topocoll.h>

#include "../check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* 1 if this rank is alone on its node (virtual nodes included). */
static int alone_on_node(MPI_Comm comm)
{
    topocoll_comm_info_t info = { .struct_size = sizeof info };
    return topocoll_comm_query(comm, &info) == MPI_SUCCESS && info.local_size == 1;
}

/* One erroneous Bcast from @root on @comm: every rank's error class. */
static void mismatched(MPI_Comm comm, int root, int bytes)
{
    char *buf = malloc((size_t)bytes);
    memset(buf, rank == root ? 7 : 0, (size_t)bytes);
    int n = rank == root ? bytes : bytes / 2, cls = MPI_SUCCESS;
    int rc = MPI_Bcast(buf, n, MPI_BYTE, root, comm);
    MPI_Error_class(rc, &cls);
    /* MPICH says MPI_ERR_TRUNCATE on every rank natively (Open MPI at the
     * receivers only); never a hang.  Success only at the root, and only
     * where it cannot know: alone on its node (every other node's leader
     * told by the header of the first message: coll/bcast), or an eager
     * Bcast (at most TOPOCOLL_BCAST_CICO_MAX, 32 KiB: the root returns once
     * its item is written, as native eager sends do) */
    CHECK(rc != MPI_SUCCESS || (rank == root && (alone_on_node(comm) || n <= (32 << 10))),
          "root %d: %d bytes against %d: returned success", root, n, bytes);
    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "root %d: error class %d", root, cls);
    if (rank == 0 && rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(cls, s, &len);
        printf("root %d, %d bytes: rank 0 returned class %d (%s)\n", root, bytes, cls, s);
    }
    free(buf);
}

/* The communicator after the error: a correct Bcast and Allreduce. */
static void still_works(MPI_Comm comm, int bytes)
{
    char *buf = malloc((size_t)bytes);
    memset(buf, rank == 0 ? 9 : 0, (size_t)bytes);
    int rc = MPI_Bcast(buf, bytes, MPI_BYTE, 0, comm), bad = 0;
    for (int i = 0; i < bytes && !bad; i++) bad = buf[i] != 9;
    CHECK(rc == MPI_SUCCESS && !bad, "Bcast after the error: rc %d, data %s", rc,
          bad ? "wrong" : "right");
    int one = 1, sum = 0;
    rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(rc == MPI_SUCCESS && sum == size, "Allreduce after the error: rc %d, sum %d", rc, sum);
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    alarm(120);
    int bytes = argc > 1 ? atoi(argv[1]) : 1 << 20;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Barrier(comm); /* (its context built: the erroneous call runs in topocoll) */
    mismatched(comm, 0, bytes);
    mismatched(comm, size - 1, bytes);
    /* the same communicator: nothing of the failed calls is left in flight
     * (across nodes their segments were drained: coll/bcast) */
    still_works(comm, bytes);
    MPI_Comm_free(&comm);
    /* a fresh communicator: whatever the error left behind is gone with the old one */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    still_works(comm, bytes);
    MPI_Comm_free(&comm);
    int f = tc_report("test_errprop");
    MPI_Finalize();
    return f != 0;
}
