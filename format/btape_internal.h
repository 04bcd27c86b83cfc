/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libbiotape private definitions: on-disk constants (docs/BTAPE-FORMAT.md) and shared helpers. */
#ifndef BTAPE_INTERNAL_H
#define BTAPE_INTERNAL_H

#include <inttypes.h>
#include <limits.h> /* glibc: defines __GLIBC__ (BTAPE_HOT_CLONES) */
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "btape.h"
#include "btape_le.h"

#define BTAPE_API __attribute__((visibility("default")))

/*
 * BTAPE_HOT_CLONES before a hot decode function: gcc compiles it for x86-64-v3 and for the
 * baseline, and the loader picks one for the CPU (an ifunc); integer code, the same results
 * either way. target_clones needs an ifunc (glibc) and, for "arch=x86-64-v3", gcc 11 or later.
 * The tools' HOT_CLONES (common/hot_clones.h) has the same condition.
 */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__GNUC__) && \
	!defined(__clang__) && __GNUC__ >= 11 && !defined(BIOTAPE_NO_CLONES) && \
	!defined(__SANITIZE_THREAD__)
#define BTAPE_HOT_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BTAPE_HOT_CLONES
#endif

/*
 * Every fixed structure is a zstd skippable frame (magic 0x184D2A5?, LE32 content size), so
 * `zstd -d` decompresses a whole .btape file and skips the rest. See docs/BTAPE-FORMAT.md.
 *
 * File header (24): LE32 0x184D2A5A, LE32 16, "\x89BTAPE\r\n", LE16 major, LE16 minor,
 *                   LE32 crc32c(bytes 0..19).
 */
#define BTAPE_HEADER_SIZE 24
#define BTAPE_SKIP_HEADER 0x184D2A5Au
#define BTAPE_SKIP_ENV 0x184D2A5Bu
#define BTAPE_SKIP_TRAILER 0x184D2A5Cu
extern const uint8_t btape_file_magic[8];

/*
 * Frame envelope (28): LE32 0x184D2A5B, LE32 20, u8 type, u8 flags (0), LE16 0,
 * LE32 payload bytes, LE32 decompressed bytes, LE32 crc32c(payload), LE32 crc32c(bytes 0..23);
 * then the payload: one zstd frame.
 */
#define BTAPE_ENV_SIZE 28
#define BTAPE_FRAME_META 1
#define BTAPE_FRAME_CHUNK 2
#define BTAPE_FRAME_FOOTER 3
#define BTAPE_FRAME_MAX_BYTES (256u << 20) /* compressed or raw payload limit */

/*
 * What a reader accepts per frame type, so that no allocation follows from a count a payload
 * declares beyond what the format needs (docs/BTAPE-FORMAT.md, "Limits"). Items are msgpack values
 * at every level, map keys included.
 *   metadata: 64 MiB decompressed, 2 M items (BTAPE_DEVICES_MAX devices of 17 items, tags);
 *   chunk: BTAPE_FRAME_MAX_BYTES (its columns), BTAPE_CHUNK_MAX_EVENTS + 64 Ki items (a comm
 *          table of at most n names, the columns);
 *   footer: its own file offset + 1 MiB decompressed (an index entry takes at most 36 bytes,
 *           a chunk frame at least BTAPE_ENV_SIZE), at most offset / BTAPE_ENV_SIZE index
 *           entries, 4 items per entry + 64 Ki.
 */
#define BTAPE_META_MAX_BYTES (64u << 20)
#define BTAPE_META_MAX_ITEMS (1u << 21)
#define BTAPE_CHUNK_MAX_ITEMS (BTAPE_CHUNK_MAX_EVENTS + (1u << 16))
#define BTAPE_FOOTER_SLACK_BYTES (1u << 20)
#define BTAPE_FOOTER_MAX_ITEMS(max_chunks) (4 * (uint64_t)(max_chunks) + (1u << 16))

/*
 * Trailer (32): LE32 0x184D2A5C, LE32 24, LE64 footer frame offset, LE32 0,
 * LE32 crc32c(bytes 0..19), "BTAPEEND".
 */
#define BTAPE_TRAILER_SIZE 32
extern const uint8_t btape_trailer_magic[8];

#define BTAPE_CHUNK_MAX_EVENTS (1u << 22) /* readers refuse larger chunks */
#define BTAPE_WRITER_CHUNK_MAX (1u << 20) /* writers clamp chunk_events to this */
#define BTAPE_COMM_MAX_LEN 65535	  /* longest process name accepted */

/* Column codec kinds (first byte of a column blob). */
enum col_kind {
	COL_RAW = 0,	     /* t = v */
	COL_ZIGZAG = 1,	     /* t = zigzag((int64)v) */
	COL_DELTA = 2,	     /* t = zigzag(v - previous v), previous starts at origin */
	COL_SECTOR_PRED = 3, /* t = zigzag(v - predicted), predicted = prev sector + prev bytes/512
			      * of the same device, starting at origin */
};

