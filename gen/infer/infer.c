/*
 * infer.c: layout inference. Every local tile gets a Fragment and every
 * parallel nest (PARALLEL, and the element loops of COPY and FILL) a loop
 * Fragment, in three levels as TileLang: strict (annotations, gemm), common
 * (breadth-first propagation through shared fragments) and free (per
 * connected component, every member tried as root, the cheapest kept; ties
 * go to the earliest root). Rules live in infer_rules.c; output in infer_dump.c.
 */
#include <string.h>

#include "convert.h"
#include "infer_int.h"

/* ---- collection -------------------------------------------------------- */

static void expr_accs(Inf *in, Op *op, const IrExpr *e, int write, const IrExpr *store);

/* an IR index expression in the nest's loop vars; NULL if it uses anything else */
static IExpr *
conv(Inf *in, Op *op, const IrExpr *e)
{
	IExpr *a, *b;
	int k;
	IExprKind kk;

	if (!e)
		return NULL;
	switch (e->kind) {
	case IE_INT:
		return iexpr_const(in->a, e->u.i);
	case IE_VAR:
		for (k = 0; k < op->nloop; k++)
			if (op->vars[k] == e->u.var)
				return iexpr_var(in->a, k);
		return NULL;
	case IE_CAST:
		return dtype_is_int(e->type) ? conv(in, op, e->u.cast.a) : NULL;
	case IE_BINARY:
		switch (e->u.bin.op) {
		case BIN_ADD: kk = IX_ADD; break;
		case BIN_SUB: kk = IX_SUB; break;
		case BIN_MUL: kk = IX_MUL; break;
		case BIN_DIV: kk = IX_DIV; break;
		case BIN_MOD: kk = IX_MOD; break;
		default: return NULL;
		}
		a = conv(in, op, e->u.bin.a);
		b = conv(in, op, e->u.bin.b);
		if (!a || !b)
			return NULL;
		if ((kk == IX_DIV || kk == IX_MOD) && (b->k != IX_CONST || b->v <= 0))
			return NULL;
		return iexpr_bin(in->a, kk, a, b);
	default:
		return NULL;
	}
}

static Acc *
add_acc(Inf *in, Op *op, int buf, int write)
{
	Acc *ac;

	if (op->nacc == op->capacc) {
		int nc = op->capacc ? op->capacc * 2 : 4;
		op->acc = arena_realloc(in->a, op->acc, sizeof *op->acc * (size_t)op->capacc,
					sizeof *op->acc * (size_t)nc);
		op->capacc = nc;
	}
	ac = &op->acc[op->nacc++];
	memset(ac, 0, sizeof *ac);
	ac->buf = buf;
	ac->write = write;
	return ac;
}

static void
note_buf(Inf *in, Op *op, int buf, int write, int n, IrExpr *const *idx, IExpr **pre)
{
	const IrBuffer *B = &in->k->bufs[buf];
	Acc *ac;
	int d;

	if (dtype_bytes(B->dtype) > op->ebytes)
		op->ebytes = dtype_bytes(B->dtype);
	if (B->scope == MEM_GLOBAL) {
		op->has_global = 1;
		if (write)
			op->stores_mem = 1;
		return;
	}
	if (B->scope == MEM_SHARED) {
		op->has_shared = 1;
		if (write)
			op->stores_mem = 1;
		return;
	}
	ac = add_acc(in, op, buf, write);
	ac->n = n;
	ac->ok = 1;
	for (d = 0; d < n; d++) {
		ac->idx[d] = pre ? pre[d] : conv(in, op, idx[d]);
		if (!ac->idx[d])
			ac->ok = 0;
	}
	if (in->k->bufs[buf].ndim != n)
		ac->ok = 0;
}

static void
expr_accs(Inf *in, Op *op, const IrExpr *e, int write, const IrExpr *store)
{
	int i;

	(void)store;
	if (!e)
		return;
	switch (e->kind) {
	case IE_LOAD:
		for (i = 0; i < e->u.load.n; i++)
			expr_accs(in, op, e->u.load.idx[i], 0, NULL);
		note_buf(in, op, e->u.load.buf, write, e->u.load.n, e->u.load.idx, NULL);
		break;
	case IE_UNARY: expr_accs(in, op, e->u.un.a, 0, NULL); break;
	case IE_BINARY:
		expr_accs(in, op, e->u.bin.a, 0, NULL);
		expr_accs(in, op, e->u.bin.b, 0, NULL);
		break;
	case IE_SELECT:
		expr_accs(in, op, e->u.sel.c, 0, NULL);
		expr_accs(in, op, e->u.sel.a, 0, NULL);
		expr_accs(in, op, e->u.sel.b, 0, NULL);
		break;
	case IE_CAST: expr_accs(in, op, e->u.cast.a, 0, NULL); break;
	case IE_CALL:
		for (i = 0; i < e->u.call.n; i++)
			expr_accs(in, op, e->u.call.args[i], 0, NULL);
		break;
	default:
		break;
	}
}

