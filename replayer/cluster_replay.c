// SPDX-License-Identifier: GPL-2.0-only
/* Cluster replay (cluster_replay.h, docs/CLUSTER.md). */
#include "cluster_replay.h"

#include "btape.h"
#include "cli.h"
#include "clock.h"
#include "cluster.h"
#include "fidelity.h"
#include "hist.h"
#include "mpjson.h"
#include "report.h"
#include "thread.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define START_MARGIN_NS 100000000ull	 /* rank 0 schedules the start this far ahead */
#define HEARTBEAT_NS 100000000ull	 /* the watchdog's exchange period */
/*
 * A rank silent this long is gone. Rank 0 waits for the ranks' beats, they wait for its verdict
 * twice as long: rank 0 has judged before any rank gives up on it (unless its watchdog lost the
 * CPU for a second; a rank that gives up on rank 0 then reports its own results, and leaves
 * ending the job to rank 0 or the launcher: ST_ROOT_ENDS). Once signalled (Open MPI SIGTERMs
 * the survivors about 1 s after a rank died and SIGKILLs them 1 s after that,
 * odls_base_sigkill_timeout) the waits shrink to the GRACE ones.
 */
#define BEAT_WAIT_NS 1000000000ll
#define VERDICT_WAIT_NS (2 * BEAT_WAIT_NS)
#define BEAT_GRACE_NS 300000000ll
#define VERDICT_GRACE_NS (2 * BEAT_GRACE_NS)
#define BEAT_LATE_NS 50000000ll /* after one rank's beat timed out, each other's may be this late */
/* Rank 0 listens this long after it judged a rank gone for its beat to come after all (a host
 * or a process stalled, not dead): a rank that answers again is merged (revive()). */
#define REVIVE_WAIT_NS BEAT_WAIT_NS
/* A rank other than 0 whose step ended with the cluster broken (a rank gone) leaves ending the
 * job to rank 0, which may be merging and reporting: it waits this long for it, then ends it. */
#define ROOT_ENDS_WAIT_NS 10000000000ull
#define TAG_BEAT 0x100	/* heartbeats, rank 0 <-> each rank */
#define TAG_REC 0x101	/* a rank's row, to rank 0 */
#define TAG_STATS 0x102 /* its stats */
#define TAG_FID 0x103	/* its fidelity section: the struct (to merge), */
#define TAG_FID_PACKED 0x104 /* and as its result trace keeps it (msgpack) */
#define FID_PACKED_MAX (256u << 10) /* 200 windows x 4 series: under 10 KiB */
#define RESULT_TIMEOUT_NS 60000000000ll	 /* preflight, the merge */
/* A rank that gave up on rank 0 still offers it its results, after its own report, this long:
 * rank 0 may only have been slow (a paused VM, a starved watchdog) and be waiting for them */
#define HANDOFF_WAIT_NS 1000000000ll
#define CLOCK_ROUNDS 64			 /* round trips per rank for its clock offset */
#define WAKE_AHEAD_NS 200000ull /* sleep (1 ns timer slack) until this long before the start, then
				* spin with sched_yield(): a rank that sleeps into the start wakes
				* late, one that spins long uses up its CPU share and loses the CPU at
				* the instant to whatever waited less (bench/cluster skew-ab) */
#define START_SPIN_AFTER_NS 1000000ull /* the start clock spins until this after the start */
#define START_RT_AFTER_NS 200000ull /* the issuing thread is SCHED_FIFO until this after it */
#define LEAD_NS 2000000ull /* returns this long before a start the scheduler times itself: its
			    * setup (allocations, first faults) takes 0.1-1 ms */
#define WHY_MAX 160
#define STDOUT_BUF_BYTES (1u << 20) /* a report leaves in one write: survivors' do not mix */

enum state {
	ST_PREFLIGHT, /* not agreed yet */
	ST_READY,     /* agreed; between steps */
	ST_STEP,      /* inside a step (watchdog running) */
	ST_OVER,      /* no more collectives but finalize */
	ST_BROKEN,    /* a collective failed: abort at close */
	ST_ROOT_ENDS, /* broken in a step, not rank 0: rank 0 ends the job (abort after a wait) */
};

enum rank_status { RS_RUNNING, RS_OK, RS_FAILED };

/* What each rank sends rank 0 at the end of a step (with its stats). */
struct rank_rec {
	int64_t first_issue; /* on rank 0's clock, minus the start instant; INT64_MIN: none */
	uint32_t copies;
	uint32_t failed;
	uint32_t fid_packed; /* bytes of its packed fidelity section that follow; 0: none */
	uint32_t gave_up;    /* it had given rank 0 up (handed over at close): it takes no part
			      * in anything after this step */
	char why[WHY_MAX];
};

/* A heartbeat: each rank's to rank 0, and rank 0's verdict back. */
struct beat {
	uint64_t stop;	  /* failed, interrupted or erring; verdict: all stop */
	uint64_t running; /* still replaying; verdict: someone is */
	uint64_t gone;	  /* verdict: ranks rank 0 lost */
};

/* The results of a rank that gave up on rank 0, for rank 0 all the same (rp_cluster__close) */
struct handoff {
	struct rank_rec rec;
	struct rp_stats st;
	struct rp_fid fid;
	char *packed;
};

struct row {
	struct rank_rec rec;
	uint64_t ios, bytes, errors, lat_p99, ierr_p99, late, issued;
	double secs;
	bool interrupted;
	char *fid_packed; /* the rank's own fidelity section (malloc'd), NULL: none */
	char verdict[RP_FID_VERDICT_MAX];
};

/*
 * The replay clock, spinning instead of sleeping until just after the start instant. For the
 * start the issuing thread runs SCHED_FIFO 1, from LEAD_NS before the instant (its wake-up
 * there and the scheduler's setup) until START_RT_AFTER_NS after it (when allowed and in the
 * normal class): at the instant the kernel runs it before any normal-class task, other ranks'
 * included, so a busy host no longer decides which rank issues first. Then it is back in the
 * normal class for the run.
 */
struct start_clock {
	struct rp_clock clk; /* first: the scheduler's pointer is this struct's */
	uint64_t (*now)(const struct rp_clock *c);		   /* the real one */
	void (*sleep_until)(const struct rp_clock *c, uint64_t t); /* the real one */
	uint64_t start, spin_until;
	uint64_t rt_until; /* SCHED_FIFO until then (CLOCK_MONOTONIC); 0: not */
	bool rt_tried;	   /* this step's start was given real-time (or refused it) */
};

