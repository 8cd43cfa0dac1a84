// tilec_cpu.h: the CPU stand-in for tilec_cuda.h (cpu/cpuexec.h). The CUDA C that tilec emits
// is compiled unchanged as C++17 (g++/clang++, -DTILEC_CPU=1) with this header in place of
// tilec_cuda.h, and runs on the CPU with the meaning it has on an NVIDIA GPU:
//
//  - every thread of a block is a fiber with its own stack (mmap, guard page below it); a
//    fiber runs until it blocks at __syncthreads, at a warp collective (shuffles, __syncwarp,
//    ldmatrix, mma.sync) or at a warpgroup collective (wgmma.*), or returns. The context
//    switch is hand-written for x86-64 (callee-saved registers, rsp, mxcsr, x87 control
//    word; no system call); other architectures use ucontext. Blocks run one after another,
//    blockIdx.z, .y, .x with x fastest. A collective is completed by the last thread that
//    arrives (one pass over the warp), so nothing is O(threads^2).
//  - asynchronous operations are asynchronous: cp.async copies and wgmma.mma_async are
//    performed when a wait_group retires their group, not when they are issued (below).
//  - memory checks: tensors live between PROT_NONE guard pages with canaries in the slack;
//    shared memory is poisoned before every block, with a canary tail and guard pages past
//    the launch's dynamic size; a SIGSEGV/SIGBUS handler (on an alternate stack) names the
//    tensor, the shared memory or the fiber stack that was overrun.
//  - the executable side of cpuexec.h: main(argc, argv) reads the job file argv[1], runs
//    every block, writes the tensors to argv[2]; exit 0 (ran), 2 (bad job file), 3 (a
//    run-time error, "tilec-cpu: error: <message>" on standard error), 1 (the harness itself
//    failed: out of memory, cannot write the output).
//
// The PTX semantics each helper follows are cited at the helper (PTX ISA 8.x/9.0 section
// numbers). This header is one translation unit's worth of code: it is included once.
//
// The HIP C that tilec emits runs on the same runtime: templates/tilec_cpu_hip.h (installed as
// tilec_hip.h) defines TL_CPU_HIP and includes this file. TL_CPU_HIP leaves out the CUDA device
// helpers (shuffles, __syncwarp, conversions, cp.async, ldmatrix, mma.sync, wgmma), which
// tilec_cpu_hip.h replaces with the AMD ones; TL_CPU_WAVE (set by the build, cpuexec.c) is the
// number of lanes of a warp / wavefront the collectives and the lane/warp numbering use: 32 for
// CUDA (the default; the CUDA build is unchanged by it), 64 on gfx90a/gfx942, 32 on gfx1100.
#pragma once
#ifndef TILEC_CPU_H
#define TILEC_CPU_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <elf.h>
#endif
#ifndef TL_CPU_WAVE
#define TL_CPU_WAVE 32
#endif
#if TL_CPU_WAVE != 32 && TL_CPU_WAVE != 64
#error "TL_CPU_WAVE is 32 or 64"
#endif
#if TL_CPU_WAVE != 32 && !defined(TL_CPU_HIP)
#error "the CUDA emulation has warps of 32 threads (TL_CPU_WAVE 64 is for tilec_cpu_hip.h)"
#endif
// the context switch: hand-written for x86-64; ucontext elsewhere (or with -DTL_CPU_UCONTEXT)
#if defined(__x86_64__) && !defined(TL_CPU_UCONTEXT)
#define TL_CPU_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif

// ============================================================================================
// The CUDA surface used by the emitted code (after every system header: these are macros)
// ============================================================================================
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// static __shared__ arrays are function-local statics, so the fibers of a block (which run the
// same function) share them; the dynamic extern __shared__ tl_smem[] is the global array below
#define __shared__
// no restrict: the threads of a block are fibers of one process that read and write the same
// tensors between their context switches; with restrict the C++ compiler could keep a tensor's
// value in a register across __syncthreads, which no GPU does
#define __restrict__

typedef unsigned short tl_half_t; // f16 bits
typedef unsigned short tl_bf16_t; // bf16 bits
typedef unsigned int tl_u32;
typedef unsigned long long tl_u64;

struct uint3 {
	unsigned x, y, z;
};
struct dim3 {
	unsigned x, y, z;
	dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct __attribute__((aligned(16))) uint4 {
	unsigned x, y, z, w;
};
struct __attribute__((aligned(16))) int4 {
	int x, y, z, w;
};
struct __attribute__((aligned(16))) float4 {
	float x, y, z, w;
};
struct __attribute__((aligned(8))) uint2 {
	unsigned x, y;
};
struct __attribute__((aligned(8))) int2 {
	int x, y;
};
struct __attribute__((aligned(8))) float2 {
	float x, y;
};
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
static inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
static inline int2 make_int2(int x, int y) { return int2{x, y}; }
static inline float2 make_float2(float x, float y) { return float2{x, y}; }

static const int warpSize = TL_CPU_WAVE;

// ---- bit casts and math ---------------------------------------------------------------------
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
static inline long long __double_as_longlong(double d) { long long i; memcpy(&i, &d, 8); return i; }
// CUDA's rsqrtf/rsqrt (2 ulp on the GPU): 1/sqrt here; every other float function is libm's
// (expf, exp2f, logf, log2f, sqrtf, tanhf, sinf, cosf, fmaxf, fminf, fabsf and the double ones),
// which differ from CUDA's by a few ulp: the checks compare those results with a tolerance
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
// CUDA's integer max/min (math_functions.hpp); float ones are fmaxf/fminf (NaN-ignoring)
template <class A, class B> static inline auto max(A a, B b) -> decltype(a + b) { return a > b ? a : b; }
template <class A, class B> static inline auto min(A a, B b) -> decltype(a + b) { return a < b ? a : b; }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline float min(float a, float b) { return fminf(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }

// ============================================================================================
// Run-time state
// ============================================================================================
#ifndef TL_CPU_HIP
#define TL_CPU_SMEM_MAX 232448u           // the sm_90 opt-in maximum of dynamic shared memory
#define TL_CPU_SMEM_WHAT "the sm_90 maximum of 232448 bytes"
#else
#define TL_CPU_SMEM_MAX 65536u            // LDS per workgroup on gfx90a, gfx942, gfx1100
#define TL_CPU_SMEM_WHAT "the 65536 bytes of LDS of a workgroup"
#endif
#define TL_CPU_PAGE 4096u
// tl_smem: the dynamic shared memory plus at least one page past the maximum, for the canary
// tail and the guard pages (pages past the launch's size are PROT_NONE during a run)
#define TL_CPU_SMEM_ARRAY (((TL_CPU_SMEM_MAX + TL_CPU_PAGE - 1) / TL_CPU_PAGE + 1) * TL_CPU_PAGE)
#define TL_CPU_STACK (256u * 1024u)       // each fiber's stack (plus one guard page)
#define TL_CPU_POISON16 0x7fa5u           // unwritten shared memory: NaN as f16, bf16 and f32
#define TL_CPU_POISON32 0x7fa57fa5u       // (a pending wgmma's accumulators hold it too)
#define TL_CPU_CANARY 0xcb                // slack bytes around tensors, past shared memory

extern "C" {
alignas(4096) unsigned char tl_smem[TL_CPU_SMEM_ARRAY];
void tl_cpu_entry(void **a); // the trampoline, after the kernel (cpuexec_entry)
}

struct tl_cpu_ctx {
#if TL_CPU_ASM_SWITCH
	void *sp;
#else
	ucontext_t uc;
#endif
};

// one cp.async: copied from src when a wait_group retires its group
struct tl_cpu_cpa {
	unsigned char *dst;
	const unsigned char *src;
	unsigned long long group;
	int pred;
	unsigned char data[16]; // the source at issue (compared with it at completion)
};

struct tl_cpu_fiber {
	tl_cpu_ctx ctx;
	unsigned char *map; // guard page + stack
	size_t maplen;
	uint3 tidx;
	int lin, lane, warp, wg;
	int state;           // TL_READY, TL_RUN, TL_BLOCKED, TL_DONE
	const char *waiting; // the collective or barrier it waits at
	tl_cpu_cpa *cpa;     // outstanding copies, oldest first: [cpa_head, ncpa)
	int ncpa, capcpa, cpa_head;
	unsigned long long cpa_group; // the id of the group that is still open
	unsigned mbar;       // the shared address of the mbarrier it waits on (~0u: none)
	int mbar_parity;
};
enum { TL_READY, TL_RUN, TL_BLOCKED, TL_DONE };

// a warp collective in progress: the lanes' operands, the result per lane
struct tl_cpu_warp {
	int arrived, expected;
	const char *kind;
	uint64_t v[TL_CPU_WAVE], out[TL_CPU_WAVE];
	int b[TL_CPU_WAVE], c[TL_CPU_WAVE];
	const void *p[TL_CPU_WAVE];
	void *q[TL_CPU_WAVE];
	const void *r[TL_CPU_WAVE];
};

struct tl_cpu_wgop; // one wgmma.mma_async in flight
struct tl_cpu_wg {
	int arrived, expected;
	const char *kind;
	int fenced; // a wgmma.fence was executed in this block (PTX: before the first wgmma)
	int n, tb, ta, bf, rs;
	tl_u64 da[128], db[128];
	tl_u32 ra[128][4]; // wgmma RS: each thread's A registers
	float *d[128];
	int waitn;
	tl_cpu_wgop *ops; // in flight, oldest first (singly linked)
	tl_cpu_wgop *last;
	unsigned long long group; // the id of the open group
};

struct tl_cpu_tensor {
	const char *name;
	unsigned char *map, *data; // the mapping (guard, slack, data, slack, guard) and the tensor
	size_t maplen, n;
};

struct tl_cpu_static {
	unsigned char *p;
	size_t n;
	unsigned addr; // its shared-memory address (after the dynamic maximum)
	char name[64];
	char fn[64];   // the mangled name of the function it belongs to
};

static tl_cpu_fiber *tl_cpu_cur;  // the running fiber
static int tl_cpu_ntma;            // TMA loads in flight (the mbarrier section)
static void tl_cpu_tma_perform(unsigned bar);
#define threadIdx (tl_cpu_cur->tidx)
static uint3 blockIdx;
static dim3 blockDim, gridDim;

static tl_cpu_fiber *tl_cpu_fib;  // the block's threads
static tl_cpu_fiber **tl_cpu_fibp; // &tl_cpu_fib[i]
static int tl_cpu_nthreads, tl_cpu_ndone;
static tl_cpu_fiber **tl_cpu_readyq; // ring of ready fibers
static int tl_cpu_rq_head, tl_cpu_rq_n;
static tl_cpu_ctx tl_cpu_sched;   // the scheduler's context
static tl_cpu_warp *tl_cpu_warps;
static tl_cpu_wg *tl_cpu_wgs;
static int tl_cpu_nwarps, tl_cpu_nwgs;
static int tl_cpu_bar_arrived;
static tl_cpu_fiber **tl_cpu_bar_wait;
static void **tl_cpu_args;
static size_t tl_cpu_smem_bytes;  // the launch's dynamic shared memory
static size_t tl_cpu_smem_prot;   // bytes of tl_smem accessible during the run (page multiple)
static tl_cpu_tensor *tl_cpu_tensors;
static int tl_cpu_ntensors;
static tl_cpu_static *tl_cpu_statics;
static int tl_cpu_nstatics;
static int tl_cpu_running;        // inside a block (thread coordinates mean something)
static float tl_cpu_h2f_tab[65536];

// ============================================================================================
// Errors
// ============================================================================================
static void tl_cpu_where(char *s, size_t n)
{
	if (tl_cpu_running && tl_cpu_cur)
		snprintf(s, n, " (thread (%u,%u,%u) of block (%u,%u,%u))", tl_cpu_cur->tidx.x, tl_cpu_cur->tidx.y,
			 tl_cpu_cur->tidx.z, blockIdx.x, blockIdx.y, blockIdx.z);
	else if (tl_cpu_running)
		snprintf(s, n, " (block (%u,%u,%u))", blockIdx.x, blockIdx.y, blockIdx.z);
	else
		s[0] = 0;
}

// a run-time error found by the emulation: one line on stderr, exit 3
__attribute__((noreturn, format(printf, 1, 2))) static void tl_cpu_fail(const char *fmt, ...)
{
	char msg[1536], where[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tl_cpu_where(where, sizeof where);
	fprintf(stderr, "tilec-cpu: error: %s%s\n", msg, where);
	fflush(stderr);
	_exit(3);
}

// the harness itself failed (not the kernel): exit 1
__attribute__((noreturn, format(printf, 1, 2))) static void tl_cpu_fatal(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "tilec-cpu: fatal: %s\n", msg);
	fflush(stderr);
	_exit(1);
}

static void *tl_cpu_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		tl_cpu_fatal("out of memory (%zu bytes)", n);
	return p;
}

// ============================================================================================
// Fibers: context switch
// ============================================================================================
#if TL_CPU_ASM_SWITCH
// void tl_cpu_swap(void **save_sp, void *new_sp): push the callee-saved registers (System V:
// rbx, rbp, r12-r15) and the mxcsr / x87 control word, save rsp, load the other stack, pop
asm(".text\n"
    ".p2align 4\n"
    ".globl tl_cpu_swap\n"
    ".type tl_cpu_swap,@function\n"
    "tl_cpu_swap:\n"
    "\tpushq %rbp\n"
    "\tpushq %rbx\n"
    "\tpushq %r12\n"
    "\tpushq %r13\n"
    "\tpushq %r14\n"
    "\tpushq %r15\n"
    "\tsubq $16, %rsp\n"
    "\tstmxcsr 8(%rsp)\n"
    "\tfnstcw 12(%rsp)\n"
    "\tmovq %rsp, (%rdi)\n"
    "\tmovq %rsi, %rsp\n"
    "\tldmxcsr 8(%rsp)\n"
    "\tfldcw 12(%rsp)\n"
    "\taddq $16, %rsp\n"
    "\tpopq %r15\n"
    "\tpopq %r14\n"
    "\tpopq %r13\n"
    "\tpopq %r12\n"
    "\tpopq %rbx\n"
    "\tpopq %rbp\n"
    "\tret\n"
    ".size tl_cpu_swap, .-tl_cpu_swap\n");
extern "C" void tl_cpu_swap(void **save_sp, void *new_sp);

static void tl_cpu_fiber_main(void);

// a fresh context on [lo, hi): the first switch to it "returns" into tl_cpu_fiber_main with
// rsp = hi - 8 (as after a call: rsp % 16 == 8)
static void tl_cpu_ctx_init(tl_cpu_ctx *c, unsigned char *lo, unsigned char *hi)
{
	uint64_t *top = (uint64_t *)((uintptr_t)hi & ~(uintptr_t)15), *sp;
	unsigned mxcsr;
	unsigned short fpucw;

	(void)lo;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	top[-1] = 0;                             // the return address of tl_cpu_fiber_main: none
	top[-2] = (uint64_t)(uintptr_t)tl_cpu_fiber_main;
	top[-3] = top[-4] = top[-5] = top[-6] = top[-7] = top[-8] = 0; // rbp rbx r12 r13 r14 r15
	sp = top - 10;                           // 16 bytes: mxcsr at +8, x87 control word at +12
	memset(sp, 0, 16);
	memcpy((char *)sp + 8, &mxcsr, 4);
	memcpy((char *)sp + 12, &fpucw, 2);
	c->sp = sp;
}

static inline void tl_cpu_switch(tl_cpu_ctx *from, tl_cpu_ctx *to) { tl_cpu_swap(&from->sp, to->sp); }
#else
// other architectures: ucontext (swapcontext makes a system call for the signal mask)
static void tl_cpu_fiber_main(void);

static void tl_cpu_ctx_init(tl_cpu_ctx *c, unsigned char *lo, unsigned char *hi)
{
	if (getcontext(&c->uc))
		tl_cpu_fatal("getcontext failed");
	c->uc.uc_stack.ss_sp = lo;
	c->uc.uc_stack.ss_size = (size_t)(hi - lo);
	c->uc.uc_link = NULL;
	makecontext(&c->uc, tl_cpu_fiber_main, 0);
}

static inline void tl_cpu_switch(tl_cpu_ctx *from, tl_cpu_ctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

static inline void tl_cpu_make_ready(tl_cpu_fiber *f)
{
	f->state = TL_READY;
	f->waiting = NULL;
	tl_cpu_readyq[(tl_cpu_rq_head + tl_cpu_rq_n++) % tl_cpu_nthreads] = f;
}

static inline void tl_cpu_make_ready_front(tl_cpu_fiber *f)
{
	f->state = TL_READY;
	f->waiting = NULL;
	tl_cpu_rq_head = (tl_cpu_rq_head + tl_cpu_nthreads - 1) % tl_cpu_nthreads;
	tl_cpu_rq_n++;
	tl_cpu_readyq[tl_cpu_rq_head] = f;
}

// The schedule (TILEC_CPU_SCHEDULE): which ready thread runs next. Any schedule is a legal GPU
// interleaving; they differ in which missing barriers they expose.
//  depth (default): the threads released by a collective run next, in thread order, ahead of
//    threads that have not caught up: warp 0 (warpgroup 0) runs as far as it can go, up to a
//    __syncthreads, before warp 1 starts; so it reads what later warps have not written yet
//  reverse: the same, threads and warps in reverse order (the last warp runs ahead)
//  fifo: released threads queue behind the others (the warps advance nearly in lockstep)
enum { TL_SCHED_DEPTH, TL_SCHED_REVERSE, TL_SCHED_FIFO };
static int tl_cpu_sched_mode;

// make the n fibers f[0], f[step], ... (all but me) ready, per the schedule
static void tl_cpu_release(tl_cpu_fiber *const *f, int n, int step, const tl_cpu_fiber *me)
{
	if (tl_cpu_sched_mode == TL_SCHED_FIFO) {
		for (int i = 0; i < n; i++)
			if (f[i * step] != me)
				tl_cpu_make_ready(f[i * step]);
	} else if (tl_cpu_sched_mode == TL_SCHED_DEPTH) {
		for (int i = n - 1; i >= 0; i--) // thread order at the front
			if (f[i * step] != me)
				tl_cpu_make_ready_front(f[i * step]);
	} else {
		for (int i = 0; i < n; i++) // reverse order at the front
			if (f[i * step] != me)
				tl_cpu_make_ready_front(f[i * step]);
	}
}

static inline tl_cpu_fiber *tl_cpu_pop_ready(void)
{
	tl_cpu_fiber *f;

	if (!tl_cpu_rq_n)
		return NULL;
	f = tl_cpu_readyq[tl_cpu_rq_head];
	tl_cpu_rq_head = (tl_cpu_rq_head + 1) % tl_cpu_nthreads;
	tl_cpu_rq_n--;
	return f;
}

// leave the running fiber (blocked or done) for the next ready one, or for the scheduler when
// none is ready (the block is finished, or deadlocked); returns when someone makes it ready
static void tl_cpu_switch_away(tl_cpu_fiber *me)
{
	tl_cpu_fiber *next = tl_cpu_pop_ready();

	while (!next && tl_cpu_ntma) { // nothing can run: the TMA loads in flight complete
		int before = tl_cpu_ntma;

		tl_cpu_tma_perform(~0u);
		next = tl_cpu_pop_ready();
		if (tl_cpu_ntma == before)
			break;
	}
	if (next) {
		next->state = TL_RUN;
		tl_cpu_cur = next;
		if (next != me)
			tl_cpu_switch(&me->ctx, &next->ctx);
	} else {
		tl_cpu_cur = NULL;
		tl_cpu_switch(&me->ctx, &tl_cpu_sched);
	}
}

static void tl_cpu_block_on(const char *what)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	me->state = TL_BLOCKED;
	me->waiting = what;
	tl_cpu_switch_away(me);
}

static void tl_cpu_fiber_main(void)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	tl_cpu_entry(tl_cpu_args);
	me = tl_cpu_cur;
	me->state = TL_DONE;
	tl_cpu_ndone++;
	// copies still outstanding when a thread returns are dropped (nothing can read them)
	me->ncpa = me->cpa_head = 0;
	tl_cpu_switch_away(me);
	tl_cpu_fatal("a finished thread was resumed");
}

