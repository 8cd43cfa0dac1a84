/*
 * sema_expr.c: the symbol table (one hash map of names with a shadow chain
 * per name and a list per scope level) and expressions: name resolution,
 * typing with weak constants, implicit conversions, and constant folding with
 * overflow and division-by-zero checks.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sema.h"

/* ---- symbols ------------------------------------------------------------ */

static uint64_t
hashstr(const char *s)
{
	return tl_strhash(s, strlen(s), TL_HASH_BASIS);
}

/* the slot of name: where it is, or the empty slot where it goes; -1 on OOM */
static int
findslot(Sema *S, const char *name)
{
	size_t i, m;

	if (2 * (S->nkeys + 1) > S->capkeys) {
		int j, cap = S->capkeys ? S->capkeys * 2 : 256;
		const char **nk = anewn(S->a, const char *, cap);
		Sym **nv = anewn(S->a, Sym *, cap);

		if (!nk || !nv)
			return -1;
		m = (size_t)cap - 1;
		for (j = 0; j < S->capkeys; j++) {
			if (!S->keys[j])
				continue;
			for (i = hashstr(S->keys[j]) & m; nk[i]; i = (i + 1) & m)
				;
			nk[i] = S->keys[j];
			nv[i] = S->vals[j];
		}
		S->keys = nk;
		S->vals = nv;
		S->capkeys = cap;
	}
	m = (size_t)S->capkeys - 1;
	for (i = hashstr(name) & m; S->keys[i]; i = (i + 1) & m)
		if (!strcmp(S->keys[i], name))
			return (int)i;
	return (int)i;
}

Sym *
sema_lookup(Sema *S, const char *name)
{
	int i = findslot(S, name);
	Sym *s;

	if (i < 0 || !S->keys[i])
		return NULL;
	for (s = S->vals[i]; s && s->level > 0 && s->level < S->base; s = s->shadow)
		;
	return s;
}

static const char *const builtin_names[] = {
	"bx", "by", "bz", "copy", "gemm", "fill", "clear", "reduce", "assume", "range", "pipeline",
	"parallel", "select", "cute", "swizzle", "padded", "linear", "mma_a", "mma_b", "mma_c",
	"annotate_layout", "require_layout", "release_layout", "dump_layout", "assert_same_layout",
	"require_amd_wmma_layout", "atomic_add", "atomic_max", "atomic_min",
};

int
sema_builtin_name(const char *name)
{
	size_t i;

	if (dtype_lookup(name, (int)strlen(name)) != DT_NONE)
		return 1;
	if (mathfn_lookup(name, (int)strlen(name)) >= 0)
		return 1;
	for (i = 0; i < countof(builtin_names); i++)
		if (!strcmp(builtin_names[i], name))
			return 1;
	return 0;
}

const char *const sema_op_names[] = {
	"copy", "gemm", "fill", "clear", "reduce", "assume", "annotate_layout", "require_layout",
	"release_layout", "dump_layout", "assert_same_layout", "require_amd_wmma_layout",
	"atomic_add", "atomic_max", "atomic_min",
};
const int sema_nop_names = (int)countof(sema_op_names);

/* edit distance, capped: names longer than 40 are not compared */
static int
distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), i, j, d[41][41];

	if (la > 40 || lb > 40)
		return 99;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1; /* a transposition */
			d[i][j] = c;
		}
	}
	return d[la][lb];
}

const char *
sema_suggest(Sema *S, const char *name, unsigned kinds, const char *const *extra, int nextra)
{
	const char *best = NULL;
	size_t len = strlen(name), kl;
	int i, bd = len <= 2 ? 0 : len <= 5 ? 2 : 3, d; /* allow up to bd - 1 edits */
	Sym *s;

	if (bd == 0 || S->nsuggest >= 100)
		return "";
	S->nsuggest++;
	for (i = 0; i < nextra; i++) {
		d = distance(name, extra[i]);
		if (d < bd) {
			bd = d;
			best = extra[i];
		}
	}
	for (i = 0; kinds && i < S->capkeys; i++) {
		if (!S->keys[i] || !S->vals[i])
			continue;
		kl = strlen(S->keys[i]);
		if (kl + 2 < len || kl > len + 2)
			continue;
		s = sema_lookup(S, S->keys[i]);
		if (!s || !(kinds & (1u << s->kind)) || SYM_POISONED(s))
			continue;
		d = distance(name, S->keys[i]);
		if (d < bd || (d == bd && best && strcmp(S->keys[i], best) < 0)) {
			bd = d;
			best = S->keys[i];
		}
	}
	return best ? arena_printf(S->a, " (did you mean '%s'?)", best) : "";
}

static const char *
symkind(SymKind k)
{
	switch (k) {
	case SYM_CONST: return "const";
	case SYM_FUNC: return "helper";
	case SYM_KERNEL: return "kernel";
	case SYM_BUF: return "buffer";
	case SYM_VAR: return "variable";
	case SYM_EXPR: return "parameter";
	}
	return "name";
}

Sym *
sema_declare(Sema *S, SymKind kind, const char *name, Loc loc)
{
	int i;
	Sym *s, *old;

	if (kind != SYM_KERNEL && sema_builtin_name(name)) {
		diag(S->d, loc, "'%s' is a builtin name and cannot be redefined", name);
		return NULL;
	}
	i = findslot(S, name);
	if (i < 0)
		return NULL;
	old = S->keys[i] ? S->vals[i] : NULL;
	if (old && old->level == S->level) {
		if (kind == SYM_KERNEL)
			name += 7;
		diag(S->d, loc, "redefinition of %s'%s'", kind == SYM_KERNEL ? "kernel " : "", name);
		diag_note(S->d, old->loc, "previous definition of %s '%s' is here", symkind(old->declkind),
			  name);
		return NULL;
	}
	s = anew(S->a, Sym);
	if (!s)
		return NULL;
	s->kind = s->declkind = kind;
	s->name = name;
	s->loc = loc;
	s->level = S->level;
	s->shadow = old;
	if (!S->keys[i]) {
		S->keys[i] = name;
		S->nkeys++;
	}
	S->vals[i] = s;
	if (S->level < S->caplevels) {
		s->nextinlevel = S->levels[S->level];
		S->levels[S->level] = s;
	}
	return s;
}

