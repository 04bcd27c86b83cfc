/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The replay scheduler: turns a stream of recorded events into I/Os on an engine, by timing
 * mode (open loop on absolute deadlines, as fast as possible, or closed loop at the recorded
 * queue depth), with N copies laid out over the targets. Knows neither the engine nor the
 * clock behind their interfaces, so tests run it on the null engine with a fake clock.
 */
#ifndef RP_SCHED_H
#define RP_SCHED_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "hist.h"

struct rp_clock;
struct rp_source;
struct btape_event;

enum rp_timing { RP_TIMING_ORIGINAL, RP_TIMING_AFAP, RP_TIMING_LOAD };
enum rp_layout { RP_LAYOUT_SHARD, RP_LAYOUT_OVERLAY };
enum rp_fit { RP_FIT_ERROR, RP_FIT_WRAP, RP_FIT_SCALE };

#define RP_LATE_NS 100000ull	     /* an I/O issued more than this after its deadline is late */
#define RP_OWN_BUFS_MAX (1ull << 30) /* rp_sched_cfg.own_bufs_max's default */
#define RP_START_DELAY_NS 2000000ull /* first deadline this long after the run starts */
/* rp_sched_cfg.hold_depth: the longest an I/O waits for a completion there, half of late */
#define RP_HOLD_NS 50000ull

#define RP_NO_TARGET UINT32_MAX

/* A recorded device and where it goes (target RP_NO_TARGET: its I/Os are skipped, counted). */
struct rp_devmap {
	uint32_t target;   /* index into the target table */
	uint64_t src_size; /* recorded device size in bytes; 0 unknown (then max_end is used) */
	uint64_t max_end;  /* largest offset+bytes of the trace on this device (0 unknown) */
};

/* Bytes a recorded device's I/Os span: its recorded size, or its largest extent end if larger. */
static inline uint64_t rp_devmap_span(const struct rp_devmap *d)
{
	return d->src_size > d->max_end ? d->src_size : d->max_end;
}

struct rp_payload {
	int kind;	 /* RP_PAYLOAD_* */
	double compress; /* compressible:R -> data compresses about R:1 */
	double dedupe;	 /* dedupe ratio R >= 1: about 1 - 1/R of blocks are duplicates */
	uint8_t pattern[4096];
	uint64_t seed;
};
enum { RP_PAYLOAD_ZERO, RP_PAYLOAD_RANDOM, RP_PAYLOAD_COMPRESSIBLE };

/* Builds the 4 KiB base pattern for kind/compress. */
void rp_payload_init(struct rp_payload *p, int kind, double compress, double dedupe, uint64_t seed);
/* Fills a write buffer (already holding the pattern) for the seq-th write: unique unless deduped.
 */
void rp_payload_stamp(const struct rp_payload *p, void *buf, uint64_t bytes, uint64_t seq);
/* Fills a fresh buffer with the pattern. */
void rp_payload_fill(const struct rp_payload *p, void *buf, uint64_t bytes);

/*
 * Where the issuing thread's time went (ns, whole run, warmup included). submit: handing I/Os
 * to the engine without waiting; wait: blocked in the engine or the clock until a completion or
 * shortly before a deadline; source: getting events from the trace (a decoder stall shows
 * here); prepare: filling write buffers with the payload; the rest of run_ns is the issue
 * loop itself (mapping events, completion bookkeeping) and spinning before deadlines (spin_ns). capped_ns: how long I/Os that were
 * due stood behind the depth cap. The thread's CPU figures come from the kernel
 * (rp_thread_cpu()): cpu_ns on a CPU, runq_ns runnable but waiting for one, nivcsw preempted.
 */
struct rp_stage {
	uint64_t run_ns, submit_ns, wait_ns, source_ns, prepare_ns, spin_ns, capped_ns;
	uint64_t submit_calls, waits, wakes_with_completions, reaped;
	uint64_t cpu_ns, runq_ns, nivcsw;
	uint64_t syscalls;   /* the engine's system calls (0: not counted) */
	uint64_t buf_allocs; /* buffers made while issuing (cfg->big_bufs too few or small) */
};

