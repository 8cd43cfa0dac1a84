/*
 * emit_header.c: the build-time launcher header. Per kernel: its launch
 * contract as macros, a size check that computes the grid exactly as the
 * kernel's grid(...) (64-bit, floor division, overflow checked) and tests
 * the assume()s and vector row contracts, a driver-API launcher
 * (cuLaunchKernel) and, under nvcc, a runtime-API launcher (<<<...>>>).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_header.h"
#include "tmap.h"
#include "lower.h"

/* the helpers every header shares (guarded: several headers may meet in one file) */
static const char helpers[] =
	"#ifndef TILEC_LAUNCH_HELPERS\n"
	"#define TILEC_LAUNCH_HELPERS\n"
	"/* 64-bit integer arithmetic of grid and assume expressions as tilec evaluates them:\n"
	" * division and modulo round towards minus infinity; overflow, a zero divisor or a\n"
	" * shift out of range sets *bad */\n"
	"static inline long long\n"
	"tilec_h_add(long long a, long long b, int *bad)\n"
	"{\n"
	"\tif ((b > 0 && a > LLONG_MAX - b) || (b < 0 && a < LLONG_MIN - b)) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\treturn a + b;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_neg(long long a, int *bad)\n"
	"{\n"
	"\tif (a == LLONG_MIN) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\treturn -a;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_sub(long long a, long long b, int *bad)\n"
	"{\n"
	"\treturn tilec_h_add(a, tilec_h_neg(b, bad), bad);\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_mul(long long a, long long b, int *bad)\n"
	"{\n"
	"\tif (a == 0 || b == 0)\n"
	"\t\treturn 0;\n"
	"\tif (a > 0 ? (b > 0 ? a > LLONG_MAX / b : b < LLONG_MIN / a)\n"
	"\t          : (b > 0 ? a < LLONG_MIN / b : b < LLONG_MAX / a)) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\treturn a * b;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_div(long long a, long long b, int *bad)\n"
	"{\n"
	"\tlong long q;\n"
	"\n"
	"\tif (b == 0 || (a == LLONG_MIN && b == -1)) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\tq = a / b;\n"
	"\treturn a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_mod(long long a, long long b, int *bad)\n"
	"{\n"
	"\tlong long r;\n"
	"\n"
	"\tif (b == 0 || (a == LLONG_MIN && b == -1)) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\tr = a % b;\n"
	"\treturn r != 0 && (r < 0) != (b < 0) ? r + b : r;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_cdiv(long long a, long long b, int *bad)\n"
	"{\n"
	"\tif (b == 0) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\treturn tilec_h_div(tilec_h_add(a, tilec_h_sub(b, 1, bad), bad), b, bad);\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_shl(long long a, long long b, int *bad)\n"
	"{\n"
	"\tif (b < 0 || b > 62 || a < 0 || a > (LLONG_MAX >> b)) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\treturn a << b;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_shr(long long a, long long b, int *bad)\n"
	"{\n"
	"\tif (b < 0 || b > 63) {\n"
	"\t\t*bad = 1;\n"
	"\t\treturn 0;\n"
	"\t}\n"
	"\treturn a >> b;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_max(long long a, long long b)\n"
	"{\n"
	"\treturn a > b ? a : b;\n"
	"}\n"
	"\n"
	"static inline long long\n"
	"tilec_h_min(long long a, long long b)\n"
	"{\n"
	"\treturn a < b ? a : b;\n"
	"}\n"
	"\n"
	"/* a grid of g[0] x g[1] x g[2] blocks into out; -1 if a dimension is out of the\n"
	" * hardware's range (x < 2^31, y and z < 2^16) */\n"
	"static inline int\n"
	"tilec_h_grid(const long long g[3], unsigned out[3])\n"
	"{\n"
	"\tif (g[0] < 0 || g[0] > 2147483647LL || g[1] < 0 || g[1] > 65535 || g[2] < 0 ||\n"
	"\t    g[2] > 65535)\n"
	"\t\treturn -1;\n"
	"\tout[0] = (unsigned)g[0];\n"
	"\tout[1] = (unsigned)g[1];\n"
	"\tout[2] = (unsigned)g[2];\n"
	"\treturn 0;\n"
	"}\n"
	"#endif /* TILEC_LAUNCH_HELPERS */\n";

enum { SMEM_STATIC_MAX = 48 * 1024 };

/* what the emitted CUDA C says about one kernel */
typedef struct Contract {
	long long threads, smem;
	int ndiv;
	const char *divsym[16];
	long long divby[16];
	TmapDesc maps[16];   /* the tensor maps the kernel takes after its sizes */
	int nmap;
	int persistent;      /* "// kernel K: persistent: ...": blocks loop over the tiles */
} Contract;

