# The .btape file's fixed structures (docs/BTAPE-FORMAT.md 1.1-1.2), for the test and fuzz
# scripts that build or rewrite frames by hand: CRC32C, the file header, a frame's envelope.
#   import sys; sys.path.insert(0, BIOTAPE_SRC + '/tests'); import btape_frame
import struct


def crc32c(b):
    """CRC32C (Castagnoli), as the format's checksums use it."""
    c = 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82f63b78 & -(c & 1))
    return c ^ 0xffffffff


def header(major=1, minor=0):
    """The 24-byte file header."""
    h = struct.pack('<II', 0x184D2A5A, 16) + b'\x89BTAPE\r\n' + struct.pack('<HH', major, minor)
    return h + struct.pack('<I', crc32c(h))


def frame(kind, comp, raw_len):
    """A frame: the 28-byte envelope (checksums filled in), then COMP, the zstd payload of
    RAW_LEN bytes. KIND: 1 metadata, 2 chunk, 3 footer."""
    env = struct.pack('<IIBBHIII', 0x184D2A5B, 20, kind, 0, 0, len(comp), raw_len, crc32c(comp))
    return env + struct.pack('<I', crc32c(env)) + comp
