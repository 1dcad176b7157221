/*
 * xfer/shmseg -- the per-node shared segment of a communicator.
 *
 * Owns: one POSIX shared-memory mapping per (communicator, node): a control
 * line per local process (single-writer flags), each process's table of
 * declared regions (region.h), and each process's copy-in/copy-out (CICO)
 * slots.  The segment is unlinked as soon as every local process has mapped
 * it; a segment that a process dying before then left in /dev/shm is
 * removed by the next segment created on the node (its name holds its
 * creator's pid).  Also decides whether single copy (CMA) works between
 * the node's processes, and keeps, privately, what CMA needs of each of
 * them (pid, seal key: tc_shm_peer_t).
 *
 * Trust: every local process may write any byte of the segment, so what a
 * process reads from it is input to check (docs/security.md): a count or
 * an index read from a peer's line is checked before it indexes memory,
 * and nothing used to aim a copy (a pid, an address) is read from it.
 * May call: PMPI on the node communicator (setup only), libc, base/.
 */
#ifndef TC_XFER_SHMSEG_H
#define TC_XFER_SHMSEG_H

#include "../base/config.h"
#include "../base/status.h"
#include "../base/sync.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#define TC_REGION_SLOTS   64 /* live regions per process */
#define TC_REGION_MAX_IOV 16
#define TC_SHM_ITEMS      8   /* tagged items per process (tc_shm_item_*) */
#define TC_CTL_COLL_BYTES 640 /* the collectives' part of a control line */

/* A tagged item's line: the tag (the collective whose item it is, set when
 * its writing starts) and, for items of at most TC_SHM_ITEM_INLINE bytes,
 * the item itself, so a reader takes one cache line from the writer (as
 * Open MPI's vader fast boxes do).  Larger items are in the writer's CICO
 * slot of the same index, published in pieces of TC_SHM_ITEM_PIECE bytes
 * (the count of bytes written so far), so readers copy or fold a piece
 * while the next one is written. */
#define TC_SHM_ITEM_INLINE 48
#define TC_SHM_ITEM_PIECE  (8u << 10)
typedef struct tc_item_line {
    _Atomic uint64_t tag;
    _Atomic uint64_t bytes;        /* the item's size << 32 | bytes written so far (the
                                      size: readers check it is theirs; set before the tag) */
    char data[TC_SHM_ITEM_INLINE]; /* 16-byte aligned (long double, complex) */
} __attribute__((aligned(TC_CACHELINE))) tc_item_line_t;

/*
 * One control line per local process; every field has a single writer,
 * its owner.  Sequence numbers are the communicator's collective count,
 * so flags are never reset, only advanced.  The transport owns done_seq
 * (every collective ends with it: tc_shm_finish), the items and the setup
 * words; the collectives lay out their own flags in coll[] (coll/ctl.h:
 * zero when the segment is created), which follows done_seq so that the
 * first flags share its cache line.
 */
typedef struct tc_ctl {
    _Atomic uint64_t done_seq;                         /* last collective its owner has finished */
    _Alignas(8) unsigned char coll[TC_CTL_COLL_BYTES]; /* the collectives' flags */
    tc_item_line_t item[TC_SHM_ITEMS];                 /* tagged items its owner writes */
} __attribute__((aligned(TC_CTL_ALIGN))) tc_ctl_t;

/* One inbox line per local process, written only by the producer of the
 * current collective (producers are serialised: a producer starts only
 * after every process finished the previous collective). */
typedef struct tc_inbox {
    _Atomic uint64_t seq; /* the collective whose data the producer delivered to us */
} __attribute__((aligned(TC_CTL_ALIGN))) tc_inbox_t;

/* A declared region, in its owner's table; written only by the owner,
 * read by copiers (xfer/region: one snapshot per copy, validated before
 * use).  gen is odd while the region is live and changes on every create
 * and destroy (a seqlock: a snapshot is consistent if gen is the same
 * before and after it).  key is random (getrandom), the low bits of the
 * region's cookie; seal is a keyed check of every other field under the
 * owner's seal key, which copiers got at setup through MPI
 * (tc_shm_peer_t), so a corrupted descriptor fails as stale. */
typedef struct tc_region_desc {
    _Atomic uint32_t gen;
    _Atomic uint32_t rights;
    _Atomic uint32_t niov;
    _Atomic uint64_t key;
    _Atomic uint64_t len;
    _Atomic uint64_t seal;
    struct {
        _Atomic uint64_t base, len;
    } iov[TC_REGION_MAX_IOV];
} __attribute__((aligned(TC_CACHELINE))) tc_region_desc_t;

