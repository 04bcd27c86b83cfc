// SPDX-License-Identifier: GPL-2.0-only
/* biotape analyze / profile / compare: the analyzer's commands. */
#include "cli.h"
#include "cluster.h"
#include "cmd_analyze.h"
#include "fidelity.h"
#include "input.h"
#include "phases.h"
#include "profile.h"
#include "render.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum out_kind { OUT_TEXT, OUT_JSON, OUT_HTML };

struct common {
	struct an_filter f;
	struct stats_opts so;
	bool interval_given;
	enum out_kind kind;
	const char *html_path;
	bool per_process;
	int nphases; /* profile: 1 flat (default), 0 auto, else at most that many */
	bool phases_given;
	uint64_t window_ns; /* profile: phase detection windows; compare: fidelity windows */
	char *files[256];
	int nfiles;
};

static const char analyze_usage[] =
	"usage: biotape analyze FILE... [--from T] [--to T] [--device D] [--pid N]\n"
	"                       [--interval S] [--json | --html OUT] [--ws-limit BLOCKS]\n"
	"                       [--near BYTES] [--idle-min T] [--align HOW]\n"
	"\n"
	"Characterise the workload in one or more traces (merged by issue time): counts, bytes,\n"
	"IOPS and throughput (mean, peak over 1 s windows), op mix, request sizes, sequentiality,\n"
	"seek distances, working set and skew, latency percentiles (device and queue time), queue\n"
	"depth, inter-arrival times, idle periods, per device, per process, and a timeline.\n"
	"\n"
	"  --from T, --to T   window, relative to the trace start (\"10s\", \"250ms\", \"2m\")\n"
	"  --device D         one device: name (\"nvme0n1\"), major:minor, or table index\n"
	"  --pid N            only I/O submitted by process N\n"
	"  --interval S       timeline interval (default: about 1/100 of the window)\n"
	"  --json             JSON on stdout (schema biotape.analyze/1, docs/ANALYSIS.md)\n"
	"  --html OUT         self-contained HTML report with charts (no network needed)\n"
	"  --ws-limit BLOCKS  4 KiB blocks tracked exactly before the working set is sampled\n"
	"                     (default 1048576, about 32 MiB of memory)\n"
	"  --near BYTES       near-sequential window (default 128k)\n"
	"  --idle-min T       shortest idle period counted (default 1ms)\n"
	"  --align HOW        several files on one timeline: cluster (the clock offsets stored by\n"
	"                     a cluster recording), start (every file's first I/O at the same\n"
	"                     instant), wall (the hosts' wall clocks), none (times as recorded).\n"
	"                     Default auto: cluster for the files of one cluster recording, none\n"
	"                     for one host's files; other files are refused. Files from several\n"
	"                     hosts get per-host rows and their devices are named HOST:DEVICE.\n"
	"                     A file that ended early (no footer, or stopped early) is named\n"
	"                     with its host and rank.\n"
	"Under mpirun -n N, each rank analyses a time slice (about as many events in each, by\n"
	"the files' index) and rank 0 prints the report one process would print (or analyses\n"
	"alone where that would differ, and says why).\n"
	"\n"
	"examples:\n"
	"  mpirun -n 3 biotape record -o trace-%h.btape --duration 60 ; biotape analyze trace-*.btape\n"
	"  mpirun -n 2 biotape analyze big.btape --json > report.json\n"
	"  biotape analyze db.btape --from 30s --to 90s --device nvme0n1 --html report.html\n";

static const char profile_usage[] =
	"usage: biotape profile FILE [--per-process] [--phases auto|N] [--window S] [--from T]\n"
	"                       [--to T] [--device D] > job.fio\n"
	"\n"
	"Write a fio job file that reproduces the trace's workload: bssplit per direction,\n"
	"rwmixread, percentage_random, random_distribution=zoned (from the measured skew),\n"
	"iodepth (observed queue depth), rate, offset/size range and runtime; flushes by a\n"
	"-flush job beside (fsync=1 at iodepth 1). Comments in the job say what was measured.\n"
	"The target is ${TARGET} (set it in the environment).\n"
	"\n"
	"  --per-process      one job per process (the busiest 16 with >= 1% of the I/Os)\n"
	"  --phases auto|N    split the trace where its character changes (IOPS, mix, sizes,\n"
	"                     sequential share, seek length, where the random I/O lands):\n"
	"                     one job per phase, run in sequence, each with its own rates,\n"
	"                     sizes, locality, range, zones and arrival process (Poisson,\n"
	"                     on/off bursts);\n"
	"                     N: at most N phases; 1 (the default): one flat job\n"
	"  --window S         window of the phase detection (default: 1/100 of the trace);\n"
	"                     alone, it means --phases auto\n"
	"\n"
	"example:\n"
	"  biotape profile db.btape > db.fio && TARGET=/dev/loop0 fio db.fio\n";

