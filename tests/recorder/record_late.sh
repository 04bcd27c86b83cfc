#!/bin/bash
# Late events: a request the writer could no longer hold for sorting is written after requests
# issued after it (order_violations). The loop device completes in order, so lateness is made:
# every 5th completion is hidden from the recorder (BIOTAPE_TEST_SKIP_COMPLETE, as a kernel
# can; recorder/README.md), and such a request is sent only when its slot is reused, after
# later requests; the writer's hold is shrunk to 4 events (test knob --reorder-events), so
# those requests are gone from it by then. The trace must still hold every I/O
# fio did, nothing lost, and the recorder's summary must say how many were late, the same
# count as the footer's order_violations, and (only when it derives queue depths itself, i.e.
# without a task filter) that the depths around them are approximate.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
rec_nomerge
for filter in none comm; do
	args=()
	[ "$filter" = comm ] && args=(--comm fio)
	BIOTAPE_TEST_SKIP_COMPLETE=5 "$BIOTAPE" record -o "$D/$filter.btape" -d "$LOOP" \
		--reorder-events 4 "${args[@]}" -- \
		fio --name=late --filename="$LOOP" --rw=randread --bs=4k --iodepth=32 \
		--ioengine=io_uring --direct=1 --size=64M --norandommap --number_ios=4000 \
		--output-format=json --output="$D/$filter.json" 2>"$D/$filter.err" ||
		{ cat "$D/$filter.err"; fail "record ($filter)"; }
	REC_ERR=$D/$filter.err
	r=$(fio_total "$D/$filter.json" read)
	tr=$("$BIOTAPE" dump --csv "$D/$filter.btape" | awk -F, 'NR > 1 && $7 == "read"' | wc -l)
	said=$(sed -n 's/^biotape: \([0-9]*\) events\{0,1\} w[a-z]* written out of issue order.*/\1/p' "$REC_ERR")
	footer=$(info_get "$D/$filter.btape" order_violations)
	echo "filter $filter: fio $r reads, trace $tr, late: summary ${said:-none}, footer $footer, lost $(rec_lost)"
	[ "$tr" = "$r" ] || fail "$filter: trace has $tr reads, fio did $r"
	[ "$(rec_lost)" = "0 0 0" ] || fail "$filter: lost $(rec_lost)"
	[ "$footer" -gt 0 ] || fail "$filter: no late event"
	[ "$said" = "$footer" ] || fail "$filter: the summary says ${said:-nothing}, the footer $footer"
	if [ "$filter" = none ]; then
		grep -q "out of issue order.*the queue depths around them are approximate" "$REC_ERR" ||
			fail "none: the summary does not say the depths are approximate"
	else
		! grep -q "approximate" "$REC_ERR" ||
			fail "comm: the kernel's counter is exact, the summary says approximate"
	fi
done
pass "record_late: late events are counted in the summary and the footer alike"
