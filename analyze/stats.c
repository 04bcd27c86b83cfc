// SPDX-License-Identifier: GPL-2.0-only
/* The analyzer's statistics core (see stats.h and docs/ANALYSIS.md). */
#include "stats.h"
#include "hot_clones.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
/* an AVX2 probe of the working-set table, picked at run time (ws_put_queued_avx2): gcc and
 * clang on x86-64 (target("avx2") is gcc 4.9 and clang 3.8 on) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BIOTAPE_NO_CLONES)
#define WS_AVX2 1
#include <immintrin.h>
#else
#define WS_AVX2 0
#endif

#define SECTOR 512ull
#define TL_INITIAL_INTERVAL_NS 1000000000ull
#define HEAT_INITIAL_TSHIFT 20 /* 2^20 ns ~ 1 ms columns to start with */
#define WS_INITIAL_CAP 4096ull
#define WS_KEY_BLOCK_BITS 44

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
 * The steps of mix64 on x, a uint64_t or a vector of them (GCC vector types take the same
 * operators lane by lane): one definition for the scalar hash and the four-lane one, which
 * must agree because the working-set table stores these hashes.
 */
#define MIX64_STEPS(x)                      \
	do {                                \
		(x) ^= (x) >> 30;           \
		(x) *= 0xbf58476d1ce4e5b9ull; \
		(x) ^= (x) >> 27;           \
		(x) *= 0x94d049bb133111ebull; \
		(x) ^= (x) >> 31;           \
	} while (0)

static inline uint64_t mix64(uint64_t x)
{
	MIX64_STEPS(x);
	return x;
}

/* Index into a small power-of-two table (2^bits slots): Fibonacci hashing, one multiply. */
static inline uint32_t fib_index(uint64_t x, unsigned int bits)
{
	return (uint32_t)((x * 0x9e3779b97f4a7c15ull) >> (64 - bits));
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

static inline void autorange_add(struct autorange *r, uint64_t v, uint64_t n)
{
	while ((v >> r->shift) >= r->nbins) {
		for (uint32_t i = 0; i < r->nbins / 2; i++)
			r->bins[i] = r->bins[2 * i] + r->bins[2 * i + 1];
		memset(r->bins + r->nbins / 2, 0, r->nbins / 2 * sizeof(*r->bins));
		r->width <<= 1;
		r->shift++;
	}
	r->bins[v >> r->shift] += n;
}

/* Bits needed for b (0 for 0): the log2 size bin. */
static inline unsigned int size_bin(uint64_t b)
{
	return b ? 64 - (unsigned int)__builtin_clzll(b) : 0;
}

/*
 * Counts one I/O of this size: in the exact table, or, when it is full, straight into the
 * log2 bins (the exact table's sizes go there at finish: size_log2 is complete after it).
 */
static inline void size_add(struct opstat *o, uint64_t size)
{
	const uint32_t mask = 2 * STATS_SIZE_EXACT_MAX - 1;
	uint32_t i = fib_index(size, SIZE_TABLE_BITS);

	for (;;) {
		struct size_slot *sl = &o->sizes[i];

		if (sl->n && sl->size == size) {
			sl->n++;
			return;
		}
		if (!sl->n) {
			if (o->nsizes >= STATS_SIZE_EXACT_MAX) {
				o->n_size_other++;
				o->size_log2[size_bin(size)]++;
				return;
			}
			sl->size = size;
			sl->n = 1;
			o->nsizes++;
			return;
		}
		i = (i + 1) & mask;
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
/* working set: hash-sampled block set (exact until the limit, then 1/2^level sampling)   */

/*
 * The table is the one large random-access structure: big tables are mmap()ed with
 * MADV_HUGEPAGE so that probes do not also miss the TLB (measured: ~2x faster analysis).
 */
#define WS_MMAP_MIN_BYTES (2u << 20)

/*
 * Slots: cap (a power of two: home slot = h & (cap - 1)) plus WS_PAD, so that the four slots
 * from any home are in the table; probing wraps at cap + WS_PAD. A slot holds the block's
 * hash, not its key (mix64 is a bijection and maps only 0 to 0): a rebuild needs no rehash.
 */
#define WS_PAD 3
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

/* The table's size, and the count at which a new block first rebuilds: the limit, or half. */
static void ws_set_cap(struct blockset *b, uint64_t cap)
{
	b->cap = cap;
	b->room = b->limit < cap / 2 ? b->limit : cap / 2;
}

static int ws_init(struct blockset *b, uint64_t limit)
{
	b->limit = limit;
	ws_set_cap(b, WS_INITIAL_CAP);
	b->t = ws_alloc(b->cap);
	return b->t ? 0 : -ENOMEM;
}

static inline uint64_t ws_next(uint64_t i, uint64_t cap)
{
	return i + 1 < cap + WS_PAD ? i + 1 : 0;
}

static void ws_insert_slot(struct ws_slot *t, uint64_t cap, const struct ws_slot *e)
{
	uint64_t i = e->h & (cap - 1);

	while (t[i].h)
		i = ws_next(i, cap);
	t[i] = *e;
}

/*
 * Rebuilds into ncap slots, keeping only entries that pass the current level. At the same
 * size (the sampling level rose: about half the entries go) the table is reused: survivors
 * are set aside, the table cleared and they go back in. Peak memory is the table plus the
 * survivors, not two tables, and no fresh pages are faulted in.
 */
static int ws_rebuild(struct blockset *b, uint64_t ncap)
{
	struct ws_slot *nt, *keep;
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
		for (uint64_t i = 0; i < n; i++)
			ws_insert_slot(b->t, b->cap, &keep[i]);
		free(keep);
		b->n = n;
		return 0;
	}
	nt = ws_alloc(ncap);
	if (!nt)
		return -ENOMEM;
	/* a few slots at a time: gather the used ones without a branch, then insert them */
	for (uint64_t i = 0; i < slots; i += WS_REBUILD_RUN) {
		struct ws_slot run[WS_REBUILD_RUN];
		uint64_t k = 0, end = i + WS_REBUILD_RUN < slots ? i + WS_REBUILD_RUN : slots;

		for (uint64_t j = i; j < end; j++) {
			uint64_t h = b->t[j].h;

			run[k] = b->t[j];
			k += (h != 0) & ((h & drop) == 0);
		}
		for (uint64_t j = 0; j < k; j++)
			ws_insert_slot(nt, ncap, &run[j]);
		n += k;
	}
	ws_free(b->t, b->cap);
	b->t = nt;
	ws_set_cap(b, ncap);
	b->n = n;
	return 0;
}

static inline void ws_prefetch_slot(const struct ws_slot *sl)
{
#if defined(__x86_64__)
	/* gcc 12 dropped __builtin_prefetch here (seen in the object code): say it in asm */
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)sl));
#else
	__builtin_prefetch(sl, 0, 3);
