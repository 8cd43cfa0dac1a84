/* check_fragment.c: Fragment: implicit slot map, replication operations,
 * repeat, fully replicated, containment, equality, the canonical packing of
 * the inverse, thread ranges; property tests over random fragments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "tests.h"

typedef struct {
	int nin;
	int64_t shape[3];
	const char *thread;
	int64_t rep;
	int nout;
	const char *fwd[2];
} FSpec;

static Fragment *
mk(Arena *A, const FSpec *s, Err *err)
{
	return frag_parse(A, s->shape, s->nin, s->thread, s->rep, s->fwd, s->nout, err);
}

enum { OP_NEW, OP_INV, OP_REPL2, OP_DEREPL, OP_CONDENSE, OP_REP_T, OP_REP_S, OP_PACK };

static const struct {
	FSpec s;
	int op;
	const char *want;
} op_cases[] = {
	/* implicit slot map: TileLang's own example */
	{{2, {16, 32}, "_i % 2 * 16 + _j // 2", 1, 0, {0}}, OP_NEW,
	 "Fragment([16, 32] -> [16], replicate: 1, thread: 32, forward_thread: _i % 2 * 16 + _j // 2, forward_index: [_i // 2 * 2 + _j % 2])"},
	{{2, {4, 64}, "_j // 2", 1, 0, {0}}, OP_NEW,
	 "Fragment([4, 64] -> [8], replicate: 1, thread: 32, forward_thread: _j // 2, forward_index: [_i * 2 + _j % 2])"},
	{{2, {8, 8}, "_i * 4 + _j // 2", 1, 0, {0}}, OP_NEW,
	 "Fragment([8, 8] -> [2], replicate: 1, thread: 32, forward_thread: _i * 4 + _j // 2, forward_index: [_j % 2])"},
	{{1, {12}, "_i % 3", 1, 0, {0}}, OP_NEW,
	 "Fragment([12] -> [4], replicate: 1, thread: 3, forward_thread: _i % 3, forward_index: [_i // 3])"},
	{{2, {16, 16}, "_i % 8 * 4 + _j % 8 // 2", 1, 1, {"_j // 8 * 4 + _i // 8 * 2 + _j % 2"}}, OP_INV,
	 "Layout([8, 32] -> [16, 16, 1], transform: [_i, _j] -> [_j // 4 + _i // 2 % 2 * 8, _i % 2 + _j % 4 * 2 + _i // 4 * 8, 0])"},
	{{2, {16, 32}, "_i % 2 * 16 + _j // 2", 1, 0, {0}}, OP_INV,
	 "Layout([16, 32] -> [16, 32, 1], transform: [_i, _j] -> [_j // 16 + _i // 2 * 2, _i % 2 + _j % 16 * 2, 0])"},
	{{2, {4, 64}, "_j + _rep * 64", 2, 0, {0}}, OP_INV,
	 "Layout([4, 128] -> [4, 64, 2], transform: [_i, _j] -> [_i, _j % 64, _j // 64])"},
	{{2, {4, 64}, "_j", 2, 0, {0}}, OP_INV,
	 "error: logical [0, 0] (rep 0) and [0, 0] (rep 1) both map to thread 0, slot [0]"},
	{{2, {8, 8}, "_i * 4 + _j // 2", 1, 0, {0}}, OP_REPL2,
	 "Fragment([8, 8] -> [2], replicate: 2, thread: 64, forward_thread: _i * 4 + _j // 2 + _rep * 32, forward_index: [_j % 2])"},
	{{2, {16, 16}, "_i % 8 * 4 + _j % 8 // 2 + _rep * 32", 4, 1, {"_j // 8 * 4 + _i // 8 * 2 + _j % 2"}}, OP_REPL2,
	 "Fragment([16, 16] -> [8], replicate: 8, thread: 256, forward_thread: _i % 8 * 4 + _j % 8 // 2 + _rep * 32, forward_index: [_j // 8 * 4 + _i // 8 * 2 + _j % 2])"},
	{{2, {4, 64}, "_j + _rep * 64", 2, 0, {0}}, OP_DEREPL,
	 "Fragment([4, 64] -> [2], replicate: 1, thread: 128, forward_thread: _j + _i % 2 * 64, forward_index: [_i // 2], thread_range: I.Range(0, 128))"},
	{{1, {64}, "_i % 32 + _rep % 2 * 32", 4, 0, {0}}, OP_CONDENSE,
	 "Fragment([64] -> [2], replicate: 2, thread: 64, forward_thread: _i % 32 + _rep * 32, forward_index: [_i // 32])"},
	{{1, {64}, "_i % 32 + _rep // 2 * 32", 4, 0, {0}}, OP_CONDENSE,
	 "Fragment([64] -> [2], replicate: 2, thread: 64, forward_thread: _i % 32 + _rep * 32, forward_index: [_i // 32])"},
	{{1, {64}, "_i % 32", 4, 0, {0}}, OP_CONDENSE,
	 "Fragment([64] -> [2], replicate: 1, thread: 32, forward_thread: _i % 32, forward_index: [_i // 32])"},
	{{2, {16, 16}, "_i % 8 * 4 + _j % 8 // 2", 1, 1, {"_j // 8 * 4 + _i // 8 * 2 + _j % 2"}}, OP_REP_T,
	 "Fragment([32, 32] -> [8], replicate: 1, thread: 128, forward_thread: _i % 8 * 4 + _j % 8 // 2 + _i // 16 * 64 + _j // 16 * 32, forward_index: [_j % 16 // 8 * 4 + _i % 16 // 8 * 2 + _j % 2])"},
	{{2, {16, 16}, "_i % 8 * 4 + _j % 8 // 2", 1, 1, {"_j // 8 * 4 + _i // 8 * 2 + _j % 2"}}, OP_REP_S,
	 "Fragment([32, 32] -> [32], replicate: 1, thread: 32, forward_thread: _i % 8 * 4 + _j % 8 // 2, forward_index: [_j % 16 // 8 * 4 + _i % 16 // 8 * 2 + _j % 2 + _i // 16 * 8 + _j // 16 * 16])"},
	{{2, {4, 64}, "_j + _rep * 64", 2, 0, {0}}, OP_PACK,
	 "Layout([4, 64, 2] -> [4, 128], transform: [_i, _j, _k] -> [_i, _j + _k * 64])"},
	/* bad input */
	{{2, {4, 4}, "_k", 1, 0, {0}}, OP_NEW, "error: unknown placeholder _k"},
	{{2, {4, 4}, "_i", 1, 1, {"_rep"}}, OP_NEW, "error: unknown placeholder _rep"},
	{{2, {4, 4}, "_i - 1", 1, 0, {0}}, OP_NEW, "error: the thread map takes the negative value -1"},
	{{2, {4, 4}, "_i", 0, 0, {0}}, OP_NEW, "error: replication 0 is not positive"},
	{{2, {4, 4}, "_i", 1, 2, {"_i", "_j"}}, OP_DEREPL, "error: dereplicate needs one slot dimension"},
	{{2, {4, 4}, "_i", 1, 2, {"_i", "_j"}}, OP_REP_S, "error: repeat on slots needs one slot dimension"},
};

