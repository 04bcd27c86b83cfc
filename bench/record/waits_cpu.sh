#!/bin/bash
# What record --waits costs: system-wide CPU per I/O (/proc/stat busy time: user, nice,
# system, irq, softirq, steal, over the fio run, divided by its I/Os) while biotape records a
# /dev/shm loop device without and with --waits, alternating the order every round. Two loads:
# "sync" (4 KiB randread, psync, QD 1: every I/O is a sleep, a wakeup and two context
# switches, the worst case of the sched programs) and "qd32" (io_uring, QD 32). Prints each run,
# then per load the medians (CPU per I/O, I/Os, trace bytes per I/O) and the median of the
# per-round ratios waits/plain.
# Run as root: BIOTAPE=build/bin/biotape bench/record/waits_cpu.sh [ROUNDS (5)] [RUNTIME_S (3)]
set -eu
BIOTAPE=${BIOTAPE:-biotape}
ROUNDS=${1:-5}
RUNTIME=${2:-3}
. "$(dirname "$0")/lib.sh"
bench_setup biotape-waits
HZ=$(getconf CLK_TCK)
busy() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
: >"$W/rows"
for r in $(seq "$ROUNDS"); do
	for load in sync qd32; do
		if [ $((r % 2)) = 0 ]; then order="plain waits"; else order="waits plain"; fi
		for mode in $order; do
			args=()
			[ $mode = waits ] && args=(--waits)
			"$BIOTAPE" record -v -o "$W/t.btape" -d "$LOOP" "${args[@]}" 2>"$W/rec.err" &
			BENCH_PID=$!
			bench_wait "$BENCH_PID" "$W/rec.err"
			if [ $load = sync ]; then
				eng=(--ioengine=psync --iodepth=1)
			else
				eng=(--ioengine=io_uring --iodepth=32)
			fi
			b0=$(busy)
			fio --name=w --filename="$LOOP" --rw=randread --bs=4k "${eng[@]}" --direct=1 \
				--norandommap --time_based --runtime="$RUNTIME" --size=1G \
				--output-format=json --output="$W/f.json"
			b1=$(busy)
			kill -INT "$BENCH_PID"
			wait "$BENCH_PID"
			BENCH_PID=
			size=$(stat -c %s "$W/t.btape")
			rm -f "$W/t.btape"
			python3 - "$W/f.json" "$r" "$load" "$mode" "$((b1 - b0))" "$HZ" "$size" <<'PY' | tee -a "$W/rows"
import json, sys
f, r, load, mode, busy, hz, size = sys.argv[1:]
ios = json.load(open(f))["jobs"][0]["read"]["total_ios"]
print(r, load, mode, ios, round(int(busy) / int(hz) * 1e9 / max(ios, 1)),
      f"{int(size) / max(ios, 1):.2f}")
PY
		done
	done
done
python3 - "$W/rows" <<'PY'
import collections, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
v = collections.defaultdict(dict)
for r, load, mode, ios, ns, bpe in rows:
    v[(load, r)][mode] = (int(ios), int(ns), float(bpe))
for load in ("sync", "qd32"):
    rs = [x for (l, _), x in v.items() if l == load and len(x) == 2]
    med = lambda m, i: statistics.median(x[m][i] for x in rs)
    ratio = statistics.median(x["waits"][1] / x["plain"][1] for x in rs)
    print(f"{load}: busy ns/IO plain {med('plain', 1):.0f}, waits {med('waits', 1):.0f};"
          f" waits/plain per round, median {ratio:.3f}; I/Os plain {med('plain', 0):.0f},"
          f" waits {med('waits', 0):.0f}; file bytes/IO plain {med('plain', 2):.2f},"
          f" waits {med('waits', 2):.2f} ({len(rs)} rounds)")
PY
