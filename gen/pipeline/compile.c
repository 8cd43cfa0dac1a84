/*
 * compile.c: the public compile API (runtime/tilec.h) and the pipeline as
 * one straight function: check the options, parse, semantic checks with
 * helper inlining into tile IR, then the pass list of passes.c (layout
 * inference, the layout passes, plugins, shared-memory planning, emission)
 * as far as the output asked for needs.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "compile.h"
#include "infer.h"
#include "ir.h"
#include "passes.h"
#include "sema.h"
#include "tilec.h"

const char *
tilec_version(void)
{
	return TL_VERSION;
}

size_t
tilec_options_size(void)
{
	return sizeof(tilec_options);
}

/* a pipeline whose body loads both shared operands of a gemm from global memory (the GEMM's
 * main loop; FlashAttention's, whose first operand was loaded before it or lives in
 * registers, is not one) */
typedef struct PipeGemm {
	const IrKernel *k;
	IrStmt *body;
	int found;
} PipeGemm;

static int
loaded_in(const PipeGemm *pg, int buf)
{
	const IrStmt *s;

	if (pg->k->bufs[buf].scope != MEM_SHARED)
		return 0;
	for (s = pg->body; s; s = s->next)
		if (s->kind == S_COPY && s->u.copy.dst.buf == buf && pg->k->bufs[s->u.copy.src.buf].scope == MEM_GLOBAL)
			return 1;
	return 0;
}

static int
pipe_gemm(IrStmt *s, void *ctx)
{
	PipeGemm *pg = ctx;

	if (s->kind == S_GEMM && loaded_in(pg, s->u.gemm.a.buf) && loaded_in(pg, s->u.gemm.b.buf))
		pg->found = 1;
	return pg->found;
}

static int
gemm_pipeline(IrStmt *s, void *ctx)
{
	PipeGemm *pg = ctx;

	if (s->kind != S_PIPELINE)
		return 0;
	pg->body = s->u.pipe.body;
	return ir_walk(s->u.pipe.body, pipe_gemm, pg);
}

/* The grouped block order of kernel k (tilec_options.raster_group: G > 0 rows, 0 off, < 0
 * auto). Auto: 8 rows for a kernel with a 2-D grid and a GEMM main loop (gemm_pipeline) on a
 * target with TMA (sm_90a), where the H100 measured it (test/gpu/gemm_bench.sh, 2026-12-07: samples/gemm_sm90
 * at 8192^3 0.695 -> 0.934 of cuBLAS, 4096^3 0.863 -> 0.916, 2048^3 unchanged); else off */
#define RASTER_AUTO 8
static int
raster_of(const IrProgram *prog, IrKernel *k, int opt)
{
	const Target *t;
	PipeGemm pg;
	Err e = {0};

	if (opt >= 0)
		return opt;
	t = target_lookup(prog->target == TILEC_TARGET_HIP ? TGT_HIP : TGT_CUDA, prog->arch, &e);
	pg.k = k, pg.body = NULL, pg.found = 0;
	if (!t || !t->has_tma || k->ngrid < 2 || !ir_walk(k->body, gemm_pipeline, &pg))
		return 0;
	return RASTER_AUTO;
}

void
tilec_options_init(tilec_options *o)
{
	if (o) {
		memset(o, 0, sizeof *o);
		o->tma = 1;
		o->raster_group = -1;   /* auto: raster_of() */
		o->epilogue = TILEC_EPILOGUE_AUTO; /* plan_epilogue.c */
	}
}

int
tilec_arch_valid(tilec_target target, const char *arch)
{
	static const char *const cuda[] = {"sm_80", "sm_90", "sm_90a"};
	static const char *const hip[] = {"gfx90a", "gfx942", "gfx1100"};
	size_t i;

	if (!arch)
		return 0;
	if (target == TILEC_TARGET_CUDA) {
		for (i = 0; i < countof(cuda); i++)
			if (!strcmp(arch, cuda[i]))
				return 1;
	} else if (target == TILEC_TARGET_HIP) {
		for (i = 0; i < countof(hip); i++)
			if (!strcmp(arch, hip[i]))
				return 1;
	}
	return 0;
}

