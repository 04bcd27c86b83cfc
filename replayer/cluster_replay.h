/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Cluster replay (docs/CLUSTER.md): the hooks cmd_replay.c calls when an MPI launcher started
 * it. Without a launcher rp_cluster__open() gives NULL and every hook is a no-op, so that the
 * single-host replay is unchanged.
 *
 * Life of a run, on every rank:
 *   open -> assign (this rank's trace, targets, -o, copies) -> preflight as today, with cli_err()
 *   kept instead of printed -> agree (every rank passed, or all stop before any I/O; rank 0
 *   prints one line per refusing rank; then the clock offsets to rank 0) -> per step:
 *   step_begin (a start instant on the corrected clock; a watchdog thread exchanges a heartbeat
 *   every HEARTBEAT_NS so that one rank's failure or signal stops the others) -> the run ->
 *   step_end (the merge: rank 0 gets the cluster's stats, exact) -> report at rank 0 -> close.
 * A rank that leaves early (an error) is carried through the remaining collectives by
 * rp_cluster__close(), so that no peer waits for it.
 */
#ifndef RP_CLUSTER_REPLAY_H
#define RP_CLUSTER_REPLAY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "clock.h"
#include "devmap.h"
#include "scheduler.h"

struct rp_cluster;
struct rp_fid;

/* NULL (and 0) without a launcher; otherwise the cluster or -errno (message printed). */
int rp_cluster__open(struct rp_cluster **out);
/*
 * Ends the cluster part of the run: a rank that has not agreed yet refuses (with the kept
 * message), a rank inside a step reports failure and joins the merge; finalizes MPI. ret is
 * the command's exit status; returns the status to exit with. NULL-safe.
 */
int rp_cluster__close(struct rp_cluster *rc, int ret);

/*
 * This rank's share: traces[rank % ntraces] (more traces than ranks is refused), %h/%r
 * expanded in it, in *target, in every map's DST and in *out; with scale_given, *scale (the
 * total copies, at least one per rank) becomes this rank's share, total / size, the first
 * total % size ranks one more, and *copy_base the number of its first copy among all ranks'
 * (rank r runs the copies a single host would number copy_base .. copy_base + *scale - 1).
 * Collective: every rank gives the others its trace and -o (rp_cluster__host_files()); a
 * rank that returns before calling it takes part at rp_cluster__close(). Strings point into
 * rc. 0, or -EINVAL or -ENOMEM (cli_err()).
 */
int rp_cluster__assign(struct rp_cluster *rc, char **traces, unsigned int ntraces,
		       const char **trace, const char **target, struct rp_map_arg *maps,
		       unsigned int nmaps, const char **out, unsigned int *scale, bool scale_given,
		       unsigned int *copy_base);

/*
 * The traces of every rank on this host (this rank's among them), as each rank named them
 * (exchanged at rp_cluster__assign, absolute), each once: the files no output or target of
 * this rank may be, since another rank is reading them. *n is their number; NULL (and *n 0)
 * without a cluster.
 */
char *const *rp_cluster__host_traces(const struct rp_cluster *rc, unsigned int *n);
/* The same, then the result files (-o) of the other ranks on this host, as each named its
 * own: the files no target of this rank may be. NULL (and *n 0) without a cluster. */
char *const *rp_cluster__host_files(const struct rp_cluster *rc, unsigned int *n);

/* Preflight passed on this rank: agree with every rank, then measure the clock offsets.
 * 0, or non-zero when some rank refused (rank 0 printed why) or the cluster failed. */
int rp_cluster__agree(struct rp_cluster *rc);

/*
 * Original timing, after rp_cluster__agree: when every rank's trace is from one cluster
 * recording (the same recording id in its metadata, CL), the ranks replay on that recording's
 * timeline: *lead_ns is how long after the earliest first I/O of all the traces this rank's
 * first I/O (FIRST_ISSUE_NS, on its trace's clock; UINT64_MAX for a trace without events,
 * which must still call it: every rank takes part) came, both on the recording's reference
 * clock; the scheduler takes it as the first event's delay after the start instant. Otherwise
 * (no launcher, one rank, unrelated traces) 0: each trace from its own first I/O. 0 or -errno.
 */
struct btape_cluster;
int rp_cluster__timeline(struct rp_cluster *rc, const struct btape_cluster *cl,
			 uint64_t first_issue_ns, uint64_t *lead_ns);
/*
 * This step's common start instant, on the replay clock (CLOCK_MONOTONIC), in *start_ns;
 * returns at that instant with wait, without a little ahead of it (for a scheduler that takes
 * the instant as its first deadline: it has time to set up). Starts the watchdog, which sets
 * *stop when any rank fails, is interrupted or counts an I/O error in st->errors. *signalled
 * (set by a SIGINT/SIGTERM handler, with *stop) shortens every wait on the other ranks to a
 * grace period: a launcher SIGKILLs about 1 s after its SIGTERM. 0 or -errno.
 */
int rp_cluster__step_begin(struct rp_cluster *rc, volatile sig_atomic_t *stop,
			   const volatile sig_atomic_t *signalled, const struct rp_stats *st,
			   bool wait, uint64_t *start_ns);
/*
 * The replay clock to give the scheduler: real itself without a cluster; else a copy that spins
 * (yielding the CPU) instead of sleeping up to just after each step's start instant: a rank
 * that sleeps into the start wakes late on a busy host.
 */
const struct rp_clock *rp_cluster__clock(struct rp_cluster *rc, const struct rp_clock *real);
/*
 * The step is over on this rank (st: its stats, or NULL; copies: replayed at once; first_issue_ns: its
 * first I/O's issue time on the replay clock, 0 if none; why: a failure, or NULL). Waits for
 * every rank, then merges: at rank 0, *st becomes the cluster's stats (histograms summed
 * bucket-wise, times on rank 0's clock, interrupted when any rank was), of the ranks that still
 * answer (a rank gone silent has a row marked gone). 0, or -errno when rank 0 is gone (st
 * keeps this rank's own stats, marked interrupted, for its own report).
 */
int rp_cluster__step_end(struct rp_cluster *rc, struct rp_stats *st, unsigned int copies,
			 uint64_t first_issue_ns, const char *why);
/*
 * This rank's own fidelity section (against its own trace, from its own stats: the one its -o
 * result trace keeps), sent to rank 0 at the next step_end; NULL: none (a sweep). fid must
 * live until then. NULL-safe.
 */
void rp_cluster__set_fidelity(struct rp_cluster *rc, const struct rp_fid *fid);
/*
 * Rank 0 after a merged step: the cluster's fidelity section, the ranks' sections merged
 * (rp_fid_merge()); NULL when there is none (no rank sent one, or not rank 0). Each rank's own
 * is in the per-rank report (text and JSON).
 */
const struct rp_fid *rp_cluster__fidelity(const struct rp_cluster *rc);

/* True on the rank that prints the report: rank 0, or a rank that lost rank 0 (its own
 * results); always without a cluster. */
bool rp_cluster__reports(const struct rp_cluster *rc);
/* True when the run has more than one rank and the last step was merged (the cluster parts
 * of the reports apply; a rank that lost rank 0 reports its own stats only). */
bool rp_cluster__multi(const struct rp_cluster *rc);
/* The reports carry a cluster part: the last step was merged, or this rank lost rank 0. */
bool rp_cluster__has_report(const struct rp_cluster *rc);
/* Copies replayed at once by all ranks in the last step. */
unsigned int rp_cluster__copies(const struct rp_cluster *rc);
/* Some rank failed or was interrupted in the last step. */
bool rp_cluster__failed(const struct rp_cluster *rc);

/* Before a report: when rank 0 is gone every survivor prints its own, and this heads it with
 * the rank and host ("== rank 1 (host node2) of 3: rank 0 (host node1) is gone; ..."); else
 * nothing. */
void rp_cluster__report_head(const struct rp_cluster *rc, FILE *fp);
/* Rank 0, after step_end: the per-rank rows, start skew and clock offsets. */
void rp_cluster__report_text(const struct rp_cluster *rc, FILE *fp);
/* The "cluster" member of the JSON summary: `"cluster":{...}` (no leading comma). */
void rp_cluster__report_json(const struct rp_cluster *rc, FILE *fp);

/* dst += src: counters summed, histograms merged (hist_merge), the time span widened. */
void rp_stats_merge(struct rp_stats *dst, const struct rp_stats *src);

#endif
