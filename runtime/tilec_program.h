/*
 * tilec_program.h: a compiled tile program as an object: its CUDA C (or HIP
 * C), its inferred layouts, the signature of every kernel (tensors with their
 * element types and shapes in size symbols, scalars, size symbols), its launch
 * geometry for given sizes, and a launch on the CPU target (docs/cpu.md) with
 * the caller's buffers. This is what the Python package (python/) wraps; a C
 * host program uses it the same way. GPU launches go through tilec_tile.h.
 */
#ifndef TILEC_PROGRAM_H
#define TILEC_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "tilec_status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tilec_options; /* tilec.h */

typedef struct tilec_program tilec_program;

#define TILEC_MAX_DIMS 8

/* one parameter of a kernel, in the kernel's order */
typedef struct tilec_param_info {
	const char *name;
	int is_tensor;      /* 1: a global tensor (passed as a pointer); 0: a scalar (by value) */
	const char *dtype;  /* "f16", "bf16", "f32", "f64", "i8", "u8", "i32", "bool", "int"
	                     * (the 64-bit index type), "fp8_e4m3", "fp8_e5m2" */
	int elem_bytes;     /* bytes per element (tensors) or of the value (scalars) */
	int ndim;           /* tensors: the rank; scalars: 0 */
	/* per dimension: the index of its size symbol (tilec_program_size_name), or -1
	 * with the extent in dim_const */
	int dim_size[TILEC_MAX_DIMS];
	int64_t dim_const[TILEC_MAX_DIMS];
	/* tensors with strides(...) (docs/language.md 3.2): strided = 1 and, per dimension,
	 * the index of its stride symbol (stride_size, a size like the dims' and passed with
	 * them), or -1 with the stride in stride_const (elements); strided = 0: dense
	 * row-major, the stride arrays are zero */
	int strided;
	int stride_size[TILEC_MAX_DIMS];
	int64_t stride_const[TILEC_MAX_DIMS];
} tilec_param_info;

/*
 * Compile tile source src[0..len) with opts (NULL: the defaults: cuda, sm_80;
 * opts->dump is ignored). TILEC_OK: *out is the program (free it with
 * tilec_program_free). TILEC_ERR_COMPILE: the diagnostics
 * ("file:line:col: error: ...") are in *err; TILEC_ERR_ARG: bad options (the
 * message in *err); *out is NULL on any error. err may be NULL; the caller
 * frees *err.
 */
tilec_status tilec_program_compile(const char *src, size_t len, const struct tilec_options *opts,
				   tilec_program **out, char **err);
/* the same, reading the source from path (also the diagnostics' file name unless
 * opts->filename is set); TILEC_ERR_IO when it cannot be read */
tilec_status tilec_program_compile_file(const char *path, const struct tilec_options *opts,
					tilec_program **out, char **err);
/* free the program and its CPU builds; NULL is fine */
void tilec_program_free(tilec_program *p);

/* the generated code: CUDA C (target cuda) or HIP C (target hip); never NULL */
const char *tilec_program_code(const tilec_program *p);
/* every buffer's and nest's inferred layout (as `tilec --dump=layouts`), CuTe form
 * included; never NULL */
const char *tilec_program_layouts(const tilec_program *p);
/* "cuda" or "hip", and the architecture ("sm_80", "gfx942", ...) */
const char *tilec_program_target(const tilec_program *p);
const char *tilec_program_arch(const tilec_program *p);

/* kernels, in source order */
int tilec_program_kernel_count(const tilec_program *p);
const char *tilec_program_kernel_name(const tilec_program *p, int k); /* NULL out of range */
int tilec_program_kernel_find(const tilec_program *p, const char *name); /* index, or -1 */
/* the kernel's name in the generated code (extern "C") */
const char *tilec_program_kernel_cname(const tilec_program *p, int k);
/* threads per block and dynamic shared memory bytes of kernel k: TILEC_ERR_ARG out of range */
tilec_status tilec_program_kernel_launch(const tilec_program *p, int k, unsigned *threads,
					 size_t *smem_bytes);

/* the kernel's parameters; the size symbols (passed after them as int) */
int tilec_program_param_count(const tilec_program *p, int k);   /* -1 out of range */
tilec_status tilec_program_param(const tilec_program *p, int k, int i, tilec_param_info *out);
int tilec_program_size_count(const tilec_program *p, int k);    /* -1 out of range */
const char *tilec_program_size_name(const tilec_program *p, int k, int i); /* NULL out of range */

/*
 * The grid of kernel k for the values of its size symbols (sizes[i] for size
 * i) and scalars (scalars[i] for parameter i, as a double; entries of tensor
 * parameters are ignored; NULL when the kernel has no scalars). Every assume of
 * the kernel must hold: TILEC_ERR_ARG with the failing one in *err otherwise.
 */
tilec_status tilec_program_grid(const tilec_program *p, int k, const int64_t *sizes,
				const double *scalars, unsigned grid[3], char **err);

/*
 * Run kernel k of the program on the CPU target: the generated code built with
 * the C++ compiler (cxx: NULL for $TILEC_CXX, $CXX, else c++) against
 * tilec_cpu.h (tilec_cpu_hip.h for HIP C), once per kernel and program (the
 * build is kept in the program, in a directory under $TMPDIR or /tmp). args[i]
 * for parameter i: a tensor's host memory (dense, row-major, the shape the
 * sizes give; a strided tensor: the first element of its view, with the
 * 1 + sum (dim_d - 1) * stride_d elements the view spans from there, e.g. a
 * pointer into a larger buffer; read and written in place) or a pointer to a scalar's value in
 * its type (int32_t for i32, uint16_t bits for f16/bf16, int64_t for int, ...).
 * sizes[i]: size symbol i. The grid comes from tilec_program_grid.
 * TILEC_OK: the run finished and the tensors hold the results.
 * TILEC_ERR_RUN: the emulation stopped the run (an access outside a tensor, a
 * barrier not every thread reaches, a deadlock; the message in *err).
 * TILEC_ERR_COMPILE: the C++ build failed (its log in *err). TILEC_ERR_ARG:
 * bad arguments or sizes. timeout_s > 0 kills a run that takes longer (then
 * TILEC_ERR_RUN); 0: 300 s.
 */
tilec_status tilec_cpu_launch(tilec_program *p, int k, void *const *args, const int64_t *sizes,
			      const char *cxx, int timeout_s, char **err);

#ifdef __cplusplus
}
#endif

#endif
