// SPDX-License-Identifier: GPL-2.0-only
/*
 * Load for record_waits.sh: two threads reading DEV with O_DIRECT. "waiter" issues one
 * synchronous pread at a time (it sleeps until each completes); "batcher" submits io_uring
 * batches of BATCH reads in one call (only the first of a batch follows a sleep); "pacer"
 * submits one io_uring read, then sleeps 2 ms on a timer while it completes (its wakes are
 * the timer's, not the read's). Prints "waiter TID", "batcher TID" and "pacer TID" on stdout.
 * Exits 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BS 4096
#define BATCH 16
#define SPAN_BLOCKS 4096 /* reads within the first 16 MiB */

static const char *dev;
static int rounds;

static off_t block(unsigned int *seed)
{
	return (off_t)(rand_r(seed) % SPAN_BLOCKS) * BS;
}

static void *waiter(void *arg)
{
	unsigned int seed = 1;
	void *buf;
	int fd = open(dev, O_RDONLY | O_DIRECT);

	(void)arg;
	if (fd < 0 || posix_memalign(&buf, BS, BS)) {
		fprintf(stderr, "wake_load: waiter: %s: %s\n", dev, strerror(errno));
		exit(1);
	}
	printf("waiter %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (int i = 0; i < rounds * BATCH; i++) {
		if (pread(fd, buf, BS, block(&seed)) != BS) {
			fprintf(stderr, "wake_load: pread: %s\n", strerror(errno));
			exit(1);
		}
	}
	close(fd);
	free(buf);
	return NULL;
}

/* Reaps one completed read of BS bytes from RING, or exits with a message. */
static void reap_read(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;

	if (io_uring_wait_cqe(ring, &cqe) || cqe->res != BS) {
		fprintf(stderr, "wake_load: an io_uring read failed\n");
		exit(1);
	}
	io_uring_cqe_seen(ring, cqe);
}

static void *batcher(void *arg)
{
	struct io_uring ring;
	unsigned int seed = 2;
	void *buf;
	int fd = open(dev, O_RDONLY | O_DIRECT), err;

	(void)arg;
	if (fd < 0 || posix_memalign(&buf, BS, (size_t)BS * BATCH) ||
	    (err = io_uring_queue_init(BATCH, &ring, 0)) < 0) {
		fprintf(stderr, "wake_load: batcher: %s: setup failed\n", dev);
		exit(1);
	}
	printf("batcher %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < BATCH; i++)
			io_uring_prep_read(io_uring_get_sqe(&ring), fd, (char *)buf + i * BS, BS,
					   (uint64_t)block(&seed));
		if (io_uring_submit_and_wait(&ring, BATCH) != BATCH) {
			fprintf(stderr, "wake_load: io_uring_submit_and_wait failed\n");
			exit(1);
		}
		for (int i = 0; i < BATCH; i++)
			reap_read(&ring);
	}
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return NULL;
}

static void *pacer(void *arg)
{
	struct io_uring ring;
	struct timespec pause = { 0, 2000000 };
	unsigned int seed = 3;
	void *buf;
	int fd = open(dev, O_RDONLY | O_DIRECT);

	(void)arg;
	if (fd < 0 || posix_memalign(&buf, BS, BS) || io_uring_queue_init(4, &ring, 0) < 0) {
		fprintf(stderr, "wake_load: pacer: %s: setup failed\n", dev);
		exit(1);
	}
	printf("pacer %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (int r = 0; r < rounds * 5; r++) {
		io_uring_prep_read(io_uring_get_sqe(&ring), fd, buf, BS, (uint64_t)block(&seed));
		if (io_uring_submit(&ring) != 1) {
			fprintf(stderr, "wake_load: pacer: io_uring_submit failed\n");
			exit(1);
		}
		nanosleep(&pause, NULL);
		reap_read(&ring);
	}
	io_uring_queue_exit(&ring);
	close(fd);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b, c;

	if (argc != 3) {
		fprintf(stderr, "usage: wake_load DEV ROUNDS\n");
		return 1;
	}
	dev = argv[1];
	rounds = atoi(argv[2]);
	if (pthread_create(&a, NULL, waiter, NULL) || pthread_create(&b, NULL, batcher, NULL) ||
	    pthread_create(&c, NULL, pacer, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	return 0;
}