/* A region descriptor as a process holds it privately: a copier's
 * snapshot of a peer's (xfer/region tc_region_snapshot), or the owner's
 * own copy of each of its regions, which its own copies use (they never
 * read the shared table). */
typedef struct tc_region_snap {
    uint32_t gen, rights, niov;
    uint64_t key, len, seal;
    struct {
        uint64_t base, len;
    } iov[TC_REGION_MAX_IOV];
} tc_region_snap_t;

/* What a process knows of each local process, from the setup exchange
 * (MPI, never the segment): all that aims a copy or checks a descriptor. */
typedef struct tc_shm_peer {
    uint64_t pid;   /* its process id: the target of its regions' CMA copies */
    uint64_t seal;  /* the key of its region descriptors' seals (random) */
    uint64_t probe; /* setup only: the address of its probe word */
} tc_shm_peer_t;

/* KNEM's asynchronous copies (KNEM paper, sections 3.4 and 4.3): a copy
 * submitted by this process, run later by its progress thread (the
 * paper's kernel-thread offload) or when it polls; the result goes to the
 * caller's status word.  Process-local (not in the shared segment). */
#define TC_ASYNC_SLOTS 64
enum { TC_ASYNC_FREE = 0, TC_ASYNC_QUEUED };
typedef struct tc_async {
    _Atomic int state;        /* FREE -> QUEUED (submitter, release) -> FREE (executor) */
    int region_copy;          /* 1: region to region, 0: inline */
    uint64_t cookie, cookie2; /* inline: the region; region copy: source, destination */
    size_t offset, offset2, len;
    int dir, nlocal;
    struct iovec local[TC_REGION_MAX_IOV];
    long long *status; /* the caller's status word */
} tc_async_t;

typedef struct tc_shm {
    void *base;
    size_t size;
    int nlocal;                        /* processes on the node */
    int me;                            /* this process's local rank */
    tc_ctl_t *ctl;                     /* [nlocal] */
    tc_inbox_t *inbox;                 /* [nlocal] */
    tc_region_desc_t *regions;         /* [nlocal][TC_REGION_SLOTS] */
    char *cico;                        /* [nlocal][cico_slots][cico_slot] */
    _Atomic uint64_t *lane;            /* [nlocal][lane_row]: per process, counters of its
                                          copy-in/copy-out lanes (tc_shm_lane_*), written
                                          only by that process */
    size_t lane_row;                   /* counters per process (3 * nlocal, padded) */
    size_t cico_slot;                  /* bytes per slot */
    int cico_slots;                    /* slots per process */
    int single_copy;                   /* 1: CMA works between every pair tested */
    int ptracer;                       /* 1: single copy needed our PR_SET_PTRACER (Yama) */
    char why[128];                     /* why single_copy is what it is */
    tc_shm_peer_t *peer;               /* [nlocal], private (setup exchange) */
    _Atomic uint64_t region_used;      /* bitmap of this process's live region slots
                                          (atomic: a thread freeing a persistent request
                                          destroys its regions beside a running call) */
    _Atomic int region_kept;           /* of which kept across calls (tc_region_keep_t) */
    _Atomic uint64_t regions_declared; /* statistics: regions this process declared */
    uint64_t probe;                    /* word read by peers to test CMA */
    uint64_t bytes_sc;                 /* statistics: bytes this process moved by CMA */
    uint64_t bytes_cico;               /*             and through CICO slots */
    char *bounce;                      /* region copies between two peers' regions: CMA
                                          has no third-party copy, they go through here
                                          (the calling thread's copies) */
    char *bounce_async;                /* the same, for asynchronous copies (run by the
                                          progress thread beside the application's) */
    tc_async_t async[TC_ASYNC_SLOTS];  /* submitted asynchronous copies */
    _Atomic int async_queued;
    _Atomic uint64_t done_seen; /* every other local process had finished this
                               collective when we last looked (tc_shm_all_done) */
    /* This process's regions as it declared them (xfer/region): its own
     * copies use these, never the shared table, and its cookies' keys are
     * SipHash of a counter under a secret drawn from getrandom at setup
     * (no system call per region). */
    tc_region_snap_t own[TC_REGION_SLOTS];
    uint64_t key_secret[2];
    _Atomic uint64_t key_next;
} tc_shm_t;

