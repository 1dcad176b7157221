/* topo/loc -- see loc.h. */
#define _GNU_SOURCE
#include "loc.h"

#include "../base/config.h"
#include "../base/log.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tc_loc_t g_loc; /* written once under the once */
static pthread_once_t g_loc_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_host_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_host_given, g_host_rank, g_host_size, g_loc_done;

static int env_int(const char *name, int *v)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s) return 0;
    long x = strtol(s, &end, 10);
    if (*end || x < 0 || x > (1 << 24)) return 0;
    *v = (int)x;
    return 1;
}

static int host_env(int *hrank, int *hsize)
{
    return (env_int("OMPI_COMM_WORLD_LOCAL_RANK", hrank) &&
            env_int("OMPI_COMM_WORLD_LOCAL_SIZE", hsize)) ||
           (env_int("MPI_LOCALRANKID", hrank) && env_int("MPI_LOCALNRANKS", hsize));
}

int tc_loc_host_from_env(void)
{
    int r, s;
    return host_env(&r, &s);
}

int tc_loc_set_host(int hrank, int hsize)
{
    pthread_mutex_lock(&g_host_lock);
    int late = g_loc_done;
    if (!late) {
        g_host_given = 1;
        g_host_rank = hrank;
        g_host_size = hsize;
    }
    pthread_mutex_unlock(&g_host_lock);
    return late ? -1 : 0;
}

static uint64_t fnv1a(const char *s, uint64_t h)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* The process's rank and size on its host: given, from the launcher, or
 * alone (then virtual nodes cannot be cut). */
static void host_rank_find(tc_loc_t *l, const tc_config_t *cfg)
{
    pthread_mutex_lock(&g_host_lock);
    g_loc_done = 1;
    int given = g_host_given;
    l->hrank = g_host_rank;
    l->hsize = g_host_size;
    pthread_mutex_unlock(&g_host_lock);
    if (!given && !host_env(&l->hrank, &l->hsize)) {
        l->hrank = 0;
        l->hsize = 1;
        if (cfg->virtual_nodes > 1)
            tc_warn_once("the launcher gives no local rank: TOPOCOLL_VIRTUAL_NODES ignored "
                         "(use libtopocoll_pmpi.so, or call topocoll_init_world() after MPI_Init)");
    }
    if (l->hsize < 1 || l->hrank >= l->hsize) {
        l->hrank = 0;
        l->hsize = 1;
    }
}

/* The process's virtual node, and its rank and size there. */
static void vnode_assign(tc_loc_t *l, const tc_config_t *cfg)
{
    /* Virtual node: block (balanced chunks) or cyclic over the host ranks. */
    int k = cfg->virtual_nodes < l->hsize ? cfg->virtual_nodes : l->hsize;
    l->nvnodes = k;
    if (cfg->vn_order == TC_VN_CYCLIC) {
        l->vnode = l->hrank % k;
        l->vlrank = l->hrank / k;
        l->vlsize = l->hsize / k + (l->vnode < l->hsize % k);
    } else {
        l->vnode = (int)((long long)l->hrank * k / l->hsize);
        l->vlrank = 0;
        l->vlsize = 0;
        for (int r = 0; r < l->hsize; r++) {
            if ((int)((long long)r * k / l->hsize) != l->vnode) continue;
            if (r < l->hrank) l->vlrank++;
            l->vlsize++;
        }
    }
}

/* The node's name (the host's, or vnK) and its id (host and virtual node). */
static void node_name(tc_loc_t *l, const tc_config_t *cfg)
{
    char host[TC_LOC_NAME_MAX] = "localhost";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = 0;
    if (cfg->virtual_nodes > 1)
        snprintf(l->nodename, sizeof(l->nodename), "vn%d", l->vnode);
    else
        snprintf(l->nodename, sizeof(l->nodename), "%s", host);
    char vn[32];
    snprintf(vn, sizeof(vn), "#%d", l->vnode);
    l->node_id = fnv1a(vn, fnv1a(host, 0xcbf29ce484222325ULL));
}