// ============================================================================================
// Barriers and collectives
// ============================================================================================
// __syncthreads (PTX 9.7.13.1 bar.sync 0 with all threads of the CTA): every thread of the block
// must arrive; a thread that returned while others wait is a barrier divergence (reported when
// nothing can run any more, with what every thread waits at)
static void __syncthreads(void)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	tl_cpu_bar_wait[tl_cpu_bar_arrived++] = me;
	if (tl_cpu_bar_arrived < tl_cpu_nthreads) {
		tl_cpu_block_on("__syncthreads");
		return;
	}
	tl_cpu_bar_arrived = 0;
	// in thread order (arrival order is the schedule's)
	for (int i = 0; i < tl_cpu_nthreads; i++)
		tl_cpu_bar_wait[i] = &tl_cpu_fib[i];
	tl_cpu_release(tl_cpu_bar_wait, tl_cpu_nthreads, 1, me);
}

// bar.sync id, n (PTX 9.7.13.1) with n threads: here barrier 1 of a warp-specialized kernel's
// consumer threads; every arrival must give the same n, a multiple of the warp size
static int tl_cpu_nbar_arrived, tl_cpu_nbar_n;
static tl_cpu_fiber **tl_cpu_nbar_wait;

static void tl_bar_named(int id, int n)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	if (id != 1 || n <= 0 || n % 32 || n > tl_cpu_nthreads)
		tl_cpu_fail("bar.sync %d, %d: the CPU run has named barrier 1 of whole warps of the block (%d threads)", id,
			    n, tl_cpu_nthreads);
	if (tl_cpu_nbar_arrived == 0)
		tl_cpu_nbar_n = n;
	else if (n != tl_cpu_nbar_n)
		tl_cpu_fail("bar.sync 1, %d while other threads wait at bar.sync 1, %d", n, tl_cpu_nbar_n);
	tl_cpu_nbar_wait[tl_cpu_nbar_arrived++] = me;
	if (tl_cpu_nbar_arrived < n) {
		tl_cpu_block_on("bar.sync 1 (named)");
		return;
	}
	tl_cpu_nbar_arrived = 0;
	// in thread order (arrival order is the schedule's)
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && tl_cpu_nbar_wait[j - 1]->lin > tl_cpu_nbar_wait[j]->lin; j--) {
			tl_cpu_fiber *t = tl_cpu_nbar_wait[j];

			tl_cpu_nbar_wait[j] = tl_cpu_nbar_wait[j - 1], tl_cpu_nbar_wait[j - 1] = t;
		}
	tl_cpu_release(tl_cpu_nbar_wait, n, 1, me);
}

static void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static void tl_cpu_ranges(char *s, size_t n, const unsigned char *set, int count)
{
	size_t len = 0;
	int first = 1;

	s[0] = 0;
	for (int i = 0; i < count; i++) {
		int j = i;

		if (!set[i])
			continue;
		while (j + 1 < count && set[j + 1])
			j++;
		if (len < n)
			len += (size_t)snprintf(s + len, n - len, j > i ? "%s%d-%d" : "%s%d", first ? "" : ",", i, j);
		first = 0;
		i = j;
	}
}

// a warp (or warpgroup) collective: lanes of the warp post their operands in w before calling;
// the last to arrive runs op for everyone, then the others resume and read their results.
// kind: what the lanes execute; every lane of the warp must execute the same kind
static void tl_cpu_warp_kind_mismatch(const char *group, int id, const char *kind, const char *other)
{
	tl_cpu_fail("%s divergence in %s %d: lane %d executes %s while other lanes wait at %s (PTX: every "
		    "thread of the %s must execute the same instruction)",
		    group, group, id, strcmp(group, "warp") ? tl_cpu_cur->lin % 128 : tl_cpu_cur->lane, kind, other,
		    group);
}

template <class OP> static void tl_cpu_warp_collective(tl_cpu_warp *w, const char *kind, OP op)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	int base = me->warp * TL_CPU_WAVE;

	if (w->arrived == 0)
		w->kind = kind;
	else if (w->kind != kind && strcmp(w->kind, kind))
		tl_cpu_warp_kind_mismatch("warp", me->warp, kind, w->kind);
	if (++w->arrived < w->expected) {
		tl_cpu_block_on(kind);
		return;
	}
	op();
	w->arrived = 0;
	tl_cpu_release(tl_cpu_fibp + base, w->expected, 1, me);
}

static void tl_cpu_full_warp(const char *what)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	if (tl_cpu_warps[me->warp].expected != TL_CPU_WAVE)
		tl_cpu_fail("%s in warp %d, which has only %d threads (the block has %d; %s: all %d threads of the "
			    "%s must execute it)",
			    what, me->warp, tl_cpu_warps[me->warp].expected, tl_cpu_nthreads,
#ifndef TL_CPU_HIP
			    "PTX", TL_CPU_WAVE, "warp"
#else
			    "AMD ISA", TL_CPU_WAVE, "wavefront"
#endif
		);
}

static void tl_cpu_check_mask(unsigned mask, const char *what)
{
	if (mask != 0xffffffffu)
		tl_cpu_fail("%s with member mask 0x%08x: the CPU emulation supports the full mask only", what, mask);
}

#ifndef TL_CPU_HIP // ---- CUDA only: __syncwarp and the shuffles (tilec_cpu_hip.h has ds_bpermute)
// __syncwarp (bar.warp.sync): the lanes of the warp that exist
static void __syncwarp(unsigned mask = 0xffffffffu)
{
	tl_cpu_check_mask(mask, "__syncwarp");
	tl_cpu_warp_collective(&tl_cpu_warps[tl_cpu_cur->warp], "__syncwarp", [] {});
}

// shfl.sync (PTX 9.7.9.6) with the operand c that CUDA's sm_30_intrinsics.hpp passes:
// idx/down/bfly c = ((32 - width) << 8) | 0x1f, up c = (32 - width) << 8
enum { TL_SHFL_UP, TL_SHFL_DOWN, TL_SHFL_BFLY, TL_SHFL_IDX };

static uint64_t tl_cpu_shfl(int mode, const char *name, unsigned mask, uint64_t v, int b, int width)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_warp *w = &tl_cpu_warps[me->warp];
	int l = me->lane, c;

	tl_cpu_check_mask(mask, name);
	if (width < 1 || width > 32 || (width & (width - 1)))
		tl_cpu_fail("%s with width %d (a power of 2 up to 32)", name, width);
	c = ((32 - width) << 8) | (mode == TL_SHFL_UP ? 0 : 0x1f);
	w->v[l] = v;
	w->b[l] = b;
	w->c[l] = c;
	tl_cpu_warp_collective(w, name, [w, mode, name] {
		for (int t = 0; t < w->expected; t++) {
			int bval = w->b[t] & 31, cval = w->c[t] & 31, segmask = (w->c[t] >> 8) & 31;
			int maxlane = (t & segmask) | (cval & ~segmask), minlane = t & segmask, j, p;

			switch (mode) {
			case TL_SHFL_UP: j = t - bval; p = j >= maxlane; break;
			case TL_SHFL_DOWN: j = t + bval; p = j <= maxlane; break;
			case TL_SHFL_BFLY: j = t ^ bval; p = j <= maxlane; break;
			default: j = minlane | (bval & ~segmask); p = j <= maxlane; break;
			}
			if (!p)
				j = t;
			if (j >= w->expected)
				tl_cpu_fail("%s: lane %d reads lane %d, which does not exist (the warp has %d threads)", name,
					    t, j, w->expected);
			w->out[t] = w->v[j];
		}
	});
	return w->out[l];
}

// shuffles move 4- and 8-byte values; a narrower integer (bool, char, short) goes through the
// int overload, as CUDA's overload resolution promotes it
template <class T> static inline uint64_t tl_cpu_bits(T v)
{
	uint64_t u = 0;

	if constexpr (sizeof(T) < 4) {
		static_assert(std::is_integral<T>::value, "a shuffle of a narrow non-integer type");
		u = (uint32_t)(int)v;
	} else {
		static_assert(sizeof(T) == 4 || sizeof(T) == 8, "shuffles move 4- or 8-byte values");
		memcpy(&u, &v, sizeof v);
	}
	return u;
}

template <class T> static inline T tl_cpu_unbits(uint64_t u)
{
	T v;

	if constexpr (sizeof(T) < 4)
		v = (T)(int)(uint32_t)u;
	else
		memcpy(&v, &u, sizeof v);
	return v;
}

template <class T> static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32)
{
	return tl_cpu_unbits<T>(tl_cpu_shfl(TL_SHFL_IDX, "__shfl_sync", mask, tl_cpu_bits(var), srcLane, width));
}
template <class T> static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32)
{
	return tl_cpu_unbits<T>(tl_cpu_shfl(TL_SHFL_UP, "__shfl_up_sync", mask, tl_cpu_bits(var), (int)delta, width));
}
template <class T> static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32)
{
	return tl_cpu_unbits<T>(
		tl_cpu_shfl(TL_SHFL_DOWN, "__shfl_down_sync", mask, tl_cpu_bits(var), (int)delta, width));
}
template <class T> static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32)
{
	return tl_cpu_unbits<T>(tl_cpu_shfl(TL_SHFL_BFLY, "__shfl_xor_sync", mask, tl_cpu_bits(var), laneMask, width));
}
#endif // !TL_CPU_HIP

// ============================================================================================
// Shared memory
// ============================================================================================
// the dynamic shared memory is shared address 0 (a 1024-aligned base: the 128B swizzle of
// wgmma applies to absolute address bits 4-9); static __shared__ arrays follow the maximum
static int tl_cpu_in_dyn(const void *p, size_t n)
{
	const unsigned char *c = (const unsigned char *)p;

	return c >= tl_smem && c <= tl_smem + tl_cpu_smem_bytes && n <= (size_t)(tl_smem + tl_cpu_smem_bytes - c);
}

static tl_cpu_static *tl_cpu_static_of(const void *p)
{
	const unsigned char *c = (const unsigned char *)p;

	for (int i = 0; i < tl_cpu_nstatics; i++)
		if (c >= tl_cpu_statics[i].p && c < tl_cpu_statics[i].p + tl_cpu_statics[i].n)
			return &tl_cpu_statics[i];
	return NULL;
}

// __cvta_generic_to_shared (PTX 9.7.9.20 cvta.to.shared): the offset of p in the block's shared
// memory; an error if p is not in shared memory
static size_t __cvta_generic_to_shared(const void *p)
{
	const unsigned char *c = (const unsigned char *)p;
	tl_cpu_static *s;

	if (c >= tl_smem && c <= tl_smem + tl_cpu_smem_bytes)
		return (size_t)(c - tl_smem);
	if ((s = tl_cpu_static_of(p)))
		return s->addr + (size_t)(c - s->p);
	if (c >= tl_smem && c < tl_smem + sizeof tl_smem)
		tl_cpu_fail("__cvta_generic_to_shared of dynamic shared memory byte %zu, past the launch's %zu bytes",
			    (size_t)(c - tl_smem), tl_cpu_smem_bytes);
	tl_cpu_fail("__cvta_generic_to_shared of %p, which is not in shared memory", p);
}

