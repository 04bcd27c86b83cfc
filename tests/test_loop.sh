#!/usr/bin/env bash
# tests/loop.sh: loop_new makes a direct-I/O loop device over a file of its own and knows the
# file; the device is detached and the file removed at exit, with loop.sh's own trap and from a
# caller's trap that calls loop_detach_all.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
require_root losetup
d=$(t_tmpdir) || exit 1

# a script of its own, as a benchmark is: prints the devices and files, then exits
probe() { # probe TRAP_STYLE: "own" (loop.sh's trap) or "caller" (a trap calling loop_detach_all)
	bash -c '
		. "$1/tests/loop.sh"
		if [ "$2" = caller ]; then trap "echo cleanup >&2; loop_detach_all" EXIT; fi
		loop_new 8 "$3" || exit 3
		a=$LOOP af=$LOOP_FILE
		loop_new 4 "$3" || exit 3
		echo "$a $af $LOOP $LOOP_FILE"
		[ "$(losetup -n -O BACK-FILE "$a")" = "$af" ] || exit 4
		[ "$(losetup -n -O BACK-FILE "$LOOP")" = "$LOOP_FILE" ] || exit 4
		[ "$(losetup -n -O DIO "$a" | tr -d " ")" = 1 ] || exit 5
		[ "$(blockdev --getsize64 "$LOOP")" = $((4 << 20)) ] || exit 6
	' probe "$BIOTAPE_SRC" "$1" "$d" >"$d/out" 2>"$d/err"
}
for style in own caller; do
	rc=0
	probe $style || rc=$?
	case $rc in
	0) ;;
	3) skip "cannot create a loop device" ;;
	4) fail "$style: LOOP_FILE is not the device's backing file" ;;
	5) fail "$style: the device does not do direct I/O" ;;
	*) fail "$style: exit $rc: $(cat "$d/err")" ;;
	esac
	read -r a af b bf <"$d/out"
	[ "$a" != "$b" ] && [ "$af" != "$bf" ] || fail "$style: two devices share a device or file"
	case $af in "$d"/*) ;; *) fail "$style: the file is not in the directory asked for: $af" ;; esac
	# detached: the device is gone or (reused by someone else since) over another file
	left=
	for x in "$a:$af" "$b:$bf"; do
		dev=${x%%:*} f=${x#*:}
		case $(losetup -n -O BACK-FILE "$dev" 2>/dev/null) in
		"$f" | "$f (deleted)") losetup -d "$dev"; left+=" $dev" ;;
		esac
		[ ! -e "$f" ] || left+=" $f"
	done
	[ -z "$left" ] || fail "$style: left attached or behind after exit:$left"
	[ $style = own ] || grep -q cleanup "$d/err" || fail "the caller's trap did not run"
done
pass
