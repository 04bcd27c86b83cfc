// SPDX-License-Identifier: GPL-2.0-only
/* Units of the importers: field splitting, exact unit conversion, rwbs, detection, joining. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "interop_internal.h"

static struct field F(const char *s) {
	struct field f = {s, (uint32_t)strlen(s)};

	return f;
}

static void
test_split(void **state)
{
	struct field f[FIELDS_MAX];
	const char *csv = "a, b ,,c";
	const char *ws = "  1000\t0  64 8 1 ";
	char many[128] = "";

	(void)state;
	assert_int_equal(split_fields(csv, strlen(csv), ',', f, FIELDS_MAX), 4);
	assert_true(field_eq(&f[0], "a"));
	assert_true(field_eq(&f[1], "b"));
	assert_int_equal(f[2].n, 0);
	assert_true(field_eq(&f[3], "c"));
	assert_int_equal(split_fields(ws, strlen(ws), ' ', f, FIELDS_MAX), 5);
	assert_true(field_eq(&f[0], "1000"));
	assert_true(field_eq(&f[4], "1"));
	for (int i = 0; i < 20; i++)
		strcat(many, "1,");
	assert_int_equal(split_fields(many, strlen(many), ',', f, FIELDS_MAX), FIELDS_MAX + 1);
}

static void test_numbers(void **state)
{
	struct field f;
	uint64_t v;
	int64_t s;

	(void)state;
	f = F("18446744073709551615");
	assert_int_equal(field_u64(&f, &v), 0);
	assert_true(v == UINT64_MAX);
	f = F("18446744073709551616");
	assert_int_equal(field_u64(&f, &v), -ERANGE);
	f = F("12a");
	assert_int_equal(field_u64(&f, &v), -EINVAL);
	f = F("");
	assert_int_equal(field_u64(&f, &v), -EINVAL);
	f = F("-5");
	assert_int_equal(field_i64(&f, &s), 0);
	assert_int_equal(s, -5);
	/* seconds -> ns exactly, rounding half up past 9 digits */
	f = F("0.551706");
	assert_int_equal(field_dec_scaled(&f, 9, &v), 0);
	assert_true(v == 551706000ull);
	f = F("12.1234567894");
	assert_int_equal(field_dec_scaled(&f, 9, &v), 0);
	assert_true(v == 12123456789ull);
	f = F("12.1234567895");
	assert_int_equal(field_dec_scaled(&f, 9, &v), 0);
	assert_true(v == 12123456790ull);
	f = F("3");
	assert_int_equal(field_dec_scaled(&f, 9, &v), 0);
	assert_true(v == 3000000000ull);
	f = F("1e3");
	assert_int_equal(field_dec_scaled(&f, 9, &v), -EINVAL);
	f = F(".");
	assert_int_equal(field_dec_scaled(&f, 9, &v), -EINVAL);
	f = F("99999999999.0");
	assert_int_equal(field_dec_scaled(&f, 9, &v), -ERANGE);
}

#define RWBS(str, bytes) rwbs_parse(str, strlen(str), bytes, &op, &fl)

