/*
 * crash_after_attach -- attaches topocoll to a communicator (creating the
 * node's shared segment), runs a broadcast, then every rank kills itself
 * with SIGKILL: no atexit, no attribute callback, no MPI_Finalize.  The
 * ctest that follows (shm_empty_after_crash) checks that nothing of ours
 * is left in /dev/shm: the segment's name was unlinked as soon as every
 * local process had mapped it.
 */
#include "topocoll.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, x = 7;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    topocoll_comm_attach(MPI_COMM_WORLD);
    topocoll_bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    topocoll_comm_info_t info = TOPOCOLL_COMM_INFO_INIT;
    topocoll_comm_query(MPI_COMM_WORLD, &info);
    if (rank == 0) printf("attached: %d processes on this node, now crashing\n", info.local_size);
    fflush(stdout);
    PMPI_Barrier(MPI_COMM_WORLD);
    kill(getpid(), SIGKILL);
    return 0;
}
