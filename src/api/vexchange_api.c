/*
 * api/vexchange_api -- MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoallv and their
 * nonblocking forms (topocoll.h) over coll/vexchange: one screening and
 * one buffer preparation shared by the blocking and nonblocking calls
 * (only the arguments MPI makes significant on each rank are read), then
 * the operations table.
 *
 * Every rank takes the same decision from what every rank knows (the
 * context and its plan; never a count, which differs per rank), so
 * either all run topocoll or all pass the call to the native MPI.  The
 * side with the count and displacement arrays (the root's, or every
 * Allgatherv process's receive side) becomes a table of byte lengths and
 * offsets: into the user's buffer when its datatype is contiguous, else
 * into a packed copy laid out block after block, packed or unpacked with
 * an indexed type over the user's (MPI 4.0 section 5.1.4).  MPI_Alltoallw
 * is Alltoallv's operation with a datatype per rank: its tables come from
 * each rank's datatype and byte displacement, and a side whose datatypes
 * are not all contiguous is packed or unpacked with a struct type of them
 * (MPI 4.0 section 5.1.2).
 *
 * Owns nothing beyond the calls.  May call: nbc/, coll/, base/, PMPI.
 */
#include "topocoll.h"

#include "../base/log.h"
#include "../coll/vexchange.h"
#include "../nbc/nbc.h"
#include "api_int.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* One call's arguments, the MPI names (the count arrays: the table). */
typedef struct vx_call {
    const char *name;
    int kind; /* TC_VX_* */
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    const int *counts, *displs; /* Gatherv, Allgatherv, Alltoallv: receive side;
                                   Scatterv: send side */
    int root;
    MPI_Comm comm;
    const int *scounts, *sdispls;        /* Alltoallv: the send side */
    int w;                               /* 1: Alltoallw (kind TC_VX_ALLTOALLV): */
    const MPI_Datatype *stypes, *rtypes; /*   a datatype per rank, displacements in bytes */
} vx_call_t;

/* The call's collective (TC_CI_*) and coll/ operation (TC_COLL_*). */
static int ci_of(const vx_call_t *x)
{
    static const int ci[] = { TC_CI_GATHERV, TC_CI_SCATTERV, TC_CI_ALLGATHERV, TC_CI_ALLTOALLV };
    return x->w ? TC_CI_ALLTOALLW : ci[x->kind];
}
static int kind_of(const vx_call_t *x)
{
    return x->w ? TC_COLL_ALLTOALLW : TC_COLL_GATHERV + x->kind;
}

/* Which sides are significant on this rank (MPI 4.0 sections 6.5-6.7):
 * the table side (*@table) and the single block side (*@block). */
static void sides(const vx_call_t *x, int rank, int *table, int *block)
{
    const int root = rank == x->root;
    switch (x->kind) {
    case TC_VX_GATHERV:
        *table = root;
        *block = !(root && x->sendbuf == MPI_IN_PLACE);
        break;
    case TC_VX_SCATTERV:
        *table = root;
        *block = !(root && x->recvbuf == MPI_IN_PLACE);
        break;
    default: *table = 1; *block = x->sendbuf != MPI_IN_PLACE;
    }
}

/* The table side's datatype, and the block side's count and datatype. */
static MPI_Datatype table_type(const vx_call_t *x)
{
    return x->kind == TC_VX_SCATTERV ? x->sendtype : x->recvtype;
}
static int block_count(const vx_call_t *x)
{
    return x->kind == TC_VX_SCATTERV ? x->recvcount : x->sendcount;
}
static MPI_Datatype block_type(const vx_call_t *x)
{
    return x->kind == TC_VX_SCATTERV ? x->recvtype : x->sendtype;
}

/* Alltoallw: rank @r's datatype, MPI_BYTE where its count is 0 (then it
 * moves nothing and may be MPI_DATATYPE_NULL, which some codes pass: a
 * decision that read it would differ between ranks). */
static MPI_Datatype wtype(const MPI_Datatype *types, const int *counts, int r)
{
    return counts[r] ? types[r] : MPI_BYTE;
}

/* One side of an Alltoallw (@counts, @displs, @types for @size ranks):
 * TC_API_RUN, TC_API_NATIVE (arrays MPI must judge), or the error class
 * raised. */
static int check_wside(const vx_call_t *x, int size, const int *counts, const int *displs,
                       const MPI_Datatype *types)
{
    int ts;
    if (!counts || !displs || !types) return TC_API_NATIVE;
    for (int r = 0; r < size; r++) {
        if (counts[r] < 0)
            return tc_api_arg_error(x->comm, MPI_ERR_COUNT, x->name, "negative count", counts[r]);
        if (!counts[r]) continue;
        if (types[r] == MPI_DATATYPE_NULL)
            return tc_api_arg_error(x->comm, MPI_ERR_TYPE, x->name,
                                    "datatype is MPI_DATATYPE_NULL for a count above 0", r);
        if (PMPI_Type_size(types[r], &ts) != MPI_SUCCESS)
            return tc_api_arg_error(x->comm, MPI_ERR_TYPE, x->name, "invalid datatype", r);
    }
    return TC_API_RUN;
}

