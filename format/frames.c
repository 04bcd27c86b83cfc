// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libbiotape: metadata and footer frames (msgpack maps), see docs/BTAPE-FORMAT.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "btape_internal.h"
#include "mp_internal.h"
#include "ftags.h"

int btape_mp_write(void *data, const char *buf, size_t len)
{
	return bbuf_put(data, buf, len) ? -1 : 0;
}

void btape_mp_key(msgpack_packer *pk, const char *key)
{
	size_t n = strlen(key);

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, key, n);
}

static void pack_kstr(msgpack_packer *pk, const char *key, const char *val)
{
	size_t n = strlen(val);

	btape_mp_key(pk, key);
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, val, n);
}

static void pack_ku(msgpack_packer *pk, const char *key, uint64_t v)
{
	btape_mp_key(pk, key);
	msgpack_pack_uint64(pk, v);
}

static void pack_ki(msgpack_packer *pk, const char *key, int64_t v)
{
	btape_mp_key(pk, key);
	msgpack_pack_int64(pk, v);
}

static void pack_cluster(msgpack_packer *pk, const struct btape_cluster *cl)
{
	uint32_t n = cl->nsync < BTAPE_CLOCK_SYNC_MAX ? cl->nsync : BTAPE_CLOCK_SYNC_MAX;

	btape_mp_key(pk, "cluster");
	msgpack_pack_map(pk, 6);
	pack_kstr(pk, "id", cl->id);
	pack_kstr(pk, "reference", cl->reference);
	pack_kstr(pk, "method", cl->method);
	pack_ku(pk, "rank", cl->rank);
	pack_ku(pk, "ranks", cl->ranks);
	btape_mp_key(pk, "sync");
	msgpack_pack_array(pk, n);
	for (uint32_t i = 0; i < n; i++) {
		msgpack_pack_array(pk, 3);
		msgpack_pack_uint64(pk, cl->sync[i].local_ns);
		msgpack_pack_int64(pk, cl->sync[i].offset_ns);
		msgpack_pack_uint64(pk, cl->sync[i].uncertainty_ns);
	}
}

