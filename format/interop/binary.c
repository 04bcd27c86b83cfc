// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Binary importers: blktrace (struct blk_io_trace + pdu, either byte order, per-CPU files
 * merged by time) and VMware vscsiStats traces (v1: 32-byte records, v2: 40-byte records
 * with a response time). Fields are decoded byte by byte: no struct overlays, no alignment
 * assumptions.
 */
#include "interop_internal.h"
#include "btape_le.h"

#include <stdio.h>
#include <stdlib.h>

/* blktrace: include/uapi/linux/blktrace_api.h */
#define BLK_IO_TRACE_MAGIC 0x65617400u
#define BLK_IO_TRACE_VERSION 0x07u
#define BLK_TRACE_BYTES 48u
#define BLK_PDU_MAX 4096u
#define BLK_TC_READ (1u << 0)
#define BLK_TC_WRITE (1u << 1)
#define BLK_TC_FLUSH (1u << 2)
#define BLK_TC_SYNC (1u << 3)
#define BLK_TC_QUEUE (1u << 4)
#define BLK_TC_PC (1u << 9)
#define BLK_TC_NOTIFY (1u << 10)
#define BLK_TC_AHEAD (1u << 11)
#define BLK_TC_META (1u << 12)
#define BLK_TC_DISCARD (1u << 13)
#define BLK_TC_FUA (1u << 15)
#define BLK_TA_QUEUE 1
#define BLK_TA_BACKMERGE 2
#define BLK_TA_FRONTMERGE 3
#define BLK_TA_REQUEUE 6
#define BLK_TA_ISSUE 7
#define BLK_TA_COMPLETE 8
#define BLK_TA_REMAP 15
#define BLK_TA_CGROUP (1u << 8)
#define BLK_TN_PROCESS 0
#define PIDMAP_MAX (1u << 16) /* pid -> comm entries (a hash; older entries are replaced) */

/* .btape's file magic (docs/BTAPE-FORMAT.md, "File header") */
static const uint8_t btape_file_magic[8] = {0x89, 'B', 'T', 'A', 'P', 'E', '\r', '\n'};

/* vscsi */
#define VSCSI_V1_BYTES 32u
#define VSCSI_V2_BYTES 40u

/* Fields of a blktrace record in the byte order blk_endian() found (1 little, 2 big). */
static inline uint16_t get16(const uint8_t *p, int endian)
{
	return endian == 1 ? get_le16(p) : get_be16(p);
}

static inline uint32_t get32(const uint8_t *p, int endian)
{
	return endian == 1 ? get_le32(p) : get_be32(p);
}

static inline uint64_t get64(const uint8_t *p, int endian)
{
	return endian == 1 ? get_le64(p) : get_be64(p);
}

/* 1 little-endian, 2 big-endian, 0 not a blktrace record. */
static int blk_endian(const uint8_t *p)
{
	if ((get_le32(p) & 0xffffff00u) == BLK_IO_TRACE_MAGIC)
		return 1;
	if ((get_be32(p) & 0xffffff00u) == BLK_IO_TRACE_MAGIC)
		return 2;
	return 0;
}

static int vscsi_version(const uint8_t *p, size_t len)
{
	/* the version byte is the high byte of 'ver': two records must agree (as vscsiStats
	 * readers check); v2 puts cmd,ver first, v1 at offset 12 */
	if (len >= 2 * VSCSI_V2_BYTES && get_le16(p + 2) >> 8 == 2 &&
	    get_le16(p + VSCSI_V2_BYTES + 2) >> 8 == 2)
		return 2;
	if (len >= 2 * VSCSI_V1_BYTES && get_le16(p + 14) >> 8 == 1 &&
	    get_le16(p + VSCSI_V1_BYTES + 14) >> 8 == 1)
		return 1;
	return 0;
}

