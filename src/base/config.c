/* base/config -- see config.h. */
#include "config.h"
#include "colls.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static tc_config_t g_config; /* written once under pthread_once */
static pthread_once_t g_config_once = PTHREAD_ONCE_INIT;

double tc_parse_rate(const char *s)
{
    char *end;
    if (!s) return -1;
    double v = strtod(s, &end);
    if (end == s) return -1;
    switch (*end) { /* decimal, as link rates are given */
    case 'k':
    case 'K': v *= 1e3, end++; break;
    case 'm':
    case 'M': v *= 1e6, end++; break;
    case 'g':
    case 'G': v *= 1e9, end++; break;
    default: break;
    }
    if (strncmp(end, "bit", 3) == 0) end += 3;
    return *end || !(v > 0) || !isfinite(v) ? -1 : v;
}

long long tc_parse_size(const char *s)
{
    char *end;
    if (!s || !isdigit((unsigned char)s[0])) return -1; /* no sign, no blank */
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE) return -1;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    default: break;
    }
    if (shift) {
        end++;
        if (*end == 'i' || *end == 'I') end++; /* "KiB" */
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end || v > (LLONG_MAX >> shift)) return -1; /* other text, or it would overflow */
    return v << shift;
}

/* ---- The table ---------------------------------------------------------------- */

static const tc_param_choice_t ch_vn_order[] = { { "block", TC_VN_BLOCK, 0 },
                                                 { "cyclic", TC_VN_CYCLIC, 0 },
                                                 { NULL, 0, 0 } };
static const tc_param_choice_t ch_single_copy[] = {
    { "auto", TC_SC_AUTO, 0 }, { "cma", TC_SC_CMA, 0 }, { "none", TC_SC_NONE, 0 }, { NULL, 0, 0 }
};
static const tc_param_choice_t ch_tune[] = { { "0", TC_TUNE_OFF, 0 },
                                             { "1", TC_TUNE_ON, 0 },
                                             { "cico", TC_TUNE_FORCE_CICO, 0 },
                                             { NULL, 0, 0 } };
/* TOPOCOLL_<COLL>_ALG: per collective, the words of its algorithms
 * (base/colls.def's ALGS column), filled before the first parse
 * (config_parse). */
static tc_param_choice_t ch_alg[TC_NCOLLS][TC_ALGS + 1];
static const tc_param_choice_t ch_placement[] = { { "bind", TC_PLACE_BIND, 0 },
                                                  { "numa", TC_PLACE_NUMA, 0 },
                                                  { "odd-even", TC_PLACE_ODDEVEN, 0 },
                                                  { "oddeven", TC_PLACE_ODDEVEN, 1 },
                                                  { NULL, 0, 0 } };
#define NBC_AUTO (-1) /* resolved after the table: split tree when comm_cores > 0 */
static const tc_param_choice_t ch_nbc_alg[] = {
    { "auto", NBC_AUTO, 0 }, { "hier", 0, 0 }, { "split-tree", 1, 0 }, { NULL, 0, 0 }
};

/* Where a value lands, checked at compile time against the field's type
 * (an enum field must be int-sized: the table writes it as an int). */
#define FIELD_(f, ok) (offsetof(tc_config_t, f) + 0 * sizeof(char[(ok) ? 1 : -1]))
#define F_OF(f)       (((tc_config_t *)0)->f)
/* SIZE: accepted range [l, h], floor m (0: none; see tc_param_t.min) */
#define P_SIZE(n, d, l, m, h, f, text)                                                \
    {                                                                                 \
        .name = n, .kind = TC_PARAM_SIZE, .dflt = d, .lo = l, .hi = h, .min = m,      \
        .offset = FIELD_(f, _Generic(F_OF(f), size_t : 1, default : 0)), .desc = text \
    }
#define P_INT(n, d, l, h, f, text)                                                 \
    {                                                                              \
        .name = n, .kind = TC_PARAM_INT, .dflt = d, .lo = l, .hi = h,              \
        .offset = FIELD_(f, _Generic(F_OF(f), int : 1, default : 0)), .desc = text \
    }
#define P_ENUM(n, d, ch, f, text)                                         \
    {                                                                     \
        .name = n, .kind = TC_PARAM_ENUM, .dflt = d, .choices = ch,       \
        .offset = FIELD_(f, sizeof(F_OF(f)) == sizeof(int)), .desc = text \
    }
