/*
 * check_sema.c: semantic checks. Tables of programs with the IR text they
 * must produce (folding, typing, regions, loops, helper inlining, layouts)
 * or the diagnostics they must give; a property test that folds random
 * constant expressions and compares with C; the CuTe structure checker;
 * -D overrides and the compile API's argument checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema.h"
#include "tests.h"
#include "tilec.h"

/* compile src; returns the IR dump or the diagnostics (file name "t") */
static char *
run(const char *src, const char *const *defs, int ndefs, tilec_status *st, int *nerr)
{
	tilec_options o;
	tilec_result r;
	char *s;

	tilec_options_init(&o);
	o.filename = "t";
	o.dump = TILEC_DUMP_IR;
	o.defines = defs;
	o.ndefines = ndefs;
	tilec_compile(src, strlen(src), &o, &r);
	*st = r.status;
	if (nerr)
		*nerr = r.nerrors;
	if (r.status == TILEC_OK) {
		s = r.output;
		r.output = NULL;
	} else {
		s = r.diagnostics;
		r.diagnostics = NULL;
	}
	tilec_result_free(&r);
	return s;
}

#define KH "kernel k(A: f16[M, K], B: f16[K, N], C: f32[M, N], s: f32) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {\n"
#define KB "shared As: f16[64, 32]; shared Bs: f16[32, 64]; local acc: f32[64, 64]; local r: f32[64];\n"

static const struct {
	const char *src;
	const char *want; /* a line (or part) of the IR dump */
} ok_cases[] = {
	/* strides(...): stride symbols join the sizes in first-appearance order (dims, then
	 * strides, tensor by tensor); provably dense strides are dropped */
	{"kernel k(A: f16[M, K] strides(lda, 1), B: f16[K, N] strides(1, K), C: f32[M, N] strides(lda, 1)) "
	 "grid(1) threads(32) {}",
	 "  param A: f16[M, K] strides(lda, 1)\n  param B: f16[K, N] strides(1, K)\n"
	 "  param C: f32[M, N] strides(lda, 1)\n  sizes M, K, lda, N\n"},
	{"const LD = 72; kernel k(A: f16[M, 64] strides(LD, 1), B: f16[M, 64] strides(LD - 8, 1), "
	 "C: f16[M, K] strides(K, 1), D: f16[2, 3, 4] strides(12, 4, 1), E: f16[S, HD] strides(sq, 2)) "
	 "grid(1) threads(32) {}",
	 "  param A: f16[M, 64] strides(72, 1)\n  param B: f16[M, 64]\n  param C: f16[M, K]\n"
	 "  param D: f16[2, 3, 4]\n  param E: f16[S, HD] strides(sq, 2)\n  sizes M, K, S, HD, sq\n"},
	/* a stride symbol is a size: usable in expressions */
	{"kernel k(A: f16[M, K] strides(lda, 1)) grid(cdiv(lda, 64)) threads(32) {}", "grid cdiv(lda, 64)"},
	/* constant folding */
	{"const X = 2 + 3 * 4;" KH "assume(M == X); }", "assume M == 14"},
	{"const X = -7 / 2, Y = -7 % 2;" KH "assume(M == X + Y * 100); }", "assume M == 96"},
	{"const X = cdiv(1000, 128);" KH "assume(M == X); }", "assume M == 8"},
	{"const X = 1 << 40 >> 38;" KH "assume(M == X); }", "assume M == 4"},
	{"const X = max(3, 9) - min(3, 9) + abs(-2);" KH "assume(M == X); }", "assume M == 8"},
	{"const X = 0x10 | 3 & 1 ^ 8;" KH "assume(M == X); }", "assume M == 25"},
	{"const X = 2 < 3 && !(1 == 2) ? 11 : 12;" KH "assume(M == X); }", "assume M == 11"},
	{"const H = 0.5 * 3.0;" KH "for i in range(2) { let t = s * H; } }", "let t: f32 = s * 1.5"},
	{"const BB = D * 2, D = 16;" KH "assume(M == BB); }", "assume M == 32"},
	{KH "assume(M % 64 == 0 && K >= 32); }", "assume M % 64 == 0 && K >= 32"},
	/* sizes, params, grid */
	{KH "}", "  sizes M, K, N"},
	{KH "}", "  grid cdiv(N, 64), cdiv(M, 64)"},
	{KH "}", "  param s: f32"},
	{"kernel k(A: f32[4, 8]) grid(1) threads(32) { local x: f32[4, 8]; copy(A, x); }",
	 "copy A[0 +: 4, 0 +: 8] -> x[0 +: 4, 0 +: 8]"},
	/* regions: tile at an offset takes the other side's shape; slices; unit dims */
	{KH KB "copy(A[by * 64, 0], As); }", "copy A[by * 64 +: 64, 0 +: 32] -> As[0 +: 64, 0 +: 32]"},
	{KH KB "copy(A[by * 64 : by * 64 + 64, 0:32], As); }",
	 "copy A[by * 64 +: 64, 0 +: 32] -> As[0 +: 64, 0 +: 32]"},
	{KH KB "copy(acc[0:64, 3], C[0:64, bx]); }", "copy acc[0 +: 64, 3 +: 1] -> C[0 +: 64, bx +: 1]"},
	{KH KB "copy(r, C[by * 64, bx]); }", "copy r[0 +: 64] -> C[by * 64 +: 1, bx +: 64]"},
	{KH KB "copy(acc[0:32, 0:64], C[by * 64, 0]); }", "copy acc[0 +: 32, 0 +: 64] -> C[by * 64 +: 32, 0 +: 64]"},
	/* gemm with transposes */
	{KH "shared At: f16[32, 64]; shared Bt: f16[64, 32]; local c: f32[64, 64];"
	    "gemm(At, Bt, c, trans_a = true, trans_b = true, clear = true); }",
	 "trans_a=1 trans_b=1 clear=1"},
	/* the warp policy: shown when not square */
	{KH KB "gemm(As, Bs, acc, policy = full_row); }", "trans_a=0 trans_b=0 clear=0 policy=full_row\n"},
	{KH KB "gemm(As, Bs, acc, policy = full_col); }", "trans_a=0 trans_b=0 clear=0 policy=full_col\n"},
	{KH KB "gemm(As, Bs, acc, policy = square); }", "trans_a=0 trans_b=0 clear=0\n"},
	/* fill, clear, reduce */
	{KH KB "fill(acc, 1); clear(r); }", "fill acc[0 +: 64, 0 +: 64], 1.0"},
	{KH KB "fill(acc, 1); clear(r); }", "fill r[0 +: 64], 0.0"},
	{KH KB "fill(acc[0:16, 0:64], s); }", "fill acc[0 +: 16, 0 +: 64], s"},
	{KH KB "reduce(acc, r, op = absmax, dim = -1, clear = false); }", "reduce absmax acc -> r dim=1 clear=0"},
	{KH KB "reduce(acc, r, dim = 0); }", "reduce sum acc -> r dim=0 clear=1"},
	/* loops and element statements */
	{KH KB "for i, j in parallel(64, 64) { acc[i, j] *= s; } }", "acc[i, j] = acc[i, j] * s"},
	{KH KB "for i in range(4, 20) { r[i] = 0; } }", "for i from 4 extent 16 {"},
	{KH KB "for i in range(K) { r[0] = 0; } }", "for i from 0 extent K {"},
	{KH KB "for ko in pipeline(cdiv(K, 32)) { copy(A[by * 64, ko * 32], As); } }",
	 "pipeline ko < cdiv(K, 32) stages=2 {"},
	{KH KB "for i in range(4) { let t = i * 2; t += 1; r[t] = f32(t); } }", "t = t + 1"},
	{KH KB "for i in range(4) { let t = i * 2; r[t] = f32(t); } }", "r[t] = f32(t)"},
	{KH KB "for i in parallel(64) { r[i] = select(r[i] > 0.0, r[i], 0.0); } }",
	 "r[i] = r[i] > 0.0 ? r[i] : 0.0"},
	{KH KB "for i in parallel(64) { r[i] = exp(r[i]) + sqrt(2.0); } }",
	 "r[i] = exp(r[i]) + 1.4142135623730951"},
	{KH KB "for i in parallel(64) { As[i, 0] = f16(r[i]) + 1.5; } }", "As[i, 0] = f16(r[i]) + 1.5:f16"},
	{KH KB "for i in range(2) { if (i == 0) { r[0] = 1; } else if (i == 1) { r[1] = 2; } else { r[2] = 3; } } }",
	 "} else {"},
	{KH KB "if (true) { clear(r); } else { clear(acc); } }", "    fill r[0 +: 64], 0.0\n"},
	{KH KB "for i in range(2) { for j in range(2) { let i = 5; r[i] = 0; } } }", "let i_1: int = 5"},
	/* helpers: inlined with params bound, names unique */
	{"func z(x: local f32[R]) { for i in parallel(R) { x[i] = 0; } }" KH KB "z(r); z(r); }",
	 "parallel i_1 < 64 {"},
	{"func h(x: local f32[64, 64], y: local f32[64], v: f32) { fill(x, v); reduce(x, y); }" KH KB
	 "h(acc, r, 2); }", "fill acc[0 +: 64, 0 +: 64], 2.0"},
	{"func h(x: local f32[64], n: int) { for i in range(n) { x[i] = 1; } }" KH KB "h(r, 8); }",
	 "for i from 0 extent 8 {"},
	{"func h(x: local f32[64]) { g(x); } func g(y: local f32[64]) { clear(y); }" KH KB "h(r); }",
	 "fill r[0 +: 64], 0.0"},
	/* layout statements */
	{KH KB "annotate_layout(As, swizzle(64)); }", "annotate_layout As, swizzle(64)"},
	{KH KB "annotate_layout(As, padded); annotate_layout(Bs, linear); }", "annotate_layout Bs, linear"},
	{KH KB "local b: f16[16, 24]; require_layout(b, mma_b(m16n8k16)); }", "require_layout b, mma_b(m16n8k16)"},
	{KH KB "require_layout(acc, mma_c(m16n8k16, warps = 4), late_address_compute = true); }",
	 "require_layout acc, mma_c(m16n8k16, warps = 4) pin=1 late_address_compute=1"},
	{KH KB "annotate_layout(As, cute(\"Sw<3,4,3> o _0 o (_64,_32):(_32,_1)\")); }",
	 "annotate_layout As, cute(\"Sw<3,4,3> o _0 o (_64,_32):(_32,_1)\")"},
	{KH KB "release_layout(acc); dump_layout(As); assert_same_layout(acc, acc); }",
	 "assert_same_layout acc, acc"},
	{KH KB "require_amd_wmma_layout(acc, warp_bases = [[0, 2]], reg_bases = [[0, 1], [1, 0]]); }",
	 "require_amd_wmma_layout acc version=3 transposed=0 warp_bases=[[0, 2]] reg_bases=[[0, 1], [1, 0]] instr_shape=[16, 16, 16]"},
	/* two kernels, in order */
	{"kernel a(X: f32[N]) grid(1) threads(32) {} kernel b(X: f32[N]) grid(1) threads(64) {}",
	 "kernel a\n  param X: f32[N]\n  sizes N\n  grid 1\n  threads 32\n  body\n\nkernel b"},
};

