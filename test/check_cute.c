/*
 * check_cute.c: table tests of the CuTe algebra: parsing and printing in C++
 * spelling, every operation of `tilec cute` on hand-checked cases (CuTe's
 * documentation examples among them) and its error messages, and robustness
 * of the parser against garbage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cute.h"
#include "tests.h"

/* ck_assert logs every call through a pipe: too slow inside loops */
#define REQUIRE(c, ...) do { if (!(c)) ck_abort_msg(__VA_ARGS__); } while (0)

/* op, arg1, arg2, expected output ("ERROR: message" for a failure) */
static const struct {
	const char *op, *a1, *a2, *want;
} op_cases[] = {
	{"size", "_8:_1", NULL, "_8"},
	{"size", "((_2,_2),_8):((_1,_4),_2)", NULL, "_32"},
	{"size", "(_3,(_2,_5))", NULL, "_30"},
	{"cosize", "((_2,_2),_8):((_1,_4),_2)", NULL, "_20"},
	{"cosize", "(_4,_8):(_0,_0)", NULL, "_1"},
	{"cosize", "(_4,_3):(_-1,_4)", NULL, "_12"},
	{"rank", "_8:_1", NULL, "_1"},
	{"rank", "(_8):(_1)", NULL, "_1"},
	{"rank", "((_2,_2),_8):((_1,_4),_2)", NULL, "_2"},
	{"depth", "_8:_1", NULL, "_0"},
	{"depth", "(_8):(_1)", NULL, "_1"},
	{"depth", "((_2,(_2,_3)),_8):((_1,(_2,_4)),_24)", NULL, "_3"},
	{"coalesce", "(_2,(_1,_6)):(_1,(_6,_2))", NULL, "_12:_1"},
	{"coalesce", "(_2,(_1,_6)):(_1,(_6,_2))", "(_1,_1)", "(_2,_6):(_1,_2)"},
	{"coalesce", "(_2,_3):(_0,_0)", NULL, "_6:_0"},
	{"coalesce", "_1:_5", NULL, "_1:_0"},
	{"coalesce", "(_1,_1):(_3,_5)", NULL, "_1:_0"},
	{"coalesce", "(_4,_8):(_1@0,_1@1)", NULL, "(_4,_8):(_1@0,_1@1)"},
	{"coalesce", "(_4,_2):(_1@0,_4@0)", NULL, "_8:_1@0"},
	{"coalesce", "((_2,_2),(_2,_2)):((_1,_2),(_8,_16))", "(_1,_1)", "(_4,_4):(_1,_8)"},
	{"coalesce", "((_2,_2),(_2,_2)):((_1,_2),(_8,_16))", "(_1)", "(_4,(_2,_2)):(_1,(_8,_16))"},
	{"coalesce", "((_2,_2),(_2,_2)):((_1,_2),(_8,_16))", "((_1,_1),_1)", "((_2,_2),_4):((_1,_2),_8)"},
	{"coalesce", "(_4,_4):(_4,_1)", NULL, "(_4,_4):(_4,_1)"},
	{"coalesce", "(_2,_2):(_1,_2)", "(_1,_1,_1)", "ERROR: cute: profile rank 3 exceeds layout rank 2"},
	{"filter", "(_2,_3,_4):(_0,_1,_3)", NULL, "_12:_1"},
	{"filter", "(_4,_8):(_0,_0)", NULL, "_1:_0"},
	{"filter", "((_2,_1),(_2,_3)):((_0,_7),(_1,_2))", "(_1,_1)", "(_1,_6):(_0,_1)"},
	{"composition", "(_6,_2):(_8,_2)", "(_4,_3):(_3,_1)", "((_2,_2),_3):((_24,_2),_8)"},
	{"composition", "_20:_2", "(_5,_4):(_4,_1)", "(_5,_4):(_8,_2)"},
	{"composition", "(_10,_2):(_16,_4)", "(_5,_4):(_1,_5)", "(_5,(_2,_2)):(_16,(_80,_4))"},
	{"composition", "(_12,(_4,_8)):(_59,(_13,_1))", "(_3:_4,_8:_2)", "(_3,(_2,_4)):(_236,(_26,_1))"},
	{"composition", "(_12,(_4,_8)):(_59,(_13,_1))", "(_3,_8)", "(_3,(_4,_2)):(_59,(_13,_1))"},
	{"composition", "(_12,(_4,_8)):(_59,(_13,_1))", "(_3:_4)", "(_3):(_236)"},
	{"composition", "(_12,(_4,_8)):(_59,(_13,_1))", "(_,_8:_2)", "(_12,(_2,_4)):(_59,(_26,_1))"},
	{"composition", "(_4,_8):(_1@0,_1@1)", "(_2:_2,_4:_1)", "(_2,_4):(_2@0,_1@1)"},
	{"composition", "(_4,_8):(_1,_4)", "(_2,_2):(_1@0,_1@1)", "(_2,_2):(_1,_4)"},
	{"composition", "(_4,_1):(_1,_0)", "_8:_1", "(_4,_2):(_1,_0)"},
	{"composition", "_1:_0", "_4:_1", "_4:_0"},
	{"composition", "(_4,_8):(_8,_1)", "_0:_1", "ERROR: cute: shape extent 0 is not positive"},
	{"composition", "(_4,_8):(_8,_1)", "_4:_0", "_4:_0"},
	{"composition", "(_4,_8):(_8,_1)", "_32:_1", "(_4,_8):(_8,_1)"},
	{"composition", "(_4,_8):(_8,_1)", "8", "(_4,_2):(_8,_1)"},
	{"composition", "(_6,_2):(_1,_7)", "_2:_4", "_2:_4"},
	{"composition", "(_7,_8):(_8,_1)", "_6:_3", "ERROR: cute: composition: stride divisibility condition violated (stride 3 against extent 7)"},
	{"composition", "(_4,_4):(_1,_5)", "_6:_1", "ERROR: cute: composition: shape divisibility condition violated (extent 6 against 4)"},
	{"composition", "(_4,_4):(_1,_5)", "(_3:_1,_2:_1,_2:_1)", "ERROR: cute: tiler rank 3 exceeds layout rank 2"},
	{"composition", "Sw<3,4,3>", "(_8,_64):(_64,_1)", "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)"},
	{"composition", "Sw<0,4,3>", "(_8,_64):(_64,_1)", "(_8,_64):(_64,_1)"},
	{"composition", "Sw<2,3,3> o _0 o (_8,_64):(_64,_1)", "(_8,_8)", "Sw<2,3,3> o _0 o (_8,_8):(_64,_1)"},
	{"complement", "_4:_1", "24", "_6:_4"},
	{"complement", "_6:_4", "24", "_4:_1"},
	{"complement", "(_4,_6):(_1,_4)", "24", "_1:_0"},
	{"complement", "_4:_2", "24", "(_2,_3):(_1,_8)"},
	{"complement", "(_2,_4):(_1,_6)", "24", "_3:_2"},
	{"complement", "(_2,_2):(_1,_6)", "24", "(_3,_2):(_2,_12)"},
	{"complement", "(_2,_3):(_1,_3)", NULL, "_1:_0"},
	{"complement", "(_2,_2):(_1,_1)", NULL, "ERROR: cute: non-injective layout detected in complement"},
	{"complement", "_4:_2", NULL, "_2:_1"},
	{"complement", "(_2,_2):(_0,_4)", NULL, "_4:_1"},
	{"complement", "_4:_0", "8", "_8:_1"},
	{"complement", "_1:_0", NULL, "_1:_0"},
	{"complement", "_4:_1", "(_8,_3)", "_6:_4"},
	{"complement", "_3:_1", "(_2,_4)", "_2:_3"},
	{"complement", "_4:_-1", NULL, "ERROR: cute: complement needs non-negative strides"},
	{"right_inverse", "(_4,_2):(_0,_1)", NULL, "_2:_4"},
	{"right_inverse", "(_2,_4):(_4,_1)", NULL, "(_4,_2):(_2,_1)"},
	{"right_inverse", "(_4,_8):(_8,_1)", NULL, "(_8,_4):(_4,_1)"},
	{"right_inverse", "(_4,_2):(_1,_8)", NULL, "_4:_1"},
	{"right_inverse", "_8:_2", NULL, "_1:_0"},
	{"right_inverse", "((_2,_2),(_2,_2)):((_1,_4),(_2,_8))", NULL, "(_2,_2,_2,_2):(_1,_4,_2,_8)"},
	{"right_inverse", "_1:_0", NULL, "_1:_0"},
	{"left_inverse", "_4:_2", NULL, "(_2,_4):(_0,_1)"},
	{"left_inverse", "(_2,_4):(_4,_1)", NULL, "(_4,_2):(_2,_1)"},
	{"left_inverse", "(_4,_2):(_1,_8)", NULL, "(_8,_2):(_1,_4)"},
	{"left_inverse", "(_4,_2):(_0,_1)", NULL, "_2:_4"},
	{"left_inverse", "(_2,_3):(_3,_2)", NULL, "ERROR: cute: left inverse divisibility condition violated (stride 3 after 2)"},
	{"left_inverse", "_4:_0", NULL, "_1:_0"},
	{"logical_divide", "_8:_1", "_3:_1", "(_3,_3):(_1,_3)"},
	{"logical_divide", "(_4,_2,_3):(_2,_1,_8)", "_4:_2", "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))"},
	{"logical_divide", "(_5,_4):(_1,_20)", "(_1)", "((_1,_5),_4):((_0,_1),_20)"},
	{"logical_divide", "(_9,(_4,_8)):(_59,(_13,_1))", "(_3:_3,(_2,_4):(_1,_8))", "((_3,_3),((_2,_4),(_2,_2))):((_177,_59),((_13,_2),(_26,_1)))"},
	{"logical_divide", "(_8,_6):(_1@0,_1@1)", "(_4,_3)", "((_4,_2),(_3,_2)):((_1@0,_4@0),(_1@1,_3@1))"},
	{"logical_divide", "_16:_1", "4", "(_4,_4):(_1,_4)"},
	{"logical_divide", "(_4,_4):(_1,_5)", "_6:_1", "ERROR: cute: composition: shape divisibility condition violated (extent 6 against 4)"},
	{"logical_divide", "(_8,(_4,_6)):(_1,(_8,_32))", "(_4,_)", "((_4,_2),(_4,_6)):((_1,_4),(_8,_32))"},
	{"logical_product", "(_2,_3):(_1,_2)", "(_,_2)", "(_2,(_3,_2)):(_1,(_2,_1))"},
	{"zipped_divide", "(_8,(_4,_6,_2)):(_1,(_8,_32,_0))", "(_,_2)", "ERROR: cute: zip2_by needs a rank-2 mode"},
	{"zipped_divide", "(_9,(_4,_8)):(_59,(_13,_1))", "(_3:_3,(_2,_4):(_1,_8))", "((_3,(_2,_4)),(_3,(_2,_2))):((_177,(_13,_2)),(_59,(_26,_1)))"},
	{"zipped_divide", "_16:_1", "_4:_1", "(_4,_4):(_1,_4)"},
	{"zipped_divide", "(_8,_8):(_1,_8)", "(_2,_4)", "((_2,_4),(_4,_2)):((_1,_8),(_2,_32))"},
	{"tiled_divide", "(_9,(_4,_8)):(_59,(_13,_1))", "(_3:_3,(_2,_4):(_1,_8))", "((_3,(_2,_4)),_3,(_2,_2)):((_177,(_13,_2)),_59,(_26,_1))"},
	{"tiled_divide", "(_4):(_1)", "(_4:_1)", "((_4),(_1)):((_1),(_0))"},
	{"tiled_divide", "(_8,_8):(_1,_8)", "(_2,_4)", "((_2,_4),_4,_2):((_1,_8),_2,_32)"},
	{"flat_divide", "(_9,(_4,_8)):(_59,(_13,_1))", "(_3:_3,(_2,_4):(_1,_8))", "(_3,(_2,_4),_3,(_2,_2)):(_177,(_13,_2),_59,(_26,_1))"},
	{"flat_divide", "(_6,_6):(_6,_1)", "(_6)", "((_6),_1,_6):((_6),_0,_1)"},
	{"flat_divide", "(_8,_8):(_1,_8)", "(_2,_4)", "(_2,_4,_4,_2):(_1,_8,_2,_32)"},
	{"logical_product", "_4:_1", "3", "(_4,_3):(_1,_4)"},
	{"logical_product", "(_2,_2):(_4,_1)", "_6:_1", "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))"},
	{"logical_product", "(_2,_2):(_4,_1)", "(_4,_2):(_2,_1)", "((_2,_2),(_4,_2)):((_4,_1),(_8,_2))"},
	{"logical_product", "(_2,_5):(_5,_1)", "(_3,_4):(_1,_3)", "((_2,_5),(_3,_4)):((_5,_1),(_10,_30))"},
	{"logical_product", "(_2,_5):(_5,_1)", "(_3,_4)", "((_2,_3),(_5,_4)):((_5,_1),(_1,_5))"},
	{"zipped_product", "(_2,_5):(_5,_1)", "(_3,_4)", "((_2,_5),(_3,_4)):((_5,_1),(_1,_5))"},
	{"tiled_product", "(_2,_5):(_5,_1)", "(_3,_4)", "((_2,_5),_3,_4):((_5,_1),_1,_5)"},
	{"flat_product", "(_2,_5):(_5,_1)", "(_3,_4)", "(_2,_5,_3,_4):(_5,_1,_1,_5)"},
	{"blocked_product", "_4:_1", "_3:_1", "((_4,_3)):((_1,_4))"},
	{"blocked_product", "(_2,_5):(_5,_1)", "(_3,_4):(_1,_3)", "((_2,_3),(_5,_4)):((_5,_10),(_1,_30))"},
	{"blocked_product", "(_2,_2):(_1,_2)", "_3:_1", "((_2,_3),(_2,_1)):((_1,_4),(_2,_0))"},
	{"blocked_product", "(_4):(_1)", "_4:_0", "ERROR: cute: blocked/raked product of a rank-1 tuple layout and a scalar layout"},
	{"blocked_product", "(_4):(_1)", "(_3):(_1)", "((_4,_3)):((_1,_4))"},
	{"raked_product", "(_2,_5):(_5,_1)", "(_3,_4):(_1,_3)", "((_3,_2),(_4,_5)):((_10,_5),(_30,_1))"},
	{"raked_product", "_4:_1", "_3:_1", "((_3,_4)):((_4,_1))"},
	{"raked_product", "(_2,_2):(_1,_2)", "(_3,_4):(_4,_1)", "((_3,_2),(_4,_2)):((_16,_1),(_4,_2))"},
	{"with_shape", "_32:_1", "(_4,_8)", "(_4,_8):(_1,_4)"},
	{"with_shape", "(_4,_8):(_8,_1)", "(_2,(_4,_4))", "(_2,((_2,_2),_4)):(_8,((_16,_1),_2))"},
	{"restrict", "(_4,_8,_2):(_1,_4,_32)", "(_2,_0)", "(_2,_4):(_32,_1)"},
	{"restrict", "(_4,_8,_2):(_1,_4,_32)", "1", "_8:_4"},
	{"restrict", "(_4,_8,_2):(_1,_4,_32)", "3", "ERROR: cute: restrict: mode 3 out of rank 3"},
	{"eval", "(_4,_8):(_1@0,_1@1)", "13", "(1,3)"},
	{"eval", "(_4,_8):(_1@0,_1@1)", "0", "(0,0)"},
	{"eval", "(_4,(_2,_3)):(_1@0,(_1@1@1,_1@0@1))", "23", "(3,(2,1))"},
	{"eval", "(_4,_8):(_1@0,_1@1)", "(3,7)", "(3,7)"},
	{"eval", "((_2,_2),_8):((_1,_4),_2)", "5", "3"},
	{"eval", "((_2,_2),_8):((_1,_4),_2)", "((1,1),3)", "11"},
	{"eval", "((_2,_2),_8):((_1,_4),_2)", "(3,3)", "11"},
	{"eval", "_8:_2", "100", "200"},
	{"eval", "(_4,_8):(_8,_1)", "-1", "ERROR: cute: negative index -1"},
	{"eval", "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)", "130", "128"},
	{"eval", "Sw<3,4,3> o _16 o (_8,_64):(_64,_1)", "130", "176"},
	{"swizzle", "Sw<3,4,3>", "130", "146"},
	{"swizzle", "Sw<2,3,-3>", "18", "146"},
	{"swizzle", "Sw<0,4,3>", "130", "130"},
	{"swizzle", "Sw<3,4,3>", "-1", "ERROR: cute swizzle: negative offset"},
	{"bogus", "_8:_1", NULL, "ERROR: cute: unknown operation 'bogus'"},
	{"size", "(_2,_3", NULL, "ERROR: cute: parse error at end of input: expected ',' or ')'"},
	{"size", "(_2,_3):(_1)", NULL, "ERROR: cute: parse error at column 12: expected ',' (stride congruent with the shape) near ')'"},
	{"size", "_0:_1", NULL, "ERROR: cute: shape extent 0 is not positive"},
	{"size", "", NULL, "ERROR: cute: parse error at end of input: expected an integer"},
	{"coalesce", "_8:_1", "_8:_1", "ERROR: cute coalesce: the profile must be an integer tuple"},
	{"composition", "_8:_1", NULL, "ERROR: cute composition: expected 2 arguments, got 1"},
	{"composition", "(_8,_8):(_1,_8)", "(_2,_2,_2)", "ERROR: cute: tiler rank 3 exceeds layout rank 2"},
	{"logical_divide", "(_8,_8):(_1,_8)", "(_2,_2,_2)", "ERROR: cute: tiler rank 3 exceeds layout rank 2"},
	{"composition", "_4611686018427387904:_2", "_4:_4611686018427387904", "ERROR: cute: integer overflow in a stride"},
	{"size", "(_4294967296,_4294967296,_4)", NULL, "ERROR: cute: integer overflow in size"},
};