START_TEST(ops_table)
{
	Arena A;
	Err err = {0};
	Fragment *F, *R = NULL;
	int64_t r2[] = {2, 2};
	const char *want = op_cases[_i].want;

	arena_init(&A);
	F = mk(&A, &op_cases[_i].s, &err);
	if (F) {
		switch (op_cases[_i].op) {
		case OP_NEW: R = F; break;
		case OP_INV: R = layout_inverse(&A, F, 0, &err); break;
		case OP_REPL2: R = frag_replicate(&A, F, 2, &err); break;
		case OP_DEREPL: R = frag_dereplicate(&A, F, &err); break;
		case OP_CONDENSE: R = frag_condense_rep(&A, F, &err); break;
		case OP_REP_T: R = frag_repeat(&A, F, r2, 1, 1, &err); break;
		case OP_REP_S: R = frag_repeat(&A, F, r2, 0, 0, &err); break;
		case OP_PACK: R = frag_pack(&A, F, &err); break;
		}
	}
	if (!strncmp(want, "error: ", 7)) {
		ck_assert_ptr_null(R);
		ck_assert_msg(strstr(err.msg, want + 7), "got: %s", err.msg);
	} else {
		ck_assert_msg(R != NULL, "%s", err.msg);
		ck_assert_str_eq(layout_str(&A, R), want);
	}
	arena_free(&A);
}
END_TEST

