/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbiotape interop: import public block trace formats into .btape, export .btape to fio
 * iolog v3, blkparse-style text and CSV. Conversion rules: docs/INTEROP.md.
 *
 * Pure library: no printing, no exit(). Errors follow btape.h's rule: functions return 0 on
 * success or a negative errno, and on failure write one line into the caller's buffer ERRMSG
 * of ERRLEN bytes (may be NULL) naming the file and line or record ("trace.csv:17: field 3
 * (offset): not a number").
 */
#ifndef BTAPE_INTEROP_H
#define BTAPE_INTEROP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "btape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Trace formats. Values are stable (used by the fuzz targets); append only. */
enum btape_fmt {
	BTAPE_FMT_UNKNOWN = 0,
	BTAPE_FMT_BTAPE,    /* biotape's own format */
	BTAPE_FMT_BLKTRACE, /* blktrace binary (struct blk_io_trace + pdu), per-CPU files */
	BTAPE_FMT_BLKPARSE, /* blkparse default text output */
	BTAPE_FMT_FIO2,	    /* fio iolog version 2 */
	BTAPE_FMT_FIO3,	    /* fio iolog version 3 */
	BTAPE_FMT_MSR,	    /* MSR Cambridge (SNIA) CSV */
	BTAPE_FMT_ALIBABA,  /* Alibaba block traces 2020 CSV */
	BTAPE_FMT_TENCENT,  /* Tencent CBS CSV */
	BTAPE_FMT_UMASS,    /* UMass / SPC (Financial, WebSearch) CSV */
	BTAPE_FMT_FIU,	    /* FIU (SRCMap, IODedup) text */
	BTAPE_FMT_MQSIM,    /* DiskSim / MQSim ASCII */
	BTAPE_FMT_VSCSI,    /* VMware vscsiStats binary, v1 or v2 (detected per file) */
	BTAPE_FMT_CSV,	    /* biotape CSV, columns as `biotape dump --csv` (and imported back) */
	BTAPE_FMT__COUNT
};

/* "msr", "blktrace", ...; "?" for an out-of-range value. */
const char *btape_fmt_name(unsigned int fmt);
/* Inverse of btape_fmt_name() (also accepts "fio" for fio3, "disksim" for mqsim); -EINVAL. */
int btape_fmt_parse(const char *name);
/* True when btape_import() can read the format / btape_export() can write it. */
bool btape_fmt_can_import(unsigned int fmt);
bool btape_fmt_can_export(unsigned int fmt);

/*
 * Detects the format of the (decompressed) first bytes of a file: magic numbers, header lines,
 * then the column count and shape of the first data lines. Returns an enum btape_fmt
 * (BTAPE_FMT_UNKNOWN when no rule matches reliably).
 */
int btape_fmt_detect(const void *head, size_t len);
/*
 * Same for a file (read through gzip/zstd when compressed). Returns the format (possibly
 * UNKNOWN) or a negative errno.
 */
int btape_fmt_detect_file(const char *path, char *errmsg, size_t errlen);

/* blktrace/blkparse: requests kept in flight while joining; beyond, the least recently
 * active one is given up (written without completion if issued, counted in evicted). */
#define BTAPE_IMPORT_INFLIGHT_MAX (1u << 19)

/* Counters of one import. */
struct btape_import_stats {
	uint64_t lines;	       /* text lines (or binary records) read in the write pass */
	uint64_t events;       /* I/O records written */
	uint64_t skipped;      /* malformed lines/records skipped (--skip-bad) */
	uint64_t ignored;      /* well-formed lines that are not I/O (headers, notes, P/U...) */
	uint64_t merged;       /* blktrace/blkparse: queued bios merged into another request */
	uint64_t remaps;       /* blktrace/blkparse: remap (A) events applied */
	uint64_t unmatched;    /* completions/issues with no queued request, or left in flight */
	uint64_t evicted;      /* of which: given up to make room (BTAPE_IMPORT_INFLIGHT_MAX) */
	uint64_t inconsistent; /* times out of order within one request: that time marked absent */
	uint64_t order_violations; /* events older than the reorder window allowed: written late */
	uint32_t devices;	   /* entries in the device table */
	uint32_t format;	   /* enum btape_fmt actually read */
	char first_skipped[256];   /* where and why the first skipped line was bad ("" if none) */
};

struct btape_import_opts {
	size_t sz;		      /* sizeof(struct btape_import_opts) */
	unsigned int fmt;	      /* BTAPE_FMT_UNKNOWN: detect from content */
	bool skip_bad;		      /* count and skip malformed lines instead of failing */
	const char *device_size_path; /* Alibaba device_size file (device_id,capacity_bytes) */
	uint64_t reorder_window_ns;   /* events may arrive this far behind the newest; 0: 2 s */
	uint64_t reorder_max_events;  /* writer's reorder buffer bound; 0: 1 M events */
	int zstd_level;		      /* 0: the writer's default */
};

/*
 * Imports ninputs files (several only for blktrace per-CPU files; a single blktrace input
 * that names no existing file is taken as a prefix: PREFIX0, PREFIX1, ...) into a new .btape
 * at out_path (written via a temporary file: on failure nothing is left at out_path).
 * gzip and zstd inputs are decompressed on the fly. Memory stays bounded by the reorder
 * buffer and in-flight tables, independent of input length. stats may be NULL.
 */
int btape_import(const char *const *inputs, size_t ninputs, const char *out_path,
		 const struct btape_import_opts *opts, struct btape_import_stats *stats,
		 char *errmsg, size_t errlen);

/*
 * Parses an in-memory trace of format fmt without writing anything (validation; the fuzz
 * targets' entry point). name is used in messages. Returns 0 or a negative errno.
 */
int btape_import_validate_buf(unsigned int fmt, const void *data, size_t len, const char *name,
			      bool skip_bad, struct btape_import_stats *stats, char *errmsg,
			      size_t errlen);

/* The biotape CSV header line ('\n'-terminated) and one event as a CSV line: absent fields
 * empty, comm quoted when needed. Used by the csv export and `biotape dump --csv`. */
extern const char btape_csv_header[];
int btape_csv_write_event(FILE *fp, const struct btape_event *ev); /* 0 or -EIO */

/* Counters of one export. */
struct btape_export_stats {
	uint64_t events;  /* events read */
	uint64_t written; /* I/O lines written */
	uint64_t skipped; /* events the format cannot express (e.g. zone ops in fio) */
};

struct btape_export_opts {
	size_t sz;	    /* sizeof(struct btape_export_opts) */
	unsigned int fmt;   /* BTAPE_FMT_FIO3, BTAPE_FMT_BLKPARSE or BTAPE_FMT_CSV */
	const char *target; /* fio: file name used for every device (default: the device name) */
};

/*
 * Writes the events of the open reader r to out in opts->fmt, from the reader's current
 * position to the end. Bounded memory. Returns 0 or a negative errno (errmsg set).
 */
int btape_export(struct btape_reader *r, FILE *out, const struct btape_export_opts *opts,
		 struct btape_export_stats *stats, char *errmsg, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* BTAPE_INTEROP_H */