typedef struct Hd {
	Arena *a;
	const IrKernel *k;
	Buf *o;
	Err *err;
	const char *up;    /* the kernel name in capitals */
	Contract c;
} Hd;

/* the C type of a scalar parameter: host API (driver) or device (nvcc) */
static const char *
sctype(DType t, int dev)
{
	switch (t) {
	case DT_F16: return dev ? "tl_half_t" : "unsigned short";
	case DT_BF16: return dev ? "tl_bf16_t" : "unsigned short";
	case DT_F32: return "float";
	case DT_F64: return "double";
	case DT_I32: return "int";
	case DT_INT: return "long long";
	case DT_I8: return "signed char";
	case DT_U8: case DT_FP8E4M3: case DT_FP8E5M2: return "unsigned char";
	case DT_BOOL: return dev ? "bool" : "int";
	default: return NULL;
	}
}

/* the kernel's comment and checks in the CUDA C: "// kernel NAME: T threads, B bytes" and
 * the `if (S % V != 0) __trap();` lines before its body */
static int
contract(Hd *h, const char *cuda)
{
	static const char tag[] = "// kernel ";
	const char *p, *end, *q;
	size_t nl = strlen(h->k->name);
	char sym[64];
	long long v;
	int i, n;

	for (p = strstr(cuda, tag); p; p = strstr(p + 1, tag)) {
		if ((p == cuda || p[-1] == '\n') && !strncmp(p + sizeof tag - 1, h->k->name, nl) &&
		    p[sizeof tag - 1 + nl] == ':')
			break;
	}
	if (!p)
		return err_set(h->err, "kernel '%s': not found in the CUDA C", h->k->name);
	p += sizeof tag - 1 + nl;
	if (sscanf(p, ": %lld threads, %lld bytes of dynamic shared memory", &h->c.threads,
		   &h->c.smem) != 2)
		return err_set(h->err, "kernel '%s': no launch contract in the CUDA C", h->k->name);
	/* the contract is the block every launch uses: the program's threads, or more (a producer warpgroup) */
	if (h->c.threads < h->k->threads || h->c.threads < 1 || h->c.threads > 1024 || h->c.smem < 0)
		return err_set(h->err, "kernel '%s': bad launch contract (%lld threads, %lld bytes)",
			       h->k->name, h->c.threads, h->c.smem);
	{
		/* the persistent schedule's line, after the contract (tilec_options.persistent) */
		const char *e = strchr(p, '\n');

		h->c.persistent = e && !strncmp(e + 1, tag, sizeof tag - 1) &&
				  !strncmp(e + sizeof tag, h->k->name, nl) && !strncmp(e + sizeof tag + nl, ": persistent: ", 14);
	}
	if ((h->c.nmap = tmap_parse(cuda, h->k->name, h->c.maps, 16)) < 0)
		return err_set(h->err, "kernel '%s': a malformed tensor-map line in the CUDA C", h->k->name);
	/* the checks sit between the signature and the first declaration of the body */
	end = strstr(p, "\tconst int tid");
	q = strstr(p, "\n}\n");
	if (!end || (q && q < end))
		end = q ? q : p + strlen(p);
	for (q = strstr(p, "\tif ("); q && q < end; q = strstr(q + 1, "\tif (")) {
		n = 0;
		if (sscanf(q, "\tif (%63[A-Za-z0-9_] %% %lld != 0)%n", sym, &v, &n) != 2 || !n)
			continue;
		/* the next line must be the trap */
		if (q[n] != '\n' || strncmp(q + n + 1 + strspn(q + n + 1, "\t "), "__trap();", 9))
			continue;
		for (i = 0; i < h->k->nsize; i++)
			if (!strcmp(h->k->sizes[i]->name, sym))
				break;
		if (i == h->k->nsize || v < 1)
			return err_set(h->err, "kernel '%s': check on '%s' in the CUDA C is not a size",
				       h->k->name, sym);
		/* S % 8 == 0 implies S % 2 == 0: keep the strongest check of a size only */
		for (i = 0; i < h->c.ndiv; i++)
			if (!strcmp(h->c.divsym[i], sym) && (h->c.divby[i] % v == 0 || v % h->c.divby[i] == 0))
				break;
		if (i < h->c.ndiv) {
			if (v > h->c.divby[i])
				h->c.divby[i] = v;
			continue;
		}
		if (h->c.ndiv == (int)countof(h->c.divsym))
			return err_set(h->err, "kernel '%s': too many size checks", h->k->name);
		h->c.divsym[h->c.ndiv] = arena_strdup(h->a, sym);
		h->c.divby[h->c.ndiv++] = v;
	}
	return 0;
}

/* an integer expression of sizes and integer scalars as C over long long; the
 * helpers set tilec_bad where ir_eval_int fails */
