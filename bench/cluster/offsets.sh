#!/usr/bin/env bash
# bench/cluster/offsets.sh: the clock offsets' error under CPU load, two builds alternating.
#   bash bench/cluster/offsets.sh BUILD [BASE_BUILD]     # RUNS=20, LOADS=8
# Runs the cluster layer's test program (tests/common/test_cluster_mpi.c: mpirun -n 3 on this
# host, rank clocks shifted by 0, +3 ms and -7 ms) RUNS times per build, A B A B ..., beside
# LOADS busy loops (stopped at exit). Per build: runs with an estimate more than 50 us off,
# runs with an error beyond the reported uncertainty (on one host the bound is strict), the
# uncertainties' median and max. Root gives the ranks real-time during the exchange.
set -euo pipefail
RUNS=${RUNS:-20}
LOADS=${LOADS:-8}
BUILDS=("$1")
[ $# -gt 1 ] && BUILDS+=("$2")
for b in "${BUILDS[@]}"; do
	[ -x "$b/bin/test_cluster_mpi" ] || { echo "no $b/bin/test_cluster_mpi (BIOTAPE_MPI)" >&2; exit 1; }
done
W=$(mktemp -d /dev/shm/biotape-offsets.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT
# Open MPI's shared-memory files under $W, removed at exit
export OMPI_MCA_btl_vader_backing_directory=$W
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
for ((i = 0; i < LOADS; i++)); do
	sh -c 'while :; do :; done' &
	PIDS+=($!)
done
echo "# $(nproc) CPUs, $LOADS busy loops, $RUNS runs per build, $(date -u +%FT%TZ)"
for ((i = 1; i <= RUNS; i++)); do
	for k in "${!BUILDS[@]}"; do
		p=${BUILDS[$k]}/bin/test_cluster_mpi
		out=$(timeout 120 "${MPIRUN[@]}" -n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=0 "$p" 3 : \
			-n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=3000000 "$p" 3 : \
			-n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=-7000000 "$p" 3 2>&1 || true)
		# "rank R: injected X ms, estimated Y ms +- U us (error E us)"
		grep '^rank [12]: injected' <<<"$out" |
			sed -E "s/.*\+- ([0-9.]+) us \(error ([-+0-9.]+) us\).*/$k \1 \2/" >>"$W/all"
		echo "load $(cut -d' ' -f1 /proc/loadavg)" >>"$W/loads"
	done
done
python3 - "$W/all" "${BUILDS[@]}" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
for k, b in enumerate(sys.argv[2:]):
    v = [(float(u), abs(float(e))) for kk, u, e in rows if int(kk) == k]
    runs = [v[i:i + 2] for i in range(0, len(v), 2)]
    off = sum(any(e > 50 for u, e in r) for r in runs)
    beyond = sum(any(e > u + 0.05 for u, e in r) for r in runs)
    us = sorted(u for u, e in v)
    print(f"{b}: {len(runs)} runs; offset > 50 us off in {off}; error beyond the uncertainty in "
          f"{beyond}; uncertainty median {us[len(us) // 2]:.1f} us, max {us[-1]:.1f} us")
PY
echo "# load: $(sort -t' ' -k2 -n "$W/loads" | sed -n '1p;$p' | awk '{print $2}' | paste -sd-)"
