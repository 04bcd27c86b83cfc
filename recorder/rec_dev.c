// SPDX-License-Identifier: GPL-2.0-only
/* Block device lookup in sysfs (SYSFS is "/sys" except in tests). */
#include "rec_dev.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Reads a one-line sysfs attribute into buf (trailing whitespace stripped). */
static int read_attr(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp)
		return -errno;
	n = fread(buf, 1, len - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

static int read_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;
	int err = read_attr(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

static int parse_majmin(const char *s, uint32_t *major, uint32_t *minor)
{
	unsigned int ma, mi;
	char tail;

	if (sscanf(s, "%u:%u%c", &ma, &mi, &tail) != 2)
		return -EINVAL;
	*major = ma;
	*minor = mi;
	return 0;
}

/* major:minor of any block device (disk or partition) -> its whole disk. */
static int to_disk(const char *sysfs, uint32_t *major, uint32_t *minor)
{
	char path[PATH_MAX + 64], real[PATH_MAX], buf[64];
	char *slash;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs, *major, *minor);
	if (!realpath(path, real))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) != 0)
		return 0; /* already a whole disk */
	slash = strrchr(real, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/dev", real);
	if (read_attr(path, buf, sizeof(buf)))
		return -ENOENT;
	return parse_majmin(buf, major, minor) ? -ENOENT : 0;
}

int rec_dev_resolve(const char *sysfs, const char *arg, uint32_t *major, uint32_t *minor)
{
	char path[PATH_MAX], buf[64];
	struct stat st;

	if (!arg || !*arg)
		return -EINVAL;
	if (arg[0] == '/') {
		if (stat(arg, &st) != 0)
			return -ENOENT;
		if (!S_ISBLK(st.st_mode))
			return -ENOTBLK;
		*major = major(st.st_rdev);
		*minor = minor(st.st_rdev);
	} else if (isdigit((unsigned char)arg[0]) && strchr(arg, ':')) {
		if (parse_majmin(arg, major, minor))
			return -EINVAL;
	} else {
		if (strchr(arg, '/') || strcmp(arg, ".") == 0 || strcmp(arg, "..") == 0)
			return -EINVAL;
		snprintf(path, sizeof(path), "%s/class/block/%s/dev", sysfs, arg);
		if (read_attr(path, buf, sizeof(buf)))
			return -ENOENT;
		if (parse_majmin(buf, major, minor))
			return -ENOENT;
	}
	return to_disk(sysfs, major, minor);
}

int rec_dev_describe(const char *sysfs, uint32_t major, uint32_t minor, struct btape_device *dev)
{
	char path[PATH_MAX + 64], real[PATH_MAX], buf[BTAPE_NAME_MAX];
	const char *name;
	uint64_t v;

	memset(dev, 0, sizeof(*dev));
	dev->dev_t_major = major;
	dev->dev_t_minor = minor;
	dev->rotational = -1;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs, major, minor);
	if (!realpath(path, real))
		return -ENOENT;
	name = strrchr(real, '/');
	snprintf(dev->name, sizeof(dev->name), "%.*s", (int)sizeof(dev->name) - 1,
		 name ? name + 1 : real);
	snprintf(path, sizeof(path), "%s/size", real);
	if (read_u64(path, &v) == 0)
		dev->size_bytes = v * 512;
	snprintf(path, sizeof(path), "%s/queue/logical_block_size", real);
	if (read_u64(path, &v) == 0)
		dev->logical_block = (uint32_t)v;
	snprintf(path, sizeof(path), "%s/queue/physical_block_size", real);
	if (read_u64(path, &v) == 0)
		dev->physical_block = (uint32_t)v;
	snprintf(path, sizeof(path), "%s/queue/rotational", real);
	if (read_u64(path, &v) == 0)
		dev->rotational = v ? 1 : 0;
	snprintf(path, sizeof(path), "%s/device/model", real);
	if (read_attr(path, buf, sizeof(buf)) == 0)
		snprintf(dev->model, sizeof(dev->model), "%s", buf);
	return 0;
}

