// SPDX-License-Identifier: GPL-2.0-only
#include "html.h"

void html_escape(FILE *fp, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '&':
			fputs("&amp;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		default:
			fputc(*s, fp);
		}
	}
}

void html_page_begin(FILE *fp, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>",
	      fp);
	html_escape(fp, title);
	fputs("</title>\n<style>\n"
	      "body{font-family:system-ui,sans-serif;margin:24px auto;padding:0 24px;color:#222;"
	      "max-width:1500px}\n"
	      "h1{font-size:20px;word-break:break-all}"
	      "h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ccc}\n"
	      "pre{background:#f6f6f6;padding:10px;font-size:12px;overflow-x:auto}\n"
	      ".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));"
	      "gap:12px}\n"
	      ".charts.wide{grid-template-columns:1fr}\n"
	      "svg.chart{background:#fff;border:1px solid #ddd;width:100%;height:auto}\n"
	      "svg text{font-size:11px;fill:#333}\n"
	      ".cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0 4px}\n"
	      ".card{border:1px solid #ddd;border-radius:6px;padding:10px 16px;min-width:130px}\n"
	      ".card .v{font-size:24px;font-weight:600}.card .k{color:#666;font-size:12px}\n"
	      ".note{color:#666;font-style:italic}.warn{color:#a40000;font-weight:600}\n"
	      "table{border-collapse:collapse;margin:12px 0}"
	      "td,th{border:1px solid #ccc;padding:3px 10px;text-align:right}"
	      "tr.knee td{background:#fdecea;font-weight:600}\n"
	      "@media print{body{margin:0;max-width:none}.charts{display:block}"
	      "svg.chart,.card{break-inside:avoid;margin-bottom:8px}pre{white-space:pre-wrap}}\n"
	      "</style></head><body>\n",
	      fp);
}

void html_card(FILE *fp, const char *key, const char *what, const char *text, double value)
{
	fprintf(fp, "<div class=\"card\" data-key=\"%s\" data-value=\"%.10g\"><div class=\"v\">",
		key, value);
	html_escape(fp, text);
	fputs("</div><div class=\"k\">", fp);
	html_escape(fp, what);
	fputs("</div></div>\n", fp);
}
