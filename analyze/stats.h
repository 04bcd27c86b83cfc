/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The analyzer's statistics core: one streaming pass over events in issue order, bounded
 * memory (independent of trace length), no I/O. Definitions: docs/ANALYSIS.md.
 *
 * Use: stats__new(); stats__set_device() for each device; stats__add() every event in issue
 * order (dev = index into the devices set here); stats__finish(); read the fields; free.
 */
#ifndef BIOTAPE_ANALYZE_STATS_H
#define BIOTAPE_ANALYZE_STATS_H

#include "btape.h"
#include "hist.h"
#include "inflight.h"

#include <stdbool.h>
#include <stdint.h>

#define STATS_WINDOW_NS 1000000000ull	     /* IOPS/throughput peak and burstiness windows */
#define STATS_MAX_DEVICES 1024		     /* more devices are folded into the last one */
#define STATS_MAX_HOSTS 256		     /* more hosts are folded into the last one */
#define STATS_MAX_PROCS 4096		     /* more processes are folded into "(other)" */
#define STATS_SIZE_EXACT_MAX 4096	     /* distinct request sizes counted exactly, per op */
#define STATS_TL_MAX_ROWS 8192		     /* timeline rows; the interval doubles beyond */
#define STATS_LBA_BINS 256		     /* LBA histogram bins per device (auto-ranging) */
#define STATS_HEAT_T 96			     /* heat map: time columns (auto-ranging) */
#define STATS_HEAT_L 48			     /* heat map: LBA rows (auto-ranging) */
#define STATS_SEEK_BINS 129		     /* signed log2 seek distance: 64 = 0 */
#define STATS_SIZE_LOG2_BINS 65		     /* bin k: sizes in [2^(k-1), 2^k); bin 0: size 0 */
#define STATS_WS_BLOCK 4096ull		     /* working-set block size */
#define STATS_WS_LIMIT_DEFAULT (1u << 20)    /* blocks tracked exactly before sampling starts */
#define STATS_WS_LARGE_BLOCKS 1024	     /* an I/O of more blocks is kept as an extent */
#define STATS_WS_EDGES_MAX (1u << 19)	     /* extent edges kept (16 MiB); then block by block */
/*
 * Blocks of large I/Os counted one by one once the edges are full (256 GiB): past it a large
 * I/O is left out of the working set and counted in ws_result.large_uncounted. Each costs a
 * put at a random slot of a table that outgrows the caches (32 MiB at the default limit):
 * 10 ns a block with the prefetch of stats.c's ws_spill (50 ns without), so at most about
 * 0.7 s; 2^28 blocks took 13 s (a 4.7 KB trace of I/Os up to 3.4 GB, each overlapping the
 * one before).
 */
#define STATS_WS_SPILL_BLOCKS (1ull << 26)
/*
 * A size or process table lookup gives up after this many slots, as if the table were full
 * (sizes go to the log2 bins, processes to the rest). mix64 has no seed: 8,192 sizes or pids
 * that share the top bits can be found offline, and 1 M events of them (a 67 KB trace) took
 * 4.2 s, 0.11 s for others. At half load, real keys stay within a few slots.
 */
#define STATS_SLOT_PROBES 64
#define STATS_QD_HEAP_MAX BTAPE_INFLIGHT_MAX /* in-flight completions tracked per device */
#define STATS_QD_SLOTS_MAX (1ull << 22) /* ... and on all devices together (32 MiB and heaps) */
/* a slice's warm-up: in-flight slots its deep insertions may move to keep the entry sorted
 * (stats__warm; about 0.3 s at most) */
#define STATS_WARM_MOVES_MAX (1ull << 30)
#define STATS_NEAR_SEQ_DEFAULT (128u * 1024) /* near-sequential window, bytes */
#define STATS_IDLE_MIN_DEFAULT_NS 1000000ull /* idle periods shorter than this are not counted */
/* device time by queue depth at issue, bands 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65 and more */
#define STATS_QD_BANDS 8

enum { DIR_READ = 0, DIR_WRITE = 1, DIR__COUNT };