static const char compare_usage[] =
	"usage: biotape compare A B [--from T] [--to T] [--device D] [--window S]\n"
	"                       [--json | --html OUT]\n"
	"       biotape compare A1,A2,... B1,B2,... [--align HOW] [...]\n"
	"\n"
	"Compare two traces side by side (a recording and its replay on new storage, or two\n"
	"systems): IOPS, throughput, latency percentiles per op with ratios, latency at the same\n"
	"queue depth (and B's weighted by A's depths), request sizes and op mix; in HTML with\n"
	"overlaid latency CDFs. Text and JSON end with a fidelity score of\n"
	"B as a reproduction of A: per-window IOPS correlation, inter-arrival KS distance,\n"
	"peak-to-mean, working set, latency demerit, and per phase of A the TVD of op mix and\n"
	"sizes (docs/ANALYSIS.md). A side may be several traces joined by commas (the hosts of\n"
	"a cluster recording): they are analysed on one timeline as biotape analyze does\n"
	"(--align, see its --help).\n"
	"\n"
	"  --window S         fidelity windows (default 1s; a tenth of A when shorter than 10 s)\n"
	"\n"
	"example:\n"
	"  biotape compare prod.btape replay-on-new-array.btape --html compare.html\n";

static int parse_common(int argc, char **argv, struct common *c, const char *cmd, bool outputs,
			bool per_process)
{
	memset(c, 0, sizeof(*c));
	c->nphases = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t u;

#define NEED_ARG()                                                            \
	do {                                                                  \
		if (!v) {                                                     \
			cli_err("%s: %s needs a value (see --help)", cmd, a); \
			return -EINVAL;                                       \
		}                                                             \
		i++;                                                          \
	} while (0)
		if (strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0 ||
		    strcmp(a, "--interval") == 0 || strcmp(a, "--idle-min") == 0) {
			NEED_ARG();
			if (cli_parse_duration_ns(v, &u)) {
				cli_err("%s: %s: bad duration '%s' (e.g. 10s, 250ms)", cmd, a, v);
				return -EINVAL;
			}
			if (a[2] == 'f') {
				c->f.has_from = true;
				c->f.from_ns = u;
			} else if (a[2] == 't') {
				c->f.has_to = true;
				c->f.to_ns = u;
			} else if (a[2] == 'i' && a[3] == 'n') {
				if (!u) {
					cli_err("%s: --interval must be > 0", cmd);
					return -EINVAL;
				}
				c->so.interval_ns = u;
				c->interval_given = true;
			} else {
				c->so.idle_min_ns = u ? u : 1;
			}
		} else if (strcmp(a, "--device") == 0) {
			NEED_ARG();
			c->f.device = v;
		} else if (strcmp(a, "--align") == 0) {
			NEED_ARG();
			if (an_align_parse(v, &c->f.align)) {
				cli_err("%s: --align: '%s' is not auto, cluster, start, wall or none",
					cmd, v);
				return -EINVAL;
			}
		} else if (strcmp(a, "--pid") == 0) {
			NEED_ARG();
			if (cli_parse_u64(v, &u) || u > UINT32_MAX) {
				cli_err("%s: --pid: bad process id '%s'", cmd, v);
				return -EINVAL;
			}
			c->f.has_pid = true;
			c->f.pid = (uint32_t)u;
		} else if (strcmp(a, "--ws-limit") == 0) {
			NEED_ARG();
			if (cli_parse_u64(v, &u) || u < 16) {
				cli_err("%s: --ws-limit: need a block count >= 16, got '%s'", cmd,
					v);
				return -EINVAL;
			}
			c->so.ws_limit = u;
		} else if (strcmp(a, "--near") == 0) {
			NEED_ARG();
			if (cli_parse_size(v, &u) || !u) {
				cli_err("%s: --near: bad size '%s'", cmd, v);
				return -EINVAL;
			}
			c->so.near_seq_bytes = u;
		} else if (outputs && (strcmp(a, "--json") == 0 || strcmp(a, "--html") == 0)) {
			enum out_kind k = a[2] == 'j' ? OUT_JSON : OUT_HTML;

			if (k == OUT_HTML)
				NEED_ARG();
			if (c->kind != OUT_TEXT && c->kind != k) {
				cli_err("%s: --json and --html: one or the other", cmd);
				return -EINVAL;
			}
			c->kind = k;
			if (k == OUT_HTML)
				c->html_path = v;
		} else if (per_process && strcmp(a, "--per-process") == 0) {
			c->per_process = true;
		} else if (per_process && strcmp(a, "--phases") == 0) {
			NEED_ARG();
			if (strcmp(v, "auto") == 0) {
				c->nphases = 0;
			} else if (cli_parse_u64(v, &u) || !u || u > PHASES_MAX) {
				cli_err("%s: --phases: need auto or 1..%d, got '%s'", cmd,
					PHASES_MAX, v);
				return -EINVAL;
			} else {
				c->nphases = (int)u;
			}
			c->phases_given = true;
		} else if (strcmp(cmd, "analyze") != 0 && strcmp(a, "--window") == 0) {
			NEED_ARG();
			if (cli_parse_duration_ns(v, &u) || !u) {
				cli_err("%s: --window: bad duration '%s' (e.g. 1s, 250ms)", cmd, v);
				return -EINVAL;
			}
			c->window_ns = u;
		} else if (a[0] == '-' && a[1]) {
			cli_err("%s: unknown option '%s' (see biotape %s --help)", cmd, a, cmd);
			return -EINVAL;
		} else {
			if (c->nfiles >= (int)(sizeof(c->files) / sizeof(c->files[0]))) {
				cli_err("%s: too many files", cmd);
				return -EINVAL;
			}
			c->files[c->nfiles++] = argv[i];
		}
#undef NEED_ARG
	}
	return 0;
}

