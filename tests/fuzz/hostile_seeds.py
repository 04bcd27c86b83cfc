#!/usr/bin/env python3
# Writes the fuzz seeds of issue #15 (items 6 and 7): tiny inputs whose zstd payloads expand
# into huge msgpack structures. A reader that allocates for what they declare exceeds the
# fuzzers' memory limits (.ci/run): 2 M devices of 544 bytes (1.1 GB), 24 M array elements of
# 24 bytes (msgpack-c objects, 576 MB).
#   python3 tests/fuzz/hostile_seeds.py tests/fuzz/corpus      (needs the zstd program)
import os, struct, subprocess, sys

def crc32c(b):
    c = 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82f63b78 & -(c & 1))
    return c ^ 0xffffffff

def zstd(raw):
    # --stream-size: the frame declares its content size, as the writer's do
    return subprocess.run(['zstd', '-19', '-cq', '--stream-size=%d' % len(raw)], input=raw,
                          capture_output=True, check=True).stdout

def s(x):
    return bytes([0xa0 | len(x)]) + x.encode()

def frame(kind, raw):
    comp = zstd(raw)
    env = struct.pack('<IIBBHIII', 0x184D2A5B, 20, kind, 0, 0, len(comp), len(raw), crc32c(comp))
    return env + struct.pack('<I', crc32c(env)) + comp

def header():
    h = struct.pack('<II', 0x184D2A5A, 16) + b'\x89BTAPE\r\n' + struct.pack('<HH', 1, 0)
    return h + struct.pack('<I', crc32c(h))

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
