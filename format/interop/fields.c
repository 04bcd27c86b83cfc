// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Hand-rolled field splitting and number parsing for the text importers (no sscanf). */
#include "interop_internal.h"

int split_fields(const char *line, size_t len, char sep, struct field *f, int max)
{
	const char *p = line, *end = line + len;
	int n = 0;

	if (sep == ' ') {
		for (;;) {
			const char *s;

			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (p >= end)
				break;
			s = p;
			while (p < end && *p != ' ' && *p != '\t')
				p++;
			if (n == max)
				return max + 1; /* too many fields */
			f[n].p = s;
			f[n].n = (uint32_t)(p - s);
			n++;
		}
		return n;
	}
	/* CSV: one pass over the bytes, blanks around a field trimmed */
	for (;;) {
		const char *s, *e;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		s = p;
		while (p < end && *p != sep)
			p++;
		e = p;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (n == max)
			return max + 1;
		f[n].p = s;
		f[n].n = (uint32_t)(e - s);
		n++;
		if (p >= end)
			break;
		p++; /* the separator */
	}
	return n;
}

int field_u64(const struct field *f, uint64_t *v)
{
	uint64_t x = 0;

	if (f->n == 0 || f->n > 20)
		return -EINVAL;
	if (f->n < 20) { /* 19 digits cannot overflow */
		for (uint32_t i = 0; i < f->n; i++) {
			unsigned int d = (unsigned char)f->p[i] - '0';

			if (d > 9)
				return -EINVAL;
			x = x * 10 + d;
		}
		*v = x;
		return 0;
	}
	for (uint32_t i = 0; i < f->n; i++) {
		unsigned int d = (unsigned char)f->p[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

int field_i64(const struct field *f, int64_t *v)
{
	struct field g = *f;
	bool neg = false;
	uint64_t x;
	int err;

	if (g.n > 0 && (g.p[0] == '-' || g.p[0] == '+')) {
		neg = g.p[0] == '-';
		g.p++;
		g.n--;
	}
	err = field_u64(&g, &x);
	if (err)
		return err;
	if (x > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return -ERANGE;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

int field_dec_scaled(const struct field *f, unsigned int scale, uint64_t *v)
{
	uint64_t ip = 0, frac = 0, mul = 1;
	uint32_t i = 0, digits = 0;
	bool round_up = false;

	if (f->n == 0)
		return -EINVAL;
	for (; i < f->n && f->p[i] != '.'; i++) {
		unsigned int d = (unsigned char)f->p[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (ip > (UINT64_MAX - d) / 10)
			return -ERANGE;
		ip = ip * 10 + d;
		digits++;
	}
	if (i < f->n) { /* fraction */
		uint32_t fd = 0;

		i++;
		for (; i < f->n; i++, fd++) {
			unsigned int d = (unsigned char)f->p[i] - '0';

			if (d > 9)
				return -EINVAL;
			if (fd < scale)
				frac = frac * 10 + d;
			else if (fd == scale)
				round_up = d >= 5;
			digits++;
		}
		for (; fd < scale; fd++)
			frac *= 10;
	} else {
		for (unsigned int k = 0; k < scale; k++)
			frac *= 10; /* stays 0 */
	}
	if (digits == 0)
		return -EINVAL;
	for (unsigned int k = 0; k < scale; k++)
		mul *= 10;
	if (ip > (UINT64_MAX - frac - 1) / mul)
		return -ERANGE;
	*v = ip * mul + frac + (round_up ? 1 : 0);
	return 0;
}

bool field_eq(const struct field *f, const char *s)
{
	size_t n = strlen(s);

	return f->n == n && memcmp(f->p, s, n) == 0;
}

bool field_ieq(const struct field *f, const char *s)
{
	size_t n = strlen(s);

	return f->n == n && strncasecmp(f->p, s, n) == 0;
}

/*
 * blktrace class bits as blkparse names them (its fill_rwbs()): F when the flush bit is set,
 * then one letter, D discard, W write, R read with data, N none of these and no data. Both
 * blktrace importers go through here, so a request is classified alike in either form:
 * no data with the flush bit is a flush request (jbd2 and kworkers issue them as "FN", an
 * empty preflush bio queues as "FW"); with data the flush bit is a preflush.
 */
void blk_classify(bool flush, char letter, uint64_t bytes, uint8_t *op, uint32_t *flags)
{
	switch (letter) {
	case 'D':
		*op = BTAPE_OP_DISCARD;
		break;
	case 'W':
		*op = BTAPE_OP_WRITE;
		break;
	case 'R':
		*op = BTAPE_OP_READ;
		break;
	default:
		*op = BTAPE_OP_OTHER;
		break;
	}
	if (flush) {
		*flags |= BTAPE_FLAG_PREFLUSH;
		if (bytes == 0)
			*op = BTAPE_OP_FLUSH;
	}
}

/*
 * blkparse's rwbs: [F flush] D|W|R|N, then F fua, A readahead, S sync, M meta, and B
 * (barrier, blkparse before 2.6.36, read as the flush bit). The kernel's own tracepoint rwbs
 * is a different convention (its leading F is only a preflush, its op letters include F, DE,
 * WZ and Z?); of its letters, those blkparse never prints are accepted too, since biotape's
 * blkparse-style export uses them for ops blkparse cannot name: op F (flush), DE (secure
 * erase), WZ (write zeroes), ZA ZR ZF ZO ZC (zone ops), suffix U (atomic). Where the two
 * conventions read one string differently ("FN..."), blkparse's meaning is taken.
 */
int rwbs_parse(const char *s, size_t n, uint64_t bytes, uint8_t *op, uint32_t *flags)
{
	size_t i = 0;
	uint32_t fl = 0;
	bool flush = false, ext = false;
	char letter = 0;
	uint8_t o = BTAPE_OP_OTHER;

	if (n == 0)
		return -EINVAL;
	if (n >= 2 && s[0] == 'F' && strchr("WRDFNZ", s[1])) {
		flush = true;
		i = 1;
	}
	switch (s[i]) {
	case 'W':
		if (i + 1 < n && s[i + 1] == 'Z') {
			o = BTAPE_OP_WRITE_ZEROES;
			ext = true;
			i++;
		}
		letter = 'W';
		break;
	case 'D':
		if (i + 1 < n && s[i + 1] == 'E') {
			o = BTAPE_OP_SECURE_ERASE;
			ext = true;
			i++;
		}
		letter = 'D';
		break;
	case 'R':
	case 'N':
		letter = s[i];
		break;
	case 'F':
		o = BTAPE_OP_FLUSH;
		ext = true;
		break;
	case 'Z':
		if (i + 1 >= n)
			return -EINVAL;
		switch (s[i + 1]) {
		case 'A':
			o = BTAPE_OP_ZONE_APPEND;
			break;
		case 'R':
			o = BTAPE_OP_ZONE_RESET;
			break;
		case 'F':
			o = BTAPE_OP_ZONE_FINISH;
			break;
		case 'O':
			o = BTAPE_OP_ZONE_OPEN;
			break;
		case 'C':
			o = BTAPE_OP_ZONE_CLOSE;
			break;
		default:
			return -EINVAL;
		}
		ext = true;
		i++;
		break;
	default:
		/* "S" alone etc.: neither convention writes a suffix without an op letter */
		return -EINVAL;
	}
	for (i++; i < n; i++) {
		switch (s[i]) {
		case 'F':
			fl |= BTAPE_FLAG_FUA;
			break;
		case 'A':
			fl |= BTAPE_FLAG_READAHEAD;
			break;
		case 'S':
			fl |= BTAPE_FLAG_SYNC;
			break;
		case 'M':
			fl |= BTAPE_FLAG_META;
			break;
		case 'U':
			fl |= BTAPE_FLAG_ATOMIC;
			break;
		case 'B':
			flush = true;
			break;
		default:
			return -EINVAL;
		}
	}
	if (ext) {
		if (flush)
			fl |= BTAPE_FLAG_PREFLUSH;
	} else {
		blk_classify(flush, letter, bytes, &o, &fl);
	}
	*op = o;
	*flags = fl;
	return 0;
}