static void
run_case(const char *op, const char *a1, const char *a2, Buf *out)
{
	Arena a;
	Err err = {0};
	const char *args[2] = {a1, a2};

	arena_init(&a);
	buf_reset(out);
	if (cute_run_op(&a, op, a2 ? 2 : 1, args, out, &err) < 0) {
		ck_assert_int_eq(err.set, 1);
		buf_reset(out);
		buf_printf(out, "ERROR: %s", err.msg);
	} else {
		ck_assert_int_eq(err.set, 0);
	}
	arena_free(&a);
}

START_TEST(ops_table)
{
	Buf out;

	buf_init(&out);
	run_case(op_cases[_i].op, op_cases[_i].a1, op_cases[_i].a2, &out);
	ck_assert_msg(!strcmp(buf_str(&out), op_cases[_i].want), "%s %s %s: got %s, want %s",
		      op_cases[_i].op, op_cases[_i].a1, op_cases[_i].a2 ? op_cases[_i].a2 : "",
		      buf_str(&out), op_cases[_i].want);
	buf_free(&out);
}
END_TEST

/* text, its print (NULL: must fail, with want an expected message fragment) */
static const struct {
	const char *in, *want, *frag;
} parse_cases[] = {
	{"_8:_1", "_8:_1", NULL},
	{"8:1", "_8:_1", NULL},
	{"((_2,_2),_8):((_1,_4),_2)", "((_2,_2),_8):((_1,_4),_2)", NULL},
	{"((2,2),8):((1,4),2)", "((_2,_2),_8):((_1,_4),_2)", NULL},
	{"(4, 2):(1, 4)", "(_4,_2):(_1,_4)", NULL},
	{"(_8):(_1)", "(_8):(_1)", NULL},
	{"(_8,):(_1)", NULL, "an integer"},
	{"_8", "_8", NULL},
	{"(_2,(_3,_4))", "(_2,(_3,_4))", NULL},
	{"(_3)", "(_3)", NULL},
	{"_3:_-1", "_3:_-1", NULL},
	{"(_4,_3):(_-1,-4)", "(_4,_3):(_-1,_-4)", NULL},
	{"(_3:_4,_8:_2)", "(_3:_4,_8:_2)", NULL},
	{"(_3,_8:_2)", "(_3,_8:_2)", NULL},
	{"(_,(_2:_1,_4))", "(_,(_2:_1,_4))", NULL},
	{"Sw<3,4,3>", "Sw<3,4,3>", NULL},
	{"Sw<3,4,3> o _0 o (_8,_64):(_64,_1)", "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)", NULL},
	{"Swizzle<3,4,3> o (_8,_64):(_64,_1)", "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)", NULL},
	{"Sw<2,3,-3> o _16 o _8:_1", "Sw<2,3,-3> o _16 o _8:_1", NULL},
	{"(_4,_8):(_1@0,_1@1)", "(_4,_8):(_1@0,_1@1)", NULL},
	{"_4:_1@0@1", "_4:_1@0@1", NULL},
	{"(_2,_4):(_3@1,_0)", "(_2,_4):(_3@1,_0)", NULL},
	{"_4:_0@1", "_4:_0", NULL},
	{"", NULL, "expected an integer"},
	{"_", NULL, "only allowed inside a tiler"},
	{"(", NULL, "end of input"},
	{"()", NULL, "a tuple element"},
	{"(_2,_3):(_1)", NULL, "congruent"},
	{"_2:(_1,_2)", NULL, "congruent"},
	{"(_2,_3):(_1,_2,_3)", NULL, "congruent"},
	{"_0:_1", NULL, "not positive"},
	{"_-2:_1", NULL, "not positive"},
	{"_2:_1 junk", NULL, "end of input"},
	{"_99999999999999999999:_1", NULL, "overflow"},
	{"(_2:_1):(_1)", NULL, "a shape of integers"},
	{"_2:_", NULL, "integer stride"},
	{"_2@1", NULL, "basis element is a stride"},
	{"Sw<1,2,0>", NULL, "invalid swizzle"},
	{"Sw<1,2>", NULL, "','"},
	{"Sw<3,4,3> o _8", NULL, "needs a layout"},
	{"Sw<3,4,3> o (_2,_2) o _8:_1", NULL, "offset must be an integer"},
	{"_4:_1@300", NULL, "basis index"},
	{"_4:_1@0@0@0@0@0@0@0@0@0", NULL, "basis path longer"},
};

