/* TEMPORARY stub, replaced by the module's implementation. */
#include "cli.h"
#include "commands.h"
int cmd_analyze(int argc, char **argv) { cli_err("analyze: not implemented yet"); return BTAPE_EXIT_FAIL; }
int cmd_profile(int argc, char **argv) { cli_err("profile: not implemented yet"); return BTAPE_EXIT_FAIL; }
int cmd_compare(int argc, char **argv) { cli_err("compare: not implemented yet"); return BTAPE_EXIT_FAIL; }
