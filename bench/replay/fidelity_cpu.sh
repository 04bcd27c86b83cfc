#!/usr/bin/env bash
# bench/replay/fidelity_cpu.sh: what the fidelity section costs a replay, in CPU (user + sys
# of the whole process, getrusage of the child), two binaries alternating A B B A ...: N
# randread events (gen_trace), --engine null --timing afap --iodepth 32 onto a sparse file
# in /dev/shm (the null engine does no I/O). Prints the median, min and max per binary and
# the ratio of the medians.
#   bash bench/replay/fidelity_cpu.sh A_BIOTAPE B_BIOTAPE [GEN_TRACE]
# Environment: ROUNDS (5 per binary), N (2000000). No root needed.
set -euo pipefail
A=$1
B=$2
GEN=${3:-$(dirname "$B")/gen_trace}
W=$(mktemp -d /dev/shm/biotape-fid-cpu.XXXXXX)
trap 'rm -rf "$W"' EXIT
cp "$A" "$W/a"
cp "$B" "$W/b" # a rebuild during the run does not change the binaries measured
"$GEN" -o "$W/t.btape" -n "${N:-2000000}"
python3 - "$W" "${ROUNDS:-5}" <<'PY'
import resource, statistics, subprocess, sys
w, rounds = sys.argv[1], int(sys.argv[2])
cpu = {"a": [], "b": []}
for r in range(rounds):
    for b in (("a", "b") if r % 2 == 0 else ("b", "a")):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([f"{w}/{b}", "replay", f"{w}/t.btape", "--target", f"{w}/target",
                        "--create", "auto", "--engine", "null", "--timing", "afap",
                        "--iodepth", "32", "--no-progress", "--json"],
                       check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[b].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        load = open("/proc/loadavg").read().split()[0]
        print(f"round {r + 1} {b}: {cpu[b][-1]:.3f} s CPU (load {load})", flush=True)
m = {b: statistics.median(v) for b, v in cpu.items()}
for b in "ab":
    print(f"{b}: median {m[b]:.3f} s CPU (min {min(cpu[b]):.3f}, max {max(cpu[b]):.3f})")
print(f"b / a: {m['b'] / m['a']:.3f}")
PY
