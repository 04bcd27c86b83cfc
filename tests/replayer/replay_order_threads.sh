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
# causal_cpu NAME WHAT MAX: converts $D/NAME.blkparse, replays it with --order causal on the
# null engine, and fails when that takes MAX s of user CPU or more
causal_cpu() {
	"$BIOTAPE" convert -q "$D/$1.blkparse" "$D/$1.btape" || fail "convert ($2)"
	/usr/bin/env time -f "%U %S" -o "$D/cpu" timeout -s KILL 120 "$BIOTAPE" replay \
		"$D/$1.btape" --target "$D/tgt" --engine null --order causal --no-progress --json \
		>"$D/out.json" || fail "replay exit $? ($(cat "$D/cpu"))"
	read -r user sys <"$D/cpu"
	echo "replay of $2: ${user}s user, ${sys}s system"
	awk -v u="$user" -v m="$3" 'BEGIN { exit !(u < m) }' ||
		fail "--order causal over $2 took ${user}s of CPU (want < $3 s)"
}
truncate -s $((N * 4096)) "$D/tgt"
causal_cpu t "$N threads" 2.0
python3 - "$D/out.json" "$N" <<'PY' || fail "replay result: $(head -c 300 "$D/out.json")"
import json, sys
j, n = json.load(open(sys.argv[1])), int(sys.argv[2])
assert j["order"] == "causal" and j["cross_thread"] == "off", (j["order"], j["cross_thread"])
assert j["ios"] == n and j["errors"] == 0, (j["ios"], j["errors"])
PY

# Thread ids crafted to share one probe chain of the tracker's thread table: the pids whose
# key (pid | 1 << 32) the old fixed multiplicative hash put in one bucket at every table size
# (16,392 of them: 1.5 s of CPU against 0.01 s, quadratic in their number). The table's hash
# is now keyed by a random seed per run, so no file can know the chains.
command -v cc >/dev/null || skip "needs cc (to find the colliding pids)"
cat >"$D/collide.c" <<'C'
#include <stdint.h>
#include <stdio.h>
int main(void)
{
	for (uint64_t p = 1; p < 1ull << 32; p++)
		if (((((p | 1ull << 32) * 0x9E3779B97F4A7C15ull) >> 40) & 0x3FFFF) == 0)
			printf("%llu\n", (unsigned long long)p);
	return 0;
}
C
cc -O2 -o "$D/collide" "$D/collide.c" || fail "cc"
"$D/collide" >"$D/pids" || fail "collide"
python3 - "$D/pids" >"$D/c.blkparse" <<'PY' || fail "python"
import sys
p = [int(x) for x in open(sys.argv[1])]
for i, pid in enumerate(p):
    print("  8,0    1 %8d     1.000000000  %d  Q   R %d + 8 [p]" % (i, pid, i * 8))
for i in range(len(p)):
    print("  8,0    1 %8d     1.000000000  0  C   R %d + 8 [0]" % (len(p) + i, i * 8))
PY
M=$(wc -l <"$D/pids")
[ "$M" -gt 16000 ] || fail "only $M colliding pids"
causal_cpu c "$M threads with colliding ids" 0.5
pass