/* an_run() over FILES into *s and *info: 0, or the exit status after one line on stderr. */
static int run_one(struct common *c, char **files, int nfiles, struct stats **s,
		   struct an_info *info, const char *cmd)
{
	char msg[512];
	int err = an_run(files, nfiles, &c->f, &c->so, s, info, msg, sizeof(msg));

	if (err) {
		cli_err("%s: %s", cmd, msg);
		return cli_exit_status(err);
	}
	return 0;
}

static int write_out(const char *path, int (*fn)(FILE *, const void *), const void *arg,
		     const char *cmd, bool text)
{
	struct cli_out o;
	int err = cli_out_open(&o, path);
	FILE *fp = o.fp;

	if (err) {
		cli_err("%s: %s", cmd, o.why);
		return BTAPE_EXIT_FAIL;
	}
	/* text for a person (a terminal): the trace's names cannot drive it */
	if (text && !(fp = cli_text_stream(o.fp)))
		err = -ENOMEM;
	if (!err)
		err = fn(fp, arg);
	if (fp && fp != o.fp)
		fclose(fp); /* into o.fp, whose error cli_out_commit() reports */
	if (err) {
		cli_out_abort(&o);
		cli_err("%s: rendering failed: %s", cmd, strerror(-err));
		return BTAPE_EXIT_FAIL;
	}
	err = cli_out_commit(&o);
	if (err) {
		cli_err("%s: %s", cmd, path ? o.why : "writing stdout: write error");
		return BTAPE_EXIT_FAIL;
	}
	return BTAPE_EXIT_OK;
}

struct one_arg {
	const struct report *r;
	enum out_kind kind;
};

static int fn_one(FILE *fp, const void *p)
{
	const struct one_arg *a = p;

	switch (a->kind) {
	case OUT_JSON:
		return render_json(fp, a->r);
	case OUT_HTML:
		return render_html(fp, a->r);
	default:
		return render_text(fp, a->r);
	}
}

/* Writes the report of s (and frees it). */
static int analyze_report(struct common *c, struct stats *s, struct an_info *info)
{
	struct report r = {.s = s,
			   .info = info,
			   .paths = c->files,
			   .npaths = c->nfiles,
			   .interval_given = c->interval_given};
	struct one_arg a = {.r = &r, .kind = c->kind};
	int rc = write_out(c->kind == OUT_HTML ? c->html_path : NULL, fn_one, &a, "analyze",
			   c->kind == OUT_TEXT);

	stats__free(s);
	return rc;
}

/*
 * profile and compare started by an MPI launcher on several ranks: refuse, rank 0 in one
 * line, every rank with BTAPE_EXIT_USAGE (only analyze is split across ranks; N ranks each
 * printing the whole report would look like a parallel analysis that is not one). One rank
 * (mpirun -n 1), or no launcher: 0, and the command runs as usual.
 */
