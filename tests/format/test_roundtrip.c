// SPDX-License-Identifier: GPL-2.0-only
/* libbiotape: write/read round trips of random and edge-case events, metadata, summary. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "btape.h"
#include "btape_internal.h"
#include "test_util.h"

static int cmp_issue(const void *a, const void *b)
{
	const struct btape_event *x = a, *y = b;

	return x->issue_ns < y->issue_ns ? -1 : x->issue_ns > y->issue_ns;
}

/* Writes evs (in the given order, with watermark = 0 and opts), reads back, compares with
 * the same events sorted by issue time (stable). */
static void roundtrip(struct btape_event *evs, size_t n, const struct btape_writer_opts *opts,
		      uint32_t ndev)
{
	char *dir = tu_tmpdir();
	const char *path = tu_path(dir, "t.btape", 0);
	struct btape_writer *w;
	struct btape_reader *r;
	struct btape_meta meta;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev;
	char msg[BTAPE_ERRMSG_LEN];
	uint64_t bytes[BTAPE_OP__COUNT] = {0}, count[BTAPE_OP__COUNT] = {0};
	struct btape_event *sorted = malloc(sizeof(*sorted) * (n ? n : 1));
	size_t i;

	assert_non_null(dir);
	tu_meta(&meta, ndev);
	assert_int_equal(btape_writer__open(&w, path, &meta, opts, NULL, 0), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(btape_writer__add(w, &evs[i]), 0);
	assert_int_equal(btape_writer__events(w), n);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);

	memcpy(sorted, evs, sizeof(*sorted) * n);
	/* stable sort: insertion-merge via qsort on (issue, index) would need keys; use mergesort
	 * equivalent by sorting indices */
	{
		size_t *idx = malloc(sizeof(*idx) * (n ? n : 1));

		for (i = 0; i < n; i++)
			idx[i] = i;
		for (i = 1; i < n;
		     i++) { /* insertion sort is fine for test sizes when mostly sorted */
			size_t k = idx[i], j = i;

			while (j && evs[idx[j - 1]].issue_ns > evs[k].issue_ns) {
				idx[j] = idx[j - 1];
				j--;
			}
			idx[j] = k;
		}
		for (i = 0; i < n; i++)
			sorted[i] = evs[idx[i]];
		free(idx);
	}
	(void)cmp_issue;

	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	{
		const struct btape_meta *m = btape_reader__meta(r);

		assert_string_equal(m->tool, meta.tool);
		assert_string_equal(m->hostname, meta.hostname);
		assert_string_equal(m->kernel, meta.kernel);
		assert_string_equal(m->source, meta.source);
		assert_string_equal(m->capture, meta.capture);
		assert_int_equal(m->clock_mono_ns, meta.clock_mono_ns);
		assert_int_equal(m->clock_real_ns, meta.clock_real_ns);
		assert_int_equal(m->ndevices, meta.ndevices);
		for (uint32_t d = 0; d < m->ndevices; d++)
			assert_memory_equal(&m->devices[d], &meta.devices[d],
					    sizeof(m->devices[d]));
		assert_int_equal(m->ntags, 1);
		assert_string_equal(m->tags[0].key, "workload");
		assert_string_equal(m->tags[0].value, "test");
	}
	for (i = 0; i < n; i++) {
		assert_int_equal(btape_reader__next(r, &ev), 1);
		if (tu_event_cmp(&ev, &sorted[i])) {
			fprintf(stderr, "event %zu differs (field %d)\n", i,
				tu_event_cmp(&ev, &sorted[i]));
			fail();
		}
		bytes[ev.op] += ev.bytes;
		count[ev.op]++;
	}
	assert_int_equal(btape_reader__next(r, &ev), 0);
	assert_int_equal(btape_reader__summary(r, &s), 0);
	assert_true(s.has_footer);
	assert_false(s.recovered);
	assert_int_equal(s.events, n);
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		assert_int_equal(s.count_by_op[op], count[op]);
		assert_int_equal(s.bytes_by_op[op], bytes[op]);
	}
	if (n) {
		assert_int_equal(s.first_issue_ns, sorted[0].issue_ns);
		assert_int_equal(s.last_issue_ns, sorted[n - 1].issue_ns);
	}
	/* sz: a caller built against an older, shorter struct gets only what it declared */
	{
		struct btape_summary old = {.sz = offsetof(struct btape_summary, last_issue_ns)};

		old.last_issue_ns = 0xdeadbeef;
		old.chunks = 7;
		assert_int_equal(btape_reader__summary(r, &old), 0);
		assert_int_equal(old.sz, offsetof(struct btape_summary, last_issue_ns));
		assert_int_equal(old.events, n);
		assert_int_equal(old.first_issue_ns, s.first_issue_ns);
		assert_int_equal(old.last_issue_ns, 0xdeadbeef);
		assert_int_equal(old.chunks, 7);
		old.sz = 0;
		assert_int_equal(btape_reader__summary(r, &old), -EINVAL);
	}
	assert_int_equal(btape_reader__verify(r), 0);
	btape_reader__close(r);

	/* batch interface yields the same sequence */
	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	{
		const struct btape_event *b;
		size_t got = 0;
		int k;

		while ((k = btape_reader__next_batch(r, &b)) > 0) {
			for (int j = 0; j < k; j++)
				assert_int_equal(tu_event_cmp(&b[j], &sorted[got + (size_t)j]), 0);
			got += (size_t)k;
		}
		assert_int_equal(k, 0);
		assert_int_equal(got, n);
	}
	btape_reader__close(r);
	btape_meta_free(&meta);
	free(sorted);
	tu_cleanup_dir(dir);
}

