#!/bin/bash
# record -o writes only regular files (docs/SAFETY.md): a block device (it once wrote the trace
# over /dev/loopN), a device node, a FIFO are refused with one line and left as they were; the
# null device is a sink. A recording that fails while loading its programs leaves an existing
# trace at the path as it was (it once emptied it), and creates nothing.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require mknod
D=$(t_tmpdir) || exit 1
t_loop 16
sum0=$(md5sum <"$LOOP")
read -r MA MI < <(stat -c '%t %T' "$LOOP")
MA=$((16#$MA))
MI=$((16#$MI))

refused() { # refused PATH: record -o PATH is refused, PATH unchanged
	local rc=0 before
	before=$(stat -c '%F %t:%T' "$1")
	timeout -s KILL 30 "$BIOTAPE" record -o "$1" -d "$LOOP" --duration 0.2s >/dev/null \
		2>"$D/err" || rc=$?
	[ $rc = 1 ] || fail "record -o $1: exit $rc, want 1 ($(cat "$D/err"))"
	[ "$(wc -l <"$D/err")" = 1 ] || fail "record -o $1: not one line: $(cat "$D/err")"
	grep -q "refusing to write over it" "$D/err" || fail "record -o $1: $(cat "$D/err")"
	[ "$(stat -c '%F %t:%T' "$1")" = "$before" ] || fail "record -o $1: it changed"
}
refused "$LOOP"
[ "$(md5sum <"$LOOP")" = "$sum0" ] || fail "record -o $LOOP wrote to the device"
mknod "$D/blk.btape" b "$MA" "$MI"
refused "$D/blk.btape"
mkfifo "$D/fifo.btape"
refused "$D/fifo.btape"
ln -s "$LOOP" "$D/link.btape"
refused "$D/link.btape"
[ "$(md5sum <"$LOOP")" = "$sum0" ] || fail "a refused record wrote to the device"

# the null device: a sink (rec_lib.sh's probe records to /dev/null)
mknod "$D/null" c 1 3
"$BIOTAPE" record -o "$D/null" -d "$LOOP" --duration 0.2s 2>"$D/err" ||
	fail "record -o null device: $(cat "$D/err")"
[ "$(stat -c '%F %t:%T' "$D/null")" = "character special file 1:3" ] || fail "null node changed"

# A failure while loading the programs (the ring buffer cannot be mapped under a small address
# space limit): nothing is created, and an existing trace at the path keeps its content.
fails_late() { # fails_late PATH
	local rc=0
	(ulimit -v 800000; exec "$BIOTAPE" record -o "$1" -d "$LOOP" --ring-size-kb 1048576 \
		--duration 1s) >/dev/null 2>"$D/err" || rc=$?
	# a sanitizer's shadow memory does not fit the limit: no late failure to see then
	grep -q "Sanitizer" "$D/err" && return 1
	[ $rc = 1 ] || fail "late failure on $1: exit $rc ($(cat "$D/err"))"
	grep -q "ring buffer" "$D/err"
}
# The file a loop device is over (in use, as a database's file would be): refused before it is
# emptied, in one line (it was truncated into a trace under the mounted filesystem).
size=$(stat -c %s "$LOOP_FILE")
rc=0; "$BIOTAPE" record -o "$LOOP_FILE" -d "$LOOP" --duration 1s 2>"$D/err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$D/err")" = 1 ] && grep -q "is open elsewhere" "$D/err" ||
	fail "record -o the loop device's file: exit $rc: $(cat "$D/err")"
[ "$(stat -c %s "$LOOP_FILE")" = "$size" ] || fail "record -o emptied the loop device's file"

# A COMMAND that cannot run (mistyped, a directory): refused before the output is opened, in one
# line; an older trace keeps its content (it was emptied into a trace of no events before).
echo "an older trace" >"$D/old.btape"
refused() { # COMMAND PATTERN: exit 127, one line matching PATTERN, the older trace kept
	local rc=0
	"$BIOTAPE" record -o "$D/old.btape" -d "$LOOP" --duration 1s -- "$1" 2>"$D/err" || rc=$?
	[ $rc = 127 ] && [ "$(wc -l <"$D/err")" = 1 ] && grep -q "$2" "$D/err" ||
		fail "record -- $1: exit $rc: $(cat "$D/err")"
	[ "$(cat "$D/old.btape")" = "an older trace" ] || fail "record -- $1 emptied the older trace"
}
for c in "$D/no-such-cmd" no-such-cmd-biotape "$D"; do refused "$c" "command '$c'"; done
# ... nor can a script whose interpreter is missing, or a program whose ELF loader is
printf '#!/no-such-interpreter-biotape\ntrue\n' >"$D/noint.sh"
printf '#! %s\ntrue\n' "$D/noint.sh" >"$D/chain.sh"
python3 - /bin/true "$D/noloader" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b[:4] == b"\x7fELF" and b[4] == 2, "a 64-bit ELF /bin/true"
phoff, = struct.unpack_from("<Q", b, 0x20)
phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
for i in range(phnum):
    o = phoff + i * phentsize
    typ, = struct.unpack_from("<I", b, o)
    if typ == 3:  # PT_INTERP: its path's last letter changed
        off, = struct.unpack_from("<Q", b, o + 8)
        size, = struct.unpack_from("<Q", b, o + 32)
        b[off + size - 2] = ord("Z")
open(sys.argv[2], "wb").write(b)
PY
chmod +x "$D/noint.sh" "$D/chain.sh" "$D/noloader"
for c in "$D/noint.sh" "$D/chain.sh" "$D/noloader"; do refused "$c" "interpreter .* is missing"; done
# a script whose interpreter is there runs, found through PATH as well
printf '#! /bin/sh -e\ntrue\n' >"$D/ok.sh"
chmod +x "$D/ok.sh"
PATH="$D:$PATH" "$BIOTAPE" record -o "$D/ok.btape" -d "$LOOP" -- ok.sh 2>"$D/err" ||
	fail "record -- ok.sh (a script with its interpreter): $(cat "$D/err")"
# five scripts deep run (the kernel's limit: a sixth is ELOOP)
printf '#!/bin/sh\ntrue\n' >"$D/s0"
for i in 1 2 3 4; do printf '#!%s\n' "$D/s$((i - 1))" >"$D/s$i"; done
chmod +x "$D"/s?
"$D/s4" || fail "five scripts deep do not run here"
"$BIOTAPE" record -o "$D/ok.btape" -d "$LOOP" -- "$D/s4" 2>"$D/err" ||
	fail "record -- five scripts deep: $(cat "$D/err")"
[ ! -e "$D/new.btape" ] || fail "new.btape exists already"
rc=0; "$BIOTAPE" record -o "$D/new.btape" -d "$LOOP" -- no-such-cmd-biotape 2>/dev/null || rc=$?
[ $rc = 127 ] && [ ! -e "$D/new.btape" ] || fail "record -- no-such-cmd: exit $rc, or a trace made"

if fails_late "$D/new.btape"; then
	[ ! -e "$D/new.btape" ] || fail "a failed record left the file it created"
	echo "an older trace" >"$D/old.btape"
	fails_late "$D/old.btape" || fail "late failure: $(cat "$D/err")"
	[ -f "$D/old.btape" ] || fail "a failed record removed a file it did not create"
	# the programs are loaded before the output is opened: an older trace is not emptied
	[ "$(cat "$D/old.btape")" = "an older trace" ] ||
		fail "a failed record damaged the older trace at $D/old.btape"
	# unwritable paths are refused before a BPF load, in one line
	rc=0; "$BIOTAPE" record -o "$D/nodir/x.btape" -d "$LOOP" --duration 1s 2>"$D/err" || rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$D/err")" = 1 ] && grep -q "nodir/x.btape: No such file" "$D/err" ||
		fail "record -o into a missing directory: exit $rc: $(cat "$D/err")"
	fails_late "$D/null" || fail "late failure: $(cat "$D/err")"
	[ "$(stat -c '%F %t:%T' "$D/null")" = "character special file 1:3" ] ||
		fail "a failed record removed the null device"
else
	echo "note: no late failure under ulimit -v here (sanitizer build?): $(head -c 300 "$D/err")"
	echo "      (btape_writer__discard() itself: tests/cli/test_cli_util.c)"
fi
pass