#define P_STR(n, d, f, text)                                                                \
    {                                                                                       \
        .name = n, .kind = TC_PARAM_STRING, .dflt = d,                                      \
        .offset = FIELD_(f, _Generic(F_OF(f), const char * : 1, default : 0)), .desc = text \
    }

#define KiB  1024LL
#define MAXB (1LL << 40) /* size thresholds */
#define MAXC (1LL << 50) /* size thresholds that start something from a size */
/* The floor of the pipeline segments and of the CICO slots: one page.
 * Each segment costs a synchronisation (a flag set and polled, and across
 * nodes a message of the MPI library: microseconds) and each slot a
 * hand-off; below a page that costs more than the copy (4 KiB at 5-10
 * GB/s: 0.4-0.8 us).  TOPOCOLL_REDUCE_SEGSIZE=1, 3 or 5 made segments of
 * one element: correct, and ~50x slower.  The slots' lanes pipeline only
 * through pieces of 4 KiB or more (tc_shm_lanes_usable, xfer/shmseg.h). */
#define PAGE (4 * KiB)

/* One row per TOPOCOLL_* variable, in the order topocoll_info --config and
 * docs/tuning.md list them.  Defaults are text: what the variable would be
 * set to (STRING: what unset means, the field stays NULL). */
static tc_param_t g_params[] = {
    P_INT("TOPOCOLL_DISABLE", "0", 0, 1, disable, "`1`: every call goes to the native MPI"),
    /* A build costs ~12 collectives' synchronisation: 150 us at np=2 (Open
     * MPI, 5-10 us a small native call), 1.07 s at np=10 on 2 cores under
     * MPICH (55 ms a native Reduce); topocoll saves a fraction of a small
     * call, so it pays after tens of calls.  MPICH's red3/red4 (20 Reduces
     * per communicator, np=10): 1.9x native with 16, 0.98x with 64. */
    P_INT("TOPOCOLL_COMM_LAZY", "64", 0, 1 << 30, comm_lazy,
          "collectives on a new communicator that go to the native MPI before topocoll builds its "
          "context "
          "(node map, shared segment, private communicators: about 12 collectives' worth); `0`: "
          "the first "
          "call builds it.  A context freed with its communicator is kept for the next one of the "
          "same group"),
    P_INT("TOPOCOLL_COMM_KEEP", "4", 0, 64, comm_keep,
          "contexts of freed communicators kept for the next communicator of the same group (each "
          "holds its "
          "shared segment and buffers); `0`: none"),
    /* Off by default: each rank judges its own bytes, so an erroneous call
     * whose counts fall on both sides of it built on some ranks only, a
     * collective on the application's communicator the others never
     * joined (a hang where the native MPI says MPI_ERR_TRUNCATE). */
    P_SIZE("TOPOCOLL_COMM_LAZY_MIN", "0", 0, 0, MAXB, comm_lazy_min,
           "a collective of at least this many bytes (the message, or Allgather's block) builds "
           "the context at once; `0` (default): none, only `TOPOCOLL_COMM_LAZY`'s count.  Every "
           "rank must see the same bytes: an erroneous call whose counts differ across it hangs"),
    P_INT("TOPOCOLL_VERBOSE", "0", 0, 9, verbose,
          "`1`: one line per communicator topocoll attaches to (nodes, mechanism); `2`: also each "
          "call passed "
          "to the native MPI, and why"),
    P_INT("TOPOCOLL_REPORT", "0", 0, 1, report,
          "`1`: at MPI_Finalize rank 0 prints one line per collective called, over all ranks: "
          "calls, calls topocoll ran, bytes, seconds inside the call, calls passed to the native "
          "MPI and the most frequent reason (docs/report.md)"),
    P_STR("TOPOCOLL_REPORT_FILE", "standard error", report_file,
          "the file rank 0 writes the report to (`TOPOCOLL_REPORT=1`)"),
    P_STR("TOPOCOLL_TOPOLOGY", "this host", topology_xml,
          "hwloc XML of a machine to emulate (e.g. `data/topologies/*.xml`)"),
    P_STR("TOPOCOLL_BINDING", "real binding (`core` when an XML is given)", binding,
          "emulated placement of a node's ranks: `core`, `socket-rr`, `numa-rr`, `none` (unbound), "
          "`random:SEED`, `list:a,b,...` (PU logical indexes)"),
    P_INT("TOPOCOLL_VIRTUAL_NODES", "1", 1, 1 << 20, virtual_nodes,
          "split each host's ranks into K emulated nodes"),
    P_ENUM("TOPOCOLL_VIRTUAL_NODES_ORDER", "block", ch_vn_order, vn_order,
           "`block` or `cyclic` assignment of a host's ranks (in MPI_COMM_WORLD) to virtual nodes"),
    P_STR("TOPOCOLL_NETWORK_TOPOLOGY", "none", network_topology,
          "Slurm `topology.conf` (`SwitchName=s0 Nodes=vn[0-1]`, `SwitchName=top "
          "Switches=s[0-1]`): switch "
          "levels above the nodes (the hardware splits; Allreduce and Allgather by leaf "
          "switch); virtual nodes are named `vn0`, `vn1`, ..."),
    P_ENUM("TOPOCOLL_SINGLE_COPY", "auto", ch_single_copy, single_copy,
           "`cma` (warns if the probe fails and uses CICO), `none` (copy-in/copy-out only)"),
    P_SIZE("TOPOCOLL_BCAST_SEGSIZE", "0", 0, PAGE, 1LL << 30, bcast_segsize,
           "inter-node pipeline segment (bytes; `K`/`M` suffixes); `0`: HierKNEM Table 1: 8 KiB "
           "below 64 KiB, "
           "64 KiB above (at most ~8 segments); along a chain of nodes 32 KiB (below the TCP eager "
           "limits); the whole "
           "message on two nodes with one process on the receiving one; floor 4 KiB (a smaller "
           "value other than `0` is raised to it, with a warning); not the block owners' (at "
           "most 4 segments of at least 4 KiB a block)"),
    P_SIZE(
        "TOPOCOLL_BCAST_CICO_MAX", "32K", 0, 0, MAXB, bcast_cico_max,
        "at or below this size Bcast goes through the shared segment (eager when it fits a slot)"),
    P_SIZE("TOPOCOLL_BCAST_ROOT_SHARE_MIN", "32K", 0, 0, MAXC, bcast_share_min,
           "from this size the root writes a share of every receiver's buffer (one node)"),
/* The registry's TOPOCOLL_<ID>_FLAT_MAX (FLAT 1; the defaults and their
 * measurements: base/colls.def); its _ALG rows come further down. */
#define TC_COLL(ID, Name, lower, SHAPE, FLAT, FLAT_DFLT, XT, ALGS)                       \
    TC_IF_##FLAT(                                                                        \
        P_SIZE("TOPOCOLL_" #ID "_FLAT_MAX", FLAT_DFLT, 0, 0, MAXB, flat_max[TC_CI_##ID], \
               "several nodes: an `MPI_" #Name "` of at most this many bytes (the "      \
               "message, or a rank's block) goes to the native collective (`0`: none)"), )
