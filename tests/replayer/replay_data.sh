#!/bin/bash
# A replay with --write lands exactly the recorded blocks with the chosen payload, and
# nothing else; flushes and discards go through; counts match the trace.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup python3
t_gen
D=$(t_tmpdir) || exit 1
t_loop 16
A=$LOOP
# fill the device with 0xff so that what the replay writes is visible
python3 -c "import sys; sys.stdout.buffer.write(b'\xff' * (16 << 20))" | dd of="$A" bs=1M \
	oflag=direct status=none || fail "fill"

# 256 sequential 4 KiB writes over the first MiB, a flush every 64th
"$GEN" -o "$D/seq.btape" -n 256 -r 20000 -p seqwrite -s $((1 << 20)) -S $((16 << 20)) -F 64 ||
	fail "gen"
"$BIOTAPE" replay "$D/seq.btape" --target "$A" --write --payload zero --json --no-progress \
	>"$D/z.json" || fail "replay --payload zero"
python3 - "$D/z.json" "$A" <<'PY' || fail "zero payload: data or counts wrong"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ops"]["write"]["ios"] == 252, j["ops"]
assert j["ops"]["flush"]["ios"] == 4, j["ops"]
assert j["errors"] == 0 and j["skipped"]["total"] == 0
d = open(sys.argv[2], "rb").read(16 << 20)
# the writes covered the first MiB except the 4 flush slots (every 64th block)
for i in range(256):
    blk = d[i * 4096:(i + 1) * 4096]
    if i % 64 == 63:
        assert blk == b"\xff" * 4096, f"block {i} was not written by the trace"
    else:
        assert blk == b"\0" * 4096, f"block {i} not zeroed"
assert d[1 << 20:] == b"\xff" * ((16 << 20) - (1 << 20)), "wrote outside the trace's blocks"
PY

# random payload: every written block differs from the others (no accidental dedupe)
"$BIOTAPE" replay "$D/seq.btape" --target "$A" --write --payload random --no-progress \
	>/dev/null || fail "replay --payload random"
python3 - "$A" <<'PY' || fail "random payload"
import sys
d = open(sys.argv[1], "rb").read(1 << 20)
blocks = [d[i * 4096:(i + 1) * 4096] for i in range(256) if i % 64 != 63]
assert all(b != b"\0" * 4096 and b != b"\xff" * 4096 for b in blocks)
assert len(set(blocks)) == len(blocks), "duplicate blocks"
PY
# --dedupe 4: about three quarters of the blocks are duplicates
"$BIOTAPE" replay "$D/seq.btape" --target "$A" --write --payload random --dedupe 4 \
	--no-progress >/dev/null || fail "replay --dedupe"
python3 - "$A" <<'PY' || fail "dedupe payload"
import sys
d = open(sys.argv[1], "rb").read(1 << 20)
blocks = [d[i * 4096:(i + 1) * 4096] for i in range(256) if i % 64 != 63]
u = len(set(blocks))
assert 30 < u < 110, u
PY

# discards: replayed with BLKDISCARD (the loop device punches its backing file)
"$GEN" -o "$D/disc.btape" -n 64 -r 20000 -p seqwrite -s $((1 << 20)) -S $((16 << 20)) -D 2 \
	-b 16384 || fail "gen"
"$BIOTAPE" replay "$D/disc.btape" --target "$A" --write --json --no-progress >"$D/d.json" ||
	fail "replay with discards"
python3 - "$D/d.json" <<'PY' || fail "discard counts"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ops"]["write"]["ios"] == 32, j["ops"]
n = j["ops"].get("discard", {}).get("ios", 0) + j["skipped"]["unsupported"]
assert n == 32, j
PY

# --writes-as-reads: the same trace leaves the device untouched
sum=$(md5sum <"$A")
"$BIOTAPE" replay "$D/seq.btape" --target "$A" --writes-as-reads --no-progress >/dev/null ||
	fail "writes-as-reads"
[ "$(md5sum <"$A")" = "$sum" ] || fail "--writes-as-reads changed the device"

# --rt-priority (SCHED_FIFO issuing thread, normal decoder thread) replays everything
timeout 60 "$BIOTAPE" replay "$D/seq.btape" --target "$A" --writes-as-reads --rt-priority 5 \
	--json --no-progress >"$D/rt.json" || fail "--rt-priority replay failed or hung"
python3 -c "import json; j = json.load(open('$D/rt.json')); assert j['ops']['read']['ios'] == 252, j" ||
	fail "--rt-priority: counts"

# psync engine lands the same data
"$BIOTAPE" replay "$D/seq.btape" --target "$A" --write --payload zero --engine psync \
	--no-progress >/dev/null || fail "psync replay"
python3 -c "
import sys
d = open('$A', 'rb').read(1 << 20)
assert all(d[i*4096:(i+1)*4096] == b'\0' * 4096 for i in range(256) if i % 64 != 63)
" || fail "psync: data"
pass
