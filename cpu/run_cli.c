/*
 * run_cli.c: `tilec run FILE.tile [options]`, the differential CPU check of a
 * program (runtime/tilec_run.h, docs/cpu.md). Exit 0 when every output of
 * every run agrees, 1 when one differs (a tilec bug), 2 on a usage error,
 * 3 when the program does not compile, has no meaning for the sizes, or
 * could not be built or run.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tilec.h"
#include "tilec_run.h"

static const char usage_text[] =
	"usage: tilec run [options] file.tile\n"
	"Run a tile program on the CPU two ways on the same random inputs, the reference\n"
	"interpreter and the CUDA C (or HIP C) tilec emits, built with a C++ compiler against\n"
	"the CPU emulation tilec_cpu.h (tilec_cpu_hip.h), and compare every output.\n"
	"\n"
	"options:\n"
	"      --sizes=LIST       size symbols and scalars, NAME=VALUE,...; sets separated by ';'\n"
	"                         run one after another (default: ragged sizes such as 211, 197)\n"
	"      --seed=S           seed of the random inputs (default 1)\n"
	"      --target=T         cuda (default) or hip: run the emitted HIP C against the CPU\n"
	"                         stand-in of tilec_hip.h (wavefronts of 64 or 32 lanes)\n"
	"      --arch=A           arch of the emitted code: sm_80, sm_90, sm_90a (default: sm_80,\n"
	"                         or sm_90a when sm_80 refuses the program);\n"
	"                         for hip gfx90a, gfx942 (default), gfx1100\n"
	"  -D, --define=NAME=VAL  set the constant NAME to VAL\n"
	"      --kernel=NAME      run only this kernel\n"
	"      --cxx=CXX          the C++ compiler (default $TILEC_CXX, $CXX, else c++)\n"
	"      --keep             keep the build directory\n"
	"      --timeout=S        seconds per CPU run (default 300)\n"
	"      --device=D         where the emitted code runs: cpu (default) or gpu (the CUDA\n"
	"                         driver's device 0 through NVRTC; --arch defaults to the device's)\n"
	"      --cuda=FILE        run the CUDA C in FILE instead of what tilec emits (its kernels\n"
	"                         must have the program's signatures): to check hand-edited code\n"
	"  -v, --verbose          report every output, not only those that differ\n"
	"      --no-tma           sm_90a: emit cp.async pipelines instead of TMA loads (--tma: the default)\n"
	"      --warp-specialize  sm_90a: a producer warpgroup issues the TMA loads (tilec --warp-specialize)\n"
	"      --raster-group=G   blocks of a 2-D grid in groups of G rows of tiles, 0 or auto (tilec\n"
	"                         --raster-group; auto, the default: 8 for a GEMM main loop on sm_90a)\n"
	"      --persistent       blocks loop over a 2-D grid's tiles (tilec --persistent); the CPU run\n"
	"                         launches 3 blocks (3 SMs of one block each)\n"
	"      --epilogue=E       auto, direct or shared: a GEMM's result tile stored from the fragment\n"
	"                         or through shared memory (tilec --epilogue)\n"
	"  -h, --help             show this help and exit\n"
	"\n"
	"Exit status: 0 all agree, 1 an output differs or the emitted code failed at run time,\n"
	"2 a usage error, 3 the program does not compile or cannot run for these sizes.\n";

static int
bad_usage(const char *fmt, const char *arg)
{
	fputs("tilec run: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\ntry 'tilec run --help'\n", stderr);
	return 2;
}

int
run_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sizes", required_argument, NULL, 's'}, {"seed", required_argument, NULL, 'S'},
		{"arch", required_argument, NULL, 'a'},  {"define", required_argument, NULL, 'D'},
		{"kernel", required_argument, NULL, 'k'}, {"cxx", required_argument, NULL, 'c'},
		{"keep", no_argument, NULL, 'K'},         {"timeout", required_argument, NULL, 't'},
		{"verbose", no_argument, NULL, 'v'},      {"help", no_argument, NULL, 'h'},
		{"cuda", required_argument, NULL, 'u'},  {"target", required_argument, NULL, 'T'},
		{"device", required_argument, NULL, 'G'}, {"tma", no_argument, NULL, 'M'},
		{"no-tma", no_argument, NULL, 'N'}, {"warp-specialize", no_argument, NULL, 'W'},
		{"raster-group", required_argument, NULL, 'R'},
		{"persistent", no_argument, NULL, 'P'},
		{"epilogue", required_argument, NULL, 'E'},
		{NULL, 0, NULL, 0},
	};
	tilec_run_options o;
	tilec_run_result r;
	const char **defs;
	char *src, *end, *cuda = NULL;
	const char *cudafile = NULL;
	size_t len = 0;
	int c, ndefs = 0, rc;

	tilec_run_options_init(&o);
	o.seed = 1;
	defs = calloc((size_t)argc + 1, sizeof *defs);
	if (!defs) {
		fputs("tilec run: error: out of memory\n", stderr);
		return 3;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":D:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o.sizes = optarg; break;
		case 'S':
			errno = 0;
			o.seed = strtoull(optarg, &end, 0);
			if (!*optarg || *end || errno || optarg[0] == '-') {
				free(defs);
				return bad_usage("--seed: '%s' is not a non-negative integer", optarg);
			}
			break;
		case 'a': o.arch = optarg; break;
		case 'T':
			if (!strcmp(optarg, "cuda"))
				o.target = TILEC_TARGET_CUDA;
			else if (!strcmp(optarg, "hip"))
				o.target = TILEC_TARGET_HIP;
			else {
				free(defs);
				return bad_usage("--target: '%s' is neither cuda nor hip", optarg);
			}
			break;
		case 'G':
			if (!strcmp(optarg, "cpu") || !strcmp(optarg, "gpu"))
				o.device = optarg[0] == 'g';
			else {
				free(defs);
				return bad_usage("--device: '%s' is neither cpu nor gpu", optarg);
			}
			break;
		case 'D': defs[ndefs++] = optarg; break;
		case 'k': o.kernel = optarg; break;
		case 'c': o.cxx = optarg; break;
		case 'K': o.keep = 1; break;
		case 't':
			o.timeout_s = (int)strtol(optarg, &end, 10);
			if (!*optarg || *end || o.timeout_s <= 0 || o.timeout_s > 86400) {
				free(defs);
				return bad_usage("--timeout: '%s' is not a number of seconds (1 to 86400)", optarg);
			}
			break;
		case 'v': o.verbose = 1; break;
		case 'M': o.tma = 1; break;
		case 'N': o.tma = 0; break;
		case 'W': o.warp_specialize = 1; break;
		case 'P': o.persistent = 1; break;
		case 'E':
			if (cli_epilogue(optarg, &o.epilogue)) {
				free(defs);
				return bad_usage("--epilogue: '%s' is not auto, direct or shared", optarg);
			}
			break;
		case 'R':
			if (cli_raster_group(optarg, &o.raster_group)) {
				free(defs);
				return bad_usage("--raster-group: '%s' is not auto or a number of rows from 0 to 65535",
						 optarg);
			}
			break;
		case 'u': cudafile = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			free(defs);
			return 0;
		case ':': {
			char nm[128];

			free(defs);
			return bad_usage("option '%s' needs a value",
			                 cli_optname(argc, argv, longopts, nm, sizeof nm, NULL));
		}
		default: {
			char nm[128];
			int gave;

			free(defs);
			cli_optname(argc, argv, longopts, nm, sizeof nm, &gave);
			return bad_usage(gave ? "option '%s' takes no value" : "unknown option '%s'", nm);
		}
		}
	}
	if (optind != argc - 1) {
		free(defs);
		return bad_usage("%s", optind >= argc ? "no input file" : "more than one input file");
	}
	o.defines = defs;
	o.ndefines = ndefs;
	o.filename = argv[optind];
	src = cli_readall(argv[optind], &len);
	if (!src) {
		char m[192];

		fprintf(stderr, "tilec run: error: cannot read %s: %s\n", argv[optind],
		        cli_read_error(errno, m, sizeof m));
		free(defs);
		return 3;
	}
	if (cudafile) {
		size_t cl;

		if (!(cuda = cli_readall(cudafile, &cl))) {
			char m[192];

			fprintf(stderr, "tilec run: error: cannot read %s: %s\n", cudafile,
			        cli_read_error(errno, m, sizeof m));
			free(src);
			free(defs);
			return 3;
		}
		o.cuda_override = cuda;
	}
	tilec_run(src, len, &o, &r);
	fputs(r.diagnostics, stderr);
	fputs(r.report, stdout);
	switch (r.status) {
	case TILEC_OK:
		printf("tilec run: %d run%s, all agree\n", r.runs, r.runs == 1 ? "" : "s");
		rc = 0;
		break;
	case TILEC_ERR_DIFFER:
		printf("tilec run: %d of %d run%s DIFFER\n", r.differ, r.runs, r.runs == 1 ? "" : "s");
		rc = 1;
		break;
	case TILEC_ERR_ARG: rc = 2; break;
	default: rc = 3; break;
	}
	tilec_run_result_free(&r);
	free(cuda);
	free(src);
	free(defs);
	return rc;
}