#endif
}

/* The table is full (limit) or half full (cap): rebuild, then put h. */
static int ws_put(struct blockset *b, uint64_t h, int dir);

static int ws_put_slow(struct blockset *b, uint64_t h, int dir, uint64_t i)
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

/* Bit k of *hit: slot t[k] holds h; of *emp: t[k] is empty (k < 4). No branch. */
static inline void ws_match4(const struct ws_slot *t, uint64_t h, unsigned int *hit,
			     unsigned int *emp)
{
#if defined(__SSE2__)
	_Static_assert(sizeof(struct ws_slot) == 16, "one slot per SSE register");
	const __m128i *p = (const __m128i *)t;
	__m128i h01 = _mm_unpacklo_epi64(_mm_loadu_si128(p), _mm_loadu_si128(p + 1));
	__m128i h23 = _mm_unpacklo_epi64(_mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3));
	__m128i want = _mm_set1_epi64x((long long)h), zero = _mm_setzero_si128();
	/* 64-bit equality from 32-bit: both halves equal */
#define EQ64(a, b)                                                                          \
	({                                                                                  \
		__m128i c_ = _mm_cmpeq_epi32(a, b);                                         \
		_mm_castsi128_pd(                                                           \
			_mm_and_si128(c_, _mm_shuffle_epi32(c_, _MM_SHUFFLE(2, 3, 0, 1)))); \
	})
	int hit01 = _mm_movemask_pd(EQ64(h01, want)), hit23 = _mm_movemask_pd(EQ64(h23, want));
	int emp01 = _mm_movemask_pd(EQ64(h01, zero)), emp23 = _mm_movemask_pd(EQ64(h23, zero));

	*hit = (unsigned int)(hit01 | hit23 << 2);
	*emp = (unsigned int)(emp01 | emp23 << 2);
#undef EQ64
#else
	*hit = *emp = 0;
	for (unsigned int k = 0; k < 4; k++) {
		*hit |= (unsigned int)(t[k].h == h) << k;
		*emp |= (unsigned int)(t[k].h == 0) << k;
	}
#endif
}

/*
 * Counts an access of the block with hash h, if the sample keeps it. The four slots from its
 * home are looked at together: the block is in the first that holds it or is empty (linear
 * probing), and which one, and whether it is new, is random: no branch on either. ws_put
 * finds them with ws_match4, ws_put_masks takes them from there.
 */
