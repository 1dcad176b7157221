/*
 * coll/owners -- the block owners' shape (coll/reduce, coll/bcast:
 * TC_ALG_OWNERS) and the child nodes a Bcast part may have, in a header
 * without MPI so that the cost model (coll/cost, built without it) takes
 * the same numbers as the algorithms.
 *
 * Owns the constants only.  May call: nothing.
 */
#ifndef TC_COLL_OWNERS_H
#define TC_COLL_OWNERS_H

/* Reduce: a piece (an owner's block of a segment) of at least
 * TC_OWN_PIECE bytes, at most TC_OWN_SEGS segments */
#define TC_OWN_PIECE (4u << 10)
#define TC_OWN_SEGS  4

/* Bcast: a block travels in at most TC_BCAST_OWN_SEGS segments of at
 * least TC_BCAST_OWN_PIECE bytes (an owner forwards one while the next
 * lands; smaller ones cost more in messages than they overlap, as the
 * Reduce's pieces); its first segment rides with its header up to
 * TC_BCAST_OWN_INLINE bytes */
#define TC_BCAST_OWN_SEGS   4
#define TC_BCAST_OWN_PIECE  4096
#define TC_BCAST_OWN_INLINE (16u << 10)

/* a Bcast part's child nodes: a binomial tree's (log2 of the nodes), a
 * block owner's (the nodes - 2) */
#define TC_BCAST_MAXCHILD 32

#endif
