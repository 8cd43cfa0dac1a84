/*
 * driver.c: `tilec [options] file.tile`, the compiler's command line. It
 * parses the options with getopt_long, reads the source, calls tilec_compile,
 * prints the diagnostics (with the source line and a caret when stderr is a
 * terminal) and writes the output. Exit 0 ok, 1 source error, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "layout.h"
#include "tilec.h"
#include "tl.h"

static const char usage_text[] =
	"usage: tilec [options] file.tile\n"
	"Check a tile-language program and compile it to CUDA C or HIP C.\n"
	"\n"
	"options:\n"
	"  -o, --output=FILE      write the output to FILE (default: standard output for --dump)\n"
	"      --target=T         cuda (default) or hip\n"
	"      --arch=A           cuda: sm_80 (default), sm_90, sm_90a;\n"
	"                         hip: gfx90a, gfx942 (default), gfx1100 (alone, it picks hip)\n"
	"  -D, --define=NAME=VAL  set the constant NAME to VAL (an integer or a float)\n"
	"      --dump=KIND        print the program after a stage: ast, ir, layouts, lowered, cuda,\n"
	"                         hip or header (lowered: the per-thread lowered kernel IR; CUDA C\n"
	"                         for --target=cuda, HIP C for --target=hip, also chosen by\n"
	"                         -o FILE.cu or -o FILE.hip when no --dump is given; header: the\n"
	"                         C launchers of the CUDA C)\n"
	"      --header=FILE      also write the C launcher header of the CUDA C to FILE\n"
	"      --explain          print every layout inference attempt's cost by statement\n"
	"      --cost-model=M     layout inference cost model: io-aware (default) or register-count\n"
	"      --no-tma           sm_90a: pipelines of loads and wgmma gemms load with cp.async, not with\n"
	"                         TMA and mbarriers (the default where the tiles allow; tensor maps are\n"
	"                         trailing kernel parameters that the launchers build); --tma: the default\n"
	"      --warp-specialize  sm_90a: a TMA pipeline gets a producer warpgroup that only issues the\n"
	"                         loads (setmaxnreg 24; the kernel's threads consume, setmaxnreg 240);\n"
	"                         the block grows by 128 threads (off by default: to be measured)\n"
	"      --raster-group=G   a kernel with a 2-D grid takes its tiles in groups of G rows of\n"
	"                         tiles, column by column in a group (L2 reuse); 0: launch order;\n"
	"                         auto (the default): 8 for a GEMM main loop on sm_90a, else 0\n"
	"      --persistent       a kernel with a 2-D grid runs min(tiles, SMs x blocks per SM) blocks,\n"
	"                         each looping over tiles (a TMA pipeline's stages carried over them);\n"
	"                         the launch contract says so (off by default: to be measured)\n"
	"      --epilogue=E       how a tile in registers reaches global memory after a GEMM's\n"
	"                         pipeline: shared (through a swizzled shared tile on the stages'\n"
	"                         bytes, 16-byte stores), direct (from the fragment), or auto (the\n"
	"                         default: shared on sm_90a without --warp-specialize)\n"
	"      --enum-limit=N     largest domain (points) an exact layout check enumerates\n"
	"                         (default 4194304; mixed-radix layouts are decided without one)\n"
	"      --time[=N]         run the front end N times (default 5), print the median time\n"
	"      --print-passes     list the passes of the pipeline (after plugins) and exit\n"
	"      --print-before=P   print the IR before pass P (or all) to standard error\n"
	"      --print-after=P    print the IR after pass P (or all) to standard error\n"
	"      --plugin=LIB.so    load passes from a plugin (runtime/tilec_plugin.h); repeatable\n"
	"      --dump-layout-to-output  put dump_layout text into the output as comments\n"
	"                         (default: standard error)\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"A file named - is read from standard input. Inputs are at most 16 MiB\n"
	"(TILEC_MAX_INPUT=BYTES, or with a K, M or G suffix, changes it). Output files\n"
	"are written whole or not at all (a temporary file renamed into place) and never\n"
	"replace an input.\n"
	"Exit status: 0 success, 1 an error in the input, 2 a usage error.\n";

static int
usage_error(const char *fmt, const char *arg)
{
	fputs("tilec: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\ntry 'tilec --help'\n", stderr);
	return 2;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* --time: compile n times, print the median wall time of tilec_compile */