void
sema_push(Sema *S)
{
	S->level++;
	if (S->level >= S->caplevels) {
		int cap = S->caplevels ? S->caplevels * 2 : 32;
		Sym **nl = arena_realloc(S->a, S->levels, sizeof *nl * (size_t)S->caplevels,
					 sizeof *nl * (size_t)cap);

		if (nl) {
			S->levels = nl;
			S->caplevels = cap;
		}
	}
	if (S->level < S->caplevels)
		S->levels[S->level] = NULL;
}

void
sema_pop(Sema *S)
{
	Sym *s;
	int i;

	if (S->level < S->caplevels) {
		for (s = S->levels[S->level]; s; s = s->nextinlevel) {
			i = findslot(S, s->name);
			if (i >= 0 && S->keys[i] && S->vals[i] == s)
				S->vals[i] = s->shadow;
		}
		S->levels[S->level] = NULL;
	}
	S->level--;
}

/* ---- helpers --------------------------------------------------------------- */

const char *
sx_text(Sema *S, const IrExpr *e)
{
	Buf b;
	const char *s;

	buf_init(&b);
	ir_dump_expr(&b, S->k, e);
	s = arena_strdup(S->a, buf_str(&b));
	buf_free(&b);
	return s ? s : "?";
}

static int
isconst(const IrExpr *e)
{
	return e && (e->kind == IE_INT || e->kind == IE_FLOAT || e->kind == IE_BOOL);
}

/* does v fit in integer type t? */
static int
fits(DType t, int64_t v)
{
	switch (t) {
	case DT_I8: return v >= -128 && v <= 127;
	case DT_U8: return v >= 0 && v <= 255;
	case DT_I32: return v >= INT32_MIN && v <= INT32_MAX;
	default: return 1;
	}
}

static IrExpr *
mkint(Sema *S, Loc loc, DType t, int64_t v)
{
	IrExpr *e = ir_int(S->a, loc, v);

	if (e)
		e->type = t;
	return e;
}

/* convert e to t; constants are folded, others cast; errors for bool<->number */
IrExpr *
sx_convert(Sema *S, IrExpr *e, DType t, Loc loc, const char *what)
{
	if (!e)
		return NULL;
	if (e->type == t)
		return e;
	if ((e->type == DT_BOOL) != (t == DT_BOOL)) {
		diag(S->d, loc, "%s: cannot convert %s to %s", what, dtype_name(e->type),
		     dtype_name(t));
		return NULL;
	}
	if (dtype_is_float(e->type) && dtype_is_int(t) && e->kind != IE_INT) {
		diag(S->d, loc, "%s: cannot convert %s to %s implicitly; use %s(...)", what,
		     dtype_name(e->type), dtype_name(t), dtype_name(t));
		return NULL;
	}
	if (e->kind == IE_INT && dtype_is_int(t)) {
		if (!fits(t, e->u.i)) {
			diag(S->d, loc, "%s: constant %lld does not fit in %s", what, (long long)e->u.i,
			     dtype_name(t));
			return NULL;
		}
		return mkint(S, e->loc, t, e->u.i);
	}
	if (e->kind == IE_INT && dtype_is_float(t))
		return ir_float(S->a, e->loc, t, (double)e->u.i);
	if (e->kind == IE_FLOAT && dtype_is_float(t))
		return ir_float(S->a, e->loc, t, e->u.f);
	return ir_cast(S->a, e->loc, t, e);
}

/* the common type of two numeric operands; constants are weak */
static DType
unify(const IrExpr *x, const IrExpr *y)
{
	DType a = x->type, b = y->type;
	int cx = isconst(x), cy = isconst(y);

	if (a == b)
		return a;
	if (cx != cy) {
		/* the constant adapts to the other side, if it can */
		const IrExpr *c = cx ? x : y, *o = cx ? y : x;

		if (dtype_is_int(c->type) || dtype_is_float(o->type))
			return o->type;
		return c->type; /* a float constant with an integer: float */
	}
	if (dtype_is_float(a) != dtype_is_float(b))
		return dtype_is_float(a) ? a : b;
	if (dtype_bytes(a) != dtype_bytes(b))
		return dtype_bytes(a) > dtype_bytes(b) ? a : b;
	return dtype_is_float(a) ? DT_F32 : DT_INT;
}

static const char *
opname(AstOp op)
{
	return ast_op_name(op);
}

static int
overflow(Sema *S, Loc loc, const char *op, int64_t a, int64_t b)
{
	diag(S->d, loc, "integer overflow in constant expression: %lld %s %lld does not fit in 64 "
	     "bits",
	     (long long)a, op, (long long)b);
	return -1;
}

