// SPDX-License-Identifier: GPL-2.0-only
/* Cluster recording on the cluster layer: agreement, clocks, common start and stop, summary. */
#include "rec_cluster.h"

#include "btape.h"
#include "cli.h"
#include "cluster.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLOCK_ROUNDS 64		      /* round trips per rank for one offset */
#define START_MARGIN_NS 100000000ull  /* rank 0 schedules the start this far ahead */
#define STOP_TICK_NS 100000000ull     /* the ranks decide together whether to stop */
#define TICK_TEST_NS 5000000ull	      /* a pending tick is tested at most this often */
#define SETUP_TIMEOUT_NS 60000000000ll /* preflight, attach, summary */
#define TICK_TIMEOUT_NS 10000000000ll /* a peer silent this long at a tick: it is gone */
#define AGREEMENTS 2 /* after the preflight, after attaching (cmd_record.c) */

struct rec_cluster {
	struct cl_comm *c;
	int rank, size;
	int nagree;    /* agreements taken part in */
	bool over;     /* some rank refused: nobody records */
	bool broken;   /* the communicator failed: abort at the close */
	char kept[CL_REASON_MAX];
	struct cl_offset *off;
	uint64_t start_cl; /* common start on this rank's cl_now_ns() */
	uint64_t next_tick;
	uint64_t tick[2]; /* the pending tick's allreduce: [0] stop hard, [1] a command runs */
	bool ticking;	  /* ... which is pending */
	uint64_t next_test; /* when to test it again */
};

/* What the ranks send each other as it lies in memory (cl_comm__same_build()): the summary
 * rows, the clock offsets. */
static uint64_t wire_layout(void)
{
	const uint64_t v[] = {
		sizeof(struct rec_cluster_row),
		offsetof(struct rec_cluster_row, out),
		sizeof(struct cl_offset),
	};

	return cl_layout_hash(v, sizeof(v) / sizeof(v[0]));
}

int rec_cluster__open(struct rec_cluster **out)
{
	struct cl_comm *c;
	struct rec_cluster *rc;
	int err;

	*out = NULL;
	err = cl_comm__open_cmd(&c, "record");
	if (err || !c)
		return err;
	rc = calloc(1, sizeof(*rc));
	if (rc)
		rc->off = calloc((size_t)cl_comm__size(c), sizeof(*rc->off));
	if (!rc || !rc->off) {
		cli_err("record: out of memory");
		cl_comm__abort(c, BTAPE_EXIT_FAIL);
	}
	rc->c = c;
	rc->rank = cl_comm__rank(c);
	rc->size = cl_comm__size(c);
	err = cl_comm__same_build(c, "record", wire_layout());
	if (err) { /* every rank saw the same: each leaves, none records */
		if (err != -EPROTO) {
			cli_err("record: rank %d: %s", rc->rank, cl_comm__errmsg(c));
			cl_comm__abort(c, BTAPE_EXIT_FAIL);
		}
		cl_comm__close(c);
		free(rc->off);
		free(rc);
		return err;
	}
	cl_comm__set_timeout(c, SETUP_TIMEOUT_NS);
	/* until every rank agrees, a failure is this rank's refusal: rank 0 prints them all
	 * (alone, messages are printed as without a launcher) */
	if (rc->size > 1)
		cli_err_keep(rc->kept, sizeof(rc->kept));
	*out = rc;
	return 0;
}

static void broken(struct rec_cluster *rc, const char *what)
{
	cli_err_keep(NULL, 0);
	cli_err("record: rank %d (host %s): %s: %s", rc->rank, cl_comm__host(rc->c), what,
		cl_comm__errmsg(rc->c));
	rc->broken = true;
}

int rec_cluster__size(const struct rec_cluster *rc)
{
	return rc ? rc->size : 1;
}

int rec_cluster__rank(const struct rec_cluster *rc)
{
	return rc ? rc->rank : 0;
}

