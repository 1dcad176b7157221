/*
 * coll/tags -- the one registry of the MPI tags topocoll's collectives
 * send with.  Every message travels on one of the context's private
 * communicators (coll/ctx: pcomm, llcomm, slice), never on the
 * application's, so these never match an application's message; listing
 * them here shows they cannot match each other either: each
 * (communicator, tag) pair below belongs to one collective, and a
 * communicator's collectives run one at a time.
 *
 * Owns: the tag values.  May call: nothing.
 */
#ifndef TC_COLL_TAGS_H
#define TC_COLL_TAGS_H

enum {
    TC_TAG_BCAST = 0x7c01,     /* Bcast between nodes (pcomm) */
    TC_TAG_ALLGATHER = 0x7c03, /* Allgather: leaders' ring, ring of all (pcomm) */
    TC_TAG_ARING = 0x7c05,     /* Allreduce: the slices' ring (slice) */
    TC_TAG_RCHAIN = 0x7c06,    /* Reduce: the leaders' chain (llcomm) */
    TC_TAG_TREE = 0x7c07,      /* the split tree's Bcast and Reduce (pcomm) */
    TC_TAG_ALLTOALL = 0x7c08,  /* Alltoall: the slices' messages between nodes (pcomm) */
    TC_TAG_RSRING = 0x7c09,    /* Reduce_scatter: the slices' ring (slice) */
    TC_TAG_VEXCHANGE = 0x7c0a, /* Allgatherv, Alltoallv: the slices' messages (pcomm) */
    TC_TAG_SCAN = 0x5c00,      /* Scan's chain: + seq mod 256 (pcomm), 0x5c00-0x5cff */
    TC_TAG_VRELAY = 0x4000     /* Allgatherv relayed: + the origin node (pcomm), 0x4000-0x5bff */
};

#endif
