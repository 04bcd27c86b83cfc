/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared helpers of the libbiotape unit tests. */
#ifndef BTAPE_TEST_UTIL_H
#define BTAPE_TEST_UTIL_H

#include <stdint.h>
#include <stddef.h>

#include "btape.h"

struct bbuf;
struct msgpack_packer;

/* Fresh temporary directory (removed with its files by tu_cleanup_dir). */
char *tu_tmpdir(void);
void tu_cleanup_dir(char *dir);
/* dir/name in a static-lifetime buffer per call slot (0..3). */
const char *tu_path(const char *dir, const char *name, int slot);
uint64_t tu_rand(uint64_t *state);
/* A random event; with all_fields every presence bit is set. */
void tu_random_event(uint64_t *state, struct btape_event *ev, uint64_t issue, bool all_fields);
/* Field-wise comparison honouring presence; returns 0 when equal. */
int tu_event_cmp(const struct btape_event *a, const struct btape_event *b);
void tu_meta(struct btape_meta *m, uint32_t ndev);
/* Reads a whole file into a malloc'd buffer. */
uint8_t *tu_read_file(const char *path, size_t *len);
int tu_write_file(const char *path, const void *data, size_t len);
/* Appends to OUT a frame of TYPE whose payload is RAW, zstd-compressed (level 3). */
void tu_put_frame(struct bbuf *out, unsigned int type, const void *raw, size_t rlen);
/* Packs S as a msgpack string. */
void tu_pk_str(struct msgpack_packer *pk, const char *s);

#endif
