/* coll/fold -- see fold.h. */
#include "fold.h"

#include "../xfer/region.h"

#include <stdlib.h>
#include <string.h>
void tc_part_init(tc_part_t *p, size_t count, size_t seg_elems, int nw)
{
    p->count = count;
    p->seg = seg_elems ? seg_elems : 1;
    p->nseg = (count + p->seg - 1) / p->seg;
    p->nw = nw;
    p->heavy = -1;
    p->wh = p->wo = 1;
}

void tc_part_weigh(tc_part_t *p, int w, int wh, int wo)
{
    p->heavy = w;
    p->wh = wh;
    p->wo = wo;
}

/* Cumulative weight of workers [0, j). */
static size_t cum(const tc_part_t *p, int j)
{
    return (size_t)j * (size_t)p->wo +
           (p->heavy >= 0 && p->heavy < j ? (size_t)(p->wh - p->wo) : 0);
}

void tc_part_piece(const tc_part_t *p, size_t i, int j, size_t *first, size_t *n)
{
    size_t lo = i * p->seg;
    size_t len = p->count - lo < p->seg ? p->count - lo : p->seg;
    size_t tot = cum(p, p->nw);
    size_t a = len * cum(p, j) / tot, b = len * cum(p, j + 1) / tot;
    *first = lo + a;
    *n = b - a;
}

int tc_fold_uses_cico(const tc_ctx_t *ctx, size_t bytes)
{
    return bytes <= ctx->cfg->red_cico_max &&
           bytes <= (size_t)ctx->cfg->cico_slots * ctx->cfg->cico_slot;
}

size_t tc_fold_segsize(const tc_ctx_t *ctx, const tc_rtype_t *t, size_t count, int nw)
{
    size_t bytes = count * t->extent, seg;
    if (ctx->cfg->red_segsize) {
        seg = ctx->cfg->red_segsize;
    } else if (ctx->map.nnodes == 1) {
        /* One node: no network step to overlap; segments would only add
         * synchronisations and single-copy calls (the folds already work
         * through cache-sized chunks).  Measured at np=2, 256 KiB-4 MiB:
         * Allreduce 1.02-1.34x native with Table 1's segments, 1.31-1.56x
         * whole; Reduce 1.06-1.53x against 1.30-1.61x; equal above. */
        seg = bytes;
    } else {
        size_t table1 = bytes <= (16u << 20) ? (64u << 10) : (1u << 20);
        seg = table1 * (size_t)nw;
        size_t eighth = bytes / 8;
        if (eighth > seg) seg = eighth;
    }
    size_t e = seg / t->extent;
    return e ? e : 1;
}

int tc_fold_scratch_get(tc_ctx_t *ctx, tc_fold_scratch_t *f)
{
    f->acc = f->in = NULL;
    if (!ctx->scratch &&
        posix_memalign((void **)&ctx->scratch, 4096, 2 * (size_t)TC_FOLD_CHUNK) != 0) {
        ctx->scratch = NULL;
        return -1;
    }
    f->acc = ctx->scratch;
    f->in = ctx->scratch + TC_FOLD_CHUNK;
    return 0;
}

void tc_fold_scratch_put(tc_fold_scratch_t *f) { f->acc = f->in = NULL; }

tc_status_t tc_fold_slots(tc_shm_t *s, const tc_rtype_t *t, size_t first, size_t n, char *dst)
{
    size_t off = first * t->extent, span = tc_span(t, n);
    if (!span) return TC_OK;
    memcpy(dst, tc_shm_cico(s, s->nlocal - 1, 0) + off, span);
    for (int r = s->nlocal - 2; r >= 0; r--) {
        int rc = tc_op_apply(t, tc_shm_cico(s, r, 0) + off, dst, n);
        if (rc != TC_OK) return rc;
    }
    s->bytes_cico += span * (size_t)s->nlocal;
    return TC_OK;
}

tc_status_t tc_fold_push(tc_shm_t *s, const tc_rtype_t *t, const char *src, size_t first, size_t n,
                         const uint64_t *push, int npush)
{
    size_t off = first * t->extent, span = tc_span(t, n);
    for (int i = 0; i < npush && span; i++)
        TC_RETURN_IF_FAILED(tc_region_write(s, push[i], off, src + off, span));
    return TC_OK;
}

