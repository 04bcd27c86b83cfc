// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Input sources for the importers: a file or a memory buffer, read through zlib (gzip) or
 * libzstd (zstd) when its first bytes carry their magic. One fixed window of decompressed
 * bytes: memory does not depend on the input's length.
 */
#include "interop_internal.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define ISRC_IN_BYTES (256u << 10) /* compressed read size */
#define ISRC_SLACK_BYTES 16u	   /* readable bytes after the window's end (NUL + word reads) */

enum codec { CODEC_RAW, CODEC_GZIP, CODEC_ZSTD };

struct isrc {
	char *name;
	int fd;		    /* -1 for memory */
	const uint8_t *mem; /* memory source */
	size_t mem_len, mem_pos;
	enum codec codec;
	uint8_t *in; /* compressed input buffer */
	size_t in_pos, in_len;
	bool in_eof;
	z_stream zs;
	bool zs_init;
	bool gz_end; /* last gzip member ended */
	ZSTD_DStream *zds;
	bool zstd_more;	   /* the current zstd frame is not finished */
	uint8_t *buf;	   /* decompressed window */
	size_t pos, end;   /* unread bytes: buf[pos..end) */
	bool eof;	   /* no more decompressed bytes */
	uint64_t consumed; /* decompressed bytes before buf[0] */
	char err[256];
	size_t why_at; /* err + why_at: the reason without the name */
};

static int src_fail(struct isrc *s, int err, const char *why)
{
	int n = snprintf(s->err, sizeof(s->err), "%s: ", s->name);

	s->why_at = n > 0 && (size_t)n < sizeof(s->err) ? (size_t)n : 0;
	snprintf(s->err + s->why_at, sizeof(s->err) - s->why_at, "%s", why);
	return err;
}

/* Raw bytes from the file or memory; returns count, 0 at EOF, or -errno. */
static long raw_read(struct isrc *s, uint8_t *dst, size_t n)
{
	if (s->fd < 0) {
		size_t k = s->mem_len - s->mem_pos;

		if (k > n)
			k = n;
		memcpy(dst, s->mem + s->mem_pos, k);
		s->mem_pos += k;
		return (long)k;
	}
	for (;;) {
		ssize_t r = read(s->fd, dst, n);

		if (r >= 0)
			return (long)r;
		if (errno != EINTR)
			return src_fail(s, -errno, strerror(errno));
	}
}

static int fill_in(struct isrc *s)
{
	long r;

	if (s->in_pos < s->in_len || s->in_eof)
		return 0;
	r = raw_read(s, s->in, ISRC_IN_BYTES);
	if (r < 0)
		return (int)r;
	s->in_pos = 0;
	s->in_len = (size_t)r;
	if (r == 0)
		s->in_eof = true;
	return 0;
}

