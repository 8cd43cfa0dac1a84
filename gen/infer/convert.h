/*
 * convert.h: layout conversions of local tiles (convert.c). convert_split
 * runs before inference: release_layout(x) and require_layout(x, ...) with
 * uses of x on both sides cut x's life in two buffers joined by a conversion
 * copy. The convert-layouts pass runs after inference and lowers each
 * conversion: dropped when the layouts are equal, a register permutation
 * when every thread holds the same elements, else a round trip through a
 * shared scratch buffer (copy, barrier, copy, barrier).
 */
#ifndef CONVERT_H
#define CONVERT_H

#include "ir.h"
#include "layout.h"
#include "passes.h"

/* split every kernel's local tiles at their release/require points; errors in d */
int convert_split(Arena *a, Diags *d, IrProgram *p);
/*
 * 1 when the conversion A -> B of a local tile needs no shared memory: both
 * fragments give every thread the same elements (no replicas) and the slot
 * permutation is the same for every thread; 0 when not; -1 with err.
 */
int convert_in_registers(const Layout *A, const Layout *B, Err *err);
/* how a conversion lowers: "none" (equal), "registers", "shared"; NULL with err */
const char *convert_kind(const Layout *A, const Layout *B, Err *err);
/* the built-in pass "convert-layouts" */
int pass_convert_layouts(PassCtx *c);

#endif
