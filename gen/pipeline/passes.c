/*
 * passes.c: the pass manager. The IR after sema runs through one named list
 * of passes, from the IR check through layout inference and the layout passes
 * to shared-memory planning and the emitters; a host hook
 * (tilec_options.pass_hook) may edit the list and shared libraries
 * (tilec_options.plugins, `tilec --plugin=lib.so`) may add passes through the
 * C ABI of runtime/tilec_plugin.h. --print-passes lists the passes,
 * --print-before/--print-after put what a pass sees or leaves into the log:
 * the tile IR, the shared-memory plan, the emitted code.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "convert.h"
#include "emit_header.h"
#include "gemm_plan.h"
#include "infer.h"
#include "lir.h"
#include "lower.h"
#include "passes.h"
#include "plan.h"

/* ---- the list ---------------------------------------------------------------- */

static int
goodname(const char *s)
{
	const char *p;

	if (!s || !*s || strlen(s) > 64)
		return 0;
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return 0;
	return 1;
}

int
tilec_pass_count(const tilec_pass_list *l)
{
	return l ? l->n : 0;
}

const char *
tilec_pass_name(const tilec_pass_list *l, int i)
{
	return l && i >= 0 && i < l->n ? l->v[i].name : NULL;
}

int
tilec_pass_find(const tilec_pass_list *l, const char *name)
{
	int i;

	if (!l || !name)
		return -1;
	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return i;
	return -1;
}

static int
insert(tilec_pass_list *l, int index, const char *name, PassFn fn, tilec_pass_fn ext, void *arg,
       int when, void (*show)(PassCtx *, Buf *))
{
	Pass *v;

	if (!l || !l->a || index < 0 || index > l->n || !goodname(name) || (!fn && !ext) ||
	    tilec_pass_find(l, name) >= 0)
		return -1;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		v = anewn(l->a, Pass, l->cap);
		if (l->n)
			memcpy(v, l->v, sizeof *v * (size_t)l->n);
		l->v = v;
	}
	memmove(&l->v[index + 1], &l->v[index], sizeof *l->v * (size_t)(l->n - index));
	l->v[index].name = arena_strdup(l->a, name);
	l->v[index].fn = fn;
	l->v[index].ext = ext;
	l->v[index].arg = arg;
	l->v[index].when = when;
	l->v[index].show = show;
	l->n++;
	return 0;
}

tilec_status
tilec_pass_insert(tilec_pass_list *l, int index, const char *name, tilec_pass_fn fn, void *arg)
{
	return fn && !insert(l, index, name, NULL, fn, arg, PASS_ALWAYS, NULL) ? TILEC_OK : TILEC_ERR_ARG;
}

int
passes_insert_builtin(tilec_pass_list *l, int index, const char *name, PassFn fn)
{
	return fn ? insert(l, index, name, fn, NULL, NULL, PASS_ALWAYS, NULL) : -1;
}

tilec_status
tilec_pass_remove(tilec_pass_list *l, const char *name)
{
	int i = tilec_pass_find(l, name);

	if (i < 0)
		return TILEC_ERR_ARG;
	memmove(&l->v[i], &l->v[i + 1], sizeof *l->v * (size_t)(l->n - i - 1));
	l->n--;
	return TILEC_OK;
}

tilec_status
tilec_pass_replace(tilec_pass_list *l, const char *name, tilec_pass_fn fn, void *arg)
{
	int i = tilec_pass_find(l, name);

	if (i < 0 || !fn)
		return TILEC_ERR_ARG;
	l->v[i].fn = NULL;
	l->v[i].ext = fn;
	l->v[i].arg = arg;
	l->v[i].show = NULL;
	return TILEC_OK;
}

/* ---- built-in passes ------------------------------------------------------------ */

static int
verify_ir(PassCtx *c)
{
	Err e = {0};
	Loc nowhere = {"tilec", 0, 0};

	if (!ir_verify(c->prog, &e))
		return 0;
	diag(c->d, nowhere, "internal error: the IR is broken: %s", e.msg);
	return -1;
}

/* release/require points with uses on both sides become conversions (convert.c) */
static int
split_conversions(PassCtx *c)
{
	return convert_split(c->a, c->d, c->prog) < 0 || c->d->nerr ? -1 : 0;
}

