/*
 * coll/ctx -- topocoll's per-communicator context.
 *
 * Owns: tc_ctx_t, hung on the communicator as an MPI attribute
 * (base/cattr), so it goes when the communicator is freed or at
 * MPI_Finalize; and the contexts kept for reuse.
 * A private communicator carries the inter-node messages, so they never
 * match the application's.  May call: PMPI, topo/, xfer/, base/.
 *
 * Cheap communicators.  A context starts cold: the first
 * TOPOCOLL_COMM_LAZY collectives on a communicator go to the native MPI
 * with no set-up and no synchronisation, so a communicator used for a few
 * small calls costs what it costs natively.  The next call (or, when
 * set, the first of TOPOCOLL_COMM_LAZY_MIN bytes or more) builds the
 * context; every rank reaches that same call, since collectives on a
 * communicator are called in the same order everywhere and the decision
 * depends only on the call's count (and size: off by default, as an
 * erroneous call's sizes differ between ranks).  Every collective on a
 * cold context counts, also one a rank passes to the native MPI for its
 * own arguments (tc_ctx_get before that answer).  A built context freed with its communicator is
 * kept, with its node map, shared segment and private communicators, all
 * of which depend only on the group: the next communicator of the same
 * group (MPI_Comm_dup, a split into a known group) takes it over after
 * one MPI_Allreduce that agrees which kept context every rank holds.
 */
#ifndef TC_COLL_CTX_H
#define TC_COLL_CTX_H

#include "../base/cattr.h"
#include "../base/colls.h"
#include "../base/config.h"
#include "../base/status.h"
#include "../topo/node.h"
#include "../xfer/shmseg.h"
#include "ctl.h"

#include <errno.h>
#include <mpi.h>
#include <stdint.h>

/* coll/tune's statistics of one (collective, size class), local rank 0
 * only: moving average (us) and sample count of each intra-node method
 * (0 single copy, 1 CICO), and the calls seen. */
typedef struct tc_tune_stat {
    double us[2];         /* each method's moving average (us) */
    unsigned n[2], calls; /* its samples; calls of the size class */
    double warm[2][3];    /* its first samples after the cold one */
} tc_tune_stat_t;

/* coll/xtune's statistics of one (collective, size class) on several
 * nodes: calls seen since the last measurement (the same on every rank),
 * the method in force, the methods measured (2, or 3 where topocoll has
 * an alternative algorithm at that size), the start of the timed run
 * under way (this rank's clock), and each method's (TC_XT_TOPO,
 * TC_XT_NATIVE, TC_XT_ALT) timed runs on this rank (ns). */
enum { /* a slot per collective the registry's XT column measures */
#define TC_COLL(ID, Name, lower, SHAPE, FLAT, FLAT_DFLT, XT, ALGS) TC_IF_##XT(TC_XT_##ID, )
#include "../base/colls.def"
#undef TC_COLL
       TC_XT_COLLS
};
#define TC_XT_CLASSES 32 /* size classes: floor(log2(bytes)) */
#define TC_XT_TIMED   3  /* timed runs of each method */
typedef struct tc_xt_class {
    uint32_t calls;
    int choice;
    int nm; /* methods measured: 2, or 3 (TC_XT_ALT) */
    double t_run;
    int64_t run_ns[3][TC_XT_TIMED];
    int nrun[3];
} tc_xt_class_t;

/* In a step returning tc_status_t: return the failure of a call (@st). */
#define TC_RETURN_IF_FAILED(st)       \
    do {                              \
        tc_status_t st_ = (st);       \
        if (st_ != TC_OK) return st_; \
    } while (0)

/* The statistics of one collective on a communicator: calls topocoll ran
 * (blocking and nonblocking), of which nonblocking, calls passed to the
 * native MPI as a fallback, and calls left to it by choice on several
 * nodes (tc_ctx_flat, coll/xtune). */
