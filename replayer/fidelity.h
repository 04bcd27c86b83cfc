/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fidelity section of every replay result: how the replayed I/O stream compares with the
 * recorded one it came from. The recorded side is one pass over the trace as the replay's
 * source decodes it (the I/Os the replay does: mapped devices, ops it issues, within
 * --warmup / --duration on the replay's clock);
 * the replayed side is every measured completion, taken in issue order. Distances are
 * common/dist.h's, the ones `biotape compare` reports. Definitions in docs/REPLAY.md
 * ("Fidelity").
 */
#ifndef RP_FIDELITY_H
#define RP_FIDELITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "hist.h"

struct btape_event;
struct btape_summary;
struct rp_sched_cfg;
struct rp_stats;

#define RP_FID_WINDOWS 200	/* IOPS / QD windows: the recorded span is the first half */
#define RP_FID_LATE_BUCKETS 6	/* issue lateness: <=1 us, 10 us, 100 us, 1 ms, 10 ms, more */
#define RP_FID_GAP_KS_OK 0.1	/* the verdict's bounds: inter-arrival KS at most this, */
#define RP_FID_IOPS_CORR_OK 0.9 /* and per-window IOPS correlated at least this */
#define RP_FID_LATE_OK 0.01	/* and at most this share of I/Os more than RP_LATE_NS late */
/*
 * Inter-arrival gaps shorter than this count as this long, on both sides: the replayer stamps
 * a batch of I/Os once, as it hands them to the kernel, where the recording saw each leave
 * the block layer, a few µs after the one before as the kernel submitted them in turn. Below
 * it the two sides do not measure the same thing.
 */
#define RP_FID_GAP_FLOOR_NS 10000ull

/* One side: what the recording did, or what the replay did. */
struct rp_fid_side {
	uint64_t ios;
	struct hist gap, size, qd, lat; /* inter-arrival ns, bytes, queue depth at issue, ns */
	uint64_t win_ios[RP_FID_WINDOWS], win_qd[RP_FID_WINDOWS]; /* per window: I/Os, sum of QD */
	uint64_t beyond; /* I/Os after the last window (a replay that took over twice as long) */
};

struct rp_fid {
	uint64_t window_ns;
	unsigned int
		windows; /* compared: up to the later side's last I/O, at most RP_FID_WINDOWS */
	struct rp_fid_side rec, rep;
	double gap_ks, size_ks, qd_ks; /* KS distances recorded vs replayed (NAN: a side empty) */
	double lat_demerit_ns;	       /* RMS distance of the latency CDFs (NAN: no latencies) */
	double iops_corr, qd_corr;     /* Pearson correlation of the per-window series */
	uint64_t late[RP_FID_LATE_BUCKETS]; /* issue lateness histogram (original timing) */
	uint64_t late_ios, timed_ios; /* more than RP_LATE_NS late, of the I/Os with a deadline */
	bool fell_behind; /* more than RP_LATE_NS behind at some moment (not the verdict) */
	bool faithful;	  /* within RP_FID_LATE_OK, RP_FID_GAP_KS_OK and RP_FID_IOPS_CORR_OK */
	/* A cluster's section (rp_fid_merge()); 0 and 0 for one host's */
	unsigned int ranks;	      /* merged over this many ranks' sections */
	unsigned int ranks_unfaithful; /* of which did not keep to their recording */
};

/*
 * The share of f's I/Os issued more than RP_LATE_NS after their deadlines (0: none had one):
 * the verdict's test of timing. Not the worst moment (fell_behind): on a VM the host stops a
 * vCPU for a millisecond or two about ten times a minute, so a verdict on the worst moment
 * would fail every replay of a few seconds.
 */
double rp_fid_late_share(const struct rp_fid *f);

/*
 * Adds the section of one rank of a cluster replay, src (its own, against its own trace), to
 * the cluster's dst (zeroed before the first): counts, lateness and every histogram (sizes,
 * gaps, QD, latencies) merge exactly, bucket-wise; the per-window series add up only when the
 * ranks' windows have the same width (else the cluster has none: windows 0, correlations
 * NAN). Then rp_fid_merge_finish().
 */
void rp_fid_merge(struct rp_fid *dst, const struct rp_fid *src);
/*
 * The cluster's distances from the merged histograms: size, QD and latency compare the
 * cluster's distributions; the inter-arrival gaps are each rank's own, pooled (the gaps of
 * the cluster's interleaved stream are in no rank's section). fell_behind: some rank did; the
 * verdict: every rank kept to its recording.
 */
void rp_fid_merge_finish(struct rp_fid *f);

#define RP_FID_VERDICT_MAX 192
/* The verdict in words: "kept to the recording", or "did NOT keep to the recording (why; ...)"
 * (a cluster's merged section: the ranks' count). Cut to len - 1 bytes. */
void rp_fid_verdict(const struct rp_fid *f, char *buf, size_t len);

/* The issue lateness buckets' names: "<=1us", ..., ">10ms". */
extern const char *const rp_fid_late_names[RP_FID_LATE_BUCKETS];

/*
 * The section as one msgpack map: what `replay --json` shows as "fidelity" and what the -o
 * result trace keeps in its footer tag BTAPE_TAG_FIDELITY (docs/REPLAY.md, "Fidelity"). *buf is
 * malloc'd (the caller frees it). Returns 0 or -ENOMEM.
 */
int rp_fid_pack(const struct rp_fid *f, char **buf, size_t *len);

struct rp_fidelity;

/*
 * The section for a replay under cfg (its speed, warmup, duration, device map and ops; copied)
 * of a trace whose summary is sum (its span sets the windows). Returns 0 or -ENOMEM.
 */
int rp_fidelity__new(struct rp_fidelity **fp, const struct btape_summary *sum,
		     const struct rp_sched_cfg *cfg);
/*
 * The recorded side: one pass of the trace's events, in file order, as the replay's source
 * decodes them (rp_prefetch__set_first_pass_hook()); the I/Os the replay would issue are
 * taken, up to --duration.
 */
void rp_fidelity__add_recorded(struct rp_fidelity *f, const struct btape_event *evs, size_t n);
void rp_fidelity__free(struct rp_fidelity *f);
/* Forgets the replayed side (a new sweep step). */
void rp_fidelity__reset(struct rp_fidelity *f);
/* A completed I/O of the replay whose stats are st (in any order; taken in issue order). */
void rp_fidelity__add(struct rp_fidelity *f, const struct rp_io *io, const struct rp_stats *st);
/* The comparison, after the replay (st: its stats). */
const struct rp_fid *rp_fidelity__finish(struct rp_fidelity *f, const struct rp_stats *st);

#endif
