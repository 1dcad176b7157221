/*
 * base/log -- one-line diagnostics on stderr, prefixed "topocoll:"; a
 * warning about a condition met per communicator or per call is printed
 * once per process (tc_warn_once).
 * Owns nothing.  May call: libc.
 */
#ifndef TC_BASE_LOG_H
#define TC_BASE_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* One line on stderr in a single write, so lines of processes sharing the
 * terminal never interleave. */
static inline void tc_log_line(const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void tc_log_line(const char *prefix, const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "%s", prefix);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof(line))
        n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof(line) - 2) n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    fwrite(line, 1, (size_t)n, stderr);
}

#define tc_warn(...) tc_log_line("topocoll: warning: ", __VA_ARGS__)
/* Once per process for this call site (one cause), however many
 * communicators or calls meet it. */
#define tc_warn_once(...)                                                                        \
    do {                                                                                         \
        static atomic_int tc_once_;                                                              \
        if (!atomic_exchange_explicit(&tc_once_, 1, memory_order_relaxed)) tc_warn(__VA_ARGS__); \
    } while (0)
#define tc_debug(cfg, lvl, ...)                                              \
    do {                                                                     \
        if ((cfg)->verbose >= (lvl)) tc_log_line("topocoll: ", __VA_ARGS__); \
    } while (0)

#endif
