/*
 * lw_build.c: building the lowered kernel IR from the lowering (lw.h): nodes
 * at the current place (statements, lists pushed and popped, ifs, loops,
 * blocks, declarations, stores, barriers, async groups, target calls), and
 * the C names and types the nodes use.
 */
#include "lw.h"

/* a node of kind k at the current place */
LNode *
lw_add(Em *e, LKind k)
{
	LNode *n = lir_node(e->a, k);

	lir_append(e->cur, n);
	return n;
}

/* nodes go into l, one level deeper, until pop() */
static void
push(Em *e, LList *l)
{
	LSave *sv = anew(e->a, LSave);

	sv->cur = e->cur, sv->up = e->saved;
	e->saved = sv;
	e->cur = l;
}

void
lw_pop(Em *e)
{
	LSave *sv = e->saved;

	e->cur = sv->cur, e->saved = sv->up;
}

void
lw_barrier(Em *e)
{
	lw_add(e, L_BARRIER)->u.bar.kind = LB_BLOCK;
}

/* a block barrier that stays one in a warp-specialized kernel (the producer meets it) */
void
lw_barrier_all(Em *e)
{
	LNode *n = lw_add(e, L_BARRIER);

	n->u.bar.kind = LB_BLOCK, n->u.bar.all = 1;
}

void
lw_async_commit(Em *e)
{
	lw_add(e, L_ASYNC_COMMIT);
}

void
lw_async_wait(Em *e, int n)
{
	lw_add(e, L_ASYNC_WAIT)->u.wait.n = n;
}

LNode *
lw_comment(Em *e, const char *fmt, ...)
{
	va_list ap;
	Buf b;
	LNode *n;

	buf_init(&b);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	n = lw_add(e, L_COMMENT);
	n->text = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return n;
}

/* if (cond): the statements that follow go into it until pop() (guard: exactly one,
 * printed without braces; divergent: threads of the block may disagree on cond) */
LNode *
lw_open_if(Em *e, const char *cond, int guard, int divergent)
{
	LNode *n = lw_add(e, L_IF);

	n->u.cond.cond = cond, n->u.cond.guard = guard, n->u.cond.divergent = divergent;
	push(e, &n->body);
	return n;
}

/* the else branch of n, opened by open_if (text: a comment after "} else {") */
void
lw_open_else(Em *e, LNode *n, const char *text)
{
	lw_pop(e);
	n->text = text;
	push(e, &n->els);
}

/* for (int var = lo; var < end; var++), trip its constant trip count or -1 */
LNode *
lw_open_for(Em *e, const char *var, const char *lo, const char *end, int64_t trip, int unroll, int hoist)
{
	LNode *n = lw_add(e, L_FOR);

	n->u.loop.var = var, n->u.loop.lo = lo, n->u.loop.end = end, n->u.loop.trip = trip;
	n->u.loop.unroll = unroll, n->u.loop.hoist = hoist;
	push(e, &n->body);
	return n;
}

/* { // text */
LNode *
lw_open_block(Em *e, const char *text)
{
	LNode *n = lw_add(e, L_BLOCK);

	n->text = text;
	push(e, &n->body);
	return n;
}

LNode *
lw_decl(Em *e, int is_const, const char *type, const char *name, int64_t count, const char *init, const char *text)
{
	LNode *n = lw_add(e, L_DECL);

	n->u.decl.is_const = is_const, n->u.decl.type = type, n->u.decl.name = name;
	n->u.decl.count = count, n->u.decl.init = init;
	n->text = text;
	return n;
}

LMem
lw_memof(const IrBuffer *B)
{
	return B->scope == MEM_GLOBAL ? LM_GLOBAL : B->scope == MEM_SHARED ? LM_SHARED : LM_LOCAL;
}

/* const int name = x, an index expression over the variables names names (static) */
void
lw_decl_ix(Em *e, const char *name, const IExpr *x, const char *const *names)
{
	LNode *n = lw_decl(e, 1, "int", name, 0, NULL, NULL);

	n->u.decl.ix = x, n->u.decl.ixnames = names;
}

/* const int a = ia, b = ib; */
void
lw_decl2(Em *e, const char *a, const char *ia, const char *b, const char *ib)
{
	LNode *n = lw_decl(e, 1, "int", a, 0, ia, NULL);

	n->u.decl.name2 = b, n->u.decl.init2 = ib;
}

