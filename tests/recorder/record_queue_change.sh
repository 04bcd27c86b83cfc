#!/bin/bash
# The device's queue changes under a recording: the I/O scheduler flips between none and
# mq-deadline (requests move from driver tags to scheduler tags, the tag space is rebuilt) and
# nr_requests goes up and down, while fio runs a mixed job. The recorder sizes its per-tag
# slots once, at start: requests whose tags no longer fit move to the hash map, stale slot
# owners are retired. Whatever the queue did, the trace must hold fio's exact I/O, in issue
# order, with no event lost.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
rec_nomerge
DEV_BYTES=$((64 * 1024 * 1024))
q=/sys/block/$(basename "$LOOP")/queue
echo mq-deadline >"$q/scheduler" 2>/dev/null || skip "no mq-deadline scheduler in this kernel"
echo none >"$q/scheduler" || fail "scheduler none"

# flip_queue FLAG_FILE: changes the queue every 20-60 ms until FLAG_FILE is removed; prints
# the number of changes that took effect.
flip_queue() {
	local n=0 i=0 nr
	while [ -e "$1" ]; do
		case $((i % 4)) in
		0) echo mq-deadline >"$q/scheduler" 2>/dev/null && n=$((n + 1)) ;;
		1) for nr in 4 256 32; do echo $nr >"$q/nr_requests" 2>/dev/null && n=$((n + 1)); done ;;
		2) echo none >"$q/scheduler" 2>/dev/null && n=$((n + 1)) ;;
		3) for nr in 8 64; do echo $nr >"$q/nr_requests" 2>/dev/null && n=$((n + 1)); done ;;
		esac
		i=$((i + 1))
		sleep 0.0$((2 + RANDOM % 5))
	done
	echo "$n"
}

FIO=(fio --name=mix --filename="$LOOP" --thread --rw=randrw --rwmixread=70
	--bssplit=4k/60:16k/30:64k/10 --iodepth=32 --ioengine=io_uring --direct=1
	--number_ios=40000 --size=64M --io_size=64G --norandommap --randrepeat=1 --output-format=json)
rec_start "$D/a.btape" -d "$LOOP"
touch "$D/flipping"
flip_queue "$D/flipping" >"$D/flips" &
FLIP_PID=$!
T_PIDS+=("$FLIP_PID")
"${FIO[@]}" --output="$D/a.json" >/dev/null || fail "fio failed"
rm -f "$D/flipping"
wait "$FLIP_PID"
rec_stop INT
flips=$(cat "$D/flips")
echo "queue changes during the run: $flips"
[ "$flips" -ge 6 ] || fail "only $flips queue changes took effect: the test did not test"
# leave the loop device as it was: a scheduler change resets nr_requests to its default
echo mq-deadline >"$q/scheduler" && echo none >"$q/scheduler" || fail "restore scheduler"

reads=$(fio_total "$D/a.json" read)
writes=$(fio_total "$D/a.json" write)
[ "$((reads + writes))" -eq 40000 ] || fail "fio issued $reads + $writes"
"$BIOTAPE" dump --csv "$D/a.btape" > "$D/a.csv" || fail "dump"
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/a.csv" --summary "$REC_ERR" \
	--comm fio --expect read="$reads" --expect write="$writes" \
	--sizes 4096,16384,65536 --dev-bytes "$DEV_BYTES" ||
	fail "trace does not match fio across queue changes"
[ "$(info_get "$D/a.btape" order_violations)" = 0 ] || fail "events written out of issue order"
[ "$(rec_lost)" = "0 0 0" ] || fail "lost events: $(rec_lost)"
pass "record_queue_change: $reads reads + $writes writes exact across $flips queue changes"
