/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The subcommands analyze/ owns, dispatched by cli/main.c: argv[0] is the command name;
 * the return value is the process exit status (BTAPE_EXIT_*).
 */
#ifndef BIOTAPE_CMD_ANALYZE_H
#define BIOTAPE_CMD_ANALYZE_H

int cmd_analyze(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_compare(int argc, char **argv);

#endif
