// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * biotape recorder: one ring-buffer record per completed block request (or bio).
 *
 * Requests are keyed by struct request * (flushes and passthrough requests all report sector 0).
 * The submitter (pid, tid, comm, cgroup) is taken at block_io_start, which runs in the
 * submitting task; issue and completion often run in kworker or interrupt context. Every program
 * exists as tp_btf and raw_tp; user space enables one set (whatever the kernel accepts).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "biotape.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define REQ_OP_BITS 8
#define REQ_OP_MASK ((1u << REQ_OP_BITS) - 1)

/* Options, set by user space before load. */
const volatile __u32 nr_rings = 1;       /* shards in "rings"; record goes to rings[cpu % n] */
const volatile __u64 wakeup_records = 1; /* wake the consumer every this many records a CPU */
const volatile __u32 filter_pid = 0;     /* 0: any */
const volatile __u32 self_pid = 0;       /* the recorder: never recorded */
const volatile bool filter_comm_on = false;
const volatile char filter_comm[BIOTAPE_COMM_LEN] = {};
const volatile bool filter_cgroup_on = false;
const volatile bool have_io_start = true; /* attribute at block_io_start, else at insert */
const volatile bool have_bpf_loop = false; /* the kernel has bpf_loop (5.17+) */
const volatile bool have_task_btf = false; /* the kernel has bpf_get_current_task_btf (5.11+) */
const volatile bool record_waits = false; /* --waits: note each submitter's last wake */
/*
 * Count the queue depth here (a per-device atomic counter, written at issue and completion:
 * its cache line moves between the issuing and the completing CPU on every I/O). Without a
 * task filter user space derives the same count from the recorded times instead
 * (recorder/rec_qd.c), and this is off.
 */
const volatile bool kernel_qd = true;
/* Up to MAX_DEV_LIST recorded devices are matched by a scan of this list (no map lookup). */
#define MAX_DEV_LIST 16
/*
 * Fault injection for the tests (environment BIOTAPE_TEST_SKIP_COMPLETE=N): every Nth request
 * completion is ignored, as the kernel does when it skips a program. 0 in production, where
 * the verifier removes the branch.
 */
const volatile __u32 test_skip_complete = 0;
__u64 test_complete_seq = 0;

/* True for every Nth completion under fault injection; constant false in production. */
static __always_inline bool test_skip(void)
{
	return test_skip_complete &&
	       __sync_fetch_and_add(&test_complete_seq, 1) % test_skip_complete == 0;
}
const volatile __u32 ndev_list = 0;       /* 0: use the "devices" hash map */
const volatile __u32 dev_list[MAX_DEV_LIST] = {};
/*
 * Request slots of a listed device (see slot_of()): hardware queues, slots per queue (the
 * deepest tag space: driver tags or scheduler tags) and the first slot in "slots". 0 queues:
 * the device's requests are kept in the "inflight" hash map only.
 */
const volatile __u32 slot_nq[MAX_DEV_LIST] = {};
const volatile __u32 slot_depth[MAX_DEV_LIST] = {};
const volatile __u32 slot_base[MAX_DEV_LIST] = {};
const volatile bool have_slots = false; /* some listed device has slots */

struct ringbuf_inner {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by user space */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* resized to nr_rings; filled by user space */
	__type(key, __u32);
	__array(values, struct ringbuf_inner);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized by user space */
	__type(key, __u64);         /* struct request * or struct bio * */
	__type(value, struct biotape_rq_event);
} inflight SEC(".maps");

/*
 * The request's own slot, indexed by (device, hardware queue, tag): an array lookup instead of
 * a hash lookup on every event of the common case. A request holds its tag (the scheduler tag
 * with an I/O scheduler, else the driver tag) from block_io_start until it completes, and each
 * tag of a queue belongs to one preallocated struct request, so the slot of a live request is
 * never wanted by another one; the key is checked anyway. Requests without a slot of their own
 * (the flush machinery's flush request borrows the tag of the request it serves; tags beyond
 * the sizes read from sysfs; unlisted devices) live in the "inflight" hash map as before.
 */
_Static_assert(sizeof(struct biotape_rq_slot) == 128, "a slot is two cache lines");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* page-aligned values; user space scans it mapped */
	__uint(max_entries, 1); /* resized by user space */
	__type(key, __u32);
	__type(value, struct biotape_rq_slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized to the number of devices */
	__type(key, __u32);     /* kernel dev_t of a whole disk */
	__type(value, __u32);   /* dev_idx */
} devices SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized to the number of devices */
	__type(key, __u32);
	__type(value, struct biotape_devstate);
} devstate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct biotape_counters);
} counters SEC(".maps");

/* Threads that submitted recorded I/O, and their sleeps (--waits; struct biotape_wait). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tid */
	__type(value, struct biotape_wait);
} waits SEC(".maps");

/* --waits: this CPU runs an hrtimer's callback (hrtimer_expire_entry to _exit): 1, else 0 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} in_timer SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* Kernels before 5.16 kept the disk in the request, before 5.12 the bio pointed at the disk. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

struct bio___old {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/*
 * Per-CPU counters, but not per program: a completion in interrupt context can preempt a
 * program in task context on the same CPU (bio_queue, issue) and both may count a loss, so
 * the loss counters are incremented atomically (a rare path). "emitted" is plain in the
 * completion programs (one per event; they do not nest in themselves) and atomic where task
 * context emits (orphans, see emit()).
 */
