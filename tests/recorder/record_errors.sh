#!/bin/bash
# Errors are one clear line with the right exit status, and leave nothing behind.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
D=$(t_tmpdir) || exit 1

expect() { # expect STATUS PATTERN ARGS...
	local want=$1 pat=$2 rc=0
	shift 2
	"$BIOTAPE" record "$@" >"$D/out" 2>"$D/err" || rc=$?
	[ "$rc" = "$want" ] || { cat "$D/err"; fail "record $*: exit $rc, expected $want"; }
	grep -q -- "$pat" "$D/err" || { cat "$D/err"; fail "record $*: message lacks '$pat'"; }
}

"$BIOTAPE" record --help | grep -q "usage: biotape record" || fail "--help"
expect 2 "no output file" -d loop0
expect 2 "expected rq or bio" -o "$D/x.btape" --layer foo
expect 2 "unexpected argument" -o "$D/x.btape" stray
expect 2 "not a duration" -o "$D/x.btape" --duration soon
expect 2 "process name" -o "$D/x.btape" --comm 0123456789abcdefXYZ
if "$BIOTAPE" record -o /dev/null -d 1:1 2>&1 | grep -q "without eBPF"; then
	expect 1 "built without eBPF support" -o "$D/x.btape"
	pass "record_errors (without eBPF)"
fi
rec_require python3
expect 2 "no such block device" -o "$D/x.btape" -d /dev/biotape-nonexistent
expect 2 "no such block device" -o "$D/x.btape" -d nosuchdisk9
expect 2 "not a block device" -o "$D/x.btape" -d /etc/passwd
expect 2 "no such process" -o "$D/x.btape" -p 999999999
expect 2 "not a cgroup v2 directory" -o "$D/x.btape" --cgroup /tmp
expect 2 "No such file" -o "$D/x.btape" --cgroup biotape-no-such-cgroup
[ ! -e "$D/x.btape" ] || fail "a failed record left $D/x.btape"
t_loop 16
expect 1 "cannot write" -o /proc/biotape-nope/x.btape -d "$LOOP"
if command -v setpriv >/dev/null; then
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$BIOTAPE" record -o /dev/shm/biotape-np.btape -d "$LOOP" 2>"$D/err" || rc=$?
	[ "$rc" = 1 ] && grep -q "needs root.*missing CAP_BPF and CAP_PERFMON" "$D/err" ||
		{ cat "$D/err"; fail "unprivileged: exit $rc"; }
	[ "$(wc -l < "$D/err")" = 1 ] || fail "unprivileged: more than one line"
fi
# Partitions map to their whole disk; the device table comes from sysfs.
"$BIOTAPE" record -o "$D/p.btape" -d "$(cat "/sys/block/$(basename "$LOOP")/dev")" --duration 0.3s \
	2>"$D/err" || { cat "$D/err"; fail "record by major:minor"; }
"$BIOTAPE" info "$D/p.btape" | grep -q "$(basename "$LOOP")" || fail "device table lacks the loop"

# Disk full while recording: stop, keep what was written, exit 1.
mkdir "$D/small" && mount -t tmpfs -o size=16k biotape-test "$D/small" || skip "cannot mount tmpfs"
rc=0
"$BIOTAPE" record -o "$D/small/t.btape" -d "$LOOP" -- fio --name=full --filename="$LOOP" \
	--rw=randrw --bs=4k --ioengine=io_uring --direct=1 --iodepth=16 --norandommap \
	--time_based --runtime=4 --size=16M --output-format=terse >/dev/null 2>"$D/err" || rc=$?
cat "$D/err"
[ "$rc" = 1 ] || { umount "$D/small"; fail "disk full: exit $rc, expected 1"; }
grep -q "No space left" "$D/err" || { umount "$D/small"; fail "disk full: message"; }
umount "$D/small"
pass "record_errors"
