// SPDX-License-Identifier: GPL-2.0-only
/* The engine table, the synchronous executor, and the null engine. */
#include "engine.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

const struct rp_engine_ops *const rp_engines[] = {
	&rp_engine_uring,
	&rp_engine_psync,
	&rp_engine_null,
	NULL,
};

const struct rp_engine_ops *rp_engine_find(const char *name)
{
	for (unsigned int i = 0; rp_engines[i]; i++) {
		if (strcmp(rp_engines[i]->name, name) == 0)
			return rp_engines[i];
	}
	return NULL;
}

int64_t rp_io_exec_sync(const struct rp_target *t, const struct rp_io *io)
{
	ssize_t n;
	uint64_t range[2];

	switch (io->op) {
	case RP_IO_READ:
		n = pread(t->fd, io->buf, io->bytes, (off_t)io->offset);
		return n < 0 ? -errno : n;
	case RP_IO_WRITE:
		n = pwrite(t->fd, io->buf, io->bytes, (off_t)io->offset);
		return n < 0 ? -errno : n;
	case RP_IO_FSYNC:
		return fsync(t->fd) < 0 ? -errno : 0;
	case RP_IO_DISCARD:
		if (t->is_blkdev) {
			range[0] = io->offset;
			range[1] = io->bytes;
			return ioctl(t->fd, BLKDISCARD, range) < 0 ? -errno : (int64_t)io->bytes;
		}
		return fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 (off_t)io->offset, (off_t)io->bytes) < 0
			       ? -errno
			       : (int64_t)io->bytes;
	case RP_IO_ZERO:
		return fallocate(t->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
				 (off_t)io->offset, (off_t)io->bytes) < 0
			       ? -errno
			       : (int64_t)io->bytes;
	}
	return -EOPNOTSUPP;
}

/* ---- null: completes every I/O null_latency_ns after submission (in the given clock) ---- */

struct null_engine {
	const struct rp_clock *clock;
	uint64_t latency_ns;
	unsigned int cap, head, count; /* FIFO: a constant latency completes in order */
	struct rp_io **q;
	uint64_t *due;
};

static int null_open(struct rp_engine **ep, const struct rp_engine_cfg *cfg)
{
	struct null_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->clock = cfg->clock;
	e->latency_ns = cfg->null_latency_ns;
	e->cap = cfg->depth ? cfg->depth : 1;
	e->q = calloc(e->cap, sizeof(*e->q));
	e->due = calloc(e->cap, sizeof(*e->due));
	if (!e->q || !e->due) {
		free(e->q);
		free(e->due);
		free(e);
		return -ENOMEM;
	}
	*ep = (struct rp_engine *)e;
	return 0;
}

static int null_submit(struct rp_engine *ee, struct rp_io **ios, unsigned int n)
{
	struct null_engine *e = (struct null_engine *)ee;
	uint64_t now = e->clock->now(e->clock);
	unsigned int i;

	for (i = 0; i < n && e->count < e->cap; i++) {
		unsigned int slot = (e->head + e->count) % e->cap;

		ios[i]->res = ios[i]->op == RP_IO_FSYNC ? 0 : (int64_t)ios[i]->bytes;
		e->q[slot] = ios[i];
		e->due[slot] = now + e->latency_ns;
		e->count++;
	}
	return (int)i;
}

static int null_reap(struct rp_engine *ee, struct rp_io **done, unsigned int max,
		     uint64_t wait_until_ns)
{
	struct null_engine *e = (struct null_engine *)ee;
	uint64_t now = e->clock->now(e->clock);
	unsigned int n = 0;

	if (e->count && e->due[e->head] > now && wait_until_ns) {
		uint64_t t = e->due[e->head] < wait_until_ns ? e->due[e->head] : wait_until_ns;

		e->clock->sleep_until(e->clock, t);
		now = e->clock->now(e->clock);
	} else if (!e->count && wait_until_ns) {
		e->clock->sleep_until(e->clock, wait_until_ns);
		return 0;
	}
	while (n < max && e->count && e->due[e->head] <= now) {
		done[n] = e->q[e->head];
		done[n]->complete_ns = e->due[e->head];
		n++;
		e->head = (e->head + 1) % e->cap;
		e->count--;
	}
	return (int)n;
}

static void null_close(struct rp_engine *ee)
{
	struct null_engine *e = (struct null_engine *)ee;

	if (!e)
		return;
	free(e->q);
	free(e->due);
	free(e);
}

const struct rp_engine_ops rp_engine_null = {
	.name = "null",
	.summary = "completes every I/O at once, touches nothing (scheduler ceiling, tests)",
	.open = null_open,
	.submit = null_submit,
	.reap = null_reap,
	.close = null_close,
};
