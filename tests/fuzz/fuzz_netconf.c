/*
 * fuzz_netconf -- libFuzzer target: topo/loc's Slurm topology.conf reader
 * (tc_netconf_read, through fmemopen) and its hostlists
 * (tc_hostlist_match).
 *
 * The input is a topology.conf.  It is read for a few node names (a
 * virtual node, a plain host, a name with a long number), with a roomy
 * and a tiny message buffer; each answer must keep its contract: -1 with
 * a message naming the file, or 0..TC_LOC_MAX_SWITCHES switches with
 * non-empty names and indexes.  Then every line's words after '=' go to
 * tc_hostlist_match as lists, against the same names.  A broken contract
 * aborts (a crash to libFuzzer); so does anything ASan or UBSan sees.
 */
#include "loc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const g_names[] = { "vn1", "host7", "vn01", "vn99999999999999999999", "" };
#define NNAMES (sizeof(g_names) / sizeof(g_names[0]))

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_netconf: broken contract: %s\n", what);
        abort();
    }
}

/* One read of @data as "mem.conf" for node @name, @errlen bytes of message. */
static void read_once(const uint8_t *data, size_t size, const char *name, size_t errlen)
{
    char names[TC_LOC_MAX_SWITCHES][TC_LOC_NAME_MAX];
    int idx[TC_LOC_MAX_SWITCHES];
    char *err = malloc(errlen); /* exactly errlen: ASan sees a byte past it */
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f || !err) { /* size 0 */
        if (f) fclose(f);
        free(err);
        return;
    }
    memset(err, 0x55, errlen);
    int n = tc_netconf_read(f, "mem.conf", name, idx, names, err, errlen);
    fclose(f);
    check(n >= -1 && n <= TC_LOC_MAX_SWITCHES, "a count in -1..TC_LOC_MAX_SWITCHES");
    if (n < 0) {
        check(memchr(err, 0, errlen) != NULL, "the message is terminated within errlen");
        check(errlen < 9 || strncmp(err, "mem.conf", 8) == 0 || strncmp(err, "more than", 9) == 0,
              "the message names the file (or the levels)");
    }
    free(err);
    for (int i = 0; i < n; i++) {
        check(idx[i] >= 0, "a switch index >= 0");
        check(names[i][0] && memchr(names[i], 0, TC_LOC_NAME_MAX), "a switch name, terminated");
        for (int j = 0; j < i; j++) check(idx[j] != idx[i], "a switch appears twice in a path");
    }
}

/* Every KEY=VALUE word of the input as a hostlist, against the names. */
static void hostlists(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return;
    memcpy(text, data, size);
    text[size] = 0;
    char *save = NULL;
    for (char *w = strtok_r(text, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(w, '=');
        const char *list = eq ? eq + 1 : w;
        for (size_t i = 0; i < NNAMES; i++) {
            int m = tc_hostlist_match(list, g_names[i]);
            check(m == 0 || m == 1, "a match is 0 or 1");
        }
        if (*list && !strpbrk(list, "[],")) /* one plain name */
            check(tc_hostlist_match(list, list) == 1, "a plain name matches itself");
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16) return 0; /* the reader is quadratic in switches: keep runs short */
    for (size_t i = 0; i < NNAMES; i++) read_once(data, size, g_names[i], 512);
    read_once(data, size, "vn1", 12); /* the message truncated */
    hostlists(data, size);
    return 0;
}
