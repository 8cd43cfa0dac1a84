/*
 * check_mutate.c: a mutation corpus that runs with every `make test`. Every
 * valid program of the repository (samples/ and the *.tile files under test/
 * except test/err) gets MUTANTS deterministic mutants (byte flips, token
 * deletions and duplications, numbers replaced by 0, -1, 2^31, 2^63-1 and
 * other edge values, swapped or deleted lines, truncation, inserted bytes,
 * up to three at once). Each mutant runs in-process through tilec_compile in
 * every output mode (AST, IR, layouts, explain, CUDA C for sm_80 and sm_90a,
 * HIP C for gfx90a, the launcher header). A batch (one program's mutants)
 * runs in a forked child with an alarm per compile (20 s), so a crash or a hang is a
 * test failure, and the mutant is written to build/mutate/ as a reproducer.
 * An error must come with a message ("error" in the diagnostics) and no
 * output. CuTe algebra lines (cute_run_op) are mutated the same way.
 *
 * Signed-overflow and shift findings of UBSan in gen/ (huge user constants;
 * being bounded on another branch) are listed on stderr and written as
 * reproducers but do not fail the suite; every other report does.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cute.h"
#include "tests.h"
#include "tilec.h"

enum { MUTANTS = 30, MAXPROG = 256, MUTANT_SECONDS = 20 };

/* ---- the corpus ---------------------------------------------------------------------- */

static char *progs[MAXPROG];
static int nprogs;

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
scan(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[512];
		struct stat st;
		size_t n = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (stat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode) && strcmp(p, "test/err") && strcmp(p, "test/golden"))
			scan(p);
		else if (S_ISREG(st.st_mode) && n > 5 && !strcmp(e->d_name + n - 5, ".tile") &&
		         nprogs < MAXPROG)
			progs[nprogs++] = strdup(p);
	}
	closedir(d);
}

static void
load_corpus(void)
{
	if (nprogs)
		return;
	scan("samples");
	scan("test");
	qsort(progs, (size_t)nprogs, sizeof progs[0], cmpstr);
}

/* ---- deterministic mutations ------------------------------------------------------------ */

typedef struct {
	char *s;
	size_t n, cap;
} Text;

