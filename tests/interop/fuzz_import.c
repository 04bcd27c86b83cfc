// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for one importer (FUZZ_FMT, set per target by CMake): the input is parsed as
 * a trace of that format, strictly and with --skip-bad, and also run through detection.
 * Nothing may crash, leak or read out of bounds; errors are expected.
 */
#include "btape_interop.h"

#include <stddef.h>
#include <stdint.h>

#ifndef FUZZ_FMT
#error "FUZZ_FMT must name the format"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btape_import_stats st;
	char err[512];

	(void)btape_fmt_detect(data, size);
	(void)btape_import_validate_buf(FUZZ_FMT, data, size, "fuzz", false, &st, err, sizeof(err));
	(void)btape_import_validate_buf(FUZZ_FMT, data, size, "fuzz", true, &st, err, sizeof(err));
	return 0;
}