static int refuse_ranks(const char *cmd)
{
	struct cl_comm *cc;
	int n, err = cl_comm__open_cmd(&cc, cmd);

	if (err || !cc)
		return err ? BTAPE_EXIT_FAIL : 0;
	n = cl_comm__size(cc);
	if (n > 1 && cl_comm__rank(cc) == 0)
		cli_err("%s: not split across ranks (%d ranks; only analyze is): run one biotape "
			"%s without mpirun",
			cmd, n, cmd);
	cl_comm__close(cc);
	return n > 1 ? BTAPE_EXIT_USAGE : 0;
}

#define TAG_HEAD 0x100 /* a rank's status and the length of its partial analysis */
#define TAG_DATA 0x101

struct part_head {
	int32_t status; /* 0, or the exit status of a rank that failed */
	uint64_t len;
	char msg[256];
};

/* One rank's slice analysed (an_run()), on a thread of its own while MPI comes up. */
struct slice_run {
	struct common *c;
	struct an_filter f; /* c->f with the slice */
	struct stats *s;
	struct an_info info;
	char msg[512];
	int err;
};

static void *slice_run(void *p)
{
	struct slice_run *j = p;

	j->err = an_run(j->c->files, j->c->nfiles, &j->f, &j->c->so, &j->s, &j->info, j->msg,
			sizeof(j->msg));
	return NULL;
}

/* The slice's analysis and plan dropped (the slice was not this rank's, or is not needed). */
static void slice_drop(struct slice_run *j, struct an_slice *sl)
{
	stats__free(j->s);
	j->s = NULL;
	split_entry_free(&sl->entry);
	sl->lo = sl->hi = sl->warm_lo = 0;
	sl->undeclared = false;
}

/*
 * A rank other than 0: its slice (analysed in j), packed and sent to rank 0; it prints nothing
 * (rank 0 says what failed where). Returns its exit status.
 */
static int analyze_slice_send(struct cl_comm *cc, struct an_slice *sl, struct slice_run *j)
{
	struct part_head h = {0};
	void *buf = NULL;
	int err;

	memcpy(h.msg, j->msg, sizeof(h.msg) - 1); /* cut to the header's message */
	if (j->err)
		h.status = cli_exit_status(j->err);
	else if ((err = split_pack(j->s, sl, j->info.events_read, j->info.events_selected, &buf,
				   &h.len))) {
		h.status = BTAPE_EXIT_FAIL;
		snprintf(h.msg, sizeof(h.msg), "%s", strerror(-err));
	}
	split_stamp(sl, SPLIT_T_PACK);
	err = cl_comm__send(cc, &h, sizeof(h), 0, TAG_HEAD);
	if (!err && !h.status)
		err = cl_comm__send(cc, buf, h.len, 0, TAG_DATA);
	free(buf);
	split_stamp(sl, SPLIT_T_SENT);
	if (err) /* rank 0 waits for this part: end the job (the communicator is unusable) */
		cl_comm__abort(cc, BTAPE_EXIT_FAIL);
	return h.status;
}

/* Rank 0's merge, finish and report, on a thread of its own while MPI closes. */
struct merge_run {
	struct common *c;
	struct an_slice *sl;
	struct stats *s; /* rank 0's slice, then the merged analysis */
	struct an_info info;
	void **parts; /* ranks 1.. n - 1, packed */
	size_t *lens;
	int nparts;
	char why[160]; /* why the merge would not be exact */
	int rc;	       /* exit status */
	bool reported; /* the report is written (or failed): no serial run */
};

/*
 * Rank 0: its own slice (analysed in j, taken from it) and every other rank's packed part,
 * received into m. A failure is reported here (one line) and its status returned.
 */
static int analyze_parts_recv(struct common *c, struct cl_comm *cc, struct an_slice *sl,
			      struct slice_run *j, struct merge_run *m)
{
	int n = cl_comm__size(cc), err = 0;
	int rc = c->kind == OUT_HTML ? cli_out_check("analyze", c->html_path) : 0;
	uint64_t t = 0;

