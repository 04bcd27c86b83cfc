/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbiotape private msgpack helpers (format/frames.c): packing through msgpack-c, and a
 * reader that walks a payload in place. The reader builds no object tree: what it costs is
 * what the caller stores, never a function of the counts a payload declares. Every count is
 * checked against the bytes left, nesting is at most 16 deep, and a cursor counts the values
 * it reads against the frame type's item limit.
 */
#ifndef BTAPE_MP_INTERNAL_H
#define BTAPE_MP_INTERNAL_H

#include <msgpack.h>

#include "btape_internal.h"

/* msgpack_packer write callback appending to a struct bbuf. */
int btape_mp_write(void *data, const char *buf, size_t len);
void btape_mp_key(msgpack_packer *pk, const char *key);

#define BTAPE_MP_MAX_DEPTH 16 /* the top-level value is at depth 0 */

enum btape_mp_type {
	BTAPE_MP_NIL,
	BTAPE_MP_BOOL,
	BTAPE_MP_UINT, /* unsigned, or a signed encoding of a value >= 0 (as msgpack-c reads it) */
	BTAPE_MP_NINT, /* a negative integer */
	BTAPE_MP_FLOAT,
	BTAPE_MP_STR,
	BTAPE_MP_BIN,
	BTAPE_MP_EXT,
	BTAPE_MP_ARRAY,
	BTAPE_MP_MAP,
};

struct btape_mp {
	const uint8_t *p;
	size_t len, off;
	uint64_t items, max_items; /* values read so far, and the most allowed */
	bool too_many;		   /* the last failure was max_items */
};

struct btape_mp_val {
	enum btape_mp_type type;
	uint64_t u;	    /* UINT: value; NINT: the int64 (two's complement); STR, BIN, EXT:
			     * body bytes; ARRAY: elements; MAP: pairs */
	const uint8_t *ptr; /* STR, BIN, EXT: the body (EXT: its type byte first) */
};

void btape_mp_init(struct btape_mp *c, const void *data, size_t len, uint64_t max_items);
/*
 * Reads one value's header, and the body of a STR, BIN or EXT; an ARRAY's or MAP's elements
 * follow it. 0, or -EBADMSG when malformed, truncated, declaring more elements than bytes
 * are left, or past max_items.
 */
int btape_mp_read(struct btape_mp *c, struct btape_mp_val *v);
/* Skips one whole value found at nesting depth DEPTH. 0 or -EBADMSG. */
int btape_mp_skip(struct btape_mp *c, int depth);
/* Typed reads: -EBADMSG for another type. */
int btape_mp_map(struct btape_mp *c, uint32_t *pairs);
int btape_mp_array(struct btape_mp *c, uint32_t *n);
int btape_mp_uint(struct btape_mp *c, uint64_t *v);
int btape_mp_int(struct btape_mp *c, int64_t *v);
int btape_mp_str(struct btape_mp *c, const char **s, uint32_t *n);
/*
 * Reads a map key at depth DEPTH. A string key sets *k and *kn; any other key is skipped
 * and *k is NULL (no known key matches it).
 */
int btape_mp_key_read(struct btape_mp *c, int depth, const char **k, uint32_t *kn);

static inline bool btape_mp_is(const char *k, uint32_t kn, const char *name)
{
	return k && strlen(name) == kn && !memcmp(k, name, kn);
}

#endif /* BTAPE_MP_INTERNAL_H */
