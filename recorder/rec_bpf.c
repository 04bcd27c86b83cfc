// SPDX-License-Identifier: GPL-2.0-only
/* The recorder's BPF side: the only file that knows the skeleton. */
#include "rec_bpf.h"
#include "cli.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "biotape.skel.h"

#define MAX_RINGS 64               /* shards; CPUs beyond share (cpu % shards) */
#define RING_TOTAL_KB (16 * 1024)  /* default total ring memory ... */
#define RING_MIN_KB 512            /* ... but at least this per shard ... */
#define RING_MAX_KB 4096           /* ... and at most this */
#define DEFAULT_INFLIGHT 16384     /* requests in flight system-wide */
#define WAKEUP_DIVISOR 4           /* wake the consumer at 1/4 full */
#define SCAN_BATCH 1024
#define MAX_SLOTS 65536            /* per-tag in-flight slots, all devices (128 B each) */

struct rec_bpf {
	struct biotape_bpf *skel;
	struct ring_buffer *rb;
	int *ring_fds;
	uint32_t nr_rings;
	uint32_t ring_bytes;
	const char *mode;
	rec_bpf_event_fn fn;
	void *ctx;
	int ncpus;
	bool detached;
	uint64_t unissued;
	uint64_t diag_retired, diag_partial, diag_unmatched, diag_issued, diag_noentry, orphaned; /* see struct biotape_counters */
	uint64_t diag_hashed;
	uint64_t *scan_keys;
	struct biotape_rq_event *scan_vals;
	const struct biotape_rq_slot *slots; /* the "slots" map, mapped read-only (NULL: none) */
	size_t nslots, slots_len;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (cli_verbose < 1 || (level == LIBBPF_DEBUG && cli_verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Number of arguments of tracepoint NAME (without the leading ctx), or -ENOENT. */
static int tp_nargs(const struct btf *btf, const char *name)
{
	char tname[128];
	const struct btf_type *t;
	int id;

	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	id = btf__find_by_name_kind(btf, tname, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* pointer */
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* func proto */
	if (!t || !btf_is_func_proto(t))
		return -ENOENT;
	return btf_vlen(t) - 1;
}

struct tp_choice {
	const char *suffix; /* program name without the btf_/raw_ prefix */
	const char *tp;
	int nargs;          /* required argument count; 0: any */
	bool bio;           /* belongs to the bio layer */
};

static const struct tp_choice progs[] = {
	{ "io_start", "block_io_start", 0, false },
	{ "rq_insert", "block_rq_insert", 1, false },
	{ "rq_insert_q", "block_rq_insert", 2, false },
	{ "rq_issue", "block_rq_issue", 1, false },
	{ "rq_issue_q", "block_rq_issue", 2, false },
	{ "rq_requeue", "block_rq_requeue", 0, false },
	{ "rq_merge", "block_rq_merge", 0, false },
	{ "rq_complete", "block_rq_complete", 0, false },
	{ "bio_queue", "block_bio_queue", 0, true },
	{ "bio_complete", "block_bio_complete", 0, true },
	{ "bio_rq_complete", "block_rq_complete", 0, true },
};

/* Chooses the programs of one kind ("btf" or "raw"); fails when a required one is missing. */
static int choose_progs(struct biotape_bpf *skel, const struct btf *btf, const char *kind,
			bool bio_layer, bool waits, bool *have_io_start, char *why, size_t whylen)
{
	struct bpf_program *p;
	char name[64];

	*have_io_start = false;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		const struct tp_choice *c = &progs[i];
		int n = btf ? tp_nargs(btf, c->tp) : -ENOENT;

		if (c->bio != bio_layer)
			continue;
		if (n < 0 && strcmp(kind, "raw") == 0 && !btf)
			n = c->nargs ? c->nargs : 1; /* no BTF to ask: assume a current kernel */
		if (n < 0)
			continue;
		if (c->nargs && n != c->nargs)
			continue;
		snprintf(name, sizeof(name), "%s_%s", kind, c->suffix);
		p = bpf_object__find_program_by_name(skel->obj, name);
		if (!p)
			continue;
		bpf_program__set_autoload(p, true);
		if (strcmp(c->suffix, "io_start") == 0)
			*have_io_start = true;
	}
	/*
	 * --waits: the scheduler's tracepoints (the programs read only their first arguments),
	 * and the hrtimer expiry's, to tell a timer's wake from an I/O's (they read none)
	 */
	for (int i = 0; waits && i < 4; i++) {
		static const char *const tp[] = { "sched_switch", "sched_waking",
						  "hrtimer_expire_entry", "hrtimer_expire_exit" };
		static const int nargs[] = { 2, 1, 0, 0 };

		if (btf && tp_nargs(btf, tp[i]) < nargs[i]) {
			snprintf(why, whylen, "--waits: the kernel has no usable tracepoint %s", tp[i]);
			return -ENOENT;
		}
		snprintf(name, sizeof(name), "%s_%s", kind, tp[i]);
		p = bpf_object__find_program_by_name(skel->obj, name);
		if (p)
			bpf_program__set_autoload(p, true);
	}
	/* Without these nothing can be recorded. */
	static const char *required_rq[] = { "rq_issue", "rq_complete" };
	static const char *required_bio[] = { "bio_queue", "bio_rq_complete" };
	const char **req = bio_layer ? required_bio : required_rq;

	for (int i = 0; i < 2; i++) {
		bool ok = false;

		snprintf(name, sizeof(name), "%s_%s", kind, req[i]);
		p = bpf_object__find_program_by_name(skel->obj, name);
		ok = p && bpf_program__autoload(p);
		if (!ok && strcmp(req[i], "rq_issue") == 0) {
			snprintf(name, sizeof(name), "%s_rq_issue_q", kind);
			p = bpf_object__find_program_by_name(skel->obj, name);
			ok = p && bpf_program__autoload(p);
		}
		if (!ok) {
			snprintf(why, whylen, "the kernel has no usable tracepoint for %s", req[i]);
			return -ENOENT;
		}
	}
	return 0;
}

static int ring_cb(void *ctx, void *data, size_t size)
{
	struct rec_bpf *b = ctx;

	if (size < sizeof(struct biotape_rq_event))
		return 0;
	return b->fn(b->ctx, data);
}

/* Whether the kernel has mmapable array maps (5.5+): a one-entry map is made and closed. */
static bool have_mmapable_arrays(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, &mo);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Lays out one in-flight slot per tag of each listed device (rodata slot_*), devices in order
 * while they fit in MAX_SLOTS. Slots are claimed at block_io_start: none without it (kernels
 * before 6.5), nor without mmapable arrays (user space reads them mapped). Returns the number
 * of slots (at least 1: a map is never empty).
 */
static uint32_t set_slots(struct biotape_bpf *skel, const struct rec_bpf_opts *o,
			  bool have_io_start)
{
	uint32_t n = 0;

	if (!have_io_start || !skel->rodata->ndev_list || !o->tag_queues || !o->tag_depth ||
	    !have_mmapable_arrays()) {
		bpf_map__set_map_flags(skel->maps.slots, 0);
		return 1;
	}
	for (uint32_t i = 0; i < skel->rodata->ndev_list; i++) {
		uint64_t need = (uint64_t)o->tag_queues[i] * o->tag_depth[i];

		if (!need || n + need > MAX_SLOTS)
			continue;
		((uint32_t *)skel->rodata->slot_nq)[i] = o->tag_queues[i];
		((uint32_t *)skel->rodata->slot_depth)[i] = o->tag_depth[i];
		((uint32_t *)skel->rodata->slot_base)[i] = n;
		n += (uint32_t)need;
	}
	skel->rodata->have_slots = n > 0;
	return n ? n : 1;
}

static int try_load(struct rec_bpf *b, const struct rec_bpf_opts *o, const struct btf *btf,
		    const char *kind, char *why, size_t whylen)
{
	struct biotape_bpf *skel;
	uint32_t nslots;
	bool have_io_start;
	uint32_t ring_bytes = b->ring_bytes;
	int err;

	skel = biotape_bpf__open();
	if (!skel) {
		err = -errno;
		snprintf(why, whylen, "opening the BPF object: %s", strerror(-err));
		return err;
	}
	err = choose_progs(skel, btf, kind, o->bio_layer, o->waits, &have_io_start, why, whylen);
	if (err)
		goto cleanup;
	skel->rodata->nr_rings = b->nr_rings;
	/* Wake the consumer when a ring is a quarter full (record + 8-byte ring header). */
	skel->rodata->wakeup_records =
		ring_bytes / WAKEUP_DIVISOR / (sizeof(struct biotape_rq_event) + 8) ?: 1;
	skel->rodata->filter_pid = o->pid;
	skel->rodata->self_pid = o->self_pid;
	if (o->comm) {
		skel->rodata->filter_comm_on = true;
		strncpy((char *)skel->rodata->filter_comm, o->comm, BIOTAPE_COMM_LEN - 1);
	}
	skel->rodata->filter_cgroup_on = o->cgroup_fd >= 0;
	skel->rodata->have_io_start = have_io_start;
	skel->rodata->kernel_qd = !o->user_qd;
	skel->rodata->record_waits = o->waits;
	{
		/* Fault injection for the tests: see test_skip_complete in biotape.bpf.c. */
		const char *t = getenv("BIOTAPE_TEST_SKIP_COMPLETE");

		if (t && *t)
			skel->rodata->test_skip_complete = (uint32_t)strtoul(t, NULL, 10);
	}
	/* bpf_loop walks a completing request's bios (a plain loop only reaches the first 64). */
	skel->rodata->have_bpf_loop =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
	skel->rodata->have_task_btf =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_current_task_btf, NULL) == 1;
	/* A few devices: matched by a scan of a read-only list, cheaper than a hash lookup. */
	if (o->ndevices <= sizeof(skel->rodata->dev_list) / sizeof(skel->rodata->dev_list[0])) {
		skel->rodata->ndev_list = o->ndevices;
		for (uint32_t i = 0; i < o->ndevices; i++)
			((uint32_t *)skel->rodata->dev_list)[i] = o->kdevs[i];
	}
	bpf_map__set_max_entries(skel->maps.rings, b->nr_rings);
	/* The first ring is the inner-map template (its size is what the kernel checks). */
	bpf_map__set_inner_map_fd(skel->maps.rings, b->ring_fds[0]);
	bpf_map__set_max_entries(skel->maps.inflight,
				 o->inflight_max ? o->inflight_max : DEFAULT_INFLIGHT);
	nslots = set_slots(skel, o, have_io_start);
	bpf_map__set_max_entries(skel->maps.slots, nslots);
	bpf_map__set_max_entries(skel->maps.devices, o->ndevices ? o->ndevices : 1);
	bpf_map__set_max_entries(skel->maps.devstate, o->ndevices ? o->ndevices : 1);

	err = biotape_bpf__load(skel);
	if (err) {
		snprintf(why, whylen, "loading the %s programs: %s", kind,
			 strerror(err < 0 ? -err : err));
		err = err < 0 ? err : -err;
		goto cleanup;
	}
	if (skel->rodata->have_slots) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		size_t len = (nslots * sizeof(struct biotape_rq_slot) + page - 1) / page * page;
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(skel->maps.slots), 0);

		if (m == MAP_FAILED) {
			err = -errno;
			snprintf(why, whylen, "mapping the in-flight slots: %s", strerror(-err));
			goto cleanup;
		}
		b->slots = m;
		b->nslots = nslots;
		b->slots_len = len;
	}
	b->skel = skel;
	b->mode = strcmp(kind, "btf") == 0 ? "tp_btf" : "raw_tp";
	return 0;
cleanup:
	biotape_bpf__destroy(skel);
	return err;
}

