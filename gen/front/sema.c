/*
 * sema.c: semantic checks of a parsed program and its translation to tile IR:
 * global consts (with -D overrides), kernels (params, size symbols, grid,
 * threads), buffer declarations, statements and loops, and the inlining of
 * helper functions. Tile ops are in sema_ops.c, expressions in sema_expr.c,
 * layouts in sema_layout.c. Every error is reported; nothing stops at the first.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sema.h"

/* ---- statements -------------------------------------------------------------- */

typedef struct Tail {
	IrStmt **p;
} Tail;

static void stmts(Sema *S, const Node *list, Tail *t);

static void
append(Tail *t, IrStmt *s)
{
	if (!s)
		return;
	*t->p = s;
	while (s->next)
		s = s->next;
	t->p = &s->next;
}

static IrStmt *
block(Sema *S, const Node *list)
{
	IrStmt *head = NULL;
	Tail t = {&head};

	if (S->depth >= 512) {
		if (list)
			diag(S->d, list->loc, "statements nested too deeply (more than 512 levels, "
			     "counting inlined helpers)");
		return NULL;
	}
	S->depth++;
	sema_push(S);
	stmts(S, list, &t);
	sema_pop(S);
	S->depth--;
	return head;
}

static void inline_call(Sema *S, const Node *c, Sym *fn, Tail *t);

static void
callstmt(Sema *S, const Node *c, Tail *t)
{
	const char *name = c->u.call.name;
	Sym *s = sema_lookup(S, name);
	IrStmt *st = NULL;
	int tileop = !strcmp(name, "copy") || !strcmp(name, "gemm") || !strcmp(name, "fill") ||
		     !strcmp(name, "clear") || !strcmp(name, "reduce") || sl_is_layout_stmt(name);

	if (s && s->kind == SYM_FUNC) {
		inline_call(S, c, s, t);
		return;
	}
	if (s && SYM_POISONED(s))
		return;
	if (s) {
		diag(S->d, c->loc, "'%s' is a %s, not a function", name,
		     s->kind == SYM_KERNEL ? "kernel" : s->kind == SYM_BUF ? "buffer" : "value");
		return;
	}
	if (tileop && S->in_par) {
		diag(S->d, c->loc, "%s inside a parallel loop; tile operations act on whole tiles", name);
		return;
	}
	if (!strcmp(name, "copy"))
		st = so_copy(S, c);
	else if (!strcmp(name, "gemm"))
		st = so_gemm(S, c);
	else if (!strcmp(name, "fill"))
		st = so_fill(S, c, 0);
	else if (!strcmp(name, "clear"))
		st = so_fill(S, c, 1);
	else if (!strcmp(name, "reduce"))
		st = so_reduce(S, c);
	else if (!strcmp(name, "assume"))
		st = so_assume(S, c);
	else if (!strcmp(name, "atomic_add"))
		st = so_atomic(S, c, AT_ADD);
	else if (!strcmp(name, "atomic_max"))
		st = so_atomic(S, c, AT_MAX);
	else if (!strcmp(name, "atomic_min"))
		st = so_atomic(S, c, AT_MIN);
	else if (sl_is_layout_stmt(name))
		sl_layout_stmt(S, c, &st);
	else if (sema_builtin_name(name))
		diag(S->d, c->loc, "'%s' cannot be used as a statement", name);
	else
		diag(S->d, c->loc, "unknown operation or helper '%s'%s", name,
		     sema_suggest(S, name, 1u << SYM_FUNC, sema_op_names, sema_nop_names));
	append(t, st);
}