START_TEST(parse_table)
{
	Arena a;
	Err err = {0};
	CuteObj *o = NULL;
	Buf b;
	int rc;

	arena_init(&a);
	buf_init(&b);
	rc = cute_parse(&a, parse_cases[_i].in, &o, &err);
	if (parse_cases[_i].want) {
		ck_assert_msg(rc == 0, "%s: %s", parse_cases[_i].in, err.msg);
		cute_print(&b, o);
		ck_assert_str_eq(buf_str(&b), parse_cases[_i].want);
		/* printing then parsing gives the same object */
		o = NULL;
		ck_assert_int_eq(cute_parse(&a, parse_cases[_i].want, &o, &err), 0);
		buf_reset(&b);
		cute_print(&b, o);
		ck_assert_str_eq(buf_str(&b), parse_cases[_i].want);
	} else {
		ck_assert_msg(rc < 0, "%s: parsed", parse_cases[_i].in);
		ck_assert_msg(strstr(err.msg, parse_cases[_i].frag), "%s: message '%s' lacks '%s'",
			      parse_cases[_i].in, err.msg, parse_cases[_i].frag);
	}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* deep nesting is an error, not a stack overflow */
START_TEST(parse_depth_limit)
{
	Arena a;
	Err err = {0};
	CuteObj *o;
	char *s = malloc(200001);
	int i;

	arena_init(&a);
	for (i = 0; i < 100000; i++)
		s[i] = '(';
	s[i] = 0;
	ck_assert_int_eq(cute_parse(&a, s, &o, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "nesting deeper than 64"));
	/* 60 levels are fine */
	for (i = 0; i < 60; i++)
		s[i] = '(';
	s[i++] = '_';
	s[i++] = '2';
	memset(s + i, ')', 60);
	s[i + 60] = 0;
	ck_assert_int_eq(cute_parse(&a, s, &o, &err), 0);
	ck_assert_int_eq(cute_tup_depth(o->t), 60);
	free(s);
	arena_free(&a);
}
END_TEST

/* random garbage from the grammar's alphabet: errors or objects, never a crash */
START_TEST(parse_garbage)
{
	static const char alpha[] = "()_:,@-0123456789 o<>Swizle1";
	static const char *ops[] = {"size", "coalesce", "composition", "complement", "right_inverse",
				    "left_inverse", "logical_divide", "tiled_divide", "logical_product",
				    "blocked_product", "raked_product", "eval", "filter", "cosize"};
	unsigned seed = 12345;
	char s[40], t[40];
	int it, i, n, ok = 0;
	Buf b;

	buf_init(&b);
	for (it = 0; it < 20000; it++) {
		Arena a;
		Err err = {0};
		CuteObj *o;
		const char *args[2] = {s, t};

		arena_init(&a);
		seed = seed * 1103515245u + 12345u;
		n = (int)(seed >> 16) % 30;
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = alpha[(seed >> 16) % (sizeof alpha - 1)];
		}
		s[n] = 0;
		memcpy(t, s, sizeof t);
		if (cute_parse(&a, s, &o, &err) == 0) {
			ok++;
			buf_reset(&b);
			cute_print(&b, o);
		} else {
			REQUIRE(err.set == 1, "no message for %s", s);
		}
		/* and every operation on it */
		seed = seed * 1103515245u + 12345u;
		buf_reset(&b);
		err_clear(&err);
		cute_run_op(&a, ops[(seed >> 16) % countof(ops)], 1 + (int)((seed >> 20) & 1), args, &b,
			    &err);
		arena_free(&a);
	}
	ck_assert_int_gt(ok, 10);
	buf_free(&b);
}
END_TEST

