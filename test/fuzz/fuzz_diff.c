/*
 * fuzz_diff.c: the differential fuzzer. For seed after seed until the time is
 * up: generate a tile program (cpu/progen.h), check it with sema, compile it
 * to CUDA C, and (when cpu/run.c is built: TILEC_HAVE_RUN) run it on the CPU
 * through tilec_run, the reference interpreter against the emitted code, with
 * the generator's sizes; sm_80, and sm_90a for one program in four.
 *
 * Classes: agree; differ (an output differs, or the CPU run of the emitted
 * code failed); crash (tilec died: a signal in the child that compiles and
 * runs it); refused (tilec's layout inference or emission declined with a
 * reason); no-meaning (the interpreter rejects the program: a generator bug
 * unless rare); sema (a generator bug); error (tilec_run could not build or
 * run). Without tilec_run a program that emits counts as "emitted".
 * Every differing or crashing program is written to DIR/<seed>.tile with its
 * report in DIR/<seed>.txt; generator bugs (sema, no-meaning) to
 * DIR/gen-<seed>.tile/.txt. Exit status 1 when any program differs or crashes.
 *
 *   fuzz_diff [-t SECONDS] [-s FIRST_SEED] [-n COUNT] [-f FEATURES] [-o DIR] [-j JOBS] [-v] [-q]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progen.h"
#include "tilec.h"
#ifdef TILEC_HAVE_RUN
#include "tilec_run.h"
#endif

enum { C_AGREE, C_EMITTED, C_DIFFER, C_CRASH, C_REFUSED, C_NOMEANING, C_SEMA, C_ERROR, C_COUNT };
static const char *const cname[] = {"agree", "emitted", "differ", "crash", "refused", "no-meaning", "sema",
				    "error"};

/* the first "error: " message of a diagnostics text, locations and numbers blanked */
static void
reason(const char *diag, char *out, size_t n)
{
	const char *p = strstr(diag, "error: ");
	size_t k = 0;

	if (!p) {
		snprintf(out, n, "%s", *diag ? diag : "(no message)");
		return;
	}
	p += 7;
	while (*p && *p != '\n' && k + 1 < n) {
		if (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
			out[k++] = '#';
			continue;
		}
		if (*p == '\'') {
			const char *q = strchr(p + 1, '\'');

			if (q && q - p < 40) {
				out[k++] = '*';
				p = q + 1;
				continue;
			}
		}
		out[k++] = *p++;
	}
	out[k] = 0;
	if (k > 110)
		strcpy(out + 107, "...");
}

typedef struct Result {
	int cls;
	int runs;
	char why[160];
} Result;

/* compile (and run) one program in this process; the report into rep */
static void
check_one(const char *src, const char *sizes, const char *arch, Result *r, Buf *rep)
{
	tilec_options o;
	tilec_result res;

	memset(r, 0, sizeof *r);
	tilec_options_init(&o);
	o.dump = TILEC_DUMP_IR;
	o.filename = "prog.tile";
	if (tilec_compile(src, strlen(src), &o, &res) != TILEC_OK) {
		r->cls = C_SEMA;
		reason(res.diagnostics, r->why, sizeof r->why);
		buf_printf(rep, "sema:\n%s", res.diagnostics);
		tilec_result_free(&res);
		return;
	}
	tilec_result_free(&res);
	o.dump = TILEC_DUMP_CUDA;
	o.arch = arch;
	if (tilec_compile(src, strlen(src), &o, &res) != TILEC_OK) {
		r->cls = C_REFUSED;
		reason(res.diagnostics, r->why, sizeof r->why);
		buf_printf(rep, "refused (%s):\n%s", arch, res.diagnostics);
		tilec_result_free(&res);
		return;
	}
	tilec_result_free(&res);
#ifdef TILEC_HAVE_RUN
	{
		tilec_run_options ro;
		tilec_run_result rr;
		tilec_run_status st;

		tilec_run_options_init(&ro);
		ro.arch = arch;
		ro.sizes = sizes;
		ro.filename = "prog.tile";
		ro.timeout_s = 60;
		st = tilec_run(src, strlen(src), &ro, &rr);
		r->runs = rr.runs;
		buf_printf(rep, "tilec_run --arch=%s --sizes='%s': %s\n%s%s", arch, sizes,
			   st == TILEC_RUN_AGREE ? "agree" : st == TILEC_RUN_DIFFER ? "differ" : "error", rr.report,
			   rr.diagnostics);
		if (st == TILEC_RUN_AGREE) {
			r->cls = C_AGREE;
		} else if (st == TILEC_RUN_DIFFER) {
			r->cls = C_DIFFER;
			reason(rr.report, r->why, sizeof r->why);
		} else {
			/* the interpreter's refusal names the program's meaning; anything else is an error */
			const char *t = rr.report;

			r->cls = strstr(t, "no meaning") || strstr(t, "interp") ? C_NOMEANING : C_ERROR;
			reason(*rr.diagnostics ? rr.diagnostics : t, r->why, sizeof r->why);
			if (!strstr(r->why, "error") && !*r->why)
				snprintf(r->why, sizeof r->why, "%.150s", t);
		}
		tilec_run_result_free(&rr);
	}
#else
	(void)sizes;
	r->cls = C_EMITTED;
	r->runs = 1;
#endif
}