enum {
#define TC_COLL(ID, Name, lower, SHAPE, ...) TC_STAT_##ID,
#include "../base/colls.def" /* the registry of collectives */
#undef TC_COLL
    TC_STATS
};
_Static_assert((int)TC_STATS == (int)TC_NCOLLS, "a statistics slot per collective, TC_CI_* order");
typedef struct tc_coll_stat {
    uint64_t calls, nonblocking, fallbacks, native;
} tc_coll_stat_t;

/* The context's cached buffers (tc_ctx_buf). */
enum { TC_BUF_NODE = 0, TC_BUF_TREE_ACC, TC_BUF_TREE_TMP, TC_BUF_NET, TC_BUF_STAGE, TC_CTX_BUFS };

typedef struct tc_ctx {
    tc_cattr_t link;        /* first: the user's communicator (not owned) and
                               the live list released at MPI_Finalize */
    int cold;               /* 1: not built yet, every call goes to PMPI */
    uint64_t cold_calls;    /* collectives seen while cold */
    int build_due;          /* 1: a nonblocking call would have built it: the
                               next blocking collective does (same on every rank) */
    struct tc_group *group; /* its group's entry among the kept contexts, or NULL */
    int pool_id;            /* its id in that group (-1: not kept when freed) */
    int reused;             /* 1: taken over from a freed communicator */
    int sends_let_go;       /* 1: a failed collective freed sends still in flight:
                               its communicators are not freed (coll/ctx ctx_free) */
    int tainted;            /* 1: a collective failed on it (requests may be in
                               flight): not kept when freed */
    int net_dirty;          /* 1: the last failed collective left network requests
                               in flight (abandoned or let go): tc_ctx_failed */
    MPI_Comm pcomm;         /* private copy of comm's group for our messages */
    MPI_Comm llcomm;        /* node leaders (MPI_COMM_NULL elsewhere) */
    int enabled;            /* 0: everything goes to PMPI on this comm */
    tc_nodemap_t map;
    tc_shm_t *shm; /* NULL when alone on the node */
    const tc_config_t *cfg;
    uint64_t seq;           /* collectives started on this comm (same on all ranks) */
    uint64_t eager_last;    /* seq of the last eager collective (tc_ctx_eager), */
    uint64_t eager_base;    /*   and of the last collective before its run of them */
    int spin;               /* polls before a waiter yields its core */
    int nap;                /* us a waiter then sleeps (tc_config_nap), 0: never */
    size_t copy_chunk;      /* bytes a copy loop takes at a time (tc_ctx_copy_chunk) */
    size_t vx_eager_max;    /* the longest block an irregular exchange's item
                               carries (coll/vexchange: tc_vexchange_eager_max) */
    int all_sc;             /* 1: single copy works on every node of comm */
    int minlocal, maxlocal; /* fewest and most processes on any node */
    int blocked;            /* 1: each node holds a range of consecutive ranks */
    /* Allreduce's slice communicator: the processes with this local rank
     * on every node (local ranks < minlocal), in node order; the ring of
     * each slice runs on it.  Created on first use. */
    MPI_Comm slice;
    int slice_ready;
    char *scratch;          /* fold accumulators (coll/fold), allocated once:
                               one blocking collective runs at a time */
    char *buf[TC_CTX_BUFS]; /* the collectives' large buffers (tc_ctx_buf) */
    size_t buf_size[TC_CTX_BUFS];
    tc_tune_stat_t tune[TC_TUNE_KINDS][TC_TUNE_BUCKETS]; /* coll/tune */
    tc_xt_class_t xt[TC_XT_COLLS][TC_XT_CLASSES];        /* coll/xtune */
    tc_coll_stat_t stat[TC_STATS];                       /* per collective (coll/coll's slot) */
    uint64_t bytes_bcast_net; /* Bcast bytes this process received from the network */
} tc_ctx_t;

/** tc_ctx_get's @bytes that builds the context whatever the call count. */
#define TC_CTX_NOW ((size_t)-1)

