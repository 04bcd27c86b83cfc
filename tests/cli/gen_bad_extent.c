// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes a complete .btape (footer, index, trailer) whose event 1 of 3 is past the extent
 * limits, built from the library's internal encoder because the writer refuses such an event:
 *   gen_bad_extent OUT bytes   event 1: 2^64 - 1 bytes at sector 8
 *   gen_bad_extent OUT wrap    event 1: sector 2^55 - 1, 4096 bytes (ends past 2^64)
 *   gen_bad_extent OUT end     event 1: ends at byte 2^63, one past the limit
 *   gen_bad_extent OUT ok      event 1: ends at byte 2^63 - 1 (at the limit: readable)
 * Events 0 and 2 are 4 KiB reads at sectors 0 and 16 on device "loop7" (1 GiB).
 */
#include "btape.h"
#include "btape_internal.h"
#include "mp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static int put_frame(struct bbuf *out, unsigned int type, const void *raw, size_t rlen)
{
	size_t cap = ZSTD_compressBound(rlen), clen;
	uint8_t *c = malloc(cap), env[BTAPE_ENV_SIZE];
	int err = -1;

	if (!c)
		return -1;
	clen = ZSTD_compress(c, cap, raw, rlen, 3);
	if (!ZSTD_isError(clen)) {
		btape_env_build(env, type, (uint32_t)clen, (uint32_t)rlen, c);
		err = bbuf_put(out, env, sizeof(env)) || bbuf_put(out, c, clen) ? -1 : 0;
	}
	free(c);
	return err;
}

int main(int argc, char **argv)
{
	struct btape_meta meta = {0};
	struct btape_device dev = {0};
	struct btape_event evs[3];
	struct btape_summary sum = {.sz = sizeof(sum)};
	struct btape_index ix = {0};
	struct bbuf file = {0}, mb = {0}, chunk = {0}, foot = {0};
	struct chunk_enc *ce = btape_chunk_enc_new();
	uint8_t hdr[BTAPE_HEADER_SIZE], tr[BTAPE_TRAILER_SIZE];
	uint64_t chunk_off, foot_off;
	uint32_t comm_idx[3] = {0, 0, 0};
	size_t *cuts, ncuts; /* the encoder's */
	FILE *f;

	if (argc != 3 || !ce) {
		fprintf(stderr, "usage: gen_bad_extent OUT bytes|wrap|end|ok\n");
		return 2;
	}
	memset(evs, 0, sizeof(evs));
	for (int i = 0; i < 3; i++) {
		evs[i].issue_ns = 1000000000ull + (uint64_t)i * 1000000;
		evs[i].op = BTAPE_OP_READ;
		evs[i].sector = 8 * (uint64_t)i;
		evs[i].bytes = 4096;
	}
	if (!strcmp(argv[2], "bytes")) {
		evs[1].bytes = UINT64_MAX;
	} else if (!strcmp(argv[2], "wrap")) {
		evs[1].sector = UINT64_MAX >> 9;
	} else if (!strcmp(argv[2], "end") || !strcmp(argv[2], "ok")) {
		evs[1].sector = (BTAPE_END_MAX >> 9) - 7;
		evs[1].bytes = 8 * 512 - !strcmp(argv[2], "ok");
	} else {
		fprintf(stderr, "gen_bad_extent: unknown kind '%s'\n", argv[2]);
		return 2;
	}
	snprintf(meta.tool, sizeof(meta.tool), "gen_bad_extent");
	snprintf(dev.name, sizeof(dev.name), "loop7");
	dev.size_bytes = 1ull << 30;
	dev.logical_block = dev.physical_block = 512;
	dev.rotational = 0;
	if (btape_meta_add_device(&meta, &dev) < 0 || btape_meta_pack(&mb, &meta))
		return 1;
	btape_header_build(hdr, BTAPE_FORMAT_VERSION_MAJOR, BTAPE_FORMAT_VERSION_MINOR);
	if (bbuf_put(&file, hdr, sizeof(hdr)) || put_frame(&file, BTAPE_FRAME_META, mb.p, mb.len))
		return 1;
	if (btape_chunk_encode(ce, evs, comm_idx, 3, NULL, NULL, 0, &chunk, &cuts, &ncuts))
		return 1;
	chunk_off = file.len;
	if (put_frame(&file, BTAPE_FRAME_CHUNK, chunk.p, chunk.len))
		return 1;
	sum.events = 3;
	sum.first_issue_ns = evs[0].issue_ns;
	sum.last_issue_ns = evs[2].issue_ns;
	sum.count_by_op[BTAPE_OP_READ] = 3;
	for (int i = 0; i < 3; i++)
		sum.bytes_by_op[BTAPE_OP_READ] += evs[i].bytes;
	sum.chunks = 1;
	if (btape_index_add(&ix, chunk_off, evs[0].issue_ns, evs[2].issue_ns, 3) ||
	    btape_footer_pack(&foot, &sum, &ix, NULL))
		return 1;
	foot_off = file.len;
	if (put_frame(&file, BTAPE_FRAME_FOOTER, foot.p, foot.len))
		return 1;
	btape_trailer_build(tr, foot_off);
	if (bbuf_put(&file, tr, sizeof(tr)))
		return 1;
	f = fopen(argv[1], "wb");
	if (!f || fwrite(file.p, 1, file.len, f) != file.len || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	btape_chunk_enc_free(ce);
	btape_index_free(&ix);
	btape_meta_free(&meta);
	bbuf_free(&file);
	bbuf_free(&mb);
	bbuf_free(&chunk);
	bbuf_free(&foot);
	return 0;
}
