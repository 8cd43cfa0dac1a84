/* check_passes.c: the pass manager: the default list, a host hook that
 * inserts, removes and replaces passes, --print-before/--print-after dumps,
 * errors, the sample plugin (built here into build/ and loaded), and the
 * dump_layout / assert_same_layout statements end to end on layouts that a
 * test pass assigns before layout-diagnostics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "passes.h"
#include "tests.h"

#define PROG "kernel k(A: f32[N]) grid(1) threads(128) {\n" \
	"local x: f32[64]; local y: f32[64]; shared s: f32[64]; local z: f32[64];\n"

typedef struct Hook {
	const char *op;      /* "names", "insert", "remove", "replace", "layouts", "fail" */
	char names[256];
	int calls;
} Hook;

static int
ext_note(tilec_ir *ir, const tilec_ir_api *api, void *arg, char *msg, size_t msgsz)
{
	char line[128];

	(void)msg;
	(void)msgsz;
	snprintf(line, sizeof line, "%s: %d kernel(s), first %s with %d statements",
		 (const char *)arg, api->kernel_count(ir), api->kernel_name(ir, 0),
		 api->stmt_count(ir, 0));
	api->note(ir, line);
	return 0;
}

static int
ext_fail(tilec_ir *ir, const tilec_ir_api *api, void *arg, char *msg, size_t msgsz)
{
	(void)ir;
	(void)api;
	(void)arg;
	snprintf(msg, msgsz, "refused");
	return 1;
}

/* a stand-in for layout inference: x is TLX's T1 fragment, y is spt 2, s is
 * linear, z is 32 threads of 2 registers */
static int
test_layouts(PassCtx *c)
{
	IrKernel *k = c->prog->kernels;
	int64_t n = 64;
	const char *id[1] = {"_i"}, *slot[1] = {"_i % 2"};
	Err e = {0};
	int i;

	for (i = 0; i < k->nbuf; i++) {
		IrBuffer *B = &k->bufs[i];

		if (!strcmp(B->name, "x"))
			B->layout = frag_parse(c->a, &n, 1, "_i + 64 * _rep", 2, NULL, 0, &e);
		else if (!strcmp(B->name, "y"))
			B->layout = frag_parse(c->a, &n, 1, "_i // 2 + 32 * _rep", 4, slot, 1, &e);
		else if (!strcmp(B->name, "z"))
			B->layout = frag_parse(c->a, &n, 1, "_i // 2", 1, slot, 1, &e);
		else if (!strcmp(B->name, "s"))
			B->layout = layout_parse(c->a, &n, 1, id, 1, &e);
	}
	return 0;
}

static int
hook(tilec_pass_list *l, void *user)
{
	Hook *h = user;
	int i;

	h->calls++;
	h->names[0] = 0;
	for (i = 0; i < tilec_pass_count(l); i++) {
		strcat(h->names, tilec_pass_name(l, i));
		strcat(h->names, " ");
	}
	if (!strcmp(h->op, "insert")) {
		ck_assert_int_eq(tilec_pass_insert(l, 1, "my-pass", ext_note, "mine"), 0);
		ck_assert_int_eq(tilec_pass_insert(l, 1, "my-pass", ext_note, NULL), -1);
		ck_assert_int_eq(tilec_pass_insert(l, 0, "Bad Name", ext_note, NULL), -1);
		ck_assert_int_eq(tilec_pass_insert(l, 99, "far", ext_note, NULL), -1);
		ck_assert_int_eq(tilec_pass_insert(l, 0, "nofn", NULL, NULL), -1);
	} else if (!strcmp(h->op, "remove")) {
		ck_assert_int_eq(tilec_pass_remove(l, "layout-diagnostics"), 0);
		ck_assert_int_eq(tilec_pass_remove(l, "layout-diagnostics"), -1);
	} else if (!strcmp(h->op, "replace")) {
		ck_assert_int_eq(tilec_pass_replace(l, "verify-ir", ext_fail, NULL), 0);
		ck_assert_int_eq(tilec_pass_replace(l, "nope", ext_fail, NULL), -1);
	} else if (!strcmp(h->op, "layouts")) {
		i = tilec_pass_find(l, "layout-diagnostics");
		ck_assert_int_ge(i, 0);
		ck_assert_int_eq(passes_insert_builtin(l, i, "test-layouts", test_layouts), 0);
	} else if (!strcmp(h->op, "fail")) {
		return 1;
	}
	return 0;
}