static void
body_accs(Inf *in, Op *op, const IrStmt *s)
{
	int i;

	for (; s; s = s->next) {
		switch (s->kind) {
		case S_STORE:
			for (i = 0; i < s->u.store.n; i++)
				expr_accs(in, op, s->u.store.idx[i], 0, NULL);
			expr_accs(in, op, s->u.store.value, 0, NULL);
			note_buf(in, op, s->u.store.buf, 1, s->u.store.n, s->u.store.idx, NULL);
			break;
		case S_LET:
		case S_SET:
			expr_accs(in, op, s->u.let.value, 0, NULL);
			break;
		case S_IF:
			expr_accs(in, op, s->u.cond.cond, 0, NULL);
			body_accs(in, op, s->u.cond.then);
			body_accs(in, op, s->u.cond.els);
			break;
		case S_FOR:
			expr_accs(in, op, s->u.loop.lo, 0, NULL);
			expr_accs(in, op, s->u.loop.extent, 0, NULL);
			body_accs(in, op, s->u.loop.body);
			break;
		case S_ASSUME:
			expr_accs(in, op, s->u.assume.cond, 0, NULL);
			break;
		default:
			break;
		}
	}
}

/* accesses of a COPY/FILL region: loop coordinate k walks its k-th non-unit dim */
static void
region_acc(Inf *in, Op *op, const Region *r, int write)
{
	IExpr *idx[IR_MAXDIM];
	int d, k;

	for (d = 0; d < r->ndim && d < IR_MAXDIM; d++) {
		idx[d] = conv(in, op, r->off[d]);
		if (!idx[d])
			break;
		for (k = 0; k < op->nloop; k++)
			if (nest_region_dim(r, k) == d)
				idx[d] = iexpr_add(in->a, idx[d], iexpr_var(in->a, k));
	}
	if (d < r->ndim) {
		/* offsets in block vars etc.: only their scope matters unless local */
		if (in->k->bufs[r->buf].scope != MEM_LOCAL) {
			note_buf(in, op, r->buf, write, 0, NULL, NULL);
			return;
		}
		note_buf(in, op, r->buf, write, r->ndim, r->off, NULL);
		op->acc[op->nacc - 1].ok = 0;
		return;
	}
	note_buf(in, op, r->buf, write, r->ndim, NULL, idx);
}

static Op *
new_op(Inf *in, IrStmt *s)
{
	Op *op;

	if (in->nop == in->capop) {
		int nc = in->capop ? in->capop * 2 : 16;
		in->ops = arena_realloc(in->a, in->ops, sizeof *in->ops * (size_t)in->capop,
					sizeof *in->ops * (size_t)nc);
		in->capop = nc;
	}
	op = &in->ops[in->nop];
	memset(op, 0, sizeof *op);
	op->s = s;
	op->idx = in->nop++;
	return op;
}

/*
 * A statement outside parallel nests that reads or writes local elements
 * (a store, a let, an if's condition, a loop's bounds): every thread runs it,
 * so every thread must hold those buffers whole. An op with serial set; NULL
 * when it touches no local buffer.
 */
static void
serial_op(Inf *in, IrStmt *s)
{
	IrStmt one;
	Op tmp, *op;

	memset(&tmp, 0, sizeof tmp);
	switch (s->kind) {
	case S_STORE: case S_LET: case S_SET:
		one = *s;
		one.next = NULL;
		body_accs(in, &tmp, &one);
		break;
	case S_IF: expr_accs(in, &tmp, s->u.cond.cond, 0, NULL); break;
	case S_FOR:
		expr_accs(in, &tmp, s->u.loop.lo, 0, NULL);
		expr_accs(in, &tmp, s->u.loop.extent, 0, NULL);
		break;
	case S_PIPELINE: expr_accs(in, &tmp, s->u.pipe.extent, 0, NULL); break;
	default: break;
	}
	if (!tmp.nacc)
		return;
	op = new_op(in, s);
	op->serial = 1;
	op->acc = tmp.acc;
	op->nacc = tmp.nacc;
	op->capacc = tmp.capacc;
	op->ebytes = tmp.ebytes;
}

static void
collect(Inf *in, IrStmt *s)
{
	Op *op;
	int k;

	for (; s; s = s->next) {
		s->id = ++in->nstmt;
		switch (s->kind) {
		case S_PARALLEL:
			op = new_op(in, s);
			op->nest = 1;
			op->nloop = nest_shape(s, op->ext);
			for (k = 0; k < op->nloop; k++)
				op->vars[k] = s->u.par.vars[k];
			body_accs(in, op, s->u.par.body);
			/* number the body's statements too (they are not ops) */
			{
				IrStmt *b;
				for (b = s->u.par.body; b; b = b->next)
					b->id = ++in->nstmt;
			}
			break;
		case S_COPY:
			if (s->convert) {
				/* a conversion joins two parts of a tile's life (convert.c): not
				 * an op, so each part is inferred on its own */
				in->conv = arena_realloc(in->a, in->conv, sizeof *in->conv * (size_t)in->nconv,
							 sizeof *in->conv * (size_t)(in->nconv + 1));
				in->conv[in->nconv++] = s;
				break;
			}
			op = new_op(in, s);
			op->nest = 1;
			op->nloop = nest_shape(s, op->ext);
			region_acc(in, op, &s->u.copy.src, 0);
			region_acc(in, op, &s->u.copy.dst, 1);
			break;
		case S_FILL:
			op = new_op(in, s);
			op->nest = 1;
			op->nloop = nest_shape(s, op->ext);
			region_acc(in, op, &s->u.fill.dst, 1);
			break;
		case S_GEMM:
			op = new_op(in, s);
			note_buf(in, op, s->u.gemm.a.buf, 0, 0, NULL, NULL);
			note_buf(in, op, s->u.gemm.b.buf, 0, 0, NULL, NULL);
			note_buf(in, op, s->u.gemm.c.buf, 1, 0, NULL, NULL);
			break;
		case S_REDUCE:
			op = new_op(in, s);
			note_buf(in, op, s->u.reduce.src, 0, 0, NULL, NULL);
			note_buf(in, op, s->u.reduce.dst, 1, 0, NULL, NULL);
			break;
		case S_ANNOTATE_LAYOUT:
		case S_REQUIRE_LAYOUT:
		case S_REQUIRE_WMMA_LAYOUT:
			op = new_op(in, s);
			op->is_annot = 1;
			if (s->kind == S_REQUIRE_LAYOUT && !s->u.layout.pin && s->u.layout.lit) {
				in->pref = arena_realloc(in->a, in->pref, sizeof(int) * (size_t)in->npref,
							 sizeof(int) * (size_t)(in->npref + 1));
				in->pref[in->npref++] = op->idx;
			}
			break;
		case S_FOR:
			serial_op(in, s);
			collect(in, s->u.loop.body);
			break;
		case S_PIPELINE:
			serial_op(in, s);
			collect(in, s->u.pipe.body);
			break;
		case S_IF:
			serial_op(in, s);
			collect(in, s->u.cond.then);
			collect(in, s->u.cond.els);
			break;
		case S_STORE: case S_LET: case S_SET:
			serial_op(in, s);
			break;
		default:
			break;
		}
	}
}

