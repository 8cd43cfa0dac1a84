/*
 * lw_expr.c: the expressions of the lowered code, as C text: index
 * expressions over slot and thread (IExpr), tile IR expressions, element
 * addresses in global, shared (swizzled, staged) and local memory, the sign
 * and range prover behind guard elision, element and vector guards, and the
 * vector planning of register copies (fragment runs, packing, the
 * rows-of-whole-vectors flags).
 */
#include "lw.h"

static int positive(const Em *e, const IrExpr *x);
/* ---- index expressions as C ------------------------------------------------ */

/*
 * Is C text s an atom (an identifier, a number, a call or index of one, a
 * cast of one, or wholly in one pair of parentheses)? Text substituted into
 * another expression is parenthesized unless it is, so that no composition
 * loses precedence (`bx * cdiv(N, 7)`, a region offset `o + r` times a stride).
 */
char *
lw_ixstr(Em *e, const IExpr *x, const char *const *names)
{
	Buf b;
	char *s;

	buf_init(&b);
	lir_c_index(&b, x, names);
	s = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return s;
}

static int
nonneg(const Em *e, const IrExpr *x)
{
	switch (x->kind) {
	case IE_INT: return x->u.i >= 0;
	case IE_BOOL: return 1;
	case IE_VAR:
		if (x->type == DT_U8 || x->type == DT_BOOL)
			return 1;
		switch (x->u.var->kind) {
		case VAR_SIZE: case VAR_BLOCK: return 1;
		case VAR_LOOP: case VAR_LET: return e->nnvar && e->nnvar[x->u.var->id];
		default: return 0;
		}
	case IE_LOAD: return x->type == DT_U8 || x->type == DT_BOOL;
	case IE_CAST:
		return x->u.cast.a->type == DT_BOOL || x->u.cast.a->type == DT_U8 ||
		       (!dtype_is_float(x->u.cast.a->type) && nonneg(e, x->u.cast.a));
	case IE_SELECT: return nonneg(e, x->u.sel.a) && nonneg(e, x->u.sel.b);
	case IE_UNARY: return 0;
	case IE_BINARY:
		if (dtype_is_float(x->type))
			return 0;
		switch (x->u.bin.op) {
		case BIN_ADD: case BIN_MUL: case BIN_BOR: case BIN_BXOR:
			return nonneg(e, x->u.bin.a) && nonneg(e, x->u.bin.b);
		case BIN_BAND: return nonneg(e, x->u.bin.a) || nonneg(e, x->u.bin.b);
		case BIN_SHR: case BIN_SHL: return nonneg(e, x->u.bin.a);
		case BIN_DIV: return nonneg(e, x->u.bin.a) && positive(e, x->u.bin.b);
		case BIN_MOD: return positive(e, x->u.bin.b);
		case BIN_LT: case BIN_LE: case BIN_GT: case BIN_GE: case BIN_EQ: case BIN_NE:
		case BIN_LAND: case BIN_LOR:
			return 1; /* bools */
		default: return 0; /* BIN_SUB */
		}
	case IE_CALL:
		if (dtype_is_float(x->type))
			return 0;
		switch (x->u.call.fn) {
		case FN_ABS: return 1;
		case FN_MAX: return nonneg(e, x->u.call.args[0]) || nonneg(e, x->u.call.args[1]);
		case FN_MIN: return nonneg(e, x->u.call.args[0]) && nonneg(e, x->u.call.args[1]);
		case FN_CDIV: return nonneg(e, x->u.call.args[0]) && positive(e, x->u.call.args[1]);
		default: return 0;
		}
	default: return 0;
	}
}

static int
positive(const Em *e, const IrExpr *x)
{
	switch (x->kind) {
	case IE_INT: return x->u.i > 0;
	case IE_VAR: return x->u.var->kind == VAR_SIZE; /* a zero size divides by zero anyway */
	case IE_BINARY:
		switch (x->u.bin.op) {
		case BIN_ADD:
			return (positive(e, x->u.bin.a) && nonneg(e, x->u.bin.b)) ||
			       (nonneg(e, x->u.bin.a) && positive(e, x->u.bin.b));
		case BIN_MUL: return positive(e, x->u.bin.a) && positive(e, x->u.bin.b);
		default: return 0;
		}
	case IE_CALL:
		if (x->u.call.fn == FN_MAX)
			return positive(e, x->u.call.args[0]) || positive(e, x->u.call.args[1]);
		if (x->u.call.fn == FN_MIN)
			return positive(e, x->u.call.args[0]) && positive(e, x->u.call.args[1]);
		return 0;
	default: return 0;
	}
}

/* clear nnvar[v] for a let assigned a value not proven >= 0; 1 if anything changed */
static int
signs_walk(Em *e, const IrStmt *s)
{
	int ch = 0;

	for (; s; s = s->next) {
		switch (s->kind) {
		case S_LET: case S_SET:
			if (e->nnvar[s->u.let.var->id] && !nonneg(e, s->u.let.value))
				e->nnvar[s->u.let.var->id] = 0, ch = 1;
			break;
		case S_FOR:
			if (e->nnvar[s->u.loop.var->id] && !nonneg(e, s->u.loop.lo))
				e->nnvar[s->u.loop.var->id] = 0, ch = 1;
			ch |= signs_walk(e, s->u.loop.body);
			break;
		case S_PIPELINE: ch |= signs_walk(e, s->u.pipe.body); break;
		case S_PARALLEL: ch |= signs_walk(e, s->u.par.body); break;
		case S_IF:
			ch |= signs_walk(e, s->u.cond.then);
			ch |= signs_walk(e, s->u.cond.els);
			break;
		default: break;
		}
	}
	return ch;
}

/* the ranges of loop variables: parallel ones [0, ext), serial ones [lo, lo + extent) */
static void
ranges(Em *e, const IrStmt *s)
{
	int64_t lo, n;
	int i;

	for (; s; s = s->next) {
		switch (s->kind) {
		case S_PARALLEL:
			for (i = 0; i < s->u.par.n; i++) {
				e->hasmax[s->u.par.vars[i]->id] = 1;
				e->vmax[s->u.par.vars[i]->id] = s->u.par.ext[i] - 1;
			}
			ranges(e, s->u.par.body);
			break;
		case S_FOR:
			if (ir_is_const(s->u.loop.lo, &lo) && ir_is_const(s->u.loop.extent, &n) && n > 0 &&
			    !ck_add(lo, n - 1, &n))
				e->hasmax[s->u.loop.var->id] = 1, e->vmax[s->u.loop.var->id] = n;
			else if (ir_is_const(s->u.loop.lo, &lo) && lo == 0)
				e->vcount[s->u.loop.var->id] = s->u.loop.extent;
			ranges(e, s->u.loop.body);
			break;
		case S_PIPELINE:
			if (ir_is_const(s->u.pipe.extent, &n) && n > 0)
				e->hasmax[s->u.pipe.var->id] = 1, e->vmax[s->u.pipe.var->id] = n - 1;
			else
				e->vcount[s->u.pipe.var->id] = s->u.pipe.extent;
			ranges(e, s->u.pipe.body);
			break;
		case S_IF:
			ranges(e, s->u.cond.then);
			ranges(e, s->u.cond.els);
			break;
		default: break;
		}
	}
}