/* API odds and ends: constructors, evaluation, NULL handling */
START_TEST(api_basics)
{
	Arena a;
	Err err = {0};
	CuteLayout l, r;
	CuteTup *t, *v;
	int64_t x;

	arena_init(&a);
	ck_assert_int_eq(cute_parse_tup(&a, "(_2,_1,_3)", &t, &err), 0);
	ck_assert_int_eq(cute_make_left(&a, t, &l, &err), 0);
	ck_assert_str_eq(cute_str(&a, l), "(_2,_1,_3):(_1,_0,_2)");
	ck_assert_int_eq(cute_parse_tup(&a, "(_2,(_2,_3))", &t, &err), 0);
	ck_assert_int_eq(cute_make_right(&a, t, &l, &err), 0);
	ck_assert_str_eq(cute_str(&a, l), "(_2,(_2,_3)):(_6,(_3,_1))");
	ck_assert_int_eq(cute_make_left(&a, cute_int(&a, 1), &l, &err), 0);
	ck_assert_str_eq(cute_str(&a, l), "_1:_0");
	ck_assert_int_eq(cute_parse_tup(&a, "(_4,_8)", &t, &err), 0);
	ck_assert_int_eq(cute_make_identity(&a, t, &l, &err), 0);
	ck_assert_str_eq(cute_str(&a, l), "(_4,_8):(_1@0,_1@1)");
	ck_assert_int_eq(cute_eval_tup(&a, l, 13, &v, &err), 0);
	ck_assert_int_eq(v->n, 2);
	ck_assert_int_eq(v->e[0]->x.v, 1);
	ck_assert_int_eq(v->e[1]->x.v, 3);
	ck_assert_int_eq(cute_eval(l, 13, &x, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "basis strides"));
	/* the last mode takes the overflow */
	ck_assert_int_eq(cute_parse_layout(&a, "(_4,_2):(_1,_10)", &l, &err), 0);
	ck_assert_int_eq(cute_eval(l, 13, &x, &err), 0);
	ck_assert_int_eq(x, 1 + 3 * 10);
	ck_assert_int_eq(cute_size(l, &x, &err), 0);
	ck_assert_int_eq(x, 8);
	ck_assert_int_eq(cute_rank(l), 2);
	ck_assert_int_eq(cute_depth(l), 1);
	ck_assert_str_eq(cute_str(&a, cute_mode(l, 1)), "_2:_10");
	/* NULL and broken layouts are errors */
	l.shape = NULL;
	ck_assert_int_eq(cute_size(l, &x, &err), -1);
	ck_assert_int_eq(cute_coalesce(&a, l, NULL, &r, &err), -1);
	ck_assert_int_eq(cute_compose(&a, l, l, &r, &err), -1);
	ck_assert_int_eq(cute_parse(&a, NULL, NULL, &err), -1);
	/* a valid A with a NULL B (r was left unset by the failed calls above) */
	ck_assert_int_eq(cute_parse_layout(&a, "(_4,_2):(_1,_10)", &r, &err), 0);
	ck_assert_int_eq(cute_compose_obj(&a, r, NULL, &r, &err), -1);
	/* composition with a layout of basis strides selects A's sub-modes */
	ck_assert_int_eq(cute_parse_layout(&a, "(_4,_8):(_1,_4)", &l, &err), 0);
	ck_assert_int_eq(cute_parse_layout(&a, "(_2,_2):(_1@0,_2@1)", &r, &err), 0);
	ck_assert_int_eq(cute_compose(&a, l, r, &r, &err), 0);
	ck_assert_str_eq(cute_str(&a, r), "(_2,_2):(_1,_8)");
	arena_free(&a);
}
END_TEST