struct stats_opts {
	uint64_t interval_ns;	 /* timeline interval; 0: 1 s */
	uint64_t near_seq_bytes; /* 0: default */
	uint64_t idle_min_ns;	 /* 0: default */
	uint64_t ws_limit;	 /* exact working-set blocks before sampling; 0: default */
};

/* Counters for one scope (overall, a device, a process). */
struct acc {
	uint64_t n, bytes;
	uint64_t n_op[BTAPE_OP__COUNT], bytes_op[BTAPE_OP__COUNT];
	uint64_t n_dir[DIR__COUNT], bytes_dir[DIR__COUNT];
	/* 1 s windows from the analysis origin */
	uint64_t win, win_n, win_bytes, win_n_dir[DIR__COUNT], win_bytes_dir[DIR__COUNT];
	bool win_open;
	/* totals when the open window started (per event only n_op/bytes_op are counted; n, bytes,
	 * n_dir, bytes_dir and the window counts are derived from them, and valid after finish) */
	uint64_t base_n, base_bytes, base_n_dir[DIR__COUNT], base_bytes_dir[DIR__COUNT];
	uint64_t peak_n, peak_bytes, peak_n_dir[DIR__COUNT], peak_bytes_dir[DIR__COUNT];
	uint64_t n_partial; /* events in the final, incomplete window (set by finish) */
	/* latency (complete - issue), all ops; allocated on first use */
	struct hist *lat;
};

struct size_slot {
	uint64_t size;
	uint64_t n;
};

struct opstat {
	uint64_t n, bytes;
	uint64_t n_errors;
	struct size_slot *sizes; /* open addressing, 2 * STATS_SIZE_EXACT_MAX slots */
	uint32_t nsizes;
	uint64_t n_size_other; /* events whose size did not fit the exact table */
	uint64_t size_log2[STATS_SIZE_LOG2_BINS]; /* complete after stats__finish */
	struct hist *lat_dev;	/* complete - issue (its count: events with a completion) */
	struct hist *lat_queue; /* issue - insert */
	struct hist *lat_total; /* complete - insert (or - issue without insert) */
	/* device time of the I/Os with a known queue depth at issue, by its band
	 * (stats_qd_band()): how the device answered at each load; each allocated on first use */
	struct hist *lat_qd[STATS_QD_BANDS];
};

/* The band of queue depth qd (>= 1): 0 for 1, k for 2^(k-1)+1 .. 2^k, the last from 65 up. */
static inline unsigned int stats_qd_band(uint64_t qd)
{
	unsigned int k = qd <= 1 ? 0 : 64 - (unsigned int)__builtin_clzll(qd - 1);

	return k < STATS_QD_BANDS - 1 ? k : STATS_QD_BANDS - 1;
}

/* The depths of band k: *lo .. *hi (*hi UINT64_MAX for the last). */
static inline void stats_qd_band_range(unsigned int k, uint64_t *lo, uint64_t *hi)
{
	*lo = k ? (1ull << (k - 1)) + 1 : 1;
	*hi = k < STATS_QD_BANDS - 1 ? 1ull << k : UINT64_MAX;
}

struct stream {
	uint64_t last_end; /* byte offset where the previous I/O ended */
	bool has_last;
	/* the first I/O: where it started, its issue from the origin (a slice's is linked to the
	 * I/O before the slice at the merge) */
	uint64_t first_off, first_t;
	uint64_t n, seq, near; /* n: I/Os with a predecessor in the stream; n, seq: after finish */
	uint64_t seek[STATS_SEEK_BINS];
};

struct autorange {
	uint64_t width; /* power of two: 1 << shift */
	unsigned int shift;
	uint32_t nbins;
	uint64_t *bins;
};

