// SPDX-License-Identifier: GPL-2.0-only
/* Parallel analysis: slices, their packed partial statistics, the exact merge (split.h). */
#include "split.h"
#include "workset.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define PACK_MAGIC 0x3174696c70736e61ull /* "anspli1" */

/* The 1 s windows of [origin, end], from origin's. */
static uint64_t windows(uint64_t origin_ns, uint64_t end_ns)
{
	return end_ns > origin_ns ? (end_ns - origin_ns) / STATS_WINDOW_NS + 1 : 1;
}

int split_load_init(struct split_load *l, uint64_t origin_ns, uint64_t end_ns)
{
	uint64_t nwin = windows(origin_ns, end_ns);

	memset(l, 0, sizeof(*l));
	if (nwin > SPLIT_LOAD_MAX_WINDOWS)
		return -E2BIG;
	if (!(l->events = calloc(nwin, sizeof(*l->events))))
		return -ENOMEM;
	l->origin_ns = origin_ns;
	l->nwin = nwin;
	return 0;
}

void split_load_free(struct split_load *l)
{
	free(l->events);
	memset(l, 0, sizeof(*l));
}

/* The window of issue time t, clamped to the load's. */
static uint64_t load_win(const struct split_load *l, uint64_t t)
{
	uint64_t w = t > l->origin_ns ? (t - l->origin_ns) / STATS_WINDOW_NS : 0;

	return w < l->nwin ? w : l->nwin - 1;
}

void split_load_add(struct split_load *l, uint64_t lo_ns, uint64_t hi_ns, uint64_t events)
{
	uint64_t a, b, left = events;

	if (!l->events || !events)
		return;
	if (hi_ns < lo_ns)
		hi_ns = lo_ns;
	a = load_win(l, lo_ns);
	b = load_win(l, hi_ns);
	l->work += b - a + 1;
	if (l->work > SPLIT_LOAD_WORK_MAX) {
		split_load_free(l); /* unknown: by time */
		return;
	}
	/* window w gets its share of [lo, hi] (by overlap, rounded down); the last the rest */
	for (uint64_t w = a; w < b; w++) {
		uint64_t ws = l->origin_ns + w * STATS_WINDOW_NS, we = ws + STATS_WINDOW_NS;
		uint64_t from = lo_ns > ws ? lo_ns : ws, to = hi_ns < we ? hi_ns : we, share = 0;

		if (to > from)
			share = (uint64_t)((unsigned __int128)events * (to - from) / (hi_ns - lo_ns));
		share = share < left ? share : left;
		l->events[w] += share;
		left -= share;
	}
	l->events[b] += left;
	l->total += events;
}

/* The first window of slice r of n: the one whose events before it come nearest r/n of all. */
static uint64_t load_cut(const struct split_load *l, uint64_t r, uint64_t n)
{
	uint64_t want = (uint64_t)((unsigned __int128)l->total * r / n), before = 0, w = 0;

	while (w < l->nwin && before + l->events[w] <= want)
		before += l->events[w++];
	/* before <= want < before + events[w]: window w goes where it leaves the smaller miss */
	if (w < l->nwin && before + l->events[w] - want < want - before)
		w++;
	return w;
}

void split_plan(struct an_slice *sl, uint64_t origin_ns, uint64_t end_ns,
		const struct split_load *load)
{
	uint64_t nwin = windows(origin_ns, end_ns);
	uint64_t n = (uint64_t)sl->nranks, r = (uint64_t)sl->rank, lo, hi;
	bool by_events = load && load->events && load->total && load->nwin == nwin &&
			 load->origin_ns == origin_ns;

	/* rank r: windows [lo, hi); by time [r * nwin / n, (r + 1) * nwin / n); the first from
	 * the very start, the last to the very end (events past the summaries' last issue go
	 * somewhere) */
	lo = by_events ? load_cut(load, r, n) : r * nwin / n;
	hi = by_events ? load_cut(load, r + 1, n) : (r + 1) * nwin / n;
	sl->lo = r ? origin_ns + lo * STATS_WINDOW_NS : 0;
	sl->hi = r + 1 < n ? origin_ns + hi * STATS_WINDOW_NS : UINT64_MAX;
	sl->warm_lo = sl->lo > SPLIT_WARM_NS ? sl->lo - SPLIT_WARM_NS : 0;
}