/* a layout for every buffer and loop (infer.c); --dump=explain writes its reasons to the output */
static int
infer_layouts(PassCtx *c)
{
	CostModelKind m = c->o->cost_model == TILEC_COST_REGISTER_COUNT ? COST_REGISTER_COUNT
									  : COST_IO_AWARE;

	return infer_program(c->a, c->d, c->prog, c->tgt, m,
			     c->o->dump == TILEC_DUMP_EXPLAIN ? c->out : NULL) < 0 || c->d->nerr ? -1 : 0;
}

/* the lowering passes report like the emitter, "kernel 'k': why", at the statement or buffer
 * the error is about (Err.loc), else at the kernel */
static int
kernel_error(PassCtx *c, const IrKernel *k, const Err *e)
{
	Loc nowhere = {"tilec", 0, 0};

	if (k)
		diag(c->d, e->loc.line ? e->loc : k->loc, "kernel '%s': %s", k->name, e->msg);
	else
		diag(c->d, e->loc.line ? e->loc : nowhere, "%s", e->msg);
	return -1;
}

/* a layout, a swizzle and a byte offset for every shared buffer (smem.c), kept on the kernel */
static int
plan_shared_memory(PassCtx *c)
{
	IrKernel *k;
	Err e = {0};

	for (k = c->prog->kernels; k; k = k->next) {
		SmemPlan *sp = anew(c->a, SmemPlan);

		if (smem_plan(c->a, c->tgt, k, sp, &e))
			return kernel_error(c, k, &e);
		k->smem = sp;
	}
	return 0;
}

/* each gemm's plan (instruction, warp partition, fragments, shared layouts), kept on it */
typedef struct GemmWalk {
	PassCtx *c;
	IrKernel *k;
	Buf *b;
} GemmWalk;

static int
plan_gemm1(IrStmt *s, void *ctx)
{
	GemmWalk *w = ctx;
	Err e = {0};
	GemmPlan *p;

	if (s->kind != S_GEMM)
		return 0;
	p = anew(w->c->a, GemmPlan);
	if (gemm_plan(w->c->a, w->c->tgt, w->k, s, p, &e)) {
		err_loc(&e, s->loc);
		return kernel_error(w->c, w->k, &e);
	}
	s->gemm_plan = p;
	return 0;
}

static int
plan_gemms(PassCtx *c)
{
	IrKernel *k;

	for (k = c->prog->kernels; k; k = k->next) {
		GemmWalk w = {c, k, NULL};

		if (ir_walk(k->body, plan_gemm1, &w))
			return -1;
	}
	return 0;
}

static int
show_gemm1(IrStmt *s, void *ctx)
{
	GemmWalk *w = ctx;

	if (s->kind == S_GEMM && s->gemm_plan) {
		buf_printf(w->b, "// gemm at %d:%d\n", s->loc.line, s->loc.col);
		gemm_plan_dump(w->b, s->gemm_plan);
	}
	return 0;
}

static void
show_gemms(PassCtx *c, Buf *b)
{
	const IrKernel *k;

	ir_dump(b, c->prog);
	for (k = c->prog->kernels; k; k = k->next) {
		GemmWalk w = {c, NULL, b};

		buf_printf(b, "// gemm plans of %s\n", k->name);
		ir_walk(k->body, show_gemm1, &w);
	}
}

static void
show_smem(PassCtx *c, Buf *b)
{
	const IrKernel *k;

	ir_dump(b, c->prog);
	for (k = c->prog->kernels; k; k = k->next) {
		if (!k->smem)
			continue;
		buf_printf(b, "// shared memory of %s\n", k->name);
		smem_plan_dump(b, k, k->smem);
	}
}

/* the planning passes of plan.h: each makes one kind of decision for every kernel and keeps it
 * on the tile IR */
typedef int (*PlanFn)(Arena *a, const Target *t, IrKernel *k, Err *err);

static int
plan_each(PassCtx *c, PlanFn f)
{
	IrKernel *k;
	Err e = {0};

	for (k = c->prog->kernels; k; k = k->next)
		if (f(c->a, c->tgt, k, &e))
			return kernel_error(c, k, &e);
	return 0;
}

static int pass_plan_partitions(PassCtx *c) { return plan_each(c, plan_partitions); }
static int pass_plan_reduces(PassCtx *c) { return plan_each(c, plan_reduces); }
static int pass_plan_vectors(PassCtx *c) { return plan_each(c, plan_vectors); }
static int pass_plan_copies(PassCtx *c) { return plan_each(c, plan_copies); }
static int pass_plan_pipelines(PassCtx *c) { return plan_each(c, plan_pipelines); }
static int pass_stage_epilogues(PassCtx *c) { return plan_each(c, plan_epilogues); }

