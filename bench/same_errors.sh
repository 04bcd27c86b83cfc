#!/bin/bash
# Checks that two biotape builds fail the same way on bad input: about 150 commands (info, dump,
# analyze, profile, compare, convert import and export, replay with the null engine) over
# missing, empty, foreign, cut and damaged traces, and outputs that are a directory, a FIFO,
# the null device or in a missing directory; stderr, stdout and the exit status compared byte
# for byte (a writer's random temporary name, and a replay's timing figures on stdout, aside).
# For a change to how errors are reported, as bench/analyze/same_output.sh is for reports.
# Everything is written under one directory in /dev/shm, removed at exit. Exits 1 on a
# difference. Not run by the test suite.
#   usage: bench/same_errors.sh OLD_BIOTAPE NEW_BIOTAPE [GEN_TRACE]     (VERBOSE=1: each line)
set -u
OLD=$1 NEW=$2
GEN=${3:-$(dirname "$NEW")/gen_trace}
[ -x "$OLD" ] && [ -x "$NEW" ] && [ -x "$GEN" ] || {
	echo "usage: $0 OLD_BIOTAPE NEW_BIOTAPE [GEN_TRACE]" >&2
	exit 2
}
T=$(mktemp -d /dev/shm/biotape-same-errors.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$GEN" -p mixed -n 20000 -o "$T/good.btape" -x 1 >/dev/null || exit 1
: >"$T/empty.btape"
printf 'hello world, not a trace at all\n' >"$T/magic.btape"
head -c 40 "$T/good.btape" >"$T/hdr.btape"
head -c 300 "$T/good.btape" >"$T/meta.btape"
sz=$(stat -c %s "$T/good.btape")
head -c $((sz / 2)) "$T/good.btape" >"$T/half.btape"
cp "$T/good.btape" "$T/flip.btape"
printf '\xff\xff\xff\xff' | dd of="$T/flip.btape" bs=1 seek=$((sz / 3)) conv=notrunc 2>/dev/null
cp "$T/good.btape" "$T/foot.btape"
printf '\xff\xff' | dd of="$T/foot.btape" bs=1 seek=$((sz - 30)) conv=notrunc 2>/dev/null
mkdir "$T/dir"; mkfifo "$T/fifo"
printf '128166372003061629,hm,1,Read,3154137088,4096,1200\nbad,line\n' >"$T/msr.csv"
printf '128166372003061629,hm,1,Read,3154137088,4096,1200\n' >"$T/ok.csv"
n=0 bad=0
run() {
	local i=$n
	(cd "$T" && "$OLD" "$@" >"$T/o.out" 2>"$T/o.err"); local ro=$?
	rm -f "$T"/out* "$T"/*.tmp.* "$T"/tgt*
	(cd "$T" && "$NEW" "$@" >"$T/n.out" 2>"$T/n.err"); local rn=$?
	rm -f "$T"/out* "$T"/*.tmp.* "$T"/tgt*
	sed -i 's/\.tmp\.[0-9a-f]\{6\}/.tmp.XXXXXX/g' "$T/o.err" "$T/n.err" # a random name
	n=$((n + 1))
	[ "$1" = replay ] && : >"$T/o.out" && : >"$T/n.out" # timing figures vary
	if [ $ro != $rn ] || ! cmp -s "$T/o.err" "$T/n.err" || ! cmp -s "$T/o.out" "$T/n.out"; then
		bad=$((bad + 1)); echo "DIFF: $* (exit $ro/$rn)"; diff "$T/o.err" "$T/n.err" | head -4
	fi
	[ -n "${VERBOSE:-}" ] && { echo "[$ro] $*"; head -2 "$T/n.err"; }
}
for f in missing.btape empty.btape magic.btape hdr.btape meta.btape half.btape flip.btape foot.btape dir fifo /dev/null; do
	[ "$f" = fifo ] && continue
	run info "$f"; run info --json "$f"; run dump "$f"; run dump --csv "$f"
	run analyze "$f"; run analyze --json "$f"; run profile "$f"; run compare good.btape "$f"
	run analyze good.btape "$f"
	run convert "$f" out.csv --to csv; run convert "$f" out.fio --to fio3
	run replay "$f" --map 0=tgt0 --map 1=tgt1 --create auto --engine null
done
for o in dir fifo /dev/shm/lf-no-such-dir/x.btape /dev/null dir/; do
	run convert ok.csv "$o" --from msr; run convert msr.csv "$o" --from msr --skip-bad
	run convert good.btape "$o" --to csv
	run replay good.btape --map 0=tgt0 --map 1=tgt1 --create auto -o "$o" \
		--engine null --writes-as-reads --timing afap
done
run convert msr.csv out.btape --from msr; run convert msr.csv out.btape --skip-bad --from msr
run convert ok.csv out.btape --from blktrace; run convert ok.csv out.btape --from vscsi
run convert missing.csv out.btape; run convert good.btape out.btape
echo "same errors: $n commands, $bad differ"
[ $bad = 0 ]