static void test_rwbs(void **state)
{
	uint8_t op;
	uint32_t fl;

	(void)state;
	assert_int_equal(RWBS("WS", 4096), 0);
	assert_int_equal(op, BTAPE_OP_WRITE);
	assert_int_equal(fl, BTAPE_FLAG_SYNC);
	assert_int_equal(RWBS("FWFS", 4096), 0);
	assert_int_equal(op, BTAPE_OP_WRITE);
	assert_int_equal(fl, BTAPE_FLAG_PREFLUSH | BTAPE_FLAG_FUA | BTAPE_FLAG_SYNC);
	assert_int_equal(RWBS("RA", 4096), 0);
	assert_int_equal(op, BTAPE_OP_READ);
	assert_int_equal(fl, BTAPE_FLAG_READAHEAD);
	assert_int_equal(RWBS("RSM", 8192), 0);
	assert_int_equal(op, BTAPE_OP_READ);
	assert_int_equal(fl, BTAPE_FLAG_SYNC | BTAPE_FLAG_META);
	assert_int_equal(RWBS("D", 1 << 20), 0);
	assert_int_equal(op, BTAPE_OP_DISCARD);
	/* blkparse: F = the flush bit; with no data a flush request (jbd2's FN, kworkers' FWS) */
	assert_int_equal(RWBS("FN", 0), 0);
	assert_int_equal(op, BTAPE_OP_FLUSH);
	assert_int_equal(fl, BTAPE_FLAG_PREFLUSH);
	assert_int_equal(RWBS("FWS", 0), 0);
	assert_int_equal(op, BTAPE_OP_FLUSH);
	assert_int_equal(fl, BTAPE_FLAG_PREFLUSH | BTAPE_FLAG_SYNC);
	assert_int_equal(RWBS("FW", 0), 0);
	assert_int_equal(op, BTAPE_OP_FLUSH);
	/* old blkparse: B (barrier) is that bit as a suffix */
	assert_int_equal(RWBS("WBS", 4096), 0);
	assert_int_equal(op, BTAPE_OP_WRITE);
	assert_int_equal(fl, BTAPE_FLAG_PREFLUSH | BTAPE_FLAG_SYNC);
	assert_int_equal(RWBS("WB", 0), 0);
	assert_int_equal(op, BTAPE_OP_FLUSH);
	/* N without the flush bit: no data, not a read */
	assert_int_equal(RWBS("N", 0), 0);
	assert_int_equal(op, BTAPE_OP_OTHER);
	assert_int_equal(fl, 0);
	/* the kernel's letters that blkparse never prints (biotape's export writes them) */
	assert_int_equal(RWBS("DE", 4096), 0);
	assert_int_equal(op, BTAPE_OP_SECURE_ERASE);
	assert_int_equal(RWBS("F", 0), 0);
	assert_int_equal(op, BTAPE_OP_FLUSH);
	assert_int_equal(fl, 0);
	assert_int_equal(RWBS("FFS", 0), 0);
	assert_int_equal(op, BTAPE_OP_FLUSH);
	assert_int_equal(fl, BTAPE_FLAG_PREFLUSH | BTAPE_FLAG_SYNC);
	assert_int_equal(RWBS("WZ", 4096), 0);
	assert_int_equal(op, BTAPE_OP_WRITE_ZEROES);
	assert_int_equal(RWBS("ZR", 0), 0);
	assert_int_equal(op, BTAPE_OP_ZONE_RESET);
	assert_int_equal(RWBS("WSU", 4096), 0);
	assert_int_equal(fl, BTAPE_FLAG_SYNC | BTAPE_FLAG_ATOMIC);
	assert_int_equal(RWBS("Q", 0), -EINVAL);
	assert_int_equal(RWBS("WX", 0), -EINVAL);
	assert_int_equal(RWBS("S", 0), -EINVAL);
	assert_int_equal(RWBS("Z", 0), -EINVAL);

	/* what the binary importer calls with the letter blkparse would print for its bits */
	fl = 0;
	blk_classify(true, 'N', 0, &op, &fl);
	assert_int_equal(op, BTAPE_OP_FLUSH);
	assert_int_equal(fl, BTAPE_FLAG_PREFLUSH);
	fl = 0;
	blk_classify(true, 'W', 4096, &op, &fl);
	assert_int_equal(op, BTAPE_OP_WRITE);
	assert_int_equal(fl, BTAPE_FLAG_PREFLUSH);
	fl = 0;
	blk_classify(false, 'N', 0, &op, &fl);
	assert_int_equal(op, BTAPE_OP_OTHER);
	assert_int_equal(fl, 0);
	blk_classify(false, 'D', 4096, &op, &fl);
	assert_int_equal(op, BTAPE_OP_DISCARD);
	blk_classify(false, 'R', 512, &op, &fl);
	assert_int_equal(op, BTAPE_OP_READ);
}

static int detect(const char *s)
{
	return btape_fmt_detect(s, strlen(s));
}