/* fold an integer binary operation; -1 after an error, 1 for a bool result */
static int
foldint(Sema *S, Loc loc, BinOp op, int64_t a, int64_t b, int64_t *r)
{
	const char *s = binop_name(op);

	switch (op) {
	case BIN_ADD:
		if (__builtin_add_overflow(a, b, r))
			return overflow(S, loc, s, a, b);
		return 0;
	case BIN_SUB:
		if (__builtin_sub_overflow(a, b, r))
			return overflow(S, loc, s, a, b);
		return 0;
	case BIN_MUL:
		if (__builtin_mul_overflow(a, b, r))
			return overflow(S, loc, s, a, b);
		return 0;
	case BIN_DIV:
	case BIN_MOD:
		if (b == 0) {
			diag(S->d, loc, "division by zero in constant expression: %lld %s 0", (long long)a,
			     s);
			return -1;
		}
		if (a == INT64_MIN && b == -1) {
			if (op == BIN_MOD) {
				*r = 0;
				return 0;
			}
			return overflow(S, loc, s, a, b);
		}
		*r = op == BIN_DIV ? floordiv64(a, b) : floormod64(a, b);
		return 0;
	case BIN_SHL:
	case BIN_SHR:
		if (b < 0 || b > 63) {
			diag(S->d, loc, "shift count %lld out of range [0, 63]", (long long)b);
			return -1;
		}
		if (op == BIN_SHR) {
			*r = a >= 0 ? a >> b : ~(~a >> b);
			return 0;
		}
		/* a << b = a * 2^b; 1 << 63 (2^63) does not fit */
		if (a > (INT64_MAX >> b) || a < (INT64_MIN >> b))
			return overflow(S, loc, s, a, b);
		*r = (int64_t)((uint64_t)a << b);
		return 0;
	case BIN_BAND: *r = a & b; return 0;
	case BIN_BOR: *r = a | b; return 0;
	case BIN_BXOR: *r = a ^ b; return 0;
	case BIN_LT: *r = a < b; return 1;
	case BIN_LE: *r = a <= b; return 1;
	case BIN_GT: *r = a > b; return 1;
	case BIN_GE: *r = a >= b; return 1;
	case BIN_EQ: *r = a == b; return 1;
	case BIN_NE: *r = a != b; return 1;
	default: return -1;
	}
}

static BinOp
binop_of(AstOp op)
{
	switch (op) {
	case OP_MUL: return BIN_MUL;
	case OP_DIV: return BIN_DIV;
	case OP_MOD: return BIN_MOD;
	case OP_ADD: return BIN_ADD;
	case OP_SUB: return BIN_SUB;
	case OP_SHL: return BIN_SHL;
	case OP_SHR: return BIN_SHR;
	case OP_LT: return BIN_LT;
	case OP_LE: return BIN_LE;
	case OP_GT: return BIN_GT;
	case OP_GE: return BIN_GE;
	case OP_EQ: return BIN_EQ;
	case OP_NE: return BIN_NE;
	case OP_AND: return BIN_BAND;
	case OP_XOR: return BIN_BXOR;
	case OP_OR: return BIN_BOR;
	case OP_LAND: return BIN_LAND;
	case OP_LOR: return BIN_LOR;
	default: return BIN_COUNT;
	}
}

static int
iscmp(BinOp op)
{
	return op >= BIN_LT && op <= BIN_NE;
}

/* type-check, convert and fold x op y */
static IrExpr *
binary(Sema *S, Loc loc, BinOp op, IrExpr *x, IrExpr *y)
{
	const char *s = binop_name(op);
	DType t;
	int64_t r;
	int k;

	if (!x || !y)
		return NULL;
	if (op == BIN_LAND || op == BIN_LOR) {
		if (x->type != DT_BOOL || y->type != DT_BOOL) {
			diag(S->d, loc, "operator '%s' needs bool operands, got %s and %s", s,
			     dtype_name(x->type), dtype_name(y->type));
			return NULL;
		}
		if (x->kind == IE_BOOL && y->kind == IE_BOOL)
			return ir_bool(S->a, loc, op == BIN_LAND ? x->u.i && y->u.i : x->u.i || y->u.i);
		return ir_binary(S->a, loc, DT_BOOL, op, x, y);
	}
	if (x->type == DT_BOOL || y->type == DT_BOOL) {
		int bitop = op == BIN_BAND || op == BIN_BOR || op == BIN_BXOR || op == BIN_EQ ||
			    op == BIN_NE;

		if (x->type != y->type || !bitop) {
			diag(S->d, loc, "operator '%s' cannot combine %s and %s", s, dtype_name(x->type),
			     dtype_name(y->type));
			return NULL;
		}
		if (x->kind == IE_BOOL && y->kind == IE_BOOL) {
			foldint(S, loc, op, x->u.i, y->u.i, &r);
			return ir_bool(S->a, loc, (int)r);
		}
		return ir_binary(S->a, loc, DT_BOOL, op, x, y);
	}
	t = unify(x, y);
	if (dtype_is_float(t) && (op == BIN_MOD || op == BIN_SHL || op == BIN_SHR ||
				  op == BIN_BAND || op == BIN_BOR || op == BIN_BXOR)) {
		diag(S->d, loc, "operator '%s' needs integer operands, got %s and %s", s,
		     dtype_name(x->type), dtype_name(y->type));
		return NULL;
	}
	x = sx_convert(S, x, t, loc, s);
	y = sx_convert(S, y, t, loc, s);
	if (!x || !y)
		return NULL;
	if (x->kind == IE_INT && y->kind == IE_INT) {
		k = foldint(S, loc, op, x->u.i, y->u.i, &r);
		if (k < 0)
			return NULL;
		if (k == 1)
			return ir_bool(S->a, loc, (int)r);
		if (!fits(t, r)) {
			diag(S->d, loc, "integer overflow in constant expression: %lld %s %lld "
			     "does not fit in %s",
			     (long long)x->u.i, s, (long long)y->u.i, dtype_name(t));
			return NULL;
		}
		return mkint(S, loc, t, r);
	}
	if (x->kind == IE_FLOAT && y->kind == IE_FLOAT) {
		double a = x->u.f, b = y->u.f, v = 0;

		switch (op) {
		case BIN_ADD: v = a + b; break;
		case BIN_SUB: v = a - b; break;
		case BIN_MUL: v = a * b; break;
		case BIN_DIV:
			if (b == 0) {
				diag(S->d, loc, "division by zero in constant expression");
				return NULL;
			}
			v = a / b;
			break;
		case BIN_LT: return ir_bool(S->a, loc, a < b);
		case BIN_LE: return ir_bool(S->a, loc, a <= b);
		case BIN_GT: return ir_bool(S->a, loc, a > b);
		case BIN_GE: return ir_bool(S->a, loc, a >= b);
		case BIN_EQ: return ir_bool(S->a, loc, a == b);
		case BIN_NE: return ir_bool(S->a, loc, a != b);
		default: break;
		}
		if (!isfinite(v)) {
			diag(S->d, loc, "constant expression overflows: %g %s %g", a, s, b);
			return NULL;
		}
		return ir_float(S->a, loc, t, v);
	}
	if (dtype_is_int(t) && (op == BIN_DIV || op == BIN_MOD) && y->kind == IE_INT && y->u.i == 0) {
		diag(S->d, loc, "division by zero: '%s %s 0'", sx_text(S, x), s);
		return NULL;
	}
	/* integer identities: x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 */
	if (dtype_is_int(t)) {
		if (y->kind == IE_INT && ((y->u.i == 0 && (op == BIN_ADD || op == BIN_SUB)) ||
					  (y->u.i == 1 && (op == BIN_MUL || op == BIN_DIV))))
			return x;
		if (x->kind == IE_INT && ((x->u.i == 0 && op == BIN_ADD) || (x->u.i == 1 && op == BIN_MUL)))
			return y;
	}
	return ir_binary(S->a, loc, iscmp(op) ? DT_BOOL : t, op, x, y);
}

