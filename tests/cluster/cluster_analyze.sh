#!/usr/bin/env bash
# analyze under mpirun: split across the ranks by time slices and merged at rank 0, it prints
# the very report one process prints (text, JSON, HTML), byte for byte, on 2 and 3 ranks:
# a multi-chunk trace of two devices and eight processes, three files of one cluster
# recording (per-host rows, clocks corrected), and a real recording (samples/). The split must really happen: no "not split"
# line on stderr, and the other ranks print nothing. A filter (--from) is not split: one
# line says so and the report is still the one-process one. profile and compare refuse on
# several ranks (one line, exit 2, nothing on stdout); on one rank (mpirun -n 1) every
# command's output is that of a plain run.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
mpi_require
GEN=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/gen_trace
[ -x "$GEN" ] || fail "missing $GEN"
D=$(t_tmpdir) || exit 1
# 3 s at 200k IOPS in 12 chunks, 2 devices, 8 processes
"$GEN" -o "$D/a.btape" -n 600000 -p mixed -x 1 || fail "gen a"
"$GEN" -o "$D/b.btape" -n 5000 -p mixed -x 2 || fail "gen b"
# one cluster recording, three hosts of 8 s each, clocks off by +3 ms and -7 ms
S0=1000000000 S1=3000000000
"$GEN" -o "$D/h0.btape" -n 40000 -r 5000 -x 1 -H h0 -T 2000000000 \
	-C rec7,0,3,h0,$S0,0,0,$S1,0,0 || fail "gen h0"
"$GEN" -o "$D/h1.btape" -n 40000 -r 5000 -x 2 -H h1 -T 2004000502 \
	-C rec7,1,3,h0,$S0,3000000,20,$S1,3001000,30 || fail "gen h1"
"$GEN" -o "$D/h2.btape" -n 40000 -r 5000 -x 3 -H h2 -T 1995000000 \
	-C rec7,2,3,h0,$S0,-7000000,40,$S1,-7000000,25 || fail "gen h2"
H="$D/h0.btape $D/h1.btape $D/h2.btape"

# same NAME RANKS ARGS...: the parallel report is the plain one, and it was split
same() {
	local name=$1 n=$2
	shift 2
	"$BIOTAPE" analyze "$@" >"$D/plain" 2>"$D/err" || fail "$name: plain: $(cat "$D/err")"
	timeout 300 "${MPIRUN[@]}" -n "$n" "$BIOTAPE" analyze "$@" >"$D/par" 2>"$D/err" ||
		fail "$name on $n ranks: exit $?: $(cat "$D/err")"
	[ ! -s "$D/err" ] || fail "$name on $n ranks: stderr: $(cat "$D/err")"
	cmp -s "$D/plain" "$D/par" ||
		fail "$name on $n ranks differs: $(diff "$D/plain" "$D/par" | head -8)"
	echo "$name on $n ranks: identical ($(wc -c <"$D/par") bytes)"
}
for n in 2 3; do
	same "multi-chunk text" $n "$D/a.btape"
	same "multi-chunk JSON" $n --json "$D/a.btape"
	same "cluster text" $n $H
	same "cluster JSON" $n --json $H
	same "two files JSON" $n --json "$D/a.btape" "$D/b.btape"
	# a real recording: a device idle for longer than the warm-up, idle periods
	same "pgbench checkpoint JSON" $n --json "$BIOTAPE_SRC/samples/pgbench-checkpoint.btape"
