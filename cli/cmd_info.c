// SPDX-License-Identifier: GPL-2.0-only
/* biotape info: what a trace holds and whether it is intact. */
#include "btape.h"
#include "cli.h"
#include "commands.h"
#include "mpjson.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

static void usage(FILE *fp)
{
	fprintf(fp, "usage: biotape info [--json] [--no-verify] FILE\n\n"
		    "Shows a trace's metadata, device table, counts and bytes per op, time span,\n"
		    "size on disk and per event, lost events, and integrity: every frame's checksum\n"
		    "is verified (skip with --no-verify) and a file without its footer (a recorder\n"
		    "that was killed) is reported as recovered; then the footer tags (a replay\n"
		    "result's fidelity section; --json: footer_tags).\n\n"
		    "  --json        machine-readable output\n"
		    "  --no-verify   trust the footer; do not decode every frame\n\n"
		    "examples:\n"
		    "  biotape info samples/fio-mixed.btape\n"
		    "  biotape info --json trace.btape | jq .events\n");
}

static const char *fmt_wall(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;

	if (!real_ns || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	char day[32];

	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03u UTC", day, (unsigned int)(real_ns % 1000000000u / 1000000u));
	return buf;
}

/* Wall-clock time of a monotonic timestamp, through the trace's clock anchor. */
static uint64_t mono_to_real(const struct btape_meta *m, uint64_t mono)
{
	if (!m->clock_real_ns)
		return 0;
	return m->clock_real_ns + (mono - m->clock_mono_ns);
}

/* One device's cells of the info table. */
struct devcells {
	char idx[16], devt[24], size[64], bs[24];
	char name[2 * BTAPE_NAME_MAX]; /* "host:name" in a multi-host trace */
};

static void dev_cells(const struct btape_meta *m, uint32_t i, struct devcells *c)
{
	const struct btape_device *d = &m->devices[i];

	snprintf(c->idx, sizeof(c->idx), "%u", i);
	snprintf(c->name, sizeof(c->name), "%s%s%s", d->host, d->host[0] ? ":" : "", d->name);
	if (d->dev_t_major || d->dev_t_minor)
		snprintf(c->devt, sizeof(c->devt), "%u:%u", d->dev_t_major, d->dev_t_minor);
	else
		snprintf(c->devt, sizeof(c->devt), "-");
	if (d->size_bytes)
		cli_fmt_bytes(d->size_bytes, c->size, sizeof(c->size));
	else
		snprintf(c->size, sizeof(c->size), "-");
	if (d->logical_block)
		snprintf(c->bs, sizeof(c->bs), "%u/%u", d->logical_block, d->physical_block);
	else
		snprintf(c->bs, sizeof(c->bs), "-");
}

static int widest(int w, const char *s)
{
	int n = (int)strlen(s);

	return n > w ? n : w;
}

/* The device table, its columns as wide as their widest cell (names can be long file names). */
static void print_devices(FILE *fp, const struct btape_meta *m)
{
	int wi = 3, wn = 4, wd = 5, ws = 4, wb = 7; /* "#", "name", "dev_t", "size", "lbs/pbs" */
	struct devcells c;

	for (uint32_t i = 0; i < m->ndevices; i++) {
		dev_cells(m, i, &c);
		wi = widest(wi, c.idx);
		wn = widest(wn, c.name);
		wd = widest(wd, c.devt);
		ws = widest(ws, c.size);
		wb = widest(wb, c.bs);
	}
	fprintf(fp, "\ndevices:\n  %*s %-*s %-*s %*s %*s %4s  %s\n", wi, "#", wn, "name", wd,
		"dev_t", ws, "size", wb, "lbs/pbs", "rot", "model");
	for (uint32_t i = 0; i < m->ndevices; i++) {
		const struct btape_device *d = &m->devices[i];
		const char *rot = d->rotational < 0 ? "-" : d->rotational ? "yes" : "no";

		dev_cells(m, i, &c);
		fprintf(fp, "  %*s %-*s %-*s %*s %*s %4s  %s\n", wi, c.idx, wn, c.name, wd, c.devt,
			ws, c.size, wb, c.bs, rot, d->model[0] ? d->model : "-");
	}
}

/* The cluster clock (docs/BTAPE-FORMAT.md, "cluster"), when the trace has one. */
static void print_cluster_text(FILE *fp, const struct btape_meta *m)
{
	const struct btape_cluster *cl = &m->cluster;
	char b1[64], b2[64];

	if (!cl->id[0])
		return;
	fprintf(fp, "cluster:    recording %s, rank %u of %u, reference host %s\n", cl->id,
		cl->rank, cl->ranks, cl->reference[0] ? cl->reference : "?");
	for (uint32_t i = 0; i < cl->nsync && i < BTAPE_CLOCK_SYNC_MAX; i++) {
		const struct btape_clock_sync *y = &cl->sync[i];
		int64_t o = y->offset_ns;
		uint64_t mag = o < 0 ? 0 - (uint64_t)o : (uint64_t)o;

		fprintf(fp, "clock %-5s %c%s +- %s to the reference at %" PRIu64 " ns (%s)\n",
			i == 0 ? "start" : "stop", o < 0 ? '-' : '+',
			cli_fmt_ns(mag, b1, sizeof(b1)),
			cli_fmt_ns(y->uncertainty_ns, b2, sizeof(b2)), y->local_ns,
			cl->method[0] ? cl->method : "method unknown");
	}
	if (cl->nsync >= 2)
		fprintf(fp, "drift:      %+.3f ppm against the reference\n",
			btape_cluster_drift_ppm(cl));
}

/* The footer tags (a replay's fidelity section): each under its key, its members a line. */
static void print_footer_tags_text(FILE *fp, struct btape_reader *r)
{
	const char *key;
	const void *v;
	size_t len;

	for (uint32_t i = 0; btape_reader__footer_tag_at(r, i, &key, &v, &len) == 1; i++) {
		if (!i)
			fprintf(fp, "\nfooter tags:\n");
		fprintf(fp, "  %s:\n", key);
		if (mpjson_text(fp, v, len, "    "))
			fprintf(fp, "    (%zu bytes, not one msgpack value)\n", len);
	}
}

static void print_text(FILE *fp, struct btape_reader *r, const char *path,
		       const struct btape_meta *m, const struct btape_summary *s, int verify_err,
		       const char *verify_msg)
{
	char b1[64], b2[64], b3[64];
	uint64_t span = s->events ? s->last_issue_ns - s->first_issue_ns : 0;

	fprintf(fp, "file:       %s\n", path);
	fprintf(fp, "size:       %s (%" PRIu64 " bytes",
		cli_fmt_bytes(s->file_bytes, b1, sizeof(b1)), s->file_bytes);
	if (s->events)
		fprintf(fp, ", %.2f bytes/event", (double)s->file_bytes / (double)s->events);
	fprintf(fp, ")\n");
	fprintf(fp, "written by: %s\n", m->tool[0] ? m->tool : "unknown");
	fprintf(fp, "source:     %s\n", m->source[0] ? m->source : "unknown");
	if (m->capture[0])
		fprintf(fp, "capture:    %s\n", m->capture);
	if (m->hostname[0] || m->kernel[0])
		fprintf(fp, "host:       %s, kernel %s\n", m->hostname[0] ? m->hostname : "?",
			m->kernel[0] ? m->kernel : "?");
	print_cluster_text(fp, m);
	if (s->events) {
		fprintf(fp, "recorded:   %s .. %s\n",
			fmt_wall(mono_to_real(m, s->first_issue_ns), b1, sizeof(b1)),
			fmt_wall(mono_to_real(m, s->last_issue_ns), b2, sizeof(b2)));
		fprintf(fp, "span:       %s (first issue %" PRIu64 " ns, last %" PRIu64 " ns)\n",
			cli_fmt_ns(span, b3, sizeof(b3)), s->first_issue_ns, s->last_issue_ns);
	}
	fprintf(fp, "events:     %" PRIu64 " in %" PRIu64 " chunks\n", s->events, s->chunks);
	fprintf(fp,
		"lost:       %" PRIu64 " (ring buffer %" PRIu64 ", in-flight map %" PRIu64
		", writer %" PRIu64 ")\n",
		s->lost_events, s->lost_ringbuf, s->lost_inflight, s->lost_writer);
	if (s->order_violations)
		fprintf(fp, "order:      %" PRIu64 " events are out of issue order\n",
			s->order_violations);
	if (s->interrupted)
		fprintf(fp, "stopped:    early: the run that wrote it was interrupted\n");
	if (verify_err == 1)
		fprintf(fp, "integrity:  not verified (--no-verify)");
	else if (verify_err)
		fprintf(fp, "integrity:  DAMAGED: %s", verify_msg);
	else
		fprintf(fp, "integrity:  every frame's checksum verified");
	if (s->footer_damaged)
		fprintf(fp, "; the footer is damaged: summary recomputed from the events");
	else if (!s->has_footer || s->recovered)
		fprintf(fp,
			"; recovered: no footer (the writer did not finish), %" PRIu64
			" trailing bytes ignored",
			s->recovered_bytes_ignored);
	fprintf(fp, "\n");

	print_devices(fp, m);

	fprintf(fp, "\nops:\n  %-14s %12s %7s %12s\n", "op", "count", "share", "bytes");
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		if (!s->count_by_op[op])
			continue;
		fprintf(fp, "  %-14s %12" PRIu64 " %6.2f%% %12s\n", btape_op_name(op),
			s->count_by_op[op], 100.0 * (double)s->count_by_op[op] / (double)s->events,
			cli_fmt_bytes(s->bytes_by_op[op], b1, sizeof(b1)));
	}
	if (!s->events)
		fprintf(fp, "  (no events)\n");
	if (m->ntags) {
		fprintf(fp, "\ntags:\n");
		for (uint32_t i = 0; i < m->ntags; i++)
			fprintf(fp, "  %s=%s\n", m->tags[i].key, m->tags[i].value);
	}
	print_footer_tags_text(fp, r);
}

