/*
 * parse.c: the parse driver (lexer -> Lemon parser -> AST) and the helpers
 * the grammar's actions call for the few checks that need a message more
 * precise than "unexpected X": kernel clauses, assignment targets,
 * statements that are not calls, and nesting limits.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "parser.h"

/* a token as it appears in messages: 'x', identifier 'foo', end of input */
static void
showtok(Buf *b, const Tok *t)
{
	int n = t->len > 32 ? 32 : t->len;
	const char *more = t->len > 32 ? "..." : "";

	switch (t->kind) {
	case 0:
		buf_puts(b, "end of input");
		break;
	case TK_ID:
		buf_printf(b, "identifier '%.*s%s'", n, t->s, more);
		break;
	case TK_INT:
	case TK_FLOAT:
		buf_printf(b, "number '%.*s%s'", n, t->s, more);
		break;
	case TK_STRING:
		buf_puts(b, "string");
		break;
	default:
		buf_printf(b, "'%.*s%s'", n, t->s, more);
		break;
	}
}

/* expected[]: token kinds, or -1 for "expression" */
void
parse_syntax_error(Parser *p, const Tok *t, const int *expected, int nexpected)
{
	Buf b;
	int i;

	if (++p->nsyntax > AST_MAXSYNTAX) {
		p->failed = 1;
		return;
	}
	buf_init(&b);
	buf_puts(&b, "unexpected ");
	showtok(&b, t);
	/* list what would have been accepted when it is short */
	if (nexpected > 0 && nexpected <= 4) {
		buf_puts(&b, ", expected ");
		for (i = 0; i < nexpected; i++) {
			if (i)
				buf_puts(&b, i + 1 == nexpected ? " or " : ", ");
			buf_puts(&b, expected[i] < 0 ? "expression" : lex_tokname(expected[i]));
		}
	}
	diag(p->diags, t->loc, "%s", buf_str(&b));
	buf_free(&b);
}

void
parse_overflow(Parser *p)
{
	p->failed = 1;
	if (!p->deep)
		diag(p->diags, p->last, "expression nested too deeply (more than %d levels)",
		     AST_MAXDEPTH);
	p->deep = 1;
}

Node *
parse_depth(Parser *p, Node *n)
{
	if (n && n->depth > AST_MAXDEPTH && !p->deep) {
		p->deep = 1;
		diag(p->diags, n->loc, "expression nested too deeply (more than %d levels)",
		     AST_MAXDEPTH);
	}
	return n;
}

/* kernel NAME(params) grid(e1[, e2[, e3]]) threads(n) { body }: clauses arrive as
 * N_CALL nodes named "grid" / "threads" in source order */
Node *
parse_kernel(Parser *p, Tok name, NodeList params, NodeList clauses, NodeList body)
{
	Node *c, *grid = NULL, *threads = NULL;
	NodeList g = {0};
	int bad = 0;

	for (c = clauses.head; c; c = c->next) {
		int isgrid = !strcmp(c->u.call.name, "grid");

		if (isgrid ? grid != NULL : threads != NULL) {
			diag(p->diags, c->loc, "duplicate %s(...) clause", c->u.call.name);
			bad = 1;
		} else if (isgrid && threads) {
			diag(p->diags, c->loc, "grid(...) must come before threads(...)");
			bad = 1;
		} else if (isgrid && c->u.call.nargs > 3) {
			diag(p->diags, c->loc, "grid(...) takes 1 to 3 extents, got %d",
			     c->u.call.nargs);
			bad = 1;
		} else if (!isgrid && c->u.call.nargs != 1) {
			diag(p->diags, c->loc, "threads(...) takes one value, got %d",
			     c->u.call.nargs);
			bad = 1;
		}
		if (isgrid && !grid)
			grid = c;
		else if (!isgrid && !threads)
			threads = c;
	}
	if (!bad && !grid) {
		diag(p->diags, name.loc, "kernel '%.*s' has no grid(...) clause", name.len, name.s);
		bad = 1;
	}
	if (!bad && !threads) {
		diag(p->diags, name.loc, "kernel '%.*s' has no threads(...) clause", name.len,
		     name.s);
		bad = 1;
	}
	if (bad)
		return NULL;
	g.head = grid->u.call.args;
	g.n = grid->u.call.nargs;
	return ast_kernel(p->arena, name, params, g, threads->u.call.args, body);
}

