/*
 * err.c: error values for the algebra and layout code, and checked integer
 * arithmetic. Floor division and modulo follow Python/TVM: the quotient
 * rounds toward minus infinity and the remainder takes the divisor's sign.
 */
#include <stdio.h>
#include <string.h>

#include "tl.h"

int
err_set(Err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	e->set = 1;
	return -1;
}

int
err_loc(Err *e, Loc l)
{
	if (e && !e->loc.line && l.line)
		e->loc = l;
	return -1;
}

void
err_clear(Err *e)
{
	if (e) {
		e->set = 0;
		e->loc.line = e->loc.col = 0;
		e->msg[0] = 0;
	}
}

int64_t
floordiv64(int64_t a, int64_t b)
{
	int64_t q, r;

	if (b == -1)
		return a == INT64_MIN ? INT64_MIN : -a; /* saturate instead of trapping */
	q = a / b;
	r = a % b;
	if (r != 0 && ((r < 0) != (b < 0)))
		q--;
	return q;
}

int64_t
floormod64(int64_t a, int64_t b)
{
	int64_t r;

	if (b == -1)
		return 0;
	r = a % b;
	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

/* [al, ah] * [bl, bh] as an interval; -1 when a corner product overflows */
int
ck_interval_mul(int64_t al, int64_t ah, int64_t bl, int64_t bh, int64_t *lo, int64_t *hi)
{
	int64_t p[4];
	int i;

	if (ck_mul(al, bl, &p[0]) || ck_mul(al, bh, &p[1]) || ck_mul(ah, bl, &p[2]) ||
	    ck_mul(ah, bh, &p[3]))
		return -1;
	*lo = *hi = p[0];
	for (i = 1; i < 4; i++) {
		if (p[i] < *lo)
			*lo = p[i];
		if (p[i] > *hi)
			*hi = p[i];
	}
	return 0;
}
