// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the recorder's BPF-free core with synthetic ring records. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_core.h"
#include "rec_dev.h"

static struct biotape_rq_event mk(uint64_t issue, uint64_t lat, uint32_t pid)
{
	struct biotape_rq_event e = { 0 };

	e.insert_ns = issue - 100;
	e.issue_ns = issue;
	e.complete_ns = issue + lat;
	e.sector = issue / 8;
	e.bytes = 4096;
	e.dev_idx = 0;
	e.pid = pid;
	e.tid = pid + 1;
	e.cpu = 1;
	e.qd = 3;
	e.op = BIOTAPE_RQ_OP_WRITE;
	e.flags = BIOTAPE_RQF_SYNC | BIOTAPE_RQF_FUA;
	e.attr = BIOTAPE_ATTR_TASK | BIOTAPE_ATTR_INSERT;
	memcpy(e.comm, "fio", 4);
	return e;
}

static void test_convert(void **state)
{
	struct biotape_rq_event in = mk(1000000, 5000, 42);
	struct btape_event out;
	char comm[BIOTAPE_COMM_LEN + 1];

	(void)state;
	in.cgroup = 77;
	in.status = 10; /* BLK_STS_IOERR */
	assert_int_equal(rec_event_convert(&in, &out, comm, 1), 0);
	assert_int_equal(out.issue_ns, 1000000);
	assert_int_equal(out.complete_ns, 1005000);
	assert_int_equal(out.insert_ns, 999900);
	assert_int_equal(out.bytes, 4096);
	assert_int_equal(out.op, BTAPE_OP_WRITE);
	assert_int_equal(out.flags, BTAPE_FLAG_SYNC | BTAPE_FLAG_FUA);
	assert_int_equal(out.error, -EIO);
	assert_int_equal(out.pid, 42);
	assert_int_equal(out.tid, 43);
	assert_int_equal(out.cgroup, 77);
	assert_int_equal(out.qd, 3);
	assert_string_equal(out.comm, "fio");
	assert_true(out.present & BTAPE_HAS_COMPLETE);
	assert_true(out.present & BTAPE_HAS_INSERT);
	assert_true(out.present & BTAPE_HAS_PID);
	assert_true(out.present & BTAPE_HAS_COMM);

	/* Not attributed (a flush request from the flush machinery): no pid/comm present. */
	in.attr = 0;
	in.op = BIOTAPE_RQ_OP_FLUSH;
	in.bytes = 0;
	in.flags = BIOTAPE_RQF_PREFLUSH | BIOTAPE_RQF_REQUEUED;
	in.status = 0;
	assert_int_equal(rec_event_convert(&in, &out, comm, 1), 0);
	assert_int_equal(out.op, BTAPE_OP_FLUSH);
	assert_int_equal(out.flags, BTAPE_FLAG_PREFLUSH | BTAPE_FLAG_REQUEUED);
	assert_false(out.present & (BTAPE_HAS_PID | BTAPE_HAS_COMM | BTAPE_HAS_INSERT));
	assert_null(out.comm);
	assert_int_equal(out.error, 0);

	/* A 16-character comm is terminated. */
	in.attr = BIOTAPE_ATTR_TASK;
	memcpy(in.comm, "abcdefghijklmnop", 16);
	assert_int_equal(rec_event_convert(&in, &out, comm, 1), 0);
	assert_string_equal(out.comm, "abcdefghijklmnop");

	/* Out-of-range device index and op. */
	in.dev_idx = 1;
	assert_int_equal(rec_event_convert(&in, &out, comm, 1), -EINVAL);
	in.dev_idx = 0;
	in.op = 200;
	assert_int_equal(rec_event_convert(&in, &out, comm, 1), 0);
	assert_int_equal(out.op, BTAPE_OP_OTHER);

	assert_int_equal(rec_blk_status_errno(0), 0);
	assert_int_equal(rec_blk_status_errno(3), -ENOSPC);
	assert_int_equal(rec_blk_status_errno(250), -EIO);
}