#include "colls.def"
#undef TC_COLL
    P_INT("TOPOCOLL_XTUNE", "1", 0, 1, xtune,
          "several nodes, messages (Allgather: blocks) above the `*_FLAT_MAX` and up to "
          "`TOPOCOLL_XTUNE_MAX`: "
          "each communicator times the native collective and topocoll's, per size class, and keeps "
          "the faster; below `TOPOCOLL_CHAIN_MIN`, Reduce on 4 nodes or more and Bcast on 3 or "
          "more: two of topocoll's leaders' algorithms (`TOPOCOLL_HALVING_MIN`, "
          "`TOPOCOLL_BCAST_OWNERS_MIN`) against the native (`0`: topocoll's there)"),
    P_SIZE("TOPOCOLL_XTUNE_MAX", "256K", 0, 0, MAXB, xtune_max,
           "the largest message (Allgather: block) `TOPOCOLL_XTUNE` measures; above, topocoll's "
           "algorithms"),
    P_INT("TOPOCOLL_BARRIER_FLAT", "1", 0, 1, barrier_flat,
          "`1`: on several nodes `MPI_Barrier` is the native barrier; `0`: topocoll's (a "
          "dissemination "
          "barrier inside each node around the leaders' native barrier)"),
    P_SIZE("TOPOCOLL_CHAIN_MIN", "128K", 0, 0, MAXC, chain_min,
           "from this size, on 3 nodes or more, Bcast and Reduce move between nodes along a chain "
           "of nodes from (Bcast) or to (Reduce) the root's node, pipelined in 32 KiB segments; "
           "below, binomial trees (Bcast: see `TOPOCOLL_BCAST_OWNERS_MIN`, Reduce: "
           "`TOPOCOLL_HALVING_MIN`)"),
    P_SIZE("TOPOCOLL_HALVING_MIN", "64K", 0, 0, MAXC, halving_min,
           "from this size up to `TOPOCOLL_CHAIN_MIN`, on 4 nodes or more, Reduce's leaders "
           "reduce-scatter by recursive halving and gather the result at the root's "
           "(Rabenseifner), or the other leaders each reduce a block of every segment and send it "
           "to the root's (`owners`: the root's link carries the vector once); below, a "
           "binomial tree or the halving; `TOPOCOLL_XTUNE` measures the two and takes the "
           "faster (`0`: the halving, the tree below)"),
    P_SIZE("TOPOCOLL_BCAST_OWNERS_MIN", "16K", 0, 0, MAXC, bcast_owners_min,
           "from this size up to `TOPOCOLL_CHAIN_MIN`, on 3 nodes or more, `TOPOCOLL_XTUNE` "
           "measures Bcast's block owners against the leaders' binomial tree and the native and "
           "takes the fastest: the root sends each other leader a block of the message, which "
           "passes it on to the others (`owners`: the root's link carries the message once, a "
           "binomial tree's log2 N times); up to 34 nodes, one leader a node"),
    P_SIZE("TOPOCOLL_CICO_SLOT", "32K", 1, PAGE, 16 * KiB * KiB, cico_slot,
           "bytes per copy-in/copy-out slot (rounded down to a multiple of 64); floor 4 KiB (a "
           "smaller value is raised to it, with a warning)"),
    P_INT("TOPOCOLL_CICO_SLOTS", "16", 2, 64, cico_slots,
          "slots per process (pipeline depth; with 32 KiB slots, 512 KiB of shared memory per "
          "process and "
          "communicator, touched only when used)"),
    P_SIZE("TOPOCOLL_REDUCE_SEGSIZE", "0", 0, PAGE, 1LL << 30, red_segsize,
           "Reduce/Allreduce pipeline segment (bytes); `0`: one node, the whole vector; several, "
           "HierKNEM "
           "Table 1 (64 KiB per worker up to 16 MiB, 1 MiB above), at least 1/8 of the vector; "
           "along a chain "
           "of nodes 32 KiB; Allreduce on several nodes, ring chunks of 32 KiB; floor 4 KiB (a "
           "smaller value other than `0` is raised to it, with a warning)"),
    P_SIZE("TOPOCOLL_REDUCE_CICO_MAX", "8K", 0, 0, MAXB, red_cico_max,
           "Reduce/Allreduce through the shared segment at or below (bytes per process; capped by "
           "the slots' "
           "capacity)"),
    P_SIZE("TOPOCOLL_REDUCE_EAGER_MAX", "32K", 0, 0, MAXB, red_eager_max,
           "one-node Reduce at or below (bytes per process; capped by a slot, and by 64 KiB for "
           "the root to "
           "read) goes through the shared segment eagerly: every other process copies its vector "
           "into a "
           "rotating slot and returns, the root folds them as they land; up to "
           "`TOPOCOLL_REDUCE_CICO_MAX` "
           "always, above it as the CICO method `TOPOCOLL_TUNE` measures against single copy (`0`: "
           "eager "
           "only up to 2 KiB)"),
    P_SIZE("TOPOCOLL_VCOLL_ITEM_MAX", "0", 0, 0, MAXB, vx_item_max,
           "the irregular exchanges (Gatherv, Scatterv, Allgatherv, Alltoallv, Alltoallw): the "
           "longest block that goes through its sender's item (copied in and out); longer ones "
           "by single copy, or between nodes as messages of their own (capped so an item of "
           "a header and size - 1 such blocks fits a CICO slot); `0`: by the MPI library, "
           "4 KiB under Open MPI (its shared memory turns to its rendezvous there), 8 KiB under "
           "MPICH (eager to 16 KiB)"),
    P_SIZE("TOPOCOLL_ROOT_SHARE_MIN", "1M", 0, 0, MAXB, root_share_min,
           "one node, Gather and Scatter by single copy: a block at least this long is copied "
           "from both ends at once, its sender or receiver copying its head and the root its "
           "tail (1/size of it), so the root's core copies too; `0`: never"),
    P_SIZE("TOPOCOLL_VCOLL_SHARE_MIN", "16K", 0, 0, MAXB, vx_share_min,
           "the same for Gatherv and Scatterv (blocks longer than `TOPOCOLL_VCOLL_ITEM_MAX`)"),
    P_INT("TOPOCOLL_ALLTOALL_WINDOW", "-1", -1, 1 << 20, alltoall_window,
          "Alltoall across nodes: the steps whose messages go out before the first "
          "step's message in has landed (a step's message out goes once the one of the step "
          "that many before has come in: at most that many of our flows on the wire at once); "
          "`0`: every step at once; `-1`: 2 from 8 nodes, else every step at once"),
    P_SIZE("TOPOCOLL_ALLGATHER_CICO_MAX", "8K", 0, 0, MAXB, allgather_cico_max,
           "one-node Allgather through the shared segment at or below (block bytes)"),
    P_SIZE("TOPOCOLL_ALLGATHER_RD_MAX", "16K", 0, 0, MAXB, allgather_rd_max,
           "leader-based Allgather on 4 nodes or more: up to this many bytes per node (the "
           "block x the largest node's processes) the leaders exchange in ceil(log2 N) steps "
           "(recursive doubling on 4, 8, 16 ... nodes, Bruck's concatenation on the others); "
           "above, along a ring (N - 1 steps, pipelined pieces)"),
    P_ENUM("TOPOCOLL_TUNE", "1", ch_tune, tune,
           "one node, above the `*_CICO_MAX` (Reduce: up to the slots' capacity; Bcast, Allreduce, "
           "Allgather: "
           "any size, pipelined through the slots): pick CICO or single copy by measuring both "
           "(`0`: single "
           "copy there; `cico`: CICO there)"),
    P_INT("TOPOCOLL_TUNE_EXPLORE", "64", 2, 1 << 20, tune_explore,
          "every Nth call of a size class retries the slower method"),
