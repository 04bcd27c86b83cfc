// SPDX-License-Identifier: GPL-2.0-only
/*
 * rp_target_open() against a path re-pointed between its checks and its open: a symlink to a
 * checked, empty file swapped for one to a file holding data (as it could be to a mounted
 * disk). This program's open() (which target.c, linked in statically, calls) swaps the link
 * on the first open of the target path, then opens.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "target.h"

static char dir[64], link_path[96], checked[96], precious[96];
static int swaps_armed;

/* Every open() of this program, target.c's included */
int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (swaps_armed && strcmp(path, link_path) == 0) {
		char tmp[128];

		swaps_armed = 0;
		snprintf(tmp, sizeof(tmp), "%s.new", link_path);
		if (symlink(precious, tmp) || rename(tmp, link_path))
			abort();
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static void put(const char *path, const char *text, size_t size)
{
	char *buf = calloc(1, size);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_non_null(buf);
	assert_true(fd >= 0);
	memcpy(buf, text, strlen(text));
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/biotape-target.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(link_path, sizeof(link_path), "%s/target", dir);
	snprintf(checked, sizeof(checked), "%s/empty.img", dir);
	snprintf(precious, sizeof(precious), "%s/precious.img", dir);
	return 0;
}

static int teardown(void **state)
{
	char tmp[128];

	(void)state;
	unlink(link_path);
	unlink(checked);
	unlink(precious);
	snprintf(tmp, sizeof(tmp), "%s.new", link_path);
	unlink(tmp);
	return rmdir(dir);
}

/* the path swapped after the checks: refused, and nothing is opened for writing */
static void test_swapped_after_checks(void **state)
{
	struct rp_target_opts o = {.write = true, .buffered = true};
	struct rp_target t;
	char why[256] = "";

	(void)state;
	put(checked, "", 8192);
	put(precious, "precious data", 8192);
	assert_int_equal(symlink(checked, link_path), 0);
	swaps_armed = 1;
	int err = rp_target_open(&t, link_path, &o, why, sizeof(why));
	assert_int_equal(swaps_armed, 0); /* the swap happened */
	assert_int_equal(err, -ESTALE);
	assert_non_null(strstr(why, "changed between its checks and its open"));
	assert_int_equal(t.fd, -1);
	rp_target_close(&t);
}

/* unswapped, the same path opens: the check compares the right things */
static void test_unswapped_opens(void **state)
{
	struct rp_target_opts o = {.write = true, .buffered = true};
	struct rp_target t;
	char why[256] = "";

	(void)state;
	put(checked, "", 8192);
	unlink(link_path);
	assert_int_equal(symlink(checked, link_path), 0);
	assert_int_equal(rp_target_open(&t, link_path, &o, why, sizeof(why)), 0);
	assert_true(t.fd >= 0);
	assert_int_equal(t.size, 8192);
	rp_target_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_swapped_after_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unswapped_opens, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
