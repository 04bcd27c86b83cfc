#!/bin/bash
# A hot zone that moves is a phase, end to end: a fio job of two sections run in sequence
# (stonewall), random 8 KiB reads at the same rate and depth over zone A (the first 64 MiB of a
# 256 MiB loop device), then over zone B (192-256 MiB), is recorded; `biotape profile --phases
# auto` must find 2 phases (nothing but where the reads land changes) whose jobs' ranges
# (offset=, size=) are zone A and zone B; the phased job then runs on a fresh loop device while
# recording, and its reads must land in zone A before the phase boundary and in zone B after.
# About 15 s (two runs of 2 x SECT seconds of fio).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root fio losetup python3
D=$(t_tmpdir) || exit 1
[ -d "$D" ] || fail "no temporary directory"
# ZONES_TEST_KEEP=DIR: copy the traces and jobs there at exit
if [ -n "${ZONES_TEST_KEEP:-}" ]; then
	trap 'mkdir -p "$ZONES_TEST_KEEP" && cp -r "${D:?}/." "$ZONES_TEST_KEEP/"; t_cleanup' EXIT
fi
SECT=${ZONES_TEST_SECTION_S:-3}
MIB=$((1024 * 1024))

t_loop 256
REF_DEV=$LOOP
if ! timeout 20 "$BIOTAPE" record -o "$D/probe.btape" -d "$REF_DEV" --duration 1s >"$D/probe.log" 2>&1; then
	skip "biotape record does not work here: $(tail -1 "$D/probe.log")"
fi
t_fio_global "$SECT" >"$D/ref.fio"
cat >>"$D/ref.fio" <<JOB
[zone-a]
rw=randread
bs=8k
iodepth=4
rate_iops=1000
offset=0
size=64m
[zone-b]
stonewall
rw=randread
bs=8k
iodepth=4
rate_iops=1000
offset=192m
size=64m
JOB
t_fio_record "$REF_DEV" "$D/ref.btape" "$D/ref.fio" "$D/rec.log" ||
	fail "recording the reference: $(tail -3 "$D/rec.log")"
"$BIOTAPE" profile --phases auto "$D/ref.btape" >"$D/phases.fio" || fail "profile --phases auto"
n=$(grep -c '^\[phase' "$D/phases.fio")
[ "$n" = 2 ] || fail "profile --phases auto found $n phases where the hot zone moved once, not 2: $(grep '^; phase' "$D/phases.fio")"

# each phase's job covers its zone and nothing of the other: offset= and size= (4 KiB aligned)
# within the zone, covering at least 60 of its 64 MiB
awk -v mib=$MIB '/^\[phase[0-9]+\]/ { p = substr($0, 7) + 0 }
	p && /^offset=/ { split($0, a, "="); off[p] = a[2] }
	p && /^size=/ { split($0, a, "="); sz[p] = a[2] }
	END {
		lo[1] = 0; lo[2] = 192 * mib
		for (k = 1; k <= 2; k++) {
			if (!(k in off) || off[k] < lo[k] || off[k] + sz[k] > lo[k] + 64 * mib || sz[k] < 60 * mib) {
				printf "phase %d: offset=%s size=%s, not within %d..%d MiB\n", k, off[k], sz[k], lo[k] / mib, lo[k] / mib + 64
				bad = 1
			}
		}
		exit bad
	}' "$D/phases.fio" >"$D/ranges" || fail "a phase job's range is not its zone: $(cat "$D/ranges")"

# the job moves the zone when it runs: its reads land in zone A before the phase boundary and in
# zone B after (0.3 s either side of it left out: fio starts the second job after a stonewall
# about 0.2 s late)
t_loop 256
t_fio_record "$LOOP" "$D/b.btape" "$D/phases.fio" "$D/rec.log" ||
	fail "recording the phased job: $(tail -3 "$D/rec.log")"
cut=$(awk '/^; phase 2 of 2:/ { print ($7 == "s" ? $6 : ($7 == "ms" ? $6 / 1000 : 0)) }' "$D/phases.fio")
[ -n "$cut" ] || fail "no phase 2 start in the job: $(grep '^; phase' "$D/phases.fio")"
"$BIOTAPE" dump --csv "$D/b.btape" >"$D/b.csv" || fail "dump"
python3 - "$D/b.csv" "$cut" "$MIB" >"$D/where" <<'PY' || fail "the phased job's reads do not move with the zone: $(cat "$D/where")"
import csv, sys
path, cut, mib = sys.argv[1], float(sys.argv[2]) * 1e9, int(sys.argv[3])
rows = [r for r in csv.DictReader(open(path)) if r["op"] == "read" and int(r["bytes"])]
t0 = min(int(r["issue_ns"]) for r in rows)
zone = {"A": (0, 64 * mib), "B": (192 * mib, 256 * mib)}
n = {"A": 0, "B": 0}
inside = {"A": 0, "B": 0}
for r in rows:
    t = int(r["issue_ns"]) - t0
    if abs(t - cut) < 0.3e9:
        continue
    k = "A" if t < cut else "B"
    off = int(r["sector"]) * 512
    n[k] += 1
    inside[k] += zone[k][0] <= off and off + int(r["bytes"]) <= zone[k][1]
print("reads before the boundary in zone A: %d of %d; after it in zone B: %d of %d"
      % (inside["A"], n["A"], inside["B"], n["B"]))
sys.exit(0 if all(n[k] >= 1000 and inside[k] >= 0.99 * n[k] for k in n) else 1)
PY
cat "$D/where"
pass "a moving hot zone is a phase, and each phase's job keeps its own zone"
