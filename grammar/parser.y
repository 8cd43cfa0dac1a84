/*
 * parser.y: the Lemon grammar of the tile language. Actions are one call to
 * an ast_* constructor (gen/front/ast.c) or a parse_* helper (gen/front/parse.c); all
 * meaning is checked later by sema. Tokens arrive by value from the re2c
 * lexer (grammar/lexer.re). The grammar must stay free of conflicts.
 */
%name tl_parse
%token_prefix TK_
%token_type {Tok}
%default_type {Node *}
%extra_context {Parser *p}
%stack_size 8192

%include {
/* Lemon's internal asserts and tracing cost ~30% of the parse time; the grammar is
 * tested through the driver instead */
#ifndef NDEBUG
#define NDEBUG 1
#endif
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

static Node *
bin(Parser *p, Tok o, AstOp op, Node *l, Node *r)
{
	return parse_depth(p, ast_binary(p->arena, o, op, l, r));
}
}

%syntax_error {
	int exp[5], nexp = 0, semi = 0, rbrace = 0, value = 0, i;
	YYACTIONTYPE st = yypParser->yytos->stateno;

	/* the tokens this state can act on: named in the message when few;
	 * else ';' if a statement could end here, '}' at the end of input,
	 * or "expression" where one could start */
	if (st <= YY_MAX_SHIFT) {
		for (i = 1; i < YYNTOKEN; i++) {
			if (yy_find_shift_action((YYCODETYPE)i, st) == YY_ERROR_ACTION)
				continue;
			if (nexp < (int)(sizeof exp / sizeof exp[0]))
				exp[nexp] = i;
			nexp++;
			semi |= i == TK_SEMI;
			rbrace |= i == TK_RBRACE;
			value |= i == TK_INT;
		}
	}
	if (nexp > 4 && (semi || (rbrace && yymajor == 0) || value)) {
		/* -1: "expression" */
		exp[0] = semi ? TK_SEMI : rbrace && yymajor == 0 ? TK_RBRACE : -1;
		nexp = 1;
	}
	(void)yymajor;
	parse_syntax_error(p, &TOKEN, exp, nexp);
}

%stack_overflow {
	parse_overflow(p);
}

/* recovery found nothing to resume from: give up */
%parse_failure {
	p->failed = 1;
}

/* tokens only the lexer produces */
%token ERROR.

/* operator precedence, lowest first */
%right QUESTION.
%left OROR.
%left ANDAND.
%left BAR.
%left CARET.
%left AMP.
%left EQ NE.
%left LT LE GT GE.
%left SHL SHR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right BANG TILDE UNARY.

%type block {NodeList}
%type stmts {NodeList}
%type params {NodeList}
%type paramlist {NodeList}
%type clauses {NodeList}
%type exprs {NodeList}
%type args {NodeList}
%type arglist {NodeList}
%type indices {NodeList}
%type listitems {NodeList}
%type idlist {NodeList}
%type constlist {NodeList}
%type dims {NodeList}
%type scope {Scope}
%type elsepart {NodeList}

/* ---- top level ------------------------------------------------------- */

program ::= decls.

decls ::= .
decls ::= decls decl(D).                      { ast_append(&p->top, D); }

decl(A) ::= CONST constlist(L) SEMI.           { A = L.head; }
/* after a syntax error, resume at the next ';' or block */
decl(A) ::= error SEMI.                        { A = NULL; }
decl(A) ::= error block.                       { A = NULL; }
decl(A) ::= KERNEL ID(N) LPAREN params(P) RPAREN clauses(C) block(B).
                                              { A = parse_kernel(p, N, P, C, B); }
decl(A) ::= FUNC ID(N) LPAREN params(P) RPAREN block(B).
                                              { A = ast_func(p->arena, N, P, B); }

constlist(A) ::= constdef(D).                 { A = (NodeList){0}; ast_append(&A, D); }
constlist(A) ::= constlist(L) COMMA constdef(D). { A = L; ast_append(&A, D); }
constdef(A) ::= ID(N) ASSIGN expr(E).         { A = ast_const(p->arena, N, E); }

params(A) ::= .                               { A = (NodeList){0}; }
params(A) ::= paramlist(L).                   { A = L; }
paramlist(A) ::= param(X).                    { A = (NodeList){0}; ast_append(&A, X); }
paramlist(A) ::= paramlist(L) COMMA param(X). { A = L; ast_append(&A, X); }
param(A) ::= ID(N) COLON scope(S) ID(T) dims(D).
                                    { A = ast_decl(p->arena, N_PARAM, N, S, T, D.n ? &D : NULL); }
