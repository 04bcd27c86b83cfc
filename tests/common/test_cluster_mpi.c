// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cluster layer under a real MPI launcher (cluster_layer.sh runs it with mpirun -n 3 and a
 * known BIOTAPE_TEST_CLOCK_SHIFT_NS per rank): hosts, all-reduce, agree/refuse, clock offsets
 * and the start instant. Exits 0 pass, 1 fail; each rank prints its own failures.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"

#define MAX_ERR_NS 50000 /* an estimated offset is within 50 us of the injected one */

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	struct cl_comm *c;
	int rank = -1;

	if (cl_comm__open(&c, &argc, &argv)) {
		fprintf(stderr, "test_cluster_mpi: %s\n", cl_comm__errmsg(c));
		return 1;
	}
	rank = cl_comm__rank(c);
	int size = cl_comm__size(c);
	int want = argc > 1 ? atoi(argv[1]) : 3;
	CHECK(cl_launched() && cl_comm__is_mpi(c), "not started as MPI");
	CHECK(size == want, "size %d, want %d", size, want);
	CHECK(strcmp(cl_comm__host_of(c, rank), cl_comm__host(c)) == 0, "own host name");
	for (int r = 0; r < size; r++)
		CHECK(cl_comm__host_of(c, r)[0], "host of rank %d empty", r);

	/* all-reduce: rank r contributes {r + 1, 10 * r, 100 - r} */
	uint64_t s[3] = { (uint64_t)rank + 1, 10u * (uint64_t)rank, 100u - (uint64_t)rank };
	uint64_t mx[3], mn[3];
	memcpy(mx, s, sizeof(s));
	memcpy(mn, s, sizeof(s));
	CHECK(cl_comm__allreduce_u64(c, s, 3, CL_SUM) == 0, "sum");
	CHECK(cl_comm__allreduce_u64(c, mx, 3, CL_MAX) == 0, "max");
	CHECK(cl_comm__allreduce_u64(c, mn, 3, CL_MIN) == 0, "min");
	uint64_t n = (uint64_t)size;
	CHECK(s[0] == n * (n + 1) / 2 && s[1] == 10 * n * (n - 1) / 2 && s[2] == 100 * n - n * (n - 1) / 2,
	      "sum %" PRIu64 " %" PRIu64 " %" PRIu64, s[0], s[1], s[2]);
	CHECK(mx[0] == n && mx[1] == 10 * (n - 1) && mx[2] == 100, "max");
	CHECK(mn[0] == 1 && mn[1] == 0 && mn[2] == 100 - (n - 1), "min");

	/* the same started without waiting, tested until done (the recorder's stop tick); rank 0
	 * comes late, so the others see it pending first */
	uint64_t t[2] = {(uint64_t)rank, 1};
	int polls = 0, tr;
	CHECK(cl_comm__test(c) == 1 && cl_comm__wait(c) == 0, "nothing pending");
	if (rank == 0)
		usleep(20000);
	CHECK(cl_comm__allreduce_u64_start(c, t, 2, CL_SUM) == 0, "allreduce start");
	CHECK(cl_comm__allreduce_u64_start(c, mx, 1, CL_SUM) == -EBUSY, "a second one refused");
	while ((tr = cl_comm__test(c)) == 0) {
		polls++;
		usleep(1000);
	}
	CHECK(tr == 1 && t[0] == n * (n - 1) / 2 && t[1] == n, "tested: %d, %" PRIu64 " %" PRIu64,
	      tr, t[0], t[1]);
	CHECK(rank == 0 || polls > 0, "rank %d saw it pending %d times", rank, polls);
	t[0] = 1;
	CHECK(cl_comm__allreduce_u64_start(c, t, 1, CL_MAX) == 0 && cl_comm__wait(c) == 0 &&
	      t[0] == 1 && cl_comm__test(c) == 1, "waited");

	/* a stall of the waiting rank itself (a paused VM, SIGSTOP) is not the peer's silence: rank
	 * 1 waits 200 ms for rank 0, which stops it for 600 ms, resumes it and sends 30 ms later.
	 * Counted in wall time, the wait would have run out while rank 1 was stopped. */
	int64_t pid1 = rank == 1 ? (int64_t)getpid() : 0;
	CHECK(cl_comm__bcast(c, &pid1, sizeof(pid1), 1) == 0 && pid1 > 0, "bcast rank 1's pid");
	uint64_t v = 0;
	cl_comm__set_timeout(c, 200000000);
	if (rank == 1) {
		int err = cl_comm__recv(c, &v, sizeof(v), 0, 7);
		CHECK(err == 0 && v == 0x57a11, "a wait through a stall: %d, %#" PRIx64, err, v);
	} else if (rank == 0) {
		usleep(50000); /* rank 1 in its wait */
		CHECK(kill((pid_t)pid1, SIGSTOP) == 0, "SIGSTOP rank 1");
		usleep(600000);
		CHECK(kill((pid_t)pid1, SIGCONT) == 0, "SIGCONT rank 1");
		usleep(30000);
		v = 0x57a11;
		CHECK(cl_comm__send(c, &v, sizeof(v), 1, 7) == 0, "send after the stall");
	}
	/* and a peer that stays silent still times out, in about the time asked */
	if (rank == 2) {
		uint64_t t0 = cl_now_ns();
		int err = cl_comm__recv(c, &v, sizeof(v), 0, 8);
		uint64_t took = cl_now_ns() - t0;
		CHECK(err == -ETIMEDOUT && took >= 200000000 && took < 1000000000,
		      "a silent peer: %d after %" PRIu64 " ms", err, took / 1000000);
	}
	/* a message that comes after its receive gave up is the next receive's, and MPI no longer
	 * writes the given-up receive's buffer (a heartbeat's on a stack since reused): rank 0
	 * sends once rank 2 says it gave up */
	if (rank == 2) {
		uint64_t old = 0, fresh = 0, gave_up = 1;
		int err = cl_comm__recv(c, &old, sizeof(old), 0, 8);
		CHECK(err == -ETIMEDOUT, "the first receive: %d", err);
		CHECK(cl_comm__send(c, &gave_up, sizeof(gave_up), 0, 9) == 0, "send 'gave up'");
		usleep(100000); /* the message has come */
		cl_comm__set_timeout(c, 2000000000);
		err = cl_comm__recv(c, &fresh, sizeof(fresh), 0, 8);
		CHECK(err == 0 && fresh == 0x1a7e,
		      "the late message to the next receive: %d, %#" PRIx64, err, fresh);
		CHECK(old == 0, "the given-up receive's buffer written: %#" PRIx64, old);
	} else if (rank == 0) {
		uint64_t gave_up = 0, late = 0x1a7e;
		cl_comm__set_timeout(c, 5000000000);
		CHECK(cl_comm__recv(c, &gave_up, sizeof(gave_up), 2, 9) == 0 && gave_up == 1,
		      "rank 2 gave up");
		CHECK(cl_comm__send(c, &late, sizeof(late), 2, 8) == 0, "the late message");
	}
	cl_comm__set_timeout(c, 60 * 1000000000ll);

	/* broadcast and allgather */
	uint64_t b = rank == 0 ? 0xb107a9e : 0;
	CHECK(cl_comm__bcast(c, &b, sizeof(b), 0) == 0 && b == 0xb107a9e, "bcast");
	int *ranks = calloc((size_t)size, sizeof(int));
	CHECK(cl_comm__allgather(c, &rank, sizeof(rank), ranks) == 0, "allgather");
	for (int r = 0; r < size; r++)
		CHECK(ranks[r] == r, "allgather[%d] = %d", r, ranks[r]);

	/* strings of different lengths to every rank: rank r's is r x's and its number ("" for
	 * rank 0: an empty one is a rank's too) */
	char mine[64] = "", **all = NULL;
	if (rank)
		snprintf(mine, sizeof(mine), "%.*s%d", rank, "xxxxxxxxxxxxxxxx", rank);
	CHECK(cl_comm__allgather_str(c, mine, &all) == 0 && all, "allgather_str");
	for (int r = 0; all && r < size; r++) {
		char exp[64] = "";
		if (r)
			snprintf(exp, sizeof(exp), "%.*s%d", r, "xxxxxxxxxxxxxxxx", r);
		CHECK(strcmp(all[r], exp) == 0, "allgather_str: rank %d's is '%s', want '%s'", r,
		      all[r], exp);
	}
	free(all);

	/* agree: nobody refuses, then the last rank does */
	char *lines = NULL;
	CHECK(cl_comm__agree(c, NULL, &lines) == 0 && !lines, "agree with no refusal");
	char why[64];
	snprintf(why, sizeof(why), "target /dev/x%d: has an ext4 signature", rank);
	int refused = cl_comm__agree(c, rank == size - 1 ? why : NULL, &lines);
	CHECK(refused == 1, "agree returned %d, want 1", refused);
	if (rank == 0) {
		char want_line[CL_HOST_MAX + 128];
		snprintf(want_line, sizeof(want_line), "host %s rank %d: target /dev/x%d: has an ext4 signature\n",
			 cl_comm__host_of(c, size - 1), size - 1, size - 1);
		CHECK(lines && strcmp(lines, want_line) == 0, "refusal lines '%s', want '%s'",
		      lines ? lines : "(null)", want_line);
	} else {
		CHECK(!lines, "lines outside rank 0");
	}
	free(lines);
	refused = cl_comm__agree(c, rank != 0 ? "no" : NULL, &lines);
	CHECK(refused == size - 1, "agree returned %d, want %d", refused, size - 1);
	if (rank == 0) {
		int nl = 0;
		for (const char *p = lines; p && *p; p++)
			nl += *p == '\n';
		CHECK(nl == size - 1, "%d refusal lines, want %d", nl, size - 1);
	}
	free(lines);

	/* clock offsets against the injected shifts */
	struct cl_offset *off = calloc((size_t)size, sizeof(*off));
	int64_t *shift = calloc((size_t)size, sizeof(*shift));
	int64_t my_shift = cl_clock_shift_ns();
	CHECK(cl_comm__allgather(c, &my_shift, sizeof(my_shift), shift) == 0, "allgather shifts");
	CHECK(cl_comm__clock_offsets(c, 32, off) == 0, "clock offsets: %s", cl_comm__errmsg(c));
	for (int r = 0; r < size; r++) {
		int64_t want_off = shift[r] - shift[0];
		int64_t err = off[r].offset_ns - want_off;
		if (rank == 0)
			printf("rank %d: injected %+.3f ms, estimated %+.3f ms +- %.1f us (error %+.1f us)\n",
			       r, want_off / 1e6, off[r].offset_ns / 1e6, off[r].uncert_ns / 1e3, err / 1e3);
		CHECK(err > -MAX_ERR_NS && err < MAX_ERR_NS, "rank %d offset %" PRId64 ", want %" PRId64,
		      r, off[r].offset_ns, want_off);
		/* on one host the clocks share their rate: the bound is strict */
		CHECK((uint64_t)(err < 0 ? -err : err) <= off[r].uncert_ns,
		      "rank %d offset %" PRId64 " +- %" PRIu64 ", want %" PRId64, r, off[r].offset_ns,
		      off[r].uncert_ns, want_off);
		CHECK(r != 0 || (off[r].offset_ns == 0 && off[r].uncert_ns == 0), "rank 0's offset");
	}

	/* start instant: on one host the unshifted instants agree within the offsets' errors. The
	 * margin is the replay's (100 ms): at load 10 on 2 CPUs the broadcast took over 20 ms. */
	uint64_t start = 0;
	CHECK(cl_comm__start_instant(c, off, 100000000, &start) == 0, "start instant");
	uint64_t raw = start - (uint64_t)my_shift, now_raw = cl_now_ns() - (uint64_t)my_shift;
	CHECK(raw > now_raw, "start instant already past");
	uint64_t *raws = calloc((size_t)size, sizeof(*raws));
	CHECK(cl_comm__allgather(c, &raw, sizeof(raw), raws) == 0, "allgather starts");
	for (int r = 0; r < size; r++) {
		int64_t d = (int64_t)(raws[r] - raws[0]);
		CHECK(d > -MAX_ERR_NS && d < MAX_ERR_NS, "rank %d starts %" PRId64 " ns from rank 0", r, d);
	}

	uint64_t f = (uint64_t)failures;
	cl_comm__allreduce_u64(c, &f, 1, CL_SUM);
	if (rank == 0)
		printf("%s: %d ranks, %" PRIu64 " failures\n", f ? "FAIL" : "PASS", size, f);
	free(ranks);
	free(off);
	free(shift);
	free(raws);
	cl_comm__close(c);
	return f ? 1 : 0;
}
