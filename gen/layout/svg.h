/*
 * svg.h: pictures of layouts (svg.c) for `tilec layout show ... --svg FILE`.
 */
#ifndef SVG_H
#define SVG_H

#include "layout.h"

enum { SVG_MAXCELLS = 1 << 16 };

/*
 * Append an SVG document picturing L (rank 1 or 2, at most SVG_MAXCELLS
 * elements): a Fragment as a grid of logical elements coloured by thread and
 * labelled T<thread>:<slot> (replica 0; the title lists every holder); a
 * shared-memory Layout as its bank map: each element labelled and coloured
 * by the 4-byte bank (of 32) its offset falls in, so a swizzle shows as
 * permuted colours. Cell text ids are "eR_C". Returns 0 or -1 with err set.
 */
int svg_layout(Buf *b, const Layout *L, int elem_bytes, Err *err);

#endif
