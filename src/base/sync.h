/*
 * base/sync -- waiting and memory-ordering helpers for the lock-free
 * single-writer flags of the shared segment.
 *
 * Owns nothing.  May call: libc (sched_yield, nanosleep, prctl).  Rule: a
 * flag has exactly one writer; writers publish with a release store after
 * the data it covers, readers consume with an acquire load before touching
 * that data.  Thread safety: a tc_backoff_t is its waiter's own; a nap
 * changes the calling thread's timer slack only for its own length.
 */
#ifndef TC_BASE_SYNC_H
#define TC_BASE_SYNC_H

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>
#include <stdatomic.h>
#include <stdint.h>

#define TC_CACHELINE 64
/* Control lines are padded to two cache lines: adjacent-line prefetch on
 * x86 otherwise makes neighbouring writers' lines bounce together. */
#define TC_CTL_ALIGN 128

static inline void tc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Backoff for a waiter: @spin polls with a pause, then a yield of the
 * core on every poll, so oversubscribed runs (more ranks than cores) let
 * the process we wait for run; with @nap_us > 0, once it has yielded
 * TC_BACKOFF_YIELDS times it sleeps nap_us per poll (oversubscribed
 * hosts, tc_config_nap). */
#define TC_BACKOFF_YIELDS 16
typedef struct {
    int polls;
    int spin;
    int nap_us;
    long slack_ns; /* the thread's timer slack, read at the first nap (-1: not yet) */
} tc_backoff_t;

static inline void tc_backoff_init(tc_backoff_t *b, int spin)
{
    b->polls = 0;
    b->spin = spin;
    b->nap_us = 0;
    b->slack_ns = -1;
}

/* Sleep nap_us with no timer slack: Linux lets a sleep of a normal thread
 * run late by its timer slack (50 us by default), so a 50 us nap took
 * 150 us on this project's VM (81 us with 1 us of slack).  The thread's
 * own slack is put back after the nap: it is the application's. */
static inline void tc_nap(tc_backoff_t *b)
{
    struct timespec ts = { 0, (long)b->nap_us * 1000L };
    if (b->slack_ns < 0) b->slack_ns = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (b->slack_ns > 1) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    nanosleep(&ts, NULL);
    if (b->slack_ns > 1) prctl(PR_SET_TIMERSLACK, (unsigned long)b->slack_ns, 0, 0, 0);
}

static inline void tc_backoff(tc_backoff_t *b)
{
    if (b->polls < b->spin) {
        b->polls++;
        tc_cpu_relax();
    } else if (b->nap_us > 0 && b->polls >= b->spin + TC_BACKOFF_YIELDS) {
        tc_nap(b);
    } else {
        b->polls++;
        sched_yield();
    }
}

#endif