static IrStmt *
bufdecl(Sema *S, const Node *n)
{
	const Node *d;
	IrDim *dims;
	DType t = dtype_lookup(n->u.decl.dtype, (int)strlen(n->u.decl.dtype));
	int i, bad = 0, id;
	int64_t total = 1, v;
	Sym *s;

	if (t == DT_NONE) {
		diag(S->d, n->u.decl.dtloc, "unknown element type '%s'", n->u.decl.dtype);
		bad = 1;
	}
	if (S->in_par) {
		diag(S->d, n->loc, "buffer '%s' declared inside a parallel loop", n->u.decl.name);
		bad = 1;
	}
	if (!n->u.decl.tensor || n->u.decl.ndim == 0) {
		diag(S->d, n->loc, "buffer '%s' needs a shape, e.g. %s[128, 32]", n->u.decl.name,
		     n->u.decl.dtype);
		bad = 1;
	} else if (n->u.decl.ndim > IR_MAXDIM) {
		diag(S->d, n->loc, "buffer '%s' has %d dimensions; at most %d are supported",
		     n->u.decl.name, n->u.decl.ndim, IR_MAXDIM);
		bad = 1;
	}
	dims = anewn(S->a, IrDim, n->u.decl.ndim > 0 ? n->u.decl.ndim : 1);
	if (!dims)
		return NULL;
	for (i = 0, d = n->u.decl.dims; d && i < n->u.decl.ndim; i++, d = d->next) {
		IrExpr *e = sx_expr(S, d);

		if (!e) {
			bad = 1;
			continue;
		}
		if (e->kind != IE_INT) {
			diag(S->d, d->loc,
			     "shape of buffer '%s' must be constant: dimension %d is '%s'",
			     n->u.decl.name, i, sx_text(S, e));
			bad = 1;
			continue;
		}
		v = e->u.i;
		if (v <= 0) {
			diag(S->d, d->loc, "dimension %d of buffer '%s' must be positive, got %lld", i,
			     n->u.decl.name, (long long)v);
			bad = 1;
			continue;
		}
		if (__builtin_mul_overflow(total, v, &total) || total > ((int64_t)1 << 40)) {
			diag(S->d, d->loc, "buffer '%s' is too large", n->u.decl.name);
			bad = 1;
			total = 1;
		}
		dims[i].c = v;
	}
	if (!bad && t != DT_NONE) {
		/* at once, before any layout is enumerated: what no target can hold */
		int64_t bytes = total * dtype_bytes(t), T = S->k && S->k->threads > 0 ? S->k->threads : 1024;

		if (n->u.decl.scope == SCOPE_SHARED && bytes > SEMA_MAX_SHARED) {
			diag(S->d, n->loc, "shared '%s' needs %lld bytes, more than any target's shared "
			     "memory (%d bytes, sm_90)", n->u.decl.name, (long long)bytes, SEMA_MAX_SHARED);
			bad = 1;
		} else if (n->u.decl.scope != SCOPE_SHARED && (bytes + T - 1) / T > SEMA_MAX_LOCAL_BYTES) {
			diag(S->d, n->loc, "local '%s' needs at least %lld bytes per thread (%lld elements "
			     "of %d bytes over %lld threads), more than a thread's %d bytes of registers and "
			     "local memory", n->u.decl.name, (long long)((bytes + T - 1) / T),
			     (long long)total, dtype_bytes(t), (long long)T, SEMA_MAX_LOCAL_BYTES);
			bad = 1;
		}
	}
	s = sema_declare(S, SYM_BUF, n->u.decl.name, n->loc);
	if (!s)
		return NULL;
	if (bad) {
		s->kind = SYM_EXPR; /* poisoned */
		return NULL;
	}
	id = ir_kernel_buffer(S->a, S->k, n->u.decl.name,
			      n->u.decl.scope == SCOPE_SHARED ? MEM_SHARED : MEM_LOCAL, t,
			      n->u.decl.ndim, dims, n->loc);
	s->u.buf = id;
	if (id < 0)
		s->kind = SYM_EXPR; /* out of memory; keep the table consistent */
	return NULL;
}

static void
assign(Sema *S, const Node *n, Tail *t)
{
	const Node *lhs = n->u.assign.lhs;
	IrExpr *cur = NULL, *rhs;
	IrStmt *s;
	BinOp op;
	DType type;

	if (lhs->kind == N_IDENT) {
		Sym *sym = sema_lookup(S, lhs->u.name);

		if (!sym) {
			diag(S->d, lhs->loc, "unknown name '%s'%s", lhs->u.name,
			     sema_suggest(S, lhs->u.name, SUGGEST_VALUES, NULL, 0));
			return;
		}
		if (SYM_POISONED(sym))
			return;
		if (sym->kind != SYM_VAR || sym->u.var->kind != VAR_LET) {
			diag(S->d, lhs->loc, "cannot assign to '%s'; only let variables and buffer "
			     "elements can be assigned",
			     lhs->u.name);
			return;
		}
		type = sym->u.var->type;
		if (n->u.assign.op != OP_NONE)
			cur = ir_var(S->a, lhs->loc, sym->u.var);
		rhs = sx_expr(S, n->u.assign.rhs);
	} else {
		if (!S->in_loop) {
			diag(S->d, n->loc, "element assignment outside a loop; use a parallel or "
			     "serial loop");
			return;
		}
		cur = sx_expr(S, lhs);
		rhs = sx_expr(S, n->u.assign.rhs);
		if (!cur)
			return;
		type = cur->type;
		if (n->u.assign.op == OP_NONE)
			cur = NULL;
	}
	if (!rhs)
		return;
	if (cur) {
		switch (n->u.assign.op) {
		case OP_ADD: op = BIN_ADD; break;
		case OP_SUB: op = BIN_SUB; break;
		case OP_MUL: op = BIN_MUL; break;
		case OP_DIV: op = BIN_DIV; break;
		default:
			diag(S->d, n->loc, "unknown assignment operator");
			return;
		}
		rhs = sx_binary(S, n->loc, op, cur, rhs);
	}
	rhs = sx_convert(S, rhs, type, n->u.assign.rhs->loc, "assignment");
	if (!rhs)
		return;
	if (lhs->kind == N_IDENT) {
		s = ir_stmt(S->a, S_SET, n->loc);
		if (!s)
			return;
		s->u.let.var = sema_lookup(S, lhs->u.name)->u.var;
		s->u.let.value = rhs;
	} else {
		IrExpr *ld = sx_expr(S, lhs);

		s = ir_stmt(S->a, S_STORE, n->loc);
		if (!s || !ld)
			return;
		s->u.store.buf = ld->u.load.buf;
		s->u.store.n = ld->u.load.n;
		s->u.store.idx = ld->u.load.idx;
		s->u.store.value = rhs;
	}
	append(t, s);
}

static void
let(Sema *S, const Node *n, Tail *t)
{
	IrExpr *v = sx_expr(S, n->u.bind.value);
	Sym *sym = sema_declare(S, SYM_VAR, n->u.bind.name, n->loc);
	IrStmt *s;

	if (!v || !sym) {
		if (sym) { /* keep the name known to avoid follow-on errors */
			sym->kind = SYM_EXPR;
			sym->u.val = NULL;
		}
		return;
	}
	sym->u.var = ir_kernel_var(S->a, S->k, VAR_LET, v->type, n->u.bind.name, n->loc);
	s = ir_stmt(S->a, S_LET, n->loc);
	if (!s || !sym->u.var)
		return;
	s->u.let.var = sym->u.var;
	s->u.let.value = v;
	append(t, s);
}