/**
 * The context of @comm for a collective moving @bytes (the message, or
 * Allgather's block; 0 for a Barrier), created cold on first use and
 * built (collective over @comm) at the call TOPOCOLL_COMM_LAZY + 1, or at
 * once when @bytes >= TOPOCOLL_COMM_LAZY_MIN (when set) or @bytes is TC_CTX_NOW
 * (topocoll_comm_attach).  Call it only from a collective every rank of
 * @comm enters, with the same @bytes everywhere, once per call.  With
 * @local (a nonblocking call, whose start must be local: MPI 4.0 section
 * 6.12) it never builds: a call that would build leaves the context cold
 * and the build to the communicator's next blocking collective, so
 * nonblocking calls never wait for other ranks here.  Returns NULL for
 * MPI_COMM_NULL, intercommunicators and no memory; a context with
 * enabled == 0 while cold (cold == 1), or when topocoll is disabled or
 * set-up failed on some rank.
 */
tc_ctx_t *tc_ctx_get(MPI_Comm comm, size_t bytes, int local);

/** Create the slice communicator (collective over comm: every rank must
 *  call it in the same collective; the build does it on several nodes, so
 *  nonblocking calls find it made).  0 or an MPI error code. */
int tc_ctx_slices(tc_ctx_t *c);

/** Buffer @which (TC_BUF_*) of at least @bytes, owned by the context
 *  (contents not kept across calls), for the one collective running on it
 *  (blocking collectives and each communicator's nonblocking FIFO run one
 *  at a time): the Reduce leaders' node buffer, the split tree's
 *  accumulator and child buffer, what the inter-node rings and chains
 *  receive before folding it, Alltoall's slice messages (TC_BUF_NET), Bcast's first messages
 *  (TC_BUF_STAGE).  Kept between calls, grown
 * when needed, freed with the context: a fresh allocation per call above glibc's mmap threshold (32
 * MiB at most) is a new mapping whose every page faults (np=4 on 2 virtual nodes, 16 MiB Reduce:
 * 60-110 ms a call instead of ~10).  NULL when out of memory.  Not thread-safe: the caller holds
 * the context (nbc's progress lock for nonblocking operations). */
char *tc_ctx_buf(tc_ctx_t *c, int which, size_t bytes);

/** Forget cached buffer @which without freeing it: a send MPI may still
 *  read was let go from it (a failed collective).  A bounded leak. */
static inline void tc_ctx_buf_leave(tc_ctx_t *c, int which)
{
    c->buf[which] = NULL;
    c->buf_size[which] = 0;
}

/* The inter-node message (bytes) of the chains (Bcast, Reduce), of the
 * slices' rings (Allreduce: a ring chunk, so a segment is TC_NET_SEG x
 * nodes x slices) and of the Allgather leaders' ring (a piece).  S segments take S + N - 2 segment
 * times along N nodes, so small segments pipeline best, and 32 KiB stays
 * below the eager limit of the MPI libraries' TCP transports (Open MPI's
 * btl_tcp_eager_limit is 64 KiB with headers), so no segment waits for a
 * rendezvous handshake, which needs the receiver to be scheduled.  4 hosts
 * x 2 ranks on 2 cores, 1 Gbit/s, 1-16 MiB: Bcast 1.05-1.06x the link
 * bound (1.23-1.59x with bytes/32, at least 64 KiB), Reduce 1.08-1.12x
 * (16 KiB: 1.7x, the intra-node steps per segment dominate); Allreduce by
 * node 1.05-1.06x (1.25-1.31x at 4-16 MiB with bytes/8 segments). */
#define TC_NET_SEG (32u << 10)