/* parse "NAME=VALUE" into *out (name copied into the arena when a is set) */
static int
parsedef(Arena *a, const char *def, SemaDefine *out, char *msg, size_t msgsz)
{
	const char *eq, *v;
	char *end;
	size_t i, n;

	if (!def) {
		snprintf(msg, msgsz, "missing definition");
		return -1;
	}
	eq = strchr(def, '=');
	if (!eq) {
		snprintf(msg, msgsz, "expected NAME=VALUE");
		return -1;
	}
	n = (size_t)(eq - def);
	if (n == 0 || !(isalpha((unsigned char)def[0]) || def[0] == '_')) {
		snprintf(msg, msgsz, "'%.*s' is not a name", (int)(n > 64 ? 64 : n), def);
		return -1;
	}
	for (i = 1; i < n; i++) {
		if (!isalnum((unsigned char)def[i]) && def[i] != '_') {
			snprintf(msg, msgsz, "'%.*s' is not a name", (int)(n > 64 ? 64 : n), def);
			return -1;
		}
	}
	v = eq + 1;
	if (!*v || isspace((unsigned char)*v)) {
		snprintf(msg, msgsz, "missing value after '='");
		return -1;
	}
	memset(out, 0, sizeof *out);
	errno = 0;
	out->i = strtoll(v, &end, 0);
	if (*end == 0 && !(v[0] == '0' && isdigit((unsigned char)v[1]))) {
		if (errno == ERANGE) {
			snprintf(msg, msgsz, "integer '%s' out of range", v);
			return -1;
		}
	} else {
		errno = 0;
		out->f = strtod(v, &end);
		if (*end || errno == ERANGE || !strpbrk(v, ".eE") || strpbrk(v, "xXnNiI")) {
			snprintf(msg, msgsz, "'%s' is not an integer or a float", v);
			return -1;
		}
		out->is_float = 1;
	}
	if (a) {
		out->name = arena_strndup(a, def, n);
		if (!out->name) {
			snprintf(msg, msgsz, "out of memory");
			return -1;
		}
	}
	return 0;
}

tilec_status
tilec_define_check(const char *def, char *msg, size_t msgsz)
{
	SemaDefine d;
	char tmp[256];

	if (!msg || !msgsz) {
		msg = tmp;
		msgsz = sizeof tmp;
	}
	return parsedef(NULL, def, &d, msg, msgsz) ? TILEC_ERR_ARG : TILEC_OK;
}

/* the log of a compile that logged nothing: callers that free the result's
 * fields one by one (from before the log existed) leak nothing */
static char nolog[1];

void
tilec_result_free(tilec_result *r)
{
	if (!r)
		return;
	free(r->diagnostics);
	free(r->output);
	if (r->log != nolog)
		free(r->log);
	r->diagnostics = r->output = r->log = NULL;
}

static char *
dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *t = malloc(n);

	if (t)
		memcpy(t, s, n);
	return t;
}

/* fill res from the diagnostics and output; status from the error count */
static tilec_status
finish(tilec_result *res, Diags *d, Buf *out, Buf *log, const char *src, size_t len, int caret,
       tilec_status st)
{
	Buf db;

	buf_init(&db);
	diag_format(d, &db, src, len, caret);
	res->nerrors = d->nerr;
	if (d->nerr && st == TILEC_OK)
		st = TILEC_ERR_COMPILE;
	res->diagnostics = db.oom ? NULL : buf_take(&db);
	res->output = st == TILEC_OK && !out->oom ? buf_take(out) : NULL;
	res->log = log->oom ? NULL : log->len ? buf_take(log) : nolog;
	buf_free(&db);
	if (!res->diagnostics)
		res->diagnostics = dupstr("");
	if (!res->output)
		res->output = dupstr("");
	if (!res->log)
		res->log = nolog;
	if (!res->diagnostics || !res->output || !res->log || db.oom || out->oom || log->oom) {
		tilec_result_free(res);
		st = TILEC_ERR_NOMEM;
	}
	res->status = st;
	return st;
}