int rec_bpf__open(struct rec_bpf **bp, const struct rec_bpf_opts *o, rec_bpf_event_fn fn,
		  void *ctx, char *why, size_t whylen)
{
	struct rec_bpf *b;
	struct btf *btf;
	uint32_t ring_bytes, kb;
	int err, cpus;

	*bp = NULL;
	libbpf_set_print(libbpf_print);
	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	b->fn = fn;
	b->ctx = ctx;
	cpus = libbpf_num_possible_cpus();
	b->ncpus = cpus > 0 ? cpus : 1;
	/* One ring per CPU: producers on different CPUs never share a reservation lock. */
	b->nr_rings = b->ncpus < MAX_RINGS ? b->ncpus : MAX_RINGS;
	kb = o->ring_kb;
	if (!kb) {
		uint32_t want = RING_TOTAL_KB / b->nr_rings;

		for (kb = RING_MIN_KB; kb < want && kb < RING_MAX_KB; kb *= 2)
			;
	}
	ring_bytes = b->ring_bytes = kb * 1024u;
	b->scan_keys = calloc(SCAN_BATCH, sizeof(*b->scan_keys));
	b->scan_vals = calloc(SCAN_BATCH, sizeof(*b->scan_vals));
	b->ring_fds = calloc(b->nr_rings, sizeof(int));
	if (!b->scan_keys || !b->scan_vals || !b->ring_fds) {
		err = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		goto cleanup;
	}
	for (uint32_t i = 0; i < b->nr_rings; i++)
		b->ring_fds[i] = -1;

	for (uint32_t i = 0; i < b->nr_rings; i++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "biotape_ring", 0, 0, ring_bytes,
					NULL);

		if (fd < 0) {
			err = -errno;
			snprintf(why, whylen, "creating ring buffer %u (%u KiB): %s", i,
				 ring_bytes / 1024, strerror(-err));
			goto cleanup;
		}
		b->ring_fds[i] = fd;
	}

	btf = btf__load_vmlinux_btf();
	if (!btf)
		cli_info(1, "record: no vmlinux BTF (%s): trying raw_tp only", strerror(errno));
	err = btf && !o->raw_tp_only ? try_load(b, o, btf, "btf", why, whylen) : -ENOENT;
	if (err) {
		if (btf && !o->raw_tp_only)
			cli_info(1, "record: tp_btf failed (%s), trying raw_tp", why);
		err = try_load(b, o, btf, "raw", why, whylen);
	}
	btf__free(btf);
	if (err)
		goto cleanup;

	for (uint32_t i = 0; i < o->ndevices; i++) {
		uint32_t dev = o->kdevs[i];

		err = bpf_map_update_elem(bpf_map__fd(b->skel->maps.devices), &dev, &i, BPF_ANY);
		if (err) {
			err = -errno;
			snprintf(why, whylen, "filling the device map: %s", strerror(-err));
			goto cleanup;
		}
	}
	if (o->cgroup_fd >= 0) {
		uint32_t zero = 0;

		err = bpf_map_update_elem(bpf_map__fd(b->skel->maps.cgroup_filter), &zero,
					  &o->cgroup_fd, BPF_ANY);
		if (err) {
			err = -errno;
			snprintf(why, whylen, "setting the cgroup filter: %s", strerror(-err));
			goto cleanup;
		}
	}
	for (uint32_t i = 0; i < b->nr_rings; i++) {
		int fd = b->ring_fds[i];
		err = bpf_map_update_elem(bpf_map__fd(b->skel->maps.rings), &i, &fd, BPF_ANY);
		if (err) {
			err = -errno;
			snprintf(why, whylen, "installing ring buffer %u: %s", i, strerror(-err));
			goto cleanup;
		}
		if (i == 0)
			b->rb = ring_buffer__new(fd, ring_cb, b, NULL);
		else
			err = ring_buffer__add(b->rb, fd, ring_cb, b);
		if (!b->rb || err) {
			err = b->rb ? err : -errno;
			snprintf(why, whylen, "ring buffer consumer: %s", strerror(-err));
			goto cleanup;
		}
	}
	err = biotape_bpf__attach(b->skel);
	if (err) {
		snprintf(why, whylen, "attaching the %s programs: %s", b->mode,
			 strerror(err < 0 ? -err : err));
		err = err < 0 ? err : -err;
		goto cleanup;
	}
	*bp = b;
	return 0;
