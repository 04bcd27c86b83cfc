/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fuzz targets that run commands on a trace (fuzz_analyze.c, fuzz_replay.c) get it from
 * here: an input that starts as a .btape does (a zstd frame) is the file itself; any other is
 * read as events (struct rec in fuzz_trace.c) and written into a valid trace first, so that
 * mutations reach what comes after the reader with any values a writer accepts, not only the
 * reader's error paths (fuzz_reader.c has those).
 */
#ifndef BIOTAPE_FUZZ_TRACE_H
#define BIOTAPE_FUZZ_TRACE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The input as a trace in a memfd (from structured input: at most max_dev devices, recorded on
 * host, NULL: "fuzz"), with its path ("/proc/self/fd/N") in path: the fd, or -1.
 */
int fuzz_trace(const uint8_t *data, size_t size, unsigned int max_dev, const char *host, char *path,
	       size_t len);
/* Events in the trace at path (-1: it does not open), the largest one's bytes in *max_bytes. */
long long fuzz_scan(const char *path, uint64_t *max_bytes);
/* Runs cmd with the arguments given (NULL-terminated; argv[0] first), as main would. */
int fuzz_run(int (*cmd)(int, char **), ...);
/* Each target's LLVMFuzzerInitialize (here) sends stdout, the commands' reports, to /dev/null
 * (libFuzzer speaks on stderr; the commands' errors stay). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
