#!/usr/bin/env bash
# analyze, profile and compare under mpirun: the analysis is not split across ranks yet, so
# on several ranks they refuse (rank 0 says so in one line, exit 2, nothing on stdout, no
# HTML file) instead of each rank printing the whole report; on one rank (mpirun -n 1) the
# output is byte for byte that of a plain run.
. "$BIOTAPE_SRC/tests/lib.sh"
. "$BIOTAPE_SRC/tests/cluster/mpi.sh"
mpi_require
GEN=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/gen_trace
[ -x "$GEN" ] || fail "missing $GEN"
D=$(t_tmpdir)
"$GEN" -o "$D/a.btape" -n 5000 -p mixed -x 1 || fail "gen a"
"$GEN" -o "$D/b.btape" -n 5000 -p mixed -x 2 || fail "gen b"

for cmd in "analyze $D/a.btape" "analyze --json $D/a.btape $D/b.btape" "profile $D/a.btape" \
	"compare $D/a.btape $D/b.btape"; do
	set -- $cmd
	timeout 120 "${MPIRUN[@]}" -n 2 "$BIOTAPE" "$@" >"$D/out" 2>"$D/err"
	rc=$?
	[ $rc = 2 ] || fail "$cmd on 2 ranks: exit $rc, want 2: $(cat "$D/err")"
	[ ! -s "$D/out" ] || fail "$cmd on 2 ranks wrote a report: $(head -3 "$D/out")"
	[ "$(grep -c '^biotape: ' "$D/err")" = 1 ] || fail "$cmd: not one line: $(cat "$D/err")"
	grep -q "^biotape: $1: parallel analysis under MPI is not implemented (2 ranks)" "$D/err" ||
		fail "$cmd: $(cat "$D/err")"
	timeout 120 "${MPIRUN[@]}" -n 1 "$BIOTAPE" "$@" >"$D/one" 2>"$D/err" ||
		fail "$cmd on one rank: $(cat "$D/err")"
	"$BIOTAPE" "$@" >"$D/plain" || fail "$cmd"
	cmp -s "$D/one" "$D/plain" || fail "$cmd: one rank differs from a plain run"
done
timeout 120 "${MPIRUN[@]}" -n 2 "$BIOTAPE" analyze "$D/a.btape" --html "$D/r.html" 2>/dev/null &&
	fail "--html on 2 ranks accepted"
ls "$D" | grep -q "r.html" && fail "an HTML file was written: $(ls "$D")"
pass
