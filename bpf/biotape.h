/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel<->user transport of the recorder: one record per completed block request (or bio
 * with --layer bio), sent through BPF ring buffers. Fixed-width types only. This is transport,
 * not the file format: recorder/rec_core.c converts it into struct btape_event.
 */
#ifndef BIOTAPE_BPF_EVENT_H
#define BIOTAPE_BPF_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define BIOTAPE_COMM_LEN 16

/* Operation, decoded in BPF from cmd_flags / bi_opf with CO-RE enum values. */
enum biotape_rq_op {
	BIOTAPE_RQ_OP_READ = 0,
	BIOTAPE_RQ_OP_WRITE = 1,
	BIOTAPE_RQ_OP_FLUSH = 2,
	BIOTAPE_RQ_OP_DISCARD = 3,
	BIOTAPE_RQ_OP_SECURE_ERASE = 4,
	BIOTAPE_RQ_OP_WRITE_ZEROES = 5,
	BIOTAPE_RQ_OP_ZONE_OPEN = 6,
	BIOTAPE_RQ_OP_ZONE_CLOSE = 7,
	BIOTAPE_RQ_OP_ZONE_FINISH = 8,
	BIOTAPE_RQ_OP_ZONE_APPEND = 9,
	BIOTAPE_RQ_OP_ZONE_RESET = 10,
	BIOTAPE_RQ_OP_ZONE_RESET_ALL = 11,
	BIOTAPE_RQ_OP_OTHER = 12, /* driver-private (REQ_OP_DRV_*) or unknown */
};

/* Request flags (bits of biotape_rq_event.flags). */
enum biotape_rq_flag {
	BIOTAPE_RQF_SYNC = 1u << 0,
	BIOTAPE_RQF_FUA = 1u << 1,
	BIOTAPE_RQF_PREFLUSH = 1u << 2,
	BIOTAPE_RQF_META = 1u << 3,
	BIOTAPE_RQF_READAHEAD = 1u << 4,
	BIOTAPE_RQF_ATOMIC = 1u << 5,
	BIOTAPE_RQF_PRIO = 1u << 6,
	BIOTAPE_RQF_NOMERGE = 1u << 7,
	BIOTAPE_RQF_IDLE = 1u << 8,
	BIOTAPE_RQF_REQUEUED = 1u << 9,
};

/* biotape_rq_event.attr bits. */
enum biotape_rq_attr {
	BIOTAPE_ATTR_TASK = 1u << 0,   /* pid, tid, comm, cgroup were taken at submission */
	BIOTAPE_ATTR_INSERT = 1u << 1, /* insert_ns is valid */
	BIOTAPE_ATTR_ISSUED = 1u << 2, /* (in-flight map only) issued, counted in the queue depth */
	BIOTAPE_ATTR_MATCH = 1u << 3,  /* (in-flight map only) passes the pid/comm/cgroup filters */
	BIOTAPE_ATTR_LIVE = 1u << 4,   /* (in-flight map only) entry in use; else a retired slot */
	BIOTAPE_ATTR_WAKE = 1u << 5,   /* wake_ns, slept_ns are valid (record --waits) */
};

struct biotape_rq_event {
	__u64 insert_ns;   /* entered the block layer (block_io_start / block_rq_insert) */
	__u64 issue_ns;    /* block_rq_issue (requests) or block_bio_queue (bios) */
	__u64 complete_ns; /* final block_rq_complete / block_bio_complete */
	__u64 sector;      /* first 512-byte sector of the whole disk */
	__u64 cgroup;      /* cgroup v2 id of the submitter */
	__u32 bytes;       /* size at issue (0 for a flush) */
	__u32 dev;         /* kernel dev_t of the whole disk: major << 20 | minor */
	__u32 dev_idx;     /* index into the recorder's device table (the BPF device filter) */
	__u32 pid;         /* tgid of the submitter */
	__u32 tid;
	__u32 cpu;         /* CPU the request was issued on */
	__u32 qd;          /* in flight on this device at issue, this one included */
	__u16 flags;       /* BIOTAPE_RQF_* */
	__u8 op;           /* BIOTAPE_RQ_OP_* */
	__u8 status;       /* blk_status_t of the completion (0 ok) */
	__u8 attr;         /* BIOTAPE_ATTR_* */
	__u8 pad[7];
	char comm[BIOTAPE_COMM_LEN];
	__u64 wake_ns;     /* the submitter last woke from a sleep (BIOTAPE_ATTR_WAKE) */
	__u64 slept_ns;    /* ... after sleeping this long */
};

/*
 * One value of the in-flight "slots" map (biotape.bpf.c): a request's entry in the slot of its
 * (device, hardware queue, tag); user space reads the map mapped. 128 bytes: two cache lines.
 */
struct biotape_rq_slot {
	__u64 key; /* struct request * last kept here (0: never used) */
	struct biotape_rq_event e;
	__u8 pad[8];
};

/* Per-CPU loss counters (BPF map "counters", one entry). */
struct biotape_counters {
	__u64 emitted;       /* records submitted to a ring */
	__u64 lost_ringbuf;  /* failed ring reservations (ring full) */
	__u64 lost_inflight; /* in-flight map full: request not tracked */
	__u64 unissued;      /* data requests completed without a seen issue (missed event) */
	__u64 pending;       /* records sent since the last consumer wakeup */
	/* Diagnostics (not losses by themselves; printed with -v): */
	__u64 retired_complete; /* a completion found its request's slot already retired */
	__u64 partial;          /* partial completions (the request stayed in flight) */
	__u64 unmatched;        /* completed requests not recorded: filtered out */
	__u64 issued;           /* requests (or bios) marked issued */
	__u64 noentry;          /* completions of a recorded device's request never seen before */
	__u64 orphaned; /* issued requests sent without a completion: the kernel ran no program for it */
	__u64 hashed;   /* requests given an entry in the hash map (no slot of their own) */
};

/*
 * Per-thread sleep state (BPF map "waits", an LRU hash by tid, with --waits): a thread enters
 * it at its first recorded I/O, and only its context switches and wakeups are noted.
 */
struct biotape_wait {
	__u64 sleep_ns;   /* went to sleep (sched_switch, not runnable); 0: not asleep */
	__u64 wake_ns;    /* last woken (sched_waking) */
	__u64 slept_ns;   /* ... after sleeping this long */
	__u64 last_io_ns; /* its last I/O submission */
	__u32 timer;      /* the last wake came from a timer's expiry (a sleep with a timeout
			   * that ran out), not from another task or a completion */
	__u32 pad;
};

/* Per-device state (BPF map "devstate", indexed by dev_idx). */
struct biotape_devstate {
	__u32 inflight; /* issued and not completed */
	__u32 flush_pid, flush_tid;
	__u32 flush_attr; /* BIOTAPE_ATTR_TASK / _MATCH / _WAKE of the last preflush submitter */
	__u64 flush_cgroup;
	char flush_comm[BIOTAPE_COMM_LEN];
	__u64 flush_wake_ns, flush_slept_ns; /* ... and its wake (BIOTAPE_ATTR_WAKE) */
	__u64 flush_insert_ns; /* ... and when it submitted the preflush (--waits) */
};

#endif
