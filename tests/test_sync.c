/*
 * test_sync -- base/sync's waiter: after its yields a waiter naps
 * (TOPOCOLL_NAP) without timer slack, and the thread's own timer slack,
 * the application's, is what it was once the nap is over.  No MPI.
 */
#include "base/sync.h"

#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

#include "check.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* A waiter of @nap_us with the thread's slack at @slack_ns: its polls up
 * to the first nap, then one nap. */
static void nap_keeps_slack(unsigned long slack_ns, int nap_us)
{
    tc_backoff_t b;
    CHECK(prctl(PR_SET_TIMERSLACK, slack_ns, 0, 0, 0) == 0, "PR_SET_TIMERSLACK %lu", slack_ns);
    tc_backoff_init(&b, 0);
    b.nap_us = nap_us;
    for (int i = 0; i < TC_BACKOFF_YIELDS; i++) tc_backoff(&b); /* the yields */
    double t0 = now_us();
    tc_backoff(&b);
    double t = now_us() - t0;
    CHECK(t >= nap_us, "a nap of %d us slept %.1f us", nap_us, t);
    long after = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    CHECK(after == (long)slack_ns, "timer slack %lu ns before the nap, %ld after", slack_ns, after);
    tc_backoff(&b); /* a second nap, the slack read once */
    after = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    CHECK(after == (long)slack_ns, "timer slack %lu ns before two naps, %ld after", slack_ns,
          after);
}

int main(void)
{
    long dflt = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    nap_keeps_slack(123456, 20);
    nap_keeps_slack(1, 20);
    nap_keeps_slack(50000, 50);
    prctl(PR_SET_TIMERSLACK, (unsigned long)dflt, 0, 0, 0);
    printf("test_sync: %d checks, %d failed\n", tc_checks, tc_failures);
    return tc_failures != 0;
}
