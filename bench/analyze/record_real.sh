#!/bin/bash
# A real recording for the analyzer benchmark: `biotape record` of fio on a loop device (1 GiB
# over a file in /dev/shm, direct I/O: bench/record/lib.sh): 70% random reads, 4k/8k/16k/64k =
# 60/20/10/10%, two jobs at QD 16, until N events (default 10 M). Unlike gen_trace -p mixed it has
# every field the recorder writes (queue depth, tid, cpu, cgroup, flags) and the compression
# of real times; its exact working set (256 Ki blocks) is never sampled. Needs root and eBPF.
#   usage: bench/analyze/record_real.sh BUILD_DIR OUT.btape [N]
#   then:  TRACES=OUT.btape bench/analyze/run.sh BUILD_DIR
set -eu
BUILD=${1:?usage: record_real.sh BUILD_DIR OUT.btape [N]}
OUT=${2:?usage: record_real.sh BUILD_DIR OUT.btape [N]}
N=${3:-10000000}
command -v fio >/dev/null || { echo "needs fio" >&2; exit 1; }
. "$(dirname "$0")/../record/lib.sh"
bench_setup biotape-bench-an-rec
# runtime is a bound, not the stop: --max-events ends the recording and fio with it
"$BUILD/bin/biotape" record -o "$OUT" -d "$LOOP" --max-events "$N" -- \
	fio --name=real --filename="$LOOP" --rw=randrw --rwmixread=70 \
	--bssplit=4k/60:8k/20:16k/10:64k/10 --iodepth=16 --numjobs=2 --ioengine=io_uring \
	--direct=1 --time_based --runtime=3600 --size=1G --norandommap --group_reporting \
	--output-format=terse >/dev/null
"$BUILD/bin/biotape" info "$OUT" | sed -n '/^events:/p;/^lost:/p'
