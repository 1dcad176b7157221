/* base/config -- see config.h. */
#include "config.h"
#include "log.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tc_config_t g_config;          /* written once under pthread_once */
static pthread_once_t g_config_once = PTHREAD_ONCE_INIT;

long long tc_parse_size(const char *s)
{
    char *end;
    if (!s || !*s) return -1;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0) return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'B' || *end == 'b') end++;
    return *end ? -1 : v;
}

static long long env_size(const char *name, long long dflt, long long lo, long long hi)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    long long v = tc_parse_size(s);
    if (v < lo || v > hi) {
        tc_warn("%s=%s is not a size in [%lld, %lld]; using %lld", name, s, lo, hi, dflt);
        return dflt;
    }
    return v;
}

static void config_parse(void)
{
    tc_config_t *c = &g_config;
    const char *s;

    c->verbose = (int)env_size("TOPOCOLL_VERBOSE", 0, 0, 9);
    c->disable = (int)env_size("TOPOCOLL_DISABLE", 0, 0, 1);
    s = getenv("TOPOCOLL_TOPOLOGY");
    c->topology_xml = (s && *s) ? s : NULL;
    s = getenv("TOPOCOLL_BINDING");
    c->binding = (s && *s) ? s : NULL;
    c->virtual_nodes = (int)env_size("TOPOCOLL_VIRTUAL_NODES", 1, 1, 1 << 20);
    s = getenv("TOPOCOLL_VIRTUAL_NODES_ORDER");
    c->vn_order = TC_VN_BLOCK;
    if (s && strcmp(s, "cyclic") == 0) c->vn_order = TC_VN_CYCLIC;
    else if (s && *s && strcmp(s, "block") != 0)
        tc_warn("TOPOCOLL_VIRTUAL_NODES_ORDER=%s unknown; using block", s);
    s = getenv("TOPOCOLL_SINGLE_COPY");
    c->single_copy = TC_SC_AUTO;
    if (s && strcmp(s, "cma") == 0) c->single_copy = TC_SC_CMA;
    else if (s && strcmp(s, "none") == 0) c->single_copy = TC_SC_NONE;
    else if (s && *s && strcmp(s, "auto") != 0)
        tc_warn("TOPOCOLL_SINGLE_COPY=%s unknown (auto|cma|none); using auto", s);
    c->bcast_segsize = (size_t)env_size("TOPOCOLL_BCAST_SEGSIZE", 0, 0, 1LL << 30);
    c->bcast_cico_max = (size_t)env_size("TOPOCOLL_BCAST_CICO_MAX", 32 << 10, 0, 1LL << 40);
    c->bcast_flat_max = (size_t)env_size("TOPOCOLL_BCAST_FLAT_MAX", 256, 0, 1LL << 40);
    c->reduce_flat_max = (size_t)env_size("TOPOCOLL_REDUCE_FLAT_MAX", 32 << 10, 0, 1LL << 40);
    c->allreduce_flat_max = (size_t)env_size("TOPOCOLL_ALLREDUCE_FLAT_MAX", 32 << 10, 0, 1LL << 40);
    c->allgather_flat_max = (size_t)env_size("TOPOCOLL_ALLGATHER_FLAT_MAX", 1 << 10, 0, 1LL << 40);
    c->barrier_flat = (int)env_size("TOPOCOLL_BARRIER_FLAT", 0, 0, 1);
    c->chain_min = (size_t)env_size("TOPOCOLL_CHAIN_MIN", 128 << 10, 0, 1LL << 50);
    c->bcast_share_min = (size_t)env_size("TOPOCOLL_BCAST_ROOT_SHARE_MIN", 32 << 10, 0, 1LL << 50);
    c->cico_slot = (size_t)env_size("TOPOCOLL_CICO_SLOT", 32 << 10, 4096, 16 << 20);
    c->cico_slot &= ~(size_t)63;
    c->cico_slots = (int)env_size("TOPOCOLL_CICO_SLOTS", 16, 2, 64);
    c->spin_count = (int)env_size("TOPOCOLL_SPIN", -1, -1, 1 << 30);
    s = getenv("TOPOCOLL_LEADERS");
    c->leaders = s && *s ? s : NULL;
    c->multileader_min = (size_t)env_size("TOPOCOLL_MULTILEADER_MIN", 256 << 10, 0, 1LL << 50);
    c->red_segsize = (size_t)env_size("TOPOCOLL_REDUCE_SEGSIZE", 0, 0, 1LL << 30);
    c->red_cico_max = (size_t)env_size("TOPOCOLL_REDUCE_CICO_MAX", 8 << 10, 0, 1LL << 40);
    c->allgather_cico_max = (size_t)env_size("TOPOCOLL_ALLGATHER_CICO_MAX", 8 << 10, 0, 1LL << 40);
    s = getenv("TOPOCOLL_TUNE");
    if (s && strcmp(s, "cico") == 0) c->tune = TC_TUNE_FORCE_CICO;
    else c->tune = (int)env_size("TOPOCOLL_TUNE", 1, 0, 1);
    c->tune_explore = (int)env_size("TOPOCOLL_TUNE_EXPLORE", 64, 2, 1 << 20);
    s = getenv("TOPOCOLL_ALLGATHER_ALG");
    c->allgather_alg = TC_AG_AUTO;
    if (s && strcmp(s, "leader") == 0) c->allgather_alg = TC_AG_LEADER;
    else if (s && strcmp(s, "ring") == 0) c->allgather_alg = TC_AG_RING;
    else if (s && *s && strcmp(s, "auto") != 0)
        tc_warn("TOPOCOLL_ALLGATHER_ALG=%s unknown (auto|leader|ring); using auto", s);
    c->comm_cores = (int)env_size("TOPOCOLL_COMM_CORES", 0, 0, 4096);
    s = getenv("TOPOCOLL_PROGRESS_PLACEMENT");
    c->placement = TC_PLACE_NUMA;
    if (s && strcmp(s, "bind") == 0) c->placement = TC_PLACE_BIND;
    else if (s && (strcmp(s, "odd-even") == 0 || strcmp(s, "oddeven") == 0)) c->placement = TC_PLACE_ODDEVEN;
    else if (s && *s && strcmp(s, "numa") != 0)
        tc_warn("TOPOCOLL_PROGRESS_PLACEMENT=%s unknown (bind|numa|odd-even); using numa", s);
    c->split_tree_s = (int)env_size("TOPOCOLL_SPLIT_TREE_S", -1, -1, 64);
    s = getenv("TOPOCOLL_NBC_ALG");
    c->nbc_split_tree = c->comm_cores > 0;
    if (s && strcmp(s, "split-tree") == 0) c->nbc_split_tree = 1;
    else if (s && strcmp(s, "hier") == 0) c->nbc_split_tree = 0;
    else if (s && *s && strcmp(s, "auto") != 0)
        tc_warn("TOPOCOLL_NBC_ALG=%s unknown (auto|hier|split-tree); using auto", s);
}

const tc_config_t *tc_config_get(void)
{
    pthread_once(&g_config_once, config_parse);
    return &g_config;
}

int tc_config_spin(const tc_config_t *cfg, int host_procs)
{
    if (cfg->spin_count >= 0) return cfg->spin_count;
    return host_procs > sysconf(_SC_NPROCESSORS_ONLN) ? 0 : 200;
}
