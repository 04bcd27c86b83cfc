#!/bin/bash
# Recording overhead per rank, cluster versus single host (issue #18: "the same within noise"):
# two /dev/shm loop devices, a fio job on each (4 KiB randread, QD 8, io_uring, direct, 3 s,
# RATE I/Os per second each, default 40000),
# recorded by `mpirun -n 2 biotape record -d dev%r` (a rank per device, as a two-host
# recording would run: "cluster"), by two single-host `biotape record -d devN`, one per device
# ("two": what the ranks do, without MPI, with the same two processes competing for the CPUs),
# or by one `biotape record -d L0 -d L1` ("both"). Rounds alternate the modes. Prints per round and the medians: fio's total IOPS;
# the recorders' CPU (user + sys, getrusage through /usr/bin/time; summed over the processes)
# per recorded event over the whole run, start-up and MPI_Init included; and the steady-state
# CPU per event of the first device's recorder (rank 0, or the single-host one) over fio's
# window, split into its main thread, its writer thread and the rest (MPI's threads in a rank):
# cluster against two is the per-rank comparison, judged for all threads and for the recorder's
# own two, as a paired ratio per round, with
# a sign test of the ratios against 1.0, a bootstrap interval of their median, and the noise
# floor (a single-host recorder against itself in the next round); the verdict says "the same
# within noise" only when no side is favoured (p >= 0.05, at least 6 rounds, the interval
# holds 1.0) and the interval lies inside that floor.
# Run as root: BIOTAPE=build/bin/biotape [RATE=N] bench/cluster/record_overhead.sh [ROUNDS (8)]
set -eu
BIOTAPE=${BIOTAPE:-biotape}
ROUNDS=${1:-8}
# fio's rate per device: the same event rate in every mode, so CPU per event compares like with
# like (the recorder's cost per event falls as the rate rises: more events per wake-up)
RATE=${RATE:-40000}
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
# --bind-to none: Open MPI binds each of 2 ranks to one core by default (docs/CLUSTER.md)
MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

fio_run() {
	# global options before the first --name: after it they would apply to that job only
	fio --rw=randread --bs=4k --iodepth=8 --ioengine=io_uring --direct=1 --norandommap \
		--rate_iops="$RATE" \
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

# task_split PID: the run time (ns) of PID's main thread, of its writer thread (bt-writer) and
# of all its other threads (Open MPI's and PMIx's in a rank; none in a single-host recorder)
task_split() {
	local t m=0 w=0 o=0 ns
	for t in /proc/"$1"/task/*; do
		ns=$(cut -d' ' -f1 "$t/schedstat" 2>/dev/null) || continue
		if [ "${t##*/}" = "$1" ]; then
			m=$((m + ns))
		elif [ "$(cat "$t/comm" 2>/dev/null)" = bt-writer ]; then
			w=$((w + ns))
		else
			o=$((o + ns))
		fi
	done
	echo "$m $w $o"
}
rank_events() { grep -ho "recorded [0-9]* events" "$1" | awk '{ print $2 }'; }

