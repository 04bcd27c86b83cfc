#!/bin/bash
# fio ground truth: a mixed random job recorded on a loop device. Every I/O fio issued is in the
# trace, with fio's pid and comm, sizes and offsets inside the job, sane latencies.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
rec_nomerge
DEV_BYTES=$((64 * 1024 * 1024))
FIO=(fio --name=mix --filename="$LOOP" --thread --rw=randrw --rwmixread=70
	--bssplit=4k/60:16k/30:64k/10 --iodepth=16 --ioengine=io_uring --direct=1
	--number_ios=3000 --size=64M --norandommap --randrepeat=1 --output-format=json)

# 1. `-- COMMAND`: record while fio runs, stop when it exits.
start=$(date +%s%N)
"$BIOTAPE" record -o "$D/a.btape" -d "$LOOP" -- "${FIO[@]}" --output="$D/a.json" 2>"$D/a.err" ||
	{ cat "$D/a.err"; fail "record -- fio failed"; }
wall=$(($(date +%s%N) - start))
cat "$D/a.err"
grep -q "command exited with status 0" "$D/a.err" || fail "fio did not exit 0"
reads=$(fio_total "$D/a.json" read)
writes=$(fio_total "$D/a.json" write)
[ "$((reads + writes))" -eq 3000 ] || fail "fio issued $reads + $writes"
"$BIOTAPE" dump --csv "$D/a.btape" > "$D/a.csv" || fail "dump"
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/a.csv" --summary "$D/a.err" --comm fio \
	--expect read="$reads" --expect write="$writes" --sizes 4096,16384,65536 \
	--dev-bytes "$DEV_BYTES" --wall-ns "$wall" --qd-max 16 --qd-exact ||
	fail "trace a does not match fio"
# fio ran with --thread: one process did every I/O.
npids=$(awk -F, 'NR > 1 && $12 == "fio" { print $10 }' "$D/a.csv" | sort -u | wc -l)
[ "$npids" -eq 1 ] || fail "fio's I/O attributed to $npids pids"
[ "$(info_get "$D/a.btape" source)" = ebpf:rq ] || fail "info: source is not ebpf:rq"
[ "$(info_get "$D/a.btape" order_violations)" = 0 ] || fail "events written out of issue order"
[ "$(info_get "$D/a.btape" devices.0.name)" = "$(basename "$LOOP")" ] || fail "device table"
[ "$(info_get "$D/a.btape" devices.0.size_bytes)" = "$DEV_BYTES" ] || fail "device size"

# 2. -p PID: only that process; started before fio's first I/O.
"${FIO[@]}" --output="$D/b.json" --startdelay=3 >/dev/null &
FIO_PID=$!
T_PIDS+=("$FIO_PID")
rec_start "$D/b.btape" -d "$LOOP" -p "$FIO_PID"
# Noise from another process on the same device must not show up.
dd if="$LOOP" of=/dev/null bs=4k count=64 iflag=direct status=none
wait "$FIO_PID" || fail "fio failed"
rec_stop INT
"$BIOTAPE" dump --csv "$D/b.btape" > "$D/b.csv" || fail "dump b"
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/b.csv" --summary "$REC_ERR" \
	--only-pid "$FIO_PID" \
	--pid "$FIO_PID" --expect read="$(fio_total "$D/b.json" read)" \
	--expect write="$(fio_total "$D/b.json" write)" --sizes 4096,16384,65536 \
	--dev-bytes "$DEV_BYTES" --qd-max 16 || fail "trace b (-p) does not match fio"
[ "$(rec_lost)" = "0 0 0" ] || fail "lost events: $(rec_lost)"

# 3. Where requests are kept: one slot per tag, indexed by the driver tag without an I/O
# scheduler and by the scheduler tag with one, and the hash map alone (--inflight-max: what
# devices without slots use); and the raw_tp programs. Each must give fio's exact I/O, and
# with slots no request may have gone to the hash map (a wrong slot index falls back there).
sched=/sys/block/$(basename "$LOOP")/queue/scheduler
for way in none mq-deadline hash raw_tp; do
	args=(-v)
	if [ "$way" = hash ] || [ "$way" = raw_tp ]; then
		echo none >"$sched" || fail "scheduler none"
		[ "$way" = hash ] && args+=(--inflight-max 4096)
		[ "$way" = raw_tp ] && args+=(--prog-type raw_tp)
	elif ! echo "$way" >"$sched" 2>/dev/null; then
		echo "note: no $way scheduler in this kernel, not tested"
		continue
	fi
	grep -q "\[${way/hash/none}\]\|\[${way/raw_tp/none}\]" "$sched" || fail "scheduler for $way"
	"$BIOTAPE" record "${args[@]}" -o "$D/c.btape" -d "$LOOP" -- "${FIO[@]}" \
		--output="$D/c.json" 2>"$D/c.err" || { cat "$D/c.err"; fail "record ($way) failed"; }
	where=$(sed -n 's/.*in-flight slots \([0-9]*\), entries made in the hash map \([0-9]*\).*/\1 \2/p' \
		"$D/c.err")
	case $way in
	hash) [ "${where% *}" = 0 ] && [ "${where#* }" -gt 0 ] ||
		fail "--inflight-max: slots/hash entries '$where'" ;;
	*) [ "${where% *}" -gt 0 ] && [ "${where#* }" = 0 ] ||
		fail "($way) requests went to the hash map, not their slots: '$where'" ;;
	esac
	"$BIOTAPE" dump --csv "$D/c.btape" > "$D/c.csv" || fail "dump c"
	python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/c.csv" --summary "$D/c.err" \
		--comm fio \
		--expect read="$(fio_total "$D/c.json" read)" \
		--expect write="$(fio_total "$D/c.json" write)" --sizes 4096,16384,65536 \
		--dev-bytes "$DEV_BYTES" --qd-max 16 --qd-exact ||
		fail "trace c ($way) does not match fio"
	[ "$(info_get "$D/c.btape" order_violations)" = 0 ] || fail "($way) out of issue order"
	grep -q "lost 0 events" "$D/c.err" || { cat "$D/c.err"; fail "($way) lost events"; }
done
echo none >"$sched"
pass "record_fio: $reads reads + $writes writes recorded exactly, attributed to fio"
