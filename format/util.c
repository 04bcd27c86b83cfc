// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libbiotape: op names, flags, metadata helpers, CRC32C, buffers, envelopes, interning. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "btape_internal.h"

const uint8_t btape_file_magic[8] = {0x89, 'B', 'T', 'A', 'P', 'E', '\r', '\n'};
const uint8_t btape_trailer_magic[8] = {'B', 'T', 'A', 'P', 'E', 'E', 'N', 'D'};

/* ---------------------------------------------------------------------------------------- */
/* Ops and flags                                                                            */

static const char *const op_names[BTAPE_OP__COUNT] = {
	[BTAPE_OP_READ] = "read",
	[BTAPE_OP_WRITE] = "write",
	[BTAPE_OP_FLUSH] = "flush",
	[BTAPE_OP_DISCARD] = "discard",
	[BTAPE_OP_SECURE_ERASE] = "secure_erase",
	[BTAPE_OP_WRITE_ZEROES] = "write_zeroes",
	[BTAPE_OP_ZONE_OPEN] = "zone_open",
	[BTAPE_OP_ZONE_CLOSE] = "zone_close",
	[BTAPE_OP_ZONE_FINISH] = "zone_finish",
	[BTAPE_OP_ZONE_APPEND] = "zone_append",
	[BTAPE_OP_ZONE_RESET] = "zone_reset",
	[BTAPE_OP_ZONE_RESET_ALL] = "zone_reset_all",
	[BTAPE_OP_OTHER] = "other",
};

BTAPE_API const char *btape_op_name(unsigned int op)
{
	return op < BTAPE_OP__COUNT ? op_names[op] : "?";
}

BTAPE_API int btape_op_parse(const char *name)
{
	if (!name)
		return -EINVAL;
	for (unsigned int i = 0; i < BTAPE_OP__COUNT; i++)
		if (!strcmp(name, op_names[i]))
			return (int)i;
	return -EINVAL;
}

/* Letter per BTAPE_FLAG_* bit, in bit order. */
static const char flag_letters[] = "SFPMAUONIR";

BTAPE_API const char *btape_flags_str(uint32_t flags, char *buf, size_t len)
{
	size_t n = 0;

	if (!buf || !len)
		return "";
	for (unsigned int i = 0; i < sizeof(flag_letters) - 1 && n + 1 < len; i++)
		if (flags & (1u << i))
			buf[n++] = flag_letters[i];
	buf[n] = '\0';
	return buf;
}

BTAPE_API int btape_flags_parse(const char *s, size_t n, uint32_t *flags)
{
	uint32_t f = 0;

	for (size_t i = 0; i < n; i++) {
		const char *at = s[i] ? strchr(flag_letters, s[i]) : NULL;

		if (!at)
			return -EINVAL;
		f |= 1u << (at - flag_letters);
	}
	*flags = f;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Metadata helpers                                                                         */

BTAPE_API void btape_meta_free(struct btape_meta *meta)
{
	if (!meta)
		return;
	free(meta->devices);
	free(meta->tags);
	meta->devices = NULL;
	meta->tags = NULL;
	meta->ndevices = 0;
	meta->ntags = 0;
}

BTAPE_API int btape_meta_copy(struct btape_meta *dst, const struct btape_meta *src)
{
	struct btape_meta m;

	if (!dst || !src)
		return -EINVAL;
	m = *src;
	m.devices = NULL;
	m.tags = NULL;
	if (src->ndevices) {
		m.devices = malloc(sizeof(*m.devices) * src->ndevices);
		if (!m.devices)
			return -ENOMEM;
		memcpy(m.devices, src->devices, sizeof(*m.devices) * src->ndevices);
	}
	if (src->ntags) {
		m.tags = malloc(sizeof(*m.tags) * src->ntags);
		if (!m.tags) {
			free(m.devices);
			return -ENOMEM;
		}
		memcpy(m.tags, src->tags, sizeof(*m.tags) * src->ntags);
	}
	*dst = m;
	return 0;
}

BTAPE_API int btape_meta_add_device(struct btape_meta *meta, const struct btape_device *dev)
{
	struct btape_device *d;

	if (!meta || !dev)
		return -EINVAL;
	if (meta->ndevices >= BTAPE_DEVICES_MAX)
		return -E2BIG;
	d = realloc(meta->devices, sizeof(*d) * (meta->ndevices + 1));
	if (!d)
		return -ENOMEM;
	meta->devices = d;
	d[meta->ndevices] = *dev;
	d[meta->ndevices].name[BTAPE_NAME_MAX - 1] = '\0';
	d[meta->ndevices].model[BTAPE_NAME_MAX - 1] = '\0';
	return (int)meta->ndevices++;
}

BTAPE_API int btape_meta_add_tag(struct btape_meta *meta, const char *key, const char *value)
{
	struct btape_tag *t;

	if (!meta || !key || !value || strlen(key) >= BTAPE_NAME_MAX ||
	    strlen(value) >= BTAPE_NAME_MAX)
		return -EINVAL;
	if (meta->ntags >= BTAPE_TAGS_MAX)
		return -E2BIG;
	t = realloc(meta->tags, sizeof(*t) * (meta->ntags + 1));
	if (!t)
		return -ENOMEM;
	meta->tags = t;
	memset(&t[meta->ntags], 0, sizeof(*t));
	strcpy(t[meta->ntags].key, key);
	strcpy(t[meta->ntags].value, value);
	meta->ntags++;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* CRC32C (Castagnoli), slice-by-8 in software, SSE4.2 instruction when available.          */

static uint32_t crc_tab[8][256];
static int crc_mode; /* 1 software, 2 hardware */
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & -(c & 1));
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] =
				(crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
	crc_mode = __builtin_cpu_supports("sse4.2") ? 2 : 1;
#else
	crc_mode = 1;
#endif
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= crc;
		crc = crc_tab[7][w & 0xff] ^ crc_tab[6][(w >> 8) & 0xff] ^
		      crc_tab[5][(w >> 16) & 0xff] ^ crc_tab[4][(w >> 24) & 0xff] ^
		      crc_tab[3][(w >> 32) & 0xff] ^ crc_tab[2][(w >> 40) & 0xff] ^
		      crc_tab[1][(w >> 48) & 0xff] ^ crc_tab[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

uint32_t btape_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init);
	crc = ~crc;
#if defined(__x86_64__)
	if (crc_mode == 2)
		return ~crc_hw(crc, buf, len);
#endif
	return ~crc_sw(crc, buf, len);
}

