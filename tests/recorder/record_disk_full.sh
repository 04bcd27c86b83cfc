#!/bin/bash
# Recording into a full file system: the recorder stops with a clear line and leaves a
# readable trace with a footer, and every event the probes saw is in the file or counted as
# lost, in the summary and in the footer (recorder/README.md, "Loss accounting").
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
FULL=$D/full
mkdir "$FULL" || fail "mkdir"
mount -t tmpfs -o size=1m biotape-test "$FULL" || skip "cannot mount a tmpfs"
T_MOUNTS+=("$FULL")

# ~100k IOPS at about 5 B/event fill 1 MiB in a few seconds; the run stops at the full disk.
rc=0
"$BIOTAPE" record -v -o "$FULL/t.btape" -d "$LOOP" -- fio --name=full --filename="$LOOP" \
	--rw=randread --bs=4k --ioengine=io_uring --direct=1 --iodepth=32 --norandommap \
	--time_based --runtime=120 --size=64M --output-format=terse >/dev/null 2>"$D/err" || rc=$?
cat "$D/err"
[ "$rc" = 1 ] || fail "record into a full file system exited $rc (expected 1)"
grep -q "writing '$FULL/t.btape': No space left on device: recording stopped" "$D/err" ||
	fail "no clear line about the full disk"

recorded=$(sed -n 's/^biotape: recorded \([0-9]*\) events .*/\1/p' "$D/err")
sent=$(sed -n 's/.*record: BPF sent \([0-9]*\) records.*/\1/p' "$D/err")
left=$(sed -n 's/.*record: \([0-9]*\) records left in the rings.*/\1/p' "$D/err")
REC_ERR=$D/err
read -r lost_rb lost_if lost_wr <<<"$(rec_lost)"
[ -n "$recorded" ] && [ -n "$sent" ] && [ -n "$lost_wr" ] || fail "summary lines missing"
lost=$((lost_rb + lost_if + lost_wr))
# What the probes saw: the records they sent and the events they counted as lost (the ring
# loss in the summary also holds the records left in the rings, which were sent).
seen=$((sent + lost_rb - ${left:-0} + lost_if))

"$BIOTAPE" info "$FULL/t.btape" >"$D/info" || { cat "$D/info"; fail "info cannot read the trace"; }
in_file=$(info_get "$FULL/t.btape" events)
dumped=$("$BIOTAPE" dump --csv "$FULL/t.btape" | tail -n +2 | wc -l)
echo "probes saw $seen; in the file $in_file (dump: $dumped), summary: recorded $recorded," \
	"lost $lost (ring $lost_rb, in-flight $lost_if, writer $lost_wr)"
[ "$(info_get "$FULL/t.btape" integrity.damaged)" = false ] || fail "trace reported damaged"
[ "$dumped" = "$in_file" ] || fail "dump reads $dumped events, info says $in_file"
[ "$recorded" = "$in_file" ] || fail "the summary says $recorded events, the file holds $in_file"
[ "$in_file" -gt 100000 ] || fail "only $in_file events before the disk was full"
[ "$lost_wr" -gt 0 ] || fail "nothing counted lost although the disk filled up"
[ $((in_file + lost)) = "$seen" ] ||
	fail "in the file $in_file + lost $lost = $((in_file + lost)) != $seen seen by the probes"
[ "$(info_get "$FULL/t.btape" integrity.has_footer)" = true ] || fail "the trace has no footer"
[ "$(info_get "$FULL/t.btape" lost.total)" = "$lost" ] || fail "the footer's lost count differs"
[ "$(info_get "$FULL/t.btape" lost.writer)" = "$lost_wr" ] || fail "the footer's writer loss differs"

# An import into the full file system fails as a failure (exit 1), not as bad input (exit 2,
# as it did), and leaves nothing at the path.
GEN=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/gen_trace
rm -f "$FULL"/*
"$GEN" -o "$D/g.btape" -n 300000 -r 10000 -p randwrite -S $((1 << 30)) || fail "gen"
"$BIOTAPE" convert "$D/g.btape" "$D/g.fio3" --to fio3 >/dev/null || fail "export"
rc=0; "$BIOTAPE" convert "$D/g.fio3" "$FULL/x.btape" 2>"$D/err" || rc=$?
[ $rc = 1 ] && grep -q "No space left on device" "$D/err" ||
	fail "import into a full file system: exit $rc: $(cat "$D/err")"
[ -z "$(ls "$FULL")" ] || fail "the import left $(ls "$FULL")"
pass "record_disk_full: $in_file in the file + $lost lost = $seen seen, footer agrees"
