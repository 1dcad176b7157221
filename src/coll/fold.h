/*
 * coll/fold -- the intra-node reduction engine shared by Reduce and
 * Allreduce: the vector is cut into pipeline segments, each segment into
 * one piece per worker; a worker folds its piece of every local process's
 * input, reading the peers' buffers directly by single copy (HierKNEM
 * section 3.3: the node's reduction spread over its cores, no
 * intermediate copy through shared memory).
 *
 * Fold order: canonical, s_0 op (s_1 op (... op s_{n-1})) over local
 * ranks, for non-commutative ops; commutative ones may start from a
 * peer's operand (see tc_fold_piece).  Either way the order is fixed for
 * a given layout, and each element is computed by one worker only.  Work
 * goes through a cache-sized accumulator (TC_FOLD_CHUNK bytes) so each
 * input is read from memory once.
 *
 * Owns: tc_part_t and the fold scratch.  May call: coll/op, xfer/.
 */
#ifndef TC_COLL_FOLD_H
#define TC_COLL_FOLD_H

#include "ctx.h"
#include "op.h"

#include <stddef.h>
#include <stdint.h>

#define TC_FOLD_CHUNK (256u << 10) /* accumulator bytes (fits L1/L2) */

/* Segment-major partition of @count elements: segment i holds elements
 * [i*seg, min((i+1)*seg, count)); its piece j (of nw) the elements
 * [lo + len*j/nw, lo + len*(j+1)/nw). */
typedef struct tc_part {
    size_t count, seg, nseg;
    int nw;
    int heavy;  /* worker with a larger piece, -1: none */
    int wh, wo; /* weights of the heavy worker and of the others */
} tc_part_t;

void tc_part_init(tc_part_t *p, size_t count, size_t seg_elems, int nw);
/** Give worker @w a piece @wh/@wo times the others' (Reduce: the root
 *  writes its pieces locally, the others by an extra single copy). */
void tc_part_weigh(tc_part_t *p, int w, int wh, int wo);
/** Piece (@i, @j): first element and element count. */
void tc_part_piece(const tc_part_t *p, size_t i, int j, size_t *first, size_t *n);

/** 1 if a Reduce or Allreduce of @bytes (span) per process goes through
 *  the CICO slots: TOPOCOLL_REDUCE_CICO_MAX, within the slots' capacity.
 *  Config-derived only, so every rank decides alike. */
int tc_fold_uses_cico(const tc_ctx_t *ctx, size_t bytes);

/** Default segment (elements) for a reduction of @count elements of @t
 *  over @nw workers: TOPOCOLL_REDUCE_SEGSIZE, else on one node the whole
 *  vector (nothing to overlap), else HierKNEM Table 1 for Reduce (64 KiB
 *  up to 16 MiB, 1 MiB above) per worker, raised so that there are at
 *  most ~8 segments. */
size_t tc_fold_segsize(const tc_ctx_t *ctx, const tc_rtype_t *t, size_t count, int nw);

/** Scratch for folds: two accumulators of TC_FOLD_CHUNK, the context's
 *  (allocated on first use and kept: a fresh 256 KiB allocation per call
 *  was an mmap and 64 page faults).  0 or -1 (no memory). */
typedef struct tc_fold_scratch {
    char *acc, *in;
} tc_fold_scratch_t;
int tc_fold_scratch_get(tc_ctx_t *ctx, tc_fold_scratch_t *f);
void tc_fold_scratch_put(tc_fold_scratch_t *f);

/** Fold elements [@first, @first+@n) of every local process's CICO slots
 *  (each holding its input from offset 0) into @dst (n elements: the
 *  piece itself, not a buffer base), local memory that is not a slot.
 *  MPI_SUCCESS or an error. */
tc_status_t tc_fold_slots(tc_shm_t *s, const tc_rtype_t *t, size_t first, size_t n, char *dst);

/** One node, through the slots, the reduce-scatter step: fold this
 *  process's share (piece s->me of s->nlocal equal pieces of @count
 *  elements) of every slot into @dst at the piece's offset (@dst laid out
 *  like the inputs; NULL: into the scratch @f, or a temporary).  With
 *  @publish, the result also goes over the piece in this process's own
 *  slot (only it reads that piece) and prog = 1 is released for the
 *  peers' tc_fold_slots_gather.  MPI_SUCCESS or an error. */
tc_status_t tc_fold_slots_share(tc_shm_t *s, const tc_rtype_t *t, size_t count, char *dst,
                                int publish, tc_fold_scratch_t *f);

