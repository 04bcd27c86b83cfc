#!/bin/bash
# Partitions that share sectors: a write is refused when any device on the same sectors is in
# use, with --force or without (docs/SAFETY.md). These were once accepted: a DOS extended
# partition over a mounted logical one (its first sector is the logical one's table); the same
# in another mount namespace (where only the exclusive claim shows it); the same where the
# claim cannot be asked (no node for p5, none can be made). The whole disk is refused; a
# partition sharing nothing with the mounted one is written, and so is the extended partition
# beside a mounted primary past its end (its real extent, from the table, does not reach it).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup partx mkfs.ext4 mount e2fsck python3
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -o "$D/w.btape" -n 300 -r 50000 -p randwrite -S $((4 << 20)) || fail "gen"
# 512-byte writes: the 1 KiB that the kernel gives an extended partition takes them
"$GEN" -o "$D/w512.btape" -n 300 -r 50000 -p randwrite -b 512 -S $((4 << 20)) || fail "gen"

# 64 MiB, DOS: p1 sectors 2048..18431; p2 extended 32768..98303, whose first sector is the
# table of logical p5 (34816..67583), then p6 (69632..86015); p3 100352..131071
F=$D/disk.img
truncate -s 64M "$F" || fail "truncate"
T_FILES+=("$F")
python3 - "$F" <<'PY' || fail "writing the partition tables"
import struct, sys
def entry(ptype, start, size):
    return struct.pack("<B3sB3sII", 0, b"\0\0\0", ptype, b"\0\0\0", start, size)
