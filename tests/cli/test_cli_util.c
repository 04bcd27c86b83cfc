// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the shared CLI helpers: parsers, formatters, atomic output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "btape.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <dirent.h>

static void test_duration(void **state)
{
	uint64_t ns;

	assert_int_equal(cli_parse_duration_ns("10", &ns), 0);
	assert_int_equal(ns, 10000000000ull);
	assert_int_equal(cli_parse_duration_ns("1.5s", &ns), 0);
	assert_int_equal(ns, 1500000000ull);
	assert_int_equal(cli_parse_duration_ns("200ms", &ns), 0);
	assert_int_equal(ns, 200000000ull);
	assert_int_equal(cli_parse_duration_ns("50us", &ns), 0);
	assert_int_equal(ns, 50000ull);
	assert_int_equal(cli_parse_duration_ns("7ns", &ns), 0);
	assert_int_equal(ns, 7);
	assert_int_equal(cli_parse_duration_ns("2m", &ns), 0);
	assert_int_equal(ns, 120000000000ull);
	assert_int_equal(cli_parse_duration_ns("1h", &ns), 0);
	assert_int_equal(ns, 3600000000000ull);
	assert_int_equal(cli_parse_duration_ns("0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(cli_parse_duration_ns("", &ns), -EINVAL);
	assert_int_equal(cli_parse_duration_ns("-1s", &ns), -EINVAL);
	assert_int_equal(cli_parse_duration_ns("1x", &ns), -EINVAL);
	assert_int_equal(cli_parse_duration_ns("s", &ns), -EINVAL);
	assert_int_equal(cli_parse_duration_ns("nan", &ns), -EINVAL);
	assert_int_equal(cli_parse_duration_ns("1e300h", &ns), -ERANGE);
	assert_int_equal(cli_parse_duration_ns("99999999999h", &ns), -ERANGE);
}

static void test_size(void **state)
{
	uint64_t b;

	assert_int_equal(cli_parse_size("4096", &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(cli_parse_size("4k", &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(cli_parse_size("4K", &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(cli_parse_size("1.5M", &b), 0);
	assert_int_equal(b, 1572864);
	assert_int_equal(cli_parse_size("2GiB", &b), 0);
	assert_int_equal(b, 2ull << 30);
	assert_int_equal(cli_parse_size("1T", &b), 0);
	assert_int_equal(b, 1ull << 40);
	assert_int_equal(cli_parse_size("1kb", &b), 0);
	assert_int_equal(b, 1024);
	assert_int_equal(cli_parse_size("1.1", &b), -EINVAL);
	assert_int_equal(cli_parse_size("1q", &b), -EINVAL);
	assert_int_equal(cli_parse_size("1kx", &b), -EINVAL);
	assert_int_equal(cli_parse_size("-4k", &b), -EINVAL);
	assert_int_equal(cli_parse_size("", &b), -EINVAL);
	assert_int_equal(cli_parse_size("20E", &b), -ERANGE);
}

static void test_u64(void **state)
{
	uint64_t v;

	assert_int_equal(cli_parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cli_parse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(cli_parse_u64("0x10", &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(cli_parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(cli_parse_u64("-1", &v), -EINVAL);
	assert_int_equal(cli_parse_u64("12a", &v), -EINVAL);
	assert_int_equal(cli_parse_u64("", &v), -EINVAL);
}

static void test_format(void **state)
{
	char buf[32];

	assert_string_equal(cli_fmt_ns(830, buf, sizeof(buf)), "830 ns");
	assert_string_equal(cli_fmt_ns(12500, buf, sizeof(buf)), "12.5 us");
	assert_string_equal(cli_fmt_ns(1234567, buf, sizeof(buf)), "1.235 ms");
	assert_string_equal(cli_fmt_ns(2000000000, buf, sizeof(buf)), "2.000 s");
	assert_string_equal(cli_fmt_bytes(512, buf, sizeof(buf)), "512 B");
	assert_string_equal(cli_fmt_bytes(4096, buf, sizeof(buf)), "4.00 KiB");
	assert_string_equal(cli_fmt_bytes(1610612736, buf, sizeof(buf)), "1.50 GiB");
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void test_atomic_output(void **state)
{
	umask(022);
	char dir[] = "/tmp/biotape-cli-test.XXXXXX", path[256], buf[64];
	struct cli_out o;
	FILE *fp;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.txt", dir);

	/* Aborted output: nothing appears, the temporary is gone. */
	assert_int_equal(cli_out_open(&o, path), 0);
	fputs("partial", o.fp);
	assert_int_equal(count_entries(dir), 1);
	cli_out_abort(&o);
	cli_out_abort(&o); /* idempotent */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(count_entries(dir), 0);

	/* Committed output: appears whole under its name. */
	assert_int_equal(cli_out_open(&o, path), 0);
	fputs("complete\n", o.fp);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(cli_out_commit(&o), 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	assert_string_equal(buf, "complete\n");
	fclose(fp);
	assert_int_equal(count_entries(dir), 1);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0666 & ~022);

	/* The umask applies, as to any file a program makes (it was 0644 whatever it said). */
	mode_t old = umask(077);
	assert_int_equal(cli_out_open(&o, path), 0);
	assert_int_equal(cli_out_commit(&o), 0);
	umask(old);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	/* An unwritable place fails at open. */
	assert_true(cli_out_open(&o, "/nonexistent-dir/x") < 0);
	unlink(path);
	rmdir(dir);
}

/*
 * Outputs are regular files (docs/SAFETY.md): a FIFO or directory at the path is refused at
 * the open; a path that turns into one between the open and the commit is not renamed over,
 * and the temporary is gone. (Device nodes need root: tests/cli/test_output_safety.sh.)
 */
static void test_output_not_regular(void **state)
{
	char dir[] = "/tmp/biotape-cli-test.XXXXXX", path[256], why[600];
	struct btape_writer *w = NULL;
	struct cli_out o;
	struct stat sb;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out", dir);

	assert_int_equal(btape_output_check(path, why, sizeof(why)), 0); /* missing */
	assert_int_equal(btape_output_check(dir, why, sizeof(why)), -EISDIR);
	assert_int_equal(btape_output_check("/dev/null", why, sizeof(why)), 1);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(btape_output_check(path, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "a FIFO"));
	assert_int_equal(cli_out_open(&o, path), -EPERM);
	assert_non_null(strstr(o.why, "FIFO"));
	assert_int_equal(cli_out_open(&o, dir), -EISDIR);
	assert_int_equal(cli_out_check("x", path), BTAPE_EXIT_FAIL);
	assert_int_equal(btape_writer__open(&w, path, NULL, NULL, why, sizeof(why)), -EPERM);
	assert_null(w);
	assert_non_null(strstr(why, "FIFO"));
	assert_int_equal(btape_writer__open_direct(&w, path, NULL, NULL, NULL, 0), -EPERM);
	assert_int_equal(count_entries(dir), 1);
	unlink(path);

	/* swapped between the open and the commit */
	assert_int_equal(cli_out_open(&o, path), 0);
	fputs("report\n", o.fp);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(cli_out_commit(&o), -EPERM);
	assert_non_null(strstr(o.why, "FIFO"));
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
	assert_int_equal(count_entries(dir), 1); /* no temporary left */
	unlink(path);

	assert_int_equal(btape_writer__open(&w, path, NULL, NULL, NULL, 0), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	why[0] = '\0';
	assert_int_equal(btape_writer__close(w, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "FIFO"));
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
	assert_int_equal(count_entries(dir), 1);
	unlink(path);

	/*
	 * The null device is a sink: written, never replaced. A node of our own (root only), not
	 * /dev/null: a broken writer would rename over the system's.
	 */
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		assert_int_equal(cli_out_open(&o, path), 0);
		fputs("nothing\n", o.fp);
		assert_int_equal(cli_out_commit(&o), 0);
		assert_int_equal(btape_writer__open(&w, path, NULL, NULL, NULL, 0), 0);
		assert_int_equal(btape_writer__close(w, NULL, 0), 0);
		assert_int_equal(stat(path, &sb), 0);
		assert_true(S_ISCHR(sb.st_mode));
		assert_int_equal(count_entries(dir), 1);
		unlink(path);
	}
	rmdir(dir);
}

/* A discarded direct trace removes only a file its writer created, and only while it is there. */
static void test_direct_discard(void **state)
{
	char dir[] = "/tmp/biotape-cli-test.XXXXXX", path[256], other[300], why[BTAPE_ERRMSG_LEN];
	struct btape_writer *w = NULL;
	struct stat sb;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.btape", dir);
	snprintf(other, sizeof(other), "%s/other", dir);

	assert_int_equal(btape_writer__open_direct(&w, path, NULL, NULL, NULL, 0), 0);
	assert_int_equal(access(path, F_OK), 0);
	btape_writer__discard(w);
	assert_int_equal(access(path, F_OK), -1); /* created, so removed */

	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("an older trace", fp);
	fclose(fp);
	assert_int_equal(btape_writer__open_direct(&w, path, NULL, NULL, NULL, 0), 0);
	btape_writer__discard(w);
	assert_int_equal(stat(path, &sb), 0); /* existed: kept, left empty */
	assert_int_equal(sb.st_size, 0);
	unlink(path);

	assert_int_equal(btape_writer__open_direct(&w, path, NULL, NULL, NULL, 0), 0);
	fp = fopen(other, "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(rename(other, path), 0); /* someone else's file there now */
	btape_writer__discard(w);
	assert_int_equal(access(path, F_OK), 0);
	unlink(path);

	/* a dangling symlink is not followed to create its target */
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(btape_writer__open_direct(&w, path, NULL, NULL, why, sizeof(why)),
			 -ENOENT);
	assert_non_null(strstr(why, "dangling"));
	assert_int_equal(access(other, F_OK), -1);
	unlink(path);

	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0) { /* root: our own null node */
		assert_int_equal(btape_writer__open_direct(&w, path, NULL, NULL, NULL, 0), 0);
		btape_writer__discard(w);
		assert_int_equal(stat(path, &sb), 0);
		assert_true(S_ISCHR(sb.st_mode));
		unlink(path);
	}
	rmdir(dir);
}

static void test_escape(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	cli_json_str(fp, "a\"b\\c\n\x01");
	fputc('|', fp);
	cli_json_str(fp, NULL);
	fclose(fp);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\u0001\"|null");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_atomic_output),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_output_not_regular),
		cmocka_unit_test(test_direct_discard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
