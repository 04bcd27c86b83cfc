#!/bin/bash
# The recorder's own output on a recorded disk must not show up in the trace. Its writes are
# filtered by pid, but buffered file data reaches the disk later, as the I/O of whoever writes
# it back (a flusher thread, or here a `sync` run by the recorded command). The writer starts
# writeback of every chunk itself (sync_file_range), so those writes are the recorder's own.
# Checked: no event touches the blocks of the trace file (its extents from filefrag), while
# the fio job on the same file system is there.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3 mkfs.ext4 mount umount filefrag
D=$(t_tmpdir) || exit 1
t_loop 128
t_ext4
# fio for ~3 s (several chunks of trace: the writer flushes at least once a second), a pause
# so that the last chunk is written, then a sync that would write back whatever is dirty.
"$BIOTAPE" record -v -o "$MNT/self.btape" -d "$LOOP" -- sh -c "fio --name=w \
	--filename=$MNT/data --size=32M --rw=randwrite --bs=4k --iodepth=8 --ioengine=io_uring \
	--direct=1 --time_based --runtime=3 --output=/dev/null && sleep 2 && sync" \
	2>"$D/rec.err" || { cat "$D/rec.err"; fail "record"; }
sync
"$BIOTAPE" dump --csv "$MNT/self.btape" >"$D/t.csv" || fail "dump"
filefrag -v "$MNT/self.btape" >"$D/frag.txt" || fail "filefrag"
python3 - "$D/t.csv" "$D/frag.txt" "$(stat -c %s "$MNT/self.btape")" <<'PY' || R=1
import csv, re, sys
ext = []   # trace file extents in 512-byte sectors [lo, hi)
spb = None # sectors per file-system block ("... (N blocks of 1024 bytes)")
for line in open(sys.argv[2]):
    m = re.search(r"blocks of (\d+) bytes", line)
    if m:
        spb = int(m.group(1)) // 512
    m = re.match(r"\s*\d+:\s*\d+\.\.\s*\d+:\s*(\d+)\.\.\s*(\d+):", line)
    if m:
        ext.append((int(m.group(1)) * spb, (int(m.group(2)) + 1) * spb))
assert ext, "filefrag gave no extents"
rows = list(csv.DictReader(open(sys.argv[1])))
writes = [r for r in rows if r["op"] == "write"]
fio = sum(1 for r in writes if r["comm"] == "fio")
hit = [r for r in writes if any(int(r["sector"]) < hi and lo < int(r["sector"]) + int(r["bytes"]) // 512
                                for lo, hi in ext)]
print(f"trace file: {sys.argv[3]} bytes in {len(ext)} extents; {len(rows)} events, "
      f"{fio} fio writes, {len(hit)} writes to the trace file's blocks")
for r in hit[:5]:
    print("  ", r["comm"], r["pid"], r["sector"], r["bytes"])
assert fio > 1000, f"only {fio} fio writes recorded"
assert not hit, "the recorder's own output is in the trace"
PY
[ -n "${KEEP_DEBUG:-}" ] && { filefrag -v "$MNT/data" >"$KEEP_DEBUG/data.frag"; cp "$D/frag.txt" "$D/t.csv" "$KEEP_DEBUG/"; }
[ "${R:-0}" = 0 ] || fail "trace file blocks in the trace"
pass "record_own_output: the trace holds none of its own writes"
