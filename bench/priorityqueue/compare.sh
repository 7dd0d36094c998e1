#!/bin/sh
# compare.sh runs the benchmarks RUNS times (default 5) in separate `go test` runs, so that
# kcache and controller-runtime alternate on every workload, and prints, per workload, the
# ratio controller-runtime/kcache of ns/op, B/op and allocs/op: median [min–max] over runs.
# Usage: ./compare.sh [RUNS] [BENCHTIME]   e.g. ./compare.sh 5 200ms
set -e
runs=${1:-5}
benchtime=${2:-200ms}
out=$(mktemp)
for i in $(seq "$runs"); do
	go test -run '^$' -bench . -benchmem -benchtime "$benchtime" -count 1 . | sed "s/^/run$i /" >>"$out"
done
awk '
$2 ~ /^Benchmark/ {
	name = $2; sub(/-[0-9]+$/, "", name)
	impl = (name ~ /impl=kcache/) ? "k" : "c"
	sub(/\/?impl=[a-z-]+/, "", name)
	key = $1 SUBSEP name
	for (i = 4; i <= NF; i++) {	# by unit: a custom metric may sit between ns/op and B/op
		if ($i == "ns/op") ns[key, impl] = $(i-1)
		if ($i == "B/op") by[key, impl] = $(i-1)
		if ($i == "allocs/op") al[key, impl] = $(i-1)
	}
	names[name] = 1; runs[$1] = 1
}
function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
function stat(arr, n) { sortv(arr, n); return sprintf("%5.2fx [%5.2f-%5.2f]", arr[int((n+1)/2)], arr[1], arr[n]) }
END {
	printf "%-28s %-22s %-22s %s\n", "workload (cr/kcache)", "time", "bytes", "allocs"
	for (name in names) {
		n = 0
		for (r in runs) {
			key = r SUBSEP name
			if (ns[key, "k"] == "" || ns[key, "c"] == "") continue
			n++
			t[n] = ns[key, "c"] / ns[key, "k"]
			b[n] = (by[key, "k"] > 0) ? by[key, "c"] / by[key, "k"] : 0
			a[n] = (al[key, "k"] > 0) ? al[key, "c"] / al[key, "k"] : 0
		}
		printf "%-28s %-22s %-22s %s\n", name, stat(t, n), stat(b, n), stat(a, n)
	}
}' "$out" | sort
echo "raw results: $out"
