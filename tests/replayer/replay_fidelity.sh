#!/bin/bash
# biotape replay's fidelity section (no root: a file target, the null engine): its text lines
# and JSON keys; a replay held back by dependencies (barrier order on a target 40x slower than
# recorded) and one forced to fall behind (one I/O at a time, 2 ms each, for a trace at 2000/s)
# score badly, and a plain replay of the same trace scores far better; the -o result trace
# keeps the same figures in its footer (info and compare show them). The clean
# replay's verdict is not asserted: on a loaded machine the replayer may be late once (the
# verdict on exact data is tests/replayer/test_fidelity.c's).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
command -v python3 >/dev/null || skip "needs python3"
D=$(t_tmpdir) || exit 1

# one thread, 50 us recorded latency, 1000 I/Os at 2000/s, a flush every 8th I/O
"$GEN" -o "$D/w.btape" -n 1000 -r 2000 -p mix:50 -F 8 -S $((8 << 20)) || fail "gen"
T=(--write --engine null --no-progress --create auto)
"$BIOTAPE" replay "$D/w.btape" --target "$D/a" "${T[@]}" --json -o "$D/clean.btape" \
	>"$D/clean.json" || fail "clean replay failed"
"$BIOTAPE" replay "$D/w.btape" --target "$D/b" "${T[@]}" --null-latency 2ms --order barrier \
	--json >"$D/held.json" || fail "slow replay failed"
"$BIOTAPE" replay "$D/w.btape" --target "$D/d" "${T[@]}" --null-latency 2ms --iodepth 1 \
	--json >"$D/behind.json" || fail "capped replay failed"
python3 - "$D/clean.json" "$D/held.json" "$D/behind.json" <<'PY' || fail "fidelity (JSON)"
import json, sys
c, b, l = (json.load(open(p))["fidelity"] for p in sys.argv[1:4])
keys = {"faithful", "fell_behind", "late_share", "gap_ks", "size_ks", "qd_ks", "lat_demerit_us", "iops_corr",
        "qd_corr", "recorded_ios", "replayed_ios", "replayed_after_windows", "lateness", "window_s", "iops", "qd"}
for f in (c, b, l):
    assert keys <= set(f), keys - set(f)
    assert f["recorded_ios"] == f["replayed_ios"] == 1000, (f["recorded_ios"], f["replayed_ios"])
    assert sum(f["lateness"].values()) == 1000, f["lateness"]
    n = len(f["iops"]["recorded"])
    assert n > 10 and all(len(f[k][s]) == n for k in ("iops", "qd") for s in ("recorded", "replayed"))
    assert sum(f["iops"]["recorded"]) == 1000, sum(f["iops"]["recorded"])
    assert sum(f["iops"]["replayed"]) + f["replayed_after_windows"] == 1000, f
    assert f["size_ks"] == 0, f["size_ks"]  # the same requests
# held back: chains of 2 ms I/Os where 50 us were recorded (their issue error counts from
# their release, so the replayer itself need not be late)
assert not b["faithful"], b
assert b["gap_ks"] > 0.3 and b["iops_corr"] < 0.5, (b["gap_ks"], b["iops_corr"])
assert b["lat_demerit_us"] > 1500, b["lat_demerit_us"]
# forced behind by the depth cap: 500/s for a 2000/s trace
assert l["fell_behind"] and not l["faithful"] and l["late_share"] > 0.5, l
assert l["lateness"][">10ms"] > 500, l["lateness"]
assert l["replayed_after_windows"] > 0 and l["iops_corr"] < 0.5, l
# the same trace replayed plainly: much nearer the recording
assert c["gap_ks"] < b["gap_ks"] / 2 and c["iops_corr"] > b["iops_corr"] + 0.3, (c, b)
assert c["lat_demerit_us"] < 100, c["lat_demerit_us"]
PY
# the result trace keeps the section in its footer: info and compare show the same figures
"$BIOTAPE" info --json "$D/clean.btape" >"$D/info.json" || fail "info of the result failed"
"$BIOTAPE" compare --json "$D/w.btape" "$D/clean.btape" >"$D/cmp.json" || fail "compare failed"
python3 - "$D/clean.json" "$D/info.json" "$D/cmp.json" <<'PY' || fail "stored fidelity != JSON's"
import json, sys
r, i, c = (json.load(open(p)) for p in sys.argv[1:4])
f = r["fidelity"]
assert f["recorded_ios"] == 1000 and len(f["iops"]["replayed"]) > 10, f
assert i["footer_tags"]["fidelity"] == f, (i["footer_tags"], f)
assert c["replay_fidelity"] == f, (c.get("replay_fidelity"), f)
PY
out=$("$BIOTAPE" info "$D/clean.btape") || fail "info (text) failed"
grep -q "^footer tags:$" <<<"$out" && grep -q "^  fidelity:$" <<<"$out" &&
	grep -q "^    gap_ks: [0-9.e-]*$" <<<"$out" && grep -q "^      >10ms: [0-9]*$" <<<"$out" ||
	fail "info: no fidelity section: $out"
