// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The import driver. Two passes over the input: the first builds the device table (which the
 * .btape metadata needs before the first event) and validates every line, so that a bad input
 * fails before anything is written; the second writes. Both passes run the same parser, so
 * they agree on devices and line numbers. Sorting uses the writer's bounded reorder buffer:
 * the watermark trails the newest issue time by the reorder window.
 */
#include "interop_internal.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_REORDER_WINDOW_NS (2ull * 1000000000)
#define DEFAULT_REORDER_EVENTS (1u << 20)
#define BLKTRACE_FILES_MAX 4096

/* ---- formats ---- */

static const struct fmtinfo {
	const char *name;
	const char *alias;
	int (*line)(struct imp *im, char *line, size_t len);
	bool numeric_header_skip; /* a first line starting with a letter is a column header */
} fmts[BTAPE_FMT__COUNT] = {
	[BTAPE_FMT_UNKNOWN] = {"unknown", NULL, NULL, false},
	[BTAPE_FMT_BTAPE] = {"btape", NULL, NULL, false},
	[BTAPE_FMT_BLKTRACE] = {"blktrace", NULL, NULL, false},
	[BTAPE_FMT_BLKPARSE] = {"blkparse", NULL, parse_blkparse_line, false},
	[BTAPE_FMT_FIO2] = {"fio2", "fio-v2", parse_fio_line, false},
	[BTAPE_FMT_FIO3] = {"fio3", "fio", parse_fio_line, false},
	[BTAPE_FMT_MSR] = {"msr", NULL, parse_msr_line, true},
	[BTAPE_FMT_ALIBABA] = {"alibaba", NULL, parse_alibaba_line, true},
	[BTAPE_FMT_TENCENT] = {"tencent", NULL, parse_tencent_line, true},
	[BTAPE_FMT_UMASS] = {"umass", "spc", parse_umass_line, true},
	[BTAPE_FMT_FIU] = {"fiu", NULL, parse_fiu_line, true},
	[BTAPE_FMT_MQSIM] = {"mqsim", "disksim", parse_mqsim_line, true},
	[BTAPE_FMT_VSCSI] = {"vscsi", NULL, NULL, false},
	[BTAPE_FMT_CSV] = {"csv", NULL, parse_csv_line, true},
};

INTEROP_API const char *btape_fmt_name(unsigned int fmt)
{
	return fmt < BTAPE_FMT__COUNT ? fmts[fmt].name : "?";
}

INTEROP_API int btape_fmt_parse(const char *name)
{
	for (unsigned int i = 1; i < BTAPE_FMT__COUNT; i++) {
		if (!strcasecmp(name, fmts[i].name) ||
		    (fmts[i].alias && !strcasecmp(name, fmts[i].alias)))
			return (int)i;
	}
	return -EINVAL;
}

INTEROP_API bool btape_fmt_can_import(unsigned int fmt)
{
	return fmt < BTAPE_FMT__COUNT && fmt != BTAPE_FMT_UNKNOWN && fmt != BTAPE_FMT_BTAPE;
}

INTEROP_API bool btape_fmt_can_export(unsigned int fmt)
{
	return fmt == BTAPE_FMT_FIO3 || fmt == BTAPE_FMT_BLKPARSE || fmt == BTAPE_FMT_CSV;
}

/* ---- detection ---- */

static bool line_is(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return n >= k && !memcmp(p, s, k) && (n == k || p[k] == '\r' || p[k] == '\n');
}

