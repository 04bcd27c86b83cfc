/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interface between biotape and its MPI plugin (biotape-mpi.so, cluster_mpi.c): one
 * exported function returns a table of operations. Only cluster.c calls it. Every operation
 * polls a nonblocking MPI call until it completes or its struct cl_wait gives up; it returns 0,
 * -ETIMEDOUT or -EIO (an MPI error). A send or receive given up on (-ETIMEDOUT) leaves MPI
 * holding none of the caller's memory: a receive is withdrawn, and the message, if it comes,
 * is the next receive's from that peer and tag.
 */
#ifndef BIOTAPE_CLUSTER_MPI_H
#define BIOTAPE_CLUSTER_MPI_H

#include <stddef.h>
#include <stdint.h>

#define CL_MPI_ABI 5
#define CL_MPI_SYMBOL "biotape_mpi_ops"

/* How long an operation waits: timeout_ns (<= 0: none); and once *hurry is non-zero (when
 * given), at most hurry_ns after the wait first sees it. */
struct cl_wait {
	int64_t timeout_ns;
	const volatile int *hurry;
	int64_t hurry_ns;
	int64_t spin_ns; /* poll without sleeping this long first (cl_comm__set_spin) */
};

struct cl_mpi_ops {
	unsigned int abi; /* CL_MPI_ABI */
	int (*init)(int *argc, char ***argv, int *rank, int *size);
	void (*finalize)(void);
	void (*abort)(int code);
	int (*barrier)(const struct cl_wait *w);
	int (*bcast)(void *buf, size_t len, int root, const struct cl_wait *w);
	int (*gather)(const void *in, size_t len, void *out, int root, const struct cl_wait *w);
	int (*allgather)(const void *in, size_t len, void *out, const struct cl_wait *w);
	/* op: 0 sum, 1 max, 2 min (enum cl_reduce) */
	int (*allreduce_u64)(uint64_t *v, size_t n, int op, const struct cl_wait *w);
	int (*send)(const void *buf, size_t len, int peer, int tag, const struct cl_wait *w);
	int (*recv)(void *buf, size_t len, int peer, int tag, const struct cl_wait *w);
	/* The one pending operation: an allreduce started without waiting, then tested (1 done,
	 * 0 not yet, -EIO) or waited for (0, -ETIMEDOUT, -EIO). */
	int (*iallreduce_u64)(uint64_t *v, size_t n, int op);
	int (*test)(void);
	int (*wait)(const struct cl_wait *w);
};

typedef const struct cl_mpi_ops *(*cl_mpi_ops_fn)(void);

#endif
