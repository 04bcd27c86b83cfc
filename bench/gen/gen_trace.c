// SPDX-License-Identifier: GPL-2.0-only
/*
 * gen_trace: synthetic traces for the test suite and the benchmarks. One program, one random
 * generator (xorshift64): without -x every run writes the same trace.
 *
 *   gen_trace -o OUT [-n COUNT] [-p PATTERN] [options]      (COUNT: 1000)
 *
 * Patterns:
 *   randread (the default), randwrite, seqread, seqwrite, mix:READ_PCT
 *       -b BS bytes (4096) over the first -s SPAN bytes (all) of -d NDEV devices (1) of
 *       -S SIZE (64M), named -N NAME (loop0; NAME0, NAME1... for several), logical block
 *       -l LBS (512); arrivals -a poisson|fixed (poisson) at -r IOPS (20000); a fixed 50 us
 *       latency, queue depth -q QD (1), one process "gen"; event i on device i % NDEV.
 *       (The replayer's tests, bench/replay.)
 *   mixed
 *       a known distribution (the analyzer's tests, bench/analyze): reads 70% / writes 30%;
 *       sizes 4k 60%, 8k 20%, 16k 10%, 64k 10%; 25% of I/Os continue their stream
 *       sequentially, the rest are random, 20% of the random ones into the first 1% of the
 *       device; 200k IOPS with jitter; device time 50-250 us; queue time 2-10 us; 8
 *       processes; 2 devices synth0, synth1 of -S SIZE (16G).
 *   known
 *       exactly known contents, nothing random (tests/cli/test_info_dump.sh): devices "loop7"
 *       and "disk,b", tag run=t1, chunks of 100 events; event i: issue 1e9 + i * 1e6 ns,
 *       sector i * 8, 4096 B, device i % 2, write when i % 3 == 0 else read; every 4th
 *       (i % 4 == 3) has no optional field, the others complete 100 us + i ns after issue,
 *       pid 100 + i % 2, comm "p<i % 2>", queue depth 1, writes flagged sync.
 *   alibaba, vscsi2, blktrace
 *       not .btape: bench/convert's import input, COUNT records of a random workload (8
 *       devices, 4-64 KiB, 2/3 reads, time-sorted) as Alibaba 2020 CSV lines, vscsiStats v2
 *       40-byte records, or blktrace records (COUNT / 3 requests, each Q, D and C; one CPU).
 *       OUT "-" is stdout.
 *
 * Options of the .btape patterns:
 *   -F N   every Nth event a flush (-F 1: only flushes)     -D N   every Nth a discard
 *   -B     bare: no optional field (completion, insert, process, queue depth...)
 *   -i N   N more devices declared that get no I/O (not with known)
 *   -k     written in place, then killed (SIGKILL) before the footer: a reader must recover
 *   -X N   N events counted as lost by the recorder (its ring buffer full), in the footer
 *   -H HOST  the recording host's name (randread..., mixed)
 *   -L NS    one outlier: the middle event completes NS after its issue (mixed), as one slow
 *            flush or a throttled I/O does in a real recording
 *   -T NS    the first event's issue time (1e9; randread..., mixed): another host's clock
 *   -C ID,RANK,RANKS,REF,T0,OFF0,UNC0[,T1,OFF1,UNC1]
 *            a cluster recording's clock (docs/BTAPE-FORMAT.md, "cluster"): id, rank of ranks,
 *            reference host, and one or two syncs [local ns, offset ns, uncertainty ns]
 * -x SEED seeds the random patterns. Sizes take a K, M, G or T suffix (powers of 1024).
 * Exit 0, 2 on bad usage (one line on stderr), 1 on failure (nothing is left at OUT).
 */
#include "btape.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_STATE 88172645463325252ull

static uint64_t rng = DEFAULT_STATE;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double unif(void) /* (0, 1] */
{
	return (double)((rnd() >> 11) + 1) * 0x1p-53;
}

enum kind { UNIFORM, MIXED, KNOWN, ALIBABA, VSCSI2, BLKTRACE };

/* Which options each kind takes (the others are refused, so that none is silently ignored). */
static const char *const kind_opts[] = {
	[UNIFORM] = "onpbsSdNlarqFDBikxHTCX",
	[MIXED] = "onpSFDBikxHTCLX",
	[KNOWN] = "onpFDBk",
	[ALIBABA] = "onpx",
	[VSCSI2] = "onpx",
	[BLKTRACE] = "onpx",
};