// the generic pointer of n bytes at shared address a; an error (with what) if they are not in
// the launch's shared memory
static unsigned char *tl_cpu_shared_ptr(unsigned long long a, size_t n, const char *what)
{
	if (a + n <= tl_cpu_smem_bytes)
		return tl_smem + a;
	for (int i = 0; i < tl_cpu_nstatics; i++)
		if (a >= tl_cpu_statics[i].addr && a + n <= tl_cpu_statics[i].addr + tl_cpu_statics[i].n)
			return tl_cpu_statics[i].p + (a - tl_cpu_statics[i].addr);
	tl_cpu_fail("%s reads shared memory bytes [%llu, %llu), outside the launch's %zu bytes of dynamic shared "
		    "memory and every static __shared__ array",
		    what, a, a + n, tl_cpu_smem_bytes);
}

// p .. p+n must be shared memory (dynamic or static) and p aligned to align
static void tl_cpu_check_shared(const void *p, size_t n, size_t align, const char *what)
{
	const unsigned char *c = (const unsigned char *)p;
	tl_cpu_static *s;

	if ((uintptr_t)p % align)
		tl_cpu_fail("%s: shared address %p is not %zu-byte aligned", what, p, align);
	if (tl_cpu_in_dyn(p, n))
		return;
	if ((s = tl_cpu_static_of(p)) && n <= (size_t)(s->p + s->n - c))
		return;
	if (c >= tl_smem && c < tl_smem + sizeof tl_smem)
		tl_cpu_fail("%s: shared memory bytes [%zu, %zu) are past the launch's %zu bytes of dynamic shared memory",
			    what, (size_t)(c - tl_smem), (size_t)(c - tl_smem) + n, tl_cpu_smem_bytes);
	tl_cpu_fail("%s: address %p is not in shared memory", what, p);
}

static inline tl_u32 tl_smem_u32(const void *p) { return (tl_u32)__cvta_generic_to_shared(p); }

// shared memory not written yet (and a pending cp.async's destination) holds the poison
static void tl_cpu_poison(void *p, size_t n)
{
	unsigned char *c = (unsigned char *)p;

	for (size_t i = 0; i < n; i++)
		c[i] = ((uintptr_t)(c + i) & 1) ? (unsigned char)(TL_CPU_POISON16 >> 8) : (unsigned char)TL_CPU_POISON16;
}

static int tl_cpu_is_poison(const void *p, size_t n)
{
	const unsigned char *c = (const unsigned char *)p;

	for (size_t i = 0; i < n; i++)
		if (c[i] != (((uintptr_t)(c + i) & 1) ? (unsigned char)(TL_CPU_POISON16 >> 8) : (unsigned char)TL_CPU_POISON16))
			return 0;
	return 1;
}

// one wgmma.mma_async in flight (below; the run drops those of a block never waited for)
struct tl_cpu_wgop {
	tl_cpu_wgop *next;
	int n, tb, ta, bf, rs; // rs: A from registers (a holds them, da unused); ta: A M-major
	int sd;                // scale-d: 1 D = A B + D, 0 D = A B (the accumulators not read)
	int b8;                // 8-bit operands (m64nNk32): TL_CPU_S8 .. TL_CPU_E5M2; -1: 16-bit
	tl_u64 da, db;
	unsigned long long group;
	float *d[128];              // the accumulators (int for s8/u8: accessed by memcpy)
	unsigned char a[64 * 32];   // A[m][k] as read at issue: row m in bytes 32 m .. 32 m + 31
	unsigned char b[256 * 32];  // B[n][k] as read at issue
	float *saved;               // [128][n/2] the accumulators at issue; for one chained on an
	                            // older wgmma still in flight, that one's result when it completes
};

// ============================================================================================
// Conversions (PTX 9.7.9.21 cvt: .rn = round to nearest, ties to even; subnormals kept)
// ============================================================================================
// f16 -> f32 is exact; an f16 NaN gives the canonical f32 NaN 0x7fffffff, as cuda_fp16.hpp's
// host version of cvt.f32.f16 does (checked on an H200: test/gpu/cpu_emul.sh)
static float tl_cpu_h2f_calc(tl_half_t h)
{
	unsigned sign = (unsigned)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;

	if (e == 0x1f)
		u = m ? 0x7fffffffu : sign | 0x7f800000u;
	else if (e)
		u = sign | ((e + 112) << 23) | (m << 13);
	else if (!m)
		u = sign;
	else { // subnormal: m * 2^-24
		int sh = 0;

		while (!(m & 0x400)) {
			m <<= 1;
			sh++;
		}
		u = sign | ((unsigned)(113 - sh) << 23) | ((m & 0x3ff) << 13);
	}
	return __uint_as_float(u);
}

#ifndef TL_CPU_HIP // ---- CUDA only (tl_h2f, tl_f2h; tl_bf2f to the end of the wgmma section):
// tilec_cpu_hip.h has the AMD helpers
static inline float tl_h2f(tl_half_t h) { return tl_cpu_h2f_tab[h]; }

// f32 -> f16, cvt.rn.f16.f32: overflow to inf, subnormal results rounded, NaN -> 0x7fff
static inline tl_half_t tl_cpu_f2h_num(float f);
static inline tl_half_t tl_f2h(float f)
{
	if ((__float_as_uint(f) & 0x7fffffffu) > 0x7f800000u)
		return 0x7fff;
	return tl_cpu_f2h_num(f);
}
#endif // !TL_CPU_HIP

// f32 (not NaN) -> f16, round to nearest even: overflow to inf, subnormal results rounded (the
// CUDA and the HIP tl_f2h share it; they differ in the NaN they give)
static inline tl_half_t tl_cpu_f2h_num(float f)
{
	unsigned u = __float_as_uint(f), sign = (u >> 16) & 0x8000, a = u & 0x7fffffff, r, rem;

	if (a >= 0x477ff000u) // >= 65520 (and inf): rounds to inf
		return (tl_half_t)(sign | 0x7c00);
	if (a >= 0x38800000u) { // normal f16 (>= 2^-14)
		a -= 0x38000000u;
		r = a >> 13;
		rem = a & 0x1fff;
		if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
			r++;
		return (tl_half_t)(sign | r);
	}
	if (a < 0x33000001u) // <= 2^-25: the tie at 2^-25 goes to the even 0
		return (tl_half_t)sign;
	{
		unsigned e = a >> 23, m = (a & 0x7fffff) | 0x800000, sh = 126 - e, half = 1u << (sh - 1);

		r = m >> sh;
		rem = m & ((1u << sh) - 1);
		if (rem > half || (rem == half && (r & 1)))
			r++;
		return (tl_half_t)(sign | r);
	}
}

// ---- atomics (tl_atomic_*: the CUDA and the HIP names): the blocks of a launch and the threads
// of a block run one at a time and a thread is switched only at a barrier or a collective, so an
// atomic is a plain read-modify-write of the element (f16/bf16: the sum of the two values
// rounded to nearest even, as the hardware's add)
static inline tl_u32 tl_cpu_hadd(tl_u32 a, tl_u32 b)
{
	float s = tl_cpu_h2f_tab[a & 0xffff] + tl_cpu_h2f_tab[b & 0xffff];

	return (__float_as_uint(s) & 0x7fffffffu) > 0x7f800000u ? 0x7fffu : tl_cpu_f2h_num(s);
}

