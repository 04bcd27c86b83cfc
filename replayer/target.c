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

/* ---- block devices that share sectors ---- */

/* Is absolute path p /dev or below it, but /dev/shm (files), as a name, unresolved? */
static bool under_dev(const char *p)
{
	return strcmp(p, "/dev") == 0 ||
	       (strncmp(p, "/dev/", 5) == 0 && strcmp(p, "/dev/shm") != 0 &&
		strncmp(p, "/dev/shm/", 9) != 0);
}

static void blk_name(dev_t dev, char *name, size_t len)
{
	char p[64], r[PATH_MAX];

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	if (realpath(p, r))
		snprintf(name, len, "/dev/%s", strrchr(r, '/') + 1);
	else
		snprintf(name, len, "block device %u:%u", major(dev), minor(dev));
}

/*
 * open() of block device dev (-1 and errno): its /dev node when that is dev, else a node made
 * for the moment in a private directory in /dev and removed at once. A container's /dev lacks
 * the nodes of devices made after it started, and a check that cannot open a device must not
 * pass it by.
 */
static int blk_open(dev_t dev, int flags)
{
	char name[PATH_MAX], dir[] = "/dev/.biotape-XXXXXX", node[sizeof(dir) + 8];
	struct stat sb;
	int fd, err;

	blk_name(dev, name, sizeof(name));
	/* the node, when it is dev's: a stale one (a container's /dev) is not opened at all, as
	 * an exclusive open of it would claim another device for a moment */
	if (name[0] == '/' && stat(name, &sb) == 0 && S_ISBLK(sb.st_mode) && sb.st_rdev == dev) {
		fd = open(name, flags);
		if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISBLK(sb.st_mode) && sb.st_rdev == dev)
			return fd;
		if (fd < 0 && errno != ENOENT)
			return -1;
		if (fd >= 0)
			close(fd); /* replaced since the stat */
	}
	if (!mkdtemp(dir))
		return -1;
	snprintf(node, sizeof(node), "%s/b", dir);
	fd = mknod(node, S_IFBLK | 0600, dev) == 0 ? open(node, flags) : -1;
	err = errno;
	unlink(node);
	rmdir(dir);
	errno = err;
	return fd;
}

/*
 * open() with O_EXCL of path, or (path NULL) of block device dev, retried for up to
 * EXCL_RETRY_MS while it fails with EBUSY: a claim can outlive its process for a moment
 * (io_uring releases its registered files from a workqueue after the ring's owner exits: a
 * replay right after a replay would fail).
 */
#define EXCL_RETRY_MS 1500
static int open_excl(const char *path, dev_t dev, int flags)
{
	struct timespec ts = {0, 50 * 1000000L};
	int fd;

	for (int ms = 0;; ms += 50) {
		fd = path ? open(path, flags | O_EXCL) : blk_open(dev, flags | O_EXCL);
		if (fd >= 0 || errno != EBUSY || ms >= EXCL_RETRY_MS)
			return fd;
		nanosleep(&ts, NULL);
	}
}

/* Reads "N" or "MAJ:MIN" from DIR/NAME into v[0] (and v[1]); the count read, 0 on failure. */
static int sysfs_read(const char *dir, const char *name, unsigned long long v[2])
{
	char path[2 * PATH_MAX], buf[64];
	FILE *fp;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	if (fgets(buf, sizeof(buf), fp))
		n = sscanf(buf, "%llu:%llu", &v[0], &v[1]);
	fclose(fp);
	return n > 0 ? n : 0;
}

/* Where a block device lies: its disk, and the 512-byte sectors [start, end) on it. */
struct blk_extent {
	dev_t disk;
	uint64_t start, end;	   /* a whole disk: 0, UINT64_MAX */
	unsigned long long partno; /* 0: a whole disk */
};

/*
 * The real end of e, a DOS extended partition: the kernel sizes one at 1 KiB (so that nobody
 * makes a filesystem on it), but its first sector is the table of the logical partitions that
 * lie inside it: the end in the disk's partition table. Unknown (the disk cannot be read): the
 * disk's end. Only for a partition of at most one 4 KiB sector (the kernel's size of one).
 */
