// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cluster layer (cluster.h): launcher detection, the MPI plugin loaded on demand, and the
 * protocols built on its operations (agreement, clock offsets, the start instant).
 */
#include "btape.h"
#include "cli.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cluster.h"
#include "cluster_mpi.h"
#include "wire_id.h"

#ifndef BIOTAPE_MPI_PLUGIN_DIR
#define BIOTAPE_MPI_PLUGIN_DIR "/usr/local/lib/biotape"
#endif
#define PLUGIN_NAME "biotape-mpi.so"
#define DEFAULT_TIMEOUT_NS (60 * 1000000000ll)
#define TAG_PING 0x6274 /* clock round trips */
#define TAG_PONG 0x6275
#define CLOCK_GOOD_WIDTH_NS 20000ull /* an offset bound this narrow: +-10 us */
#define CLOCK_BUDGET_NS 1000000000ull /* per peer, from rank 0's first answer */
#define CLOCK_ROUNDS_MAX 100000u
/* real-time for the first this long of the exchange at most (a good one takes well under a
 * millisecond): a rank that stayed real-time, spinning 200 us per wait (cluster_mpi.c), for the
 * whole CLOCK_BUDGET_NS could use up its CPU's real-time share (sched_rt_runtime_us, 95%) and
 * get the start's real-time thread, 100 ms later, throttled. A bound, not a measured case. */
#define CLOCK_RT_NS 50000000ull

struct cl_comm {
	const struct cl_mpi_ops *ops; /* NULL: one rank, no MPI */
	void *dl;
	int rank, size;
	struct cl_wait wait;
	uint64_t pending_ns; /* when the pending allreduce started (cl_now_ns), 0: none */
	char (*hosts)[CL_HOST_MAX]; /* [size] */
	char err[256];
};

static int64_t clock_shift = INT64_MIN; /* INT64_MIN: not read yet */

int64_t cl_clock_shift_ns(void)
{
	int64_t s = __atomic_load_n(&clock_shift, __ATOMIC_RELAXED);

	if (s == INT64_MIN) {
		const char *e = getenv("BIOTAPE_TEST_CLOCK_SHIFT_NS");
		s = e ? strtoll(e, NULL, 0) : 0;
		if (s == INT64_MIN)
			s = 0;
		__atomic_store_n(&clock_shift, s, __ATOMIC_RELAXED);
	}
	return s;
}

uint64_t cl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
	       (uint64_t)cl_clock_shift_ns();
}

int cl_launched(void)
{
	/* Open MPI; MPICH's Hydra (PMI-1/2); PMIx (Open MPI 5, srun --mpi=pmix). Slurm's own
	 * SLURM_PROCID alone is not MPI: srun without an MPI plugin starts independent tasks. */
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK",
					    "PMIX_RANK" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return 1;
	return 0;
}

/* A launcher variable's value: a number in [0, INT_MAX], or -1. */
static int launcher_int(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return -1;
	errno = 0;
	n = strtol(v, &end, 10);
	return errno || *end || n < 0 || n > INT_MAX ? -1 : (int)n;
}

int cl_launcher_rank(int *rank, int *size)
{
	static const char *const vars[][2] = { { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
					       { "PMI_RANK", "PMI_SIZE" } };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		int r = launcher_int(vars[i][0]), n = launcher_int(vars[i][1]);

		if (r >= 0 && n > r) {
			*rank = r;
			*size = n;
			return 0;
		}
	}
	return -ENOENT;
}