/**
 * Create and map the segment of node communicator @lcomm (collective over
 * @lcomm), then probe single copy according to @cfg.  On failure of any
 * local process every one of them gets -1 and nothing is left mapped or
 * in /dev/shm.  Returns 0 or -1.
 */
int tc_shm_create(MPI_Comm lcomm, const tc_config_t *cfg, tc_shm_t **out);

/** Unmap and free (local; the name is already unlinked). */
void tc_shm_destroy(tc_shm_t *s);

/** Fill @buf with @len random bytes from getrandom(2): 0, or -1 (errno). */
int tc_shm_random(void *buf, size_t len);

/** This process has finished collective @seq (every collective ends with
 *  it, so a producer of the next one can tell its readers are done).  The
 *  release orders every earlier store of ours (reads of others' buffers,
 *  resets of our flags) before it. */
static inline void tc_shm_finish(tc_shm_t *s, uint64_t seq)
{
    atomic_store_explicit(&s->ctl[s->me].done_seq, seq, memory_order_release);
}

/** 1 when every other local process has finished collective @seq.  The
 *  acquire pairs with the release in tc_shm_finish: after it, those
 *  processes no longer read our buffers, slots or flags of @seq. */
static inline int tc_shm_all_done(tc_shm_t *s, uint64_t seq)
{
    /* Acquire: pairs with the release below, by this or another thread of
     * ours, after the acquires that saw every process finish that far.
     * Saves reading nlocal lines that their owners write on every call. */
    if (atomic_load_explicit(&s->done_seen, memory_order_acquire) >= seq) return 1;
    uint64_t lo = UINT64_MAX;
    for (int i = 0; i < s->nlocal; i++) {
        if (i == s->me) continue;
        uint64_t d = atomic_load_explicit(&s->ctl[i].done_seq, memory_order_acquire);
        if (d < seq) return 0;
        if (d < lo) lo = d;
    }
    /* Release: see above.  A racing thread may store an older bound: it
     * only makes a later call look again. */
    if (lo != UINT64_MAX) atomic_store_explicit(&s->done_seen, lo, memory_order_release);
    return 1;
}

/** An item's writer of call @seq may write it once every other local
 *  process has finished call @wait (the collectives derive @wait from how
 *  far ahead of its readers a writer may run: coll/ctx tc_ctx_eager).  When that is
 *  not yet known here, it waits for more, up to half the items
 *  further (never past @seq - 1), so that it reads the others' lines, which
 *  they write on every call, once every few calls and not on each. */
static inline int tc_shm_item_free(tc_shm_t *s, uint64_t wait, uint64_t seq)
{
    if (atomic_load_explicit(&s->done_seen, memory_order_acquire) >= wait) return 1;
    uint64_t want = wait + TC_SHM_ITEMS / 2;
    return tc_shm_all_done(s, want < seq ? want : seq - 1);
}

/* Lanes: a process's CICO area cut into nlocal lanes of two slots each,
 * for pipelined copy-in/copy-out between every pair (Allreduce above the
 * slots' capacity).  Counters are cumulative item counts over the
 * communicator's life (so they need no reset: when every process has
 * finished a collective, every item sent has been consumed). */
/** Items process @i has posted on its lane @l (to @l; @l == @i: its
 *  broadcast lane, read by every other process). */
static inline _Atomic uint64_t *tc_shm_lane_sent(const tc_shm_t *s, int i, int l)
{
    return &s->lane[(size_t)i * s->lane_row + (size_t)l];
}
/** Items process @i has consumed from process @p's lane to @i. */
static inline _Atomic uint64_t *tc_shm_lane_got(const tc_shm_t *s, int i, int p)
{
    return &s->lane[(size_t)i * s->lane_row + (size_t)s->nlocal + (size_t)p];
}
/** Items process @i has consumed from process @p's broadcast lane. */
static inline _Atomic uint64_t *tc_shm_lane_bgot(const tc_shm_t *s, int i, int p)
{
    return &s->lane[(size_t)i * s->lane_row + 2 * (size_t)s->nlocal + (size_t)p];
}

/** Bytes of each of the two slots of a lane: the CICO area split into
 *  2 * nlocal, cache-line aligned. */
static inline size_t tc_shm_lane_bytes(const tc_shm_t *s)
{
    return ((size_t)s->cico_slots * s->cico_slot / (2 * (size_t)s->nlocal)) & ~(size_t)63;
}

/** 1 if the lanes are worth pipelining through: slots of 4 KiB or more
 *  (one rule for every user of the lanes). */
