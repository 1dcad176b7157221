/*
 * test_badargs -- erroneous arguments to every call topocoll interposes
 * (run under LD_PRELOAD of libtopocoll_pmpi.so), with MPI_ERRORS_RETURN:
 * each returns the error class the native MPI returns for the same call
 * (PMPI_*, where the native call survives the argument; else the class the
 * standard names: MPICH 4.0.2's MPI_Reduce crashes on a negative count),
 * never MPI_SUCCESS, and the communicator stays usable
 * (a Bcast and an Allreduce after each case are checked).  Every case runs
 * on a fresh communicator (topocoll's context not built yet) and again
 * after 20 collectives (built).  Prints "test_badargs np=N: K checks, F
 * failed"; exit status 0 only if every check held.
 */
#include "../check.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm g_comm;
static int g_size, g_rank, g_fresh;

static int cls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

/* The communicator still works: a Bcast and an Allreduce, checked. */
static void usable(const char *after)
{
    int v = g_rank == 0 ? 4242 : 0, s = 0, one = 1;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, g_comm) == MPI_SUCCESS && v == 4242,
          "%s: Bcast afterwards: %d", after, v);
    CHECK(MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, g_comm) == MPI_SUCCESS && s == g_size,
          "%s: Allreduce afterwards: %d", after, s);
}

/* One case: topocoll's class against the native's (@nat: the native call,
 * or -1 with @want the class the standard names). */
static void expect(const char *name, int rc, int nat_rc, int want)
{
    int c = cls(rc), w = nat_rc == -1 ? want : cls(nat_rc);
    CHECK(c != MPI_SUCCESS && c == w, "%s: class %d, native %d", name, c, w);
    usable(name);
}

#define NAT(x) (x)
#define NONE   (-1)

