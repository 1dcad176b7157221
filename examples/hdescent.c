/*
 * examples/hdescent -- the recursive descent of section 5 of the
 * hierarchical-model paper: split MPI_COMM_WORLD by physical topology
 * again and again until MPI_COMM_NULL, and print every level's
 * communicators (members as MPI_COMM_WORLD ranks), their roots
 * communicators (hsplit_with_roots) and the level information.
 *
 * Plain MPI plus topocoll.h's split type: run it with
 * libtopocoll_pmpi.so (linked here), e.g.
 *   mpiexec -np 16 env TOPOCOLL_TOPOLOGY=32em64t-2n8c2t-pci-normalio.xml \
 *       TOPOCOLL_BINDING=socket-rr ./hdescent
 */
#include <topocoll.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC 1024

/* "{0,2,4}": @comm's members as MPI_COMM_WORLD ranks. */
static void members(MPI_Comm comm, char *out, size_t len)
{
    MPI_Group g, w;
    int n;
    MPI_Comm_size(comm, &n);
    int *in = malloc(2 * sizeof(int) * (size_t)n);
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    for (int i = 0; i < n; i++) in[i] = i;
    MPI_Group_translate_ranks(g, n, in, w, in + n);
    size_t o = (size_t)snprintf(out, len, "{");
    for (int i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, i ? ",%d" : "%d", in[n + i]);
    if (o < len) snprintf(out + o, len - o, "}");
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    free(in);
}

/* Rank 0 prints the distinct records of every rank, in rank order. */
static void print_unique(const char *mine, int rank, int size)
{
    char *all = rank == 0 ? malloc((size_t)size * REC) : NULL;
    MPI_Gather(mine, REC, MPI_CHAR, all, REC, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    for (int r = 0; r < size; r++) {
        int seen = !all[(size_t)r * REC];
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(all + (size_t)q * REC, all + (size_t)r * REC) == 0;
        if (!seen) printf("%s\n", all + (size_t)r * REC);
    }
    free(all);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    topocoll_location_t loc;
    char rec[REC];
    topocoll_location(&loc);
    snprintf(rec, REC, "  rank %2d: node %s, binding %s, PUs %s%s", rank, loc.node, loc.binding,
             loc.bound ? loc.cpuset : "all (unbound)", loc.nswitches ? ", under switch " : "");
    for (int i = 0; i < loc.nswitches; i++)
        snprintf(rec + strlen(rec), REC - strlen(rec), "%s%s", i ? ">" : "", loc.switches[i]);
    if (rank == 0) printf("# hierarchical descent of MPI_COMM_WORLD (%d processes)\n", size);
    print_unique(rec, rank, size);

    MPI_Comm old = MPI_COMM_WORLD;
    for (int level = 1;; level++) {
        MPI_Comm newc = MPI_COMM_NULL, roots = MPI_COMM_NULL;
        if (old != MPI_COMM_NULL)
            topocoll_comm_hsplit_with_roots(old, MPI_INFO_NULL, &newc, &roots);
        int any = newc != MPI_COMM_NULL, anyall = 0;
        MPI_Allreduce(&any, &anyall, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (!anyall) {
            if (rank == 0) printf("level %d: MPI_COMM_NULL everywhere (bottom reached)\n", level);
            break;
        }
        if (rank == 0) printf("level %d:\n", level);
        rec[0] = 0;
        if (newc != MPI_COMM_NULL) {
            int num, idx, cmp, nsize;
            char type[TOPOCOLL_HLEVEL_TYPE_MAX], mem[REC / 2], hw[MPI_MAX_INFO_VAL + 1] = "?";
            MPI_Info info;
            int flag = 0;
            topocoll_comm_get_hlevel_info(newc, &num, &idx, type);
            MPI_Comm_get_info(newc, &info); /* interposed: carries the level keys */
            MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, hw, &flag);
            MPI_Info_free(&info);
            MPI_Comm_compare(old, newc, &cmp);
            MPI_Comm_size(newc, &nsize);
            members(newc, mem, sizeof(mem));
            snprintf(rec, REC, "  %-9s %d of %d, %2d procs %s  [mpi_hw_resource_type=%s%s]", type,
                     idx, num, nsize, mem, hw, cmp == MPI_UNEQUAL ? "" : ", NOT A STRICT SUBSET");
        }
        print_unique(rec, rank, size);
        rec[0] = 0;
        if (roots != MPI_COMM_NULL) {
            char mem[REC / 2];
            members(roots, mem, sizeof(mem));
            snprintf(rec, REC, "    roots %s", mem);
            MPI_Comm_free(&roots);
        }
        print_unique(rec, rank, size);
        if (old != MPI_COMM_WORLD && old != MPI_COMM_NULL) MPI_Comm_free(&old);
        old = newc;
    }
    if (old != MPI_COMM_WORLD && old != MPI_COMM_NULL) MPI_Comm_free(&old);
    MPI_Finalize();
    return 0;
}
