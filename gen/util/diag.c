/*
 * diag.c: collecting and formatting diagnostics. Library code only records;
 * printing is the caller's choice (the CLI prints with a caret on a terminal).
 */
#include <stdio.h>
#include <string.h>

#include "tl.h"

void
diags_init(Diags *d, Arena *a)
{
	memset(d, 0, sizeof *d);
	d->arena = a;
}

void
diag_vadd(Diags *d, DiagKind k, Loc loc, const char *fmt, va_list ap)
{
	Diag *g;
	char tmp[1024];
	int limit = d->limit ? d->limit : 1000;

	if (k == DIAG_ERROR) {
		d->nerr++;
		if (d->nerr > limit)
			return;
	} else if (k == DIAG_WARNING) {
		d->nwarn++;
	}
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	g = anew(d->arena, Diag);
	if (!g)
		return;
	g->kind = k;
	g->loc = loc;
	g->msg = arena_strdup(d->arena, tmp);
	if (d->tail)
		d->tail->next = g;
	else
		d->head = g;
	d->tail = g;
}

void
diag(Diags *d, Loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(d, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
}

void
diag_warn(Diags *d, Loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(d, DIAG_WARNING, loc, fmt, ap);
	va_end(ap);
}

void
diag_note(Diags *d, Loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(d, DIAG_NOTE, loc, fmt, ap);
	va_end(ap);
}

/* the text of line `line` (1-based) of src, or NULL */
static const char *
findline(const char *src, size_t n, int line, size_t *len)
{
	size_t i = 0, start;
	int l = 1;

	while (l < line && i < n) {
		if (src[i++] == '\n')
			l++;
	}
	if (l != line || i > n)
		return NULL;
	start = i;
	while (i < n && src[i] != '\n')
		i++;
	*len = i - start;
	return src + start;
}

void
diag_format(const Diags *d, Buf *out, const char *src, size_t srclen, int caret)
{
	static const char *kinds[] = {"error", "warning", "note"};
	const Diag *g;
	int shown = 0, limit = d->limit ? d->limit : 1000;

	for (g = d->head; g; g = g->next) {
		if (g->loc.line > 0)
			buf_printf(out, "%s:%d:%d: %s: %s\n", g->loc.file ? g->loc.file : "<input>",
				   g->loc.line, g->loc.col, kinds[g->kind], g->msg);
		else
			buf_printf(out, "%s: %s: %s\n", g->loc.file ? g->loc.file : "tilec", kinds[g->kind],
				   g->msg);
		if (g->kind == DIAG_ERROR)
			shown++;
		if (caret && src && g->loc.line > 0) {
			size_t len, i;
			const char *l = findline(src, srclen, g->loc.line, &len);

			if (l && len <= 240) {
				buf_putc(out, ' ');
				buf_putn(out, l, len);
				buf_puts(out, "\n ");
				for (i = 0; i + 1 < (size_t)g->loc.col && i < len; i++)
					buf_putc(out, l[i] == '\t' ? '\t' : ' ');
				buf_puts(out, "^\n");
			}
		}
	}
	if (d->nerr > limit)
		buf_printf(out, "tilec: error: too many errors (%d), stopped after %d\n", d->nerr, shown);
}
