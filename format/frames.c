// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libbiotape: metadata and footer frames (msgpack maps), see docs/FORMAT.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "btape_internal.h"
#include "mp_internal.h"

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

int btape_meta_pack(struct bbuf *out, const struct btape_meta *m)
{
	msgpack_packer pk;

	msgpack_packer_init(&pk, out, btape_mp_write);
	msgpack_pack_map(&pk, 10);
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

		msgpack_pack_map(&pk, 8);
		pack_ku(&pk, "major", d->dev_t_major);
		pack_ku(&pk, "minor", d->dev_t_minor);
		pack_kstr(&pk, "name", d->name);
		pack_kstr(&pk, "model", d->model);
		pack_ku(&pk, "size", d->size_bytes);
		pack_ku(&pk, "logical_block", d->logical_block);
		pack_ku(&pk, "physical_block", d->physical_block);
		pack_ki(&pk, "rotational", d->rotational);
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
	return out->p ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------------------------------- */
/* Bounds-checked structural validation before msgpack-c builds objects: every declared      */
/* array/map count must fit in the bytes left, nesting is limited.                           */

static int mp_skip(const uint8_t *p, size_t len, size_t *off, int depth)
{
	size_t o = *off, n = 0, body = 0;
	uint64_t items = 0;
	uint8_t c;

	if (depth > 16 || o >= len)
		return -1;
	c = p[o++];
	if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3) {
		/* fixint, nil, bool */
	} else if ((c & 0xf0) == 0x80) {
		items = (uint64_t)(c & 0x0f) * 2;
	} else if ((c & 0xf0) == 0x90) {
		items = c & 0x0f;
	} else if ((c & 0xe0) == 0xa0) {
		body = c & 0x1f;
	} else {
		switch (c) {
		case 0xc4:
		case 0xd9:
			n = 1;
			break;
		case 0xc5:
		case 0xda:
			n = 2;
			break;
		case 0xc6:
		case 0xdb:
			n = 4;
			break;
		case 0xcc:
		case 0xd0:
			body = 1;
			break;
		case 0xcd:
		case 0xd1:
			body = 2;
			break;
		case 0xca:
		case 0xce:
		case 0xd2:
			body = 4;
			break;
		case 0xcb:
		case 0xcf:
		case 0xd3:
			body = 8;
			break;
		case 0xd4:
			body = 2;
			break;
		case 0xd5:
			body = 3;
			break;
		case 0xd6:
			body = 5;
			break;
		case 0xd7:
			body = 9;
			break;
		case 0xd8:
			body = 17;
			break;
		case 0xc7:
			n = 1;
			body = 1;
			break;
		case 0xc8:
			n = 2;
			body = 1;
			break;
		case 0xc9:
			n = 4;
			body = 1;
			break;
		case 0xdc:
			n = 2;
			items = 1;
			break;
		case 0xdd:
			n = 4;
			items = 1;
			break;
		case 0xde:
			n = 2;
			items = 2;
			break;
		case 0xdf:
			n = 4;
			items = 2;
			break;
		default:
			return -1;
		}
		if (n) {
			uint64_t v = 0;

			if (len - o < n)
				return -1;
			for (size_t i = 0; i < n; i++)
				v = (v << 8) | p[o + i];
			o += n;
			if (items)
				items *= v;
			else
				body += v;
		}
	}
	if (body) {
		if (len - o < body)
			return -1;
		o += body;
	}
	if (items > len - o)
		return -1;
	for (uint64_t i = 0; i < items; i++)
		if (mp_skip(p, len, &o, depth + 1))
			return -1;
	*off = o;
	return 0;
}

int btape_mp_unpack(msgpack_unpacked *u, const void *data, size_t len)
{
	size_t off = 0;

	if (mp_skip(data, len, &off, 0) || off != len)
		return -EBADMSG;
	off = 0;
	msgpack_unpacked_init(u);
	if (msgpack_unpack_next(u, data, len, &off) != MSGPACK_UNPACK_SUCCESS) {
		msgpack_unpacked_destroy(u);
		return -EBADMSG;
	}
	if (u->data.type != MSGPACK_OBJECT_MAP) {
		msgpack_unpacked_destroy(u);
		return -EBADMSG;
	}
	return 0;
}

bool btape_mp_keyis(const msgpack_object *k, const char *name)
{
	size_t n = strlen(name);

	return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
	       !memcmp(k->via.str.ptr, name, n);
}

int btape_mp_u64(const msgpack_object *o, uint64_t *v)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -EBADMSG;
	*v = o->via.u64;
	return 0;
}

static int get_i64(const msgpack_object *o, int64_t *v)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		if (o->via.u64 > INT64_MAX)
			return -EBADMSG;
		*v = (int64_t)o->via.u64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*v = o->via.i64;
		return 0;
	}
	return -EBADMSG;
}

static int get_u32(const msgpack_object *o, uint32_t *v)
{
	uint64_t x;

	if (btape_mp_u64(o, &x) || x > UINT32_MAX)
		return -EBADMSG;
	*v = (uint32_t)x;
	return 0;
}

