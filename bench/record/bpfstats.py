#!/usr/bin/env python3
"""Per-program run time of one process's BPF programs (bpftool prog show -j on stdin)."""
import json
import sys

pid, ios = int(sys.argv[1]), int(sys.argv[2])
total = 0
for p in json.load(sys.stdin):
    if not any(x.get("pid") == pid for x in p.get("pids", [])) or not p.get("run_cnt"):
        continue
    print(f"  {p['name']:<18} {p['run_time_ns'] / p['run_cnt']:6.0f} ns/call {p['run_cnt']:>9} calls")
    total += p["run_time_ns"]
print(f"  BPF time per I/O: {total / max(ios, 1):.0f} ns ({ios} I/Os)")
