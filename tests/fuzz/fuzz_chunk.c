// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the decoders behind the checksums: the first byte selects the
 * decompressed payload kind (0 event chunk, 1 metadata, 2 footer), the rest is the msgpack
 * payload. Checksums only catch accidents; a crafted file passes them, so the decoders must
 * be safe on any input. A payload that is a zstd frame (no msgpack payload starts with its
 * magic: a map does not) is decompressed first, up to the kind's limit, as the reader does:
 * so a small input can declare a huge structure, and the decoders must not allocate for it.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

#include <zstd.h>

#include "btape.h"
#include "btape_internal.h"
#include "ftags.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode(unsigned int kind, const uint8_t *p, size_t len, uint64_t file_size)
{
	struct btape_event ev[256];
	char err[256];

	switch (kind) {
	case 0: {
		/* the reader's cap: a smaller one hid the names built to collide (many of them) */
		struct btape_intern *it = btape_intern_new(BTAPE_READER_COMM_MAX_BYTES);
		struct chunk_dec d = {0};
		uint64_t sink = 0;
		int n;

		if (it && !btape_chunk_dec_start(&d, p, len, it, err, sizeof(err))) {
			while ((n = btape_chunk_dec_next(&d, ev, 256, err, sizeof(err))) > 0)
				for (int i = 0; i < n; i++)
					sink += ev[i].issue_ns + ev[i].sector +
						(ev[i].comm ? (uint8_t)ev[i].comm[0] : 0);
		}
		__asm__ volatile("" : : "r"(sink)); /* keep the loads */
		btape_chunk_dec_free(&d);
		btape_intern_free(it);
		break;
	}
	case 1: {
		struct btape_meta m;

		if (!btape_meta_unpack(&m, p, len, err, sizeof(err)))
			btape_meta_free(&m);
		break;
	}
	default: {
		struct btape_summary s = {.sz = sizeof(s)};
		struct btape_index ix = {0};
		struct btape_ftags ft = {0};

		/* as if the input were the file: its index cannot hold more chunks than fit */
		if (!btape_footer_unpack(&s, &ix, &ft, p, len, file_size / BTAPE_ENV_SIZE, err,
					 sizeof(err))) {
			btape_index_free(&ix);
			btape_ftags_free(&ft);
		}
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t zmagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
	unsigned int kind;
	unsigned long long rlen, limit;
	uint8_t *raw;
	size_t n;

	if (!size)
		return 0;
	kind = data[0] % 3;
	if (size < 5 || memcmp(data + 1, zmagic, 4)) {
		decode(kind, data + 1, size - 1, size);
		return 0;
	}
	/* what the reader allows a frame of this kind to decompress to (format/reader.c) */
	limit = kind == 0 ? BTAPE_FRAME_MAX_BYTES
		: kind == 1 ? BTAPE_META_MAX_BYTES
			    : size + BTAPE_FOOTER_SLACK_BYTES;
	rlen = ZSTD_getFrameContentSize(data + 1, size - 1);
	if (rlen == ZSTD_CONTENTSIZE_UNKNOWN || rlen == ZSTD_CONTENTSIZE_ERROR || rlen > limit)
		return 0; /* the reader takes the size from the envelope, and checks it */
	raw = malloc(rlen ? rlen : 1);
	if (!raw)
		return 0;
	n = ZSTD_decompress(raw, rlen, data + 1, size - 1);
	if (!ZSTD_isError(n) && n == rlen)
		decode(kind, raw, n, size);
	free(raw);
	return 0;
}