#define TC_COLL(ID, Name, lower, SHAPE, ...)                                                     \
    P_ENUM(                                                                                      \
        "TOPOCOLL_" #ID "_ALG", "auto", ch_alg[TC_CI_##ID], alg[TC_CI_##ID],                     \
        "`MPI_" #Name "` and `MPI_I" #lower "`: `auto`, the plan's choice by size and "          \
        "placement; `native`, the MPI library's; or one of topocoll's algorithms, forced where " \
        "it applies (docs/design.md, the plan)"),
#include "colls.def"
#undef TC_COLL
    P_STR("TOPOCOLL_LEADERS", "`auto`", leaders,
          "leader election: `auto`, `nic`, `first`, `numa`, `package` (see "
          "[design.md](design.md#leaders-near-the-network-card-nuioa))"),
    P_STR("TOPOCOLL_NIC", "InfiniBand/RDMA cards, else network cards", nic,
          "cards to use, by OS device name or PCI bus id, in rail order: `mlx5_0`, `mlx5_0,eth0`, "
          "`0000:81:00.0`"),
    P_SIZE("TOPOCOLL_MULTILEADER_MIN", "256K", 0, 0, MAXC, multileader_min,
           "from this message size, Bcast uses several rails (each part at least half of it) and, "
           "under `auto`, "
           "per-package relays (Allgather: bytes each process reads)"),
    P_INT("TOPOCOLL_SPIN", "-1", -1, 1 << 30, spin_count,
          "polls before a waiting process starts yielding its core; `-1`: auto, `200`, or `0` when "
          "the host has "
          "more ranks than cores"),
    P_INT("TOPOCOLL_NAP", "-1", -1, 100000, nap_us,
          "microseconds a waiting process sleeps after 16 yields; `-1`: auto, `50` when the host "
          "has more ranks "
          "than cores and the communicator spans several hosts (the process with work then gets "
          "the core: "
          "yielding alone keeps every spinner runnable), else `0` (never)"),
    P_INT("TOPOCOLL_COMM_CORES", "0", 0, 4096, comm_cores,
          "communication cores per node: `>0` starts a progress thread per process (needs "
          "`MPI_THREAD_MULTIPLE`, asked for by the interposed `MPI_Init`)"),
    P_ENUM("TOPOCOLL_PROGRESS_PLACEMENT", "numa", ch_placement, placement,
           "`bind`, `numa` (eq. 1) or `odd-even` (eq. 2): the progress thread's core"),
    P_ENUM("TOPOCOLL_NBC_ALG", "auto", ch_nbc_alg, nbc_split_tree,
           "`split-tree` or `hier` for `MPI_Ibcast`/`MPI_Ireduce` (auto: split tree with "
           "communication cores)"),
    P_INT("TOPOCOLL_SPLIT_TREE_S", "-1", -1, 64, split_tree_s,
          "leaf-side tree levels the application runs (0..H); `-1`: the model's choice"),
    P_INT("TOPOCOLL_PERSIST", "1", 0, 1, persist,
          "`1`: persistent collectives (`MPI_<Coll>_init`) are topocoll's where it runs the call, "
          "which assumes every process starts a communicator's persistent collectives in the same "
          "order, among them and with its other collectives (what MPI 4.0's "
          "`mpi_assert_strict_persistent_collective_ordering` asserts); `0`: the native MPI's "
          "requests, in any order"),
};
#define NPARAMS ((int)(sizeof(g_params) / sizeof(g_params[0])))