cleanup:
	rec_bpf__close(b);
	return err;
}

int rec_bpf__poll(struct rec_bpf *b, int timeout_ms)
{
	int n, m;

	n = ring_buffer__poll(b->rb, timeout_ms);
	if (n < 0 && n != -EINTR)
		return n;
	/* Records submitted with BPF_RB_NO_WAKEUP are only found by consuming. */
	m = ring_buffer__consume(b->rb);
	if (m < 0)
		return m;
	return (n > 0 ? n : 0) + m;
}

/*
 * Calls FN for every entry of both in-flight maps: the per-tag slots (read where they are
 * mapped) and the hash map (one batched read, SCAN_BATCH at a time).
 */
static int scan_inflight(struct rec_bpf *b,
			 void (*fn)(const struct biotape_rq_event *e, void *ctx), void *ctx)
{
	int fd = bpf_map__fd(b->skel->maps.inflight);
	uint64_t in = 0, out = 0;
	bool first = true;
	int err;

	for (;;) {
		__u32 count = SCAN_BATCH;
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, b->scan_keys,
					   b->scan_vals, &count, &opts);
		if (err && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < count; i++)
			fn(&b->scan_vals[i], ctx);
		if (err)
			break; /* ENOENT: the whole map was read */
		in = out;
		first = false;
	}
	for (size_t i = 0; i < b->nslots; i++) {
		struct biotape_rq_event e = b->slots[i].e; /* one copy: the programs may write it */

		fn(&e, ctx);
	}
	return 0;
}

