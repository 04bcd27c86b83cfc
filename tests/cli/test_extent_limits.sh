#!/usr/bin/env bash
# The extent limits (docs/BTAPE-FORMAT.md, "Extent limits": bytes <= 2^32 - 1, sector * 512 + bytes
# <= 2^63 - 1): importers refuse a line past them naming the line, and every reader of a .btape
# (info, dump, analyze, replay) refuses an event past them naming the frame and the event.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
GEN="$BIOTAPE_BIN_DIR/gen_bad_extent"
[ -x "$GEN" ] || skip "no generator at $GEN"
d=$(t_tmpdir) || exit 1

# refused CMD... : exit 2, one line on stderr that matches $WANT, no output file left
refused() {
	local err rc
	err=$("$BIOTAPE" "$@" 2>&1 >/dev/null); rc=$?
	[ $rc = 2 ] || fail "$*: exit $rc, want 2 ($err)"
	[ "$(wc -l <<<"$err")" = 1 ] || fail "$*: want one line, got: $err"
	grep -q "^biotape: " <<<"$err" || fail "$*: message format: $err"
	grep -q -- "$WANT" <<<"$err" || fail "$*: message lacks '$WANT': $err"
}

# ---- import: the line is named ----
printf 'fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n10 /dev/x read 0 18446744073709551615\n' \
	>"$d/huge.log"
WANT="huge.log:4: I/O at sector 0 of 18446744073709551615 bytes: past the limits of one I/O"
refused convert "$d/huge.log" "$d/huge.btape"
[ ! -e "$d/huge.btape" ] || fail "convert left an output after refusing"
# the limit itself is accepted, one byte more is not
printf 'fio version 3 iolog\n10 /dev/x read 0 4294967295\n' >"$d/max.log"
"$BIOTAPE" convert -q "$d/max.log" "$d/max.btape" || fail "convert of a 2^32 - 1 byte I/O"
printf 'fio version 3 iolog\n10 /dev/x read 0 4294967296\n' >"$d/over.log"
WANT="over.log:2: I/O at sector 0 of 4294967296 bytes"
refused convert "$d/over.log" "$d/over.btape"
# MSR: offset + size past 2^64 (offset 2^64 - 512, 4 KiB), on line 3 after a valid one
printf '128166372003061629,hm,1,Read,0,4096,100\n128166372003061630,hm,1,Write,18446744073709551104,4096,100\n' \
	>"$d/m.csv"
printf '128166372003061628,hm,1,Read,8192,4096,100\n' | cat - "$d/m.csv" >"$d/msr.csv"
WANT="msr.csv:3: I/O at sector 36028797018963967 of 4096 bytes: past the limits"
refused convert --from msr "$d/msr.csv" "$d/msr.btape"
# --skip-bad skips it as a malformed line and keeps the others
"$BIOTAPE" convert -q --skip-bad --from msr "$d/msr.csv" "$d/msr.btape" 2>/dev/null ||
	fail "convert --skip-bad"
n=$("$BIOTAPE" info --json "$d/msr.btape" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
[ "$n" = 2 ] || fail "--skip-bad kept $n events, want 2"

# ---- reading a .btape: the frame and the event are named ----
truncate -s 1G "$d/target" || fail "truncate"
for k in bytes wrap end; do
	"$GEN" "$d/$k.btape" $k || fail "gen_bad_extent $k"
	WANT="frame 1 at offset [0-9]*: event 1 of the chunk (sector [0-9]*, [0-9]* bytes): past the extent limits"
	refused info "$d/$k.btape"
	refused dump "$d/$k.btape"
	refused analyze "$d/$k.btape"
	refused analyze --json "$d/$k.btape"
	refused replay "$d/$k.btape" --target "$d/target" --engine null --timing afap
done
# ---- analyze: I/Os of the largest size count exactly, and at once ----
# 200 reads of 4 GiB - 4 KiB at 4 GiB steps (800 GiB, 200 Mi blocks), the first 100 twice
python3 -c '
L = (4 << 30) - 4096
print("fio version 3 iolog")
for i in range(300):
    print(i + 1, "/dev/x read", (i % 200) * (4 << 30), L)' >"$d/large.log"
"$BIOTAPE" convert -q "$d/large.log" "$d/large.btape" || fail "convert of large I/Os"
timeout 60 "$BIOTAPE" analyze --json "$d/large.btape" >"$d/large.json" || fail "analyze of large I/Os"
python3 - "$d/large.json" <<'PY' || fail "analyze of large I/Os: working set"
import json, sys
w = json.load(open(sys.argv[1]))["working_set"]
L = (4 << 30) // 4096 - 1
assert w["exact"] and w["blocks"] == 200 * L and w["blocks_read"] == 200 * L, w
assert w["blocks_written"] == 0 and w["block_accesses"] == 300 * L, w
assert abs(w["skew"]["hottest_50pct"] - 2 / 3) < 1e-9, w  # the 100 read twice
PY

# at the limit: readable everywhere
"$GEN" "$d/ok.btape" ok || fail "gen_bad_extent ok"
"$BIOTAPE" info "$d/ok.btape" >/dev/null || fail "info of an extent at the limit"
"$BIOTAPE" analyze "$d/ok.btape" >/dev/null || fail "analyze of an extent at the limit"
pass
