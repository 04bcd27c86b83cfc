/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Internal interfaces of the importers: input sources, field splitting, the import context. */
#ifndef BTAPE_INTEROP_INTERNAL_H
#define BTAPE_INTEROP_INTERNAL_H

#include "btape_interop.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#define INTEROP_API __attribute__((visibility("default")))

/* ---- input source: a file or a buffer, decompressed (gzip, zstd) on the fly ---- */

#define ISRC_BUF_BYTES (1u << 20) /* decompressed window */
#define ISRC_LINE_MAX (64u << 10) /* longest accepted text line */

struct isrc;

/* Opens path (detecting gzip/zstd by magic). errmsg gets "path: why" on failure. */
int isrc_open(struct isrc **sp, const char *path, char *errmsg, size_t errlen);
/* A source over memory (not copied; must outlive the source), also decompressed by magic. */
int isrc_open_mem(struct isrc **sp, const void *data, size_t len, const char *name, char *errmsg,
		  size_t errlen);
void isrc_close(struct isrc *s);
const char *isrc_name(const struct isrc *s);
/* Next line without its "\n" / "\r\n", NUL-terminated in place: 1, 0 at EOF, or -errno. */
int isrc_getline(struct isrc *s, char **line, size_t *len);
/*
 * Makes n bytes available at *p without consuming: returns n, fewer at EOF (the count
 * available), or -errno.
 */
long isrc_peek(struct isrc *s, size_t n, const uint8_t **p);
/* Consumes n bytes (n <= what __peek returned). */
void isrc_skip(struct isrc *s, size_t n);
/* Offset (in decompressed bytes) of the next unread byte. */
uint64_t isrc_offset(const struct isrc *s);
/* The error message of the last failure. */
const char *isrc_errmsg(const struct isrc *s);
/* The same without the file's name: for a message that names the file and line itself. */
const char *isrc_why(const struct isrc *s);

/* ---- fields ---- */

struct field {
	const char *p;
	uint32_t n;
};

#define FIELDS_MAX 16

/* Splits at sep (' ' means runs of blanks/tabs, leading blanks skipped); returns the count. */
int split_fields(const char *line, size_t len, char sep, struct field *f, int max);
/* Whole-field unsigned decimal. 0 or -EINVAL / -ERANGE. */
int field_u64(const struct field *f, uint64_t *v);
/* Signed decimal. */
int field_i64(const struct field *f, int64_t *v);
/*
 * Decimal with optional fraction, times 10^scale, rounded half up beyond scale digits:
 * "1.5" scale 9 -> 1500000000. Rejects signs, exponents and overflow.
 */
int field_dec_scaled(const struct field *f, unsigned int scale, uint64_t *v);
bool field_eq(const struct field *f, const char *s);
bool field_ieq(const struct field *f, const char *s);

/* ---- import context (context.c): the parsers call it, it calls none of them ---- */

#define DEVCACHE_SLOTS 256u

struct devent {
	uint64_t hash;
	uint32_t len;
};

/* Source id -> device index (a struct imp's devs; the driver keeps it on its stack). */
struct devtab {
	uint32_t *slots; /* index + 1; 0 empty */
	uint32_t cap;
	uint32_t last;	    /* cache: index + 1 of the last hit */
	struct devent *ent; /* per device index */
	/* nent is the import's meta.ndevices, capent the capacity of both ent and meta.devices:
	 * devtab_add() grows them together, and nothing else may add a device to meta */
	uint32_t nent, capent;
	struct { /* direct-mapped cache of ids up to 8 bytes */
		uint64_t key;
		uint32_t len, idx1;
	} small[DEVCACHE_SLOTS];
};

struct join;

struct imp {
	unsigned int fmt;
	bool skip_bad;
	int pass;		/* 1: scan (devices, validation), 2: write */
	const char *file;	/* current input name */
	uint64_t line;		/* current line (text) or record number (binary) */
	struct btape_meta meta; /* built in pass 1 */
	struct devtab *devs;
	struct btape_writer *w; /* pass 2 only */
	uint64_t reorder_window_ns;
	uint64_t max_issue_ns; /* newest issue time seen (pass 2) */
	uint64_t watermark_ns; /* last watermark promised to the writer */
	bool have_events;
	uint64_t min_issue_ns; /* pass 1 */
	uint64_t max_late_ns;  /* pass 1: largest (newest issue so far - issue) */
	struct btape_import_stats st;
	char *errmsg;
	size_t errlen;
	/* per-format state */
	struct join *join; /* blktrace / blkparse request joining */
	void *fmt_state;   /* owned by the format (freed by fmt_state_free) */
	void (*fmt_state_free)(void *);
	struct devsize *dsz; /* Alibaba device sizes */
	size_t ndsz;
	bool blkparse_summary; /* blkparse: the trailing summary started */
	uint32_t vscsi_rec;    /* vscsi record size of the current file (32 or 40) */
	uint64_t fio_delay_ns; /* fio v2: accumulated wait actions */
};

