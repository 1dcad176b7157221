/*
 * base/cattr -- an object hung on a communicator as an MPI attribute,
 * released when the communicator is freed, and, for communicators still
 * alive then (MPI_COMM_WORLD, ones the program never freed), at the start
 * of MPI_Finalize: a delete callback on MPI_COMM_SELF, which MPI runs
 * first thing in MPI_Finalize, deletes them all.
 *
 * Owns: one keyval and the list of live objects per class.  May call:
 * PMPI (keyvals and attributes), pthreads.  Used by coll/ctx (the
 * collectives' context) and hier/hier (the processes' hierarchy paths).
 */
#ifndef TC_BASE_CATTR_H
#define TC_BASE_CATTR_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>

/** The link every attached object starts with (first member). */
typedef struct tc_cattr {
    MPI_Comm comm;
    struct tc_cattr *prev, *next;
} tc_cattr_t;

/** A kind of attached object: its destructor, keyval and live list.
 *  Define one per kind with TC_CATTR_CLASS_INIT, at file scope. */
typedef struct tc_cattr_class {
    void (*destroy)(tc_cattr_t *obj); /* frees the object (already unlinked) */
    pthread_mutex_t lock;             /* guards live, the keyvals' creation */
    _Atomic int keyval;               /* written under lock (release), read without (acquire) */
    int self_keyval;
    tc_cattr_t *live;
} tc_cattr_class_t;

#define TC_CATTR_CLASS_INIT(destroy_fn)                                                       \
    {                                                                                         \
        (destroy_fn), PTHREAD_MUTEX_INITIALIZER, MPI_KEYVAL_INVALID, MPI_KEYVAL_INVALID, NULL \
    }

/** The object of class @k on @comm, or NULL.  Local, no lock (the
 *  collectives' hot path). */
void *tc_cattr_get(tc_cattr_class_t *k, MPI_Comm comm);

/** Attach @obj (whose first member is a tc_cattr_t) to @comm; the keyval
 *  is created on first use.  MPI_SUCCESS, or an MPI error code with @obj
 *  neither attached nor linked (the caller still owns it).  Local. */
int tc_cattr_set(tc_cattr_class_t *k, MPI_Comm comm, tc_cattr_t *obj);

#endif
