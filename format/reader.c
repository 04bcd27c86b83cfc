// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbiotape: the streaming reader. Holds one decompressed chunk and a slice of decoded
 * events at a time. Uses the footer index when the trailer and footer are valid; otherwise
 * reads frames in order until the last complete one (recovery). See docs/BTAPE-FORMAT.md "Reader".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_forceIgnoreChecksum (zstd >= 1.4.7) */
#include <zstd.h>

#include "btape_internal.h"
#include "ftags.h"

#define SLICE_EVENTS 256
#define RESYNC_WINDOW 65536

struct fbuf {
	struct bbuf comp, raw;
	ZSTD_DCtx *dctx;
};

/*
 * Decompressed frames held by every reader of the process together. One frame may be
 * BTAPE_FRAME_MAX_BYTES, and the analyzer opens up to 256 traces at once: seven 9.5 KB files of
 * one 250 MiB chunk each took 1.8 GB, 256 would have asked for 64 GiB. A chunk of the
 * writers' default 65,536 events takes about 1.2 MB (a 2 MiB buffer); one of their largest,
 * BTAPE_WRITER_CHUNK_MAX events, about 18 MB (32 MiB): 32 traces of those at once.
 */
#define READERS_RAW_MAX (1ull << 30)
static _Atomic uint64_t readers_raw;

/* bbuf_reserve of fb->raw for len bytes, within READERS_RAW_MAX: 0, -ENOMEM or -E2BIG. */
static int raw_reserve(struct fbuf *fb, size_t len)
{
	size_t before = fb->raw.cap, grow;
	int err;

	if (len <= fb->raw.cap)
		return 0;
	grow = 4096;
	while (grow < len)
		grow *= 2; /* what bbuf_reserve will take */
	grow -= before;
	if (atomic_fetch_add(&readers_raw, grow) + grow > READERS_RAW_MAX) {
		atomic_fetch_sub(&readers_raw, grow);
		return -E2BIG;
	}
	err = bbuf_reserve(&fb->raw, len);
	if (err)
		atomic_fetch_sub(&readers_raw, grow);
	else if (fb->raw.cap - before != grow) /* one operation: no moment too low */
		atomic_fetch_add(&readers_raw, fb->raw.cap - before - grow);
	return err;
}

static void raw_free(struct fbuf *fb)
{
	atomic_fetch_sub(&readers_raw, fb->raw.cap);
	bbuf_free(&fb->raw);
}

struct btape_reader {
	int fd;
	bool own_fd;
	bool seekable;
	uint64_t file_size; /* seekable only */
	uint64_t spos;	    /* stream position (non-seekable) */
	char *name;

	struct btape_meta meta;
	uint64_t data_off; /* first frame after the metadata frame */

	bool has_footer;
	struct btape_summary fsum;
	struct btape_index ix;
	struct btape_ftags ftags; /* the footer's tags */
	char footer_problem[512];

	/* streaming state */
	uint64_t next_off, next_no; /* next frame to read */
	uint64_t cur_off, cur_no;   /* frame being decoded */
	bool at_end;
	bool saw_footer;
	int sticky; /* unrecoverable error */
	struct fbuf fb;
	struct chunk_dec dec;
	struct btape_event slice[SLICE_EVENTS];
	uint32_t slice_n, slice_pos;
	struct btape_intern *it;

	bool sum_cached;
	struct btape_summary sum;
	char errmsg[BTAPE_ERRMSG_LEN];
};

