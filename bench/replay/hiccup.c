// SPDX-License-Identifier: GPL-2.0-only
/*
 * hiccup: how long this machine takes a CPU away from a thread that never yields it
 * (issue #20's floor). One thread per CPU, pinned, SCHED_FIFO 99, reads CLOCK_MONOTONIC in a
 * loop and counts every gap between two reads over 20 us: an interrupt, a timer tick, or the
 * hypervisor running something else on that vCPU (a guest cannot see the last; steal time is
 * not reported on every hypervisor). No other task of this machine can preempt it, so a gap of
 * a millisecond is one that no replayer could avoid, whatever its scheduling class.
 *
 * Each thread spins 800 ms of every second and sleeps the rest, so that the kernel's real-time
 * throttling (950 ms a second by default) never stops it and other tasks still run.
 *
 *   hiccup SECONDS [CPU]      (root, for SCHED_FIFO; prints one line per CPU and the gaps
 *                              over 1 ms with their time; with CPU, spins on that one only,
 *                              to see what load on the others does to it)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPIN_NS 800000000ull
#define PERIOD_NS 1000000000ull
#define MAX_LONG 256

static const uint64_t bounds_ns[] = {20000, 50000, 100000, 500000, 1000000, UINT64_MAX};
#define NB (sizeof(bounds_ns) / sizeof(bounds_ns[0]) - 1)

struct cpu_run {
	int cpu;
	double seconds;
	uint64_t n[NB], total_ns, max_ns, spun_ns;
	uint64_t long_at[MAX_LONG], long_ns[MAX_LONG];
	unsigned int nlong;
	int err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
	struct cpu_run *c = arg;
	struct sched_param sp = {.sched_priority = 99};
	cpu_set_t set;
	uint64_t t0, end;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		c->err = EPERM;
		return NULL;
	}
	t0 = now_ns();
	end = t0 + (uint64_t)(c->seconds * 1e9);
	for (uint64_t period = t0; period < end; period += PERIOD_NS) {
		uint64_t stop = period + SPIN_NS < end ? period + SPIN_NS : end, prev = now_ns();
		struct timespec wake;

		while (prev < stop) {
			uint64_t t = now_ns(), g = t - prev;

			if (g > bounds_ns[0]) {
				unsigned int b = 0;

				while (g >= bounds_ns[b + 1])
					b++;
				c->n[b]++;
				c->total_ns += g;
				if (g > c->max_ns)
					c->max_ns = g;
				if (g >= 1000000 && c->nlong < MAX_LONG) {
					c->long_at[c->nlong] = prev - t0;
					c->long_ns[c->nlong++] = g;
				}
			}
			prev = t;
		}
		c->spun_ns += stop - period;
		wake.tv_sec = (time_t)((period + PERIOD_NS) / 1000000000ull);
		wake.tv_nsec = (long)((period + PERIOD_NS) % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double seconds = argc >= 2 ? atof(argv[1]) : 0;
	char *end = NULL;
	long only = argc == 3 ? strtol(argv[2], &end, 10) : -1;
	struct cpu_run *c;
	pthread_t *th;

	if (seconds <= 0 || ncpu < 1 || argc > 3 || only >= ncpu ||
	    (argc == 3 && (only < 0 || end == argv[2] || *end))) {
		fprintf(stderr, "usage: hiccup SECONDS [CPU] (root; CPU one of 0-%ld)\n", ncpu - 1);
		return 2;
	}
	if (only >= 0)
		ncpu = 1; /* one thread, on that CPU */
	c = calloc((size_t)ncpu, sizeof(*c));
	th = calloc((size_t)ncpu, sizeof(*th));
	if (!c || !th) {
		fprintf(stderr, "hiccup: out of memory\n");
		return 1;
	}
	for (long i = 0; i < ncpu; i++) {
		c[i].cpu = only >= 0 ? (int)only : (int)i;
		c[i].seconds = seconds;
		if (pthread_create(&th[i], NULL, run, &c[i])) {
			fprintf(stderr, "hiccup: cannot start a thread\n");
			return 1;
		}
	}
	for (long i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
	for (long i = 0; i < ncpu; i++) {
		double s = (double)c[i].spun_ns / 1e9;

		if (c[i].err) {
			fprintf(stderr, "hiccup: cpu %d: cannot run SCHED_FIFO there: %s\n",
				c[i].cpu, strerror(c[i].err));
			return 1;
		}
		printf("cpu %d: %.1f s spun; gaps 20-50 us %llu, 50-100 us %llu, 0.1-0.5 ms %llu, "
		       "0.5-1 ms %llu, >= 1 ms %llu; %.1f ms in all (%.2f%%), longest %.2f ms\n",
		       c[i].cpu, s, (unsigned long long)c[i].n[0], (unsigned long long)c[i].n[1],
		       (unsigned long long)c[i].n[2], (unsigned long long)c[i].n[3],
		       (unsigned long long)c[i].n[4], (double)c[i].total_ns / 1e6,
		       100.0 * (double)c[i].total_ns / (double)(c[i].spun_ns ? c[i].spun_ns : 1),
		       (double)c[i].max_ns / 1e6);
		for (unsigned int k = 0; k < c[i].nlong; k++)
			printf("  cpu %d: %.2f ms at %.3f s\n", c[i].cpu,
			       (double)c[i].long_ns[k] / 1e6, (double)c[i].long_at[k] / 1e9);
	}
	return 0;
}