/* containment: every holder under a is a holder under b */
static const struct {
	FSpec a, b;
	int check_index, want;
	const char *why;
} cont_cases[] = {
	{{2, {4, 64}, "_j", 1, 1, {"_i"}}, {2, {4, 64}, "_j + _rep * 64", 2, 1, {"_i"}}, 0, 1, ""},
	{{2, {4, 64}, "_j + _rep * 64", 2, 1, {"_i"}}, {2, {4, 64}, "_j", 1, 1, {"_i"}}, 0, 0,
	 "thread 64 holds logical [0, 0] (rep 1) under the first layout but is not a holder under the second"},
	{{2, {4, 64}, "_j", 1, 1, {"_i"}}, {2, {4, 64}, "_rep", 128, 1, {"_i * 64 + _j"}}, 0, 1, ""},
	{{2, {4, 64}, "_j", 1, 1, {"_i"}}, {2, {4, 64}, "_rep", 128, 1, {"_i * 64 + _j"}}, 1, 0,
	 "sits in different slots"},
	{{2, {4, 64}, "_j", 1, 1, {"_i"}}, {2, {4, 64}, "_j // 2 + _i % 2 * 32", 1, 0, {0}}, 0, 0,
	 "thread 1 holds logical [0, 1] under the first layout but is not a holder under the second"},
	{{2, {4, 64}, "_j", 1, 1, {"_i"}}, {2, {8, 32}, "_j", 1, 1, {"_i"}}, 0, -1, "different input shapes"},
	/* row-replicated over a wrapped thread map (softmax's row max at W = 512) */
	{{2, {8, 512}, "(_i * 128 + _j // 4) % 256", 1, 1, {"(_i * 128 + _j // 4) // 256 * 4 + _j % 4"}},
	 {2, {8, 512}, "(_i * 128 + _rep) % 256", 128, 2, {"_i", "_j"}}, 0, 1, ""},
	{{2, {8, 512}, "(_i * 128 + _j // 4) % 256", 1, 1, {"(_i * 128 + _j // 4) // 256 * 4 + _j % 4"}},
	 {2, {8, 512}, "(_i * 128 + _rep * 2) % 256", 64, 2, {"_i", "_j"}}, 0, 0,
	 "thread 1 holds logical [0, 4] under the first layout but is not a holder under the second"},
	/* a broadcast whose replicas are permuted over the threads (softmax's row max at W = 5120) */
	{{2, {8, 64}, "_j % 32", 1, 1, {"_i * 2 + _j // 32"}}, {2, {8, 64}, "_rep * 5 % 32", 32, 1, {"_i"}},
	 0, 1, ""},
	{{2, {8, 64}, "_j % 32", 1, 1, {"_i * 2 + _j // 32"}}, {2, {8, 64}, "_rep * 2 % 32", 16, 1, {"_i"}},
	 0, 0, "thread 1 holds logical [0, 1] under the first layout but is not a holder under the second"},
};

/* layout_aff_contains_ (the thread maps' digit forms) against a brute-force walk: every
 * (x, r_s) of small has a replica of large on its thread */
static uint64_t crng = 88172645463325252ULL;

static unsigned
crnd(void)
{
	crng ^= crng << 13;
	crng ^= crng >> 7;
	crng ^= crng << 17;
	return (unsigned)(crng >> 11);
}

START_TEST(prop_aff_contains_agrees)
{
	static const int64_t ks[] = {1, 2, 4, 8, 16, 32};
	Arena A;
	Err err = {0};
	int n, proved = 0;

	arena_init(&A);
	for (n = 0; n < 1500; n++) {
		int64_t sh[2] = {1 + crnd() % 8, ks[crnd() % 6] * (1 + crnd() % 3)};
		int64_t K = ks[crnd() % 4], R = 2 + crnd() % 16, Rs = 1 + crnd() % 3, T = 64, x[17] = {0};
		char st[128], lt[128];
		Fragment *S, *L;
		int ok = 1;

		snprintf(lt, sizeof lt, "(_i * %lld + _j // %lld %% %lld + _rep * %lld) %% %lld",
			 (long long)ks[crnd() % 6], (long long)ks[crnd() % 6], (long long)ks[crnd() % 6],
			 (long long)K, (long long)(crnd() % 2 ? 256 : 1024));
		snprintf(st, sizeof st, "(_i * %lld + _j // %lld %% %lld + _rep * %lld) %% %lld",
			 (long long)ks[crnd() % 6], (long long)ks[crnd() % 6], (long long)ks[crnd() % 6],
			 (long long)ks[crnd() % 6], (long long)(crnd() % 2 ? 256 : 1024));
		S = frag_parse(&A, sh, 2, st, Rs, NULL, 0, &err);
		L = frag_parse(&A, sh, 2, lt, R, NULL, 0, &err);
		if (!S || !L)
			continue;       /* an implicit slot map that fails: nothing to compare */
		for (x[0] = 0; x[0] < sh[0] && ok; x[0]++)
			for (x[1] = 0; x[1] < sh[1] && ok; x[1]++)
				for (x[16] = 0; x[16] < Rs && ok; x[16]++) {
					int64_t t, u, y[17] = {0}, r;

					ck_assert_int_eq(iexpr_eval(S->thread, x, &t, NULL), 0);
					ok = 0;
					for (r = 0; r < R && !ok; r++) {
						memcpy(y, x, sizeof y);
						y[16] = r;
						ck_assert_int_eq(iexpr_eval(L->thread, y, &u, NULL), 0);
						ok = u == t;
					}
				}
		(void)T;
		if (layout_aff_contains_(S, L)) {
			ck_assert_msg(ok, "proved but not contained: %s in %s over [%lld, %lld]", st, lt,
				      (long long)sh[0], (long long)sh[1]);
			proved++;
		}
	}
	ck_assert_int_gt(proved, 30);
	arena_free(&A);
}
END_TEST

