/*
 * progen.c: random valid tile programs (progen.h). A program is built over a
 * small geometry: up to four axes, each with a size (a symbol or a constant),
 * a tile extent and a kind (tiled over the grid, whole, or walked by a K
 * loop). Tensors are lists of axes; shared and local buffers are tiles over
 * axes; a parallel nest runs over the tile of its targets. The generator
 * tracks which buffers are fully written (only those are read), which
 * tensors are outputs (written by one statement, never read by another
 * block), and for every value whether it is exact (no math library, no sum
 * reduction or gemm behind it) and a bound on its magnitude; comparisons,
 * integer casts and conditions see exact values only, divisors are never
 * zero, math functions get arguments in their domain.
 *
 * Library code: all state is in a G on the stack, strings in an arena.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "progen.h"

enum { MAXAX = 6, MAXT = 10, MAXB = 28, MAXLET = 48, MAXLV = 8, MAXLEAF = 96 };
enum { AX_GRID, AX_WHOLE, AX_LOOP };
/* R_SCRATCH: written once by a top-level statement, then read back by later ones within the
 * block's own tile (identity or reversed indices: elements other threads wrote) */
enum { R_IN, R_OUT, R_INOUT, R_SCRATCH };
enum { CF, CI, CB };

typedef struct Axis {
	int kind;
	char size[16];     /* the dim as written: "M" or "200" */
	int sym;           /* index into G.sym, or -1 */
	int64_t csize;     /* the constant size (sym < 0) */
	int tile;
	char tiletxt[8];   /* "64", or a const name */
	int gdim;          /* AX_GRID: 0 bx, 1 by, 2 bz */
	char origin[48];   /* the tile's first index; "" when out of scope (a K axis outside its loop) */
	int assumed;       /* assume(size % tile == 0) */
} Axis;

typedef struct Sym {
	char name[8];
	int64_t val[3];
} Sym;

/* a tensor dim: an axis; whole: a constant dim of the axis' tile extent, indexed from 0 */
typedef struct TDim {
	int ax, whole;
} TDim;

typedef struct Ten {
	char name[12];
	DType t;
	int n;
	TDim d[3];
	int role;
	int written;       /* OUT/INOUT: its writer was generated */
	int inex;          /* R_SCRATCH: the flags and bound of the values written */
	double mag;
} Ten;

typedef struct Bf {
	char name[12];
	DType t;
	int shared;
	int n;
	int ax[3];         /* the axis of each dim; -1: a unit dim */
	int def;           /* every element written */
	int inex;          /* contents depend on an order of evaluation or a math library */
	double mag;        /* a bound on |element| */
	int gemm;          /* a gemm operand or accumulator: no random writes */
	int lay;           /* has an annotate_layout */
} Bf;

typedef struct Let {
	char name[12];
	DType t;
	int inex, lit;
	double mag;
} Let;

typedef struct LV {
	char name[12];
	int64_t ext;
} LV;

typedef struct Nest {
	int serial;
	int n, ax[3];
	char var[3][8];
	int tb[4], ntb;              /* target buffers */
	int tt;                      /* target tensor, or -1 */
	unsigned char wrote[MAXB];   /* target written at its identity index so far in the body */
	unsigned char noread[MAXB];  /* target written elsewhere: not to be read */
	unsigned char odd[MAXB];     /* a local that may be indexed by other than the nest's variables */
} Nest;

typedef struct Ev {
	const char *s;
	DType t;
	int inex, lit;
	double mag;
} Ev;

typedef struct G {
	uint64_t rs;
	Arena a;
	unsigned f;
	int maxops, maxdepth;
	Buf body, decl;
	int ind;
	Axis ax[MAXAX];
	int nax;
	Sym sym[MAXAX];
	int nsym;
	Ten t[MAXT];
	int nt;
	Bf b[MAXB];
	int nb;
	Let let[MAXLET];
	int nlet;
	LV lv[MAXLV];
	int nlv;
	Nest *nest;
	int threads;
	const char *kind;
	char kname[16];
	int has_alpha, has_n;
	char alpha_name[8], n_name[8];
	int uniq;
	int depth;                   /* statement nesting (if, loops) */
	int consts;                  /* tile sizes are printed as const names */
	Buf cbuf;                    /* the const line */
	char assume[4][64];
	int nassume;
	int ngrid;
	char grid[3][64];
	int kax;                     /* the K axis, or -1 */
	int kopen;                   /* inside the K loop */
	int kloops;                  /* K loops generated */
	int nameidx;
	int in_if;
	int64_t smem;                /* bytes of shared buffers declared */
	DType fit;                   /* DT_NONE, or the output type the values stored now must suit */
} G;

/* ---- random numbers: splitmix64 ---------------------------------------------------------- */

