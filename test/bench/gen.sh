#!/bin/sh
# gen.sh: code-generation speed. Whole-process CPU time (user + sys, from wait4's rusage:
# test/bench/cputime.c) of `tilec SAMPLE --dump=cuda` for every samples/*.tile at sm_80,
# sm_90a and HIP gfx90a; median (and minimum) of REPS runs (default 21).
# Goals (issue [structure] 5): every sample under 5 ms, gemm under 2 ms.
# Then softmax at growing widths (is inference linear in the tile size?), and the exact
# checks of a 4096 x 4096 tile (test/bench/bigtile.c). Needs build/tilec and build/libtilec.a.
set -eu
TILEC=${TILEC:-build/tilec}
REPS=${REPS:-21}
mkdir -p build
cc -std=c11 -O2 -Wall -Wextra -o build/cputime test/bench/cputime.c
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Igen/layout -Igen/util \
	-o build/bigtile test/bench/bigtile.c build/libtilec.a -ldl -lm -lpthread
echo "== generation CPU time, ms (user+sys, median/min of $REPS; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-26s %-22s %-22s %-22s\n' sample sm_80 sm_90a gfx90a
miss=0
for f in samples/*.tile; do
	line=$(printf '%-26s' "$(basename "$f")")
	for a in "--arch=sm_80" "--arch=sm_90a" "--target=hip --arch=gfx90a"; do
		# shellcheck disable=SC2086
		r=$(build/cputime "$REPS" "$TILEC" "$f" --dump=cuda $a) || true
		case $r in
		failed*) r="refused" ;;
		*)
			med=${r% *}
			goal=5
			case $f in */gemm.tile) goal=2 ;; esac
			if awk -v m="$med" -v g="$goal" 'BEGIN { exit !(m >= g) }'; then
				r="$r MISS"
				miss=$((miss + 1))
			fi
			;;
		esac
		line="$line $(printf '%-22s' "$r")"
	done
	echo "$line"
done
echo "goals: every sample < 5 ms, gemm.tile < 2 ms: $miss miss(es) ('refused': the sample does not fit that target)"
echo "== softmax --dump=cuda, sm_80, by width W (BM = 8, 256 threads), ms"
for w in 256 512 1024 2048 4096 8192; do
	r=$(build/cputime "$REPS" "$TILEC" samples/softmax.tile --dump=cuda -D W=$w) || true
	echo "W=$w $r"
done
echo "== layout checks past the enumeration limit"
build/bigtile
