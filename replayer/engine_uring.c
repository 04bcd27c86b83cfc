// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring engine: batched submission, registered files, buffers and ring fd (falling back to
 * plain ones if registration is refused, e.g. by RLIMIT_MEMLOCK), completions reaped in a
 * separate call. submit() prepares SQEs; the reap() that follows hands them to the kernel in
 * the same io_uring_enter that waits for or collects completions, so a batch costs one system
 * call. The ring is set up with deferred task work when the kernel has it (see ring_setups):
 * completions then become CQEs only inside our io_uring_enter, so a reap that finds the CQ
 * ring empty enters the kernel when the ring flags say work is pending. BLKDISCARD has no
 * io_uring op in liburing 2.3: it runs synchronously at submission and completes on the next
 * reap.
 */
#include "engine.h"
#include "clock.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct uring_engine {
	struct io_uring ring;
	bool ring_ok;
	bool fixed_files;
	bool fixed_bufs;
	const struct rp_target *targets;
	unsigned int ntargets;
	unsigned int depth;
	const struct rp_clock *clock;
	struct rp_io **local; /* completed synchronously, returned by the next reap */
	unsigned int nlocal;
	unsigned int pending; /* prepared SQEs not yet handed to the kernel */
	uint64_t syscalls;    /* io_uring_enter calls made (at most), and synchronous discards */
};

static void uring_close(struct rp_engine *ee)
{
	struct uring_engine *e = (struct uring_engine *)ee;

	if (!e)
		return;
	if (e->ring_ok)
		io_uring_queue_exit(&e->ring);
	free(e->local);
	free(e);
}

/*
 * Ring setups, cheapest first. The replayer submits and reaps from one thread, so
 * SINGLE_ISSUER|DEFER_TASKRUN (6.1) can run completions in batches inside our own
 * io_uring_enter instead of interrupting the thread once per completion; COOP_TASKRUN (5.19)
 * at least runs them without an IPI. TASKRUN_FLAG makes pending completion work visible in the
 * SQ ring flags, so a non-blocking reap knows when entering the kernel would find any.
 * A kernel that lacks a flag refuses the setup with EINVAL: the next one is tried.
 */
static const unsigned int ring_setups[RP_URING_SETUPS] = {
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	0,
};

static int ring_init(struct uring_engine *e, unsigned int first)
{
	int err = -EINVAL;

	for (unsigned int i = first; i < RP_URING_SETUPS; i++) {
		err = io_uring_queue_init(e->depth, &e->ring, ring_setups[i]);
		if (err != -EINVAL)
			break;
	}
	return err;
}

/*
 * Flushes (fsync) and fallocate never run inline: io_uring hands each to an io-wq worker of
 * the submitting thread, and the kernel allows min(SQ entries, 4 per CPU) such workers for a
 * block device. A flush-heavy recording (17k flushes a second beside 31k writes, 2 vCPUs)
 * queued its flushes behind those 8: when the depth cap was hit, 117 of the 128 I/Os in flight
 * (the mean) were flushes, the oldest 2-3 ms old. Twice the kernel's allowance measured best
 * (docs/REPLAY.md, "Where the time goes"); never more than the I/Os the replay may have in
 * flight. A kernel without the call (before 5.15) keeps its own limit.
 */
static void set_flush_workers(struct uring_engine *e)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long want = (unsigned long)(cpus > 0 ? cpus : 1) * RP_URING_FLUSH_WORKERS_PER_CPU;
	unsigned int limits[2] = {want < e->depth ? (unsigned int)want : e->depth, 0};

	(void)io_uring_register_iowq_max_workers(&e->ring, limits);
}