struct gen {
	enum kind kind;
	const char *out, *pattern, *name, *host;
	uint64_t t0;
	struct btape_cluster cluster;
	uint64_t n, bs, span, devsize, lbs, flush_every, discard_every, idle, outlier_ns, lost;
	unsigned int qd, ndev;
	int read_pct;
	bool seq, poisson, bare, kill;
	double rate;
	uint64_t t, seqpos, last_end[2][2]; /* running state */
};

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gen_trace: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (usage: the comment in bench/gen/gen_trace.c)\n");
	return 2;
}

/* A count or size: digits with an optional K, M, G or T suffix. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned int shift = 0;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'T':
		shift += 10; /* fall through */
	case 'G':
		shift += 10; /* fall through */
	case 'M':
		shift += 10; /* fall through */
	case 'K':
		shift += 10;
		end++;
		break;
	}
	if (*end || (shift && *v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*v <<= shift;
	return 0;
}

static int set_pattern(struct gen *g, const char *p)
{
	static const struct {
		const char *name;
		enum kind kind;
		int read_pct;
		bool seq;
	} pats[] = {
		{"randread", UNIFORM, 100, false}, {"randwrite", UNIFORM, 0, false},
		{"seqread", UNIFORM, 100, true},   {"seqwrite", UNIFORM, 0, true},
		{"mixed", MIXED, 0, false},	   {"known", KNOWN, 0, false},
		{"alibaba", ALIBABA, 0, false},	   {"vscsi2", VSCSI2, 0, false},
		{"blktrace", BLKTRACE, 0, false},
	};

	g->pattern = p;
	if (strncmp(p, "mix:", 4) == 0) {
		char *end;
		long pct = strtol(p + 4, &end, 10);

		if (end == p + 4 || *end || pct < 0 || pct > 100)
			return -EINVAL;
		g->kind = UNIFORM;
		g->read_pct = (int)pct;
		g->seq = false;
		return 0;
	}
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		if (strcmp(p, pats[i].name) == 0) {
			g->kind = pats[i].kind;
			g->read_pct = pats[i].read_pct;
			g->seq = pats[i].seq;
			return 0;
		}
	}
	return -EINVAL;
}

