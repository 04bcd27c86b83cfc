// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The import context: the device table (source id -> device index), error messages naming the
 * file and line, and emission of finished records to the scan (pass 1) or the writer (pass 2).
 * The parsers (parse_text.c, binary.c, join.c) call into it; it calls none of them, nor the
 * driver (import.c).
 */
#include "interop_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define DEVTAB_INIT_SLOTS 64u
#define DEVICES_MAX (1u << 16)	 /* the device table is metadata: ~0.5 KiB an entry */
#define ADVANCE_STEP_EVENTS 256u /* call __advance every this many events */

/* ---- the context's life ---- */

void imp_init(struct imp *im, struct devtab *dt, char *errmsg, size_t errlen)
{
	memset(im, 0, sizeof(*im));
	memset(dt, 0, sizeof(*dt));
	im->devs = dt;
	im->errmsg = errmsg;
	im->errlen = errlen;
	if (errmsg && errlen)
		errmsg[0] = 0;
}

void imp_context_release(struct imp *im)
{
	btape_meta_free(&im->meta);
	free(im->devs->slots);
	free(im->devs->ent);
	free(im->dsz);
}

/* ---- device table: source id -> index ---- */

int imp_devsize_cmp(const void *a, const void *b)
{
	return strcmp(((const struct devsize *)a)->name, ((const struct devsize *)b)->name);
}

