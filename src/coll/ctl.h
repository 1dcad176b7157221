/*
 * coll/ctl -- the collectives' flags in each local process's control line
 * of the node segment (xfer/shmseg gives each line TC_CTL_COLL_BYTES for
 * them, zero at creation).  Every field has a single writer, the line's
 * owner; sequence numbers are the communicator's collective count.
 *
 * Owns: the layout of those bytes, the tuner's (collective, size class)
 * table dimensions.  May call: xfer/shmseg.
 */
#ifndef TC_COLL_CTL_H
#define TC_COLL_CTL_H

#include "../base/status.h"
#include "../xfer/shmseg.h"

#include <stdatomic.h>
#include <stdint.h>

#define TC_CTL_PARTS    4            /* parts a producer publishes separately (Bcast's rails) */
#define TC_TUNE_KINDS   4            /* collectives tuned online (coll/tune) */
#define TC_TUNE_BUCKETS 12           /* size classes per collective (8 KiB-16 MiB) */
#define TC_CTL_ABORTS   TC_SHM_ITEMS /* failed collectives a line remembers */

typedef struct tc_cctl {
    /* As a producer (the process whose buffer feeds the node) the owner
     * writes ready_seq/ready_bytes/cookie; as a consumer, cons_bytes. */
    _Atomic uint64_t ready_seq;                 /* collective whose data it publishes */
    _Atomic uint64_t ready_bytes[TC_CTL_PARTS]; /* bytes of each part of ready_seq
                                                   available (Bcast over several rails:
                                                   one part per rail) */
    _Atomic uint64_t cookie;                    /* region of its buffer for ready_seq */
    _Atomic uint64_t cons_bytes;                /* bytes consumed in the current one */
    _Atomic uint64_t recv_seq;                  /* collective whose buffer it exposes */
    _Atomic uint64_t recv_cookie;               /* writable region of that buffer */
    _Atomic uint64_t arrive_seq;                /* barrier: collective this process reached */
    _Atomic uint64_t release_seq;               /* barrier (leader): collective released */
    /* all-participant collectives (Reduce, Allreduce, Allgather): every
     * process exposes its buffers and reports progress on its own part */
    _Atomic uint64_t post_seq;   /* collective whose cookies/prog are below */
    _Atomic uint64_t in_cookie;  /* its input (send buffer), readable */
    _Atomic uint64_t out_cookie; /* its output (receive buffer) */
    _Atomic uint64_t prog;       /* units of its own part finished (reset to
                                    0 before post_seq is published) */
    _Atomic uint64_t push_seq;   /* Allgather: collective whose block it has
                                    written into every local peer's buffer */
    /* coll/tune, local rank 0's line only: the method chosen per
     * (collective, size class), as (old | new << 1 | from_seq << 2) */
    _Atomic uint64_t tune[TC_TUNE_KINDS * TC_TUNE_BUCKETS];
    _Atomic uint64_t tune_seq; /* coll/tune, local rank 0: the tuned Bcast it
                                  has started (its choice word is written) */
    /* Failure: the collectives its owner failed, and how (a tc_status_t,
     * written before the sequence number), so the processes waiting for it
     * fail too (the drivers check it while they wait:
     * tc_cctl_peer_failed).  A ring by sequence number: a process that
     * failed a call and went on to fail the next ones must not hide the
     * first from a process still inside it (the others may run up to the
     * eager items' TC_SHM_ITEMS calls ahead). */
    _Atomic uint64_t abort_seq[TC_CTL_ABORTS];
    _Atomic int32_t abort_status[TC_CTL_ABORTS];
    _Atomic uint64_t total; /* Bcast's source: the bytes of ready_seq's message */
} tc_cctl_t;

_Static_assert(sizeof(tc_cctl_t) <= TC_CTL_COLL_BYTES, "the collectives' flags fit the line");

