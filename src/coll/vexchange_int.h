/*
 * coll/vexchange_int.h -- what coll/vexchange.c and coll/vroot.c share:
 * the items' layout and their reader.  Internal to those two files.
 *
 * An item (and a node's message between nodes, coll/vroot): a header
 * (the writer's exposed region's cookie, or 0; its number of entries),
 * nent entries (a block's length; where it is), then the blocks it
 * carries.  where: a carried block's offset in the item, TC_VX_SC | the
 * block's offset in the writer's region, or TC_VX_DIRECT (coll/vroot:
 * the block goes between nodes as a message of its own) or TC_VX_FAILED
 * (its writer's item was not as the protocol says).
 *
 * Owns: nothing.  May call: coll/ctx, xfer/.
 */
#ifndef TC_COLL_VEXCHANGE_INT_H
#define TC_COLL_VEXCHANGE_INT_H

#include "vexchange.h"

#define TC_VX_SC         ((uint64_t)1 << 63)
#define TC_VX_DIRECT     ((uint64_t)1 << 62)
#define TC_VX_FAILED     (TC_VX_SC | TC_VX_DIRECT)
#define TC_VX_HEAD(nent) (16 + 16 * (size_t)(nent))

/* The longest block a peer's table may give (2^48 bytes: no sum of a few
 * wraps); above it the table is garbage. */
#define TC_VX_LEN_MAX ((size_t)1 << 48)

/* A failure of ours before our messages are through (several nodes):
 * kept, and returned once they are, so the local processes (which give up
 * when we fail) have posted theirs and no other node waits for a message
 * that never comes.  Returns TC_OK. */
static inline tc_status_t tc_vx_defer(tc_vexchange_t *op, tc_status_t st)
{
    if (st < 0 && op->fail == TC_OK) op->fail = st;
    return TC_OK;
}

/* Entry @e of local process @j's item, for a block of @want bytes at
 * @buf (@write: ours, into @j's exposed buffer): copied out of the item
 * where it carries it, else by single copy through @j's region.  The item
 * is a peer's: every field is checked before use.  TC_INPROGRESS until
 * the item is there; TC_ERR_TRUNCATE where its length is not @want, or
 * where it leaves to single copy a block we expect carried (the counts
 * differ: our rule would have carried it). */
tc_status_t tc_vx_take(tc_vexchange_t *op, int j, size_t e, char *buf, size_t want, int write);

/* coll/vroot: Gatherv and Scatterv on several nodes (see vexchange.h). */
tc_status_t tc_vroot_init(tc_vexchange_t *op);
tc_status_t tc_vroot_work(tc_vexchange_t *op);
tc_status_t tc_vroot_drain(tc_vexchange_t *op);
void tc_vroot_fini(tc_vexchange_t *op);

#endif
