/*
 * check_cost.c: the cost models (cost.c) and the brute-force oracle
 * (cost_oracle.c). Tables of hand-computed costs for small programs whose
 * layouts are built by hand (coalesced, offset, transposed, replicated, the
 * #1729 collapse case, worst cases, serial repeats, warp 64), the ranking of
 * the #1729 attempts under both models, API errors, and a property test:
 * symbolic scorer == oracle on every statement of random fragments and loops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "infer.h"
#include "sema.h"
#include "tests.h"

enum { MAXS = 32 };

typedef struct Built {
	IrKernel *k;
	int n;
	IrStmt *s[MAXS];     /* statements in source order (ids 1..n), loop bodies included */
	int nmem;
	IrStmt *mem[MAXS];   /* the COPY and PARALLEL ones */
} Built;

static void
collect(Built *b, IrStmt *s)
{
	for (; s; s = s->next) {
		if (b->n < MAXS) {
			s->id = b->n + 1;
			b->s[b->n++] = s;
			if (s->kind == S_COPY || s->kind == S_PARALLEL)
				b->mem[b->nmem++] = s;
		}
		if (s->kind == S_FOR)
			collect(b, s->u.loop.body);
		else if (s->kind == S_PIPELINE)
			collect(b, s->u.pipe.body);
		else if (s->kind == S_IF)
			collect(b, s->u.cond.then);
	}
}

static int
build(Arena *a, const char *src, Built *b, char *msg, size_t msgsz)
{
	Diags d;
	Node *top;
	IrProgram *p;
	Buf out = { 0 };

	diags_init(&d, a);
	memset(b, 0, sizeof *b);
	top = parse_program(a, &d, src, strlen(src), "t.tile");
	p = d.nerr ? NULL : sema_program(a, &d, top, NULL, 0, "t.tile");
	if (!p || d.nerr) {
		diag_format(&d, &out, src, strlen(src), 0);
		snprintf(msg, msgsz, "%s", out.s ? out.s : "?");
		free(out.s);
		return -1;
	}
	b->k = p->kernels;
	collect(b, b->k->body);
	return 0;
}

static int
bufid(const IrKernel *k, const char *name)
{
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (strcmp(k->bufs[i].name, name) == 0)
			return i;
	return -1;
}

/* a hand-built layout: for buffer `buf`, or for statement number `stmt` (1-based) */
typedef struct Lay {
	const char *buf;
	int stmt;
	int nin;
	int64_t shape[3];
	const char *thread;
	int64_t rep;
	const char *slot;
} Lay;

typedef struct Want {
	int64_t bw, issue, mem;
	int vec;
	int why;     /* why must be set (worst case, or a caveat of the measurement) */
} Want;

typedef struct Case {
	const char *name, *arch, *src;
	Lay lay[4];
	int64_t regs;
	Want w[4];   /* per COPY/PARALLEL statement in source order */
} Case;

static int
make_map(Arena *a, const Built *b, const Lay *lay, int nlay, LayoutMap *m, char *msg, size_t msgsz)
{
	Err e = { 0 };
	Fragment *F;
	int i, id;

	m->nbuf = b->k->nbuf;
	m->buf = anewn(a, Layout *, m->nbuf + 1);
	m->nstmt = b->n + 1;
	m->loop = anewn(a, Layout *, m->nstmt);
	for (i = 0; i < nlay && lay[i].thread; i++) {
		F = frag_parse(a, lay[i].shape, lay[i].nin, lay[i].thread, lay[i].rep,
			       (const char *const[]){ lay[i].slot }, 1, &e);
		if (!F) {
			snprintf(msg, msgsz, "layout %d: %s", i, e.msg);
			return -1;
		}
		if (lay[i].buf) {
			id = bufid(b->k, lay[i].buf);
			if (id < 0) {
				snprintf(msg, msgsz, "no buffer %s", lay[i].buf);
				return -1;
			}
			m->buf[id] = F;
		} else {
			m->loop[lay[i].stmt] = F;
		}
	}
	return 0;
}