/* ---- state -------------------------------------------------------------- */

State *
inf_state_new(Inf *in)
{
	State *st = anew(in->a, State);

	st->map.nbuf = in->k->nbuf;
	st->map.buf = anewn(in->a, Layout *, in->k->nbuf + 1);
	st->setter = anewn(in->a, const IrStmt *, in->k->nbuf + 1);
	st->map.nstmt = in->nstmt + 1;
	st->map.loop = anewn(in->a, Layout *, in->nstmt + 1);
	st->done = anewn(in->a, char, in->nop + 1);
	st->queued = anewn(in->a, char, in->nop + 1);
	st->queue = anewn(in->a, int, in->nop + 1);
	return st;
}

void
inf_state_copy(Inf *in, State *dst, const State *src)
{
	memcpy(dst->map.buf, src->map.buf, sizeof(Layout *) * (size_t)in->k->nbuf);
	memcpy(dst->setter, src->setter, sizeof(IrStmt *) * (size_t)in->k->nbuf);
	memcpy(dst->map.loop, src->map.loop, sizeof(Layout *) * (size_t)(in->nstmt + 1));
	memcpy(dst->done, src->done, (size_t)in->nop);
	memset(dst->queued, 0, (size_t)in->nop);
	dst->qhead = dst->qlen = 0;
	dst->why = NULL;
}

void
inf_journal(State *st, int kind, int i)
{
	if (!st->ja)
		return;
	if (st->njrn == st->capjrn) {
		int nc = st->capjrn ? st->capjrn * 2 : 64;
		st->jrn = arena_realloc(st->ja, st->jrn, sizeof(int) * (size_t)st->capjrn,
					sizeof(int) * (size_t)nc);
		st->capjrn = nc;
	}
	st->jrn[st->njrn++] = i << 2 | kind;
}

/* copy the entries that J's journal names from src to dst */
static void
journal_copy(State *dst, const State *src, const State *J)
{
	int k, i;

	for (k = 0; k < J->njrn; k++) {
		i = J->jrn[k] >> 2;
		switch (J->jrn[k] & 3) {
		case J_BUF:
			dst->map.buf[i] = src->map.buf[i];
			dst->setter[i] = src->setter[i];
			break;
		case J_LOOP:
			dst->map.loop[i] = src->map.loop[i];
			break;
		default:
			dst->done[i] = src->done[i];
			break;
		}
	}
}

/* undo an attempt: st equals base again, its queue empty */
static void
state_reset(Inf *in, State *st, const State *base)
{
	int k;

	journal_copy(st, base, st);
	st->njrn = 0;
	for (k = 0; k < st->qlen; k++)
		st->queued[st->queue[(st->qhead + k) % in->nop]] = 0;
	st->qhead = st->qlen = 0;
	st->why = NULL;
}

static void
enqueue_users(Inf *in, State *st, int buf, const Op *self)
{
	int i, u;

	for (i = 0; i < in->nuse[buf]; i++) {
		u = in->use[buf][i];
		if (u == self->idx || st->done[u] || st->queued[u])
			continue;
		if (st->comp_only >= 0 && in->comp[u] != st->comp_only)
			continue;
		st->queued[u] = 1;
		st->queue[(st->qhead + st->qlen++) % in->nop] = u;
	}
}

/* commit a buffer layout; -1 with st->why on a conflict */
int
inf_set_buf(Inf *in, State *st, int buf, Layout *L, const Op *op)
{
	const IrBuffer *B = &in->k->bufs[buf];
	Layout *old = st->map.buf[buf];
	Layout *m;
	Err e = {0};
	int eq;

	if (old == L)
		return 0;
	if (!old) {
		st->map.buf[buf] = L;
		st->setter[buf] = op->s;
		inf_journal(st, J_BUF, buf);
		enqueue_users(in, st, buf, op);
		return 0;
	}
	eq = layout_equal(old, L, &e);
	if (eq == 1)
		return 0;
	if (B->scope == MEM_SHARED) {
		m = swizzle_merge(in->a, old, L, dtype_bytes(B->dtype), &e);
		if (m) {
			st->map.buf[buf] = m;
			inf_journal(st, J_BUF, buf);
			return 0;
		}
	}
	st->why = inf_conflict(in, buf, old, st->setter[buf], L, op->s, eq < 0 ? e.msg : NULL);
	return -1;
}

