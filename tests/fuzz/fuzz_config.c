/*
 * fuzz_config -- libFuzzer target: base/config's value parsers, the text
 * a TOPOCOLL_* variable may hold: tc_parse_size, and tc_param_parse_value
 * for every parameter of the table (sizes with their range and floor,
 * integers with a sign, enumerations).
 *
 * The input is the value's text (up to its first NUL).  Each answer must
 * keep its contract: tc_parse_size is -1 or a size that plain digits
 * give as they read; an accepted value lies in its parameter's range and
 * is 0 or at least its floor; a raised one is the floor; an enumeration's
 * is one of its words.  A broken contract aborts (a crash to libFuzzer);
 * so does anything ASan or UBSan sees.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char *what, const tc_param_t *p, const char *s)
{
    if (!ok) {
        fprintf(stderr, "fuzz_config: broken contract: %s (%s, \"%s\")\n", what,
                p ? p->name : "tc_parse_size", s);
        abort();
    }
}

static void size_check(const char *s)
{
    long long v = tc_parse_size(s);
    check(v >= -1, "tc_parse_size is -1 or a size", NULL, s);
    size_t n = strlen(s), digits = strspn(s, "0123456789");
    if (n > 0 && n == digits && n <= 18) check(v == strtoll(s, NULL, 10), "digits read", NULL, s);
    if (n > 0 && !isdigit((unsigned char)s[0])) check(v == -1, "no leading digit: -1", NULL, s);
}

static void param_check(const tc_param_t *p, const char *s)
{
    long long v = 0x5a5a5a5a;
    tc_param_src_t src = tc_param_parse_value(p, s, &v);
    check(src == TC_PARAM_DEFAULT || src == TC_PARAM_ENV || src == TC_PARAM_REJECTED ||
              src == TC_PARAM_RAISED,
          "a known source", p, s);
    check((src == TC_PARAM_DEFAULT) == !*s, "the default exactly for empty text", p, s);
    if (src == TC_PARAM_DEFAULT || src == TC_PARAM_REJECTED) {
        check(v == 0x5a5a5a5a, "the value untouched", p, s);
        return;
    }
    switch (p->kind) {
    case TC_PARAM_SIZE:
        check(v >= p->lo && v <= p->hi, "a size in its range", p, s);
        check(src == TC_PARAM_RAISED ? v == p->min : v == 0 || v >= p->min, "floor", p, s);
        break;
    case TC_PARAM_INT:
        check(src == TC_PARAM_ENV && v >= p->lo && v <= p->hi, "an int in its range", p, s);
        break;
    case TC_PARAM_ENUM: {
        int found = 0;
        for (const tc_param_choice_t *ch = p->choices; ch->name; ch++)
            found |= ch->value == v && strcmp(ch->name, s) == 0;
        check(src == TC_PARAM_ENV && found, "an enumeration's word", p, s);
        break;
    }
    case TC_PARAM_STRING: check(src == TC_PARAM_ENV && v == 0x5a5a5a5a, "a string", p, s); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[256];
    size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
    memcpy(s, data, n);
    s[n] = 0;
    size_check(s);
    for (int i = 0; i < tc_config_nparams(); i++) param_check(tc_config_param(i), s);
    return 0;
}
