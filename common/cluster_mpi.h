/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interface between biotape and its MPI plugin (biotape-mpi.so, cluster_mpi.c): one
 * exported function returns a table of operations. Only cluster.c calls it. Every operation
 * polls a nonblocking MPI call until it completes or timeout_ns (<= 0: none) passes; it
 * returns 0, -ETIMEDOUT or -EIO (an MPI error).
 */
#ifndef BIOTAPE_CLUSTER_MPI_H
#define BIOTAPE_CLUSTER_MPI_H

#include <stddef.h>
#include <stdint.h>

#define CL_MPI_ABI 1
#define CL_MPI_SYMBOL "biotape_mpi_ops"

struct cl_mpi_ops {
	unsigned int abi; /* CL_MPI_ABI */
	int (*init)(int *argc, char ***argv, int *rank, int *size);
	void (*finalize)(void);
	void (*abort)(int code);
	int (*barrier)(int64_t timeout_ns);
	int (*bcast)(void *buf, size_t len, int root, int64_t timeout_ns);
	int (*gather)(const void *in, size_t len, void *out, int root, int64_t timeout_ns);
	int (*allgather)(const void *in, size_t len, void *out, int64_t timeout_ns);
	/* op: 0 sum, 1 max, 2 min (enum cl_reduce) */
	int (*allreduce_u64)(uint64_t *v, size_t n, int op, int64_t timeout_ns);
	int (*send)(const void *buf, size_t len, int peer, int tag, int64_t timeout_ns);
	int (*recv)(void *buf, size_t len, int peer, int tag, int64_t timeout_ns);
};

typedef const struct cl_mpi_ops *(*cl_mpi_ops_fn)(void);

#endif