/* ---- driver: BFS, levels, free mode ----------------------------------- */

static int
run_queue(Inf *in, State *st, int level)
{
	int u, r;

	while (st->qlen) {
		u = st->queue[st->qhead];
		st->qhead = (st->qhead + 1) % in->nop;
		st->qlen--;
		st->queued[u] = 0;
		if (st->done[u])
			continue;
		r = inf_step(in, st, &in->ops[u], level);
		if (r < 0) {
			in->where = in->ops[u].s;
			return -1;
		}
	}
	return 0;
}

static int
step_and_run(Inf *in, State *st, int u, int level)
{
	if (st->done[u])
		return 0;
	if (inf_step(in, st, &in->ops[u], level) < 0)
		return -1;
	return run_queue(in, st, level);
}

static int
find(int *p, int x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

/* union-find over ops that share a local buffer; comp[] numbered by first member */
static void
components(Inf *in)
{
	int *p = anewn(in->a, int, in->nop + 1);
	int *num = anewn(in->a, int, in->nop + 1);
	int b, i, r;

	for (i = 0; i < in->nop; i++)
		p[i] = i, num[i] = -1;
	for (b = 0; b < in->k->nbuf; b++)
		for (i = 1; i < in->nuse[b]; i++) {
			int x = find(p, in->use[b][0]), y = find(p, in->use[b][i]);
			if (x != y)
				p[x > y ? x : y] = x < y ? x : y;
		}
	in->comp = anewn(in->a, int, in->nop + 1);
	in->ncomp = 0;
	for (i = 0; i < in->nop; i++) {
		r = find(p, i);
		if (num[r] < 0)
			num[r] = in->ncomp++;
		in->comp[i] = num[r];
	}
}

static void
add_use(Inf *in, int buf, int op)
{
	int i;

	for (i = 0; i < in->nuse[buf]; i++)
		if (in->use[buf][i] == op)
			return;
	if (in->nuse[buf] == in->capuse[buf]) {
		int nc = in->capuse[buf] ? in->capuse[buf] * 2 : 4;
		in->use[buf] = arena_realloc(in->a, in->use[buf], sizeof(int) * (size_t)in->capuse[buf],
					     sizeof(int) * (size_t)nc);
		in->capuse[buf] = nc;
	}
	in->use[buf][in->nuse[buf]++] = op;
}

static int
score(Inf *in, State *st, const int *members, int n, Cost *c)
{
	IrStmt **ms = anewn(in->a, IrStmt *, n + 1);
	Err e = {0};
	int i;

	for (i = 0; i < n; i++)
		ms[i] = in->ops[members[i]].s;
	if (!in->rep)
		in->rep = cost_repeats(in->a, in->k, in->nstmt + 1);
	if (cost_score_rep(in->a, in->model, in->t, in->k, ms, n, &st->map, in->rep, c, &e) < 0) {
		st->why = arena_printf(in->a, "the cost model failed: %s", e.msg);
		return -1;
	}
	return 0;
}

/* does an op of component comp access buffer buf? */
static int
comp_uses(Inf *in, int comp, int buf)
{
	int i;

	for (i = 0; i < in->nuse[buf]; i++)
		if (in->comp[in->use[buf][i]] == comp)
			return 1;
	return 0;
}

/*
 * The estimated cost of a conversion A -> B of the tile cv copies: 0 when
 * equal or a register permutation; through shared memory every element is
 * written and read once: 2 x (the tile's bytes per warp, in 128-byte segments)
 */
static int64_t
conv_mem(Inf *in, const IrStmt *cv, const Layout *A, const Layout *B, const char **how)
{
	const IrBuffer *X = &in->k->bufs[cv->u.copy.src.buf];
	int64_t elems = 1, warps;
	Err e = {0};
	int d;

	if (!(*how = convert_kind(A, B, &e)))
		*how = "shared";
	if (strcmp(*how, "shared"))
		return 0;
	for (d = 0; d < X->ndim; d++)
		elems *= X->dims[d].c;
	warps = in->T / (in->t->warp_size > 0 ? in->t->warp_size : 32);
	if (warps < 1)
		warps = 1;
	return 2 * ((elems * dtype_bytes(X->dtype) / warps + 127) / 128 * 128);
}

static const char *
conv_how(const char *how)
{
	return !strcmp(how, "none") ? "equal layouts, no conversion"
	       : !strcmp(how, "registers") ? "in registers" : "through shared memory";
}

/* add the conversions that touch comp and whose layouts st knows on both sides */
static void
charge_convs(Inf *in, const State *st, int comp, Cost *c, Buf *say)
{
	const Layout *A, *B;
	const IrStmt *cv;
	const char *how;
	int64_t m;
	int i, n, src, dst;

	/* comp >= 0: the conversions bucketed to comp (they touch it) */
	n = comp >= 0 ? in->cconvstart[comp + 1] - in->cconvstart[comp] : in->nconv;
	for (i = 0; i < n; i++) {
		cv = in->conv[comp >= 0 ? in->cconv[in->cconvstart[comp] + i] : i];
		src = cv->u.copy.src.buf;
		dst = cv->u.copy.dst.buf;
		A = st->map.buf[src];
		B = st->map.buf[dst];
		if (!A || !B)
			continue;
		m = conv_mem(in, cv, A, B, &how);
		if (c)
			c->mem += m;
		if (say)
			buf_printf(say, "    conversion %s -> %s at %d:%d: %s, mem %lld\n",
				   in->k->bufs[src].name, in->k->bufs[dst].name, cv->loc.line, cv->loc.col,
				   conv_how(how), (long long)m);
	}
}

enum { MAXVARIANT = 4 };

/* a candidate root: a statement, or a conversion whose side keeps the other's layout */
static const char *
cand_name(const Op *op)
{
	if (op->is_annot == 3)
		return op->variant_why;
	return op->is_annot == 2 ? "conversion (keeping one layout)" : inf_stmt_name(op->s);
}

static void
explain_attempt(Inf *in, int comp, const Op *root, const State *st, const Cost *c, const char *why,
		int chosen)
{
	Buf *b = in->explain;
	int i;

	if (!b)
		return;
	buf_printf(b, "  root %s #%d at %d:%d: ", cand_name(root), root->s->id, root->s->loc.line,
		   root->s->loc.col);
	if (why) {
		buf_printf(b, "failed: %s\n", why);
		return;
	}
	buf_printf(b, "mem %lld regs %lld%s\n", (long long)c->mem, (long long)c->regs,
		   chosen ? "  <- chosen" : "");
	for (i = 0; i < c->nstmt; i++) {
		const StmtCost *sc = &c->stmts[i];
		buf_printf(b, "    %s #%d at %d:%d: mem %lld (bw %lld, issue %lld, vec %d)%s%s\n",
			   inf_stmt_name(sc->stmt), sc->stmt->id, sc->stmt->loc.line, sc->stmt->loc.col,
			   (long long)sc->mem, (long long)sc->bw_bytes, (long long)sc->issue_bytes,
			   sc->vec, sc->why ? ": " : "", sc->why ? sc->why : "");
		if (in->rule_loop && sc->stmt->kind == S_PARALLEL && in->rule_loop[sc->stmt->id] &&
		    st->map.loop[sc->stmt->id] == in->rule_loop[sc->stmt->id])
			buf_printf(b, "      loop layout: %s\n", in->rule_text[sc->stmt->id]);
	}
	charge_convs(in, st, comp, NULL, b);
}

/* do a and b (each equal to the same base outside its journal) hold the same layouts? */
static int
same_map_in(const State *a, const State *b, const State *J)
{
	int k, i;

	for (k = 0; k < J->njrn; k++) {
		i = J->jrn[k] >> 2;
		switch (J->jrn[k] & 3) {
		case J_BUF:
			if (a->map.buf[i] != b->map.buf[i])
				return 0;
			break;
		case J_LOOP:
			if (a->map.loop[i] != b->map.loop[i])
				return 0;
			break;
		default:
			break;
		}
	}
	return 1;
}

static int
same_map(const State *a, const State *b)
{
	return same_map_in(a, b, a) && same_map_in(a, b, b);
}

/* one attempt: the candidate (a preference, or a member as root) then every member */
static void
attempt(Inf *in, State *cur, const State *base, int comp, const Op *cand, const int *mem, int n)
{
	const IrStmt *s = cand->s;
	Layout *L;
	Err e = {0};
	int j, skip;

	(void)base;
	cur->comp_only = comp;
	if (cand->is_annot == 2) {
		/* a conversion's other side: keep its layout (no conversion) */
		int src = s->u.copy.src.buf, dst = s->u.copy.dst.buf;
		int b = cur->map.buf[src] ? dst : src;

		if (inf_set_buf(in, cur, b, cur->map.buf[b == src ? dst : src], cand) < 0 ||
		    run_queue(in, cur, LV_FREE) < 0)
			return;
	} else if (cand->is_annot == 1) {
		L = inf_lit_layout(in, s, &skip, &e);
		if (!L) {
			cur->why = skip ? "the preferred layout does not apply to this buffer"
				   : arena_printf(in->a, "the preferred layout cannot be built: %s", e.msg);
			return;
		}
		if (inf_set_buf(in, cur, s->u.layout.buf, L, cand) < 0 || run_queue(in, cur, LV_FREE) < 0)
			return;
	} else {
		if (cand->is_annot == 3) {
			in->force_op = cand->idx;
			in->force_F = cand->variant;
			in->force_why = cand->variant_why;
		}
		j = step_and_run(in, cur, cand->idx, LV_FREE);
		in->force_F = NULL;
		if (j < 0)
			return;
	}
	for (j = 0; j < n; j++)
		if (step_and_run(in, cur, mem[j], LV_FREE) < 0)
			return;
	inf_validate_state(in, cur, mem, n);
}

/* explain what became of the preferences (require_layout pin = false) of comp;
 * cand/cost/ok: the candidates, their costs, whether each was scored */
static void
explain_prefs(Inf *in, const State *base, const State *fin, int comp, const Op *const *cand,
	      const Cost *cost, const char *ok, int nc, int bi)
{
	const IrStmt *s, *set;
	const Layout *L;
	Err e = {0};
	int i, j, b, skip, k;

	for (k = in->cprefstart[comp]; k < in->cprefstart[comp + 1]; k++) {
		i = in->cpref[k];
		s = in->ops[in->pref[i]].s;
		b = s->u.layout.buf;
		L = inf_lit_layout(in, s, &skip, &e);
		for (j = 0; j < nc && cand[j] != &in->ops[in->pref[i]]; j++)
			;
		buf_printf(in->explain, "  preference require_layout #%d at %d:%d (pin=false) on '%s': ",
			   s->id, s->loc.line, s->loc.col, in->k->bufs[b].name);
		if (base->map.buf[b] && !(L && layout_equal(L, base->map.buf[b], &e) == 1)) {
			set = base->setter[b];
			buf_printf(in->explain, "overridden by the fixed layout from %s at %d:%d\n",
				   set ? inf_stmt_name(set) : "?", set ? set->loc.line : 0,
				   set ? set->loc.col : 0);
		} else if (j == bi || (L && fin->map.buf[b] && layout_equal(L, fin->map.buf[b], &e) == 1)) {
			buf_printf(in->explain, "honoured, mem %lld regs %lld\n", (long long)cost[bi].mem,
				   (long long)cost[bi].regs);
		} else {
			buf_printf(in->explain, "overridden: root %s #%d at %d:%d is cheaper (mem %lld regs "
				   "%lld", cand_name(cand[bi]), cand[bi]->s->id, cand[bi]->s->loc.line,
				   cand[bi]->s->loc.col, (long long)cost[bi].mem, (long long)cost[bi].regs);
			if (j < nc && ok[j])
				buf_printf(in->explain, " against mem %lld regs %lld", (long long)cost[j].mem,
					   (long long)cost[j].regs);
			else if (j < nc)
				buf_printf(in->explain, "; the preference failed");
			buf_puts(in->explain, ")\n");
		}
	}
}

/* free mode for one component; 0, or -1 after reporting every root's failure.
 * A and B equal base on entry; they do again on return (the attempts are
 * undone through their journals, so a component costs what it touches) */
static int
free_component(Inf *in, State *base, int comp, State *A, State *B)
{
	const int *cops = in->cop + in->copstart[comp];
	int ncops = in->copstart[comp + 1] - in->copstart[comp];
	int np = in->cprefstart[comp + 1] - in->cprefstart[comp];
	int ncv = in->cconvstart[comp + 1] - in->cconvstart[comp];
	int *mem = anewn(in->a, int, ncops + 1);
	const Op **cand;
	const char **why;
	Cost *costs;
	char *scored;
	State *best = NULL, *cur = A, *spare = B;
	Cost bestc = {0}, c;
	int n = 0, nc = 0, i, bi = -1;

	for (i = 0; i < ncops; i++)
		if (!base->done[cops[i]])
			mem[n++] = cops[i];
	if (n == 0)
		return 0;
	cand = anewn(in->a, const Op *, n * (1 + MAXVARIANT) + np + ncv + 1);
	/* preferences first: a tie keeps them */
	for (i = 0; i < np; i++) {
		int pi = in->pref[in->cpref[in->cprefstart[comp] + i]];
		const IrStmt *s = in->ops[pi].s;

		if (!base->map.buf[s->u.layout.buf])
			cand[nc++] = &in->ops[pi];
	}
	/* conversions with one side known: the other side may keep that layout */
	for (i = 0; i < ncv; i++) {
		IrStmt *cv = in->conv[in->cconv[in->cconvstart[comp] + i]];
		int src = cv->u.copy.src.buf, dst = cv->u.copy.dst.buf;
		int b = base->map.buf[src] ? dst : base->map.buf[dst] ? src : -1;
		Op *op;

		if (b < 0 || base->map.buf[b] || !comp_uses(in, comp, b))
			continue;
		op = anew(in->a, Op);
		op->s = cv;
		op->idx = in->nop;  /* no op: enqueue_users skips nothing */
		op->is_annot = 2;
		cand[nc++] = op;
	}
	for (i = 0; i < n; i++)
		cand[nc++] = &in->ops[mem[i]];
	/* then the partitions the nests' accesses suggest: after every plain root, so that
	 * a tie keeps the plan */
	for (i = 0; i < n; i++) {
		Fragment *vf[MAXVARIANT];
		const char *vw[MAXVARIANT];
		int nv = inf_nest_variants(in, &in->ops[mem[i]], vf, vw, MAXVARIANT), v;

		for (v = 0; v < nv; v++) {
			Op *op = anew(in->a, Op);

			*op = in->ops[mem[i]];
			op->is_annot = 3;
			op->variant = vf[v];
			op->variant_why = arena_printf(in->a, "%s (%s)", inf_stmt_name(op->s), vw[v]);
			cand[nc++] = op;
		}
	}
	why = anewn(in->a, const char *, nc);
	costs = anewn(in->a, Cost, nc);
	scored = anewn(in->a, char, nc);
	if (in->explain)
		buf_printf(in->explain, "component %d (%d statements, first %s #%d at %d:%d)\n", comp, n,
			   inf_stmt_name(in->ops[mem[0]].s), in->ops[mem[0]].s->id,
			   in->ops[mem[0]].s->loc.line, in->ops[mem[0]].s->loc.col);
	/* a second pass, only when every root failed, accepts what the lowering can still do
	 * through shared memory (in->lenient: infer_rules.c) */
	for (in->lenient = 0; in->lenient < 2 && !best; in->lenient++)
	for (i = 0; i < nc; i++) {
		attempt(in, cur, base, comp, cand[i], mem, n);
		if (!cur->why && best && same_map(cur, best)) {
			/* the same layouts as the best so far: the same cost, and the tie
			 * keeps the earlier root */
			if (in->explain)
				buf_printf(in->explain, "  root %s #%d at %d:%d: the same layouts as root "
					   "#%d\n", cand_name(cand[i]), cand[i]->s->id,
					   cand[i]->s->loc.line, cand[i]->s->loc.col, cand[bi]->s->id);
			state_reset(in, cur, base);
			continue;
		}
		if (!cur->why && score(in, cur, mem, n, &c) == 0) {
			/* ties keep the earlier root */
			int better;

			charge_convs(in, cur, comp, &c, NULL);
			costs[i] = c;
			scored[i] = 1;
			better = !best || cost_better(&c, &bestc);
			explain_attempt(in, comp, cand[i], cur, &c, NULL, 0);
			if (better) {
				State *t = spare;
				if (best) {
					state_reset(in, best, base);
					t = best;
				}
				best = cur;
				bestc = c;
				bi = i;
				cur = t;
			} else {
				state_reset(in, cur, base);
			}
			continue;
		}
		why[i] = cur->why ? cur->why : "the cost model rejected it";
		explain_attempt(in, comp, cand[i], cur, NULL, why[i], 0);
		state_reset(in, cur, base);
	}
	in->lenient = 0;
	if (!best) {
		const Op *f = &in->ops[mem[0]];
		diag(in->d, f->s->loc, "layout inference: no layout for the %d statement%s sharing local "
		     "tiles with this %s; every root failed:", n, n == 1 ? "" : "s", inf_stmt_name(f->s));
		for (i = 0; i < nc; i++)
			diag_note(in->d, cand[i]->s->loc, "with this %s as root: %s",
				  cand_name(cand[i]), why[i]);
		return -1;
	}
	if (in->explain) {
		buf_printf(in->explain, "  chosen: root %s #%d at %d:%d\n", cand_name(cand[bi]),
			   cand[bi]->s->id, cand[bi]->s->loc.line, cand[bi]->s->loc.col);
		explain_prefs(in, base, best, comp, cand, costs, scored, nc, bi);
	}
	/* keep the best: base and the other state take its entries */
	journal_copy(base, best, best);
	journal_copy(cur, best, best);
	best->njrn = 0;
	best->qhead = best->qlen = 0;
	base->comp_only = -1;
	return 0;
}

/* per component: its ops, and the preferences and conversions whose buffers
 * its ops touch (source order kept), in one pass over the uses */
static void
bucket(Inf *in, int nitem, int (*bufs_of)(Inf *, int, int *), int **list, int **start)
{
	int *cnt = anewn(in->a, int, in->ncomp + 2);
	int *mark = anewn(in->a, int, in->ncomp + 1);
	int *pc = NULL, *pi = NULL, np = 0, cap = 0;
	int it, k, j, nb, b[2], c;

	for (c = 0; c < in->ncomp; c++)
		mark[c] = -1;
	for (it = 0; it < nitem; it++) {
		nb = bufs_of(in, it, b);
		for (k = 0; k < nb; k++)
			for (j = 0; j < in->nuse[b[k]]; j++) {
				c = in->comp[in->use[b[k]][j]];
				if (mark[c] == it)
					continue;
				mark[c] = it;
				if (np == cap) {
					int nc = cap ? cap * 2 : 16;
					pc = arena_realloc(in->a, pc, sizeof(int) * (size_t)cap,
							   sizeof(int) * (size_t)nc);
					pi = arena_realloc(in->a, pi, sizeof(int) * (size_t)cap,
							   sizeof(int) * (size_t)nc);
					cap = nc;
				}
				pc[np] = c;
				pi[np++] = it;
				cnt[c + 1]++;
			}
	}
	for (c = 0; c < in->ncomp; c++)
		cnt[c + 1] += cnt[c];
	*start = anewn(in->a, int, in->ncomp + 1);
	memcpy(*start, cnt, sizeof(int) * (size_t)(in->ncomp + 1));
	*list = anewn(in->a, int, np + 1);
	for (k = 0; k < np; k++)
		(*list)[cnt[pc[k]]++] = pi[k];
}

static int
pref_bufs(Inf *in, int i, int *b)
{
	b[0] = in->ops[in->pref[i]].s->u.layout.buf;
	return 1;
}

static int
conv_bufs(Inf *in, int i, int *b)
{
	b[0] = in->conv[i]->u.copy.src.buf;
	b[1] = in->conv[i]->u.copy.dst.buf;
	return b[0] == b[1] ? 1 : 2;
}

static void
comp_lists(Inf *in)
{
	int i, c;

	in->copstart = anewn(in->a, int, in->ncomp + 2);
	in->cop = anewn(in->a, int, in->nop + 1);
	for (i = 0; i < in->nop; i++)
		in->copstart[in->comp[i] + 1]++;
	for (c = 0; c < in->ncomp; c++)
		in->copstart[c + 1] += in->copstart[c];
	{
		int *pos = anewn(in->a, int, in->ncomp + 1);
		memcpy(pos, in->copstart, sizeof(int) * (size_t)in->ncomp);
		for (i = 0; i < in->nop; i++)
			in->cop[pos[in->comp[i]]++] = i;
	}
	bucket(in, in->npref, pref_bufs, &in->cpref, &in->cprefstart);
	bucket(in, in->nconv, conv_bufs, &in->cconv, &in->cconvstart);
}

/*
 * Preferences on shared tiles (which no component holds): after the hard
 * constraints, taken when they agree with (or merge into) what those fixed
 * and dropped otherwise, which --explain reports.
 */
static void
shared_prefs(Inf *in, State *st)
{
	const IrStmt *s, *set;
	Layout *L;
	Err e = {0};
	int i, b, skip;

	for (i = 0; i < in->npref; i++) {
		s = in->ops[in->pref[i]].s;
		b = s->u.layout.buf;
		if (in->k->bufs[b].scope != MEM_SHARED)
			continue;
		L = inf_lit_layout(in, s, &skip, &e);
		if (!L)
			continue;
		set = st->setter[b];
		if (inf_set_buf(in, st, b, L, &in->ops[in->pref[i]]) == 0) {
			int same = layout_equal(st->map.buf[b], L, &e) == 1;

			if (in->explain)
				buf_printf(in->explain, "preference require_layout #%d at %d:%d (pin=false) "
					   "on shared '%s': %s%s%s\n", s->id, s->loc.line, s->loc.col,
					   in->k->bufs[b].name, same ? "honoured" : "merged with the layout "
					   "from ", same ? "" : set ? inf_stmt_name(set) : "?",
					   same ? "" : arena_printf(in->a, " at %d:%d", set ? set->loc.line : 0,
								    set ? set->loc.col : 0));
			continue;
		}
		st->why = NULL;
		if (in->explain)
			buf_printf(in->explain, "preference require_layout #%d at %d:%d (pin=false) on "
				   "shared '%s': overridden by the fixed layout from %s at %d:%d\n", s->id,
				   s->loc.line, s->loc.col, in->k->bufs[b].name,
				   set ? inf_stmt_name(set) : "?", set ? set->loc.line : 0,
				   set ? set->loc.col : 0);
	}
}

static int
infer_kernel(Arena *a, Diags *d, IrKernel *k, const Target *t, CostModelKind m, Buf *explain)
{
	Inf in0, *in = &in0;
	State *st;
	int i, j, c, rc = 0;

	memset(in, 0, sizeof *in);
	in->a = a;
	in->d = d;
	in->k = k;
	in->t = t;
	in->model = m;
	in->explain = explain;
	in->T = k->threads > 0 ? k->threads : 128;
	collect(in, k->body);
	in->nuse = anewn(a, int, k->nbuf + 1);
	in->capuse = anewn(a, int, k->nbuf + 1);
	in->use = anewn(a, int *, k->nbuf + 1);
	for (i = 0; i < in->nop; i++) {
		for (j = 0; j < in->ops[i].nacc; j++)
			add_use(in, in->ops[i].acc[j].buf, i);
	}
	components(in);
	if (explain)
		buf_printf(explain, "kernel %s: %d ops in %d components, cost model %s\n", k->name,
			   in->nop, in->ncomp, cost_model_name(m));
	st = inf_state_new(in);
	st->comp_only = -1;
	/* strict: annotations and gemm, in source order, without propagation */
	for (i = 0; i < in->nop; i++) {
		if (inf_step(in, st, &in->ops[i], LV_STRICT) < 0) {
			diag(d, in->ops[i].s->loc, "layout inference: %s", st->why);
			return -1;
		}
	}
	if (explain)
		for (i = 0; i < in->nop; i++)
			if (ir_given_loop(in->ops[i].s))
				buf_printf(explain, "  %s #%d at %d:%d: loop layout given by the program\n",
					   inf_stmt_name(in->ops[i].s), in->ops[i].s->id, in->ops[i].s->loc.line,
					   in->ops[i].s->loc.col);
	shared_prefs(in, st);
	/* common: every op queued; propagation breadth-first. Where it fails, once more from the
	 * same state with in->lenient (what the lowering can still do through shared memory);
	 * the first failure is the one reported */
	{
		State *s0 = inf_state_new(in);
		const char *why0 = NULL;
		const IrStmt *where0 = NULL;

		inf_state_copy(in, s0, st);
		for (in->lenient = 0; in->lenient < 2; in->lenient++) {
			if (in->lenient)
				inf_state_copy(in, st, s0);
			st->qhead = st->qlen = 0;
			memset(st->queued, 0, (size_t)in->nop);
			for (i = 0; i < in->nop; i++)
				if (!st->done[i]) {
					st->queued[i] = 1;
					st->queue[st->qlen++] = i;
				}
			in->where = NULL;
			if (run_queue(in, st, LV_COMMON) == 0)
				break;
			if (!in->lenient)
				why0 = st->why, where0 = in->where;
		}
		if (in->lenient == 2) {
			in->lenient = 0;
			diag(d, where0 ? where0->loc : k->loc, "layout inference: %s", why0);
			return -1;
		}
		in->lenient = 0;
	}
	/* free: per component, each attempt in one of two states kept equal to st */
	comp_lists(in);
	{
		State *A = inf_state_new(in), *B = inf_state_new(in);

		inf_state_copy(in, A, st);
		inf_state_copy(in, B, st);
		A->ja = B->ja = in->a;
		for (c = 0; c < in->ncomp; c++)
			if (free_component(in, st, c, A, B) < 0)
				rc = -1;
	}
	if (rc)
		return -1;
	inf_finish(in, st);
	if (explain && in->nconv) {
		buf_printf(explain, "conversions of kernel %s:\n", k->name);
		charge_convs(in, st, -1, NULL, explain);
	}
	return inf_validate_kernel(in, st);
}

int
infer_program(Arena *a, Diags *d, IrProgram *p, const Target *t, CostModelKind m, Buf *explain)
{
	IrKernel *k;
	int rc = 0;

	if (!a || !d || !p || !t)
		return -1;
	for (k = p->kernels; k; k = k->next)
		if (infer_kernel(a, d, k, t, m, explain) < 0)
			rc = -1;
	return rc;
}
