// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for convert's exporters and --merge, info and dump, run as the commands
 * are on a .btape or on events made into one (fuzz_trace.h). One of, picked by a byte in the
 * middle: the CSV export imported back, which must succeed with every event (biotape's own
 * CSV holds every event of any trace a writer accepts: a failure is a finding, not only a
 * crash); the fio iolog and blkparse exports; the two halves of the input as two hosts'
 * traces merged; info and dump. Outputs go to a directory of this process in /dev/shm.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char p[64], q[64], dir[64], a[96], b[96];
	int fd = -1, fd2 = -1;

	snprintf(dir, sizeof(dir), "/dev/shm/biotape-fuzz-convert.%d", (int)getpid());
	mkdir(dir, 0700);
	switch (size ? data[size / 2] % 5 : 0) {
	case 0:
		if ((fd = fuzz_trace(data, size, 4, NULL, p, sizeof(p))) < 0)
			break;
		snprintf(a, sizeof(a), "%s/t.csv", dir);
		snprintf(b, sizeof(b), "%s/back.btape", dir);
		if (fuzz_run(cmd_convert, "convert", p, a, "-q", NULL) == 0) {
			uint64_t max;
			long long n = fuzz_scan(p, &max);

			/* our own export must come back, every event of it */
			if (fuzz_run(cmd_convert, "convert", a, b, "-q", NULL) != 0 ||
			    fuzz_scan(b, &max) != n)
				__builtin_trap();
		}
		break;
	case 1:
		if ((fd = fuzz_trace(data, size, 4, NULL, p, sizeof(p))) < 0)
			break;
		snprintf(a, sizeof(a), "%s/t.iolog", dir);
		fuzz_run(cmd_convert, "convert", p, a, "-q", "--target", "/dev/null", NULL);
		snprintf(a, sizeof(a), "%s/t.txt", dir);
		fuzz_run(cmd_convert, "convert", p, a, "-q", NULL);
		break;
	case 2:
		if ((fd = fuzz_trace(data, size / 2, 4, "hosta", p, sizeof(p))) < 0)
			break;
		fd2 = fuzz_trace(data + size / 2, size - size / 2, 4, "hostb", q, sizeof(q));
		snprintf(a, sizeof(a), "%s/merged.btape", dir);
		if (fd2 >= 0)
			fuzz_run(cmd_convert, "convert", "--merge", p, q, a, "--align", "start",
				 "-q", NULL);
		break;
	default:
		if ((fd = fuzz_trace(data, size, 4, NULL, p, sizeof(p))) < 0)
			break;
		fuzz_run(cmd_info, "info", p, NULL);
		fuzz_run(cmd_info, "info", p, "--json", NULL);
		fuzz_run(cmd_dump, "dump", p, NULL);
		fuzz_run(cmd_dump, "dump", p, "--csv", NULL);
		fuzz_run(cmd_dump, "dump", p, "--json", NULL);
		break;
	}
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	for (const char *f = "t.csv\0back.btape\0t.iolog\0t.txt\0merged.btape\0"; *f;
	     f += strlen(f) + 1) {
		snprintf(a, sizeof(a), "%s/%s", dir, f);
		unlink(a);
	}
	rmdir(dir);
	return 0;
}
