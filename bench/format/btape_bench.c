// SPDX-License-Identifier: GPL-2.0-only
/*
 * Format benchmark: writes N synthetic events of a pattern through the writer (completion
 * order, watermark from the in-flight set, as a recorder does), reads them back with a full
 * decode of every field, and breaks the file size down per column.
 *
 *   btape_bench write PATTERN N FILE [WM_NS]
 *                                      -> writer CPU time (generation excluded), bytes/event;
 *                                         WM_NS: advance the watermark once per WM_NS of trace
 *                                         time, as biotape record does (100 ms), instead of
 *                                         every 64 issues
 *   btape_bench reorder N IOPS WINDOW_NS EVERY FILE
 *                                      -> writer CPU per event for an importer-like input:
 *                                         issue times up to WINDOW_NS late, at IOPS, the
 *                                         watermark advanced every EVERY events to the newest
 *                                         issue time minus WINDOW_NS (as biotape convert does)
 *   btape_bench read FILE              -> read_s, events_per_s, checksum of every field
 *   btape_bench cols FILE              -> compressed bytes per event of each column (alone)
 *
 * Patterns (closed-loop device model, one job, ns timestamps):
 *   rand4k  4 KiB random reads, uniform over a 1 TiB device, iodepth 32, latency lognormal
 *           (median 250 us, sigma 0.2) with a 0.5 % x4 tail, submit gap exponential 2 us
 *   seq128k 128 KiB sequential writes, iodepth 4, a streaming device completing in order
 *           (service 64 us +- 100 ns normal), submit gap 1 us +- 100 ns
 *   seq128k-jitter  same with 2 us service jitter and exponential 2 us gaps
 *   oltp    8 KiB, 70 % reads / 30 % writes, 80 % of I/O on a hot 5 % of a 1 TiB device,
 *           iodepth 16, latency lognormal (reads median 120 us, writes 40 us, sigma 0.3)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <msgpack.h>
#include <zstd.h>

#include "btape.h"
#include "btape_internal.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static double unif(void)
{
	return ((rnd() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
	return sqrt(-2.0 * log(unif())) * cos(2 * M_PI * unif());
}

static double expo(double mean)
{
	return -mean * log(unif());
}

enum pat { P_RAND4K, P_SEQ, P_SEQ_JITTER, P_OLTP };

struct cfg {
	enum pat p;
	int depth;
};

/* completion heap */
struct inflight {
	struct btape_event ev;
};

static struct btape_event *heap;
static size_t nheap;

static void hpush(const struct btape_event *e)
{
	size_t i = nheap++;

	while (i) {
		size_t p = (i - 1) / 2;

		if (heap[p].complete_ns <= e->complete_ns)
			break;
		heap[i] = heap[p];
		i = p;
	}
	heap[i] = *e;
}

static struct btape_event hpop(void)
{
	struct btape_event top = heap[0], last = heap[--nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= nheap)
			break;
		if (c + 1 < nheap && heap[c + 1].complete_ns < heap[c].complete_ns)
			c++;
		if (heap[c].complete_ns >= last.complete_ns)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (nheap)
		heap[i] = last;
	return top;
}

/*
 * Generated deliveries are buffered and handed to the writer in batches, so the timing
 * (CPU time around the writer calls only) excludes the simulation.
 */
struct delivery {
	struct btape_event ev;
	uint64_t wm; /* watermark to advance to after the add, 0: none */
};

#define BATCH 65536
static struct delivery batch[BATCH];
static size_t nbatch;
static uint64_t writer_cpu_ns;

static int drain(struct btape_writer *w)
{
	uint64_t c0 = cpu_ns();
	int err = 0;

	for (size_t i = 0; i < nbatch && !err; i++) {
		err = btape_writer__add(w, &batch[i].ev);
		if (!err && batch[i].wm)
			err = btape_writer__advance(w, batch[i].wm);
	}
	nbatch = 0;
	writer_cpu_ns += cpu_ns() - c0;
	return err;
}

static int deliver(struct btape_writer *w, const struct btape_event *e, uint64_t wm)
{
	batch[nbatch].ev = *e;
	batch[nbatch].wm = wm;
	if (++nbatch == BATCH)
		return drain(w);
	return 0;
}

