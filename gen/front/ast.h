/*
 * ast.h: the syntax tree of a tile program, the tokens it is built from,
 * the lexer (grammar/lexer.re) and the parse entry point (gen/front/parse.c).
 * Nodes are a cproc-style tagged union allocated in an Arena; lists are
 * `next` chains. Names are NUL-terminated arena strings.
 */
#ifndef AST_H
#define AST_H

#include "tl.h"

/* Nesting limits: past them the parser reports "... nested too deeply". */
enum {
	AST_MAXDEPTH = 256,   /* expression tree depth, and ( [ nesting */
	AST_MAXBLOCKS = 256,  /* { } nesting */
	AST_MAXSOURCE = 1 << 30, /* bytes of source text */
	AST_MAXSYNTAX = 20,   /* syntax errors reported before the parser gives up */
};

/* ---- node kinds --------------------------------------------------------
 * X(kind, name): the name is what ast_dump prints.
 */
#define AST_KINDS(X) \
	/* top level */ \
	X(N_CONST, "const")     /* u.bind: const NAME = value */ \
	X(N_KERNEL, "kernel")   /* u.fn */ \
	X(N_FUNC, "func")       /* u.fn (grid, threads NULL) */ \
	X(N_PARAM, "param")     /* u.decl */ \
	/* statements */ \
	X(N_BUFFER, "buffer")   /* u.decl: shared/local NAME: dtype[dims]; */ \
	X(N_CALL, "call")       /* u.call: also a call statement NAME(args); */ \
	X(N_ASSIGN, "assign")   /* u.assign: lhs op= rhs; */ \
	X(N_LET, "let")         /* u.bind: let NAME = value; */ \
	X(N_FOR, "for")         /* u.loop */ \
	X(N_IF, "if")           /* u.cond: els NULL, a statement list, or one N_IF */ \
	/* expressions */ \
	X(N_INT, "int")         /* u.ival */ \
	X(N_FLOAT, "float")     /* u.fval */ \
	X(N_STR, "str")         /* u.str (escapes resolved) */ \
	X(N_BOOL, "bool")       /* u.bval: true/false */ \
	X(N_IDENT, "ident")     /* u.name */ \
	X(N_UNARY, "unary")     /* u.unary */ \
	X(N_BINARY, "binary")   /* u.bin */ \
	X(N_COND, "cond")       /* u.cond: cond ? then : els */ \
	X(N_INDEX, "index")     /* u.index: base[idx, ...] */ \
	X(N_SLICE, "slice")     /* u.slice: lo:hi, only directly inside an index list */ \
	X(N_NAMED, "named")     /* u.bind: name = value, only directly in call args */ \
	X(N_LIST, "list")       /* u.list: [a, b, ...], only as a call arg or named arg value */

typedef enum NodeKind {
#define X(k, s) k,
	AST_KINDS(X)
#undef X
	N_NKINDS
} NodeKind;

/* operators of N_UNARY, N_BINARY and compound N_ASSIGN; X(op, spelling) */
#define AST_OPS(X) \
	X(OP_NONE, "=")  /* plain assignment */ \
	X(OP_NEG, "neg") X(OP_NOT, "!") X(OP_BNOT, "~") \
	X(OP_MUL, "*") X(OP_DIV, "/") X(OP_MOD, "%") X(OP_ADD, "+") X(OP_SUB, "-") \
	X(OP_SHL, "<<") X(OP_SHR, ">>") \
	X(OP_LT, "<") X(OP_LE, "<=") X(OP_GT, ">") X(OP_GE, ">=") X(OP_EQ, "==") X(OP_NE, "!=") \
	X(OP_AND, "&") X(OP_XOR, "^") X(OP_OR, "|") X(OP_LAND, "&&") X(OP_LOR, "||")

typedef enum AstOp {
#define X(k, s) k,
	AST_OPS(X)
#undef X
	OP_NOPS
} AstOp;

typedef enum Scope {
	SCOPE_NONE,   /* kernel params: a global tensor, or a scalar */
	SCOPE_SHARED,
	SCOPE_LOCAL,
} Scope;

