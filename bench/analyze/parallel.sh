#!/bin/bash
# Parallel analysis: `mpirun -n N biotape analyze` against one process on the same trace
# (gen_trace -p mixed, 200k IOPS), for each trace size in SIZES (events) and each N in
# RANKS, alternating one process and each N in every round, medians of RUNS rounds.
# Per run:
#   - wall: the whole command (mpirun's wall for N ranks), /usr/bin/time;
#   - biotape: from the first rank's start to the last rank's exit (the ranks' own
#     BIOTAPE_SPLIT_TIMES stamps; mpirun's start of the processes and its end left out);
#   - busiest: the CPU seconds of the busiest rank (getrusage at its end); one process: its
#     user + sys. one's busiest / N's: the critical path's speed-up (what N idle cores give);
#   - job cpu: user + sys of the whole job (mpirun and its ranks) over one process's.
# The row "2 halves" is the machine's own ceiling for two workers, without MPI, slices or a
# merge: two plain `biotape analyze` processes at once, one on --to the middle, one on --from
# it (wall of the pair; busiest: the larger of their CPU times).
# Then, for each size and N, where rank 0's wall time went (medians, ms from mpirun's start):
# the process started, MPI up, its slice read, every part received, report written and MPI
# closed; the slowest rank's end of reading, its lag behind the fastest, its reading thread's
# run-queue wait (runnable, no CPU: the machine's other load), and the slices' event balance. The load average before and after says
# whether the machine was shared (wall time is then not ours alone). Every parallel report
# is checked equal to the one-process report.
#   usage: bench/analyze/parallel.sh [BUILD_DIR]   env: RUNS (5), SIZES ("20000000"; EVENTS
#          is one size), RANKS ("2 3 4"), DIR (/dev/shm), KEEP=1 keeps the traces
set -u
BUILD=${1:-build}
BIN=$BUILD/bin
RUNS=${RUNS:-5}
SIZES=${SIZES:-${EVENTS:-20000000}}
RANKS=${RANKS:-"2 3 4"}
DIR=${DIR:-/dev/shm}
for t in biotape gen_trace; do
	[ -x "$BIN/$t" ] || { echo "missing $BIN/$t" >&2; exit 1; }
done
command -v mpirun >/dev/null || { echo "needs mpirun (openmpi-bin)" >&2; exit 1; }
MPIRUN=(mpirun --oversubscribe -x BIOTAPE_SPLIT_TIMES)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; [ "${KEEP:-0}" = 1 ] || rm -f "$DIR"/biotape-bench-par.$$.*.btape' EXIT
# Open MPI's shared-memory files (vader_segment.*) under $TMP, removed at exit: a killed job
# leaves none in /dev/shm
mkdir -p "$TMP/ompi"
export OMPI_MCA_btl_vader_backing_directory=$TMP/ompi

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$2" '{ print $c }' "$TMP/$1" | median; }
now_ns() { date +%s%N; }

# one SIZE: one process; appends "wall cpu wall cpu" (biotape = the whole run) to one.SIZE
one() {
	/usr/bin/time -f "%e %U %S" -o "$TMP/t" "$BIN/biotape" analyze "$TRACE" \
		>"$TMP/one.$1.out" 2>"$TMP/err" || { echo "one: $(cat "$TMP/err")" >&2; exit 1; }
	[ ! -s "$TMP/err" ] || { echo "one: $(cat "$TMP/err")" >&2; exit 1; }
	awk '{ print $1, $2 + $3, $1, $2 + $3 }' "$TMP/t" >>"$TMP/one.$1"
}
# ranks SIZE N: appends "wall jobcpu biotape busiest" to n.SIZE.N and rank 0's phases (ms
# since mpirun's start: start init read sent end) and the slowest read to ph.SIZE.N
ranks() {
	local t0
	t0=$(now_ns)
	BIOTAPE_SPLIT_TIMES=$t0 /usr/bin/time -f "%e %U %S" -o "$TMP/t" "${MPIRUN[@]}" -n "$2" \
		"$BIN/biotape" analyze "$TRACE" >"$TMP/n.out" 2>"$TMP/err" ||
		{ echo "n=$2 failed: $(cat "$TMP/err")" >&2; exit 1; }
	grep -v '^biotape: analyze: rank [0-9]* times' "$TMP/err" >"$TMP/err2"
	[ ! -s "$TMP/err2" ] || { echo "n=$2: $(cat "$TMP/err2")" >&2; exit 1; }
	[ "$(grep -c ' times (ms): ' "$TMP/err")" = "$2" ] ||
		{ echo "n=$2: not one BIOTAPE_SPLIT_TIMES line per rank" >&2; exit 1; }
	cmp -s "$TMP/one.$1.out" "$TMP/n.out" || { echo "n=$2: report differs" >&2; exit 1; }
	# per rank: its wall stamps (before "|") and its total CPU (after "cpu ")
	awk -v t="$TMP/t" 'function v(k,   i) { for (i = 1; i < NF && $i != "|"; i++)
			if ($i == k) return $(i + 1); return "" }
		{ s = v("start"); e = v("end"); r = v("read"); q = 0; ev = 0
		  for (i = 1; i < NF; i++) {
			if ($i == "cpu" && $(i + 1) ~ /^[0-9.]+$/) c = $(i + 1)
			if ($i == "runq") q = $(i + 1) + 0
			if ($i == "events") ev = $(i + 1) + 0 }
		  if (NR == 1 || s < s0) s0 = s; if (e > e1) e1 = e; if (c > cm) cm = c
		  if (r > rm) { rm = r; rq = q }
		  if (NR == 1 || ev < evlo) evlo = ev; if (ev > evhi) evhi = ev
		  if (NR == 1 || r < rlo) rlo = r
		  if ($4 == "0") ph = s " " v("init") " " r " " v("sent") " " e }
		END { getline l < t; split(l, w, " ")
		      printf "%s %s %.3f %.3f\n", w[1], w[2] + w[3], (e1 - s0) / 1000, cm / 1000 > "/dev/stderr"
		      print ph, rm, rm - rlo, rq, evhi / (evlo ? evlo : 1) }' "$TMP/err" \
		>>"$TMP/ph.$1.$2" 2>>"$TMP/n.$1.$2"
}