/* Copies a string into a fixed buffer; too long is damage (the writer never produces it). */
static int get_str(const msgpack_object *o, char *buf, size_t cap)
{
	if (o->type != MSGPACK_OBJECT_STR || o->via.str.size >= cap)
		return -EBADMSG;
	memcpy(buf, o->via.str.ptr, o->via.str.size);
	buf[o->via.str.size] = '\0';
	return 0;
}

static int unpack_device(struct btape_device *d, const msgpack_object *o)
{
	int64_t rot = -1;

	memset(d, 0, sizeof(*d));
	d->rotational = -1;
	if (o->type != MSGPACK_OBJECT_MAP)
		return -EBADMSG;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
		int err = 0;

		if (btape_mp_keyis(k, "major"))
			err = get_u32(v, &d->dev_t_major);
		else if (btape_mp_keyis(k, "minor"))
			err = get_u32(v, &d->dev_t_minor);
		else if (btape_mp_keyis(k, "name"))
			err = get_str(v, d->name, sizeof(d->name));
		else if (btape_mp_keyis(k, "model"))
			err = get_str(v, d->model, sizeof(d->model));
		else if (btape_mp_keyis(k, "size"))
			err = btape_mp_u64(v, &d->size_bytes);
		else if (btape_mp_keyis(k, "logical_block"))
			err = get_u32(v, &d->logical_block);
		else if (btape_mp_keyis(k, "physical_block"))
			err = get_u32(v, &d->physical_block);
		else if (btape_mp_keyis(k, "rotational")) {
			err = get_i64(v, &rot);
			if (!err && (rot < -1 || rot > 1))
				err = -EBADMSG;
			d->rotational = (int8_t)rot;
		}
		if (err)
			return err;
	}
	return 0;
}

