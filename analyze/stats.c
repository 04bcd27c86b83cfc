// SPDX-License-Identifier: GPL-2.0-only
/* The analyzer's statistics core (see stats.h and docs/ANALYSIS.md). */
#include "stats.h"
#include "hot_clones.h"
#include "workset.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECTOR 512ull
#define TL_INITIAL_INTERVAL_NS 1000000000ull
#define HEAT_INITIAL_TSHIFT 20 /* 2^20 ns ~ 1 ms columns to start with */

/* stats_dir_of() as a table: per event, a load instead of an indirect jump on the op. */
#define IDLE_NO_COMPLETE_MAX_DIV 100 /* at most 1 event in 100 without a completion time */

static const int8_t DIR_OF[BTAPE_OP__COUNT] = {
	[BTAPE_OP_READ] = DIR_READ,   [BTAPE_OP_WRITE] = DIR_WRITE,
	[BTAPE_OP_FLUSH] = -1,	      [BTAPE_OP_DISCARD] = -1,
	[BTAPE_OP_SECURE_ERASE] = -1, [BTAPE_OP_WRITE_ZEROES] = DIR_WRITE,
	[BTAPE_OP_ZONE_OPEN] = -1,    [BTAPE_OP_ZONE_CLOSE] = -1,
	[BTAPE_OP_ZONE_FINISH] = -1,  [BTAPE_OP_ZONE_APPEND] = DIR_WRITE,
	[BTAPE_OP_ZONE_RESET] = -1,   [BTAPE_OP_ZONE_RESET_ALL] = -1,
	[BTAPE_OP_OTHER] = -1,
};
_Static_assert(BTAPE_OP__COUNT == 13, "DIR_OF needs the new op");

int stats_dir_of(unsigned int op)
{
	return op < BTAPE_OP__COUNT ? DIR_OF[op] : -1;
}

/*
 * Index into a small power-of-two table (2^bits slots): the top bits of mix64 (workset.h), a
 * full 64-bit finalizer. A bare Fibonacci multiply sent the multiples of a Fibonacci number
 * (832040 = F30: sizes or pids 832040 * k) into 19 of 8192 slots, probes of thousands.
 */
static inline uint32_t slot_index(uint64_t x, unsigned int bits)
{
	return (uint32_t)(mix64(x) >> (64 - bits));
}

#define SIZE_TABLE_BITS 13 /* 2 * STATS_SIZE_EXACT_MAX slots */
#define PROC_TABLE_BITS 13 /* 2 * STATS_MAX_PROCS slots */
_Static_assert((1u << SIZE_TABLE_BITS) == 2 * STATS_SIZE_EXACT_MAX, "size table bits");
_Static_assert((1u << PROC_TABLE_BITS) == 2 * STATS_MAX_PROCS, "process table bits");

/* ------------------------------------------------------------------------------------ */
/* accumulators and 1 s windows                                                          */

static void acc_close_window(struct acc *a)
{
	if (a->win_n > a->peak_n)
		a->peak_n = a->win_n;
	if (a->win_bytes > a->peak_bytes)
		a->peak_bytes = a->win_bytes;
	for (int d = 0; d < DIR__COUNT; d++) {
		if (a->win_n_dir[d] > a->peak_n_dir[d])
			a->peak_n_dir[d] = a->win_n_dir[d];
		if (a->win_bytes_dir[d] > a->peak_bytes_dir[d])
			a->peak_bytes_dir[d] = a->win_bytes_dir[d];
	}
}

/* Totals by direction and overall, from the per-op counters (the only ones kept per event). */
static void acc_derive(const struct acc *a, uint64_t *n, uint64_t *bytes, uint64_t *n_dir,
		       uint64_t *bytes_dir)
{
	*n = *bytes = 0;
	memset(n_dir, 0, DIR__COUNT * sizeof(*n_dir));
	memset(bytes_dir, 0, DIR__COUNT * sizeof(*bytes_dir));
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		int dir = stats_dir_of(op);

		*n += a->n_op[op];
		*bytes += a->bytes_op[op];
		if (dir >= 0) {
			n_dir[dir] += a->n_op[op];
			bytes_dir[dir] += a->bytes_op[op];
		}
	}
}

/* The window's counts: the totals now minus the totals when it opened. */
static void acc_window_counts(struct acc *a, uint64_t *n, uint64_t *bytes, uint64_t *n_dir,
			      uint64_t *bytes_dir)
{
	acc_derive(a, n, bytes, n_dir, bytes_dir);
	a->win_n = *n - a->base_n;
	a->win_bytes = *bytes - a->base_bytes;
	for (int d = 0; d < DIR__COUNT; d++) {
		a->win_n_dir[d] = n_dir[d] - a->base_n_dir[d];
		a->win_bytes_dir[d] = bytes_dir[d] - a->base_bytes_dir[d];
	}
}

/* Closes the open window (if any) and opens window win (once per window, not per event). */
static void acc_roll(struct acc *a, uint64_t win)
{
	uint64_t n, bytes, n_dir[DIR__COUNT], bytes_dir[DIR__COUNT];

	acc_window_counts(a, &n, &bytes, n_dir, bytes_dir);
	if (a->win_open)
		acc_close_window(a);
	a->win_open = true;
	a->win = win;
	a->base_n = n;
	a->base_bytes = bytes;
	memcpy(a->base_n_dir, n_dir, sizeof(n_dir));
	memcpy(a->base_bytes_dir, bytes_dir, sizeof(bytes_dir));
}

/* Per event: two counters; totals, direction and window counts are derived (acc_roll/_finish). */
static inline void acc_add(struct acc *a, uint64_t win, unsigned int op, uint64_t bytes)
{
	if (win != a->win || !a->win_open)
		acc_roll(a, win);
	a->n_op[op]++;
	a->bytes_op[op] += bytes;
}

static void acc_finish(struct acc *a, uint64_t complete_windows)
{
	uint64_t n, bytes, n_dir[DIR__COUNT], bytes_dir[DIR__COUNT];

	acc_window_counts(a, &n, &bytes, n_dir, bytes_dir);
	a->n = n;
	a->bytes = bytes;
	memcpy(a->n_dir, n_dir, sizeof(n_dir));
	memcpy(a->bytes_dir, bytes_dir, sizeof(bytes_dir));
	if (!a->win_open)
		return;
	if (a->win < complete_windows)
		acc_close_window(a);
	else
		a->n_partial = a->win_n;
}

static struct hist *hist_new(void)
{
	return calloc(1, sizeof(struct hist));
}

/* ------------------------------------------------------------------------------------ */
/* helpers: auto-ranging bins, in-flight heap, size table                                 */

static int autorange_init(struct autorange *r, uint32_t nbins, uint64_t span)
{
	r->nbins = nbins;
	r->width = 1;
	r->shift = 0;
	while (span && r->width * nbins < span) {
		r->width <<= 1;
		r->shift++;
	}
	r->bins = calloc(nbins, sizeof(*r->bins));
	return r->bins ? 0 : -ENOMEM;
}

/* Doubles the bins' width: each pair of bins into one, the upper half emptied. */
static void autorange_halve(struct autorange *r)
{
	for (uint32_t i = 0; i < r->nbins / 2; i++)
		r->bins[i] = r->bins[2 * i] + r->bins[2 * i + 1];
	memset(r->bins + r->nbins / 2, 0, r->nbins / 2 * sizeof(*r->bins));
	r->width <<= 1;
	r->shift++;
}

static inline void autorange_add(struct autorange *r, uint64_t v, uint64_t n)
{
	while ((v >> r->shift) >= r->nbins)
		autorange_halve(r);
	r->bins[v >> r->shift] += n;
}

/* Bits needed for b (0 for 0): the log2 size bin. */
static inline unsigned int size_bin(uint64_t b)
{
	return b ? 64 - (unsigned int)__builtin_clzll(b) : 0;
}

