/*
 * base/log -- one-line diagnostics on stderr, prefixed "topocoll:"; a
 * warning about a condition met per communicator or per call is printed
 * once per process (tc_warn_once).
 * Owns nothing.  May call: libc.
 */
#ifndef TC_BASE_LOG_H
#define TC_BASE_LOG_H

#include <stdatomic.h>
#include <stdio.h>

#define tc_warn(...) do { fprintf(stderr, "topocoll: warning: " __VA_ARGS__); fputc('\n', stderr); } while (0)
/* Once per process for this call site (one cause), however many
 * communicators or calls meet it. */
#define tc_warn_once(...) do { static atomic_int tc_once_; \
        if (!atomic_exchange_explicit(&tc_once_, 1, memory_order_relaxed)) tc_warn(__VA_ARGS__); } while (0)
#define tc_debug(cfg, lvl, ...) do { if ((cfg)->verbose >= (lvl)) { \
        fprintf(stderr, "topocoll: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

#endif
