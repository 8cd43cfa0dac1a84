/*
 * compile.h: internal entry points of the compile pipeline (compile.c) for
 * other parts of the library.
 */
#ifndef COMPILE_H
#define COMPILE_H

#include "ir.h"
#include "tilec.h"
#include "tl.h"

/* parse, sema and the IR check only (the IR the reference interpreter runs);
 * NULL with diagnostics in d. o->target and o->arch fill in prog's. */
IrProgram *compile_front(Arena *a, Diags *d, const char *src, size_t len, const tilec_options *o);

#endif