static inline uint64_t zz_enc(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t zz_dec(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

uint32_t btape_crc32c(uint32_t crc, const void *buf, size_t len);

/* Growable byte buffer. */
struct bbuf {
	uint8_t *p;
	size_t len, cap;
};
int bbuf_reserve(struct bbuf *b, size_t extra);
int bbuf_put(struct bbuf *b, const void *data, size_t len);
void bbuf_free(struct bbuf *b);

/* Header and trailer. */
void btape_header_build(uint8_t h[BTAPE_HEADER_SIZE], uint16_t major, uint16_t minor);
/* 0, -EINVAL (not a biotape file), -EBADMSG (checksum); n: bytes available (short: -ENODATA). */
int btape_header_parse(const uint8_t *h, size_t n, uint16_t *major, uint16_t *minor);
void btape_trailer_build(uint8_t t[BTAPE_TRAILER_SIZE], uint64_t footer_off);
/* True when p (8 bytes) starts a trailer. */
bool btape_is_trailer(const uint8_t *p);
/* 0 and *footer_off, 1 when t is no trailer at all, -EBADMSG when damaged. */
int btape_trailer_parse(const uint8_t t[BTAPE_TRAILER_SIZE], uint64_t *footer_off);

/* Frame envelope helpers. */
void btape_env_build(uint8_t env[BTAPE_ENV_SIZE], unsigned int type, uint32_t clen, uint32_t rlen,
		     const void *payload);
/* 0 when the envelope header is valid (magic + header crc); fills the fields. */
int btape_env_parse(const uint8_t env[BTAPE_ENV_SIZE], unsigned int *type, uint32_t *clen,
		    uint32_t *rlen, uint32_t *pcrc);

/* Metadata and footer (msgpack) encoding, format/frames.c. */
int btape_meta_pack(struct bbuf *out, const struct btape_meta *meta);
int btape_meta_unpack(struct btape_meta *meta, const void *data, size_t len, char *err,
		      size_t errlen);

struct btape_index {
	uint64_t n, cap;
	uint64_t *offset;    /* file offset of the chunk's envelope */
	uint64_t *issue_min; /* smallest issue_ns in the chunk */
	uint64_t *issue_max; /* largest issue_ns in the chunk */
	uint64_t *events;
};
int btape_index_add(struct btape_index *ix, uint64_t off, uint64_t tmin, uint64_t tmax,
		    uint64_t events);
void btape_index_free(struct btape_index *ix);

/*
 * Footer tags (the footer's "tags" map, format/ftags.h): one buffer holding, per tag, its key,
 * a NUL and its msgpack value; tag[] gives their offsets. body_bytes and body_items are what
 * the keys and values take encoded (the map's header aside).
 */
struct btape_ftag {
	uint32_t key, val, len; /* offsets in buf of the key and the value; the value's bytes */
};
struct btape_ftags {
	struct bbuf buf;
	struct btape_ftag *tag;
	uint32_t n, cap;
	uint64_t body_bytes, body_items;
};

/* Copies a summary out to a caller's (its sz kept, only the fields sz holds): 0, -EINVAL. */
int btape_summary_copy_out(struct btape_summary *dst, const struct btape_summary *src);
int btape_footer_pack(struct bbuf *out, const struct btape_summary *s,
		      const struct btape_index *ix, const struct btape_ftags *ft);
/* max_chunks: the most index entries the file has room for (more is damage). */
int btape_footer_unpack(struct btape_summary *s, struct btape_index *ix, struct btape_ftags *ft,
			const void *data, size_t len, uint64_t max_chunks, char *err,
			size_t errlen);

/* Event chunk encoding, format/chunk_enc.c. */
struct chunk_enc; /* scratch state of the writer */
#define BTAPE_NCOLS 18
#define BTAPE_COL_COMM 12 /* index of the comm column in struct chunk_cols */
/*
 * A pending chunk in column form, as the writer accumulates it: for each column, the values
 * of the events holding the field (present, issue, dev, op, bytes, sector, complete as zigzag
 * latency, insert as zigzag issue - insert, flags, error zigzag, pid, tid, comm id, cgroup,
 * cpu, qd), plus the absolute completion times. Encoding transforms the arrays in place.
 */
struct chunk_cols {
	uint32_t n, cap;
	uint32_t m[BTAPE_NCOLS];
	uint64_t *v[BTAPE_NCOLS];
	uint64_t *complete_abs;
};
int btape_chunk_cols_init(struct chunk_cols *cc, uint32_t cap);
void btape_chunk_cols_free(struct chunk_cols *cc);
/* Appends an event (n < cap); comm_id goes to the comm column when the event has a comm. */
void btape_chunk_cols_add(struct chunk_cols *cc, const struct btape_event *e, uint32_t comm_id);
/* Appends n events (n + added so far <= cap), column by column; comm_id[i] as above. */
void btape_chunk_cols_add_n(struct chunk_cols *cc, const struct btape_event *const *ev,
			    const uint32_t *comm_id, uint32_t n);
/* Encodes (and consumes: the arrays are transformed, then n reset) the pending chunk. */
int btape_chunk_encode_cols(struct chunk_enc *ce, struct chunk_cols *cc, const char *const *comms,
			    const uint32_t *comm_len, uint32_t ncomms, struct bbuf *out,
			    size_t **cuts, size_t *ncuts);
struct chunk_enc; /* scratch state of the writer */
struct chunk_enc *btape_chunk_enc_new(void);
void btape_chunk_enc_free(struct chunk_enc *ce);
/*
 * Encodes n events (comm already resolved to per-chunk indices in comm_idx, names in
 * comms[ncomms]) as the msgpack chunk map into out; cuts[] receives offsets in out where a
 * zstd block should end (column-plane boundaries), *ncuts their count.
 */
int btape_chunk_encode(struct chunk_enc *ce, const struct btape_event *evs,
		       const uint32_t *comm_idx, uint32_t n, const char *const *comms,
		       const uint32_t *comm_len, uint32_t ncomms, struct bbuf *out, size_t **cuts,
		       size_t *ncuts);

/* Intern table: pointer-stable strings. */
struct btape_intern;
/* max_bytes: the cap on names' bytes plus 32 bytes of table overhead per name. */
struct btape_intern *btape_intern_new(size_t max_bytes);
/* The reader's cap on one trace's process names (bytes) */
#define BTAPE_READER_COMM_MAX_BYTES (64u << 20)
void btape_intern_free(struct btape_intern *t);
/*
 * Returns the interned string's id (>= 0): 0, 1, 2... in order of first sight, whatever the
 * hash. Or -ENAMETOOLONG past BTAPE_COMM_MAX_LEN, -ENOMEM, -E2BIG when the cap is reached,
 * or -ELOOP when a lookup passes BTAPE_INTERN_MAX_PROBE occupied slots (names built to
 * collide).
 */
int64_t btape_intern_get(struct btape_intern *t, const char *s, size_t len);
/*
 * The table's hash: SipHash-1-3 under a key drawn once per process (so differs between runs),
 * truncated to 32 bits. Exposed for the tests.
 */
uint32_t btape_intern_hash(const char *s, size_t len);
/* 64 random bits for a hash key: getrandom(2), else clocks, the pid and a counter, mixed. */
uint64_t btape_random_u64(void);
/* splitmix64's finaliser: every input bit moves every output bit */
static inline uint64_t btape_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}
/*
 * Longest probe accepted, in occupied slots. Linear probing at the table's maximum load of 1/2:
 * with a hash that spreads, a run of L full slots has probability under (e^0.5 / 2)^L =
 * 0.824^L per start, so one of 512 or more anywhere in a table of 2^31 slots (the most it can
 * have) under 2^-100. Longest seen at 2^22 and 2^26 slots: 33 to 46.
 */
#define BTAPE_INTERN_MAX_PROBE 512
const char *btape_intern_str(const struct btape_intern *t, uint32_t id);
uint32_t btape_intern_len(const struct btape_intern *t, uint32_t id);

/* Chunk decoding, format/chunk_dec.c. */
/* What a decoder last stored in an output buffer: lets constant fields skip rewriting. */
struct dec_cache {
	const void *buf;
	uint64_t val;
	uint32_t cnt;
};

struct chunk_dec {
	struct dec_cache cache[BTAPE_NCOLS]; /* per column; kept across chunks */
	uint32_t skip;		    /* BTAPE_HAS_* fields not decoded (read as 0); kept */
	uint32_t n;		    /* events in the chunk */
	uint32_t pos;		    /* events already decoded */
	uint64_t issue_min, issue_max;
	const char **comms; /* per-chunk table, interned pointers */
	uint32_t ncomms, comms_cap;
	void *priv; /* column cursors */
};
/*
 * Parses a decompressed chunk (data must stay valid while decoding); comm names are interned
 * in it. Returns 0 or -EBADMSG with a reason in err.
 */
int btape_chunk_dec_start(struct chunk_dec *d, const uint8_t *data, size_t len,
			  struct btape_intern *it, char *err, size_t errlen);
/* Decodes up to max next events into out; returns the count (0 at chunk end) or -EBADMSG. */
int btape_chunk_dec_next(struct chunk_dec *d, struct btape_event *out, uint32_t max, char *err,
			 size_t errlen);
void btape_chunk_dec_free(struct chunk_dec *d);

#endif /* BTAPE_INTERNAL_H */
