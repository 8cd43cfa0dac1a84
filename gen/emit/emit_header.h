/*
 * emit_header.h: the build-time launcher header (emit_header.c), written by
 * `tilec x.tile -o x.cu --header x.h` and by TILEC_DUMP_HEADER.
 */
#ifndef EMIT_HEADER_H
#define EMIT_HEADER_H

#include "ir.h"
#include "tl.h"

/*
 * A C header with one launcher per kernel of p. cuda is the CUDA C that
 * emit_cuda wrote for p: the launch contract (threads, dynamic shared memory)
 * and the vector row checks are read from it so the launcher matches the
 * kernel exactly. 0, or -1 with err (a grid expression that is not an
 * integer expression of sizes and integer scalars, names that collide).
 */
int emit_header(Arena *a, const IrProgram *p, const char *cuda, Buf *out, Err *err);

#endif
