/*
 * buf.c: a growable, NUL-terminated string buffer for printers and emitters.
 * An allocation failure sets b->oom and drops further output instead of
 * aborting: library code never exits on its own.
 */
#include <limits.h>
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

/*
 * The formats the generators print most, formatted here: literal text, %s, %c, %% and the
 * integers %d %i %u %x with no, l, ll or z length and no flags, width or precision. Any
 * other format returns -2 before writing (the caller then uses vsnprintf). Otherwise as
 * vsnprintf: at most cap bytes with the NUL, the length the whole text has.
 */
static int
fast_format(char *dst, size_t cap, const char *fmt, va_list ap)
{
	size_t n = 0, l;
	const char *p, *lit;
	char num[24], *q;
	unsigned long long u;
	int neg, len, base;

	for (p = fmt; *p;) {
		if (*p != '%') {
			for (lit = p; *p && *p != '%'; p++)
				;
			l = (size_t)(p - lit);
			goto put;
		}
		p++;
		if (*p == 's') {
			lit = va_arg(ap, const char *);
			if (!lit)
				return -2;
			l = strlen(lit);
			p++;
			goto put;
		}
		if (*p == 'c' || *p == '%') {
			num[0] = *p == 'c' ? (char)va_arg(ap, int) : '%';
			lit = num;
			l = 1;
			p++;
			goto put;
		}
		len = 0;
		if (*p == 'l') {
			len = 1, p++;
			if (*p == 'l')
				len = 2, p++;
		} else if (*p == 'z') {
			len = 3, p++;
		}
		neg = 0;
		base = 10;
		switch (*p) {
		case 'd':
		case 'i':
			if (len == 3)
				return -2;
			{
				long long v = len == 0 ? va_arg(ap, int) : len == 1 ? va_arg(ap, long)
											: va_arg(ap, long long);

				neg = v < 0;
				u = neg ? 0ULL - (unsigned long long)v : (unsigned long long)v;
			}
			break;
		case 'x':
			base = 16;
			/* fall through */
		case 'u':
			u = len == 0 ? va_arg(ap, unsigned) : len == 1 ? va_arg(ap, unsigned long)
					 : len == 2 ? va_arg(ap, unsigned long long) : va_arg(ap, size_t);
			break;
		default:
			return -2;
		}
		p++;
		q = num + sizeof num;
		do {
			*--q = "0123456789abcdef"[u % (unsigned)base];
			u /= (unsigned)base;
		} while (u);
		if (neg)
			*--q = '-';
		lit = q;
		l = (size_t)(num + sizeof num - q);
put:
		if (n < cap) {
			size_t room = cap - n - 1;

			memcpy(dst + n, lit, l < room ? l : room);
		}
		n += l;
	}
	if (cap)
		dst[n < cap ? n : cap - 1] = 0;
	return n > (size_t)INT_MAX ? -1 : (int)n;
}

int
tl_vsnprintf(char *dst, size_t cap, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = fast_format(dst, cap, fmt, aq);
	va_end(aq);
	return n == -2 ? vsnprintf(dst, cap, fmt, ap) : n;
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
	n = tl_vsnprintf(b->s + b->len, b->cap - b->len, fmt, aq);
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
	tl_vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
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

uint64_t
tl_strhash(const char *s, size_t n, uint64_t h)
{
	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}
