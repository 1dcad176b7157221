/* xfer/shmseg -- see shmseg.h. */
#define _GNU_SOURCE
#include "shmseg.h"

#include "../base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TC_PROBE_MAGIC 0x746f706f636f6c6cULL /* "topocoll" */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* Read every peer's probe word by CMA; 1 if all reads return the expected
 * value.  On failure @why says what the kernel answered. */
static int probe_cma(tc_shm_t *s, char *why, size_t len)
{
    for (int d = 1; d < s->nlocal; d++) {
        int peer = (s->me + d) % s->nlocal;
        uint64_t got = 0;
        struct iovec l = { &got, sizeof(got) };
        struct iovec r = { (void *)(uintptr_t)s->ctl[peer].probe_addr, sizeof(got) };
        ssize_t n = process_vm_readv(s->ctl[peer].pid, &l, 1, &r, 1, 0);
        if (n != (ssize_t)sizeof(got)) {
            snprintf(why, len, "process_vm_readv refused (%s): ptrace scope, container or seccomp",
                     n < 0 ? strerror(errno) : "short read");
            return 0;
        }
        if (got != (TC_PROBE_MAGIC ^ (uint64_t)s->ctl[peer].pid)) {
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

/* Local rank 0: create and size the segment under a fresh @name; its fd, or -1 and @name "". */
static int shm_create_named(tc_shm_t *s, char *name, size_t len)
{
    int fd = -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        snprintf(name, len, "/topocoll-%d-%lx-%d", (int)getpid(),
                 (unsigned long)(ts.tv_nsec ^ (long)(uintptr_t)s), attempt);
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
    if (ok && s->me != 0) {
        fd = shm_open(name, O_RDWR, 0600);
        if (fd < 0) {
            tc_warn_once("cannot open shared segment %s: %s", name, strerror(errno));
            ok = 0;
        }
    }
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

/* This process's own verdict on single copy (1: usable), with its reason in s->why. */
static int shm_probe_single_copy(tc_shm_t *s, const tc_config_t *cfg)
{
    int sc = 1;
    if (cfg->single_copy == TC_SC_NONE) {
        sc = 0;
        snprintf(s->why, sizeof(s->why), "TOPOCOLL_SINGLE_COPY=none");
    } else if (s->nlocal == 1) {
        snprintf(s->why, sizeof(s->why), "one process on the node: no intra-node copy");
    } else {
        sc = probe_cma(s, s->why, sizeof(s->why));
    }
    return sc;
}

/* Agree among the local processes on single copy: usable only if every one of them says so. */
static void shm_agree_single_copy(tc_shm_t *s, MPI_Comm lcomm, const tc_config_t *cfg)
{
    /* Single copy: publish pid and probe word, then read every peer's. */
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0,
                0); /* Yama scope 1; EINVAL without Yama */
    s->ctl[s->me].pid = (int32_t)getpid();
    s->probe = TC_PROBE_MAGIC ^ (uint64_t)getpid();
    s->ctl[s->me].probe_addr = (uint64_t)(uintptr_t)&s->probe;
    PMPI_Barrier(lcomm); /* orders the setup stores above before peers read them */
    int sc = shm_probe_single_copy(s, cfg);
    int all_sc = 0;
    PMPI_Allreduce(&sc, &all_sc, 1, MPI_INT, MPI_MIN, lcomm);
    if (sc && !all_sc)
        snprintf(s->why, sizeof(s->why), "CMA refused between some other local processes");
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
        ok = shm_map_segment(s, lcomm, cfg, name, sizeof(name));
    else /* no memory here: still in the name's broadcast, which then fails everywhere */
        PMPI_Bcast(name, (int)sizeof(name), MPI_CHAR, 0, lcomm);
    /* Every process has mapped (or failed): the name can go. */
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, lcomm);
    if (s && s->me == 0 && name[0]) shm_unlink(name);
    if (!all_ok) {
        tc_shm_destroy(s);
        return -1;
    }
    shm_agree_single_copy(s, lcomm, cfg);
    *out = s;
    return 0;
}

void tc_shm_destroy(tc_shm_t *s)
{
    if (!s) return;
    if (s->base) munmap(s->base, s->size);
    free(s->bounce);
    free(s->bounce_async);
    free(s);
}
