/*
 * buf.c: a growable, NUL-terminated string buffer for printers and emitters.
 * An allocation failure sets b->oom and drops further output instead of
 * aborting: library code never exits on its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl.h"

void
buf_init(Buf *b)
{
	memset(b, 0, sizeof *b);
}

void
buf_free(Buf *b)
{
	free(b->s);
	memset(b, 0, sizeof *b);
}

void
buf_reset(Buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = 0;
}

static int
grow(Buf *b, size_t extra)
{
	size_t cap;
	char *s;

	if (b->oom)
		return -1;
	if (b->len + extra + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return -1;
		}
		cap *= 2;
	}
	s = realloc(b->s, cap);
	if (!s) {
		b->oom = 1;
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

void
buf_putn(Buf *b, const char *s, size_t n)
{
	if (grow(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void
buf_puts(Buf *b, const char *s)
{
	buf_putn(b, s, strlen(s));
}

void
buf_putc(Buf *b, int c)
{
	char ch = (char)c;

	buf_putn(b, &ch, 1);
}

void
buf_vprintf(Buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (b->oom)
		return;
	/* formatted straight into the room there is (one pass); measured and redone only when
	 * it does not fit. An empty buffer gets its first 64 bytes before */
	if (!b->s && grow(b, 0))
		return;
	va_copy(aq, ap);
	n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, aq);
	va_end(aq);
	if (n < 0) {
		b->s[b->len] = 0;
		return;
	}
	if ((size_t)n < b->cap - b->len) {
		b->len += (size_t)n;
		return;
	}
	b->s[b->len] = 0;
	if (grow(b, (size_t)n))
		return;
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
buf_printf(Buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

char *
buf_take(Buf *b)
{
	char *s = b->s;

	if (!s) {
		s = malloc(1);
		if (s)
			s[0] = 0;
	}
	memset(b, 0, sizeof *b);
	return s;
}

const char *
buf_str(const Buf *b)
{
	return b->s ? b->s : "";
}
