/*
 * cpuexec.c: build the emitted CUDA C for the CPU and run it (cpuexec.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpuexec.h"
#include "lower.h"
#include "target.h"
#include "tmap.h"

/* the C of map dimension d of the entry: an integer, or the size argument it names; NULL */
static const char *
mapdim(Arena *a, char *s, size_t n, const IrKernel *k, const char *d)
{
	int i;

	if (d[0] >= '0' && d[0] <= '9')
		return snprintf(s, n, "%sll", d), s;
	for (i = 0; i < k->nsize; i++)
		if (!strcmp(emit_cname(a, k->sizes[i]->name), d))
			return snprintf(s, n, "(long long)*(int *)tl_args_[%d]", k->nparam + i), s;
	return NULL;
}

int
cpuexec_entry(Buf *out, const IrKernel *k, const char *kname, const char *code)
{
	TmapDesc maps[16];
	int i, n = 0, nm = code ? tmap_parse(code, k->name, maps, 16) : 0;
	Arena a;

	if (nm < 0)
		return -1;
	arena_init(&a);
	buf_puts(out, "\n// the CPU run's entry: the kernel's arguments by position\n");
	buf_printf(out, "extern \"C\" void tl_cpu_entry(void **tl_args_)\n{\n");
	for (i = 0; i < nm; i++) {
		const TmapDesc *m = &maps[i];
		char d0[80], d1[80], d2[80] = "1", r[80];
		int t;

		for (t = 0; t < k->nparam; t++)
			if (k->params[t].is_tensor && !strcmp(emit_cname(&a, k->params[t].name), m->tensor))
				break;
		if (t == k->nparam || k->bufs[k->params[t].buf].strides || !mapdim(&a, d0, sizeof d0, k, m->dim[0]) ||
		    !mapdim(&a, d1, sizeof d1, k, m->dim[1]) || !mapdim(&a, r, sizeof r, k, m->rows) ||
		    (m->rank == 3 && !mapdim(&a, d2, sizeof d2, k, m->dim[2]))) {
			arena_free(&a);
			return -1;
		}
		/* not encodable (the rows are not whole 16-byte chunks, an empty tensor): unencoded */
		buf_printf(out, "\ttl_tmap_t %s;\n\t(void)tl_tmap_encode(&%s, tl_args_[%d], %d, %d, %s, %s, %s, %s * %d, %lld, %lld, "
			   "%lld, %d);\n", m->name, m->name, t, m->esize, m->rank, d0, d1, d2, r, m->esize, m->box[0], m->box[1],
			   m->box[2], m->swizzle);
	}
	buf_printf(out, "\t%s(", kname);
	int skew = k->nparam + k->nsize;

	for (i = 0; i < k->nparam; i++, n++) {
		const IrParam *P = &k->params[i];

		if (P->is_tensor && k->bufs[P->buf].strides)
			/* a strided view: its pointer skewed into the storage (cpuexec.h) */
			buf_printf(out, "%s(%s *)((char *)tl_args_[%d] + *(int *)tl_args_[%d])", n ? ", " : "",
				   emit_ctype(P->dtype), n, skew++);
		else if (P->is_tensor)
			buf_printf(out, "%s(%s *)tl_args_[%d]", n ? ", " : "", emit_ctype(P->dtype), n);
		else
			buf_printf(out, "%s*(%s *)tl_args_[%d]", n ? ", " : "", emit_ctype(P->dtype), n);
	}
	for (i = 0; i < k->nsize; i++, n++)
		buf_printf(out, "%s*(int *)tl_args_[%d]", n ? ", " : "", n);
	for (i = 0; i < nm; i++)
		buf_printf(out, ", %s", maps[i].name);
	buf_puts(out, ");\n}\n");
	arena_free(&a);
	return 0;
}

