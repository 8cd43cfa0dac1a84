#!/bin/sh
# test/bench/cute.sh: speed of `tilec cute --batch`: generates 100,000 lines
# of mixed CuTe algebra operations on random layouts, times one batch run and
# prints operations per second. TILEC names the binary (default build/tilec).
set -e
TILEC=${TILEC:-build/tilec}
N=${N:-100000}
tmp=${TMPDIR:-/tmp}/tilec-cute-bench.$$
trap 'rm -f "$tmp.in" "$tmp.out"' EXIT
awk -v n="$N" 'BEGIN {
	srand(1);
	for (i = 0; i < n; i++) {
		a = 2 ^ int(1 + rand() * 3); b = 2 ^ int(1 + rand() * 3); c = 2 ^ int(1 + rand() * 2);
		L = sprintf("((_%d,_%d),_%d):((_1,_%d),_%d)", a, b, c, a * c, a);
		R = sprintf("(_%d,_%d):(_%d,_1)", a, b, b);
		k = i % 14;
		if (k == 0) print "coalesce\t" L;
		else if (k == 1) print "composition\t" L "\t" sprintf("(_%d,_%d):(_%d,_1)", a, b / 2 > 1 ? b / 2 : 2, 2);
		else if (k == 2) print "complement\t" sprintf("_%d:_%d", a, b) "\t" a * b * c;
		else if (k == 3) print "right_inverse\t" L;
		else if (k == 4) print "left_inverse\t" R;
		else if (k == 5) print "logical_divide\t" L "\t" sprintf("(_%d,_%d)", a / 2 > 1 ? a / 2 : 1, c);
		else if (k == 6) print "zipped_divide\t" R "\t" sprintf("(_%d,_%d)", a, b / 2 > 1 ? b / 2 : 1);
		else if (k == 7) print "logical_product\t" R "\t" sprintf("_%d:_1", c);
		else if (k == 8) print "blocked_product\t" R "\t" sprintf("(_%d,_%d):(_1,_%d)", c, c, c);
		else if (k == 9) print "raked_product\t" R "\t" sprintf("(_%d,_%d):(_%d,_1)", c, a, a);
		else if (k == 10) print "filter\t" sprintf("(_%d,_%d,_%d):(_0,_1,_%d)", a, b, c, b);
		else if (k == 11) print "eval\t" L "\t" int(rand() * a * b * c);
		else if (k == 12) print "composition\tSw<3,4,3>\t" R;
		else print "size\t" L;
	}
}' > "$tmp.in"
start=$(date +%s.%N)
"$TILEC" cute --batch < "$tmp.in" > "$tmp.out"
end=$(date +%s.%N)
lines=$(wc -l < "$tmp.out")
errs=$(grep -c '^ERROR' "$tmp.out" || true)
awk -v s="$start" -v e="$end" -v n="$lines" -v x="$errs" 'BEGIN {
	t = e - s; printf "cute --batch: %d operations (%d errors) in %.3f s: %.0f ops/s\n", n, x, t, n / t }'
[ "$lines" -eq "$N" ]