/* The checks MPI's own would make on this rank's significant arguments:
 * TC_API_RUN, TC_API_NATIVE (arrays MPI must judge), or the error class
 * raised. */
static int check_args(const vx_call_t *x, int size, int rank)
{
    int table, block, ts;
    if (x->w) {
        int rc = check_wside(x, size, x->counts, x->displs, x->rtypes);
        if (rc == TC_API_RUN && x->sendbuf != MPI_IN_PLACE)
            rc = check_wside(x, size, x->scounts, x->sdispls, x->stypes);
        return rc;
    }
    if (x->kind != TC_VX_ALLGATHERV && (x->root < 0 || x->root >= size))
        return tc_api_arg_error(x->comm, MPI_ERR_ROOT, x->name, "invalid root", x->root);
    sides(x, rank, &table, &block);
    if (table && (!x->counts || !x->displs)) return TC_API_NATIVE;
    for (int r = 0; table && r < size; r++)
        if (x->counts[r] < 0)
            return tc_api_arg_error(x->comm, MPI_ERR_COUNT, x->name, "negative count",
                                    x->counts[r]);
    if (x->kind == TC_VX_ALLTOALLV && block) { /* the send side: a table too */
        if (!x->scounts || !x->sdispls) return TC_API_NATIVE;
        for (int r = 0; r < size; r++)
            if (x->scounts[r] < 0)
                return tc_api_arg_error(x->comm, MPI_ERR_COUNT, x->name, "negative count",
                                        x->scounts[r]);
    }
    if (block && x->kind != TC_VX_ALLTOALLV && block_count(x) < 0)
        return tc_api_arg_error(x->comm, MPI_ERR_COUNT, x->name, "negative count", block_count(x));
    if ((table && table_type(x) == MPI_DATATYPE_NULL) ||
        (block && block_type(x) == MPI_DATATYPE_NULL))
        return tc_api_arg_error(x->comm, MPI_ERR_TYPE, x->name, "datatype is MPI_DATATYPE_NULL", 0);
    if ((table && PMPI_Type_size(table_type(x), &ts) != MPI_SUCCESS) ||
        (block && PMPI_Type_size(block_type(x), &ts) != MPI_SUCCESS))
        return tc_api_arg_error(x->comm, MPI_ERR_TYPE, x->name, "invalid datatype", 0);
    return TC_API_RUN;
}

/* The screening: TC_API_RUN with @p (its context), TC_API_NATIVE, or an
 * error class raised.  @p->bytes: Allgatherv's largest block, the same
 * on every process (its counts are); 0 for the others, whose counts
 * differ between ranks (no decision reads them). */
static int screen(const vx_call_t *x, tc_api_call_t *p)
{
    int size = 0, rank = 0;
    int rc = tc_api_comm_of(x->comm, x->name, p, &size, &rank);
    if (rc == TC_API_RUN) rc = check_args(x, size, rank);
    if (rc != TC_API_RUN) return rc;
    if (x->kind == TC_VX_ALLGATHERV) {
        int ts = 0;
        PMPI_Type_size(x->recvtype, &ts);
        for (int r = 0; r < size; r++)
            if ((size_t)x->counts[r] * (size_t)ts > p->bytes)
                p->bytes = (size_t)x->counts[r] * (size_t)ts;
    }
    if (size == 1) {
        p->why = "one process";
        return TC_API_NATIVE;
    }
    /* (no size for the lazy build: each rank's may differ, the build must not) */
    return tc_api_ctx_of(x->comm, x->name, 0, p);
}

/* A call's contiguous buffers (coll/vexchange's shapes). */
typedef struct vx_bufs {
    const char *in;     /* our block; Scatterv's root: its send stream */
    char *out;          /* the receive buffer or our block (Scatterv) */
    size_t own;         /* our block's bytes */
    size_t *len, *off;  /* the table (NULL where not significant) */
    char *hold;         /* owned: the table and the packed input */
    int packed;         /* 1: hold has a packed copy of the input (or pout is set) */
    char *pout;         /* owned: the packed output, unpacked after the call into: */
    void *ubuf;         /*   the user's buffer, */
    int ucount;         /*   so many elements of */
    MPI_Datatype utype; /*  this type (an indexed one of ours when idx) */
    int idx;
    size_t *stab; /* Alltoallv: our block for each rank, length and offset from in */
    size_t span;  /*   within span bytes */
    int blocking; /* hold may be local: a blocking call's, no allocation */
    /* a nonblocking call's packing of its input, kept for a persistent
     * start to redo (nbc.h tc_nb_t.pk_*): pk_type is b's */
    int pk, pk_count, pk_bytes;
    const void *pk_src;
    MPI_Datatype pk_type;
    char *pk_dst;
    _Alignas(16) char local[1024];
} vx_bufs_t;

/* @bytes for b->hold: b->local where a blocking call's fit it (a small
 * call pays no allocation), else malloc's.  NULL: no memory. */
static char *hold_alloc(vx_bufs_t *b, size_t bytes)
{
    return (b->hold = b->blocking && bytes <= sizeof(b->local) ? b->local : malloc(bytes));
}

