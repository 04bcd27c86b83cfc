#!/bin/bash
# record -> replay -> record: a fio job recorded on loop A, replayed with --write on loop B
# while B is recorded. The two traces must hold the same I/Os (op, offset, size, order: see
# below for the kernel's own reordering), and
# the replay's issue times must follow the original's within the error the replay reported.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup fio python3
D=$(t_tmpdir) || exit 1
"$BIOTAPE" record --help >/dev/null 2>&1 || skip "biotape record is not available"
t_loop 64
A=$LOOP
t_loop 64
B=$LOOP

# a rate-limited random mix at queue depth 1, so that order and timing are both defined
"$BIOTAPE" record -o "$D/a.btape" -d "$A" -- fio --name=j --filename="$A" --rw=randrw \
	--rwmixread=70 --bs=4k --direct=1 --ioengine=psync --number_ios=3000 --rate_iops=2000 \
	--size=48M --randseed=7 --output=/dev/null >"$D/rec-a.log" 2>&1 ||
	skip "biotape record is not functional here: $(tail -1 "$D/rec-a.log")"
n=$("$BIOTAPE" dump --csv "$D/a.btape" | tail -n +2 | wc -l)
[ "$n" -ge 3000 ] || skip "the recording of A is incomplete ($n events)"

"$BIOTAPE" record -o "$D/b.btape" -d "$B" -- "$BIOTAPE" replay "$D/a.btape" --target "$B" \
	--write --json --no-progress -o "$D/res.btape" >"$D/r.json" 2>"$D/rec-b.log" ||
	fail "record of the replay failed: $(tail -2 "$D/rec-b.log")"
# the recorder prints its own lines on stderr; the JSON is the replay's stdout
"$BIOTAPE" dump --csv "$D/a.btape" >"$D/a.csv" || fail "dump a"
"$BIOTAPE" dump --csv "$D/b.btape" >"$D/b.csv" || fail "dump b"
"$BIOTAPE" dump --csv "$D/res.btape" >"$D/res.csv" || fail "dump result"

python3 - "$D/a.csv" "$D/b.csv" "$D/res.csv" "$D/r.json" <<'PY'
import csv, json, sys
def rows(p):
    with open(p) as f:
        r = list(csv.reader(f))
    # issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,...
    return [(int(x[0]), x[6], int(x[4]), int(x[5])) for x in r[1:] if x and x[6] in ("read", "write")]
a, b, res = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
j = json.load(open(sys.argv[4]))
print(f"A {len(a)} I/Os, B {len(b)}, replay result {len(res)}; replay reported issue error "
      f"p50 {j['issue_error_us']['p50']} us p99 {j['issue_error_us']['p99']} us "
      f"max {j['issue_error_us']['max']} us, late {j['late']}")
# before replaying, biotape probes B for signatures (libblkid reads a few blocks): skip them
lead = next((i for i, x in enumerate(b) if x[1:] == a[0][1:]), None)
assert lead is not None, "B never sees A's first I/O"
assert lead < 200 and all(x[1] == "read" for x in b[:lead]), f"{lead} unexpected I/Os first"
b = b[lead:]
print(f"skipped {lead} probe reads at the start of B")
assert len(a) == len(b), f"A has {len(a)} I/Os, B {len(b)}"
ka = [x[1:] for x in a]
kb = [x[1:] for x in b]
# The replayer submits in the trace's order. Its own result trace says so: the same I/Os in
# A's order, except within a batch (a late replay submits every I/O that is due at once, all
# stamped with one issue time, and their results reach the trace in completion order).
assert len(res) == len(ka), f"the result trace has {len(res)} I/Os, A {len(ka)}"
i = 0
while i < len(res):
    e = i
    while e < len(res) and res[e][0] == res[i][0]:
        e += 1
    assert sorted(x[1:] for x in res[i:e]) == sorted(ka[i:e]), \
        f"the result trace's I/Os #{i}..{e - 1} are not A's"
    i = e
# The kernel may also reorder I/Os that were submitted together (io_uring can hand one of a
# batch to a worker). Allow that, and only that: B holds the same I/Os, and two of them may
# swap only when A scheduled them within the replay's own worst lateness (plus 2 ms for the
# kernel's submission path) of each other.
where = {}
for i, k in enumerate(ka):
    where.setdefault(k, []).append(i)
match = [None] * len(a)  # match[i]: index in B of A's i-th I/O
for ib, k in enumerate(kb):
    if not where.get(k):
        raise SystemExit(f"B's I/O #{ib} {k} is not in A (or is there fewer times)")
    match[where[k].pop(0)] = ib
window = j["issue_error_us"]["max"] * 1e3 + 2e6
suf = [len(b)] * (len(a) + 1)  # suf[k]: the earliest place in B of A's I/Os k and later
for k in range(len(a) - 1, -1, -1):
    suf[k] = min(match[k], suf[k + 1])
far, near = 0, 0
for i in range(len(a)):
    while far < len(a) and a[far][0] - a[i][0] <= window:
        far += 1  # A's I/Os from far on were scheduled more than window after the i-th
    if suf[far] < match[i]:
        raise SystemExit(f"B has an I/O that A scheduled more than {window / 1e6:.2f} ms after "
                         f"A's #{i} before it")
    near += match[i] != i
if near:
    print(f"{near} I/Os at another place in B than in A, none overtaken by one scheduled "
          f"more than {window / 1e6:.2f} ms later")
# issue times relative to the first I/O; a constant offset (submission path) cancels out
d = sorted((b[match[i]][0] - b[0][0]) - (a[i][0] - a[0][0]) for i in range(len(a)))
med = d[len(d) // 2]
dev = sorted(abs(x - med) for x in d)
p50, p99, mx = dev[len(dev) // 2], dev[int(len(dev) * 0.99)], dev[-1]
print(f"B's issue times vs A's (recorded by eBPF): |error| p50 {p50 / 1e3:.1f} us "
      f"p99 {p99 / 1e3:.1f} us max {mx / 1e3:.1f} us")
# within the reported error (its histogram is exact to 1/128: allow 2%), plus the kernel
# submission path the replayer cannot see: 200 us on a shared 2-core machine, and 10% of the
# reported p99 more when the replay was that late (a host that takes the CPU away for
# milliseconds delays the kernel's part as well: 24.0 ms against 22.7 reported, seen here
# with both CPUs overloaded). Checked as a share: at most 2% of I/Os past that bound (the
# replayer says 1% are past its p99; at 3,000 I/Os the p99 is the 30th worst, and under ASan
# the kernel's part of a late burst moved it 3.35 ms against 2.74 reported once in CI)
rep_p99 = j["issue_error_us"]["p99"] * 1e3
bound = rep_p99 * 1.12 + 200e3
past = sum(1 for x in dev if x > bound)
assert past <= 0.02 * len(dev), (f"{past} of {len(dev)} I/Os (p99 {p99} ns) past the reported "
                                 f"p99 {rep_p99} ns + 12% + 200 us")
span_a, span_b = a[-1][0] - a[0][0], b[-1][0] - b[0][0]
assert abs(span_b - span_a) <= 0.01 * span_a + 1e6, (span_a, span_b)
PY
[ $? = 0 ] || fail "traces differ"
pass
