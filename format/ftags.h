/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbiotape private: the footer's tags map (format/ftags.c; docs/BTAPE-FORMAT.md, "Footer
 * tags"). The map as a whole stays within BTAPE_FOOTER_TAGS_MAX keys, _MAX_BYTES encoded and
 * _MAX_ITEMS msgpack values (map and keys included).
 */
#ifndef BTAPE_FTAGS_H
#define BTAPE_FTAGS_H

#include "btape_internal.h"
#include "mp_internal.h"

/* Adds or replaces KEY's tag: 0, -EINVAL (bad key or value), -E2BIG, -ENOMEM; WHY says why. */
int btape_ftags_set(struct btape_ftags *t, const char *key, const void *val, size_t len,
		    char *why, size_t whylen);
/* Index of the tag whose key is the KN bytes at KEY, or -1. */
int btape_ftags_find(const struct btape_ftags *t, const char *key, size_t kn);
void btape_ftags_free(struct btape_ftags *t);
/* Packs "tags" and the map (the caller counted the pair; only when t->n). */
void btape_ftags_pack(msgpack_packer *pk, const struct btape_ftags *t);
/* Reads the map at the cursor (the footer's "tags" value) into an empty t: 0, -EBADMSG with
 * *what set, -ENOMEM. */
int btape_ftags_unpack(struct btape_ftags *t, struct btape_mp *c, const char **what);

#endif