struct devstat {
	char name[BTAPE_NAME_MAX];
	uint64_t size_bytes;
	bool used;
	struct acc acc;
	struct stream streams[DIR__COUNT];
	struct autorange lba;	   /* sectors */
	uint64_t heat_tw, heat_lw; /* column width (ns), row width (sectors): powers of two */
	unsigned int heat_tshift, heat_lshift;
	uint32_t *heat;		   /* [STATS_HEAT_L][STATS_HEAT_T] */
	uint64_t min_off, max_end; /* byte range touched by reads/writes (the profile's range) */
	uint64_t ext_min, ext_end; /* ... by every op with data, discards too: a target's size */
	struct btape_inflight inflight;
	uint64_t inflight_slots_peak; /* parallel merge: the most slots a slice's table took */
	uint32_t host; /* index into stats.hosts (when nhosts > 0) */
};

/* One timeline row of one host: its I/Os, and the device time of those with a completion. */
struct host_tl_row {
	uint64_t n;
	uint64_t lat_n, lat_sum_ns;
};

/* One recording host of a multi-host analysis (a cluster recording, or aligned files). */
struct hoststat {
	char name[BTAPE_NAME_MAX];
	struct acc acc; /* acc.lat: its devices' device times, merged at stats__finish */
	uint64_t first_issue_ns, last_issue_ns; /* on the analysis timeline */
	bool has_first;
	struct host_tl_row *tl; /* STATS_TL_MAX_ROWS rows, as stats.tl (interval, rows used) */
};

struct procstat {
	uint32_t pid;
	bool used;
	char comm[17];
	struct acc acc;
};

struct tl_row {
	uint64_t n_dir[DIR__COUNT], n_other;
	uint64_t bytes_dir[DIR__COUNT];
	uint64_t lat_n;
	double lat_sum; /* device time, ns */
	uint64_t qd_n;
	double qd_sum;
	/* locality (phase features): reads and writes with a predecessor in their stream, those
	 * that continue it (seek 0), and the sum of the seek distances' log2 bins (bit lengths
	 * of |distance| in bytes: 0 for a sequential I/O) */
	uint64_t loc_n, loc_seq, loc_log2;
	/* where the others land: the sum of their device offsets in 4 KiB blocks (wraps only past
	 * 2^64, as 2^26 jumps in one row at 1 PiB; phases.c checks) */
	uint64_t loc_jump_blk;
};

struct ws_slot {
	uint64_t h; /* 0: empty; else mix64((dev << 44 | block) + 1), a bijection of the key */
	uint32_t r, w;
};

/* A block count change where an extent starts (+1) or ends (-1), per direction. */
struct ws_edge {
	uint64_t block; /* as in the table's key: block number modulo 2^44 */
	uint32_t dev;	/* as in the table's key: the low 20 bits */
	int64_t dr, dw; /* after stats__finish: the counts from this edge to the next */
};

struct blockset {
	struct ws_slot *t; /* cap + WS_PAD slots (linear probing wraps at cap + WS_PAD) */
	uint64_t cap, n, limit;
	uint64_t mul;  /* odd, drawn per table: a block's home slot is h * mul >> shift (ws_home) */
	uint64_t room; /* min(limit, cap / 2): a new block when n reaches it rebuilds first */
	unsigned int level; /* only blocks with hash >> (64 - level) == 0 kept (1/2^level) */
	unsigned int shift; /* 64 - log2(cap) */
	uint64_t accesses;  /* all block accesses seen */
	/* I/Os of more than STATS_WS_LARGE_BLOCKS blocks, kept exactly as edges (not sampled) */
	struct ws_edge *edges;
	uint64_t nedges, edges_cap;
	bool edges_full; /* STATS_WS_EDGES_MAX reached: later large I/Os go block by block */
	uint64_t edges_put; /* edges ever added (before compaction): the parallel merge's bound */
	uint64_t spilled;   /* blocks of large I/Os counted one by one (edges full) */
	uint64_t large_uncounted; /* large I/Os left out: spilled would pass STATS_WS_SPILL_BLOCKS */
	/* the last level rise is known to have been needed: the blocks kept one level lower
	 * were more than the limit (not just as many; see split.c) */
	bool level_proved;
};