static inline int tc_shm_lanes_usable(const tc_shm_t *s) { return tc_shm_lane_bytes(s) >= 4096; }

/** Slot of process @owner's lane @l holding item @item. */
static inline char *tc_shm_lane_slot(const tc_shm_t *s, int owner, int l, uint64_t item)
{
    return s->cico + (size_t)owner * (size_t)s->cico_slots * s->cico_slot +
           ((size_t)l * 2 + (size_t)(item % 2)) * tc_shm_lane_bytes(s);
}

/* Broadcast ring: a process's whole CICO area as TC_SHM_RING slots that
 * every other local process copies out of (Allgather above the slots'
 * capacity).  It shares the broadcast lane's counters (tc_shm_lane_sent
 * (s, i, i) and tc_shm_lane_bgot): only one collective at a time uses a
 * communicator's slots, and each ends with every item consumed. */
#define TC_SHM_RING 4
/** Bytes of each slot of the broadcast ring, cache-line aligned. */
static inline size_t tc_shm_ring_bytes(const tc_shm_t *s)
{
    return ((size_t)s->cico_slots * s->cico_slot / TC_SHM_RING) & ~(size_t)63;
}

/** Slot of process @owner's broadcast ring holding item @item. */
static inline char *tc_shm_ring_slot(const tc_shm_t *s, int owner, uint64_t item)
{
    return s->cico + (size_t)owner * (size_t)s->cico_slots * s->cico_slot +
           (size_t)(item % TC_SHM_RING) * tc_shm_ring_bytes(s);
}

/** The @slot-th CICO slot of local process @owner. */
static inline char *tc_shm_cico(const tc_shm_t *s, int owner, int slot)
{
    return s->cico + ((size_t)owner * (size_t)s->cico_slots + (size_t)slot) * s->cico_slot;
}

/** Where local process @owner's item @slot of @bytes lies: in its
 *  tag's line up to TC_SHM_ITEM_INLINE bytes, else in its CICO slot @slot. */
static inline char *tc_shm_item_data(const tc_shm_t *s, int owner, int slot, size_t bytes)
{
    return bytes <= TC_SHM_ITEM_INLINE ? s->ctl[owner].item[slot].data
                                       : tc_shm_cico(s, owner, slot);
}

/** Item @slot of this process: once tc_shm_item_free(@wait, @seq),
 *  copies @bytes from @src into it under tag @seq (release), piece by
 *  piece for a slot item.  1 done, 0 not yet (the item's last readers
 *  are not done). */
static inline int tc_shm_item_put(tc_shm_t *s, const void *src, size_t bytes, int slot,
                                  uint64_t seq, uint64_t wait)
{
    if (!tc_shm_item_free(s, wait, seq)) return 0;
    tc_item_line_t *l = &s->ctl[s->me].item[slot];
    char *d = tc_shm_item_data(s, s->me, slot, bytes);
    const uint64_t size = (uint64_t)bytes << 32; /* (items fit a CICO slot: < 4 GiB) */
    if (bytes <= TC_SHM_ITEM_INLINE) {
        memcpy(d, src, bytes);
        atomic_store_explicit(&l->bytes, size | bytes, memory_order_relaxed);
        /* Release: the item and its size before its tag. */
        atomic_store_explicit(&l->tag, seq, memory_order_release);
        return 1;
    }
    atomic_store_explicit(&l->bytes, size, memory_order_relaxed);
    /* Release: the size and reset count before the tag. */
    atomic_store_explicit(&l->tag, seq, memory_order_release);
    for (size_t off = 0; off < bytes;) {
        size_t n = bytes - off < TC_SHM_ITEM_PIECE ? bytes - off : TC_SHM_ITEM_PIECE;
        memcpy(d + off, (const char *)src + off, n);
        off += n;
        /* Release: the piece before the count. */
        atomic_store_explicit(&l->bytes, size | off, memory_order_release);
    }
    return 1;
}

/** Item @slot of this process, written in place: once
 *  tc_shm_item_free(@wait, @seq), where its @bytes go (the caller writes
 *  them, then tc_shm_item_publish); NULL not yet (the item's last readers
 *  are not done).  For items whose writer builds them from several
 *  sources (coll/vexchange: a header, then blocks). */
static inline char *tc_shm_item_begin(tc_shm_t *s, size_t bytes, int slot, uint64_t seq,
                                      uint64_t wait)
{
    return tc_shm_item_free(s, wait, seq) ? tc_shm_item_data(s, s->me, slot, bytes) : NULL;
}

