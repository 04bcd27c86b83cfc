/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbiotape: the .btape block I/O trace format (spec: docs/BTAPE-FORMAT.md).
 *
 * A pure library: no printing, no exit(), no BPF, no io_uring. Objects are opaque; every
 * destructor accepts NULL.
 *
 * Errors, one rule for this header and btape_interop.h. A function that can fail returns 0
 * (or a count) on success and a negative errno on failure, and has one line of text saying
 * why, in exactly one of two places:
 *  - an object keeps the text of its own last failure: btape_writer__errmsg(w),
 *    btape_reader__errmsg(r);
 *  - a function that leaves no object to ask (a constructor that fails, btape_writer__close(),
 *    which frees the writer either way, and the plain functions) writes it into the caller's
 *    buffer ERRMSG of ERRLEN bytes, truncated to fit (BTAPE_ERRMSG_LEN always suffices);
 *    ERRMSG may be NULL. Its contents mean something only after a failure.
 * There is no global or thread-local error state. Messages start with what failed, usually
 * the file's name ("t.btape: frame 3 at offset 18211: checksum mismatch"), so callers print
 * them as they are.
 */
#ifndef BTAPE_H
#define BTAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BTAPE_FORMAT_VERSION_MAJOR 1 /* readers refuse a file with a newer major */
#define BTAPE_FORMAT_VERSION_MINOR 2 /* minor bumps only add keys; readers ignore unknown keys;
				     * 1.1: the footer's tags map; 1.2: the wake and slept
				     * columns */

#define BTAPE_ERRMSG_LEN 512 /* a caller's message buffer of this size holds any message whole */

/* ---------------------------------------------------------------------------------------- */
/* The event record                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* Operation of a request. Values are part of the file format: append only. */
enum btape_op {
	BTAPE_OP_READ = 0,
	BTAPE_OP_WRITE = 1,
	BTAPE_OP_FLUSH = 2,
	BTAPE_OP_DISCARD = 3,
	BTAPE_OP_SECURE_ERASE = 4,
	BTAPE_OP_WRITE_ZEROES = 5,
	BTAPE_OP_ZONE_OPEN = 6,
	BTAPE_OP_ZONE_CLOSE = 7,
	BTAPE_OP_ZONE_FINISH = 8,
	BTAPE_OP_ZONE_APPEND = 9,
	BTAPE_OP_ZONE_RESET = 10,
	BTAPE_OP_ZONE_RESET_ALL = 11,
	BTAPE_OP_OTHER = 12, /* driver-private, passthrough, or unknown */
	BTAPE_OP__COUNT
};

/* Request flags (bit set). Values are part of the file format: append only. */
enum btape_flag {
	BTAPE_FLAG_SYNC = 1u << 0,
	BTAPE_FLAG_FUA = 1u << 1,
	BTAPE_FLAG_PREFLUSH = 1u << 2,
	BTAPE_FLAG_META = 1u << 3,
	BTAPE_FLAG_READAHEAD = 1u << 4,
	BTAPE_FLAG_ATOMIC = 1u << 5,
	BTAPE_FLAG_PRIO = 1u << 6,
	BTAPE_FLAG_NOMERGE = 1u << 7,
	BTAPE_FLAG_IDLE = 1u << 8,
	BTAPE_FLAG_REQUEUED = 1u << 9, /* the request was requeued at least once */
};

/*
 * Presence bits: a field the source did not have is absent (its bit clear), not zero.
 * issue_ns, dev, sector, bytes and op are always present.
 */