	m->s = j->s;
	m->info = j->info;
	j->s = NULL;
	if (!rc && j->err) {
		cli_err("analyze: %s", j->msg);
		rc = cli_exit_status(j->err);
	}
	m->parts = calloc((size_t)n, sizeof(*m->parts));
	m->lens = calloc((size_t)n, sizeof(*m->lens));
	if (!m->parts || !m->lens) {
		cli_err("analyze: %s", strerror(ENOMEM));
		cl_comm__abort(cc, BTAPE_EXIT_FAIL); /* the other ranks wait to send */
	}
	split_stamp(sl, SPLIT_T_SENT);
	t = sl->t_ns[SPLIT_T_SENT];
	for (int r = 1; r < n; r++) { /* every rank's part is received, even after a failure */
		struct part_head h;
		void *buf = NULL;

		if ((err = cl_comm__recv(cc, &h, sizeof(h), r, TAG_HEAD)) ||
		    (!h.status && !(buf = malloc(h.len ? h.len : 1))) ||
		    (!h.status && (err = cl_comm__recv(cc, buf, h.len, r, TAG_DATA)))) {
			cli_err("analyze: receiving rank %d's part: %s", r,
				err ? cl_comm__errmsg(cc) : strerror(ENOMEM));
			cl_comm__abort(cc, BTAPE_EXIT_FAIL); /* the communicator is unusable */
		}
		h.msg[sizeof(h.msg) - 1] = 0;
		if (h.status && !rc) {
			cli_err("analyze: rank %d: %s", r, h.msg);
			rc = h.status;
		}
		m->parts[m->nparts] = buf;
		m->lens[m->nparts++] = h.len;
	}
	split_stamp(sl, SPLIT_T_SENT);
	sl->wait_ns = sl->t_ns[SPLIT_T_SENT] - t;
	return rc;
}

/* The parts merged in slice order into m->s, finished and reported; when the merge would not
 * be exact, m->s is freed and m->why says why (the caller analyses serially). */
static void *merge_run(void *p)
{
	struct merge_run *m = p;
	int exact = 1, err;
	uint64_t t;

	split_stamp(m->sl, SPLIT_T_FINISH);
	t = m->sl->t_ns[SPLIT_T_FINISH];
	for (int k = 0; k < m->nparts && exact; k++) {
		exact = !split_merge(m->s, m->parts[k], m->lens[k], &m->info.events_read,
				     &m->info.events_selected, m->why, sizeof(m->why));
		if (!exact && !m->why[0])
			snprintf(m->why, sizeof(m->why), "merge failed");
	}
	if (exact && split_check(m->s, m->why, sizeof(m->why)))
		exact = 0;
	if (exact && (err = stats__finish(m->s))) {
		cli_err("analyze: %s", strerror(-err));
		m->rc = BTAPE_EXIT_FAIL;
		exact = 0;
	}
	split_stamp(m->sl, SPLIT_T_FINISH);
	m->sl->merge_ns = m->sl->t_ns[SPLIT_T_FINISH] - t;
	if (!exact) {
		m->reported = m->rc != 0;
		stats__free(m->s);
	} else {
		m->rc = analyze_report(m->c, m->s, &m->info); /* frees m->s */
		m->reported = true;
	}
	m->s = NULL;
	return NULL;
}

static void merge_run_free(struct merge_run *m)
{
	for (int k = 0; m->parts && k < m->nparts; k++)
		free(m->parts[k]);
	free(m->parts);
	free(m->lens);
	stats__free(m->s);
}

/*
 * analyze on several ranks: each analyses one time slice, rank 0 merges and prints; where
 * the merge would not be exact (or a filter is given) rank 0 analyses everything alone, and
 * says so in one line. Returns -1 when not started on several ranks (run as usual), else
 * the exit status.
 *
 * MPI_Init mostly waits (for the launcher and the other ranks: about 0.25 s of wall time
 * and 30 ms of CPU here), so the slice the launcher's variables name is analysed on a
 * thread meanwhile; should MPI's rank or size differ, the right slice is analysed after.
 */
