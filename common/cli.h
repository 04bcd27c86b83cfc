/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the subcommands: messages, argument parsing, atomic output files.
 * Library code (format/) never uses this; commands do.
 */
#ifndef BIOTAPE_CLI_H
#define BIOTAPE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum {
	BTAPE_EXIT_OK = 0,      /* success */
	BTAPE_EXIT_FAIL = 1,    /* the operation failed (I/O error, device refused, ...) */
	BTAPE_EXIT_USAGE = 2,   /* bad usage or bad input (malformed trace, unknown option) */
};

extern int cli_verbose; /* -v count, set by main() */

/*
 * The exit status of a command that failed with -errno err: BTAPE_EXIT_FAIL where the system
 * refused or failed (a file that cannot be opened or read: missing, no permission, a
 * directory; out of memory; an I/O error; a full disk), BTAPE_EXIT_USAGE for what the input
 * or the arguments said (a malformed or damaged trace, a value out of range; ELOOP and
 * ENAMETOOLONG too, which the decoder returns for a trace's process names).
 */
int cli_exit_status(int err);

/* "biotape: <message>\n" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, only when cli_verbose >= level. */
void cli_info(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* While buf is set (NULL: print again), cli_err() keeps its first message in buf (len bytes)
 * instead of printing it: a cluster run's ranks hand their refusals to rank 0, which prints
 * one line per refusing rank. */
void cli_err_keep(char *buf, size_t len);
/* One cli_err() line, "<prefix><line>", per '\n'-ended line of text (NULL: none). */
void cli_err_lines(const char *prefix, const char *text);

/*
 * Durations: "1.5s", "200ms", "50us", "100ns", "2m", "1h"; a bare number is seconds.
 * Returns 0 or -EINVAL.
 */
int cli_parse_duration_ns(const char *s, uint64_t *ns);
/* Sizes: "4096", "4k", "1.5M", "2GiB", "1T" (binary multiples). Returns 0 or -EINVAL. */
int cli_parse_size(const char *s, uint64_t *bytes);
/* Unsigned integer, whole string, decimal or 0x hex. Returns 0 or -EINVAL / -ERANGE. */
int cli_parse_u64(const char *s, uint64_t *v);
/* Floating point, whole string, finite. */
int cli_parse_double(const char *s, double *v);
/* Formats ns as "1.234 s", "12.5 ms", "830 us" into buf. */
const char *cli_fmt_ns(uint64_t ns, char *buf, size_t len);
/* Formats bytes as "4.0 KiB", "1.50 GiB" into buf. */
const char *cli_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * An output file that appears only when complete: written to PATH.tmp.XXXXXX, renamed by
 * cli_out_commit(). PATH "-" (or NULL) is stdout. After a failed or aborted output nothing
 * exists at PATH that was not there before. PATH must pass btape_output_check() at the open
 * and again just before the rename: a device node, FIFO or directory is refused, never
 * renamed over; the null device is written directly. After a failure why holds one line.
 * A SIGINT, SIGTERM or SIGHUP that would end the program removes the temporary file first
 * (where the program has not set its own handler): a killed command leaves nothing behind.
 */
struct cli_out {
	FILE *fp;
	char *path;
	char *tmp;
	bool sink;     /* the null device, written directly */
	char why[600]; /* the reason of the last failure */
};
int cli_out_open(struct cli_out *o, const char *path);
/* The same check before any work: 0, or BTAPE_EXIT_FAIL after "biotape: CMD: <why>". */
int cli_out_check(const char *cmd, const char *path);
/*
 * 0, or BTAPE_EXIT_USAGE after "biotape: CMD: OUT is both input and output" when the output
 * path names the same file as one of the N inputs (device and inode, so "./a.btape", a
 * symlink or a hard link to it count too): writing the output would replace a trace or
 * trace import being read. OUT "-" or NULL, and missing paths, pass.
 */
int cli_out_check_inputs(const char *cmd, const char *out, char *const *in, int n);
/*
 * 1 when paths A and B name the same file, made yet or not: the same device and inode, or
 * (one missing) the same last component in the same directory (by device and inode), so
 * "r.btape" and "./r.btape" do; 0 otherwise.
 */
int cli_same_file(const char *a, const char *b);
/* path from /, as this process names it (the working directory before a relative one):
 * malloc'd, or NULL and *why ("out of memory", or no working directory). */
char *cli_absolute_path(const char *path, const char **why);
int cli_out_commit(struct cli_out *o); /* flush, fsync, rename; reports write errors */
void cli_out_abort(struct cli_out *o); /* removes the temporary file; NULL-safe, idempotent */

/*
 * A stream onto OUT for text a person reads: every control byte but newline and tab (C0, DEL)
 * goes out as '?', so that a name in a trace (a comm, a device id, a host) cannot drive the
 * terminal (an ESC sequence retitles it, clears it, or worse). fclose() it to flush (OUT stays
 * open); NULL when out of memory.
 */
FILE *cli_text_stream(FILE *out);
/* The same for one string: S itself when it holds no control byte, else its copy in BUF
 * (LEN bytes, truncated) with each as '?'. */
const char *cli_text_safe(const char *s, char *buf, size_t len);
/* Writes S as a JSON string literal (quoted, escaped; NULL as null). */
void cli_json_str(FILE *fp, const char *s);
/* The same for the N bytes at S, which need not end in a NUL (a NUL inside is escaped). */
void cli_json_strn(FILE *fp, const char *s, size_t n);

/* True when the string is exactly "--help" or "-h". */
bool cli_is_help(const char *arg);

#endif
