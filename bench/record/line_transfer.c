// SPDX-License-Identifier: GPL-2.0-only
/*
 * How long one cache line takes to move between two CPUs: two threads, pinned to CPU A and
 * CPU B, take turns writing one shared line (a ping-pong); the time per turn is one transfer
 * plus the spin that sees it. The recorder's programs share lines between the submitting and
 * the completing CPU, so this bounds what they can cost (docs/BENCHMARKS.md, "Recorder").
 *   cc -O2 -pthread bench/record/line_transfer.c -o /tmp/line_transfer && /tmp/line_transfer [A B]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TURNS 2000000L

static _Alignas(64) _Atomic long line;

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* Every second turn from FIRST: waits for the line to hold i, then writes i + 1. */
static void play(long first)
{
	for (long i = first; i < 2 * TURNS; i += 2) {
		while (atomic_load_explicit(&line, memory_order_acquire) != i)
			;
		atomic_store_explicit(&line, i + 1, memory_order_release);
	}
}

static int cpu_b;

static void *other(void *arg)
{
	(void)arg;
	if (pin(cpu_b))
		return (void *)1;
	play(1);
	return NULL;
}

int main(int argc, char **argv)
{
	int cpu_a = argc > 2 ? atoi(argv[1]) : 0;
	struct timespec t0, t1;
	pthread_t t;
	void *rc;

	cpu_b = argc > 2 ? atoi(argv[2]) : 1;
	if (cpu_a == cpu_b) {
		fprintf(stderr, "line_transfer: needs two different CPUs\n");
		return 2;
	}
	if (pin(cpu_a)) {
		fprintf(stderr, "line_transfer: cannot run on CPU %d\n", cpu_a);
		return 1;
	}
	if (pthread_create(&t, NULL, other, NULL)) {
		fprintf(stderr, "line_transfer: cannot start a thread\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	play(0);
	while (atomic_load(&line) != 2 * TURNS)
		;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, &rc);
	if (rc) {
		fprintf(stderr, "line_transfer: cannot run on CPU %d\n", cpu_b);
		return 1;
	}
	printf("one cache line transfer between CPU %d and CPU %d: %.0f ns\n", cpu_a, cpu_b,
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
		       (2.0 * TURNS));
	return 0;
}
