#!/bin/bash
# The decompressed frames of every trace open at once are bounded together (format/reader.c,
# READERS_RAW_MAX, 1 GiB): a 10 KB trace whose one chunk declares 250 MiB of columns is read
# (one frame may be that large), but eight of them at once are refused in one line, exit 1,
# instead of taking 2 GB (256 of them would have asked for 64 GiB).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
command -v python3 >/dev/null && command -v zstd >/dev/null || skip "needs python3 and zstd"
D=$(t_tmpdir) || exit 1
python3 - "$D" <<'PY' || fail "cannot write the padded trace"
import struct, subprocess, sys

def crc32c(b, crc=0):
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    crc ^= 0xFFFFFFFF
    for x in b:
        crc = t[(crc ^ x) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def mp(o):  # the msgpack subset the format uses
    if isinstance(o, bool): return b"\xc3" if o else b"\xc2"
    if isinstance(o, int): return bytes([o]) if 0 <= o < 128 else b"\xcf" + struct.pack(">Q", o)
    if isinstance(o, str):
        b = o.encode()
        return (bytes([0xA0 | len(b)]) if len(b) < 32 else b"\xdb" + struct.pack(">I", len(b))) + b
    if isinstance(o, bytes): return b"\xc6" + struct.pack(">I", len(o)) + o
    if isinstance(o, list): return b"\xdd" + struct.pack(">I", len(o)) + b"".join(map(mp, o))
    if isinstance(o, dict):
        return b"\xdf" + struct.pack(">I", len(o)) + b"".join(mp(k) + mp(v) for k, v in o.items())
    raise TypeError(o)

def col(kind, base, origin=None):  # a column of constant values: width 0
    b = bytes([kind, 0, 0]) + bytes([base]) if base < 128 else None
    return b + (bytes([origin]) if origin is not None else b"")

def frame(typ, raw):
    comp = subprocess.run(["zstd", "-q", "-3", "-c"], input=raw, capture_output=True,
                          check=True).stdout
    e = struct.pack("<IIBBHIII", 0x184D2A5B, 20, typ, 0, 0, len(comp), len(raw), crc32c(comp))
    return e + struct.pack("<I", crc32c(e)) + comp

h = struct.pack("<II", 0x184D2A5A, 16) + b"\x89BTAPE\r\n" + struct.pack("<HH", 1, 2)
meta = {"format": [1, 2], "tool": "test", "hostname": "h", "kernel": "k", "source": "test",
        "capture": "", "clock_mono_ns": 0, "clock_real_ns": 0, "tags": [],
        "devices": [{"major": 8, "minor": 0, "name": "d0", "model": "", "size": 1 << 30,
                     "logical_block": 512, "physical_block": 512, "rotational": 0}]}
raw_cols = {"present": col(0, 0), "issue": col(2, 0, 100), "dev": col(0, 0), "op": col(0, 0),
            "bytes": col(0, 8), "sector": col(0, 0)}
chunk = b"\xdf" + struct.pack(">I", 3) + mp("n") + mp(4) + mp("cols") + \
    b"\xdf" + struct.pack(">I", len(raw_cols)) + \
    b"".join(mp(k) + b"\xc6" + struct.pack(">I", len(v)) + v for k, v in raw_cols.items()) + \
    mp("pad") + mp(bytes(250 << 20))
out = h + struct.pack("<I", crc32c(h)) + frame(1, mp(meta)) + frame(2, chunk)
open(sys.argv[1] + "/pad0.btape", "wb").write(out)
PY
[ "$(stat -c %s "$D/pad0.btape")" -lt 100000 ] || fail "the padded trace is not small"
"$BIOTAPE" info "$D/pad0.btape" >"$D/info" 2>"$D/err" || fail "one padded trace: $(cat "$D/err")"
grep -q "^events: *4 " "$D/info" || fail "one padded trace: $(grep events "$D/info")"
for i in 1 2 3 4 5 6 7; do cp "$D/pad0.btape" "$D/pad$i.btape"; done
rc=0; "$BIOTAPE" analyze "$D"/pad?.btape >/dev/null 2>"$D/err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$D/err")" = 1 ] &&
	grep -q "would take the frames of the traces open at once past 1024 MiB" "$D/err" ||
	fail "eight padded traces at once: exit $rc: $(cat "$D/err")"
pass "the open traces' frames are bounded together"
