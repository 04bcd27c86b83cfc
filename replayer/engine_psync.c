// SPDX-License-Identifier: GPL-2.0-only
/* psync engine: a pool of threads running pread/pwrite/fsync/ioctl, for systems without io_uring.
 */
#include "engine.h"
#include "clock.h"
#include "thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define PSYNC_MAX_THREADS 64

struct psync_engine {
	const struct rp_target *targets;
	unsigned int cap;
	pthread_mutex_t lock;
	pthread_cond_t work_cv, done_cv;
	struct rp_io **work, **done; /* rings of cap entries */
	unsigned int work_head, work_count, done_head, done_count;
	bool stop;
	pthread_t threads[PSYNC_MAX_THREADS];
	unsigned int nthreads;
};

static void *worker(void *arg)
{
	struct psync_engine *e = arg;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		struct rp_io *io;

		while (!e->work_count && !e->stop)
			pthread_cond_wait(&e->work_cv, &e->lock);
		if (e->stop)
			break;
		io = e->work[e->work_head];
		e->work_head = (e->work_head + 1) % e->cap;
		e->work_count--;
		pthread_mutex_unlock(&e->lock);

		io->res = rp_io_exec_sync(&e->targets[io->target], io);
		io->complete_ns = rp_mono_ns();

		pthread_mutex_lock(&e->lock);
		e->done[(e->done_head + e->done_count) % e->cap] = io;
		e->done_count++;
		pthread_cond_signal(&e->done_cv);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

static void psync_close(struct rp_engine *ee)
{
	struct psync_engine *e = (struct psync_engine *)ee;

	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_cond_broadcast(&e->work_cv);
	pthread_mutex_unlock(&e->lock);
	for (unsigned int i = 0; i < e->nthreads; i++)
		pthread_join(e->threads[i], NULL);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->work_cv);
	pthread_cond_destroy(&e->done_cv);
	free(e->work);
	free(e->done);
	free(e);
}

static int psync_open(struct rp_engine **ep, const struct rp_engine_cfg *cfg)
{
	struct psync_engine *e = calloc(1, sizeof(*e));
	pthread_condattr_t ca;
	unsigned int want;
	int err = 0;

	if (!e)
		return -ENOMEM;
	e->targets = cfg->targets;
	e->cap = cfg->depth ? cfg->depth : 1;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->work_cv, NULL);
	pthread_cond_init(&e->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	e->work = calloc(e->cap, sizeof(*e->work));
	e->done = calloc(e->cap, sizeof(*e->done));
	if (!e->work || !e->done) {
		err = -ENOMEM;
		goto cleanup;
	}
	want = e->cap < PSYNC_MAX_THREADS ? e->cap : PSYNC_MAX_THREADS;
	for (; e->nthreads < want; e->nthreads++) {
		err = -rp_thread_create(&e->threads[e->nthreads], NULL, worker, e);
		if (err)
			goto cleanup;
	}
	*ep = (struct rp_engine *)e;
cleanup:
	if (err)
		psync_close((struct rp_engine *)e);
	return err;
}

static int psync_submit(struct rp_engine *ee, struct rp_io **ios, unsigned int n)
{
	struct psync_engine *e = (struct psync_engine *)ee;
	unsigned int i;

	pthread_mutex_lock(&e->lock);
	for (i = 0; i < n && e->work_count + e->done_count < e->cap; i++) {
		e->work[(e->work_head + e->work_count) % e->cap] = ios[i];
		e->work_count++;
	}
	if (i == 1)
		pthread_cond_signal(&e->work_cv);
	else if (i)
		pthread_cond_broadcast(&e->work_cv);
	pthread_mutex_unlock(&e->lock);
	return (int)i;
}

static int psync_reap(struct rp_engine *ee, struct rp_io **done, unsigned int max,
		      uint64_t wait_until_ns)
{
	struct psync_engine *e = (struct psync_engine *)ee;
	unsigned int n = 0;

	pthread_mutex_lock(&e->lock);
	if (!e->done_count && wait_until_ns) {
		struct timespec ts = {.tv_sec = (time_t)(wait_until_ns / 1000000000ull),
				      .tv_nsec = (long)(wait_until_ns % 1000000000ull)};

		pthread_cond_timedwait(&e->done_cv, &e->lock, &ts);
	}
	while (n < max && e->done_count) {
		done[n++] = e->done[e->done_head];
		e->done_head = (e->done_head + 1) % e->cap;
		e->done_count--;
	}
	pthread_mutex_unlock(&e->lock);
	return (int)n;
}

const struct rp_engine_ops rp_engine_psync = {
	.name = "psync",
	.summary = "a thread pool of pread/pwrite (systems without io_uring)",
	.open = psync_open,
	.submit = psync_submit,
	.reap = psync_reap,
	.close = psync_close,
};
