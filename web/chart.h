/*
 * chart.h - the plan page's cost chart as inline SVG (no script): one stacked horizontal bar
 * per op or layer (compute, communication, resharding, in seconds per step) and a memory bar
 * per device against its limit. Labels are escaped; the SVG scales with the page.
 */
#ifndef SP_WEB_CHART_H
#define SP_WEB_CHART_H

#include "ir/strbuf.h"

typedef struct sp_web_bar {
  const char *label;        /* "dot_general #12" */
  const char *href;         /* link of the label, or NULL */
  double compute_s, comm_s, reshard_s;
} sp_web_bar;

/* Draws at most `max_bars` bars (the largest totals, shown in their given order). */
void sp_web_cost_chart(sp_strbuf *sb, const sp_web_bar *bars, int n, int max_bars);
/* Peak memory per device against the limit (limit <= 0: no limit line). */
void sp_web_memory_chart(sp_strbuf *sb, double peak_bytes, double limit_bytes);

#endif /* SP_WEB_CHART_H */