#define FRAG_A {"a", 0, 2, {4, 256}, "_i * 32 + _j // 8", 1, "_j % 8"}
#define SRC_1729 \
	"kernel k(S: f32[2], Out: f32[2, 2560]) grid(1) threads(256) {\n" \
	"  local s_frag: f32[2];\n" \
	"  copy(S[0], s_frag);\n" \
	"  for i, j in parallel(2, 2560) { Out[i, j] = s_frag[i] * 2.0; }\n}\n"
#define SRC_C32(body) \
	"kernel k(B: f32[64, 64], n: i32) grid(1) threads(128) {\n" \
	"  local c: f32[4, 32];\n" body "\n}\n"
#define FRAG_C {"c", 0, 2, {4, 32}, "_i * 32 + _j", 1, "0"}
#define LOOP_C(n) {NULL, n, 2, {4, 32}, "_i * 32 + _j", 1, "0"}

static const Case cases[] = {
	{"coalesced f16 copy", "sm_80",
	 "kernel k(A: f16[64, 256]) grid(1) threads(128) {\n"
	 "  local a: f16[4, 256];\n  copy(A[0, 0], a);\n}\n",
	 {FRAG_A}, 8, {{2048, 2048, 2048, 8, 0}}},
	{"registers: every local fragment of the map counts", "sm_80",
	 "kernel k(A: f16[64, 256]) grid(1) threads(128) {\n"
	 "  local a: f16[4, 256];\n  local b: f32[64];\n  copy(A[0, 0], a);\n}\n",
	 {FRAG_A, {"b", 0, 1, {64}, "_i + 64 * _rep", 2, "_i // 16"}}, 12,
	 {{2048, 2048, 2048, 8, 0}}},
	{"offset copy straddles a segment", "sm_80",
	 "kernel k(A: f16[64, 264]) grid(4) threads(128) {\n"
	 "  local a: f16[4, 256];\n  copy(A[bx * 4, 8], a);\n}\n",
	 {FRAG_A}, 8, {{2560, 2048, 2560, 8, 0}}},
	{"coalesced store from a parallel nest", "sm_80",
	 "kernel k(B: f16[4, 256]) grid(1) threads(128) {\n"
	 "  local a: f16[4, 256];\n  for i, j in parallel(4, 256) { B[i, j] = a[i, j]; }\n}\n",
	 {FRAG_A, {NULL, 1, 2, {4, 256}, "_i * 32 + _j // 8", 1, "_j % 8"}}, 8,
	 {{2048, 2048, 2048, 8, 0}}},
	{"transposed store", "sm_80",
	 "kernel k(Bt: f16[256, 64]) grid(1) threads(128) {\n"
	 "  local a: f16[4, 256];\n  for i, j in parallel(4, 256) { Bt[j, i] = a[i, j]; }\n}\n",
	 {FRAG_A, {NULL, 1, 2, {4, 256}, "_i * 32 + _j // 8", 1, "_j % 8"}}, 8,
	 {{131072, 16384, 131072, 1, 0}}},
	{"transposed store, warp 64", "gfx942",
	 "kernel k(Bt: f16[256, 64]) grid(1) threads(128) {\n"
	 "  local a: f16[4, 256];\n  for i, j in parallel(4, 256) { Bt[j, i] = a[i, j]; }\n}\n",
	 {FRAG_A, {NULL, 1, 2, {4, 256}, "_i * 32 + _j // 8", 1, "_j % 8"}}, 8,
	 {{65536, 16384, 65536, 1, 0}}},
	{"replicated fragment: only replica 0 stores, every replica loads", "sm_80",
	 "kernel k(O: f32[64]) grid(1) threads(128) {\n"
	 "  local s: f32[64];\n  copy(s, O[0]);\n  copy(O[0], s);\n}\n",
	 {{"s", 0, 1, {64}, "_i + 64 * _rep", 2, "0"}}, 1,
	 {{256, 2048, 2048, 1, 0}, {512, 2048, 2048, 1, 0}}},
	{"#1729 copy root", "sm_80", SRC_1729,
	 {{"s_frag", 0, 1, {2}, "_i + 2 * _rep", 128, "0"},
	  {NULL, 2, 2, {2, 2560}, "_i + 2 * _rep", 128, "_j"}}, 1,
	 {{1024, 4096, 4096, 1, 0}, {163840, 2621440, 2621440, 4, 0}}},
	{"#1729 loop root", "sm_80", SRC_1729,
	 {{"s_frag", 0, 1, {2}, "_rep", 256, "_i"},
	  {NULL, 2, 2, {2, 2560}, "_j // 2 % 256", 1, "_i * 10 + _j // 512 * 2 + _j % 2"}}, 2,
	 {{1024, 4096, 4096, 2, 0}, {20480, 40960, 40960, 2, 0}}},
	{"serial repeat multiplies", "sm_80",
	 "kernel k(A: f16[64, 256]) grid(1) threads(128) {\n  local a: f16[4, 256];\n"
	 "  for r in range(4) { copy(A[r * 4, 0], a); }\n}\n",
	 {FRAG_A}, 8, {{8192, 8192, 8192, 8, 0}}},
	{"non-constant trip count taken as 1", "sm_80",
	 "kernel k(A: f16[64, 256], n: i32) grid(1) threads(128) {\n  local a: f16[4, 256];\n"
	 "  for r in range(n) { copy(A[0, 0], a); }\n}\n",
	 {FRAG_A}, 8, {{2048, 2048, 2048, 8, 1}}},
	{"worst case: non-affine address", "sm_80",
	 SRC_C32("  for i, j in parallel(4, 32) { B[i * j % 64, j] = c[i, j]; }"),
	 {FRAG_C, LOOP_C(1)}, 1, {{16384, 16384, 16384, 0, 1}}},
	{"worst case: non-affine address, repeated", "sm_80",
	 SRC_C32("  for r in range(2) { for i, j in parallel(4, 32) { B[i * j % 64, j] = c[i, j]; } }"),
	 {FRAG_C, LOOP_C(2)}, 1, {{32768, 32768, 32768, 0, 1}}},
	{"worst case: two opaque accesses", "sm_80",
	 SRC_C32("  for i, j in parallel(4, 32) { B[i * j % 64, j] = B[j, i * i]; }"),
	 {FRAG_C, LOOP_C(1)}, 1, {{32768, 32768, 32768, 0, 1}}},
	{"symbolic strides: size symbols taken as 65536", "sm_80",
	 "kernel k(B: f32[M, N]) grid(1) threads(128) {\n  local c: f32[4, 32];\n"
	 "  for i, j in parallel(4, 32) { B[i, j] = c[i, j]; }\n}\n",
	 {FRAG_C, LOOP_C(1)}, 1, {{512, 2048, 2048, 1, 1}}},
	{"symbolic strides: a transposed store", "sm_80",
	 "kernel k(B: f32[M, N]) grid(1) threads(128) {\n  local c: f32[4, 32];\n"
	 "  for i, j in parallel(4, 32) { B[j, i] = c[i, j]; }\n}\n",
	 {FRAG_C, LOOP_C(1)}, 1, {{16384, 2048, 16384, 1, 1}}},
	{"worst case: a size symbol in an index", "sm_80",
	 "kernel k(B: f32[M, 64]) grid(1) threads(128) {\n  local c: f32[4, 32];\n"
	 "  for i, j in parallel(4, 32) { B[M - 1 - i, j] = c[i, j]; }\n}\n",
	 {FRAG_C, LOOP_C(1)}, 1, {{16384, 16384, 16384, 0, 1}}},
	{"worst case: no loop layout", "sm_80",
	 SRC_C32("  for i, j in parallel(4, 32) { B[i, j] = c[i, j]; }"),
	 {FRAG_C}, 1, {{16384, 16384, 16384, 0, 1}}},
	{"worst case: XOR thread map", "sm_80",
	 SRC_C32("  for i, j in parallel(4, 32) { B[i, j] = c[i, j]; }"),
	 {FRAG_C, {NULL, 1, 2, {4, 32}, "_i * 32 + (_j ^ _i)", 1, "0"}}, 1,
	 {{16384, 16384, 16384, 0, 1}}},
	{"worst case: copy without a fragment", "sm_80",
	 SRC_C32("  copy(B[0, 0], c);"),
	 {{NULL}}, 0, {{16384, 16384, 16384, 0, 1}}},
	{"measured: the affine twin of the opaque nest", "sm_80",
	 SRC_C32("  for i, j in parallel(4, 32) { B[i, j] = c[i, j]; }"),
	 {FRAG_C, LOOP_C(1)}, 1, {{512, 2048, 2048, 1, 0}}},
};