/* a large fragment whose thread map reads _i alone (an XOR of replicas, which the digit
 * forms do not read) is decided per (_i, rep), not per (thread, slot) of [8, 64] x 8 */
START_TEST(contains_projected_past_limit)
{
	Arena A;
	Err err = {0};
	FSpec s = {2, {8, 64}, "_j % 4 * 8 + _j // 4 % 2", 1, 1, {"_i * 8 + _j // 8"}};
	FSpec bad = {2, {8, 64}, "_j % 26", 1, 0, {0}};
	FSpec l = {2, {8, 64}, "(_i % 4 ^ _rep % 4) * 8 + _rep // 4", 8, 2, {"_i", "_j"}};
	Fragment *a, *b, *c;

	arena_init(&A);
	a = mk(&A, &s, &err);
	b = mk(&A, &l, &err);
	c = mk(&A, &bad, &err);
	ck_assert_msg(a && b && c, "%s", err.msg);
	ck_assert_int_eq(frag_contains(a, b, 0, &err), 1);
	ck_assert_int_eq(frag_contains(c, b, 0, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "thread 2 holds logical [0, 2] under the first layout"));
	ck_assert_int_eq(layout_set_enum_limit(1000), 0);
	ck_assert_int_eq(frag_contains(a, b, 0, &err), 1);
	ck_assert_int_eq(frag_contains(c, b, 0, &err), -1);     /* the walk that finds why */
	ck_assert_int_eq(layout_set_enum_limit(1 << 22), 0);
	arena_free(&A);
}
END_TEST

/* the permuted broadcast is decided on its replicas alone, past the enumeration limit */
START_TEST(contains_rep_only_past_limit)
{
	Arena A;
	Err err = {0};
	FSpec s = {2, {8, 64}, "_j % 32", 1, 1, {"_i * 2 + _j // 32"}};
	FSpec l = {2, {8, 64}, "_rep * 5 % 32", 32, 1, {"_i"}};
	FSpec l2 = {2, {8, 64}, "_rep * 5 % 32 + _i * 0 + _j % 1", 32, 1, {"_i"}};
	Fragment *a, *b;

	arena_init(&A);
	a = mk(&A, &s, &err);
	b = mk(&A, &l, &err);
	ck_assert_msg(a && b, "%s", err.msg);
	ck_assert_int_eq(layout_set_enum_limit(1000), 0);
	ck_assert_int_eq(frag_contains(a, b, 0, &err), 1);
	/* with a slot check it walks (x, rep) and meets the limit */
	ck_assert_int_eq(frag_contains(a, b, 1, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "enumeration limit"));
	ck_assert_int_eq(layout_set_enum_limit(1 << 22), 0);
	b = mk(&A, &l2, &err);
	ck_assert_msg(b != NULL, "%s", err.msg);
	ck_assert_int_eq(frag_contains(a, b, 0, &err), 1);
	arena_free(&A);
}
END_TEST

START_TEST(contains_table)
{
	Arena A;
	Err err = {0};
	Fragment *a, *b;
	int r;

	arena_init(&A);
	a = mk(&A, &cont_cases[_i].a, &err);
	ck_assert_msg(a != NULL, "%s", err.msg);
	b = mk(&A, &cont_cases[_i].b, &err);
	ck_assert_msg(b != NULL, "%s", err.msg);
	r = frag_contains(a, b, cont_cases[_i].check_index, &err);
	ck_assert_int_eq(r, cont_cases[_i].want);
	if (r != 1)
		ck_assert_msg(strstr(err.msg, cont_cases[_i].why), "got: %s", err.msg);
	arena_free(&A);
}
END_TEST

