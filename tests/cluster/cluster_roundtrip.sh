#!/usr/bin/env bash
# The cluster round trip (issue #18): record three "hosts" (mpirun -n 3 `biotape record`, one
# loop device each, a fio job per rank started 0, 0.4 and 0.8 s after the common start, rank
# clocks shifted by 0, +3 ms and -7 ms), replay the three traces onto three fresh devices with
# the cluster replay (`mpirun -n 3 biotape replay rec-%r.btape`), and record that replay as a
# cluster (`mpirun -n 3 biotape record -- ...`, the replay's own mpirun as rank 0's COMMAND).
# Checks, per host and merged:
#  - the same I/O multiset per host (op, offset, size);
#  - the replay keeps the recording's timeline: each rank's lead (its first I/O after the
#    earliest, on the reference clock) is the recording's, and on the replay's recording the
#    hosts' first I/Os come in the same order, the same distances apart (within 5 ms);
#  - the issue error is reported per rank.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
require_root losetup python3 fio
mpi_require
"$BIOTAPE" record --help >/dev/null 2>&1 || skip "biotape record is not available"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel without BTF"
D=$(t_tmpdir) || exit 1
for r in 0 1 2; do
	t_loop 16
	ln -s "$LOOP" "$D/a$r"
	t_loop 16
	ln -s "$LOOP" "$D/b$r"
done
SHIFT=(0 3000000 -7000000)
job() { # rank: the workload each "host" runs
	echo "sleep 0.$((4 * $1)); exec fio --name=r$1 --filename=$D/a$1 --rw=randrw --bs=4k \
--direct=1 --size=8m --io_size=240k --ioengine=psync --randseed=$((7 + $1)) --output=/dev/null"
}
run=()
for r in 0 1 2; do
	[ $r = 0 ] || run+=(:)
	run+=(-n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=${SHIFT[$r]} "$BIOTAPE" record -o "$D/rec-%r.btape"
		-d "$D/a%r" -- sh -c "$(job $r)")
done
timeout 120 "${MPIRUN[@]}" "${run[@]}" >"$D/out" 2>"$D/err" ||
	fail "cluster record: $(tail -5 "$D/err")"

# The replay, recorded as a cluster: rank 0's COMMAND launches it (COMMAND runs outside the
# recorder's MPI job), the other ranks' COMMAND ends at once and their recorders go on until
# every rank's has ended.
inner="$(printf '%q ' "${MPIRUN[@]}") -n 3 $(printf '%q ' "$BIOTAPE") replay '$D/rec-%r.btape' \
--target '$D/b%r' --write --json --no-progress >'$D/replay.json' 2>'$D/replay.err'"
run=()
for r in 0 1 2; do
	[ $r = 0 ] || run+=(:)
	run+=(-n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=${SHIFT[$r]} "$BIOTAPE" record -o "$D/rep-%r.btape"
		-d "$D/b%r" -- sh -c "[ \"\$BIOTAPE_RANK\" != 0 ] || $inner")
done
timeout 180 "${MPIRUN[@]}" "${run[@]}" >"$D/out2" 2>"$D/err2" ||
	fail "cluster record of the cluster replay: $(tail -5 "$D/err2") $(tail -5 "$D/replay.err" 2>/dev/null)"
for f in rec rep; do
	for r in 0 1 2; do
		"$BIOTAPE" dump --csv "$D/$f-$r.btape" >"$D/$f-$r.csv" || fail "dump $f-$r"
		"$BIOTAPE" info --json "$D/$f-$r.btape" >"$D/$f-$r.info" || fail "info $f-$r"
	done
	"$BIOTAPE" analyze --json "$D/$f"-{0,1,2}.btape >"$D/$f.json" 2>"$D/$f.aerr" ||
		fail "analyze $f: $(cat "$D/$f.aerr")"
done

python3 - "$D" <<'PY' || fail "cluster round trip checks"
import collections, json, sys
D = sys.argv[1]
def rows(name):
    out = []
    for line in open(f"{D}/{name}.csv").read().splitlines()[1:]:
        x = line.split(",")
        if x[6] in ("read", "write"):
            out.append((int(x[0]), (x[6], int(x[4]), int(x[5]))))
    return out
def offset(name):  # the rank's clock offset to the reference, as measured at the start
    return json.load(open(f"{D}/{name}.info"))["cluster"]["sync"][0]["offset_ns"]
rec, rep = [], []
for r in range(3):
    a, b = rows(f"rec-{r}"), rows(f"rep-{r}")
    assert len(a) >= 50, (r, len(a))
    # before the replay's first I/O, its preflight read the target's signatures: drop them
    k = next(i for i, (_, io) in enumerate(b) if io == a[0][1])
    assert k <= 64 and all(io[0] == "read" for _, io in b[:k]), (r, k, b[:k])
    b = b[k:]
    ca, cb = collections.Counter(io for _, io in a), collections.Counter(io for _, io in b)
    assert ca == cb, (r, "recorded", len(a), "replayed", len(b), list((ca - cb).items())[:3],
                      list((cb - ca).items())[:3])
    rec.append(a[0][0] - offset(f"rec-{r}"))
    rep.append(b[0][0] - offset(f"rep-{r}"))
for name in ("rec", "rep"):  # analyze puts the three on one timeline (the recording id)
    j = json.load(open(f"{D}/{name}.json"))
    assert j["alignment"]["align"] == "cluster", j["alignment"]
assert rec[0] < rec[1] < rec[2], rec
assert rep[0] < rep[1] < rep[2], rep
j = json.load(open(f"{D}/replay.json"))
cl = j["cluster"]
assert cl["timeline"] == "recording", cl
for r in range(3):
    w = cl["rank"][r]
    # the lead is the recording's own distance (the same stored offsets, interpolated)
    assert abs(w["lead_ns"] - (rec[r] - rec[0])) <= 2000, (r, w["lead_ns"], rec)
    assert w["issue_error_p99_ns"] >= 0 and w["ios"] >= 50, w
for r in (1, 2):
    got, want = rep[r] - rep[0], rec[r] - rec[0]
    assert abs(got - want) <= 5e6, (r, got, want)
print("first I/Os after host 0's, ms: recorded", [round((x - rec[0]) / 1e6, 3) for x in rec],
      "replayed", [round((x - rep[0]) / 1e6, 3) for x in rep], "start skew",
      cl["start_skew_ns"] / 1e3, "us")
PY
pass
