// api_cxx.cpp: every public header of tilec in one C++ file (extern "C", no clash between
// them), built with -Wall -Wextra -Werror -pedantic by make test and run: a compile, a
// CPU-target launch of a small kernel through tilec_program.h, the unified statuses.
#include "tilec.h"
#include "tilec_jit.h"
#include "tilec_plugin.h"
#include "tilec_program.h"
#include "tilec_run.h"
#include "tilec_status.h"
#include "tilec_tile.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

static const char src[] =
	"kernel scale(X: f32[N], Y: f32[N], a: f32)\n"
	"    grid(cdiv(N, 64)) threads(64)\n"
	"{\n"
	"    local x: f32[64];\n"
	"    copy(X[bx * 64], x);\n"
	"    for i in parallel(64) {\n"
	"        x[i] = x[i] * a + 1.0;\n"
	"    }\n"
	"    copy(x, Y[bx * 64]);\n"
	"}\n";

static int fails;
#define EXPECT(c) do { if (!(c)) { std::fprintf(stderr, "api_cxx: %s:%d: %s\n", __FILE__, __LINE__, #c); fails++; } } while (0)

int
main()
{
	tilec_options o;
	tilec_result r;
	tilec_options_init(&o);
	o.dump = TILEC_DUMP_CUDA;
	tilec_status st = tilec_compile(src, sizeof src - 1, &o, &r);
	EXPECT(st == TILEC_OK);
	EXPECT(std::strstr(r.output, "__global__") != nullptr);
	tilec_result_free(&r);
	EXPECT(std::strcmp(tilec_status_str(TILEC_ERR_COMPILE), "TILEC_ERR_COMPILE") == 0);

	tilec_program *p = nullptr;
	char *err = nullptr;
	st = tilec_program_compile(src, sizeof src - 1, nullptr, &p, &err);
	EXPECT(st == TILEC_OK);
	if (p) {
		float x[70], y[70], a = 3;
		for (int i = 0; i < 70; i++)
			x[i] = (float)i, y[i] = 0;
		void *args[] = {x, y, &a};
		int64_t n = 70;
		st = tilec_cpu_launch(p, 0, args, &n, nullptr, 0, &err);
		EXPECT(st == TILEC_OK);
		if (st != TILEC_OK)
			std::fprintf(stderr, "%s\n", err);
		for (int i = 0; i < 70; i++)
			EXPECT(y[i] == (float)i * 3 + 1);
		tilec_program_free(p);
	}
	std::free(err);

	tilec_jit *j = nullptr;
	EXPECT(tilec_jit_create(&j, nullptr, nullptr) == TILEC_OK);
	tilec_jit_destroy(j);
	tilec_run_options ro;
	tilec_run_options_init(&ro);
	EXPECT(ro.kernel == nullptr);
	EXPECT(TILEC_PLUGIN_API_VERSION >= 1);
	std::printf("api_cxx: %s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