enum btape_has {
	BTAPE_HAS_COMPLETE = 1u << 0, /* complete_ns */
	BTAPE_HAS_INSERT = 1u << 1,   /* insert_ns (queued in the block layer) */
	BTAPE_HAS_FLAGS = 1u << 2,    /* flags */
	BTAPE_HAS_ERROR = 1u << 3,    /* error */
	BTAPE_HAS_PID = 1u << 4,      /* pid */
	BTAPE_HAS_TID = 1u << 5,      /* tid */
	BTAPE_HAS_COMM = 1u << 6,     /* comm */
	BTAPE_HAS_CGROUP = 1u << 7,   /* cgroup */
	BTAPE_HAS_CPU = 1u << 8,      /* cpu */
	BTAPE_HAS_QD = 1u << 9,       /* qd */
	BTAPE_HAS_WAKE = 1u << 10,    /* wake_ns and slept_ns (format 1.2) */
	BTAPE_HAS__ALL = (1u << 11) - 1,
};

/*
 * One block request. Times are CLOCK_MONOTONIC ns of the recording host (see
 * btape_meta.clock_*). Invariant when present: insert_ns <= issue_ns <= complete_ns.
 */
struct btape_event {
	uint64_t issue_ns;    /* dispatched to the device (required) */
	uint64_t complete_ns; /* completed (BTAPE_HAS_COMPLETE) */
	uint64_t insert_ns;   /* entered the block layer queue (BTAPE_HAS_INSERT) */
	uint64_t sector;      /* first 512-byte sector on the device */
	uint64_t bytes;       /* request size in bytes (0 for a flush) */
	uint64_t cgroup;      /* cgroup v2 id (inode number of the cgroup directory) */
	const char *comm;     /* process name; owned by the reader/writer, NUL-terminated */
	uint32_t dev;         /* index into the device table (btape_meta.devices) */
	uint32_t present;     /* BTAPE_HAS_* bits */
	uint32_t flags;       /* BTAPE_FLAG_* bits */
	int32_t error;        /* 0 or a negative errno / blk_status mapped to errno */
	uint32_t pid;         /* process (tgid) that submitted the I/O */
	uint32_t tid;         /* thread that submitted the I/O */
	uint32_t cpu;         /* CPU the request was issued on */
	uint32_t qd;          /* requests in flight on this device at issue, this one included */
	uint8_t op;           /* enum btape_op */
	/*
	 * BTAPE_HAS_WAKE (format 1.2): the submitting thread (tid) last woke from a sleep at
	 * wake_ns, after sleeping slept_ns, and that wake came after its previous I/O
	 * submission. Absent: the thread did not sleep since its previous I/O (it was runnable
	 * or busy), or the recording did not look (record --waits).
	 */
	uint64_t wake_ns;
	uint64_t slept_ns;
};

/*
 * Extent limits (docs/BTAPE-FORMAT.md, "Extent limits"): bytes fits the kernel's 32-bit request
 * size, and the end, sector * 512 + bytes, is a valid off_t. Writers refuse an event beyond
 * them, readers report it as damage, importers as a malformed line.
 */
#define BTAPE_BYTES_MAX 0xffffffffull	    /* largest bytes of one event: UINT32_MAX */
#define BTAPE_END_MAX 0x7fffffffffffffffull /* largest sector * 512 + bytes: INT64_MAX */

/* True when sector * 512 + bytes (computed without overflow) is within the limits above. */
static inline bool btape_extent_ok(uint64_t sector, uint64_t bytes)
{
	return bytes <= BTAPE_BYTES_MAX && sector <= (BTAPE_END_MAX - bytes) >> 9;
}

/* "read", "write", "flush", ... ; "?" for an out-of-range value. */
const char *btape_op_name(unsigned int op);
/* Inverse of btape_op_name(); returns -EINVAL for an unknown name. */
int btape_op_parse(const char *name);
/* Flags as letters, blkparse-like: S sync, F fua, P preflush, M meta, A readahead, U atomic... */
const char *btape_flags_str(uint32_t flags, char *buf, size_t len);
/* The flags of btape_flags_str()'s letters s[0..n) into *flags: 0, or -EINVAL for a letter
 * that names no flag. */
int btape_flags_parse(const char *s, size_t n, uint32_t *flags);

/* ---------------------------------------------------------------------------------------- */
/* Metadata                                                                                 */
/* ---------------------------------------------------------------------------------------- */

