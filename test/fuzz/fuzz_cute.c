/*
 * fuzz_cute.c: libFuzzer entry for the CuTe parser and algebra
 * (cute_run_op, as `tilec cute` and `tilec cute --batch` call it). The bytes
 * are up to 16 lines of op<TAB>arg1[<TAB>arg2]; each line is one operation.
 * A crash, a sanitizer report or an error without a message is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cute.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *next;
	int nl = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (line = text; line && nl < 16; line = next, nl++) {
		char *args[2], *tab;
		int nargs = 0;
		Arena a;
		Buf out;
		Err err;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if ((tab = strchr(line, '\t'))) {
			*tab = 0;
			args[nargs++] = tab + 1;
			if ((tab = strchr(args[0], '\t'))) {
				*tab = 0;
				args[nargs++] = tab + 1;
			}
		}
		if (!nargs)
			continue;
		arena_init(&a);
		buf_init(&out);
		memset(&err, 0, sizeof err);
		if (cute_run_op(&a, line, nargs, (const char *const *)args, &out, &err) < 0 &&
		    !err.msg[0])
			__builtin_trap();
		buf_free(&out);
		arena_free(&a);
	}
	free(text);
	return 0;
}
