#!/usr/bin/env bash
# A real recording (biotape record on a loop device) through the exporters and back:
# blkparse text keeps every field that text carries (times, device, sector, size, op, error,
# pid, comm, cpu); fio iolog v3 keeps every I/O, and fio replays it with the same counts.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root fio dd
D=$(t_tmpdir) || exit 1
t_loop 64

"$BIOTAPE" record -o "$D/rec.btape" -d "$LOOP" -- bash -c "
	dd if=/dev/urandom of=$LOOP bs=4k count=300 oflag=direct status=none &&
	dd if=$LOOP of=/dev/null bs=16k count=100 iflag=direct status=none &&
	dd if=/dev/zero of=$LOOP bs=64k seek=100 count=20 oflag=direct status=none" \
	>"$D/rec.out" 2>&1 || skip "biotape record cannot run here: $(tail -2 "$D/rec.out")"
"$BIOTAPE" convert -q --to csv "$D/rec.btape" "$D/rec.csv" || fail "csv export failed"
n=$(($(wc -l <"$D/rec.csv") - 1))
[ "$n" -ge 420 ] || fail "recorded only $n I/Os (expected at least 420)"

# blkparse text and back: every field blkparse carries is unchanged
"$BIOTAPE" convert -q --to blkparse "$D/rec.btape" "$D/rec.txt" || fail "blkparse export failed"
"$BIOTAPE" convert "$D/rec.txt" "$D/back.btape" >"$D/out" 2>"$D/err" ||
	fail "re-import of the blkparse text failed: $(cat "$D/err")"
grep -q "(blkparse)" "$D/out" || fail "blkparse export not detected as blkparse: $(cat "$D/out")"
"$BIOTAPE" convert -q --to csv "$D/back.btape" "$D/back.csv" || fail "csv export failed"
# columns: issue,complete,insert,dev,sector,bytes,op,flags,error,pid,tid,comm,cgroup,cpu,qd
cols() { awk -F, 'NR > 1 { print $1, $2, $3, $4, $5, $6, $7, $9, $10, $12, $14 }' "$1"; }
diff <(cols "$D/rec.csv") <(cols "$D/back.csv") >"$D/diff" ||
	fail "blkparse round trip changed records: $(head -6 "$D/diff")"

# fio iolog v3 and back: op, sector, size, time to the microsecond
"$BIOTAPE" convert -q --to fio3 --target "$D/target.img" "$D/rec.btape" "$D/rec.iolog" ||
	fail "fio export failed"
"$BIOTAPE" convert -q "$D/rec.iolog" "$D/fio.btape" || fail "re-import of the iolog failed"
"$BIOTAPE" convert -q --to csv "$D/fio.btape" "$D/fio.csv" || fail "csv export failed"
awk -F, 'NR == 2 { t0 = $1 } NR > 1 { printf "%d %s %s %s\n", int(($1 - t0) / 1000) * 1000, $5, $6, $7 }' "$D/rec.csv" >"$D/exp"
awk -F, 'NR > 1 { printf "%d %s %s %s\n", $1, $5, $6, $7 }' "$D/fio.csv" >"$D/got"
diff -u "$D/exp" "$D/got" >"$D/diff" || fail "fio round trip changed I/Os: $(head -10 "$D/diff")"

# fio replays the recording on a file: the same number of reads and writes
truncate -s 64M "$D/target.img"
fio --name=replay --read_iolog="$D/rec.iolog" --ioengine=psync --filename="$D/target.img" \
	--replay_no_stall=1 --output-format=json --output="$D/fio.json" >"$D/fio.out" 2>&1 ||
	fail "fio rejected the exported iolog: $(tail -5 "$D/fio.out")"
exp=$(awk -F, 'NR > 1 && $7 == "read" { r++ } NR > 1 && $7 == "write" { w++ } END { print r + 0, w + 0 }' "$D/rec.csv")
got=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["read"]["total_ios"], j["write"]["total_ios"])' "$D/fio.json") ||
	fail "cannot read fio's JSON"
[ "$exp" = "$got" ] || fail "fio replayed '$got' reads/writes, the recording has '$exp'"
pass "a recorded trace survives blkparse and fio iolog export and re-import; fio replays it"
