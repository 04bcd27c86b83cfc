#!/bin/bash
# Parallel analysis of a trace whose rate falls 40x midway, two builds side by side: SIZE
# events of gen_trace -p mixed (200k IOPS) then SIZE/40 at 5k IOPS over as long again (two
# files of one host). Slices by time give one rank nearly all the events; slices by events
# (the chunk index) about half each. Per round, alternating: one process of B, then
# `mpirun -n 2` of A and of B; wall by /usr/bin/time, each parallel report checked equal to
# the one-process one; medians, and B's wall over A's paired by round.
#   usage: bench/analyze/uneven.sh BIN_A BIN_B   env: RUNS (5), SIZE (20000000), DIR (/dev/shm)
#   e.g. A: the build of a commit before 'slices planned by events', B: build/bin/biotape
set -u
A=${1:?usage: uneven.sh BIN_A BIN_B} B=${2:?usage: uneven.sh BIN_A BIN_B}
RUNS=${RUNS:-5} SIZE=${SIZE:-20000000} DIR=${DIR:-/dev/shm}
GEN=$(dirname "$B")/gen_trace
[ -x "$GEN" ] || { echo "missing $GEN" >&2; exit 1; }
MPIRUN=(mpirun -x BIOTAPE_SPLIT_TIMES)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
TMP=$(mktemp -d)
F1=$DIR/biotape-bench-uneven.$$.1.btape F2=$DIR/biotape-bench-uneven.$$.2.btape
trap 'rm -rf "$TMP" "$F1" "$F2"' EXIT
mkdir -p "$TMP/ompi"
export OMPI_MCA_btl_vader_backing_directory=$TMP/ompi
secs=$((SIZE / 200000))
"$GEN" -o "$F1" -n "$SIZE" -p mixed -x 1 -H bench || exit 1
"$GEN" -o "$F2" -n $((SIZE / 40)) -r 5000 -x 2 -H bench -T $(((secs + 1) * 1000000000)) || exit 1
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
"$B" analyze "$F1" "$F2" >"$TMP/one.out" || exit 1
echo "$(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	/usr/bin/time -f "%e" -o "$TMP/t" "$B" analyze "$F1" "$F2" >/dev/null || exit 1
	cat "$TMP/t" >>"$TMP/one"
	for v in A B; do
		bin=$A
		[ $v = B ] && bin=$B
		BIOTAPE_SPLIT_TIMES=1 /usr/bin/time -f "%e" -o "$TMP/t" "${MPIRUN[@]}" -n 2 "$bin" \
			analyze "$F1" "$F2" >"$TMP/par.out" 2>"$TMP/err" ||
			{ echo "$v: $(cat "$TMP/err")" >&2; exit 1; }
		cmp -s "$TMP/one.out" "$TMP/par.out" || { echo "$v: report differs" >&2; exit 1; }
		cat "$TMP/t" >>"$TMP/$v"
		# the slices' events, where the build says them (BIOTAPE_SPLIT_TIMES "events N")
		grep -o 'events [0-9]*$' "$TMP/err" | awk '{ printf "%s ", $2 }' >>"$TMP/ev.$v"
		echo >>"$TMP/ev.$v"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS rounds"
one=$(median <"$TMP/one")
printf '%-14s %7s %8s  %s\n' run "wall s" "x one" "events per rank (last round)"
printf '%-14s %7.2f %8.2f\n' "one process" "$one" 1
for v in A B; do
	w=$(median <"$TMP/$v")
	printf '%-14s %7.2f %8.2f  %s\n' "2 ranks, $v" "$w" "$(echo "$one / $w" | bc -l)" \
		"$(tail -1 "$TMP/ev.$v")"
done
paste "$TMP/B" "$TMP/A" | awk '{ print $1 / $2 }' | median |
	awk '{ printf "B / A, paired by round: %.2f\n", $1 }'
