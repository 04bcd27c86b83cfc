#!/usr/bin/env bash
# bench/replay: replayer benchmarks against fio, in one run, alternating A/B, medians.
#   bash bench/replay/run.sh [BUILD_DIR] [ceiling|fidelity|memory|all]
# Needs root (loop devices), fio, python3, /usr/bin/time; biotape record for the fidelity part.
# Environment: ROUNDS (5), CEIL_N, FID_N, MEM_N, MEM_ROUNDS; BIOTAPE=PATH measures that binary;
# RT=N runs both replayers of the
# fidelity part SCHED_FIFO at priority N (biotape --rt-priority N, fio under chrt -f N).
# Writes nothing outside /dev/shm; creates and detaches its own loop devices.
set -euo pipefail
BUILD=${1:-build}
WHAT=${2:-all}
ROUNDS=${ROUNDS:-5}
BIN=$(cd "$BUILD/bin" && pwd)
BT=${BIOTAPE:-$BIN/biotape} # BIOTAPE=/path/to/biotape: measure another build's replayer
GEN=$BIN/gen_trace
CONV=$BIN/replay_btape2iolog
HERE=$(cd "$(dirname "$0")" && pwd)
for t in "$GEN" "$CONV"; do
	[ -x "$t" ] || { echo "missing $t (build with -DBIOTAPE_BENCH=ON)" >&2; exit 1; }
done
. "$HERE/../../tests/loop.sh"
W=$(mktemp -d /dev/shm/biotape-bench.XXXXXX)
cleanup() {
	loop_detach_all
	rm -rf "$W"
}
trap cleanup EXIT
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
jget() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval("j"+sys.argv[2]))' "$@"; }

loop_new 256 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
L=$LOOP
echo "# bench/replay on $(uname -r), $(nproc) CPUs, loop device $L over /dev/shm (direct I/O)"
echo "# $(fio --version), biotape $("$BT" --version | awk '{print $2}'), rounds $ROUNDS"

if [ "$WHAT" = all ] || [ "$WHAT" = ceiling ]; then
	N=${CEIL_N:-400000}
	"$GEN" -o "$W/rr.btape" -n "$N" -r 1000000 -p randread -b 4096 -S $((256 << 20))
	dd if=/dev/zero of="$L" bs=1M count=256 oflag=direct status=none
	bt=() fi=() pr=() cb=() cf=()
	for r in $(seq "$ROUNDS"); do
		# --io_size: without it fio stops at --size (256 MiB: 65,536 I/Os, not N)
		/usr/bin/time -f "%U %S" -o "$W/tf" fio --name=ceil --filename="$L" --rw=randread \
			--bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --number_ios="$N" \
			--io_size=$((N * 4096)) --size=256M --norandommap --randrepeat=0 \
			--output-format=json >"$W/fio.json"
		fi+=("$(jget "$W/fio.json" '["jobs"][0]["read"]["iops"]')")
		fn=$(jget "$W/fio.json" '["jobs"][0]["read"]["total_ios"]')
		if [ "$fn" != "$N" ]; then
			echo "fio did $fn I/Os, not $N: its figures are not comparable" >&2
			exit 1
		fi
		/usr/bin/time -f "%U %S" -o "$W/tb" "$BT" replay "$W/rr.btape" --target "$L" \
			--timing afap --iodepth 32 --json --no-progress >"$W/bt.json"
		bt+=("$(jget "$W/bt.json" '["iops"]')")
		pr+=("$(python3 -c "print(${bt[-1]} / ${fi[-1]})")")
		# CPU (user + sys) of the replaying process per I/O, in us: less noisy than IOPS
		cb+=("$(awk -v n="$N" '{print ($1 + $2) * 1e6 / n}' "$W/tb")")
		cf+=("$(awk -v n="$N" '{print ($1 + $2) * 1e6 / n}' "$W/tf")")
		echo "ceiling round $r: fio ${fi[-1]} IOPS (${cf[-1]} us CPU/IO)," \
			"biotape ${bt[-1]} IOPS (${cb[-1]} us CPU/IO)"
	done
	mb=$(median "${bt[@]}") mf=$(median "${fi[@]}")
	echo "CEILING: 4k randread QD32, $N I/Os: biotape median $mb IOPS, fio median $mf IOPS," \
		"ratio of medians $(python3 -c "print(round($mb / $mf, 3))")," \
		"median of per-round ratios $(median "${pr[@]}")"
	echo "CEILING: CPU per I/O (user+sys of the replayer process): biotape" \
		"$(median "${cb[@]}") us, fio $(median "${cf[@]}") us"
	"$BT" replay "$W/rr.btape" --target "$L" --engine null --timing afap --iodepth 32 --json \
		--no-progress >"$W/null.json"
	echo "CEILING: scheduler alone (null engine): $(jget "$W/null.json" '["iops"]') IOPS"
fi

