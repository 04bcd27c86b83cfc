#!/usr/bin/env python3
# bench/replay/tail_share.py: the device-time tail of sets of recordings, pooled over runs (the
# p99 question of #21; docs/BENCHMARKS.md, "Replay order against the application's own run").
# On an IOPS-capped device the throttle delays ~1% of I/Os by milliseconds, so p99 is either a
# plain I/O or a throttle wait from one run to the next; the share of I/Os above a few
# thresholds, pooled over the rounds, is what moves with the replay and not with that.
#   python3 bench/replay/tail_share.py BIOTAPE 'KEEP/fio-fast-?.btape' 'KEEP/fio-faster-causal-?.btape' ...
# (each argument a glob: one group; KEEP= of deps.sh keeps the recordings and the replays)
import csv, glob, subprocess, sys

def device_times(bt, path):
    out = subprocess.run([bt, "dump", "--csv", path], capture_output=True, text=True,
                         check=True).stdout
    return [int(r["complete_ns"]) - int(r["issue_ns"])
            for r in csv.DictReader(out.splitlines()) if r["complete_ns"]]

if len(sys.argv) < 3:
    sys.exit("usage: tail_share.py BIOTAPE GLOB...")
bt = sys.argv[1]
for g in sys.argv[2:]:
    files = sorted(glob.glob(g))
    if not files:
        sys.exit(f"tail_share.py: {g}: no such recordings")
    pooled, per_run = [], []
    for f in files:
        d = sorted(device_times(bt, f))
        pooled += d
        per_run.append(d[int(0.99 * len(d))] / 1e3)
    pooled.sort()
    n = len(pooled)
    share = lambda t: 100 * sum(1 for v in pooled if v > t) / n
    print(f"{g}: {len(files)} runs, {n} I/Os; over 0.25 ms {share(250e3):.2f}%, 0.5 ms "
          f"{share(500e3):.2f}%, 1 ms {share(1e6):.2f}%, 5 ms {share(5e6):.2f}%; pooled p99 "
          f"{pooled[int(0.99 * n)] / 1e3:.0f} us, per run {sorted(round(p) for p in per_run)}")
