// SPDX-License-Identifier: GPL-2.0-only
/*
 * biotape-mpi.so: the only code linked with MPI (cluster_mpi.h). MPI-3 standard API only, so
 * Open MPI and MPICH both work. Collectives are the nonblocking ones (MPI_Ibarrier, MPI_Ibcast,
 * MPI_Iallreduce, ...) polled with MPI_Test until done or a timeout: a peer that died leaves
 * us with -ETIMEDOUT, not a hang.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <time.h>

#include "cluster_mpi.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A gap between two polls longer than this was a stall of this process or of its host (a
 * paused VM, a starved thread), not time in which the peer stayed silent: it counts this much. */
#define STALL_NS 50000000ull

/* Polls req until done, or until it has polled w->timeout_ns without an answer (the gaps of a
 * stall count STALL_NS: after a paused VM every rank's timer would have run out at once, and a
 * rank whose peer had answered at once on resuming would give it up). Spins for the first
 * w->spin_ns (200 us by default: a round trip on shared memory is a few us), then sleeps between
 * polls, an eighth of the time waited so far (at least 20 us, at most 1 ms), so that
 * oversubscribed ranks leave the CPU to their peers and a long wait costs little. The hurry
 * after a signal is in wall time: the launcher's SIGKILL follows its SIGTERM in wall time. */
static int wait_req_status(MPI_Request *req, const struct cl_wait *w, MPI_Status *st)
{
	uint64_t prev = mono_ns(), el = 0, hurried = 0;
	int done = 0;

	for (;;) {
		if (MPI_Test(req, &done, st) != MPI_SUCCESS)
			return -EIO;
		if (done)
			return 0;
		uint64_t now = mono_ns(), gap = now - prev;

		prev = now;
		el += gap < STALL_NS ? gap : STALL_NS;
		if (w->timeout_ns > 0 && el > (uint64_t)w->timeout_ns) /* the caller aborts */
			return -ETIMEDOUT;
		if (w->hurry && *w->hurry && !hurried)
			hurried = now;
		if (hurried && now - hurried > (uint64_t)w->hurry_ns)
			return -ETIMEDOUT;
		if (el >= (uint64_t)w->spin_ns) {
			uint64_t d = el / 8 < 20000 ? 20000 : el / 8 < 1000000 ? el / 8 : 1000000;
			struct timespec ts = { 0, (long)d };

			nanosleep(&ts, NULL);
		}
	}
}

static int wait_req(MPI_Request *req, const struct cl_wait *w)
{
	return wait_req_status(req, w, MPI_STATUS_IGNORE);
}

static int ok(int rc, MPI_Request *req, const struct cl_wait *w)
{
	return rc == MPI_SUCCESS ? wait_req(req, w) : -EIO;
}

static int op_init(int *argc, char ***argv, int *rank, int *size)
{
	int provided = 0;

	/* SERIALIZED: the run's watchdog thread polls while the main thread replays; never two
	 * threads in MPI at once. */
	if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
		return -EIO;
	if (provided < MPI_THREAD_SERIALIZED)
		return -ENOTSUP;
	/* return codes instead of the default abort-on-error */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

static void op_finalize(void)
{
	MPI_Finalize();
}

static void op_abort(int code)
{
	MPI_Abort(MPI_COMM_WORLD, code);
}

static int op_barrier(const struct cl_wait *w)
{
	MPI_Request r;

	return ok(MPI_Ibarrier(MPI_COMM_WORLD, &r), &r, w);
}

static int op_bcast(void *buf, size_t len, int root, const struct cl_wait *w)
{
	MPI_Request r;

	if (len > INT_MAX)
		return -EOVERFLOW;
	return ok(MPI_Ibcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD, &r), &r, w);
}

static int op_gather(const void *in, size_t len, void *out, int root, const struct cl_wait *w)
{
	MPI_Request r;

	if (len > INT_MAX)
		return -EOVERFLOW;
	return ok(MPI_Igather(in, (int)len, MPI_BYTE, out, (int)len, MPI_BYTE, root, MPI_COMM_WORLD,
			      &r),
		  &r, w);
}

static int op_allgather(const void *in, size_t len, void *out, const struct cl_wait *w)
{
	MPI_Request r;

	if (len > INT_MAX)
		return -EOVERFLOW;
	return ok(MPI_Iallgather(in, (int)len, MPI_BYTE, out, (int)len, MPI_BYTE, MPI_COMM_WORLD,
				 &r),
		  &r, w);
}