__attribute__((format(printf, 3, 4))) static int rfail(struct btape_reader *r, int err,
						       const char *fmt, ...)
{
	va_list ap;

	int n = r->name ? snprintf(r->errmsg, sizeof(r->errmsg), "%s: ", r->name) : 0;

	if (n < 0 || (size_t)n >= sizeof(r->errmsg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->errmsg + n, sizeof(r->errmsg) - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

/* Reads up to len bytes at off; returns the count (short only at EOF) or -errno. */
static ssize_t in_read_at(struct btape_reader *r, uint64_t off, void *buf, size_t len)
{
	size_t got = 0;

	if (!r->seekable) {
		char skip[4096];

		if (off < r->spos)
			return -ESPIPE;
		while (r->spos < off) {
			size_t want = off - r->spos < sizeof(skip) ? off - r->spos : sizeof(skip);
			ssize_t n = read(r->fd, skip, want);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return 0;
			r->spos += (uint64_t)n;
		}
	}
	while (got < len) {
		ssize_t n = r->seekable
				    ? pread(r->fd, (char *)buf + got, len - got, (off_t)(off + got))
				    : read(r->fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
		if (!r->seekable)
			r->spos += (uint64_t)n;
	}
	return (ssize_t)got;
}

/* True when every byte from off to the end of a seekable file is zero. */
static bool zero_tail(struct btape_reader *r, uint64_t off)
{
	uint8_t buf[4096];

	if (!r->seekable)
		return false;
	while (off < r->file_size) {
		ssize_t n = in_read_at(r, off, buf, sizeof(buf));

		if (n <= 0)
			return n == 0;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i])
				return false;
		off += (uint64_t)n;
	}
	return true;
}

enum frame_res { FR_OK = 0, FR_EOF = 1, FR_TRUNC = 2 };

/*
 * Reads and decompresses the frame at off (number no) into fb->raw. Returns FR_OK (type and
 * *next set; unknown types are not decompressed), FR_EOF at a clean end, FR_TRUNC for an
 * incomplete frame at the end, or -errno with errmsg "frame N at offset O: why".
 * *env_ok tells whether the envelope was valid (so the next frame is at *next).
 */
static int read_frame(struct btape_reader *r, struct fbuf *fb, uint64_t off, uint64_t no,
		      unsigned int *type, uint64_t *next, bool *env_ok)
{
	uint8_t env[BTAPE_ENV_SIZE];
	uint32_t clen, rlen, pcrc;
	size_t dn;
	ssize_t n;
	int err;

	char where[80];

	if (no == UINT64_MAX)
		snprintf(where, sizeof(where), "footer frame at offset %" PRIu64, off);
	else
		snprintf(where, sizeof(where), "frame %" PRIu64 " at offset %" PRIu64, no, off);
	*env_ok = false;
	n = in_read_at(r, off, env, sizeof(env));
	if (n < 0)
		return rfail(r, (int)n, "%s: read: %s", where, strerror((int)-n));
	if (n == 0)
		return FR_EOF;
	if ((size_t)n < sizeof(env))
		return FR_TRUNC;
	if (btape_env_parse(env, type, &clen, &rlen, &pcrc)) {
		if (btape_is_trailer(env))
			return FR_EOF; /* the trailer after a footer frame */
		if (zero_tail(r, off))
			return FR_TRUNC;
		return rfail(r, -EBADMSG, "%s: bad frame header", where);
	}
	if (clen > BTAPE_FRAME_MAX_BYTES || rlen > BTAPE_FRAME_MAX_BYTES)
		return rfail(r, -EBADMSG, "%s: frame too large", where);
	*env_ok = true;
	*next = off + BTAPE_ENV_SIZE + clen;
	if (r->seekable && *next > r->file_size)
		return FR_TRUNC;
	/* what a frame of its type can need, before anything is allocated for it */
	if (*type == BTAPE_FRAME_META && rlen > BTAPE_META_MAX_BYTES)
		return rfail(r, -EBADMSG,
			     "%s: metadata frame too large (%u bytes decompressed, at most %u)",
			     where, rlen, BTAPE_META_MAX_BYTES);
	if (*type == BTAPE_FRAME_FOOTER && rlen > off + BTAPE_FOOTER_SLACK_BYTES)
		return rfail(r, -EBADMSG,
			     "%s: footer frame too large (%u bytes decompressed, at most its "
			     "offset + %u)",
			     where, rlen, BTAPE_FOOTER_SLACK_BYTES);
	fb->comp.len = 0;
	err = bbuf_reserve(&fb->comp, clen ? clen : 1);
	if (err)
		return rfail(r, err, "out of memory");
	n = in_read_at(r, off + BTAPE_ENV_SIZE, fb->comp.p, clen);
	if (n < 0)
		return rfail(r, (int)n, "%s: read: %s", where, strerror((int)-n));
	if ((size_t)n < clen)
		return FR_TRUNC;
	fb->comp.len = clen;
	if (btape_crc32c(0, fb->comp.p, clen) != pcrc)
		return rfail(r, -EBADMSG, "%s: checksum mismatch", where);
	if (*type != BTAPE_FRAME_META && *type != BTAPE_FRAME_CHUNK && *type != BTAPE_FRAME_FOOTER)
		return FR_OK;
	fb->raw.len = 0;
	err = raw_reserve(fb, rlen ? rlen : 1);
	if (err == -E2BIG)
		return rfail(
			r, -ENOMEM,
			"%s: %u bytes decompressed would take the frames of the traces open at "
			"once past %llu MiB (read fewer at a time)",
			where, rlen, READERS_RAW_MAX >> 20);
	if (err)
		return rfail(r, err, "out of memory");
	if (!fb->dctx) {
		fb->dctx = ZSTD_createDCtx();
		if (!fb->dctx)
			return rfail(r, -ENOMEM, "out of memory");
		/*
		 * Reading, the crc32c of the compressed payload (checked above) already proves
		 * the frame intact: zstd's XXH64 of the output costs 1 instruction a byte for
		 * nothing. __verify, the summary scan and a seekable file's footer use their own
		 * buffers and check both; a stream's footer comes through here (crc32c only).
		 * An older libzstd refuses the parameter and checks: harmless.
		 */
		if (fb == &r->fb)
			ZSTD_DCtx_setParameter(fb->dctx, ZSTD_d_forceIgnoreChecksum,
					       ZSTD_d_ignoreChecksum);
	}
	dn = ZSTD_decompressDCtx(fb->dctx, fb->raw.p, rlen, fb->comp.p, clen);
	if (ZSTD_isError(dn))
		return rfail(r, -EBADMSG, "%s: zstd: %s", where, ZSTD_getErrorName(dn));
	if (dn != rlen)
		return rfail(r, -EBADMSG, "%s: size mismatch (%zu != %u)", where, dn, rlen);
	fb->raw.len = rlen;
	return FR_OK;
}

static void fbuf_free(struct fbuf *fb)
{
	bbuf_free(&fb->comp);
	raw_free(fb);
	ZSTD_freeDCtx(fb->dctx);
	fb->dctx = NULL;
}

/* The most chunk frames that fit between the metadata frame and a footer at FOOT_OFF. */
static uint64_t max_chunks(const struct btape_reader *r, uint64_t foot_off)
{
	return foot_off > r->data_off ? (foot_off - r->data_off) / BTAPE_ENV_SIZE : 0;
}

/* The footer's stop clock becomes the last sync of a cluster recording's metadata. */
static void add_clock_stop(struct btape_reader *r)
{
	struct btape_cluster *cl = &r->meta.cluster;

	if (!r->fsum.has_clock_stop || !cl->id[0] || cl->nsync >= BTAPE_CLOCK_SYNC_MAX ||
	    (cl->nsync && r->fsum.clock_stop.local_ns < cl->sync[cl->nsync - 1].local_ns))
		return;
	cl->sync[cl->nsync++] = r->fsum.clock_stop;
}

/* Reads the trailer and the footer it points at; on any problem has_footer stays false. */
static void load_footer(struct btape_reader *r)
{
	uint8_t tr[BTAPE_TRAILER_SIZE];
	struct fbuf fb = {0};
	uint64_t foff, next, no;
	unsigned int type;
	bool env_ok;
	char why[256];
	int ret;

	if (!r->seekable || r->file_size < r->data_off + BTAPE_ENV_SIZE + BTAPE_TRAILER_SIZE)
		return;
	if (in_read_at(r, r->file_size - BTAPE_TRAILER_SIZE, tr, sizeof(tr)) != sizeof(tr))
		return;
	ret = btape_trailer_parse(tr, &foff);
	if (ret > 0)
		return; /* no trailer: a cut-short file */
	if (ret < 0) {
		snprintf(r->footer_problem, sizeof(r->footer_problem),
			 "trailer at offset %" PRIu64 ": checksum mismatch",
			 r->file_size - BTAPE_TRAILER_SIZE);
		return;
	}
	if (foff < r->data_off || foff > r->file_size - BTAPE_TRAILER_SIZE - BTAPE_ENV_SIZE) {
		snprintf(r->footer_problem, sizeof(r->footer_problem),
			 "trailer at offset %" PRIu64 ": footer offset out of range",
			 r->file_size - BTAPE_TRAILER_SIZE);
		return;
	}
	ret = read_frame(r, &fb, foff, UINT64_MAX, &type, &next, &env_ok);
	if (ret == FR_OK &&
	    (type != BTAPE_FRAME_FOOTER || next != r->file_size - BTAPE_TRAILER_SIZE))
		ret = rfail(r, -EBADMSG, "footer at offset %" PRIu64 ": not a footer frame", foff);
	if (ret == FR_OK) {
		ret = btape_footer_unpack(&r->fsum, &r->ix, &r->ftags, fb.raw.p, fb.raw.len,
					  max_chunks(r, foff), why, sizeof(why));
		if (ret)
			rfail(r, ret, "footer at offset %" PRIu64 ": %s", foff, why);
	}
	if (ret == FR_OK) {
		uint64_t prev = 0;

		for (uint64_t i = 0; i < r->ix.n; i++) {
			if (r->ix.offset[i] < r->data_off || r->ix.offset[i] >= foff ||
			    (i && r->ix.offset[i] <= prev)) {
				ret = rfail(r, -EBADMSG, "footer at offset %" PRIu64 ": bad index",
					    foff);
				break;
			}
			prev = r->ix.offset[i];
		}
	}
	if (ret != FR_OK) {
		const char *why_footer = r->errmsg;
		size_t nl = strlen(r->name);

		if (ret > 0)
			rfail(r, -EBADMSG, "footer at offset %" PRIu64 ": truncated", foff);
		/* kept without the "name: " prefix that rfail() added; __verify adds it again */
		if (!strncmp(why_footer, r->name, nl) && why_footer[nl] == ':')
			why_footer += nl + 2;
		snprintf(r->footer_problem, sizeof(r->footer_problem), "%s", why_footer);
		r->errmsg[0] = '\0';
		btape_index_free(&r->ix);
		btape_ftags_free(&r->ftags);
		memset(&r->fsum, 0, sizeof(r->fsum));
	} else {
		no = r->ix.n + 1;
		(void)no;
		r->has_footer = true;
		add_clock_stop(r);
	}
	fbuf_free(&fb);
}

static int open_reader(struct btape_reader **rp, int fd, bool own, const char *name, char *errmsg,
		       size_t errlen)
{
	uint8_t hdr[BTAPE_HEADER_SIZE];
	uint16_t major, minor;
	struct btape_reader *r;
	struct stat st;
	unsigned int type;
	uint64_t next;
	bool env_ok;
	char why[256];
	ssize_t n;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r) {
		if (own)
			close(fd);
		snprintf(errmsg, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	r->fd = fd;
	r->own_fd = own;
	r->name = strdup(name);
	r->it = btape_intern_new(BTAPE_READER_COMM_MAX_BYTES);
	if (!r->name || !r->it) {
		err = rfail(r, -ENOMEM, "out of memory");
		goto cleanup;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) >= 0) {
		r->seekable = true;
		r->file_size = (uint64_t)st.st_size;
	}
	n = in_read_at(r, 0, hdr, sizeof(hdr));
	if (n < 0) {
		err = rfail(r, (int)n, "read: %s", strerror((int)-n));
		goto cleanup;
	}
	err = btape_header_parse(hdr, (size_t)n, &major, &minor);
	if (err == -EINVAL) {
		err = rfail(r, -EINVAL, "%s",
			    n == 0 ? "empty file (not a biotape trace)"
				   : "not a biotape trace (bad magic)");
		goto cleanup;
	}
	if (err == -ENODATA) {
		err = rfail(r, -EBADMSG, "truncated file header (%zd bytes)", n);
		goto cleanup;
	}
	if (err) {
		err = rfail(r, -EBADMSG, "file header at offset 0: checksum mismatch");
		goto cleanup;
	}
	if (major != BTAPE_FORMAT_VERSION_MAJOR) {
		err = rfail(r, -EPROTONOSUPPORT,
			    "format version %u.%u not supported (this reader reads %u.x)", major,
			    minor, BTAPE_FORMAT_VERSION_MAJOR);
		goto cleanup;
	}
	err = read_frame(r, &r->fb, BTAPE_HEADER_SIZE, 0, &type, &next, &env_ok);
	if (err > 0) {
		err = rfail(r, -EBADMSG,
			    "truncated in the metadata frame (frame 0 at offset %d)",
			    BTAPE_HEADER_SIZE);
		goto cleanup;
	}
	if (err)
		goto cleanup; /* read_frame() said what and where */
	if (type != BTAPE_FRAME_META) {
		err = rfail(r, -EBADMSG, "frame 0 at offset %d: not a metadata frame",
			    BTAPE_HEADER_SIZE);
		goto cleanup;
	}
	err = btape_meta_unpack(&r->meta, r->fb.raw.p, r->fb.raw.len, why, sizeof(why));
	if (err) {
		rfail(r, err, "frame 0 at offset %d: %s", BTAPE_HEADER_SIZE, why);
		goto cleanup;
	}
	r->data_off = next;
	r->next_off = next;
	r->next_no = 1;
	load_footer(r);
	*rp = r;
	return 0;
cleanup:
	if (r->errmsg[0])
		snprintf(errmsg, errlen, "%s", r->errmsg);
	else
		snprintf(errmsg, errlen, "%s: %s", name, strerror(-err));
	btape_reader__close(r);
	return err;
}

BTAPE_API int btape_reader__open(struct btape_reader **rp, const char *path, char *errmsg,
				 size_t errlen)
{
	int fd;

	if (!errmsg)
		errlen = 0; /* snprintf(NULL, 0, ...) writes nothing */
	if (!rp || !path) {
		snprintf(errmsg, errlen, "invalid argument");
		return -EINVAL;
	}
	*rp = NULL;
	if (!strcmp(path, "-"))
		return open_reader(rp, STDIN_FILENO, false, "<stdin>", errmsg, errlen);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		snprintf(errmsg, errlen, "%s: %s", path, strerror(errno));
		return err;
	}
	return open_reader(rp, fd, true, path, errmsg, errlen);
}

BTAPE_API int btape_reader__open_fd(struct btape_reader **rp, int fd, char *errmsg, size_t errlen)
{
	if (!errmsg)
		errlen = 0;
	if (!rp || fd < 0) {
		snprintf(errmsg, errlen, "invalid argument");
		return -EINVAL;
	}
	*rp = NULL;
	return open_reader(rp, fd, false, "trace", errmsg, errlen);
}

BTAPE_API void btape_reader__close(struct btape_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->name);
	btape_meta_free(&r->meta);
	btape_index_free(&r->ix);
	btape_ftags_free(&r->ftags);
	fbuf_free(&r->fb);
	btape_chunk_dec_free(&r->dec);
	btape_intern_free(r->it);
	free(r);
}

