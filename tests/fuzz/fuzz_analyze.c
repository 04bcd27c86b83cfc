// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what reads a trace after the reader: analyze --json on every input, and
 * one of analyze (text, HTML), profile (flat, and with phases and per process) and compare (the
 * trace against itself), each run as the command is, on a .btape or on events made into one
 * (fuzz_trace.h), so that mutations reach the statistics, the working set, the phase detection
 * and the renderers. Any crash, hang, sanitizer report, or memory past the run's limits is a
 * finding: a trace from somebody else must not take a process down or eat the machine.
 */
#include <stdint.h>
#include <stddef.h>
#include <unistd.h>

#include "cmd_analyze.h"
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char p[64];
	int fd = fuzz_trace(data, size, 4, NULL, p, sizeof(p));

	if (fd < 0)
		return 0;
	fuzz_run(cmd_analyze, "analyze", p, "--json", "--interval", "1ms", NULL);
	/* and one more, picked by a byte in the middle (each costs 50-500 ms) */
	switch (size ? data[size / 2] % 6 : 0) {
	case 0:
		fuzz_run(cmd_analyze, "analyze", p, NULL);
		break;
	case 1:
		fuzz_run(cmd_analyze, "analyze", p, "--html", "-", NULL);
		break;
	case 2:
		fuzz_run(cmd_profile, "profile", p, NULL);
		break;
	case 3:
		fuzz_run(cmd_profile, "profile", p, "--phases", "auto", "--per-process", NULL);
		break;
	case 4:
		fuzz_run(cmd_compare, "compare", p, p, "--json", NULL);
		break;
	default:
		fuzz_run(cmd_compare, "compare", p, p, "--html", "-", NULL);
		break;
	}
	close(fd);
	return 0;
}