static void cases(const char *phase)
{
    int n = 8, root_bad = g_size;
    int sb[64], rb[64 * 64];
    double db[8] = { 0 }, dr[8];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm c = g_comm;
    char name[96];
    memset(sb, 0, sizeof(sb));
#define CASE(label, call, native, want)                       \
    do {                                                      \
        if (g_fresh) {                                        \
            MPI_Comm_free(&g_comm);                           \
            MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);            \
            c = g_comm;                                       \
        }                                                     \
        snprintf(name, sizeof(name), "%s: %s", phase, label); \
        int nrc_ = native;                                    \
        int rc_ = call;                                       \
        expect(name, rc_, nrc_, want);                        \
    } while (0)
    /* blocking */
    CASE("Bcast count -1", MPI_Bcast(sb, -1, MPI_INT, 0, c), NAT(PMPI_Bcast(sb, -1, MPI_INT, 0, c)),
         0);
    CASE("Bcast datatype null", MPI_Bcast(sb, n, MPI_DATATYPE_NULL, 0, c),
         NAT(PMPI_Bcast(sb, n, MPI_DATATYPE_NULL, 0, c)), 0);
    CASE("Bcast root -1", MPI_Bcast(sb, n, MPI_INT, -1, c), NAT(PMPI_Bcast(sb, n, MPI_INT, -1, c)),
         0);
    CASE("Bcast root size", MPI_Bcast(sb, n, MPI_INT, root_bad, c),
         NAT(PMPI_Bcast(sb, n, MPI_INT, root_bad, c)), 0);
    CASE("Bcast comm null", MPI_Bcast(sb, n, MPI_INT, 0, MPI_COMM_NULL), NONE, MPI_ERR_COMM);
    CASE("Reduce count -1", MPI_Reduce(sb, rb, -1, MPI_INT, MPI_SUM, 0, c), NONE, MPI_ERR_COUNT);
    CASE("Reduce datatype null", MPI_Reduce(sb, rb, n, MPI_DATATYPE_NULL, MPI_SUM, 0, c),
         NAT(PMPI_Reduce(sb, rb, n, MPI_DATATYPE_NULL, MPI_SUM, 0, c)), 0);
    CASE("Reduce op null", MPI_Reduce(sb, rb, n, MPI_INT, MPI_OP_NULL, 0, c),
         NAT(PMPI_Reduce(sb, rb, n, MPI_INT, MPI_OP_NULL, 0, c)), 0);
    CASE("Reduce root size", MPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, root_bad, c),
         NAT(PMPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, root_bad, c)), 0);
    CASE("Reduce BAND on double", MPI_Reduce(db, dr, 8, MPI_DOUBLE, MPI_BAND, 0, c),
         NAT(PMPI_Reduce(db, dr, 8, MPI_DOUBLE, MPI_BAND, 0, c)), 0);
    CASE("Reduce comm null", MPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL), NONE,
         MPI_ERR_COMM);
    CASE("Allreduce count -1", MPI_Allreduce(sb, rb, -1, MPI_INT, MPI_SUM, c), NONE, MPI_ERR_COUNT);
    CASE("Allreduce datatype null", MPI_Allreduce(sb, rb, n, MPI_DATATYPE_NULL, MPI_SUM, c),
         NAT(PMPI_Allreduce(sb, rb, n, MPI_DATATYPE_NULL, MPI_SUM, c)), 0);
    CASE("Allreduce op null", MPI_Allreduce(sb, rb, n, MPI_INT, MPI_OP_NULL, c),
         NAT(PMPI_Allreduce(sb, rb, n, MPI_INT, MPI_OP_NULL, c)), 0);
    CASE("Allreduce BAND on double", MPI_Allreduce(db, dr, 8, MPI_DOUBLE, MPI_BAND, c),
         NAT(PMPI_Allreduce(db, dr, 8, MPI_DOUBLE, MPI_BAND, c)), 0);
    CASE("Allreduce comm null", MPI_Allreduce(sb, rb, n, MPI_INT, MPI_SUM, MPI_COMM_NULL), NONE,
         MPI_ERR_COMM);
    CASE("Allgather sendcount -1", MPI_Allgather(sb, -1, MPI_INT, rb, n, MPI_INT, c),
         NAT(PMPI_Allgather(sb, -1, MPI_INT, rb, n, MPI_INT, c)), 0);
    CASE("Allgather recvcount -1", MPI_Allgather(sb, n, MPI_INT, rb, -1, MPI_INT, c),
         NAT(PMPI_Allgather(sb, n, MPI_INT, rb, -1, MPI_INT, c)), 0);
    CASE("Allgather recvtype null", MPI_Allgather(sb, n, MPI_INT, rb, n, MPI_DATATYPE_NULL, c),
         NAT(PMPI_Allgather(sb, n, MPI_INT, rb, n, MPI_DATATYPE_NULL, c)), 0);
    /* (Open MPI 4.1.4's PMPI_Allgather dereferences MPI_COMM_NULL) */
    CASE("Allgather comm null", MPI_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_NULL), NONE,
         MPI_ERR_COMM);
    CASE("Barrier comm null", MPI_Barrier(MPI_COMM_NULL), NONE, MPI_ERR_COMM);
    /* nonblocking */
    CASE("Ibcast count -1", MPI_Ibcast(sb, -1, MPI_INT, 0, c, &req),
         NAT(PMPI_Ibcast(sb, -1, MPI_INT, 0, c, &req)), 0);
    CASE("Ibcast root size", MPI_Ibcast(sb, n, MPI_INT, root_bad, c, &req),
         NAT(PMPI_Ibcast(sb, n, MPI_INT, root_bad, c, &req)), 0);
    CASE("Ibcast comm null", MPI_Ibcast(sb, n, MPI_INT, 0, MPI_COMM_NULL, &req), NONE,
         MPI_ERR_COMM);
    CASE("Ireduce op null", MPI_Ireduce(sb, rb, n, MPI_INT, MPI_OP_NULL, 0, c, &req),
         NAT(PMPI_Ireduce(sb, rb, n, MPI_INT, MPI_OP_NULL, 0, c, &req)), 0);
    CASE("Ireduce root size", MPI_Ireduce(sb, rb, n, MPI_INT, MPI_SUM, root_bad, c, &req),
         NAT(PMPI_Ireduce(sb, rb, n, MPI_INT, MPI_SUM, root_bad, c, &req)), 0);
    CASE("Iallreduce count -1", MPI_Iallreduce(sb, rb, -1, MPI_INT, MPI_SUM, c, &req), NONE,
         MPI_ERR_COUNT);
    CASE("Iallreduce datatype null", MPI_Iallreduce(sb, rb, n, MPI_DATATYPE_NULL, MPI_SUM, c, &req),
         NAT(PMPI_Iallreduce(sb, rb, n, MPI_DATATYPE_NULL, MPI_SUM, c, &req)), 0);
    CASE("Iallgather recvcount -1", MPI_Iallgather(sb, n, MPI_INT, rb, -1, MPI_INT, c, &req),
         NAT(PMPI_Iallgather(sb, n, MPI_INT, rb, -1, MPI_INT, c, &req)), 0);
    CASE("Ibarrier comm null", MPI_Ibarrier(MPI_COMM_NULL, &req), NONE, MPI_ERR_COMM);
    CASE("Iscan op null", MPI_Iscan(sb, rb, n, MPI_INT, MPI_OP_NULL, c, &req),
         NAT(PMPI_Iscan(sb, rb, n, MPI_INT, MPI_OP_NULL, c, &req)), 0);
    CASE("Iscan count -1", MPI_Iscan(sb, rb, -1, MPI_INT, MPI_SUM, c, &req), NONE, MPI_ERR_COUNT);
#undef CASE
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    tc_rank = g_rank;
    /* errors on MPI_COMM_NULL go to MPI_COMM_WORLD's handler (MPI-3) or
     * MPI_COMM_SELF's (MPI-4) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &g_comm); /* inherits MPI_ERRORS_RETURN */
    g_fresh = 1; /* each case on a new communicator: topocoll's context not built */
    cases("fresh");
    g_fresh = 0;
    for (int i = 0; i < 40; i++) usable("warm-up"); /* 80 calls, past TOPOCOLL_COMM_LAZY: built */
    cases("built");
    MPI_Comm_free(&g_comm);
    int all = 0;
    MPI_Allreduce(&tc_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) printf("test_badargs np=%d: %d checks, %d failed\n", g_size, tc_checks, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
