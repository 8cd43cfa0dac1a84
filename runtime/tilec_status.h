/*
 * tilec_status.h: the one status type of every public tilec header. Every
 * function of libtilec that can fail returns a tilec_status: TILEC_OK (0) on
 * success, a negative TILEC_ERR_* code otherwise. Predicates (tilec_arch_valid,
 * tilec_module_ok, ...) return 1 or 0 and counts return an int.
 */
#ifndef TILEC_STATUS_H
#define TILEC_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tilec_status {
	TILEC_OK = 0,
	TILEC_ERR_ARG = -1,      /* bad argument or option: NULL, an unknown arch, target, name, ... */
	TILEC_ERR_NOLIB = -2,    /* libnvrtc / libcuda / libamdhip64 not found or incomplete */
	TILEC_ERR_COMPILE = -3,  /* the source did not compile (tile diagnostics, or the NVRTC /
	                          * hipRTC / C++ log); a CPU run the program has no meaning for */
	TILEC_ERR_ARCH = -4,     /* the compiler cannot target this architecture */
	TILEC_ERR_DRIVER = -5,   /* a CUDA driver call failed */
	TILEC_ERR_NOTFOUND = -6, /* no kernel, pass or parameter of that name */
	TILEC_ERR_NOMEM = -7,    /* out of memory */
	TILEC_ERR_IO = -8,       /* file or pipe error */
	TILEC_ERR_CRASH = -9,    /* a compiler or a CPU run crashed or hung (in its child process) */
	TILEC_ERR_DIFFER = -10,  /* tilec_run: the emitted code and the interpreter disagree, or
	                          * the emitted code failed at run time on the CPU (a tilec bug) */
	TILEC_ERR_RUN = -11,     /* tilec_cpu_launch: the emitted code failed at run time on the
	                          * CPU (out-of-bounds access, barrier divergence, deadlock) */
} tilec_status;

/* "TILEC_OK", "TILEC_ERR_ARG", ...; "TILEC_ERR_UNKNOWN" for other values; never NULL */
const char *tilec_status_str(int status);

/* Old names (tilec.h and tilec_run.h before the statuses were unified), kept for source
 * compatibility; the values are the unified ones. */
#define tilec_status_name tilec_status_str
#define TILEC_ERROR TILEC_ERR_COMPILE
#define TILEC_USAGE TILEC_ERR_ARG
#define TILEC_NOMEM TILEC_ERR_NOMEM
#define TILEC_RUN_AGREE TILEC_OK
#define TILEC_RUN_DIFFER TILEC_ERR_DIFFER
#define TILEC_RUN_ERROR TILEC_ERR_COMPILE
#define TILEC_RUN_USAGE TILEC_ERR_ARG
typedef tilec_status tilec_run_status;

#ifdef __cplusplus
}
#endif

#endif
