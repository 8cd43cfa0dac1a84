/*
 * svg.c: SVG pictures of layouts. A fragment is drawn as a grid of its
 * logical elements, one cell each, coloured by the owning thread and
 * labelled thread:slot; a shared-memory layout as its bank map, coloured
 * and labelled by the bank of each element's offset. Plain SVG 1.1.
 */
#include <stdio.h>
#include <string.h>

#include "svg.h"

enum { CELL_W = 44, CELL_H = 22, MARGIN = 28, BANKS = 32, BANK_BYTES = 4 };

static void
colour(Buf *b, int64_t k)
{
	/* golden-angle hues keep neighbours apart */
	buf_printf(b, "hsl(%d,65%%,%d%%)", (int)((k * 137) % 360), k % 2 ? 72 : 82);
}

int
svg_layout(Buf *b, const Layout *L, int elem_bytes, Err *err)
{
	int64_t rows, cols, r, c, x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1], rep, off, key;
	int k, W, H;

	if (!b || !L)
		return err_set(err, "svg: null argument");
	if (L->nin < 1 || L->nin > 2)
		return err_set(err, "svg: only rank 1 and 2 layouts are drawn, this one has rank %d",
			       L->nin);
	if (!L->is_frag && (elem_bytes < 1 || elem_bytes > 64))
		return err_set(err, "svg: element size %d bytes out of range", elem_bytes);
	rows = L->nin == 2 ? L->in_shape[0] : 1;
	cols = L->in_shape[L->nin - 1];
	if (rows * cols > SVG_MAXCELLS)
		return err_set(err, "svg: %lld elements is too many to draw (at most %d)",
			       (long long)(rows * cols), SVG_MAXCELLS);
	W = (int)(2 * MARGIN + cols * CELL_W);
	H = (int)(2 * MARGIN + rows * CELL_H + 20);
	buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		   "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"10\">\n",
		   W, H, W, H);
	buf_printf(b, "<text x=\"%d\" y=\"16\" font-size=\"12\">%s [%lld x %lld]: %s</text>\n",
		   MARGIN, L->is_frag ? "fragment" : "shared", (long long)rows, (long long)cols,
		   L->is_frag ? "thread:slot, colour = thread" : "bank of each element, colour = bank");
	for (c = 0; c < cols; c++)
		buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%lld</text>\n",
			   (int)(MARGIN + c * CELL_W + CELL_W / 2), MARGIN + 14, (long long)c);
	for (r = 0; r < rows; r++)
		buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%lld</text>\n", MARGIN - 4,
			   (int)(MARGIN + 20 + r * CELL_H + 15), (long long)r);
	for (r = 0; r < rows; r++) {
		for (c = 0; c < cols; c++) {
			int px = (int)(MARGIN + c * CELL_W), py = (int)(MARGIN + 20 + r * CELL_H);

			x[0] = L->nin == 2 ? r : c;
			x[1] = c;
			x[L->nin] = 0;
			if (layout_eval(L, x, y, err))
				return -1;
			off = 0;
			for (k = 0; k < L->nout; k++)
				off = off * L->out_shape[k] + y[k];
			key = L->is_frag ? y[L->nout] : off * elem_bytes / BANK_BYTES % BANKS;
			buf_printf(b, "<g><title>(%lld, %lld):", (long long)r, (long long)c);
			if (L->is_frag) {
				for (rep = 0; rep < L->rep; rep++) {
					x[L->nin] = rep;
					if (layout_eval(L, x, y, err))
						return -1;
					buf_printf(b, " T%lld", (long long)y[L->nout]);
				}
				buf_printf(b, " slot %lld", (long long)off);
			} else {
				buf_printf(b, " offset %lld bank %lld", (long long)off, (long long)key);
			}
			buf_printf(b, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
				   "fill=\"", px, py, CELL_W, CELL_H);
			colour(b, key);
			buf_printf(b, "\" stroke=\"#555\" stroke-width=\"0.5\"/>");
			buf_printf(b, "<text id=\"e%lld_%lld\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
				   (long long)r, (long long)c, px + CELL_W / 2, py + 15);
			if (L->is_frag)
				buf_printf(b, "T%lld:%lld", (long long)key, (long long)off);
			else
				buf_printf(b, "b%lld", (long long)key);
			buf_printf(b, "</text></g>\n");
		}
	}
	buf_printf(b, "</svg>\n");
	return b->oom ? err_set(err, "svg: out of memory") : 0;
}