/** The allgather step after tc_fold_slots_share: copy every other local
 *  process's published piece into @out (laid out like the inputs) as each
 *  is released.  *@got counts the local ranks done (start at 0).
 *  MPI_SUCCESS once all are copied, TC_INPROGRESS before (never blocks). */
tc_status_t tc_fold_slots_gather(tc_shm_t *s, const tc_rtype_t *t, size_t count, char *out,
                                 size_t *got);

/**
 * Fold elements [@first, @first+@n) of every local process's input.
 * Process k's input is region @cookies[k] (element 0 at region offset 0),
 * except this process's, read at @own.  The result goes to @dst (local
 * memory laid out like the inputs; NULL: none; may alias @own, MPI_IN_PLACE)
 * and, while each chunk is still in cache, is written by single copy into
 * each of the @npush regions @push (at byte offset first*extent): writing
 * from cache costs less than letting the peers read it back from memory.
 * Returns MPI_SUCCESS or an MPI error code.
 */
tc_status_t tc_fold_piece(tc_shm_t *s, const tc_rtype_t *t, const uint64_t *cookies,
                          const char *own, size_t first, size_t n, char *dst, const uint64_t *push,
                          int npush, tc_fold_scratch_t *f);

/** Write elements [@first, @first+@n) of @src (laid out like the inputs)
 *  into each of the @npush regions @push.  MPI_SUCCESS or an error. */
tc_status_t tc_fold_push(tc_shm_t *s, const tc_rtype_t *t, const char *src, size_t first, size_t n,
                         const uint64_t *push, int npush);

/** The local prefix (coll/hscan): elements [0, @n) of the operands of
 *  local ranks 0 .. @upto - 1 folded as tc_fold_piece folds all of them
 *  (canonical order, s_0 op (s_1 op (... op s_{upto-1})), for
 *  non-commutative ops), into @dst (local memory that is no operand;
 *  nothing when @upto is 0).  Process k's operand is region @cookies[k],
 *  ours is read at @own.  MPI_SUCCESS or an error. */
tc_status_t tc_fold_prefix(tc_shm_t *s, const tc_rtype_t *t, const uint64_t *cookies,
                           const char *own, int upto, size_t n, char *dst, tc_fold_scratch_t *f);

/** Publish this process's progress @v in the posted collective (release:
 *  after whatever it wrote before), and read local process @j's
 *  (acquire).  prog is reset to 0 by tc_fold_post. */
static inline void tc_fold_progress(tc_shm_t *s, uint64_t v)
{
    atomic_store_explicit(&tc_cctl(s, s->me)->prog, v, memory_order_release);
}
static inline uint64_t tc_fold_peer_progress(const tc_shm_t *s, int j)
{
    return atomic_load_explicit(&tc_cctl(s, j)->prog, memory_order_acquire);
}

/** Wait-free check: have all local processes posted their cookies for
 *  collective @seq?  Fills @in / @out (may be NULL) on success. */
int tc_fold_all_posted(const tc_shm_t *s, uint64_t seq, uint64_t *in, uint64_t *out);

/** Eager reductions (one node, small vectors; tc_ctx_eager): every local
 *  process has copied its operand into its CICO slot @slot and tagged it
 *  with @seq.  This writes its own: waits (TC_INPROGRESS, never blocks)
 *  until every local process has finished call @wait, then copies @count
 *  elements of @t from @in (span bytes) into the slot and releases the
 *  tag.  MPI_SUCCESS or TC_INPROGRESS. */
tc_status_t tc_fold_eager_post(tc_shm_t *s, const tc_rtype_t *t, size_t count, const void *in,
                               int slot, uint64_t seq, uint64_t wait);
/** Folds, in canonical order s_0 op (s_1 op (... op s_{n-1})), the
 *  elements from *@done on that every local process's item @slot for @seq
 *  holds by now (ours aside when @own is given), into @dst; *@done
 *  advances.  Ours is read from @own (NULL: from our item, which every
 *  reader of an Allreduce shares), the others' from their items, piece
 *  by piece as their writers publish them.  When @dst is @own
 *  (MPI_IN_PLACE) each piece is folded in @acc (span bytes) and copied
 *  over.  The same bytes on every process that calls it.  MPI_SUCCESS
 *  (all folded), TC_INPROGRESS, or MPI_ERR_INTERN (a newer tag: the
 *  protocol broke). */
tc_status_t tc_fold_eager(tc_shm_t *s, const tc_rtype_t *t, size_t count, int slot, uint64_t seq,
                          const char *own, char *dst, char *acc, size_t *done);

/** Publish this process's cookies for @seq (prog reset to 0). */
void tc_fold_post(tc_shm_t *s, uint64_t seq, uint64_t in_cookie, uint64_t out_cookie);

#endif
