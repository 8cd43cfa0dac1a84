/*
 * lexer.re: the re2c tokenizer of the tile language. It scans a
 * NUL-terminated copy of the source (the final NUL is the sentinel; any
 * other NUL is reported) and returns Lemon's TK_* codes. Lexical errors are
 * reported here with their line and column; the bad text is skipped and
 * TK_ERROR returned, so that every lexical error of a file is reported.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "parser.h"

void
lex_init(Lexer *lx, Arena *a, Diags *d, const char *src, size_t len, const char *file)
{
	memset(lx, 0, sizeof *lx);
	lx->arena = a;
	lx->diags = d;
	lx->src = src;
	lx->cur = lx->bol = src;
	lx->end = src + len;
	lx->file = file ? file : "<input>";
	lx->line = 1;
	/* a UTF-8 byte-order mark at the start is skipped; columns count from after it */
	if (len >= 3 && !memcmp(src, "\xef\xbb\xbf", 3))
		lx->cur = lx->bol = src + 3;
}

static Loc
here(Lexer *lx, const char *s)
{
	return (Loc){lx->file, lx->line, (int)(s - lx->bol) + 1};
}

static int
lexerr(Lexer *lx, Loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(lx->diags, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
	lx->nerr++;
	return TK_ERROR;
}

/* a byte as it appears in messages: 'x', or '\xNN' when not printable */
static const char *
showc(char *buf, unsigned char c)
{
	if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
		snprintf(buf, 8, "'%c'", c);
	else
		snprintf(buf, 8, "'\\x%02x'", c);
	return buf;
}

static int
isnumtail(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '.';
}

/*
 * A number followed at once by letters, digits, '_' or '.' (12abc, 0x, 1e,
 * 1.2.3, 08.) is one bad token, reported whole.
 */
static int
badtail(Lexer *lx, Tok *t)
{
	const char *q = lx->cur;

	if (!isnumtail((unsigned char)*q))
		return 0;
	while (isnumtail((unsigned char)*q))
		q++;
	lx->cur = q;
	t->len = (int)(q - t->s);
	lexerr(lx, t->loc, "invalid number '%.*s%s'", t->len > 40 ? 40 : t->len, t->s,
	       t->len > 40 ? "..." : "");
	return 1;
}

static int
integer(Lexer *lx, Tok *t, int base)
{
	const char *q = t->s + (base == 16 ? 2 : 0);
	int64_t v = 0;
	int over = 0;

	if (badtail(lx, t))
		return TK_ERROR;
	t->len = (int)(lx->cur - t->s);
	for (; q < lx->cur; q++) {
		int c = tolower((unsigned char)*q), dg = isdigit(c) ? c - '0' : c - 'a' + 10;

		if (ck_mul(v, base, &v) || ck_add(v, dg, &v))
			over = 1;
	}
	if (over)
		return lexerr(lx, t->loc, "integer literal '%.*s%s' does not fit in 64 bits",
			      t->len > 40 ? 40 : t->len, t->s, t->len > 40 ? "..." : "");
	t->ival = v;
	return TK_INT;
}

static int
floating(Lexer *lx, Tok *t)
{
	char *tmp;

	if (badtail(lx, t))
		return TK_ERROR;
	t->len = (int)(lx->cur - t->s);
	tmp = arena_strndup(lx->arena, t->s, (size_t)t->len);
	t->fval = tmp ? strtod(tmp, NULL) : 0;
	if (isinf(t->fval))
		return lexerr(lx, t->loc, "float literal '%.*s%s' is out of range",
			      t->len > 40 ? 40 : t->len, t->s, t->len > 40 ? "..." : "");
	return TK_FLOAT;
}

/* the value of a string literal (quotes included in t->s); escapes \\ \" \n \t */
static int
string(Lexer *lx, Tok *t)
{
	const char *q = t->s + 1, *e = t->s + t->len - 1;
	char *v = arena_alloc(lx->arena, (size_t)t->len);
	size_t n = 0;
	int bad = 0;

	if (!v)
		return lexerr(lx, t->loc, "out of memory");
	for (; q < e; q++) {
		char c = *q;

		if (c == '\\') {
			switch (*++q) {
			case '\\': c = '\\'; break;
			case '"': c = '"'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			default:
				if (isgraph((unsigned char)*q))
					lexerr(lx, here(lx, q - 1),
					       "invalid escape '\\%c' in string", *q);
				else
					lexerr(lx, here(lx, q - 1), "invalid escape in string");
				bad = 1;
				continue;
			}
		}
		v[n++] = c;
	}
	v[n] = 0;
	t->sval = v;
	t->slen = n;
	return bad ? TK_ERROR : TK_STRING;
}

/* skip a block comment whose opening was just read; s is its start */
static int
blockcomment(Lexer *lx, const char *s)
{
	Loc start = here(lx, s);
	const char *q = lx->cur;

	for (; q < lx->end; q++) {
		if (q[0] == '*' && q[1] == '/') {
			lx->cur = q + 2;
			return 0;
		}
		if (*q == '\n') {
			lx->line++;
			lx->bol = q + 1;
		} else if (*q == 0) {
			lexerr(lx, here(lx, q), "NUL byte in source");
		}
	}
	lx->cur = q;
	return lexerr(lx, start, "unterminated comment");
}

/* skip a line comment whose "//" was just read */
static void
linecomment(Lexer *lx)
{
	const char *q = lx->cur;

	for (; q < lx->end && *q != '\n'; q++)
		if (*q == 0)
			lexerr(lx, here(lx, q), "NUL byte in source");
	lx->cur = q;
}

int
lex_next(Lexer *lx, Tok *t)
{
	const char *mk;
	int k;

	(void)mk;
	memset(t, 0, sizeof *t);
	for (;;) {
		t->s = lx->cur;
		t->loc = here(lx, lx->cur);
		/*!re2c
		re2c:api:style = free-form;
		re2c:define:YYCTYPE = "unsigned char";
		re2c:define:YYCURSOR = "lx->cur";
		re2c:define:YYMARKER = "mk";
		re2c:yyfill:enable = 0;

		D = [0-9];
		H = [0-9a-fA-F];
		E = [eE] [+-]? D+;
		SCHAR = [^"\\\n\x00] | "\\" [^\n\x00];

		"\x00" {
			if (lx->cur - 1 >= lx->end) {
				lx->cur = lx->end;
				k = 0;
				break;
			}
			lexerr(lx, t->loc, "NUL byte in source");
			k = TK_ERROR;
			break;
		}
		"\n"      { lx->line++; lx->bol = lx->cur; continue; }
		[ \t\r\f\v]+ { continue; }
		"//"      { linecomment(lx); continue; }
		"/*"      { if (blockcomment(lx, t->s)) { k = TK_ERROR; break; } continue; }

		"const"   { k = TK_CONST; break; }
		"kernel"  { k = TK_KERNEL; break; }
		"func"    { k = TK_FUNC; break; }
		"grid"    { k = TK_GRID; break; }
		"threads" { k = TK_THREADS; break; }
		"shared"  { k = TK_SHARED; break; }
		"local"   { k = TK_LOCAL; break; }
		"for"     { k = TK_FOR; break; }
		"in"      { k = TK_IN; break; }
		"if"      { k = TK_IF; break; }
		"else"    { k = TK_ELSE; break; }
		"let"     { k = TK_LET; break; }
		"true"    { k = TK_TRUE; break; }
		"false"   { k = TK_FALSE; break; }
		[A-Za-z_][A-Za-z0-9_]* { k = TK_ID; break; }

		D+               { k = integer(lx, t, 10); break; }
		"0" [xX] H+      { k = integer(lx, t, 16); break; }
		D+ "." D+ E? | "." D+ E? | D+ E { k = floating(lx, t); break; }

		["] SCHAR* ["]   { t->len = (int)(lx->cur - t->s); k = string(lx, t); break; }
		["] SCHAR*       { k = lexerr(lx, t->loc, "unterminated string"); break; }

		"("  { k = TK_LPAREN; break; }
		")"  { k = TK_RPAREN; break; }
		"["  { k = TK_LBRACKET; break; }
		"]"  { k = TK_RBRACKET; break; }
		"{"  { k = TK_LBRACE; break; }
		"}"  { k = TK_RBRACE; break; }
		","  { k = TK_COMMA; break; }
		";"  { k = TK_SEMI; break; }
		":"  { k = TK_COLON; break; }
		"?"  { k = TK_QUESTION; break; }
		"="  { k = TK_ASSIGN; break; }
		"+=" { k = TK_PLUSEQ; break; }
		"-=" { k = TK_MINUSEQ; break; }
		"*=" { k = TK_STAREQ; break; }
		"/=" { k = TK_SLASHEQ; break; }
		"||" { k = TK_OROR; break; }
		"&&" { k = TK_ANDAND; break; }
		"|"  { k = TK_BAR; break; }
		"^"  { k = TK_CARET; break; }
		"&"  { k = TK_AMP; break; }
		"==" { k = TK_EQ; break; }
		"!=" { k = TK_NE; break; }
		"<"  { k = TK_LT; break; }
		"<=" { k = TK_LE; break; }
		">"  { k = TK_GT; break; }
		">=" { k = TK_GE; break; }
		"<<" { k = TK_SHL; break; }
		">>" { k = TK_SHR; break; }
		"+"  { k = TK_PLUS; break; }
		"-"  { k = TK_MINUS; break; }
		"*"  { k = TK_STAR; break; }
		"/"  { k = TK_SLASH; break; }
		"%"  { k = TK_PERCENT; break; }
		"!"  { k = TK_BANG; break; }
		"~"  { k = TK_TILDE; break; }

		[\x80-\xff]+ {
			char buf[8];

			k = lexerr(lx, t->loc, "invalid character %s (non-ASCII)",
				   showc(buf, (unsigned char)*t->s));
			break;
		}
		* {
			char buf[8];

			k = lexerr(lx, t->loc, "invalid character %s",
				   showc(buf, (unsigned char)*t->s));
			break;
		}
		*/
	}
	t->kind = k;
	t->len = (int)(lx->cur - t->s);
	return k;
}

const char *
lex_tokname(int kind)
{
	switch (kind) {
	case 0: return "end of input";
	case TK_ERROR: return "invalid token";
	case TK_ID: return "identifier";
	case TK_INT: return "integer";
	case TK_FLOAT: return "number";
	case TK_STRING: return "string";
	case TK_CONST: return "'const'";
	case TK_KERNEL: return "'kernel'";
	case TK_FUNC: return "'func'";
	case TK_GRID: return "'grid'";
	case TK_THREADS: return "'threads'";
	case TK_SHARED: return "'shared'";
	case TK_LOCAL: return "'local'";
	case TK_FOR: return "'for'";
	case TK_IN: return "'in'";
	case TK_IF: return "'if'";
	case TK_ELSE: return "'else'";
	case TK_LET: return "'let'";
	case TK_TRUE: return "'true'";
	case TK_FALSE: return "'false'";
	case TK_LPAREN: return "'('";
	case TK_RPAREN: return "')'";
	case TK_LBRACKET: return "'['";
	case TK_RBRACKET: return "']'";
	case TK_LBRACE: return "'{'";
	case TK_RBRACE: return "'}'";
	case TK_COMMA: return "','";
	case TK_SEMI: return "';'";
	case TK_COLON: return "':'";
	case TK_QUESTION: return "'?'";
	case TK_ASSIGN: return "'='";
	case TK_PLUSEQ: return "'+='";
	case TK_MINUSEQ: return "'-='";
	case TK_STAREQ: return "'*='";
	case TK_SLASHEQ: return "'/='";
	case TK_OROR: return "'||'";
	case TK_ANDAND: return "'&&'";
	case TK_BAR: return "'|'";
	case TK_CARET: return "'^'";
	case TK_AMP: return "'&'";
	case TK_EQ: return "'=='";
	case TK_NE: return "'!='";
	case TK_LT: return "'<'";
	case TK_LE: return "'<='";
	case TK_GT: return "'>'";
	case TK_GE: return "'>='";
	case TK_SHL: return "'<<'";
	case TK_SHR: return "'>>'";
	case TK_PLUS: return "'+'";
	case TK_MINUS: return "'-'";
	case TK_STAR: return "'*'";
	case TK_SLASH: return "'/'";
	case TK_PERCENT: return "'%'";
	case TK_BANG: return "'!'";
	case TK_TILDE: return "'~'";
	}
	return "token";
}