START_TEST(sema_ok)
{
	tilec_status st;
	char *s = run(ok_cases[_i].src, NULL, 0, &st, NULL);

	ck_assert_msg(st == TILEC_OK, "row %d: %s", _i, s);
	ck_assert_msg(strstr(s, ok_cases[_i].want) != NULL, "row %d: '%s' not in\n%s", _i,
		      ok_cases[_i].want, s);
	free(s);
}
END_TEST

static const struct {
	const char *src;
	const char *want; /* the whole diagnostics text */
} err_cases[] = {
	{"kernel k(A: f32[1,1,1,1,1,1,1,1,1]) grid(1) threads(32) { local x: f32[1,1,1,1,1,1,1,1,2]; "
	 "local y: f32[2]; reduce(x, y); }",
	 "t:1:10: error: tensor 'A' has 9 dimensions; 1 to 8 are supported\n"
	 "t:1:65: error: buffer 'x' has 9 dimensions; at most 8 are supported\n"},
	{"func h(x: local f32[4]) { } kernel k(A: f32[M]) grid(1) threads(32) { shared t: f32[4]; h(t); h(t); }",
	 "t:1:91: error: h: argument 1 't' is shared f32[4], parameter 'x' expects local f32[4]\n"
	 "t:1:97: error: h: argument 1 't' is shared f32[4], parameter 'x' expects local f32[4]\n"},
	{KH KB "annotate_layout(As, cute(\"(_8,_4):(_4,_1)\")); }",
	 "t:3:21: error: cute layout maps 32 elements but 'As' has 2048\n"},
	{KH KB "assert_same_layout(acc, cute(\"((_32,_2,_2),_1):((_1,_32,_0),_0)\")); }",
	 "t:3:25: error: cute layout maps 64 elements but 'acc' has 4096\n"},
	{KH KB "local a: f16[48, 24]; require_layout(a, mma_a(m16n8k16)); }",
	 "t:3:41: error: mma_a(m16n8k16) needs a 2-D buffer whose shape is a multiple of [16, 16]; 'a' is local f16[48, 24]\n"},
	{KH KB "local q: f32[64]; require_layout(q, mma_c(mfma16x16x16)); }",
	 "t:3:37: error: mma_c(mfma16x16x16) needs a 2-D buffer whose shape is a multiple of [16, 16]; 'q' is local f32[64]\n"},
	{KH KB "local b: f16[16, 24]; require_layout(b, mma_b(m16n8k32, warps = 2)); }",
	 "t:3:41: error: mma_b(m16n8k32) needs a 2-D buffer whose shape is a multiple of [32, 8]; 'b' is local f16[16, 24]\n"},
	/* suggestions for misspelt names */
	{"const alpha = 2;" KH KB "for i in range(2) { r[i] = alpah; } }",
	 "t:3:28: error: unknown name 'alpah' (did you mean 'alpha'?)\n"},
	{KH KB "copy(A[0, 0], Ass); }",
	 "t:3:15: error: copy: unknown buffer 'Ass' (did you mean 'As'?)\n"},
	{KH KB "gem(As, Bs, acc); }",
	 "t:3:1: error: unknown operation or helper 'gem' (did you mean 'gemm'?)\n"},
	{KH KB "for i in range(2) { r[i] = exq(r[i]); } }",
	 "t:3:28: error: unknown function 'exq' (did you mean 'exp'?)\n"},
	{"func scale_tile(x: local f32[64]) { clear(x); }" KH KB "scale_tiles(r); }",
	 "t:3:1: error: unknown operation or helper 'scale_tiles' (did you mean 'scale_tile'?)\n"},
	{KH KB "for i in range(2) { r[i] = f32(byy); } }",
	 "t:3:32: error: unknown name 'byy' (did you mean 'by'?)\n"},
	{KH KB "for i in range(2) { r[i] = f32(bz); } }",
	 "t:3:32: error: 'bz' needs a grid of at least 3 dimensions; the grid of 'k' has 2\n"},
	{"kernel k(A: f32[M]) grid(1) threads(32) { local x: f32[4]; copy(A[0], x[0]); }",
	 "t:1:60: error: copy: cannot tell the tile shape; make 'A' or 'x' a whole buffer or use slices\n"},
	{KH KB "copy(A[0:64, 0:16], As); }",
	 "t:3:1: error: copy: source shape [64, 16] does not match destination shape [64, 32]\n"},
	{KH KB "copy(A[0:by, 0:32], As); }",
	 "t:3:8: error: copy: slice '0 : by' of 'A' must have a constant length\n"},
	{KH KB "gemm(As, Bs, r); }",
	 "t:3:14: error: gemm: operand C 'r' must be 2-dimensional, its shape is [64]\n"},
	{KH KB "gemm(As, Bs, acc, trans_a = 1); }",
	 "t:3:29: error: gemm: trans_a must be true or false, got '1'\n"},
	{KH KB "gemm(As, Bs, acc, policy = rows); }",
	 "t:3:28: error: gemm: policy must be square, full_row or full_col\n"},
	{KH KB "gemm(As, Bs, acc, policy = 1); }",
	 "t:3:28: error: gemm: policy must be square, full_row or full_col\n"},
	{KH KB "gemm(As, Bs, acc, transpose = true); }",
	 "t:3:19: error: gemm: unknown argument 'transpose'\n"},
	{KH KB "gemm(As, Bs); }",
	 "t:3:1: error: gemm: missing argument 'C'\n"},
	{KH KB "copy(As, Bs, acc); }",
	 "t:3:14: error: copy takes at most 2 arguments\n"},
	/* atomics (docs/language.md 3.5, docs/semantics.md "Atomics") */
	{KH KB "for i in parallel(64) { atomic_add(r[i], 1.0); } }",
	 "t:3:36: error: atomic_add on local 'r': a local (register) tile is private to each thread, so an atomic on it means nothing; update it with r[...] += v or use a shared buffer\n"},
	{KH KB "copy(acc, C[0, 0], op = sum); }",
	 "t:3:25: error: copy: op must be add, max or min (an atomic store of the tile), got 'sum'\n"},
	{KH KB "copy(acc, acc, op = add); }",
	 "t:3:11: error: copy(..., op = add): 'acc' is a local (register) tile, private to each thread; an atomic store goes to a global tensor or a shared buffer\n"},
	{KH KB "copy(As, C[0, 0], op = add); }",
	 "t:3:6: error: copy(..., op = add): the source 'As' is shared; an atomic tile store copies a local (register) tile (copy it into a local tile first)\n"},
	{"kernel k(A: u8[64]) grid(1) threads(32) { for i in parallel(64) { atomic_max(A[i], 1); } }",
	 "t:1:78: error: atomic_max: 'A' is u8; atomics update f32, f16, bf16 or i32 elements\n"},
	{KH KB "atomic_add(acc, 1.0); }",
	 "t:3:12: error: atomic_add: the first argument must be an element NAME[index, ...] of a global tensor or a shared buffer\n"},
	{KH KB "atomic_min(C[0, 0]); }",
	 "t:3:1: error: atomic_min: missing argument 'value'\n"},
	{KH KB "atomic_add(C[0, 0], true); }",
	 "t:3:21: error: atomic_add: cannot convert bool to f32\n"},
	{KH KB "fill(C, 0); }",
	 "t:3:6: error: fill: destination 'C' has the symbolic shape global f32[M, N]; give an offset C[...] or slices\n"},
	{KH KB "fill(acc, true); }",
	 "t:3:11: error: fill value: cannot convert bool to f32\n"},
	{KH KB "for i in parallel(64) { for j in parallel(64) { acc[i, j] = 0; } } }",
	 "t:3:34: error: parallel loop nested inside a parallel loop; list all extents in one parallel(...)\n"},
	{KH KB "for i in parallel(64) { local q: f32[4]; } }",
	 "t:3:31: error: buffer 'q' declared inside a parallel loop\n"},
	{KH KB "for i in pipeline(4, stages = 0) { } }",
	 "t:3:31: error: pipeline: stages must be from 1 to 16, got 0\n"},
	{KH KB "for i in range(1, 2, 3) { } }",
	 "t:3:10: error: range takes 1 or 2 arguments, got 3\n"},
	{KH KB "for i in range(2) { let t = r; } }",
	 "t:3:29: error: buffer 'r' used as a value; index it, e.g. r[i, ...]\n"},
	{KH KB "for i in range(2) { r[i] = f16; } }",
	 "t:3:28: error: 'f16' is an element type, not a value\n"},
	{KH KB "for i in range(2) { r[i] = copy(1); } }",
	 "t:3:28: error: 'copy' is a statement and has no value\n"},
	{KH KB "for i in range(2) { r[i] = exp(1, 2); } }",
	 "t:3:28: error: exp takes 1 argument, got 2\n"},
	{KH KB "for i in range(2) { r[i] = r[i:2]; } }",
	 "t:3:30: error: slice in an element access of 'r'; slices are for copy, gemm and fill regions\n"},
	{KH KB "for i in range(2) { r[i] = swizzle(32); } }",
	 "t:3:28: error: layout literal 'swizzle(...)' is only allowed in a layout statement\n"},
	{KH KB "for i in range(2) { r[i] = 1 / 0; } }",
	 "t:3:30: error: division by zero in constant expression: 1 / 0\n"},
	{KH KB "for i in range(2) { r[i] = f32(i / 0); } }",
	 "t:3:34: error: division by zero: 'i / 0'\n"},
	{KH KB "for i in range(2) { r[i] = r[i] && true; } }",
	 "t:3:33: error: operator '&&' needs bool operands, got f32 and bool\n"},
	{KH KB "for i in range(2) { As[i, 0] = i8(300); } }",
	 "t:3:32: error: cast: constant 300 does not fit in i8\n"},
	{KH KB "for i in range(2) { As[i, 0] = i8(inf); } }",
	 "t:3:32: error: constant inf does not fit in i8\n"},
	{KH KB "for i in range(2) { As[i, 0] = i32(-nan); } }",
	 "t:3:32: error: constant -nan does not fit in i32\n"},
	{KH KB "for i in range(2) { r[i] = inff; } }",
	 "t:3:28: error: unknown name 'inff'\n"},
	{KH KB "for i in range(2) { r[i] = 1.0 << 2; } }",
	 "t:3:32: error: operator '<<' needs integer operands, got f32 and int\n"},
	{KH KB "assume(1 > 2); }",
	 "t:3:10: error: assume: the condition is always false\n"},
	{KH KB "assume(M); }",
	 "t:3:8: error: assume must be a bool, got int 'M'\n"},
	{"kernel k(A: f32[M]) grid(bx) threads(32) {}",
	 "t:1:26: error: block index 'bx' cannot be used in grid(...)\n"},
	{"kernel k(A: f32[M]) grid(0) threads(32) {}",
	 "t:1:26: error: grid dimension 0 must be positive, got 0\n"},
	{"kernel k(A: f32[M], M: i32) grid(1) threads(32) {}",
	 "t:1:21: error: redefinition of 'M'\n"
	 "t:1:17: note: previous definition of variable 'M' is here\n"},
	{"kernel k(A: f32[0]) grid(1) threads(32) {}",
	 "t:1:17: error: dimension 0 of 'A' must be positive, got 0\n"},
	{"kernel k(A: shared f32[4]) grid(1) threads(32) {}",
	 "t:1:10: error: kernel parameter 'A' cannot have a scope; kernel tensors are global\n"},
	{"const X = M;",
	 "t:1:11: error: unknown name 'M'\n"
	 "t: error: no kernel in input\n"},
	{"const X = bx;",
	 "t:1:11: error: 'bx' is only defined inside a kernel\n"
	 "t: error: no kernel in input\n"},
	{"const X = 1.5 % 2;",
	 "t:1:15: error: operator '%' needs integer operands, got f32 and int\n"
	 "t: error: no kernel in input\n"},
	{"func h(x: local f32[4], x: f32) { } kernel k(A: f32[M]) grid(1) threads(32) {}",
	 "t:1:25: error: redefinition of parameter 'x' of helper 'h'\n"},
	{"func h(x: local f32[4]) { clear(q); } kernel k(A: f32[M]) grid(1) threads(32) { local t: f32[4]; h(t); h(t); }",
	 "t:1:33: error: clear: unknown buffer 'q'\n"
	 "t:1:98: note: in helper 'h' inlined here\n"},
	{"func h(x: local f32[4]) { clear(acc); } kernel k(A: f32[M]) grid(1) threads(32) { local acc: f32[4]; h(acc); }",
	 "t:1:33: error: clear: unknown buffer 'acc'\n"
	 "t:1:102: note: in helper 'h' inlined here\n"},
	{"func h(x: local f32[8]) { } kernel k(A: f32[M]) grid(1) threads(32) { local t: f32[4]; h(t); }",
	 "t:1:90: error: h: argument 1 't' is local f32[4], which does not match the shape of parameter 'x'\n"},
	{"kernel k(A: f32[M]) grid(1) threads(32) { k(A); }",
	 "t:1:43: error: unknown operation or helper 'k'\n"},
	/* strides(...) */
	{"kernel k(A: f32[M, K] strides(lda)) grid(1) threads(32) {}",
	 "t:1:23: error: tensor 'A' has 2 dimensions but strides(...) gives 1 stride; one per "
	 "dimension, in elements\n"},
	{"kernel k(A: f32[M, K] strides(0, 1), B: f32[4] strides(-2)) grid(1) threads(32) {}",
	 "t:1:31: error: stride 0 of 'A' must be positive, got 0\n"
	 "t:1:56: error: stride 0 of 'B' must be positive, got -2\n"},
	{"kernel k(n: i32, X: f32[4], A: f32[M, K] strides(n, 1), B: f32[M] strides(X)) grid(1) threads(32) {}",
	 "t:1:50: error: stride 0 of 'A' must be a size name or a constant; 'n' is a scalar parameter "
	 "of kernel 'k'\n"
	 "t:1:75: error: stride 0 of 'B' must be a size name or a constant; 'X' is a tensor parameter "
	 "of kernel 'k'\n"},
	{"kernel k(x: foo, A: f32[M, K] strides(x, 1)) grid(1) threads(32) {}",
	 "t:1:13: error: unknown element type 'foo'\n"},
	{"kernel k(A: f32[M, K] strides(A, 1)) grid(1) threads(32) {}",
	 "t:1:31: error: stride 0 of 'A' names the tensor itself; a stride is a size name or a constant\n"},
	{"kernel k(A: f32[M, K] strides(ld, 1), ld: i32) grid(1) threads(32) {}",
	 "t:1:39: error: redefinition of 'ld'\nt:1:31: note: previous definition of variable 'ld' is here\n"},
	{"kernel k(n: i32 strides(1)) grid(1) threads(32) {}",
	 "t:1:17: error: strides(...) on scalar parameter 'n'; only a tensor parameter NAME: "
	 "dtype[dims] strides(...) has strides\n"},
	{"kernel k(A: f32[M, K] strides(2 * K, 1)) grid(1) threads(32) {}",
	 "t:1:33: error: a tensor stride must be a constant, got '2 * K'\n"},
	{"kernel k(A: f32[M, K] strides(exp, 1)) grid(1) threads(32) {}",
	 "t:1:31: error: 'exp' is a builtin name and cannot be redefined\n"},
	{"func f(x: f32[4] strides(1)) {} kernel k(A: f32[M]) grid(1) threads(32) {}",
	 "t:1:18: error: strides(...) on parameter 'x' of helper 'f'; only kernel tensor parameters "
	 "have strides (a helper works on the buffer it is given)\n"},
	{"kernel k(A: f32[4, 4000000000] strides(4000000000000000000, 1)) grid(1) threads(32) {}",
	 "t:1:40: error: the constant strides and dimensions of 'A' reach past 2^62 elements\n"},
	{KH KB "annotate_layout(acc, cute(\"(_4,_0):(_1,_4)\")); }",
	 "t:3:27: error: bad cute layout \"(_4,_0):(_1,_4)\": shape extent 0 is not positive\n"},
	{KH KB "require_layout(As, mma_a(m16n8k16)); }",
	 "t:3:20: error: an mma_a layout needs a local buffer; 'As' is shared\n"},
	{KH KB "annotate_layout(As, diagonal); }",
	 "t:3:21: error: expected a layout: cute(\"...\"), swizzle(32|64|128), padded, linear, or mma_a/mma_b/mma_c(...)\n"},
	{KH KB "require_layout(acc, mma_c(m16n8k16, warpz = 4)); }",
	 "t:3:37: error: mma_c: unexpected argument; the only option is warps = N\n"},
};