typedef void (*PlanDump)(Buf *b, const IrKernel *k);

static void
show_plans(PassCtx *c, Buf *b, PlanDump f, PlanDump g)
{
	const IrKernel *k;

	ir_dump(b, c->prog);
	for (k = c->prog->kernels; k; k = k->next) {
		f(b, k);
		if (g)
			g(b, k);
	}
}

static void show_partitions(PassCtx *c, Buf *b) { show_plans(c, b, plan_partitions_dump, NULL); }
static void show_reduces(PassCtx *c, Buf *b) { show_plans(c, b, plan_reduces_dump, NULL); }
static void show_vectors(PassCtx *c, Buf *b) { show_plans(c, b, plan_partitions_dump, plan_copies_dump); }
static void show_copies(PassCtx *c, Buf *b) { show_plans(c, b, plan_copies_dump, NULL); }
static void show_pipelines(PassCtx *c, Buf *b) { show_plans(c, b, plan_pipelines_dump, NULL); }

/* the lowered kernel IR (gen/lir/lir.h) of every kernel, from the tile IR and its layouts */
static int
lower(PassCtx *c)
{
	Err e = {0};

	if (lower_kernels(c->a, c->prog, &c->lir, &e))
		return kernel_error(c, NULL, &e);
	return 0;
}

static int
verify_lowered(PassCtx *c)
{
	Err e = {0};

	if (!c->lir) {
		Loc nowhere = {"tilec", 0, 0};

		diag(c->d, nowhere, "verify-lowered: no lowered IR (lower-kernels did not run)");
		return -1;
	}
	if (lir_verify(c->lir, &e))
		return kernel_error(c, NULL, &e);
	if (c->o->dump == TILEC_DUMP_LOWERED)
		lir_dump(c->out, c->lir);
	return 0;
}

static void
show_lowered(PassCtx *c, Buf *b)
{
	if (c->lir)
		lir_dump(b, c->lir);
	else
		buf_puts(b, "// (not lowered yet)\n");
}

/* CUDA C, or HIP C for the hip target: the C renderer of the lowered IR (gen/target/) */
static int
emit_code(PassCtx *c)
{
	if (!c->lir) {
		Loc nowhere = {"tilec", 0, 0};

		diag(c->d, nowhere, "%s: no lowered IR (lower-kernels did not run)",
		     c->o->target == TILEC_TARGET_HIP ? "emit-hip" : "emit-cuda");
		return -1;
	}
	buf_reset(&c->code);
	lir_render_c(&c->code, c->lir, lir_dialect(c->lir));
	c->coded = 1;
	if (c->o->dump == TILEC_DUMP_CUDA)
		buf_puts(c->out, buf_str(&c->code));
	return 0;
}

static void
show_code(PassCtx *c, Buf *b)
{
	buf_puts(b, c->coded ? buf_str(&c->code) : "// (no code emitted yet)\n");
}

/* the launcher header reads the launch contract from the CUDA C it goes with */
static int
emit_launcher(PassCtx *c)
{
	Err e = {0};

	if (!c->coded) {
		Loc nowhere = {"tilec", 0, 0};

		diag(c->d, nowhere, "emit-header: no CUDA C was emitted before it");
		return -1;
	}
	if (emit_header(c->a, c->prog, buf_str(&c->code), c->out, &e))
		return kernel_error(c, NULL, &e);
	return 0;
}

static void
show_out(PassCtx *c, Buf *b)
{
	buf_puts(b, buf_str(c->out));
}