static int do_write(const char *pattern, uint64_t n, const char *path, uint64_t wm_every_ns)
{
	struct cfg c = {0};
	struct btape_writer *w;
	struct btape_meta meta = {0};
	struct btape_device dev = {0};
	uint64_t next_issue[64], seq_sector = 2048, last_complete = 0, t0, t1, c0, issued = 0;
	uint64_t next_wm = 0;
	uint32_t cpu = 0;
	char why[BTAPE_ERRMSG_LEN];
	int err;

	if (!strcmp(pattern, "rand4k"))
		c = (struct cfg){P_RAND4K, 32};
	else if (!strcmp(pattern, "seq128k"))
		c = (struct cfg){P_SEQ, 4};
	else if (!strcmp(pattern, "seq128k-jitter"))
		c = (struct cfg){P_SEQ_JITTER, 4};
	else if (!strcmp(pattern, "oltp"))
		c = (struct cfg){P_OLTP, 16};
	else {
		fprintf(stderr, "unknown pattern %s\n", pattern);
		return 2;
	}
	heap = malloc(sizeof(*heap) * 128);
	snprintf(meta.tool, sizeof(meta.tool), "btape_bench");
	snprintf(meta.source, sizeof(meta.source), "synthetic:%s", pattern);
	snprintf(dev.name, sizeof(dev.name), "nvme0n1");
	dev.size_bytes = 1ull << 40;
	dev.logical_block = 512;
	dev.physical_block = 4096;
	dev.rotational = 0;
	btape_meta_add_device(&meta, &dev);
	for (int s = 0; s < c.depth; s++)
		next_issue[s] = 1000000000ull + (uint64_t)s * 1000;

	t0 = now_ns();
	c0 = cpu_ns();
	err = btape_writer__open(&w, path, &meta, NULL, why, sizeof(why));
	writer_cpu_ns = cpu_ns() - c0;
	if (err) {
		fprintf(stderr, "open: %s\n", why);
		return 1;
	}
	while (issued < n || nheap) {
		int s = 0;
		uint64_t t;

		for (int k = 1; k < c.depth; k++)
			if (next_issue[k] < next_issue[s])
				s = k;
		t = issued < n ? next_issue[s] : UINT64_MAX;
		/* deliver completions up to t, in completion order */
		while (nheap && heap[0].complete_ns <= t) {
			struct btape_event e = hpop();
			uint64_t wm = nheap ? UINT64_MAX : t;

			for (size_t k = 0; k < nheap; k++)
				if (heap[k].issue_ns < wm)
					wm = heap[k].issue_ns;
			bool adv = wm_every_ns ? t != UINT64_MAX && t >= next_wm : (issued & 63) == 0;

			if (adv && wm != UINT64_MAX && wm_every_ns)
				next_wm = t + wm_every_ns;
			err = deliver(w, &e, wm != UINT64_MAX && adv ? wm : 0);
			if (err)
				goto fail;
		}
		if (issued >= n)
			continue;
		{
			struct btape_event e = {0};
			double lat;

			e.issue_ns = t;
			e.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_FLAGS | BTAPE_HAS_ERROR |
				    BTAPE_HAS_PID | BTAPE_HAS_TID | BTAPE_HAS_COMM |
				    BTAPE_HAS_CGROUP | BTAPE_HAS_CPU | BTAPE_HAS_QD;
			e.pid = e.tid = 4242;
			e.comm = "fio";
			e.cgroup = 6172;
			if ((rnd() % 20000) == 0)
				cpu ^= 1;
			e.cpu = cpu;
			e.qd = (uint32_t)nheap + 1;
			switch (c.p) {
			case P_RAND4K:
				e.op = BTAPE_OP_READ;
				e.bytes = 4096;
				e.sector = (rnd() % (1ull << 28)) * 8;
				lat = 250000.0 * exp(0.2 * gauss());
				if (rnd() % 200 == 0)
					lat *= 4;
				e.complete_ns = t + (uint64_t)lat;
				next_issue[s] = e.complete_ns + (uint64_t)expo(2000);
				break;
			case P_SEQ:
			case P_SEQ_JITTER: {
				double svc = c.p == P_SEQ ? 64000 + 100 * gauss()
							  : 64000 + 2000 * gauss();
				uint64_t start = t > last_complete ? t : last_complete;

				e.op = BTAPE_OP_WRITE;
				e.flags = 0;
				e.bytes = 131072;
				e.sector = seq_sector;
				seq_sector += 256;
				e.complete_ns = start + (uint64_t)svc;
				last_complete = e.complete_ns;
				next_issue[s] = e.complete_ns +
						(uint64_t)(c.p == P_SEQ ? 1000 + 100 * gauss()
									: expo(2000));
				break;
			}
			case P_OLTP: {
				bool rd = rnd() % 10 < 7;
				uint64_t blocks = (1ull << 40) / 8192;

				e.op = rd ? BTAPE_OP_READ : BTAPE_OP_WRITE;
				e.bytes = 8192;
				if (!rd)
					e.flags = BTAPE_FLAG_SYNC;
				if (rnd() % 10 < 8)
					e.sector = (rnd() % (blocks / 20)) * 16 + (1ull << 30);
				else
					e.sector = (rnd() % blocks) * 16;
				lat = (rd ? 120000.0 : 40000.0) * exp(0.3 * gauss());
				e.complete_ns = t + (uint64_t)lat;
				next_issue[s] = e.complete_ns + (uint64_t)expo(3000);
				break;
			}
			}
			hpush(&e);
			issued++;
		}
	}
	err = drain(w);
	if (err)
		goto fail;
	c0 = cpu_ns();
	err = btape_writer__close(w, why, sizeof(why));
	writer_cpu_ns += cpu_ns() - c0;
	if (err) {
		fprintf(stderr, "close: %s\n", why);
		return 1;
	}
	t1 = now_ns();
	{
		FILE *f = fopen(path, "rb");
		long sz;

		fseek(f, 0, SEEK_END);
		sz = ftell(f);
		fclose(f);
		printf("pattern=%s events=%" PRIu64 " total_s=%.3f writer_cpu_s=%.3f "
		       "write_events_per_cpu_s=%.0f bytes=%ld bytes_per_event=%.3f\n",
		       pattern, n, (t1 - t0) / 1e9, writer_cpu_ns / 1e9, n / (writer_cpu_ns / 1e9),
		       sz, (double)sz / n);
	}
	btape_meta_free(&meta);
	free(heap);
	return 0;
fail:
	fprintf(stderr, "write: %s\n", btape_writer__errmsg(w));
	btape_writer__abort(w);
	return 1;
}