static int op_allreduce_u64(uint64_t *v, size_t n, int op, const struct cl_wait *w)
{
	MPI_Op mop = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_MIN;
	MPI_Request r;

	if (n > INT_MAX)
		return -EOVERFLOW;
	return ok(MPI_Iallreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, mop, MPI_COMM_WORLD, &r), &r,
		  w);
}

static MPI_Request pending = MPI_REQUEST_NULL; /* op_iallreduce_u64's */

static int op_iallreduce_u64(uint64_t *v, size_t n, int op)
{
	MPI_Op mop = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_MIN;

	if (n > INT_MAX)
		return -EOVERFLOW;
	if (pending != MPI_REQUEST_NULL)
		return -EBUSY;
	return MPI_Iallreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, mop, MPI_COMM_WORLD,
			      &pending) == MPI_SUCCESS ? 0 : -EIO;
}

static int op_test(void)
{
	int done = 0;

	if (pending == MPI_REQUEST_NULL)
		return 1;
	/* a completed request is freed and set to MPI_REQUEST_NULL */
	return MPI_Test(&pending, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS ? done : -EIO;
}

static int op_wait(const struct cl_wait *w)
{
	return pending == MPI_REQUEST_NULL ? 0 : wait_req(&pending, w);
}

/*
 * MPI reads a send's buffer until the send completes, and writes a receive's until it does: a
 * call given up on (-ETIMEDOUT) must not leave MPI holding the caller's memory, which is freed
 * or reused by then (a beat's on the watchdog's stack). A send reads a copy, which a send given
 * up on keeps (the run is ending: a silent peer stops it). A receive is withdrawn
 * (MPI_Cancel): a message that comes later waits, unmatched, for the next receive from that
 * peer and tag. One that matched meanwhile is received after all (0).
 */
static int op_send(const void *buf, size_t len, int peer, int tag, const struct cl_wait *w)
{
	MPI_Request r;
	void *copy;
	int err;

	if (len > INT_MAX)
		return -EOVERFLOW;
	if (!(copy = malloc(len ? len : 1)))
		return -ENOMEM;
	memcpy(copy, buf, len);
	if (MPI_Isend(copy, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r) != MPI_SUCCESS) {
		free(copy);
		return -EIO;
	}
	err = wait_req(&r, w);
	if (err == -ETIMEDOUT)
		MPI_Request_free(&r); /* completes in the background, from the copy kept */
	else if (!err)
		free(copy);
	return err;
}

/* A withdrawn receive completes at once, cancelled or matched; one matched to a message still
 * arriving (a large one, from a peer that stopped) is waited for this long, then left. */
#define CANCEL_WAIT_NS 100000000ull

static int op_recv(void *buf, size_t len, int peer, int tag, const struct cl_wait *w)
{
	struct cl_wait cw = {.timeout_ns = CANCEL_WAIT_NS, .spin_ns = w->spin_ns};
	MPI_Request r;
	MPI_Status st;
	int err, cancelled = 0;

	if (len > INT_MAX)
		return -EOVERFLOW;
	if (MPI_Irecv(buf, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r) != MPI_SUCCESS)
		return -EIO;
	err = wait_req(&r, w);
	if (err != -ETIMEDOUT)
		return err;
	if (MPI_Cancel(&r) != MPI_SUCCESS)
		return -EIO;
	if ((err = wait_req_status(&r, &cw, &st)))
		return err;
	if (MPI_Test_cancelled(&st, &cancelled) != MPI_SUCCESS)
		return -EIO;
	return cancelled ? -ETIMEDOUT : 0;
}

static const struct cl_mpi_ops OPS = {
	.abi = CL_MPI_ABI,
	.init = op_init,
	.finalize = op_finalize,
	.abort = op_abort,
	.barrier = op_barrier,
	.bcast = op_bcast,
	.gather = op_gather,
	.allgather = op_allgather,
	.allreduce_u64 = op_allreduce_u64,
	.send = op_send,
	.recv = op_recv,
	.iallreduce_u64 = op_iallreduce_u64,
	.test = op_test,
	.wait = op_wait,
};

__attribute__((visibility("default"))) const struct cl_mpi_ops *biotape_mpi_ops(void)
{
	return &OPS;
}