BTAPE_API const struct btape_meta *btape_reader__meta(const struct btape_reader *r)
{
	return r ? &r->meta : NULL;
}

BTAPE_API int btape_reader__footer_tag_at(const struct btape_reader *r, uint32_t i,
					  const char **key, const void **value, size_t *len)
{
	const struct btape_ftag *g;

	if (!r || !key || !value || !len)
		return -EINVAL;
	if (!r->has_footer || i >= r->ftags.n)
		return 0;
	g = &r->ftags.tag[i];
	*key = (const char *)r->ftags.buf.p + g->key;
	*value = r->ftags.buf.p + g->val;
	*len = g->len;
	return 1;
}

BTAPE_API int btape_reader__footer_tag(const struct btape_reader *r, const char *key,
				       const void **value, size_t *len)
{
	const char *k;
	int i;

	if (!r || !key || !value || !len)
		return -EINVAL;
	if (!r->has_footer)
		return 0;
	i = btape_ftags_find(&r->ftags, key, strlen(key));
	return i < 0 ? 0 : btape_reader__footer_tag_at(r, (uint32_t)i, &k, value, len);
}

BTAPE_API int btape_reader__chunk_info(const struct btape_reader *r, uint64_t i,
				       struct btape_chunk_info *ci)
{
	struct btape_chunk_info c = {.sz = sizeof(c)};