static IrVar *
loopvar(Sema *S, const Node *id)
{
	Sym *s = sema_declare(S, SYM_VAR, id->u.name, id->loc);

	if (!s)
		return NULL;
	s->u.var = ir_kernel_var(S->a, S->k, VAR_LOOP, DT_INT, id->u.name, id->loc);
	if (!s->u.var)
		s->kind = SYM_EXPR;
	return s->u.var;
}

static void
forloop(Sema *S, const Node *n, Tail *t)
{
	const Node *it = n->u.loop.iter, *a;
	const char *kind = it && it->kind == N_CALL ? it->u.call.name : "";
	IrStmt *s = NULL;
	int i, bad = 0;

	if (strcmp(kind, "range") && strcmp(kind, "pipeline") && strcmp(kind, "parallel")) {
		diag(S->d, it ? it->loc : n->loc,
		     "a for loop iterates over range(...), pipeline(...) or parallel(...)");
		return;
	}
	if (strcmp(kind, "parallel") && n->u.loop.nvars != 1) {
		diag(S->d, n->loc, "%s(...) takes one loop variable, got %d", kind, n->u.loop.nvars);
		return;
	}
	sema_push(S);
	if (!strcmp(kind, "range")) {
		IrExpr *lo, *hi;

		for (a = it->u.call.args; a; a = a->next)
			if (a->kind == N_NAMED) {
				diag(S->d, a->loc, "range: unknown argument '%s'", a->u.bind.name);
				bad = 1;
			}
		if (it->u.call.nargs < 1 || it->u.call.nargs > 2) {
			diag(S->d, it->loc, "range takes 1 or 2 arguments, got %d", it->u.call.nargs);
			bad = 1;
		}
		if (bad)
			goto out;
		lo = it->u.call.nargs == 2 ? sx_int(S, it->u.call.args, "a range bound")
					   : ir_int(S->a, it->loc, 0);
		hi = sx_int(S, it->u.call.nargs == 2 ? it->u.call.args->next : it->u.call.args,
			    "a range bound");
		if (!lo || !hi)
			goto out;
		s = ir_stmt(S->a, S_FOR, n->loc);
		if (!s)
			goto out;
		s->u.loop.lo = lo;
		s->u.loop.extent = sx_binary(S, it->loc, BIN_SUB, hi, lo);
		if (s->u.loop.extent && ir_is_const(s->u.loop.extent, NULL) &&
		    s->u.loop.extent->u.i < 0)
			s->u.loop.extent->u.i = 0;
		s->u.loop.var = loopvar(S, n->u.loop.vars);
		S->in_loop++;
		s->u.loop.body = block(S, n->u.loop.body);
		S->in_loop--;
		if (!s->u.loop.var || !s->u.loop.extent)
			s = NULL;
	} else if (!strcmp(kind, "pipeline")) {
		static const Param ps[] = {{"n", 1}, {"stages", 0}};
		const Node *args[2];
		IrExpr *ext;
		int64_t stages = 2;

		if (S->in_par) {
			diag(S->d, it->loc, "pipeline loop inside a parallel loop");
			goto out;
		}
		if (so_getargs(S, it, ps, 2, args))
			goto out;
		ext = sx_int(S, args[0], "pipeline extent");
		if (args[1] && !sx_const_int(S, args[1], "pipeline: stages", &stages) &&
		    (stages < 1 || stages > 16)) {
			diag(S->d, args[1]->loc, "pipeline: stages must be from 1 to 16, got %lld",
			     (long long)stages);
			goto out;
		}
		if (!ext)
			goto out;
		s = ir_stmt(S->a, S_PIPELINE, n->loc);
		if (!s)
			goto out;
		s->u.pipe.extent = ext;
		s->u.pipe.stages = (int)stages;
		s->u.pipe.var = loopvar(S, n->u.loop.vars);
		S->in_loop++;
		s->u.pipe.body = block(S, n->u.loop.body);
		S->in_loop--;
		if (!s->u.pipe.var)
			s = NULL;
	} else {
		int np = 0;
		const Node *v, *lay = NULL;
		int64_t npts = 1;

		if (S->in_par) {
			diag(S->d, it->loc, "parallel loop nested inside a parallel loop; list all "
			     "extents in one parallel(...)");
			goto out;
		}
		for (a = it->u.call.args; a; a = a->next)
			np += a->kind != N_NAMED;
		if (np != n->u.loop.nvars) {
			diag(S->d, it->loc, "parallel(...) has %d extent%s but the loop has %d "
			     "variable%s",
			     np, np == 1 ? "" : "s", n->u.loop.nvars, n->u.loop.nvars == 1 ? "" : "s");
			goto out;
		}
		s = ir_stmt(S->a, S_PARALLEL, n->loc);
		if (!s)
			goto out;
		s->u.par.n = np;
		s->u.par.vars = anewn(S->a, IrVar *, np);
		s->u.par.ext = anewn(S->a, int64_t, np);
		if (!s->u.par.vars || !s->u.par.ext)
			goto out;
		for (i = 0, a = it->u.call.args; a; i++, a = a->next) {
			IrExpr *e;

			if (a->kind == N_NAMED) {
				if (!strcmp(a->u.bind.name, "layout") && !lay)
					lay = a;
				else if (!strcmp(a->u.bind.name, "layout"))
					diag(S->d, a->loc, "parallel: a second 'layout' argument"), bad = 1;
				else
					diag(S->d, a->loc, "parallel: unknown argument '%s' (a nest takes layout = "
					     "cute(\"...\"))", a->u.bind.name), bad = 1;
				i--;
				continue;
			}
			e = sx_expr(S, a);
			if (!e) {
				bad = 1;
				continue;
			}
			if (e->kind != IE_INT || e->u.i <= 0) {
				diag(S->d, a->loc, "parallel extent must be a positive constant, "
				     "got '%s'",
				     sx_text(S, e));
				bad = 1;
				continue;
			}
			s->u.par.ext[i] = e->u.i;
			/* the nest's point count, for a layout = ...; saturated (sema refuses past 2^40 later) */
			if (ck_mul(npts, e->u.i, &npts))
				npts = INT64_MAX;
		}
		if (lay && !bad && !(s->u.par.layout = sl_loop_layout(S, lay->u.bind.value, npts)))
			bad = 1;
		for (i = 0, v = n->u.loop.vars; v; i++, v = v->next)
			if (!(s->u.par.vars[i] = loopvar(S, v)))
				bad = 1;
		S->in_par++;
		S->in_loop++;
		s->u.par.body = block(S, n->u.loop.body);
		S->in_par--;
		S->in_loop--;
		if (bad)
			s = NULL;
	}
out:
	sema_pop(S);
	append(t, s);
}

