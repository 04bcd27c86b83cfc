#!/usr/bin/env bash
# gen_trace (bench/gen/gen_trace.c), the one generator of the tests' and benchmarks' traces:
# the same traces as the four generators it replaced, deterministic, and bad usage refused.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
d=$(t_tmpdir) || exit 1

# The analyzer's tests check exact figures of -p mixed traces, and bench/convert's results
# were measured on its inputs: these digests are those of the old generators' output
# (bench/analyze/gen_trace.c "2000 F 1" and GEN_MODE=bare "500 F 3 1", bench/convert/gen.c: in
# git history).
digest() { md5sum | cut -d' ' -f1; }
"$GEN" -p mixed -n 2000 -x 1 -o "$d/m.btape" || fail "gen mixed"
[ "$("$BIOTAPE" dump --csv "$d/m.btape" | digest)" = babf96628f95d9bc56f1c232674d645c ] ||
	fail "-p mixed -x 1 is not the analyzer benchmark's trace"
"$GEN" -p mixed -B -n 500 -x 3 -S 1G -o "$d/b.btape" || fail "gen mixed bare"
[ "$("$BIOTAPE" dump --csv "$d/b.btape" | digest)" = 79f8c1f5a7fda18ebf7ee9a534279df9 ] ||
	fail "-p mixed -B -S 1G is not the old bare trace"
for want in alibaba:1000:9c4b62a5349505b98bae51f2f306ad17 \
	blktrace:999:65ab7e9ebbbfb0091d72bb123ff88c75 vscsi2:1000:77d3719136dc072e39b12870282df7ad; do
	IFS=: read -r p n sum <<<"$want"
	[ "$("$GEN" -p "$p" -n "$n" -o - | digest)" = "$sum" ] || fail "-p $p is not bench/convert's input"
	"$GEN" -p "$p" -n "$n" -o "$d/$p.in" || fail "gen -p $p to a file"
	[ "$(digest <"$d/$p.in")" = "$sum" ] || fail "-p $p: the file differs from stdout"
done

# Deterministic: the same options give the same file; another seed another trace.
"$GEN" -p mix:50 -n 3000 -x 5 -o "$d/u1.btape" || fail "gen uniform"
"$GEN" -p mix:50 -n 3000 -x 5 -o "$d/u2.btape" || fail "gen uniform again"
cmp -s "$d/u1.btape" "$d/u2.btape" || fail "two runs with the same seed differ"
"$GEN" -p mix:50 -n 3000 -x 6 -o "$d/u3.btape" || fail "gen uniform, seed 6"
cmp -s "$d/u1.btape" "$d/u3.btape" && fail "another seed gave the same trace"
# -F and -D every Nth event; -i declares devices without I/O
"$GEN" -p seqwrite -n 100 -F 10 -D 5 -i 2 -N x -o "$d/fd.btape" || fail "gen -F -D -i"
"$BIOTAPE" info --json "$d/fd.btape" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["ops"]["flush"]["count"] == 10 and j["ops"]["discard"]["count"] == 10, j["ops"]
assert [x["name"] for x in j["devices"]] == ["x0", "x1", "x2"], j["devices"]' || fail "-F -D -i"

# Bad usage: exit 2, one line on stderr, nothing written.
bad() {
	local rc=0
	"$GEN" "$@" 2>"$d/err" || rc=$?
	[ $rc = 2 ] || fail "gen_trace $*: exit $rc, want 2"
	[ "$(wc -l <"$d/err")" = 1 ] || fail "gen_trace $*: stderr not one line: $(cat "$d/err")"
}
bad -n 10
bad -o "$d/x" -p nosuch
bad -o "$d/x" -p mixed -q 4
bad -o "$d/x" -p known -x 1
bad -o "$d/x" -n 10Q
bad -o "$d/x" -Z
bad -o "$d/x" -p mix:101
bad -o "$d/x" stray
[ ! -e "$d/x" ] || fail "a refused run wrote its output"
# an OUT that is not a regular file is never replaced by the writer's rename
mkfifo "$d/fifo"
bad -o "$d/fifo"
[ -p "$d/fifo" ] || fail "the fifo was replaced"
pass