/* The calling thread's time spent runnable but waiting for a CPU (ns), or 0 if unknown. */
static uint64_t thread_runq_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

void split_stamp(struct an_slice *sl, enum split_stamp k)
{
	struct timespec ts;

	if (!sl)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	sl->t_ns[k] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	sl->cpu_ns[k] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	sl->runq_ns[k] = thread_runq_ns();
}

/* Appends to line[cap] at *len, cut at the end. */
static void append(char *line, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line + *len, cap - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 ? *len : *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

void split_times_print(const struct an_slice *sl)
{
	static const char *const name[SPLIT_T__COUNT] = {"start", "init", "open", "warm", "read",
							 "pack", "sent", "finish", "end"};
	const char *env = getenv("BIOTAPE_SPLIT_TIMES");
	uint64_t t0 = sl->t_ns[SPLIT_T_START];
	struct rusage ru;
	char line[1024];
	size_t len = 0;

	if (!env)
		return;
	if (strtoull(env, NULL, 10) > 1000000000ull)
		t0 = strtoull(env, NULL, 10);
	getrusage(RUSAGE_SELF, &ru);
	append(line, sizeof(line), &len, "biotape: analyze: rank %d times (ms):", sl->rank);
	for (int k = 0; k < SPLIT_T__COUNT; k++)
		if (sl->t_ns[k])
			append(line, sizeof(line), &len, " %s %.1f", name[k],
			       (double)(int64_t)(sl->t_ns[k] - t0) / 1e6);
	append(line, sizeof(line), &len, " | cpu at");
	for (int k = 0; k < SPLIT_T__COUNT; k++)
		if (sl->t_ns[k])
			append(line, sizeof(line), &len, " %s %.1f", name[k],
			       (double)sl->cpu_ns[k] / 1e6);
	append(line, sizeof(line), &len, " | wait %.1f merge %.1f; cpu %.1f (user %.1f sys %.1f)",
	       (double)sl->wait_ns / 1e6, (double)sl->merge_ns / 1e6,
	       tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime), tv_ms(ru.ru_utime), tv_ms(ru.ru_stime));
	/* open and read are stamped by the thread that reads the slice */
	if (sl->t_ns[SPLIT_T_READ] && sl->runq_ns[SPLIT_T_READ] >= sl->runq_ns[SPLIT_T_OPEN])
		append(line, sizeof(line), &len, "; runq %.1f",
		       (double)(sl->runq_ns[SPLIT_T_READ] - sl->runq_ns[SPLIT_T_OPEN]) / 1e6);
	append(line, sizeof(line), &len, "; events %" PRIu64, sl->events);
	fprintf(stderr, "%s\n", line);
}

void split_entry_free(struct split_entry *e)
{
	if (e->devs)
		for (uint32_t i = 0; i < e->ndevs; i++)
			free(e->devs[i].inflight);
	free(e->devs);
	memset(e, 0, sizeof(*e));
}

int split_entry_capture(struct split_entry *e, const struct stats *s)
{
	split_entry_free(e);
	e->captured = true;
	e->has_prev = s->nadd > 0;
	e->last_issue_ns = s->last_issue_ns;
	e->busy_until = s->busy_until;
	e->ndevs = s->ndevs;
	if (!s->ndevs)
		return 0;
	if (!(e->devs = calloc(s->ndevs, sizeof(*e->devs))))
		return -ENOMEM;
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct devstat *d = &s->devs[i];
		struct split_dev_entry *x = &e->devs[i];
		uint32_t n = d->inflight.v ? d->inflight.n - d->inflight.head : 0;

		if (!n)
			continue;
		if (!(x->inflight = malloc(n * sizeof(*x->inflight))))
			return -ENOMEM;
		memcpy(x->inflight, d->inflight.v + d->inflight.head, n * sizeof(*x->inflight));
		x->ninflight = n;
	}
	return 0;
}

/* ---- a growing byte buffer, and reading one back ---- */

