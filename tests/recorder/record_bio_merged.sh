#!/bin/bash
# --layer bio on requests that carry many bios: ext4 on 1 KiB blocks writes its metadata as one
# bio per buffer and the block layer merges them (up to max_segments, 128 on loop, per request).
# Every bio must be recorded: a bio recorder and a request recorder running at the same time
# see the same bytes. (Before the bpf_loop walk, bios after the 64th of a request were silently
# missing: ~1 MB of 4.3 MB here.)
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3 mkfs.ext4 mount umount
D=$(t_tmpdir) || exit 1
t_loop 64
t_ext4 -b 1024

rec_start "$D/rq.btape" -d "$LOOP"
RQ_PID=$REC_PID RQ_ERR=$REC_ERR
rec_start "$D/bio.btape" -d "$LOOP" --layer bio
for i in $(seq 2000); do echo "$i" > "$MNT/f$i"; done
sync
rm -f "$MNT"/f*
sync
sleep 0.3
rec_stop INT
BIO_ERR=$REC_ERR
REC_PID=$RQ_PID REC_ERR=$RQ_ERR
rec_stop INT
bytes() { # bytes FILE OP
	"$BIOTAPE" dump --csv "$1" | awk -F, -v op="$2" 'NR > 1 && $7 == op { s += $6 } END { print s + 0 }'
}
rqw=$(bytes "$D/rq.btape" write)
biow=$(bytes "$D/bio.btape" write)
nbio=$("$BIOTAPE" dump --csv "$D/bio.btape" | tail -n +2 | wc -l)
nrq=$("$BIOTAPE" dump --csv "$D/rq.btape" | tail -n +2 | wc -l)
echo "requests: $nrq events, $rqw bytes written; bios: $nbio events, $biow bytes written"
[ "$rqw" -gt 1000000 ] || fail "only $rqw bytes written at the request layer"
[ "$nbio" -gt $((2 * nrq)) ] || fail "bios were not merged ($nbio bios, $nrq requests): test is void"
[ "$biow" = "$rqw" ] || fail "bio layer recorded $biow bytes of writes, the request layer $rqw"
# No task filter: the queue depth is derived from the recorded times, for requests and bios.
for l in rq bio; do
	err=$RQ_ERR
	[ "$l" = bio ] && err=$BIO_ERR
	"$BIOTAPE" dump --csv "$D/$l.btape" > "$D/$l.csv" || fail "dump $l"
	python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/$l.csv" --summary "$err" \
		--no-insert-ok --qd-exact || fail "$l layer: queue depth"
done
REC_ERR=$BIO_ERR
[ "$(rec_lost)" = "0 0 0" ] || fail "bio layer lost events: $(rec_lost)"
pass "record_bio_merged: $nbio bios = $nrq requests = $rqw bytes"
