/*
 * infer_dump.c: `tilec --dump=layouts`: every buffer's layout and every
 * nest's loop layout in a stable text form, the printed Layout/Fragment
 * form followed by the CuTe form where the layout is representable.
 */
#include "infer_int.h"
#include "layout_cute.h"

static void
cute_form(Buf *b, const Layout *L)
{
	Arena a;
	Err e = {0};
	CuteComposed c;
	CuteLayout cl;
	int r;

	arena_init(&a);
	if (L->is_frag) {
		r = frag_to_cute(&a, L, &cl, &e);
		if (r == 1) {
			buf_puts(b, "    cute: ");
			cute_print_layout(b, cl);
			buf_putc(b, '\n');
		}
	} else {
		r = layout_to_cute(&a, L, LC_COMPOSED, &c, &e);
		if (r == 1) {
			buf_puts(b, "    cute: ");
			cute_print_composed(b, &c);
			buf_putc(b, '\n');
		}
	}
	if (r != 1)
		buf_puts(b, "    cute: not representable\n");
	arena_free(&a);
}

static void
dump_stmts(Buf *b, const IrStmt *s)
{
	for (; s; s = s->next) {
		if (s->loop_layout) {
			buf_printf(b, "  %s #%d at %d:%d\n    ", inf_stmt_name(s), s->id, s->loc.line,
				   s->loc.col);
			layout_print(b, s->loop_layout);
			buf_putc(b, '\n');
			cute_form(b, s->loop_layout);
		}
		switch (s->kind) {
		case S_FOR: dump_stmts(b, s->u.loop.body); break;
		case S_PIPELINE: dump_stmts(b, s->u.pipe.body); break;
		case S_IF:
			dump_stmts(b, s->u.cond.then);
			dump_stmts(b, s->u.cond.els);
			break;
		default: break;
		}
	}
}

void
infer_dump(Buf *b, const IrProgram *p)
{
	const IrKernel *k;
	int i, d;

	if (!b || !p)
		return;
	for (k = p->kernels; k; k = k->next) {
		buf_printf(b, "kernel %s threads %lld\n", k->name, (long long)k->threads);
		for (i = 0; i < k->nbuf; i++) {
			const IrBuffer *B = &k->bufs[i];
			if (B->scope == MEM_GLOBAL)
				continue;
			buf_printf(b, "  %s %s: %s[", memscope_name(B->scope), B->name, dtype_name(B->dtype));
			for (d = 0; d < B->ndim; d++)
				buf_printf(b, "%s%lld", d ? ", " : "", (long long)B->dims[d].c);
			buf_puts(b, "]\n    ");
			if (B->layout) {
				layout_print(b, B->layout);
				buf_putc(b, '\n');
				cute_form(b, B->layout);
			} else {
				buf_puts(b, "(none)\n");
			}
		}
		dump_stmts(b, k->body);
	}
}
