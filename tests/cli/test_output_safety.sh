#!/bin/bash
# Outputs are regular files (docs/SAFETY.md): convert, replay -o, replay/analyze/compare --html
# refuse a block or character device node, a FIFO or a directory at the output path with one
# line and exit 1, and leave it as it was (a node was once renamed over: an 18 KB regular
# file where /dev/loopN had been). A path that becomes a node while a replay writes its result
# is not renamed over either. The null device is a sink. Nodes are made in /dev/shm (mknod:
# root) with the numbers of a loop device of our own: a broken check harms nothing else.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup mknod
t_gen
D=$(t_tmpdir) || exit 1
t_loop 16
read -r MA MI < <(stat -c '%t %T' "$LOOP")
MA=$((16#$MA))
MI=$((16#$MI))
sum0=$(md5sum <"$LOOP")
"$GEN" -o "$D/r.btape" -n 2000 -r 20000 -S $((8 << 20)) || fail "gen"
truncate -s 8M "$D/tgt"
IN=$BIOTAPE_SRC/tests/interop/data/mqsim_tpcc-small.trace

# kind PATH: "b 7:3", "c 1:5", "p", "d", "f", "l", or "none"
kind() {
	if [ -L "$1" ]; then echo l
	elif [ -b "$1" ]; then echo "b $(stat -c '%t:%T' "$1")"
	elif [ -c "$1" ]; then echo "c $(stat -c '%t:%T' "$1")"
	elif [ -p "$1" ]; then echo p
	elif [ -d "$1" ]; then echo d
	elif [ -f "$1" ]; then echo f
	else echo none
	fi
}
# refused NAME CMD...: exit 1, one line naming the refusal, NAME unchanged, no temporary left
refused() {
	local name=$1 before rc=0
	shift
	before=$(kind "$name")
	timeout -s KILL 30 "$@" >/dev/null 2>"$D/err" || rc=$?
	[ $rc = 1 ] || fail "$*: exit $rc, want 1 ($(cat "$D/err"))"
	[ "$(wc -l <"$D/err")" = 1 ] || fail "$*: not one line: $(cat "$D/err")"
	grep -q "refusing to write over it\|not replaced" "$D/err" || fail "$*: message: $(cat "$D/err")"
	[ "$(kind "$name")" = "$before" ] || fail "$*: $name was $before, is $(kind "$name")"
	ls "$D/nodes" | grep -q "\.tmp\." && fail "$*: a temporary file was left"
	return 0
}
mkdir "$D/nodes"
N=$D/nodes
mknod "$N/blk" b "$MA" "$MI"
mknod "$N/blk.csv" b "$MA" "$MI"
mknod "$N/blk.html" b "$MA" "$MI"
mknod "$N/chr.csv" c 1 5 # /dev/zero's numbers: a write would be lost, not harmful
mkfifo "$N/fifo.csv"
mkdir "$N/dir.csv"

for o in blk.csv chr.csv fifo.csv dir.csv; do
	# export (cli_out), import (the trace writer)
	refused "$N/$o" "$BIOTAPE" convert "$D/r.btape" "$N/$o"
	refused "$N/$o" "$BIOTAPE" convert "$IN" "$N/$o"
	refused "$N/$o" "$BIOTAPE" replay "$D/r.btape" --target "$D/tgt" --buffered --no-progress \
		--engine null -o "$N/$o"
done
refused "$N/blk" "$BIOTAPE" convert "$IN" "$N/blk"
refused "$N/blk.html" "$BIOTAPE" analyze "$D/r.btape" --html "$N/blk.html"
refused "$N/blk.html" "$BIOTAPE" compare "$D/r.btape" "$D/r.btape" --html "$N/blk.html"
# --html is checked before the sweep runs, not after
refused "$N/blk.html" "$BIOTAPE" replay "$D/r.btape" --target "$D/tgt" --engine null \
	--sweep 1,2 --html "$N/blk.html"
# a symlink to a node is refused too
ln -s "$N/blk" "$N/link.csv"
refused "$N/link.csv" "$BIOTAPE" convert "$D/r.btape" "$N/link.csv"
[ "$(kind "$N/blk")" = "b $(printf %x "$MA"):$(printf %x "$MI")" ] || fail "the node behind the link changed"

# a path that becomes a node between the open and the rename is not renamed over
"$GEN" -o "$D/slow.btape" -n 3000 -r 2000 -S $((8 << 20)) || fail "gen"
rc=0
"$BIOTAPE" replay "$D/slow.btape" --target "$D/tgt" --buffered --no-progress --engine null \
	-o "$N/late.btape" >/dev/null 2>"$D/err" &
pid=$!
T_PIDS+=("$pid")
sleep 0.5
mknod "$N/late.btape" b "$MA" "$MI"
wait $pid || rc=$?
[ $rc = 1 ] || fail "swapped output: exit $rc, want 1 ($(cat "$D/err"))"
grep -q "late.btape is a block device" "$D/err" || fail "swapped output: message: $(cat "$D/err")"
[ "$(kind "$N/late.btape")" = "b $(printf %x "$MA"):$(printf %x "$MI")" ] ||
	fail "swapped output: the node was replaced: $(kind "$N/late.btape")"
ls "$N" | grep -q "\.tmp\." && fail "swapped output: a temporary file was left"

# the null device is a sink: every command writes to it, and it stays a character device
mknod "$N/null" c 1 3
"$BIOTAPE" convert "$D/r.btape" "$N/null" --to csv >/dev/null || fail "export to the null device"
"$BIOTAPE" convert "$IN" "$N/null" >/dev/null || fail "import to the null device"
"$BIOTAPE" replay "$D/r.btape" --target "$D/tgt" --buffered --no-progress --engine null \
	-o "$N/null" >/dev/null || fail "replay -o the null device"
"$BIOTAPE" analyze "$D/r.btape" --html "$N/null" || fail "analyze --html the null device"
[ "$(kind "$N/null")" = "c 1:3" ] || fail "the null device node became $(kind "$N/null")"

# a symlink to a regular file: followed at the open, the rename replaces the link itself
echo keep >"$D/real.csv"
ln -s "$D/real.csv" "$N/tofile.csv"
"$BIOTAPE" convert "$D/r.btape" "$N/tofile.csv" >/dev/null || fail "export onto a symlink"
[ "$(kind "$N/tofile.csv")" = f ] || fail "the symlink is $(kind "$N/tofile.csv")"
[ "$(cat "$D/real.csv")" = keep ] || fail "the symlink's target was written"

[ "$(md5sum <"$LOOP")" = "$sum0" ] || fail "the loop device behind the nodes changed"
pass
