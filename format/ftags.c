// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbiotape: the footer's tags map (docs/BTAPE-FORMAT.md, "Footer tags"): string keys to
 * msgpack values of any type, figures a run knows only at its end. Kept as encoded bytes, so
 * the library never interprets a value; checked against the limits that keep the footer
 * within what every 1.x reader accepts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btape_internal.h"
#include "mp_internal.h"
#include "ftags.h"

#define TAGS_DEPTH 1 /* the tags map's depth in the footer map; a value is one deeper */

/* Bytes of a msgpack str header for n bytes (n <= 255), and of a map header for n pairs. */
static uint64_t str_hdr(size_t n)
{
	return n < 32 ? 1 : 2;
}

static uint64_t map_hdr(uint32_t n)
{
	return n < 16 ? 1 : n < 65536 ? 3 : 5;
}

int btape_ftags_find(const struct btape_ftags *t, const char *key, size_t kn)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->tag[i].val - t->tag[i].key == kn + 1 &&
		    !memcmp(t->buf.p + t->tag[i].key, key, kn))
			return (int)i;
	return -1;
}

void btape_ftags_free(struct btape_ftags *t)
{
	bbuf_free(&t->buf);
	free(t->tag);
	memset(t, 0, sizeof(*t));
}

/* Appends a checked tag: a key of kn bytes, a value of len bytes taking items values. */
static int append(struct btape_ftags *t, const char *key, size_t kn, const void *val, size_t len,
		  uint64_t items)
{
	struct btape_ftag *tag;

	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 8;

		tag = realloc(t->tag, sizeof(*tag) * cap);
		if (!tag)
			return -ENOMEM;
		t->tag = tag;
		t->cap = cap;
	}
	tag = &t->tag[t->n];
	tag->key = (uint32_t)t->buf.len;
	tag->val = tag->key + (uint32_t)kn + 1;
	tag->len = (uint32_t)len;
	if (bbuf_put(&t->buf, key, kn) || bbuf_put(&t->buf, "", 1) || bbuf_put(&t->buf, val, len))
		return -ENOMEM;
	t->body_bytes += str_hdr(kn) + kn + len;
	t->body_items += 1 + items;
	t->n++;
	return 0;
}

/* Values (items) tag i's value takes: it was checked, so this walk cannot fail. */
static uint64_t value_items(const struct btape_ftags *t, uint32_t i)
{
	struct btape_mp c;

	btape_mp_init(&c, t->buf.p + t->tag[i].val, t->tag[i].len, UINT64_MAX);
	btape_mp_skip(&c, TAGS_DEPTH + 1);
	return c.items;
}

/* Removes tag i: the buffer is compacted, the later tags move up. */
static void drop(struct btape_ftags *t, uint32_t i)
{
	struct btape_ftag g = t->tag[i];
	uint32_t gone = g.val + g.len - g.key, kn = g.val - g.key - 1;

	t->body_bytes -= str_hdr(kn) + kn + g.len;
	t->body_items -= 1 + value_items(t, i);
	memmove(t->buf.p + g.key, t->buf.p + g.key + gone, t->buf.len - g.key - gone);
	t->buf.len -= gone;
	memmove(&t->tag[i], &t->tag[i + 1], sizeof(*t->tag) * (t->n - i - 1));
	t->n--;
	for (uint32_t j = i; j < t->n; j++) {
		t->tag[j].key -= gone;
		t->tag[j].val -= gone;
	}
}