/* Variables named TOPOCOLL_* that are not parameters and not ours to warn
 * about: the CI scripts' (.ci/run). */
static const char *const g_not_params[] = { "TOPOCOLL_CI_" };

/* ---- Parsing ------------------------------------------------------------------ */

/* "64K", "-1": an integer with tc_parse_size's suffixes, maybe negative. */
static int parse_int(const char *s, long long *v)
{
    long long x = tc_parse_size(s[0] == '-' ? s + 1 : s);
    if (x < 0) return -1;
    *v = s[0] == '-' ? -x : x;
    return 0;
}

static const tc_param_choice_t *choice_find(const tc_param_choice_t *ch, const char *s)
{
    for (; ch->name; ch++)
        if (strcmp(ch->name, s) == 0) return ch;
    return NULL;
}

/* The listed word for @value (an alias's canonical name). */
static const char *choice_name(const tc_param_choice_t *ch, int value)
{
    for (; ch->name; ch++)
        if (!ch->alias && ch->value == value) return ch->name;
    return "?";
}

static void fmt_size(char *b, size_t n, long long v)
{
    if (v != 0 && v % (1LL << 30) == 0)
        snprintf(b, n, "%lldG", v >> 30);
    else if (v != 0 && v % (1LL << 20) == 0)
        snprintf(b, n, "%lldM", v >> 20);
    else if (v != 0 && v % (1LL << 10) == 0)
        snprintf(b, n, "%lldK", v >> 10);
    else
        snprintf(b, n, "%lld", v);
}

