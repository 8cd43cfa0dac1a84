/*
 * fuzz_frontend.c: libFuzzer entry for the front end. The bytes are a
 * source text for tilec_compile (lexer, parser, sema, IR dump); the first
 * byte also picks the dump kind, caret diagnostics and a -D define, so those
 * paths are fuzzed too. Any crash, leak or sanitizer report is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tilec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* does the input contain the word "kernel"? (memmem is a GNU extension) */
static int
has_kernel(const uint8_t *data, size_t size)
{
	size_t i;

	for (i = 0; i + 6 <= size; i++)
		if (!memcmp(data + i, "kernel", 6))
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const defs[] = {"BM=64", "BK=0", "X=1.5"};
	tilec_options o;
	tilec_result r;
	unsigned sel = size ? data[0] : 0;

	tilec_options_init(&o);
	o.filename = "fuzz.tile";
	o.dump = (sel & 3) == 1 ? TILEC_DUMP_AST : TILEC_DUMP_IR;
	o.caret = (sel & 4) != 0;
	if (sel & 8) {
		o.defines = defs + (sel >> 4) % 3;
		o.ndefines = 1;
	}
	tilec_compile((const char *)data, size, &o, &r);
	/* the IR of a program needs a kernel in the input, and is not empty
	 * (an AST dump of an empty program is empty and fine) */
	if (r.status == TILEC_OK && o.dump == TILEC_DUMP_IR &&
	    (!has_kernel(data, size) || !r.output[0]))
		__builtin_trap();
	if (r.status != TILEC_OK && (!r.diagnostics[0] || r.output[0]))
		__builtin_trap(); /* an error always says why, and gives no output */
	tilec_result_free(&r);
	return 0;
}