int btape_meta_pack(struct bbuf *out, const struct btape_meta *m)
{
	msgpack_packer pk;

	if (m->ndevices > BTAPE_DEVICES_MAX || m->ntags > BTAPE_TAGS_MAX)
		return -E2BIG; /* readers would refuse the file */
	msgpack_packer_init(&pk, out, btape_mp_write);
	msgpack_pack_map(&pk, m->cluster.id[0] ? 11 : 10);
	btape_mp_key(&pk, "format");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint32(&pk, BTAPE_FORMAT_VERSION_MAJOR);
	msgpack_pack_uint32(&pk, BTAPE_FORMAT_VERSION_MINOR);
	pack_kstr(&pk, "tool", m->tool);
	pack_kstr(&pk, "hostname", m->hostname);
	pack_kstr(&pk, "kernel", m->kernel);
	pack_kstr(&pk, "source", m->source);
	pack_kstr(&pk, "capture", m->capture);
	pack_ku(&pk, "clock_mono_ns", m->clock_mono_ns);
	pack_ku(&pk, "clock_real_ns", m->clock_real_ns);
	btape_mp_key(&pk, "devices");
	msgpack_pack_array(&pk, m->ndevices);
	for (uint32_t i = 0; i < m->ndevices; i++) {
		const struct btape_device *d = &m->devices[i];

		msgpack_pack_map(&pk, d->host[0] ? 9 : 8);
		pack_ku(&pk, "major", d->dev_t_major);
		pack_ku(&pk, "minor", d->dev_t_minor);
		pack_kstr(&pk, "name", d->name);
		pack_kstr(&pk, "model", d->model);
		pack_ku(&pk, "size", d->size_bytes);
		pack_ku(&pk, "logical_block", d->logical_block);
		pack_ku(&pk, "physical_block", d->physical_block);
		pack_ki(&pk, "rotational", d->rotational);
		if (d->host[0])
			pack_kstr(&pk, "host", d->host);
	}
	btape_mp_key(&pk, "tags");
	msgpack_pack_array(&pk, m->ntags);
	for (uint32_t i = 0; i < m->ntags; i++) {
		size_t kn = strlen(m->tags[i].key), vn = strlen(m->tags[i].value);

		msgpack_pack_array(&pk, 2);
		msgpack_pack_str(&pk, kn);
		msgpack_pack_str_body(&pk, m->tags[i].key, kn);
		msgpack_pack_str(&pk, vn);
		msgpack_pack_str_body(&pk, m->tags[i].value, vn);
	}
	if (m->cluster.id[0])
		pack_cluster(&pk, &m->cluster);
	return out->p ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading: a cursor over the payload. No object tree is built, so memory is what the caller */
/* stores; every declared count must fit in the bytes left; nesting and items are limited.   */

void btape_mp_init(struct btape_mp *c, const void *data, size_t len, uint64_t max_items)
{
	c->p = data;
	c->len = len;
	c->off = 0;
	c->items = 0;
	c->max_items = max_items;
	c->too_many = false;
}

static uint64_t get_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

int btape_mp_read(struct btape_mp *c, struct btape_mp_val *v)
{
	const uint8_t *p = c->p;
	size_t o = c->off, lenb = 0, fixed = 0;
	uint64_t per = 0; /* values per declared element: 1 array, 2 map */
	bool body = false, sign = false;
	uint8_t b;

	if (o >= c->len)
		return -EBADMSG;
	if (++c->items > c->max_items) {
		c->too_many = true;
		return -EBADMSG;
	}
	b = p[o++];
	v->u = 0;
	v->ptr = NULL;
	if (b <= 0x7f) {
		v->type = BTAPE_MP_UINT;
		v->u = b;
	} else if (b >= 0xe0) {
		v->type = BTAPE_MP_NINT;
		v->u = (uint64_t)(int64_t)(int8_t)b;
	} else if (b <= 0x8f) {
		v->type = BTAPE_MP_MAP;
		v->u = b & 0x0f;
		per = 2;
	} else if (b <= 0x9f) {
		v->type = BTAPE_MP_ARRAY;
		v->u = b & 0x0f;
		per = 1;
	} else if (b <= 0xbf) {
		v->type = BTAPE_MP_STR;
		v->u = b & 0x1f;
		body = true;
	} else {
		switch (b) {
		case 0xc0:
			v->type = BTAPE_MP_NIL;
			break;
		case 0xc2:
		case 0xc3:
			v->type = BTAPE_MP_BOOL;
			v->u = b & 1;
			break;
		case 0xc4:
		case 0xc5:
		case 0xc6:
			v->type = BTAPE_MP_BIN;
			lenb = (size_t)1 << (b - 0xc4);
			body = true;
			break;
		case 0xc7:
		case 0xc8:
		case 0xc9:
			v->type = BTAPE_MP_EXT;
			lenb = (size_t)1 << (b - 0xc7);
			body = true;
			break;
		case 0xca:
		case 0xcb:
			v->type = BTAPE_MP_FLOAT;
			fixed = b == 0xca ? 4 : 8;
			break;
		case 0xcc:
		case 0xcd:
		case 0xce:
		case 0xcf:
			v->type = BTAPE_MP_UINT;
			fixed = (size_t)1 << (b - 0xcc);
			break;
		case 0xd0:
		case 0xd1:
		case 0xd2:
		case 0xd3:
			v->type = BTAPE_MP_UINT;
			fixed = (size_t)1 << (b - 0xd0);
			sign = true;
			break;
		case 0xd4:
		case 0xd5:
		case 0xd6:
		case 0xd7:
		case 0xd8:
			v->type = BTAPE_MP_EXT;
			v->u = 1 + ((uint64_t)1 << (b - 0xd4));
			body = true;
			break;
		case 0xd9:
		case 0xda:
		case 0xdb:
			v->type = BTAPE_MP_STR;
			lenb = (size_t)1 << (b - 0xd9);
			body = true;
			break;
		case 0xdc:
		case 0xdd:
			v->type = BTAPE_MP_ARRAY;
			lenb = b == 0xdc ? 2 : 4;
			per = 1;
			break;
		case 0xde:
		case 0xdf:
			v->type = BTAPE_MP_MAP;
			lenb = b == 0xde ? 2 : 4;
			per = 2;
			break;
		default: /* 0xc1: never used */
			return -EBADMSG;
		}
	}
	if (lenb) {
		if (c->len - o < lenb)
			return -EBADMSG;
		v->u = get_be(p + o, lenb);
		o += lenb;
		if (v->type == BTAPE_MP_EXT)
			v->u++; /* the type byte */
	}
	if (fixed) {
		if (c->len - o < fixed)
			return -EBADMSG;
		if (v->type == BTAPE_MP_UINT) {
			v->u = get_be(p + o, fixed);
			if (sign && fixed < 8 && (v->u >> (8 * fixed - 1)))
				v->u |= ~(uint64_t)0 << (8 * fixed); /* sign-extend */
			if (sign && (int64_t)v->u < 0)
				v->type = BTAPE_MP_NINT;
		}
		o += fixed;
	}
	if (body) {
		if (c->len - o < v->u)
			return -EBADMSG;
		v->ptr = p + o;
		o += v->u;
	}
	/* every element takes at least a byte */
	if (per && v->u > (c->len - o) / per)
		return -EBADMSG;
	c->off = o;
	return 0;
}

int btape_mp_skip(struct btape_mp *c, int depth)
{
	struct btape_mp_val v;
	uint64_t k;

	if (depth > BTAPE_MP_MAX_DEPTH || btape_mp_read(c, &v))
		return -EBADMSG;
	if (v.type != BTAPE_MP_ARRAY && v.type != BTAPE_MP_MAP)
		return 0;
	k = v.type == BTAPE_MP_MAP ? 2 * v.u : v.u;
	for (uint64_t i = 0; i < k; i++) {
		uint8_t b;

		if (c->off >= c->len)
			return -EBADMSG; /* an earlier element took the bytes the count needs */
		b = c->p[c->off];
		if ((b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) &&
		    depth < BTAPE_MP_MAX_DEPTH) {
			/* a one-byte value (the common case of a long run): no call */
			if (++c->items > c->max_items) {
				c->too_many = true;
				return -EBADMSG;
			}
			c->off++;
		} else if (btape_mp_skip(c, depth + 1)) {
			return -EBADMSG;
		}
	}
	return 0;
}

static int read_type(struct btape_mp *c, enum btape_mp_type type, struct btape_mp_val *v)
{
	if (btape_mp_read(c, v) || v->type != type)
		return -EBADMSG;
	return 0;
}

int btape_mp_map(struct btape_mp *c, uint32_t *pairs)
{
	struct btape_mp_val v;

	if (read_type(c, BTAPE_MP_MAP, &v))
		return -EBADMSG;
	*pairs = (uint32_t)v.u;
	return 0;
}

int btape_mp_array(struct btape_mp *c, uint32_t *n)
{
	struct btape_mp_val v;

	if (read_type(c, BTAPE_MP_ARRAY, &v))
		return -EBADMSG;
	*n = (uint32_t)v.u;
	return 0;
}

int btape_mp_uint(struct btape_mp *c, uint64_t *u)
{
	struct btape_mp_val v;

	if (read_type(c, BTAPE_MP_UINT, &v))
		return -EBADMSG;
	*u = v.u;
	return 0;
}

int btape_mp_int(struct btape_mp *c, int64_t *i)
{
	struct btape_mp_val v;

	if (btape_mp_read(c, &v) || (v.type != BTAPE_MP_UINT && v.type != BTAPE_MP_NINT) ||
	    (v.type == BTAPE_MP_UINT && v.u > INT64_MAX))
		return -EBADMSG;
	*i = (int64_t)v.u;
	return 0;
}

int btape_mp_str(struct btape_mp *c, const char **s, uint32_t *n)
{
	struct btape_mp_val v;

	if (read_type(c, BTAPE_MP_STR, &v))
		return -EBADMSG;
	*s = (const char *)v.ptr;
	*n = (uint32_t)v.u;
	return 0;
}

int btape_mp_key_read(struct btape_mp *c, int depth, const char **k, uint32_t *kn)
{
	size_t at = c->off;

	*k = NULL;
	*kn = 0;
	if (at < c->len &&
	    ((c->p[at] & 0xe0) == 0xa0 || c->p[at] == 0xd9 || c->p[at] == 0xda || c->p[at] == 0xdb))
		return btape_mp_str(c, k, kn);
	return btape_mp_skip(c, depth);
}

static int get_u32(struct btape_mp *c, uint32_t *v)
{
	uint64_t x;

	if (btape_mp_uint(c, &x) || x > UINT32_MAX)
		return -EBADMSG;
	*v = (uint32_t)x;
	return 0;
}

/* Copies a string into a fixed buffer; too long is damage (the writer never produces it). */
static int get_str(struct btape_mp *c, char *buf, size_t cap)
{
	const char *s;
	uint32_t n;

	if (btape_mp_str(c, &s, &n) || n >= cap)
		return -EBADMSG;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

/* A device map, at depth 2 (its keys and values at 3). */
static int unpack_device(struct btape_device *d, struct btape_mp *c)
{
	uint32_t pairs;
	int64_t rot = -1;

	memset(d, 0, sizeof(*d));
	d->rotational = -1;
	if (btape_mp_map(c, &pairs))
		return -EBADMSG;
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn;
		int err;

		if (btape_mp_key_read(c, 3, &k, &kn))
			return -EBADMSG;
		if (btape_mp_is(k, kn, "major"))
			err = get_u32(c, &d->dev_t_major);
		else if (btape_mp_is(k, kn, "minor"))
			err = get_u32(c, &d->dev_t_minor);
		else if (btape_mp_is(k, kn, "name"))
			err = get_str(c, d->name, sizeof(d->name));
		else if (btape_mp_is(k, kn, "model"))
			err = get_str(c, d->model, sizeof(d->model));
		else if (btape_mp_is(k, kn, "size"))
			err = btape_mp_uint(c, &d->size_bytes);
		else if (btape_mp_is(k, kn, "logical_block"))
			err = get_u32(c, &d->logical_block);
		else if (btape_mp_is(k, kn, "physical_block"))
			err = get_u32(c, &d->physical_block);
		else if (btape_mp_is(k, kn, "host"))
			err = get_str(c, d->host, sizeof(d->host));
		else if (btape_mp_is(k, kn, "rotational")) {
			err = btape_mp_int(c, &rot);
			if (!err && (rot < -1 || rot > 1))
				err = -EBADMSG;
			d->rotational = (int8_t)rot;
		} else {
			err = btape_mp_skip(c, 3);
		}
		if (err)
			return err;
	}
	return 0;
}

/* A tag, [key, value, ignored...], at depth 2. */
static int unpack_tag(struct btape_tag *t, struct btape_mp *c)
{
	uint32_t n;

	if (btape_mp_array(c, &n) || n < 2 || get_str(c, t->key, sizeof(t->key)) ||
	    get_str(c, t->value, sizeof(t->value)))
		return -EBADMSG;
	for (uint32_t i = 2; i < n; i++)
		if (btape_mp_skip(c, 3))
			return -EBADMSG;
	return 0;
}

/* A sync measurement, [local_ns, offset_ns, uncertainty_ns, ignored...], at depth DEPTH. */
static int unpack_sync(struct btape_clock_sync *s, struct btape_mp *c, int depth)
{
	uint32_t n;

	if (btape_mp_array(c, &n) || n < 3 || btape_mp_uint(c, &s->local_ns) ||
	    btape_mp_int(c, &s->offset_ns) || btape_mp_uint(c, &s->uncertainty_ns))
		return -EBADMSG;
	for (uint32_t i = 3; i < n; i++)
		if (btape_mp_skip(c, depth + 1))
			return -EBADMSG;
	return 0;
}

/* The cluster map at depth 1 (keys at depth 2). Syncs past BTAPE_CLOCK_SYNC_MAX are skipped. */
static int unpack_cluster(struct btape_cluster *cl, struct btape_mp *c)
{
	uint32_t pairs, n;

	memset(cl, 0, sizeof(*cl));
	if (btape_mp_map(c, &pairs))
		return -EBADMSG;
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn;
		int err = 0;

		if (btape_mp_key_read(c, 2, &k, &kn))
			return -EBADMSG;
		if (btape_mp_is(k, kn, "id"))
			err = get_str(c, cl->id, sizeof(cl->id));
		else if (btape_mp_is(k, kn, "reference"))
			err = get_str(c, cl->reference, sizeof(cl->reference));
		else if (btape_mp_is(k, kn, "method"))
			err = get_str(c, cl->method, sizeof(cl->method));
		else if (btape_mp_is(k, kn, "rank"))
			err = get_u32(c, &cl->rank);
		else if (btape_mp_is(k, kn, "ranks"))
			err = get_u32(c, &cl->ranks);
		else if (btape_mp_is(k, kn, "sync")) {
			if (btape_mp_array(c, &n) || cl->nsync)
				return -EBADMSG;
			for (uint32_t j = 0; j < n && !err; j++) {
				if (j < BTAPE_CLOCK_SYNC_MAX) {
					err = unpack_sync(&cl->sync[j], c, 3);
					if (!err && j && cl->sync[j].local_ns < cl->sync[j - 1].local_ns)
						err = -EBADMSG; /* not in time order */
					cl->nsync = j + 1;
				} else {
					err = btape_mp_skip(c, 3);
				}
			}
		} else {
			err = btape_mp_skip(c, 2);
		}
		if (err)
			return -EBADMSG;
	}
	return 0;
}