mbr = bytearray(512)
mbr[440:444] = b"\x12\x34\x56\x78"
mbr[446:462] = entry(0x83, 2048, 16384)
mbr[462:478] = entry(0x05, 32768, 65536)
mbr[478:494] = entry(0x83, 100352, 30720)
mbr[510:512] = b"\x55\xaa"
ebr = bytearray(512)
ebr[446:462] = entry(0x83, 2048, 32768)
ebr[462:478] = entry(0x05, 34816, 18432)  # the next table, from the extended start
ebr[510:512] = b"\x55\xaa"
ebr2 = bytearray(512)
ebr2[446:462] = entry(0x83, 2048, 16384)
ebr2[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f:
    f.write(mbr)
    f.seek(32768 * 512)
    f.write(ebr)
    f.seek(67584 * 512)
    f.write(ebr2)
PY
L=$(losetup -f --show -P --direct-io=on "$F") || skip "cannot create a loop device"
loop_adopt "$L"
# a kernel without the DOS parser (this one) takes them from partx (BLKPG)
[ -b "${L}p6" ] || partx -a "$L" 2>/dev/null
for _ in $(seq 50); do [ -b "${L}p6" ] && break; sleep 0.1; done
for p in 1 2 3 5 6; do [ -b "$L"p$p ] || skip "no partition node ${L}p$p (partition scan)"; done
[ "$(cat "/sys/class/block/$(basename "$L")p2/size")" -le 8 ] ||
	skip "p2 is not sized as an extended partition"

# refused TARGET WHY: replay --write --force of 512-byte writes onto TARGET is refused, naming
# WHY (--fit wrap: all of them would go to the extended partition's 1 KiB)
refused() {
	local rc=0
	"$BIOTAPE" replay "$D/w512.btape" --target "$1" --write --force --fit wrap --no-progress \
		>/dev/null 2>"$D/err" || rc=$?
	[ $rc = 1 ] || fail "--target $1 ($2): exit $rc, want 1 ($(cat "$D/err"))"
	[ "$(wc -l <"$D/err")" = 1 ] || fail "--target $1: not one line: $(cat "$D/err")"
	grep -q "refusing to write: .*$2" "$D/err" || fail "--target $1: message: $(cat "$D/err")"
}
written() {
	"$BIOTAPE" replay "$D/w.btape" --target "$1" --write --force --no-progress >/dev/null \
		2>"$D/err" || fail "--target $1 refused: $(cat "$D/err")"
}
# direct: a buffered read of the disk may show the old sector (p2's writes bypass its cache)
ebr() { dd if="$L" bs=512 skip=32768 count=1 iflag=direct status=none | md5sum; }

mkfs.ext4 -q -F "${L}p5" || fail "mkfs.ext4 p5"
mkfs.ext4 -q -F "${L}p3" || fail "mkfs.ext4 p3"
ebr0=$(ebr)
M=$D/mnt
mkdir "$M"
mount "${L}p5" "$M" || skip "cannot mount ext4 here"
T_MOUNTS+=("$M")
echo data >"$M/file" && sync
refused "${L}p2" "the device is mounted on $M (as ${L}p5, which shares sectors with it)"
refused "$L" "the device is mounted on $M (as ${L}p5, which shares sectors with it)"
written "${L}p1" # shares no sector with p5
umount "$M"
[ "$(ebr)" = "$ebr0" ] || fail "the logical partition's table changed"
e2fsck -fn "${L}p5" >/dev/null 2>&1 || fail "p5 is damaged after refused replays"

# mounted in another mount namespace: not in our mountinfo, but the mount claims p5
if t_ns_mount "${L}p5" "$M"; then
	refused "${L}p2" "the device is in use (an exclusive open of ${L}p5, which shares sectors"
	t_ns_umount
	[ "$(ebr)" = "$ebr0" ] || fail "the logical partition's table changed (namespace)"
fi

# no node for p5 or p6 in /dev and none can be made (a container): their claims cannot be
# asked (either may be asked first)
if unshare -m true 2>/dev/null && setpriv --bounding-set -mknod true 2>/dev/null; then
	S=$(mktemp -d /tmp/biotape-shm.XXXXXX) || fail "mktemp" # outside the hidden /dev
	T_FILES+=("$S")
	rc=0
	unshare -m --propagation private sh -c 'mount --rbind /dev/shm "$0" &&
		mount -t tmpfs tmpfs /dev && mkdir /dev/shm && mount --move "$0" /dev/shm &&
		mknod "$1" b $2 && shift 2 && exec setpriv --bounding-set -mknod "$@"' "$S" \
		"${L}p2" "$(stat -c '0x%t 0x%T' "${L}p2")" \
		"$BIOTAPE" replay "$D/w512.btape" --target "${L}p2" --write --force --fit wrap \
		--no-progress >/dev/null 2>"$D/err" || rc=$?
	[ $rc = 1 ] || fail "no node for p5: exit $rc, want 1 ($(cat "$D/err"))"
	grep -q "perhaps in use (an exclusive open of .*p[56] fails" "$D/err" ||
		fail "no node for p5: message: $(cat "$D/err")"
	[ "$(ebr)" = "$ebr0" ] || fail "the logical partition's table changed (no node)"
fi

# while a replay writes p2, p5 cannot be mounted: the replay holds its claim (a probe that let
# go let the mount in, and the replay went on rewriting p5's table under it)
"$GEN" -o "$D/slow.btape" -n 200 -r 100 -p randwrite -b 512 -S $((4 << 20)) || fail "gen"
"$BIOTAPE" replay "$D/slow.btape" --target "${L}p2" --write --force --fit wrap --no-progress \
	>/dev/null 2>"$D/err" &
rp=$!
T_PIDS+=("$rp")
sleep 0.7
kill -0 "$rp" 2>/dev/null || fail "the slow replay ended early: $(cat "$D/err")"
if mount "${L}p5" "$M" 2>/dev/null; then
	umount "$M"
	fail "p5 was mounted while a replay wrote p2"
fi
wait "$rp" || fail "the slow replay failed: $(cat "$D/err")"

# a mounted primary past the extended partition's end: p2 (its 1 KiB) is written
mount "${L}p3" "$M" || fail "mount p3"
"$BIOTAPE" replay "$D/w512.btape" --target "${L}p2" --write --force --fit wrap --no-progress \
	>/dev/null 2>"$D/err" || fail "p2 beside a mounted p3 refused: $(cat "$D/err")"
umount "$M"
[ "$(ebr)" != "$ebr0" ] || fail "p2 was not written"
e2fsck -fn "${L}p3" >/dev/null 2>&1 || fail "p3 is damaged"

# two logical partitions at once: a replay onto p5 does not keep one onto p6 out (the claim
# it holds is p5's; the extended partition's real extent counts only for writes to it)
"$BIOTAPE" replay "$D/slow.btape" --target "${L}p5" --write --force --fit wrap --no-progress \
	>/dev/null 2>"$D/err5" &
rp=$!
T_PIDS+=("$rp")
sleep 0.5
"$BIOTAPE" replay "$D/w.btape" --target "${L}p6" --write --force --fit wrap --no-progress \
	>/dev/null 2>"$D/err" || fail "p6 refused beside a replay onto p5: $(cat "$D/err")"
wait "$rp" || fail "the replay onto p5 failed: $(cat "$D/err5")"
pass