done
# Each rank analyses the slice the launcher's variables name while MPI comes up: with
# BIOTAPE_SPLIT_TIMES every rank says when it opened the files and when MPI was up (one line
# each), and the files were opened first. When those variables name another rank (swapped
# here), the rank analyses its real slice after MPI is up: the same report.
# opened_first FILE WANT: WANT (yes/no) for both ranks' lines, whether "open" came before "init"
opened_first() {
	[ "$(grep -c '^biotape: analyze: rank [01] times (ms): start ' "$1")" = 2 ] ||
		fail "BIOTAPE_SPLIT_TIMES: want one line per rank: $(cat "$1")"
	awk -v want="$2" '{ for (i = 1; i < NF; i++) { if ($i == "init") t = $(i + 1);
		if ($i == "open") o = $(i + 1); if ($i == "|") break }
		if ((o < t ? "yes" : "no") != want) bad = 1 } END { exit bad }' "$1" ||
		fail "BIOTAPE_SPLIT_TIMES: files opened before MPI was up is not '$2': $(cat "$1")"
}
"$BIOTAPE" analyze "$D/a.btape" >"$D/plain" || fail "plain a"
BIOTAPE_SPLIT_TIMES=1 timeout 300 "${MPIRUN[@]}" -x BIOTAPE_SPLIT_TIMES -n 2 "$BIOTAPE" analyze \
	"$D/a.btape" >"$D/par" 2>"$D/err" || fail "split times: $(cat "$D/err")"
cmp -s "$D/plain" "$D/par" || fail "split times: the report differs"
opened_first "$D/err" yes
BIOTAPE_SPLIT_TIMES=1 timeout 300 "${MPIRUN[@]}" -x BIOTAPE_SPLIT_TIMES -n 2 sh -c \
	'OMPI_COMM_WORLD_RANK=$(((OMPI_COMM_WORLD_RANK + 1) % 2)) exec "$@"' sh "$BIOTAPE" \
	analyze "$D/a.btape" >"$D/par" 2>"$D/err" || fail "swapped ranks: $(cat "$D/err")"
cmp -s "$D/plain" "$D/par" || fail "swapped ranks: the report differs"
opened_first "$D/err" no
echo "slices analysed while MPI comes up; on the wrong slice, again after: identical"

# Slices hold about as many events each, not as many seconds (planned from the files' chunk
# index): 3 s at 200k IOPS then 5 s at 5k IOPS (two files of one host). By time, 2 ranks
# would read 620k and 20k events; by events, whole 1 s windows allow 410k and 230k. Each
# rank's BIOTAPE_SPLIT_TIMES line counts its slice's events: the larger at most 2x the
# smaller, on 2 and 3 ranks, and the report is the one-process one.
"$GEN" -o "$D/slow.btape" -n 40000 -r 5000 -x 2 -H bench || fail "gen slow"
"$BIOTAPE" analyze "$D/a.btape" "$D/slow.btape" >"$D/plain" || fail "plain a + slow"
for n in 2 3; do
	BIOTAPE_SPLIT_TIMES=1 timeout 300 "${MPIRUN[@]}" -x BIOTAPE_SPLIT_TIMES -n $n \
		"$BIOTAPE" analyze "$D/a.btape" "$D/slow.btape" >"$D/par" 2>"$D/err" ||
		fail "uneven rate on $n ranks: $(cat "$D/err")"
	cmp -s "$D/plain" "$D/par" || fail "uneven rate on $n ranks: the report differs"
	sed -n 's/^biotape: analyze: rank [0-9]* times (ms): .*; events \([0-9]*\)$/\1/p' \
		"$D/err" | sort -n >"$D/events"
	[ "$(wc -l <"$D/events")" = $n ] && [ "$(awk '{ s += $1 } END { print s }' "$D/events")" = 640000 ] ||
		fail "uneven rate on $n ranks: want $n lines counting 640000 events: $(cat "$D/err")"
	awk 'NR == 1 { lo = $1 } END { exit !($1 <= 2 * lo) }' "$D/events" ||
		fail "uneven rate on $n ranks: slices unbalanced: $(tr '\n' ' ' <"$D/events")"
	echo "uneven rate on $n ranks: identical, events per rank $(tr '\n' ' ' <"$D/events")"
done

# a merge that would not be exact: an I/O issued at 0.5 s completes at 3 s, past the 1 s
# warm-up of the slice from 2 s (4 s of MSR Cambridge CSV, 1 ms apart): one line, the same
# report (rank 0 analyses alone)
awk 'BEGIN { for (i = 0; i < 4000; i++) printf "12816637%010d,hm,1,%s,%d,4096,%d\n", \
	i * 10000, i % 3 ? "Read" : "Write", (i * 7919 % 100000) * 4096, \
	i == 500 ? 25000000 : 1000 }' >"$D/long.csv"
