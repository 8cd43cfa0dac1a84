/*
 * progen_check.h: one generated program through tilec, classified (shared by
 * test/fuzz/fuzz_diff.c and test/check_progen.c; static functions only).
 * check_forked() runs the work in a child so that a crash or a hang of tilec
 * is a result ("crash") instead of the end of the caller.
 *
 * Classes: agree; emitted (no tilec_run in this build: it emitted); differ
 * (tilec_run: an output differs or the emitted code failed on the CPU);
 * crash; refused (layout inference or emission declined, with a reason);
 * no-meaning (the interpreter rejects the program: a generator bug unless
 * rare); sema (a generator bug); error (tilec_run could not build or run).
 */
#ifndef PROGEN_CHECK_H
#define PROGEN_CHECK_H

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progen.h"
#include "tilec.h"
#ifdef TILEC_HAVE_RUN
#include "tilec_run.h"
#endif

enum { C_AGREE, C_EMITTED, C_DIFFER, C_CRASH, C_REFUSED, C_NOMEANING, C_SEMA, C_ERROR, C_COUNT };
static const char *const pc_cname[] = {"agree", "emitted", "differ", "crash", "refused", "no-meaning", "sema",
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

/* the first disagreement of a tilec_run report: the run's DIFFER line (its message) or the
 * first tensor line after it, numbers blanked */
static void
differ_reason(const char *rep, char *out, size_t n)
{
	const char *p = strstr(rep, "DIFFER"), *q;
	char tmp[400];

	if (!p) {
		reason(rep, out, n);
		return;
	}
	p += 6;
	if (*p == ':') {
		p++;
	} else {
		/* "DIFFER\n  C f16[89, 149]: 13261 elements, 10973 differ, ...; first at ..." */
		p = strchr(p, '\n');
		p = p ? p + 1 : "";
		while (*p == ' ')
			p++;
		q = strchr(p, ':');
		if (q && q - p < 40 && strchr(p, ' ') && strchr(p, ' ') < q)
			p = strchr(p, ' ') + 1; /* drop the tensor name, keep its type */
	}
	while (*p == ' ')
		p++;
	q = strstr(p, "; first at");
	snprintf(tmp, sizeof tmp, "error: %.*s", (int)(q && q - p < 300 ? q - p : (ptrdiff_t)strcspn(p, "\n")), p);
	reason(tmp, out, n);
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
	o.target = strncmp(arch, "gfx", 3) ? TILEC_TARGET_CUDA : TILEC_TARGET_HIP;
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
		ro.target = o.target;
		ro.sizes = sizes;
		ro.filename = "prog.tile";
		ro.timeout_s = 60;
		st = tilec_run(src, strlen(src), &ro, &rr);
		r->runs = rr.runs;
		buf_printf(rep, "tilec_run %s--arch=%s --sizes='%s': %s\n%s%s",
			   o.target == TILEC_TARGET_HIP ? "--target=hip " : "", arch, sizes,
			   st == TILEC_RUN_AGREE ? "agree" : st == TILEC_RUN_DIFFER ? "differ" : "error", rr.report,
			   rr.diagnostics);
		if (st == TILEC_RUN_AGREE) {
			r->cls = C_AGREE;
		} else if (st == TILEC_RUN_DIFFER) {
			r->cls = C_DIFFER;
			differ_reason(rr.report, r->why, sizeof r->why);
		} else {
			/* the interpreter's refusal says the program has no meaning (a generator bug);
			 * anything else (the emitted code did not build, ...) is an error */
			const char *t = strstr(rr.report, "the reference interpreter: ");

			if (t) {
				r->cls = C_NOMEANING;
				t += strlen("the reference interpreter: ");
				snprintf(r->why, sizeof r->why, "%.*s", (int)strcspn(t, "\n"), t);
			} else {
				r->cls = C_ERROR;
				reason(strstr(rr.report, "error: ") ? rr.report : rr.diagnostics, r->why, sizeof r->why);
			}
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

#endif
