// SPDX-License-Identifier: GPL-2.0-only
/* One timeline for several traces: the per-file clock corrections. */
#include "align.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const NAMES[] = {
	[AN_ALIGN_AUTO] = "auto",   [AN_ALIGN_CLUSTER] = "cluster", [AN_ALIGN_START] = "start",
	[AN_ALIGN_WALL] = "wall",   [AN_ALIGN_NONE] = "none",
};

int an_align_parse(const char *name, enum an_align *mode)
{
	for (unsigned int i = 0; i < sizeof(NAMES) / sizeof(NAMES[0]); i++) {
		if (strcmp(name, NAMES[i]) == 0) {
			*mode = (enum an_align)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *an_align_name(enum an_align mode)
{
	return (unsigned int)mode < sizeof(NAMES) / sizeof(NAMES[0]) ? NAMES[mode] : "?";
}

/* A constant correction: t -> t - off. */
static void constant(struct btape_cluster *c, int64_t off)
{
	memset(c, 0, sizeof(*c));
	c->nsync = 1;
	c->sync[0].offset_ns = off;
}

static int64_t clamp64(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* Whether files a and b are of one cluster recording; if not, why in msg. */
static bool same_recording(const struct an_align_in *a, const struct an_align_in *b, char *msg,
			   size_t msglen)
{
	const struct btape_cluster *ca = &a->meta->cluster, *cb = &b->meta->cluster;

	if (ca->id[0] && cb->id[0] && strcmp(ca->id, cb->id) != 0) {
		snprintf(msg, msglen,
			 "%s and %s are not from one cluster recording (recording ids %s and %s)",
			 a->path, b->path, ca->id, cb->id);
		return false;
	}
	if (!ca->id[0] || !cb->id[0]) {
		const struct an_align_in *no = ca->id[0] ? b : a;

		snprintf(msg, msglen, "%s has no cluster clock (host %s), %s is from %s",
			 no->path, no->meta->hostname[0] ? no->meta->hostname : "unknown",
			 no == a ? b->path : a->path,
			 (no == a ? cb : ca)->id[0] ? "a cluster recording" : "another host");
		return false;
	}
	return true;
}

static void label_hosts(const struct an_align_in *in, int n, struct an_align_out *out,
			bool cluster)
{
	for (int k = 0; k < n; k++) {
		const char *h = in[k].meta->hostname[0] ? in[k].meta->hostname : "?";
		bool shared = false;

		for (int j = 0; j < n; j++)
			shared |= j != k && strcmp(in[j].meta->hostname, in[k].meta->hostname) == 0;
		if (!shared)
			snprintf(out[k].host, sizeof(out[k].host), "%s", h);
		else if (cluster)
			snprintf(out[k].host, sizeof(out[k].host), "%.200s/r%" PRIu32, h,
				 in[k].meta->cluster.rank);
		else
			snprintf(out[k].host, sizeof(out[k].host), "%.200s/#%d", h, k + 1);
	}
}

int an_align_plan(enum an_align mode, const struct an_align_in *in, int n,
		  struct an_align_out *out, bool *multi_host, char *msg, size_t msglen)
{
	bool one_id = true, no_id = true, one_host = true, dev_hosts = false;
	int bad = -1;

	memset(out, 0, sizeof(*out) * (size_t)(n > 0 ? n : 0));
	msg[0] = 0;
	for (int k = 0; k < n; k++) {
		const struct btape_meta *m = in[k].meta;

		no_id &= !m->cluster.id[0];
		one_host &= strcmp(m->hostname, in[0].meta->hostname) == 0;
		for (uint32_t i = 0; i < m->ndevices; i++)
			dev_hosts |= m->devices[i].host[0] != 0;
		if (bad < 0 && k > 0 && !same_recording(&in[0], &in[k], msg, msglen))
			bad = k;
	}
	one_id = bad < 0 && in[0].meta->cluster.id[0];
	*multi_host = dev_hosts;
	if (mode == AN_ALIGN_AUTO) {
		if (n <= 1)
			mode = AN_ALIGN_NONE;
		else if (one_id)
			mode = AN_ALIGN_CLUSTER;
		else if (no_id && one_host)
			mode = AN_ALIGN_NONE;
		else {
			if (no_id) {
				for (bad = 1; bad < n - 1; bad++)
					if (strcmp(in[bad].meta->hostname, in[0].meta->hostname))
						break;
				snprintf(msg, msglen,
					 "%s (host %s) and %s (host %s) have no cluster clock",
					 in[0].path, in[0].meta->hostname, in[bad].path,
					 in[bad].meta->hostname);
			}
			size_t l = strlen(msg);

			snprintf(msg + l, msglen - l,
				 ": their clocks are unrelated; say how to align them "
				 "(--align start, wall or none)");
			return -EINVAL;
		}
	}
	if (mode == AN_ALIGN_CLUSTER && !one_id && n > 1) {
		if (!msg[0])
			snprintf(msg, msglen, "%s has no cluster clock", in[0].path);
		size_t l = strlen(msg);

		snprintf(msg + l, msglen - l, ": --align cluster needs one cluster recording");
		return -EINVAL;
	}
	msg[0] = 0;
	if (n > 1 && (!one_host || mode == AN_ALIGN_CLUSTER)) {
		*multi_host = true;
		label_hosts(in, n, out, mode == AN_ALIGN_CLUSTER);
	}
	if (mode == AN_ALIGN_CLUSTER && n > 1) {
		for (int k = 0; k < n; k++)
			out[k].clock = in[k].meta->cluster;
	} else if (mode == AN_ALIGN_START) {
		uint64_t base = UINT64_MAX;

		for (int k = 0; k < n; k++)
			if (in[k].has_first && in[k].first_ns < base)
				base = in[k].first_ns;
		for (int k = 0; k < n; k++)
			if (in[k].has_first)
				constant(&out[k].clock, clamp64((__int128)in[k].first_ns - base));
	} else if (mode == AN_ALIGN_WALL) {
		const struct btape_meta *m0 = in[0].meta;

		for (int k = 0; k < n; k++) {
			const struct btape_meta *m = in[k].meta;

			if (!m->clock_real_ns) {
				snprintf(msg, msglen, "%s: --align wall: the trace has no wall-clock "
					 "anchor", in[k].path);
				return -EINVAL;
			}
			/* file k's mono - file 0's mono at one wall-clock instant */
			__int128 off = ((__int128)m->clock_mono_ns - m->clock_real_ns) -
				       ((__int128)m0->clock_mono_ns - m0->clock_real_ns);

			constant(&out[k].clock, clamp64(off));
		}
	}
	return (int)mode;
}

static uint64_t shift_ns(uint64_t t, int64_t off)
{
	__int128 v = (__int128)t - off;

	return v < 0 ? 0 : v > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

void an_align_event(const struct btape_cluster *clock, struct btape_event *ev)
{
	int64_t off = btape_cluster_offset_at(clock, ev->issue_ns);

	ev->issue_ns = shift_ns(ev->issue_ns, off);
	if (ev->present & BTAPE_HAS_COMPLETE)
		ev->complete_ns = shift_ns(ev->complete_ns, off);
	if (ev->present & BTAPE_HAS_INSERT)
		ev->insert_ns = shift_ns(ev->insert_ns, off);
	if (ev->present & BTAPE_HAS_WAKE)
		ev->wake_ns = shift_ns(ev->wake_ns, off);
}
