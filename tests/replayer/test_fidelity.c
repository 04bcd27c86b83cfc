// SPDX-License-Identifier: GPL-2.0-only
/*
 * The replay's fidelity section (replayer/fidelity.c) on made-up completions: a replay that
 * did exactly what the recording did scores perfectly whatever the completion order; one that
 * ran at a third of the pace, or fell behind, does not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btape.h"
#include "dist.h"
#include "fidelity.h"
#include "scheduler.h"
#include "source.h"

#define N 2000
#define T0 5000000000ull
#define START 1000000000ull

static char path[64];
static struct btape_event evs[N];

/* A recorded trace: 4 KiB / 64 KiB reads and writes, uneven gaps (bursts), QD 1..8, 100 us. */
static void write_trace(void)
{
	struct btape_meta meta = {.tool = "test"};
	struct btape_device dev = {.name = "d0", .size_bytes = 1ull << 30, .logical_block = 512};
	struct btape_writer_opts wo = {.sz = sizeof(wo), .chunk_events = 333};
	struct btape_writer *w = NULL;
	uint64_t t = T0;
	int fd;

	strcpy(path, "/tmp/biotape-test-fidelity.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_true(btape_meta_add_device(&meta, &dev) >= 0);
	assert_int_equal(btape_writer__open(&w, path, &meta, &wo, NULL, 0), 0);
	for (unsigned int i = 0; i < N; i++) {
		t += (i / 100) % 2 ? 50000 : 5000 + (i % 7) * 1000; /* bursts and lulls */
		evs[i] = (struct btape_event){.issue_ns = t,
					      .complete_ns = t + 100000 + (i % 5) * 10000,
					      .op = i % 3 ? BTAPE_OP_READ : BTAPE_OP_WRITE,
					      .sector = (uint64_t)i * 128,
					      .bytes = i % 4 ? 4096 : 65536,
					      .qd = 1 + i % 8,
					      .present = BTAPE_HAS_COMPLETE | BTAPE_HAS_QD};
		assert_int_equal(btape_writer__add(w, &evs[i]), 0);
	}
	assert_int_equal(btape_writer__close(w, NULL, 0), 0);
	btape_meta_free(&meta);
}

struct setup {
	struct rp_target target;
	struct rp_devmap dev;
	struct rp_sched_cfg cfg;
	struct rp_stats st;
};

static void setup_init(struct setup *s)
{
	memset(s, 0, sizeof(*s));
	s->target = (struct rp_target){.fd = -1, .size = 1ull << 30, .lbs = 512, .path = "t"};
	s->dev = (struct rp_devmap){.target = 0, .src_size = 1ull << 30};
	s->cfg = (struct rp_sched_cfg){.timing = RP_TIMING_ORIGINAL,
				       .speed = 1,
				       .iodepth = 64,
				       .scale = 1,
				       .loops = 1,
				       .allow_writes = true,
				       .ndev = 1,
				       .devs = &s->dev,
				       .targets = &s->target,
				       .ntargets = 1};
	s->st.start_ns = s->st.measure_start_ns = START;
}

/* The trace written, s set up, the recorded side read. */
static struct rp_fidelity *start(struct setup *s)
{
	struct rp_fidelity *f = NULL;
	char msg[256];

	struct btape_reader *r = NULL;
	struct btape_summary sum = {.sz = sizeof(sum)};
	const struct btape_event *ev;
	int n;

	write_trace();
	setup_init(s);
	assert_int_equal(btape_reader__open(&r, path, msg, sizeof(msg)), 0);
	assert_int_equal(btape_reader__summary(r, &sum), 0);
	assert_int_equal(rp_fidelity__new(&f, &sum, &s->cfg), 0);
	while ((n = btape_reader__next_batch(r, &ev)) > 0)
		rp_fidelity__add_recorded(f, ev, (size_t)n);
	assert_int_equal(n, 0);
	btape_reader__close(r);
	return f;
}

/* The replayed I/O of event i when every gap is stretched by `stretch`. */
static struct rp_io io_of(unsigned int i, unsigned int stretch)
{
	uint64_t rel = (evs[i].issue_ns - evs[0].issue_ns) * stretch;

	return (struct rp_io){.offset = evs[i].sector * 512,
			      .bytes = evs[i].bytes,
			      .op = evs[i].op == BTAPE_OP_READ ? RP_IO_READ : RP_IO_WRITE,
			      .issue_ns = START + rel,
			      .intended_ns = START + (evs[i].issue_ns - evs[0].issue_ns),
			      .complete_ns = START + rel + evs[i].complete_ns - evs[i].issue_ns,
			      .seq = i,
			      .qd = evs[i].qd};
}

static void test_exact_replay(void **state)
{
	struct setup s;
	struct rp_fidelity *f = start(&s);
	const struct rp_fid *r;
	/* completions out of issue order: in blocks of 16, the last first */
	for (unsigned int b = 0; b < N; b += 16)
		for (unsigned int i = b + 16; i-- > b;) {
			struct rp_io io = io_of(i, 1);

			rp_fidelity__add(f, &io, &s.st);
		}
	r = rp_fidelity__finish(f, &s.st);
	assert_int_equal(r->rec.ios, N);
	assert_int_equal(r->rep.ios, N);
	assert_int_equal(hist_count(&r->rep.gap), N - 1);
	assert_true(r->gap_ks == 0 && r->size_ks == 0 && r->qd_ks == 0);
	assert_true(r->lat_demerit_ns == 0);
	assert_true(r->windows > 10);
	assert_true(fabs(r->iops_corr - 1) < 1e-9 && fabs(r->qd_corr - 1) < 1e-9);
	assert_false(r->fell_behind);
	assert_true(r->faithful);
	/*
	 * The same stream from a replayer that was once more than RP_LATE_NS behind: fell
	 * behind, still kept; the verdict's timing test is the late share, at most 1%.
	 */
	for (unsigned int i = 0; i < N; i++)
		hist_add(&s.st.issue_err, i < N / 100 ? 2 * RP_LATE_NS : 1000);
	s.st.late = N / 100;
	s.st.lag_max_ns = 2 * RP_LATE_NS;
	r = rp_fidelity__finish(f, &s.st);
	assert_true(r->fell_behind);
	assert_int_equal(r->late_ios, N / 100);
	assert_int_equal(r->timed_ios, N);
	assert_true(rp_fid_late_share(r) == 0.01);
	assert_true(r->faithful);
	s.st.late = N / 100 + 1; /* one more I/O late: over 1% */
	r = rp_fidelity__finish(f, &s.st);
	assert_false(r->faithful);
	char v[RP_FID_VERDICT_MAX];

	rp_fid_verdict(r, v, sizeof(v));
	assert_string_equal(v,
			    "did NOT keep to the recording (1.05% of I/Os over 100 us late > 1%)");
	rp_fidelity__free(f);
	unlink(path);
}

static void test_stretched_replay(void **state)
{
	struct setup s;
	struct rp_fidelity *f = start(&s);
	const struct rp_fid *r;
	for (unsigned int i = 0; i < N; i++) {
		struct rp_io io = io_of(i, 3);

		rp_fidelity__add(f, &io, &s.st);
		hist_add(&s.st.issue_err, io.issue_ns - io.intended_ns);
	}
	s.st.lag_max_ns = s.st.issue_err.max;
	s.st.late = N / 2;
	r = rp_fidelity__finish(f, &s.st);
	assert_true(r->gap_ks > 0.5);
	assert_true(r->iops_corr < 0.5);
	assert_true(r->fell_behind);
	assert_false(r->faithful);
	/* the lateness histogram holds every I/O, most of them far behind */
	uint64_t all = 0;

	for (unsigned int k = 0; k < RP_FID_LATE_BUCKETS; k++)
		all += r->late[k];
	assert_int_equal(all, N);
	assert_true(r->late[RP_FID_LATE_BUCKETS - 1] > N / 2);
	/* a sweep step starts over: the replayed side only */
	rp_fidelity__reset(f);
	assert_int_equal(r->rep.ios, 0);
	assert_int_equal(r->rec.ios, N);
	rp_fidelity__free(f);
	unlink(path);
}

/*
 * Gaps under RP_FID_GAP_FLOOR_NS count as the floor on both sides: a replayer that stamps the
 * recording's short gaps (5-10 us, in its bursts) as one batch (gap 0) keeps to it; one that
 * turns them into 20 us gaps does not.
 */
static double ks_when_short_gaps_become(uint64_t short_to)
{
	struct setup s;
	struct rp_fidelity *f = start(&s);
	uint64_t t = START;
	double ks;

	for (unsigned int i = 0; i < N; i++) {
		struct rp_io io = io_of(i, 1);
		uint64_t gap = i ? evs[i].issue_ns - evs[i - 1].issue_ns : 0;

		t += gap && gap <= 10000 ? short_to : gap; /* the floor, as a figure */
		io.complete_ns += t - io.issue_ns;
		io.issue_ns = t;
		rp_fidelity__add(f, &io, &s.st);
	}
	ks = rp_fidelity__finish(f, &s.st)->gap_ks;
	rp_fidelity__free(f);
	unlink(path);
	return ks;
}

static void test_gap_floor(void **state)
{
	(void)state;
	assert_true(ks_when_short_gaps_become(0) < 0.01);
	assert_true(ks_when_short_gaps_become(20000) > 0.3);
}

static void count_events(void *ctx, const struct btape_event *ev, size_t n)
{
	(void)ev;
	*(size_t *)ctx += n;
}

static void to_fidelity(void *ctx, const struct btape_event *ev, size_t n)
{
	rp_fidelity__add_recorded(ctx, ev, n);
}

/*
 * The recorded side as a replay gets it: from the source's decoder, first pass only, however
 * many passes the replay reads (loops decode ahead; a rewind restarts the decoder). The same
 * figures as a read of its own.
 */
static void test_from_source(void **state)
{
	struct setup s;
	struct rp_fidelity *direct = start(&s), *f = NULL;
	struct rp_prefetch *p = NULL;
	struct btape_summary sum = {.sz = sizeof(sum)};
	const struct btape_event *ev;
	char msg[256];
	size_t seen = 0, got;
	int n;

	(void)state;
	for (int loop_ahead = 0; loop_ahead < 2; loop_ahead++) {
		assert_int_equal(rp_prefetch__open(&p, path, 100, 3, msg, sizeof(msg)), 0);
		assert_int_equal(rp_prefetch__summary(p, &sum), 0);
		assert_int_equal(rp_fidelity__new(&f, &sum, &s.cfg), 0);
		rp_prefetch__set_first_pass_hook(p, to_fidelity, f);
		rp_prefetch__set_loop_ahead(p, loop_ahead);
		struct rp_source *src = rp_prefetch__source(p);

		for (int pass = 0; pass < 3; pass++) {
			got = 0;
			if (pass)
				assert_int_equal(src->rewind(src), 0);
			while ((n = src->next_batch(src, &ev)) > 0)
				got += (size_t)n;
			assert_int_equal(n, 0);
			assert_int_equal(got, N);
		}
		rp_prefetch__stop(p);
		assert_memory_equal(&rp_fidelity__finish(f, &s.st)->rec,
				    &rp_fidelity__finish(direct, &s.st)->rec,
				    sizeof(struct rp_fid_side));
		rp_fidelity__free(f);
		rp_prefetch__close(p);
	}
	/* a hook set and never read to the end: stop ends the decoder, close is safe */
	assert_int_equal(rp_prefetch__open(&p, path, 100, 3, msg, sizeof(msg)), 0);
	rp_prefetch__set_first_pass_hook(p, count_events, &seen);
	assert_true(rp_prefetch__source(p)->next_batch(rp_prefetch__source(p), &ev) > 0);
	rp_prefetch__stop(p);
	assert_true(seen >= 100 && seen <= N);
	rp_prefetch__close(p);
	rp_fidelity__free(direct);
	unlink(path);
}

/* One rank's section of the replay stretched by `stretch` (1: exact), copied out. */
static struct rp_fid *rank_section(unsigned int stretch)
{
	struct setup s;
	struct rp_fidelity *f = start(&s);
	struct rp_fid *copy = malloc(sizeof(*copy));

	assert_non_null(copy);
	for (unsigned int i = 0; i < N; i++) {
		struct rp_io io = io_of(i, stretch);

		rp_fidelity__add(f, &io, &s.st);
		hist_add(&s.st.issue_err, io.issue_ns - io.intended_ns);
		s.st.late += io.issue_ns - io.intended_ns > RP_LATE_NS;
	}
	s.st.lag_max_ns = s.st.issue_err.max;
	*copy = *rp_fidelity__finish(f, &s.st);
	rp_fidelity__free(f);
	unlink(path);
	return copy;
}

/* A cluster's section: counts, lateness and histograms are the ranks' sums; the series add up
 * when the windows agree and are dropped when they do not; the verdict is every rank's. */
static void test_cluster_merge(void **state)
{
	struct rp_fid *a = rank_section(1), *b = rank_section(3), *m = calloc(1, sizeof(*m));
	struct hist lat;

	assert_non_null(m);
	assert_true(a->faithful);
	assert_false(b->faithful);
	rp_fid_merge(m, a);
	rp_fid_merge(m, b);
	rp_fid_merge_finish(m);
	assert_int_equal(m->ranks, 2);
	assert_int_equal(m->ranks_unfaithful, 1);
	assert_false(m->faithful);
	assert_true(m->fell_behind);
	assert_true(b->late_ios > N / 2);
	assert_int_equal(m->late_ios, a->late_ios + b->late_ios);
	assert_int_equal(m->timed_ios, 2 * N);
	assert_int_equal(m->rec.ios, 2 * N);
	assert_int_equal(m->rep.ios, 2 * N);
	for (unsigned int k = 0; k < RP_FID_LATE_BUCKETS; k++)
		assert_int_equal(m->late[k], a->late[k] + b->late[k]);
	hist_init(&lat);
	hist_merge(&lat, &a->rep.lat);
	hist_merge(&lat, &b->rep.lat);
	assert_memory_equal(&m->rep.lat, &lat, sizeof(lat));
	assert_int_equal(hist_count(&m->rep.gap), hist_count(&a->rep.gap) + hist_count(&b->rep.gap));
	assert_true(m->size_ks == 0); /* the same sizes on both */
	/* the distances are the merged histograms', not a mean of the ranks' */
	assert_true(m->gap_ks == dist_ks_hist(&m->rec.gap, &m->rep.gap));
	assert_true(m->lat_demerit_ns == dist_demerit_hist(&m->rec.lat, &m->rep.lat));
	/* the same trace on both: one window width, the series add up */
	assert_int_equal(m->window_ns, a->window_ns);
	assert_int_equal(m->windows, a->windows > b->windows ? a->windows : b->windows);
	for (unsigned int i = 0; i < m->windows; i++) {
		assert_int_equal(m->rec.win_ios[i], a->rec.win_ios[i] + b->rec.win_ios[i]);
		assert_int_equal(m->rep.win_ios[i], a->rep.win_ios[i] + b->rep.win_ios[i]);
	}
	assert_false(isnan(m->iops_corr));
	/* a rank whose windows are wider: no cluster series */
	b->window_ns *= 2;
	rp_fid_merge(m, b);
	rp_fid_merge_finish(m);
	assert_int_equal(m->ranks, 3);
	assert_int_equal(m->windows, 0);
	assert_int_equal(m->window_ns, 0);
	assert_true(isnan(m->iops_corr) && isnan(m->qd_corr));
	assert_int_equal(m->rec.ios, 3 * N);
	free(a);
	free(b);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_replay),  cmocka_unit_test(test_stretched_replay),
		cmocka_unit_test(test_gap_floor),     cmocka_unit_test(test_from_source),
		cmocka_unit_test(test_cluster_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
