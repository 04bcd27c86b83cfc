#!/bin/bash
# Analyzer benchmark: `biotape analyze` (full text report) on 10 M and 50 M event traces
# against `zstd -d` of the same file (the .btape file is a sequence of zstd frames) and the
# format reader alone (decode floor), alternating A/B/C, medians of RUNS runs.
# Reports events/s per CPU second (user+sys: the machine is shared, wall time is not ours),
# events/s of wall time, peak RSS, and the ratios. Not run by the test suite.
#   usage: bench/analyze/run.sh [BUILD_DIR]   env: RUNS (3), SIZES ("10000000 50000000"),
#          DIR (/dev/shm), KEEP=1 keeps the traces, BASE=/path/to/other/biotape also measures
#          that binary (tool "base", alternated with the others: before/after in one run),
#          COUNT=N also counts instructions and mispredicted branches per event of analyze
#          (and base) on an N-event trace with valgrind's cachegrind: figures that do not
#          move with the host's speed (a 1 M trace takes about 15 s per binary),
#          TRACES="FILE..." also measures these traces (paths without spaces), after the
#          generated ones (for example a real recording from bench/analyze/record_real.sh)
set -u
BUILD=${1:-build}
BIN=$BUILD/bin
RUNS=${RUNS:-3}
SIZES=${SIZES:-"10000000 50000000"}
DIR=${DIR:-/dev/shm}
for t in biotape gen_trace analyze_read_floor; do
	[ -x "$BIN/$t" ] || { echo "missing $BIN/$t (build with -DBIOTAPE_BENCH=ON)" >&2; exit 1; }
done
command -v zstd >/dev/null || { echo "needs zstd" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; [ "${KEEP:-0}" = 1 ] || rm -f "$DIR"/biotape-bench-an.*.btape' EXIT

# measure NAME CMD...: appends "elapsed user sys maxrss_kb" to $TMP/NAME
measure() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$TMP/t" "$@" >/dev/null 2>"$TMP/err" ||
		{ echo "$name failed: $(cat "$TMP/err")" >&2; exit 1; }
	cat "$TMP/t" >>"$TMP/$name"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$2" '{ print $c }' "$TMP/$1" | median; }
cpu() { awk '{ print $2 + $3 }' "$TMP/$1" | median; }

printf '%-10s %-8s %10s %10s %12s %12s %10s\n' events tool "cpu s" "wall s" "Mev/cpu-s" "Mev/wall-s" "RSS MiB"
for F in $(printf 'gen:%s ' $SIZES) ${TRACES:-}; do
	if [[ $F == gen:* ]]; then
		N=${F#gen:}
		F=$DIR/biotape-bench-an.$N.btape
		[ -s "$F" ] || "$BIN/gen_trace" -p mixed -n "$N" -o "$F" -x 1 || exit 1
	else
		N=$("$BIN/biotape" info --json "$F" | grep -o '"events":[0-9]*' | head -1 | cut -d: -f2)
		[ -n "$N" ] || { echo "$F: cannot read its event count" >&2; exit 1; }
	fi
	rm -f "$TMP"/an "$TMP"/base "$TMP"/zstd "$TMP"/floor
	for r in $(seq "$RUNS"); do
		measure an "$BIN/biotape" analyze "$F"
		if [ -n "${BASE:-}" ]; then measure base "$BASE" analyze "$F"; fi
		measure zstd zstd -d -c "$F"
		measure floor "$BIN/analyze_read_floor" "$F"
	done
	for t in an ${BASE:+base} zstd floor; do
		c=$(cpu $t)
		w=$(col $t 1)
		m=$(col $t 4)
		printf '%-10s %-8s %10.2f %10.2f %12.2f %12.2f %10.1f\n' "$N" "$t" "$c" "$w" \
			"$(echo "$N / $c / 1000000" | bc -l)" "$(echo "$N / $w / 1000000" | bc -l)" \
			"$(echo "$m / 1024" | bc -l)"
	done
	printf '%-10s ratio analyze/zstd -d CPU %.2fx, analyze/reader CPU %.2fx; file %d MiB\n' "$N" \
		"$(echo "$(cpu an) / $(cpu zstd)" | bc -l)" "$(echo "$(cpu an) / $(cpu floor)" | bc -l)" \
		"$(($(stat -c %s "$F") / 1048576))"
	if [ -n "${BASE:-}" ]; then
		printf '%-10s ratio base/analyze CPU %.2fx (speed-up)\n' "$N" \
			"$(echo "$(cpu base) / $(cpu an)" | bc -l)"
	fi
done

# count BINARY TRACE N: "instructions/event mispredicts/event" from cachegrind
count() {
	valgrind --tool=cachegrind --branch-sim=yes --cache-sim=no --cachegrind-out-file=/dev/null \
		"$1" analyze "$2" 2>&1 >/dev/null | awk -v n="$3" '
		/I +refs:/ { gsub(",", "", $4); ir = $4 }
		/Mispredicts:/ { gsub(",", "", $3); bm = $3 }
		END { if (ir == "" || bm == "") exit 1; printf "%.1f %.3f", ir / n, bm / n }'
}
if [ -n "${COUNT:-}" ]; then
	command -v valgrind >/dev/null || { echo "COUNT needs valgrind" >&2; exit 1; }
	F=$DIR/biotape-bench-an.count.$COUNT.btape
	[ -s "$F" ] || "$BIN/gen_trace" -p mixed -n "$COUNT" -o "$F" -x 1 || exit 1
	printf '%-10s %-8s %14s %16s\n' events tool "instr/event" "mispredicts/event"
	for t in an ${BASE:+base}; do
		[ "$t" = an ] && b=$BIN/biotape || b=$BASE
		c=$(count "$b" "$F" "$COUNT") || { echo "cachegrind of $b failed" >&2; exit 1; }
		printf '%-10s %-8s %14s %16s\n' "$COUNT" "$t" ${c% *} ${c#* }
	done
	[ "${KEEP:-0}" = 1 ] || rm -f "$F"
fi
