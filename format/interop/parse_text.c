// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Line parsers of the text formats. Each turns one line into at most one btape_event (or,
 * for blkparse, one request event for the joiner). Units and rules: docs/INTEROP.md.
 */
#include "interop_internal.h"

#include <stdio.h>

#define SECTOR_BYTES 512u
#define FILETIME_UNIX_EPOCH 116444736000000000ull /* 100 ns ticks from 1601 to 1970 */
#define NS_PER_S 1000000000ull
#define NS_PER_US 1000ull

static int mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_mul_overflow(a, b, r) ? -ERANGE : 0;
}

static int num(struct imp *im, const struct field *f, const char *what, uint64_t *v)
{
	int err = field_u64(f, v);

	if (err)
		return imp_bad(im, "%s '%.*s': %s", what, (int)(f->n > 40 ? 40 : f->n), f->p,
			       err == -ERANGE ? "out of range" : "not an unsigned integer");
	return 1;
}

#define NUM(f, what, v)                             \
	do {                                        \
		int r_ = num(im, (f), (what), (v)); \
		if (r_ <= 0)                        \
			return r_;                  \
	} while (0)

static int fields_bad(struct imp *im, int n, const char *want)
{
	if (n > FIELDS_MAX)
		return imp_bad(im, "too many fields (expected %s)", want);
	return imp_bad(im, "%d fields (expected %s)", n, want);
}

static int bytes_of_sectors(struct imp *im, uint64_t sectors, uint64_t *bytes)
{
	if (mul_ok(sectors, SECTOR_BYTES, bytes))
		return imp_bad(im, "size of %llu sectors overflows", (unsigned long long)sectors);
	return 1;
}

static int sector_of_bytes(struct imp *im, uint64_t off, uint64_t *sector)
{
	if (off % SECTOR_BYTES)
		return imp_bad(im, "offset %llu is not a multiple of 512 bytes",
			       (unsigned long long)off);
	*sector = off / SECTOR_BYTES;
	return 1;
}

static int dev_of(struct imp *im, const struct field *f, uint32_t *dev)
{
	int d;

	if (f->n == 0)
		return imp_bad(im, "empty device id");
	d = imp_device(im, f->p, f->n, 0, 0);

	if (d < 0)
		return d;
	*dev = (uint32_t)d;
	return 1;
}

/*
 * Fast paths: one pass over a well-formed line, digits converted while scanning. Anything
 * unexpected (blanks, signs, a wrong field count, a value the slow path would reject) returns
 * false and the line goes through the careful parser, which accepts it or names the problem.
 */
