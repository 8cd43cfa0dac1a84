/*
 * nvrtc.c: NVRTC through dlopen. Finds libnvrtc (libnvrtc.so.13,
 * libnvrtc.so, /usr/local/cuda/lib64/libnvrtc.so.13, or an explicit path),
 * resolves the few entry points by name (no CUDA headers needed) and
 * compiles CUDA C to PTX and, for sm_* targets, to a cubin, keeping the log.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef int (*VersionFn)(int *, int *);
typedef int (*CreateFn)(void **, const char *, const char *, int, const char *const *,
                        const char *const *);
typedef int (*CompileFn)(void *, int, const char *const *);
typedef int (*DestroyFn)(void **);
typedef int (*SizeFn)(void *, size_t *);
typedef int (*GetFn)(void *, char *);
typedef const char *(*ErrStrFn)(int);

struct Nvrtc {
	char *key;   /* the path asked for; "" for the default search */
	void *h;
	int major, minor;
	VersionFn version;
	CreateFn create;
	CompileFn compile;
	DestroyFn destroy;
	SizeFn ptxsize, cubinsize, logsize;
	GetFn ptx, cubin, log;
	ErrStrFn errstr;
};

/* every library loaded stays loaded (NVRTC does not like dlclose) */
static pthread_mutex_t libmu = PTHREAD_MUTEX_INITIALIZER;
static Nvrtc *libs[8];
static int nlibs;

static const char *const defpaths[] = {
	"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13",
};

static int
resolve(Nvrtc *nv, char **err, const char *path)
{
	static const struct { const char *name; size_t off; } syms[] = {
		{"nvrtcVersion", offsetof(Nvrtc, version)},
		{"nvrtcCreateProgram", offsetof(Nvrtc, create)},
		{"nvrtcCompileProgram", offsetof(Nvrtc, compile)},
		{"nvrtcDestroyProgram", offsetof(Nvrtc, destroy)},
		{"nvrtcGetPTXSize", offsetof(Nvrtc, ptxsize)},
		{"nvrtcGetPTX", offsetof(Nvrtc, ptx)},
		{"nvrtcGetCUBINSize", offsetof(Nvrtc, cubinsize)},
		{"nvrtcGetCUBIN", offsetof(Nvrtc, cubin)},
		{"nvrtcGetProgramLogSize", offsetof(Nvrtc, logsize)},
		{"nvrtcGetProgramLog", offsetof(Nvrtc, log)},
		{"nvrtcGetErrorString", offsetof(Nvrtc, errstr)},
	};
	size_t i;

	for (i = 0; i < countof(syms); i++) {
		void *f = dlsym(nv->h, syms[i].name);

		if (!f)
			return rt_err(err, TILEC_ERR_NOLIB, "%s: symbol %s missing (NVRTC too old?)",
			              path, syms[i].name);
		memcpy((char *)nv + syms[i].off, &f, sizeof f);
	}
	if (nv->version(&nv->major, &nv->minor))
		return rt_err(err, TILEC_ERR_NOLIB, "%s: nvrtcVersion failed", path);
	return TILEC_OK;
}

int
nvrtc_open(const char *path, Nvrtc **out, char **err)
{
	const char *key = path ? path : "";
	char tried[1024] = "";
	Nvrtc *nv = NULL;
	size_t i;
	int r = TILEC_OK;

	*out = NULL;
	pthread_mutex_lock(&libmu);
	for (i = 0; i < (size_t)nlibs; i++)
		if (!strcmp(libs[i]->key, key)) {
			*out = libs[i];
			pthread_mutex_unlock(&libmu);
			return TILEC_OK;
		}
	if (nlibs == (int)countof(libs)) {
		pthread_mutex_unlock(&libmu);
		return rt_err(err, TILEC_ERR_NOLIB, "too many NVRTC library paths");
	}
	nv = calloc(1, sizeof *nv);
	if (!nv || !(nv->key = rt_strdup(key))) {
		free(nv);
		pthread_mutex_unlock(&libmu);
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < (path ? 1 : countof(defpaths)) && !nv->h; i++) {
		const char *p = path ? path : defpaths[i];
		const char *e;

		nv->h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
		if (!nv->h && (e = dlerror()) && strlen(tried) < 512)
			snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s",
			         *tried ? "; " : "", e);
		if (nv->h)
			r = resolve(nv, err, p);
	}
	if (!nv->h) {
		free(nv->key);
		free(nv);
		pthread_mutex_unlock(&libmu);
		return rt_err(err, TILEC_ERR_NOLIB,
		              "NVRTC not found (install the CUDA toolkit or set TILEC_NVRTC_PATH): %s",
		              tried);
	}
	if (r) {
		dlclose(nv->h);
		free(nv->key);
		free(nv);
		pthread_mutex_unlock(&libmu);
		return r;
	}
	libs[nlibs++] = nv;
	*out = nv;
	pthread_mutex_unlock(&libmu);
	return TILEC_OK;
}

void
nvrtc_version(const Nvrtc *nv, int *major, int *minor)
{
	*major = nv->major;
	*minor = nv->minor;
}