static void
ifstmt(Sema *S, const Node *n, Tail *t)
{
	IrExpr *c = sx_bool(S, n->u.cond.cond, "if condition");
	IrStmt *then = block(S, n->u.cond.then), *els = block(S, n->u.cond.els), *s;

	if (!c)
		return;
	if (c->kind == IE_BOOL) { /* a constant condition keeps only its branch */
		sema_push(S);
		append(t, c->u.i ? then : els);
		sema_pop(S);
		return;
	}
	s = ir_stmt(S->a, S_IF, n->loc);
	if (!s)
		return;
	s->u.cond.cond = c;
	s->u.cond.then = then;
	s->u.cond.els = els;
	append(t, s);
}

static void
stmts(Sema *S, const Node *n, Tail *t)
{
	for (; n; n = n->next) {
		if (S->ninl > 0 && !S->inl_over && ++S->ninlstmt > SEMA_MAXINLINE) {
			Buf b;
			int j;

			buf_init(&b);
			for (j = 0; j < S->ninl; j++)
				buf_printf(&b, "%s%s", j ? " -> " : "", S->inl[j]->u.fn.name);
			diag(S->d, S->inl_loc, "helper inlining would create more than %d statements in "
			     "kernel '%s' (call chain %s)", SEMA_MAXINLINE, S->k ? S->k->name : "?",
			     buf_str(&b));
			buf_free(&b);
			S->inl_over = 1;
		}
		if (S->inl_over && S->ninl > 0)
			return;
		switch (n->kind) {
		case N_BUFFER:
			bufdecl(S, n);
			break;
		case N_CALL:
			callstmt(S, n, t);
			break;
		case N_ASSIGN:
			assign(S, n, t);
			break;
		case N_LET:
			let(S, n, t);
			break;
		case N_FOR:
			forloop(S, n, t);
			break;
		case N_IF:
			ifstmt(S, n, t);
			break;
		default:
			diag(S->d, n->loc, "expected a statement, found a %s", ast_kind_name(n->kind));
			break;
		}
	}
}

/* ---- helper inlining ----------------------------------------------------- */

/* bind the tensor parameter p to the caller's buffer `buf`; -1 after reporting */
static int
bindtensor(Sema *S, const Node *fn, const Node *p, int argi, const Node *arg, int buf)
{
	const IrBuffer *b = &S->k->bufs[buf];
	MemScope want = p->u.decl.scope == SCOPE_SHARED ? MEM_SHARED
			: p->u.decl.scope == SCOPE_LOCAL ? MEM_LOCAL
							 : MEM_GLOBAL;
	DType t = dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype));
	const Node *d;
	int i, bad = 0;

	if (t != b->dtype || want != b->scope || p->u.decl.ndim != b->ndim) {
		Buf pb;

		buf_init(&pb);
		buf_printf(&pb, "%s %s[", memscope_name(want), p->u.decl.dtype);
		for (d = p->u.decl.dims; d; d = d->next) {
			if (d != p->u.decl.dims)
				buf_puts(&pb, ", ");
			if (d->kind == N_INT)
				buf_printf(&pb, "%lld", (long long)d->u.ival);
			else if (d->kind == N_IDENT)
				buf_puts(&pb, d->u.name);
			else
				buf_putc(&pb, '?');
		}
		buf_putc(&pb, ']');
		diag(S->d, arg->loc, "%s: argument %d '%s' is %s, parameter '%s' expects %s",
		     fn->u.fn.name, argi + 1, b->name, so_bufshape(S, b), p->u.decl.name, buf_str(&pb));
		buf_free(&pb);
		return -1;
	}
	for (i = 0, d = p->u.decl.dims; d; i++, d = d->next) {
		Sym *s = d->kind == N_IDENT ? sema_lookup(S, d->u.name) : NULL;
		int64_t v;

		if (d->kind == N_IDENT && (!s || s->level == S->level)) {
			/* a shape name: bound to the argument's extent */
			if (!s) {
				s = sema_declare(S, b->dims[i].sym ? SYM_VAR : SYM_CONST, d->u.name, d->loc);
				if (!s)
					return -1;
				if (b->dims[i].sym) {
					s->u.var = b->dims[i].sym;
				} else {
					s->state = 2;
					s->u.val = ir_int(S->a, d->loc, b->dims[i].c);
				}
				continue;
			}
			if (s->kind == SYM_VAR ? s->u.var == b->dims[i].sym
					       : s->kind == SYM_CONST && !b->dims[i].sym &&
							 s->u.val->u.i == b->dims[i].c)
				continue;
			bad = 1;
			break;
		}
		if (sx_const_int(S, d, "a parameter dimension", &v))
			return -1;
		if (b->dims[i].sym || v != b->dims[i].c) {
			bad = 1;
			break;
		}
	}
	if (bad) {
		diag(S->d, arg->loc, "%s: argument %d '%s' is %s, which does not match the shape "
		     "of parameter '%s'",
		     fn->u.fn.name, argi + 1, b->name, so_bufshape(S, b), p->u.decl.name);
		return -1;
	}
	return 0;
}