struct rp_stats {
	uint64_t start_ns;	    /* the first deadline (original timing), or the run start */
	uint64_t measure_start_ns;  /* start + warmup */
	uint64_t end_ns;	    /* last completion */
	uint64_t issued, completed; /* every I/O, warmup included */
	uint64_t ios[RP_IO__COUNT]; /* measured (after warmup), by engine op */
	uint64_t bytes[RP_IO__COUNT];
	struct hist lat[RP_IO__COUNT];
	struct hist issue_err; /* original timing: actual - intended issue time */
	uint64_t late;	       /* issue error > RP_LATE_NS */
	uint64_t depth_capped; /* I/Os held back by the depth cap past their deadline */
	uint64_t held;	       /* I/Os held at hold_depth (rp_sched_cfg), at most hold_ns */
	uint64_t past_depth;   /* I/Os that went with hold_depth or more already in flight */
	/* summed over those: the I/Os in flight when each was held, and the flushes among them */
	uint64_t capped_slots, capped_flush_slots;
	uint64_t skipped[32];  /* by btape op: not doable here (never silently lost) */
	uint64_t unsupported;  /* of which: the target refused (EOPNOTSUPP) */
	uint64_t unmapped;     /* of which: on a recorded device with no target */
	uint64_t sub_block;    /* of which: a discard/write-zeroes holding no whole target block */
	uint64_t errors;       /* I/Os that failed or came back short */
	int first_error;       /* -errno of the first failure */
	uint64_t first_error_offset;
	uint64_t events; /* trace events consumed (all loops) */
	uint64_t loops;	 /* completed passes over the trace */
	unsigned int max_inflight;
	bool interrupted;
	bool duration_hit;
	/*
	 * Falling behind (original timing, measured I/Os): the worst lag (issue - deadline) and
	 * when its deadline was (ns after start_ns); behind_ns: how long the replay was more than
	 * RP_LATE_NS behind, the union over late I/Os of [deadline + RP_LATE_NS, issue].
	 */
	uint64_t lag_max_ns, lag_at_ns, behind_ns;
	uint64_t behind_from_ns, behind_to_ns; /* the episode being summed */
	/*
	 * --order (measured I/Os): I/Os held past their deadline by a dependency, and the time
	 * from deadline to when the dependency let them go, by the last rule that held them
	 * (RP_DEP_*: conflict, barrier, causal, cross-thread); window_full: times the stream
	 * stopped because the dependency window was full.
	 */
	uint64_t dep_waited[4], dep_wait_ns[4];
	uint64_t dep_window_full;
	/*
	 * Flushes (measured ones). The block layer folds flushes that are pending together into
	 * one device flush. flush_overlapped: flushes sent while the one before on their device
	 * was still out, though the recording had them apart (it had completed, or its completion
	 * is unknown): each may have reached the device only folded into another. With
	 * flushes_apart such a flush waits instead; flush_waited: flushes that waited past their
	 * deadline, flush_wait_ns: from deadline to when they could go.
	 */
	uint64_t flush_overlapped, flush_waited, flush_wait_ns;
	struct rp_stage stage;
};