/* Shape test of one data line for each line format; returns the format or UNKNOWN. */
static int detect_line(const char *p, size_t n)
{
	struct field f[FIELDS_MAX];
	uint64_t v;
	int k;

	k = split_fields(p, n, ',', f, FIELDS_MAX);
	if (k == 7 && !field_u64(&f[0], &v) && v > 116444736000000000ull &&
	    (field_ieq(&f[3], "Read") || field_ieq(&f[3], "Write")) && !field_u64(&f[6], &v))
		return BTAPE_FMT_MSR;
	if (k == 5 && !field_u64(&f[0], &v) && (field_ieq(&f[1], "R") || field_ieq(&f[1], "W")) &&
	    !field_u64(&f[2], &v) && !field_u64(&f[3], &v) && !field_u64(&f[4], &v))
		return BTAPE_FMT_ALIBABA;
	if (k >= 5 && !field_u64(&f[0], &v) && !field_u64(&f[1], &v) && !field_u64(&f[2], &v) &&
	    (field_ieq(&f[3], "r") || field_ieq(&f[3], "w")) && !field_dec_scaled(&f[4], 9, &v))
		return BTAPE_FMT_UMASS;
	if (k == 5 && !field_u64(&f[0], &v) && !field_u64(&f[1], &v) && !field_u64(&f[2], &v) &&
	    (field_eq(&f[3], "0") || field_eq(&f[3], "1")) && !field_u64(&f[4], &v))
		return BTAPE_FMT_TENCENT;
	k = split_fields(p, n, ' ', f, FIELDS_MAX);
	if (k == 5 && !field_dec_scaled(&f[0], 0, &v) && !field_u64(&f[2], &v) &&
	    !field_u64(&f[3], &v) && (field_eq(&f[4], "0") || field_eq(&f[4], "1")))
		return BTAPE_FMT_MQSIM;
	if ((k == 9 || k == 8) && !field_u64(&f[0], &v) && !field_u64(&f[1], &v) &&
	    !field_u64(&f[3], &v) && !field_u64(&f[4], &v) &&
	    (field_ieq(&f[5], "R") || field_ieq(&f[5], "W")) && !field_u64(&f[6], &v) &&
	    !field_u64(&f[7], &v))
		return BTAPE_FMT_FIU;
	if (k >= 7 && memchr(f[0].p, ',', f[0].n) && !field_u64(&f[1], &v) &&
	    !field_u64(&f[2], &v) && memchr(f[3].p, '.', f[3].n) && !field_u64(&f[4], &v) &&
	    f[5].n <= 2)
		return BTAPE_FMT_BLKPARSE;
	return BTAPE_FMT_UNKNOWN;
}

INTEROP_API int btape_fmt_detect(const void *head, size_t len)
{
	const char *p = head, *end = p + len;
	int bin = detect_binary(head, len), votes = 0, fmt = BTAPE_FMT_UNKNOWN;

	if (bin != BTAPE_FMT_UNKNOWN)
		return bin;
	if (line_is(p, len, "fio version 3 iolog"))
		return BTAPE_FMT_FIO3;
	if (line_is(p, len, "fio version 2 iolog"))
		return BTAPE_FMT_FIO2;
	/* biotape's own CSV: its header line, as the exporter writes it (with its newline) */
	size_t hl = strlen(btape_csv_header);

	if ((len >= hl && !memcmp(p, btape_csv_header, hl)) ||
	    (len > hl && !memcmp(p, btape_csv_header, hl - 1) && p[hl - 1] == '\r' &&
	     p[hl] == '\n'))
		return BTAPE_FMT_CSV;
	if (memchr(p, 0, len))
		return BTAPE_FMT_UNKNOWN; /* binary and not one we know */
	/* up to 8 complete data lines must agree; a leading header line is skipped */
	for (int lines = 0; p < end && lines < 9; lines++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n;
		int f;

		if (!nl)
			break; /* an incomplete last line is not judged */
		n = (size_t)(nl - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (n == 0 || p[0] == '#') {
			p = nl + 1;
			continue;
		}
		f = detect_line(p, n);
		if (f == BTAPE_FMT_UNKNOWN && lines == 0 &&
		    ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))) {
			p = nl + 1; /* column header */
			continue;
		}
		if (f == BTAPE_FMT_UNKNOWN || (fmt != BTAPE_FMT_UNKNOWN && f != fmt)) {
			/* blkparse has non-I/O lines (m, P, U...): judge blkparse on its majority
			 */
			if (fmt == BTAPE_FMT_BLKPARSE)
				goto next;
			return BTAPE_FMT_UNKNOWN;
		}
		fmt = f;
		votes++;
next:
		p = nl + 1;
	}
	return votes > 0 ? fmt : BTAPE_FMT_UNKNOWN;
}

