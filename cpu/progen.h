/*
 * progen.h: a generator of random, valid tile programs for differential
 * testing (test/fuzz/fuzz_diff.c, test/check_progen.c). progen() writes one
 * kernel from a seed: the same seed and options give the same text. Every
 * program passes sema and is meaningful per docs/semantics.md: blocks own
 * disjoint output tiles (no race between blocks), iterations of a parallel
 * nest write distinct elements and read only what they write themselves (a
 * scratch tensor is written by one top-level statement and read back by later
 * ones inside the block's own tile, at elements other threads wrote), no
 * shared or local element is read before it is written, integer divisors are
 * never zero, math functions get arguments in their domain, and comparisons,
 * integer casts and conditions see only values that do not depend on an order
 * of evaluation or a math library. tilec's layout inference or emission may
 * still refuse a program (with a reason).
 *
 * The text starts with comment lines:
 *   // progen seed=S kind=K
 *   // sizes: M=37,N=61,alpha=0.5;M=1,N=1,alpha=-2.0
 * the second being a suggestion for tilec_run_options.sizes (ragged, prime
 * and tiny sizes that keep the run small and satisfy the program's assumes).
 */
#ifndef PROGEN_H
#define PROGEN_H

#include <stdint.h>

#include "tl.h"

/* feature groups a program may use (ProgenOptions.features) */
enum {
	PG_HALF = 1u << 0,    /* f16 and bf16 tensors and buffers (gemm operands are f16/bf16 anyway) */
	PG_FP8 = 1u << 1,     /* fp8_e4m3 and fp8_e5m2 */
	PG_INT = 1u << 2,     /* i32, i8, u8 tensors and buffers, integer arithmetic */
	PG_MATH = 1u << 3,    /* exp exp2 log log2 sqrt rsqrt tanh sin cos */
	PG_SHARED = 1u << 4,  /* shared buffers (gemm operands are shared anyway) */
	PG_GLOBAL = 1u << 5,  /* global element reads and writes inside loops, shifted indices */
	PG_SLICE = 1u << 6,   /* slices, column and row tiles, unit dims, sub-regions, partial fills */
	PG_LOOP = 1u << 7,    /* serial range loops, element loops outside parallel() */
	PG_IF = 1u << 8,      /* if on block-uniform and per-element conditions */
	PG_PIPE = 1u << 9,    /* pipeline(...) loops over a K dimension */
	PG_REDUCE = 1u << 10, /* reduce */
	PG_GEMM = 1u << 11,   /* gemm */
	PG_RANK3 = 1u << 12,  /* 3-D tensors, tiles, nests and grids */
	PG_ASSUME = 1u << 13, /* assume(size % tile == 0) */
	PG_SCALAR = 1u << 14, /* scalar parameters (f32 alpha, i32 n) */
	PG_LET = 1u << 15,    /* let statements (in and outside parallel) */
	PG_LAYOUT = 1u << 16, /* annotate_layout swizzle(32|64|128) / padded on shared buffers */
	PG_ALL = (1u << 17) - 1,
};

typedef struct ProgenOptions {
	unsigned features;  /* PG_* bits; 0: PG_ALL */
	int max_ops;        /* most random statements per block (top level: twice this); 0: 6 */
	int max_depth;      /* deepest expression tree; 0: 4 */
	Buf *sizes;         /* optional out: the sizes suggestion (as in the "// sizes:" line) */
} ProgenOptions;

void progen_options_init(ProgenOptions *o);

/* Write one program for seed into out (appended). 0, or -1 with e set (bad options). */
int progen(uint64_t seed, const ProgenOptions *o, Buf *out, Err *e);

/* the "// sizes: " suggestion of a generated program's text into out; 0, or -1 if none */
int progen_sizes(const char *src, Buf *out);

/* the name of one PG_* bit ("half", "fp8", ...), or NULL */
const char *progen_feature_name(unsigned bit);

/* parse "half,int,gemm" (or "all", or "all,-gemm") into PG_* bits; -1 on an unknown name */
int progen_parse_features(const char *s, unsigned *out);

#endif
