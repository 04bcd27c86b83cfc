/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one part of the recorder that knows the BPF skeleton: load, attach, consume the rings,
 * scan the in-flight map for the watermark, read the loss counters.
 */
#ifndef BIOTAPE_REC_BPF_H
#define BIOTAPE_REC_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "biotape.h"

struct rec_bpf;

struct rec_bpf_opts {
	bool bio_layer;          /* block_bio_queue/complete instead of requests */
	uint32_t ring_kb;        /* per-shard ring size (power of two, >= page size); 0: default */
	uint32_t inflight_max;   /* in-flight map entries; 0: default */
	uint32_t ndevices;       /* recorded devices: their kernel dev_t (major << 20 | minor) */
	const uint32_t *kdevs;   /* ... index i is the trace's device index i */
	/* ... and their tag space (rec_dev_tag_space): hardware queues and tags per queue, for
	 * one in-flight slot per tag (NULL or 0: the hash map only) */
	const uint32_t *tag_queues, *tag_depth;
	uint32_t pid;            /* 0: any */
	const char *comm;        /* NULL: any */
	int cgroup_fd;           /* -1: any; else an open cgroup v2 directory */
	uint32_t self_pid;       /* never recorded */
	bool raw_tp_only;        /* skip tp_btf (tests of the fallback) */
	bool user_qd;            /* queue depth derived in user space (rec_qd.h): no counter */
	bool waits;              /* note each submitter's last wake from a sleep (--waits) */
};

/* Called for every record consumed from a ring; a non-zero return stops the current poll. */
typedef int (*rec_bpf_event_fn)(void *ctx, const struct biotape_rq_event *ev);

/*
 * Loads (tp_btf, else raw_tp) and attaches. On failure returns -errno and writes a one-line
 * reason into why.
 */
int rec_bpf__open(struct rec_bpf **bp, const struct rec_bpf_opts *opts, rec_bpf_event_fn fn,
		  void *ctx, char *why, size_t whylen);
/* Waits up to timeout_ms for a wakeup, then consumes every ring. Returns records or -errno. */
int rec_bpf__poll(struct rec_bpf *b, int timeout_ms);
/*
 * Lower bound on the issue time of every record not yet consumed: min issue_ns of the requests
 * in flight (entries older than stale_ns ignored), or now. Call it BEFORE draining the rings.
 */
int rec_bpf__watermark(struct rec_bpf *b, uint64_t stale_ns, uint64_t *wm);
/*
 * After detach (and the final drain): hands every request still marked issued in the in-flight
 * map to the event callback without a completion time (complete_ns 0): requests in flight at
 * the stop, or whose completion the kernel ran no program for. Returns how many, or -errno.
 */
int64_t rec_bpf__flush_open(struct rec_bpf *b);
/*
 * Whether the in-flight map holds requests the kernel's own in-flight count does not show:
 * entries issued on a device whose index is not set in kernel_counted[0..ndev), issued
 * flushes (never in the kernel's count), and requeued requests waiting to be issued again.
 * Entries older than stale_ns are ignored.
 */
int rec_bpf__pending(struct rec_bpf *b, const bool *kernel_counted, uint32_t ndev,
		     uint64_t stale_ns, bool *busy);
/* Detaches the programs: no new records after this (the rings can still be drained). */
void rec_bpf__detach(struct rec_bpf *b);
/* Requests (bios) of the recorded devices issued so far (filtered out or not). */
uint64_t rec_bpf__issued(struct rec_bpf *b);
/*
 * Requests sent without a completion time by the programs themselves: their slot was taken by
 * a new request before any completion was seen.
 */
uint64_t rec_bpf__orphaned(struct rec_bpf *b);
/* Sums of the per-CPU loss counters. */
void rec_bpf__counters(struct rec_bpf *b, uint64_t *emitted, uint64_t *lost_ringbuf,
		       uint64_t *lost_inflight);
/*
 * Kernel time spent in the programs (only counted with sysctl kernel.bpf_stats_enabled=1):
 * prints one line per program at verbosity >= 1, returns the total ns.
 */
uint64_t rec_bpf__prog_stats(struct rec_bpf *b);
/* "tp_btf" or "raw_tp". */
const char *rec_bpf__mode(const struct rec_bpf *b);
uint32_t rec_bpf__nr_rings(const struct rec_bpf *b);
void rec_bpf__close(struct rec_bpf *b);

#endif