INTEROP_API int btape_fmt_detect_file(const char *path, char *errmsg, size_t errlen)
{
	struct isrc *s;
	const uint8_t *p;
	long n;
	int err;

	err = isrc_open(&s, path, errmsg, errlen);
	if (err)
		return err;
	n = isrc_peek(s, 64 << 10, &p);
	if (n < 0) {
		snprintf(errmsg, errlen, "%s", isrc_errmsg(s));
		isrc_close(s);
		return (int)n;
	}
	err = btape_fmt_detect(p, (size_t)n);
	isrc_close(s);
	return err;
}

/* ---- the passes ---- */

/* A CSV record may span lines: a quoted field holds the newline (a comm with one). Past this
 * much, the quote is taken as never closed. */
#define CSV_RECORD_MAX 4096u

/*
 * Whether a quoted field is still open at the end of this line, OPEN saying whether it was at
 * its start: split_csv()'s rule, a quote opens a field only as its first byte (elsewhere in an
 * unquoted field it is a byte of it), and inside one "" is a quote.
 */
static bool quote_open(const char *p, size_t len, bool open)
{
	bool field_start = !open;

	for (size_t i = 0; i < len; i++) {
		if (open) {
			if (p[i] == '"') {
				if (i + 1 < len && p[i + 1] == '"')
					i++;
				else
					open = false;
			}
		} else if (p[i] == '"' && field_start) {
			open = true;
		}
		field_start = !open && p[i] == ',';
	}
	return open;
}

static int run_text(struct imp *im, struct isrc *s)
{
	const struct fmtinfo *fi = &fmts[im->fmt];
	char *line, rec[CSV_RECORD_MAX];
	size_t len, reclen = 0;
	/* a CSV record whose quoted field a line ended in: kept in rec, or (past its size)
	 * discarded to its end; rec_line its first line, which its errors name */
	bool open = false, discard = false;
	uint64_t rec_line = 0, last;
	int r;

	im->file = isrc_name(s);
	im->line = 0;
	im->blkparse_summary = false;
	im->fio_delay_ns = 0;
	while ((r = isrc_getline(s, &line, &len)) > 0) {
		im->line++;
		im->st.lines++;
		if (open) { /* the rest of a CSV record: an empty line or a '#' is its text */
			open = quote_open(line, len, true);
			if (discard) {
				discard = open;
				continue;
			}
			if (reclen + 1 + len > sizeof(rec)) {
				last = im->line;
				im->line = rec_line;
				r = imp_bad(im, "a quoted field is not closed within %u bytes",
					    CSV_RECORD_MAX);
				im->line = last;
				if (r < 0)
					return r;
				discard = open; /* the rest of this record is no record */
				continue;
			}
			rec[reclen++] = '\n';
			memcpy(rec + reclen, line, len);
			reclen += len;
			if (open)
				continue;
			line = rec;
			len = reclen;
		} else if (len == 0 || line[0] == '#') {
			im->st.ignored++;
			continue;
		}
		if (im->line == 1 && fi->numeric_header_skip &&
		    !(line[0] >= '0' && line[0] <= '9') && line[0] != ' ' && line[0] != '\t') {
			im->st.ignored++; /* column header */
			continue;
		}
		if (memchr(line, 0, len)) {
			r = imp_bad(im, "NUL byte in a text line");
			if (r < 0)
				return r;
			continue;
		}
		if (im->fmt == BTAPE_FMT_CSV && line != rec && quote_open(line, len, false)) {
			open = true;
			rec_line = im->line;
			if (len > sizeof(rec)) {
				r = imp_bad(im, "a quoted field is not closed within %u bytes",
					    CSV_RECORD_MAX);
				if (r < 0)
					return r;
				discard = true;
				continue;
			}
			memcpy(rec, line, len);
			reclen = len;
			continue;
		}
		last = im->line;
		if (line == rec)
			im->line = rec_line; /* a record across lines: its errors name its first */
		r = fi->line(im, line, len);
		im->line = last;
		if (r < 0)
			return r;
	}
	if (r < 0) {
		im->line++;
		return imp_fail(im, "%s", isrc_why(s)); /* "FILE:LINE: " is imp_fail's */
	}
	if (open && !discard) {
		im->line = rec_line;
		r = imp_bad(im, "a quoted field is not closed at the end of the file");
		if (r < 0)
			return r;
	}
	if (im->fmt == BTAPE_FMT_FIO2 || im->fmt == BTAPE_FMT_FIO3) {
		if (im->line == 0)
			return imp_fail(im, "empty fio iolog (no header line)");
	}
	return 0;
}