	if (!r || !ci || ci->sz < sizeof(c))
		return -EINVAL;
	if (!r->has_footer || i >= r->ix.n)
		return 0;
	c.events = r->ix.events[i];
	c.issue_min_ns = r->ix.issue_min[i];
	c.issue_max_ns = r->ix.issue_max[i];
	*ci = c;
	return 1;
}

BTAPE_API const char *btape_reader__name(const struct btape_reader *r)
{
	return r ? r->name : NULL;
}

BTAPE_API const char *btape_reader__errmsg(const struct btape_reader *r)
{
	if (!r)
		return "no reader";
	return r->errmsg[0] ? r->errmsg : "no error";
}

/*
 * Finds the next valid envelope after a damaged one (seekable files only): scans for the
 * frame magic and checks the header checksum. Returns true when found (*off set).
 */
static bool resync(struct btape_reader *r, uint64_t from, uint64_t *off)
{
	uint8_t *buf;
	bool found = false;

	if (!r->seekable)
		return false;
	buf = malloc(RESYNC_WINDOW + BTAPE_ENV_SIZE);
	if (!buf)
		return false;
	while (!found && from + BTAPE_ENV_SIZE <= r->file_size) {
		ssize_t n = in_read_at(r, from, buf, RESYNC_WINDOW + BTAPE_ENV_SIZE);

		if (n < BTAPE_ENV_SIZE)
			break;
		for (ssize_t i = 0; i + BTAPE_ENV_SIZE <= n; i++) {
			unsigned int t;
			uint32_t a, b, c;

			if (buf[i] == (uint8_t)BTAPE_SKIP_ENV &&
			    !btape_env_parse(buf + i, &t, &a, &b, &c)) {
				*off = from + (uint64_t)i;
				found = true;
				break;
			}
		}
		from += RESYNC_WINDOW;
	}
	free(buf);
	return found;
}

/* Loads the next chunk frame into r->dec. 1: loaded, 0: end, <0: error. */
static int load_chunk(struct btape_reader *r)
{
	char why[256];

	for (;;) {
		unsigned int type;
		uint64_t next = 0, off = r->next_off, no = r->next_no;
		bool env_ok;
		int ret;

		if (r->at_end)
			return 0;
		if (r->sticky)
			return r->sticky;
		ret = read_frame(r, &r->fb, off, no, &type, &next, &env_ok);
		if (ret == FR_EOF || ret == FR_TRUNC) {
			r->at_end = true;
			return 0;
		}
		if (ret < 0) {
			uint64_t at;

			/* the caller may call again: continue after the damaged frame */
			r->next_no++;
			if (env_ok)
				r->next_off = next;
			else if (resync(r, off + 1, &at))
				r->next_off = at;
			else
				r->at_end = true; /* reported once; nothing readable follows */
			return ret;
		}
		r->next_off = next;
		r->next_no++;
		if (type == BTAPE_FRAME_FOOTER) {
			r->saw_footer = true;
			r->at_end = true;
			if (!r->has_footer && !r->seekable &&
			    !btape_footer_unpack(&r->fsum, &r->ix, &r->ftags, r->fb.raw.p,
						 r->fb.raw.len, max_chunks(r, off), why,
						 sizeof(why)))
				r->has_footer = true; /* a stream: the footer comes at its end */
			return 0;
		}
		if (type != BTAPE_FRAME_CHUNK)
			continue;
		r->cur_off = off;
		r->cur_no = no;
		ret = btape_chunk_dec_start(&r->dec, r->fb.raw.p, r->fb.raw.len, r->it, why,
					    sizeof(why));
		if (ret) {
			raw_free(&r->fb); /* however large the frame was, not kept */
			return rfail(r, ret, "frame %" PRIu64 " at offset %" PRIu64 ": %s", no, off,
				     why);
		}
		return 1;
	}
}

