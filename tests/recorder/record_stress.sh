#!/bin/bash
# Repeated short fio jobs, each recorded on its own, counts compared with fio's exact numbers:
# a rare silent loss (an I/O neither in the trace nor counted as lost) fails the test.
# STRESS_LOOPS=N (default 3 in the suite; run e.g. 50 by hand) rounds of: sequential write
# (rq layer, no merging), random QD32 randrw (rq layer, order_violations 0), sequential write
# (bio layer, raw_tp), random read (bio layer), random read with the recorder started before
# and stopped by SIGINT after fio.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
rec_nomerge
LOOPS=${STRESS_LOOPS:-3}
COMMON=(--filename="$LOOP" --ioengine=io_uring --direct=1 --size=64M --output-format=json)
SEQ=(fio --name=seq --rw=write --bs=128k --iodepth=4 --number_ios=300 "${COMMON[@]}")
RND=(fio --name=rnd --rw=randrw --rwmixread=70 --bs=4k --iodepth=32 --norandommap
	--number_ios=3000 "${COMMON[@]}")
RRD=(fio --name=rrd --rw=randread --bssplit=4k/50:64k/50 --iodepth=8 --norandommap
	--number_ios=500 "${COMMON[@]}")
bad=0 runs=0
# one NAME ARGS... -- FIO...: records FIO, compares per-op counts with fio's json.
one() {
	local name=$1 args=() r w rr rw lost info
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	runs=$((runs + 1))
	if [ "${args[0]:-}" = --sigint ]; then
		# Recorder started first and stopped by SIGINT after fio (the drain-at-exit path).
		rec_start "$D/$name.btape" -d "$LOOP" "${args[@]:1}"
		"$@" --output="$D/$name.json" || fail "$name: fio"
		rec_stop INT 2>/dev/null
		cp "$REC_ERR" "$D/$name.err"
	elif ! "$BIOTAPE" record -v -o "$D/$name.btape" -d "$LOOP" "${args[@]}" -- "$@" \
		--output="$D/$name.json" 2>"$D/$name.err"; then
		cat "$D/$name.err"; fail "$name: record failed"
	fi
	r=$(fio_total "$D/$name.json" read)
	w=$(fio_total "$D/$name.json" write)
	read -r rr rw < <("$BIOTAPE" dump --csv "$D/$name.btape" |
		awk -F, 'NR > 1 { n[$7]++ } END { print n["read"] + 0, n["write"] + 0 }')
	REC_ERR=$D/$name.err
	lost=$(rec_lost)
	info=$(info_get "$D/$name.btape" order_violations)
	if [ "$rr" != "$r" ] || [ "$rw" != "$w" ] || [ "$lost" != "0 0 0" ] || [ "$info" != 0 ]; then
		bad=$((bad + 1))
		echo "MISMATCH $name: fio read $r write $w, trace read $rr write $rw," \
			"lost $lost, order_violations $info"
		grep -E "BPF sent|skipped|without a seen" "$D/$name.err"
		cp "$D/$name.btape" "/dev/shm/biotape-stress-$name-$runs.btape" 2>/dev/null
	fi
}
for i in $(seq "$LOOPS"); do
	one seq -- "${SEQ[@]}"
	one rnd -- "${RND[@]}"
	one bioseq --layer bio --prog-type raw_tp -- "${SEQ[@]}"
	one biornd --layer bio -- "${RRD[@]}"
	one sigrnd --sigint -- "${RRD[@]}"
done
# Time-based QD32 randrw runs checked against the kernel's own count (/sys/block/DEV/stat)
# (STRESS_DISKSTATS=0 turns them off). They found completions the kernel ran no program for
# (see record_unseen_complete.sh): those events are kept without a completion time.
if [ "${STRESS_DISKSTATS:-1}" = 1 ]; then
	N=$(basename "$LOOP")
	for i in $(seq "$LOOPS"); do
		runs=$((runs + 1))
		s0=$(awk '{ print $1 + $5 }' "/sys/block/$N/stat")
		"$BIOTAPE" record -v -o "$D/tb.btape" -d "$LOOP" -- fio --name=tb --rw=randrw --bs=4k \
			--iodepth=32 --thread --norandommap --time_based --runtime=3 "${COMMON[@]}" \
			--output="$D/tb.json" 2>"$D/tb.err" || { cat "$D/tb.err"; fail "tb: record"; }
		s1=$(awk '{ print $1 + $5 }' "/sys/block/$N/stat")
		t=$(info_get "$D/tb.btape" events)
		REC_ERR=$D/tb.err
		if [ "$t" != $((s1 - s0)) ] || [ "$(rec_lost)" != "0 0 0" ]; then
			bad=$((bad + 1))
			echo "MISMATCH tb: kernel completed $((s1 - s0)), trace $t, lost $(rec_lost)"
			grep -E "issued|BPF sent" "$D/tb.err"
		fi
		grep "no completion time" "$D/tb.err" || true
	done
fi
echo "$runs recordings, $bad mismatches"
[ "$bad" = 0 ] || fail "$bad of $runs recordings do not match fio exactly"
pass "record_stress: $runs recordings ($LOOPS rounds) match fio exactly"
