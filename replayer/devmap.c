// SPDX-License-Identifier: GPL-2.0-only
/* The replay's device setup: recorded devices onto targets, their sizes, the --fit check. */
#include "devmap.h"

#include "btape.h"
#include "cli.h" /* cli_parse_u64, cli_same_file: nothing here prints */
#include "target.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rp_map_arg_add(struct rp_map_arg *maps, unsigned int *nmaps, char *arg, char *why,
		   size_t whylen)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		snprintf(why, whylen, "--map '%s': expected SRC=DST", arg);
		return -EINVAL;
	}
	if (*nmaps >= RP_MAX_MAPS) {
		snprintf(why, whylen, "--map: at most %d mappings", RP_MAX_MAPS);
		return -EINVAL;
	}
	*eq = '\0';
	maps[*nmaps].src = arg;
	maps[(*nmaps)++].dst = eq + 1;
	return 0;
}

const char *rp_dev_label(const struct btape_meta *m, uint32_t i, char *buf, size_t len)
{
	if (m && i < m->ndevices && m->devices[i].name[0])
		snprintf(buf, len, "%u (%s)", i, m->devices[i].name);
	else
		snprintf(buf, len, "%u", i);
	return buf;
}

/* The first recorded device called name other than device skip, or -1. */
static long device_called(const struct btape_meta *m, const char *name, uint64_t skip)
{
	for (uint32_t d = 0; m && d < m->ndevices; d++)
		if (d != skip && strcmp(m->devices[d].name, name) == 0)
			return d;
	return -1;
}

int rp_devices__map(struct rp_devices *s, const struct btape_meta *meta,
		    const struct rp_devices_opts *o, char *why, size_t whylen)
{
	const struct btape_meta *m = meta;
	const char **dev_dst = NULL; /* per recorded device: target path or NULL */
	int err;

	memset(s, 0, sizeof(*s));
	for (unsigned int t = 0; t < RP_MAX_MAPS; t++)
		s->targets[t].fd = -1;
	s->o = o;
	s->meta = meta;
	s->ndev = m && m->ndevices ? m->ndevices : 1;
	s->devs = calloc(s->ndev, sizeof(*s->devs));
	dev_dst = calloc(s->ndev, sizeof(*dev_dst));
	if (!s->devs || !dev_dst) {
		snprintf(why, whylen, "out of memory");
		err = -ENOMEM;
		goto cleanup;
	}
	if (o->target) {
		if (s->ndev > 1) {
			snprintf(why, whylen,
				 "the trace holds %u devices: map each with --map SRC=DST",
				 s->ndev);
			err = -EINVAL;
			goto cleanup;
		}
		dev_dst[0] = o->target;
	}
	for (unsigned int i = 0; i < o->nmaps; i++) {
		const char *src = o->maps[i].src;
		bool hash = src[0] == '#'; /* #N: the index, whatever the names */
		uint64_t idx = UINT64_MAX;
		bool number = cli_parse_u64(src + hash, &idx) == 0;
		/* an imported trace may name its devices by number: "1" may be another device's
		 * name than index 1's, and a guess sends writes to the wrong target */
		long called = hash ? -1 : device_called(m, src, number ? idx : UINT64_MAX);
		long found;

		if (hash && !number) {
			snprintf(why, whylen, "--map %s=...: #N takes a device index", src);
			err = -EINVAL;
			goto cleanup;
		}
		if (number && (hash || idx < s->ndev || called < 0)) {
			if (idx >= s->ndev) {
				snprintf(why, whylen, "--map %s=...: the trace has devices 0 to %u",
					 src, s->ndev - 1);
				err = -EINVAL;
				goto cleanup;
			}
			if (called >= 0) {
				snprintf(why, whylen,
					 "--map %s=...: ambiguous: the index of one device and the "
					 "name of device #%ld: give the index, #%" PRIu64 " or #%ld",
					 src, called, idx, called);
				err = -EINVAL;
				goto cleanup;
			}
			found = (long)idx;
		} else if ((found = called) < 0) {
			snprintf(why, whylen, "--map %s=...: no recorded device is called '%s'", src,
				 src);
			err = -EINVAL;
			goto cleanup;
		}
		if (dev_dst[found]) {
			snprintf(why, whylen, "--map: device %s is mapped twice", o->maps[i].src);
			err = -EINVAL;
			goto cleanup;
		}
		dev_dst[found] = o->maps[i].dst;
	}
	for (uint32_t d = 0; d < s->ndev; d++) {
		s->devs[d].target = RP_NO_TARGET;
		s->devs[d].src_size = m && d < m->ndevices ? m->devices[d].size_bytes : 0;
		if (!dev_dst[d])
			continue;
		for (unsigned int t = 0; t < s->ntargets; t++) {
			if (strcmp(s->tpaths[t], dev_dst[d]) == 0)
				s->devs[d].target = t;
		}
		if (s->devs[d].target == RP_NO_TARGET) {
			s->devs[d].target = s->ntargets;
			s->tpaths[s->ntargets++] = dev_dst[d];
		}
	}
	err = 0;
cleanup:
	free(dev_dst);
	return err;
}