/* Appends decompressed bytes at buf[end..cap). Returns bytes added (0 at EOF) or -errno. */
static long produce(struct isrc *s, size_t cap)
{
	uint8_t *dst = s->buf + s->end;
	size_t room = cap - s->end;
	int err;

	if (s->codec == CODEC_RAW) {
		if (s->in_pos < s->in_len) { /* bytes consumed by the magic probe */
			size_t k = s->in_len - s->in_pos;

			if (k > room)
				k = room;
			memcpy(dst, s->in + s->in_pos, k);
			s->in_pos += k;
			return (long)k;
		}
		return raw_read(s, dst, room);
	}
	for (;;) {
		err = fill_in(s);
		if (err)
			return err;
		if (s->codec == CODEC_GZIP) {
			int zr;

			if (s->gz_end) {
				if (s->in_pos >= s->in_len && s->in_eof)
					return 0;
				if (inflateReset(&s->zs) != Z_OK)
					return src_fail(s, -EIO, "gzip: cannot reset");
				s->gz_end = false;
			}
			if (s->in_pos >= s->in_len && s->in_eof)
				return src_fail(s, -EINVAL, "gzip: truncated input");
			s->zs.next_in = s->in + s->in_pos;
			s->zs.avail_in = (uInt)(s->in_len - s->in_pos);
			s->zs.next_out = dst;
			s->zs.avail_out = (uInt)room;
			zr = inflate(&s->zs, Z_NO_FLUSH);
			s->in_pos = s->in_len - s->zs.avail_in;
			if (zr == Z_STREAM_END)
				s->gz_end = true;
			else if (zr != Z_OK && zr != Z_BUF_ERROR)
				return src_fail(s, -EINVAL,
						s->zs.msg ? s->zs.msg : "gzip: bad data");
			if (room - s->zs.avail_out > 0)
				return (long)(room - s->zs.avail_out);
		} else {
			ZSTD_inBuffer zi = {s->in + s->in_pos, s->in_len - s->in_pos, 0};
			ZSTD_outBuffer zo = {dst, room, 0};
			size_t zr;

			if (zi.size == 0 && s->in_eof && !s->zstd_more)
				return 0;
			zr = ZSTD_decompressStream(s->zds, &zo, &zi);
			s->in_pos += zi.pos;
			if (ZSTD_isError(zr))
				return src_fail(s, -EINVAL, ZSTD_getErrorName(zr));
			s->zstd_more = zr != 0;
			if (zo.pos > 0)
				return (long)zo.pos;
			if (zi.size == 0 && s->in_eof)
				return src_fail(s, -EINVAL, "zstd: truncated input");
		}
	}
}

/* Ensures at least n unread bytes (or EOF). Returns available count or -errno. */
static long ensure(struct isrc *s, size_t n)
{
	while (s->end - s->pos < n && !s->eof) {
		long r;

		if (s->end == ISRC_BUF_BYTES || (s->pos > 0 && s->end - s->pos < n)) {
			memmove(s->buf, s->buf + s->pos, s->end - s->pos);
			s->consumed += s->pos;
			s->end -= s->pos;
			s->pos = 0;
		}
		r = produce(s, ISRC_BUF_BYTES);
		if (r < 0)
			return r;
		if (r == 0)
			s->eof = true;
		s->end += (size_t)r;
	}
	return (long)(s->end - s->pos);
}

static int open_common(struct isrc *s)
{
	static const uint8_t gz_magic[2] = {0x1f, 0x8b};
	static const uint8_t zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
	long r;

	s->in = calloc(1, ISRC_IN_BYTES);
	s->buf =
		calloc(1, ISRC_BUF_BYTES + ISRC_SLACK_BYTES); /* slack: parsers read 8-byte words */
	if (!s->in || !s->buf)
		return src_fail(s, -ENOMEM, "out of memory");
	/* Probe the magic: read up to 4 bytes into in[]. */
	while (s->in_len < 4 && !s->in_eof) {
		r = raw_read(s, s->in + s->in_len, 4 - s->in_len);
		if (r < 0)
			return (int)r;
		if (r == 0)
			s->in_eof = true;
		s->in_len += (size_t)r;
	}
	if (s->in_len >= 2 && !memcmp(s->in, gz_magic, 2)) {
		s->codec = CODEC_GZIP;
		if (inflateInit2(&s->zs, 15 + 16) != Z_OK)
			return src_fail(s, -ENOMEM, "gzip: cannot initialise zlib");
		s->zs_init = true;
	} else if (s->in_len >= 4 && !memcmp(s->in, zstd_magic, 4)) {
		s->codec = CODEC_ZSTD;
		s->zds = ZSTD_createDStream();
		if (!s->zds || ZSTD_isError(ZSTD_initDStream(s->zds)))
			return src_fail(s, -ENOMEM, "zstd: cannot create a decoder");
	}
	return 0;
}

static struct isrc *src_alloc(const char *name)
{
	struct isrc *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = -1;
	s->name = strdup(name ? name : "(input)");
	if (!s->name) {
		free(s);
		return NULL;
	}
	return s;
}

