#!/bin/bash
# biotape analyze / profile / compare on generated traces: known distribution, edge cases
# (empty trace, one event, all flushes, a device with no I/O, no latency or process fields,
# windows selecting nothing) and bad input (one clear line, exit 2, no crash).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
command -v python3 >/dev/null || skip "needs python3 (JSON checks)"
t_gen
D=$(t_tmpdir) || exit 1
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
within() { awk -v a="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(a >= lo && a <= hi) }'; }
# one_line_err CMD...: must fail with exit 2 and exactly one "biotape: " line on stderr
one_line_err() {
	local rc
	"$@" >"$D/out" 2>"$D/err"
	rc=$?
	[ "$rc" = 2 ] || fail "'$*': exit $rc, want 2 ($(cat "$D/err"))"
	[ "$(wc -l <"$D/err")" = 1 ] || fail "'$*': stderr not one line: $(cat "$D/err")"
	grep -q '^biotape: ' "$D/err" || fail "'$*': message not prefixed: $(cat "$D/err")"
}

for c in analyze profile compare; do
	"$BIOTAPE" $c --help >"$D/help" || fail "$c --help exit"
	grep -q "example" "$D/help" || fail "$c --help has no example"
done

# --- known distribution: 70% reads, sizes 4k/8k/16k/64k = 60/20/10/10, 25% sequential ---
"$GEN" -p mixed -n 40000 -o "$D/mix.btape" -x 7 || fail "gen"
"$BIOTAPE" analyze "$D/mix.btape" --json >"$D/mix.json" || fail "analyze mix"
within "$(jget "$D/mix.json" 'd["ops"]["read"]["count_share"]')" 0.69 0.71 || fail "read share"
within "$(jget "$D/mix.json" '[x["share"] for x in d["ops"]["read"]["sizes"]["top"] if x["bytes"] == 4096][0]')" 0.59 0.61 ||
	fail "4k share"
within "$(jget "$D/mix.json" 'd["locality"]["streams"]["read"]["sequential_share"]')" 0.24 0.26 || fail "seq share"
within "$(jget "$D/mix.json" 'd["overall"]["iops_mean"]')" 195000 205000 || fail "iops"
within "$(jget "$D/mix.json" 'd["ops"]["read"]["latency"]["device"]["p50_ns"]')" 50000 250000 ||
	fail "read p50 device latency $(jget "$D/mix.json" 'd["ops"]["read"]["latency"]["device"]["p50_ns"]') outside 50..250 us"
within "$(jget "$D/mix.json" 'd["ops"]["read"]["latency"]["queue"]["max_ns"]')" 2000 10000 || fail "queue time"
[ "$(jget "$D/mix.json" 'len(d["processes"])')" = 8 ] || fail "8 processes"
[ "$(jget "$D/mix.json" 'd["fields"]["complete"]')" = all ] || fail "fields.complete"
[ "$(jget "$D/mix.json" 'd["queue_depth"]["basis"]')" = computed ] || fail "qd basis"

# --- HTML and text render without error on it ---
"$BIOTAPE" analyze "$D/mix.btape" --html "$D/mix.html" || fail "html"
grep -q '<svg class="chart" data-chart="iops"' "$D/mix.html" || fail "html: no IOPS chart"
"$BIOTAPE" analyze "$D/mix.btape" --interval 50ms >"$D/mix.txt" || fail "text"
[ "$(grep -c '^ *0\.[0-9]* ' "$D/mix.txt")" -ge 3 ] || fail "timeline rows at 50 ms"

# --- empty trace ---
"$GEN" -p mixed -n 0 -o "$D/empty.btape" || fail "gen empty"
"$BIOTAPE" analyze "$D/empty.btape" >"$D/e.txt" || fail "analyze empty"
grep -q "no events in trace" "$D/e.txt" || fail "empty: not said"
"$BIOTAPE" analyze "$D/empty.btape" --json >"$D/e.json" || fail "analyze empty json"
[ "$(jget "$D/e.json" 'd["events"]')" = 0 ] || fail "empty json"
"$BIOTAPE" analyze "$D/empty.btape" --html "$D/e.html" || fail "empty html"
grep -q "no events in trace" "$D/e.html" || fail "empty html: not said"
one_line_err "$BIOTAPE" profile "$D/empty.btape"
grep -q "no events" "$D/err" || fail "profile empty: $(cat "$D/err")"
"$BIOTAPE" compare "$D/mix.btape" "$D/empty.btape" >"$D/c.txt" || fail "compare with empty"
grep -q "no events in trace" "$D/c.txt" || fail "compare empty: not said"

# --- window selecting nothing ---
"$BIOTAPE" analyze "$D/mix.btape" --from 1h >"$D/w.txt" || fail "analyze empty window"
grep -q "no events in window" "$D/w.txt" || fail "empty window: not said"
"$BIOTAPE" analyze "$D/mix.btape" --from 1h --json >"$D/w.json" || fail "json empty window"
[ "$(jget "$D/w.json" 'd["note"]')" = "no events in window" ] || fail "json empty window note"

# --- one event; all flushes; a device with no I/O; no latency/process fields ---
"$GEN" -p mixed -n 1 -o "$D/one.btape" || fail "gen one"
"$BIOTAPE" analyze "$D/one.btape" >"$D/one.txt" || fail "analyze one"
grep -q "IOPS        n/a (all events at one instant" "$D/one.txt" || fail "one: IOPS not n/a"
"$BIOTAPE" analyze "$D/one.btape" --json >"$D/one.json" || fail "one json"
[ "$(jget "$D/one.json" 'd["overall"]["iops_mean"]')" = None ] || fail "one: iops_mean not null"
"$BIOTAPE" profile "$D/one.btape" >"$D/one.fio" || fail "profile one"
grep -q '^number_ios=1$' "$D/one.fio" || fail "profile one: number_ios"

"$GEN" -p mixed -F 1 -n 500 -o "$D/fl.btape" || fail "gen flush"
"$BIOTAPE" analyze "$D/fl.btape" >"$D/fl.txt" || fail "analyze flushes"
grep -q "no reads or writes with data" "$D/fl.txt" || fail "flushes: working set"
grep -q "no read or write stream" "$D/fl.txt" || fail "flushes: locality"
one_line_err "$BIOTAPE" profile "$D/fl.btape"
grep -q "only flushes" "$D/err" || fail "profile flushes: $(cat "$D/err")"

"$GEN" -p mixed -i 1 -n 1000 -o "$D/idle.btape" || fail "gen idle"
"$BIOTAPE" analyze "$D/idle.btape" >"$D/idle.txt" || fail "analyze idle device"
grep -q "^  synth2 *no I/O" "$D/idle.txt" || fail "device without I/O not listed as such"
"$BIOTAPE" analyze "$D/idle.btape" --device synth2 >"$D/idle2.txt" || fail "analyze --device idle"
grep -q "no events in window" "$D/idle2.txt" || fail "--device with no I/O: not said"

"$GEN" -p mixed -B -n 2000 -o "$D/bare.btape" || fail "gen bare"
"$BIOTAPE" analyze "$D/bare.btape" >"$D/bare.txt" || fail "analyze bare"
grep -q "not in trace: no completion times" "$D/bare.txt" || fail "bare: latency"
grep -q "queue time: not in trace" "$D/bare.txt" || fail "bare: queue time"
grep -q "Queue depth at issue: not in trace" "$D/bare.txt" || fail "bare: depth"
grep -q "Per process: not in trace (no pid field)" "$D/bare.txt" || fail "bare: process"
"$BIOTAPE" analyze "$D/bare.btape" --html "$D/bare.html" || fail "bare html"
one_line_err "$BIOTAPE" profile "$D/bare.btape" --per-process

# --- bad input ---
head -c 4096 /dev/urandom >"$D/junk.btape"
one_line_err "$BIOTAPE" analyze "$D/junk.btape"
one_line_err "$BIOTAPE" analyze "$D/mix.btape" --device nosuchdev
grep -q "no device 'nosuchdev'" "$D/err" || fail "device message: $(cat "$D/err")"
one_line_err "$BIOTAPE" analyze "$D/mix.btape" --from banana
one_line_err "$BIOTAPE" analyze "$D/mix.btape" --bogus
one_line_err "$BIOTAPE" analyze
one_line_err "$BIOTAPE" compare "$D/mix.btape"
one_line_err "$BIOTAPE" analyze "$D/mix.btape" --from 2s --to 1s
"$BIOTAPE" analyze "$D/nonexistent.btape" >/dev/null 2>"$D/err" && fail "missing file accepted"
[ "$(wc -l <"$D/err")" = 1 ] || fail "missing file: $(cat "$D/err")"
# a failed --html leaves nothing behind
"$BIOTAPE" analyze "$D/junk.btape" --html "$D/junk.html" 2>/dev/null
[ ! -e "$D/junk.html" ] || fail "html written for bad input"

# --- a trace whose recorder lost events: every report says its counts are lower bounds ---
"$GEN" -p mixed -n 2000 -o "$D/lost.btape" -X 37 || fail "gen lost"
! grep -q "WARNING" "$D/c.txt" || fail "compare of complete traces warns: $(cat "$D/c.txt")"
"$BIOTAPE" compare "$D/mix.btape" "$D/lost.btape" >"$D/cl.txt" || fail "compare lost"
grep -q "^  WARNING: B: the recorder lost 37 events; counts are lower bounds" "$D/cl.txt" ||
	fail "compare: B's lost events not said: $(head -5 "$D/cl.txt")"
! grep -q "WARNING: A:" "$D/cl.txt" || fail "compare: A warned about B's loss"
"$BIOTAPE" compare "$D/mix.btape" "$D/lost.btape" --html "$D/cl.html" || fail "compare lost html"
grep -q '<p class="warn">WARNING: B: the recorder lost 37 events' "$D/cl.html" ||
	fail "compare --html: B's lost events not at the top"
"$BIOTAPE" analyze "$D/lost.btape" --html "$D/al.html" || fail "analyze lost html"
grep -q '<p class="warn">WARNING: the recorder lost 37 events' "$D/al.html" ||
	fail "analyze --html: lost events not at the top"
"$BIOTAPE" profile "$D/lost.btape" >"$D/lost.fio" 2>"$D/err" || fail "profile lost"
grep -q "^; WARNING: the recorder lost 37 events" "$D/lost.fio" || fail "profile: loss not in the job"
grep -q "profile: the recorder lost 37 events of .*lost.btape: the job's rates are lower bounds" \
	"$D/err" || fail "profile: loss not on stderr: $(cat "$D/err")"

# --- compare phrasing ---
"$GEN" -p mixed -n 20000 -o "$D/b.btape" -x 9 || fail "gen b"
"$BIOTAPE" compare "$D/mix.btape" "$D/b.btape" >"$D/cmp.txt" || fail "compare"
grep -Eq "p99 read latency .* vs .*" "$D/cmp.txt" || fail "compare: no p99 read line"
"$BIOTAPE" compare "$D/mix.btape" "$D/b.btape" --json >"$D/cmp.json" || fail "compare json"
within "$(jget "$D/cmp.json" 'd["diff"]["ops"]["read"]["size_tvd"]')" 0 0.02 || fail "same distribution: TVD"
# device time at A's depths (each band of depth at issue weighted by A's share there): a trace
# against itself is 1 exactly, and against another draw of the same distribution near it
grep -Eq "p99 write at A's depths .* vs " "$D/cmp.txt" || fail "compare: no p99 at A's depths"
grep -Eq "^  write    depth 9-16 +I/Os" "$D/cmp.txt" || fail "compare: no depth band rows"
within "$(jget "$D/cmp.json" 'd["diff"]["ops"]["write"]["latency_device_at_a_depths"]["p99_ns"]["ratio_b_over_a"]')" 0.9 1.1 ||
	fail "same distribution: p99 at A's depths"
"$BIOTAPE" compare "$D/mix.btape" "$D/mix.btape" --json >"$D/self.json" || fail "compare self"
for q in p50_ns p99_ns; do
	within "$(jget "$D/self.json" "d['diff']['ops']['write']['latency_device_at_a_depths']['$q']['ratio_b_over_a']")" 1 1 ||
		fail "self: $q at A's depths is not 1"
done
within "$(jget "$D/self.json" 'd["diff"]["ops"]["write"]["latency_device_at_a_depths"]["a_share_left_out"]')" 0 0 ||
	fail "self: a share left out"
"$BIOTAPE" analyze "$D/mix.btape" | grep -q "device time by the depth at issue" ||
	fail "analyze: no device time by depth"
"$BIOTAPE" compare "$D/mix.btape" "$D/b.btape" --html "$D/cmp.html" || fail "compare html"
grep -q 'data-chart="latency-cdf-read"' "$D/cmp.html" || fail "compare html: no overlaid CDF"
# --- the device extent counts discards (fio's t0038 iolog trims 2 GiB at a time): what a
# replay target must hold; the profile's range stays the reads' and writes' ---
"$BIOTAPE" convert -q "$BIOTAPE_SRC/tests/interop/data/fio_t0038.iolog" "$D/trim.btape" ||
	fail "import of fio_t0038.iolog"
"$BIOTAPE" analyze --json "$D/trim.btape" >"$D/trim.json" || fail "analyze trims"
[ "$(jget "$D/trim.json" 'd["devices"][0]["offset_end_bytes"]')" = $((36864 + (2 << 30))) ] ||
	fail "offset_end_bytes $(jget "$D/trim.json" 'd["devices"][0]["offset_end_bytes"]') leaves out the discards"
"$BIOTAPE" analyze "$D/trim.btape" | grep -q "offsets 0 B .. 2.00 GiB" || fail "text offsets leave out the discards"
"$BIOTAPE" profile "$D/trim.btape" >"$D/trim.fio" 2>/dev/null || fail "profile trims"
grep -qx "size=40960" "$D/trim.fio" || fail "profile range is not the writes' 40 KiB: $(grep size= "$D/trim.fio")"

# --json and --html are one or the other: the last one given used to win silently (with
# --html first, no report was written)
for c in analyze compare; do
	files=("$D/mix.btape")
	[ $c = analyze ] || files+=("$D/mix.btape")
	one_line_err "$BIOTAPE" $c "${files[@]}" --json --html "$D/both.html"
	one_line_err "$BIOTAPE" $c "${files[@]}" --html "$D/both.html" --json
	grep -q "one or the other" "$D/err" || fail "$c --html --json: $(cat "$D/err")"
	[ ! -e "$D/both.html" ] || fail "$c --json --html wrote the report"
done
# an I/O issued at 2^64 - 1 ns is counted: the end of the selection was exclusive even
# without --to, and analyze dropped it (301 events in the file, 300 analysed)
{
	echo issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,flags,error,pid,tid,comm,cgroup,cpu,qd
	echo 1000,,,0,8,4096,read,,,,,,,,
	echo 18446744073709551615,,,0,16,4096,write,,,,,,,,
} >"$D/last.csv"
"$BIOTAPE" convert -q "$D/last.csv" "$D/last.btape" --from csv || fail "convert last.csv"
"$BIOTAPE" analyze "$D/last.btape" --json >"$D/last.json" || fail "analyze last.btape"
[ "$(jget "$D/last.json" 'd["events"]')" = 2 ] || fail "events at 2^64 - 1 ns: $(jget "$D/last.json" 'd["events"]') of 2"
[ "$(jget "$D/last.json" 'd["ops"]["write"]["count"]')" = 1 ] || fail "the write at 2^64 - 1 ns is missing"
pass "analyze CLI: known distribution, edge cases, bad input"