static uint64_t
rnd(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
text_splice(Text *t, size_t at, size_t del, const char *ins, size_t nins)
{
	if (at > t->n)
		at = t->n;
	if (del > t->n - at)
		del = t->n - at;
	if (t->n - del + nins + 1 > t->cap) {
		t->cap = t->n - del + nins + 64;
		t->s = realloc(t->s, t->cap);
		ck_assert_ptr_nonnull(t->s);
	}
	memmove(t->s + at + nins, t->s + at + del, t->n - at - del);
	memcpy(t->s + at, ins, nins);
	t->n = t->n - del + nins;
	t->s[t->n] = 0;
}

static int
isword(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '.';
}

/* the token at or after pos: [*b, *e) */
static int
token_at(const Text *t, size_t pos, size_t *b, size_t *e)
{
	size_t i = pos;

	while (i < t->n && (t->s[i] == ' ' || t->s[i] == '\n' || t->s[i] == '\t'))
		i++;
	if (i >= t->n)
		return 0;
	*b = i;
	if (isword((unsigned char)t->s[i]))
		while (i < t->n && isword((unsigned char)t->s[i]))
			i++;
	else
		i++;
	*e = i;
	return 1;
}

static const char *const edge_numbers[] = {
	"0", "-1", "1", "2147483648", "2147483647", "-2147483648", "9223372036854775807",
	"-9223372036854775808", "9223372036854775808", "18446744073709551616", "4294967296",
	"65536", "1073741824", "0x7fffffff", "0xffffffffffffffff", "1e308", "1e-320", "3",
	"99999999999999999999999999", "4611686018427387904",
};

/* the line [b, e) holding pos */
static void
line_at(const Text *t, size_t pos, size_t *b, size_t *e)
{
	size_t i = pos < t->n ? pos : t->n ? t->n - 1 : 0;

	while (i > 0 && t->s[i - 1] != '\n')
		i--;
	*b = i;
	while (i < t->n && t->s[i] != '\n')
		i++;
	*e = i < t->n ? i + 1 : i;
}

static void
mutate_once(Text *t, uint64_t *st)
{
	size_t pos = t->n ? (size_t)(rnd(st) % t->n) : 0, b, e;
	unsigned op = (unsigned)(rnd(st) % 9);

	switch (op) {
	case 0: /* flip a bit */
		if (t->n)
			t->s[pos] ^= (char)(1u << (rnd(st) % 8));
		break;
	case 1: /* delete a token */
		if (token_at(t, pos, &b, &e))
			text_splice(t, b, e - b, "", 0);
		break;
	case 2: /* duplicate a token */
		if (token_at(t, pos, &b, &e)) {
			char tok[256];
			size_t n = e - b < sizeof tok ? e - b : sizeof tok;

			memcpy(tok, t->s + b, n);
			text_splice(t, e, 0, tok, n);
		}
		break;
	case 3: /* replace a number with an edge value (the next number from pos, else any) */
	case 4: {
		size_t i;
		const char *v = edge_numbers[rnd(st) % countof(edge_numbers)];

		for (i = pos; i < t->n; i++)
			if (t->s[i] >= '0' && t->s[i] <= '9' && (i == 0 || !isword((unsigned char)t->s[i - 1])))
				break;
		if (i >= t->n)
			for (i = 0; i < t->n; i++)
				if (t->s[i] >= '0' && t->s[i] <= '9' &&
				    (i == 0 || !isword((unsigned char)t->s[i - 1])))
					break;
		if (i < t->n && token_at(t, i, &b, &e))
			text_splice(t, b, e - b, v, strlen(v));
		break;
	}
	case 5: { /* swap two lines */
		size_t b2, e2, p2 = t->n ? (size_t)(rnd(st) % t->n) : 0;
		char *l1, *l2;
		size_t n1, n2;

		line_at(t, pos, &b, &e);
		line_at(t, p2, &b2, &e2);
		if (b2 < b) {
			size_t x = b; b = b2; b2 = x; x = e; e = e2; e2 = x;
		}
		if (b == b2 || e > b2)
			break;
		n1 = e - b, n2 = e2 - b2;
		l1 = malloc(n1 + 1), l2 = malloc(n2 + 1);
		memcpy(l1, t->s + b, n1);
		memcpy(l2, t->s + b2, n2);
		text_splice(t, b2, n2, l1, n1);
		text_splice(t, b, n1, l2, n2);
		free(l1);
		free(l2);
		break;
	}
	case 6: /* delete a line */
		line_at(t, pos, &b, &e);
		text_splice(t, b, e - b, "", 0);
		break;
	case 7: { /* insert a byte from the language's punctuation, or any byte */
		static const char punct[] = "(){}[]<>,;:=+-*/%&|^!~?.@#\"'\\\n0";
		char c = rnd(st) % 4 ? punct[rnd(st) % (sizeof punct - 1)] : (char)(rnd(st) & 0xff);

		text_splice(t, pos, 0, &c, 1);
		break;
	}
	case 8: /* truncate */
		if (rnd(st) % 4 == 0)
			text_splice(t, pos, t->n - pos, "", 0);
		else
			mutate_once(t, st);
		break;
	}
}

/* mutant k of src (deterministic in the file name and k) */
static void
make_mutant(const char *name, const char *src, size_t len, int k, Text *t)
{
	uint64_t st = 0x6d75746174652d31ull ^ (uint64_t)k * 0x100000001b3ull;
	const char *p;
	int i, nm;

	for (p = name; *p; p++)
		st = (st ^ (unsigned char)*p) * 0x100000001b3ull;
	t->cap = len + 64;
	t->s = malloc(t->cap);
	ck_assert_ptr_nonnull(t->s);
	memcpy(t->s, src, len);
	t->n = len;
	t->s[len] = 0;
	nm = 1 + (int)(rnd(&st) % 3);
	for (i = 0; i < nm; i++)
		mutate_once(t, &st);
}

/* ---- running a mutant through every stage ----------------------------------------------- */

static const struct {
	tilec_dump dump;
	tilec_target target;
	const char *arch;
} modes[] = {
	{TILEC_DUMP_AST, TILEC_TARGET_CUDA, NULL},       {TILEC_DUMP_IR, TILEC_TARGET_CUDA, NULL},
	{TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "sm_80"},   {TILEC_DUMP_CUDA, TILEC_TARGET_CUDA, "sm_90a"},
	{TILEC_DUMP_CUDA, TILEC_TARGET_HIP, "gfx90a"},   {TILEC_DUMP_LAYOUTS, TILEC_TARGET_CUDA, NULL},
	{TILEC_DUMP_EXPLAIN, TILEC_TARGET_CUDA, NULL},   {TILEC_DUMP_HEADER, TILEC_TARGET_CUDA, "sm_80"},
};

/* 0 fine; else a description of what is wrong (the child exits with it) */
static const char *
run_modes(const char *src, size_t len, int k)
{
	size_t m;

	for (m = 0; m < countof(modes); m++) {
		tilec_options o;
		tilec_result r;
		const char *bad = NULL;

		/* explain and layouts repeat inference: every other mutant */
		if ((modes[m].dump == TILEC_DUMP_EXPLAIN || modes[m].dump == TILEC_DUMP_LAYOUTS) &&
		    (k & 1) != (modes[m].dump == TILEC_DUMP_EXPLAIN))
			continue;
		tilec_options_init(&o);
		o.filename = "mutant.tile";
		o.dump = modes[m].dump;
		o.target = modes[m].target;
		o.arch = modes[m].arch;
		o.caret = k % 3 == 0;
		alarm(MUTANT_SECONDS); /* per compile: samples/softmax.tile takes 3.5 s in SAN */
		tilec_compile(src, len, &o, &r);
		alarm(0);
		if (r.status != TILEC_OK && (!r.diagnostics || !strstr(r.diagnostics, "error")))
			bad = "an error without a message";
		else if (r.status != TILEC_OK && r.output && r.output[0])
			bad = "an error with output";
		else if (r.status == TILEC_OK && m > 0 && !r.output[0] && modes[m].dump != TILEC_DUMP_AST)
			bad = "success with no output";
		tilec_result_free(&r);
		if (bad)
			return bad;
		if (m == 0 && r.status != TILEC_OK)
			break; /* it does not parse: the other stages see the same error */
	}
	return NULL;
}

/* ---- CuTe lines ---------------------------------------------------------------------------- */

static const char *const cute_lines[] = {
	"size\t(2,3):(1,2)", "cosize\t((2,2),3):((1,4),2)", "coalesce\t(2,(1,6)):(1,(6,2))",
	"composition\t(6,2):(8,2)\t(4,3):(3,1)", "complement\t(2,2):(1,6)\t24",
	"right_inverse\t(4,2):(1,4)", "left_inverse\t(2,4):(4,1)",
	"logical_divide\t(4,2,3):(2,1,8)\t4:2", "zipped_divide\t(8,8):(1,8)\t(2,4)",
	"logical_product\t(2,2):(4,1)\t6:1", "blocked_product\t(2,5):(5,1)\t(3,4):(1,3)",
	"raked_product\t(2,2):(1,2)\t(3,3):(1,3)", "with_shape\t16:1\t(4,4)",
	"eval\t(2,3):(1,2)\t5", "eval\t((2,2),3):((1,4),2)\t(1,2)", "swizzle\tSw<3,4,3>\t77",
	"composition\tSw<2,0,2>\t(4,4):(4,1)", "filter\t(2,1,3):(1,0,2)", "depth\t((2,(2,2)),3)",
	"restrict\t(4,8):(8,1)\t(2,2)", "flat_product\t(2,2):(1,2)\t3:1", "tiled_divide\t16:1\t4",
};

static const char *
run_cute(const char *line)
{
	char *copy = strdup(line), *tab, *args[3];
	int nargs = 0;
	Arena a;
	Buf out;
	Err err;

	if (!copy)
		return NULL;
	if ((tab = strchr(copy, '\t'))) {
		*tab = 0;
		args[nargs++] = tab + 1;
		if ((tab = strchr(args[0], '\t'))) {
			*tab = 0;
			args[nargs++] = tab + 1;
		}
	}
	arena_init(&a);
	buf_init(&out);
	memset(&err, 0, sizeof err);
	if (nargs && cute_run_op(&a, copy, nargs, (const char *const *)args, &out, &err) < 0 &&
	    !err.msg[0]) {
		free(copy);
		return "a CuTe error without a message";
	}
	buf_free(&out);
	arena_free(&a);
	free(copy);
	return NULL;
}

/* ---- batches in a child ---------------------------------------------------------------------- */

/* the child's progress, shared with the parent */
typedef struct {
	volatile int current; /* the mutant being run */
	char why[128];        /* a check that failed */
} Shared;

static Shared *shm;

/* LeakSanitizer's check, in the sanitizer build only */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static int nfail, nfindings, nmutants;
static char faillog[1800]; /* Check caps a message at about 4 KiB */

static void
addlog(const char *name, int k, const char *why, const char *repro)
{
	size_t n = strlen(faillog);

	if (n + 300 < sizeof faillog)
		snprintf(faillog + n, sizeof faillog - n, "%s mutant %d: %s -> %s\n", name, k, why,
		         repro);
}

/* one batch: mutants [from, MUTANTS) of program i (or the CuTe lines for i < 0) */
static void
child(const char *name, const char *src, size_t len, int from)
{
	int k;

	/* the test process inherited Check's SIGALRM handler, which kills the whole process
	 * group: a mutant's alarm must only end this child */
	signal(SIGALRM, SIG_DFL);
	for (k = from; k < MUTANTS; k++) {
		Text t;
		const char *bad;

		shm->current = k;
		make_mutant(name, src, len, k, &t);
		if (!strncmp(name, "<cute>", 6)) {
			alarm(MUTANT_SECONDS);
			bad = run_cute(t.s);
			alarm(0);
		} else {
			bad = run_modes(t.s, t.n, k);
		}
		free(t.s);
		if (bad) {
			snprintf(shm->why, sizeof shm->why, "%s", bad);
			_exit(3);
		}
	}
	/* _exit: none of the test process's atexit handlers run twice; leaks still fail it */
	if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
		snprintf(shm->why, sizeof shm->why, "a memory leak");
		_exit(4);
	}
	_exit(0);
}