/* which loop and let variables are >= 0: parallel and pipeline variables are; a
 * serial loop's when its start is; a let's when every value it is given is (the
 * greatest fixed point: start from all, drop a variable given a value not proven) */
void
lw_signs(Em *e)
{
	int i;

	e->nnvar = anewn(e->a, unsigned char, e->k->nvar + 1);
	e->hasmax = anewn(e->a, unsigned char, e->k->nvar + 1);
	e->vmax = anewn(e->a, int64_t, e->k->nvar + 1);
	e->vcount = anewn(e->a, const IrExpr *, e->k->nvar + 1);
	for (i = 0; i < e->k->nvar; i++) {
		const IrVar *v = e->k->vars[i];

		e->nnvar[i] = v->kind == VAR_LOOP || v->kind == VAR_LET;
		if (v->kind == VAR_BLOCK) {
			int d = v->name[1] - 'x';

			if (d >= 0 && d < e->k->ngrid) {
				int64_t c;

				if (ir_is_const(e->k->grid[d], &c))
					e->hasmax[i] = 1, e->vmax[i] = c - 1;
				e->vcount[i] = e->k->grid[d];
			}
		}
	}
	ranges(e, e->k->body);
	while (signs_walk(e, e->k->body))
		;
}

static void
varc(Em *e, Buf *b, const IrVar *v)
{
	if (v->kind == VAR_BLOCK) {
		if ((e->raster || e->persist) && (v->name[1] == 'x' || v->name[1] == 'y'))
			buf_printf(b, "tl_b%c", v->name[1]); /* the grouped order's or the loop's tile (lower_kernel.c) */
		else
			buf_printf(b, "(int)blockIdx.%c", v->name[1]);
		return;
	}
	buf_puts(b, lw_vname(e, v));
}

/* the element offset of a global buffer access: idx[d] * stride(d), in 64 bits; the
 * strides are the row-major ones of the dims, or a strided tensor's strides(...) (a
 * stride symbol is an int kernel parameter, a stride of 1 is not written) */
static void
goffset(Em *e, Buf *b, const IrBuffer *B, char *const *idx)
{
	int d, d2;

	buf_putc(b, '(');
	for (d = 0; d < B->ndim; d++) {
		buf_printf(b, "%s(long long)(%s)", d ? " + " : "", idx[d]);
		if (B->strides) {
			if (B->strides[d].sym)
				buf_printf(b, " * %s", lw_vname(e, B->strides[d].sym));
			else if (B->strides[d].c != 1)
				buf_printf(b, " * %lld", (long long)B->strides[d].c);
			continue;
		}
		for (d2 = d + 1; d2 < B->ndim; d2++) {
			if (B->dims[d2].sym)
				buf_printf(b, " * %s", lw_vname(e, B->dims[d2].sym));
			else
				buf_printf(b, " * %lld", (long long)B->dims[d2].c);
		}
	}
	buf_putc(b, ')');
}

/* the register slot of a local buffer at constant-in-thread coordinates */
static int
localslot(Em *e, int buf, char *const *idx, Buf *b)
{
	const Fragment *F = e->frag[buf];
	const char *names[IEXPR_NVARS] = {0};
	int d;

	if (!F)
		return err_set(e->err, "local buffer '%s' has no layout", e->k->bufs[buf].name);
	for (d = 0; d < F->nin; d++)
		names[d] = idx[d];
	lir_c_index(b, F->fwd[0], names);
	return 0;
}

/* the element offset of a shared access (layout index over the buffer's dims) */
int
lw_smemoff(Em *e, int buf, char *const *idx, Buf *b)
{
	const SmemBuf *sb = smem_find(&e->sp, buf);
	const char *names[IEXPR_NVARS] = {0};
	IExpr *lin;
	int d, lead;

	if (!sb)
		return err_set(e->err, "shared buffer '%s' is not planned", e->k->bufs[buf].name);
	/* a layout of higher rank than the buffer (a 1-D buffer laid out as [1, n]) takes
	 * leading zero coordinates; of lower rank, it drops the buffer's leading (unit) dims */
	lead = sb->layout->nin - e->k->bufs[buf].ndim;
	for (d = 0; d < sb->layout->nin; d++)
		names[d] = d < lead ? "0" : idx[d - lead];
	if (!(lin = layout_linear_index(e->a, sb->layout)))
		return err_set(e->err, "shared buffer '%s': no linear index", e->k->bufs[buf].name);
	lir_c_index(b, lin, names);
	return 0;
}

const char *
lw_bufptr(Em *e, int buf)
{
	const IrBuffer *B = &e->k->bufs[buf];

	if (B->scope == MEM_SHARED && e->in_pipe && e->stage && smem_find(&e->sp, buf) &&
	    smem_find(&e->sp, buf)->stages > 1)
		return arena_printf(e->a, "(%s + (%s) * %lld)", B->name, e->stage,
				    (long long)smem_find(&e->sp, buf)->stage_elems);
	return B->name;
}

void
lw_access(Em *e, Buf *b, int buf, int n, IrExpr *const *ix)
{
	const IrBuffer *B = &e->k->bufs[buf];
	char *idx[IR_MAXDIM];
	int d;

	for (d = 0; d < n && d < IR_MAXDIM; d++)
		idx[d] = lw_exprstr(e, ix[d]);
	if (B->scope == MEM_LOCAL) {
		char *ps = e->par ? lw_parslot(e, e->par, e->parpc, buf, n, ix) : NULL;

		/* read at indices that are not the nest's variables: from its copy in shared
		 * memory (lower_stage.c) */
		if (e->par && e->staged && e->staged[buf] && *e->staged[buf] && (!ps || e->stagedrw[buf])) {
			buf_printf(b, "%s[%s]", e->staged[buf], lw_stage_index(e, buf, idx));
			return;
		}
		buf_printf(b, "%s[", B->name);
		if (ps)
			buf_puts(b, ps);
		else
			localslot(e, buf, idx, b);
		buf_putc(b, ']');
	} else if (B->scope == MEM_SHARED) {
		buf_printf(b, "%s[", lw_bufptr(e, buf));
		lw_smemoff(e, buf, idx, b);
		buf_putc(b, ']');
	} else {
		buf_printf(b, "%s[", B->name);
		goffset(e, b, B, idx);
		buf_putc(b, ']');
	}
}