/* The text of the accepted values: "4K..16M", "0..1G, 1..4095 -> 4K" (a
 * floor), "-1..64", "block|cyclic", "" (string). */
static void param_allowed(tc_param_t *p)
{
    char lo[32], hi[32], fl[32], t[160];
    size_t n = 0;
    p->allowed[0] = '\0';
    switch (p->kind) {
    case TC_PARAM_SIZE:
        fmt_size(lo, sizeof(lo), p->lo);
        fmt_size(hi, sizeof(hi), p->hi);
        fmt_size(fl, sizeof(fl), p->min);
        if (p->min > p->lo && p->min > 1)
            snprintf(t, sizeof(t), "%s..%s, %lld..%lld -> %s", lo, hi, p->lo > 0 ? p->lo : 1,
                     p->min - 1, fl);
        else
            snprintf(t, sizeof(t), "%s..%s", lo, hi);
        snprintf(p->allowed, sizeof(p->allowed), "%.95s", t);
        break;
    case TC_PARAM_INT: snprintf(p->allowed, sizeof(p->allowed), "%lld..%lld", p->lo, p->hi); break;
    case TC_PARAM_ENUM:
        for (const tc_param_choice_t *ch = p->choices; ch->name; ch++)
            if (!ch->alias && n < sizeof(p->allowed))
                n += (size_t)snprintf(p->allowed + n, sizeof(p->allowed) - n, "%s%s", n ? "|" : "",
                                      ch->name);
        break;
    case TC_PARAM_STRING: break;
    }
}

tc_param_src_t tc_param_parse_value(const tc_param_t *p, const char *s, long long *v)
{
    long long x = 0;
    const tc_param_choice_t *ch;
    if (!s || !*s) return TC_PARAM_DEFAULT;
    switch (p->kind) {
    case TC_PARAM_SIZE:
        x = tc_parse_size(s);
        if (x < 0 || x < p->lo || x > p->hi) return TC_PARAM_REJECTED;
        if (x != 0 && x < p->min) {
            *v = p->min;
            return TC_PARAM_RAISED;
        }
        break;
    case TC_PARAM_INT:
        if (parse_int(s, &x) != 0 || x < p->lo || x > p->hi) return TC_PARAM_REJECTED;
        break;
    case TC_PARAM_ENUM:
        if (!(ch = choice_find(p->choices, s))) return TC_PARAM_REJECTED;
        x = ch->value;
        break;
    case TC_PARAM_STRING: return TC_PARAM_ENV;
    }
    *v = x;
    return TC_PARAM_ENV;
}