static void extended_end(struct blk_extent *e)
{
	blkid_partlist ls;
	blkid_partition par;
	blkid_probe pr;
	int fd;

	if (!e->partno || e->end - e->start > 8)
		return;
	e->end = UINT64_MAX;
	fd = blk_open(e->disk, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	pr = blkid_new_probe();
	if (pr && blkid_probe_set_device(pr, fd, 0, 0) == 0) {
		blkid_probe_enable_partitions(pr, 1);
		ls = blkid_probe_get_partitions(pr);
		par = ls ? blkid_partlist_get_partition_by_partno(ls, (int)e->partno) : NULL;
		/* an extended partition's whole size (or a partition that small, truly) */
		if (par && (uint64_t)blkid_partition_get_start(par) == e->start)
			e->end = e->start + (uint64_t)blkid_partition_get_size(par);
	}
	blkid_free_probe(pr);
	close(fd);
}

/* dev's extent from sysfs, a DOS extended partition's still at its 1 KiB: 0 or -errno. */
static int blk_extent(dev_t dev, struct blk_extent *e)
{
	char path[64], dir[PATH_MAX], *slash;
	unsigned long long partno[2], start[2], size[2], disk[2];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	if (!realpath(path, dir))
		return -errno;
	e->disk = dev;
	e->start = 0;
	e->end = UINT64_MAX;
	e->partno = 0;
	if (!sysfs_read(dir, "partition", partno))
		return 0; /* a whole disk */
	if (!sysfs_read(dir, "start", start) || !sysfs_read(dir, "size", size))
		return -EIO;
	slash = strrchr(dir, '/');
	*slash = '\0'; /* a partition's sysfs directory sits inside its disk's */
	if (sysfs_read(dir, "dev", disk) != 2)
		return -EIO;
	e->disk = makedev(disk[0], disk[1]);
	e->start = start[0];
	e->end = start[0] + size[0];
	e->partno = partno[0] ? partno[0] : 1;
	return 0;
}

/*
 * Does a write to block device a reach data on block device b? The same device, or two on one
 * disk whose sectors intersect: a disk and any of its partitions, a DOS extended partition and
 * its logical ones, overlapping partitions. Only the written side's extended partition counts
 * to its real end: its first sector holds the logical partitions' table, but what a logical
 * partition's writes reach of it is the kernel's 1 KiB, nothing (so that replays onto two
 * logical partitions do not refuse each other). Unknown (sysfs unreadable): they meet.
 */
static bool blk_overlap(dev_t a, dev_t b)
{
	struct blk_extent ea, eb;

	if (a == b)
		return true;
	if (blk_extent(a, &ea) < 0 || blk_extent(b, &eb) < 0)
		return true;
	if (ea.disk != eb.disk)
		return false;
	extended_end(&ea); /* only now: it reads the disk's partition table */
	return ea.start < eb.end && eb.start < ea.end;
}

/* " (as /dev/sda5, which shares sectors with it)" when other is not dev itself; else "". */
static void as_other(dev_t dev, dev_t other, char *buf, size_t len)
{
	char name[PATH_MAX];

	buf[0] = '\0';
	if (other == dev)
		return;
	blk_name(other, name, sizeof(name));
	snprintf(buf, len, " (as %s, which shares sectors with it)", name);
}

/*
 * The block devices on dev's disk that share sectors with dev (dev included): the disk and
 * its partitions. *n of them in *out (malloc'd); 0 or -errno.
 */
static int blk_sharing(dev_t dev, dev_t **out, size_t *n)
{
	struct blk_extent e;
	char dir[PATH_MAX], p[64], sub[PATH_MAX + NAME_MAX + 2];
	struct dirent *de;
	dev_t *v;
	size_t cap = 8;
	int err;
	DIR *d;

	*n = 0;
	*out = v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[(*n)++] = dev;
	/* what cannot be read cannot be cleared (no /sys in a chroot or container) */
	if ((err = blk_extent(dev, &e)) < 0)
		return err;
	extended_end(&e);
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(e.disk), minor(e.disk));
	if (!realpath(p, dir) || !(d = opendir(dir)))
		return -errno;
	if (e.disk != dev)
		v[(*n)++] = e.disk; /* a disk overlaps every partition of it */
	while ((de = readdir(d))) {
		unsigned long long mm[2], partno[2], start[2], size[2];
		dev_t c;

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (!sysfs_read(sub, "partition", partno) || sysfs_read(sub, "dev", mm) != 2)
			continue;
		c = makedev(mm[0], mm[1]);
		if (c == dev)
			continue;
		/* dev's writes against c's data: only dev's extent is its real one (unreadable:
		 * taken to share) */
		if (sysfs_read(sub, "start", start) && sysfs_read(sub, "size", size) &&
		    (start[0] + size[0] <= e.start || e.end <= start[0]))
			continue;
		if (*n == cap) {
			dev_t *nv = realloc(v, 2 * cap * sizeof(*v));

			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			*out = v = nv;
			cap *= 2;
		}
		v[(*n)++] = c;
	}
	closedir(d);
	return 0;
}