static void test_random_all_presence(void **state)
{
	uint64_t seed = 0x1234567;
	size_t n = 20000;
	struct btape_event *evs = malloc(sizeof(*evs) * n);
	struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = 777};
	uint64_t t = 1000000;

	for (size_t i = 0; i < n; i++) {
		t += tu_rand(&seed) % 50000;
		tu_random_event(&seed, &evs[i], t, false);
		/* cover every presence combination deterministically too */
		if (i < 1024) {
			uint32_t p = (uint32_t)i & BTAPE_HAS__ALL;
			struct btape_event tmp;

			tu_random_event(&seed, &tmp, t, true);
			tmp.present = p;
			evs[i] = tmp;
		}
	}
	roundtrip(evs, n, &o, 4);
	free(evs);
}

static void test_edge_values(void **state)
{
	struct btape_event evs[16];
	struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = 3};
	static char longname[5000];
	size_t n = 0;

	memset(longname, 'x', sizeof(longname) - 1);
	memset(evs, 0, sizeof(evs));
	/* zero-length flush */
	evs[n++] = (struct btape_event){.issue_ns = 0,
					.op = BTAPE_OP_FLUSH,
					.bytes = 0,
					.sector = 0,
					.present = BTAPE_HAS_FLAGS,
					.flags = BTAPE_FLAG_PREFLUSH | BTAPE_FLAG_FUA};
	/* the extent limits: the largest size ending at the last byte, the last sector */
	evs[n++] = (struct btape_event){.issue_ns = 1,
					.op = BTAPE_OP_WRITE,
					.sector = (BTAPE_END_MAX - BTAPE_BYTES_MAX) >> 9,
					.bytes = BTAPE_BYTES_MAX};
	evs[n++] = (struct btape_event){.issue_ns = 2,
					.op = BTAPE_OP_DISCARD,
					.sector = BTAPE_END_MAX >> 9,
					.bytes = BTAPE_END_MAX & 511};
	/* completion before issue (broken invariant) still round-trips; huge latency */
	evs[n++] = (struct btape_event){.issue_ns = 10,
					.complete_ns = 5,
					.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT,
					.insert_ns = UINT64_MAX};
	evs[n++] = (struct btape_event){.issue_ns = 11,
					.complete_ns = UINT64_MAX,
					.present = BTAPE_HAS_COMPLETE,
					.dev = UINT32_MAX};
	/* long process name, extreme ints */
	evs[n++] = (struct btape_event){.issue_ns = 12,
					.present = BTAPE_HAS__ALL,
					.comm = longname,
					.pid = UINT32_MAX,
					.tid = 0,
					.cgroup = UINT64_MAX,
					.cpu = UINT32_MAX,
					.qd = UINT32_MAX,
					.error = INT32_MIN,
					.flags = UINT32_MAX};
	evs[n++] = (struct btape_event){.issue_ns = 12,
					.present = BTAPE_HAS_ERROR | BTAPE_HAS_COMM,
					.comm = "",
					.error = INT32_MAX,
					.op = BTAPE_OP_OTHER};
	evs[n++] = (struct btape_event){.issue_ns = UINT64_MAX, .op = BTAPE_OP_ZONE_RESET_ALL};
	roundtrip(evs, n, &o, 1);
	/* empty trace */
	roundtrip(evs, 0, NULL, 0);
}