static void bufs_free(vx_bufs_t *b)
{
    if (b->hold != b->local) free(b->hold);
    free(b->pout);
    if (b->idx) PMPI_Type_free(&b->utype);
    if (b->pk) PMPI_Type_free(&b->pk_type);
    b->hold = b->pout = NULL;
    b->idx = b->pk = 0;
}

/* The input's packing: @count of @dt at @src into @bytes at @dst, now;
 * a persistent request's keeps it (b->pk_*) for each start to redo.
 * @ours: @dt is b's (made for this call), freed here when not kept; else
 * the application's, duplicated when kept.  TC_OK or TC_ERR_NOMEM. */
static tc_status_t pack_in(vx_bufs_t *b, const void *src, int count, MPI_Datatype dt, int ours,
                           char *dst, size_t bytes)
{
    int pos = 0;
    PMPI_Pack(src, count, dt, dst, (int)bytes, &pos, MPI_COMM_SELF);
    if (b->blocking || !tc_nb_persist_pending()) {
        if (ours) PMPI_Type_free(&dt);
        return TC_OK;
    }
    if (!ours && PMPI_Type_dup(dt, &dt) != MPI_SUCCESS) return TC_ERR_NOMEM;
    b->pk = 1;
    b->pk_src = src;
    b->pk_count = count;
    b->pk_type = dt;
    b->pk_dst = dst;
    b->pk_bytes = (int)bytes;
    return TC_OK;
}

/* 1 if @dt's elements lie back to back with no gap (*@lb: the first
 * byte's offset, *@ext: the extent, *@ts: the size). */
static int dense(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *ext, int *ts)
{
    MPI_Aint l, tl, te;
    PMPI_Type_size(dt, ts);
    PMPI_Type_get_extent(dt, &l, ext);
    PMPI_Type_get_true_extent(dt, &tl, &te);
    *lb = tl;
    return (MPI_Aint)*ts == te && *ext == te;
}

/* The datatypes' shapes of one call on this rank. */
typedef struct vx_dims {
    int table, block;   /* the sides significant here (sides) */
    int tdense, bdense; /* their datatypes have no gaps (dense) */
    int tts, bts;       /* their sizes */
    MPI_Aint tlb, text; /* the table type's first byte and extent */
    MPI_Aint blb;       /* the block type's first byte */
    size_t own, total;  /* our block's bytes; the table's */
} vx_dims_t;

/* The table side: @b's lengths and offsets, the indexed type when packed;
 * Scatterv's root packs its send stream into @packed_in; the others'
 * output goes to a packed copy when the type has gaps.  *@tbuf: the side's
 * contiguous buffer. */
static tc_status_t table_side(const vx_call_t *x, int n, const vx_dims_t *d, vx_bufs_t *b,
                              char *packed_in, char **tbuf)
{
    size_t at = 0;
    b->len = (size_t *)(void *)b->hold;
    b->off = b->len + n;
    for (int r = 0; r < n; r++) {
        b->len[r] = (size_t)x->counts[r] * (size_t)d->tts;
        b->off[r] = d->tdense ? (size_t)((MPI_Aint)x->displs[r] * d->text + d->tlb) : at;
        at += b->len[r];
    }
    if (!d->tdense) { /* the indexed type: the packed stream's layout */
        if (PMPI_Type_indexed(n, x->counts, x->displs, table_type(x), &b->utype) != MPI_SUCCESS ||
            PMPI_Type_commit(&b->utype) != MPI_SUCCESS)
            return TC_ERR_NOMEM;
        b->idx = 1;
    }
    if (x->kind == TC_VX_SCATTERV) {
        *tbuf = d->tdense ? (char *)x->sendbuf : packed_in;
        b->in = *tbuf;
        if (!d->tdense) { /* packed now: the indexed type goes to the packing */
            b->idx = 0;
            return pack_in(b, x->sendbuf, 1, b->utype, 1, packed_in, d->total);
        }
        return TC_OK;
    }
    if (!d->tdense && !(b->pout = malloc(d->total + 1))) return TC_ERR_NOMEM;
    *tbuf = d->tdense ? (char *)x->recvbuf : b->pout;
    b->out = *tbuf;
    if (!d->tdense) {
        b->ubuf = x->recvbuf;
        b->ucount = 1;
    }
    return TC_OK;
}

/* Our block: the user's, or a packed copy (Scatterv: received there and
 * unpacked after the call). */
static tc_status_t block_side(const vx_call_t *x, const vx_dims_t *d, vx_bufs_t *b, char *packed_in)
{
    char *v = (char *)(x->kind == TC_VX_SCATTERV ? x->recvbuf : x->sendbuf) + d->blb;
    b->own = d->own;
    if (x->kind == TC_VX_SCATTERV && !d->bdense) {
        if (!(b->pout = malloc(d->own + 1))) return TC_ERR_NOMEM;
        v = b->pout;
        b->ubuf = x->recvbuf;
        b->ucount = x->recvcount;
        b->utype = x->recvtype;
    } else if (!d->bdense) {
        v = packed_in;
        TC_RETURN_IF_FAILED(pack_in(b, x->sendbuf, x->sendcount, x->sendtype, 0, v, d->own));
    }
    if (x->kind == TC_VX_SCATTERV)
        b->out = v;
    else
        b->in = v;
    return TC_OK;
}

