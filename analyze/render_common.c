// SPDX-License-Identifier: GPL-2.0-only
/* Helpers shared by the renderers. */
#include "render.h"
#include "cli.h"
#include "mpjson.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

const double REPORT_QUANTILES[5] = {0.5, 0.9, 0.99, 0.999, 1.0};
const char *const REPORT_QUANTILE_NAMES[5] = {"p50", "p90", "p99", "p99.9", "max"};

static const unsigned int op_order[] = {
	BTAPE_OP_READ,	       BTAPE_OP_WRITE,	      BTAPE_OP_FLUSH,	    BTAPE_OP_DISCARD,
	BTAPE_OP_WRITE_ZEROES, BTAPE_OP_SECURE_ERASE, BTAPE_OP_ZONE_APPEND, BTAPE_OP_ZONE_OPEN,
	BTAPE_OP_ZONE_CLOSE,   BTAPE_OP_ZONE_FINISH,  BTAPE_OP_ZONE_RESET,  BTAPE_OP_ZONE_RESET_ALL,
	BTAPE_OP_OTHER,
};

int report_ops(const struct stats *s, unsigned int *ops)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(op_order) / sizeof(op_order[0]); i++)
		if (s->ops[op_order[i]].n)
			ops[n++] = op_order[i];
	return n;
}

uint64_t report_origin_rel(const struct stats *s)
{
	return s->origin_ns > s->trace_start_ns ? s->origin_ns - s->trace_start_ns : 0;
}

const char *fmt_lat(double ns, char *buf, size_t len)
{
	if (!isfinite(ns) || ns < 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	const char *u = "ns";
	double v = ns;

	if (ns >= 1e9) {
		v = ns / 1e9;
		u = "s";
	} else if (ns >= 1e6) {
		v = ns / 1e6;
		u = "ms";
	} else if (ns >= 1e3) {
		v = ns / 1e3;
		u = "us";
	}
	snprintf(buf, len, "%.*f %s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, u);
	if (v == floor(v) && strcmp(u, "ns") == 0)
		snprintf(buf, len, "%.0f ns", v);
	return buf;
}

const char *fmt_rate_bytes(double bps, char *buf, size_t len)
{
	static const char *u[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
	int k = 0;

	while (bps >= 1024 && k < 4) {
		bps /= 1024;
		k++;
	}
	snprintf(buf, len, "%.*f %s", bps >= 100 || k == 0 ? 0 : bps >= 10 ? 1 : 2, bps, u[k]);
	return buf;
}

const char *fmt_count(uint64_t v, char *buf, size_t len)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

const char *fmt_size(uint64_t b, char *buf, size_t len)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	int k = 0;
	uint64_t v = b;

	while (v >= 1024 && v % 1024 == 0 && k < 6) {
		v /= 1024;
		k++;
	}
	if (k > 0 || b < 1024) {
		snprintf(buf, len, "%" PRIu64 " %s", v, u[k]);
		return buf;
	}
	return cli_fmt_bytes(b, buf, len);
}

void report_op_summary(const struct stats *s, unsigned int op, struct op_summary *o)
{
	const struct opstat *st = &s->ops[op];

	memset(o, 0, sizeof(*o));
	o->n = st->n;
	o->bytes = st->bytes;
	if (st->lat_dev && st->lat_dev->count) {
		o->has_lat = true;
		for (int i = 0; i < 5; i++)
			o->q[i] = hist_quantile(st->lat_dev, REPORT_QUANTILES[i]);
		o->mean = hist_mean(st->lat_dev);
	}
}

/* ---- JSON writer ---- */

void jw_begin(struct jw *j, FILE *fp)
{
	memset(j, 0, sizeof(*j));
	j->fp = fp;
	j->first[0] = true;
}

static void jw_key(struct jw *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->fp);
	j->first[j->depth] = false;
	if (key) {
		cli_json_str(j->fp, key);
		fputc(':', j->fp);
	}
}

void jw_obj(struct jw *j, const char *key)
{
	jw_key(j, key);
	fputc('{', j->fp);
	j->first[++j->depth] = true;
}

void jw_arr(struct jw *j, const char *key)
{
	jw_key(j, key);
	fputc('[', j->fp);
	j->first[++j->depth] = true;
}

void jw_end_obj(struct jw *j)
{
	fputc('}', j->fp);
	j->depth--;
	if (j->depth == 0)
		fputc('\n', j->fp);
}

void jw_end_arr(struct jw *j)
{
	fputc(']', j->fp);
	j->depth--;
}

void jw_u64(struct jw *j, const char *key, uint64_t v)
{
	jw_key(j, key);
	fprintf(j->fp, "%" PRIu64, v);
}

void jw_i64(struct jw *j, const char *key, int64_t v)
{
	jw_key(j, key);
	fprintf(j->fp, "%" PRId64, v);
}

void jw_dbl(struct jw *j, const char *key, double v)
{
	jw_key(j, key);
	if (isfinite(v))
		fprintf(j->fp, "%.10g", v);
	else
		fputs("null", j->fp);
}

void jw_str(struct jw *j, const char *key, const char *v)
{
	jw_key(j, key);
	cli_json_str(j->fp, v);
}

void jw_bool(struct jw *j, const char *key, bool v)
{
	jw_key(j, key);
	fputs(v ? "true" : "false", j->fp);
}

void jw_null(struct jw *j, const char *key)
{
	jw_key(j, key);
	fputs("null", j->fp);
}

void jw_msgpack(struct jw *j, const char *key, const void *mp, size_t len)
{
	jw_key(j, key);
	if (mpjson_write(j->fp, mp, len))
		fputs("null", j->fp);
}

const char *report_qd_band_name(unsigned int k, char *buf, size_t len)
{
	uint64_t lo, hi;

	stats_qd_band_range(k, &lo, &hi);
	if (lo == hi)
		snprintf(buf, len, "%" PRIu64, lo);
	else if (hi == UINT64_MAX)
		snprintf(buf, len, "%" PRIu64 "+", lo);
	else
		snprintf(buf, len, "%" PRIu64 "-%" PRIu64, lo, hi);
	return buf;
}
