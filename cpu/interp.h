/*
 * interp.h: the reference interpreter of the tile IR. It gives a tile program
 * its meaning (docs/semantics.md, "What a program computes"): it runs one
 * kernel of the IR after sema and helper inlining (before layout inference)
 * on the CPU, for every block of its grid, with plain semantics for every op.
 * Threads, layouts, swizzles and pipelining stages do not change what a
 * program computes, so the interpreter ignores them.
 *
 * Besides each element's value the interpreter tracks two flags:
 *  - INTERP_UNDEF: the element was written from a value that is undefined
 *    (read from shared or local memory never written, an integer overflow,
 *    a float -> integer conversion out of range, ...). Such an element has no
 *    meaning; a differential check skips it.
 *  - INTERP_INEXACT: the value depends on an order of evaluation the
 *    program leaves open (sum reductions, gemm accumulation) or on a math
 *    library (exp, log, sqrt, tanh, ...). A check compares such elements
 *    within a tolerance; every other defined element must match bit for bit.
 *    A float sum or difference with an operand that is a product (a register
 *    value, not through global memory or a conversion) is inexact too: the GPU
 *    compiler may fuse the two into one rounding (FMA).
 * Elements never written keep their contents and have no flag set.
 */
#ifndef INTERP_H
#define INTERP_H

#include <stdint.h>

#include "ir.h"
#include "numeric.h"
#include "tl.h"

enum {
	INTERP_UNDEF = 1,
	INTERP_INEXACT = 2,
	/* an inexact value was rounded into f16 (11 significant bits) / into bf16 or fp8 (8 or
	 * fewer) on its way: its uncertainty is that type's, whatever the tensor's type (a check
	 * widens its tolerance to it) */
	INTERP_VIA16 = 4,
	INTERP_VIA8 = 8,
	INTERP_FLAGS = 15, /* every flag bit an element keeps in global memory */
	/* a value that is a float product (of its type, not rounded since): a + or - with it
	 * may be fused into an FMA. Not an element flag: global memory and conversions drop it */
	INTERP_PROD = 16
};

/*
 * A tensor is dense and row-major, or strided (IrBuffer.strides: element (i0, i1, ...) at
 * i0*s0 + i1*s1 + ..., the strides taken from the sizes for stride symbols); n counts the
 * storage elements, for a strided tensor the span 1 + sum (dim_d - 1) * s_d (0 when a
 * dim is 0), data is its first element and flags are per storage element (elements
 * outside the view are never touched: their flags stay 0). An element is stored in its type's
 * storage format: bool as one byte 0/1, i8 int8_t, u8 uint8_t, i32 int32_t,
 * f16 and bf16 as their uint16_t bits, f32 float, f64 double, fp8_e4m3 and
 * fp8_e5m2 as their byte.
 */
typedef struct InterpTensor {
	void *data;            /* the elements (in: the initial contents; out: the result) */
	int64_t n;             /* storage elements: the product of the dims, or the span of a strided one */
	unsigned char *flags;  /* out, one per element (INTERP_*); may be NULL */
} InterpTensor;

/* the kernel's arguments, indexed like the kernel's params and sizes */
typedef struct InterpArgs {
	const int64_t *sizes;  /* the value of k->sizes[i] */
	InterpTensor *tensors; /* tensors[p] for a tensor param p (others ignored) */
	const double *scalars; /* scalars[p] for a scalar param p: its value (an integer
	                        * param is given as a double holding an integer) */
	/* added with the interpreter: the most work a run may do (statements executed
	 * plus elements copied, filled and reduced plus gemm multiply-adds); a run
	 * that would do more stops with INTERP_ERROR. 0: INTERP_MAX_WORK */
	int64_t max_work;
	/* run every parallel nest one iteration at a time; by default a nest whose
	 * iterations cannot interact runs a batch of them at a time, statement by
	 * statement (the same results; which error a nest with several reports may differ) */
	int no_batch;
} InterpArgs;

#define INTERP_MAX_WORK 2000000000LL

typedef struct InterpStats {
	int64_t blocks;        /* blocks run */
	int64_t statements;    /* statements executed, all blocks */
	int64_t work;          /* the work done, as InterpArgs.max_work counts it (past the
	                        * limit when the run stopped there) */
} InterpStats;

typedef enum {
	INTERP_OK = 0,
	INTERP_ERROR = -1,     /* the program has no meaning for these arguments: e->msg says
	                        * why, at its file:line:col (an assume that does not hold, an
	                        * index out of range in shared or local memory, a data race
	                        * between blocks or between iterations of a parallel nest,
	                        * a loop that runs past the limit, ...) */
	INTERP_UNSUPPORTED = -2, /* an op the interpreter does not execute (e->msg) */
	INTERP_NOMEM = -3,
} InterpStatus;

/*
 * Run kernel k for every block of its grid (blocks in order bz, by, bx, the
 * x index fastest). The tensors' data are updated in place. stats may be NULL.
 * Never exits, aborts or prints.
 */
InterpStatus interp_kernel(const IrKernel *k, const InterpArgs *args, InterpStats *stats, Err *e);

/* the grid of k for these sizes and scalars; 0, or -1 with a message */
int interp_grid(const IrKernel *k, const InterpArgs *args, int64_t grid[3], Err *e);

/* element conversions: numeric.h */

#endif
