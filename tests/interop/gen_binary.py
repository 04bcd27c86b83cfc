#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes small binary fixtures from the documented layouts (not from biotape's code).

  gen_binary.py blktrace DIR   -> DIR/sda.blktrace.0 (little-endian), DIR/sda.blktrace.1
                                  (big-endian): struct blk_io_trace (48 B) + pdu, per-CPU
  gen_binary.py vscsi1 FILE    -> vscsiStats v1 records (32 B)
  gen_binary.py vscsi2 FILE    -> vscsiStats v2 records (40 B, with response time)
  gen_binary.py blktrace-big FILE N -> N requests (Q, D, C) on one CPU file, for benchmarks
"""
import struct
import sys

MAGIC = 0x65617407  # BLK_IO_TRACE_MAGIC | version 7
TC_READ, TC_WRITE, TC_FLUSH, TC_SYNC, TC_QUEUE = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4
TC_ISSUE, TC_COMPLETE, TC_NOTIFY = 1 << 6, 1 << 7, 1 << 10
TA_QUEUE, TA_BACKMERGE, TA_ISSUE, TA_COMPLETE, TA_REMAP = 1, 2, 7, 8, 15
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
    elif what == "blktrace-big":
        blktrace_big(sys.argv[2], int(sys.argv[3]))
    elif what == "vscsi1":
        vscsi(sys.argv[2], 1)
    elif what == "vscsi2":
        vscsi(sys.argv[2], 2)
    else:
        sys.exit("unknown fixture " + what)
