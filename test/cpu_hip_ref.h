/*
 * cpu_hip_ref.h: the expected results of the AMD primitives that
 * templates/tilec_cpu_hip.h emulates, written from the AMD documents
 * independently of the emulation and of gen/layout/mma.c: the matrix layouts in the
 * other direction ("matrix element to register mapping" of the AMD Matrix
 * Instruction Calculator, where the emulation uses "register to matrix
 * element"), ds_bpermute as the ISA's pseudo code. Used by
 * test/check_cpu_hip.c. Plain C; every function static.
 */
#ifndef CPU_HIP_REF_H
#define CPU_HIP_REF_H

#include <stdint.h>

/* ---- V_MFMA_F32_16X16X16_F16 / BF16(_1K), wave64 (CDNA2, CDNA3) ----
 * calculator -a cdna3 -i v_mfma_f32_16x16x16_f16 -d, "Matrix element to register mapping":
 *   A[i][k]: GPR floor(k / 2) % 2, bits 16 (k % 2); lane 16 floor(k / 4) + i
 *   B[k][j]: GPR floor(k / 2) % 2, bits 16 (k % 2); lane 16 floor(k / 4) + j
 *   C/D[i][j]: GPR i % 4; lane 16 floor(i / 4) + j
 * elem: the 16-bit element of the lane's 4 (2 GPRs, low half first) */
static void
ref_mfma_a(int i, int k, int *lane, int *elem)
{
	*lane = 16 * (k / 4) + i;
	*elem = 2 * ((k / 2) % 2) + k % 2;
}

static void
ref_mfma_b(int k, int j, int *lane, int *elem)
{
	*lane = 16 * (k / 4) + j;
	*elem = 2 * ((k / 2) % 2) + k % 2;
}

static void
ref_mfma_d(int i, int j, int *lane, int *reg)
{
	*lane = 16 * (i / 4) + j;
	*reg = i % 4;
}

/* ---- V_WMMA_F32_16X16X16_F16 / BF16, wave32 (RDNA3) ----
 * calculator -a rdna3 -i v_wmma_f32_16x16x16_f16 -w 32 -d:
 *   A[i][k]: GPR floor(k / 2), bits 16 (k % 2); lanes i and i + 16
 *   B[k][j]: GPR floor(k / 2), bits 16 (k % 2); lanes j and j + 16
 *   C/D[i][j]: GPR floor(i / 2); lane (16 i) % 32 + j */
static void
ref_wmma_a(int i, int k, int *lane0, int *lane1, int *elem)
{
	*lane0 = i;
	*lane1 = i + 16;
	*elem = 2 * (k / 2) + k % 2;
}

static void
ref_wmma_b(int k, int j, int *lane0, int *lane1, int *elem)
{
	*lane0 = j;
	*lane1 = j + 16;
	*elem = 2 * (k / 2) + k % 2;
}

static void
ref_wmma_d(int i, int j, int *lane, int *reg)
{
	*lane = (16 * i) % 32 + j;
	*reg = i / 2;
}

/* ---- DS_BPERMUTE_B32 (CDNA3 / RDNA3 ISA, LDS instructions):
 *   for each active lane i: src_lane = (addr[i] + offset) / 4 % wave; dst[i] = EXEC[src_lane] ?
 *   data[src_lane] : 0
 * a wave of `active` lanes (0 .. active-1 exist); returns the lane read, or -1 for a 0 */
static int
ref_bpermute(int addr, int wave, int active)
{
	int src = (int)(((unsigned)addr / 4) % (unsigned)wave);

	return src < active ? src : -1;
}

#endif