static uint64_t
rnd_next(uint64_t *rs)
{
	uint64_t z = (*rs += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t
rnd64(G *g)
{
	uint64_t z = (g->rs += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int
rn(G *g, int n)
{
	return n <= 1 ? 0 : (int)(rnd64(g) % (uint64_t)n);
}

static int
pct(G *g, int p)
{
	return rn(g, 100) < p;
}

static int
has(const G *g, unsigned f)
{
	return (g->f & f) != 0;
}

static char *
fmt(G *g, const char *f, ...) TL_PRINTF(2, 3);

static char *
fmt(G *g, const char *f, ...)
{
	va_list ap;
	Buf b;
	char *s;

	buf_init(&b);
	va_start(ap, f);
	buf_vprintf(&b, f, ap);
	va_end(ap);
	s = arena_strdup(&g->a, buf_str(&b));
	buf_free(&b);
	return s;
}

static void
line(G *g, const char *f, ...) TL_PRINTF(2, 3);

static void
line(G *g, const char *f, ...)
{
	va_list ap;
	int i;

	for (i = 0; i < g->ind; i++)
		buf_puts(&g->body, "    ");
	va_start(ap, f);
	buf_vprintf(&g->body, f, ap);
	va_end(ap);
	buf_putc(&g->body, '\n');
}

static int
isprime(int64_t v)
{
	int64_t d;

	if (v < 2)
		return 0;
	for (d = 2; d * d <= v; d++)
		if (v % d == 0)
			return 0;
	return 1;
}

static int64_t
prime_near(G *g, int64_t lo, int64_t hi)
{
	int64_t v;

	if (hi < lo)
		hi = lo;
	v = lo + rn(g, (int)(hi - lo + 1));
	while (!isprime(v))
		v++;
	return v;
}

/* ---- types ------------------------------------------------------------------------------- */

static int
isflt(DType t)
{
	return dtype_is_float(t);
}

static int
isnarrowint(DType t)
{
	return t == DT_I8 || t == DT_U8;
}

/*
 * Inexact values carry where they were rounded: bit 1 computed (f32), 2 rounded to f16, 4 to
 * bf16, 8 to fp8_e4m3, 16 to fp8_e5m2. An output compares within the tolerance of its own
 * type, so an inexact value may reach an output only if it was never rounded to a narrower
 * type than the output's (f16(gemm) stored into an f32 tensor is 1 f16 ulp off, beyond f32's).
 */
static unsigned
tbit(DType t)
{
	switch (t) {
	case DT_F16: return 2;
	case DT_BF16: return 4;
	case DT_FP8E4M3: return 8;
	case DT_FP8E5M2: return 16;
	default: return 1;
	}
}

/* inexact flags after a rounding to t */
static int
inex_to(int inex, DType t)
{
	return inex ? inex | (int)tbit(t) : 0;
}

/* may a value with these flags be stored into an output of type t? */
static int
inex_fits(int inex, DType t)
{
	if (!inex)
		return 1;
	if (!isflt(t))
		return 0;
	return !((unsigned)inex & ~(2 * tbit(t) - 1));
}

static double
inmag(DType t)
{
	switch (t) {
	case DT_I8: return 128;
	case DT_U8: return 255;
	case DT_I32: return 2147483648.0;
	case DT_BOOL: return 1;
	default: return 8;
	}
}

static DType
rand_type(G *g, int want_float)
{
	DType v[12];
	int n = 0;

	v[n++] = DT_F32;
	v[n++] = DT_F32;
	if (has(g, PG_HALF))
		v[n++] = DT_F16, v[n++] = DT_BF16;
	if (has(g, PG_FP8))
		v[n++] = rn(g, 2) ? DT_FP8E4M3 : DT_FP8E5M2;
	if (has(g, PG_INT) && !want_float)
		v[n++] = DT_I32, v[n++] = DT_I32, v[n++] = DT_I8, v[n++] = DT_U8;
	return v[rn(g, n)];
}

/* a type of the same class as t (float or integer) */
static DType
rand_like(G *g, DType t)
{
	if (isflt(t))
		return rand_type(g, 1);
	if (!has(g, PG_INT))
		return t;
	{
		static const DType iv[] = {DT_I32, DT_I32, DT_I8, DT_U8};

		return iv[rn(g, 4)];
	}
}

/* ---- names --------------------------------------------------------------------------------- */

static const char *const bufnames[] = {
	"x", "y", "acc", "t", "frag", "sa", "sb", "w", "m", "z", "p", "o", "h", "g",
	"e", "d", "f", "u", "tmp", "buf", "lo", "hi", "out_", "tile", "row", "col", "r2", "q2",
};

static void
newname(G *g, char *dst, size_t n)
{
	snprintf(dst, n, "%s", bufnames[g->nameidx % (int)countof(bufnames)]);
	g->nameidx++;
}

/* ---- axes and origins --------------------------------------------------------------------- */

static Axis *
AX(G *g, int a)
{
	return &g->ax[a];
}

static int
tileof(G *g, int a)
{
	return a < 0 ? 1 : g->ax[a].tile;
}

static const char *
ttxt(G *g, int a)
{
	return g->ax[a].tiletxt;
}

/* origin of tensor dim d of T; NULL when out of scope */
static const char *
dorigin(G *g, const Ten *T, int d)
{
	const Axis *A = AX(g, T->d[d].ax);

	if (T->d[d].whole || A->kind == AX_WHOLE)
		return "0";
	return A->origin[0] ? A->origin : NULL;
}

static int
ten_in_scope(G *g, const Ten *T)
{
	int d;

	for (d = 0; d < T->n; d++)
		if (!dorigin(g, T, d))
			return 0;
	return 1;
}

/* "o + x" without the "0 + " */
static char *
oplus(G *g, const char *o, const char *x)
{
	if (!strcmp(o, "0"))
		return fmt(g, "%s", x);
	return fmt(g, "%s + %s", o, x);
}

/* ---- buffers ---------------------------------------------------------------------------- */

/*
 * PG_LAYOUT: annotate_layout lines for shared buffers that have none (not the gemm operands),
 * a swizzle the buffer's shape allows (rows a multiple of 8, rows of whole swizzle widths) or
 * padded, placed after the declarations. Drawn from a stream of their own, so the rest of
 * the program is the one the seed gives without the feature.
 */
static void
layout_notes(G *g, uint64_t seed, Buf *out)
{
	uint64_t rs = seed * 0x9e3779b97f4a7c15ull + 0x5bd1e995;
	int i;

	for (i = 0; i < g->nb; i++) {
		const Bf *B = &g->b[i];
		static const int sw[] = {32, 64, 128};
		int ok[4], nok = 0, k, d;
		int64_t rows = 1, cols;

		if (!B->shared || B->lay || B->gemm || rnd_next(&rs) % 100 >= 45)
			continue;
		for (d = 0; d + 1 < B->n; d++)
			rows *= tileof(g, B->ax[d]);
		cols = tileof(g, B->ax[B->n - 1]) * dtype_bytes(B->t);
		for (k = 0; k < 3; k++)
			if (B->n == 2 && tileof(g, B->ax[0]) % 8 == 0 && cols % sw[k] == 0)
				ok[nok++] = sw[k];
		if (B->n >= 2 && rows > 1)
			ok[nok++] = 0; /* padded */
		if (!nok)
			continue;
		k = ok[rnd_next(&rs) % (uint64_t)nok];
		if (k)
			buf_printf(out, "    annotate_layout(%s, swizzle(%d));\n", B->name, k);
		else
			buf_printf(out, "    annotate_layout(%s, padded);\n", B->name);
	}
}

static int
bf_ntile(G *g, const Bf *B)
{
	int d, n = 0;

	for (d = 0; d < B->n; d++)
		if (tileof(g, B->ax[d]) > 1)
			n++;
	return n;
}

static int64_t
bf_elems(G *g, const Bf *B)
{
	int64_t e = 1;
	int d;

	for (d = 0; d < B->n; d++)
		e *= tileof(g, B->ax[d]);
	return e;
}

static int
new_buf(G *g, DType t, int shared, int n, const int *ax)
{
	Bf *B;
	int d;

	if (g->nb >= MAXB)
		return -1;
	B = &g->b[g->nb];
	memset(B, 0, sizeof *B);
	if (shared) {
		int64_t bytes = dtype_bytes(t);

		for (d = 0; d < n; d++)
			bytes *= tileof(g, ax[d]);
		if (g->smem + bytes > 40000)
			shared = 0; /* keep within the 48 KB every target has */
		else
			g->smem += bytes;
	}
	newname(g, B->name, sizeof B->name);
	B->t = t;
	B->shared = shared;
	B->n = n;
	for (d = 0; d < n; d++)
		B->ax[d] = ax[d];
	buf_printf(&g->decl, "    %s %s: %s[", shared ? "shared" : "local", B->name, dtype_name(t));
	for (d = 0; d < n; d++)
		buf_printf(&g->decl, "%s%s", d ? ", " : "", ax[d] < 0 ? "1" : ttxt(g, ax[d]));
	buf_puts(&g->decl, "];\n");
	return g->nb++;
}

/* the tile>1 axes of B in order */
static int
bf_tileaxes(G *g, const Bf *B, int *out)
{
	int d, n = 0;

	for (d = 0; d < B->n; d++)
		if (tileof(g, B->ax[d]) > 1)
			out[n++] = B->ax[d];
	return n;
}

/* the spanned dims of tensor T for buffer B: T's dims whose axis is a tile>1 axis of B. They
 * must be B's tile>1 axes in order (then 1, else 0); span[d] set per dim */
static int
ten_spans(G *g, const Ten *T, const Bf *B, int *span)
{
	int ba[3], nb = bf_tileaxes(g, B, ba), d, k = 0;

	for (d = 0; d < T->n; d++) {
		int a = T->d[d].ax, j;

		span[d] = 0;
		if (tileof(g, a) <= 1)
			continue;
		for (j = 0; j < nb; j++)
			if (ba[j] == a)
				break;
		if (j == nb)
			continue;
		if (k >= nb || ba[k] != a)
			return 0;
		span[d] = 1;
		k++;
	}
	return k == nb;
}

/* the region of T exchanged with B (offset form where it is possible and chosen, else slices);
 * fixed: per dim not spanned, the index within the tile (or NULL: 0) */
static char *
ten_region(G *g, const Ten *T, const int *span, const int *fixed)
{
	int d, first = -1, offok = 1, slices = 0;
	Buf b;
	char *s;

	for (d = 0; d < T->n; d++)
		if (span[d]) {
			if (first < 0)
				first = d;
		} else if (first >= 0) {
			offok = 0;
		}
	if (first < 0)
		offok = 0; /* a 1-element copy: slices keep the shape explicit */
	if (!offok || pct(g, 35))
		slices = 1;
	buf_init(&b);
	buf_printf(&b, "%s[", T->name);
	for (d = 0; d < T->n; d++) {
		const char *o = dorigin(g, T, d);
		int c = fixed ? fixed[d] : 0;
		const char *ix = c ? oplus(g, o, fmt(g, "%d", c)) : o;

		if (d)
			buf_puts(&b, ", ");
		if (slices && span[d]) {
			const Axis *A = AX(g, T->d[d].ax);

			if (!strcmp(o, "0"))
				buf_printf(&b, "0 : %s", A->tiletxt);
			else if (pct(g, 30))
				buf_printf(&b, "%s : %s + %s", o, A->tiletxt, o);
			else
				buf_printf(&b, "%s : %s + %s", o, o, A->tiletxt);
		} else if (slices && pct(g, 20)) {
			buf_printf(&b, "%s : %s + 1", ix, ix);
		} else {
			buf_puts(&b, ix);
		}
	}
	buf_putc(&b, ']');
	s = arena_strdup(&g->a, buf_str(&b));
	buf_free(&b);
	return s;
}

/* ---- expressions ------------------------------------------------------------------------- */

static Ev
mkev(const char *s, DType t, int inex, double mag)
{
	Ev e;

	e.s = s, e.t = t, e.inex = inex, e.lit = 0, e.mag = mag;
	return e;
}

static int
clsof(DType t)
{
	return t == DT_BOOL ? CB : isflt(t) ? CF : CI;
}

static Ev
lit_int(G *g, int lo, int hi)
{
	int v = lo + rn(g, hi - lo + 1);
	Ev e = mkev(v < 0 ? fmt(g, "(%d)", v) : fmt(g, "%d", v), DT_INT, 0, fabs((double)v));

	e.lit = 1;
	return e;
}

static Ev
lit_flt(G *g)
{
	static const char *const v[] = {"0.5", "1.0", "1.5", "2.0", "0.25", "3.0", "0.125", "0.75",
					"4.0", "0.1", "2.5", "10.0", "0.0", "1e-3", "7.25"};
	const char *s = v[rn(g, (int)countof(v))];
	double x = atof(s);
	Ev e;

	if (pct(g, 20) && x != 0) {
		e = mkev(fmt(g, "(-%s)", s), DT_F32, 0, x);
	} else {
		e = mkev(s, DT_F32, 0, x);
	}
	e.lit = 1;
	return e;
}

static const char *
castname(DType t)
{
	return dtype_name(t);
}

/* 1 if expression text s folds to a constant: it names no variable, buffer or tensor */
static int
konst(const char *s)
{
	static const char *const fn[] = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "tanh", "sin",
					 "cos", "max", "min", "cdiv", "select", "i32", "i8", "u8", "f32", "f16",
					 "bf16", "fp8_e4m3", "fp8_e5m2", "true", "false"};
	const char *p = s;

	while (*p) {
		if (*p >= '0' && *p <= '9') {
			while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'x' ||
			       ((*p == 'e' || *p == 'E') && (p[1] == '-' || p[1] == '+' || (p[1] >= '0' && p[1] <= '9'))))
				p += (*p == 'e' || *p == 'E') && (p[1] == '-' || p[1] == '+') ? 2 : 1;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
			const char *q = p;
			size_t i, n;

			while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' || (*q >= '0' && *q <= '9'))
				q++;
			n = (size_t)(q - p);
			for (i = 0; i < countof(fn); i++)
				if (strlen(fn[i]) == n && !strncmp(fn[i], p, n))
					break;
			if (i == countof(fn))
				return 0;
			p = q;
		} else {
			p++;
		}
	}
	return 1;
}

/* wrap a narrow integer (i8, u8) in i32(...) so that arithmetic does not overflow its type */
static Ev
widen(G *g, Ev e)
{
	if (isnarrowint(e.t))
		return mkev(fmt(g, "i32(%s)", e.s), DT_I32, 0, e.mag);
	return e;
}

/* the leaves of the current context */
typedef struct Leaves {
	Ev v[MAXLEAF];
	int n;
} Leaves;

static void
addleaf(Leaves *L, Ev e)
{
	if (L->n < MAXLEAF)
		L->v[L->n++] = e;
}

static int
nest_pos(const Nest *N, int a)
{
	int p;

	for (p = 0; N && p < N->n; p++)
		if (N->ax[p] == a)
			return p;
	return -1;
}

static int
is_target(const Nest *N, int b)
{
	int i;

	for (i = 0; N && i < N->ntb; i++)
		if (N->tb[i] == b)
			return 1;
	return 0;
}

/* the index of a buffer read in the nest; NULL if B cannot be read here */
static char *
buf_read_index(G *g, int bi)
{
	Nest *N = g->nest;
	Bf *B = &g->b[bi];
	int d, tgt = is_target(N, bi);
	Buf b;
	char *s;

	if (tgt && (N->noread[bi] || (!B->def && !N->wrote[bi])))
		return NULL;
	if (!tgt && !B->def)
		return NULL;
	/* a local indexed by anything but the nest's variables (a unit dim, a fixed row): rarely
	 * (emission lowers local accesses through the nest's coordinates) */
	if (!B->shared && !N->odd[bi])
		for (d = 0; d < B->n; d++)
			if (nest_pos(N, B->ax[d]) < 0)
				return NULL;
	buf_init(&b);
	for (d = 0; d < B->n; d++) {
		int a = B->ax[d], p = nest_pos(N, a), T = tileof(g, a);
		const char *v = p >= 0 ? N->var[p] : NULL;

		if (d)
			buf_puts(&b, ", ");
		if (a < 0 || T == 1) {
			buf_puts(&b, v && (!B->shared || !pct(g, 30)) ? v : "0");
		} else if (v) {
			int shift = !tgt && (B->shared || N->odd[bi]) && pct(g, 25);

			if (!shift) {
				buf_puts(&b, v);
			} else {
				switch (rn(g, 4)) {
				case 0: buf_printf(&b, "min(%s + 1, %d)", v, T - 1); break;
				case 1: buf_printf(&b, "max(%s - 1, 0)", v); break;
				case 2: buf_printf(&b, "%d - %s", T - 1, v); break;
				default: buf_printf(&b, "(%s + %d) %% %d", v, 1 + rn(g, T), T); break;
				}
			}
		} else {
			/* an axis the nest does not run over: a fixed element (a row or column of B) */
			if (tgt || !has(g, PG_SLICE) || !pct(g, 50)) {
				buf_free(&b);
				return NULL;
			}
			buf_printf(&b, "%d", rn(g, T));
		}
	}
	s = fmt(g, "%s[%s]", B->name, buf_str(&b));
	buf_free(&b);
	return s;
}

/* the index of a global element read in the nest (NULL if not possible) */
static char *
ten_read(G *g, const Ten *T)
{
	Nest *N = g->nest;
	int d, noshift = T->role != R_IN;
	Buf b;
	char *s;

	if (!N || !has(g, PG_GLOBAL) || T->role == R_OUT || (T->role == R_INOUT && T->written) ||
	    (T->role == R_SCRATCH && !T->written) || !ten_in_scope(g, T))
		return NULL;
	buf_init(&b);
	for (d = 0; d < T->n; d++) {
		int a = T->d[d].ax, p = nest_pos(N, a), TT = tileof(g, a);
		const char *o = dorigin(g, T, d);

		if (d)
			buf_puts(&b, ", ");
		if (p >= 0 && TT > 1 && T->role == R_SCRATCH) {
			const char *v = N->var[p];

			buf_puts(&b, oplus(g, o, pct(g, 50) ? v : fmt(g, "(%d - %s)", TT - 1, v)));
		} else if (p >= 0 && TT > 1) {
			const char *v = N->var[p];

			if (noshift || pct(g, 60)) {
				buf_puts(&b, oplus(g, o, v));
			} else {
				switch (rn(g, 5)) {
				case 0: buf_printf(&b, "%s - 1", oplus(g, o, v)); break;
				case 1: buf_printf(&b, "%s + %d", oplus(g, o, v), 1 + rn(g, 3)); break;
				case 2: buf_puts(&b, oplus(g, o, fmt(g, "(%d - %s)", TT - 1, v))); break;
				case 3: buf_puts(&b, oplus(g, o, fmt(g, "%s * 2", v))); break;
				default: buf_printf(&b, "%s - %d", oplus(g, o, v), TT); break;
				}
			}
		} else if (p >= 0) {
			buf_puts(&b, oplus(g, o, N->var[p]));
		} else {
			buf_puts(&b, TT > 1 ? oplus(g, o, fmt(g, "%d", rn(g, TT))) : o);
		}
	}
	s = fmt(g, "%s[%s]", T->name, buf_str(&b));
	buf_free(&b);
	return s;
}

/* a buffer's bound, within its type */
static double
bmag(const Bf *B)
{
	double lim = B->t == DT_I8 ? 128 : B->t == DT_U8 ? 255 : B->t == DT_I32 ? 2147483648.0 : 1e30;

	return B->mag < lim ? B->mag : lim;
}

static void
leaves(G *g, Leaves *L, int exact)
{
	Nest *N = g->nest;
	int i, p;
	static const char *const bv[] = {"bx", "by", "bz"};

	L->n = 0;
	for (p = 0; N && p < N->n; p++)
		addleaf(L, mkev(N->var[p], DT_INT, 0, tileof(g, N->ax[p])));
	for (i = 0; i < g->nlv; i++)
		addleaf(L, mkev(g->lv[i].name, DT_INT, 0, (double)g->lv[i].ext));
	if (!N || pct(g, 40))
		for (i = 0; i < g->ngrid; i++)
			addleaf(L, mkev(bv[i], DT_INT, 0, 64));
	if (!N || pct(g, 30))
		for (i = 0; i < g->nsym; i++)
			addleaf(L, mkev(g->sym[i].name, DT_INT, 0, 1024));
	if (g->has_alpha)
		addleaf(L, mkev(g->alpha_name, DT_F32, 0, 4));
	if (g->has_n)
		addleaf(L, mkev(g->n_name, DT_I32, 0, 16));
	for (i = 0; i < g->nlet; i++)
		if (!exact || !g->let[i].inex) {
			Ev e = mkev(g->let[i].name, g->let[i].t, g->let[i].inex, g->let[i].mag);

			e.lit = g->let[i].lit;
			addleaf(L, e);
		}
	if (N) {
		int reps = 1 + (N->ntb == 0);

		while (reps--) {
			for (i = 0; i < g->nb; i++) {
				char *s;

				if (exact && g->b[i].inex)
					continue;
				if ((s = buf_read_index(g, i)))
					addleaf(L, mkev(s, g->b[i].t, g->b[i].inex, bmag(&g->b[i])));
				if ((s = buf_read_index(g, i)))
					addleaf(L, mkev(s, g->b[i].t, g->b[i].inex, bmag(&g->b[i])));
			}
			for (i = 0; i < g->nt; i++) {
				const Ten *T = &g->t[i];
				char *s;

				if (T->role == R_SCRATCH && exact && T->inex)
					continue;
				if (!(s = ten_read(g, T)))
					continue;
				if (T->role == R_SCRATCH) {
					double lim = T->t == DT_I8 ? 128 : T->t == DT_U8 ? 255
						     : T->t == DT_I32 ? 2147483648.0 : 1e30;

					addleaf(L, mkev(s, T->t, T->inex, T->mag < lim ? T->mag : lim));
				}
				else
					addleaf(L, mkev(s, T->t, 0, inmag(T->t)));
			}
		}
	}
}

static Ev gexp(G *g, int c, int depth, int exact);

/* bring an integer expression under lim */
static Ev
ired(G *g, Ev e, double lim)
{
	if (e.mag <= lim)
		return e;
	e = widen(g, e); /* a constant operand takes a narrow type, which it must fit */
	if (!has(g, PG_INT)) {
		int L = lim >= 1000 ? 1000 : lim >= 100 ? 100 : 8;

		return mkev(fmt(g, "min(max(%s, %d), %d)", e.s, -L, L), e.t, 0, L);
	}
	if (lim >= 255 && pct(g, 40))
		return mkev(fmt(g, "(%s %% %d)", e.s, lim >= 1000 ? 1000 : 97), e.t, 0, lim >= 1000 ? 1000 : 97);
	if (pct(g, 50)) {
		int m = lim >= 1023 ? 1023 : lim >= 255 ? 255 : 15;

		return mkev(fmt(g, "(%s & %d)", e.s, m), e.t, 0, m);
	}
	{
		int sh = 0;
		double m = e.mag;

		while (m > lim)
			m /= 2, sh++;
		return mkev(fmt(g, "(%s >> %d)", e.s, sh), e.t, 0, m + 1);
	}
}

/* bring a float expression under lim (a clamp, exact) */
static Ev
fclamp(G *g, Ev e, double lim)
{
	static const char *const L[] = {"4.0", "16.0", "64.0", "100.0", "1000.0"};
	static const double LV_[] = {4, 16, 64, 100, 1000};
	int k = 4;

	if (e.mag <= lim)
		return e;
	while (k > 0 && LV_[k] > lim)
		k--;
	if (pct(g, 50))
		return mkev(fmt(g, "min(max(%s, -%s), %s)", e.s, L[k], L[k]), e.t, e.inex, LV_[k]);
	return mkev(fmt(g, "max(min(%s, %s), -%s)", e.s, L[k], L[k]), e.t, e.inex, LV_[k]);
}

static DType
ijoin(Ev a, Ev b)
{
	if (a.lit)
		return b.lit ? DT_INT : b.t;
	if (b.lit)
		return a.t;
	if (a.t == DT_INT || b.t == DT_INT)
		return DT_INT;
	return a.t == b.t ? a.t : DT_I32;
}

/* a float pair made compatible: the type of a op b, casting narrow types that differ to f32 */
static DType
fjoin(G *g, Ev *a, Ev *b)
{
	if (!isflt(a->t) && !isflt(b->t))
		return DT_F32;
	if (!isflt(a->t))
		return b->t;
	if (!isflt(b->t))
		return a->t;
	if (a->lit)
		return b->t;
	if (b->lit)
		return a->t;
	if (a->t == b->t)
		return a->t;
	if (a->t == DT_F32 || b->t == DT_F32)
		return DT_F32;
	a->s = fmt(g, "f32(%s)", a->s), a->t = DT_F32;
	b->s = fmt(g, "f32(%s)", b->s), b->t = DT_F32;
	return DT_F32;
}

static Ev
leaf(G *g, int c, int exact)
{
	Leaves L;
	Ev pool[MAXLEAF];
	int n = 0, i;

	leaves(g, &L, exact);
	for (i = 0; i < L.n; i++)
		if (clsof(L.v[i].t) == c || (c != CB && pct(g, 25)))
			pool[n++] = L.v[i];
	if (c == CB)
		return pct(g, 50) ? mkev("true", DT_BOOL, 0, 1) : mkev("false", DT_BOOL, 0, 1);
	if (!n || pct(g, 12))
		return c == CF ? lit_flt(g) : lit_int(g, -8, 9);
	{
		Ev e = pool[rn(g, n)];

		if (c == CF && !isflt(e.t)) {
			e = ired(g, widen(g, e), 4096);
			return mkev(fmt(g, "f32(%s)", e.s), DT_F32, 0, e.mag);
		}
		if (c == CI && isflt(e.t)) {
			if (e.inex)
				return lit_int(g, -8, 9);
			e = fclamp(g, e, 1000);
			return mkev(fmt(g, "i32(%s)", e.s), DT_I32, 0, e.mag);
		}
		if (c == CI)
			e = widen(g, e);
		return e;
	}
}

/* a nonzero integer divisor */
static Ev
divisor(G *g, int depth)
{
	static const int lits[] = {2, 3, 4, 5, 7, 8, 16, -2, -3, -4, -7};

	if (depth <= 0 || pct(g, 55) || !has(g, PG_INT)) {
		int v = lits[rn(g, (int)countof(lits))];
		Ev e = mkev(v < 0 ? fmt(g, "(%d)", v) : fmt(g, "%d", v), DT_INT, 0, abs(v));

		e.lit = 1;
		return e;
	} else {
		Ev x = ired(g, gexp(g, CI, depth - 1, 1), 1 << 20);

		switch (rn(g, 3)) {
		case 0: return mkev(fmt(g, "((%s & 7) + 1)", x.s), x.t, 0, 8);
		case 1: return mkev(fmt(g, "(-((%s & 3) + 1))", x.s), x.t, 0, 4);
		default: return mkev(fmt(g, "(%s %% 6 + 1)", x.s), x.t, 0, 6);
		}
	}
}

static double
pow2ceil(double m)
{
	double p = 1;

	while (p <= m)
		p *= 2;
	return p;
}

static Ev
gint(G *g, int depth, int exact)
{
	Ev a, b, d;
	DType t;

	static const int plain[] = {0, 1, 2, 3, 9, 10, 11, 13};

	(void)exact;
	/* without PG_INT: index arithmetic only (+ - * / max min abs cdiv select, casts) */
	switch (has(g, PG_INT) ? rn(g, 14) : plain[rn(g, (int)countof(plain))]) {
	case 0: case 1:
		a = ired(g, gexp(g, CI, depth - 1, 1), 1 << 20);
		b = ired(g, gexp(g, CI, depth - 1, 1), 1 << 20);
		t = ijoin(a, b);
		return mkev(fmt(g, "(%s %s %s)", a.s, pct(g, 50) ? "+" : "-", b.s), t, 0, a.mag + b.mag);
	case 2:
		a = ired(g, gexp(g, CI, depth - 1, 1), 1 << 10);
		b = ired(g, gexp(g, CI, depth - 1, 1), 1 << 10);
		return mkev(fmt(g, "(%s * %s)", a.s, b.s), ijoin(a, b), 0, a.mag * b.mag);
	case 3:
		a = ired(g, gexp(g, CI, depth - 1, 1), 1 << 24);
		d = divisor(g, depth - 1);
		return mkev(fmt(g, "(%s / %s)", a.s, d.s), ijoin(a, d), 0, a.mag);
	case 4:
		a = gexp(g, CI, depth - 1, 1);
		d = divisor(g, depth - 1);
		return mkev(fmt(g, "(%s %% %s)", a.s, d.s), ijoin(a, d), 0, d.mag);
	case 5:
		a = ired(g, gexp(g, CI, depth - 1, 1), 1 << 20);
		{
			int c = rn(g, 7);

			return mkev(fmt(g, "(%s << %d)", a.s, c), a.lit ? DT_INT : a.t, 0, a.mag * (1 << c));
		}
	case 6:
		a = gexp(g, CI, depth - 1, 1);
		if (pct(g, 60))
			return mkev(fmt(g, "(%s >> %d)", a.s, rn(g, 12)), a.lit ? DT_INT : a.t, 0, a.mag);
		b = gexp(g, CI, depth - 1, 1);
		return mkev(fmt(g, "(%s >> (%s & 7))", a.s, b.s), ijoin(a, b), 0, a.mag);
	case 7:
		a = gexp(g, CI, depth - 1, 1);
		b = gexp(g, CI, depth - 1, 1);
		{
			static const char *const ops[] = {"&", "|", "^"};
			int o = rn(g, 3);
			double m = pow2ceil(a.mag > b.mag ? a.mag : b.mag);

			return mkev(fmt(g, "(%s %s %s)", a.s, ops[o], b.s), ijoin(a, b), 0, m);
		}
	case 8:
		a = gexp(g, CI, depth - 1, 1);
		if (pct(g, 50))
			return mkev(fmt(g, "(~%s)", a.s), a.lit ? DT_INT : a.t, 0, a.mag + 1);
		a = ired(g, a, 1 << 30);
		return mkev(fmt(g, "(-%s)", a.s), a.lit ? DT_INT : a.t, 0, a.mag);
	case 9:
		a = gexp(g, CI, depth - 1, 1);
		b = gexp(g, CI, depth - 1, 1);
		return mkev(fmt(g, "%s(%s, %s)", pct(g, 50) ? "max" : "min", a.s, b.s), ijoin(a, b), 0,
			    a.mag > b.mag ? a.mag : b.mag);
	case 10:
		a = ired(g, gexp(g, CI, depth - 1, 1), 1 << 24);
		if (pct(g, 50))
			return mkev(fmt(g, "abs(%s)", a.s), a.lit ? DT_INT : a.t, 0, a.mag);
		{
			static const int dv[] = {2, 3, 4, 8, 16};

			return mkev(fmt(g, "cdiv(%s, %d)", a.s, dv[rn(g, 5)]), a.lit ? DT_INT : a.t, 0, a.mag);
		}
	case 11:
	{
		Ev c = gexp(g, CB, depth - 1, 1);

		a = gexp(g, CI, depth - 1, 1);
		b = gexp(g, CI, depth - 1, 1);
		if (pct(g, 50))
			return mkev(fmt(g, "select(%s, %s, %s)", c.s, a.s, b.s), ijoin(a, b), 0,
				    a.mag > b.mag ? a.mag : b.mag);
		return mkev(fmt(g, "(%s ? %s : %s)", c.s, a.s, b.s), ijoin(a, b), 0, a.mag > b.mag ? a.mag : b.mag);
	}
	case 12:
		if (has(g, PG_INT)) {
			a = gexp(g, CI, depth - 1, 1);
			if (konst(a.s))
				return a;
			if (pct(g, 50))
				return mkev(fmt(g, "i32(i8(%s))", a.s), DT_I32, 0, 128);
			return mkev(fmt(g, "i32(u8(%s))", a.s), DT_I32, 0, 255);
		}
		/* fall through */
	default:
		if (pct(g, 40)) {
			Ev c = gexp(g, CB, depth - 1, 1);

			return mkev(fmt(g, "i32(%s)", c.s), DT_I32, 0, 1);
		}
		a = fclamp(g, gexp(g, CF, depth - 1, 1), 1000);
		return mkev(fmt(g, "i32(%s)", a.s), DT_I32, 0, a.mag);
	}
}

static Ev
gflt(G *g, int depth, int exact)
{
	Ev a, b;
	DType t;

	switch (rn(g, 13)) {
	case 0: case 1: case 2:
		a = fclamp(g, gexp(g, CF, depth - 1, exact), 5000);
		b = fclamp(g, gexp(g, CF, depth - 1, exact), 5000);
		t = fjoin(g, &a, &b);
		return mkev(fmt(g, "(%s %s %s)", a.s, pct(g, 50) ? "+" : "-", b.s), t, a.inex | b.inex,
			    a.mag + b.mag);
	case 3: case 4:
		a = fclamp(g, gexp(g, CF, depth - 1, exact), 100);
		b = fclamp(g, gexp(g, CF, depth - 1, exact), 100);
		/* an inexact value times a large exact one amplifies its rounding past any
		 * tolerance after a cancellation: keep the exact factor small */
		if (a.inex && !b.inex)
			b = fclamp(g, b, 4);
		if (b.inex && !a.inex)
			a = fclamp(g, a, 4);
		t = fjoin(g, &a, &b);
		return mkev(fmt(g, "(%s * %s)", a.s, b.s), t, a.inex | b.inex, a.mag * b.mag);
	case 5:
		a = gexp(g, CF, depth - 1, exact);
		if (pct(g, 40)) {
			static const char *const dv[] = {"2.0", "4.0", "(-2.0)", "0.5", "3.0"};
			static const double dm[] = {0.5, 0.25, 0.5, 2, 0.34};
			int k = rn(g, 5);

			a = fclamp(g, a, 5000);
			return mkev(fmt(g, "(%s / %s)", a.s, dv[k]), a.t, a.inex, a.mag * dm[k]);
		}
		b = fclamp(g, gexp(g, CF, depth - 1, exact), 5000);
		t = fjoin(g, &a, &b);
		return mkev(fmt(g, "(%s / (abs(%s) + 1.0))", a.s, b.s), t, a.inex | b.inex, a.mag);
	case 6:
		a = gexp(g, CF, depth - 1, exact);
		return mkev(fmt(g, "(-%s)", a.s), a.lit ? DT_F32 : a.t, a.inex, a.mag);
	case 7: case 8:
		if (has(g, PG_MATH) && !exact) {
			a = fclamp(g, gexp(g, CF, depth - 1, 0), 100);
			t = a.lit ? DT_F32 : a.t;
			switch (rn(g, 10)) {
			case 0: return mkev(fmt(g, "exp(min(%s, 8.0))", a.s), t, 1, exp(a.mag < 8 ? a.mag : 8));
			case 1: return mkev(fmt(g, "exp2(min(%s, 10.0))", a.s), t, 1, exp2(a.mag < 10 ? a.mag : 10));
			case 2: return mkev(fmt(g, "log(abs(%s) + 1.0)", a.s), t, 1, log(a.mag + 1) + 1);
			case 3: return mkev(fmt(g, "log2(abs(%s) + 0.5)", a.s), t, 1, log2(a.mag + 1) + 2);
			case 4: return mkev(fmt(g, "sqrt(abs(%s))", a.s), t, 1, sqrt(a.mag) + 1);
			case 5: return mkev(fmt(g, "rsqrt(abs(%s) + 1.0)", a.s), t, 1, 1);
			case 6: return mkev(fmt(g, "tanh(%s)", a.s), t, 1, 1);
			case 7: return mkev(fmt(g, "sin(%s)", a.s), t, 1, 1);
			case 8: return mkev(fmt(g, "cos(%s)", a.s), t, 1, 1);
			default: return mkev(fmt(g, "exp(-abs(%s))", a.s), t, 1, 1);
			}
		}
		/* fall through */
	case 9:
		a = gexp(g, CF, depth - 1, exact);
		b = gexp(g, CF, depth - 1, exact);
		if (pct(g, 30))
			return mkev(fmt(g, "abs(%s)", a.s), a.lit ? DT_F32 : a.t, a.inex, a.mag);
		t = fjoin(g, &a, &b);
		return mkev(fmt(g, "%s(%s, %s)", pct(g, 50) ? "max" : "min", a.s, b.s), t, a.inex | b.inex,
			    a.mag > b.mag ? a.mag : b.mag);
	case 10:
	{
		Ev c = gexp(g, CB, depth - 1, 1);

		a = gexp(g, CF, depth - 1, exact);
		b = gexp(g, CF, depth - 1, exact);
		t = fjoin(g, &a, &b);
		return mkev(fmt(g, pct(g, 50) ? "select(%s, %s, %s)" : "(%s ? %s : %s)", c.s, a.s, b.s), t,
			    a.inex | b.inex, a.mag > b.mag ? a.mag : b.mag);
	}
	case 11:
	{
		/* a round trip through another float type */
		DType to = rand_type(g, 1);

		a = fclamp(g, gexp(g, CF, depth - 1, exact), 1000);
		if (to == DT_F32)
			return mkev(fmt(g, "f32(%s)", a.s), DT_F32, a.inex, a.mag);
		return mkev(fmt(g, "%s(%s)", castname(to), a.s), to, inex_to(a.inex, to),
			    to == DT_FP8E4M3 && a.mag > 448 ? 448 : a.mag);
	}
	default:
		a = ired(g, gexp(g, CI, depth - 1, 1), 1 << 16);
		return mkev(fmt(g, "f32(%s)", a.s), DT_F32, 0, a.mag);
	}
}

static Ev
gbool(G *g, int depth)
{
	static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
	Ev a, b;

	switch (rn(g, 7)) {
	case 0: case 1: case 2:
		a = gexp(g, CI, depth - 1, 1);
		b = gexp(g, CI, depth - 1, 1);
		return mkev(fmt(g, "(%s %s %s)", a.s, cmp[rn(g, 6)], b.s), DT_BOOL, 0, 1);
	case 3:
		a = gexp(g, CF, depth - 1, 1);
		b = gexp(g, CF, depth - 1, 1);
		fjoin(g, &a, &b);
		return mkev(fmt(g, "(%s %s %s)", a.s, cmp[rn(g, 4)], b.s), DT_BOOL, 0, 1);
	case 4:
		a = gexp(g, CI, depth - 1, 1);
		if (!has(g, PG_INT))
			return mkev(fmt(g, "(%s >= %d)", a.s, rn(g, 5) - 2), DT_BOOL, 0, 1);
		return mkev(fmt(g, "((%s & %d) == %d)", a.s, 1 + rn(g, 3), rn(g, 2)), DT_BOOL, 0, 1);
	case 5:
		a = gexp(g, CB, depth - 1, 1);
		b = gexp(g, CB, depth - 1, 1);
		return mkev(fmt(g, "(%s %s %s)", a.s, pct(g, 50) ? "&&" : "||", b.s), DT_BOOL, 0, 1);
	default:
		a = gexp(g, CB, depth - 1, 1);
		return mkev(fmt(g, "!%s", a.s), DT_BOOL, 0, 1);
	}
}

/* an expression of class c; exact: no math library, no inexact buffer behind it */
static Ev
gexp(G *g, int c, int depth, int exact)
{
	if (c == CB) {
		Ev e = gbool(g, depth <= 0 ? 1 : depth);

		/* a condition sema would fold lets a select fold to a constant, which must then fit
		 * wherever it goes (a u8 store): keep conditions unknown (bx < 0 is false) */
		if (konst(e.s))
			e.s = fmt(g, "(%s != (bx < 0))", e.s);
		return e;
	}
	if (c == CI && !has(g, PG_INT) && pct(g, 60))
		return leaf(g, c, 1);
	if (depth <= 0 || pct(g, 25))
		return leaf(g, c, exact);
	if (c == CI)
		return gint(g, depth, 1);
	return gflt(g, depth, exact);
}

/* a value to store into an element of type t */
static Ev
gvalue(G *g, DType t)
{
	int c = isflt(t) ? CF : CI, tries = 0;
	Ev e = gexp(g, c, 1 + rn(g, g->maxdepth), 0);

	/* a value on its way to an output: rounded no narrower than the output's type */
	while (g->fit != DT_NONE && !inex_fits(inex_to(e.inex, t), g->fit) && tries++ < 6)
		e = gexp(g, c, 1 + rn(g, g->maxdepth), tries > 3);

	if (c == CF)
		e = fclamp(g, e, t == DT_F16 ? 30000 : 10000);
	if (isnarrowint(t) && konst(e.s))
		e = lit_int(g, 0, 9); /* a constant must fit the element type */
	if (isnarrowint(t) && pct(g, 25)) {
		/* the element of another buffer of the type, as it is */
		Leaves L;
		int i, n = 0;
		Ev pool[MAXLEAF];

		leaves(g, &L, 1);
		for (i = 0; i < L.n; i++)
			if (L.v[i].t == t)
				pool[n++] = L.v[i];
		if (n)
			e = pool[rn(g, n)];
	}
	return e;
}

/* ---- lets ----------------------------------------------------------------------------------- */

static int
push_let(G *g, Ev e)
{
	Let *L;

	if (g->nlet >= MAXLET)
		return -1;
	L = &g->let[g->nlet++];
	snprintf(L->name, sizeof L->name, "v%d", ++g->uniq % 100000);
	L->t = e.t, L->inex = e.inex, L->mag = e.mag, L->lit = e.lit;
	return g->nlet - 1;
}

/* ---- statements ------------------------------------------------------------------------- */

typedef struct Saved {
	unsigned char def[MAXB], inex[MAXB];
	double mag[MAXB];
} Saved;

static void
save(G *g, Saved *s)
{
	int i;

	for (i = 0; i < MAXB; i++)
		s->def[i] = (unsigned char)g->b[i].def, s->inex[i] = (unsigned char)g->b[i].inex, s->mag[i] = g->b[i].mag;
}

static void gen_ops(G *g, int n);
static int write_tensor(G *g, int ti);
static int writable(G *g, const Ten *T);

/* the cond of an if: block-uniform */
static Ev
uniform_cond(G *g)
{
	static const char *const bv[] = {"bx", "by", "bz"};
	Nest *N = g->nest;

	g->nest = NULL;
	if (pct(g, 60)) {
		int k = rn(g, 6);
		const char *s = NULL;

		if (k == 0 && g->ngrid)
			s = fmt(g, "%s %% 2 == %d", bv[rn(g, g->ngrid)], rn(g, 2));
		else if (k == 1 && g->ngrid)
			s = fmt(g, "%s < %d", bv[rn(g, g->ngrid)], 1 + rn(g, 3));
		else if (k == 2 && g->nsym)
			s = fmt(g, "%s > %d", g->sym[rn(g, g->nsym)].name, 1 + rn(g, 60));
		else if (k == 3 && g->has_n)
			s = fmt(g, "%s > %d", g->n_name, rn(g, 3) - 1);
		else if (k == 4 && g->has_alpha)
			s = fmt(g, "%s %s 0.0", g->alpha_name, pct(g, 50) ? ">" : "<=");
		else if (k == 5 && g->nlv)
			s = fmt(g, "%s %% 2 == 1", g->lv[rn(g, g->nlv)].name);
		if (s) {
			g->nest = N;
			return mkev(s, DT_BOOL, 0, 1);
		}
	}
	{
		Ev e = gexp(g, CB, 2, 1);

		g->nest = N;
		return e;
	}
}

/* ---- parallel / serial nests ---------------------------------------------------------- */

static int
ten_tileaxes(G *g, const Ten *T, int *out)
{
	int d, n = 0;

	for (d = 0; d < T->n; d++)
		if (tileof(g, T->d[d].ax) > 1)
			out[n++] = T->d[d].ax;
	return n;
}

static int
sameset(const int *a, int na, const int *b, int nb)
{
	int i, j;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (a[i] == b[j])
				break;
		if (j == nb)
			return 0;
	}
	return 1;
}

static const char *const varsets[][3] = {
	{"i", "j", "l"}, {"r", "c", "k0"}, {"s", "q", "tid"}, {"i0", "i1", "i2"},
	{"y0", "x0", "z0"}, {"lane", "warp", "kk0"}, {"ii", "jj", "ll"},
};

/* the store of value into target buffer bi at the nest's identity (or a permutation) */
static void
store_buf(G *g, int bi, int compound, Ev v)
{
	Nest *N = g->nest;
	Bf *B = &g->b[bi];
	Buf ix;
	int d;

	buf_init(&ix);
	for (d = 0; d < B->n; d++) {
		int p = nest_pos(N, B->ax[d]);

		buf_printf(&ix, "%s%s", d ? ", " : "", p >= 0 ? N->var[p] : "0");
	}
	if (compound) {
		static const char *const cops[] = {"+=", "-=", "*=", "/="};
		int o = rn(g, 4);

		if (!isflt(B->t) && o >= 2)
			o = rn(g, 2);
		if (o == 2)
			v = isflt(B->t) ? fclamp(g, v, 2) : ired(g, v, 3);
		if (o == 3) {
			if (isflt(B->t))
				v = mkev(fmt(g, "(abs(%s) + 1.0)", fclamp(g, v, 5000).s), v.t, v.inex, v.mag + 1);
			else
				v = divisor(g, 1);
		}
		if (!isflt(B->t))
			v = ired(g, v, 1 << 16);
		if (isnarrowint(B->t)) /* x op= v computes in x's type (a constant, even i32(9), is weak) */
			line(g, "%s[%s] = i32(%s[%s]) %c %s;", B->name, buf_str(&ix), B->name, buf_str(&ix), cops[o][0], v.s);
		else
			line(g, "%s[%s] %s %s;", B->name, buf_str(&ix), cops[o], v.s);
		B->mag = o == 0 || o == 1 ? B->mag + v.mag : o == 2 ? B->mag * (v.mag > 1 ? v.mag : 1) : B->mag;
		B->inex |= v.inex;
	} else {
		line(g, "%s[%s] = %s;", B->name, buf_str(&ix), v.s);
		if (N->wrote[bi] || B->def) {
			B->mag = B->mag > v.mag ? B->mag : v.mag;
			B->inex |= v.inex;
		} else {
			B->mag = v.mag, B->inex = v.inex;
		}
	}
	B->inex = inex_to(B->inex, B->t);
	if (isflt(B->t) && B->mag > 1e6)
		B->mag = 1e6; /* (integers keep their bound: it decides where they must be reduced) */
	if (!isflt(B->t) && B->t != DT_INT) {
		double lim = B->t == DT_I8 ? 128 : B->t == DT_U8 ? 255 : 2147483648.0;

		if (B->mag > lim)
			B->mag = lim;
	}
	N->wrote[bi] = 1;
	buf_free(&ix);
}

static void
store_ten(G *g, int ti, Ev v)
{
	Nest *N = g->nest;
	Ten *T = &g->t[ti];
	Buf ix;
	int d;

	buf_init(&ix);
	for (d = 0; d < T->n; d++) {
		int a = T->d[d].ax, p = nest_pos(N, a), TT = tileof(g, a);
		const char *o = dorigin(g, T, d);

		if (d)
			buf_puts(&ix, ", ");
		if (p >= 0 && TT > 1 && T->role == R_OUT && pct(g, 15))
			buf_puts(&ix, oplus(g, o, fmt(g, "(%d - %s)", TT - 1, N->var[p])));
		else if (p >= 0)
			buf_puts(&ix, oplus(g, o, N->var[p]));
		else
			buf_puts(&ix, o);
	}
	line(g, "%s[%s] = %s;", T->name, buf_str(&ix), v.s);
	buf_free(&ix);
}

/* the body of a nest: lets, then a store per target */
static void
nest_body(G *g)
{
	Nest *N = g->nest;
	int nl = has(g, PG_LET) ? rn(g, 3) : 0, i, let0 = g->nlet;
	int nt = N->ntb + (N->tt >= 0);
	int order[5], k;

	for (i = 0; i < nl; i++) {
		int c = rn(g, 3) == 0 ? CI : CF;
		Ev e = gexp(g, c, 1 + rn(g, g->maxdepth), 0);

		if (push_let(g, e) >= 0)
			line(g, "let %s = %s;", g->let[g->nlet - 1].name, e.s);
	}
	for (k = 0; k < N->ntb; k++)
		order[k] = k;
	if (N->tt >= 0)
		order[N->ntb] = -1;
	for (k = 0; k < nt; k++) {
		int j = k + rn(g, nt - k), t = order[k];

		order[k] = order[j], order[j] = t;
	}
	for (k = 0; k < nt; k++) {
		if (order[k] < 0) {
			Ten *T = &g->t[N->tt];
			Ev v;

			g->fit = T->t;
			v = gvalue(g, T->t);
			g->fit = DT_NONE;

			if (!isflt(T->t) && v.mag > 2147483647.0)
				v = ired(g, v, 1 << 30);
			store_ten(g, N->tt, v);
			if (T->role == R_SCRATCH) {
				T->inex |= inex_to(v.inex, T->t);
				if (v.mag > T->mag)
					T->mag = v.mag;
			}
		} else {
			int bi = N->tb[order[k]];
			Bf *B = &g->b[bi];
			int canc = B->def || N->wrote[bi];
			Ev v = gvalue(g, B->t);

			if (has(g, PG_IF) && pct(g, 15)) {
				Ev c = gexp(g, CB, 2, 1);
				int w0 = N->wrote[bi];

				line(g, "if (%s) {", c.s);
				g->ind++;
				store_buf(g, bi, canc && pct(g, 40), v);
				g->ind--;
				N->wrote[bi] = (unsigned char)w0; /* the else branch runs without the then branch */
				if (canc && pct(g, 40)) {
					line(g, "}");
				} else {
					line(g, "} else {");
					g->ind++;
					store_buf(g, bi, 0, gvalue(g, B->t));
					g->ind--;
					line(g, "}");
				}
				N->wrote[bi] = 1;
			} else {
				store_buf(g, bi, canc && pct(g, 30), v);
			}
		}
	}
	g->nlet = let0;
}

/* open a nest over the given axes (order as given) */
static void
nest_open(G *g, Nest *N, int serial, int n, const int *ax)
{
	int vs = rn(g, (int)countof(varsets)), p;

	memset(N, 0, sizeof *N);
	for (p = 0; p < MAXB; p++)
		N->odd[p] = has(g, PG_SLICE) && pct(g, 4);
	N->serial = serial;
	N->n = n;
	N->tt = -1;
	for (p = 0; p < n; p++) {
		N->ax[p] = ax[p];
		snprintf(N->var[p], sizeof N->var[p], "%s", varsets[vs][p]);
	}
	if (serial) {
		for (p = 0; p < n; p++) {
			int T = tileof(g, ax[p]);

			if (pct(g, 25))
				line(g, "for %s in range(0, %d) {", N->var[p], T);
			else
				line(g, "for %s in range(%s) {", N->var[p], ax[p] < 0 ? "1" : ttxt(g, ax[p]));
			g->ind++;
		}
	} else {
		Buf b;

		buf_init(&b);
		for (p = 0; p < n; p++)
			buf_printf(&b, "%s%s", p ? ", " : "", N->var[p]);
		buf_puts(&b, " in parallel(");
		for (p = 0; p < n; p++)
			buf_printf(&b, "%s%s", p ? ", " : "", ax[p] < 0 ? "1" : ttxt(g, ax[p]));
		line(g, "for %s) {", buf_str(&b));
		buf_free(&b);
		g->ind++;
	}
	g->nest = N;
}

static void
nest_close(G *g, Nest *N)
{
	int p, k;

	for (p = 0; p < (N->serial ? N->n : 1); p++) {
		g->ind--;
		line(g, "}");
	}
	for (k = 0; k < N->ntb; k++)
		g->b[N->tb[k]].def = 1;
	if (N->tt >= 0)
		g->t[N->tt].written = 1;
	g->nest = NULL;
}

/* axes a new buffer can span: those of the geometry (the K axis only inside its loop) */
static int
free_axes(G *g, int *out)
{
	int a, n = 0;

	for (a = 0; a < g->nax; a++)
		if (g->ax[a].kind != AX_LOOP || g->kopen)
			out[n++] = a;
	return n;
}

static int
pick_axes(G *g, int *out)
{
	int fa[MAXAX], nf = free_axes(g, fa), n, i;
	int64_t e = 1;

	if (!nf)
		return 0;
	/* a random subset in geometry order, most often all */
	n = 0;
	for (i = 0; i < nf && n < 3; i++) {
		int T = tileof(g, fa[i]);

		/* a tile-1 axis is a unit dim (PG_SLICE); a third dim of extent > 1 is rarer (tilec
		 * copies rank-2 tiles between memories) */
		if (T == 1 && !(has(g, PG_SLICE) && pct(g, 15)))
			continue;
		if (pct(g, n == 2 ? 40 : 80) && e * T <= 8192)
			out[n++] = fa[i], e *= T;
	}
	if (!n)
		out[n++] = fa[rn(g, nf)];
	if (n == 2 && pct(g, 15)) {
		int t = out[0];

		out[0] = out[1], out[1] = t;
	}
	return n;
}

static int
op_nest(G *g, int force_tensor)
{
	int cand[MAXB + MAXT], nc = 0, i, ax[3], n = 0, tax[3], nta;
	Nest N;
	int serial;
	int64_t elems = 1;

	/* the primary target: an unwritten output, a defined buffer, or a new buffer */
	if (has(g, PG_GLOBAL))
		for (i = 0; i < g->nt; i++)
			if (writable(g, &g->t[i]))
				cand[nc++] = MAXB + i;
	if (force_tensor && !nc)
		return -1;
	if (!force_tensor)
		for (i = 0; i < g->nb; i++)
			if (g->b[i].def && !g->b[i].gemm && bf_ntile(g, &g->b[i]) > 0 &&
			    (g->b[i].ax[0] < 0 || g->ax[g->b[i].ax[0]].kind != AX_LOOP || g->kopen))
				cand[nc++] = i;
	if (nc && (force_tensor || pct(g, 55))) {
		int c = cand[rn(g, nc)];

		if (c >= MAXB) {
			Ten *T = &g->t[c - MAXB];
			int d;

			for (d = 0; d < T->n; d++)
				if (tileof(g, T->d[d].ax) > 1 || pct(g, 50))
					ax[n++] = T->d[d].ax;
			if (!n)
				ax[n++] = T->d[0].ax;
			memset(&N, 0, sizeof N);
			N.tt = c - MAXB;
		} else {
			Bf *B = &g->b[c];
			int d;

			for (d = 0; d < B->n; d++)
				ax[n++] = B->ax[d];
			memset(&N, 0, sizeof N);
			N.tt = -1;
			N.tb[N.ntb++] = c;
		}
	} else {
		int nb;
		DType t;

		n = pick_axes(g, ax);
		if (!n)
			return -1;
		if (has(g, PG_SLICE) && n < 3 && pct(g, 10)) {
			int pos = rn(g, n + 1), k;

			for (k = n; k > pos; k--)
				ax[k] = ax[k - 1];
			ax[pos] = -1;
			n++;
		}
		t = rand_type(g, 0);
		nb = new_buf(g, t, has(g, PG_SHARED) && pct(g, 25), n, ax);
		if (nb < 0)
			return -1;
		memset(&N, 0, sizeof N);
		N.tt = -1;
		N.tb[N.ntb++] = nb;
	}
	for (i = 0; i < n; i++)
		elems *= tileof(g, ax[i]);
	nta = 0;
	for (i = 0; i < n; i++)
		if (tileof(g, ax[i]) > 1)
			tax[nta++] = ax[i];
	/* more targets with the same tile axes */
	{
		int extra = rn(g, 3), k;

		for (k = 0; k < extra && N.ntb < 3; k++) {
			int ba[3], nba, pick = -1;

			if (pct(g, 50)) {
				for (i = 0; i < g->nb; i++) {
					Bf *B = &g->b[i];

					nba = bf_tileaxes(g, B, ba);
					if (B->def && !B->gemm && !is_target(&N, i) && sameset(ba, nba, tax, nta) &&
					    B->n == nba && pct(g, 50))
						pick = i;
				}
			}
			if (pick < 0 && pct(g, 60)) {
				int nax[3];

				for (i = 0; i < nta; i++)
					nax[i] = tax[i];
				if (nta == 2 && pct(g, 30))
					nax[0] = tax[1], nax[1] = tax[0];
				if (nta == 0)
					break;
				pick = new_buf(g, rand_type(g, 0), has(g, PG_SHARED) && pct(g, 35), nta, nax);
			}
			if (pick >= 0)
				N.tb[N.ntb++] = pick;
		}
		if (N.tt < 0 && has(g, PG_GLOBAL) && pct(g, 25))
			for (i = 0; i < g->nt; i++) {
				int ta[3], nt2 = ten_tileaxes(g, &g->t[i], ta);

				if (writable(g, &g->t[i]) && sameset(ta, nt2, tax, nta)) {
					N.tt = i;
					break;
				}
			}
	}
	serial = has(g, PG_LOOP) && elems <= 256 && pct(g, 12);
	{
		Nest M = N;
		int p;

		nest_open(g, &N, serial, n, ax);
		for (p = 0; p < M.ntb; p++)
			N.tb[p] = M.tb[p];
		N.ntb = M.ntb;
		N.tt = M.tt;
	}
	nest_body(g);
	nest_close(g, &N);
	return 0;
}

/* ---- copies, fills, reduces -------------------------------------------------------------- */

static int
op_load(G *g)
{
	int cand[MAXT], nc = 0, i, ti, ax[3], n = 0, bi = -1, fixed[3] = {0}, span[3];
	Ten *T;
	int d;

	for (i = 0; i < g->nt; i++)
		if ((g->t[i].role == R_IN || (g->t[i].role == R_INOUT && !g->t[i].written)) &&
		    ten_in_scope(g, &g->t[i]))
			cand[nc++] = i;
	if (!nc)
		return -1;
	/* prefer tensors over the K axis inside the K loop */
	ti = cand[rn(g, nc)];
	if (g->kopen)
		for (i = 0; i < nc; i++)
			for (d = 0; d < g->t[cand[i]].n; d++)
				if (g->t[cand[i]].d[d].ax == g->kax && !g->t[cand[i]].d[d].whole && pct(g, 60))
					ti = cand[i];
	T = &g->t[ti];
	for (d = 0; d < T->n; d++)
		if (tileof(g, T->d[d].ax) > 1)
			ax[n++] = T->d[d].ax;
	if (has(g, PG_SLICE) && n >= 2 && pct(g, 25)) {
		int drop = rn(g, n);

		for (d = drop; d < n - 1; d++)
			ax[d] = ax[d + 1];
		n--;
	}
	if (has(g, PG_SLICE) && n < 3 && pct(g, 10)) {
		int pos = rn(g, n + 1), k;

		for (k = n; k > pos; k--)
			ax[k] = ax[k - 1];
		ax[pos] = -1;
		n++;
	}
	if (!n) {
		ax[n++] = -1;
	}
	/* reload into a defined buffer of these axes, or a new one */
	for (i = 0; i < g->nb; i++) {
		Bf *B = &g->b[i];

		if (!B->gemm && B->n == n && !memcmp(B->ax, ax, sizeof(int) * (size_t)n) && isflt(B->t) == isflt(T->t) &&
		    pct(g, 25))
			bi = i;
	}
	if (bi < 0)
		bi = new_buf(g, pct(g, 70) ? T->t : rand_like(g, T->t), has(g, PG_SHARED) && pct(g, 40), n, ax);
	if (bi < 0)
		return -1;
	if (!ten_spans(g, T, &g->b[bi], span))
		return -1;
	for (d = 0; d < T->n; d++)
		if (!span[d] && tileof(g, T->d[d].ax) > 1)
			fixed[d] = rn(g, tileof(g, T->d[d].ax));
	line(g, "copy(%s, %s);", ten_region(g, T, span, fixed), g->b[bi].name);
	g->b[bi].def = 1;
	g->b[bi].inex = 0;
	g->b[bi].mag = inmag(T->t);
	if (isflt(g->b[bi].t) && !isflt(T->t))
		g->b[bi].mag = inmag(T->t);
	if (!isflt(g->b[bi].t) && isflt(T->t)) /* a float -> integer conversion of inputs */
		g->b[bi].mag = 8;
	if (g->b[bi].t == DT_I8 && g->b[bi].mag > 128)
		g->b[bi].mag = 128;
	return 0;
}

/* the writer of output tensor ti as a copy from a defined buffer (made by a nest if none) */
static int
write_tensor(G *g, int ti)
{
	Ten *T = &g->t[ti];
	int i, cand[MAXB], nc = 0, span[3], bi, fixed[3] = {0}, d;

	if (!writable(g, T))
		return -1;
	for (i = 0; i < g->nb; i++)
		if (g->b[i].def && bf_ntile(g, &g->b[i]) && ten_spans(g, T, &g->b[i], span) &&
		    (isflt(T->t) || !isflt(g->b[i].t)) && inex_fits(g->b[i].inex, T->t)) {
			int ta[3], nta = ten_tileaxes(g, T, ta), ba[3], nba = bf_tileaxes(g, &g->b[i], ba);

			if (nta == nba || (has(g, PG_SLICE) && pct(g, 30)))
				cand[nc++] = i;
		}
	if (!nc) {
		/* make one: a nest writing a new buffer with the tensor's axes */
		int ax[3], n = 0, nb;
		Nest N;

		for (d = 0; d < T->n; d++)
			if (tileof(g, T->d[d].ax) > 1 || pct(g, 30))
				ax[n++] = T->d[d].ax;
		if (!n)
			ax[n++] = T->d[0].ax;
		nb = new_buf(g, pct(g, 60) ? T->t : rand_like(g, T->t), has(g, PG_SHARED) && pct(g, 30), n, ax);
		if (nb < 0)
			return -1;
		nest_open(g, &N, has(g, PG_LOOP) && bf_elems(g, &g->b[nb]) <= 128 && pct(g, 10), n, ax);
		N.tb[N.ntb++] = nb;
		g->fit = T->t;
		nest_body(g);
		g->fit = DT_NONE;
		nest_close(g, &N);
		if (!inex_fits(g->b[nb].inex, T->t))
			return -1; /* (a compound store kept an old inexact value: another writer follows) */
		cand[nc++] = nb;
	}
	bi = cand[rn(g, nc)];
	if (!ten_spans(g, T, &g->b[bi], span))
		return -1;
	for (d = 0; d < T->n; d++)
		if (!span[d] && tileof(g, T->d[d].ax) > 1)
			fixed[d] = rn(g, tileof(g, T->d[d].ax));
	line(g, "copy(%s, %s);", g->b[bi].name, ten_region(g, T, span, fixed));
	T->written = 1;
	if (T->role == R_SCRATCH) {
		T->inex |= inex_to(g->b[bi].inex, T->t);
		T->mag = bmag(&g->b[bi]);
	}
	return 0;
}

static int
op_copybb(G *g)
{
	int cand[MAXB], nc = 0, i, si, di = -1;
	Bf *S;

	for (i = 0; i < g->nb; i++)
		if (g->b[i].def && (g->b[i].ax[0] < 0 || g->ax[g->b[i].ax[0]].kind != AX_LOOP || g->kopen))
			cand[nc++] = i;
	if (!nc)
		return -1;
	si = cand[rn(g, nc)];
	S = &g->b[si];
	for (i = 0; i < g->nb; i++)
		if (i != si && !g->b[i].gemm && g->b[i].n == S->n && isflt(g->b[i].t) == isflt(S->t) &&
		    !memcmp(g->b[i].ax, S->ax, sizeof(int) * (size_t)S->n) && pct(g, 30))
			di = i;
	if (di < 0) {
		int sh = has(g, PG_SHARED) ? (S->shared ? pct(g, 15) : pct(g, 60)) : 0;

		di = new_buf(g, pct(g, 60) ? S->t : rand_like(g, S->t), sh, S->n, S->ax);
		if (di < 0)
			return -1;
	}
	S = &g->b[si];
	line(g, "copy(%s, %s);", S->name, g->b[di].name);
	g->b[di].def = 1;
	g->b[di].inex = inex_to(S->inex, g->b[di].t);
	g->b[di].mag = S->mag;
	if (!isflt(g->b[di].t) && isflt(S->t)) {
		/* a float -> integer copy: only of exact values in range */
		if (S->inex || S->mag > 1e6)
			g->b[di].def = 0;
	}
	return 0;
}

static Ev
fill_value(G *g, DType t)
{
	Nest *N = g->nest;
	Ev e;

	g->nest = NULL;
	if (pct(g, 50) || isnarrowint(t)) {
		e = isflt(t) ? lit_flt(g) : lit_int(g, isnarrowint(t) ? 0 : -5, 9);
	} else {
		e = gexp(g, isflt(t) ? CF : CI, 2, 1);
		if (isflt(t))
			e = fclamp(g, e, 1000);
		else
			e = ired(g, e, 1 << 16);
	}
	g->nest = N;
	return e;
}

static int
op_fill(G *g)
{
	int bi, ax[3], n;

	if (has(g, PG_SLICE) && pct(g, 35)) {
		/* part of a defined buffer */
		int cand[MAXB], nc = 0, i, d;
		Bf *B;
		Buf r;
		Ev v;

		for (i = 0; i < g->nb; i++)
			if (g->b[i].def && !g->b[i].gemm && bf_ntile(g, &g->b[i]))
				cand[nc++] = i;
		if (!nc)
			return -1;
		B = &g->b[cand[rn(g, nc)]];
		buf_init(&r);
		for (d = 0; d < B->n; d++) {
			int T = tileof(g, B->ax[d]), lo = rn(g, T), hi = lo + 1 + rn(g, T - lo);

			buf_printf(&r, "%s%d : %d", d ? ", " : "", lo, hi);
		}
		v = fill_value(g, B->t);
		line(g, "fill(%s[%s], %s);", B->name, buf_str(&r), v.s);
		buf_free(&r);
		if (v.mag > B->mag)
			B->mag = v.mag;
		return 0;
	}
	n = pick_axes(g, ax);
	if (!n)
		return -1;
	bi = new_buf(g, rand_type(g, 0), has(g, PG_SHARED) && pct(g, 30), n, ax);
	if (bi < 0)
		return -1;
	if (pct(g, 35)) {
		line(g, "clear(%s);", g->b[bi].name);
		g->b[bi].mag = 0;
	} else {
		Ev v = fill_value(g, g->b[bi].t);

		line(g, "fill(%s, %s);", g->b[bi].name, v.s);
		g->b[bi].mag = v.mag;
	}
	g->b[bi].def = 1;
	g->b[bi].inex = 0;
	return 0;
}

static int
op_reduce(G *g)
{
	static const char *const ops[] = {"sum", "max", "min", "absmax"};
	int cand[MAXB], nc = 0, i, si, d, dax[3], dn = 0, di = -1, op, clear = 1;
	Bf *S;
	DType t;

	for (i = 0; i < g->nb; i++)
		if (g->b[i].def && bf_ntile(g, &g->b[i]) >= 1)
			cand[nc++] = i;
	if (!nc)
		return -1;
	si = cand[rn(g, nc)];
	S = &g->b[si];
	/* a dim of extent > 1 */
	do
		d = rn(g, S->n);
	while (tileof(g, S->ax[d]) <= 1);
	for (i = 0; i < S->n; i++)
		if (i != d)
			dax[dn++] = S->ax[i];
	if (!dn)
		dax[dn++] = -1;
	op = rn(g, 4);
	if (!isflt(S->t) && pct(g, 65))
		return -1; /* integer reduces are rarer (tilec does not lower them yet) */
	if (!isflt(S->t) && op == 0 && S->mag * tileof(g, S->ax[d]) > 1e9)
		op = 1 + rn(g, 3);
	if (S->t == DT_I32 && op == 3 && S->mag > 1e9)
		op = 1;
	/* the destination: a defined buffer of the shape (clear = false folds its contents in) */
	for (i = 0; i < g->nb; i++)
		if (i != si && !g->b[i].gemm && g->b[i].n == dn && !memcmp(g->b[i].ax, dax, sizeof(int) * (size_t)dn) &&
		    g->b[i].def && isflt(g->b[i].t) == isflt(S->t) && pct(g, 30))
			di = i;
	if (di >= 0 && pct(g, 60))
		clear = 0;
	if (di < 0) {
		t = pct(g, 60) ? S->t : isflt(S->t) ? DT_F32 : has(g, PG_INT) ? DT_I32 : S->t;
		if (S->t == DT_I32 || (!isflt(S->t) && op == 0))
			t = has(g, PG_INT) ? DT_I32 : S->t;
		di = new_buf(g, t, has(g, PG_SHARED) && pct(g, S->shared ? 40 : 5), dn, dax);
		if (di < 0)
			return -1;
	}
	S = &g->b[si];
	{
		Buf a;

		buf_init(&a);
		buf_printf(&a, "reduce(%s, %s, op = %s", S->name, g->b[di].name, ops[op]);
		if (pct(g, 70) || d != S->n - 1)
			buf_printf(&a, ", dim = %d", pct(g, 25) ? d - S->n : d);
		if (!clear)
			buf_puts(&a, ", clear = false");
		else if (pct(g, 15))
			buf_puts(&a, ", clear = true");
		line(g, "%s);", buf_str(&a));
		buf_free(&a);
	}
	{
		Bf *D = &g->b[di];
		double m = op == 0 ? S->mag * tileof(g, S->ax[d]) : S->mag;

		if (!clear)
			m += D->mag;
		D->mag = isflt(D->t) && m > 1e7 ? 1e7 : m;
		D->inex = S->inex | (!clear && D->inex) | (op == 0 && isflt(S->t));
		if (isflt(S->t) && op == 0)
			D->inex = 1;
		if (!isflt(D->t) && (isflt(S->t) && (S->inex || op == 0)))
			D->inex = 1; /* an integer of an inexact value: it must not be used (treated as inexact) */
		D->inex = inex_to(D->inex, D->t);
		D->def = 1;
	}
	return 0;
}

/* ---- control flow ------------------------------------------------------------------------ */

static int
op_if(G *g)
{
	Saved before, then;
	Ev c = uniform_cond(g);
	int i, els = pct(g, 50);

	save(g, &before);
	line(g, "if (%s) {", c.s);
	g->ind++;
	g->depth++;
	g->in_if++;
	gen_ops(g, 1 + rn(g, 2));
	g->ind--;
	save(g, &then);
	for (i = 0; i < g->nb; i++)
		g->b[i].def = before.def[i];
	if (els) {
		line(g, "} else {");
		g->ind++;
		gen_ops(g, 1 + rn(g, 2));
		g->ind--;
	}
	line(g, "}");
	g->depth--;
	g->in_if--;
	for (i = 0; i < g->nb; i++) {
		int e = els ? g->b[i].def : before.def[i];

		g->b[i].def = before.def[i] || (then.def[i] && e);
		if (then.mag[i] > g->b[i].mag)
			g->b[i].mag = then.mag[i];
		g->b[i].inex |= then.inex[i];
	}
	return 0;
}

static int
op_loop(G *g)
{
	int ext = 1 + rn(g, 3), lo = 0, i;
	Saved before;
	LV *v;

	if (g->nlv >= MAXLV)
		return -1;
	save(g, &before);
	v = &g->lv[g->nlv++];
	snprintf(v->name, sizeof v->name, "t%d", ++g->uniq % 100000);
	v->ext = ext;
	if (pct(g, 30)) {
		lo = rn(g, 3) - 1;
		line(g, "for %s in range(%d, %d) {", v->name, lo, lo + ext);
		v->ext = lo + ext > 1 ? lo + ext : 1;
	} else {
		line(g, "for %s in range(%d) {", v->name, ext);
	}
	g->ind++;
	g->depth++;
	gen_ops(g, 1 + rn(g, 2));
	g->depth--;
	g->ind--;
	line(g, "}");
	g->nlv--;
	for (i = 0; i < g->nb; i++)
		if (g->b[i].mag > before.mag[i])
			g->b[i].mag = before.mag[i] + (g->b[i].mag - before.mag[i]) * ext;
	return 0;
}

/* ---- the K loop ----------------------------------------------------------------------------- */

static void
kloop_open(G *g, int gemm_style)
{
	Axis *K = AX(g, g->kax);
	const char *ko = pct(g, 50) ? "ko" : pct(g, 50) ? "kb" : "step";
	char ext[64];

	if (K->sym >= 0)
		snprintf(ext, sizeof ext, K->assumed && pct(g, 60) ? "%s / %s" : "cdiv(%s, %s)", K->size,
			 K->tiletxt);
	else
		snprintf(ext, sizeof ext, "%lld", (long long)((K->csize + K->tile - 1) / K->tile));
	if (has(g, PG_PIPE) && ((gemm_style && pct(g, 80)) || pct(g, 60) || !has(g, PG_LOOP)))
		line(g, "for %s in pipeline(%s, stages = %d) {", ko, ext, 1 + rn(g, 4));
	else
		line(g, "for %s in range(%s) {", ko, ext);
	g->ind++;
	if (has(g, PG_LET) && pct(g, 50)) {
		line(g, "let kk = %s * %s;", ko, K->tiletxt);
		snprintf(K->origin, sizeof K->origin, "kk");
	} else {
		char o[48];

		snprintf(o, sizeof o, "%s * %s", ko, K->tiletxt);
		memcpy(K->origin, o, sizeof o);
	}
	g->kopen = 1;
}

static void
kloop_close(G *g)
{
	Axis *K = AX(g, g->kax);

	g->ind--;
	line(g, "}");
	K->origin[0] = 0;
	g->kopen = 0;
}

/* buffers first defined inside the K loop are not defined after it (it may run no step) */
static void
kloop_restore(G *g, const Saved *before)
{
	int i;

	for (i = 0; i < g->nb; i++)
		g->b[i].def = before->def[i];
}

/* the accumulating K loop: accumulators cleared before, loads and accumulating nests inside */
static int
op_kloop(G *g)
{
	Saved before;
	int acc[3], nacc = 0, i, ax[3], n = 0, a;

	if (g->kax < 0 || g->kopen || g->nest)
		return -1;
	/* accumulators over (some grid axes, K) */
	for (a = 0; a < g->nax; a++)
		if (a != g->kax && n < 2 && pct(g, 85))
			ax[n++] = a;
	ax[n++] = g->kax;
	for (i = 0; i < 1 + rn(g, 2); i++) {
		int bi = new_buf(g, pct(g, 70) ? DT_F32 : rand_type(g, 0), has(g, PG_SHARED) && pct(g, 20), n, ax);

		if (bi < 0)
			break;
		if (pct(g, 50))
			line(g, "clear(%s);", g->b[bi].name), g->b[bi].mag = 0;
		else {
			Ev v = fill_value(g, g->b[bi].t);

			line(g, "fill(%s, %s);", g->b[bi].name, v.s);
			g->b[bi].mag = v.mag;
		}
		g->b[bi].def = 1;
		acc[nacc++] = bi;
	}
	save(g, &before);
	kloop_open(g, 0);
	g->depth++;
	op_load(g);
	if (pct(g, 50))
		op_load(g);
	/* accumulate */
	{
		Nest N;

		nest_open(g, &N, 0, n, ax);
		for (i = 0; i < nacc; i++)
			N.tb[N.ntb++] = acc[i];
		{
			int k;

			for (k = 0; k < N.ntb; k++) {
				Bf *B = &g->b[N.tb[k]];
				Ev v = gvalue(g, B->t);
				int d;
				Buf ix;

				buf_init(&ix);
				for (d = 0; d < B->n; d++)
					buf_printf(&ix, "%s%s", d ? ", " : "", N.var[d]);
				if (!isflt(B->t))
					v = ired(g, v, 1 << 16);
				else
					v = fclamp(g, v, 1000);
				if (isnarrowint(B->t))
					line(g, "%s[%s] = i32(%s[%s]) + %s;", B->name, buf_str(&ix), B->name, buf_str(&ix), v.s);
				else
					line(g, "%s[%s] += %s;", B->name, buf_str(&ix), v.s);
				buf_free(&ix);
				B->mag += v.mag * 16;
				B->inex = inex_to(B->inex | v.inex, B->t);
				N.wrote[N.tb[k]] = 1;
			}
		}
		nest_close(g, &N);
	}
	gen_ops(g, rn(g, 2));
	g->depth--;
	kloop_close(g);
	kloop_restore(g, &before);
	for (i = 0; i < nacc; i++)
		g->b[acc[i]].def = 1;
	g->kloops++;
	return 0;
}

/* ---- combinations ------------------------------------------------------------------------- */

/* softmax-like: reduce max -> subtract (broadcast) -> exp -> reduce sum -> divide */
static int
op_softmax(G *g)
{
	int cand[MAXB], nc = 0, i, d, keep, mi, si;
	Bf *X;
	Nest N;
	const char *r[2];

	if (!has(g, PG_REDUCE))
		return -1;
	for (i = 0; i < g->nb; i++)
		if (g->b[i].def && !g->b[i].gemm && g->b[i].n == 2 && isflt(g->b[i].t) && bf_ntile(g, &g->b[i]) == 2)
			cand[nc++] = i;
	if (!nc)
		return -1;
	X = &g->b[cand[rn(g, nc)]];
	d = pct(g, 70) ? 1 : 0;
	keep = X->ax[1 - d];
	mi = new_buf(g, pct(g, 70) ? DT_F32 : X->t, has(g, PG_SHARED) && X->shared && pct(g, 50), 1, &keep);
	si = new_buf(g, DT_F32, has(g, PG_SHARED) && X->shared && pct(g, 50), 1, &keep);
	if (mi < 0 || si < 0)
		return -1;
	line(g, "reduce(%s, %s, op = max, dim = %d);", X->name, g->b[mi].name, d);
	nest_open(g, &N, 0, 2, X->ax);
	N.tb[N.ntb++] = (int)(X - g->b);
	r[0] = N.var[0], r[1] = N.var[1];
	if (has(g, PG_MATH))
		line(g, "%s[%s, %s] = exp(%s[%s, %s] - %s[%s]);", X->name, r[0], r[1], X->name, r[0], r[1],
		     g->b[mi].name, r[1 - d]);
	else
		line(g, "%s[%s, %s] = %s[%s, %s] - %s[%s];", X->name, r[0], r[1], X->name, r[0], r[1], g->b[mi].name,
		     r[1 - d]);
	nest_close(g, &N);
	line(g, "reduce(%s, %s, op = sum, dim = %d);", X->name, g->b[si].name, d);
	nest_open(g, &N, 0, 2, X->ax);
	N.tb[N.ntb++] = (int)(X - g->b);
	if (has(g, PG_MATH)) /* the row's largest element contributes exp(0) = 1: the sum is >= 1 */
		line(g, "%s[%s, %s] /= %s[%s];", X->name, N.var[0], N.var[1], g->b[si].name, N.var[1 - d]);
	else
		line(g, "%s[%s, %s] /= abs(%s[%s]) + 1.0;", X->name, N.var[0], N.var[1], g->b[si].name,
		     N.var[1 - d]);
	nest_close(g, &N);
	g->b[mi].def = g->b[si].def = 1;
	g->b[mi].inex = inex_to(X->inex, g->b[mi].t), g->b[mi].mag = X->mag;
	g->b[si].inex = inex_to(1 | X->inex, g->b[si].t), g->b[si].mag = X->mag * 300;
	X->inex = inex_to(1 | X->inex | g->b[mi].inex, X->t), X->mag = has(g, PG_MATH) ? 1 : X->mag * 2;
	return 0;
}

/* a transpose through shared memory: a tile in, read back transposed into a new buffer */
static int
op_transpose(G *g)
{
	int cand[MAXT], nc = 0, i, d, si, ri, sa[2], ra[2], span[3], fixed[3] = {0};
	Ten *T;
	Nest N;

	if (!has(g, PG_SHARED))
		return -1;
	for (i = 0; i < g->nt; i++) {
		int ta[3];

		if ((g->t[i].role == R_IN || (g->t[i].role == R_INOUT && !g->t[i].written)) && ten_in_scope(g, &g->t[i]) &&
		    ten_tileaxes(g, &g->t[i], ta) >= 2)
			cand[nc++] = i;
	}
	if (!nc)
		return -1;
	T = &g->t[cand[rn(g, nc)]];
	{
		int ta[3], n = ten_tileaxes(g, T, ta);

		sa[0] = ta[n - 2], sa[1] = ta[n - 1];
	}
	ra[0] = sa[1], ra[1] = sa[0];
	si = new_buf(g, T->t, 1, 2, sa);
	ri = new_buf(g, pct(g, 60) ? T->t : rand_like(g, T->t), pct(g, 20), 2, ra);
	if (si < 0 || ri < 0 || !g->b[si].shared)
		return -1;
	if (!ten_spans(g, T, &g->b[si], span))
		return -1;
	for (d = 0; d < T->n; d++)
		if (!span[d] && tileof(g, T->d[d].ax) > 1)
			fixed[d] = rn(g, tileof(g, T->d[d].ax));
	if (pct(g, 40)) {
		line(g, "annotate_layout(%s, padded);", g->b[si].name);
		g->b[si].lay = 1;
	}
	line(g, "copy(%s, %s);", ten_region(g, T, span, fixed), g->b[si].name);
	nest_open(g, &N, 0, 2, ra);
	N.tb[N.ntb++] = ri;
	if (isflt(g->b[ri].t) == isflt(T->t))
		line(g, "%s[%s, %s] = %s[%s, %s];", g->b[ri].name, N.var[0], N.var[1], g->b[si].name, N.var[1], N.var[0]);
	else
		line(g, "%s[%s, %s] = %s;", g->b[ri].name, N.var[0], N.var[1],
		     fmt(g, isflt(g->b[ri].t) ? "f32(%s[%s, %s])" : "%s[%s, %s]", g->b[si].name, N.var[1], N.var[0]));
	nest_close(g, &N);
	g->b[si].def = 1, g->b[si].mag = inmag(T->t);
	g->b[ri].inex = 0, g->b[ri].mag = inmag(T->t);
	return 0;
}

/* ---- random statements ------------------------------------------------------------------- */

/* an output tensor that may get its writer here: an in-place tensor only outside loops and ifs
 * (a later iteration would read what another thread wrote) */
static int
writable(G *g, const Ten *T)
{
	return T->role != R_IN && !T->written && ten_in_scope(g, T) && (T->role == R_OUT || g->depth == 0);
}

static int
any_unwritten(G *g)
{
	int i;

	for (i = 0; i < g->nt; i++)
		if (writable(g, &g->t[i]))
			return 1;
	return 0;
}

static void
op_one(G *g)
{
	int tries;

	for (tries = 0; tries < 8; tries++) {
		int k = rn(g, 100), r = -1;

		if (k < 18)
			r = op_load(g);
		else if (k < 48)
			r = op_nest(g, 0);
		else if (k < 56)
			r = op_fill(g);
		else if (k < 62)
			r = op_copybb(g);
		else if (k < 72 && has(g, PG_REDUCE))
			r = op_reduce(g);
		else if (k < 79 && has(g, PG_IF) && g->depth < 2)
			r = op_if(g);
		else if (k < 85 && has(g, PG_LOOP) && g->depth < 2)
			r = op_loop(g);
		else if (k < 90 && g->kax >= 0 && !g->kopen && g->depth < 2)
			r = op_kloop(g);
		else if (k < 92 && pct(g, 50))
			r = pct(g, 50) ? op_softmax(g) : op_transpose(g);
		else if (k < 95 && any_unwritten(g) && !g->in_if) {
			int i;

			for (i = 0; i < g->nt && r < 0; i++)
				if (writable(g, &g->t[i]))
					r = pct(g, 50) && has(g, PG_GLOBAL) ? op_nest(g, 1) : write_tensor(g, i);
		}
		if (r == 0)
			return;
	}
}

static void
gen_ops(G *g, int n)
{
	int i;

	for (i = 0; i < n; i++)
		op_one(g);
}

/* ---- geometry ----------------------------------------------------------------------------- */

static int
add_sym(G *g, const char *name)
{
	Sym *S = &g->sym[g->nsym];

	snprintf(S->name, sizeof S->name, "%s", name);
	return g->nsym++;
}

/* an axis; sym_name NULL: a constant size */
static int
add_axis(G *g, int kind, int tile, const char *sym_name, int64_t csize)
{
	Axis *A = &g->ax[g->nax];

	memset(A, 0, sizeof *A);
	A->kind = kind;
	A->tile = tile;
	A->sym = -1;
	snprintf(A->tiletxt, sizeof A->tiletxt, "%d", tile);
	if (kind == AX_WHOLE) {
		A->csize = tile;
		snprintf(A->size, sizeof A->size, "%d", tile);
	} else if (sym_name) {
		A->sym = add_sym(g, sym_name);
		snprintf(A->size, sizeof A->size, "%s", sym_name);
	} else {
		A->csize = csize;
		snprintf(A->size, sizeof A->size, "%lld", (long long)csize);
	}
	return g->nax++;
}

static const char *const symnames[] = {"M", "N", "P", "Q"};

static int
pick_tile(G *g, int rank, int pos)
{
	static const int t1[] = {32, 64, 96, 128, 192, 229, 256, 512, 100, 48};
	static const int t2[] = {2, 4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 1, 16, 32, 64};
	static const int t3[] = {1, 2, 4, 8, 16, 32, 2, 4};

	(void)pos;
	if (rank == 1)
		return t1[rn(g, (int)countof(t1))];
	if (rank == 2)
		return t2[rn(g, (int)countof(t2))];
	return t3[rn(g, (int)countof(t3))];
}

static void
set_origins(G *g)
{
	static const char *const bv[] = {"bx", "by", "bz"};
	int a;

	for (a = 0; a < g->nax; a++) {
		Axis *A = &g->ax[a];

		if (A->kind == AX_GRID) {
			const char *b = bv[A->gdim];
			char tt[sizeof A->tiletxt];

			/* a copy: the compiler cannot tell the fields of *A apart (-Wrestrict) */
			memcpy(tt, A->tiletxt, sizeof tt);
			if (A->tile == 1)
				snprintf(A->origin, sizeof A->origin, "%s", b);
			else if (pct(g, 20))
				snprintf(A->origin, sizeof A->origin, "%s * %s", tt, b);
			else
				snprintf(A->origin, sizeof A->origin, "%s * %s", b, tt);
		} else if (A->kind == AX_WHOLE) {
			snprintf(A->origin, sizeof A->origin, "0");
		}
	}
}

/* the grid clause from the grid axes; assumes */
static void
set_grid(G *g)
{
	int a;

	g->ngrid = 0;
	for (a = 0; a < g->nax; a++)
		if (g->ax[a].kind == AX_GRID && g->ax[a].gdim + 1 > g->ngrid)
			g->ngrid = g->ax[a].gdim + 1;
	for (a = 0; a < g->nax; a++) {
		Axis *A = &g->ax[a];
		char sz[sizeof A->size], tt[sizeof A->tiletxt];

		/* copies: the compiler cannot tell g's fields apart (-Wrestrict) */
		memcpy(sz, A->size, sizeof sz);
		memcpy(tt, A->tiletxt, sizeof tt);
		if (A->kind == AX_LOOP || A->kind == AX_GRID) {
			if (A->sym >= 0 && A->tile > 1 && has(g, PG_ASSUME) && pct(g, 25) && g->nassume < 4) {
				A->assumed = 1;
				snprintf(g->assume[g->nassume++], 64, "%s %% %s == 0", sz, tt);
			}
		}
		if (A->kind != AX_GRID)
			continue;
		if (A->tile == 1)
			snprintf(g->grid[A->gdim], 64, "%s", sz);
		else if (A->assumed && pct(g, 60))
			snprintf(g->grid[A->gdim], 64, "%s / %s", sz, tt);
		else if (A->sym < 0 && pct(g, 40))
			snprintf(g->grid[A->gdim], 64, "%lld", (long long)((A->csize + A->tile - 1) / A->tile));
		else
			snprintf(g->grid[A->gdim], 64, "cdiv(%s, %s)", sz, tt);
	}
	/* tile sizes as consts */
	if (pct(g, 40)) {
		static const char *const cn[] = {"BM", "BN", "BK", "BP", "BQ", "BW"};
		int k = 0;

		buf_puts(&g->cbuf, "const ");
		for (a = 0; a < g->nax; a++) {
			Axis *A = &g->ax[a];

			if (A->tile <= 1 || A->kind == AX_WHOLE)
				continue;
			buf_printf(&g->cbuf, "%s%s = %d", k ? ", " : "", cn[a], A->tile);
			snprintf(A->tiletxt, sizeof A->tiletxt, "%s", cn[a]);
			k++;
		}
		buf_puts(&g->cbuf, ";\n");
		if (!k)
			buf_reset(&g->cbuf);
	}
}

/* the grid axes: gdim from the innermost */
static void
assign_gdims(G *g)
{
	int a, k = 0;

	for (a = g->nax - 1; a >= 0; a--)
		if (g->ax[a].kind == AX_GRID)
			g->ax[a].gdim = k++;
}

static int
pick_threads(G *g, int64_t elems)
{
	static const int tv[] = {32, 64, 128, 256, 512};
	int t;

	do
		t = tv[rn(g, 5)];
	while (t > 32 && t > elems * 2 && pct(g, 80));
	return t;
}

static void
add_ten(G *g, const char *name, DType t, int role, int n, const TDim *d)
{
	Ten *T = &g->t[g->nt++];
	int i;

	memset(T, 0, sizeof *T);
	snprintf(T->name, sizeof T->name, "%s", name);
	T->t = t;
	T->role = role;
	T->n = n;
	for (i = 0; i < n; i++)
		T->d[i] = d[i];
}

static const char *const innames[] = {"A", "B", "X", "W", "Bias", "In", "Src", "U"};
static const char *const outnames[] = {"C", "Y", "Out", "Dst", "O2", "Res"};

/* TILE: element-wise, reduce, transpose programs over 1-3 axes */
static void
geo_tile(G *g)
{
	int rank = 1 + rn(g, 2), a, ngrid = 0, i, nin, nout, ni = 0, no = 0;
	int64_t elems = 1;

	if (has(g, PG_RANK3) && pct(g, 30))
		rank = 3;
	if (rank == 2 && pct(g, 30))
		rank = 2;
	for (a = 0; a < rank; a++) {
		int tile = pick_tile(g, rank, a), kind = AX_GRID;

		while (elems * tile > 8192)
			tile = tile > 1 ? tile / 2 : 1;
		if (a < rank - 1 || ngrid)
			if (pct(g, 25) && tile > 1)
				kind = AX_WHOLE;
		if (a == rank - 1 && !ngrid)
			kind = AX_GRID;
		if (kind == AX_GRID) {
			if (pct(g, 80) || tile == 1)
				add_axis(g, kind, tile, symnames[ngrid], 0);
			else
				add_axis(g, kind, tile, NULL, (int64_t)tile * (1 + rn(g, 3)) + (pct(g, 50) ? rn(g, tile) : 0));
			ngrid++;
		} else {
			add_axis(g, kind, tile, NULL, 0);
		}
		elems *= tile;
	}
	/* a batch axis over a 2-D tile */
	if (has(g, PG_RANK3) && rank == 2 && ngrid < 3 && pct(g, 20)) {
		memmove(&g->ax[1], &g->ax[0], sizeof(Axis) * (size_t)g->nax);
		g->nax++;
		memset(&g->ax[0], 0, sizeof(Axis));
		g->ax[0].kind = AX_GRID;
		g->ax[0].tile = 1;
		snprintf(g->ax[0].tiletxt, sizeof g->ax[0].tiletxt, "1");
		g->ax[0].sym = add_sym(g, "Bt");
		snprintf(g->ax[0].size, sizeof g->ax[0].size, "Bt");
		rank = 3;
	}
	assign_gdims(g);
	g->threads = pick_threads(g, elems);
	/* tensors */
	nin = 1 + rn(g, 3);
	nout = 1 + (pct(g, 30));
	for (i = 0; i < nin; i++) {
		TDim d[3];
		int n = 0;

		if (i > 0 && rank >= 2 && pct(g, 25)) {
			/* a vector along one axis (bias) */
			d[n].ax = rn(g, g->nax), d[n].whole = 0, n++;
		} else {
			for (a = 0; a < g->nax; a++)
				d[n].ax = a, d[n].whole = 0, n++;
			if (n == 2 && pct(g, 20)) {
				TDim t = d[0];

				d[0] = d[1], d[1] = t;
			}
		}
		add_ten(g, innames[ni++], rand_type(g, 0), R_IN, n, d);
	}
	for (i = 0; i < nout; i++) {
		TDim d[3];
		int n = 0, role = R_OUT;

		for (a = 0; a < g->nax; a++)
			if (g->ax[a].kind == AX_GRID || pct(g, 70))
				d[n].ax = a, d[n].whole = 0, n++;
		if (n == 2 && pct(g, 25)) {
			TDim t = d[0];

			d[0] = d[1], d[1] = t;
		}
		if (i == 0 && pct(g, 10)) {
			/* in place: the first input is also written */
			g->t[0].role = R_INOUT;
			continue;
		}
		add_ten(g, outnames[no++], rand_type(g, 0), role, n, d);
	}
	/* a scratch tensor over the same axes: written, then read back by other threads */
	if (has(g, PG_GLOBAL) && g->nt < MAXT && pct(g, 30)) {
		TDim d[3];
		int n = 0;

		for (a = 0; a < g->nax && n < 3; a++)
			d[n].ax = a, d[n].whole = 0, n++;
		add_ten(g, "Scr", pct(g, 50) ? DT_F32 : rand_type(g, 0), R_SCRATCH, n, d);
	}
}

/* KACC: a K loop accumulating tiles of inputs over a K axis */
static void
geo_kacc(G *g)
{
	int rows = pct(g, 50) ? 1 : 2, a, BK;
	static const int bks[] = {8, 16, 32, 64};
	int64_t elems = 1;
	TDim d[3];
	int n;

	for (a = 0; a < rows; a++) {
		int tile = pick_tile(g, 2, a);

		if (tile > 64)
			tile = 64;
		if (tile < 2)
			tile = 8;
		add_axis(g, AX_GRID, tile, symnames[a], 0);
		elems *= tile;
	}
	BK = bks[rn(g, 4)];
	while (elems * BK > 8192)
		BK /= 2;
	if (pct(g, 85))
		g->kax = add_axis(g, AX_LOOP, BK, "K", 0);
	else
		g->kax = add_axis(g, AX_LOOP, BK, NULL, (int64_t)BK * (1 + rn(g, 4)) + rn(g, BK));
	assign_gdims(g);
	g->threads = pick_threads(g, elems * BK);
	/* X[rows..., K], maybe a second input, outputs over the rows (and K tile as a whole dim) */
	n = 0;
	for (a = 0; a < rows; a++)
		d[n].ax = a, d[n].whole = 0, n++;
	d[n].ax = g->kax, d[n].whole = 0, n++;
	add_ten(g, "X", rand_type(g, 0), R_IN, n, d);
	if (pct(g, 50)) {
		d[0].ax = g->kax, d[0].whole = 0;
		if (rows == 2 && pct(g, 50)) {
			d[1].ax = 1, d[1].whole = 0;
			add_ten(g, "W", rand_type(g, 0), R_IN, 2, d);
		} else {
			add_ten(g, "W", rand_type(g, 0), R_IN, 1, d);
		}
	}
	n = 0;
	for (a = 0; a < rows; a++)
		d[n].ax = a, d[n].whole = 0, n++;
	if (pct(g, 50))
		d[n].ax = g->kax, d[n].whole = 1, n++;
	add_ten(g, "Y", rand_type(g, 0), R_OUT, n, d);
	if (pct(g, 40)) {
		n = 0;
		for (a = 0; a < rows; a++)
			d[n].ax = a, d[n].whole = 0, n++;
		add_ten(g, "Z", rand_type(g, 0), R_OUT, n, d);
	}
}

/* ---- gemm ----------------------------------------------------------------------------------- */

typedef struct GemmGeo {
	int am, an, ak;
	int ta, tb;           /* tensors A and B */
	DType ab;
	int trans_b;
	int single;           /* K is one tile: no loop */
} GemmGeo;

/* the warp partition gemm_plan picks for mma.sync (gen/layout/mma.c, square policy): n warps along N */
static int
mma_nwarp(int64_t M, int64_t N, int W)
{
	int m, best = -1;
	double bestscore = 0;

	for (m = 1; m <= W; m++) {
		int n = W / m;
		double score;

		if (W % m || M % (16 * (int64_t)m) || N % (8 * (int64_t)n))
			continue;
		score = fabs(((double)M / (16.0 * m)) / ((double)N / (8.0 * n)) - (double)M / (double)N);
		if (best < 0 || score < bestscore)
			best = m, bestscore = score;
	}
	return best < 0 ? -1 : W / best;
}

static void
geo_gemm(G *g, GemmGeo *q)
{
	static const int tv[] = {64, 128, 128, 128, 256, 32};
	int W, mw, nw, BM, BN, BK, tries = 0;
	TDim d[3];

	do {
		g->threads = tv[rn(g, 6)];
		W = g->threads / 32;
		mw = 1 << rn(g, 4);
		while (W % mw)
			mw /= 2;
		nw = W / mw;
		BM = 16 * mw * (1 << rn(g, 3));
		BN = 16 * nw * (1 << rn(g, 3));
		BK = 16 << rn(g, 3);
		tries++;
	} while ((BM > 128 || BN > 128 || (int64_t)BM * BN / g->threads > 128 || BM * BK > 8192 || BN * BK > 8192 ||
		  /* mma.sync emission wants whole 16-column pairs per warp (most of the time) */
		  (mma_nwarp(BM, BN, W) > 0 && (BN / (8 * mma_nwarp(BM, BN, W))) % 2 && tries < 90)) &&
		 tries < 100);
	if (tries >= 100)
		g->threads = 128, BM = 64, BN = 64, BK = 32;
	q->ab = pct(g, 60) ? DT_F16 : DT_BF16;
	q->trans_b = pct(g, 35);
	q->single = pct(g, 15) || !(has(g, PG_LOOP) || has(g, PG_PIPE));
	q->am = add_axis(g, AX_GRID, BM, "M", 0);
	if (pct(g, 80))
		q->an = add_axis(g, AX_GRID, BN, "N", 0);
	else
		q->an = add_axis(g, AX_WHOLE, BN, NULL, 0);
	if (q->single)
		q->ak = add_axis(g, AX_WHOLE, BK, NULL, 0), g->kax = -1;
	else if (pct(g, 85))
		q->ak = g->kax = add_axis(g, AX_LOOP, BK, "K", 0);
	else
		q->ak = g->kax = add_axis(g, AX_LOOP, BK, NULL, (int64_t)BK * (1 + rn(g, 4)) + (pct(g, 50) ? rn(g, BK) : 0));
	assign_gdims(g);
	d[0].ax = q->am, d[0].whole = 0, d[1].ax = q->ak, d[1].whole = 0;
	q->ta = g->nt;
	add_ten(g, "A", q->ab, R_IN, 2, d);
	if (q->trans_b)
		d[0].ax = q->an, d[1].ax = q->ak;
	else
		d[0].ax = q->ak, d[1].ax = q->an;
	q->tb = g->nt;
	add_ten(g, "B", q->ab, R_IN, 2, d);
	if (pct(g, 50)) {
		d[0].ax = q->an, d[0].whole = 0;
		add_ten(g, "Bias", pct(g, 50) ? DT_F32 : rand_type(g, 1), R_IN, 1, d);
	}
	d[0].ax = q->am, d[0].whole = 0, d[1].ax = q->an, d[1].whole = 0;
	add_ten(g, "C", pct(g, 40) ? DT_F32 : pct(g, 50) ? DT_F16 : rand_type(g, 1), R_OUT, 2, d);
	if (g->ax[q->an].kind == AX_WHOLE && pct(g, 40))
		add_ten(g, "Rowmax", DT_F32, R_OUT, 1, d);
}

static void
body_gemm(G *g, GemmGeo *q)
{
	int sa[2], sb[2], as, bs, acc, acc_ax[2], la = -1;
	Ten *TA = &g->t[q->ta], *TB = &g->t[q->tb];
	int span[3], fixed[3] = {0};
	Saved before;

	sa[0] = q->am, sa[1] = q->ak;
	if (q->trans_b)
		sb[0] = q->an, sb[1] = q->ak;
	else
		sb[0] = q->ak, sb[1] = q->an;
	as = new_buf(g, q->ab, 1, 2, sa);
	bs = new_buf(g, q->ab, 1, 2, sb);
	if (pct(g, 5))
		g->b[bs].shared = 0; /* a local operand (emission may refuse it) */
	acc_ax[0] = q->am, acc_ax[1] = q->an;
	acc = new_buf(g, DT_F32, 0, 2, acc_ax);
	g->b[as].gemm = g->b[bs].gemm = g->b[acc].gemm = 1;
	if (pct(g, 15)) {
		static const char *const sw[] = {"swizzle(128)", "swizzle(64)", "swizzle(32)", "padded"};
		int k = rn(g, 4);

		if (k < 3 && tileof(g, q->ak) * 2 < (k == 0 ? 128 : k == 1 ? 64 : 32))
			k = 3;
		line(g, "annotate_layout(%s, %s);", g->b[as].name, sw[k]);
		g->b[as].lay = 1;
	}
	if (!q->single) {
		if (pct(g, 50))
			line(g, "clear(%s);", g->b[acc].name);
		else
			line(g, "fill(%s, 0.0);", g->b[acc].name);
	}
	g->b[acc].def = 1;
	save(g, &before);
	if (!q->single)
		kloop_open(g, 1);
	/* the operand loads */
	if (pct(g, 10)) {
		la = new_buf(g, q->ab, 0, 2, sa);
		g->b[la].gemm = 1;
		ten_spans(g, TA, &g->b[la], span);
		line(g, "copy(%s, %s);", ten_region(g, TA, span, fixed), g->b[la].name);
		line(g, "copy(%s, %s);", g->b[la].name, g->b[as].name);
	} else {
		ten_spans(g, TA, &g->b[as], span);
		line(g, "copy(%s, %s);", ten_region(g, TA, span, fixed), g->b[as].name);
	}
	ten_spans(g, TB, &g->b[bs], span);
	line(g, "copy(%s, %s);", ten_region(g, TB, span, fixed), g->b[bs].name);
	g->b[as].def = g->b[bs].def = 1;
	g->b[as].mag = g->b[bs].mag = 8;
	if (pct(g, 12)) {
		/* scale an operand tile in shared memory before the gemm */
		Nest N;

		g->b[as].gemm = 0;
		nest_open(g, &N, 0, 2, sa);
		line(g, "%s[%s, %s] = %s[%s, %s] * %s;", g->b[as].name, N.var[0], N.var[1], g->b[as].name, N.var[0],
		     N.var[1], pct(g, 50) ? "0.5" : "2.0");
		nest_close(g, &N);
		g->b[as].gemm = 1;
	}
	line(g, "gemm(%s, %s, %s%s%s);", g->b[as].name, g->b[bs].name, g->b[acc].name,
	     q->trans_b ? ", trans_b = true" : "", q->single ? ", clear = true" : "");
	if (!q->single) {
		g->depth++;
		kloop_close(g);
		g->depth--;
	}
	g->b[as].def = g->b[bs].def = 0;
	if (la >= 0)
		g->b[la].def = 0;
	(void)before;
	g->b[acc].def = 1;
	g->b[acc].inex = 1;
	g->b[acc].mag = 64.0 * 64 * 4;
	g->b[acc].gemm = 0;
	/* the classic epilogue: scale, bias, relu */
	if (pct(g, 50)) {
		int bias = -1, i, c, bv = -1;
		Nest N;
		const char *bx;

		for (i = 0; i < g->nt; i++)
			if (!strcmp(g->t[i].name, "Bias"))
				bias = i;
		c = new_buf(g, pct(g, 50) ? DT_F32 : g->t[q->ta].t, 0, 2, acc_ax);
		if (bias >= 0 && !has(g, PG_GLOBAL)) {
			bv = new_buf(g, g->t[bias].t, has(g, PG_SHARED) && pct(g, 50), 1, &q->an);
			ten_spans(g, &g->t[bias], &g->b[bv], span);
			line(g, "copy(%s, %s);", ten_region(g, &g->t[bias], span, fixed), g->b[bv].name);
		}
		if (c >= 0) {
			nest_open(g, &N, 0, 2, acc_ax);
			N.tb[N.ntb++] = c;
			if (bias < 0)
				bx = "0.5";
			else if (bv >= 0)
				bx = fmt(g, "f32(%s[%s])", g->b[bv].name, N.var[1]);
			else
				bx = fmt(g, "f32(%s[%s])", g->t[bias].name, oplus(g, g->ax[q->an].origin, N.var[1]));
			line(g, "%s[%s, %s] = max(%s[%s, %s] * %s + %s, 0.0);", g->b[c].name, N.var[0], N.var[1],
			     g->b[acc].name, N.var[0], N.var[1], g->has_alpha ? g->alpha_name : "1.5", bx);
			nest_close(g, &N);
			g->b[c].inex = inex_to(1, g->b[c].t), g->b[c].mag = g->b[acc].mag * 4 + 8;
		}
	}
	/* epilogue */
	gen_ops(g, 1 + rn(g, g->maxops));
}

/* ---- the program ------------------------------------------------------------------------- */

static void
suggest_sizes(G *g, Buf *out)
{
	int set, i, a;
	static const double alphas[] = {0.5, -1.25, 2.0, 1.0, -0.75};
	static const int ns[] = {3, -2, 0, 7, 1, -5};

	for (i = 0; i < g->nsym; i++) {
		Axis *A = NULL;

		for (a = 0; a < g->nax; a++)
			if (g->ax[a].sym == i)
				A = &g->ax[a];
		if (!A)
			continue;
		for (set = 0; set < 3; set++) {
			int64_t T = A->tile, v, cap;

			cap = A->kind == AX_LOOP ? 6 * T : T * (g->ngrid >= 2 ? 4 : 8);
			if (cap > 700)
				cap = 700;
			if (cap < T)
				cap = T;
			if (T == 1) {
				v = 1 + set;
			} else if (A->assumed) {
				v = T * (set == 0 ? 1 : set == 1 ? 2 : 3);
				if (v > cap && set)
					v = T * 2;
			} else if (set == 0) {
				v = pct(g, 50) ? 1 : T > 2 ? 1 + rn(g, (int)T - 1) : 1;
			} else if (set == 1) {
				v = prime_near(g, T + 1, T + T / 2 + 1);
			} else {
				v = prime_near(g, cap / 2, cap);
			}
			if (v < 1)
				v = 1;
			A->assumed = A->assumed;
			g->sym[i].val[set] = v;
		}
	}
	for (set = 0; set < 3; set++) {
		int k = 0;

		if (set)
			buf_putc(out, ';');
		for (i = 0; i < g->nsym; i++)
			buf_printf(out, "%s%s=%lld", k++ ? "," : "", g->sym[i].name, (long long)g->sym[i].val[set]);
		if (g->has_alpha)
			buf_printf(out, "%s%s=%g", k++ ? "," : "", g->alpha_name, alphas[rn(g, 5)]);
		if (g->has_n)
			buf_printf(out, "%s%s=%d", k++ ? "," : "", g->n_name, ns[rn(g, 6)]);
	}
}

static void
print_dims(G *g, Buf *o, const Ten *T)
{
	int d;

	buf_printf(o, "%s: %s[", T->name, dtype_name(T->t));
	for (d = 0; d < T->n; d++) {
		const Axis *A = AX(g, T->d[d].ax);

		if (T->d[d].whole)
			buf_printf(o, "%s%d", d ? ", " : "", A->tile);
		else
			buf_printf(o, "%s%s", d ? ", " : "", A->size);
	}
	buf_putc(o, ']');
}

void
progen_options_init(ProgenOptions *o)
{
	memset(o, 0, sizeof *o);
	o->features = PG_ALL;
}

int
progen(uint64_t seed, const ProgenOptions *o, Buf *out, Err *e)
{
	G *g;
	int i, kind;
	GemmGeo q = {0};
	static const char *const knames[] = {"k", "kern", "fused", "main", "tile_op", "elementwise",
					     "softmax", "tl_kernel", "copy", "f"};
	Buf sizes, params;

	if (!out)
		return err_set(e, "progen: no output buffer");
	if (o && o->features & ~PG_ALL)
		return err_set(e, "progen: unknown feature bits 0x%x", o->features & ~PG_ALL);
	g = calloc(1, sizeof *g);
	if (!g)
		return err_set(e, "progen: out of memory");
	arena_init(&g->a);
	g->rs = seed * 0x2545f4914f6cdd1dull + 0x1234567;
	rnd64(g);
	g->f = o && o->features ? o->features : PG_ALL;
	g->maxops = o && o->max_ops > 0 ? o->max_ops : 6;
	g->maxdepth = o && o->max_depth > 0 ? o->max_depth : 4;
	g->kax = -1;
	g->fit = DT_NONE;
	buf_init(&g->body);
	buf_init(&g->decl);
	buf_init(&g->cbuf);
	buf_init(&sizes);
	buf_init(&params);
	snprintf(g->kname, sizeof g->kname, "%s", knames[rn(g, (int)countof(knames))]);
	/* the kind */
	{
		int w[3] = {50, has(g, PG_LOOP) || has(g, PG_PIPE) ? 20 : 0, has(g, PG_GEMM) ? 30 : 0};
		int r = rn(g, w[0] + w[1] + w[2]);

		kind = r < w[0] ? 0 : r < w[0] + w[1] ? 1 : 2;
	}
	if (has(g, PG_SCALAR)) {
		g->has_alpha = pct(g, 50);
		g->has_n = pct(g, 40);
		snprintf(g->alpha_name, sizeof g->alpha_name, "%s", pct(g, 80) ? "alpha" : "beta");
		snprintf(g->n_name, sizeof g->n_name, "%s", pct(g, 80) ? "n" : "cnt");
	}
	if (kind == 0) {
		g->kind = "tile";
		geo_tile(g);
	} else if (kind == 1) {
		g->kind = "kacc";
		geo_kacc(g);
	} else {
		g->kind = "gemm";
		geo_gemm(g, &q);
	}
	set_grid(g);
	set_origins(g);
	/* a block-level let for an origin */
	if (has(g, PG_LET) && pct(g, 25)) {
		int a = rn(g, g->nax);

		if (g->ax[a].kind == AX_GRID && g->ax[a].tile > 1) {
			line(g, "let o%d = %s;", a, g->ax[a].origin);
			snprintf(g->ax[a].origin, sizeof g->ax[a].origin, "o%d", a);
		}
	}
	g->ind = 1;
	if (g->body.len) {
		/* the let above was printed at indent 0 */
		char *s = buf_take(&g->body);

		buf_printf(&g->body, "    %s", s);
		free(s);
	}
	if (kind == 0) {
		gen_ops(g, 2 + rn(g, 2 * g->maxops));
	} else if (kind == 1) {
		gen_ops(g, rn(g, 2));
		op_kloop(g);
		gen_ops(g, 1 + rn(g, g->maxops));
	} else {
		body_gemm(g, &q);
	}
	/* every output gets its writer */
	for (i = 0; i < g->nt; i++)
		if (g->t[i].role != R_IN && !g->t[i].written) {
			if (has(g, PG_GLOBAL) && pct(g, 35))
				op_nest(g, 1);
			if (!g->t[i].written)
				write_tensor(g, i);
			if (!g->t[i].written && has(g, PG_GLOBAL))
				op_nest(g, 1);
		}
	/* the text */
	suggest_sizes(g, &sizes);
	buf_printf(out, "// progen seed=%llu kind=%s\n", (unsigned long long)seed, g->kind);
	buf_printf(out, "// sizes: %s\n", buf_str(&sizes));
	if (o && o->sizes) {
		buf_reset(o->sizes);
		buf_puts(o->sizes, buf_str(&sizes));
	}
	buf_puts(out, buf_str(&g->cbuf));
	/* parameters: tensors in a shuffled order, scalars among them */
	{
		int ord[MAXT + 2], np = 0, k;

		for (i = 0; i < g->nt; i++)
			ord[np++] = i;
		if (g->has_alpha)
			ord[np++] = 100;
		if (g->has_n)
			ord[np++] = 101;
		for (k = 0; k < np; k++) {
			int j = k + (pct(g, 40) ? rn(g, np - k) : 0), t = ord[k];

			ord[k] = ord[j], ord[j] = t;
		}
		for (k = 0; k < np; k++) {
			if (k)
				buf_puts(&params, ", ");
			if (ord[k] == 100)
				buf_printf(&params, "%s: f32", g->alpha_name);
			else if (ord[k] == 101)
				buf_printf(&params, "%s: i32", g->n_name);
			else
				print_dims(g, &params, &g->t[ord[k]]);
		}
	}
	buf_printf(out, "kernel %s(%s)\n    grid(", g->kname, buf_str(&params));
	for (i = 0; i < g->ngrid; i++)
		buf_printf(out, "%s%s", i ? ", " : "", g->grid[i][0] ? g->grid[i] : "1");
	buf_printf(out, ") threads(%d)\n{\n", g->threads);
	for (i = 0; i < g->nassume; i++)
		buf_printf(out, "    assume(%s);\n", g->assume[i]);
	buf_puts(out, buf_str(&g->decl));
	if (has(g, PG_LAYOUT))
		layout_notes(g, seed, out);
	buf_puts(out, buf_str(&g->body));
	buf_puts(out, "}\n");
	buf_free(&g->body);
	buf_free(&g->decl);
	buf_free(&g->cbuf);
	buf_free(&sizes);
	buf_free(&params);
	arena_free(&g->a);
	free(g);
	if (out->oom)
		return err_set(e, "progen: out of memory");
	return 0;
}

int
progen_sizes(const char *src, Buf *out)
{
	const char *p = strstr(src, "// sizes: "), *q;

	if (!p)
		return -1;
	p += strlen("// sizes: ");
	q = strchr(p, '\n');
	buf_reset(out);
	buf_putn(out, p, q ? (size_t)(q - p) : strlen(p));
	return 0;
}

static const char *const featnames[] = {"half", "fp8", "int", "math", "shared", "global", "slice", "loop",
					"if", "pipe", "reduce", "gemm", "rank3", "assume", "scalar", "let", "layout"};

const char *
progen_feature_name(unsigned bit)
{
	int i;

	for (i = 0; i < (int)countof(featnames); i++)
		if (bit == 1u << i)
			return featnames[i];
	return NULL;
}

int
progen_parse_features(const char *s, unsigned *out)
{
	unsigned f = 0;
	const char *p = s;

	while (*p) {
		const char *q = strchr(p, ',');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		int neg = 0, i, found = 0;

		if (n && *p == '-')
			neg = 1, p++, n--;
		if (n == 3 && !strncmp(p, "all", 3)) {
			f = neg ? 0 : PG_ALL;
			found = 1;
		}
		for (i = 0; !found && i < (int)countof(featnames); i++)
			if (strlen(featnames[i]) == n && !strncmp(p, featnames[i], n)) {
				f = neg ? f & ~(1u << i) : f | (1u << i);
				found = 1;
			}
		if (!found)
			return -1;
		p += n;
		if (*p == ',')
			p++;
	}
	*out = f;
	return 0;
}
