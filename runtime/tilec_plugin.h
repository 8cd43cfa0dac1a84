/*
 * tilec_plugin.h: the C ABI of tilec's pass pipeline, for passes added by a
 * host program (tilec_options.pass_hook) or loaded from a shared library
 * (`tilec --plugin=lib.so`, tilec_options.plugins). A pass sees the program
 * through an opaque handle and a table of functions, so a plugin needs no
 * symbol of tilec at link time. See docs/layout-control.md.
 */
#ifndef TILEC_PLUGIN_H
#define TILEC_PLUGIN_H

#include <stddef.h>

#include "tilec_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2 added output and set_output; a version 1 plugin still loads (it does not see them) */
#define TILEC_PLUGIN_API_VERSION 3

/* the program between two passes (opaque) */
typedef struct tilec_ir tilec_ir;

/* what a pass may ask and do; valid only during the pass's run */
typedef struct tilec_ir_api {
	int api_version;                                   /* TILEC_PLUGIN_API_VERSION */
	int (*kernel_count)(const tilec_ir *ir);
	const char *(*kernel_name)(const tilec_ir *ir, int kernel);
	/* statements of a kernel, nested bodies included */
	int (*stmt_count)(const tilec_ir *ir, int kernel);
	int (*buffer_count)(const tilec_ir *ir, int kernel);
	const char *(*buffer_name)(const tilec_ir *ir, int kernel, int buffer);
	/* "global", "shared" or "local" */
	const char *(*buffer_scope)(const tilec_ir *ir, int kernel, int buffer);
	/* 1 if the buffer has a layout (after layout inference) */
	int (*buffer_has_layout)(const tilec_ir *ir, int kernel, int buffer);
	/* the IR's text form (as --dump=ir); owned by the compile */
	const char *(*dump)(tilec_ir *ir);
	/* a note in the compile's diagnostics ("tilec: note: MSG") */
	void (*note)(tilec_ir *ir, const char *msg);
	/* version 2: the compile's output so far (after emit-cuda / emit-hip: the code;
	 * owned by the compile), and replacing it (0 ok, -1 on a NULL text or no memory) */
	const char *(*output)(tilec_ir *ir);
	int (*set_output)(tilec_ir *ir, const char *text);
	/* version 3: the lowered kernel IR as text (--dump=lowered; docs/cuda.md), NULL before
	 * lower-kernels has run; owned by the compile */
	const char *(*lowered)(tilec_ir *ir);
} tilec_ir_api;

/* A pass: TILEC_OK (0) on success; anything else fails the compile with msg (NUL-terminated). */
typedef int (*tilec_pass_fn)(tilec_ir *ir, const tilec_ir_api *api, void *arg, char *msg,
			     size_t msgsz);

/* one pass of a plugin */
typedef struct tilec_pass_info {
	const char *name;         /* unique in the pipeline: [a-z0-9_-]+ */
	const char *after;        /* insert after this pass; NULL: at the end */
	tilec_pass_fn run;
	void *arg;
} tilec_pass_info;

typedef struct tilec_plugin_info {
	int api_version;          /* TILEC_PLUGIN_API_VERSION */
	const char *name;
	int npasses;
	const tilec_pass_info *passes;
} tilec_plugin_info;

/* A plugin library exports this function (extern "C" in C++). */
typedef const tilec_plugin_info *(*tilec_plugin_get_info_fn)(void);
#define TILEC_PLUGIN_ENTRY "tilec_plugin_get_info"

/* The pass list a host hook sees before a compile (tilec_options.pass_hook). */
typedef struct tilec_pass_list tilec_pass_list;

/* the number of passes in the list */
int tilec_pass_count(const tilec_pass_list *l);
const char *tilec_pass_name(const tilec_pass_list *l, int i);  /* NULL when out of range */
int tilec_pass_find(const tilec_pass_list *l, const char *name); /* index, or -1 */
/* insert a pass before index (0..count): TILEC_OK, or TILEC_ERR_ARG on a bad index,
 * name or function, or a name already in the list */
tilec_status tilec_pass_insert(tilec_pass_list *l, int index, const char *name, tilec_pass_fn fn,
			       void *arg);
/* remove pass name: TILEC_OK, or TILEC_ERR_ARG when there is no such pass */
tilec_status tilec_pass_remove(tilec_pass_list *l, const char *name);
/* run fn (with arg) in place of pass name: TILEC_OK, or TILEC_ERR_ARG when there is
 * no such pass or fn is NULL */
tilec_status tilec_pass_replace(tilec_pass_list *l, const char *name, tilec_pass_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif
