#!/bin/bash
# SIGKILL mid-run leaves a file that info and dump read up to the last complete chunk;
# SIGTERM gives a complete one.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
JOB=(fio --name=steady --filename="$LOOP" --rw=randread --bs=4k --ioengine=io_uring --direct=1
	--iodepth=4 --rate_iops=2000 --time_based --runtime=6 --size=64M --output-format=terse)

"${JOB[@]}" >/dev/null &
T_PIDS+=("$!")
rec_start "$D/k.btape" -d "$LOOP"
sleep 3.5
kill -KILL "$REC_PID"
wait "$REC_PID" 2>/dev/null
"$BIOTAPE" info "$D/k.btape" > "$D/k.info" || { cat "$D/k.info"; fail "info cannot read the killed trace"; }
cat "$D/k.info"
n=$("$BIOTAPE" dump --csv "$D/k.btape" | tail -n +2 | wc -l)
[ "$n" -ge 1000 ] || fail "killed trace holds only $n events after ~3 s at 2000 IOPS"

rec_start "$D/t.btape" -d "$LOOP"
sleep 1.5
rec_stop TERM
"$BIOTAPE" info "$D/t.btape" > "$D/t.info" || fail "info on the SIGTERM trace"
[ "$(info_get "$D/t.btape" integrity.has_footer)" = true ] || { cat "$D/t.info"; fail "SIGTERM trace has no footer"; }
[ "$(info_get "$D/k.btape" integrity.damaged)" = false ] || fail "killed trace reported damaged"
m=$("$BIOTAPE" dump --csv "$D/t.btape" | tail -n +2 | wc -l)
grep -q "recorded $m events" "$REC_ERR" || fail "summary does not match the $m events in the file"

# a closed terminal (SIGHUP) ends the recording like SIGTERM: footer written, nothing lost
rec_start "$D/h.btape" -d "$LOOP"
sleep 1.5
rec_stop HUP
[ "$(info_get "$D/h.btape" integrity.has_footer)" = true ] || fail "SIGHUP trace has no footer"
h=$("$BIOTAPE" dump --csv "$D/h.btape" | tail -n +2 | wc -l)
grep -q "recorded $h events" "$REC_ERR" || fail "SIGHUP summary does not match the $h events in the file"
# a SIGINT before the recording started, to a background job of a script (which inherits
# SIGINT ignored): the recorder stops with one line and no output. The handler used to be set
# only once the output was open, so such a SIGINT was lost and the recorder never stopped.
rc=0
timeout -s KILL 30 bash -c '"$1" record -v -o "$2" -d "$3" 2>"$4" & p=$!
	# once its SIGINT handler is in (SigCgt bit 1), before it says it is ready
	for i in $(seq 1000); do
		[ $(( 0x$(awk "/^SigCgt/ { print \$2 }" /proc/$p/status) & 2 )) != 0 ] && break
		sleep 0.01
	done
	grep -q "programs attached" "$4" && echo "handler only after the start" >>"$4"
	kill -INT $p
	wait $p' _ "$BIOTAPE" "$D/early.btape" "$LOOP" "$D/early.err" || rc=$?
[ $rc = 1 ] || fail "SIGINT before the start: exit $rc, want 1 ($(cat "$D/early.err"))"
grep -q "stopped by signal 2 before the recording started" "$D/early.err" ||
	fail "SIGINT before the start: $(cat "$D/early.err")"
[ ! -e "$D/early.btape" ] || fail "SIGINT before the start left $D/early.btape"
pass "record_kill: killed trace readable ($n events), SIGTERM trace complete ($m events), SIGHUP trace complete ($h events)"
