/*
 * cpu_check.c: a C host program built against the installed tilec (tilec::tilec): compiles
 * the gemm tile file given as argv[1] with -D BK=32, runs the emitted CUDA C on the CPU
 * target (tilec_program.h) on integer-valued f16 inputs, and checks every element of C
 * against a reference (exact: the sums are exact in f32 and f16). Exit 0 when it agrees.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <tilec.h>
#include <tilec_program.h>

static float
h2f(uint16_t h)
{
	unsigned e = (h >> 10) & 31, m = h & 1023;
	float f = e ? ldexpf((float)(m | 1024), (int)e - 25) : ldexpf((float)m, -24);

	return h >> 15 ? -f : f;
}

int
main(int argc, char **argv)
{
	enum { M = 150, K = 70, N = 90 };
	static uint16_t A[M * K], B[K * N], C[M * N];
	static const uint16_t v[] = {0xbc00, 0x0000, 0x3c00, 0x4000}; /* -1, 0, 1, 2 */
	const char *defs[] = {"BK=32"};
	int64_t sizes[3] = {M, K, N};
	void *args[3] = {A, B, C};
	tilec_options o;
	tilec_program *p;
	char *err = NULL;
	int i, j, l, bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: cpu_check gemm.tile\n");
		return 2;
	}
	tilec_options_init(&o);
	o.defines = defs;
	o.ndefines = 1;
	if (tilec_program_compile_file(argv[1], &o, &p, &err) != TILEC_OK) {
		fprintf(stderr, "%s", err);
		return 1;
	}
	for (i = 0; i < M * K; i++)
		A[i] = v[(i * 7 + 1) % 4];
	for (i = 0; i < K * N; i++)
		B[i] = v[(i * 3 + 2) % 4];
	if (tilec_cpu_launch(p, tilec_program_kernel_find(p, "gemm"), args, sizes, NULL, 0, &err) != TILEC_OK) {
		fprintf(stderr, "cpu_check: %s\n", err);
		return 1;
	}
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			float want = 0;

			for (l = 0; l < K; l++)
				want += h2f(A[i * K + l]) * h2f(B[l * N + j]);
			bad += h2f(C[i * N + j]) != want;
		}
	printf("cpu_check: tilec %s, gemm M=%d K=%d N=%d on the CPU target: %s\n", tilec_version(), M, K, N,
	       bad ? "WRONG" : "agrees with the reference");
	tilec_program_free(p);
	return bad != 0;
}