void
passes_default(Arena *a, tilec_pass_list *l, int target)
{
	memset(l, 0, sizeof *l);
	l->a = a;
	insert(l, l->n, "verify-ir", verify_ir, NULL, NULL, PASS_ALWAYS, NULL);
	/* for the code only: a --dump=layouts shows the program as written */
	insert(l, l->n, "stage-epilogues", pass_stage_epilogues, NULL, NULL, PASS_LOWER, NULL);
	insert(l, l->n, "split-conversions", split_conversions, NULL, NULL, PASS_ALWAYS, NULL);
	insert(l, l->n, "infer-layouts", infer_layouts, NULL, NULL, PASS_ALWAYS, NULL);
	/* layout passes go here, before the diagnostics; convert-layouts lowers the
	 * conversions (convert.c) */
	insert(l, l->n, "convert-layouts", pass_convert_layouts, NULL, NULL, PASS_ALWAYS, NULL);
	insert(l, l->n, "layout-diagnostics", pass_layout_diagnostics, NULL, NULL, PASS_ALWAYS, NULL);
	/* lowering: for the outputs that are code */
	insert(l, l->n, "plan-gemms", plan_gemms, NULL, NULL, PASS_LOWER, show_gemms);
	insert(l, l->n, "plan-shared-memory", plan_shared_memory, NULL, NULL, PASS_LOWER, show_smem);
	insert(l, l->n, "plan-partitions", pass_plan_partitions, NULL, NULL, PASS_LOWER, show_partitions);
	insert(l, l->n, "plan-reduces", pass_plan_reduces, NULL, NULL, PASS_LOWER, show_reduces);
	insert(l, l->n, "plan-vectors", pass_plan_vectors, NULL, NULL, PASS_LOWER, show_vectors);
	insert(l, l->n, "plan-copies", pass_plan_copies, NULL, NULL, PASS_LOWER, show_copies);
	insert(l, l->n, "plan-pipelines", pass_plan_pipelines, NULL, NULL, PASS_LOWER, show_pipelines);
	insert(l, l->n, "lower-kernels", lower, NULL, NULL, PASS_LOWER, show_lowered);
	insert(l, l->n, "verify-lowered", verify_lowered, NULL, NULL, PASS_LOWER, show_lowered);
	/* the printers of the lowered IR */
	insert(l, l->n, target == TILEC_TARGET_HIP ? "emit-hip" : "emit-cuda", emit_code, NULL, NULL,
	       PASS_CODE, show_code);
	if (target != TILEC_TARGET_HIP)
		insert(l, l->n, "emit-header", emit_launcher, NULL, NULL, PASS_HEADER, show_out);
}

/* ---- the API a host or plugin pass sees ------------------------------------------- */

static const IrKernel *
kern(const tilec_ir *ir, int k)
{
	const PassCtx *c = (const PassCtx *)ir;
	const IrKernel *K;

	if (!c || k < 0)
		return NULL;
	for (K = c->prog->kernels; K && k; K = K->next)
		k--;
	return K;
}

static int
api_kernel_count(const tilec_ir *ir)
{
	const PassCtx *c = (const PassCtx *)ir;
	const IrKernel *K;
	int n = 0;

	for (K = c ? c->prog->kernels : NULL; K; K = K->next)
		n++;
	return n;
}

static const char *
api_kernel_name(const tilec_ir *ir, int k)
{
	const IrKernel *K = kern(ir, k);

	return K ? K->name : NULL;
}

static int
count(const IrStmt *s)
{
	int n = 0;

	for (; s; s = s->next) {
		n++;
		switch (s->kind) {
		case S_PARALLEL: n += count(s->u.par.body); break;
		case S_FOR: n += count(s->u.loop.body); break;
		case S_PIPELINE: n += count(s->u.pipe.body); break;
		case S_IF: n += count(s->u.cond.then) + count(s->u.cond.els); break;
		default: break;
		}
	}
	return n;
}

static int
api_stmt_count(const tilec_ir *ir, int k)
{
	const IrKernel *K = kern(ir, k);

	return K ? count(K->body) : -1;
}

static int
api_buffer_count(const tilec_ir *ir, int k)
{
	const IrKernel *K = kern(ir, k);

	return K ? K->nbuf : -1;
}

static const IrBuffer *
buffer(const tilec_ir *ir, int k, int b)
{
	const IrKernel *K = kern(ir, k);

	return K && b >= 0 && b < K->nbuf ? &K->bufs[b] : NULL;
}

static const char *
api_buffer_name(const tilec_ir *ir, int k, int b)
{
	const IrBuffer *B = buffer(ir, k, b);

	return B ? B->name : NULL;
}

static const char *
api_buffer_scope(const tilec_ir *ir, int k, int b)
{
	const IrBuffer *B = buffer(ir, k, b);

	return B ? memscope_name(B->scope) : NULL;
}

static int
api_buffer_has_layout(const tilec_ir *ir, int k, int b)
{
	const IrBuffer *B = buffer(ir, k, b);

	return B && B->layout;
}