struct rp_sched_cfg {
	enum rp_timing timing;
	double speed;	      /* original timing: 2 = twice as fast */
	int order;	      /* enum rp_order_mode; original timing, scale 1 only */
	bool flushes_apart;   /* a flush recorded apart from the one before waits for it */
	uint64_t think_ns;    /* causal order: think-time window */
	int xthread;	      /* causal order: cross-thread sources (enum rp_xthread) */
	unsigned int iodepth; /* cap on I/Os in flight per copy */
	/*
	 * Original timing: an I/O that finds hold_depth per copy in flight (the recording's most:
	 * the application never had more out) waits for a completion, but never past hold_ns
	 * after its deadline, then goes (up to iodepth). After a stall of the host the replay
	 * then does not send all that came due at once; 0: no hold.
	 */
	unsigned int hold_depth;
	uint64_t hold_ns;
	unsigned int scale;   /* copies replayed at once (>= 1) */
	/* cluster --scale: these copies are copy_base .. copy_base + scale - 1 of `copies` (0:
	 * scale) over all ranks; under the shard layout copy k of them gets region k */
	unsigned int copy_base, copies;
	enum rp_layout layout;
	enum rp_fit fit;
	unsigned int loops;   /* passes; 0: until duration_ns */
	uint64_t duration_ns; /* 0: no limit */
	uint64_t warmup_ns;   /* I/Os due earlier than this after start are not measured */
	uint64_t start_ns;    /* original timing: the first deadline on the replay clock (0: now
			       * + RP_START_DELAY_NS); cluster replay's common start instant */
	uint64_t lead_ns;     /* original timing: the trace's first I/O is due this long (trace
			       * time, / speed) after start_ns: a cluster recording's ranks on
			       * its one timeline (rp_cluster__timeline); 0 otherwise */
	bool allow_writes;    /* --write */
	bool writes_as_reads; /* --writes-as-reads */
	uint32_t ndev;
	const struct rp_devmap *devs;
	const struct rp_target *targets;
	unsigned int ntargets;
	const struct rp_payload *payload; /* NULL: buffers as they are */
	void **bufs;			  /* iodepth * scale buffers of buf_bytes (registered) */
	size_t buf_bytes;
	/*
	 * nbig buffers of big_bytes, made (and touched) before the run, lent to the I/Os larger
	 * than buf_bytes: making one while issuing costs its page faults at the deadline (a
	 * 512 KiB write: 128 of them, milliseconds on some VMs). An I/O larger than big_bytes,
	 * or one that finds none free, gets a buffer of its own made then (stage.buf_allocs).
	 */
	void **big_bufs;
	unsigned int nbig;
	size_t big_bytes;
	/*
	 * The most bytes the I/Os' own buffers (those above) hold at once; 0: RP_OWN_BUFS_MAX.
	 * An I/O whose buffer would pass it waits, as at the depth cap, for one in flight to
	 * complete: a trace of 4 GiB reads must not make a buffer that size per slot.
	 */
	uint64_t own_bufs_max;
	volatile sig_atomic_t *stop; /* set asynchronously: stop issuing, drain, return */
	/* hooks (may be NULL) */
	void (*on_done)(void *ctx, const struct rp_io *io); /* every completed I/O */
	void (*on_tick)(void *ctx, const struct rp_stats *st, uint64_t now);
	/* every few completions: no I/O completed later will have issue_ns < watermark_ns */
	void (*on_watermark)(void *ctx, uint64_t watermark_ns);
	uint64_t tick_ns;
	void *ctx;
};

/*
 * Maps a recorded extent (device dev, copy k of cfg->scale) onto its target: aligned to the
 * target's logical block size, placed in the copy's region (shard) or the whole target
 * (overlay), fitted by cfg->fit. Returns 0, or -ERANGE when it does not fit under --fit error
 * (or is larger than the region, or its end would pass 2^64), -EINVAL for a bad device index.
 */
int rp_map_extent(const struct rp_sched_cfg *cfg, uint32_t dev, unsigned int copy, uint64_t offset,
		  uint64_t bytes, uint64_t *toff, uint64_t *tbytes);
/*
 * The mapping engine op `op` needs: rp_map_extent's, except for RP_IO_DISCARD and RP_IO_ZERO,
 * which must not spread: only the target blocks wholly inside the recorded extent, so that
 * they never reach a byte the trace did not name; -ENODATA when that holds no whole block.
 */
int rp_map_io(const struct rp_sched_cfg *cfg, int op, uint32_t dev, unsigned int copy,
	      uint64_t offset, uint64_t bytes, uint64_t *toff, uint64_t *tbytes);
/* A sector's byte offset; UINT64_MAX (which no extent fits) when it would pass 2^64. */
static inline uint64_t rp_sector_offset(uint64_t sector)
{
	return sector > UINT64_MAX / 512 ? UINT64_MAX : sector * 512;
}
/* Region size of one copy on target t. */
uint64_t rp_region_bytes(const struct rp_sched_cfg *cfg, const struct rp_target *t);

/* Engine op for a recorded op under cfg, or -1 when it is skipped. */
int rp_sched_engine_op(const struct rp_sched_cfg *cfg, unsigned int btape_op, uint64_t bytes);

/*
 * Runs the replay: reads src to its end (cfg->loops times), issues every I/O through ops/e,
 * reaps them, fills *st. e must have been opened with depth >= iodepth * scale and the same
 * targets and buffers. Returns 0, or -errno (engine failure, source error).
 */
int rp_sched_run(const struct rp_sched_cfg *cfg, const struct rp_engine_ops *ops,
		 struct rp_engine *e, const struct rp_clock *clock, struct rp_source *src,
		 struct rp_stats *st);

/* Zeroes st (histograms reset). */
void rp_stats_reset(struct rp_stats *st);

#endif