static void test_detect(void **state)
{
	(void)state;
	assert_int_equal(detect("128166372003061629,hm,1,Read,3584,4096,4177\n"), BTAPE_FMT_MSR);
	assert_int_equal(detect("0,R,126703616,4096,1577808000000047\n"), BTAPE_FMT_ALIBABA);
	assert_int_equal(detect("1538323200,12345,8,1,1234\n"), BTAPE_FMT_TENCENT);
	assert_int_equal(detect("0,303567,3584,w,0.000000\n"), BTAPE_FMT_UMASS);
	assert_int_equal(detect("1000 0 64 8 1\n2000 1 64 8 0\n"), BTAPE_FMT_MQSIM);
	assert_int_equal(detect("89967404265337 4327 syslogd 4970376 8 W 8 0 3a7e\n"),
			 BTAPE_FMT_FIU);
	assert_int_equal(detect("  8,0    3        1     0.000000000   697  Q   W 2 + 8 [kw]\n"),
			 BTAPE_FMT_BLKPARSE);
	assert_int_equal(detect("fio version 3 iolog\n1 f add\n"), BTAPE_FMT_FIO3);
	assert_int_equal(detect("fio version 2 iolog\nf add\n"), BTAPE_FMT_FIO2);
	/* a column header is skipped, mixed shapes are refused, text is not a trace */
	assert_int_equal(detect("Timestamp,Offset,Size,IOType,VolumeID\n1538323200,1,8,1,1\n"),
			 BTAPE_FMT_TENCENT);
	assert_int_equal(detect("1000 0 64 8 1\n0,R,1,4096,1\n"), BTAPE_FMT_UNKNOWN);
	assert_int_equal(detect("hello world\n"), BTAPE_FMT_UNKNOWN);
	assert_int_equal(detect(""), BTAPE_FMT_UNKNOWN);
	assert_int_equal(btape_fmt_parse("disksim"), BTAPE_FMT_MQSIM);
	assert_int_equal(btape_fmt_parse("fio"), BTAPE_FMT_FIO3);
	assert_int_equal(btape_fmt_parse("nope"), -EINVAL);
	assert_string_equal(btape_fmt_name(BTAPE_FMT_VSCSI), "vscsi");
}

static int validate(unsigned int fmt, const char *s, bool skip, struct btape_import_stats *st,
		    char *err)
{
	return btape_import_validate_buf(fmt, s, strlen(s), "t", skip, st, err, 512);
}

static int validate_len(const char *s, size_t len, struct btape_import_stats *st, char *err)
{
	return btape_import_validate_buf(BTAPE_FMT_BLKPARSE, s, len, "t", false, st, err, 512);
}

static void test_errors_and_skips(void **state)
{
	struct btape_import_stats st;
	char err[512];

	(void)state;
	assert_int_equal(
		validate(BTAPE_FMT_MQSIM, "1 0 0 8 1\n2 0 8 8 1\n3 0 x 8 1\n", false, &st, err),
		-EINVAL);
	assert_non_null(strstr(err, "t:3: sector 'x'"));
	assert_int_equal(
		validate(BTAPE_FMT_MQSIM, "1 0 0 8 1\nbad\n3 0 x 8 1\n4 0 8 8 0", true, &st, err),
		0);
	assert_int_equal(st.skipped, 2);
	assert_int_equal(st.events, 2);
	assert_non_null(strstr(st.first_skipped, "t:2:"));
	/* overflow of sectors -> bytes is an error, not a wrap */
	assert_int_equal(validate(BTAPE_FMT_MQSIM, "1 0 0 36028797018963968 1\n", false, &st, err),
			 -EINVAL);
	/* CRLF line ends and no final newline */
	assert_int_equal(validate(BTAPE_FMT_TENCENT, "1,2,8,1,5\r\n2,2,8,0,5", false, &st, err), 0);
	assert_int_equal(st.events, 2);
}

static void test_join(void **state)
{
	struct btape_import_stats st;
	char err[512];
	/* partial completion, back merge, front merge, requeue, unmatched completion */
	const char *t = "8,0 0 1 0.000000100 9 Q W 100 + 8 [a]\n"
			"8,0 0 2 0.000000200 9 Q W 108 + 8 [a]\n"
			"8,0 0 3 0.000000300 9 M W 108 + 8 [a]\n"
			"8,0 0 4 0.000000400 9 Q W 92 + 8 [a]\n"
			"8,0 0 5 0.000000500 9 F W 92 + 8 [a]\n"
			"8,0 0 6 0.000000600 9 D W 92 + 24 [a]\n"
			"8,0 0 7 0.000000700 9 R W 92 + 24 [a]\n"
			"8,0 0 8 0.000000800 9 D W 92 + 24 [a]\n"
			"8,0 0 9 0.000000900 0 C W 92 + 8 [0]\n"
			"8,0 0 10 0.000001000 0 C W 100 + 16 [0]\n"
			"8,0 0 11 0.000001100 0 C W 5000 + 8 [0]\n";

	(void)state;
	assert_int_equal(validate(BTAPE_FMT_BLKPARSE, t, false, &st, err), 0);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.merged, 2);
	assert_int_equal(st.unmatched, 1);
}

