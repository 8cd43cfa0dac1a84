/*
 * verify.c: the invariants of the lowered kernel IR (lir.h), checked by the
 * verify-lowered pass after the lowering and by any pass that rewrites it.
 */
#include "lir.h"

typedef struct {
	const LKernel *k;
	Err *err;
	const LNode *div;    /* the innermost per-thread if around the node, or NULL */
} V;

static int
bad(V *v, const char *what, const LNode *n)
{
	const char *t = n->kind == L_TEXT || n->kind == L_COMMENT ? n->text :
			n->kind == L_IF ? n->u.cond.cond : n->kind == L_FOR ? n->u.loop.var :
			n->kind == L_DECL ? n->u.decl.name : n->kind == L_STORE || n->kind == L_ASSIGN ? n->u.set.lhs :
			n->kind == L_ASYNC_COPY ? n->u.acp.dst : NULL;

	return err_set(v->err, "lowered kernel '%s': %s (at '%s')", v->k->name, what, t ? t : "?");
}

static int list(V *v, const LList *l);

static int
node(V *v, const LNode *n)
{
	const LNode *save = v->div;
	int r = 0;

	switch (n->kind) {
	case L_TEXT:
	case L_COMMENT:
		if (!n->text)
			return bad(v, "text node without text", n);
		break;
	case L_BLOCK:
		r = list(v, &n->body);
		break;
	case L_FOR:
		if (!n->u.loop.var || !n->u.loop.lo || !n->u.loop.end)
			return bad(v, "loop without its variable or bounds", n);
		if (n->u.loop.unroll && n->u.loop.trip < 0)
			return bad(v, "an unrolled loop needs a constant trip count", n);
		if (n->u.loop.step < 1)
			return bad(v, "a loop steps by a positive count", n);
		if (n->u.loop.nobrace && (!n->body.head || n->body.head != n->body.tail))
			return bad(v, "a loop without braces has exactly one statement", n);
		r = list(v, &n->body);
		break;
	case L_IF:
		if (!n->u.cond.cond)
			return bad(v, "if without a condition", n);
		if (n->u.cond.guard && (!n->body.head || n->body.head != n->body.tail || n->els.head != n->els.tail))
			return bad(v, "a guard covers exactly one statement (and one in its else)", n);
		if (n->u.cond.divergent)
			v->div = n;
		r = list(v, &n->body) || list(v, &n->els) ? -1 : 0;
		v->div = save;
		break;
	case L_DECL:
		if (!n->u.decl.type || !n->u.decl.name || n->u.decl.count < 0 || (n->u.decl.init2 && !n->u.decl.name2))
			return bad(v, "declaration without type or name", n);
		if (n->u.decl.ix && (!n->u.decl.ixnames || n->u.decl.init))
			return bad(v, "an index initializer needs the names of its variables and no text", n);
		break;
	case L_STORE:
		if (n->u.set.bytes != 1 && n->u.set.bytes != 2 && n->u.set.bytes != 4 && n->u.set.bytes != 8 &&
		    n->u.set.bytes != 16)
			return bad(v, "a store moves 1, 2, 4, 8 or 16 bytes", n);
		if (n->u.set.mem == LM_LOCAL)
			return bad(v, "a store into registers is an assignment", n);
		/* fall through */
	case L_ASSIGN:
		if (!n->u.set.lhs || !n->u.set.rhs)
			return bad(v, "assignment without its sides", n);
		break;
	case L_BARRIER:
		if (v->div) {
			err_set(v->err, "lowered kernel '%s': a block barrier under the per-thread condition '%s' "
				"(threads that skip it would never arrive)", v->k->name, v->div->u.cond.cond);
			return -1;
		}
		break;
	case L_ASYNC_WAIT:
		if (n->u.wait.n < 0)
			return bad(v, "negative async wait count", n);
		break;
	case L_SMEM_VIEW:
		if (!n->u.view.type || !n->u.view.name || n->u.view.offset < 0 || n->u.view.stages < 1)
			return bad(v, "a shared view needs its type, name, offset and stages", n);
		break;
	case L_LOAD:
		if (!n->u.load.vtype || !n->u.load.name || !n->u.load.addr ||
		    (n->u.load.bytes != 4 && n->u.load.bytes != 8 && n->u.load.bytes != 16))
			return bad(v, "a vector load moves 4, 8 or 16 bytes into a named register", n);
		break;
	case L_COORDS:
		if (n->u.wait.n != 32 && n->u.wait.n != 64)
			return bad(v, "thread coordinates for a warp of 32 or 64", n);
		break;
	case L_CALL:
		if (!n->u.call.fn || !n->u.call.args)
			return bad(v, "a call without its function or arguments", n);
		if ((int)n->u.call.cat < 0 || n->u.call.cat >= LC_KINDS)
			return bad(v, "a call of no category", n);
		break;
	case L_ASYNC_COPY:
		if (!n->u.acp.dst || !n->u.acp.src || n->u.acp.bytes != 16)
			return bad(v, "an async copy moves 16 bytes between two addresses", n);
		break;
	case L_ASYNC_COMMIT:
		break;
	default:
		return bad(v, "unknown node kind", n);
	}
	return r;
}

static int
list(V *v, const LList *l)
{
	const LNode *n;

	for (n = l->head; n; n = n->next)
		if (node(v, n))
			return -1;
	return 0;
}

int
lir_verify(const LProgram *p, Err *err)
{
	const LKernel *k;
	V v = {0};

	if (!p)
		return err_set(err, "lir_verify: null program");
	v.err = err;
	for (k = p->kernels; k; k = k->next) {
		v.k = k;
		v.div = NULL;
		if (!k->name || k->threads <= 0 || k->warp_size <= 0)
			return err_set(err, "lowered kernel '%s': no name, threads or warp size", k->name ? k->name : "?");
		if (list(&v, &k->checks) || list(&v, &k->body))
			return -1;
	}
	return 0;
}
