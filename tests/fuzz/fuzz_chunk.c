// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the decoders behind the checksums: the first byte selects the
 * decompressed payload kind (0 event chunk, 1 metadata, 2 footer), the rest is the msgpack
 * payload. Checksums only catch accidents; a crafted file passes them, so the decoders must
 * be safe on any input.
 */
#include <stdint.h>
#include <stddef.h>

#include "btape.h"
#include "btape_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btape_event ev[256];
	char err[256];

	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0: {
		struct btape_intern *it = btape_intern_new(1u << 20);
		struct chunk_dec d = {0};
		uint64_t sink = 0;
		int n;

		if (it && !btape_chunk_dec_start(&d, data + 1, size - 1, it, err, sizeof(err))) {
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

		if (!btape_meta_unpack(&m, data + 1, size - 1, err, sizeof(err)))
			btape_meta__free(&m);
		break;
	}
	default: {
		struct btape_summary s;
		struct btape_index ix = {0};

		if (!btape_footer_unpack(&s, &ix, data + 1, size - 1, size, err, sizeof(err)))
			btape_index_free(&ix);
		break;
	}
	}
	return 0;
}