static const Target *
target_of(const char *arch)
{
	Err e = { 0 };

	return target_lookup(arch[0] == 'g' ? TGT_HIP : TGT_CUDA, arch, &e);
}

static void
check_want(const Case *c, const Cost *got, const char *who)
{
	int i;

	for (i = 0; i < got->nstmt; i++) {
		const StmtCost *s = &got->stmts[i];
		const Want *w = &c->w[i];

		ck_assert_msg(s->bw_bytes == w->bw && s->issue_bytes == w->issue && s->mem == w->mem &&
				      s->vec == w->vec,
			      "%s (%s) stmt %d: bw %lld issue %lld mem %lld vec %d, want %lld %lld %lld %d"
			      " (why: %s)",
			      c->name, who, i, (long long)s->bw_bytes, (long long)s->issue_bytes,
			      (long long)s->mem, s->vec, (long long)w->bw, (long long)w->issue,
			      (long long)w->mem, w->vec, s->why ? s->why : "-");
		ck_assert_msg((s->why != NULL) == w->why, "%s (%s) stmt %d: why %s", c->name, who, i,
			      s->why ? s->why : "NULL");
	}
}

START_TEST(hand_costs)
{
	const Case *c = &cases[_i];
	Arena a;
	Built b;
	LayoutMap m = { 0 };
	Cost sym, orc, rc;
	Err e = { 0 };
	char msg[2048];
	const Target *t = target_of(c->arch);
	int64_t total = 0;
	int i;

	arena_init(&a);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(build(&a, c->src, &b, msg, sizeof msg) == 0, "%s: %s", c->name, msg);
	ck_assert_msg(make_map(&a, &b, c->lay, 4, &m, msg, sizeof msg) == 0, "%s: %s", c->name, msg);
	ck_assert_msg(cost_score(&a, COST_IO_AWARE, t, b.k, b.mem, b.nmem, &m, &sym, &e) == 0,
		      "%s: %s", c->name, e.msg);
	ck_assert_msg(cost_oracle(&a, COST_IO_AWARE, t, b.k, b.mem, b.nmem, &m, &orc, &e) == 0,
		      "%s: %s", c->name, e.msg);
	ck_assert_int_eq(sym.nstmt, b.nmem);
	check_want(c, &sym, "cost_score");
	check_want(c, &orc, "cost_oracle");
	for (i = 0; i < sym.nstmt; i++)
		total += c->w[i].mem;
	ck_assert_int_eq(sym.mem, total);
	ck_assert_int_eq(orc.mem, total);
	ck_assert_int_eq(sym.regs, c->regs);
	ck_assert_int_eq(orc.regs, c->regs);
	/* register-count: registers only */
	ck_assert_int_eq(cost_score(&a, COST_REGISTER_COUNT, t, b.k, b.mem, b.nmem, &m, &rc, &e), 0);
	ck_assert_int_eq(rc.mem, 0);
	ck_assert_int_eq(rc.regs, c->regs);
	ck_assert_int_eq(cost_oracle(&a, COST_REGISTER_COUNT, t, b.k, b.mem, b.nmem, &m, &rc, &e), 0);
	ck_assert_int_eq(rc.mem, 0);
	ck_assert_int_eq(rc.regs, c->regs);
	arena_free(&a);
}
END_TEST