static const char *
tof32(DType t)
{
	return t == DT_F16 ? "tl_h2f" : t == DT_BF16 ? "tl_bf2f" : t == DT_FP8E4M3 ? "tl_e4m3_to_f32"
	       : t == DT_FP8E5M2 ? "tl_e5m2_to_f32" : "";
}

static const char *
fromf32(DType t)
{
	return t == DT_F16 ? "tl_f2h" : t == DT_BF16 ? "tl_f2bf" : t == DT_FP8E4M3 ? "tl_f32_to_e4m3"
	       : t == DT_FP8E5M2 ? "tl_f32_to_e5m2" : "";
}

static void
exprc(Em *e, Buf *b, const IrExpr *x)
{
	int i;

	switch (x->kind) {
	case IE_INT: buf_printf(b, "%lld", (long long)x->u.i); break;
	case IE_FLOAT:
	{
		char t[64];
		int f64 = x->type == DT_F64;
		double v = f64 ? x->u.f : num_round(x->type, x->u.f);

		/* the constant rounded to its type once (an f16 constant is an f16 value, computed
		 * in f32), printed with the digits that give that value back exactly */
		if (isinf(v))
			buf_printf(b, "%s__int_as_float(0x7f800000)", v < 0 ? "-" : "");
		else if (isnan(v))
			buf_puts(b, "__int_as_float(0x7fc00000)");
		else {
			snprintf(t, sizeof t, f64 ? "%.17g" : "%.9g", v);
			/* "%g" of an integral value prints no point: "0f" is not C */
			buf_printf(b, "%s%s%s", t, strpbrk(t, ".e") ? "" : ".0", f64 ? "" : "f");
		}
		break;
	}
	case IE_BOOL: buf_puts(b, x->u.i ? "true" : "false"); break;
	case IE_VAR: varc(e, b, x->u.var); break;
	case IE_LOAD: {
		char *g;
		int q;

		/* a vector load of a nest's run: the point's element, unpacked (lower_nest.c) */
		if ((q = lw_parvload(e, x)) >= 0) {
			if (lw_calctype(x->type) != x->type)
				buf_printf(b, "%s(tl_l%d[tl_r])", tof32(x->type), q);
			else
				buf_printf(b, "tl_l%d[tl_r]", q);
			break;
		}
		/* a global element outside the tensor reads zero (docs/semantics.md) */
		g = lw_elemguard(e, &e->k->bufs[x->u.load.buf], x->u.load.n, x->u.load.idx);
		if (g)
			buf_printf(b, "((%s) ? ", g);
		if (lw_calctype(x->type) != x->type) {
			buf_printf(b, "%s(", tof32(x->type));
			lw_access(e, b, x->u.load.buf, x->u.load.n, x->u.load.idx);
			buf_putc(b, ')');
		} else {
			lw_access(e, b, x->u.load.buf, x->u.load.n, x->u.load.idx);
		}
		if (g)
			buf_printf(b, " : (%s)0)", lw_ctype(lw_calctype(x->type)));
		break;
	}
	case IE_UNARY:
		/* C computes ~ of an i8 or u8 in int: the result is wrapped back to the type */
		if (x->u.un.op == UN_BNOT && (x->type == DT_I8 || x->type == DT_U8)) {
			buf_printf(b, "((%s)(~", lw_ctype(x->type));
			exprc(e, b, x->u.un.a);
			buf_puts(b, "))");
			break;
		}
		buf_puts(b, x->u.un.op == UN_NEG ? "(-" : x->u.un.op == UN_NOT ? "(!" : "(~");
		exprc(e, b, x->u.un.a);
		buf_putc(b, ')');
		break;
	case IE_BINARY:
		/* integer / and % are floor division and modulo: C's when a >= 0 and b > 0 */
		if ((x->u.bin.op == BIN_DIV || x->u.bin.op == BIN_MOD) && !dtype_is_float(x->type) &&
		    !(nonneg(e, x->u.bin.a) && positive(e, x->u.bin.b))) {
			buf_puts(b, x->u.bin.op == BIN_DIV ? "tl_floordiv(" : "tl_floormod(");
			exprc(e, b, x->u.bin.a);
			buf_puts(b, ", ");
			exprc(e, b, x->u.bin.b);
			buf_putc(b, ')');
			break;
		}
		buf_putc(b, '(');
		exprc(e, b, x->u.bin.a);
		buf_printf(b, " %s ", binop_name(x->u.bin.op));
		exprc(e, b, x->u.bin.b);
		buf_putc(b, ')');
		break;
	case IE_SELECT:
		buf_putc(b, '(');
		exprc(e, b, x->u.sel.c);
		buf_puts(b, " ? ");
		exprc(e, b, x->u.sel.a);
		buf_puts(b, " : ");
		exprc(e, b, x->u.sel.b);
		buf_putc(b, ')');
		break;
	case IE_CAST:
		/* f16/bf16 values compute in f32: a cast to them rounds through the type */
		if (lw_calctype(x->type) != x->type) {
			buf_printf(b, "%s(%s(", tof32(x->type), fromf32(x->type));
			exprc(e, b, x->u.cast.a);
			buf_puts(b, "))");
		} else {
			buf_printf(b, "((%s)", lw_ctype(lw_calctype(x->type)));
			exprc(e, b, x->u.cast.a);
			buf_putc(b, ')');
		}
		break;
	case IE_CALL: {
		static const char *ff[FN_COUNT] = {
			[FN_EXP] = "expf", [FN_EXP2] = "exp2f", [FN_LOG] = "logf", [FN_LOG2] = "log2f",
			[FN_SQRT] = "sqrtf", [FN_RSQRT] = "rsqrtf", [FN_ABS] = "fabsf", [FN_TANH] = "tanhf",
			[FN_SIN] = "sinf", [FN_COS] = "cosf", [FN_MAX] = "fmaxf", [FN_MIN] = "fminf",
		};
		const char *fn;

		if (x->u.call.fn == FN_CDIV) {
			/* cdiv(a, b) = floor((a + b - 1) / b): C's / when a >= 0 and b > 0 */
			int c = nonneg(e, x->u.call.args[0]) && positive(e, x->u.call.args[1]);

			buf_puts(b, c ? "((" : "tl_floordiv(");
			exprc(e, b, x->u.call.args[0]);
			buf_puts(b, " + ");
			exprc(e, b, x->u.call.args[1]);
			buf_puts(b, c ? " - 1) / " : " - 1, ");
			exprc(e, b, x->u.call.args[1]);
			buf_putc(b, ')');
			break;
		}
		fn = ff[x->u.call.fn];
		if (!dtype_is_float(x->type))
			fn = x->u.call.fn == FN_MAX ? "max" : x->u.call.fn == FN_MIN ? "min"
			     : x->u.call.fn == FN_ABS ? "abs" : fn;
		else if (x->type == DT_F64)
			fn = mathfn_name(x->u.call.fn);
		buf_printf(b, "%s(", fn);
		for (i = 0; i < x->u.call.n; i++) {
			if (i)
				buf_puts(b, ", ");
			exprc(e, b, x->u.call.args[i]);
		}
		buf_putc(b, ')');
		break;
	}
	}
}

