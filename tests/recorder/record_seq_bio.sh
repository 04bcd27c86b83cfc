#!/bin/bash
# A sequential job is seen as sequential; --layer bio records bios as submitted (and exercises
# the raw_tp fallback: --prog-type raw_tp skips tp_btf).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 64
SEQ=(fio --name=seq --filename="$LOOP" --rw=write --bs=128k --ioengine=io_uring --direct=1
	--iodepth=4 --number_ios=300 --size=64M --output-format=json)

"$BIOTAPE" record -o "$D/rq.btape" -d "$LOOP" --comm fio -- "${SEQ[@]}" --output="$D/rq.json" \
	2>"$D/rq.err" || { cat "$D/rq.err"; fail "record rq"; }
"$BIOTAPE" dump --csv "$D/rq.btape" > "$D/rq.csv" || fail "dump rq"
# Requests: the block layer may merge sequential bios, so count bytes, not I/Os.
bytes=$(awk -F, 'NR > 1 && $7 == "write" { s += $6 } END { print s + 0 }' "$D/rq.csv")
[ "$bytes" -eq $((300 * 131072)) ] || fail "rq layer: $bytes bytes written, expected $((300 * 131072))"
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/rq.csv" --summary "$D/rq.err" --comm fio --seq-min 0.95 ||
	fail "rq layer: sequential job not sequential"

"$BIOTAPE" record -o "$D/bio.btape" -d "$LOOP" --comm fio --layer bio --prog-type raw_tp -- "${SEQ[@]}" \
	--output="$D/bio.json" 2>"$D/bio.err" || { cat "$D/bio.err"; fail "record bio"; }
"$BIOTAPE" dump --csv "$D/bio.btape" > "$D/bio.csv" || fail "dump bio"
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/bio.csv" --summary "$D/bio.err" --comm fio \
	--expect write=300 --sizes 131072 --seq-min 0.95 --no-insert-ok ||
	fail "bio layer: not one sequential 128 KiB bio per fio write"
"$BIOTAPE" info "$D/bio.btape" | grep -q "ebpf:bio" || fail "info: source is not ebpf:bio"
pass "record_seq_bio"
