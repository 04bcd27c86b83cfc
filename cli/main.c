// SPDX-License-Identifier: GPL-2.0-only
/* biotape: record, analyze and replay block I/O. One binary, subcommands as in git or perf. */
#include "cli.h"
#include "cmd_analyze.h"
#include "cmd_record.h"
#include "cmd_replay.h"
#include "commands.h"

#include "btape.h"

#include <stdio.h>
#include <string.h>

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "record", cmd_record, "capture every block request of this system with eBPF" },
	{ "analyze", cmd_analyze, "characterise a workload: sizes, mix, locality, latency, depth" },
	{ "profile", cmd_profile, "write a fio job file that reproduces a trace's workload" },
	{ "compare", cmd_compare, "compare two traces side by side (e.g. a recording and its replay)" },
	{ "replay", cmd_replay, "reissue a trace against other storage with io_uring" },
	{ "convert", cmd_convert, "import public trace formats, export fio iolog / text / CSV" },
	{ "info", cmd_info, "show a trace's metadata, devices, counts and integrity" },
	{ "dump", cmd_dump, "print a trace's events as text, CSV or JSON lines" },
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: biotape [-v] [--version] [--help] <command> [<args>]\n\n"
		    "Record real block I/O with eBPF, analyze it, and replay it on other storage.\n\n"
		    "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "\n'biotape <command> --help' shows a command's options and examples.\n"
		    "Exit status: 0 success, 1 failure, 2 usage error or bad input.\n"
		    "See biotape(1) and docs/ for the trace format and the analysis definitions.\n");
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
			cli_verbose++;
		} else if (strcmp(argv[i], "-vv") == 0) {
			cli_verbose += 2;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("biotape %s (trace format %d.%d)\n", BIOTAPE_VERSION,
			       BTAPE_FORMAT_VERSION_MAJOR, BTAPE_FORMAT_VERSION_MINOR);
			return BTAPE_EXIT_OK;
		} else if (cli_is_help(argv[i])) {
			usage(stdout);
			return BTAPE_EXIT_OK;
		} else {
			cli_err("unknown option '%s' (see biotape --help)", argv[i]);
			return BTAPE_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return BTAPE_EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		if (i + 1 < argc) {
			for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
				if (strcmp(argv[i + 1], commands[c].name) == 0) {
					char *hargv[] = { argv[i + 1], "--help", NULL };

					return commands[c].fn(2, hargv);
				}
			}
		}
		usage(stdout);
		return BTAPE_EXIT_OK;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (strcmp(argv[i], commands[c].name) == 0)
			return commands[c].fn(argc - i, argv + i);
	}
	cli_err("unknown command '%s' (see biotape --help)", argv[i]);
	return BTAPE_EXIT_USAGE;
}