static char *
slurp(const char *path)
{
	size_t n;

	return test_readfile(path, &n);
}

/* a known finding: UBSan's integer overflow / shift reports in gen/ (another branch bounds them) */
static int
known_ub(const char *log)
{
	const char *p = strstr(log, "runtime error: ");

	if (!p || !strstr(log, "gen/"))
		return 0;
	return strstr(p, "signed integer overflow") || strstr(p, "shift exponent") ||
	       strstr(p, "left shift of") || strstr(p, "negation of") ||
	       strstr(p, "is outside the range of representable values");
}

static void
run_batches(const char *name, const char *src, size_t len)
{
	int from = 0;

	mkdir("build", 0755);
	mkdir("build/mutate", 0755);
	while (from < MUTANTS) {
		char errpath[128], repro[512], safe[256];
		int status, k;
		pid_t pid;
		size_t i;

		snprintf(errpath, sizeof errpath, "build/mutate/child-%d.err", (int)getpid());
		shm->current = -1;
		shm->why[0] = 0;
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			FILE *f = freopen(errpath, "w", stderr);

			(void)f;
			child(name, src, len, from);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			nmutants += MUTANTS - from;
			unlink(errpath);
			return;
		}
		/* the failing mutant: written as a reproducer */
		k = shm->current;
		nmutants += k - from + 1;
		for (i = 0; name[i] && i + 1 < sizeof safe; i++)
			safe[i] = name[i] == '/' || name[i] == '<' || name[i] == '>' ? '_' : name[i];
		safe[i] = 0;
		snprintf(repro, sizeof repro, "build/mutate/%s.%d.tile", safe, k);
		{
			Text t;
			FILE *f;
			char *log = slurp(errpath);
			char why[256];

			make_mutant(name, src, len, k, &t);
			f = fopen(repro, "wb");
			if (f) {
				fwrite(t.s, 1, t.n, f);
				fclose(f);
			}
			free(t.s);
			if (WIFSIGNALED(status))
				snprintf(why, sizeof why, "%s %d", WTERMSIG(status) == SIGALRM ? "a hang: signal"
				         : "a crash: signal", WTERMSIG(status));
			else
				snprintf(why, sizeof why, "%s", shm->why[0] ? shm->why : "exit status");
			if (log && known_ub(log)) {
				const char *p = strstr(log, "gen/");
				char line[160];

				nfindings++;
				snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
				fprintf(stderr, "mutate: known finding (integer overflow in gen/, rob-bounds): "
				        "%s: %s\n", repro, line);
			} else {
				nfail++;
				addlog(name, k, why, repro);
				if (log)
					fprintf(stderr, "mutate: %s mutant %d (%s):\n%.2000s\n", name, k, why, log);
			}
			free(log);
		}
		unlink(errpath);
		from = k + 1;
	}
}

