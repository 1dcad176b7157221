/* topo/loc -- see loc.h. */
#define _GNU_SOURCE
#include "loc.h"

#include "../base/config.h"
#include "../base/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
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
        char err[512];
        int n = tc_netconf_path(net, l->nodename, l->sw_index, l->sw_name, err, sizeof(err));
        if (n < 0) {
            tc_warn_once("TOPOCOLL_NETWORK_TOPOLOGY ignored, no network levels: %s", err);
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

/* Numbers of a hostlist's ranges: at most this many digits (below 10^9:
 * no overflow, and a name whose number is longer matches no range). */
#define HL_DIGITS 9

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
    if (dlen > HL_DIGITS) return 0;
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

/* Writes why a line is not understood into @why; returns -1. */
static int why_set(char *why, size_t wl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int why_set(char *why, size_t wl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, wl, fmt, ap);
    va_end(ap);
    return -1;
}

/* A range's number at *@p (before @end): 0 and *@v, past it; -1 when
 * there is none, -2 when it is longer than HL_DIGITS. */
static int range_number(const char **p, const char *end, long *v)
{
    const char *s = *p;
    long x = 0;
    int n = 0;
    for (; s < end && isdigit((unsigned char)*s); s++) {
        if (++n > HL_DIGITS) return -2;
        x = 10 * x + (*s - '0');
    }
    if (n == 0) return -1;
    *p = s;
    *v = x;
    return 0;
}

/* The ranges between @p and the closing bracket @rb ("0-3,7,010-012") of
 * item @it (@il chars, for the message): 0, or -1 with @why. */
static int ranges_check(const char *p, const char *rb, const char *it, int il, char *why, size_t wl)
{
    for (;;) {
        long a = 0, b;
        int r = range_number(&p, rb, &a);
        b = a;
        if (r == 0 && *p == '-') {
            p++;
            r = range_number(&p, rb, &b);
        }
        if (r == -2) return why_set(why, wl, "`%.*s`: a number over %d digits", il, it, HL_DIGITS);
        if (r == -1) return why_set(why, wl, "`%.*s`: a range without its number", il, it);
        if (a > b) return why_set(why, wl, "`%.*s`: backwards range %ld-%ld", il, it, a, b);
        if (p == rb) return 0;
        if (*p != ',') return why_set(why, wl, "`%.*s`: `%c` in a range", il, it, *p);
        p++;
    }
}

/* One hostlist item (@il chars): "name" or "pre[ranges]suf"; 0, or -1
 * with @why. */
static int item_check(const char *it, int il, char *why, size_t wl)
{
    const char *lb = NULL, *rb = NULL;
    int show = il < 48 ? il : 48;
    if (il == 0) return why_set(why, wl, "an empty hostlist item");
    for (const char *q = it; q < it + il; q++) {
        if (*q == '[' && lb) return why_set(why, wl, "`%.*s`: a second `[`", show, it);
        if (*q == ']' && (!lb || rb)) return why_set(why, wl, "`%.*s`: `]` without `[`", show, it);
        if (*q == '[') lb = q;
        if (*q == ']') rb = q;
    }
    if (lb && !rb) return why_set(why, wl, "`%.*s`: unterminated range (no `]`)", show, it);
    return lb ? ranges_check(lb + 1, rb, it, show, why, wl) : 0;
}

/* The value of key @key: a Slurm hostlist ("vn[0-3,8],host7") that
 * tc_hostlist_match reads as written; 0, or -1 with @why. */
static int hostlist_check(const char *key, const char *list, char *why, size_t wl)
{
    if (!*list) return why_set(why, wl, "%s= is empty", key);
    for (const char *p = list;;) {
        const char *q = p; /* the item: up to a comma outside brackets */
        for (int open = 0; *q && (open || *q != ','); q++) {
            if (*q == '[') open = 1;
            if (*q == ']') open = 0;
        }
        if (item_check(p, (int)(q - p), why, wl) != 0) return -1;
        if (!*q) return 0;
        p = q + 1;
    }
}

typedef struct {
    char name[TC_LOC_NAME_MAX];
    char *nodes, *switches;
    int parent;
    int line; /* in the file, for the messages */
} netsw_t;

enum { KEY_NAME = 1, KEY_NODES = 2, KEY_SWITCHES = 4, KEY_SPEED = 8 };

/* Key @k's bit, 0 when topology.conf has no such key. */
static int key_bit(const char *k)
{
    return strcasecmp(k, "SwitchName") == 0  ? KEY_NAME
           : strcasecmp(k, "Nodes") == 0     ? KEY_NODES
           : strcasecmp(k, "Switches") == 0  ? KEY_SWITCHES
           : strcasecmp(k, "LinkSpeed") == 0 ? KEY_SPEED
                                             : 0;
}

/* One line's keys (from @tok on) into switch @s: 0, or -1 with @why (not
 * KEY=VALUE, an unknown or repeated key, a bad name or hostlist, no
 * SwitchName). */
static int netconf_switch(char *tok, char **save, netsw_t *s, char *why, size_t wl)
{
    int seen = 0;
    for (; tok; tok = strtok_r(NULL, " \t\r\n", save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return why_set(why, wl, "`%.48s` is not KEY=VALUE", tok);
        *eq = 0;
        const char *v = eq + 1;
        int bit = key_bit(tok);
        if (!bit)
            return why_set(why, wl, "unknown key `%.32s` (SwitchName, Nodes, Switches, LinkSpeed)",
                           tok);
        if (seen & bit) return why_set(why, wl, "%.32s given twice", tok);
        seen |= bit;
        if (bit == KEY_NAME) {
            if (!*v || strlen(v) >= sizeof(s->name) || strpbrk(v, "[],"))
                return why_set(why, wl, "SwitchName=%.48s: not one name of 1 to %d characters", v,
                               TC_LOC_NAME_MAX - 1);
            snprintf(s->name, sizeof(s->name), "%s", v);
        } else if (bit != KEY_SPEED) { /* LinkSpeed: read, not used */
            if (hostlist_check(tok, v, why, wl) != 0) return -1;
            char **dst = bit == KEY_NODES ? &s->nodes : &s->switches;
            if (!(*dst = strdup(v))) return why_set(why, wl, "out of memory");
        }
    }
    return seen & KEY_NAME ? 0
                           : why_set(why, wl,
                                     "no SwitchName (SwitchName=... [Nodes=...] "
                                     "[Switches=...])");
}

/* What the reader says of a file's lines: the first line not understood
 * in @err ("FILE:LINE: why"), the others' numbers after it. */
typedef struct {
    const char *file;
    char *err;
    size_t errlen;
    int nbad, more[8], nmore;
} netconf_diag_t;

static void diag_line(netconf_diag_t *d, int lineno, const char *why)
{
    if (d->nbad++ == 0)
        snprintf(d->err, d->errlen, "%s:%d: %s", d->file, lineno, why);
    else if (d->nmore < (int)(sizeof(d->more) / sizeof(d->more[0])))
        d->more[d->nmore++] = lineno;
}

/* The other lines not understood, after the first's message. */
static void diag_end(netconf_diag_t *d)
{
    size_t n = strlen(d->err);
    for (int i = 0; i < d->nmore && n < d->errlen; i++)
        n += (size_t)snprintf(d->err + n, d->errlen - n, "%s%d", i ? ", " : "; also lines ",
                              d->more[i]);
    if (d->nbad - 1 > d->nmore && n < d->errlen)
        snprintf(d->err + n, d->errlen - n, " and %d more", d->nbad - 1 - d->nmore);
}

/* Line @lineno (@line, comment cut) into sw[*nsw] when understood; 0 when
 * it is (or is blank), -1 with @why. */
static int netconf_line(char *line, int lineno, netsw_t *sw, int *nsw, char *why, size_t wl)
{
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok) return 0;
    netsw_t *s = &sw[*nsw];
    memset(s, 0, sizeof(*s));
    s->parent = -1;
    s->line = lineno;
    int rc = netconf_switch(tok, &save, s, why, wl);
    for (int i = 0; i < *nsw && rc == 0; i++)
        if (strcmp(sw[i].name, s->name) == 0)
            rc = why_set(why, wl, "switch %s named again (first on line %d)", s->name, sw[i].line);
    if (rc != 0) {
        free(s->nodes);
        free(s->switches);
        return -1;
    }
    (*nsw)++;
    return 0;
}

/* The switches of topology.conf @f, one per line, into *@swp (*@nswp of
 * them, set even on error for the caller to free): 0, or -1 with @d's
 * message (every line not understood, or the read's error). */
static int netconf_lines(FILE *f, netsw_t **swp, int *nswp, netconf_diag_t *d)
{
    netsw_t *sw = NULL;
    int nsw = 0, cap = 0, lineno = 0;
    char *line = NULL, why[160];
    size_t lcap = 0;
    ssize_t len;
    errno = 0;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        if (nsw == cap) {
            netsw_t *n = realloc(sw, (size_t)(cap ? 2 * cap : 16) * sizeof(*sw));
            if (!n) {
                snprintf(d->err, d->errlen, "%s:%d: out of memory", d->file, lineno);
                d->nbad = -1;
                break;
            }
            sw = n;
            cap = cap ? 2 * cap : 16;
        }
        if ((ssize_t)strlen(line) != len) {
            diag_line(d, lineno, "a NUL byte");
            continue;
        }
        char *h = strchr(line, '#');
        if (h) *h = 0;
        if (netconf_line(line, lineno, sw, &nsw, why, sizeof(why)) != 0) diag_line(d, lineno, why);
    }
    if (d->nbad == 0 && ferror(f))
        snprintf(d->err, d->errlen, "%s: cannot read (%s)", d->file,
                 errno ? strerror(errno) : "read error");
    else if (d->nbad == 0 && nsw == 0)
        snprintf(d->err, d->errlen, "%s: no SwitchName line", d->file);
    else if (d->nbad > 0)
        diag_end(d);
    free(line);
    *swp = sw;
    *nswp = nsw;
    return d->nbad == 0 && !ferror(f) && nsw > 0 ? 0 : -1;
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

int tc_netconf_read(FILE *f, const char *fname, const char *nodename, int *idx,
                    char names[][TC_LOC_NAME_MAX], char *err, size_t errlen)
{
    netsw_t *sw = NULL;
    int nsw = 0;
    netconf_diag_t d = { .file = fname, .err = err, .errlen = errlen };
    int rc = netconf_lines(f, &sw, &nsw, &d);
    int n = rc == 0 ? netconf_chain(sw, nsw, nodename, idx, names, err, errlen) : -1;
    for (int i = 0; i < nsw; i++) {
        free(sw[i].nodes);
        free(sw[i].switches);
    }
    free(sw);
    return n;
}

int tc_netconf_path(const char *path, const char *nodename, int *idx, char names[][TC_LOC_NAME_MAX],
                    char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
        return -1;
    }
    int n = tc_netconf_read(f, path, nodename, idx, names, err, errlen);
    fclose(f);
    return n;
}
