// SPDX-License-Identifier: GPL-2.0-only
/*
 * The replay's device setup (replayer/devmap.h): --map SRC=DST forms and their resolution,
 * --target, unmapped and twice-mapped devices, the bytes a target needs, --create auto, the
 * --fit error check. File targets in a temporary directory under /dev/shm: no root needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btape.h"
#include "devmap.h"
#include "scheduler.h"

#define MIB (1024ull * 1024)

static char dir[] = "/dev/shm/biotape-test-devmap.XXXXXX";
static char why[RP_DEVMAP_WHY_MAX];

static const char *in_dir(const char *name)
{
	static char paths[16][256];
	static unsigned int next;
	char *p = paths[next++ % 16];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

static void make_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static uint64_t file_size(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) < 0)
		return UINT64_MAX;
	return (uint64_t)sb.st_size;
}

static struct btape_event ev_at(uint64_t issue_ns, uint8_t op, uint32_t dev, uint64_t sector,
				uint64_t bytes)
{
	struct btape_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.issue_ns = issue_ns;
	ev.op = op;
	ev.dev = dev;
	ev.sector = sector;
	ev.bytes = bytes;
	return ev;
}

/* A trace of n events over devices named names[i] of sizes[i] bytes (0: unknown). */
static void write_trace(const char *path, unsigned int ndev, const char *const *names,
			const uint64_t *sizes, const struct btape_event *evs, size_t n)
{
	struct btape_meta meta = {.tool = "test"};
	struct btape_writer_opts wo = {.sz = sizeof(wo)};
	struct btape_writer *w = NULL;

	for (unsigned int d = 0; d < ndev; d++) {
		struct btape_device dv = {.size_bytes = sizes[d], .logical_block = 512};

		snprintf(dv.name, sizeof(dv.name), "%s", names[d]);
		assert_true(btape_meta_add_device(&meta, &dv) >= 0);
	}
	assert_int_equal(btape_writer__open(&w, path, &meta, &wo, NULL, 0), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(btape_writer__add(w, &evs[i]), 0);
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);
}

/* The metadata of a trace (devices only), as the replay reads it. */
static void meta_of(struct btape_meta *m, unsigned int ndev, const char *const *names,
		    const uint64_t *sizes)
{
	memset(m, 0, sizeof(*m));
	for (unsigned int d = 0; d < ndev; d++) {
		struct btape_device dv = {.size_bytes = sizes[d], .logical_block = 512};

		snprintf(dv.name, sizeof(dv.name), "%s", names[d]);
		assert_true(btape_meta_add_device(m, &dv) >= 0);
	}
}

/* A scheduler configuration over the setup, as the replay builds it for the --fit check. */
static struct rp_sched_cfg cfg_of(const struct rp_devices *s, enum rp_fit fit, unsigned int scale,
				  enum rp_layout layout)
{
	return (struct rp_sched_cfg){.timing = RP_TIMING_AFAP,
				     .speed = 1,
				     .iodepth = 1,
				     .scale = scale,
				     .layout = layout,
				     .fit = fit,
				     .loops = 1,
				     .ndev = s->ndev,
				     .devs = s->devs,
				     .targets = s->targets,
				     .ntargets = s->ntargets};
}

static const char *const names3[] = {"loop0", "loop1", "sdb"};
static const uint64_t sizes3[] = {8 * MIB, 4 * MIB, 2 * MIB};

