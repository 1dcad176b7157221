/*
 * coll/ctx -- topocoll's per-communicator context.
 *
 * Owns: tc_ctx_t, hung on the communicator as an MPI attribute (keyval
 * with a delete callback), so it is released when the communicator is
 * freed; contexts still alive at MPI_Finalize are released by a delete
 * callback on MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize.
 * A private communicator carries the inter-node messages, so they never
 * match the application's.  May call: PMPI, topo/, xfer/, base/.
 */
#ifndef TC_COLL_CTX_H
#define TC_COLL_CTX_H

#include "../base/config.h"
#include "../topo/node.h"
#include "../xfer/shmseg.h"

#include <mpi.h>
#include <stdint.h>

typedef struct tc_ctx {
    MPI_Comm comm;          /* the user's communicator (not owned) */
    MPI_Comm pcomm;         /* private copy of comm's group for our messages */
    MPI_Comm llcomm;        /* node leaders (MPI_COMM_NULL elsewhere) */
    int enabled;            /* 0: everything goes to PMPI on this comm */
    tc_nodemap_t map;
    tc_shm_t *shm;          /* NULL when alone on the node */
    const tc_config_t *cfg;
    uint64_t seq;           /* collectives started on this comm (same on all ranks) */
    int spin;               /* polls before a waiter yields its core */
    uint64_t bcast_calls, bcast_fallbacks;
    uint64_t barrier_calls;
    struct tc_ctx *prev, *next; /* live contexts, for MPI_Finalize */
} tc_ctx_t;

/**
 * The context of @comm, created on first use (collective over @comm, so
 * call it only from a collective every rank enters).  Returns NULL for
 * MPI_COMM_NULL and intercommunicators; a context with enabled == 0 when
 * topocoll is disabled or set-up failed on some rank.
 */
tc_ctx_t *tc_ctx_get(MPI_Comm comm);

/** The context of @comm if one exists (local, never creates). */
tc_ctx_t *tc_ctx_lookup(MPI_Comm comm);

#endif
