// SPDX-License-Identifier: GPL-2.0-only
/*
 * biotape convert: import public block traces into .btape, export .btape to fio iolog v3,
 * blkparse-style text or CSV. The work is in libbiotape (format/interop); this is the CLI.
 */
#include "cli.h"
#include "commands.h"
#include "convert_merge.h"

#include "btape_interop.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: biotape convert IN [IN...] OUT [--from FMT] [--to FMT] [--skip-bad]\n"
		"                       [--device-size FILE] [--target FILE]\n"
		"                       [--reorder-window DUR] [--reorder-events N] [-q]\n"
		"       biotape convert --merge A.btape B.btape... OUT.btape [--align HOW] [-q]\n\n"
		"Import a public block trace into .btape, or export a .btape trace.\n"
		"The input format is detected from its content (magic numbers, header lines,\n"
		"column shapes); name it with --from where detection cannot tell. gzip and zstd\n"
		"inputs are read directly.\n\n"
		"import formats (--from): blktrace blkparse fio2 fio3 msr alibaba tencent umass fiu\n"
		"                         mqsim (disksim) vscsi csv (biotape's own)\n"
		"export formats (--to):   fio3 (fio iolog v3) blkparse csv; or btape (default when\n"
		"                         the input is a foreign trace)\n\n"
		"  --from FMT            input format (default: detected)\n"
		"  --to FMT              output format (default: btape for an import; for an export\n"
		"                        from OUT's extension: .iolog/.fio fio3, .csv csv,\n"
		"                        .txt/.blkparse blkparse)\n"
		"  --skip-bad            skip malformed lines and report how many (default: stop at\n"
		"                        the first, naming file and line, exit 2)\n"
		"  --device-size FILE    Alibaba device_size file (device_id,capacity_bytes)\n"
		"  --target FILE         fio export: the file or device every I/O is issued to\n"
		"                        (default: each device's name)\n"
		"  --reorder-window DUR  events may arrive this far out of issue order (default 2s)\n"
		"  --reorder-events N    bound of the reorder buffer (default 1048576 events)\n"
		"  -q, --quiet           no summary line\n"
		"  --merge               several hosts' .btape traces into one multi-host trace:\n"
		"                        on one timeline as biotape analyze places them (the files\n"
		"                        of one cluster recording on the reference host's clock),\n"
		"                        each device named with its host in the device table\n"
		"  --align HOW           with --merge: cluster, start, wall or none (see biotape\n"
		"                        analyze --help); default: cluster for one cluster recording\n\n"
		"blktrace: give every per-CPU file, or their prefix (sda.blktrace. reads\n"
		"sda.blktrace.0, sda.blktrace.1, ...); they are merged by time and the Q/D/C events\n"
		"of each request become one record.\n\n"
		"examples:\n"
		"  biotape convert CAMRESHMSA01-lvm0.csv.gz hm0.btape\n"
		"  biotape convert sda.blktrace. sda.btape\n"
		"  biotape convert --from alibaba --device-size device_size.csv io.csv ali.btape\n"
		"  biotape convert sda.btape replay.iolog --to fio3 --target /dev/loop0\n"
		"  biotape convert --merge trace-node1.btape trace-node2.btape cluster.btape\n"
		"  fio --name=replay --read_iolog=replay.iolog --ioengine=psync\n"
		"Rules for every format: docs/INTEROP.md.\n");
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static int export_fmt_of(const char *out)
{
	if (ends_with(out, ".iolog") || ends_with(out, ".fio"))
		return BTAPE_FMT_FIO3;
	if (ends_with(out, ".csv"))
		return BTAPE_FMT_CSV;
	if (ends_with(out, ".txt") || ends_with(out, ".blkparse"))
		return BTAPE_FMT_BLKPARSE;
	return BTAPE_FMT_UNKNOWN;
}

