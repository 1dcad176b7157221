/* xfer/shmseg -- see shmseg.h. */
#define _GNU_SOURCE
#include "shmseg.h"

#include "../base/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TC_PROBE_MAGIC 0x746f706f636f6c6cULL /* "topocoll" */
#define TC_SHM_DIR     "/dev/shm"            /* where glibc's shm_open puts the names */
#define TC_SHM_PREFIX  "topocoll-"           /* names: topocoll-<pid>-<64 random bits>-<n> */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

int tc_shm_random(void *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = getrandom((char *)buf + got, len - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

/* ---- The ptracer opening (Yama) ----------------------------------------------
 * Under Yama's ptrace_scope 1 a process may read another by CMA only if the
 * target named it (or anyone) with PR_SET_PTRACER, as Open MPI's vader
 * does.  A process-wide attribute shared by every segment of the process:
 * opened by the first segment whose single copy needs it, closed
 * (PR_SET_PTRACER 0) when the last one goes, or at once when single copy
 * failed anyway.  Set only where the plain probe failed with EPERM, so a
 * ptracer the application or the MPI library set is never touched; a
 * segment whose probe worked while ours was open holds it too.
 * TOPOCOLL_SINGLE_COPY=none refuses it (docs/security.md). */
static pthread_mutex_t ptracer_lock = PTHREAD_MUTEX_INITIALIZER;
static int ptracer_holds; /* segments holding the opening (under ptracer_lock) */

static void ptracer_open(void)
{
    pthread_mutex_lock(&ptracer_lock);
    if (ptracer_holds++ == 0) (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    pthread_mutex_unlock(&ptracer_lock);
}

/* Single copy worked without opening the ptracer: if it is open (another segment of ours opened
 * it), our peers may read us only thanks to it: hold it too.  1 if held. */
static int ptracer_hold_if_open(void)
{
    pthread_mutex_lock(&ptracer_lock);
    int held = ptracer_holds > 0;
    ptracer_holds += held;
    pthread_mutex_unlock(&ptracer_lock);
    return held;
}

static void ptracer_close(void)
{
    pthread_mutex_lock(&ptracer_lock);
    if (--ptracer_holds == 0) (void)prctl(PR_SET_PTRACER, 0, 0, 0, 0);
    pthread_mutex_unlock(&ptracer_lock);
}

/* Read every peer's probe word by CMA, at the pid and address it sent at
 * setup (s->peer); 1 if all reads return the expected value.  On failure
 * @why says what the kernel answered, and *@eperm is 1 if it was EPERM. */
static int probe_cma(tc_shm_t *s, char *why, size_t len, int *eperm)
{
    *eperm = 0;
    for (int d = 1; d < s->nlocal; d++) {
        int peer = (s->me + d) % s->nlocal;
        uint64_t got = 0;
        struct iovec l = { &got, sizeof(got) };
        struct iovec r = { (void *)(uintptr_t)s->peer[peer].probe, sizeof(got) };
        ssize_t n = process_vm_readv((pid_t)s->peer[peer].pid, &l, 1, &r, 1, 0);
        if (n != (ssize_t)sizeof(got)) {
            *eperm = n < 0 && errno == EPERM;
            snprintf(why, len, "process_vm_readv refused (%s): ptrace scope, container or seccomp",
                     n < 0 ? strerror(errno) : "short read");
            return 0;
        }
        if (got != (TC_PROBE_MAGIC ^ s->peer[peer].pid)) {
            snprintf(why, len, "process_vm_readv returned wrong data (different address spaces?)");
            return 0;
        }
    }
    snprintf(why, len, "CMA probe succeeded between all %d local processes", s->nlocal);
    return 1;
}

/* Offsets of the segment's parts, from its base. */
typedef struct {
    size_t ctl, inbox, lane, reg, cico;
} shm_layout_t;

/* Lay the segment out for s->nlocal processes: offsets into @lay, sizes into @s. */
static void shm_layout(tc_shm_t *s, const tc_config_t *cfg, shm_layout_t *lay)
{
    s->cico_slot = cfg->cico_slot;
    s->cico_slots = cfg->cico_slots;
    lay->ctl = align_up(64, TC_CTL_ALIGN);
    lay->inbox = lay->ctl + (size_t)s->nlocal * sizeof(tc_ctl_t);
    s->lane_row =
        align_up(3 * (size_t)s->nlocal * sizeof(uint64_t), TC_CTL_ALIGN) / sizeof(uint64_t);
    lay->lane = align_up(lay->inbox + (size_t)s->nlocal * sizeof(tc_inbox_t), TC_CTL_ALIGN);
    lay->reg = align_up(lay->lane + (size_t)s->nlocal * s->lane_row * sizeof(uint64_t), 4096);
    lay->cico =
        align_up(lay->reg + (size_t)s->nlocal * TC_REGION_SLOTS * sizeof(tc_region_desc_t), 4096);
    s->size = lay->cico + (size_t)s->nlocal * (size_t)s->cico_slots * s->cico_slot;
}

/* Remove the segments dead processes of this user left in /dev/shm (a
 * process died before every local process had mapped its segment, so it
 * was never unlinked): topocoll-<pid>-... whose pid no longer exists. */
static void shm_sweep_stale(void)
{
    DIR *d = opendir(TC_SHM_DIR);
    if (!d) return;
    const size_t np = strlen(TC_SHM_PREFIX);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        if (strncmp(e->d_name, TC_SHM_PREFIX, np) != 0) continue;
        errno = 0;
        long pid = strtol(e->d_name + np, &end, 10);
        if (errno || end == e->d_name + np || *end != '-' || pid <= 0 || pid > INT_MAX) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* Local rank 0: create and size the segment under a fresh @name (our pid
 * and 64 random bits); its fd, or -1 and @name "". */
static int shm_create_named(tc_shm_t *s, char *name, size_t len)
{
    int fd = -1;
    shm_sweep_stale();
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        uint64_t r;
        if (tc_shm_random(&r, sizeof(r)) != 0) { /* no getrandom: a name, if a guessable one */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            r = ((uint64_t)ts.tv_sec << 30 ^ (uint64_t)ts.tv_nsec) * 0x9e3779b97f4a7c15ULL;
        }
        snprintf(name, len, "/" TC_SHM_PREFIX "%d-%016llx-%d", (int)getpid(), (unsigned long long)r,
                 attempt);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0 || ftruncate(fd, (off_t)s->size) != 0) {
        tc_warn_once("cannot create shared segment %s: %s", name, strerror(errno));
        if (fd >= 0) {
            close(fd);
            shm_unlink(name);
            fd = -1;
        }
        name[0] = 0;
    }
    return fd;
}

/* Point the parts of @s at their places in the mapped segment. */
static void shm_place(tc_shm_t *s, const shm_layout_t *lay)
{
    s->ctl = (tc_ctl_t *)((char *)s->base + lay->ctl);
    s->inbox = (tc_inbox_t *)((char *)s->base + lay->inbox);
    s->lane = (_Atomic uint64_t *)(void *)((char *)s->base + lay->lane);
    s->regions = (tc_region_desc_t *)((char *)s->base + lay->reg);
    s->cico = (char *)s->base + lay->cico;
}

/* A process other than local rank 0: open the segment @name rank 0 created, after checking it is
 * still what rank 0 made (ours, no access for others); its fd or -1. */
static int shm_open_named(const char *name)
{
    struct stat st;
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        tc_warn_once("cannot open shared segment %s: %s", name, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        tc_warn_once("shared segment %s is not this user's alone: not used", name);
        close(fd);
        return -1;
    }
    return fd;
}

/* Create (local rank 0), share the name of, open and map the segment: 1 if this process mapped
 * it.  Collective over @lcomm; @name stays set where rank 0 created the segment. */
static int shm_map_segment(tc_shm_t *s, MPI_Comm lcomm, const tc_config_t *cfg, char *name,
                           size_t len)
{
    shm_layout_t lay;
    int ok = 1, fd = -1;

    PMPI_Comm_size(lcomm, &s->nlocal);
    PMPI_Comm_rank(lcomm, &s->me);
    shm_layout(s, cfg, &lay);
    if (s->me == 0 && (fd = shm_create_named(s, name, len)) < 0) ok = 0;
    PMPI_Bcast(name, (int)len, MPI_CHAR, 0, lcomm);
    if (!name[0]) ok = 0;
    if (ok && s->me != 0 && (fd = shm_open_named(name)) < 0) ok = 0;
    if (ok) {
        s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (s->base == MAP_FAILED) {
            s->base = NULL;
            ok = 0;
        }
    }
    if (fd >= 0) close(fd);
    if (s->base) shm_place(s, &lay);
    return ok;
}

/* The setup exchange, through MPI (collective over @lcomm): every local process's pid, seal key
 * and probe word's address into s->peer, this process's private copy, the only place CMA and
 * the descriptors' checks take them from.  s->peer is allocated (every process checked). */
static void shm_exchange(tc_shm_t *s, MPI_Comm lcomm)
{
    tc_shm_peer_t *me = &s->peer[s->me];
    s->probe = TC_PROBE_MAGIC ^ (uint64_t)getpid();
    me->pid = (uint64_t)getpid();
    me->probe = (uint64_t)(uintptr_t)&s->probe;
    uint64_t r[3];
    if (tc_shm_random(r, sizeof(r)) != 0) { /* no getrandom: weaker keys, the same checks */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r[0] = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ me->pid ^ me->probe;
        r[1] = r[0] * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)s;
        r[2] = ~r[1] * 0xbf58476d1ce4e5b9ULL;
        tc_warn_once("getrandom failed (%s): region keys from the clock", strerror(errno));
    }
    me->seal = r[0];
    s->key_secret[0] = r[1];
    s->key_secret[1] = r[2];
    _Static_assert(sizeof(tc_shm_peer_t) == 3 * sizeof(uint64_t), "three words per process");
    PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s->peer, 3, MPI_UINT64_T, lcomm);
}

/* One round of the single-copy probe, agreed over @lcomm: 1 if every local process read every
 * other by CMA.  @want: this process tries (0: it answers no).  *@eperm: some process was refused
 * with EPERM (Yama's ptrace scope 1 may let it through after PR_SET_PTRACER); *@all_want:
 * every process tried. */
static int shm_probe_round(tc_shm_t *s, MPI_Comm lcomm, int want, int *eperm, int *all_want)
{
    int e = 0, v[3], all[3];
    int sc = want && probe_cma(s, s->why, sizeof(s->why), &e);
    v[0] = sc;
    v[1] = -e;
    v[2] = want;
    PMPI_Allreduce(v, all, 3, MPI_INT, MPI_MIN, lcomm);
    *eperm = -all[1];
    *all_want = all[2];
    if (sc && !all[0])
        snprintf(s->why, sizeof(s->why), "CMA refused between some other local processes");
    return all[0];
}

/* Agree among the local processes on single copy: usable only if every one of them says so.
 * Alone on the node, or under TOPOCOLL_SINGLE_COPY=none, nothing is probed and the ptracer is
 * left alone; it is opened only when the plain probe failed with EPERM, and closed again at once
 * when single copy fails anyway. */
static void shm_agree_single_copy(tc_shm_t *s, MPI_Comm lcomm, const tc_config_t *cfg)
{
    int want = cfg->single_copy != TC_SC_NONE, eperm = 0, all_want = 0;
    if (s->nlocal == 1) {
        s->single_copy = 1;
        snprintf(s->why, sizeof(s->why), "one process on the node: no intra-node copy");
        return;
    }
    if (!want) snprintf(s->why, sizeof(s->why), "TOPOCOLL_SINGLE_COPY=none");
    int all_sc = shm_probe_round(s, lcomm, want, &eperm, &all_want);
    if (all_sc) s->ptracer = ptracer_hold_if_open();
    if (!all_sc && eperm && all_want) { /* Yama scope 1: name any process our ptracer, retry */
        ptracer_open();
        PMPI_Barrier(lcomm); /* every process opened before any probes */
        all_sc = shm_probe_round(s, lcomm, 1, &eperm, &all_want);
        if (all_sc)
            s->ptracer = 1; /* held until tc_shm_destroy */
        else
            ptracer_close();
    }
    if (!all_sc && cfg->single_copy == TC_SC_CMA && s->me == 0)
        tc_warn_once("TOPOCOLL_SINGLE_COPY=cma but %s; using copy-in/copy-out", s->why);
    s->single_copy = all_sc;
}

int tc_shm_create(MPI_Comm lcomm, const tc_config_t *cfg, tc_shm_t **out)
{
    tc_shm_t *s = calloc(1, sizeof(*s));
    char name[64] = { 0 };
    int ok = 0, all_ok = 0;

    if (s)
        ok = shm_map_segment(s, lcomm, cfg, name, sizeof(name)) &&
             (s->peer = calloc((size_t)s->nlocal, sizeof(*s->peer))) != NULL;
    else /* no memory here: still in the name's broadcast, which then fails everywhere */
        PMPI_Bcast(name, (int)sizeof(name), MPI_CHAR, 0, lcomm);
    /* Every process has mapped (or failed): the name can go. */
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, lcomm);
    if (s && s->me == 0 && name[0]) shm_unlink(name);
    if (!all_ok) {
        tc_shm_destroy(s);
        return -1;
    }
    shm_exchange(s, lcomm);
    shm_agree_single_copy(s, lcomm, cfg);
    *out = s;
    return 0;
}

void tc_shm_destroy(tc_shm_t *s)
{
    if (!s) return;
    if (s->ptracer) ptracer_close();
    if (s->base) munmap(s->base, s->size);
    free(s->peer);
    free(s->bounce);
    free(s->bounce_async);
    free(s);
}
