#!/bin/bash
# Recording overhead per rank, cluster versus single host: two /dev/shm loop devices, a fio job
# on each (4 KiB randread, QD 8, io_uring, direct, 3 s), recorded either by one
# `biotape record -d L0 -d L1` or by `mpirun -n 2 biotape record -d dev%r` (a rank per device,
# as a two-host recording would run). Rounds alternate the modes. Prints per round and the
# median: fio's total IOPS and the recorders' CPU time (user + sys, getrusage through
# /usr/bin/time; the cluster's is the sum of its ranks) per recorded event.
# Run as root: BIOTAPE=build/bin/biotape bench/cluster/record_overhead.sh [ROUNDS]
set -eu
BIOTAPE=${BIOTAPE:-biotape}
ROUNDS=${1:-3}
. "$(dirname "$0")/../record/lib.sh"
bench_setup biotape-cluster-rec
L0=$LOOP
loop_new 1024 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
dd if=/dev/zero of="$LOOP" bs=1M count=1024 oflag=direct status=none
L1=$LOOP
ln -s "$L0" "$W/dev0"
ln -s "$L1" "$W/dev1"
# Open MPI's shared-memory files (vader_segment.*) under $W, removed at exit: a killed job
# leaves none in /dev/shm
mkdir -p "$W/ompi"
export OMPI_MCA_btl_vader_backing_directory=$W/ompi
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

fio_run() {
	# global options before the first --name: after it they would apply to that job only
	fio --rw=randread --bs=4k --iodepth=8 --ioengine=io_uring --direct=1 --norandommap \
		--time_based --runtime=3 --size=1G --group_reporting --output-format=json \
		--output="$W/f.json" --name=a --filename="$L0" --name=b --filename="$L1" >/dev/null
	python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["jobs"][0]["read"]; print(int(r["iops"]), r["total_ios"])' "$W/f.json"
}
# cpu_ms FILES...: summed user + sys seconds of /usr/bin/time -f "%U %S" outputs, in ms
cpu_ms() { cat "$@" | awk '{ s += $1 + $2 } END { printf "%.0f", s * 1000 }'; }
# recorders PID: the biotape processes below PID (/usr/bin/time ignores SIGINT: signal them)
recorders() {
	local p c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = biotape ] && echo "$c"
		recorders "$c"
	done
}
events() { grep -ho "recorded [0-9]* events" "$@" | awk '{ s += $2 } END { print s }'; }
lost() { grep -ho "^biotape: lost [0-9]* events" "$@" | awk '{ s += $3 } END { print s }'; }

echo "round mode fio_IOPS fio_IOs events lost recorder_cpu_ms ns_cpu_per_event"
for r in $(seq "$ROUNDS"); do
	for mode in single cluster; do
		rm -f "$W"/*.btape "$W"/time.* "$W"/rec.*
		if [ $mode = single ]; then
			/usr/bin/time -f "%U %S" -o "$W/time.0" "$BIOTAPE" record -v -o "$W/s.btape" \
				-d "$L0" -d "$L1" 2>"$W/rec.0" &
		else
			"${MPIRUN[@]}" -n 2 sh -c "exec /usr/bin/time -f '%U %S' -o $W/time.\$OMPI_COMM_WORLD_RANK \
$BIOTAPE record -v -o $W/c-%r.btape -d $W/dev%r 2>$W/rec.\$OMPI_COMM_WORLD_RANK" &
		fi
		pid=$! BENCH_PID=$!
		BENCH_READY="programs attached" bench_wait "$pid" "$W/rec.0"
		[ $mode = single ] || BENCH_READY="programs attached" bench_wait "$pid" "$W/rec.1"
		sleep 0.5 # the cluster's common start is 100 ms after attaching
		read -r iops ios < <(fio_run)
		kill -INT $(recorders "$pid")
		wait "$pid" || true
		BENCH_PID=
		n=$(events "$W"/rec.*)
		ms=$(cpu_ms "$W"/time.*)
		echo "$r $mode $iops $ios $n $(lost "$W"/rec.*) $ms $(awk -v ms="$ms" -v n="$n" 'BEGIN { printf "%.0f", ms * 1e6 / n }')"
	done
done | tee "$W/rows"
python3 - "$W/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
for mode in ("single", "cluster"):
    r = [x for x in rows if x[1] == mode]
    print(f"median {mode}: fio {statistics.median(int(x[2]) for x in r):.0f} IOPS, "
          f"{statistics.median(int(x[7]) for x in r):.0f} ns recorder CPU per event, "
          f"lost {statistics.median(int(x[5]) for x in r):.0f}")
PY