# halves SIZE: the two halves at once; appends "wall jobcpu wall busiest" to h.SIZE
halves() {
	local mid=$(($1 / 400000)) # seconds: the trace is SIZE / 200k IOPS long
	/usr/bin/time -f "%e %U %S" -o "$TMP/t" sh -c '
		/usr/bin/time -f "%U %S" -o "$1.a" "$2" analyze --to "$3"s "$4" >/dev/null &
		/usr/bin/time -f "%U %S" -o "$1.b" "$2" analyze --from "$3"s "$4" >/dev/null
		wait $!' sh "$TMP/h" "$BIN/biotape" "$mid" "$TRACE" ||
		{ echo "halves failed" >&2; exit 1; }
	read -r w u s <"$TMP/t"
	cat "$TMP/h.a" "$TMP/h.b" | awk -v w="$w" -v c="$(echo "$u + $s" | bc -l)" \
		'{ k = $1 + $2; if (k > m) m = k } END { print w, c, w, m }' >>"$TMP/h.$1"
}

echo "$(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for size in $SIZES; do
	TRACE=$DIR/biotape-bench-par.$$.$size.btape
	"$BIN/gen_trace" -o "$TRACE" -n "$size" -p mixed -x 1 || exit 1
	echo "trace: $size events ($(du -m "$TRACE" | cut -f1) MiB)"
done
for ((i = 0; i < RUNS; i++)); do
	for size in $SIZES; do
		TRACE=$DIR/biotape-bench-par.$$.$size.btape
		one "$size"
		for n in $RANKS; do
			ranks "$size" "$n"
		done
		halves "$size"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS rounds"
printf '%-11s %8s %7s %7s %9s %9s %9s %7s %8s\n' events ranks "wall s" "wall x" "biotape s" \
	"biotape x" "busiest s" "crit. x" "cpu/one"
for size in $SIZES; do
	w1=$(col "one.$size" 1) c1=$(col "one.$size" 2)
	printf '%-11s %8s %7.2f %7.2f %9.2f %9.2f %9.2f %7.2f %8.2f\n' "$size" 1 "$w1" 1 "$w1" 1 \
		"$c1" 1 1
	for n in $RANKS; do
		w=$(col "n.$size.$n" 1) c=$(col "n.$size.$n" 2) b=$(col "n.$size.$n" 3)
		k=$(col "n.$size.$n" 4)
		printf '%-11s %8s %7.2f %7.2f %9.2f %9.2f %9.2f %7.2f %8.2f\n' "$size" "$n" "$w" \
			"$(echo "$w1 / $w" | bc -l)" "$b" "$(echo "$w1 / $b" | bc -l)" "$k" \
			"$(echo "$c1 / $k" | bc -l)" "$(echo "$c / $c1" | bc -l)"
	done
	w=$(col "h.$size" 1) c=$(col "h.$size" 2) k=$(col "h.$size" 4)
	printf '%-11s %8s %7.2f %7.2f %9s %9s %9.2f %7.2f %8.2f\n' "$size" "2 halves" "$w" \
		"$(echo "$w1 / $w" | bc -l)" - - "$k" "$(echo "$c1 / $k" | bc -l)" \
		"$(echo "$c / $c1" | bc -l)"
done
echo "rank 0's wall time (ms from mpirun's start; medians): process started, MPI up, slice read,"
echo "every part received, report written and MPI closed; the slowest rank's slice read, how"
echo "long after the fastest's, and how long that slowest rank's reading thread waited"
echo "runnable for a CPU (schedstat run_delay: other processes, not work); the largest slice's"
echo "events over the smallest's"
printf '%-11s %5s %7s %7s %7s %8s %7s %8s %7s %8s %7s\n' events ranks started "MPI up" read \
	received end "slow read" "- fast" "its runq" "ev max/min"
for size in $SIZES; do
	for n in $RANKS; do
		printf '%-11s %5s' "$size" "$n"
		for c in 1 2 3 4 5; do printf ' %7.0f' "$(col "ph.$size.$n" $c)"; done
		printf ' %8.0f %7.0f %8.0f %7.3f\n' "$(col "ph.$size.$n" 6)" "$(col "ph.$size.$n" 7)" \
			"$(col "ph.$size.$n" 8)" "$(col "ph.$size.$n" 9)"
	done
done
