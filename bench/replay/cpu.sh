#!/usr/bin/env bash
# bench/replay/cpu.sh: CPU cost per I/O of an afap QD32 4 KiB random-read replay, against fio
# doing the same number of I/Os, alternating, medians. CPU time is the replaying process's
# (all its threads: perf stat task-clock, user_time, system_time), so it does not depend on how
# busy the other core is as much as IOPS does; context switches and io_uring_enter calls are
# counted by perf (software events and the syscalls tracepoint).
#   bash bench/replay/cpu.sh [BUILD_DIR] [BASE_BIOTAPE]
# BASE_BIOTAPE: another biotape binary measured in the same rotation (before/after).
# Environment: ROUNDS (5), N (400000 I/Os), QD (32). Needs root (loop device, tracepoints).
set -euo pipefail
BUILD=${1:-build}
BASE=${2:-}
ROUNDS=${ROUNDS:-5}
N=${N:-400000}
QD=${QD:-32}
BIN=$(cd "$BUILD/bin" && pwd)
BT=$BIN/biotape
GEN=$BIN/gen_trace
. "$(dirname "$0")/../../tests/loop.sh"
W=$(mktemp -d /dev/shm/biotape-cpu.XXXXXX)
cleanup() {
	loop_detach_all
	rm -rf "$W"
}
trap cleanup EXIT
loop_new 256 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
L=$LOOP
dd if=/dev/zero of="$L" bs=1M count=256 oflag=direct status=none
"$GEN" -o "$W/rr.btape" -n "$N" -r 1000000 -p randread -b 4096 -S $((256 << 20))
EV=task-clock,user_time,system_time,context-switches,syscalls:sys_enter_io_uring_enter

# runs "$@" under perf stat; prints: us_cpu us_user us_sys ctxsw_per_io enters_per_io
measure() {
	perf stat -x, -o "$W/ps" -e "$EV" -- "$@" >"$W/out.json" 2>/dev/null
	awk -F, -v n="$N" '
		$3 == "task-clock" { cpu = $1 * 1000 / n }
		$3 == "user_time" { u = $1 / 1000 / n }
		$3 == "system_time" { s = $1 / 1000 / n }
		$3 == "context-switches" { cs = $1 / n }
		$3 ~ /io_uring_enter/ { en = $1 / n }
		END { printf "%.3f %.3f %.3f %.4f %.4f\n", cpu, u, s, cs, en }' "$W/ps"
}
iops() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(round(j["jobs"][0]["read"]["iops"] if "jobs" in j else j["iops"]))' "$W/out.json"; }

who=(fio biotape)
if [ -n "$BASE" ]; then who+=(base); fi
echo "# bench/replay/cpu.sh: $(uname -r), $(nproc) CPUs, $N I/Os, QD$QD, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# columns: CPU us/IO (task-clock), user us/IO, sys us/IO, context switches/IO, io_uring_enter/IO, IOPS"
for r in $(seq "$ROUNDS"); do
	for w in "${who[@]}"; do
		case $w in
		fio)
			# --io_size: without it fio stops after --size (256 MiB = 65,536 I/Os)
			cmd=(fio --name=cpu --filename="$L" --rw=randread --bs=4k --direct=1
				--ioengine=io_uring --iodepth="$QD" --number_ios="$N"
				--io_size=$((N * 4096)) --size=256M --norandommap --randrepeat=0
				--output-format=json) ;;
		biotape) cmd=("$BT" replay "$W/rr.btape" --target "$L" --timing afap
				--iodepth "$QD" --json --no-progress) ;;
		base) cmd=("$BASE" replay "$W/rr.btape" --target "$L" --timing afap
				--iodepth "$QD" --json --no-progress) ;;
		esac
		m=$(measure "${cmd[@]}")
		if [ "$w" = fio ]; then
			got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"])' "$W/out.json")
			[ "$got" = "$N" ] || { echo "fio did $got I/Os, not $N" >&2; exit 1; }
		fi
		echo "$m $(iops)" >>"$W/$w.txt"
		echo "round $r $w: $m $(iops)"
	done
done
for w in "${who[@]}"; do
	python3 - "$w" "$W/$w.txt" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2])]
med = [statistics.median(c) for c in zip(*rows)]
print("CPU %-8s median: %.3f us/IO (user %.3f, sys %.3f), %.4f ctx switches/IO, "
      "%.4f io_uring_enter/IO, %.0f IOPS" % (sys.argv[1], *med))
PY
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