struct rp_cluster {
	struct cl_comm *c;
	struct start_clock sc;
	int rank, size;
	enum state state;
	char kept[CL_REASON_MAX]; /* cli_err() of the preflight */
	struct cl_offset *off;	  /* [size] */
	int64_t shift;		  /* cl_now_ns() - the replay clock (test hook) */
	char *strs[4 + RP_MAX_MAPS];
	unsigned int nstrs;
	/* every rank's trace and result file, as it names them ("": none); exchange_files() */
	char **traces, **outs;
	bool exchanged;
	int twin; /* another rank writing this rank's -o (cl_comm__out_clash()), or -1 */
	/* rp_cluster__host_files(): the host's traces (the first nhost_traces), then the other
	 * ranks' results (pointing into traces and outs) */
	char **host_files;
	unsigned int nhost_traces, nhost_files;
	/* the step */
	uint64_t start_cl; /* start instant on this rank's cl_now_ns() clock */
	volatile sig_atomic_t *stop;
	const volatile sig_atomic_t *signalled; /* a signal came: no waiting for silent ranks */
	const struct rp_stats *st; /* read by the watchdog: errors */
	int status; /* enum rank_status, atomic */
	bool lost;    /* rank 0 stopped answering (on rank 0: never) */
	uint64_t *gone; /* rank 0: [size], when each rank that stopped answering was judged gone
			 * (mono_ns()); 0: it answers */
	bool *revived;	/* rank 0: [size], revive()'s: the late beat came in this round */
	int ngone;    /* rank 0: how many; elsewhere: rank 0's count, from its verdict */
	pthread_t wd;
	bool wd_on;
	const struct rp_fid *my_fid; /* this rank's fidelity section, sent at step_end */
	struct rp_fid *fid;	     /* rank 0: the cluster's, merged; NULL: none */
	/* rank 0: the last step's rows */
	struct row *rows;
	unsigned int copies;
	bool failed;
	bool merged; /* the last step's stats were merged (false: contact lost) */
	struct handoff *handoff; /* not rank 0, contact with it lost: its results, sent at close */
	int withhold; /* test hook: the rank not sent the last verdict; -1: none */
	/* rank 0, on one cluster recording's timeline (rp_cluster__timeline): [size], each rank's
	 * lead_ns; NULL when each trace is replayed from its own first I/O */
	uint64_t *lead;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until_mono(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
			      .tv_nsec = (long)(t % 1000000000ull)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The calling thread SCHED_FIFO 1 until sc->start + START_RT_AFTER_NS, once per step, if it is
 * in the normal class and may (root, CAP_SYS_NICE, RLIMIT_RTPRIO); else as it is. */
static void start_rt(struct start_clock *sc)
{
	struct sched_param sp = {.sched_priority = 1};

	if (sc->rt_tried)
		return;
	sc->rt_tried = true;
	/* RESET_ON_FORK: a thread made meanwhile (io_uring's io-wq worker, at the first I/O it
	 * punts) starts in the normal class, not real-time for the whole run */
	if (sched_getscheduler(0) == SCHED_OTHER &&
	    sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
		sc->rt_until = sc->start + START_RT_AFTER_NS;
}

/* Back to the normal class (its nice value is kept). */
static void start_rt_end(struct start_clock *sc)
{
	struct sched_param sp = {.sched_priority = 0};

	if (!sc->rt_until)
		return;
	sc->rt_until = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

/* Returns at t (CLOCK_MONOTONIC): sleeps until WAKE_AHEAD_NS before it, then spins, yielding
 * the CPU at every turn (ranks may share cores). */
static void wait_until_mono(uint64_t t)
{
	if (t > mono_ns() + WAKE_AHEAD_NS)
		sleep_until_mono(t - WAKE_AHEAD_NS);
	while (mono_ns() < t)
		sched_yield();
}

/*
 * Ranks send each other struct rank_rec, rp_stats, rp_fid and beat as they lie in memory (and
 * merge them field by field): every rank must run the same build (cl_comm__same_build()). What
 * this compiler made of them: their sizes and where their last fields lie.
 */
static uint64_t wire_layout(void)
{
	const uint64_t v[] = {
		sizeof(struct rank_rec),
		sizeof(struct rp_stats),
		sizeof(struct rp_fid),
		sizeof(struct beat),
		sizeof(struct hist),
		offsetof(struct rp_stats, past_depth),
		offsetof(struct rp_stats, stage),
		offsetof(struct rp_stats, lag_max_ns),
	};

	return cl_layout_hash(v, sizeof(v) / sizeof(v[0]));
}

int rp_cluster__open(struct rp_cluster **out)
{
	struct rp_cluster *rc;
	int err;

	*out = NULL;
	if (!cl_launched())
		return 0;
	rc = calloc(1, sizeof(*rc));
	if (!rc) {
		cli_err("replay: out of memory");
		return -ENOMEM;
	}
	rc->twin = -1;
	err = cl_comm__open(&rc->c, NULL, NULL);
	if (err) {
		cli_err("replay: %s", cl_comm__errmsg(rc->c));
		if (rc->c && cl_comm__is_mpi(rc->c))
			cl_comm__abort(rc->c, BTAPE_EXIT_FAIL);
		cl_comm__close(rc->c);
		free(rc);
		return err;
	}
	rc->rank = cl_comm__rank(rc->c);
	rc->size = cl_comm__size(rc->c);
	err = cl_comm__same_build(rc->c, "replay", wire_layout());
	if (err) { /* every rank saw the same: each leaves, none starts */
		if (err != -EPROTO) {
			cli_err("replay: rank %d: %s", rc->rank, cl_comm__errmsg(rc->c));
			cl_comm__abort(rc->c, BTAPE_EXIT_FAIL);
		}
		cl_comm__close(rc->c);
		free(rc);
		return err;
	}
	/* several ranks may report at once (rank 0 gone) through the launcher's stdout, which
	 * forwards what each write gave it: a report written at once is not cut into another's */
	if (rc->size > 1)
		setvbuf(stdout, NULL, _IOFBF, STDOUT_BUF_BYTES);
	rc->shift = cl_clock_shift_ns();
	/* test hook: rank 0 withholds its last verdict of a step from this rank, which then gives
	 * rank 0 up while rank 0 waits for its results (tests/cluster/cluster_faults.sh) */
	const char *wh = getenv("BIOTAPE_TEST_WITHHOLD_LAST_VERDICT");
	rc->withhold = wh && *wh ? atoi(wh) : -1;
	rc->off = calloc((size_t)rc->size, sizeof(*rc->off));
	rc->rows = calloc((size_t)rc->size, sizeof(*rc->rows));
	rc->gone = calloc((size_t)rc->size, sizeof(*rc->gone));
	rc->revived = calloc((size_t)rc->size, sizeof(*rc->revived));
	if (!rc->off || !rc->rows || !rc->gone || !rc->revived) {
		cli_err("replay: out of memory");
		cl_comm__abort(rc->c, BTAPE_EXIT_FAIL);
	}
	cl_comm__set_timeout(rc->c, RESULT_TIMEOUT_NS);
	/* until every rank agrees, a failure is this rank's refusal: rank 0 prints them all */
	cli_err_keep(rc->kept, sizeof(rc->kept));
	*out = rc;
	return 0;
}

static const char *keep_str(struct rp_cluster *rc, const char *pat, const char *what)
{
	char path[CL_PATH_MAX];
	int n = cl_expand_path(path, sizeof(path), pat, cl_comm__host(rc->c), rc->rank);

	if (n < 0) {
		cli_err("replay: %s '%s': %s", what, pat,
			n == -EINVAL ? "only %h (host), %r (rank) and %% expand"
				     : "too long once expanded");
		return NULL;
	}
	if (rc->nstrs >= sizeof(rc->strs) / sizeof(rc->strs[0]) ||
	    !(rc->strs[rc->nstrs] = strdup(path))) {
		cli_err("replay: out of memory");
		return NULL;
	}
	return rc->strs[rc->nstrs++];
}

static int broken(struct rp_cluster *rc, int err);

/*
 * Every rank's trace and result file (-o) as that rank expanded them itself (an MPMD launch
 * gives ranks different arguments), "" for none; a rank that failed before it knew them
 * passes NULL. Every rank takes part, or the others wait in the allgather: rp_cluster__close()
 * exchanges for a rank that left before rp_cluster__assign() did. 0; -EINVAL when this rank
 * cannot take part (said: it refuses at the agreement); another -errno when the cluster broke.
 */
static int exchange_files(struct rp_cluster *rc, const char *trace, const char *out)
{
	const char *why = NULL;
	int err;

	rc->exchanged = true;
	err = cl_comm__allgather_file(rc->c, trace, &rc->traces, &why);
	if (!err)
		err = cl_comm__allgather_file(rc->c, out, &rc->outs, &why);
	/* one rank's result would replace the other's */
	if (!err)
		err = cl_comm__out_clash(rc->c, rc->outs, out && !why, &rc->twin);
	if (err == -E2BIG) /* every rank has it (the longest name is agreed on first) */
		why = "a rank's file name is over 1 MiB";
	else if (err == -ENOMEM) { /* this rank's alone: the others wait on it in the allgather */
		cli_err("replay: rank %d: out of memory", rc->rank);
		rc->state = ST_BROKEN;
		return err;
	} else if (err) {
		return broken(rc, err);
	}
	if (why) {
		cli_err("replay: %s", why);
		return -EINVAL;
	}
	return 0;
}

/* Appends to rc->host_files what files[r] names for each rank r on this host (but this rank's
 * own with OTHERS_ONLY), each file once; none, or a sink (/dev/null), is left out. */
static void host_files(struct rp_cluster *rc, char *const *files, bool others_only)
{
	const char *host = cl_comm__host(rc->c);

	for (int r = 0; r < rc->size; r++) {
		const char *f = files[r];
		unsigned int i;

		if ((others_only && r == rc->rank) || !f[0] ||
		    strcmp(cl_comm__host_of(rc->c, r), host) != 0 ||
		    btape_output_check(f, NULL, 0) == 1)
			continue;
		for (i = 0; i < rc->nhost_files && !cli_same_file(rc->host_files[i], f); i++)
			;
		if (i == rc->nhost_files)
			rc->host_files[rc->nhost_files++] = (char *)f;
	}
}

char *const *rp_cluster__host_traces(const struct rp_cluster *rc, unsigned int *n)
{
	*n = rc ? rc->nhost_traces : 0;
	return rc ? rc->host_files : NULL;
}

char *const *rp_cluster__host_files(const struct rp_cluster *rc, unsigned int *n)
{
	*n = rc ? rc->nhost_files : 0;
	return rc ? rc->host_files : NULL;
}

int rp_cluster__assign(struct rp_cluster *rc, char **traces, unsigned int ntraces,
		       const char **trace, const char **target, struct rp_map_arg *maps,
		       unsigned int nmaps, const char **out, unsigned int *scale, bool scale_given,
		       unsigned int *copy_base)
{
	const char *t = NULL, *o = NULL;
	bool ok = true;

	if (!rc)
		return 0;
	if (ntraces > (unsigned int)rc->size) {
		cli_err("replay: %u traces for %d ranks: at most one trace per rank", ntraces,
			rc->size);
		ok = false;
	}
	ok = ok && (t = keep_str(rc, traces[(unsigned int)rc->rank % ntraces], "trace"));
	ok = ok && (!*out || (o = keep_str(rc, *out, "-o")));
	if (exchange_files(rc, ok ? t : NULL, ok && o && strcmp(o, "-") != 0 ? o : NULL) || !ok)
		return -EINVAL; /* broken, or this rank refuses at the agreement (kept) */
	if (!(rc->host_files = calloc(2 * (size_t)rc->size, sizeof(*rc->host_files)))) {
		cli_err("replay: out of memory");
		return -ENOMEM;
	}
	host_files(rc, rc->traces, false);
	rc->nhost_traces = rc->nhost_files;
	if (rc->twin >= 0) {
		char why[CL_REASON_MAX];

		cli_err("replay: -o '%s': %s", *out,
			cl_comm__clash_why(rc->c, rc->twin, why, sizeof(why)));
		return -EINVAL;
	}
	/* the other ranks' results are never this rank's target (a target is read and written
	 * while the other rank replaces the file with its result) */
	host_files(rc, rc->outs, true);
	*trace = t;
	*out = o;
	if (*target && !(*target = keep_str(rc, *target, "--target")))
		return -EINVAL;
	for (unsigned int i = 0; i < nmaps; i++)
		if (!(maps[i].dst = keep_str(rc, maps[i].dst, "--map")))
			return -EINVAL;
	if (scale_given) {
		unsigned int n = *scale, size = (unsigned int)rc->size;

		if (n < size) {
			cli_err("replay: --scale %u over %u ranks: at least one copy per rank", n,
				size);
			return -EINVAL;
		}
		unsigned int r = (unsigned int)rc->rank;

		*scale = n / size + (r < n % size);
		*copy_base = r * (n / size) + (r < n % size ? r : n % size);
	}
	return 0;
}

/* cli_err()'s text without its "replay: ". */
static const char *reason(const char *kept)
{
	if (!kept[0])
		return "failed before the start";
	return strncmp(kept, "replay: ", 8) == 0 ? kept + 8 : kept;
}

/* A collective failed: this rank can take part in no other (it aborts the job at close). */
static int broken(struct rp_cluster *rc, int err)
{
	cli_err("replay: rank %d: %s", rc->rank, cl_comm__errmsg(rc->c));
	rc->state = ST_BROKEN;
	return err;
}

/*
 * The cluster broke inside a step (a rank is gone, rank 0 included, or this rank cannot take
 * part): no collective can complete any more. Rank 0 ends the job at close, once it has merged
 * what came and reported. Any other rank must not end it first: rank 0 may be alive and still
 * reporting, and MPI_Abort would kill it mid-report.
 */
static void step_broken(struct rp_cluster *rc)
{
	rc->state = rc->rank == 0 ? ST_BROKEN : ST_ROOT_ENDS;
}

static int agree(struct rp_cluster *rc, const char *refusal)
{
	char *lines = NULL;
	int n;

	cli_err_keep(NULL, 0);
	n = cl_comm__agree(rc->c, refusal, &lines);
	if (n < 0)
		return broken(rc, n);
	if (n > 0) {
		/* one line per refusing rank: "host H rank R: target: reason" */
		cli_err_lines("replay: ", lines);
		free(lines);
		rc->state = ST_OVER;
		return n;
	}
	rc->state = ST_READY;
	return 0;
}

int rp_cluster__agree(struct rp_cluster *rc)
{
	int err;

	if (!rc)
		return 0;
	err = agree(rc, NULL);
	if (err)
		return err;
	err = cl_comm__clock_offsets(rc->c, CLOCK_ROUNDS, rc->off);
	return err ? broken(rc, err) : 0;
}

/* FNV-1a of a recording id: equal ids, equal hashes (different ones collide with p 2^-64) */
static uint64_t id_hash(const char *id)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 0x100000001b3ull;
	return h;
}

int rp_cluster__timeline(struct rp_cluster *rc, const struct btape_cluster *cl,
			 uint64_t first_issue_ns, uint64_t *lead_ns)
{
	/* a trace without events (UINT64_MAX) takes part in every collective, and leads nothing */
	uint64_t ref = first_issue_ns == UINT64_MAX ? UINT64_MAX
						    : btape_cluster_to_reference(cl, first_issue_ns);
	/* one recording when every rank has an id, and the smallest and largest hash agree */
	uint64_t v[3] = {cl->id[0] ? id_hash(cl->id) : 0, cl->id[0] ? ~id_hash(cl->id) : 0, ref};
	int err;

	*lead_ns = 0;
	if (!rc || rc->size < 2)
		return 0;
	if (rc->rank == 0 && !(rc->lead = calloc((size_t)rc->size, sizeof(*rc->lead)))) {
		cli_err("replay: rank 0: out of memory");
		rc->state = ST_BROKEN; /* the job ends at close: the others wait in vain */
		return -ENOMEM;
	}
	err = cl_comm__allreduce_u64(rc->c, v, 3, CL_MIN);
	if (err)
		return broken(rc, err);
	if (!v[0] || v[0] != ~v[1]) {
		free(rc->lead);
		rc->lead = NULL;
		return 0;
	}
	/* each trace's first I/O on the recording's reference clock; the earliest is the origin */
	*lead_ns = ref == UINT64_MAX ? 0 : ref - v[2];
	err = cl_comm__gather(rc->c, lead_ns, sizeof(*lead_ns), rc->lead, 0);
	return err ? broken(rc, err) : 0;
}

/* Every rank says whether it goes on; all go on, or all stop. */
static int go_on(struct rp_cluster *rc, bool stop)
{
	uint64_t v = stop;
	int err = cl_comm__allreduce_u64(rc->c, &v, 1, CL_MAX);

	if (err)
		return broken(rc, err);
	if (v) {
		rc->state = ST_OVER;
		return -ECANCELED;
	}
	return 0;
}

/*
 * Rank 0: a rank judged gone whose beat has come after all, answered again from now on. Its
 * watchdog had been stalled, not its process ended (a paused host, a starved thread): it waits
 * for its verdict and sends its results as if in time, and they are merged. The late beat waits
 * unmatched until this receive (cluster_mpi.h); no wait here for one that has not come. That
 * beat is the rank's in this round (rc->revived): it sends no other before its verdict.
 */
static void revive(struct rp_cluster *rc, struct beat *b)
{
	for (int p = 1; p < rc->size; p++) {
		struct beat in;

		rc->revived[p] = false;
		if (!rc->gone[p])
			continue;
		cl_comm__set_timeout(rc->c, 1);
		if (cl_comm__recv(rc->c, &in, sizeof(in), p, TAG_BEAT))
			continue;
		cli_err("replay: rank %d (host %s) answered again %.1f s after it was judged gone, "
			"which stopped the run: its results are merged",
			p, cl_comm__host_of(rc->c, p), (double)(mono_ns() - rc->gone[p]) / 1e9);
		rc->gone[p] = 0;
		rc->ngone--;
		rc->revived[p] = true;
		b->stop |= in.stop;
		b->running |= in.running;
	}
}

/* Rank 0: whether a rank judged gone may still answer (revive()): until REVIVE_WAIT_NS after
 * the last was judged, none after a signal (the launcher's SIGKILL follows). */
static bool reviving(const struct rp_cluster *rc)
{
	uint64_t last = 0;

	if (!rc->ngone || (rc->signalled && *rc->signalled))
		return false;
	for (int p = 1; p < rc->size; p++)
		if (rc->gone[p] > last)
			last = rc->gone[p];
	return mono_ns() - last <= (uint64_t)REVIVE_WAIT_NS;
}

/* Rank 0: a beat from every rank not lost yet, all within BEAT_WAIT_NS (a rank whose
 * beat does not come is gone: the others stop), then the verdict to each. While a rank judged
 * gone may still answer, the verdict says someone runs: every rank keeps beating, and the last
 * verdict carries the last count of ranks gone, which decides whether the job goes on. */
static void beat_root(struct rp_cluster *rc, struct beat *b)
{
	uint64_t t0 = mono_ns();
	bool late = false;

	revive(rc, b);
	for (int p = 1; p < rc->size; p++) {
		int64_t left = BEAT_WAIT_NS - (int64_t)(mono_ns() - t0);
		struct beat in;

		if (rc->gone[p] || rc->revived[p])
			continue;
		/* every rank beat at the same instant: while rank 0 waited for a silent one, the
		 * others' beats had that time to come */
		if (late || left < BEAT_LATE_NS)
			left = BEAT_LATE_NS;
		cl_comm__set_timeout(rc->c, left);
		if (cl_comm__recv(rc->c, &in, sizeof(in), p, TAG_BEAT)) {
			rc->gone[p] = mono_ns();
			rc->ngone++;
			late = true;
			continue;
		}
		b->stop |= in.stop;
		b->running |= in.running;
	}
	b->gone = (uint64_t)rc->ngone;
	b->stop |= b->gone != 0;
	if (!b->running && reviving(rc))
		b->running = 1;
	for (int p = 1; p < rc->size; p++)
		if (!rc->gone[p] && !(p == rc->withhold && !b->running) &&
		    cl_comm__send(rc->c, b, sizeof(*b), p, TAG_BEAT)) {
			rc->gone[p] = mono_ns();
			rc->ngone++;
		}
}

/* Any other rank: its beat to rank 0 and the verdict back; -errno when rank 0 is silent. */
static int beat_peer(struct rp_cluster *rc, struct beat *b)
{
	int err = cl_comm__send(rc->c, b, sizeof(*b), 0, TAG_BEAT);

	if (!err)
		err = cl_comm__recv(rc->c, b, sizeof(*b), 0, TAG_BEAT);
	if (!err)
		rc->ngone = (int)b->gone;
	return err;
}

static void *watchdog(void *arg)
{
	struct rp_cluster *rc = arg;
	uint64_t next = rc->start_cl - (uint64_t)rc->shift;

	/* rounds at the same instants on every rank (the start instant + k periods); a star
	 * through rank 0, so that whoever stops answering is known by rank */
	for (;;) {
		next += HEARTBEAT_NS;
		sleep_until_mono(next);
		int s = __atomic_load_n(&rc->status, __ATOMIC_ACQUIRE);
		/* an I/O error on this rank's target stops the cluster run (read racily: a u64) */
		uint64_t errs = rc->st ? __atomic_load_n(&rc->st->errors, __ATOMIC_RELAXED) : 0;
		struct beat b = {s == RS_FAILED || *rc->stop || errs, s == RS_RUNNING, 0};

		if (rc->rank == 0) {
			beat_root(rc, &b);
		} else if (beat_peer(rc, &b)) {
			rc->lost = true;
			*rc->stop = 1;
			break;
		}
		if (b.stop)
			*rc->stop = 1; /* a rank failed, was interrupted or is gone: everyone stops */
		if (!b.running)
			break; /* nobody runs any more */
	}
	return NULL;
}

int rp_cluster__step_begin(struct rp_cluster *rc, volatile sig_atomic_t *stop,
			   const volatile sig_atomic_t *signalled, const struct rp_stats *st,
			   bool wait, uint64_t *start_ns)
{
	int err;

	if (!rc)
		return 0;
	if (rc->state != ST_READY)
		return -EPROTO;
	err = go_on(rc, false);
	if (err) {
		if (err == -ECANCELED && rc->rank == 0)
			cli_err("replay: a rank stopped before this step: no rank starts it");
		return err;
	}
	err = cl_comm__start_instant(rc->c, rc->off, START_MARGIN_NS, &rc->start_cl);
	if (err)
		return broken(rc, err);
	rc->stop = stop;
	rc->signalled = signalled;
	rc->st = st;
	rc->merged = false;
	rc->status = RS_RUNNING;
	rc->lost = false;
	rc->state = ST_STEP;
	cl_comm__set_timeout(rc->c, rc->rank == 0 ? BEAT_WAIT_NS : VERDICT_WAIT_NS);
	/* a signal only: a stop the watchdog raised (a failed or lost rank) leaves the ranks that
	 * answer their usual time to send their results */
	cl_comm__set_hurry(rc->c, signalled, rc->rank == 0 ? BEAT_GRACE_NS : VERDICT_GRACE_NS);
	err = rp_thread_create(&rc->wd, NULL, watchdog, rc);
	if (err) {
		/* without the watchdog this rank cannot take part: the others time out */
		cli_err("replay: rank %d: cannot start the watchdog: %s", rc->rank, strerror(err));
		step_broken(rc);
		return -err;
	}
	rc->wd_on = true;
	pthread_setname_np(rc->wd, "bt-heartbeat"); /* tests wait for it: the step has begun */
	uint64_t start = rc->start_cl - (uint64_t)rc->shift;
	*start_ns = start;
	rc->sc.start = start;
	rc->sc.spin_until = start + START_SPIN_AFTER_NS;
	rc->sc.rt_tried = false;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* the default 50 us would be the skew */
	/* real-time from here (after the watchdog's creation: it keeps the normal class), so that
	 * the wake-up LEAD_NS ahead and the scheduler's setup are not a busy host's to delay */
	start_rt(&rc->sc);
	if (wait)
		wait_until_mono(start);
	else /* the scheduler waits for the instant itself, through rp_cluster__clock() */
		sleep_until_mono(start - LEAD_NS);
	return 0;
}

/* The scheduler's clock: ends the start's real-time once past it (start_rt()). */
static uint64_t start_now(const struct rp_clock *c)
{
	struct start_clock *sc = (struct start_clock *)c;
	uint64_t t = sc->now(c);

	if (sc->rt_until && t >= sc->rt_until)
		start_rt_end(sc);
	return t;
}

static void start_sleep_until(const struct rp_clock *c, uint64_t t)
{
	struct start_clock *sc = (struct start_clock *)c;

	if (t > sc->spin_until) {
		sc->sleep_until(c, t);
		return;
	}
	/* as wait_until_mono(), on the scheduler's clock; the scheduler itself then spins its
	 * --spin-us to the deadline */
	if (t > c->now(c) + WAKE_AHEAD_NS)
		sc->sleep_until(c, t - WAKE_AHEAD_NS);
	while (c->now(c) < t)
		sched_yield();
}

/*
 * The scheduler's own spin to a deadline, until START_SPIN_AFTER_NS after the start: ranks
 * sharing cores spin together there, and one that spins without yielding keeps the CPU from a
 * rank still waiting for it to issue its first I/O (a time slice, ms).
 */
static void start_relax(const struct rp_clock *c)
{
	const struct start_clock *sc = (const struct start_clock *)c;

	if (c->now(c) < sc->spin_until)
		sched_yield();
}

const struct rp_clock *rp_cluster__clock(struct rp_cluster *rc, const struct rp_clock *real)
{
	if (!rc)
		return real;
	rc->sc.clk = *real;
	rc->sc.now = real->now;
	rc->sc.sleep_until = real->sleep_until;
	rc->sc.clk.now = start_now;
	rc->sc.clk.sleep_until = start_sleep_until;
	rc->sc.clk.relax = start_relax;
	return &rc->sc.clk;
}

void rp_stats_merge(struct rp_stats *dst, const struct rp_stats *src)
{
	bool empty = !dst->issued, src_empty = !src->issued;
	/* the worst lag's deadline, absolute while the merged start moves */
	uint64_t lag_at = dst->start_ns + dst->lag_at_ns;

	if (!src_empty && src->lag_max_ns > dst->lag_max_ns) {
		dst->lag_max_ns = src->lag_max_ns;
		lag_at = src->start_ns + src->lag_at_ns;
	}
	if (!src_empty) {
		if (empty || src->start_ns < dst->start_ns)
			dst->start_ns = src->start_ns;
		if (empty || src->measure_start_ns < dst->measure_start_ns)
			dst->measure_start_ns = src->measure_start_ns;
		if (empty || src->end_ns > dst->end_ns)
			dst->end_ns = src->end_ns;
		if (empty || src->loops < dst->loops)
			dst->loops = src->loops;
	}
	dst->issued += src->issued;
	dst->completed += src->completed;
	for (unsigned int i = 0; i < RP_IO__COUNT; i++) {
		dst->ios[i] += src->ios[i];
		dst->bytes[i] += src->bytes[i];
		hist_merge(&dst->lat[i], &src->lat[i]);
	}
	hist_merge(&dst->issue_err, &src->issue_err);
	dst->late += src->late;
	dst->depth_capped += src->depth_capped;
	dst->held += src->held;
	dst->past_depth += src->past_depth;
	dst->capped_slots += src->capped_slots;
	dst->capped_flush_slots += src->capped_flush_slots;
	dst->flush_overlapped += src->flush_overlapped;
	dst->flush_waited += src->flush_waited;
	dst->flush_wait_ns += src->flush_wait_ns;
	for (unsigned int i = 0; i < 32; i++)
		dst->skipped[i] += src->skipped[i];
	dst->unsupported += src->unsupported;
	dst->unmapped += src->unmapped;
	dst->sub_block += src->sub_block;
	if (!dst->errors && src->errors) {
		dst->first_error = src->first_error;
		dst->first_error_offset = src->first_error_offset;
	}
	dst->errors += src->errors;
	dst->events += src->events;
	if (src->max_inflight > dst->max_inflight)
		dst->max_inflight = src->max_inflight;
	dst->interrupted |= src->interrupted;
	dst->duration_hit |= src->duration_hit;
	dst->lag_at_ns = dst->lag_max_ns ? lag_at - dst->start_ns : 0;
	/* the longest of any rank's: the union over ranks of the time behind is not kept */
	if (src->behind_ns > dst->behind_ns)
		dst->behind_ns = src->behind_ns;
	for (unsigned int i = 0; i < sizeof(dst->dep_waited) / sizeof(dst->dep_waited[0]); i++) {
		dst->dep_waited[i] += src->dep_waited[i];
		dst->dep_wait_ns[i] += src->dep_wait_ns[i];
	}
	dst->dep_window_full += src->dep_window_full;
	/* the issuing threads' figures, summed over the ranks (every field a u64 time or count) */
	_Static_assert(sizeof(struct rp_stage) % sizeof(uint64_t) == 0, "rp_stage: u64s only");
	const uint64_t *s = (const uint64_t *)&src->stage;
	uint64_t *d = (uint64_t *)&dst->stage;
	for (size_t i = 0; i < sizeof(dst->stage) / sizeof(uint64_t); i++)
		d[i] += s[i];
}

static void fill_row(struct row *r, const struct rp_stats *st)
{
	struct hist all;

	hist_init(&all);
	for (unsigned int i = 0; i < RP_IO__COUNT; i++) {
		r->ios += st->ios[i];
		r->bytes += st->bytes[i];
		hist_merge(&all, &st->lat[i]);
	}
	r->errors = st->errors;
	r->late = st->late;
	r->issued = st->issue_err.count;
	r->lat_p99 = hist_quantile(&all, 0.99);
	r->ierr_p99 = hist_quantile(&st->issue_err, 0.99);
	r->secs = rp_stats_seconds(st);
	r->interrupted = st->interrupted;
}

/* Rank 0: rank p's row, its stats and, when it has one, its fidelity section (*fid, and as
 * packed in *packed, malloc'd). 0, or non-zero when p does not answer. */
static int recv_rank(struct rp_cluster *rc, int p, struct rank_rec *rec, struct rp_stats *st,
		     struct rp_fid *fid, char **packed)
{
	if (cl_comm__recv(rc->c, rec, sizeof(*rec), p, TAG_REC) ||
	    cl_comm__recv(rc->c, st, sizeof(*st), p, TAG_STATS))
		return -1;
	if (!rec->fid_packed)
		return 0;
	if (rec->fid_packed > FID_PACKED_MAX || !(*packed = malloc(rec->fid_packed)))
		return -1;
	return cl_comm__recv(rc->c, fid, sizeof(*fid), p, TAG_FID) ||
	       cl_comm__recv(rc->c, *packed, rec->fid_packed, p, TAG_FID_PACKED);
}

void rp_cluster__set_fidelity(struct rp_cluster *rc, const struct rp_fid *fid)
{
	if (rc)
		rc->my_fid = fid;
}

const struct rp_fid *rp_cluster__fidelity(const struct rp_cluster *rc)
{
	return rp_cluster__multi(rc) && rc->rank == 0 && rc->fid && rc->fid->ranks ? rc->fid
										    : NULL;
}

/* Not rank 0: this rank's results to rank 0 (recv_rank()); 0 or -errno. */
static int send_results(struct rp_cluster *rc, const struct rank_rec *rec, const struct rp_stats *st,
			const struct rp_fid *fid, const char *packed)
{
	int err = cl_comm__send(rc->c, rec, sizeof(*rec), 0, TAG_REC);

	if (!err)
		err = cl_comm__send(rc->c, st, sizeof(*st), 0, TAG_STATS);
	if (!err && rec->fid_packed)
		err = cl_comm__send(rc->c, fid, sizeof(*fid), 0, TAG_FID);
	if (!err && rec->fid_packed)
		err = cl_comm__send(rc->c, packed, rec->fid_packed, 0, TAG_FID_PACKED);
	return err;
}

int rp_cluster__step_end(struct rp_cluster *rc, struct rp_stats *st, unsigned int copies,
			 uint64_t first_issue_ns, const char *why)
{
	struct rank_rec rec = {.first_issue = INT64_MIN};
	struct rank_rec *recs = NULL;
	struct rp_stats *mine = NULL, *all = NULL;
	struct rp_fid *fid = NULL; /* rank 0: a peer's section, received */
	char *packed = NULL, **pks = NULL, *verdicts = NULL;
	size_t packed_len = 0;
	int err = -ENOMEM;

	if (!rc)
		return 0;
	if (rc->state != ST_STEP)
		return -EPROTO;
	start_rt_end(&rc->sc); /* a run shorter than the start's real-time */
	__atomic_store_n(&rc->status, why ? RS_FAILED : RS_OK, __ATOMIC_RELEASE);
	pthread_join(rc->wd, NULL);
	rc->wd_on = false;
	cl_comm__set_timeout(rc->c, RESULT_TIMEOUT_NS);
	if (rc->lost && st)
		st->interrupted = true;
	/* times onto rank 0's clock: + the test shift (replay clock -> cl clock) - offset */
	int64_t to0 = rc->shift - rc->off[rc->rank].offset_ns;
	uint64_t t0 = rc->start_cl - (uint64_t)rc->off[rc->rank].offset_ns; /* rank 0's clock */

	mine = calloc(1, sizeof(*mine));
	if (rc->rank == 0) {
		recs = calloc((size_t)rc->size, sizeof(*recs));
		all = calloc((size_t)rc->size, sizeof(*all));
	}
	if (!mine || (rc->rank == 0 && (!recs || !all)))
		goto fatal;
	if (st) {
		*mine = *st;
		if (mine->issued) {
			mine->start_ns += (uint64_t)to0;
			mine->measure_start_ns += (uint64_t)to0;
			mine->end_ns += (uint64_t)to0;
		}
	}
	if (first_issue_ns)
		rec.first_issue = (int64_t)(first_issue_ns + (uint64_t)to0 - t0);
	rec.copies = copies;
	rec.failed = why != NULL || (st && st->interrupted);
	if (why)
		snprintf(rec.why, sizeof(rec.why), "%s", why);
	else if (st && st->interrupted)
		snprintf(rec.why, sizeof(rec.why), "interrupted");
	if (rc->my_fid && !rp_fid_pack(rc->my_fid, &packed, &packed_len) &&
	    packed_len <= FID_PACKED_MAX)
		rec.fid_packed = (uint32_t)packed_len;
	if (rc->lost) {
		/* nobody merges: this rank reports what it has (rp_cluster__reports()), then offers
		 * it to rank 0 all the same, which may only have been slow and wait for it */
		cli_err("replay: rank 0 (host %s) is gone: no heartbeat from it; rank %d reports its "
			"own results only",
			cl_comm__host_of(rc->c, 0), rc->rank);
		free(rc->handoff);
		if ((rc->handoff = calloc(1, sizeof(*rc->handoff)))) {
			rc->handoff->rec = rec;
			rc->handoff->rec.gave_up = 1;
			snprintf(rc->handoff->rec.why, sizeof(rec.why),
				 "interrupted (it lost rank 0's heartbeat and reported its own results)");
			rc->handoff->st = *mine;
			if (rec.fid_packed) {
				rc->handoff->fid = *rc->my_fid;
				rc->handoff->packed = packed;
				packed = NULL;
			}
		}
		step_broken(rc);
		err = -ENOTCONN;
		goto cleanup;
	}
	/* point to point, from the ranks still answering (a gather would wait for a dead one) */
	if (rc->rank != 0) {
		if ((err = send_results(rc, &rec, mine, rc->my_fid, packed)))
			goto fatal;
	} else {
		if (!rc->fid)
			rc->fid = malloc(sizeof(*rc->fid));
		fid = malloc(sizeof(*fid));
		pks = calloc((size_t)rc->size, sizeof(*pks));
		verdicts = calloc((size_t)rc->size, RP_FID_VERDICT_MAX);
		if (!rc->fid || !fid || !pks || !verdicts)
			goto fatal;
		memset(rc->fid, 0, sizeof(*rc->fid));
		recs[0] = rec;
		all[0] = *mine;
		if (rec.fid_packed) {
			rp_fid_merge(rc->fid, rc->my_fid);
			rp_fid_verdict(rc->my_fid, verdicts, RP_FID_VERDICT_MAX);
			pks[0] = packed;
			packed = NULL;
		}
		for (int p = 1; p < rc->size; p++) {
			if (!rc->gone[p] && recv_rank(rc, p, &recs[p], &all[p], fid, &pks[p])) {
				rc->gone[p] = mono_ns();
				rc->ngone++;
			}
			if (rc->gone[p]) {
				memset(&recs[p], 0, sizeof(recs[p]));
				memset(&all[p], 0, sizeof(all[p]));
				recs[p].first_issue = INT64_MIN;
				recs[p].failed = 1;
				snprintf(recs[p].why, sizeof(recs[p].why),
					 "gone: no heartbeat or results from it (died or hung)");
			} else if (recs[p].fid_packed) {
				rp_fid_merge(rc->fid, fid);
				rp_fid_verdict(fid, verdicts + (size_t)p * RP_FID_VERDICT_MAX,
					       RP_FID_VERDICT_MAX);
			}
		}
		rp_fid_merge_finish(rc->fid);
	}
	if (rc->rank == 0) {
		struct rp_stats *merged = mine; /* reused: rank 0's own is in all[0] */

		memset(merged, 0, sizeof(*merged));
		rc->failed = false;
		rc->copies = 0;
		for (int r = 0; r < rc->size; r++) {
			rp_stats_merge(merged, &all[r]);
			free(rc->rows[r].fid_packed);
			memset(&rc->rows[r], 0, sizeof(rc->rows[r]));
			rc->rows[r].rec = recs[r];
			fill_row(&rc->rows[r], &all[r]);
			rc->rows[r].fid_packed = pks[r];
			pks[r] = NULL;
			memcpy(rc->rows[r].verdict, verdicts + (size_t)r * RP_FID_VERDICT_MAX,
			       RP_FID_VERDICT_MAX);
			rc->failed |= recs[r].failed != 0;
			rc->copies += recs[r].copies;
		}
		merged->interrupted |= rc->failed;
		/* named now, before the report: after a rank died the launcher SIGKILLs the others
		 * about 2 s later, and these lines say what happened */
		for (int r = 0; r < rc->size; r++)
			if (recs[r].failed)
				cli_err("replay: rank %d (host %s): %s", r,
					cl_comm__host_of(rc->c, r), recs[r].why);
		if (st)
			*st = *merged;
	}
	rc->merged = true;
	bool gave_up = false;

	for (int p = 1; rc->rank == 0 && p < rc->size; p++)
		gave_up |= recs[p].gave_up != 0;
	if (rc->ngone || gave_up)
		step_broken(rc);
	else
		rc->state = ST_READY;
	err = 0;
	goto cleanup;
fatal:
	cli_err("replay: rank %d: merging the results: %s", rc->rank,
		err == -ENOMEM ? "out of memory" : cl_comm__errmsg(rc->c));
	step_broken(rc);
cleanup:
	for (int r = 0; pks && r < rc->size; r++)
		free(pks[r]);
	free(pks);
	free(verdicts);
	free(packed);
	free(fid);
	free(mine);
	free(recs);
	free(all);
	return err;
}

bool rp_cluster__reports(const struct rp_cluster *rc)
{
	return !rc || rc->rank == 0 || rc->lost;
}

bool rp_cluster__multi(const struct rp_cluster *rc)
{
	return rc && rc->size > 1 && rc->merged;
}

bool rp_cluster__has_report(const struct rp_cluster *rc)
{
	return rp_cluster__multi(rc) || (rc && rc->lost);
}

unsigned int rp_cluster__copies(const struct rp_cluster *rc)
{
	return rc ? rc->copies : 0;
}

bool rp_cluster__failed(const struct rp_cluster *rc)
{
	return rc && rc->failed;
}

/* Spread of the first issues (ns), 0 with fewer than one. */
static uint64_t start_skew(const struct rp_cluster *rc)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (int r = 0; r < rc->size; r++) {
		int64_t f = rc->rows[r].rec.first_issue;

		if (f == INT64_MIN)
			continue;
		lo = f < lo ? f : lo;
		hi = f > hi ? f : hi;
	}
	return hi >= lo ? (uint64_t)(hi - lo) : 0;
}

void rp_cluster__report_head(const struct rp_cluster *rc, FILE *fp)
{
	if (!rc || !rc->lost)
		return;
	fprintf(fp,
		"== rank %d (host %s) of %d: rank 0 (host %s) is gone; this rank's own results "
		"==\n",
		rc->rank, cl_comm__host(rc->c), rc->size, cl_comm__host_of(rc->c, 0));
}

void rp_cluster__report_text(const struct rp_cluster *rc, FILE *fp)
{
	char a[32], b[32];

	if (rc && rc->lost) {
		fprintf(fp, "  cluster: %d ranks; rank 0 (host %s) is gone: rank %d's (host %s) own results only\n",
			rc->size, cl_comm__host_of(rc->c, 0), rc->rank, cl_comm__host(rc->c));
		return;
	}
	if (!rp_cluster__multi(rc) || rc->rank != 0)
		return;
	fprintf(fp,
		"  cluster: %d ranks; start skew %.1f us (spread of the ranks' first issues on rank "
		"0's clock, less each rank's lead)\n",
		rc->size, (double)start_skew(rc) / 1e3);
	if (rc->lead) {
		fprintf(fp, "  timeline: one cluster recording's; each rank's first I/O after the "
			    "earliest:");
		for (int r = 0; r < rc->size; r++)
			fprintf(fp, " %s", cli_fmt_ns(rc->lead[r], a, sizeof(a)));
		fputc('\n', fp);
	} else {
		fprintf(fp, "  timeline: each rank's trace from its own first I/O (the traces are "
			    "not one cluster recording)\n");
	}
	fprintf(fp, "  %4s %-16s %10s %10s %9s %10s %10s %12s %18s %s\n", "rank", "host", "ios",
		"IOPS", "MB/s", "p99", "issue p99", "first issue", "clock offset", "status");
	for (int r = 0; r < rc->size; r++) {
		const struct row *w = &rc->rows[r];
		char first[32], off[48];

		if (w->rec.first_issue == INT64_MIN)
			snprintf(first, sizeof(first), "-");
		else
			snprintf(first, sizeof(first), "%+.1f us", (double)w->rec.first_issue / 1e3);
		snprintf(off, sizeof(off), "%+.1f+-%.1f us", (double)rc->off[r].offset_ns / 1e3,
			 (double)rc->off[r].uncert_ns / 1e3);
		fprintf(fp, "  %4d %-16.16s %10" PRIu64 " %10.0f %9.1f %10s %10s %12s %18s %s\n", r,
			cl_comm__host_of(rc->c, r), w->ios, w->secs > 0 ? (double)w->ios / w->secs : 0,
			w->secs > 0 ? (double)w->bytes / w->secs / 1e6 : 0,
			cli_fmt_ns(w->lat_p99, a, sizeof(a)), cli_fmt_ns(w->ierr_p99, b, sizeof(b)),
			first, off, w->rec.failed ? w->rec.why : "ok");
	}
	if (!rc->fid || !rc->fid->ranks)
		return;
	fprintf(fp, "  fidelity per rank (each against its own trace; late: issued > %llu us after "
		    "its deadline):\n", RP_LATE_NS / 1000);
	for (int r = 0; r < rc->size; r++) {
		const struct row *w = &rc->rows[r];

		if (!w->fid_packed)
			fprintf(fp, "  %4d  -\n", r);
		else
			fprintf(fp, "  %4d  late %7.3f%%  %s\n", r,
				w->issued ? 100.0 * (double)w->late / (double)w->issued : 0.0,
				w->verdict);
	}
}

void rp_cluster__report_json(const struct rp_cluster *rc, FILE *fp)
{
	if (rc->lost) {
		fprintf(fp, "\"cluster\":{\"ranks\":%d,\"reporting_rank\":%d,\"host\":", rc->size,
			rc->rank);
		cli_json_str(fp, cl_comm__host(rc->c));
		fputs(",\"status\":\"rank 0 is gone: this rank's own results only\"}", fp);
		return;
	}
	fprintf(fp, "\"cluster\":{\"ranks\":%d,\"start_skew_ns\":%" PRIu64
		",\"timeline\":\"%s\",\"rank\":[",
		rc->size, start_skew(rc), rc->lead ? "recording" : "own");
	for (int r = 0; r < rc->size; r++) {
		const struct row *w = &rc->rows[r];

		fprintf(fp, "%s{\"rank\":%d,\"host\":", r ? "," : "", r);
		cli_json_str(fp, cl_comm__host_of(rc->c, r));
		fprintf(fp,
			",\"ios\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"errors\":%" PRIu64
			",\"p99_ns\":%" PRIu64 ",\"issue_error_p99_ns\":%" PRIu64,
			w->ios, w->bytes, w->secs, w->errors, w->lat_p99, w->ierr_p99);
		if (w->rec.first_issue != INT64_MIN)
			fprintf(fp, ",\"first_issue_ns\":%" PRId64, w->rec.first_issue);
		if (rc->lead)
			fprintf(fp, ",\"lead_ns\":%" PRIu64, rc->lead[r]);
		fprintf(fp,
			",\"clock_offset_ns\":%" PRId64 ",\"clock_uncertainty_ns\":%" PRIu64
			",\"status\":",
			rc->off[r].offset_ns, rc->off[r].uncert_ns);
		cli_json_str(fp, w->rec.failed ? w->rec.why : "ok");
		if (w->fid_packed) {
			/* this rank's own section, as its -o result trace keeps it */
			fprintf(fp, ",\"late\":%" PRIu64 ",\"fidelity\":", w->late);
			if (mpjson_write(fp, w->fid_packed, w->rec.fid_packed))
				fputs("null", fp);
		}
		fputc('}', fp);
	}
	fputs("]}", fp);
}

int rp_cluster__close(struct rp_cluster *rc, int ret)
{
	if (!rc)
		return ret;
	if (rc->state == ST_PREFLIGHT && !rc->exchanged) /* left before the exchange: take part */
		exchange_files(rc, NULL, NULL);
	if (rc->state == ST_PREFLIGHT) /* left before the agreement: refuse, so nobody starts */
		agree(rc, ret ? reason(rc->kept) : NULL);
	if (rc->state == ST_STEP) /* left inside a step: the others stop; take part in the merge */
		rp_cluster__step_end(rc, NULL, 0, 0, ret ? reason(rc->kept) : "stopped");
	if (rc->state == ST_READY) /* tell the others that this rank goes no further */
		go_on(rc, true);
	cli_err_keep(NULL, 0);
	if (rc->failed && ret == BTAPE_EXIT_OK)
		ret = BTAPE_EXIT_FAIL;
	fflush(stdout);
	fflush(stderr);
	if (rc->handoff) { /* after this rank's own report: rank 0 may be alive and waiting */
		cl_comm__set_timeout(rc->c, HANDOFF_WAIT_NS);
		if (!send_results(rc, &rc->handoff->rec, &rc->handoff->st, &rc->handoff->fid,
				  rc->handoff->packed))
			cli_info(1, "replay: rank %d (host %s) handed its results to rank 0", rc->rank,
				 cl_comm__host(rc->c));
		free(rc->handoff->packed);
		free(rc->handoff);
		rc->handoff = NULL;
	}
	if (rc->state == ST_ROOT_ENDS) /* rank 0 ends the job (the launcher, if rank 0 died) */
		sleep_until_mono(mono_ns() + ROOT_ENDS_WAIT_NS);
	if (rc->state == ST_BROKEN || rc->state == ST_ROOT_ENDS) {
		cli_info(1, "replay: rank %d (host %s) ends the job (MPI_Abort)", rc->rank,
			 cl_comm__host(rc->c));
		fflush(stderr);
		cl_comm__abort(rc->c, ret ? ret : BTAPE_EXIT_FAIL);
	}
	cl_comm__close(rc->c);
	for (unsigned int i = 0; i < rc->nstrs; i++)
		free(rc->strs[i]);
	free(rc->host_files);
	free(rc->traces);
	free(rc->outs);
	free(rc->off);
	for (int r = 0; r < rc->size; r++)
		free(rc->rows[r].fid_packed);
	free(rc->rows);
	free(rc->lead);
	free(rc->gone);
	free(rc->revived);
	free(rc->fid);
	free(rc);
	return ret;
}
