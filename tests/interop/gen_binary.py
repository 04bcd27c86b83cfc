#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes small binary fixtures from the documented layouts (not from biotape's code).

  gen_binary.py blktrace DIR   -> DIR/sda.blktrace.0 (little-endian), DIR/sda.blktrace.1
                                  (big-endian): struct blk_io_trace (48 B) + pdu, per-CPU
  gen_binary.py vscsi1 FILE    -> vscsiStats v1 records (32 B)
  gen_binary.py vscsi2 FILE    -> vscsiStats v2 records (40 B, with response time)
  gen_binary.py blktrace-big FILE N -> N requests (Q, D, C) on one CPU file, for benchmarks
  gen_binary.py blktrace-ext4 DIR -> DIR/sdb.blktrace.0, .1 (both little-endian, as blktrace
                                  writes them and as blkparse needs them): ext4 on sdb1 as a
                                  6.x kernel records it on sdb (see blktrace_ext4)
"""
import struct
import sys

MAGIC = 0x65617407  # BLK_IO_TRACE_MAGIC | version 7
TC_READ, TC_WRITE, TC_FLUSH, TC_SYNC, TC_QUEUE = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4
TC_ISSUE, TC_COMPLETE, TC_NOTIFY = 1 << 6, 1 << 7, 1 << 10
TC_AHEAD, TC_META, TC_DISCARD, TC_FUA = 1 << 11, 1 << 12, 1 << 13, 1 << 15
TA_QUEUE, TA_BACKMERGE, TA_ISSUE, TA_COMPLETE, TA_REMAP = 1, 2, 7, 8, 15
TA_GETRQ, TA_PLUG, TA_UNPLUG_IO, TA_INSERT = 4, 9, 10, 12
TN_PROCESS = 0


def dev(major, minor):
    return major << 20 | minor  # kernel-internal dev_t (MINORBITS 20)


def rec(end, seq, time, sector, nbytes, what, tc, pid, device, cpu, error=0, pdu=b""):
    hdr = struct.pack(end + "IIQQIIIIIHH", MAGIC, seq, time, sector, nbytes,
                      what | tc << 16, pid, device, cpu, error & 0xFFFF, len(pdu))
    assert len(hdr) == 48
    return hdr + pdu


def blktrace(d):
    sda, sda1 = dev(8, 0), dev(8, 1)
    W, R = TC_WRITE, TC_READ
    le, be = "<", ">"
    cpu0 = [  # (time, sector, bytes, what, tc, pid, device, error, pdu)
        (0, 0, 0, TN_PROCESS, TC_NOTIFY, 100, sda, 0, b"dd\0"),
        (1000, 1000, 4096, TA_QUEUE, W | TC_QUEUE, 100, sda, 0, b""),
        (1100, 1008, 4096, TA_QUEUE, W | TC_QUEUE, 100, sda, 0, b""),
        (1150, 1008, 4096, TA_BACKMERGE, W | TC_QUEUE, 100, sda, 0, b""),
        (2000, 1000, 8192, TA_ISSUE, W | TC_ISSUE, 100, sda, 0, b""),
        (2500, 5000, 4096, TA_QUEUE, R | TC_QUEUE, 100, sda, 0, b""),
        (6000, 9000, 4096, TA_REMAP, W | TC_QUEUE, 100, sda, 0,
         struct.pack(">IIQ", sda1, sda, 7000)),
        (6001, 9000, 4096, TA_QUEUE, W | TC_QUEUE, 100, sda, 0, b""),
        (10000, 0, 0, TA_QUEUE, W | TC_FLUSH | TC_SYNC | TC_QUEUE, 100, sda, 0, b""),
    ]
    cpu1 = [
        (3000, 5000, 4096, TA_ISSUE, R | TC_ISSUE, 0, sda, 0, b""),
        (4000, 1000, 8192, TA_COMPLETE, W | TC_COMPLETE, 0, sda, 0, b""),
        (5000, 5000, 4096, TA_COMPLETE, R | TC_COMPLETE, 0, sda, -5, b""),
        (7000, 9000, 4096, TA_ISSUE, W | TC_ISSUE, 0, sda, 0, b""),
        (8000, 9000, 2048, TA_COMPLETE, W | TC_COMPLETE, 0, sda, 0, b""),  # partial
        (9000, 9004, 2048, TA_COMPLETE, W | TC_COMPLETE, 0, sda, 0, b""),
        (10100, 0, 0, TA_ISSUE, W | TC_FLUSH | TC_SYNC | TC_ISSUE, 0, sda, 0, b""),
        (10200, 0, 0, TA_COMPLETE, W | TC_FLUSH | TC_SYNC | TC_COMPLETE, 0, sda, 0, b""),
    ]
    for cpu, (end, evs) in enumerate([(le, cpu0), (be, cpu1)]):
        with open(f"{d}/sda.blktrace.{cpu}", "wb") as f:
            for seq, (t, s, n, what, tc, pid, dv, err, pdu) in enumerate(evs):
                f.write(rec(end, seq, t, s, n, what, tc, pid, dv, cpu, err, pdu))


def blktrace_ext4(d):
    """ext4 on the partition sdb1 (8,17, starting at sector 2048), traced on the disk sdb (8,16),
    as kernel 6.x writes it: the records carry the traced disk's dev_t, and a partition remap's
    pdu names the partition as both device_from and device_to (the bio keeps its partition
    bdev), so blkparse prints the A line as device 8,17, which no other line has.
      - cat reads 4 KiB (remapped, readahead) and 8 KiB of metadata
      - writeback writes 8 KiB in two bios, back merged
      - jbd2 writes its commit block with preflush + FUA: the block layer issues a flush
        request first (FN, no data), then the write without the preflush bit
      - fsync on a clean file: an empty preflush write (FW, 0 bytes), answered by one flush
        request; the emptied original completes without data
      - fstrim discards 1 MiB
    """
    sdb, sdb1, start = dev(8, 16), dev(8, 17), 2048
    W, R, Q, D, C = TC_WRITE, TC_READ, TC_QUEUE, TC_ISSUE, TC_COMPLETE
    procs = {1234: b"cat", 697: b"kworker/u8:2", 420: b"jbd2/sdb1-8", 55: b"kworker/0:1H",
             900: b"fstrim", 1300: b"fsync-test"}

    def remap(s):
        return struct.pack(">IIQ", sdb1, sdb1, s - start)
    cpu0 = [  # (time, sector, bytes, what, tc, pid, pdu)
        (0, 3048, 4096, TA_REMAP, R | TC_AHEAD | Q, 1234, remap(3048)),
        (1, 3048, 4096, TA_QUEUE, R | TC_AHEAD | Q, 1234, b""),
        (50, 3048, 4096, TA_GETRQ, R | TC_AHEAD | Q, 1234, b""),
        (60, 0, 0, TA_PLUG, Q, 1234, b""),
        (70, 3048, 4096, TA_INSERT, R | TC_AHEAD | Q, 1234, b""),
        (100, 3048, 4096, TA_ISSUE, R | TC_AHEAD | D, 1234, b""),
        (900, 2056, 8192, TA_REMAP, R | TC_META | TC_SYNC | Q, 1234, remap(2056)),
        (901, 2056, 8192, TA_QUEUE, R | TC_META | TC_SYNC | Q, 1234, b""),
        (1000, 2056, 8192, TA_ISSUE, R | TC_META | TC_SYNC | D, 1234, b""),
        (2900, 500000, 4096, TA_REMAP, W | Q, 697, remap(500000)),
        (2901, 500000, 4096, TA_QUEUE, W | Q, 697, b""),
        (3000, 500008, 4096, TA_REMAP, W | Q, 697, remap(500008)),
        (3001, 500008, 4096, TA_QUEUE, W | Q, 697, b""),
        (3002, 500008, 4096, TA_BACKMERGE, W | Q, 697, b""),
        (3100, 500000, 8192, TA_ISSUE, W | D, 697, b""),
        # jbd2 commit block: WRITE | SYNC | PREFLUSH | FUA, 4 KiB
        (4900, 90000, 4096, TA_REMAP, W | TC_SYNC | TC_FLUSH | TC_FUA | Q, 420, remap(90000)),
        (4901, 90000, 4096, TA_QUEUE, W | TC_SYNC | TC_FLUSH | TC_FUA | Q, 420, b""),
        (5000, 0, 0, TA_ISSUE, R | TC_FLUSH | D, 55, b""),  # the flush request: FN
        (5200, 90000, 4096, TA_ISSUE, W | TC_SYNC | TC_FUA | D, 55, b""),
        # fsync with nothing to write: an empty preflush bio (no remap: it has no sectors)
        (7900, 0, 0, TA_QUEUE, W | TC_FLUSH | Q, 1300, b""),
        (8000, 0, 0, TA_ISSUE, R | TC_FLUSH | D, 55, b""),
        # fstrim: 1 MiB discard
        (11900, 700000, 1 << 20, TA_REMAP, W | TC_DISCARD | Q, 900, remap(700000)),
        (11901, 700000, 1 << 20, TA_QUEUE, W | TC_DISCARD | Q, 900, b""),
        (12000, 700000, 1 << 20, TA_ISSUE, W | TC_DISCARD | D, 900, b""),
    ]
    cpu1 = [
        (500, 3048, 4096, TA_COMPLETE, R | TC_AHEAD | C, 0, b""),
        (1800, 2056, 8192, TA_COMPLETE, R | TC_META | TC_SYNC | C, 0, b""),
        (3900, 500000, 8192, TA_COMPLETE, W | C, 0, b""),
        (5100, 0, 0, TA_COMPLETE, R | TC_FLUSH | C, 0, b""),
        (5700, 90000, 4096, TA_COMPLETE, W | TC_SYNC | TC_FUA | C, 0, b""),
        (8800, 0, 0, TA_COMPLETE, R | TC_FLUSH | C, 0, b""),
        (8801, 0, 0, TA_COMPLETE, W | C, 0, b""),  # the emptied original: no request left
        (12900, 700000, 1 << 20, TA_COMPLETE, W | TC_DISCARD | C, 0, b""),
    ]
    notes = [(0, 0, 0, TN_PROCESS, TC_NOTIFY, pid, comm + b"\0") for pid, comm in procs.items()]
    for cpu, evs in enumerate([notes + cpu0, cpu1]):
        with open(f"{d}/sdb.blktrace.{cpu}", "wb") as f:
            for seq, (t, s, n, what, tc, pid, pdu) in enumerate(evs):
                f.write(rec("<", seq, t, s, n, what, tc, pid, sdb, cpu, 0, pdu))


def blktrace_big(path, n):
    sda = dev(8, 0)
    with open(path, "wb") as f:
        buf = []
        seq = 0
        for i in range(n):
            t = i * 10000
            s = (i * 7919 * 8) % (1 << 30)
            tc = TC_WRITE if i % 3 == 0 else TC_READ
            for dt, what, tcx in ((0, TA_QUEUE, TC_QUEUE), (2000, TA_ISSUE, TC_ISSUE),
                                  (9000, TA_COMPLETE, TC_COMPLETE)):
                buf.append(rec("<", seq, t + dt if what != TA_COMPLETE else t + dt, s, 4096,
                               what, tc | tcx, 100, sda, 0))
                seq += 1
            if len(buf) > 30000:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))


SCSI = {"read": 0x28, "write": 0x2A, "sync": 0x35}
VSCSI = [  # (cmd, len, lbn, ts_us, rt_us)
    ("read", 4096, 100, 1000, 150),
    ("write", 8192, 200, 2000, 300),
    ("sync", 0, 0, 3000, 50),
]


def vscsi(path, ver):
    with open(path, "wb") as f:
        for sn, (cmd, ln, lbn, ts, rt) in enumerate(VSCSI):
            if ver == 1:  # u32 sn, len, nSG; u16 cmd, ver; u64 lbn, ts
                f.write(struct.pack("<IIIHHQQ", sn, ln, 1, SCSI[cmd], 1 << 8, lbn, ts))
            else:  # u16 cmd, ver; u32 sn, len, nSG; u64 lbn, ts, rt
                f.write(struct.pack("<HHIIIQQQ", SCSI[cmd], 2 << 8, sn, ln, 1, lbn, ts, rt))


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "blktrace":
        blktrace(sys.argv[2])
    elif what == "blktrace-ext4":
        blktrace_ext4(sys.argv[2])
    elif what == "blktrace-big":
        blktrace_big(sys.argv[2], int(sys.argv[3]))
    elif what == "vscsi1":
        vscsi(sys.argv[2], 1)
    elif what == "vscsi2":
        vscsi(sys.argv[2], 2)
    else:
        sys.exit("unknown fixture " + what)
