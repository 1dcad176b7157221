/*
 * test_ptracer -- when topocoll names any process its ptracer
 * (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY): Yama's ptrace_scope 1 lets
 * CMA through then), and when it takes that back.  There is no
 * PR_GET_PTRACER, so this program defines prctl() and process_vm_readv()
 * itself: the static topocoll_internal it links calls these (a definition
 * in the executable wins over libc's), which record the PR_SET_PTRACER
 * calls made while a segment is created or destroyed and pass everything
 * else to the kernel (syscall(2)).  The modes of process_vm_readv:
 *   real       the kernel's;
 *   yama       EPERM until this process has called PR_SET_PTRACER_ANY (what
 *              Yama scope 1 does, seen from every process at once);
 *   refuse     always EPERM (ptrace refused for good: a container, seccomp).
 * Checked, on the node communicator and on MPI_COMM_SELF:
 *   - TOPOCOLL_SINGLE_COPY=none: no PR_SET_PTRACER call at all;
 *   - alone on the node: none either;
 *   - real: single copy as before; if the ptracer was opened, it is closed
 *     again unless single copy is used;
 *   - yama: opened once, single copy used, closed when the last segment
 *     that needed it goes (two segments: not at the first's destroy);
 *   - refuse: opened, then closed at once, no single copy.
 */
#define _GNU_SOURCE
#include "xfer/shmseg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../check.h"

enum { M_REAL, M_YAMA, M_REFUSE };
static int mode = M_REAL, recording, opened_here;
static int n_any, n_zero, last; /* PR_SET_PTRACER calls seen while recording; the last argument */

int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
                  a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (option == PR_SET_PTRACER && recording) {
        if (a2 == (unsigned long)PR_SET_PTRACER_ANY) n_any++, last = 1, opened_here = 1;
        if (a2 == 0) n_zero++, last = 0, opened_here = 0;
    }
    return (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl, const struct iovec *r,
                         unsigned long nr, unsigned long flags)
{
    if (recording && (mode == M_REFUSE || (mode == M_YAMA && !opened_here))) {
        errno = EPERM;
        return -1;
    }
    return syscall(SYS_process_vm_readv, pid, l, nl, r, nr, flags);
}

static void start(int m)
{
    mode = m;
    n_any = n_zero = 0;
    last = -1;
    recording = 1;
}

static tc_shm_t *create(MPI_Comm comm, tc_sc_mode_t sc)
{
    tc_config_t cfg = *tc_config_get();
    cfg.single_copy = sc;
    tc_shm_t *s = NULL;
    CHECK(tc_shm_create(comm, &cfg, &s) == 0 && s, "tc_shm_create failed");
    return s;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tc_rank = rank;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nl;
    MPI_Comm_size(node, &nl);
    CHECK(nl >= 2, "two processes on the node needed (%d)", nl);
    tc_shm_t *s, *s2;

    start(M_REAL); /* TOPOCOLL_SINGLE_COPY=none: never touched */
    s = create(node, TC_SC_NONE);
    CHECK(s && !s->single_copy, "none: single copy on");
    tc_shm_destroy(s);
    CHECK(n_any == 0 && n_zero == 0, "none: PR_SET_PTRACER called (%d any, %d zero)", n_any,
          n_zero);

    start(M_REAL); /* alone: never touched */
    s = create(MPI_COMM_SELF, TC_SC_AUTO);
    CHECK(s && s->single_copy, "alone: %s", s ? s->why : "");
    tc_shm_destroy(s);
    CHECK(n_any == 0 && n_zero == 0, "alone: PR_SET_PTRACER called (%d any, %d zero)", n_any,
          n_zero);

    start(M_REAL); /* the kernel's answer: opened only if needed, closed unless used */
    s = create(node, TC_SC_AUTO);
    int sc = s && s->single_copy;
    CHECK(n_any == 0 || sc || last == 0, "real: ptracer left open without single copy");
    tc_shm_destroy(s);
    CHECK(last != 1, "real: ptracer left open after the segment went");

    start(M_YAMA); /* opened, used, closed with the last segment needing it */
    s = create(node, TC_SC_AUTO);
    s2 = create(node, TC_SC_AUTO);
    CHECK(s && s->single_copy && s2 && s2->single_copy, "yama: no single copy (%s)",
          s ? s->why : "");
    CHECK(n_any == 1 && n_zero == 0, "yama: %d any, %d zero calls after two creates", n_any,
          n_zero);
    tc_shm_destroy(s);
    CHECK(n_zero == 0, "yama: closed while a segment still needs it");
    tc_shm_destroy(s2);
    CHECK(n_zero == 1 && last == 0, "yama: not closed with the last segment");

    start(M_REFUSE); /* opened, refused anyway: closed at once */
    s = create(node, TC_SC_AUTO);
    CHECK(s && !s->single_copy, "refuse: single copy on");
    CHECK(n_any == 1 && n_zero == 1 && last == 0, "refuse: %d any, %d zero, last %d", n_any, n_zero,
          last);
    tc_shm_destroy(s);
    recording = 0;

    int f = tc_report("test_ptracer");
    MPI_Comm_free(&node);
    MPI_Finalize();
    return f ? 1 : 0;
}