static int do_export(const char *in, const char *out, int to, const char *target, bool quiet)
{
	struct btape_export_opts eo = {.sz = sizeof(eo), .fmt = (unsigned int)to, .target = target};
	struct btape_export_stats st;
	struct btape_reader *r = NULL;
	struct cli_out o = {0};
	char err[BTAPE_ERRMSG_LEN];
	int ret;

	ret = btape_reader__open(&r, in, err, sizeof(err));
	if (ret) {
		cli_err("convert: %s", err);
		return cli_exit_status(ret);
	}
	ret = cli_out_open(&o, out);
	if (ret) {
		cli_err("convert: %s", o.why);
		btape_reader__close(r);
		return BTAPE_EXIT_FAIL;
	}
	ret = btape_export(r, o.fp, &eo, &st, err, sizeof(err));
	btape_reader__close(r);
	if (ret) {
		bool werr = o.fp && ferror(o.fp); /* before the abort closes it */

		cli_out_abort(&o);
		if (werr)
			cli_err("convert: %s: write error",
				strcmp(out, "-") ? out : "standard output");
		else /* "IN: what", the exporter's and the reader's alike */
			cli_err("convert: %s", err);
		return cli_exit_status(ret);
	}
	ret = cli_out_commit(&o);
	if (ret) {
		cli_err("convert: %s", o.why);
		return BTAPE_EXIT_FAIL;
	}
	if (st.skipped)
		cli_err("%s: %" PRIu64 " of %" PRIu64
			" events not exported: %s cannot express their operation",
			in, st.skipped, st.events, btape_fmt_name((unsigned int)to));
	if (!quiet && strcmp(out, "-"))
		printf("exported %" PRIu64 " events from %s to %s (%s)\n", st.written, in, out,
		       btape_fmt_name((unsigned int)to));
	return BTAPE_EXIT_OK;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"skip-bad", no_argument, NULL, 's'},
		{"device-size", required_argument, NULL, 'D'},
		{"target", required_argument, NULL, 'T'},
		{"reorder-window", required_argument, NULL, 'w'},
		{"reorder-events", required_argument, NULL, 'e'},
		{"quiet", no_argument, NULL, 'q'},
		{"merge", no_argument, NULL, 'm'},
		{"align", required_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct btape_import_opts io = {.sz = sizeof(io)};
	struct btape_import_stats st;
	const char *target = NULL, *out;
	int from = BTAPE_FMT_UNKNOWN, to = BTAPE_FMT_UNKNOWN, c, ret, ninputs;
	bool quiet = false, merge = false, align_given = false;
	enum an_align align = AN_ALIGN_AUTO;
	char err[1024];
	uint64_t v;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			from = btape_fmt_parse(optarg);
			if (from < 0 || !btape_fmt_can_import((unsigned int)from)) {
				cli_err("convert: --from %s: not an import format (see --help)",
					optarg);
				return BTAPE_EXIT_USAGE;
			}
			break;
		case 't':
			to = btape_fmt_parse(optarg);
			if (to < 0 ||
			    (to != BTAPE_FMT_BTAPE && !btape_fmt_can_export((unsigned int)to))) {
				cli_err("convert: --to %s: not an output format (btape, fio3, "
					"blkparse, csv)",
					optarg);
				return BTAPE_EXIT_USAGE;
			}
			break;
		case 's':
			io.skip_bad = true;
			break;
		case 'D':
			io.device_size_path = optarg;
			break;
		case 'T':
			target = optarg;
			break;
		case 'w':
			if (cli_parse_duration_ns(optarg, &v) || v == 0) {
				cli_err("convert: --reorder-window %s: not a duration", optarg);
				return BTAPE_EXIT_USAGE;
			}
			io.reorder_window_ns = v;
			break;
		case 'e':
			if (cli_parse_u64(optarg, &v) || v == 0) {
				cli_err("convert: --reorder-events %s: not a positive count",
					optarg);
				return BTAPE_EXIT_USAGE;
			}
			io.reorder_max_events = v;
			break;
		case 'q':
			quiet = true;
			break;
		case 'm':
			merge = true;
			break;
		case 'a':
			if (an_align_parse(optarg, &align)) {
				cli_err("convert: --align: '%s' is not auto, cluster, start, wall or "
					"none",
					optarg);
				return BTAPE_EXIT_USAGE;
			}
			align_given = true;
			break;
		case 'h':
			usage(stdout);
			return BTAPE_EXIT_OK;
		default:
			cli_err("convert: unknown option '%s' (see biotape convert --help)",
				argv[optind - 1]);
			return BTAPE_EXIT_USAGE;
		}
	}
	ninputs = argc - optind - 1;
	if (ninputs < 1) {
		cli_err("convert: expected IN and OUT (see biotape convert --help)");
		return BTAPE_EXIT_USAGE;
	}
	out = argv[argc - 1];
	for (int i = optind; i < argc - 1; i++) {
		if (!strcmp(argv[i], out) && strcmp(out, "-")) {
			cli_err("convert: %s is both input and output", out);
			return BTAPE_EXIT_USAGE;
		}
	}
	if ((ret = cli_out_check_inputs("convert", out, argv + optind, ninputs)))
		return ret;
	for (int i = optind; i < argc - 1; i++) { /* one input twice: its events twice */
		for (int j = optind; j < i; j++) {
			if (cli_same_file(argv[i], argv[j])) {
				cli_err("convert: %s and %s are the same file: an input given twice",
					argv[j], argv[i]);
				return BTAPE_EXIT_USAGE;
			}
		}
	}
	if (io.device_size_path &&
	    (ret = cli_out_check_inputs("convert", out, (char *const *)&io.device_size_path, 1)))
		return ret; /* --device-size FILE is read too */

	if (align_given && !merge) {
		cli_err("convert: --align applies to --merge only");
		return BTAPE_EXIT_USAGE;
	}
	if (merge) {
		if (from != BTAPE_FMT_UNKNOWN || to != BTAPE_FMT_UNKNOWN || target ||
		    io.skip_bad || io.device_size_path) {
			cli_err("convert: --merge reads .btape traces and writes one: no --from, "
				"--to, --target, --skip-bad or --device-size");
			return BTAPE_EXIT_USAGE;
		}
		if (!strcmp(out, "-")) {
			cli_err("convert: the .btape output must be a file");
			return BTAPE_EXIT_USAGE;
		}
		ret = cli_out_check("convert", out);
		if (ret)
			return ret;
		return cli_convert_merge(argv + optind, ninputs, out, align, quiet);
	}

	/* direction: a .btape input is exported, anything else imported */
	if (from == BTAPE_FMT_UNKNOWN) {
		int d = btape_fmt_detect_file(argv[optind], err, sizeof(err));

		if (d == BTAPE_FMT_BTAPE)
			from = BTAPE_FMT_BTAPE;
	}
	if (from == BTAPE_FMT_BTAPE) {
		if (ninputs != 1) {
			cli_err("convert: export reads one .btape file, got %d inputs", ninputs);
			return BTAPE_EXIT_USAGE;
		}
		if (to == BTAPE_FMT_UNKNOWN)
			to = export_fmt_of(out);
		if (to == BTAPE_FMT_UNKNOWN || to == BTAPE_FMT_BTAPE) {
			cli_err("convert: %s is already a .btape trace: name the output format with "
				"--to fio3, blkparse or csv",
				argv[optind]);
			return BTAPE_EXIT_USAGE;
		}
		/* options an export would ignore are refused, not dropped */
		if (target && to != BTAPE_FMT_FIO3) {
			cli_err("convert: --target applies to a fio export only");
			return BTAPE_EXIT_USAGE;
		}
		if (io.device_size_path || io.skip_bad) {
			cli_err("convert: %s applies to an import only",
				io.skip_bad ? "--skip-bad" : "--device-size");
			return BTAPE_EXIT_USAGE;
		}
		return do_export(argv[optind], out, to, target, quiet);
	}
	if (to != BTAPE_FMT_UNKNOWN && to != BTAPE_FMT_BTAPE) {
		cli_err("convert: --to %s needs a .btape input: import to .btape first",
			btape_fmt_name((unsigned int)to));
		return BTAPE_EXIT_USAGE;
	}
	if (target) {
		cli_err("convert: --target applies to a fio export only");
		return BTAPE_EXIT_USAGE;
	}
	if (!strcmp(out, "-")) {
		cli_err("convert: the .btape output must be a file");
		return BTAPE_EXIT_USAGE;
	}
	ret = cli_out_check("convert", out); /* before a pass over the input */
	if (ret)
		return ret;
	io.fmt = (unsigned int)from;
	ret = btape_import((const char *const *)argv + optind, (size_t)ninputs, out, &io, &st, err,
			   sizeof(err));
	if (ret) {
		cli_err("convert: %s", err);
		return cli_exit_status(ret);
	}
	if (st.skipped)
		cli_err("convert: skipped %" PRIu64 " malformed %s (first: %s)", st.skipped,
			st.format == BTAPE_FMT_BLKTRACE || st.format == BTAPE_FMT_VSCSI ? "records"
											: "lines",
			st.first_skipped);
	if (st.order_violations)
		cli_err("convert: %" PRIu64 " events arrived later than the reorder window allowed "
			"and are out of issue order in %s: raise --reorder-window / "
			"--reorder-events",
			st.order_violations, out);
	if (st.unmatched || st.inconsistent)
		cli_info(0,
			 "convert: %" PRIu64 " unmatched or unfinished requests, %" PRIu64
			 " with times out of order (marked absent)",
			 st.unmatched, st.inconsistent);
	if (st.evicted)
		cli_info(0,
			 "convert: %" PRIu64 " of them given up before their end: more than %u "
			 "requests were in flight (the least recently active went first)",
			 st.evicted, BTAPE_IMPORT_INFLIGHT_MAX);
	if (!quiet)
		printf("imported %" PRIu64 " I/Os on %u devices from %s (%s) to %s; %" PRIu64
		       " skipped\n",
		       st.events, st.devices, argv[optind], btape_fmt_name(st.format), out,
		       st.skipped);
	return BTAPE_EXIT_OK;
}