/* The value of 8 ASCII digits already minus '0', the first in the lowest byte. */
static inline uint64_t swar8(uint64_t t)
{
	t = (t * 10) + (t >> 8);
	return (((t & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
		(((t >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >>
	       32;
}

static const uint64_t pow10_tab[9] = {1,      10,      100,	 1000,	   10000,
				      100000, 1000000, 10000000, 100000000};

static inline bool fast_u64(const char **pp, const char *end, char sep, bool last, uint64_t *v,
			    struct field *f)
{
	const char *p = *pp, *s = p;
	uint64_t x = 0;

	/*
	 * Eight bytes at a time (the source buffer has slack after every line, which ends in a
	 * NUL): a byte is a digit iff neither b - '0' nor b + 0x46 sets its top bit; borrows and
	 * carries only run upwards, from bytes past the first non-digit, which are ignored.
	 */
	for (;;) {
		uint64_t w, t, nd;
		unsigned int k;

		memcpy(&w, p, 8);
		t = w - 0x3030303030303030ull;
		nd = (t | (w + 0x4646464646464646ull)) & 0x8080808080808080ull;
		k = nd ? (unsigned int)__builtin_ctzll(nd) >> 3 : 8;
		if (p - s + k > 19)
			return false; /* 20 digits: the careful parser checks the range */
		if (k) {
			if (k < 8)
				t <<= (8 - k) * 8;
			x = x * pow10_tab[k] + swar8(t);
			p += k;
		}
		if (k < 8)
			break;
	}
	if (p == s || (last ? p != end : (p == end || *p != sep)))
		return false;
	if (f) {
		f->p = s;
		f->n = (uint32_t)(p - s);
	}
	*pp = last ? p : p + 1;
	*v = x;
	return true;
}

static inline bool fast_tok(const char **pp, const char *end, char sep, bool last, struct field *f)
{
	const char *p = *pp, *s = p;

	while (p < end && *p != sep) {
		if (*p == ' ' || *p == '\t')
			return false;
		p++;
	}
	if (p == s || (last ? p != end : p == end))
		return false;
	f->p = s;
	f->n = (uint32_t)(p - s);
	*pp = last ? p : p + 1;
	return true;
}

static int fast_alibaba(struct imp *im, const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	struct btape_event ev = {0};
	struct field id, op;
	uint64_t v, off, us;
	int d;

	if (!fast_u64(&p, end, ',', false, &v, &id) || !fast_tok(&p, end, ',', false, &op) ||
	    op.n != 1 || !fast_u64(&p, end, ',', false, &off, NULL) ||
	    !fast_u64(&p, end, ',', false, &ev.bytes, NULL) ||
	    !fast_u64(&p, end, ',', true, &us, NULL) || off % SECTOR_BYTES ||
	    us > UINT64_MAX / NS_PER_US)
		return 1;
	if (op.p[0] == 'R' || op.p[0] == 'r')
		ev.op = BTAPE_OP_READ;
	else if (op.p[0] == 'W' || op.p[0] == 'w')
		ev.op = BTAPE_OP_WRITE;
	else
		return 1;
	d = imp_device(im, id.p, id.n, 0, 0);
	if (d < 0)
		return d;
	ev.dev = (uint32_t)d;
	ev.sector = off / SECTOR_BYTES;
	ev.issue_ns = us * NS_PER_US;
	return imp_emit(im, &ev);
}

static int fast_tencent(struct imp *im, const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	struct btape_event ev = {0};
	struct field vol, tf;
	uint64_t s, nsect, type, v;
	int d;

	if (!fast_u64(&p, end, ',', false, &s, NULL) ||
	    !fast_u64(&p, end, ',', false, &ev.sector, NULL) ||
	    !fast_u64(&p, end, ',', false, &nsect, NULL) ||
	    !fast_u64(&p, end, ',', false, &type, &tf) || !fast_u64(&p, end, ',', true, &v, &vol) ||
	    type > 1 || tf.n != 1 || s > UINT64_MAX / NS_PER_S || nsect > UINT64_MAX / SECTOR_BYTES)
		return 1;
	ev.op = type ? BTAPE_OP_WRITE : BTAPE_OP_READ;
	d = imp_device(im, vol.p, vol.n, 0, 0);
	if (d < 0)
		return d;
	ev.dev = (uint32_t)d;
	ev.issue_ns = s * NS_PER_S;
	ev.bytes = nsect * SECTOR_BYTES;
	return imp_emit(im, &ev);
}

static int fast_mqsim(struct imp *im, const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	struct btape_event ev = {0};
	struct field dev, tf;
	uint64_t nsect, type, v;
	int d;

	if (!fast_u64(&p, end, ' ', false, &ev.issue_ns, NULL) ||
	    !fast_u64(&p, end, ' ', false, &v, &dev) ||
	    !fast_u64(&p, end, ' ', false, &ev.sector, NULL) ||
	    !fast_u64(&p, end, ' ', false, &nsect, NULL) ||
	    !fast_u64(&p, end, ' ', true, &type, &tf) || type > 1 || tf.n != 1 ||
	    nsect > UINT64_MAX / SECTOR_BYTES)
		return 1;
	ev.op = type ? BTAPE_OP_READ : BTAPE_OP_WRITE;
	d = imp_device(im, dev.p, dev.n, 0, 0);
	if (d < 0)
		return d;
	ev.dev = (uint32_t)d;
	ev.bytes = nsect * SECTOR_BYTES;
	return imp_emit(im, &ev);
}

#define CALL(expr)                 \
	do {                       \
		int r_ = (expr);   \
		if (r_ <= 0)       \
			return r_; \
	} while (0)

/* DiskSim / MQSim ASCII: time_ns dev sector nsectors type (1 read, 0 write). */
int parse_mqsim_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	uint64_t nsect;
	int n = fast_mqsim(im, line, len);

	if (n <= 0)
		return n;
	n = split_fields(line, len, ' ', f, FIELDS_MAX);
	if (n != 5)
		return fields_bad(im, n, "5: time device sector sectors type");
	if (field_dec_scaled(&f[0], 0, &ev.issue_ns))
		return imp_bad(im, "time '%.*s': not a number of ns", (int)f[0].n, f[0].p);
	CALL(dev_of(im, &f[1], &ev.dev));
	NUM(&f[2], "sector", &ev.sector);
	NUM(&f[3], "size (sectors)", &nsect);
	CALL(bytes_of_sectors(im, nsect, &ev.bytes));
	if (field_eq(&f[4], "1"))
		ev.op = BTAPE_OP_READ;
	else if (field_eq(&f[4], "0"))
		ev.op = BTAPE_OP_WRITE;
	else
		return imp_bad(im, "type '%.*s': expected 1 (read) or 0 (write)", (int)f[4].n,
			       f[4].p);
	return imp_emit(im, &ev);
}

/* FIU: ts_ns pid process lba size_blocks R|W major minor [md5]. */
int parse_fiu_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	uint64_t pid, blocks, major, minor;
	char name[48], comm[BTAPE_NAME_MAX];
	int n = split_fields(line, len, ' ', f, FIELDS_MAX);
	int d;

	if (n != 9 && n != 8)
		return fields_bad(im, n, "9: ts pid process lba size rw major minor md5");
	NUM(&f[0], "timestamp (ns)", &ev.issue_ns);
	NUM(&f[1], "pid", &pid);
	if (pid > UINT32_MAX)
		return imp_bad(im, "pid %llu out of range", (unsigned long long)pid);
	NUM(&f[3], "lba", &ev.sector);
	NUM(&f[4], "size (blocks)", &blocks);
	CALL(bytes_of_sectors(im, blocks, &ev.bytes));
	if (field_ieq(&f[5], "R"))
		ev.op = BTAPE_OP_READ;
	else if (field_ieq(&f[5], "W"))
		ev.op = BTAPE_OP_WRITE;
	else
		return imp_bad(im, "operation '%.*s': expected R or W", (int)f[5].n, f[5].p);
	NUM(&f[6], "major", &major);
	NUM(&f[7], "minor", &minor);
	if (major > 4095 || minor > 0xfffff)
		return imp_bad(im, "device %llu,%llu out of range", (unsigned long long)major,
			       (unsigned long long)minor);
	snprintf(name, sizeof(name), "%llu,%llu", (unsigned long long)major,
		 (unsigned long long)minor);
	d = imp_device(im, name, strlen(name), (uint32_t)major, (uint32_t)minor);
	if (d < 0)
		return d;
	ev.dev = (uint32_t)d;
	snprintf(comm, sizeof(comm), "%.*s", (int)f[2].n, f[2].p);
	ev.pid = (uint32_t)pid;
	ev.comm = comm;
	ev.present = BTAPE_HAS_PID | BTAPE_HAS_COMM;
	return imp_emit(im, &ev);
}

/* UMass / SPC: ASU,LBA,Size_bytes,Opcode,Timestamp_s[,optional fields]. */
int parse_umass_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	uint64_t asu;
	int n = split_fields(line, len, ',', f, FIELDS_MAX);

	if (n < 5 || n > FIELDS_MAX)
		return fields_bad(im, n, "5 or more: ASU,LBA,Size,Opcode,Timestamp");
	NUM(&f[0], "ASU", &asu);
	CALL(dev_of(im, &f[0], &ev.dev));
	NUM(&f[1], "LBA", &ev.sector);
	NUM(&f[2], "size (bytes)", &ev.bytes);
	if (field_ieq(&f[3], "r"))
		ev.op = BTAPE_OP_READ;
	else if (field_ieq(&f[3], "w"))
		ev.op = BTAPE_OP_WRITE;
	else
		return imp_bad(im, "opcode '%.*s': expected r or w", (int)f[3].n, f[3].p);
	if (field_dec_scaled(&f[4], 9, &ev.issue_ns))
		return imp_bad(im, "timestamp '%.*s': not a number of seconds", (int)f[4].n,
			       f[4].p);
	return imp_emit(im, &ev);
}

/* MSR Cambridge: Timestamp(FILETIME),Hostname,DiskNumber,Type,Offset,Size,ResponseTime. */
int parse_msr_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	uint64_t ft, off, rt, disk, rt_ns;
	char name[BTAPE_NAME_MAX];
	int n = split_fields(line, len, ',', f, FIELDS_MAX);
	int d;

	if (n != 7)
		return fields_bad(im, n,
				  "7: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime");
	NUM(&f[0], "timestamp (FILETIME)", &ft);
	if (ft < FILETIME_UNIX_EPOCH || (ft - FILETIME_UNIX_EPOCH) > UINT64_MAX / 100)
		return imp_bad(im, "timestamp %llu: not a FILETIME after 1970",
			       (unsigned long long)ft);
	ev.issue_ns = (ft - FILETIME_UNIX_EPOCH) * 100;
	if (f[1].n == 0 || f[1].n > 200)
		return imp_bad(im, "hostname: empty or too long");
	NUM(&f[2], "disk number", &disk);
	if (field_ieq(&f[3], "Read"))
		ev.op = BTAPE_OP_READ;
	else if (field_ieq(&f[3], "Write"))
		ev.op = BTAPE_OP_WRITE;
	else
		return imp_bad(im, "type '%.*s': expected Read or Write", (int)f[3].n, f[3].p);
	NUM(&f[4], "offset", &off);
	CALL(sector_of_bytes(im, off, &ev.sector));
	NUM(&f[5], "size", &ev.bytes);
	NUM(&f[6], "response time", &rt);
	if (mul_ok(rt, 100, &rt_ns) || __builtin_add_overflow(ev.issue_ns, rt_ns, &ev.complete_ns))
		return imp_bad(im, "response time %llu out of range", (unsigned long long)rt);
	ev.present = BTAPE_HAS_COMPLETE;
	snprintf(name, sizeof(name), "%.*s_%llu", (int)f[1].n, f[1].p, (unsigned long long)disk);
	d = imp_device(im, name, strlen(name), 0, 0);
	if (d < 0)
		return d;
	ev.dev = (uint32_t)d;
	return imp_emit(im, &ev);
}

/* Alibaba 2020: device_id,opcode(R/W),offset_bytes,length_bytes,timestamp_us. */
int parse_alibaba_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	uint64_t id, off, us;
	int n = fast_alibaba(im, line, len);

	if (n <= 0)
		return n;
	n = split_fields(line, len, ',', f, FIELDS_MAX);
	if (n != 5)
		return fields_bad(im, n, "5: device_id,opcode,offset,length,timestamp");
	NUM(&f[0], "device_id", &id);
	if (field_ieq(&f[1], "R"))
		ev.op = BTAPE_OP_READ;
	else if (field_ieq(&f[1], "W"))
		ev.op = BTAPE_OP_WRITE;
	else
		return imp_bad(im, "opcode '%.*s': expected R or W", (int)f[1].n, f[1].p);
	NUM(&f[2], "offset", &off);
	CALL(sector_of_bytes(im, off, &ev.sector));
	NUM(&f[3], "length", &ev.bytes);
	NUM(&f[4], "timestamp (us)", &us);
	if (mul_ok(us, NS_PER_US, &ev.issue_ns))
		return imp_bad(im, "timestamp %llu out of range", (unsigned long long)us);
	CALL(dev_of(im, &f[0], &ev.dev));
	return imp_emit(im, &ev);
}

/* Tencent CBS: Timestamp_s,Offset_sectors,Size_sectors,IOType(0 read, 1 write),VolumeID. */
int parse_tencent_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	uint64_t s, nsect, vol;
	int n = fast_tencent(im, line, len);

	if (n <= 0)
		return n;
	n = split_fields(line, len, ',', f, FIELDS_MAX);

	if (n != 5)
		return fields_bad(im, n, "5: Timestamp,Offset,Size,IOType,VolumeID");
	NUM(&f[0], "timestamp (s)", &s);
	if (mul_ok(s, NS_PER_S, &ev.issue_ns))
		return imp_bad(im, "timestamp %llu out of range", (unsigned long long)s);
	NUM(&f[1], "offset (sectors)", &ev.sector);
	NUM(&f[2], "size (sectors)", &nsect);
	CALL(bytes_of_sectors(im, nsect, &ev.bytes));
	if (field_eq(&f[3], "0"))
		ev.op = BTAPE_OP_READ;
	else if (field_eq(&f[3], "1"))
		ev.op = BTAPE_OP_WRITE;
	else
		return imp_bad(im, "IOType '%.*s': expected 0 (read) or 1 (write)", (int)f[3].n,
			       f[3].p);
	NUM(&f[4], "VolumeID", &vol);
	CALL(dev_of(im, &f[4], &ev.dev));
	return imp_emit(im, &ev);
}

