/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * I/O engines of the replayer behind one small ops table: open (on already-open targets),
 * submit a batch, reap completions (apart from submission), close. Chosen by name from
 * rp_engines[]. Engines never print; they return 0 / a count or -errno. An engine is opened,
 * used and closed by one thread (io_uring rings may be single-issuer).
 */
#ifndef RP_ENGINE_H
#define RP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rp_clock;

/* What an engine is asked to do (already mapped and aligned by the scheduler). */
enum rp_io_op {
	RP_IO_READ,
	RP_IO_WRITE,
	RP_IO_FSYNC,   /* flush */
	RP_IO_DISCARD, /* BLKDISCARD on a block device, PUNCH_HOLE on a file */
	RP_IO_ZERO,    /* write zeroes: fallocate ZERO_RANGE */
	RP_IO__COUNT
};

/* One target: a block device or a regular file, opened by the caller. */
struct rp_target {
	int fd;
	bool is_blkdev;
	uint64_t size;		       /* bytes */
	uint32_t lbs;		       /* logical block size (BLKSSZGET; 512 for files) */
	uint32_t dev_major, dev_minor; /* of the block device, or of the file's filesystem */
	const char *path;
	bool created;			   /* a file made by this run (--create) */
	uint64_t created_dev, created_ino; /* the file it made, removed only while path names it */
	/* exclusive opens, held to the close (target.c), of the partitions sharing its sectors
	 * and of the block devices its writes reach through loop devices: nobody mounts them
	 * while the replay writes (a whole disk's partitions are covered by the disk's claim) */
	struct rp_claim {
		int fd;
		uint64_t dev;
	} * claims;
	unsigned int nclaims;
};

/* An I/O in flight. The engine fills res and may fill complete_ns (0: the caller stamps it). */
struct rp_io {
	uint64_t offset;
	uint64_t bytes;
	void *buf;	 /* bytes long, aligned to 4096 */
	int buf_index;	 /* registered buffer index, or -1 */
	uint32_t target; /* index into the engine's target table */
	uint8_t op;	 /* enum rp_io_op */
	int64_t res;	 /* bytes done, or -errno */
	uint64_t complete_ns;
	/* scheduler bookkeeping, opaque to engines */
	uint64_t intended_ns, issue_ns, seq;
	uint64_t order_id; /* --order: the I/O's id in the dependency tracker */
	uint32_t dev, copy, lane, qd;
	uint8_t trace_op;
	bool busy;   /* in flight */
	bool pooled; /* buf is one of cfg->big_bufs, lent until it completes */
};

struct rp_engine_cfg {
	const struct rp_target *targets;
	unsigned int ntargets;
	unsigned int depth; /* most I/Os in flight at once */
	void **bufs;	    /* depth buffers of buf_bytes each, for registration */
	size_t buf_bytes;
	const struct rp_clock *clock;
	uint64_t null_latency_ns; /* null engine: completes this long after submission */
	/* io_uring: first ring setup tried (0: the cheapest the kernel takes; tests: others) */
	unsigned int uring_setup_first;
};

/* io_uring ring setups, cheapest first: DEFER_TASKRUN, COOP_TASKRUN, plain. */
#define RP_URING_SETUPS 3
/* io-wq workers (flushes, fallocate) per online CPU: twice the kernel's default */
#define RP_URING_FLUSH_WORKERS_PER_CPU 8

struct rp_engine;

struct rp_engine_ops {
	const char *name;
	const char *summary;
	int (*open)(struct rp_engine **ep, const struct rp_engine_cfg *cfg);
	/* Submits n I/Os; returns how many were accepted (the rest stay with the caller) or -errno.
	 */
	int (*submit)(struct rp_engine *e, struct rp_io **ios, unsigned int n);
	/*
	 * Returns up to max completed I/Os in done[] (count, or -errno). wait_until_ns 0: never
	 * blocks; otherwise may block until at least one completes or the clock reaches it.
	 */
	int (*reap)(struct rp_engine *e, struct rp_io **done, unsigned int max,
		    uint64_t wait_until_ns);
	void (*close)(struct rp_engine *e); /* NULL-safe; waits for nothing: drain first */
	/* System calls the engine has made so far, at most (NULL: not counted). */
	uint64_t (*syscalls)(const struct rp_engine *e);
};

extern const struct rp_engine_ops rp_engine_uring, rp_engine_psync, rp_engine_null;
/* NULL-terminated table of every engine, default first. */
extern const struct rp_engine_ops *const rp_engines[];
/* The engine called name, or NULL. */
const struct rp_engine_ops *rp_engine_find(const char *name);

/* Synchronous execution of one I/O (used by psync, and by io_uring for BLKDISCARD). */
int64_t rp_io_exec_sync(const struct rp_target *t, const struct rp_io *io);

#endif
