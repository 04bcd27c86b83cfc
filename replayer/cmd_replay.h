/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The subcommand replayer/ owns, dispatched by cli/main.c: argv[0] is the command name; the return
 * value is the process exit status (BTAPE_EXIT_*).
 */
#ifndef BIOTAPE_CMD_REPLAY_H
#define BIOTAPE_CMD_REPLAY_H

int cmd_replay(int argc, char **argv);

#endif