/* the -D texts of o as SemaDefines (each bad one reported in d); NULL when there are none */
static SemaDefine *
parse_defines(Arena *arena, Diags *d, const tilec_options *o, int *ndefs)
{
	SemaDefine *defs;
	Loc nowhere = {"tilec", 0, 0};
	char msg[256];
	int i;

	*ndefs = 0;
	if (o->ndefines <= 0 || !o->defines)
		return NULL;
	defs = anewn(arena, SemaDefine, o->ndefines);
	for (i = 0; i < o->ndefines; i++) {
		if (parsedef(arena, o->defines[i], &defs[*ndefs], msg, sizeof msg))
			diag(d, nowhere, "-D %s: %s", o->defines[i] ? o->defines[i] : "(null)", msg);
		else
			(*ndefs)++;
	}
	return defs;
}

/* the pipeline; out-of-memory longjmps out of it to tilec_compile */
static tilec_status
pipeline(Arena *arena, Diags *d, Buf *out, Buf *log, const char *src, size_t len,
	 const tilec_options *o)
{
	SemaDefine *defs = NULL;
	Node *top;
	IrProgram *prog;
	const Target *tgt;
	const char *file = o->filename ? o->filename : "<input>";
	Err e = {0};
	int ndefs = 0, r;
	Loc nowhere = {"tilec", 0, 0};
	tilec_status st = TILEC_OK;

	/* 1. options */
	if (!src && len) {
		diag(d, nowhere, "no source text");
		st = TILEC_ERR_ARG;
	}
	if (o->target != TILEC_TARGET_CUDA && o->target != TILEC_TARGET_HIP) {
		diag(d, nowhere, "unknown target %d", (int)o->target);
		st = TILEC_ERR_ARG;
	} else if (o->arch && !tilec_arch_valid(o->target, o->arch)) {
		diag(d, nowhere, "unknown %s arch '%s'", o->target == TILEC_TARGET_CUDA ? "cuda" : "hip",
		     o->arch);
		st = TILEC_ERR_ARG;
	}
	if (o->dump != TILEC_DUMP_NONE && o->dump != TILEC_DUMP_AST && o->dump != TILEC_DUMP_IR
	    && o->dump != TILEC_DUMP_LAYOUTS && o->dump != TILEC_DUMP_EXPLAIN
	    && o->dump != TILEC_DUMP_CUDA && o->dump != TILEC_DUMP_HEADER && o->dump != TILEC_DUMP_LOWERED) {
		diag(d, nowhere, "unknown dump kind %d", (int)o->dump);
		st = TILEC_ERR_ARG;
	}
	if (o->ndefines < 0 || (o->ndefines > 0 && !o->defines)) {
		diag(d, nowhere, "bad define list");
		st = TILEC_ERR_ARG;
	} else {
		defs = parse_defines(arena, d, o, &ndefs);
	}
	if (d->nerr)
		return st;
	if (o->print_passes) {
		passes_pipeline(arena, d, NULL, o, NULL, out, log);
		return st;
	}

	/* 2. parse */
	top = parse_program(arena, d, src ? src : "", len, file);
	if (d->nerr)
		return st;
	if (o->dump == TILEC_DUMP_AST) {
		ast_dump(out, top);
		return st;
	}

	/* 3. semantic checks, helper inlining, tile IR */
	prog = sema_program(arena, d, top, defs, ndefs, file);
	if (!prog || d->nerr)
		return st;
	if (ir_verify(prog, &e)) {
		diag(d, nowhere, "internal error: the IR after sema is broken: %s", e.msg);
		return st;
	}
	prog->target = o->target;
	prog->arch = o->arch ? o->arch : o->target == TILEC_TARGET_HIP ? "gfx942" : "sm_80";
	prog->tma = o->tma != 0;
	prog->ws = o->warp_specialize != 0;
	prog->raster = o->raster_group;
	prog->persist = o->persistent != 0;
	prog->epilogue = o->epilogue < 0 ? -1 : o->epilogue != 0;
	for (IrKernel *tk = prog->kernels; tk; tk = tk->next)
		tk->tma = prog->tma, tk->ws = prog->ws, tk->raster = raster_of(prog, tk, o->raster_group),
		tk->persist = prog->persist, tk->epilogue = prog->epilogue;

	/* --dump=ir: the checked tile IR, before layout inference and the passes */
	if (o->dump == TILEC_DUMP_IR) {
		ir_dump(out, prog);
		return st;
	}
	if (o->cost_model != TILEC_COST_IO_AWARE && o->cost_model != TILEC_COST_REGISTER_COUNT) {
		diag(d, nowhere, "unknown cost model %d", (int)o->cost_model);
		return TILEC_ERR_ARG;
	}
	tgt = target_lookup(prog->target == TILEC_TARGET_HIP ? TGT_HIP : TGT_CUDA, prog->arch, &e);
	if (!tgt) {
		diag(d, nowhere, "%s", e.msg);
		return TILEC_ERR_ARG;
	}

	/* 4. the passes (passes.c): inference, the layout passes, plugins, lowering and emission;
	 * 1: they wrote the output (code) */
	r = passes_pipeline(arena, d, prog, o, tgt, out, log);
	if (r || d->nerr)
		return st;

	/* 5. the outputs that are not code */
	if (o->dump == TILEC_DUMP_LAYOUTS)
		infer_dump(out, prog);
	else if (o->dump != TILEC_DUMP_EXPLAIN)
		ir_dump(out, prog);
	return st;
}