static inline tl_u32 tl_cpu_bfadd(tl_u32 a, tl_u32 b)
{
	tl_u32 u = __float_as_uint(__uint_as_float((a & 0xffff) << 16) + __uint_as_float((b & 0xffff) << 16));

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0x7fffu;
	return (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
}

static inline void tl_atomic_add_f32(float *p, float v) { *p += v; }
static inline void tl_atomic_add_i32(int *p, int v) { *p = (int)((unsigned)*p + (unsigned)v); }
static inline void tl_atomic_max_i32(int *p, int v) { *p = *p > v ? *p : v; }
static inline void tl_atomic_min_i32(int *p, int v) { *p = *p < v ? *p : v; }
static inline void tl_atomic_max_f32(float *p, float v) { *p = fmaxf(*p, v); }
static inline void tl_atomic_min_f32(float *p, float v) { *p = fminf(*p, v); }
static inline void tl_atomic_add_f16(tl_half_t *p, tl_half_t v) { *p = (tl_half_t)tl_cpu_hadd(*p, v); }
static inline void tl_atomic_add_bf16(tl_bf16_t *p, tl_bf16_t v) { *p = (tl_bf16_t)tl_cpu_bfadd(*p, v); }
static inline void tl_atomic_add_f16x2(tl_half_t *p, tl_u32 v)
{
	p[0] = (tl_half_t)tl_cpu_hadd(p[0], v);
	p[1] = (tl_half_t)tl_cpu_hadd(p[1], v >> 16);
}
static inline void tl_atomic_add_bf16x2(tl_bf16_t *p, tl_u32 v)
{
	p[0] = (tl_bf16_t)tl_cpu_bfadd(p[0], v);
	p[1] = (tl_bf16_t)tl_cpu_bfadd(p[1], v >> 16);
}
static inline void tl_atomic_add_f32x2(float *p, float a, float b) { p[0] += a, p[1] += b; }
static inline void tl_atomic_add_f32x4(float *p, float a, float b, float c, float d)
{
	p[0] += a, p[1] += b, p[2] += c, p[3] += d;
}

#ifndef TL_CPU_HIP
static inline float tl_bf2f(tl_bf16_t h) { return __uint_as_float(((tl_u32)h) << 16); }

// f32 -> bf16, cvt.rn.bf16.f32: NaN -> 0x7fff (as cuda_bf16.hpp's host version)
static inline tl_bf16_t tl_f2bf(float f)
{
	unsigned u = __float_as_uint(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0x7fff;
	return (tl_bf16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

// cvt.rn.f16x2.f32 d, a, b: a (hi) in the upper half, b (lo) in the lower
static inline tl_u32 tl_pack_h2(float lo, float hi) { return (tl_u32)tl_f2h(lo) | ((tl_u32)tl_f2h(hi) << 16); }
static inline tl_u32 tl_pack_bf2(float lo, float hi) { return (tl_u32)tl_f2bf(lo) | ((tl_u32)tl_f2bf(hi) << 16); }

// ---- warp reductions (as tilec_cuda.h: xor shuffles) ------------------------------------------
static inline float tl_warp_sum(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

static inline float tl_warp_max(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

// ============================================================================================
// cp.async (PTX 9.7.9.25.3: cp.async, cp.async.commit_group, cp.async.wait_group)
// ============================================================================================
// A copy joins the thread's open (uncommitted) group; commit_group closes it (an empty group is
// a group); wait_group N completes every committed group but the N most recent, in commit order.
// Copies not yet committed are not completed by a wait (PTX: wait_group waits for committed
// groups only). Emulation, chosen to catch what hardware may do with a wrong program:
//  - at issue the source is read (an out-of-bounds source faults here, in the issuing thread)
//    and the destination is overwritten with the poison: reading it before the wait ("reading
//    from the destination ... before the asynchronous operation completes exhibits undefined
//    behavior", 9.7.9.25.1) sees garbage, also for a stage that held older data;
//  - at completion the destination is written; an error if the source changed since the
//    issue or the destination was written by someone else in between (both undefined);
//  - zfill with pred false (src-size 0): 16 zero bytes, the source is never dereferenced;
//  - copies still outstanding when the thread returns are dropped.
static void tl_cpu_cp_async(void *smem, const void *gmem, bool pred)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_cpa *c;

	tl_cpu_check_shared(smem, 16, 16, "cp.async destination");
	if (pred && (uintptr_t)gmem % 16)
		tl_cpu_fail("cp.async: global source %p is not 16-byte aligned", gmem);
	if (me->ncpa == me->capcpa) {
		if (me->cpa_head > 0) { // compact the queue
			memmove(me->cpa, me->cpa + me->cpa_head, (size_t)(me->ncpa - me->cpa_head) * sizeof *me->cpa);
			me->ncpa -= me->cpa_head;
			me->cpa_head = 0;
		}
		if (me->ncpa == me->capcpa) {
			me->capcpa = me->capcpa ? me->capcpa * 2 : 64;
			me->cpa = (tl_cpu_cpa *)realloc(me->cpa, (size_t)me->capcpa * sizeof *me->cpa);
			if (!me->cpa)
				tl_cpu_fatal("out of memory");
		}
	}
	c = &me->cpa[me->ncpa++];
	c->dst = (unsigned char *)smem;
	c->src = (const unsigned char *)gmem;
	c->group = me->cpa_group;
	c->pred = pred;
	if (pred)
		memcpy(c->data, gmem, 16);
	else
		memset(c->data, 0, 16);
	tl_cpu_poison(smem, 16);
}

static inline void tl_cp_async16(void *smem, const void *gmem) { tl_cpu_cp_async(smem, gmem, true); }
static inline void tl_cp_async16_zfill(void *smem, const void *gmem, bool pred) { tl_cpu_cp_async(smem, gmem, pred); }
static inline void tl_cp_async_commit() { tl_cpu_cur->cpa_group++; }

static void tl_cpu_cp_async_wait(int n)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	while (me->cpa_head < me->ncpa && me->cpa[me->cpa_head].group + (unsigned long long)n < me->cpa_group) {
		tl_cpu_cpa *c = &me->cpa[me->cpa_head++];

		if (!tl_cpu_is_poison(c->dst, 16))
			tl_cpu_fail("shared memory bytes [%zu, %zu), the destination of a pending cp.async, were written before "
				    "the cp.async.wait_group that completes it",
				    (size_t)__cvta_generic_to_shared(c->dst), (size_t)__cvta_generic_to_shared(c->dst) + 16);
		if (c->pred && memcmp(c->data, c->src, 16))
			tl_cpu_fail("the global source %p of a pending cp.async changed before the cp.async.wait_group that "
				    "completes it",
				    (const void *)c->src);
		memcpy(c->dst, c->data, 16);
	}
	if (me->cpa_head == me->ncpa)
		me->cpa_head = me->ncpa = 0;
}

template <int N> static inline void tl_cp_async_wait()
{
	static_assert(N >= 0, "cp.async.wait_group N: N >= 0");
	tl_cpu_cp_async_wait(N);
}

// ============================================================================================
// ldmatrix (PTX 9.7.14.5.15: ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16)
// ============================================================================================
// Lane i gives the address of row i % 8 of matrix i / 8 (16 bytes, 16-byte aligned). Register
// m of lane t holds elements (t / 4, 2 (t % 4)) and (t / 4, 2 (t % 4) + 1) of matrix m, the lower
// column in the lower half (Figure 104); with .trans the matrix is read column-major: elements
// (2 (t % 4), t / 4) and (2 (t % 4) + 1, t / 4) of the stored matrix.
static void tl_cpu_ldmatrix(tl_u32 *r, const void *smem, int trans)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_warp *w = &tl_cpu_warps[me->warp];
	const char *name = trans ? "ldmatrix.x4.trans" : "ldmatrix.x4";

	tl_cpu_full_warp(name);
	tl_cpu_check_shared(smem, 16, 16, name);
	w->p[me->lane] = smem;
	w->q[me->lane] = r;
	tl_cpu_warp_collective(w, name, [w, trans] {
		unsigned short m[4][8][8];

		for (int l = 0; l < 32; l++)
			memcpy(m[l / 8][l % 8], w->p[l], 16);
		for (int t = 0; t < 32; t++) {
			tl_u32 *d = (tl_u32 *)w->q[t];

			for (int k = 0; k < 4; k++) {
				int row = t / 4, col = 2 * (t % 4);

				d[k] = trans ? (tl_u32)m[k][col][row] | ((tl_u32)m[k][col + 1][row] << 16)
					     : (tl_u32)m[k][row][col] | ((tl_u32)m[k][row][col + 1] << 16);
			}
		}
	});
}

static inline void tl_ldmatrix_x4(tl_u32 *r, const void *smem) { tl_cpu_ldmatrix(r, smem, 0); }
static inline void tl_ldmatrix_x4_trans(tl_u32 *r, const void *smem) { tl_cpu_ldmatrix(r, smem, 1); }

// ============================================================================================
// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (PTX 9.7.14.5.8, Figures 79,
// 81, 83): groupID g = lane >> 2, t = lane % 4.
//   A 16x16: a_i (register i / 2, half i % 2): row g for i in {0,1,4,5} else g + 8,
//            col 2t + (i & 1) (+ 8 for i >= 4)
//   B 16x8:  b_i: row (k) 2t + (i & 1) (+ 8 for i >= 2), col (n) g
//   C/D 16x8: c_i: row g (+ 8 for i >= 2), col 2t + (i & 1)
// D = A B + C: each element's dot product is computed in double and rounded to f32 once; the
// hardware's accumulation order and intermediate precision are unspecified (PTX: "at least
// single precision"), so gemm results are compared with a tolerance.
// ============================================================================================
// the collective's work, for the 32 lanes at once (the hot spot of a gemm run: O2, and the
// 8 columns of a row accumulate side by side; each element still sums C, then k = 0..15)
template <int BF> static inline double tl_cpu_lo(tl_u32 r) { return BF ? tl_bf2f((tl_bf16_t)r) : tl_cpu_h2f_tab[r & 0xffff]; }
template <int BF> static inline double tl_cpu_hi(tl_u32 r) { return BF ? tl_bf2f((tl_bf16_t)(r >> 16)) : tl_cpu_h2f_tab[r >> 16]; }

template <int BF> __attribute__((optimize("O2"))) static void tl_cpu_mma_compute(tl_cpu_warp *w)
{
	double A[16][16], B[16][8], C[16][8];

	for (int l = 0; l < 32; l++) { // the fragments, as in the table above
		const tl_u32 *ra = (const tl_u32 *)w->p[l], *rb = (const tl_u32 *)w->r[l];
		const float *rc = (const float *)w->q[l];
		int g = l >> 2, t2 = 2 * (l & 3);

		A[g][t2] = tl_cpu_lo<BF>(ra[0]), A[g][t2 + 1] = tl_cpu_hi<BF>(ra[0]);
		A[g + 8][t2] = tl_cpu_lo<BF>(ra[1]), A[g + 8][t2 + 1] = tl_cpu_hi<BF>(ra[1]);
		A[g][t2 + 8] = tl_cpu_lo<BF>(ra[2]), A[g][t2 + 9] = tl_cpu_hi<BF>(ra[2]);
		A[g + 8][t2 + 8] = tl_cpu_lo<BF>(ra[3]), A[g + 8][t2 + 9] = tl_cpu_hi<BF>(ra[3]);
		B[t2][g] = tl_cpu_lo<BF>(rb[0]), B[t2 + 1][g] = tl_cpu_hi<BF>(rb[0]);
		B[t2 + 8][g] = tl_cpu_lo<BF>(rb[1]), B[t2 + 9][g] = tl_cpu_hi<BF>(rb[1]);
		C[g][t2] = rc[0], C[g][t2 + 1] = rc[1], C[g + 8][t2] = rc[2], C[g + 8][t2 + 1] = rc[3];
	}
	for (int row = 0; row < 16; row++) {
		double c[8];

		for (int col = 0; col < 8; col++)
			c[col] = C[row][col];
#pragma GCC unroll 16
		for (int k = 0; k < 16; k++) {
			double a = A[row][k];

#pragma GCC unroll 8
			for (int col = 0; col < 8; col++)
				c[col] += a * B[k][col];
		}
		for (int col = 0; col < 8; col++)
			C[row][col] = c[col];
	}
	for (int l = 0; l < 32; l++) {
		float *rc = (float *)w->q[l];
		int g = l >> 2, t2 = 2 * (l & 3);

		rc[0] = (float)C[g][t2], rc[1] = (float)C[g][t2 + 1];
		rc[2] = (float)C[g + 8][t2], rc[3] = (float)C[g + 8][t2 + 1];
	}
}

static void tl_cpu_mma16816(float *c, const tl_u32 *a, const tl_u32 *b, int bf)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_warp *w = &tl_cpu_warps[me->warp];
	const char *name = bf ? "mma.sync.m16n8k16.bf16" : "mma.sync.m16n8k16.f16";

	tl_cpu_full_warp(name);
	w->p[me->lane] = a;
	w->r[me->lane] = b;
	w->q[me->lane] = c;
	tl_cpu_warp_collective(w, name, [w, bf] { bf ? tl_cpu_mma_compute<1>(w) : tl_cpu_mma_compute<0>(w); });
}

static inline void tl_mma_f16_16816(float *c, const tl_u32 *a, const tl_u32 *b) { tl_cpu_mma16816(c, a, b, 0); }
static inline void tl_mma_bf16_16816(float *c, const tl_u32 *a, const tl_u32 *b) { tl_cpu_mma16816(c, a, b, 1); }

// ============================================================================================
// mma.sync.aligned.m16n8k32.row.col.{s32.s8.s8.s32, s32.u8.u8.s32, f32.e4m3.e4m3.f32,
// f32.e5m2.e5m2.f32} (PTX 9.7.14.5.8, the m16n8k32 fragments of .s8/.u8/.e4m3/.e5m2):
//   A 16x32: a_i (register i / 4, byte i % 4): row g for i in {0..3, 8..11} else g + 8,
//            col 4t + (i & 3) (+ 16 for i >= 8)
//   B 32x8:  b_i: row (k) 4t + (i & 3) (+ 16 for i >= 4), col (n) g
//   C/D 16x8: as m16n8k16
// Integers: exact products and sums (int64), wrapped to 32 bits (no .satfinite); fp8: every
// element decoded exactly, the dot product in double, rounded to f32 once (as m16n8k16).
// ============================================================================================
enum { TL_CPU_S8, TL_CPU_U8, TL_CPU_E4M3, TL_CPU_E5M2 };

// an 8-bit element's value, exact: s8/u8 as integers; OCP fp8 e4m3 (bias 7, NaN 0x7f/0xff, no
// inf) and e5m2 (bias 15, inf 0x7c/0xfc, NaN above); subnormals kept
static double tl_cpu_b8_val(unsigned v, int ty)
{
	if (ty == TL_CPU_S8)
		return (double)(signed char)v;
	if (ty == TL_CPU_U8)
		return (double)(unsigned char)v;
	{
		int mb = ty == TL_CPU_E4M3 ? 3 : 2, bias = ty == TL_CPU_E4M3 ? 7 : 15;
		unsigned e = (v & 0x7f) >> mb, m = v & ((1u << mb) - 1);
		double a;

		if (ty == TL_CPU_E4M3 && (v & 0x7f) == 0x7f)
			return NAN;
		if (ty == TL_CPU_E5M2 && e == 31)
			return m ? NAN : (v & 0x80) ? -INFINITY : INFINITY;
		a = e ? ldexp(1.0 + m / (double)(1u << mb), (int)e - bias) : ldexp((double)m, 1 - bias - mb);
		return v & 0x80 ? -a : a;
	}
}

static void tl_cpu_mma16832_compute(tl_cpu_warp *w, int ty)
{
	double A[16][32], B[32][8];

	for (int l = 0; l < 32; l++) {
		const tl_u32 *ra = (const tl_u32 *)w->p[l], *rb = (const tl_u32 *)w->r[l];
		int g = l >> 2, t4 = 4 * (l & 3);

		for (int j = 0; j < 4; j++) {
			A[g][t4 + j] = tl_cpu_b8_val((ra[0] >> (8 * j)) & 0xff, ty);
			A[g + 8][t4 + j] = tl_cpu_b8_val((ra[1] >> (8 * j)) & 0xff, ty);
			A[g][t4 + 16 + j] = tl_cpu_b8_val((ra[2] >> (8 * j)) & 0xff, ty);
			A[g + 8][t4 + 16 + j] = tl_cpu_b8_val((ra[3] >> (8 * j)) & 0xff, ty);
			B[t4 + j][g] = tl_cpu_b8_val((rb[0] >> (8 * j)) & 0xff, ty);
			B[t4 + 16 + j][g] = tl_cpu_b8_val((rb[1] >> (8 * j)) & 0xff, ty);
		}
	}
	for (int l = 0; l < 32; l++) {
		int g = l >> 2, t2 = 2 * (l & 3);

		for (int r = 0; r < 4; r++) {
			int row = g + 8 * (r / 2), col = t2 + (r % 2);

			if (ty == TL_CPU_S8 || ty == TL_CPU_U8) {
				int *c = (int *)w->q[l];
				long long acc = c[r];

				for (int k = 0; k < 32; k++)
					acc += (long long)A[row][k] * (long long)B[k][col];
				c[r] = (int)(unsigned)(unsigned long long)acc;
			} else {
				float *c = (float *)w->q[l];
				double acc = c[r];

				for (int k = 0; k < 32; k++)
					acc += A[row][k] * B[k][col];
				c[r] = (float)acc;
			}
		}
	}
}

static void tl_cpu_mma16832(void *c, const tl_u32 *a, const tl_u32 *b, int ty)
{
	static const char *const names[] = {"mma.sync.m16n8k32.s8", "mma.sync.m16n8k32.u8", "mma.sync.m16n8k32.e4m3",
					    "mma.sync.m16n8k32.e5m2"};
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_warp *w = &tl_cpu_warps[me->warp];

	tl_cpu_full_warp(names[ty]);
	w->p[me->lane] = a;
	w->r[me->lane] = b;
	w->q[me->lane] = c;
	tl_cpu_warp_collective(w, names[ty], [w, ty] { tl_cpu_mma16832_compute(w, ty); });
}

static inline void tl_mma_s8_16832(int *c, const tl_u32 *a, const tl_u32 *b) { tl_cpu_mma16832(c, a, b, TL_CPU_S8); }
static inline void tl_mma_u8_16832(int *c, const tl_u32 *a, const tl_u32 *b) { tl_cpu_mma16832(c, a, b, TL_CPU_U8); }
static inline void tl_mma_e4m3_16832(float *c, const tl_u32 *a, const tl_u32 *b) { tl_cpu_mma16832(c, a, b, TL_CPU_E4M3); }
static inline void tl_mma_e5m2_16832(float *c, const tl_u32 *a, const tl_u32 *b) { tl_cpu_mma16832(c, a, b, TL_CPU_E5M2); }

// ============================================================================================
// sm_90a wgmma (PTX 9.7.15)
// ============================================================================================
// Shared-memory matrix descriptor (9.7.15.5.1.2.2 "Matrix Descriptor Format"), the bit packing
// of tilec_cuda.h: bits 0-13 start address >> 4, 16-29 leading byte offset >> 4, 32-45 stride
// byte offset >> 4, 49-51 base offset, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B), each field
// matrix-descriptor-encode(x) = (x & 0x3ffff) >> 4. The hardware drops the low 4 bits and the
// bits past 18: a start address, LBO or SBO that loses bits there is reported here.
static inline tl_u64 tl_wgmma_desc(const void *p, int lbo, int sbo, int type)
{
	tl_u64 a = tl_smem_u32(p);

	if ((a & 15) || a >= (1u << 18))
		tl_cpu_fail("tl_wgmma_desc: start address %llu is not a 16-byte aligned shared address below 2^18", a);
	if ((lbo & 15) || lbo < 0 || lbo >= (1 << 18) || (sbo & 15) || sbo < 0 || sbo >= (1 << 18))
		tl_cpu_fail("tl_wgmma_desc: LBO %d / SBO %d are not multiples of 16 below 2^18", lbo, sbo);
	if (type < 0 || type > 3)
		tl_cpu_fail("tl_wgmma_desc: layout type %d", type);
	return ((a & 0x3ffff) >> 4) | ((tl_u64)((lbo >> 4) & 0x3fff) << 16) | ((tl_u64)((sbo >> 4) & 0x3fff) << 32) |
	       ((tl_u64)type << 62);
}

// the generic <-> async proxy fence: the emulation has one memory, so there is nothing to order
static inline void tl_fence_proxy_async(void) {}
static inline void tl_fence_operand(float &r) { (void)r; }

// The byte address of element (mn, k) of an operand of esz-byte elements (T = 16 / esz per 16
// bytes: 8 for f16/bf16, 16 for 8-bit) in the PTX canonical layouts (9.7.15.5.1.2.1.3), in CuTe
// notation over (MN, K) in units of elements:
//   K-major,  no swizzle: ((8,m),(T,2k)):((1T,SBO),(1,LBO))
//   K-major,  32/64/128B: ((8,m),(T,2k)):((cT,SBO),(1,T))    c = 2, 4, 8 (LBO unused: "assumed 1")
//   MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
//   MN-major, 32/64/128B: ((T,c,m),(8,k)):((1,T,LBO),(cT,SBO))
// followed by Swizzle<s,4,3> (s = 1, 2, 3 for 32, 64, 128B) on the absolute shared byte address:
// bits [4, 4+s) ^= bits [7, 7+s). A core matrix is 8 rows of 16 bytes.
static unsigned long long tl_cpu_gmma_addr(tl_u64 desc, int mn, int k, int mn_major, int esz)
{
	unsigned long long start = (desc & 0x3fff) << 4, lbo = ((desc >> 16) & 0x3fff) << 4,
			   sbo = ((desc >> 32) & 0x3fff) << 4, off, a, T = 16ull / (unsigned)esz;
	int mode = (int)(desc >> 62), s = mode == 1 ? 3 : mode == 2 ? 2 : mode == 3 ? 1 : 0;
	unsigned long long width = 16ull << s; // bytes of one swizzled row (no swizzle: 16)

	if (!mn_major) {
		if (!s)
			off = (unsigned long long)(mn % 8) * 16 + (unsigned long long)(mn / 8) * sbo +
			      (unsigned long long)k % T * esz + (unsigned long long)k / T * lbo;
		else
			off = (unsigned long long)(mn % 8) * width + (unsigned long long)(mn / 8) * sbo +
			      (unsigned long long)k * esz;
	} else {
		if (!s)
			off = (unsigned long long)mn % T * esz + (unsigned long long)mn / T * sbo +
			      (unsigned long long)(k % 8) * 16 + (unsigned long long)(k / 8) * lbo;
		else {
			unsigned long long e = width / esz; // elements of one swizzled row

			off = (unsigned long long)mn % e * esz + (unsigned long long)mn / e * lbo +
			      (unsigned long long)(k % 8) * width + (unsigned long long)(k / 8) * sbo;
		}
	}
	a = start + off;
	if (s)
		a ^= ((a >> 7) & ((1ull << s) - 1)) << 4;
	return a;
}

// the 32 bytes of K (16 or 32 elements) of rows 0 .. rows-1 of an operand, row r at out + 32 r
static void tl_cpu_gmma_read(tl_u64 desc, int rows, int mn_major, int esz, unsigned char *out, const char *what)
{
	if ((desc >> 49) & 7)
		tl_cpu_fail("wgmma %s descriptor 0x%016llx has a nonzero base offset, which the CPU emulation does not "
			    "implement",
			    what, desc);
	for (int mn = 0; mn < rows; mn++)
		for (int k = 0; k < 32 / esz; k++)
			memcpy(&out[mn * 32 + k * esz], tl_cpu_shared_ptr(tl_cpu_gmma_addr(desc, mn, k, mn_major, esz), esz, what),
			       esz);
}

// complete op: D = A B + D per thread fragment (9.7.15.5.1.1.1, Figure 149, the f32
// accumulator of m64nNk16): thread t of the warpgroup, warp w = t / 32, lane l:
//   d[i]: row 16 w + l / 4 + 8 ((i / 2) % 2), col 8 (i / 4) + 2 (l % 4) + (i % 2)
// each element's dot product in double, rounded to f32 once (accumulation order and precision
// of the hardware unspecified: PTX "at least single precision")
__attribute__((optimize("O2"))) static void tl_cpu_wgmma_perform(tl_cpu_wgop *op)
{
	static unsigned char a2[64 * 32], b2[256 * 32];
	static double A[64][32], B[32][256], D[64][256];
	int n = op->n, nr = n / 2, esz = op->b8 >= 0 ? 1 : 2, kn = 32 / esz;
	int integer = op->b8 == TL_CPU_S8 || op->b8 == TL_CPU_U8;

	if (!op->rs)
		tl_cpu_gmma_read(op->da, 64, op->ta, esz, a2, "operand A");
	tl_cpu_gmma_read(op->db, n, op->tb, esz, b2, "operand B");
	for (int which = op->rs; which < 2; which++) {
		const unsigned char *now = which ? b2 : a2, *then = which ? op->b : op->a;
		int rows = which ? n : 64;

		for (int i = 0; i < rows * 32; i += esz)
			if (memcmp(&now[i], &then[i], esz)) {
				unsigned v0 = then[i], v1 = now[i];
				unsigned long long at = tl_cpu_gmma_addr(which ? op->db : op->da, i / 32, i % 32 / esz,
									 which ? op->tb : op->ta, esz);
				// the poison is 16-bit: an 8-bit element holds its low byte at an even address
				unsigned poison = esz == 2 ? TL_CPU_POISON16 : at & 1 ? TL_CPU_POISON16 >> 8 : TL_CPU_POISON16 & 0xff;

				if (esz == 2)
					v0 |= (unsigned)then[i + 1] << 8, v1 |= (unsigned)now[i + 1] << 8;
				tl_cpu_fail("shared memory read by a wgmma.mma_async (m64n%dk%d, descriptors A 0x%016llx B "
					    "0x%016llx) changed between the wgmma and the wgmma.wait_group that completed it: "
					    "%s element (%s %d, k %d) at shared byte %llu was 0x%0*x, is 0x%0*x%s",
					    n, kn, op->da, op->db, which ? "B" : "A", which ? "n" : "m", i / 32, i % 32 / esz, at,
					    2 * esz, v0, 2 * esz, v1,
					    v0 == poison
						? " (the poison of shared memory not written yet, or of a cp.async in flight, "
						  "when the wgmma was issued: a missing wait_group or barrier?)"
						: "");
			}
	}
	for (int m = 0; m < 64; m++)
		for (int k = 0; k < kn; k++) {
			const unsigned char *e = &op->a[m * 32 + k * esz];

			A[m][k] = op->b8 >= 0 ? tl_cpu_b8_val(e[0], op->b8)
				  : op->bf ? tl_bf2f((tl_bf16_t)(e[0] | e[1] << 8)) : tl_h2f((tl_half_t)(e[0] | e[1] << 8));
		}
	for (int j = 0; j < n; j++)
		for (int k = 0; k < kn; k++) {
			const unsigned char *e = &op->b[j * 32 + k * esz];

			B[k][j] = op->b8 >= 0 ? tl_cpu_b8_val(e[0], op->b8)
				  : op->bf ? tl_bf2f((tl_bf16_t)(e[0] | e[1] << 8)) : tl_h2f((tl_half_t)(e[0] | e[1] << 8));
		}
	// D starts from the accumulators (saved at issue, or the chained ones now), then k = 0..K-1;
	// s32 accumulators: exact (the products and their sums fit a double), wrapped to 32 bits
	for (int t = 0; t < 128; t++) {
		float *d = op->d[t];
		const float *base = op->saved ? op->saved + (size_t)t * nr : d;
		int w = t / 32, l = t % 32;

		if (op->saved)
			for (int i = 0; i < nr; i++) {
				tl_u32 u;

				memcpy(&u, &d[i], 4);
				if (u != TL_CPU_POISON32)
					tl_cpu_fail("accumulator register %d of thread %d (of the warpgroup) of a pending "
						    "wgmma.mma_async was written before the wgmma.wait_group that completes it",
						    i, t);
			}
		for (int i = 0; i < nr; i++) {
			double v;

			if (integer) {
				int iv;

				memcpy(&iv, &base[i], 4);
				v = iv;
			} else
				v = base[i];
			if (!op->sd)
				v = 0;
			D[16 * w + l / 4 + 8 * ((i / 2) % 2)][8 * (i / 4) + 2 * (l % 4) + (i % 2)] = v;
		}
	}
	for (int m = 0; m < 64; m++)
		for (int k = 0; k < kn; k++) {
			double a = A[m][k];

			for (int j = 0; j < n; j++)
				D[m][j] += a * B[k][j];
		}
	// a later wgmma still in flight on the same registers (the k-loop's chain, or the group the
	// pipeline keeps in flight) takes the result as its saved accumulators, and the registers
	// stay poisoned until it completes: a read in between sees garbage, as it may on hardware,
	// and a write in between is found when that one completes
	tl_cpu_wgop *next = NULL;

	for (tl_cpu_wgop *o = op->next; o && !next; o = o->next) {
		int same = o->n == n;

		for (int t = 0; t < 128 && same; t++)
			same = o->d[t] == op->d[t];
		if (same)
			next = o;
	}
	if (next && !next->saved)
		next->saved = (float *)tl_cpu_alloc(sizeof(float) * 128 * (size_t)nr);
	else
		next = NULL;
	for (int t = 0; t < 128; t++) {
		float *d = next ? next->saved + (size_t)t * nr : op->d[t];
		int w = t / 32, l = t % 32;

		for (int i = 0; i < nr; i++) {
			double v = D[16 * w + l / 4 + 8 * ((i / 2) % 2)][8 * (i / 4) + 2 * (l % 4) + (i % 2)];

			if (integer) {
				int iv = (int)(unsigned)(unsigned long long)(long long)v;

				memcpy(&d[i], &iv, 4);
			} else
				d[i] = (float)v;
			if (next) {
				tl_u32 poison = TL_CPU_POISON32;

				memcpy(&op->d[t][i], &poison, 4);
			}
		}
	}
}

static void tl_cpu_wg_collective_end(tl_cpu_wg *g, tl_cpu_fiber *me)
{
	int base = me->wg * 128;

	g->arrived = 0;
	tl_cpu_release(tl_cpu_fibp + base, 128, 1, me);
}

// arrive at a warpgroup collective; 1 for the last thread to arrive (which then performs it and
// calls tl_cpu_wg_collective_end), 0 for the others after the collective completed
static int tl_cpu_wg_arrive(const char *kind)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_wg *g;

	if (me->wg >= tl_cpu_nwgs || tl_cpu_wgs[me->wg].expected != 128)
		tl_cpu_fail("%s in warpgroup %d, which does not have 128 threads (the block has %d; PTX 9.7.15.1: a "
			    "warpgroup is 4 contiguous warps)",
			    kind, me->wg, tl_cpu_nthreads);
	g = &tl_cpu_wgs[me->wg];
	if (g->arrived == 0)
		g->kind = kind;
	else if (g->kind != kind && strcmp(g->kind, kind))
		tl_cpu_warp_kind_mismatch("warpgroup", me->wg, kind, g->kind);
	if (++g->arrived < 128) {
		tl_cpu_block_on(kind);
		return 0;
	}
	return 1;
}

// setmaxnreg.{dec,inc}.sync.aligned.u32 N (PTX 9.7.19.6): registers are not emulated, so a no-op,
// but .sync.aligned: every thread of the warpgroup executes the same one (else a divergence or a
// deadlock is reported), in a warpgroup of 128 threads
static void tl_cpu_setmaxnreg(const char *kind)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	if (tl_cpu_wg_arrive(kind))
		tl_cpu_wg_collective_end(&tl_cpu_wgs[me->wg], me);
}
template <int N> static inline void tl_setmaxnreg_dec(void)
{
	static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
	tl_cpu_setmaxnreg("setmaxnreg.dec");
}
template <int N> static inline void tl_setmaxnreg_inc(void)
{
	static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
	tl_cpu_setmaxnreg("setmaxnreg.inc");
}