/* run check_one in a child so that a crash or a hang is a result, not the end */
static void
check_forked(const char *src, const char *sizes, const char *arch, int timeout_s, Result *r, Buf *rep)
{
	int pfd[2], st = 0;
	pid_t pid;
	Buf in;
	char tmp[4096];
	ssize_t k;

	memset(r, 0, sizeof *r);
	if (pipe(pfd)) {
		check_one(src, sizes, arch, r, rep);
		return;
	}
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		check_one(src, sizes, arch, r, rep);
		return;
	}
	if (pid == 0) {
		Result cr;
		Buf b;
		size_t off = 0;

		close(pfd[0]);
		alarm((unsigned)timeout_s);
		buf_init(&b);
		check_one(src, sizes, arch, &cr, &b);
		if (write(pfd[1], &cr, sizeof cr) != (ssize_t)sizeof cr)
			_exit(3);
		while (off < b.len) {
			ssize_t w = write(pfd[1], b.s + off, b.len - off);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
		_exit(0);
	}
	close(pfd[1]);
	buf_init(&in);
	while ((k = read(pfd[0], tmp, sizeof tmp)) > 0 || (k < 0 && errno == EINTR))
		if (k > 0)
			buf_putn(&in, tmp, (size_t)k);
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (in.len >= sizeof *r && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		memcpy(r, in.s, sizeof *r);
		buf_putn(rep, in.s + sizeof *r, in.len - sizeof *r);
	} else {
		r->cls = C_CRASH;
		if (WIFSIGNALED(st))
			snprintf(r->why, sizeof r->why, "%s (signal %d)",
				 WTERMSIG(st) == SIGALRM ? "timeout" : strsignal(WTERMSIG(st)), WTERMSIG(st));
		else
			snprintf(r->why, sizeof r->why, "exit status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		buf_printf(rep, "tilec crashed while compiling or running (--arch=%s --sizes='%s'): %s\n", arch, sizes,
			   r->why);
		if (in.len > sizeof *r)
			buf_putn(rep, in.s + sizeof *r, in.len - sizeof *r);
	}
	buf_free(&in);
}

