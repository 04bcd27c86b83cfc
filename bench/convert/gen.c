// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark input generator: N records of a random-ish 4k..64k workload on 8 devices.
 *   gen alibaba N  > f.csv     Alibaba 2020 CSV lines
 *   gen vscsi2 N   > f.vscsi   vscsiStats v2 40-byte records
 *   gen blktrace N > f.0       blktrace records (N/3 requests: Q, D, C), one CPU
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* little-endian host */
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

int main(int argc, char **argv)
{
	uint64_t n, t = 1577808000000000ull;
	static char buf[1 << 16];

	if (argc != 3)
		return 2;
	n = strtoull(argv[2], NULL, 10);
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	if (!strcmp(argv[1], "alibaba")) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t r = next();

			t += r % 200;
			printf("%u,%c,%llu,%u,%llu\n", (unsigned)(r >> 8) % 8,
			       (r >> 20) % 3 ? 'R' : 'W',
			       (unsigned long long)((r >> 24) % (1u << 26)) * 4096,
			       4096u << ((r >> 50) % 5), (unsigned long long)t);
		}
		return 0;
	}
	if (!strcmp(argv[1], "vscsi2")) {
		uint8_t rec[40];

		t = 0;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t r = next();
			uint16_t cmd = (r >> 20) % 3 ? 0x28 : 0x2a, ver = 2 << 8;

			t += r % 200;
			memcpy(rec, &cmd, 2);
			memcpy(rec + 2, &ver, 2);
			put32(rec + 4, (uint32_t)i);
			put32(rec + 8, 4096u << ((r >> 50) % 5));
			put32(rec + 12, 1);
			put64(rec + 16, ((r >> 24) % (1u << 26)) * 8);
			put64(rec + 24, t);
			put64(rec + 32, 50 + (r >> 40) % 500);
			fwrite(rec, 1, sizeof(rec), stdout);
		}
		return 0;
	}
	if (!strcmp(argv[1], "blktrace")) {
		uint8_t rec[48];
		uint32_t seq = 0;

		t = 0;
		for (uint64_t i = 0; i < n / 3; i++) {
			uint64_t r = next(), sector = ((r >> 24) % (1u << 26)) * 8;
			uint32_t tc = (r >> 20) % 3 ? 1 : 2, bytes = 4096u << ((r >> 50) % 5);
			static const uint32_t act[3] = {1 | 1u << 20, 7 | 1u << 22, 8 | 1u << 23};
			static const uint64_t dt[3] = {0, 2000, 9000};

			t += 10000;
			for (int k = 0; k < 3; k++) {
				memset(rec, 0, sizeof(rec));
				put32(rec, 0x65617407);
				put32(rec + 4, seq++);
				put64(rec + 8, t + dt[k]);
				put64(rec + 16, sector);
				put32(rec + 24, bytes);
				put32(rec + 28, act[k] | tc << 16);
				put32(rec + 32, 100);
				put32(rec + 36, 8u << 20);
				fwrite(rec, 1, sizeof(rec), stdout);
			}
		}
		return 0;
	}
	return 2;
}
