/*
 * hiprtc.c: hipRTC (libamdhip64, ROCm 5.2) run in forked child processes.
 * A probe child reports hiprtcVersion and the ISAs the code object manager
 * knows; a compile child compiles one program and sends the code object and
 * log back through a pipe. hipRTC 5.2 crashes on unknown ISAs (gfx942,
 * gfx1100): the parent checks the arch first and survives a crash anyway.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

/* comgr 2.4 (ROCm 5.2); used when libamd_comgr cannot be asked */
static const char builtin_isas[] =
	"gfx600 gfx601 gfx602 gfx700 gfx701 gfx702 gfx703 gfx704 gfx705 gfx801 gfx802 gfx803 "
	"gfx805 gfx810 gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx1010 gfx1011 "
	"gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036";

enum { REC_STATUS = 'S', REC_VERSION = 'V', REC_ISAS = 'I', REC_LOG = 'L', REC_CODE = 'C',
       REC_MSG = 'M' };

/* ---- the child side ------------------------------------------------------------------ */

static void
emit(int fd, int tag, const void *p, size_t n)
{
	unsigned char h[9];
	const unsigned char *q = p;
	int i;

	h[0] = (unsigned char)tag;
	for (i = 0; i < 8; i++)
		h[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
	for (i = 0; i < 2; i++) {
		const unsigned char *s = i ? q : h;
		size_t k = i ? n : 9;

		while (k) {
			ssize_t w = write(fd, s, k);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				_exit(3);
			s += w, k -= (size_t)w;
		}
	}
}

static void
sendstr(int fd, int tag, const char *s)
{
	emit(fd, tag, s, strlen(s));
}

static void
sendstatus(int fd, int st)
{
	char b[16];

	snprintf(b, sizeof b, "%d", st);
	sendstr(fd, REC_STATUS, b);
}

static void *
openhip(int fd, const char *path)
{
	static const char *const defs[] = {"libamdhip64.so.5", "libamdhip64.so"};
	char msg[1024];
	const char *e = NULL;
	void *h = NULL;
	size_t i;

	for (i = 0; i < (path ? 1 : countof(defs)) && !h; i++)
		if (!(h = dlopen(path ? path : defs[i], RTLD_NOW | RTLD_LOCAL)))
			e = dlerror();
	if (!h) {
		snprintf(msg, sizeof msg,
		         "%s not found (install libamdhip64-dev or set TILEC_HIP_PATH): %s",
		         path ? path : "libamdhip64.so.5", e ? e : "dlopen failed");
		sendstr(fd, REC_MSG, msg);
		sendstatus(fd, TILEC_ERR_NOLIB);
		_exit(0);
	}
	return h;
}

static void *
sym(int fd, void *h, const char *name)
{
	void *f = dlsym(h, name);
	char msg[256];

	if (!f) {
		snprintf(msg, sizeof msg, "libamdhip64: symbol %s missing", name);
		sendstr(fd, REC_MSG, msg);
		sendstatus(fd, TILEC_ERR_NOLIB);
		_exit(0);
	}
	return f;
}

typedef struct Job {
	const char *path, *src, *arch;
	const char *const *opts;
	int nopts;
	const tilec_header *hdrs;
	int nhdrs;
} Job;

static void
probe_child(int fd, const Job *job)
{
	int (*version)(int *, int *);
	int (*count)(size_t *);
	int (*name)(size_t, const char **);
	void *h = openhip(fd, job->path), *cg;
	char v[32], *isas;
	int maj = 0, min = 0;
	size_t n = 0, i, len = 0;

	*(void **)&version = sym(fd, h, "hiprtcVersion");
	if (version(&maj, &min)) {
		sendstr(fd, REC_MSG, "hiprtcVersion failed");
		sendstatus(fd, TILEC_ERR_NOLIB);
		return;
	}
	snprintf(v, sizeof v, "%d.%d", maj, min);
	sendstr(fd, REC_VERSION, v);
	cg = dlopen("libamd_comgr.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!cg)
		cg = dlopen("libamd_comgr.so", RTLD_NOW | RTLD_LOCAL);
	*(void **)&count = cg ? dlsym(cg, "amd_comgr_get_isa_count") : NULL;
	*(void **)&name = cg ? dlsym(cg, "amd_comgr_get_isa_name") : NULL;
	if (!count || !name || count(&n) || n == 0 || n > 4096) {
		sendstr(fd, REC_ISAS, builtin_isas);
		sendstatus(fd, TILEC_OK);
		return;
	}
	isas = malloc(n * 64 + 1);
	if (!isas)
		_exit(4);
	isas[0] = 0;
	for (i = 0; i < n; i++) {
		const char *s = NULL, *p;

		if (name(i, &s) || !s)
			continue;
		p = strstr(s, "--"); /* amdgcn-amd-amdhsa--gfx90a */
		p = p ? p + 2 : s;
		len += (size_t)snprintf(isas + len, 64, "%s%.60s", len ? " " : "", p);
	}
	sendstr(fd, REC_ISAS, isas);
	sendstatus(fd, TILEC_OK);
}

static void
compile_child(int fd, const Job *job)
{
	int (*create)(void **, const char *, const char *, int, const char **, const char **);
	int (*compile)(void *, int, const char **);
	int (*logsize)(void *, size_t *), (*getlog)(void *, char *);
	int (*codesize)(void *, size_t *), (*getcode)(void *, char *);
	const char *(*errstr)(int);
	void *h = openhip(fd, job->path), *prog = NULL;
	const char **argv, **hnames, **hsrcs;
	char archopt[128], msg[512], *buf;
	size_t n = 0;
	int i, r;

	*(void **)&create = sym(fd, h, "hiprtcCreateProgram");
	*(void **)&compile = sym(fd, h, "hiprtcCompileProgram");
	*(void **)&logsize = sym(fd, h, "hiprtcGetProgramLogSize");
	*(void **)&getlog = sym(fd, h, "hiprtcGetProgramLog");
	*(void **)&codesize = sym(fd, h, "hiprtcGetCodeSize");
	*(void **)&getcode = sym(fd, h, "hiprtcGetCode");
	*(void **)&errstr = sym(fd, h, "hiprtcGetErrorString");
	argv = calloc((size_t)job->nopts + 1, sizeof *argv);
	if (!argv)
		_exit(4);
	snprintf(archopt, sizeof archopt, "--offload-arch=%s", job->arch);
	argv[0] = archopt;
	for (i = 0; i < job->nopts; i++)
		argv[i + 1] = job->opts[i];
	if (headers_split(job->hdrs, job->nhdrs, &hnames, &hsrcs))
		_exit(4);
	if ((r = create(&prog, job->src, "tilec_kernel.hip", job->nhdrs, hsrcs, hnames))) {
		snprintf(msg, sizeof msg, "hiprtcCreateProgram: %s", errstr(r));
		sendstr(fd, REC_MSG, msg);
		sendstatus(fd, TILEC_ERR_NOMEM);
		return;
	}
	r = compile(prog, job->nopts + 1, argv);
	if (!logsize(prog, &n) && n && (buf = malloc(n + 1)) && !getlog(prog, buf)) {
		buf[n] = 0;
		sendstr(fd, REC_LOG, buf);
	}
	if (r) {
		snprintf(msg, sizeof msg, "hipRTC compilation for %s failed (%s)", job->arch,
		         errstr(r));
		sendstr(fd, REC_MSG, msg);
		sendstatus(fd, TILEC_ERR_COMPILE);
		return;
	}
	n = 0;
	if (codesize(prog, &n) || !n || !(buf = malloc(n)) || getcode(prog, buf)) {
		sendstr(fd, REC_MSG, "hiprtcGetCode gave no code object");
		sendstatus(fd, TILEC_ERR_COMPILE);
		return;
	}
	emit(fd, REC_CODE, buf, n);
	sendstatus(fd, TILEC_OK);
}

/* ---- the parent side ---------------------------------------------------------------- */

typedef struct Rec {
	int tag;
	unsigned char *p;
	size_t n;
} Rec;

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
closefrom4(void)
{
	long max, fd;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 4u, ~0u, 0u) == 0)
		return;
#endif
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 4; fd < max; fd++)
		close((int)fd);
}