static int analyze_ranks(struct common *c)
{
	struct cl_comm *cc;
	int rc, n, err;
	struct an_slice sl = {0};
	struct slice_run j = {.c = c};
	struct stats *s = NULL;
	struct an_info info;
	char why[160] = "";
	bool filtered = c->f.has_from || c->f.has_to || c->f.device || c->f.has_pid;
	bool early = false;
	pthread_t th;

	split_stamp(&sl, SPLIT_T_START);
	j.f = c->f;
	j.f.slice = &sl;
	if (!filtered && !cl_launcher_rank(&sl.rank, &sl.nranks) && sl.nranks > 1)
		early = !pthread_create(&th, NULL, slice_run, &j);
	err = cl_comm__open_cmd(&cc, "analyze");
	split_stamp(&sl, SPLIT_T_INIT);
	if (early)
		pthread_join(th, NULL);
	n = cc ? cl_comm__size(cc) : 1;
	if (err || !cc || n == 1) {
		slice_drop(&j, &sl);
		cl_comm__close(cc);
		return err ? BTAPE_EXIT_FAIL : -1;
	}
	cl_comm__set_timeout(cc, 0); /* a slice takes what it takes; mpirun ends a dead job */
	if (filtered) {
		snprintf(why, sizeof(why), "--from, --to, --device and --pid are not split");
		sl.rank = cl_comm__rank(cc);
	} else {
		if (!early || sl.rank != cl_comm__rank(cc) || sl.nranks != n) {
			slice_drop(&j, &sl);
			sl.rank = cl_comm__rank(cc);
			sl.nranks = n;
			slice_run(&j);
		}
		if (sl.rank) {
			rc = analyze_slice_send(cc, &sl, &j);
			slice_drop(&j, &sl);
			cl_comm__close(cc);
			split_stamp(&sl, SPLIT_T_END);
			split_times_print(&sl);
			return rc;
		}
		/* the merge and the report while MPI closes (MPI_Finalize waits, too) */
		struct merge_run m = {.c = c, .sl = &sl};
		bool threaded;

		rc = analyze_parts_recv(c, cc, &sl, &j, &m);
		slice_drop(&j, &sl);
		if (rc) {
			merge_run_free(&m);
			cl_comm__close(cc);
			return rc;
		}
		threaded = !pthread_create(&th, NULL, merge_run, &m);
		cl_comm__close(cc);
		if (threaded)
			pthread_join(th, NULL);
		else
			merge_run(&m);
		merge_run_free(&m);
		split_stamp(&sl, SPLIT_T_END);
		split_times_print(&sl);
		if (m.reported)
			return m.rc;
		snprintf(why, sizeof(why), "%s", m.why);
		cc = NULL;
	}
	cl_comm__close(cc);
	if (sl.rank)
		return BTAPE_EXIT_OK; /* the serial case: rank 0 does it */
	cli_err("analyze: not split across %d ranks (%s): analysed on rank 0 alone", n, why);
	if (c->kind == OUT_HTML && (rc = cli_out_check("analyze", c->html_path)))
		return rc;
	if ((rc = run_one(c, c->files, c->nfiles, &s, &info, "analyze")))
		return rc;
	return analyze_report(c, s, &info);
}

int cmd_analyze(int argc, char **argv)
{
	struct common c;
	struct stats *s = NULL;
	struct an_info info;
	int rc;

	if (argc > 1 && cli_is_help(argv[1])) {
		fputs(analyze_usage, stdout);
		return BTAPE_EXIT_OK;
	}
	if (parse_common(argc, argv, &c, "analyze", true, false))
		return BTAPE_EXIT_USAGE;
	if (!c.nfiles) {
		cli_err("analyze: no trace given (usage: biotape analyze FILE... ; see --help)");
		return BTAPE_EXIT_USAGE;
	}
	if (c.kind == OUT_HTML &&
	    (rc = cli_out_check_inputs("analyze", c.html_path, c.files, c.nfiles)))
		return rc;
	if ((rc = analyze_ranks(&c)) >= 0)
		return rc;
	if (c.kind == OUT_HTML && (rc = cli_out_check("analyze", c.html_path)))
		return rc;
	rc = run_one(&c, c.files, c.nfiles, &s, &info, "analyze");
	if (rc)
		return rc;
	return analyze_report(&c, s, &info);
}

struct prof_arg {
	struct common *c;
	const struct report *r;
};

/* One more analysis pass of the profiled trace through filter f (a phase, a process). */
static int profile_pass(const struct common *c, const struct an_filter *f,
			const struct stats_opts *so, struct stats **ps, struct an_info *info)
{
	char msg[512];
	int err = an_run(c->files, c->nfiles, f, so, ps, info, msg, sizeof(msg));

	if (err)
		cli_err("profile: %s", msg);
	return err;
}

/* A process busy enough for a job of its own: >= 1% of the I/Os. */
static bool busy_proc(const struct stats *s, const struct procstat *p)
{
	return (double)p->acc.n >= 0.01 * (double)s->all.n;
}

/*
 * A profile with phases: the phases from the first pass's timeline, then one analysis pass per
 * phase (and per process with --per-process), each bounded in memory.
 */
