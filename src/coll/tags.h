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
    TC_TAG_RSRING = 0x7c09,    /* Reduce_scatter: the slices' ring (slice) */
    TC_TAG_RHALF = 0x7c0a,     /* Reduce: the leaders' recursive halving and gather (llcomm) */
    TC_TAG_ROWN = 0x7c0b,      /* Reduce: the block owners' exchange, their blocks to the root's
                                  leader (llcomm) */
    TC_TAG_SCAN = 0x5c00,      /* Scan's chain: + seq mod 256 (pcomm), 0x5c00-0x5cff */
    /* The slices' messages between nodes in pieces (coll/pieces), + seq
     * mod 256 (the call's epoch, TC_TAG_EPOCH): a receive left posted by a
     * failed call until its cancel runs cannot take a piece of the next
     * calls' */
    TC_TAG_ALLTOALL = 0x6000,  /* Alltoall (pcomm), 0x6000-0x60ff */
    TC_TAG_VEXCHANGE = 0x6100, /* Allgatherv, Alltoallv; Gatherv's, Scatterv's blocks
                                  sent on their own (pcomm), 0x6100-0x61ff */
    TC_TAG_VROOT = 0x6200,     /* Gatherv, Scatterv: a node's message (pcomm), 0x6200-0x62ff */
    TC_TAG_VRELAY = 0x4000     /* Allgatherv relayed: + (seq mod 16) x 256 + the origin
                                  node (pcomm), 0x4000-0x4fff */
};

/* Tag @base of the call numbered @seq (its epoch: seq mod 256). */
#define TC_TAG_EPOCH(base, seq) ((base) + (int)((seq)&0xff))
/* The relayed Allgatherv's tag for origin node @node (< 256) of call @seq. */
#define TC_TAG_VRELAY_OF(seq, node) (TC_TAG_VRELAY + (int)(((seq)&0xf) << 8) + (node))

#endif