static const struct {
	const char *body;      /* statements after PROG's declarations */
	const char *op;        /* the hook's action */
	const char *before, *after;
	int print_passes, to_output;
	tilec_status st;
	const char *in_out, *in_log, *in_diag;  /* substrings expected (NULL: no check) */
} cases[] = {
	{"}", "names", NULL, NULL, 1, 0, TILEC_OK, "verify-ir\nstage-epilogues\nsplit-conversions\ninfer-layouts\nconvert-layouts\nlayout-diagnostics\nplan-gemms\nplan-shared-memory\nplan-partitions\nplan-reduces\nplan-vectors\nplan-copies\nplan-pipelines\nlower-kernels\nverify-lowered\nemit-cuda\nemit-header\n", NULL, NULL},
	{"}", "insert", NULL, NULL, 1, 0, TILEC_OK, "verify-ir\nmy-pass\nstage-epilogues\nsplit-conversions\ninfer-layouts\nconvert-layouts\nlayout-diagnostics\nplan-gemms\nplan-shared-memory\nplan-partitions\nplan-reduces\nplan-vectors\nplan-copies\nplan-pipelines\nlower-kernels\nverify-lowered\nemit-cuda\nemit-header\n", NULL,
	 NULL},
	{"}", "insert", NULL, NULL, 0, 0, TILEC_OK, "kernel k", NULL,
	 "note: mine: 1 kernel(s), first k with 0 statements"},
	{"}", "remove", NULL, NULL, 1, 0, TILEC_OK, "verify-ir\nstage-epilogues\nsplit-conversions\ninfer-layouts\nconvert-layouts\nplan-gemms\nplan-shared-memory\nplan-partitions\nplan-reduces\nplan-vectors\nplan-copies\nplan-pipelines\nlower-kernels\nverify-lowered\nemit-cuda\nemit-header\n", NULL, NULL},
	{"}", "replace", NULL, NULL, 0, 0, TILEC_ERROR, NULL, NULL,
	 "error: pass 'verify-ir' failed: refused"},
	{"}", "fail", NULL, NULL, 0, 0, TILEC_ERROR, NULL, NULL, "error: the pass hook failed"},
	{"}", "names", "verify-ir", "all", 0, 0, TILEC_OK, NULL,
	 "// -----// IR Dump Before verify-ir //----- //\nkernel k", NULL},
	{"}", "names", NULL, "layout-diagnostics", 0, 0, TILEC_OK, NULL,
	 "// -----// IR Dump After layout-diagnostics //----- //\nkernel k", NULL},
	{"}", "names", "nope", NULL, 0, 0, TILEC_ERROR, NULL, NULL,
	 "--print-before: no pass named 'nope'"},
	/* tiles no op lays out: inference replicates them over every thread, so x and y
	 * (both only dumped/asserted) hold the same fully replicated layout */
	{"dump_layout(x); assert_same_layout(x, y); }", "names", NULL, NULL, 0, 0, TILEC_OK, NULL,
	 "// tilec.dump_layout @ t:3:1\n//   type: local x f32[64] Fragment([64] -> [64], replicate: 128,"
	 " thread: 128, forward_thread: _rep, forward_index: [_i], thread_range: I.Range(0, 128))\n"
	 "//   cute: ((_32,_4),_64):((_0,_0),_1)\n", NULL},
	/* with layouts */
	{"dump_layout(x);\ndump_layout(s); }", "layouts", NULL, NULL, 0, 0, TILEC_OK, NULL,
	 "//   cute: ((_32,_2,_2),_1):((_1,_32,_0),_0)\n// tilec.dump_layout @ t:4:1\n"
	 "//   type: shared s f32[64] Layout([64] -> [64], transform: [_i] -> [_i])\n"
	 "//   cute: _64:_1\n", NULL},
	{"dump_layout(s); }", "layouts", NULL, NULL, 0, 1, TILEC_OK,
	 "//   cute: _64:_1\nkernel k", NULL, NULL},
	{"assert_same_layout(z, cute(\"(_32,_2):(_2,_1)\"));\n"
	 "assert_same_layout(s, cute(\"_64:_1\")); assert_same_layout(x, x); }",
	 "layouts", NULL, NULL, 0, 0, TILEC_OK, NULL, NULL, NULL},
	{"dump_layout(x); assert_same_layout(x, y); }", "layouts", NULL, NULL, 0, 0, TILEC_ERROR,
	 NULL, NULL,
	 "t:3:17: error: layout assertion failed: the layouts of 'x' and y differ\n"
	 "t:3:17: note: lhs (x): cute: ((_32,_2,_2),_1):((_1,_32,_0),_0); linear:\n"
	 " - register is a size 1 dimension\n"},
	{"assert_same_layout(z, cute(\"(_32,_2):(_1,_32)\")); }", "layouts", NULL, NULL, 0,
	 0, TILEC_ERROR, NULL, NULL,
	 "note: lhs (z): cute: (_32,_2):(_2,_1); linear:\n - register=1 -> (1)\n"},
	{"assert_same_layout(z, cute(\"(_32,_2):(_1,_32)\")); }", "layouts", NULL, NULL, 0,
	 0, TILEC_ERROR, NULL, NULL,
	 "note: rhs (expected): cute: (_32,_2):(_1,_32); linear:\n - register=1 -> (32)\n"},
	{"assert_same_layout(s, swizzle(128)); }", "layouts", NULL, NULL, 0, 0, TILEC_ERROR, NULL,
	 NULL, "128B swizzle needs the row count"},
};