#define BTAPE_NAME_MAX 256
#define BTAPE_DEVICES_MAX 65536 /* device table entries a file may hold (docs/BTAPE-FORMAT.md) */
#define BTAPE_TAGS_MAX 4096     /* user tags a file may hold */
/* Footer tags (btape_writer__set_footer_tag()): keys, encoded bytes and msgpack values of the
 * whole map, and the nesting of a value (a scalar is depth 0) */
#define BTAPE_FOOTER_TAGS_MAX 4096
#define BTAPE_FOOTER_TAGS_MAX_BYTES (256u << 10)
#define BTAPE_FOOTER_TAGS_MAX_ITEMS (1u << 15)
#define BTAPE_FOOTER_TAG_MAX_DEPTH 14
/* Footer tags biotape writes: "fidelity", a replay result's fidelity section (a map, the
 * figures of `biotape replay --json`'s "fidelity"; docs/REPLAY.md) */
#define BTAPE_TAG_FIDELITY "fidelity"

struct btape_device {
	uint32_t dev_t_major;     /* 0 when unknown (imported traces) */
	uint32_t dev_t_minor;
	char name[BTAPE_NAME_MAX];  /* "loop3", "nvme0n1", or the importer's id ("disk 2") */
	char model[BTAPE_NAME_MAX]; /* empty when unknown */
	uint64_t size_bytes;      /* 0 when unknown */
	uint32_t logical_block;   /* bytes; 0 when unknown */
	uint32_t physical_block;  /* bytes; 0 when unknown */
	int8_t rotational;        /* 1, 0, or -1 when unknown */
	char host[BTAPE_NAME_MAX];  /* recording host, in a multi-host trace (convert --merge);
	                             * empty otherwise: the file's hostname */
};

struct btape_tag {
	char key[BTAPE_NAME_MAX];
	char value[BTAPE_NAME_MAX];
};

/*
 * One measurement of this host's clock against the cluster's reference host (rank 0):
 * offset_ns = clock(this host) - clock(reference) at the instant local_ns (this trace's event
 * clock), known within +- uncertainty_ns (half the round trip of the kept exchange).
 */
struct btape_clock_sync {
	uint64_t local_ns;
	int64_t offset_ns;
	uint64_t uncertainty_ns;
};

#define BTAPE_CLOCK_SYNC_MAX 2 /* measurements kept: at start and at stop (drift) */

/*
 * Cluster recording (docs/BTAPE-FORMAT.md, "cluster"): present when id[0] != 0. The files of
 * one cluster recording share the id; a reader maps an event time t of this file to the
 * reference host's clock as t - offset(t), offset interpolated linearly between the syncs.
 */
struct btape_cluster {
	char id[BTAPE_NAME_MAX];        /* recording id shared by every host; "" : none */
	char reference[BTAPE_NAME_MAX]; /* host name of the reference (rank 0) */
	char method[BTAPE_NAME_MAX];    /* how the offsets were measured, e.g. "mpi-rtt-bounds" */
	uint32_t rank, ranks;           /* this host's rank, and how many recorded */
	uint32_t nsync;                 /* 0..BTAPE_CLOCK_SYNC_MAX, in local_ns order */
	struct btape_clock_sync sync[BTAPE_CLOCK_SYNC_MAX];
};

/*
 * This file's offset to the reference at local_ns: interpolated linearly between the first
 * and the last sync (rounded to the nearest ns); before the first or after the last, that
 * measurement's offset (drift is not extrapolated); 0 without any sync.
 */
int64_t btape_cluster_offset_at(const struct btape_cluster *cl, uint64_t local_ns);
/* local_ns on the reference host's clock: local_ns - offset_at(local_ns), clamped to u64. */
uint64_t btape_cluster_to_reference(const struct btape_cluster *cl, uint64_t local_ns);
/* The largest uncertainty of the syncs (0 without any). */
uint64_t btape_cluster_uncertainty(const struct btape_cluster *cl);
/* Drift of this clock against the reference between the first and last sync, in ppm (parts
 * per million; positive: this clock runs fast); 0 with fewer than two syncs. */
