/* SPDX-License-Identifier: GPL-2.0-only */
/* Renderers of a finished analysis (text, JSON, HTML) and of a comparison of two. */
#ifndef BIOTAPE_ANALYZE_RENDER_H
#define BIOTAPE_ANALYZE_RENDER_H

#include "input.h"
#include "stats.h"

#include <stdio.h>

#define ANALYZE_JSON_SCHEMA "biotape.analyze/1"
#define COMPARE_JSON_SCHEMA "biotape.compare/1"

struct fidelity;

struct report {
	const struct stats *s;
	const struct an_info *info;
	char *const *paths;
	int npaths;
	bool interval_given; /* --interval: print every timeline row */
	const char *label;   /* "A" / "B" in comparisons; NULL otherwise */
	const struct fidelity *fid; /* compare: B's fidelity to A (analyze/fidelity.h), or NULL */
	/* compare: the fidelity section `biotape replay -o` stored in this trace (its footer tag
	 * BTAPE_TAG_FIDELITY, msgpack; an_load_replay_fidelity()), or NULL */
	void *replay_fid;
	size_t replay_fid_len;
};

/* Each returns 0 or -errno (write errors are reported by the caller's cli_out_commit). */
int render_text(FILE *fp, const struct report *r);
int render_json(FILE *fp, const struct report *r);
int render_html(FILE *fp, const struct report *r);
int render_compare_text(FILE *fp, const struct report *a, const struct report *b);
/* A line per thing that makes r's counts lower bounds (events the recorder lost, a file cut
 * short or stopped early), each led by LEAD ("  WARNING: ", "; WARNING: "); none: nothing. */
void render_text_warnings(FILE *fp, const struct report *r, const char *lead);
int render_compare_json(FILE *fp, const struct report *a, const struct report *b);
int render_compare_html(FILE *fp, const struct report *a, const struct report *b);
/* Loads r->replay_fid from r's trace when it is one file that has it (a replay result). */
void an_load_replay_fidelity(struct report *r);

/* Shared helpers (render_common.c). */
extern const double REPORT_QUANTILES[5]; /* 0.5, 0.9, 0.99, 0.999, 1 */
extern const char *const REPORT_QUANTILE_NAMES[5];
/* Ops in display order that have at least one event. */
int report_ops(const struct stats *s, unsigned int *ops);
/* Time of the analysis origin relative to the trace start, ns. */
uint64_t report_origin_rel(const struct stats *s);
/* "1.23 ms" style (3 significant digits) for ns; "-" for a missing value. */
const char *fmt_lat(double ns, char *buf, size_t len);
/* "12.3 MiB/s" */
const char *fmt_rate_bytes(double bps, char *buf, size_t len);
/* "1,234,567" */
const char *fmt_count(uint64_t v, char *buf, size_t len);
/* "4 KiB", "1.5 MiB", "512 B" exact where possible */
const char *fmt_size(uint64_t b, char *buf, size_t len);

/* Header lines of the text report (files, source, warnings, window). */
void render_text_header(FILE *fp, const struct report *r);
/* Used processes sorted by I/O count, descending (caller frees *out); -1 on ENOMEM. */
int report_procs(const struct stats *s, const struct procstat ***out);

/* Minimal JSON writer with comma handling. */
struct jw {
	FILE *fp;
	int depth;
	bool first[64];
	bool pretty;
};
void jw_begin(struct jw *j, FILE *fp);
void jw_obj(struct jw *j, const char *key);
void jw_arr(struct jw *j, const char *key);
void jw_end_obj(struct jw *j);
void jw_end_arr(struct jw *j);
void jw_u64(struct jw *j, const char *key, uint64_t v);
void jw_i64(struct jw *j, const char *key, int64_t v);
void jw_dbl(struct jw *j, const char *key, double v); /* null when not finite */
void jw_str(struct jw *j, const char *key, const char *v);
void jw_bool(struct jw *j, const char *key, bool v);
void jw_null(struct jw *j, const char *key);
/* One msgpack value (LEN bytes at MP) as JSON (common/mpjson.h); null when malformed. */
void jw_msgpack(struct jw *j, const char *key, const void *mp, size_t len);

/* The members of the analyze JSON object (inside an open object), and a histogram's buckets. */
int render_json_body(struct jw *j, const struct report *r);
void j_hist_buckets(struct jw *j, const char *key, const struct hist *h);

/* Derived values shared by the renderers of the profile and the comparison. */
struct op_summary {
	uint64_t n, bytes;
	bool has_lat;
	uint64_t q[5]; /* device-time quantiles (REPORT_QUANTILES) */
	double mean;
};
void report_op_summary(const struct stats *s, unsigned int op, struct op_summary *o);
/* Total variation distance between two ops' size distributions (NaN when one is empty). */
double report_size_tvd(const struct opstat *a, const struct opstat *b);
/* The depths of band k (stats_qd_band()) as "1", "3-4" or "65+" into buf. */
const char *report_qd_band_name(unsigned int k, char *buf, size_t len);

#endif