int isrc_open(struct isrc **sp, const char *path, char *errmsg, size_t errlen)
{
	struct isrc *s = src_alloc(path);
	int err;

	*sp = NULL;
	if (!s) {
		snprintf(errmsg, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* an import reads its input twice, and a FIFO's open() would block: files only */
	struct stat sb;

	bool known = stat(path, &sb) == 0;

	if (known && S_ISDIR(sb.st_mode)) {
		snprintf(errmsg, errlen, "%s: %s", path, strerror(EISDIR));
		isrc_close(s);
		return -EISDIR;
	}
	if (known && !S_ISREG(sb.st_mode)) {
		snprintf(errmsg, errlen,
			 "%s: not a regular file (imports read their input twice: save a pipe's "
			 "output to a file first)",
			 path);
		isrc_close(s);
		return -EINVAL;
	}
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		err = -errno;
		snprintf(errmsg, errlen, "%s: %s", path, strerror(errno));
		isrc_close(s);
		return err;
	}
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	err = open_common(s);
	if (err) {
		snprintf(errmsg, errlen, "%s", s->err);
		isrc_close(s);
		return err;
	}
	*sp = s;
	return 0;
}

int isrc_open_mem(struct isrc **sp, const void *data, size_t len, const char *name, char *errmsg,
		  size_t errlen)
{
	struct isrc *s = src_alloc(name);
	int err;

	*sp = NULL;
	if (!s) {
		snprintf(errmsg, errlen, "out of memory");
		return -ENOMEM;
	}
	s->mem = data;
	s->mem_len = len;
	err = open_common(s);
	if (err) {
		snprintf(errmsg, errlen, "%s", s->err);
		isrc_close(s);
		return err;
	}
	*sp = s;
	return 0;
}

void isrc_close(struct isrc *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->zs_init)
		inflateEnd(&s->zs);
	ZSTD_freeDStream(s->zds);
	free(s->in);
	free(s->buf);
	free(s->name);
	free(s);
}

const char *isrc_name(const struct isrc *s)
{
	return s->name;
}

const char *isrc_errmsg(const struct isrc *s)
{
	return s->err;
}

const char *isrc_why(const struct isrc *s)
{
	return s->err + s->why_at;
}

uint64_t isrc_offset(const struct isrc *s)
{
	return s->consumed + s->pos;
}

int isrc_getline(struct isrc *s, char **line, size_t *len)
{
	size_t scanned = 0;

	for (;;) {
		uint8_t *start = s->buf + s->pos;
		size_t avail = s->end - s->pos;
		uint8_t *nl =
			scanned < avail ? memchr(start + scanned, '\n', avail - scanned) : NULL;
		long r;

		if (nl) {
			size_t n = (size_t)(nl - start);

			if (n > ISRC_LINE_MAX)
				return src_fail(s, -E2BIG, "line too long");
			*nl = 0;
			if (n > 0 && start[n - 1] == '\r')
				start[--n] = 0;
			s->pos += (size_t)(nl - start) + 1;
			*line = (char *)start;
			*len = n;
			return 1;
		}
		if (avail > ISRC_LINE_MAX)
			return src_fail(s, -E2BIG, "line too long");
		if (s->eof) {
			if (avail == 0)
				return 0;
			/* last line without a newline: buf has one spare byte for the NUL */
			start[avail] = 0;
			if (start[avail - 1] == '\r')
				start[--avail] = 0;
			s->pos = s->end;
			*line = (char *)start;
			*len = avail;
			return 1;
		}
		scanned = avail;
		r = ensure(s, avail + 1);
		if (r < 0)
			return (int)r;
	}
}

long isrc_peek(struct isrc *s, size_t n, const uint8_t **p)
{
	long r;

	if (n > ISRC_BUF_BYTES)
		return src_fail(s, -E2BIG, "record too large");
	r = ensure(s, n);
	if (r < 0)
		return r;
	*p = s->buf + s->pos;
	return r < (long)n ? r : (long)n;
}

void isrc_skip(struct isrc *s, size_t n)
{
	s->pos += n;
}