double btape_cluster_drift_ppm(const struct btape_cluster *cl);

struct btape_meta {
	char tool[BTAPE_NAME_MAX];     /* "biotape 0.1.0", or "import:msr" */
	char hostname[BTAPE_NAME_MAX];
	char kernel[BTAPE_NAME_MAX];   /* uname -r */
	char source[BTAPE_NAME_MAX];   /* "ebpf:rq", "ebpf:bio", "replay", "import:<fmt>" */
	char capture[1024];            /* capture settings and filters, as text ("-d loop3 -p 42") */
	uint64_t clock_mono_ns;        /* CLOCK_MONOTONIC at the anchor ... */
	uint64_t clock_real_ns;        /* ... and CLOCK_REALTIME (ns since the epoch) at the same instant */
	uint32_t ndevices;
	struct btape_device *devices; /* ndevices entries */
	uint32_t ntags;
	struct btape_tag *tags;       /* user tags (key=value) */
	struct btape_cluster cluster; /* cluster recording clock; cluster.id "" when none */
};

/* Deep copy / free of a metadata block (devices and tags arrays are heap-owned). */
int btape_meta_copy(struct btape_meta *dst, const struct btape_meta *src);
void btape_meta_free(struct btape_meta *meta);
/* Appends a device; returns its index or a negative errno (-E2BIG past BTAPE_DEVICES_MAX). */
int btape_meta_add_device(struct btape_meta *meta, const struct btape_device *dev);
/* Appends a tag: 0 or a negative errno (-E2BIG past BTAPE_TAGS_MAX). */
int btape_meta_add_tag(struct btape_meta *meta, const char *key, const char *value);

/* ---------------------------------------------------------------------------------------- */
/* Summary (the footer, or recomputed by a scan)                                            */
/* ---------------------------------------------------------------------------------------- */

/*
 * Filled by btape_reader__summary() and btape_writer__file_summary(). The caller sets sz to
 * sizeof(struct btape_summary) first (`struct btape_summary s = {.sz = sizeof(s)};`): the
 * library fills only the fields that fit in sz, so that new fields can be added at the end
 * without breaking a program built against an older btape.h.
 */
struct btape_summary {
	size_t sz;
	uint64_t events;
	uint64_t first_issue_ns, last_issue_ns; /* 0 when no events */
	uint64_t last_complete_ns;
	uint64_t count_by_op[BTAPE_OP__COUNT];
	uint64_t bytes_by_op[BTAPE_OP__COUNT];
	uint64_t lost_events;         /* events the source knows it lost (ring full, map full...) */
	uint64_t lost_ringbuf;        /* of which: failed ring-buffer reservations */
	uint64_t lost_inflight;       /* of which: in-flight map full / unmatched completions */
	uint64_t lost_writer;         /* of which: dropped by the writer queue (slow disk) */
	uint64_t order_violations;    /* events written after a watermark promised otherwise */
	uint64_t chunks;
	uint64_t file_bytes;
	bool has_footer;              /* false: summary recomputed by scanning (recovered file) */
	bool recovered;               /* the file was cut short: trailing bytes ignored */
	uint64_t recovered_bytes_ignored;
	/* cluster recording: the clock measured at the stop (footer "cluster_sync"); a reader
	 * also appends it to btape_meta.cluster.sync */
	bool has_clock_stop;
	struct btape_clock_sync clock_stop;
	/* the run that wrote it stopped early (a replay interrupted or stopped by a failing
	 * rank): the events are those issued until then (footer "interrupted") */
	bool interrupted;
	/* the file has a footer or trailer that cannot be used (a checksum, an offset, a
	 * malformed map): the writer finished, but the summary was recomputed by scanning; false
	 * for a file that was cut short (no footer) */
	bool footer_damaged;
};

/* ---------------------------------------------------------------------------------------- */
/* Writer                                                                                   */
/* ---------------------------------------------------------------------------------------- */