/* ---------------------------------------------------------------------------------------- */
/* Buffers                                                                                  */

int bbuf_reserve(struct bbuf *b, size_t extra)
{
	size_t cap;
	uint8_t *p;

	if (b->len + extra <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int bbuf_put(struct bbuf *b, const void *data, size_t len)
{
	int err = bbuf_reserve(b, len);

	if (err)
		return err;
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

void bbuf_free(struct bbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Envelopes                                                                                */

void btape_env_build(uint8_t env[BTAPE_ENV_SIZE], unsigned int type, uint32_t clen, uint32_t rlen,
		     const void *payload)
{
	put_le32(env, BTAPE_SKIP_ENV);
	put_le32(env + 4, BTAPE_ENV_SIZE - 8);
	env[8] = (uint8_t)type;
	env[9] = 0;
	put_le16(env + 10, 0);
	put_le32(env + 12, clen);
	put_le32(env + 16, rlen);
	put_le32(env + 20, btape_crc32c(0, payload, clen));
	put_le32(env + 24, btape_crc32c(0, env, 24));
}

int btape_env_parse(const uint8_t env[BTAPE_ENV_SIZE], unsigned int *type, uint32_t *clen,
		    uint32_t *rlen, uint32_t *pcrc)
{
	if (get_le32(env) != BTAPE_SKIP_ENV || get_le32(env + 4) != BTAPE_ENV_SIZE - 8)
		return -EBADMSG;
	if (get_le32(env + 24) != btape_crc32c(0, env, 24))
		return -EBADMSG;
	*type = env[8];
	*clen = get_le32(env + 12);
	*rlen = get_le32(env + 16);
	*pcrc = get_le32(env + 20);
	return 0;
}

void btape_header_build(uint8_t h[BTAPE_HEADER_SIZE], uint16_t major, uint16_t minor)
{
	put_le32(h, BTAPE_SKIP_HEADER);
	put_le32(h + 4, BTAPE_HEADER_SIZE - 8);
	memcpy(h + 8, btape_file_magic, 8);
	put_le16(h + 16, major);
	put_le16(h + 18, minor);
	put_le32(h + 20, btape_crc32c(0, h, 20));
}

int btape_header_parse(const uint8_t *h, size_t n, uint16_t *major, uint16_t *minor)
{
	uint8_t want[16];

	put_le32(want, BTAPE_SKIP_HEADER);
	put_le32(want + 4, BTAPE_HEADER_SIZE - 8);
	memcpy(want + 8, btape_file_magic, 8);
	if (!n || memcmp(h, want, n < 16 ? n : 16))
		return -EINVAL;
	if (n < BTAPE_HEADER_SIZE)
		return -ENODATA;
	if (get_le32(h + 20) != btape_crc32c(0, h, 20))
		return -EBADMSG;
	*major = get_le16(h + 16);
	*minor = get_le16(h + 18);
	return 0;
}

void btape_trailer_build(uint8_t t[BTAPE_TRAILER_SIZE], uint64_t footer_off)
{
	put_le32(t, BTAPE_SKIP_TRAILER);
	put_le32(t + 4, BTAPE_TRAILER_SIZE - 8);
	put_le64(t + 8, footer_off);
	put_le32(t + 16, 0);
	put_le32(t + 20, btape_crc32c(0, t, 20));
	memcpy(t + 24, btape_trailer_magic, 8);
}

bool btape_is_trailer(const uint8_t *p)
{
	return get_le32(p) == BTAPE_SKIP_TRAILER && get_le32(p + 4) == BTAPE_TRAILER_SIZE - 8;
}

int btape_trailer_parse(const uint8_t t[BTAPE_TRAILER_SIZE], uint64_t *footer_off)
{
	if (!btape_is_trailer(t) && memcmp(t + 24, btape_trailer_magic, 8))
		return 1;
	if (!btape_is_trailer(t) || memcmp(t + 24, btape_trailer_magic, 8) || get_le32(t + 16) ||
	    get_le32(t + 20) != btape_crc32c(0, t, 20))
		return -EBADMSG;
	*footer_off = get_le64(t + 8);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Intern table: open addressing over ids; strings in never-moving arena blocks.            */

struct istr {
	const char *s;
	uint32_t len;
	uint32_t hash;
};

struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	char data[];
};

/*
 * What a name costs besides its bytes and NUL: its entry (16 bytes, in an array that doubles)
 * and its hash slots (4 bytes, 2 to 4 per name). Counted against max_bytes, so that short
 * distinct names cannot make the table several times its cap.
 */
#define INTERN_ENTRY_BYTES 32

struct btape_intern {
	struct istr *strs;
	uint32_t n, cap;
	uint32_t *slots; /* id + 1, 0 = empty */
	uint32_t nslots;
	struct arena_blk *blk;
	size_t bytes, max_bytes;
};

struct btape_intern *btape_intern_new(size_t max_bytes)
{
	struct btape_intern *t = calloc(1, sizeof(*t));

	if (t)
		t->max_bytes = max_bytes;
	return t;
}

void btape_intern_free(struct btape_intern *t)
{
	if (!t)
		return;
	while (t->blk) {
		struct arena_blk *b = t->blk;

		t->blk = b->next;
		free(b);
	}
	free(t->strs);
	free(t->slots);
	free(t);
}

/*
 * The hash is keyed per process: names come from the files read, and a fixed hash (this was
 * FNV-1a) lets a crafted file send every name to one probe chain, quadratic in the names. The
 * key is drawn once (btape_random_u64()); ids
 * are handed out in order of first sight, so no output depends on it.
 */
static uint64_t intern_key[2];
static pthread_once_t intern_key_once = PTHREAD_ONCE_INIT;

uint64_t btape_random_u64(void)
{
	static _Atomic uint64_t calls;
	uint64_t v;
	ssize_t r;

	while ((r = getrandom(&v, sizeof(v), GRND_NONBLOCK)) < 0 && errno == EINTR)
		;
	if (r == (ssize_t)sizeof(v))
		return v;
	struct timespec rt = {0}, mt = {0};
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	x = btape_mix64((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
	x = btape_mix64(x ^ ((uint64_t)mt.tv_sec * 1000000000u + (uint64_t)mt.tv_nsec));
	x = btape_mix64(x ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&rt);
	return btape_mix64(x ^ atomic_fetch_add(&calls, 1)); /* two calls never alike */
}

static void intern_key_init(void)
{
	intern_key[0] = btape_random_u64();
	intern_key[1] = btape_random_u64();
}

#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND()                        \
	do {                              \
		v0 += v1;                 \
		v1 = ROTL64(v1, 13) ^ v0; \
		v0 = ROTL64(v0, 32);      \
		v2 += v3;                 \
		v3 = ROTL64(v3, 16) ^ v2; \
		v0 += v3;                 \
		v3 = ROTL64(v3, 21) ^ v0; \
		v2 += v1;                 \
		v1 = ROTL64(v1, 17) ^ v2; \
		v2 = ROTL64(v2, 32);      \
	} while (0)

/* SipHash-1-3 (Aumasson & Bernstein; the variant CPython and Rust hash their strings with). */
static uint64_t siphash13(const uint64_t k[2], const uint8_t *p, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k[0], v1 = 0x646f72616e646f6dull ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ k[0], v3 = 0x7465646279746573ull ^ k[1];
	uint64_t m, b = (uint64_t)len << 56;
	size_t i, tail = len & 7;

	for (i = 0; i < len - tail; i += 8) {
		m = get_le64(p + i);
		v3 ^= m;
		SIPROUND();
		v0 ^= m;
	}
	for (size_t k8 = 0; k8 < tail; k8++)
		b |= (uint64_t)p[i + k8] << (8 * k8);
	v3 ^= b;
	SIPROUND();
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND();
	SIPROUND();
	SIPROUND();
	return v0 ^ v1 ^ v2 ^ v3;
}

uint32_t btape_intern_hash(const char *s, size_t len)
{
	pthread_once(&intern_key_once, intern_key_init);
	return (uint32_t)siphash13(intern_key, (const uint8_t *)s, len);
}

static int intern_grow(struct btape_intern *t)
{
	uint32_t ns = t->nslots ? t->nslots * 2 : 64;
	uint32_t *slots = calloc(ns, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = t->strs[i].hash & (ns - 1);

		while (slots[j])
			j = (j + 1) & (ns - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	return 0;
}

/*
 * The slot of s: its id + 1, or 0 with *j the empty slot that ends its chain. -ELOOP past
 * BTAPE_INTERN_MAX_PROBE occupied slots (see its comment: never with a hash that spreads).
 */
static int64_t intern_find(const struct btape_intern *t, const char *s, size_t len, uint32_t h,
			   uint32_t *j)
{
	uint32_t mask = t->nslots - 1, probes = 0;

	for (*j = h & mask; t->slots[*j]; *j = (*j + 1) & mask) {
		const struct istr *e = &t->strs[t->slots[*j] - 1];

		if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
			return t->slots[*j];
		if (++probes >= BTAPE_INTERN_MAX_PROBE)
			return -ELOOP;
	}
	return 0;
}

int64_t btape_intern_get(struct btape_intern *t, const char *s, size_t len)
{
	uint32_t h = btape_intern_hash(s, len), j = 0;
	struct arena_blk *b;
	int64_t found;
	char *copy;
	int err;

	if (t->nslots) {
		found = intern_find(t, s, len, h, &j);
		if (found)
			return found < 0 ? found : found - 1;
	}
	if (len > BTAPE_COMM_MAX_LEN)
		return -ENAMETOOLONG;
	if (t->bytes + len + 1 + INTERN_ENTRY_BYTES > t->max_bytes || t->n >= (1u << 30))
		return -E2BIG;
	if ((t->n + 1) * 2 > t->nslots) {
		err = intern_grow(t);
		if (err)
			return err;
		found = intern_find(t, s, len, h, &j);
		if (found)
			return found < 0 ? found : found - 1; /* -ELOOP: nothing added */
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		struct istr *ns = realloc(t->strs, sizeof(*ns) * cap);

		if (!ns)
			return -ENOMEM;
		t->strs = ns;
		t->cap = cap;
	}
	b = t->blk;
	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > 65536 ? len + 1 : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return -ENOMEM;
		b->used = 0;
		b->cap = cap;
		b->next = t->blk;
		t->blk = b;
	}
	copy = b->data + b->used;
	memcpy(copy, s, len);
	copy[len] = '\0';
	b->used += len + 1;
	t->bytes += len + 1 + INTERN_ENTRY_BYTES;
	t->strs[t->n] = (struct istr){copy, (uint32_t)len, h};
	t->slots[j] = t->n + 1;
	return t->n++;
}

const char *btape_intern_str(const struct btape_intern *t, uint32_t id)
{
	return t->strs[id].s;
}

uint32_t btape_intern_len(const struct btape_intern *t, uint32_t id)
{
	return t->strs[id].len;
}

/* ---------------------------------------------------------------------------------------- */
/* Index                                                                                    */

int btape_index_add(struct btape_index *ix, uint64_t off, uint64_t tmin, uint64_t tmax,
		    uint64_t events)
{
	if (ix->n == ix->cap) {
		uint64_t cap = ix->cap ? ix->cap * 2 : 64;
		uint64_t *a[4] = {ix->offset, ix->issue_min, ix->issue_max, ix->events};

		for (int i = 0; i < 4; i++) {
			uint64_t *p = realloc(a[i], sizeof(uint64_t) * cap);

			if (!p)
				return -ENOMEM;
			a[i] = p;
			switch (i) {
			case 0:
				ix->offset = p;
				break;
			case 1:
				ix->issue_min = p;
				break;
			case 2:
				ix->issue_max = p;
				break;
			default:
				ix->events = p;
				break;
			}
		}
		ix->cap = cap;
	}
	ix->offset[ix->n] = off;
	ix->issue_min[ix->n] = tmin;
	ix->issue_max[ix->n] = tmax;
	ix->events[ix->n] = events;
	ix->n++;
	return 0;
}

void btape_index_free(struct btape_index *ix)
{
	if (!ix)
		return;
	free(ix->offset);
	free(ix->issue_min);
	free(ix->issue_max);
	free(ix->events);
	memset(ix, 0, sizeof(*ix));
}