static inline __attribute__((always_inline)) int ws_put_masks(struct blockset *b, uint64_t h,
							       int dir, uint64_t i,
							       unsigned int hit,
							       unsigned int emp)
{
	struct ws_slot *t = b->t + i;
	unsigned int stop = hit | emp;

	if (!stop)
		return ws_put_slow(b, h, dir, ws_next(i + 3, b->cap));
	unsigned int j = (unsigned int)__builtin_ctz(stop);
	uint32_t isnew = (emp >> j) & 1, keepc = isnew - 1; /* all ones for a hit */

	if (isnew & (b->n >= b->room)) /* n + 1 > limit, or more than half the slots used */
		return ws_put_slow(b, h, dir, i + j);
	struct ws_slot *sl = t + j;

	sl->h = h;
	sl->r = (sl->r & keepc) + (dir == DIR_READ);
	sl->w = (sl->w & keepc) + (dir != DIR_READ);
	b->n += isnew;
	return 0;
}

static inline __attribute__((always_inline)) int ws_put(struct blockset *b, uint64_t h, int dir)
{
	if (b->level && (h >> (64 - b->level)))
		return 0;
	uint64_t i = h & (b->cap - 1);
	unsigned int hit, emp;

	ws_match4(b->t + i, h, &hit, &emp);
	return ws_put_masks(b, h, dir, i, hit, emp);
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
__attribute__((target("avx2"), noinline)) static int
ws_put_queued_avx2(struct blockset *b, const uint64_t *hash, const uint64_t *keys,
		   const uint16_t *pend, uint32_t np)
{
	for (uint32_t k = 0; k < np; k++) {
		/* the sample is tested again: the level may have risen since the key was queued */
		uint64_t h = hash[pend[k]], i = h & (b->cap - 1);
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

static inline int ws_add(struct blockset *b, uint64_t key, int dir)
{
	b->accesses++;
	return ws_put(b, mix64(key), dir);
}

/* ---- large I/Os: extents as edges, exact, merged with the table at the end ---- */

#define WS_EDGES_INITIAL 1024u
#define WS_KEY_DEV_MASK ((1ull << (64 - WS_KEY_BLOCK_BITS)) - 1) /* dev bits a key keeps */
_Static_assert(STATS_WS_EDGES_MAX >= WS_EDGES_INITIAL, "edge table sizes");

/* The inverse of mix64 (each step of it is invertible): a table slot's hash back to its key. */
static inline uint64_t unmix64(uint64_t x)
{
	x ^= x >> 31 ^ x >> 62;
	x *= 0x319642b2d24d8ec3ull;
	x ^= x >> 27 ^ x >> 54;
	x *= 0x96de1b173f119089ull;
	x ^= x >> 30 ^ x >> 60;
	return x;
}

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
static bool ws_large(struct blockset *b, uint32_t dev, uint64_t b0, uint64_t b1, int dir)
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

static void ws_finish(struct blockset *b, struct ws_result *r)
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
	if (s->devs)
		for (uint32_t i = 0; i < STATS_MAX_DEVICES; i++)
			dev_free(&s->devs[i]);
	free(s->devs);
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
	}
	ws_free(s->ws.t, s->ws.cap);
	free(s->ws.edges);
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
		*err = dev_init(d);
		if (*err)
			return NULL;
	}
	return d;
}

static struct acc *get_proc_slow(struct stats *s, const struct btape_event *ev)
{
	const uint32_t mask = 2 * STATS_MAX_PROCS - 1;
	uint32_t i = fib_index(ev->pid, PROC_TABLE_BITS);

	for (;;) {
		struct procstat *p = &s->procs[i];

		if (p->used && p->pid == ev->pid) {
			s->pcache[ev->pid & 15] = p;
			return &p->acc;
		}
		if (!p->used) {
			if (s->nprocs >= STATS_MAX_PROCS) {
				s->proc_other_n_procs++;
				return &s->proc_other;
			}
			p->used = true;
			p->pid = ev->pid;
			if ((ev->present & BTAPE_HAS_COMM) && ev->comm)
				snprintf(p->comm, sizeof(p->comm), "%s", ev->comm);
			s->nprocs++;
			s->pcache[ev->pid & 15] = p;
			return &p->acc;
		}
		i = (i + 1) & mask;
	}
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
		*d = m;
	}
	memset(s->tl + STATS_TL_MAX_ROWS / 2, 0, STATS_TL_MAX_ROWS / 2 * sizeof(*s->tl));
	s->tl_interval *= 2;
	s->tl_rows = (s->tl_rows + 1) / 2;
}