/* Derived at stats__finish(). */
struct ws_result {
	bool estimated;	    /* sampled (level > 0): counts are estimates */
	double sample_rate; /* 1 / 2^level */
	double rel_error;   /* 3-sigma relative error of the distinct counts (0 when exact) */
	uint64_t blocks, blocks_read, blocks_written, blocks_both;
	uint64_t accesses;
	uint64_t large_uncounted; /* large I/Os left out (blockset.large_uncounted): a lower bound */
	/* share of block accesses on the hottest 1%, 10%, 20%, 50% of touched blocks */
	double hot[4];
	bool valid;
};

struct stats {
	struct stats_opts o;
	uint64_t trace_start_ns; /* for "relative to trace start" in outputs */
	uint64_t origin_ns;	 /* first event's issue time */
	uint64_t last_issue_ns, last_complete_ns;
	uint32_t present_all, present_any; /* AND / OR of every event's presence bits */
	struct acc all;
	struct opstat ops[BTAPE_OP__COUNT];
	struct devstat *devs;
	uint32_t ndevs;
	struct hoststat *hosts; /* NULL unless stats__set_host() was called: one host */
	uint32_t nhosts;
	struct procstat *procs; /* open addressing, 2 * STATS_MAX_PROCS slots */
	uint64_t procs_used[2 * STATS_MAX_PROCS / 64]; /* which slots are used (stats_proc_next) */
	uint32_t nprocs;
	struct acc proc_other;
	uint64_t proc_other_n_procs;
	struct stream streams_all[DIR__COUNT]; /* per-device streams summed at finish */
	struct blockset ws;
	struct ws_result wsr;
	struct hist *qd;     /* queue depth at issue */
	bool qd_from_trace;  /* false: computed from issue/completion times */
	uint64_t qd_missing; /* events with no way to know the depth */
	uint64_t qd_untracked; /* computed depth: requests not kept in flight (struct btape_inflight) */
	uint64_t
		qd_budget; /* in-flight slots the devices may still allocate (STATS_QD_SLOTS_MAX) */
	struct hist *interarrival;
	struct hist *idle;   /* idle period lengths (>= idle_min_ns) */
	uint64_t busy_until; /* last completion (or issue) seen */
	bool idle_from_completions; /* set by stats__finish */
	uint64_t idle_no_complete;   /* events without a completion time */
	uint64_t idle_total_ns;
	struct tl_row *tl;
	uint64_t tl_interval, tl_rows;		/* rows used */
	uint64_t tl_cur, tl_cur_lo, tl_cur_hi;	/* cached row of the last event: t in [lo, hi) */
	uint64_t win_cur, win_lo, win_hi;	/* cached 1 s window of the last event */
	uint64_t tl_lat_pending, tl_qd_pending; /* integer sums not yet added to row tl_cur */
	uint64_t nadd;				/* events added */
	uint64_t nadd_fast;			/* of which through the block fast path */
	uint64_t nadd_full;			/* of which in blocks with every latency */
	bool ws_avx2; /* the working-set probe uses AVX2 (the CPU has it; tests clear it) */
	struct procstat *pcache[16];		/* direct-mapped by pid: last process slots */
	uint64_t duration_ns;			/* last issue - first issue */
	uint64_t complete_windows;		/* whole 1 s windows within the duration */
	bool finished;
	bool origin_fixed; /* stats__set_origin(): the first event does not set it */
	uint64_t nwarm;	   /* stats__warm() set nadd to 1 with no event counted */
	/* in-flight slots the warm-up's deep insertions moved (at most STATS_WARM_MOVES_MAX) */
	uint64_t warm_moves;
};

/* New empty analysis; opts may be NULL. Returns 0 or -ENOMEM. */
int stats__new(struct stats **sp, const struct stats_opts *opts);
void stats__free(struct stats *s);
/*
 * The first used slot of the process table at or after slot i (2 * STATS_MAX_PROCS: none), in
 * slot order: a walk over the used slots that does not read the whole table (3.7 MB).
 */