/* A fake sink that records what it gets and can block or fail. */
struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool hold;               /* block in add() until released */
	uint64_t fail_at;        /* 1-based add() call that fails with -ENOSPC; 0: never */
	uint64_t adds;
	uint64_t issue[4096];
	uint64_t n;
	uint64_t wms[64];
	uint64_t nwm_events[64]; /* events seen when advance(wms[i]) was called */
	uint64_t nwm;
};

static int fake_add(void *ctx, const struct btape_event *ev)
{
	struct fake *f = ctx;

	pthread_mutex_lock(&f->lock);
	while (f->hold)
		pthread_cond_wait(&f->cond, &f->lock);
	f->adds++;
	if (f->fail_at && f->adds >= f->fail_at) {
		pthread_mutex_unlock(&f->lock);
		return -ENOSPC;
	}
	if (f->n < 4096)
		f->issue[f->n] = ev->issue_ns;
	f->n++;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static int fake_advance(void *ctx, uint64_t wm)
{
	struct fake *f = ctx;

	pthread_mutex_lock(&f->lock);
	if (f->nwm < 64) {
		f->wms[f->nwm] = wm;
		f->nwm_events[f->nwm] = f->n;
	}
	f->nwm++;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static uint64_t fake_bytes(void *ctx)
{
	return ((struct fake *)ctx)->n * 8;
}

static void fake_init(struct fake *f, struct rec_sink *s)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	s->add = fake_add;
	s->advance = fake_advance;
	s->bytes = fake_bytes;
	s->ctx = f;
}

static void test_batches_and_watermarks(void **state)
{
	struct rec_core_opts o = { .batch_events = 8, .queue_batches = 16, .ndevices = 1 };
	struct rec_core *c;
	struct rec_sink s;
	struct rec_stats st;
	struct fake *f = calloc(1, sizeof(*f));

	(void)state;
	fake_init(f, &s);
	assert_int_equal(rec_core__new(&c, &s, &o), 0);
	for (int i = 0; i < 20; i++) {
		struct biotape_rq_event e = mk(1000 + i, 10, 1);

		assert_int_equal(rec_core__push(c, &e), 0);
	}
	rec_core__mark(c, 1015);
	for (int i = 20; i < 23; i++) {
		struct biotape_rq_event e = mk(1000 + i, 10, 1);

		assert_int_equal(rec_core__push(c, &e), 0);
	}
	rec_core__mark(c, 1023);
	rec_core__mark(c, 1024); /* nothing new: still delivered after everything before it */
	assert_int_equal(rec_core__finish(c), 0);
	rec_core__stats(c, &st);
	assert_int_equal(st.pushed, 23);
	assert_int_equal(st.written, 23);
	assert_int_equal(st.dropped_writer, 0);
	assert_int_equal(st.count_by_op[BTAPE_OP_WRITE], 23);
	assert_int_equal(st.sink_bytes, 23 * 8);
	assert_int_equal(f->n, 23);
	for (int i = 0; i < 23; i++)
		assert_int_equal(f->issue[i], 1000 + i);
	/* Every watermark arrives after every event pushed before it. */
	assert_true(f->nwm >= 2);
	for (uint64_t i = 0; i < f->nwm && i < 64; i++) {
		if (f->wms[i] == 1015)
			assert_true(f->nwm_events[i] >= 20);
		if (f->wms[i] >= 1023)
			assert_int_equal(f->nwm_events[i], 23);
	}
	assert_int_equal(f->wms[f->nwm - 1], 1024);
	rec_core__free(c);
	free(f);
}

static void test_full_queue_drops_never_blocks(void **state)
{
	struct rec_core_opts o = { .batch_events = 4, .queue_batches = 2, .ndevices = 1 };
	struct rec_core *c;
	struct rec_sink s;
	struct rec_stats st;
	struct fake *f = calloc(1, sizeof(*f));
	int dropped = 0;

	(void)state;
	fake_init(f, &s);
	f->hold = true; /* a disk that does not move */
	assert_int_equal(rec_core__new(&c, &s, &o), 0);
	for (int i = 0; i < 20; i++) {
		struct biotape_rq_event e = mk(1000 + i, 10, 1);

		if (rec_core__push(c, &e) == -ENOBUFS)
			dropped++;
	}
	/* Two batches of four are in flight; the other twelve were dropped, without waiting. */
	assert_int_equal(dropped, 12);
	pthread_mutex_lock(&f->lock);
	f->hold = false;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	assert_int_equal(rec_core__finish(c), 0);
	rec_core__stats(c, &st);
	assert_int_equal(st.pushed, 20);
	assert_int_equal(st.written, 8);
	assert_int_equal(st.dropped_writer, 12);
	assert_int_equal(st.written + st.dropped_writer, st.pushed);
	rec_core__free(c);
	free(f);
}

static void test_sink_error(void **state)
{
	struct rec_core_opts o = { .batch_events = 4, .queue_batches = 8, .ndevices = 1 };
	struct rec_core *c;
	struct rec_sink s;
	struct rec_stats st;
	struct fake *f = calloc(1, sizeof(*f));

	(void)state;
	fake_init(f, &s);
	f->fail_at = 6; /* the disk fills up at the sixth event */
	assert_int_equal(rec_core__new(&c, &s, &o), 0);
	for (int i = 0; i < 16; i++) {
		struct biotape_rq_event e = mk(1000 + i, 10, 1);

		rec_core__push(c, &e);
	}
	assert_int_equal(rec_core__finish(c), -ENOSPC);
	rec_core__stats(c, &st);
	assert_int_equal(st.sink_err, -ENOSPC);
	assert_int_equal(st.written, 5);
	assert_int_equal(st.written + st.dropped_writer, 16);
	rec_core__free(c);
	free(f);
}

static void test_bad_device_index(void **state)
{
	struct rec_core_opts o = { .batch_events = 4, .queue_batches = 4, .ndevices = 2 };
	struct rec_core *c;
	struct rec_sink s;
	struct rec_stats st;
	struct fake *f = calloc(1, sizeof(*f));
	struct biotape_rq_event e = mk(1000, 10, 1);

	(void)state;
	fake_init(f, &s);
	assert_int_equal(rec_core__new(&c, &s, &o), 0);
	rec_core__push(c, &e);
	e.dev_idx = 5;
	rec_core__push(c, &e);
	assert_int_equal(rec_core__finish(c), 0);
	rec_core__stats(c, &st);
	assert_int_equal(st.written, 1);
	assert_int_equal(st.bad_records, 1);
	rec_core__free(c);
	free(f);
	rec_core__free(NULL);
}

/* ---- sysfs device lookup over a fake tree ---- */

static char root[256];

static void put(const char *rel, const char *content)
{
	char path[512], dir[512], *slash, cmd[600];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(content, fp);
	fclose(fp);
}

static void link_to(const char *target_rel, const char *link_rel)
{
	char t[512], l[512], cmd[2200];

	snprintf(t, sizeof(t), "%s/%s", root, target_rel);
	snprintf(l, sizeof(l), "%s/%s", root, link_rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && ln -s '%s' '%s'", l, t, l);
	assert_int_equal(system(cmd), 0);
}

static int sysfs_setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/biotape-sysfs.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	put("devices/virtual/block/loop3/dev", "7:3\n");
	put("devices/virtual/block/loop3/size", "131072\n");
	put("devices/virtual/block/loop3/queue/logical_block_size", "512\n");
	put("devices/virtual/block/loop3/queue/physical_block_size", "4096\n");
	put("devices/virtual/block/loop3/queue/rotational", "0\n");
	put("devices/pci/sda/dev", "8:0\n");
	put("devices/pci/sda/size", "2048\n");
	put("devices/pci/sda/queue/rotational", "1\n");
	put("devices/pci/sda/device/model", "QEMU HARDDISK   \n");
	put("devices/pci/sda/sda1/dev", "8:1\n");
	put("devices/pci/sda/sda1/partition", "1\n");
	/* sda: blk-mq, queues 0 and 2 (queue 1 has no CPU mapped: no directory) */
	put("devices/pci/sda/queue/nr_requests", "64\n");
	put("devices/pci/sda/mq/0/nr_tags", "32\n");
	put("devices/pci/sda/mq/2/nr_tags", "32\n");
	put("devices/pci/sda/mq/2/cpu_list", "1\n");
	/* loop3: not blk-mq here (no mq/), nr_requests 128 */
	put("devices/virtual/block/loop3/queue/nr_requests", "128\n");
	link_to("devices/virtual/block/loop3", "block/loop3");
	link_to("devices/pci/sda", "block/sda");
	link_to("devices/virtual/block/loop3", "class/block/loop3");
	link_to("devices/pci/sda", "class/block/sda");
	link_to("devices/pci/sda/sda1", "class/block/sda1");
	link_to("devices/virtual/block/loop3", "dev/block/7:3");
	link_to("devices/pci/sda", "dev/block/8:0");
	link_to("devices/pci/sda/sda1", "dev/block/8:1");
	return 0;
}

static int sysfs_teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_dev_resolve(void **state)
{
	uint32_t ma = 0, mi = 0;

	(void)state;
	assert_int_equal(rec_dev_resolve(root, "loop3", &ma, &mi), 0);
	assert_int_equal(ma, 7);
	assert_int_equal(mi, 3);
	assert_int_equal(rec_dev_resolve(root, "8:1", &ma, &mi), 0);
	assert_int_equal(ma, 8);
	assert_int_equal(mi, 0); /* the partition's disk */
	assert_int_equal(rec_dev_resolve(root, "sda1", &ma, &mi), 0);
	assert_int_equal(mi, 0);
	assert_int_equal(rec_dev_resolve(root, "nvme9n1", &ma, &mi), -ENOENT);
	assert_int_equal(rec_dev_resolve(root, "9:9", &ma, &mi), -ENOENT);
	assert_int_equal(rec_dev_resolve(root, "../x", &ma, &mi), -EINVAL);
	assert_int_equal(rec_dev_resolve(root, "", &ma, &mi), -EINVAL);
	assert_int_equal(rec_dev_resolve(root, "/etc/passwd", &ma, &mi), -ENOTBLK);
	assert_int_equal(rec_dev_resolve(root, "/nonexistent/dev", &ma, &mi), -ENOENT);
	assert_int_equal(rec_kdev(7, 3), (7u << 20) | 3);
}

static void test_dev_describe(void **state)
{
	struct btape_device d;

	(void)state;
	assert_int_equal(rec_dev_describe(root, 7, 3, &d), 0);
	assert_string_equal(d.name, "loop3");
	assert_int_equal(d.size_bytes, 131072ull * 512);
	assert_int_equal(d.logical_block, 512);
	assert_int_equal(d.physical_block, 4096);
	assert_int_equal(d.rotational, 0);
	assert_string_equal(d.model, "");
	assert_int_equal(rec_dev_describe(root, 8, 0, &d), 0);
	assert_string_equal(d.name, "sda");
	assert_string_equal(d.model, "QEMU HARDDISK");
	assert_int_equal(d.rotational, 1);
	assert_int_equal(d.logical_block, 0); /* absent attribute: unknown */
	assert_int_equal(rec_dev_describe(root, 1, 1, &d), -ENOENT);
}

static void test_dev_tag_space(void **state)
{
	uint32_t q = 0, depth = 0;

	(void)state;
	/* queues up to the highest mq/N, depth the larger of nr_requests and nr_tags */
	assert_int_equal(rec_dev_tag_space(root, 8, 0, &q, &depth), 0);
	assert_int_equal(q, 3);
	assert_int_equal(depth, 64);
	assert_int_equal(rec_dev_max_requests(root, 8, 0), 3 * 64 * 2);
	assert_int_equal(rec_dev_tag_space(root, 7, 3, &q, &depth), -ENOENT);
	assert_int_equal(rec_dev_max_requests(root, 7, 3), 128 * 2);
	assert_int_equal(rec_dev_max_requests(root, 1, 1), 256 * 2); /* nothing readable */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convert),
		cmocka_unit_test(test_batches_and_watermarks),
		cmocka_unit_test(test_full_queue_drops_never_blocks),
		cmocka_unit_test(test_sink_error),
		cmocka_unit_test(test_bad_device_index),
		cmocka_unit_test_setup_teardown(test_dev_resolve, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_dev_describe, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_dev_tag_space, sysfs_setup, sysfs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