START_TEST(pipeline)
{
	Hook h = {cases[_i].op, "", 0};
	tilec_options o;
	tilec_result r;
	char src[1024];

	snprintf(src, sizeof src, PROG "%s", cases[_i].body);
	tilec_options_init(&o);
	o.filename = "t";
	o.dump = TILEC_DUMP_NONE; /* inference, the passes, then the IR as output */
	o.pass_hook = hook;
	o.pass_hook_user = &h;
	o.print_passes = cases[_i].print_passes;
	o.print_before = cases[_i].before;
	o.print_after = cases[_i].after;
	o.layout_dump_to_output = cases[_i].to_output;
	tilec_compile(src, strlen(src), &o, &r);
	ck_assert_msg(r.status == cases[_i].st, "case %d: status %s\n%s", _i,
		      tilec_status_name(r.status), r.diagnostics);
	ck_assert_int_eq(h.calls, 1);
	ck_assert_str_eq(h.names, "verify-ir stage-epilogues split-conversions infer-layouts convert-layouts "
			 "layout-diagnostics plan-gemms plan-shared-memory plan-partitions plan-reduces plan-vectors plan-copies plan-pipelines lower-kernels verify-lowered emit-cuda emit-header ");
	if (cases[_i].in_out)
		ck_assert_msg(strstr(r.output, cases[_i].in_out), "case %d: output\n%s", _i, r.output);
	if (cases[_i].in_log)
		ck_assert_msg(strstr(r.log, cases[_i].in_log), "case %d: log\n%s", _i, r.log);
	if (cases[_i].in_diag)
		ck_assert_msg(strstr(r.diagnostics, cases[_i].in_diag), "case %d: diagnostics\n%s", _i,
			      r.diagnostics);
	tilec_result_free(&r);
}
END_TEST