START_TEST(equality_and_ranges)
{
	Arena A;
	Err err = {0};
	FSpec s = {2, {16, 32}, "_i % 2 * 16 + _j // 2", 1, 0, {0}};
	FSpec t = {2, {16, 32}, "_j // 2 + _i % 2 * 16", 1, 1, {"_i // 2 * 2 + _j % 2"}};
	FSpec u = {2, {16, 32}, "_i % 2 * 16 + _j // 2", 1, 1, {"_i // 2 + _j % 2 * 8"}};
	Fragment *a, *b, *c, *ra, *rb;
	int ids[LAYOUT_MAXDIM + 1];

	arena_init(&A);
	a = mk(&A, &s, &err);
	b = mk(&A, &t, &err);
	c = mk(&A, &u, &err);
	ck_assert_int_eq(layout_equal(a, b, &err), 1);
	ck_assert_int_eq(layout_equal(a, c, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "logical [0, 1] maps to thread 0, slot [1] under the first layout and to thread 0, slot [8] under the second"));
	ra = frag_bind_range(&A, a, 0, 32, &err);
	rb = frag_bind_range(&A, b, 32, 32, &err);
	ck_assert_ptr_nonnull(ra);
	ck_assert_int_eq(layout_equal(ra, rb, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "thread ranges differ: [0, 32) and [32, 64)"));
	ck_assert_int_eq(layout_equal(ra, b, &err), 1);   /* one unbound: compare maps only */
	ck_assert_ptr_null(frag_bind_range(&A, a, 0, 16, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "cannot hold 32 threads"));
	ck_assert_str_eq(layout_str(&A, rb), "Fragment([16, 32] -> [16], replicate: 1, thread: 32, forward_thread: _j // 2 + _i % 2 * 16, forward_index: [_i // 2 * 2 + _j % 2], thread_range: I.Range(32, 32))");
	/* ForwardThread with index expressions and a replica */
	{
		IExpr *v[2], *th;

		v[0] = iexpr_parse(&A, "_k + 1", 3, 0, &err);
		v[1] = iexpr_parse(&A, "_i", 3, 0, &err);
		th = frag_forward_thread(&A, frag_replicate(&A, a, 2, &err), v, 2,
					 iexpr_parse(&A, "_j", 3, 0, &err), &err);
		ck_assert_ptr_nonnull(th);
		ck_assert_str_eq(iexpr_str(&A, th), "(_k + 1) % 2 * 16 + _i // 2 + _j * 32");
		ck_assert_ptr_null(frag_forward_thread(&A, a, v, 1, NULL, &err));
	}
	/* GetForwardVars: _rep first when replicated */
	ck_assert_int_eq(layout_forward_vars(a, ids), 2);
	ck_assert_int_eq(ids[0], 0);
	a = frag_replicate(&A, a, 2, &err);
	ck_assert_int_eq(layout_forward_vars(a, ids), 3);
	ck_assert_int_eq(ids[0], IEXPR_REP);
	ck_assert_int_eq(ids[1], 0);
	ck_assert_int_eq(ids[2], 1);
	/* fully replicated */
	{
		int64_t sh[] = {2};

		a = frag_fully_replicated(&A, sh, 1, 256, &err);
		ck_assert_str_eq(layout_str(&A, a), "Fragment([2] -> [2], replicate: 256, thread: 256, forward_thread: _rep, forward_index: [_i], thread_range: I.Range(0, 256))");
		ck_assert(frag_is_fully_replicated(a));
		ck_assert(!frag_is_fully_replicated(b));
		ck_assert_ptr_null(frag_fully_replicated(&A, sh, 1, 0, &err));
	}
	ck_assert_ptr_null(frag_replicate(&A, NULL, 2, &err));
	ck_assert_ptr_null(frag_pack(&A, NULL, &err));
	ck_assert_int_eq(frag_contains(NULL, b, 0, &err), -1);
	arena_free(&A);
}
END_TEST

/* broadcast fragments past the enumeration limit: the replica sits in its
 * own thread block, so the decisions run on the x domain */
