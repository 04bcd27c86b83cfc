# Shared by the sample recording scripts: a loop device over /dev/shm (tests/loop.sh), cleaned
# up on exit. Run as root from the source tree: BIOTAPE=path/to/biotape samples/record_*.sh
set -eu
BIOTAPE=${BIOTAPE:-biotape}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../tests/loop.sh"
WORK=$(mktemp -d /dev/shm/biotape-sample.XXXXXX)
chmod 755 "$WORK"
LOOP=
MNT=
cleanup() {
	set +e
	[ -n "$MNT" ] && mountpoint -q "$MNT" && umount "$MNT"
	loop_detach_all
	rm -rf "$WORK"
}
trap cleanup EXIT
# sample_loop SIZE_MB: sets LOOP (direct I/O over a file in $WORK).
sample_loop() {
	loop_new "$1" "$WORK" || { echo "cannot create a loop device" >&2; exit 1; }
}
# sample_ext4: ext4 on $LOOP mounted at $WORK/mnt; sets MNT.
sample_ext4() {
	mkfs.ext4 -q -F -L biotape "$LOOP"
	MNT=$WORK/mnt
	mkdir -p "$MNT"
	mount -o noatime "$LOOP" "$MNT"
}
