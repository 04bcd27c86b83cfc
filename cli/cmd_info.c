/* TEMPORARY stub, replaced by the module's implementation. */
#include "cli.h"
#include "commands.h"
int cmd_info(int argc, char **argv) { cli_err("info: not implemented yet"); return BTAPE_EXIT_FAIL; }