START_TEST(broadcast_fragments)
{
	Arena A;
	Err err = {0};
	int64_t shape[2] = {256, 256}, x[3] = {3, 5, 77}, y[3];
	Fragment *F, *G, *M;
	Layout *I;

	arena_init(&A);
	F = frag_fully_replicated(&A, shape, 2, 256, &err);
	ck_assert_msg(F != NULL, "%s", err.msg);
	ck_assert_int_eq(layout_size(F) * F->rep, 1 << 24);     /* past the 2^22 limit */
	ck_assert_int_eq(F->nthreads, 256);
	ck_assert_int_eq(F->out_shape[0], 65536);
	ck_assert_int_eq(layout_check_injective(F, &err), 0);
	I = layout_inverse(&A, F, 0, &err);
	ck_assert_msg(I != NULL, "%s", err.msg);
	ck_assert_str_eq(layout_str(&A, I), "Layout([65536, 256] -> [256, 256, 256], transform: [_i, _j] -> [_i // 256, _i % 256, _j])");
	ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
	ck_assert_int_eq(layout_eval(I, y, x, &err), 0);
	ck_assert(x[0] == 3 && x[1] == 5 && x[2] == 77);
	/* an MMA accumulator replicated 4 times: thread = g + 256 * _rep */
	M = mma_block_fragment(&A, MMA_C, 256, 256, 16, 2, 4, &err);
	G = frag_replicate(&A, M, 64, &err);
	ck_assert_msg(G != NULL, "%s", err.msg);
	ck_assert_int_eq(G->nthreads, 256 * 64);
	ck_assert_int_eq(layout_check_injective(G, &err), 0);
	ck_assert_msg(layout_inverse(&A, G, 0, &err) != NULL, "%s", err.msg);
	ck_assert_int_eq(layout_equal(G, frag_replicate(&A, M, 64, &err), &err), 1);
	ck_assert_int_eq(frag_contains(M, G, 1, &err), 1);
	/* equal maps written differently, compared on the x domain */
	{
		int64_t s2[2] = {256, 256};
		Fragment *P = frag_parse(&A, s2, 2, "_i * 0 + _rep", 256, (const char *[]){"_j + _i * 256"}, 1, &err);
		Fragment *Q = frag_parse(&A, s2, 2, "_rep + (_i - _i)", 256, (const char *[]){"_i * 256 + _j"}, 1, &err);
		Fragment *Z = frag_parse(&A, s2, 2, "(_i + _rep) % 256", 256, (const char *[]){"_i * 256 + _j"}, 1, &err);

		ck_assert_ptr_nonnull(P);
		ck_assert_ptr_nonnull(Q);
		ck_assert_int_eq(layout_equal(P, Q, &err), 1);
		ck_assert_ptr_nonnull(Z);       /* not separable: its decisions hit the limit */
		ck_assert_int_eq(layout_check_injective(Z, &err), -1);
		ck_assert_ptr_nonnull(strstr(err.msg, "enumeration limit"));
		/* a broadcast fragment whose slots collide */
		P = frag_parse(&A, s2, 2, "_rep", 256, (const char *[]){"_j"}, 1, &err);
		ck_assert_int_eq(layout_check_injective(P, &err), -1);
		ck_assert_ptr_nonnull(strstr(err.msg, "logical [0, 0] and [1, 0] both map to thread 0, slot [0]"));
	}
	arena_free(&A);
}
END_TEST

/* reinterpreting the element width of MMA fragments */
START_TEST(fragment_reshape)
{
	Arena A;
	Err err = {0};
	Fragment *C, *R;
	int64_t s16x16[2] = {16, 16}, s16x8[2] = {16, 8}, s16x4[2] = {16, 4}, s8x8[2] = {8, 8};

	arena_init(&A);
	C = mma_sync_fragment(&A, MMA_C, 16, &err);
	/* the f32 accumulator seen as f16 pairs: twice the slots */
	R = layout_reshape(&A, C, s16x16, 2, 32, 16, &err);
	ck_assert_msg(R != NULL, "%s", err.msg);
	ck_assert_str_eq(layout_str(&A, R), "Fragment([16, 16] -> [8], replicate: 1, thread: 32, forward_thread: _i % 8 * 4 + _j // 4, forward_index: [_i // 8 * 4 + _j // 2 % 2 * 2 + _j % 2])");
	ck_assert_int_eq(layout_check_injective(R, &err), 0);
	/* c0, c1 are adjacent in one thread: the accumulator reads as [16, 4] of 64-bit pairs */
	R = layout_reshape(&A, C, s16x4, 2, 32, 64, &err);
	ck_assert_msg(R != NULL, "%s", err.msg);
	ck_assert_str_eq(layout_str(&A, R), "Fragment([16, 4] -> [2], replicate: 1, thread: 32, forward_thread: _i % 8 * 4 + _j, forward_index: [_i // 8])");
	/* f16 A pairs (k, k+1) share a thread and adjacent slots: 32-bit view */
	R = layout_reshape(&A, mma_sync_fragment(&A, MMA_A, 16, &err), s16x8, 2, 16, 32, &err);
	ck_assert_msg(R != NULL, "%s", err.msg);
	ck_assert_int_eq(R->out_shape[0], 4);
	ck_assert_int_eq(layout_check_injective(R, &err), 0);
	/* B (k, n): neighbours along n live on different threads */
	ck_assert_ptr_null(layout_reshape(&A, mma_sync_fragment(&A, MMA_B, 16, &err), s8x8, 2, 16, 32, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "interleaves storage below the new element width"));
	/* same width keeps the thread range */
	R = layout_reshape(&A, frag_bind_range(&A, C, 32, 32, &err), (int64_t[]){128}, 1, 32, 32, &err);
	ck_assert_msg(R != NULL, "%s", err.msg);
	ck_assert_int_eq(R->has_range, 1);
	ck_assert_int_eq(R->range_min, 32);
	ck_assert_str_eq(layout_str(&A, R), "Fragment([128] -> [4], replicate: 1, thread: 32, forward_thread: _i // 8 % 8 * 4 + _i % 8 // 2, forward_index: [_i // 64 * 2 + _i % 2], thread_range: I.Range(32, 32))");
	arena_free(&A);
}
END_TEST