/* --map SRC=DST: split at the first '=', both sides needed, at most RP_MAX_MAPS. */
static void test_map_arg_forms(void **state)
{
	struct rp_map_arg maps[RP_MAX_MAPS];
	unsigned int n = 0;
	char a[] = "0=/dev/shm/t", b[] = "loop3=/dev/shm/x=y", bad[4][8] = {"=x", "x=", "x", ""};
	char more[RP_MAX_MAPS][8];

	(void)state;
	assert_int_equal(rp_map_arg_add(maps, &n, a, why, sizeof(why)), 0);
	assert_int_equal(rp_map_arg_add(maps, &n, b, why, sizeof(why)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(maps[0].src, "0");
	assert_string_equal(maps[0].dst, "/dev/shm/t");
	assert_string_equal(maps[1].src, "loop3");
	assert_string_equal(maps[1].dst, "/dev/shm/x=y");
	for (int i = 0; i < 4; i++) {
		char want[64];

		snprintf(want, sizeof(want), "--map '%s': expected SRC=DST", bad[i]);
		assert_int_equal(rp_map_arg_add(maps, &n, bad[i], why, sizeof(why)), -EINVAL);
		assert_string_equal(why, want);
		assert_int_equal(n, 2);
	}
	for (unsigned int i = 2; i < RP_MAX_MAPS; i++) {
		snprintf(more[i], sizeof(more[i]), "%u=t", i);
		assert_int_equal(rp_map_arg_add(maps, &n, more[i], why, sizeof(why)), 0);
	}
	assert_int_equal(n, RP_MAX_MAPS);
	snprintf(more[0], sizeof(more[0]), "9=t");
	assert_int_equal(rp_map_arg_add(maps, &n, more[0], why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "--map: at most 64 mappings");
	assert_int_equal(n, RP_MAX_MAPS);
}

/* --map SRC=A alone is refused (-EINVAL), saying want. */
static void map_refused(const struct btape_meta *m, struct rp_devices_opts *o, const char *src,
			const char *want)
{
	struct rp_map_arg one = {src, "A"};
	const struct rp_map_arg *maps = o->maps;
	unsigned int nmaps = o->nmaps;
	struct rp_devices s;

	o->maps = &one;
	o->nmaps = 1;
	assert_int_equal(rp_devices__map(&s, m, o, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, want);
	rp_devices__free(&s);
	o->maps = maps;
	o->nmaps = nmaps;
}

/* SRC by index (decimal, 0x hex) or name; targets numbered by first recorded device. */
static void test_map_resolution(void **state)
{
	struct btape_meta m;
	struct rp_devices s;
	struct rp_map_arg maps[] = {{"2", "B"}, {"loop0", "A"}, {"0x1", "A"}};
	struct rp_devices_opts o = {.maps = maps, .nmaps = 3, .max_scale = 1};

	(void)state;
	meta_of(&m, 3, names3, sizes3);
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(s.ndev, 3);
	assert_int_equal(s.ntargets, 2);
	assert_string_equal(s.tpaths[0], "A"); /* device 0's, though --map named B first */
	assert_string_equal(s.tpaths[1], "B");
	assert_int_equal(s.devs[0].target, 0);
	assert_int_equal(s.devs[1].target, 0);
	assert_int_equal(s.devs[2].target, 1);
	for (unsigned int d = 0; d < 3; d++) {
		assert_int_equal(s.devs[d].src_size, sizes3[d]);
		assert_int_equal(s.devs[d].max_end, 0);
	}
	for (unsigned int t = 0; t < RP_MAX_MAPS; t++)
		assert_int_equal(s.targets[t].fd, -1); /* nothing opened: __free closes nothing */
	rp_devices__free(&s);
	rp_devices__free(&s); /* idempotent */

	/* an index past the table, a name no device has; a sign or an overflow is a name */
	const struct {
		const char *src, *why;
	} bad[] = {
		{"3", "--map 3=...: the trace has devices 0 to 2"},
		{"0x10", "--map 0x10=...: the trace has devices 0 to 2"},
		{"nosuch", "--map nosuch=...: no recorded device is called 'nosuch'"},
		{"-1", "--map -1=...: no recorded device is called '-1'"},
		{"+0", "--map +0=...: no recorded device is called '+0'"},
		{"99999999999999999999999", "--map 99999999999999999999999=...: no recorded device "
					    "is called '99999999999999999999999'"},
		{"Loop0", "--map Loop0=...: no recorded device is called 'Loop0'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		map_refused(&m, &o, bad[i].src, bad[i].why);
	btape_meta_free(&m);
}

/* An imported trace may name its devices by number: a bare number that is one device's index
 * and another's name is refused (it sent device "1"'s writes to the target meant for device
 * "0"); #N is the index whatever the names; a number past the table is a name. */
static void test_map_numeric_names(void **state)
{
	static const char *const names[] = {"1", "0", "7"};
	struct btape_meta m;
	struct rp_devices s;
	struct rp_map_arg maps[] = {{"#1", "B"}, {"#0", "A"}, {"7", "C"}};
	struct rp_devices_opts o = {.maps = maps, .nmaps = 3, .max_scale = 1};

	(void)state;
	meta_of(&m, 3, names, sizes3);
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_string_equal(s.tpaths[s.devs[0].target], "A");
	assert_string_equal(s.tpaths[s.devs[1].target], "B");
	assert_string_equal(s.tpaths[s.devs[2].target], "C");
	rp_devices__free(&s);
	const struct {
		const char *src, *why;
	} bad[] = {
		{"1", "--map 1=...: ambiguous: the index of one device and the name of device #0: "
		      "give the index, #1 or #0"},
		{"0", "--map 0=...: ambiguous: the index of one device and the name of device #1: "
		      "give the index, #0 or #1"},
		{"#3", "--map #3=...: the trace has devices 0 to 2"},
		{"#x", "--map #x=...: #N takes a device index"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		map_refused(&m, &o, bad[i].src, bad[i].why);
	/* a bare number that is its own device's name too is that device */
	static const char *const same[] = {"0", "x", "y"};
	btape_meta_free(&m);
	meta_of(&m, 3, same, sizes3);
	struct rp_map_arg zero = {"0", "A"};
	o.maps = &zero;
	o.nmaps = 1;
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(s.devs[0].target, 0);
	rp_devices__free(&s);
	btape_meta_free(&m);
}

/* --target: the one device only; a device mapped twice; several devices on one target. */
static void test_target_and_twice_mapped(void **state)
{
	struct btape_meta m1, m3;
	struct rp_devices s;
	struct rp_devices_opts o = {.target = "T", .max_scale = 1};

	(void)state;
	meta_of(&m1, 1, names3, sizes3);
	meta_of(&m3, 3, names3, sizes3);
	assert_int_equal(rp_devices__map(&s, &m1, &o, why, sizeof(why)), 0);
	assert_int_equal(s.ntargets, 1);
	assert_string_equal(s.tpaths[0], "T");
	assert_int_equal(s.devs[0].target, 0);
	rp_devices__free(&s);
	assert_int_equal(rp_devices__map(&s, &m3, &o, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "the trace holds 3 devices: map each with --map SRC=DST");
	rp_devices__free(&s);
	/* a trace without a device table: one device, index 0, no names */
	assert_int_equal(rp_devices__map(&s, NULL, &o, why, sizeof(why)), 0);
	assert_int_equal(s.ndev, 1);
	assert_int_equal(s.devs[0].target, 0);
	assert_int_equal(s.devs[0].src_size, 0);
	rp_devices__free(&s);
	struct rp_map_arg nomap[] = {{"loop0", "T"}};

	o = (struct rp_devices_opts){.maps = nomap, .nmaps = 1, .max_scale = 1};
	assert_int_equal(rp_devices__map(&s, NULL, &o, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "--map loop0=...: no recorded device is called 'loop0'");
	rp_devices__free(&s);

	/* the same device twice, by index and by name */
	struct rp_map_arg twice[] = {{"1", "A"}, {"loop1", "B"}};

	o = (struct rp_devices_opts){.maps = twice, .nmaps = 2, .max_scale = 1};
	assert_int_equal(rp_devices__map(&s, &m3, &o, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "--map: device loop1 is mapped twice");
	rp_devices__free(&s);
	twice[1].src = "1";
	twice[1].dst = "A";
	assert_int_equal(rp_devices__map(&s, &m3, &o, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "--map: device 1 is mapped twice");
	rp_devices__free(&s);

	/* every device onto one target: one target, opened once */
	struct rp_map_arg all[] = {{"sdb", "A"}, {"0", "A"}, {"1", "A"}};

	o = (struct rp_devices_opts){.maps = all, .nmaps = 3, .max_scale = 1};
	assert_int_equal(rp_devices__map(&s, &m3, &o, why, sizeof(why)), 0);
	assert_int_equal(s.ntargets, 1);
	for (unsigned int d = 0; d < 3; d++)
		assert_int_equal(s.devs[d].target, 0);
	rp_devices__free(&s);
	btape_meta_free(&m1);
	btape_meta_free(&m3);
}

/* A device no --map names: no target, its size still known; the rest replays. */
static void test_unmapped_devices(void **state)
{
	struct btape_meta m;
	struct rp_devices s;
	struct rp_map_arg maps[] = {{"loop1", "B"}};
	struct rp_devices_opts o = {.maps = maps, .nmaps = 1, .max_scale = 1};

	(void)state;
	meta_of(&m, 3, names3, sizes3);
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(s.ntargets, 1);
	assert_int_equal(s.devs[0].target, RP_NO_TARGET);
	assert_int_equal(s.devs[1].target, 0);
	assert_int_equal(s.devs[2].target, RP_NO_TARGET);
	assert_int_equal(s.devs[0].src_size, 8 * MIB);
	assert_int_equal(rp_devices__need_bytes(&s, 0), 4 * MIB); /* not device 0's 8 MiB */

	char b[64];

	assert_string_equal(rp_dev_label(&m, 2, b, sizeof(b)), "2 (sdb)");
	assert_string_equal(rp_dev_label(&m, 5, b, sizeof(b)), "5");
	assert_string_equal(rp_dev_label(NULL, 0, b, sizeof(b)), "0");
	rp_devices__free(&s);
	btape_meta_free(&m);
}

/* Sizes: the recorded size or the largest extent end (read only when a size is unknown). */
static void test_scan_and_need_bytes(void **state)
{
	const char *trace = in_dir("scan.btape");
	const char *const names[] = {"a", "b", "c"};
	const uint64_t sizes[] = {0, 0, 1 * MIB};
	const struct btape_event evs[] = {
		ev_at(1000, BTAPE_OP_READ, 0, 100, 4096),
		ev_at(2000, BTAPE_OP_READ, 1, 2048, 512),	    /* dev 1: ends at 1 MiB + 512 */
		ev_at(3000, BTAPE_OP_WRITE, 0, 6144, 8192),	    /* dev 0: 3 MiB + 8 KiB */
		ev_at(4000, BTAPE_OP_READ, 0, 16, 4096),	    /* earlier end: no change */
		ev_at(5000, BTAPE_OP_READ, 2, 4 * MIB / 512, 4096), /* past c's recorded size */
		ev_at(6000, BTAPE_OP_FLUSH, 1, 0, 0),
	};
	struct btape_meta m;
	struct rp_devices s;
	struct rp_map_arg maps[] = {{"0", "A"}, {"1", "B"}, {"2", "B"}};
	struct rp_devices_opts o = {.trace = trace, .maps = maps, .nmaps = 3, .max_scale = 3};

	(void)state;
	write_trace(trace, 3, names, sizes, evs, sizeof(evs) / sizeof(evs[0]));
	meta_of(&m, 3, names, sizes);
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__need_bytes(&s, 0), 0); /* unknown before the scan */
	assert_int_equal(rp_devices__scan(&s, why, sizeof(why)), 0);
	assert_int_equal(s.devs[0].max_end, 3 * MIB + 8192);
	assert_int_equal(s.devs[1].max_end, 1 * MIB + 512);
	assert_int_equal(s.devs[2].max_end, 4 * MIB + 4096);
	assert_int_equal(rp_devmap_span(&s.devs[2]), 4 * MIB + 4096); /* max_end > src_size */
	/* shard: max_scale copies of the largest device on the target */
	assert_int_equal(rp_devices__need_bytes(&s, 0), 3 * (3 * MIB + 8192));
	assert_int_equal(rp_devices__need_bytes(&s, 1), 3 * (4 * MIB + 4096));
	o.layout = RP_LAYOUT_OVERLAY;
	assert_int_equal(rp_devices__need_bytes(&s, 0), 3 * MIB + 8192);
	assert_int_equal(rp_devices__need_bytes(&s, 1), 4 * MIB + 4096);
	rp_devices__free(&s);

	/* every mapped device's size known: the trace is not read (here: it does not exist) */
	struct rp_map_arg known[] = {{"c", "A"}};

	o = (struct rp_devices_opts){
		.trace = in_dir("none.btape"), .maps = known, .nmaps = 1, .max_scale = 2};
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__scan(&s, why, sizeof(why)), 0);
	assert_int_equal(s.devs[2].max_end, 0);
	assert_int_equal(rp_devices__need_bytes(&s, 0), 2 * MIB);
	rp_devices__free(&s);
	/* an unknown size needs the trace: its reader's error comes back */
	known[0].src = "a";
	why[0] = '\0';
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_true(rp_devices__scan(&s, why, sizeof(why)) < 0);
	assert_true(why[0] != '\0');
	rp_devices__free(&s);
	btape_meta_free(&m);
	unlink(trace);
}

/* Opening: --create auto sizes, refusals named "target PATH: ...". */
static void test_open_and_create(void **state)
{
	const char *trace = in_dir("open.btape");
	const char *const names[] = {"a", "b"};
	const uint64_t sizes[] = {3 * MIB + 4096, 1 * MIB};
	const struct btape_event evs[] = {ev_at(1000, BTAPE_OP_READ, 0, 0, 4096)};
	const char *ta = in_dir("auto-a"), *tb = in_dir("auto-b");
	struct btape_meta m;
	struct rp_devices s;
	struct rp_map_arg maps[] = {{"0", ta}, {"1", tb}};
	struct rp_devices_opts o = {.trace = trace,
				    .maps = maps,
				    .nmaps = 2,
				    .max_scale = 2,
				    .buffered = true,
				    .create_auto = true};
	char want[600];

	(void)state;
	write_trace(trace, 2, names, sizes, evs, 1);
	meta_of(&m, 2, names, sizes);
	/* --create auto: the needed bytes (2 shards) rounded up to 1 MiB */
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), 0);
	assert_int_equal(file_size(ta), 7 * MIB); /* 2 x (3 MiB + 4 KiB) */
	assert_int_equal(file_size(tb), 2 * MIB);
	assert_true(s.targets[0].created && s.targets[1].created);
	assert_int_equal(s.targets[0].size, 7 * MIB);
	assert_true(s.targets[0].fd >= 0);
	rp_devices__free(&s);
	/* an existing target is used as it is */
	maps[0].dst = tb;
	maps[1].dst = ta;
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), 0);
	assert_int_equal(s.targets[0].size, 2 * MIB);
	assert_false(s.targets[0].created);
	rp_devices__free(&s);

	/* nothing says how big: refused, nothing made */
	const char *tz = in_dir("auto-zero");
	struct rp_map_arg one[] = {{"0", tz}};

	o.maps = one;
	o.nmaps = 1;
	const uint64_t unknown[] = {0, 0};
	struct btape_meta mu;

	meta_of(&mu, 2, names, unknown);
	assert_int_equal(rp_devices__map(&s, &mu, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want),
		 "target %s: does not exist, and the trace does not say how big to make it (give "
		 "--create SIZE)",
		 tz);
	assert_string_equal(why, want);
	assert_int_equal(file_size(tz), UINT64_MAX);
	rp_devices__free(&s);
	btape_meta_free(&mu);

	/* more than a file can hold (2 shards of 2^62 + 4 KiB; 4 of 2^63 + 4 KiB wraps 2^64):
	 * refused, named, nothing made */
	const uint64_t huge[] = {(1ull << 62) + 4096, (1ull << 63) + 4096};
	struct btape_meta mh;

	meta_of(&mh, 2, names, huge);
	assert_int_equal(rp_devices__map(&s, &mh, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__need_bytes(&s, 0), (1ull << 63) + 8192);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), -EFBIG);
	snprintf(want, sizeof(want),
		 "target %s: does not exist, and the trace needs 9223372036854784000 bytes of it, "
		 "more than a file can hold (give --create SIZE and --fit wrap|scale)",
		 tz);
	assert_string_equal(why, want);
	assert_int_equal(file_size(tz), UINT64_MAX);
	rp_devices__free(&s);
	one[0].src = "1";
	o.max_scale = 4;
	assert_int_equal(rp_devices__map(&s, &mh, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__need_bytes(&s, 0), UINT64_MAX);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), -EFBIG);
	assert_non_null(strstr(why, "needs over 2^64 bytes"));
	assert_int_equal(file_size(tz), UINT64_MAX);
	rp_devices__free(&s);
	btape_meta_free(&mh);
	one[0].src = "0";
	o.max_scale = 2;

	/* --create SIZE; and without --create a missing target is an error */
	o.create_auto = false;
	o.create_size = 3 * MIB;
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), 0);
	assert_int_equal(file_size(tz), 3 * MIB);
	rp_devices__free(&s);
	one[0].dst = in_dir("missing");
	o.create_size = 0;
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want),
		 "target %s: does not exist (a file target is made only with --create SIZE or "
		 "--create auto)",
		 one[0].dst);
	assert_string_equal(why, want);
	rp_devices__free(&s);

	/* never the trace, the result file or the HTML report (a read-only replay's --html
	 * replaced the target file); never an empty file or a directory */
	const char *refused[][2] = {
		{trace, "refusing: it is the trace, the result file or the HTML report"},
		{ta, "refusing: it is the trace, the result file or the HTML report"}, /* o.out */
		{tb, "refusing: it is the trace, the result file or the HTML report"}, /* o.html */
		{in_dir("empty"), "it is empty (size 0)"},
		{dir, "not a block device or a regular file"},
	};
	make_file(refused[3][0], 0);
	o.out = ta;
	o.html = tb;
	for (int i = 0; i < 5; i++) {
		one[0].dst = refused[i][0];
		assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
		assert_int_equal(rp_devices__open(&s, why, sizeof(why)), -EINVAL);
		snprintf(want, sizeof(want), "target %s: %s", refused[i][0], refused[i][1]);
		assert_string_equal(why, want);
		rp_devices__free(&s);
	}
	assert_int_equal(file_size(trace) > 0, 1);
	unlink(ta);
	unlink(tb);
	unlink(tz);
	unlink(refused[3][0]);
	unlink(trace);
	btape_meta_free(&m);
}

