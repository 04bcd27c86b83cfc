// SPDX-License-Identifier: GPL-2.0-only
/* The analyzer's working set: table upkeep, large I/Os as extents, the figures (workset.h). */
#include "workset.h"
#include "btape_internal.h" /* btape_random_u64 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if WS_AVX2
#include <immintrin.h>
#endif

#define WS_INITIAL_CAP 4096ull

/*
 * The table is the one large random-access structure: big tables are mmap()ed with
 * MADV_HUGEPAGE so that probes do not also miss the TLB (measured: ~2x faster analysis).
 */
#define WS_MMAP_MIN_BYTES (2u << 20)

#define WS_REBUILD_RUN 256 /* slots gathered at a time when the table grows */

static struct ws_slot *ws_alloc(uint64_t cap)
{
	size_t bytes = (cap + WS_PAD) * sizeof(struct ws_slot);

	if (bytes < WS_MMAP_MIN_BYTES)
		return calloc(cap + WS_PAD, sizeof(struct ws_slot));
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

static void ws_free(struct ws_slot *t, uint64_t cap)
{
	size_t bytes = (cap + WS_PAD) * sizeof(struct ws_slot);

	if (!t)
		return;
	if (bytes < WS_MMAP_MIN_BYTES)
		free(t);
	else
		munmap(t, bytes);
}

/*
 * The table's size (a power of two, WS_INITIAL_CAP or more) and the shift of its homes, and
 * the count at which a new block first rebuilds: the limit, or half.
 */
static void ws_set_cap(struct blockset *b, uint64_t cap)
{
	b->cap = cap;
	b->shift = 64 - (unsigned int)__builtin_ctzll(cap);
	b->room = b->limit < cap / 2 ? b->limit : cap / 2;
}

int ws_init(struct blockset *b, uint64_t limit)
{
	b->limit = limit;
	b->mul = btape_random_u64() | 1; /* unknown to the trace (ws_home) */
	ws_set_cap(b, WS_INITIAL_CAP);
	b->t = ws_alloc(b->cap);
	return b->t ? 0 : -ENOMEM;
}

void ws_destroy(struct blockset *b)
{
	ws_free(b->t, b->cap);
	free(b->edges);
}

/* Puts n entries, none of them in the table, each in the first free slot from its home. */
static void ws_insert_slots(struct blockset *b, const struct ws_slot *e, uint64_t n)
{
	/* in locals: for all gcc knows, a store to t[] could change *b */
	struct ws_slot *t = b->t;
	const uint64_t cap = b->cap, mul = b->mul;
	const unsigned int shift = b->shift;

	for (uint64_t k = 0; k < n; k++) {
		uint64_t i = ws_home_of(e[k].h, mul, shift);

		while (t[i].h)
			i = ws_next(i, cap);
		t[i] = e[k];
	}
}

/*
 * Rebuilds into ncap slots, keeping only entries that pass the current level. At the same
 * size (the sampling level rose: about half the entries go) the table is reused: survivors
 * are set aside, the table cleared and they go back in. Peak memory is the table plus the
 * survivors, not two tables, and no fresh pages are faulted in. Larger, the entries go from
 * the old table to their homes in the new one.
 */
static int ws_rebuild(struct blockset *b, uint64_t ncap)
{
	struct ws_slot *ot = b->t, *keep;
	const uint64_t ocap = b->cap;
	uint64_t n = 0;
	const uint64_t drop = b->level ? ~0ull << (64 - b->level) : 0; /* hash bits that drop */
	const uint64_t slots = b->cap + WS_PAD;

	if (ncap == b->cap && b->n && (keep = malloc((b->n + 1) * sizeof(*keep)))) {
		/* branchless: which slots survive is random (about half of the used ones) */
		for (uint64_t i = 0; i < slots; i++) {
			uint64_t h = b->t[i].h;

			keep[n] = b->t[i];
			n += (h != 0) & ((h & drop) == 0);
		}
		memset(b->t, 0, slots * sizeof(*b->t));
		ws_insert_slots(b, keep, n);
		free(keep);
		b->n = n;
		return 0;
	}
	b->t = ws_alloc(ncap);
	if (!b->t) {
		b->t = ot;
		return -ENOMEM;
	}
	ws_set_cap(b, ncap); /* from here on, b is the new table: ws_insert_slots puts there */
	/* a few slots at a time: gather the used ones without a branch, then insert them */
	for (uint64_t i = 0; i < slots; i += WS_REBUILD_RUN) {
		struct ws_slot run[WS_REBUILD_RUN];
		uint64_t k = 0, end = i + WS_REBUILD_RUN < slots ? i + WS_REBUILD_RUN : slots;

		for (uint64_t j = i; j < end; j++) {
			uint64_t h = ot[j].h;

			run[k] = ot[j];
			k += (h != 0) & ((h & drop) == 0);
		}
		ws_insert_slots(b, run, k);
		n += k;
	}
	ws_free(ot, ocap);
	b->n = n;
	return 0;
}

int ws_put_slow(struct blockset *b, uint64_t h, int dir, uint64_t i)
{
	for (;;) {
		struct ws_slot *sl = &b->t[i];

		if (sl->h == h) {
			sl->r += dir == DIR_READ;
			sl->w += dir != DIR_READ;
			return 0;
		}
		if (!sl->h)
			break;
		i = ws_next(i, b->cap);
	}
	if (b->n + 1 > b->limit) {
		/* full: halve the sampling rate until there is room again */
		while (b->n + 1 > b->limit) {
			if (b->level >= 63)
				return 0;
			/* more than the limit at this level when the new block is kept at it too */
			b->level_proved = !(b->level && (h >> (64 - b->level)));
			b->level++;
			int err = ws_rebuild(b, b->cap);

			if (err)
				return err;
		}
		return ws_put(b, h, dir);
	}
	if ((b->n + 1) * 2 > b->cap) {
		int err = ws_rebuild(b, b->cap * 2);

		if (err)
			return err;
		return ws_put(b, h, dir);
	}
	b->t[i].h = h;
	b->t[i].r = dir == DIR_READ;
	b->t[i].w = dir != DIR_READ;
	b->n++;
	return 0;
}

#if WS_AVX2
/* ws_match4 with the four hashes in one AVX2 register: one compare for the hits, one for the
 * empty slots (SSE2 needs two each, and two more to make 64-bit equality from 32-bit). */
__attribute__((target("avx2"))) static inline void ws_match4_avx2(const struct ws_slot *t,
								  uint64_t h, unsigned int *hit,
								  unsigned int *emp)
{
	__m256i s01 = _mm256_loadu_si256((const __m256i *)t);	  /* h0 c0 h1 c1 */
	__m256i s23 = _mm256_loadu_si256((const __m256i *)t + 1); /* h2 c2 h3 c3 */
	__m256i hs = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(s01, s23),
					      _MM_SHUFFLE(3, 1, 2, 0)); /* h0 h1 h2 h3 */