int rec_cluster__expand(const struct rec_cluster *rc, const char *pat, char *buf, size_t len)
{
	int n;

	if (!rc) {
		n = snprintf(buf, len, "%s", pat);
		return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	n = cl_expand_path(buf, len, pat, cl_comm__host(rc->c), rc->rank);
	return n < 0 ? n : 0;
}

const char *rec_cluster__clash_why(const struct rec_cluster *rc, int r, char *buf, size_t len)
{
	return cl_comm__clash_why(rc->c, r, buf, len);
}

int rec_cluster__out_clash(struct rec_cluster *rc, const char *out)
{
	const char *why = NULL;
	char **all = NULL;
	int clash, err;

	if (!rc || rc->size == 1)
		return -1;
	err = cl_comm__allgather_file(rc->c, out, &all, &why);
	if (err == -ENOMEM) { /* this rank's alone: the others wait in the allgather */
		cli_err("record: rank %d: out of memory", rc->rank);
		cl_comm__abort(rc->c, BTAPE_EXIT_FAIL);
	}
	if (err) {
		if (err == -E2BIG)
			cli_err("record: a rank's output name is over 1 MiB");
		else
			broken(rc, "exchanging the output names");
		return -2;
	}
	/* every rank that got here takes part, whatever it found */
	err = cl_comm__out_clash(rc->c, all, out && !why, &clash);
	free(all);
	if (err) {
		broken(rc, "comparing the ranks' outputs");
		return -2;
	}
	if (why) {
		cli_err("record: -o '%s': %s", out, why);
		return -2;
	}
	return clash;
}

int rec_cluster__agree(struct rec_cluster *rc, int ret)
{
	const char *why = NULL;
	char *lines = NULL;
	int n;

	if (!rc || rc->size == 1)
		return ret;
	if (rc->broken || rc->over)
		return ret ? ret : BTAPE_EXIT_FAIL;
	rc->nagree++;
	if (ret) {
		why = rc->kept[0] ? rc->kept : "failed before the start";
		if (!strncmp(why, "record: ", 8))
			why += 8;
	}
	cli_err_keep(NULL, 0);
	n = cl_comm__agree(rc->c, why, &lines);
	if (n < 0) {
		broken(rc, "agreeing on the start");
		return BTAPE_EXIT_FAIL;
	}
	if (n > 0) {
		/* one line per refusing rank, from rank 0: "host H rank R: why" */
		cli_err_lines("record: nothing recorded: ", lines);
		free(lines);
		rc->over = true;
		return ret ? ret : BTAPE_EXIT_FAIL;
	}
	rc->kept[0] = 0;
	if (rc->nagree < AGREEMENTS)
		cli_err_keep(rc->kept, sizeof(rc->kept)); /* until the next agreement */
	return 0;
}

/* A recording id all ranks share: rank 0's host, pid and start time. */
static void make_id(struct rec_cluster *rc, char *id, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(id, len, "%.40s-%ld-%llx", cl_comm__host(rc->c), (long)getpid(),
		 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
}

int rec_cluster__clock_start(struct rec_cluster *rc, struct btape_cluster *cl, int64_t *shift)
{
	char id[CL_HOST_MAX + 64] = "";
	uint64_t local;

	*shift = 0;
	if (!rc || rc->size == 1)
		return 0; /* alone: a single-host trace, as without a launcher */
	if (rc->rank == 0)
		make_id(rc, id, sizeof(id));
	if (cl_comm__bcast(rc->c, id, sizeof(id), 0)) {
		broken(rc, "sharing the recording id");
		return BTAPE_EXIT_FAIL;
	}
	local = cl_now_ns();
	if (cl_comm__clock_offsets(rc->c, CLOCK_ROUNDS, rc->off)) {
		broken(rc, "measuring clock offsets");
		return BTAPE_EXIT_FAIL;
	}
	memset(cl, 0, sizeof(*cl));
	snprintf(cl->id, sizeof(cl->id), "%s", id);
	snprintf(cl->reference, sizeof(cl->reference), "%s", cl_comm__host_of(rc->c, 0));
	snprintf(cl->method, sizeof(cl->method), "mpi-rtt-bounds");
	cl->rank = (uint32_t)rc->rank;
	cl->ranks = (uint32_t)rc->size;
	cl->nsync = 1;
	cl->sync[0] = (struct btape_clock_sync){local, rc->off[rc->rank].offset_ns,
						rc->off[rc->rank].uncert_ns};
	*shift = cl_clock_shift_ns();
	return 0;
}

static void sleep_until_cl(uint64_t t)
{
	for (uint64_t now = cl_now_ns(); now < t; now = cl_now_ns()) {
		uint64_t d = t - now;
		struct timespec ts = {(time_t)(d / 1000000000ull), (long)(d % 1000000000ull)};

		nanosleep(&ts, NULL);
	}
}

int rec_cluster__start(struct rec_cluster *rc)
{
	if (!rc || rc->size == 1)
		return 0;
	if (cl_comm__start_instant(rc->c, rc->off, START_MARGIN_NS, &rc->start_cl)) {
		broken(rc, "choosing the start instant");
		return BTAPE_EXIT_FAIL;
	}
	sleep_until_cl(rc->start_cl);
	rc->next_tick = rc->start_cl + STOP_TICK_NS;
	cl_comm__set_timeout(rc->c, TICK_TIMEOUT_NS);
	/* a tick waits for the slowest rank: sleeping, not spinning, so that the recording's own
	 * CPU per event stays a single-host recorder's (bench/cluster/record_overhead.sh) */
	cl_comm__set_spin(rc->c, 0);
	return 0;
}

/*
 * Every rank takes part in every tick, in order: tick k starts at start + k * STOP_TICK_NS.
 * The tick's allreduce is not waited for: the recorder goes on reading its rings and looks
 * again at a later turn of the loop (every TICK_TEST_NS at most: under load the loop turns
 * at every ring wake-up, and each test is a pass of MPI's progress engine), so a rank costs
 * about what a single-host recorder does while its peers are busy (it used to poll and sleep
 * in the allreduce until the slowest peer came: +0.7 ms of CPU a second, idle).
 */
bool rec_cluster__should_stop(struct rec_cluster *rc, bool hard, bool done, bool has_cmd)
{
	uint64_t now;
	int r;

	if (!rc || rc->size == 1)
		return false; /* alone: the caller's own conditions */
	if (rc->broken)
		return true;
	now = cl_now_ns();
	if (rc->ticking && now < rc->next_test)
		return false;
	rc->next_test = now + TICK_TEST_NS;
	if (!rc->ticking) {
		if (now < rc->next_tick)
			return false;
		rc->next_tick += STOP_TICK_NS;
		rc->tick[0] = hard;
		rc->tick[1] = !done;
		if (cl_comm__allreduce_u64_start(rc->c, rc->tick, 2, CL_MAX))
			goto gone;
		rc->ticking = true;
	}
	r = cl_comm__test(rc->c);
	if (r < 0)
		goto gone;
	if (!r)
		return false;
	rc->ticking = false;
	return rc->tick[0] || (has_cmd && !rc->tick[1]);
gone:
	broken(rc, "a peer stopped answering (killed?); this host stops too");
	return true;
}

bool rec_cluster__broken(const struct rec_cluster *rc)
{
	return rc && rc->broken;
}

int rec_cluster__clock_stop(struct rec_cluster *rc, struct btape_clock_sync *y)
{
	if (!rc || rc->size == 1 || rc->broken)
		return BTAPE_EXIT_FAIL; /* no stop sync */
	cl_comm__set_timeout(rc->c, SETUP_TIMEOUT_NS);
	cl_comm__set_spin(rc->c, CL_DEFAULT_SPIN_NS); /* round trips measured without sleeps */
	if (rc->ticking && cl_comm__wait(rc->c)) { /* a tick left pending (a ring read failed) */
		broken(rc, "a peer stopped answering (killed?); this host stops too");
		return BTAPE_EXIT_FAIL;
	}
	rc->ticking = false;
	y->local_ns = cl_now_ns();
	if (cl_comm__clock_offsets(rc->c, CLOCK_ROUNDS, rc->off)) {
		broken(rc, "measuring clock offsets at the stop");
		return BTAPE_EXIT_FAIL;
	}
	y->offset_ns = rc->off[rc->rank].offset_ns;
	y->uncertainty_ns = rc->off[rc->rank].uncert_ns;
	return 0;
}

void rec_cluster__summary(struct rec_cluster *rc, const struct rec_cluster_row *row)
{
	struct rec_cluster_row *all = NULL, tot = {0};
	char b1[32], b2[32];

	if (!rc || rc->size == 1 || rc->broken)
		return;
	if (rc->rank == 0 && !(all = calloc((size_t)rc->size, sizeof(*all)))) {
		cli_err("record: out of memory");
		return;
	}
	if (cl_comm__gather(rc->c, row, sizeof(*row), all, 0)) {
		broken(rc, "gathering the summary");
		free(all);
		return;
	}
	for (int r = 0; rc->rank == 0 && r < rc->size; r++) {
		const struct rec_cluster_row *x = &all[r];

		fprintf(stderr,
			"biotape: host %s rank %d: %" PRIu64 " events, lost %" PRIu64 ", %s in %s to "
			"%s%s\n",
			cl_comm__host_of(rc->c, r), r, x->events, x->lost,
			cli_fmt_bytes(x->file_bytes, b1, sizeof(b1)),
			cli_fmt_ns(x->duration_ns, b2, sizeof(b2)), x->out,
			x->failed ? " (INCOMPLETE: see its error)" : "");
		tot.events += x->events;
		tot.lost += x->lost;
		tot.file_bytes += x->file_bytes;
		tot.failed += x->failed;
	}
	if (rc->rank == 0)
		fprintf(stderr,
			"biotape: cluster: %" PRIu64 " events on %d ranks, lost %" PRIu64
			", %s%s\n",
			tot.events, rc->size, tot.lost, cli_fmt_bytes(tot.file_bytes, b1, sizeof(b1)),
			tot.failed ? ", some traces incomplete" : "");
	free(all);
}

int rec_cluster__close(struct rec_cluster *rc, int ret)
{
	if (!rc)
		return ret;
	/* left before the agreements: refuse, so that no rank waits or starts */
	while (rc->size > 1 && !rc->over && !rc->broken && rc->nagree < AGREEMENTS)
		rec_cluster__agree(rc, ret ? ret : BTAPE_EXIT_FAIL);
	cli_err_keep(NULL, 0);
	fflush(stdout);
	fflush(stderr);
	if (rc->broken)
		cl_comm__abort(rc->c, ret ? ret : BTAPE_EXIT_FAIL);
	cl_comm__close(rc->c);
	free(rc->off);
	free(rc);
	return ret;
}

static int shift_add(void *ctx, const struct btape_event *ev)
{
	const struct rec_shift_sink *ss = ctx;
	struct btape_event e = *ev;

	e.issue_ns += (uint64_t)ss->shift;
	e.complete_ns += (e.present & BTAPE_HAS_COMPLETE) ? (uint64_t)ss->shift : 0;
	e.insert_ns += (e.present & BTAPE_HAS_INSERT) ? (uint64_t)ss->shift : 0;
	return ss->in.add(ss->in.ctx, &e);
}

static int shift_advance(void *ctx, uint64_t wm)
{
	const struct rec_shift_sink *ss = ctx;

	return ss->in.advance(ss->in.ctx, wm + (uint64_t)ss->shift);
}

static uint64_t shift_bytes(void *ctx)
{
	const struct rec_shift_sink *ss = ctx;

	return ss->in.bytes ? ss->in.bytes(ss->in.ctx) : 0;
}

void rec_sink_shift(struct rec_sink *out, struct rec_shift_sink *ss)
{
	*out = (struct rec_sink){.add = shift_add, .advance = shift_advance, .bytes = shift_bytes,
				 .ctx = ss};
}
