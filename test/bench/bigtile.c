/* bigtile: the exact checks of a 4096 x 4096 mixed-radix tile (16M points, four times the
 * enumeration limit): construction with its exact output shape, injectivity, the inverse and
 * equality, decided from the digits (gen/layout/affine.c). Prints the minimum of 21 runs in
 * milliseconds. Run by test/bench/gen.sh. */
#include <stdio.h>
#include <time.h>

#include "layout.h"

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int
main(void)
{
	static const int64_t shape[2] = {4096, 4096};
	static const char *const fwd[2] = {"_i // 16 * 256 + _j // 16", "_i % 16 * 16 + _j % 16"};
	double best = 1e9, t;
	int r;

	for (r = 0; r < 21; r++) {
		Arena A;
		Err e = {0};
		Layout *L, *I;
		double t0 = now_ms();

		arena_init(&A);
		L = layout_parse(&A, shape, 2, fwd, 2, &e);
		if (!L || layout_check_injective(L, &e) || !(I = layout_inverse(&A, L, 0, &e)) ||
		    layout_equal(L, L, &e) != 1) {
			printf("4096x4096 tile: failed: %s\n", e.msg);
			return 1;
		}
		t = now_ms() - t0;
		best = t < best ? t : best;
		arena_free(&A);
	}
	printf("4096x4096 tile: construction, injectivity, inverse, equality: %.3f ms (min of 21)\n",
	       best);
	return 0;
}