START_TEST(mutants_of_every_program)
{
	int i;
	char *cute_text;
	size_t cn = 0, ci;

	load_corpus();
	ck_assert_int_ge(nprogs, 40); /* samples/ and test/ */
	shm = mmap(NULL, sizeof *shm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(shm, MAP_FAILED);
	for (i = 0; i < nprogs; i++) {
		size_t len;
		char *src = test_readfile(progs[i], &len);

		ck_assert_ptr_nonnull(src);
		if (getenv("MUTATE_VERBOSE"))
			fprintf(stderr, "mutate: %s\n", progs[i]);
		run_batches(progs[i], src, len);
		free(src);
	}
	/* the CuTe lines: each line's mutants (the "program" is the one line) */
	for (ci = 0; ci < countof(cute_lines); ci++) {
		char name[64];

		snprintf(name, sizeof name, "<cute>%zu", ci);
		cute_text = strdup(cute_lines[ci]);
		cn = strlen(cute_text);
		run_batches(name, cute_text, cn);
		free(cute_text);
	}
	fprintf(stderr, "mutate: %d programs + %zu CuTe lines, %d mutants, %d failures, "
	        "%d known findings\n", nprogs, countof(cute_lines), nmutants, nfail, nfindings);
	munmap(shm, sizeof *shm);
	ck_assert_msg(nfail == 0, "%d mutants failed:\n%s", nfail, faillog);
}
END_TEST

Suite *
suite_mutate(void)
{
	Suite *s = suite_create("mutate");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 600);
	tcase_add_test(t, mutants_of_every_program);
	suite_add_tcase(s, t);
	return s;
}
