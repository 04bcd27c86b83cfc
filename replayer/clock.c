// SPDX-License-Identifier: GPL-2.0-only
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <time.h>

uint64_t rp_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t real_now(const struct rp_clock *c)
{
	return rp_mono_ns();
}

static void real_sleep_until(const struct rp_clock *c, uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
			      .tv_nsec = (long)(t % 1000000000ull)};

	/* EINTR: return, the caller re-checks its stop flag and the time */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

void rp_clock_init_real(struct rp_clock *c, uint64_t spin_ns)
{
	c->now = real_now;
	c->sleep_until = real_sleep_until;
	c->spin_ns = spin_ns;
	c->relax = NULL;
	c->fake_now = 0;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

static uint64_t fake_now(const struct rp_clock *c)
{
	return c->fake_now;
}

static void fake_sleep_until(const struct rp_clock *c, uint64_t t)
{
	rp_clock_advance((struct rp_clock *)c, t);
}

void rp_clock_init_fake(struct rp_clock *c, uint64_t start_ns)
{
	c->now = fake_now;
	c->sleep_until = fake_sleep_until;
	c->spin_ns = 0;
	c->relax = NULL;
	c->fake_now = start_ns;
}

void rp_clock_advance(struct rp_clock *c, uint64_t to_ns)
{
	if (to_ns > c->fake_now)
		c->fake_now = to_ns;
}

void rp_thread_cpu(struct rp_thread_cpu *t)
{
	unsigned long long run = 0, wait = 0;
	struct rusage ru;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) != 2)
			run = wait = 0;
		fclose(f);
	}
	t->cpu_ns = run;
	t->runq_ns = wait;
	t->nivcsw = getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}