static int
hexpr(Hd *h, Buf *b, const IrExpr *x)
{
	static const char *bh[BIN_COUNT] = {
		[BIN_ADD] = "tilec_h_add", [BIN_SUB] = "tilec_h_sub", [BIN_MUL] = "tilec_h_mul",
		[BIN_DIV] = "tilec_h_div", [BIN_MOD] = "tilec_h_mod", [BIN_SHL] = "tilec_h_shl",
		[BIN_SHR] = "tilec_h_shr",
	};
	BinOp op;

	if (dtype_is_float(x->type))
		return err_set(h->err, "%s:%d:%d: a float expression cannot be evaluated on the host",
			       x->loc.file ? x->loc.file : "<input>", x->loc.line, x->loc.col);
	switch (x->kind) {
	case IE_INT:
	case IE_BOOL:
		if (x->u.i == INT64_MIN)
			buf_puts(b, "(-9223372036854775807LL - 1)");
		else
			buf_printf(b, "%lldLL", (long long)x->u.i);
		return 0;
	case IE_VAR:
		if (x->u.var->kind != VAR_SIZE && x->u.var->kind != VAR_SCALAR)
			break;
		buf_printf(b, "(long long)%s", x->u.var->name);
		return 0;
	case IE_CAST:
		if (!dtype_is_int(x->type) && x->type != DT_BOOL)
			break;
		return hexpr(h, b, x->u.cast.a);
	case IE_UNARY:
		buf_puts(b, x->u.un.op == UN_NEG ? "tilec_h_neg(" : x->u.un.op == UN_NOT ? "(!" : "(~");
		if (hexpr(h, b, x->u.un.a))
			return -1;
		buf_puts(b, x->u.un.op == UN_NEG ? ", &tilec_bad)" : ")");
		return 0;
	case IE_SELECT:
		buf_puts(b, "(");
		if (hexpr(h, b, x->u.sel.c))
			return -1;
		buf_puts(b, " ? ");
		if (hexpr(h, b, x->u.sel.a))
			return -1;
		buf_puts(b, " : ");
		if (hexpr(h, b, x->u.sel.b))
			return -1;
		buf_puts(b, ")");
		return 0;
	case IE_CALL:
		if (x->u.call.n != 2 || (x->u.call.fn != FN_CDIV && x->u.call.fn != FN_MAX &&
					 x->u.call.fn != FN_MIN))
			break;
		buf_puts(b, x->u.call.fn == FN_CDIV ? "tilec_h_cdiv(" : x->u.call.fn == FN_MAX
			 ? "tilec_h_max(" : "tilec_h_min(");
		if (hexpr(h, b, x->u.call.args[0]))
			return -1;
		buf_puts(b, ", ");
		if (hexpr(h, b, x->u.call.args[1]))
			return -1;
		buf_puts(b, x->u.call.fn == FN_CDIV ? ", &tilec_bad)" : ")");
		return 0;
	case IE_BINARY:
		op = x->u.bin.op;
		if (op < 0 || op >= BIN_COUNT)
			break;
		buf_puts(b, bh[op] ? bh[op] : "(");
		if (bh[op])
			buf_putc(b, '(');
		if (op == BIN_LAND || op == BIN_LOR)
			buf_putc(b, '(');
		if (hexpr(h, b, x->u.bin.a))
			return -1;
		/* && and || evaluate both sides, as tilec does (a failure on either side fails) */
		if (bh[op])
			buf_puts(b, ", ");
		else if (op == BIN_LAND || op == BIN_LOR)
			buf_printf(b, " != 0) %s (", op == BIN_LAND ? "&" : "|");
		else
			buf_printf(b, " %s ", binop_name(op));
		if (hexpr(h, b, x->u.bin.b))
			return -1;
		buf_puts(b, bh[op] ? ", &tilec_bad)" : op == BIN_LAND || op == BIN_LOR ? " != 0))" : ")");
		return 0;
	default:
		break;
	}
	return err_set(h->err, "%s:%d:%d: only integer expressions of sizes and integer scalars "
		       "can be evaluated on the host", x->loc.file ? x->loc.file : "<input>",
		       x->loc.line, x->loc.col);
}

enum { A_DRV, A_DEV, A_NAMES, A_SCAL, A_SCALNAMES };

/* the kernel's arguments in order (params, then sizes) as a list, comma-separated,
 * preceded by ", " unless first: A_DRV / A_DEV declarations for the driver API and for
 * nvcc, A_NAMES the names, A_SCAL / A_SCALNAMES the same without tensors. The count. */