IrExpr *
sx_binary(Sema *S, Loc loc, BinOp op, IrExpr *x, IrExpr *y)
{
	return binary(S, loc, op, x, y);
}

/* ---- constants --------------------------------------------------------- */

IrExpr *
sx_const_value(Sema *S, Sym *s)
{
	IrKernel *k;
	IrExpr *v;
	int base, inpar, inloop;

	if (s->state == 2)
		return s->u.val;
	if (s->state == 1) {
		diag(S->d, s->loc, "const '%s' depends on itself", s->name);
		s->state = 2;
		s->u.val = NULL;
		return NULL;
	}
	s->state = 1;
	/* evaluate in the global scope only */
	k = S->k;
	base = S->base;
	inpar = S->in_par;
	inloop = S->in_loop;
	S->k = NULL;
	S->base = 1 << 30;
	v = sx_expr(S, s->node->u.bind.value);
	S->k = k;
	S->base = base;
	S->in_par = inpar;
	S->in_loop = inloop;
	if (v && !isconst(v)) {
		diag(S->d, s->node->u.bind.value->loc,
		     "const '%s' is not a constant expression: '%s'", s->name, sx_text(S, v));
		v = NULL;
	}
	if (s->state == 1) {
		s->u.val = v;
		s->state = 2;
	}
	return s->u.val;
}

int
sx_const_int(Sema *S, const Node *n, const char *what, int64_t *v)
{
	IrExpr *e = sx_expr(S, n);

	if (!e)
		return -1;
	if (e->kind != IE_INT) {
		if (dtype_is_int(e->type))
			diag(S->d, n->loc, "%s must be a constant, got '%s'", what, sx_text(S, e));
		else
			diag(S->d, n->loc, "%s must be an integer constant, got %s '%s'", what,
			     dtype_name(e->type), sx_text(S, e));
		return -1;
	}
	*v = e->u.i;
	return 0;
}

IrExpr *
sx_int(Sema *S, const Node *n, const char *what)
{
	IrExpr *e = sx_expr(S, n);

	if (e && !dtype_is_int(e->type)) {
		diag(S->d, n->loc, "%s must be an integer, got %s '%s'", what, dtype_name(e->type),
		     sx_text(S, e));
		return NULL;
	}
	return e;
}

IrExpr *
sx_bool(Sema *S, const Node *n, const char *what)
{
	IrExpr *e = sx_expr(S, n);

	if (e && e->type != DT_BOOL) {
		diag(S->d, n->loc, "%s must be a bool, got %s '%s'", what, dtype_name(e->type),
		     sx_text(S, e));
		return NULL;
	}
	return e;
}

int
sx_is_header_expr(const IrExpr *e, const char **what)
{
	int i;

	if (!e)
		return 1;
	switch (e->kind) {
	case IE_VAR:
		if (e->u.var->kind == VAR_SIZE || e->u.var->kind == VAR_SCALAR)
			return 1;
		*what = e->u.var->kind == VAR_LOOP  ? "a loop variable"
			: e->u.var->kind == VAR_LET ? "a let variable"
						    : "a block index";
		return 0;
	case IE_LOAD:
		*what = "a buffer element";
		return 0;
	case IE_UNARY:
		return sx_is_header_expr(e->u.un.a, what);
	case IE_BINARY:
		return sx_is_header_expr(e->u.bin.a, what) && sx_is_header_expr(e->u.bin.b, what);
	case IE_SELECT:
		return sx_is_header_expr(e->u.sel.c, what) && sx_is_header_expr(e->u.sel.a, what) &&
		       sx_is_header_expr(e->u.sel.b, what);
	case IE_CAST:
		return sx_is_header_expr(e->u.cast.a, what);
	case IE_CALL:
		for (i = 0; i < e->u.call.n; i++)
			if (!sx_is_header_expr(e->u.call.args[i], what))
				return 0;
		return 1;
	default:
		return 1;
	}
}