static int
writefile(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

typedef struct Reason {
	char text[160];
	int n;
	unsigned long long seed;
} Reason;

static void
count_reason(Reason *rs, int *nrs, int max, const char *why, unsigned long long seed)
{
	int i;

	for (i = 0; i < *nrs; i++)
		if (!strcmp(rs[i].text, why)) {
			rs[i].n++;
			return;
		}
	if (*nrs < max) {
		snprintf(rs[*nrs].text, sizeof rs[*nrs].text, "%s", why);
		rs[*nrs].n = 1;
		rs[*nrs].seed = seed;
		(*nrs)++;
	}
}

static int
byn(const void *a, const void *b)
{
	return ((const Reason *)b)->n - ((const Reason *)a)->n;
}

static void
usage(void)
{
	fprintf(stderr, "usage: fuzz_diff [-t SECONDS] [-s FIRST_SEED] [-n COUNT] [-f FEATURES] [-o DIR] [-v] [-q]\n"
			"  FEATURES: all or a list of half,fp8,int,math,shared,global,slice,loop,if,pipe,\n"
			"  reduce,gemm,rank3,assume,scalar,let (a leading - removes one: all,-gemm)\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	double seconds = 60;
	unsigned long long seed = 1, count = 0, done = 0;
	unsigned features = PG_ALL;
	const char *dir = "build/fuzz-diff";
	int verbose = 0, quiet = 0, i, c, nrs = 0, ngr = 0;
	long cls[C_COUNT] = {0}, runs = 0;
	static Reason rs[256], gr[64];
	time_t t0 = time(NULL);

	while ((c = getopt(argc, argv, "t:s:n:f:o:vq")) != -1) {
		switch (c) {
		case 't': seconds = atof(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'f':
			if (progen_parse_features(optarg, &features)) {
				fprintf(stderr, "fuzz_diff: bad feature list '%s'\n", optarg);
				usage();
			}
			break;
		case 'o': dir = optarg; break;
		case 'v': verbose = 1; break;
		case 'q': quiet = 1; break;
		default: usage();
		}
	}
	mkdir("build", 0755);
	mkdir(dir, 0755);
#ifdef TILEC_HAVE_RUN
	printf("fuzz_diff: generate, compile, run on the CPU (interpreter vs emitted code); seeds from %llu, %g s\n",
	       seed, seconds);
#else
	printf("fuzz_diff: generate, sema, emit (no tilec_run in this build: cpu/run.c is missing); seeds from "
	       "%llu, %g s\n", seed, seconds);
#endif
	fflush(stdout);
	for (;; seed++) {
		ProgenOptions po;
		Buf src, sizes, rep;
		Err e = {0};
		Result r;
		const char *arch;
		char path[1024];

		if (count ? done >= count : difftime(time(NULL), t0) >= seconds)
			break;
		progen_options_init(&po);
		po.features = features;
		buf_init(&src);
		buf_init(&sizes);
		buf_init(&rep);
		po.sizes = &sizes;
		if (progen(seed, &po, &src, &e)) {
			fprintf(stderr, "fuzz_diff: progen: %s\n", e.msg);
			return 2;
		}
		arch = seed % 4 == 3 ? "sm_90a" : "sm_80";
		check_forked(buf_str(&src), buf_str(&sizes), arch, 300, &r, &rep);
		done++;
		cls[r.cls]++;
		runs += r.runs;
		if (r.cls == C_REFUSED || r.cls == C_ERROR)
			count_reason(rs, &nrs, (int)countof(rs), r.why, seed);
		if (r.cls == C_DIFFER || r.cls == C_CRASH || r.cls == C_SEMA || r.cls == C_NOMEANING) {
			const char *pre = r.cls == C_SEMA || r.cls == C_NOMEANING ? "gen-" : "";

			if (r.cls == C_DIFFER || r.cls == C_CRASH)
				count_reason(gr, &ngr, (int)countof(gr), r.why, seed);
			snprintf(path, sizeof path, "%s/%s%llu.tile", dir, pre, seed);
			writefile(path, buf_str(&src));
			snprintf(path, sizeof path, "%s/%s%llu.txt", dir, pre, seed);
			writefile(path, buf_str(&rep));
			if (!quiet)
				printf("seed %llu: %s: %s (%s/%s%llu.tile)\n", seed, cname[r.cls], r.why, dir, pre, seed);
		} else if (verbose) {
			printf("seed %llu: %s%s%s\n", seed, cname[r.cls], *r.why ? ": " : "", r.why);
		}
		fflush(stdout);
		buf_free(&src);
		buf_free(&sizes);
		buf_free(&rep);
	}
	printf("\n== fuzz_diff summary: %llu programs, %ld runs, %.0f s\n", done, runs, difftime(time(NULL), t0));
	for (i = 0; i < C_COUNT; i++)
		if (cls[i] || i == C_DIFFER)
			printf("  %-11s %ld\n", cname[i], cls[i]);
	qsort(rs, (size_t)nrs, sizeof rs[0], byn);
	if (nrs)
		printf("refused / error, by reason (first seed):\n");
	for (i = 0; i < nrs && i < 25; i++)
		printf("  %5d  %s  (seed %llu)\n", rs[i].n, rs[i].text, rs[i].seed);
	if (nrs > 25)
		printf("  ... %d more reasons\n", nrs - 25);
	qsort(gr, (size_t)ngr, sizeof gr[0], byn);
	if (ngr)
		printf("differ / crash, by reason (first seed):\n");
	for (i = 0; i < ngr; i++)
		printf("  %5d  %s  (seed %llu)\n", gr[i].n, gr[i].text, gr[i].seed);
	return cls[C_DIFFER] || cls[C_CRASH] ? 1 : 0;
}
