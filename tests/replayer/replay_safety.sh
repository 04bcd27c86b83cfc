#!/bin/bash
# Writes destroy data: a device with a filesystem signature, a mounted device, and a trace
# with writes (without --write) are all refused, and the device is left as it was. A missing
# target in /dev is an error, never a file made there (docs/SAFETY.md).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup mkfs.ext4 mount blkid
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -o "$D/w.btape" -n 300 -r 50000 -p randwrite -S $((16 << 20)) || fail "gen"
"$GEN" -o "$D/r.btape" -n 300 -r 50000 -p randread -S $((16 << 20)) || fail "gen"
t_loop 32
A=$LOOP

# a trace with writes: refused without --write (exit 2), the device untouched
sum0=$(md5sum <"$A")
"$BIOTAPE" replay "$D/w.btape" --target "$A" --no-progress >/dev/null 2>"$D/err"; rc=$?
[ $rc = 2 ] || fail "writes without --write: exit $rc"
grep -q -- "--write" "$D/err" || fail "refusal does not say how: $(cat "$D/err")"
[ "$(md5sum <"$A")" = "$sum0" ] || fail "refused replay changed the device"

# a filesystem signature: refused with --write, accepted with --force
mkfs.ext4 -q -F "$A" || fail "mkfs.ext4"
sum1=$(md5sum <"$A")
"$BIOTAPE" replay "$D/w.btape" --target "$A" --write --no-progress >/dev/null 2>"$D/err"; rc=$?
[ $rc = 1 ] || fail "ext4 signature: exit $rc, want 1"
grep -q "an ext4 signature" "$D/err" || fail "refusal does not name the signature: $(cat "$D/err")"
[ "$(wc -l <"$D/err")" = 1 ] || fail "refusal is not one line"
[ "$(md5sum <"$A")" = "$sum1" ] || fail "refused replay changed the device"
# reads need no permission, whatever the device holds
"$BIOTAPE" replay "$D/r.btape" --target "$A" --no-progress >/dev/null || fail "read-only replay refused"

# mounted: refused even with --force
M=$D/mnt
mkdir -p "$M"
mount "$A" "$M" || skip "cannot mount ext4 here"
"$BIOTAPE" replay "$D/w.btape" --target "$A" --write --force --no-progress >/dev/null \
	2>"$D/err"; rc=$?
umount "$M"
[ $rc = 1 ] || fail "mounted device: exit $rc, want 1"
grep -qi "mounted\|in use" "$D/err" || fail "refusal does not say mounted: $(cat "$D/err")"
# (mounting changes the device itself: check the filesystem is still consistent instead)
e2fsck -fn "$A" >/dev/null 2>&1 || fail "the filesystem is damaged after a refused replay"
sum1=$(md5sum <"$A")

# a partition table: refused too
t_loop 32
P=$LOOP
# a DOS MBR with one Linux partition (sectors 2048..34815), written by hand
python3 - "$P" <<'PY' || fail "writing an MBR"
import struct, sys
mbr = bytearray(512)
mbr[440:444] = b"\x12\x34\x56\x78"
mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 32768)
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f:
    f.write(mbr)
PY
blkid -p "$P" | grep -q PTTYPE || skip "blkid does not see the hand-made MBR"
"$BIOTAPE" replay "$D/w.btape" --target "$P" --write --no-progress >/dev/null 2>"$D/err"; rc=$?
[ $rc = 1 ] || fail "partition table: exit $rc, want 1"
grep -qi "dos\|signature" "$D/err" || fail "refusal: $(cat "$D/err")"

# --force on the unmounted ext4 device: replays the writes
"$BIOTAPE" replay "$D/w.btape" --target "$A" --write --force --no-progress >/dev/null ||
	fail "--force replay failed"
[ "$(md5sum <"$A")" != "$sum1" ] || fail "--force replay wrote nothing"

# a mistyped device name: an error, even read-only, and even with --create nothing is made in
# /dev (it once made a 256 MiB file there and exited 0)
N=/dev/biotape-test-nodev-$$
T_FILES+=("$N") # a broken build would leave it
for extra in "" "--create auto" "--create 1M"; do
	# shellcheck disable=SC2086
	"$BIOTAPE" replay "$D/r.btape" --target "$N" --writes-as-reads $extra --no-progress \
		>/dev/null 2>"$D/err"; rc=$?
	[ $rc = 1 ] || fail "missing /dev target ($extra): exit $rc, want 1"
	[ ! -e "$N" ] || fail "a file was made in /dev ($extra)"
	grep -q "no such device" "$D/err" || fail "missing /dev target ($extra): $(cat "$D/err")"
	[ "$(wc -l <"$D/err")" = 1 ] || fail "missing /dev target ($extra): not one line"
done
# /dev/shm is no device directory: --create works there
"$BIOTAPE" replay "$D/r.btape" --target "$D/made" --create auto --buffered --no-progress \
	--engine null >/dev/null || fail "--create in /dev/shm refused"
[ -f "$D/made" ] || fail "--create in /dev/shm made nothing"
pass
