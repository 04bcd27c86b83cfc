#!/bin/bash
# Completions the kernel runs no program for (it skips tracing programs in some contexts
# without counting a miss: a sandbox kernel here hid its init task's softirq time so). The
# recorder must keep those I/Os: an issued request whose slot is taken by a new request is
# sent without a completion time, and so is one still open when recording stops. The kernel's
# skip is injected (BIOTAPE_TEST_SKIP_COMPLETE=N: every Nth completion ignored), and the trace
# must still hold exactly the I/Os fio did, in issue order, nothing counted lost: at the
# request layer (slot reuse at block_io_start) and the bio layer (bio reuse at block_bio_queue).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
rec_nomerge
COMMON=(--filename="$LOOP" --ioengine=io_uring --direct=1 --size=64M --output-format=json)
for cfg in 7 2 5:bio; do
	n=${cfg%%:*} layer=rq
	[ "$cfg" = "$n" ] || layer=${cfg#*:}
	BIOTAPE_TEST_SKIP_COMPLETE=$n "$BIOTAPE" record -v -o "$D/u$n.btape" -d "$LOOP" \
		--layer "$layer" -- \
		fio --name=rnd --rw=randrw --rwmixread=70 --bs=4k --iodepth=32 --norandommap \
		--number_ios=3000 "${COMMON[@]}" --output="$D/u$n.json" 2>"$D/u$n.err" ||
		{ cat "$D/u$n.err"; fail "record with every ${n}th completion skipped"; }
	REC_ERR=$D/u$n.err
	r=$(fio_total "$D/u$n.json" read)
	w=$(fio_total "$D/u$n.json" write)
	# bad: a wrong size, no issue time, or an I/O twice (an orphan is a copy of its entry)
	read -r tr tw nc bad < <("$BIOTAPE" dump --csv "$D/u$n.btape" | awk -F, 'NR > 1 {
		n[$7]++; if ($2 == "") nc++; if ($6 != 4096 || $1 == "" || seen[$1 "," $5]++) bad++ }
		END { print n["read"] + 0, n["write"] + 0, nc + 0, bad + 0 }')
	said=$(sed -n 's/^biotape: \([0-9]*\) events\{0,1\} ha[sv]e\{0,1\} no completion time.*/\1/p' "$D/u$n.err")
	reused=$(sed -n 's/.*(\([0-9]*\) found when their request or bio was reused.*/\1/p' "$D/u$n.err")
	echo "$layer layer, skip every ${n}th: fio $r/$w, trace $tr/$tw, without completion $nc (said ${said:-none}, at reuse ${reused:-?}), lost $(rec_lost)"
	[ "$tr" = "$r" ] && [ "$tw" = "$w" ] || fail "skip $n: trace $tr/$tw, fio $r/$w"
	[ "$(rec_lost)" = "0 0 0" ] || fail "skip $n: lost $(rec_lost)"
	[ "$bad" = 0 ] || fail "skip $n: $bad events with a wrong size, no issue time, or twice"
	[ "$(info_get "$D/u$n.btape" order_violations)" = 0 ] || fail "skip $n: order violations"
	# About 1 in n completions skipped (give or take the ones that were never ours to skip).
	[ "$nc" -ge $((3000 / n / 2)) ] && [ "$nc" -le $((3000 / n * 2)) ] ||
		fail "skip $n: $nc events without completion, expected about $((3000 / n))"
	[ "$said" = "$nc" ] || fail "skip $n: the summary says ${said:-nothing}, the trace has $nc"
	[ "$reused" -gt 0 ] || fail "skip $n: none found at request reuse"
	"$BIOTAPE" analyze "$D/u$n.btape" | grep -q "^  $nc events without a completion time" ||
		fail "skip $n: analyze does not say that $nc events have no completion time"
done
# Flushes: the flush machinery's own request has no block_io_start and is reused for every
# flush; an unseen completion of it must not swallow the next flush. fio fsyncs after every
# write (write, flush and the preflush's empty completion: skip every 4th, not a multiple of 3).
BIOTAPE_TEST_SKIP_COMPLETE=4 "$BIOTAPE" record -v -o "$D/f.btape" -d "$LOOP" -- fio --name=f \
	--rw=randwrite --bs=4k --fsync=1 --number_ios=600 "${COMMON[@]}" --output="$D/f.json" \
	2>"$D/f.err" || { cat "$D/f.err"; fail "record with fsync"; }
REC_ERR=$D/f.err
w=$(fio_total "$D/f.json" write)
s=$(fio_total "$D/f.json" sync)
read -r tw tf nc < <("$BIOTAPE" dump --csv "$D/f.btape" | awk -F, 'NR > 1 {
	n[$7]++; if ($2 == "") nc++ } END { print n["write"] + 0, n["flush"] + 0, nc + 0 }')
echo "fsync, skip every 4th: fio writes $w syncs $s, trace writes $tw flushes $tf, without completion $nc, lost $(rec_lost)"
[ "$tw" = "$w" ] || fail "fsync: trace has $tw writes, fio did $w"
[ "$tf" -ge "$s" ] || fail "fsync: trace has $tf flushes, fio did $s fsyncs"
[ "$(rec_lost)" = "0 0 0" ] || fail "fsync: lost $(rec_lost)"
[ "$nc" -gt 0 ] || fail "fsync: no event without completion: the skip did not happen?"
# With half the completions skipped, some of the last requests are still open at the stop.
grep -q "[1-9][0-9]* still open at the stop" "$D/u2.err" || fail "skip 2: no open request flushed at the stop"
pass "record_unseen_complete: every I/O kept when completions go unseen"
