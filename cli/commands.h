/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The subcommands of `biotape`. Each module owns its command; each takes argv with argv[0]
 * the command name and returns the process exit status (BTAPE_EXIT_*).
 */
#ifndef BIOTAPE_COMMANDS_H
#define BIOTAPE_COMMANDS_H

int cmd_record(int argc, char **argv);  /* recorder/ */
int cmd_replay(int argc, char **argv);  /* replayer/ */
int cmd_analyze(int argc, char **argv); /* analyze/ */
int cmd_profile(int argc, char **argv); /* analyze/ */
int cmd_compare(int argc, char **argv); /* analyze/ */
int cmd_convert(int argc, char **argv); /* cli/cmd_convert.c over format/interop */
int cmd_info(int argc, char **argv);    /* cli/cmd_info.c */
int cmd_dump(int argc, char **argv);    /* cli/cmd_dump.c */

#endif