static void json_kv_str(const char *key, const char *v, bool comma)
{
	printf("\"%s\":", key);
	cli_json_str(stdout, v);
	if (comma)
		putchar(',');
}

static void print_cluster_json(const struct btape_cluster *cl)
{
	printf("\"cluster\":{");
	json_kv_str("id", cl->id, true);
	json_kv_str("reference", cl->reference, true);
	json_kv_str("method", cl->method, true);
	printf("\"rank\":%u,\"ranks\":%u,\"sync\":[", cl->rank, cl->ranks);
	for (uint32_t i = 0; i < cl->nsync && i < BTAPE_CLOCK_SYNC_MAX; i++)
		printf("%s{\"local_ns\":%" PRIu64 ",\"offset_ns\":%" PRId64
		       ",\"uncertainty_ns\":%" PRIu64 "}",
		       i ? "," : "", cl->sync[i].local_ns, cl->sync[i].offset_ns,
		       cl->sync[i].uncertainty_ns);
	printf("],\"drift_ppm\":%.6f},", btape_cluster_drift_ppm(cl));
}

static void print_json(struct btape_reader *r, const char *path, const struct btape_meta *m,
		       const struct btape_summary *s, int verify_err, const char *verify_msg)
{
	bool first = true;

	putchar('{');
	json_kv_str("file", path, true);
	printf("\"file_bytes\":%" PRIu64 ",", s->file_bytes);
	printf("\"bytes_per_event\":%.4f,",
	       s->events ? (double)s->file_bytes / (double)s->events : 0.0);
	json_kv_str("tool", m->tool, true);
	json_kv_str("source", m->source, true);
	json_kv_str("capture", m->capture, true);
	json_kv_str("hostname", m->hostname, true);
	json_kv_str("kernel", m->kernel, true);
	printf("\"clock\":{\"mono_ns\":%" PRIu64 ",\"real_ns\":%" PRIu64 "},", m->clock_mono_ns,
	       m->clock_real_ns);
	if (m->cluster.id[0])
		print_cluster_json(&m->cluster);
	printf("\"events\":%" PRIu64 ",\"chunks\":%" PRIu64 ",", s->events, s->chunks);
	printf("\"first_issue_ns\":%" PRIu64 ",\"last_issue_ns\":%" PRIu64
	       ",\"last_complete_ns\":%" PRIu64 ",",
	       s->first_issue_ns, s->last_issue_ns, s->last_complete_ns);
	printf("\"lost\":{\"total\":%" PRIu64 ",\"ringbuf\":%" PRIu64 ",\"inflight\":%" PRIu64
	       ",\"writer\":%" PRIu64 "},",
	       s->lost_events, s->lost_ringbuf, s->lost_inflight, s->lost_writer);
	printf("\"order_violations\":%" PRIu64 ",", s->order_violations);
	printf("\"integrity\":{\"verified\":%s,\"damaged\":%s,", verify_err == 0 ? "true" : "false",
	       verify_err && verify_err != 1 ? "true" : "false");
	json_kv_str("error", verify_err && verify_err != 1 ? verify_msg : NULL, true);
	printf("\"has_footer\":%s,\"footer_damaged\":%s,\"recovered\":%s,"
	       "\"recovered_bytes_ignored\":%" PRIu64 ",\"interrupted\":%s},",
	       s->has_footer ? "true" : "false", s->footer_damaged ? "true" : "false",
	       s->recovered ? "true" : "false", s->recovered_bytes_ignored,
	       s->interrupted ? "true" : "false");
	printf("\"devices\":[");
	for (uint32_t i = 0; i < m->ndevices; i++) {
		const struct btape_device *d = &m->devices[i];

		printf("%s{\"index\":%u,", i ? "," : "", i);
		json_kv_str("name", d->name, true);
		printf("\"major\":%u,\"minor\":%u,\"size_bytes\":%" PRIu64
		       ",\"logical_block\":%u,\"physical_block\":%u,",
		       d->dev_t_major, d->dev_t_minor, d->size_bytes, d->logical_block,
		       d->physical_block);
		if (d->rotational >= 0)
			printf("\"rotational\":%s,", d->rotational ? "true" : "false");
		if (d->host[0])
			json_kv_str("host", d->host, true);
		json_kv_str("model", d->model, false);
		putchar('}');
	}
	printf("],\"ops\":{");
	for (unsigned int op = 0; op < BTAPE_OP__COUNT; op++) {
		if (!s->count_by_op[op])
			continue;
		printf("%s\"%s\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", first ? "" : ",",
		       btape_op_name(op), s->count_by_op[op], s->bytes_by_op[op]);
		first = false;
	}
	printf("},\"tags\":{");
	for (uint32_t i = 0; i < m->ntags; i++) {
		if (i)
			putchar(',');
		cli_json_str(stdout, m->tags[i].key);
		putchar(':');
		cli_json_str(stdout, m->tags[i].value);
	}
	printf("},\"footer_tags\":{");
	{
		const char *key;
		const void *v;
		size_t len;

		for (uint32_t i = 0; btape_reader__footer_tag_at(r, i, &key, &v, &len) == 1; i++) {
			if (i)
				putchar(',');
			cli_json_str(stdout, key);
			putchar(':');
			if (mpjson_write(stdout, v, len))
				fputs("null", stdout);
		}
	}
	printf("}}\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-verify", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct btape_reader *r = NULL;
	struct btape_summary sum = {.sz = sizeof(sum)};
	char errmsg[BTAPE_ERRMSG_LEN];
	const char *path;
	char verify_msg[512] = "";
	bool json = false, verify = true;
	int c, err, verify_err = 0, ret = BTAPE_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'n':
			verify = false;
			break;
		case 'h':
			usage(stdout);
			return BTAPE_EXIT_OK;
		default:
			usage(stderr);
			return BTAPE_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		cli_err("info: expected one trace file (see biotape info --help)");
		return BTAPE_EXIT_USAGE;
	}
	path = argv[optind];
	err = btape_reader__open(&r, path, errmsg, sizeof(errmsg));
	if (err) {
		cli_err("info: %s", errmsg);
		return cli_exit_status(err);
	}
	err = btape_reader__summary(r, &sum);
	if (err) {
		cli_err("info: %s", btape_reader__errmsg(r));
		ret = cli_exit_status(err);
		goto cleanup;
	}
	if (verify) {
		err = btape_reader__verify(r);
		if (err) {
			verify_err = err;
			snprintf(verify_msg, sizeof(verify_msg), "%s", btape_reader__errmsg(r));
		}
	} else {
		verify_err = 1;
	}
	if (json)
		print_json(r, path, btape_reader__meta(r), &sum, verify_err, verify_msg);
	else {
		/* text for a person (a terminal): the trace's names cannot drive it */
		FILE *fp = cli_text_stream(stdout);

		if (!fp) {
			cli_err("info: out of memory");
			ret = BTAPE_EXIT_FAIL;
			goto cleanup;
		}
		print_text(fp, r, path, btape_reader__meta(r), &sum, verify_err, verify_msg);
		if ((fclose(fp) || fflush(stdout) || ferror(stdout)) && errno != EPIPE) {
			cli_err("info: writing stdout: %s", strerror(errno ? errno : EIO));
			ret = BTAPE_EXIT_FAIL;
		}
	}
	if (verify_err < 0) {
		cli_err("info: damaged trace: %s", verify_msg);
		ret = BTAPE_EXIT_USAGE;
	}
cleanup:
	btape_reader__close(r);
	return ret;
}
