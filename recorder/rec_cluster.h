/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Cluster recording (docs/CLUSTER.md, "Recording"): `mpirun ... biotape record` on the cluster
 * layer (common/cluster.h). Every rank attaches before any starts; all agree or all stop
 * before anything is recorded; the clock offsets to rank 0 are measured at start and stop
 * and stored in each trace (btape_meta.cluster); the commands start at one instant; the
 * ranks stop together; rank 0 prints a line per host and the cluster total.
 *
 * Without a launcher rec_cluster__open() gives NULL and every function is a no-op: plain
 * biotape record touches no MPI and prints what it always did.
 */
#ifndef BIOTAPE_REC_CLUSTER_H
#define BIOTAPE_REC_CLUSTER_H

#include "btape.h"
#include "rec_core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_cluster;

/* 0 with *out NULL when no launcher started us; <0 when the layer failed (printed). */
int rec_cluster__open(struct rec_cluster **out);
/* Leaves the cluster (refusing if it never agreed, so no rank waits); returns ret. NULL-safe. */
int rec_cluster__close(struct rec_cluster *rc, int ret);

/* Ranks in the cluster (1 without one). */
int rec_cluster__size(const struct rec_cluster *rc);
/* This rank (0 without a launcher). */
int rec_cluster__rank(const struct rec_cluster *rc);
/* Why rank R writes this rank's file (rec_cluster__out_clash()): cl_comm__clash_why(). */
const char *rec_cluster__clash_why(const struct rec_cluster *rc, int r, char *buf, size_t len);
/* PAT with %h (host) and %r (rank) expanded into buf; without a cluster a copy. 0 or -errno. */
int rec_cluster__expand(const struct rec_cluster *rc, const char *pat, char *buf, size_t len);
/*
 * Collective (every rank, once, right after rec_cluster__open()): each rank gives the others
 * the file it writes, OUT as it expanded it (NULL: none, its pattern was bad), made absolute.
 * Returns another rank that writes the same file (cl_comm__out_clash(): of this host, or of
 * another through a filesystem both share), -1 when none, or -2 when this rank cannot take
 * part (said: out of memory, no working directory) or the cluster broke.
 */
int rec_cluster__out_clash(struct rec_cluster *rc, const char *out);

/*
 * Everyone can record, or nobody does: RET is this rank's result so far (0, or the exit code
 * of its failure, whose message was kept). Returns 0 when every rank can go on, else an exit
 * code; rank 0 has then printed one line per refusing rank ("host H rank R: why").
 */
int rec_cluster__agree(struct rec_cluster *rc, int ret);

/*
 * Measures the offsets to rank 0 and fills cl (id shared by all ranks, reference host,
 * method, rank, the start sync on this trace's clock). *shift is the test clock shift to add
 * to every recorded time (BIOTAPE_TEST_CLOCK_SHIFT_NS; 0 in real use). 0 or an exit code.
 */
int rec_cluster__clock_start(struct rec_cluster *rc, struct btape_cluster *cl, int64_t *shift);
/* Waits for the cluster's common start instant. 0 or an exit code. */
int rec_cluster__start(struct rec_cluster *rc);

/*
 * Called in the poll loop at every pass: all ranks stop at once. HARD: this rank must stop
 * (signal, limit, disk error, duration); DONE: its command has exited (or it has none).
 * Returns true when the cluster stops: some rank stopped hard, or every command is done
 * (with commands). A rank that lost its peers stops too (and says so).
 */
bool rec_cluster__should_stop(struct rec_cluster *rc, bool hard, bool done, bool has_cmd);
/* True when this rank lost its peers mid-run (its trace is then marked interrupted). */
bool rec_cluster__broken(const struct rec_cluster *rc);

/* The sync at the stop (collective): 0 and *y, or an exit code. */
int rec_cluster__clock_stop(struct rec_cluster *rc, struct btape_clock_sync *y);

/* One rank's result, for rank 0's line per host and the cluster total. */
struct rec_cluster_row {
	uint64_t events, lost, file_bytes, duration_ns;
	uint64_t failed; /* the trace is incomplete (disk error) */
	char out[160];
};
/* Gathers the rows; rank 0 prints them with the total (only with more than one rank). */
void rec_cluster__summary(struct rec_cluster *rc, const struct rec_cluster_row *row);

/* A sink that adds shift ns to every time before IN (the test clock shift). */
struct rec_shift_sink {
	struct rec_sink in;
	int64_t shift;
};
void rec_sink_shift(struct rec_sink *out, struct rec_shift_sink *ss);

#endif