/* Decodes the next slice into r->slice. >0 events, 0 end, <0 error. */
static int fill_slice(struct btape_reader *r)
{
	char why[256];
	int n;

	for (;;) {
		n = btape_chunk_dec_next(&r->dec, r->slice, SLICE_EVENTS, why, sizeof(why));
		if (n < 0) {
			btape_chunk_dec_free(&r->dec);
			return rfail(r, n, "frame %" PRIu64 " at offset %" PRIu64 ": %s", r->cur_no,
				     r->cur_off, why);
		}
		if (n > 0) {
			r->slice_n = (uint32_t)n;
			r->slice_pos = 0;
			return n;
		}
		n = load_chunk(r);
		if (n <= 0)
			return n;
	}
}

BTAPE_API int btape_reader__next(struct btape_reader *r, struct btape_event *ev)
{
	if (!r || !ev)
		return -EINVAL;
	if (r->slice_pos >= r->slice_n) {
		int n = fill_slice(r);

		if (n <= 0)
			return n;
	}
	*ev = r->slice[r->slice_pos++];
	return 1;
}

BTAPE_API int btape_reader__skip_fields(struct btape_reader *r, uint32_t has_mask)
{
	if (!r || (has_mask & ~(uint32_t)BTAPE_HAS__ALL))
		return -EINVAL;
	r->dec.skip = has_mask;
	return 0;
}

