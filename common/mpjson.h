/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One msgpack value shown as JSON, or as indented "key: value" text: how `info`, `compare`
 * and `replay` show figures a trace stores as msgpack (its footer tags, docs/BTAPE-FORMAT.md
 * "Footer tags"). A float prints as the shortest text that reads back as the same double
 * (NaN and infinities as null), a bin as a string of hex digits, an ext as null.
 */
#ifndef BIOTAPE_MPJSON_H
#define BIOTAPE_MPJSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes the value MP (LEN bytes, exactly one msgpack value) as JSON: 0, or -EBADMSG when
 * MP is not one well-formed value (nothing written). */
int mpjson_write(FILE *fp, const void *mp, size_t len);
/*
 * As text: a map's members one a line, "INDENT key: value", a nested map's under its key two
 * spaces further in; an array of up to MPJSON_TEXT_ITEMS scalars inline as JSON, a longer
 * one as its length ("200 values"). A value that is not a map: one line, "INDENT" then it.
 */
#define MPJSON_TEXT_ITEMS 8
int mpjson_text(FILE *fp, const void *mp, size_t len, const char *indent);

/*
 * The number at PATH in the value MP: map keys joined by '.' ("lateness.>10ms"); a bool reads
 * as 0 or 1, nil as NaN. 0, -ENOENT (no such member, or not a number) or -EBADMSG.
 */
int mpjson_number(const void *mp, size_t len, const char *path, double *out);

#endif