static __always_inline struct biotape_counters *cnt(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counters, &zero);
}

/*
 * Field access: tp_btf programs read kernel memory directly (typed BTF pointers); raw_tp
 * programs go through bpf_probe_read_kernel (BPF_CORE_READ). BTF is a compile-time constant
 * at every call site, so each program contains only its own kind of access.
 */
#define RD(btf, p, f) ((btf) ? (p)->f : BPF_CORE_READ(p, f))

static __always_inline __u32 disk_dev(struct gendisk *disk, const bool btf)
{
	if (!disk)
		return 0;
	return ((__u32)RD(btf, disk, major) << 20) | (__u32)RD(btf, disk, first_minor);
}

static __always_inline __u32 rq_dev(struct request *rq, const bool btf)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(rq->q->disk)) {
		struct request_queue *q = RD(btf, rq, q);

		disk = q ? RD(btf, q, disk) : NULL;
	} else {
		struct request___old *o = (void *)rq;

		disk = BPF_CORE_READ(o, rq_disk);
	}
	return disk_dev(disk, btf);
}

static __always_inline __u32 bio_dev(struct bio *bio, const bool btf)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(bio->bi_bdev)) {
		struct block_device *bdev = RD(btf, bio, bi_bdev);

		disk = bdev ? RD(btf, bdev, bd_disk) : NULL;
	} else {
		struct bio___old *o = (void *)bio;

		disk = BPF_CORE_READ(o, bi_disk);
	}
	return disk_dev(disk, btf);
}

/* Index of DEV in the device table, or -1 when DEV is not recorded. */
static __always_inline int dev_index(__u32 dev)
{
	__u32 *idx;

	if (ndev_list) {
		for (int i = 0; i < MAX_DEV_LIST; i++) {
			if (i >= ndev_list)
				break;
			if (dev_list[i] == dev)
				return i;
		}
		return -1;
	}
	idx = bpf_map_lookup_elem(&devices, &dev);
	return idx ? (int)*idx : -1;
}

/* The slot of RQ on listed device IDX, or NULL when it has none (see "slots"). */
static __always_inline struct biotape_rq_slot *slot_of(struct request *rq, int idx,
							  const bool btf)
{
	struct blk_mq_hw_ctx *h;
	__u32 q, tag, i;

	if (!bpf_core_field_exists(rq->mq_hctx) || idx < 0 || idx >= MAX_DEV_LIST ||
	    !slot_nq[idx])
		return NULL;
	h = RD(btf, rq, mq_hctx);
	if (!h)
		return NULL;
	q = RD(btf, h, queue_num);
	tag = (__u32)RD(btf, rq, internal_tag);
	if (tag == (__u32)-1)
		tag = (__u32)RD(btf, rq, tag);
	if (q >= slot_nq[idx] || tag >= slot_depth[idx])
		return NULL;
	i = slot_base[idx] + q * slot_depth[idx] + tag;
	return bpf_map_lookup_elem(&slots, &i);
}

/*
 * The in-flight entry of RQ (live or retired) in its slot or the hash map, or NULL. Sets *DEV
 * and *IDX (-1: not a recorded device, and so never in the maps: I/O of other devices costs
 * no map lookup).
 */
static __always_inline struct biotape_rq_event *lookup_rq(struct request *rq, const bool btf,
							 __u32 *dev, int *idx)
{
	__u64 key = (__u64)rq;

	*dev = rq_dev(rq, btf);
	*idx = dev_index(*dev);
	if (*idx < 0)
		return NULL;
	if (have_slots) {
		struct biotape_rq_slot *s = slot_of(rq, *idx, btf);

		if (s && s->key == key)
			return &s->e;
	}
	return bpf_map_lookup_elem(&inflight, &key);
}

#define ENUMV(type, name, dflt) \
	(bpf_core_enum_value_exists(enum type, name) ? bpf_core_enum_value(enum type, name) : (dflt))
#define FLAGBIT(name, dflt) ENUMV(req_flag_bits, name, dflt)

