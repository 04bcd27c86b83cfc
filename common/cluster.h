/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cluster layer: one communicator over the ranks an MPI launcher started (mpirun, mpiexec,
 * srun with an MPI plugin), used by cluster replay and cluster recording.
 *
 * Plain biotape links no MPI. cl_comm__open() looks for a launcher's variables
 * (OMPI_COMM_WORLD_SIZE; PMI_SIZE / PMI_RANK of MPICH's Hydra; PMIX_RANK) and only then dlopens
 * the MPI-linked plugin biotape-mpi.so (next to the binary in ../lib/biotape/, then the
 * install libdir, or $BIOTAPE_MPI_PLUGIN). Without a launcher the communicator has one rank
 * and every operation is trivial: no MPI is touched. Started by a launcher without the plugin,
 * cl_comm__open() fails (never N independent runs).
 *
 * Every collective is nonblocking underneath, polled with a timeout (cl_comm__set_timeout(),
 * 60 s by default): a dead or stuck peer makes it return -ETIMEDOUT instead of hanging. After
 * a failed collective the communicator is unusable: call cl_comm__abort().
 *
 * Functions return 0 (or a count) on success and a negative errno on failure; the text of the
 * last failure is cl_comm__errmsg().
 */
#ifndef BIOTAPE_CLUSTER_H
#define BIOTAPE_CLUSTER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cl_comm;

enum cl_reduce { CL_SUM, CL_MAX, CL_MIN };

#define CL_HOST_MAX 64	    /* host names are cut to CL_HOST_MAX - 1 bytes */
#define CL_REASON_MAX 256   /* a refusal reason is cut to CL_REASON_MAX - 1 bytes */
#define CL_PATH_MAX 4096

/* One clock for every rank: CLOCK_MONOTONIC in ns, shifted by $BIOTAPE_TEST_CLOCK_SHIFT_NS
 * (signed; test only: a known offset between ranks on one host). */
uint64_t cl_now_ns(void);
/* The test shift cl_now_ns() adds (0 without the variable): cl_now_ns() - CLOCK_MONOTONIC. */
int64_t cl_clock_shift_ns(void);

/* True when an MPI launcher started this process (its variables are set). */
int cl_launched(void);
/*
 * This process's rank and the job's size as the launcher's variables state them, before MPI
 * is up (Open MPI's OMPI_COMM_WORLD_RANK and _SIZE, Hydra's PMI_RANK and PMI_SIZE): 0, or
 * -ENOENT when they are not set or not numbers. A hint: cl_comm__rank() and __size() decide.
 */
int cl_launcher_rank(int *rank, int *size);
/*
 * 1 when the environment entry ENTRY ("NAME=value") is one an MPI launcher sets for its ranks
 * (Open MPI's OMPI_*, PMIx's PMIX_*, PMI-1/2's PMI_*, Hydra's HYDRA_* and HYDI_*,
 * MPI_LOCALNRANKS / MPI_LOCALRANKID): what a program started by a rank must not inherit, or it
 * takes itself for that rank.
 */
int cl_launcher_var(const char *entry);

/* Opens the communicator: one rank without a launcher, MPI_COMM_WORLD with one. argc/argv
 * may be NULL. On failure *out is still set when it could be allocated, for
 * cl_comm__errmsg(): then cl_comm__abort() it if cl_comm__is_mpi(), else cl_comm__close(). */
int cl_comm__open(struct cl_comm **out, int *argc, char ***argv);
/*
 * A command's communicator: 0 and *out NULL when no launcher started us (nothing to do);
 * else cl_comm__open(), and when that fails "CMD: why" is printed (cli_err), every rank is
 * ended if MPI came up, and -errno returned.
 */
int cl_comm__open_cmd(struct cl_comm **out, const char *cmd);
/* Finalizes MPI (when used) and frees; NULL-safe. */
void cl_comm__close(struct cl_comm *c);
/* Ends every rank now (MPI_Abort with code); with one rank, exit(code). */
void cl_comm__abort(struct cl_comm *c, int code) __attribute__((noreturn));
const char *cl_comm__errmsg(const struct cl_comm *c);

int cl_comm__rank(const struct cl_comm *c);
int cl_comm__size(const struct cl_comm *c);
/* True when MPI is in use (a launcher started us, even with one rank). */
int cl_comm__is_mpi(const struct cl_comm *c);
/* Host name of this rank, and of any rank (gathered at open). */
const char *cl_comm__host(const struct cl_comm *c);
const char *cl_comm__host_of(const struct cl_comm *c, int rank);
/* Timeout of every later operation, ns (<= 0: none). */
void cl_comm__set_timeout(struct cl_comm *c, int64_t timeout_ns);
/* How long a later operation polls without sleeping before it sleeps between polls (default
 * CL_DEFAULT_SPIN_NS: quick answers for the start and the clock round trips; 0 where the
 * latency does not matter and a spin costs a busy host its CPU, such as the recorder's stop
 * ticks). */
#define CL_DEFAULT_SPIN_NS 200000ll
void cl_comm__set_spin(struct cl_comm *c, int64_t spin_ns);
/* Once *flag is non-zero, every operation gives up grace_ns after it first sees it (-ETIMEDOUT),
 * whatever its timeout: a rank told to stop gives a dead peer no more time than its launcher
 * gives it before SIGKILL. flag NULL: none. */
void cl_comm__set_hurry(struct cl_comm *c, const volatile sig_atomic_t *flag, int64_t grace_ns);

int cl_comm__barrier(struct cl_comm *c);
/*
 * Collective, right after the open: every rank runs the same build, or -EPROTO at every rank,
 * rank 0 having named each rank that does not ("CMD: rank 1 (host h) runs another build of
 * biotape V than rank 0: every rank must run the same build"). Ranks send each other structs
 * as they lie in memory: the stamp is the version, CL_WIRE_ID (a hash of the sources that
 * define those structs, cmake/wire_id.cmake) and LAYOUT, the command's cl_layout_hash() of the
 * sizes and offsets of what it sends as this compiler laid them out. Another -errno when the
 * cluster broke.
 */
int cl_comm__same_build(struct cl_comm *c, const char *cmd, uint64_t layout);
/* FNV-1a over N values: a layout for cl_comm__same_build(). */
uint64_t cl_layout_hash(const uint64_t *v, size_t n);
/* buf (len bytes) of root to every rank. */
int cl_comm__bcast(struct cl_comm *c, void *buf, size_t len, int root);
/* len bytes of each rank into out[rank * len] at root (gather) or at every rank (allgather). */
int cl_comm__gather(struct cl_comm *c, const void *in, size_t len, void *out, int root);
int cl_comm__allgather(struct cl_comm *c, const void *in, size_t len, void *out);
/*
 * Each rank's string (at most CL_STR_MAX bytes with its NUL) to every rank: *all (malloc'd, one
 * free) holds size pointers, all[r] rank r's. -E2BIG at every rank when some rank's is longer.
 */
#define CL_STR_MAX (1u << 20)
int cl_comm__allgather_str(struct cl_comm *c, const char *mine, char ***all);
/*
 * cl_comm__allgather_str() of a file each rank names: PATH made absolute (ranks may run in
 * different directories), "" for none (PATH NULL). When this rank cannot name it (no memory,
 * no working directory) it sends "" and *why says so; the exchange still takes place.
 */
int cl_comm__allgather_file(struct cl_comm *c, const char *path, char ***all, const char **why);
/*
 * Collective: *clash = the lowest other rank whose file in ALL (cl_comm__allgather_file()) is
 * this rank's all[rank], or -1; every rank calls it, MINE false where it writes no file (none,
 * or one it cannot name). Ranks of one host compare files (cli_same_file()); ranks of
 * different hosts, whose files' identities mean nothing to each other, find a filesystem they
 * share by markers: each rank with a file leaves an empty ".biotape-share-HOST-RANK-PID-NS" in
 * its file's directory for the length of one barrier, and a rank that sees another host's
 * marker in its own file's directory, for a file of the same name, shares that file (a rank
 * that cannot write its directory makes no marker: its output fails there anyway). A sink (the
 * null device) is no clash. 0, or -errno when the cluster broke.
 */
int cl_comm__out_clash(struct cl_comm *c, char *const *all, bool mine, int *clash);
/* Why rank R's file is this rank's (cl_comm__out_clash()), in BUF: "ranks 0 and 1 on one host
 * would write the same file (put %r in it)", or "rank 1 (host h) writes this file too: a
 * filesystem the hosts share (put %h or %r in it)". */
const char *cl_comm__clash_why(const struct cl_comm *c, int r, char *buf, size_t len);
/* Point to point: len bytes to, or from, one rank. tag: the caller's, below 0x6000 (the layer
 * uses 0x62xx). With one rank (no MPI): -EINVAL. */
int cl_comm__send(struct cl_comm *c, const void *buf, size_t len, int peer, int tag);
int cl_comm__recv(struct cl_comm *c, void *buf, size_t len, int peer, int tag);
/* Element-wise reduction of n u64 in place, result at every rank. */
int cl_comm__allreduce_u64(struct cl_comm *c, uint64_t *v, size_t n, enum cl_reduce op);
/*
 * The same without waiting: starts the allreduce of v (which must stay valid until it is
 * done); cl_comm__test() then says whether it completed (1, v holds the result), not yet (0),
 * or failed (< 0, also when it has been pending longer than the timeout); cl_comm__wait()
 * waits for it as cl_comm__allreduce_u64() would. One at a time; test and wait return at once
 * when none is pending. Every rank must start the same ones in the same order, and wait for a
 * pending one before any other collective.
 */
int cl_comm__allreduce_u64_start(struct cl_comm *c, uint64_t *v, size_t n, enum cl_reduce op);
int cl_comm__test(struct cl_comm *c);
int cl_comm__wait(struct cl_comm *c);

/*
 * Everyone agrees or everyone stops. Each rank passes its refusal (NULL: none). Returns, at
 * every rank, 0 when no rank refused and the number of refusing ranks otherwise (or a negative
 * errno). When some refused, rank 0 gets in *lines (malloc'd; caller frees; NULL elsewhere) one
 * line per refusing rank, in rank order: "host H rank R: REASON\n".
 */
int cl_comm__agree(struct cl_comm *c, const char *refusal, char **lines);

/* Clock offset of one rank to rank 0: clock(rank) - clock(0) at one instant, and its
 * uncertainty: the true offset lies within offset_ns +- uncert_ns (as long as the clocks keep
 * their rates during the measurement). */
struct cl_offset {
	int64_t offset_ns;
	uint64_t uncert_ns;
};
/*
 * Measures every rank's offset to rank 0 with at least `rounds` round trips each, and more
 * (up to 1 s per rank) until its bound is narrower than 20 us. Each round trip bounds the
 * offset on both sides; the bounds of all of them are intersected (the shortest round trip's
 * alone when they disagree: clocks of different rates). Each rank runs SCHED_FIFO 1 meanwhile
 * when it may, so that a busy host does not stretch every round trip. Rank 0's is {0, 0}.
 * Every rank gets all of them in out[size].
 */
int cl_comm__clock_offsets(struct cl_comm *c, unsigned int rounds, struct cl_offset *out);

/*
 * Rank 0 picks an instant margin_ns ahead on its clock and broadcasts it; each rank gets it
 * on its own cl_now_ns() clock (corrected by its offset from `offsets`, as measured by
 * cl_comm__clock_offsets()).
 */
int cl_comm__start_instant(struct cl_comm *c, const struct cl_offset *offsets, uint64_t margin_ns,
			   uint64_t *start_local_ns);

/*
 * Expands %h (host name), %r (rank) and %% in pat into out (size bytes). Returns the length,
 * -ENAMETOOLONG when it does not fit, -EINVAL on another %x.
 */
int cl_expand_path(char *out, size_t size, const char *pat, const char *host, int rank);

#endif
