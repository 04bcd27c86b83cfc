#!/bin/bash
# biotape profile on a synthetic trace with a known distribution: the job states it exactly,
# fio accepts the job, and --per-process writes one job per busy process.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -p mixed -n 100000 -o "$D/t.btape" -x 11 -S 1G || fail "gen"
"$BIOTAPE" profile "$D/t.btape" >"$D/t.fio" || fail "profile"
want() { grep -qx "$1" "$D/t.fio" || fail "job lacks '$1': $(grep "^${1%%=*}=" "$D/t.fio")"; }
want "rw=randrw"
want "rwmixread=70"
want "bssplit=4k/60:8k/20:16k/10:64k/10,4k/60:8k/20:16k/10:64k/10"
want "percentage_random=75,75"
want "filename=\${TARGET}"
want "direct=1"
want "runtime=1"
# 200k IOPS of 12 KiB mean: rate in bytes per direction within 2%
awk -F'[=,]' '/^rate=/ { r = $2; w = $3 } END {
	er = 140000 * 12288; ew = 60000 * 12288
	if (r < 0.98 * er || r > 1.02 * er || w < 0.98 * ew || w > 1.02 * ew) { print r, w; exit 1 } }' \
	"$D/t.fio" || fail "rate= not the measured bytes/s: $(grep '^rate=' "$D/t.fio")"
# skewed: 20% of the random I/Os in the first 1% of the range -> zones are written
grep -q "^random_distribution=zoned_abs:" "$D/t.fio" || fail "skewed trace: no zones"
grep -q "^; working set" "$D/t.fio" || fail "no measurement comments"
# uniform random with about 1,000 accesses a block (Poisson's p(0) = e^-1000 underflows): left
# uniform (the uniform reference was computed as 0%, and zones written for it)
"$GEN" -o "$D/u.btape" -n 1000000 -s $((4 << 20)) -S 64M || fail "gen uniform"
"$BIOTAPE" profile "$D/u.btape" >"$D/u.fio" || fail "profile uniform"
grep -q "would give the hottest 10% 1[01]\.[0-9]%: random_distribution left uniform" "$D/u.fio" &&
	! grep -q "^random_distribution=" "$D/u.fio" ||
	fail "uniform over 1,024 blocks: $(grep -E '^; uniform|^random_distribution' "$D/u.fio")"
if command -v fio >/dev/null; then
	truncate -s 1G "$D/target"
	TARGET=$D/target fio --parse-only "$D/t.fio" >"$D/parse" 2>&1 || fail "fio rejects the job: $(cat "$D/parse")"
	"$BIOTAPE" profile "$D/t.btape" --per-process >"$D/pp.fio" || fail "profile --per-process"
	[ "$(grep -c '^\[pid' "$D/pp.fio")" = 8 ] || fail "per-process: want 8 jobs"
	TARGET=$D/target fio --parse-only "$D/pp.fio" >"$D/parse" 2>&1 || fail "fio rejects per-process job: $(cat "$D/parse")"
fi
# --phases 1 is the flat job, byte for byte; bad values are refused with one line
"$BIOTAPE" profile --phases 1 "$D/t.btape" >"$D/p1.fio" || fail "profile --phases 1"
cmp -s "$D/t.fio" "$D/p1.fio" || fail "--phases 1 differs from the flat job: $(diff "$D/t.fio" "$D/p1.fio" | head -3)"
for bad in 0 17 x; do
	"$BIOTAPE" profile --phases $bad "$D/t.btape" >"$D/bad.fio" 2>"$D/bad.err"
	[ $? = 2 ] && [ "$(wc -l <"$D/bad.err")" = 1 ] && grep -q "^biotape: profile: --phases" "$D/bad.err" ||
		fail "--phases $bad: want exit 2 and one line: $(cat "$D/bad.err")"
done
# a steady trace is one phase; its job is a phase job that fio parses
"$BIOTAPE" profile --phases auto "$D/t.btape" >"$D/pa.fio" || fail "profile --phases auto"
[ "$(grep -c '^\[phase' "$D/pa.fio")" = 1 ] || fail "steady trace: want one phase: $(grep '^\[' "$D/pa.fio")"
grep -q "^runtime=[0-9]*ms" "$D/pa.fio" || fail "phase job without its runtime"
if command -v fio >/dev/null; then
	TARGET=$D/target fio --parse-only "$D/pa.fio" >"$D/parse" 2>&1 || fail "fio rejects the phased job: $(cat "$D/parse")"
	"$BIOTAPE" profile "$D/t.btape" --phases 3 --per-process >"$D/ppp.fio" || fail "profile --phases 3 --per-process"
	TARGET=$D/target fio --parse-only "$D/ppp.fio" >"$D/parse" 2>&1 || fail "fio rejects phases + per-process: $(cat "$D/parse")"