"$BIOTAPE" convert "$D/long.csv" "$D/long.btape" --from msr -q || fail "convert long.csv"
"$BIOTAPE" analyze "$D/long.btape" >"$D/plain" || fail "plain long"
timeout 300 "${MPIRUN[@]}" -n 2 "$BIOTAPE" analyze "$D/long.btape" >"$D/par" 2>"$D/err" ||
	fail "long I/O on 2 ranks: $(cat "$D/err")"
grep -qx "biotape: analyze: not split across 2 ranks (an I/O outlived the warm-up before a slice (idle periods)): analysed on rank 0 alone" "$D/err" ||
	fail "long I/O: $(cat "$D/err")"
cmp -s "$D/plain" "$D/par" || fail "long I/O on 2 ranks differs"

# HTML: written by rank 0 only, the same file
"$BIOTAPE" analyze $H --html "$D/plain.html" || fail "plain html"
timeout 300 "${MPIRUN[@]}" -n 3 "$BIOTAPE" analyze $H --html "$D/par.html" 2>"$D/err" ||
	fail "html on 3 ranks: $(cat "$D/err")"
[ ! -s "$D/err" ] || fail "html on 3 ranks: stderr: $(cat "$D/err")"
cmp -s "$D/plain.html" "$D/par.html" || fail "html on 3 ranks differs"

# a filter: not split, one line, same report
"$BIOTAPE" analyze --from 1s "$D/a.btape" >"$D/plain" || fail "plain --from"
timeout 300 "${MPIRUN[@]}" -n 2 "$BIOTAPE" analyze --from 1s "$D/a.btape" >"$D/par" 2>"$D/err" ||
	fail "--from on 2 ranks: $(cat "$D/err")"
[ "$(grep -c '^biotape: ' "$D/err")" = 1 ] || fail "--from: not one line: $(cat "$D/err")"
grep -q "^biotape: analyze: not split across 2 ranks (--from, --to, --device and --pid are not split): analysed on rank 0 alone$" "$D/err" ||
	fail "--from: $(cat "$D/err")"
cmp -s "$D/plain" "$D/par" || fail "--from on 2 ranks differs"

# an input that cannot be opened on several ranks: one line, exit 1, nothing on stdout
timeout 120 "${MPIRUN[@]}" -n 2 "$BIOTAPE" analyze "$D/missing.btape" >"$D/out" 2>"$D/err"
rc=$?
[ $rc = 1 ] || fail "missing file on 2 ranks: exit $rc, want 1: $(cat "$D/err")"
[ ! -s "$D/out" ] || fail "missing file on 2 ranks wrote a report"
[ "$(grep -c '^biotape: ' "$D/err")" = 1 ] || fail "missing file: not one line: $(cat "$D/err")"

for cmd in "profile $D/b.btape" "compare $D/a.btape $D/b.btape"; do
	set -- $cmd
	timeout 120 "${MPIRUN[@]}" -n 2 "$BIOTAPE" "$@" >"$D/out" 2>"$D/err"
	rc=$?
	[ $rc = 2 ] || fail "$cmd on 2 ranks: exit $rc, want 2: $(cat "$D/err")"
	[ ! -s "$D/out" ] || fail "$cmd on 2 ranks wrote a report: $(head -3 "$D/out")"
	[ "$(grep -c '^biotape: ' "$D/err")" = 1 ] || fail "$cmd: not one line: $(cat "$D/err")"
	grep -q "^biotape: $1: not split across ranks (2 ranks; only analyze is)" "$D/err" ||
		fail "$cmd: $(cat "$D/err")"
done
for cmd in "analyze $D/b.btape" "profile $D/b.btape" "compare $D/a.btape $D/b.btape"; do
	set -- $cmd
	timeout 120 "${MPIRUN[@]}" -n 1 "$BIOTAPE" "$@" >"$D/one" 2>"$D/err" ||
		fail "$cmd on one rank: $(cat "$D/err")"
	"$BIOTAPE" "$@" >"$D/plain" || fail "$cmd"
	cmp -s "$D/one" "$D/plain" || fail "$cmd: one rank differs from a plain run"
done
pass