START_TEST(sema_err)
{
	tilec_status st;
	char *s = run(err_cases[_i].src, NULL, 0, &st, NULL);

	ck_assert_msg(st == TILEC_ERROR, "row %d: status %d:\n%s", _i, st, s);
	ck_assert_msg(!strcmp(s, err_cases[_i].want), "row %d:\ngot:  %swant: %s", _i, s,
		      err_cases[_i].want);
	free(s);
}
END_TEST

/* every error of the pass is reported, across kernels and helpers */
START_TEST(all_errors)
{
	tilec_status st;
	int nerr;
	char *s = run("const A1 = 1 / 0, A2 = 1 << 64;\n"
		      "kernel a(X: f32[N]) grid(1) threads(0) { local t: f32[N]; copy(X, Y); }\n"
		      "kernel b(X: q16[N]) grid(bz) threads(32) { for i in parallel(N) { t[i] = 1; } }\n",
		      NULL, 0, &st, &nerr);

	ck_assert_int_eq(st, TILEC_ERROR);
	ck_assert_msg(nerr == 10, "%d errors:\n%s", nerr, s);
	free(s);
}
END_TEST

/* nesting through inlined helpers is bounded: an error, not a stack overflow */
START_TEST(deep_inline)
{
	Buf b;
	tilec_status st;
	char *s;
	int h, d;

	buf_init(&b);
	for (h = 0; h < 4; h++) {
		buf_printf(&b, "func h%d(x: local f32[4]) {\n", h);
		for (d = 0; d < 200; d++)
			buf_printf(&b, "for v%d in range(2) {\n", d);
		if (h < 3)
			buf_printf(&b, "h%d(x);\n", h + 1);
		for (d = 0; d < 200; d++)
			buf_puts(&b, "}\n");
		buf_puts(&b, "}\n");
	}
	buf_puts(&b, "kernel k(A: f32[M]) grid(1) threads(32) { local t: f32[4]; h0(t); }\n");
	s = run(buf_str(&b), NULL, 0, &st, NULL);
	ck_assert_int_eq(st, TILEC_ERROR);
	ck_assert_str_eq(s, "t:921:1: error: statements nested too deeply (more than 512 levels, "
			    "counting inlined helpers)\n"
			    "t:605:1: note: in helper 'h2' inlined here\n"
			    "t:202:1: note: in helper 'h1' inlined here\n"
			    "t:1612:60: note: in helper 'h0' inlined here\n");
	free(s);
	buf_free(&b);
}
END_TEST

