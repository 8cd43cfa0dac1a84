/*
 * fuzz_frontend.c: libFuzzer entry for the whole compiler. The bytes are a
 * source text; every input that parses goes through sema, layout
 * inference, lowering and emission (tilec_compile with TILEC_DUMP_CUDA) for
 * one target picked by the last byte: CUDA sm_80, CUDA sm_90a or HIP
 * gfx90a; the last byte also picks an extra output mode (IR, layouts,
 * explain, the launcher header, HIP gfx1100 layouts), caret diagnostics and
 * a -D define. The corpus of valid programs (make fuzz seeds it with
 * samples/ and every *.tile under test/) so reaches every stage.
 * Any crash, leak or sanitizer report is a bug; so is an error without a
 * message, an error with output, or a success without output.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tilec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
one(const uint8_t *data, size_t size, tilec_dump dump, tilec_target target, const char *arch,
    unsigned sel)
{
	static const char *const defs[] = {"BM=64", "BK=0", "X=1.5", "N=2147483647"};
	tilec_options o;
	tilec_result r;

	tilec_options_init(&o);
	o.filename = "fuzz.tile";
	o.dump = dump;
	o.target = target;
	o.arch = arch;
	o.caret = (sel & 0x80) != 0;
	if (sel & 0x40) {
		o.defines = defs + (sel >> 4) % 4;
		o.ndefines = 1;
	}
	tilec_compile((const char *)data, size, &o, &r);
	if (r.status != TILEC_OK && (!r.diagnostics[0] || r.output[0]))
		__builtin_trap(); /* an error always says why, and gives no output */
	if (r.status == TILEC_OK && dump != TILEC_DUMP_AST && !r.output[0])
		__builtin_trap(); /* a program has output in every mode but AST (may be empty) */
	tilec_result_free(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned sel = size ? data[size - 1] : 0;
	tilec_options o;
	tilec_result r;
	int parses;

	/* parse only first: input that does not parse gets the AST dump's error and stops */
	tilec_options_init(&o);
	o.filename = "fuzz.tile";
	o.dump = TILEC_DUMP_AST;
	tilec_compile((const char *)data, size, &o, &r);
	parses = r.status == TILEC_OK;
	if (!parses && !r.diagnostics[0])
		__builtin_trap();
	tilec_result_free(&r);
	if (!parses)
		return 0;
	switch (sel % 3) {
	case 0: one(data, size, TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "sm_80", sel); break;
	case 1: one(data, size, TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "sm_90a", sel); break;
	default: one(data, size, TILEC_DUMP_CUDA, TILEC_TARGET_HIP, "gfx90a", sel); break;
	}
	switch ((sel >> 2) % 5) {
	case 0: one(data, size, TILEC_DUMP_IR, TILEC_TARGET_CUDA, NULL, sel); break;
	case 1: one(data, size, TILEC_DUMP_LAYOUTS, TILEC_TARGET_CUDA, NULL, sel); break;
	case 2: one(data, size, TILEC_DUMP_EXPLAIN, TILEC_TARGET_CUDA, NULL, sel); break;
	case 3: one(data, size, TILEC_DUMP_HEADER, TILEC_TARGET_CUDA, "sm_80", sel); break;
	default: one(data, size, TILEC_DUMP_LAYOUTS, TILEC_TARGET_HIP, "gfx1100", sel); break;
	}
	return 0;
}
