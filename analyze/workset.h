/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The analyzer's working set (internal to analyze/): distinct 4 KiB blocks in a hash-sampled
 * set (exact until the limit, then 1/2^level sampling), large I/Os kept exactly as extents,
 * and the skew figures derived at the end (workset.c). The structures are in stats.h (struct
 * stats holds a struct blockset). What runs per block access is here, static inline, so that
 * the per-event paths of stats.c (and both of their HOT_CLONES clones) still inline it.
 */
#ifndef BIOTAPE_ANALYZE_WORKSET_H
#define BIOTAPE_ANALYZE_WORKSET_H

#include "stats.h"

#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
/* an AVX2 probe of the working-set table, picked at run time (ws_put_queued_avx2): gcc and
 * clang on x86-64 (target("avx2") is gcc 4.9 and clang 3.8 on) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BIOTAPE_NO_CLONES)
#define WS_AVX2 1
#else
#define WS_AVX2 0
#endif

#define WS_KEY_BLOCK_BITS 44 /* a key: dev << WS_KEY_BLOCK_BITS | block (modulo 2^44), plus 1 */

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

/*
 * Slots: cap (a power of two, 2^(64 - shift)) plus WS_PAD, so that the four slots from any
 * home (ws_home) are in the table; probing wraps at cap + WS_PAD. A slot holds the block's
 * hash, not its key (mix64 is a bijection and maps only 0 to 0): a rebuild computes no hash,
 * only each slot's home in the new table.
 */
#define WS_PAD 3

/* At the start, with the limit on distinct blocks; 0 or -ENOMEM. */
int ws_init(struct blockset *b, uint64_t limit);
void ws_destroy(struct blockset *b);
/* ws_put past the four slots from the home one, or when the table must grow or sample. */
int ws_put_slow(struct blockset *b, uint64_t h, int dir, uint64_t i);
/* Blocks b0..b1 of device dev accessed once, as an extent; false: count them one by one. */
bool ws_large(struct blockset *b, uint32_t dev, uint64_t b0, uint64_t b1, int dir);
/* Parallel analysis (split.c): another slice's blocks and large-I/O edges. 0 or -errno. */
int ws_merge(struct blockset *b, const struct ws_slot *sl, uint64_t n, unsigned int level,
	     bool proved, uint64_t accesses);
int ws_merge_edges(struct blockset *b, const struct ws_edge *e, uint64_t n, uint64_t put);
/* The derived figures (distinct blocks, skew), once after the last access. */
void ws_finish(struct blockset *b, struct ws_result *r);
#if WS_AVX2
/* The queued puts of a block (stats__add_batch): hash[pend[k]], direction in keys[] bit 63. */
__attribute__((target("avx2"), noinline)) int ws_put_queued_avx2(struct blockset *b,
								  const uint64_t *hash,
								  const uint64_t *keys,
								  const uint16_t *pend, uint32_t np);
#endif

static inline uint64_t ws_next(uint64_t i, uint64_t cap)
{
	return i + 1 < cap + WS_PAD ? i + 1 : 0;
}

/*
 * The home slot of hash h in a table of 2^(64 - shift) slots: the top bits of h times the
 * table's odd multiplier, drawn at random in ws_init (multiply-shift: two given hashes share a
 * home with probability at most 2 / cap). h itself has no seed: the sample, the merge of
 * slices and unmix64 need the same h in every process. But mix64 is inverted in a few
 * operations, so with h's low bits as the home (as it was) a trace could pick blocks whose
 * hashes all share one probe chain: 150,000 such 4 KiB reads (a 0.9 MB trace) took 9.1 s to
 * analyse, 0.09 s now, as long as random ones. Tables of two processes place the same h
 * apart. ws_home is the home in table b; every slot is placed by one or the other.
 */
static inline uint64_t ws_home_of(uint64_t h, uint64_t mul, unsigned int shift)
{
	return h * mul >> shift;
}

static inline uint64_t ws_home(const struct blockset *b, uint64_t h)
{
	return ws_home_of(h, b->mul, b->shift);
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
	uint64_t i = ws_home(b, h);
	unsigned int hit, emp;

	ws_match4(b->t + i, h, &hit, &emp);
	return ws_put_masks(b, h, dir, i, hit, emp);
}

static inline int ws_add(struct blockset *b, uint64_t key, int dir)
{
	b->accesses++;
	return ws_put(b, mix64(key), dir);
}

static inline void ws_prefetch_put(const struct blockset *b, uint64_t h)
{
	const struct ws_slot *sl = &b->t[ws_home(b, h)];

	ws_prefetch_slot(sl);	  /* ws_put reads four slots from the home one: */
	ws_prefetch_slot(sl + 3); /* they may span two cache lines */
}

#endif
