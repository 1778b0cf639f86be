/*
 * html.c - escaping and the page frame (see html.h).
 */
#include "web/html.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_html_textn(sp_strbuf *sb, const char *s, size_t n) {
  size_t start = 0;
  for (size_t i = 0; i < n; i++) {
    const char *rep = NULL;
    switch (s[i]) {
      case '&': rep = "&amp;"; break;
      case '<': rep = "&lt;"; break;
      case '>': rep = "&gt;"; break;
      case '"': rep = "&quot;"; break;
      case '\'': rep = "&#39;"; break;
      default: break;
    }
    if (!rep) continue;
    sp_strbuf_putn(sb, s + start, i - start);
    sp_strbuf_puts(sb, rep);
    start = i + 1;
  }
  sp_strbuf_putn(sb, s + start, n - start);
}

void sp_html_text(sp_strbuf *sb, const char *s) {
  if (s) sp_html_textn(sb, s, strlen(s));
}

void sp_html_url(sp_strbuf *sb, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    unsigned char c = *p;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        c == '-' || c == '_' || c == '.' || c == '~') {
      sp_strbuf_putc(sb, (char)c);
    } else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      sp_strbuf_putn(sb, e, 3);
    }
  }
}

/* A small printf: %s arguments are escaped, %d/%ld/%lld/%u/%g/%f/%.Nf/%% pass through
 * vsnprintf one conversion at a time. */
void sp_html_printf(sp_strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *p = fmt;
  while (*p) {
    const char *pct = strchr(p, '%');
    if (!pct) {
      sp_strbuf_puts(sb, p);
      break;
    }
    sp_strbuf_putn(sb, p, (size_t)(pct - p));
    const char *q = pct + 1;
    if (*q == '%') {
      sp_strbuf_putc(sb, '%');
      p = q + 1;
      continue;
    }
    /* flags, width, precision, length */
    while (*q && strchr("-+ #0123456789.", *q)) q++;
    int longs = 0;
    while (*q == 'l') {
      longs++;
      q++;
    }
    char conv = *q;
    char spec[32];
    size_t sl = (size_t)(q - pct) + 1;
    if (sl >= sizeof spec || !conv) break; /* malformed format: a bug in our literal */
    memcpy(spec, pct, sl);
    spec[sl] = '\0';
    char tmp[64];
    switch (conv) {
      case 's': { /* "%.12s" keeps its precision: a prefix, escaped */
        const char *arg = va_arg(ap, const char *);
        const char *dot = memchr(spec, '.', sl);
        if (arg && dot) sp_html_textn(sb, arg, strnlen(arg, (size_t)atoi(dot + 1)));
        else sp_html_text(sb, arg);
        break;
      }
      case 'd':
      case 'i':
        if (longs == 2) snprintf(tmp, sizeof tmp, spec, va_arg(ap, long long));
        else if (longs == 1) snprintf(tmp, sizeof tmp, spec, va_arg(ap, long));
        else snprintf(tmp, sizeof tmp, spec, va_arg(ap, int));
        sp_strbuf_puts(sb, tmp);
        break;
      case 'u':
        if (longs == 2) snprintf(tmp, sizeof tmp, spec, va_arg(ap, unsigned long long));
        else if (longs == 1) snprintf(tmp, sizeof tmp, spec, va_arg(ap, unsigned long));
        else snprintf(tmp, sizeof tmp, spec, va_arg(ap, unsigned));
        sp_strbuf_puts(sb, tmp);
        break;
      case 'g':
      case 'f':
      case 'e':
        snprintf(tmp, sizeof tmp, spec, va_arg(ap, double));
        sp_strbuf_puts(sb, tmp);
        break;
      default: break;
    }
    p = q + 1;
  }
  va_end(ap);
}

static void begin(sp_strbuf *sb, const char *title, int refresh_s) {
  sp_strbuf_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
  if (refresh_s > 0) sp_strbuf_printf(sb, "<meta http-equiv=\"refresh\" content=\"%d\">", refresh_s);
  sp_strbuf_puts(sb, "<title>");
  sp_html_text(sb, title);
  sp_strbuf_puts(sb, " - shardplan</title><link rel=\"stylesheet\" href=\"/static/style.css\">"
                     "</head><body><nav><a class=\"brand\" href=\"/\">shardplan</a>"
                     "<a href=\"/\">plans</a><a href=\"/metrics\">metrics</a>"
                     "<a href=\"/api/plans\">api</a></nav><main>\n");
}

void sp_html_begin(sp_strbuf *sb, const char *title) { begin(sb, title, 0); }
void sp_html_begin_refreshing(sp_strbuf *sb, const char *title, int seconds) {
  begin(sb, title, seconds);
}

void sp_html_end(sp_strbuf *sb) { sp_strbuf_puts(sb, "</main></body></html>\n"); }

void sp_html_seconds(sp_strbuf *sb, double s) {
  if (s < 0) s = 0;
  if (s >= 1) sp_strbuf_printf(sb, "%.2f s", s);
  else if (s >= 1e-3) sp_strbuf_printf(sb, "%.3f ms", s * 1e3);
  else sp_strbuf_printf(sb, "%.1f us", s * 1e6);
}

void sp_html_bytes(sp_strbuf *sb, double b) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    u++;
  }
  if (u == 0) sp_strbuf_printf(sb, "%.0f B", b);
  else sp_strbuf_printf(sb, "%.1f %s", b, units[u]);
}
