#!/bin/bash
# Several devices busy at once: three loop devices, one fio job each, all running together under
# one recording (-d three times). Requests of different devices carry the same tags (every
# loop device numbers its tags from 0), so in-flight state that is not kept apart per device
# makes one device's requests take another's entries. Every request each job issued must be in
# the trace, on its own device and from its own job, with nothing lost, each in the slot of
# its own (device, queue, tag): none in the hash map, no completion of a request never seen.
# The third device runs mq-deadline (scheduler tags, a deeper tag space): the devices' slot
# ranges differ in size, as on a real machine.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
NDEV=3
DEV_BYTES=$((64 * 1024 * 1024))
NUMBER_IOS=20000
LOOPS=()
for i in $(seq "$NDEV"); do
	t_loop 64
	rec_nomerge
	LOOPS+=("$LOOP")
done
sched=/sys/block/$(basename "${LOOPS[2]}")/queue/scheduler
echo mq-deadline >"$sched" 2>/dev/null || echo "note: no mq-deadline in this kernel: all on none"

args=()
for l in "${LOOPS[@]}"; do args+=(-d "$l"); done
rec_start "$D/t.btape" "${args[@]}"
# One fio process per device (--thread: its I/O carries that process's pid), all at once; the
# third job also writes.
FIO_PIDS=()
for i in $(seq 0 $((NDEV - 1))); do
	rw=(--rw=randread)
	[ "$i" = 2 ] && rw=(--rw=randrw --rwmixread=70)
	fio --name="dev$i" --filename="${LOOPS[i]}" --thread "${rw[@]}" --bs=4k --iodepth=8 \
		--ioengine=io_uring --direct=1 --number_ios="$NUMBER_IOS" --size=64M \
		--io_size=64G --norandommap --randrepeat=1 --output-format=json \
		--output="$D/fio$i.json" >/dev/null &
	FIO_PIDS+=("$!")
	T_PIDS+=("$!")
done
for i in $(seq 0 $((NDEV - 1))); do
	wait "${FIO_PIDS[i]}" || fail "fio on ${LOOPS[i]} failed"
done
rec_stop INT

[ "$(rec_lost)" = "0 0 0" ] || fail "lost events: $(rec_lost)"
"$BIOTAPE" dump --csv "$D/t.btape" >"$D/t.csv" || fail "dump"

# The whole trace: sizes, offsets, latencies, insert times and queue depths (per device, from
# the file's own times); events without a completion time only as many as the summary says (the
# kernel can skip a completion program: recorder/README.md).
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/t.csv" --summary "$REC_ERR" \
	--sizes 4096 --dev-bytes "$DEV_BYTES" --qd-max 8 --qd-exact || fail "the trace is not sane"
total=0
for i in $(seq 0 $((NDEV - 1))); do
	reads=$(fio_total "$D/fio$i.json" read)
	writes=$(fio_total "$D/fio$i.json" write)
	[ "$((reads + writes))" -eq "$NUMBER_IOS" ] || fail "fio on ${LOOPS[i]} issued $reads + $writes"
	total=$((total + NUMBER_IOS))
	# the trace's device index of this loop device (the table follows -d's order; look it up)
	idx=
	for j in $(seq 0 $((NDEV - 1))); do
		[ "$(info_get "$D/t.btape" "devices.$j.name")" = "$(basename "${LOOPS[i]}")" ] && idx=$j
	done
	[ -n "$idx" ] || fail "${LOOPS[i]} is not in the trace's device table"
	# this device's events: all from its own job, exactly the reads and writes fio counted
	got=$(awk -F, -v d="$idx" -v pid="${FIO_PIDS[i]}" '
		NR > 1 && $4 == d { n++; if ($10 != pid) other++; else if ($7 == "read") r++;
				    else if ($7 == "write") w++ }
		NR > 1 && $4 != d && $10 == pid { away++ }
		END { printf "%d %d %d %d %d", n, r, w, other, away }' "$D/t.csv")
	read -r ondev r w other away <<<"$got"
	echo "${LOOPS[i]} (device $idx): fio issued $reads reads + $writes writes; the trace" \
		"holds $ondev events: $r reads, $w writes of this job, $other of another job;" \
		"$away of this job on another device"
	[ "$r" -eq "$reads" ] && [ "$w" -eq "$writes" ] && [ "$other" = 0 ] && [ "$away" = 0 ] ||
		fail "${LOOPS[i]}: the trace does not hold exactly what its fio job issued"
done
rows=$(($(wc -l <"$D/t.csv") - 1))
[ "$rows" -eq "$total" ] || fail "$rows events in the trace, the jobs issued $total"
[ "$(info_get "$D/t.btape" order_violations)" = 0 ] || fail "events written out of issue order"

# Where the requests were kept (-v): each in its own slot. A request whose slot another
# device's request took is found in neither at its issue (an entry in the hash map) nor at its
# completion (a completion of an unseen request).
issued=$(sed -n 's/.*record: issued \([0-9]*\), completions of unseen requests \([0-9]*\).*/\1 \2/p' \
	"$REC_ERR")
where=$(sed -n 's/.*in-flight slots \([0-9]*\), entries made in the hash map \([0-9]*\).*/\1 \2/p' \
	"$REC_ERR")
# (a requeued request is marked again at its reissue: at least one per request)
[ "${issued% *}" -ge "$total" ] || fail "the programs marked ${issued% *} requests issued, of $total"
[ "${issued#* }" = 0 ] || fail "${issued#* } completions of requests never seen"
[ "${where% *}" -gt 0 ] && [ "${where#* }" = 0 ] ||
	fail "requests went to the hash map, not their slots (slots, hash entries: $where)"
pass "record_multidev: $NDEV devices at once, $NUMBER_IOS requests each, all in the trace"
