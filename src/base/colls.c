/* base/colls -- see colls.h. */
#include "colls.h"

#include <stddef.h>

static const char *const g_word[TC_ALGS] = {
#define TC_ALG(ID, word, text) #word,
#include "algs.def"
#undef TC_ALG
};

static const char *const g_text[TC_ALGS] = {
#define TC_ALG(ID, word, text) text,
#include "algs.def"
#undef TC_ALG
};

static const unsigned g_algs[TC_NCOLLS] = {
#define TC_COLL(ID, Name, lower, SHAPE, FLAT, FLAT_DFLT, XT, ALGS) \
    TC_AM(AUTO) | TC_AM(NATIVE) | (ALGS),
#include "colls.def"
#undef TC_COLL
};

static const char *const g_call[TC_NCOLLS] = {
#define TC_COLL(ID, Name, lower, SHAPE, ...) "MPI_" #Name,
#include "colls.def"
#undef TC_COLL
};

const char *tc_alg_word(int alg) { return alg >= 0 && alg < TC_ALGS ? g_word[alg] : "?"; }
const char *tc_alg_text(int alg) { return alg >= 0 && alg < TC_ALGS ? g_text[alg] : ""; }
unsigned tc_coll_algs(int ci) { return ci >= 0 && ci < TC_NCOLLS ? g_algs[ci] : 0; }
const char *tc_coll_call(int ci) { return ci >= 0 && ci < TC_NCOLLS ? g_call[ci] : NULL; }
