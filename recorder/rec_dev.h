/* SPDX-License-Identifier: GPL-2.0-only */
/* Block devices from sysfs: resolving -d arguments and filling the trace's device table. */
#ifndef BIOTAPE_REC_DEV_H
#define BIOTAPE_REC_DEV_H

#include <stdint.h>

#include "btape.h"

/*
 * Resolves "/dev/loop3", "loop3", "nvme0n1p2" or "7:3" to the whole disk it belongs to
 * (partitions map to their disk). Returns 0 and the disk's major/minor, -ENOENT when there is
 * no such block device, -EINVAL when the argument is malformed.
 */
int rec_dev_resolve(const char *sysfs, const char *arg, uint32_t *major, uint32_t *minor);
/* Fills DEV from sysfs for disk major:minor (name, size, block sizes, rotational, model). */
int rec_dev_describe(const char *sysfs, uint32_t major, uint32_t minor, struct btape_device *dev);
/* Appends every whole disk in SYSFS/block to META. Returns the number added or -errno. */
int rec_dev_add_all(const char *sysfs, struct btape_meta *meta);
/*
 * Upper bound on the distinct request structures of disk major:minor: twice its tag space
 * (rec_dev_tag_space: driver and scheduler tags), or of nr_requests without blk-mq. Sizes the
 * recorder's in-flight hash map.
 */
uint64_t rec_dev_max_requests(const char *sysfs, uint32_t major, uint32_t minor);
/*
 * Tag space of blk-mq disk major:minor: its hardware queues (the highest mq/N + 1) and the
 * deepest tag range of a queue (driver tags, mq/N/nr_tags, or scheduler tags,
 * queue/nr_requests). Returns 0, or -ENOENT when the disk is not blk-mq (no mq/ directory).
 */
int rec_dev_tag_space(const char *sysfs, uint32_t major, uint32_t minor, uint32_t *queues,
		      uint32_t *depth);
/*
 * Requests of disk major:minor the kernel has in flight (sysfs "inflight": reads + writes).
 * Returns 0, or -errno when the kernel does not say (-ENODATA: queue/iostats is off, so it
 * keeps no count).
 */
int rec_dev_inflight(const char *sysfs, uint32_t major, uint32_t minor, uint64_t *n);
/* Kernel-internal dev_t as BPF sees it (MKDEV: major << 20 | minor). */
static inline uint32_t rec_kdev(uint32_t major, uint32_t minor)
{
	return (major << 20) | (minor & 0xfffff);
}

#endif