// wgmma.fence.sync.aligned (9.7.15.7.1): orders register accesses; here it only records that
// the warpgroup fenced (required before its first wgmma.mma_async)
static void tl_wgmma_fence(void)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	if (tl_cpu_wg_arrive("wgmma.fence")) {
		tl_cpu_wgs[me->wg].fenced = 1;
		tl_cpu_wg_collective_end(&tl_cpu_wgs[me->wg], me);
	}
}

// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} d, da, db, 1, 1, 1, TA, TB (9.7.15.5.2):
// issued into the warpgroup's open group, performed by the wait_group that retires the group.
// Operands are read at issue and again at completion (an error if shared memory changed in
// between). The accumulators are saved at issue and overwritten with the poison, so a thread
// that reads them before the wait sees garbage, as it may on hardware; the wait checks they
// still hold the poison (writing them in flight is undefined too) and adds A B to the saved
// values. A wgmma whose accumulators belong to an older wgmma still in flight (the k-loop's
// chain on one accumulator) accumulates onto that one's result, in issue order.
static void tl_cpu_wgmma(int n, int tb, int ta, int bf, float *d, tl_u64 da, tl_u64 db, const tl_u32 *ra, int b8 = -1,
			 int sd = 1)
{
	static const char *const k8[] = {"wgmma.mma_async.s8", "wgmma.mma_async.u8", "wgmma.mma_async.e4m3",
					 "wgmma.mma_async.e5m2"};
	static const char *const k8rs[] = {"wgmma.mma_async.s8 (A from registers)", "wgmma.mma_async.u8 (A from registers)",
					   "wgmma.mma_async.e4m3 (A from registers)", "wgmma.mma_async.e5m2 (A from registers)"};
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_wg *g = &tl_cpu_wgs[me->wg]; // me->wg < tl_cpu_nwgs always (the last may be partial)
	int t = me->lin % 128, esz = b8 >= 0 ? 1 : 2;
	const char *kind = b8 >= 0 ? (ra ? k8rs[b8] : k8[b8])
			   : ra ? (bf ? "wgmma.mma_async.bf16 (A from registers)" : "wgmma.mma_async.f16 (A from registers)")
				: (bf ? "wgmma.mma_async.bf16" : "wgmma.mma_async.f16");

	if (g->arrived == 0) {
		g->n = n;
		g->tb = tb;
		g->ta = ta;
	} else if (g->kind == kind && (g->n != n || g->tb != tb || g->ta != ta))
		tl_cpu_fail("warpgroup divergence: wgmma m64n%dk16 (tnspA %d, tnspB %d) while other threads of the "
			    "warpgroup execute m64n%dk16 (tnspA %d, tnspB %d)",
			    n, ta, tb, g->n, g->ta, g->tb);
	g->da[t] = ra ? 0 : da;
	g->db[t] = db;
	g->d[t] = d;
	if (ra)
		memcpy(g->ra[t], ra, sizeof g->ra[t]);
	if (!tl_cpu_wg_arrive(kind))
		return;
	if (!g->fenced)
		tl_cpu_fail("wgmma.mma_async before any wgmma.fence of the warpgroup (PTX 9.7.15.7.1: a wgmma.fence "
			    "must precede the first wgmma.mma_async)");
	for (int i = 1; i < 128; i++)
		if (g->da[i] != g->da[0] || g->db[i] != g->db[0])
			tl_cpu_fail("wgmma.mma_async: thread %d of the warpgroup has descriptors A 0x%016llx B 0x%016llx, "
				    "thread 0 has A 0x%016llx B 0x%016llx (PTX: the contents of a matrix descriptor must "
				    "be the same across all the warps in the warpgroup)",
				    i, g->da[i], g->db[i], g->da[0], g->db[0]);
	{
		tl_cpu_wgop *op = (tl_cpu_wgop *)tl_cpu_alloc(sizeof *op);
		int chained = 0, nr = n / 2;

		op->n = n;
		op->tb = tb;
		op->ta = ta;
		op->bf = bf;
		op->b8 = b8;
		op->da = g->da[0];
		op->db = g->db[0];
		op->rs = ra != NULL;
		op->sd = sd != 0;
		op->group = g->group;
		memcpy(op->d, g->d, sizeof op->d);
		if (ra && b8 >= 0) {
			// the A fragment of m64nNk32 (8-bit) from registers: register q of thread t (warp w,
			// lane l) holds elements 4q .. 4q + 3, byte j:
			//   a[4q + j]: row 16 w + l / 4 + 8 (q % 2), col 4 (l % 4) + j + 16 (q / 2)
			for (int t2 = 0; t2 < 128; t2++)
				for (int q = 0; q < 4; q++)
					for (int j = 0; j < 4; j++)
						op->a[(16 * (t2 / 32) + t2 % 32 / 4 + 8 * (q % 2)) * 32 + 4 * (t2 % 4) + j +
						      16 * (q / 2)] = (unsigned char)(g->ra[t2][q] >> (8 * j));
		} else if (ra) {
			// the A fragment of m64nNk16 from registers (PTX 9.7.15.5.1.1.1, "register fragment
			// A"): thread t, warp w = t / 32, lane l, register q = 0..3 holds elements 2q, 2q + 1:
			//   a[2q + h]: row 16 w + l / 4 + 8 (q % 2), col 2 (l % 4) + h + 8 (q / 2)
			for (int t2 = 0; t2 < 128; t2++)
				for (int q = 0; q < 4; q++)
					for (int h = 0; h < 2; h++) {
						unsigned char *e = &op->a[(16 * (t2 / 32) + t2 % 32 / 4 + 8 * (q % 2)) * 32 +
									  2 * (2 * (t2 % 4) + h + 8 * (q / 2))];
						unsigned v = (g->ra[t2][q] >> (16 * h)) & 0xffff;

						e[0] = (unsigned char)v, e[1] = (unsigned char)(v >> 8);
					}
		} else
			tl_cpu_gmma_read(op->da, 64, ta, esz, op->a, "operand A");
		tl_cpu_gmma_read(op->db, n, tb, esz, op->b, "operand B");
		for (tl_cpu_wgop *o = g->ops; o && !chained; o = o->next)
			for (int i = 0; i < 128 && !chained; i++)
				chained = op->d[i] < o->d[i] + o->n / 2 && o->d[i] < op->d[i] + nr;
		if (!chained) {
			op->saved = (float *)tl_cpu_alloc(sizeof(float) * 128 * (size_t)nr);
			for (int i = 0; i < 128; i++) {
				tl_u32 poison = TL_CPU_POISON32;

				memcpy(op->saved + (size_t)i * nr, op->d[i], sizeof(float) * (size_t)nr);
				for (int j = 0; j < nr; j++)
					memcpy(&op->d[i][j], &poison, 4);
			}
		}
		if (g->last)
			g->last->next = op;
		else
			g->ops = op;
		g->last = op;
	}
	tl_cpu_wg_collective_end(g, me);
}

// wgmma.commit_group (9.7.15.7.2): the open group is closed (an empty group is a group)
static void tl_wgmma_commit(void)
{
	tl_cpu_fiber *me = tl_cpu_cur;

	if (tl_cpu_wg_arrive("wgmma.commit_group")) {
		tl_cpu_wgs[me->wg].group++;
		tl_cpu_wg_collective_end(&tl_cpu_wgs[me->wg], me);
	}
}

// wgmma.wait_group N (9.7.15.7.3): every committed group but the N most recent completes, in
// order; wgmmas not yet committed stay in flight
static void tl_cpu_wgmma_wait(int n)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_wg *g;

	if (!tl_cpu_wg_arrive(n ? "wgmma.wait_group 1" : "wgmma.wait_group 0"))
		return;
	g = &tl_cpu_wgs[me->wg];
	while (g->ops && g->ops->group + (unsigned long long)n < g->group) {
		tl_cpu_wgop *op = g->ops;

		tl_cpu_wgmma_perform(op);
		g->ops = op->next;
		if (!g->ops)
			g->last = NULL;
		free(op->saved);
		free(op);
	}
	tl_cpu_wg_collective_end(g, me);
}

