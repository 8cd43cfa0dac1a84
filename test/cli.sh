#!/bin/sh
# cli.sh: the tilec command line. --help/--version exit 0, bad flags exit 2,
# every file of the bad-input corpus exits 1 with its diagnostics on stderr,
# the samples exit 0, -o writes the output, -D overrides a const.
# Usage: TILEC=build/tilec test/cli.sh   (run from the repository root)
set -u
TILEC=${TILEC:-build/tilec}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0

check() { # name expected-status actual-status
	n=$((n + 1))
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1: exit $3, want $2"
		fail=$((fail + 1))
	fi
}

has() { # name file text
	n=$((n + 1))
	if ! grep -qF -- "$3" "$2"; then
		echo "FAIL: $1: '$3' not in $2:"
		head -5 "$2"
		fail=$((fail + 1))
	fi
}

"$TILEC" --help >"$tmp/out" 2>&1; check "--help" 0 $?
has "--help text" "$tmp/out" "usage: tilec [options] file.tile"
has "--help lists --dump" "$tmp/out" "--dump=KIND"
"$TILEC" -h >/dev/null 2>&1; check "-h" 0 $?
"$TILEC" --version >"$tmp/out" 2>&1; check "--version" 0 $?
has "--version text" "$tmp/out" "tilec "
"$TILEC" -V >/dev/null 2>&1; check "-V" 0 $?

# every subcommand answers --help (and -h) wherever it comes, with its usage on stdout
for args in "run" "run samples/gemm.tile" "cute" "cute composition" "cute size (4,2):(1,4)" "cute --batch" \
	"layout" "layout list" "layout show" "layout show mma16" "layout bench"; do
	for h in --help -h; do
		# shellcheck disable=SC2086
		"$TILEC" $args $h >"$tmp/out" 2>"$tmp/err"; check "$args $h" 0 $?
		has "$args $h text" "$tmp/out" "usage: tilec ${args%% *}"
	done
done

# usage errors: exit 2 with a message on stderr
for args in "--bogus samples/gemm.tile" "-q samples/gemm.tile" "" "--target=ptx samples/gemm.tile" \
	"--arch=sm_75 samples/gemm.tile" "--target=hip --arch=sm_90 samples/gemm.tile" \
	"--dump=cfg samples/gemm.tile" "-D 9X=1 samples/gemm.tile" "-D BM samples/gemm.tile" \
	"-D BM=abc samples/gemm.tile" "-o" "--time=0 samples/gemm.tile" \
	"samples/gemm.tile samples/copy.tile"; do
	# shellcheck disable=SC2086
	"$TILEC" $args >"$tmp/out" 2>"$tmp/err"; check "usage: tilec $args" 2 $?
	has "usage message: tilec $args" "$tmp/err" "tilec: error: "
done
"$TILEC" no/such/file.tile 2>"$tmp/err"; check "missing file" 1 $?
has "missing file message" "$tmp/err" "cannot read no/such/file.tile"