int btape_meta_unpack(struct btape_meta *m, const void *data, size_t len, char *errbuf,
		      size_t errlen)
{
	msgpack_unpacked u;
	const char *what = "not a msgpack map";
	int err;

	memset(m, 0, sizeof(*m));
	err = btape_mp_unpack(&u, data, len);
	if (err)
		goto cleanup;
	for (uint32_t i = 0; i < u.data.via.map.size && !err; i++) {
		const msgpack_object *k = &u.data.via.map.ptr[i].key;
		const msgpack_object *v = &u.data.via.map.ptr[i].val;

		what = "bad value";
		if (btape_mp_keyis(k, "tool"))
			err = get_str(v, m->tool, sizeof(m->tool));
		else if (btape_mp_keyis(k, "hostname"))
			err = get_str(v, m->hostname, sizeof(m->hostname));
		else if (btape_mp_keyis(k, "kernel"))
			err = get_str(v, m->kernel, sizeof(m->kernel));
		else if (btape_mp_keyis(k, "source"))
			err = get_str(v, m->source, sizeof(m->source));
		else if (btape_mp_keyis(k, "capture"))
			err = get_str(v, m->capture, sizeof(m->capture));
		else if (btape_mp_keyis(k, "clock_mono_ns"))
			err = btape_mp_u64(v, &m->clock_mono_ns);
		else if (btape_mp_keyis(k, "clock_real_ns"))
			err = btape_mp_u64(v, &m->clock_real_ns);
		else if (btape_mp_keyis(k, "devices")) {
			what = "bad device table";
			if (v->type != MSGPACK_OBJECT_ARRAY || m->devices) {
				err = -EBADMSG;
				break;
			}
			if (!v->via.array.size)
				continue;
			m->devices = calloc(v->via.array.size, sizeof(*m->devices));
			if (!m->devices) {
				err = -ENOMEM;
				break;
			}
			m->ndevices = v->via.array.size;
			for (uint32_t j = 0; j < v->via.array.size && !err; j++)
				err = unpack_device(&m->devices[j], &v->via.array.ptr[j]);
		} else if (btape_mp_keyis(k, "tags")) {
			what = "bad tags";
			if (v->type != MSGPACK_OBJECT_ARRAY || m->tags) {
				err = -EBADMSG;
				break;
			}
			if (!v->via.array.size)
				continue;
			m->tags = calloc(v->via.array.size, sizeof(*m->tags));
			if (!m->tags) {
				err = -ENOMEM;
				break;
			}
			m->ntags = v->via.array.size;
			for (uint32_t j = 0; j < v->via.array.size && !err; j++) {
				const msgpack_object *t = &v->via.array.ptr[j];

				if (t->type != MSGPACK_OBJECT_ARRAY || t->via.array.size < 2) {
					err = -EBADMSG;
					break;
				}
				err = get_str(&t->via.array.ptr[0], m->tags[j].key,
					      sizeof(m->tags[j].key));
				if (!err)
					err = get_str(&t->via.array.ptr[1], m->tags[j].value,
						      sizeof(m->tags[j].value));
			}
		}
		/* unknown keys are ignored */
	}
	msgpack_unpacked_destroy(&u);
cleanup:
	if (err) {
		snprintf(errbuf, errlen, "metadata: %s", err == -ENOMEM ? "out of memory" : what);
		btape_meta__free(m);
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

int btape_footer_pack(struct bbuf *out, const struct btape_summary *s, const struct btape_index *ix)
{
	msgpack_packer pk;

	msgpack_packer_init(&pk, out, btape_mp_write);
	msgpack_pack_map(&pk, 11);
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
	return out->p ? 0 : -ENOMEM;
}

static int get_u64_array(const msgpack_object *o, uint64_t *dst, uint64_t n, bool exact)
{
	if (o->type != MSGPACK_OBJECT_ARRAY || (exact && o->via.array.size != n))
		return -EBADMSG;
	for (uint64_t i = 0; i < n && i < o->via.array.size; i++)
		if (btape_mp_u64(&o->via.array.ptr[i], &dst[i]))
			return -EBADMSG;
	return 0;
}

static int unpack_index(struct btape_index *ix, const msgpack_object *o)
{
	const msgpack_object *cols[4] = {NULL};
	static const char *const names[4] = {"offset", "issue_min", "issue_max", "events"};
	uint64_t n;

	if (o->type != MSGPACK_OBJECT_MAP)
		return -EBADMSG;
	for (uint32_t i = 0; i < o->via.map.size; i++)
		for (int c = 0; c < 4; c++)
			if (btape_mp_keyis(&o->via.map.ptr[i].key, names[c]))
				cols[c] = &o->via.map.ptr[i].val;
	for (int c = 0; c < 4; c++)
		if (!cols[c] || cols[c]->type != MSGPACK_OBJECT_ARRAY ||
		    cols[c]->via.array.size != cols[0]->via.array.size)
			return -EBADMSG;
	n = cols[0]->via.array.size;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v[4];

		for (int c = 0; c < 4; c++)
			if (btape_mp_u64(&cols[c]->via.array.ptr[i], &v[c]))
				return -EBADMSG;
		if (btape_index_add(ix, v[0], v[1], v[2], v[3]))
			return -ENOMEM;
	}
	return 0;
}

int btape_footer_unpack(struct btape_summary *s, struct btape_index *ix, const void *data,
			size_t len, char *errbuf, size_t errlen)
{
	msgpack_unpacked u;
	bool have_index = false;
	int err;

	memset(s, 0, sizeof(*s));
	err = btape_mp_unpack(&u, data, len);
	if (err)
		goto cleanup;
	for (uint32_t i = 0; i < u.data.via.map.size && !err; i++) {
		const msgpack_object *k = &u.data.via.map.ptr[i].key;
		const msgpack_object *v = &u.data.via.map.ptr[i].val;

		if (btape_mp_keyis(k, "events"))
			err = btape_mp_u64(v, &s->events);
		else if (btape_mp_keyis(k, "first_issue_ns"))
			err = btape_mp_u64(v, &s->first_issue_ns);
		else if (btape_mp_keyis(k, "last_issue_ns"))
			err = btape_mp_u64(v, &s->last_issue_ns);
		else if (btape_mp_keyis(k, "last_complete_ns"))
			err = btape_mp_u64(v, &s->last_complete_ns);
		else if (btape_mp_keyis(k, "count_by_op"))
			err = get_u64_array(v, s->count_by_op, BTAPE_OP__COUNT, false);
		else if (btape_mp_keyis(k, "bytes_by_op"))
			err = get_u64_array(v, s->bytes_by_op, BTAPE_OP__COUNT, false);
		else if (btape_mp_keyis(k, "order_violations"))
			err = btape_mp_u64(v, &s->order_violations);
		else if (btape_mp_keyis(k, "lost")) {
			if (v->type != MSGPACK_OBJECT_MAP) {
				err = -EBADMSG;
				break;
			}
			for (uint32_t j = 0; j < v->via.map.size && !err; j++) {
				const msgpack_object *lk = &v->via.map.ptr[j].key;
				const msgpack_object *lv = &v->via.map.ptr[j].val;

				if (btape_mp_keyis(lk, "total"))
					err = btape_mp_u64(lv, &s->lost_events);
				else if (btape_mp_keyis(lk, "ringbuf"))
					err = btape_mp_u64(lv, &s->lost_ringbuf);
				else if (btape_mp_keyis(lk, "inflight"))
					err = btape_mp_u64(lv, &s->lost_inflight);
				else if (btape_mp_keyis(lk, "writer"))
					err = btape_mp_u64(lv, &s->lost_writer);
			}
		} else if (btape_mp_keyis(k, "index")) {
			if (have_index) {
				err = -EBADMSG;
				break;
			}
			err = unpack_index(ix, v);
			have_index = true;
		}
	}
	if (!err && !have_index)
		err = -EBADMSG;
	if (!err)
		s->chunks = ix->n;
	msgpack_unpacked_destroy(&u);
cleanup:
	if (err) {
		snprintf(errbuf, errlen, "footer: %s",
			 err == -ENOMEM ? "out of memory" : "bad footer map");
		btape_index_free(ix);
	}
	return err;
}
