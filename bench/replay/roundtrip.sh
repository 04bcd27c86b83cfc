#!/usr/bin/env bash
# bench/replay/roundtrip.sh: the round trip of docs/REPLAY.md ("Where the time goes") and its
# targets (issue #20), in one self-contained run:
#   1. record a write-heavy workload on loop device A: fio, 4 KiB O_DIRECT random writes with
#      --fdatasync=16 (a journalled database's small commits; at depth 32 fio's io_uring engine
#      sends about 0.8 fdatasyncs per write), on ext4, at RATE IOPS;
#   2. replay it with default settings onto a fresh loop device of the same size, recorded;
#   3. the same at --speed 0.5 (the unloaded reference), and with --rt-priority 1 (a
#      real-time issuing thread: the other class, measured in the same rotation);
#   4. replay a 20k IOPS Poisson read trace (gen_trace) while a bpftrace probe prints every
#      block_rq_issue event.
# Floors, measured in the same rounds: the null engine on the same schedule (the replayer
# alone); fio's job on a fresh raw device, recorded (the device alone); and the application
# again, step 1 on a fresh device (how far device times move between two runs of the same
# workload on this kind of device: what "within 20% of the recording" can mean here).
# Rounds alternate the kinds; the summary is medians over the rounds, each against its target:
#   late (> 100 us) <= 1%, p99 issue error <= 100 us, per-op device time p50 and p99 within 20%
#   of the recording's, and the probed read replay's p99 issue error <= 100 us.
# Issue error is the replayer's own (it stamps an I/O when handing it to the kernel); "block"
# is the same measured at the block layer (bench/replay/fidelity.py on the replay's recording).
# Device time (complete - issue, at the block layer) comes from `biotape analyze` of both
# recordings.
#   bash bench/replay/roundtrip.sh [BUILD_DIR]
# Environment: ROUNDS (3), RATE (30000), REC_S (8, seconds recorded), READ_N (200000 I/Os),
# KINDS (the runs of each round, default "default half rt null fio again hog probe"; also "causal",
# "barrier",
# "apart" and "depth": --order causal, --flushes-apart, --iodepth recorded; "nohold":
# --iodepth 128 (no hold at the recording's depth: the default before it); "depthx:F":
# --iodepth F x the recording's largest queue depth (analyze's);
# "spin:N": --spin-us N; "bare": default settings, not recorded; "busy": the application again
# with a SCHED_IDLE spinner on each CPU, how this device's times move when the CPUs are kept
# busy by work that never delays a task; "hog": the same with one spinner at normal priority,
# the CPU a spinning replayer takes from the device's workers),
# REC_ARGS (more `biotape record` options for the recordings, e.g. --waits, for kind
# "causal"; kind "none" is --order none), BIOTAPE=PATH (measure that
# binary), DEVICE_CPU=N (the loop devices' workers, which are unbound workqueue threads, kept on
# CPU N through /sys/devices/virtual/workqueue/cpumask, and everything this script starts kept
# off it: a device that does not take the host's CPUs, as real storage does not; the mask is
# restored at exit), KEEP=DIR (orig.btape, the recordings KIND-rN.btape and the CSV dumps
# orig.csv, KIND-rN.csv, for bench/replay/devtime.py). Needs root, fio, mkfs.ext4, python3; bpftrace for part 4
# (skipped, and said so, without it). Writes only to its own loop devices over /dev/shm files
# (512 MiB each, one at a time besides A) and detaches them.
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${ROUNDS:-3}
RATE=${RATE:-30000}
REC_S=${REC_S:-8}
READ_N=${READ_N:-200000}
REC_ARGS=${REC_ARGS:-}
KINDS=${KINDS:-default half rt null fio again hog probe}
BIN=$(cd "$BUILD/bin" && pwd)
BT=${BIOTAPE:-$BIN/biotape}
GEN=$BIN/gen_trace
HERE=$(cd "$(dirname "$0")" && pwd)
SIZE_MB=512
[ "$(id -u)" = 0 ] || { echo "roundtrip.sh needs root (loop devices, eBPF)" >&2; exit 1; }
for t in fio mkfs.ext4 python3; do
	command -v "$t" >/dev/null || { echo "roundtrip.sh needs $t" >&2; exit 1; }