static int
arglist(Hd *h, Buf *b, int mode, int first)
{
	const IrKernel *k = h->k;
	int i, n = 0, decl = mode == A_DRV || mode == A_DEV || mode == A_SCAL;

	for (i = 0; i < k->nparam; i++) {
		const IrParam *P = &k->params[i];
		const char *t = "";

		if (P->is_tensor && (mode == A_SCAL || mode == A_SCALNAMES))
			continue;
		if (decl && P->is_tensor)
			t = mode == A_DRV ? "CUdeviceptr " : arena_printf(h->a, "%s *", sctype(P->dtype, 1));
		else if (decl)
			t = arena_printf(h->a, "%s ", sctype(P->dtype, mode == A_DEV));
		buf_printf(b, "%s%s%s", first && !n ? "" : ", ", t, P->name);
		n++;
	}
	for (i = 0; i < k->nsize; i++) {
		buf_printf(b, "%s%s%s", first && !n ? "" : ", ", decl ? "int " : "", k->sizes[i]->name);
		n++;
	}
	return n;
}

/* tilec_K_dims: the checks and the grid */
/* is size symbol v a stride of some tensor and no tensor's dim? (then it must be >= 1) */
static int
stride_only(const IrKernel *k, const IrVar *v)
{
	int b, d, st = 0;

	for (b = 0; b < k->nbuf; b++)
		for (d = 0; d < k->bufs[b].ndim; d++) {
			if (k->bufs[b].dims[d].sym == v)
				return 0;
			st |= k->bufs[b].strides && k->bufs[b].strides[d].sym == v;
		}
	return st;
}

static int
dims(Hd *h)
{
	const IrKernel *k = h->k;
	Buf *o = h->o;
	int i;

	buf_printf(o, "/* %s: the grid for these sizes into tilec_grid; -1 if a size is negative, the grid\n"
		   " * is out of range, an assume() fails or a row is not a whole number of vectors%s */\n",
		   k->name, h->c.persistent ? "\n * (persistent: the grid of tiles; the launchers run min(X * Y, SMs * blocks per SM) x 1 x Z\n"
		   " * blocks, each looping over tiles)" : "");
	buf_printf(o, "static inline int\ntilec_%s_dims(", k->name);
	buf_puts(o, arglist(h, o, A_SCAL, 1) ? ", " : "");
	buf_puts(o, "unsigned tilec_grid[3])\n{\n");
	buf_puts(o, "\tint tilec_bad = 0;\n\tlong long tilec_g[3];\n\n");
	for (i = 0; i < k->nparam; i++)
		if (!k->params[i].is_tensor)
			buf_printf(o, "\t(void)%s;\n", k->params[i].name);
	for (i = 0; i < k->nsize; i++)
		buf_printf(o, "\tif (%s < %d)\n\t\treturn -1;%s\n", k->sizes[i]->name,
			   stride_only(k, k->sizes[i]), stride_only(k, k->sizes[i]) ? " /* a stride: at least 1 */" : "");
	for (i = 0; i < h->c.ndiv; i++)
		buf_printf(o, "\tif (%s %% %lld != 0)\n\t\treturn -1; /* %lld-element vectors need whole "
			   "rows */\n", h->c.divsym[i], h->c.divby[i], h->c.divby[i]);
	for (i = 0; i < k->nassume; i++) {
		Buf t;
		Err save = *h->err;

		buf_init(&t);
		if (hexpr(h, &t, k->assumes[i])) {
			/* an assume over floats stays unchecked: say so */
			*h->err = save;
			buf_printf(o, "\t/* assume() at line %d is not an integer expression: not "
				   "checked */\n", k->assumes[i]->loc.line);
		} else {
			buf_printf(o, "\tif (!%s) /* assume() at line %d */\n\t\treturn -1;\n", buf_str(&t),
				   k->assumes[i]->loc.line);
		}
		buf_free(&t);
	}
	for (i = 0; i < 3; i++) {
		buf_printf(o, "\ttilec_g[%d] = ", i);
		if (i < k->ngrid) {
			if (hexpr(h, o, k->grid[i]))
				return -1;
		} else {
			buf_puts(o, "1");
		}
		buf_puts(o, ";\n");
	}
	buf_puts(o, "\tif (tilec_bad)\n\t\treturn -1;\n\treturn tilec_h_grid(tilec_g, tilec_grid);\n}\n\n");
	return 0;
}

/* the launcher's C for map dimension d (an integer, or a size parameter), or NULL */
static const char *
mapdim(Hd *h, const char *d)
{
	int i;

	if (d[0] >= '0' && d[0] <= '9')
		return arena_printf(h->a, "%sULL", d);
	for (i = 0; i < h->k->nsize; i++)
		if (!strcmp(emit_cname(h->a, h->k->sizes[i]->name), d))
			return arena_printf(h->a, "(cuuint64_t)%s", h->k->sizes[i]->name);
	return NULL;
}

/* the tensor maps of the TMA loads into tilec_tm[i]: encoded by enc (cuTensorMapEncodeTiled or
 * the runtime API's entry point for it), the launcher returning fail on an error */