	*hit = (unsigned int)_mm256_movemask_pd(
		_mm256_castsi256_pd(_mm256_cmpeq_epi64(hs, _mm256_set1_epi64x((long long)h))));
	*emp = (unsigned int)_mm256_movemask_pd(
		_mm256_castsi256_pd(_mm256_cmpeq_epi64(hs, _mm256_setzero_si256())));
}

/*
 * The queued puts of a block (stats__add_batch), probing with AVX2: a function of its own
 * built for AVX2 and nothing more (not x86-64-v3, whose BMI2 a CPU can lack while it has
 * AVX2), called when the CPU has it (stats.ws_avx2) from either clone of the caller.
 */
__attribute__((target("avx2"), noinline)) int
ws_put_queued_avx2(struct blockset *b, const uint64_t *hash, const uint64_t *keys,
		   const uint16_t *pend, uint32_t np)
{
	for (uint32_t k = 0; k < np; k++) {
		/* the sample is tested again: the level may have risen since the key was queued */
		uint64_t h = hash[pend[k]], i = ws_home(b, h);
		unsigned int hit, emp;

		if (b->level && (h >> (64 - b->level)))
			continue;
		ws_match4_avx2(b->t + i, h, &hit, &emp);
		int err = ws_put_masks(b, h, (int)(keys[pend[k]] >> 63), i, hit, emp);

		if (err)
			return err;
	}
	return 0;
}
#endif

