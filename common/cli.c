// SPDX-License-Identifier: GPL-2.0-only
#include "cli.h"

#include "btape.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_verbose;
static char *err_keep;
static size_t err_keep_len;

void cli_err_keep(char *buf, size_t len)
{
	err_keep = buf;
	err_keep_len = len;
	if (buf && len)
		buf[0] = 0;
}

int cli_exit_status(int err)
{
	switch (-err) {
	case ENOENT:
	case EACCES:
	case EPERM:
	case EISDIR:
	case ENOTDIR:
	case EMFILE:
	case ENFILE:
	case ENXIO:
	case ENODEV:
	case EIO:
	case ENOMEM:
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
	case EROFS:
	case EINTR:
	case EBUSY:
		return BTAPE_EXIT_FAIL;
	default:
		return BTAPE_EXIT_USAGE;
	}
}

static bool text_byte_ok(unsigned char c);

/* A message as one line of text: every control byte (a newline too) of S as '?'. */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || !text_byte_ok((unsigned char)*s))
			*s = '?';
}

/* "biotape: <message>\n" on stderr, one line whatever the message holds: a name from a trace
 * (a device id, a comm) with control bytes (a newline, an ESC sequence) has them as '?'. */
static void err_line(const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("biotape: out of memory\n", stderr);
		return;
	}
	one_line(msg);
	fprintf(stderr, "biotape: %s\n", msg);
	free(msg);
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	if (err_keep) {
		if (!err_keep[0]) { /* the first failure is the cause; later ones follow from it */
			va_start(ap, fmt);
			vsnprintf(err_keep, err_keep_len, fmt, ap);
			va_end(ap);
			one_line(err_keep); /* rank 0 prints it, to stdout too */
		}
		return;
	}
	va_start(ap, fmt);
	err_line(fmt, ap);
	va_end(ap);
}

void cli_err_lines(const char *prefix, const char *text)
{
	for (const char *l = text, *nl; l && *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			nl = l + strlen(l) - 1;
		cli_err("%s%.*s", prefix, (int)(nl - l + (*nl != '\n')), l);
	}
}

void cli_info(int level, const char *fmt, ...)
{
	va_list ap;

	if (cli_verbose < level)
		return;
	va_start(ap, fmt);
	err_line(fmt, ap);
	va_end(ap);
}

int cli_parse_double(const char *s, double *v)
{
	char *end;
	double d;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || !isfinite(d))
		return -EINVAL;
	*v = d;
	return 0;
}

int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

/* Splits "1.5ms" into 1.5 and "ms"; the number must be finite and >= 0. */
static int split_number(const char *s, double *num, const char **unit)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*num = strtod(s, &end);
	if (errno || end == s || !isfinite(*num) || *num < 0)
		return -EINVAL;
	*unit = end;
	return 0;
}

int cli_parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {
		{ "", 1e9 },	 { "s", 1e9 },	   { "ms", 1e6 }, { "us", 1e3 },
		{ "ns", 1 },	 { "m", 60e9 },	   { "min", 60e9 }, { "h", 3600e9 },
	};
	const char *unit;
	double num;

	if (split_number(s, &num, &unit))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].unit) == 0) {
			double v = num * units[i].mult;

			if (v >= 18446744073709551615.0)
				return -ERANGE;
			*ns = (uint64_t)llround(v);
			return 0;
		}
	}
	return -EINVAL;
}

int cli_parse_size(const char *s, uint64_t *bytes)
{
	static const char *prefixes = "kmgtpe";
	const char *unit;
	double num, mult = 1;

	if (split_number(s, &num, &unit))
		return -EINVAL;
	if (*unit) {
		const char *p = strchr(prefixes, (char)(*unit | 0x20));

		if (!p || !*p)
			return -EINVAL;
		for (const char *q = prefixes; q <= p; q++)
			mult *= 1024;
		unit++;
		if (strcasecmp(unit, "") && strcasecmp(unit, "b") && strcasecmp(unit, "ib") &&
		    strcasecmp(unit, "iB"))
			return -EINVAL;
	}
	num *= mult;
	if (num >= 18446744073709551615.0)
		return -ERANGE;
	if (num != floor(num))
		return -EINVAL;
	*bytes = (uint64_t)num;
	return 0;
}

const char *cli_fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

const char *cli_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.*f %s", v < 10 ? 2 : 1, v, units[u]);
	return buf;
}

