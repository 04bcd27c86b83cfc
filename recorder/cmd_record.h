/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The subcommand recorder/ owns, dispatched by cli/main.c: argv[0] is the command name; the return
 * value is the process exit status (BTAPE_EXIT_*).
 */
#ifndef BIOTAPE_CMD_RECORD_H
#define BIOTAPE_CMD_RECORD_H

int cmd_record(int argc, char **argv);

#endif