static const struct {
	int n;
	int64_t shape[2];
	int ne;
	const char *es[2];
	const char *want;
	int64_t extent;
} compl_cases[] = {
	{2, {16, 32}, 1, {"_i % 2 * 16 + _j // 2"}, "_i // 2 * 2 + _j % 2", 16},
	{2, {4, 16}, 2, {"_i", "_j // 4"}, "_j % 4", 4},
	{2, {4, 16}, 0, {0}, "_i * 16 + _j", 64},
	{2, {4, 16}, 1, {"_i * 16 + _j"}, "0", 1},
	{1, {64}, 1, {"_i // 8 % 2"}, "_i // 16 * 8 + _i % 8", 32},
};

START_TEST(complement_table)
{
	Arena A;
	Err err = {0};
	IExpr *es[2], *c;
	int64_t ext = -1;
	int k;

	arena_init(&A);
	for (k = 0; k < compl_cases[_i].ne; k++)
		es[k] = iexpr_parse(&A, compl_cases[_i].es[k], compl_cases[_i].n, 0, &err);
	c = layout_complement(&A, compl_cases[_i].shape, compl_cases[_i].n, es, compl_cases[_i].ne, &ext,
			      &err);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_str_eq(iexpr_str(&A, c), compl_cases[_i].want);
	ck_assert_int_eq(ext, compl_cases[_i].extent);
	arena_free(&A);
}
END_TEST

START_TEST(compose_index_map)
{
	Arena A;
	Err err = {0};
	Fragment *C, *V;
	IExpr *idx[2];
	int64_t loop[2] = {8, 16};

	arena_init(&A);
	C = mma_sync_fragment(&A, MMA_C, 16, &err);
	/* a loop over [8, 16] that reads C transposed: C[j, i] */
	idx[0] = iexpr_parse(&A, "_j", 2, 0, &err);
	idx[1] = iexpr_parse(&A, "_i", 2, 0, &err);
	V = frag_compose(&A, C, loop, 2, idx, &err);
	ck_assert_msg(V != NULL, "%s", err.msg);
	ck_assert_str_eq(layout_str(&A, V), "Fragment([8, 16] -> [4], replicate: 1, thread: 32, forward_thread: _j % 8 * 4 + _i // 2, forward_index: [_j // 8 * 2 + _i % 2])");
	ck_assert_int_eq(layout_check_injective(V, &err), 0);
	idx[0] = iexpr_parse(&A, "_k", 3, 0, &err);
	ck_assert_ptr_null(frag_compose(&A, C, loop, 2, idx, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "beyond the 2 loop dimensions"));
	arena_free(&A);
}
END_TEST

/* ---- properties ---------------------------------------------------------- */

static uint64_t rng = 0x853c49e6748fea9bULL;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* a random injective fragment: the digits of (x, rep) are dealt to the
 * thread (mixed radix) and to the slot; rep digits always go to the thread */
