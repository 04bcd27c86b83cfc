#!/bin/bash
# Format benchmark: bytes/event, write and full-decode speed, peak RSS, and the ratio of a full
# decode to `zstd -d` of the same .btape file (measured alternately in the same run, medians).
#
#   bench/format/run.sh [BUILD_DIR] [EVENTS]      (defaults: build, 10000000; RUNS=3)
#
# Needs: btape_bench (built with BIOTAPE_BENCH=ON, the default); zstd; GNU time (/usr/bin/time).
# Speeds are per CPU second of the process (user + sys), so other load on the machine matters
# less; the file lives in /dev/shm so the disk does not enter.
set -euo pipefail
build=${1:-build}
events=${2:-10000000}
runs=${RUNS:-3}
bench=$build/bin/btape_bench
[ -x "$bench" ] || { echo "run.sh: $bench missing (build with -DBIOTAPE_BENCH=ON)" >&2; exit 1; }
command -v zstd >/dev/null || { echo "run.sh: zstd missing" >&2; exit 1; }
dir=$(mktemp -d /dev/shm/btape-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# cpu seconds and peak RSS (KiB) of a command: "user+sys maxrss"
measure() { /usr/bin/time -f "%U %S %M" -o "$dir/time" "$@" >"$dir/out" 2>/dev/null; awk '{printf "%.3f %d\n", $1+$2, $3}' "$dir/time"; }

printf "%-15s %9s %8s %12s %12s %9s %9s %10s %10s\n" pattern events B/event write_ev/s read_ev/s zstd_d_s read_s \
	read/zstd "RSS w/r MiB"
for pattern in ${PATTERNS:-rand4k seq128k seq128k-jitter oltp}; do
	f=$dir/$pattern.btape
	: >"$dir/w" ; : >"$dir/r" ; : >"$dir/z"
	for i in $(seq "$runs"); do
		set -- $(measure "$bench" write "$pattern" "$events" "$f")
		# writer CPU seconds as the bench measured them (event generation excluded)
		echo "$(sed -n 's/.*writer_cpu_s=\([0-9.]*\).*/\1/p' "$dir/out") $2" >>"$dir/w"
		bytes=$(stat -c %s "$f")
		# alternate: ours, zstd, ours, zstd ...
		set -- $(measure "$bench" read "$f")
		echo "$1 $2" >>"$dir/r"
		set -- $(measure zstd -q -d -c "$f")
		echo "$1 $2" >>"$dir/z"
	done
	wcpu=$(cut -d' ' -f1 "$dir/w" | median); wrss=$(cut -d' ' -f2 "$dir/w" | median)
	rcpu=$(cut -d' ' -f1 "$dir/r" | median); rrss=$(cut -d' ' -f2 "$dir/r" | median)
	zcpu=$(cut -d' ' -f1 "$dir/z" | median)
	awk -v p="$pattern" -v n="$events" -v b="$bytes" -v w="$wcpu" -v r="$rcpu" -v z="$zcpu" \
	    -v wr="$wrss" -v rr="$rrss" 'BEGIN {
		printf "%-15s %9d %8.3f %12.0f %12.0f %9.3f %9.3f %10.2f %5.1f/%-5.1f\n", p, n, b / n,
		       n / w, n / r, z, r, r / z, wr / 1024, rr / 1024 }'
	rm -f "$f"
done
