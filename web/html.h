/*
 * html.h - building the dashboard's HTML: escaping and the page frame.
 *
 * Every piece of text that did not come from this file's own literals goes through
 * sp_html_text / sp_html_attr (names in a graph can contain markup or script). The frame
 * links the built-in stylesheet (/static/style.css) and never carries inline script or style:
 * the Content-Security-Policy is default-src 'self'.
 */
#ifndef SP_WEB_HTML_H
#define SP_WEB_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "ir/strbuf.h"

/* Appends `s` with &, <, >, " and ' escaped (valid in text and in quoted attributes). */
void sp_html_text(sp_strbuf *sb, const char *s);
void sp_html_textn(sp_strbuf *sb, const char *s, size_t n);
/* Appends `s` percent-encoded for a URL path segment or query value. */
void sp_html_url(sp_strbuf *sb, const char *s);

/* printf into the page with every %s argument escaped: the format itself is trusted. */
void sp_html_printf(sp_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The document head and the navigation bar; `title` is escaped. */
void sp_html_begin(sp_strbuf *sb, const char *title);
/* The same for a page that reloads itself every `seconds` (a meta refresh, no script). */
void sp_html_begin_refreshing(sp_strbuf *sb, const char *title, int seconds);
void sp_html_end(sp_strbuf *sb);

/* "1.23 ms", "456 us", "2.10 s" */
void sp_html_seconds(sp_strbuf *sb, double s);
/* "1.5 GiB", "12 KiB", "17 B" */
void sp_html_bytes(sp_strbuf *sb, double b);

#endif /* SP_WEB_HTML_H */
