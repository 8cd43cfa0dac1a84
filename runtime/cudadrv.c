/*
 * cudadrv.c: the CUDA driver API through dlopen of libcuda.so.1: primary
 * contexts, module load from cubin or PTX, function lookup, launch with a
 * typed argument list, dynamic shared memory, and a few memory helpers.
 * Without a driver every entry point reports "libcuda.so.1 not found".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef unsigned long long Dptr;

struct Cuda {
	char *key;
	void *h;
	int initst;  /* cuInit's result */
	void *ctx[64];
	int (*init)(unsigned);
	int (*devget)(int *, int);
	int (*devcount)(int *);
	int (*devattr)(int *, int, int);
	int (*ctxretain)(void **, int);
	int (*ctxset)(void *);
	int (*ctxsync)(void);
	int (*modload)(void **, const void *);
	int (*modunload)(void *);
	int (*modfunc)(void **, void *, const char *);
	int (*funcattr)(void *, int, int);
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	              void *, void **, void **);
	int (*errstr)(int, const char **);
	int (*memalloc)(Dptr *, size_t);
	int (*memfree)(Dptr);
	int (*htod)(Dptr, const void *, size_t);
	int (*dtoh)(void *, Dptr, size_t);
	/* optional (CUDA 12+ drivers): NULL when missing */
	int (*tmap)(void *, int, unsigned, void *, const unsigned long long *, const unsigned long long *,
	            const unsigned *, const unsigned *, int, int, int, int);
	/* for a persistent kernel's grid: NULL when missing (then one block per SM) */
	int (*occupancy)(int *, void *, int, size_t);
	int (*ctxdev)(int *);
};

static pthread_mutex_t libmu = PTHREAD_MUTEX_INITIALIZER;
static Cuda *libs[8];
static int nlibs;

enum {
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
	ATTR_SM_COUNT = 16,
	FUNC_MAX_DYN_SHMEM = 8,
};

static const char *
errname(Cuda *cu, int r)
{
	const char *s = NULL;

	if (cu->errstr && !cu->errstr(r, &s) && s)
		return s;
	return "unknown CUDA error";
}

static int
drverr(Cuda *cu, char **err, const char *what, int r)
{
	return rt_err(err, TILEC_ERR_DRIVER, "%s failed: %s (CUresult %d)", what, errname(cu, r), r);
}