/* The default's value (SIZE, INT, ENUM).  The table is ours: a default
 * it cannot parse, or one below its floor, is a bug, caught by the first
 * run of any test. */
static long long param_default(const tc_param_t *p)
{
    long long v = 0;
    if (tc_param_parse_value(p, p->dflt, &v) != TC_PARAM_ENV) {
        tc_warn("%s: default %s does not parse (base/config's table)", p->name, p->dflt);
        abort();
    }
    return v;
}

static void param_store(tc_config_t *c, const tc_param_t *p, long long v, const char *s)
{
    char *f = (char *)c + p->offset;
    switch (p->kind) {
    case TC_PARAM_SIZE: *(size_t *)(void *)f = (size_t)v; break;
    case TC_PARAM_INT:
    case TC_PARAM_ENUM: *(int *)(void *)f = (int)v; break;
    case TC_PARAM_STRING: *(const char **)(void *)f = s; break;
    }
}

/* One warning line for environment text @s that @p rejected or raised. */
static void param_warn(const tc_param_t *p, const char *s, tc_param_src_t src, long long dflt)
{
    char fl[32];
    if (src == TC_PARAM_RAISED) {
        fmt_size(fl, sizeof(fl), p->min);
        tc_warn("%s=%s is below its floor %s; using %s", p->name, s, fl, fl);
    } else if (src != TC_PARAM_REJECTED) {
        return;
    } else if (p->kind == TC_PARAM_SIZE) {
        tc_warn("%s=%s is not a size in [%lld, %lld]; using %lld", p->name, s, p->lo, p->hi, dflt);
    } else if (p->kind == TC_PARAM_INT) {
        tc_warn("%s=%s is not an integer in [%lld, %lld]; using %lld", p->name, s, p->lo, p->hi,
                dflt);
    } else {
        tc_warn("%s=%s unknown (%s); using %s", p->name, s, p->allowed, p->dflt);
    }
}

/* Parse @p from the environment into @c; fills its source and allowed
 * text (the value text comes after the fix-ups, see config_parse). */
static void param_parse(tc_config_t *c, tc_param_t *p)
{
    const char *s = getenv(p->name);
    long long dflt = param_default(p), v = dflt; /* v stays the default when rejected */
    param_allowed(p);
    tc_param_src_t src = tc_param_parse_value(p, s, &v);
    if (s && !*s) tc_warn("%s is set but empty; using its default (%s)", p->name, p->dflt);
    param_warn(p, s, src, dflt);
    param_store(c, p, v, src == TC_PARAM_DEFAULT ? NULL : s);
    p->src = src;
    switch (src) {
    case TC_PARAM_DEFAULT: snprintf(p->source, sizeof(p->source), "default"); break;
    case TC_PARAM_ENV: snprintf(p->source, sizeof(p->source), "environment"); break;
    case TC_PARAM_REJECTED:
        snprintf(p->source, sizeof(p->source), "environment (rejected: %.96s)", s);
        break;
    case TC_PARAM_RAISED:
        snprintf(p->source, sizeof(p->source), "environment (raised to the floor: %.80s)", s);
        break;
    }
}

/* The value now, as text, from the field (after the fix-ups). */
static void param_value(const tc_config_t *c, tc_param_t *p)
{
    const char *f = (const char *)c + p->offset;
    switch (p->kind) {
    case TC_PARAM_SIZE:
        fmt_size(p->value, sizeof(p->value), (long long)*(const size_t *)(const void *)f);
        break;
    case TC_PARAM_INT:
        snprintf(p->value, sizeof(p->value), "%d", *(const int *)(const void *)f);
        break;
    case TC_PARAM_ENUM:
        snprintf(p->value, sizeof(p->value), "%s",
                 choice_name(p->choices, *(const int *)(const void *)f));
        break;
    case TC_PARAM_STRING: {
        const char *s = *(const char *const *)(const void *)f;
        snprintf(p->value, sizeof(p->value), "%s", s ? s : "");
        break;
    }
    }
}