static int uring_open(struct rp_engine **ep, const struct rp_engine_cfg *cfg)
{
	struct uring_engine *e = calloc(1, sizeof(*e));
	struct iovec *iov = NULL;
	int *fds = NULL;
	int err;

	if (!e)
		return -ENOMEM;
	e->targets = cfg->targets;
	e->ntargets = cfg->ntargets;
	e->depth = cfg->depth ? cfg->depth : 1;
	e->clock = cfg->clock;
	e->local = calloc(e->depth, sizeof(*e->local));
	if (!e->local) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = ring_init(e, cfg->uring_setup_first);
	if (err < 0)
		goto cleanup;
	e->ring_ok = true;
	/* a registered ring fd spares every io_uring_enter an fdget (5.18+; else the plain fd) */
	io_uring_register_ring_fd(&e->ring);

	fds = calloc(cfg->ntargets ? cfg->ntargets : 1, sizeof(*fds));
	if (!fds) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (unsigned int i = 0; i < cfg->ntargets; i++)
		fds[i] = cfg->targets[i].fd;
	e->fixed_files =
		cfg->ntargets && io_uring_register_files(&e->ring, fds, cfg->ntargets) == 0;
	set_flush_workers(e);

	if (cfg->bufs && cfg->buf_bytes) {
		iov = calloc(cfg->depth, sizeof(*iov));
		if (!iov) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (unsigned int i = 0; i < cfg->depth; i++) {
			iov[i].iov_base = cfg->bufs[i];
			iov[i].iov_len = cfg->buf_bytes;
		}
		e->fixed_bufs = io_uring_register_buffers(&e->ring, iov, cfg->depth) == 0;
	}
	err = 0;
	*ep = (struct rp_engine *)e;
cleanup:
	free(fds);
	free(iov);
	if (err)
		uring_close((struct rp_engine *)e);
	return err;
}

/* Hands every prepared SQE to the kernel. */
#define SUBMIT_NOW_SQES 1 /* the scheduler's batch: a full one is submitted at once */

static int flush(struct uring_engine *e)
{
	int ret;

	while (e->pending) {
		e->syscalls++;
		ret = io_uring_submit(&e->ring);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		e->pending = ret >= (int)e->pending ? 0 : e->pending - (unsigned int)ret;
		if (!ret)
			break;
	}
	return 0;
}

static int uring_submit(struct rp_engine *ee, struct rp_io **ios, unsigned int n)
{
	struct uring_engine *e = (struct uring_engine *)ee;
	unsigned int i, queued = 0;
	int ret;

	for (i = 0; i < n; i++) {
		struct rp_io *io = ios[i];
		const struct rp_target *t = &e->targets[io->target];
		int fd = e->fixed_files ? (int)io->target : t->fd;
		bool fixed_buf = e->fixed_bufs && io->buf_index >= 0;
		struct io_uring_sqe *sqe;

		if (io->op == RP_IO_DISCARD && t->is_blkdev) {
			if (e->nlocal >= e->depth)
				break;
			io->res = rp_io_exec_sync(t, io);
			e->syscalls++;
			io->complete_ns = e->clock->now(e->clock);
			e->local[e->nlocal++] = io;
			continue;
		}
		if ((io->op == RP_IO_READ || io->op == RP_IO_WRITE) && io->bytes > UINT_MAX) {
			/* an SQE's length is 32 bits: an error, never a truncated (0-byte) I/O */
			if (e->nlocal >= e->depth)
				break;
			io->res = -EINVAL;
			io->complete_ns = e->clock->now(e->clock);
			e->local[e->nlocal++] = io;
			continue;
		}
		sqe = io_uring_get_sqe(&e->ring);
		if (!sqe)
			break;
		switch (io->op) {
		case RP_IO_READ:
			if (fixed_buf)
				io_uring_prep_read_fixed(sqe, fd, io->buf, (unsigned int)io->bytes,
							 io->offset, io->buf_index);
			else
				io_uring_prep_read(sqe, fd, io->buf, (unsigned int)io->bytes,
						   io->offset);
			break;
		case RP_IO_WRITE:
			if (fixed_buf)
				io_uring_prep_write_fixed(sqe, fd, io->buf, (unsigned int)io->bytes,
							  io->offset, io->buf_index);
			else
				io_uring_prep_write(sqe, fd, io->buf, (unsigned int)io->bytes,
						    io->offset);
			break;
		case RP_IO_FSYNC:
			io_uring_prep_fsync(sqe, fd, 0);
			break;
		case RP_IO_DISCARD:
			io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						(off_t)io->offset, (off_t)io->bytes);
			break;
		default: /* RP_IO_ZERO */
			io_uring_prep_fallocate(sqe, fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
						(off_t)io->offset, (off_t)io->bytes);
			break;
		}
		if (e->fixed_files)
			sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_sqe_set_data(sqe, io);
		io->complete_ns = 0;
		queued++;
	}
	e->pending += queued;
	if ((i < n || e->pending >= SUBMIT_NOW_SQES) && e->pending) {
		/*
		 * The SQ is full, or a whole batch is waiting while the caller prepares more: hand
		 * it over now, so that its issue stamps are true (the last, partial batch goes in
		 * with the next reap, in one system call with the wait).
		 */
		ret = flush(e);
		if (ret < 0)
			return ret;
	}
	return (int)i;
}

