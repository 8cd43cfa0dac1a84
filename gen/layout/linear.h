/*
 * linear.h: a linear-layout (F2 basis) view of tilec layouts, as Triton's
 * LinearLayout: per input dim (register, lane, warp, block for a fragment;
 * offset, block for a shared buffer) one basis vector per input bit, each a
 * coordinate of the logical tile. Built by probing one-hot inputs and proved
 * over the whole domain (linear.c); printed as LinearLayout::toString.
 */
#ifndef LINEAR_H
#define LINEAR_H

#include "cute.h"
#include "layout.h"

enum { LIN_MAXIN = 4, LIN_MAXBITS = 40 };

typedef struct LinLayout {
	int nin;                                /* input dims in canonical order */
	const char *in_name[LIN_MAXIN];         /* "register", "lane", "warp", "block" / "offset", "block" */
	int nbits[LIN_MAXIN];                   /* input dim k has size 2^nbits[k] */
	int64_t *base[LIN_MAXIN];               /* nbits[k] * nout coordinates, bit-major */
	int nout;                               /* rank of the tile: out dims dim0.. */
	int64_t out_size[LAYOUT_MAXDIM];
} LinLayout;

/*
 * Each builder returns 1 with *out filled when the layout is linear over F2
 * (power-of-two domains, every point the XOR of its bits' bases), 0 when it
 * is not (the reason in err->msg), -1 on an error.
 *
 * lin_from_table: tab[t * nslots + s] is the row-major element index of the
 * tile `shape` held by thread t in slot s; thread bits split into lanes
 * (the low log2(warp_size)) and warps.
 */
int lin_from_table(Arena *a, const int64_t *tab, int64_t nthreads, int64_t nslots, int warp_size,
		   const int64_t *shape, int rank, LinLayout *out, Err *err);
/* a Fragment: (thread, slot) -> element, thread from the fragment's thread map */
int lin_from_fragment(Arena *a, const Fragment *F, int warp_size, LinLayout *out, Err *err);
/* a shared-memory Layout: offset (row-major over its outputs) -> element */
int lin_from_shared(Arena *a, const Layout *L, LinLayout *out, Err *err);
/* a CuTe TV layout (thread, value) -> row-major element index of `shape` */
int lin_from_cute_tv(Arena *a, CuteLayout tv, const int64_t *shape, int rank, int warp_size,
		     LinLayout *out, Err *err);
/* a CuTe layout offset -> element index (a shared buffer given as `_64:_1`) */
int lin_from_cute_buffer(Arena *a, CuteLayout l, const int64_t *shape, int rank, LinLayout *out,
			 Err *err);
/* a map element -> offset (off_of_elem[e] for row-major element e), inverted:
 * offset -> element, as a buffer layout */
int lin_from_offsets(Arena *a, const int64_t *off_of_elem, const int64_t *shape, int rank,
		     LinLayout *out, Err *err);
/* Apply to one input point (in[k] is the index along input dim k); writes nout coords. */
void lin_apply(const LinLayout *L, const int64_t *in, int64_t *coord);
/* structural equality (same in-dims, bases and out sizes) as Triton's operator== */
int lin_equal(const LinLayout *a, const LinLayout *b);
/* LinearLayout::toString: a leading newline, ` - lane=1 -> (1)` lines, out dims */
void lin_print(Buf *b, const LinLayout *L);

#endif
