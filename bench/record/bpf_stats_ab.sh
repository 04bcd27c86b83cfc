#!/bin/bash
# Kernel time per call of the recorder's programs (kernel.bpf_stats_enabled), for two or more
# biotape binaries in alternating rounds: fio 4 KiB randread QD 32 (1 job) on a /dev/shm loop
# device while each binary records it. Prints the median and minimum ns/call per program and
# the fio IOPS per binary (bpf_stats adds two clock reads per call to every figure).
# Run as root: bench/record/bpf_stats_ab.sh ROUNDS BIN_A BIN_B [BIN...]
set -eu
ROUNDS=$1
shift
bench_on_exit() { sysctl -qw kernel.bpf_stats_enabled=0; }
. "$(dirname "$0")/lib.sh"
bench_setup biotape-bench-ab
: >"$W/rows"
sysctl -qw kernel.bpf_stats_enabled=1
for r in $(seq "$ROUNDS"); do
	for b in "$@"; do
		"$b" record -v -o "$W/t.btape" -d "$LOOP" 2>"$W/rec.err" &
		pid=$! BENCH_PID=$!
		bench_wait "$pid" "$W/rec.err"
		fio --name=rr --filename="$LOOP" --rw=randread --bs=4k --iodepth=32 \
			--ioengine=io_uring --direct=1 --norandommap --time_based --runtime=2 \
			--size=1G --output-format=json --output="$W/f.json" >/dev/null
		kill -INT "$pid"
		wait "$pid"
		BENCH_PID=
		sed 's/^biotape: record: //' "$W/rec.err" |
			awk -v b="$b" '/ns\/call/ { print b, $1, $2 }' >>"$W/rows"
		python3 -c 'import json,sys; print(sys.argv[2], "IOPS", int(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"]))' \
			"$W/f.json" "$b" >>"$W/rows"
	done
done
python3 - "$W/rows" "$@" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    b, p, v = line.split()
    d[(b, p)].append(float(v))
for p in ("btf_io_start", "btf_rq_issue", "btf_rq_complete", "raw_io_start", "raw_rq_issue",
          "raw_rq_complete", "IOPS"):
    for b in sys.argv[2:]:
        v = d.get((b, p))
        if v:
            print(f"{p:16} {b:40} median {statistics.median(v):9.0f} min {min(v):9.0f}")
PY
