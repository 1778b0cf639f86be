/*
 * chart.c - inline SVG charts (see chart.h).
 */
#include "web/chart.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "web/html.h"

static double total(const sp_web_bar *b) { return b->compute_s + b->comm_s + b->reshard_s; }

static void rect(sp_strbuf *sb, const char *cls, double x, double y, double w, double h,
                 const char *title, double secs) {
  if (w <= 0) return;
  sp_strbuf_printf(sb, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">",
                   cls, x, y, w, h);
  sp_html_printf(sb, "<title>%s ", title);
  sp_html_seconds(sb, secs);
  sp_strbuf_puts(sb, "</title></rect>");
}

void sp_web_cost_chart(sp_strbuf *sb, const sp_web_bar *bars, int n, int max_bars) {
  if (n <= 0) {
    sp_strbuf_puts(sb, "<p>No per-op costs in this plan.</p>");
    return;
  }
  /* keep the largest `max_bars` in their original order */
  bool *keep = calloc((size_t)n, sizeof *keep);
  if (!keep) return;
  int shown = n <= max_bars ? n : max_bars;
  for (int k = 0; k < shown; k++) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (!keep[i] && (best < 0 || total(&bars[i]) > total(&bars[best]))) best = i;
    keep[best] = true;
  }
  double maxv = 0;
  for (int i = 0; i < n; i++)
    if (keep[i] && total(&bars[i]) > maxv) maxv = total(&bars[i]);
  if (maxv <= 0) maxv = 1;
  const double left = 190, width = 560, row = 18, top = 8;
  double height = top + row * shown + 24;
  sp_strbuf_printf(sb, "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                   "height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\">",
                   left + width + 90, height, left + width + 90, height);
  int r = 0;
  for (int i = 0; i < n; i++) {
    if (!keep[i]) continue;
    const sp_web_bar *b = &bars[i];
    double y = top + row * r++;
    if (b->href) sp_html_printf(sb, "<a href=\"%s\">", b->href);
    sp_html_printf(sb, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", left - 6,
                   y + 12, b->label ? b->label : "");
    if (b->href) sp_strbuf_puts(sb, "</a>");
    double x = left;
    double wc = width * b->compute_s / maxv, wm = width * b->comm_s / maxv,
           wr = width * b->reshard_s / maxv;
    rect(sb, "k-compute", x, y + 2, wc, row - 5, "compute", b->compute_s);
    rect(sb, "k-comm", x + wc, y + 2, wm, row - 5, "communication", b->comm_s);
    rect(sb, "k-reshard", x + wc + wm, y + 2, wr, row - 5, "resharding", b->reshard_s);
    sp_strbuf_printf(sb, "<text x=\"%.1f\" y=\"%.1f\">", x + wc + wm + wr + 4, y + 12);
    sp_html_seconds(sb, total(b));
    sp_strbuf_puts(sb, "</text>");
  }
  sp_strbuf_printf(sb, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#889\"/>",
                   left, top + row * shown + 2, left + width, top + row * shown + 2);
  sp_strbuf_printf(sb, "<text x=\"%.0f\" y=\"%.0f\">0</text><text x=\"%.0f\" y=\"%.0f\" "
                   "text-anchor=\"end\">", left, height - 6, left + width, height - 6);
  sp_html_seconds(sb, maxv);
  sp_strbuf_puts(sb, "</text></svg>");
  sp_strbuf_puts(sb, "<p class=\"legend\"><span><i class=\"k-compute\"></i>compute</span><span>"
                     "<i class=\"k-comm\"></i>communication</span><span><i class=\"k-reshard\">"
                     "</i>resharding</span>");
  if (shown < n) sp_strbuf_printf(sb, "<span>the %d largest of %d</span>", shown, n);
  sp_strbuf_puts(sb, "</p>");
  free(keep);
}

void sp_web_memory_chart(sp_strbuf *sb, double peak, double limit) {
  const double left = 190, width = 560;
  double maxv = peak > limit ? peak : limit;
  if (maxv <= 0) maxv = 1;
  sp_strbuf_printf(sb, "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 %.0f 46\" width=\"%.0f\" "
                   "height=\"46\" xmlns=\"http://www.w3.org/2000/svg\">",
                   left + width + 90, left + width + 90);
  sp_strbuf_printf(sb, "<text x=\"%.0f\" y=\"20\" text-anchor=\"end\">peak memory per device</text>",
                   left - 6);
  sp_strbuf_printf(sb, "<rect class=\"k-mem\" x=\"%.0f\" y=\"8\" width=\"%.1f\" height=\"16\">"
                   "<title>peak ", left, width * peak / maxv);
  sp_html_bytes(sb, peak);
  sp_strbuf_puts(sb, "</title></rect>");
  if (limit > 0) {
    double lx = left + width * limit / maxv;
    sp_strbuf_printf(sb, "<line class=\"k-limit\" x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"30\" "
                     "stroke-width=\"2\"/><text x=\"%.1f\" y=\"42\" text-anchor=\"end\">limit ",
                     lx, lx, lx);
    sp_html_bytes(sb, limit);
    sp_strbuf_puts(sb, "</text>");
  }
  sp_strbuf_printf(sb, "<text x=\"%.1f\" y=\"20\">", left + width * peak / maxv + 4);
  sp_html_bytes(sb, peak);
  sp_strbuf_puts(sb, "</text></svg>");
}
