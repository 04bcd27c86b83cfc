#!/bin/bash
# biotape replay on file targets (no root needed): usage errors, refusals, fit rules, JSON,
# result traces, sweep + HTML, SIGINT.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
command -v python3 >/dev/null || skip "needs python3"
D=$(t_tmpdir) || exit 1

# --help: usage with an example on stdout, exit 0
out=$("$BIOTAPE" replay --help) || fail "--help exit $?"
grep -q "usage: biotape replay" <<<"$out" || fail "--help: no usage"
grep -q "example" <<<"$out" || fail "--help: no example"

# bad usage: exit 2, one line on stderr naming the problem, nothing created
expect_usage() {
	local err rc
	err=$("$BIOTAPE" replay "$@" 2>&1 >/dev/null); rc=$?
	[ $rc = 2 ] || fail "replay $*: exit $rc, want 2 ($err)"
	[ "$(wc -l <<<"$err")" = 1 ] || fail "replay $*: want one line, got: $err"
	grep -q "^biotape: " <<<"$err" || fail "replay $*: message format: $err"
}
"$GEN" -o "$D/r.btape" -n 2000 -r 20000 -S $((8 << 20)) || fail "gen"
"$GEN" -o "$D/w.btape" -n 500 -r 20000 -p mix:50 -S $((8 << 20)) || fail "gen"
expect_usage
expect_usage "$D/r.btape"
expect_usage "$D/r.btape" --target "$D/t" --timing bogus
expect_usage "$D/r.btape" --target "$D/t" --iodepth 0
expect_usage "$D/r.btape" --target "$D/t" --map 0="$D/t"
expect_usage "$D/r.btape" --target "$D/t" --bogus
expect_usage "$D/r.btape" --target "$D/t" --payload compressible:x
expect_usage "$D/r.btape" --target "$D/t" --write --writes-as-reads
expect_usage "$D/r.btape" --map 5="$D/t"
expect_usage "$D/r.btape" --map nosuchdev="$D/t"
[ ! -e "$D/t" ] || fail "a refused replay created the target"
echo "garbage" >"$D/bad.btape"
expect_usage "$D/bad.btape" --target "$D/t"