/* Swizzle: an involution, the identity for B = 0, and the documented masks */
START_TEST(swizzle_props)
{
	static const CuteSwizzle sws[] = {{3, 4, 3}, {2, 3, 3}, {1, 0, 1}, {2, 3, -3}, {0, 4, 3},
					  {3, 0, 4}, {2, 4, -2}};
	size_t k;
	int64_t x;
	Err err = {0};

	for (k = 0; k < countof(sws); k++) {
		CuteSwizzle sw = sws[k];
		int as = sw.s < 0 ? -sw.s : sw.s;

		ck_assert_int_eq(cute_swizzle_check(sw, &err), 0);
		for (x = 0; x < ((int64_t)1 << (sw.b + sw.m + as + 1)); x++) {
			int64_t y = cute_swizzle_apply(sw, x);

			REQUIRE(cute_swizzle_apply(sw, y) == x, "not an involution");
			REQUIRE(sw.b != 0 || y == x, "B = 0 is not the identity");
			/* only the Z bits change */
			REQUIRE(((x ^ y) & ~((((int64_t)1 << sw.b) - 1)
					     << (sw.m - (sw.s < 0 ? sw.s : 0)))) == 0, "bits outside Z");
		}
	}
	ck_assert_int_eq(cute_swizzle_check((CuteSwizzle){3, 4, 2}, &err), -1);
	ck_assert_int_eq(cute_swizzle_check((CuteSwizzle){-1, 4, 2}, &err), -1);
}
END_TEST