/* --fit error names the first I/O past its target's end (or its shard's), the others pass. */
static void test_fit_check(void **state)
{
	const char *trace = in_dir("fit.btape");
	const char *target = in_dir("fit-target");
	const char *const names[] = {"loop0", "other"};
	const uint64_t sizes[] = {8 * MIB, 8 * MIB};
	const struct btape_event evs[] = {
		ev_at(1000000, BTAPE_OP_READ, 0, 0, 4096),
		ev_at(1500000, BTAPE_OP_FLUSH, 0, 0, 0),
		ev_at(2000000, BTAPE_OP_READ, 1, 15000, 4096), /* unmapped device */
		ev_at(2500000, BTAPE_OP_WRITE, 0, 5000, 4096), /* past 2 MiB: a write */
		ev_at(3000000, BTAPE_OP_READ, 0, 3000, 4096),  /* 1.5 MiB: fits in 2 */
		ev_at(3500000, BTAPE_OP_READ, 0, 4096, 4096),  /* ends past 2 MiB */
		ev_at(4000000, BTAPE_OP_READ, 0, 9000, 4096),
	};
	struct btape_meta m;
	struct rp_devices s;
	struct rp_map_arg maps[] = {{"loop0", target}};
	struct rp_devices_opts o = {
		.trace = trace, .maps = maps, .nmaps = 1, .max_scale = 1, .buffered = true};
	struct rp_sched_cfg cfg;
	char want[600];

	(void)state;
	write_trace(trace, 2, names, sizes, evs, sizeof(evs) / sizeof(evs[0]));
	make_file(target, 2 * MIB);
	meta_of(&m, 2, names, sizes);
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__scan(&s, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), 0);
	/* writes skipped (no --write): the first read past the end, #5, 2.5 ms after #0 */
	cfg = cfg_of(&s, RP_FIT_ERROR, 1, RP_LAYOUT_SHARD);
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), -ERANGE);
	snprintf(want, sizeof(want),
		 "I/O #5 (at +0.002500 s, read on device 0 (loop0), sector 4096, 4096 bytes) ends "
		 "past 2097152 bytes, the end of %s: use --fit wrap|scale or a bigger target",
		 target);
	assert_string_equal(why, want);
	/* replayed as reads, the write is the first */
	cfg.writes_as_reads = true;
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), -ERANGE);
	assert_non_null(
		strstr(why, "I/O #3 (at +0.001500 s, write on device 0 (loop0), sector 5000"));
	/* wrap and scale fit everything */
	cfg = cfg_of(&s, RP_FIT_WRAP, 1, RP_LAYOUT_SHARD);
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), 0);
	cfg = cfg_of(&s, RP_FIT_SCALE, 1, RP_LAYOUT_SHARD);
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), 0);
	rp_devices__free(&s);

	/* an 8 MiB target: whole it fits; in 4 shards (2 MiB each) #5 does not */
	make_file(target, 8 * MIB);
	assert_int_equal(rp_devices__map(&s, &m, &o, why, sizeof(why)), 0);
	assert_int_equal(rp_devices__open(&s, why, sizeof(why)), 0);
	cfg = cfg_of(&s, RP_FIT_ERROR, 1, RP_LAYOUT_SHARD);
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), 0);
	cfg = cfg_of(&s, RP_FIT_ERROR, 4, RP_LAYOUT_OVERLAY);
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), 0);
	cfg = cfg_of(&s, RP_FIT_ERROR, 4, RP_LAYOUT_SHARD);
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), -ERANGE);
	snprintf(want, sizeof(want),
		 "I/O #5 (at +0.002500 s, read on device 0 (loop0), sector 4096, 4096 bytes) ends "
		 "past 2097152 bytes, the end of %s's region per copy: use --fit wrap|scale or a "
		 "bigger target",
		 target);
	assert_string_equal(why, want);
	/* when every device's span fits, the trace is not read (here: it is gone) */
	o.trace = in_dir("gone.btape");
	cfg = cfg_of(&s, RP_FIT_ERROR, 1, RP_LAYOUT_SHARD);
	assert_int_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), 0);
	cfg = cfg_of(&s, RP_FIT_ERROR, 2, RP_LAYOUT_SHARD); /* 8 MiB in 4 MiB shards: reads */
	assert_true(rp_devices__check_fit(&s, &cfg, why, sizeof(why)) < 0);
	assert_int_not_equal(rp_devices__check_fit(&s, &cfg, why, sizeof(why)), -ERANGE);
	rp_devices__free(&s);
	btape_meta_free(&m);
	unlink(target);
	unlink(trace);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_arg_forms),
		cmocka_unit_test(test_map_resolution),
		cmocka_unit_test(test_map_numeric_names),
		cmocka_unit_test(test_target_and_twice_mapped),
		cmocka_unit_test(test_unmapped_devices),
		cmocka_unit_test(test_scan_and_need_bytes),
		cmocka_unit_test(test_open_and_create),
		cmocka_unit_test(test_fit_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
