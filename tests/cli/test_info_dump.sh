#!/usr/bin/env bash
# biotape info / dump on a generated trace with exactly known contents (gen_trace -p known: bench/gen/gen_trace.c).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
d=$(t_tmpdir) || exit 1
N=1000

"$GEN" -p known -n $N -o "$d/t.btape" || fail "gen_trace"
[ -z "$(ls "$d" | grep tmp)" ] || fail "temporary file left behind"

# info --json: counts computed here from the generator's rule.
"$BIOTAPE" info --json "$d/t.btape" > "$d/info.json" || fail "info --json exit $?"
python3 - "$d/info.json" $N <<'PY' || fail "info --json content"
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2])
writes = sum(1 for i in range(n) if i % 3 == 0)
assert j["events"] == n, j["events"]
assert j["ops"]["write"]["count"] == writes and j["ops"]["read"]["count"] == n - writes, j["ops"]
assert j["ops"]["read"]["bytes"] == 4096 * (n - writes)
assert j["first_issue_ns"] == 1000000000 and j["last_issue_ns"] == 1000000000 + (n - 1) * 1000000
assert j["integrity"]["verified"] and j["integrity"]["has_footer"] and not j["integrity"]["recovered"]
assert [x["name"] for x in j["devices"]] == ["loop7", "disk,b"], j["devices"]
assert j["tags"] == {"run": "t1"} and j["hostname"] == "testhost"
assert j["lost"]["total"] == 0
PY
"$BIOTAPE" info "$d/t.btape" > "$d/info.txt" || fail "info exit $?"
grep -q "events: *$N in" "$d/info.txt" || fail "info text lacks the event count"
grep -q "every frame's checksum verified" "$d/info.txt" || fail "info text lacks integrity"

# dump --csv: every row equals what the generator wrote; absent fields are empty.
"$BIOTAPE" dump --csv "$d/t.btape" > "$d/dump.csv" || fail "dump --csv exit $?"
awk -v n=$N 'BEGIN {
	print "issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,flags,error,pid,tid,comm,cgroup,cpu,qd"
	for (i = 0; i < n; i++) {
		issue = 1000000000 + i * 1000000; op = (i % 3 == 0) ? "write" : "read"
		if (i % 4 == 3)
			printf "%d,,,%d,%d,4096,%s,,,,,,,,\n", issue, i % 2, i * 8, op
		else
			printf "%d,%d,,%d,%d,4096,%s,%s,,%d,,p%d,,,1\n", issue, issue + 100000 + i,
				i % 2, i * 8, op, (op == "write") ? "S" : "", 100 + i % 2, i % 2
	}
}' > "$d/expect.csv"
diff -q "$d/expect.csv" "$d/dump.csv" >/dev/null || { diff "$d/expect.csv" "$d/dump.csv" | head; fail "dump --csv differs"; }

# Windows and limits.
[ "$("$BIOTAPE" dump --from 100ms --to 200ms "$d/t.btape" | wc -l)" = 100 ] || fail "--from/--to window"
[ "$("$BIOTAPE" dump --from 990ms "$d/t.btape" | wc -l)" = 10 ] || fail "--from near the end"
[ "$("$BIOTAPE" dump --limit 5 "$d/t.btape" | wc -l)" = 5 ] || fail "--limit"
[ "$("$BIOTAPE" dump --from 5s "$d/t.btape" | wc -l)" = 0 ] || fail "empty window"
"$BIOTAPE" dump --json --limit 4 "$d/t.btape" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows[0]["comm"] == "p0" and rows[0]["dev_name"] == "loop7" and rows[0]["flags"] == "S"
assert "complete_ns" not in rows[3] and "pid" not in rows[3]
assert rows[1]["complete_ns"] - rows[1]["issue_ns"] == 100001' || fail "dump --json"
"$BIOTAPE" dump "$d/t.btape" | head -1 | grep -q "loop7 *write" || fail "dump text"