int btape_meta_unpack(struct btape_meta *m, const void *data, size_t len, char *errbuf,
		      size_t errlen)
{
	struct btape_mp c;
	char what[128] = "not a msgpack map";
	uint32_t pairs;
	int err = -EBADMSG;

	memset(m, 0, sizeof(*m));
	btape_mp_init(&c, data, len, BTAPE_META_MAX_ITEMS);
	if (len > BTAPE_META_MAX_BYTES) {
		snprintf(what, sizeof(what), "frame too large (%zu bytes, at most %u)", len,
			 BTAPE_META_MAX_BYTES);
		goto cleanup;
	}
	if (btape_mp_map(&c, &pairs))
		goto cleanup;
	err = 0;
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn, n;

		snprintf(what, sizeof(what), "bad map");
		err = btape_mp_key_read(&c, 1, &k, &kn);
		if (err)
			break;
		snprintf(what, sizeof(what), "bad value");
		if (btape_mp_is(k, kn, "tool"))
			err = get_str(&c, m->tool, sizeof(m->tool));
		else if (btape_mp_is(k, kn, "hostname"))
			err = get_str(&c, m->hostname, sizeof(m->hostname));
		else if (btape_mp_is(k, kn, "kernel"))
			err = get_str(&c, m->kernel, sizeof(m->kernel));
		else if (btape_mp_is(k, kn, "source"))
			err = get_str(&c, m->source, sizeof(m->source));
		else if (btape_mp_is(k, kn, "capture"))
			err = get_str(&c, m->capture, sizeof(m->capture));
		else if (btape_mp_is(k, kn, "clock_mono_ns"))
			err = btape_mp_uint(&c, &m->clock_mono_ns);
		else if (btape_mp_is(k, kn, "clock_real_ns"))
			err = btape_mp_uint(&c, &m->clock_real_ns);
		else if (btape_mp_is(k, kn, "devices")) {
			snprintf(what, sizeof(what), "bad device table");
			err = btape_mp_array(&c, &n);
			if (!err && m->devices)
				err = -EBADMSG; /* a second one */
			if (err || !n)
				goto next;
			if (n > BTAPE_DEVICES_MAX) {
				snprintf(what, sizeof(what),
					 "device table too large (%u entries, at most %u)", n,
					 BTAPE_DEVICES_MAX);
				err = -EBADMSG;
				goto next;
			}
			m->devices = calloc(n, sizeof(*m->devices));
			if (!m->devices) {
				err = -ENOMEM;
				goto next;
			}
			m->ndevices = n;
			for (uint32_t j = 0; j < n && !err; j++)
				err = unpack_device(&m->devices[j], &c);
		} else if (btape_mp_is(k, kn, "tags")) {
			snprintf(what, sizeof(what), "bad tags");
			err = btape_mp_array(&c, &n);
			if (!err && m->tags)
				err = -EBADMSG;
			if (err || !n)
				goto next;
			if (n > BTAPE_TAGS_MAX) {
				snprintf(what, sizeof(what), "too many tags (%u, at most %u)", n,
					 BTAPE_TAGS_MAX);
				err = -EBADMSG;
				goto next;
			}
			m->tags = calloc(n, sizeof(*m->tags));
			if (!m->tags) {
				err = -ENOMEM;
				goto next;
			}
			m->ntags = n;
			for (uint32_t j = 0; j < n && !err; j++)
				err = unpack_tag(&m->tags[j], &c);
		} else if (btape_mp_is(k, kn, "cluster")) {
			snprintf(what, sizeof(what), "bad cluster clock");
			err = unpack_cluster(&m->cluster, &c);
		} else {
			err = btape_mp_skip(&c, 1); /* unknown keys are ignored */
		}
next:
		if (err)
			break;
	}
	if (!err && c.off != len) {
		snprintf(what, sizeof(what), "bytes after the map");
		err = -EBADMSG;
	}
