// SPDX-License-Identifier: GPL-2.0-only
/* The shared HTML escaper (common/html.h), used by analyze's and replay's HTML reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "html.h"

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	assert_non_null(fp);
	html_escape(fp, s);
	assert_int_equal(fclose(fp), 0);
	return buf;
}

static void test_escape(void **state)
{
	char *o = escaped("<a href=\"x&y\">it's</a> \xc3\xa9");

	assert_string_equal(o, "&lt;a href=&quot;x&amp;y&quot;&gt;it's&lt;/a&gt; \xc3\xa9");
	free(o);
	o = escaped("");
	assert_string_equal(o, "");
	free(o);
	o = escaped(NULL); /* nothing, no crash */
	assert_string_equal(o, "");
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