/* ---- linear forms: is hi - lo constant? -------------------------------------- */

enum { MAXTERMS = 32 };

typedef struct Lin {
	int n, bad;
	int64_t c;
	int64_t coef[MAXTERMS];
	const IrExpr *atom[MAXTERMS];
} Lin;

static void
linadd(Lin *l, const IrExpr *e, int64_t m)
{
	int64_t v;
	int i;

	if (l->bad)
		return;
	if (e->kind == IE_INT) {
		if (__builtin_mul_overflow(e->u.i, m, &v) || __builtin_add_overflow(l->c, v, &l->c))
			l->bad = 1;
		return;
	}
	if (e->kind == IE_BINARY && (e->u.bin.op == BIN_ADD || e->u.bin.op == BIN_SUB)) {
		linadd(l, e->u.bin.a, m);
		if (m == INT64_MIN) {
			l->bad = 1;
			return;
		}
		linadd(l, e->u.bin.b, e->u.bin.op == BIN_ADD ? m : -m);
		return;
	}
	if (e->kind == IE_BINARY && e->u.bin.op == BIN_MUL &&
	    (e->u.bin.a->kind == IE_INT || e->u.bin.b->kind == IE_INT)) {
		const IrExpr *c = e->u.bin.a->kind == IE_INT ? e->u.bin.a : e->u.bin.b;
		const IrExpr *o = c == e->u.bin.a ? e->u.bin.b : e->u.bin.a;

		if (__builtin_mul_overflow(c->u.i, m, &v)) {
			l->bad = 1;
			return;
		}
		linadd(l, o, v);
		return;
	}
	if (e->kind == IE_UNARY && e->u.un.op == UN_NEG && m != INT64_MIN) {
		linadd(l, e->u.un.a, -m);
		return;
	}
	for (i = 0; i < l->n; i++) {
		if (ir_expr_equal(l->atom[i], e)) {
			if (__builtin_add_overflow(l->coef[i], m, &l->coef[i]))
				l->bad = 1;
			return;
		}
	}
	if (l->n == MAXTERMS) {
		l->bad = 1;
		return;
	}
	l->atom[l->n] = e;
	l->coef[l->n++] = m;
}

int
sx_const_diff(const IrExpr *hi, const IrExpr *lo, int64_t *v)
{
	Lin l;
	int i;

	memset(&l, 0, sizeof l);
	linadd(&l, hi, 1);
	linadd(&l, lo, -1);
	if (l.bad)
		return 0;
	for (i = 0; i < l.n; i++)
		if (l.coef[i])
			return 0;
	*v = l.c;
	return 1;
}

/* ---- expressions ----------------------------------------------------------- */

static IrExpr *
block_index(Sema *S, const Node *n, int dim)
{
	int i;

	if (!S->k) {
		diag(S->d, n->loc, "'%s' is only defined inside a kernel", n->u.name);
		return NULL;
	}
	if (S->in_grid) {
		diag(S->d, n->loc, "block index '%s' cannot be used in grid(...)", n->u.name);
		return NULL;
	}
	if (dim >= S->k->ngrid) {
		diag(S->d, n->loc, "'%s' needs a grid of at least %d dimensions; the grid of '%s' "
		     "has %d",
		     n->u.name, dim + 1, S->k->name, S->k->ngrid);
		return NULL;
	}
	for (i = 0; i < S->k->nvar; i++)
		if (S->k->vars[i]->kind == VAR_BLOCK && !strcmp(S->k->vars[i]->name, n->u.name))
			return ir_var(S->a, n->loc, S->k->vars[i]);
	return NULL;
}

static IrExpr *
ident(Sema *S, const Node *n)
{
	const char *name = n->u.name;
	Sym *s = sema_lookup(S, name);
	IrExpr *v, *c;

	if (!s) {
		if (!strcmp(name, "bx") || !strcmp(name, "by") || !strcmp(name, "bz"))
			return block_index(S, n, name[1] - 'x');
		/* the float constants without a literal; -inf is the negation of inf */
		if (!strcmp(name, "inf"))
			return ir_float(S->a, n->loc, DT_F32, INFINITY);
		if (!strcmp(name, "nan"))
			return ir_float(S->a, n->loc, DT_F32, NAN);
		if (dtype_lookup(name, (int)strlen(name)) != DT_NONE)
			diag(S->d, n->loc, "'%s' is an element type, not a value", name);
		else if (sema_builtin_name(name))
			diag(S->d, n->loc, "'%s' is a builtin operation, not a value", name);
		else
			diag(S->d, n->loc, "unknown name '%s'%s", name,
			     sema_suggest(S, name, SUGGEST_VALUES, (const char *const[]){"bx", "by", "bz"},
					  S->k ? S->k->ngrid : 0));
		return NULL;
	}
	switch (s->kind) {
	case SYM_CONST:
		v = sx_const_value(S, s);
		if (!v)
			return NULL;
		c = anew(S->a, IrExpr);
		if (c) {
			*c = *v;
			c->loc = n->loc;
		}
		return c;
	case SYM_VAR:
		return ir_var(S->a, n->loc, s->u.var);
	case SYM_EXPR: /* a helper's scalar argument: each use gets its own tree */
		return ir_expr_copy(S->a, s->u.val);
	case SYM_BUF:
		diag(S->d, n->loc, "buffer '%s' used as a value; index it, e.g. %s[i, ...]", name, name);
		return NULL;
	case SYM_FUNC:
		diag(S->d, n->loc, "helper '%s' used as a value", name);
		return NULL;
	case SYM_KERNEL:
		diag(S->d, n->loc, "kernel '%s' used as a value", name);
		return NULL;
	}
	return NULL;
}

