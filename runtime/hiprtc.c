/*
 * hiprtc.c: hipRTC (libamdhip64, ROCm 5.2) kept out of the calling process.
 * A server child (forked once per jit) reports hiprtcVersion and the ISAs the
 * code object manager knows, then forks a monitor + compiler per request; the
 * code object and log come back through a pipe. hipRTC 5.2 crashes on unknown
 * ISAs (gfx942, gfx1100): the parent checks the arch first and survives a
 * crash anyway. Without the server, each compile forks its own child.
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
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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
       REC_MSG = 'M', REC_EXIT = 'X', REC_PGID = 'P' };

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

static int
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
		return TILEC_ERR_NOLIB;
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
		return TILEC_OK;
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
	free(isas);
	sendstatus(fd, TILEC_OK);
	return TILEC_OK;
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

/* ---- records and byte streams (both sides) ---------------------------------------------- */

typedef struct Rec {
	int tag;
	unsigned char *p;
	size_t n;
} Rec;

typedef struct Stream {
	unsigned char *p;
	size_t n, cap;
} Stream;

static int
stream_put(Stream *s, const void *p, size_t n)
{
	if (s->cap - s->n < n) {
		size_t cap = s->cap * 2 + n + 4096;
		unsigned char *t = realloc(s->p, cap);

		if (!t)
			return -1;
		s->p = t, s->cap = cap;
	}
	memcpy(s->p + s->n, p, n);
	s->n += n;
	return 0;
}

static int
stream_str(Stream *s, const char *str)
{
	unsigned char len[8];
	uint64_t n = strlen(str) + 1; /* with its NUL */
	int i;

	for (i = 0; i < 8; i++)
		len[i] = (unsigned char)(n >> (8 * i));
	return stream_put(s, len, 8) || stream_put(s, str, (size_t)n);
}