/* Is a device in v[0..n) mounted? 1 (with "mounted on M ..." in what), 0, -errno. */
static int sharing_mounted(const dev_t *v, size_t n, char *what, size_t len)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, as[PATH_MAX + 64];
	size_t cap = 0;
	int found = 0;

	if (!fp)
		return -errno;
	while (!found && getline(&line, &cap, fp) > 0) {
		unsigned int ma, mi;
		char mnt[PATH_MAX];

		/* "36 35 98:0 /mnt1 /mnt2 rw,..." : field 3 is maj:min, field 5 the mount point */
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, mnt) != 3 || !ma)
			continue;
		for (size_t i = 0; i < n && !found; i++) {
			if (v[i] != makedev(ma, mi))
				continue;
			as_other(v[0], v[i], as, sizeof(as));
			snprintf(what, len, "mounted on %s%s", mnt, as);
			found = 1;
		}
	}
	fclose(fp);
	if (!found && (fp = fopen("/proc/swaps", "re"))) {
		while (!found && getline(&line, &cap, fp) > 0) {
			char path[PATH_MAX];
			struct stat sb;

			if (sscanf(line, "%4095s", path) != 1 || path[0] != '/' ||
			    stat(path, &sb) < 0 || !S_ISBLK(sb.st_mode))
				continue;
			for (size_t i = 0; i < n && !found; i++) {
				if (v[i] != sb.st_rdev)
					continue;
				as_other(v[0], v[i], as, sizeof(as));
				snprintf(what, len, "in use as swap (%s)%s", path, as);
				found = 1;
			}
		}
		fclose(fp);
	}
	free(line);
	return found;
}

/* Has a device in v[0..n) holders (device-mapper, md...)? 1 ("in use by dm-0 ..."), 0. */
static int sharing_held(const dev_t *v, size_t n, char *what, size_t len)
{
	char path[PATH_MAX], as[PATH_MAX + 64];

	for (size_t i = 0; i < n; i++) {
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", major(v[i]),
			 minor(v[i]));
		if (!(d = opendir(path)))
			continue;
		while ((de = readdir(d)) && de->d_name[0] == '.')
			;
		if (de) {
			as_other(v[0], v[i], as, sizeof(as));
			snprintf(what, len, "in use by %s%s", de->d_name, as);
		}
		closedir(d);
		if (de)
			return 1;
	}
	return 0;
}

/* Keeps fd, an exclusive open of dev, in t until rp_target_close: 0 or -ENOMEM. */
static int claim_keep(struct rp_target *t, dev_t dev, int fd)
{
	struct rp_claim *nc = realloc(t->claims, (t->nclaims + 1) * sizeof(*nc));

	if (!nc) {
		close(fd);
		return -ENOMEM;
	}
	t->claims = nc;
	t->claims[t->nclaims++] = (struct rp_claim){.fd = fd, .dev = dev};
	return 0;
}

static bool claimed_by(const struct rp_target *t, dev_t dev)
{
	if (t->is_blkdev && dev == makedev(t->dev_major, t->dev_minor))
		return true; /* the target's own open is exclusive */
	for (unsigned int i = 0; i < t->nclaims; i++)
		if (t->claims[i].dev == dev)
			return true;
	return false;
}