static int
maps(Hd *h, const char *enc, const char *cast, const char *fail)
{
	Buf *o = h->o;
	int i, t;

	if (!h->c.nmap)
		return 0;
	for (i = 0; i < h->c.nmap; i++) {
		const TmapDesc *m = &h->c.maps[i];
		const char *d0 = mapdim(h, m->dim[0]), *d1 = mapdim(h, m->dim[1]), *r = mapdim(h, m->rows);
		const char *d2 = m->rank == 3 ? mapdim(h, m->dim[2]) : "1";

		for (t = 0; t < h->k->nparam; t++)
			if (h->k->params[t].is_tensor && !strcmp(emit_cname(h->a, h->k->params[t].name), m->tensor))
				break;
		if (t == h->k->nparam || !d0 || !d1 || !d2 || !r)
			return err_set(h->err, "kernel '%s': tensor map %s names no tensor or size", h->k->name, m->name);
		buf_printf(o, "\t{ /* %s: the TMA boxes of %s */\n", m->name, m->tensor);
		if (m->rank == 3) { /* dense: a plane is d[1] rows */
			buf_printf(o, "\t\tcuuint64_t d[3] = {%s, %s, %s}, st[2] = {%s * %d, %s * %s * %d};\n", d0, d1, d2, r,
				   m->esize, d1, r, m->esize);
			buf_printf(o, "\t\tcuuint32_t box[3] = {%lld, %lld, %lld}, es[3] = {1, 1, 1};\n", m->box[0], m->box[1],
				   m->box[2]);
		} else {
			buf_printf(o, "\t\tcuuint64_t d[2] = {%s, %s}, st[1] = {%s * %d};\n", d0, d1, r, m->esize);
			buf_printf(o, "\t\tcuuint32_t box[2] = {%lld, %lld}, es[2] = {1, 1};\n", m->box[0], m->box[1]);
		}
		buf_puts(o, "\t\t/* rows that are not whole 16-byte chunks, or an empty tensor: the kernel takes its\n"
			 "\t\t * element-by-element path there and does not read the map */\n");
		buf_printf(o, "\t\tmemset(&tilec_tm[%d], 0, sizeof tilec_tm[%d]);\n"
			   "\t\tif (st[0] %% 16 == 0 && d[0] && d[1]%s) {\n", i, i, m->rank == 3 ? " && d[2]" : "");
		buf_printf(o, "\t\t\tCUresult tilec_e = %s(%s&tilec_tm[%d], CU_TENSOR_MAP_DATA_TYPE_UINT%d, %d,\n"
			   "\t\t\t\t(void *)%s, d, st, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_%s,\n"
			   "\t\t\t\tCU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n\n",
			   enc, cast, i, m->esize == 1 ? 8 : m->esize == 2 ? 16 : m->esize == 4 ? 32 : 64, m->rank,
			   h->k->params[t].name,
			   m->swizzle == 128 ? "128B" : m->swizzle == 64 ? "64B" : m->swizzle == 32 ? "32B" : "NONE");
		buf_printf(o, "\t\t\tif (tilec_e != CUDA_SUCCESS)\n\t\t\t\treturn %s;\n\t\t}\n\t}\n", fail);
	}
	return 0;
}