/* The process's cpuset: its real binding, or the emulated policy's. */
static void binding_apply(tc_loc_t *l, const tc_config_t *cfg)
{
    /* Binding: the same policy code as before, now on the virtual node's
     * fixed local rank rather than a communicator's. */
    const tc_topo_t *topo = tc_topo_process();
    tc_binding_t pol;
    const char *spec = cfg->binding ? cfg->binding : (cfg->topology_xml ? "core" : NULL);
    l->cpuset = hwloc_bitmap_alloc();
    l->ok = 1;
    if (!l->cpuset || !topo) {
        l->ok = 0;
    } else if (tc_binding_parse(spec, &pol) != 0) {
        tc_warn_once(
            "TOPOCOLL_BINDING=%s is not core|socket-rr|numa-rr|none|random:SEED|list:a,b,...",
            spec);
        l->ok = 0;
    } else if (tc_topo_bind(topo, &pol, l->vlrank, l->vlsize, l->cpuset, &l->bound) != 0) {
        tc_warn_once("binding %s cannot place local rank %d on %s", spec, l->vlrank, topo->source);
        l->ok = 0;
    } else {
        tc_binding_format(&pol, l->binding, sizeof(l->binding));
    }
}

/* The switches above the node, from TOPOCOLL_NETWORK_TOPOLOGY (none when
 * unset, or when the file does not give them: one warning). */
static void switches_find(tc_loc_t *l, const tc_config_t *cfg)
{
    const char *net = cfg->network_topology;
    if (net && *net) {
        char err[160];
        int n = tc_netconf_path(net, l->nodename, l->sw_index, l->sw_name, err, sizeof(err));
        if (n < 0) {
            tc_warn_once("TOPOCOLL_NETWORK_TOPOLOGY=%s: %s; no network levels", net, err);
            n = 0;
        }
        l->nswitch = n;
    }
}

static void loc_compute(void)
{
    tc_loc_t *l = &g_loc;
    const tc_config_t *cfg = tc_config_get();
    host_rank_find(l, cfg);
    vnode_assign(l, cfg);
    node_name(l, cfg);
    binding_apply(l, cfg);
    switches_find(l, cfg);
}

const tc_loc_t *tc_loc_process(void)
{
    pthread_once(&g_loc_once, loc_compute);
    return &g_loc;
}

/* ---- Slurm hostlists and topology.conf -------------------------------------- */

/* Does @name match one hostlist item "pre[ranges]suf" (or a plain name)? */
static int item_match(const char *item, size_t len, const char *name)
{
    const char *lb = memchr(item, '[', len);
    if (!lb) return strlen(name) == len && strncmp(item, name, len) == 0;
    const char *rb = memchr(lb, ']', len - (size_t)(lb - item));
    if (!rb) return 0;
    size_t plen = (size_t)(lb - item), slen = len - (size_t)(rb + 1 - item), nlen = strlen(name);
    if (nlen < plen + slen + 1 || strncmp(name, item, plen) != 0 ||
        strncmp(name + nlen - slen, rb + 1, slen) != 0)
        return 0;
    const char *dig = name + plen;
    size_t dlen = nlen - plen - slen;
    for (size_t i = 0; i < dlen; i++)
        if (!isdigit((unsigned char)dig[i])) return 0;
    long v = strtol(dig, NULL, 10);
    const char *p = lb + 1;
    while (p < rb) { /* ranges "a-b" or "a", comma separated */
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p) return 0;
        size_t width = (size_t)(end - p);
        if (*end == '-') {
            const char *q = end + 1;
            b = strtol(q, &end, 10);
            if (end == q) return 0;
        }
        int padded = width > 1 && p[0] == '0';
        if (v >= a && v <= b && (!padded || dlen == width) &&
            (padded || dlen == 1 || dig[0] != '0'))
            return 1;
        p = end;
        if (*p == ',')
            p++;
        else if (p != rb)
            return 0;
    }
    return 0;
}

int tc_hostlist_match(const char *list, const char *name)
{
    const char *p = list;
    while (*p) {
        const char *q = p;
        int depth = 0;
        while (*q && (depth > 0 || *q != ',')) {
            if (*q == '[')
                depth++;
            else if (*q == ']')
                depth--;
            q++;
        }
        if (q > p && item_match(p, (size_t)(q - p), name)) return 1;
        p = *q ? q + 1 : q;
    }
    return 0;
}