/* ---- -D overrides ------------------------------------------------------------- */

START_TEST(defines)
{
	const char *src = "const BM = 64;\nkernel k(A: f32[M]) grid(1) threads(32) { assume(M % BM == 0); }";
	const char *d1[] = {"BM=128"}, *d2[] = {"BM=0x20", "EXTRA=3"}, *d3[] = {"BM=1.5"};
	const char *d4[] = {"BM"}, *d5[] = {"9X=1"}, *d6[] = {"k=1"};
	tilec_status st;
	char *s;

	s = run(src, d1, 1, &st, NULL);
	ck_assert_msg(st == TILEC_OK && strstr(s, "assume M % 128 == 0"), "%s", s);
	free(s);
	s = run(src, d2, 2, &st, NULL);
	ck_assert_msg(st == TILEC_OK && strstr(s, "assume M % 32 == 0"), "%s", s);
	free(s);
	s = run(src, d3, 1, &st, NULL); /* a float where an integer is needed */
	ck_assert_msg(st == TILEC_ERROR && strstr(s, "operator '%' needs integer operands"), "%s", s);
	free(s);
	s = run(src, d4, 1, &st, NULL);
	ck_assert_str_eq(s, "tilec: error: -D BM: expected NAME=VALUE\n");
	free(s);
	s = run(src, d5, 1, &st, NULL);
	ck_assert_str_eq(s, "tilec: error: -D 9X=1: '9X' is not a name\n");
	free(s);
	s = run("const Q = 1;\nkernel k(A: f32[M]) grid(1) threads(32) { assume(M > EXTRA); }", d2, 2,
		&st, NULL);
	ck_assert_msg(st == TILEC_OK && strstr(s, "assume M > 3"), "%s", s);
	free(s);
	s = run("func k(x: f32) {}\nkernel q(A: f32[M]) grid(1) threads(32) {}", d6, 1, &st, NULL);
	ck_assert_str_eq(s, "t: error: -D k: 'k' is not a const of the program\n");
	free(s);
}
END_TEST