struct btape_writer;

struct btape_writer_opts {
	size_t sz;                    /* sizeof(struct btape_writer_opts), for growth */
	int zstd_level;               /* 0: default (3) */
	uint32_t chunk_events;        /* events per chunk; 0: default (65536) */
	uint64_t flush_interval_ns;   /* flush a partial chunk this long after its first event;
	                               * 0: default (1 s); crash loses at most this much */
	uint64_t reorder_max_events;  /* events held for issue-order sorting; 0: default (4 M) */
	bool fsync;                   /* fdatasync after every chunk (default: only at close) */
	bool writeback;               /* start writeback of every chunk from the writing thread
	                               * (sync_file_range, no wait): a recorder's own output then
	                               * reaches the disk as its own I/O, not a flusher thread's */
	bool footer_reserve;          /* __open_direct: when the disk fills, keep a readable file
	                               * with a footer (room for it is set aside in an unnamed
	                               * file in PATH's directory, when the file system allows);
	                               * see __close and __file_summary */
};

/*
 * Whether PATH may receive an output file (docs/SAFETY.md): 0 when it does not exist or is a
 * regular file (a symlink is followed), 1 when it is the null device (char 1:3: written to,
 * never replaced or removed), -EISDIR or -EPERM when it is anything else (a block or character
 * device, FIFO, socket, directory), with a one-line reason in ERRMSG; other -errno from lstat().
 * The writers below apply it: a device node is never written to, truncated or renamed over.
 */
int btape_output_check(const char *path, char *errmsg, size_t errlen);

/*
 * Creates PATH (via PATH.tmp.XXXXXX renamed into place by btape_writer__close(); "-" writes
 * to stdout with no rename; the null device is written directly). PATH must pass
 * btape_output_check() at the open and again just before the rename (a path that became a
 * device node meanwhile is refused, the trace discarded); a symlink at PATH is replaced by the
 * rename, its target is left alone. Crash safety: every chunk is written as soon as it is
 * complete, so a killed writer leaves PATH.tmp.* readable up to its last chunk; see
 * docs/BTAPE-FORMAT.md. With opts->sz == 0 or opts NULL, defaults apply.
 */
int btape_writer__open(struct btape_writer **wp, const char *path, const struct btape_meta *meta,
		       const struct btape_writer_opts *opts, char *errmsg, size_t errlen);
/*
 * Like __open but writes into PATH directly (no temp file, no rename): for recorders that
 * must leave a readable file at PATH if killed. PATH is created, or an existing regular file
 * (through a symlink too) truncated; the null device is written to; anything else refused.
 */
int btape_writer__open_direct(struct btape_writer **wp, const char *path,
			      const struct btape_meta *meta, const struct btape_writer_opts *opts,
			      char *errmsg, size_t errlen);
/* Writer on an already-open fd (not closed by the writer); no rename. */
int btape_writer__open_fd(struct btape_writer **wp, int fd, const struct btape_meta *meta,
			  const struct btape_writer_opts *opts, char *errmsg, size_t errlen);

/*
 * Adds one event (copied; comm interned). Events may arrive in any order (typically
 * completion order); the file holds them in issue order as long as each event arrives
 * before the watermark passes its issue time (see __advance).
 */
int btape_writer__add(struct btape_writer *w, const struct btape_event *ev);
/*
 * Promise: no event added from now on has issue_ns < watermark_ns. Events issued before the
 * watermark become final and are written in issue order (in batches: see docs/BTAPE-FORMAT.md,
 * "Writer semantics"). The writer holds at most reorder_max_events (at most 2^31); past that
 * it writes the oldest quarter. An event that breaks the promise is still written (never
 * dropped) and counted in order_violations.
 */