/*
 * Temporary outputs a fatal signal removes: a killed command leaves no PATH.tmp.XXXXXX. Slots
 * hold copies of the paths (the handler may run while the strings are freed); a slot is
 * published by its used flag only after its path is written. The handler is installed for
 * SIGINT, SIGTERM and SIGHUP where they have their default action (a command that handles them
 * itself, record or replay, or a shell that ignores them, keeps its own), once.
 */
#define TMP_SLOTS 8
static struct {
	volatile sig_atomic_t used;
	char path[PATH_MAX];
} tmp_slots[TMP_SLOTS];

static void tmp_on_signal(int sig)
{
	int saved = errno;

	for (int i = 0; i < TMP_SLOTS; i++)
		if (tmp_slots[i].used)
			unlink(tmp_slots[i].path);
	signal(sig, SIG_DFL);
	errno = saved;
	raise(sig);
}

static void tmp_handlers(void)
{
	static bool done;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

	if (done)
		return;
	done = true;
	for (unsigned int i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old, sa = {.sa_handler = tmp_on_signal};

		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO)) {
			sigemptyset(&sa.sa_mask);
			sigaction(sigs[i], &sa, NULL);
		}
	}
}

static void tmp_track(const char *path)
{
	if (strlen(path) >= PATH_MAX)
		return;
	tmp_handlers();
	for (int i = 0; i < TMP_SLOTS; i++) {
		if (!tmp_slots[i].used) {
			memcpy(tmp_slots[i].path, path, strlen(path) + 1);
			__atomic_store_n(&tmp_slots[i].used, 1, __ATOMIC_RELEASE);
			return;
		}
	}
}

static void tmp_untrack(const char *path)
{
	for (int i = 0; i < TMP_SLOTS; i++)
		if (tmp_slots[i].used && strcmp(tmp_slots[i].path, path) == 0)
			__atomic_store_n(&tmp_slots[i].used, 0, __ATOMIC_RELEASE);
}

/* The process's umask, read without changing it (umask(2) sets it: another thread creating a
 * file meanwhile would get the wrong mode); 022 where /proc does not say. */
static mode_t process_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned int m = 022;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	if (f)
		fclose(f);
	return (mode_t)(m & 0777);
}

int cli_out_open(struct cli_out *o, const char *path)
{
	int fd, err;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->fp = stdout;
		return 0;
	}
	err = btape_output_check(path, o->why, sizeof(o->why));
	if (err < 0)
		return err;
	if (err == 1) { /* the null device: written as it is, never renamed over */
		o->fp = fopen(path, "we");
		if (!o->fp) {
			err = -errno;
			snprintf(o->why, sizeof(o->why), "%s: %s", path, strerror(errno));
			return err;
		}
		o->sink = true;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		o->tmp = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	tmp_track(o->tmp);
	fchmod(fd, 0666 & ~process_umask()); /* as open(0666) would make it: mkstemp's is 0600 */
	o->fp = fdopen(fd, "w");
	if (!o->fp) {
		err = -errno;
		close(fd);
		unlink(o->tmp);
		tmp_untrack(o->tmp);
		goto cleanup;
	}
	return 0;
cleanup:
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	snprintf(o->why, sizeof(o->why), "cannot create %s: %s", path, strerror(-err));
	return err;
}

int cli_out_check(const char *cmd, const char *path)
{
	char why[600];

	if (!path || strcmp(path, "-") == 0 || btape_output_check(path, why, sizeof(why)) >= 0)
		return 0;
	cli_err("%s: %s", cmd, why);
	return BTAPE_EXIT_FAIL;
}

int cli_out_check_inputs(const char *cmd, const char *out, char *const *in, int n)
{
	struct stat so, si;

	if (!out || strcmp(out, "-") == 0 || stat(out, &so) != 0 || !S_ISREG(so.st_mode))
		return 0;
	for (int i = 0; i < n; i++) {
		if (!in[i] || stat(in[i], &si) != 0 || si.st_dev != so.st_dev ||
		    si.st_ino != so.st_ino)
			continue;
		if (strcmp(in[i], out) == 0)
			cli_err("%s: %s is both input and output", cmd, out);
		else
			cli_err("%s: %s is both input and output (the same file as %s)", cmd, out,
				in[i]);
		return BTAPE_EXIT_USAGE;
	}
	return 0;
}

/* Stats the directory of PATH (its text up to the last '/'; "." without one); *base: the rest. */
static int stat_dir_of(const char *path, struct stat *st, const char **base)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	if (!slash) {
		*base = path;
		return stat(".", st);
	}
	*base = slash + 1;
	if ((size_t)(slash - path) >= sizeof(dir))
		return -1;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return stat(slash == path ? "/" : dir, st);
}

