#!/bin/bash
# fsync and trim are captured as flush and discard requests, attributed to the submitter.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 32
rec_nomerge
rec_start "$D/t.btape" -d "$LOOP" --comm fio
# Synchronous writes with an fsync after every 4th: one flush request per fsync.
fio --name=fs --filename="$LOOP" --rw=randwrite --bs=4k --ioengine=psync --direct=1 \
	--number_ios=200 --fsync=4 --size=32M --output-format=json --output="$D/fs.json" ||
	fail "fio fsync job"
# Trims through BLKDISCARD.
fio --name=tr --filename="$LOOP" --rw=randtrim --bs=64k --ioengine=psync \
	--number_ios=40 --size=32M --output-format=json --output="$D/tr.json" || fail "fio trim job"
rec_stop INT
"$BIOTAPE" dump --csv "$D/t.btape" > "$D/t.csv" || fail "dump"
syncs=$(fio_total "$D/fs.json" sync)
trims=$(fio_total "$D/tr.json" trim)
[ "$syncs" -ge 40 ] || fail "fio reports only $syncs fsyncs"
# fsync on a block device flushes the write cache: the loop device (direct I/O) advertises one,
# so the block layer issues one REQ_OP_FLUSH request per fsync (they are serialised by psync).
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/t.csv" --summary "$REC_ERR" --comm fio \
	--expect write=200 --expect-min flush="$syncs" --expect-max flush="$((syncs + 2))" \
	--expect discard="$trims" --attributed flush --attributed discard ||
	fail "flush/discard not captured as expected ($syncs fsyncs, $trims trims)"
# A discard carries its size; a flush has none.
awk -F, 'NR > 1 && $7 == "discard" && $6 != 65536 { bad = 1 } NR > 1 && $7 == "flush" && $6 != 0 { bad = 1 } END { exit bad }' \
	"$D/t.csv" || fail "discard size or flush size wrong"
pass "record_flush_discard: $syncs fsyncs -> flushes, $trims trims -> discards"
