/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Opening replay targets, with the safety rules for writes (docs/SAFETY.md): data in use is
 * always refused (a mounted, swap, held or claimed block device, or one sharing sectors with
 * it: its disk, its partitions, the logical partitions inside an extended one; or one reached
 * through loop devices: a loop's backing device, a second loop over the same file; a file that
 * backs a loop device); a target holding a filesystem or partition signature is refused unless forced. A
 * missing target is created (a file) only when asked, and never in /dev.
 */
#ifndef RP_TARGET_H
#define RP_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

struct rp_target_opts {
	bool write;	      /* the replay will write (or discard) */
	bool force;	      /* accept a target with a filesystem/partition signature (only) */
	bool buffered;	      /* no O_DIRECT */
	uint64_t create_size; /* --create: size of a file target made when missing (0: refuse) */
};

/*
 * Opens path into *t (creating a missing file when o->create_size, outside /dev: t->created).
 * Returns 0, or -errno with a one-line reason in why: -ENOENT missing, -EBUSY in use (here or
 * through loop devices), -EEXIST signature found, others from the system.
 */
int rp_target_open(struct rp_target *t, const char *path, const struct rp_target_opts *o, char *why,
		   size_t whylen);
void rp_target_close(struct rp_target *t); /* NULL-safe, idempotent */
/*
 * Closes t and, when this run made it (--create), removes the file, if path still names that
 * file: for a run refused before its first I/O, which must leave nothing behind.
 */
void rp_target_discard(struct rp_target *t);

/* 1 and the signature name ("ext4", "dos") when libblkid finds one at path; 0 none; -errno. */
int rp_probe_signature(const char *path, char *type, size_t len);

#endif