static uint64_t
get64le(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * Split bytes into records. 0: all complete; 1: the last one is still
 * incomplete (more to read); -1: malformed or too many.
 */
static int
parse(const unsigned char *d, size_t n, Rec *recs, int max, int *nrec)
{
	size_t off = 0;
	int k = 0;
	uint64_t len;

	*nrec = 0;
	while (off < n) {
		if (n - off < 9)
			return 1;
		len = get64le(d + off + 1);
		if (len > n - off - 9)
			return 1;
		if (k == max)
			return -1;
		recs[k].tag = d[off];
		recs[k].p = (unsigned char *)d + off + 9;
		recs[k].n = (size_t)len;
		k++;
		*nrec = k;
		off += 9 + (size_t)len;
	}
	return 0;
}

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

/* a new child: default crash signals, fd 3 = the channel, no other inherited fds */
static void
child_setup(int chan)
{
	int devnull;

	/* crash as a signal the parent can see, not through a sanitizer's handler */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	/* pipes of other threads' children must not stay open here, or their
	 * readers would wait for this process */
	if (chan != 3 && dup2(chan, 3) < 0)
		_exit(5);
	if ((devnull = open("/dev/null", O_RDWR)) >= 0) {
		dup2(devnull, 1);
		dup2(devnull, 2);
	}
	closefrom4();
}

/*
 * Read fd until EOF, or with until_status until the records read so far are
 * complete and one is a status. 0 ok, 1 timed out, -1 error.
 */
static int
collect(int fd, long deadline, int until_status, Stream *s)
{
	Rec recs[16];
	int nrec, i;

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		long left = deadline - now_ms();
		unsigned char buf[65536];
		ssize_t k;
		int pr;

		if (until_status && parse(s->p, s->n, recs, 16, &nrec) == 0)
			for (i = 0; i < nrec; i++)
				if (recs[i].tag == REC_STATUS)
					return 0;
		if (left <= 0)
			return 1;
		pr = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -1;
		if (pr == 0)
			continue;
		k = read(fd, buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			return 0;
		if (stream_put(s, buf, (size_t)k))
			return -1;
	}
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

/*
 * The outcome of a child: a status record (with a message record when not
 * TILEC_OK), or an exit record from the monitor saying the compiler died.
 */
static int
answer(const Stream *s, Rec *recs, int *nrec, char **err)
{
	int i, st = 1, sig = 0;
	char *m = NULL, *v;

	if (parse(s->p, s->n, recs, 16, nrec) != 0)
		return rt_err(err, TILEC_ERR_CRASH, "hipRTC child process sent a malformed answer");
	for (i = 0; i < *nrec; i++) {
		if (recs[i].tag == REC_EXIT && (v = recstr(&recs[i]))) {
			sig = atoi(v);
			free(v);
		}
		if (recs[i].tag == REC_STATUS && (v = recstr(&recs[i]))) {
			st = atoi(v);
			free(v);
		}
		if (recs[i].tag == REC_MSG && !m)
			m = recstr(&recs[i]);
	}
	if (sig > 0) {
		free(m);
		return rt_err(err, TILEC_ERR_CRASH, "hipRTC crashed in its child process (signal %d, "
		              "%s); the calling process is unaffected", sig, strsignal(sig));
	}
	if (st == 1) {
		free(m);
		return rt_err(err, TILEC_ERR_CRASH, "hipRTC child process ended without an answer");
	}
	if (st)
		rt_err(err, st, "%s", m ? m : "hipRTC failed");
	free(m);
	return st;
}

static int
emit_stream(Stream *s, int tag, const char *str)
{
	unsigned char h[9];
	size_t n = strlen(str);
	int i;

	h[0] = (unsigned char)tag;
	for (i = 0; i < 8; i++)
		h[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
	return stream_put(s, h, 9) || stream_put(s, str, n);
}

/* ---- the direct route: one forked child per compile ----------------------------------- */

static int
run_child(void (*fn)(int, const Job *), const Job *job, int timeout_ms, Stream *out, char **err)
{
	int pfd[2], status = 0, r;
	pid_t pid;

	memset(out, 0, sizeof *out);
	if (pipe(pfd))
		return rt_err(err, TILEC_ERR_IO, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return rt_err(err, TILEC_ERR_IO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		child_setup(pfd[1]);
		fn(3, job);
		_exit(0);
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	r = collect(pfd[0], now_ms() + timeout_ms, 0, out);
	close(pfd[0]);
	if (r)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r) {
		free(out->p);
		memset(out, 0, sizeof *out);
		return rt_err(err, TILEC_ERR_CRASH, "hipRTC did not finish within %d ms; its child "
		              "process was killed", timeout_ms);
	}
	if (WIFSIGNALED(status)) {
		char sig[16];

		snprintf(sig, sizeof sig, "%d", WTERMSIG(status));
		out->n = 0; /* the answer is the signal */
		emit_stream(out, REC_EXIT, sig);
	}
	return TILEC_OK;
}

/* ---- the server route: a zygote forks a monitor + compiler per request ---------------- */

/*
 * Request: u64 length (with the answer pipe's write end as SCM_RIGHTS), then
 * u32 nopts, u32 nhdrs and NUL-terminated strings with u64 lengths: source,
 * arch, options, header names and sources alternating.
 */
static int
encode(const Job *job, Stream *s)
{
	unsigned char h[8];
	int i;

	for (i = 0; i < 4; i++) {
		h[i] = (unsigned char)((unsigned)job->nopts >> (8 * i));
		h[4 + i] = (unsigned char)((unsigned)job->nhdrs >> (8 * i));
	}
	if (stream_put(s, h, 8) || stream_str(s, job->src) || stream_str(s, job->arch))
		return -1;
	for (i = 0; i < job->nopts; i++)
		if (stream_str(s, job->opts[i]))
			return -1;
	for (i = 0; i < job->nhdrs; i++)
		if (stream_str(s, job->hdrs[i].name) || stream_str(s, job->hdrs[i].source))
			return -1;
	return 0;
}

static const char *
take(const unsigned char *b, size_t n, size_t *off)
{
	uint64_t len;
	const char *s;

	if (n - *off < 8)
		return NULL;
	len = get64le(b + *off);
	if (len == 0 || len > n - *off - 8 || b[*off + 8 + len - 1] != 0)
		return NULL;
	s = (const char *)b + *off + 8;
	*off += 8 + (size_t)len;
	return s;
}

/* zygote side; the arrays are malloc'd, the strings point into b */
static int
decode(const unsigned char *b, size_t n, Job *job)
{
	const char **opts;
	tilec_header *hdrs;
	size_t off = 8;
	uint32_t no, nh, i;

	if (n < 8)
		return -1;
	no = (uint32_t)get64le(b) & 0xffffffffu;
	nh = (uint32_t)(get64le(b) >> 32);
	if (no > 1000 || nh > 1000)
		return -1;
	opts = calloc(no + 1, sizeof *opts);
	hdrs = calloc(nh + 1, sizeof *hdrs);
	if (!opts || !hdrs)
		goto bad;
	if (!(job->src = take(b, n, &off)) || !(job->arch = take(b, n, &off)))
		goto bad;
	for (i = 0; i < no; i++)
		if (!(opts[i] = take(b, n, &off)))
			goto bad;
	for (i = 0; i < nh; i++)
		if (!(hdrs[i].name = take(b, n, &off)) || !(hdrs[i].source = take(b, n, &off)))
			goto bad;
	job->opts = opts;
	job->nopts = (int)no;
	job->hdrs = hdrs;
	job->nhdrs = (int)nh;
	return 0;
bad:
	free(opts);
	free(hdrs);
	return -1;
}

static int
readall(int fd, void *p, size_t n)
{
	unsigned char *q = p;

	while (n) {
		ssize_t k = read(fd, q, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		q += k, n -= (size_t)k;
	}
	return 0;
}

/* the monitor: its own process group (the parent's kill handle), the compiler, the verdict */
static void
monitor(int fd, const Job *job)
{
	char b[32];
	int status = 0;
	pid_t c;

	setpgid(0, 0);
	snprintf(b, sizeof b, "%d", (int)getpid());
	sendstr(fd, REC_PGID, b);
	c = fork();
	if (c < 0) {
		sendstr(fd, REC_MSG, "fork failed in the hipRTC server");
		sendstatus(fd, TILEC_ERR_IO);
		_exit(0);
	}
	if (c == 0) {
		compile_child(fd, job);
		_exit(0);
	}
	while (waitpid(c, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		snprintf(b, sizeof b, "%d", WTERMSIG(status));
		sendstr(fd, REC_EXIT, b);
	}
	_exit(0);
}

static void
serve(int sock, const char *path)
{
	signal(SIGCHLD, SIG_IGN); /* monitors are reaped by the kernel */
	for (;;) {
		unsigned char lenb[8], *body;
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {lenb, 8};
		struct msghdr msg;
		struct cmsghdr *cm;
		uint64_t len;
		ssize_t k;
		int pfd = -1;
		Job job;
		pid_t m;

		memset(&msg, 0, sizeof msg);
		memset(cbuf, 0, sizeof cbuf);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof cbuf;
		k = recvmsg(sock, &msg, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			_exit(0); /* the parent closed the channel or is gone */
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				memcpy(&pfd, CMSG_DATA(cm), sizeof pfd);
		if (k < 8 && readall(sock, lenb + k, (size_t)(8 - k)))
			_exit(0);
		len = get64le(lenb);
		if (pfd < 0 || len > (1u << 30) || !(body = malloc((size_t)len + 1)))
			_exit(6); /* out of step with the parent: give up, it falls back */
		if (readall(sock, body, (size_t)len))
			_exit(0);
		memset(&job, 0, sizeof job);
		job.path = path;
		if (decode(body, (size_t)len, &job)) {
			sendstr(pfd, REC_MSG, "hipRTC server: malformed request");
			sendstatus(pfd, TILEC_ERR_ARG);
		} else if ((m = fork()) == 0) {
			close(sock);
			signal(SIGCHLD, SIG_DFL);
			monitor(pfd, &job);
		} else if (m < 0) {
			sendstr(pfd, REC_MSG, "hipRTC server: fork failed");
			sendstatus(pfd, TILEC_ERR_IO);
		}
		close(pfd);
		free((void *)job.opts);
		free((void *)job.hdrs);
		free(body);
	}
}

static void
zygote(int fd, const Job *job)
{
	if (probe_child(fd, job) == TILEC_OK)
		serve(fd, job->path);
}

void
hip_info_free(HipInfo *h)
{
	if (h->pid > 0) {
		close(h->sock);
		kill(h->pid, SIGKILL);
		while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (h->mu_init)
		pthread_mutex_destroy(&h->mu);
	free(h->isas);
	free(h->path);
	memset(h, 0, sizeof *h);
}

int
hip_probe(const char *path, int timeout_ms, HipInfo *out, char **err)
{
	Job job = {path, NULL, NULL, NULL, 0, NULL, 0};
	Stream s = {NULL, 0, 0};
	Rec recs[16];
	int sv[2], nrec = 0, r, i, status;
	pid_t pid;

	memset(out, 0, sizeof *out);
	out->sock = -1;
	pthread_mutex_init(&out->mu, NULL);
	out->mu_init = 1;
	if (path && !(out->path = rt_strdup(path)))
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return rt_err(err, TILEC_ERR_IO, "socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return rt_err(err, TILEC_ERR_IO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		child_setup(sv[1]);
		zygote(3, &job);
		_exit(0);
	}
	close(sv[1]);
	fcntl(sv[0], F_SETFD, FD_CLOEXEC);
	r = collect(sv[0], now_ms() + timeout_ms, 1, &s);
	if (r == 0)
		r = answer(&s, recs, &nrec, err);
	else
		r = rt_err(err, TILEC_ERR_CRASH, "hipRTC did not finish within %d ms; its child "
		           "process was killed", timeout_ms);
	if (r) {
		close(sv[0]);
		kill(pid, SIGKILL);
		status = 0;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL && err) {
			free(*err);
			rt_err(err, TILEC_ERR_CRASH, "hipRTC probe crashed (signal %d)", WTERMSIG(status));
		}
		free(s.p);
		return r;
	}
	for (i = 0; i < nrec; i++) {
		char *v = recs[i].tag == REC_VERSION || recs[i].tag == REC_ISAS ? recstr(&recs[i]) : NULL;

		if (recs[i].tag == REC_VERSION && v)
			sscanf(v, "%d.%d", &out->major, &out->minor);
		if (recs[i].tag == REC_ISAS && v) {
			free(out->isas);
			out->isas = v;
			v = NULL;
		}
		free(v);
	}
	free(s.p);
	out->sock = sv[0];
	out->pid = pid;
	if (!out->isas && !(out->isas = rt_strdup(builtin_isas)))
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	out->ok = 1;
	return TILEC_OK;
}

/* hand a request to the zygote; -1 if it is gone */
static int
request(HipInfo *h, const Job *job, int wfd)
{
	Stream body = {NULL, 0, 0};
	unsigned char lenb[8];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {lenb, 8};
	struct msghdr msg;
	struct cmsghdr *cm;
	size_t off = 0;
	int i, r = -1;

	if (encode(job, &body))
		goto out;
	for (i = 0; i < 8; i++)
		lenb[i] = (unsigned char)((uint64_t)body.n >> (8 * i));
	memset(&msg, 0, sizeof msg);
	memset(cbuf, 0, sizeof cbuf);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof cbuf;
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &wfd, sizeof wfd);
	pthread_mutex_lock(&h->mu);
	if (h->dead || h->sock < 0)
		goto unlock;
	while (sendmsg(h->sock, &msg, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			goto dead;
	while (off < body.n) {
		ssize_t k = send(h->sock, body.p + off, body.n - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			goto dead;
		off += (size_t)k;
	}
	r = 0;
	goto unlock;
dead:
	h->dead = 1;
unlock:
	pthread_mutex_unlock(&h->mu);
out:
	free(body.p);
	return r;
}

/* kill what a timed-out request left running: the monitor's process group */
static void
killgroup(const Stream *s)
{
	Rec recs[16];
	int nrec = 0, i;

	parse(s->p, s->n, recs, 16, &nrec);
	for (i = 0; i < nrec; i++)
		if (recs[i].tag == REC_PGID) {
			char *v = recstr(&recs[i]);
			int pg = v ? atoi(v) : 0;

			if (pg > 1)
				kill(-pg, SIGKILL);
			free(v);
		}
}

/* ---- public to the runtime ------------------------------------------------------------- */

/* gfxNNN[N] with hex digits, then target-ID features such as :sramecc+:xnack- */
int
arch_hip_valid(const char *arch)
{
	/* a target ID: gfx + 3 or 4 digits/hex letters, then :feature+ or :feature- for the
	 * features comgr knows (sramecc, xnack), each at most once; anything else crashes comgr */
	static const char *const feats[] = {"sramecc", "xnack"};
	const char *p;
	int nd = 0, seen = 0;

	if (!arch || strncmp(arch, "gfx", 3))
		return 0;
	for (p = arch + 3; isdigit((unsigned char)*p) || (*p >= 'a' && *p <= 'f'); p++)
		nd++;
	if (nd < 3 || nd > 4)
		return 0;
	while (*p == ':') {
		size_t i, nl;

		p++;
		nl = strspn(p, "abcdefghijklmnopqrstuvwxyz");
		for (i = 0; i < countof(feats); i++)
			if (nl == strlen(feats[i]) && !strncmp(p, feats[i], nl))
				break;
		if (i == countof(feats) || (seen & 1 << i) || (p[nl] != '+' && p[nl] != '-'))
			return 0;
		seen |= 1 << i;
		p += nl + 1;
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

/* the blobs from an answer */
static int
fill(const Stream *s, const char *arch, Blobs *out, char **err)
{
	Rec recs[16];
	int nrec = 0, r, i;

	r = answer(s, recs, &nrec, err);
	for (i = 0; i < nrec; i++) {
		if (recs[i].tag == REC_LOG && blobs_set(out, BLOB_LOG, recs[i].p, recs[i].n))
			r = TILEC_ERR_NOMEM;
		if (recs[i].tag == REC_CODE && !r && blobs_set(out, BLOB_BIN, recs[i].p, recs[i].n))
			r = TILEC_ERR_NOMEM;
	}
	if (r == TILEC_OK) {
		if (!out->n[BLOB_BIN])
			r = rt_err(err, TILEC_ERR_COMPILE, "hipRTC gave no code object for %s", arch);
		out->binkind = TILEC_BIN_HSACO;
	}
	if (r != TILEC_OK && r != TILEC_ERR_COMPILE)
		blobs_free(out);
	return r;
}

int
hip_compile(HipInfo *h, const char *path, int timeout_ms, const char *src, const char *arch,
            const char *const *opts, int nopts, const tilec_header *hdrs, int nhdrs, Blobs *out,
            char **err)
{
	Job job = {path, src, arch, opts, nopts, hdrs, nhdrs};
	Stream s = {NULL, 0, 0};
	int pfd[2], r;

	memset(out, 0, sizeof *out);
	if (!src || !arch_hip_valid(arch) || nopts < 0 || (nopts && !opts) || nhdrs < 0 ||
	    (nhdrs && !hdrs))
		return rt_err(err, TILEC_ERR_ARG, "hip_compile: bad arguments");
	if (h && h->ok) { /* request() checks, under its lock, that the server is alive */
		if (pipe(pfd))
			return rt_err(err, TILEC_ERR_IO, "pipe: %s", strerror(errno));
		fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
		fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
		r = request(h, &job, pfd[1]);
		close(pfd[1]);
		if (r == 0) {
			r = collect(pfd[0], now_ms() + timeout_ms, 0, &s);
			close(pfd[0]);
			if (r) {
				killgroup(&s);
				free(s.p);
				return rt_err(err, TILEC_ERR_CRASH, "hipRTC did not finish within %d ms; "
				              "its child process was killed", timeout_ms);
			}
			r = fill(&s, arch, out, err);
			free(s.p);
			return r;
		}
		close(pfd[0]); /* the server is gone: compile directly */
	}
	if ((r = run_child(compile_child, &job, timeout_ms, &s, err)))
		return r;
	r = fill(&s, arch, out, err);
	free(s.p);
	return r;
}
