// SPDX-License-Identifier: GPL-2.0-only
#include "target.h"

#include <blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* Is sysfs device a (maj:min) the same as, or a partition of, device b? */
static bool same_or_partition_of(unsigned int ma, unsigned int mi, uint32_t mb, uint32_t nb)
{
	char pa[64], pb[64], ra[PATH_MAX], rb[PATH_MAX], *slash;

	if (ma == mb && mi == nb)
		return true;
	snprintf(pa, sizeof(pa), "/sys/dev/block/%u:%u", ma, mi);
	snprintf(pb, sizeof(pb), "/sys/dev/block/%u:%u", mb, nb);
	if (!realpath(pa, ra) || !realpath(pb, rb))
		return false;
	slash = strrchr(ra, '/');
	if (!slash)
		return false;
	*slash = '\0'; /* a partition's sysfs directory sits inside its disk's */
	return strcmp(ra, rb) == 0;
}

int rp_blkdev_mounted(uint32_t major, uint32_t minor, char *where, size_t len)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (!fp)
		return -errno;
	while (getline(&line, &cap, fp) > 0) {
		unsigned int ma, mi;
		char mnt[PATH_MAX];

		/* "36 35 98:0 /mnt1 /mnt2 rw,..." : field 3 is maj:min, field 5 the mount point */
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, mnt) != 3)
			continue;
		if (ma && same_or_partition_of(ma, mi, major, minor)) {
			snprintf(where, len, "mounted on %s", mnt);
			found = 1;
			break;
		}
	}
	fclose(fp);
	if (!found && (fp = fopen("/proc/swaps", "re"))) {
		while (getline(&line, &cap, fp) > 0) {
			char path[PATH_MAX];
			struct stat sb;

			if (sscanf(line, "%4095s", path) != 1 || path[0] != '/')
				continue;
			if (stat(path, &sb) == 0 && S_ISBLK(sb.st_mode) &&
			    same_or_partition_of(major(sb.st_rdev), minor(sb.st_rdev), major,
						 minor)) {
				snprintf(where, len, "in use as swap (%s)", path);
				found = 1;
				break;
			}
		}
		fclose(fp);
	}
	free(line);
	return found;
}

static int dir_first_entry(const char *path, char *name, size_t len)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int found = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(name, len, "%s", de->d_name);
		found = 1;
		break;
	}
	closedir(d);
	return found;
}

int rp_blkdev_held(uint32_t major, uint32_t minor, char *holder, size_t len)
{
	char path[PATH_MAX], sub[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;
	int found;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", major, minor);
	found = dir_first_entry(path, holder, len);
	if (found)
		return found;
	/* a partition of this disk held by device-mapper, md, ... */
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major, minor);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		struct stat sb;

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s/partition", path, de->d_name);
		if (stat(sub, &sb) < 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s/holders", path, de->d_name);
		found = dir_first_entry(sub, holder, len);
	}
	closedir(d);
	return found;
}

int rp_probe_signature(const char *path, char *type, size_t len)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *val = NULL;
	int rc, found = 0;

	if (!pr)
		return errno ? -errno : -EIO;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &val, NULL) == 0 ||
		    blkid_probe_lookup_value(pr, "PTTYPE", &val, NULL) == 0)
			snprintf(type, len, "%s", val);
		else
			snprintf(type, len, "unknown");
		found = 1;
	} else if (rc == -2) {
		snprintf(type, len, "several (ambivalent probe)");
		found = 1;
	}
	blkid_free_probe(pr);
	return found;
}

void rp_target_close(struct rp_target *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

static uint32_t file_dio_align(int fd)
{
#ifdef STATX_DIOALIGN
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align)
		return sx.stx_dio_offset_align;
#endif
	return 4096;
}

/* Is DIR (a directory) /dev or below it (but /dev/shm), or on a devtmpfs? */
static bool in_dev(const char *dir)
{
	char real[PATH_MAX], *line = NULL;
	struct stat sb;
	size_t cap = 0;
	bool dev = false;
	FILE *fp;

	if (!realpath(dir, real))
		return false; /* the creation fails on its own then */
	if (strcmp(real, "/dev") == 0 ||
	    (strncmp(real, "/dev/", 5) == 0 && strcmp(real, "/dev/shm") != 0 &&
	     strncmp(real, "/dev/shm/", 9) != 0))
		return true;
	if (stat(real, &sb) < 0 || !(fp = fopen("/proc/self/mountinfo", "re")))
		return false;
	/* "36 35 0:5 / /dev rw,nosuid shared:2 - devtmpfs udev rw,...": maj:min, then the type */
	while (!dev && getline(&line, &cap, fp) > 0) {
		unsigned int ma, mi;
		char type[64];
		const char *sep = strstr(line, " - ");

		if (sscanf(line, "%*u %*u %u:%u", &ma, &mi) == 2 && sep &&
		    sscanf(sep + 3, "%63s", type) == 1 && makedev(ma, mi) == sb.st_dev &&
		    strcmp(type, "devtmpfs") == 0)
			dev = true;
	}
	free(line);
	fclose(fp);
	return dev;
}

