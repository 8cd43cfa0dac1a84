/*
 * cpuexec.h: the emitted CUDA C compiled and run on the CPU. The kernel text
 * is compiled as C++ with templates/tilec_cpu.h standing in for tilec_cuda.h
 * (CUDA built-ins, every device helper, threads of a block as fibers), or,
 * for emitted HIP C, templates/tilec_cpu_hip.h standing in for tilec_hip.h
 * (the same runtime with wavefronts of 64 or 32 lanes, the AMD helpers); a
 * trampoline tl_cpu_entry(void **args) calls the kernel with its arguments.
 * The executable reads a job file (the launch and the arguments), runs every
 * block, and writes the tensors back; tensors live between guard pages, so an
 * access past either end of a tensor stops the run with the tensor's name.
 *
 * Job file (little-endian), written by cpuexec_run:
 *   "TLCPUJ1\0", u32 nargs, u32 grid[3], u32 block[3], u32 0, u64 smem_bytes,
 *   then per argument: u32 kind (CPUARG_PTR: a tensor, CPUARG_VAL: a value),
 *   u32 namelen, u64 nbytes, the name (namelen bytes), the data (nbytes).
 * Output file: every CPUARG_PTR argument's nbytes, in argument order.
 * Exit status of the executable: 0 ran; 3 a run-time error found by the
 * emulation (out-of-bounds access, barrier divergence, deadlock, ...), its
 * message on standard error starting "tilec-cpu: error: "; 2 a bad job file;
 * 1 the harness itself failed ("tilec-cpu: fatal: ", e.g. out of memory).
 * The emulation's semantics and checks: docs/cpu.md.
 */
#ifndef CPUEXEC_H
#define CPUEXEC_H

#include <stddef.h>

#include "ir.h"
#include "tl.h"

enum { CPUARG_PTR = 0, CPUARG_VAL = 1 };

typedef struct CpuArg {
	const char *name;
	int kind;          /* CPUARG_PTR or CPUARG_VAL */
	void *data;        /* PTR: the tensor (updated by the run); VAL: the value's bytes */
	size_t bytes;
} CpuArg;

typedef struct CpuLaunch {
	unsigned grid[3], block[3];
	size_t smem;       /* dynamic shared memory, bytes */
} CpuLaunch;

typedef struct CpuExe {
	char dir[512];     /* the work directory (its files are removed by cpuexec_free unless keep) */
	char exe[600];
	int keep;
} CpuExe;

/*
 * The trampoline for kernel k of the emitted CUDA C: extern "C" void
 * tl_cpu_entry(void **a) calling the kernel with a[i] per parameter (tensors
 * as pointers, scalars and sizes by value). kname: the kernel's name in the C.
 * A strided tensor (IrBuffer.strides) is passed as its storage and, after the
 * sizes, one int per strided tensor in parameter order: the byte offset of the
 * view's first element in that storage (its skew), so that the kernel sees a
 * pointer as (mis)aligned as the caller's (the storage starts 256-byte aligned).
 */
/* code: the emitted C, whose tensor-map lines (gen/target/cuda/tmap.h) the entry builds the
 * maps from (tl_tmap_encode; a map that cannot be encoded, e.g. rows that are not whole
 * 16-byte chunks, is passed unencoded: the kernel uses it only where its row flags hold, and
 * the CPU run reports a use of one); NULL: none. 0, or -1 when a map line is malformed or
 * names no tensor or size of k. */
int cpuexec_entry(Buf *out, const IrKernel *k, const char *kname, const char *code);

/*
 * Compile cuda_src (emitted CUDA C for one program) plus entry (the
 * trampoline) into an executable in a new directory under tmp (NULL:
 * $TMPDIR or /tmp). cxx: the C++ compiler (NULL: $TILEC_CXX, $CXX, else c++).
 * keep: leave the directory. The compiler's messages go to log. 0, or -1.
 */
int cpuexec_build(CpuExe *x, const char *cuda_src, const char *entry, const char *cxx,
		  const char *tmp, int keep, Buf *log, Err *e);

/*
 * The same for the code of a target: hip = 0, the CUDA C of cpuexec_build
 * (arch ignored); hip = 1, HIP C for arch gfx90a, gfx942 or gfx1100 (NULL:
 * gfx942), compiled against templates/tilec_cpu_hip.h, written as
 * tilec_hip.h beside tilec_cpu.h, with -DTL_CPU_WAVE= the arch's wavefront
 * (64, or 32 on gfx1100). 0, or -1 (e: also an unknown arch).
 */
int cpuexec_build_target(CpuExe *x, int hip, const char *arch, const char *src, const char *entry,
			 const char *cxx, const char *tmp, int keep, Buf *log, Err *e);

/*
 * Run the executable on args with launch l; tensor data are replaced by the
 * results. Returns 0 when the run finished, 1 when the emulation reported a
 * run-time error (its message in e), -1 on other failures (e). timeout_s > 0
 * kills a run that takes longer.
 */
int cpuexec_run(const CpuExe *x, CpuArg *args, int nargs, const CpuLaunch *l, int timeout_s, Buf *log,
		Err *e);

void cpuexec_free(CpuExe *x);

/* the dynamic shared memory bytes of kernel name (its tile name) from the launch
 * contract comment of the emitted text ("// kernel NAME: T threads, B bytes"), or -1 */
long long cpuexec_smem_of(const char *src, const char *name);
/* the threads of a block of kernel name from the same line, or -1: the block every launch
 * uses (a warp-specialized kernel has more threads than the program's threads(...)) */
long long cpuexec_threads_of(const char *src, const char *name);
/* the CPU run's "SMs x blocks per SM" of a persistent kernel: few, so that a block takes
 * several tiles and ragged counts leave blocks with one tile fewer */
#define TILEC_CPU_PERSISTENT_BLOCKS 3
/* 1 when kernel name's launch contract in src says persistent (tilec_options.persistent) */
int cpuexec_persistent_of(const char *src, const char *name);
/* the launch grid of a persistent kernel for its grid (X, Y, Z) of the sizes: (min(X Y, cap),
 * 1, Z); an empty grid stays empty */
void cpuexec_persistent_grid(unsigned grid[3], unsigned long long cap);

#endif
