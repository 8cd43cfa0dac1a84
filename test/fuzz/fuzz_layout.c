/*
 * fuzz_layout.c: libFuzzer entry for `tilec layout` (layout_cli_run). The
 * bytes are its arguments, one per line, after "layout". `bench` and `--svg`
 * (which time and write files) are left out, and so are shapes past 1024
 * elements a side (table sizes are bounded on another branch). A crash, a
 * sanitizer report, or a failure without a message is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a number in s larger than lim */
static int
big(const char *s, long lim)
{
	for (; *s; s++)
		if (*s >= '0' && *s <= '9') {
			char *e;
			long v = strtol(s, &e, 10);

			if (v > lim || e - s > 6)
				return 1;
			s = e - 1;
		}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *argv[18], *p;
	int argc = 1, i, rc;
	Buf out, err;

	if (size > 2048)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	argv[0] = "layout";
	for (p = text; p && argc < 17; argc++) {
		argv[argc] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = 0;
	}
	argv[argc] = NULL;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--svg") || !strcmp(argv[i], "bench") || big(argv[i], 1024)) {
			free(text);
			return 0;
		}
	buf_init(&out);
	buf_init(&err);
	rc = layout_cli_run(argc, argv, &out, &err);
	if (rc != 0 && !err.len)
		__builtin_trap();
	buf_free(&out);
	buf_free(&err);
	free(text);
	return 0;
}