/*
 * fio iolog v2 ("filename action [offset length]") and v3 ("ts_us filename action [...]").
 * The version comes from the header line (line 1).
 */
int parse_fio_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	const struct field *act;
	uint64_t off = 0, us;
	int n = split_fields(line, len, ' ', f, FIELDS_MAX);
	int base, ver = im->fmt == BTAPE_FMT_FIO2 ? 2 : 3, d;

	if (im->line == 1) {
		if ((ver == 2 && !strcmp(line, "fio version 2 iolog")) ||
		    (ver == 3 && !strcmp(line, "fio version 3 iolog"))) {
			im->st.ignored++;
			return 0;
		}
		return imp_fail(im, "not a fio version %d iolog (header '%.40s')", ver, line);
	}
	base = ver == 3 ? 1 : 0;
	if (n < base + 2 || n > base + 4)
		return fields_bad(im, n,
				  ver == 3 ? "3 to 5: ts file action [offset length]"
					   : "2 to 4: file action [offset length]");
	if (ver == 3) {
		NUM(&f[0], "timestamp (us)", &us);
		if (mul_ok(us, NS_PER_US, &ev.issue_ns))
			return imp_bad(im, "timestamp out of range");
	} else {
		ev.issue_ns = im->fio_delay_ns;
	}
	act = &f[base + 1];
	d = imp_device(im, f[base].p, f[base].n, 0, 0);
	if (d < 0)
		return d;
	ev.dev = (uint32_t)d;
	if (field_eq(act, "add") || field_eq(act, "open") || field_eq(act, "close")) {
		if (n != base + 2)
			return fields_bad(im, n, "no offset/length after a file action");
		im->st.ignored++;
		return 0;
	}
	if (field_eq(act, "wait")) {
		if (n < base + 3)
			return fields_bad(im, n, "a delay after wait");
		NUM(&f[base + 2], "wait (us)", &us);
		if (ver == 2 && (mul_ok(us, NS_PER_US, &us) ||
				 __builtin_add_overflow(im->fio_delay_ns, us, &im->fio_delay_ns)))
			return imp_bad(im, "wait out of range");
		im->st.ignored++;
		return 0;
	}
	if (field_eq(act, "sync") || field_eq(act, "datasync")) {
		ev.op = BTAPE_OP_FLUSH;
		return imp_emit(im, &ev);
	}
	if (field_eq(act, "sync_file_range")) {
		im->st.ignored++;
		return 0;
	}
	if (field_eq(act, "read"))
		ev.op = BTAPE_OP_READ;
	else if (field_eq(act, "write"))
		ev.op = BTAPE_OP_WRITE;
	else if (field_eq(act, "trim"))
		ev.op = BTAPE_OP_DISCARD;
	else
		return imp_bad(im, "unknown action '%.*s'", (int)(act->n > 32 ? 32 : act->n),
			       act->p);
	if (n != base + 4)
		return fields_bad(im, n, "offset and length after read/write/trim");
	NUM(&f[base + 2], "offset", &off);
	CALL(sector_of_bytes(im, off, &ev.sector));
	NUM(&f[base + 3], "length", &ev.bytes);
	return imp_emit(im, &ev);
}

