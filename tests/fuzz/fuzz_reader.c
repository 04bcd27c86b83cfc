// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the .btape reader: the input is a whole file, handed to the reader
 * through a memfd (btape_reader__open_fd). Exercises open, streaming, batches, seek, summary
 * and verify, with a field skip mask taken from the input (changed between batches after
 * the seek), and the footer tags; any crash, hang or sanitizer report is a finding.
 */
#include <stdint.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every footer tag, each looked up again by its key and its value's bytes read (a sanitizer
 * sees a pointer past the buffer). */
static void footer_tags(struct btape_reader *r)
{
	const char *key;
	const void *v, *w;
	size_t len, wlen;
	static volatile unsigned int sink;

	for (uint32_t i = 0; btape_reader__footer_tag_at(r, i, &key, &v, &len) == 1; i++) {
		if (btape_reader__footer_tag(r, key, &w, &wlen) != 1 || w != v || wlen != len)
			__builtin_trap();
		for (size_t j = 0; j < len; j++)
			sink += ((const uint8_t *)v)[j];
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btape_reader *r = NULL;
	struct btape_summary s = {.sz = sizeof(s)};
	struct btape_event ev;
	const struct btape_event *evs;
	char msg[BTAPE_ERRMSG_LEN];
	size_t off = 0;
	int fd, n, errors = 0;
	/* from a byte in the middle: the fuzzer controls it, the trailer does not fix it */
	uint32_t mask = size ? ((uint32_t)data[size / 2] * 0x9e3779b1u >> 22) & BTAPE_HAS__ALL : 0;

	fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);

		if (w <= 0)
			goto out;
		off += (size_t)w;
	}
	if (btape_reader__open_fd(&r, fd, msg, sizeof(msg)))
		goto out;
	(void)btape_reader__meta(r);
	btape_reader__skip_fields(r, mask);
	/* errors are resumable: keep reading, bounded */
	while ((n = btape_reader__next(r, &ev)) != 0 && errors < 64)
		if (n < 0)
			errors++;
	btape_reader__summary(r, &s);
	btape_reader__verify(r);
	footer_tags(r);
	if (!btape_reader__seek(r, 1000))
		while ((n = btape_reader__next_batch(r, &evs)) != 0 && errors < 128) {
			if (n < 0)
				errors++;
			/* skipped columns resume mid-chunk */
			mask = (mask * 5 + 1) & BTAPE_HAS__ALL;
			btape_reader__skip_fields(r, mask);
		}
	(void)btape_reader__errmsg(r);
	btape_reader__close(r);
out:
	close(fd);
	return 0;
}