long long
cpuexec_smem_of(const char *src, const char *name)
{
	char tag[300];
	const char *p;
	long long threads, bytes;

	snprintf(tag, sizeof tag, "// kernel %s: ", name);
	for (p = strstr(src, tag); p; p = strstr(p + 1, tag))
		if ((p == src || p[-1] == '\n') &&
		    sscanf(p + strlen(tag), "%lld threads, %lld bytes", &threads, &bytes) == 2)
			return bytes;
	return -1;
}

long long
cpuexec_threads_of(const char *src, const char *name)
{
	char tag[300];
	const char *p;
	long long threads, bytes;

	snprintf(tag, sizeof tag, "// kernel %s: ", name);
	for (p = strstr(src, tag); p; p = strstr(p + 1, tag))
		if ((p == src || p[-1] == '\n') &&
		    sscanf(p + strlen(tag), "%lld threads, %lld bytes", &threads, &bytes) == 2)
			return threads > 0 && threads <= 1024 ? threads : -1;
	return -1;
}

int
cpuexec_persistent_of(const char *src, const char *name)
{
	char tag[300];
	const char *p;

	snprintf(tag, sizeof tag, "// kernel %s: persistent: ", name);
	for (p = strstr(src, tag); p; p = strstr(p + 1, tag))
		if (p == src || p[-1] == '\n')
			return 1;
	return 0;
}

void
cpuexec_persistent_grid(unsigned grid[3], unsigned long long cap)
{
	unsigned long long tiles = (unsigned long long)grid[0] * grid[1];

	if (!tiles || !grid[2])
		return;
	grid[0] = (unsigned)(tiles < cap ? tiles : cap);
	grid[1] = 1;
}