int
cuda_open(const char *path, Cuda **out, char **err)
{
	static const struct { const char *name; size_t off; } syms[] = {
		{"cuInit", offsetof(Cuda, init)},
		{"cuDeviceGet", offsetof(Cuda, devget)},
		{"cuDeviceGetCount", offsetof(Cuda, devcount)},
		{"cuDeviceGetAttribute", offsetof(Cuda, devattr)},
		{"cuDevicePrimaryCtxRetain", offsetof(Cuda, ctxretain)},
		{"cuCtxSetCurrent", offsetof(Cuda, ctxset)},
		{"cuCtxSynchronize", offsetof(Cuda, ctxsync)},
		{"cuModuleLoadData", offsetof(Cuda, modload)},
		{"cuModuleUnload", offsetof(Cuda, modunload)},
		{"cuModuleGetFunction", offsetof(Cuda, modfunc)},
		{"cuFuncSetAttribute", offsetof(Cuda, funcattr)},
		{"cuLaunchKernel", offsetof(Cuda, launch)},
		{"cuGetErrorString", offsetof(Cuda, errstr)},
		{"cuMemAlloc_v2", offsetof(Cuda, memalloc)},
		{"cuMemFree_v2", offsetof(Cuda, memfree)},
		{"cuMemcpyHtoD_v2", offsetof(Cuda, htod)},
		{"cuMemcpyDtoH_v2", offsetof(Cuda, dtoh)},
	};
	const char *p = path ? path : "libcuda.so.1";
	Cuda *cu;
	size_t i;
	int st = TILEC_OK;

	*out = NULL;
	pthread_mutex_lock(&libmu);
	for (i = 0; i < (size_t)nlibs; i++)
		if (!strcmp(libs[i]->key, p)) {
			cu = libs[i];
			goto found;
		}
	if (nlibs == (int)countof(libs)) {
		pthread_mutex_unlock(&libmu);
		return rt_err(err, TILEC_ERR_NOLIB, "too many libcuda paths");
	}
	cu = calloc(1, sizeof *cu);
	if (!cu || !(cu->key = rt_strdup(p))) {
		free(cu);
		pthread_mutex_unlock(&libmu);
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	}
	cu->h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
	if (!cu->h) {
		const char *e = dlerror();

		st = rt_err(err, TILEC_ERR_NOLIB, "%s not found (no NVIDIA driver): %s", p,
		            e ? e : "dlopen failed");
		goto fail;
	}
	for (i = 0; i < countof(syms); i++) {
		void *f = dlsym(cu->h, syms[i].name);

		if (!f) {
			st = rt_err(err, TILEC_ERR_NOLIB, "%s: symbol %s missing (driver too old?)", p,
			            syms[i].name);
			dlclose(cu->h);
			goto fail;
		}
		memcpy((char *)cu + syms[i].off, &f, sizeof f);
	}
	*(void **)&cu->tmap = dlsym(cu->h, "cuTensorMapEncodeTiled");
	*(void **)&cu->occupancy = dlsym(cu->h, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
	*(void **)&cu->ctxdev = dlsym(cu->h, "cuCtxGetDevice");
	cu->initst = cu->init(0);
	libs[nlibs++] = cu;
found:
	pthread_mutex_unlock(&libmu);
	if (cu->initst)
		return drverr(cu, err, "cuInit", cu->initst);
	*out = cu;
	return TILEC_OK;
fail:
	free(cu->key);
	free(cu);
	pthread_mutex_unlock(&libmu);
	return st;
}

int
cuda_ctx(Cuda *cu, int device, void **ctx, char **err)
{
	int r, n = 0, dev;

	if (device < 0 || device >= (int)countof(cu->ctx))
		return rt_err(err, TILEC_ERR_ARG, "bad CUDA device ordinal %d", device);
	pthread_mutex_lock(&libmu);
	if (!cu->ctx[device]) {
		if ((r = cu->devcount(&n)) || device >= n) {
			pthread_mutex_unlock(&libmu);
			if (r)
				return drverr(cu, err, "cuDeviceGetCount", r);
			return rt_err(err, TILEC_ERR_ARG, "CUDA device %d does not exist (%d devices)",
			              device, n);
		}
		if ((r = cu->devget(&dev, device)) || (r = cu->ctxretain(&cu->ctx[device], dev))) {
			pthread_mutex_unlock(&libmu);
			return drverr(cu, err, "cuDevicePrimaryCtxRetain", r);
		}
	}
	*ctx = cu->ctx[device];
	pthread_mutex_unlock(&libmu);
	if ((r = cu->ctxset(*ctx)))
		return drverr(cu, err, "cuCtxSetCurrent", r);
	return TILEC_OK;
}

int
cuda_arch(Cuda *cu, int device, char *buf, size_t n, char **err)
{
	int r, dev, maj = 0, min = 0;

	if ((r = cu->devget(&dev, device)))
		return drverr(cu, err, "cuDeviceGet", r);
	if ((r = cu->devattr(&maj, ATTR_CC_MAJOR, dev)) || (r = cu->devattr(&min, ATTR_CC_MINOR, dev)))
		return drverr(cu, err, "cuDeviceGetAttribute", r);
	snprintf(buf, n, "sm_%d%d%s", maj, min, maj == 9 ? "a" : "");
	return TILEC_OK;
}

int
cuda_load(Cuda *cu, void *ctx, const Blobs *b, void **mod, char **err)
{
	int r;

	if ((r = cu->ctxset(ctx)))
		return drverr(cu, err, "cuCtxSetCurrent", r);
	if ((r = cu->modload(mod, b->p[BLOB_BIN])))
		return drverr(cu, err, "cuModuleLoadData", r);
	return TILEC_OK;
}

void
cuda_unload(Cuda *cu, void *ctx, void *mod)
{
	if (!cu->ctxset(ctx))
		cu->modunload(mod);
}

int
cuda_function(Cuda *cu, void *ctx, void *mod, const char *name, void **fn, char **err)
{
	int r;

	if ((r = cu->ctxset(ctx)))
		return drverr(cu, err, "cuCtxSetCurrent", r);
	r = cu->modfunc(fn, mod, name);
	if (r == 500) /* CUDA_ERROR_NOT_FOUND */
		return rt_err(err, TILEC_ERR_NOTFOUND, "no kernel named '%s' in the module", name);
	if (r)
		return drverr(cu, err, "cuModuleGetFunction", r);
	return TILEC_OK;
}

int
cuda_launch(Cuda *cu, void *ctx, void *fn, const unsigned grid[3], const unsigned block[3],
            unsigned shmem, void *stream, const tilec_arg *args, int nargs, const TmaReq *maps, int nmaps,
            char **err)
{
	/* CUtensorMap: 128 bytes, 64-byte aligned */
	static _Thread_local struct { _Alignas(64) unsigned char b[128]; } tm[16];
	void *params[64 + 16];
	int i, r;

	if (nargs < 0 || nargs > 64 || (nargs && !args) || nmaps < 0 || nmaps > 16)
		return rt_err(err, TILEC_ERR_ARG, "bad argument list (%d arguments)", nargs);
	for (i = 0; i < nargs; i++) {
		if (args[i].kind < TILEC_ARG_PTR || args[i].kind > TILEC_ARG_F16)
			return rt_err(err, TILEC_ERR_ARG, "argument %d has bad kind %d", i, args[i].kind);
		params[i] = (void *)&args[i].v;
	}
	if (nmaps && !cu->tmap)
		return rt_err(err, TILEC_ERR_DRIVER, "the kernel loads with TMA: the driver has no cuTensorMapEncodeTiled "
		              "(CUDA 12 or later)");
	for (i = 0; i < nmaps; i++) {
		const TmaReq *m = &maps[i];
		unsigned long long st[2] = {m->stride[0], m->stride[1]};
		unsigned es[3] = {1, 1, 1};
		/* CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32/64 = 0, 1, 2, 4; swizzle NONE, 32B, 64B, 128B = 0..3;
		 * interleave none 0, L2 promotion 256B 3, zero fill 0 */
		int dt = m->esize == 1 ? 0 : m->esize == 2 ? 1 : m->esize == 4 ? 2 : 4;
		int sw = m->swizzle == 128 ? 3 : m->swizzle == 64 ? 2 : m->swizzle == 32 ? 1 : 0;

		memset(tm[i].b, 0, sizeof tm[i].b);
		if (m->stride[0] % 16 == 0 && m->dim[0] && m->dim[1] && (m->rank == 2 || m->dim[2]) &&
		    (r = cu->tmap(tm[i].b, dt, (unsigned)m->rank, m->base, m->dim, st, m->box, es, 0, sw, 3, 0)))
			return drverr(cu, err, "cuTensorMapEncodeTiled", r);
		params[nargs + i] = tm[i].b;
	}
	nargs += nmaps;
	if ((r = cu->ctxset(ctx)))
		return drverr(cu, err, "cuCtxSetCurrent", r);
	if (shmem > 48 * 1024 && (r = cu->funcattr(fn, FUNC_MAX_DYN_SHMEM, (int)shmem)))
		return drverr(cu, err, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r);
	r = cu->launch(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shmem, stream,
	               nargs ? params : NULL, NULL);
	if (r)
		return drverr(cu, err, "cuLaunchKernel", r);
	return TILEC_OK;
}

int
cuda_persistent_grid(Cuda *cu, void *ctx, void *fn, const unsigned block[3], unsigned shmem, unsigned grid[3],
                     char **err)
{
	int r, dev = 0, sms = 0, nb = 0;
	unsigned long long tiles = (unsigned long long)grid[0] * grid[1], cap;

	if ((r = cu->ctxset(ctx)))
		return drverr(cu, err, "cuCtxSetCurrent", r);
	if (!cu->ctxdev || (r = cu->ctxdev(&dev)))
		return rt_err(err, TILEC_ERR_DRIVER, "a persistent kernel: cuCtxGetDevice failed");
	if ((r = cu->devattr(&sms, ATTR_SM_COUNT, dev)) || sms < 1)
		return drverr(cu, err, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", r);
	/* the blocks that fit on an SM with this block and its dynamic shared memory (the
	 * function's limit raised first, as the launch does) */
	if (shmem > 48 * 1024 && (r = cu->funcattr(fn, FUNC_MAX_DYN_SHMEM, (int)shmem)))
		return drverr(cu, err, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r);
	if (!cu->occupancy || cu->occupancy(&nb, fn, (int)(block[0] * block[1] * block[2]), shmem) || nb < 1)
		nb = 1;
	cap = (unsigned long long)sms * (unsigned)nb;
	grid[0] = (unsigned)(tiles < cap ? tiles : cap);
	grid[1] = 1;
	return TILEC_OK;
}

int
cuda_mem(Cuda *cu, void *ctx, int op, void *a, const void *b, size_t n, char **err)
{
	Dptr d = 0;
	int r;

	if ((r = cu->ctxset(ctx)))
		return drverr(cu, err, "cuCtxSetCurrent", r);
	switch (op) {
	case MEM_ALLOC:
		if ((r = cu->memalloc(&d, n)))
			return drverr(cu, err, "cuMemAlloc", r);
		*(void **)a = (void *)(uintptr_t)d;
		return TILEC_OK;
	case MEM_FREE:
		if ((r = cu->memfree((Dptr)(uintptr_t)a)))
			return drverr(cu, err, "cuMemFree", r);
		return TILEC_OK;
	case MEM_HTOD:
		if ((r = cu->htod((Dptr)(uintptr_t)a, b, n)))
			return drverr(cu, err, "cuMemcpyHtoD", r);
		return TILEC_OK;
	case MEM_DTOH:
		if ((r = cu->dtoh(a, (Dptr)(uintptr_t)b, n)))
			return drverr(cu, err, "cuMemcpyDtoH", r);
		return TILEC_OK;
	case MEM_SYNC:
		if ((r = cu->ctxsync()))
			return drverr(cu, err, "cuCtxSynchronize", r);
		return TILEC_OK;
	}
	return rt_err(err, TILEC_ERR_ARG, "bad memory operation");
}