static int
timeit(const char *src, size_t len, const tilec_options *o, int n)
{
	double t[101];
	tilec_result r;
	int i;

	for (i = 0; i < n; i++) {
		double t0 = now_ms();

		tilec_compile(src, len, o, &r);
		t[i] = now_ms() - t0;
		if (r.status != TILEC_OK) {
			fputs(r.diagnostics, stderr);
			tilec_result_free(&r);
			return 1;
		}
		tilec_result_free(&r);
	}
	qsort(t, (size_t)n, sizeof t[0], cmpd);
	printf("front end: median %.3f ms over %d runs (min %.3f, max %.3f), %zu bytes\n",
	       t[n / 2], n, t[0], t[n - 1], len);
	return 0;
}

/* --header=FILE: the same compile with TILEC_DUMP_HEADER, written to FILE */
static int
writeheader(const char *src, size_t len, const tilec_options *opt, const char *path)
{
	tilec_options o = *opt;
	tilec_result r;
	int rc;

	o.dump = TILEC_DUMP_HEADER;
	o.print_before = o.print_after = NULL;
	tilec_compile(src, len, &o, &r);
	fputs(r.diagnostics, stderr);
	rc = r.status == TILEC_OK ? 0 : r.status == TILEC_ERR_ARG ? 2 : 1;
	if (rc == 0 && cli_write_file(path, r.output, strlen(r.output))) {
		fprintf(stderr, "tilec: error: cannot write %s: %s\n", path, strerror(errno));
		rc = 1;
	}
	tilec_result_free(&r);
	return rc;
}

enum {
	OPT_TARGET = 256, OPT_ARCH, OPT_DUMP, OPT_TIME, OPT_EXPLAIN, OPT_TMA, OPT_NOTMA, OPT_WS, OPT_RASTER, OPT_PERSIST, OPT_EPILOGUE, OPT_COST, OPT_PRINT_PASSES,
	OPT_PRINT_BEFORE, OPT_PRINT_AFTER, OPT_PLUGIN, OPT_LAYOUT_OUT, OPT_HEADER, OPT_ENUM_LIMIT
};