static inline void tl_wgmma_wait0(void) { tl_cpu_wgmma_wait(0); }
static inline void tl_wgmma_wait1(void) { tl_cpu_wgmma_wait(1); }

// d[0 .. N/2): this thread's f32 accumulators; da, db: descriptors of A (TA = 0: K-major, TA = 1:
// M-major) and B (TB = 1: N-major, TB = 0: K-major); d += A * B (scale-d = 1, imm-scale-a/b = 1,
// tnspA = TA, tnspB = TB)
template <int N, int TB, int TA = 0> static inline void tl_wgmma_f16(float *d, tl_u64 da, tl_u64 db)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk16: N is 8, 16, ..., 256");
	static_assert(TB == 0 || TB == 1, "wgmma: tnspB is 0 or 1");
	static_assert(TA == 0 || TA == 1, "wgmma: tnspA is 0 or 1");
	tl_cpu_wgmma(N, TB, TA, 0, d, da, db, NULL);
}

template <int N, int TB, int TA = 0> static inline void tl_wgmma_bf16(float *d, tl_u64 da, tl_u64 db)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk16: N is 8, 16, ..., 256");
	static_assert(TB == 0 || TB == 1, "wgmma: tnspB is 0 or 1");
	static_assert(TA == 0 || TA == 1, "wgmma: tnspA is 0 or 1");
	tl_cpu_wgmma(N, TB, TA, 1, d, da, db, NULL);
}

// wgmma RS: a[0..3] this thread's A registers (the m64 tile's fragment, two elements each)
template <int N, int TB> static inline void tl_wgmma_rs_f16(float *d, const tl_u32 *a, tl_u64 db)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk16: N is 8, 16, ..., 256");
	static_assert(TB == 0 || TB == 1, "wgmma: tnspB is 0 or 1");
	tl_cpu_wgmma(N, TB, 0, 0, d, 0, db, a);
}

template <int N, int TB> static inline void tl_wgmma_rs_bf16(float *d, const tl_u32 *a, tl_u64 db)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk16: N is 8, 16, ..., 256");
	static_assert(TB == 0 || TB == 1, "wgmma: tnspB is 0 or 1");
	tl_cpu_wgmma(N, TB, 0, 1, d, 0, db, a);
}

// wgmma m64nNk32 with 8-bit A and B from shared memory, both K-major (no transpose immediates):
// s8/u8 into s32 accumulators (N = 8, 16, 24, or a multiple of 16 from 32), e4m3/e5m2 into f32
// (sd = 0: scale-d 0, D = A B without reading the accumulators)
static inline void tl_fence_operand(int &r) { (void)r; }
// the N of an 8-bit integer wgmma (a function: the macro check of check_emit_hip wants each operand once)
static constexpr bool tl_cpu_wgmma_i8_n(int n) { return n == 8 || n == 16 || n == 24 || (n % 16 == 0 && n >= 32 && n <= 256); }
template <int N> static inline void tl_wgmma_s8(int *d, tl_u64 da, tl_u64 db)
{
	static_assert(tl_cpu_wgmma_i8_n(N), "wgmma m64nNk32 s8/u8: N is 8, 16, 24, or a multiple of 16 from 32 to 256");
	tl_cpu_wgmma(N, 0, 0, 0, (float *)(void *)d, da, db, NULL, TL_CPU_S8);
}

template <int N> static inline void tl_wgmma_u8(int *d, tl_u64 da, tl_u64 db)
{
	static_assert(tl_cpu_wgmma_i8_n(N), "wgmma m64nNk32 s8/u8: N is 8, 16, 24, or a multiple of 16 from 32 to 256");
	tl_cpu_wgmma(N, 0, 0, 0, (float *)(void *)d, da, db, NULL, TL_CPU_U8);
}

template <int N> static inline void tl_wgmma_e4m3(float *d, tl_u64 da, tl_u64 db, int sd = 1)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk32 e4m3/e5m2: N is 8, 16, ..., 256");
	tl_cpu_wgmma(N, 0, 0, 0, d, da, db, NULL, TL_CPU_E4M3, sd);
}

template <int N> static inline void tl_wgmma_e5m2(float *d, tl_u64 da, tl_u64 db, int sd = 1)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk32 e4m3/e5m2: N is 8, 16, ..., 256");
	tl_cpu_wgmma(N, 0, 0, 0, d, da, db, NULL, TL_CPU_E5M2, sd);
}

// wgmma RS, 8-bit: a[0..3] this thread's A registers (the m64 tile's fragment, four elements each)
template <int N> static inline void tl_wgmma_rs_s8(int *d, const tl_u32 *a, tl_u64 db)
{
	static_assert(tl_cpu_wgmma_i8_n(N), "wgmma m64nNk32 s8/u8: N is 8, 16, 24, or a multiple of 16 from 32 to 256");
	tl_cpu_wgmma(N, 0, 0, 0, (float *)(void *)d, 0, db, a, TL_CPU_S8);
}

template <int N> static inline void tl_wgmma_rs_u8(int *d, const tl_u32 *a, tl_u64 db)
{
	static_assert(tl_cpu_wgmma_i8_n(N), "wgmma m64nNk32 s8/u8: N is 8, 16, 24, or a multiple of 16 from 32 to 256");
	tl_cpu_wgmma(N, 0, 0, 0, (float *)(void *)d, 0, db, a, TL_CPU_U8);
}

template <int N> static inline void tl_wgmma_rs_e4m3(float *d, const tl_u32 *a, tl_u64 db, int sd = 1)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk32 e4m3/e5m2: N is 8, 16, ..., 256");
	tl_cpu_wgmma(N, 0, 0, 0, d, 0, db, a, TL_CPU_E4M3, sd);
}

template <int N> static inline void tl_wgmma_rs_e5m2(float *d, const tl_u32 *a, tl_u64 db, int sd = 1)
{
	static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk32 e4m3/e5m2: N is 8, 16, ..., 256");
	tl_cpu_wgmma(N, 0, 0, 0, d, 0, db, a, TL_CPU_E5M2, sd);
}
#endif // !TL_CPU_HIP

// ============================================================================================
// mbarriers and TMA (PTX 9.7.13.15 mbarrier; 9.7.9.25.5 cp.async.bulk.tensor)
// ============================================================================================
// An mbarrier is 8 bytes of shared memory. Its state is kept in a side table (tl_cpu_mbars); the
// 8 bytes hold a tag naming the entry, so that a barrier overwritten by a store is found at its
// next use. State: the arrivals per phase, the arrivals and transaction bytes still pending in
// the current phase, the phase number. A phase completes when both pending counts are zero; the
// next phase starts with count arrivals pending. try_wait.parity(p) succeeds when the phase of
// parity p has completed, i.e. the current phase's parity is not p (so a fresh barrier, in
// phase 0, lets a wait on parity 1 pass: "the immediately preceding phase" of 9.7.13.15.16).
// A TMA load reads its box at issue (zeros outside the tensor) and poisons its destination; it
// is performed (bytes written with the map's swizzle on the absolute shared address, its bytes
// of transactions completed on its barrier) as late as a GPU may: when a thread waits on that
// barrier, or when no thread of the block can run. A destination written in between, or a
// source that changed, is an error (both are undefined on the GPU).
struct __attribute__((aligned(64))) tl_tmap_t {
	unsigned long long magic;
	const unsigned char *base;
	unsigned long long dim[3];   // elements: dim[0] innermost (dim[2] = 1 for rank 2)
	unsigned long long stride[2]; // bytes from one dim[1] index to the next, one dim[2] index to the next
	unsigned box[3], esize, swizzle; // swizzle span in bytes: 0 (none), 32, 64, 128
	unsigned rank;
	unsigned long long pad[6];
};
static_assert(sizeof(tl_tmap_t) == 128, "a tensor map is 128 bytes");
#define TL_CPU_TMAP_MAGIC 0x544c544d41503244ull // "TLTMAP2D"
#define __grid_constant__

struct tl_cpu_mbar {
	unsigned addr;     // shared address
	int count, pending;
	long long tx;      // transaction bytes pending (expected minus completed)
	unsigned phase;
};
struct tl_cpu_tma {        // one TMA load in flight
	unsigned char *dst;
	unsigned bar;          // the shared address of its mbarrier
	tl_tmap_t map;
	int c0, c1, c2;
	size_t n;
	unsigned char *data;   // the box as it lands in shared memory (n bytes from dst)
};
static tl_cpu_mbar tl_cpu_mbars[256];
static int tl_cpu_nmbar;
static tl_cpu_tma *tl_cpu_tmas;
static int tl_cpu_captma;

// the host side of cuTensorMapEncodeTiled for a 2-D or 3-D tiled map of a dense tensor (no
// interleave, zero fill; dimension 2's stride is dim1 rows), with the driver's checks: NULL,
// or what is wrong
static const char *tl_tmap_encode(tl_tmap_t *m, const void *base, int esize, int rank, unsigned long long dim0,
				  unsigned long long dim1, unsigned long long dim2, unsigned long long stride, int box0,
				  int box1, int box2, int swizzle)
{
	memset(m, 0, sizeof *m);
	if (rank != 2 && rank != 3)
		return "the rank must be 2 or 3";
	if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
		return "element size must be 1, 2, 4 or 8 bytes";
	if ((uintptr_t)base % 16)
		return "the global address must be 16-byte aligned";
	if (!dim0 || !dim1 || !dim2 || dim0 > (1ull << 32) || dim1 > (1ull << 32) || dim2 > (1ull << 32))
		return "each dimension must be in [1, 2^32]";
	if (stride % 16 || stride >= (1ull << 40) || stride < dim0 * (unsigned long long)esize)
		return "the row stride must be a multiple of 16 bytes, below 2^40, and hold a row";
	if (rank == 3 && stride * dim1 >= (1ull << 40))
		return "the plane stride must be below 2^40";
	if (box0 < 1 || box0 > 256 || box1 < 1 || box1 > 256 || box2 < 1 || box2 > 256)
		return "each box dimension must be in [1, 256]";
	if (rank == 2 && (dim2 != 1 || box2 != 1))
		return "a rank-2 map has no third dimension";
	if ((unsigned)box0 * (unsigned)esize % 16)
		return "the box's inner dimension must be a multiple of 16 bytes";
	if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
		return "the swizzle is none, 32, 64 or 128 bytes";
	if (swizzle && (unsigned)box0 * (unsigned)esize > (unsigned)swizzle)
		return "the box's inner dimension must not be wider than the swizzle span";
	m->magic = TL_CPU_TMAP_MAGIC;
	m->base = (const unsigned char *)base;
	m->dim[0] = dim0, m->dim[1] = dim1, m->dim[2] = dim2;
	m->stride[0] = stride, m->stride[1] = stride * dim1;
	m->box[0] = (unsigned)box0, m->box[1] = (unsigned)box1, m->box[2] = (unsigned)box2;
	m->rank = (unsigned)rank;
	m->esize = (unsigned)esize, m->swizzle = (unsigned)swizzle;
	return NULL;
}

static const char *tl_tmap_encode_2d(tl_tmap_t *m, const void *base, int esize, unsigned long long dim0,
				     unsigned long long dim1, unsigned long long stride, int box0, int box1, int swizzle)
{
	return tl_tmap_encode(m, base, esize, 2, dim0, dim1, 1, stride, box0, box1, 1, swizzle);
}

static tl_cpu_mbar *tl_cpu_mbar_of(const void *bar, const char *what)
{
	tl_cpu_check_shared(bar, 8, 8, what);
	unsigned a = (unsigned)__cvta_generic_to_shared(bar);

	for (int i = 0; i < tl_cpu_nmbar; i++)
		if (tl_cpu_mbars[i].addr == a) {
			unsigned char tag[8];

			memcpy(tag, "TLMB", 4);
			memcpy(tag + 4, &i, 4);
			if (memcmp(bar, tag, 8))
				tl_cpu_fail("%s: the mbarrier at shared address %u was overwritten by a store", what, a);
			return &tl_cpu_mbars[i];
		}
	tl_cpu_fail("%s: no mbarrier at shared address %u (mbarrier.init has not run on it in this block)", what, a);
	return NULL;
}

static inline int tl_cpu_mbar_done(const tl_cpu_mbar *b, int parity) { return (int)(b->phase & 1) != (parity & 1); }

// a phase completes when nothing is pending: wake the threads that wait for it
static void tl_cpu_mbar_step(tl_cpu_mbar *b)
{
	if (b->pending || b->tx)
		return;
	b->phase++;
	b->pending = b->count;
	for (int i = 0; i < tl_cpu_nthreads; i++) {
		tl_cpu_fiber *f = &tl_cpu_fib[i];

		if (f->state == TL_BLOCKED && f->mbar == b->addr && tl_cpu_mbar_done(b, f->mbar_parity)) {
			f->mbar = ~0u;
			tl_cpu_make_ready(f);
		}
	}
}

static void tl_mbar_init(unsigned long long *bar, int count)
{
	tl_cpu_check_shared(bar, 8, 8, "mbarrier.init");
	unsigned a = (unsigned)__cvta_generic_to_shared(bar);
	int i;

	if (count < 1 || count >= (1 << 20))
		tl_cpu_fail("mbarrier.init: count %d is not in [1, 2^20)", count);
	for (i = 0; i < tl_cpu_nmbar && tl_cpu_mbars[i].addr != a; i++)
		;
	if (i < tl_cpu_nmbar) // undefined on the GPU (9.7.13.15.9)
		tl_cpu_fail("mbarrier.init on the valid mbarrier at shared address %u (mbarrier.inval first)", a);
	for (i = 0; i < tl_cpu_nmbar && tl_cpu_mbars[i].addr != ~0u; i++) // a free entry
		;
	if (i == tl_cpu_nmbar) {
		if (tl_cpu_nmbar == (int)(sizeof tl_cpu_mbars / sizeof tl_cpu_mbars[0]))
			tl_cpu_fatal("more than 256 mbarriers in a block");
		tl_cpu_nmbar++;
	}
	tl_cpu_mbars[i] = tl_cpu_mbar{a, count, count, 0, 0};
	memcpy(bar, "TLMB", 4);
	memcpy((unsigned char *)bar + 4, &i, 4);
}

static inline void tl_fence_mbar_init(void) {}

// mbarrier.inval: the memory is no barrier any more (poisoned: a wait on it is an error)
static void tl_mbar_inval(unsigned long long *bar)
{
	tl_cpu_mbar *b = tl_cpu_mbar_of(bar, "mbarrier.inval");

	for (int j = 0; j < tl_cpu_ntma; j++)
		if (tl_cpu_tmas[j].bar == b->addr)
			tl_cpu_fail("mbarrier.inval: the mbarrier at shared address %u has a TMA load in flight", b->addr);
	for (int i = 0; i < tl_cpu_nthreads; i++)
		if (tl_cpu_fib[i].state == TL_BLOCKED && tl_cpu_fib[i].mbar == b->addr)
			tl_cpu_fail("mbarrier.inval: thread %d waits on the mbarrier at shared address %u", i, b->addr);
	b->addr = ~0u;
	tl_cpu_poison(bar, 8);
}

static void tl_cpu_mbar_arrive(unsigned long long *bar, long long tx, const char *what)
{
	tl_cpu_mbar *b = tl_cpu_mbar_of(bar, what);

	if (b->pending <= 0)
		tl_cpu_fail("%s: more arrivals on the mbarrier at shared address %u than its count (%d) in one phase", what,
			    b->addr, b->count);
	b->tx += tx;
	b->pending--;
	tl_cpu_mbar_step(b);
}

static void tl_mbar_expect_tx(unsigned long long *bar, int bytes)
{
	if (bytes < 0 || bytes >= (1 << 20))
		tl_cpu_fail("mbarrier.arrive.expect_tx: %d bytes is not in [0, 2^20)", bytes);
	tl_cpu_mbar_arrive(bar, bytes, "mbarrier.arrive.expect_tx");
}

