// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs a libFuzzer target once over every file of a corpus directory (or the files named),
 * so that the committed corpus is a regression test in every build, fuzzing compiler or not.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* optional, as in libFuzzer: called once before the first input */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!fp) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(fp, 0, SEEK_END) || (len = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
		fclose(fp);
		return -1;
	}
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, fp) != (size_t)len) {
		free(buf);
		fclose(fp);
		return -1;
	}
	fclose(fp);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "fuzz: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			files++;
			continue;
		}
		d = opendir(argv[i]);
		if (!d)
			return 1;
		while ((de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (run_file(path)) {
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	if (files == 0) {
		fprintf(stderr, "fuzz: no corpus files\n");
		return 1;
	}
	fprintf(stderr, "fuzz: %d corpus files ran without a crash\n", files);
	return 0;
}
