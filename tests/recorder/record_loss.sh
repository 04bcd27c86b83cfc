#!/bin/bash
# A ring too small to keep up loses events, and the trace says exactly how many:
# captured + lost = issued.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
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

# An in-flight map too small for the device's request pool (test knob), with a task filter:
# requests whose slot cannot be created are counted once each, exactly.
"$BIOTAPE" record -o "$D/m.btape" -d "$LOOP" --inflight-max 16 --comm fio -- fio --name=m \
	--filename="$LOOP" --rw=randread --bs=4k --ioengine=io_uring --direct=1 --iodepth=32 \
	--norandommap --number_ios=3000 --size=64M --output-format=json --output="$D/m.json" \
	2>"$D/m.err" || { cat "$D/m.err"; fail "record with a tiny in-flight map"; }
REC_ERR=$D/m.err
read -r m_rb m_if m_wr <<<"$(rec_lost)"
m_cap=$("$BIOTAPE" dump --csv "$D/m.btape" | tail -n +2 | wc -l)
m_issued=$(fio_total "$D/m.json" read)
echo "tiny map: issued $m_issued captured $m_cap lost: ring $m_rb in-flight $m_if writer $m_wr"
[ "$m_if" -gt 0 ] || fail "no in-flight loss with a 16-entry map at QD32"
[ $((m_cap + m_rb + m_if + m_wr)) -eq "$m_issued" ] ||
	fail "tiny map: captured $m_cap + lost $((m_rb + m_if + m_wr)) != issued $m_issued"
pass "record_loss: $captured captured + $lost_rb lost = $issued issued; tiny map: $m_cap + $m_if = $m_issued"