struct wm_scan {
	uint64_t now, stale_ns, min;
};

static void wm_visit(const struct biotape_rq_event *e, void *ctx)
{
	struct wm_scan *w = ctx;
	uint64_t t = e->issue_ns;

	if (t && t < w->min && w->now - t < w->stale_ns)
		w->min = t;
}

int rec_bpf__watermark(struct rec_bpf *b, uint64_t stale_ns, uint64_t *wm)
{
	struct timespec ts;
	struct wm_scan w;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.now = w.min = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	w.stale_ns = stale_ns;
	err = scan_inflight(b, wm_visit, &w);
	if (err)
		return err;
	*wm = w.min;
	return 0;
}

struct pending_scan {
	const bool *kernel_counted;
	uint32_t ndev;
	uint64_t now, stale_ns;
	bool busy;
};

static void pending_visit(const struct biotape_rq_event *e, void *ctx)
{
	struct pending_scan *p = ctx;
	bool counted = e->dev_idx < p->ndev && p->kernel_counted[e->dev_idx];

	if (p->busy || !e->issue_ns || p->now - e->issue_ns >= p->stale_ns)
		return;
	if (e->attr & BIOTAPE_ATTR_ISSUED)
		/* the kernel's count has no flush request in it */
		p->busy = !counted || e->op == BIOTAPE_RQ_OP_FLUSH;
	else if ((e->attr & BIOTAPE_ATTR_LIVE) && (e->flags & BIOTAPE_RQF_REQUEUED))
		p->busy = true; /* requeued, to be issued again */
}

