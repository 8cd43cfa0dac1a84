/*
 * tilec.h: the public compile API of libtilec. tilec_compile() runs the
 * whole pipeline (parse, semantic checks, tile IR, later passes) on a source
 * text and returns a status, the diagnostics as text, and the output text.
 * It never exits, aborts or prints; every failure is a status and a message.
 */
#ifndef TILEC_H
#define TILEC_H

#include <stddef.h>

#include "tilec_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * tilec_compile returns TILEC_OK (compiled; output is set), TILEC_ERR_COMPILE
 * (an error in the source or in a -D value, malformed or rejected by the
 * program; see diagnostics), TILEC_ERR_ARG (the API was called with bad
 * arguments or options: NULL, unknown target or arch) or TILEC_ERR_NOMEM.
 */

struct tilec_pass_list; /* tilec_plugin.h */

typedef enum { TILEC_TARGET_CUDA = 0, TILEC_TARGET_HIP = 1 } tilec_target;

typedef enum {
	TILEC_DUMP_NONE = 0, /* check the program; output is the IR dump until emission exists */
	TILEC_DUMP_AST = 1,  /* output is the AST dump (after parsing only) */
	TILEC_DUMP_IR = 2,   /* output is the tile IR dump */
	TILEC_DUMP_CUDA = 3, /* output is CUDA C (target cuda; see docs of emit_cuda) */
	TILEC_DUMP_LAYOUTS = 4, /* output is every buffer's and nest's inferred layout */
	TILEC_DUMP_EXPLAIN = 5, /* output is every inference attempt's cost by statement */
	TILEC_DUMP_HEADER = 6,  /* output is the C launcher header of the CUDA C (cuda target;
	                         * `tilec -o x.cu --header x.h`, docs/runtime.md) */
	TILEC_DUMP_LOWERED = 7, /* output is the lowered kernel IR (docs/cuda.md), before the C */
} tilec_dump;

/* how layout inference ranks its attempts */
typedef enum {
	TILEC_COST_IO_AWARE = 0,       /* memory traffic first, registers as the tie-break (default) */
	TILEC_COST_REGISTER_COUNT = 1, /* per-thread fragment registers only */
} tilec_cost_model;