typedef struct Node Node;
struct Node {
	NodeKind kind;
	int depth;     /* expression height (1 for leaves); checked against AST_MAXDEPTH */
	Loc loc;       /* first token of the construct (operator token for binary ops) */
	Node *next;    /* next in the enclosing list */
	union {
		struct {            /* N_CONST, N_LET, N_NAMED */
			const char *name;
			Node *value;        /* N_NAMED: an expression or an N_LIST */
		} bind;
		struct {            /* N_KERNEL, N_FUNC */
			const char *name;
			Node *params;       /* N_PARAM list */
			int nparams;
			Node *grid;         /* N_KERNEL: 1..3 expressions (checked by the parser) */
			int ngrid;
			Node *threads;      /* N_KERNEL: one expression (never NULL for a kernel) */
			Node *body;         /* statement list, NULL if empty */
		} fn;
		struct {            /* N_PARAM, N_BUFFER */
			const char *name;
			Scope scope;        /* N_BUFFER: SHARED or LOCAL; N_PARAM: as written */
			const char *dtype;  /* element type name as written (f16, ...) */
			Loc dtloc;
			int tensor;         /* 1 if a [dims] list was written */
			Node *dims;         /* expression list (N_IDENT for symbolic sizes) */
			int ndim;
			/* N_PARAM: strides(...) as written (elements, one per dim: N_IDENT for a
			 * stride symbol, or a constant expression); has_strides 0 when absent */
			int has_strides;
			Node *strides;
			int nstrides;
			Loc strloc;         /* the 'strides' word */
		} decl;
		struct {            /* N_CALL */
			const char *name;   /* callee: always an identifier */
			Node *args;         /* expressions, N_NAMED, N_LIST */
			int nargs;
		} call;
		struct {            /* N_ASSIGN */
			AstOp op;           /* OP_NONE for '=', else OP_ADD/SUB/MUL/DIV */
			Node *lhs;          /* N_IDENT, or N_INDEX of an N_IDENT (parser-checked) */
			Node *rhs;
		} assign;
		struct {            /* N_FOR */
			Node *vars;         /* N_IDENT list, >= 1 */
			int nvars;
			Node *iter;         /* N_CALL: range(...), pipeline(...), parallel(...) */
			Node *body;
		} loop;
		struct {            /* N_IF, N_COND */
			Node *cond, *then, *els;
		} cond;
		int64_t ival;        /* N_INT, always >= 0 (minus is N_UNARY OP_NEG) */
		double fval;         /* N_FLOAT, finite, >= 0 */
		int bval;            /* N_BOOL */
		struct {             /* N_STR */
			const char *s;      /* NUL-terminated; may hold no NUL inside */
			size_t len;
		} str;
		const char *name;    /* N_IDENT */
		struct {
			AstOp op;
			Node *x;
		} unary;
		struct {
			AstOp op;
			Node *l, *r;
		} bin;
		struct {            /* N_INDEX */
			Node *base;         /* the indexed expression (usually N_IDENT) */
			Node *idx;          /* expressions and N_SLICE, >= 1 */
			int nidx;
		} index;
		struct {
			Node *lo, *hi;
		} slice;
		struct {
			Node *items;        /* expressions or nested N_LIST */
			int n;
		} list;
	} u;
};

/* a list under construction: appending is O(1) */
typedef struct NodeList {
	Node *head, *tail;
	int n;
} NodeList;

/* ---- tokens and the lexer (grammar/lexer.re) ---------------------------- */

/*
 * A token is a slice of the source buffer. kind is a TK_* code of
 * build/src/parser.h (0 at end of input). ival: value of an integer literal;
 * fval: of a float literal. String literal text (with quotes) is s/len;
 * the unescaped value is put in sval (arena copy).
 */
typedef struct Tok {
	int kind;
	const char *s;
	int len;
	Loc loc;
	int64_t ival;
	double fval;
	const char *sval;
	size_t slen;
} Tok;

