#!/usr/bin/env bash
# Small traces that must not cost what they describe (docs/ANALYSIS.md, "Working set"):
# 300 000 reads of 8 MiB fill the working set's extent table (2^19 edges), then 6 000 reads of
# 4 GiB each went block by block, a million blocks a read: a 2.5 KB trace took 15 s of CPU per
# pass (20 000 such reads: a minute; compare makes four passes). Past a budget of blocks
# counted one by one, a large I/O is left out and the working set says so ("at least").
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
command -v python3 >/dev/null || skip "needs python3"
D=$(t_tmpdir) || exit 1
python3 - >"$D/big.csv" <<'PY' || fail "python"
t = 128166372003061629  # MSR: Windows filetime, 100 ns
n = 300000
for i in range(n):
    print("%d,h,1,Read,%d,%d,100" % (t + i * 1000, i * (16 << 20), 8 << 20))
for j in range(6000):
    print("%d,h,1,Read,%d,%d,100" % (t + (n + j) * 1000, (1 << 40) + j * (8 << 30), (1 << 32) - 4096))
PY
"$BIOTAPE" convert -q "$D/big.csv" "$D/big.btape" || fail "convert"
[ "$(stat -c %s "$D/big.btape")" -lt 16384 ] || fail "the trace is not small: $(stat -c %s "$D/big.btape") bytes"
/usr/bin/env time -f "%U" -o "$D/cpu" timeout -s KILL 300 "$BIOTAPE" analyze --json "$D/big.btape" \
	>"$D/out.json" || fail "analyze exit $?"
user=$(tail -1 "$D/cpu")
echo "analyze: ${user}s of CPU"
awk -v u="$user" 'BEGIN { exit !(u < 6.0) }' || fail "analyze took ${user}s of CPU (want < 6 s)"
python3 - "$D/out.json" <<'PY' || fail "working set: $(grep -o '"working_set":{[^}]*' "$D/out.json")"
import json, sys
w = json.load(open(sys.argv[1]))["working_set"]
assert not w["exact"] and w["large_ios_not_counted"] > 0, w
# what was counted: at least every 8 MiB read's 2048 blocks (300 000 of them, sampled)
assert w["blocks"] > 0.9 * 300000 * 2048, w
PY
"$BIOTAPE" analyze "$D/big.btape" | grep -q "at least: [0-9]* I/Os of more than 1024 blocks not counted" ||
	fail "the text report does not say the working set is a lower bound"
pass