typedef struct tilec_options {
	tilec_target target;
	const char *arch;            /* NULL: sm_80 for cuda, gfx942 for hip */
	const char *const *defines;  /* "NAME=VALUE" strings (-D); VALUE an integer or float */
	int ndefines;
	tilec_dump dump;
	const char *filename;        /* for diagnostics; NULL: "<input>" */
	int caret;                   /* diagnostics show the source line and a caret */
	tilec_cost_model cost_model; /* layout inference's cost model (default io-aware) */
	/* the pass pipeline (tilec_plugin.h, docs/layout-control.md) */
	int print_passes;            /* output is the pass list, one name a line; no pass runs */
	const char *print_before;    /* a pass name or "all": the IR before it goes to the log */
	const char *print_after;     /* the same after the pass */
	const char *const *plugins;  /* shared libraries exporting tilec_plugin_get_info */
	int nplugins;
	/* called with the pass list before the passes run; may insert, remove or
	 * replace passes; a non-zero return fails the compile */
	int (*pass_hook)(struct tilec_pass_list *passes, void *user);
	void *pass_hook_user;
	int layout_dump_to_output;   /* dump_layout text goes into the output, not the log */
	/* sm_90a: 1 (tilec_options_init's default): a pipeline of loads and wgmma gemms loads its
	 * tiles with TMA where it can (tensor maps as trailing __grid_constant__ parameters, made
	 * by tilec_launch, the --header launchers and the CPU run; docs/cuda.md); 0: cp.async */
	int tma;
	/* sm_90a, with TMA: 1 gives the pipeline a producer warpgroup that only issues the TMA
	 * loads (setmaxnreg.dec) and makes the kernel's threads consumers (setmaxnreg.inc); the
	 * block grows by 128 threads, which the launch contract line says (docs/cuda.md). Off by
	 * default (tilec_options_init): to be measured on the GPU */
	int warp_specialize;
	/* -1 (auto, the default of tilec_options_init): 8 for a kernel with a 2-D grid and a
	 * GEMM main loop (a pipeline loading both shared operands of a gemm) on sm_90a, else 0. 0: blocks take their tiles in launch order. G > 0: a
	 * kernel with a 2-D grid takes them in groups of G rows of tiles (blockIdx.y), column by
	 * column inside a group (an L2-friendly order: a group's blocks share A rows and B
	 * columns); the last group of a ragged grid is shorter (docs/cuda.md) */
	int raster_group;
	/* 0 (the default): one block per tile of the grid. 1: a kernel with a 2-D grid (X x Y
	 * tiles, blockIdx.z kept) is launched with min(X Y, SMs x blocks per SM) blocks in x and
	 * 1 in y, each looping over the tiles blockIdx.x, blockIdx.x + gridDim.x, ... (through
	 * raster_group's order when set); a TMA pipeline's barriers are initialized once and its
	 * stages and parities carried over the tiles, so a producer warpgroup loads the next
	 * tile during the epilogue. The launch contract says so; every launcher sizes the grid
	 * (docs/cuda.md). A kernel that cannot be made persistent keeps its grid and says why */
	int persistent;
	/* how a result tile in registers reaches global memory after a GEMM's pipeline
	 * (`copy(acc, C[...])`): TILEC_EPILOGUE_AUTO (-1, the default of tilec_options_init)
	 * through shared memory on a target with TMA (sm_90a) without warp_specialize, else from
	 * the fragment; TILEC_EPILOGUE_DIRECT (0): each thread stores its fragment's elements;
	 * TILEC_EPILOGUE_SHARED (1): written to shared memory (on the pipeline's stage bytes,
	 * swizzled) and stored in 16-byte rows wherever that takes no more shared memory
	 * (docs/cuda.md). The kernel says in a comment which it took, and why not */
	int epilogue;
} tilec_options;

enum { TILEC_EPILOGUE_AUTO = -1, TILEC_EPILOGUE_DIRECT = 0, TILEC_EPILOGUE_SHARED = 1 };

typedef struct tilec_result {
	tilec_status status;
	int nerrors;
	char *diagnostics;  /* "file:line:col: error: message\n"...; "" when none; never NULL */
	char *output;       /* the output text; "" on error; never NULL after tilec_compile */
	char *log;          /* IR dumps between passes, dump_layout text; "" when none; never NULL */
} tilec_result;

/* Fill opts with the defaults (cuda, no defines, no dump). NULL is ignored. */
void tilec_options_init(tilec_options *opts);

/*
 * Compile src[0..len) (it may hold any bytes, NUL included). opts may be
 * NULL (defaults). res must not be NULL; free it with tilec_result_free.
 * Returns res->status.
 */
tilec_status tilec_compile(const char *src, size_t len, const tilec_options *opts,
			   tilec_result *res);
/* Free the strings of res (not res itself) and set them to NULL; NULL is fine. */
void tilec_result_free(tilec_result *res);

/* 1 if arch is valid for target (cuda: sm_80, sm_90, sm_90a; hip: gfx90a, gfx942, gfx1100) */
int tilec_arch_valid(tilec_target target, const char *arch);

/*
 * Check one -D text: NAME=VALUE with NAME an identifier and VALUE a decimal
 * or 0x integer (optionally negative) or a float. Returns TILEC_OK if good, else
 * TILEC_ERR_ARG with a message in msg.
 */
tilec_status tilec_define_check(const char *def, char *msg, size_t msgsz);

/* the version of libtilec, "0.1.0"; never NULL */
const char *tilec_version(void);
/* sizeof(tilec_options) in this library: for bindings that mirror the struct (python/) */
size_t tilec_options_size(void);

#ifdef __cplusplus
}
#endif

#endif