/* The root's (Allgatherv: our) block in place, in @tbuf at our offset;
 * where the table type has gaps it is in the user's buffer: packed into
 * the stream. */
static tc_status_t in_place(const vx_call_t *x, int me, const vx_dims_t *d, vx_bufs_t *b,
                            char *tbuf)
{
    b->own = b->len[me];
    if (x->kind == TC_VX_SCATTERV) {
        b->out = tbuf + b->off[me];
        return TC_OK;
    }
    b->in = tbuf + b->off[me];
    if (d->tdense) return TC_OK;
    return pack_in(b, (const char *)x->recvbuf + (MPI_Aint)x->displs[me] * d->text, x->counts[me],
                   table_type(x), 0, b->pout + b->off[me], b->len[me]);
}

/* In place (Alltoallv, Alltoallw): the receive buffer's blocks (b->len,
 * b->off from b->out), in rank order, into @packed: copied, or for a
 * persistent request's packed with a type of them (pack_in keeps it). */
static tc_status_t pack_in_place(const vx_call_t *x, int n, const vx_dims_t *d, vx_bufs_t *b,
                                 char *packed)
{
    if (b->idx) return pack_in(b, x->recvbuf, 1, b->utype, 0, packed, d->total);
    if (b->blocking || !tc_nb_persist_pending()) {
        for (size_t r = 0, at = 0; r < (size_t)n; at += b->len[r], r++)
            memcpy(packed + at, b->out + b->off[r], b->len[r]);
        return TC_OK;
    }
    int *bl = malloc(sizeof(int) * (size_t)n);
    MPI_Aint *dp = malloc(sizeof(MPI_Aint) * (size_t)n);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int ok = bl && dp;
    for (int r = 0; ok && r < n; r++) {
        bl[r] = (int)b->len[r]; /* (the total fits an int: the caller's check) */
        dp[r] = (MPI_Aint)(ptrdiff_t)b->off[r];
    }
    ok = ok && PMPI_Type_create_hindexed(n, bl, dp, MPI_BYTE, &t) == MPI_SUCCESS;
    free(bl);
    free(dp);
    if (ok && PMPI_Type_commit(&t) != MPI_SUCCESS) {
        PMPI_Type_free(&t);
        ok = 0;
    }
    return ok ? pack_in(b, b->out, 1, t, 1, packed, d->total) : TC_ERR_NOMEM;
}

/* Alltoallv's send side into @b (its receive side is done: b->len,
 * b->off, b->out): the send table and stream, the user's buffer from its
 * first block when the type has no gaps, else a packed copy in @packed
 * (in place: the receive buffer's blocks, copied in rank order). */
static tc_status_t send_side(const vx_call_t *x, int n, const vx_dims_t *d, vx_bufs_t *b,
                             char *packed)
{
    size_t *t = b->stab, at = 0;
    if (x->sendbuf == MPI_IN_PLACE) { /* the input: a copy of what the receive buffer holds */
        for (int r = 0; r < n; r++) {
            t[2 * r] = b->len[r];
            t[2 * r + 1] = at;
            at += b->len[r];
        }
        b->in = packed;
        b->span = at;
        return pack_in_place(x, n, d, b, packed);
    }
    MPI_Aint lb, ext, first = -1, end = 0;
    int ts;
    if (dense(x->sendtype, &lb, &ext, &ts)) {
        for (int r = 0; r < n; r++) { /* the span from the first block's byte to the last's */
            MPI_Aint o = (MPI_Aint)x->sdispls[r] * ext + lb, l = (MPI_Aint)x->scounts[r] * ts;
            if (!l) continue;
            if (first < 0 || o < first) first = o;
            if (o + l > end) end = o + l;
        }
        first = first < 0 ? 0 : first;
        for (int r = 0; r < n; r++) {
            t[2 * r] = (size_t)x->scounts[r] * (size_t)ts;
            t[2 * r + 1] = t[2 * r] ? (size_t)((MPI_Aint)x->sdispls[r] * ext + lb - first) : 0;
        }
        b->in = (const char *)x->sendbuf + first;
        b->span = end > first ? (size_t)(end - first) : 0;
        return TC_OK;
    }
    MPI_Datatype idx;
    if (PMPI_Type_indexed(n, x->scounts, x->sdispls, x->sendtype, &idx) != MPI_SUCCESS ||
        PMPI_Type_commit(&idx) != MPI_SUCCESS)
        return TC_ERR_NOMEM;
    for (int r = 0; r < n; r++) {
        t[2 * r] = (size_t)x->scounts[r] * (size_t)ts;
        t[2 * r + 1] = at;
        at += t[2 * r];
    }
    b->in = packed;
    b->span = at;
    return pack_in(b, x->sendbuf, 1, idx, 1, packed, at);
}