/* Adds N to SIZE's slot of the exact table, making it if there is room: false when full. */
static inline bool size_put(struct opstat *o, uint64_t size, uint64_t n)
{
	const uint32_t mask = 2 * STATS_SIZE_EXACT_MAX - 1;
	uint32_t i = slot_index(size, SIZE_TABLE_BITS);

	for (int probe = 0; probe < STATS_SLOT_PROBES; probe++, i = (i + 1) & mask) {
		struct size_slot *sl = &o->sizes[i];

		if (sl->n && sl->size == size) {
			sl->n += n;
			return true;
		}
		if (!sl->n) {
			if (o->nsizes >= STATS_SIZE_EXACT_MAX)
				return false;
			sl->size = size;
			sl->n = n;
			o->nsizes++;
			return true;
		}
	}
	return false;
}

bool stats_size_put(struct opstat *o, uint64_t size, uint64_t n)
{
	return size_put(o, size, n);
}

/*
 * Counts one I/O of this size: in the exact table, or, when it is full, straight into the
 * log2 bins (the exact table's sizes go there at finish: size_log2 is complete after it).
 */
static inline void size_add(struct opstat *o, uint64_t size)
{
	if (!size_put(o, size, 1)) {
		o->n_size_other++;
		o->size_log2[size_bin(size)]++;
	}
}

static int cmp_size_slot(const void *a, const void *b)
{
	const struct size_slot *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return x->size < y->size ? -1 : x->size > y->size;
}

int stats_sizes_sorted(const struct opstat *op, struct size_slot **out, uint32_t *n)
{
	*out = NULL;
	*n = 0;
	if (!op->nsizes)
		return 0;
	struct size_slot *v = malloc(op->nsizes * sizeof(*v));
	uint32_t k = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < 2 * STATS_SIZE_EXACT_MAX; i++)
		if (op->sizes[i].n)
			v[k++] = op->sizes[i];
	qsort(v, k, sizeof(*v), cmp_size_slot);
	*out = v;
	*n = k;
	return 0;
}

/* ------------------------------------------------------------------------------------ */

int stats__new(struct stats **sp, const struct stats_opts *opts)
{
	struct stats *s = calloc(1, sizeof(*s));
	int err = -ENOMEM;

	*sp = NULL;
	if (!s)
		return -ENOMEM;
	if (opts)
		s->o = *opts;
	if (!s->o.interval_ns)
		s->o.interval_ns = TL_INITIAL_INTERVAL_NS;
	if (!s->o.near_seq_bytes)
		s->o.near_seq_bytes = STATS_NEAR_SEQ_DEFAULT;
	if (!s->o.idle_min_ns)
		s->o.idle_min_ns = STATS_IDLE_MIN_DEFAULT_NS;
	if (!s->o.ws_limit)
		s->o.ws_limit = STATS_WS_LIMIT_DEFAULT;
	s->tl_interval = s->o.interval_ns;
	s->present_all = ~0u;
#if WS_AVX2
	s->ws_avx2 = __builtin_cpu_supports("avx2");
#endif
	s->devs = calloc(STATS_MAX_DEVICES, sizeof(*s->devs));
	s->procs = calloc(2 * STATS_MAX_PROCS, sizeof(*s->procs));
	s->tl = calloc(STATS_TL_MAX_ROWS, sizeof(*s->tl));
	s->qd = hist_new();
	s->interarrival = hist_new();
	s->idle = hist_new();
	s->all.lat = hist_new();
	if (!s->devs || !s->procs || !s->tl || !s->qd || !s->interarrival || !s->idle ||
	    !s->all.lat)
		goto cleanup;
	s->qd_budget = STATS_QD_SLOTS_MAX; /* each device's in-flight table draws on it (get_dev) */
	for (int i = 0; i < BTAPE_OP__COUNT; i++) {
		s->ops[i].sizes = calloc(2 * STATS_SIZE_EXACT_MAX, sizeof(struct size_slot));
		if (!s->ops[i].sizes)
			goto cleanup;
	}
	err = ws_init(&s->ws, s->o.ws_limit);
	if (err)
		goto cleanup;
	*sp = s;
	return 0;
cleanup:
	stats__free(s);
	return err;
}

static void dev_free(struct devstat *d)
{
	free(d->acc.lat);
	free(d->lba.bins);
	free(d->heat);
	inflight_free(&d->inflight);
}

void stats__free(struct stats *s)
{
	if (!s)
		return;
	if (s->devs) /* devices past ndevs were never used (get_dev, stats__set_device) */
		for (uint32_t i = 0; i < s->ndevs; i++)
			dev_free(&s->devs[i]);
	free(s->devs);
	if (s->hosts)
		for (uint32_t i = 0; i < s->nhosts; i++) {
			free(s->hosts[i].acc.lat);
			free(s->hosts[i].tl);
		}
	free(s->hosts);
	free(s->procs);
	free(s->tl);
	free(s->qd);
	free(s->interarrival);
	free(s->idle);
	free(s->all.lat);
	for (int i = 0; i < BTAPE_OP__COUNT; i++) {
		free(s->ops[i].sizes);
		free(s->ops[i].lat_dev);
		free(s->ops[i].lat_queue);
		free(s->ops[i].lat_total);
		for (int k = 0; k < STATS_QD_BANDS; k++)
			free(s->ops[i].lat_qd[k]);
	}
	ws_destroy(&s->ws);
	free(s);
}

static int dev_init(struct devstat *d)
{
	uint64_t sectors = d->size_bytes / SECTOR;
	int err = autorange_init(&d->lba, STATS_LBA_BINS, sectors);

	if (err)
		return err;
	d->heat = calloc(STATS_HEAT_L * STATS_HEAT_T, sizeof(*d->heat));
	d->acc.lat = hist_new();
	if (!d->heat || !d->acc.lat)
		return -ENOMEM;
	d->heat_tshift = HEAT_INITIAL_TSHIFT;
	d->heat_tw = 1ull << d->heat_tshift;
	d->heat_lw = 1;
	d->heat_lshift = 0;
	while (sectors && d->heat_lw * STATS_HEAT_L < sectors) {
		d->heat_lw <<= 1;
		d->heat_lshift++;
	}
	d->min_off = UINT64_MAX;
	d->ext_min = UINT64_MAX;
	d->used = true;
	return 0;
}

int stats__set_device(struct stats *s, uint32_t idx, const char *name, uint64_t size_bytes)
{
	if (idx >= STATS_MAX_DEVICES)
		return -EINVAL;
	struct devstat *d = &s->devs[idx];

	snprintf(d->name, sizeof(d->name), "%s", name && *name ? name : "?");
	d->size_bytes = size_bytes;
	if (idx >= s->ndevs)
		s->ndevs = idx + 1;
	return 0;
}

int stats__set_host(struct stats *s, uint32_t idx, const char *name)
{
	uint32_t h;

	if (idx >= STATS_MAX_DEVICES)
		return -EINVAL;
	if (!s->hosts && !(s->hosts = calloc(STATS_MAX_HOSTS, sizeof(*s->hosts))))
		return -ENOMEM;
	for (h = 0; h < s->nhosts; h++)
		if (strcmp(s->hosts[h].name, name) == 0)
			break;
	if (h == s->nhosts) {
		if (h == STATS_MAX_HOSTS) {
			h--;
		} else {
			struct hoststat *hs = &s->hosts[h];

			if (!(hs->tl = calloc(STATS_TL_MAX_ROWS, sizeof(*hs->tl))))
				return -ENOMEM;
			snprintf(hs->name, BTAPE_NAME_MAX, "%s", name);
			s->nhosts++;
		}
	}
	s->devs[idx].host = h;
	return (int)h;
}

/* Per host: counts and windows of an event (only when hosts were declared). */
static inline void host_add(struct stats *s, const struct devstat *d, uint64_t win,
			    unsigned int op, const struct btape_event *ev)
{
	struct hoststat *h = &s->hosts[d->host];

	acc_add(&h->acc, win, op, ev->bytes);
	if (!h->has_first) {
		h->first_issue_ns = ev->issue_ns;
		h->has_first = true;
	}
	h->last_issue_ns = ev->issue_ns;
}