static void
inline_call(Sema *S, const Node *c, Sym *fs, Tail *t)
{
	const Node *fn = fs->node, *p, *a;
	int i, n = c->u.call.nargs, base = S->base, bad = 0, level;
	int bufs[64];
	IrExpr *vals[64];
	Diag *snap;
	int snaperr;

	for (i = 0; i < S->ninl; i++) {
		if (S->inl[i] == fn) {
			Buf b;
			int j;

			buf_init(&b);
			for (j = i; j < S->ninl; j++)
				buf_printf(&b, "%s -> ", S->inl[j]->u.fn.name);
			buf_puts(&b, fn->u.fn.name);
			diag(S->d, c->loc, "recursive call of helper '%s' (%s)", fn->u.fn.name,
			     buf_str(&b));
			buf_free(&b);
			return;
		}
	}
	if (S->ninl == (int)countof(S->inl)) {
		diag(S->d, c->loc, "helpers nested too deeply (more than %d)", (int)countof(S->inl));
		return;
	}
	if (n > 64) {
		diag(S->d, c->loc, "helper '%s': more than 64 arguments", fn->u.fn.name);
		return;
	}
	if (n != fn->u.fn.nparams) {
		diag(S->d, c->loc, "helper '%s' takes %d argument%s, got %d", fn->u.fn.name,
		     fn->u.fn.nparams, fn->u.fn.nparams == 1 ? "" : "s", n);
		return;
	}
	/* the arguments, in the caller's scope */
	for (i = 0, p = fn->u.fn.params, a = c->u.call.args; i < n; i++, p = p->next, a = a->next) {
		bufs[i] = -1;
		vals[i] = NULL;
		if (a->kind == N_NAMED) {
			diag(S->d, a->loc, "helper '%s' takes no named arguments ('%s')", fn->u.fn.name,
			     a->u.bind.name);
			bad = 1;
		} else if (p->u.decl.tensor) {
			Sym *s = a->kind == N_IDENT ? sema_lookup(S, a->u.name) : NULL;

			if (s && SYM_POISONED(s)) {
				bad = 1;
			} else if (!s || s->kind != SYM_BUF) {
				diag(S->d, a->loc, "%s: argument %d for tensor parameter '%s' must "
				     "be a buffer name",
				     fn->u.fn.name, i + 1, p->u.decl.name);
				bad = 1;
			} else {
				bufs[i] = s->u.buf;
			}
		} else {
			DType ty = !strcmp(p->u.decl.dtype, "int")
					   ? DT_INT
					   : dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype));

			vals[i] = ty == DT_NONE ? NULL
						: sx_convert(S, sx_expr(S, a), ty, a->loc, p->u.decl.name);
			if (!vals[i])
				bad = 1;
		}
	}
	if (bad || S->inl_over)
		return;
	if (S->ninl == 0)
		S->inl_loc = c->loc;
	S->inl[S->ninl++] = fn;
	sema_push(S);
	level = S->level;
	S->base = level;
	for (i = 0, p = fn->u.fn.params, a = c->u.call.args; i < n; i++, p = p->next, a = a->next) {
		Sym *s;

		if (p->u.decl.tensor && bindtensor(S, fn, p, i, a, bufs[i])) {
			bad = 1;
			continue;
		}
		s = sema_declare(S, p->u.decl.tensor ? SYM_BUF : SYM_EXPR, p->u.decl.name, p->loc);
		if (!s) {
			bad = 1;
			continue;
		}
		if (p->u.decl.tensor)
			s->u.buf = bufs[i];
		else
			s->u.val = vals[i];
	}
	snap = S->d->tail;
	snaperr = S->d->nerr;
	if (!bad)
		stmts(S, fn->u.fn.body, t);
	sema_pop(S);
	S->base = base;
	S->ninl--;
	/* errors in a helper's body are reported at its first call only, with a note there */
	if (S->d->nerr > snaperr) {
		if (fs->errs) {
			S->d->tail = snap;
			if (snap)
				snap->next = NULL;
			else
				S->d->head = NULL;
		} else {
			diag_note(S->d, c->loc, "in helper '%s' inlined here", fn->u.fn.name);
		}
		fs->errs = 1;
	}
}

/* ---- kernels ---------------------------------------------------------------- */

/* the size symbol named by d (declared at its first appearance); what: "dimension" or
 * "stride" */