char *
lw_exprstr(Em *e, const IrExpr *x)
{
	Buf b;
	char *s;

	buf_init(&b);
	exprc(e, &b, x);
	s = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return s;
}

/* ---- guards from assume() ------------------------------------------------------ */

/* does some assume(S % c == 0) give S % m == 0? */
static int
divides(const Em *e, const IrVar *sym, int64_t m)
{
	return lw_assumed_multiple(e->k, sym, m);
}

/* does an assume of k (`S % c == 0` with c a multiple of m) prove sym a multiple of m? */
int
lw_assumed_multiple(const IrKernel *k, const IrVar *sym, int64_t m)
{
	int i;
	int64_t c;

	for (i = 0; i < k->nassume; i++) {
		const IrExpr *x = k->assumes[i], *l;

		if (x->kind != IE_BINARY || x->u.bin.op != BIN_EQ || !ir_is_const(x->u.bin.b, &c) || c)
			continue;
		l = x->u.bin.a;
		if (l->kind == IE_BINARY && l->u.bin.op == BIN_MOD && l->u.bin.a->kind == IE_VAR &&
		    l->u.bin.a->u.var == sym && ir_is_const(l->u.bin.b, &c) && c > 0 && c % m == 0)
			return 1;
	}
	return 0;
}

/* is offset expression x a multiple of m (a constant, or a product with such a constant)? */
static int
multiple(const IrExpr *x, int64_t m)
{
	int64_t c;

	if (ir_is_const(x, &c))
		return c % m == 0;
	if (x->kind == IE_BINARY && x->u.bin.op == BIN_MUL)
		return multiple(x->u.bin.a, m) || multiple(x->u.bin.b, m);
	if (x->kind == IE_BINARY && x->u.bin.op == BIN_ADD)
		return multiple(x->u.bin.a, m) && multiple(x->u.bin.b, m);
	return 0;
}

/* x as sum c[i] * v[i] + k over at most 8 variables; 0, or -1 when x is not linear so */
typedef struct Lin {
	int n;
	const IrVar *v[8];
	int64_t c[8], k;
} Lin;

static int
linear(const IrExpr *x, int64_t m, Lin *l)
{
	int64_t c, t;
	int i;

	switch (x->kind) {
	case IE_INT: return ck_mul(x->u.i, m, &t) || ck_add(l->k, t, &l->k) ? -1 : 0;
	case IE_VAR:
		if (dtype_is_float(x->type))
			return -1;
		for (i = 0; i < l->n; i++)
			if (l->v[i] == x->u.var)
				return ck_add(l->c[i], m, &l->c[i]);
		if (l->n == 8)
			return -1;
		l->v[l->n] = x->u.var, l->c[l->n++] = m;
		return 0;
	case IE_CAST:
		return dtype_is_float(x->type) || dtype_is_float(x->u.cast.a->type) || x->type == DT_BOOL ? -1
		       : linear(x->u.cast.a, m, l);
	case IE_UNARY: return x->u.un.op == UN_NEG && m != INT64_MIN ? linear(x->u.un.a, -m, l) : -1;
	case IE_BINARY:
		switch (x->u.bin.op) {
		case BIN_ADD: return linear(x->u.bin.a, m, l) || linear(x->u.bin.b, m, l) ? -1 : 0;
		case BIN_SUB:
			return m == INT64_MIN || linear(x->u.bin.a, m, l) || linear(x->u.bin.b, -m, l) ? -1 : 0;
		case BIN_MUL:
			if (ir_is_const(x->u.bin.a, &c))
				return ck_mul(m, c, &t) ? -1 : linear(x->u.bin.b, t, l);
			if (ir_is_const(x->u.bin.b, &c))
				return ck_mul(m, c, &t) ? -1 : linear(x->u.bin.a, t, l);
			return -1;
		default: return -1;
		}
	default: return -1;
	}
}

/*
 * Is x + span < dim for every value x's variables can take (0 <= span)? The
 * terms with a constant largest value are bounded by it; at most one variable
 * may run over [0, X) with X = cdiv(S, g) or S / g (S the dim's size symbol, and
 * an assume(S % g == 0)), with coefficient c <= g and the rest below g: then
 * x <= c (S/g - 1) + g - 1 < S.
 */
static int
below(const Em *e, const IrExpr *x, int64_t span, const IrDim *dim)
{
	Lin l = {0};
	int64_t rest, t, g = 0;
	const IrVar *open = NULL;
	int i, oc = 0;

	if (linear(x, 1, &l))
		return 0;
	rest = l.k;
	if (ck_add(rest, span, &rest))
		return 0;
	for (i = 0; i < l.n; i++) {
		const IrVar *v = l.v[i];

		if (l.c[i] == 0)
			continue;
		if (l.c[i] < 0) {
			/* at most 0 when v >= 0 */
			if (!(v->kind == VAR_SIZE || v->kind == VAR_BLOCK || e->nnvar[v->id]))
				return 0;
			continue;
		}
		if (e->hasmax[v->id]) {
			if (e->vmax[v->id] < 0 || ck_mul(l.c[i], e->vmax[v->id], &t) || ck_add(rest, t, &rest))
				return 0;
		} else if (!open && e->vcount[v->id]) {
			open = v, oc = i;
		} else {
			return 0;
		}
	}
	if (!dim->sym)
		return !open && rest < dim->c;
	if (!open)
		return 0;
	{
		const IrExpr *X = e->vcount[open->id];
		int64_t c;

		if (X->kind == IE_VAR && X->u.var == dim->sym)
			g = 1;
		else if (X->kind == IE_CALL && X->u.call.fn == FN_CDIV && X->u.call.args[0]->kind == IE_VAR &&
			 X->u.call.args[0]->u.var == dim->sym && ir_is_const(X->u.call.args[1], &c) && c > 0)
			g = c;
		else if (X->kind == IE_BINARY && X->u.bin.op == BIN_DIV && X->u.bin.a->kind == IE_VAR &&
			 X->u.bin.a->u.var == dim->sym && ir_is_const(X->u.bin.b, &c) && c > 0)
			g = c;
		else
			return 0;
	}
	return (g == 1 || divides(e, dim->sym, g)) && l.c[oc] <= g && rest < g;
}