static inline uint32_t stats_proc_next(const struct stats *s, uint32_t i)
{
	while (i < 2 * STATS_MAX_PROCS) {
		uint64_t w = s->procs_used[i / 64] >> (i % 64);

		if (w)
			return i + (uint32_t)__builtin_ctzll(w);
		i = (i | 63) + 1;
	}
	return 2 * STATS_MAX_PROCS;
}

/* Declares device idx (0 <= idx < STATS_MAX_DEVICES) with a display name and size (0: unknown). */
int stats__set_device(struct stats *s, uint32_t idx, const char *name, uint64_t size_bytes);
/*
 * Declares that device idx (declared) was recorded on host NAME: the analysis then keeps per
 * host counts, windows and latency. Returns the host's index, or -errno.
 */
int stats__set_host(struct stats *s, uint32_t idx, const char *name);
/* Adds one event (issue order; ev->dev as declared, undeclared devices get "dev<N>"). */
int stats__add(struct stats *s, const struct btape_event *ev);
/* Adds n events (same contract as stats__add, same result), in blocks with prefetching. */
int stats__add_batch(struct stats *s, const struct btape_event *evs, size_t n);
/* Computes the derived fields (windows, working set, skew). Call once, after the last add. */
int stats__finish(struct stats *s);

/*
 * Parallel analysis (split.c, docs/ANALYSIS.md section 8). A slice other than the first sets
 * the shared origin, then feeds the events before it (its warm-up) to stats__warm(), which
 * sets only the state a later event reads (last issue, busy_until, the computed queue
 * depth's completions) and counts nothing; a slice's streams start empty instead, and the
 * merge links each stream's first I/O to the one before the slice. stats__settle() adds pending
 * sums before the state is packed or merged. The rest are the merge's helpers: a device set
 * up on first use, an accumulator's open window closed, the timeline's interval doubled,
 * auto-ranging bins widened to shifts, a process slot found or added (NULL when the table
 * is full), a request size counted n times (false when the exact table is full).
 */
void stats__set_origin(struct stats *s, uint64_t origin_ns);
int stats__warm(struct stats *s, const struct btape_event *ev);
void stats__settle(struct stats *s);
struct devstat *stats_dev_use(struct stats *s, uint32_t idx, int *err);
void stats_acc_close(struct acc *a);
void stats_tl_coarsen(struct stats *s);
/* Into stream st (and the timeline): the seek sample of the first I/O of stream `first`
 * after an I/O that ended at prev_end. */
void stats_stream_link(struct stats *s, struct stream *st, const struct stream *first,
		       uint64_t prev_end);
void stats_widen(struct devstat *d, unsigned int lba_shift, unsigned int heat_tshift,
		 unsigned int heat_lshift);
struct procstat *stats_proc_slot(struct stats *s, uint32_t pid, bool *added);
bool stats_size_put(struct opstat *o, uint64_t size, uint64_t n);

/* Helpers for the renderers. */
int stats_dir_of(unsigned int op);		 /* DIR_READ, DIR_WRITE or -1 */
double stats_seq_share(const struct stream *st); /* 0 when no I/O has a predecessor */
double stats_near_share(const struct stream *st);
/* Mean IOPS / bytes per second over the duration; 0 when the duration is 0. */
double stats_rate(const struct stats *s, uint64_t n);
/* Sorted (by count desc) copy of an op's exact size table; caller frees. */
int stats_sizes_sorted(const struct opstat *op, struct size_slot **out, uint32_t *n);
/* Burstiness: peak 1 s window / mean over complete windows; 0 when no complete window. */
double stats_burstiness(const struct stats *s, const struct acc *a);
/* Mean events per complete 1 s window of an accumulator; 0 without complete windows. */
double stats_window_mean(const struct stats *s, const struct acc *a);
/*
 * Edges of a seek bin, bytes: its distances d have |d| in [|lo|, |hi|), negative for a bin of
 * backward seeks; the bin of 0 has 0 and 0. Edges past 2^63 - 1 are given as 2^63 - 1.
 */
void stats_seek_bin_edges(unsigned int bin, int64_t *lo, int64_t *hi);

#endif
