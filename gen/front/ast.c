/*
 * ast.c: syntax-tree constructors (called from the grammar's actions) and
 * ast_dump, the stable S-expression text of a tree used by --dump=ast and
 * the tests. Constructors copy names out of the source into the arena and
 * record each expression's height so the parser can bound nesting.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

static const char *const kind_names[] = {
#define X(k, s) s,
	AST_KINDS(X)
#undef X
};

static const char *const op_names[] = {
#define X(k, s) s,
	AST_OPS(X)
#undef X
};

const char *
ast_kind_name(NodeKind k)
{
	return (unsigned)k < N_NKINDS ? kind_names[k] : "?";
}

const char *
ast_op_name(AstOp o)
{
	return (unsigned)o < OP_NOPS ? op_names[o] : "?";
}

void
ast_append(NodeList *l, Node *n)
{
	if (!n)
		return;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->n++;
	while (n->next) {
		n = n->next;
		l->n++;
	}
	l->tail = n;
}

int
ast_count(const Node *n)
{
	int c = 0;

	for (; n; n = n->next)
		c++;
	return c;
}

Node *
ast_new(Arena *a, NodeKind k, Loc loc)
{
	Node *n = anew(a, Node);

	if (!n)
		return NULL;
	n->kind = k;
	n->loc = loc;
	n->depth = 1;
	return n;
}

static const char *
name(Arena *a, Tok t)
{
	return arena_strndup(a, t.s, (size_t)t.len);
}

/* height of a node above its children (lists: their deepest member) */
static int
height(const Node *n)
{
	int d = 0;

	for (; n; n = n->next)
		if (n->depth > d)
			d = n->depth;
	return d;
}

static Node *
grow(Node *n, int d)
{
	if (n && d + 1 > n->depth)
		n->depth = d + 1;
	return n;
}

Node *
ast_int(Arena *a, Tok t)
{
	Node *n = ast_new(a, N_INT, t.loc);

	if (n)
		n->u.ival = t.ival;
	return n;
}

Node *
ast_float(Arena *a, Tok t)
{
	Node *n = ast_new(a, N_FLOAT, t.loc);

	if (n)
		n->u.fval = t.fval;
	return n;
}

Node *
ast_str(Arena *a, Tok t)
{
	Node *n = ast_new(a, N_STR, t.loc);

	if (n) {
		n->u.str.s = t.sval ? t.sval : "";
		n->u.str.len = t.slen;
	}
	return n;
}

Node *
ast_bool(Arena *a, Tok t, int v)
{
	Node *n = ast_new(a, N_BOOL, t.loc);

	if (n)
		n->u.bval = v != 0;
	return n;
}

Node *
ast_ident(Arena *a, Tok t)
{
	Node *n = ast_new(a, N_IDENT, t.loc);

	if (n)
		n->u.name = name(a, t);
	return n;
}

Node *
ast_unary(Arena *a, Tok op, AstOp o, Node *x)
{
	Node *n = ast_new(a, N_UNARY, op.loc);

	if (!n)
		return NULL;
	n->u.unary.op = o;
	n->u.unary.x = x;
	return grow(n, x ? x->depth : 0);
}

Node *
ast_binary(Arena *a, Tok op, AstOp o, Node *l, Node *r)
{
	Node *n = ast_new(a, N_BINARY, op.loc);
	int dl = l ? l->depth : 0, dr = r ? r->depth : 0;

	if (!n)
		return NULL;
	n->u.bin.op = o;
	n->u.bin.l = l;
	n->u.bin.r = r;
	return grow(n, dl > dr ? dl : dr);
}

Node *
ast_condexpr(Arena *a, Tok q, Node *c, Node *x, Node *y)
{
	Node *n = ast_new(a, N_COND, q.loc);
	int d = 0;

	if (!n)
		return NULL;
	n->u.cond.cond = c;
	n->u.cond.then = x;
	n->u.cond.els = y;
	if (c && c->depth > d)
		d = c->depth;
	if (x && x->depth > d)
		d = x->depth;
	if (y && y->depth > d)
		d = y->depth;
	return grow(n, d);
}

Node *
ast_call(Arena *a, Tok nm, NodeList args)
{
	Node *n = ast_new(a, N_CALL, nm.loc);

	if (!n)
		return NULL;
	n->u.call.name = name(a, nm);
	n->u.call.args = args.head;
	n->u.call.nargs = args.n;
	return grow(n, height(args.head));
}