static unsigned int take_local(struct uring_engine *e, struct rp_io **done, unsigned int max)
{
	unsigned int n = e->nlocal < max ? e->nlocal : max;

	memcpy(done, e->local, n * sizeof(*done));
	memmove(e->local, e->local + n, (e->nlocal - n) * sizeof(*done));
	e->nlocal -= n;
	return n;
}

/* Takes the completions already in the CQ ring (no system call). */
static unsigned int peek(struct uring_engine *e, struct rp_io **done, unsigned int max)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&e->ring, head, cqe) {
		struct rp_io *io;

		if (n == max)
			break;
		io = io_uring_cqe_get_data(cqe);
		io->res = cqe->res;
		done[n++] = io;
	}
	if (n)
		io_uring_cq_advance(&e->ring, n);
	return n;
}

/* The kernel holds completion work that an io_uring_enter would turn into CQEs. */
static bool kernel_has_cqes(const struct uring_engine *e)
{
	return IO_URING_READ_ONCE(*e->ring.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW);
}

static int uring_reap(struct rp_engine *ee, struct rp_io **done, unsigned int max,
		      uint64_t wait_until_ns)
{
	struct uring_engine *e = (struct uring_engine *)ee;
	unsigned int n = take_local(e, done, max);
	struct io_uring_cqe *cqe;
	uint64_t now;
	int ret;

	n += peek(e, done + n, max - n);
	if (n || !wait_until_ns || (now = e->clock->now(e->clock)) >= wait_until_ns) {
		/* prepared SQEs always go in; completions only when there is room for them */
		if (!e->pending && (n == max || !kernel_has_cqes(e)))
			return (int)n;
		/* one io_uring_enter submits what is prepared and posts what has completed */
		e->syscalls++;
		ret = io_uring_submit_and_get_events(&e->ring);
		if (ret >= 0)
			e->pending -=
				(unsigned int)ret < e->pending ? (unsigned int)ret : e->pending;
		else if (ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return ret;
		ret = flush(e);
		if (ret < 0)
			return ret;
		return (int)(n + peek(e, done + n, max - n));
	}
	struct __kernel_timespec ts = {
		.tv_sec = (long long)((wait_until_ns - now) / 1000000000ull),
		.tv_nsec = (long long)((wait_until_ns - now) % 1000000000ull),
	};

	/* one io_uring_enter submits what is prepared and waits for a completion */
	e->syscalls++;
	ret = io_uring_submit_and_wait_timeout(&e->ring, &cqe, 1, &ts, NULL);
	if (ret >= 0 || ret == -ETIME) {
		/* liburing stops submitting once a completion is there: count what is left */
		e->pending = io_uring_sq_ready(&e->ring);
	} else if (ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
		return ret;
	} else if ((ret = flush(e)) < 0) {
		return ret;
	}
	return (int)peek(e, done, max);
}

static uint64_t uring_syscalls(const struct rp_engine *ee)
{
	return ((const struct uring_engine *)ee)->syscalls;
}

const struct rp_engine_ops rp_engine_uring = {
	.name = "io_uring",
	.summary = "io_uring: batched submission, registered files and buffers (default)",
	.open = uring_open,
	.submit = uring_submit,
	.reap = uring_reap,
	.close = uring_close,
	.syscalls = uring_syscalls,
};
