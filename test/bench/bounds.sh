#!/bin/sh
# bounds.sh: the compiler's cost against the size of its input (issue 19).
# Four families, each compiled to CUDA C (`tilec --dump=cuda`) under
# /usr/bin/time -f '%e %M' (seconds, peak resident KB):
#   copies  N copy statements into one shared tile
#   nests   N parallel nests over a global tensor
#   inline  helpers h0..hD, each calling the next twice (2^D nests inlined;
#           past the inlining limit the compiler refuses at once)
#   softmax a softmax-like kernel of BM = 8 rows by W columns in registers
# For each family the growth exponent between consecutive sizes,
# log(t2/t1) / log(N2/N1) (1: linear, 2: quadratic), is printed after the time.
# Figures of one run are kept in test/bench/RESULTS.md.
# BOUNDS_LIMIT: seconds before a compile is killed (default 120); BOUNDS_MAX: the
# largest N of the copies and nests families (default 30000).
set -eu
TILEC=${TILEC:-build/tilec}
LIMIT=${BOUNDS_LIMIT:-120}
MAX=${BOUNDS_MAX:-30000}
tmp=${TMPDIR:-/tmp}/bounds_bench.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

gen_copies() {
	awk -v n="$1" 'BEGIN {
		print "kernel k(A: f32[M, N], B: f32[M, N]) grid(1) threads(128) {"
		print "  shared s: f32[32, 32];"
		for (i = 0; i < n; i++) printf "  copy(A[0, %d], s);\n", i
		print "  copy(s, B[0, 0]);"
		print "}" }'
}
gen_nests() {
	awk -v n="$1" 'BEGIN {
		print "kernel k(A: f32[M, N]) grid(1) threads(128) {"
		for (i = 0; i < n; i++) {
			print "  for i, j in parallel(4, 32) {"
			printf "    A[i, j] = A[i, j] + %d.0;\n", i
			print "  }"
		}
		print "}" }'
}
gen_inline() {
	awk -v d="$1" 'BEGIN {
		printf "func h%d(A: f32[M, N]) { for i, j in parallel(4, 32) { A[i, j] = A[i, j] + 1.0; } }\n", d
		for (k = d - 1; k >= 0; k--) printf "func h%d(A: f32[M, N]) { h%d(A); h%d(A); }\n", k, k + 1, k + 1
		print "kernel k(A: f32[M, N]) grid(1) threads(128) {"
		print "  h0(A);"
		print "}" }'
}
gen_softmax() {
	cat <<EOT
const BM = 8, W = $1;
kernel softmax(X: f32[M, W], Y: f32[M, W]) grid(cdiv(M, BM)) threads(256) {
    local x: f32[BM, W];
    local m: f32[BM];
    local s: f32[BM];
    copy(X[bx * BM, 0], x);
    reduce(x, m, op = max, dim = 1);
    for i, j in parallel(BM, W) { x[i, j] = exp(x[i, j] - m[i]); }
    reduce(x, s, op = sum, dim = 1);
    for i, j in parallel(BM, W) { x[i, j] /= s[i]; }
    copy(x, Y[bx * BM, 0]);
}
EOT
}

# family size...: one row per size
run() {
	fam=$1
	shift
	prev_n="" prev_t=""
	for n in "$@"; do
		f=$tmp/$fam$n.tile
		"gen_$fam" "$n" > "$f"
		st=0
		/usr/bin/time -f '%e %M' -o "$tmp/time" timeout "$LIMIT" "$TILEC" --dump=cuda "$f" \
			> /dev/null 2> "$tmp/err" || st=$?
		read -r t kb <<EOT
$(tail -1 "$tmp/time")
EOT
		case $fam in
		inline) work=$(awk -v d="$n" 'BEGIN { printf "%.0f", 2 ^ d }') ;;
		softmax) work=$((8 * n)) ;;
		*) work=$n ;;
		esac
		rate=$(awk -v a="$prev_n" -v b="$work" -v s="$prev_t" -v u="$t" -v st="$st" 'BEGIN {
			if (a == "" || st != 0 || s + 0 < 0.05 || u + 0 < 0.05) { print "-"; exit }
			printf "%.2f", log(u / s) / log(b / a) }')
		if [ "$st" -eq 0 ]; then res=ok
		elif [ "$st" -eq 124 ]; then res="killed after $LIMIT s"
		else res="error: $(head -1 "$tmp/err" | cut -c1-60)"; fi
		printf '%-8s %8s %12s %8s %10s %6s  %s\n' "$fam" "$n" "$work" "$t" "$kb" "$rate" "$res"
		if [ "$st" -eq 0 ]; then prev_n=$work prev_t=$t; fi
	done
}

printf '%-8s %8s %12s %8s %10s %6s  %s\n' family N work seconds peak_KB growth result
sizes() { for n in 1000 3000 10000 30000; do [ "$n" -le "$MAX" ] && echo "$n"; done; }
run copies $(sizes)
run nests $(sizes)
run inline 8 10 12 13 31
run softmax 256 1024 2048 4096 2147483647
