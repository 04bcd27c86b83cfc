#!/usr/bin/env bash
# .btape -> fio iolog v3 -> .btape keeps every I/O (op, offset, size, time to the microsecond),
# and fio itself accepts the exported iolog and issues exactly those I/Os (checked with the
# iolog fio writes of what it did, --write_iolog).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
D=$(t_tmpdir) || exit 1
command -v fio >/dev/null || fail "fio is needed (Debian package fio)"

# a workload with reads, writes, several sizes and random offsets within 16 MiB, one device
awk 'BEGIN { srand(7); t = 1000000; for (i = 0; i < 400; i++) {
	t += int(rand() * 50000) + 1000; sz = 2 ^ int(rand() * 5 + 3);
	sec = int(rand() * (32768 - sz)); printf "%d 0 %d %d %d\n", t, sec, sz, (rand() < 0.6) } }' >"$D/w.trace"
"$BIOTAPE" convert -q "$D/w.trace" "$D/w.btape" || fail "import of the workload failed"
"$BIOTAPE" convert -q --to csv "$D/w.btape" "$D/w.csv" || fail "csv export failed"

target=$D/target.img
truncate -s 16M "$target" || fail "truncate"
"$BIOTAPE" convert -q "$D/w.btape" "$D/w.iolog" --to fio3 --target "$target" ||
	fail "fio iolog export failed"
head -1 "$D/w.iolog" | grep -qx "fio version 3 iolog" || fail "no fio v3 header"
n=$(grep -cE ' (read|write) ' "$D/w.iolog")
[ "$n" = 400 ] || fail "iolog has $n I/O lines, expected 400"

# round trip: every I/O back, times to the microsecond (relative to the first I/O)
"$BIOTAPE" convert "$D/w.iolog" "$D/back.btape" >"$D/out" 2>"$D/err" || fail "re-import failed: $(cat "$D/err")"
grep -q "(fio3)" "$D/out" || fail "exported iolog not detected as fio3: $(cat "$D/out")"
"$BIOTAPE" convert -q --to csv "$D/back.btape" "$D/back.csv" || fail "csv export failed"
awk -F, 'NR == 2 { t0 = $1 } NR > 1 { printf "%d %s %s %s\n", int(($1 - t0) / 1000) * 1000, $5, $6, $7 }' "$D/w.csv" >"$D/exp"
awk -F, 'NR > 1 { printf "%d %s %s %s\n", $1, $5, $6, $7 }' "$D/back.csv" >"$D/got"
diff -u "$D/exp" "$D/got" >"$D/diff" || fail "round trip changed I/Os: $(head -20 "$D/diff")"

# fio replays the file: the I/Os it issued (its per-I/O completion log: time, clat, ddir, bs,
# offset) equal ours, and its totals match the trace
fio --name=replay --read_iolog="$D/w.iolog" --ioengine=psync --filename="$target" \
	--replay_no_stall=1 --write_lat_log="$D/lat" --log_offset=1 --output-format=json \
	--output="$D/fio.json" >"$D/fio.out" 2>&1 || fail "fio rejected the iolog: $(tail -5 "$D/fio.out")"
awk '$3 == "read" || $3 == "write" { print $3, $4, $5 }' "$D/w.iolog" | sort >"$D/ours"
awk -F', ' '{ print ($3 == 0 ? "read" : $3 == 1 ? "write" : "ddir" $3), $5, $4 }' "$D/lat_clat.1.log" | sort >"$D/fios"
[ -s "$D/fios" ] || fail "fio logged no I/O: $(cat "$D/fio.out")"
cmp -s "$D/ours" "$D/fios" || fail "fio issued other I/Os: $(diff "$D/ours" "$D/fios" | head -10)"
reads=$(awk -F, 'NR > 1 && $7 == "read"' "$D/w.csv" | wc -l)
writes=$(awk -F, 'NR > 1 && $7 == "write"' "$D/w.csv" | wc -l)
got=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["read"]["total_ios"], j["write"]["total_ios"])' "$D/fio.json") ||
	fail "cannot read fio's JSON output"
[ "$got" = "$reads $writes" ] || fail "fio counted '$got' reads/writes, trace has '$reads $writes'"

# several devices without --target: one file per device name, each added and opened once
printf '1000 0 0 8 1\n2000 1 8 8 0\n3000 0 16 8 0\n' >"$D/two.trace"
"$BIOTAPE" convert -q "$D/two.trace" "$D/two.btape" && "$BIOTAPE" convert -q "$D/two.btape" "$D/two.iolog" ||
	fail "two-device export failed"
[ "$(grep -c ' add$' "$D/two.iolog")" = 2 ] || fail "expected 2 add lines: $(cat "$D/two.iolog")"
[ "$(grep -c ' close$' "$D/two.iolog")" = 2 ] || fail "expected 2 close lines: $(cat "$D/two.iolog")"
grep -q '^1 1 write 4096 4096$' "$D/two.iolog" || fail "device 1 write missing: $(cat "$D/two.iolog")"
pass "fio iolog v3 round trip keeps every I/O and fio replays exactly those I/Os"