/* Per host: an event in timeline row `row` (only when hosts were declared). */
static inline void host_tl_add(struct stats *s, const struct devstat *d, uint64_t row,
			       const struct btape_event *ev)
{
	struct host_tl_row *r = &s->hosts[d->host].tl[row];

	r->n++;
	if ((ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns >= ev->issue_ns) {
		r->lat_n++;
		r->lat_sum_ns += ev->complete_ns - ev->issue_ns;
	}
}

static struct devstat *get_dev(struct stats *s, uint32_t idx, int *err)
{
	if (idx >= STATS_MAX_DEVICES)
		idx = STATS_MAX_DEVICES - 1;
	struct devstat *d = &s->devs[idx];

	if (!d->used) {
		if (!d->name[0])
			snprintf(d->name, sizeof(d->name), "dev%u", idx);
		if (idx >= s->ndevs)
			s->ndevs = idx + 1;
		d->inflight.budget = &s->qd_budget;
		*err = dev_init(d);
		if (*err)
			return NULL;
	}
	return d;
}

struct procstat *stats_proc_slot(struct stats *s, uint32_t pid, bool *added)
{
	const uint32_t mask = 2 * STATS_MAX_PROCS - 1;
	uint32_t i = slot_index(pid, PROC_TABLE_BITS);

	*added = false;
	for (int probe = 0; probe < STATS_SLOT_PROBES; probe++, i = (i + 1) & mask) {
		struct procstat *p = &s->procs[i];

		if (p->used && p->pid == pid)
			return p;
		if (!p->used) {
			if (s->nprocs >= STATS_MAX_PROCS)
				return NULL;
			p->used = true;
			p->pid = pid;
			s->procs_used[i / 64] |= 1ull << (i % 64);
			s->nprocs++;
			*added = true;
			return p;
		}
	}
	return NULL;
}

static struct acc *get_proc_slow(struct stats *s, const struct btape_event *ev)
{
	bool added;
	struct procstat *p = stats_proc_slot(s, ev->pid, &added);

	if (!p) {
		s->proc_other_n_procs++;
		return &s->proc_other;
	}
	if (added && (ev->present & BTAPE_HAS_COMM) && ev->comm)
		snprintf(p->comm, sizeof(p->comm), "%s", ev->comm);
	s->pcache[ev->pid & 15] = p;
	return &p->acc;
}

/* The process's accumulator: a direct-mapped cache of recent slots, then the table. */
static inline struct acc *get_proc(struct stats *s, const struct btape_event *ev)
{
	struct procstat *p = s->pcache[ev->pid & 15];

	if (p && p->pid == ev->pid)
		return &p->acc;
	return get_proc_slow(s, ev);
}

/* Adds the current row's pending integer sums into its (double) row sums. */
static void tl_flush(struct stats *s)
{
	struct tl_row *r = &s->tl[s->tl_cur];

	r->lat_sum += (double)s->tl_lat_pending;
	r->qd_sum += (double)s->tl_qd_pending;
	s->tl_lat_pending = s->tl_qd_pending = 0;
}

static void tl_coarsen(struct stats *s)
{
	for (uint64_t i = 0; i < STATS_TL_MAX_ROWS / 2; i++) {
		struct tl_row *d = &s->tl[i], *a = &s->tl[2 * i], *b = &s->tl[2 * i + 1];
		struct tl_row m;

		for (int k = 0; k < DIR__COUNT; k++) {
			m.n_dir[k] = a->n_dir[k] + b->n_dir[k];
			m.bytes_dir[k] = a->bytes_dir[k] + b->bytes_dir[k];
		}
		m.n_other = a->n_other + b->n_other;
		m.lat_n = a->lat_n + b->lat_n;
		m.lat_sum = a->lat_sum + b->lat_sum;
		m.qd_n = a->qd_n + b->qd_n;
		m.qd_sum = a->qd_sum + b->qd_sum;
		m.loc_n = a->loc_n + b->loc_n;
		m.loc_seq = a->loc_seq + b->loc_seq;
		m.loc_log2 = a->loc_log2 + b->loc_log2;
		m.loc_jump_blk = a->loc_jump_blk + b->loc_jump_blk;
		*d = m;
	}
	memset(s->tl + STATS_TL_MAX_ROWS / 2, 0, STATS_TL_MAX_ROWS / 2 * sizeof(*s->tl));
	for (uint32_t h = 0; h < s->nhosts; h++) {
		struct host_tl_row *t = s->hosts[h].tl;

		for (uint64_t i = 0; i < STATS_TL_MAX_ROWS / 2; i++) {
			struct host_tl_row m = {
				.n = t[2 * i].n + t[2 * i + 1].n,
				.lat_n = t[2 * i].lat_n + t[2 * i + 1].lat_n,
				.lat_sum_ns = t[2 * i].lat_sum_ns + t[2 * i + 1].lat_sum_ns,
			};

			t[i] = m;
		}
		memset(t + STATS_TL_MAX_ROWS / 2, 0, STATS_TL_MAX_ROWS / 2 * sizeof(*t));
	}
	s->tl_interval *= 2;
	s->tl_rows = (s->tl_rows + 1) / 2;
}

/* Doubles the heat map's column width: each pair of columns into one. */
static void heat_halve_t(struct devstat *d)
{
	for (int l = 0; l < STATS_HEAT_L; l++) {
		uint32_t *row = d->heat + l * STATS_HEAT_T;

		for (int c = 0; c < STATS_HEAT_T / 2; c++)
			row[c] = row[2 * c] + row[2 * c + 1];
		memset(row + STATS_HEAT_T / 2, 0, STATS_HEAT_T / 2 * sizeof(*row));
	}
	d->heat_tw *= 2;
	d->heat_tshift++;
}

/* Doubles the heat map's row height: each pair of rows into one. */
static void heat_halve_l(struct devstat *d)
{
	for (int l = 0; l < STATS_HEAT_L / 2; l++)
		for (int c = 0; c < STATS_HEAT_T; c++)
			d->heat[l * STATS_HEAT_T + c] = d->heat[2 * l * STATS_HEAT_T + c] +
							d->heat[(2 * l + 1) * STATS_HEAT_T + c];
	memset(d->heat + STATS_HEAT_L / 2 * STATS_HEAT_T, 0,
	       STATS_HEAT_L / 2 * STATS_HEAT_T * sizeof(*d->heat));
	d->heat_lw *= 2;
	d->heat_lshift++;
}

/* Widens the heat map's columns or rows until (t, sector) fits. */
static void heat_rescale(struct devstat *d, uint64_t t, uint64_t sector)
{
	while ((t >> d->heat_tshift) >= STATS_HEAT_T)
		heat_halve_t(d);
	while ((sector >> d->heat_lshift) >= STATS_HEAT_L)
		heat_halve_l(d);
}

static inline __attribute__((always_inline)) void heat_add(struct devstat *d, uint64_t t,
							   uint64_t sector)
{
	uint64_t col = t >> d->heat_tshift, row = sector >> d->heat_lshift;

	if (col >= STATS_HEAT_T || row >= STATS_HEAT_L) {
		heat_rescale(d, t, sector);
		col = t >> d->heat_tshift;
		row = sector >> d->heat_lshift;
	}
	d->heat[row * STATS_HEAT_T + col]++;
}

#define SEEK_BIN_ZERO 64 /* the bin of distance 0, and of no other: a stream's seq count */

/* Signed log2 bin of a seek distance, branchless (the sign and size are random). */
static inline unsigned int seek_bin(int64_t d)
{
	uint64_t sgn = (uint64_t)(d >> 63); /* all ones when negative */
	uint64_t a = ((uint64_t)d ^ sgn) - sgn;
	unsigned int k = (a != 0) * (64 - (unsigned int)__builtin_clzll(a | 1)); /* 0..64 */

	return SEEK_BIN_ZERO + ((k ^ (unsigned int)sgn) - (unsigned int)sgn);
}

/*
 * The I/O [off, end) in stream st: locality against the previous one (bytes), then the end.
 * Returns the bit length of the seek distance (0: sequential), or -1 without a previous I/O.
 */
static inline __attribute__((always_inline)) int stream_add(struct stream *st, uint64_t off,
							     uint64_t end, uint64_t near, uint64_t t)
{
	int k = -1;

	if (st->has_last) {
		int64_t dist = (int64_t)(off - st->last_end);
		uint64_t sgn = (uint64_t)(dist >> 63);
		uint64_t ad = ((uint64_t)dist ^ sgn) - sgn; /* |dist|, no branch */
		unsigned int bin = seek_bin(dist);

		st->near += ad <= near; /* n and seq come from the bins (stats__finish) */
		st->seek[bin]++;
		k = bin >= SEEK_BIN_ZERO ? (int)(bin - SEEK_BIN_ZERO) : (int)(SEEK_BIN_ZERO - bin);
	} else {
		st->first_off = off;
		st->first_t = t;
	}
	st->has_last = true;
	st->last_end = end;
	return k;
}

/* A stream_add() result for the I/O at byte offset off into a timeline row's locality sums. */
static inline void tl_loc_add(struct tl_row *r, int k, uint64_t off)
{
	if (k < 0)
		return;
	r->loc_n++;
	r->loc_seq += k == 0;
	r->loc_log2 += (uint64_t)k;
	r->loc_jump_blk += off / STATS_WS_BLOCK & -(uint64_t)(k != 0); /* no branch: k is random */
}

void stats_seek_bin_edges(unsigned int bin, int64_t *lo, int64_t *hi)
{
	unsigned int k = bin > SEEK_BIN_ZERO ? bin - SEEK_BIN_ZERO : SEEK_BIN_ZERO - bin;
	/* |d| in [2^(k-1), 2^k), past 2^63 - 1 saturated (only a hostile trace seeks that far) */
	int64_t near = k == 0 ? 0 : k - 1 < 63 ? (int64_t)(1ull << (k - 1)) : INT64_MAX;
	int64_t far = k == 0 ? 0 : k < 63 ? (int64_t)(1ull << k) : INT64_MAX;

	*lo = bin < SEEK_BIN_ZERO ? -near : near;
	*hi = bin < SEEK_BIN_ZERO ? -far : far;
}

/* Everything of stats__add but the working set (see ws_event and stats__add_batch). */
static inline int add_core(struct stats *s, const struct btape_event *ev)
{
	int err = 0;
	unsigned int op = ev->op < BTAPE_OP__COUNT ? ev->op : BTAPE_OP_OTHER;
	int dir = DIR_OF[op];
	uint64_t issue = ev->issue_ns;

	if (!s->nadd) {
		if (!s->origin_fixed)
			s->origin_ns = issue;
		s->busy_until = issue;
		s->last_issue_ns = issue;
	}
	if (issue < s->origin_ns)
		issue = s->origin_ns; /* out of order: clamp, never wrap */
	uint64_t t = issue - s->origin_ns;

	if (t < s->win_lo || t >= s->win_hi) { /* a new 1 s window: no division per event */
		s->win_cur = t / STATS_WINDOW_NS;
		s->win_lo = s->win_cur * STATS_WINDOW_NS;
		s->win_hi = s->win_lo + STATS_WINDOW_NS;
	}
	uint64_t win = s->win_cur;
	struct devstat *d = ev->dev < STATS_MAX_DEVICES && s->devs[ev->dev].used
				    ? &s->devs[ev->dev]
				    : get_dev(s, ev->dev, &err);

	if (!d)
		return err;
	s->present_all &= ev->present;
	s->present_any |= ev->present;

	if (s->nadd) {
		uint64_t prev = s->last_issue_ns;

		hist_add(s->interarrival, issue > prev ? issue - prev : 0);
	}
	s->nadd++;
	acc_add(&s->all, win, op, ev->bytes);
	acc_add(&d->acc, win, op, ev->bytes);
	if (s->nhosts)
		host_add(s, d, win, op, ev);
	if (ev->present & BTAPE_HAS_PID)
		acc_add(get_proc(s, ev), win, op, ev->bytes);

	struct opstat *o = &s->ops[op];

	o->n++;
	o->bytes += ev->bytes;
	size_add(o, ev->bytes);
	if ((ev->present & BTAPE_HAS_ERROR) && ev->error)
		o->n_errors++;

	bool has_c = (ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns >= ev->issue_ns;
	bool has_i = (ev->present & BTAPE_HAS_INSERT) && ev->insert_ns <= ev->issue_ns;
	uint64_t devtime = has_c ? ev->complete_ns - ev->issue_ns : 0;

	if (has_c) {
		if (!o->lat_dev && !(o->lat_dev = hist_new()))
			return -ENOMEM;
		if (!o->lat_total && !(o->lat_total = hist_new()))
			return -ENOMEM;
		hist_add(o->lat_dev, devtime);
		hist_add(o->lat_total, ev->complete_ns - (has_i ? ev->insert_ns : ev->issue_ns));
		hist_add(d->acc.lat, devtime);
		if (ev->complete_ns > s->last_complete_ns)
			s->last_complete_ns = ev->complete_ns;
	}
	if (has_i) {
		if (!o->lat_queue && !(o->lat_queue = hist_new()))
			return -ENOMEM;
		hist_add(o->lat_queue, ev->issue_ns - ev->insert_ns);
	}

	/* locality: streams are (device, direction); offsets in bytes */
	int seek_k = -1;
	uint64_t seek_off = 0;

	if (dir >= 0 && ev->bytes) {
		struct stream *st = &d->streams[dir];
		uint64_t off = ev->sector * SECTOR;

		seek_off = off;
		seek_k = stream_add(st, off, off + ev->bytes, s->o.near_seq_bytes, t);
		autorange_add(&d->lba, ev->sector, 1);
		heat_add(d, t, ev->sector);
		if (off < d->min_off)
			d->min_off = off;
		if (off + ev->bytes > d->max_end)
			d->max_end = off + ev->bytes;
	}
	if (ev->bytes) { /* the extent: discards and the other ops with data too */
		uint64_t off = ev->sector * SECTOR;

		if (off < d->ext_min)
			d->ext_min = off;
		if (off + ev->bytes > d->ext_end)
			d->ext_end = off + ev->bytes;
	}

	/* queue depth at issue */
	uint64_t qd = 0;

	if (ev->present & BTAPE_HAS_QD) {
		qd = ev->qd;
	} else if (has_c) {
		struct btape_inflight *h = &d->inflight;

		inflight_expire(h, ev->issue_ns);
		qd = inflight_count(h) + 1;
		inflight_push(h, ev->complete_ns);
	} else {
		s->qd_missing++;
	}
	if (qd)
		hist_add(s->qd, qd);
	if (qd && has_c) {
		struct hist **h = &o->lat_qd[stats_qd_band(qd)];

		if (!*h && !(*h = hist_new()))
			return -ENOMEM;
		hist_add(*h, devtime);
	}

	/* idle periods: nothing in flight (or, without completions, no issue) */
	s->idle_no_complete += !has_c;
	if (s->nadd > 1 && issue > s->busy_until) {
		uint64_t gap = issue - s->busy_until;

		if (gap >= s->o.idle_min_ns) {
			hist_add(s->idle, gap);
			s->idle_total_ns += gap;
		}
	}
	{
		uint64_t end = has_c ? ev->complete_ns : issue;

		if (end > s->busy_until)
			s->busy_until = end;
	}

	/* timeline */
	uint64_t row;

	if (t >= s->tl_cur_lo && t < s->tl_cur_hi) {
		row = s->tl_cur;
	} else {
		tl_flush(s);
		row = t / s->tl_interval;
		while (row >= STATS_TL_MAX_ROWS) {
			tl_coarsen(s);
			row = t / s->tl_interval;
		}
		s->tl_cur = row;
		s->tl_cur_lo = row * s->tl_interval;
		s->tl_cur_hi = s->tl_cur_lo + s->tl_interval;
	}
	struct tl_row *r = &s->tl[row];

	if (s->nhosts)
		host_tl_add(s, d, row, ev);
	if (dir >= 0) {
		r->n_dir[dir]++;
		r->bytes_dir[dir] += ev->bytes;
	} else {
		r->n_other++;
	}
	tl_loc_add(r, seek_k, seek_off);
	if (has_c) {
		r->lat_n++;
		s->tl_lat_pending += devtime;
	}
	if (qd) {
		r->qd_n++;
		s->tl_qd_pending += qd;
	}
	if (row + 1 > s->tl_rows)
		s->tl_rows = row + 1;
	if (issue > s->last_issue_ns)
		s->last_issue_ns = issue;
	return 0;
}

/* Working-set block range of an event: false when it touches no block (no direction, 0 bytes). */
static inline bool ws_range(const struct btape_event *ev, int *dir, uint64_t *b0, uint64_t *b1)
{
	unsigned int op = ev->op < BTAPE_OP__COUNT ? ev->op : BTAPE_OP_OTHER;
	uint64_t off = ev->sector * SECTOR;

	*dir = DIR_OF[op];
	if (*dir < 0 || !ev->bytes)
		return false;
	*b0 = off / STATS_WS_BLOCK;
	*b1 = (off + ev->bytes - 1) / STATS_WS_BLOCK;
	return true;
}

static inline uint64_t ws_key(const struct btape_event *ev, uint64_t b)
{
	return (((uint64_t)ev->dev << WS_KEY_BLOCK_BITS) |
		(b & ((1ull << WS_KEY_BLOCK_BITS) - 1))) +
	       1;
}

/*
 * Blocks b0..b1 of a large I/O counted one by one (the extent table is full): the puts of
 * ws_add block by block, in the same order, with the slots of the next WS_SPILL_BATCH blocks
 * prefetched while a batch is put. The keys are consecutive but their slots random: once the
 * table outgrows the caches (2^21 slots, 32 MiB, at the default limit) each put waited for
 * memory (50 ns a block, measured; about 10 ns with the prefetch).
 */
#define WS_SPILL_BATCH 32

static void ws_spill_hash(struct blockset *ws, const struct btape_event *ev, uint64_t b, uint32_t m,
			  uint64_t *h)
{
	uint64_t drop = ws->level ? ~0ull << (64 - ws->level) : 0; /* as ws_put's test */

	for (uint32_t k = 0; k < m; k++) {
		h[k] = mix64(ws_key(ev, b + k));
		if (!(h[k] & drop))
			ws_prefetch_put(ws, h[k]);
	}
}

static int ws_spill(struct stats *s, const struct btape_event *ev, uint64_t b0, uint64_t b1,
		    int dir)
{
	struct blockset *ws = &s->ws;
	uint64_t hash[2][WS_SPILL_BATCH];
	uint64_t left = b1 - b0 + 1;
	uint32_t m = left < WS_SPILL_BATCH ? (uint32_t)left : WS_SPILL_BATCH, cur = 0;

	ws->accesses += left;
	ws_spill_hash(ws, ev, b0, m, hash[0]);
	for (uint64_t b = b0;;) {
		uint64_t next = b + m;
		uint32_t mn = left - m < WS_SPILL_BATCH ? (uint32_t)(left - m) : WS_SPILL_BATCH;

		ws_spill_hash(ws, ev, next, mn, hash[cur ^ 1]); /* the next batch's slots */
		for (uint32_t k = 0; k < m; k++) {
			int err = ws_put(ws, hash[cur][k], dir);

			if (err)
				return err;
		}
		left -= m;
		if (!left)
			return 0;
		b = next;
		m = mn;
		cur ^= 1;
	}
}

/* The working-set part of one event, directly (no prefetch but ws_spill's). */
static int ws_event(struct stats *s, const struct btape_event *ev)
{
	uint64_t b0, b1;
	int dir;

	if (!ws_range(ev, &dir, &b0, &b1))
		return 0;
	if (b1 - b0 >= STATS_WS_LARGE_BLOCKS) {
		if (ws_large(&s->ws, ev->dev, b0, b1, dir))
			return 0;
		/*
		 * The extent table is full (2^18 large I/Os apart): block by block, within a
		 * budget. Without it, 20 000 reads of 4 GiB after 300 000 of 8 MiB (a 2.5 KB
		 * trace) took a minute of CPU per pass.
		 */
		if (s->ws.spilled + (b1 - b0 + 1) > STATS_WS_SPILL_BLOCKS) {
			s->ws.large_uncounted++;
			return 0;
		}
		s->ws.spilled += b1 - b0 + 1;
		return ws_spill(s, ev, b0, b1, dir);
	}
	for (uint64_t b = b0; b <= b1; b++) {
		int err = ws_add(&s->ws, ws_key(ev, b), dir);

		if (err)
			return err;
	}
	return 0;
}

int stats__add(struct stats *s, const struct btape_event *ev)
{
	int err = add_core(s, ev);

	return err ? err : ws_event(s, ev);
}

/* ------------------------------------------------------------------------------------ */
/* block fast path: one statistic (or a few) per pass over a block of events              */

/*
 * A block takes the fast path when nothing in it changes a cached position: the analysis has
 * started, issue times do not decrease (from the last one added), every event is on a declared
 * device that is already set up, and all of them fall into the current 1 s window and timeline
 * row. Then add_core's per-event work comes out the same done pass by pass (each statistic
 * sees the events in the same order), with the state of each pass in registers. Any other
 * block goes through add_core one event at a time. *full says whether the block is FULL (see
 * add_block_body).
 */
#define ADD_BLOCK_EVENTS 64

/*
 * What every event of a block has: FULL, all three latencies and no error (the presence
 * tests fold to constants) with the queue depth computed from the completions;
 * FULL_QD, the same with a recorded queue depth (biotape record's traces); SOME, anything
 * else (tested per event).
 */
enum block_kind { BLOCK_SOME, BLOCK_FULL, BLOCK_FULL_QD };

static bool block_fast_ok(const struct stats *s, const struct btape_event *e, size_t m,
			  enum block_kind *kind)
{
	if (!s->nadd || !m)
		return false;
	const uint32_t want = BTAPE_HAS_COMPLETE | BTAPE_HAS_INSERT;
	uint64_t prev = s->last_issue_ns;
	uint32_t qd_all = BTAPE_HAS_QD, qd_any = 0;
	bool ok = true, f = true;

	for (size_t i = 0; i < m; i++) {
		uint32_t dev = e[i].dev;

		ok &= e[i].issue_ns >= prev;
		prev = e[i].issue_ns;
		ok &= dev < STATS_MAX_DEVICES && s->devs[dev].used;
		f &= (e[i].present & want) == want && e[i].insert_ns <= e[i].issue_ns &&
		     e[i].complete_ns >= e[i].issue_ns &&
		     (!(e[i].present & BTAPE_HAS_ERROR) || !e[i].error);
		qd_all &= e[i].present;
		qd_any |= e[i].present;
	}
	qd_any &= BTAPE_HAS_QD;
	*kind = !f ? BLOCK_SOME : qd_all ? BLOCK_FULL_QD : !qd_any ? BLOCK_FULL : BLOCK_SOME;
	if (!ok)
		return false;
	uint64_t t0 = e[0].issue_ns - s->origin_ns, t1 = e[m - 1].issue_ns - s->origin_ns;

	return t0 >= s->win_lo && t1 < s->win_hi && t0 >= s->tl_cur_lo && t1 < s->tl_cur_hi;
}

/* hist_add of n values, the header (count, min, max, sum) kept in registers. */
HOT_CLONES static void hist_add_vals(struct hist *h, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	uint64_t mn = h->count ? h->min : UINT64_MAX, mx = h->max;
	unsigned __int128 sum = ((unsigned __int128)h->sum_hi << 64) | h->sum_lo;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];

		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
		sum += x;
		h->b[hist_index(x)]++;
	}
	h->count += n;
	h->min = mn;
	h->max = mx;
	h->sum_lo = (uint64_t)sum;
	h->sum_hi = (uint64_t)(sum >> 64);
}
/*
 * FULL: every event of the block has insert <= issue <= complete and no queue depth or error
 * field (the usual recording): the per-event presence tests fold away.
 */