/* a pass over the emitted code: a line before it (api version 2) */
static int
ext_stamp(tilec_ir *ir, const tilec_ir_api *api, void *arg, char *msg, size_t msgsz)
{
	const char *code = api->output(ir);
	char *t;
	size_t n;
	int r;

	(void)arg;
	if (!code || !strstr(code, "__global__")) {
		snprintf(msg, msgsz, "no code before me");
		return 1;
	}
	n = strlen(code) + 32;
	t = malloc(n);
	snprintf(t, n, "// stamped\n%s", code);
	r = api->set_output(ir, t);
	free(t);
	return r || api->set_output(ir, NULL) != -1;
}

/* a pass that reads the lowered IR (api version 3): NULL before lower-kernels */
static int
ext_lowered(tilec_ir *ir, const tilec_ir_api *api, void *arg, char *msg, size_t msgsz)
{
	const char *t = api->lowered(ir);
	char line[160];
	const char *k;

	if (!strcmp((const char *)arg, "before")) {
		api->note(ir, t ? "lowered before lowering" : "not lowered yet");
		return 0;
	}
	if (!t || !(k = strstr(t, "\nkernel "))) {
		snprintf(msg, msgsz, "no lowered IR");
		return 1;
	}
	snprintf(line, sizeof line, "%.*s", (int)strcspn(k + 1, ";"), k + 1);
	api->note(ir, line);
	return 0;
}

/* an emitter of its own in place of emit-cuda */
static int
ext_emit(tilec_ir *ir, const tilec_ir_api *api, void *arg, char *msg, size_t msgsz)
{
	(void)msg;
	(void)msgsz;
	return api->set_output(ir, (const char *)arg);
}

typedef struct LowHook {
	const char *op;
} LowHook;

static int
lowhook(tilec_pass_list *l, void *user)
{
	const LowHook *h = user;

	if (!strcmp(h->op, "stamp"))
		return tilec_pass_insert(l, tilec_pass_count(l), "stamp", ext_stamp, NULL);
	if (!strcmp(h->op, "emit"))
		return tilec_pass_replace(l, "emit-cuda", ext_emit, "// my own code\n");
	if (!strcmp(h->op, "lowered"))
		return tilec_pass_insert(l, tilec_pass_find(l, "lower-kernels"), "before", ext_lowered, "before") ||
		       tilec_pass_insert(l, tilec_pass_find(l, "verify-lowered") + 1, "inspect", ext_lowered, "after");
	if (!strcmp(h->op, "noplan"))
		return tilec_pass_remove(l, "plan-shared-memory");
	if (!strncmp(h->op, "remove:", 7))
		return tilec_pass_remove(l, h->op + 7);
	if (!strcmp(h->op, "noplans"))  /* every planning pass: the lowering plans alone */
		return tilec_pass_remove(l, "plan-gemms") || tilec_pass_remove(l, "plan-shared-memory") ||
		       tilec_pass_remove(l, "plan-partitions") || tilec_pass_remove(l, "plan-reduces") ||
		       tilec_pass_remove(l, "plan-vectors") || tilec_pass_remove(l, "plan-copies") ||
		       tilec_pass_remove(l, "plan-pipelines");
	if (!strcmp(h->op, "late"))  /* after the emitters: never reached by a layout dump */
		return tilec_pass_insert(l, tilec_pass_count(l), "late", ext_note, "late");
	return 0;
}

/* the lowering passes: which run for which output, what --print-after shows of them, and
 * host passes that read, replace or rewrite the emitted code */