static const struct {
	const char *def;
	int ok;
} define_forms[] = {
	{"A=1", 1}, {"_x9=-5", 1}, {"A=0x1f", 1}, {"A=2.5", 1}, {"A=1e-3", 1}, {"A=-0.5", 1},
	{"A", 0}, {"=1", 0}, {"A=", 0}, {"A= 1", 0}, {"1A=1", 0}, {"A-B=1", 0}, {"A=1x", 0},
	{"A=012", 0}, {"A=nan", 0}, {"A=inf", 0}, {"A=99999999999999999999", 0}, {"A=1e999", 0},
	{"A=0x", 0}, {"A=1.5.2", 0},
};

START_TEST(define_check)
{
	char msg[128];
	int r = tilec_define_check(define_forms[_i].def, msg, sizeof msg);

	ck_assert_msg((r == 0) == define_forms[_i].ok, "'%s': %d %s", define_forms[_i].def, r, msg);
}
END_TEST

/* ---- the API's own argument checks ----------------------------------------------- */

START_TEST(api_args)
{
	tilec_options o;
	tilec_result r;
	const char *src = "kernel k(A: f32[M]) grid(1) threads(32) {}";

	ck_assert_int_eq(tilec_compile(src, strlen(src), NULL, NULL), TILEC_USAGE);
	ck_assert_int_eq(tilec_compile(src, strlen(src), NULL, &r), TILEC_OK);
	ck_assert_str_eq(r.diagnostics, "");
	/* no dump asked: the IR until code emission exists */
	ck_assert_msg(!strncmp(r.output, "kernel k\n", 9), "%s", r.output);
	tilec_result_free(&r);
	tilec_result_free(NULL);
	ck_assert_int_eq(tilec_compile(NULL, 5, NULL, &r), TILEC_USAGE);
	tilec_result_free(&r);
	ck_assert_int_eq(tilec_compile(NULL, 0, NULL, &r), TILEC_ERROR);
	ck_assert_str_eq(r.diagnostics, "<input>: error: no kernel in input\n");
	tilec_result_free(&r);
	tilec_options_init(&o);
	o.arch = "sm_75";
	ck_assert_int_eq(tilec_compile(src, strlen(src), &o, &r), TILEC_USAGE);
	ck_assert_str_eq(r.diagnostics, "tilec: error: unknown cuda arch 'sm_75'\n");
	tilec_result_free(&r);
	o.target = TILEC_TARGET_HIP;
	o.arch = "gfx942";
	ck_assert_int_eq(tilec_compile(src, strlen(src), &o, &r), TILEC_OK);
	tilec_result_free(&r);
	o.target = (tilec_target)7;
	ck_assert_int_eq(tilec_compile(src, strlen(src), &o, &r), TILEC_USAGE);
	tilec_result_free(&r);
	tilec_options_init(&o);
	o.ndefines = 2;
	ck_assert_int_eq(tilec_compile(src, strlen(src), &o, &r), TILEC_USAGE);
	tilec_result_free(&r);
	o.ndefines = 1;
	o.defines = (const char *const[]){NULL};
	ck_assert_int_eq(tilec_compile(src, strlen(src), &o, &r), TILEC_ERROR);
	tilec_result_free(&r);
	tilec_options_init(&o);
	o.dump = TILEC_DUMP_AST;
	ck_assert_int_eq(tilec_compile(src, strlen(src), &o, &r), TILEC_OK);
	ck_assert_msg(strstr(r.output, "kernel") != NULL, "%s", r.output);
	tilec_result_free(&r);
	ck_assert(tilec_arch_valid(TILEC_TARGET_CUDA, "sm_90a"));
	ck_assert(!tilec_arch_valid(TILEC_TARGET_CUDA, "gfx942"));
	ck_assert(!tilec_arch_valid(TILEC_TARGET_HIP, NULL));
	ck_assert_str_eq(tilec_status_str(TILEC_ERR_COMPILE), "TILEC_ERR_COMPILE");
	ck_assert_str_eq(tilec_version(), TL_VERSION);
}
END_TEST

