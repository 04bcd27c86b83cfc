/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The scheduler's clock: the real one (CLOCK_MONOTONIC, sleep then spin) or a fake one for
 * tests (sleeping jumps time forward). Times are ns.
 */
#ifndef RP_CLOCK_H
#define RP_CLOCK_H

#include <stdint.h>

struct rp_clock {
	uint64_t (*now)(const struct rp_clock *c);
	/* Returns when now() >= t (or earlier on a signal). */
	void (*sleep_until)(const struct rp_clock *c, uint64_t t);
	uint64_t spin_ns;  /* the scheduler spins this long before a deadline instead of sleeping */
	/* NULL, or called at every turn of that spin (a cluster start yields the CPU there) */
	void (*relax)(const struct rp_clock *c);
	uint64_t fake_now; /* fake clock state */
};

/* CLOCK_MONOTONIC; spin_ns as given (also sets this thread's timer slack to 1 ns). */
void rp_clock_init_real(struct rp_clock *c, uint64_t spin_ns);
/* A clock starting at start_ns that only moves when slept on (or by rp_clock_advance). */
void rp_clock_init_fake(struct rp_clock *c, uint64_t start_ns);
void rp_clock_advance(struct rp_clock *c, uint64_t to_ns);
uint64_t rp_mono_ns(void);

/* The calling thread's CPU accounting from the kernel (ns, count); 0s where unavailable. */
struct rp_thread_cpu {
	uint64_t cpu_ns;  /* time on a CPU (/proc/thread-self/schedstat, field 1) */
	uint64_t runq_ns; /* runnable, waiting for a CPU (field 2) */
	uint64_t nivcsw;  /* involuntary context switches (getrusage RUSAGE_THREAD) */
};
void rp_thread_cpu(struct rp_thread_cpu *t);

#endif