/* the bound of a global dim as C text */
static const char *
dimtext(Em *e, const IrDim *dim)
{
	return dim->sym ? lw_vname(e, dim->sym) : arena_printf(e->a, "%lld", (long long)dim->c);
}

/*
 * The guard of dim d of a global region access at C coordinate text cd (the
 * region's offset plus a coordinate in [0, ext)); NULL where 0 <= cd < dim is
 * proven for every value of the offset's variables (nonneg, below).
 */
char *
lw_guard(Em *e, const Region *r, int d, const char *cd, int64_t ext)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	int lo, hi;

	if (B->scope != MEM_GLOBAL)
		return NULL;
	lo = nonneg(e, r->off[d]);
	hi = below(e, r->off[d], ext - 1, &B->dims[d]);
	if (lo && hi)
		return NULL;
	if (hi)
		return arena_printf(e->a, "(%s) >= 0", cd);
	if (lo)
		return arena_printf(e->a, "(%s) < %s", cd, dimtext(e, &B->dims[d]));
	return arena_printf(e->a, "(%s) >= 0 && (%s) < %s", cd, cd, dimtext(e, &B->dims[d]));
}

/* the guard of an element access B[idx...] of a global buffer; NULL where proven */
char *
lw_elemguard(Em *e, const IrBuffer *B, int n, IrExpr *const *idx)
{
	Buf b;
	char *s;
	int d, any = 0;

	if (B->scope != MEM_GLOBAL)
		return NULL;
	buf_init(&b);
	for (d = 0; d < n && d < B->ndim; d++) {
		const char *x;

		if (nonneg(e, idx[d]) && below(e, idx[d], 0, &B->dims[d]))
			continue;
		x = lw_exprstr(e, idx[d]);
		if (!nonneg(e, idx[d]))
			buf_printf(&b, "%s(%s) >= 0", any++ ? " && " : "", x);
		if (!below(e, idx[d], 0, &B->dims[d]))
			buf_printf(&b, "%s(%s) < %s", any++ ? " && " : "", x, dimtext(e, &B->dims[d]));
	}
	s = any ? arena_strdup(e->a, buf_str(&b)) : NULL;
	buf_free(&b);
	return s;
}

static char *
guards_and(Em *e, char *const *g, int n)
{
	Buf b;
	char *s;
	int i, any = 0;

	buf_init(&b);
	for (i = 0; i < n; i++) {
		if (!g[i])
			continue;
		buf_printf(&b, "%s%s", any ? " && " : "", g[i]);
		any = 1;
	}
	s = any ? arena_strdup(e->a, buf_str(&b)) : NULL;
	buf_free(&b);
	return s;
}

/* ---- fragments: per-thread partition through the inverse --------------------- */

/* the default partition of a shape over T threads: row-major elements in runs
 * of v per thread (v = 8 when the size allows, else 1) */
Fragment *
lw_defaultfrag(Em *e, const int64_t *shape, int n)
{
	char flat[256], thr[600], slot[600];
	const char *fwd[1];
	int64_t size = 1, T = e->k->threads, v = 8;
	int d;

	flat[0] = 0;
	for (d = 0; d < n; d++) {
		int64_t st = 1;
		int d2;

		for (d2 = d + 1; d2 < n; d2++)
			st *= shape[d2];
		size *= shape[d];
		snprintf(flat + strlen(flat), sizeof flat - strlen(flat), "%s%s * %lld", d ? " + " : "",
			 iexpr_varname(d), (long long)st);
	}
	if (size % (v * T))
		v = 1;
	if (size % (v * T)) {
		err_set(e->err, "no default partition of %lld elements over %lld threads", (long long)size,
			(long long)T);
		return NULL;
	}
	snprintf(thr, sizeof thr, "(%s) // %lld %% %lld", flat, (long long)v, (long long)T);
	snprintf(slot, sizeof slot, "(%s) // %lld * %lld + (%s) %% %lld", flat, (long long)(v * T),
		 (long long)v, flat, (long long)v);
	fwd[0] = slot;
	return frag_parse(e->a, shape, n, thr, 1, fwd, 1, e->err);
}

struct FcMemo {
	const Fragment *F;
	IExpr **co;     /* the inverse's outputs, nin + 1 of them */
	int n;
};

/* the same fragment: every field the inverse reads, the expressions structurally */
int
lw_fragsame(const Fragment *a, const Fragment *b)
{
	int k;

	if (a == b)
		return 1;
	if (a->is_frag != b->is_frag || a->nin != b->nin || a->nout != b->nout || a->rep != b->rep ||
	    a->nthreads != b->nthreads || a->has_range != b->has_range ||
	    a->range_min != b->range_min || a->range_ext != b->range_ext ||
	    memcmp(a->in_shape, b->in_shape, sizeof a->in_shape[0] * (size_t)a->nin) ||
	    memcmp(a->out_shape, b->out_shape, sizeof a->out_shape[0] * (size_t)a->nout) ||
	    !iexpr_same(a->thread, b->thread))
		return 0;
	for (k = 0; k < a->nout; k++)
		if (!iexpr_same(a->fwd[k], b->fwd[k]))
			return 0;
	return 1;
}

/* coordinates (x..., rep) of F in slot _i and thread _j; slots per thread in *S */
IExpr **
lw_fragcoords(Em *e, const Fragment *F, int64_t *S)
{
	Layout *inv;
	IExpr **co;
	int m;

	if (F->nout != 1) {
		err_set(e->err, "fragment with %d slot dims is not lowered", F->nout);
		return NULL;
	}
	/* the inverse of a fragment seen before in this pass (tiles and nests share layouts):
	 * layout_inverse is deterministic, so the same expressions; a copy of the array */
	for (m = 0; m < e->nfcm; m++)
		if (lw_fragsame(e->fcm[m].F, F)) {
			if (!(co = anewn(e->a, IExpr *, e->fcm[m].n)))
				break;
			memcpy(co, e->fcm[m].co, sizeof *co * (size_t)e->fcm[m].n);
			*S = F->out_shape[0];
			return co;
		}
	if (!(inv = layout_inverse(e->a, F, 0, e->err)))
		return NULL;
	*S = F->out_shape[0];
	if (e->nfcm == e->capfcm) {
		struct FcMemo *nw = anewn(e->a, struct FcMemo, (size_t)(2 * e->capfcm + 8));

		if (!nw)
			return inv->fwd;
		if (e->nfcm)
			memcpy(nw, e->fcm, sizeof *nw * (size_t)e->nfcm);
		e->fcm = nw, e->capfcm = 2 * e->capfcm + 8;
	}
	e->fcm[e->nfcm].F = F;
	e->fcm[e->nfcm].co = inv->fwd;
	e->fcm[e->nfcm].n = inv->nout;
	e->nfcm++;
	return inv->fwd;
}