/** 1 if a collective of @bytes on @c is left to the native MPI because
 *  its nodes are several and @bytes is at most @flat_max (one of the
 *  TOPOCOLL_*_FLAT_MAX): below that size the native library's flat
 *  algorithms (recursive doubling, binomial trees over every process,
 *  eager sends) beat the hierarchy's hand-offs between processes, as
 *  HAN and MPICH's collective selection also leave them.  The same on
 *  every process. */
int tc_ctx_flat(const tc_ctx_t *c, size_t bytes, size_t flat_max);

/** Bytes a copy loop takes at a time on a core with an L2 of @l2 bytes
 *  (hwloc; 0: unknown): all of it, within 64 KiB-4 MiB; 256 KiB when
 *  unknown.  (Allgather's push at np=2 here, L2 1 MiB: 1 MiB pieces
 *  1.15-1.44x native cold and 1.01-1.24x warm at 512 KiB-16 MiB blocks,
 *  256 KiB pieces 1.15-1.30x and 0.93-1.07x, 64 KiB 0.75-0.78x warm,
 *  4 MiB and more 1.0-1.2x cold.) */
size_t tc_ctx_copy_chunk(size_t l2);

/* One node, Gather, Scatter and their v forms by single copy: of a block
 * of @len bytes between the root and another process, the bytes that
 * process copies, the block's head; the root copies the rest, its tail,
 * from the other end at the same time (1/nlocal of it, in whole cache
 * lines), so the root's core copies where it would wait.  From @min
 * bytes (TOPOCOLL_ROOT_SHARE_MIN, TOPOCOLL_VCOLL_SHARE_MIN; 0: never; the
 * same on both sides, which both know the length); @len where the root
 * copies none. */
static inline size_t tc_ctx_share_head(const tc_ctx_t *c, size_t len, size_t min)
{
    if (!min || len < min || !c->shm) return len;
    return len - (len / (size_t)c->shm->nlocal & ~(size_t)63);
}

/* Eager reductions and Allgathers: at most this many bytes per process
 * (span, block), and this much for the node (every process of an eager
 * Allreduce or Allgather reads every item). */
#define TC_EAGER_MAX  (2u << 10)
#define TC_EAGER_NODE (16u << 10)

/** 1 if a one-node Reduce, Allreduce or Allgather of @bytes per process
 *  (span, block) on @c is eager (the same on every process; the caller
 *  checks it would take the CICO path, untuned). */
static inline int tc_ctx_eager_fits(const tc_ctx_t *c, size_t bytes)
{
    return c->shm && c->map.nnodes == 1 && bytes > 0 && bytes <= TC_EAGER_MAX &&
           bytes <= c->cfg->cico_slot && bytes * (size_t)c->map.lsize <= TC_EAGER_NODE;
}

/* An eager Reduce reads the root's operand in place and only the root
 * reads the others': at most this much for the root to read. */
#define TC_EAGER_ROOT (64u << 10)

/** 1 if a one-node Reduce of @span bytes per process that goes through
 *  the shared segment (the static or tuned CICO choice) is eager: up to
 *  TOPOCOLL_REDUCE_EAGER_MAX and a slot, the root reading at most
 *  TC_EAGER_ROOT.  (Measured at np=2, 16-32 KiB: 1.2-2.8x native while
 *  copies between the cores are fast, 0.35-0.55x while they are slow:
 *  hence the tuner's choice above TOPOCOLL_REDUCE_CICO_MAX.) */
static inline int tc_ctx_eager_reduce_fits(const tc_ctx_t *c, size_t span)
{
    return c->shm && c->map.nnodes == 1 && span > 0 && span <= c->cfg->red_eager_max &&
           span <= c->cfg->cico_slot && span * (size_t)(c->map.lsize - 1) <= TC_EAGER_ROOT;
}