int btape_writer__advance(struct btape_writer *w, uint64_t watermark_ns);
/* Writes every held event now (as if the watermark were +inf) and makes it durable. */
int btape_writer__flush(struct btape_writer *w);
/*
 * FN(CTX, EV) is called for every event as it is released, in the order the file holds them
 * (issue order, but for late events: see __advance), before it is written: it may fill in
 * fields that depend on the events issued before it (the recorder's queue depth at issue).
 * NULL removes it. Set it before the first __add.
 */
void btape_writer__set_release_hook(struct btape_writer *w,
				    void (*fn)(void *ctx, struct btape_event *ev), void *ctx);
/*
 * A cluster recording's clock measured at the stop (it is known only then): written in the
 * footer, and read back as the last of btape_meta.cluster.sync. A file without a footer has
 * only the metadata's syncs.
 */
void btape_writer__set_clock_stop(struct btape_writer *w, const struct btape_clock_sync *sync);
/* Marks the trace as cut short by its producer (btape_summary.interrupted), before __close. */
void btape_writer__set_interrupted(struct btape_writer *w);
/*
 * Footer tags (docs/BTAPE-FORMAT.md, "Footer tags"): figures known only at the end of a run
 * (a replay's fidelity section), written in the footer at __close. KEY is 1..255 bytes; VALUE
 * is one msgpack value of LEN bytes, of any type (a number, a string, a bin blob, an array or
 * a map; nested at most BTAPE_FOOTER_TAG_MAX_DEPTH deep), copied. A key set again is replaced.
 * All tags together stay within BTAPE_FOOTER_TAGS_MAX keys, BTAPE_FOOTER_TAGS_MAX_BYTES
 * encoded and BTAPE_FOOTER_TAGS_MAX_ITEMS msgpack values, so that every 1.x reader accepts
 * the footer. Returns 0; -EINVAL for a bad key or a VALUE that is not exactly one well-formed
 * msgpack value, -E2BIG past the limits (the writer stays usable either way; __errmsg says
 * why), or the writer's earlier failure.
 */
int btape_writer__set_footer_tag(struct btape_writer *w, const char *key, const void *value,
				 size_t len);
/* Loss accounting for the footer (adds to the running counts). */
void btape_writer__add_lost(struct btape_writer *w, uint64_t ringbuf, uint64_t inflight,
			    uint64_t writer);
/* Bytes written to the file so far, and events accepted so far. */
uint64_t btape_writer__bytes(const struct btape_writer *w);
uint64_t btape_writer__events(const struct btape_writer *w);
/*
 * What the file holds: the totals of the chunks written completely so far (events still held
 * or in the pending chunk are not in it; after a failed write, nothing after that). After a
 * successful __flush that is every event accepted. The lost counts are not filled in.
 */
int btape_writer__file_summary(const struct btape_writer *w, struct btape_summary *s);
/* Events added so far with an issue time before one already promised or written (the
 * footer's order_violations): they are in the file out of issue order. */
uint64_t btape_writer__order_violations(const struct btape_writer *w);
/*
 * Flushes, writes the footer, fsyncs, renames into place. The writer is freed either way, so
 * the reason for a failure goes to ERRMSG.
 * With opts.footer_reserve, a write that failed for space (ENOSPC, EDQUOT, EFBIG; that call
 * returned the error) cut the file back to its last complete chunk, and __close then writes
 * the footer of what the file holds (__file_summary, with the lost counts) and returns 0 if
 * that fits; if not, the file ends at its last chunk, without a footer.
 */
int btape_writer__close(struct btape_writer *w, char *errmsg, size_t errlen);
/* Discards: removes the temporary file (nothing at PATH is touched). NULL-safe. */
void btape_writer__abort(struct btape_writer *w);
/*
 * Discards like __abort, and for __open_direct also what it wrote at PATH: a file this writer
 * created is removed (only while PATH still is that file), an existing one it truncated is
 * left empty, the null device untouched. NULL-safe.
 */
void btape_writer__discard(struct btape_writer *w);
/* Reason for the writer's last failure ("no error" if none). */
const char *btape_writer__errmsg(const struct btape_writer *w);

