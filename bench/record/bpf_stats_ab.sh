#!/bin/bash
# Kernel time per call of the recorder's programs (kernel.bpf_stats_enabled), for two or more
# biotape binaries in alternating rounds: fio 4 KiB randread QD 32 (1 job) on a /dev/shm loop
# device while each binary records it. Prints the median and minimum ns/call per program and
# the fio IOPS per binary, and all programs' kernel time per fio I/O ("ns_per_io": the
# scheduler programs of --waits run for every task's switch and wakeup, not per I/O); bpf_stats
# adds two clock reads per call to every figure.
# Run as root: bench/record/bpf_stats_ab.sh ROUNDS BIN_A BIN_B [BIN...]
# (FIO_ARGS="--iodepth=1 --ioengine=psync": synchronous reads instead, each one a sleep)
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
		# shellcheck disable=SC2086
		fio --name=rr --filename="$LOOP" --rw=randread --bs=4k ${FIO_ARGS:---iodepth=32 --ioengine=io_uring} \
			--direct=1 --norandommap --time_based --runtime=2 \
			--size=1G --output-format=json --output="$W/f.json" >/dev/null
		kill -INT "$pid"
		wait "$pid"
		BENCH_PID=
		sed 's/^biotape: record: //' "$W/rec.err" |
			awk -v b="$b" -v r="$r" '/ns\/call/ { print b, $1, $2, $4, r }' >>"$W/rows"
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["jobs"][0]["read"]; print(sys.argv[2], "IOPS", int(r["iops"]), r["total_ios"], sys.argv[3])' \
			"$W/f.json" "$b" "$r" >>"$W/rows"
	done
done
python3 - "$W/rows" "$@" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
tot = collections.defaultdict(float)  # (binary, round): kernel ns of all programs, then per I/O
for line in open(sys.argv[1]):
    b, p, v, n, r = line.split()
    d[(b, p)].append(float(v))
    if p != "IOPS":
        tot[(b, r)] += float(v) * float(n)
    else:
        tot[(b, r, "ios")] = float(n)
for k, ns in list(tot.items()):
    if len(k) == 2:
        d[(k[0], "ns_per_io")].append(ns / tot[(k[0], k[1], "ios")])
for p in ("btf_io_start", "btf_rq_issue", "btf_rq_complete", "raw_io_start", "raw_rq_issue",
          "raw_rq_complete", "btf_sched_switch", "btf_sched_waking", "ns_per_io", "IOPS"):
    for b in sys.argv[2:]:
        v = d.get((b, p))
        if v:
            print(f"{p:16} {b:40} median {statistics.median(v):9.0f} min {min(v):9.0f}")
PY
