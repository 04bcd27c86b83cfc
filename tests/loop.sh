# Loop devices for tests, benchmarks and samples (bash, sourced): the one way this project makes
# a block device to write to. Each is a loop device with direct I/O over a new file in /dev/shm,
# never a real disk.
#
#   . "$BIOTAPE_SRC/tests/loop.sh"
#   loop_new SIZE_MB [DIR] || ...   a loop device over a new SIZE_MB file in DIR (default
#                                   /dev/shm); sets LOOP (the device) and LOOP_FILE (its file).
#                                   Returns 1 if losetup failed, 2 if the file could not be
#                                   made. Call it directly, not in $(...), so that it is
#                                   registered.
#   loop_adopt DEV                  registers a loop device the caller set up itself (a loop
#                                   over another loop device, say) for loop_detach_all.
#   loop_detach_all                 detaches every registered device, newest first (a device
#                                   stacked on another goes before it), and removes the files.
#
# Sourcing sets an EXIT trap that runs loop_detach_all. A script or library with an EXIT trap
# of its own calls loop_detach_all from it, after unmounting what is mounted on the devices.
LOOP_DEVS=()
LOOP_FILES=()

loop_new() {
	local size=$1 dir=${2:-/dev/shm} f dev q
	f=$(mktemp "$dir/biotape-loop.XXXXXX") || return 2
	LOOP_FILES+=("$f")
	truncate -s "${size}M" "$f" || return 2
	dev=$(losetup -f --show --direct-io=on "$f") || return 1
	LOOP_DEVS+=("$dev")
	# A loop device keeps its queue settings across detach and attach: start from the
	# defaults whatever an earlier user left (nomerges; iostats, without which diskstats stay
	# 0; the I/O scheduler).
	q=/sys/block/$(basename "$dev")/queue
	echo 0 >"$q/nomerges" 2>/dev/null || true
	echo 1 >"$q/iostats" 2>/dev/null || true
	echo none >"$q/scheduler" 2>/dev/null || true
	LOOP=$dev
	LOOP_FILE=$f
}

loop_adopt() {
	LOOP_DEVS+=("$1")
}

loop_detach_all() {
	local i f
	for ((i = ${#LOOP_DEVS[@]} - 1; i >= 0; i--)); do losetup -d "${LOOP_DEVS[i]}" 2>/dev/null; done
	for f in "${LOOP_FILES[@]}"; do rm -f -- "$f"; done
	LOOP_DEVS=()
	LOOP_FILES=()
	return 0
}
trap loop_detach_all EXIT