typedef struct Lexer {
	Arena *arena;
	Diags *diags;
	const char *src;    /* NUL-terminated copy of the input */
	const char *cur, *end, *bol;
	const char *file;
	int line;
	int nerr;           /* lexical errors reported so far */
} Lexer;

/* src[len] must be a NUL byte (the sentinel); NULs before it are reported */
void lex_init(Lexer *lx, Arena *a, Diags *d, const char *src, size_t len, const char *file);
/* next token into *t; returns its kind: a TK_* code, 0 at end of input,
 * TK_ERROR after reporting a lexical error (lexing may continue) */
int lex_next(Lexer *lx, Tok *t);
/* a printable name for a token kind: "identifier", "';'", "'kernel'", ... */
const char *lex_tokname(int kind);

/* ---- constructors (ast.c); all allocate from the arena ------------------- */

void ast_append(NodeList *l, Node *n);     /* n may be NULL (ignored) or a chain */
Node *ast_new(Arena *a, NodeKind k, Loc loc);
Node *ast_int(Arena *a, Tok t);
Node *ast_float(Arena *a, Tok t);
Node *ast_str(Arena *a, Tok t);
Node *ast_bool(Arena *a, Tok t, int v);
Node *ast_ident(Arena *a, Tok t);
Node *ast_unary(Arena *a, Tok op, AstOp o, Node *x);
Node *ast_binary(Arena *a, Tok op, AstOp o, Node *l, Node *r);
Node *ast_condexpr(Arena *a, Tok q, Node *c, Node *x, Node *y);
Node *ast_call(Arena *a, Tok name, NodeList args);
Node *ast_index(Arena *a, Tok lbr, Node *base, NodeList idx);
Node *ast_slice(Arena *a, Tok colon, Node *lo, Node *hi);
Node *ast_named(Arena *a, Tok name, Node *value);
Node *ast_list(Arena *a, Tok lbr, NodeList items);
Node *ast_const(Arena *a, Tok name, Node *value);
Node *ast_let(Arena *a, Tok kw, Tok name, Node *value);
Node *ast_assign(Arena *a, Tok op, AstOp o, Node *lhs, Node *rhs);
Node *ast_for(Arena *a, Tok kw, NodeList vars, Node *iter, NodeList body);
Node *ast_if(Arena *a, Tok kw, Node *c, NodeList then, NodeList els);
Node *ast_decl(Arena *a, NodeKind k, Tok name, Scope sc, Tok dtype, NodeList *dims);
/* give param n the strides(...) clause that starts at word kw */
Node *ast_strides(Arena *a, Node *n, Tok kw, NodeList strides);
Node *ast_kernel(Arena *a, Tok name, NodeList params, NodeList grid, Node *threads,
		 NodeList body);
Node *ast_func(Arena *a, Tok name, NodeList params, NodeList body);

int ast_count(const Node *list);
const char *ast_kind_name(NodeKind k);
const char *ast_op_name(AstOp o);   /* "+", "<=", "neg", ... */
/* a stable S-expression text of a node list (top level or statements), one line per
 * declaration or statement, expressions inline; used by --dump=ast and the tests */
void ast_dump(Buf *b, const Node *list);
/* one expression (or any node) on one line, no newline */
void ast_dump_expr(Buf *b, const Node *n);

/* ---- the parser (parse.c) ------------------------------------------------ */

/*
 * Parse a whole source text. Returns the list of top-level nodes (N_CONST,
 * N_KERNEL, N_FUNC in source order), or NULL. NULL with no new error in d
 * means the input held no declaration (empty, or only comments and space);
 * "no kernel in input" is for sema to report. With errors: every lexical
 * error is reported (parsing stops at the first one); after a syntax error the parser
 * resumes at the next ';' or block, up to AST_MAXSYNTAX syntax errors. src needs no
 * terminating NUL and may hold any bytes; it is copied into the arena, and
 * nodes refer to the copy. file names the input in Locs ("<input>" if NULL); it is
 * copied too. Inputs over AST_MAXSOURCE bytes are refused with an error.
 */
Node *parse_program(Arena *a, Diags *d, const char *src, size_t len, const char *file);

#endif
