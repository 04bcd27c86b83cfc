#!/bin/bash
# Profile fidelity, end to end: run a reference fio workload on a loop device while recording,
# generate a job with biotape profile, run it while recording, compare the two traces.
# Targets (issue): read share within 2 points, size TVD <= 0.05, random share within 5 points,
# IOPS within 10% (rate-limited jobs). Prints the achieved numbers (docs/ANALYSIS.md).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root fio losetup python3
D=$(t_tmpdir) || exit 1
t_loop 256
RUNTIME=${PROFILE_TEST_RUNTIME:-8}

record() { t_fio_record "$LOOP" "$1" "$2" "$D/rec.log"; } # record OUT JOB
# is recording possible here at all?
if ! timeout 20 "$BIOTAPE" record -o "$D/probe.btape" -d "$LOOP" --duration 1s >"$D/probe.log" 2>&1; then
	skip "biotape record does not work here: $(tail -1 "$D/probe.log")"
fi

jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
ok=1
for kind in uniform skewed; do
	dist=""
	[ "$kind" = skewed ] && dist="random_distribution=zoned:60/5:30/15:10/80"
	t_fio_global "$RUNTIME" >"$D/ref-$kind.fio"
	cat >>"$D/ref-$kind.fio" <<JOB
[ref]
rw=randrw
rwmixread=70
bssplit=4k/60:8k/20:16k/10:64k/10,4k/50:32k/50
percentage_random=75,40
iodepth=4
rate=24m,8m
$dist
JOB
	record "$D/ref-$kind.btape" "$D/ref-$kind.fio" || fail "$kind: recording the reference: $(tail -3 "$D/rec.log")"
	"$BIOTAPE" profile "$D/ref-$kind.btape" >"$D/gen-$kind.fio" || fail "$kind: profile"
	record "$D/rep-$kind.btape" "$D/gen-$kind.fio" || fail "$kind: recording the profile run: $(tail -3 "$D/rec.log")"
	"$BIOTAPE" compare "$D/ref-$kind.btape" "$D/rep-$kind.btape" --json >"$D/cmp-$kind.json" ||
		fail "$kind: compare"
	C=$D/cmp-$kind.json
	rs=$(jget "$C" 'abs(d["diff"]["read_share_of_rw"]["b"] - d["diff"]["read_share_of_rw"]["a"]) * 100')
	tr=$(jget "$C" 'd["diff"]["ops"]["read"]["size_tvd"]')
	tw=$(jget "$C" 'd["diff"]["ops"]["write"]["size_tvd"]')
	rr=$(jget "$C" 'abs(d["diff"]["random_share"]["read"]["b"] - d["diff"]["random_share"]["read"]["a"]) * 100')
	rw=$(jget "$C" 'abs(d["diff"]["random_share"]["write"]["b"] - d["diff"]["random_share"]["write"]["a"]) * 100')
	io=$(jget "$C" 'd["diff"]["iops_mean"]["ratio_b_over_a"]')
	hot=$(jget "$C" '"%.1f%% vs %.1f%%" % (100 * d["a"]["working_set"]["skew"]["hottest_10pct"], 100 * d["b"]["working_set"]["skew"]["hottest_10pct"])')
	printf 'fidelity %-8s read share %.2f pts, size TVD read %.3f write %.3f, random %.2f/%.2f pts, IOPS ratio %.3f, hottest 10%%: %s\n' \
		"$kind" "$rs" "$tr" "$tw" "$rr" "$rw" "$io" "$hot"
	awk -v rs="$rs" -v tr="$tr" -v tw="$tw" -v rr="$rr" -v rw="$rw" -v io="$io" 'BEGIN {
		exit !(rs <= 2 && tr <= 0.05 && tw <= 0.05 && rr <= 5 && rw <= 5 && io >= 0.9 && io <= 1.1) }' ||
		{ echo "FAIL: $kind misses a target" >&2; ok=0; }
done
[ "$ok" = 1 ] || fail "profile fidelity below target (see above)"
pass "profile reproduces the workload within the targets"