static IrVar *
sizesym(Sema *S, const Node *d, const char *what)
{
	Sym *s = sema_lookup(S, d->u.name);
	IrKernel *k = S->k;

	if (s && s->kind == SYM_VAR && s->u.var->kind == VAR_SIZE)
		return s->u.var;
	if (s && s->level > 0) {
		diag(S->d, d->loc, "%s '%s' must be a size name or a constant", what, d->u.name);
		return NULL;
	}
	s = sema_declare(S, SYM_VAR, d->u.name, d->loc);
	if (!s)
		return NULL;
	s->u.var = ir_kernel_var(S->a, k, VAR_SIZE, DT_INT, d->u.name, d->loc);
	if (!s->u.var) {
		s->kind = SYM_EXPR;
		return NULL;
	}
	if (k->nsize % 8 == 0) {
		IrVar **nv = arena_realloc(S->a, k->sizes, sizeof *nv * (size_t)k->nsize,
					   sizeof *nv * (size_t)(k->nsize + 8));

		if (!nv)
			return NULL;
		k->sizes = nv;
	}
	k->sizes[k->nsize++] = s->u.var;
	return s->u.var;
}

/* are strides st[0..n) of dims the dense row-major ones, provably for every size (constant
 * strides equal to the products of constant dims after them, or the one symbol of the last
 * dim as the stride of the one before it, with stride 1 last)? */
static int
dense_strides(const IrDim *dims, const IrDim *st, int n)
{
	int64_t c = 1;          /* the dense stride of dim d: c, or the symbol psym */
	const IrVar *psym = NULL;
	int d;

	for (d = n - 1; d >= 0; d--) {
		if (psym ? st[d].sym != psym : st[d].sym || st[d].c != c)
			return 0;
		if (d == 0)
			break;
		if (!psym && c == 1 && dims[d].sym)
			psym = dims[d].sym;
		else if (psym || dims[d].sym || ck_mul(c, dims[d].c, &c))
			return 0; /* a product the strides cannot name: not provably dense */
	}
	return 1;
}

/* the strides(...) of tensor parameter p (ndim dims, already checked); NULL for dense
 * ones (no clause, or provably dense), *bad set after an error */
static IrDim *
kstrides(Sema *S, const Node *p, const IrDim *dims, int *bad)
{
	int n = p->u.decl.ndim, i;
	const Node *d;
	IrDim *st;
	int64_t span = 0;

	if (!p->u.decl.has_strides)
		return NULL;
	if (p->u.decl.nstrides != n) {
		diag(S->d, p->u.decl.strloc, "tensor '%s' has %d dimension%s but strides(...) gives %d "
		     "stride%s; one per dimension, in elements",
		     p->u.decl.name, n, n == 1 ? "" : "s", p->u.decl.nstrides,
		     p->u.decl.nstrides == 1 ? "" : "s");
		*bad = 1;
		return NULL;
	}
	st = anewn(S->a, IrDim, n > 0 ? n : 1);
	if (!st) {
		*bad = 1;
		return NULL;
	}
	for (i = 0, d = p->u.decl.strides; d && i < n; i++, d = d->next) {
		Sym *c = d->kind == N_IDENT ? sema_lookup(S, d->u.name) : NULL;
		int64_t t;

		if (c && SYM_POISONED(c)) { /* its declaration failed, and said so */
			*bad = 1;
			continue;
		}
		if (d->kind == N_IDENT && !strcmp(d->u.name, p->u.decl.name)) {
			diag(S->d, d->loc, "stride %d of '%s' names the tensor itself; a stride is a "
			     "size name or a constant", i, p->u.decl.name);
			*bad = 1;
			continue;
		}
		if (d->kind == N_IDENT && c && c->level > 0 &&
		    !(c->kind == SYM_VAR && c->u.var->kind == VAR_SIZE) && c->kind != SYM_CONST) {
			diag(S->d, d->loc, "stride %d of '%s' must be a size name or a constant; '%s' is "
			     "%s parameter of kernel '%s'",
			     i, p->u.decl.name, d->u.name,
			     c->declkind == SYM_BUF ? "a tensor" : "a scalar", S->k->name);
			*bad = 1;
			continue;
		}
		if (d->kind == N_IDENT && (!c || c->kind != SYM_CONST)) {
			if (!(st[i].sym = sizesym(S, d, "stride")))
				*bad = 1;
			continue;
		}
		if (sx_const_int(S, d, "a tensor stride", &st[i].c)) {
			*bad = 1;
		} else if (st[i].c <= 0) {
			diag(S->d, d->loc, "stride %d of '%s' must be positive, got %lld", i,
			     p->u.decl.name, (long long)st[i].c);
			*bad = 1;
		} else if (!dims[i].sym && (ck_mul(st[i].c, dims[i].c - 1, &t) ||
					    ck_add(span, t, &span) || span > SEMA_MAX_OFFSET)) {
			diag(S->d, d->loc, "the constant strides and dimensions of '%s' reach past 2^62 "
			     "elements",
			     p->u.decl.name);
			*bad = 1;
			span = 0;
		}
	}
	if (*bad || dense_strides(dims, st, n))
		return NULL;
	return st;
}