out=$("$BIOTAPE" compare "$D/w.btape" "$D/clean.btape") || fail "compare (text) failed"
grep -q "^Replay fidelity (stored in B" <<<"$out" && grep -q "^  replayed_ios: 1000$" <<<"$out" ||
	fail "compare: no stored fidelity: $out"
# the compare page heads the stored section with cards that hold its figures
"$BIOTAPE" compare "$D/w.btape" "$D/clean.btape" --html "$D/c.html" || fail "compare --html failed"
"$BIOTAPE" info --json "$D/clean.btape" >"$D/clean.json" || fail "info --json failed"
python3 - "$D/c.html" "$D/clean.json" <<'PY' || fail "compare --html: stored fidelity cards"
import json, re, sys
page = open(sys.argv[1]).read()
f = json.load(open(sys.argv[2]))["footer_tags"]["fidelity"]
cards = {k: float(v) for k, v in re.findall(r'data-key="(replay_[a-z_]*)" data-value="([^"]*)"', page)}
want = {"replay_faithful": float(f["faithful"]), "replay_fell_behind": float(f["fell_behind"]),
        "replay_late_share": 100 * f["late_share"],
        "replay_interarrival_ks": f["gap_ks"], "replay_iops_correlation": f["iops_corr"],
        "replay_latency_demerit_us": f["lat_demerit_us"]}
assert set(cards) == set(want), (cards, want)
for k, v in want.items():
    assert abs(cards[k] - v) <= 1e-9 * max(1, abs(v)), (k, cards[k], v)
PY
"$BIOTAPE" compare "$D/w.btape" "$D/w.btape" --html "$D/p.html" || fail "compare --html (plain)"
grep -q 'data-key="replay_' "$D/p.html" && fail "compare --html: stored fidelity cards of a plain trace"
# a trace that is no replay result has none
"$BIOTAPE" info --json "$D/w.btape" | python3 -c 'import json,sys; assert json.load(sys.stdin)["footer_tags"] == {}' ||
	fail "info: footer tags in a generated trace"
"$BIOTAPE" compare "$D/w.btape" "$D/w.btape" | grep -q "^Replay fidelity" && fail "compare: stored fidelity of a plain trace"

out=$("$BIOTAPE" replay "$D/w.btape" --target "$D/c" "${T[@]}" --null-latency 2ms --iodepth 1 \
	--html "$D/r.html") || fail "text replay failed"
# the page: both window charts, two series each, and the verdict
for c in iops qd; do
	grep -q "data-chart=\"$c\"" "$D/r.html" || fail "html: no $c chart"
done
[ "$(grep -c '<path class="series"' "$D/r.html")" = 4 ] || fail "html: want 4 series"
grep -q 'data-key="faithful" data-value="0"><div class="v">no</div>' "$D/r.html" ||
	fail "html: no verdict"
grep -q "^  fidelity: did NOT keep to the recording ([0-9]*\.[0-9]*% of I/Os over 100 us late > 1%" \
	<<<"$out" ||
	fail "text: no verdict: $out"
grep -q "^    issue lateness: <=1us [0-9]* .* >10ms [0-9]*$" <<<"$out" || fail "text: lateness: $out"
grep -q "^    recorded vs replayed: inter-arrival KS 0\.[0-9]*, size KS 0.000, QD KS .*, latency demerit " \
	<<<"$out" || fail "text: distances: $out"
grep -q "^    per .* window ([0-9]*): IOPS correlation " <<<"$out" || fail "text: windows: $out"
pass