/*
 * Is a device in v[0..n) claimed exclusively (a mount in another mount namespace, a running
 * mkfs)? 1 ("in use ..."), 0, -errno. Those that are not get claimed here, held in t to its
 * close: a probe that let go would let a mount in while the replay writes. A whole disk other
 * than v[0] is not asked: it reads as claimed whenever any partition of it is. When v[0] is a
 * whole disk, its partitions are asked first and let go: v[0]'s own claim (this one, or the
 * target's open) keeps them from being claimed, and would make theirs fail. An exclusive open
 * that fails otherwise (no permission, no node) refuses: it is a check that cannot be made.
 */
static int sharing_claimed(const dev_t *v, size_t n, char *what, size_t len, struct rp_target *t)
{
	char node[PATH_MAX];
	struct blk_extent e;
	bool disk0 = blk_extent(v[0], &e) == 0 && e.disk == v[0];

	for (size_t k = 0; k < n; k++) {
		size_t i = disk0 ? (k + 1) % n : k; /* a disk's partitions before the disk */
		int fd;

		if ((i && blk_extent(v[i], &e) == 0 && e.disk == v[i]) || claimed_by(t, v[i]))
			continue;
		fd = open_excl(NULL, v[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			if (disk0 && i)
				close(fd);
			else if (claim_keep(t, v[i], fd) < 0)
				return -ENOMEM;
			continue;
		}
		int err = errno;

		if (err == ENXIO || err == ENODEV)
			continue; /* gone meanwhile */
		blk_name(v[i], node, sizeof(node));
		if (err == EBUSY && i)
			snprintf(what, len,
				 "in use (an exclusive open of %s, which shares sectors with it, "
				 "fails)",
				 node);
		else if (err == EBUSY)
			snprintf(what, len, "in use (an exclusive open fails)");
		else
			snprintf(what, len, "perhaps in use (an exclusive open of %s fails: %s)",
				 node, strerror(err));
		return 1;
	}
	return 0;
}

/*
 * 1 when a write to block device dev reaches data in use, with what it is in what ("mounted
 * on /mnt", "in use by dm-0", ...): dev or a device sharing sectors with it (blk_overlap)
 * mounted, a swap, held (device-mapper, md...) or claimed exclusively; 0 when none is, the
 * devices then claimed in t (sharing_claimed). Also 1 when that cannot be told.
 */
static int blk_in_use(dev_t dev, char *what, size_t len, struct rp_target *t)
{
	dev_t *v;
	size_t n;
	int rc = blk_sharing(dev, &v, &n);

	if (rc == 0)
		rc = sharing_mounted(v, n, what, len);
	if (rc == 0)
		rc = sharing_held(v, n, what, len);
	if (rc == 0)
		rc = sharing_claimed(v, n, what, len, t);
	free(v);
	if (rc < 0) /* unknown counts as in use */
		snprintf(what, len, "perhaps in use (cannot tell what shares its sectors: %s)",
			 strerror(-rc));
	return rc != 0;
}

/* ---- loop devices: what a write to a target reaches through them ---- */

/* A block device (dev) or a file (dev: its st_dev, ino) that a write to the target changes. */
struct chain_obj {
	bool blk;
	dev_t dev;
	ino_t ino;
	int via;   /* the member it was reached from (-1: the target) */
	bool back; /* it is the backing of members[via] (else a loop device over it) */
	char name[PATH_MAX];
};

struct loop_ent {
	dev_t self;
	struct chain_obj back;	 /* its backing file or device */
	char name[NAME_MAX + 8]; /* "/dev/loopN" */
};

static bool obj_match(const struct chain_obj *a, const struct chain_obj *b)
{
	if (a->blk != b->blk)
		return false;
	return a->blk ? blk_overlap(a->dev, b->dev) : a->dev == b->dev && a->ino == b->ino;
}

/*
 * The backing of loop device NAME (bound: 0; unbound or unknown: -errno). The device's own
 * answer (LOOP_GET_STATUS64: its file's device and inode) decides: the name in sysfs is only
 * for messages, since it may now lead to another file (a mount over its directory, a loop set
 * up in another mount namespace). Asked through a node made for the moment when /dev has none
 * (blk_open); when none can be made either, the name is all there is. -ENODEV: unknown.
 */
static int loop_backing(const char *name, dev_t self, struct chain_obj *b)
{
	char path[PATH_MAX + 64];
	struct loop_info64 li;
	struct stat sb;
	FILE *fp;
	int fd, ok = 0;

	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	fp = fopen(path, "re");
	if (!fp)
		return -ENOENT; /* not bound */
	if (fgets(b->name, sizeof(b->name), fp)) {
		b->name[strcspn(b->name, "\n")] = '\0';
		ok = b->name[0] != '\0';
	}
	fclose(fp);
	if (!ok)
		return -ENOENT;
	fd = blk_open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		ok = ioctl(fd, LOOP_GET_STATUS64, &li) == 0;
		close(fd);
		if (ok) {
			b->blk = li.lo_rdevice != 0;
			b->dev = (dev_t)(b->blk ? li.lo_rdevice : li.lo_device);
			b->ino = (ino_t)li.lo_inode;
			return 0;
		}
	}
	if (stat(b->name, &sb) == 0 && (S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode))) {
		b->blk = S_ISBLK(sb.st_mode);
		b->dev = b->blk ? sb.st_rdev : sb.st_dev;
		b->ino = sb.st_ino;
		return 0;
	}
	return -ENODEV;
}

