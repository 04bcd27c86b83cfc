#!/bin/bash
# A partial completion followed by a requeue (loop retries a short read so: here the backing
# file is cut 6 KiB short of the device) is ONE event for the whole request: its first sector
# and full size, the final error, not the remainder of the reissue.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3 dd truncate
D=$(t_tmpdir) || exit 1
t_loop 16
rec_nomerge
F=$(losetup -n -O BACK-FILE "$LOOP")
truncate -s $((16 * 1024 * 1024 - 6144)) "$F" || fail "truncate"
# The last 64 KiB of the device: 58 KiB come back, the requeued rest reads nothing (EIO).
# dd fails (EIO), and record exits with dd's status (1) after a complete recording.
rc=0
"$BIOTAPE" record -o "$D/t.btape" -d "$LOOP" -- \
	dd if="$LOOP" of=/dev/null bs=64k skip=255 count=1 iflag=direct 2>"$D/err" || rc=$?
[ "$rc" = 1 ] && grep -q "command exited with status 1" "$D/err" ||
	{ cat "$D/err"; fail "record: exit $rc"; }
"$BIOTAPE" dump --csv "$D/t.btape" > "$D/t.csv" || fail "dump"
cat "$D/t.csv"
n=$(tail -n +2 "$D/t.csv" | wc -l)
[ "$n" = 1 ] || fail "$n events for one read request"
IFS=, read -r _ _ _ _ sector bytes op _ error _ < <(tail -n 1 "$D/t.csv")
[ "$op" = read ] || fail "op $op"
[ "$sector" = $((255 * 128)) ] || fail "sector $sector, expected the request's first, $((255 * 128))"
[ "$bytes" = 65536 ] || fail "bytes $bytes, expected the whole request (65536)"
[ "$error" = -5 ] || fail "error $error, expected -5 (the short read ends in EIO)"
pass "record_requeue: partial completion + requeue recorded as the whole request"