/* tilec_launch_K: the driver API */
static int
drvlaunch(Hd *h)
{
	const IrKernel *k = h->k;
	Buf *o = h->o;
	int i, n = 0;

	buf_printf(o, "/* %s with the driver API: f is the kernel (cuModuleGetFunction(&f, mod, "
		   "TILEC_%s_NAME));\n * CUDA_ERROR_INVALID_VALUE when tilec_%s_dims rejects the sizes, "
		   "CUDA_SUCCESS\n * without a launch when the grid is empty */\n", k->name, h->up, k->name);
	buf_printf(o, "static inline CUresult\ntilec_launch_%s(CUfunction tilec_fn, CUstream tilec_stream",
		   k->name);
	arglist(h, o, A_DRV, 0);
	buf_puts(o, ")\n{\n\tunsigned tilec_grid[3];\n");
	buf_printf(o, "\tvoid *tilec_args[%d];\n", k->nparam + k->nsize + h->c.nmap + 1);
	for (i = 0; i < k->nparam; i++)
		if (!k->params[i].is_tensor && k->params[i].dtype == DT_BOOL)
			buf_printf(o, "\tunsigned char tilec_%s = %s != 0;\n", k->params[i].name,
				   k->params[i].name);
	if (h->c.smem > SMEM_STATIC_MAX)
		buf_puts(o, "\tCUresult tilec_r;\n");
	if (h->c.nmap)
		buf_printf(o, "\tCUtensorMap tilec_tm[%d];\n", h->c.nmap);
	buf_puts(o, "\n\tif (!tilec_fn)\n\t\treturn CUDA_ERROR_INVALID_HANDLE;\n");
	buf_printf(o, "\tif (tilec_%s_dims(", k->name);
	buf_puts(o, arglist(h, o, A_SCALNAMES, 1) ? ", " : "");
	buf_puts(o, "tilec_grid))\n\t\treturn CUDA_ERROR_INVALID_VALUE;\n");
	buf_puts(o, "\tif (!tilec_grid[0] || !tilec_grid[1] || !tilec_grid[2])\n\t\treturn CUDA_SUCCESS;\n");
	if (h->c.smem > SMEM_STATIC_MAX)
		buf_printf(o, "\ttilec_r = cuFuncSetAttribute(tilec_fn, "
			   "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,\n"
			   "\t\t\t\t     TILEC_%s_SMEM_BYTES);\n\tif (tilec_r != CUDA_SUCCESS)\n"
			   "\t\treturn tilec_r;\n", h->up);
	if (h->c.persistent)
		buf_printf(o, "\t{ /* persistent: the blocks that fit the device loop over the grid's tiles */\n"
			   "\t\tCUdevice tilec_d;\n\t\tint tilec_sms = 0, tilec_nb = 0;\n"
			   "\t\tunsigned long long tilec_tiles = (unsigned long long)tilec_grid[0] * tilec_grid[1], tilec_cap;\n"
			   "\t\tCUresult tilec_e = cuCtxGetDevice(&tilec_d);\n\n"
			   "\t\tif (tilec_e == CUDA_SUCCESS)\n\t\t\ttilec_e = cuDeviceGetAttribute(&tilec_sms, "
			   "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, tilec_d);\n"
			   "\t\tif (tilec_e != CUDA_SUCCESS)\n\t\t\treturn tilec_e;\n"
			   "\t\tif (cuOccupancyMaxActiveBlocksPerMultiprocessor(&tilec_nb, tilec_fn, TILEC_%s_THREADS, "
			   "TILEC_%s_SMEM_BYTES) != CUDA_SUCCESS || tilec_nb < 1)\n\t\t\ttilec_nb = 1;\n"
			   "\t\ttilec_cap = (unsigned long long)(tilec_sms > 0 ? tilec_sms : 1) * (unsigned)tilec_nb;\n"
			   "\t\ttilec_grid[0] = (unsigned)(tilec_tiles < tilec_cap ? tilec_tiles : tilec_cap);\n"
			   "\t\ttilec_grid[1] = 1;\n\t}\n", h->up, h->up);
	for (i = 0; i < k->nparam; i++)
		buf_printf(o, "\ttilec_args[%d] = &%s%s;\n", n++,
			   !k->params[i].is_tensor && k->params[i].dtype == DT_BOOL ? "tilec_" : "",
			   k->params[i].name);
	for (i = 0; i < k->nsize; i++)
		buf_printf(o, "\ttilec_args[%d] = &%s;\n", n++, k->sizes[i]->name);
	if (maps(h, "cuTensorMapEncodeTiled", "", "tilec_e"))
		return -1;
	for (i = 0; i < h->c.nmap; i++)
		buf_printf(o, "\ttilec_args[%d] = &tilec_tm[%d];\n", n++, i);
	buf_printf(o, "\ttilec_args[%d] = 0;\n", n);
	buf_printf(o, "\treturn cuLaunchKernel(tilec_fn, tilec_grid[0], tilec_grid[1], tilec_grid[2], "
		   "TILEC_%s_THREADS, 1, 1,\n\t\t\t      TILEC_%s_SMEM_BYTES, tilec_stream, tilec_args, 0);\n"
		   "}\n\n", h->up, h->up);
	return 0;
}

