#!/usr/bin/env bash
# bench/cluster: cluster replay's start skew and the MPI layer's cost, in one run.
#   bash bench/cluster/run.sh [BUILD_DIR] [skew|skew-ab|cost|startup|all]
# skew: 3 ranks (mpirun --oversubscribe on this host), each on its own loop device, STARTS (20)
#   starts each of: biotape cluster replay; a plain MPI_Barrier start (barrier_start.c); fio
#   client/server (three `fio --server` on 127.0.0.1, one `fio --client` with a job per
#   server). The first I/O of each start on each device is stamped by `biotape record`; the
#   spread over the three devices is the start skew: p50 and p99 over the starts. Also the
#   per-rank issue error of the cluster replays against three single-host replays of the same
#   trace run at once (the same CPU contention, no MPI).
# skew-ab: biotape's start skew only, this build against BASE_BUILD (another build directory,
#   e.g. main's), STARTS starts of each alternating A B B A ... in one recording: p50/p99 of the
#   recorder's spread and of each rank's own lateness (first issue - start instant) per build.
# cost: a one-rank replay (--engine null, afap) plain vs under `mpirun -n 1` (the MPI layer:
#   plugin, MPI_Init, clock round trips, watchdog): the replay's own seconds and the process's
#   CPU time, alternating, medians of ROUNDS (5).
# startup: `biotape --version` of BASE (another build, e.g. main's) and of this build, 200 runs
#   each, alternating: median wall time per run.
# Needs root, mpirun, fio, python3, /usr/bin/time. Writes only under /dev/shm; detaches its
# loop devices and stops its fio servers (by pid) at exit.
set -euo pipefail
BUILD=${1:-build}
WHAT=${2:-all}
STARTS=${STARTS:-20}
ROUNDS=${ROUNDS:-5}
BIN=$(cd "$BUILD/bin" && pwd)
BT=$BIN/biotape
GEN=$BIN/gen_trace
BARRIER=$BIN/cluster_barrier_start
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../tests/loop.sh"
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
W=$(mktemp -d /dev/shm/biotape-bench.XXXXXX)
FIO_PIDS=()
cleanup() {
	local p
	for p in "${FIO_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	loop_detach_all
	rm -rf "$W"
}
trap cleanup EXIT
# Open MPI's shared-memory files (vader_segment.*) under $W, removed at exit: a killed job
# leaves none in /dev/shm
mkdir -p "$W/ompi"
export OMPI_MCA_btl_vader_backing_directory=$W/ompi
echo "# bench/cluster on $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(mpirun --version | head -1), $(fio --version), biotape $("$BT" --version | awk '{print $2}')"

# spread FIRST_SECTOR BYTES: reads rec.csv/rec.info; per device the I/Os at FIRST_SECTOR of
# BYTES that open a burst (none on that device in the 20 ms before) are the starts; prints the
# spread of the k-th start over the devices, one line per start, in us
spread() {
	"$BT" dump --csv "$W/rec.btape" >"$W/rec.csv"
	python3 - "$W/rec.csv" "$1" "$2" "$STARTS" <<'PY'
import sys
csv, sector, nbytes, starts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
last, first = {}, {}
for line in open(csv).read().splitlines()[1:]:
    x = line.split(",")
    t, dev, sec, b = int(x[0]), int(x[3]), int(x[4]), int(x[5])
    if sec == sector and b == nbytes and (dev not in last or t - last[dev] > 20000000):
        first.setdefault(dev, []).append(t)
    last[dev] = t
n = {d: len(v) for d, v in first.items()}
assert len(n) == 3 and all(v == starts for v in n.values()), f"starts per device: {n}"
for k in range(starts):
    ts = [first[d][k] for d in first]
    print((max(ts) - min(ts)) / 1e3)
PY
}
pct() { python3 -c 'import sys, statistics as s; v=sorted(float(x) for x in open(sys.argv[1])); import math; q=lambda p: v[max(0, math.ceil(p*len(v))-1)]; print(f"p50 {q(0.5):.1f} us, p99 {q(0.99):.1f} us, max {v[-1]:.1f} us (n={len(v)})")' "$1"; }

# three loop devices (L, $W/dev%r), the recorder's command line (rec) and a 100-read trace
# (5 ms; its first read at sector s0, b0 bytes)
skew_setup() {
	for r in 0 1 2; do
		loop_new 64 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
		ln -s "$LOOP" "$W/dev$r"
		L[$r]=$LOOP
	done
	rec=("$BT" record --layer bio -o "$W/rec.btape" -d "${L[0]}" -d "${L[1]}" -d "${L[2]}" --)
	"$GEN" -o "$W/t.btape" -n 100 -r 20000 -p randread -S $((64 << 20)) -x 5
	read -r s0 b0 < <("$BT" dump --csv "$W/t.btape" | awk -F, 'NR == 2 {print $5, $6}')
}

