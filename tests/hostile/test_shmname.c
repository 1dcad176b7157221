/*
 * test_shmname -- the names of the node segments in /dev/shm, and what a
 * crashed job leaves there.  This program defines shm_open() itself (the
 * static topocoll_internal it links calls it; it records the names topocoll
 * creates and passes on to libc's), then, on the node communicator:
 *   - names are /topocoll-<pid>-<16 hex digits>-<n>, the creator's pid, and
 *     the hex part uses all 64 bits (random: 0.5 put a heap address
 *     there, which never has a bit above 47 set): of 16 names, one at least
 *     has a bit set above bit 47;
 *   - a leftover of a dead process (topocoll-<pid of an exited child>-...)
 *     is removed when the next segment is created, a leftover of a live one
 *     (this process) is not, nor is a file not named like a segment.
 */
#define _GNU_SOURCE
#include "xfer/shmseg.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

#define NAMES 16
static char names[NAMES][64];
static int nnames, recording;

int shm_open(const char *name, int oflag, mode_t mode)
{
    static int (*real)(const char *, int, mode_t);
    if (!real) real = (int (*)(const char *, int, mode_t))dlsym(RTLD_NEXT, "shm_open");
    if (recording && (oflag & O_CREAT) && nnames < NAMES) snprintf(names[nnames++], 64, "%s", name);
    return real ? real(name, oflag, mode) : (errno = ENOSYS, -1);
}

/* A file /dev/shm/@name (mode 0600); 1 if made. */
static int plant(const char *name)
{
    char p[128];
    snprintf(p, sizeof(p), "/dev/shm/%s", name);
    int fd = open(p, O_CREAT | O_RDWR | O_EXCL, 0600);
    if (fd >= 0) close(fd);
    return fd >= 0;
}

static int exists(const char *name)
{
    char p[128];
    struct stat st;
    snprintf(p, sizeof(p), "/dev/shm/%s", name);
    return stat(p, &st) == 0;
}

int main(int argc, char **argv)
{
    /* a dead pid: a child that exited (before MPI_Init: no fork under MPI) */
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tc_rank = rank;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int lrank;
    MPI_Comm_rank(node, &lrank);
    const tc_config_t *cfg = tc_config_get();

    /* 1. the names */
    recording = 1;
    for (int i = 0; i < NAMES; i++) {
        tc_shm_t *s = NULL;
        CHECK(tc_shm_create(node, cfg, &s) == 0, "tc_shm_create failed");
        tc_shm_destroy(s);
    }
    recording = 0;
    if (lrank == 0) {
        CHECK(nnames == NAMES, "%d segment names seen (want %d)", nnames, NAMES);
        int high = 0;
        for (int i = 0; i < nnames; i++) {
            int pid = 0, n = -1, end = 0;
            char hex[32] = "";
            int got = sscanf(names[i], "/topocoll-%d-%31[0-9a-f]-%d%n", &pid, hex, &n, &end);
            CHECK(got == 3 && pid == (int)getpid() && strlen(hex) == 16 && n >= 0 &&
                      names[i][end] == 0,
                  "segment name %s", names[i]);
            high |= strtoull(hex, NULL, 16) >> 48 != 0;
        }
        CHECK(high, "no segment name has a bit above 47 in its hex part (an address?)");
    }

    /* 2. leftovers: one of a dead process, one of a live one, one not a segment's */
    char d[64], l[64];
    snprintf(d, sizeof(d), "topocoll-%d-00000000deadbeef-%d", (int)dead, rank);
    snprintf(l, sizeof(l), "topocoll-%d-00000000feedface-0", (int)getpid());
    const char *other = "topocoll-notapid-0";
    int planted = plant(d) && plant(l) && (rank != 0 || plant(other));
    CHECK(planted, "cannot create files in /dev/shm: %s", strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    tc_shm_t *s = NULL;
    CHECK(tc_shm_create(node, cfg, &s) == 0, "tc_shm_create failed");
    tc_shm_destroy(s);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!exists(d), "the leftover of dead process %d is still there", (int)dead);
    CHECK(exists(l), "the file of live process %d was removed", (int)getpid());
    CHECK(rank != 0 || exists(other), "a file not named like a segment was removed");
    char p[128];
    snprintf(p, sizeof(p), "/dev/shm/%s", d);
    unlink(p);
    snprintf(p, sizeof(p), "/dev/shm/%s", l);
    unlink(p);
    if (rank == 0) unlink("/dev/shm/topocoll-notapid-0");

    int f = tc_report("test_shmname");
    MPI_Comm_free(&node);
    MPI_Finalize();
    return f ? 1 : 0;
}