/** Eager collectives (the small Bcast, Reduce, Allreduce and Allgather of
 *  one node, the small exchanges, the irregular exchanges' items):
 *  the writers of call @seq use eager item *@slot (seq modulo the eager
 *  slots; xfer/shmseg tc_shm_item_data), tag it with @seq, and may run
 *  ahead of the readers by that many calls: a writer first waits until
 *  every local process has finished call *@wait, the last one that may
 *  still read that item (or, at the start of a run of eager calls, the
 *  collective before it, which may have used any slot).  Every process
 *  derives the same values: call once per eager collective, in sequence
 *  order. */
/** The eager item an eager collective @seq uses (tc_ctx_eager's *slot,
 *  without its bookkeeping). */
static inline int tc_ctx_eager_slot(const tc_ctx_t *c, uint64_t seq)
{
    return (int)(seq %
                 (uint64_t)(c->cfg->cico_slots < TC_SHM_ITEMS ? c->cfg->cico_slots : TC_SHM_ITEMS));
}

static inline void tc_ctx_eager(tc_ctx_t *c, uint64_t seq, int *slot, uint64_t *wait)
{
    const uint64_t E =
        (uint64_t)(c->cfg->cico_slots < TC_SHM_ITEMS ? c->cfg->cico_slots : TC_SHM_ITEMS);
    *slot = (int)(seq % E);
    if (c->eager_last != seq - 1) c->eager_base = seq - 1;
    c->eager_last = seq;
    *wait = seq > E && seq - E > c->eager_base ? seq - E : c->eager_base;
}

/** @rc of a single-copy read or write sized by our count in a peer's
 *  exposed buffer: beyond its bounds means the peer's count is not ours
 *  (TC_ERR_TRUNCATE, as between nodes); any other status as it is. */
static inline tc_status_t tc_counted(tc_status_t rc)
{
    return rc == TC_ERR_BOUNDS ? TC_ERR_TRUNCATE : rc;
}

/** Cancel and complete the @n point-to-point requests at @r that a
 *  collective left in flight when it failed (MPI_REQUEST_NULL ones are
 *  skipped), so no receive still writes into a buffer that is reused or
 *  freed; each ends as MPI_REQUEST_NULL.  Local. */
void tc_req_abandon(MPI_Request *r, int n);

/** Register @hook, called with every context before it is freed or kept
 *  for reuse (its communicator is going): the nonblocking engine completes
 *  the context's operations there.  One hook per process; set it before
 *  the first context can go.  Thread-safe. */
void tc_ctx_on_release(void (*hook)(tc_ctx_t *c));

/** A collective failed on @c (this rank): never kept for reuse.  On
 *  several nodes, unless the failed operation drained its network traffic
 *  (@drained: it has a drain step and left nothing in flight, net_dirty
 *  clear), topocoll steps aside for the communicator's later collectives
 *  (native), since the failed one's messages may still be in flight on
 *  the private communicators and would match a later one's (a rendezvous
 *  send of a freed buffer, read when matched, crashed Open MPI).  A
 *  drained failure keeps the communicator in topocoll: the ranks where the
 *  call succeeded (another node's counts) keep it too. */
static inline void tc_ctx_failed(tc_ctx_t *c, int drained)
{
    c->tainted = 1;
    if (c->map.nnodes > 1 && (!drained || c->net_dirty)) c->enabled = 0;
    c->net_dirty = 0;
}

/** The context of @comm if one exists (local, never creates). */
tc_ctx_t *tc_ctx_lookup(MPI_Comm comm);

/** 1 if per-domain leaders (package or NUMA node, topo/nic) relay data
 *  that enters the node at one process and that every local process
 *  needs (Bcast, leader-based Allgather; HierKNEM 4.1): @bytes each
 *  process reads, @sc 1 when single copy carries it (CICO never relays).
 *  Policy numa or package: always; auto: from TOPOCOLL_MULTILEADER_MIN
 *  up, when a domain other than the leader's holds two processes or
 *  more (each relay then saves link crossings: the model is
 *  tc_lead_link_bytes).  The same on every process of a node. */
int tc_ctx_relays(const tc_ctx_t *c, size_t bytes, int sc);

#endif