struct pk {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void put(struct pk *b, const void *v, size_t n)
{
	if (b->err || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		uint8_t *np;

		while (cap < b->len + n)
			cap *= 2;
		if (!(np = realloc(b->p, cap))) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put_u64(struct pk *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

struct upk {
	const uint8_t *p;
	size_t len, off;
};

/* The next n bytes, or NULL past the end. */
static const void *get(struct upk *u, size_t n)
{
	const void *v = u->p + u->off;

	if (n > u->len - u->off)
		return NULL;
	u->off += n;
	return v;
}

/* count items of size bytes each: NULL when the pack holds fewer (a count from the pack is
 * not multiplied before it is checked: 2^61 eight-byte items would wrap to 8 bytes) */
static const void *get_n(struct upk *u, uint64_t count, size_t size)
{
	if (count > (u->len - u->off) / size)
		return NULL;
	return get(u, (size_t)count * size);
}

static bool get_u64(struct upk *u, uint64_t *v)
{
	const void *p = get(u, sizeof(*v));

	if (p)
		memcpy(v, p, sizeof(*v));
	return p != NULL;
}

static void put_hist(struct pk *b, const struct hist *h)
{
	put_u64(b, h != NULL);
	if (h)
		put(b, h, sizeof(*h));
}

/* ---- packing: the raw structures of one build (every rank runs the same biotape) ---- */

int split_pack(struct stats *s, const struct an_slice *sl, uint64_t events_read,
	       uint64_t events_selected, void **buf, size_t *len)
{
	struct pk b = {0};
	const struct split_entry *e = &sl->entry;
	struct stats h;

	stats__settle(s);
	h = *s;
	h.nadd -= h.nwarm; /* the warm-up's place-holder: no event */
	put_u64(&b, PACK_MAGIC);
	put_u64(&b, sizeof(struct stats) ^ sizeof(struct devstat) << 20 ^
			    sizeof(struct hist) << 40);
	put_u64(&b, sl->lo);
	put_u64(&b, sl->undeclared);
	put_u64(&b, events_read);
	put_u64(&b, events_selected);
	put(&b, &h, sizeof(h));
	/* entry state */
	put_u64(&b, e->has_prev);
	put_u64(&b, e->last_issue_ns);
	put_u64(&b, e->busy_until);
	put_u64(&b, e->first_issue_ns);
	put_u64(&b, e->ndevs);
	for (uint32_t i = 0; i < e->ndevs; i++) {
		const struct split_dev_entry *x = &e->devs[i];

		put_u64(&b, x->ninflight);
		put(&b, x->inflight, x->ninflight * sizeof(*x->inflight));
	}
	/* what the struct's pointers point to */
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct devstat *d = &s->devs[i];
		uint32_t n = d->inflight.v ? d->inflight.n - d->inflight.head : 0;

		put(&b, d, sizeof(*d));
		if (!d->used)
			continue;
		put(&b, d->lba.bins, d->lba.nbins * sizeof(*d->lba.bins));
		put(&b, d->heat, STATS_HEAT_L * STATS_HEAT_T * sizeof(*d->heat));
		put_hist(&b, d->acc.lat);
		put_u64(&b, n);
		if (n)
			put(&b, d->inflight.v + d->inflight.head, n * sizeof(uint64_t));
	}
	for (uint32_t i = 0; i < s->nhosts; i++) {
		put(&b, &s->hosts[i], sizeof(s->hosts[i]));
		put(&b, s->hosts[i].tl, s->tl_rows * sizeof(*s->hosts[i].tl));
	}
	for (uint32_t i = stats_proc_next(s, 0); i < 2 * STATS_MAX_PROCS;
	     i = stats_proc_next(s, i + 1))
		put(&b, &s->procs[i], sizeof(s->procs[i]));
	put(&b, s->tl, s->tl_rows * sizeof(*s->tl));
	put_hist(&b, s->qd);
	put_hist(&b, s->interarrival);
	put_hist(&b, s->idle);
	put_hist(&b, s->all.lat);
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		const struct opstat *o = &s->ops[op];

		put_hist(&b, o->lat_dev);
		put_hist(&b, o->lat_queue);
		put_hist(&b, o->lat_total);
		for (int k = 0; k < STATS_QD_BANDS; k++)
			put_hist(&b, o->lat_qd[k]);
		for (uint32_t i = 0; o->nsizes && i < 2 * STATS_SIZE_EXACT_MAX; i++)
			if (o->sizes[i].n)
				put(&b, &o->sizes[i], sizeof(o->sizes[i]));
	}
	for (uint64_t i = 0; i < s->ws.cap + WS_PAD; i++)
		if (s->ws.t[i].h)
			put(&b, &s->ws.t[i], sizeof(s->ws.t[i]));
	put(&b, s->ws.edges, s->ws.nedges * sizeof(*s->ws.edges));
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*buf = b.p;
	*len = b.len;
	return 0;
}

/* ---- merging ---- */

static bool acc_has(const struct acc *a)
{
	for (int op = 0; op < BTAPE_OP__COUNT; op++)
		if (a->n_op[op])
			return true;
	return false;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * d: the earlier slices, s: the next one (its lat histogram merged apart). Windows are never
 * split between slices: d's open window is closed when s has one, the peaks are the larger,
 * s's open window stays open with its base shifted by d's totals.
 */
static void acc_merge(struct acc *d, const struct acc *s)
{
	uint64_t n = 0, bytes = 0, n_dir[DIR__COUNT] = {0}, bytes_dir[DIR__COUNT] = {0};

	if (!acc_has(s))
		return;
	stats_acc_close(d);
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		int dir = stats_dir_of((unsigned int)op);

		n += d->n_op[op];
		bytes += d->bytes_op[op];
		if (dir >= 0) {
			n_dir[dir] += d->n_op[op];
			bytes_dir[dir] += d->bytes_op[op];
		}
		d->n_op[op] += s->n_op[op];
		d->bytes_op[op] += s->bytes_op[op];
	}
	d->peak_n = max64(d->peak_n, s->peak_n);
	d->peak_bytes = max64(d->peak_bytes, s->peak_bytes);
	d->base_n = n + s->base_n;
	d->base_bytes = bytes + s->base_bytes;
	for (int k = 0; k < DIR__COUNT; k++) {
		d->peak_n_dir[k] = max64(d->peak_n_dir[k], s->peak_n_dir[k]);
		d->peak_bytes_dir[k] = max64(d->peak_bytes_dir[k], s->peak_bytes_dir[k]);
		d->base_n_dir[k] = n_dir[k] + s->base_n_dir[k];
		d->base_bytes_dir[k] = bytes_dir[k] + s->base_bytes_dir[k];
	}
	d->win = s->win;
	d->win_open = s->win_open;
}

/* A packed histogram into *dst (allocated when missing). */
static int hist_unpack(struct upk *u, struct hist **dst)
{
	uint64_t has;
	const struct hist *h;

	if (!get_u64(u, &has))
		return -EINVAL;
	if (!has)
		return 0;
	if (!(h = get(u, sizeof(*h))))
		return -EINVAL;
	if (!*dst && !(*dst = calloc(1, sizeof(**dst))))
		return -ENOMEM;
	hist_merge(*dst, h);
	return 0;
}

#define NOT_EXACT(...)                                      \
	do {                                                \
		snprintf(why, whylen, __VA_ARGS__);         \
		err = 1;                                    \
		goto cleanup;                               \
	} while (0)
#define BAD_PACK()                                                  \
	do {                                                        \
		snprintf(why, whylen, "a rank's partial analysis is malformed"); \
		err = -EINVAL;                                      \
		goto cleanup;                                       \
	} while (0)

/*
 * The slice's entry state against what the slices before it left in d. A slice whose
 * warm-up saw no I/O gets here its first issue's inter-arrival and idle samples (one pass
 * took them against d's last issue and busy_until).
 */
static int entry_check(struct stats *d, struct upk *u, uint64_t lo, char *why, size_t whylen)
{
	uint64_t has_prev, last, busy, first, ndevs;
	int err = 0;

	if (!get_u64(u, &has_prev) || !get_u64(u, &last) || !get_u64(u, &busy) ||
	    !get_u64(u, &first) || !get_u64(u, &ndevs) || ndevs > STATS_MAX_DEVICES)
		BAD_PACK();
	if (has_prev && (!d->nadd || last != d->last_issue_ns))
		NOT_EXACT("the warm-up before a slice missed the last issue before it");
	if (has_prev && busy != d->busy_until)
		NOT_EXACT("an I/O outlived the warm-up before a slice (idle periods)");
	if (!has_prev && d->nadd) {
		if (d->busy_until > first)
			NOT_EXACT("an I/O outlived the warm-up before a slice (idle periods)");
		hist_add(d->interarrival, first > d->last_issue_ns ? first - d->last_issue_ns : 0);
		if (first - d->busy_until >= d->o.idle_min_ns && first > d->busy_until) {
			hist_add(d->idle, first - d->busy_until);
			d->idle_total_ns += first - d->busy_until;
		}
	}
	for (uint32_t i = 0; i < ndevs || i < d->ndevs; i++) {
		const struct devstat *dd = &d->devs[i];
		const uint64_t *v = NULL;
		uint64_t n = 0;

		if (i < ndevs && (!get_u64(u, &n) || !(v = get_n(u, n, sizeof(*v)))))
			BAD_PACK();
		/* completions after lo, which the slice's first issue does not expire */
		const struct btape_inflight *h = &dd->inflight;
		uint64_t a = dd->used && h->v ? h->head : 0, an = dd->used && h->v ? h->n : 0;
		uint64_t b = 0;

		while (a < an && h->v[a] <= lo)
			a++;
		while (b < n && v[b] <= lo)
			b++;
		if (an - a != n - b || (n - b && memcmp(h->v + a, v + b, (n - b) * sizeof(*v))))
			NOT_EXACT("an I/O outlived the warm-up before a slice (queue depth)");
	}
cleanup:
	return err;
}

static int dev_merge(struct stats *dst, uint32_t i, const struct devstat *sd, struct upk *u,
		     char *why, size_t whylen)
{
	const uint64_t *bins, *live;
	const uint32_t *heat;
	uint64_t n;
	int err = 0;

	if (!sd->used)
		return 0;
	if (!(bins = get_n(u, sd->lba.nbins, sizeof(*bins))) ||
	    !(heat = get(u, STATS_HEAT_L * STATS_HEAT_T * sizeof(*heat))))
		BAD_PACK();
	struct devstat *d = &dst->devs[i];
	bool events = acc_has(&sd->acc);

	if (events && !d->used && !(d = stats_dev_use(dst, i, &err)))
		goto cleanup;
	if (!events) { /* only its warm-up touched it: its state is checked, nothing to add */
		struct hist *skip = NULL;

		err = hist_unpack(u, &skip);
		free(skip);
		if (err || !get_u64(u, &n) || !get_n(u, n, sizeof(uint64_t)))
			BAD_PACK();
		return 0;
	}
	/* a shift is below 64 (a pass widens while a value's top bits remain) */
	if (sd->lba.nbins != d->lba.nbins || sd->lba.shift >= 64 || sd->heat_tshift >= 64 ||
	    sd->heat_lshift >= 64)
		BAD_PACK();
	stats_widen(d, max64(d->lba.shift, sd->lba.shift), max64(d->heat_tshift, sd->heat_tshift),
		    max64(d->heat_lshift, sd->heat_lshift));
	/* 64-bit operands: the slices' shifts may differ by 32 or more (sectors far apart) */
	for (uint64_t k = 0; k < sd->lba.nbins; k++)
		d->lba.bins[k >> (d->lba.shift - sd->lba.shift)] += bins[k];
	for (uint64_t l = 0; l < STATS_HEAT_L; l++)
		for (uint64_t c = 0; c < STATS_HEAT_T; c++)
			d->heat[(l >> (d->heat_lshift - sd->heat_lshift)) * STATS_HEAT_T +
				(c >> (d->heat_tshift - sd->heat_tshift))] +=
				heat[l * STATS_HEAT_T + c];
	acc_merge(&d->acc, &sd->acc);
	if ((err = hist_unpack(u, &d->acc.lat)))
		goto cleanup;
	for (int k = 0; k < DIR__COUNT; k++) { /* the slice's first I/O after d's last one */
		struct stream *a = &d->streams[k];
		const struct stream *b = &sd->streams[k];

		a->near += b->near;
		for (int j = 0; j < STATS_SEEK_BINS; j++)
			a->seek[j] += b->seek[j];
		if (!b->has_last)
			continue;
		if (a->has_last) {
			stats_stream_link(dst, a, b, a->last_end);
		} else {
			a->first_off = b->first_off;
			a->first_t = b->first_t;
		}
		a->has_last = true;
		a->last_end = b->last_end;
	}
	d->min_off = d->min_off < sd->min_off ? d->min_off : sd->min_off;
	d->max_end = max64(d->max_end, sd->max_end);
	d->ext_min = d->ext_min < sd->ext_min ? d->ext_min : sd->ext_min;
	d->ext_end = max64(d->ext_end, sd->ext_end);
	/* the completions still pending: the next slice's entry is checked against them */
	if (!get_u64(u, &n) || !(live = get_n(u, n, sizeof(*live))))
		BAD_PACK();
	d->inflight.head = d->inflight.n = 0;
	if (d->inflight.v)
		inflight_pad(d->inflight.v, 0);
	for (uint64_t k = 0; k < n; k++)
		inflight_push(&d->inflight, live[k]);
	d->inflight.untracked += sd->inflight.untracked;
	d->inflight_slots_peak =
		max64(d->inflight_slots_peak, (uint64_t)sd->inflight.cap + sd->inflight.hcap);
cleanup:
	return err;
}

/* Timeline rows of s (interval s_iv, n rows) into d, whose interval is 2^k times wider. */
static void tl_merge(struct tl_row *d, const struct tl_row *s, uint64_t n, unsigned int k)
{
	for (uint64_t i = 0; i < n; i++) {
		struct tl_row *r = &d[i >> k];

		for (int j = 0; j < DIR__COUNT; j++) {
			r->n_dir[j] += s[i].n_dir[j];
			r->bytes_dir[j] += s[i].bytes_dir[j];
		}
		r->n_other += s[i].n_other;
		r->lat_n += s[i].lat_n;
		r->lat_sum += s[i].lat_sum;
		r->qd_n += s[i].qd_n;
		r->qd_sum += s[i].qd_sum;
		r->loc_n += s[i].loc_n;
		r->loc_seq += s[i].loc_seq;
		r->loc_log2 += s[i].loc_log2;
		r->loc_jump_blk += s[i].loc_jump_blk;
	}
}

int split_merge(struct stats *dst, const void *buf, size_t len, uint64_t *events_read,
		uint64_t *events_selected, char *why, size_t whylen)
{
	struct upk u = {.p = buf, .len = len};
	uint64_t magic, sizes, lo, undeclared, er, es;
	struct stats *s = NULL;
	const struct stats *sp;
	int err = 0;

	if (!get_u64(&u, &magic) || magic != PACK_MAGIC || !get_u64(&u, &sizes) ||
	    sizes != (sizeof(struct stats) ^ sizeof(struct devstat) << 20 ^
		      sizeof(struct hist) << 40) ||
	    !get_u64(&u, &lo) || !get_u64(&u, &undeclared) || !get_u64(&u, &er) ||
	    !get_u64(&u, &es))
		BAD_PACK();
	*events_read += er;
	*events_selected += es;
	if (undeclared)
		NOT_EXACT("a device missing from a file's table is named by order of appearance");
	stats__settle(dst);
	if (!(sp = get(&u, sizeof(*s))))
		BAD_PACK();
	if (!(s = malloc(sizeof(*s))))
		return -ENOMEM;
	memcpy(s, sp, sizeof(*s));
	if (!s->nadd)
		goto cleanup; /* nothing in this slice */
	if ((err = entry_check(dst, &u, lo, why, whylen)))
		goto cleanup;
	if (dst->nadd && s->origin_ns != dst->origin_ns)
		NOT_EXACT("the slices disagree on the first issue");
	if (s->ndevs > STATS_MAX_DEVICES || s->nhosts != dst->nhosts ||
	    s->tl_rows > STATS_TL_MAX_ROWS || s->ws.n > s->ws.cap)
		BAD_PACK();
	if (s->proc_other_n_procs || dst->proc_other_n_procs)
		NOT_EXACT("more than %d processes", STATS_MAX_PROCS);
	if (s->ws.edges_full || dst->ws.edges_full ||
	    s->ws.edges_put + dst->ws.edges_put + 4 > STATS_WS_EDGES_MAX / 2)
		NOT_EXACT("too many large I/Os for the working set's extent table");

	/* the timeline: both at the wider interval (the devices' stream links go into it) */
	while (dst->tl_interval < s->tl_interval)
		stats_tl_coarsen(dst);
	unsigned int k = 0;

	while ((s->tl_interval << k) < dst->tl_interval)
		k++;
	if ((s->tl_interval << k) != dst->tl_interval)
		NOT_EXACT("the slices' timeline intervals differ");
	if (s->tl_rows && ((s->tl_rows - 1) >> k) + 1 > dst->tl_rows)
		dst->tl_rows = ((s->tl_rows - 1) >> k) + 1;
	/* devices */
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct devstat *sd = get(&u, sizeof(*sd));

		if (!sd)
			BAD_PACK();
		if ((err = dev_merge(dst, i, sd, &u, why, whylen)))
			goto cleanup;
	}
	/* hosts */
	for (uint32_t i = 0; i < s->nhosts; i++) {
		const struct hoststat *sh = get(&u, sizeof(*sh));
		const struct host_tl_row *rows = sh ? get_n(&u, s->tl_rows, sizeof(*rows)) : NULL;
		struct hoststat *h = &dst->hosts[i];

		if (!rows)
			BAD_PACK();
		acc_merge(&h->acc, &sh->acc);
		if (sh->has_first) {
			if (!h->has_first)
				h->first_issue_ns = sh->first_issue_ns;
			h->has_first = true;
			h->last_issue_ns = sh->last_issue_ns;
		}
		for (uint64_t r = 0; r < s->tl_rows; r++) {
			h->tl[r >> k].n += rows[r].n;
			h->tl[r >> k].lat_n += rows[r].lat_n;
			h->tl[r >> k].lat_sum_ns += rows[r].lat_sum_ns;
		}
	}
	/* processes: the table must not fold */
	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct procstat *sq = get(&u, sizeof(*sq));
		bool added;
		struct procstat *q;