/* Alltoallv's buffers: TC_OK or TC_ERR_NOMEM (@b freed). */
static tc_status_t buffers_alltoallv(const vx_call_t *x, const tc_ctx_t *c, vx_bufs_t *b)
{
    const int n = c->map.size;
    vx_dims_t d = { 0 };
    MPI_Aint slb, sext;
    int sts = 0;
    d.table = 1;
    d.tdense = dense(x->recvtype, &d.tlb, &d.text, &d.tts);
    const int inplace = x->sendbuf == MPI_IN_PLACE;
    const int sdense = inplace ? 1 : dense(x->sendtype, &slb, &sext, &sts);
    size_t stotal = 0;
    for (int r = 0; r < n; r++) d.total += (size_t)x->counts[r] * (size_t)d.tts;
    for (int r = 0; r < n && !inplace; r++) stotal += (size_t)x->scounts[r] * (size_t)sts;
    const size_t packed = inplace ? d.total : sdense ? 0 : stotal;
    b->packed = packed > 0;
    if ((!d.tdense || !sdense || inplace) &&
        (d.total > (size_t)INT_MAX || stotal > (size_t)INT_MAX))
        return TC_ERR_NOMEM; /* (MPI_Pack counts in int) */
    const size_t tab = 4 * (size_t)n * sizeof(size_t);
    if (!hold_alloc(b, tab + packed + 1)) return TC_ERR_NOMEM;
    char *tbuf = NULL;
    b->stab = (size_t *)(void *)b->hold + 2 * (size_t)n;
    tc_status_t st = table_side(x, n, &d, b, NULL, &tbuf);
    if (st == TC_OK) st = send_side(x, n, &d, b, b->hold + tab);
    if (st != TC_OK) bufs_free(b);
    return st;
}

/* An Alltoallw side's struct type (@counts of @types at byte @displs
 * from the buffer) in *@dt, committed: TC_OK or TC_ERR_NOMEM. */
static tc_status_t w_struct(int n, const int *counts, const int *displs, const MPI_Datatype *types,
                            MPI_Datatype *dt)
{
    MPI_Aint *at = malloc(sizeof(MPI_Aint) * (size_t)(n > 0 ? n : 1));
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(n > 0 ? n : 1));
    int rc = at && ty ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int r = 0; rc == MPI_SUCCESS && r < n; r++) {
        at[r] = displs[r];
        ty[r] = wtype(types, counts, r);
    }
    if (rc == MPI_SUCCESS) rc = PMPI_Type_create_struct(n, counts, at, ty, dt);
    free(at);
    free(ty);
    if (rc != MPI_SUCCESS) return TC_ERR_NOMEM;
    if (PMPI_Type_commit(dt) != MPI_SUCCESS) {
        PMPI_Type_free(dt);
        return TC_ERR_NOMEM;
    }
    return TC_OK;
}

/* An Alltoallw side: each rank's bytes into @len and, where every
 * datatype with a count is contiguous (*@dense), its first byte's offset
 * from the buffer into @off (else its offset in the packed stream);
 * *@total: all the blocks' bytes. */
static void w_side(int n, const int *counts, const int *displs, const MPI_Datatype *types,
                   size_t *len, size_t *off, int *dense_out, size_t *total)
{
    MPI_Aint lb, ext;
    int ts, all = 1;
    *total = 0;
    for (int r = 0; r < n; r++) {
        const int d = dense(wtype(types, counts, r), &lb, &ext, &ts);
        all &= d || !counts[r];
        len[r] = (size_t)counts[r] * (size_t)ts;
        off[r] = len[r] ? (size_t)((MPI_Aint)displs[r] + lb) : 0;
        *total += len[r];
    }
    *dense_out = all;
    if (all) return;
    size_t at = 0;
    for (int r = 0; r < n; r++) {
        off[r] = at;
        at += len[r];
    }
}

/* Alltoallw's send side into @b (its receive side is done): each rank's
 * bytes @slen and offsets @soff (w_side's), from the user's buffer where
 * @sdense, else packed into @packed with the side's struct type; in
 * place, Alltoallv's (a copy of the receive buffer's blocks). */
static tc_status_t w_send(const vx_call_t *x, int n, const vx_dims_t *d, vx_bufs_t *b,
                          const size_t *slen, const size_t *soff, int sdense, char *packed)
{
    size_t *t = b->stab, at = 0;
    if (x->sendbuf == MPI_IN_PLACE) return send_side(x, n, d, b, packed);
    ptrdiff_t first = -1, end = 0;
    for (int r = 0; sdense && r < n; r++) { /* the span from the first block's byte to the last's */
        const ptrdiff_t o = (ptrdiff_t)soff[r], e = o + (ptrdiff_t)slen[r];
        if (!slen[r]) continue;
        if (first < 0 || o < first) first = o;
        if (e > end) end = e;
    }
    first = first < 0 ? 0 : first;
    for (int r = 0; r < n; r++) {
        t[2 * r] = slen[r];
        t[2 * r + 1] = !slen[r] ? 0 : sdense ? (size_t)((ptrdiff_t)soff[r] - first) : soff[r];
        at += slen[r];
    }
    if (sdense) {
        b->in = (const char *)x->sendbuf + first;
        b->span = end > first ? (size_t)(end - first) : 0;
        return TC_OK;
    }
    MPI_Datatype st;
    TC_RETURN_IF_FAILED(w_struct(n, x->scounts, x->sdispls, x->stypes, &st));
    b->in = packed;
    b->span = at;
    return pack_in(b, x->sendbuf, 1, st, 1, packed, at);
}

