#!/bin/bash
# biotape replay --order on a file target with the null engine (no root): usage errors, the
# dependency summary in text and JSON, and that causal order stretches a closed-loop trace
# replayed on storage 20x slower than recorded while open loop (none) does not.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
command -v python3 >/dev/null || skip "needs python3"
D=$(t_tmpdir) || exit 1

expect_usage() {
	local err rc
	err=$("$BIOTAPE" replay "$@" 2>&1 >/dev/null); rc=$?
	[ $rc = 2 ] || fail "replay $*: exit $rc, want 2 ($err)"
	[ "$(wc -l <<<"$err")" = 1 ] || fail "replay $*: want one line, got: $err"
	grep -q "^biotape: replay: " <<<"$err" || fail "replay $*: message format: $err"
}
# one thread, 50 us recorded latency, 200 us between issues, a flush every 8th I/O
"$GEN" -o "$D/w.btape" -n 600 -r 5000 -p mix:50 -F 8 -S $((8 << 20)) || fail "gen"
T=(--target "$D/t" --write --engine null --no-progress)
expect_usage "$D/w.btape" "${T[@]}" --order bogus
expect_usage "$D/w.btape" "${T[@]}" --order causal --timing afap
expect_usage "$D/w.btape" "${T[@]}" --order barrier --scale 2
expect_usage "$D/w.btape" "${T[@]}" --order conflict --sweep 1,2
expect_usage "$D/w.btape" "${T[@]}" --order barrier --think-window 1ms
expect_usage "$D/w.btape" "${T[@]}" --order causal --think-window 0
expect_usage "$D/w.btape" "${T[@]}" --order causal --think-window soon
expect_usage "$D/w.btape" "${T[@]}" --order barrier --cross-thread any
expect_usage "$D/w.btape" "${T[@]}" --order causal --cross-thread sometimes
# wake needs a trace recorded with --waits (gen_trace's is not)
expect_usage "$D/w.btape" "${T[@]}" --order causal --cross-thread wake
expect_usage "$D/w.btape" --target "$D/t" --write --null-latency 1ms
[ ! -e "$D/t" ] || fail "a refused replay created the target"

T+=(--create auto --null-latency 1ms)
for m in none causal; do
	"$BIOTAPE" replay "$D/w.btape" "${T[@]}" --order $m --json >"$D/$m.json" ||
		fail "replay --order $m failed"
done
python3 - "$D/none.json" "$D/causal.json" <<'PY' || fail "dependency summary (JSON)"
import json, sys
n, c = (json.load(open(p)) for p in sys.argv[1:3])
assert n["order"] == "none" and c["order"] == "causal", (n["order"], c["order"])
assert c["think_window_us"] == 1000, c["think_window_us"]
# the spin before deadlines: none under causal order (it took the device workers' CPU), 40 us
assert c["spin_us"] == 0 and n["spin_us"] == 40, (c["spin_us"], n["spin_us"])
assert c["cross_thread"] == "off" and "cross_thread" not in n, (c.get("cross_thread"), n)
assert n["ios"] == c["ios"] == 600, (n["ios"], c["ios"])
for k in ("conflict", "barrier", "causal", "cross-thread"):
    assert n["dep_waits"][k]["ios"] == 0 and n["dep_waits"][k]["wait_s"] == 0, n["dep_waits"]
# the thread waited for its previous I/O (1 ms now, 50 us recorded) nearly every time
assert c["dep_waits"]["causal"]["ios"] > 400, c["dep_waits"]
assert c["dep_waits"]["causal"]["wait_s"] > 0.1, c["dep_waits"]
# open loop keeps the recorded 0.12 s; the chains of 1 ms I/Os cannot. Not 600 links in one
# chain: a Poisson gap shorter than the recorded 50 us latency (about 22% of gaps at 5000 IOPS)
# makes the next I/O depend on the one before the last, so two chains overlap there; 0.56-0.57 s
# measured on a quiet machine, more when wake-ups are late
assert n["seconds"] < 0.2, n["seconds"]
assert c["seconds"] > 0.45, c["seconds"]
PY
out=$("$BIOTAPE" replay "$D/w.btape" "${T[@]}" --order causal --think-window 300us \
	--cross-thread off -o "$D/res.btape") || fail "text replay failed"
grep -q "order causal (think window 300.*) (cross-thread off)" <<<"$out" ||
	fail "text: no order in the header: $out"
grep -q "held by a dependency: conflict [0-9]* (.* each), barrier .*, causal [1-9][0-9]* ([0-9.]* [a-zµ]*s each), cross-thread 0" \
	<<<"$out" || fail "text: no dependency line: $out"
"$BIOTAPE" info "$D/res.btape" | grep -q "replay.order.*causal" || fail "result: no replay.order tag"
pass