static IrExpr *
unary(Sema *S, const Node *n)
{
	IrExpr *x = sx_expr(S, n->u.unary.x);
	Loc loc = n->loc;

	if (!x)
		return NULL;
	switch (n->u.unary.op) {
	case OP_NEG:
		if (x->type == DT_BOOL) {
			diag(S->d, loc, "operator '-' needs a number, got bool");
			return NULL;
		}
		if (x->kind == IE_INT) {
			if (x->u.i == INT64_MIN || !fits(x->type, -x->u.i)) {
				diag(S->d, loc, "integer overflow in constant expression: -(%lld)",
				     (long long)x->u.i);
				return NULL;
			}
			return mkint(S, loc, x->type, -x->u.i);
		}
		if (x->kind == IE_FLOAT)
			return ir_float(S->a, loc, x->type, -x->u.f);
		return ir_unary(S->a, loc, x->type, UN_NEG, x);
	case OP_NOT:
		if (x->type != DT_BOOL) {
			diag(S->d, loc, "operator '!' needs a bool, got %s", dtype_name(x->type));
			return NULL;
		}
		if (x->kind == IE_BOOL)
			return ir_bool(S->a, loc, !x->u.i);
		return ir_unary(S->a, loc, DT_BOOL, UN_NOT, x);
	case OP_BNOT:
		if (!dtype_is_int(x->type)) {
			diag(S->d, loc, "operator '~' needs an integer, got %s", dtype_name(x->type));
			return NULL;
		}
		if (x->kind == IE_INT)
			return mkint(S, loc, x->type, ~x->u.i);
		return ir_unary(S->a, loc, x->type, UN_BNOT, x);
	default:
		diag(S->d, loc, "unknown unary operator '%s'", opname(n->u.unary.op));
		return NULL;
	}
}

static IrExpr *
condexpr(Sema *S, const Node *n)
{
	IrExpr *c = sx_bool(S, n->u.cond.cond, "condition of '?:'");
	IrExpr *x = sx_expr(S, n->u.cond.then), *y = sx_expr(S, n->u.cond.els);
	DType t;

	if (!c || !x || !y)
		return NULL;
	if ((x->type == DT_BOOL) != (y->type == DT_BOOL)) {
		diag(S->d, n->loc, "branches of '?:' have types %s and %s", dtype_name(x->type),
		     dtype_name(y->type));
		return NULL;
	}
	t = x->type == DT_BOOL ? DT_BOOL : unify(x, y);
	x = sx_convert(S, x, t, n->loc, "?:");
	y = sx_convert(S, y, t, n->loc, "?:");
	if (!x || !y)
		return NULL;
	if (c->kind == IE_BOOL)
		return c->u.i ? x : y;
	return ir_select(S->a, n->loc, c, x, y);
}

static IrExpr *
load(Sema *S, const Node *n)
{
	const Node *base = n->u.index.base, *ix;
	IrBuffer *b;
	IrExpr **idx;
	Sym *s;
	int i, bad = 0;

	if (base->kind != N_IDENT) {
		diag(S->d, n->loc, "only buffers can be indexed");
		return NULL;
	}
	s = sema_lookup(S, base->u.name);
	if (s && SYM_POISONED(s))
		return NULL;
	if (!s || s->kind != SYM_BUF) {
		if (!s && !sema_builtin_name(base->u.name))
			diag(S->d, base->loc, "unknown buffer '%s'%s", base->u.name,
			     sema_suggest(S, base->u.name, SUGGEST_BUFFERS, NULL, 0));
		else
			diag(S->d, base->loc, "'%s' is not a buffer and cannot be indexed", base->u.name);
		return NULL;
	}
	b = &S->k->bufs[s->u.buf];
	if (n->u.index.nidx != b->ndim) {
		diag(S->d, n->loc, "'%s' has %d dimension%s but is indexed with %d", b->name, b->ndim,
		     b->ndim == 1 ? "" : "s", n->u.index.nidx);
		return NULL;
	}
	idx = anewn(S->a, IrExpr *, b->ndim);
	if (!idx)
		return NULL;
	for (i = 0, ix = n->u.index.idx; ix && i < b->ndim; i++, ix = ix->next) {
		if (ix->kind == N_SLICE) {
			diag(S->d, ix->loc,
			     "slice in an element access of '%s'; slices are for copy, gemm and "
			     "fill regions",
			     b->name);
			bad = 1;
			continue;
		}
		idx[i] = sx_int(S, ix, "an index");
		if (!idx[i]) {
			bad = 1;
			continue;
		}
		if (idx[i]->kind == IE_INT && !b->dims[i].sym &&
		    (idx[i]->u.i < 0 || idx[i]->u.i >= b->dims[i].c)) {
			diag(S->d, ix->loc, "index %lld out of range for dimension %d of '%s' "
			     "(size %lld)",
			     (long long)idx[i]->u.i, i, b->name, (long long)b->dims[i].c);
			bad = 1;
		}
	}
	if (bad)
		return NULL;
	return ir_load(S->a, n->loc, b->dtype, s->u.buf, b->ndim, idx);
}

static int
nargs_ok(Sema *S, const Node *n, const char *name, int want)
{
	const Node *a;

	for (a = n->u.call.args; a; a = a->next) {
		if (a->kind == N_NAMED) {
			diag(S->d, a->loc, "%s takes no named arguments ('%s')", name, a->u.bind.name);
			return 0;
		}
	}
	if (n->u.call.nargs != want) {
		diag(S->d, n->loc, "%s takes %d argument%s, got %d", name, want, want == 1 ? "" : "s",
		     n->u.call.nargs);
		return 0;
	}
	return 1;
}