static const char *
api_dump(tilec_ir *ir)
{
	PassCtx *c = (PassCtx *)ir;
	Buf b;
	const char *s;

	if (!c)
		return NULL;
	buf_init(&b);
	ir_dump(&b, c->prog);
	s = b.oom ? NULL : arena_strdup(c->a, buf_str(&b));
	buf_free(&b);
	return s;
}

static void
api_note(tilec_ir *ir, const char *msg)
{
	PassCtx *c = (PassCtx *)ir;
	Loc nowhere = {"tilec", 0, 0};

	if (c && msg)
		diag_note(c->d, nowhere, "%s", msg);
}

static const char *
api_output(tilec_ir *ir)
{
	PassCtx *c = (PassCtx *)ir;

	return c ? arena_strdup(c->a, buf_str(c->out)) : NULL;
}

static int
api_set_output(tilec_ir *ir, const char *text)
{
	PassCtx *c = (PassCtx *)ir;

	if (!c || !text)
		return -1;
	buf_reset(c->out);
	buf_puts(c->out, text);
	return c->out->oom ? -1 : 0;
}

static const char *
api_lowered(tilec_ir *ir)
{
	PassCtx *c = (PassCtx *)ir;
	Buf b;
	char *t;

	if (!c || !c->lir)
		return NULL;
	buf_init(&b);
	lir_dump(&b, c->lir);
	t = arena_strdup(c->a, buf_str(&b));
	buf_free(&b);
	return t;
}

static const tilec_ir_api the_api = {
	TILEC_PLUGIN_API_VERSION, api_kernel_count, api_kernel_name, api_stmt_count,
	api_buffer_count, api_buffer_name, api_buffer_scope, api_buffer_has_layout, api_dump, api_note,
	api_output, api_set_output, api_lowered,
};

/* ---- plugins ---------------------------------------------------------------------- */

static int
load_plugin(tilec_pass_list *l, Diags *d, const char *path, void **handle)
{
	Loc nowhere = {"tilec", 0, 0};
	tilec_plugin_get_info_fn get;
	const tilec_plugin_info *info;
	void *h;
	int i, at;

	*handle = NULL;
	if (!path) {
		diag(d, nowhere, "plugin: no path");
		return -1;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();

		diag(d, nowhere, "plugin '%s': %s", path, why ? why : "cannot load");
		return -1;
	}
	*handle = h;
	*(void **)&get = dlsym(h, TILEC_PLUGIN_ENTRY);
	if (!get) {
		diag(d, nowhere, "plugin '%s': no function %s", path, TILEC_PLUGIN_ENTRY);
		return -1;
	}
	info = get();
	/* version 1 plugins see the same table without its version 2 tail */
	if (!info || info->api_version < 1 || info->api_version > TILEC_PLUGIN_API_VERSION) {
		diag(d, nowhere, "plugin '%s': API version %d, tilec has %d", path,
		     info ? info->api_version : -1, TILEC_PLUGIN_API_VERSION);
		return -1;
	}
	if (info->npasses < 0 || (info->npasses && !info->passes)) {
		diag(d, nowhere, "plugin '%s': bad pass table", path);
		return -1;
	}
	for (i = 0; i < info->npasses; i++) {
		const tilec_pass_info *p = &info->passes[i];

		at = l->n;
		if (p->after) {
			at = tilec_pass_find(l, p->after);
			if (at < 0) {
				diag(d, nowhere, "plugin '%s': pass '%s' goes after '%s', which is not in "
				     "the pipeline", path, p->name ? p->name : "?", p->after);
				return -1;
			}
			at++;
		}
		if (tilec_pass_insert(l, at, p->name, p->run, p->arg)) {
			diag(d, nowhere, "plugin '%s': pass '%s' has a bad or duplicate name or no "
			     "function", path, p->name ? p->name : "(null)");
			return -1;
		}
	}
	return 0;
}

/* ---- the pipeline ------------------------------------------------------------------- */

static void
dumpir(PassCtx *c, const char *when, const Pass *p)
{
	buf_printf(c->log, "// -----// IR Dump %s %s //----- //\n", when, p->name);
	if (p->show)
		p->show(c, c->log);
	else
		ir_dump(c->log, c->prog);
}

