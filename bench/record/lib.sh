# Shared setup of the recorder benchmarks (sourced): $W, a temporary directory in /dev/shm;
# $LOOP, a loop device with direct I/O over a 1 GiB file there (tests/loop.sh), filled so reads
# are real tmpfs reads; with "idle", $LOOP2 over a 16 MiB file that no benchmark touches. On
# exit the caller's bench_on_exit runs (if it defines one), a tracer still running as
# $BENCH_PID is stopped, and the devices and files are removed, each step whatever the others
# did.
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/loop.sh"
bench_cleanup() {
	set +e
	if declare -F bench_on_exit >/dev/null; then bench_on_exit; fi
	if [ -n "${BENCH_PID:-}" ]; then
		kill -INT "$BENCH_PID" 2>/dev/null
		wait "$BENCH_PID" 2>/dev/null
	fi
	loop_detach_all
	rm -rf "$W"
}

bench_setup() { # bench_setup NAME [idle]
	W=$(mktemp -d "/dev/shm/$1.XXXXXX")
	LOOP= LOOP2= BENCH_PID=
	trap bench_cleanup EXIT
	if [ "${2:-}" = idle ]; then
		loop_new 16 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
		LOOP2=$LOOP
	fi
	loop_new 1024 "$W" || { echo "cannot create a loop device" >&2; exit 1; }
	dd if=/dev/zero of="$LOOP" bs=1M count=1024 oflag=direct status=none
}

# bench_wait PID FILE... : until one of FILE says PATTERN ($BENCH_READY, default "programs
# attached"); fails with the tracer's messages if it exits first.
bench_wait() {
	local pid=$1
	shift
	until grep -q "${BENCH_READY:-programs attached}" "$@" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$@" >&2
			echo "the tracer exited before it was ready" >&2
			exit 1
		fi
		sleep 0.1
	done
}