typedef struct {
    char name[TC_LOC_NAME_MAX];
    char *nodes, *switches;
    int parent;
} netsw_t;

/* One line's keys (from @tok on) into switch @s: 0, or -1 when a token
 * is not KEY=VALUE or no SwitchName names the switch. */
static int netconf_switch(char *tok, char **save, netsw_t *s)
{
    int named = 0;
    for (; tok; tok = strtok_r(NULL, " \t\r\n", save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = 0;
        if (strcasecmp(tok, "SwitchName") == 0) {
            snprintf(s->name, sizeof(s->name), "%s", eq + 1);
            named = 1;
        } else if (strcasecmp(tok, "Nodes") == 0) {
            free(s->nodes);
            s->nodes = strdup(eq + 1);
        } else if (strcasecmp(tok, "Switches") == 0) {
            free(s->switches);
            s->switches = strdup(eq + 1);
        }
        /* LinkSpeed and other keys: ignored */
    }
    return named ? 0 : -1;
}

/* The switches of topology.conf @f, one per line, into *@swp (*@nswp of
 * them, set even on error for the caller to free): 0, or -1 with @err. */
static int netconf_read(FILE *f, netsw_t **swp, int *nswp, char *err, size_t errlen)
{
    netsw_t *sw = NULL;
    int nsw = 0, cap = 0, rc = 0, lineno = 0;
    char *line = NULL;
    size_t lcap = 0;
    while (getline(&line, &lcap, f) >= 0) {
        lineno++;
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
        if (!tok) continue;
        if (nsw == cap) {
            cap = cap ? 2 * cap : 16;
            netsw_t *n = realloc(sw, (size_t)cap * sizeof(*sw));
            if (!n) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            sw = n;
        }
        netsw_t *s = &sw[nsw];
        memset(s, 0, sizeof(*s));
        s->parent = -1;
        rc = netconf_switch(tok, &save, s);
        nsw++;
        if (rc != 0) {
            snprintf(err, errlen, "line %d: expected SwitchName=... [Nodes=...] [Switches=...]",
                     lineno);
            break;
        }
    }
    free(line);
    *swp = sw;
    *nswp = nsw;
    return rc;
}

/* The switches above @nodename, top first, into @idx and @names: how
 * many, or -1 with @err (too many levels, or a cycle). */
static int netconf_chain(netsw_t *sw, int nsw, const char *nodename, int *idx,
                         char names[][TC_LOC_NAME_MAX], char *err, size_t errlen)
{
    int n = 0;
    for (int i = 0; i < nsw; i++)
        for (int j = 0; j < nsw && sw[i].parent < 0; j++)
            if (j != i && sw[j].switches && tc_hostlist_match(sw[j].switches, sw[i].name))
                sw[i].parent = j;
    int leaf = -1;
    for (int i = 0; i < nsw && leaf < 0; i++)
        if (sw[i].nodes && tc_hostlist_match(sw[i].nodes, nodename)) leaf = i;
    int chain[TC_LOC_MAX_SWITCHES];
    for (int s = leaf; s >= 0; s = sw[s].parent) {
        if (n == TC_LOC_MAX_SWITCHES) {
            snprintf(err, errlen, "more than %d switch levels above %s (or a cycle)",
                     TC_LOC_MAX_SWITCHES, nodename);
            return -1;
        }
        chain[n++] = s;
    }
    for (int i = 0; i < n; i++) { /* top first */
        idx[i] = chain[n - 1 - i];
        snprintf(names[i], TC_LOC_NAME_MAX, "%s", sw[chain[n - 1 - i]].name);
    }
    return n;
}

int tc_netconf_path(const char *path, const char *nodename, int *idx, char names[][TC_LOC_NAME_MAX],
                    char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open the file");
        return -1;
    }
    netsw_t *sw = NULL;
    int nsw = 0;
    int rc = netconf_read(f, &sw, &nsw, err, errlen);
    fclose(f);
    int n = rc == 0 ? netconf_chain(sw, nsw, nodename, idx, names, err, errlen) : -1;
    for (int i = 0; i < nsw; i++) {
        free(sw[i].nodes);
        free(sw[i].switches);
    }
    free(sw);
    return n;
}
