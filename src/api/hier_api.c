/*
 * api/hier_api -- the native API of the hardware-topology communicators
 * (topocoll.h): argument checks and error reporting, then hier/.
 * May call: hier/, topo/loc, PMPI.
 */
#include "topocoll.h"

#include "../hier/hier.h"
#include "../topo/loc.h"

#include <stdio.h>
#include <string.h>

static int hier_error(MPI_Comm comm, int cls, const char *call, const char *what)
{
    fprintf(stderr, "topocoll: %s: %s\n", call, what);
    PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, cls);
    return cls;
}

static int check_intra(MPI_Comm comm, const char *call)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL)
        return hier_error(comm, MPI_ERR_COMM, call, "invalid communicator MPI_COMM_NULL");
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return MPI_ERR_COMM;
    if (inter)
        return hier_error(comm, MPI_ERR_COMM, call,
                          "intercommunicators have no hardware hierarchy");
    return MPI_SUCCESS;
}

/* The value of "mpi_hw_resource_type" in @info (0 if absent). */
static int info_rtype(MPI_Info info, char *val, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL) return 0;
#if MPI_VERSION >= 4
    int l = len;
    if (PMPI_Info_get_string(info, "mpi_hw_resource_type", &l, val, &flag) != MPI_SUCCESS) return 0;
#else
    if (PMPI_Info_get(info, "mpi_hw_resource_type", len - 1, val, &flag) != MPI_SUCCESS) return 0;
#endif
    return flag;
}

int topocoll_comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                             MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split_type";
    if (split_type != TOPOCOLL_COMM_TYPE_PHYSICAL_TOPOLOGY &&
        split_type != TOPOCOLL_COMM_TYPE_HW_GUIDED && split_type != TOPOCOLL_COMM_TYPE_HW_UNGUIDED)
        return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    int rc = check_intra(comm, call);
    if (rc != MPI_SUCCESS) return rc;
    if (!newcomm) return hier_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    char val[TOPOCOLL_HLEVEL_TYPE_MAX];
    if (split_type == TOPOCOLL_COMM_TYPE_HW_GUIDED)
        rc = tc_hier_split(comm, TC_SPLIT_GUIDED,
                           info_rtype(info, val, (int)sizeof(val)) ? val : NULL, key, newcomm);
    else
        rc = tc_hier_split(comm, TC_SPLIT_UNGUIDED, NULL, key, newcomm);
    if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

int topocoll_comm_hsplit_with_roots(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                    MPI_Comm *rootscomm)
{
    static const char call[] = "topocoll_comm_hsplit_with_roots";
    (void)info;
    int rc = check_intra(comm, call);
    if (rc != MPI_SUCCESS) return rc;
    if (!newcomm || !rootscomm)
        return hier_error(comm, MPI_ERR_ARG, call, "newcomm or rootscomm is NULL");
    rc = tc_hier_split_roots(comm, newcomm, rootscomm);
    if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

int topocoll_comm_get_hlevel_info(MPI_Comm comm, int *num_comms, int *index, char *type)
{
    static const char call[] = "topocoll_comm_get_hlevel_info";
    int rc = check_intra(comm, call);
    if (rc != MPI_SUCCESS) return rc;
    if (!num_comms || !index || !type)
        return hier_error(comm, MPI_ERR_ARG, call, "NULL output argument");
    tc_hier_level_info(comm, num_comms, index, type);
    return MPI_SUCCESS;
}

int topocoll_comm_get_min_hlevel(MPI_Comm comm, int nranks, const int ranks[], char *type)
{
    static const char call[] = "topocoll_comm_get_min_hlevel";
    int rc = check_intra(comm, call), size;
    if (rc != MPI_SUCCESS) return rc;
    if (nranks < 1 || !ranks || !type)
        return hier_error(comm, MPI_ERR_ARG, call, "nranks < 1 or NULL argument");
    PMPI_Comm_size(comm, &size);
    for (int i = 0; i < nranks; i++)
        if (ranks[i] < 0 || ranks[i] >= size) {
            fprintf(stderr, "topocoll: %s: rank %d out of range [0, %d)\n", call, ranks[i], size);
            PMPI_Comm_call_errhandler(comm, MPI_ERR_RANK);
            return MPI_ERR_RANK;
        }
    rc = tc_hier_min_level(comm, nranks, ranks, type);
    if (rc != MPI_SUCCESS)
        return hier_error(comm, rc, call,
                          "the processes' locations are not known for this communicator "
                          "(call topocoll_init_world() after MPI_Init)");
    return MPI_SUCCESS;
}

int topocoll_comm_get_info(MPI_Comm comm, MPI_Info *info)
{
    int rc = PMPI_Comm_get_info(comm, info);
    if (rc == MPI_SUCCESS) tc_hier_info_add(comm, *info);
    return rc;
}

int topocoll_init_world(void) { return tc_hier_world_init(); }

int topocoll_location(topocoll_location_t *out)
{
    const tc_loc_t *l = tc_loc_process();
    if (!out) return MPI_ERR_ARG;
    memset(out, 0, sizeof(*out));
    if (!l->ok) return MPI_ERR_OTHER;
    snprintf(out->node, sizeof(out->node), "%s", l->nodename);
    out->vnode = l->vnode;
    out->nvnodes = l->nvnodes;
    out->bound = l->bound;
    hwloc_bitmap_list_snprintf(out->cpuset, sizeof(out->cpuset), l->cpuset);
    snprintf(out->binding, sizeof(out->binding), "%s", l->binding);
    out->nswitches = l->nswitch < 8 ? l->nswitch : 8;
    for (int i = 0; i < out->nswitches; i++)
        snprintf(out->switches[i], sizeof(out->switches[i]), "%s", l->sw_name[i]);
    return MPI_SUCCESS;
}