/* ---------------------------------------------------------------------------------------- */
/* Reader                                                                                   */
/* ---------------------------------------------------------------------------------------- */

struct btape_reader;

/*
 * Opens PATH ("-" for stdin: no seeking, no footer shortcut). Reads the header and metadata;
 * uses the footer index when present and valid, otherwise scans (recovery). Bounded memory:
 * one decoded chunk at a time. On failure ERRMSG says what and where.
 */
int btape_reader__open(struct btape_reader **rp, const char *path, char *errmsg, size_t errlen);
/*
 * Like __open on an already-open fd (not closed by the reader): a regular file gets the
 * footer shortcut and seeking; a pipe is read as a stream. For a memory buffer use memfd.
 */
int btape_reader__open_fd(struct btape_reader **rp, int fd, char *errmsg, size_t errlen);
void btape_reader__close(struct btape_reader *r);

const struct btape_meta *btape_reader__meta(const struct btape_reader *r);
/*
 * Summary from the footer; when the footer is missing or damaged, recomputed by a full
 * verifying scan (summary->has_footer false). Does not move the read position.
 */
int btape_reader__summary(struct btape_reader *r, struct btape_summary *summary);

/*
 * Next event in issue order: returns 1 and fills *ev, 0 at the end, or a negative errno
 * (damaged data; see __errmsg). ev->comm stays valid until the reader is closed.
 */
int btape_reader__next(struct btape_reader *r, struct btape_event *ev);
/*
 * Batch form of __next: points *evs at up to the rest of the current chunk (read-only,
 * valid until the next call). Returns the number of events, 0 at the end, or -errno.
 */
int btape_reader__next_batch(struct btape_reader *r, const struct btape_event **evs);
/*
 * Stops decoding the fields of has_mask (BTAPE_HAS_* bits) from the next decoded batch on:
 * they read as 0 (comm NULL), their present bits still say what the file holds, and their
 * values are not range-checked. 0 turns decoding back on. Returns 0 or -EINVAL.
 */
int btape_reader__skip_fields(struct btape_reader *r, uint32_t has_mask);
/* Positions at the first event with issue_ns >= ns (index-assisted). */
int btape_reader__seek(struct btape_reader *r, uint64_t ns);
/* Verifies every frame's checksum and decodability from the start; position unchanged. */
int btape_reader__verify(struct btape_reader *r);
/*
 * The footer tag KEY (see btape_writer__set_footer_tag()): returns 1 and points *value at its
 * msgpack encoding of *len bytes (valid until __close), or 0 when the file has no such tag (or
 * no valid footer; a stream has its footer only after its last event), or -EINVAL.
 */
int btape_reader__footer_tag(const struct btape_reader *r, const char *key, const void **value,
			     size_t *len);
/* The footer tags in file order: tag I's key and value as above (1), 0 past the last. */
int btape_reader__footer_tag_at(const struct btape_reader *r, uint32_t i, const char **key,
				const void **value, size_t *len);
/* One event chunk of the footer's index (btape_reader__chunk_info()). */
struct btape_chunk_info {
	size_t sz; /* set by the caller: sizeof(struct btape_chunk_info) */
	uint64_t events;
	uint64_t issue_min_ns, issue_max_ns; /* its smallest and largest issue time */
};
/*
 * Chunk I of the footer's index, in file order: returns 1 and fills *ci, or 0 past the last
 * or when the file has no valid footer (a stream, a recovered file), or -EINVAL. Reads no
 * event: what a caller needs to plan work by events before reading them.
 */
int btape_reader__chunk_info(const struct btape_reader *r, uint64_t i,
			     struct btape_chunk_info *ci);
/* Reason for the reader's last failure ("no error" if none). */
const char *btape_reader__errmsg(const struct btape_reader *r);
/* The name the reader's messages start with: the path it was opened by, "<stdin>" for "-",
 * "trace" when opened by fd. */
const char *btape_reader__name(const struct btape_reader *r);

#ifdef __cplusplus
}
#endif
#endif /* BTAPE_H */
