#!/usr/bin/env bash
# bench/replay/order_cpu.sh: the replayer's CPU (user + sys, /usr/bin/time) in each --order
# mode on a dense trace that falls far behind its dependencies: gen_trace -p mixed (200k IOPS,
# 8 threads, 2 devices, a flush every 16th I/O) on the null engine at 150 us, two sparse file
# targets in /dev/shm (the null engine writes nothing). With BASE_BIOTAPE, that binary is run
# in the same rotation, the order alternating per round; medians per mode and binary.
#   bash bench/replay/order_cpu.sh [BUILD_DIR] [BASE_BIOTAPE]
# Environment: ROUNDS (3), N (400000 I/Os), MODES ("none barrier causal"), OUTLIER (ns: the
# middle I/O completes that long after its issue, gen_trace -L: one slow I/O in a recording
# must not make every later I/O's lookups walk back over it). No root needed.
set -euo pipefail
BUILD=${1:-build}
BASE=${2:-}
ROUNDS=${ROUNDS:-3}
N=${N:-400000}
MODES=${MODES:-none barrier causal}
OUTLIER=${OUTLIER:-}
BIN=$(cd "$BUILD/bin" && pwd)
W=$(mktemp -d /dev/shm/biotape-order-cpu.XXXXXX)
trap 'rm -rf "$W"' EXIT
cp "$BIN/biotape" "$W/new" # a rebuild during the run does not change the binary measured
[ -z "$BASE" ] || cp "$BASE" "$W/base"
"$BIN/gen_trace" -o "$W/m.btape" -p mixed -n "$N" -F 16 ${OUTLIER:+-L "$OUTLIER"}
sides=(new)
[ -z "$BASE" ] || sides=(base new)
for r in $(seq 1 "$ROUNDS"); do
	for m in $MODES; do
		order=("${sides[@]}")
		[ $((r % 2)) = 0 ] && [ ${#sides[@]} = 2 ] && order=(new base)
		for b in "${order[@]}"; do
			rm -f "$W/t0" "$W/t1"
			/usr/bin/time -f "%U %S %e" -o "$W/time" "$W/$b" replay "$W/m.btape" \
				--map 0="$W/t0" --map 1="$W/t1" --create auto --write --engine null \
				--null-latency 150us --order "$m" --no-progress --json >"$W/out.json"
			read -r u s e <"$W/time"
			echo "$r $m $b $u $s $e $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$W/log"
		done
	done
done
python3 - "$W/log" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("mode     binary  CPU s (median, min-max)  wall s (median)")
for m in dict.fromkeys(r[1] for r in rows):
    for b in dict.fromkeys(r[2] for r in rows):
        cpu = [float(r[3]) + float(r[4]) for r in rows if r[1] == m and r[2] == b]
        wall = [float(r[5]) for r in rows if r[1] == m and r[2] == b]
        print(f"{m:8} {b:6} {statistics.median(cpu):7.2f} ({min(cpu):.2f}-{max(cpu):.2f}) {statistics.median(wall):10.2f}")
PY