/** Publish item @slot of @bytes, written since tc_shm_item_begin, under
 *  tag @seq: whole at once (release: every byte of it before the tag). */
static inline void tc_shm_item_publish(tc_shm_t *s, size_t bytes, int slot, uint64_t seq)
{
    tc_item_line_t *l = &s->ctl[s->me].item[slot];
    atomic_store_explicit(&l->bytes, (uint64_t)bytes << 32 | bytes, memory_order_relaxed);
    /* Release: the item and its size before its tag. */
    atomic_store_explicit(&l->tag, seq, memory_order_release);
}

#define TC_SHM_ITEM_BROKEN    ((size_t)-1) /* a newer tag, or a count beyond the size */
#define TC_SHM_ITEM_OTHERSIZE ((size_t)-2) /* the writer's item has another size */

/* The size word of local process @owner's item @slot when its tag is
 * @seq (acquire: the item's bytes up to its count visible from here on):
 * 1 and *@w, 0 another call's tag not newer (not yet), -1 a newer tag. */
static inline int tc_shm_item_word(const tc_shm_t *s, int owner, int slot, uint64_t seq,
                                   uint64_t *w)
{
    tc_item_line_t *l = &s->ctl[owner].item[slot];
    uint64_t tag = atomic_load_explicit(&l->tag, memory_order_acquire);
    if (tag > seq) return -1;
    if (tag != seq) return 0;
    *w = atomic_load_explicit(&l->bytes, memory_order_acquire);
    return 1;
}

/** Bytes of local process @owner's item @slot (of @bytes) for call @seq
 *  present now (acquire: visible from here on), never more than @bytes:
 *  0 none yet; TC_SHM_ITEM_BROKEN a newer tag or a count beyond @bytes
 *  (the protocol broke, or the peer's line is corrupt), or
 *  TC_SHM_ITEM_OTHERSIZE an item of another size (an erroneous call whose
 *  counts differ): errors, not waits. */
static inline size_t tc_shm_item_avail(const tc_shm_t *s, int owner, int slot, uint64_t seq,
                                       size_t bytes)
{
    uint64_t w = 0;
    const int got_word = tc_shm_item_word(s, owner, slot, seq, &w);
    if (got_word <= 0) return got_word < 0 ? TC_SHM_ITEM_BROKEN : 0;
    if (w >> 32 != (uint64_t)bytes) return TC_SHM_ITEM_OTHERSIZE;
    uint64_t got = w & 0xffffffffu;
    return got <= bytes ? (size_t)got : TC_SHM_ITEM_BROKEN; /* the peer's word: checked */
}

/** The size of local process @owner's item @slot for call @seq once it
 *  is whole (acquire: its bytes visible from here on): 0 not yet;
 *  TC_SHM_ITEM_BROKEN a newer tag, or a size the slot cannot hold (the
 *  peer's word: checked).  For readers that do not know the size (a
 *  header inside the item says what it holds). */
static inline size_t tc_shm_item_whole(const tc_shm_t *s, int owner, int slot, uint64_t seq)
{
    uint64_t w = 0;
    const int got_word = tc_shm_item_word(s, owner, slot, seq, &w);
    if (got_word <= 0) return got_word < 0 ? TC_SHM_ITEM_BROKEN : 0;
    const uint64_t size = w >> 32;
    if (size == 0 || size > s->cico_slot) return TC_SHM_ITEM_BROKEN;
    return (w & 0xffffffffu) == size ? (size_t)size : 0;
}

/** The status of a failed tc_shm_item_avail: TC_ERR_TRUNCATE for an item
 *  of another size, else TC_ERR_PROTO. */
static inline tc_status_t tc_shm_item_error(size_t a)
{
    return a == TC_SHM_ITEM_OTHERSIZE ? TC_ERR_TRUNCATE : TC_ERR_PROTO;
}

/** 1 when every local process's item @slot (of @bytes) for @seq is
 *  complete, 0 not yet, or the status of a failed tc_shm_item_avail
 *  (tc_shm_item_error, < 0). */
static inline int tc_shm_item_ready(const tc_shm_t *s, int slot, uint64_t seq, size_t bytes)
{
    for (int i = 0; i < s->nlocal; i++) {
        size_t a = tc_shm_item_avail(s, i, slot, seq, bytes);
        if (a >= TC_SHM_ITEM_OTHERSIZE) return (int)tc_shm_item_error(a);
        if (a < bytes) return 0;
    }
    return 1;
}

#endif
