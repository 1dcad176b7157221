/* topo/nic -- see nic.h. */
#include "nic.h"

#include "../base/config.h"
#include "../base/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[] = { "auto", "nic", "first", "numa", "package" };

const char *tc_lead_policy_name(tc_lead_policy_t p) { return policy_names[p]; }

int tc_lead_policy_parse(const char *s)
{
    for (int i = 0; i < (int)(sizeof(policy_names) / sizeof(policy_names[0])); i++)
        if (strcmp(s, policy_names[i]) == 0) return i;
    return -1;
}

/* Interfaces that carry no traffic of their own (loopback, bridges,
 * containers, tunnels, bonds over real cards). */
static int virtual_name(const char *n)
{
    static const char *const prefix[] = { "lo",  "veth",    "docker", "virbr", "br-",  "br",
                                          "tun", "tap",     "vnet",   "dummy", "bond", "team",
                                          "cni", "flannel", "cali",   "vxlan", "wg" };
    if (strcmp(n, "lo") == 0) return 1;
    for (size_t i = 1; i < sizeof(prefix) / sizeof(prefix[0]); i++)
        if (strncmp(n, prefix[i], strlen(prefix[i])) == 0) return 1;
    return 0;
}

static void append(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(buf);
    if (used < len) snprintf(buf + used, len - used, fmt, a, b);
}

/* The logical index of the first object of @type whose cpuset contains @set. */
static int containing(hwloc_topology_t hw, hwloc_obj_type_t type, hwloc_const_bitmap_t set)
{
    int n = hwloc_get_nbobjs_by_type(hw, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(hw, type, (unsigned)i);
        if (o->cpuset && !hwloc_bitmap_iszero(set) && hwloc_bitmap_isincluded(set, o->cpuset))
            return i;
    }
    return -1;
}

/* Every NIC card of the topology, OpenFabrics cards first (then bus order,
 * hwloc's order). */
static int all_cards(hwloc_topology_t hw, tc_nic_t *cards, int max, char *ignored, size_t ilen)
{
    int n = 0;
    for (hwloc_obj_t os = hwloc_get_next_osdev(hw, NULL); os; os = hwloc_get_next_osdev(hw, os)) {
        hwloc_obj_osdev_type_t ty = os->attr->osdev.type;
        if (ty != HWLOC_OBJ_OSDEV_NETWORK && ty != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
        const char *name = os->name ? os->name : "?";
        hwloc_obj_t pci = os->parent;
        while (pci && pci->type != HWLOC_OBJ_PCI_DEVICE && hwloc_obj_type_is_io(pci->type))
            pci = pci->parent;
        if (virtual_name(name)) {
            append(ignored, ilen, "%s%s: virtual or loopback; ", name, "");
            continue;
        }
        if (!pci || pci->type != HWLOC_OBJ_PCI_DEVICE) {
            append(ignored, ilen, "%s%s: no PCI device; ", name, "");
            continue;
        }
        char busid[16];
        snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain,
                 pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
        int c = 0;
        while (c < n && strcmp(cards[c].busid, busid) != 0) c++;
        if (c == n) {
            if (n == max) {
                append(ignored, ilen, "%s%s: too many NICs; ", name, "");
                continue;
            }
            memset(&cards[n], 0, sizeof(cards[n]));
            snprintf(cards[n].busid, sizeof(cards[n].busid), "%s", busid);
            cards[n].klass = TC_NIC_NETWORK;
            hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(hw, os);
            cards[n].cpuset = hwloc_bitmap_dup(anc->cpuset);
            char tn[32];
            hwloc_obj_type_snprintf(tn, sizeof(tn), anc, 0);
            snprintf(cards[n].near, sizeof(cards[n].near), "%s:%u", tn, anc->logical_index);
            n++;
        }
        tc_nic_t *k = &cards[c];
        if (ty == HWLOC_OBJ_OSDEV_OPENFABRICS && k->klass != TC_NIC_OPENFABRICS) {
            k->klass = TC_NIC_OPENFABRICS;
            snprintf(k->name, sizeof(k->name), "%s", name);
        } else if (!k->name[0]) {
            snprintf(k->name, sizeof(k->name), "%s", name);
        }
        append(k->osdevs, sizeof(k->osdevs), "%s%s", k->osdevs[0] ? "," : "", name);
    }
    /* OpenFabrics first, stable */
    for (int i = 1; i < n; i++) {
        tc_nic_t x = cards[i];
        int j = i;
        while (j > 0 && cards[j - 1].klass > x.klass) {
            cards[j] = cards[j - 1];
            j--;
        }
        cards[j] = x;
    }
    return n;
}

/* 1 if card @k answers to @name (one of its OS devices, or its bus id). */
static int card_named(const tc_nic_t *k, const char *name)
{
    if (strcmp(k->busid, name) == 0 || strcmp(k->busid + 5, name) == 0)
        return 1; /* with or without domain */
    const char *p = k->osdevs;
    size_t len = strlen(name);
    while (*p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && strncmp(p, name, l) == 0) return 1;
        p += l + (e ? 1 : 0);
    }
    return 0;
}