Node *
ast_index(Arena *a, Tok lbr, Node *base, NodeList idx)
{
	Node *n = ast_new(a, N_INDEX, base ? base->loc : lbr.loc);
	int d = height(idx.head);

	if (!n)
		return NULL;
	n->u.index.base = base;
	n->u.index.idx = idx.head;
	n->u.index.nidx = idx.n;
	if (base && base->depth > d)
		d = base->depth;
	return grow(n, d);
}

Node *
ast_slice(Arena *a, Tok colon, Node *lo, Node *hi)
{
	Node *n = ast_new(a, N_SLICE, lo ? lo->loc : colon.loc);
	int dl = lo ? lo->depth : 0, dh = hi ? hi->depth : 0;

	if (!n)
		return NULL;
	n->u.slice.lo = lo;
	n->u.slice.hi = hi;
	return grow(n, dl > dh ? dl : dh);
}

Node *
ast_named(Arena *a, Tok nm, Node *value)
{
	Node *n = ast_new(a, N_NAMED, nm.loc);

	if (!n)
		return NULL;
	n->u.bind.name = name(a, nm);
	n->u.bind.value = value;
	return grow(n, value ? value->depth : 0);
}

Node *
ast_list(Arena *a, Tok lbr, NodeList items)
{
	Node *n = ast_new(a, N_LIST, lbr.loc);

	if (!n)
		return NULL;
	n->u.list.items = items.head;
	n->u.list.n = items.n;
	return grow(n, height(items.head));
}

Node *
ast_const(Arena *a, Tok nm, Node *value)
{
	Node *n = ast_new(a, N_CONST, nm.loc);

	if (!n)
		return NULL;
	n->u.bind.name = name(a, nm);
	n->u.bind.value = value;
	return n;
}

Node *
ast_let(Arena *a, Tok kw, Tok nm, Node *value)
{
	Node *n = ast_new(a, N_LET, kw.loc);

	if (!n)
		return NULL;
	n->u.bind.name = name(a, nm);
	n->u.bind.value = value;
	return n;
}

Node *
ast_assign(Arena *a, Tok op, AstOp o, Node *lhs, Node *rhs)
{
	Node *n = ast_new(a, N_ASSIGN, lhs ? lhs->loc : op.loc);

	if (!n)
		return NULL;
	n->u.assign.op = o;
	n->u.assign.lhs = lhs;
	n->u.assign.rhs = rhs;
	return n;
}

Node *
ast_for(Arena *a, Tok kw, NodeList vars, Node *iter, NodeList body)
{
	Node *n = ast_new(a, N_FOR, kw.loc);

	if (!n)
		return NULL;
	n->u.loop.vars = vars.head;
	n->u.loop.nvars = vars.n;
	n->u.loop.iter = iter;
	n->u.loop.body = body.head;
	return n;
}

Node *
ast_if(Arena *a, Tok kw, Node *c, NodeList then, NodeList els)
{
	Node *n = ast_new(a, N_IF, kw.loc);

	if (!n)
		return NULL;
	n->u.cond.cond = c;
	n->u.cond.then = then.head;
	n->u.cond.els = els.head;
	return n;
}

Node *
ast_decl(Arena *a, NodeKind k, Tok nm, Scope sc, Tok dtype, NodeList *dims)
{
	Node *n = ast_new(a, k, nm.loc);

	if (!n)
		return NULL;
	n->u.decl.name = name(a, nm);
	n->u.decl.scope = sc;
	n->u.decl.dtype = name(a, dtype);
	n->u.decl.dtloc = dtype.loc;
	if (dims) {
		n->u.decl.tensor = 1;
		n->u.decl.dims = dims->head;
		n->u.decl.ndim = dims->n;
	}
	return n;
}

Node *
ast_strides(Arena *a, Node *n, Tok kw, NodeList strides)
{
	(void)a;
	if (!n)
		return NULL;
	n->u.decl.has_strides = 1;
	n->u.decl.strides = strides.head;
	n->u.decl.nstrides = strides.n;
	n->u.decl.strloc = kw.loc;
	return n;
}

Node *
ast_kernel(Arena *a, Tok nm, NodeList params, NodeList grid, Node *threads, NodeList body)
{
	Node *n = ast_new(a, N_KERNEL, nm.loc);

	if (!n)
		return NULL;
	n->u.fn.name = name(a, nm);
	n->u.fn.params = params.head;
	n->u.fn.nparams = params.n;
	n->u.fn.grid = grid.head;
	n->u.fn.ngrid = grid.n;
	n->u.fn.threads = threads;
	n->u.fn.body = body.head;
	return n;
}