static int
writefile(const char *path, const char *s, size_t n, Err *e)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return err_set(e, "cannot write %s: %s", path, strerror(errno));
	if (fwrite(s, 1, n, f) != n) {
		fclose(f);
		return err_set(e, "cannot write %s: %s", path, strerror(errno));
	}
	if (fclose(f))
		return err_set(e, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* read fd to its end into log; -1 on a read error */
static void
drain(int fd, Buf *log)
{
	char b[4096];
	ssize_t r;

	while ((r = read(fd, b, sizeof b)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && log)
			buf_putn(log, b, (size_t)r);
}

/*
 * Run argv with stdout and stderr into log; the exit status, or -1 (e) when
 * it could not run; 128 + signal when killed. timeout_s > 0: killed past it.
 */
static int
runcmd(char *const argv[], int timeout_s, Buf *log, int *timed_out, Err *e)
{
	int p[2], st;
	pid_t pid;

	*timed_out = 0;
	if (pipe(p))
		return err_set(e, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return err_set(e, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		if (timeout_s > 0)
			alarm((unsigned)timeout_s);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	drain(p[0], log);
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return err_set(e, "waitpid: %s", strerror(errno));
	if (WIFSIGNALED(st)) {
		if (WTERMSIG(st) == SIGALRM)
			*timed_out = 1;
		return 128 + WTERMSIG(st);
	}
	return WEXITSTATUS(st);
}

int
cpuexec_build(CpuExe *x, const char *cuda_src, const char *entry, const char *cxx, const char *tmp,
	      int keep, Buf *log, Err *e)
{
	return cpuexec_build_target(x, 0, NULL, cuda_src, entry, cxx, tmp, keep, log, e);
}

int
cpuexec_build_target(CpuExe *x, int hip, const char *arch, const char *cuda_src, const char *entry,
		     const char *cxx, const char *tmp, int keep, Buf *log, Err *e)
{
	const char *hdr = tilec_template("tilec_cpu.h"), *hiphdr = tilec_template("tilec_cpu_hip.h");
	static const char shim[] = "// the CPU run: tilec_cuda.h is tilec_cpu.h\n#include \"tilec_cpu.h\"\n";
	char path[700], inc[600], wave[32];
	Buf src;
	int rc, to;

	memset(x, 0, sizeof *x);
	x->keep = keep;
	if (!hdr || (hip && !hiphdr))
		return err_set(e, "internal error: templates/tilec_cpu.h or tilec_cpu_hip.h is not embedded");
	wave[0] = 0;
	if (hip) {
		Err te = {0};
		const Target *t = target_lookup(TGT_HIP, arch ? arch : target_default_arch(TGT_HIP), &te);

		if (!t)
			return err_set(e, "%s", te.msg);
		snprintf(wave, sizeof wave, "-DTL_CPU_WAVE=%d", t->warp_size);
	}
	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!cxx || !*cxx)
		cxx = getenv("TILEC_CXX");
	if (!cxx || !*cxx)
		cxx = getenv("CXX");
	if (!cxx || !*cxx)
		cxx = "c++";
	snprintf(x->dir, sizeof x->dir, "%s/tilec-run-XXXXXX", tmp);
	if (!mkdtemp(x->dir)) {
		err_set(e, "cannot make a directory under %s: %s", tmp, strerror(errno));
		x->dir[0] = 0;
		return -1;
	}
	snprintf(path, sizeof path, "%s/tilec_cpu.h", x->dir);
	if (writefile(path, hdr, strlen(hdr), e))
		return -1;
	/* the header the emitted code includes: tilec_cuda.h (a shim), or tilec_hip.h */
	snprintf(path, sizeof path, "%s/%s", x->dir, hip ? "tilec_hip.h" : "tilec_cuda.h");
	if (hip ? writefile(path, hiphdr, strlen(hiphdr), e) : writefile(path, shim, sizeof shim - 1, e))
		return -1;
	buf_init(&src);
	buf_puts(&src, cuda_src);
	buf_puts(&src, entry ? entry : "");
	snprintf(path, sizeof path, "%s/kernel.cpp", x->dir);
	rc = src.oom ? err_set(e, "out of memory") : writefile(path, buf_str(&src), src.len, e);
	buf_free(&src);
	if (rc)
		return -1;
	snprintf(x->exe, sizeof x->exe, "%s/kernel", x->dir);
	snprintf(inc, sizeof inc, "-I%s", x->dir);
	{
		/* -O1: the kernels are large unrolled bodies (build time matters more than
		 * run time); no fast-math (IEEE results, as the interpreter's); the
		 * emitted code type-puns through pointer casts as CUDA allows; -frounding-math: no
		 * folds that assume the rounding mode (g++ 12 rewrote 0.0f - (float)i as -(float)i,
		 * -0 for i = 0, at -O0 too: fuzz_diff seed 91258); -fwrapv:
		 * signed integer arithmetic wraps as on the GPU (otherwise the C++
		 * compiler may assume an index computation never overflows);
		 * -ftrivial-auto-var-init=pattern: a register (local) read before the emitted code
		 * writes it holds 0xfe bytes (f32 -1.7e38), not whatever the stack held, so such a
		 * read differs from the reference every time (an fp8 wgmma temporary read without
		 * its scale-d 0 start did, test/cpu/gemm_fp8_promo.tile) */
		const char *strict = getenv("TILEC_CPU_STRICT");
		/* TILEC_CPU_STRICT=1 (the test suites): a variable the emitted code declares and
		 * never uses is an error, as nvcc's warning #177 would show it to a user */
		char *warn = strict && *strict == '1' ? "-Werror=unused-variable" : "-w";
		char *argv[] = {(char *)cxx, "-std=c++17", "-O1", "-g0", warn, "-fno-strict-aliasing",
				"-fno-fast-math", "-ffp-contract=off", "-frounding-math", "-fwrapv",
				"-ftrivial-auto-var-init=pattern", "-DTILEC_CPU=1", inc, "-o", x->exe, path, "-lm", NULL,
				NULL};

		if (hip) { /* the wave size before the source */
			memmove(argv + 13, argv + 12, sizeof argv[0] * 5);
			argv[12] = wave;
		}
		rc = runcmd(argv, 600, log, &to, e);
	}
	if (rc < 0)
		return -1;
	if (rc)
		return err_set(e, "%s could not build the CPU version of the kernel (exit %d)%s", cxx, rc,
			       rc == 127 ? ": no C++ compiler (set TILEC_CXX)" : "");
	return 0;
}

static int
put(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int
put32(FILE *f, unsigned v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};

	return put(f, b, 4);
}

static int
put64(FILE *f, unsigned long long v)
{
	return put32(f, (unsigned)v) || put32(f, (unsigned)(v >> 32));
}

int
cpuexec_run(const CpuExe *x, CpuArg *args, int nargs, const CpuLaunch *l, int timeout_s, Buf *log,
	    Err *e)
{
	char job[700], out[700];
	FILE *f;
	Buf msg;
	int i, rc, to, bad = 0;

	snprintf(job, sizeof job, "%s/job.bin", x->dir);
	snprintf(out, sizeof out, "%s/out.bin", x->dir);
	if (!(f = fopen(job, "wb")))
		return err_set(e, "cannot write %s: %s", job, strerror(errno));
	bad |= put(f, "TLCPUJ1", 8);
	bad |= put32(f, (unsigned)nargs);
	for (i = 0; i < 3; i++)
		bad |= put32(f, l->grid[i]);
	for (i = 0; i < 3; i++)
		bad |= put32(f, l->block[i]);
	bad |= put32(f, 0);
	bad |= put64(f, l->smem);
	for (i = 0; i < nargs; i++) {
		size_t nl = strlen(args[i].name);

		bad |= put32(f, (unsigned)args[i].kind);
		bad |= put32(f, (unsigned)nl);
		bad |= put64(f, args[i].bytes);
		bad |= put(f, args[i].name, nl);
		bad |= put(f, args[i].data, args[i].bytes);
	}
	if (fclose(f) || bad)
		return err_set(e, "cannot write %s", job);
	unlink(out);
	buf_init(&msg);
	{
		char *argv[] = {(char *)x->exe, job, out, NULL};

		rc = runcmd(argv, timeout_s, &msg, &to, e);
	}
	if (log)
		buf_puts(log, buf_str(&msg));
	if (rc < 0) {
		buf_free(&msg);
		return -1;
	}
	if (rc) {
		const char *m = strstr(buf_str(&msg), "tilec-cpu: error: ");
		int n;

		if (to)
			err_set(e, "the CPU run took longer than %d s", timeout_s);
		else if (rc == 3 && m) {
			m += strlen("tilec-cpu: error: ");
			n = (int)strcspn(m, "\n");
			err_set(e, "%.*s", n, m);
		} else if (rc > 128)
			err_set(e, "the CPU run died of signal %d%s", rc - 128,
				rc - 128 == SIGSEGV ? " (a memory access outside every buffer)" : "");
		else
			err_set(e, "the CPU run failed (exit %d): %.300s", rc, buf_str(&msg));
		buf_free(&msg);
		return rc == 3 && !to ? 1 : -1;
	}
	buf_free(&msg);
	if (!(f = fopen(out, "rb")))
		return err_set(e, "the CPU run wrote no results (%s)", strerror(errno));
	for (i = 0; i < nargs; i++)
		if (args[i].kind == CPUARG_PTR && fread(args[i].data, 1, args[i].bytes, f) != args[i].bytes) {
			fclose(f);
			return err_set(e, "the CPU run's results are short (argument %s)", args[i].name);
		}
	fclose(f);
	return 0;
}

void
cpuexec_free(CpuExe *x)
{
	static const char *const files[] = {"tilec_cpu.h", "tilec_cuda.h", "tilec_hip.h", "kernel.cpp", "kernel",
					    "job.bin", "out.bin"};
	char path[700];
	size_t i;

	if (!x->dir[0] || x->keep)
		return;
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", x->dir, files[i]);
		unlink(path);
	}
	rmdir(x->dir);
	x->dir[0] = 0;
}