# Per round and mode: fio's IOPS; the recorders' whole-run CPU (getrusage, start-up included)
# per event, summed over the processes; and the steady-state CPU per event of the recorder of
# L0 (the single-device recorder, or rank 0): its threads' run time over fio's window plus
# 1.2 s (past the writer's 1 s flush), from /proc/PID/task/*/schedstat.
echo "round mode fio_IOPS fio_IOs events lost run_ns_per_event l0_ns_per_event l0_main l0_writer l0_other"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 0 ]; then order="cluster two both"; else order="two both cluster"; fi
	for mode in $order; do
		rm -f "$W"/*.btape "$W"/time.* "$W"/rec.*
		case $mode in
		both) # one recorder of both devices
			/usr/bin/time -f "%U %S" -o "$W/time.0" "$BIOTAPE" record -v -o "$W/s.btape" \
				-d "$L0" -d "$L1" 2>"$W/rec.0" & ;;
		two) # two single-host recorders, one per device: what the ranks do, without MPI
			for i in 0 1; do
				/usr/bin/time -f "%U %S" -o "$W/time.$i" "$BIOTAPE" record -v \
					-o "$W/s$i.btape" -d "$W/dev$i" 2>"$W/rec.$i" &
			done ;;
		cluster) # a rank per device
			"${MPIRUN[@]}" -n 2 sh -c "exec /usr/bin/time -f '%U %S' -o $W/time.\$OMPI_COMM_WORLD_RANK \
$BIOTAPE record -v -o $W/c-%r.btape -d $W/dev%r 2>$W/rec.\$OMPI_COMM_WORLD_RANK" & ;;
		esac
		pid=$! BENCH_PID=$!
		BENCH_READY="programs attached" bench_wait "$pid" "$W/rec.0"
		[ $mode = both ] || BENCH_READY="programs attached" bench_wait "$pid" "$W/rec.1"
		sleep 0.5 # the cluster's common start is 100 ms after attaching
		if [ $mode = two ]; then
			pids="$(recorders $$)"
		else
			pids="$(recorders "$pid")"
		fi
		rec0=
		for p in $pids; do # the recorder of L0: rank 0, or the one writing s0/s.btape
			if grep -q "s0.btape\|s.btape" /proc/"$p"/cmdline 2>/dev/null ||
				tr '\0' '\n' </proc/"$p"/environ 2>/dev/null |
				grep -qx OMPI_COMM_WORLD_RANK=0; then
				rec0=$p
			fi
		done
		[ -n "$rec0" ] || { echo "no recorder of L0 among: $pids" >&2; exit 1; }
		read -r m0 w0 o0 < <(task_split "$rec0")
		read -r iops ios < <(fio_run)
		sleep 1.2
		read -r m1 w1 o1 < <(task_split "$rec0")
		kill -INT $pids
		wait || true
		BENCH_PID=
		n=$(events "$W"/rec.*)
		n0=$(rank_events "$W/rec.0")
		ms=$(cpu_ms "$W"/time.*)
		echo "$r $mode $iops $ios $n $(lost "$W"/rec.*) $(awk -v ms="$ms" -v n="$n" 'BEGIN { printf "%.0f", ms * 1e6 / n }') $(awk -v d=$((m1 + w1 + o1 - m0 - w0 - o0)) -v n="$n0" 'BEGIN { printf "%.0f", d / n }') $(awk -v m=$((m1 - m0)) -v w=$((w1 - w0)) -v o=$((o1 - o0)) -v n="$n0" 'BEGIN { printf "%.0f %.0f %.0f", m / n, w / n, o / n }')"
	done
done | tee "$W/rows"
python3 - "$W/rows" <<'PY'
import math, random, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
med = {}
for mode in ("two", "cluster", "both"):
    r = [x for x in rows if x[1] == mode]
    med[mode] = statistics.median(int(x[7]) for x in r)
    print(f"median {mode}: fio {statistics.median(int(x[2]) for x in r):.0f} IOPS, "
          f"{statistics.median(int(x[6]) for x in r):.0f} ns recorder CPU per event over the "
          f"run, {med[mode]:.0f} ns steady-state CPU per event of L0's recorder, "
          f"lost {statistics.median(int(x[5]) for x in r):.0f}")
# per rank: rank 0 over the single-host recorder of the same device, paired by round (the
# modes alternate order); the noise: a single-host recorder over itself in the next round.
# Judged twice: all of rank 0's threads (column 7), and the recorder's own threads only (main
# and writer, columns 8 + 9: the same code as single-host), with MPI's threads (column 10)
# reported beside
def judge(title, col):
    one = [col(x) for x in rows if x[1] == "two"]
    pairs = [col(c) / col(o) for c, o in zip([x for x in rows if x[1] == "cluster"],
                                             [x for x in rows if x[1] == "two"])]
    noise = [b / a for a, b in zip(one, one[1:])]
    n = len(pairs)
    print(f"{title}: rank 0 / a single-host recorder of the same device, beside another of the "
          f"other device = {statistics.median(pairs):.3f} (median of {n} rounds; range "
          f"{min(pairs):.3f}-{max(pairs):.3f})")
    # sign test against 1.0 (two-sided, exact binomial): are the ranks' ratios on one side?
    up = sum(1 for x in pairs if x > 1)
    def tail(k):
        return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    p = min(1.0, 2 * min(tail(up), tail(n - up))) if n else 1.0
    # bootstrap 95% interval of the median ratio (rounds resampled, fixed seed)
    rng = random.Random(1)
    boot = sorted(statistics.median(rng.choices(pairs, k=n)) for _ in range(10000)) if n else [0]
    lo, hi = boot[249], boot[9749]
    print(f"  sign test: {up} of {n} rounds above 1.0, p = {p:.3f}; median's 95% bootstrap "
          f"interval {lo:.3f}-{hi:.3f}")
    if noise:
        print(f"  noise: single-host over single-host, consecutive rounds: {min(noise):.3f}-"
              f"{max(noise):.3f} (median {statistics.median(noise):.3f}, {len(noise)} pairs)")
    if n < 6:
        verdict = f"too few rounds ({n}): a sign test needs 6 to reach p < 0.05"
    elif p < 0.05:
        verdict = f"differs: rank 0 costs {statistics.median(pairs):.2f}x (p = {p:.3f})"
    elif lo > 1 or hi < 1:
        verdict = (f"leaning {'above' if lo > 1 else 'below'} 1.0: the interval excludes it, "
                   f"the sign test does not confirm (p = {p:.3f}); not shown the same")
    elif noise and min(noise) <= lo and hi <= max(noise):
        verdict = "the same within noise (no side favoured, interval inside single-host's spread)"
    else:
        verdict = "not shown either way: the interval reaches outside single-host's own spread"
    print(f"  verdict: {verdict}")
for mode in ("two", "cluster"):
    r = [x for x in rows if x[1] == mode]
    print(f"median {mode}, L0's recorder per event, steady state: main thread "
          f"{statistics.median(int(x[8]) for x in r):.0f} ns, writer "
          f"{statistics.median(int(x[9]) for x in r):.0f} ns, other threads "
          f"{statistics.median(int(x[10]) for x in r):.0f} ns")
judge("per rank, steady state, all threads", lambda x: int(x[7]))
judge("per rank, steady state, the recorder's threads (main + writer)",
      lambda x: int(x[8]) + int(x[9]))
PY