int rec_bpf__pending(struct rec_bpf *b, const bool *kernel_counted, uint32_t ndev,
		     uint64_t stale_ns, bool *busy)
{
	struct pending_scan p = { .kernel_counted = kernel_counted, .ndev = ndev,
				  .stale_ns = stale_ns };
	struct timespec ts;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	p.now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	err = scan_inflight(b, pending_visit, &p);
	if (err)
		return err;
	*busy = p.busy;
	return 0;
}

struct open_scan {
	struct rec_bpf *b;
	uint64_t n;
	bool stop;
};

static void open_visit(const struct biotape_rq_event *e, void *ctx)
{
	struct open_scan *o = ctx;
	struct biotape_rq_event ev;

	/* issued, or requeued and waiting to be issued again */
	bool open = (e->attr & BIOTAPE_ATTR_ISSUED) ||
		    ((e->attr & BIOTAPE_ATTR_LIVE) && (e->flags & BIOTAPE_RQF_REQUEUED));

	if (o->stop || !e->issue_ns || !open || !(e->attr & BIOTAPE_ATTR_MATCH))
		return;
	ev = *e;
	ev.complete_ns = 0;
	ev.attr &= BIOTAPE_ATTR_TASK | BIOTAPE_ATTR_INSERT;
	if (o->b->fn(o->b->ctx, &ev))
		o->stop = true; /* --max-events reached: this one was not taken */
	else
		o->n++;
}

int64_t rec_bpf__flush_open(struct rec_bpf *b)
{
	struct open_scan o = { .b = b };
	int err;

	if (!b->detached)
		return -EBUSY;
	err = scan_inflight(b, open_visit, &o);
	return err ? err : (int64_t)o.n;
}

void rec_bpf__detach(struct rec_bpf *b)
{
	if (b && b->skel && !b->detached) {
		biotape_bpf__detach(b->skel);
		b->detached = true;
	}
}

uint64_t rec_bpf__orphaned(struct rec_bpf *b)
{
	uint64_t e, l1, l2;

	rec_bpf__counters(b, &e, &l1, &l2);
	return b->orphaned;
}

uint64_t rec_bpf__issued(struct rec_bpf *b)
{
	uint64_t e, l1, l2;

	rec_bpf__counters(b, &e, &l1, &l2);
	return b->diag_issued;
}

