#!/usr/bin/env python3
# Writes the reader fuzz target's footer-tags seeds (docs/BTAPE-FORMAT.md, "Footer tags") from
# a replay result trace, whose footer holds the fidelity section: the file itself, and copies
# whose footer's tags map is rewritten (a duplicate key, a non-string key, a map past the
# item bound, a value nested too deep, a second tags map), checksums and trailer rebuilt.
#   biotape replay small.btape --target /dev/shm/t --create auto --engine null -o r.btape
#   python3 tests/fuzz/footer_tags_seeds.py r.btape tests/fuzz/corpus/reader  (needs zstd)
import os, struct, subprocess, sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from btape_frame import crc32c, frame as envelope

def zstd(raw, d=False):
    args = ['zstd', '-dcq'] if d else ['zstd', '-3', '-cq', '--stream-size=%d' % len(raw)]
    return subprocess.run(args, input=raw, capture_output=True, check=True).stdout

def s(x):
    return bytes([0xa0 | len(x)]) + x.encode()

def trailer(off):
    t = struct.pack('<IIQI', 0x184D2A5C, 24, off, 0)
    return t + struct.pack('<I', crc32c(t)) + b'BTAPEEND'

src, out = sys.argv[1], sys.argv[2]
f = open(src, 'rb').read()
foff = struct.unpack('<Q', f[-24:-16])[0]
clen = struct.unpack('<I', f[foff + 12:foff + 16])[0]
raw = zstd(f[foff + 28:foff + 28 + clen], d=True)
i = raw.rindex(s('tags'))  # the writer puts the tags last
assert 0x80 <= raw[0] < 0x8f, 'the footer map is a fixmap'
base = raw[:i]

def write(name, tags, extra_pairs=0):
    body = bytes([raw[0] + extra_pairs]) + base[1:] + tags
    open(os.path.join(out, name), 'wb').write(
        f[:foff] + envelope(3, zstd(body), len(body)) + trailer(foff))

open(os.path.join(out, 'footer-tags.btape'), 'wb').write(f)
write('footer-tags-dup.btape', s('tags') + b'\x82' + s('a') + b'\x01' + s('a') + b'\x02')
write('footer-tags-intkey.btape', s('tags') + b'\x81\x07\x01')
write('footer-tags-items.btape', s('tags') + b'\x81' + s('a') + b'\xdd' +
      struct.pack('>I', 40000) + b'\xc0' * 40000)
write('footer-tags-deep.btape', s('tags') + b'\x81' + s('a') + b'\x91' * 15 + b'\xc0')
write('footer-tags-twice.btape', raw[i:] + s('tags') + b'\x80', 1)