/* Widens the heat map's columns or rows until (t, sector) fits. */
static void heat_rescale(struct devstat *d, uint64_t t, uint64_t sector)
{
	while ((t >> d->heat_tshift) >= STATS_HEAT_T) {
		for (int l = 0; l < STATS_HEAT_L; l++) {
			uint32_t *row = d->heat + l * STATS_HEAT_T;

			for (int c = 0; c < STATS_HEAT_T / 2; c++)
				row[c] = row[2 * c] + row[2 * c + 1];
			memset(row + STATS_HEAT_T / 2, 0, STATS_HEAT_T / 2 * sizeof(*row));
		}
		d->heat_tw *= 2;
		d->heat_tshift++;
	}
	while ((sector >> d->heat_lshift) >= STATS_HEAT_L) {
		for (int l = 0; l < STATS_HEAT_L / 2; l++)
			for (int c = 0; c < STATS_HEAT_T; c++)
				d->heat[l * STATS_HEAT_T + c] =
					d->heat[2 * l * STATS_HEAT_T + c] +
					d->heat[(2 * l + 1) * STATS_HEAT_T + c];
		memset(d->heat + STATS_HEAT_L / 2 * STATS_HEAT_T, 0,
		       STATS_HEAT_L / 2 * STATS_HEAT_T * sizeof(*d->heat));
		d->heat_lw *= 2;
		d->heat_lshift++;
	}
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

/* The I/O [off, end) in stream st: locality against the previous one (bytes), then the end. */
static inline __attribute__((always_inline)) void stream_add(struct stream *st, uint64_t off,
							      uint64_t end, uint64_t near)
{
	if (st->has_last) {
		int64_t dist = (int64_t)(off - st->last_end);
		uint64_t sgn = (uint64_t)(dist >> 63);
		uint64_t ad = ((uint64_t)dist ^ sgn) - sgn; /* |dist|, no branch */

		st->near += ad <= near; /* n and seq come from the bins (stats__finish) */
		st->seek[seek_bin(dist)]++;
	}
	st->has_last = true;
	st->last_end = end;
}

int64_t stats_seek_bin_lo(unsigned int bin)
{
	if (bin == SEEK_BIN_ZERO)
		return 0;
	if (bin > SEEK_BIN_ZERO)
		return (int64_t)(1ull << (bin - 65 < 63 ? bin - 65 : 62));
	unsigned int k = SEEK_BIN_ZERO - bin;

	return -(int64_t)(1ull << (k - 1 < 62 ? k - 1 : 62));
}

/* Everything of stats__add but the working set (see ws_event and stats__add_batch). */
static inline int add_core(struct stats *s, const struct btape_event *ev)
{
	int err = 0;
	unsigned int op = ev->op < BTAPE_OP__COUNT ? ev->op : BTAPE_OP_OTHER;
	int dir = DIR_OF[op];
	uint64_t issue = ev->issue_ns;

	if (!s->nadd) {
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
	if (dir >= 0 && ev->bytes) {
		struct stream *st = &d->streams[dir];
		uint64_t off = ev->sector * SECTOR;

		stream_add(st, off, off + ev->bytes, s->o.near_seq_bytes);
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

	if (dir >= 0) {
		r->n_dir[dir]++;
		r->bytes_dir[dir] += ev->bytes;
	} else {
		r->n_other++;
	}
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

/* The working-set part of one event, directly (no prefetch). */
static int ws_event(struct stats *s, const struct btape_event *ev)
{
	uint64_t b0, b1;
	int dir;

	if (!ws_range(ev, &dir, &b0, &b1))
		return 0;
	if (b1 - b0 >= STATS_WS_LARGE_BLOCKS && ws_large(&s->ws, ev->dev, b0, b1, dir))
		return 0;
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


static inline void ws_prefetch_put(const struct blockset *b, uint64_t h)
{
	const struct ws_slot *sl = &b->t[h & (b->cap - 1)];

	ws_prefetch_slot(sl);	  /* ws_put reads four slots from the home one: */
	ws_prefetch_slot(sl + 3); /* they may span two cache lines */
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

			stream_add(st, off, end, near);
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
	for (uint32_t i = 0; i < 2 * STATS_MAX_PROCS; i++)
		if (s->procs[i].used)
			acc_finish(&s->procs[i].acc, s->complete_windows);
	for (int op = 0; op < BTAPE_OP__COUNT; op++) {
		struct opstat *o = &s->ops[op];

		for (uint32_t i = 0; i < 2 * STATS_SIZE_EXACT_MAX; i++)
			if (o->sizes[i].n)
				o->size_log2[size_bin(o->sizes[i].size)] += o->sizes[i].n;
	}
	ws_finish(&s->ws, &s->wsr);
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