/* tilec_K: the runtime API under nvcc, launching the kernel of the .cu */
static void
rtlaunch(Hd *h)
{
	const IrKernel *k = h->k;
	Buf *o = h->o;
	int i;

	const char *cn = emit_cname(h->a, k->name); /* the kernel's name in the CUDA C */

	buf_printf(o, "extern \"C\" __global__ void __launch_bounds__(%lld)\n%s(", h->c.threads, cn);
	if (!arglist(h, o, A_DEV, 1) && !h->c.nmap)
		buf_puts(o, "void");
	for (i = 0; i < h->c.nmap; i++)
		buf_printf(o, "%sconst __grid_constant__ tl_tmap_t %s", i || k->nparam || k->nsize ? ", " : "",
			   h->c.maps[i].name);
	buf_puts(o, ");\n\n");
	buf_printf(o, "/* %s with the runtime API, on tilec_stream (0: the default stream) */\n"
		   "static inline cudaError_t\ntilec_%s(", k->name, k->name);
	buf_puts(o, arglist(h, o, A_DEV, 1) ? ", " : "");
	buf_puts(o, "cudaStream_t tilec_stream)\n{\n\tunsigned tilec_grid[3];\n\n");
	buf_printf(o, "\tif (tilec_%s_dims(", k->name);
	buf_puts(o, arglist(h, o, A_SCALNAMES, 1) ? ", " : "");
	buf_puts(o, "tilec_grid))\n\t\treturn cudaErrorInvalidValue;\n");
	buf_puts(o, "\tif (!tilec_grid[0] || !tilec_grid[1] || !tilec_grid[2])\n\t\treturn cudaSuccess;\n");
	if (h->c.nmap) {
		/* the TMA tensor maps: cuTensorMapEncodeTiled through the runtime's driver entry point */
		buf_printf(o, "\tstatic CUresult (*tilec_enc)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,\n"
			   "\t\tconst cuuint64_t *, const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,\n"
			   "\t\tCUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);\n"
			   "\ttl_tmap_t tilec_tm[%d];\n\n\tif (!tilec_enc) {\n"
			   "\t\tenum cudaDriverEntryPointQueryResult tilec_q;\n\t\tvoid *tilec_f = 0;\n\n"
			   "\t\tif (cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &tilec_f, 12000, "
			   "cudaEnableDefault,\n\t\t\t\t\t\t      &tilec_q) != cudaSuccess || !tilec_f)\n"
			   "\t\t\treturn cudaErrorNotSupported;\n"
			   "\t\t*(void **)&tilec_enc = tilec_f;\n\t}\n", h->c.nmap);
		if (maps(h, "tilec_enc", "(CUtensorMap *)", "cudaErrorInvalidValue"))
			return;
	}
	if (h->c.smem > SMEM_STATIC_MAX)
		buf_printf(o, "\tcudaError_t tilec_r = cudaFuncSetAttribute(%s, "
			   "cudaFuncAttributeMaxDynamicSharedMemorySize,\n\t\t\t\t\t\t   "
			   "TILEC_%s_SMEM_BYTES);\n\tif (tilec_r != cudaSuccess)\n\t\treturn tilec_r;\n",
			   cn, h->up);
	if (h->c.persistent)
		buf_printf(o, "\t{ /* persistent: the blocks that fit the device loop over the grid's tiles */\n"
			   "\t\tint tilec_d = 0, tilec_sms = 0, tilec_nb = 0;\n"
			   "\t\tunsigned long long tilec_tiles = (unsigned long long)tilec_grid[0] * tilec_grid[1], tilec_cap;\n"
			   "\t\tcudaError_t tilec_e = cudaGetDevice(&tilec_d);\n\n"
			   "\t\tif (tilec_e == cudaSuccess)\n\t\t\ttilec_e = cudaDeviceGetAttribute(&tilec_sms, "
			   "cudaDevAttrMultiProcessorCount, tilec_d);\n"
			   "\t\tif (tilec_e != cudaSuccess)\n\t\t\treturn tilec_e;\n"
			   "\t\tif (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&tilec_nb, %s, TILEC_%s_THREADS, "
			   "TILEC_%s_SMEM_BYTES) != cudaSuccess || tilec_nb < 1)\n\t\t\ttilec_nb = 1;\n"
			   "\t\ttilec_cap = (unsigned long long)(tilec_sms > 0 ? tilec_sms : 1) * (unsigned)tilec_nb;\n"
			   "\t\ttilec_grid[0] = (unsigned)(tilec_tiles < tilec_cap ? tilec_tiles : tilec_cap);\n"
			   "\t\ttilec_grid[1] = 1;\n\t}\n", cn, h->up, h->up);
	buf_printf(o, "\t%s<<<dim3(tilec_grid[0], tilec_grid[1], tilec_grid[2]), TILEC_%s_THREADS, "
		   "TILEC_%s_SMEM_BYTES,\n\t\ttilec_stream>>>(", cn, h->up, h->up);
	for (i = 0; i < k->nparam; i++)
		buf_printf(o, "%s%s", i ? ", " : "", k->params[i].name);
	for (i = 0; i < k->nsize; i++)
		buf_printf(o, "%s%s", i || k->nparam ? ", " : "", k->sizes[i]->name);
	for (i = 0; i < h->c.nmap; i++)
		buf_printf(o, ", tilec_tm[%d]", i);
	buf_puts(o, ");\n\treturn cudaGetLastError();\n}\n\n");
}

