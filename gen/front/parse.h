/*
 * parse.h: private to the front end: the state shared by the Lemon grammar
 * (grammar/parser.y), its actions' helpers and the parse driver (parse.c).
 * Library users include ast.h only.
 */
#ifndef PARSE_H
#define PARSE_H

#include "ast.h"

typedef struct Parser {
	Arena *arena;
	Diags *diags;
	NodeList top;        /* top-level declarations, in order */
	int failed;          /* the parser gave up: stop feeding tokens */
	int nsyntax;         /* syntax errors reported */
	int deep;            /* "nested too deeply" was reported */
	Loc last;            /* location of the token being parsed */
} Parser;

/* Lemon's entry points (build/src/parser.c; %name tl_parse) */
void *tl_parseAlloc(void *(*alloc)(size_t), Parser *p);
void tl_parse(void *lp, int kind, Tok tok);
void tl_parseFree(void *lp, void (*dealloc)(void *));

/* helpers called from grammar actions (parse.c) */
Node *parse_depth(Parser *p, Node *n);
Node *parse_kernel(Parser *p, Tok name, NodeList params, NodeList clauses, NodeList body);
Node *parse_strides(Parser *p, Node *param, Tok kw, NodeList strides);
Node *parse_assign(Parser *p, Tok op, AstOp o, Node *lhs, Node *rhs);
Node *parse_exprstmt(Parser *p, Node *e);
void parse_syntax_error(Parser *p, const Tok *t, const int *expected, int nexpected);
void parse_overflow(Parser *p);

#endif
