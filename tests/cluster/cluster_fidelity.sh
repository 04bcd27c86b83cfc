#!/usr/bin/env bash
# Fidelity in a cluster replay (mpirun -n 3, the null engine with a fixed latency onto three
# files): each rank judges its own replay against its own trace.
#  - rank r's section in the cluster JSON (cluster.rank[r].fidelity) is the one its -o result
#    trace keeps (footer tag `fidelity`), byte for byte as JSON;
#  - it is what a single-host replay of that rank's trace reports, for the fields that do not
#    depend on timing (recorded and replayed I/O counts, size KS, window width, the recorded
#    IOPS and QD series);
#  - the cluster's section (top-level `fidelity`) merges them: its I/O counts and lateness
#    buckets are the sums of the ranks', `ranks` is 3, `ranks_unfaithful` counts the ranks
#    whose verdict is false, and it is faithful only when every rank is;
#  - with three different traces (windows of different widths) the cluster has no per-window
#    series (said so); with one trace on every rank its series are the ranks' sums;
#  - the text report has one fidelity line per rank.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
command -v python3 >/dev/null || skip "needs python3"
mpi_require
t_gen
D=$(t_tmpdir) || exit 1
for r in 0 1 2; do
	# 600 I/Os at 5k IOPS, 70% reads, different seeds: windows of different widths
	"$GEN" -o "$D/t$r.btape" -n 600 -r 5000 -p mix:70 -S $((16 << 20)) -s $((8 << 20)) \
		-x $((r + 21)) || fail "gen $r"
	truncate -s 16M "$D/img$r" || fail "truncate"
done
opts=(--target "$D/img%r" --write --engine null --null-latency 50us --no-progress)

# 1. three traces, JSON, a result trace per rank
timeout 120 "${MPIRUN[@]}" -n 3 "$BIOTAPE" replay "$D/t%r.btape" "${opts[@]}" --json \
	-o "$D/res-%r.btape" >"$D/c.json" 2>"$D/c.err" || fail "cluster replay: $(tail -5 "$D/c.err")"
for r in 0 1 2; do
	"$BIOTAPE" info --json "$D/res-$r.btape" >"$D/res-$r.info" || fail "info res-$r"
	# the same trace, one host
	timeout 60 "$BIOTAPE" replay "$D/t$r.btape" --target "$D/img$r" "${opts[@]:2}" --json \
		>"$D/one-$r.json" 2>"$D/one-$r.err" || fail "single-host replay $r: $(cat "$D/one-$r.err")"
done
# 2. one trace on every rank: windows of the same width
timeout 120 "${MPIRUN[@]}" -n 3 "$BIOTAPE" replay "$D/t0.btape" "${opts[@]}" --json \
	>"$D/s.json" 2>"$D/s.err" || fail "cluster replay, one trace: $(tail -5 "$D/s.err")"
# 3. the text report
timeout 120 "${MPIRUN[@]}" -n 3 "$BIOTAPE" replay "$D/t%r.btape" "${opts[@]}" \
	>"$D/c.txt" 2>"$D/t.err" || fail "cluster replay, text: $(tail -5 "$D/t.err")"

python3 - "$D" <<'PY' || fail "cluster fidelity checks"
import json, sys
D = sys.argv[1]
c = json.load(open(f"{D}/c.json"))
ranks = [x["fidelity"] for x in c["cluster"]["rank"]]
fid = c["fidelity"]
assert len(ranks) == 3
for r, f in enumerate(ranks):
    kept = json.load(open(f"{D}/res-{r}.info"))["footer_tags"]["fidelity"]
    assert f == kept, f"rank {r}: the cluster JSON's section is not its result trace's: {f} != {kept}"
    one = json.load(open(f"{D}/one-{r}.json"))["fidelity"]
    for k in ("recorded_ios", "replayed_ios", "size_ks", "window_s"):
        assert f[k] == one[k], f"rank {r}: {k} {f[k]}, single-host {one[k]}"
    # the series run to the later side's last window: the recorded one's trailing zeros
    # depend on how long the replay took
    def cut(v):
        while v and v[-1] == 0:
            v = v[:-1]
        return v
    for k in ("iops", "qd"):
        assert cut(f[k]["recorded"]) == cut(one[k]["recorded"]), \
            f"rank {r}: recorded {k} series differ: {f[k]['recorded']} {one[k]['recorded']}"
    assert f["recorded_ios"] == 600 and f["replayed_ios"] == 600, f
    assert sum(f["lateness"].values()) == 600, f["lateness"]
    print(f"rank {r}: its section is its result trace's and a single-host replay's "
          f"(600 I/Os, window {f['window_s'] * 1e3:.3f} ms)")
def sums(secs, fid):
    for k in ("recorded_ios", "replayed_ios", "replayed_after_windows"):
        assert fid[k] == sum(f[k] for f in secs), f"cluster {k} {fid[k]}, ranks {[f[k] for f in secs]}"
    for b in fid["lateness"]:
        assert fid["lateness"][b] == sum(f["lateness"][b] for f in secs), f"lateness {b}"
    assert fid["ranks"] == 3, fid["ranks"]
    assert fid["ranks_unfaithful"] == sum(not f["faithful"] for f in secs), fid
    assert fid["faithful"] == all(f["faithful"] for f in secs), fid
    assert fid["fell_behind"] == any(f["fell_behind"] for f in secs), fid
sums(ranks, fid)
assert len({f["window_s"] for f in ranks}) == 3, "the traces were meant to differ in span"
assert fid["window_s"] is None and fid["iops"]["recorded"] == [] and fid["iops_corr"] is None, fid
print(f"three traces: counts and lateness are the ranks' sums ({fid['recorded_ios']} I/Os), no series")

s = json.load(open(f"{D}/s.json"))
ranks = [x["fidelity"] for x in s["cluster"]["rank"]]
fid = s["fidelity"]
sums(ranks, fid)
assert fid["window_s"] == ranks[0]["window_s"], (fid["window_s"], ranks[0]["window_s"])
for k in ("iops", "qd"):
    for side in ("recorded", "replayed"):
        n = max(len(f[k][side]) for f in ranks)
        assert len(fid[k][side]) == n, (k, side, len(fid[k][side]), n)
for side in ("recorded", "replayed"):
    want = [sum(f["iops"][side][i] if i < len(f["iops"][side]) else 0 for f in ranks)
            for i in range(len(fid["iops"][side]))]
    assert fid["iops"][side] == want, f"cluster {side} IOPS series is not the ranks' sum"
print(f"one trace: the cluster's series are the ranks' sums ({len(fid['iops']['recorded'])} windows)")

txt = open(f"{D}/c.txt").read()
assert "fidelity, 3 ranks merged: " in txt, txt
lines = [l for l in txt.splitlines() if " late " in l and "recording" in l]
assert len(lines) == 3, f"want a fidelity line per rank: {lines}"
print("text: one fidelity line per rank")
PY
pass