/* b->hold grown to @bytes, its first @keep bytes kept (out of b->local
 * where a blocking call's small tables were): NULL without memory (the
 * old hold stays b's). */
static char *hold_grow(vx_bufs_t *b, size_t keep, size_t bytes)
{
    if (b->hold == b->local && bytes <= sizeof(b->local)) return b->hold;
    char *h = b->hold == b->local ? malloc(bytes) : realloc(b->hold, bytes);
    if (!h) return NULL;
    if (b->hold == b->local) memcpy(h, b->local, keep);
    return b->hold = h;
}

/* Alltoallw's buffers: Alltoallv's tables (receive: b->len, b->off, b->out;
 * send: b->stab, b->span, b->in), a side with gaps through a packed copy
 * (@b->hold: the tables, w_side's send-side scratch, then the packed input
 * once the tables say how long it is).  TC_OK or TC_ERR_NOMEM (@b freed). */
static tc_status_t buffers_alltoallw(const vx_call_t *x, const tc_ctx_t *c, vx_bufs_t *b)
{
    const int n = c->map.size, inplace = x->sendbuf == MPI_IN_PLACE;
    const size_t tab = 6 * (size_t)n * sizeof(size_t);
    vx_dims_t d = { 0 };
    int sdense = 1;
    size_t stotal = 0;
    if (!hold_alloc(b, tab)) return TC_ERR_NOMEM;
    size_t *t = (size_t *)(void *)b->hold; /* len, off, stab (2n), the send side's len, off */
    w_side(n, x->counts, x->displs, x->rtypes, t, t + n, &d.tdense, &d.total);
    if (!inplace)
        w_side(n, x->scounts, x->sdispls, x->stypes, t + 4 * n, t + 5 * n, &sdense, &stotal);
    const size_t packed = inplace ? d.total : sdense ? 0 : stotal;
    tc_status_t st = TC_OK;
    if ((!d.tdense || !sdense || inplace) &&
        (d.total > (size_t)INT_MAX || stotal > (size_t)INT_MAX))
        st = TC_ERR_NOMEM; /* (MPI_Pack counts in int) */
    else if (packed && !hold_grow(b, tab, tab + packed + 1))
        st = TC_ERR_NOMEM;
    b->len = (size_t *)(void *)b->hold;
    b->off = b->len + n;
    b->stab = b->off + n;
    b->packed = packed > 0;
    if (st == TC_OK && !d.tdense) { /* received packed, unpacked after the call */
        st = w_struct(n, x->counts, x->displs, x->rtypes, &b->utype);
        b->idx = st == TC_OK;
        if (st == TC_OK && !(b->pout = malloc(d.total + 1))) st = TC_ERR_NOMEM;
        b->ubuf = x->recvbuf;
        b->ucount = 1;
    }
    b->out = d.tdense ? (char *)x->recvbuf : b->pout;
    if (st == TC_OK)
        st = w_send(x, n, &d, b, b->stab + 2 * n, b->stab + 3 * n, sdense, b->hold + tab);
    if (st != TC_OK) bufs_free(b);
    return st;
}

/* The buffers of @x on @c's rank (@blocking: a blocking call's, whose
 * small tables need no allocation): TC_OK or TC_ERR_NOMEM (@b freed). */
static tc_status_t buffers(const vx_call_t *x, const tc_ctx_t *c, vx_bufs_t *b, int blocking)
{
    const int n = c->map.size, me = c->map.rank;
    vx_dims_t d = { 0 };
    MPI_Aint bext;
    memset(b, 0, offsetof(vx_bufs_t, local));
    b->blocking = blocking;
    if (x->w) return buffers_alltoallw(x, c, b);
    if (x->kind == TC_VX_ALLTOALLV) return buffers_alltoallv(x, c, b);
    sides(x, me, &d.table, &d.block);
    d.tdense = d.table ? dense(table_type(x), &d.tlb, &d.text, &d.tts) : 1;
    d.bdense = d.block ? dense(block_type(x), &d.blb, &bext, &d.bts) : 1;
    d.own = d.block ? (size_t)block_count(x) * (size_t)d.bts : 0;
    for (int r = 0; d.table && r < n; r++) d.total += (size_t)x->counts[r] * (size_t)d.tts;
    /* packed: the input block (Gatherv, Allgatherv), the root's stream (Scatterv) */
    size_t pin = x->kind == TC_VX_SCATTERV ? (d.tdense ? 0 : d.total) : (d.bdense ? 0 : d.own);
    b->packed = pin > 0;
    if ((!d.tdense || !d.bdense) && (d.total > (size_t)INT_MAX || d.own > (size_t)INT_MAX))
        return TC_ERR_NOMEM; /* (MPI_Pack counts in int) */
    size_t tab = d.table ? 2 * (size_t)n * sizeof(size_t) : 0;
    if (!hold_alloc(b, tab + pin + 1)) return TC_ERR_NOMEM;
    char *packed_in = b->hold + tab, *tbuf = NULL;
    tc_status_t st = d.table ? table_side(x, n, &d, b, packed_in, &tbuf) : TC_OK;
    if (st == TC_OK && d.block) st = block_side(x, &d, b, packed_in);
    if (st == TC_OK && !d.block && d.table) st = in_place(x, me, &d, b, tbuf);
    if (st != TC_OK) bufs_free(b);
    return st;
}