/* caret diagnostics show the line and a caret under the column */
START_TEST(caret)
{
	tilec_options o;
	tilec_result r;
	const char *src = "kernel k(A: f32[M]) grid(1) threads(32) {\n\tlet x = y;\n}\n";

	tilec_options_init(&o);
	o.filename = "c.tile";
	o.caret = 1;
	tilec_compile(src, strlen(src), &o, &r);
	ck_assert_str_eq(r.diagnostics, "c.tile:2:10: error: unknown name 'y'\n \tlet x = y;\n \t        ^\n");
	tilec_result_free(&r);
}
END_TEST

/* ---- property: folding agrees with C on random constant expressions ------------ */

static uint64_t rng;

static uint32_t
rnd(void)
{
	rng = rng * 6364136223846793005u + 1442695040888963407u;
	return (uint32_t)(rng >> 33);
}

/* a random expression into b; its value in *v; 0 if it divides by zero or overflows */
static int
gen(Buf *b, int depth, int64_t *v)
{
	static const char *const ops[] = {"+", "-", "*", "/", "%", "&", "|", "^"};
	int64_t x, y;
	int op, okx, oky;

	if (depth == 0 || rnd() % 4 == 0) {
		*v = (int64_t)(rnd() % 2000) - 1000;
		if (*v < 0)
			buf_printf(b, "(%lld)", (long long)*v);
		else
			buf_printf(b, "%lld", (long long)*v);
		return 1;
	}
	op = (int)(rnd() % countof(ops));
	buf_putc(b, '(');
	okx = gen(b, depth - 1, &x);
	buf_printf(b, " %s ", ops[op]);
	oky = gen(b, depth - 1, &y);
	buf_putc(b, ')');
	if (!okx || !oky)
		return 0;
	switch (op) {
	case 0: return !__builtin_add_overflow(x, y, v);
	case 1: return !__builtin_sub_overflow(x, y, v);
	case 2: return !__builtin_mul_overflow(x, y, v);
	case 3: if (!y) return 0; *v = floordiv64(x, y); return 1;
	case 4: if (!y) return 0; *v = floormod64(x, y); return 1;
	case 5: *v = x & y; return 1;
	case 6: *v = x | y; return 1;
	default: *v = x ^ y; return 1;
	}
}

