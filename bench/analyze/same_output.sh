#!/bin/bash
# Checks that two biotape builds give byte-identical analyzer output (a speed change must not
# change a figure): analyze (text, --json, --interval, --ws-limit, --from/--to, --device, two
# files merged), profile and compare, over the shipped samples and generated traces (gen_trace
# -p mixed, also bare, all flushes and with an idle device). Exits 1 and names the first
# difference.
#   usage: bench/analyze/same_output.sh OLD_BIOTAPE NEW_BIOTAPE [GEN_TRACE]
#   env: N (events per generated trace, 300000)
set -u
OLD=$1
NEW=$2
GEN=${3:-$(dirname "$NEW")/gen_trace}
N=${N:-300000}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /dev/shm/biotape-same.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

[ -x "$OLD" ] && [ -x "$NEW" ] && [ -x "$GEN" ] || {
	echo "usage: $0 OLD_BIOTAPE NEW_BIOTAPE [GEN_TRACE]" >&2
	exit 2
}
"$GEN" -p mixed -n "$N" -o "$TMP/g1.btape" -x 1 || exit 1
"$GEN" -p mixed -n "$N" -o "$TMP/g2.btape" -x 7 -S 1G || exit 1
"$GEN" -p mixed -n $((N / 3)) -o "$TMP/bare.btape" -x 3 -B || exit 1
"$GEN" -p mixed -n $((N / 3)) -o "$TMP/flush.btape" -x 3 -F 1 || exit 1
"$GEN" -p mixed -n $((N / 3)) -o "$TMP/idle2.btape" -x 3 -i 1 || exit 1
traces=("$HERE"/samples/*.btape "$TMP"/*.btape)

fail=0
n=0
# run NAME ARGS...: the same command with both binaries, outputs compared
run() {
	local name=$1
	shift
	"$OLD" "$@" >"$TMP/old" 2>"$TMP/old.err"
	local ro=$?
	"$NEW" "$@" >"$TMP/new" 2>"$TMP/new.err"
	local rn=$?
	n=$((n + 1))
	if [ $ro != $rn ] || ! cmp -s "$TMP/old" "$TMP/new" || ! cmp -s "$TMP/old.err" "$TMP/new.err"; then
		echo "DIFFERENT: $name: biotape $* (exit $ro vs $rn)"
		diff "$TMP/old" "$TMP/new" | head -5
		fail=1
	fi
}
for t in "${traces[@]}"; do
	b=$(basename "$t")
	run "$b text" analyze "$t"
	run "$b json" analyze --json "$t"
	run "$b interval" analyze --interval 0.01 --json "$t"
	run "$b ws-limit" analyze --ws-limit 1000 --json "$t"
	run "$b window" analyze --from 0.2 --to 0.9 --json "$t"
	run "$b profile" profile "$t"
done
run "merge" analyze --json "$TMP/g1.btape" "$TMP/g2.btape"
run "device" analyze --device synth1 --json "$TMP/g1.btape"
run "compare" compare --json "$TMP/g1.btape" "$TMP/g2.btape"
run "compare text" compare "$HERE/samples/fio-mixed.btape" "$HERE/samples/pgbench.btape"
[ $fail = 0 ] && echo "same output: $n commands over ${#traces[@]} traces"
exit $fail
