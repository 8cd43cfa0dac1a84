/*
 * hip.c: the HIP C dialect of the C renderer (gen/target/c/render_c.c).
 * templates/tilec_hip.h maps the CUDA spellings the code shares (threadIdx,
 * __syncthreads, the tl_* helpers: async copies are plain loads there) onto HIP.
 */
#include "lir.h"

const LDialect lir_hip = {
	"hip",
	"tilec_hip.h",
	"extern \"C\" __global__ void",
	"__syncthreads();",
	"tl_cp_async_commit();",
	"tl_cp_async_wait<%d>();",
	"tl_cp_async16",
	"tl_cp_async16_zfill",
	"tl_opaque_int((int)threadIdx.x)",
};
