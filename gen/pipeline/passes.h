/*
 * passes.h: the pass manager (passes.c). The front end (parse, sema with
 * helper inlining) makes the tile IR; everything after it is a named pass of
 * one list: verify-ir, split-conversions, infer-layouts, convert-layouts,
 * layout-diagnostics, plan-gemms, plan-shared-memory, plan-partitions, plan-reduces,
 * plan-vectors, plan-copies, plan-pipelines (gen/lower/plan.h), lower-kernels, verify-lowered,
 * emit-cuda or emit-hip (the C printer of the lowered IR), emit-header
 * (cuda), plus passes a host hook inserts and passes loaded from plugins
 * (runtime/tilec_plugin.h). --print-passes, --print-before and --print-after
 * inspect the list and what each pass leaves.
 */
#ifndef PASSES_H
#define PASSES_H

#include "ir.h"
#include "target.h"
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
	const Target *tgt;  /* the compile's target (NULL for --print-passes alone) */
	struct LProgram *lir; /* the lowered kernels (lower-kernels), for the printers */
	Buf code;   /* the emitted CUDA or HIP C (emit-cuda, emit-hip), for emit-header */
	int coded;  /* the emit pass ran */
};

/* when a built-in pass runs: always, or only for an output that needs it */
enum { PASS_ALWAYS, PASS_LOWER, PASS_CODE, PASS_HEADER };

typedef struct Pass {
	const char *name;
	PassFn fn;          /* built-in, or NULL */
	tilec_pass_fn ext;  /* host or plugin pass */
	void *arg;
	int when;           /* PASS_* (built-in passes; host and plugin passes always run) */
	/* what --print-before/--print-after shows for it: NULL the tile IR */
	void (*show)(PassCtx *c, Buf *b);
} Pass;

struct tilec_pass_list {
	Arena *a;
	int n, cap;
	Pass *v;
};

/* the built-in list for a target (0 cuda, 1 hip) */
void passes_default(Arena *a, tilec_pass_list *l, int target);
/* insert a built-in pass before index */
int passes_insert_builtin(tilec_pass_list *l, int index, const char *name, PassFn fn);

/*
 * Everything after sema (p NULL: --print-passes only): build the list, load the plugins, call the host
 * hook, check the print options, run the passes. The output options pick how far it goes:
 * --dump=layouts and --dump=explain stop after infer-layouts, the IR output after the layout
 * passes (plan-shared-memory and the emitters are skipped), --dump=cuda and --dump=header run
 * the emitters, which write the output. Returns 0 to go on to the output (the IR or the layout
 * dump, written by the caller), 1 when the output is complete (--print-passes, code), -1 on
 * errors (in d).
 */
int passes_pipeline(Arena *a, Diags *d, IrProgram *p, const tilec_options *o, const Target *t,
		    Buf *out, Buf *log);

/* the last layout pass (dumplayout.c): assertions, then dump_layout text */
int pass_layout_diagnostics(PassCtx *c);

#endif