/* "maj,min" -> values. */
static int parse_majmin(const struct field *f, uint32_t *maj, uint32_t *min)
{
	const char *c = memchr(f->p, ',', f->n);
	struct field a, b;
	uint64_t x, y;

	if (!c)
		return -EINVAL;
	a.p = f->p;
	a.n = (uint32_t)(c - f->p);
	b.p = c + 1;
	b.n = (uint32_t)(f->n - a.n - 1);
	if (field_u64(&a, &x) || field_u64(&b, &y) || x > 4095 || y > 0xfffff)
		return -EINVAL;
	*maj = (uint32_t)x;
	*min = (uint32_t)y;
	return 0;
}

static uint64_t devkey(uint32_t maj, uint32_t min)
{
	return (uint64_t)maj << 32 | min;
}

/*
 * blkparse default output:
 *   maj,min cpu seq sec.nsec pid action rwbs [sector + nsect] [(cdb)] [comm] | [error]
 *   A: ... sector + nsect <- (maj,min) from_sector
 */
int parse_blkparse_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct jev e = {0};
	uint32_t maj, min;
	uint64_t v, nsect = 0;
	int n, d, i;
	char name[32], comm[64];
	const char *lb, *rb;

	if (im->blkparse_summary)
		goto ignore;
	n = split_fields(line, len, ' ', f, FIELDS_MAX);
	if (n == 0)
		goto ignore;
	if (field_eq(&f[0], "Total") ||
	    (f[0].n >= 4 && !memcmp(f[0].p, "CPU", 3) && f[0].p[3] >= '0' && f[0].p[3] <= '9')) {
		im->blkparse_summary = true; /* blkparse's per-CPU/device totals follow */
		goto ignore;
	}
	if (n < 7 || n > FIELDS_MAX)
		return fields_bad(im, n, "at least 7: dev cpu seq time pid action rwbs");
	if (parse_majmin(&f[0], &maj, &min))
		return imp_bad(im, "device '%.*s': expected major,minor",
			       (int)(f[0].n > 20 ? 20 : f[0].n), f[0].p);
	NUM(&f[1], "cpu", &v);
	if (v > UINT32_MAX)
		return imp_bad(im, "cpu out of range");
	e.cpu = (uint32_t)v;
	NUM(&f[2], "sequence", &v);
	if (field_dec_scaled(&f[3], 9, &e.time_ns))
		return imp_bad(im, "time '%.*s': expected seconds.nanoseconds", (int)f[3].n,
			       f[3].p);
	NUM(&f[4], "pid", &v);
	if (v > UINT32_MAX)
		return imp_bad(im, "pid out of range");
	e.pid = (uint32_t)v;
	if (field_eq(&f[5], "Q"))
		e.act = JA_QUEUE;
	else if (field_eq(&f[5], "M"))
		e.act = JA_BACKMERGE;
	else if (field_eq(&f[5], "F"))
		e.act = JA_FRONTMERGE;
	else if (field_eq(&f[5], "R"))
		e.act = JA_REQUEUE;
	else if (field_eq(&f[5], "D"))
		e.act = JA_ISSUE;
	else if (field_eq(&f[5], "C"))
		e.act = JA_COMPLETE;
	else if (field_eq(&f[5], "A"))
		e.act = JA_REMAP;
	else if (f[5].n <= 2 && strchr("GIPUTXSBmN", f[5].p[0]))
		goto ignore; /* get/insert/plug/unplug/split/sleep/bounce/message */
	else
		return imp_bad(im, "unknown action '%.*s'", (int)(f[5].n > 8 ? 8 : f[5].n), f[5].p);
	i = 7;
	if (n >= i + 3 && field_eq(&f[i + 1], "+")) {
		NUM(&f[i], "sector", &e.sector);
		NUM(&f[i + 2], "sectors", &nsect);
		CALL(bytes_of_sectors(im, nsect, &e.bytes));
		i += 3;
	}
	/* after the size: with no data the flush letter makes a flush, as in the binary form */
	if (rwbs_parse(f[6].p, f[6].n, e.bytes, &e.op, &e.flags))
		return imp_bad(im, "rwbs '%.*s' not understood", (int)(f[6].n > 12 ? 12 : f[6].n),
			       f[6].p);
	e.devkey = devkey(maj, min);
	if (e.act == JA_REMAP) {
		uint32_t fmaj, fmin;
		struct field g;

		/*
		 * blkparse prints a remap under the pdu's device_to, which since 5.x is the
		 * partition the bio was sent to (8,1) while the trace is of the disk (8,0): no
		 * device of the trace. A remap adds no device: the entry it makes takes its
		 * device from the Q or D that follows (a remap alone writes nothing).
		 */
		e.dev = -1;
		if (n != i + 3 || !field_eq(&f[i], "<-") || f[i + 1].n < 5 ||
		    f[i + 1].p[0] != '(' || f[i + 1].p[f[i + 1].n - 1] != ')')
			return imp_bad(im, "remap: expected '<- (maj,min) sector'");
		g.p = f[i + 1].p + 1;
		g.n = f[i + 1].n - 2;
		if (parse_majmin(&g, &fmaj, &fmin))
			return imp_bad(im, "remap: bad source device");
		NUM(&f[i + 2], "remap source sector", &e.from_sector);
		e.from_devkey = devkey(fmaj, fmin);
		return join_event(im, &e);
	}
	snprintf(name, sizeof(name), "%u,%u", maj, min);
	d = imp_device(im, name, strlen(name), maj, min);
	if (d < 0)
		return d;
	e.dev = d;
	/* the rest: optional "(cdb)", then "[comm]" (C: "[error]") */
	lb = memchr(line, '[', len);
	rb = lb ? memrchr(lb, ']', len - (size_t)(lb - line)) : NULL;
	if (lb && rb) {
		size_t cn = (size_t)(rb - lb - 1);

		if (e.act == JA_COMPLETE) {
			struct field ef = {lb + 1, (uint32_t)cn};
			int64_t err;

			if (field_i64(&ef, &err) || err < -65535 || err > 65535)
				return imp_bad(im, "completion error '[%.*s]' not a number",
					       (int)(cn > 16 ? 16 : cn), lb + 1);
			if (err > 32767)
				err -= 65536; /* a negative errno printed as u16 */
			e.error = err > 0 ? (int32_t)-err : (int32_t)err;
			e.has_error = true;
		} else if (cn > 0) {
			snprintf(comm, sizeof(comm), "%.*s", (int)(cn > 63 ? 63 : cn), lb + 1);
			e.comm = comm;
		}
	}
	e.has_pid = e.act == JA_QUEUE;
	return join_event(im, &e);