cleanup:
	if (err) {
		if (err == -ENOMEM)
			snprintf(what, sizeof(what), "out of memory");
		else if (c.too_many)
			snprintf(what, sizeof(what), "too many msgpack items (at most %u)",
				 BTAPE_META_MAX_ITEMS);
		snprintf(errbuf, errlen, "metadata: %s", what);
		btape_meta_free(m);
	}
	return err;
}

/* ---------------------------------------------------------------------------------------- */
/* Footer                                                                                   */

static void pack_u64_array(msgpack_packer *pk, const char *key, const uint64_t *a, uint64_t n)
{
	btape_mp_key(pk, key);
	msgpack_pack_array(pk, (size_t)n);
	for (uint64_t i = 0; i < n; i++)
		msgpack_pack_uint64(pk, a[i]);
}

int btape_summary_copy_out(struct btape_summary *dst, const struct btape_summary *src)
{
	size_t n;

	if (!dst || dst->sz < offsetof(struct btape_summary, events) + sizeof(dst->events))
		return -EINVAL;
	n = dst->sz < sizeof(*src) ? dst->sz : sizeof(*src);
	memcpy((char *)dst + sizeof(dst->sz), (const char *)src + sizeof(src->sz),
	       n - sizeof(dst->sz));
	return 0;
}