static void test_many_devices(void **state)
{
	uint64_t seed = 99;
	size_t n = 5000;
	struct btape_event *evs = malloc(sizeof(*evs) * n);

	for (size_t i = 0; i < n; i++) {
		tu_random_event(&seed, &evs[i], 1000 + i * 10, true);
		evs[i].dev = (uint32_t)(tu_rand(&seed) % 1000);
		/* sequential per device, so the predicted-sector coding is used */
		evs[i].sector = evs[i].dev * 1000000ull + i * 8;
		evs[i].bytes = 4096;
	}
	roundtrip(evs, n, NULL, 300);
	free(evs);
}

static void test_sequential_pattern(void **state)
{
	size_t n = 100000;
	struct btape_event *evs = malloc(sizeof(*evs) * n);
	uint64_t sector = 2048;

	for (size_t i = 0; i < n; i++) {
		memset(&evs[i], 0, sizeof(evs[i]));
		evs[i].issue_ns = 1000000 + i * 100000;
		evs[i].complete_ns = evs[i].issue_ns + 50000 + i % 7;
		evs[i].present = BTAPE_HAS_COMPLETE | BTAPE_HAS_PID | BTAPE_HAS_COMM;
		evs[i].pid = 42;
		evs[i].comm = "dd";
		evs[i].op = BTAPE_OP_WRITE;
		evs[i].sector = sector;
		evs[i].bytes = 131072;
		sector += 256;
	}
	roundtrip(evs, n, NULL, 1);
	free(evs);
}

/* Fields constant within a chunk but changing between chunks (decoder fast paths). */
static void test_constant_runs(void **state)
{
	size_t n = 3000;
	struct btape_event *evs = malloc(sizeof(*evs) * n);
	struct btape_writer_opts o = {.sz = sizeof(o), .chunk_events = 300};
	uint64_t seed = 5;

	for (size_t i = 0; i < n; i++) {
		size_t chunk = i / 300;

		tu_random_event(&seed, &evs[i], 1000 + i, true);
		evs[i].present = (chunk % 3 == 1) ? BTAPE_HAS_COMPLETE : BTAPE_HAS__ALL;
		evs[i].dev = (uint32_t)(chunk / 2);
		evs[i].op = (uint8_t)(chunk % 4 == 3 ? BTAPE_OP_WRITE : BTAPE_OP_READ);
		evs[i].bytes = chunk % 5 == 4 ? 8192 : 4096;
		evs[i].flags = (uint32_t)(chunk % 2);
		evs[i].pid = evs[i].tid = (uint32_t)(chunk < 5 ? 42 : 43);
		evs[i].cgroup = 7;
		evs[i].cpu = (uint32_t)(chunk % 2);
		evs[i].qd = 1;
		evs[i].comm = chunk % 2 ? "a" : "b";
		evs[i].complete_ns = evs[i].issue_ns + 100;
		evs[i].insert_ns = evs[i].issue_ns - 5;
		evs[i].error = 0;
		/* a last short chunk with fewer events than a slice */
	}
	roundtrip(evs, n - 7, &o, 8);
	free(evs);
}

