/*
 * lower.h: the CUDA lowering and emission. smem.c plans shared memory (one
 * layout and swizzle per buffer, offsets in one dynamic buffer with reuse
 * across disjoint lifetimes); emit_cuda.c turns a kernel whose layouts are
 * known into CUDA C that includes templates/tilec_cuda.h.
 */
#ifndef LOWER_H
#define LOWER_H

#include "gemm_plan.h"
#include "ir.h"
#include "layout.h"
#include "target.h"

/* ---- shared-memory planning (smem.c) --------------------------------------- */

typedef struct SmemBuf {
	int buf;              /* buffer id in the kernel */
	Layout *layout;       /* its shared layout over the buffer's shape (one stage) */
	SmemKind kind;
	SwizzleMode mode;     /* the swizzle, SWZ_NONE for linear/padded */
	int stages;           /* copies for a multi-stage pipeline (1 if not pipelined) */
	int64_t stage_elems;  /* elements of one stage (product of the layout's out_shape) */
	int64_t bytes;        /* stage_elems * element bytes * stages */
	int64_t align;        /* base alignment (1024 for 128-byte swizzles, else >= 16) */
	int64_t offset;       /* byte offset in the dynamic shared buffer */
	int first, last;      /* lifetime: statement positions (loops extend to their whole body) */
	const char *source;   /* where the layout came from: "inferred", "gemm", "default" */
} SmemBuf;

typedef struct SmemPlan {
	int n;
	SmemBuf *bufs;        /* shared buffers that are used, in buffer-id order */
	int64_t total;        /* bytes of the dynamic buffer */
	int64_t align;        /* largest base alignment */
	int needs_optin;      /* total > the target's static limit: set MaxDynamicSharedMemorySize */
} SmemPlan;

/*
 * Plan every shared buffer of k: its layout is IrBuffer.layout when
 * inference set one, else the gemm plan's operand layout (gemm_plan on the
 * gemm that reads it), else a 128/64/32-byte swizzle where the shape allows,
 * else row-major. Buffers written by a copy inside pipeline(n, stages = s)
 * get s stages. Offsets are first-fit over the lifetimes. Errors: more bytes
 * than the target allows, unknown shapes.
 */
int smem_plan(Arena *a, const Target *t, const IrKernel *k, SmemPlan *out, Err *err);
/* the plan entry of buffer id, or NULL */
const SmemBuf *smem_find(const SmemPlan *p, int buf);
/* a readable summary (tests) */
void smem_plan_dump(Buf *b, const IrKernel *k, const SmemPlan *p);

/* ---- emission (emit_cuda.c) ------------------------------------------------- */

/* CUDA C for every kernel of p (p->arch picks the target). 0, or -1 with err. */
int emit_cuda(Arena *a, const IrProgram *p, Buf *out, Err *err);

#endif