int
driver_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"target", required_argument, NULL, OPT_TARGET},
		{"arch", required_argument, NULL, OPT_ARCH},
		{"define", required_argument, NULL, 'D'},
		{"dump", required_argument, NULL, OPT_DUMP},
		{"explain", no_argument, NULL, OPT_EXPLAIN},
		{"tma", no_argument, NULL, OPT_TMA},
		{"no-tma", no_argument, NULL, OPT_NOTMA},
		{"warp-specialize", no_argument, NULL, OPT_WS},
		{"raster-group", required_argument, NULL, OPT_RASTER},
		{"persistent", no_argument, NULL, OPT_PERSIST},
		{"epilogue", required_argument, NULL, OPT_EPILOGUE},
		{"cost-model", required_argument, NULL, OPT_COST},
		{"enum-limit", required_argument, NULL, OPT_ENUM_LIMIT},
		{"time", optional_argument, NULL, OPT_TIME},
		{"print-passes", no_argument, NULL, OPT_PRINT_PASSES},
		{"print-before", required_argument, NULL, OPT_PRINT_BEFORE},
		{"print-after", required_argument, NULL, OPT_PRINT_AFTER},
		{"plugin", required_argument, NULL, OPT_PLUGIN},
		{"dump-layout-to-output", no_argument, NULL, OPT_LAYOUT_OUT},
		{"header", required_argument, NULL, OPT_HEADER},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	tilec_options o;
	tilec_result r;
	const char *out = NULL, *path, *header = NULL;
	const char **defs, **plugins;
	char msg[256], *src;
	size_t len;
	int c, ndef = 0, ntime = 0, rc, target_given = 0, nplug = 0, dump_hip = 0;

	tilec_options_init(&o);
	defs = calloc((size_t)argc + 1, sizeof *defs);
	plugins = calloc((size_t)argc + 1, sizeof *plugins);
	if (!defs || !plugins) {
		free(defs);
		free(plugins);
		fputs("tilec: error: out of memory\n", stderr);
		return 1;
	}
	o.plugins = plugins;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:D:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_TARGET:
			target_given = 1;
			if (!strcmp(optarg, "cuda"))
				o.target = TILEC_TARGET_CUDA;
			else if (!strcmp(optarg, "hip"))
				o.target = TILEC_TARGET_HIP;
			else {
				free(defs);
				free(plugins);
				return usage_error("unknown target '%s' (cuda or hip)", optarg);
			}
			break;
		case OPT_ARCH:
			o.arch = optarg;
			break;
		case 'D':
			if (tilec_define_check(optarg, msg, sizeof msg)) {
				fprintf(stderr, "tilec: error: -D %s: %s\ntry 'tilec --help'\n", optarg,
					msg);
				free(defs);
				free(plugins);
				return 2;
			}
			defs[ndef++] = optarg;
			break;
		case OPT_DUMP:
			if (!strcmp(optarg, "ast"))
				o.dump = TILEC_DUMP_AST;
			else if (!strcmp(optarg, "ir"))
				o.dump = TILEC_DUMP_IR;
			else if (!strcmp(optarg, "cuda"))
				o.dump = TILEC_DUMP_CUDA;
			else if (!strcmp(optarg, "hip"))
				o.dump = TILEC_DUMP_CUDA, dump_hip = 1;
			else if (!strcmp(optarg, "layouts"))
				o.dump = TILEC_DUMP_LAYOUTS;
			else if (!strcmp(optarg, "header"))
				o.dump = TILEC_DUMP_HEADER;
			else if (!strcmp(optarg, "lowered"))
				o.dump = TILEC_DUMP_LOWERED;
			else {
				free(defs);
				free(plugins);
				return usage_error("unknown dump kind '%s' (ast, ir, layouts or cuda; lowered: the lowered IR; hip for "
						   "HIP C; header: the launcher header)", optarg);
			}
			break;
		case OPT_EXPLAIN:
			o.dump = TILEC_DUMP_EXPLAIN;
			break;
		case OPT_TMA:
			o.tma = 1;
			break;
		case OPT_NOTMA:
			o.tma = 0;
			break;
		case OPT_WS:
			o.warp_specialize = 1;
			break;
		case OPT_RASTER:
			if (cli_raster_group(optarg, &o.raster_group)) {
				free(defs);
				free(plugins);
				return usage_error("--raster-group: '%s' is not auto or a number of rows from 0 to 65535",
						   optarg);
			}
			break;
		case OPT_PERSIST:
			o.persistent = 1;
			break;
		case OPT_EPILOGUE:
			if (cli_epilogue(optarg, &o.epilogue)) {
				free(defs);
				free(plugins);
				return usage_error("--epilogue: '%s' is not auto, direct or shared", optarg);
			}
			break;
		case OPT_COST:
			if (!strcmp(optarg, "io-aware"))
				o.cost_model = TILEC_COST_IO_AWARE;
			else if (!strcmp(optarg, "register-count"))
				o.cost_model = TILEC_COST_REGISTER_COUNT;
			else {
				free(defs);
				free(plugins);
				return usage_error("unknown cost model '%s' (io-aware or register-count)",
						   optarg);
			}
			break;
		case OPT_ENUM_LIMIT: {
			char *end;
			long long v = strtoll(optarg, &end, 10);

			if (*end || end == optarg || v < 1 || v > ((long long)1 << 40) ||
			    layout_set_enum_limit(v)) {
				free(defs);
				free(plugins);
				return usage_error("--enum-limit=%s: expected a point count from 1 to 2^40",
						   optarg);
			}
			break;
		}
		case OPT_TIME:
			ntime = 5;
			if (optarg) {
				char *end;
				long v = strtol(optarg, &end, 10);

				if (*end || v < 1 || v > 101) {
					free(defs);
					free(plugins);
					return usage_error("--time=%s: expected a count from 1 to "
					     "101",
							   optarg);
				}
				ntime = (int)v;
			}
			break;
		case OPT_PRINT_PASSES:
			o.print_passes = 1;
			break;
		case OPT_PRINT_BEFORE:
			o.print_before = optarg;
			break;
		case OPT_PRINT_AFTER:
			o.print_after = optarg;
			break;
		case OPT_PLUGIN:
			plugins[nplug++] = optarg;
			o.nplugins = nplug;
			break;
		case OPT_LAYOUT_OUT:
			o.layout_dump_to_output = 1;
			break;
		case OPT_HEADER:
			header = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free(defs);
			free(plugins);
			return 0;
		case 'V':
			printf("tilec %s\n", tilec_version());
			free(defs);
			free(plugins);
			return 0;
		case ':':
			free(defs);
			free(plugins);
			cli_optname(argc, argv, longopts, msg, sizeof msg, NULL);
			return usage_error("option '%s' needs an argument", msg);
		default: {
			int gave;

			free(defs);
			free(plugins);
			cli_optname(argc, argv, longopts, msg, sizeof msg, &gave);
			return usage_error(gave ? "option '%s' takes no argument" : "unknown option '%s'",
			                   msg);
		}
		}
	}
	/* -o x.cu without --dump writes CUDA C */
	if (out && o.dump == TILEC_DUMP_NONE && strlen(out) > 3 && !strcmp(out + strlen(out) - 3, ".cu"))
		o.dump = TILEC_DUMP_CUDA;
	/* -o x.hip without --dump writes HIP C; --dump=hip picks the hip target */
	if (out && o.dump == TILEC_DUMP_NONE && strlen(out) > 4 && !strcmp(out + strlen(out) - 4, ".hip"))
		o.dump = TILEC_DUMP_CUDA, dump_hip = 1;
	if (dump_hip && target_given && o.target != TILEC_TARGET_HIP) {
		free(defs);
		free(plugins);
		return usage_error("%s", "HIP C is emitted for --target=hip only");
	}
	if (dump_hip)
		o.target = TILEC_TARGET_HIP, target_given = 1;
	/* --arch=gfx... alone picks hip */
	if (o.arch && !target_given && tilec_arch_valid(TILEC_TARGET_HIP, o.arch))
		o.target = TILEC_TARGET_HIP;
	if (o.arch && !tilec_arch_valid(o.target, o.arch)) {
		free(defs);
		free(plugins);
		return usage_error(o.target == TILEC_TARGET_CUDA
					   ? "unknown cuda arch '%s' (sm_80, sm_90 or sm_90a)"
					   : "unknown hip arch '%s' (gfx90a, gfx942 or gfx1100)",
				   o.arch);
	}
	if (header && o.target != TILEC_TARGET_CUDA) {
		free(defs);
		free(plugins);
		return usage_error("--header=%s: the launcher header is for the cuda target", header);
	}
	if (optind >= argc && o.print_passes) {
		tilec_compile("", 0, &o, &r);
		fputs(r.diagnostics, stderr);
		fputs(r.output, stdout);
		rc = r.status == TILEC_OK ? 0 : r.status == TILEC_ERR_ARG ? 2 : 1;
		tilec_result_free(&r);
		free(defs);
		free(plugins);
		return rc;
	}
	if (optind >= argc) {
		free(defs);
		free(plugins);
		return usage_error("%s", "no input file");
	}
	if (optind + 1 < argc) {
		free(defs);
		free(plugins);
		return usage_error("more than one input file ('%s' ...)", argv[optind + 1]);
	}
	path = argv[optind];
	/* an output never replaces an input, and two outputs are never one file */
	{
		const char *clash = NULL;
		int i;

		if (out && header && cli_same_file(out, header))
			clash = "-o and --header name the same file";
		else if (strcmp(path, "-") && out && cli_same_file(out, path))
			clash = "the output (-o) is the input file";
		else if (strcmp(path, "-") && header && cli_same_file(header, path))
			clash = "the --header output is the input file";
		else if (!strcmp(path, "-") && ((out && cli_same_as_stdin(out)) ||
		                                (header && cli_same_as_stdin(header))))
			clash = "an output is the file on standard input";
		for (i = 0; !clash && i < nplug; i++)
			if ((out && cli_same_file(out, plugins[i])) ||
			    (header && cli_same_file(header, plugins[i])))
				clash = "an output is a --plugin library";
		if (clash) {
			free(defs);
			free(plugins);
			return usage_error("%s; refusing to overwrite it", clash);
		}
	}
	o.defines = defs;
	o.ndefines = ndef;
	o.filename = strcmp(path, "-") ? path : "<stdin>";
	o.caret = isatty(2);
	src = cli_readall(path, &len);
	if (!src) {
		fprintf(stderr, "tilec: error: cannot read %s: %s\n", path,
		        cli_read_error(errno, msg, sizeof msg));
		free(defs);
		free(plugins);
		return 1;
	}
	if (ntime) {
		rc = timeit(src, len, &o, ntime);
		free(src);
		free(defs);
		free(plugins);
		return rc;
	}
	tilec_compile(src, len, &o, &r);
	fputs(r.log, stderr);
	fputs(r.diagnostics, stderr);
	rc = r.status == TILEC_OK ? 0 : r.status == TILEC_ERR_ARG ? 2 : 1;
	if (rc == 0 && out) {
		if (cli_write_file(out, r.output, strlen(r.output))) {
			fprintf(stderr, "tilec: error: cannot write %s: %s\n", out, strerror(errno));
			rc = 1;
		}
	} else if (rc == 0 && (o.dump != TILEC_DUMP_NONE || o.print_passes)) {
		fputs(r.output, stdout);
	}
	tilec_result_free(&r);
	if (rc == 0 && header)
		rc = writeheader(src, len, &o, header);
	free(src);
	free(defs);
	free(plugins);
	return rc;
}
