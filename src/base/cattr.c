/* base/cattr -- see cattr.h. */
#include "cattr.h"

static void unlink_obj(tc_cattr_class_t *k, tc_cattr_t *o)
{
    pthread_mutex_lock(&k->lock);
    if (o->prev)
        o->prev->next = o->next;
    else if (k->live == o)
        k->live = o->next;
    if (o->next) o->next->prev = o->prev;
    o->prev = o->next = NULL;
    pthread_mutex_unlock(&k->lock);
}

static int delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    tc_cattr_class_t *k = extra;
    (void)comm;
    (void)keyval;
    unlink_obj(k, attr);
    k->destroy(attr);
    return MPI_SUCCESS;
}

/* Start of MPI_Finalize: release every object still attached, then the
 * keyvals. */
static int self_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    tc_cattr_class_t *k = extra;
    (void)comm;
    (void)keyval;
    (void)attr;
    for (;;) {
        pthread_mutex_lock(&k->lock);
        tc_cattr_t *o = k->live;
        pthread_mutex_unlock(&k->lock);
        if (!o) break;
        /* runs delete_fn, which unlinks o */
        if (PMPI_Comm_delete_attr(
                o->comm, atomic_load_explicit(&k->keyval, memory_order_relaxed)) != MPI_SUCCESS) {
            unlink_obj(k, o);
            k->destroy(o);
        }
    }
    pthread_mutex_lock(&k->lock);
    int kv = atomic_load_explicit(&k->keyval, memory_order_relaxed);
    atomic_store_explicit(&k->keyval, MPI_KEYVAL_INVALID, memory_order_release);
    if (kv != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&kv);
    PMPI_Comm_free_keyval(&k->self_keyval);
    k->self_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&k->lock);
    return MPI_SUCCESS;
}

void *tc_cattr_get(tc_cattr_class_t *k, MPI_Comm comm)
{
    void *attr = NULL;
    int flag = 0;
    int kv = atomic_load_explicit(&k->keyval, memory_order_acquire);
    if (kv == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return NULL;
    if (PMPI_Comm_get_attr(comm, kv, &attr, &flag) != MPI_SUCCESS || !flag) return NULL;
    return attr;
}

int tc_cattr_set(tc_cattr_class_t *k, MPI_Comm comm, tc_cattr_t *obj)
{
    pthread_mutex_lock(&k->lock);
    int kv = atomic_load_explicit(&k->keyval, memory_order_relaxed), rc = MPI_SUCCESS;
    if (kv == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &kv, k);
        if (rc == MPI_SUCCESS) {
            atomic_store_explicit(&k->keyval, kv, memory_order_release);
            if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &k->self_keyval,
                                        k) == MPI_SUCCESS)
                PMPI_Comm_set_attr(MPI_COMM_SELF, k->self_keyval, NULL);
        }
    }
    if (rc == MPI_SUCCESS) {
        obj->comm = comm;
        obj->prev = NULL;
        obj->next = k->live;
        if (k->live) k->live->prev = obj;
        k->live = obj;
    }
    pthread_mutex_unlock(&k->lock);
    if (rc == MPI_SUCCESS && (rc = PMPI_Comm_set_attr(comm, kv, obj)) != MPI_SUCCESS)
        unlink_obj(k, obj);
    return rc;
}
