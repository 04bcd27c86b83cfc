# Shared by the sample recording scripts: a loop device over /dev/shm, cleaned up on exit.
# Run as root from the source tree: BIOTAPE=path/to/biotape samples/record_*.sh
set -eu
BIOTAPE=${BIOTAPE:-biotape}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d /dev/shm/biotape-sample.XXXXXX)
chmod 755 "$WORK"
LOOP=
MNT=
cleanup() {
	set +e
	[ -n "$MNT" ] && mountpoint -q "$MNT" && umount "$MNT"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK"
}
trap cleanup EXIT
# sample_loop SIZE_MB: sets LOOP (direct I/O over a file in /dev/shm).
sample_loop() {
	truncate -s "${1}M" "$WORK/disk.img"
	LOOP=$(losetup -f --show --direct-io=on "$WORK/disk.img")
}
# sample_ext4: ext4 on $LOOP mounted at $WORK/mnt; sets MNT.
sample_ext4() {
	mkfs.ext4 -q -F -L biotape "$LOOP"
	MNT=$WORK/mnt
	mkdir -p "$MNT"
	mount -o noatime "$LOOP" "$MNT"
}
