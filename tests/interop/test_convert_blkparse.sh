#!/usr/bin/env bash
# One blktrace trace imported in both forms, binary and real blkparse text (Debian's blkparse run
# over the binary files), gives the same records event by event: ext4 on a partition as a 6.x
# kernel records it, with jbd2's flush requests (blkparse "FN"), an empty preflush write ("FW"),
# a preflush+FUA commit write, a discard, and partition remaps that blkparse prints under the
# partition's dev_t, which must not become a device of its own.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
D=$(t_tmpdir) || exit 1
command -v python3 >/dev/null || fail "python3 is needed to write the binary fixture"
command -v blkparse >/dev/null || skip "needs blkparse (Debian package blktrace)"

python3 "$BIOTAPE_SRC/tests/interop/gen_binary.py" blktrace-ext4 "$D" || fail "gen_binary.py"
blkparse -i sdb -D "$D" -o "$D/sdb.txt" >/dev/null 2>"$D/bp.err" || fail "blkparse: $(cat "$D/bp.err")"
blkparse -t -i sdb -D "$D" -o "$D/sdb-t.txt" >/dev/null 2>&1 || fail "blkparse -t failed"
grep -q ' D  FN ' "$D/sdb.txt" && grep -q ' Q  FW ' "$D/sdb.txt" && grep -q '8,17 .* A ' "$D/sdb.txt" ||
	fail "blkparse output lacks the FN / FW / partition remap lines the test is about:
$(head -40 "$D/sdb.txt")"

# imp NAME IN...: imports into $D/NAME.btape, leaves $D/NAME.csv (dump --csv) and NAME.dump
imp() {
	local name=$1
	shift
	"$BIOTAPE" convert "$@" "$D/$name.btape" >"$D/$name.out" 2>"$D/$name.err" ||
		fail "$name: convert failed: $(cat "$D/$name.err")"
	"$BIOTAPE" dump --csv "$D/$name.btape" >"$D/$name.csv" || fail "$name: dump --csv failed"
	"$BIOTAPE" dump "$D/$name.btape" >"$D/$name.dump" || fail "$name: dump failed"
	"$BIOTAPE" info --json "$D/$name.btape" >"$D/$name.info" || fail "$name: info failed"
}
imp bin "$D/sdb.blktrace."
imp text --from blkparse "$D/sdb.txt"
imp text-t --from blkparse "$D/sdb-t.txt"
grep -q "(blktrace)" "$D/bin.out" && grep -q "(blkparse)" "$D/text.out" ||
	fail "formats not read as blktrace / blkparse: $(cat "$D/bin.out" "$D/text.out")"

# every record the same in both forms
for f in text text-t; do
	diff -u "$D/bin.csv" "$D/$f.csv" >"$D/diff" || fail "binary and $f imports differ:
$(cat "$D/diff")"
	diff -u "$D/bin.dump" "$D/$f.dump" >"$D/diff" || fail "binary and $f dumps differ:
$(cat "$D/diff")"
done
# and what they are (a fault shared by both importers shows here)
cat >"$D/exp.csv" <<'EOF'
issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,flags,error,pid,tid,comm,cgroup,cpu,qd
100,500,1,0,3048,4096,read,A,0,1234,,cat,,0,
1000,1800,901,0,2056,8192,read,SM,0,1234,,cat,,0,
3100,3900,2901,0,500000,8192,write,,0,697,,kworker/u8:2,,0,
5000,5100,,0,0,0,flush,P,0,,,,,0,
5200,5700,4901,0,90000,4096,write,SFP,0,420,,jbd2/sdb1-8,,0,
8000,8800,7900,0,0,0,flush,P,0,1300,,fsync-test,,0,
12000,12900,11901,0,700000,1048576,discard,,0,900,,fstrim,,0,
EOF
diff -u "$D/exp.csv" "$D/bin.csv" >"$D/diff" || fail "records not as expected:
$(cat "$D/diff")"

# one device in both: the remaps' 8,17 is no device of the trace
for f in bin text; do
	n=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(len(d["devices"]), d["devices"][0]["name"])' "$D/$f.info") ||
		fail "$f: info --json not readable"
	[ "$n" = "1 8,16" ] || fail "$f: device table is '$n', expected the one device 8,16"
done

# the flushes reach fio as sync, the discard as trim, nothing is dropped
"$BIOTAPE" convert --to fio3 "$D/text.btape" "$D/text.iolog" >"$D/fio.out" 2>"$D/fio.err" ||
	fail "fio3 export failed: $(cat "$D/fio.err")"
[ "$(grep -c ' sync$' "$D/text.iolog")" = 2 ] || fail "fio3 export: expected 2 sync lines:
$(cat "$D/text.iolog")"
[ "$(grep -c ' trim ' "$D/text.iolog")" = 1 ] || fail "fio3 export: expected 1 trim line"
! grep -q "not exported" "$D/fio.err" ||
	fail "fio3 export dropped events: $(cat "$D/fio.err")"

# biotape's own blkparse-style export reads back to the same records
"$BIOTAPE" convert -q --to blkparse "$D/bin.btape" "$D/export.txt" || fail "blkparse export failed"
imp back --from blkparse "$D/export.txt"
diff -u "$D/bin.csv" "$D/back.csv" >"$D/diff" || fail "blkparse export does not read back:
$(cat "$D/diff")"
pass "blktrace binary and real blkparse text of one trace give the same records"