		if (!sq)
			BAD_PACK();
		if (!(q = stats_proc_slot(dst, sq->pid, &added)))
			NOT_EXACT("more than %d processes, or colliding pids", STATS_MAX_PROCS);
		if (added)
			memcpy(q->comm, sq->comm, sizeof(q->comm));
		acc_merge(&q->acc, &sq->acc);
	}
	acc_merge(&dst->proc_other, &s->proc_other);
	const struct tl_row *rows = get_n(&u, s->tl_rows, sizeof(*rows));

	if (!rows)
		BAD_PACK();
	tl_merge(dst->tl, rows, s->tl_rows, k);
	if ((err = hist_unpack(&u, &dst->qd)) || (err = hist_unpack(&u, &dst->interarrival)) ||
	    (err = hist_unpack(&u, &dst->idle)) || (err = hist_unpack(&u, &dst->all.lat)))
		goto cleanup;
	acc_merge(&dst->all, &s->all);
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		struct opstat *o = &dst->ops[op];
		const struct opstat *so = &s->ops[op];

		if ((err = hist_unpack(&u, &o->lat_dev)) || (err = hist_unpack(&u, &o->lat_queue)) ||
		    (err = hist_unpack(&u, &o->lat_total)))
			goto cleanup;
		for (int q = 0; q < STATS_QD_BANDS; q++)
			if ((err = hist_unpack(&u, &o->lat_qd[q])))
				goto cleanup;
		if (so->n_size_other || o->n_size_other)
			NOT_EXACT("more than %d request sizes, or colliding ones",
				  STATS_SIZE_EXACT_MAX);
		for (uint32_t i = 0; i < so->nsizes; i++) {
			const struct size_slot *z = get(&u, sizeof(*z));

			if (!z)
				BAD_PACK();
			if (!stats_size_put(o, z->size, z->n))
				NOT_EXACT("more than %d request sizes, or colliding ones",
					  STATS_SIZE_EXACT_MAX);
		}
		o->n += so->n;
		o->bytes += so->bytes;
		o->n_errors += so->n_errors;
	}
	/* working set: the union of the sampled tables at the higher level, then the limit */
	const struct ws_slot *slots = get_n(&u, s->ws.n, sizeof(*slots));
	const struct ws_edge *edges = slots ? get_n(&u, s->ws.nedges, sizeof(*edges)) : NULL;

	if (!edges && s->ws.nedges)
		BAD_PACK();
	if (!slots || u.off != u.len)
		BAD_PACK();
	if ((err = ws_merge(&dst->ws, slots, s->ws.n, s->ws.level, s->ws.level_proved,
			    s->ws.accesses)) ||
	    (err = ws_merge_edges(&dst->ws, edges, s->ws.nedges, s->ws.edges_put)))
		goto cleanup;

	dst->present_all = dst->nadd ? dst->present_all & s->present_all : s->present_all;
	dst->present_any |= s->present_any;
	if (!dst->nadd)
		dst->origin_ns = s->origin_ns;
	dst->last_issue_ns = s->last_issue_ns;
	dst->last_complete_ns = max64(dst->last_complete_ns, s->last_complete_ns);
	dst->busy_until = s->busy_until;
	dst->qd_missing += s->qd_missing;
	dst->idle_no_complete += s->idle_no_complete;
	dst->idle_total_ns += s->idle_total_ns;
	dst->nadd += s->nadd;
	dst->nadd_fast += s->nadd_fast;
	dst->nadd_full += s->nadd_full;
	if (s->ndevs > dst->ndevs)
		dst->ndevs = s->ndevs;
