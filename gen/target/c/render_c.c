/*
 * render_c.c: the C of a lowered program (lir.h), for every C-like target.
 * One renderer prints every node; a dialect (gen/target/cuda/cuda.c,
 * gen/target/hip/hip.c) gives the few spellings that differ. It decides
 * nothing: every loop, guard, width and barrier is in the IR.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lir.h"

/* ---- index expressions (IExpr) in C: fully parenthesized, names[id] the text of var id ---- */

static int
atomic(const char *s)
{
	int depth = 0;
	const char *p;

	if (!*s)
		return 0;
	if (s[0] == '(') {
		/* one group when the first '(' closes at the last character */
		for (p = s; *p; p++) {
			depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
			if (depth == 0)
				break;
		}
		if (*p && !p[1])
			return 1;
		if (!strncmp(s, "(int)", 5) || !strncmp(s, "(long long)", 11))
			return atomic(s + (s[1] == 'i' ? 5 : 11));
	}
	depth = 0;
	for (p = s; *p; p++) {
		if (*p == '(' || *p == '[')
			depth++;
		else if (*p == ')' || *p == ']')
			depth--;
		else if (depth == 0 && !(isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
			return 0;
	}
	return 1;
}

static void
putatom(Buf *b, const char *s)
{
	if (atomic(s))
		buf_puts(b, s);
	else
		buf_printf(b, "(%s)", s);
}

/* x is >= 0 by its form (variables are thread, slot and loop indices, >= 0) */
static int
nonneg(const IExpr *x)
{
	switch (x->k) {
	case IX_CONST: return x->v >= 0;
	case IX_VAR: return 1;
	case IX_SUB: return 0;
	case IX_LT: case IX_LE: case IX_EQ: case IX_NE: return 1;
	case IX_SELECT: return nonneg(x->b) && nonneg(x->c);
	case IX_TAB: return x->tab->lo >= 0;
	default: return x->a && x->b && nonneg(x->a) && nonneg(x->b);
	}
}

/* fully parenthesized; names[id] is the C text of var id. Division and modulo are floored
 * (iexpr semantics): a dividend that may be negative (a difference) is printed so that C's
 * truncating / and % give the floored result */
void
lir_c_index(Buf *b, const IExpr *x, const char *const *names)
{
	if ((x->k == IX_MOD || x->k == IX_DIV) && x->b->k == IX_CONST && x->b->v > 0 && !nonneg(x->a)) {
		Buf a;

		buf_init(&a);
		lir_c_index(&a, x->a, names);
		if (x->k == IX_MOD)
			buf_printf(b, "((%s %% %lld + %lld) %% %lld)", buf_str(&a), (long long)x->b->v,
				   (long long)x->b->v, (long long)x->b->v);
		else
			buf_printf(b, "((%s - (%s %% %lld + %lld) %% %lld) / %lld)", buf_str(&a), buf_str(&a),
				   (long long)x->b->v, (long long)x->b->v, (long long)x->b->v, (long long)x->b->v);
		buf_free(&a);
		return;
	}
	static const char *ops[] = {
		[IX_ADD] = "+", [IX_SUB] = "-", [IX_MUL] = "*", [IX_DIV] = "/", [IX_MOD] = "%",
		[IX_XOR] = "^", [IX_AND] = "&", [IX_OR] = "|", [IX_SHL] = "<<", [IX_SHR] = ">>",
		[IX_LT] = "<", [IX_LE] = "<=", [IX_EQ] = "==", [IX_NE] = "!=",
	};

	switch (x->k) {
	case IX_CONST: buf_printf(b, "%lld", (long long)x->v); return;
	case IX_VAR: putatom(b, names[x->v] ? names[x->v] : "0"); return;
	case IX_MIN: case IX_MAX:
		buf_puts(b, x->k == IX_MIN ? "min(" : "max(");
		lir_c_index(b, x->a, names);
		buf_puts(b, ", ");
		lir_c_index(b, x->b, names);
		buf_putc(b, ')');
		return;
	case IX_TAB:
		buf_printf(b, "%s[", x->tab->name);
		lir_c_index(b, x->a, names);
		buf_putc(b, ']');
		return;
	case IX_SELECT:
		buf_putc(b, '(');
		lir_c_index(b, x->a, names);
		buf_puts(b, " ? ");
		lir_c_index(b, x->b, names);
		buf_puts(b, " : ");
		lir_c_index(b, x->c, names);
		buf_putc(b, ')');
		return;
	default:
		buf_putc(b, '(');
		lir_c_index(b, x->a, names);
		buf_printf(b, " %s ", ops[x->k]);
		lir_c_index(b, x->b, names);
		buf_putc(b, ')');
	}
}

/* a declaration without its ';': [const ]type name[count][ = init][, name2[ = init2]], an index
 * initializer after ixmark (the dump marks it "index ") */
void
lir_c_decl(Buf *o, const LNode *n, const char *ixmark)
{
	size_t tl = strlen(n->u.decl.type);

	buf_printf(o, "%s%s%s%s", n->u.decl.is_const ? "const " : "", n->u.decl.type,
		   tl && n->u.decl.type[tl - 1] == '*' ? "" : " ", n->u.decl.name);
	if (n->u.decl.count > 0)
		buf_printf(o, "[%lld]", (long long)n->u.decl.count);
	if (n->u.decl.ix) {
		buf_printf(o, " = %s", ixmark);
		lir_c_index(o, n->u.decl.ix, n->u.decl.ixnames);
	} else if (n->u.decl.init) {
		buf_printf(o, " = %s", n->u.decl.init);
	}
	if (n->u.decl.name2)
		buf_printf(o, ", %s", n->u.decl.name2);
	if (n->u.decl.init2)
		buf_printf(o, " = %s", n->u.decl.init2);
}

static void
indent(Buf *o, int n)
{
	while (n-- > 0)
		buf_putc(o, '\t');
}

static void list(Buf *o, const LList *l, int depth, const LDialect *d);

static void
tail(Buf *o, const char *text)
{
	if (text)
		buf_printf(o, " %s", text);
	buf_putc(o, '\n');
}

static void
node(Buf *o, const LNode *n, int in, const LDialect *d)
{

	switch (n->kind) {
	case L_TEXT:
		indent(o, in);
		buf_printf(o, "%s\n", n->text);
		break;
	case L_COMMENT:
		indent(o, in);
		buf_printf(o, "// %s\n", n->text);
		break;
	case L_BLOCK:
		indent(o, in);
		buf_puts(o, "{");
		if (n->text)
			buf_printf(o, " // %s", n->text);
		buf_putc(o, '\n');
		list(o, &n->body, in + 1, d);
		indent(o, in);
		buf_puts(o, "}\n");
		break;
	case L_FOR: {
		char inc[96];

		if (n->u.loop.unroll || n->u.loop.rolled) {
			indent(o, in - (n->u.loop.pragma_out && in > 0));
			buf_puts(o, n->u.loop.rolled ? "#pragma unroll 1\n" : "#pragma unroll\n");
		}
		if (n->u.loop.stepx)
			snprintf(inc, sizeof inc, "%s += %s", n->u.loop.var, n->u.loop.stepx);
		else if (n->u.loop.step == 1 && !n->u.loop.stepped)
			snprintf(inc, sizeof inc, "%s++", n->u.loop.var);
		else
			snprintf(inc, sizeof inc, "%s += %lld", n->u.loop.var, (long long)n->u.loop.step);
		indent(o, in);
		if (n->u.loop.hoist)
			buf_printf(o, "for (%s %s = %s, %s_end_ = %s; %s < %s_end_; %s)", n->u.loop.type ? n->u.loop.type : "int", n->u.loop.var,
				   n->u.loop.lo, n->u.loop.var, n->u.loop.end, n->u.loop.var, n->u.loop.var, inc);
		else
			buf_printf(o, "for (%s %s = %s; %s < %s; %s)", n->u.loop.type ? n->u.loop.type : "int", n->u.loop.var, n->u.loop.lo,
				   n->u.loop.var, n->u.loop.end, inc);
		buf_puts(o, n->u.loop.nobrace ? "" : " {");
		if (n->text)
			buf_printf(o, " // %s", n->text);
		buf_putc(o, '\n');
		list(o, &n->body, in + 1, d);
		if (!n->u.loop.nobrace) {
			indent(o, in);
			buf_puts(o, "}\n");
		}
		break;
	}
	case L_IF:
		indent(o, in);
		if (n->u.cond.guard) {
			buf_printf(o, "if (%s)\n", n->u.cond.cond);
			list(o, &n->body, in + 1, d);
			if (n->els.head) {
				indent(o, in);
				buf_puts(o, "else\n");
				list(o, &n->els, in + 1, d);
			}
			break;
		}
		buf_printf(o, "if (%s) {\n", n->u.cond.cond);
		list(o, &n->body, in + 1, d);
		if (n->els.head) {
			indent(o, in);
			buf_puts(o, "} else {");
			if (n->text)
				buf_printf(o, " // %s", n->text);
			buf_putc(o, '\n');
			list(o, &n->els, in + 1, d);
		}
		indent(o, in);
		buf_puts(o, "}\n");
		break;
	case L_DECL:
		indent(o, in);
		lir_c_decl(o, n, "");
		buf_putc(o, ';');
		tail(o, n->text);
		break;
	case L_ASSIGN:
	case L_STORE:
		indent(o, in);
		if (n->kind == L_STORE && n->u.set.atomic)
			buf_printf(o, "%s(%s, %s);", n->u.set.atomic, n->u.set.lhs, n->u.set.rhs);
		else
			buf_printf(o, "%s = %s;", n->u.set.lhs, n->u.set.rhs);
		tail(o, n->text);
		break;
	case L_BARRIER:
		indent(o, in);
		if (n->u.bar.kind == LB_NAMED)
			buf_printf(o, "tl_bar_named(1, %lld); // the consumer threads%s%s\n", (long long)n->u.bar.count,
				   n->text ? "; " : "", n->text ? n->text : "");
		else
			buf_printf(o, "%s%s%s\n", d->barrier, n->text ? " // " : "", n->text ? n->text : "");
		break;
	case L_SMEM_VIEW:
		indent(o, in);
		buf_printf(o, "%s *%s = (%s *)(tl_smem + %lld); // %d stage%s of %lld elements\n", n->u.view.type,
			   n->u.view.name, n->u.view.type, (long long)n->u.view.offset, n->u.view.stages,
			   n->u.view.stages > 1 ? "s" : "", (long long)n->u.view.stage_elems);
		break;
	case L_LOAD:
		indent(o, in);
		buf_printf(o, "const %s %s = *(const %s *)(%s);\n", n->u.load.vtype, n->u.load.name, n->u.load.vtype,
			   n->u.load.addr);
		break;
	case L_COORDS:
		indent(o, in);
		buf_printf(o, "const int tid = %s, lane = tid %% %d, warp = tid / %d;\n", d->late_tid, n->u.wait.n,
			   n->u.wait.n);
		indent(o, in);
		buf_puts(o, "(void)lane, (void)warp;\n");
		break;
	case L_CALL:
		indent(o, in);
		buf_printf(o, "%s(%s);", n->u.call.fn, n->u.call.args);
		tail(o, n->text);
		break;
	case L_ASYNC_COPY:
		indent(o, in);
		if (n->u.acp.pred)
			buf_printf(o, "%s(%s, %s, %s);\n", d->acopy16_zfill, n->u.acp.dst, n->u.acp.src, n->u.acp.pred);
		else
			buf_printf(o, "%s(%s, %s);\n", d->acopy16, n->u.acp.dst, n->u.acp.src);
		break;
	case L_ASYNC_COMMIT:
		indent(o, in);
		buf_printf(o, "%s\n", d->commit);
		break;
	case L_ASYNC_WAIT:
		indent(o, in);
		buf_printf(o, d->wait, n->u.wait.n);
		buf_putc(o, '\n');
		break;
	case L_KINDS:
		break;
	}
}

/* The identifiers a text reads: a hash set of the words outside its comments (a declared
 * name counts as read wherever its word occurs, "s.r" too: a declaration is kept when in doubt) */
typedef struct Ids {
	char **v;
	size_t cap, n;
	int oom;
} Ids;

static size_t
idhash(const char *s, size_t k)
{
	return (size_t)tl_strhash(s, k, TL_HASH_BASIS);
}

static int
isid(int c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static void
ids_add(Ids *t, const char *w, size_t k)
{
	size_t i;

	if (t->oom)
		return;
	if (2 * (t->n + 1) > t->cap) {
		/* twice the slots, the words moved over */
		size_t cap = t->cap ? 2 * t->cap : 64, j;
		char **v = calloc(cap, sizeof(char *));

		if (!v) {
			t->oom = 1;
			return;
		}
		for (i = 0; i < t->cap; i++)
			if (t->v[i]) {
				for (j = idhash(t->v[i], strlen(t->v[i])) & (cap - 1); v[j]; j = (j + 1) & (cap - 1))
					;
				v[j] = t->v[i];
			}
		free(t->v);
		t->v = v, t->cap = cap;
	}
	for (i = idhash(w, k) & (t->cap - 1); t->v[i]; i = (i + 1) & (t->cap - 1))
		if (!strncmp(t->v[i], w, k) && !t->v[i][k])
			return;
	if (!(t->v[i] = malloc(k + 1))) {
		t->oom = 1;
		return;
	}
	memcpy(t->v[i], w, k);
	t->v[i][k] = 0;
	t->n++;
}

/* the words of text s outside // and / * * / comments */
static void
ids_scan(Ids *t, const char *s)
{
	while (*s) {
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");

			s = e ? e + 2 : s + strlen(s);
		} else if (isid(*s)) {
			const char *w = s;

			while (isid(*s))
				s++;
			if (!isdigit((unsigned char)*w))
				ids_add(t, w, (size_t)(s - w));
		} else {
			s++;
		}
	}
}

/* is the declared name (its leading identifier: "af[2][4]" declares af) in t? a name that is
 * not plain, or a set short of memory, counts as read */
static int
ids_has(const Ids *t, const char *name)
{
	size_t k = 0, i;

	while (isid(name[k]))
		k++;
	if (!k || (name[k] && name[k] != '[') || t->oom)
		return 1;
	if (!t->cap)
		return 0;
	for (i = idhash(name, k) & (t->cap - 1); t->v[i]; i = (i + 1) & (t->cap - 1))
		if (!strncmp(t->v[i], name, k) && !t->v[i][k])
			return 1;
	return 0;
}

static void
ids_free(Ids *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->v[i]);
	free(t->v);
}

/* may the renderer leave declaration n out where nothing reads it? scalars (a coordinate
 * the statements after it do not need, a let of a block that does not read it: initializers
 * have no side effects) and arrays without an initializer (a local no statement kept) */
static int
prunable(const LNode *n)
{
	return n->kind == L_DECL && (!n->u.decl.count || (!n->u.decl.init && !n->u.decl.ix));
}

/*
 * The statements of a list. A declaration nothing after it reads is left out, declarator by
 * declarator (nvcc warns of it, #177, and the reader need not follow it), a local's layout
 * comment with it. Its scope is the rest of the list: the statements are rendered from the last
 * to the first, the words of those kept gathered as they come, so that a name read only by a
 * declaration left out is unused too (time linear in the text).
 */
static void
list(Buf *o, const LList *l, int depth, const LDialect *d)
{
	const LNode *n, **nodes;
	char **piece;
	int i, cnt = 0, u1, u2;
	Ids used = {0};
	Buf b;

	for (n = l->head; n; n = n->next)
		cnt++;
	if (!cnt)
		return;
	piece = calloc((size_t)cnt, sizeof *piece);
	nodes = calloc((size_t)cnt, sizeof *nodes);
	if (!piece || !nodes) {
		free(piece);
		free(nodes);
		o->oom = 1;
		return;
	}
	for (n = l->head, i = 0; n; n = n->next)
		nodes[i++] = n;
	for (i = cnt - 1; i >= 0; i--) {
		LNode one;

		n = nodes[i];
		buf_init(&b);
		if (prunable(n)) {
			Ids self = {0};

			one = *n;
			if (n->u.decl.init2)
				ids_scan(&self, n->u.decl.init2);
			u1 = ids_has(&used, n->u.decl.name) || ids_has(&self, n->u.decl.name);
			u2 = n->u.decl.name2 && ids_has(&used, n->u.decl.name2);
			ids_free(&self);
			if (!u1 && n->u.decl.name2 && u2) /* the second declarator alone */
				one.u.decl.ix = NULL, one.u.decl.name = n->u.decl.name2, one.u.decl.init = n->u.decl.init2;
			if (!u1 || !u2)
				one.u.decl.name2 = one.u.decl.init2 = NULL;
			if (u1 || u2)
				node(&b, &one, depth, d);
		} else if (n->kind == L_COMMENT && i + 1 < cnt && prunable(nodes[i + 1]) && nodes[i + 1]->u.decl.count &&
			   !piece[i + 1]) {
			/* the layout comment of a local left out */
		} else {
			node(&b, n, depth, d);
		}
		o->oom |= b.oom; /* a piece cut short: the output says so */
		if (b.len)
			ids_scan(&used, buf_str(&b));
		piece[i] = b.len ? buf_take(&b) : NULL;
		buf_free(&b);
	}
	o->oom |= used.oom;
	ids_free(&used);
	for (i = 0; i < cnt; i++) {
		if (piece[i])
			buf_puts(o, piece[i]);
		free(piece[i]);
	}
	free(piece);
	free(nodes);
}

/* a table of IX_TAB entries: static const, 16 entries a line, the narrowest type that holds them */
static void
table(Buf *o, const ITab *t)
{
	int64_t i;
	int narrow = t->lo >= -32768 && t->hi <= 32767;

	buf_printf(o, "\tstatic const %s %s[%lld] = {", narrow ? "short" : "int", t->name, (long long)t->n);
	for (i = 0; i < t->n; i++)
		buf_printf(o, "%s%d", i % 16 ? ", " : i ? ",\n\t\t" : "\n\t\t", (int)t->v[i]);
	buf_puts(o, "\n\t};\n");
}

static void
kernel(Buf *o, const LKernel *k, const LDialect *d, int64_t align)
{
	const LNode *n;
	Buf body;
	Ids used = {0};
	int i;

	buf_printf(o, "// kernel %s: %lld threads, %lld bytes of dynamic shared memory%s\n", k->name,
		   (long long)k->threads, (long long)k->smem_bytes,
		   k->smem_optin ? " (set cudaFuncAttributeMaxDynamicSharedMemorySize)" : "");
	if (k->persistent)
		buf_printf(o, "// kernel %s: persistent: launch grid (min(X * Y, SMs * blocks per SM), 1, Z) for the grid "
			   "(X, Y, Z) of the sizes\n", k->name);
	for (i = 0; i < k->ntmap; i++) {
		const LTmap *m = &k->tmaps[i];

		/* rank 3 (dim2): a third dimension, and a box of one plane */
		buf_printf(o, "// kernel %s: tensor map %s of %s: %d-byte elements, dims (%s, %s%s%s), rows of %s elements, "
			   "box (%lld, %lld%s), swizzle %s\n", k->name, m->name, m->tensor, m->esize, m->dim0, m->dim1,
			   m->dim2 ? ", " : "", m->dim2 ? m->dim2 : "", m->rows, (long long)m->box0, (long long)m->box1,
			   m->dim2 ? ", 1" : "",
			   m->swizzle == 128 ? "128B" : m->swizzle == 64 ? "64B" : m->swizzle == 32 ? "32B" : "none");
	}
	buf_printf(o, "%s __launch_bounds__(%lld)\n%s(", d->kernel_decl, (long long)k->threads, k->cname);
	for (i = 0; i < k->nparam; i++)
		buf_printf(o, "%s%s %s%s", i ? ", " : "", k->params[i].type,
			   k->params[i].is_ptr ? "*__restrict__ " : "", k->params[i].name);
	buf_puts(o, ")\n{\n");
	/* the body first: the tables and the checks (vector-row flags) it reads, as list() keeps
	 * only the declarations something reads */
	buf_init(&body);
	list(&body, &k->body, 1, d);
	ids_scan(&used, buf_str(&body));
	for (i = 0; i < k->ntab; i++)
		if (ids_has(&used, k->tabs[i]->name))
			table(o, k->tabs[i]);
	for (n = k->checks.head; n; n = n->next)
		if (!prunable(n) || ids_has(&used, n->u.decl.name))
			node(o, n, 1, d);
	o->oom |= used.oom;
	ids_free(&used);
	if (k->has_smem)
		buf_printf(o, "\textern __shared__ __align__(%lld) unsigned char tl_smem[];\n", (long long)align);
	buf_printf(o, "\tconst int tid = threadIdx.x, lane = tid %% %d, warp = tid / %d;\n", k->warp_size,
		   k->warp_size);
	buf_puts(o, "\t(void)lane, (void)warp;\n");
	buf_puts(o, buf_str(&body));
	o->oom |= body.oom;
	buf_free(&body);
	buf_puts(o, "}\n");
}

void
lir_render_c(Buf *out, const LProgram *p, const LDialect *d)
{
	const LKernel *k;
	int64_t align = 0;

	/* every kernel of a module declares the one extern tl_smem with the module's largest
	 * alignment (declarations that differ draw nvcc's warning #1886) */
	for (k = p->kernels; k; k = k->next)
		if (k->has_smem && k->smem_align > align)
			align = k->smem_align;
	buf_printf(out, "// generated by tilec %s for %s\n#include \"%s\"\n", p->version, p->arch, d->include);
	for (k = p->kernels; k; k = k->next) {
		buf_putc(out, '\n');
		kernel(out, k, d, align);
	}
}

const LDialect *
lir_dialect(const LProgram *p)
{
	return p->target == 1 ? &lir_hip : &lir_cuda;
}
