// SPDX-License-Identifier: GPL-2.0-only
/* Shared helpers of the libbiotape unit tests. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <msgpack.h>
#include <zstd.h>

#include "btape_internal.h"
#include "test_util.h"

char *tu_tmpdir(void)
{
	char tmpl[] = "/tmp/btape-test.XXXXXX";
	char *d = mkdtemp(tmpl);

	return d ? strdup(d) : NULL;
}

void tu_cleanup_dir(char *dir)
{
	DIR *d;
	struct dirent *e;
	char p[4096];

	if (!dir)
		return;
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	free(dir);
}

const char *tu_path(const char *dir, const char *name, int slot)
{
	static char buf[4][4096];

	snprintf(buf[slot & 3], sizeof(buf[0]), "%s/%s", dir, name);
	return buf[slot & 3];
}

uint64_t tu_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static const char *const comms[] = {
	"fio",	       "postgres", "kworker/u8:3",
	"jbd2/vda1-8", "",	   "a-very-long-process-name-that-exceeds-sixteen-bytes"};

void tu_random_event(uint64_t *s, struct btape_event *ev, uint64_t issue, bool all)
{
	memset(ev, 0, sizeof(*ev));
	ev->issue_ns = issue;
	ev->present = all ? BTAPE_HAS__ALL : (uint32_t)(tu_rand(s) & BTAPE_HAS__ALL);
	ev->dev = (uint32_t)(tu_rand(s) % 4);
	ev->op = (uint8_t)(tu_rand(s) % BTAPE_OP__COUNT);
	ev->sector = tu_rand(s) >> (11 + tu_rand(s) % 53); /* within the extent limits */
	ev->bytes = (tu_rand(s) % 256) * 512;
	if (ev->present & BTAPE_HAS_COMPLETE)
		ev->complete_ns = issue + tu_rand(s) % 10000000;
	if (ev->present & BTAPE_HAS_INSERT)
		ev->insert_ns = issue - tu_rand(s) % 100000;
	if (ev->present & BTAPE_HAS_FLAGS)
		ev->flags = (uint32_t)(tu_rand(s) & 0x3ff);
	if (ev->present & BTAPE_HAS_ERROR)
		ev->error = -(int32_t)(tu_rand(s) % 130);
	if (ev->present & BTAPE_HAS_PID)
		ev->pid = (uint32_t)tu_rand(s);
	if (ev->present & BTAPE_HAS_TID)
		ev->tid = (uint32_t)tu_rand(s);
	if (ev->present & BTAPE_HAS_COMM)
		ev->comm = comms[tu_rand(s) % (sizeof(comms) / sizeof(comms[0]))];
	if (ev->present & BTAPE_HAS_CGROUP)
		ev->cgroup = tu_rand(s);
	if (ev->present & BTAPE_HAS_CPU)
		ev->cpu = (uint32_t)(tu_rand(s) % 256);
	if (ev->present & BTAPE_HAS_QD)
		ev->qd = (uint32_t)(tu_rand(s) % 1024);
	if (ev->present & BTAPE_HAS_WAKE) {
		/*
		 * From a stream of its own, so that the seeds of the tests written before these
		 * fields draw what they drew. Usually before the issue (woke, then submitted),
		 * now and then after it.
		 */
		uint64_t w = issue ^ (ev->sector << 7) ^ ev->bytes ^ 0x9e3779b97f4a7c15ull;

		ev->wake_ns = issue - tu_rand(&w) % 2000000 + (tu_rand(&w) % 8 ? 0 : 5000);
		ev->slept_ns = tu_rand(&w) % 4 ? tu_rand(&w) % 50000000 : tu_rand(&w);
	}
}

int tu_event_cmp(const struct btape_event *a, const struct btape_event *b)
{
	uint32_t p = a->present;

	if (a->present != b->present || a->issue_ns != b->issue_ns || a->dev != b->dev ||
	    a->op != b->op || a->sector != b->sector || a->bytes != b->bytes)
		return 1;
	if ((p & BTAPE_HAS_COMPLETE) && a->complete_ns != b->complete_ns)
		return 2;
	if ((p & BTAPE_HAS_INSERT) && a->insert_ns != b->insert_ns)
		return 3;
	if ((p & BTAPE_HAS_FLAGS) && a->flags != b->flags)
		return 4;
	if ((p & BTAPE_HAS_ERROR) && a->error != b->error)
		return 5;
	if ((p & BTAPE_HAS_PID) && a->pid != b->pid)
		return 6;
	if ((p & BTAPE_HAS_TID) && a->tid != b->tid)
		return 7;
	if ((p & BTAPE_HAS_COMM) && (!a->comm || !b->comm || strcmp(a->comm, b->comm)))
		return 8;
	if ((p & BTAPE_HAS_CGROUP) && a->cgroup != b->cgroup)
		return 9;
	if ((p & BTAPE_HAS_CPU) && a->cpu != b->cpu)
		return 10;
	if ((p & BTAPE_HAS_QD) && a->qd != b->qd)
		return 11;
	if ((p & BTAPE_HAS_WAKE) && (a->wake_ns != b->wake_ns || a->slept_ns != b->slept_ns))
		return 12;
	return 0;
}

void tu_meta(struct btape_meta *m, uint32_t ndev)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->tool, sizeof(m->tool), "biotape test");
	snprintf(m->hostname, sizeof(m->hostname), "testhost");
	snprintf(m->kernel, sizeof(m->kernel), "6.1.0-test");
	snprintf(m->source, sizeof(m->source), "synthetic");
	snprintf(m->capture, sizeof(m->capture), "-d loop0");
	m->clock_mono_ns = 123456789;
	m->clock_real_ns = 1700000000000000000ull;
	for (uint32_t i = 0; i < ndev; i++) {
		struct btape_device d = {0};

		d.dev_t_major = 7;
		d.dev_t_minor = i;
		snprintf(d.name, sizeof(d.name), "loop%u", i);
		snprintf(d.model, sizeof(d.model), "model %u", i);
		d.size_bytes = (1ull << 40) + i;
		d.logical_block = 512;
		d.physical_block = 4096;
		d.rotational = (int8_t)(i % 3) - 1;
		btape_meta_add_device(m, &d);
	}
	btape_meta_add_tag(m, "workload", "test");
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

void tu_put_frame(struct bbuf *out, unsigned int type, const void *raw, size_t rlen)
{
	size_t cap = ZSTD_compressBound(rlen), clen;
	uint8_t *c = malloc(cap), env[BTAPE_ENV_SIZE];

	if (!c)
		abort();
	clen = ZSTD_compress(c, cap, raw, rlen, 3);
	if (ZSTD_isError(clen))
		abort();
	btape_env_build(env, type, (uint32_t)clen, (uint32_t)rlen, c);
	bbuf_put(out, env, sizeof(env));
	bbuf_put(out, c, clen);
	free(c);
}

void tu_pk_str(struct msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}