/* Largest extent end per device: needed when the trace does not give device sizes. */
static int scan_extents(struct rp_devices *s, char *why, size_t whylen)
{
	struct btape_reader *r = NULL;
	const struct btape_event *evs;
	int n, err;

	err = btape_reader__open(&r, s->o->trace, why, whylen);
	if (err < 0)
		return err;
	while ((n = btape_reader__next_batch(r, &evs)) > 0) {
		for (int i = 0; i < n; i++) {
			uint64_t end;

			if (__builtin_add_overflow(rp_sector_offset(evs[i].sector), evs[i].bytes,
						   &end))
				end = UINT64_MAX;

			if (evs[i].dev < s->ndev && end > s->devs[evs[i].dev].max_end)
				s->devs[evs[i].dev].max_end = end;
		}
	}
	if (n < 0)
		snprintf(why, whylen, "%s", btape_reader__errmsg(r));
	btape_reader__close(r);
	return n < 0 ? n : 0;
}

int rp_devices__scan(struct rp_devices *s, char *why, size_t whylen)
{
	for (uint32_t d = 0; d < s->ndev; d++) {
		if (s->devs[d].target != RP_NO_TARGET && !s->devs[d].src_size)
			return scan_extents(s, why, whylen);
	}
	return 0;
}

uint64_t rp_devices__need_bytes(const struct rp_devices *s, unsigned int t)
{
	uint64_t want = 0;

	for (uint32_t d = 0; d < s->ndev; d++) {
		uint64_t b = rp_devmap_span(&s->devs[d]);

		if (s->devs[d].target == t && b > want)
			want = b;
	}
	/* a created file holds every copy of a sharded scale; more than 2^64 reads as 2^64 - 1 */
	if (s->o->layout == RP_LAYOUT_SHARD &&
	    __builtin_mul_overflow(want, (uint64_t)s->o->max_scale, &want))
		want = UINT64_MAX;
	return want;
}

/* Target t is the trace, an output, or a trace another rank on this host reads or writes. */
static bool names_an_input_or_output(const struct rp_devices *s, unsigned int t)
{
	const struct rp_devices_opts *o = s->o;
	const char *p = s->tpaths[t];

	if (cli_same_file(p, o->trace) || (o->out && cli_same_file(p, o->out)) ||
	    (o->html && cli_same_file(p, o->html)))
		return true;
	for (unsigned int i = 0; i < o->nothers; i++)
		if (cli_same_file(p, o->others[i]))
			return true;
	return false;
}

int rp_devices__open(struct rp_devices *s, char *why, size_t whylen)
{
	const struct rp_devices_opts *o = s->o;
	struct rp_target_opts to = {.write = o->write, .force = o->force, .buffered = o->buffered};
	char reason[512];
	int err;

	for (unsigned int t = 0; t < s->ntargets; t++) {
		uint64_t want = rp_devices__need_bytes(s, t);

		if (names_an_input_or_output(s, t)) {
			snprintf(why, whylen,
				 "target %s: refusing: it is the trace, the result file or the "
				 "HTML report%s",
				 s->tpaths[t],
				 o->nothers ? ", or another rank's trace or result file" : "");
			return -EINVAL;
		}
		/* the largest file size is INT64_MAX: past it the rounding would wrap */
		bool too_big = want > (uint64_t)INT64_MAX - (1 << 20);

		if (o->create_auto && too_big && access(s->tpaths[t], F_OK) != 0) {
			char n[32];

			if (want == UINT64_MAX)
				snprintf(n, sizeof(n), "over 2^64");
			else
				snprintf(n, sizeof(n), "%" PRIu64, want);
			snprintf(why, whylen,
				 "target %s: does not exist, and the trace needs %s bytes of it, more "
				 "than a file can hold (give --create SIZE and --fit wrap|scale)",
				 s->tpaths[t], n);
			return -EFBIG;
		}
		if (!o->create_auto)
			to.create_size = o->create_size;
		else /* too big to make means it exists (refused above): nothing to make */
			to.create_size = too_big ? 0 : (want + (1 << 20) - 1) / (1 << 20) * (1 << 20);
		if (o->create_auto && !to.create_size && access(s->tpaths[t], F_OK) != 0) {
			snprintf(why, whylen,
				 "target %s: does not exist, and the trace does not say how big to "
				 "make it (give --create SIZE)",
				 s->tpaths[t]);
			return -ENOENT;
		}
		err = rp_target_open(&s->targets[t], s->tpaths[t], &to, reason, sizeof(reason));
		if (err < 0) {
			snprintf(why, whylen, "target %s: %s", s->tpaths[t], reason);
			return err;
		}
		if (!s->targets[t].size) {
			snprintf(why, whylen, "target %s: it is empty (size 0)", s->tpaths[t]);
			return -EINVAL;
		}
	}
	return 0;
}

