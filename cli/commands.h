/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The subcommands cli/ owns. Each takes argv with argv[0] the command name and returns the
 * process exit status (BTAPE_EXIT_*). The modules declare their own: recorder/cmd_record.h,
 * replayer/cmd_replay.h, analyze/cmd_analyze.h.
 */
#ifndef BIOTAPE_COMMANDS_H
#define BIOTAPE_COMMANDS_H

int cmd_convert(int argc, char **argv); /* cli/cmd_convert.c over format/interop */
int cmd_info(int argc, char **argv);    /* cli/cmd_info.c */
int cmd_dump(int argc, char **argv);    /* cli/cmd_dump.c */

#endif