if [ "$WHAT" = skew-ab ]; then
	[ -n "${BASE_BUILD:-}" ] || { echo "skew-ab: set BASE_BUILD=another/build/dir" >&2; exit 2; }
	BASE_BT=$(cd "$BASE_BUILD/bin" && pwd)/biotape
	skew_setup
	# A B B A ...: each pair's order alternates, so that a drifting load hits both alike
	for i in $(seq "$STARTS"); do
		if [ $((i % 2)) = 1 ]; then echo "$BASE_BT base"; echo "$BT this"; else echo "$BT this"; echo "$BASE_BT base"; fi
	done >"$W/order"
	"${rec[@]}" bash -c 'while read -r exe name; do "$@" "$exe" replay "'"$W"'/t.btape" --target "'"$W"'/dev%r" --json --no-progress </dev/null >>"'"$W"'/ab-$name.json" || exit 1; echo "$name" >>"'"$W"'/ab.names"; sleep 0.3; done <"'"$W"'/order"' \
		x "${MPIRUN[@]}" -n 3 2>"$W/rec.log" || { tail "$W/rec.log"; exit 1; }
	STARTS=$((2 * STARTS)) spread "$s0" "$b0" >"$W/ab.skew"
	paste -d' ' "$W/ab.names" "$W/ab.skew" >"$W/ab"
	for name in base this; do
		awk -v n=$name '$1 == n {print $2}' "$W/ab" >"$W/ab-$name.skew"
		python3 - "$W/ab-$name.json" >"$W/ab-$name.late" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    for r in json.loads(line)["cluster"]["rank"]:
        print(r["first_issue_ns"] / 1e3)
PY
	done
	echo "start skew over 3 ranks, $STARTS starts per build alternating, spread on the devices (biotape record):"
	echo "  base ($BASE_BT): $(pct "$W/ab-base.skew")"
	echo "  this ($BT): $(pct "$W/ab-this.skew")"
	echo "each rank's first issue after the start instant, as biotape reports it:"
	echo "  base: $(pct "$W/ab-base.late")"
	echo "  this: $(pct "$W/ab-this.late")"
fi

if [ "$WHAT" = all ] || [ "$WHAT" = skew ]; then
	skew_setup
	# biotape: STARTS cluster replays of the trace
	"${rec[@]}" bash -c 'for i in $(seq '"$STARTS"'); do "$@" >>"'"$W"'/bt.json" || exit 1; sleep 0.3; done' \
		x "${MPIRUN[@]}" -n 3 "$BT" replay "$W/t.btape" --target "$W/dev%r" --json --no-progress \
		2>"$W/rec.log" || { tail "$W/rec.log"; exit 1; }
	spread "$s0" "$b0" >"$W/bt.skew"
	python3 - "$W/bt.json" >"$W/bt.self" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["cluster"]["start_skew_ns"] / 1e3)
PY
	# the per-rank issue error (p99) of those cluster runs, against single-host runs
	python3 - "$W/bt.json" >"$W/bt.ierr" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    for r in json.loads(line)["cluster"]["rank"]:
        print(r["issue_error_p99_ns"] / 1e3)
PY
	# the same three replays without MPI, started together by the shell
	for i in $(seq "$STARTS"); do
		for r in 0 1 2; do
			"$BT" replay "$W/t.btape" --target "$W/dev$r" --json --no-progress >"$W/s$r.json" &
		done
		wait
		for r in 0 1 2; do
			python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["issue_error_us"]["p99"])' "$W/s$r.json"
		done
	done >"$W/single.ierr"

	# plain MPI_Barrier, then one read
	"${rec[@]}" "${MPIRUN[@]}" -n 3 "$BARRIER" "$W/dev%r" "$STARTS" 300 2>"$W/rec.log" ||
		{ tail "$W/rec.log"; exit 1; }
	# start k reads offset k * 4 KiB: collect each k's spread
	"$BT" dump --csv "$W/rec.btape" | python3 -c '
import sys
by = {}
for line in sys.stdin.read().splitlines()[1:]:
    x = line.split(","); t, sec = int(x[0]), int(x[4])
    if sec % 8 == 0 and sec // 8 < '"$STARTS"': by.setdefault(sec // 8, []).append(t)
for k in sorted(by):
    v = by[k]
    if len(v) == 3: print((max(v) - min(v)) / 1e3)