ignore:
	im->st.ignored++;
	return 0;
}

/* A numeric dev below this keeps its index (devices 0 .. dev declared first): the format's
 * table size, so that every trace's CSV comes back (declaring them all from one line: 0.42 s) */
#define CSV_DEV_INDEX_MAX BTAPE_DEVICES_MAX

/*
 * The fields of one CSV line (RFC 4180: a field in double quotes may hold commas, and "" for
 * a quote). Quoted fields are unquoted in place. Returns the number of fields (more than max:
 * max + 1), or -EINVAL for a quote left open or text after a closing one.
 */
static int split_csv(char *line, size_t len, struct field *f, int max)
{
	size_t i = 0;
	int n = 0;

	for (;;) {
		char *out = line + i;
		size_t k = 0;

		if (n == max)
			return max + 1;
		if (i < len && line[i] == '"') {
			for (i++;; i++) {
				if (i >= len)
					return -EINVAL;
				if (line[i] == '"') {
					if (i + 1 < len && line[i + 1] == '"')
						i++;
					else
						break;
				}
				out[k++] = line[i];
			}
			i++; /* the closing quote */
			if (i < len && line[i] != ',')
				return -EINVAL;
		} else {
			while (i < len && line[i] != ',')
				out[k++] = line[i++];
		}
		f[n].p = out;
		f[n++].n = (uint32_t)k;
		if (i >= len)
			return n;
		i++; /* the comma */
	}
}