static int
index_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (strcmp(cases[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void
score_case(Arena *a, const char *name, CostModelKind m, Cost *out)
{
	const Case *c = &cases[index_of(name)];
	Built b;
	LayoutMap map = { 0 };
	Err e = { 0 };
	char msg[512];

	ck_assert_int_eq(build(a, c->src, &b, msg, sizeof msg), 0);
	ck_assert_int_eq(make_map(a, &b, c->lay, 4, &map, msg, sizeof msg), 0);
	ck_assert_msg(cost_score(a, m, target_of(c->arch), b.k, b.mem, b.nmem, &map, out, &e) == 0,
		      "%s", e.msg);
}

/* #1729: io-aware prefers the loop root, register-count the copy root */
START_TEST(collapse_ranking)
{
	Arena a;
	Cost copy_root, loop_root;

	arena_init(&a);
	score_case(&a, "#1729 copy root", COST_IO_AWARE, &copy_root);
	score_case(&a, "#1729 loop root", COST_IO_AWARE, &loop_root);
	ck_assert(cost_better(&loop_root, &copy_root));
	ck_assert(!cost_better(&copy_root, &loop_root));
	score_case(&a, "#1729 copy root", COST_REGISTER_COUNT, &copy_root);
	score_case(&a, "#1729 loop root", COST_REGISTER_COUNT, &loop_root);
	ck_assert(cost_better(&copy_root, &loop_root));
	ck_assert(!cost_better(&loop_root, &copy_root));
	arena_free(&a);
}
END_TEST

START_TEST(api)
{
	CostModelKind m;
	Cost x = { 0 }, y = { 0 }, out;
	Arena a;
	Err e = { 0 };
	LayoutMap map = { 0 };
	const Target *t = target_of("sm_80");

	ck_assert_int_eq(cost_model_lookup("io-aware", &m), 0);
	ck_assert_int_eq(m, COST_IO_AWARE);
	ck_assert_int_eq(cost_model_lookup("register-count", &m), 0);
	ck_assert_int_eq(m, COST_REGISTER_COUNT);
	ck_assert_int_eq(cost_model_lookup("io", &m), -1);
	ck_assert_int_eq(cost_model_lookup(NULL, &m), -1);
	ck_assert_str_eq(cost_model_name(COST_IO_AWARE), "io-aware");
	ck_assert_str_eq(cost_model_name(COST_REGISTER_COUNT), "register-count");
	x.mem = 1, x.regs = 9, y.mem = 2, y.regs = 1;
	ck_assert(cost_better(&x, &y) && !cost_better(&y, &x));
	y.mem = 1;
	ck_assert(cost_better(&y, &x) && !cost_better(&x, &y));
	y.regs = 9;
	ck_assert(!cost_better(&x, &y) && !cost_better(&y, &x));
	ck_assert(!cost_better(NULL, &y));
	arena_init(&a);
	ck_assert_int_eq(cost_score(&a, COST_IO_AWARE, t, NULL, NULL, 0, &map, &out, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "null"));
	ck_assert_int_eq(cost_oracle(&a, COST_IO_AWARE, NULL, NULL, NULL, 0, &map, &out, &e), -1);
	ck_assert_int_eq(cost_score(NULL, COST_IO_AWARE, t, NULL, NULL, 0, NULL, NULL, NULL), -1);
	arena_free(&a);
}
END_TEST

/* ---- property: cost_score == cost_oracle on random fragments and loops ---------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* a random fragment over [A, B] (powers of two): the bits of f = i * B + j are cut into
 * chunks, each going to the thread or the slot number; sometimes replicated or XOR'ed */
static void
rand_frag_flat(char *th, size_t thn, char *sl, size_t sln, const char *f, int64_t N,
	       int64_t *rep, int64_t *nthreads)
{
	int bits = 0, lo = 0, len;
	int64_t tm = 1, sm = 1;
	size_t tp = 0, sp = 0;

	while ((1LL << bits) < N)
		bits++;
	tp += (size_t)snprintf(th + tp, thn - tp, "0");
	sp += (size_t)snprintf(sl + sp, sln - sp, "0");
	while (lo < bits) {
		len = 1 + (int)rnd(3);
		if (lo + len > bits)
			len = bits - lo;
		if (rnd(2) && tm < 256) {
			tp += (size_t)snprintf(th + tp, thn - tp, " + %s // %lld %% %lld * %lld", f,
					       1LL << lo, 1LL << len, (long long)tm);
			tm <<= len;
		} else {
			sp += (size_t)snprintf(sl + sp, sln - sp, " + %s // %lld %% %lld * %lld", f,
					       1LL << lo, 1LL << len, (long long)sm);
			sm <<= len;
		}
		lo += len;
	}
	*rep = 1;
	if (rnd(3) == 0) {
		*rep = 1 << (1 + rnd(2));
		tp += (size_t)snprintf(th + tp, thn - tp, " + _rep * %lld", (long long)tm);
	}
	if (rnd(10) == 0 && tm >= 4)
		snprintf(th, thn, "%s %% %lld ^ %s // %lld %% 2", f, (long long)tm, f, (long long)tm);
	*nthreads = tm * *rep;
}

static void
rand_frag(char *th, size_t thn, char *sl, size_t sln, int64_t A, int64_t B, int64_t *rep,
	  int64_t *nthreads)
{
	char f[64];

	snprintf(f, sizeof f, "(_i * %lld + _j)", (long long)B);
	rand_frag_flat(th, thn, sl, sln, f, A * B, rep, nthreads);
}

START_TEST(oracle_property)
{
	static const char *stores[] = {
		"G[i + %d, j]", "G[j, i + %d]", "G[i * 2, j + %d]", "G[j + %d, 0]",
		"G[(i * j) %% 8, j + %d]", "G[i, j * 2 + %d]", "G[0, %d]",
	};
	static const char *dtypes[] = { "f16", "f32", "i8", "f64" };
	int iter, okm = 0, worst = 0;

	for (iter = 0; iter < 150; iter++) {
		Arena a;
		Built b;
		LayoutMap m = { 0 };
		Lay lay[3];
		Cost sym, orc;
		Err e = { 0 };
		char src[1024], body[256], th[2][512], sl[2][512], msg[1024];
		int64_t A = 1LL << rnd(3), B = 1LL << (1 + rnd(5)), rep, nt;
		int i, which = (int)rnd(sizeof stores / sizeof stores[0]);
		const char *dt = dtypes[rnd(4)];
		const Target *t = target_of(rnd(4) == 0 ? "gfx942" : "sm_80");

		arena_init(&a);
		snprintf(body, sizeof body, stores[which], (int)rnd(4));
		snprintf(src, sizeof src,
			 "kernel k(G: %s[%s]) grid(1) threads(256) {\n"
			 "  local x: %s[%lld, %lld];\n"
			 "  copy(G[%u, %u], x);\n"
			 "  for r in range(%u) { for i, j in parallel(%lld, %lld) { %s = x[i, j]; } }\n"
			 "  for i, j in parallel(%lld, %lld) { G[i, j] = G[j, i]; }\n"
			 "  copy(x, G[%u, 0]);\n}\n",
			 dt, rnd(3) ? "128, 128" : rnd(2) ? "M, N" : "M, 128", dt, (long long)A, (long long)B, rnd(5), rnd(9), 1 + rnd(3), (long long)A,
			 (long long)B, body, (long long)A, (long long)B, rnd(3));
		ck_assert_msg(build(&a, src, &b, msg, sizeof msg) == 0, "%s\n%s", src, msg);
		for (i = 0; i < 2; i++) {
			rand_frag(th[i], sizeof th[i], sl[i], sizeof sl[i], A, B, &rep, &nt);
			lay[i] = (Lay){ i == 0 ? "x" : NULL, 0, 2, { A, B }, th[i], rep, sl[i] };
		}
		lay[1].stmt = 3;
		lay[2] = lay[1];
		lay[2].stmt = 4;
		if (rnd(5) == 0)
			lay[2].thread = NULL;
		ck_assert_msg(make_map(&a, &b, lay, 3, &m, msg, sizeof msg) == 0, "%s", msg);
		if (rnd(2))
			m.loop[5] = m.loop[3];   /* the second copy by its loop layout too */
		ck_assert_msg(cost_score(&a, COST_IO_AWARE, t, b.k, b.mem, b.nmem, &m, &sym, &e) == 0,
			      "%s", e.msg);
		ck_assert_msg(cost_oracle(&a, COST_IO_AWARE, t, b.k, b.mem, b.nmem, &m, &orc, &e) == 0,
			      "%s", e.msg);
		ck_assert_int_eq(sym.nstmt, orc.nstmt);
		for (i = 0; i < sym.nstmt; i++) {
			const StmtCost *x = &sym.stmts[i], *y = &orc.stmts[i];

			ck_assert_msg(x->bw_bytes == y->bw_bytes && x->issue_bytes == y->issue_bytes &&
					      x->mem == y->mem && x->vec == y->vec,
				      "iter %d stmt %d: symbolic %lld/%lld/%lld v%d (%s), oracle "
				      "%lld/%lld/%lld v%d (%s)\n%s\nfrag x: %s | %s\nloop: %s | %s",
				      iter, i, (long long)x->bw_bytes, (long long)x->issue_bytes,
				      (long long)x->mem, x->vec, x->why ? x->why : "-",
				      (long long)y->bw_bytes, (long long)y->issue_bytes, (long long)y->mem,
				      y->vec, y->why ? y->why : "-", src, th[0], sl[0], th[1], sl[1]);
			if (x->vec)
				okm++;
			else if (x->mem)
				worst++;
		}
		ck_assert_int_eq(sym.regs, orc.regs);
		arena_free(&a);
	}
	/* both kinds of statement occurred */
	ck_assert_msg(okm > 150 && worst > 20, "measured %d, worst %d", okm, worst);
}
END_TEST

/* rank-3 nests and buffers, index permutations and a replicated rank-1 buffer */
START_TEST(oracle_property_rank3)
{
	static const char *stores[] = {
		"G[i, j, k]", "G[k, j, i]", "G[j, i + 1, k * 2]", "G[i, k, j]", "G[0, j, k + i]",
	};
	int iter, okm = 0;

	for (iter = 0; iter < 80; iter++) {
		Arena a;
		Built b;
		LayoutMap m = { 0 };
		Lay lay[3];
		Cost sym, orc;
		Err e = { 0 };
		char src[1024], th[3][512], sl[3][512], f[96], msg[1024];
		int64_t A = 1LL << rnd(3), B = 1LL << rnd(3), C = 1LL << (1 + rnd(4)), rep, nt;
		int i;
		const Target *t = target_of(rnd(3) == 0 ? "gfx942" : "sm_90");

		arena_init(&a);
		snprintf(src, sizeof src,
			 "kernel k(G: f16[8, 16, 64], H: f32[64]) grid(1) threads(256) {\n"
			 "  local x: f16[%lld, %lld, %lld];\n  local h: f32[%lld];\n"
			 "  copy(G[%u, 0, %u], x);\n"
			 "  for i, j, k in parallel(%lld, %lld, %lld) { %s = x[i, j, k]; }\n"
			 "  copy(H[%u], h);\n}\n",
			 (long long)A, (long long)B, (long long)C, (long long)C, rnd(4), rnd(8),
			 (long long)A, (long long)B, (long long)C,
			 stores[rnd(sizeof stores / sizeof stores[0])], rnd(4));
		ck_assert_msg(build(&a, src, &b, msg, sizeof msg) == 0, "%s\n%s", src, msg);
		snprintf(f, sizeof f, "(_i * %lld + _j * %lld + _k)", (long long)(B * C), (long long)C);
		for (i = 0; i < 2; i++) {
			rand_frag_flat(th[i], sizeof th[i], sl[i], sizeof sl[i], f, A * B * C, &rep, &nt);
			lay[i] = (Lay){ i == 0 ? "x" : NULL, 2, 3, { A, B, C }, th[i], rep, sl[i] };
		}
		rand_frag_flat(th[2], sizeof th[2], sl[2], sizeof sl[2], "_i", C, &rep, &nt);
		lay[2] = (Lay){ "h", 0, 1, { C }, th[2], rep, sl[2] };
		ck_assert_msg(make_map(&a, &b, lay, 3, &m, msg, sizeof msg) == 0, "%s", msg);
		ck_assert_int_eq(cost_score(&a, COST_IO_AWARE, t, b.k, b.mem, b.nmem, &m, &sym, &e), 0);
		ck_assert_int_eq(cost_oracle(&a, COST_IO_AWARE, t, b.k, b.mem, b.nmem, &m, &orc, &e), 0);
		for (i = 0; i < sym.nstmt; i++) {
			const StmtCost *x = &sym.stmts[i], *y = &orc.stmts[i];

			ck_assert_msg(x->bw_bytes == y->bw_bytes && x->issue_bytes == y->issue_bytes &&
					      x->mem == y->mem && x->vec == y->vec,
				      "iter %d stmt %d: symbolic %lld/%lld v%d (%s), oracle %lld/%lld v%d"
				      " (%s)\n%s\n%s | %s\n%s | %s\n%s | %s",
				      iter, i, (long long)x->bw_bytes, (long long)x->issue_bytes, x->vec,
				      x->why ? x->why : "-", (long long)y->bw_bytes,
				      (long long)y->issue_bytes, y->vec, y->why ? y->why : "-", src, th[0],
				      sl[0], th[1], sl[1], th[2], sl[2]);
			okm += x->vec > 1;
		}
		ck_assert_int_eq(sym.regs, orc.regs);
		arena_free(&a);
	}
	ck_assert_msg(okm > 40, "vectorised %d", okm);
}
END_TEST

/* a strided tensor's accesses are measured through its strides: a column-major view is
 * contiguous in its first index, a padded one has the stride symbol's 65536 */
START_TEST(strided_nest_strides)
{
	static const char src[] =
		"kernel k(A: f32[M, 64] strides(lda, 1), D: f32[64, M] strides(1, ldd), E: f32[64, M],\n"
		"         F: f32[M, 64] strides(80, 2)) grid(cdiv(M, 16)) threads(64) {\n"
		"  for i, j in parallel(16, 64) {\n"
		"    let x = A[bx * 16 + i, j];\n    D[j, bx * 16 + i] = x;\n    E[j, bx * 16 + i] = x;\n"
		"    F[bx * 16 + i, j] = x;\n  }\n}\n";
	Arena a;
	Built b;
	NestStride ns[8];
	char msg[1024];
	int n, q, seen = 0;

	arena_init(&a);
	ck_assert_msg(build(&a, src, &b, msg, sizeof msg) == 0, "%s", msg);
	ck_assert_int_eq(b.nmem, 1);
	n = cost_nest_strides(&a, b.k, b.mem[0], ns, 8);
	ck_assert_int_eq(n, 4);
	for (q = 0; q < n; q++) {
		const char *name = b.k->bufs[ns[q].buf].name;

		if (!strcmp(name, "A"))       /* (i, j): lda, 1 */
			ck_assert(ns[q].coef[0] == 65536 && ns[q].coef[1] == 1), seen |= 1;
		else if (!strcmp(name, "D"))  /* D[j, i] at j + i * ldd */
			ck_assert(ns[q].coef[0] == 65536 && ns[q].coef[1] == 1), seen |= 2;
		else if (!strcmp(name, "E"))  /* dense E[j, i] at j * M + i */
			ck_assert(ns[q].coef[0] == 1 && ns[q].coef[1] == 65536), seen |= 4;
		else if (!strcmp(name, "F"))  /* strides(80, 2) */
			ck_assert(ns[q].coef[0] == 80 && ns[q].coef[1] == 2), seen |= 8;
	}
	ck_assert_int_eq(seen, 15);
	arena_free(&a);
}
END_TEST

Suite *
suite_cost(void)
{
	Suite *s = suite_create("cost");
	TCase *tc = tcase_create("cost");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, hand_costs, 0, (int)(sizeof cases / sizeof cases[0]));
	tcase_add_test(tc, collapse_ranking);
	tcase_add_test(tc, api);
	tcase_add_test(tc, oracle_property);
	tcase_add_test(tc, oracle_property_rank3);
	tcase_add_test(tc, strided_nest_strides);
	suite_add_tcase(s, tc);
	return s;
}