static int do_reorder(uint64_t n, uint64_t iops, uint64_t win, uint64_t every, const char *path)
{
	struct btape_writer *w;
	struct btape_meta meta = {0};
	struct btape_device dev = {0};
	uint64_t gap = 1000000000ull / (iops ? iops : 1), newest = 0, c0;
	int err;

	snprintf(dev.name, sizeof(dev.name), "nvme0n1");
	btape_meta_add_device(&meta, &dev);
	c0 = cpu_ns();
	err = btape_writer__open(&w, path, &meta, NULL, NULL, 0);
	for (uint64_t i = 0; i < n && !err; i++) {
		struct btape_event e = {0};

		e.issue_ns = 10000000000ull + i * gap - rnd() % (win ? win : 1);
		e.bytes = 4096;
		e.sector = (rnd() % (1ull << 28)) * 8;
		newest = e.issue_ns > newest ? e.issue_ns : newest;
		err = btape_writer__add(w, &e);
		if (!err && every && i % every == 0 && newest > win)
			err = btape_writer__advance(w, newest - win);
	}
	if (!err)
		err = btape_writer__close(w, NULL, 0);
	btape_meta_free(&meta);
	if (err) {
		fprintf(stderr, "reorder: %s\n", strerror(-err));
		return 1;
	}
	printf("events=%" PRIu64 " iops=%" PRIu64 " window_ns=%" PRIu64 " every=%" PRIu64
	       " writer_ns_per_event=%.0f\n", n, iops, win, every,
	       (double)(cpu_ns() - c0) / (double)n);
	return 0;
}

