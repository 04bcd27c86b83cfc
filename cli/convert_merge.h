/* SPDX-License-Identifier: GPL-2.0-only */
/* biotape convert --merge: several hosts' traces into one multi-host trace. */
#ifndef BIOTAPE_CLI_CONVERT_MERGE_H
#define BIOTAPE_CLI_CONVERT_MERGE_H

#include "align.h"

#include <stdbool.h>

/* Merges PATHS (n >= 1) into OUT on one timeline (mode as biotape analyze --align); returns a
 * BTAPE_EXIT_* status, having printed one line on failure (OUT is then left untouched). */
int cli_convert_merge(char *const *paths, int n, const char *out, enum an_align mode, bool quiet);

#endif
