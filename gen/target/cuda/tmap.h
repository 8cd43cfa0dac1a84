/*
 * tmap.h: the tensor-map lines of the CUDA C that tilec emits. A kernel whose pipelines
 * load with TMA takes one `const __grid_constant__ tl_tmap_t` parameter per map after its
 * sizes, each described by a line after the kernel's contract line:
 *
 *   // kernel K: tensor map NAME of TENSOR: E-byte elements, dims (D0, D1), rows of R
 *   //   elements, box (B0, B1), swizzle none|32B|64B|128B          (one line in the code)
 *
 * or, for a rank-3 tensor (a box of one plane: a 2-D tile of a [P, rows, R] tensor),
 *
 *   // kernel K: tensor map NAME of TENSOR: E-byte elements, dims (D0, D1, D2), rows of R
 *   //   elements, box (B0, B1, B2), swizzle ...
 *
 * D0 (innermost), D1, D2 and R are size names or integers; the tensor is dense: dimension 2's
 * stride is D1 rows. The launchers (--header), the CPU run's entry and the JIT runtime read
 * these lines to build the maps (cuTensorMapEncodeTiled, or tl_tmap_encode on the CPU).
 */
#ifndef TILEC_TMAP_H
#define TILEC_TMAP_H

typedef struct TmapDesc {
	char name[64], tensor[64];
	char dim[3][64], rows[64];
	int rank;                /* 2 or 3 */
	int esize, swizzle;      /* swizzle: bytes, 0 for none */
	long long box[3];        /* box[2] = 1 for rank 2 */
} TmapDesc;

/* the maps of kernel `kernel` in code, in parameter order, into out[0..max): their number,
 * or -1 when a line is malformed or there are more than max */
int tmap_parse(const char *code, const char *kernel, TmapDesc *out, int max);

#endif
