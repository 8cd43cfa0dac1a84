/*
 * check_ir.c: the tile IR. IR-dump goldens test/golden/ir/NAME.ir for every
 * every sample .tile (found by globbing, so a new sample without a golden fails;
 * UPDATE_GOLDEN=1 writes them), expression printing with minimal parentheses
 * over hand-built trees, unique names, and dump determinism.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "ir.h"
#include "sema.h"
#include "tests.h"
#include "tilec.h"

static glob_t samples;

static char *
compile_ir(const char *path, const char *src, size_t len, tilec_status *st, char **diags)
{
	tilec_options o;
	tilec_result r;
	char *out;

	tilec_options_init(&o);
	o.filename = path;
	o.dump = TILEC_DUMP_IR;
	tilec_compile(src, len, &o, &r);
	*st = r.status;
	*diags = r.diagnostics;
	out = r.output;
	return out;
}

START_TEST(sample_golden)
{
	const char *path = samples.gl_pathv[_i], *base = strrchr(path, '/') + 1;
	char golden[512], msg[600], *src, *out, *diags, *out2, *diags2;
	size_t len;
	tilec_status st;

	src = test_readfile(path, &len);
	ck_assert_msg(src != NULL, "cannot read %s", path);
	out = compile_ir(path, src, len, &st, &diags);
	ck_assert_msg(st == TILEC_OK, "%s: %s", path, diags);
	ck_assert_str_eq(diags, "");
	ck_assert_msg(strncmp(out, "kernel ", 7) == 0, "%s: dump starts with '%.20s'", path, out);
	snprintf(golden, sizeof golden, "test/golden/ir/%.*s.ir", (int)(strlen(base) - 5), base);
	ck_assert_msg(test_golden(golden, out, msg, sizeof msg) == 0, "%s", msg);
	/* the dump is deterministic */
	out2 = compile_ir(path, src, len, &st, &diags2);
	ck_assert_str_eq(out, out2);
	free(out);
	free(out2);
	free(diags);
	free(diags2);
	free(src);
}
END_TEST

START_TEST(samples_exist)
{
	ck_assert_msg(samples.gl_pathc >= 1, "no samples/*.tile");
}
END_TEST

/* ---- expression printing ----------------------------------------------------- */

static Arena A;
static Loc L = {"t", 1, 1};

static IrExpr *
V(const char *name)
{
	IrVar *v = anew(&A, IrVar);

	v->name = name;
	v->type = DT_INT;
	return ir_var(&A, L, v);
}

static IrExpr *
B(BinOp op, IrExpr *x, IrExpr *y)
{
	return ir_binary(&A, L, op >= BIN_LT && op <= BIN_LOR ? DT_BOOL : DT_INT, op, x, y);
}

static IrExpr *
I(int64_t v)
{
	return ir_int(&A, L, v);
}

static IrExpr *
build(int row)
{
	IrExpr *a = V("a"), *b = V("b"), *c = V("c");
	IrExpr **args = anewn(&A, IrExpr *, 2);

	switch (row) {
	case 0: return B(BIN_ADD, B(BIN_ADD, a, b), c);
	case 1: return B(BIN_ADD, a, B(BIN_ADD, b, c));
	case 2: return B(BIN_MUL, B(BIN_ADD, a, b), c);
	case 3: return B(BIN_ADD, a, B(BIN_MUL, b, c));
	case 4: return B(BIN_SUB, a, B(BIN_SUB, b, c));
	case 5: return B(BIN_DIV, B(BIN_MUL, a, b), c);
	case 6: return B(BIN_MUL, a, B(BIN_DIV, b, c));
	case 7: return B(BIN_LAND, B(BIN_LT, a, b), B(BIN_LOR, B(BIN_EQ, b, c), B(BIN_NE, a, c)));
	case 8: return ir_unary(&A, L, DT_INT, UN_NEG, B(BIN_ADD, a, b));
	case 9: return B(BIN_MUL, I(-3), a);
	case 10: return B(BIN_ADD, a, I(-3));
	case 11: return ir_select(&A, L, B(BIN_LT, a, b), a, ir_select(&A, L, B(BIN_LT, b, c), b, c));
	case 12: return B(BIN_ADD, ir_select(&A, L, B(BIN_LT, a, b), a, b), c);
	case 13:
		args[0] = B(BIN_ADD, a, b);
		args[1] = I(128);
		return ir_call(&A, L, DT_INT, FN_CDIV, 2, args);
	case 14: return ir_cast(&A, L, DT_F16, B(BIN_SHL, a, B(BIN_BAND, b, c)));
	case 15: return B(BIN_BOR, B(BIN_BXOR, a, b), B(BIN_BAND, b, c));
	case 16: return ir_float(&A, L, DT_F32, 0.1);
	case 17: return ir_float(&A, L, DT_F16, 2);
	case 18: return ir_float(&A, L, DT_F32, 1e-30);
	case 19: return ir_unary(&A, L, DT_BOOL, UN_NOT, ir_bool(&A, L, 1));
	default: return NULL;
	}
}