/* run a shell command, capture stdout+stderr and the exit status */
static int
sh(const char *cmd, char *out, size_t cap)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0, r;
	int st;

	ck_assert_ptr_nonnull(p);
	while (n + 1 < cap && (r = fread(out + n, 1, cap - 1 - n, p)) > 0)
		n += r;
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(cli)
{
	const char *t = getenv("TILEC") ? getenv("TILEC") : "build/tilec";
	char cmd[1024], out[4096];

	snprintf(cmd, sizeof cmd, "%s cute composition '(_6,_2):(_8,_2)' '(_4,_3):(_3,_1)' 2>&1", t);
	ck_assert_int_eq(sh(cmd, out, sizeof out), 0);
	ck_assert_str_eq(out, "((_2,_2),_3):((_24,_2),_8)\n");
	snprintf(cmd, sizeof cmd, "%s cute composition '(_7,_8):(_8,_1)' _6:_3 2>/dev/null", t);
	ck_assert_int_eq(sh(cmd, out, sizeof out), 1);
	ck_assert_str_eq(out, "");
	snprintf(cmd, sizeof cmd, "%s cute composition '(_7,_8):(_8,_1)' _6:_3 2>&1 >/dev/null", t);
	ck_assert_int_eq(sh(cmd, out, sizeof out), 1);
	ck_assert_ptr_nonnull(strstr(out, "stride divisibility"));
	snprintf(cmd, sizeof cmd, "%s cute 2>&1", t);
	ck_assert_int_eq(sh(cmd, out, sizeof out), 2);
	snprintf(cmd, sizeof cmd,
		 "printf 'size\\t(_4,_8):(_1,_4)\\nbogus\\nswizzle\\tSw<3,4,3>\\t130\\n"
		 "complement\\t_4:_2\\t24\\neval\\t(_4,_8):(_1@0,_1@1)\\t13\\n"
		 "coalesce\\t(_2,_2):(_1,_2)\\t(_1,_1,_1)\\n' | %s cute --batch", t);
	ck_assert_int_eq(sh(cmd, out, sizeof out), 0);
	ck_assert_str_eq(out, "_32\n"
			      "ERROR: cute: expected op<TAB>arg1[<TAB>arg2]\n"
			      "146\n"
			      "(_2,_3):(_1,_8)\n"
			      "(1,3)\n"
			      "ERROR: cute: profile rank 3 exceeds layout rank 2\n");
}
END_TEST

Suite *
suite_cute(void)
{
	Suite *s = suite_create("cute");
	TCase *tc = tcase_create("tables");

	tcase_add_loop_test(tc, ops_table, 0, countof(op_cases));
	tcase_add_loop_test(tc, parse_table, 0, countof(parse_cases));
	tcase_add_test(tc, parse_depth_limit);
	tcase_add_test(tc, parse_garbage);
	tcase_add_test(tc, api_basics);
	tcase_add_test(tc, swizzle_props);
	tcase_add_test(tc, cli);
	suite_add_tcase(s, tc);
	return s;
}
