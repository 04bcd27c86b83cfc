#!/bin/bash
# Paired A/B of two biotape builds on one command: `OLD ARGS...` and `NEW ARGS...` back to back
# PAIRS times (the order alternates), CPU time (all threads) of each. Prints the
# medians and minima of each and the median (and quartiles) of the per-pair ratio NEW/OLD: on a
# noisy shared machine a pair's two runs see about the same load, so the paired ratio is
# steadier than a ratio of medians. With COUNT=1 it also counts each build's instructions once
# (valgrind --tool=callgrind, all threads), which do not move with the machine's load: give it
# a smaller input (callgrind runs about 50x slower). Not run by the test suite.
#   usage: bench/ab.sh OLD_BIOTAPE NEW_BIOTAPE [PAIRS (15)] -- ARGS...
#   e.g.   bench/ab.sh old/biotape new/biotape 11 -- convert -q in.csv /dev/shm/x/out.btape
set -u
OLD=$1
NEW=$2
shift 2
PAIRS=15
if [ "${1:-}" != -- ]; then
	PAIRS=$1
	shift
fi
[ "${1:-}" = -- ] && [ $# -gt 1 ] || {
	echo "usage: $0 OLD_BIOTAPE NEW_BIOTAPE [PAIRS] -- ARGS..." >&2
	exit 2
}
shift
T=$(mktemp)
trap 'rm -f "$T" "$T.t" "$T.p" "$T.cg"' EXIT
# cpu_s CMD...: runs CMD (its output discarded) and prints its CPU seconds: perf's task-clock
# (ns resolution, all threads) where perf runs, else user+sys from time(1) (10 ms resolution).
if perf stat -x, -e task-clock -o /dev/null true 2>/dev/null; then
	cpu_s() {
		perf stat -x, -e task-clock -o "$T.p" -- "$@" >/dev/null || return 1
		awk -F, '$3 == "task-clock" { printf "%.4f\n", $1 / 1000 }' "$T.p"
	}
else
	cpu_s() {
		/usr/bin/time -f "%U %S" -o "$T.p" "$@" >/dev/null || return 1
		awk '{ print $1 + $2 }' "$T.p"
	}
fi
for i in $(seq "$PAIRS"); do
	if [ $((i % 2)) = 0 ]; then order="$OLD $NEW"; else order="$NEW $OLD"; fi
	for b in $order; do
		cpu_s "$b" "$@" >"$T.t" || { echo "$b $* failed" >&2; exit 1; }
		[ "$b" = "$OLD" ] && tag=old || tag=new
		echo "$i $tag $(cat "$T.t")" >>"$T"
	done
done
python3 - "$T" <<'PY'
import statistics as st, sys
t = {"old": {}, "new": {}}
for line in open(sys.argv[1]):
    i, tag, s = line.split()
    t[tag][int(i)] = float(s)
o, n = t["old"], t["new"]
r = sorted(n[i] / o[i] for i in o)
q = lambda p: r[min(len(r) - 1, int(p * len(r)))]
print(f"pairs {len(r)}: old median {st.median(o.values()):.4f} s (min {min(o.values()):.4f}), "
      f"new median {st.median(n.values()):.4f} s (min {min(n.values()):.4f}); "
      f"paired new/old median {st.median(r):.3f} (quartiles {q(.25):.3f} .. {q(.75):.3f})")
PY
[ "${COUNT:-0}" = 1 ] || exit 0
for b in "$OLD" "$NEW"; do
	valgrind --tool=callgrind --callgrind-out-file="$T.cg" "$b" "$@" >/dev/null 2>&1 ||
		{ echo "callgrind $b $* failed" >&2; exit 1; }
	[ "$b" = "$OLD" ] && tag=old || tag=new
	eval "ir_$tag=$(awk '/^(summary|totals):/ { print $2; exit }' "$T.cg")"
done
echo "instructions: old $ir_old, new $ir_new, new/old $(echo "scale=4; $ir_new / $ir_old" | bc)"