static void
kparam(Sema *S, const Node *p, IrParam *ip, int index)
{
	DType t = dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype));
	const Node *d;
	IrDim *dims, *strides;
	int i, bad = 0;
	int64_t cprod = 1;
	Sym *s;

	ip->name = p->u.decl.name;
	ip->loc = p->loc;
	ip->buf = -1;
	ip->dtype = t;
	if (t == DT_NONE) {
		diag(S->d, p->u.decl.dtloc, "unknown element type '%s'", p->u.decl.dtype);
		bad = 1;
	}
	if (p->u.decl.scope != SCOPE_NONE) {
		diag(S->d, p->loc, "kernel parameter '%s' cannot have a scope; kernel tensors are "
		     "global",
		     p->u.decl.name);
		bad = 1;
	}
	if (p->u.decl.has_strides && !p->u.decl.tensor) {
		diag(S->d, p->u.decl.strloc, "strides(...) on scalar parameter '%s'; only a tensor "
		     "parameter NAME: dtype[dims] strides(...) has strides",
		     p->u.decl.name);
		bad = 1;
	}
	if (!p->u.decl.tensor) {
		s = sema_declare(S, SYM_VAR, p->u.decl.name, p->loc);
		if (!s)
			return;
		s->u.var = ip->var = ir_kernel_var(S->a, S->k, VAR_SCALAR, t, p->u.decl.name, p->loc);
		if (!s->u.var || bad)
			s->kind = SYM_EXPR, s->u.val = NULL;
		return;
	}
	ip->is_tensor = 1;
	if (p->u.decl.ndim > IR_MAXDIM || p->u.decl.ndim == 0) {
		diag(S->d, p->loc, "tensor '%s' has %d dimensions; 1 to %d are supported",
		     p->u.decl.name, p->u.decl.ndim, IR_MAXDIM);
		bad = 1;
	}
	dims = anewn(S->a, IrDim, p->u.decl.ndim > 0 ? p->u.decl.ndim : 1);
	if (!dims)
		return;
	for (i = 0, d = p->u.decl.dims; d; i++, d = d->next) {
		Sym *c = d->kind == N_IDENT ? sema_lookup(S, d->u.name) : NULL;

		if (d->kind == N_IDENT && (!c || c->kind != SYM_CONST)) {
			if (!(dims[i].sym = sizesym(S, d, "dimension")))
				bad = 1;
			continue;
		}
		if (sx_const_int(S, d, "a tensor dimension", &dims[i].c)) {
			bad = 1;
		} else if (dims[i].c <= 0) {
			diag(S->d, d->loc, "dimension %d of '%s' must be positive, got %lld", i,
			     p->u.decl.name, (long long)dims[i].c);
			bad = 1;
		} else if (ck_mul(cprod, dims[i].c, &cprod) || cprod > SEMA_MAX_OFFSET) {
			/* the generated strides and offsets are products of these */
			diag(S->d, d->loc, "the constant dimensions of '%s' multiply past 2^62 elements",
			     p->u.decl.name);
			bad = 1;
			cprod = 1;
		}
	}
	strides = bad ? NULL : kstrides(S, p, dims, &bad);
	s = sema_declare(S, SYM_BUF, p->u.decl.name, p->loc);
	if (!s)
		return;
	ip->buf = bad ? -1
		      : ir_kernel_buffer(S->a, S->k, p->u.decl.name, MEM_GLOBAL, t, p->u.decl.ndim,
					 dims, p->loc);
	if (ip->buf < 0) {
		s->kind = SYM_EXPR;
		s->u.val = NULL;
		return;
	}
	S->k->bufs[ip->buf].param = index;
	S->k->bufs[ip->buf].strides = strides;
	s->u.buf = ip->buf;
}

static IrKernel *
kernel(Sema *S, const Node *n)
{
	IrKernel *k = anew(S->a, IrKernel);
	const Node *p, *g;
	Tail t;
	int i, nerr = S->d->nerr;
	IrExpr *th;

	if (!k)
		return NULL;
	k->name = n->u.fn.name;
	k->loc = n->loc;
	S->k = k;
	S->ninlstmt = 0;
	S->inl_over = 0;
	sema_push(S);
	S->base = S->level;
	k->nparam = n->u.fn.nparams;
	k->params = anewn(S->a, IrParam, k->nparam > 0 ? k->nparam : 1);
	if (!k->params)
		return NULL;
	for (i = 0, p = n->u.fn.params; p && i < k->nparam; i++, p = p->next)
		kparam(S, p, &k->params[i], i);
	if (n->u.fn.ngrid == 0 || !n->u.fn.grid)
		diag(S->d, n->loc, "kernel '%s' has no grid(...) clause", k->name);
	S->in_grid = 1;
	for (g = n->u.fn.grid; g && k->ngrid < 3; g = g->next) {
		IrExpr *e = sx_int(S, g, "a grid dimension");
		const char *what = "";

		if (e && !sx_is_header_expr(e, &what)) {
			diag(S->d, g->loc, "grid(...) may use only sizes, scalar parameters and constants, "
			     "not %s", what);
			e = NULL;
		}
		if (e && e->kind == IE_INT && e->u.i <= 0) {
			diag(S->d, g->loc, "grid dimension %d must be positive, got %lld", k->ngrid,
			     (long long)e->u.i);
			e = NULL;
		}
		if (e && e->kind == IE_INT && e->u.i > (k->ngrid == 0 ? INT32_MAX : 65535)) {
			diag(S->d, g->loc, "grid dimension %d (%c) is %lld, past the hardware limit of %lld "
			     "blocks (x < 2^31, y and z <= 65535)", k->ngrid, "xyz"[k->ngrid],
			     (long long)e->u.i, k->ngrid == 0 ? (long long)INT32_MAX : 65535LL);
			e = NULL;
		}
		k->grid[k->ngrid++] = e ? e : ir_int(S->a, g->loc, 1);
	}
	S->in_grid = 0;
	for (i = 0; i < k->ngrid; i++)
		ir_kernel_var(S->a, k, VAR_BLOCK, DT_INT, i == 0 ? "bx" : i == 1 ? "by" : "bz", n->loc);
	if (!n->u.fn.threads) {
		diag(S->d, n->loc, "kernel '%s' has no threads(...) clause", k->name);
	} else if ((th = sx_expr(S, n->u.fn.threads)) != NULL) {
		if (th->kind != IE_INT || th->u.i <= 0)
			diag(S->d, n->u.fn.threads->loc, "threads must be a positive constant, got "
			     "'%s'",
			     sx_text(S, th));
		else if (th->u.i > 1024)
			diag(S->d, n->u.fn.threads->loc,
			     "threads(%lld) exceeds the limit of 1024 threads per block",
			     (long long)th->u.i);
		else
			k->threads = th->u.i;
	}
	t.p = &k->body;
	stmts(S, n->u.fn.body, &t); /* params and body share a scope: no redefinition */
	if (S->d->nerr == nerr)
		sema_check_ranges(S->a, S->d, k);
	sema_pop(S);
	S->base = 1;
	S->k = NULL;
	return S->d->nerr > nerr ? NULL : k;
}