/* Fold operands 0..@upto-1 (local ranks) of elements [@first, @first + @n)
 * into @dst (and the @push regions), chunk by chunk: tc_fold_piece's and
 * tc_fold_prefix's loop. */
static tc_status_t fold_range(tc_shm_t *s, const tc_rtype_t *t, const uint64_t *cookies,
                              const char *own, int upto, size_t first, size_t n, char *dst,
                              const uint64_t *push, int npush, tc_fold_scratch_t *f)
{
    size_t per = TC_FOLD_CHUNK / t->extent; /* elements per accumulator */
    if (per == 0) per = 1;                  /* huge element: one at a time, below */
    while (n > 0 && upto > 0) {
        size_t k = n < per ? n : per;
        size_t off = first * t->extent, span = tc_span(t, k);
        char *acc = f->acc, *in = f->in;
        char *big = NULL;
        if (span > TC_FOLD_CHUNK) { /* element larger than the chunk */
            big = malloc(2 * span);
            if (!big) return TC_ERR_NOMEM;
            acc = big;
            in = big + span;
        }
        /* Accumulate straight into a local destination unless it aliases
         * our own input (MPI_IN_PLACE), which is still an operand: saves a
         * pass over the chunk. */
        if (dst && !big && dst != own) acc = dst + off;
        int rc = TC_OK;
        /* Operand order: canonical (right to left) for non-commutative
         * ops.  For commutative ones the accumulator starts with a peer's
         * operand read straight into it, saving the copy of our own input
         * (the order stays fixed for a given layout: reproducible). */
        int firstop = upto - 1;
        if (t->commutative && firstop == s->me && upto > 1) firstop = upto - 2;
        if (firstop == s->me)
            memcpy(acc, own + off, span);
        else
            rc = tc_region_read(s, cookies[firstop], off, acc, span);
        for (int r = upto - 1; r >= 0 && rc == TC_OK; r--) {
            if (r == firstop) continue;
            if (r == s->me) {
                rc = tc_op_apply(t, own + off, acc, k);
            } else if ((rc = tc_region_read(s, cookies[r], off, in, span)) == TC_OK) {
                rc = tc_op_apply(t, in, acc, k);
            }
        }
        for (int i = 0; i < npush && rc == TC_OK; i++)
            rc = tc_region_write(s, push[i], off, acc, span);
        if (rc == TC_OK && dst && acc != dst + off) memcpy(dst + off, acc, span);
        free(big);
        if (rc != TC_OK) return rc;
        first += k;
        n -= k;
    }
    return TC_OK;
}

tc_status_t tc_fold_piece(tc_shm_t *s, const tc_rtype_t *t, const uint64_t *cookies,
                          const char *own, size_t first, size_t n, char *dst, const uint64_t *push,
                          int npush, tc_fold_scratch_t *f)
{
    return fold_range(s, t, cookies, own, s->nlocal, first, n, dst, push, npush, f);
}

tc_status_t tc_fold_prefix(tc_shm_t *s, const tc_rtype_t *t, const uint64_t *cookies,
                           const char *own, int upto, size_t n, char *dst, tc_fold_scratch_t *f)
{
    return fold_range(s, t, cookies, own, upto, 0, n, dst, NULL, 0, f);
}

int tc_fold_all_posted(const tc_shm_t *s, uint64_t seq, uint64_t *in, uint64_t *out)
{
    for (int i = 0; i < s->nlocal; i++) {
        if (i == s->me) continue;
        /* Acquire: pairs with the release in tc_fold_post. */
        if (atomic_load_explicit(&tc_cctl(s, i)->post_seq, memory_order_acquire) != seq) return 0;
    }
    for (int i = 0; i < s->nlocal; i++) {
        if (in) in[i] = atomic_load_explicit(&tc_cctl(s, i)->in_cookie, memory_order_relaxed);
        if (out) out[i] = atomic_load_explicit(&tc_cctl(s, i)->out_cookie, memory_order_relaxed);
    }
    return 1;
}