Node *
ast_func(Arena *a, Tok nm, NodeList params, NodeList body)
{
	Node *n = ast_new(a, N_FUNC, nm.loc);

	if (!n)
		return NULL;
	n->u.fn.name = name(a, nm);
	n->u.fn.params = params.head;
	n->u.fn.nparams = params.n;
	n->u.fn.body = body.head;
	return n;
}

/* ---- dump ------------------------------------------------------------------ */

static void dumpstmt(Buf *b, const Node *n, int ind);
static void dumpstmts(Buf *b, const Node *list, int ind);

/* the shortest %g spelling that reads back as the same double, always with '.' or 'e' */
static void
dumpfloat(Buf *b, double v)
{
	char s[40];
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	buf_puts(b, s);
	if (!strpbrk(s, ".eninf"))
		buf_puts(b, ".0");
}

static void
dumpstr(Buf *b, const char *s, size_t n)
{
	size_t i;

	buf_putc(b, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c == '\n')
			buf_puts(b, "\\n");
		else if (c == '\t')
			buf_puts(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\x%02x", c);
		else
			buf_putc(b, (char)c);
	}
	buf_putc(b, '"');
}

static void
dumplist(Buf *b, const Node *n)
{
	for (; n; n = n->next) {
		buf_putc(b, ' ');
		ast_dump_expr(b, n);
	}
}

static void
dumpdims(Buf *b, const Node *n)
{
	buf_puts(b, " [");
	for (; n; n = n->next) {
		ast_dump_expr(b, n);
		if (n->next)
			buf_putc(b, ' ');
	}
	buf_putc(b, ']');
}

static void
dumpdecl(Buf *b, const Node *n)
{
	static const char *scopes[] = {"", "shared ", "local "};

	if (n->kind == N_BUFFER)
		buf_printf(b, "(%s %s", n->u.decl.scope == SCOPE_SHARED ? "shared" : "local",
			   n->u.decl.name);
	else
		buf_printf(b, "(param %s", n->u.decl.name);
	buf_putc(b, ' ');
	if (n->kind == N_PARAM && (unsigned)n->u.decl.scope < countof(scopes))
		buf_puts(b, scopes[n->u.decl.scope]);
	buf_puts(b, n->u.decl.dtype);
	if (n->u.decl.tensor)
		dumpdims(b, n->u.decl.dims);
	if (n->u.decl.has_strides) {
		buf_puts(b, " strides");
		dumpdims(b, n->u.decl.strides);
	}
	buf_putc(b, ')');
}

void
ast_dump_expr(Buf *b, const Node *n)
{
	if (!b)
		return;
	if (!n) {
		buf_puts(b, "<null>");
		return;
	}
	switch (n->kind) {
	case N_INT:
		buf_printf(b, "%lld", (long long)n->u.ival);
		break;
	case N_FLOAT:
		dumpfloat(b, n->u.fval);
		break;
	case N_STR:
		dumpstr(b, n->u.str.s, n->u.str.len);
		break;
	case N_BOOL:
		buf_puts(b, n->u.bval ? "true" : "false");
		break;
	case N_IDENT:
		buf_puts(b, n->u.name);
		break;
	case N_UNARY:
		buf_printf(b, "(%s ", ast_op_name(n->u.unary.op));
		ast_dump_expr(b, n->u.unary.x);
		buf_putc(b, ')');
		break;
	case N_BINARY:
		buf_printf(b, "(%s ", ast_op_name(n->u.bin.op));
		ast_dump_expr(b, n->u.bin.l);
		buf_putc(b, ' ');
		ast_dump_expr(b, n->u.bin.r);
		buf_putc(b, ')');
		break;
	case N_COND:
		buf_puts(b, "(?: ");
		ast_dump_expr(b, n->u.cond.cond);
		buf_putc(b, ' ');
		ast_dump_expr(b, n->u.cond.then);
		buf_putc(b, ' ');
		ast_dump_expr(b, n->u.cond.els);
		buf_putc(b, ')');
		break;
	case N_CALL:
		buf_printf(b, "(call %s", n->u.call.name);
		dumplist(b, n->u.call.args);
		buf_putc(b, ')');
		break;
	case N_INDEX:
		buf_puts(b, "(index ");
		ast_dump_expr(b, n->u.index.base);
		dumplist(b, n->u.index.idx);
		buf_putc(b, ')');
		break;
	case N_SLICE:
		buf_puts(b, "(: ");
		ast_dump_expr(b, n->u.slice.lo);
		buf_putc(b, ' ');
		ast_dump_expr(b, n->u.slice.hi);
		buf_putc(b, ')');
		break;
	case N_NAMED:
		buf_printf(b, "(= %s ", n->u.bind.name);
		ast_dump_expr(b, n->u.bind.value);
		buf_putc(b, ')');
		break;
	case N_LIST:
		buf_putc(b, '[');
		for (n = n->u.list.items; n; n = n->next) {
			ast_dump_expr(b, n);
			if (n->next)
				buf_putc(b, ' ');
		}
		buf_putc(b, ']');
		break;
	case N_PARAM:
	case N_BUFFER:
		dumpdecl(b, n);
		break;
	case N_CONST:
	case N_KERNEL:
	case N_FUNC:
	case N_ASSIGN:
	case N_LET:
	case N_FOR:
	case N_IF:
		dumpstmt(b, n, 0);
		break;
	default:
		buf_printf(b, "(?%d)", (int)n->kind);
		break;
	}
}

