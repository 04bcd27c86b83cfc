#!/usr/bin/env python3
"""Does a replay's device time follow its lateness? (issue #20). Per I/O, from CSV dumps
(`biotape dump --csv`) of the recording and of a recording of its replay (roundtrip.sh KEEP=DIR
keeps them).

Each replayed write is matched to the recorded write it replays: the n-th replayed write of a
(sector, size) is the n-th recorded write of it. Its lateness is its block-layer issue minus the
recorded issue, less the 1st percentile of that difference over all writes (the replay's start
offset). A replayed write is "undisturbed" when fewer than 3 replayed writes issued in the
HORIZON (default 2 ms) before it were over 100 us late; else "after late". For each set, the
replayed writes' device time (complete - issue) against the same writes' recorded device time:
if the undisturbed writes match the recording, the replay's tail comes from its late stretches;
if they do not, from how the device serves the replay at all.

Also: of the replayed writes issued within 5 us of the one before (bunched), how far apart the
recording issued the same two, and how late the first of them was.

    python3 bench/replay/ontime.py orig.csv default-r1.csv [HORIZON_MS]
"""
import bisect
import collections
import sys

from devtime import completed, q  # the same rows and percentile as devtime.py (beside it)


def writes(path, comm=None):
    """(issue, complete, sector, bytes) of the completed writes (of comm's processes), sorted."""
    return sorted((int(r["issue_ns"]), int(r["complete_ns"]), int(r["sector"]), int(r["bytes"]))
                  for r in completed(path)
                  if r["op"] == "write" and (not comm or r["comm"].startswith(comm)))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: ontime.py RECORDING.csv REPLAY.csv [HORIZON_MS]")
    horizon = int(float(sys.argv[3]) * 1e6) if len(sys.argv) > 3 else 2_000_000
    rec = writes(sys.argv[1])
    rep = writes(sys.argv[2], "biotape")  # the replayer's own writes, not other programs'
    where = collections.defaultdict(list)
    for i, w in enumerate(rec):
        where[(w[2], w[3])].append(i)
    seen = collections.Counter()
    pairs = []  # (recorded index, replayed write), in replayed issue order
    for w in rep:
        k = (w[2], w[3])
        n = seen[k]
        seen[k] += 1
        if n < len(where[k]):
            pairs.append((where[k][n], w))
    if not pairs:
        sys.exit("ontime.py: no replayed write matches a recorded one")
    off = q([w[0] - rec[i][0] for i, w in pairs], 0.01)
    late = [(w[0] - rec[i][0] - off) / 1e3 for i, w in pairs]
    late_at = [w[0] for (i, w), lt in zip(pairs, late) if lt > 100]
    sets = {"undisturbed": ([], []), "after late": ([], [])}
    for i, w in pairs:
        k = bisect.bisect_left(late_at, w[0]) - bisect.bisect_left(late_at, w[0] - horizon)
        r, o = sets["undisturbed" if k < 3 else "after late"]
        r.append((w[1] - w[0]) / 1e3)
        o.append((rec[i][1] - rec[i][0]) / 1e3)
    print(f"{len(pairs)} of {len(rep)} replayed writes matched ({len(rec)} recorded); lateness"
          f" p50 {q(late, .5):.1f} us, p90 {q(late, .9):.1f}, p99 {q(late, .99):.1f}")
    print(f"device time (us); undisturbed: fewer than 3 writes over 100 us late in the"
          f" {horizon / 1e6:g} ms before")
    for name, (r, o) in sets.items():
        if not r:
            continue
        print(f"  {name:11s} {len(r) / len(pairs):6.1%} of writes: replay p50 {q(r, .5):5.0f}"
              f" p99 {q(r, .99):6.0f} | recorded p50 {q(o, .5):5.0f} p99 {q(o, .99):6.0f}"
              f" | {q(r, .5) / q(o, .5):.2f}x, {q(r, .99) / q(o, .99):.2f}x")
    bunched, first_late, by_gap = 0, [], collections.Counter()
    for (i0, a), (i1, b), la in zip(pairs, pairs[1:], late):
        if b[0] - a[0] >= 5000:
            continue
        bunched += 1
        g = (rec[i1][0] - rec[i0][0]) / 1e3
        by_gap["<5" if g < 5 else "5-20" if g < 20 else "20-100" if g < 100 else ">=100"] += 1
        first_late.append(la)
    if bunched:
        gaps = ", ".join(f"{k} us {v / bunched:.0%}" for k, v in sorted(by_gap.items()))
        print(f"bunched (within 5 us of the write before): {bunched / len(pairs):.1%} of writes;"
              f" recorded gap {gaps}; the first one's lateness p50 {q(first_late, .5):.1f} us,"
              f" p90 {q(first_late, .9):.1f}")


if __name__ == "__main__":
    main()