int btape_footer_pack(struct bbuf *out, const struct btape_summary *s, const struct btape_index *ix,
		      const struct btape_ftags *ft)
{
	msgpack_packer pk;
	bool tags = ft && ft->n;

	msgpack_packer_init(&pk, out, btape_mp_write);
	msgpack_pack_map(&pk, 11 + s->has_clock_stop + s->interrupted + tags);
	pack_ku(&pk, "events", s->events);
	pack_ku(&pk, "first_issue_ns", s->first_issue_ns);
	pack_ku(&pk, "last_issue_ns", s->last_issue_ns);
	pack_ku(&pk, "last_complete_ns", s->last_complete_ns);
	pack_u64_array(&pk, "count_by_op", s->count_by_op, BTAPE_OP__COUNT);
	pack_u64_array(&pk, "bytes_by_op", s->bytes_by_op, BTAPE_OP__COUNT);
	btape_mp_key(&pk, "lost");
	msgpack_pack_map(&pk, 4);
	pack_ku(&pk, "total", s->lost_events);
	pack_ku(&pk, "ringbuf", s->lost_ringbuf);
	pack_ku(&pk, "inflight", s->lost_inflight);
	pack_ku(&pk, "writer", s->lost_writer);
	pack_ku(&pk, "order_violations", s->order_violations);
	pack_ku(&pk, "chunks", ix->n);
	btape_mp_key(&pk, "index");
	msgpack_pack_map(&pk, 4);
	pack_u64_array(&pk, "offset", ix->offset, ix->n);
	pack_u64_array(&pk, "issue_min", ix->issue_min, ix->n);
	pack_u64_array(&pk, "issue_max", ix->issue_max, ix->n);
	pack_u64_array(&pk, "events", ix->events, ix->n);
	btape_mp_key(&pk, "writer");
	msgpack_pack_map(&pk, 1);
	pack_kstr(&pk, "version", BIOTAPE_VERSION);
	if (s->has_clock_stop) {
		btape_mp_key(&pk, "cluster_sync");
		msgpack_pack_array(&pk, 3);
		msgpack_pack_uint64(&pk, s->clock_stop.local_ns);
		msgpack_pack_int64(&pk, s->clock_stop.offset_ns);
		msgpack_pack_uint64(&pk, s->clock_stop.uncertainty_ns);
	}
	if (s->interrupted) {
		btape_mp_key(&pk, "interrupted");
		msgpack_pack_true(&pk);
	}
	if (tags)
		btape_ftags_pack(&pk, ft);
	return out->p ? 0 : -ENOMEM;
}

