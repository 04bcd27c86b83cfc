// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/cluster: the naive cluster start, for comparison with biotape's scheduled instant.
 *   mpirun -n N barrier_start DEV_PATTERN STARTS GAP_MS
 * Rank r opens DEV_PATTERN with %r replaced by r (O_DIRECT), then STARTS times: MPI_Barrier,
 * one 4 KiB read at offset k * 4 KiB, sleep GAP_MS. The spread of each start's reads across
 * the devices is measured by `biotape record` (bench/cluster/run.sh).
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank;
	char path[4096];
	void *buf = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 4) {
		fprintf(stderr, "usage: barrier_start DEV_PATTERN STARTS GAP_MS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *pat = argv[1], *p = strstr(pat, "%r");
	if (!p) {
		fprintf(stderr, "barrier_start: no %%r in %s\n", pat);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	snprintf(path, sizeof(path), "%.*s%d%s", (int)(p - pat), pat, rank, p + 2);
	int fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int starts = atoi(argv[2]), gap_ms = atoi(argv[3]);
	for (int k = 0; k < starts; k++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (pread(fd, buf, 4096, (off_t)k * 4096) != 4096) {
			perror("pread");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		usleep((useconds_t)gap_ms * 1000);
	}
	close(fd);
	free(buf);
	MPI_Finalize();
	return 0;
}