static IrExpr *
cast(Sema *S, const Node *n, DType t)
{
	IrExpr *x;

	if (!nargs_ok(S, n, dtype_name(t), 1))
		return NULL;
	x = sx_expr(S, n->u.call.args);
	if (!x)
		return NULL;
	if (x->type == t)
		return x;
	if (x->kind == IE_INT && dtype_is_int(t))
		return sx_convert(S, x, t, n->loc, "cast");
	if (x->kind == IE_INT && dtype_is_float(t))
		return ir_float(S->a, n->loc, t, (double)x->u.i);
	if (x->kind == IE_FLOAT && dtype_is_float(t))
		return ir_float(S->a, n->loc, t, x->u.f);
	if (x->kind == IE_FLOAT && dtype_is_int(t)) {
		if (!(x->u.f > -9.2e18 && x->u.f < 9.2e18) || !fits(t, (int64_t)x->u.f)) {
			diag(S->d, n->loc, "constant %g does not fit in %s", x->u.f, dtype_name(t));
			return NULL;
		}
		return mkint(S, n->loc, t, (int64_t)x->u.f);
	}
	if (x->kind == IE_BOOL && t != DT_BOOL)
		return dtype_is_float(t) ? ir_float(S->a, n->loc, t, (double)x->u.i)
					 : mkint(S, n->loc, t, x->u.i);
	if (t == DT_BOOL && x->kind == IE_INT)
		return ir_bool(S->a, n->loc, x->u.i != 0);
	return ir_cast(S->a, n->loc, t, x);
}

static double
mathf(MathFn fn, double x)
{
	switch (fn) {
	case FN_EXP: return exp(x);
	case FN_EXP2: return exp2(x);
	case FN_LOG: return log(x);
	case FN_LOG2: return log2(x);
	case FN_SQRT: return sqrt(x);
	case FN_RSQRT: return 1 / sqrt(x);
	case FN_ABS: return fabs(x);
	case FN_TANH: return tanh(x);
	case FN_SIN: return sin(x);
	case FN_COS: return cos(x);
	default: return x;
	}
}

static IrExpr *
mathcall(Sema *S, const Node *n, MathFn fn)
{
	const char *name = mathfn_name(fn);
	int ar = mathfn_arity(fn), i;
	IrExpr *x[2], **args;
	const Node *a;
	DType t;

	if (!nargs_ok(S, n, name, ar))
		return NULL;
	for (i = 0, a = n->u.call.args; i < ar; i++, a = a->next)
		x[i] = sx_expr(S, a);
	for (i = 0; i < ar; i++)
		if (!x[i])
			return NULL;
	for (i = 0; i < ar; i++) {
		if (x[i]->type == DT_BOOL) {
			diag(S->d, n->loc, "%s needs numbers, got bool", name);
			return NULL;
		}
	}
	if (fn == FN_CDIV) {
		int64_t r, q;

		if (!dtype_is_int(x[0]->type) || !dtype_is_int(x[1]->type)) {
			diag(S->d, n->loc, "cdiv needs integers, got %s and %s", dtype_name(x[0]->type),
			     dtype_name(x[1]->type));
			return NULL;
		}
		t = unify(x[0], x[1]);
		x[0] = sx_convert(S, x[0], t, n->loc, name);
		x[1] = sx_convert(S, x[1], t, n->loc, name);
		if (!x[0] || !x[1])
			return NULL;
		if (x[1]->kind == IE_INT && x[1]->u.i <= 0) {
			diag(S->d, n->loc, "cdiv: divisor must be positive, got %lld",
			     (long long)x[1]->u.i);
			return NULL;
		}
		if (x[0]->kind == IE_INT && x[1]->kind == IE_INT) {
			/* ceil(a / b) = -floor(-a / b) */
			if (x[0]->u.i == INT64_MIN) {
				diag(S->d, n->loc, "integer overflow in constant expression: "
				     "cdiv(%lld, %lld)",
				     (long long)x[0]->u.i, (long long)x[1]->u.i);
				return NULL;
			}
			q = floordiv64(-x[0]->u.i, x[1]->u.i);
			r = -q;
			return mkint(S, n->loc, t, r);
		}
	} else if (fn == FN_MAX || fn == FN_MIN || fn == FN_ABS) {
		t = ar == 2 ? unify(x[0], x[1]) : x[0]->type;
		for (i = 0; i < ar; i++)
			if (!(x[i] = sx_convert(S, x[i], t, n->loc, name)))
				return NULL;
		if (x[0]->kind == IE_INT && (ar == 1 || x[1]->kind == IE_INT)) {
			if (fn == FN_ABS) {
				if (x[0]->u.i == INT64_MIN) {
					diag(S->d, n->loc, "integer overflow in constant "
					     "expression: abs(%lld)",
					     (long long)x[0]->u.i);
					return NULL;
				}
				return mkint(S, n->loc, t, x[0]->u.i < 0 ? -x[0]->u.i : x[0]->u.i);
			}
			return mkint(S, n->loc, t,
				     (fn == FN_MAX) == (x[0]->u.i > x[1]->u.i) ? x[0]->u.i : x[1]->u.i);
		}
		if (x[0]->kind == IE_FLOAT && (ar == 1 || x[1]->kind == IE_FLOAT)) {
			if (fn == FN_ABS)
				return ir_float(S->a, n->loc, t, fabs(x[0]->u.f));
			return ir_float(S->a, n->loc, t,
					(fn == FN_MAX) == (x[0]->u.f > x[1]->u.f) ? x[0]->u.f : x[1]->u.f);
		}
	} else {
		t = dtype_is_float(x[0]->type) ? x[0]->type : DT_F32;
		if (!(x[0] = sx_convert(S, x[0], t, n->loc, name)))
			return NULL;
		if (x[0]->kind == IE_FLOAT) {
			double v = mathf(fn, x[0]->u.f);

			if (!isfinite(v)) {
				diag(S->d, n->loc, "%s(%g) is not a finite number", name, x[0]->u.f);
				return NULL;
			}
			return ir_float(S->a, n->loc, t, v);
		}
	}
	args = anewn(S->a, IrExpr *, ar);
	if (!args)
		return NULL;
	for (i = 0; i < ar; i++)
		args[i] = x[i];
	return ir_call(S->a, n->loc, t, fn, ar, args);
}