/* fragvec's table: the coordinates co[d] of every (thread, slot), row-major */
typedef struct VecTab {
	int n;
	int64_t S;
	int64_t *c;   /* [thread][slot][d] */
} VecTab;

static int
vectab_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	VecTab *t = ctx;
	int p, d;

	(void)coord;
	for (p = 0; p < npts; p++)
		for (d = 0; d < t->n; d++)
			t->c[(first + p) * t->n + d] = vals[d][p];
	return 0;
}

/* lw_fragvec by enumeration (the reference of lw_fragvec's proofs): lw_fragrun_ref along the
 * last dim */
int
lw_fragvec_ref(const Fragment *F, IExpr *const *co, int64_t S, int maxv)
{
	return lw_fragrun_ref(F, co, S, F->nin - 1, maxv);
}

/* does thread t break the run v along dim (some slots s..s+v-1, s % v == 0, not
 * consecutive aligned elements of dim)? 0 also when an evaluation fails */
static int
vec_broken(IExpr *const *co, int n, int dim, int64_t S, int64_t t, int v)
{
	int64_t vals[IEXPR_NVARS] = {0}, c0[LAYOUT_MAXDIM], c;
	int64_t s;
	int kk, d;

	vals[1] = t;
	for (s = 0; s < S; s += v) {
		vals[0] = s;
		for (d = 0; d < n; d++)
			if (iexpr_eval(co[d], vals, &c0[d], NULL))
				return 0;
		if (c0[dim] % v)
			return 1;
		for (kk = 1; kk < v; kk++) {
			vals[0] = s + kk;
			for (d = 0; d < n; d++) {
				if (iexpr_eval(co[d], vals, &c, NULL))
					return 0;
				if (c != c0[d] + (d == dim ? kk : 0))
					return 1;
			}
		}
	}
	return 0;
}

int lw_reference_walks;

/* the widest run along dim, proved, refuted by a thread, else by ref (lw_fragvec_ref or
 * lw_fragrun_ref): a run that holds for v holds for v / 2, so each v from maxv down is
 * proved from the coordinates' digits (layout_aff_vecrun_), refuted by the first or the
 * last thread breaking it, or else the reference decides from v down */
static int
run_fast(const Fragment *F, IExpr *const *co, int64_t S, int dim, int maxv)
{
	static const int ids[2] = {1, 0};
	int64_t shape[2];
	int v, n = F->nin;

	shape[0] = F->nthreads, shape[1] = S;
	for (v = maxv; v > 1; v /= 2) {
		if (S % v)
			continue;
		if (layout_aff_vecrun_(shape, ids, 2, co, n, 0, v, dim))
			return v;
		if (vec_broken(co, n, dim, S, 0, v) || vec_broken(co, n, dim, S, F->nthreads - 1, v))
			continue;
		return -v;
	}
	return 1;
}

/* the widest run v (power of two, dividing S, at most maxv) such that every
 * thread's slots s..s+v-1 (s % v == 0) are consecutive, aligned elements of the
 * last dim: lw_fragrun along it */
int
lw_fragvec(const Fragment *F, IExpr *const *co, int64_t S, int maxv)
{
	return lw_fragrun(F, co, S, F->nin - 1, maxv);
}

/* the widest run v (power of two, dividing S, at most maxv) such that every thread's
 * slots s..s+v-1 (s % v == 0) are points whose coordinate dim counts up from a multiple
 * of v, the others equal: lw_fragvec along any dim, for the points of a nest. By
 * enumeration: the reference of lw_fragrun */
int
lw_fragrun_ref(const Fragment *F, IExpr *const *co, int64_t S, int dim, int maxv)
{
	static const int ids[2] = {1, 0};
	int64_t shape[2], t, s, total;
	VecTab tab;
	Err scratch = {0};
	int v, kk, d, n = F->nin;

	if (n < 1 || dim < 0 || dim >= n || S < 1 || F->nthreads < 1 || ck_mul(S, F->nthreads, &total) ||
	    total > (1 << 22))
		return 1;
	shape[0] = F->nthreads, shape[1] = S;
	tab.n = n, tab.S = S;
	if (!(tab.c = malloc((size_t)total * (size_t)n * sizeof *tab.c)))
		return 1;
	if (layout_enumerate(shape, ids, 2, co, n, vectab_visit, &tab, &scratch)) {
		free(tab.c);
		return 1;
	}
	for (v = maxv; v > 1; v /= 2) {
		int ok = S % v == 0;

		for (t = 0; ok && t < F->nthreads; t++)
			for (s = 0; ok && s < S; s += v) {
				const int64_t *c0 = tab.c + (t * S + s) * n;

				if (c0[dim] % v)
					ok = 0;
				for (kk = 1; ok && kk < v; kk++)
					for (d = 0; ok && d < n; d++)
						if (c0[kk * n + d] != c0[d] + (d == dim ? kk : 0))
							ok = 0;
			}
		if (ok)
			break;
	}
	free(tab.c);
	return v > 1 ? v : 1;
}

/* lw_fragrun_ref's answer, proved or refuted where it can be (run_fast) */
int
lw_fragrun(const Fragment *F, IExpr *const *co, int64_t S, int dim, int maxv)
{
	int64_t total;
	int v, n = F->nin;

	if (n < 1 || n > LAYOUT_MAXDIM || dim < 0 || dim >= n || S < 1 || F->nthreads < 1 ||
	    ck_mul(S, F->nthreads, &total) || total > (1 << 22) || lw_reference_walks)
		return lw_fragrun_ref(F, co, S, dim, maxv);
	v = run_fast(F, co, S, dim, maxv);
	return v < 0 ? lw_fragrun_ref(F, co, S, dim, -v) : v;
}