static int profile_phases(FILE *fp, const struct prof_arg *a)
{
	struct common *c = a->c;
	const struct stats *s = a->r->s;
	struct phase_span sp[PHASES_MAX];
	const struct procstat **v = NULL;
	int np = 0, nph, err;

	nph = phases_detect(s, c->nphases, sp, PHASES_MAX);
	if (nph < 0)
		return nph;
	if (c->per_process) {
		np = report_procs(s, &v);
		if (np < 0)
			return -ENOMEM;
	}
	err = profile_write_global(fp, a->r, c->per_process, nph);
	uint64_t base = s->origin_ns - s->trace_start_ns;

	for (int k = 0; k < nph && !err; k++) {
		bool first = true;

		for (int i = 0; i < (c->per_process ? np : 1) && !err; i++) {
			if (c->per_process && (i >= PROFILE_MAX_PROCS || !busy_proc(s, v[i])))
				break;
			struct an_filter f = c->f;
			struct stats_opts so = c->so;
			struct stats *ps = NULL;
			struct an_info pinfo;

			f.has_from = true;
			f.from_ns = base + sp[k].from_ns;
			if (k + 1 < nph) {
				f.has_to = true;
				f.to_ns = base + sp[k].to_ns;
			}
			if (c->per_process) {
				f.has_pid = true;
				f.pid = v[i]->pid;
			}
			so.interval_ns = 0;
			err = profile_pass(c, &f, &so, &ps, &pinfo);
			if (err)
				break;
			struct report pr = *a->r;
			struct profile_phase ph = {.index = k + 1,
						   .count = nph,
						   .start_ns = base + sp[k].from_ns,
						   .duration_ns = sp[k].to_ns - sp[k].from_ns,
						   .stonewall = k > 0 && first};
			bool idle = !ps->all.n_dir[DIR_READ] && !ps->all.n_dir[DIR_WRITE];

			pr.s = ps;
			pr.info = &pinfo;
			/* a process idle in this phase gets no job, unless the whole phase is idle */
			bool last = !c->per_process || i + 1 >= np || i + 1 >= PROFILE_MAX_PROCS ||
				    !busy_proc(s, v[i + 1]);

			if (!idle || (first && last)) {
				err = profile_write_job(fp, &pr, c->per_process && !idle ? v[i]->pid : 0,
							c->per_process && !idle ? v[i]->comm : NULL,
							&ph);
				first = false;
			}
			stats__free(ps);
		}
	}
	free(v);
	return err;
}

static int fn_profile(FILE *fp, const void *p)
{
	const struct prof_arg *a = p;
	struct common *c = a->c;
	const struct stats *s = a->r->s;

	if (c->phases_given && c->nphases != 1)
		return profile_phases(fp, a);
	if (!c->per_process)
		return profile_write(fp, a->r, NULL, 0);
	/* one analysis pass per busy process (each pass is bounded in memory) */
	const struct procstat **v;
	int n = report_procs(s, &v), err = 0, jobs = 0;

	if (n < 0)
		return -ENOMEM;
	err = profile_write_global(fp, a->r, true, 0);
	for (int i = 0; i < n && jobs < PROFILE_MAX_PROCS && !err; i++) {
		if (!busy_proc(s, v[i]))
			break;
		struct an_filter f = c->f;
		struct stats *ps = NULL;
		struct an_info pinfo;

		f.has_pid = true;
		f.pid = v[i]->pid;
		err = profile_pass(c, &f, &c->so, &ps, &pinfo);
		if (err)
			break;
		struct report pr = *a->r;

		pr.s = ps;
		pr.info = &pinfo;
		err = profile_write_job(fp, &pr, v[i]->pid, v[i]->comm, NULL);
		stats__free(ps);
		jobs++;
	}
	free(v);
	return err;
}

int cmd_profile(int argc, char **argv)
{
	struct common c;
	struct stats *s = NULL;
	struct an_info info;
	int rc;

	if (argc > 1 && cli_is_help(argv[1])) {
		fputs(profile_usage, stdout);
		return BTAPE_EXIT_OK;
	}
	if (parse_common(argc, argv, &c, "profile", false, true))
		return BTAPE_EXIT_USAGE;
	if (c.window_ns) {
		c.so.interval_ns = c.window_ns; /* the timeline's rows are the windows */
		c.interval_given = true;
	}
	if (c.window_ns && !c.phases_given) {
		c.nphases = 0; /* --window alone: phases found automatically */
		c.phases_given = true;
	}
	if (c.nfiles != 1) {
		cli_err("profile: need exactly one trace (usage: biotape profile FILE > job.fio)");
		return BTAPE_EXIT_USAGE;
	}
	if ((rc = refuse_ranks("profile")))
		return rc;
	rc = run_one(&c, c.files, 1, &s, &info, "profile");
	if (rc)
		return rc;
	if (!s->all.n) {
		cli_err("profile: %s: nothing to reproduce", info.events_read || info.filtered
								     ? "no events in window"
								     : "no events in trace");
		stats__free(s);
		return BTAPE_EXIT_USAGE;
	}
	if (!s->all.n_dir[DIR_READ] && !s->all.n_dir[DIR_WRITE]) {
		cli_err("profile: the trace has no reads or writes (only flushes/discards): "
			"fio cannot reproduce it");
		stats__free(s);
		return BTAPE_EXIT_USAGE;
	}
	if (c.per_process && !(s->present_any & BTAPE_HAS_PID)) {
		cli_err("profile: --per-process: the trace has no pid field");
		stats__free(s);
		return BTAPE_EXIT_USAGE;
	}
	if (info.lost_events) /* the job's comment says it too; who runs it may never read it */
		cli_info(0,
			 "profile: the recorder lost %" PRIu64 " events of %s: the job's rates "
			 "are lower bounds",
			 info.lost_events, c.files[0]);
	struct report r = {.s = s, .info = &info, .paths = c.files, .npaths = 1};
	struct prof_arg a = {.c = &c, .r = &r};

	rc = write_out(NULL, fn_profile, &a, "profile", true);
	stats__free(s);
	return rc;
}

