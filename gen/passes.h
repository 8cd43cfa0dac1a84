/*
 * passes.h: the pass manager (passes.c). After sema the IR goes through a
 * named list of passes: the built-in ones (verify-ir, layout passes such as
 * inference, layout-diagnostics last), passes a host hook inserts, and
 * passes loaded from plugins (runtime/tilec_plugin.h). --print-passes,
 * --print-before and --print-after inspect the list and the IR between passes.
 */
#ifndef PASSES_H
#define PASSES_H

#include "ir.h"
#include "tilec.h"
#include "tilec_plugin.h"

typedef struct PassCtx PassCtx;
/* a built-in pass: 0 ok, -1 failed with diagnostics in c->d */
typedef int (*PassFn)(PassCtx *c);

struct PassCtx {
	Arena *a;
	Diags *d;
	IrProgram *prog;
	const tilec_options *o;
	int warp_size;
	Buf *out;   /* the compile's output (layout dumps go here with layout_dump_to_output) */
	Buf *log;   /* the compile's log (IR dumps between passes, layout dumps) */
};

typedef struct Pass {
	const char *name;
	PassFn fn;          /* built-in, or NULL */
	tilec_pass_fn ext;  /* host or plugin pass */
	void *arg;
} Pass;

struct tilec_pass_list {
	Arena *a;
	int n, cap;
	Pass *v;
};

/* the built-in list: verify-ir, layout-diagnostics */
void passes_default(Arena *a, tilec_pass_list *l);
/* insert a built-in pass before index */
int passes_insert_builtin(tilec_pass_list *l, int index, const char *name, PassFn fn);

/*
 * Everything after sema (p NULL: --print-passes only): build the list, load the plugins, call the host
 * hook, check the print options, run the passes. Returns 0 to go on to the
 * output, 1 when the output is complete (--print-passes), -1 on errors (in d).
 */
int passes_pipeline(Arena *a, Diags *d, IrProgram *p, const tilec_options *o, Buf *out, Buf *log);

/* the last layout pass (dumplayout.c): assertions, then dump_layout text */
int pass_layout_diagnostics(PassCtx *c);

#endif