/* strides(...) after the type: 'strides' is not reserved (parse_strides checks the word) */
param(A) ::= ID(N) COLON scope(S) ID(T) dims(D) ID(K) LPAREN exprs(L) RPAREN.
                   { A = parse_strides(p, ast_decl(p->arena, N_PARAM, N, S, T, D.n ? &D : NULL), K, L); }

scope(A) ::= .                                { A = SCOPE_NONE; }
scope(A) ::= SHARED.                          { A = SCOPE_SHARED; }
scope(A) ::= LOCAL.                           { A = SCOPE_LOCAL; }

dims(A) ::= .                                 { A = (NodeList){0}; }
dims(A) ::= LBRACKET exprs(L) RBRACKET.       { A = L; }

/* grid(...) and threads(...): order, count and arity are checked by parse_kernel */
clauses(A) ::= .                              { A = (NodeList){0}; }
clauses(A) ::= clauses(L) clause(C).          { A = L; ast_append(&A, C); }
clause(A) ::= GRID(K) LPAREN exprs(L) RPAREN.    { A = ast_call(p->arena, K, L); }
clause(A) ::= THREADS(K) LPAREN exprs(L) RPAREN. { A = ast_call(p->arena, K, L); }

/* ---- statements ------------------------------------------------------- */

block(A) ::= LBRACE stmts(L) RBRACE.          { A = L; }

stmts(A) ::= .                                { A = (NodeList){0}; }
stmts(A) ::= stmts(L) stmt(S).                { A = L; ast_append(&A, S); }

stmt(A) ::= SHARED ID(N) COLON ID(T) LBRACKET exprs(D) RBRACKET SEMI.
                                  { A = ast_decl(p->arena, N_BUFFER, N, SCOPE_SHARED, T, &D); }
stmt(A) ::= LOCAL ID(N) COLON ID(T) LBRACKET exprs(D) RBRACKET SEMI.
                                  { A = ast_decl(p->arena, N_BUFFER, N, SCOPE_LOCAL, T, &D); }
stmt(A) ::= postfix(E) SEMI.                  { A = parse_exprstmt(p, E); }
stmt(A) ::= postfix(L) ASSIGN(O) expr(R) SEMI.  { A = parse_assign(p, O, OP_NONE, L, R); }
stmt(A) ::= postfix(L) PLUSEQ(O) expr(R) SEMI.  { A = parse_assign(p, O, OP_ADD, L, R); }
stmt(A) ::= postfix(L) MINUSEQ(O) expr(R) SEMI. { A = parse_assign(p, O, OP_SUB, L, R); }
stmt(A) ::= postfix(L) STAREQ(O) expr(R) SEMI.  { A = parse_assign(p, O, OP_MUL, L, R); }
stmt(A) ::= postfix(L) SLASHEQ(O) expr(R) SEMI. { A = parse_assign(p, O, OP_DIV, L, R); }
stmt(A) ::= LET(K) ID(N) ASSIGN expr(E) SEMI. { A = ast_let(p->arena, K, N, E); }
stmt(A) ::= FOR(K) idlist(V) IN call(C) block(B). { A = ast_for(p->arena, K, V, C, B); }
stmt(A) ::= ifstmt(S).                        { A = S; }
stmt(A) ::= error SEMI.                       { A = NULL; }
stmt(A) ::= error block.                      { A = NULL; }

ifstmt(A) ::= IF(K) LPAREN expr(C) RPAREN block(T) elsepart(E).
                                              { A = ast_if(p->arena, K, C, T, E); }
elsepart(A) ::= .                             { A = (NodeList){0}; }
elsepart(A) ::= ELSE block(B).                { A = B; }
elsepart(A) ::= ELSE ifstmt(S).               { A = (NodeList){0}; ast_append(&A, S); }

idlist(A) ::= ID(N).
                                    { A = (NodeList){0}; ast_append(&A, ast_ident(p->arena, N)); }
idlist(A) ::= idlist(L) COMMA ID(N).          { A = L; ast_append(&A, ast_ident(p->arena, N)); }

/* ---- expressions ------------------------------------------------------ */

exprs(A) ::= expr(E).                         { A = (NodeList){0}; ast_append(&A, E); }
exprs(A) ::= exprs(L) COMMA expr(E).          { A = L; ast_append(&A, E); }

expr(A) ::= postfix(E).                       { A = E; }
expr(A) ::= expr(C) QUESTION(Q) expr(X) COLON expr(Y). [QUESTION]
                                    { A = parse_depth(p, ast_condexpr(p->arena, Q, C, X, Y)); }