static uint64_t hash_name(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static bool dev_is(const struct imp *im, uint32_t idx, uint64_t h, const char *name, size_t len)
{
	const struct devent *e = &im->devs->ent[idx];

	return e->len == len && e->hash == h && !memcmp(im->meta.devices[idx].name, name, len);
}

static int devtab_grow(struct imp *im)
{
	struct devtab *t = im->devs;
	uint32_t cap = t->cap ? t->cap * 2 : DEVTAB_INIT_SLOTS;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nent; i++) {
		uint32_t k = (uint32_t)t->ent[i].hash & (cap - 1);

		while (slots[k])
			k = (k + 1) & (cap - 1);
		slots[k] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

static int devtab_add(struct imp *im, const char *name, size_t len, uint64_t h, uint32_t major,
		      uint32_t minor);

static int devtab_lookup(struct imp *im, const char *name, size_t len)
{
	struct devtab *t = im->devs;
	uint64_t h = hash_name(name, len);
	uint32_t k;

	if (!t->cap)
		return -1;
	for (k = (uint32_t)h & (t->cap - 1); t->slots[k]; k = (k + 1) & (t->cap - 1)) {
		if (dev_is(im, t->slots[k] - 1, h, name, len))
			return (int)t->slots[k] - 1;
	}
	return -1;
}

int imp_device(struct imp *im, const char *name, size_t len, uint32_t major, uint32_t minor)
{
	struct devtab *t = im->devs;
	uint64_t h;
	uint32_t k;
	int idx;

	if (t->last && t->ent[t->last - 1].len == len &&
	    !memcmp(im->meta.devices[t->last - 1].name, name, len))
		return (int)t->last - 1;
	if (len == 0)
		return imp_fail(im, "empty device id");
	if (len >= BTAPE_NAME_MAX)
		return imp_fail(im, "device id longer than %d bytes", BTAPE_NAME_MAX - 1);
	if (len <= 8) {
		uint64_t key = 0;
		uint32_t c;

		memcpy(&key, name, len);
		c = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 56) % DEVCACHE_SLOTS;
		if (t->small[c].idx1 && t->small[c].key == key && t->small[c].len == len) {
			t->last = t->small[c].idx1;
			return (int)t->last - 1;
		}
		idx = devtab_lookup(im, name, len);
		if (idx >= 0) {
			t->small[c].key = key;
			t->small[c].len = (uint32_t)len;
			t->small[c].idx1 = (uint32_t)idx + 1;
			t->last = (uint32_t)idx + 1;
			return idx;
		}
	}
	h = hash_name(name, len);
	if (t->cap) {
		k = (uint32_t)h & (t->cap - 1);
		while (t->slots[k]) {
			if (dev_is(im, t->slots[k] - 1, h, name, len)) {
				t->last = t->slots[k];
				return (int)t->slots[k] - 1;
			}
			k = (k + 1) & (t->cap - 1);
		}
	}
	return devtab_add(im, name, len, h, major, minor);
}

/* A new device (pass 1): appended to the metadata and indexed. */
static int __attribute__((noinline))
devtab_add(struct imp *im, const char *name, size_t len, uint64_t h, uint32_t major, uint32_t minor)
{
	struct devtab *t = im->devs;
	struct btape_device d = {0};
	uint32_t k;
	int idx;

	if (im->pass == 2)
		return imp_fail(im, "device '%.*s' not seen in the first pass (input changed?)",
				(int)len, name);
	if (im->meta.ndevices >= DEVICES_MAX)
		return imp_fail(im, "more than %u devices", DEVICES_MAX);
	/* the device table grows with the index, doubling (btape_meta_add_device grows by one:
	 * declaring N devices through it copies O(N^2) bytes) */
	if (t->nent == t->capent) {
		uint32_t cap = t->capent ? t->capent * 2 : 64;
		struct devent *e = realloc(t->ent, cap * sizeof(*e));
		struct btape_device *dv;

		if (!e)
			return imp_fail(im, "out of memory");
		t->ent = e;
		dv = realloc(im->meta.devices, cap * sizeof(*dv));
		if (!dv)
			return imp_fail(im, "out of memory");
		im->meta.devices = dv;
		t->capent = cap;
	}
	memcpy(d.name, name, len);
	d.dev_t_major = major;
	d.dev_t_minor = minor;
	d.rotational = -1;
	if (im->ndsz && len < sizeof(((struct devsize *)0)->name)) {
		/* sorted by name, each once (load_device_sizes); no id is 64 bytes or longer */
		struct devsize key, *hit;

		memcpy(key.name, name, len);
		key.name[len] = '\0';
		hit = bsearch(&key, im->dsz, im->ndsz, sizeof(*im->dsz), imp_devsize_cmp);
		if (hit)
			d.size_bytes = hit->bytes;
	}
	idx = (int)im->meta.ndevices++;
	im->meta.devices[idx] = d;
	t->ent[t->nent].hash = h;
	t->ent[t->nent].len = (uint32_t)len;
	t->nent++;
	if ((t->nent + 1) * 2 > t->cap) {
		if (devtab_grow(im))
			return imp_fail(im, "out of memory");
	} else {
		k = (uint32_t)h & (t->cap - 1);
		while (t->slots[k])
			k = (k + 1) & (t->cap - 1);
		t->slots[k] = (uint32_t)idx + 1;
	}
	t->last = (uint32_t)idx + 1;
	return idx;
}

/* ---- messages, emission ---- */

static void vmsg(struct imp *im, char *buf, size_t len, const char *fmt, va_list ap)
{
	int n;

	if (im->fmt == BTAPE_FMT_BLKTRACE || im->fmt == BTAPE_FMT_VSCSI)
		n = snprintf(buf, len, "%s: record %llu: ", im->file, (unsigned long long)im->line);
	else
		n = snprintf(buf, len, "%s:%llu: ", im->file, (unsigned long long)im->line);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(buf + n, len - (size_t)n, fmt, ap);
}

int imp_fail(struct imp *im, const char *fmt, ...)
{
	va_list ap;

	if (im->errmsg && im->errlen) {
		va_start(ap, fmt);
		vmsg(im, im->errmsg, im->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int imp_bad(struct imp *im, const char *fmt, ...)
{
	va_list ap;

	if (!im->skip_bad) {
		if (im->errmsg && im->errlen) {
			va_start(ap, fmt);
			vmsg(im, im->errmsg, im->errlen, fmt, ap);
			va_end(ap);
		}
		return -EINVAL;
	}
	if (im->st.skipped++ == 0) {
		va_start(ap, fmt);
		vmsg(im, im->st.first_skipped, sizeof(im->st.first_skipped), fmt, ap);
		va_end(ap);
	}
	return 0;
}

int imp_extent_check(struct imp *im, uint64_t sector, uint64_t bytes)
{
	if (btape_extent_ok(sector, bytes))
		return 1;
	return imp_bad(im,
		       "I/O at sector %llu of %llu bytes: past the limits of one I/O (at most "
		       "%llu bytes, ending by byte 2^63 - 1)",
		       (unsigned long long)sector, (unsigned long long)bytes,
		       (unsigned long long)BTAPE_BYTES_MAX);
}

int imp_emit(struct imp *im, const struct btape_event *ev)
{
	int err;

	err = imp_extent_check(im, ev->sector, ev->bytes);
	if (err <= 0)
		return err;
	if (im->pass == 1) {
		if (!im->have_events || ev->issue_ns < im->min_issue_ns)
			im->min_issue_ns = ev->issue_ns;
		if (ev->issue_ns > im->max_issue_ns)
			im->max_issue_ns = ev->issue_ns;
		else if (im->max_issue_ns - ev->issue_ns > im->max_late_ns)
			im->max_late_ns = im->max_issue_ns - ev->issue_ns;
		im->have_events = true;
		im->st.events++;
		return 0;
	}
	if (im->have_events && ev->issue_ns < im->watermark_ns)
		im->st.order_violations++;
	im->have_events = true;
	if (ev->issue_ns > im->max_issue_ns)
		im->max_issue_ns = ev->issue_ns;
	if (!im->w) { /* validation only */
		im->st.events++;
		return 0;
	}
	err = btape_writer__add(im->w, ev);
	if (err) /* the writer's errno (ENOSPC: exit 1), not bad input's EINVAL */
		return imp_fail(im, "writing the trace: %s", btape_writer__errmsg(im->w)), err;
	im->st.events++;
	if (im->st.events % ADVANCE_STEP_EVENTS == 0 && im->max_issue_ns >= im->reorder_window_ns) {
		uint64_t wm = im->max_issue_ns - im->reorder_window_ns;

		if (wm > im->watermark_ns) {
			im->watermark_ns = wm;
			err = btape_writer__advance(im->w, wm);
			if (err)
				return imp_fail(im, "writing the trace: %s",
						btape_writer__errmsg(im->w)),
				       err;
		}
	}
	return 0;
}