static int
mentions(const IrExpr *x, const IrVar *v)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_VAR: return x->u.var == v;
	case IE_LOAD:
		for (i = 0; i < x->u.load.n; i++)
			if (mentions(x->u.load.idx[i], v))
				return 1;
		return 0;
	case IE_UNARY: return mentions(x->u.un.a, v);
	case IE_BINARY: return mentions(x->u.bin.a, v) || mentions(x->u.bin.b, v);
	case IE_SELECT: return mentions(x->u.sel.c, v) || mentions(x->u.sel.a, v) || mentions(x->u.sel.b, v);
	case IE_CAST: return mentions(x->u.cast.a, v);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (mentions(x->u.call.args[i], v))
				return 1;
		return 0;
	default: return 0;
	}
}

/* Does access B[idx] walk B's last dim with element stride 1 in variable v, starting at a
 * multiple of V in the row whenever v is one? v appears in the last index alone, with
 * coefficient 1, and every other term of that index is a multiple of V. */
int
lw_contig_access(const IrBuffer *B, int n, IrExpr *const *idx, const IrVar *v, int V)
{
	Lin l = {0};
	int d, i, found = 0;

	if (n != B->ndim || n < 1 || V < 1)
		return 0;
	for (d = 0; d < n - 1; d++)
		if (mentions(idx[d], v))
			return 0;
	if (linear(idx[n - 1], 1, &l) || l.k % V)
		return 0;
	for (i = 0; i < l.n; i++) {
		if (l.v[i] == v) {
			if (l.c[i] != 1)
				return 0;
			found = 1;
		} else if (l.c[i] % V) {
			return 0;
		}
	}
	return found;
}

const char *const lw_slotnames[IEXPR_NVARS] = {"s", "tid"};

/* ---- register <-> memory copies ------------------------------------------------- */

const char *
lw_vtype(int bytes)
{
	return bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : bytes == 4 ? "tl_u32" : "unsigned short";
}

/* the 32-bit word w of a run of values vals (text) of type t (1, 2 or 4 bytes) */
void
lw_packword(Buf *b, DType t, char *const *vals, int w)
{
	if (dtype_bytes(t) == 1)
		buf_printf(b, "((tl_u32)(unsigned char)%s | ((tl_u32)(unsigned char)%s << 8) | "
			   "((tl_u32)(unsigned char)%s << 16) | ((tl_u32)(unsigned char)%s << 24))",
			   vals[4 * w], vals[4 * w + 1], vals[4 * w + 2], vals[4 * w + 3]);
	else if (dtype_bytes(t) == 2)
		buf_printf(b, "((tl_u32)%s | ((tl_u32)%s << 16))", vals[2 * w], vals[2 * w + 1]);
	else if (t == DT_F32)
		buf_printf(b, "__float_as_uint(%s)", vals[w]);
	else
		buf_printf(b, "(tl_u32)%s", vals[w]);
}

/* value text of element k of a vector register r of words */
char *
lw_unpack(Em *e, DType t, const char *r, int words, int k)
{
	static const char comp[] = "xyzw";
	const char *wd;

	wd = words == 1 ? r : arena_printf(e->a, "%s.%c", r, comp[k * dtype_bytes(t) / 4]);
	if (dtype_bytes(t) == 1)
		return arena_printf(e->a, "(%s)(unsigned char)(%s >> %d)", lw_ctype(t), wd, k % 4 * 8);
	if (dtype_bytes(t) == 2)
		return arena_printf(e->a, "(%s)(%s >> %d)", lw_ctype(t), wd, k % 2 * 16);
	if (t == DT_F32)
		return arena_printf(e->a, "__uint_as_float(%s)", wd);
	return arena_printf(e->a, "(%s)%s", lw_ctype(t), wd);
}

/* convert value text v of type from to type to */
char *
lw_conv(Em *e, const char *v, DType from, DType to)
{
	if (from == to)
		return (char *)v;
	if (lw_calctype(from) != from)
		v = arena_printf(e->a, "%s(%s)", tof32(from), v);
	if (lw_calctype(to) != to && from == DT_F64) /* one rounding, not two */
		return arena_printf(e->a, "%s(tl_f64_to_f32_odd(%s))", fromf32(to), v);
	if (lw_calctype(to) != to)
		return arena_printf(e->a, "%s(%s)", fromf32(to), v);
	return arena_printf(e->a, "(%s)(%s)", lw_ctype(to), v);
}

/* the text of expression x converted to type to, for a store into a `to` element: a store of
 * f16(v) (v computed in f32) converts once, tl_f2h(v), not tl_f2h(tl_h2f(tl_f2h(v))): a
 * narrow float's round trip through f32 is exact */
char *
lw_valueto(Em *e, const IrExpr *x, DType to)
{
	if (x->kind == IE_CAST && x->type == to && lw_calctype(to) != to &&
	    lw_calctype(x->u.cast.a->type) == DT_F32)
		x = x->u.cast.a;
	return lw_conv(e, lw_exprstr(e, x), lw_calctype(x->type), to);
}

/* the C text of dim d of a region access: offset + the loop coord that walks d */
static char *
coordtext(Em *e, const Region *r, int d, char *const *cs, int nn)
{
	char *o = lw_exprstr(e, r->off[d]);
	int64_t c;
	int k;

	for (k = 0; k < nn; k++)
		if (nest_region_dim(r, k) == d)
			return ir_is_const(r->off[d], &c) && c == 0 ? cs[k]
			       : arena_printf(e->a, "%s + %s", o, cs[k]);
	return o;
}

/* the memory-side address text of a region at loop coords cs (one per nest dim) */
char *
lw_memaddr(Em *e, const Region *r, char *const *cs, int nn)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	char *idx[IR_MAXDIM];
	Buf b;
	char *s;
	int d;

	for (d = 0; d < r->ndim; d++)
		idx[d] = coordtext(e, r, d, cs, nn);
	buf_init(&b);
	if (B->scope == MEM_SHARED) {
		buf_printf(&b, "&%s[", lw_bufptr(e, r->buf));
		lw_smemoff(e, r->buf, idx, &b);
	} else {
		buf_printf(&b, "&%s[", B->name);
		goffset(e, &b, B, idx);
	}
	buf_putc(&b, ']');
	s = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return s;
}

/* guards of a region access at loop coords cs */
char *
lw_regguard(Em *e, const Region *r, char *const *cs, int nn, int vec)
{
	char *g[IR_MAXDIM];
	int d;

	for (d = 0; d < r->ndim; d++) {
		g[d] = lw_guard(e, r, d, coordtext(e, r, d, cs, nn), r->ext[d]);
	}
	(void)vec;
	return guards_and(e, g, r->ndim);
}

/* veccond's answer: vector accesses are not possible here, copy element by element */
char lw_scalar_only[] = "scalar";