/*
 * The front end alone (compile.h): parse, sema (helpers inlined) and the IR
 * check, for the reference interpreter. Diagnostics go to d; NULL on any error.
 */
IrProgram *
compile_front(Arena *arena, Diags *d, const char *src, size_t len, const tilec_options *o)
{
	SemaDefine *defs = NULL;
	const char *file = o->filename ? o->filename : "<input>";
	Loc nowhere = {"tilec", 0, 0};
	IrProgram *prog;
	Node *top;
	Err e = {0};
	int ndefs = 0;

	if (o->ndefines > 0 && o->defines)
		defs = parse_defines(arena, d, o, &ndefs);
	if (d->nerr)
		return NULL;
	top = parse_program(arena, d, src ? src : "", len, file);
	if (d->nerr)
		return NULL;
	prog = sema_program(arena, d, top, defs, ndefs, file);
	if (!prog || d->nerr)
		return NULL;
	if (ir_verify(prog, &e)) {
		diag(d, nowhere, "internal error: the IR after sema is broken: %s", e.msg);
		return NULL;
	}
	prog->target = o->target;
	prog->arch = o->arch ? o->arch : o->target == TILEC_TARGET_HIP ? "gfx942" : "sm_80";
	prog->tma = o->tma != 0;
	prog->ws = o->warp_specialize != 0;
	prog->raster = o->raster_group;
	prog->persist = o->persistent != 0;
	prog->epilogue = o->epilogue < 0 ? -1 : o->epilogue != 0;
	for (IrKernel *tk = prog->kernels; tk; tk = tk->next)
		tk->tma = prog->tma, tk->ws = prog->ws, tk->raster = raster_of(prog, tk, o->raster_group),
		tk->persist = prog->persist, tk->epilogue = prog->epilogue;
	return prog;
}

tilec_status
tilec_compile(const char *src, size_t len, const tilec_options *opts, tilec_result *res)
{
	tilec_options o;
	Arena arena;
	jmp_buf oom;
	Diags d;
	Buf out, log;
	tilec_status st;

	if (!res)
		return TILEC_ERR_ARG;
	memset(res, 0, sizeof *res);
	tilec_options_init(&o);
	if (opts)
		o = *opts;
	arena_init(&arena);
	diags_init(&d, &arena);
	buf_init(&out);
	buf_init(&log);
	if (setjmp(oom)) {
		arena.oom = NULL;
		arena_free(&arena);
		buf_free(&out);
		buf_free(&log);
		res->status = TILEC_ERR_NOMEM;
		res->diagnostics = dupstr("tilec: error: out of memory\n");
		res->output = dupstr("");
		res->log = nolog;
		return TILEC_ERR_NOMEM;
	}
	arena.oom = &oom;
	st = pipeline(&arena, &d, &out, &log, src, len, &o);
	arena.oom = NULL;
	st = finish(res, &d, &out, &log, src, src ? len : 0, o.caret, st);
	buf_free(&out);
	buf_free(&log);
	arena_free(&arena);
	return st;
}
