#!/bin/bash
# Paired A/B of two biotape builds on one trace: `biotape analyze TRACE` (full text report),
# OLD and NEW back to back PAIRS times (the order alternates), CPU time (user+sys) of each.
# Prints the medians and minima of each and the median (and quartiles) of the per-pair ratio
# NEW/OLD: on a noisy shared machine a pair's two runs see about the same load, so the paired
# ratio is steadier than a ratio of medians. Not run by the test suite.
#   usage: bench/analyze/ab.sh OLD_BIOTAPE NEW_BIOTAPE TRACE [PAIRS (15)]
set -u
OLD=$1
NEW=$2
TRACE=$3
PAIRS=${4:-15}
T=$(mktemp)
trap 'rm -f "$T" "$T.t"' EXIT
for i in $(seq "$PAIRS"); do
	if [ $((i % 2)) = 0 ]; then order="$OLD $NEW"; else order="$NEW $OLD"; fi
	for b in $order; do
		/usr/bin/time -f "%U %S" -o "$T.t" "$b" analyze "$TRACE" >/dev/null ||
			{ echo "$b analyze $TRACE failed" >&2; exit 1; }
		[ "$b" = "$OLD" ] && tag=old || tag=new
		echo "$i $tag $(awk '{ print $1 + $2 }' "$T.t")" >>"$T"
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
print(f"pairs {len(r)}: old median {st.median(o.values()):.3f} s (min {min(o.values()):.3f}), "
      f"new median {st.median(n.values()):.3f} s (min {min(n.values()):.3f}); "
      f"paired new/old median {st.median(r):.3f} (quartiles {q(.25):.3f} .. {q(.75):.3f})")
PY