char *cli_absolute_path(const char *path, const char **why)
{
	char *cwd, *p;

	if (path[0] == '/') {
		if (!(p = strdup(path)))
			*why = "out of memory";
		return p;
	}
	if (!(cwd = getcwd(NULL, 0))) {
		*why = errno == ENOMEM ? "out of memory" : "cannot tell its working directory";
		return NULL;
	}
	p = malloc(strlen(cwd) + strlen(path) + 2);
	if (p)
		sprintf(p, "%s/%s", cwd, path);
	else
		*why = "out of memory";
	free(cwd);
	return p;
}

int cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	const char *ba, *bb;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (stat_dir_of(a, &sa, &ba) != 0 || stat_dir_of(b, &sb, &bb) != 0)
		return strcmp(a, b) == 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(ba, bb) == 0;
}

int cli_out_commit(struct cli_out *o)
{
	int err = 0;

	if (!o->fp)
		return -EBADF;
	if (!o->path) { /* stdout, or the null device */
		if (fflush(o->fp) || ferror(o->fp))
			err = -EIO;
		if (o->sink && fclose(o->fp) && !err)
			err = -EIO;
		o->fp = NULL;
		if (err)
			snprintf(o->why, sizeof(o->why), "write error");
		return err;
	}
	if (fflush(o->fp) || ferror(o->fp) || fsync(fileno(o->fp)))
		err = errno ? -errno : -EIO;
	if (fclose(o->fp) && !err)
		err = errno ? -errno : -EIO;
	o->fp = NULL;
	if (err)
		snprintf(o->why, sizeof(o->why), "writing %s: %s", o->path, strerror(-err));
	/* the path may have changed since the open: never rename over a device node */
	if (!err) {
		err = btape_output_check(o->path, o->why, sizeof(o->why));
		if (err > 0) {
			snprintf(o->why, sizeof(o->why), "%s is the null device now: not replaced",
				 o->path);
			err = -EPERM;
		}
	}
	if (!err && rename(o->tmp, o->path)) {
		err = -errno;
		snprintf(o->why, sizeof(o->why), "rename %s to %s: %s", o->tmp, o->path,
			 strerror(errno));
	}
	if (err)
		unlink(o->tmp);
	tmp_untrack(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return err;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o)
		return;
	if (o->fp && (o->path || o->sink))
		fclose(o->fp);
	if (o->tmp) {
		unlink(o->tmp);
		tmp_untrack(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}

bool cli_is_help(const char *arg)
{
	return arg && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0);
}

void cli_json_strn(FILE *fp, const char *s, size_t n)
{
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + n;
	     p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", fp);
			break;
		case '\\':
			fputs("\\\\", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\t':
			fputs("\\t", fp);
			break;
		case '\r':
			fputs("\\r", fp);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(fp, "\\u%04x", *p);
			else
				fputc(*p, fp);
		}
	}
	fputc('"', fp);
}

void cli_json_str(FILE *fp, const char *s)
{
	if (!s)
		fputs("null", fp);
	else
		cli_json_strn(fp, s, strlen(s));
}

/* Bytes a person's text may hold as they are (newline only in a stream, not in a name). */
static bool text_byte_ok(unsigned char c)
{
	return (c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t';
}

const char *cli_text_safe(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	while (s[i] && s[i] != '\n' && text_byte_ok((unsigned char)s[i]))
		i++;
	if (!s[i])
		return s;
	if (!len)
		return "";
	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = s[i] != '\n' && text_byte_ok((unsigned char)s[i]) ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

/* cli_text_stream(): a fopencookie stream that copies to its FILE, control bytes as '?'. */
static ssize_t text_write(void *cookie, const char *buf, size_t len)
{
	FILE *out = cookie;
	size_t done = 0;

	while (done < len) {
		size_t run = done;

		while (run < len && text_byte_ok((unsigned char)buf[run]))
			run++;
		/* an error is a short count (0: none written), never negative (fopencookie(3)) */
		if (run > done && fwrite(buf + done, 1, run - done, out) != run - done)
			return (ssize_t)done;
		done = run;
		if (done < len) {
			if (fputc('?', out) == EOF)
				return (ssize_t)done;
			done++;
		}
	}
	return (ssize_t)len;
}

static int text_close(void *cookie)
{
	return fflush((FILE *)cookie) ? EOF : 0;
}

FILE *cli_text_stream(FILE *out)
{
	cookie_io_functions_t io = {.write = text_write, .close = text_close};

	return fopencookie(out, "w", io);
}
