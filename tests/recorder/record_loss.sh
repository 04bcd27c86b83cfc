#!/bin/bash
# A ring too small to keep up loses events, and the trace says exactly how many:
# captured + lost = issued.
. "$BIOTAPE_SRC/tests/lib.sh"
. "$BIOTAPE_SRC/tests/recorder/rec_lib.sh"
rec_require python3
D=$(t_tmpdir)
t_loop 64
rec_nomerge
N=16000
fio --name=burst --filename="$LOOP" --thread --rw=randread --bs=4k --ioengine=io_uring \
	--direct=1 --norandommap --iodepth=32 --iodepth_batch_submit=32 --iodepth_batch_complete_min=16 \
	--number_ios=$N --size=64M --startdelay=3 --output-format=json --output="$D/f.json" &
FIO_PID=$!
T_PIDS+=("$FIO_PID")
# 4 KiB rings hold ~39 records each, and a consumer that drains them only every 100 ms (test
# knobs) cannot keep up with fio: reservations fail.
rec_start "$D/t.btape" -d "$LOOP" -p "$FIO_PID" --ring-size-kb 4 --consumer-pause-ms 100
wait "$FIO_PID" || fail "fio"
rec_stop INT
issued=$(fio_total "$D/f.json" read)
[ "$issued" -eq "$N" ] || fail "fio issued $issued"
captured=$("$BIOTAPE" dump --csv "$D/t.btape" | awk -F, -v p="$FIO_PID" 'NR > 1 && $10 == p' | wc -l)
read -r lost_rb lost_if lost_wr <<<"$(rec_lost)"
[ -n "$lost_rb" ] || fail "no loss summary"
echo "issued $issued captured $captured lost: ring $lost_rb in-flight $lost_if writer $lost_wr"
[ "$lost_rb" -gt 0 ] || fail "no loss although the ring is tiny and the consumer slow"
[ $((captured + lost_rb + lost_if + lost_wr)) -eq "$issued" ] ||
	fail "captured $captured + lost $((lost_rb + lost_if + lost_wr)) != issued $issued"
[ "$(info_get "$D/t.btape" lost.ringbuf)" = "$lost_rb" ] ||
	fail "the trace footer does not report the $lost_rb lost events"
pass "record_loss: $captured captured + $lost_rb lost = $issued issued"
