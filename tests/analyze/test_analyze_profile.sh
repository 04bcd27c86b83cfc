#!/bin/bash
# biotape profile on a synthetic trace with a known distribution: the job states it exactly,
# fio accepts the job, and --per-process writes one job per busy process.
. "$BIOTAPE_SRC/tests/lib.sh"
t_gen
D=$(t_tmpdir)
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
pass "profile states the known distribution"