/*
 * Adds n slots of another table (another slice's blocks, counts summed per block) and
 * accesses. Keeps the sample at least at `level` and raises it until the blocks fit the
 * limit; a rise here is proved (more blocks than the limit one level lower).
 */
int ws_merge(struct blockset *b, const struct ws_slot *sl, uint64_t n, unsigned int level,
	     bool proved, uint64_t accesses)
{
	int err;

	if (level > b->level || (level == b->level && proved))
		b->level_proved = proved || (level == b->level && b->level_proved);
	if (level > b->level) {
		b->level = level;
		if ((err = ws_rebuild(b, b->cap)))
			return err;
	}
	b->accesses += accesses;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t h = sl[k].h, i;

		if (b->level && (h >> (64 - b->level)))
			continue;
		for (i = ws_home(b, h); b->t[i].h && b->t[i].h != h; i = ws_next(i, b->cap))
			;
		if (b->t[i].h) {
			b->t[i].r += sl[k].r;
			b->t[i].w += sl[k].w;
			continue;
		}
		if ((b->n + 1) * 2 > b->cap) {
			if ((err = ws_rebuild(b, b->cap * 2)))
				return err;
			k--; /* again, in the larger table */
			continue;
		}
		b->t[i] = sl[k];
		b->n++;
	}
	while (b->n > b->limit && b->level < 63) {
		b->level++;
		b->level_proved = true;
		if ((err = ws_rebuild(b, b->cap)))
			return err;
	}
	return 0;
}