' >"$W/barrier.skew"

	# fio client/server on loopback: sequential reads from offset 0, 100 I/Os per start
	for r in 0 1 2; do
		fio --server=ip:127.0.0.1,$((8765 + r)) >"$W/fio-server$r.log" 2>&1 &
		FIO_PIDS+=($!)
		printf '[j]\nfilename=%s\nrw=read\nbs=4k\ndirect=1\nioengine=psync\nnumber_ios=100\nsize=1M\n' \
			"${L[$r]}" >"$W/job$r.fio"
	done
	sleep 1
	"${rec[@]}" bash -c 'for i in $(seq '"$STARTS"'); do fio --client=127.0.0.1,8765 "'"$W"'/job0.fio" --client=127.0.0.1,8766 "'"$W"'/job1.fio" --client=127.0.0.1,8767 "'"$W"'/job2.fio" >/dev/null || exit 1; sleep 0.3; done' \
		2>"$W/rec.log" || { tail "$W/rec.log"; exit 1; }
	spread 0 4096 >"$W/fio.skew"

	echo "start skew over 3 ranks, spread of first issues on the devices (biotape record, one host):"
	echo "  biotape cluster replay: $(pct "$W/bt.skew")"
	echo "    (as biotape reports it: $(pct "$W/bt.self"))"
	echo "  MPI_Barrier then read:  $(pct "$W/barrier.skew")"
	echo "  fio client/server:      $(pct "$W/fio.skew")"
	echo "per-rank issue error p99, cluster replay ranks: $(pct "$W/bt.ierr")"
	echo "issue error p99, 3 single-host replays at once:  $(pct "$W/single.ierr")"
	for p in "${FIO_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	FIO_PIDS=()
fi

if [ "$WHAT" = all ] || [ "$WHAT" = cost ]; then
	"$GEN" -o "$W/big.btape" -n 1000000 -r 1000000 -p randread -S $((1 << 30))
	truncate -s 1G "$W/null-target"
	one=(replay "$W/big.btape" --target "$W/null-target" --engine null --timing afap --json --no-progress)
	for r in $(seq "$ROUNDS"); do
		/usr/bin/time -f "%U %S" -o "$W/tp" "$BT" "${one[@]}" >"$W/p.json"
		# --bind-to none: Open MPI binds a lone rank to one core by default, and the replay runs
		# two threads (decoder, issuer): that costs 40% here and is no cost of biotape's layer
		"${MPIRUN[@]}" --bind-to none -n 1 /usr/bin/time -f "%U %S" -o "$W/tm" "$BT" "${one[@]}" >"$W/m.json"
		python3 - "$W/p.json" "$W/m.json" "$W/tp" "$W/tm" <<'PY'
import json, sys
p, m = (json.load(open(f)) for f in sys.argv[1:3])
cp, cm = (sum(map(float, open(f).read().split())) for f in sys.argv[3:5])
print(p["seconds"], m["seconds"], cp, cm)
PY
	done >"$W/cost"
	python3 - "$W/cost" <<'PY'
import statistics as s, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
sp, sm, cp, cm = (s.median(r[i] for r in rows) for i in range(4))
rs = s.median(r[1] / r[0] for r in rows)
rc = s.median(r[3] / r[2] for r in rows)
print(f"one-rank replay, 1M I/Os, null engine, afap; medians of {len(rows)} alternating rounds:")
print(f"  replay seconds: plain {sp:.4f}, mpirun -n 1 {sm:.4f}; ratio {rs:.4f}")
print(f"  process CPU s:  plain {cp:.3f}, mpirun -n 1 {cm:.3f}; ratio {rc:.4f}")
PY
fi

if [ "$WHAT" = all ] || [ "$WHAT" = startup ]; then
	BASE=${BASE:-}
	if [ -z "$BASE" ]; then
		echo "startup: set BASE=/path/to/another/biotape (e.g. main's build) to compare"
	else
		# both copied to /dev/shm: the same filesystem and cache for both
		cp "$BASE" "$W/base" && cp "$BT" "$W/this"
		python3 - "$W/base" "$W/this" <<'PY'
import statistics as s, subprocess, sys, time
a, b = sys.argv[1:3]
ta, tb = [], []
for i in range(200):
    for exe, t in ((a, ta), (b, tb)) if i % 2 == 0 else ((b, tb), (a, ta)):
        t0 = time.perf_counter()
        subprocess.run([exe, "--version"], stdout=subprocess.DEVNULL, check=True)
        t.append(time.perf_counter() - t0)
ma, mb = s.median(ta) * 1e3, s.median(tb) * 1e3
print(f"startup, biotape --version, 200 runs each alternating, median wall: base {ma:.3f} ms, "
      f"this build {mb:.3f} ms, ratio {mb / ma:.3f}")
PY
	fi
fi
