/* SPDX-License-Identifier: GPL-2.0-only */
/* HTML output helpers shared by the analyzer's and the replayer's reports. */
#ifndef BIOTAPE_HTML_H
#define BIOTAPE_HTML_H

#include <stdio.h>

/* Writes s with <, >, & and " escaped (element text, "-quoted attributes); NULL: nothing. */
void html_escape(FILE *fp, const char *s);

#endif