void tc_fold_post(tc_shm_t *s, uint64_t seq, uint64_t in_cookie, uint64_t out_cookie)
{
    tc_cctl_t *me = tc_cctl(s, s->me);
    atomic_store_explicit(&me->in_cookie, in_cookie, memory_order_relaxed);
    atomic_store_explicit(&me->out_cookie, out_cookie, memory_order_relaxed);
    atomic_store_explicit(&me->prog, 0, memory_order_relaxed);
    /* Release: cookies and the reset progress before post_seq. */
    atomic_store_explicit(&me->post_seq, seq, memory_order_release);
}

tc_status_t tc_fold_slots_share(tc_shm_t *s, const tc_rtype_t *t, size_t count, char *dst,
                                int publish, tc_fold_scratch_t *f)
{
    tc_part_t p;
    size_t first, n;
    tc_part_init(&p, count, count, s->nlocal);
    tc_part_piece(&p, 0, s->me, &first, &n);
    size_t off = first * t->extent, sp = tc_span(t, n);
    char *tmp = NULL, *at = dst ? dst + off : NULL;
    if (!at)
        at = f && f->acc && sp <= 2 * (size_t)TC_FOLD_CHUNK ? f->acc : (tmp = malloc(sp ? sp : 1));
    if (!at) return TC_ERR_NOMEM;
    int rc = tc_fold_slots(s, t, first, n, at);
    if (rc == TC_OK && publish) {
        memcpy(tc_shm_cico(s, s->me, 0) + off, at, sp);
        /* Release: the result piece in our slot before prog. */
        atomic_store_explicit(&tc_cctl(s, s->me)->prog, 1, memory_order_release);
    }
    free(tmp);
    return rc;
}

tc_status_t tc_fold_slots_gather(tc_shm_t *s, const tc_rtype_t *t, size_t count, char *out,
                                 size_t *got)
{
    tc_part_t p;
    size_t first, n;
    tc_part_init(&p, count, count, s->nlocal);
    for (; *got < (size_t)s->nlocal; (*got)++) {
        int j = (int)*got;
        if (j == s->me) continue;
        /* Acquire: pairs with the release in tc_fold_slots_share. */
        if (atomic_load_explicit(&tc_cctl(s, j)->prog, memory_order_acquire) < 1)
            return TC_INPROGRESS;
        tc_part_piece(&p, 0, j, &first, &n);
        size_t off = first * t->extent, sp = tc_span(t, n);
        memcpy(out + off, tc_shm_cico(s, j, 0) + off, sp);
        s->bytes_cico += sp;
    }
    return TC_OK;
}

tc_status_t tc_fold_eager_post(tc_shm_t *s, const tc_rtype_t *t, size_t count, const void *in,
                               int slot, uint64_t seq, uint64_t wait)
{
    return tc_shm_item_put(s, in, tc_span(t, count), slot, seq, wait) ? TC_OK : TC_INPROGRESS;
}

tc_status_t tc_fold_eager(tc_shm_t *s, const tc_rtype_t *t, size_t count, int slot, uint64_t seq,
                          const char *own, char *dst, char *acc, size_t *done)
{
    const int nl = s->nlocal;
    size_t span = tc_span(t, count), avail = span;
    for (int i = 0; i < nl; i++) {
        if (i == s->me && own) continue;
        size_t a = tc_shm_item_avail(s, i, slot, seq, span);
        if (a >= TC_SHM_ITEM_OTHERSIZE) return tc_shm_item_error(a);
        if (a < avail) avail = a;
    }
    size_t n = avail == span ? count : avail / t->extent; /* whole elements present everywhere */
    if (n > *done) {
        size_t off = *done * t->extent, k = n - *done, len = tc_span(t, k);
        /* our operand is still needed where the result goes (MPI_IN_PLACE):
         * fold the piece aside, then copy it over */
        char *a = own && dst == own ? acc + off : dst + off;
#define OPERAND(r) (((r) == s->me && own ? own : tc_shm_item_data(s, (r), slot, span)) + off)
        memcpy(a, OPERAND(nl - 1), len);
        for (int r = nl - 2; r >= 0; r--) {
            int rc = tc_op_apply(t, OPERAND(r), a, k);
            if (rc != TC_OK) return rc;
        }
#undef OPERAND
        if (a != dst + off) memcpy(dst + off, a, len);
        s->bytes_cico += len * (size_t)(nl - (own != NULL));
        *done = n;
    }
    return *done == count ? TC_OK : TC_INPROGRESS;
}