static void tl_mbar_arrive(unsigned long long *bar) { tl_cpu_mbar_arrive(bar, 0, "mbarrier.arrive"); }

// the box of map at (c0, c1, c2) as it lands at shared address a (n bytes)
static void tl_cpu_tma_gather(const tl_tmap_t *m, int c0, int c1, int c2, unsigned a, unsigned char *out)
{
	const unsigned es = m->esize, row = m->box[0] * es;
	const unsigned s = m->swizzle == 128 ? 7 : m->swizzle == 64 ? 3 : m->swizzle == 32 ? 1 : 0;

	for (unsigned p = 0; p < m->box[2]; p++)
		for (unsigned r = 0; r < m->box[1]; r++)
			for (unsigned c = 0; c < m->box[0]; c++) {
				long long x = (long long)c0 + c, y = (long long)c1 + r, z = (long long)c2 + p;
				unsigned o = a + (p * m->box[1] + r) * row + c * es;

				o ^= ((o >> 7) & s) << 4; // Swizzle<b,4,3> on the byte address
				if (x >= 0 && y >= 0 && z >= 0 && (unsigned long long)x < m->dim[0] &&
				    (unsigned long long)y < m->dim[1] && (unsigned long long)z < m->dim[2])
					memcpy(out + (o - a),
					       m->base + (unsigned long long)z * m->stride[1] + (unsigned long long)y * m->stride[0] +
						       (unsigned long long)x * es,
					       es);
				else
					memset(out + (o - a), 0, es);
			}
}

static void tl_cpu_tma_load(void *dst, const tl_tmap_t *map, int rank, int c0, int c1, int c2, unsigned long long *bar)
{
	if (map->magic != TL_CPU_TMAP_MAGIC)
		tl_cpu_fail("cp.async.bulk.tensor: the tensor map was not encoded (tl_tmap_encode)");
	if ((int)map->rank != rank)
		tl_cpu_fail("cp.async.bulk.tensor.%dd with a tensor map of rank %u", rank, map->rank);
	tl_cpu_mbar_of(bar, "cp.async.bulk.tensor's mbarrier");
	size_t n = (size_t)map->box[0] * map->box[1] * map->box[2] * map->esize;

	tl_cpu_check_shared(dst, (n + 127) / 128 * 128, 128, "cp.async.bulk.tensor destination");
	if (tl_cpu_ntma == tl_cpu_captma) {
		tl_cpu_captma = tl_cpu_captma ? 2 * tl_cpu_captma : 16;
		tl_cpu_tmas = (tl_cpu_tma *)realloc(tl_cpu_tmas, (size_t)tl_cpu_captma * sizeof *tl_cpu_tmas);
		if (!tl_cpu_tmas)
			tl_cpu_fatal("out of memory");
	}
	tl_cpu_tma *t = &tl_cpu_tmas[tl_cpu_ntma++];
	t->dst = (unsigned char *)dst;
	t->bar = (unsigned)__cvta_generic_to_shared(bar);
	t->map = *map;
	t->c0 = c0, t->c1 = c1, t->c2 = c2;
	t->n = n;
	t->data = (unsigned char *)tl_cpu_alloc(n);
	tl_cpu_tma_gather(map, c0, c1, c2, (unsigned)__cvta_generic_to_shared(dst), t->data);
	tl_cpu_poison(dst, n);
}

static void tl_tma_load_2d(void *dst, const tl_tmap_t *map, int c0, int c1, unsigned long long *bar)
{
	tl_cpu_tma_load(dst, map, 2, c0, c1, 0, bar);
}

static void tl_tma_load_3d(void *dst, const tl_tmap_t *map, int c0, int c1, int c2, unsigned long long *bar)
{
	tl_cpu_tma_load(dst, map, 3, c0, c1, c2, bar);
}

static inline void tl_tma_prefetch_map(const tl_tmap_t *map)
{
	if (map->magic != TL_CPU_TMAP_MAGIC)
		tl_cpu_fail("prefetch.tensormap: the tensor map was not encoded (tl_tmap_encode)");
}

// perform the TMA loads in flight on the barrier at shared address bar (every one: ~0u), in
// issue order; once a barrier's phase completes, its later loads count toward the next phase
// and stay in flight (a phase that expected too few bytes completes before its last box lands)
static void tl_cpu_tma_perform(unsigned bar)
{
	unsigned done[64];
	int k = 0, ndone = 0;

	for (int i = 0; i < tl_cpu_ntma; i++) {
		tl_cpu_tma *t = &tl_cpu_tmas[i];
		int j;

		for (j = 0; j < ndone && done[j] != t->bar; j++)
			;
		if ((bar != ~0u && t->bar != bar) || j < ndone) {
			tl_cpu_tmas[k++] = *t;
			continue;
		}
		unsigned a = (unsigned)__cvta_generic_to_shared(t->dst);
		unsigned char *now = (unsigned char *)tl_cpu_alloc(t->n);

		if (!tl_cpu_is_poison(t->dst, t->n))
			tl_cpu_fail("shared memory bytes [%u, %zu), the destination of a TMA load in flight, were written "
				    "before the load completed (before the wait on its mbarrier)",
				    a, (size_t)a + t->n);
		tl_cpu_tma_gather(&t->map, t->c0, t->c1, t->c2, a, now);
		if (memcmp(now, t->data, t->n))
			tl_cpu_fail("the global source of a TMA load in flight (box at %d, %d, %d) changed before the load "
				    "completed",
				    t->c0, t->c1, t->c2);
		memcpy(t->dst, t->data, t->n);
		free(now);
		free(t->data);
		for (j = 0; j < tl_cpu_nmbar; j++)
			if (tl_cpu_mbars[j].addr == t->bar) {
				unsigned phase = tl_cpu_mbars[j].phase;

				tl_cpu_mbars[j].tx -= (long long)t->n;
				tl_cpu_mbar_step(&tl_cpu_mbars[j]);
				if (tl_cpu_mbars[j].phase != phase && ndone < 64)
					done[ndone++] = t->bar;
			}
	}
	tl_cpu_ntma = k;
}

static void tl_mbar_wait(unsigned long long *bar, int parity)
{
	tl_cpu_mbar *b = tl_cpu_mbar_of(bar, "mbarrier.try_wait.parity");
	tl_cpu_fiber *me = tl_cpu_cur;

	// a phase already complete returns at once: loads still in flight on the barrier belong to
	// a later phase and land as late as they may
	if (tl_cpu_mbar_done(b, parity))
		return;
	tl_cpu_tma_perform(b->addr);
	while (!tl_cpu_mbar_done(b, parity)) {
		me->mbar = b->addr;
		me->mbar_parity = parity;
		tl_cpu_block_on("mbarrier wait");
	}
}

// ============================================================================================
// Memory checks: guarded tensors, the segmentation-fault handler, static shared arrays
// ============================================================================================
static unsigned char *tl_cpu_stack_lo(const tl_cpu_fiber *f) { return f->map + TL_CPU_PAGE; }

static void tl_cpu_sigwrite(const char *s) { (void)!write(2, s, strlen(s)); }

static void tl_cpu_on_fault(int sig, siginfo_t *si, void *uc)
{
	char msg[1024], where[160];
	unsigned char *a = (unsigned char *)si->si_addr;
	int i;

	(void)uc;
	tl_cpu_where(where, sizeof where);
	if (sig == SIGFPE) {
		snprintf(msg, sizeof msg, "tilec-cpu: error: arithmetic exception (integer division by zero or "
					  "overflow; SIGFPE)%s\n",
			 where);
		goto out;
	}
	for (i = 0; i < tl_cpu_ntensors; i++) {
		tl_cpu_tensor *t = &tl_cpu_tensors[i];

		if (a >= t->map && a < t->map + t->maplen) {
			if (a < t->data)
				snprintf(msg, sizeof msg,
					 "tilec-cpu: error: out-of-bounds access to tensor '%s' at byte offset -%zu, before "
					 "its start (it has %zu bytes)%s\n",
					 t->name, (size_t)(t->data - a), t->n, where);
			else
				snprintf(msg, sizeof msg,
					 "tilec-cpu: error: out-of-bounds access to tensor '%s' at byte offset %zu past its "
					 "end (it has %zu bytes)%s\n",
					 t->name, (size_t)(a - t->data), t->n, where);
			goto out;
		}
	}
	if (a >= tl_smem && a < tl_smem + sizeof tl_smem) {
		snprintf(msg, sizeof msg,
			 "tilec-cpu: error: out-of-bounds access to shared memory at byte offset %zu (the launch has "
			 "%zu bytes of dynamic shared memory)%s\n",
			 (size_t)(a - tl_smem), tl_cpu_smem_bytes, where);
		goto out;
	}
	for (i = 0; tl_cpu_fib && i < tl_cpu_nthreads; i++) {
		tl_cpu_fiber *f = &tl_cpu_fib[i];

		if (f->map && a >= f->map - 65536 && a < tl_cpu_stack_lo(f)) {
			snprintf(msg, sizeof msg,
				 "tilec-cpu: error: stack overflow in thread (%u,%u,%u) (its stack has %u bytes)%s\n",
				 f->tidx.x, f->tidx.y, f->tidx.z, TL_CPU_STACK, where);
			goto out;
		}
	}
	if (sig == SIGSEGV && si->si_code == SI_KERNEL)
		snprintf(msg, sizeof msg,
			 "tilec-cpu: error: general protection fault (a misaligned vector access, or a wild pointer)%s\n",
			 where);
	else
		snprintf(msg, sizeof msg,
			 "tilec-cpu: error: invalid memory access at address %p (%s), outside every tensor and shared "
			 "memory%s\n",
			 (void *)a, sig == SIGBUS ? "SIGBUS" : "SIGSEGV", where);
out:
	tl_cpu_sigwrite(msg);
	_exit(3);
}

static unsigned char tl_cpu_altstack[1 << 16]; // not function-local: see tl_cpu_find_statics

static void tl_cpu_install_handlers(void)
{
	stack_t ss;
	struct sigaction sa;

	ss.ss_sp = tl_cpu_altstack;
	ss.ss_size = sizeof tl_cpu_altstack;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL))
		tl_cpu_fatal("sigaltstack: %s", strerror(errno));
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = tl_cpu_on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
}

// a tensor of n bytes: [guard page][canary slack][data: 256-byte aligned start, its end as close
// to the next guard page as that allows][canary slack][guard page]
static void tl_cpu_tensor_alloc(tl_cpu_tensor *t, const char *name, const void *init, size_t n)
{
	size_t r = (n + 255) & ~(size_t)255, body = (r + TL_CPU_PAGE - 1) / TL_CPU_PAGE * TL_CPU_PAGE;
	unsigned char *m;

	if (!body)
		body = TL_CPU_PAGE;
	t->maplen = body + 2 * TL_CPU_PAGE;
	m = (unsigned char *)mmap(NULL, t->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		tl_cpu_fatal("cannot map %zu bytes for tensor '%s': %s", t->maplen, name, strerror(errno));
	if (mprotect(m, TL_CPU_PAGE, PROT_NONE) || mprotect(m + TL_CPU_PAGE + body, TL_CPU_PAGE, PROT_NONE))
		tl_cpu_fatal("mprotect: %s", strerror(errno));
	t->map = m;
	t->name = name;
	t->n = n;
	t->data = m + TL_CPU_PAGE + body - r;
	memset(m + TL_CPU_PAGE, TL_CPU_CANARY, body);
	memcpy(t->data, init, n);
}

static void tl_cpu_tensor_check(const tl_cpu_tensor *t)
{
	const unsigned char *lo = t->map + TL_CPU_PAGE, *hi = t->map + t->maplen - TL_CPU_PAGE;

	for (const unsigned char *p = t->data + t->n; p < hi; p++)
		if (*p != TL_CPU_CANARY)
			tl_cpu_fail("write past the end of tensor '%s' (byte offset %zu; it has %zu bytes)", t->name,
				    (size_t)(p - t->data), t->n);
	for (const unsigned char *p = t->data; p-- > lo;)
		if (*p != TL_CPU_CANARY)
			tl_cpu_fail("write before the start of tensor '%s' (byte offset -%zu; it has %zu bytes)", t->name,
				    (size_t)(t->data - p), t->n);
}

// static __shared__ arrays are function-local statics of the kernel: found in the executable's
// symbol table (C++ local statics: _ZZ<function>E<name>), so that they are poisoned before every
// block and have shared addresses (after the dynamic maximum). Without a symbol table (a
// stripped build) they are neither poisoned nor accepted as shared memory.
static void tl_cpu_find_statics(void)
{
#if defined(__linux__) && defined(__LP64__)
	int fd = open("/proc/self/exe", O_RDONLY);
	struct stat st;
	unsigned char *f;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	intptr_t bias = 0;
	int have_bias = 0, cap = 0;
	unsigned addr = TL_CPU_SMEM_MAX;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return;
	}
	f = (unsigned char *)mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return;
	eh = (const Elf64_Ehdr *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > (size_t)st.st_size)
		goto done;
	sh = (const Elf64_Shdr *)(f + eh->e_shoff);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < eh->e_shnum; i++) {
			const Elf64_Sym *sym;
			const char *str;
			size_t nsym;

			if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
			    sh[i].sh_offset + sh[i].sh_size > (size_t)st.st_size ||
			    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size > (size_t)st.st_size)
				continue;
			sym = (const Elf64_Sym *)(f + sh[i].sh_offset);
			nsym = sh[i].sh_size / sizeof(Elf64_Sym);
			str = (const char *)(f + sh[sh[i].sh_link].sh_offset);
			for (size_t j = 0; j < nsym; j++) {
				const char *nm;

				if (sym[j].st_name >= sh[sh[i].sh_link].sh_size)
					continue;
				nm = str + sym[j].st_name;
				if (pass == 0) {
					if (!strcmp(nm, "tl_smem") && ELF64_ST_TYPE(sym[j].st_info) == STT_OBJECT) {
						bias = (intptr_t)tl_smem - (intptr_t)sym[j].st_value;
						have_bias = 1;
					}
					continue;
				}
				if (!have_bias || ELF64_ST_TYPE(sym[j].st_info) != STT_OBJECT || !sym[j].st_size ||
				    strncmp(nm, "_ZZ", 3) || strstr(nm, "tl_cpu_") || sym[j].st_shndx == SHN_UNDEF ||
				    sym[j].st_shndx >= eh->e_shnum)
					continue;
				// a static const table of the kernel (tl_tab<k>: coordinates with no closed
				// form) is read-only data, not shared memory
				if (!(sh[sym[j].st_shndx].sh_flags & SHF_WRITE))
					continue;
				if (tl_cpu_nstatics == cap) {
					cap = cap ? 2 * cap : 16;
					tl_cpu_statics = (tl_cpu_static *)realloc(tl_cpu_statics, (size_t)cap * sizeof *tl_cpu_statics);
					if (!tl_cpu_statics)
						tl_cpu_fatal("out of memory");
				}
				{
					tl_cpu_static *s = &tl_cpu_statics[tl_cpu_nstatics++];
					const char *e = strrchr(nm, 'E'); // _ZZ4gemmE7tl_red0 -> tl_red0
					char *endp;
					long len = e ? strtol(e + 1, &endp, 10) : 0;

					s->p = (unsigned char *)(sym[j].st_value + bias);
					s->n = sym[j].st_size;
					addr = (addr + 15) & ~15u;
					s->addr = addr;
					addr += (unsigned)s->n;
					if (e && len > 0 && len < (long)sizeof s->name && (long)strlen(endp) >= len)
						snprintf(s->name, sizeof s->name, "%.*s", (int)len, endp);
					else
						snprintf(s->name, sizeof s->name, "%.63s", nm);
					snprintf(s->fn, sizeof s->fn, "%.*s", e && e - nm - 3 < 63 ? (int)(e - nm - 3) : 63, nm + 3);
				}
			}
		}
