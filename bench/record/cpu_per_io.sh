#!/bin/bash
# System-wide CPU per I/O: fio 4 KiB randread, QD 32, io_uring, direct, on a /dev/shm loop
# device, untraced, with the recorder's programs attached to an idle second device ("floor"),
# and recorded by biotape. Busy time of all CPUs (/proc/stat: user, nice, system, irq, softirq,
# steal) over the fio run divided by its I/Os, and the idle share. On a machine whose CPUs the
# workload keeps busy, the IOPS ratio of a tracer is about untraced CPU per I/O / (that + the
# tracer's CPU per I/O): the budget a tracer has (docs/BENCHMARKS.md, "Recorder").
# The /proc/stat window also covers fio's start and exit, the same in every mode.
# Run as root: BIOTAPE=build/bin/biotape bench/record/cpu_per_io.sh [REPS] [RUNTIME_S]
set -eu
BIOTAPE=${BIOTAPE:-biotape}
REPS=${1:-4}
RUNTIME=${2:-4}
. "$(dirname "$0")/lib.sh"
bench_setup biotape-cpu idle
HZ=$(getconf CLK_TCK)
busy_idle() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }

echo "rep jobs mode IOPS busy_ns_per_io idle%"
for rep in $(seq "$REPS"); do
	for jobs in 1 2; do
		for mode in untraced floor biotape; do
			pid=
			if [ "$mode" != untraced ]; then
				dev=$LOOP
				[ "$mode" = floor ] && dev=$LOOP2
				"$BIOTAPE" record -v -o "$W/t.btape" -d "$dev" 2>"$W/rec.err" &
				pid=$! BENCH_PID=$!
				bench_wait "$pid" "$W/rec.err"
			fi
			read -r b0 i0 < <(busy_idle)
			fio --name=rr --filename="$LOOP" --rw=randread --bs=4k --iodepth=32 \
				--ioengine=io_uring --direct=1 --norandommap --time_based \
				--runtime="$RUNTIME" --size=1G --numjobs="$jobs" --group_reporting \
				--output-format=json --output="$W/f.json"
			read -r b1 i1 < <(busy_idle)
			if [ -n "$pid" ]; then
				kill -INT "$pid"
				wait "$pid"
				BENCH_PID=
			fi
			rm -f "$W/t.btape"
			python3 - "$W/f.json" "$rep" "$jobs" "$mode" "$((b1 - b0))" "$((i1 - i0))" \
				"$HZ" "$RUNTIME" <<'PY'
import json, sys
f, rep, jobs, mode, busy, idle, hz, rt = sys.argv[1:]
ios = sum(j["read"]["total_ios"] for j in json.load(open(f))["jobs"])
busy, idle = int(busy), int(idle)
print(rep, jobs, mode, ios // int(rt), round(busy / int(hz) * 1e9 / max(ios, 1)),
      f"{100 * idle / max(busy + idle, 1):.1f}")
PY
		done
	done
done