START_TEST(fold_property)
{
	int i, nok = 0, nbad = 0;

	rng = 12345;
	for (i = 0; i < 300; i++) {
		Buf src, want;
		int64_t v;
		int ok;
		tilec_status st;
		char *s;

		buf_init(&src);
		buf_init(&want);
		buf_puts(&src, "const X = ");
		ok = gen(&src, 6, &v);
		buf_puts(&src, ";\nkernel k(A: f32[M]) grid(1) threads(32) { assume(M != X); }");
		s = run(buf_str(&src), NULL, 0, &st, NULL);
		if (ok) {
			buf_printf(&want, "assume M != %s%lld%s", v < 0 ? "" : "", (long long)v, "");
			ck_assert_msg(st == TILEC_OK && strstr(s, buf_str(&want)), "%s\nwant %s\ngot %s",
				      buf_str(&src), buf_str(&want), s);
			nok++;
		} else {
			ck_assert_msg(st == TILEC_ERROR && (strstr(s, "division by zero") ||
							   strstr(s, "overflow")),
				      "%s\n%s", buf_str(&src), s);
			nbad++;
		}
		free(s);
		buf_free(&src);
		buf_free(&want);
	}
	ck_assert_int_gt(nok, 100);
	ck_assert_int_gt(nbad, 0);
}
END_TEST

/*
 * property: mutated samples (bytes changed, deleted, duplicated, tokens swapped
 * in) never crash; an error status always comes with diagnostics, each line
 * "m.tile:L:C: error|note: ..." or "m.tile: error: ..."; success gives output.
 */
static const char *const swaps[] = {
	"copy", "gemm", "fill", "clear", "reduce", "local", "shared", "f16", "f32", "bx", "by",
	"(", ")", "[", "]", ",", ":", "0", "-1", "128", "parallel", "range", "pipeline", "let",
	"swizzle(64)", "cute(\"(_2,_2):(_1,_2)\")", "1.5", "true", "A", "As", "acc", "BM", "K",
};

START_TEST(mutation_property)
{
	size_t len;
	char *base = test_readfile("samples/gemm.tile", &len);
	int iter, nok = 0;

	ck_assert_ptr_nonnull(base);
	rng = 777;
	for (iter = 0; iter < 400; iter++) {
		Buf m;
		tilec_options o;
		tilec_result r;
		const char *p;
		size_t at = rnd() % len, n = 1 + rnd() % 12;

		buf_init(&m);
		buf_putn(&m, base, at);
		switch (rnd() % 4) {
		case 0: buf_putc(&m, (int)(rnd() % 256)); at += 1; break;
		case 1: at += n; break;
		case 2: buf_putn(&m, base + at, at + n <= len ? n : len - at); break;
		default: buf_puts(&m, swaps[rnd() % countof(swaps)]); at += rnd() % 6; break;
		}
		if (at < len)
			buf_putn(&m, base + at, len - at);
		tilec_options_init(&o);
		o.filename = "m.tile";
		o.dump = TILEC_DUMP_IR;
		tilec_compile(m.s ? m.s : "", m.len, &o, &r);
		if (r.status == TILEC_OK) {
			nok++;
			ck_assert_msg(!strncmp(r.output, "kernel ", 7), "%s", r.output);
		} else {
			ck_assert_int_eq(r.status, TILEC_ERROR);
			ck_assert_msg(r.nerrors > 0 && r.diagnostics[0], "no diagnostics for\n%s", buf_str(&m));
			for (p = r.diagnostics; *p; p = strchr(p, '\n') + 1) {
				int line, col, k = 0;

				ck_assert_msg(!strncmp(p, "m.tile:", 7), "%s", p);
				ck_assert_msg(sscanf(p, "m.tile:%d:%d: %n", &line, &col, &k) == 2 ?
						      line > 0 && col > 0 && (!strncmp(p + k, "error: ", 7) ||
									     !strncmp(p + k, "note: ", 6))
										    : !strncmp(p, "m.tile: error: ", 15),
					      "bad diagnostic line: %s", p);
				ck_assert_ptr_nonnull(strchr(p, '\n'));
			}
		}
		tilec_result_free(&r);
		buf_free(&m);
	}
	free(base);
	ck_assert_int_gt(nok, 10);
}
END_TEST

/*
 * property: random valid programs (sizes, statement mixes, loops, helpers,
 * layouts drawn with a fixed seed) are accepted, and the IR has as many
 * copies, gemms and parallel nests as the program.
 */
static int
count(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what)) != NULL) {
		n++;
		s += strlen(what);
	}
	return n;
}

START_TEST(valid_property)
{
	static const int pow2[] = {16, 32, 64, 128};
	static const char *const rops[] = {"sum", "max", "min", "absmax"};
	int iter;

	rng = 4242;
	for (iter = 0; iter < 150; iter++) {
		Buf b;
		int bm = pow2[rnd() % 4], bn = pow2[rnd() % 4], bk = pow2[rnd() % 3];
		int nst = 3 + (int)(rnd() % 8), i, ncopy = 0, ngemm = 0, npar = 0;
		tilec_status st;
		char *s;

		buf_init(&b);
		buf_printf(&b, "const BM = %d, BN = %d, BK = %d;\n", bm, bn, bk);
		buf_puts(&b, "func scale(x: local f32[R, Q], v: f32) {\n"
			     "  for i, j in parallel(R, Q) { x[i, j] *= v; }\n}\n");
		buf_printf(&b, "kernel k(A: f16[M, K], B: f16[K, N], C: f32[M, N], s: f32)\n"
			       "  grid(cdiv(N, BN), cdiv(M, BM)) threads(%d) {\n",
			   32 << (rnd() % 4));
		buf_puts(&b, "  shared As: f16[BM, BK];\n  shared Bs: f16[BK, BN];\n"
			     "  local acc: f32[BM, BN];\n  local r: f32[BM];\n");
		for (i = 0; i < nst; i++) {
			switch (rnd() % 11) {
			case 0: buf_puts(&b, "  clear(acc);\n"); break;
			case 1: buf_printf(&b, "  fill(r, %d.5);\n", (int)(rnd() % 9)); break;
			case 2:
				buf_printf(&b, "  copy(A[by * BM, %u * BK], As);\n", rnd() % 4);
				ncopy++;
				break;
			case 3: buf_puts(&b, "  gemm(As, Bs, acc);\n"); ngemm++; break;
			case 4:
				buf_printf(&b, "  for i, j in parallel(BM, BN) { acc[i, j] = acc[i, j] * s + %u.0; }\n",
					   rnd() % 5);
				npar++;
				break;
			case 5:
				buf_printf(&b, "  reduce(acc, r, op = %s, dim = %d);\n", rops[rnd() % 4],
					   rnd() % 2 ? 1 : -1);
				break;
			case 6:
				buf_printf(&b, "  for ko in pipeline(cdiv(K, BK), stages = %u) {\n"
					       "    copy(A[by * BM, ko * BK], As);\n"
					       "    copy(B[ko * BK : ko * BK + BK, bx * BN : bx * BN + BN], Bs);\n"
					       "    gemm(As, Bs, acc, clear = %s);\n  }\n",
					   1 + rnd() % 4, rnd() % 2 ? "true" : "false");
				ncopy += 2;
				ngemm++;
				break;
			case 7:
				buf_printf(&b, "  annotate_layout(As, swizzle(%d));\n", 32 << (rnd() % 3));
				break;
			case 8:
				buf_puts(&b, "  copy(acc, C[by * BM, bx * BN]);\n");
				ncopy++;
				break;
			case 9: buf_puts(&b, "  scale(acc, s * 2.0);\n"); npar++; break;
			default:
				buf_printf(&b, "  for t in range(%u, BM) {\n    let q = t * 2 + 1;\n"
					       "    if (q %% 3 == 0 && t < BM - 1) { r[t] = f32(q); } else { r[t] = -1.0; }\n  }\n",
					   rnd() % 8);
				break;
			}
		}
		buf_puts(&b, "}\n");
		s = run(buf_str(&b), NULL, 0, &st, NULL);
		ck_assert_msg(st == TILEC_OK, "%s\n%s", buf_str(&b), s);
		ck_assert_int_eq(count(s, "copy "), ncopy);
		ck_assert_int_eq(count(s, "gemm As["), ngemm);
		ck_assert_int_eq(count(s, "parallel "), npar);
		free(s);
		buf_free(&b);
	}
}
END_TEST

