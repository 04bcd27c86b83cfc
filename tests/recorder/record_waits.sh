#!/bin/bash
# record --waits: each I/O carries its thread's last wake from a sleep when that wake came
# after the thread's previous I/O. A thread doing one synchronous O_DIRECT pread at a time
# sleeps until each completes: its I/Os carry wakes just after the previous one's completion.
# A thread submitting io_uring batches of 16 sleeps once per batch: most of its I/Os carry
# none. A thread that sleeps on a timer while its read completes carries none: the timer woke
# it, not the read. A flush (the flush machinery's request) carries the wake of the fdatasync
# that asked for it, and its submission time as insert_ns. Without --waits no event carries one.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
LOAD=$BIOTAPE_BIN_DIR/wake_load
[ -x "$LOAD" ] || fail "$LOAD not built"
D=$(t_tmpdir) || exit 1
t_loop 32
rec_nomerge
for mode in waits plain; do
	args=(-d "$LOOP")
	[ $mode = waits ] && args+=(--waits)
	rec_start "$D/$mode.btape" "${args[@]}"
	"$LOAD" "$LOOP" 40 > "$D/$mode.tids" || fail "wake_load"
	# flushes: the flush machinery's own request, attributed to the fdatasync caller
	[ $mode = waits ] && { fio --name=fl --filename="$LOOP" --rw=write --bs=8k --direct=1 \
		--ioengine=psync --fdatasync=1 --size=800k --offset=16M --output=/dev/null ||
		fail "fio fdatasync job"; }
	rec_stop INT
	"$BIOTAPE" dump --json "$D/$mode.btape" > "$D/$mode.json" || fail "dump $mode"
done
grep -q -- '--waits' <("$BIOTAPE" info "$D/waits.btape") || fail "info: capture lacks --waits"
python3 - "$D" <<'PY' || fail "wake fields not as expected"
import json, sys
d = sys.argv[1]
def load(mode):
    tids = dict(l.split() for l in open(f"{d}/{mode}.tids"))
    evs = [json.loads(l) for l in open(f"{d}/{mode}.json")]
    return {k: sorted((e for e in evs if str(e.get("tid")) == v), key=lambda e: e["issue_ns"])
            for k, v in tids.items()}, evs
th, evs = load("waits")
w, b, pc = th["waiter"], th["batcher"], th["pacer"]
assert len(w) >= 600 and len(b) >= 600 and len(pc) >= 150, (len(w), len(b), len(pc))
# waiter: woke after the previous read completed, within 2 ms, and before this one's issue
ok = sum(1 for p, e in zip(w, w[1:]) if "wake_ns" in e and
         p["complete_ns"] <= e["wake_ns"] <= e["issue_ns"] and
         e["wake_ns"] - p["complete_ns"] < 2000000 and e["slept_ns"] > 0)
fw = ok / (len(w) - 1)
fb = sum("wake_ns" in e for e in b) / len(b)
print(f"waiter: {fw:.1%} of {len(w)} reads woke from the previous completion; "
      f"batcher: {fb:.1%} of {len(b)} carry a wake")
assert fw >= 0.9, fw
assert fb <= 0.3, fb
# pacer: each read completed during a 2 ms timer sleep; the timer woke it, not the read
fp = sum("wake_ns" in e for e in pc) / len(pc)
print(f"pacer: {fp:.1%} of {len(pc)} reads carry a wake (its sleeps are a timer's)")
assert fp <= 0.1, fp
# each flush of fio's fdatasync: woke after its write completed (the wake of its caller)
fl = sorted((e for e in evs if e.get("comm") == "fio"), key=lambda e: e["issue_ns"])
pairs = [(p, e) for p, e in zip(fl, fl[1:]) if e["op"] == "flush" and p["op"] == "write"]
# and entered the block layer (insert_ns) when the preflush was submitted, after that wake
okf = sum(1 for p, e in pairs if "wake_ns" in e and "insert_ns" in e and
          p["complete_ns"] <= e["wake_ns"] <= e["insert_ns"] <= e["issue_ns"])
print(f"flushes: {okf} of {len(pairs)} woke after their write completed, then submitted")
assert len(pairs) >= 90 and okf >= 0.9 * len(pairs), (okf, len(pairs))
_, plain = load("plain")
assert plain and not any("wake_ns" in e for e in plain), "wakes without --waits"
PY
pass "record_waits: wakes of a waiting thread recorded, of a batching one mostly not"
