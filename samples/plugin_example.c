/*
 * plugin_example.c: a sample tilec plugin. Build it as a shared library
 *   cc -shared -fPIC -I runtime samples/plugin_example.c -o plugin_example.so
 * and load it with `tilec --plugin=./plugin_example.so file.tile`. Its pass
 * count-stmts runs after verify-ir and notes each kernel's statement and
 * buffer counts (as notes in the compile's diagnostics).
 */
#include <stdio.h>

#include "tilec_plugin.h"

static int
count_stmts(tilec_ir *ir, const tilec_ir_api *api, void *arg, char *msg, size_t msgsz)
{
	char line[256];
	int k, n = api->kernel_count(ir);

	(void)arg;
	if (n < 0) {
		snprintf(msg, msgsz, "no program");
		return 1;
	}
	for (k = 0; k < n; k++) {
		snprintf(line, sizeof line, "count-stmts: kernel %s has %d statements and %d buffers",
			 api->kernel_name(ir, k), api->stmt_count(ir, k), api->buffer_count(ir, k));
		api->note(ir, line);
	}
	return 0;
}

static const tilec_pass_info passes[] = {
	{"count-stmts", "verify-ir", count_stmts, NULL},
};

const tilec_plugin_info *tilec_plugin_get_info(void);

const tilec_plugin_info *
tilec_plugin_get_info(void)
{
	static const tilec_plugin_info info = {TILEC_PLUGIN_API_VERSION, "example", 1, passes};

	return &info;
}