/* ---- CuTe literals (parsed by the CuTe module) ---------------------------------------------------- */

static const struct {
	const char *s;
	const char *err; /* NULL: valid */
} cute_cases[] = {
	{"_8:_1", NULL},
	{"(_8,_4):(_4,_1)", NULL},
	{"((_32,_2,_2),_1):((_1,_32,_0),_0)", NULL},
	{"(8, 4) : (1, 8)", NULL},
	{"(_8,_4):(_-4,_1)", NULL},
	{"Sw<3,4,3> o (_8,_64):(_64,_1)", NULL},
	{"Swizzle<2,3,3> o _0 o ((_8,_2),_32):((_32,_256),_1)", NULL},
	{"", "parse error at end of input: expected an integer"},
	{"(_8,_4)", "expected a layout shape:stride or Sw<B,M,S> o shape:stride"},
	{"(_8,_4):(_1,_8", "unbalanced parentheses"},
	{"(_8,_4)):(_1,_8)", "unbalanced parentheses"},
	{"(_8,_4):((_1,_2),_8)",
	 "parse error at column 10: expected a stride leaf congruent with the shape near '(_1,_2),_8)'"},
	{"(_8,_4):(_1,_8) x", "parse error at column 17: expected end of input near 'x'"},
	{"(_8;_4):(_1,_8)", "parse error at column 4: expected ',' or ')' near ';_4):(_1,_8)'"},
	{"(_0,_4):(_1,_8)", "shape extent 0 is not positive"},
	{"Sw<3,4> o _8:_1", "parse error at column 7: expected ',' in the swizzle near '> o _8:_1'"},
	{"Sw<3,4,2> o _8:_1", "invalid swizzle Sw<3,4,2> (need B >= 0, M >= 0, |S| >= B)"},
	{"Sw<3,4,3> _8:_1", "parse error at column 11: expected end of input near '_8:_1'"},
	{"_99999999999999:_1", NULL}, /* a valid (huge) layout; the size check catches it */
	{"_99999999999999999999:_1", "integer overflow in literal at column 20"},
};

START_TEST(cute_check)
{
	char msg[200] = "";
	const char *s = cute_cases[_i].s;
	int64_t size = 0;
	int r = sema_check_cute(s, strlen(s), msg, sizeof msg, &size);

	if (!cute_cases[_i].err)
		ck_assert_msg(r == 0, "'%s': %s", s, msg);
	else
		ck_assert_msg(r == -1 && !strcmp(msg, cute_cases[_i].err), "'%s': got '%s'", s, msg);
}
END_TEST

/* the number of elements a CuTe layout maps: the product of its shape */
static const struct {
	const char *s;
	int64_t size;
} cute_sizes[] = {
	{"_8:_1", 8},
	{"(_8,_4):(_4,_1)", 32},
	{"((_32,_2,_2),_1):((_1,_32,_0),_0)", 128},
	{"Sw<3,4,3> o _0 o (_64,_32):(_32,_1)", 2048},
	{"(4096,4096,4096,4096,4096,4096):(1,1,1,1,1,1)", -1},
};

START_TEST(cute_size)
{
	char msg[200] = "";
	int64_t size = 0;

	ck_assert_int_eq(sema_check_cute(cute_sizes[_i].s, strlen(cute_sizes[_i].s), msg, sizeof msg,
					 &size), 0);
	ck_assert_int_eq(size, cute_sizes[_i].size);
}
END_TEST

/* deeply nested CuTe tuples are refused, not recursed into without bound */
START_TEST(cute_deep)
{
	char s[2100], msg[200];
	int i;

	for (i = 0; i < 1000; i++)
		s[i] = '(';
	s[i] = '1';
	for (i = 1001; i < 2001; i++)
		s[i] = ')';
	s[2001] = 0;
	ck_assert_int_eq(sema_check_cute(s, strlen(s), msg, sizeof msg, NULL), -1);
	ck_assert_str_eq(msg, "nesting deeper than 64");
}
END_TEST

Suite *
suite_sema(void)
{
	Suite *s = suite_create("sema");
	TCase *tc = tcase_create("sema");

	tcase_add_loop_test(tc, sema_ok, 0, (int)countof(ok_cases));
	tcase_add_loop_test(tc, sema_err, 0, (int)countof(err_cases));
	tcase_add_test(tc, all_errors);
	tcase_add_test(tc, deep_inline);
	tcase_add_test(tc, defines);
	tcase_add_loop_test(tc, define_check, 0, (int)countof(define_forms));
	tcase_add_test(tc, api_args);
	tcase_add_test(tc, caret);
	tcase_add_test(tc, fold_property);
	tcase_add_test(tc, mutation_property);
	tcase_add_test(tc, valid_property);
	tcase_add_loop_test(tc, cute_check, 0, (int)countof(cute_cases));
	tcase_add_test(tc, cute_deep);
	tcase_add_loop_test(tc, cute_size, 0, (int)countof(cute_sizes));
	suite_add_tcase(s, tc);
	return s;
}
