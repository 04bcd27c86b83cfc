#!/bin/bash
# `record -- COMMAND`: neither the command nor what it started outlives the recorder, whether
# the recorder is killed with SIGKILL or stops by itself (recorder/README.md, "The command").
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require
D=$(t_tmpdir) || exit 1
t_loop 16

# alive PID: running (a zombie is dead: whoever inherited it may not reap it at once)
alive() {
	[ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}
# gone_within SECONDS PID...
gone_within() {
	local t=$1 i p left=
	shift
	for i in $(seq 0 $((t * 20))); do
		left=
		for p in "$@"; do alive "$p" && left="$left $p"; done
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	echo "still running:$left" >&2
	ps -o pid,ppid,stat,comm -p "${left# }" >&2
	return 1
}
# pid_of FILE: waits for the command to write its pid into FILE.
pid_of() {
	local i
	for i in $(seq 100); do
		[ -s "$1" ] && { cat "$1"; return 0; }
		sleep 0.05
	done
	fail "the command did not start ($1)"
}
# child_of PID: its (one) child, once it has one.
child_of() {
	local i c
	for i in $(seq 100); do
		c=$(pgrep -P "$1" | head -1)
		[ -n "$c" ] && { echo "$c"; return 0; }
		sleep 0.05
	done
	fail "process $1 has no child"
}
# killed_rec NAME SCRIPT [sub]: starts `record -- sh -c SCRIPT` (SCRIPT writes the shell's pid
# to $0/NAME), SIGKILLs the recorder; sets CMD (the shell) and with "sub" SUB (its child).
killed_rec() {
	rec_start "$D/$1.btape" -d "$LOOP" -- sh -c "$2" "$D"
	CMD=$(pid_of "$D/$1")
	T_PIDS+=("$CMD") # if the test fails: nothing left running
	[ "${3:-}" = sub ] && SUB=$(child_of "$CMD") && T_PIDS+=("$SUB")
	kill -KILL "$REC_PID"
	wait "$REC_PID" 2>/dev/null
}

# The command alone (exec: `-- sleep 1000`).
killed_rec a 'echo $$ > "$0/a"; exec sleep 1000'
gone_within 2 "$CMD" || fail "-- sleep 1000 still runs after the recorder was killed"

# A shell and its child (the grandchild of the recorder).
killed_rec b 'echo $$ > "$0/b"; sleep 1000; :' sub
gone_within 2 "$CMD" "$SUB" || fail "-- sh -c 'sleep 1000; :' outlived the killed recorder"

# A tree that ignores SIGTERM: SIGKILL follows after a second.
killed_rec c 'trap "" TERM; echo $$ > "$0/c"; sleep 1000; :' sub
gone_within 3 "$CMD" "$SUB" || fail "a tree ignoring SIGTERM outlived the killed recorder"

# A recorder that stops by itself (--duration) takes the tree along before it exits, and
# what the command started in the background too.
t0=$(date +%s%N)
rc=0
"$BIOTAPE" record -o "$D/d.btape" -d "$LOOP" --duration 1s -- sh -c \
	'echo $$ > "$0/d"; sleep 1000 & echo $! > "$0/e"; sleep 1000 & echo $! > "$0/f"; wait' \
	"$D" 2>"$D/d.err" || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$D/d.err"
CMD=$(cat "$D/d") BG1=$(cat "$D/e") BG2=$(cat "$D/f")
T_PIDS+=("$CMD" "$BG1" "$BG2")
[ "$rc" = 0 ] || fail "record --duration 1s -- sh exited $rc"
gone_within 0 "$CMD" "$BG1" "$BG2" || fail "the command's tree outlived a recorder that stopped"
grep -q "command killed by signal 15" "$D/d.err" || fail "no SIGTERM for the command at the stop"
[ "$ms" -lt 10000 ] || fail "the stop took $ms ms"
# A command that ends by itself gives its status (time(1)'s rule), with a complete trace.
rc=0
"$BIOTAPE" record -o "$D/g.btape" -d "$LOOP" -- sh -c 'exit 3' 2>"$D/g.err" || rc=$?
[ "$rc" = 3 ] || { cat "$D/g.err"; fail "record -- sh -c 'exit 3' exited $rc, not 3"; }
"$BIOTAPE" info "$D/g.btape" >/dev/null || fail "the trace of a failed command is unreadable"
rc=0
"$BIOTAPE" record -o "$D/h.btape" -d "$LOOP" -- sh -c 'kill -USR1 $$' 2>"$D/h.err" || rc=$?
[ "$rc" = 138 ] || { cat "$D/h.err"; fail "a command killed by SIGUSR1 gave $rc, not 138"; }
rc=0
"$BIOTAPE" record -o "$D/i.btape" -d "$LOOP" -- true 2>"$D/i.err" || rc=$?
[ "$rc" = 0 ] || { cat "$D/i.err"; fail "record -- true exited $rc"; }

pass "record_command: the command's tree goes with a killed recorder (ignoring SIGTERM too) and with a stop ($ms ms)"