int btape_ftags_set(struct btape_ftags *t, const char *key, const void *val, size_t len,
		    char *why, size_t whylen)
{
	size_t kn = key ? strlen(key) : 0;
	uint64_t bytes = t->body_bytes, items = t->body_items;
	uint32_t n = t->n;
	struct btape_mp c;
	int at, err;

	if (!kn || kn >= BTAPE_NAME_MAX) {
		snprintf(why, whylen, "footer tag key: %s", kn ? "longer than 255 bytes" : "empty");
		return -EINVAL;
	}
	btape_mp_init(&c, val, len, BTAPE_FOOTER_TAGS_MAX_ITEMS);
	if (!val || !len || btape_mp_skip(&c, TAGS_DEPTH + 1) || c.off != len) {
		snprintf(why, whylen, "footer tag %s: %s", key,
			 c.too_many ? "more msgpack values than the tags may hold"
				    : "not one well-formed msgpack value (nested at most 14 deep)");
		return c.too_many ? -E2BIG : -EINVAL;
	}
	at = btape_ftags_find(t, key, kn);
	if (at >= 0) {
		bytes -= str_hdr(kn) + kn + t->tag[at].len;
		items -= 1 + value_items(t, (uint32_t)at);
		n--;
	}
	/* what the map would take with it: header, keys and values */
	bytes += map_hdr(n + 1) + str_hdr(kn) + kn + len;
	items += 1 + 1 + c.items;
	if (n + 1 > BTAPE_FOOTER_TAGS_MAX || bytes > BTAPE_FOOTER_TAGS_MAX_BYTES ||
	    items > BTAPE_FOOTER_TAGS_MAX_ITEMS) {
		snprintf(why, whylen,
			 "footer tag %s: the tags would exceed their limits (%u keys, %u bytes, %u "
			 "msgpack values)",
			 key, BTAPE_FOOTER_TAGS_MAX, BTAPE_FOOTER_TAGS_MAX_BYTES,
			 BTAPE_FOOTER_TAGS_MAX_ITEMS);
		return -E2BIG;
	}
	if (at >= 0)
		drop(t, (uint32_t)at);
	err = append(t, key, kn, val, len, c.items);
	if (err)
		snprintf(why, whylen, "footer tag %s: out of memory", key);
	return err;
}

void btape_ftags_pack(msgpack_packer *pk, const struct btape_ftags *t)
{
	btape_mp_key(pk, "tags");
	msgpack_pack_map(pk, t->n);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct btape_ftag *g = &t->tag[i];

		msgpack_pack_str(pk, g->val - g->key - 1);
		msgpack_pack_str_body(pk, t->buf.p + g->key, g->val - g->key - 1);
		/* the value as it was given: already msgpack */
		pk->callback(pk->data, (const char *)t->buf.p + g->val, g->len);
	}
}

int btape_ftags_unpack(struct btape_ftags *t, struct btape_mp *c, const char **what)
{
	size_t start = c->off;
	uint64_t items0 = c->items;
	uint32_t pairs;

	if (t->n) {
		*what = "more than one tags map";
		return -EBADMSG;
	}
	if (btape_mp_map(c, &pairs)) {
		*what = "tags: not a well-formed map";
		return -EBADMSG;
	}
	if (pairs > BTAPE_FOOTER_TAGS_MAX) {
		*what = "tags: more keys than the limit";
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn;
		size_t at;
		uint64_t it;

		if (btape_mp_str(c, &k, &kn) || !kn || kn >= BTAPE_NAME_MAX || memchr(k, 0, kn)) {
			*what = "tags: a key is not a string of 1..255 bytes";
			return -EBADMSG;
		}
		if (btape_ftags_find(t, k, kn) >= 0) {
			*what = "tags: a key appears twice";
			return -EBADMSG;
		}
		at = c->off;
		it = c->items;
		if (btape_mp_skip(c, TAGS_DEPTH + 1)) {
			*what = "tags: malformed value";
			return -EBADMSG;
		}
		if (c->off - start > BTAPE_FOOTER_TAGS_MAX_BYTES ||
		    c->items - items0 > BTAPE_FOOTER_TAGS_MAX_ITEMS) {
			*what = "tags: larger than the limit";
			return -EBADMSG;
		}
		if (append(t, k, kn, c->p + at, c->off - at, c->items - it))
			return -ENOMEM;
	}
	return 0;
}