int tc_nics_find(const tc_topo_t *t, const char *filter, tc_nics_t *out)
{
    tc_nic_t cards[TC_NIC_MAX];
    memset(out, 0, sizeof(*out));
    int n = all_cards(t->hw, cards, TC_NIC_MAX, out->ignored, sizeof(out->ignored));
    int used[TC_NIC_MAX] = { 0 };
    if (filter && *filter) {
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", filter);
        snprintf(out->why, sizeof(out->why), "TOPOCOLL_NIC=%s", filter);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            int c = 0;
            while (c < n && !card_named(&cards[c], tok)) c++;
            if (c == n) {
                append(out->why, sizeof(out->why), "; %s%s: not found", tok, "");
                continue;
            }
            if (used[c] || out->n == TC_NIC_MAX) continue; /* two names of one card: one rail */
            used[c] = 1;
            out->nic[out->n++] = cards[c];
        }
    } else {
        int nof = 0;
        for (int c = 0; c < n; c++) nof += cards[c].klass == TC_NIC_OPENFABRICS;
        for (int c = 0; c < n; c++) {
            if (nof ? cards[c].klass == TC_NIC_OPENFABRICS : 1) {
                used[c] = 1;
                out->nic[out->n++] = cards[c];
            }
        }
        snprintf(out->why, sizeof(out->why),
                 n == 0 ? "no network card in the topology"
                 : nof  ? "the OpenFabrics (InfiniBand/RDMA) cards"
                        : "no OpenFabrics card: the network interfaces' cards");
    }
    for (int c = 0; c < n; c++)
        if (!used[c]) hwloc_bitmap_free(cards[c].cpuset);
    for (int i = 0; i < out->n; i++) {
        tc_nic_t *k = &out->nic[i];
        k->pkg = containing(t->hw, HWLOC_OBJ_PACKAGE, k->cpuset);
        k->numa = containing(t->hw, HWLOC_OBJ_NUMANODE, k->cpuset);
    }
    return out->n;
}

void tc_nics_free(tc_nics_t *n)
{
    for (int i = 0; i < n->n; i++) hwloc_bitmap_free(n->nic[i].cpuset);
    n->n = 0;
}

static tc_nics_t g_nics; /* process-wide, read-only after the once */
static pthread_once_t g_nics_once = PTHREAD_ONCE_INIT;

static void nics_process_find(void)
{
    const tc_topo_t *t = tc_topo_process();
    if (!t) {
        snprintf(g_nics.why, sizeof(g_nics.why), "no topology");
        return;
    }
    const char *f = tc_config_get()->nic;
    tc_nics_find(t, f, &g_nics);
    if (f && *f && strstr(g_nics.why, "not found")) tc_warn("%s", g_nics.why);
}

const tc_nics_t *tc_nics_process(void)
{
    pthread_once(&g_nics_once, nics_process_find);
    return &g_nics;
}

/* Rank of the NIC's NUMA nodes among the latencies from the process's
 * NUMA node (0: the closest there is), or -1 without a matrix. */
static int numa_rank(hwloc_topology_t hw, const tc_nic_t *nic, hwloc_const_bitmap_t set)
{
    struct hwloc_distances_s *d[4];
    unsigned nr = 4;
    if (hwloc_distances_get_by_type(hw, HWLOC_OBJ_NUMANODE, &nr, d, 0, 0) != 0 || nr == 0)
        return -1;
    if (nr > 4) nr = 4;
    int rank = -1;
    struct hwloc_distances_s *m = d[0];
    int p = -1;
    for (unsigned i = 0; i < m->nbobjs; i++)
        if (m->objs[i]->cpuset && hwloc_bitmap_isincluded(set, m->objs[i]->cpuset)) p = (int)i;
    if (p >= 0) {
        hwloc_uint64_t best = (hwloc_uint64_t)-1;
        for (unsigned q = 0; q < m->nbobjs; q++)
            if (m->objs[q]->cpuset && hwloc_bitmap_intersects(m->objs[q]->cpuset, nic->cpuset) &&
                m->values[(unsigned)p * m->nbobjs + q] < best)
                best = m->values[(unsigned)p * m->nbobjs + q];
        if (best != (hwloc_uint64_t)-1) {
            rank = 0;
            for (unsigned q = 0; q < m->nbobjs; q++)
                rank += m->values[(unsigned)p * m->nbobjs + q] < best;
        }
    }
    for (unsigned i = 0; i < nr; i++) hwloc_distances_release(hw, d[i]);
    return rank;
}

