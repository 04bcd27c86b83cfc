# Shared setup of the recorder benchmarks (sourced): $W, a temporary directory in /dev/shm;
# $LOOP, a loop device with direct I/O over a 1 GiB file there, filled so reads are real tmpfs
# reads; with "idle", $LOOP2 over a 16 MiB file that no benchmark touches. All of it is removed
# on exit, after the caller's bench_on_exit if it defines one.
bench_cleanup() {
	if declare -F bench_on_exit >/dev/null; then bench_on_exit; fi
	[ -n "${LOOP:-}" ] && losetup -d "$LOOP"
	[ -n "${LOOP2:-}" ] && losetup -d "$LOOP2"
	rm -rf "$W"
}

bench_setup() { # bench_setup NAME [idle]
	W=$(mktemp -d "/dev/shm/$1.XXXXXX")
	LOOP= LOOP2=
	trap bench_cleanup EXIT
	truncate -s 1G "$W/disk.img"
	LOOP=$(losetup -f --show --direct-io=on "$W/disk.img")
	if [ "${2:-}" = idle ]; then
		truncate -s 16M "$W/idle.img"
		LOOP2=$(losetup -f --show --direct-io=on "$W/idle.img")
	fi
	dd if=/dev/zero of="$LOOP" bs=1M count=1024 oflag=direct status=none
}