# a trace damaged in the middle: the replay stops with one line naming the frame, exit 2, no
# hang (it once waited for ever for I/Os prepared in a batch that was never submitted), and
# no result trace that looks valid
"$GEN" -o "$D/big.btape" -n 200000 -r 200000 -S $((8 << 20)) || fail "gen"
python3 - "$D/big.btape" <<'PY' || fail "damage"
import os, sys
n = os.path.getsize(sys.argv[1])
with open(sys.argv[1], "r+b") as f:
    f.seek(n // 2)
    b = f.read(1)
    f.seek(n // 2)
    f.write(bytes([b[0] ^ 0xff]))
PY
truncate -s 8M "$D/dmg"
rc=0
err=$(timeout -s KILL 120 "$BIOTAPE" replay "$D/big.btape" --target "$D/dmg" --buffered \
	--timing afap --no-progress -o "$D/dmg-res.btape" 2>&1 >/dev/null) || rc=$?
[ $rc = 2 ] || fail "damaged trace: exit $rc, want 2 ($err)"
grep -q "checksum" <<<"$err" || fail "damaged trace: message does not name the damage: $err"
[ ! -e "$D/dmg-res.btape" ] || fail "damaged trace: a result trace was left behind"
ls "$D" | grep -q "dmg-res.btape.tmp" && fail "damaged trace: a temporary result file was left"

# a trace with writes is refused without --write / --writes-as-reads, and nothing is touched
printf 'keep' >"$D/keep"
truncate -s 8M "$D/keep"
expect_usage "$D/w.btape" --target "$D/keep" --buffered
[ "$(head -c 4 "$D/keep")" = keep ] || fail "refused replay touched the target"
"$BIOTAPE" replay "$D/w.btape" --target "$D/keep" --buffered --writes-as-reads --json \
	--no-progress >"$D/war.json" || fail "writes-as-reads replay failed"
[ "$(head -c 4 "$D/keep")" = keep ] || fail "--writes-as-reads wrote to the target"
python3 - "$D/war.json" <<'PY' || fail "writes-as-reads JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ops"]["read"]["ios"] == 500, j
assert "write" not in j["ops"], j
PY

# a missing target is an error (a mistyped device name must not become a file), even for a
# read-only replay: one line naming --create, exit 1, nothing created
err=$("$BIOTAPE" replay "$D/r.btape" --target "$D/new" --buffered --no-progress 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] || fail "missing target: exit $rc, want 1 ($err)"
[ "$(wc -l <<<"$err")" = 1 ] || fail "missing target: not one line: $err"
grep -q "does not exist.*--create" <<<"$err" || fail "missing target: message: $err"
[ ! -e "$D/new" ] || fail "a missing target was created without --create"
expect_usage "$D/r.btape" --target "$D/new" --create bogus
expect_usage "$D/r.btape" --target "$D/new" --create 0
[ ! -e "$D/new" ] || fail "a refused --create made the target"
# a file --create made goes again when the run is then refused before its first I/O (--fit
# error: the trace spans 8 MiB, the file is 1 MiB); a file that was there stays
expect_usage "$D/r.btape" --target "$D/small" --create 1M --buffered --engine null
[ ! -e "$D/small" ] || fail "a replay refused by --fit error left the file --create made"
truncate -s 1M "$D/small1"
expect_usage "$D/r.btape" --target "$D/small1" --create 1M --buffered --engine null
[ -e "$D/small1" ] || fail "a refused replay removed a file it did not create"
# --create SIZE makes it that big; an existing target is used as it is
"$BIOTAPE" replay "$D/r.btape" --target "$D/new16" --create 16M --buffered --no-progress \
	--engine null >"$D/c.txt" || fail "--create 16M failed"
[ "$(stat -c %s "$D/new16")" = $((16 << 20)) ] || fail "--create 16M: wrong size"
grep -q "target $D/new16 is a regular file (created by --create" "$D/c.txt" ||
	fail "summary does not say the target is a created file: $(cat "$D/c.txt")"
"$BIOTAPE" replay "$D/r.btape" --target "$D/new16" --create 1G --buffered --no-progress \
	--engine null >"$D/c.txt" || fail "--create on an existing target failed"
[ "$(stat -c %s "$D/new16")" = $((16 << 20)) ] || fail "--create resized an existing target"
grep -q "target $D/new16 is a regular file (16.0 MiB)" "$D/c.txt" ||
	fail "summary does not say the target is a file: $(cat "$D/c.txt")"
# --create auto: the recorded device's size; the null engine replays every I/O and reports them
"$BIOTAPE" replay "$D/r.btape" --target "$D/new" --create auto --buffered --json --no-progress \
	-o "$D/res.btape" >"$D/r.json" || fail "replay onto a new file failed"
[ "$(stat -c %s "$D/new")" = $((8 << 20)) ] || fail "created target has the wrong size"
python3 - "$D/r.json" <<'PY' || fail "JSON summary"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["target_kinds"] == ["created file"], j["target_kinds"]
assert j["ios"] == 2000, j["ios"]
r = j["ops"]["read"]
assert r["ios"] == 2000
for k in ("p50", "p90", "p99", "p99.9", "max"):
    assert r["lat_us"][k] >= 0
assert r["lat_us"]["p50"] <= r["lat_us"]["p99"] <= r["lat_us"]["max"]
assert j["issue_error_us"]["p50"] <= j["issue_error_us"]["max"]
assert 0 <= j["late_rate"] <= 1
assert j["skipped"]["total"] == 0 and j["errors"] == 0
# a 2000-I/O trace at 20k IOPS lasts ~0.1 s: the replay respects it
assert 0.05 < j["seconds"] < 2, j["seconds"]
PY
# the result trace holds every replayed I/O with its new times, in the same format
"$BIOTAPE" dump --csv "$D/res.btape" >"$D/res.csv" || fail "dump of the result trace"
"$BIOTAPE" dump --csv "$D/r.btape" >"$D/orig.csv" || fail "dump of the trace"
python3 - "$D/orig.csv" "$D/res.csv" <<'PY' || fail "result trace content"
import csv, sys
def rows(p):
    with open(p) as f:
        r = list(csv.reader(f))
    return [x for x in r[1:] if x]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert len(a) == len(b) == 2000, (len(a), len(b))
# same ops, sectors and sizes (same target size, 512-byte alignment), same order
assert [(x[4], x[5], x[6]) for x in a] == [(x[4], x[5], x[6]) for x in b]
for x in b:
    assert int(x[1]) >= int(x[0])   # complete >= issue
    assert x[14] != ""              # qd present
PY
"$BIOTAPE" info "$D/res.btape" | grep -q "replay" || fail "result trace metadata: source"

# --fit: a target smaller than the trace's span
truncate -s 1M "$D/small"
err=$("$BIOTAPE" replay "$D/r.btape" --target "$D/small" --buffered 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "--fit error: exit $rc"
grep -q "I/O #[0-9]* " <<<"$err" || fail "--fit error does not name the I/O: $err"
for fit in wrap scale; do
	"$BIOTAPE" replay "$D/r.btape" --target "$D/small" --buffered --fit $fit --json \
		--no-progress -o "$D/fit-$fit.btape" >"$D/fit.json" || fail "--fit $fit failed"
	"$BIOTAPE" dump --csv "$D/fit-$fit.btape" | python3 -c '
import csv, sys
r = [x for x in csv.reader(sys.stdin)][1:]
assert len(r) == 2000
assert all(int(x[4]) * 512 + int(x[5]) <= 1 << 20 for x in r), "past the end"
' || fail "--fit $fit: I/O past the end"
done

# --scale shard: copies in their own regions; needs room for 4 copies
truncate -s 32M "$D/big"
"$BIOTAPE" replay "$D/r.btape" --target "$D/big" --buffered --timing afap --scale 4 --json \
	--no-progress -o "$D/s4.btape" >"$D/s4.json" || fail "--scale 4"
"$BIOTAPE" dump --csv "$D/s4.btape" | python3 -c '
import csv, sys
r = [x for x in csv.reader(sys.stdin)][1:]
assert len(r) == 8000, len(r)
reg = [0] * 4
for x in r:
    reg[int(x[4]) * 512 // (8 << 20)] += 1
assert reg == [2000] * 4, reg
' || fail "--scale 4 shard layout"

# --sweep with HTML (null engine: fast)
"$BIOTAPE" replay "$D/r.btape" --target "$D/big" --engine null --timing afap --sweep 1,2,4 \
	--html "$D/sweep.html" --json >"$D/sw.json" || fail "--sweep"
python3 - "$D/sw.json" <<'PY' || fail "sweep JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert [s["scale"] for s in j["sweep"]] == [1, 2, 4]
assert all(s["ios"] == 2000 * s["scale"] for s in j["sweep"]), j["sweep"]
PY
grep -q "<svg" "$D/sweep.html" || fail "HTML has no inline SVG"
grep -qi "<script src\|<link" "$D/sweep.html" && fail "HTML is not self-contained"
# --html -: the page alone on standard output, the summary on standard error; not with --json
"$BIOTAPE" replay "$D/r.btape" --target "$D/big" --engine null --timing afap --html - \
	>"$D/page.html" 2>"$D/page.err" || fail "--html -: $(cat "$D/page.err")"
[ "$(head -c 15 "$D/page.html")" = "<!DOCTYPE html>" ] || fail "--html -: not a page: $(head -2 "$D/page.html")"
grep -q "I/Os" "$D/page.err" || fail "--html -: no summary on stderr: $(cat "$D/page.err")"
expect_usage "$D/r.btape" --target "$D/big" --engine null --html - --json

# wait_stopped PID: until PID is stopped (BIOTAPE_TEST_STOP_BEFORE_IO), at most 30 s
wait_stopped() {
	for _ in $(seq 3000); do
		[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ] && return 0
		sleep 0.01
	done
	return 1
}

# SIGINT: a long replay stops cleanly, still prints its summary and writes its result trace
"$GEN" -o "$D/long.btape" -n 200000 -r 20000 -S $((8 << 20)) || fail "gen long"
# (the test hook stops it just before its first I/O: a signal before that ends it otherwise,
# and under load 1.5 s after the start was sometimes before)
BIOTAPE_TEST_STOP_BEFORE_IO=1 "$BIOTAPE" replay "$D/long.btape" --target "$D/big" --buffered \
	--json --no-progress -o "$D/int.btape" >"$D/int.json" &
pid=$!
T_PIDS+=("$pid")
wait_stopped $pid || fail "the long replay did not reach its first I/O"
kill -CONT $pid
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
[ $rc = 0 ] || fail "interrupted replay exit $rc"
python3 - "$D/int.json" <<'PY' || fail "interrupted summary"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["interrupted"] is True
assert 0 < j["ios"] < 200000, j["ios"]
PY
"$BIOTAPE" info "$D/int.btape" >"$D/int.info" || fail "result trace of an interrupted replay"
grep -q "^stopped: *early: the run that wrote it was interrupted" "$D/int.info" ||
	fail "the result trace of an interrupted replay does not say so: $(cat "$D/int.info")"
for f in int:true s4:false; do
	"$BIOTAPE" info --json "$D/${f%%:*}.btape" | python3 -c '
import json, sys
assert json.load(sys.stdin)["integrity"]["interrupted"] is (sys.argv[1] == "true")' "${f#*:}" ||
		fail "info --json: ${f%%:*}.btape interrupted is not ${f#*:}"
done

# A trace whose recorder lost events: the replay says its load is lower than recorded.
"$GEN" -o "$D/lossy.btape" -n 200 -r 20000 -S $((8 << 20)) -X 7 || fail "gen lossy"
truncate -s 8M "$D/lossy.img"
"$BIOTAPE" replay "$D/lossy.btape" --target "$D/lossy.img" --no-progress >/dev/null 2>"$D/err" ||
	fail "replay of a lossy trace: $(cat "$D/err")"
grep -q "^biotape: replay: the recorder lost 7 events of .*lossy.btape: their I/Os are not in it" "$D/err" ||
	fail "no line on the recorder's loss: $(cat "$D/err")"
"$BIOTAPE" replay "$D/r.btape" --target "$D/lossy.img" --no-progress >/dev/null 2>"$D/err" ||
	fail "replay: $(cat "$D/err")"
grep -q "recorder lost" "$D/err" && fail "a loss line for a trace that lost nothing"

# --iodepth recorded: the cap is the most I/Os the recording had in flight at once, counted
# here from the dump's issue and completion times; a slower target (null engine, 2 ms for what
# took 50 us) fills it, and never more are out
"$GEN" -o "$D/q.btape" -n 3000 -r 100000 -p mix:70 -S $((8 << 20)) || fail "gen q"
"$BIOTAPE" dump --csv "$D/q.btape" >"$D/q.csv" || fail "dump q"
want=$(python3 - "$D/q.csv" <<'PY'
import heapq, sys
out, most = [], 0
for line in open(sys.argv[1]).read().splitlines()[1:]:
    x = line.split(",")
    issue = int(x[0])
    while out and out[0] <= issue:
        heapq.heappop(out)
    heapq.heappush(out, int(x[1]))
    most = max(most, len(out))
print(most)
PY
) || fail "count q"
[ "$want" -ge 4 ] || fail "the generated trace never had 4 I/Os in flight ($want)"
"$BIOTAPE" replay "$D/q.btape" --target "$D/q" --create 8M --buffered --write --engine null \
	--null-latency 2ms --iodepth recorded --json >"$D/q.json" || fail "--iodepth recorded failed"
python3 - "$D/q.json" "$want" <<'PY' || fail "--iodepth recorded"
import json, sys
j, want = json.load(open(sys.argv[1])), int(sys.argv[2])
assert j["iodepth"] == want and j["iodepth_recorded"] is True, (j["iodepth"], want)
assert j["max_inflight"] == want, f"{j['max_inflight']} in flight, cap {want}"
assert j["depth_capped"] > 0, "a 40x slower target never filled the recorded depth"
PY
"$BIOTAPE" replay "$D/q.btape" --target "$D/q" --buffered --write --engine null --iodepth 64 \
	--json | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["iodepth"] == 64 and j["iodepth_recorded"] is False' ||
	fail "--iodepth 64: iodepth or iodepth_recorded wrong in JSON"
# by default (original timing, --order none, no --iodepth) an I/O past the recording's most in
# flight (twice as many at --speed 2) waits for a completion, at most 50 us (test_sched times it)
hold() { # ARGS...: prints hold_depth held max_inflight
	"$BIOTAPE" replay "$D/q.btape" --target "$D/q" --buffered --write --engine null \
		--null-latency 200us --json "$@" | python3 -c 'import json,sys; j=json.load(sys.stdin)
print(j["hold_depth"], j["held"], j["max_inflight"])'
}
read -r hd held most <<<"$(hold)" || fail "default replay for the hold"
[ "$hd" = "$want" ] && [ "$held" -gt 0 ] && [ "$most" -le 128 ] ||
	fail "default: hold_depth $hd (want $want), held $held, max in flight $most"
read -r hd held _ <<<"$(hold --speed 2)" || fail "--speed 2 replay"
[ "$hd" = $((2 * want)) ] || fail "--speed 2: hold_depth $hd, want $((2 * want))"
# on a slower target the I/Os that went past that depth anyway are counted, and the summary
# names --iodepth recorded once they are over 1%; on a fast one, neither
"$BIOTAPE" replay "$D/q.btape" --target "$D/q" --buffered --write --engine null \
	--null-latency 200us >"$D/slow.txt" 2>&1 || fail "slow replay"
grep -q "^  held at the recording's $want in flight: [0-9]* I/Os, each at most 50 us; [1-9][0-9]* ([0-9.]*%) went with $want or more in flight$" "$D/slow.txt" &&
	grep -q "pile-up .* --iodepth recorded holds them" "$D/slow.txt" ||
	fail "slow target: no count past the depth, or no hint: $(grep -A1 "held at" "$D/slow.txt")"
# (at 1k I/Os/s; a stall of the machine of 30 ms or more could pile 1% up, and then the hint
# is right: allowed only with such a stall in the summary)
"$BIOTAPE" replay "$D/q.btape" --target "$D/q" --buffered --write --engine null \
	--null-latency 1us --speed 0.01 >"$D/fast.txt" 2>&1 || fail "fast replay"
python3 - "$D/fast.txt" <<'PY' || fail "fast target: $(grep -A1 -e "held at" -e "fell behind" "$D/fast.txt")"
import re, sys
t = open(sys.argv[1]).read()
share = float(re.search(r"went with \d+ or more in flight", t) and
              re.search(r"\(([0-9.]+)%\) went with", t).group(1))
hint = "pile-up" in t
lag = re.search(r"fell behind by ([0-9.]+) (ms|s)\b", t)
lag_ms = 0 if not lag else float(lag.group(1)) * (1000 if lag.group(2) == "s" else 1)
assert hint == (share > 1.0), (share, hint)
assert share <= 1.0 or lag_ms >= 30, (share, lag_ms)
PY
for args in "--iodepth 128" "--order barrier" "--timing afap"; do
	# shellcheck disable=SC2086
	read -r hd held _ <<<"$(hold $args)" || fail "replay $args"
	[ "$hd" = 0 ] && [ "$held" = 0 ] || fail "$args: hold_depth $hd, held $held, want none"
done
# without completion times there is nothing to count by: refused, the target untouched
"$GEN" -o "$D/bare.btape" -n 100 -B || fail "gen bare"
expect_usage "$D/bare.btape" --target "$D/nq" --create 8M --iodepth recorded
[ -e "$D/nq" ] && fail "a refused --iodepth recorded created its target"
expect_usage "$D/r.btape" --target "$D/t" --iodepth record

# SIGINT once --create made the target, at the last moment before the first I/O (a test hook
# stops the replay there): one line, exit 1, neither the target it made nor -o's temporary left
"$GEN" -o "$D/sig.btape" -n 2000 -p randwrite -S $((64 << 20)) || fail "gen sig"
BIOTAPE_TEST_STOP_BEFORE_IO=1 "$BIOTAPE" replay "$D/sig.btape" --target "$D/sig.img" --create auto \
	--write -o "$D/sig-out.btape" --no-progress >/dev/null 2>"$D/sig.err" &
pid=$!
wait_stopped $pid || fail "the replay did not stop before its first I/O"
[ -e "$D/sig.img" ] || fail "replay --create: no target made"
kill -INT $pid
kill -CONT $pid
rc=0; wait $pid || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$D/sig.err")" = 1 ] && grep -q "stopped by a signal before the first I/O" "$D/sig.err" ||
	fail "SIGINT before the first I/O: exit $rc: $(cat "$D/sig.err")"
[ ! -e "$D/sig.img" ] || fail "SIGINT before the first I/O left the target --create made"
! ls "$D"/sig-out.btape* >/dev/null 2>&1 || fail "SIGINT before the first I/O left -o's file: $(ls "$D")"

pass
