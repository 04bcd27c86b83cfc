#!/usr/bin/env python3
"""Issue-time fidelity of a replay, from a recording of it.

usage: fidelity.py TRACE.csv RECORDED.csv [SPEED]   (both from `biotape dump --csv`)

Each recorded I/O is matched to the trace I/O with the same (op, sector, bytes), first come
first served, so reordering between close I/Os does not count as error. The error of an I/O
is (recorded issue - first recorded issue) - (trace issue - first trace issue) / SPEED (the
replay's --speed, 1 by default), shifted so that
its 1st percentile is 0 (a constant submission-path offset is not an error). Prints one JSON
line: matched, unmatched, p50/p99/max of |error| in us, and the late rate (error > 100 us).
"""
import csv
import json
import sys
from collections import defaultdict, deque


def rows(path):
    with open(path) as f:
        r = csv.reader(f)
        next(r)
        for x in r:
            if x and x[6] in ("read", "write", "discard"):
                yield int(x[0]), (x[6], int(x[4]), int(x[5]))


def main():
    trace = list(rows(sys.argv[1]))
    rec = list(rows(sys.argv[2]))
    speed = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    t0 = trace[0][0]
    want = defaultdict(deque)
    for t, k in trace:
        want[k].append((t - t0) / speed)
    raw = []
    unmatched = 0
    r0 = None
    for t, k in rec:
        q = want.get(k)
        if not q:
            unmatched += 1      # e.g. the replayer's own signature probe
            continue
        if r0 is None:
            r0 = t
        raw.append((t - r0) - q.popleft())
    raw.sort()
    off = raw[int(len(raw) * 0.01)]
    err = sorted(abs(x - off) for x in raw)
    late = sum(1 for x in raw if x - off > 100000)
    n = len(err)
    print(json.dumps({
        "matched": n, "unmatched": unmatched, "trace": len(trace),
        "p50_us": err[n // 2] / 1e3, "p99_us": err[int(n * 0.99)] / 1e3,
        "max_us": err[-1] / 1e3, "late_rate": late / n,
    }))


main()
