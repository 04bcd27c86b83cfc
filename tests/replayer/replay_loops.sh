#!/bin/bash
# Mounted data is refused through loop devices too, with --force or without (docs/SAFETY.md).
# Each of these was once accepted and corrupted the mounted filesystem: a loop device whose
# backing device is mounted; the backing file of a mounted loop device; a second loop device
# over the same backing file. Also: a mount the kernel holds in another mount namespace (not
# in our mountinfo) is seen by its exclusive claim, and a file backing any loop device is
# refused for writes whatever that device's state.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup mkfs.ext4 mount e2fsck
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -o "$D/w.btape" -n 300 -r 50000 -p randwrite -S $((16 << 20)) || fail "gen"

t_loop 32
A=$LOOP
F=$(losetup -n -O BACK-FILE "$A" | sed 's/ *$//')
[ -f "$F" ] || fail "no backing file for $A"
mkfs.ext4 -q -F "$A" || fail "mkfs.ext4"
M=$D/mnt
mkdir "$M"
mount "$A" "$M" || skip "cannot mount ext4 here"
T_MOUNTS+=("$M")
echo data >"$M/file" && sync
B=$(losetup -f --show "$A") || skip "cannot put a loop device over a loop device"
loop_adopt "$B"
C=$(losetup -f --show --direct-io=on "$F") || fail "second loop over $F"
loop_adopt "$C"

# refused TARGET WHY: replay --write --force onto TARGET is refused, naming WHY
refused() {
	local rc=0
	"$BIOTAPE" replay "$D/w.btape" --target "$1" --write --force --no-progress >/dev/null \
		2>"$D/err" || rc=$?
	[ $rc = 1 ] || fail "--target $1 ($2): exit $rc, want 1 ($(cat "$D/err"))"
	[ "$(wc -l <"$D/err")" = 1 ] || fail "--target $1: not one line: $(cat "$D/err")"
	grep -q "refusing to write: .*$2" "$D/err" || fail "--target $1: message: $(cat "$D/err")"
}
refused "$B" "$A (the backing device of the target) is mounted on $M"
refused "$F" "the backing file of /dev/loop"
refused "$C" "$A (a loop device over $F) is mounted on $M"
refused "$A" "mounted on $M"
umount "$M"
e2fsck -fn "$A" >/dev/null 2>&1 || fail "the filesystem is damaged after refused replays"

# the reverse direction: the target is the backing device of a mounted loop device
mount "$B" "$M" || fail "mount $B"
refused "$A" "$B (a loop device over the target) is mounted on $M"
refused "$F" "the backing file of"
umount "$M"
e2fsck -fn "$A" >/dev/null 2>&1 || fail "the filesystem is damaged after refused replays"

# mounted in another mount namespace: not in our mountinfo, but the mount claims the device
if t_ns_mount "$A" "$M"; then
	refused "$B" "$A (the backing device of the target) is in use"
	refused "$C" "$A (a loop device over $F) is in use"
	t_ns_umount
	# the namespace's mount goes with its last process
	for _ in $(seq 50); do
		"$BIOTAPE" replay "$D/w.btape" --target "$C" --write --force --engine null \
			--no-progress >/dev/null 2>&1 && break
		sleep 0.1
	done
	e2fsck -fn "$A" >/dev/null 2>&1 || fail "damaged after refused replays (namespace)"
fi

# the name the kernel shows for a backing file may now lead to another file (a mount over its
# directory, a loop device set up in another mount namespace): the device's own answer, its
# file's device and inode, decides, so another name of the real backing file is refused.
# This was once accepted with --force and corrupted the mounted filesystem.
mkdir "$D/sub" "$D/m2"
truncate -s 32M "$D/sub/f.img" && mkfs.ext4 -q -F "$D/sub/f.img" || fail "mkfs.ext4 sub/f.img"
ln "$D/sub/f.img" "$D/h.img" || fail "ln"
E=$(losetup -f --show --direct-io=on "$D/sub/f.img") || fail "losetup sub/f.img"
loop_adopt "$E"
mount "$E" "$D/m2" || fail "mount $E"
T_MOUNTS+=("$D/m2")
mount -t tmpfs tmpfs "$D/sub" || fail "tmpfs over sub"
T_MOUNTS=("$D/sub" "${T_MOUNTS[@]}")
truncate -s 4096 "$D/sub/f.img" || fail "another sub/f.img"
refused "$D/h.img" "the backing file of $E"
# ... and with no /dev node to ask (a container's /dev lacks the nodes of loop devices made
# after it started): a node made for the moment answers, not the name. Once accepted.
if unshare -m true 2>/dev/null; then
	rc=0
	S=$(mktemp -d /tmp/biotape-shm.XXXXXX) || fail "mktemp" # outside the hidden /dev
	T_FILES+=("$S")
	unshare -m --propagation private sh -c 'mount --rbind /dev/shm "$0" &&
		mount -t tmpfs tmpfs /dev && mkdir /dev/shm && mount --move "$0" /dev/shm &&
		exec "$@"' "$S" \
		"$BIOTAPE" replay "$D/w.btape" --target "$D/h.img" --write --force --no-progress \
		>/dev/null 2>"$D/err" || rc=$?
	[ $rc = 1 ] || fail "no /dev node: exit $rc, want 1 ($(cat "$D/err"))"
	grep -q "refusing to write: it is the backing file of $E" "$D/err" ||
		fail "no /dev node: message: $(cat "$D/err")"
fi
# ... and where no node can be made either (no CAP_MKNOD) and the name leads nowhere: the
# file target that the loop device holds open is refused, another file is written
if unshare -m true 2>/dev/null && setpriv --bounding-set -mknod true 2>/dev/null; then
	rm "$D/sub/f.img"
	truncate -s 16M "$D/other.img"
	for t in h.img other.img; do
		rc=0
		unshare -m --propagation private sh -c 'mount --rbind /dev/shm "$0" &&
			mount -t tmpfs tmpfs /dev && mkdir /dev/shm &&
			mount --move "$0" /dev/shm && exec setpriv --bounding-set -mknod "$@"' \
			"$S" "$BIOTAPE" replay "$D/w.btape" --target "$D/$t" --write --force \
			--no-progress >/dev/null 2>"$D/err.$t" || rc=$?
		echo "$t $rc" >>"$D/unknown"
	done
	grep -q "^h.img 1$" "$D/unknown" &&
		grep -q "cannot tell what loop device .* is over, and the target is open elsewhere" \
		"$D/err.h.img" ||
		fail "unknown loop device: h.img: $(cat "$D/err.h.img")"
	grep -q "^other.img 0$" "$D/unknown" ||
		fail "unknown loop device: other.img: $(cat "$D/err.other.img")"
fi
umount "$D/sub" && umount "$D/m2" || fail "umount"
e2fsck -fn "$D/h.img" >/dev/null 2>&1 || fail "damaged after a refused replay (hidden name)"

# nothing mounted: a file backing a loop device is still refused (who uses the loop device
# cannot all be seen); the loop devices themselves may be written now
refused "$F" "the backing file of"
"$BIOTAPE" replay "$D/w.btape" --target "$C" --write --force --no-progress >/dev/null ||
	fail "an unused loop device over a file was refused"
pass