static char *
upper(Arena *a, const char *s)
{
	char *u = arena_strdup(a, s), *p;

	for (p = u; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return u;
}

/* the names a kernel puts in the header; two kernels must not share one */
static int
collide(Arena *a, const IrProgram *p, Err *err)
{
	enum { NN = 7 };
	const IrKernel *k, *l;
	const char *nk[NN], *nl[NN];
	int i, j;

	for (k = p->kernels; k; k = k->next) {
		const char *uk = upper(a, k->name);

		nk[0] = k->name;
		nk[1] = arena_printf(a, "tilec_%s", k->name);
		nk[2] = arena_printf(a, "tilec_launch_%s", k->name);
		nk[3] = arena_printf(a, "tilec_%s_dims", k->name);
		nk[4] = arena_printf(a, "TILEC_%s_THREADS", uk);
		nk[5] = arena_printf(a, "TILEC_%s_SMEM_BYTES", uk);
		nk[6] = arena_printf(a, "TILEC_%s_NAME", uk);
		for (l = k->next; l; l = l->next) {
			const char *ul = upper(a, l->name);

			nl[0] = l->name;
			nl[1] = arena_printf(a, "tilec_%s", l->name);
			nl[2] = arena_printf(a, "tilec_launch_%s", l->name);
			nl[3] = arena_printf(a, "tilec_%s_dims", l->name);
			nl[4] = arena_printf(a, "TILEC_%s_THREADS", ul);
			nl[5] = arena_printf(a, "TILEC_%s_SMEM_BYTES", ul);
			nl[6] = arena_printf(a, "TILEC_%s_NAME", ul);
			for (i = 0; i < NN; i++)
				for (j = 0; j < NN; j++)
					if (!strcmp(nk[i], nl[j]))
						return err_set(err, "kernels '%s' and '%s' both define '%s' "
							       "in the launcher header", k->name, l->name,
							       nk[i]);
		}
	}
	return 0;
}

int
emit_header(Arena *a, const IrProgram *p, const char *cuda, Buf *out, Err *err)
{
	const IrKernel *k;
	Err local = {0};
	Hd h;
	Buf guard;
	char msg[sizeof local.msg];
	int i;

	if (!err)
		err = &local;
	if (!a || !p || !cuda || !out)
		return err_set(err, "emit_header: null argument");
	if (collide(a, p, err))
		return -1;
	buf_init(&guard);
	buf_puts(&guard, "TILEC_GEN");
	for (k = p->kernels; k; k = k->next)
		buf_printf(&guard, "_%s", upper(a, k->name));
	buf_puts(&guard, "_H");
	buf_printf(out, "/* generated by tilec %s for %s: launchers of the kernels of the CUDA C that the\n"
		   " * same command wrote. Plain C (gcc, with -I$CUDA/include): tilec_<kernel>_dims and\n"
		   " * tilec_launch_<kernel> (driver API); nvcc: also tilec_<kernel> (runtime API). */\n",
		   TL_VERSION, p->arch ? p->arch : "sm_80");
	buf_printf(out, "#ifndef %s\n#define %s\n\n#include <limits.h>\n%s#include <cuda.h>\n\n", buf_str(&guard),
		   buf_str(&guard), strstr(cuda, ": tensor map ") ? "#include <string.h>\n" : "");
	buf_free(&guard);
	buf_puts(out, helpers);
	for (k = p->kernels; k; k = k->next) {
		memset(&h, 0, sizeof h);
		h.a = a;
		h.k = k;
		h.o = out;
		h.err = err;
		h.up = upper(a, k->name);
		for (i = 0; i < k->nparam; i++)
			if (!sctype(k->params[i].dtype, 0) || !sctype(k->params[i].dtype, 1))
				return err_set(err, "kernel '%s': parameter '%s' has no C type", k->name,
					       k->params[i].name);
		if (contract(&h, cuda))
			return -1;
		buf_printf(out, "\n/* ---- kernel %s ---- */\n#define TILEC_%s_NAME \"%s\"\n"
			   "#define TILEC_%s_THREADS %lld\n#define TILEC_%s_SMEM_BYTES %lld\n\n", k->name,
			   h.up, k->name, h.up, h.c.threads, h.up, h.c.smem);
		if (h.c.persistent)
			buf_printf(out, "/* persistent (tilec --persistent): the blocks that fit the device loop over the\n"
				   " * tiles of the grid tilec_%s_dims gives */\n#define TILEC_%s_PERSISTENT 1\n\n", k->name, h.up);
		if (dims(&h)) {
			snprintf(msg, sizeof msg, "%s", err->msg);
			return err_set(err, "kernel '%s': grid: %s", k->name, msg);
		}
		if (drvlaunch(&h))
			return -1;
	}
	buf_puts(out, "#ifdef __CUDACC__\n#include <cuda_runtime.h>\n#include \"tilec_cuda.h\"\n\n");
	for (k = p->kernels; k; k = k->next) {
		memset(&h, 0, sizeof h);
		h.a = a;
		h.k = k;
		h.o = out;
		h.err = err;
		h.up = upper(a, k->name);
		if (contract(&h, cuda))
			return -1;
		rtlaunch(&h);
	}
	buf_puts(out, "#endif /* __CUDACC__ */\n\n#endif\n");
	return 0;
}
