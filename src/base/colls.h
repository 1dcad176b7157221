/*
 * base/colls -- the registry's indexes (base/colls.def, base/algs.def) as
 * C enums, for every layer: TC_CI_<ID> a collective's index (the public
 * topocoll_coll_t order), TC_ALG_<ID> an algorithm, TC_AM(X) an
 * algorithm's bit in a collective's ALGS mask.
 *
 * Owns: the enums.  May call: nothing.
 */
#ifndef TC_BASE_COLLS_H
#define TC_BASE_COLLS_H

typedef enum {
#define TC_ALG(ID, word, text) TC_ALG_##ID,
#include "algs.def"
#undef TC_ALG
    TC_ALGS
} tc_alg_t;

#define TC_AM(X) (1u << TC_ALG_##X)

/* For the registry's 0/1 columns: TC_IF_##COL(text) keeps the text when
 * the column is 1; TC_SEL_##COL(a, b) is a when 1, b when 0. */
#define TC_IF_0(...)
#define TC_IF_1(...)   __VA_ARGS__
#define TC_SEL_0(a, b) b
#define TC_SEL_1(a, b) a

enum {
#define TC_COLL(ID, Name, lower, SHAPE, ...) TC_CI_##ID,
#include "colls.def"
#undef TC_COLL
    TC_NCOLLS
};

/** The word of algorithm @alg (tc_alg_t): "chain"; "?" out of range. */
const char *tc_alg_word(int alg);

/** What algorithm @alg runs, one phrase; "" out of range. */
const char *tc_alg_text(int alg);

/** The mask of algorithms TOPOCOLL_<COLL>_ALG accepts for collective
 *  @ci (TC_CI_*): auto, native and its ALGS column. */
unsigned tc_coll_algs(int ci);

/** "MPI_Bcast" for collective @ci (TC_CI_*); NULL out of range. */
const char *tc_coll_call(int ci);

#endif
