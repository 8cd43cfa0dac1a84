#!/bin/sh
# infer.sh: layout inference speed on one component of N statements (N = 25..400):
# a copy, N-2 parallel nests chained through register tiles, a copy. Prints the
# median of 5 runs of `tilec --cost-model=M` (front end + inference, no output)
# and of `tilec --dump=ir` (front end alone) per size, in milliseconds.
set -e
TILEC=${TILEC:-build/tilec}
tmp=${TMPDIR:-/tmp}/infer_bench.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
median() {
	times=""
	for r in 1 2 3 4 5; do
		s=$(date +%s%N)
		"$@" > /dev/null
		e=$(date +%s%N)
		times="$times $(((e - s) / 100000))"
	done
	m=$(echo $times | tr ' ' '\n' | sort -n | sed -n 3p)
	echo "$((m / 10)).$((m % 10))"
}
for model in io-aware register-count; do
	for n in 25 50 100 200 400; do
		f=$tmp/chain$n.tile
		{
			echo "kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {"
			i=0; while [ $i -le $((n / 8)) ]; do echo "  local t$i: f32[64, 64];"; i=$((i + 1)); done
			echo "  copy(A[0, 0], t0);"
			i=1; while [ $i -lt $((n - 1)) ]; do
				echo "  for i, j in parallel(64, 64) { t$(((i + 1) / 8))[i, j] = t$((i / 8))[i, j] + 1.0; }"
				i=$((i + 1))
			done
			echo "  copy(t$(((n - 1) / 8)), B[0, 0]);"
			echo "}"
		} > "$f"
		med=$(median "$TILEC" --cost-model=$model "$f")
		fe=$(median "$TILEC" --dump=ir "$f")
		echo "$model statements=$n total_ms=$med frontend_ms=$fe"
	done
done
