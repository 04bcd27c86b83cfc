#!/usr/bin/env bash
# A command killed while it writes its output leaves nothing behind (docs/SAFETY.md): the
# output goes to PATH.tmp.XXXXXX and is renamed into place only when complete; SIGINT, SIGTERM
# or SIGHUP remove that temporary file, the command still dies of the signal (the shell sees
# 128 + N), and nothing appears at PATH. A file already at PATH is left as it was.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
D=$(t_tmpdir) || exit 1
# 3 M events: exporting them to CSV takes about a second, long enough to be caught at it
"$GEN" -o "$D/big.btape" -n 3000000 -r 20000 -S $((256 << 20)) >/dev/null || fail "gen"

# killed SIG NUM OUT: start the export, wait for its temporary file, send SIG
killed() {
	local sig=$1 num=$2 out=$3 pid rc i
	# a background job of a shell without job control ignores SIGINT: give it the default
	env --default-signal=INT "$BIOTAPE" convert "$D/big.btape" "$out" -q &
	pid=$!
	for i in $(seq 400); do
		compgen -G "$out.tmp.*" >/dev/null && break
		sleep 0.01
	done
	compgen -G "$out.tmp.*" >/dev/null || { kill -9 "$pid"; fail "$sig: no temporary file seen"; }
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" = $((128 + num)) ] || fail "$sig: exit $rc, not $((128 + num)) (killed by it)"
	compgen -G "$out.tmp.*" >/dev/null && fail "$sig: left $(echo "$out".tmp.*)"
	return 0
}
killed INT 2 "$D/a.csv"
[ -e "$D/a.csv" ] && fail "INT: a.csv appeared"
killed TERM 15 "$D/b.csv"
[ -e "$D/b.csv" ] && fail "TERM: b.csv appeared"
echo "keep me" >"$D/c.csv"
killed HUP 1 "$D/c.csv"
[ "$(cat "$D/c.csv")" = "keep me" ] || fail "HUP: the file at the output path changed"
# and a run left alone still writes its output
"$BIOTAPE" convert "$D/big.btape" "$D/d.csv" -q || fail "export"
[ "$(wc -l <"$D/d.csv")" -gt 3000000 ] || fail "export: short"
compgen -G "$D/*.tmp.*" >/dev/null && fail "temporary files left: $(echo "$D"/*.tmp.*)"
pass