static int do_read(const char *path)
{
	struct btape_reader *r;
	const struct btape_event *evs;
	char msg[BTAPE_ERRMSG_LEN];
	uint64_t t0, t1, c0, c1, n = 0, sum = 0;
	int k;

	t0 = now_ns();
	c0 = cpu_ns();
	if (btape_reader__open(&r, path, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		return 1;
	}
	while ((k = btape_reader__next_batch(r, &evs)) > 0) {
		for (int i = 0; i < k; i++) {
			const struct btape_event *e = &evs[i];

			/* touch every field */
			sum += e->issue_ns ^ e->complete_ns ^ e->insert_ns ^ e->sector ^ e->bytes ^
			       e->cgroup ^ (e->comm ? (uint8_t)e->comm[0] : 0) ^ e->dev ^
			       e->present ^ e->flags ^ (uint32_t)e->error ^ e->pid ^ e->tid ^
			       e->cpu ^ e->qd ^ e->op;
		}
		n += (uint64_t)k;
	}
	if (k < 0) {
		fprintf(stderr, "%s\n", btape_reader__errmsg(r));
		return 1;
	}
	btape_reader__close(r);
	t1 = now_ns();
	c1 = cpu_ns();
	printf("read_s=%.3f read_cpu_s=%.3f read_events_per_cpu_s=%.0f events=%" PRIu64
	       " checksum=%016" PRIx64 "\n",
	       (t1 - t0) / 1e9, (c1 - c0) / 1e9, n / ((c1 - c0) / 1e9), n, sum);
	return 0;
}

/* Per-column cost: each column blob of every chunk compressed alone (zstd -3). */
static int do_cols(const char *path)
{
	size_t len, off = BTAPE_HEADER_SIZE;
	FILE *f = fopen(path, "rb");
	uint8_t *d;
	double cost[32] = {0}, raw[32] = {0};
	char names[32][16];
	int ncol = 0;
	uint64_t events = 0;

	if (!f)
		return 1;
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	d = malloc(len);
	if (fread(d, 1, len, f) != len)
		return 1;
	fclose(f);
	while (off + BTAPE_ENV_SIZE <= len) {
		unsigned int type;
		uint32_t clen, rlen, pcrc;
		uint8_t *rawbuf;
		msgpack_unpacked u;
		size_t uoff = 0;

		if (btape_env_parse(d + off, &type, &clen, &rlen, &pcrc))
			break;
		if (type == BTAPE_FRAME_CHUNK) {
			rawbuf = malloc(rlen);
			ZSTD_decompress(rawbuf, rlen, d + off + BTAPE_ENV_SIZE, clen);
			msgpack_unpacked_init(&u);
			msgpack_unpack_next(&u, (char *)rawbuf, rlen, &uoff);
			for (uint32_t i = 0; i < u.data.via.map.size; i++) {
				msgpack_object *k = &u.data.via.map.ptr[i].key;
				msgpack_object *v = &u.data.via.map.ptr[i].val;

				if (k->via.str.size == 1 && k->via.str.ptr[0] == 'n')
					events += v->via.u64;
				if (k->via.str.size != 4 || memcmp(k->via.str.ptr, "cols", 4))
					continue;
				for (uint32_t j = 0; j < v->via.map.size; j++) {
					msgpack_object *ck = &v->via.map.ptr[j].key;
					msgpack_object *cv = &v->via.map.ptr[j].val;
					size_t cap = ZSTD_compressBound(cv->via.bin.size);
					void *cb = malloc(cap);
					size_t cl = ZSTD_compress(cb, cap, cv->via.bin.ptr,
								  cv->via.bin.size, 3);
					int c;

					for (c = 0; c < ncol; c++)
						if (!strncmp(names[c], ck->via.str.ptr,
							     ck->via.str.size) &&
						    !names[c][ck->via.str.size])
							break;
					if (c == ncol) {
						snprintf(names[ncol], sizeof(names[0]), "%.*s",
							 (int)ck->via.str.size, ck->via.str.ptr);
						ncol++;
					}
					cost[c] += (double)cl;
					raw[c] += (double)cv->via.bin.size;
					free(cb);
				}
			}
			msgpack_unpacked_destroy(&u);
			free(rawbuf);
		}
		off += BTAPE_ENV_SIZE + clen;
	}
	for (int c = 0; c < ncol; c++)
		printf("%-10s raw %6.3f B/ev  zstd-alone %6.3f B/ev\n", names[c], raw[c] / events,
		       cost[c] / events);
	printf("file %.3f B/ev over %" PRIu64 " events\n", (double)len / events, events);
	free(d);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "write"))
		return do_write(argv[2], strtoull(argv[3], NULL, 0), argv[4],
				argc == 6 ? strtoull(argv[5], NULL, 0) : 0);
	if (argc == 7 && !strcmp(argv[1], "reorder"))
		return do_reorder(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0),
				  strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0), argv[6]);
	if (argc == 3 && !strcmp(argv[1], "read"))
		return do_read(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "cols"))
		return do_cols(argv[2]);
	fprintf(stderr, "usage: btape_bench write rand4k|seq128k|seq128k-jitter|oltp N FILE [WM_NS]\n"
			"       btape_bench reorder N IOPS WINDOW_NS EVERY FILE\n"
			"       btape_bench read FILE | cols FILE\n");
	return 2;
}
