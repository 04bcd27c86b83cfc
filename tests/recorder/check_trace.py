#!/usr/bin/env python3
"""Checks a `biotape dump --csv` of a recording against expectations given as options."""
import argparse
import csv
import re
import sys

p = argparse.ArgumentParser()
p.add_argument("csv")
p.add_argument("--comm", help="select the processes that have a thread named COMM")
p.add_argument("--pid", type=int)
p.add_argument("--only-pid", type=int, help="every event has this pid")
p.add_argument("--expect", action="append", default=[], help="OP=N: events of OP by the filtered process")
p.add_argument("--expect-min", action="append", default=[], help="OP=N: at least N")
p.add_argument("--expect-max", action="append", default=[], help="OP=N: at most N")
p.add_argument("--sizes", help="comma list of allowed sizes for read/write")
p.add_argument("--dev-bytes", type=int, help="device size: every I/O inside")
p.add_argument("--wall-ns", type=int, help="latencies must be below this")
p.add_argument("--seq-min", type=float, help="share of reads/writes that continue the previous one")
p.add_argument("--attributed", action="append", default=[], help="OP: every event of OP has --comm")
p.add_argument("--no-insert-ok", action="store_true")
p.add_argument("--qd-max", type=int, help="no queue depth above this (the job's iodepth)")
p.add_argument("--qd-exact", action="store_true",
               help="every queue depth is the count of the device's requests issued before it "
               "and not yet completed, plus one, as computed here from the trace's own times "
               "(the recorder derives it so without a task filter)")
p.add_argument("--summary", help="the recorder's stderr: events without a completion time are "
               "allowed when, and only as many as, its summary says (a kernel can skip a "
               "program; recorder/README.md)")
a = p.parse_args()

rows = list(csv.DictReader(open(a.csv)))
errors = []
no_complete_ok = 0
if a.summary:
    for line in open(a.summary):
        m = re.match(r"biotape: (\d+) events? ha(?:s|ve) no completion time", line)
        if m:
            no_complete_ok = int(m.group(1))
    n = sum(1 for r in rows if not r["complete_ns"])
    if n != no_complete_ok:
        errors.append(f"{n} events without a completion time, the summary says {no_complete_ok}")
    elif n:
        print(f"{n} events without a completion time, as the summary says")
mine = []
# A process's I/O may come from helper threads (io_uring's iou-wrk-<pid>): select by pid.
comm_pids = set(r["pid"] for r in rows if r["comm"] == a.comm)
for r in rows:
    if a.comm and r["pid"] not in comm_pids:
        continue
    if a.pid and r["pid"] != str(a.pid):
        continue
    mine.append(r)
if a.only_pid is not None:
    bad = [r for r in rows if r["pid"] != str(a.only_pid)]
    if bad:
        errors.append(f"{len(bad)} events not from pid {a.only_pid}, e.g. {bad[0]}")

count = {}
for r in mine:
    count[r["op"]] = count.get(r["op"], 0) + 1


def spec(lst):
    for s in lst:
        op, n = s.split("=")
        yield op, int(n)


for op, n in spec(a.expect):
    if count.get(op, 0) != n:
        errors.append(f"{op}: recorded {count.get(op, 0)}, expected {n}")
for op, n in spec(a.expect_min):
    if count.get(op, 0) < n:
        errors.append(f"{op}: recorded {count.get(op, 0)}, expected at least {n}")
for op, n in spec(a.expect_max):
    if count.get(op, 0) > n:
        errors.append(f"{op}: recorded {count.get(op, 0)}, expected at most {n}")

sizes = set(int(s) for s in a.sizes.split(",")) if a.sizes else None
prev_issue = 0
seq = total_rw = 0
last_end = {}
for r in mine:
    issue = int(r["issue_ns"])
    if issue < prev_issue:
        errors.append(f"not in issue order at {r}")
        break
    prev_issue = issue
    if not r["complete_ns"]:
        if not no_complete_ok:
            errors.append(f"no completion time: {r}")
            break
        continue
    lat = int(r["complete_ns"]) - issue
    if lat <= 0 or (a.wall_ns and lat >= a.wall_ns):
        errors.append(f"latency {lat} ns out of range: {r}")
        break
    if r["insert_ns"] and int(r["insert_ns"]) > issue:
        errors.append(f"insert after issue: {r}")
        break
    if not r["insert_ns"] and not a.no_insert_ok and r["op"] in ("read", "write"):
        errors.append(f"no insert time: {r}")
        break
    if r["op"] in ("read", "write"):
        b, s = int(r["bytes"]), int(r["sector"])
        if sizes and b not in sizes:
            errors.append(f"size {b} not in {sorted(sizes)}: {r}")
            break
        if a.dev_bytes and s * 512 + b > a.dev_bytes:
            errors.append(f"beyond the device: {r}")
            break
        if not r["qd"] or int(r["qd"]) < 1:
            errors.append(f"bad queue depth: {r}")
            break
        key = r["op"]
        total_rw += 1
        if last_end.get(key) == s:
            seq += 1
        last_end[key] = s + b // 512
for op in a.attributed:
    bad = [r for r in rows if r["op"] == op and r["pid"] not in comm_pids]
    if bad:
        errors.append(f"{len(bad)} {op} events not attributed to {a.comm}: {bad[0]}")
if a.qd_max is not None:
    over = [r for r in rows if r["qd"] and int(r["qd"]) > a.qd_max]
    if over:
        errors.append(f"{len(over)} events with a queue depth above {a.qd_max}: {over[0]}")
if a.qd_exact:
    in_flight = {}  # device -> completion times of the requests issued so far
    wrong = 0
    for r in rows:  # the file's order: issue order
        issue = int(r["issue_ns"])
        done = [c for c in in_flight.get(r["dev"], []) if c > issue]
        want = len(done) + 1
        if r["complete_ns"] and int(r["complete_ns"]) > issue:
            done.append(int(r["complete_ns"]))
        in_flight[r["dev"]] = done
        if not r["qd"] or int(r["qd"]) != want:
            if not wrong:
                errors.append(f"queue depth {r['qd']}, expected {want}: {r}")
            wrong += 1
    if wrong:
        errors.append(f"{wrong} events with another queue depth")
    depths = [int(r["qd"]) for r in rows if r["qd"]]
    if depths:
        print(f"queue depth: max {max(depths)}, mean {sum(depths) / len(depths):.2f}")
if a.seq_min is not None:
    share = seq / total_rw if total_rw else 0
    if share < a.seq_min:
        errors.append(f"sequential share {share:.3f} < {a.seq_min}")
    print(f"sequential share {share:.3f} of {total_rw}")

print(f"{len(rows)} events, {len(mine)} selected: {count}")
for e in errors:
    print("ERROR:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