int detect_binary(const uint8_t *p, size_t len)
{
	/* .btape: the file magic, bare or inside a zstd skippable frame (0x184D2A5?, size) */
	if (len >= sizeof(btape_file_magic) &&
	    !memcmp(p, btape_file_magic, sizeof(btape_file_magic)))
		return BTAPE_FMT_BTAPE;
	if (len >= 8 + sizeof(btape_file_magic) && (get_le32(p) & 0xfffffff0u) == 0x184D2A50u &&
	    !memcmp(p + 8, btape_file_magic, sizeof(btape_file_magic)))
		return BTAPE_FMT_BTAPE;
	if (len >= BLK_TRACE_BYTES && blk_endian(p)) {
		int e = blk_endian(p);
		uint32_t magic = get32(p, e);

		if ((magic & 0xff) == BLK_IO_TRACE_VERSION)
			return BTAPE_FMT_BLKTRACE;
	}
	if (vscsi_version(p, len))
		return BTAPE_FMT_VSCSI;
	return BTAPE_FMT_UNKNOWN;
}

/* ---- blktrace ---- */

struct blkrec {
	uint32_t magic, seq, bytes, action, pid, device, cpu;
	uint64_t time, sector;
	uint16_t error, pdu_len;
	uint8_t pdu[BLK_PDU_MAX];
};

struct bfile {
	struct isrc *s;
	int endian;
	bool have; /* rec is valid */
	bool done;
	uint64_t recno;
	struct blkrec rec;
};

struct pidcomm {
	uint32_t pid; /* 0 empty */
	char comm[32];
};

struct blkstate {
	struct pidcomm *pc; /* PIDMAP_MAX entries */
	bool have_last;
	uint32_t last_device;
	int last_idx;
};

/* The fixed fields of a record (struct blk_io_trace) in byte order ENDIAN. */
static inline __attribute__((always_inline)) void blk_fields(struct blkrec *r, const uint8_t *p,
							     int endian)
{
	r->magic = get32(p, endian);
	r->seq = get32(p + 4, endian);
	r->time = get64(p + 8, endian);
	r->sector = get64(p + 16, endian);
	r->bytes = get32(p + 24, endian);
	r->action = get32(p + 28, endian);
	r->pid = get32(p + 32, endian);
	r->device = get32(p + 36, endian);
	r->cpu = get32(p + 40, endian);
	r->error = get16(p + 44, endian);
	r->pdu_len = get16(p + 46, endian);
}

/* Reads the next record of f. Returns 1, 0 at EOF, or -errno (via imp_bad/imp_fail). */
static int blk_read(struct imp *im, struct bfile *f)
{
	const uint8_t *p;
	long n;
	struct blkrec *r = &f->rec;

	im->file = isrc_name(f->s);
	im->line = f->recno + 1;
	n = isrc_peek(f->s, BLK_TRACE_BYTES, &p);
	if (n < 0)
		return imp_fail(im, "%s", isrc_why(f->s));
	if (n == 0)
		return 0;
	if (n < (long)BLK_TRACE_BYTES)
		goto truncated;
	if (!f->endian)
		f->endian = blk_endian(p);
	if (blk_endian(p) != f->endian || f->endian == 0)
		goto bad_magic;
	/* a constant byte order per call: each is compiled for its order, no test per field */
	if (f->endian == 1)
		blk_fields(r, p, 1);
	else
		blk_fields(r, p, 2);
	if ((r->magic & 0xff) != BLK_IO_TRACE_VERSION) {
		int e = imp_bad(im, "blktrace version %u (expected %u)", r->magic & 0xff,
				BLK_IO_TRACE_VERSION);

		f->done = true; /* cannot resynchronise */
		return e;
	}
	if (r->pdu_len > BLK_PDU_MAX) {
		int e = imp_bad(im, "pdu of %u bytes (at most %u)", r->pdu_len, BLK_PDU_MAX);

		f->done = true;
		return e;
	}
	n = isrc_peek(f->s, BLK_TRACE_BYTES + r->pdu_len, &p);
	if (n < 0)
		return imp_fail(im, "%s", isrc_why(f->s));
	if (n < (long)(BLK_TRACE_BYTES + r->pdu_len))
		goto truncated;
	memcpy(r->pdu, p + BLK_TRACE_BYTES, r->pdu_len);
	isrc_skip(f->s, BLK_TRACE_BYTES + r->pdu_len);
	f->recno++;
	im->st.lines++;
	return 1;
truncated:
	f->done = true;
	return imp_bad(im, "truncated record (%ld bytes at the end)", n);
bad_magic:
	f->done = true;
	return imp_bad(im, "bad magic (not a blk_io_trace record): stream out of step");
}

