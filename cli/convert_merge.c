// SPDX-License-Identifier: GPL-2.0-only
/*
 * biotape convert --merge A B C OUT: several hosts' traces into one multi-host trace, on one
 * timeline (as biotape analyze places them, analyze/align.h), each device named with its host.
 */
#include "convert_merge.h"

#include "align.h"
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADVANCE_EVERY 4096 /* events between watermark promises */

struct msrc {
	struct btape_reader *r;
	const struct btape_event *evs;
	int n, i;
	uint32_t *map; /* local device -> merged device */
	uint32_t nmap;
	uint32_t other; /* merged index for events outside its table: past the merged table */
};

static int msrc_fill(struct msrc *m)
{
	while (m->i >= m->n) {
		int n = btape_reader__next_batch(m->r, &m->evs);

		if (n <= 0)
			return n; /* 0: the end */
		m->n = n;
		m->i = 0;
	}
	return 1;
}

/* The merged metadata: the reference's clock anchor, every file's devices with their host. */
static int merged_meta(struct btape_meta *mm, const struct an_align_in *in,
		       const struct an_align_out *out, struct msrc *src, int n,
		       enum an_align mode)
{
	const struct btape_meta *m0 = in[0].meta;

	memset(mm, 0, sizeof(*mm));
	snprintf(mm->tool, sizeof(mm->tool), "biotape convert --merge");
	snprintf(mm->source, sizeof(mm->source), "%s", m0->source);
	snprintf(mm->kernel, sizeof(mm->kernel), "%s", m0->kernel);
	snprintf(mm->capture, sizeof(mm->capture), "merged from %d traces, --align %s", n,
		 an_align_name(mode));
	for (int k = 0; k < n; k++)
		if (mode == AN_ALIGN_CLUSTER && in[k].meta->cluster.rank == 0)
			m0 = in[k].meta; /* the reference's clock is the timeline */
	snprintf(mm->hostname, sizeof(mm->hostname), "%s", m0->hostname);
	mm->clock_mono_ns = m0->clock_mono_ns;
	mm->clock_real_ns = m0->clock_real_ns;
	if (mode == AN_ALIGN_CLUSTER) { /* the same recording; its times are now the reference's */
		mm->cluster = m0->cluster;
		mm->cluster.nsync = 0;
		memset(mm->cluster.sync, 0, sizeof(mm->cluster.sync));
	}
	for (int k = 0; k < n; k++) {
		const struct btape_meta *m = in[k].meta;
		const char *host = out[k].host[0] ? out[k].host : m->hostname;

		if (strcmp(m->source, mm->source) != 0)
			snprintf(mm->source, sizeof(mm->source), "merged");
		src[k].nmap = m->ndevices;
		src[k].map = calloc(m->ndevices ? m->ndevices : 1, sizeof(*src[k].map));
		if (!src[k].map)
			return -ENOMEM;
		for (uint32_t i = 0; i < m->ndevices; i++) {
			struct btape_device d = m->devices[i];
			int idx;

			if (!d.host[0])
				snprintf(d.host, sizeof(d.host), "%s", host);
			idx = btape_meta_add_device(mm, &d);
			if (idx < 0)
				return idx;
			src[k].map[i] = (uint32_t)idx;
		}
	}
	for (int k = 0; k < n; k++) /* read as "dev<N>", one per file, as the sources do */
		src[k].other = mm->ndevices + (uint32_t)k;
	return 0;
}

int cli_convert_merge(char *const *paths, int n, const char *out, enum an_align mode, bool quiet)
{
	struct msrc *src = calloc((size_t)n, sizeof(*src));
	struct an_align_in *in = calloc((size_t)n, sizeof(*in));
	struct an_align_out *ao = calloc((size_t)n, sizeof(*ao));
	struct btape_meta mm = {0};
	struct btape_writer *w = NULL;
	uint64_t lost[3] = {0}, events = 0;
	char msg[1024];
	int err = -ENOMEM, rc = BTAPE_EXIT_FAIL;
	bool multi;

	if (!src || !in || !ao) {
		cli_err("convert: out of memory");
		goto cleanup;
	}
	for (int k = 0; k < n; k++) {
		struct btape_summary sum = {.sz = sizeof(sum)};

		err = btape_reader__open(&src[k].r, paths[k], msg, sizeof(msg));
		if (err) {
			cli_err("convert: %s", msg);
			rc = cli_exit_status(err);
			goto cleanup;
		}
		in[k] = (struct an_align_in){.path = paths[k], .meta = btape_reader__meta(src[k].r)};
		if (btape_reader__summary(src[k].r, &sum) == 0) {
			in[k].first_ns = sum.first_issue_ns;
			in[k].has_first = sum.events != 0;
			lost[0] += sum.lost_ringbuf;
			lost[1] += sum.lost_inflight;
			lost[2] += sum.lost_events - sum.lost_ringbuf - sum.lost_inflight;
		}
	}
	err = an_align_plan(mode, in, n, ao, &multi, msg, sizeof(msg));
	if (err < 0) {
		cli_err("convert: --merge: %s", msg);
		rc = BTAPE_EXIT_USAGE;
		goto cleanup;
	}
	mode = (enum an_align)err;
	err = merged_meta(&mm, in, ao, src, n, mode);
	if (err) {
		cli_err("convert: --merge: %s", err == -E2BIG ? "too many devices" : strerror(-err));
		goto cleanup;
	}
	err = btape_writer__open(&w, out, &mm, NULL, msg, sizeof(msg));
	if (err) {
		cli_err("convert: %s", msg);
		w = NULL;
		goto cleanup;
	}
	btape_writer__add_lost(w, lost[0], lost[1], lost[2]);
	for (;;) {
		struct btape_event ev, best_ev;
		int best = -1;

		for (int k = 0; k < n; k++) {
			err = msrc_fill(&src[k]);
			if (err < 0) {
				cli_err("convert: %s", btape_reader__errmsg(src[k].r));
				rc = BTAPE_EXIT_USAGE;
				goto cleanup;
			}
			if (!err)
				continue;
			ev = src[k].evs[src[k].i];
			an_align_event(&ao[k].clock, &ev);
			if (best < 0 || ev.issue_ns < best_ev.issue_ns) {
				best = k;
				best_ev = ev;
			}
		}
		if (best < 0)
			break;
		struct msrc *s = &src[best];

		s->i++;
		best_ev.dev = best_ev.dev < s->nmap ? s->map[best_ev.dev] : s->other;
		err = btape_writer__add(w, &best_ev);
		if (!err && ++events % ADVANCE_EVERY == 0)
			err = btape_writer__advance(w, best_ev.issue_ns);
		if (err) {
			cli_err("convert: %s: %s", out, btape_writer__errmsg(w));
			goto cleanup;
		}
	}
	err = btape_writer__close(w, msg, sizeof(msg));
	w = NULL;
	if (err) {
		cli_err("convert: %s", msg);
		goto cleanup;
	}
	if (!quiet)
		printf("merged %" PRIu64 " I/Os of %d traces (--align %s) into %s\n", events, n,
		       an_align_name(mode), out);
	rc = BTAPE_EXIT_OK;
cleanup:
	btape_writer__abort(w);
	if (src)
		for (int k = 0; k < n; k++) {
			btape_reader__close(src[k].r);
			free(src[k].map);
		}
	btape_meta_free(&mm);
	free(src);
	free(in);
	free(ao);
	return rc;
}