static const char *const printed[] = {
	"a + b + c",
	"a + (b + c)",
	"(a + b) * c",
	"a + b * c",
	"a - (b - c)",
	"a * b / c",
	"a * (b / c)",
	"a < b && (b == c || a != c)",
	"-(a + b)",
	"-3 * a",
	"a + -3",
	"a < b ? a : b < c ? b : c",
	"(a < b ? a : b) + c",
	"cdiv(a + b, 128)",
	"f16(a << (b & c))",
	"a ^ b | b & c",
	"0.1",
	"2.0:f16",
	"1e-30",
	"!true",
};

START_TEST(expr_print)
{
	Buf b;
	IrExpr *e;

	arena_init(&A);
	buf_init(&b);
	e = build(_i);
	ck_assert_ptr_nonnull(e);
	ir_dump_expr(&b, NULL, e);
	ck_assert_str_eq(buf_str(&b), printed[_i]);
	/* a copy is equal, prints the same, and shares no node with the original */
	{
		IrExpr *c = ir_expr_copy(&A, e);
		Buf b2;

		ck_assert(c != e && ir_expr_equal(c, e));
		buf_init(&b2);
		ir_dump_expr(&b2, NULL, c);
		ck_assert_str_eq(buf_str(&b2), printed[_i]);
		buf_free(&b2);
		if (c->kind == IE_BINARY)
			ck_assert(c->u.bin.a != e->u.bin.a && c->u.bin.b != e->u.bin.b);
		if (c->kind == IE_CALL)
			ck_assert(c->u.call.args != e->u.call.args && c->u.call.args[0] != e->u.call.args[0]);
		if (c->kind == IE_BINARY) { /* changing the copy leaves the original alone */
			c->u.bin.op = c->u.bin.op == BIN_ADD ? BIN_SUB : BIN_ADD;
			ck_assert(!ir_expr_equal(c, e));
		}
	}
	buf_free(&b);
	arena_free(&A);
}
END_TEST

/* new names in a kernel are unique: name, name_1, name_2 (vars and buffers share them) */
START_TEST(unique_names)
{
	IrKernel k;
	IrVar *v[4];
	IrDim d = {4, NULL};
	int i, id;

	arena_init(&A);
	memset(&k, 0, sizeof k);
	for (i = 0; i < 3; i++)
		v[i] = ir_kernel_var(&A, &k, VAR_LOOP, DT_INT, "i", L);
	id = ir_kernel_buffer(&A, &k, "i", MEM_LOCAL, DT_F32, 1, &d, L);
	ck_assert_str_eq(v[0]->name, "i");
	ck_assert_str_eq(v[1]->name, "i_1");
	ck_assert_str_eq(v[2]->name, "i_2");
	ck_assert_int_eq(id, 0);
	ck_assert_str_eq(k.bufs[0].name, "i_3");
	for (i = 0; i < 1000; i++)
		ck_assert_ptr_nonnull(ir_kernel_var(&A, &k, VAR_LET, DT_INT, "t", L));
	ck_assert_str_eq(k.vars[k.nvar - 1]->name, "t_999");
	ck_assert_int_eq(v[2]->id, 2);
	arena_free(&A);
}
END_TEST