done:
	munmap(f, (size_t)st.st_size);
#endif
}

// ============================================================================================
// The run: job file, blocks, output
// ============================================================================================
static void tl_cpu_run_block(void)
{
	int T = tl_cpu_nthreads;

	// shared memory: poison, canary tail past the launch's size (up to the protected pages)
	tl_cpu_poison(tl_smem, tl_cpu_smem_bytes);
	memset(tl_smem + tl_cpu_smem_bytes, TL_CPU_CANARY, tl_cpu_smem_prot - tl_cpu_smem_bytes);
	for (int i = 0; i < tl_cpu_nstatics; i++)
		tl_cpu_poison(tl_cpu_statics[i].p, tl_cpu_statics[i].n);
	for (int w = 0; w < tl_cpu_nwarps; w++) {
		tl_cpu_warps[w].arrived = 0;
		tl_cpu_warps[w].expected = T - TL_CPU_WAVE * w < TL_CPU_WAVE ? T - TL_CPU_WAVE * w : TL_CPU_WAVE;
	}
	for (int g = 0; g < tl_cpu_nwgs; g++) {
		tl_cpu_wg *wg = &tl_cpu_wgs[g];

		while (wg->ops) { // wgmmas of the previous block never waited for: dropped
			tl_cpu_wgop *o = wg->ops;

			wg->ops = o->next;
			free(o->saved);
			free(o);
		}
		wg->last = NULL;
		wg->arrived = 0;
		wg->fenced = 0;
		wg->group = 0;
		wg->expected = T - 128 * g < 128 ? T - 128 * g : 128;
	}
	tl_cpu_bar_arrived = 0;
	tl_cpu_nbar_arrived = 0;
	tl_cpu_ndone = 0;
	for (int i = 0; i < tl_cpu_ntma; i++) // loads of the previous block never waited for: dropped
		free(tl_cpu_tmas[i].data);
	tl_cpu_ntma = tl_cpu_nmbar = 0;
	tl_cpu_rq_head = tl_cpu_rq_n = 0;
	for (int i = 0; i < T; i++) {
		tl_cpu_fiber *f = &tl_cpu_fib[i];

		f->ncpa = f->cpa_head = 0;
		f->cpa_group = 0;
		f->mbar = ~0u;
		tl_cpu_ctx_init(&f->ctx, tl_cpu_stack_lo(f), f->map + f->maplen);
	}
	for (int i = 0; i < T; i++)
		tl_cpu_make_ready(&tl_cpu_fib[tl_cpu_sched_mode == TL_SCHED_REVERSE ? T - 1 - i : i]);
	tl_cpu_running = 1;
	{
		tl_cpu_fiber *f = tl_cpu_pop_ready();

		f->state = TL_RUN;
		tl_cpu_cur = f;
		tl_cpu_switch(&tl_cpu_sched, &f->ctx);
	}
	// nothing is ready any more: every thread returned, or the block is stuck
	tl_cpu_cur = NULL;
	if (tl_cpu_ndone != T) {
		char msg[1200];
		size_t len = 0;
		int nbar = 0, ndone = 0, nkinds = 0;
		const char *kinds[8];
		unsigned char *set = (unsigned char *)tl_cpu_alloc((size_t)T);

		for (int i = 0; i < T; i++) {
			const char *k = tl_cpu_fib[i].state == TL_DONE ? "returned" : tl_cpu_fib[i].waiting;
			int j;

			if (!k)
				k = "?";
			nbar += k == tl_cpu_fib[i].waiting && !strcmp(k, "__syncthreads");
			ndone += tl_cpu_fib[i].state == TL_DONE;
			for (j = 0; j < nkinds && strcmp(kinds[j], k); j++)
				;
			if (j == nkinds && nkinds < 8)
				kinds[nkinds++] = k;
		}
		len += (size_t)snprintf(msg, sizeof msg, "%s: ", nbar && ndone ? "barrier divergence" : "deadlock");
		for (int j = 0; j < nkinds; j++) {
			char r[600];

			for (int i = 0; i < T; i++) {
				const char *k = tl_cpu_fib[i].state == TL_DONE ? "returned" : tl_cpu_fib[i].waiting;

				set[i] = k ? !strcmp(k, kinds[j]) : !strcmp(kinds[j], "?");
			}
			tl_cpu_ranges(r, sizeof r, set, T);
			if (len < sizeof msg)
				len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s %s%s", j ? ", " : "threads ", r,
							strcmp(kinds[j], "returned") ? "wait at " : "", kinds[j]);
		}
		free(set);
		tl_cpu_fail("%s", msg);
	}
	for (size_t i = tl_cpu_smem_bytes; i < tl_cpu_smem_prot; i++)
		if (tl_smem[i] != TL_CPU_CANARY)
			tl_cpu_fail("write past the end of dynamic shared memory (byte offset %zu; the launch has %zu bytes)", i,
				    tl_cpu_smem_bytes);
	tl_cpu_running = 0;
}

static __attribute__((noreturn)) void tl_cpu_badjob(const char *path, const char *what)
{
	fprintf(stderr, "tilec-cpu: bad job file %s: %s\n", path, what);
	exit(2);
}

static uint32_t tl_cpu_get32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t tl_cpu_get64(const unsigned char *p) { return tl_cpu_get32(p) | (uint64_t)tl_cpu_get32(p + 4) << 32; }

int main(int argc, char **argv)
{
	unsigned char *job = NULL, *p, *end;
	size_t len = 0, cap = 0;
	unsigned nargs, grid[3], block[3], T;
	unsigned long long smem;
	FILE *f;
	int *kind;

	if (argc != 3) {
		fprintf(stderr, "usage: %s JOBFILE OUTFILE (cpu/cpuexec.h)\n", argv[0]);
		return 2;
	}
	if (!(f = fopen(argv[1], "rb")))
		tl_cpu_badjob(argv[1], strerror(errno));
	for (;;) {
		size_t r;

		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			if (!(job = (unsigned char *)realloc(job, cap)))
				tl_cpu_fatal("out of memory");
		}
		if (!(r = fread(job + len, 1, cap - len, f)))
			break;
		len += r;
	}
	if (ferror(f))
		tl_cpu_badjob(argv[1], "read error");
	fclose(f);
	end = job + len;
	if (len < 48 || memcmp(job, "TLCPUJ1", 8))
		tl_cpu_badjob(argv[1], "no TLCPUJ1 header");
	nargs = tl_cpu_get32(job + 8);
	for (int i = 0; i < 3; i++) {
		grid[i] = tl_cpu_get32(job + 12 + 4 * i);
		block[i] = tl_cpu_get32(job + 24 + 4 * i);
	}
	if (tl_cpu_get32(job + 36))
		tl_cpu_badjob(argv[1], "the reserved word after the block is not 0");
	smem = tl_cpu_get64(job + 40);
	if (nargs > 4096)
		tl_cpu_badjob(argv[1], "more than 4096 arguments");
	if (!grid[0] || !grid[1] || !grid[2] || grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535)
		tl_cpu_badjob(argv[1], "grid dimensions out of range (x 1..2^31-1, y and z 1..65535)");
	if (!block[0] || !block[1] || !block[2] || block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
	    (unsigned long long)block[0] * block[1] * block[2] > 1024)
		tl_cpu_badjob(argv[1], "block dimensions out of range (x, y <= 1024, z <= 64, at most 1024 threads)");
	if (smem > TL_CPU_SMEM_MAX)
		tl_cpu_badjob(argv[1], "more dynamic shared memory than " TL_CPU_SMEM_WHAT);
	tl_cpu_args = (void **)tl_cpu_alloc(sizeof(void *) * (nargs + 1));
	tl_cpu_tensors = (tl_cpu_tensor *)tl_cpu_alloc(sizeof(tl_cpu_tensor) * (nargs + 1));
	kind = (int *)tl_cpu_alloc(sizeof(int) * (nargs + 1));
	p = job + 48;
	tl_cpu_install_handlers();
	for (unsigned i = 0; i < nargs; i++) {
		unsigned nl;
		unsigned long long nb;
		char *name;

		if (end - p < 16)
			tl_cpu_badjob(argv[1], "truncated argument header");
		kind[i] = (int)tl_cpu_get32(p);
		nl = tl_cpu_get32(p + 4);
		nb = tl_cpu_get64(p + 8);
		p += 16;
		if (kind[i] != 0 && kind[i] != 1)
			tl_cpu_badjob(argv[1], "argument kind is neither 0 (tensor) nor 1 (value)");
		if (nl > 4096 || nl > (size_t)(end - p))
			tl_cpu_badjob(argv[1], "argument name too long or truncated");
		name = (char *)tl_cpu_alloc(nl + 1);
		memcpy(name, p, nl);
		for (unsigned j = 0; j < nl; j++)
			if ((unsigned char)name[j] < 32 || (unsigned char)name[j] > 126)
				tl_cpu_badjob(argv[1], "argument name with a control or non-ASCII character");
		p += nl;
		if (nb > (unsigned long long)(end - p))
			tl_cpu_badjob(argv[1], "argument data truncated");
		if (kind[i] == 1) {
			if (nb == 0 || nb > 16)
				tl_cpu_badjob(argv[1], "a value argument has 1 to 16 bytes");
			tl_cpu_args[i] = tl_cpu_alloc(16); // 16-byte aligned (malloc), zero padded
			memcpy(tl_cpu_args[i], p, nb);
		} else {
			tl_cpu_tensor *t = &tl_cpu_tensors[tl_cpu_ntensors++];

			tl_cpu_tensor_alloc(t, name, p, (size_t)nb);
			tl_cpu_args[i] = t->data;
		}
		p += nb;
	}
	if (p != end)
		tl_cpu_badjob(argv[1], "bytes after the last argument");

	for (int i = 0; i < 65536; i++)
		tl_cpu_h2f_tab[i] = tl_cpu_h2f_calc((tl_half_t)i);
	tl_cpu_find_statics();
#ifdef TL_CPU_HIP
	{ // AMD: dynamic and static LDS share the workgroup's 64 KiB (the static arrays of the
	  // function that has the most: the executable may hold several kernels of a program)
		size_t st = 0;

		for (int i = 0; i < tl_cpu_nstatics; i++) {
			size_t f = 0;

			for (int j = 0; j < tl_cpu_nstatics; j++)
				if (!strcmp(tl_cpu_statics[i].fn, tl_cpu_statics[j].fn))
					f += tl_cpu_statics[j].n;
			if (f > st)
				st = f;
		}
		if ((size_t)smem + st > TL_CPU_SMEM_MAX)
			tl_cpu_fail("the launch's %llu bytes of dynamic LDS and the kernel's %zu bytes of static __shared__ "
				    "arrays exceed " TL_CPU_SMEM_WHAT,
				    smem, st);
	}
#endif
	gridDim = dim3(grid[0], grid[1], grid[2]);
	blockDim = dim3(block[0], block[1], block[2]);
	T = block[0] * block[1] * block[2];
	tl_cpu_nthreads = (int)T;
	tl_cpu_smem_bytes = (size_t)smem;
	tl_cpu_smem_prot = (tl_cpu_smem_bytes + TL_CPU_PAGE - 1) / TL_CPU_PAGE * TL_CPU_PAGE;
	if (tl_cpu_smem_prot < sizeof tl_smem &&
	    mprotect(tl_smem + tl_cpu_smem_prot, sizeof tl_smem - tl_cpu_smem_prot, PROT_NONE))
		tl_cpu_fatal("mprotect of shared memory: %s", strerror(errno));
	{
		const char *sc = getenv("TILEC_CPU_SCHEDULE");

		if (!sc || !*sc || !strcmp(sc, "depth"))
			tl_cpu_sched_mode = TL_SCHED_DEPTH;
		else if (!strcmp(sc, "reverse"))
			tl_cpu_sched_mode = TL_SCHED_REVERSE;
		else if (!strcmp(sc, "fifo"))
			tl_cpu_sched_mode = TL_SCHED_FIFO;
		else
			tl_cpu_fatal("TILEC_CPU_SCHEDULE=%s: depth, reverse or fifo", sc);
	}
	tl_cpu_fib = (tl_cpu_fiber *)tl_cpu_alloc(sizeof(tl_cpu_fiber) * T);
	tl_cpu_fibp = (tl_cpu_fiber **)tl_cpu_alloc(sizeof(tl_cpu_fiber *) * T);
	for (unsigned i = 0; i < T; i++)
		tl_cpu_fibp[i] = &tl_cpu_fib[i];
	tl_cpu_readyq = (tl_cpu_fiber **)tl_cpu_alloc(sizeof(tl_cpu_fiber *) * T);
	tl_cpu_bar_wait = (tl_cpu_fiber **)tl_cpu_alloc(sizeof(tl_cpu_fiber *) * T);
	tl_cpu_nbar_wait = (tl_cpu_fiber **)tl_cpu_alloc(sizeof(tl_cpu_fiber *) * T);
	tl_cpu_nwarps = (int)(T + TL_CPU_WAVE - 1) / TL_CPU_WAVE;
	tl_cpu_nwgs = (int)(T + 127) / 128;
	tl_cpu_warps = (tl_cpu_warp *)tl_cpu_alloc(sizeof(tl_cpu_warp) * (size_t)tl_cpu_nwarps);
	tl_cpu_wgs = (tl_cpu_wg *)tl_cpu_alloc(sizeof(tl_cpu_wg) * (size_t)tl_cpu_nwgs);
	for (unsigned i = 0; i < T; i++) {
		tl_cpu_fiber *fb = &tl_cpu_fib[i];

		fb->maplen = TL_CPU_STACK + TL_CPU_PAGE;
		fb->map = (unsigned char *)mmap(NULL, fb->maplen, PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
#ifdef MAP_STACK
							| MAP_STACK
#endif
						,
						-1, 0);
		if (fb->map == MAP_FAILED)
			tl_cpu_fatal("cannot map a fiber stack: %s", strerror(errno));
		if (mprotect(fb->map, TL_CPU_PAGE, PROT_NONE))
			tl_cpu_fatal("mprotect: %s", strerror(errno));
		fb->lin = (int)i;
		fb->tidx.x = i % block[0];
		fb->tidx.y = i / block[0] % block[1];
		fb->tidx.z = i / (block[0] * block[1]);
		fb->lane = (int)(i % TL_CPU_WAVE);
		fb->warp = (int)(i / TL_CPU_WAVE);
		fb->wg = (int)(i / 128);
	}
	for (unsigned z = 0; z < grid[2]; z++)
		for (unsigned y = 0; y < grid[1]; y++)
			for (unsigned x = 0; x < grid[0]; x++) {
				blockIdx.x = x;
				blockIdx.y = y;
				blockIdx.z = z;
				tl_cpu_run_block();
			}
	for (int i = 0; i < tl_cpu_ntensors; i++)
		tl_cpu_tensor_check(&tl_cpu_tensors[i]);
	if (!(f = fopen(argv[2], "wb")))
		tl_cpu_fatal("cannot write %s: %s", argv[2], strerror(errno));
	for (int i = 0; i < tl_cpu_ntensors; i++)
		if (fwrite(tl_cpu_tensors[i].data, 1, tl_cpu_tensors[i].n, f) != tl_cpu_tensors[i].n)
			tl_cpu_fatal("cannot write %s: %s", argv[2], strerror(errno));
	if (fclose(f))
		tl_cpu_fatal("cannot write %s: %s", argv[2], strerror(errno));
	return 0;
}

// the helpers every target shares (integer floor division, fp8 conversions)
#define TL_DEVICE static inline
#include "tilec_portable.h"

#endif // TILEC_CPU_H