/*
 * A vector access of v elements on the last dim of a global region is aligned
 * when the row length is a multiple of v (an assume proves it, or a constant)
 * and so is the region's offset in that dim. When an assume does not prove the
 * row length, a flag `tl_rows<v>_<N> = N % v == 0` is computed at kernel entry
 * (in chk) and the kernel body is emitted twice (e->scalar): here the vector
 * body assumes the flag, the scalar body gets scalar_only. Returns NULL (the
 * vector path), scalar_only, or a runtime condition for an offset not proven a
 * multiple of v (the caller adds a guarded scalar path).
 */
/* a run-time flag of the vector body: `const bool c = init; // text` at kernel entry (once),
 * and c among the flags the vector body needs; -1 when the flags are full (the access is
 * then element by element) */
static int
addflag(Em *e, Buf *chk, const char *c, const char *init, const char *text)
{
	char decl_[512];
	int i;

	for (i = 0; i < e->nflags && strcmp(e->flags[i], c); i++)
		;
	if (i == e->nflags && i == (int)(sizeof e->flags / sizeof e->flags[0]))
		return -1;
	snprintf(decl_, sizeof decl_, "\tconst bool %s = %s; /* %s */\n", c, init, text);
	if (!strstr(buf_str(chk), decl_)) {
		LNode *n = lir_node(e->a, L_DECL);

		buf_puts(chk, decl_);
		n->u.decl.is_const = 1, n->u.decl.type = "bool", n->u.decl.name = c;
		n->u.decl.init = arena_strdup(e->a, init);
		n->text = arena_printf(e->a, "/* %s */", text);
		lir_append(&e->lk->checks, n);
	}
	if (i == e->nflags)
		e->flags[e->nflags++] = c;
	return 0;
}

/*
 * The widest v' <= v (halving) at which the strides of global buffer B allow v'-element
 * accesses along its last dim: 1 when the last stride is not the constant 1, else the
 * largest power of two dividing every constant stride (stride symbols are checked at run
 * time, lw_veccond). *why says why v' < v. Dense buffers: v.
 */
int
lw_stridevec(const Em *e, const IrBuffer *B, int v, const char **why)
{
	int d, n = B->ndim - 1;

	if (!B->strides || v <= 1)
		return v;
	if (B->strides[n].sym || B->strides[n].c != 1) {
		if (why)
			*why = arena_printf(e->a, "'%s' has stride %s in its last dim, not 1: element by element",
					    B->name, B->strides[n].sym ? B->strides[n].sym->name
					    : arena_printf(e->a, "%lld", (long long)B->strides[n].c));
		return 1;
	}
	for (d = 0; d < n; d++) {
		int w = v;

		if (B->strides[d].sym)
			continue;
		while (w > 1 && B->strides[d].c % w)
			w /= 2;
		if (w < v) {
			if (why)
				*why = arena_printf(e->a, "stride %d of '%s' (%lld) is not a multiple of %d elements",
						    d, B->name, (long long)B->strides[d].c, v);
			v = w;
		}
	}
	return v;
}

char *
lw_veccond(Em *e, Buf *chk, const Region *r, int v)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	const IrVar *sym;
	int d = B->ndim - 1, k;

	if (B->scope != MEM_GLOBAL || v <= 1)
		return NULL;
	if ((sym = B->dims[d].sym) && !divides(e, sym, v)) {
		if (e->scalar || addflag(e, chk, arena_printf(e->a, "tl_rows%d_%s", v, lw_vname(e, sym)),
					 arena_printf(e->a, "%s %% %d == 0", lw_vname(e, sym), v),
					 arena_printf(e->a, "rows of whole %d-vectors", v)))
			return lw_scalar_only;
	} else if (!sym && B->dims[d].c % v) {
		return lw_scalar_only;
	}
	if (B->strides) {
		/* a strided tensor: the last stride 1, the others multiples of v (a constant, an
		 * assume, or checked here), and the view's pointer aligned to the vector (the caller
		 * may have offset it: checked here) */
		int bytes = v * (int)dtype_bytes(B->dtype);

		if (lw_stridevec(e, B, v, NULL) < v)
			return lw_scalar_only;
		if (e->scalar)
			return lw_scalar_only;
		for (k = 0; k < d; k++)
			if ((sym = B->strides[k].sym) && !divides(e, sym, v) &&
			    addflag(e, chk, arena_printf(e->a, "tl_ld%d_%s", v, lw_vname(e, sym)),
				    arena_printf(e->a, "%s %% %d == 0", lw_vname(e, sym), v),
				    arena_printf(e->a, "strides of whole %d-vectors", v)))
				return lw_scalar_only;
		if (addflag(e, chk, arena_printf(e->a, "tl_al%d_%s", bytes, B->name),
			    arena_printf(e->a, "(unsigned long long)%s %% %d == 0", B->name, bytes),
			    arena_printf(e->a, "'%s' aligned to %d bytes", e->k->params[B->param].name, bytes)))
			return lw_scalar_only;
	}
	if (!multiple(r->off[d], v))
		return arena_printf(e->a, "(%s) %% %d == 0", lw_exprstr(e, r->off[d]), v);
	return NULL;
}

/*
 * May region r be accessed in vectors of v elements along the copy's last nest
 * dim (of nn)? Only when that nest dim walks the buffer's last (contiguous)
 * dim, and, in shared memory, from an offset that is a multiple of v. (A column
 * of a matrix copied into a 1-D tile walks dim 0: element by element.)
 */
int
lw_vecdim(const Em *e, const Region *r, int nn, int v)
{
	const IrBuffer *B = &e->k->bufs[r->buf];

	if (v <= 1)
		return 1;
	if (nest_region_dim(r, nn - 1) != r->ndim - 1)
		return 0;
	if (B->scope != MEM_SHARED)
		return 1;
	/* the shared layout must keep v elements together (smem.c vector_run) */
	{
		const SmemBuf *sb = smem_find(&e->sp, r->buf);

		if (!sb || sb->run < v)
			return 0;
	}
	return multiple(r->off[r->ndim - 1], v);
}

/* loop coordinates cs with the last one advanced by the scalar lane tl_k */
char **
lw_lanecs(Em *e, char *const *cs, int nn)
{
	char **c2 = anewn(e->a, char *, nn + 1);
	int i;

	for (i = 0; i < nn; i++)
		c2[i] = cs[i];
	c2[nn - 1] = arena_printf(e->a, "(%s + tl_k)", cs[nn - 1]);
	return c2;
}

typedef struct Lower {
	Em *e;
	Buf *chk;
} Lower;

/* the unit dims of buffer B */
int
lw_countunit(const IrBuffer *B)
{
	int d, n = 0;

	for (d = 0; d < B->ndim; d++)
		n += B->dims[d].c == 1;
	return n;
}
