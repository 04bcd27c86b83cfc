#!/bin/bash
# The recorder's own CPU per recorded event, two biotape builds A/B: in every round each build
# (in alternating order) records the loop device while fio does N 4 KiB random reads (QD 32,
# io_uring, direct), and the recorder's CPU over that window is the sum of its threads'
# run time from /proc/PID/task/*/schedstat (ns, all threads: ring-buffer consumer and writer).
# The window ends 1.2 s after fio, past the writer's 1 s flush interval, so both builds have
# handled every event in it. Prints each round, the medians and the median paired ratio
# NEW/OLD. CPU per event moves much less with the machine's load than IOPS does.
# Run as root: bench/record/cpu_ab.sh OLD_BIOTAPE NEW_BIOTAPE [ROUNDS (7)] [N (400000)]
set -eu
OLD=$1
NEW=$2
ROUNDS=${3:-7}
N=${4:-400000}
. "$(dirname "$0")/lib.sh"
bench_setup biotape-cpu-ab
RES=$W/res

task_ns() { # the run time of all threads of PID, ns
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}

echo "round build recorder_ns events ns_per_event"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 0 ]; then order="old new"; else order="new old"; fi
	for tag in $order; do
		bin=$OLD
		[ "$tag" = new ] && bin=$NEW
		rm -f "$W/t.btape"
		"$bin" record -v -o "$W/t.btape" -d "$LOOP" 2>"$W/rec.err" &
		pid=$! BENCH_PID=$!
		bench_wait "$pid" "$W/rec.err"
		c0=$(task_ns "$pid")
		fio --name=ab --filename="$LOOP" --rw=randread --bs=4k --iodepth=32 \
			--ioengine=io_uring --direct=1 --norandommap --randrepeat=0 --size=1G \
			--number_ios="$N" --io_size=$((N * 4096)) --output=/dev/null
		sleep 1.2
		c1=$(task_ns "$pid")
		kill -INT "$pid"
		wait "$pid"
		BENCH_PID=
		events=$(sed -n 's/.*recorded \([0-9]*\) events.*/\1/p' "$W/rec.err")
		echo "$r $tag $((c1 - c0)) $events $(( (c1 - c0) / (events > 0 ? events : 1) ))" |
			tee -a "$RES"
	done
done
python3 - "$RES" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
per = {(r[0], r[1]): int(r[2]) / max(int(r[3]), 1) for r in rows}
old = [v for (i, t), v in per.items() if t == "old"]
new = [v for (i, t), v in per.items() if t == "new"]
ratio = sorted(per[(i, "new")] / per[(i, "old")] for (i, t) in per if t == "old")
print(f"recorder CPU per event: old median {st.median(old):.1f} ns, new median "
      f"{st.median(new):.1f} ns; paired new/old median {st.median(ratio):.3f} "
      f"(min {ratio[0]:.3f}, max {ratio[-1]:.3f}, {len(ratio)} rounds)")
PY