int tc_nic_score(const tc_topo_t *t, const tc_nic_t *nic, hwloc_const_bitmap_t cpuset, int bound)
{
    if (!bound || hwloc_bitmap_iszero(cpuset)) return TC_NIC_SCORE_UNBOUND;
    if (hwloc_bitmap_isincluded(cpuset, nic->cpuset)) return 0;
    if (nic->numa >= 0) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, (unsigned)nic->numa);
        if (hwloc_bitmap_isincluded(cpuset, o->cpuset)) return 1;
    }
    if (nic->pkg >= 0) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_PACKAGE, (unsigned)nic->pkg);
        if (hwloc_bitmap_isincluded(cpuset, o->cpuset)) return 2;
    }
    int r = numa_rank(t->hw, nic, cpuset);
    return r >= 0 ? 10 + (r < 80 ? r : 80) : 100;
}

/* ---- election ---------------------------------------------------------------- */

/* Process @p's score against rail @r's NIC (0 for everybody under policy
 * first or without that NIC: the lowest local rank wins). */
static int rail_score(tc_lead_policy_t policy, const tc_lead_in_t *p, int r)
{
    return policy == TC_LEAD_FIRST || r >= p->nrails ? 0 : p->score[r];
}

void tc_lead_elect(tc_lead_policy_t policy, const tc_lead_in_t *in, int n, tc_lead_out_t *out,
                   int *dom_leader, int *dom_of)
{
    memset(out, 0, sizeof(*out));
    int nr = 1;
    if (policy != TC_LEAD_FIRST) {
        nr = TC_RAIL_MAX;
        for (int i = 0; i < n; i++)
            if (in[i].nrails < nr) nr = in[i].nrails;
        if (nr < 1) nr = 1;
        if (nr > n) nr = n;
    }
    int taken[TC_RAIL_MAX] = { 0 };
    for (int r = 0; r < nr; r++) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            int dup = 0;
            for (int q = 0; q < r; q++) dup |= taken[q] == i;
            if (dup) continue;
            if (best < 0 || rail_score(policy, &in[i], r) < rail_score(policy, &in[best], r))
                best = i;
        }
        taken[r] = best;
        out->rail[r] = best;
        out->nrails++;
    }
    out->leader = out->rail[0];
    for (int r = out->nrails; r < TC_RAIL_MAX; r++) out->rail[r] = out->leader;
    out->domains = policy == TC_LEAD_NUMA || policy == TC_LEAD_PACKAGE || policy == TC_LEAD_AUTO;
#define DOM(j) (!out->domains ? -1 : policy == TC_LEAD_NUMA ? in[j].numa : in[j].pkg)
    for (int i = 0; i < n; i++) {
        int d = DOM(i), dl = -1;
        if (dom_of) dom_of[i] = d;
        if (!dom_leader) continue;
        if (d >= 0) {
            if (DOM(out->leader) == d) dl = out->leader; /* the node leader leads its own domain */
            for (int j = 0; j < n && dl < 0; j++)
                if (DOM(j) == d) dl = j; /* else the lowest local rank */
        }
        dom_leader[i] = dl;
    }
#undef DOM
}

int tc_lead_source(int i, int producer, const int *dom_of, const int *dom_leader)
{
    if (i == producer) return -1;
    if (!dom_of || !dom_leader || dom_of[i] < 0 || dom_of[i] == dom_of[producer] ||
        dom_leader[i] == i || dom_leader[i] < 0)
        return producer;
    return dom_leader[i];
}

int tc_lead_dom_split(int n, const tc_lead_out_t *out, const int *dom_leader)
{
    for (int i = 0; i < n; i++) {
        int d = dom_leader[i];
        if (d >= 0 && d != out->leader && d != i) return 1;
    }
    return 0;
}

int tc_lead_rails_used(int nrails, size_t bytes, size_t min)
{
    size_t per = min / 2 ? min / 2 : 1;
    int r = nrails > 1 ? nrails : 1;
    while (r > 1 && bytes / (size_t)r < per) r--;
    return r;
}

int tc_lead_relays_used(tc_lead_policy_t policy, int split, int n, size_t bytes, size_t min)
{
    if (n < 3) return 0;
    if (policy == TC_LEAD_NUMA || policy == TC_LEAD_PACKAGE) return 1;
    return policy == TC_LEAD_AUTO && split && bytes >= min;
}

double tc_lead_link_bytes(int n, const int *pkg, const int *src, int net_at, int net_msgs,
                          int nic_pkg, double bytes)
{
    double x = 0;
    if (nic_pkg >= 0 && pkg[net_at] >= 0 && pkg[net_at] != nic_pkg) x += bytes * net_msgs;
    for (int i = 0; i < n; i++)
        if (src[i] >= 0 && pkg[i] >= 0 && pkg[src[i]] >= 0 && pkg[i] != pkg[src[i]]) x += bytes;
    return x;
}