BTAPE_API int btape_reader__next_batch(struct btape_reader *r, const struct btape_event **evs)
{
	int n;

	if (!r || !evs)
		return -EINVAL;
	if (r->slice_pos >= r->slice_n) {
		n = fill_slice(r);
		if (n <= 0)
			return n;
	}
	*evs = r->slice + r->slice_pos;
	n = (int)(r->slice_n - r->slice_pos);
	r->slice_pos = r->slice_n;
	return n;
}

BTAPE_API int btape_reader__seek(struct btape_reader *r, uint64_t ns)
{
	int ret;

	if (!r)
		return -EINVAL;
	r->slice_n = r->slice_pos = 0;
	btape_chunk_dec_free(&r->dec);
	if (r->seekable) {
		r->at_end = false;
		r->sticky = 0;
		r->next_off = r->data_off;
		r->next_no = 1;
		if (r->has_footer) {
			uint64_t i;

			for (i = 0; i < r->ix.n && r->ix.issue_max[i] < ns; i++)
				;
			if (i == r->ix.n) {
				r->at_end = true;
				return 0;
			}
			r->next_off = r->ix.offset[i];
			r->next_no = i + 1;
		}
	}
	for (;;) {
		ret = load_chunk(r);
		if (ret <= 0)
			return ret;
		if (r->dec.issue_max < ns) {
			r->dec.pos = r->dec.n; /* skipped whole */
			continue;
		}
		while ((ret = fill_slice(r)) > 0) {
			while (r->slice_pos < r->slice_n && r->slice[r->slice_pos].issue_ns < ns)
				r->slice_pos++;
			if (r->slice_pos < r->slice_n)
				return 0;
		}
		return ret;
	}
}

static void accumulate(struct btape_summary *s, const struct btape_event *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!s->events || e[i].issue_ns < s->first_issue_ns)
			s->first_issue_ns = e[i].issue_ns;
		if (e[i].issue_ns > s->last_issue_ns)
			s->last_issue_ns = e[i].issue_ns;
		if ((e[i].present & BTAPE_HAS_COMPLETE) && e[i].complete_ns > s->last_complete_ns)
			s->last_complete_ns = e[i].complete_ns;
		if (e[i].op < BTAPE_OP__COUNT) {
			s->count_by_op[e[i].op]++;
			s->bytes_by_op[e[i].op] += e[i].bytes;
		}
		s->events++;
	}
}

/*
 * Reads every frame from the first data frame, verifying checksums and decoding every event
 * into a summary. Independent of the streaming position.
 */