int cl_launcher_var(const char *entry)
{
	static const char *const prefixes[] = { "OMPI_", "PMIX_", "PMI_", "HYDRA_", "HYDI_",
						"MPI_LOCALNRANKS=", "MPI_LOCALRANKID=" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(entry, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static int fail(struct cl_comm *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return err;
}

static int fail_op(struct cl_comm *c, int err, const char *what)
{
	if (err == -ETIMEDOUT)
		return fail(c, err, "%s: no answer from every rank within %lld ms (a rank died?)", what,
			    (long long)(c->wait.timeout_ns / 1000000));
	return fail(c, err, "%s: %s", what, err == -EIO ? "MPI error" : strerror(-err));
}

/* dlopens the plugin: $BIOTAPE_MPI_PLUGIN, then ../lib/biotape/ next to the executable, then
 * the install libdir. RTLD_GLOBAL: Open MPI's own components are plugins that need libmpi's
 * symbols. */
static void *open_plugin(char *tried, size_t tried_size)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	const char *env = getenv("BIOTAPE_MPI_PLUGIN");
	void *dl;

	tried[0] = 0;
	if (env && *env) {
		snprintf(tried, tried_size, "%s", env);
		return dlopen(env, RTLD_NOW | RTLD_GLOBAL);
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(path, sizeof(path), "%s/../lib/biotape/" PLUGIN_NAME, exe);
			snprintf(tried, tried_size, "%s", path);
			dl = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
			if (dl)
				return dl;
		}
	}
	snprintf(path, sizeof(path), "%s/" PLUGIN_NAME, BIOTAPE_MPI_PLUGIN_DIR);
	size_t l = strlen(tried);
	snprintf(tried + l, tried_size - l, "%s%s", l ? ", " : "", path);
	return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
}

static int load_mpi(struct cl_comm *c, int *argc, char ***argv)
{
	char tried[2 * PATH_MAX];

	c->dl = open_plugin(tried, sizeof(tried));
	if (!c->dl)
		return fail(c, -ENOENT,
			    "started by an MPI launcher, but biotape was built without MPI or its "
			    "plugin is missing (%s: %s)",
			    tried, dlerror());
	cl_mpi_ops_fn get = (cl_mpi_ops_fn)dlsym(c->dl, CL_MPI_SYMBOL);
	const struct cl_mpi_ops *ops = get ? get() : NULL;
	if (!ops || ops->abi != CL_MPI_ABI)
		return fail(c, -ENOEXEC, "%s: not a biotape MPI plugin of this version", tried);
	int err = ops->init(argc, argv, &c->rank, &c->size);
	if (err)
		return fail(c, err, "MPI_Init_thread: %s",
			    err == -ENOTSUP ? "the MPI library lacks MPI_THREAD_SERIALIZED" :
					      "failed");
	c->ops = ops;
	return 0;
}

int cl_comm__open_cmd(struct cl_comm **out, const char *cmd)
{
	int err;

	*out = NULL;
	if (!cl_launched())
		return 0;
	err = cl_comm__open(out, NULL, NULL);
	if (!err)
		return 0;
	cli_err("%s: %s", cmd, cl_comm__errmsg(*out));
	if (*out && cl_comm__is_mpi(*out))
		cl_comm__abort(*out, BTAPE_EXIT_FAIL);
	cl_comm__close(*out);
	*out = NULL;
	return err;
}

int cl_comm__open(struct cl_comm **out, int *argc, char ***argv)
{
	struct cl_comm *c = calloc(1, sizeof(*c));
	char host[CL_HOST_MAX] = "";
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->size = 1;
	c->wait.timeout_ns = DEFAULT_TIMEOUT_NS;
	c->wait.spin_ns = CL_DEFAULT_SPIN_NS;
	cl_clock_shift_ns();
	if (cl_launched()) {
		err = load_mpi(c, argc, argv);
		if (err)
			goto cleanup;
	}
	if (gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "unknown");
	/* test hook: a rank that takes itself for another host, so that one machine can test
	 * what only ranks of several hosts do (docs/CLUSTER.md, "The MPI layer") */
	const char *test_host = getenv("BIOTAPE_TEST_HOST");

	if (test_host && *test_host)
		snprintf(host, sizeof(host), "%s", test_host);
	host[CL_HOST_MAX - 1] = 0;
	c->hosts = calloc((size_t)c->size, CL_HOST_MAX);
	err = -ENOMEM;
	if (!c->hosts)
		goto cleanup;
	err = cl_comm__allgather(c, host, CL_HOST_MAX, c->hosts);
	if (err)
		goto cleanup;
	*out = c;
	return 0;
cleanup:
	/* the message stays readable: the caller prints it, then closes */
	*out = c;
	return err;
}

void cl_comm__close(struct cl_comm *c)
{
	if (!c)
		return;
	if (c->ops)
		c->ops->finalize();
	/* the plugin stays loaded: MPI's atexit handlers may still run in it */
	free(c->hosts);
	free(c);
}

void cl_comm__abort(struct cl_comm *c, int code)
{
	if (c && c->ops)
		c->ops->abort(code);
	exit(code);
}

const char *cl_comm__errmsg(const struct cl_comm *c)
{
	return c ? c->err : "out of memory";
}

int cl_comm__rank(const struct cl_comm *c)
{
	return c->rank;
}

int cl_comm__size(const struct cl_comm *c)
{
	return c->size;
}

int cl_comm__is_mpi(const struct cl_comm *c)
{
	return c->ops != NULL;
}

const char *cl_comm__host(const struct cl_comm *c)
{
	return c->hosts[c->rank];
}

const char *cl_comm__host_of(const struct cl_comm *c, int rank)
{
	return rank >= 0 && rank < c->size ? c->hosts[rank] : "?";
}

void cl_comm__set_timeout(struct cl_comm *c, int64_t timeout_ns)
{
	c->wait.timeout_ns = timeout_ns;
}

void cl_comm__set_spin(struct cl_comm *c, int64_t spin_ns)
{
	c->wait.spin_ns = spin_ns;
}

void cl_comm__set_hurry(struct cl_comm *c, const volatile sig_atomic_t *flag, int64_t grace_ns)
{
	c->wait.hurry = flag;
	c->wait.hurry_ns = grace_ns;
}

int cl_comm__send(struct cl_comm *c, const void *buf, size_t len, int peer, int tag)
{
	if (!c->ops)
		return -EINVAL;
	int err = c->ops->send(buf, len, peer, tag, &c->wait);
	return err ? fail_op(c, err, "send") : 0;
}

int cl_comm__recv(struct cl_comm *c, void *buf, size_t len, int peer, int tag)
{
	if (!c->ops)
		return -EINVAL;
	int err = c->ops->recv(buf, len, peer, tag, &c->wait);
	return err ? fail_op(c, err, "receive") : 0;
}

int cl_comm__barrier(struct cl_comm *c)
{
	if (!c->ops)
		return 0;
	int err = c->ops->barrier(&c->wait);
	return err ? fail_op(c, err, "barrier") : 0;
}

int cl_comm__bcast(struct cl_comm *c, void *buf, size_t len, int root)
{
	if (!c->ops)
		return 0;
	int err = c->ops->bcast(buf, len, root, &c->wait);
	return err ? fail_op(c, err, "broadcast") : 0;
}

int cl_comm__gather(struct cl_comm *c, const void *in, size_t len, void *out, int root)
{
	if (!c->ops) {
		memmove(out, in, len);
		return 0;
	}
	int err = c->ops->gather(in, len, out, root, &c->wait);
	return err ? fail_op(c, err, "gather") : 0;
}

int cl_comm__allgather(struct cl_comm *c, const void *in, size_t len, void *out)
{
	if (!c->ops) {
		memmove(out, in, len);
		return 0;
	}
	int err = c->ops->allgather(in, len, out, &c->wait);
	return err ? fail_op(c, err, "allgather") : 0;
}

int cl_comm__allreduce_u64(struct cl_comm *c, uint64_t *v, size_t n, enum cl_reduce op)
{
	if (!c->ops)
		return 0;
	int err = c->ops->allreduce_u64(v, n, (int)op, &c->wait);
	return err ? fail_op(c, err, "allreduce") : 0;
}

int cl_comm__allreduce_u64_start(struct cl_comm *c, uint64_t *v, size_t n, enum cl_reduce op)
{
	if (c->pending_ns)
		return fail(c, -EBUSY, "allreduce: one is pending already");
	if (!c->ops)
		return 0;
	int err = c->ops->iallreduce_u64(v, n, (int)op);
	if (err)
		return fail_op(c, err, "allreduce");
	c->pending_ns = cl_now_ns();
	return 0;
}

int cl_comm__test(struct cl_comm *c)
{
	if (!c->pending_ns)
		return 1;
	int done = c->ops->test();
	if (done < 0)
		return fail_op(c, done, "allreduce");
	if (done) {
		c->pending_ns = 0;
		return 1;
	}
	if (c->wait.timeout_ns > 0 && cl_now_ns() - c->pending_ns > (uint64_t)c->wait.timeout_ns)
		return fail_op(c, -ETIMEDOUT, "allreduce");
	return 0;
}

int cl_comm__wait(struct cl_comm *c)
{
	if (!c->pending_ns)
		return 0;
	int err = c->ops->wait(&c->wait);
	if (err)
		return fail_op(c, err, "allreduce");
	c->pending_ns = 0;
	return 0;
}

int cl_comm__agree(struct cl_comm *c, const char *refusal, char **lines)
{
	uint64_t refused = refusal != NULL;
	char mine[CL_REASON_MAX] = "";
	char *all = NULL, *text = NULL;
	int err;

	*lines = NULL;
	err = cl_comm__allreduce_u64(c, &refused, 1, CL_SUM);
	if (err || !refused)
		return err;
	/* a reason of "" marks a rank that agreed */
	if (refusal)
		snprintf(mine, sizeof(mine), "%s", refusal[0] ? refusal : "refused");
	if (c->rank == 0) {
		all = calloc((size_t)c->size, CL_REASON_MAX);
		text = calloc((size_t)refused, CL_HOST_MAX + CL_REASON_MAX + 64);
		err = -ENOMEM;
		if (!all || !text) /* the others are in the gather: abort */
			goto cleanup;
	}
	err = cl_comm__gather(c, mine, CL_REASON_MAX, all, 0);
	if (err)
		goto cleanup;
	if (c->rank == 0) {
		size_t at = 0;
		for (int r = 0; r < c->size; r++) {
			const char *why = all + (size_t)r * CL_REASON_MAX;
			if (!why[0])
				continue;
			at += (size_t)sprintf(text + at, "host %s rank %d: %.*s\n", c->hosts[r], r,
					      CL_REASON_MAX - 1, why);
		}
		*lines = text;
		text = NULL;
	}
	err = (int)refused;
cleanup:
	free(all);
	free(text);
	return err;
}

/* The calling thread SCHED_FIFO 1 (RESET_ON_FORK) when it is in the normal class and may be
 * (root, CAP_SYS_NICE, RLIMIT_RTPRIO): returns 1 when it switched, for rt_leave(). */
static int rt_enter(void)
{
	struct sched_param sp = {.sched_priority = 1};

	return sched_getscheduler(0) == SCHED_OTHER &&
	       sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0;
}

static void rt_leave(int was_set)
{
	struct sched_param sp = {.sched_priority = 0};

	if (was_set)
		sched_setscheduler(0, SCHED_OTHER, &sp);
}

/* Back to the normal class once the exchange has run real-time CLOCK_RT_NS since rt_t0. */
static void rt_expire(int *rt, uint64_t rt_t0)
{
	if (*rt && cl_now_ns() - rt_t0 > CLOCK_RT_NS) {
		rt_leave(*rt);
		*rt = 0;
	}
}

/*
 * The offset's bounds from round trips. A peer sends at t0 (its clock), rank 0 reads its clock
 * at t_root, the answer arrives at t1: at rank 0's instant t_root the peer's clock read between
 * t0 and t1, so the offset lies in [t0 - t_root, t1 - t_root], however the two legs were
 * delayed. Every round trip's interval holds it; their intersection is the bound kept. One leg
 * delayed (a preempted rank, a poll that slept) only widens one side of that trip's interval,
 * and another trip bounds that side. The intersection is empty only when the clocks' rates
 * differ or one was stepped during the exchange: then the shortest round trip's interval.
 */
struct offset_bounds {
	uint64_t n;		  /* round trips */
	int64_t lo, hi;		  /* intersection of every interval (lo > hi: empty) */
	int64_t best_lo, best_hi; /* the shortest round trip's */
};

static void bounds_add(struct offset_bounds *b, uint64_t t0, uint64_t t1, uint64_t t_root)
{
	int64_t lo = (int64_t)(t0 - t_root), hi = (int64_t)(t1 - t_root);

	if (!b->n++) {
		b->lo = b->best_lo = lo;
		b->hi = b->best_hi = hi;
		return;
	}
	if (hi - lo < b->best_hi - b->best_lo) {
		b->best_lo = lo;
		b->best_hi = hi;
	}
	if (lo > b->lo)
		b->lo = lo;
	if (hi < b->hi)
		b->hi = hi;
}

/* The width of the kept bound. */
static uint64_t bounds_width(const struct offset_bounds *b)
{
	if (!b->n)
		return UINT64_MAX;
	if (b->lo <= b->hi)
		return (uint64_t)(b->hi - b->lo);
	return (uint64_t)(b->best_hi - b->best_lo);
}

static struct cl_offset bounds_offset(const struct offset_bounds *b)
{
	int64_t lo = b->lo <= b->hi ? b->lo : b->best_lo, hi = b->lo <= b->hi ? b->hi : b->best_hi;

	return (struct cl_offset){ .offset_ns = lo + (hi - lo) / 2,
				   .uncert_ns = ((uint64_t)(hi - lo) + 1) / 2 };
}

int cl_comm__clock_offsets(struct cl_comm *c, unsigned int rounds, struct cl_offset *out)
{
	struct cl_offset mine = { 0, 0 };
	uint64_t rt_t0;
	int err = 0, rt;

	if (rounds == 0)
		rounds = 1;
	if (!c->ops) {
		out[0] = mine;
		return 0;
	}
	/*
	 * Rank 0 answers each peer in turn until the peer says it is done ({0, 0}); the peer
	 * times the round trips and keeps the offset's bounds (offset_bounds). A peer takes at
	 * least `rounds` samples, and more while the bound is wider than CLOCK_GOOD_WIDTH_NS,
	 * within CLOCK_BUDGET_NS of its first answer and CLOCK_ROUNDS_MAX samples. Both sides
	 * run real-time meanwhile when allowed: on a busy host a normal-class rank waits a
	 * time slice of someone else's for the CPU on either leg, and then no round trip is short
	 * (bench: every sample over 400 us at load 10 on 2 CPUs). Real-time for CLOCK_RT_NS at
	 * most: a good exchange takes well under a millisecond.
	 */
	rt = rt_enter();
	rt_t0 = cl_now_ns();
	if (c->rank == 0) {
		for (int p = 1; p < c->size && !err; p++)
			for (;;) {
				uint64_t m[2];

				err = c->ops->recv(m, sizeof(m), p, TAG_PING, &c->wait);
				if (err || !m[0])
					break;
				m[1] = cl_now_ns();
				err = c->ops->send(m, sizeof(m), p, TAG_PONG, &c->wait);
				if (err)
					break;
				rt_expire(&rt, rt_t0);
			}
	} else {
		struct offset_bounds b = { 0 };
		uint64_t first = 0;

		for (unsigned int k = 0; !err; k++) {
			uint64_t m[2] = { 1, 0 }, t0 = cl_now_ns();

			if (k >= rounds &&
			    (bounds_width(&b) <= CLOCK_GOOD_WIDTH_NS || k >= CLOCK_ROUNDS_MAX ||
			     t0 - first > CLOCK_BUDGET_NS))
				break;
			err = c->ops->send(m, sizeof(m), 0, TAG_PING, &c->wait);
			if (!err)
				err = c->ops->recv(m, sizeof(m), 0, TAG_PONG, &c->wait);
			uint64_t t1 = cl_now_ns();
			if (!first)
				first = t1;
			if (!err)
				bounds_add(&b, t0, t1, m[1]);
			rt_expire(&rt, rt_t0);
		}
		mine = bounds_offset(&b);
		if (!err) {
			uint64_t m[2] = { 0, 0 };

			err = c->ops->send(m, sizeof(m), 0, TAG_PING, &c->wait);
		}
	}
	rt_leave(rt);
	if (err)
		return fail_op(c, err, "clock round trips");
	return cl_comm__allgather(c, &mine, sizeof(mine), out);
}

int cl_comm__start_instant(struct cl_comm *c, const struct cl_offset *offsets, uint64_t margin_ns,
			   uint64_t *start_local_ns)
{
	uint64_t t0 = cl_now_ns() + margin_ns; /* rank 0's is the one broadcast */
	int err = cl_comm__bcast(c, &t0, sizeof(t0), 0);

	if (err)
		return err;
	*start_local_ns = t0 + (uint64_t)offsets[c->rank].offset_ns;
	return 0;
}

int cl_comm__allgather_str(struct cl_comm *c, const char *mine, char ***all)
{
	uint64_t len = strlen(mine) + 1;
	char **v = NULL, *pad = NULL;
	int err;

	*all = NULL;
	err = cl_comm__allreduce_u64(c, &len, 1, CL_MAX); /* the longest: every slot that long */
	if (err)
		return err;
	if (len > CL_STR_MAX)
		return -E2BIG;
	v = malloc((size_t)c->size * (sizeof(*v) + len));
	pad = calloc(1, len);
	if (!v || !pad) { /* the others are in the allgather: the caller aborts */
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(pad, mine, strlen(mine) + 1);
	char *buf = (char *)(v + c->size);

	err = cl_comm__allgather(c, pad, len, buf);
	if (err)
		goto cleanup;
	for (int r = 0; r < c->size; r++) {
		v[r] = buf + (size_t)r * len;
		v[r][len - 1] = 0;
	}
	*all = v;
	v = NULL;
cleanup:
	free(pad);
	free(v);
	return err;
}

int cl_comm__allgather_file(struct cl_comm *c, const char *path, char ***all, const char **why)
{
	char *abs = path ? cli_absolute_path(path, why) : NULL;
	int err = cl_comm__allgather_str(c, abs ? abs : "", all);

	free(abs);
	return err;
}

uint64_t cl_layout_hash(const uint64_t *v, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the bytes */

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 64; k += 8)
			h = (h ^ ((v[i] >> k) & 0xff)) * 0x100000001b3ull;
	return h;
}

#define BUILD_ID_MAGIC 0x3130657269777462ull /* "btwire01" */
struct build_id {
	uint64_t magic;
	uint64_t layout;
	char wire[32]; /* CL_WIRE_ID */
	char version[16];
};

int cl_comm__same_build(struct cl_comm *c, const char *cmd, uint64_t layout)
{
	struct build_id mine = {.magic = BUILD_ID_MAGIC, .layout = layout}, *all;
	/* test hook: another build's stamp (tests/cluster/cluster_build.sh) */
	const char *t = getenv("BIOTAPE_TEST_BUILD_ID");
	int err;

	if (t && *t)
		mine.layout ^= strtoull(t, NULL, 0);
	_Static_assert(sizeof(CL_WIRE_ID) == sizeof(mine.wire) + 1, "CL_WIRE_ID: 32 hex digits");
	memcpy(mine.wire, CL_WIRE_ID, sizeof(mine.wire));
	snprintf(mine.version, sizeof(mine.version), "%s", BIOTAPE_VERSION);
	all = calloc((size_t)c->size, sizeof(*all));
	if (!all) { /* this rank's alone: the others wait in the allgather */
		cli_err("%s: rank %d: out of memory", cmd, c->rank);
		cl_comm__abort(c, BTAPE_EXIT_FAIL);
	}
	err = cl_comm__allgather(c, &mine, sizeof(mine), all);
	for (int r = 1; !err && r < c->size; r++) {
		if (all[r].magic == all[0].magic && all[r].layout == all[0].layout &&
		    memcmp(all[r].wire, all[0].wire, sizeof(all[0].wire)) == 0 &&
		    strncmp(all[r].version, all[0].version, sizeof(all[0].version)) == 0)
			continue;
		all[r].version[sizeof(all[r].version) - 1] = 0;
		all[0].version[sizeof(all[0].version) - 1] = 0;
		if (c->rank == 0 && strcmp(all[r].version, all[0].version) != 0)
			cli_err("%s: rank %d (host %s) runs biotape %s, rank 0 biotape %s: every "
				"rank must run the same build",
				cmd, r, cl_comm__host_of(c, r), all[r].version, all[0].version);
		else if (c->rank == 0)
			cli_err("%s: rank %d (host %s) runs another build of biotape %s than rank "
				"0: every rank must run the same build",
				cmd, r, cl_comm__host_of(c, r), all[r].version);
		err = -EPROTO;
	}
	free(all);
	return err;
}

/* Another host's rank whose file in ALL is this rank's, through a shared filesystem: markers
 * (cl_comm__out_clash()). Collective. */
static int shared_clash(struct cl_comm *c, char *const *all, bool mine, int *clash)
{
	const char *file = all[c->rank], *slash = strrchr(file, '/');
	char marker[CL_HOST_MAX + 96] = "", **names = NULL;
	int dfd = -1, err;

	*clash = -1;
	/* all[] is absolute: "/x" is in "/"; a name that is no file ("d/", "d/.") is not compared
	 */
	if (mine && slash && slash[1] && strcmp(slash + 1, ".") && strcmp(slash + 1, "..")) {
		char *dir = strndup(file, slash == file ? 1 : (size_t)(slash - file));

		dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		free(dir);
	}
	if (dfd >= 0) {
		int fd;

		snprintf(marker, sizeof(marker), ".biotape-share-%s-%d-%ld-%llu", cl_comm__host(c),
			 c->rank, (long)getpid(), (unsigned long long)cl_now_ns());
		fd = openat(dfd, marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0)
			marker[0] = 0; /* an unwritable directory: the output fails there anyway */
		else
			close(fd);
	}
	err = cl_comm__allgather_str(c, marker, &names);
	if (err == -ENOMEM) { /* this rank's alone: the others wait in the allgather */
		if (marker[0])
			unlinkat(dfd, marker, 0);
		cli_err("rank %d: out of memory", c->rank);
		cl_comm__abort(c, BTAPE_EXIT_FAIL);
	}
	for (int r = 0; !err && marker[0] && r < c->size && *clash < 0; r++) {
		const char *other = strrchr(all[r], '/');

		if (r != c->rank && names[r][0] && other &&
		    strcmp(cl_comm__host_of(c, r), cl_comm__host(c)) != 0 &&
		    !strcmp(other + 1, slash + 1) &&
		    !faccessat(dfd, names[r], F_OK, AT_SYMLINK_NOFOLLOW))
			*clash = r;
	}
	if (!err) /* no rank removes its marker before every rank has looked */
		err = cl_comm__barrier(c);
	if (marker[0])
		unlinkat(dfd, marker, 0);
	if (dfd >= 0)
		close(dfd);
	free(names);
	return err;
}

/* The lowest other rank of this host whose file in ALL is FILE (cli_same_file()), or -1. */
static int host_clash(const struct cl_comm *c, char *const *all, const char *file)
{
	const char *host = cl_comm__host(c);

	for (int r = 0; file && r < c->size; r++)
		if (r != c->rank && all[r][0] && !strcmp(cl_comm__host_of(c, r), host) &&
		    cli_same_file(file, all[r]))
			return r;
	return -1;
}

int cl_comm__out_clash(struct cl_comm *c, char *const *all, bool mine, int *clash)
{
	const char *file = all[c->rank];
	int shared, err;

	/* a sink (the null device) is every rank's to share */
	mine = mine && file[0] && btape_output_check(file, NULL, 0) != 1;
	err = shared_clash(c, all, mine, &shared);
	*clash = mine ? host_clash(c, all, file) : -1;
	if (*clash < 0)
		*clash = shared;
	return err;
}

const char *cl_comm__clash_why(const struct cl_comm *c, int r, char *buf, size_t len)
{
	if (!strcmp(cl_comm__host_of(c, r), cl_comm__host(c)))
		snprintf(buf, len,
			 "ranks %d and %d on one host would write the same file (put %%r "
			 "in it)",
			 r < c->rank ? r : c->rank, r < c->rank ? c->rank : r);
	else
		snprintf(buf, len,
			 "rank %d (host %s) writes this file too: a filesystem the hosts "
			 "share (put %%h or %%r in it)",
			 r, cl_comm__host_of(c, r));
	return buf;
}

int cl_expand_path(char *out, size_t size, const char *pat, const char *host, int rank)
{
	size_t at = 0;

	for (const char *p = pat; *p; p++) {
		char num[16];
		const char *add = num;
		size_t len;

		if (*p != '%') {
			num[0] = *p;
			len = 1;
		} else if (p[1] == 'h') {
			add = host;
			len = strlen(host);
			p++;
		} else if (p[1] == 'r') {
			len = (size_t)snprintf(num, sizeof(num), "%d", rank);
			p++;
		} else if (p[1] == '%') {
			num[0] = '%';
			len = 1;
			p++;
		} else {
			return -EINVAL;
		}
		if (at + len >= size)
			return -ENAMETOOLONG;
		memcpy(out + at, add, len);
		at += len;
	}
	if (at >= size)
		return -ENAMETOOLONG;
	out[at] = 0;
	return (int)at;
}
