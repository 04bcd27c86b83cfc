#!/usr/bin/env bash
# bench/replay/syscalls.sh: what the replayer costs per I/O at original timing on a loop device,
# in counts that hold on a loaded machine: system calls per I/O (the engine's own count, and
# perf's syscalls:sys_enter_io_uring_enter beside it: they must agree), CPU time per I/O of the
# whole process (perf task-clock: the issuing thread, the decoder and io_uring's io-wq workers),
# context switches per I/O, io-wq punts per I/O (io_uring:io_uring_queue_async_work), and
# the late share and p99 issue error for reference (those depend on the load).
# The trace: gen_trace, 4 KiB Poisson random writes at RATE with a flush every 5th I/O (the
# round trip's mix). Kinds alternate within each round; the summary is the median per kind.
#   bash bench/replay/syscalls.sh [BUILD_DIR] [BASE_BIOTAPE]
# BASE_BIOTAPE: another biotape binary measured in the same rotation (before/after).
# Environment: ROUNDS (5), N (100000 I/Os), RATE (39000), SPEEDS ("1 0.5"). Needs root and perf.
# Writes only to its own loop device over a /dev/shm file (256 MiB) and detaches it.
set -euo pipefail
BUILD=${1:-build}
BASE=${2:-}
ROUNDS=${ROUNDS:-5}
N=${N:-100000}
RATE=${RATE:-39000}
SPEEDS=${SPEEDS:-1 0.5}
BIN=$(cd "$BUILD/bin" && pwd)
[ "$(id -u)" = 0 ] || { echo "syscalls.sh needs root (loop device, tracepoints)" >&2; exit 1; }
command -v perf >/dev/null || { echo "syscalls.sh needs perf" >&2; exit 1; }
. "$(dirname "$0")/../../tests/loop.sh"
W=$(mktemp -d /dev/shm/biotape-syscalls.XXXXXX)
cleanup() {
	loop_detach_all
	rm -rf "$W"
}
trap cleanup EXIT
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
loop_new 256 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
L=$LOOP
"$BIN/gen_trace" -o "$W/w.btape" -n "$N" -r "$RATE" -a poisson -p randwrite -F 5 \
	-S $((256 << 20))
EV=task-clock,context-switches,syscalls:sys_enter_io_uring_enter
EV=$EV,io_uring:io_uring_queue_async_work
who=(biotape)
[ -n "$BASE" ] && who+=(base)
echo "# bench/replay/syscalls.sh: $(uname -r), $(nproc) CPUs, $N I/Os at $RATE/s (a flush" \
	"every 5th), rounds $ROUNDS, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	for s in $SPEEDS; do
		for w in "${who[@]}"; do
			bt=$BIN/biotape
			[ "$w" = base ] && bt=$BASE
			perf stat -x, -o "$W/ps" -e "$EV" -- "$bt" replay "$W/w.btape" --target "$L" \
				--write --speed "$s" --json --no-progress >"$W/out.json" 2>/dev/null
			python3 - "$W/ps" "$W/out.json" "$w speed $s" "$(cut -d' ' -f1 /proc/loadavg)" \
				>>"$W/rows" <<'PY'
import json, sys
d = {}
for l in open(sys.argv[1]):
    x = l.strip().split(",")
    if len(x) > 3 and x[0][:1].isdigit():
        d[x[2]] = float(x[0])
j = json.load(open(sys.argv[2]))
n = j["issued"] if "issued" in j else j["ios"]
print(json.dumps({"kind": sys.argv[3], "sys_own": j.get("engine_syscalls", 0) / n,
                  "sys_perf": d["syscalls:sys_enter_io_uring_enter"] / n,
                  "cpu_us": d["task-clock"] * 1e3 / n, "cs": d["context-switches"] / n,
                  "punt": d["io_uring:io_uring_queue_async_work"] / n,
                  "late": 100 * j["late_rate"], "p99": j["issue_error_us"]["p99"],
                  "load": float(sys.argv[4])}))
PY
			tail -1 "$W/rows"
		done
	done
done
python3 - "$W/rows" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("# medians: syscalls/IO (engine, perf), CPU us/IO, context switches/IO, io-wq punts/IO,"
      " late %, p99 issue error us, load")
for k in dict.fromkeys(r["kind"] for r in rows):
    m = lambda f: statistics.median(r[f] for r in rows if r["kind"] == k)
    print(f"{k:18s} {m('sys_own'):.3f} {m('sys_perf'):.3f} {m('cpu_us'):6.2f} {m('cs'):.3f}"
          f" {m('punt'):.3f} {m('late'):6.2f} {m('p99'):8.0f} {m('load'):5.1f}")
PY