/* sm_NN, sm_NNN, with an optional a or f suffix; compute_ likewise */
int
arch_cuda_valid(const char *arch)
{
	const char *p;
	int nd = 0;

	if (!arch)
		return 0;
	if (!strncmp(arch, "sm_", 3))
		p = arch + 3;
	else if (!strncmp(arch, "compute_", 8))
		p = arch + 8;
	else
		return 0;
	if (*p == '0')
		return 0;
	while (isdigit((unsigned char)*p))
		p++, nd++;
	if (nd < 2 || nd > 3)
		return 0;
	if (*p == 'a' || *p == 'f')
		p++;
	return *p == 0;
}

/* the first line of the log that mentions an error, for the message */
static void
first_error(const char *log, char *buf, size_t n)
{
	const char *p = log ? strstr(log, "error") : NULL;
	const char *s, *e;

	buf[0] = 0;
	if (!p)
		return;
	for (s = p; s > log && s[-1] != '\n'; s--)
		;
	e = strchr(s, '\n');
	if (!e)
		e = s + strlen(s);
	snprintf(buf, n, ": %.*s", (int)(e - s), s);
}

static int
getblob(const Nvrtc *nv, void *prog, SizeFn size, GetFn get, Blobs *b, int i)
{
	size_t n = 0;
	char *p;
	int r;

	if (size(prog, &n))
		return -1;
	p = malloc(n + 1);
	if (!p)
		return -1;
	if (n && get(prog, p)) {
		free(p);
		return -1;
	}
	p[n] = 0;
	while (i != BLOB_BIN && n && p[n - 1] == 0) /* text blobs: drop the NUL */
		n--;
	r = blobs_set(b, i, p, n);
	free(p);
	(void)nv;
	return r;
}

int
nvrtc_compile(const Nvrtc *nv, const char *src, const char *arch, const char *const *opts,
              int nopts, const tilec_header *hdrs, int nhdrs, Blobs *out, char **err)
{
	const char **argv, **hnames, **hsrcs;
	char archopt[64], first[300];
	void *prog = NULL;
	int i, r, st = TILEC_OK;

	memset(out, 0, sizeof *out);
	if (!src || !arch_cuda_valid(arch) || nopts < 0 || (nopts && !opts))
		return rt_err(err, TILEC_ERR_ARG, "nvrtc_compile: bad arguments");
	argv = calloc((size_t)nopts + 1, sizeof *argv);
	if (!argv)
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
	argv[0] = archopt;
	for (i = 0; i < nopts; i++)
		argv[i + 1] = opts[i];
	if (headers_split(hdrs, nhdrs, &hnames, &hsrcs)) {
		free(argv);
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	}
	r = nv->create(&prog, src, "tilec_kernel.cu", nhdrs, hsrcs, hnames);
	free(hnames);
	free(hsrcs);
	if (r) {
		free(argv);
		return rt_err(err, TILEC_ERR_NOMEM, "nvrtcCreateProgram: %s", nv->errstr(r));
	}
	r = nv->compile(prog, nopts + 1, argv);
	free(argv);
	if (getblob(nv, prog, nv->logsize, nv->log, out, BLOB_LOG)) {
		st = rt_err(err, TILEC_ERR_NOMEM, "nvrtcGetProgramLog failed");
		goto done;
	}
	if (r) {
		first_error((const char *)out->p[BLOB_LOG], first, sizeof first);
		st = rt_err(err, TILEC_ERR_COMPILE, "NVRTC compilation for %s failed (%s)%s", arch,
		            nv->errstr(r), first);
		goto done;
	}
	if (getblob(nv, prog, nv->ptxsize, nv->ptx, out, BLOB_PTX)) {
		st = rt_err(err, TILEC_ERR_NOMEM, "nvrtcGetPTX failed");
		goto done;
	}
	if (!strncmp(arch, "sm_", 3)) {
		if (getblob(nv, prog, nv->cubinsize, nv->cubin, out, BLOB_BIN) || !out->n[BLOB_BIN]) {
			st = rt_err(err, TILEC_ERR_COMPILE, "nvrtcGetCUBIN gave no cubin for %s", arch);
			goto done;
		}
		out->binkind = TILEC_BIN_CUBIN;
	} else {
		if (blobs_set(out, BLOB_BIN, out->p[BLOB_PTX], out->n[BLOB_PTX] + 1)) {
			st = rt_err(err, TILEC_ERR_NOMEM, "out of memory");
			goto done;
		}
		out->binkind = TILEC_BIN_PTX;
	}
done:
	nv->destroy(&prog);
	if (st && st != TILEC_ERR_COMPILE)
		blobs_free(out);
	if (st == TILEC_ERR_COMPILE) {
		free(out->p[BLOB_BIN]), out->p[BLOB_BIN] = NULL, out->n[BLOB_BIN] = 0;
		free(out->p[BLOB_PTX]), out->p[BLOB_PTX] = NULL, out->n[BLOB_PTX] = 0;
	}
	return st;
}