/* A growing text buffer of blkparse lines. */
struct text {
	char *p;
	size_t len, cap;
};

static void line(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->cap - t->len < 128) {
		t->cap = t->cap ? t->cap * 2 : 1 << 20;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	va_start(ap, fmt);
	n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < t->cap - t->len);
	t->len += (size_t)n;
}

/* Line i of a blkparse trace: device 8,0, time i us. */
#define BP "8,0 0 %u %u.%09u 9 "
#define BP_ARGS(i) \
	(unsigned int)(i) + 1, (unsigned int)((i) / 1000000), (unsigned int)((i) % 1000000) * 1000

/*
 * Sectors chosen to share a slot under an unseeded sector-times-constant hash (multiples of
 * 2^44: every slot index of a 4096-slot table zero) stay spread: a few steps per line (it was
 * a probe over every earlier one: some 500 per line here).
 */
static void test_join_sectors_spread(void **state)
{
	const unsigned int n = 1000;
	struct btape_import_stats st;
	struct text t = {0};
	char err[512];

	(void)state;
	for (unsigned int i = 0; i < n; i++)
		line(&t, BP "Q W %llu + 8 [a]\n", BP_ARGS(i), (unsigned long long)i << 44);
	join_steps = 0;
	assert_int_equal(btape_import_validate_buf(BTAPE_FMT_BLKPARSE, t.p, t.len, "q", false, &st,
						   err, sizeof(err)),
			 0);
	printf("joiner steps per line: %.2f\n", (double)join_steps / (2.0 * n));
	assert_true(join_steps < 2ull * n * 16);
	assert_int_equal(st.unmatched, n);
	free(t.p);
}

/*
 * More requests in flight than the joiner keeps (bio-based devices: Q lines only): the work
 * per line stays constant (it was a sweep of every slot per line past 512 Ki in flight), the
 * oldest requests are given up and counted.
 */
static void test_join_many_in_flight(void **state)
{
	const unsigned int n = 600000, over = n - BTAPE_IMPORT_INFLIGHT_MAX;
	struct btape_import_stats st;
	struct text t = {0};
	char err[512];

	(void)state;
	for (unsigned int i = 0; i < n; i++)
		line(&t, BP "Q W %u + 8 [a]\n", BP_ARGS(i), i * 8);
	join_steps = 0;
	assert_int_equal(btape_import_validate_buf(BTAPE_FMT_BLKPARSE, t.p, t.len, "q", false, &st,
						   err, sizeof(err)),
			 0);
	/* two passes over the lines; a few slots or list entries per line each (a sweep of the
	 * whole table per line, as before, is some 10^5 per line on average) */
	printf("joiner steps per line: %.2f\n", (double)join_steps / (2.0 * n));
	assert_true(join_steps < 2ull * n * 64);
	assert_int_equal(st.events, 0); /* queued only: nothing issued to write */
	assert_int_equal(st.unmatched, n);
	assert_int_equal(st.evicted, over);

	/* issued requests given up for room are written (without completion): the oldest go */
	t.len = 0;
	for (unsigned int i = 0; i < n; i++)
		line(&t, BP "D R %u + 8 [a]\n", BP_ARGS(i), i * 8);
	line(&t, BP "C R 0 + 8 [0]\n", BP_ARGS(n)); /* evicted already: unmatched */
	line(&t, BP "C R %u + 8 [0]\n", BP_ARGS(n + 1), (n - 1) * 8); /* still in flight */
	join_steps = 0;
	assert_int_equal(btape_import_validate_buf(BTAPE_FMT_BLKPARSE, t.p, t.len, "d", false, &st,
						   err, sizeof(err)),
			 0);
	assert_true(join_steps < 2ull * n * 64);
	assert_int_equal(st.events, n);
	assert_int_equal(st.evicted, over);
	assert_int_equal(st.unmatched, over + 1 + (BTAPE_IMPORT_INFLIGHT_MAX - 1));
	free(t.p);
}