/*
 * Fork, run fn in the child with the write end of a pipe, collect what it
 * sends. Returns TILEC_OK with the raw bytes in *data, or TILEC_ERR_CRASH.
 */
static int
run_child(void (*fn)(int, const Job *), const Job *job, int timeout_ms, unsigned char **data,
          size_t *len, char **err)
{
	int pfd[2], status = 0, timedout = 0, devnull;
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	long deadline = now_ms() + timeout_ms;
	pid_t pid;

	*data = NULL;
	*len = 0;
	if (pipe(pfd))
		return rt_err(err, TILEC_ERR_IO, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return rt_err(err, TILEC_ERR_IO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* crash as a signal the parent can see, not through a sanitizer's handler */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		signal(SIGFPE, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		/* keep only the answer pipe (as fd 3): pipes of other threads' children
		 * must not stay open here, or their readers would wait for this child */
		if (pfd[1] != 3 && dup2(pfd[1], 3) < 0)
			_exit(5);
		if ((devnull = open("/dev/null", O_RDWR)) >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		closefrom4();
		fn(3, job);
		_exit(0);
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	for (;;) {
		struct pollfd p = {pfd[0], POLLIN, 0};
		long left = deadline - now_ms();
		ssize_t k;
		int pr;

		if (left <= 0) {
			timedout = 1;
			break;
		}
		pr = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			break;
		if (pr == 0)
			continue;
		if (cap - n < 65536) {
			unsigned char *t = realloc(buf, cap = cap * 2 + 65536);

			if (!t)
				break;
			buf = t;
		}
		k = read(pfd[0], buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(pfd[0]);
	if (timedout)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timedout) {
		free(buf);
		return rt_err(err, TILEC_ERR_CRASH, "hipRTC did not finish within %d ms; its child "
		              "process was killed", timeout_ms);
	}
	if (WIFSIGNALED(status)) {
		free(buf);
		return rt_err(err, TILEC_ERR_CRASH, "hipRTC crashed in its child process (signal %d, "
		              "%s); the calling process is unaffected", WTERMSIG(status),
		              strsignal(WTERMSIG(status)));
	}
	*data = buf;
	*len = n;
	return TILEC_OK;
}

/* split the byte stream into records; the last one must be a status */
static int
parse(unsigned char *d, size_t n, Rec *recs, int max, int *nrec)
{
	size_t off = 0;
	int k = 0, i;

	while (off < n) {
		uint64_t len = 0;

		if (n - off < 9 || k == max)
			return -1;
		for (i = 7; i >= 0; i--)
			len = len << 8 | d[off + 1 + i];
		if (len > n - off - 9)
			return -1;
		recs[k].tag = d[off];
		recs[k].p = d + off + 9;
		recs[k].n = (size_t)len;
		k++;
		off += 9 + (size_t)len;
	}
	*nrec = k;
	return k && recs[k - 1].tag == REC_STATUS ? 0 : -1;
}

static char *
recstr(const Rec *r)
{
	char *s = malloc(r->n + 1);

	if (s) {
		memcpy(s, r->p, r->n);
		s[r->n] = 0;
	}
	return s;
}

/* run a child and decode: status, message, and the records for the caller */
static int
talk(void (*fn)(int, const Job *), const Job *job, int timeout_ms, Rec *recs, int *nrec,
     unsigned char **data, char **err)
{
	size_t n;
	char *s;
	int r, st, i;

	if ((r = run_child(fn, job, timeout_ms, data, &n, err)))
		return r;
	if (parse(*data, n, recs, 16, nrec)) {
		free(*data);
		*data = NULL;
		return rt_err(err, TILEC_ERR_CRASH, "hipRTC child process ended without an answer");
	}
	s = recstr(&recs[*nrec - 1]);
	st = s ? atoi(s) : TILEC_ERR_NOMEM;
	free(s);
	if (st) {
		for (i = 0; i < *nrec; i++)
			if (recs[i].tag == REC_MSG)
				break;
		s = i < *nrec ? recstr(&recs[i]) : NULL;
		rt_err(err, st, "%s", s ? s : "hipRTC failed");
		free(s);
	}
	return st;
}

void
hip_info_free(HipInfo *h)
{
	free(h->isas);
	memset(h, 0, sizeof *h);
}

int
hip_probe(const char *path, int timeout_ms, HipInfo *out, char **err)
{
	Job job = {path, NULL, NULL, NULL, 0, NULL, 0};
	Rec recs[16];
	unsigned char *data = NULL;
	int nrec = 0, r, i;

	memset(out, 0, sizeof *out);
	r = talk(probe_child, &job, timeout_ms, recs, &nrec, &data, err);
	if (r) {
		free(data);
		return r;
	}
	for (i = 0; i < nrec; i++) {
		char *s = recs[i].tag == REC_VERSION || recs[i].tag == REC_ISAS ? recstr(&recs[i]) : NULL;

		if (recs[i].tag == REC_VERSION && s)
			sscanf(s, "%d.%d", &out->major, &out->minor);
		if (recs[i].tag == REC_ISAS && s) {
			free(out->isas);
			out->isas = s;
			s = NULL;
		}
		free(s);
	}
	free(data);
	if (!out->isas && !(out->isas = rt_strdup(builtin_isas)))
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	out->ok = 1;
	return TILEC_OK;
}

/* gfxNNN[N] with hex digits, then target-ID features such as :sramecc+:xnack- */
int
arch_hip_valid(const char *arch)
{
	const char *p;
	int nd = 0;

	if (!arch || strncmp(arch, "gfx", 3))
		return 0;
	for (p = arch + 3; isdigit((unsigned char)*p) || (*p >= 'a' && *p <= 'f'); p++)
		nd++;
	if (nd < 3 || nd > 4)
		return 0;
	while (*p == ':') {
		int nl = 0;

		for (p++; *p >= 'a' && *p <= 'z'; p++)
			nl++;
		if (!nl || (*p != '+' && *p != '-'))
			return 0;
		p++;
	}
	return *p == 0;
}

int
hip_arch_known(const HipInfo *h, const char *arch)
{
	const char *e = strchr(arch, ':'), *p;
	size_t n = e ? (size_t)(e - arch) : strlen(arch);

	if (!h->isas)
		return 0;
	for (p = h->isas; (p = strstr(p, "gfx")); p += 3)
		if ((p == h->isas || p[-1] == ' ') && !strncmp(p, arch, n) &&
		    (p[n] == ' ' || p[n] == 0))
			return 1;
	return 0;
}

int
hip_compile(const char *path, int timeout_ms, const char *src, const char *arch,
            const char *const *opts, int nopts, const tilec_header *hdrs, int nhdrs, Blobs *out,
            char **err)
{
	Job job = {path, src, arch, opts, nopts, hdrs, nhdrs};
	Rec recs[16];
	unsigned char *data = NULL;
	int nrec = 0, r, i;

	memset(out, 0, sizeof *out);
	if (!src || !arch_hip_valid(arch) || nopts < 0 || (nopts && !opts) || nhdrs < 0 ||
	    (nhdrs && !hdrs))
		return rt_err(err, TILEC_ERR_ARG, "hip_compile: bad arguments");
	r = talk(compile_child, &job, timeout_ms, recs, &nrec, &data, err);
	if (data)
		for (i = 0; i < nrec; i++) {
			if (recs[i].tag == REC_LOG && blobs_set(out, BLOB_LOG, recs[i].p, recs[i].n))
				r = TILEC_ERR_NOMEM;
			if (recs[i].tag == REC_CODE && !r &&
			    blobs_set(out, BLOB_BIN, recs[i].p, recs[i].n))
				r = TILEC_ERR_NOMEM;
		}
	free(data);
	if (r == TILEC_OK) {
		if (!out->n[BLOB_BIN])
			r = rt_err(err, TILEC_ERR_COMPILE, "hipRTC gave no code object for %s", arch);
		out->binkind = TILEC_BIN_HSACO;
	}
	if (r != TILEC_OK && r != TILEC_ERR_COMPILE)
		blobs_free(out);
	return r;
}