/** The collectives' flags of local process @i. */
static inline tc_cctl_t *tc_cctl(const tc_shm_t *s, int i)
{
    return (tc_cctl_t *)(void *)s->ctl[i].coll;
}

/** This process has finished collective @seq (xfer/shmseg tc_shm_finish).
 *  cons_bytes is reset before done_seq is published, so a producer that
 *  acquires done_seq >= seq reads 0 (or newer progress), never stale. */
static inline void tc_cctl_finish(tc_shm_t *s, uint64_t seq)
{
    atomic_store_explicit(&tc_cctl(s, s->me)->cons_bytes, 0, memory_order_relaxed);
    tc_shm_finish(s, seq);
}

/** This process failed collective @seq with @st: said to the local
 *  processes (release: after whatever it wrote), and finished, so the next
 *  collective does not wait for it. */
static inline void tc_cctl_abort(tc_shm_t *s, uint64_t seq, tc_status_t st)
{
    tc_assert(st < 0 && seq > 0);
    tc_cctl_t *me = tc_cctl(s, s->me);
    const size_t k = (size_t)(seq % TC_CTL_ABORTS);
    atomic_store_explicit(&me->abort_status[k], (int32_t)st, memory_order_relaxed);
    /* Release: the status before the sequence number. */
    atomic_store_explicit(&me->abort_seq[k], seq, memory_order_release);
    tc_cctl_finish(s, seq);
}

/** TC_OK, or the failure a local process published for collective @seq
 *  (a status it wrote that is not one: TC_ERR_PROTO).  The drivers call it
 *  while an operation waits, so no wait outlives a peer's failure. */
static inline tc_status_t tc_cctl_peer_failed(const tc_shm_t *s, uint64_t seq)
{
    for (int i = 0; s && i < s->nlocal; i++) {
        if (i == s->me) continue;
        tc_cctl_t *c = tc_cctl(s, i);
        /* Acquire: pairs with the release in tc_cctl_abort. */
        const size_t k = (size_t)(seq % TC_CTL_ABORTS);
        if (atomic_load_explicit(&c->abort_seq[k], memory_order_acquire) != seq) continue;
        int64_t st = atomic_load_explicit(&c->abort_status[k], memory_order_relaxed);
        return tc_status_is_error(st) ? (tc_status_t)st : TC_ERR_PROTO;
    }
    return TC_OK;
}

/** A failure @st of ours in collective @seq after we exposed a buffer
 *  (the caller then returns it once no local process copies into or out
 *  of that buffer any more): said to the local processes at once, and
 *  returned.  A region gone under our copy (TC_ERR_STALE) means its owner
 *  left after a failure, whose cause is the one to say. */
static inline tc_status_t tc_cctl_fail_exposed(tc_shm_t *s, uint64_t seq, tc_status_t st)
{
    const tc_status_t peer = st == TC_ERR_STALE ? tc_cctl_peer_failed(s, seq) : TC_OK;
    if (peer != TC_OK) st = peer;
    tc_cctl_abort(s, seq, st);
    return st;
}

/** The status of collective @seq that failed here with @st (< 0), or
 *  that a waiting driver saw a local peer fail (@st: the peer's, from
 *  tc_cctl_peer_failed): a peer's failure wins (ours is likely its
 *  consequence: a region it destroyed), and we finish without waiting;
 *  else ours is published (tc_cctl_abort).  The blocking driver and the
 *  nonblocking engine end a failed operation with it alike. */
static inline tc_status_t tc_cctl_settle(tc_shm_t *s, uint64_t seq, tc_status_t st)
{
    if (!s) return st;
    tc_status_t peer = tc_cctl_peer_failed(s, seq);
    if (peer != TC_OK) {
        tc_cctl_finish(s, seq); /* (the next collective need not wait for us) */
        return peer;
    }
    tc_cctl_abort(s, seq, st); /* the local processes waiting for us fail too */
    return st;
}

#endif