static const struct {
	tilec_dump dump;
	tilec_target target;
	const char *op, *after;
	tilec_status st;
	const char *in_out, *in_log, *in_diag;  /* substrings expected (NULL: no check) */
	const char *not_log, *not_diag;         /* substrings that must not appear */
} lowcases[] = {
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "", "plan-shared-memory", TILEC_OK, "__global__",
	 "// -----// IR Dump After plan-shared-memory //----- //\nkernel k", NULL, NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "", "plan-shared-memory", TILEC_OK, NULL,
	 "// shared memory of k\n", NULL, NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "", "plan-partitions", TILEC_OK, NULL,
	 "// -----// IR Dump After plan-partitions //----- //\nkernel k", NULL, NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "", "plan-copies", TILEC_OK, NULL,
	 "// copies of k\n", NULL, NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "", "plan-gemms", TILEC_OK, NULL,
	 "// -----// IR Dump After plan-gemms //----- //\nkernel k", NULL, NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "", "emit-cuda", TILEC_OK, NULL,
	 "// -----// IR Dump After emit-cuda //----- //\n// generated by tilec", NULL,
	 "Dump After emit-header", NULL},
	{TILEC_DUMP_HEADER, TILEC_TARGET_CUDA, "", "emit-header", TILEC_OK, "static inline",
	 "// -----// IR Dump After emit-header //----- //\n", NULL, NULL, NULL},
	/* the IR output stops after the layout passes: no lowering pass runs */
	{TILEC_DUMP_NONE, TILEC_TARGET_CUDA, "", "all", TILEC_OK, "kernel k",
	 "Dump After layout-diagnostics", NULL, "plan-shared-memory", NULL},
	/* the layout dump is inference's result: nothing after infer-layouts runs */
	{TILEC_DUMP_LAYOUTS, TILEC_TARGET_CUDA, "late", "all", TILEC_OK, NULL,
	 "Dump After infer-layouts", NULL, "convert-layouts", "note: late"},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "late", NULL, TILEC_OK, "__global__", NULL,
	 "note: late: 1 kernel(s)", NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "stamp", NULL, TILEC_OK, "// stamped\n// generated by",
	 NULL, NULL, NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "emit", NULL, TILEC_OK, "// my own code\n", NULL, NULL,
	 NULL, NULL},
	/* a pass reads the lowered IR after lower-kernels; before it there is none; --dump=lowered
	 * stops after verify-lowered (emit-cuda does not run) and shows the same IR */
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "lowered", NULL, TILEC_OK, "__global__", NULL,
	 "note: not lowered yet", NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "lowered", NULL, TILEC_OK, "__global__", NULL,
	 "note: kernel k: 128 threads, warp 32", NULL, NULL},
	{TILEC_DUMP_LOWERED, TILEC_TARGET_CUDA, "", "all", TILEC_OK, "lowered for sm_80 (cuda)\nkernel k: ",
	 "Dump After verify-lowered", NULL, "Dump After emit-cuda", NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_HIP, "", "emit-hip", TILEC_OK, "tilec_hip.h",
	 "// -----// IR Dump After emit-hip //----- //\n", NULL, NULL, NULL},
	{TILEC_DUMP_HEADER, TILEC_TARGET_HIP, "", NULL, TILEC_ERROR, NULL, NULL,
	 "the launcher header is written for the cuda target only", NULL, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_HIP, "", "emit-cuda", TILEC_ERROR, NULL, NULL,
	 "--print-after: no pass named 'emit-cuda'", NULL, NULL},
};

START_TEST(lowering)
{
	LowHook h = {lowcases[_i].op};
	tilec_options o;
	tilec_result r;
	const char *src = PROG "}";

	tilec_options_init(&o);
	o.filename = "t";
	o.dump = lowcases[_i].dump;
	o.target = lowcases[_i].target;
	o.pass_hook = lowhook;
	o.pass_hook_user = &h;
	o.print_after = lowcases[_i].after;
	tilec_compile(src, strlen(src), &o, &r);
	ck_assert_msg(r.status == lowcases[_i].st, "case %d: status %s\n%s", _i,
		      tilec_status_name(r.status), r.diagnostics);
	if (lowcases[_i].in_out)
		ck_assert_msg(strstr(r.output, lowcases[_i].in_out), "case %d: output\n%s", _i,
			      r.output);
	if (lowcases[_i].in_log)
		ck_assert_msg(strstr(r.log, lowcases[_i].in_log), "case %d: log\n%s", _i, r.log);
	if (lowcases[_i].not_log)
		ck_assert_msg(!strstr(r.log, lowcases[_i].not_log), "case %d: log\n%s", _i, r.log);
	if (lowcases[_i].in_diag)
		ck_assert_msg(strstr(r.diagnostics, lowcases[_i].in_diag), "case %d: diagnostics\n%s",
			      _i, r.diagnostics);
	if (lowcases[_i].not_diag)
		ck_assert_msg(!strstr(r.diagnostics, lowcases[_i].not_diag),
			      "case %d: diagnostics\n%s", _i, r.diagnostics);
	tilec_result_free(&r);
}
END_TEST