static inline __attribute__((always_inline)) int add_block_body(struct stats *s,
								const struct btape_event *e,
								size_t m, const uint64_t *hash,
								const uint16_t *pf, uint32_t npf,
								const enum block_kind kind)
{
	const bool full = kind != BLOCK_SOME, rec_qd = kind == BLOCK_FULL_QD;
	uint8_t opv[ADD_BLOCK_EVENTS];
	bool hcv[ADD_BLOCK_EVENTS];
	uint64_t val[ADD_BLOCK_EVENTS];
	const uint64_t origin = s->origin_ns, win = s->win_cur;
	uint32_t pall = ~0u, pany = 0;
	size_t k;

	/* op, presence */
	uint32_t ops = 0;

	for (size_t i = 0; i < m; i++) {
		opv[i] = e[i].op < BTAPE_OP__COUNT ? e[i].op : BTAPE_OP_OTHER;
		ops |= 1u << opv[i];
		pall &= e[i].present;
		pany |= e[i].present;
	}
	s->present_all &= pall;
	s->present_any |= pany;
	if (full) { /* every event has all three latencies: their histograms, once per block */
		for (uint32_t om = ops; om; om &= om - 1) {
			struct opstat *o = &s->ops[__builtin_ctz(om)];

			if ((!o->lat_dev && !(o->lat_dev = hist_new())) ||
			    (!o->lat_total && !(o->lat_total = hist_new())) ||
			    (!o->lat_queue && !(o->lat_queue = hist_new())))
				return -ENOMEM;
		}
	}

	/* inter-arrival: issue times do not decrease, the previous one is the last added */
	{
		uint64_t prev = s->last_issue_ns;

		for (size_t i = 0; i < m; i++) {
			val[i] = e[i].issue_ns - prev;
			prev = e[i].issue_ns;
		}
		hist_add_vals(s->interarrival, val, m);
	}
	s->nadd += m;

	/*
	 * accumulators: device, process; the overall one (always in the current window) counts
	 * what the per-op pass below counts, so it takes the op counts' growth over the block
	 */
	{
		struct acc *a = &s->all;

		if (win != a->win || !a->win_open)
			acc_roll(a, win);
		for (size_t i = 0; i < m; i++)
			acc_add(&s->devs[e[i].dev].acc, win, opv[i], e[i].bytes);
		if (s->nhosts)
			for (size_t i = 0; i < m; i++) { /* the block is in timeline row tl_cur */
				host_add(s, &s->devs[e[i].dev], win, opv[i], &e[i]);
				host_tl_add(s, &s->devs[e[i].dev], s->tl_cur, &e[i]);
			}
		if (pany & BTAPE_HAS_PID)
			for (size_t i = 0; i < m; i++)
				if (e[i].present & BTAPE_HAS_PID)
					acc_add(get_proc(s, &e[i]), win, opv[i], e[i].bytes);
	}

	/* per op: counts, sizes, errors; the op totals before, for the overall and the timeline */
	uint64_t op_n0[BTAPE_OP__COUNT], op_b0[BTAPE_OP__COUNT];

	for (uint32_t om = ops; om; om &= om - 1) {
		unsigned int op = (unsigned int)__builtin_ctz(om);

		op_n0[op] = s->ops[op].n;
		op_b0[op] = s->ops[op].bytes;
	}
	for (size_t i = 0; i < m; i++) {
		struct opstat *o = &s->ops[opv[i]];
		uint64_t b = e[i].bytes;

		o->n++;
		o->bytes += b;
		size_add(o, b);
		if (!full && (e[i].present & BTAPE_HAS_ERROR) && e[i].error)
			o->n_errors++;
	}
	uint64_t blk_n_dir[DIR__COUNT] = {0}, blk_bytes_dir[DIR__COUNT] = {0}, blk_n_other = 0;

	for (uint32_t om = ops; om; om &= om - 1) {
		unsigned int op = (unsigned int)__builtin_ctz(om);
		uint64_t dn = s->ops[op].n - op_n0[op], db = s->ops[op].bytes - op_b0[op];
		int dir = DIR_OF[op];

		s->all.n_op[op] += dn;
		s->all.bytes_op[op] += db;
		if (dir >= 0) {
			blk_n_dir[dir] += dn;
			blk_bytes_dir[dir] += db;
		} else {
			blk_n_other += dn;
		}
	}

	/*
	 * latency: device time into the op's and the device's histograms (one bucket index);
	 * queue depth at issue in the same pass (its in-flight array is a chain of dependent
	 * loads and stores per device: the histogram work overlaps it). The working-set slots
	 * are prefetched along the way, one per event, not in a burst.
	 */
	uint64_t lat_n = 0, lat_sum = 0, last_c = s->last_complete_ns;
	uint64_t qd_n = 0, qd_sum = 0;

	k = 0;
	for (size_t i = 0; i < m; i++) {
		const struct btape_event *ev = &e[i];
		struct opstat *o = &s->ops[opv[i]];
		bool has_c = full || ((ev->present & BTAPE_HAS_COMPLETE) &&
				      ev->complete_ns >= ev->issue_ns);
		bool has_i = full ||
			     ((ev->present & BTAPE_HAS_INSERT) && ev->insert_ns <= ev->issue_ns);
		uint64_t qd = 0;

		if (i < npf)
			ws_prefetch_put(&s->ws, hash[pf[i]]);
		if (full ? rec_qd : (ev->present & BTAPE_HAS_QD) != 0) {
			qd = ev->qd;
		} else if (has_c) {
			struct btape_inflight *h = &s->devs[ev->dev].inflight;

			inflight_expire(h, ev->issue_ns);
			qd = inflight_count(h) + 1;
			inflight_push(h, ev->complete_ns);
		} else {
			s->qd_missing++;
		}
		val[k] = qd;
		k += qd != 0;
		qd_n += qd != 0;
		qd_sum += qd;
		hcv[i] = has_c;
		if (has_c) {
			if (!full && ((!o->lat_dev && !(o->lat_dev = hist_new())) ||
				      (!o->lat_total && !(o->lat_total = hist_new()))))
				return -ENOMEM;
			uint64_t dt = ev->complete_ns - ev->issue_ns;
			unsigned int idx = hist_index(dt);

			hist_add_at(o->lat_dev, dt, idx);
			hist_add_at(s->devs[ev->dev].acc.lat, dt, idx);
			if (qd) {
				struct hist **h = &o->lat_qd[stats_qd_band(qd)];

				if (!*h && !(*h = hist_new()))
					return -ENOMEM;
				hist_add_at(*h, dt, idx);
			}
			hist_add(o->lat_total,
				 ev->complete_ns - (has_i ? ev->insert_ns : ev->issue_ns));
			last_c = ev->complete_ns > last_c ? ev->complete_ns : last_c;
			lat_n++;
			lat_sum += dt;
		}
		if (has_i) {
			if (!full && !o->lat_queue && !(o->lat_queue = hist_new()))
				return -ENOMEM;
			hist_add(o->lat_queue, ev->issue_ns - ev->insert_ns);
		}
	}
	s->last_complete_ns = last_c;
	hist_add_vals(s->qd, val, k);
	for (size_t i = m; i < npf; i++)
		ws_prefetch_put(&s->ws, hash[pf[i]]);

	/* locality: streams are (device, direction); offsets in bytes */
	struct tl_row loc = {0}; /* the block's locality sums, for timeline row tl_cur */
	{
		const uint64_t near = s->o.near_seq_bytes;

		for (size_t i = 0; i < m; i++) {
			const struct btape_event *ev = &e[i];
			int dir = DIR_OF[opv[i]];

			if (!ev->bytes)
				continue;
			struct devstat *d = &s->devs[ev->dev];
			uint64_t off = ev->sector * SECTOR, end = off + ev->bytes;

			d->ext_min = off < d->ext_min ? off : d->ext_min;
			d->ext_end = end > d->ext_end ? end : d->ext_end;
			if (dir < 0)
				continue;
			struct stream *st = &d->streams[dir];

			tl_loc_add(&loc, stream_add(st, off, end, near, ev->issue_ns - origin), off);
			autorange_add(&d->lba, ev->sector, 1);
			heat_add(d, ev->issue_ns - origin, ev->sector);
			d->min_off = off < d->min_off ? off : d->min_off;
			d->max_end = end > d->max_end ? end : d->max_end;
		}
	}

	/* idle periods: nothing in flight (or, without completions, no issue) */
	{
		uint64_t busy = s->busy_until, nc = 0;
		const uint64_t idle_min = s->o.idle_min_ns;

		for (size_t i = 0; i < m; i++) {
			uint64_t issue = e[i].issue_ns;

			nc += !full && !hcv[i];
			if (issue > busy) {
				uint64_t gap = issue - busy;

				if (gap >= idle_min) {
					hist_add(s->idle, gap);
					s->idle_total_ns += gap;
				}
			}
			uint64_t end = full || hcv[i] ? e[i].complete_ns : issue;

			busy = end > busy ? end : busy;
		}
		s->busy_until = busy;
		s->idle_no_complete += nc;
	}

	/* timeline: every event of the block is in the current row */
	{
		struct tl_row *r = &s->tl[s->tl_cur];

		for (int d = 0; d < DIR__COUNT; d++) {
			r->n_dir[d] += blk_n_dir[d];
			r->bytes_dir[d] += blk_bytes_dir[d];
		}
		r->n_other += blk_n_other;
		r->loc_n += loc.loc_n;
		r->loc_seq += loc.loc_seq;
		r->loc_log2 += loc.loc_log2;
		r->loc_jump_blk += loc.loc_jump_blk;
		r->lat_n += lat_n;
		s->tl_lat_pending += lat_sum;
		r->qd_n += qd_n;
		s->tl_qd_pending += qd_sum;
		if (s->tl_cur + 1 > s->tl_rows)
			s->tl_rows = s->tl_cur + 1;
	}
	s->last_issue_ns = e[m - 1].issue_ns;
	return 0;
}

