/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libbiotape private msgpack helpers (format/frames.c). */
#ifndef BTAPE_MP_INTERNAL_H
#define BTAPE_MP_INTERNAL_H

#include <msgpack.h>

#include "btape_internal.h"

/* msgpack_packer write callback appending to a struct bbuf. */
int btape_mp_write(void *data, const char *buf, size_t len);
void btape_mp_key(msgpack_packer *pk, const char *key);
/*
 * Validates the structure (bounded counts, depth) then unpacks one map filling the whole
 * buffer; objects point into data. 0 or -EBADMSG; on success destroy u when done.
 */
int btape_mp_unpack(msgpack_unpacked *u, const void *data, size_t len);
bool btape_mp_keyis(const msgpack_object *k, const char *name);
int btape_mp_u64(const msgpack_object *o, uint64_t *v);

#endif /* BTAPE_MP_INTERNAL_H */