struct devsize {
	char name[64];
	uint64_t bytes;
	uint64_t line; /* in the --device-size file, for a duplicate's message */
};
/* By name: the order load_device_sizes() sorts them in, and devtab_add() searches. */
int imp_devsize_cmp(const void *a, const void *b);

/* A zeroed context over dt, messages to errmsg (may be NULL). */
void imp_init(struct imp *im, struct devtab *dt, char *errmsg, size_t errlen);
/* Frees what the context owns (metadata, device table, device sizes); not the format state. */
void imp_context_release(struct imp *im);
/* Sets errmsg to "file:line: <fmt>" and returns -EINVAL. */
int imp_fail(struct imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A malformed line: with skip_bad counts it and returns 0 (skip it), else imp_fail(). */
int imp_bad(struct imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the device index for a source id (adding it in pass 1), or -errno. */
int imp_device(struct imp *im, const char *name, size_t len, uint32_t major, uint32_t minor);
/*
 * 1 when (sector, bytes) is within the format's extent limits (btape_extent_ok); else a
 * malformed line (imp_bad: 0 to skip it, or -EINVAL naming it).
 */
int imp_extent_check(struct imp *im, uint64_t sector, uint64_t bytes);
/* Hands one finished I/O record to the output (pass 2) or to the scan (pass 1); an extent
 * past the limits is a malformed line. */
int imp_emit(struct imp *im, const struct btape_event *ev);

/* Line parsers: one line (NUL-terminated, no newline). 0 or -errno. */
int parse_mqsim_line(struct imp *im, char *line, size_t len);
int parse_fiu_line(struct imp *im, char *line, size_t len);
int parse_umass_line(struct imp *im, char *line, size_t len);
int parse_msr_line(struct imp *im, char *line, size_t len);
int parse_alibaba_line(struct imp *im, char *line, size_t len);
int parse_tencent_line(struct imp *im, char *line, size_t len);
int parse_fio_line(struct imp *im, char *line, size_t len);
int parse_blkparse_line(struct imp *im, char *line, size_t len);
int parse_csv_line(struct imp *im, char *line, size_t len);
/* Binary readers: consume a whole source. */
int parse_vscsi(struct imp *im, struct isrc *s);
/* blktrace: k sources merged by time. */
int parse_blktrace(struct imp *im, struct isrc **srcs, size_t n);
/* Format detection: binary magics (binary.c); line formats are detected in import.c. */
int detect_binary(const uint8_t *p, size_t len);

/* ---- request joining (blktrace, blkparse): Q/D/C/merges/remaps -> one record ---- */

enum jact {
	JA_QUEUE,
	JA_BACKMERGE,
	JA_FRONTMERGE,
	JA_REQUEUE,
	JA_ISSUE,
	JA_COMPLETE,
	JA_REMAP,
	JA_OTHER,
};

struct jev {
	enum jact act;
	uint64_t time_ns;
	int dev;	 /* device table index */
	uint64_t devkey; /* major << 32 | minor: the joiner's key */
	uint64_t sector;
	uint64_t bytes;
	uint8_t op;
	uint32_t flags;
	int32_t error;
	bool has_error;
	bool has_pid;
	uint32_t pid;
	uint32_t cpu;
	const char *comm;     /* NULL: unknown */
	uint64_t from_devkey; /* JA_REMAP: where the bio came from */
	uint64_t from_sector;
};

int join_new(struct join **jp);
void join_free(struct join *j);
int join_event(struct imp *im, const struct jev *e);
/* End of input: emits issued-but-uncompleted requests, counts the rest as unmatched. */
int join_finish(struct imp *im);
/* Test hook: table slots and list entries the joiner has visited in this thread. */
extern _Thread_local uint64_t join_steps;

/* blkparse's rwbs ("WS", "FWFS", "RA", "D", "FN") of a request of bytes to op + flags (fields.c
 * says which letters); -EINVAL when not rwbs. */
int rwbs_parse(const char *s, size_t n, uint64_t bytes, uint8_t *op, uint32_t *flags);
/* A blktrace request's op (flags |= preflush) from its flush bit and blkparse's letter D W R N. */
void blk_classify(bool flush, char letter, uint64_t bytes, uint8_t *op, uint32_t *flags);

#endif
