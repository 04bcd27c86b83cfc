#!/bin/bash
# The issuing thread's class (docs/REPLAY.md, "Where the time goes"): the normal class with a
# 40 us spin by default, in every timing; --rt-priority N runs it SCHED_FIFO N with a 10 us spin,
# and a refused --rt-priority is an error (one line, no summary). The summary states the class
# and the lag either way.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root setpriv python3
GEN=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/gen_trace
[ -x "$GEN" ] || skip "no trace generator at $GEN"
D=$(t_tmpdir) || exit 1
chmod 755 "$T_ROOT" "$D"
"$GEN" -o "$D/r.btape" -n 2000 -r 20000 -p randread -S $((16 << 20)) || fail "gen_trace"
truncate -s 16M "$D/t.img" || fail "truncate"
chmod 644 "$D/r.btape" "$D/t.img"
jget() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval("j"+sys.argv[2]))' "$@"; }

# run NAME [setpriv args --] replay args...
replay() {
	local name=$1
	shift
	"$@" "$BIOTAPE" replay "$D/r.btape" --target "$D/t.img" --no-progress --json \
		"${ARGS[@]}" >"$D/$name.json" 2>"$D/$name.err"
}
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)

ARGS=()
replay root || fail "default replay: $(cat "$D/root.err")"
[ "$(jget "$D/root.json" '["rt_priority"]')" = 0 ] || fail "root: default is not the normal class"
[ "$(jget "$D/root.json" '["spin_us"]')" = 40 ] || fail "root: default spin is not 40 us"
for k in '["lag"]["max_us"]' '["lag"]["behind_s"]' '["stages_s"]["run"]' '["fell_behind"]'; do
	jget "$D/root.json" "$k" >/dev/null || fail "no $k in the JSON summary"
done
"$BIOTAPE" replay "$D/r.btape" --target "$D/t.img" --no-progress >"$D/root.txt" ||
	fail "text replay"
grep -Eq "kept up: never more than 100 us behind|the replayer fell behind by" "$D/root.txt" ||
	fail "text: lag not stated"

ARGS=(--rt-priority 1)
replay rt || fail "--rt-priority 1: $(cat "$D/rt.err")"
[ "$(jget "$D/rt.json" '["rt_priority"]')" = 1 ] || fail "--rt-priority 1 is not SCHED_FIFO 1"
[ "$(jget "$D/rt.json" '["spin_us"]')" = 10 ] || fail "real-time spin is not 10 us"
"$BIOTAPE" replay "$D/r.btape" --target "$D/t.img" --no-progress --rt-priority 1 >"$D/rt.txt" ||
	fail "text replay, real-time"
grep -q "issuing thread SCHED_FIFO 1, spin 10 us" "$D/rt.txt" || fail "text: class not stated"

ARGS=(--timing afap)
replay afap || fail "afap: $(cat "$D/afap.err")"
[ "$(jget "$D/afap.json" '["rt_priority"]')" = 0 ] || fail "afap runs real-time"

# not permitted (RLIMIT_RTPRIO 0 and no CAP_SYS_NICE): the default needs nothing
ARGS=()
replay nobody prlimit --rtprio=0 "${as_nobody[@]}" ||
	fail "unprivileged default replay failed: $(cat "$D/nobody.err")"
[ "$(jget "$D/nobody.json" '["rt_priority"]')" = 0 ] || fail "unprivileged: claims real-time"
ARGS=(--rt-priority 5)
if replay nobody5 prlimit --rtprio=0 "${as_nobody[@]}"; then
	fail "a refused --rt-priority 5 did not fail"
fi
[ "$(wc -l <"$D/nobody5.err")" = 1 ] && grep -q "^biotape: replay: --rt-priority 5: " "$D/nobody5.err" ||
	fail "refused --rt-priority: not one line: $(cat "$D/nobody5.err")"
[ ! -s "$D/nobody5.json" ] || fail "refused --rt-priority printed a summary"
pass
