# Shared helpers for integration test scripts (bash). Source it:
#   . "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
# and take directories as D=$(t_tmpdir) || exit 1: a test run by hand without BIOTAPE_SRC, or
# with a full disk, must stop, not go on with D empty (then "$D/x" is /x, and a "cp -r $D/."
# copied the whole root filesystem once)
# Exit codes: 0 pass, 1 fail, 77 skip. Under BIOTAPE_REQUIRE_BPF=1 (CI) a skip becomes a fail.
set -u
BIOTAPE=${BIOTAPE:-biotape}
BIOTAPE_SRC=${BIOTAPE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
. "$(dirname "${BASH_SOURCE[0]}")/loop.sh"
T_FILES=()
T_PIDS=()
T_MOUNTS=()
# Everything a test puts in /dev/shm lives under T_ROOT, removed at exit (t_tmpdir is called
# as D=$(t_tmpdir) || exit 1, in a subshell, so it cannot register its directory itself).
T_ROOT=$(mktemp -d /dev/shm/biotape-test.XXXXXX) || { echo "FAIL: mktemp" >&2; exit 1; }
T_FILES+=("$T_ROOT")

t_cleanup() {
	local p f m
	for p in "${T_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for m in "${T_MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
	loop_detach_all
	for f in "${T_FILES[@]}"; do rm -rf -- "$f"; done
}
trap t_cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: ${*:-$(basename "$0")}"; exit 0; }
# skip REASON: exit 77, or fail when the environment demands that this test runs.
skip() {
	if [ "${BIOTAPE_REQUIRE_BPF:-0}" = 1 ]; then
		echo "FAIL (would skip, but BIOTAPE_REQUIRE_BPF=1): $*" >&2
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
# require_root: root, and the tools named as arguments.
require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	local t
	for t in "$@"; do command -v "$t" >/dev/null || skip "needs $t"; done
}
# t_gen: sets GEN, the trace generator of the build under test (bench/gen/gen_trace.c). It is
# built with the tests, so a missing one fails the test: it must not pass by skipping.
t_gen() {
	GEN=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/gen_trace
	[ -x "$GEN" ] || fail "no trace generator at $GEN"
}
# t_tmpdir: a fresh directory in /dev/shm removed at exit; prints its path.
t_tmpdir() {
	local d
	d=$(mktemp -d "$T_ROOT/tmp.XXXXXX") || fail "mktemp"
	echo "$d"
}
# t_loop SIZE_MB: a loop device (direct I/O) over a new file in /dev/shm (tests/loop.sh); sets
# LOOP and LOOP_FILE. Call it directly (not in $(...)) so that cleanup registers it.
t_loop() {
	local rc=0
	loop_new "$1" "$T_ROOT" || rc=$?
	[ $rc = 0 ] || [ $rc = 1 ] || fail "cannot make a ${1} MiB file in $T_ROOT"
	[ $rc = 0 ] || skip "cannot create a loop device"
}
# t_ns_mount DEV DIR: DEV mounted on DIR in a private mount namespace that only a background
# process holds (killed at exit): not in our mountinfo, but the mount claims DEV. Returns 1
# where mount namespaces cannot be made; t_ns_umount ends it (the mount goes with it).
t_ns_mount() {
	command -v unshare >/dev/null && unshare -m true 2>/dev/null || return 1
	local up
	up=$(mktemp -u "$T_ROOT/ns-up.XXXXXX")
	unshare -m --propagation private sh -c "mount '$1' '$2' && echo up >'$up' && exec sleep 60" &
	T_NS_PID=$!
	T_PIDS+=("$T_NS_PID")
	for _ in $(seq 100); do [ -e "$up" ] && break; sleep 0.1; done
	[ -e "$up" ] || fail "mount $1 in a private namespace"
	grep -q " $2 " /proc/self/mountinfo && fail "the private mount of $1 is visible here"
	return 0
}
t_ns_umount() {
	kill "$T_NS_PID"
	wait "$T_NS_PID" 2>/dev/null
}
# t_ext4 [MKFS_OPTION...]: ext4 on $LOOP (t_loop first), mounted on a fresh directory that is
# unmounted at exit; sets MNT. Call it directly (not in $(...)).
t_ext4() {
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$@" "$LOOP" || fail "mkfs.ext4"
	MNT=$(mktemp -d "$T_ROOT/mnt.XXXXXX") || fail "mktemp"
	mount "$LOOP" "$MNT" || skip "cannot mount ext4"
	T_MOUNTS+=("$MNT")
	sync
}
# t_fio_global RUNTIME_S: the [global] section of a reference fio job: ${TARGET}, direct
# io_uring, no random map, time based.
t_fio_global() {
	printf '[global]\nfilename=${TARGET}\nioengine=io_uring\ndirect=1\nnorandommap=1\n'
	printf 'randrepeat=0\ntime_based=1\nruntime=%s\n' "$1"
}
# t_fio_record DEV OUT JOB LOG: fio runs JOB on DEV (TARGET=DEV) under biotape record -d DEV.
t_fio_record() {
	TARGET=$1 timeout 120 "$BIOTAPE" record -o "$2" -d "$1" -- fio --output=/dev/null "$3" \
		>"$4" 2>&1
}