static void majmin_of(uint32_t dev, uint32_t *maj, uint32_t *min)
{
	*maj = dev >> 20; /* the kernel's internal dev_t: MINORBITS 20 */
	*min = dev & 0xfffffu;
}

/* The data letter blkparse prints for class bits tc (its fill_rwbs()): D, W, R or N. */
static char blk_letter(uint32_t tc, uint32_t bytes)
{
	if (tc & BLK_TC_DISCARD)
		return 'D';
	if (tc & BLK_TC_WRITE)
		return 'W';
	return bytes ? 'R' : 'N';
}

static int blk_event(struct imp *im, struct bfile *f, struct blkstate *bs)
{
	struct pidcomm *pc = bs->pc;
	const struct blkrec *r = &f->rec;
	uint32_t what = r->action & 0xffu, tc = r->action >> 16, maj, min;
	const uint8_t *pdu = r->pdu;
	size_t pdu_len = r->pdu_len;
	struct jev e = {0};
	char name[32];
	int d;

	if (tc & BLK_TC_NOTIFY) {
		if ((r->action & 0xffu) == BLK_TN_PROCESS && r->pid) {
			struct pidcomm *slot;

			if (!pc) { /* allocated at the first process note */
				pc = bs->pc = calloc(PIDMAP_MAX, sizeof(*pc));
				if (!pc)
					return imp_fail(im, "out of memory");
			}
			slot = &pc[r->pid % PIDMAP_MAX];
			size_t off = (r->action & BLK_TA_CGROUP) ? 8 : 0, n;

			if (pdu_len > off) {
				n = strnlen((const char *)pdu + off, pdu_len - off);
				if (n > 31)
					n = 31;
				slot->pid = r->pid;
				memcpy(slot->comm, pdu + off, n);
				slot->comm[n] = 0;
			}
		}
		im->st.ignored++;
		return 0;
	}
	if (r->action & BLK_TA_CGROUP) {
		if (pdu_len < 8)
			return imp_bad(im, "cgroup flag without a cgroup id");
		pdu += 8;
		pdu_len -= 8;
	}
	if (tc & BLK_TC_PC) {
		im->st.ignored++; /* SCSI passthrough: no block I/O */
		return 0;
	}
	switch (what) {
	case BLK_TA_QUEUE:
		e.act = JA_QUEUE;
		break;
	case BLK_TA_BACKMERGE:
		e.act = JA_BACKMERGE;
		break;
	case BLK_TA_FRONTMERGE:
		e.act = JA_FRONTMERGE;
		break;
	case BLK_TA_REQUEUE:
		e.act = JA_REQUEUE;
		break;
	case BLK_TA_ISSUE:
		e.act = JA_ISSUE;
		break;
	case BLK_TA_COMPLETE:
		e.act = JA_COMPLETE;
		break;
	case BLK_TA_REMAP:
		e.act = JA_REMAP;
		if (pdu_len < 16)
			return imp_bad(im, "remap without its 16-byte payload");
		{
			uint32_t fmaj, fmin;

			/* struct blk_io_trace_remap: always big-endian */
			majmin_of(get_be32(pdu), &fmaj, &fmin);
			e.from_devkey = (uint64_t)fmaj << 32 | fmin;
			e.from_sector = get_be64(pdu + 8);
		}
		break;
	default:
		if (what == 0 || what > 17)
			return imp_bad(im, "unknown action %u", what);
		im->st.ignored++; /* get/sleep/plug/unplug/insert/split/bounce/abort/drv data */
		return 0;
	}
	majmin_of(r->device, &maj, &min);
	if (e.act == JA_REMAP) {
		d = -1; /* a remap adds no device (as in parse_blkparse_line) */
	} else if (bs->have_last && bs->last_device == r->device) {
		d = bs->last_idx; /* skip formatting the name for the usual same device */
	} else {
		snprintf(name, sizeof(name), "%u,%u", maj, min);
		d = imp_device(im, name, strlen(name), maj, min);
		if (d < 0)
			return d;
		bs->have_last = true;
		bs->last_device = r->device;
		bs->last_idx = d;
	}
	e.dev = d;
	e.devkey = (uint64_t)maj << 32 | min;
	e.time_ns = r->time;
	e.sector = r->sector;
	e.bytes = r->bytes;
	e.cpu = r->cpu;
	blk_classify(tc & BLK_TC_FLUSH, blk_letter(tc, r->bytes), r->bytes, &e.op, &e.flags);
	if (tc & BLK_TC_SYNC)
		e.flags |= BTAPE_FLAG_SYNC;
	if (tc & BLK_TC_FUA)
		e.flags |= BTAPE_FLAG_FUA;
	if (tc & BLK_TC_META)
		e.flags |= BTAPE_FLAG_META;
	if (tc & BLK_TC_AHEAD)
		e.flags |= BTAPE_FLAG_READAHEAD;
	if (e.act == JA_COMPLETE) {
		int16_t err = (int16_t)r->error;

		e.error = err > 0 ? -err : err;
		e.has_error = true;
	}
	if (e.act == JA_QUEUE) {
		const struct pidcomm *slot = pc ? &pc[r->pid % PIDMAP_MAX] : NULL;

		e.pid = r->pid;
		e.has_pid = true;
		if (slot && slot->pid == r->pid && slot->comm[0])
			e.comm = slot->comm;
	}
	return join_event(im, &e);
}