/*
 * hash[pf[0..npf)]: hashes of the working-set slots the block will update (prefetched on the
 * way).
 */
HOT_CLONES static int add_block_fast(struct stats *s, const struct btape_event *e, size_t m,
				     const uint64_t *hash, const uint16_t *pf, uint32_t npf,
				     enum block_kind kind)
{
	if (kind == BLOCK_SOME)
		return add_block_body(s, e, m, hash, pf, npf, BLOCK_SOME);
	s->nadd_full += m;
	if (kind == BLOCK_FULL_QD)
		return add_block_body(s, e, m, hash, pf, npf, BLOCK_FULL_QD);
	return add_block_body(s, e, m, hash, pf, npf, BLOCK_FULL);
}

/*
 * Events go through in blocks of ADD_BLOCK_EVENTS: first the working-set keys of the block are
 * hashed once and the ones the sample keeps are queued; then the rest of the statistics run,
 * pass by pass through add_block_fast (which prefetches the queued keys' table slots on the
 * way) or event by event through add_core; then the queued keys go into the table. The
 * working set does not depend on the order of its updates (the sampling level reached is the
 * smallest that fits the distinct sampled blocks), so the result is the same as stats__add
 * one event at a time. An event with more blocks than the queue has room for goes into the
 * table directly.
 */