if [ "$WHAT" = all ] || [ "$WHAT" = fidelity ]; then
	N=${FID_N:-60000}
	"$GEN" -o "$W/p.btape" -n "$N" -r 20000 -a poisson -p randread -b 4096 -S $((256 << 20))
	"$BT" dump --csv "$W/p.btape" >"$W/p.csv"
	"$CONV" "$W/p.btape" "$L" >"$W/p.iolog"
	have_rec=1
	"$BT" record -o "$W/probe.btape" -d "$L" -- true >/dev/null 2>&1 || have_rec=0
	for r in $(seq "$ROUNDS"); do
		for who in biotape fio; do
			if [ $who = biotape ]; then
				cmd=("$BT" replay "$W/p.btape" --target "$L" --json --no-progress)
				if [ -n "${RT:-}" ]; then cmd+=(--rt-priority "$RT"); fi
			else
				cmd=(fio --name=fid --read_iolog="$W/p.iolog" --ioengine=io_uring
					--iodepth=32 --direct=1 --output-format=json)
				# RT=N: fio gets the same real-time priority (all its threads)
				if [ -n "${RT:-}" ]; then cmd=(chrt -f "$RT" "${cmd[@]}"); fi
			fi
			if [ $have_rec = 1 ]; then
				"$BT" record -o "$W/rec.btape" -d "$L" -- "${cmd[@]}" >"$W/$who.json" \
					2>/dev/null
				"$BT" dump --csv "$W/rec.btape" >"$W/rec.csv"
				res=$(python3 "$HERE/fidelity.py" "$W/p.csv" "$W/rec.csv")
			else
				"${cmd[@]}" >"$W/$who.json"
				res='{"p99_us": null}'
			fi
			echo "fidelity round $r $who (recorded): $res"
			if [ $who = biotape ]; then
				echo "fidelity round $r biotape (self-reported): issue error" \
					"$(jget "$W/biotape.json" '["issue_error_us"]'), late" \
					"$(jget "$W/biotape.json" '["late_rate"]')"
			fi
			echo "$res" >>"$W/fid-$who.jsonl"
		done
		# the floor this machine allows right now: the same schedule, no I/O (null engine)
		ncmd=("$BT" replay "$W/p.btape" --target "$L" --engine null --json --no-progress)
		if [ -n "${RT:-}" ]; then ncmd+=(--rt-priority "$RT"); fi
		"${ncmd[@]}" >"$W/null.json"
		echo "fidelity round $r null engine (self-reported): issue error" \
			"$(jget "$W/null.json" '["issue_error_us"]'), late $(jget "$W/null.json" '["late_rate"]')"
		jget "$W/null.json" '["issue_error_us"]["p99"]' >>"$W/fid-null.txt"
		jget "$W/null.json" '["late_rate"]' >>"$W/fid-null-late.txt"
	done
	echo "FIDELITY: null engine (scheduler only, the machine's floor now): median p99" \
		"$(median $(cat "$W/fid-null.txt")) us, median late rate" \
		"$(median $(cat "$W/fid-null-late.txt"))"
	echo "FIDELITY: load average during the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$W/fid-biotape.jsonl" "$W/fid-fio.jsonl" <<'PY'
import json, statistics, sys
b = [json.loads(l) for l in open(sys.argv[1])]
f = [json.loads(l) for l in open(sys.argv[2])]
if b[0]["p99_us"] is None:
    print("FIDELITY: biotape record unavailable: see the self-reported lines")
    raise SystemExit
m = lambda xs, k: statistics.median(x[k] for x in xs)
print(f"FIDELITY: Poisson 20k IOPS, original timing, measured by biotape record on the target:")
for name, xs in (("biotape", b), ("fio read_iolog", f)):
    print(f"  {name:15s} |issue error| p50 {m(xs,'p50_us'):.1f} us  p99 {m(xs,'p99_us'):.1f} us"
          f"  max {m(xs,'max_us'):.1f} us  late(>100us) {100*m(xs,'late_rate'):.2f}%")
print(f"  p99 ratio fio/biotape: {m(f,'p99_us')/m(b,'p99_us'):.1f}x")
PY
fi

if [ "$WHAT" = all ] || [ "$WHAT" = memory ]; then
	for N in ${MEM_N:-1000000 10000000}; do
		"$GEN" -o "$W/m.btape" -n "$N" -r 20000 -p randread -b 4096 -S $((256 << 20))
		"$CONV" "$W/m.btape" "$L" >"$W/m.iolog"
		bt=() fi=()
		for r in $(seq "${MEM_ROUNDS:-2}"); do
			/usr/bin/time -f %M -o "$W/t" "$BT" replay "$W/m.btape" --target "$L" \
				--engine null --timing afap --no-progress >/dev/null
			bt+=("$(cat "$W/t")")
			/usr/bin/time -f %M -o "$W/t" fio --name=mem --read_iolog="$W/m.iolog" \
				--ioengine=null --replay_no_stall=1 --output=/dev/null
			fi+=("$(cat "$W/t")")
		done
		echo "MEMORY: $N events ($(stat -c %s "$W/m.btape") B trace," \
			"$(stat -c %s "$W/m.iolog") B iolog): peak RSS biotape $(median "${bt[@]}") KiB," \
			"fio $(median "${fi[@]}") KiB"
		rm -f "$W/m.btape" "$W/m.iolog"
	done
fi