/* The native call (blocking when !@request). */
static int native(const vx_call_t *x, MPI_Request *request)
{
    if (request && tc_nb_persist_pending()) return TC_NB_PERSIST_NATIVE;
    if (x->w)
        return request ? PMPI_Ialltoallw(x->sendbuf, x->scounts, x->sdispls, x->stypes, x->recvbuf,
                                         x->counts, x->displs, x->rtypes, x->comm, request)
                       : PMPI_Alltoallw(x->sendbuf, x->scounts, x->sdispls, x->stypes, x->recvbuf,
                                        x->counts, x->displs, x->rtypes, x->comm);
    switch (x->kind) {
    case TC_VX_GATHERV:
        return request ? PMPI_Igatherv(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf, x->counts,
                                       x->displs, x->recvtype, x->root, x->comm, request)
                       : PMPI_Gatherv(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf, x->counts,
                                      x->displs, x->recvtype, x->root, x->comm);
    case TC_VX_SCATTERV:
        return request ? PMPI_Iscatterv(x->sendbuf, x->counts, x->displs, x->sendtype, x->recvbuf,
                                        x->recvcount, x->recvtype, x->root, x->comm, request)
                       : PMPI_Scatterv(x->sendbuf, x->counts, x->displs, x->sendtype, x->recvbuf,
                                       x->recvcount, x->recvtype, x->root, x->comm);
    case TC_VX_ALLTOALLV:
        return request
                   ? PMPI_Ialltoallv(x->sendbuf, x->scounts, x->sdispls, x->sendtype, x->recvbuf,
                                     x->counts, x->displs, x->recvtype, x->comm, request)
                   : PMPI_Alltoallv(x->sendbuf, x->scounts, x->sdispls, x->sendtype, x->recvbuf,
                                    x->counts, x->displs, x->recvtype, x->comm);
    default:
        return request ? PMPI_Iallgatherv(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf,
                                          x->counts, x->displs, x->recvtype, x->comm, request)
                       : PMPI_Allgatherv(x->sendbuf, x->sendcount, x->sendtype, x->recvbuf,
                                         x->counts, x->displs, x->recvtype, x->comm);
    }
}

static tc_coll_args_t args_of(const vx_call_t *x, const vx_bufs_t *b, int blocking)
{
    tc_coll_args_t a = { .in = b->in,
                         .out = b->out,
                         .n = b->own,
                         .root = x->root,
                         .blocking = blocking,
                         .vlen = b->len,
                         .voff = b->off,
                         .vstab = b->stab,
                         .vspan = b->span };
    return a;
}

static int run_blocking(const vx_call_t *x)
{
    tc_api_call_t p;
    int rc = tc_api_choose(screen(x, &p), &p, ci_of(x), NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native(x->name, &p, ci_of(x));
        return native(x, NULL);
    }
    if (rc != TC_API_RUN) return rc;
    tc_ctx_t *c = p.ctx;
    vx_bufs_t b;
    tc_status_t st = buffers(x, c, &b, 1);
    if (st == TC_OK) {
        tc_nb_drain(c); /* this communicator's nonblocking operations come first */
        tc_coll_args_t a = args_of(x, &b, 1);
        st = tc_api_run(c, kind_of(x), &a);
    }
    if (st == TC_OK && b.ubuf) {
        int pos = 0, psize = 0;
        PMPI_Pack_size(b.ucount, b.utype, x->comm, &psize);
        PMPI_Unpack(b.pout, psize, &pos, b.ubuf, b.ucount, b.utype, x->comm);
    }
    bufs_free(&b);
    return tc_api_finish(c, x->comm, st, x->name);
}