uint64_t rec_dev_max_requests(const char *sysfs, uint32_t major, uint32_t minor)
{
	char path[PATH_MAX + 64];
	uint32_t queues, depth;
	uint64_t nr = 0;

	if (rec_dev_tag_space(sysfs, major, minor, &queues, &depth) == 0)
		return (uint64_t)queues * depth * 2;
	/* not blk-mq (or sysfs without mq/): one queue of nr_requests */
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/queue/nr_requests", sysfs, major, minor);
	if (read_u64(path, &nr) || !nr)
		nr = 256;
	return nr * 2;
}

int rec_dev_tag_space(const char *sysfs, uint32_t major, uint32_t minor, uint32_t *queues,
		      uint32_t *depth)
{
	char path[PATH_MAX + 64];
	uint64_t nr = 0, max = 0, v, q;
	uint32_t n = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/queue/nr_requests", sysfs, major, minor);
	if (read_u64(path, &nr) == 0)
		max = nr;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/mq", sysfs, major, minor);
	d = opendir(path);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		char *end;

		if (de->d_name[0] == '.')
			continue;
		/* named by queue_num; a queue with no CPU mapped has no directory: count to the last */
		q = strtoull(de->d_name, &end, 10);
		if (*end || q >= UINT32_MAX)
			continue;
		if (q + 1 > n)
			n = (uint32_t)q + 1;
		snprintf(path, sizeof(path), "%s/dev/block/%u:%u/mq/%s/nr_tags", sysfs, major,
			 minor, de->d_name);
		if (read_u64(path, &v) == 0 && v > max)
			max = v;
	}
	closedir(d);
	if (!n || !max || max > UINT32_MAX)
		return -ENOENT;
	*queues = n;
	*depth = (uint32_t)max;
	return 0;
}

int rec_dev_inflight(const char *sysfs, uint32_t major, uint32_t minor, uint64_t *n)
{
	char path[PATH_MAX + 64];
	unsigned long long r, w;
	uint64_t stats;
	FILE *f;
	int got;

	/* with queue/iostats off the kernel counts nothing: "inflight" reads 0 */
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/queue/iostats", sysfs, major, minor);
	if (read_u64(path, &stats))
		return -ENOENT;
	if (stats != 1)
		return -ENODATA;
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/inflight", sysfs, major, minor);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	got = fscanf(f, "%llu %llu", &r, &w);
	fclose(f);
	if (got != 2)
		return -EINVAL;
	*n = r + w;
	return 0;
}

static int cmp_dev(const void *a, const void *b)
{
	const struct btape_device *x = a, *y = b;

	if (x->dev_t_major != y->dev_t_major)
		return x->dev_t_major < y->dev_t_major ? -1 : 1;
	return x->dev_t_minor < y->dev_t_minor ? -1 : x->dev_t_minor > y->dev_t_minor;
}

int rec_dev_add_all(const char *sysfs, struct btape_meta *meta)
{
	char path[PATH_MAX], buf[64];
	struct btape_device *list = NULL, *tmp;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "%s/block", sysfs);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint32_t ma, mi;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/block/%s/dev", sysfs, de->d_name);
		if (read_attr(path, buf, sizeof(buf)) || parse_majmin(buf, &ma, &mi))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			tmp = realloc(list, cap * sizeof(*list));
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			list = tmp;
		}
		if (rec_dev_describe(sysfs, ma, mi, &list[n]) == 0)
			n++;
	}
	qsort(list, n, sizeof(*list), cmp_dev);
	for (size_t i = 0; i < n; i++) {
		err = btape_meta_add_device(meta, &list[i]);
		if (err < 0)
			goto cleanup;
	}
	err = (int)n;
cleanup:
	closedir(d);
	free(list);
	return err;
}
