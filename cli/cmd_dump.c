// SPDX-License-Identifier: GPL-2.0-only
/* biotape dump: a trace's events, one per line, as text, CSV or JSON lines. */
#include "btape.h"
#include "btape_interop.h"
#include "cli.h"
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

enum dump_style { STYLE_TEXT, STYLE_CSV, STYLE_JSON };

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: biotape dump [--csv | --json] [--from T] [--to T] [--limit N] FILE\n\n"
		"Prints the events of a trace in issue order, one per line.\n\n"
		"  --csv        CSV with a header line; absent fields are empty\n"
		"  --json       JSON lines; absent fields are left out\n"
		"  --from T     start at T after the first event (e.g. 1.5s, 200ms)\n"
		"  --to T       stop before T after the first event\n"
		"  --limit N    print at most N events\n\n"
		"CSV columns: issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,flags,error,pid,tid,\n"
		"comm,cgroup,cpu,qd (times in ns of the recording host's CLOCK_MONOTONIC).\n"
		"Text and JSON also show when the submitting thread last woke from a sleep\n"
		"(record --waits): text \"woke T before, slept S\", JSON wake_ns, slept_ns.\n\n"
		"examples:\n"
		"  biotape dump samples/fio-mixed.btape | head\n"
		"  biotape dump --csv --from 2s --to 3s trace.btape > second3.csv\n");
}

#define HAS(ev, bit) (((ev)->present & (bit)) != 0)

static void dump_text(FILE *fp, const struct btape_event *ev, const struct btape_meta *meta,
		      uint64_t t0)
{
	char flags[32], lat[32], safe[BTAPE_NAME_MAX];
	/* text for a person (a terminal): a name in the trace cannot drive it (cli_text_safe());
	 * CSV keeps every byte, JSON escapes them */
	const char *dev = ev->dev < meta->ndevices
				  ? cli_text_safe(meta->devices[ev->dev].name, safe, sizeof(safe))
				  : "?";
	uint64_t rel = ev->issue_ns > t0 ? ev->issue_ns - t0 : 0;

	fprintf(fp, "%5" PRIu64 ".%09" PRIu64 " %-10s %-12s %14" PRIu64 " + %-8" PRIu64, rel / 1000000000u,
		rel % 1000000000u, dev, btape_op_name(ev->op), ev->sector, ev->bytes / 512);
	if (ev->bytes % 512)
		fprintf(fp, " (%" PRIu64 " B)", ev->bytes);
	if (HAS(ev, BTAPE_HAS_FLAGS) && ev->flags)
		fprintf(fp, " [%s]", btape_flags_str(ev->flags, flags, sizeof(flags)));
	if (HAS(ev, BTAPE_HAS_COMPLETE))
		fprintf(fp, " lat %s", cli_fmt_ns(ev->complete_ns - ev->issue_ns, lat, sizeof(lat)));
	if (HAS(ev, BTAPE_HAS_INSERT))
		fprintf(fp, " queued %s", cli_fmt_ns(ev->issue_ns - ev->insert_ns, lat, sizeof(lat)));
	if (HAS(ev, BTAPE_HAS_QD))
		fprintf(fp, " qd %" PRIu32, ev->qd);
	if (HAS(ev, BTAPE_HAS_WAKE)) {
		char sl[32];
		bool before = ev->wake_ns <= ev->issue_ns;

		fprintf(fp, " woke %s %s, slept %s",
			cli_fmt_ns(before ? ev->issue_ns - ev->wake_ns : ev->wake_ns - ev->issue_ns,
				   lat, sizeof(lat)),
			before ? "before" : "after", cli_fmt_ns(ev->slept_ns, sl, sizeof(sl)));
	}
	if (HAS(ev, BTAPE_HAS_COMM) || HAS(ev, BTAPE_HAS_PID)) {
		fputs(" ", fp);
		if (HAS(ev, BTAPE_HAS_COMM))
			fputs(cli_text_safe(ev->comm, safe, sizeof(safe)), fp);
		if (HAS(ev, BTAPE_HAS_PID))
			fprintf(fp, "[%" PRIu32 "]", ev->pid);
	}
	if (HAS(ev, BTAPE_HAS_ERROR) && ev->error)
		fprintf(fp, " error %s", strerror(-ev->error));
	fputc('\n', fp);
}