/* An optional unsigned field into *v, at most max; 0 when empty (absent), 1 when set. */
static int opt_num(struct imp *im, const struct field *f, const char *what, uint64_t max,
		   uint64_t *v)
{
	if (!f->n)
		return 0;
	int r = num(im, f, what, v);

	if (r <= 0)
		return r;
	if (*v > max)
		return imp_bad(im, "%s %llu out of range", what, (unsigned long long)*v);
	return 1;
}

#define OPT(f, what, max, v, bit)                              \
	do {                                                   \
		uint64_t x_;                                   \
		int r_ = opt_num(im, (f), (what), (max), &x_); \
		if (r_ < 0 || (r_ == 0 && (f)->n))             \
			return r_;                             \
		if (r_ > 0) {                                  \
			*(v) = x_;                             \
			ev.present |= (bit);                   \
		}                                              \
	} while (0)

/*
 * biotape CSV, the columns of `biotape dump --csv` and `convert --to csv`: issue_ns,
 * complete_ns, insert_ns, dev, sector, bytes, op, flags, error, pid, tid, comm, cgroup, cpu,
 * qd. An empty field is one the event did not have; dev names the device.
 */
int parse_csv_line(struct imp *im, char *line, size_t len)
{
	struct field f[FIELDS_MAX];
	struct btape_event ev = {0};
	char op[16], comm[BTAPE_NAME_MAX];
	uint64_t v = 0;
	int64_t e;
	int n = split_csv(line, len, f, FIELDS_MAX);
	int o;

	if (n < 0)
		return imp_bad(im, "a quoted field is not closed, or text follows its quote");
	if (n != 15)
		return fields_bad(im, n,
				  "15: issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,"
				  "flags,error,pid,tid,comm,cgroup,cpu,qd");
	NUM(&f[0], "issue_ns", &ev.issue_ns);
	OPT(&f[1], "complete_ns", UINT64_MAX, &ev.complete_ns, BTAPE_HAS_COMPLETE);
	OPT(&f[2], "insert_ns", UINT64_MAX, &ev.insert_ns, BTAPE_HAS_INSERT);
	NUM(&f[4], "sector", &ev.sector);
	NUM(&f[5], "bytes", &ev.bytes);
	snprintf(op, sizeof(op), "%.*s", (int)(f[6].n < sizeof(op) ? f[6].n : sizeof(op) - 1),
		 f[6].p);
	if (f[6].n >= sizeof(op) || (o = btape_op_parse(op)) < 0)
		return imp_bad(im, "op '%.*s': not a biotape op (read, write, flush, discard, ...)",
			       (int)(f[6].n > 20 ? 20 : f[6].n), f[6].p);
	ev.op = (uint8_t)o;
	if (f[7].n) {
		if (btape_flags_parse(f[7].p, f[7].n, &ev.flags))
			return imp_bad(im, "flags '%.*s': letters SFPMAUONIR only",
				       (int)(f[7].n > 20 ? 20 : f[7].n), f[7].p);
		ev.present |= BTAPE_HAS_FLAGS;
	}
	if (f[8].n) {
		if (field_i64(&f[8], &e) || e < INT32_MIN || e > INT32_MAX)
			return imp_bad(im, "error '%.*s': not a 32-bit integer",
				       (int)(f[8].n > 20 ? 20 : f[8].n), f[8].p);
		ev.error = (int32_t)e;
		ev.present |= BTAPE_HAS_ERROR;
	}
	OPT(&f[9], "pid", UINT32_MAX, &v, BTAPE_HAS_PID);
	ev.pid = (uint32_t)v;
	v = 0;
	OPT(&f[10], "tid", UINT32_MAX, &v, BTAPE_HAS_TID);
	ev.tid = (uint32_t)v;
	if (f[11].n) {
		if (f[11].n >= sizeof(comm) || memchr(f[11].p, 0, f[11].n))
			return imp_bad(im, "comm of %u bytes: at most %u", f[11].n,
				       (unsigned int)sizeof(comm) - 1);
		memcpy(comm, f[11].p, f[11].n);
		comm[f[11].n] = 0;
		ev.comm = comm;
		ev.present |= BTAPE_HAS_COMM;
	}
	OPT(&f[12], "cgroup", UINT64_MAX, &ev.cgroup, BTAPE_HAS_CGROUP);
	v = 0;
	OPT(&f[13], "cpu", UINT32_MAX, &v, BTAPE_HAS_CPU);
	ev.cpu = (uint32_t)v;
	v = 0;
	OPT(&f[14], "qd", UINT32_MAX, &v, BTAPE_HAS_QD);
	ev.qd = (uint32_t)v;
	/* dev as the exporter wrote it, an index: devices 0 .. dev declared in order (names "0",
	 * "1", ...), so that the index comes back the same; another name is a device of its own
	 * (after one, the numbers declared later come after it) */
	if (!field_u64(&f[3], &v) && v < CSV_DEV_INDEX_MAX) {
		while (im->meta.ndevices <= v) {
			char name[16];
			int d = imp_device(
				im, name,
				(size_t)snprintf(name, sizeof(name), "%u", im->meta.ndevices), 0,
				0);

			if (d < 0)
				return d;
			if ((uint32_t)d + 1 != im->meta.ndevices)
				break; /* not a new device (cannot be: "N" below the count was
					* declared here, at N); the loop ends all the same */
		}
	}
	CALL(dev_of(im, &f[3], &ev.dev));
	return imp_emit(im, &ev);
}