static void free_state(struct imp *im)
{
	join_free(im->join);
	im->join = NULL;
}

/* One pass over every input. */
static int run_pass(struct imp *im, const char *const *inputs, size_t n, const void *mem,
		    size_t memlen)
{
	struct isrc **srcs = calloc(n ? n : 1, sizeof(*srcs));
	int err = 0;

	if (!srcs)
		return imp_fail(im, "out of memory");
	if (im->fmt == BTAPE_FMT_BLKTRACE || im->fmt == BTAPE_FMT_BLKPARSE) {
		err = join_new(&im->join);
		if (err)
			goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		if (mem)
			err = isrc_open_mem(&srcs[i], mem, memlen, inputs[i], im->errmsg,
					    im->errlen);
		else
			err = isrc_open(&srcs[i], inputs[i], im->errmsg, im->errlen);
		if (err)
			goto cleanup;
	}
	if (im->fmt == BTAPE_FMT_BLKTRACE) {
		err = parse_blktrace(im, srcs, n);
	} else if (im->fmt == BTAPE_FMT_VSCSI) {
		for (size_t i = 0; i < n && !err; i++)
			err = parse_vscsi(im, srcs[i]);
	} else {
		for (size_t i = 0; i < n && !err; i++)
			err = run_text(im, srcs[i]);
	}
	if (!err)
		err = join_finish(im);
cleanup:
	for (size_t i = 0; i < n; i++)
		isrc_close(srcs[i]);
	free(srcs);
	free_state(im);
	return err;
}

/*
 * The Alibaba device_size file (device_id,capacity_bytes), sorted by id for the lookup of each
 * new device (bsearch). At most BTAPE_DEVICES_MAX ids, each once: a small compressed file
 * cannot take memory or time beyond what a trace's device table may.
 */
static int load_device_sizes(struct imp *im, const char *path)
{
	struct isrc *s;
	char *line;
	size_t len;
	int r, err;
	size_t cap = 0;

	err = isrc_open(&s, path, im->errmsg, im->errlen);
	if (err)
		return err;
	im->file = path;
	im->line = 0;
	while ((r = isrc_getline(s, &line, &len)) > 0) {
		struct field f[FIELDS_MAX];
		uint64_t id, bytes;
		int n;

		im->line++;
		n = split_fields(line, len, ',', f, FIELDS_MAX);
		if (len == 0 || line[0] == '#')
			continue;
		if (n != 2 || field_u64(&f[0], &id) || field_u64(&f[1], &bytes) || f[0].n >= 64) {
			if (im->line == 1)
				continue; /* header */
			err = imp_fail(im, "expected device_id,capacity_bytes");
			goto cleanup;
		}
		if (im->ndsz >= BTAPE_DEVICES_MAX) {
			err = imp_fail(im, "more than %u device sizes", BTAPE_DEVICES_MAX);
			goto cleanup;
		}
		if (im->ndsz == cap) {
			struct devsize *nd;

			cap = cap ? cap * 2 : 64;
			nd = realloc(im->dsz, cap * sizeof(*nd));
			if (!nd) {
				err = imp_fail(im, "out of memory");
				goto cleanup;
			}
			im->dsz = nd;
		}
		snprintf(im->dsz[im->ndsz].name, sizeof(im->dsz[0].name), "%.*s", (int)f[0].n,
			 f[0].p);
		im->dsz[im->ndsz].bytes = bytes;
		im->dsz[im->ndsz].line = im->line;
		im->ndsz++;
	}
	if (r < 0) {
		err = imp_fail(im, "%s", isrc_why(s));
		goto cleanup;
	}
	if (im->ndsz)
		qsort(im->dsz, im->ndsz, sizeof(*im->dsz), imp_devsize_cmp);
	for (size_t i = 1; i < im->ndsz; i++) {
		const struct devsize *x = &im->dsz[i - 1], *y = &im->dsz[i];

		if (!imp_devsize_cmp(x, y)) { /* the later line is the duplicate */
			im->line = x->line > y->line ? x->line : y->line;
			err = imp_fail(im, "device_id %s listed twice (also line %llu)", y->name,
				       (unsigned long long)(x->line < y->line ? x->line : y->line));
			goto cleanup;
		}
	}
cleanup:
	isrc_close(s);
	return err;
}

