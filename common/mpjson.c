// SPDX-License-Identifier: GPL-2.0-only
#include "mpjson.h"
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

/* The shortest of %.15g, %.16g, %.17g that reads back as x; null when x is not finite. */
static void json_double(FILE *fp, double x)
{
	char b[40];

	if (!isfinite(x)) {
		fputs("null", fp);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, x);
		if (strtod(b, NULL) == x)
			break;
	}
	fputs(b, fp);
}

static bool scalar(const msgpack_object *o)
{
	return o->type != MSGPACK_OBJECT_ARRAY && o->type != MSGPACK_OBJECT_MAP;
}

static void json_obj(FILE *fp, const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
	case MSGPACK_OBJECT_EXT:
		fputs("null", fp);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		fputs(o->via.boolean ? "true" : "false", fp);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		fprintf(fp, "%" PRIu64, o->via.u64);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		fprintf(fp, "%" PRId64, o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		json_double(fp, o->via.f64);
		break;
	case MSGPACK_OBJECT_STR:
		cli_json_strn(fp, o->via.str.ptr, o->via.str.size);
		break;
	case MSGPACK_OBJECT_BIN:
		fputc('"', fp);
		for (uint32_t i = 0; i < o->via.bin.size; i++)
			fprintf(fp, "%02x", (unsigned char)o->via.bin.ptr[i]);
		fputc('"', fp);
		break;
	case MSGPACK_OBJECT_ARRAY:
		fputc('[', fp);
		for (uint32_t i = 0; i < o->via.array.size; i++) {
			if (i)
				fputc(',', fp);
			json_obj(fp, &o->via.array.ptr[i]);
		}
		fputc(']', fp);
		break;
	case MSGPACK_OBJECT_MAP:
		fputc('{', fp);
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			const msgpack_object_kv *kv = &o->via.map.ptr[i];

			if (i)
				fputc(',', fp);
			if (kv->key.type == MSGPACK_OBJECT_STR) {
				json_obj(fp, &kv->key);
			} else {
				/* JSON keys are strings: a number's text, anything else null */
				char b[32] = "null";

				if (kv->key.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
					snprintf(b, sizeof(b), "%" PRIu64, kv->key.via.u64);
				else if (kv->key.type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
					snprintf(b, sizeof(b), "%" PRId64, kv->key.via.i64);
				cli_json_strn(fp, b, strlen(b));
			}
			fputc(':', fp);
			json_obj(fp, &kv->val);
		}
		fputc('}', fp);
		break;
	}
}

static void text_obj(FILE *fp, const msgpack_object *o, const char *indent, int depth);

/* A map's members, one a line, DEPTH steps of two spaces in from INDENT. */
static void text_members(FILE *fp, const msgpack_object *o, const char *indent, int depth)
{
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		fprintf(fp, "%s%*s", indent, 2 * depth, "");
		if (kv->key.type == MSGPACK_OBJECT_STR)
			fprintf(fp, "%.*s:", (int)kv->key.via.str.size, kv->key.via.str.ptr);
		else {
			json_obj(fp, &kv->key);
			fputc(':', fp);
		}
		text_obj(fp, &kv->val, indent, depth);
	}
}

/* A member's value, after its "key:". */
static void text_obj(FILE *fp, const msgpack_object *o, const char *indent, int depth)
{
	bool inline_array = o->type == MSGPACK_OBJECT_ARRAY &&
			    o->via.array.size <= MPJSON_TEXT_ITEMS;

	for (uint32_t i = 0; inline_array && i < o->via.array.size; i++)
		inline_array = scalar(&o->via.array.ptr[i]);
	if (o->type == MSGPACK_OBJECT_MAP) {
		fputc('\n', fp);
		text_members(fp, o, indent, depth + 1);
		return;
	}
	fputc(' ', fp);
	if (o->type == MSGPACK_OBJECT_ARRAY && !inline_array)
		fprintf(fp, "%" PRIu32 " values", o->via.array.size);
	else if ((o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64) &&
		 isfinite(o->via.f64))
		fprintf(fp, "%.6g", o->via.f64); /* text is read by people: 6 digits */
	else
		json_obj(fp, o);
	fputc('\n', fp);
}

/* Unpacks exactly one value: 0 (*res holds it: msgpack_unpacked_destroy) or -EBADMSG. */
static int unpack_one(msgpack_unpacked *res, const void *mp, size_t len)
{
	size_t off = 0;

	msgpack_unpacked_init(res);
	if (!mp || msgpack_unpack_next(res, mp, len, &off) != MSGPACK_UNPACK_SUCCESS ||
	    off != len) {
		msgpack_unpacked_destroy(res);
		return -EBADMSG;
	}
	return 0;
}

int mpjson_write(FILE *fp, const void *mp, size_t len)
{
	msgpack_unpacked res;

	if (unpack_one(&res, mp, len))
		return -EBADMSG;
	json_obj(fp, &res.data);
	msgpack_unpacked_destroy(&res);
	return 0;
}

int mpjson_text(FILE *fp, const void *mp, size_t len, const char *indent)
{
	msgpack_unpacked res;

	if (unpack_one(&res, mp, len))
		return -EBADMSG;
	if (res.data.type == MSGPACK_OBJECT_MAP) {
		text_members(fp, &res.data, indent, 0);
	} else {
		fputs(indent, fp);
		json_obj(fp, &res.data);
		fputc('\n', fp);
	}
	msgpack_unpacked_destroy(&res);
	return 0;
}

/* The member KEY (KLEN bytes) of map O, or NULL. */
static const msgpack_object *member(const msgpack_object *o, const char *key, size_t klen)
{
	if (o->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
		    !memcmp(k->via.str.ptr, key, klen))
			return &o->via.map.ptr[i].val;
	}
	return NULL;
}

int mpjson_number(const void *mp, size_t len, const char *path, double *out)
{
	msgpack_unpacked res;
	const msgpack_object *o;
	int ret = -ENOENT;

	if (unpack_one(&res, mp, len))
		return -EBADMSG;
	o = &res.data;
	for (const char *p = path; o;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		o = member(o, p, n);
		if (!dot)
			break;
		p = dot + 1;
	}
	if (o) {
		switch (o->type) {
		case MSGPACK_OBJECT_POSITIVE_INTEGER:
			*out = (double)o->via.u64;
			ret = 0;
			break;
		case MSGPACK_OBJECT_NEGATIVE_INTEGER:
			*out = (double)o->via.i64;
			ret = 0;
			break;
		case MSGPACK_OBJECT_FLOAT32:
		case MSGPACK_OBJECT_FLOAT64:
			*out = o->via.f64;
			ret = 0;
			break;
		case MSGPACK_OBJECT_BOOLEAN:
			*out = o->via.boolean ? 1 : 0;
			ret = 0;
			break;
		case MSGPACK_OBJECT_NIL:
			*out = NAN;
			ret = 0;
			break;
		default:
			break;
		}
	}
	msgpack_unpacked_destroy(&res);
	return ret;
}