done
[ -x "$GEN" ] || { echo "missing $GEN" >&2; exit 1; }
. "$HERE/../../tests/loop.sh"
W=$(mktemp -d /dev/shm/biotape-roundtrip.XXXXXX)
MNT=$W/mnt
PROBE_PID=
HOGS=()
WQ_MASK=/sys/devices/virtual/workqueue/cpumask
WQ_SAVED=
cleanup() {
	[ -n "$WQ_SAVED" ] && echo "$WQ_SAVED" >"$WQ_MASK"
	[ -n "$PROBE_PID" ] && kill "$PROBE_PID" 2>/dev/null && wait "$PROBE_PID" 2>/dev/null
	for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null || true; done
	mountpoint -q "$MNT" && umount "$MNT"
	loop_detach_all
	rm -rf "$W"
}
trap cleanup EXIT
if [ -n "${DEVICE_CPU:-}" ]; then
	n=$(nproc --all)
	[[ $DEVICE_CPU =~ ^[0-9]+$ ]] && [ "$DEVICE_CPU" -lt "$n" ] && [ "$n" -gt 1 ] ||
		{ echo "DEVICE_CPU=$DEVICE_CPU: not one of CPUs 0-$((n - 1)) of $n" >&2; exit 1; }
	WQ_SAVED=$(cat "$WQ_MASK")
	printf '%x\n' $((1 << DEVICE_CPU)) >"$WQ_MASK"
	others=$(seq 0 $((n - 1)) | grep -vx "$DEVICE_CPU" | paste -sd,)
	taskset -pc "$others" $$ >/dev/null
	echo "# loop workers on CPU $DEVICE_CPU only, this script and its children on CPUs $others"
fi
[ -z "${KEEP:-}" ] || mkdir -p "$KEEP" || { echo "KEEP=$KEEP: cannot make it" >&2; exit 1; }
jget() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval("j"+sys.argv[2]))' "$@"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "# bench/replay/roundtrip on $(uname -r), $(nproc) CPUs, $(fio --version)," \
	"biotape $("$BT" --version | awk '{print $2}'), rounds $ROUNDS; load average $(load)"

# 1. the recording: the application on ext4 over a fresh loop device (also the "again" floor)
record_app() { # DEV OUT: mkfs DEV, run the fio "database" on it while recording DEV into OUT
	local dev=$1 out=$2
	mkfs.ext4 -q -F "$dev"
	mkdir -p "$MNT"
	mount "$dev" "$MNT"
	fallocate -l 256M "$MNT/db"
	sync
	"$BT" record -o "$out" -d "$dev" $REC_ARGS -- fio --name=db --filename="$MNT/db" --rw=randwrite \
		--bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --rate_iops="$RATE" --fdatasync=16 \
		--size=256M --time_based --runtime="$REC_S" --randseed=7 --output="$W/fio.txt" \
		>"$W/rec.log" 2>&1 || { echo "recording failed: $(tail -2 "$W/rec.log")" >&2; exit 1; }
	umount "$MNT"
}
loop_new "$SIZE_MB" "$W" || { echo "cannot create a loop device" >&2; exit 1; }
A=$LOOP
record_app "$A" "$W/orig.btape"
"$BT" analyze --json "$W/orig.btape" >"$W/orig.json"
python3 - "$W/orig.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
secs, ops = j["window"]["duration_s"], j["ops"]
tot = j["overall"]["count"]
w = ops.get("write", {}).get("latency", {}).get("device", {}).get("count", 0)
low = "" if tot / secs >= 25000 else "  (BELOW the 25k IOPS the benchmark asks for)"
print(f"recorded: {tot} I/Os in {secs:.1f} s: {tot / secs:.0f} IOPS, {w / secs:.0f} writes/s{low}")
PY
"$BT" dump --csv "$W/orig.btape" >"$W/orig.csv"
[ -z "${KEEP:-}" ] || cp "$W/orig.csv" "$W/orig.btape" "$KEEP/"