#define WS_PEND_MAX 1024 /* working-set keys queued per block */
/* the block path never queues a large I/O's keys: whatever the batching, one rule decides */
_Static_assert(STATS_WS_LARGE_BLOCKS >= WS_PEND_MAX, "large I/Os go through ws_event");

typedef uint64_t u64x4 __attribute__((vector_size(32), aligned(8)));

/*
 * h[k] = mix64(key[k] without bit 63) for k < n rounded up to 4 (both arrays have room), four
 * lanes at a time (AVX2 in the x86-64-v3 clone, which has no 64-bit multiply of its own: gcc
 * builds it from 32-bit ones; still about half the instructions of the scalar loop).
 */
static inline __attribute__((always_inline)) void mix64_keys(uint64_t *restrict h,
							     const uint64_t *restrict key,
							     uint32_t n)
{
	for (uint32_t k = 0; k < n; k += 4) {
		u64x4 x;

		memcpy(&x, key + k, sizeof(x));
		x &= ~(1ull << 63);
		MIX64_STEPS(x);
		memcpy(h + k, &x, sizeof(x));
	}
}

HOT_CLONES int stats__add_batch(struct stats *s, const struct btape_event *evs, size_t n)
{
	uint64_t keys[WS_PEND_MAX + 3]; /* block key | direction << 63 */
	uint64_t hash[WS_PEND_MAX + 3]; /* + 3: mix64_keys works in fours */
	uint16_t pend[WS_PEND_MAX];	/* the keys the sample keeps */
	_Static_assert(WS_PEND_MAX <= UINT16_MAX + 1, "key index");
	struct blockset *ws = &s->ws;
	const uint64_t kmask = (1ull << WS_KEY_BLOCK_BITS) - 1;

	for (size_t base = 0; base < n; base += ADD_BLOCK_EVENTS) {
		size_t m = n - base < ADD_BLOCK_EVENTS ? n - base : ADD_BLOCK_EVENTS;
		const struct btape_event *e = evs + base;
		uint64_t drop = ws->level ? ~0ull << (64 - ws->level) : 0; /* hash bits that drop */
		uint32_t np = 0, nk = 0;
		int err;

		/* the block's keys, four at a time (the count per I/O is random: few exits) */
		for (size_t i = 0; i < m; i++) {
			uint64_t b0, b1;
			int dir;

			if (!ws_range(&e[i], &dir, &b0, &b1))
				continue;
			uint64_t nb = b1 - b0 + 1, k0 = ws_key(&e[i], b0);

			if (nb > WS_PEND_MAX - nk || (b0 & kmask) + nb - 1 > kmask || (k0 >> 63)) {
				/* long, its block numbers wrap the key, or a huge device index */
				err = ws_event(s, &e[i]);
				if (err)
					return err;
				continue;
			}
			ws->accesses += nb;
			/* the direction rides in bit 63 (keys use at most 54 bits); a separate byte
			 * array made gcc call memset per event */
			k0 |= (uint64_t)dir << 63;
			/* four keys whatever nb (the room is there); more only for a long I/O */
			u64x4 kv = k0 + (u64x4){0, 1, 2, 3};

			memcpy(keys + nk, &kv, sizeof(kv));
			for (uint64_t j = 4; j < nb; j += 4) {
				kv += 4;
				memcpy(keys + nk + j, &kv, sizeof(kv));
			}
			nk += (uint32_t)nb;
		}
		/* hash once, four keys at a time; queue the index of each key the sample keeps
		 * (branchless: the sample drops a random 1 - 1/2^level of the blocks); their
		 * slots are prefetched while the block's other statistics run */
		keys[nk] = keys[nk + 1] = keys[nk + 2] = 0; /* the last four's lanes past nk */
		mix64_keys(hash, keys, nk);
		for (uint32_t k = 0; k < nk; k++) {
			pend[np] = (uint16_t)k;
			np += (uint32_t)((hash[k] & drop) == 0);
		}
		enum block_kind kind;

		if (block_fast_ok(s, e, m, &kind)) {
			err = add_block_fast(s, e, m, hash, pend, np, kind);
			if (err)
				return err;
			s->nadd_fast += m;
		} else {
			for (uint32_t k = 0; k < np; k++)
				ws_prefetch_put(ws, hash[pend[k]]);
			for (size_t i = 0; i < m; i++) {
				err = add_core(s, &e[i]);
				if (err)
					return err;
			}
		}
#if WS_AVX2
		if (s->ws_avx2) {
			err = ws_put_queued_avx2(ws, hash, keys, pend, np);
			if (err)
				return err;
			continue;
		}
#endif
		for (uint32_t k = 0; k < np; k++) {
			/* ws_put checks the sample again: the level may have risen since */
			uint32_t i = pend[k];

			err = ws_put(ws, hash[i], (int)(keys[i] >> 63));
			if (err)
				return err;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* parallel analysis (split.c): a slice's state from before it, and the merge's helpers     */

void stats__set_origin(struct stats *s, uint64_t origin_ns)
{
	s->origin_ns = origin_ns;
	s->origin_fixed = true;
}

int stats__warm(struct stats *s, const struct btape_event *ev)
{
	int err = 0;
	uint64_t issue = ev->issue_ns < s->origin_ns ? s->origin_ns : ev->issue_ns;
	struct devstat *d = get_dev(s, ev->dev, &err);
	bool has_c = (ev->present & BTAPE_HAS_COMPLETE) && ev->complete_ns >= ev->issue_ns;

	if (!d)
		return err;
	if (!s->nadd) { /* as add_core's first event; nwarm takes it back (split_pack) */
		s->busy_until = issue;
		s->last_issue_ns = issue;
		s->nadd = s->nwarm = 1;
	}
	if (!(ev->present & BTAPE_HAS_QD) && has_c) {
		struct btape_inflight *h = &d->inflight;
		uint32_t live;

		inflight_expire(h, ev->issue_ns);
		/*
		 * What the warm-up leaves is the slice's entry, which split.c reads from the sorted
		 * array (not the heap): a deep insertion goes into the array, moving up to all in
		 * flight, within a budget. Past it the entry can lack completions (in the heap),
		 * and the merge then finds it not exact: the analysis runs serially.
		 */
		if (inflight_deep(h, ev->complete_ns) && !h->hn &&
		    (live = inflight_count(h)) <= STATS_WARM_MOVES_MAX - s->warm_moves) {
			s->warm_moves += live;
			inflight_push_k(h, ev->complete_ns, UINT32_MAX);
		} else {
			inflight_push(h, ev->complete_ns);
		}
	}
	uint64_t end = has_c ? ev->complete_ns : issue;

	if (end > s->busy_until)
		s->busy_until = end;
	if (issue > s->last_issue_ns)
		s->last_issue_ns = issue;
	return 0;
}

void stats__settle(struct stats *s)
{
	for (uint32_t i = 0; i < s->ndevs; i++) /* split.c reads the in-flight arrays */
		inflight_settle(&s->devs[i].inflight);
	tl_flush(s);
	s->win_lo = s->win_hi = 0;
	s->tl_cur_lo = s->tl_cur_hi = 0;
	memset(s->pcache, 0, sizeof(s->pcache));
}

struct devstat *stats_dev_use(struct stats *s, uint32_t idx, int *err)
{
	*err = 0;
	return get_dev(s, idx, err);
}

void stats_acc_close(struct acc *a)
{
	uint64_t n, bytes, n_dir[DIR__COUNT], bytes_dir[DIR__COUNT];

	acc_window_counts(a, &n, &bytes, n_dir, bytes_dir);
	if (a->win_open)
		acc_close_window(a);
}

void stats_tl_coarsen(struct stats *s)
{
	tl_coarsen(s);
}

void stats_stream_link(struct stats *s, struct stream *st, const struct stream *first,
		       uint64_t prev_end)
{
	int64_t dist = (int64_t)(first->first_off - prev_end);
	uint64_t ad = dist < 0 ? -(uint64_t)dist : (uint64_t)dist;
	unsigned int bin = seek_bin(dist);

	st->near += ad <= s->o.near_seq_bytes;
	st->seek[bin]++;
	tl_loc_add(&s->tl[first->first_t / s->tl_interval],
		   bin >= SEEK_BIN_ZERO ? (int)(bin - SEEK_BIN_ZERO) : (int)(SEEK_BIN_ZERO - bin),
		   first->first_off);
}

void stats_widen(struct devstat *d, unsigned int lba_shift, unsigned int heat_tshift,
		 unsigned int heat_lshift)
{
	while (d->lba.shift < lba_shift)
		autorange_halve(&d->lba);
	while (d->heat_tshift < heat_tshift)
		heat_halve_t(d);
	while (d->heat_lshift < heat_lshift)
		heat_halve_l(d);
}

int stats__finish(struct stats *s)
{
	if (s->finished)
		return 0;
	s->finished = true;
	/*
	 * Idle periods are measured from completion times (an event without one ends at its
	 * issue). They count as "nothing in flight" while nearly all events have one: a recorder
	 * keeps the few I/Os whose completion it did not see, and those should not relabel the
	 * whole analysis as gaps between issues.
	 */
	s->idle_from_completions =
		s->nadd && s->idle_no_complete * IDLE_NO_COMPLETE_MAX_DIV <= s->nadd;
	if (!s->nadd) {
		s->present_all = 0;
		return 0;
	}
	tl_flush(s);
	s->duration_ns = s->last_issue_ns - s->origin_ns;
	s->complete_windows = s->duration_ns / STATS_WINDOW_NS;
	acc_finish(&s->all, s->complete_windows);
	acc_finish(&s->proc_other, s->complete_windows);
	for (uint32_t i = 0; i < s->ndevs; i++) {
		struct devstat *d = &s->devs[i];

		if (!d->used)
			continue;
		acc_finish(&d->acc, s->complete_windows);
		inflight_settle(&d->inflight); /* all in flight in the array, as before the heap */
		s->qd_untracked += d->inflight.untracked;
		for (int k = 0; k < DIR__COUNT; k++) {
			struct stream *a = &s->streams_all[k], *b = &d->streams[k];

			b->n = 0;
			for (int j = 0; j < STATS_SEEK_BINS; j++)
				b->n += b->seek[j];
			b->seq = b->seek[SEEK_BIN_ZERO];
			a->n += b->n;
			a->seq += b->seq;
			a->near += b->near;
			for (int j = 0; j < STATS_SEEK_BINS; j++)
				a->seek[j] += b->seek[j];
		}
	}
	for (uint32_t i = stats_proc_next(s, 0); i < 2 * STATS_MAX_PROCS;
	     i = stats_proc_next(s, i + 1))
		acc_finish(&s->procs[i].acc, s->complete_windows);
	for (uint32_t h = 0; h < s->nhosts; h++) {
		struct hoststat *hs = &s->hosts[h];

		acc_finish(&hs->acc, s->complete_windows);
		if (!(hs->acc.lat = hist_new()))
			return -ENOMEM;
		for (uint32_t i = 0; i < s->ndevs; i++)
			if (s->devs[i].used && s->devs[i].host == h)
				hist_merge(hs->acc.lat, s->devs[i].acc.lat);
	}
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		struct opstat *o = &s->ops[op];

		for (uint32_t i = 0; o->nsizes && i < 2 * STATS_SIZE_EXACT_MAX; i++)
			if (o->sizes[i].n)
				o->size_log2[size_bin(o->sizes[i].size)] += o->sizes[i].n;
	}
	ws_finish(&s->ws, &s->wsr);
	s->wsr.large_uncounted = s->ws.large_uncounted;
	s->qd_from_trace = (s->present_all & BTAPE_HAS_QD) != 0;
	return 0;
}

double stats_seq_share(const struct stream *st)
{
	return st->n ? (double)st->seq / (double)st->n : 0;
}

double stats_near_share(const struct stream *st)
{
	return st->n ? (double)st->near / (double)st->n : 0;
}

double stats_rate(const struct stats *s, uint64_t n)
{
	return s->duration_ns ? (double)n * 1e9 / (double)s->duration_ns : 0;
}

double stats_window_mean(const struct stats *s, const struct acc *a)
{
	if (!s->complete_windows)
		return 0;
	return (double)(a->n - a->n_partial) / (double)s->complete_windows;
}

double stats_burstiness(const struct stats *s, const struct acc *a)
{
	double m = stats_window_mean(s, a);

	return m > 0 ? (double)a->peak_n / m : 0;
}