/* The writer refuses an extent past the limits (and goes on); at the limits it accepts. */
static void test_extent_limits(void **state)
{
	static const struct {
		uint64_t sector, bytes;
		bool ok;
	} cases[] = {
		{0, BTAPE_BYTES_MAX, true},
		{0, BTAPE_BYTES_MAX + 1, false},
		{0, UINT64_MAX, false},
		{BTAPE_END_MAX >> 9, BTAPE_END_MAX & 511, true},
		{BTAPE_END_MAX >> 9, (BTAPE_END_MAX & 511) + 1, false}, /* ends at 2^63 */
		{(BTAPE_END_MAX >> 9) + 1, 0, false},
		{UINT64_MAX >> 9, 512, false}, /* sector * 512 + bytes wraps to 0 */
		{UINT64_MAX, 4096, false},
	};
	char *dir = tu_tmpdir();
	struct btape_writer *w;
	struct btape_meta meta;

	(void)state;
	tu_meta(&meta, 1);
	assert_int_equal(btape_writer__open(&w, tu_path(dir, "t.btape", 0), &meta, NULL, NULL, 0),
			 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct btape_event ev = {.issue_ns = i, .op = BTAPE_OP_READ};

		ev.sector = cases[i].sector;
		ev.bytes = cases[i].bytes;
		assert_int_equal(btape_extent_ok(ev.sector, ev.bytes), cases[i].ok);
		assert_int_equal(btape_writer__add(w, &ev), cases[i].ok ? 0 : -EINVAL);
		if (!cases[i].ok)
			assert_non_null(strstr(btape_writer__errmsg(w), "past the extent limits"));
	}
	assert_int_equal(btape_writer__events(w), 2);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);
	tu_cleanup_dir(dir);
}

static void test_op_names(void **state)
{
	char buf[32];

	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		assert_string_not_equal(btape_op_name(op), "?");
		assert_int_equal(btape_op_parse(btape_op_name(op)), (int)op);
	}
	assert_string_equal(btape_op_name(BTAPE_OP__COUNT), "?");
	assert_string_equal(btape_op_name(0), "read");
	assert_string_equal(btape_op_name(BTAPE_OP_WRITE_ZEROES), "write_zeroes");
	assert_int_equal(btape_op_parse("nope"), -EINVAL);
	assert_string_equal(btape_flags_str(BTAPE_FLAG_SYNC | BTAPE_FLAG_FUA, buf, sizeof(buf)),
			    "SF");
	assert_string_equal(btape_flags_str(0, buf, sizeof(buf)), "");
	assert_string_equal(btape_flags_str(BTAPE_FLAG_META | BTAPE_FLAG_READAHEAD, buf, 2), "M");
}