/* NAME: dtype[dims] WORD(exprs): WORD must be 'strides' */
Node *
parse_strides(Parser *p, Node *param, Tok kw, NodeList strides)
{
	if (kw.len != 7 || memcmp(kw.s, "strides", 7)) {
		diag(p->diags, kw.loc, "unexpected identifier '%.*s' after the type of parameter "
		     "'%s', expected strides(...), ',' or ')'",
		     kw.len > 32 ? 32 : kw.len, kw.s, param ? param->u.decl.name : "?");
		return NULL;
	}
	return ast_strides(p->arena, param, kw, strides);
}

Node *
parse_assign(Parser *p, Tok op, AstOp o, Node *lhs, Node *rhs)
{
	const Node *base = lhs && lhs->kind == N_INDEX ? lhs->u.index.base : lhs;

	if (!base || base->kind != N_IDENT) {
		diag(p->diags, lhs ? lhs->loc : op.loc,
		     "cannot assign to this expression; expected NAME or NAME[index, ...]");
		return NULL;
	}
	return ast_assign(p->arena, op, o, lhs, rhs);
}

Node *
parse_exprstmt(Parser *p, Node *e)
{
	if (e && e->kind != N_CALL) {
		diag(p->diags, e->loc, "expression statement is not a call or an assignment");
		return NULL;
	}
	return e;
}

/* count one more level of nesting; report when past max */
static int
toodeep(Parser *p, const Tok *t, int *depth, int max, const char *what)
{
	if (++*depth <= max)
		return 0;
	diag(p->diags, t->loc, "%s nested too deeply (more than %d levels)", what, max);
	return 1;
}

/* feed the parser until end of input; after the first error only lex, to report
 * every lexical error */
static void
drive(Parser *p, Lexer *lx, void *lp)
{
	Tok t;
	int k, feed = 1, parens = 0, braces = 0;

	do {
		k = lex_next(lx, &t);
		if (k == TK_ERROR)
			feed = 0;
		if (!feed)
			continue;
		/* bound the nesting before the parser's stack and later passes see it */
		if (k == TK_LPAREN || k == TK_LBRACKET)
			feed = !toodeep(p, &t, &parens, AST_MAXDEPTH, "expression");
		else if (k == TK_LBRACE)
			feed = !toodeep(p, &t, &braces, AST_MAXBLOCKS, "blocks");
		else if (k == TK_RPAREN || k == TK_RBRACKET)
			parens--;
		else if (k == TK_RBRACE)
			braces--;
		if (!feed)
			continue;
		p->last = t.loc;
		tl_parse(lp, k, t);
		if (p->failed || p->deep)
			feed = 0;
	} while (k != 0);
}

/* drive() with arena exhaustion caught: -1 if memory ran out */
static int
guarded(Parser *p, Lexer *lx, void *lp)
{
	jmp_buf jb;
	void *saved = p->arena->oom;

	if (setjmp(jb)) {
		p->arena->oom = saved;
		return -1;
	}
	p->arena->oom = &jb;
	drive(p, lx, lp);
	p->arena->oom = saved;
	return 0;
}

Node *
parse_program(Arena *a, Diags *d, const char *src, size_t len, const char *file)
{
	Parser p;
	Lexer lx;
	char *copy;
	void *lp;
	int nerr0;
	Loc none;

	if (!a || !d)
		return NULL;
	nerr0 = d->nerr;
	none = (Loc){arena_strdup(a, file ? file : "<input>"), 0, 0};
	if (!none.file)
		none.file = "<input>";
	if (!src)
		len = 0;
	/* columns and offsets are ints */
	if (len > AST_MAXSOURCE) {
		diag(d, none, "input too large (%zu bytes; the limit is %d bytes)", len,
		     AST_MAXSOURCE);
		return NULL;
	}
	copy = arena_alloc(a, len + 1);
	if (!copy) {
		diag(d, none, "out of memory");
		return NULL;
	}
	if (len)
		memcpy(copy, src, len);
	memset(&p, 0, sizeof p);
	p.arena = a;
	p.diags = d;
	lex_init(&lx, a, d, copy, len, none.file);
	lp = tl_parseAlloc(malloc, &p);
	if (!lp) {
		diag(d, none, "out of memory");
		return NULL;
	}
	if (guarded(&p, &lx, lp)) {
		tl_parseFree(lp, free);
		diag(d, none, "out of memory");
		return NULL;
	}
	tl_parseFree(lp, free);
	if (d->nerr > nerr0)
		return NULL;
	return p.top.head;
}