static int scan(struct btape_reader *r, struct btape_summary *s, struct btape_index *ix)
{
	struct fbuf fb = {0};
	struct chunk_dec dec = {0};
	struct btape_intern *it = btape_intern_new(BTAPE_READER_COMM_MAX_BYTES);
	struct btape_event *evs = malloc(sizeof(*evs) * SLICE_EVENTS);
	uint64_t off = r->data_off, no = 1;
	bool footer = false;
	char why[256];
	int ret = 0;

	memset(s, 0, sizeof(*s));
	if (!it || !evs) {
		ret = rfail(r, -ENOMEM, "out of memory");
		goto cleanup;
	}
	for (;;) {
		unsigned int type;
		uint64_t next;
		bool env_ok;
		int n;

		ret = read_frame(r, &fb, off, no, &type, &next, &env_ok);
		if (ret == FR_EOF || ret == FR_TRUNC) {
			s->recovered = true;
			s->recovered_bytes_ignored = r->seekable ? r->file_size - off : 0;
			ret = 0;
			break;
		}
		if (ret < 0)
			goto cleanup;
		if (type == BTAPE_FRAME_FOOTER) {
			footer = true;
			off = next;
			break;
		}
		if (type == BTAPE_FRAME_CHUNK) {
			ret = btape_chunk_dec_start(&dec, fb.raw.p, fb.raw.len, it, why,
						    sizeof(why));
			while (!ret && (n = btape_chunk_dec_next(&dec, evs, SLICE_EVENTS, why,
								 sizeof(why))) > 0)
				accumulate(s, evs, (uint32_t)n);
			if (!ret && n < 0)
				ret = n;
			if (ret) {
				rfail(r, ret, "frame %" PRIu64 " at offset %" PRIu64 ": %s", no,
				      off, why);
				goto cleanup;
			}
			if (ix && btape_index_add(ix, off, dec.issue_min, dec.issue_max, dec.n)) {
				ret = rfail(r, -ENOMEM, "out of memory");
				goto cleanup;
			}
			s->chunks++;
		}
		off = next;
		no++;
	}
	if (footer && r->seekable && r->file_size - off != BTAPE_TRAILER_SIZE) {
		/* footer present but no valid trailer after it */
		s->recovered = true;
		s->recovered_bytes_ignored = r->file_size - off;
	} else if (!footer) {
		s->recovered = true;
	}
cleanup:
	btape_chunk_dec_free(&dec);
	btape_intern_free(it);
	fbuf_free(&fb);
	free(evs);
	return ret;
}

BTAPE_API int btape_reader__summary(struct btape_reader *r, struct btape_summary *s)
{
	int ret;

	if (!r || !s || s->sz < offsetof(struct btape_summary, events) + sizeof(s->events))
		return -EINVAL;
	if (r->has_footer) {
		struct btape_summary f = r->fsum;

		f.chunks = r->ix.n;
		f.file_bytes = r->seekable ? r->file_size : r->next_off + BTAPE_TRAILER_SIZE;
		f.has_footer = true;
		f.recovered = false;
		f.recovered_bytes_ignored = 0;
		return btape_summary_copy_out(s, &f);
	}
	if (r->sum_cached)
		return btape_summary_copy_out(s, &r->sum);
	if (!r->seekable)
		return rfail(r, -ESPIPE, "a stream has its summary only after its last event");
	ret = scan(r, &r->sum, NULL);
	if (ret)
		return ret;
	r->sum.file_bytes = r->file_size;
	r->sum.has_footer = false;
	r->sum.recovered = true;
	r->sum.footer_damaged = r->footer_problem[0] != '\0';
	r->sum_cached = true;
	return btape_summary_copy_out(s, &r->sum);
}

BTAPE_API int btape_reader__verify(struct btape_reader *r)
{
	struct btape_summary s;
	struct btape_index ix = {0};
	int ret;

	if (!r)
		return -EINVAL;
	if (!r->seekable)
		return rfail(r, -ESPIPE, "verify needs a seekable file");
	if (r->footer_problem[0])
		return rfail(r, -EBADMSG, "%s", r->footer_problem);
	if (!r->has_footer && r->sum_cached)
		return 0; /* __summary's scan already verified every frame, and there is no footer */
	ret = scan(r, &s, &ix);
	if (!ret && r->has_footer) {
		bool same = s.events == r->fsum.events && ix.n == r->ix.n;

		for (uint64_t i = 0; same && i < ix.n; i++)
			same = ix.offset[i] == r->ix.offset[i] && ix.events[i] == r->ix.events[i] &&
			       ix.issue_min[i] == r->ix.issue_min[i] &&
			       ix.issue_max[i] == r->ix.issue_max[i];
		for (int op = 0; same && op < BTAPE_OP__COUNT; op++)
			same = s.count_by_op[op] == r->fsum.count_by_op[op] &&
			       s.bytes_by_op[op] == r->fsum.bytes_by_op[op];
		if (!same)
			ret = rfail(r, -EBADMSG, "footer does not match the frames");
	}
	btape_index_free(&ix);
	return ret;
}