/* does this compile's output need the pass to run? */
static int
needed(const PassCtx *c, const Pass *p)
{
	tilec_dump dk = c->o->dump;

	if (p->when == PASS_LOWER)
		return dk == TILEC_DUMP_CUDA || dk == TILEC_DUMP_HEADER || dk == TILEC_DUMP_LOWERED;
	if (p->when == PASS_CODE)
		return dk == TILEC_DUMP_CUDA || dk == TILEC_DUMP_HEADER;
	if (p->when == PASS_HEADER)
		return dk == TILEC_DUMP_HEADER;
	return 1;
}

static int
wants(const char *opt, const char *name)
{
	return opt && (!strcmp(opt, "all") || !strcmp(opt, name));
}

static int
runall(PassCtx *c, const tilec_pass_list *l)
{
	Loc nowhere = {"tilec", 0, 0};
	char msg[512];
	Err e = {0};
	int i, r;

	for (i = 0; i < l->n; i++) {
		const Pass *p = &l->v[i];

		if (!needed(c, p))
			continue;
		if (wants(c->o->print_before, p->name))
			dumpir(c, "Before", p);
		if (p->fn) {
			r = p->fn(c);
		} else {
			msg[0] = 0;
			r = p->ext((tilec_ir *)c, &the_api, p->arg, msg, sizeof msg);
			msg[sizeof msg - 1] = 0;
			if (r) {
				diag(c->d, nowhere, "pass '%s' failed: %s", p->name,
				     msg[0] ? msg : "(no message)");
			} else if (ir_verify(c->prog, &e)) {
				diag(c->d, nowhere, "pass '%s' broke the IR: %s", p->name, e.msg);
				r = -1;
			}
		}
		if (r || c->d->nerr)
			return -1;
		if (wants(c->o->print_after, p->name))
			dumpir(c, "After", p);
		/* the layout dumps are of inference's result, before the layout passes */
		if ((c->o->dump == TILEC_DUMP_LAYOUTS || c->o->dump == TILEC_DUMP_EXPLAIN) &&
		    !strcmp(p->name, "infer-layouts"))
			return 0;
	}
	return c->o->dump == TILEC_DUMP_CUDA || c->o->dump == TILEC_DUMP_HEADER ||
	       c->o->dump == TILEC_DUMP_LOWERED;
}

int
passes_pipeline(Arena *a, Diags *d, IrProgram *p, const tilec_options *o, const Target *t,
		Buf *out, Buf *log)
{
	Loc nowhere = {"tilec", 0, 0};
	tilec_pass_list l;
	PassCtx c;
	void **handles = NULL;
	int i, r = 0;

	memset(&c, 0, sizeof c);
	c.a = a;
	c.d = d;
	c.prog = p;
	c.o = o;
	c.out = out;
	c.log = log;
	c.tgt = t;
	c.warp_size = t ? t->warp_size : 32;
	buf_init(&c.code);
	passes_default(a, &l, o->target);
	if (o->nplugins < 0 || (o->nplugins > 0 && !o->plugins)) {
		diag(d, nowhere, "bad plugin list");
		return -1;
	}
	if (o->nplugins)
		handles = anewn(a, void *, o->nplugins);
	for (i = 0; i < o->nplugins && !r; i++)
		r = load_plugin(&l, d, o->plugins[i], &handles[i]);
	if (!r && o->pass_hook && o->pass_hook(&l, o->pass_hook_user)) {
		diag(d, nowhere, "the pass hook failed");
		r = -1;
	}
	if (!r) {
		const char *opt[2] = {o->print_before, o->print_after};

		for (i = 0; i < 2; i++) {
			if (opt[i] && strcmp(opt[i], "all") && tilec_pass_find(&l, opt[i]) < 0) {
				diag(d, nowhere, "--print-%s: no pass named '%s' (see --print-passes)",
				     i ? "after" : "before", opt[i]);
				r = -1;
			}
		}
	}
	if (!r && o->print_passes) {
		for (i = 0; i < l.n; i++)
			buf_printf(out, "%s\n", l.v[i].name);
		r = 1;
	}
	if (!r && !p)
		r = -1;
	if (!r && o->dump == TILEC_DUMP_HEADER && o->target != TILEC_TARGET_CUDA) {
		diag(d, nowhere, "the launcher header is written for the cuda target only");
		r = -1;
	}
	if (!r && !t) {
		diag(d, nowhere, "internal error: no target for the passes");
		r = -1;
	}
	if (!r)
		r = runall(&c, &l);
	buf_free(&c.code);
	for (i = 0; i < o->nplugins; i++)
		if (handles[i])
			dlclose(handles[i]);
	return r;
}