static int run_nonblocking(const vx_call_t *x, MPI_Request *request)
{
    tc_api_call_t p;
    int rc = screen(x, &p);
    if (rc == TC_API_RUN && !request) rc = tc_api_no_request(&p);
    rc = tc_api_choose(rc, &p, ci_of(x), NULL);
    if (rc == TC_API_NATIVE) {
        tc_api_native(x->name, &p, ci_of(x));
        return native(x, request);
    }
    if (rc != TC_API_RUN) return rc;
    vx_bufs_t b;
    tc_nb_t *op = NULL;
    if (buffers(x, p.ctx, &b, 0) != TC_OK || !(op = tc_api_nb_new(&p, kind_of(x), x->name))) {
        bufs_free(&b);
        return tc_api_finish(p.ctx, x->comm, TC_ERR_NOMEM, x->name);
    }
    const tc_coll_args_t a = args_of(x, &b, 0);
    op->a.in = a.in;
    op->a.out = a.out;
    op->a.n = a.n;
    op->a.root = a.root;
    op->a.vlen = a.vlen;
    op->a.voff = a.voff;
    op->a.vstab = a.vstab;
    op->a.vspan = a.vspan;
    op->repack = 1; /* (a persistent start redoes the packing: pk_*) */
    op->pk_in = b.pk;
    op->pk_src = b.pk_src;
    op->pk_count = b.pk_count;
    op->pk_type = b.pk_type;
    op->pk_dst = b.pk_dst;
    op->pk_bytes = b.pk_bytes;
    b.pk = 0;
    op->tmp[0] = b.pout; /* the operation's now, freed when it completes */
    if (b.packed || b.pout)
        op->tmp[1] = b.hold; /* (a copy of the application's data) */
    else
        op->own = b.hold; /* (the tables alone) */
    b.pout = b.hold = NULL;
    if (b.ubuf && tc_api_nb_keep_type(op, b.ubuf, b.ucount, b.utype) != 0) {
        tc_api_nb_discard(op);
        bufs_free(&b);
        return tc_api_finish(p.ctx, x->comm, TC_ERR_NOMEM, x->name);
    }
    bufs_free(&b); /* (our indexed type: the operation holds a duplicate) */
    return tc_nb_start(op, request);
}

/* The calls' arguments (each entry point's parameter names). */
#define GATHERV_CALL(nm)                                                                      \
    {                                                                                         \
        .name = nm, .kind = TC_VX_GATHERV, .sendbuf = sendbuf, .sendcount = sendcount,        \
        .sendtype = sendtype, .recvbuf = recvbuf, .recvtype = recvtype, .counts = recvcounts, \
        .displs = displs, .root = root, .comm = comm                                          \
    }
#define SCATTERV_CALL(nm)                                                                       \
    {                                                                                           \
        .name = nm, .kind = TC_VX_SCATTERV, .sendbuf = sendbuf, .sendtype = sendtype,           \
        .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype, .counts = sendcounts, \
        .displs = displs, .root = root, .comm = comm                                            \
    }
#define ALLGATHERV_CALL(nm)                                                                   \
    {                                                                                         \
        .name = nm, .kind = TC_VX_ALLGATHERV, .sendbuf = sendbuf, .sendcount = sendcount,     \
        .sendtype = sendtype, .recvbuf = recvbuf, .recvtype = recvtype, .counts = recvcounts, \
        .displs = displs, .comm = comm                                                        \
    }
#define ALLTOALLV_CALL(nm)                                                                 \
    {                                                                                      \
        .name = nm, .kind = TC_VX_ALLTOALLV, .sendbuf = sendbuf, .sendtype = sendtype,     \
        .recvbuf = recvbuf, .recvtype = recvtype, .counts = recvcounts, .displs = rdispls, \
        .comm = comm, .scounts = sendcounts, .sdispls = sdispls                            \
    }
#define ALLTOALLW_CALL(nm)                                                                    \
    {                                                                                         \
        .name = nm, .kind = TC_VX_ALLTOALLV, .sendbuf = sendbuf, .sendtype = MPI_BYTE,        \
        .recvbuf = recvbuf, .recvtype = MPI_BYTE, .counts = recvcounts, .displs = rdispls,    \
        .comm = comm, .scounts = sendcounts, .sdispls = sdispls, .w = 1, .stypes = sendtypes, \
        .rtypes = recvtypes                                                                   \
    }

int topocoll_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm)
{
    vx_call_t x = GATHERV_CALL("MPI_Gatherv");
    return run_blocking(&x);
}

int topocoll_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm)
{
    vx_call_t x = SCATTERV_CALL("MPI_Scatterv");
    return run_blocking(&x);
}

int topocoll_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm)
{
    vx_call_t x = ALLGATHERV_CALL("MPI_Allgatherv");
    return run_blocking(&x);
}

int topocoll_igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Request *request)
{
    vx_call_t x = GATHERV_CALL("MPI_Igatherv");
    return run_nonblocking(&x, request);
}

int topocoll_iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Request *request)
{
    vx_call_t x = SCATTERV_CALL("MPI_Iscatterv");
    return run_nonblocking(&x, request);
}

int topocoll_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *request)
{
    vx_call_t x = ALLGATHERV_CALL("MPI_Iallgatherv");
    return run_nonblocking(&x, request);
}

int topocoll_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    vx_call_t x = ALLTOALLV_CALL("MPI_Alltoallv");
    return run_blocking(&x);
}

int topocoll_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Request *request)
{
    vx_call_t x = ALLTOALLV_CALL("MPI_Ialltoallv");
    return run_nonblocking(&x, request);
}

int topocoll_alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    vx_call_t x = ALLTOALLW_CALL("MPI_Alltoallw");
    return run_blocking(&x);
}

int topocoll_ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Request *request)
{
    vx_call_t x = ALLTOALLW_CALL("MPI_Ialltoallw");
    return run_nonblocking(&x, request);
}
