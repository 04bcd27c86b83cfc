// SPDX-License-Identifier: GPL-2.0-only
/* The fidelity score of biotape compare (see fidelity.h). */
#include "fidelity.h"
#include "dist.h"
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Reads PATH again through f restricted to [from, to) after its first I/O (to 0: the end). */
static int pass(char *const *path, int npaths, const struct an_filter *f, const struct stats_opts *so,
		const struct stats *whole, uint64_t from, uint64_t to, struct stats **out,
		char *msg, size_t msglen)
{
	struct an_filter pf = *f;
	struct an_info info;
	uint64_t base = whole->origin_ns - whole->trace_start_ns;

	pf.has_from = true;
	pf.from_ns = base + from;
	if (to) {
		pf.has_to = true;
		pf.to_ns = base + to;
	}
	return an_run(path, npaths, &pf, so, out, &info, msg, msglen);
}

static double mix_tvd(const struct stats *a, const struct stats *b)
{
	double x[BTAPE_OP__COUNT], y[BTAPE_OP__COUNT];

	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		x[op] = (double)a->ops[op].n;
		y[op] = (double)b->ops[op].n;
	}
	return dist_tvd(x, y, BTAPE_OP__COUNT);
}

/* size TVD of one op; an op A has and B lacks is wholly different; NAN when A lacks it */
static double size_tvd(const struct opstat *a, const struct opstat *b)
{
	if (!a->n)
		return NAN;
	if (!b->n)
		return 1;
	return report_size_tvd(a, b);
}

static int windows(struct fidelity *fid, char *const *pa, int npa, char *const *pb, int npb,
		   const struct an_filter *f, const struct stats_opts *so, const struct stats *a,
		   const struct stats *b, char *msg, size_t msglen)
{
	struct stats_opts wo = *so;
	struct stats *wa = NULL, *wb = NULL;
	double *x = NULL, *y = NULL;
	int err;

	wo.interval_ns = fid->window_ns;
	err = pass(pa, npa, f, &wo, a, 0, 0, &wa, msg, msglen);
	if (!err)
		err = pass(pb, npb, f, &wo, b, 0, 0, &wb, msg, msglen);
	if (err)
		goto cleanup;
	/* whole windows only; a timeline that had to widen its rows is not comparable */
	size_t n = (size_t)(a->duration_ns / fid->window_ns), nb = (size_t)(b->duration_ns / fid->window_ns);

	if (nb < n)
		n = nb;
	if (wa->tl_interval != fid->window_ns || wb->tl_interval != fid->window_ns)
		n = 0;
	if (n > wa->tl_rows)
		n = wa->tl_rows;
	if (n > wb->tl_rows)
		n = wb->tl_rows;
	fid->windows = n;
	fid->iops_corr = NAN;
	if (n < 2)
		goto cleanup;
	x = calloc(n, sizeof(double));
	y = calloc(n, sizeof(double));
	if (!x || !y) {
		err = -ENOMEM;
		snprintf(msg, msglen, "fidelity: out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tl_row *r = &wa->tl[i], *q = &wb->tl[i];

		x[i] = (double)(r->n_dir[0] + r->n_dir[1] + r->n_other);
		y[i] = (double)(q->n_dir[0] + q->n_dir[1] + q->n_other);
	}
	fid->iops_corr = dist_pearson(x, y, n);
cleanup:
	free(x);
	free(y);
	stats__free(wa);
	stats__free(wb);
	return err;
}

int fidelity_compute(struct fidelity *fid, char *const *pa, int na, char *const *pb, int nb,
		     const struct an_filter *f, const struct stats_opts *so, const struct stats *a,
		     const struct stats *b, uint64_t window_ns, char *msg, size_t msglen)
{
	struct phase_span sp[PHASES_MAX];
	int err;

	memset(fid, 0, sizeof(*fid));
	fid->window_ns = window_ns;
	if (!fid->window_ns) {
		fid->window_ns = FIDELITY_WINDOW_NS;
		if (a->duration_ns < 10 * FIDELITY_WINDOW_NS)
			fid->window_ns = a->duration_ns / 10 ? a->duration_ns / 10 : 1;
	}
	fid->gap_ks = dist_ks_hist(a->interarrival, b->interarrival);
	fid->ptm_a = stats_burstiness(a, &a->all);
	fid->ptm_b = stats_burstiness(b, &b->all);
	fid->ws_a = a->wsr.blocks;
	fid->ws_b = b->wsr.blocks;
	fid->demerit_ns[DIR_READ] =
		dist_demerit_hist(a->ops[BTAPE_OP_READ].lat_dev, b->ops[BTAPE_OP_READ].lat_dev);
	fid->demerit_ns[DIR_WRITE] =
		dist_demerit_hist(a->ops[BTAPE_OP_WRITE].lat_dev, b->ops[BTAPE_OP_WRITE].lat_dev);
	err = windows(fid, pa, na, pb, nb, f, so, a, b, msg, msglen);
	if (err)
		return err;
	int n = phases_detect(a, 0, sp, PHASES_MAX);

	if (n < 0) {
		snprintf(msg, msglen, "fidelity: out of memory");
		return n;
	}
	fid->nphases = n;
	for (int k = 0; k < n; k++) {
		struct fid_phase *p = &fid->ph[k];
		struct stats *x = NULL, *y = NULL;
		uint64_t to = k + 1 < n ? sp[k].to_ns : 0;
		/* the last phase runs to each trace's own last issue */
		double len_a = (double)(sp[k].to_ns - sp[k].from_ns) / 1e9, len_b = len_a;

		if (!to && b->duration_ns + 1 > sp[k].from_ns)
			len_b = (double)(b->duration_ns + 1 - sp[k].from_ns) / 1e9;

		p->from_ns = sp[k].from_ns;
		p->to_ns = sp[k].to_ns;
		err = pass(pa, na, f, so, a, sp[k].from_ns, to, &x, msg, msglen);
		if (!err)
			err = pass(pb, nb, f, so, b, sp[k].from_ns, to, &y, msg, msglen);
		if (!err) {
			p->iops_a = (double)x->all.n / len_a;
			p->iops_b = len_b > 0 ? (double)y->all.n / len_b : NAN;
			p->mix_tvd = mix_tvd(x, y);
			p->size_tvd[DIR_READ] =
				size_tvd(&x->ops[BTAPE_OP_READ], &y->ops[BTAPE_OP_READ]);
			p->size_tvd[DIR_WRITE] =
				size_tvd(&x->ops[BTAPE_OP_WRITE], &y->ops[BTAPE_OP_WRITE]);
			p->gap_ks = dist_ks_hist(x->interarrival, y->interarrival);
		}
		stats__free(x);
		stats__free(y);
		if (err)
			return err;
	}
	return 0;
}
