// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Exporters: .btape -> fio iolog v3, blkparse-style text, CSV. One pass over the reader's
 * batches; memory is bounded (blkparse keeps a heap of not-yet-printed Q/D/C lines, bounded by
 * the requests in flight).
 */
#include "interop_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define HEAP_MAX_LINES (1u << 20) /* blkparse: lines held for time ordering */
#define HAS(ev, bit) (((ev)->present & (bit)) != 0)

struct expctx {
	FILE *out;
	const char *name; /* what the reader's messages start with (btape_reader__name()) */
	const struct btape_meta *meta;
	const struct btape_export_opts *o;
	struct btape_export_stats st;
	char *errmsg;
	size_t errlen;
	uint64_t t0;
	bool started;
	/* fio */
	uint8_t *added; /* per device: file added+opened */
	bool target_added;
	uint64_t last_us;
	/* blkparse */
	struct bline *heap;
	size_t nheap, capheap;
	uint64_t seq;
};

struct bline {
	uint64_t t;
	uint64_t sector, nsect;
	uint32_t dev, cpu, pid;
	int32_t error;
	uint8_t op;
	uint32_t flags;
	char act;
	char comm[24];
};

static int exp_fail(struct expctx *x, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int exp_fail(struct expctx *x, int err, const char *fmt, ...)
{
	va_list ap;

	if (x->errmsg && x->errlen) { /* "PATH: what", as the reader's own messages */
		int n = x->name ? snprintf(x->errmsg, x->errlen, "%s: ", x->name) : 0;

		if (n < 0 || (size_t)n >= x->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(x->errmsg + n, x->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- fio iolog v3 ---- */

static const char *fio_file(struct expctx *x, uint32_t dev)
{
	if (x->o->target)
		return x->o->target;
	return dev < x->meta->ndevices ? x->meta->devices[dev].name : "?";
}

static int fio_event(struct expctx *x, const struct btape_event *ev)
{
	const char *act, *file;
	uint64_t us;

	switch (ev->op) {
	case BTAPE_OP_READ:
		act = "read";
		break;
	case BTAPE_OP_WRITE:
		act = "write";
		break;
	case BTAPE_OP_DISCARD:
		act = "trim";
		break;
	case BTAPE_OP_FLUSH:
		act = "sync";
		break;
	default:
		x->st.skipped++; /* fio cannot issue it */
		return 0;
	}
	if (!x->started) {
		x->t0 = ev->issue_ns;
		x->started = true;
	}
	us = (ev->issue_ns - x->t0) / 1000;
	file = fio_file(x, ev->dev);
	if (strpbrk(file, " \t\n"))
		return exp_fail(x, -EINVAL,
				"device name '%s' contains a blank, which fio iolog cannot carry: "
				"name a file with --target",
				file);
	if (x->o->target ? !x->target_added : !x->added[ev->dev]) {
		if (fprintf(x->out, "%" PRIu64 " %s add\n%" PRIu64 " %s open\n", us, file, us,
			    file) < 0)
			return -EIO;
		if (x->o->target)
			x->target_added = true;
		else
			x->added[ev->dev] = 1;
	}
	x->last_us = us;
	if (ev->op == BTAPE_OP_FLUSH) {
		if (fprintf(x->out, "%" PRIu64 " %s sync\n", us, file) < 0)
			return -EIO;
	} else if (fprintf(x->out, "%" PRIu64 " %s %s %" PRIu64 " %" PRIu64 "\n", us, file, act,
			   ev->sector * 512, ev->bytes) < 0) {
		return -EIO;
	}
	x->st.written++;
	return 0;
}

static int fio_end(struct expctx *x)
{
	if (x->o->target) {
		if (x->target_added &&
		    fprintf(x->out, "%" PRIu64 " %s close\n", x->last_us, x->o->target) < 0)
			return -EIO;
		return 0;
	}
	for (uint32_t d = 0; d < x->meta->ndevices; d++) {
		if (x->added[d] && fprintf(x->out, "%" PRIu64 " %s close\n", x->last_us,
					   x->meta->devices[d].name) < 0)
			return -EIO;
	}
	return 0;
}

/* ---- blkparse-style text ---- */

static void rwbs_str(uint8_t op, uint32_t flags, char *b)
{
	int i = 0;

	if (flags & BTAPE_FLAG_PREFLUSH)
		b[i++] = 'F';
	switch (op) {
	case BTAPE_OP_WRITE:
		b[i++] = 'W';
		break;
	case BTAPE_OP_READ:
		b[i++] = 'R';
		break;
	case BTAPE_OP_DISCARD:
		b[i++] = 'D';
		break;
	case BTAPE_OP_SECURE_ERASE:
		b[i++] = 'D';
		b[i++] = 'E';
		break;
	case BTAPE_OP_FLUSH:
		b[i++] = 'F';
		break;
	case BTAPE_OP_WRITE_ZEROES:
		b[i++] = 'W';
		b[i++] = 'Z';
		break;
	case BTAPE_OP_ZONE_APPEND:
		b[i++] = 'Z';
		b[i++] = 'A';
		break;
	case BTAPE_OP_ZONE_RESET:
		b[i++] = 'Z';
		b[i++] = 'R';
		break;
	case BTAPE_OP_ZONE_FINISH:
		b[i++] = 'Z';
		b[i++] = 'F';
		break;
	case BTAPE_OP_ZONE_OPEN:
		b[i++] = 'Z';
		b[i++] = 'O';
		break;
	case BTAPE_OP_ZONE_CLOSE:
		b[i++] = 'Z';
		b[i++] = 'C';
		break;
	default:
		b[i++] = 'N';
		break;
	}
	if (flags & BTAPE_FLAG_FUA)
		b[i++] = 'F';
	if (flags & BTAPE_FLAG_READAHEAD)
		b[i++] = 'A';
	if (flags & BTAPE_FLAG_SYNC)
		b[i++] = 'S';
	if (flags & BTAPE_FLAG_META)
		b[i++] = 'M';
	if (flags & BTAPE_FLAG_ATOMIC)
		b[i++] = 'U';
	b[i] = 0;
}

static bool bl_less(const struct bline *a, const struct bline *b)
{
	return a->t < b->t;
}

static int heap_push(struct expctx *x, const struct bline *l)
{
	size_t i;

	if (x->nheap == x->capheap) {
		size_t cap = x->capheap ? x->capheap * 2 : 1024;
		struct bline *h = realloc(x->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		x->heap = h;
		x->capheap = cap;
	}
	i = x->nheap++;
	x->heap[i] = *l;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct bline t;

		if (!bl_less(&x->heap[i], &x->heap[p]))
			break;
		t = x->heap[p];
		x->heap[p] = x->heap[i];
		x->heap[i] = t;
		i = p;
	}
	return 0;
}

static void heap_pop(struct expctx *x, struct bline *out)
{
	size_t i = 0;

	*out = x->heap[0];
	x->heap[0] = x->heap[--x->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct bline t;

		if (l < x->nheap && bl_less(&x->heap[l], &x->heap[m]))
			m = l;
		if (r < x->nheap && bl_less(&x->heap[r], &x->heap[m]))
			m = r;
		if (m == i)
			break;
		t = x->heap[m];
		x->heap[m] = x->heap[i];
		x->heap[i] = t;
		i = m;
	}
}

static int bl_print(struct expctx *x, const struct bline *l)
{
	const struct btape_device *d =
		l->dev < x->meta->ndevices ? &x->meta->devices[l->dev] : NULL;
	uint32_t maj = 0, min = l->dev;
	uint64_t rel = l->t > x->t0 ? l->t - x->t0 : 0;
	char rwbs[16];
	int r;

	if (d && (d->dev_t_major || d->dev_t_minor)) {
		maj = d->dev_t_major;
		min = d->dev_t_minor;
	}
	rwbs_str(l->op, l->flags, rwbs);
	r = fprintf(x->out,
		    "%3u,%-3u %2u %8" PRIu64 " %5" PRIu64 ".%09" PRIu64 " %5u  %c %3s %" PRIu64
		    " + %" PRIu64 " ",
		    maj, min, l->cpu, ++x->seq, rel / 1000000000u, rel % 1000000000u, l->pid,
		    l->act, rwbs, l->sector, l->nsect);
	if (r < 0)
		return -EIO;
	if (l->act == 'C')
		r = fprintf(x->out, "[%d]\n", (int)l->error);
	else
		r = fprintf(x->out, "[%s]\n", l->comm);
	return r < 0 ? -EIO : 0;
}

static int bl_flush(struct expctx *x, uint64_t upto, bool all)
{
	struct bline l;
	int err;

	while (x->nheap && (all || x->heap[0].t <= upto || x->nheap > HEAP_MAX_LINES)) {
		heap_pop(x, &l);
		err = bl_print(x, &l);
		if (err)
			return err;
	}
	return 0;
}

static int blk_event_out(struct expctx *x, const struct btape_event *ev)
{
	struct bline l = {0};
	uint64_t first = HAS(ev, BTAPE_HAS_INSERT) ? ev->insert_ns : ev->issue_ns;
	int err;

	/* times stay on the trace's clock (no rebasing): a re-import gives the same records */
	err = bl_flush(x, first, false);
	if (err)
		return err;
	l.sector = ev->sector;
	l.nsect = ev->bytes / 512;
	l.dev = ev->dev;
	l.cpu = HAS(ev, BTAPE_HAS_CPU) ? ev->cpu : 0;
	l.op = ev->op;
	l.flags = HAS(ev, BTAPE_HAS_FLAGS) ? ev->flags : 0;
	if (HAS(ev, BTAPE_HAS_COMM))
		snprintf(l.comm, sizeof(l.comm), "%s", ev->comm);
	l.pid = HAS(ev, BTAPE_HAS_PID) ? ev->pid : 0;
	if (HAS(ev, BTAPE_HAS_INSERT)) {
		l.act = 'Q';
		l.t = ev->insert_ns;
		err = heap_push(x, &l);
		if (err)
			return err;
	}
	l.act = 'D';
	l.t = ev->issue_ns;
	err = heap_push(x, &l);
	if (!err && HAS(ev, BTAPE_HAS_COMPLETE)) {
		l.act = 'C';
		l.t = ev->complete_ns;
		l.pid = 0;
		l.error = HAS(ev, BTAPE_HAS_ERROR) ? ev->error : 0;
		err = heap_push(x, &l);
	}
	if (err)
		return err;
	x->st.written++;
	return 0;
}

/* ---- CSV (the columns of `biotape dump --csv`) ---- */

static void csv_u64(FILE *fp, bool has, uint64_t v)
{
	if (has)
		fprintf(fp, "%" PRIu64, v);
	fputc(',', fp);
}

INTEROP_API const char btape_csv_header[] =
	"issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,flags,error,pid,tid,comm,cgroup,cpu,qd\n";

static void csv_str(FILE *fp, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

INTEROP_API int btape_csv_write_event(FILE *fp, const struct btape_event *ev)
{
	char flags[64];

	fprintf(fp, "%" PRIu64 ",", ev->issue_ns);
	csv_u64(fp, HAS(ev, BTAPE_HAS_COMPLETE), ev->complete_ns);
	csv_u64(fp, HAS(ev, BTAPE_HAS_INSERT), ev->insert_ns);
	fprintf(fp, "%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%s,", ev->dev, ev->sector, ev->bytes,
		btape_op_name(ev->op));
	if (HAS(ev, BTAPE_HAS_FLAGS))
		fputs(btape_flags_str(ev->flags, flags, sizeof(flags)), fp);
	fputc(',', fp);
	if (HAS(ev, BTAPE_HAS_ERROR))
		fprintf(fp, "%" PRId32, ev->error);
	fputc(',', fp);
	csv_u64(fp, HAS(ev, BTAPE_HAS_PID), ev->pid);
	csv_u64(fp, HAS(ev, BTAPE_HAS_TID), ev->tid);
	if (HAS(ev, BTAPE_HAS_COMM) && ev->comm)
		csv_str(fp, ev->comm);
	fputc(',', fp);
	csv_u64(fp, HAS(ev, BTAPE_HAS_CGROUP), ev->cgroup);
	csv_u64(fp, HAS(ev, BTAPE_HAS_CPU), ev->cpu);
	if (HAS(ev, BTAPE_HAS_QD))
		fprintf(fp, "%" PRIu32, ev->qd);
	if (fputc('\n', fp) == EOF)
		return -EIO;
	return 0;
}

static int csv_event(struct expctx *x, const struct btape_event *ev)
{
	int err = btape_csv_write_event(x->out, ev);

	if (!err)
		x->st.written++;
	return err;
}

INTEROP_API int btape_export(struct btape_reader *r, FILE *out,
			     const struct btape_export_opts *opts, struct btape_export_stats *stats,
			     char *errmsg, size_t errlen)
{
	struct btape_export_opts o = {0};
	struct expctx x = {0};
	const struct btape_event *evs;
	int n = 0, err = 0;

	if (errmsg && errlen)
		errmsg[0] = 0;
	if (opts)
		memcpy(&o, opts, opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	x.out = out;
	x.name = btape_reader__name(r);
	x.o = &o;
	x.errmsg = errmsg;
	x.errlen = errlen;
	x.meta = btape_reader__meta(r);
	if (!x.meta)
		return exp_fail(&x, -EINVAL, "trace has no metadata");
	if (!btape_fmt_can_export(o.fmt))
		return exp_fail(&x, -EINVAL, "cannot export to %s", btape_fmt_name(o.fmt));
	if (o.fmt == BTAPE_FMT_FIO3) {
		x.added = calloc(x.meta->ndevices + 1, 1);
		if (!x.added)
			return exp_fail(&x, -ENOMEM, "out of memory");
		if (fputs("fio version 3 iolog\n", out) == EOF)
			err = -EIO;
	} else if (o.fmt == BTAPE_FMT_CSV) {
		if (fputs(btape_csv_header, out) == EOF)
			err = -EIO;
	}
	while (!err && (n = btape_reader__next_batch(r, &evs)) > 0) {
		for (int i = 0; i < n && !err; i++) {
			const struct btape_event *ev = &evs[i];

			x.st.events++;
			if (ev->dev >= x.meta->ndevices) {
				err = exp_fail(&x, -EINVAL,
					       "event %" PRIu64
					       ": device %u not in the device table",
					       x.st.events, ev->dev);
				break;
			}
			if (o.fmt == BTAPE_FMT_FIO3)
				err = fio_event(&x, ev);
			else if (o.fmt == BTAPE_FMT_BLKPARSE)
				err = blk_event_out(&x, ev);
			else
				err = csv_event(&x, ev);
		}
	}
	if (!err && n < 0) { /* the reader's message names the file already */
		err = n;
		if (x.errmsg && x.errlen)
			snprintf(x.errmsg, x.errlen, "%s", btape_reader__errmsg(r));
	}
	if (!err && o.fmt == BTAPE_FMT_FIO3)
		err = fio_end(&x);
	if (!err && o.fmt == BTAPE_FMT_BLKPARSE)
		err = bl_flush(&x, 0, true);
	x.name = NULL; /* these are not the trace's */
	if (err == -EIO && x.errmsg && !x.errmsg[0])
		exp_fail(&x, err, "write error");
	if (err == -ENOMEM && x.errmsg && !x.errmsg[0])
		exp_fail(&x, err, "out of memory");
	if (stats)
		*stats = x.st;
	free(x.added);
	free(x.heap);
	return err;
}
