// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the replayer after the reader: its scan of the trace (extents, the fit,
 * the recorded depths), the scheduler, the order tracker and the report, run as the command is
 * with the null engine (no I/O) onto a file target made for the run in /dev/shm, on a .btape or
 * on events made into one (fuzz_trace.h; one device). One of: as fast as possible with a
 * recording of the replay and the JSON summary; original timing at 10^6 times the speed under
 * --order causal, bounded by --duration; two overlaid copies at the recorded depth, with the
 * HTML page. Any crash, hang or sanitizer report is a finding. Traces with an I/O over 1 MiB
 * are left out: a replay gives such I/Os buffers of their size, up to 1.25 GiB by design
 * (replayer/cmd_replay.c), past the fuzzing runs' memory limit.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd_replay.h"
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char p[64], target[64];
	int fd = fuzz_trace(data, size, 1, NULL, p, sizeof(p));

	if (fd < 0)
		return 0;
	uint64_t max_bytes;

	if (fuzz_scan(p, &max_bytes) >= 0 && max_bytes > (1u << 20)) {
		close(fd);
		return 0;
	}
	snprintf(target, sizeof(target), "/dev/shm/biotape-fuzz-replay.%d", (int)getpid());
	unlink(target);
	switch (size ? data[size / 2] % 3 : 0) {
	case 0:
		fuzz_run(cmd_replay, "replay", p, "--target", target, "--create", "auto", "--fit",
			 "wrap", "--write", "--engine", "null", "--timing", "afap", "--no-progress",
			 "-o", "/dev/null", "--json", NULL);
		break;
	case 1:
		fuzz_run(cmd_replay, "replay", p, "--target", target, "--create", "16M", "--fit",
			 "scale", "--write", "--engine", "null", "--speed", "1000000", "--order",
			 "causal", "--duration", "50ms", "--no-progress", NULL);
		break;
	default:
		fuzz_run(cmd_replay, "replay", p, "--target", target, "--create", "auto", "--fit",
			 "wrap", "--writes-as-reads", "--engine", "null", "--scale", "2",
			 "--layout", "overlay", "--iodepth", "recorded", "--timing", "afap",
			 "--no-progress", "--html", "-", NULL);
		break;
	}
	unlink(target);
	close(fd);
	return 0;
}