/* A request idle for more than 30 s of trace time is given up then, not at some later sweep. */
static void test_join_expiry(void **state)
{
	const char *t = "8,0 0 1 0.000000000 9 D R 0 + 8 [a]\n"
			"8,0 0 2 31.000000000 9 D R 8 + 8 [a]\n"
			"8,0 0 3 31.100000000 0 C R 0 + 8 [0]\n"
			"8,0 0 4 31.200000000 0 C R 8 + 8 [0]\n";
	struct btape_import_stats st;
	char err[512];

	(void)state;
	assert_int_equal(validate(BTAPE_FMT_BLKPARSE, t, false, &st, err), 0);
	assert_int_equal(st.events, 2);	   /* the first without completion */
	assert_int_equal(st.unmatched, 2); /* it, and its late completion */
	assert_int_equal(st.evicted, 0);
}

/*
 * Many requests in flight at random keys, completed in random order, some never: every
 * completed one is written once, every other one is written at the end (the age list stays
 * consistent through the table's backward-shift deletions, re-keys and growth).
 */
static void test_join_random(void **state)
{
	enum { N = 200000, WINDOW = 3000, KEYS = 1 << 14 };
	static uint32_t live[WINDOW];
	static uint8_t busy[KEYS];
	uint64_t seed = 12345;
	unsigned int nlive = 0, ended = 0, never = 0, time = 0;
	struct btape_import_stats st;
	struct text t = {0};
	char err[512];

	(void)state;
	for (unsigned int i = 0; i < N; i++) {
		uint32_t k;

		do {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			k = (uint32_t)(seed >> 33) % KEYS;
		} while (busy[k]);
		busy[k] = 1;
		line(&t, BP "Q W %u + 8 [a]\n", BP_ARGS(time), k * 8);
		time++;
		line(&t, BP "D W %u + 8 [a]\n", BP_ARGS(time), k * 8);
		time++;
		if (seed % 7 == 0) { /* a partial completion: the entry moves past 4 sectors */
			line(&t, BP "C W %u + 4 [0]\n", BP_ARGS(time), k * 8);
			time++;
			line(&t, BP "C W %u + 4 [0]\n", BP_ARGS(time), k * 8 + 4);
			time++;
			busy[k] = 0;
			ended++;
			continue;
		}
		live[nlive++] = k;
		if (nlive == WINDOW) { /* end a random one; one in 50 never completes */
			unsigned int j = (unsigned int)(seed >> 17) % nlive;

			if (seed % 50)
				line(&t, BP "C W %u + 8 [0]\n", BP_ARGS(time), live[j] * 8);
			else
				never++;
			time++;
			if (seed % 50)
				busy[live[j]] = 0, ended++;
			live[j] = live[--nlive];
		}
	}
	assert_int_equal(validate_len(t.p, t.len, &st, err), 0);
	assert_int_equal(st.events, N);
	assert_int_equal(st.unmatched, nlive + never);
	assert_int_equal(st.evicted, 0);
	(void)ended;
	free(t.p);
}

static void test_gzip_source(void **state)
{
	const char *text = "1000 0 64 8 1\n2000 1 64 8 0\n";
	uint8_t gz[256];
	z_stream zs = {0};
	struct btape_import_stats st;
	char err[512];

	(void)state;
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)text;
	zs.avail_in = (uInt)strlen(text);
	zs.next_out = gz;
	zs.avail_out = sizeof(gz);
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(btape_import_validate_buf(BTAPE_FMT_MQSIM, gz, zs.total_out, "t.gz", false,
						   &st, err, sizeof(err)),
			 0);
	assert_int_equal(st.events, 2);
	assert_int_equal(st.devices, 2);
	/* cut short: an error, not a silent partial import */
	assert_int_equal(btape_import_validate_buf(BTAPE_FMT_MQSIM, gz, zs.total_out - 6, "t.gz",
						   false, &st, err, sizeof(err)),
			 -EINVAL);
	deflateEnd(&zs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_rwbs),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_errors_and_skips),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_join_sectors_spread),
		cmocka_unit_test(test_join_many_in_flight),
		cmocka_unit_test(test_join_expiry),
		cmocka_unit_test(test_join_random),
		cmocka_unit_test(test_gzip_source),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