/* Creates the missing file target path of size bytes: 0, or -errno with the reason in why. */
static int create_file(const char *path, uint64_t size, char *why, size_t whylen)
{
	char *copy = strdup(path);
	bool dev;
	int fd, err;

	if (!copy)
		return -ENOMEM;
	dev = in_dev(dirname(copy));
	free(copy);
	if (dev) {
		snprintf(why, whylen,
			 "does not exist: no such device (--create never makes files in /dev)");
		return -ENOENT;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot create it: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return err;
	}
	close(fd);
	return 0;
}

int rp_target_open(struct rp_target *t, const char *path, const struct rp_target_opts *o, char *why,
		   size_t whylen)
{
	struct stat sb;
	int flags, err, fd = -1;
	char what[PATH_MAX];
	bool created = false;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->path = path;
	if (stat(path, &sb) < 0) {
		if (errno != ENOENT) {
			err = -errno;
			snprintf(why, whylen, "%s", strerror(errno));
			return err;
		}
		/* a mistyped device name must not become a file: create only when asked */
		if (!o->create_size) {
			char *copy = strdup(path);
			bool dev = copy && in_dev(dirname(copy));

			free(copy);
			snprintf(why, whylen, "%s",
				 dev ? "does not exist: no such device"
				     : "does not exist (a file target is made only with --create "
				       "SIZE or --create auto)");
			return -ENOENT;
		}
		err = create_file(path, o->create_size, why, whylen);
		if (err < 0)
			return err;
		created = true;
		if (stat(path, &sb) < 0) {
			err = -errno;
			snprintf(why, whylen, "%s", strerror(errno));
			return err;
		}
	}
	t->created = created;
	if (!S_ISBLK(sb.st_mode) && !S_ISREG(sb.st_mode)) {
		snprintf(why, whylen, "not a block device or a regular file");
		return -EINVAL;
	}
	t->is_blkdev = S_ISBLK(sb.st_mode);
	if (t->is_blkdev) {
		t->dev_major = major(sb.st_rdev);
		t->dev_minor = minor(sb.st_rdev);
	} else {
		t->dev_major = major(sb.st_dev);
		t->dev_minor = minor(sb.st_dev);
	}

	if (o->write && t->is_blkdev) {
		if (rp_blkdev_mounted(t->dev_major, t->dev_minor, what, sizeof(what)) > 0) {
			snprintf(why, whylen, "refusing to write: the device is %s", what);
			return -EBUSY;
		}
		if (rp_blkdev_held(t->dev_major, t->dev_minor, what, sizeof(what)) > 0) {
			snprintf(why, whylen, "refusing to write: the device is in use by %s",
				 what);
			return -EBUSY;
		}
	}
	if (o->write && !o->force && !created && (t->is_blkdev || sb.st_size > 0)) {
		err = rp_probe_signature(path, what, sizeof(what));
		if (err > 0) {
			snprintf(
				why, whylen,
				"refusing to write: it holds a %s signature (--force to overwrite)",
				what);
			return -EEXIST;
		}
		if (err < 0 && t->is_blkdev) {
			snprintf(why, whylen,
				 "refusing to write: cannot probe it for signatures: %s",
				 strerror(-err));
			return err;
		}
	}

	flags = (o->write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	if (!o->buffered)
		flags |= O_DIRECT;
	if (o->write && t->is_blkdev)
		flags |= O_EXCL; /* fails with EBUSY when mounted or claimed by anyone */
	/*
	 * O_NOATIME: no access-time check and update on every read (blkdev_read_iter and
	 * filemap_read do one per I/O). Refused (EPERM) unless we own the file or have
	 * CAP_FOWNER: then without it.
	 */
	fd = open(path, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, flags);
	if (fd < 0) {
		err = -errno;
		if (errno == EINVAL && !o->buffered)
			snprintf(why, whylen, "cannot open it with O_DIRECT (try --buffered)");
		else if (errno == EBUSY)
			snprintf(why, whylen, "refusing to write: the device is in use (O_EXCL)");
		else
			snprintf(why, whylen, "%s", strerror(errno));
		return err;
	}
	t->fd = fd;
	if (t->is_blkdev) {
		int lbs = 0;

		if (ioctl(fd, BLKGETSIZE64, &t->size) < 0 || ioctl(fd, BLKSSZGET, &lbs) < 0) {
			err = -errno;
			snprintf(why, whylen, "cannot read its size: %s", strerror(errno));
			rp_target_close(t);
			return err;
		}
		t->lbs = lbs > 0 ? (uint32_t)lbs : 512;
	} else {
		t->size = (uint64_t)sb.st_size;
		t->lbs = o->buffered ? 512 : file_dio_align(fd);
	}
	return 0;
}