/* An array of uints at depth 1: the first n go to dst, the rest are ignored. */
static int get_u64_array(struct btape_mp *c, uint64_t *dst, uint32_t n)
{
	uint32_t size;

	if (btape_mp_array(c, &size))
		return -EBADMSG;
	for (uint32_t i = 0; i < size; i++)
		if (i < n ? btape_mp_uint(c, &dst[i]) : btape_mp_skip(c, 2))
			return -EBADMSG;
	return 0;
}

/*
 * The index map, at depth 1: four equal-length uint arrays. The arrays are walked once to
 * find and check them, then read into an index allocated once, at most max_chunks long.
 */
static int unpack_index(struct btape_index *ix, struct btape_mp *c, uint64_t max_chunks,
			const char **what)
{
	static const char *const names[4] = {"offset", "issue_min", "issue_max", "events"};
	size_t at[4] = {SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX};
	struct btape_mp col[4];
	uint64_t *dst[4];
	uint32_t pairs, n = 0;

	if (btape_mp_map(c, &pairs))
		return -EBADMSG;
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn;

		if (btape_mp_key_read(c, 2, &k, &kn))
			return -EBADMSG;
		for (int j = 0; j < 4; j++)
			if (btape_mp_is(k, kn, names[j]))
				at[j] = c->off; /* the last one counts */
		if (btape_mp_skip(c, 2))
			return -EBADMSG;
	}
	for (int j = 0; j < 4; j++) {
		uint32_t size;

		if (at[j] == SIZE_MAX)
			return -EBADMSG;
		btape_mp_init(&col[j], c->p, c->len, UINT64_MAX); /* counted in the walk */
		col[j].off = at[j];
		if (btape_mp_array(&col[j], &size) || (j && size != n))
			return -EBADMSG;
		n = size;
	}
	if (n > max_chunks) {
		*what = "index has more entries than the file has room for chunks";
		return -EBADMSG;
	}
	if (!n)
		return 0;
	for (int j = 0; j < 4; j++) {
		dst[j] = malloc(sizeof(uint64_t) * n);
		if (!dst[j]) {
			while (j--)
				free(dst[j]);
			return -ENOMEM;
		}
	}
	ix->offset = dst[0];
	ix->issue_min = dst[1];
	ix->issue_max = dst[2];
	ix->events = dst[3];
	ix->n = ix->cap = n;
	for (int j = 0; j < 4; j++)
		for (uint32_t i = 0; i < n; i++)
			if (btape_mp_uint(&col[j], &dst[j][i]))
				return -EBADMSG;
	return 0;
}