/*
 * Every bound loop device in the system, with its backing. A loop device whose backing cannot
 * be identified is not listed: its name goes to unknown (the first one; else ""), and
 * *unknown_blk says whether one may be over a block device (a backing named in /dev).
 */
static int list_loops(struct loop_ent **out, size_t *n, char *unknown, size_t ulen,
		      bool *unknown_blk)
{
	struct loop_ent *v = NULL, *nv;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = opendir("/sys/block");

	*out = NULL;
	*n = 0;
	unknown[0] = '\0';
	*unknown_blk = false;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char dir[PATH_MAX];
		unsigned long long mm[2];

		if (strncmp(de->d_name, "loop", 4) != 0)
			continue;
		snprintf(dir, sizeof(dir), "/sys/block/%s", de->d_name);
		if (sysfs_read(dir, "dev", mm) != 2)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				closedir(d);
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		memset(&v[*n], 0, sizeof(v[*n]));
		v[*n].self = makedev(mm[0], mm[1]);
		snprintf(v[*n].name, sizeof(v[*n].name), "/dev/%s", de->d_name);
		switch (loop_backing(de->d_name, v[*n].self, &v[*n].back)) {
		case 0:
			(*n)++;
			break;
		case -ENODEV:
			if (!unknown[0])
				snprintf(unknown, ulen, "%s (over %s)", v[*n].name,
					 v[*n].back.name);
			*unknown_blk |= under_dev(v[*n].back.name);
			break;
		}
	}
	closedir(d);
	*out = v;
	return 0;
}

/*
 * 0 when nobody else has the file at path open (a write lease can be taken on it: a loop
 * device holds its backing open), else -errno (EAGAIN: somebody has).
 */
static int open_elsewhere(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;

	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETLEASE, F_WRLCK) < 0)
		err = -errno;
	else
		fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
	return err;
}

/* "/dev/loop7 (the backing device of the target)", "... (a loop device over /dev/shm/f)" */
static void describe(const struct chain_obj *m, int i, char *buf, size_t len)
{
	const struct chain_obj *v = &m[m[i].via];

	if (m[i].back)
		snprintf(buf, len, "%s (the backing %s of %s)", m[i].name,
			 m[i].blk ? "device" : "file", m[i].via ? v->name : "the target");
	else
		snprintf(buf, len, "%s (a loop device over %s)", m[i].name,
			 m[i].via ? v->name : "the target");
}

/*
 * 1 when a write to the target (sb, path) would reach data that is in use, through loop
 * devices, with the reason in why; 0 otherwise; -errno. The set of what the write changes:
 * the target; the backing file or device of every loop device in the set; every loop device
 * whose backing is in the set (a second mapping of a backing file, a loop over the target);
 * to a fixed point. A file target is refused when any loop device maps it (whatever that
 * device's state: its users cannot all be seen); any block device of the set that is mounted
 * (it or a partition), a swap, held (dm, md...) or claimed exclusively refuses the write.
 */