# Bad input: one line on stderr, exit 2 (bad input) or 1 (cannot open); nothing on stdout.
expect_error() { # expected-status file args...
	local want=$1 f=$2 rc
	shift 2
	"$BIOTAPE" "$@" "$f" >"$d/out" 2>"$d/err"; rc=$?
	[ "$rc" = "$want" ] || fail "$* $f: exit $rc, want $want"
	[ "$(wc -l <"$d/err")" = 1 ] || { cat "$d/err"; fail "$* $f: want exactly one line on stderr"; }
	grep -q '^biotape: ' "$d/err" || fail "$* $f: message lacks the biotape: prefix"
}
printf 'this is not a trace\n' > "$d/foreign"
expect_error 2 "$d/foreign" info
expect_error 2 "$d/foreign" dump
: > "$d/empty"
expect_error 2 "$d/empty" info
expect_error 1 "$d/missing" info
expect_error 2 "$d/t.btape" dump --from
expect_error 2 "$d/t.btape" dump --limit x

# A flipped byte in the middle: info names the damage and exits 2.
cp "$d/t.btape" "$d/flip.btape"
size=$(stat -c %s "$d/flip.btape")
python3 - "$d/flip.btape" $((size / 2)) <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[off] ^= 0x40; open(p, "wb").write(b)
PY
"$BIOTAPE" info "$d/flip.btape" >"$d/out" 2>"$d/err" && fail "damaged file passed info"
grep -qi "frame" "$d/err" || { cat "$d/err"; fail "damage message does not name the frame"; }

# Cut short: every complete chunk readable, reported as recovered.
head -c $((size * 2 / 3)) "$d/t.btape" > "$d/cut.btape"
"$BIOTAPE" info "$d/cut.btape" > "$d/cut.txt" || fail "info on a cut file exit $?"
grep -q "recovered: no footer (the writer did not finish)" "$d/cut.txt" ||
	fail "cut file not reported as recovered: $(grep integrity "$d/cut.txt")"

# A damaged trailer: the writer finished, so info says the footer is damaged, not that the
# writer did not finish; the events stay readable.
cp "$d/t.btape" "$d/trailer.btape"
python3 - "$d/trailer.btape" $((size - 2)) <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[off] ^= 0x40; open(p, "wb").write(b)
PY
"$BIOTAPE" info --no-verify "$d/trailer.btape" >"$d/tr.txt" || fail "info on a damaged trailer"
grep -q "the footer is damaged: summary recomputed from the events" "$d/tr.txt" ||
	fail "damaged trailer: $(grep integrity "$d/tr.txt")"
grep -q "did not finish" "$d/tr.txt" && fail "damaged trailer called unfinished"
"$BIOTAPE" info --json --no-verify "$d/trailer.btape" >"$d/tr.json" || fail "info --json, damaged trailer"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["integrity"]
assert j["footer_damaged"] and not j["has_footer"], j' "$d/tr.json" || fail "damaged trailer JSON"
got=$("$BIOTAPE" dump --csv "$d/cut.btape" | tail -n +2 | wc -l)
[ "$got" -ge 100 ] && [ "$got" -lt $N ] || fail "cut file: $got events readable"
"$BIOTAPE" dump --csv "$d/cut.btape" | head -n $((got + 1)) | diff -q - <(head -n $((got + 1)) "$d/expect.csv") >/dev/null \
	|| fail "cut file: events differ from the original prefix"

# A writer killed before its footer (written in place): recovered, complete chunks intact.
"$GEN" -p known -k -n 550 -o "$d/killed.btape" && fail "gen_trace -k should die by SIGKILL"
"$BIOTAPE" info --json "$d/killed.btape" > "$d/k.json" || fail "info on a killed writer's file"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["integrity"]["recovered"] or not j["integrity"]["has_footer"], j["integrity"]
assert j["events"] == 550, j["events"]' "$d/k.json" || fail "killed writer's file: wrong recovery"
pass
