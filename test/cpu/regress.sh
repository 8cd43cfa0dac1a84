#!/bin/sh
# regress.sh REV: run every test/cpu/*.tile kernel with the CUDA C that tilec at REV emits
# (built in a temporary worktree) through today's `tilec run --cuda`, at the sizes of
# check_cpu_diff.c's table: a kernel whose bug REV had must DIFFER (or not build).
# Usage: test/cpu/regress.sh 704d333   (from the repository root, after make)
set -u
rev=${1:?usage: test/cpu/regress.sh REV}
wt=$(mktemp -d)
trap 'git worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt"' EXIT
git worktree add -q --detach "$wt" "$rev" || exit 2
make -s -C "$wt" -j2 build/tilec >/dev/null 2>&1 || { echo "cannot build $rev"; exit 2; }
sizes_of() { # the sizes check_cpu_diff.c gives a file, else its generic sets
	s=$(grep -F "{\"$1\", \"" test/check_cpu_diff.c | grep -v '", "sm_' | head -1 | sed -n 's/^[^,]*, "\([^"]*\)".*/\1/p')
	echo "${s:-*=1;*=37;}"
}
n=0; caught=0
for f in test/cpu/*.tile; do
	n=$((n + 1))
	if ! "$wt/build/tilec" --dump=cuda "$f" >"$wt/k.cu" 2>"$wt/err"; then
		echo "$f: $rev refuses it: $(head -1 "$wt/err")"; caught=$((caught + 1)); continue
	fi
	out=$(build/tilec run --cuda="$wt/k.cu" --sizes "$(sizes_of "$f")" "$f" 2>&1)
	case $? in
	0) echo "$f: agrees at $rev" ;;
	*) caught=$((caught + 1)); echo "$f: $(echo "$out" | grep -m1 -E 'DIFFER|error' | cut -c1-160)" ;;
	esac
done
echo "regress.sh: $caught of $n kernels caught at $rev"