void rec_bpf__counters(struct rec_bpf *b, uint64_t *emitted, uint64_t *lost_ringbuf,
		       uint64_t *lost_inflight)
{
	struct biotape_counters *v;
	uint32_t zero = 0;

	uint64_t retired = 0, partial = 0, unmatched = 0, issued = 0, noentry = 0, orphaned = 0;
	uint64_t hashed = 0;

	*emitted = *lost_ringbuf = *lost_inflight = 0;
	b->unissued = 0;
	v = calloc(b->ncpus, sizeof(*v));
	if (!v)
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.counters), &zero, v) == 0) {
		for (int i = 0; i < b->ncpus; i++) {
			*emitted += v[i].emitted;
			*lost_ringbuf += v[i].lost_ringbuf;
			*lost_inflight += v[i].lost_inflight + v[i].unissued;
			b->unissued += v[i].unissued;
			retired += v[i].retired_complete;
			partial += v[i].partial;
			unmatched += v[i].unmatched;
			issued += v[i].issued;
			noentry += v[i].noentry;
			orphaned += v[i].orphaned;
			hashed += v[i].hashed;
		}
	}
	free(v);
	b->diag_retired = retired;
	b->diag_partial = partial;
	b->diag_unmatched = unmatched;
	b->diag_issued = issued;
	b->diag_noentry = noentry;
	b->orphaned = orphaned;
	b->diag_hashed = hashed;
	/*
	 * A block_bio_queue the kernel skipped (re-entry on its CPU) is a bio never tracked: lost.
	 * A skipped completion is not: its entry stays marked issued and is sent without a
	 * completion time (orphan at reuse, or rec_bpf__flush_open). A skipped block_rq_issue is
	 * counted at completion (unissued).
	 */
	{
		struct bpf_program *p;

		bpf_object__for_each_program(p, b->skel->obj) {
			struct bpf_prog_info info = { 0 };
			__u32 len = sizeof(info);
			int fd = bpf_program__fd(p);

			const char *name = bpf_program__name(p);

			if (fd < 0 || !strstr(name, "bio_queue") ||
			    bpf_obj_get_info_by_fd(fd, &info, &len))
				continue;
			*lost_inflight += info.recursion_misses;
		}
	}
	if (b->unissued)
		cli_info(1, "record: %llu requests completed without a seen issue (counted as lost)",
			 (unsigned long long)b->unissued);
}

uint64_t rec_bpf__prog_stats(struct rec_bpf *b)
{
	struct bpf_program *p;
	uint64_t total = 0, e, l1, l2;

	rec_bpf__counters(b, &e, &l1, &l2);
	cli_info(1, "record: issued %llu, completions of unseen requests %llu, of retired slots "
		 "%llu, partial %llu, filtered out %llu", (unsigned long long)b->diag_issued,
		 (unsigned long long)b->diag_noentry,
		 (unsigned long long)b->diag_retired, (unsigned long long)b->diag_partial,
		 (unsigned long long)b->diag_unmatched);
	cli_info(1, "record: in-flight slots %zu, entries made in the hash map %llu", b->nslots,
		 (unsigned long long)b->diag_hashed);

	bpf_object__for_each_program(p, b->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		if (info.recursion_misses)
			cli_info(1, "record: %s skipped %llu times by the kernel (re-entry)",
				 bpf_program__name(p), (unsigned long long)info.recursion_misses);
		if (!info.run_cnt)
			continue;
		total += info.run_time_ns;
		cli_info(1, "record: %-18s %6.0f ns/call %10llu calls", bpf_program__name(p),
			 (double)info.run_time_ns / (double)info.run_cnt,
			 (unsigned long long)info.run_cnt);
	}
	return total;
}

const char *rec_bpf__mode(const struct rec_bpf *b)
{
	return b->mode;
}

uint32_t rec_bpf__nr_rings(const struct rec_bpf *b)
{
	return b->nr_rings;
}

void rec_bpf__close(struct rec_bpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	if (b->slots)
		munmap((void *)b->slots, b->slots_len);
	biotape_bpf__destroy(b->skel);
	if (b->ring_fds) {
		for (uint32_t i = 0; i < b->nr_rings; i++) {
			if (b->ring_fds[i] >= 0)
				close(b->ring_fds[i]);
		}
	}
	free(b->ring_fds);
	free(b->scan_keys);
	free(b->scan_vals);
	free(b);
}
