#!/usr/bin/env python3
"""Where a replay's device times part from the recording's (issue #20): per-request, from CSV
dumps (`biotape dump --csv`) of the recording and of recordings of its replays (roundtrip.sh
KEEP=DIR keeps them).

For each trace, the writes' device time (complete - issue, at the block layer) is split by the
device queue depth each write found when it was issued: the writes issued and not completed at
that instant, counted from the trace itself (every op). If a replay's writes see the same times
as the recording's at the same depth, but find other depths, the replay issues in another
pattern (bursts, depth); if they see other times at the same depth, the device itself (its
workers' CPU) serves them differently.

Also per trace: how bunched the issues are (the share of writes issued within 5 us of the one
before) and the insert -> issue wait (time in the block layer's queue before dispatch).

    python3 bench/replay/devtime.py orig.csv again-r1.csv default-r1.csv ...
"""
import csv
import sys

BUCKETS = [(1, 1), (2, 4), (5, 8), (9, 16), (17, 32), (33, 64), (65, 1 << 30)]


def completed(path):
    """The CSV dump's rows that were issued and completed (ontime.py reads them too)."""
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["issue_ns"] and r["complete_ns"]:
                yield r


def load(path):
    return sorted((int(r["issue_ns"]), int(r["complete_ns"]), r["op"],
                   int(r["insert_ns"]) if r["insert_ns"] else None) for r in completed(path))


def q(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def analyse(ios):
    """Rows per depth bucket: (share of writes, p50 us, p99 us); and overall figures."""
    import heapq
    done = []  # completion times of the I/Os in flight
    per = {b: [] for b in BUCKETS}
    allw, gaps, waits = [], [], []
    prev_issue = None
    for issue, comp, op, ins in ios:
        while done and done[0] <= issue:
            heapq.heappop(done)
        depth = len(done) + 1  # this one included
        if op == "write":
            dt = (comp - issue) / 1e3
            allw.append(dt)
            for b in BUCKETS:
                if b[0] <= depth <= b[1]:
                    per[b].append(dt)
                    break
            if prev_issue is not None:
                gaps.append(issue - prev_issue)
            if ins is not None and issue >= ins:
                waits.append((issue - ins) / 1e3)
        prev_issue = issue
        heapq.heappush(done, comp)
    n = len(allw) or 1
    rows = {b: (len(v) / n, q(v, 0.5), q(v, 0.99)) for b, v in per.items()}
    bunched = sum(1 for g in gaps if g < 5000) / (len(gaps) or 1)
    return rows, {"writes": len(allw), "p50": q(allw, 0.5), "p99": q(allw, 0.99),
                  "bunched": bunched, "wait_p50": q(waits, 0.5), "wait_p99": q(waits, 0.99)}


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: devtime.py RECORDING.csv REPLAY.csv...")
    res = [(p.rsplit("/", 1)[-1], *analyse(load(p))) for p in sys.argv[1:]]
    print("writes' device time (us) by the device queue depth they found at issue;"
          " share of writes, p50, p99")
    head = f"{'depth':>9s}" + "".join(f" | {n[:22]:>22s}" for n, _, _ in res)
    print(head)
    for b in BUCKETS:
        lab = f"{b[0]}" if b[0] == b[1] else f"{b[0]}-{b[1] if b[1] < 1 << 20 else ''}"
        cells = "".join(f" | {100 * r[b][0]:5.1f}% {r[b][1]:6.0f} {r[b][2]:7.0f}"
                        for _, r, _ in res)
        print(f"{lab:>9s}{cells}")
    for k, fmt in (("writes", "{:.0f}"), ("p50", "{:.0f}"), ("p99", "{:.0f}"),
                   ("bunched", "{:.1%}"), ("wait_p50", "{:.1f}"), ("wait_p99", "{:.1f}")):
        print(f"{k:>9s}" + "".join(f" | {fmt.format(o[k]):>22s}" for _, _, o in res))


if __name__ == "__main__":
    main()
