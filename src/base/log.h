/*
 * base/log -- one-line diagnostics on stderr, prefixed "topocoll:".
 * Owns nothing.  May call: libc.
 */
#ifndef TC_BASE_LOG_H
#define TC_BASE_LOG_H

#include <stdio.h>

#define tc_warn(...) do { fprintf(stderr, "topocoll: warning: " __VA_ARGS__); fputc('\n', stderr); } while (0)
#define tc_debug(cfg, lvl, ...) do { if ((cfg)->verbose >= (lvl)) { \
        fprintf(stderr, "topocoll: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

#endif