int parse_blktrace(struct imp *im, struct isrc **srcs, size_t n)
{
	struct bfile *fs = calloc(n, sizeof(*fs));
	struct blkstate bs = {0};
	int err = 0;

	if (!fs) {
		err = imp_fail(im, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		fs[i].s = srcs[i];
	for (;;) {
		struct bfile *best = NULL;

		/* refill heads, pick the oldest (k-way merge of time-sorted per-CPU files) */
		for (size_t i = 0; i < n; i++) {
			struct bfile *f = &fs[i];

			while (!f->have && !f->done) {
				int r = blk_read(im, f);

				if (r < 0) {
					err = r;
					goto cleanup;
				}
				if (r == 0)
					f->done = true; /* end, or a bad tail skipped */
				else
					f->have = true;
			}
			if (f->have && (!best || f->rec.time < best->rec.time))
				best = f;
		}
		if (!best)
			break;
		im->file = isrc_name(best->s);
		im->line = best->recno;
		err = blk_event(im, best, &bs);
		if (err)
			goto cleanup;
		best->have = false;
	}
cleanup:
	free(fs);
	free(bs.pc);
	return err;
}

/* ---- vscsi ---- */

static int scsi_op(uint16_t cmd, uint8_t *op)
{
	switch (cmd & 0xff) {
	case 0x08:
	case 0x28:
	case 0xa8:
	case 0x88: /* READ(6/10/12/16) */
		*op = BTAPE_OP_READ;
		return 0;
	case 0x0a:
	case 0x2a:
	case 0xaa:
	case 0x8a: /* WRITE(6/10/12/16) */
	case 0x2e:
	case 0xae:
	case 0x8e: /* WRITE AND VERIFY */
		*op = BTAPE_OP_WRITE;
		return 0;
	case 0x35:
	case 0x91: /* SYNCHRONIZE CACHE(10/16) */
		*op = BTAPE_OP_FLUSH;
		return 0;
	case 0x42: /* UNMAP */
		*op = BTAPE_OP_DISCARD;
		return 0;
	default:
		*op = BTAPE_OP_OTHER;
		return 0;
	}
}

/* Device id: the file's base name, without .gz/.zst. */
static void vscsi_devname(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 3 && !strcmp(b + n - 3, ".gz"))
		n -= 3;
	else if (n > 4 && !strcmp(b + n - 4, ".zst"))
		n -= 4;
	if (n == 0) {
		b = "vscsi";
		n = 5;
	}
	snprintf(buf, len, "%.*s", (int)n, b);
}

int parse_vscsi(struct imp *im, struct isrc *s)
{
	const uint8_t *p;
	char name[BTAPE_NAME_MAX];
	long n;
	int ver, d;
	size_t rec;

	im->file = isrc_name(s);
	im->line = 0;
	n = isrc_peek(s, 2 * VSCSI_V2_BYTES, &p);
	if (n < 0)
		return imp_fail(im, "%s", isrc_why(s));
	if (n == 0)
		return 0;
	ver = vscsi_version(p, (size_t)n);
	if (!ver && n >= (long)VSCSI_V2_BYTES && get_le16(p + 2) >> 8 == 2 &&
	    n < (long)(2 * VSCSI_V2_BYTES))
		ver = 2; /* a single record */
	if (!ver && n >= (long)VSCSI_V1_BYTES && get_le16(p + 14) >> 8 == 1 &&
	    n < (long)(2 * VSCSI_V1_BYTES))
		ver = 1;
	if (!ver)
		return imp_fail(im, "not a vscsi v1/v2 trace (no version byte 1 or 2)");
	rec = ver == 2 ? VSCSI_V2_BYTES : VSCSI_V1_BYTES;
	vscsi_devname(im->file, name, sizeof(name));
	d = imp_device(im, name, strlen(name), 0, 0);
	if (d < 0)
		return d;
	for (;;) {
		struct btape_event ev = {0};
		uint16_t cmd, v;
		uint32_t len;
		uint64_t lbn, ts, rt = 0;
		int err;

		n = isrc_peek(s, rec, &p);
		if (n < 0)
			return imp_fail(im, "%s", isrc_why(s));
		if (n == 0)
			return 0;
		im->line++;
		im->st.lines++;
		if (n < (long)rec)
			return imp_bad(im, "truncated record (%ld of %zu bytes)", n, rec);
		if (ver == 2) {
			cmd = get_le16(p);
			v = get_le16(p + 2);
			len = get_le32(p + 8);
			lbn = get_le64(p + 16);
			ts = get_le64(p + 24);
			rt = get_le64(p + 32);
		} else {
			len = get_le32(p + 4);
			cmd = get_le16(p + 12);
			v = get_le16(p + 14);
			lbn = get_le64(p + 16);
			ts = get_le64(p + 24);
		}
		isrc_skip(s, rec);
		if (v >> 8 != ver) {
			err = imp_bad(im, "record version %u in a v%d trace", v >> 8, ver);
			if (err)
				return err;
			continue;
		}
		if (ts > UINT64_MAX / 1000 || rt > UINT64_MAX / 1000 ||
		    ts * 1000 > UINT64_MAX - rt * 1000) {
			err = imp_bad(im, "timestamp or response time out of range");
			if (err)
				return err;
			continue;
		}
		scsi_op(cmd, &ev.op);
		ev.dev = (uint32_t)d;
		ev.issue_ns = ts * 1000;
		ev.sector = lbn;
		ev.bytes = len;
		if (ver == 2) {
			ev.complete_ns = ev.issue_ns + rt * 1000;
			ev.present |= BTAPE_HAS_COMPLETE;
		}
		err = imp_emit(im, &ev);
		if (err)
			return err;
	}
}
