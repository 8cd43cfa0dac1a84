/*
 * tilec_run.h: run a tile program on the CPU both ways and compare
 * (`tilec run`, docs/cpu.md). One way is the reference interpreter of the
 * tile IR, which defines what the program computes; the other is the CUDA C
 * that tilec emits, compiled for the CPU with a C++ compiler against
 * tilec_cpu.h (threads as fibers, every device helper emulated, tensors
 * between guard pages). Both get the same random inputs; every output
 * element must match bit for bit, or within a tolerance of its type where the
 * result depends on an order of evaluation (sums, gemm) or a math library.
 */
#ifndef TILEC_RUN_H
#define TILEC_RUN_H

#include <stddef.h>

#include "tilec_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tilec_run_options {
	const char *arch;            /* the arch of the emitted code: sm_80, sm_90, sm_90a (NULL: sm_80,
	                              * or sm_90a when sm_80 refuses the program, said in the report);
	                              * for target hip gfx90a, gfx942 (default), gfx1100 */
	const char *const *defines;  /* "NAME=VALUE" as for tilec_compile */
	int ndefines;
	/* size symbols and scalar parameters, "M=1000,N=1003,alpha=0.5"; several
	 * sets separated by ';' run one after another on one build; `*=V` gives
	 * every size not named V. Sizes not named get ragged defaults; both are
	 * moved to the nearest values that satisfy the kernel's assumes. Scalars
	 * get a value of their type. NULL: the defaults only. */
	const char *sizes;
	unsigned long long seed;     /* the random inputs (0 is a seed like any other) */
	const char *kernel;          /* the kernel to run; NULL: every kernel of the program */
	const char *filename;        /* for diagnostics; NULL: "<input>" */
	const char *cxx;             /* the C++ compiler; NULL: $TILEC_CXX, $CXX, else c++ */
	const char *tmpdir;          /* for the build; NULL: $TMPDIR or /tmp */
	int keep;                    /* keep the build directory (its path is in the report) */
	int timeout_s;               /* per CPU run; 0: 300 s */
	int verbose;                 /* the report lists every output, not only disagreements */
	/* for testing the check itself: run this CUDA C instead of what tilec emits (its
	 * kernels must have the program's signatures; tilec's own emission is then not run,
	 * so a program it refuses to emit still runs);
	 * NULL: the emitted code */
	const char *cuda_override;
	/* the target of the emitted code: TILEC_TARGET_CUDA (0, the default) or TILEC_TARGET_HIP
	 * (tilec.h), whose HIP C runs against the CPU stand-in of tilec_hip.h (wavefronts of
	 * 64 lanes on gfx90a and gfx942, 32 on gfx1100); arch is then gfx90a, gfx942 (the
	 * default) or gfx1100, and cuda_override is HIP C */
	int target;
	/* where the emitted code runs: 0 (the default) the CPU build above; 1 the GPU of the
	 * CUDA driver (target cuda), through the JIT runtime (tilec_jit.h: NVRTC, cuLaunchKernel);
	 * arch NULL then means the device's. Without a driver every run is an error (status
	 * TILEC_ERR_COMPILE, "no CUDA driver ..."). cxx, keep and timeout_s do not apply. */
	int device;
	/* the most work the reference interpreter does per run (its statements, elements
	 * moved and multiply-adds); 0: 2e9. A run that leaves sizes to the defaults and
	 * passes it is run again with smaller defaults (near 40, then below 30) */
	long long max_work;
	int tma;                     /* tilec_options.tma for the emitted code (init: 1) */
	int warp_specialize;         /* tilec_options.warp_specialize (init: 0) */
	int raster_group;            /* tilec_options.raster_group (init: -1, auto) */
	int persistent;              /* tilec_options.persistent (init: 0); the CPU run launches
				      * TILEC_CPU_PERSISTENT_BLOCKS blocks of a persistent kernel */
	int epilogue;                /* tilec_options.epilogue (init: TILEC_EPILOGUE_AUTO) */
} tilec_run_options;

/*
 * tilec_run's statuses (tilec_status.h; the old names TILEC_RUN_* are macros for them):
 *   TILEC_OK          every output matches (TILEC_RUN_AGREE)
 *   TILEC_ERR_DIFFER  an output differs, or the CPU run of the emitted code failed
 *                     (out-of-bounds access, barrier divergence, ...): a tilec bug
 *   TILEC_ERR_COMPILE the program did not compile, has no meaning for the sizes (the
 *                     interpreter says why), or could not be built or run
 *   TILEC_ERR_ARG     bad options
 */
typedef struct tilec_run_result {
	tilec_status status;
	int runs;              /* kernel x size-set runs compared */
	int differ;            /* of them, how many disagreed */
	char *report;          /* one line per run and per output (see docs/cpu.md); never NULL */
	char *diagnostics;     /* compile errors, "file:line:col: error: ..."; never NULL */
} tilec_run_result;

/* Fill o with the defaults (sm_80, seed 0, every kernel, default sizes). */
void tilec_run_options_init(tilec_run_options *o);

/* Run src[0..len) (a tile program) per the options (NULL: the defaults). res must not
 * be NULL; free it with tilec_run_result_free. Returns res->status. */
tilec_status tilec_run(const char *src, size_t len, const tilec_run_options *o, tilec_run_result *res);
/* Free the strings of res (not res itself); NULL is fine. */
void tilec_run_result_free(tilec_run_result *res);

#ifdef __cplusplus
}
#endif

#endif