static void test_crc32c(void **state)
{
	/* the check value in docs/BTAPE-FORMAT.md; odd lengths and offsets use both code paths */
	assert_int_equal(btape_crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(btape_crc32c(btape_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
	assert_int_equal(btape_crc32c(0, "", 0), 0);
}

static void test_meta_helpers(void **state)
{
	struct btape_meta a, b;

	tu_meta(&a, 3);
	assert_int_equal(a.ndevices, 3);
	assert_int_equal(btape_meta_copy(&b, &a), 0);
	assert_ptr_not_equal(a.devices, b.devices);
	assert_memory_equal(a.devices, b.devices, sizeof(*a.devices) * 3);
	assert_int_equal(btape_meta_add_tag(&b, "k", "v"), 0);
	assert_int_equal(b.ntags, 2);
	assert_int_equal(a.ntags, 1);
	btape_meta_free(&a);
	btape_meta_free(&b);
	btape_meta_free(NULL);
	assert_int_equal(a.ndevices, 0);
}

/* The cluster clock and a device's host survive a round trip; without them the bytes are as
 * before (no "cluster" key, no "host" key: single-host files are unchanged). */
static void test_cluster_meta(void **state)
{
	char *dir = tu_tmpdir();
	const char *plain = tu_path(dir, "plain.btape", 0);
	const char *clus = tu_path(dir, "cluster.btape", 1);
	struct btape_writer *w;
	struct btape_reader *r;
	struct btape_meta meta;
	size_t n1, n2;

	(void)state;
	tu_meta(&meta, 2);
	assert_int_equal(btape_writer__open(&w, plain, &meta, NULL, NULL, 0), 0);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	snprintf(meta.cluster.id, sizeof(meta.cluster.id), "c0ffee-42");
	snprintf(meta.cluster.reference, sizeof(meta.cluster.reference), "node0");
	snprintf(meta.cluster.method, sizeof(meta.cluster.method), "mpi-rtt-min");
	meta.cluster.rank = 2;
	meta.cluster.ranks = 3;
	meta.cluster.nsync = 2;
	meta.cluster.sync[0] = (struct btape_clock_sync){1000, -7000000, 12345};
	meta.cluster.sync[1] = (struct btape_clock_sync){UINT64_MAX, INT64_MIN, 1};
	snprintf(meta.devices[1].host, sizeof(meta.devices[1].host), "node2");
	assert_int_equal(btape_writer__open(&w, clus, &meta, NULL, NULL, 0), 0);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);

	assert_int_equal(btape_reader__open(&r, clus, NULL, 0), 0);
	const struct btape_meta *m = btape_reader__meta(r);

	assert_memory_equal(&m->cluster, &meta.cluster, sizeof(meta.cluster));
	assert_string_equal(m->devices[0].host, "");
	assert_string_equal(m->devices[1].host, "node2");
	btape_reader__close(r);
	assert_int_equal(btape_reader__open(&r, plain, NULL, 0), 0);
	assert_string_equal(btape_reader__meta(r)->cluster.id, "");
	assert_int_equal(btape_reader__meta(r)->cluster.nsync, 0);
	btape_reader__close(r);
	free(tu_read_file(plain, &n1));
	free(tu_read_file(clus, &n2));
	assert_true(n2 > n1);
	/* the stop clock, known only at the end, comes back from the footer as the last sync */
	const char *stop = tu_path(dir, "stop.btape", 2);
	struct btape_summary sum = {.sz = sizeof(sum)};

	meta.cluster.nsync = 1;
	assert_int_equal(btape_writer__open(&w, stop, &meta, NULL, NULL, 0), 0);
	btape_writer__set_clock_stop(w, &(struct btape_clock_sync){5000, -6990000, 77});
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	assert_int_equal(btape_reader__open(&r, stop, NULL, 0), 0);
	m = btape_reader__meta(r);
	assert_int_equal(m->cluster.nsync, 2);
	assert_int_equal(m->cluster.sync[1].local_ns, 5000);
	assert_int_equal(m->cluster.sync[1].offset_ns, -6990000);
	assert_int_equal(m->cluster.sync[1].uncertainty_ns, 77);
	assert_int_equal(btape_reader__summary(r, &sum), 0);
	assert_true(sum.has_clock_stop);
	btape_reader__close(r);
	btape_meta_free(&meta);
	tu_cleanup_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_names),
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_meta_helpers),
		cmocka_unit_test(test_random_all_presence),
		cmocka_unit_test(test_edge_values),
		cmocka_unit_test(test_extent_limits),
		cmocka_unit_test(test_many_devices),
		cmocka_unit_test(test_sequential_pattern),
		cmocka_unit_test(test_constant_runs),
		cmocka_unit_test(test_cluster_meta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