cleanup:
	if (err < 0 && !why[0])
		snprintf(why, whylen, "%s", strerror(-err));
	free(s);
	return err;
}

/*
 * Whether a table of n slots (used(tab, k): slot k holds a key) has a run of at least len used
 * slots, around the end: a cluster of linear probing that long.
 */
static bool has_cluster(const void *tab, uint32_t n, uint32_t len,
			bool (*used)(const void *tab, uint32_t k))
{
	uint32_t run = 0;

	for (uint32_t k = 0; k < n + len; k++) {
		run = used(tab, k % n) ? run + 1 : 0;
		if (run >= len)
			return true;
	}
	return false;
}

static bool proc_used(const void *tab, uint32_t k)
{
	return ((const struct procstat *)tab)[k].used;
}

static bool size_used(const void *tab, uint32_t k)
{
	return ((const struct size_slot *)tab)[k].n != 0;
}

int split_check(const struct stats *dst, char *why, size_t whylen)
{
	uint64_t slots = 0;

	/*
	 * A table lookup gives up after STATS_SLOT_PROBES slots (stats.c), so what one pass keeps
	 * depends on the order of the keys once a cluster is that long: the merge cannot say
	 * it would have kept the same (the clusters' slots are the same in any order).
	 */
	if (has_cluster(dst->procs, 2 * STATS_MAX_PROCS, STATS_SLOT_PROBES, proc_used)) {
		snprintf(why, whylen, "the process table has a cluster of colliding pids");
		return 1;
	}
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		if (has_cluster(dst->ops[op].sizes, 2 * STATS_SIZE_EXACT_MAX, STATS_SLOT_PROBES,
				size_used)) {
			snprintf(why, whylen, "a size table has a cluster of colliding sizes");
			return 1;
		}
	}
	/*
	 * In-flight slots come from one budget for all devices (STATS_QD_SLOTS_MAX), spent by the
	 * largest table each device had: a pass over the whole trace could have spent it where the
	 * slices did not. A device's table in one pass is at most 4 times its largest in a slice.
	 */
	for (uint32_t i = 0; i < dst->ndevs; i++) {
		if (dst->devs[i].inflight.untracked) {
			snprintf(why, whylen, "requests were not tracked in flight (queue depth)");
			return 1;
		}
		slots += 4 * dst->devs[i].inflight_slots_peak + 64;
	}
	if (slots >= STATS_QD_SLOTS_MAX) {
		snprintf(why, whylen, "the in-flight tables may have reached their budget");
		return 1;
	}
	/* one pass's level is the smallest whose blocks fit the limit, unless they fill it
	 * exactly (then a rise may have happened or not, by order); a rise is sure when it was
	 * proved (see level_proved) */
	if (dst->ws.level && (!dst->ws.level_proved || dst->ws.n == dst->ws.limit)) {
		snprintf(why, whylen, "the working set's sampling level depends on the order");
		return 1;
	}
	return 0;
}
