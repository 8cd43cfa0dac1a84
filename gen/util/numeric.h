/*
 * numeric.h: element conversions, bit-exact (gen/util/numeric.c): the meaning of
 * every element type's rounding (docs/semantics.md), used by the reference
 * interpreter, the CPU run harness and the emitter (constants are printed
 * rounded to their type).
 */
#ifndef NUMERIC_H
#define NUMERIC_H

#include <stdint.h>

#include "ir.h"


/* the element at p of type t as a double (integers exactly; bool 0/1) */
double num_load(DType t, const void *p);
/* store v into p as type t: round to nearest even, overflow to inf for f16/bf16
 * and saturation to the largest finite value for fp8 (docs/semantics.md);
 * integers: v must be in range (the caller checks) and is truncated to zero */
void num_store(DType t, void *p, double v);
uint16_t num_f32_to_f16(float f);
float num_f16_to_f32(uint16_t h);
uint16_t num_f32_to_bf16(float f);
float num_bf16_to_f32(uint16_t h);
uint8_t num_f32_to_fp8(DType t, float f);   /* t: DT_FP8E4M3 or DT_FP8E5M2 */
float num_fp8_to_f32(DType t, uint8_t v);
/* added with the interpreter: the narrow float types (f16, bf16, fp8_e4m3,
 * fp8_e5m2) from and to their bits, rounding once from a double as num_store
 * does (0 for other types); num_round(t, v): v rounded to float type t (f32:
 * (float)v, f64: v), i.e. the value num_store then num_load would give */
uint32_t num_encode(DType t, double v);
double num_decode(DType t, uint32_t bits);
double num_round(DType t, double v);

#endif
