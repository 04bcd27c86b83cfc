// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the shared CLI helpers: parsers, formatters, atomic output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

	/* An unwritable place fails at open. */
	assert_true(cli_out_open(&o, "/nonexistent-dir/x") < 0);
	unlink(path);
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
		cmocka_unit_test(test_duration), cmocka_unit_test(test_size),
		cmocka_unit_test(test_u64),	 cmocka_unit_test(test_format),
		cmocka_unit_test(test_atomic_output), cmocka_unit_test(test_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