# 2, 3. replays of the recording, each onto a fresh device, recorded
replay_write() { # NAME SPEED replay-options...
	local name=$1 speed=$2 B
	shift 2
	loop_new "$SIZE_MB" "$W" || { echo "cannot create a loop device" >&2; exit 1; }
	B=$LOOP
	"$BT" record -o "$W/rep.btape" -d "$B" -- "$BT" replay "$W/orig.btape" --target "$B" \
		--write --json --no-progress --speed "$speed" "$@" >"$W/$name.json" 2>"$W/$name.log" ||
		{ echo "$name replay failed: $(tail -2 "$W/$name.log")" >&2; exit 1; }
	grep -q "lost 0 events" "$W/$name.log" ||
		echo "  ($name: the recording of the replay lost events: $(grep lost "$W/$name.log"))"
	"$BT" analyze --json "$W/rep.btape" >"$W/rep.json"
	"$BT" dump --csv "$W/rep.btape" >"$W/rep.csv"
	[ -z "${KEEP:-}" ] || cp "$W/rep.csv" "$KEEP/$name-r$r.csv"
	# against the recorded deadlines, for an --order replay too: on the same device it should
	# not move I/Os either (what it moves shows here as drift)
	python3 "$HERE/fidelity.py" "$W/orig.csv" "$W/rep.csv" "$speed" >"$W/fid.json"
	python3 - "$name" "$W/$name.json" "$W/orig.json" "$W/rep.json" "$W/fid.json" "$(load)" \
		"$W/rows.jsonl" <<'PY'
import json, sys
name, rj, oj, pj, fj, load, rows = sys.argv[1:8]
r, o, p, f = (json.load(open(x)) for x in (rj, oj, pj, fj))
row = {"kind": name, "late": r["late_rate"], "p99_err_us": r["issue_error_us"]["p99"],
       "block_p99_us": f["p99_us"], "block_late": f["late_rate"],
       "capped": r["depth_capped"], "lag_ms": r["lag"]["max_us"] / 1e3,
       "behind_s": r["lag"]["behind_s"], "runq_s": r["stages_s"]["runq"],
       "cpu_s": r["stages_s"]["cpu"], "load": load,
       "past": r.get("past_depth", 0) / max(1, r["ios"])}
dt = []  # the device times: device_row, below
cnt = lambda j, op: j["ops"].get(op, {}).get("latency", {}).get("device", {}).get("count", 0)
if cnt(o, "flush"):
    # blk-flush merges flushes that are pending together: fewer reach the device when late
    dt.append(f"flushes at the device {cnt(p, 'flush') / cnt(o, 'flush'):.2f}x")
    # the replayer's own count of flushes sent while the one before was out (an upper bound)
    if "flushes" in r:
        dt.append(f"sent overlapping {r['flushes']['overlapped'] / cnt(o, 'flush'):.2f}x")
open(rows, "a").write(json.dumps(row) + "\n")
print(f"  {name:8s} late {100 * row['late']:6.2f}%  p99 issue error {row['p99_err_us']:8.1f} us"
      f" (block {'n/a' if row['block_p99_us'] is None else format(row['block_p99_us'], '8.1f')} us)  depth-capped {row['capped']:6d}"
      f" ({100 * r.get('capped_flush_share', 0):.0f}% of the slots flushes)"
      f"  past the recorded depth {100 * row['past']:.2f}%  fell behind by"
      f" {row['lag_ms']:.2f} ms, {row['behind_s']:.2f} s behind; thread waited"
      f" {row['runq_s']:.2f} s for a CPU, ran {row['cpu_s']:.2f} s; flushes:"
      f" {', '.join(dt)}  (load {load})")
PY
	device_row "$name" "$W/rep.json" "the replay, recorded"
	loop_detach_all_but_a
}
# detaches every loop device made after A (A's recording stays for the next rounds)
loop_detach_all_but_a() {
	local i
	for ((i = ${#LOOP_DEVS[@]} - 1; i >= 1; i--)); do losetup -d "${LOOP_DEVS[i]}"; done
	for ((i = ${#LOOP_FILES[@]} - 1; i >= 1; i--)); do rm -f -- "${LOOP_FILES[i]}"; done
	LOOP_DEVS=("${LOOP_DEVS[0]}")
	LOOP_FILES=("${LOOP_FILES[0]}")
}

# The floors this machine allows right now: the same schedule with no device (null engine: the
# replayer alone), and the device alone at the recorded rate (fio on a fresh device, clat).
floor_null() {
	loop_new "$SIZE_MB" "$W" || { echo "cannot create a loop device" >&2; exit 1; }
	"$BT" replay "$W/orig.btape" --target "$LOOP" --write --engine null --rt-priority 1 \
		--spin-us 10 --json --no-progress >"$W/null.json"
	python3 - "$W/null.json" "$(load)" "$W/rows.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
row = {"kind": "null", "late": r["late_rate"], "p99_err_us": r["issue_error_us"]["p99"],
       "runq_s": r["stages_s"]["runq"], "load": sys.argv[2]}
open(sys.argv[3], "a").write(json.dumps(row) + "\n")
print(f"  null     late {100 * row['late']:6.2f}%  p99 issue error {row['p99_err_us']:8.1f} us"
      f"  (the replayer alone); thread waited {row['runq_s']:.2f} s for a CPU  (load {row['load']})")
PY
	loop_detach_all_but_a
}
# The default replay not recorded: no recorder beside it (the replayer's own issue error only).
# Every other replay here is recorded, for its device times, and the recorder takes CPU too.
replay_bare() {
	loop_new "$SIZE_MB" "$W" || { echo "cannot create a loop device" >&2; exit 1; }
	"$BT" replay "$W/orig.btape" --target "$LOOP" --write --json --no-progress >"$W/bare.json"
	python3 - "$W/bare.json" "$(load)" "$W/rows.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
row = {"kind": "bare", "late": r["late_rate"], "p99_err_us": r["issue_error_us"]["p99"],
       "capped": r["depth_capped"], "runq_s": r["stages_s"]["runq"], "load": sys.argv[2]}
open(sys.argv[3], "a").write(json.dumps(row) + "\n")
print(f"  bare     late {100 * row['late']:6.2f}%  p99 issue error {row['p99_err_us']:8.1f} us"
      f"  (default settings, not recorded)  depth-capped {row['capped']:6d}; thread waited"
      f" {row['runq_s']:.2f} s for a CPU  (load {row['load']})")
PY
	loop_detach_all_but_a
}
# Device time (complete - issue at the block layer) of a recording against the original's, as a
# row of KIND: what the same measure gives without the replayer.
# Also the write device time at the recording's depths (biotape compare: each band of depth at
# issue weighted by the recording's share there): the device's answer at the same load.
device_row() { # KIND RECORDING.json TITLE
	local rec=${2%.json}.btape
	"$BT" compare --json "$W/orig.btape" "$rec" >"$W/cmp.json" 2>/dev/null || echo '{}' >"$W/cmp.json"
	[ -z "${KEEP:-}" ] || cp "$rec" "$KEEP/$1-r$r.btape"
	python3 - "$1" "$W/orig.json" "$2" "$3" "$(load)" "$W/rows.jsonl" "$W/cmp.json" <<'PY'
import json, sys
kind, oj, pj, title, load, rows, cj = sys.argv[1:8]
o, p, c = json.load(open(oj)), json.load(open(pj)), json.load(open(cj))
row = {"kind": kind, "load": load, "time": p["window"]["duration_s"] / o["window"]["duration_s"]}
dt = [f"run time {row['time']:.2f}x"]
for op in ("write", "flush"):
    if op in o["ops"] and op in p["ops"]:
        a, b = o["ops"][op]["latency"]["device"], p["ops"][op]["latency"]["device"]
        for q in ("p50", "p99"):
            row[f"{op}_{q}"] = b[q + "_ns"] / a[q + "_ns"]
            dt.append(f"{op} {q} {row[op + '_' + q]:.2f}x")
same = c.get("diff", {}).get("ops", {}).get("write", {}).get("latency_device_at_a_depths", {})
for q in ("p50", "p99"):
    v = same.get(f"{q}_ns", {}).get("ratio_b_over_a")
    if v is not None:
        row[f"write_{q}_same_depth"] = v
        dt.append(f"write {q} at the recording's depths {v:.2f}x")
open(rows, "a").write(json.dumps(row) + "\n")
print(f"  {kind:8s} device time vs recording: {', '.join(dt)}  ({title})  (load {load})")
PY
}
# The device alone at the recorded rate: fio's own job on a fresh raw device, recorded.
floor_fio() {
	loop_new "$SIZE_MB" "$W" || { echo "cannot create a loop device" >&2; exit 1; }
	"$BT" record -o "$W/fio.btape" -d "$LOOP" -- fio --name=dev --filename="$LOOP" \
		--rw=randwrite --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 \
		--rate_iops="$RATE" --fdatasync=16 --size=256M --time_based --runtime="$REC_S" \
		--randseed=7 --output="$W/fio.txt" >"$W/fio.log" 2>&1 ||
		{ echo "fio floor failed: $(tail -2 "$W/fio.log")" >&2; exit 1; }
	"$BT" analyze --json "$W/fio.btape" >"$W/fio.json"
	device_row fio "$W/fio.json" "fio on a fresh raw device at the recorded rate"
	loop_detach_all_but_a
}
# The application again: the recording's own procedure on a fresh device, recorded. How far
# the same workload's device times move from one run to the next on this kind of device.
floor_again() { # [busy]: with a SCHED_IDLE spinner on every CPU (they never delay a task);
	# [hog]: with one spinner at normal priority (as the replayer's spinning thread is)
	local kind=${1:-again} title="the application again on a fresh device" p
	loop_new "$SIZE_MB" "$W" || { echo "cannot create a loop device" >&2; exit 1; }
	if [ "$kind" = busy ]; then
		title="$title, a SCHED_IDLE spinner on each CPU"
		for _ in $(seq "$(nproc)"); do
			chrt -i 0 bash -c 'while :; do :; done' &
			HOGS+=("$!")
		done
	elif [ "$kind" = hog ]; then
		title="$title, one spinner at normal priority"
		bash -c 'while :; do :; done' &
		HOGS+=("$!")
	fi
	record_app "$LOOP" "$W/$kind.btape"
	for p in "${HOGS[@]}"; do kill "$p" && wait "$p" 2>/dev/null || true; done
	HOGS=()
	"$BT" analyze --json "$W/$kind.btape" >"$W/$kind.json"
	[ -z "${KEEP:-}" ] || "$BT" dump --csv "$W/$kind.btape" >"$KEEP/$kind-r$r.csv"
	device_row "$kind" "$W/$kind.json" "$title"
	loop_detach_all_but_a
}

# 4. the Poisson read replay under a bpftrace probe printing every block_rq_issue
"$GEN" -o "$W/p.btape" -n "$READ_N" -r 20000 -a poisson -p randread -b 4096 -S $((256 << 20))
probe_read() {
	local C
	if ! command -v bpftrace >/dev/null; then
		echo "  probe    skipped: no bpftrace (Debian package bpftrace)"
		return
	fi
	# bpftrace's tracepoints need tracefs, which a fresh machine may not have mounted
	if [ ! -e /sys/kernel/tracing/events ] && ! mount -t tracefs nodev /sys/kernel/tracing; then
		echo "  probe    skipped: tracefs is not mounted and could not be"
		return
	fi
	loop_new 256 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
	C=$LOOP
	bpftrace -e 'tracepoint:block:block_rq_issue { printf("%d %s %llu %u\n", args->dev,
		args->rwbs, args->sector, args->nr_sector); }' >"$W/probe.txt" 2>"$W/probe.err" &
	PROBE_PID=$!
	for _ in $(seq 100); do # attached when it says so
		grep -q Attaching "$W/probe.txt" 2>/dev/null && break
		sleep 0.1
	done
	if ! kill -0 "$PROBE_PID" 2>/dev/null; then
		echo "  probe    skipped: bpftrace failed: $(tail -1 "$W/probe.err")"
		PROBE_PID=
		loop_detach_all_but_a
		return
	fi
	"$BT" replay "$W/p.btape" --target "$C" --json --no-progress >"$W/probe.json"
	kill "$PROBE_PID" 2>/dev/null || true
	wait "$PROBE_PID" 2>/dev/null || true
	PROBE_PID=
	python3 - "$W/probe.json" "$(wc -l <"$W/probe.txt")" "$(load)" "$W/rows.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
row = {"kind": "probe", "late": r["late_rate"], "p99_err_us": r["issue_error_us"]["p99"],
       "lines": int(sys.argv[2]), "capped": r["depth_capped"],
       "lag_ms": r["lag"]["max_us"] / 1e3, "runq_s": r["stages_s"]["runq"],
       "capped_s": r["stages_s"]["capped"], "read_p99_us": r["ops"]["read"]["lat_us"]["p99"],
       "load": sys.argv[3]}
open(sys.argv[4], "a").write(json.dumps(row) + "\n")
print(f"  probe    late {100 * row['late']:6.2f}%  p99 issue error {row['p99_err_us']:8.1f} us"
      f"  ({row['lines']} probe lines)  fell behind by {row['lag_ms']:.2f} ms; depth-capped"
      f" {row['capped']} ({row['capped_s']:.2f} s); thread waited {row['runq_s']:.2f} s for a CPU;"
      f" read p99 {row['read_p99_us']:.0f} us  (load {row['load']})")
PY
	loop_detach_all_but_a
}

want() { [[ " $KINDS " == *" $1 "* ]]; }
for r in $(seq "$ROUNDS"); do
	echo "round $r"
	want default && replay_write default 1
	want none && replay_write none 1 --order none
	want half && replay_write half 0.5
	want rt && replay_write rt 1 --rt-priority 1
	want causal && replay_write causal 1 --order causal
	want barrier && replay_write barrier 1 --order barrier
	want apart && replay_write apart 1 --flushes-apart
	want depth && replay_write depth 1 --iodepth recorded
	want nohold && replay_write nohold 1 --iodepth 128
	want bare && replay_bare
	want null && floor_null
	want fio && floor_fio
	want again && floor_again
	want busy && floor_again busy
	want hog && floor_again hog
	want probe && probe_read
	for k in $KINDS; do # spin:N: default settings but --spin-us N; depthx:F: --iodepth F x the recorded maximum
		[[ $k == spin:* ]] && replay_write "spin${k#spin:}" 1 --spin-us "${k#spin:}"
		[[ $k == depthx:* ]] && replay_write "depthx${k#depthx:}" 1 --iodepth "$(python3 -c \
			"import json,sys; print(max(1, round(float(sys.argv[2]) * json.load(open(sys.argv[1]))['queue_depth']['depth']['max_ios'])))" \
			"$W/orig.json" "${k#depthx:}")"
	done
done

python3 - "$W/rows.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(kind, k):
    xs = [r[k] for r in rows if r["kind"] == kind and r.get(k) is not None]
    return statistics.median(xs) if xs else None
def check(label, v, ok, fmt):
    if v is None:
        return
    print(f"  {label:44s} {fmt.format(v):>12s}   {'met' if ok(v) else 'NOT met'}")
names = {"default": "default settings",
         "none": "--order none (open loop; the default for a trace without --waits)",
         "half": "--speed 0.5 (unloaded reference)",
         "rt": "--rt-priority 1 (SCHED_FIFO 1, spin 10 us: the other class)",
         "causal": "--order causal (flushes wait for the writes they cover)",
         "barrier": "--order barrier (barriers and what follows them keep their order)",
         "apart": "--flushes-apart (a flush waits for the one before)",
         "depth": "--iodepth recorded (the recording's most I/Os in flight)",
         "nohold": "--iodepth 128 (no hold at the recording's depth)",
         "bare": "default settings, the replay not recorded (no recorder beside it)",
         "null": "floor: null engine (the replayer alone, same schedule)",
         "fio": "floor: fio on a fresh raw device at the recorded rate (device time)",
         "again": "floor: the application again on a fresh device (device time)",
         "busy": "floor: the application again, a SCHED_IDLE spinner on each CPU",
         "hog": "floor: the application again, one spinner at normal priority"}
print("SUMMARY (medians over the rounds; targets: late <= 1%, p99 issue error <= 100 us,"
      " device time within 20%)")
for r in rows:
    if r["kind"].startswith("spin") and r["kind"] not in names:
        names[r["kind"]] = f"--spin-us {r['kind'][4:]} (otherwise default settings)"
    if r["kind"].startswith("depthx") and r["kind"] not in names:
        names[r["kind"]] = f"--iodepth {r['kind'][6:]} x the recording's largest queue depth"
for kind, title in names.items():
    if not any(r["kind"] == kind for r in rows):
        continue
    print(f" {title}")
    late = med(kind, "late")
    check("late", None if late is None else 100 * late, lambda v: v <= 1, "{:.2f}%")
    check("p99 issue error (replayer)", med(kind, "p99_err_us"), lambda v: v <= 100, "{:.1f} us")
    check("p99 issue error (block layer)", med(kind, "block_p99_us"), lambda v: v <= 100,
          "{:.1f} us")
    t = med(kind, "time")
    if t is not None:
        print(f"  {'run time, this run / recording':44s} {t:>11.2f}x")
    for op in ("write", "flush"):
        for q in ("p50", "p99"):
            check(f"{op} device time {q}, this run / recording", med(kind, f"{op}_{q}"),
                  lambda v: 0.8 <= v <= 1.2, "{:.2f}x")
    for q in ("p50", "p99"):  # weighted by the recording's depths: the device at the same load
        check(f"write {q} at the recording's depths", med(kind, f"write_{q}_same_depth"),
              lambda v: 0.8 <= v <= 1.2, "{:.2f}x")
if med("probe", "late") is not None:
    print(" 20k IOPS Poisson reads, bpftrace probe printing every block_rq_issue")
    check("late", 100 * med("probe", "late"), lambda v: v <= 1, "{:.2f}%")
    check("p99 issue error", med("probe", "p99_err_us"), lambda v: v <= 100, "{:.1f} us")
    print(f"  (read device time p99 {med('probe', 'read_p99_us'):.0f} us; the trace's is 50 us:"
          f" a slower device fills the depth cap, and its I/Os wait)")
PY
echo "# load average at the end $(load)"
