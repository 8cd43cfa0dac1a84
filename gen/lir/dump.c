/*
 * dump.c: the lowered kernel IR as text (--dump=lowered): one node per
 * line, nested by two spaces, every decision written out (trip counts,
 * guards and whether threads may disagree on them, memory and bytes of each
 * store, barriers, async copy groups). Statements still carried as C text
 * show as `c: ...`; the kernel's first line counts them.
 */
#include "lir.h"

static void list(Buf *b, const LList *l, int d);

static void
pad(Buf *b, int d)
{
	while (d-- > 0)
		buf_puts(b, "  ");
}

static const char *
memname(LMem m)
{
	return m == LM_GLOBAL ? "global" : m == LM_SHARED ? "shared" : "local";
}

static void
node(Buf *b, const LNode *n, int d)
{
	pad(b, d);
	switch (n->kind) {
	case L_TEXT: buf_printf(b, "c: %s\n", n->text); break;
	case L_COMMENT: buf_printf(b, "// %s\n", n->text); break;
	case L_BLOCK:
		buf_printf(b, "block%s%s\n", n->text ? " // " : "", n->text ? n->text : "");
		list(b, &n->body, d + 1);
		break;
	case L_FOR:
		buf_printf(b, "for %s in [%s, %s)", n->u.loop.var, n->u.loop.lo, n->u.loop.end);
		if (n->u.loop.stepx)
			buf_printf(b, " step %s", n->u.loop.stepx);
		else if (n->u.loop.step != 1)
			buf_printf(b, " step %lld", (long long)n->u.loop.step);
		if (n->u.loop.type)
			buf_printf(b, " %s", n->u.loop.type);
		if (n->u.loop.trip >= 0)
			buf_printf(b, " trip %lld", (long long)n->u.loop.trip);
		buf_printf(b, "%s%s%s%s\n", n->u.loop.unroll ? " unrolled" : n->u.loop.rolled ? " rolled" : "",
			   n->u.loop.hoist ? " end-once" : "", n->text ? " // " : "", n->text ? n->text : "");
		list(b, &n->body, d + 1);
		break;
	case L_IF:
		buf_printf(b, "if%s (%s)\n", n->u.cond.divergent ? " per-thread" : " uniform", n->u.cond.cond);
		list(b, &n->body, d + 1);
		if (n->els.head) {
			pad(b, d);
			buf_printf(b, "else%s%s\n", n->text ? " // " : "", n->text ? n->text : "");
			list(b, &n->els, d + 1);
		}
		break;
	case L_DECL:
		buf_puts(b, "decl ");
		lir_c_decl(b, n, "index ");
		buf_putc(b, '\n');
		break;
	case L_ASSIGN: buf_printf(b, "set %s = %s\n", n->u.set.lhs, n->u.set.rhs); break;
	case L_STORE:
		if (n->u.set.atomic) {
			buf_printf(b, "atomic %s %d bytes: %s(%s, %s)\n", memname(n->u.set.mem), n->u.set.bytes,
				   n->u.set.atomic, n->u.set.lhs, n->u.set.rhs);
			break;
		}
		buf_printf(b, "store %s %d bytes: %s = %s\n", memname(n->u.set.mem), n->u.set.bytes, n->u.set.lhs,
			   n->u.set.rhs);
		break;
	case L_BARRIER:
		if (n->u.bar.kind == LB_NAMED)
			buf_printf(b, "barrier named 1, %lld threads\n", (long long)n->u.bar.count);
		else
			buf_puts(b, "barrier block\n");
		break;
	case L_SMEM_VIEW:
		buf_printf(b, "shared %s %s at byte %lld, %d stage%s of %lld elements, swizzle %s\n", n->u.view.type,
			   n->u.view.name, (long long)n->u.view.offset, n->u.view.stages, n->u.view.stages > 1 ? "s" : "",
			   (long long)n->u.view.stage_elems, n->u.view.swizzle);
		break;
	case L_LOAD:
		buf_printf(b, "load %s %d bytes: %s = %s\n", memname(n->u.load.mem), n->u.load.bytes, n->u.load.name,
			   n->u.load.addr);
		break;
	case L_COORDS: buf_printf(b, "thread coordinates again (warp %d)\n", n->u.wait.n); break;
	case L_CALL: {
		static const char *const cat[] = {"mma", "ldmatrix", "fence", "mma-group", "mbarrier", "tma", "call"};
		_Static_assert(sizeof cat / sizeof cat[0] == LC_KINDS, "a name for every LCall");

		buf_printf(b, "%s %s(%s)\n", cat[n->u.call.cat], n->u.call.fn, n->u.call.args);
		break;
	}
	case L_ASYNC_COPY:
		buf_printf(b, "async copy %d bytes: %s <- %s", n->u.acp.bytes, n->u.acp.dst, n->u.acp.src);
		if (n->u.acp.pred)
			buf_printf(b, " zeros unless %s", n->u.acp.pred);
		buf_putc(b, '\n');
		break;
	case L_ASYNC_COMMIT: buf_puts(b, "async commit\n"); break;
	case L_ASYNC_WAIT: buf_printf(b, "async wait %d\n", n->u.wait.n); break;
	case L_KINDS: break;
	}
}

static void
list(Buf *b, const LList *l, int d)
{
	const LNode *n;

	for (n = l->head; n; n = n->next)
		node(b, n, d);
}

static void
count(const LList *l, int *all, int *text)
{
	const LNode *n;

	for (n = l->head; n; n = n->next) {
		++*all;
		*text += n->kind == L_TEXT;
		count(&n->body, all, text);
		count(&n->els, all, text);
	}
}

void
lir_dump(Buf *b, const LProgram *p)
{
	const LKernel *k;
	int i;

	buf_printf(b, "lowered for %s (%s)\n", p->arch, p->target == 1 ? "hip" : "cuda");
	for (k = p->kernels; k; k = k->next) {
		int all = 0, text = 0;

		count(&k->checks, &all, &text);
		count(&k->body, &all, &text);
		buf_printf(b, "kernel %s: %lld threads, warp %d, %lld bytes of shared memory", k->name,
			   (long long)k->threads, k->warp_size, (long long)k->smem_bytes);
		if (k->has_smem)
			buf_printf(b, " aligned %lld%s", (long long)k->smem_align, k->smem_optin ? ", opt-in" : "");
		buf_printf(b, "; %d nodes, %d still C text\n", all, text);
		for (i = 0; i < k->nparam; i++)
			buf_printf(b, "  param %s%s %s\n", k->params[i].type, k->params[i].is_ptr ? " *" : "",
				   k->params[i].name);
		for (i = 0; i < k->ntab; i++)
			buf_printf(b, "  table %s: %lld entries in [%lld, %lld]\n", k->tabs[i]->name,
				   (long long)k->tabs[i]->n, (long long)k->tabs[i]->lo, (long long)k->tabs[i]->hi);
		if (k->checks.head) {
			buf_puts(b, "  at entry\n");
			list(b, &k->checks, 2);
		}
		buf_puts(b, "  body\n");
		list(b, &k->body, 2);
	}
}