/* dtype names round-trip; "int" is internal */
START_TEST(dtypes)
{
	int t;

	for (t = DT_BOOL; t < DT_COUNT; t++) {
		const char *n = dtype_name((DType)t);

		if (t == DT_INT)
			ck_assert_int_eq(dtype_lookup(n, (int)strlen(n)), DT_NONE);
		else
			ck_assert_int_eq(dtype_lookup(n, (int)strlen(n)), t);
		ck_assert_int_gt(dtype_bytes((DType)t), 0);
	}
	ck_assert_int_eq(dtype_lookup("f1", 2), DT_NONE);
	ck_assert_int_eq(dtype_lookup("f16x", 4), DT_NONE);
	ck_assert(dtype_is_float(DT_BF16) && !dtype_is_int(DT_BF16));
	ck_assert(dtype_is_int(DT_U8) && !dtype_is_float(DT_U8));
}
END_TEST

/* ir_verify accepts what sema builds and refuses each kind of breakage */
static const char *const broken[] = {
	NULL,
	"kernel k, line 9: buffer id out of range",
	"kernel k, line 9: region extent not positive",
	"kernel k, line 9: region rank differs from its buffer's",
	"kernel k, line 2: threads not positive",
	"kernel k, line 2: grid needs 1 to 3 dimensions",
	"kernel k, line 11: variable not registered in its kernel",
	"kernel k, line 12: expression without a type",
	"kernel k, line 12: load rank differs from its buffer's",
	"kernel k, line 10: pipeline with no stage",
	"kernel k, line 5: bad buffer dimension",
	"kernel k, line 13: if condition not bool",
	"kernel k, line 2: bad buffer stride",
	"kernel k, line 3: strides on a buffer that is not a tensor parameter",
	"kernel k, line 2: bad buffer stride",
	NULL, /* valid strides (40, 1) on A */
};

/* ir_walk: every statement, each before its bodies, then else bodies; a non-zero visit stops */
typedef struct WalkLog {
	char kinds[64];
	int n, stop_at;
} WalkLog;

static int
walk_log(IrStmt *s, void *ctx)
{
	WalkLog *w = ctx;

	w->kinds[w->n++] = "CGFRPSLTOpIA"[s->kind < 12 ? s->kind : 11];
	return w->n == w->stop_at ? 7 : 0;
}

START_TEST(walk)
{
	const char *src =
		"kernel k(A: f32[64], B: f32[64]) grid(1) threads(64) {\n"
		"  local x: f32[64];\n"
		"  copy(A[0], x);\n"
		"  for ko in range(2) {\n"
		"    if (ko > 0) { copy(x, B[0]); } else { clear(x); }\n"
		"    for i in parallel(64) { x[i] = x[i] + 1.0; }\n"
		"  }\n"
		"}\n";
	Arena a;
	Diags d;
	IrProgram *p;
	WalkLog w = {{0}, 0, 0};

	arena_init(&a);
	diags_init(&d, &a);
	p = sema_program(&a, &d, parse_program(&a, &d, src, strlen(src), "w.tile"), NULL, 0, "w.tile");
	ck_assert_msg(p != NULL, "%s", d.head ? d.head->msg : "?");
	ck_assert_int_eq(ir_walk(p->kernels->body, walk_log, &w), 0);
	/* copy, for, if, copy (then), fill (else), parallel, store */
	ck_assert_str_eq(w.kinds, "COICFPS");
	memset(&w, 0, sizeof w);
	w.stop_at = 4;
	ck_assert_int_eq(ir_walk(p->kernels->body, walk_log, &w), 7);
	ck_assert_str_eq(w.kinds, "COIC");
	arena_free(&a);
}
END_TEST

