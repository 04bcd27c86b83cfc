#!/bin/bash
# replay --order causal on many threads in one think window (no root: null engine, a file
# target). The causal source of an I/O is its own thread's latest completion within the think
# window; it was found by walking back over every thread's completions in the window, so
# 50 000 threads of one I/O each, all at one instant (a 3 KB trace), took 11 s of CPU (300 000:
# 72 s) and the replay fell seconds behind its deadlines. Now it is one lookup per I/O: the
# replay must take well under a second of CPU, and keep to its deadlines.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
command -v python3 >/dev/null || skip "needs python3"
D=$(t_tmpdir) || exit 1
N=50000
python3 - "$N" >"$D/t.blkparse" <<'PY' || fail "python"
import sys
n = int(sys.argv[1])
for i in range(n):
    print("  8,0    1 %8d     1.000000000  %d  Q   R %d + 8 [p]" % (i, 1000 + i, i * 8))
for i in range(n):
    print("  8,0    1 %8d     1.000000000  0  C   R %d + 8 [0]" % (n + i, i * 8))
PY
"$BIOTAPE" convert -q "$D/t.blkparse" "$D/t.btape" || fail "convert"
truncate -s $((N * 4096)) "$D/tgt"
/usr/bin/env time -f "%U %S" -o "$D/cpu" timeout -s KILL 120 "$BIOTAPE" replay "$D/t.btape" \
	--target "$D/tgt" --engine null --order causal --no-progress --json >"$D/out.json" ||
	fail "replay exit $? ($(cat "$D/cpu"))"
read -r user sys <"$D/cpu"
echo "replay of $N threads: ${user}s user, ${sys}s system"
awk -v u="$user" 'BEGIN { exit !(u < 2.0) }' ||
	fail "--order causal over $N threads took ${user}s of CPU (want < 2 s)"
python3 - "$D/out.json" "$N" <<'PY' || fail "replay result: $(head -c 300 "$D/out.json")"
import json, sys
j, n = json.load(open(sys.argv[1])), int(sys.argv[2])
assert j["order"] == "causal" and j["cross_thread"] == "off", (j["order"], j["cross_thread"])
assert j["ios"] == n and j["errors"] == 0, (j["ios"], j["errors"])
PY
pass
