/*
 * fuzz_diff.c: the differential fuzzer. For seed after seed until the time is
 * up: generate a tile program (cpu/progen.h), check it with sema, compile it
 * to CUDA C, and (when cpu/run.c is built: TILEC_HAVE_RUN) run it on the CPU
 * through tilec_run, the reference interpreter against the emitted code, with
 * the generator's sizes; sm_80, and sm_90a for one program in four, or the
 * arch of -a: one arch (sm_80, sm_90, sm_90a; gfx90a, gfx942, gfx1100 emit HIP
 * C for the CPU stand-in of tilec_hip.h) or "hip" (gfx90a, gfx942, gfx1100 in
 * turn).
 *
 * Classes: agree; differ (an output differs, or the CPU run of the emitted
 * code failed); crash (tilec died: a signal in the child that compiles and
 * runs it); refused (tilec's layout inference or emission declined with a
 * reason); no-meaning (the interpreter rejects the program: a generator bug
 * unless rare); sema (a generator bug); error (tilec_run could not build or
 * run). Without tilec_run a program that emits counts as "emitted".
 * Every differing or crashing program is written to DIR/<seed>.tile with its
 * report in DIR/<seed>.txt; generator bugs (sema, no-meaning) to
 * DIR/gen-<seed>.tile/.txt, errors (the emitted code did not build) to DIR/err-<seed>.*. Exit status 1 when any program differs or crashes.
 *
 *   fuzz_diff [-t SECONDS] [-s FIRST_SEED] [-n COUNT] [-f FEATURES] [-a ARCH] [-o DIR] [-v] [-q]
 */
#include <sys/stat.h>
#include <time.h>

#include "../progen_check.h"

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
	fprintf(stderr, "usage: fuzz_diff [-t SECONDS] [-s FIRST_SEED] [-n COUNT] [-f FEATURES] [-a ARCH] [-o DIR] [-v] [-q]\n"
			"  -v: every seed's class, and the refused programs kept in DIR as ref-SEED.tile\n"
			"  ARCH: sm_80, sm_90, sm_90a, gfx90a, gfx942, gfx1100 (HIP C), hip (the three gfx in turn);\n"
			"  default sm_80, sm_90a for seeds = 3 mod 4\n"
			"  FEATURES: all or a list of half,fp8,int,math,shared,global,slice,loop,if,pipe,\n"
			"  reduce,gemm,rank3,assume,scalar,let,layout (a leading - removes one: all,-gemm)\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	double seconds = 60;
	unsigned long long seed = 1, count = 0, done = 0;
	unsigned features = PG_ALL;
	const char *dir = "build/fuzz-diff", *aopt = NULL;
	static const char *const hips[] = {"gfx90a", "gfx942", "gfx1100"};
	int verbose = 0, quiet = 0, i, c, nrs = 0, ngr = 0;
	long cls[C_COUNT] = {0}, runs = 0;
	static Reason rs[256], gr[64];
	time_t t0 = time(NULL);

	while ((c = getopt(argc, argv, "t:s:n:f:a:o:vq")) != -1) {
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
		case 'a':
			aopt = optarg;
			if (strcmp(aopt, "hip") && !tilec_arch_valid(TILEC_TARGET_CUDA, aopt) &&
			    !tilec_arch_valid(TILEC_TARGET_HIP, aopt)) {
				fprintf(stderr, "fuzz_diff: unknown arch '%s'\n", aopt);
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
	printf("fuzz_diff: generate, compile, run on the CPU (interpreter vs emitted code); seeds from %llu, %g s, "
	       "arch %s\n", seed, seconds, aopt ? aopt : "sm_80 (sm_90a for seeds = 3 mod 4)");
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
		arch = !aopt ? (seed % 4 == 3 ? "sm_90a" : "sm_80") : !strcmp(aopt, "hip") ? hips[seed % 3] : aopt;
		check_forked(buf_str(&src), buf_str(&sizes), arch, 300, &r, &rep);
		done++;
		cls[r.cls]++;
		runs += r.runs;
		if (r.cls == C_REFUSED || r.cls == C_ERROR)
			count_reason(rs, &nrs, (int)countof(rs), r.why, seed);
		if (r.cls == C_DIFFER || r.cls == C_CRASH || r.cls == C_SEMA || r.cls == C_NOMEANING || r.cls == C_ERROR ||
		    (verbose && r.cls == C_REFUSED)) {
			const char *pre = r.cls == C_SEMA || r.cls == C_NOMEANING ? "gen-" : r.cls == C_ERROR ? "err-" :
					  r.cls == C_REFUSED ? "ref-" : "";

			if (r.cls == C_DIFFER || r.cls == C_CRASH)
				count_reason(gr, &ngr, (int)countof(gr), r.why, seed);
			/* -v: refused programs are kept too (ref-SEED.tile), to look at what is refused */
			snprintf(path, sizeof path, "%s/%s%llu.tile", dir, pre, seed);
			writefile(path, buf_str(&src));
			snprintf(path, sizeof path, "%s/%s%llu.txt", dir, pre, seed);
			writefile(path, buf_str(&rep));
			if (!quiet)
				printf("seed %llu (%s): %s: %s (%s/%s%llu.tile)\n", seed, arch, pc_cname[r.cls], r.why, dir,
				       pre, seed);
		} else if (verbose) {
			printf("seed %llu (%s): %s%s%s\n", seed, arch, pc_cname[r.cls], *r.why ? ": " : "", r.why);
		}
		fflush(stdout);
		buf_free(&src);
		buf_free(&sizes);
		buf_free(&rep);
	}
	printf("\n== fuzz_diff summary: %llu programs, %ld runs, %.0f s\n", done, runs, difftime(time(NULL), t0));
	for (i = 0; i < C_COUNT; i++)
		if (cls[i] || i == C_DIFFER)
			printf("  %-11s %ld\n", pc_cname[i], cls[i]);
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