START_TEST(verify)
{
	const char *src =
		"const BM = 64;\n"
		"kernel k(A: f16[M, K], s: f32) grid(cdiv(M, BM)) threads(128) {\n"
		"  shared As: f16[BM, 32];\n"
		"  local acc: f32[BM, 32];\n"
		"  local t: f32[4];\n"
		"  clear(acc);\n"
		"  for ko in range(4) {\n"
		"    clear(t);\n"
		"    copy(A[bx * BM, ko * 32], As);\n"
		"    for k2 in pipeline(4, stages = 2) {\n"
		"      for i, j in parallel(BM, 32) {\n"
		"        acc[i, j] += f32(As[i, j]) * s;\n"
		"        if (i < j) { acc[i, j] = 0; }\n"
		"      }\n"
		"    }\n"
		"  }\n"
		"}\n";
	Arena a;
	Diags d;
	Err e = {0};
	Node *top;
	IrProgram *p;
	IrKernel *k;
	IrStmt *loop, *copy, *pipe, *par, *store, *ifs;
	IrVar stray = {VAR_LOOP, DT_INT, "stray", 0, {0}};

	arena_init(&a);
	diags_init(&d, &a);
	top = parse_program(&a, &d, src, strlen(src), "v.tile");
	p = sema_program(&a, &d, top, NULL, 0, "v.tile");
	ck_assert_msg(p != NULL, "%s", d.head ? d.head->msg : "?");
	k = p->kernels;
	loop = k->body->next;                 /* for ko */
	copy = loop->u.loop.body->next;       /* copy */
	pipe = copy->next;
	par = pipe->u.pipe.body;
	store = par->u.par.body;
	ifs = store->next;
	ck_assert_int_eq(copy->kind, S_COPY);
	ck_assert_int_eq(ifs->kind, S_IF);
	switch (_i) {
	case 1: copy->u.copy.src.buf = 99; break;
	case 2: copy->u.copy.dst.ext[1] = 0; break;
	case 3: copy->u.copy.dst.ndim = 1; break;
	case 4: k->threads = 0; break;
	case 5: k->ngrid = 0; break;
	case 6: par->u.par.vars[1] = &stray; break;
	case 7: store->u.store.value->type = DT_NONE; break;
	case 8: {
		IrExpr *mul = store->u.store.value->u.bin.b; /* acc[i, j] + f32(As[i, j]) * s */

		ck_assert_int_eq(mul->kind, IE_BINARY);
		ck_assert_int_eq(mul->u.bin.a->kind, IE_CAST);
		ck_assert_int_eq(mul->u.bin.a->u.cast.a->kind, IE_LOAD);
		mul->u.bin.a->u.cast.a->u.load.n = 1;
		break;
	}
	case 9: pipe->u.pipe.stages = 0; break;
	case 10: k->bufs[3].dims[0].c = -4; break;
	case 11: ifs->u.cond.cond = store->u.store.value; break;
	case 12: case 13: case 14: case 15: {
		IrDim *st = anewn(&a, IrDim, 2);

		st[0].c = _i == 12 ? 0 : 40;
		st[0].sym = _i == 14 ? k->params[1].var : NULL; /* s: a scalar, not a size */
		st[1].c = 1;
		k->bufs[_i == 13 ? 1 : 0].strides = st;
		break;
	}
	}
	if (!broken[_i]) {
		ck_assert_msg(ir_verify(p, &e) == 0, "%s", e.msg);
	} else {
		ck_assert_int_eq(ir_verify(p, &e), -1);
		ck_assert_str_eq(e.msg, broken[_i]);
	}
	arena_free(&a);
}
END_TEST

Suite *
suite_ir(void)
{
	Suite *s = suite_create("ir");
	TCase *tc = tcase_create("golden");
	TCase *te = tcase_create("dump");

	if (glob("samples/*.tile", 0, NULL, &samples) != 0)
		samples.gl_pathc = 0;
	tcase_add_test(tc, samples_exist);
	if (samples.gl_pathc)
		tcase_add_loop_test(tc, sample_golden, 0, (int)samples.gl_pathc);
	tcase_add_loop_test(te, expr_print, 0, (int)countof(printed));
	tcase_add_test(te, unique_names);
	tcase_add_test(te, dtypes);
	tcase_add_test(te, walk);
	tcase_add_loop_test(te, verify, 0, (int)countof(broken));
	suite_add_tcase(s, tc);
	suite_add_tcase(s, te);
	return s;
}