static Fragment *
randfrag(Arena *A, Err *err)
{
	int64_t shape[2], R = 1 << (rnd() % 3), tw = 1, sw = 1;
	IExpr *thr = iexpr_const(A, 0), *slot = iexpr_const(A, 0);
	int k;

	for (k = 0; k < 2; k++) {
		int64_t lf = 1;
		int m = 1 + (int)(rnd() % 2), j;

		for (j = 0; j < m; j++) {
			int64_t e = (int64_t)2 << (rnd() % 3);
			IExpr *d = iexpr_modc(A, iexpr_divc(A, iexpr_var(A, k), lf), e);

			if (rnd() % 2) {
				thr = iexpr_add(A, thr, iexpr_mulc(A, d, tw));
				tw *= e;
			} else {
				slot = iexpr_add(A, slot, iexpr_mulc(A, d, sw));
				sw *= e;
			}
			lf *= e;
		}
		shape[k] = lf;
	}
	thr = iexpr_add(A, thr, iexpr_mulc(A, iexpr_var(A, IEXPR_REP), tw));
	return frag_new(A, shape, 2, thr, R, &slot, 1, err);
}

START_TEST(prop_fragment_inverse_and_ops)
{
	Arena A;
	Err err = {0};
	int n;

	arena_init(&A);
	for (n = 0; n < 120; n++) {
		Fragment *F = randfrag(&A, &err), *G;
		Layout *I;
		int64_t x[3], y[3], z[3], f, total;

		ck_assert_msg(F != NULL, "%s", err.msg);
		ck_assert_msg(layout_check_injective(F, &err) == 0, "%s", err.msg);
		I = layout_inverse(&A, F, 0, &err);
		ck_assert_msg(I != NULL, "%s: %s", layout_str(&A, F), err.msg);
		/* inverse after forward is the identity on (x, rep) */
		total = layout_size(F) * F->rep;
		for (f = 0; f < total; f++) {
			x[0] = f / F->rep / F->in_shape[1];
			x[1] = f / F->rep % F->in_shape[1];
			x[2] = f % F->rep;
			ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
			ck_assert_int_eq(layout_eval(I, y, z, &err), 0);
			ck_assert(z[0] == x[0] && z[1] == x[1] && z[2] == x[2]);
		}
		/* replicate keeps the old holders; the converse fails when R grows */
		G = frag_replicate(&A, F, 2, &err);
		ck_assert_ptr_nonnull(G);
		ck_assert_int_eq(frag_contains(F, G, 1, &err), 1);
		ck_assert_int_eq(frag_contains(G, F, 0, &err), 0);
		ck_assert_int_eq(layout_check_injective(G, &err), 0);
		/* condensing a replication the thread map ignores keeps the holders */
		{
			IExpr *sub[IEXPR_NVARS] = {0};

			sub[IEXPR_REP] = iexpr_modc(&A, iexpr_var(&A, IEXPR_REP), F->rep);
			G = frag_new(&A, F->in_shape, 2, iexpr_subst(&A, F->thread, sub, NULL),
				     F->rep * 2, F->fwd, 1, &err);
		}
		ck_assert_ptr_nonnull(G);
		G = frag_condense_rep(&A, G, &err);
		ck_assert_ptr_nonnull(G);
		ck_assert_int_eq(G->rep, F->rep);
		ck_assert_int_eq(frag_contains(G, F, 1, &err), 1);
		ck_assert_int_eq(frag_contains(F, G, 1, &err), 1);
		/* repeat on thread keeps injectivity and quadruples the threads */
		{
			int64_t r[2] = {2, 2};

			G = frag_repeat(&A, F, r, 1, rnd() % 2, &err);
			ck_assert_ptr_nonnull(G);
			ck_assert_int_eq(G->nthreads, 4 * F->nthreads);
			ck_assert_int_eq(layout_check_injective(G, &err), 0);
			ck_assert_ptr_nonnull(layout_inverse(&A, G, 0, &err));
		}
	}
	arena_free(&A);
}
END_TEST

Suite *
suite_fragment(void)
{
	Suite *s = suite_create("fragment");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, ops_table, 0, countof(op_cases));
	tcase_add_loop_test(tc, contains_table, 0, countof(cont_cases));
	tcase_add_test(tc, contains_rep_only_past_limit);
	tcase_add_test(tc, prop_aff_contains_agrees);
	tcase_add_test(tc, contains_projected_past_limit);
	tcase_add_test(tc, equality_and_ranges);
	tcase_add_test(tc, broadcast_fragments);
	tcase_add_test(tc, fragment_reshape);
	tcase_add_loop_test(tc, complement_table, 0, countof(compl_cases));
	tcase_add_test(tc, compose_index_map);
	tcase_add_test(tc, prop_fragment_inverse_and_ops);
	suite_add_tcase(s, tc);
	return s;
}
