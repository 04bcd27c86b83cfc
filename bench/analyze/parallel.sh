#!/bin/bash
# Parallel analysis: `mpirun -n N biotape analyze` against one process on the same trace
# (gen_trace -p mixed, EVENTS events, 200k IOPS), N in RANKS, alternating one process and
# each N in every round, medians of RUNS rounds. Per run: wall seconds and CPU seconds
# (user + sys of the whole job, mpirun and its ranks, from /usr/bin/time), and the CPU
# seconds of the busiest rank (each rank under its own /usr/bin/time). Prints the speed-up in
# wall time (one process / N ranks), the speed-up of the critical path (one process's CPU /
# the busiest rank's: what N free cores would give, less mpirun's start), the CPU overhead
# (the job's CPU / one process's), and the load average before and after (the machine may be
# shared: wall time is then not ours alone). Checks every parallel report equals the
# one-process report.
#   usage: bench/analyze/parallel.sh [BUILD_DIR]   env: RUNS (5), EVENTS (20000000),
#          RANKS ("2 3 4"), DIR (/dev/shm), KEEP=1 keeps the trace
set -u
BUILD=${1:-build}
BIN=$BUILD/bin
RUNS=${RUNS:-5}
EVENTS=${EVENTS:-20000000}
RANKS=${RANKS:-"2 3 4"}
DIR=${DIR:-/dev/shm}
for t in biotape gen_trace; do
	[ -x "$BIN/$t" ] || { echo "missing $BIN/$t" >&2; exit 1; }
done
command -v mpirun >/dev/null || { echo "needs mpirun (openmpi-bin)" >&2; exit 1; }
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
TMP=$(mktemp -d)
TRACE=$DIR/biotape-bench-par.$$.btape
trap 'rm -rf "$TMP"; [ "${KEEP:-0}" = 1 ] || rm -f "$TRACE"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# measure NAME CMD...: appends "wall cpu" to $TMP/NAME, the report to $TMP/NAME.out
measure() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$TMP/t" "$@" >"$TMP/$name.out" 2>"$TMP/err" ||
		{ echo "$name failed: $(cat "$TMP/err")" >&2; exit 1; }
	[ ! -s "$TMP/err" ] || { echo "$name: $(cat "$TMP/err")" >&2; exit 1; }
	awk '{ print $1, $2 + $3 }' "$TMP/t" >>"$TMP/$name"
}
col() { awk -v c="$2" '{ print $c }' "$TMP/$1" | median; }

"$BIN/gen_trace" -o "$TRACE" -n "$EVENTS" -p mixed -x 1 || exit 1
echo "trace: $EVENTS events ($(du -m "$TRACE" | cut -f1) MiB), $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	measure one "$BIN/biotape" analyze "$TRACE"
	for n in $RANKS; do
		rm -f "$TMP"/rank.*
		measure "n$n" "${MPIRUN[@]}" -n "$n" sh -c 'exec /usr/bin/time -f "%U %S" \
			-o "$0/rank.$OMPI_COMM_WORLD_RANK" "$@"' "$TMP" "$BIN/biotape" analyze "$TRACE"
		cmp -s "$TMP/one.out" "$TMP/n$n.out" || { echo "n=$n: report differs" >&2; exit 1; }
		cat "$TMP"/rank.* | awk '{ c = $1 + $2; if (c > m) m = c } END { print m }' \
			>>"$TMP/crit$n"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
w1=$(col one 1) c1=$(col one 2)
printf '%-6s %8s %8s %12s %9s %10s %9s\n' ranks "wall s" "cpu s" "busiest s" "wall x" \
	"crit. x" "cpu/one"
printf '%-6s %8.2f %8.2f %12.2f %9s %10s %9s\n' 1 "$w1" "$c1" "$c1" 1.00 1.00 1.00
for n in $RANKS; do
	w=$(col "n$n" 1) c=$(col "n$n" 2) k=$(median <"$TMP/crit$n")
	printf '%-6s %8.2f %8.2f %12.2f %9.2f %10.2f %9.2f\n' "$n" "$w" "$c" "$k" \
		"$(echo "$w1 / $w" | bc -l)" "$(echo "$c1 / $k" | bc -l)" "$(echo "$c / $c1" | bc -l)"
done