/* Appends edges of another slice (they are sums: order does not matter). 0 or -ENOMEM. */
int ws_merge_edges(struct blockset *b, const struct ws_edge *e, uint64_t n, uint64_t put)
{
	if (!n) {
		b->edges_put += put;
		return 0;
	}
	if (b->nedges + n > b->edges_cap) {
		struct ws_edge *ne = realloc(b->edges, (b->nedges + n) * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		b->edges = ne;
		b->edges_cap = b->nedges + n;
	}
	memcpy(b->edges + b->nedges, e, n * sizeof(*e));
	b->nedges += n;
	b->edges_put += put;
	return 0;
}

/* ---- large I/Os: extents as edges, exact, merged with the table at the end ---- */

#define WS_EDGES_INITIAL 1024u
#define WS_KEY_DEV_MASK ((1ull << (64 - WS_KEY_BLOCK_BITS)) - 1) /* dev bits a key keeps */
_Static_assert(STATS_WS_EDGES_MAX >= WS_EDGES_INITIAL, "edge table sizes");

static int edge_cmp(const void *a, const void *b)
{
	const struct ws_edge *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

/* Sorts the edges and sums those at the same position; edges that cancel out go. */
static void ws_edges_compact(struct blockset *b)
{
	uint64_t n = 0;

	qsort(b->edges, b->nedges, sizeof(*b->edges), edge_cmp);
	for (uint64_t i = 0; i < b->nedges; i++) {
		const struct ws_edge *e = &b->edges[i];

		if (n && b->edges[n - 1].dev == e->dev && b->edges[n - 1].block == e->block) {
			b->edges[n - 1].dr += e->dr;
			b->edges[n - 1].dw += e->dw;
		} else {
			b->edges[n++] = *e;
		}
		if (!b->edges[n - 1].dr && !b->edges[n - 1].dw)
			n--;
	}
	b->nedges = n;
}

/*
 * Room for the four edges of one more extent: compacts when full, and grows when that left
 * more than half; at STATS_WS_EDGES_MAX (or without memory) stops taking extents.
 */
static void ws_edges_room(struct blockset *b)
{
	if (b->edges_full || b->nedges + 4 <= b->edges_cap)
		return;
	if (b->edges_cap)
		ws_edges_compact(b);
	if (b->nedges + 4 > b->edges_cap / 2) {
		uint64_t cap = b->edges_cap ? b->edges_cap * 2 : WS_EDGES_INITIAL;
		struct ws_edge *e = cap <= STATS_WS_EDGES_MAX
					    ? realloc(b->edges, cap * sizeof(*b->edges))
					    : NULL;

		if (!e) { /* more than half full for good: compacting again would not pay */
			b->edges_full = true;
			return;
		}
		b->edges = e;
		b->edges_cap = cap;
	}
}

static void ws_edge_put(struct blockset *b, uint32_t dev, uint64_t block, int dir, int64_t d)
{
	struct ws_edge *e = &b->edges[b->nedges++];

	b->edges_put++;
	e->dev = dev;
	e->block = block;
	e->dr = dir == DIR_READ ? d : 0;
	e->dw = dir == DIR_READ ? 0 : d;
}

/*
 * Blocks b0..b1 of device dev accessed once: two edges, in the table's key space (a range
 * that crosses a multiple of 2^44 blocks is cut there, as the keys wrap). False when the
 * edges are full: the caller counts the blocks one by one then.
 */
bool ws_large(struct blockset *b, uint32_t dev, uint64_t b0, uint64_t b1, int dir)
{
	const uint64_t kmask = (1ull << WS_KEY_BLOCK_BITS) - 1;
	const uint32_t kdev = (uint32_t)(dev & WS_KEY_DEV_MASK);

	if ((b1 >> WS_KEY_BLOCK_BITS) - (b0 >> WS_KEY_BLOCK_BITS) > 1)
		return false; /* longer than a format's extent can be: no room for its pieces */
	ws_edges_room(b);
	if (b->edges_full)
		return false;
	b->accesses += b1 - b0 + 1;
	for (uint64_t lo = b0;;) {
		uint64_t hi = (lo | kmask) < b1 ? lo | kmask : b1;

		ws_edge_put(b, kdev, lo & kmask, dir, 1);
		ws_edge_put(b, kdev, (hi & kmask) + 1, dir, -1);
		if (hi == b1)
			return true;
		lo = hi + 1;
	}
}

/* Block counts by access count, weighted (a sampled block stands for 2^level). */
#define WS_HIST_SMALL 4096u

struct ws_hbig {
	uint64_t c;
	__int128 w;
};

struct ws_hist {
	__int128 *cnt;	     /* weight of the blocks with count c < WS_HIST_SMALL */
	struct ws_hbig *big; /* the others: (count, weight) */
	uint64_t nbig, capbig;
};

static int ws_hist_add(struct ws_hist *h, uint64_t c, __int128 w)
{
	if (c < WS_HIST_SMALL) {
		h->cnt[c] += w;
		return 0;
	}
	if (h->nbig == h->capbig) {
		uint64_t cap = h->capbig ? h->capbig * 2 : 256;
		struct ws_hbig *nb = realloc(h->big, cap * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		h->big = nb;
		h->capbig = cap;
	}
	h->big[h->nbig].c = c;
	h->big[h->nbig++].w = w;
	return 0;
}

static int hbig_desc(const void *a, const void *b)
{
	const struct ws_hbig *x = a, *y = b;

	return x->c > y->c ? -1 : x->c < y->c;
}

/* The counts (R, W) that the extents give block blk of device dev (edges prefix-summed). */
static void ws_edges_at(const struct blockset *b, uint32_t dev, uint64_t blk, int64_t *R,
			int64_t *W)
{
	uint64_t lo = 0, hi = b->nedges; /* the last edge at or before (dev, blk): index lo - 1 */

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct ws_edge *e = &b->edges[mid];

		if (e->dev < dev || (e->dev == dev && e->block <= blk))
			lo = mid + 1;
		else
			hi = mid;
	}
	*R = *W = 0;
	if (lo && b->edges[lo - 1].dev == dev) {
		*R = b->edges[lo - 1].dr;
		*W = b->edges[lo - 1].dw;
	}
}

/*
 * ws_finish with large I/Os: the blocks the extents cover are counted exactly from the edges,
 * the table's blocks (all of them, or a 1/2^level sample) are looked up in them and add what
 * the extents do not already count, each standing for 2^level blocks. With every block in the
 * table (level 0) this is exactly what counting the large I/Os block by block gives.
 */
static void ws_finish_edges(struct blockset *b, struct ws_result *r)
{
	const uint64_t kmask = (1ull << WS_KEY_BLOCK_BITS) - 1;
	const __int128 wt = (__int128)1 << b->level;
	struct ws_hist h = {0};
	uint64_t seg_b = 0, seg_r = 0, seg_w = 0, seg_rw = 0;
	uint64_t t_b = 0, t_r = 0, t_w = 0, t_rw = 0; /* table blocks (sampled), what they add */
	__int128 tot = 0, sum = 0;
	int64_t R = 0, W = 0;

	memset(r, 0, sizeof(*r));
	ws_edges_compact(b);
	h.cnt = calloc(WS_HIST_SMALL, sizeof(*h.cnt));
	if (!h.cnt)
		return;
	/* prefix sums: each edge holds the counts up to the next one (0 after a device's last) */
	for (uint64_t i = 0; i < b->nedges; i++) {
		struct ws_edge *e = &b->edges[i];

		R += e->dr;
		W += e->dw;
		e->dr = R;
		e->dw = W;
		if (!R && !W)
			continue;
		uint64_t len = b->edges[i + 1].block - e->block; /* R, W > 0: not the last edge */

		seg_b += len;
		seg_r += R > 0 ? len : 0;
		seg_w += W > 0 ? len : 0;
		seg_rw += R > 0 && W > 0 ? len : 0;
		if (ws_hist_add(&h, (uint64_t)(R + W), len))
			goto cleanup;
	}
	for (uint64_t i = 0; i < b->cap + WS_PAD; i++) {
		const struct ws_slot *sl = &b->t[i];

		if (!sl->h)
			continue;
		uint64_t key = unmix64(sl->h) - 1, c = (uint64_t)sl->r + sl->w;

		ws_edges_at(b, (uint32_t)(key >> WS_KEY_BLOCK_BITS), key & kmask, &R, &W);
		if (!R && !W) {
			t_b++;
			t_r += sl->r > 0;
			t_w += sl->w > 0;
			t_rw += sl->r > 0 && sl->w > 0;
			if (ws_hist_add(&h, c, wt))
				goto cleanup;
			continue;
		}
		/* an extent's block the smaller I/Os touched too: its count and directions grow */
		t_r += !R && sl->r;
		t_w += !W && sl->w;
		t_rw += (R || sl->r) && (W || sl->w) && !(R && W);
		if (ws_hist_add(&h, (uint64_t)(R + W), -wt) ||
		    ws_hist_add(&h, (uint64_t)(R + W) + c, wt))
			goto cleanup;
	}
	double scale = ldexp(1.0, (int)b->level);

	r->valid = true;
	r->estimated = b->level > 0;
	r->sample_rate = 1.0 / scale;
	r->blocks = seg_b + (uint64_t)llround((double)t_b * scale);
	r->blocks_read = seg_r + (uint64_t)llround((double)t_r * scale);
	r->blocks_written = seg_w + (uint64_t)llround((double)t_w * scale);
	r->blocks_both = seg_rw + (uint64_t)llround((double)t_rw * scale);
	/*
	 * Only the table's part is sampled: t sampled blocks estimate t * 2^level with a standard
	 * error of 2^level * sqrt((1 - p) * t). The largest of the four, relative to its figure.
	 */
	const uint64_t tv[4] = {t_b, t_r, t_w, t_rw};
	const uint64_t fv[4] = {r->blocks, r->blocks_read, r->blocks_written, r->blocks_both};

	for (int k = 0; k < 4 && b->level; k++) {
		double e = fv[k] ? 3.0 * scale * sqrt((1.0 - r->sample_rate) * (double)tv[k]) /
					   (double)fv[k]
				 : 0;

		r->rel_error = e > r->rel_error ? e : r->rel_error;
	}
	r->accesses = b->accesses;
	/* hottest first: the big counts (sorted descending, equal ones summed), then the rest */
	if (h.nbig)
		qsort(h.big, h.nbig, sizeof(*h.big), hbig_desc);
	uint64_t nb = 0;

	for (uint64_t i = 0; i < h.nbig; i++) {
		if (nb && h.big[nb - 1].c == h.big[i].c)
			h.big[nb - 1].w += h.big[i].w;
		else
			h.big[nb++] = h.big[i];
	}
	h.nbig = nb;
	for (uint64_t i = 0; i < h.nbig; i++) {
		h.big[i].w = h.big[i].w > 0 ? h.big[i].w : 0; /* a sample's overlap can overshoot */
		tot += h.big[i].w;
		sum += h.big[i].w * (__int128)h.big[i].c;
	}
	for (uint64_t c = 1; c < WS_HIST_SMALL; c++) {
		h.cnt[c] = h.cnt[c] > 0 ? h.cnt[c] : 0;
		tot += h.cnt[c];
		sum += h.cnt[c] * (__int128)c;
	}
	if (!tot || !sum)
		goto cleanup;
	static const double fr[4] = {0.01, 0.10, 0.20, 0.50};

	for (int k = 0; k < 4; k++) {
		__int128 want = (__int128)ceil(fr[k] * (double)tot), taken = 0, acc = 0;

		for (uint64_t i = 0; i < h.nbig && taken < want; i++) {
			__int128 take = h.big[i].w < want - taken ? h.big[i].w : want - taken;

			acc += take * (__int128)h.big[i].c;
			taken += take;
		}
		for (uint64_t c = WS_HIST_SMALL - 1; c > 0 && taken < want; c--) {
			__int128 take = h.cnt[c] < want - taken ? h.cnt[c] : want - taken;

			acc += take * (__int128)c;
			taken += take;
		}
		r->hot[k] = (double)acc / (double)sum;
	}
cleanup:
	free(h.cnt);
	free(h.big);
}

void ws_finish(struct blockset *b, struct ws_result *r)
{
	uint64_t nr = 0, nw = 0, nb = 0, sum = 0;
	const uint32_t small = 4096;
	uint64_t *cnt = calloc(small, sizeof(*cnt));
	uint64_t *big = NULL, nbig = 0;

	memset(r, 0, sizeof(*r));
	if (b->nedges) {
		free(cnt);
		ws_finish_edges(b, r);
		return;
	}
	if (!cnt)
		return;
	for (uint64_t i = 0; i < b->cap + WS_PAD; i++) {
		const struct ws_slot *sl = &b->t[i];

		/* an empty slot has r = w = 0 and adds nothing (but cnt[0]): no branch */
		nr += sl->r > 0;
		nw += sl->w > 0;
		nb += (sl->r > 0) & (sl->w > 0);
		uint64_t c = (uint64_t)sl->r + sl->w;

		sum += c;
		if (c < small) {
			cnt[c]++;
		} else {
			uint64_t *nbg = realloc(big, (nbig + 1) * sizeof(*big));

			if (!nbg)
				goto cleanup;
			big = nbg;
			big[nbig++] = c;
		}
	}
	double scale = ldexp(1.0, (int)b->level);

	r->valid = true;
	r->estimated = b->level > 0;
	r->sample_rate = 1.0 / scale;
	r->rel_error = b->level && b->n ? 3.0 * sqrt((1.0 - r->sample_rate) / (double)b->n) : 0;
	r->blocks = (uint64_t)llround((double)b->n * scale);
	r->blocks_read = (uint64_t)llround((double)nr * scale);
	r->blocks_written = (uint64_t)llround((double)nw * scale);
	r->blocks_both = (uint64_t)llround((double)nb * scale);
	r->accesses = b->accesses;
	if (!b->n || !sum)
		goto cleanup;
	/* hottest first: the big counts (sorted descending), then the small ones */
	for (uint64_t i = 1; i < nbig; i++) {
		uint64_t v = big[i], j = i;

		for (; j > 0 && big[j - 1] < v; j--)
			big[j] = big[j - 1];
		big[j] = v;
	}
	static const double fr[4] = {0.01, 0.10, 0.20, 0.50};

	for (int k = 0; k < 4; k++) {
		uint64_t want = (uint64_t)ceil(fr[k] * (double)b->n), taken = 0, acc = 0;

		for (uint64_t i = 0; i < nbig && taken < want; i++, taken++)
			acc += big[i];
		for (uint64_t c = small - 1; c > 0 && taken < want; c--) {
			uint64_t take = cnt[c] < want - taken ? cnt[c] : want - taken;

			acc += take * c;
			taken += take;
		}
		r->hot[k] = (double)acc / (double)sum;
	}
cleanup:
	free(cnt);
	free(big);
}