/* ---- the program -------------------------------------------------------------- */

static void
checkfunc(Sema *S, const Node *n)
{
	const Node *p, *q;

	for (p = n->u.fn.params; p; p = p->next) {
		if (strcmp(p->u.decl.dtype, "int") &&
		    dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype)) == DT_NONE)
			diag(S->d, p->u.decl.dtloc, "unknown element type '%s'", p->u.decl.dtype);
		else if (!strcmp(p->u.decl.dtype, "int") && p->u.decl.tensor)
			diag(S->d, p->u.decl.dtloc, "'int' is only for scalar helper parameters");
		if (sema_builtin_name(p->u.decl.name))
			diag(S->d, p->loc, "'%s' is a builtin name and cannot be redefined",
			     p->u.decl.name);
		if (p->u.decl.has_strides)
			diag(S->d, p->u.decl.strloc, "strides(...) on parameter '%s' of helper '%s'; "
			     "only kernel tensor parameters have strides (a helper works on the "
			     "buffer it is given)",
			     p->u.decl.name, n->u.fn.name);
		for (q = n->u.fn.params; q != p; q = q->next)
			if (!strcmp(q->u.decl.name, p->u.decl.name)) {
				diag(S->d, p->loc, "redefinition of parameter '%s' of helper '%s'",
				     p->u.decl.name, n->u.fn.name);
				break;
			}
	}
}

IrProgram *
sema_program(Arena *a, Diags *d, const Node *top, const SemaDefine *defs, int ndefs,
	     const char *file)
{
	Sema S;
	IrProgram *prog = anew(a, IrProgram);
	IrKernel **tail;
	const Node *n;
	Sym *s;
	int i, j, nerr = d->nerr;
	Loc nowhere = {file ? file : "<input>", 0, 0};

	if (!prog)
		return NULL;
	memset(&S, 0, sizeof S);
	S.a = a;
	S.d = d;
	S.base = 1;
	S.defs = defs;
	S.ndefs = ndefs;
	sema_push(&S); /* level 0 storage */
	S.level = 0;
	for (n = top; n; n = n->next) {
		switch (n->kind) {
		case N_CONST:
			s = sema_declare(&S, SYM_CONST, n->u.bind.name, n->loc);
			if (!s)
				break;
			s->node = n;
			for (j = ndefs - 1; j >= 0; j--) {
				if (!strcmp(defs[j].name, n->u.bind.name)) {
					s->state = 2;
					s->u.val = defs[j].is_float ? ir_float(a, n->loc, DT_F32, defs[j].f)
								    : ir_int(a, n->loc, defs[j].i);
					break;
				}
			}
			break;
		case N_FUNC:
			s = sema_declare(&S, SYM_FUNC, n->u.fn.name, n->loc);
			if (s)
				s->node = n;
			checkfunc(&S, n);
			break;
		case N_KERNEL:
			/* kernels have a namespace of their own ("kernel NAME" cannot clash) */
			s = sema_declare(&S, SYM_KERNEL, arena_printf(a, "kernel %s", n->u.fn.name),
					 n->loc);
			if (s)
				s->node = n;
			break;
		default:
			diag(d, n->loc, "expected const, kernel or func at the top level");
			break;
		}
	}
	/* -D names the program does not define become consts */
	for (j = 0; j < ndefs; j++) {
		s = sema_lookup(&S, defs[j].name);
		if (s && s->kind == SYM_CONST && s->level == 0)
			continue;
		if (s) {
			diag(d, nowhere, "-D %s: '%s' is not a const of the program", defs[j].name,
			     defs[j].name);
			continue;
		}
		s = sema_declare(&S, SYM_CONST, defs[j].name, nowhere);
		if (!s)
			continue;
		s->state = 2;
		s->u.val = defs[j].is_float ? ir_float(a, nowhere, DT_F32, defs[j].f)
					    : ir_int(a, nowhere, defs[j].i);
	}
	/* every const is evaluated, used or not */
	for (n = top; n; n = n->next) {
		if (n->kind != N_CONST)
			continue;
		s = sema_lookup(&S, n->u.bind.name);
		if (s && s->node == n)
			sx_const_value(&S, s);
	}
	tail = &prog->kernels;
	for (n = top, i = 0; n; n = n->next) {
		IrKernel *k;

		if (n->kind != N_KERNEL)
			continue;
		i++;
		k = kernel(&S, n);
		if (k) {
			*tail = k;
			tail = &k->next;
			prog->nkernel++;
		}
	}
	if (i == 0)
		diag(d, nowhere, "no kernel in input");
	return d->nerr > nerr ? NULL : prog;
}
