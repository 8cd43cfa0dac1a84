/*
 * dumplayout.h: dump_layout and assert_same_layout (dumplayout.c), and
 * require_amd_wmma_layout's fragment builder (wmma_bases.c). The dump text
 * follows TLX's DumpLayout: thread/value CuTe form for a fragment, offset ->
 * element for a shared buffer, Swizzle<B,M,S> o shape:stride, else the
 * linear layout.
 */
#ifndef DUMPLAYOUT_H
#define DUMPLAYOUT_H

#include "ir.h"
#include "linear.h"

/*
 * The CuTe text of a linear layout, as TLX prints it: a register layout as
 * ((thread...),(value...)):((thread...),(value...)), a buffer (in-dims
 * offset, block) as one flat group S:D. Returns 1 and appends the text when
 * every non-zero bit stride is a distinct power of two, else 0 (nothing
 * appended).
 */
int dump_cute_strided(Buf *b, const LinLayout *L);

/*
 * The third part of a dump for a layout (a Fragment, or a shared Layout
 * when it is not a fragment): `//   cute: TEXT\n`, or the linear-layout
 * fallback, or a note with tilec's own printed form when the layout is not
 * linear either. Returns 0, or -1 with err set.
 */
int dump_layout_text(Arena *a, Buf *b, const Layout *L, int warp_size, Err *err);

/*
 * The last layout pass: for every dump_layout statement of the program
 * (source order) append `// tilec.dump_layout @ file:line:col`, the type
 * line and the layout text to out; check every assert_same_layout against
 * the final layouts (IrBuffer.layout), reporting mismatches to d. Returns
 * the number of failed assertions.
 */
int dump_layout_program(Arena *a, Diags *d, const IrProgram *p, int warp_size, Buf *out);

/*
 * require_amd_wmma_layout: the fragment of an AMD WMMA tile (v1/v2/v3, 16x16
 * instruction tile, lane bits as the hardware's) times the user's register
 * and warp bases in units of instruction tiles, over the tile `shape` (rank
 * 2). Checked: every basis has rank entries, the bases cover the shape,
 * instr_shape's M and N are 16. NULL with err set otherwise.
 */
Fragment *wmma_bases_fragment(Arena *a, int version, int transposed, const IntLists *warp_bases,
			      const IntLists *reg_bases, const int64_t *instr_shape, int ninstr,
			      const int64_t *shape, int rank, Err *err);
/* the same as a linear layout (register, lane, warp, block), warp size 32 */
int wmma_bases_linear(Arena *a, int version, int transposed, const IntLists *warp_bases,
		      const IntLists *reg_bases, const int64_t *instr_shape, int ninstr,
		      const int64_t *shape, int rank, LinLayout *out, Err *err);

#endif