# the corpus: exit 1, the diagnostics of NAME.err on stderr (file name put back)
for f in test/err/*.tile; do
	b=${f%.tile}
	set --
	if [ -f "$b.args" ]; then
		while IFS= read -r d; do set -- "$@" -D "$d"; done <"$b.args"
	fi
	"$TILEC" "$@" "$f" >"$tmp/out" 2>"$tmp/err"; st=$?
	if [ $st -ge 128 ]; then
		echo "FAIL: $f: crashed (exit $st)"; fail=$((fail + 1))
	fi
	check "$f" 1 $st
	sed -e "s|^$f: ||" -e "s|^$f:||" "$tmp/err" >"$tmp/got"
	n=$((n + 1))
	if ! cmp -s "$tmp/got" "$b.err"; then
		echo "FAIL: $f: diagnostics differ:"; diff "$b.err" "$tmp/got" | head -5
		fail=$((fail + 1))
	fi
	[ -s "$tmp/out" ] && { echo "FAIL: $f: output on stdout"; fail=$((fail + 1)); }
done

# the samples: exit 0; --dump=ir prints the IR; -o writes it; the same with --dump=ast
for f in samples/*.tile; do
	"$TILEC" "$f" >"$tmp/out" 2>"$tmp/err"; check "$f" 0 $?
	[ -s "$tmp/err" ] && { echo "FAIL: $f: stderr not empty"; fail=$((fail + 1)); }
	"$TILEC" --dump=ir "$f" >"$tmp/ir" 2>/dev/null; check "$f --dump=ir" 0 $?
	has "$f --dump=ir" "$tmp/ir" "kernel "
	"$TILEC" --dump=ast -o "$tmp/ast" "$f"; check "$f --dump=ast -o" 0 $?
	has "$f --dump=ast -o" "$tmp/ast" "kernel"
done
"$TILEC" -o "$tmp/gemm.ir" --target=hip --arch=gfx942 samples/gemm.tile; check "-o" 0 $?
"$TILEC" --arch=gfx1100 samples/gemm.tile; check "--arch=gfx1100 picks hip" 0 $?
"$TILEC" --target=cuda --arch=gfx1100 samples/gemm.tile 2>/dev/null; check "cuda with a hip arch" 2 $?
"$TILEC" --target=cuda --arch=sm_90a samples/gemm.tile; check "--arch=sm_90a" 0 $?
has "-o writes the IR" "$tmp/gemm.ir" "gemm As[0 +: 128, 0 +: 32]"
# CUDA C: -o FILE.cu or --dump=cuda
"$TILEC" -o "$tmp/gemm.cu" samples/gemm.tile; check "-o x.cu" 0 $?
has "-o x.cu writes CUDA" "$tmp/gemm.cu" 'extern "C" __global__ void __launch_bounds__(128)'
"$TILEC" --dump=cuda --arch=sm_90 samples/copy.tile >"$tmp/out"; check "--dump=cuda" 0 $?
has "--dump=cuda" "$tmp/out" "tl_cp_async16"
"$TILEC" --dump=cuda --target=hip samples/copy.tile >"$tmp/out"; check "--dump=cuda for hip" 0 $?
has "--dump=cuda for hip" "$tmp/out" '#include "tilec_hip.h"'
"$TILEC" --dump=hip --arch=gfx1100 samples/gemm.tile >"$tmp/out"; check "--dump=hip" 0 $?
has "--dump=hip" "$tmp/out" "tl_wmma_f16_16x16x16"
"$TILEC" --dump=hip --target=cuda samples/copy.tile 2>"$tmp/err"; check "--dump=hip for cuda" 2 $?
has "--dump=hip for cuda" "$tmp/err" "for --target=hip only"
# --dump=lowered: the lowered kernel IR, not code; a kernel it cannot lower is located
"$TILEC" --dump=lowered samples/gemm.tile >"$tmp/out"; check "--dump=lowered" 0 $?
has "--dump=lowered" "$tmp/out" "mma tl_mma_f16_16816("
has "--dump=lowered async" "$tmp/out" "async copy 16 bytes: "
"$TILEC" --dump=lowered --target=hip --arch=gfx90a samples/gemm.tile >"$tmp/out"; check "--dump=lowered hip" 0 $?
has "--dump=lowered hip" "$tmp/out" "lowered for gfx90a (hip)"
printf 'kernel oe(A: f32[192, 4], B: f32[4]) grid(1) threads(128)\n{\n    local a: f32[192, 4];\n    local m: f32[4];\n    copy(A[0, 0], a);\n    reduce(a, m, op = sum, dim = 0);\n    copy(m, B[0]);\n}\n' >"$tmp/norm.tile"
"$TILEC" --dump=lowered "$tmp/norm.tile" >"$tmp/out"; check "--dump=lowered table" 0 $?
has "--dump=lowered table" "$tmp/out" "table tl_tab0: 256 entries"
printf 'kernel rp(S: f32[N], Out: f32[N]) grid(1) threads(128)\n{\n    local c: f32[4];\n    local t: f32[4];\n    copy(S[0], c);\n    copy(S[0], t);\n    for i in parallel(4) {\n        t[3 - i] = c[i] + t[3 - i];\n    }\n    copy(t, Out[0]);\n}\n' >"$tmp/rev.tile"
"$TILEC" --dump=lowered "$tmp/rev.tile" 2>"$tmp/err"; check "--dump=lowered refused" 1 $?
has "--dump=lowered refused" "$tmp/err" "rev.tile:8:9: error: kernel 'rp': local 't' is written by the parallel nest"
"$TILEC" --print-passes samples/gemm.tile >"$tmp/out"; check "--print-passes" 0 $?
has "--print-passes lower-kernels" "$tmp/out" "lower-kernels"
has "--print-passes verify-lowered" "$tmp/out" "verify-lowered"
"$TILEC" --dump=ir - <samples/gemm.tile >"$tmp/out"; check "stdin" 0 $?
has "stdin" "$tmp/out" "kernel gemm"
"$TILEC" -o /no/such/dir/x.ir samples/gemm.tile 2>"$tmp/err"; check "-o unwritable" 1 $?

# -D overrides a const
"$TILEC" --dump=ir -D BK=64 samples/gemm.tile >"$tmp/out"; check "-D BK=64" 0 $?
has "-D BK=64" "$tmp/out" "shared As: f16[128, 64]"
"$TILEC" --dump=ir --define=BM=64 -D BN=0x40 samples/gemm.tile >"$tmp/out"; check "-D BM BN" 0 $?
has "-D BM=64" "$tmp/out" "local acc: f32[64, 64]"
"$TILEC" -D BK=0 samples/gemm.tile 2>"$tmp/err"; check "-D BK=0" 1 $?
has "-D BK=0" "$tmp/err" "error:"

# --time runs the front end in-process
"$TILEC" --time=3 samples/gemm.tile >"$tmp/out"; check "--time" 0 $?
has "--time" "$tmp/out" "front end: median"

# a caret under the error when stderr is a terminal (only if script(1) is here)
if command -v script >/dev/null 2>&1; then
	script -qec "$TILEC test/err/sem_unknown_name.tile" /dev/null >"$tmp/tty" 2>&1
	has "caret on a terminal" "$tmp/tty" "^"
	has "source line on a terminal" "$tmp/tty" "alpha * acc[i, j]"
fi

# samples/host_jit.c builds against libtilec.a and, with no driver, exits 77 saying so;
# make install puts a working tilec.pc (only for the normal build)
if [ "$TILEC" = build/tilec ] && [ -f build/libtilec.a ]; then
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -Iruntime -o "$tmp/host_jit" samples/host_jit.c \
		build/libtilec.a -ldl -lpthread -lm >"$tmp/err" 2>&1; check "host_jit builds" 0 $?
	TILEC_LIBCUDA_PATH=/nonexistent/libcuda.so.1 "$tmp/host_jit" >"$tmp/out" 2>"$tmp/err"
	check "host_jit without a driver" 77 $?
	has "host_jit no-driver message" "$tmp/err" "no NVIDIA driver"
	make -s install PREFIX="$tmp/inst" >"$tmp/out" 2>&1; check "make install" 0 $?
	PKG_CONFIG_PATH="$tmp/inst/lib/pkgconfig" pkg-config --cflags --libs tilec >"$tmp/out" 2>&1
	check "pkg-config tilec" 0 $?
	has "pkg-config -I" "$tmp/out" "-I$tmp/inst/include"
	has "pkg-config -ltilec" "$tmp/out" "-ltilec"
	# shellcheck disable=SC2046
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -o "$tmp/host_jit2" samples/host_jit.c \
		$(cat "$tmp/out") >"$tmp/err" 2>&1; check "host_jit builds with pkg-config" 0 $?
fi

# --header: the C launcher header next to the CUDA C; --dump=header prints it
"$TILEC" --arch=sm_90a samples/gemm_sm90.tile -o "$tmp/g.cu" --header "$tmp/g.h"; check "--header" 0 $?
has "--header writes the CUDA C" "$tmp/g.cu" "gemm_sm90("
has "--header writes the driver launcher" "$tmp/g.h" "tilec_launch_gemm_sm90(CUfunction"
has "--header raises the smem limit" "$tmp/g.h" "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"
has "--header runtime launcher" "$tmp/g.h" "tilec_gemm_sm90(tl_half_t *A"
"$TILEC" --dump=header samples/copy.tile >"$tmp/out"; check "--dump=header" 0 $?
has "--dump=header" "$tmp/out" "#define TILEC_COPY2D_THREADS 128"
"$TILEC" --target=hip samples/copy.tile --header "$tmp/h.h" 2>"$tmp/err"; check "--header for hip" 2 $?
has "--header for hip" "$tmp/err" "cuda target"
"$TILEC" samples/copy.tile --header /no/such/dir/x.h 2>"$tmp/err"; check "--header unwritable" 1 $?
"$TILEC" test/err/sem_unknown_name.tile --header "$tmp/bad.h" 2>/dev/null; check "--header, bad source" 1 $?
[ -e "$tmp/bad.h" ] && { echo "FAIL: --header wrote a file for a bad source"; fail=$((fail + 1)); }

# samples/buildtime: tilec at build time, nvcc compiles and links main.cu with the generated
# gemm.cu/gemm.h (not run: no GPU here). CI has the CUDA toolkit: nvcc is required.
if [ "$TILEC" = build/tilec ]; then
	NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
	n=$((n + 1))
	if [ ! -x "$NVCC" ]; then
		echo "FAIL: samples/buildtime: $NVCC not found (the CUDA toolkit is required; set NVCC)"
		fail=$((fail + 1))
	elif ! make -s -C samples/buildtime O="$tmp/bt" TILEC="$PWD/build/tilec" NVCC="$NVCC" \
		>"$tmp/err" 2>&1 || [ ! -x "$tmp/bt/buildtime" ]; then
		echo "FAIL: samples/buildtime does not build:"; tail -20 "$tmp/err"
		fail=$((fail + 1))
	fi
fi

# tilec run: the CPU check of a program (docs/cpu.md)
"$TILEC" run --help >"$tmp/out" 2>&1; check "run --help" 0 $?
has "run --help text" "$tmp/out" "usage: tilec run [options] file.tile"
"$TILEC" run >"$tmp/out" 2>&1; check "run without a file" 2 $?
has "run without a file says so" "$tmp/out" "no input file"
"$TILEC" run --bogus samples/copy.tile >"$tmp/out" 2>&1; check "run --bogus" 2 $?
"$TILEC" run --seed=-1 samples/copy.tile >"$tmp/out" 2>&1; check "run --seed=-1" 2 $?
"$TILEC" run --sizes=M= samples/copy.tile >"$tmp/out" 2>&1; check "run --sizes=M=" 2 $?
"$TILEC" run --arch=gfx90a samples/copy.tile >"$tmp/out" 2>&1; check "run --arch=gfx90a" 2 $?
has "run --arch=gfx90a names --target=hip" "$tmp/out" "--target=hip"
"$TILEC" run --target=hip --arch=sm_80 samples/copy.tile >"$tmp/out" 2>&1; check "run --target=hip --arch=sm_80" 2 $?
"$TILEC" run --target=amd samples/copy.tile >"$tmp/out" 2>&1; check "run --target=amd" 2 $?
"$TILEC" run --target=hip --arch=gfx1100 --sizes "M=33,N=40" samples/copy.tile >"$tmp/out" 2>&1
check "run --target=hip --arch=gfx1100 copy" 0 $?
has "run --target=hip: agrees" "$tmp/out" "tilec run: 1 run, all agree"
# without --arch: sm_80, else sm_90a when sm_80 cannot hold the kernel (gemm_sm90's 192 KB of
# shared memory), said in the report; with --arch=sm_80 the refusal stands
"$TILEC" run --sizes "M=64,N=256,K=64" samples/gemm_sm90.tile >"$tmp/out" 2>&1
check "run gemm_sm90 without --arch" 0 $?
has "run gemm_sm90: the arch it took" "$tmp/out" "arch sm_90a (no --arch given; sm_80 refused the program"
has "run gemm_sm90: agrees" "$tmp/out" "tilec run: 1 run, all agree"
# --warp-specialize: the producer warpgroup; the launch contract and the CPU run's block grow by 128
"$TILEC" --dump=cuda --arch=sm_90a --warp-specialize samples/gemm_sm90.tile >"$tmp/out" 2>&1
check "--warp-specialize" 0 $?
has "--warp-specialize: the contract" "$tmp/out" "// kernel gemm_sm90: 384 threads,"
has "--warp-specialize: setmaxnreg" "$tmp/out" "tl_setmaxnreg_dec<24>();"
"$TILEC" --dump=cuda --arch=sm_90a samples/gemm_sm90.tile >"$tmp/out" 2>&1
has "without --warp-specialize: the contract" "$tmp/out" "// kernel gemm_sm90: 256 threads,"
"$TILEC" run --arch=sm_90a --warp-specialize --sizes "M=200,N=264,K=136" samples/gemm_sm90.tile >"$tmp/out" 2>&1
check "run --warp-specialize" 0 $?
"$TILEC" --help >"$tmp/out" 2>&1; has "--help lists --warp-specialize" "$tmp/out" "--warp-specialize"
"$TILEC" run --help >"$tmp/out" 2>&1; has "run --help lists --warp-specialize" "$tmp/out" "--warp-specialize"
# --raster-group=G: the grouped block order; a bad count is a usage error
"$TILEC" --dump=cuda --raster-group=4 samples/gemm.tile >"$tmp/out" 2>&1; check "--raster-group=4" 0 $?
has "--raster-group: the remapped tile" "$tmp/out" "const int tl_bx = (int)(tl_lin_ % tl_gsz_ / tl_gh_);"
for v in -1 x 70000 ""; do
	"$TILEC" --dump=cuda --raster-group="$v" samples/gemm.tile >/dev/null 2>&1; check "--raster-group=$v" 2 $?
	"$TILEC" run --raster-group="$v" samples/gemm.tile >/dev/null 2>&1; check "run --raster-group=$v" 2 $?
done
"$TILEC" run --raster-group=3 --sizes "X=7,Y=11" test/cpu/raster_grid.tile >"$tmp/out" 2>&1; check "run --raster-group=3" 0 $?
# auto (the default): 8 rows for a GEMM main loop (a pipeline loading both shared operands of a
# gemm) with a 2-D grid on sm_90a, else launch order (FlashAttention's loop is not one)
"$TILEC" --dump=cuda --arch=sm_90a samples/gemm_sm90.tile >"$tmp/out" 2>&1; check "raster auto sm_90a" 0 $?
has "raster auto sm_90a" "$tmp/out" "const long long tl_gsz_ = 8LL * gridDim.x;"
for a in "--arch=sm_90a --raster-group=0 samples/gemm_sm90.tile" "--arch=sm_80 samples/gemm.tile" \
	"--arch=sm_90a samples/copy.tile" "--arch=sm_90a samples/softmax.tile" \
	"--arch=sm_90a samples/flash_fwd.tile"; do
	# shellcheck disable=SC2086
	"$TILEC" --dump=cuda $a >"$tmp/out" 2>&1; check "raster off: $a" 0 $?
	grep -q tl_lin_ "$tmp/out"; check "raster off: $a: no remap" 1 $?
done
"$TILEC" --dump=cuda --arch=sm_90a --raster-group=auto samples/gemm.tile >"$tmp/out" 2>&1; check "--raster-group=auto" 0 $?
has "--raster-group=auto" "$tmp/out" "const long long tl_gsz_ = 8LL * gridDim.x;"
"$TILEC" run --raster-group=auto --sizes "X=7,Y=11" test/cpu/raster_grid.tile >"$tmp/out" 2>&1; check "run --raster-group=auto" 0 $?
# --epilogue=auto|direct|shared: a GEMM's result tile through shared memory (auto: on sm_90a
# without --warp-specialize); a bad value is a usage error
"$TILEC" --dump=cuda --arch=sm_90a samples/gemm_sm90.tile >"$tmp/out" 2>&1; check "epilogue auto sm_90a" 0 $?
has "epilogue auto sm_90a" "$tmp/out" "// epilogue: acc reaches C through shared memory acc_epi (128-byte swizzle"
for a in "--arch=sm_90a --epilogue=direct samples/gemm_sm90.tile" "--arch=sm_90a --warp-specialize samples/gemm_sm90.tile" \
	"--arch=sm_80 samples/gemm.tile" "--arch=sm_90a --epilogue=auto --warp-specialize samples/gemm.tile"; do
	# shellcheck disable=SC2086
	"$TILEC" --dump=cuda $a >"$tmp/out" 2>&1; check "epilogue direct: $a" 0 $?
	grep -q acc_epi "$tmp/out"; check "epilogue direct: $a: not staged" 1 $?
done
"$TILEC" --dump=cuda --arch=sm_80 --epilogue=shared samples/gemm.tile >"$tmp/out" 2>&1; check "--epilogue=shared sm_80" 0 $?
has "--epilogue=shared sm_80" "$tmp/out" "// epilogue: acc reaches C through shared memory acc_epi"
"$TILEC" --dump=layouts --arch=sm_90a samples/gemm_sm90.tile >"$tmp/out" 2>&1; check "epilogue: --dump=layouts" 0 $?
grep -q acc_epi "$tmp/out"; check "epilogue: --dump=layouts shows the program as written" 1 $?
for v in x "" Shared 1; do
	"$TILEC" --dump=cuda --epilogue="$v" samples/gemm.tile >/dev/null 2>&1; check "--epilogue=$v" 2 $?
	"$TILEC" run --epilogue="$v" samples/gemm.tile >/dev/null 2>&1; check "run --epilogue=$v" 2 $?
done
"$TILEC" run --arch=sm_80 --epilogue=shared --sizes "M=200,N=264,K=136" samples/gemm.tile >"$tmp/out" 2>&1
check "run --epilogue=shared" 0 $?
has "run --epilogue=shared: agrees" "$tmp/out" "tilec run: 1 run, all agree"
"$TILEC" --help >"$tmp/out" 2>&1; has "--help lists --epilogue" "$tmp/out" "--epilogue=E"
"$TILEC" run --help >"$tmp/out" 2>&1; has "run --help lists --epilogue" "$tmp/out" "--epilogue=E"
# --persistent: blocks loop over a 2-D grid's tiles; the contract says so; refusals in a comment
"$TILEC" --dump=cuda --arch=sm_90a --persistent --warp-specialize samples/gemm_sm90.tile >"$tmp/out" 2>&1
check "--persistent" 0 $?
has "--persistent: the contract" "$tmp/out" "// kernel gemm_sm90: persistent: launch grid (min(X * Y, SMs * blocks per SM), 1, Z)"
has "--persistent: the tile loop" "$tmp/out" "for (long long tl_tile_ = blockIdx.x; tl_tile_ < tl_tiles_; tl_tile_ += gridDim.x) {"
has "--persistent: the carried count" "$tmp/out" "const long long ko_g_ = tl_pit_ + ko;"
"$TILEC" --dump=cuda --persistent samples/softmax.tile >"$tmp/out" 2>&1; check "--persistent 1-D" 0 $?
has "--persistent: a 1-D grid refused" "$tmp/out" "// not persistent: a 1-D grid"
"$TILEC" --dump=cuda --target=hip --arch=gfx90a --persistent samples/gemm.tile >"$tmp/out" 2>&1; check "--persistent hip" 0 $?
has "--persistent: HIP refused" "$tmp/out" "// not persistent: the HIP target"
for v in 1 yes ""; do
	"$TILEC" --dump=cuda --persistent="$v" samples/gemm.tile >/dev/null 2>&1; check "--persistent=$v" 2 $?
	"$TILEC" run --persistent="$v" samples/gemm.tile >/dev/null 2>&1; check "run --persistent=$v" 2 $?
done
"$TILEC" run --persistent --raster-group=3 --sizes "X=7,Y=11" test/cpu/raster_grid.tile >"$tmp/out" 2>&1
check "run --persistent" 0 $?
has "run --persistent: agrees" "$tmp/out" "tilec run: 1 run, all agree"
"$TILEC" --help >"$tmp/out" 2>&1; has "--help lists --persistent" "$tmp/out" "--persistent"
"$TILEC" run --help >"$tmp/out" 2>&1; has "run --help lists --persistent" "$tmp/out" "--persistent"
"$TILEC" run --arch=sm_80 --sizes "M=64,N=256,K=64" samples/gemm_sm90.tile >"$tmp/out" 2>&1
check "run gemm_sm90 --arch=sm_80" 3 $?
has "run gemm_sm90 --arch=sm_80: the limit" "$tmp/out" "sm_80 allows 166912"
# --device=gpu: the emitted code on the CUDA driver's GPU; without a driver exit 3, saying so
"$TILEC" run --device=tpu samples/copy.tile >"$tmp/out" 2>&1; check "run --device=tpu" 2 $?
has "run --device=tpu" "$tmp/out" "--device: 'tpu' is neither cpu nor gpu"
"$TILEC" run --device=gpu --target=hip samples/copy.tile >"$tmp/out" 2>&1; check "run --device=gpu hip" 2 $?
has "run --device=gpu hip" "$tmp/out" "the GPU run takes the cuda target"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
	"$TILEC" run --device=gpu samples/copy.tile >"$tmp/out" 2>&1; check "run --device=gpu" 0 $?
	has "run --device=gpu" "$tmp/out" "on the GPU (sm_"
else
	"$TILEC" run --device=gpu samples/copy.tile >"$tmp/out" 2>&1; check "run --device=gpu, no driver" 3 $?
	has "run --device=gpu, no driver" "$tmp/out" "no GPU to run on: libcuda.so.1 not found"
	# with --arch the code is built by NVRTC first, then loading it needs the driver
	"$TILEC" run --device=gpu --arch=sm_90a samples/gemm_sm90.tile >"$tmp/out" 2>&1
	check "run --device=gpu --arch, no driver" 3 $?
	has "run --device=gpu --arch, no driver" "$tmp/out" "the GPU build for sm_90a: libcuda.so.1 not found"
fi
"$TILEC" run "$tmp/none.tile" >"$tmp/out" 2>&1; check "run on a missing file" 3 $?
"$TILEC" run test/err/sem_typo.tile >"$tmp/out" 2>&1; check "run on a bad program" 3 $?
has "run on a bad program: its diagnostics" "$tmp/out" "error:"
"$TILEC" run --sizes "M=33,N=40;M=1,N=1" --seed 5 samples/copy.tile >"$tmp/out" 2>&1; check "run copy" 0 $?
has "run copy: both sets" "$tmp/out" "tilec run: 2 runs, all agree"
has "run copy: the sizes" "$tmp/out" "copy2d [M=33,N=40] seed 5: agree"
printf 'kernel k(A: f32[N]) grid(1) threads(32) {\n  assume(N %% 64 == 0);\n  for i in parallel(32) { A[i] = 1.0; }\n}\n' >"$tmp/a.tile"
"$TILEC" run --sizes N=3 "$tmp/a.tile" >"$tmp/out" 2>&1; check "run with a size the assume refuses" 3 $?
has "run: the assume that does not hold" "$tmp/out" "does not hold"
"$TILEC" run "$tmp/a.tile" >"$tmp/out" 2>&1; check "run moves the default size to the assume" 0 $?
has "run: N=192 from the default 211" "$tmp/out" "k [N=192]"

# strided tensors (docs/semantics.md): the IR dump shows them; CUDA and HIP address them through
# the strides (vector accesses under run-time checks of the strides and the views' pointers);
# tilec run checks the emitted code against the interpreter; against hand-written code (--cuda)
# it runs too, with padded strides by default or those --sizes gives, and catches writes into
# the padding
"$TILEC" --dump=ir test/strided/head.tile >"$tmp/out" 2>&1; check "strided --dump=ir" 0 $?
has "strided --dump=ir: the strides" "$tmp/out" "param T: f32[64, S] strides(1, ldt)"
has "strided --dump=ir: stride symbols are sizes" "$tmp/out" "sizes S, sq, so, ldt"
"$TILEC" --dump=cuda test/strided/head.tile >"$tmp/out" 2>&1; check "strided --dump=cuda" 0 $?
has "strided --dump=cuda: the strides are parameters" "$tmp/out" "float scale, int S, int sq, int so, int ldt)"
has "strided --dump=cuda: the stride check" "$tmp/out" "const bool tl_ld4_sq = sq % 4 == 0;"
has "strided --dump=cuda: the column-major view" "$tmp/out" "T[((long long)(j) + (long long)((((int)blockIdx.x * 16) + i)) * ldt)]"
"$TILEC" --target=hip -o "$tmp/h.hip" test/strided/head.tile >"$tmp/out" 2>&1; check "strided HIP" 0 $?
has "strided HIP: the view's pointer check" "$tmp/h.hip" "const bool tl_al16_O = (unsigned long long)O % 16 == 0;"
"$TILEC" --dump=cuda --print-after=plan-vectors test/cpu/strided_const.tile >"$tmp/out" 2>&1; check "strided plan-vectors" 0 $?
has "strided plan-vectors: narrower" "$tmp/out" "copy at 15:5 B -> y: memory -> registers, 2 elements per access, not chosen yet (stride 0 of 'B' (66) is not a multiple of 4 elements)"
has "strided plan-vectors: the pointer check" "$tmp/out" "copy at 13:5 A -> sa: between memories, 4 elements per access, not chosen yet (checked at kernel entry, else element by element: 'A' 16-byte aligned)"
"$TILEC" --dump=cuda --print-after=plan-vectors test/cpu/strided_colmajor.tile >"$tmp/out" 2>&1
has "strided plan-vectors: a last stride of 2" "$tmp/out" "('X' has stride 2 in its last dim, not 1: element by element)"
"$TILEC" --dump=hip --print-after=plan-vectors samples/gemm_strided.tile >"$tmp/out" 2>&1
has "strided plan-vectors: the stride check" "$tmp/out" "(checked at kernel entry, else element by element: lda % 8 == 0, 'A' 16-byte aligned)"
"$TILEC" run test/strided/head.tile >"$tmp/out" 2>&1; check "strided run (element by element: sq = 67)" 0 $?
has "strided run: the padded strides" "$tmp/out" "head [S=211,sq=67,so=67,ldt=67,"
"$TILEC" run --sizes "S=37,sq=192,so=320" test/strided/head.tile >"$tmp/out" 2>&1; check "strided run (vectors)" 0 $?
has "strided run (vectors): agrees" "$tmp/out" "all agree"
"$TILEC" run --cuda=test/strided/head.cu --sizes "S=37,sq=192,so=320" test/strided/head.tile >"$tmp/out" 2>&1
check "strided run --cuda" 0 $?
has "strided run --cuda: the strides" "$tmp/out" "head [S=37,sq=192,so=320,ldt=67,"
sed 's/O\[(long)i \* so + j\]/O[(long)i * so + j + (i + 1 < S \&\& j == 63)]/' test/strided/head.cu >"$tmp/pad.cu"
"$TILEC" run --cuda="$tmp/pad.cu" --sizes "S=37" test/strided/head.tile >"$tmp/out" 2>&1
check "strided run: a write into the padding" 1 $?
has "strided run: the padding" "$tmp/out" "O: 36 elements outside the view (strides(67, 1), 2476 storage elements) written by the emitted code; first at offset 64"

# ---- output rules (issue 19): an output never replaces an input, writes are checked ----
cp samples/gemm.tile "$tmp/g.tile"
cp samples/gemm.tile "$tmp/g.orig"
"$TILEC" -o "$tmp/g.tile" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o the input" 2 $?
has "-o the input: message" "$tmp/err" "is the input file; refusing to overwrite it"
cmp -s "$tmp/g.tile" "$tmp/g.orig"; check "-o the input: source kept" 0 $?
"$TILEC" --header "$tmp/g.tile" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "--header the input" 2 $?
cmp -s "$tmp/g.tile" "$tmp/g.orig"; check "--header the input: source kept" 0 $?
"$TILEC" -o "$tmp/x.cu" --header "$tmp/x.cu" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o = --header" 2 $?
has "-o = --header: message" "$tmp/err" "-o and --header name the same file"
[ ! -e "$tmp/x.cu" ]; check "-o = --header: nothing written" 0 $?
"$TILEC" -o "$tmp/g.tile" - <"$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o the file on stdin" 2 $?
has "-o the file on stdin: message" "$tmp/err" "an output is the file on standard input"
cmp -s "$tmp/g.tile" "$tmp/g.orig"; check "-o the file on stdin: source kept" 0 $?
ln -s g.tile "$tmp/link.tile"
"$TILEC" -o "$tmp/link.tile" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o a symlink to the input" 2 $?
mkdir "$tmp/sub"
"$TILEC" -o "$tmp/sub/../g.tile" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o dir/../input" 2 $?
ln "$tmp/g.tile" "$tmp/hard.tile"
"$TILEC" -o "$tmp/hard.tile" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o a hard link of the input" 2 $?
cmp -s "$tmp/g.tile" "$tmp/g.orig"; check "links: source kept" 0 $?
"$TILEC" -o "$tmp/y.cu" --header "$tmp/y.h" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o y.cu --header y.h" 0 $?
has "-o y.cu: CUDA C" "$tmp/y.cu" "__global__"
has "--header y.h: launcher" "$tmp/y.h" "#include"
ls -A "$tmp" | grep -q '^\.tilec-'; check "no temporary files left" 1 $?
"$TILEC" -o /dev/null "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o /dev/null (a device is written in place)" 0 $?
[ -c /dev/null ]; check "/dev/null still a device" 0 $?
"$TILEC" -o "$tmp/nodir/x.cu" "$tmp/g.tile" >"$tmp/out" 2>"$tmp/err"; check "-o into a missing directory" 1 $?
has "-o into a missing directory: message" "$tmp/err" "cannot write $tmp/nodir/x.cu"
# a writable file in a directory where another user cannot create files: rewritten in place
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir "$tmp/ro" && chmod 0755 "$tmp" "$tmp/ro" && : >"$tmp/ro/out.cu" && chmod 0666 "$tmp/ro/out.cu"
	cp samples/gemm.tile "$tmp/ro/g.tile" && chmod 0644 "$tmp/ro/g.tile"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TILEC" -o "$tmp/ro/out.cu" "$tmp/ro/g.tile" \
		>"$tmp/out" 2>"$tmp/err"; check "-o a writable file in a read-only directory" 0 $?
	has "-o in place: CUDA C" "$tmp/ro/out.cu" "__global__"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TILEC" -o "$tmp/ro/new.cu" "$tmp/ro/g.tile" \
		>"$tmp/out" 2>"$tmp/err"; check "-o a new file in a read-only directory" 1 $?
	has "-o a new file in a read-only directory: message" "$tmp/err" "Permission denied"
fi
if [ -w /dev/full ]; then
	for args in "--dump=cuda samples/gemm.tile" "--dump=ast samples/gemm.tile" "cute size (2,3):(1,2)" \
		"layout list" "layout show swizzle --mode 128B --shape 8x64 --dtype f16 --table" "--help" \
		"--version"; do
		# shellcheck disable=SC2086
		"$TILEC" $args >/dev/full 2>"$tmp/err"; st=$?
		[ $st -ne 0 ]; check "tilec $args > /dev/full fails" 0 $?
		has "tilec $args > /dev/full: message" "$tmp/err" "cannot write standard output"
	done
	printf 'size\t(2,3):(1,2)\n' | "$TILEC" cute --batch >/dev/full 2>"$tmp/err"; st=$?
	[ $st -ne 0 ]; check "cute --batch > /dev/full fails" 0 $?
	"$TILEC" run samples/copy.tile >/dev/full 2>"$tmp/err"; st=$?
	[ $st -ne 0 ]; check "run > /dev/full fails" 0 $?
fi
# option errors name the option as written (--explain=1 printed a control byte)
"$TILEC" --explain=1 samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "--explain=1" 2 $?
has "--explain=1 names --explain" "$tmp/err" "option '--explain' takes no argument"
for o in --help=1 --print-passes=x --dump-layout-to-output=1; do
	"$TILEC" $o samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "$o" 2 $?
	has "$o named" "$tmp/err" "option '${o%%=*}' takes no argument"
done
"$TILEC" --outpt=x samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "--outpt=x" 2 $?
has "--outpt=x named" "$tmp/err" "unknown option '--outpt'"
"$TILEC" -Dx=1 -q samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "-q after -D" 2 $?
has "-q named" "$tmp/err" "unknown option '-q'"
"$TILEC" "$(printf -- '-\001')" samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "a control byte option" 2 $?
has "a control byte option, escaped" "$tmp/err" "unknown option '-\\x01'"
"$TILEC" samples/gemm.tile --output >"$tmp/out" 2>"$tmp/err"; check "--output without a value" 2 $?
has "--output named" "$tmp/err" "option '--output' needs an argument"
"$TILEC" run --verbose=1 samples/copy.tile >"$tmp/out" 2>"$tmp/err"; check "run --verbose=1" 2 $?
has "run --verbose=1 named" "$tmp/err" "option '--verbose' takes no value"
"$TILEC" run -vq samples/copy.tile >"$tmp/out" 2>"$tmp/err"; check "run -vq" 2 $?
has "run -q named" "$tmp/err" "unknown option '-q'"
"$TILEC" run --keep=1 samples/copy.tile >"$tmp/out" 2>"$tmp/err"; check "run --keep=1" 2 $?
has "run --keep=1 named" "$tmp/err" "option '--keep' takes no value"
# input limit: 16 MiB read in bounded memory; /dev/zero ends at once
timeout 20 "$TILEC" /dev/zero >"$tmp/out" 2>"$tmp/err"; check "tilec /dev/zero" 1 $?
has "tilec /dev/zero: the limit" "$tmp/err" "input larger than 16777216 bytes"
timeout 20 "$TILEC" - </dev/zero >"$tmp/out" 2>"$tmp/err"; check "tilec - < /dev/zero" 1 $?
timeout 20 "$TILEC" run /dev/zero >"$tmp/out" 2>"$tmp/err"; check "tilec run /dev/zero" 3 $?
has "tilec run /dev/zero: the limit" "$tmp/err" "input larger than"
timeout 20 "$TILEC" cute --batch </dev/zero >"$tmp/out" 2>"$tmp/err"; check "cute --batch < /dev/zero" 1 $?
has "cute --batch < /dev/zero: line too long" "$tmp/err" "line longer than"
TILEC_MAX_INPUT=100 "$TILEC" samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "TILEC_MAX_INPUT=100" 1 $?
has "TILEC_MAX_INPUT=100: the limit" "$tmp/err" "input larger than 100 bytes"
TILEC_MAX_INPUT=1M "$TILEC" samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "TILEC_MAX_INPUT=1M" 0 $?
# the HIP arch check: a target ID with an unknown feature is a usage error
"$TILEC" --target=hip --arch=gfx90a:bogus+ samples/gemm.tile >"$tmp/out" 2>"$tmp/err"; check "--arch=gfx90a:bogus+" 2 $?
"$TILEC" run --target=hip --arch=gfx90a:bogus+ samples/copy.tile >"$tmp/out" 2>"$tmp/err"; check "run --arch=gfx90a:bogus+" 2 $?
# --enum-limit: the largest domain an exact layout check walks (mixed-radix layouts need none)
for v in 0 -5 12x 2000000000000 ""; do
	"$TILEC" --enum-limit="$v" samples/copy.tile >/dev/null 2>"$tmp/err"; check "--enum-limit=$v" 2 $?
done
has "--enum-limit: the reason" "$tmp/err" "expected a point count from 1 to 2^40"
"$TILEC" --help >"$tmp/out" 2>&1; has "--help lists --enum-limit" "$tmp/out" "--enum-limit=N"
"$TILEC" --dump=cuda --enum-limit=1000 samples/gemm.tile >/dev/null 2>&1
check "gemm --enum-limit=1000: checked from the digits" 0 $?
"$TILEC" --dump=cuda -D W=5120 samples/softmax.tile >/dev/null 2>&1; check "softmax W=5120" 0 $?
"$TILEC" --dump=cuda -D W=5120 --enum-limit=2000 samples/softmax.tile >/dev/null 2>&1
check "softmax W=5120 --enum-limit=2000: refused" 1 $?
# the GPU differential runner reads check_cpu_diff.c's tables: they must parse (a row whose
# sizes were a macro broke it on the GPU once)
if command -v python3 >/dev/null; then
	python3 test/gpu/run_all.py --check-tables >"$tmp/out" 2>&1; check "run_all.py --check-tables" 0 $?
fi

echo "cli.sh: $n checks, $fail failed"
[ $fail -eq 0 ]