int btape_footer_unpack(struct btape_summary *s, struct btape_index *ix, struct btape_ftags *ft,
			const void *data, size_t len, uint64_t max_chunks, char *errbuf,
			size_t errlen)
{
	struct btape_mp c;
	const char *what = "bad footer map";
	bool have_index = false;
	uint32_t pairs;
	int err = -EBADMSG;

	memset(s, 0, sizeof(*s));
	memset(ix, 0, sizeof(*ix));
	btape_ftags_free(ft);
	if (max_chunks > UINT32_MAX)
		max_chunks = UINT32_MAX;
	btape_mp_init(&c, data, len, BTAPE_FOOTER_MAX_ITEMS(max_chunks));
	if (btape_mp_map(&c, &pairs))
		goto cleanup;
	err = 0;
	for (uint32_t i = 0; i < pairs; i++) {
		const char *k;
		uint32_t kn;

		err = btape_mp_key_read(&c, 1, &k, &kn);
		if (err)
			break;
		if (btape_mp_is(k, kn, "events"))
			err = btape_mp_uint(&c, &s->events);
		else if (btape_mp_is(k, kn, "first_issue_ns"))
			err = btape_mp_uint(&c, &s->first_issue_ns);
		else if (btape_mp_is(k, kn, "last_issue_ns"))
			err = btape_mp_uint(&c, &s->last_issue_ns);
		else if (btape_mp_is(k, kn, "last_complete_ns"))
			err = btape_mp_uint(&c, &s->last_complete_ns);
		else if (btape_mp_is(k, kn, "count_by_op"))
			err = get_u64_array(&c, s->count_by_op, BTAPE_OP__COUNT);
		else if (btape_mp_is(k, kn, "bytes_by_op"))
			err = get_u64_array(&c, s->bytes_by_op, BTAPE_OP__COUNT);
		else if (btape_mp_is(k, kn, "order_violations"))
			err = btape_mp_uint(&c, &s->order_violations);
		else if (btape_mp_is(k, kn, "cluster_sync")) {
			err = unpack_sync(&s->clock_stop, &c, 2);
			s->has_clock_stop = !err;
		} else if (btape_mp_is(k, kn, "interrupted")) {
			struct btape_mp_val v;

			err = btape_mp_read(&c, &v);
			if (!err && v.type != BTAPE_MP_BOOL)
				err = -EBADMSG;
			s->interrupted = !err && v.u;
		}
		else if (btape_mp_is(k, kn, "lost")) {
			uint32_t lp;

			err = btape_mp_map(&c, &lp);
			for (uint32_t j = 0; j < lp && !err; j++) {
				const char *lk;
				uint32_t lkn;

				err = btape_mp_key_read(&c, 2, &lk, &lkn);
				if (err)
					break;
				if (btape_mp_is(lk, lkn, "total"))
					err = btape_mp_uint(&c, &s->lost_events);
				else if (btape_mp_is(lk, lkn, "ringbuf"))
					err = btape_mp_uint(&c, &s->lost_ringbuf);
				else if (btape_mp_is(lk, lkn, "inflight"))
					err = btape_mp_uint(&c, &s->lost_inflight);
				else if (btape_mp_is(lk, lkn, "writer"))
					err = btape_mp_uint(&c, &s->lost_writer);
				else
					err = btape_mp_skip(&c, 2);
			}
		} else if (btape_mp_is(k, kn, "index")) {
			if (have_index) {
				err = -EBADMSG;
				break;
			}
			err = unpack_index(ix, &c, max_chunks, &what);
			have_index = true;
		} else if (btape_mp_is(k, kn, "tags")) {
			err = btape_ftags_unpack(ft, &c, &what);
		} else {
			err = btape_mp_skip(&c, 1);
		}
		if (err)
			break;
	}
	if (!err && (!have_index || c.off != len))
		err = -EBADMSG;
	if (!err)
		s->chunks = ix->n;
cleanup:
	if (err) {
		if (err == -ENOMEM)
			what = "out of memory";
		else if (c.too_many)
			what = "too many msgpack items";
		snprintf(errbuf, errlen, "footer: %s", what);
		btape_index_free(ix);
		btape_ftags_free(ft);
	}
	return err;
}
