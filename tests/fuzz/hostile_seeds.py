#!/usr/bin/env python3
# Writes the fuzz seeds of issue #15 (items 6 and 7): tiny inputs whose zstd payloads expand
# into huge msgpack structures. A reader that allocates for what they declare exceeds the
# fuzzers' memory limits (.ci/run): 2 M devices of 544 bytes (1.1 GB), 24 M array elements of
# 24 bytes (msgpack-c objects, 576 MB).
#   python3 tests/fuzz/hostile_seeds.py tests/fuzz/corpus      (needs the zstd program)
import os, struct, subprocess, sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from btape_frame import header, frame as envelope

def zstd(raw):
    # --stream-size: the frame declares its content size, as the writer's do
    return subprocess.run(['zstd', '-19', '-cq', '--stream-size=%d' % len(raw)], input=raw,
                          capture_output=True, check=True).stdout

def s(x):
    return bytes([0xa0 | len(x)]) + x.encode()

def frame(kind, raw):
    return envelope(kind, zstd(raw), len(raw))

devices = b'\x82' + s('tool') + s('hostile') + s('devices') + b'\xdd' + struct.pack('>I', 2 << 20) \
    + b'\x80' * (2 << 20)
n = 24 << 20
items = b'\x81' + s('pad') + b'\xdd' + struct.pack('>I', n) + b'\x00' * n
meta = b'\x81' + s('tool') + s('hostile')

out = sys.argv[1]
open(os.path.join(out, 'reader', 'issue15-devices-2m.btape'), 'wb').write(
    header() + frame(1, devices))
open(os.path.join(out, 'reader', 'issue15-items-24m.btape'), 'wb').write(
    header() + frame(1, meta) + frame(2, items))
# fuzz_chunk: selector byte (0 chunk, 1 metadata), then the payload; a payload that is a zstd
# frame is decompressed first
open(os.path.join(out, 'chunk', 'issue15-devices-2m'), 'wb').write(b'\x01' + zstd(devices))
open(os.path.join(out, 'chunk', 'issue15-items-24m'), 'wb').write(b'\x00' + zstd(items))