/* The devices and metadata of a .btape pattern. */
static int build_meta(const struct gen *g, struct btape_meta *meta)
{
	struct btape_device dev = {0};
	uint64_t ndev = g->kind == MIXED ? 2 : g->ndev; /* known declares its own two */

	snprintf(meta->tool, sizeof(meta->tool), "gen_trace");
	if (g->kind == KNOWN) {
		snprintf(meta->source, sizeof(meta->source), "test");
		snprintf(meta->hostname, sizeof(meta->hostname), "testhost");
		meta->clock_mono_ns = 1000000000ull;
		meta->clock_real_ns = 1767225600ull * 1000000000ull; /* 2026-01-01 00:00:00 UTC */
		snprintf(dev.name, sizeof(dev.name), "loop7");
		dev.dev_t_major = 7;
		dev.dev_t_minor = 7;
		dev.size_bytes = 1ull << 30;
		dev.logical_block = dev.physical_block = 512;
		if (btape_meta_add_device(meta, &dev) < 0)
			return -ENOMEM;
		snprintf(dev.name, sizeof(dev.name), "disk,b");
		dev.dev_t_minor = 8;
		if (btape_meta_add_device(meta, &dev) < 0 ||
		    btape_meta_add_tag(meta, "run", "t1") < 0)
			return -ENOMEM;
		return 0;
	}
	snprintf(meta->source, sizeof(meta->source), "synthetic");
	meta->cluster = g->cluster;
	if (g->kind == MIXED) {
		snprintf(meta->hostname, sizeof(meta->hostname), "%s", g->host ? g->host : "bench");
	} else {
		snprintf(meta->hostname, sizeof(meta->hostname), "%s",
			 g->host ? g->host : "localhost");
		snprintf(meta->capture, sizeof(meta->capture), "%s %s %.0f IOPS bs %llu",
			 g->pattern, g->poisson ? "poisson" : "fixed", g->rate,
			 (unsigned long long)g->bs);
		meta->clock_mono_ns = 1000000000ull;
		meta->clock_real_ns = 1767225600ull * 1000000000ull;
	}
	for (uint64_t d = 0; d < ndev + g->idle; d++) {
		if (g->kind == MIXED) {
			snprintf(dev.name, sizeof(dev.name), "synth%llu", (unsigned long long)d);
			dev.dev_t_major = 259;
			dev.logical_block = 512;
		} else {
			if (ndev + g->idle == 1)
				snprintf(dev.name, sizeof(dev.name), "%s", g->name);
			else
				snprintf(dev.name, sizeof(dev.name), "%s%llu", g->name,
					 (unsigned long long)d);
			dev.dev_t_major = 7;
			dev.logical_block = (uint32_t)g->lbs;
		}
		dev.dev_t_minor = (uint32_t)d;
		dev.size_bytes = g->devsize;
		dev.physical_block = 4096;
		dev.rotational = 0;
		if (btape_meta_add_device(meta, &dev) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void ev_uniform(struct gen *g, uint64_t i, struct btape_event *e)
{
	uint64_t blocks = g->span / g->bs;

	e->issue_ns = g->t;
	e->complete_ns = g->t + 50000;
	e->insert_ns = g->t;
	e->dev = (uint32_t)(i % g->ndev);
	e->bytes = g->bs;
	e->op = (rnd() % 100) < (uint64_t)g->read_pct ? BTAPE_OP_READ : BTAPE_OP_WRITE;
	if (g->seq) {
		e->sector = g->seqpos / 512;
		g->seqpos = (g->seqpos + g->bs) % (blocks * g->bs);
	} else {
		e->sector = (rnd() % blocks) * g->bs / 512;
	}
	e->qd = g->qd;
	e->pid = 4242;
	e->tid = 4242;
	e->comm = "gen";
	e->present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_QD | BTAPE_HAS_PID |
		     BTAPE_HAS_TID | BTAPE_HAS_COMM;
	if (g->poisson)
		g->t += (uint64_t)(-log(unif()) * (1e9 / g->rate)) + 1;
	else
		g->t += (uint64_t)(1e9 / g->rate);
}

static void ev_mixed(struct gen *g, uint64_t i, struct btape_event *e)
{
	static const char *comms[8] = {"postgres", "fio",	  "kworker/u8:1", "java",
				       "mysqld",   "rocksdb:low", "jbd2/vda1-8",  "qemu-kvm"};
	uint64_t range = g->devsize / 512;
	uint64_t r = rnd();
	int dir = (r % 100) < 70 ? 0 : 1;
	unsigned int dv = (unsigned int)((r >> 8) & 1);
	uint64_t sz = (r >> 16) % 100, p = (r >> 24) % 100;

	sz = sz < 60 ? 4096 : sz < 80 ? 8192 : sz < 90 ? 16384 : 65536;
	g->t += 2500 + (rnd() % 5000); /* mean 5 us: 200k IOPS */
	e->issue_ns = g->t;
	e->op = dir ? BTAPE_OP_WRITE : BTAPE_OP_READ;
	e->dev = dv;
	e->bytes = sz;
	if (p < 25 && g->last_end[dv][dir] + sz / 512 < range) {
		e->sector = g->last_end[dv][dir];
	} else {
		uint64_t span = (r >> 32) % 100 < 20 ? range / 100 : range;

		e->sector = (rnd() % (span - 128)) & ~7ull;
	}
	g->last_end[dv][dir] = e->sector + sz / 512;
	e->insert_ns = g->t - 2000 - rnd() % 8000;
	e->complete_ns = g->t + 50000 + rnd() % 200000;
	e->pid = 1000 + (uint32_t)(i % 8);
	e->tid = e->pid;
	e->comm = comms[i % 8];
	e->cpu = (uint32_t)(i % 2);
	e->flags = dir ? BTAPE_FLAG_SYNC : 0;
	e->present = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT | BTAPE_HAS_PID | BTAPE_HAS_TID |
		     BTAPE_HAS_COMM | BTAPE_HAS_CPU | BTAPE_HAS_FLAGS;
}

static void ev_known(struct gen *g, uint64_t i, struct btape_event *e)
{
	e->issue_ns = 1000000000ull + i * 1000000ull;
	e->sector = i * 8;
	e->bytes = 4096;
	e->dev = (uint32_t)(i % 2);
	e->op = i % 3 == 0 ? BTAPE_OP_WRITE : BTAPE_OP_READ;
	if (i % 4 != 3) {
		e->present = BTAPE_HAS_COMPLETE | BTAPE_HAS_PID | BTAPE_HAS_COMM | BTAPE_HAS_FLAGS |
			     BTAPE_HAS_QD;
		e->complete_ns = e->issue_ns + 100000 + i;
		e->pid = 100 + (uint32_t)(i % 2);
		e->comm = i % 2 ? "p1" : "p0";
		e->flags = e->op == BTAPE_OP_WRITE ? BTAPE_FLAG_SYNC : 0;
		e->qd = 1;
	}
	g->t = e->issue_ns; /* the watermark: no later event is issued before it */
}

static int write_btape(struct gen *g)
{
	struct btape_meta meta = {0};
	struct btape_writer_opts wo = {.sz = sizeof(wo)};
	struct btape_writer *w = NULL;
	/* how often the writer is told the watermark (mixed: never, it is released at close) */
	uint64_t advance_every = g->kind == KNOWN ? 1 : g->kind == UNIFORM ? 65536 : 0;
	int err;

	if (g->kind == KNOWN)
		wo.chunk_events = 100;
	err = build_meta(g, &meta);
	if (err) {
		fprintf(stderr, "gen_trace: out of memory\n");
		goto cleanup;
	}
	err = g->kill ? btape_writer__open_direct(&w, g->out, &meta, &wo, NULL, 0)
		      : btape_writer__open(&w, g->out, &meta, &wo, NULL, 0);
	if (err) {
		fprintf(stderr, "gen_trace: %s: %s\n", g->out, strerror(-err));
		w = NULL;
		goto cleanup;
	}
	g->t = g->t0;
	for (uint64_t i = 0; i < g->n; i++) {
		struct btape_event e = {0};

		if (g->kind == UNIFORM)
			ev_uniform(g, i, &e);
		else if (g->kind == MIXED)
			ev_mixed(g, i, &e);
		else
			ev_known(g, i, &e);
		if (g->flush_every && i % g->flush_every == g->flush_every - 1) {
			e.op = BTAPE_OP_FLUSH;
			e.sector = 0;
			e.bytes = 0;
		} else if (g->discard_every && i % g->discard_every == g->discard_every - 1) {
			e.op = BTAPE_OP_DISCARD;
		}
		if (g->outlier_ns && i == g->n / 2 && (e.present & BTAPE_HAS_COMPLETE))
			e.complete_ns = e.issue_ns + g->outlier_ns;
		if (g->bare)
			e.present = 0;
		err = btape_writer__add(w, &e);
		if (err) {
			fprintf(stderr, "gen_trace: %s: %s\n", g->out, btape_writer__errmsg(w));
			goto cleanup;
		}
		if (advance_every && i % advance_every == advance_every - 1)
			btape_writer__advance(w, g->t);
	}
	if (g->lost)
		btape_writer__add_lost(w, g->lost, 0, 0);
	if (g->kill) {
		btape_writer__flush(w);
		raise(SIGKILL); /* no footer: the reader must recover */
	}
	err = btape_writer__close(w, NULL, 0);
	w = NULL;
	if (err)
		fprintf(stderr, "gen_trace: %s: %s\n", g->out, strerror(-err));
cleanup:
	if (w)
		btape_writer__abort(w);
	btape_meta_free(&meta);
	return err ? 1 : 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* little-endian host */
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* bench/convert's inputs: one random draw per record (blktrace: per request). */
static void write_foreign(const struct gen *g, FILE *f)
{
	uint64_t t = 0;

	if (g->kind == ALIBABA) {
		t = 1577808000000000ull;
		for (uint64_t i = 0; i < g->n; i++) {
			uint64_t r = rnd();

			t += r % 200;
			fprintf(f, "%u,%c,%llu,%u,%llu\n", (unsigned)(r >> 8) % 8,
				(r >> 20) % 3 ? 'R' : 'W',
				(unsigned long long)((r >> 24) % (1u << 26)) * 4096,
				4096u << ((r >> 50) % 5), (unsigned long long)t);
		}
	} else if (g->kind == VSCSI2) {
		uint8_t rec[40];

		for (uint64_t i = 0; i < g->n; i++) {
			uint64_t r = rnd();
			uint16_t cmd = (r >> 20) % 3 ? 0x28 : 0x2a, ver = 2 << 8;

			t += r % 200;
			memcpy(rec, &cmd, 2);
			memcpy(rec + 2, &ver, 2);
			put32(rec + 4, (uint32_t)i);
			put32(rec + 8, 4096u << ((r >> 50) % 5));
			put32(rec + 12, 1);
			put64(rec + 16, ((r >> 24) % (1u << 26)) * 8);
			put64(rec + 24, t);
			put64(rec + 32, 50 + (r >> 40) % 500);
			fwrite(rec, 1, sizeof(rec), f);
		}
	} else {
		static const uint32_t act[3] = {1 | 1u << 20, 7 | 1u << 22, 8 | 1u << 23};
		static const uint64_t dt[3] = {0, 2000, 9000};
		uint8_t rec[48];
		uint32_t seq = 0;

		for (uint64_t i = 0; i < g->n / 3; i++) {
			uint64_t r = rnd(), sector = ((r >> 24) % (1u << 26)) * 8;
			uint32_t tc = (r >> 20) % 3 ? 1 : 2, bytes = 4096u << ((r >> 50) % 5);

			t += 10000;
			for (int k = 0; k < 3; k++) {
				memset(rec, 0, sizeof(rec));
				put32(rec, 0x65617407);
				put32(rec + 4, seq++);
				put64(rec + 8, t + dt[k]);
				put64(rec + 16, sector);
				put32(rec + 24, bytes);
				put32(rec + 28, act[k] | tc << 16);
				put32(rec + 32, 100);
				put32(rec + 36, 8u << 20);
				fwrite(rec, 1, sizeof(rec), f);
			}
		}
	}
}

/* A regular OUT through OUT.tmp.XXXXXX renamed into place: a failed run leaves no partial file.
 * "-", or an OUT that exists and is not a regular file (a pipe, /dev/null), is written as is. */
static int foreign(const struct gen *g)
{
	static char buf[1 << 16];
	struct stat st;
	char *tmp = NULL;
	FILE *f = stdout;
	int fd, bad;

	if (strcmp(g->out, "-") != 0 && stat(g->out, &st) == 0 && !S_ISREG(st.st_mode)) {
		f = fopen(g->out, "w");
		if (!f) {
			fprintf(stderr, "gen_trace: %s: %s\n", g->out, strerror(errno));
			return 1;
		}
	} else if (strcmp(g->out, "-") != 0) {
		if (asprintf(&tmp, "%s.tmp.XXXXXX", g->out) < 0) {
			fprintf(stderr, "gen_trace: out of memory\n");
			return 1;
		}
		fd = mkstemp(tmp);
		f = fd < 0 ? NULL : fdopen(fd, "w");
		if (!f) {
			fprintf(stderr, "gen_trace: %s: %s\n", g->out, strerror(errno));
			if (fd >= 0) {
				close(fd);
				unlink(tmp);
			}
			free(tmp);
			return 1;
		}
	}
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	write_foreign(g, f);
	bad = ferror(f);
	if (fclose(f) != 0)
		bad = 1;
	if (!bad && tmp && rename(tmp, g->out) != 0)
		bad = 1;
	if (bad) {
		fprintf(stderr, "gen_trace: %s: write failed\n", g->out);
		if (tmp)
			unlink(tmp);
	}
	free(tmp);
	return bad ? 1 : 0;
}

/* -C ID,RANK,RANKS,REF,T0,OFF0,UNC0[,T1,OFF1,UNC1] */
static int parse_cluster(struct btape_cluster *cl, const char *arg)
{
	struct btape_clock_sync *y = cl->sync;
	int end = 0, n;

	n = sscanf(arg, "%255[^,],%u,%u,%255[^,],%" SCNu64 ",%" SCNd64 ",%" SCNu64 "%n", cl->id,
		   &cl->rank, &cl->ranks, cl->reference, &y[0].local_ns, &y[0].offset_ns,
		   &y[0].uncertainty_ns, &end);
	if (n != 7)
		return -EINVAL;
	cl->nsync = 1;
	snprintf(cl->method, sizeof(cl->method), "synthetic");
	if (!arg[end])
		return 0;
	arg += end;
	end = 0;
	n = sscanf(arg, ",%" SCNu64 ",%" SCNd64 ",%" SCNu64 "%n", &y[1].local_ns, &y[1].offset_ns,
		   &y[1].uncertainty_ns, &end);
	if (n != 3 || arg[end] || y[1].local_ns < y[0].local_ns)
		return -EINVAL;
	cl->nsync = 2;
	return 0;
}

int main(int argc, char **argv)
{
	struct gen g = {.kind = UNIFORM,
			.pattern = "randread",
			.name = "loop0",
			.n = 1000,
			.bs = 4096,
			.lbs = 512,
			.qd = 1,
			.ndev = 1,
			.read_pct = 100,
			.poisson = true,
			.rate = 20000,
			.t0 = 1000000000ull};
	uint64_t v, seed = 0;
	bool seeded = false, size_given = false;
	char given[128] = {0};
	struct stat st;
	int c;

	opterr = 0;
	while ((c = getopt(argc, argv, "o:n:p:b:s:S:d:N:l:a:r:q:F:D:Bi:kx:H:T:C:L:X:")) != -1) {
		if (c == '?')
			return usage("bad option -%c, or it lacks its argument", optopt);
		given[c & 127] = 1;
		switch (c) {
		case 'o':
			g.out = optarg;
			continue;
		case 'p':
			if (set_pattern(&g, optarg))
				return usage("unknown pattern '%s'", optarg);
			continue;
		case 'N':
			g.name = optarg;
			continue;
		case 'H':
			g.host = optarg;
			continue;
		case 'C':
			if (parse_cluster(&g.cluster, optarg))
				return usage("-C takes ID,RANK,RANKS,REF,T0,OFF0,UNC0[,T1,OFF1,UNC1]");
			continue;
		case 'a':
			if (strcmp(optarg, "poisson") && strcmp(optarg, "fixed"))
				return usage("-a takes poisson or fixed, not '%s'", optarg);
			g.poisson = strcmp(optarg, "poisson") == 0;
			continue;
		case 'r':
			g.rate = strtod(optarg, NULL);
			if (!(g.rate > 0))
				return usage("-r must be a positive rate, not '%s'", optarg);
			continue;
		case 'B':
			g.bare = true;
			continue;
		case 'k':
			g.kill = true;
			continue;
		}
		if (parse_u64(optarg, &v))
			return usage("not a count or size: '%s'", optarg);
		switch (c) {
		case 'n':
			g.n = v;
			break;
		case 'b':
			g.bs = v;
			break;
		case 's':
			g.span = v;
			break;
		case 'S':
			g.devsize = v;
			size_given = true;
			break;
		case 'd':
			g.ndev = (unsigned int)v;
			break;
		case 'l':
			g.lbs = v;
			break;
		case 'q':
			g.qd = (unsigned int)v;
			break;
		case 'F':
			g.flush_every = v;
			break;
		case 'D':
			g.discard_every = v;
			break;
		case 'i':
			g.idle = v;
			break;
		case 'T':
			g.t0 = v;
			break;
		case 'L':
			g.outlier_ns = v;
			break;
		case 'X':
			g.lost = v;
			break;
		case 'x':
			seed = v;
			seeded = true;
			break;
		}
	}
	if (optind < argc)
		return usage("unexpected argument '%s'", argv[optind]);
	if (!g.out)
		return usage("-o OUT is required");
	for (c = 1; c < 128; c++)
		if (given[c] && !strchr(kind_opts[g.kind], c))
			return usage("-%c does not apply to -p %s", c, g.pattern);
	if (!size_given)
		g.devsize = g.kind == MIXED ? 16ull << 30 : 64ull << 20;
	if (!g.span || g.span > g.devsize)
		g.span = g.devsize;
	if (g.kind == UNIFORM && (!g.bs || !g.ndev || g.span < g.bs))
		return usage("-b, -d must be positive and -b at most the span");
	if (g.kind == MIXED && g.devsize < 512 * 100 * 128)
		return usage("-S is too small for -p mixed");
	if (seeded) {
		rng = seed * 2654435761ull + 1;
		if (!rng) /* xorshift64 stays at 0 */
			rng = DEFAULT_STATE;
	}
	if (g.kind == ALIBABA || g.kind == VSCSI2 || g.kind == BLKTRACE)
		return foreign(&g);
	/* the writer renames a temporary file over OUT: never over a device node */
	if (strcmp(g.out, "-") != 0 && stat(g.out, &st) == 0 && !S_ISREG(st.st_mode))
		return usage("%s exists and is not a regular file", g.out);
	return write_btape(&g);
}