/* emit-cuda with the plans of the planning passes gives the code the lowering plans alone,
 * whichever of them run */
START_TEST(smem_pass_same_code)
{
	static const char *const files[] = {"samples/gemm.tile", "samples/gemm_sm90.tile",
					    "samples/softmax.tile", "samples/transpose.tile",
					    "samples/elementwise.tile", "test/cpu/pipeline_hazard.tile",
					    "test/cpu/replicated_rmw.tile"};
	static const char *const ops[] = {"noplan", "noplans", "remove:plan-partitions",
					  "remove:plan-reduces", "remove:plan-vectors",
					  "remove:plan-copies", "remove:plan-pipelines"};
	size_t i, j;

	for (i = 0; i < sizeof files / sizeof files[0]; i++)
		for (j = 0; j < sizeof ops / sizeof ops[0]; j++) {
			tilec_options o;
			tilec_result r, r2;
			LowHook h = {""};
			char *src;
			size_t len;

			src = test_readfile(files[i], &len);
			ck_assert_ptr_nonnull(src);
			tilec_options_init(&o);
			o.filename = files[i];
			o.dump = TILEC_DUMP_CUDA;
			o.arch = "sm_90a";
			tilec_compile(src, len, &o, &r);
			ck_assert_msg(r.status == TILEC_OK, "%s: %s", files[i], r.diagnostics);
			/* without the passes, the lowering plans itself */
			o.pass_hook = lowhook;
			o.pass_hook_user = &h;
			h.op = ops[j];
			tilec_compile(src, len, &o, &r2);
			ck_assert_msg(r2.status == TILEC_OK, "%s %s: %s", files[i], ops[j], r2.diagnostics);
			ck_assert_msg(!strcmp(r.output, r2.output), "%s %s: the code differs", files[i], ops[j]);
			tilec_result_free(&r);
			tilec_result_free(&r2);
			free(src);
		}
}
END_TEST