static int chain_in_use(const struct stat *sb, const char *path, char *why, size_t whylen,
			struct rp_target *t)
{
	struct loop_ent *loops = NULL;
	struct chain_obj *m = NULL;
	size_t nloops = 0, n = 1, cap = 16;
	char what[3 * PATH_MAX], desc[2 * PATH_MAX + 64];
	bool changed = true, unknown_blk;
	int err, found = 0;

	err = list_loops(&loops, &nloops, what, sizeof(what), &unknown_blk);
	if (err < 0 && (err != -ENOENT || S_ISBLK(sb->st_mode)))
		return err; /* what loop devices there are cannot be seen */
	/*
	 * A loop device whose backing is unknown may be over the target. Over a regular file, it
	 * reaches a block target only through a mounted filesystem, whose mount or claim the
	 * checks below see. A file target is asked whether anybody else has it open (a loop
	 * device holds its backing open; so does a replay of another rank on this host), also
	 * when no loop device can be listed (no /sys/block).
	 */
	if (err == -ENOENT)
		snprintf(desc, sizeof(desc), "cannot list the loop devices (no /sys/block)");
	else if (what[0])
		snprintf(desc, sizeof(desc), "cannot tell what loop device %.*s is over", PATH_MAX,
			 what);
	else
		desc[0] = '\0';
	if (desc[0] && S_ISBLK(sb->st_mode) && unknown_blk) {
		snprintf(why, whylen,
			 "refusing to write: %s (its node cannot be opened or made, and that name "
			 "leads nowhere)",
			 desc);
		free(loops);
		return 1;
	}
	if (desc[0] && !S_ISBLK(sb->st_mode) && (err = open_elsewhere(path)) != 0) {
		if (err == -EAGAIN)
			snprintf(why, whylen,
				 "refusing to write: %s, and the target is open elsewhere", desc);
		else
			snprintf(why, whylen,
				 "refusing to write: %s, and whether the target is open elsewhere "
				 "cannot be asked (%s)",
				 desc, strerror(-err));
		free(loops);
		return 1;
	}
	err = 0;
	m = calloc(cap, sizeof(*m));
	if (!m) {
		free(loops);
		return -ENOMEM;
	}
	m[0].blk = S_ISBLK(sb->st_mode);
	m[0].dev = m[0].blk ? sb->st_rdev : sb->st_dev;
	m[0].ino = sb->st_ino;
	m[0].via = -1;
	snprintf(m[0].name, sizeof(m[0].name), "%s", path);
	while (changed) {
		changed = false;
		for (size_t l = 0; l < nloops; l++) {
			struct chain_obj self = {.blk = true, .dev = loops[l].self};
			int in_self = -1, in_back = -1;
			struct chain_obj add;

			for (size_t i = 0; i < n; i++) {
				if (in_self < 0 && obj_match(&m[i], &self))
					in_self = (int)i;
				if (in_back < 0 && obj_match(&m[i], &loops[l].back))
					in_back = (int)i;
			}
			if ((in_self >= 0) == (in_back >= 0))
				continue;
			if (in_self >= 0) {
				add = loops[l].back;
				add.via = in_self;
				add.back = true;
			} else {
				add = self;
				snprintf(add.name, sizeof(add.name), "%s", loops[l].name);
				add.via = in_back;
				add.back = false;
			}
			if (n == cap) {
				struct chain_obj *nm = realloc(m, 2 * cap * sizeof(*m));

				if (!nm) {
					err = -ENOMEM;
					goto cleanup;
				}
				m = nm;
				cap *= 2;
			}
			m[n++] = add;
			changed = true;
		}
	}
	if (!m[0].blk && n > 1) {
		/* m[1] is a loop device over the target: the first step from a file */
		snprintf(why, whylen,
			 "refusing to write: it is the backing file of %s (write to that device "
			 "instead, or detach it)",
			 m[1].name);
		found = 1;
		goto cleanup;
	}
	for (size_t i = 1; i < n && !found; i++) {
		if (!m[i].blk)
			continue;
		if (m[i].name[0] != '/')
			blk_name(m[i].dev, m[i].name, sizeof(m[i].name));
		if (blk_in_use(m[i].dev, what, sizeof(what), t)) {
			describe(m, (int)i, desc, sizeof(desc));
			snprintf(why, whylen, "refusing to write: %s is %s", desc, what);
			found = 1;
		}
	}
cleanup:
	free(m);
	free(loops);
	return err < 0 ? err : found;
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
	for (unsigned int i = 0; i < t->nclaims; i++)
		close(t->claims[i].fd);
	free(t->claims);
	t->claims = NULL;
	t->nclaims = 0;
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

void rp_target_discard(struct rp_target *t)
{
	struct stat sb;

	if (!t)
		return;
	rp_target_close(t);
	if (t->created && t->path && lstat(t->path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_dev == t->created_dev && sb.st_ino == t->created_ino)
		unlink(t->path);
	t->created = false;
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
	if (under_dev(real))
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

static int target_open(struct rp_target *t, const char *path, const struct rp_target_opts *o,
		       char *why, size_t whylen)
{
	struct stat sb;
	int flags, err, fd = -1;
	char what[3 * PATH_MAX];
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
	if (created) {
		t->created_dev = sb.st_dev;
		t->created_ino = sb.st_ino;
	}
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

	/* --force never overrides these: data in use, directly or through loop devices */
	if (o->write && t->is_blkdev && blk_in_use(sb.st_rdev, what, sizeof(what), t)) {
		snprintf(why, whylen, "refusing to write: the device is %s", what);
		return -EBUSY;
	}
	if (o->write) {
		err = chain_in_use(&sb, path, why, whylen, t);
		if (err > 0)
			return -EBUSY;
		if (err < 0) {
			snprintf(why, whylen, "refusing to write: cannot list the loop devices: %s",
				 strerror(-err));
			return err;
		}
	}
	flags = (o->write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	if (!o->buffered)
		flags |= O_DIRECT;
	/*
	 * O_EXCL for a written block device: fails with EBUSY when mounted or claimed by anyone.
	 * O_NOATIME: no access-time check and update on every read (blkdev_read_iter and
	 * filemap_read do one per I/O). Refused (EPERM) unless we own the file or have
	 * CAP_FOWNER: then without it.
	 */
	if (o->write && t->is_blkdev) {
		fd = open_excl(path, 0, flags | O_NOATIME);
		if (fd < 0 && errno == EPERM)
			fd = open_excl(path, 0, flags);
	} else {
		fd = open(path, flags | O_NOATIME);
		if (fd < 0 && errno == EPERM)
			fd = open(path, flags);
	}
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
	/*
	 * The checks above went by the path; the fd is what gets written. A path re-pointed
	 * between them (a symlink swapped, a file renamed over) would send the writes to something
	 * never checked: a mounted disk. The same object, or nothing.
	 */
	struct stat fsb;

	if (fstat(fd, &fsb) < 0 || (fsb.st_mode & S_IFMT) != (sb.st_mode & S_IFMT) ||
	    fsb.st_dev != sb.st_dev || fsb.st_ino != sb.st_ino ||
	    (t->is_blkdev && fsb.st_rdev != sb.st_rdev)) {
		snprintf(why, whylen,
			 "refusing it: the path changed between its checks and its open");
		rp_target_close(t);
		return -ESTALE;
	}
	/* the signature probe reads through this fd's object (/proc/self/fd), not the path */
	if (o->write && !o->force && !created && (t->is_blkdev || sb.st_size > 0)) {
		char self[64];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		err = rp_probe_signature(self, what, sizeof(what));
		if (err > 0) {
			snprintf(
				why, whylen,
				"refusing to write: it holds %s %s signature (--force to overwrite)",
				strchr("aeiouAEIOU", what[0]) ? "an" : "a", what);
			rp_target_close(t);
			return -EEXIST;
		}
		if (err < 0 && t->is_blkdev) {
			snprintf(why, whylen,
				 "refusing to write: cannot probe it for signatures: %s",
				 strerror(-err));
			rp_target_close(t);
			return err;
		}
	}
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

int rp_target_open(struct rp_target *t, const char *path, const struct rp_target_opts *o, char *why,
		   size_t whylen)
{
	int err = target_open(t, path, o, why, whylen);

	if (err < 0)
		rp_target_close(t); /* the claims it took */
	return err;
}