static __always_inline void decode_opf(__u32 opf, struct biotape_rq_event *e)
{
	__u32 kop = opf & REQ_OP_MASK;
	__u8 op = BIOTAPE_RQ_OP_OTHER;
	__u16 f = 0;
	int b;

	if (kop == ENUMV(req_op, REQ_OP_READ, 0))
		op = BIOTAPE_RQ_OP_READ;
	else if (kop == ENUMV(req_op, REQ_OP_WRITE, 1))
		op = BIOTAPE_RQ_OP_WRITE;
	else if (kop == ENUMV(req_op, REQ_OP_FLUSH, 2))
		op = BIOTAPE_RQ_OP_FLUSH;
	else if (kop == ENUMV(req_op, REQ_OP_DISCARD, 3))
		op = BIOTAPE_RQ_OP_DISCARD;
	else if (kop == ENUMV(req_op, REQ_OP_SECURE_ERASE, 5))
		op = BIOTAPE_RQ_OP_SECURE_ERASE;
	else if (kop == ENUMV(req_op, REQ_OP_WRITE_ZEROES, 9))
		op = BIOTAPE_RQ_OP_WRITE_ZEROES;
	else if (kop == ENUMV(req_op, REQ_OP_ZONE_OPEN, 10000))
		op = BIOTAPE_RQ_OP_ZONE_OPEN;
	else if (kop == ENUMV(req_op, REQ_OP_ZONE_CLOSE, 10000))
		op = BIOTAPE_RQ_OP_ZONE_CLOSE;
	else if (kop == ENUMV(req_op, REQ_OP_ZONE_FINISH, 10000))
		op = BIOTAPE_RQ_OP_ZONE_FINISH;
	else if (kop == ENUMV(req_op, REQ_OP_ZONE_APPEND, 10000))
		op = BIOTAPE_RQ_OP_ZONE_APPEND;
	else if (kop == ENUMV(req_op, REQ_OP_ZONE_RESET, 10000))
		op = BIOTAPE_RQ_OP_ZONE_RESET;
	else if (kop == ENUMV(req_op, REQ_OP_ZONE_RESET_ALL, 10000))
		op = BIOTAPE_RQ_OP_ZONE_RESET_ALL;

	b = FLAGBIT(__REQ_SYNC, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_SYNC;
	b = FLAGBIT(__REQ_FUA, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_FUA;
	b = FLAGBIT(__REQ_PREFLUSH, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_PREFLUSH;
	b = FLAGBIT(__REQ_META, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_META;
	b = FLAGBIT(__REQ_RAHEAD, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_READAHEAD;
	b = FLAGBIT(__REQ_ATOMIC, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_ATOMIC;
	b = FLAGBIT(__REQ_PRIO, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_PRIO;
	b = FLAGBIT(__REQ_NOMERGE, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_NOMERGE;
	b = FLAGBIT(__REQ_IDLE, -1);
	if (b >= 0 && b < 32 && (opf & (1u << b)))
		f |= BIOTAPE_RQF_IDLE;
	e->op = op;
	e->flags = (e->flags & BIOTAPE_RQF_REQUEUED) | f;
}

/*
 * --waits: E's submitter TID woke from a sleep after its previous I/O submission, and not
 * from a timer (a paced sleep, a timeout that ran out: no I/O woke it): E carries that wake. A thread seen for the first time enters "waits", so that its sleeps are noted
 * from now on.
 */
static __always_inline void note_wake(struct biotape_rq_event *e, __u32 tid)
{
	struct biotape_wait *w = bpf_map_lookup_elem(&waits, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (!w) {
		struct biotape_wait fresh = { .last_io_ns = now };

		bpf_map_update_elem(&waits, &tid, &fresh, BPF_ANY);
		return;
	}
	if (w->wake_ns > w->last_io_ns && !w->timer) {
		e->wake_ns = w->wake_ns;
		e->slept_ns = w->slept_ns;
		e->attr |= BIOTAPE_ATTR_WAKE;
	}
	w->last_io_ns = now;
}

static __always_inline bool comm_eq(const char *c)
{
	for (int i = 0; i < BIOTAPE_COMM_LEN; i++) {
		if (c[i] != filter_comm[i])
			return false;
		if (!c[i])
			break;
	}
	return true;
}

/*
 * Submitter attribution of the current task and whether it passes the filters. BTF: the name
 * is read straight from the task (two loads; the kernel keeps comm NUL-terminated) instead of
 * bpf_get_current_comm's padded string copy, which showed as ~7% of the programs' time.
 */
static __always_inline void attribute(struct biotape_rq_event *e, const bool btf)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 pid = pt >> 32;
	bool match = true;

	e->pid = pid;
	e->tid = (__u32)pt;
	e->cgroup = bpf_get_current_cgroup_id();
	if (btf && have_task_btf) {
		struct task_struct *t = bpf_get_current_task_btf();
		const __u64 *c = (const __u64 *)t->comm;

		((__u64 *)e->comm)[0] = c[0];
		((__u64 *)e->comm)[1] = c[1];
	} else {
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	}
	e->attr |= BIOTAPE_ATTR_TASK;
	if (pid == self_pid)
		match = false;
	if (filter_pid && pid != filter_pid)
		match = false;
	/* --comm matches the thread or its process (io_uring workers are "iou-wrk-<pid>"). */
	if (match && filter_comm_on && !comm_eq(e->comm)) {
		struct task_struct *t = (void *)bpf_get_current_task();
		char lc[BIOTAPE_COMM_LEN] = {};

		BPF_CORE_READ_STR_INTO(&lc, t, group_leader, comm);
		if (!comm_eq(lc))
			match = false;
	}
	if (match && filter_cgroup_on && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		match = false;
	if (match)
		e->attr |= BIOTAPE_ATTR_MATCH;
	else
		e->attr &= ~BIOTAPE_ATTR_MATCH;
	e->attr &= ~BIOTAPE_ATTR_WAKE;
	if (record_waits && match)
		note_wake(e, e->tid);
}

static __always_inline bool no_task_filter(void)
{
	return !filter_pid && !filter_comm_on && !filter_cgroup_on;
}

/* Counts a request given an entry of its own in the hash map (a -v diagnostic). */
static __always_inline void count_hashed(void)
{
	struct biotape_counters *c = cnt();

	if (c)
		__sync_fetch_and_add(&c->hashed, 1);
}

static __always_inline void track_fail(void)
{
	struct biotape_counters *c = cnt();

	if (c)
		__sync_fetch_and_add(&c->lost_inflight, 1);
}

static __always_inline void fresh_entry(struct biotape_rq_event *e, __u32 dev, __u32 idx)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->dev_idx = idx;
	e->attr = BIOTAPE_ATTR_LIVE;
	if (no_task_filter())
		e->attr |= BIOTAPE_ATTR_MATCH;
}

/*
 * Request entries are retired, not deleted, when a request completes: request pointers come
 * from a fixed pool per queue, so the slot is reused by the next request with that pointer
 * (a lookup and a write instead of a hash insert and delete per I/O).
 */
static __always_inline void retire(struct biotape_rq_event *e)
{
	e->attr = 0;
	e->issue_ns = 0;
}

/*
 * A live in-flight entry for KEY: E (the entry found for it, retired) started afresh, or, when
 * there is none, a new one in the hash map. A full map is counted as a lost event only when
 * COUNT (at issue: once per request).
 */
static __always_inline struct biotape_rq_event *get_entry(struct biotape_rq_event *e, __u64 key,
							 __u32 dev, __u32 idx, bool count)
{
	struct biotape_rq_event zero;
	long err;

	if (e) {
		fresh_entry(e, dev, idx);
		return e;
	}
	fresh_entry(&zero, dev, idx);
	err = bpf_map_update_elem(&inflight, &key, &zero, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST */) {
		if (count)
			track_fail();
		return NULL;
	}
	if (!err)
		count_hashed();
	return bpf_map_lookup_elem(&inflight, &key);
}

static __always_inline void mark_issued(struct biotape_rq_event *e, __u32 idx)
{
	struct biotape_counters *c;
	struct biotape_devstate *ds;

	if (e->attr & BIOTAPE_ATTR_ISSUED)
		return;
	e->attr |= BIOTAPE_ATTR_ISSUED;
	c = cnt();
	if (c)
		c->issued++;
	if (!kernel_qd)
		return;
	ds = bpf_map_lookup_elem(&devstate, &idx);
	if (ds)
		e->qd = __sync_fetch_and_add(&ds->inflight, 1) + 1;
}

static __always_inline void unmark_issued(struct biotape_rq_event *e)
{
	struct biotape_devstate *ds;
	__u32 idx = e->dev_idx;

	if (!(e->attr & BIOTAPE_ATTR_ISSUED))
		return;
	e->attr &= ~BIOTAPE_ATTR_ISSUED;
	if (!kernel_qd)
		return;
	ds = bpf_map_lookup_elem(&devstate, &idx);
	if (ds)
		__sync_fetch_and_add(&ds->inflight, -1);
}

/*
 * Sends the finished entry E to this CPU's ring; counts a failed reservation. Wakeups are
 * batched: the consumer is woken every wakeup_records records of a CPU, and otherwise finds
 * the records when its poll times out. TASK_CTX: called in task context (an orphan at
 * block_io_start or block_bio_queue), where a completion on this CPU can interrupt us, so
 * "emitted" is added atomically; completion programs do not nest in themselves and add
 * plainly (one per event). Returns whether the record was sent.
 */
static __always_inline bool emit(struct biotape_rq_event *e, const bool task_ctx)
{
	struct biotape_counters *c = cnt();
	__u32 ri = bpf_get_smp_processor_id();
	__u64 wake = BPF_RB_NO_WAKEUP;
	void *rb;

	if (!c)
		return false;
	if (nr_rings > 1)
		ri %= nr_rings;
	else
		ri = 0;
	rb = bpf_map_lookup_elem(&rings, &ri);
	if (!rb) {
		__sync_fetch_and_add(&c->lost_ringbuf, 1);
		return false;
	}
	/* the entry is retired next */
	e->attr &= BIOTAPE_ATTR_TASK | BIOTAPE_ATTR_INSERT | BIOTAPE_ATTR_WAKE;
	/* a lost increment of "pending" (an interrupted task context) only delays a wakeup */
	if (++c->pending >= wakeup_records)
		wake = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(rb, e, sizeof(*e), wake)) {
		__sync_fetch_and_add(&c->lost_ringbuf, 1);
		return false;
	}
	if (wake == BPF_RB_FORCE_WAKEUP)
		c->pending = 0;
	if (task_ctx)
		__sync_fetch_and_add(&c->emitted, 1);
	else
		c->emitted++;
	return true;
}

/*
 * E was issued and its slot is now taken by a new request (or bio), so its completion came
 * and went without our program: the kernel skips a tracing program in some contexts (re-entry
 * on a CPU, counted as recursion_misses; and, uncounted, a sandbox kernel that hides its init
 * task from tracing did so here, for completions run in softirq on that task's time). Rather
 * than lose the I/O, send it without a completion time (user space counts these). E is
 * retired either way.
 */
static __always_inline void orphan(struct biotape_rq_event *e)
{
	struct biotape_counters *c;

	if (!(e->attr & BIOTAPE_ATTR_ISSUED))
		return;
	unmark_issued(e);
	if (e->attr & BIOTAPE_ATTR_MATCH) {
		e->complete_ns = 0;
		if (emit(e, true)) {
			c = cnt();
			if (c)
				__sync_fetch_and_add(&c->orphaned, 1);
		}
	}
	retire(e);
}

/* ---- request layer ---- */

/* A request made from a bio: the submitter is the current task. */
static __always_inline void start_entry(struct biotape_rq_event *e, __u32 dev, __u32 idx,
					const bool btf)
{
	e->insert_ns = bpf_ktime_get_ns();
	e->issue_ns = 0;
	e->complete_ns = 0;
	e->sector = 0;
	e->bytes = 0;
	e->dev = dev;
	e->dev_idx = idx;
	e->cpu = 0;
	e->qd = 0;
	e->flags = 0;
	e->op = 0;
	e->status = 0;
	e->attr = BIOTAPE_ATTR_INSERT | BIOTAPE_ATTR_LIVE;
	attribute(e, btf);
}

static __always_inline int on_io_start(struct request *rq, const bool btf)
{
	__u32 dev = rq_dev(rq, btf);
	int idx = dev_index(dev);
	struct biotape_rq_event *e;
	__u64 key = (__u64)rq;
	struct biotape_rq_slot *s;
	__u32 opf;

	if (idx < 0)
		return 0;
	s = slot_of(rq, idx, btf);
	if (s && s->key == key) {
		e = &s->e;
	} else if (s) {
		struct biotape_rq_event *h = bpf_map_lookup_elem(&inflight, &key);

		/*
		 * First use of the slot, or the tag set was reallocated (a new scheduler, a new
		 * nr_requests) and the tag belongs to another request structure now. This
		 * request owns the tag, and the only request that borrows tags (the flush
		 * request) never takes a slot, so whatever holds it is stale: an entry still
		 * marked issued never had its completion seen and is sent now, as is an entry of
		 * this pointer in the hash map (issued before it had a slot). Then claim it.
		 */
		orphan(&s->e);
		if (h) {
			orphan(h);
			retire(h);
		}
		s->key = key;
		e = &s->e;
	} else {
		e = bpf_map_lookup_elem(&inflight, &key);
	}
	if (e) {
		/*
		 * The entry of an earlier request with this pointer: reuse it in place.
		 * block_io_start fires once per new request, so an earlier one still marked issued
		 * never had its completion seen.
		 */
		orphan(e);
		start_entry(e, dev, idx, btf);
	} else {
		struct biotape_rq_event fresh = {};

		start_entry(&fresh, dev, idx, btf);
		/* A full map is counted at issue, where the request is lost for good. */
		if (bpf_map_update_elem(&inflight, &key, &fresh, BPF_NOEXIST))
			return 0;
		count_hashed();
		e = bpf_map_lookup_elem(&inflight, &key);
		if (!e)
			return 0;
	}
	opf = RD(btf, rq, cmd_flags);
	if (opf & (1u << FLAGBIT(__REQ_PREFLUSH, 18))) {
		/* The flush machinery issues its own flush request: remember who asked. */
		__u32 i = idx;
		struct biotape_devstate *ds = bpf_map_lookup_elem(&devstate, &i);

		if (ds) {
			ds->flush_pid = e->pid;
			ds->flush_tid = e->tid;
			ds->flush_cgroup = e->cgroup;
			ds->flush_attr =
				e->attr & (BIOTAPE_ATTR_TASK | BIOTAPE_ATTR_MATCH | BIOTAPE_ATTR_WAKE);
			__builtin_memcpy(ds->flush_comm, e->comm, sizeof(e->comm));
			ds->flush_wake_ns = e->wake_ns;
			ds->flush_slept_ns = e->slept_ns;
			ds->flush_insert_ns = e->insert_ns;
		}
	}
	return 0;
}

/*
 * A request is inserted (and issued) again only after a requeue, which clears ISSUED: an entry
 * still marked issued here belongs to an earlier request whose completion went unseen. That
 * is how requests without block_io_start (the flush machinery's own flush request, one per
 * hardware queue, reused for every flush) are caught.
 */
static __always_inline int on_rq_insert(struct request *rq, const bool btf)
{
	struct biotape_rq_event *e;
	__u32 dev;
	int idx;

	e = lookup_rq(rq, btf, &dev, &idx);
	if (idx < 0)
		return 0;
	if (e)
		orphan(e);
	if (!e || !(e->attr & BIOTAPE_ATTR_LIVE)) {
		e = get_entry(e, (__u64)rq, dev, idx, false);
		if (!e)
			return 0;
	}
	if (!(e->attr & BIOTAPE_ATTR_INSERT)) {
		e->insert_ns = bpf_ktime_get_ns();
		e->attr |= BIOTAPE_ATTR_INSERT;
	}
	if (!have_io_start && !(e->attr & BIOTAPE_ATTR_TASK))
		attribute(e, btf);
	return 0;
}

static __always_inline int on_rq_issue(struct request *rq, const bool btf)
{
	struct biotape_rq_event *e;
	__u64 sector;
	__u32 i, bytes, dev;
	int idx;

	e = lookup_rq(rq, btf, &dev, &idx);
	if (idx < 0)
		return 0;
	if (e)
		orphan(e); /* see on_rq_insert */
	if (!e || !(e->attr & BIOTAPE_ATTR_LIVE)) {
		/* Not seen before issue: a flush request, or a request started before us. */
		e = get_entry(e, (__u64)rq, dev, idx, true);
		if (!e)
			return 0;
	}
	i = e->dev_idx;
	sector = RD(btf, rq, __sector);
	bytes = RD(btf, rq, __data_len);
	if (e->issue_ns) {
		/*
		 * Reissued after a requeue: a partial completion before it advanced the sector
		 * and shrank the size (loop retries short reads so). The event keeps the whole
		 * request: the union of the issued ranges.
		 */
		__u64 end = sector + (bytes >> 9), pend = e->sector + (e->bytes >> 9);

		if (e->sector < sector)
			sector = e->sector;
		if (pend > end)
			end = pend;
		bytes = (__u32)((end - sector) << 9);
	}
	e->issue_ns = bpf_ktime_get_ns();
	e->sector = sector;
	e->bytes = bytes;
	e->cpu = bpf_get_smp_processor_id();
	decode_opf(RD(btf, rq, cmd_flags), e);
	if (e->op == BIOTAPE_RQ_OP_FLUSH)
		e->sector = 0; /* the flush request's sector is meaningless (often -1) */
	if (!(e->attr & BIOTAPE_ATTR_TASK) && e->op == BIOTAPE_RQ_OP_FLUSH) {
		struct biotape_devstate *ds = bpf_map_lookup_elem(&devstate, &i);

		if (ds && (ds->flush_attr & BIOTAPE_ATTR_TASK)) {
			e->pid = ds->flush_pid;
			e->tid = ds->flush_tid;
			e->cgroup = ds->flush_cgroup;
			__builtin_memcpy(e->comm, ds->flush_comm, sizeof(e->comm));
			e->wake_ns = ds->flush_wake_ns;
			e->slept_ns = ds->flush_slept_ns;
			e->attr = (e->attr & ~(BIOTAPE_ATTR_MATCH | BIOTAPE_ATTR_WAKE)) |
				  ds->flush_attr;
			/*
			 * --waits: the flush entered the block layer with the preflush that asked
			 * for it (the flush machinery may hold it behind another flush): the time
			 * its submitter's wait began, which replay's wake sources count from.
			 */
			if (record_waits && !(e->attr & BIOTAPE_ATTR_INSERT) && ds->flush_insert_ns &&
			    ds->flush_insert_ns <= e->issue_ns) {
				e->insert_ns = ds->flush_insert_ns;
				e->attr |= BIOTAPE_ATTR_INSERT;
			}
		}
	}
	mark_issued(e, i);
	return 0;
}

static __always_inline int on_rq_requeue(struct request *rq, const bool btf)
{
	struct biotape_rq_event *e;
	__u32 dev;
	int idx;

	e = lookup_rq(rq, btf, &dev, &idx);
	if (!e || !(e->attr & BIOTAPE_ATTR_LIVE))
		return 0;
	unmark_issued(e);
	e->flags |= BIOTAPE_RQF_REQUEUED;
	return 0;
}

static __always_inline int on_rq_merge(struct request *rq, const bool btf)
{
	struct biotape_rq_event *e;
	__u32 dev;
	int idx;

	e = lookup_rq(rq, btf, &dev, &idx);
	if (!e || !(e->attr & BIOTAPE_ATTR_LIVE))
		return 0;
	unmark_issued(e);
	retire(e);
	return 0;
}

static __always_inline int on_rq_complete(struct request *rq, __u32 error, __u32 nr_bytes,
					  const bool btf)
{
	struct biotape_rq_event *e;
	__u32 dev;
	int idx;

	if (test_skip())
		return 0;
	e = lookup_rq(rq, btf, &dev, &idx);
	if (idx < 0)
		return 0;
	if (!e) {
		struct biotape_counters *c = cnt();

		if (c)
			__sync_fetch_and_add(&c->noentry, 1);
		return 0;
	}
	if (!(e->attr & BIOTAPE_ATTR_LIVE)) {
		struct biotape_counters *c = cnt();

		if (c)
			__sync_fetch_and_add(&c->retired_complete, 1);
		return 0;
	}
	if (error)
		e->status = error;
	/* Partial completion: the request is done when its last bytes complete. */
	if (nr_bytes < RD(btf, rq, __data_len)) {
		struct biotape_counters *c = cnt();

		if (c)
			__sync_fetch_and_add(&c->partial, 1);
		return 0;
	}
	if (e->attr & BIOTAPE_ATTR_ISSUED) {
		e->complete_ns = bpf_ktime_get_ns();
		unmark_issued(e);
		if (e->attr & BIOTAPE_ATTR_MATCH) {
			emit(e, false);
		} else {
			struct biotape_counters *c = cnt();

			if (c)
				__sync_fetch_and_add(&c->unmatched, 1);
		}
	} else if (nr_bytes && (e->attr & BIOTAPE_ATTR_MATCH)) {
		/*
		 * Never issued: fine for an empty preflush (served by the flush request), but a
		 * request with data that completes unissued means its issue was missed.
		 */
		struct biotape_counters *c = cnt();

		if (c)
			__sync_fetch_and_add(&c->unissued, 1);
	}
	retire(e);
	return 0;
}

/* ---- bio layer ---- */

static __always_inline int on_bio_queue(struct bio *bio, const bool btf)
{
	__u32 dev = bio_dev(bio, btf);
	int idx = dev_index(dev);
	struct biotape_rq_event e = {};
	__u64 key = (__u64)bio;
	struct biotape_rq_event *p;

	if (idx < 0)
		return 0;
	e.dev = dev;
	e.dev_idx = idx;
	e.issue_ns = bpf_ktime_get_ns();
	e.sector = RD(btf, bio, bi_iter.bi_sector);
	e.bytes = RD(btf, bio, bi_iter.bi_size);
	e.cpu = bpf_get_smp_processor_id();
	decode_opf(RD(btf, bio, bi_opf), &e);
	/* An empty preflush write is how a flush is submitted: call it one. */
	if (e.op == BIOTAPE_RQ_OP_WRITE && !e.bytes && (e.flags & BIOTAPE_RQF_PREFLUSH)) {
		e.op = BIOTAPE_RQ_OP_FLUSH;
		e.sector = 0;
	}
	attribute(&e, btf);
	p = bpf_map_lookup_elem(&inflight, &key);
	if (p)
		orphan(p); /* a reused bio whose completion we never saw (or a remapped one) */
	if (bpf_map_update_elem(&inflight, &key, &e, BPF_ANY)) {
		track_fail();
		return 0;
	}
	p = bpf_map_lookup_elem(&inflight, &key);
	if (p)
		mark_issued(p, e.dev_idx);
	return 0;
}

static __always_inline void bio_done(struct bio *bio, __u8 status, __u64 now)
{
	__u64 key = (__u64)bio;
	struct biotape_rq_event *e = bpf_map_lookup_elem(&inflight, &key);

	if (!e)
		return;
	e->status = status;
	e->complete_ns = now;
	unmark_issued(e);
	if (e->attr & BIOTAPE_ATTR_MATCH)
		emit(e, false);
	bpf_map_delete_elem(&inflight, &key);
}

/* Bio-based drivers (dm, md...): the bio's own completion tracepoint. */
static __always_inline int on_bio_complete(struct bio *bio, const bool btf)
{
	bio_done(bio, RD(btf, bio, bi_status), bpf_ktime_get_ns());
	return 0;
}

#define MAX_BIOS_PER_RQ 64     /* walk without bpf_loop (kernels before 5.17) */
#define MAX_BIOS_WALK 65536    /* walk with bpf_loop: far beyond any max_segments */

struct bio_walk {
	__u64 bio; /* struct bio * of the next bio to look at (0: end of the list) */
	__u64 now;
	__u32 left; /* completed bytes not yet attributed to a bio */
	__u8 error;
};

/* One bio of a completing request (bpf_loop callback; probe reads for both program kinds). */
static long bio_walk_step(__u64 i, void *ctx)
{
	struct bio_walk *w = ctx;
	struct bio *bio = (void *)w->bio;
	__u32 sz;

	if (!bio)
		return 1;
	sz = BPF_CORE_READ(bio, bi_iter.bi_size);
	if (sz > w->left)
		return 1; /* this bio is not finished yet */
	w->left -= sz;
	bio_done(bio, w->error, w->now);
	w->bio = (__u64)BPF_CORE_READ(bio, bi_next);
	return 0;
}

/*
 * Request-based drivers do not trace bio completions: the bios of a request complete with it
 * (those fully covered by nr_bytes, in order, for a partial completion). A request can carry
 * up to max_segments bios (128 on loop, hundreds on SCSI): the list is walked with bpf_loop
 * where the kernel has it; bios beyond the walk are sent later without a completion time.
 */
static __always_inline int on_rq_complete_bios(struct request *rq, __u32 error, __u32 nr_bytes,
					       const bool btf)
{
	struct bio *bio = RD(btf, rq, bio);
	__u64 now = bpf_ktime_get_ns();
	__u32 left = nr_bytes;

	if (test_skip())
		return 0;

	if (have_bpf_loop) {
		struct bio_walk w = { .bio = (__u64)bio, .now = now, .left = nr_bytes,
				      .error = (__u8)error };

		bpf_loop(MAX_BIOS_WALK, bio_walk_step, &w, 0);
		bio = (void *)w.bio;
		left = w.left;
	} else {
		for (int i = 0; i < MAX_BIOS_PER_RQ && bio; i++) {
			__u32 sz = RD(btf, bio, bi_iter.bi_size);

			if (sz > left)
				break;
			left -= sz;
			bio_done(bio, error, now);
			bio = RD(btf, bio, bi_next);
		}
	}
	/*
	 * A completed bio beyond the walk stays marked issued: it is sent without a completion
	 * time when its bio is reused, or at the stop (not counted lost: it is in the trace).
	 */
	return 0;
}

/*
 * Program sets. "_q" variants: kernels before 5.11 passed the queue first to block_rq_insert
 * and block_rq_issue (user space counts the tracepoint's arguments in BTF).
 */
#define RQ_PROGS(kind, pfx, btf)                                                                \
	SEC(kind "/block_io_start")                                                              \
	int BPF_PROG(pfx##_io_start, struct request *rq) { return on_io_start(rq, btf); }       \
	SEC(kind "/block_rq_insert")                                                             \
	int BPF_PROG(pfx##_rq_insert, struct request *rq) { return on_rq_insert(rq, btf); }     \
	SEC(kind "/block_rq_insert")                                                             \
	int BPF_PROG(pfx##_rq_insert_q, void *q, struct request *rq)                             \
	{                                                                                        \
		return on_rq_insert(rq, btf);                                                    \
	}                                                                                        \
	SEC(kind "/block_rq_issue")                                                              \
	int BPF_PROG(pfx##_rq_issue, struct request *rq) { return on_rq_issue(rq, btf); }       \
	SEC(kind "/block_rq_issue")                                                              \
	int BPF_PROG(pfx##_rq_issue_q, void *q, struct request *rq)                              \
	{                                                                                        \
		return on_rq_issue(rq, btf);                                                     \
	}                                                                                        \
	SEC(kind "/block_rq_requeue")                                                            \
	int BPF_PROG(pfx##_rq_requeue, struct request *rq) { return on_rq_requeue(rq, btf); }        \
	SEC(kind "/block_rq_merge")                                                              \
	int BPF_PROG(pfx##_rq_merge, struct request *rq) { return on_rq_merge(rq, btf); }            \
	SEC(kind "/block_rq_complete")                                                           \
	int BPF_PROG(pfx##_rq_complete, struct request *rq, int error, unsigned int nr_bytes)    \
	{                                                                                        \
		return on_rq_complete(rq, (__u8)error, nr_bytes, btf);                           \
	}                                                                                        \
	SEC(kind "/block_bio_queue")                                                             \
	int BPF_PROG(pfx##_bio_queue, struct bio *bio) { return on_bio_queue(bio, btf); }       \
	SEC(kind "/block_bio_complete")                                                          \
	int BPF_PROG(pfx##_bio_complete, void *q, struct bio *bio)                               \
	{                                                                                        \
		return on_bio_complete(bio, btf);                                                \
	}                                                                                        \
	SEC(kind "/block_rq_complete")                                                           \
	int BPF_PROG(pfx##_bio_rq_complete, struct request *rq, int error, unsigned int nr_bytes) \
	{                                                                                        \
		return on_rq_complete_bios(rq, (__u8)error, nr_bytes, btf);                      \
	}

RQ_PROGS("tp_btf", btf, true)
RQ_PROGS("raw_tp", raw, false)

/* ---- sleeps and wakeups of the submitting threads (--waits) ---- */

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/* PREV leaves the CPU: asleep unless preempted or still runnable (state 0, TASK_RUNNING). */
static __always_inline int on_switch(bool preempt, struct task_struct *prev)
{
	__u32 tid;
	struct biotape_wait *w;
	long state;

	if (preempt)
		return 0;
	tid = BPF_CORE_READ(prev, pid);
	w = bpf_map_lookup_elem(&waits, &tid);
	if (!w)
		return 0;
	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___old *)prev, state);
	if (state)
		w->sleep_ns = bpf_ktime_get_ns();
	return 0;
}

/* Whether this CPU is in an hrtimer's callback: a wake from there is a timer's. */
static __always_inline __u32 timer_running(void)
{
	__u32 k = 0, *v = bpf_map_lookup_elem(&in_timer, &k);

	return v ? *v : 0;
}

/* P is being woken (in the waker's context, or an interrupt's): ends its sleep. */
static __always_inline int on_waking(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct biotape_wait *w = bpf_map_lookup_elem(&waits, &tid);
	__u64 now;

	if (!w || !w->sleep_ns)
		return 0;
	now = bpf_ktime_get_ns();
	w->wake_ns = now;
	w->slept_ns = now - w->sleep_ns;
	w->sleep_ns = 0;
	w->timer = timer_running();
	return 0;
}

/* Marks this CPU as running an hrtimer callback (ON 1) or not (0). */
static __always_inline int set_in_timer(__u32 on)
{
	__u32 k = 0, *v = bpf_map_lookup_elem(&in_timer, &k);

	if (v)
		*v = on;
	return 0;
}

/* The programs of --waits, of one kind. */
#define WAIT_PROGS(kind, pfx)                                                                   \
	SEC(kind "/hrtimer_expire_entry")                                                        \
	int BPF_PROG(pfx##_hrtimer_expire_entry) { return set_in_timer(1); }                    \
	SEC(kind "/hrtimer_expire_exit")                                                         \
	int BPF_PROG(pfx##_hrtimer_expire_exit) { return set_in_timer(0); }                     \
	SEC(kind "/sched_switch")                                                                \
	int BPF_PROG(pfx##_sched_switch, bool preempt, struct task_struct *prev)                 \
	{                                                                                        \
		return on_switch(preempt, prev);                                                 \
	}                                                                                        \
	SEC(kind "/sched_waking")                                                                \
	int BPF_PROG(pfx##_sched_waking, struct task_struct *p) { return on_waking(p); }

WAIT_PROGS("tp_btf", btf)
WAIT_PROGS("raw_tp", raw)