/* --fit error: name the first I/O that does not fit (at the largest scale factor). */
static int check_fit(const struct rp_devices *s, const struct rp_sched_cfg *cfg, char *why,
		     size_t whylen)
{
	struct btape_reader *r = NULL;
	const struct btape_event *evs;
	uint64_t idx = 0, first = 0, toff, tlen;
	bool need = false;
	int n, err;

	for (uint32_t d = 0; d < s->ndev; d++) {
		uint64_t bound = rp_devmap_span(&s->devs[d]);

		if (s->devs[d].target == RP_NO_TARGET)
			continue;
		if (!bound || bound > rp_region_bytes(cfg, &s->targets[s->devs[d].target]))
			need = true;
	}
	if (!need)
		return 0;
	err = btape_reader__open(&r, s->o->trace, why, whylen);
	if (err < 0)
		return err;
	while ((n = btape_reader__next_batch(r, &evs)) > 0) {
		for (int i = 0; i < n; i++, idx++) {
			const struct btape_event *ev = &evs[i];
			int op = rp_sched_engine_op(cfg, ev->op, ev->bytes);

			if (!idx)
				first = ev->issue_ns;
			if (op < 0 || op == RP_IO_FSYNC || ev->dev >= s->ndev ||
			    s->devs[ev->dev].target == RP_NO_TARGET)
				continue;
			err = rp_map_io(cfg, op, ev->dev, 0, rp_sector_offset(ev->sector), ev->bytes,
					&toff, &tlen);
			if (err == 0 || err == -ENODATA) /* -ENODATA: skipped, never issued */
				continue;
			const struct rp_target *t = &s->targets[s->devs[ev->dev].target];
			char b[300];

			snprintf(why, whylen,
				 "I/O #%" PRIu64 " (at +%.6f s, %s on device %s, sector %" PRIu64
				 ", %" PRIu64 " bytes) ends past %" PRIu64
				 " bytes, the end of %s%s: use --fit wrap|scale or a bigger target",
				 idx, (double)(ev->issue_ns - first) / 1e9, btape_op_name(ev->op),
				 rp_dev_label(s->meta, ev->dev, b, sizeof(b)), ev->sector,
				 ev->bytes, rp_region_bytes(cfg, t), t->path,
				 cfg->layout == RP_LAYOUT_SHARD && (cfg->scale > 1 || cfg->copies > 1)
					 ? "'s region per copy"
					 : "");
			btape_reader__close(r);
			return -ERANGE;
		}
	}
	err = n < 0 ? n : 0;
	if (n < 0)
		snprintf(why, whylen, "%s", btape_reader__errmsg(r));
	btape_reader__close(r);
	return err;
}

int rp_devices__check_fit(const struct rp_devices *s, const struct rp_sched_cfg *cfg, char *why,
			  size_t whylen)
{
	return cfg->fit == RP_FIT_ERROR ? check_fit(s, cfg, why, whylen) : 0;
}

void rp_devices__discard_created(struct rp_devices *s)
{
	if (!s)
		return;
	for (unsigned int t = 0; t < s->ntargets; t++)
		rp_target_discard(&s->targets[t]);
}

void rp_devices__free(struct rp_devices *s)
{
	if (!s)
		return;
	for (unsigned int t = 0; t < s->ntargets; t++)
		rp_target_close(&s->targets[t]);
	free(s->devs);
	s->devs = NULL;
	s->ntargets = 0;
}