static tc_param_t *param_find(const char *name, size_t len)
{
    for (int i = 0; i < NPARAMS; i++)
        if (strlen(g_params[i].name) == len && strncmp(g_params[i].name, name, len) == 0)
            return &g_params[i];
    return NULL;
}

/* Edit distance between @a (@la chars) and @b, for "did you mean". */
static int edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    int row[128];
    if (la >= 128 || lb >= 128) return 1 << 20;
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* Every TOPOCOLL_* variable of the environment that no parameter reads:
 * one warning each (a typo must not pass for the default). */
static void warn_unknown(void)
{
    static const char pre[] = "TOPOCOLL_";
    for (char **e = environ; e && *e; e++) {
        const char *v = *e, *eq = strchr(v, '=');
        if (strncmp(v, pre, sizeof(pre) - 1) != 0 || !eq) continue;
        size_t len = (size_t)(eq - v);
        if (param_find(v, len)) continue;
        int skip = 0;
        for (size_t k = 0; k < sizeof(g_not_params) / sizeof(g_not_params[0]); k++)
            skip |= strncmp(v, g_not_params[k], strlen(g_not_params[k])) == 0;
        if (skip) continue;
        const char *near = NULL;
        int best = 4; /* suggest within 3 edits */
        for (int i = 0; i < NPARAMS; i++) {
            int d = edit_distance(v, len, g_params[i].name);
            if (d < best) {
                best = d;
                near = g_params[i].name;
            }
        }
        if (near)
            tc_warn("%.*s is not a topocoll parameter, ignored (did you mean %s? topocoll_info "
                    "--config lists them)",
                    (int)(len < 80 ? len : 80), v, near);
        else
            tc_warn("%.*s is not a topocoll parameter, ignored (topocoll_info --config lists them)",
                    (int)(len < 80 ? len : 80), v);
    }
}

/* ch_alg from the registry: auto, native, then the collective's ALGS. */
static void alg_choices(void)
{
    for (int ci = 0; ci < TC_NCOLLS; ci++) {
        int n = 0;
        for (int a = 0; a < TC_ALGS; a++)
            if (tc_coll_algs(ci) & (1u << a))
                ch_alg[ci][n++] = (tc_param_choice_t){ tc_alg_word(a), a, 0 };
        ch_alg[ci][n] = (tc_param_choice_t){ NULL, 0, 0 };
    }
}

static void config_parse(void)
{
    tc_config_t *c = &g_config;
    alg_choices();
    for (int i = 0; i < NPARAMS; i++) param_parse(c, &g_params[i]);

    /* Fix-ups: values that depend on the value itself or on another. */
    c->cico_slot &= ~(size_t)63;
    int nbc_auto = c->nbc_split_tree == NBC_AUTO;
    if (nbc_auto) c->nbc_split_tree = c->comm_cores > 0;

    for (int i = 0; i < NPARAMS; i++) {
        tc_param_t *p = &g_params[i];
        if (p->offset == offsetof(tc_config_t, nbc_split_tree) && p->kind == TC_PARAM_ENUM)
            snprintf(p->value, sizeof(p->value), nbc_auto ? "auto (%s)" : "%s",
                     choice_name(p->choices, c->nbc_split_tree));
        else
            param_value(c, p);
    }
    warn_unknown();
}

const tc_config_t *tc_config_get(void)
{
    pthread_once(&g_config_once, config_parse);
    return &g_config;
}

int tc_config_nparams(void) { return NPARAMS; }

const tc_param_t *tc_config_param(int i)
{
    tc_config_get();
    return i >= 0 && i < NPARAMS ? &g_params[i] : NULL;
}

const char *tc_param_kind_name(tc_param_kind_t k)
{
    switch (k) {
    case TC_PARAM_SIZE: return "size";
    case TC_PARAM_INT: return "int";
    case TC_PARAM_ENUM: return "enum";
    case TC_PARAM_STRING: return "string";
    }
    return "?";
}

int tc_config_nap(const tc_config_t *cfg, int host_procs, int several_hosts)
{
    if (cfg->nap_us >= 0) return cfg->nap_us;
    return several_hosts && host_procs > sysconf(_SC_NPROCESSORS_ONLN) ? 50 : 0;
}

int tc_config_spin(const tc_config_t *cfg, int host_procs)
{
    if (cfg->spin_count >= 0) return cfg->spin_count;
    return host_procs > sysconf(_SC_NPROCESSORS_ONLN) ? 0 : 200;
}
