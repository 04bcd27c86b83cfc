/* SPDX-License-Identifier: GPL-2.0-only */
/* HTML output helpers shared by the analyzer's and the replayer's reports. */
#ifndef BIOTAPE_HTML_H
#define BIOTAPE_HTML_H

#include <stdio.h>

/* Writes s with <, >, & and " escaped (element text, "-quoted attributes); NULL: nothing. */
void html_escape(FILE *fp, const char *s);
/*
 * The start of a report page, through <body>: the one stylesheet of every biotape page (cards,
 * full-width responsive charts <svg class="chart">, tables, print rules); no script, no link.
 */
void html_page_begin(FILE *fp, const char *title);
/* A headline card: TEXT big, WHAT under it; data-key=KEY and data-value=VALUE for tests. */
void html_card(FILE *fp, const char *key, const char *what, const char *text, double value);

#endif