static void dump_json(FILE *fp, const struct btape_event *ev, const struct btape_meta *meta)
{
	char flags[32];

	fprintf(fp, "{\"issue_ns\":%" PRIu64, ev->issue_ns);
	if (HAS(ev, BTAPE_HAS_COMPLETE))
		fprintf(fp, ",\"complete_ns\":%" PRIu64, ev->complete_ns);
	if (HAS(ev, BTAPE_HAS_INSERT))
		fprintf(fp, ",\"insert_ns\":%" PRIu64, ev->insert_ns);
	fprintf(fp, ",\"dev\":%" PRIu32, ev->dev);
	if (ev->dev < meta->ndevices) {
		fputs(",\"dev_name\":", fp);
		cli_json_str(fp, meta->devices[ev->dev].name);
	}
	fprintf(fp, ",\"sector\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"op\":\"%s\"", ev->sector,
		ev->bytes, btape_op_name(ev->op));
	if (HAS(ev, BTAPE_HAS_FLAGS))
		fprintf(fp, ",\"flags\":\"%s\"", btape_flags_str(ev->flags, flags, sizeof(flags)));
	if (HAS(ev, BTAPE_HAS_ERROR))
		fprintf(fp, ",\"error\":%" PRId32, ev->error);
	if (HAS(ev, BTAPE_HAS_PID))
		fprintf(fp, ",\"pid\":%" PRIu32, ev->pid);
	if (HAS(ev, BTAPE_HAS_TID))
		fprintf(fp, ",\"tid\":%" PRIu32, ev->tid);
	if (HAS(ev, BTAPE_HAS_COMM)) {
		fputs(",\"comm\":", fp);
		cli_json_str(fp, ev->comm);
	}
	if (HAS(ev, BTAPE_HAS_CGROUP))
		fprintf(fp, ",\"cgroup\":%" PRIu64, ev->cgroup);
	if (HAS(ev, BTAPE_HAS_CPU))
		fprintf(fp, ",\"cpu\":%" PRIu32, ev->cpu);
	if (HAS(ev, BTAPE_HAS_QD))
		fprintf(fp, ",\"qd\":%" PRIu32, ev->qd);
	if (HAS(ev, BTAPE_HAS_WAKE))
		fprintf(fp, ",\"wake_ns\":%" PRIu64 ",\"slept_ns\":%" PRIu64, ev->wake_ns,
			ev->slept_ns);
	fputs("}\n", fp);
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "csv", no_argument, NULL, 'c' },   { "json", no_argument, NULL, 'j' },
		{ "from", required_argument, NULL, 'f' }, { "to", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum dump_style style = STYLE_TEXT;
	uint64_t from = 0, to = UINT64_MAX, limit = UINT64_MAX, printed = 0;
	struct btape_reader *r = NULL;
	struct btape_summary sum = {.sz = sizeof(sum)};
	char errmsg[BTAPE_ERRMSG_LEN];
	const struct btape_meta *meta;
	int c, err, ret = BTAPE_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			style = STYLE_CSV;
			break;
		case 'j':
			style = STYLE_JSON;
			break;
		case 'f':
		case 't':
			if (cli_parse_duration_ns(optarg, c == 'f' ? &from : &to)) {
				cli_err("dump: bad --%s '%s' (expected a duration like 1.5s or 200ms)",
					c == 'f' ? "from" : "to", optarg);
				return BTAPE_EXIT_USAGE;
			}
			break;
		case 'n':
			if (cli_parse_u64(optarg, &limit)) {
				cli_err("dump: bad --limit '%s' (expected a count)", optarg);
				return BTAPE_EXIT_USAGE;
			}
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
		cli_err("dump: expected one trace file (see biotape dump --help)");
		return BTAPE_EXIT_USAGE;
	}
	if (from > to) {
		cli_err("dump: --from is after --to");
		return BTAPE_EXIT_USAGE;
	}
	err = btape_reader__open(&r, argv[optind], errmsg, sizeof(errmsg));
	if (err) {
		cli_err("dump: %s", errmsg);
		return cli_exit_status(err);
	}
	meta = btape_reader__meta(r);
	err = btape_reader__summary(r, &sum);
	if (err) {
		cli_err("dump: %s", btape_reader__errmsg(r));
		ret = cli_exit_status(err);
		goto cleanup;
	}
	if (from && sum.events) {
		err = btape_reader__seek(r, sum.first_issue_ns + from);
		if (err < 0) {
			cli_err("dump: %s", btape_reader__errmsg(r));
			ret = cli_exit_status(err);
			goto cleanup;
		}
	}
	if (style == STYLE_CSV)
		fputs(btape_csv_header, stdout);
	while (printed < limit) {
		const struct btape_event *evs;
		int n = btape_reader__next_batch(r, &evs);

		if (n < 0) {
			fflush(stdout);
			cli_err("dump: %s", btape_reader__errmsg(r));
			ret = cli_exit_status(n);
			goto cleanup;
		}
		if (n == 0)
			break;
		for (int i = 0; i < n && printed < limit; i++) {
			const struct btape_event *ev = &evs[i];
			uint64_t rel = ev->issue_ns > sum.first_issue_ns ?
					       ev->issue_ns - sum.first_issue_ns : 0;

			if (rel < from)
				continue;
			if (rel >= to)
				goto done;
			switch (style) {
			case STYLE_TEXT:
				dump_text(stdout, ev, meta, sum.first_issue_ns);
				break;
			case STYLE_CSV:
				btape_csv_write_event(stdout, ev);
				break;
			case STYLE_JSON:
				dump_json(stdout, ev, meta);
				break;
			}
			printed++;
		}
	}
done:
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			cli_err("dump: writing output: %s", strerror(errno));
		ret = BTAPE_EXIT_FAIL;
	}
cleanup:
	btape_reader__close(r);
	return ret;
}