static void
indent(Buf *b, int ind)
{
	buf_putc(b, '\n');
	while (ind-- > 0)
		buf_putc(b, ' ');
}

/* one statement or declaration; nested statements go on lines indented by ind+2 */
static void
dumpstmt(Buf *b, const Node *n, int ind)
{
	const Node *c;

	switch (n->kind) {
	case N_CONST:
	case N_LET:
		buf_printf(b, "(%s %s ", n->kind == N_CONST ? "const" : "let", n->u.bind.name);
		ast_dump_expr(b, n->u.bind.value);
		buf_putc(b, ')');
		break;
	case N_KERNEL:
	case N_FUNC:
		buf_printf(b, "(%s %s", ast_kind_name(n->kind), n->u.fn.name);
		for (c = n->u.fn.params; c; c = c->next) {
			indent(b, ind + 2);
			dumpdecl(b, c);
		}
		if (n->kind == N_KERNEL) {
			indent(b, ind + 2);
			buf_puts(b, "(grid");
			dumplist(b, n->u.fn.grid);
			buf_putc(b, ')');
			indent(b, ind + 2);
			buf_puts(b, "(threads ");
			ast_dump_expr(b, n->u.fn.threads);
			buf_putc(b, ')');
		}
		dumpstmts(b, n->u.fn.body, ind + 2);
		buf_putc(b, ')');
		break;
	case N_ASSIGN:
		if (n->u.assign.op == OP_NONE)
			buf_puts(b, "(= ");
		else
			buf_printf(b, "(%s= ", ast_op_name(n->u.assign.op));
		ast_dump_expr(b, n->u.assign.lhs);
		buf_putc(b, ' ');
		ast_dump_expr(b, n->u.assign.rhs);
		buf_putc(b, ')');
		break;
	case N_FOR:
		buf_puts(b, "(for (");
		for (c = n->u.loop.vars; c; c = c->next) {
			ast_dump_expr(b, c);
			if (c->next)
				buf_putc(b, ' ');
		}
		buf_puts(b, ") ");
		ast_dump_expr(b, n->u.loop.iter);
		dumpstmts(b, n->u.loop.body, ind + 2);
		buf_putc(b, ')');
		break;
	case N_IF:
		buf_puts(b, "(if ");
		ast_dump_expr(b, n->u.cond.cond);
		indent(b, ind + 2);
		buf_puts(b, "(then");
		dumpstmts(b, n->u.cond.then, ind + 4);
		buf_putc(b, ')');
		if (n->u.cond.els) {
			indent(b, ind + 2);
			buf_puts(b, "(else");
			dumpstmts(b, n->u.cond.els, ind + 4);
			buf_putc(b, ')');
		}
		buf_putc(b, ')');
		break;
	default:
		ast_dump_expr(b, n);
		break;
	}
}

static void
dumpstmts(Buf *b, const Node *list, int ind)
{
	for (; list; list = list->next) {
		indent(b, ind);
		dumpstmt(b, list, ind);
	}
}

void
ast_dump(Buf *b, const Node *list)
{
	if (!b)
		return;
	for (; list; list = list->next) {
		dumpstmt(b, list, 0);
		buf_putc(b, '\n');
	}
}