expr(A) ::= expr(L) OROR(O) expr(R).    { A = bin(p, O, OP_LOR, L, R); }
expr(A) ::= expr(L) ANDAND(O) expr(R).  { A = bin(p, O, OP_LAND, L, R); }
expr(A) ::= expr(L) BAR(O) expr(R).     { A = bin(p, O, OP_OR, L, R); }
expr(A) ::= expr(L) CARET(O) expr(R).   { A = bin(p, O, OP_XOR, L, R); }
expr(A) ::= expr(L) AMP(O) expr(R).     { A = bin(p, O, OP_AND, L, R); }
expr(A) ::= expr(L) EQ(O) expr(R).      { A = bin(p, O, OP_EQ, L, R); }
expr(A) ::= expr(L) NE(O) expr(R).      { A = bin(p, O, OP_NE, L, R); }
expr(A) ::= expr(L) LT(O) expr(R).      { A = bin(p, O, OP_LT, L, R); }
expr(A) ::= expr(L) LE(O) expr(R).      { A = bin(p, O, OP_LE, L, R); }
expr(A) ::= expr(L) GT(O) expr(R).      { A = bin(p, O, OP_GT, L, R); }
expr(A) ::= expr(L) GE(O) expr(R).      { A = bin(p, O, OP_GE, L, R); }
expr(A) ::= expr(L) SHL(O) expr(R).     { A = bin(p, O, OP_SHL, L, R); }
expr(A) ::= expr(L) SHR(O) expr(R).     { A = bin(p, O, OP_SHR, L, R); }
expr(A) ::= expr(L) PLUS(O) expr(R).    { A = bin(p, O, OP_ADD, L, R); }
expr(A) ::= expr(L) MINUS(O) expr(R).   { A = bin(p, O, OP_SUB, L, R); }
expr(A) ::= expr(L) STAR(O) expr(R).    { A = bin(p, O, OP_MUL, L, R); }
expr(A) ::= expr(L) SLASH(O) expr(R).   { A = bin(p, O, OP_DIV, L, R); }
expr(A) ::= expr(L) PERCENT(O) expr(R). { A = bin(p, O, OP_MOD, L, R); }
expr(A) ::= MINUS(O) expr(X). [UNARY]   { A = parse_depth(p, ast_unary(p->arena, O, OP_NEG, X)); }
expr(A) ::= BANG(O) expr(X).            { A = parse_depth(p, ast_unary(p->arena, O, OP_NOT, X)); }
expr(A) ::= TILDE(O) expr(X).           { A = parse_depth(p, ast_unary(p->arena, O, OP_BNOT, X)); }

postfix(A) ::= primary(E).                    { A = E; }
postfix(A) ::= call(E).                       { A = E; }
postfix(A) ::= postfix(B) LBRACKET(K) indices(L) RBRACKET.
                                              { A = parse_depth(p, ast_index(p->arena, K, B, L)); }

call(A) ::= ID(N) LPAREN args(L) RPAREN.      { A = parse_depth(p, ast_call(p->arena, N, L)); }

primary(A) ::= ID(T).                         { A = ast_ident(p->arena, T); }
primary(A) ::= INT(T).                        { A = ast_int(p->arena, T); }
primary(A) ::= FLOAT(T).                      { A = ast_float(p->arena, T); }
primary(A) ::= STRING(T).                     { A = ast_str(p->arena, T); }
primary(A) ::= TRUE(T).                       { A = ast_bool(p->arena, T, 1); }
primary(A) ::= FALSE(T).                      { A = ast_bool(p->arena, T, 0); }
primary(A) ::= LPAREN expr(E) RPAREN.         { A = E; }

indices(A) ::= index(E).                      { A = (NodeList){0}; ast_append(&A, E); }
indices(A) ::= indices(L) COMMA index(E).     { A = L; ast_append(&A, E); }
index(A) ::= expr(E).                         { A = E; }
index(A) ::= expr(L) COLON(K) expr(R).        { A = parse_depth(p, ast_slice(p->arena, K, L, R)); }

args(A) ::= .                                 { A = (NodeList){0}; }
args(A) ::= arglist(L).                       { A = L; }
arglist(A) ::= arg(E).                        { A = (NodeList){0}; ast_append(&A, E); }
arglist(A) ::= arglist(L) COMMA arg(E).       { A = L; ast_append(&A, E); }
arg(A) ::= argval(E).                         { A = E; }
arg(A) ::= ID(N) ASSIGN argval(E).            { A = parse_depth(p, ast_named(p->arena, N, E)); }
argval(A) ::= expr(E).                        { A = E; }
argval(A) ::= list(E).                        { A = E; }

list(A) ::= LBRACKET(K) RBRACKET.             { A = ast_list(p->arena, K, (NodeList){0}); }
list(A) ::= LBRACKET(K) listitems(L) RBRACKET. { A = parse_depth(p, ast_list(p->arena, K, L)); }
listitems(A) ::= argval(E).                   { A = (NodeList){0}; ast_append(&A, E); }
listitems(A) ::= listitems(L) COMMA argval(E). { A = L; ast_append(&A, E); }