static IrExpr *
selectcall(Sema *S, const Node *n)
{
	IrExpr *c, *x, *y;
	DType t;

	if (!nargs_ok(S, n, "select", 3))
		return NULL;
	c = sx_bool(S, n->u.call.args, "select condition");
	x = sx_expr(S, n->u.call.args->next);
	y = sx_expr(S, n->u.call.args->next->next);
	if (!c || !x || !y)
		return NULL;
	if ((x->type == DT_BOOL) != (y->type == DT_BOOL)) {
		diag(S->d, n->loc, "select: values have types %s and %s", dtype_name(x->type),
		     dtype_name(y->type));
		return NULL;
	}
	t = x->type == DT_BOOL ? DT_BOOL : unify(x, y);
	x = sx_convert(S, x, t, n->loc, "select");
	y = sx_convert(S, y, t, n->loc, "select");
	if (!x || !y)
		return NULL;
	if (c->kind == IE_BOOL)
		return c->u.i ? x : y;
	return ir_select(S->a, n->loc, c, x, y);
}

static IrExpr *
call(Sema *S, const Node *n)
{
	const char *name = n->u.call.name;
	int len = (int)strlen(name), fn;
	DType t;
	Sym *s;

	s = sema_lookup(S, name);
	if (s && SYM_POISONED(s))
		return NULL;
	if (s) {
		if (s->kind == SYM_FUNC)
			diag(S->d, n->loc, "helper '%s' is called in an expression; call it as a "
			     "statement",
			     name);
		else
			diag(S->d, n->loc, "'%s' is not a function", name);
		return NULL;
	}
	if ((t = dtype_lookup(name, len)) != DT_NONE)
		return cast(S, n, t);
	if ((fn = mathfn_lookup(name, len)) >= 0)
		return mathcall(S, n, (MathFn)fn);
	if (!strcmp(name, "select"))
		return selectcall(S, n);
	if (!strcmp(name, "cute") || !strcmp(name, "swizzle") || !strncmp(name, "mma_", 4))
		diag(S->d, n->loc, "layout literal '%s(...)' is only allowed in a layout statement", name);
	else if (!strcmp(name, "range") || !strcmp(name, "pipeline") || !strcmp(name, "parallel"))
		diag(S->d, n->loc, "'%s(...)' is only allowed as the iterator of a for loop", name);
	else if (sema_builtin_name(name))
		diag(S->d, n->loc, "'%s' is a statement and has no value", name);
	else
	{
		const char *fns[FN_COUNT + DT_COUNT + 1];
		int nf = 0, i;

		for (i = 0; i < FN_COUNT; i++)
			fns[nf++] = mathfn_name((MathFn)i);
		for (i = DT_BOOL; i < DT_COUNT; i++)
			if (i != DT_INT)
				fns[nf++] = dtype_name((DType)i);
		fns[nf++] = "select";
		diag(S->d, n->loc, "unknown function '%s'%s", name, sema_suggest(S, name, 0, fns, nf));
	}
	return NULL;
}

IrExpr *
sx_expr(Sema *S, const Node *n)
{
	if (!n)
		return NULL;
	switch (n->kind) {
	case N_INT:
		return ir_int(S->a, n->loc, n->u.ival);
	case N_FLOAT:
		return ir_float(S->a, n->loc, DT_F32, n->u.fval);
	case N_BOOL:
		return ir_bool(S->a, n->loc, n->u.bval);
	case N_IDENT:
		return ident(S, n);
	case N_UNARY:
		return unary(S, n);
	case N_BINARY: {
		IrExpr *x = sx_expr(S, n->u.bin.l), *y = sx_expr(S, n->u.bin.r);
		BinOp op = binop_of(n->u.bin.op);

		if (op == BIN_COUNT) {
			diag(S->d, n->loc, "unknown binary operator '%s'", opname(n->u.bin.op));
			return NULL;
		}
		return binary(S, n->loc, op, x, y);
	}
	case N_COND:
		return condexpr(S, n);
	case N_INDEX:
		if (!S->k) {
			diag(S->d, n->loc, "buffer access outside a kernel");
			return NULL;
		}
		return load(S, n);
	case N_CALL:
		return call(S, n);
	case N_STR:
		diag(S->d, n->loc, "a string is only allowed in cute(\"...\")");
		return NULL;
	case N_SLICE:
		diag(S->d, n->loc, "a slice 'lo:hi' is only allowed in a region of copy, gemm or "
		     "fill");
		return NULL;
	case N_LIST:
		diag(S->d, n->loc, "a list '[...]' is only allowed as an argument of "
		     "require_amd_wmma_layout");
		return NULL;
	case N_NAMED:
		diag(S->d, n->loc, "named argument '%s' outside a call", n->u.bind.name);
		return NULL;
	default:
		diag(S->d, n->loc, "expected an expression, found a %s", ast_kind_name(n->kind));
		return NULL;
	}
}
