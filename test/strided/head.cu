// Hand-written CUDA C for test/strided/head.tile (tilec run --cuda=FILE): the strides
// arrive as the size parameters sq, so, ldt after S.
#include "tilec_cuda.h"
// kernel head: 128 threads, 0 bytes of dynamic shared memory
extern "C" __global__ void head(float *Q, float *O, float *T, float scale, int S, int sq, int so,
				int ldt)
{
	for (int e = threadIdx.x; e < 16 * 64; e += 128) {
		int i = blockIdx.x * 16 + e / 64, j = e % 64;

		if (i < S) {
			O[(long)i * so + j] = Q[(long)i * sq + j] * scale;
			T[j + (long)i * ldt] = Q[(long)i * sq + j];
		}
	}
}