struct cmp_arg {
	const struct report *a, *b;
	enum out_kind kind;
};

static int fn_compare(FILE *fp, const void *p)
{
	const struct cmp_arg *a = p;

	switch (a->kind) {
	case OUT_JSON:
		return render_compare_json(fp, a->a, a->b);
	case OUT_HTML:
		return render_compare_html(fp, a->a, a->b);
	default:
		return render_compare_text(fp, a->a, a->b);
	}
}

/*
 * One side of a comparison: a trace, or several joined by commas (a cluster recording's
 * files) when no file has that whole name. Splits arg in place; returns the count or -E2BIG.
 */
static int split_side(char *arg, char **out)
{
	int n = 0;

	if (access(arg, F_OK) == 0 || !strchr(arg, ',')) {
		out[0] = arg;
		return 1;
	}
	for (char *save = NULL, *t = strtok_r(arg, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (n == AN_MAX_FILES)
			return -E2BIG;
		out[n++] = t;
	}
	return n ? n : (out[0] = arg, 1);
}

int cmd_compare(int argc, char **argv)
{
	struct common c;
	struct stats *sa = NULL, *sb = NULL;
	struct an_info ia, ib;
	int rc;

	if (argc > 1 && cli_is_help(argv[1])) {
		fputs(compare_usage, stdout);
		return BTAPE_EXIT_OK;
	}
	if (parse_common(argc, argv, &c, "compare", true, false))
		return BTAPE_EXIT_USAGE;
	if (c.nfiles != 2) {
		cli_err("compare: need exactly two traces (usage: biotape compare A B)");
		return BTAPE_EXIT_USAGE;
	}
	if ((rc = refuse_ranks("compare")))
		return rc;
	if (c.kind == OUT_HTML && (rc = cli_out_check("compare", c.html_path)))
		return rc;
	char *pa[AN_MAX_FILES], *pb[AN_MAX_FILES];
	int na = split_side(c.files[0], pa), nb = split_side(c.files[1], pb);

	if (na < 0 || nb < 0) {
		cli_err("compare: a side lists more than %d traces", AN_MAX_FILES);
		return BTAPE_EXIT_USAGE;
	}
	if (c.kind == OUT_HTML && ((rc = cli_out_check_inputs("compare", c.html_path, pa, na)) ||
				   (rc = cli_out_check_inputs("compare", c.html_path, pb, nb))))
		return rc;
	rc = run_one(&c, pa, na, &sa, &ia, "compare");
	if (!rc)
		rc = run_one(&c, pb, nb, &sb, &ib, "compare");
	struct fidelity fid;
	bool has_fid = false;

	if (!rc && sa->all.n && sb->all.n) {
		char msg[512];
		int err = fidelity_compute(&fid, pa, na, pb, nb, &c.f, &c.so, sa, sb, c.window_ns,
					   msg, sizeof(msg));

		if (err) {
			cli_err("compare: %s", msg);
			rc = cli_exit_status(err);
		}
		has_fid = !err;
	}
	if (!rc) {
		struct report ra = {.s = sa,
				    .info = &ia,
				    .paths = pa,
				    .npaths = na,
				    .label = "A",
				    .fid = has_fid ? &fid : NULL};
		struct report rb = {.s = sb, .info = &ib, .paths = pb, .npaths = nb, .label = "B"};
		struct cmp_arg a = {.a = &ra, .b = &rb, .kind = c.kind};

		an_load_replay_fidelity(&rb);
		rc = write_out(c.kind == OUT_HTML ? c.html_path : NULL, fn_compare, &a, "compare",
			       c.kind == OUT_TEXT);
		free(rb.replay_fid);
	}
	stats__free(sa);
	stats__free(sb);
	return rc;
}