/* blktrace's per-CPU file of prefix: PREFIX then the CPU's number, nothing else */
static bool cpu_file(const char *prefix, const char *name)
{
	size_t n = strlen(prefix);
	const char *p = name + n;

	/* a prefix with glob characters ("a[bc].") matches names that do not begin with it */
	if (strncmp(name, prefix, n) || !*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/*
 * The files an import reads, against the output and each other (the caller can only compare
 * the names it was given; a prefix hides which files those are): a blktrace prefix
 * "sda.blktrace." with output "sda.blktrace.1" replaced a CPU's file with the import of itself.
 */
static int check_files(struct imp *im, char **files, size_t nfiles, const char *out_path)
{
	struct stat so, *st = calloc(nfiles ? nfiles : 1, sizeof(*st));
	bool have_out = strcmp(out_path, "-") && stat(out_path, &so) == 0;
	int err = 0;

	if (!st) {
		snprintf(im->errmsg, im->errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < nfiles && !err; i++) {
		if (stat(files[i], &st[i])) {
			st[i].st_ino = 0; /* reported when read */
			continue;
		}
		if (have_out && st[i].st_dev == so.st_dev && st[i].st_ino == so.st_ino) {
			snprintf(im->errmsg, im->errlen,
				 "%s is both an input (%s) and the output: refusing to replace it",
				 out_path, files[i]);
			err = -EINVAL;
		}
		for (size_t j = 0; j < i && !err; j++) {
			if (st[j].st_ino && st[i].st_dev == st[j].st_dev &&
			    st[i].st_ino == st[j].st_ino) {
				snprintf(im->errmsg, im->errlen,
					 "%s and %s are the same file: an input given twice",
					 files[j], files[i]);
				err = -EINVAL;
			}
		}
	}
	free(st);
	return err;
}

/*
 * blktrace: a name that is not a file is a prefix of per-CPU files PREFIX0, PREFIX1, ... (only
 * digits after the prefix: PREFIX0.btape, an earlier import's output, is not one).
 */
static int expand_inputs(struct imp *im, const char *const *inputs, size_t n, char ***outp,
			 size_t *noutp)
{
	char **out = NULL;
	size_t nout = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		struct stat st;
		glob_t g;
		char *pat;

		if (stat(inputs[i], &st) == 0 || im->fmt != BTAPE_FMT_BLKTRACE) {
			char **o = realloc(out, (nout + 1) * sizeof(*o));

			if (!o || !(o[nout] = strdup(inputs[i]))) {
				out = o ? o : out;
				err = -ENOMEM;
				goto cleanup;
			}
			out = o;
			nout++;
			continue;
		}
		if (asprintf(&pat, "%s[0-9]*", inputs[i]) < 0) {
			err = -ENOMEM;
			goto cleanup;
		}
		memset(&g, 0, sizeof(g));
		if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
			free(pat);
			globfree(&g);
			snprintf(im->errmsg, im->errlen, "%s: no such file, nor files %s<cpu>",
				 inputs[i], inputs[i]);
			err = -ENOENT;
			goto cleanup;
		}
		free(pat);
		size_t had = nout;

		for (size_t k = 0; k < g.gl_pathc && nout < BLKTRACE_FILES_MAX; k++) {
			char **o;

			if (!cpu_file(inputs[i], g.gl_pathv[k]))
				continue;
			o = realloc(out, (nout + 1) * sizeof(*o));

			if (!o || !(o[nout] = strdup(g.gl_pathv[k]))) {
				out = o ? o : out;
				globfree(&g);
				err = -ENOMEM;
				goto cleanup;
			}
			out = o;
			nout++;
		}
		globfree(&g);
		if (nout == had) {
			snprintf(im->errmsg, im->errlen, "%s: no such file, nor files %s<cpu>",
				 inputs[i], inputs[i]);
			err = -ENOENT;
			goto cleanup;
		}
	}
	*outp = out;
	*noutp = nout;
	return 0;
cleanup:
	for (size_t i = 0; i < nout; i++)
		free(out[i]);
	free(out);
	if (err == -ENOMEM)
		snprintf(im->errmsg, im->errlen, "out of memory");
	return err;
}

static void imp_release(struct imp *im)
{
	imp_context_release(im);
	free_state(im);
}

/* The writer's own count of late events (its reorder buffer may also overflow). */
static void note_violations(struct imp *im, const char *path)
{
	struct btape_reader *r = NULL;
	struct btape_summary sum = {.sz = sizeof(sum)};

	if (!strcmp(path, "-") || btape_reader__open(&r, path, NULL, 0))
		return;
	if (!btape_reader__summary(r, &sum) && sum.order_violations > im->st.order_violations)
		im->st.order_violations = sum.order_violations;
	btape_reader__close(r);
}

INTEROP_API int btape_import(const char *const *inputs, size_t ninputs, const char *out_path,
			     const struct btape_import_opts *opts, struct btape_import_stats *stats,
			     char *errmsg, size_t errlen)
{
	struct btape_import_opts o = {0};
	struct btape_writer_opts wo = {.sz = sizeof(wo)};
	struct btape_writer *w = NULL;
	struct imp im;
	struct devtab dt;
	char **files = NULL, local_err[512], why[BTAPE_ERRMSG_LEN];
	size_t nfiles = 0;
	int err, fmt;

	if (!errmsg || !errlen) {
		errmsg = local_err;
		errlen = sizeof(local_err);
	}
	imp_init(&im, &dt, errmsg, errlen);
	if (opts)
		memcpy(&o, opts, opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (ninputs == 0) {
		snprintf(errmsg, errlen, "no input");
		return -EINVAL;
	}
	fmt = (int)o.fmt;
	if (fmt == BTAPE_FMT_UNKNOWN) {
		struct stat st;

		/* a blktrace prefix is not a file: detect from its first expansion */
		if (stat(inputs[0], &st) != 0) {
			char *pat;
			glob_t g = {0};

			if (asprintf(&pat, "%s[0-9]*", inputs[0]) < 0)
				return -ENOMEM;
			if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0)
				fmt = btape_fmt_detect_file(g.gl_pathv[0], errmsg, errlen);
			else
				fmt = btape_fmt_detect_file(inputs[0], errmsg, errlen);
			free(pat);
			globfree(&g);
		} else {
			fmt = btape_fmt_detect_file(inputs[0], errmsg, errlen);
		}
		if (fmt < 0)
			return fmt;
		if (fmt == BTAPE_FMT_UNKNOWN) {
			snprintf(errmsg, errlen,
				 "%s: format not recognised from its content: name it with --from",
				 inputs[0]);
			return -EINVAL;
		}
	}
	if (!btape_fmt_can_import((unsigned int)fmt)) {
		snprintf(errmsg, errlen, "%s: cannot import from %s", inputs[0],
			 btape_fmt_name((unsigned int)fmt));
		return -EINVAL;
	}
	im.fmt = (unsigned int)fmt;
	im.skip_bad = o.skip_bad;
	im.reorder_window_ns =
		o.reorder_window_ns ? o.reorder_window_ns : DEFAULT_REORDER_WINDOW_NS;
	err = expand_inputs(&im, inputs, ninputs, &files, &nfiles);
	if (!err)
		err = check_files(&im, files, nfiles, out_path);
	if (err)
		goto cleanup;
	if (o.device_size_path) {
		err = load_device_sizes(&im, o.device_size_path);
		if (err)
			goto cleanup;
	}

	/* pass 1: devices, validation */
	im.pass = 1;
	err = run_pass(&im, (const char *const *)files, nfiles, NULL, 0);
	if (err)
		goto cleanup;

	/* metadata */
	snprintf(im.meta.tool, sizeof(im.meta.tool), "biotape %s import:%s",
#ifdef BIOTAPE_VERSION
		 BIOTAPE_VERSION,
#else
		 "?",
#endif
		 btape_fmt_name(im.fmt));
	snprintf(im.meta.source, sizeof(im.meta.source), "import:%s", btape_fmt_name(im.fmt));
	{
		size_t off = 0;

		for (size_t i = 0; i < nfiles && off < sizeof(im.meta.capture) - 1; i++) {
			int k = snprintf(im.meta.capture + off, sizeof(im.meta.capture) - off,
					 "%s%s", i ? " " : "", files[i]);

			if (k < 0)
				break;
			off += (size_t)k;
		}
	}
	if (im.fmt == BTAPE_FMT_MSR || im.fmt == BTAPE_FMT_ALIBABA || im.fmt == BTAPE_FMT_TENCENT) {
		/* times are ns since the Unix epoch: monotonic and real clocks coincide */
		im.meta.clock_mono_ns = im.min_issue_ns;
		im.meta.clock_real_ns = im.min_issue_ns;
	}

	/*
	 * Pass 2 emits the same sequence as pass 1, whose largest lateness (how far an event's
	 * issue time trails the newest before it) is now known: a window of that size sorts it
	 * exactly, and a sorted input needs none (the smallest reorder heap). The configured
	 * window stays the upper bound: beyond it the buffer would not be bounded.
	 */
	if (im.max_late_ns < im.reorder_window_ns)
		im.reorder_window_ns = im.max_late_ns;

	/* pass 2: write */
	memset(&im.st, 0, sizeof(im.st));
	im.have_events = false;
	im.max_issue_ns = 0;
	im.watermark_ns = 0;
	wo.zstd_level = o.zstd_level;
	wo.reorder_max_events =
		o.reorder_max_events ? o.reorder_max_events : DEFAULT_REORDER_EVENTS;
	err = btape_writer__open(&w, out_path, &im.meta, &wo, why, sizeof(why));
	if (err) {
		snprintf(errmsg, errlen, "%s: %s", out_path, why);
		btape_writer__abort(w);
		w = NULL;
		goto cleanup;
	}
	im.w = w;
	im.pass = 2;
	err = run_pass(&im, (const char *const *)files, nfiles, NULL, 0);
	if (err)
		goto cleanup;
	im.w = NULL;
	err = btape_writer__close(w, why, sizeof(why));
	w = NULL;
	if (err) {
		snprintf(errmsg, errlen, "%s: cannot finish the trace: %s", out_path, why);
		goto cleanup;
	}
	note_violations(&im, out_path);
cleanup:
	if (err)
		btape_writer__abort(w);
	im.st.devices = im.meta.ndevices;
	im.st.format = im.fmt;
	if (stats)
		*stats = im.st;
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	imp_release(&im);
	return err;
}

INTEROP_API int btape_import_validate_buf(unsigned int fmt, const void *data, size_t len,
					  const char *name, bool skip_bad,
					  struct btape_import_stats *stats, char *errmsg,
					  size_t errlen)
{
	struct imp im;
	struct devtab dt;
	const char *inputs[1] = {name ? name : "(buffer)"};
	char local_err[512];
	int err;

	if (!errmsg || !errlen) {
		errmsg = local_err;
		errlen = sizeof(local_err);
	}
	if (!btape_fmt_can_import(fmt)) {
		snprintf(errmsg, errlen, "cannot import from %s", btape_fmt_name(fmt));
		return -EINVAL;
	}
	imp_init(&im, &dt, errmsg, errlen);
	im.fmt = fmt;
	im.skip_bad = skip_bad;
	im.reorder_window_ns = DEFAULT_REORDER_WINDOW_NS;
	im.pass = 1;
	err = run_pass(&im, inputs, 1, data, len);
	if (!err) { /* and the write path's logic, without a writer */
		memset(&im.st, 0, sizeof(im.st));
		im.have_events = false;
		im.pass = 2;
		err = run_pass(&im, inputs, 1, data, len);
	}
	im.st.devices = im.meta.ndevices;
	im.st.format = fmt;
	if (stats)
		*stats = im.st;
	imp_release(&im);
	return err;
}
