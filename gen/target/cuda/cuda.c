/*
 * cuda.c: the CUDA C dialect of the C renderer (gen/target/c/render_c.c).
 * The support functions (tl_cp_async_*, mma, ldmatrix) are in
 * templates/tilec_cuda.h, which the code includes.
 */
#include "lir.h"

const LDialect lir_cuda = {
	"cuda",
	"tilec_cuda.h",
	"extern \"C\" __global__ void",
	"__syncthreads();",
	"tl_cp_async_commit();",
	"tl_cp_async_wait<%d>();",
	"tl_cp_async16",
	"tl_cp_async16_zfill",
	"(int)threadIdx.x",
};
