#!/bin/bash
# --order barrier on a device slower than the recording: a one-thread trace (4 KiB writes at
# 2000/s, a flush after every third, 50 us recorded latency) replayed onto a loop device whose
# writes the cgroup v1 blkio throttle holds to 200/s (the replayer in the throttled child),
# while the device is recorded. From that recording: in barrier order no flush reached the
# device before the writes it covers (those that completed, in the trace, before it was
# issued) had completed there; in open loop (none) most flushes overtook their writes (the
# replayer's own result trace shows it; the device merges the flushes that pile up).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup lsblk python3
t_gen
D=$(t_tmpdir) || exit 1
"$BIOTAPE" record --help >/dev/null 2>&1 || skip "biotape record is not available"
BLKIO=/sys/fs/cgroup/blkio
[ -w "$BLKIO/cgroup.procs" ] || skip "no cgroup v1 blkio hierarchy"
CG=$BLKIO/biotape-order-$$
trap 'rmdir "$CG" 2>/dev/null; t_cleanup' EXIT
mkdir "$CG" || skip "cannot make a blkio cgroup"
t_loop 64
B=$LOOP
majmin=$(lsblk -dno MAJ:MIN "$B" | tr -d ' ') || fail "lsblk $B"
echo "$majmin 200" >"$CG/blkio.throttle.write_iops_device" || skip "no blkio write throttle"

"$GEN" -o "$D/w.btape" -p seqwrite -n 400 -r 2000 -F 4 -S 32M || fail "gen"
"$BIOTAPE" dump --csv "$D/w.btape" >"$D/w.csv" || fail "dump the trace"

for m in none barrier; do
	"$BIOTAPE" record -o "$D/$m.btape" -d "$B" -- bash -c \
		'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$CG" \
		"$BIOTAPE" replay "$D/w.btape" --target "$B" --write --order $m --json \
		--no-progress -o "$D/res-$m.btape" >"$D/$m.json" 2>"$D/$m.log" ||
		fail "record of the --order $m replay failed: $(tail -2 "$D/$m.log")"
	"$BIOTAPE" dump --csv "$D/$m.btape" >"$D/$m.csv" || fail "dump the $m recording"
	"$BIOTAPE" dump --csv "$D/res-$m.btape" >"$D/res-$m.csv" || fail "dump the $m result"
done

python3 - "$D/w.csv" "$D/none.csv" "$D/barrier.csv" "$D/none.json" "$D/barrier.json" \
	"$D/res-none.csv" "$D/res-barrier.csv" <<'PY'
import csv, json, sys
def rows(p):
    with open(p) as f:
        r = list(csv.reader(f))
    # issue_ns,complete_ns,insert_ns,dev,sector,bytes,op
    return sorted((int(x[0]), int(x[1] or 0), x[6], int(x[4]), int(x[5])) for x in r[1:]
                  if x and x[6] in ("write", "flush"))
src = rows(sys.argv[1])
flushes = [e for e in src if e[2] == "flush"]
# W_k: the trace's writes that completed before its k-th flush was issued
covers = [[(w[3], w[4]) for w in src if w[2] == "write" and w[1] <= f[0]] for f in flushes]

# The replayer's own result trace: every flush it issued, in order, with the writes' replayed
# completions (no merging: the k-th flush is the trace's k-th)
def early(path):
    got = rows(path)
    done = {(e[3], e[4]): e[1] for e in got if e[2] == "write"}
    fl = [e for e in got if e[2] == "flush"]
    assert len(fl) == len(flushes), f"{path}: {len(fl)} flushes, the trace has {len(flushes)}"
    return [k for k in range(len(fl)) if covers[k] and fl[k][0] < max(done[w] for w in covers[k])]

def violations(path, jpath):
    got = rows(path)
    # the device merges adjacent writes: a trace write is done when the request holding its
    # first sector is (the trace writes every block once)
    done = {}
    for e in got:
        if e[2] == "write":
            for s in range(e[3], e[3] + e[4] // 512):
                done[s] = e[1]
    done = {(w[3], w[4]): done[w[3]] for w in src if w[2] == "write" and w[3] in done}
    missing = [k for c in covers for k in c if k not in done]
    assert not missing, f"{path}: writes of the trace missing from the recording: {missing[:3]}"
    fl = [e for e in got if e[2] == "flush"]
    # the device may merge flushes that are pending together: its k-th flush serves the
    # trace's k-th or a later one, which covers at least W_k
    bad = [k for k in range(min(len(fl), len(covers)))
           if covers[k] and fl[k][0] < max(done[w] for w in covers[k])]
    j = json.load(open(jpath))
    print(f"{path.rsplit('/', 1)[1]}: {len(fl)} flushes on the device for {len(flushes)} in "
          f"the trace, {len(bad)} before their writes completed; {j['seconds']:.2f} s, "
          f"barrier waits {j['dep_waits']['barrier']}")
    return bad, j
bad_none, jn = violations(sys.argv[2], sys.argv[4])
bad_bar, jb = violations(sys.argv[3], sys.argv[5])
assert not bad_bar, f"barrier order: flushes {bad_bar[:5]} went before their writes completed"
assert jb["dep_waits"]["barrier"]["ios"] > 0, "barrier order: no I/O waited"
early_none, early_bar = early(sys.argv[6]), early(sys.argv[7])
print(f"replayer's result traces: none issued {len(early_none)} of {len(flushes)} flushes before "
      f"their writes completed, barrier {len(early_bar)}")
assert not early_bar, f"barrier order issued flushes {early_bar[:5]} before their writes completed"
# open loop on a device 10x slower than the recording: most flushes overtake their writes
assert len(early_none) > len(flushes) // 2, "open loop kept the barriers: nothing to show"
PY
[ $? = 0 ] || fail "barriers on the throttled device"
rmdir "$CG" || fail "the blkio cgroup is still in use"
pass