/* a lowering error names the place it is about: the statement, the buffer or the kernel */
static const struct {
	const char *src, *diag;
} located[] = {
	/* a nest whose loop layout is replicated writing a local at an index that is not a nest
	 * variable (the tile goes through shared memory for the nest; each replica would apply
	 * the write): at the store */
	{"kernel rp(S: f32[N], Out: f32[N]) grid(1) threads(128)\n{\n    local c: f32[4];\n"
	 "    local t: f32[4];\n    copy(S[0], c);\n    copy(S[0], t);\n    for i in parallel(4) {\n"
	 "        t[3 - i] = c[i] + t[3 - i];\n    }\n    copy(t, Out[0]);\n}\n",
	 "t:8:9: error: kernel 'rp': local 't' is written by the parallel nest and read or written at an "
	 "index that is not one of its variables, so it goes through shared memory for the nest, but the "
	 "nest's loop layout runs each point in 32 threads, which would each apply the point's write; give "
	 "the nest a loop layout without replicas (parallel(..., layout = ...)) or write a shared buffer"},
	/* a gemm the mma.sync lowering does not cover: at the gemm, saying what it misses */
	{"kernel ta(A: f16[K, M], B: f16[K, N], C: f16[M, N]) grid(1) threads(128)\n{\n"
	 "    shared As: f16[32, 64];\n    shared Bs: f16[32, 64];\n    local acc: f16[64, 64];\n"
	 "    clear(acc);\n    copy(A[0, 0], As);\n    copy(B[0, 0], Bs);\n"
	 "    gemm(As, Bs, acc, trans_a = true);\n    copy(acc, C[0, 0]);\n}\n",
	 "t:9:5: error: kernel 'ta': gemm: not lowered yet for mma.sync: an accumulator that is not f32;"},
	/* fp8 on sm_80 (no fp8 MMA before sm_89): at the gemm, with the reason */
	{"kernel f8(A: fp8_e4m3[64, 64], B: fp8_e4m3[64, 64], C: f32[64, 64]) grid(1) threads(128)\n{\n"
	 "    shared As: fp8_e4m3[64, 64];\n    shared Bs: fp8_e4m3[64, 64];\n    local acc: f32[64, 64];\n"
	 "    clear(acc);\n    copy(A[0, 0], As);\n    copy(B[0, 0], Bs);\n"
	 "    gemm(As, Bs, acc, trans_b = true);\n    copy(acc, C[0, 0]);\n}\n",
	 "t:9:5: error: layout inference: gemm: gemm: sm_80 has no MMA for fp8_e4m3 operands (mma.sync "
	 ".e4m3/.e5m2 needs sm_89 or later, wgmma sm_90a)"},
	/* an 8-bit B in registers: at the gemm (mma.sync reads B from shared memory) */
	{"kernel rb(A: i8[64, 64], B: i8[64, 64], C: i32[64, 64]) grid(1) threads(128)\n{\n"
	 "    shared As: i8[64, 64];\n    local b: i8[64, 64];\n    local acc: i32[64, 64];\n"
	 "    clear(acc);\n    copy(A[0, 0], As);\n    copy(B[0, 0], b);\n"
	 "    gemm(As, b, acc, trans_b = true);\n    copy(acc, C[0, 0]);\n}\n",
	 "t:9:5: error: kernel 'rb': gemm: not lowered yet for mma.sync: operand B in registers (stage it "
	 "through shared memory);"},
	/* too much shared memory: at the kernel, with what takes it */
	{"kernel big(A: f32[N], B: f32[N]) grid(1) threads(128)\n{\n    shared s: f32[45000];\n"
	 "    copy(A[0], s);\n    copy(s, B[0]);\n}\n",
	 "t:1:8: error: kernel 'big': needs 180000 bytes of shared memory (s 180000); sm_80 allows"},
	/* a replicated nest that reads shared y and stores into it inside an if: barriers
	 * around the store would be skipped by some threads (test/cpu/replicated_rmw.tile) */
	{"kernel f(A: i8[M, N, P], Z: f32[M, N, P], Y: f16[M, N, P])\n"
	 "    grid(P / 8, cdiv(N, 32), cdiv(M, 32)) threads(64)\n{\n    local x: f32[32, 8];\n"
	 "    shared y: u8[8, 32];\n    shared frag: i8[32, 8];\n    local sa: u8[8, 32];\n"
	 "    for r in range(32) {\n        for c in range(0, 8) {\n            y[c, r] = (r + M);\n"
	 "        }\n    }\n"
	 "    copy(A[bz * 32 + 19, by * 32 : 32 + by * 32, bx * 8 : bx * 8 + 8], frag);\n"
	 "    for ii, jj in parallel(8, 32) {\n        sa[ii, jj] = frag[jj, ii];\n    }\n"
	 "    for lane, warp in parallel(8, 32) {\n"
	 "        x[warp, lane] = f32(i32(y[lane, warp])) * f32(i32(y[lane, warp])) + Z[bz * 32 + warp, by * 32 + lane, bx * 8];\n"
	 "        if (lane > 2) {\n            y[lane, warp] = 4;\n        }\n"
	 "        Z[bz * 32 + warp, by * 32 + lane, bx * 8] = Z[bz * 32 + warp, by * 32 + lane, bx * 8] * 2.0 + f32(i32(y[lane, warp]));\n"
	 "    }\n    for ii, jj, ll in parallel(32, 32, 8) {\n"
	 "        Y[bz * 32 + ii, by * 32 + jj, bx * 8 + ll] = x[ii, ll] * f32(i32(sa[ll, jj]));\n"
	 "    }\n}\n",
	 "t:20:13: error: kernel 'f': a parallel nest whose loop layout is replicated (8 threads run each "
	 "point) reads shared 'y' and stores into it inside an if"},
};