fi
# a phase's job issues the phase's I/Os in its runtime: the first of two phases of 2,000 4 KiB
# reads/s runs 0.2 s less than its phase (fio's stonewall lag), so its rate is the phase's bytes
# over the runtime, within 1% (at the phase's own rate it issued 8-11% too few)
"$GEN" -p randread -a fixed -r 2000 -n 8000 -o "$D/two.btape" || fail "gen two"
"$BIOTAPE" profile --phases 2 "$D/two.btape" >"$D/two.fio" || fail "profile --phases 2"
awk -F'[=,]' '/^\[phase1\]/ { p = 1 } /^\[phase2\]/ { p = 0 }
	p && /^runtime=/ { rt = $2 + 0 } p && /^rate=/ { r = $2 }
	p && /^; reads / { split($0, a, "[(]"); n = a[2] + 0; gsub(/,/, "", a[2]); n = a[2] + 0 }
	END { want = n * 4096; got = r * rt / 1000
		if (!n || !rt || got < 0.99 * want || got > 1.01 * want) exit 1 }' "$D/two.fio" ||
	fail "phase 1's job does not issue its phase's bytes in its runtime: $(grep -E '^(\[phase|runtime=|rate=|; reads )' "$D/two.fio")"
# flushes (every 10th event): the flushed writes go to a -flush job at iodepth 1 with fsync=1,
# one write per flush (fio repeats syncs at a deeper queue); the main job keeps the rest
"$GEN" -p mixed -n 100000 -o "$D/fl.btape" -x 11 -S 1G -F 10 || fail "gen flushes"
"$BIOTAPE" profile "$D/fl.btape" >"$D/fl.fio" || fail "profile (flushes)"
awk '/^\[/ { job = $0 } job == "[biotape-profile-flush]" && /^(fsync=1|iodepth=1)$/ { n++ }
	END { exit n == 2 ? 0 : 1 }' "$D/fl.fio" || fail "no flush job with fsync=1 and iodepth=1: $(grep -A12 -- '-flush]' "$D/fl.fio")"
# 0.5 s: 10,000 flushes -> 20k writes/s of 12 KiB in the flush job; 17,000 writes left in
# the main job -> 34k/s; both within 2%
awk -F'[=,]' '/^\[/ { job = $0 } /^rate=/ { w[job] = $3 } END {
	m = w["[biotape-profile]"]; f = w["[biotape-profile-flush]"]; em = 34000 * 12288; ef = 20000 * 12288
	if (m < 0.98 * em || m > 1.02 * em || f < 0.98 * ef || f > 1.02 * ef) { print m, f; exit 1 } }' \
	"$D/fl.fio" || fail "flush split rates: $(grep -E '^(\[|rate=)' "$D/fl.fio")"
if command -v fio >/dev/null; then
	TARGET=$D/target fio --parse-only "$D/fl.fio" >"$D/parse" 2>&1 || fail "fio rejects the job with a flush job: $(cat "$D/parse")"
fi
# a real database with a checkpoint (samples/pgbench-checkpoint.btape: CHECKPOINT forced at
# 8.025 s after the first I/O): a phase starts within two detection windows (1/100 of the
# trace, 0.18 s) of it
PG=$BIOTAPE_SRC/samples/pgbench-checkpoint.btape
"$BIOTAPE" profile --phases auto "$PG" >"$D/pg.fio" || fail "profile --phases auto (pgbench)"
awk '/^; phase [0-9]+ of/ && $7 == "s" { d = $6 - 8.025; if (d < 0) d = -d; if (d <= 0.36) ok = 1 }
	END { exit ok ? 0 : 1 }' "$D/pg.fio" || fail "pgbench: no phase starts near the CHECKPOINT (8.025 s): $(grep '^; phase' "$D/pg.fio")"
# ... and every phase job runs in fio (null engine, 200 ms a phase): fio 3.33 dies of SIGFPE
# on rate_process=poisson with fsync or under one I/O per second, and still exits 0 (its
# stderr tells)
if command -v fio >/dev/null; then
	grep -q "^fsync=1" "$D/pg.fio" || fail "pgbench: no flush job"
	sed -e 's/^ioengine=.*/ioengine=null/' -e 's/^runtime=[0-9]*ms/runtime=200ms/' "$D/pg.fio" >"$D/pgn.fio"
	TARGET=$D/null timeout 60 fio --output=/dev/null "$D/pgn.fio" >"$D/pgn.out" 2>&1 &&
		! grep -q "got signal" "$D/pgn.out" || fail "fio fails on the pgbench phase jobs: $(grep -m2 -E 'signal|error' "$D/pgn.out")"
fi
pass "profile states the known distribution"
