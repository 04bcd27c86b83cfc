/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device setup of a replay: the trace's recorded devices resolved onto targets (--target,
 * or --map SRC=DST by index or name), the bytes each target must hold, the targets opened
 * (target.h's safety rules, --create), and the --fit error check that names the first I/O that
 * does not fit. Nothing here prints: a failure returns -errno with one line in why, as
 * target.h does; the command prints it. The steps run in order: __map, __scan, __open,
 * __check_fit; __free after any of them.
 */
#ifndef RP_DEVMAP_H
#define RP_DEVMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "scheduler.h"

struct btape_meta;

#define RP_MAX_MAPS 64 /* --map arguments, and so distinct targets */
/* A why buffer this big holds any message here whole (paths up to PATH_MAX, device names). */
#define RP_DEVMAP_WHY_MAX 8192

/* One --map SRC=DST: SRC a recorded device's index (decimal or 0x hex) or name. */
struct rp_map_arg {
	const char *src;
	const char *dst;
};

/*
 * Splits "SRC=DST" in place (arg is modified; the strings point into it) and appends it to
 * maps (RP_MAX_MAPS entries). 0, or -EINVAL: no SRC or no DST, or the table is full.
 */
int rp_map_arg_add(struct rp_map_arg *maps, unsigned int *nmaps, char *arg, char *why,
		   size_t whylen);

struct rp_devices_opts {
	const char *trace;  /* read for extents and the --fit check; never a target */
	/* the traces the ranks on this host read, and the other ranks' results (cluster): never
	 * a target */
	char *const *others;
	unsigned int nothers;
	const char *out;    /* the result trace (-o), or NULL; never a target */
	const char *html;   /* the HTML report (--html), or NULL; never a target */
	const char *target; /* --target: the one device of the trace; or NULL and maps */
	const struct rp_map_arg *maps;
	unsigned int nmaps;
	unsigned int max_scale; /* the most copies any run replays at once (>= 1) */
	enum rp_layout layout;	/* shard: a target holds max_scale copies of its devices */
	bool write;		/* the replay will write: the targets' write safety rules */
	bool force;		/* accept a filesystem/partition signature */
	bool buffered;		/* no O_DIRECT */
	uint64_t create_size;	/* --create SIZE: size of a missing file target (0: none) */
	bool create_auto;	/* --create auto: a missing target gets its needed bytes */
};

/* The result, read by the scheduler's configuration (devs, targets) and the report (tpaths). */
struct rp_devices {
	const struct rp_devices_opts *o;       /* as given to __map: must outlive this */
	const struct btape_meta *meta;	       /* the trace's, or NULL */
	uint32_t ndev;			       /* recorded devices (1 when the trace lists none) */
	struct rp_devmap *devs;		       /* ndev entries; target RP_NO_TARGET: unmapped */
	const char *tpaths[RP_MAX_MAPS];       /* distinct target paths, by first recorded device */
	struct rp_target targets[RP_MAX_MAPS]; /* opened by __open (fd -1 until then) */
	unsigned int ntargets;
};

/* "2 (loop3)", or "2" when the trace does not name device i. */
const char *rp_dev_label(const struct btape_meta *m, uint32_t i, char *buf, size_t len);

/*
 * Resolves o->target or o->maps against the trace's devices (meta may be NULL: one device)
 * into *s (overwritten). No I/O. 0, or -EINVAL (--target with several devices, an unknown or
 * twice-mapped device), -ENOMEM. A device no mapping names keeps target RP_NO_TARGET.
 */
int rp_devices__map(struct rp_devices *s, const struct btape_meta *meta,
		    const struct rp_devices_opts *o, char *why, size_t whylen);
/*
 * When a mapped device's size is unknown (0), reads o->trace for every device's largest
 * extent end (max_end); otherwise does nothing. 0, or -errno with the reader's message.
 */
int rp_devices__scan(struct rp_devices *s, char *why, size_t whylen);
/*
 * Bytes target t must hold: the largest span (rp_devmap_span) of the devices mapped onto it,
 * times max_scale under the shard layout (UINT64_MAX when that overflows); 0 when unknown.
 * What --create auto makes.
 */
uint64_t rp_devices__need_bytes(const struct rp_devices *s, unsigned int t);
/*
 * Opens every target (why: "target PATH: <reason>"). --create auto makes a missing file of its
 * needed bytes rounded up to 1 MiB. 0, or -EINVAL (the trace or the result file, a size of 0,
 * or what rp_target_open refuses as such), -ENOENT (missing, or --create auto without a size),
 * -EFBIG (--create auto past the largest file size), other -errno from rp_target_open.
 */
int rp_devices__open(struct rp_devices *s, char *why, size_t whylen);
/*
 * Under --fit error (cfg->fit), reads o->trace for the first I/O that cfg (over these devices
 * and targets, at the largest scale) cannot place, and names it in why: -ERANGE. Reads nothing
 * when every mapped device's span fits its region. 0, or -errno from the reader.
 */
int rp_devices__check_fit(const struct rp_devices *s, const struct rp_sched_cfg *cfg, char *why,
			  size_t whylen);
void rp_devices__free(struct rp_devices *s); /* closes the targets; NULL-safe, idempotent */
/* Before __free when the run is refused before its first I/O: removes the files --create made. */
void rp_devices__discard_created(struct rp_devices *s);

#endif