START_TEST(lowering_located)
{
	tilec_options o;
	tilec_result r;

	tilec_options_init(&o);
	o.filename = "t";
	o.dump = TILEC_DUMP_CUDA;
	tilec_compile(located[_i].src, strlen(located[_i].src), &o, &r);
	ck_assert_int_eq(r.status, TILEC_ERROR);
	ck_assert_msg(strstr(r.diagnostics, located[_i].diag), "case %d: %s", _i, r.diagnostics);
	tilec_result_free(&r);
}
END_TEST

/* build samples/plugin_example.c into build/ and load it */
START_TEST(plugin)
{
	const char *plugs[1] = {"build/plugin_example.so"}, *bad[1] = {"build/no_such_plugin.so"};
	const char *src = PROG "}";
	tilec_options o;
	tilec_result r;
	int rc;

	rc = system("${CC:-cc} -shared -fPIC -Iruntime samples/plugin_example.c "
		    "-o build/plugin_example.so.tmp && mv build/plugin_example.so.tmp "
		    "build/plugin_example.so");
	ck_assert_int_eq(rc, 0);
	tilec_options_init(&o);
	o.filename = "t";
	o.plugins = plugs;
	o.nplugins = 1;
	o.print_passes = 1;
	tilec_compile(src, strlen(src), &o, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_str_eq(r.output, "verify-ir\ncount-stmts\nstage-epilogues\nsplit-conversions\ninfer-layouts\n"
			 "convert-layouts\nlayout-diagnostics\nplan-gemms\nplan-shared-memory\nplan-partitions\nplan-reduces\nplan-vectors\nplan-copies\nplan-pipelines\nlower-kernels\nverify-lowered\nemit-cuda\nemit-header\n");
	tilec_result_free(&r);
	o.print_passes = 0;
	tilec_compile(src, strlen(src), &o, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_msg(strstr(r.diagnostics, "note: count-stmts: kernel k has 0 statements and 5 "
				"buffers"), "%s", r.diagnostics);
	tilec_result_free(&r);
	/* twice: a duplicate pass name */
	{
		const char *two[2] = {plugs[0], plugs[0]};

		o.plugins = two;
		o.nplugins = 2;
		tilec_compile(src, strlen(src), &o, &r);
		ck_assert_int_eq(r.status, TILEC_ERROR);
		ck_assert_msg(strstr(r.diagnostics, "bad or duplicate name"), "%s", r.diagnostics);
		tilec_result_free(&r);
	}
	o.plugins = bad;
	o.nplugins = 1;
	tilec_compile(src, strlen(src), &o, &r);
	ck_assert_int_eq(r.status, TILEC_ERROR);
	ck_assert_msg(strstr(r.diagnostics, "plugin 'build/no_such_plugin.so'"), "%s", r.diagnostics);
	tilec_result_free(&r);
	o.plugins = NULL;
	tilec_compile(src, strlen(src), &o, &r);
	ck_assert_int_eq(r.status, TILEC_ERROR);
	tilec_result_free(&r);
}
END_TEST

Suite *
suite_passes(void)
{
	Suite *s = suite_create("passes");
	TCase *tc = tcase_create("passes");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, pipeline, 0, (int)(sizeof cases / sizeof cases[0]));
	tcase_add_loop_test(tc, lowering, 0, (int)(sizeof lowcases / sizeof lowcases[0]));
	tcase_add_test(tc, smem_pass_same_code);
	tcase_add_loop_test(tc, lowering_located, 0, (int)(sizeof located / sizeof located[0]));
	tcase_add_test(tc, plugin);
	suite_add_tcase(s, tc);
	return s;
}
