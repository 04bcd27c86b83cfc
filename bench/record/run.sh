#!/bin/bash
# Recorder overhead: fio 4 KiB randread, QD 32, io_uring, direct, on a /dev/shm loop device,
# untraced vs traced by `biotape record` vs traced by a bpftrace biosnoop-style script writing
# text; with 1 and 2 fio jobs. Modes alternate within each repetition; medians are reported.
# A fourth mode, "floor", runs biotape's programs on every I/O but records an idle second loop
# device, so they return after the device check: what attaching three block tracepoint
# programs costs before any recording work (the floor of this design).
# Run as root: BIOTAPE=build/bin/biotape bench/record/run.sh [REPS] [RUNTIME_S]
# BASE=/path/to/another/biotape adds a mode "base": that binary recording, in the same rotation
# (before/after in one run).
set -eu
BIOTAPE=${BIOTAPE:-biotape}
REPS=${1:-10}
RUNTIME=${2:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
# bpftrace's tracepoint probes need tracefs.
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
. "$HERE/lib.sh"
bench_setup biotape-bench idle
TICK=$(getconf CLK_TCK)
RES="$W/results.txt"
: > "$RES"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

run_fio() { # run_fio JOBS OUT.json
	fio --name=rr --filename="$LOOP" --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring \
		--direct=1 --norandommap --time_based --runtime="$RUNTIME" --size=1G \
		--numjobs="$1" --group_reporting --output-format=json --output="$2"
}

iops() { python3 -c 'import json,sys; print(int(sum(j["read"]["iops"] for j in json.load(open(sys.argv[1]))["jobs"])))' "$1"; }
# CPU time of fio's own threads per I/O, ns (fio's usr_cpu + sys_cpu over its runtime): less
# sensitive than IOPS to other work on the machine taking CPU away from fio, and it includes
# the programs that run in fio's context (submission and issue; completions run elsewhere).
fio_cpu_ns() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
cpu = sum((x["usr_cpu"] + x["sys_cpu"]) / 100 * x["job_runtime"] / 1000 for x in j)
ios = sum(x["read"]["total_ios"] for x in j)
print(round(cpu / max(ios, 1) * 1e9))' "$1"; }

for rep in $(seq "$REPS"); do
	for jobs in 1 2; do
		for mode in untraced biotape ${BASE:+base} floor bpftrace; do
			rm -f "$W/t.btape" "$W/t.txt"
			cpu=0 lost=- bpe=- events=-
			case $mode in
			untraced)
				run_fio "$jobs" "$W/f.json"
				;;
			biotape | base | floor)
				dev=$LOOP bin=$BIOTAPE
				[ "$mode" = floor ] && dev=$LOOP2
				[ "$mode" = base ] && bin=$BASE
				"$bin" record -v -o "$W/t.btape" -d "$dev" 2>"$W/rec.err" &
				pid=$! BENCH_PID=$!
				bench_wait "$pid" "$W/rec.err"
				c0=$(cpu_ticks "$pid")
				run_fio "$jobs" "$W/f.json"
				c1=$(cpu_ticks "$pid")
				kill -INT "$pid"
				wait "$pid"
				BENCH_PID=
				cpu=$(python3 -c "print(round(($c1 - $c0) * 100 / $TICK / $RUNTIME, 1))")
				events=$(sed -n 's/.*recorded \([0-9]*\) events.*/\1/p' "$W/rec.err")
				lost=$(sed -n 's/.*lost \([0-9]*\) events.*/\1/p' "$W/rec.err")
				bpe=$(python3 -c "print(round($(stat -c %s "$W/t.btape") / max($events, 1), 2))")
				[ "$mode" = floor ] && bpe=-
				;;
			bpftrace)
				bpftrace -B full "$HERE/biosnoop.bt" >"$W/t.txt" 2>"$W/bt.err" &
				pid=$! BENCH_PID=$!
				BENCH_READY=Attaching bench_wait "$pid" "$W/bt.err" "$W/t.txt"
				sleep 0.5
				c0=$(cpu_ticks "$pid")
				run_fio "$jobs" "$W/f.json"
				c1=$(cpu_ticks "$pid")
				kill -INT "$pid"
				wait "$pid" || true
				BENCH_PID=
				cpu=$(python3 -c "print(round(($c1 - $c0) * 100 / $TICK / $RUNTIME, 1))")
				events=$(grep -vc "^Attaching\|^$\|^Lost" "$W/t.txt" || true)
				lost=$(sed -n 's/.*Lost \([0-9]*\) events.*/\1/p' "$W/bt.err" "$W/t.txt" | awk '{ s += $1 } END { print s + 0 }')
				bpe=$(python3 -c "print(round($(stat -c %s "$W/t.txt") / max($events, 1), 2))")
				;;
			esac
			i=$(iops "$W/f.json")
			echo "$rep $jobs $mode $i $cpu $lost $events $bpe $(fio_cpu_ns "$W/f.json")" |
				tee -a "$RES"
		done
	done
done

# In-kernel cost per I/O of the recorder's programs (kernel.bpf_stats_enabled, one extra run;
# the recorder prints per-program times with -v).
bench_on_exit() { sysctl -qw kernel.bpf_stats_enabled=0; }
sysctl -qw kernel.bpf_stats_enabled=1
"$BIOTAPE" record -v -o "$W/s.btape" -d "$LOOP" 2>"$W/rec.err" &
pid=$! BENCH_PID=$!
bench_wait "$pid" "$W/rec.err"
run_fio 1 "$W/f.json"
kill -INT "$pid"
wait "$pid"
BENCH_PID=
sysctl -qw kernel.bpf_stats_enabled=0
echo "BPF cost (bpf_stats, 1 job, $(iops "$W/f.json") IOPS):"
grep -E "ns/call|per recorded" "$W/rec.err" | sed 's/^biotape: record: /  /'

python3 - "$RES" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("\njobs mode       IOPS(med)  ratio  runs(ratio)              lost(max)  recorder CPU%  B/event"
      "  fio ns/IO  ratio(fio CPU)")
for jobs in ("1", "2"):
    base = {r[0]: float(r[3]) for r in rows if r[1] == jobs and r[2] == "untraced"}
    base_cpu = {r[0]: float(r[8]) for r in rows if r[1] == jobs and r[2] == "untraced"}
    for mode in ("untraced", "floor", "biotape", "base", "bpftrace"):
        sel = [r for r in rows if r[1] == jobs and r[2] == mode]
        if not sel:
            continue
        ratios = [float(r[3]) / base[r[0]] for r in sel]
        med = statistics.median(float(r[3]) for r in sel)
        lost = max((int(r[5]) for r in sel if r[5] != "-"), default="-")
        cpu = statistics.median(float(r[4]) for r in sel)
        bpe = f"{statistics.median(float(r[7]) for r in sel):.2f}" if sel[0][7] != "-" else "-"
        fcpu = statistics.median(float(r[8]) for r in sel)
        # untraced fio CPU per I/O / this mode's: the IOPS ratio a CPU-bound fio would see
        cratio = statistics.median(base_cpu[r[0]] / float(r[8]) for r in sel)
        print(f"{jobs:>4} {mode:<10} {med:>9.0f}  {statistics.median(ratios):.3f}  "
              f"{' '.join(f'{x:.3f}' for x in ratios):<24} {lost!s:>9}  {cpu:>13}  {bpe:>7}"
              f"  {fcpu:>9.0f}  {cratio:.3f}")
PY