/* fn(args); a target operation of category cat (text: a comment after it, or NULL) */
LNode *
lw_call(Em *e, LCall cat, const char *fn, const char *args, const char *text)
{
	LNode *n = lw_add(e, L_CALL);

	n->u.call.cat = cat, n->u.call.fn = fn, n->u.call.args = args;
	n->text = text;
	return n;
}

/* lhs = rhs: into memory (L_STORE, bytes per thread) or a register (L_ASSIGN) */
LNode *
lw_assign(Em *e, LMem mem, int buf, int bytes, const char *lhs, const char *rhs)
{
	LNode *n = lw_add(e, mem == LM_LOCAL ? L_ASSIGN : L_STORE);

	n->u.set.mem = mem, n->u.set.buf = buf, n->u.set.bytes = bytes;
	n->u.set.lhs = arena_strdup(e->a, lhs), n->u.set.rhs = arena_strdup(e->a, rhs);
	return n;
}

const char *
lw_ctype(DType t)
{
	switch (t) {
	case DT_F16: return "tl_half_t";
	case DT_BF16: return "tl_bf16_t";
	case DT_F32: return "float";
	case DT_F64: return "double";
	case DT_I32: return "int";
	case DT_INT: return "long long";
	case DT_I8: return "signed char";
	case DT_U8: case DT_FP8E4M3: case DT_FP8E5M2: return "unsigned char";
	case DT_BOOL: return "bool";
	default: return "void";
	}
}

/* the arithmetic type a value of t computes in */
DType
lw_calctype(DType t)
{
	return t == DT_F16 || t == DT_BF16 || t == DT_FP8E4M3 || t == DT_FP8E5M2 ? DT_F32 : t;
}

/* ---- names: user names that would clash with generated ones get a '_' ----------- */

static const char *const reserved[] = {
	/* names the generated code declares (or spell them tl_...: check_emit_cuda's
	 * generated_names finds every identifier of the emitted code that is not a name of the
	 * kernel's IR and that cname() would keep) */
	"s", "g", "r", "q", "c", "it", "tid", "lane", "warp", "kk", "mi", "ni", "nj", "st", "wm",
	"wn", "wgm", "wgn", "main", "af", "bf", "t4", "da", "db",
	/* C, C++ and CUDA words, math functions the code calls */
	"auto", "bool", "break", "case", "char", "class", "const", "continue", "default", "delete",
	"do", "double", "else", "enum", "explicit", "extern", "false", "float", "for", "friend", "goto",
	"if", "inline", "int", "long", "mutable", "namespace", "new", "operator", "private",
	"protected", "public", "register", "return", "short", "signed", "sizeof", "static", "struct",
	"switch", "template", "this", "throw", "true", "try", "typedef", "typename", "union",
	"unsigned", "using", "virtual", "void", "volatile", "while", "and", "or", "not", "xor", "asm",
	"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "min", "max", "abs", "fabs",
	"fabsf", "fmax", "fmaxf", "fmin", "fminf", "expf", "exp2f", "logf", "log2f", "sqrtf", "rsqrtf",
	"tanhf", "sinf", "cosf", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos",
	"uint4", "uint2", "make_uint4", "make_uint2", "half", "INFINITY", "NAN",
};

/* 1 if the C name of user name n is n itself: not a reserved word, not c<digits>, not
 * starting with "tl" or "__" (the CUDA and HIP built-ins), not ending in '_' */
static int
cname_kept(const char *n)
{
	size_t i, l = strlen(n);

	if (l == 0 || n[l - 1] == '_' || !strncmp(n, "tl", 2) || !strncmp(n, "__", 2))
		return 0;
	if (n[0] == 'c' && l > 1 && strspn(n + 1, "0123456789") == l - 1)
		return 0;
	for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
		if (n[0] == reserved[i][0] && !strcmp(n, reserved[i]))
			return 0;
	return 1;
}

/* the C name of a user name: the names cname_kept() refuses get a '_' appended
 * (injective: kept names never end in '_'); names the code derives from a C name X
 * end in '_' too (X_end_, X_n_, X_next_), so they are no user's */
const char *
lw_cname(Arena *a, const char *n)
{
	return cname_kept(n) ? n : arena_printf(a, "%s_", n);
}

const char *
lw_vname(Em *e, const IrVar *v)
{
	return lw_cname(e->a, v->name);
}
