/*
 * pages_plan.c - `/plans/KEY`: one plan. Mesh and rank mapping, cost totals, solver
 * statistics, the cost chart (per op, from the plan's collectives and op rows), memory against
 * the limit, the shardings table (paginated, filterable by value name) and the collectives.
 *
 * Rows read (store sections): "summary" 0 (the search's costs, solver and mesh, or absent for
 * a propagation-only plan), "value", "op", "collective". Only one page of each table is read.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/chart.h"
#include "web/factor_table.h"
#include "web/web_int.h"

#define CHART_BARS 30

static void costs_cards(sp_strbuf *sb, const cJSON *c) {
  struct { const char *label, *key; } rows[] = {
      {"compute", "compute_s"}, {"communication", "communication_s"}, {"of which collectives", "collective_s"},
      {"of which resharding", "reshard_s"}, {"total per step", "total_s"}};
  sp_strbuf_puts(sb, "<section class=\"cards\">");
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    sp_strbuf_puts(sb, "<div class=\"card\"><b>");
    sp_html_seconds(sb, sp__web_num(c, rows[i].key));
    sp_html_printf(sb, "</b> %s</div>", rows[i].label);
  }
  sp_strbuf_puts(sb, "<div class=\"card\"><b>");
  sp_html_bytes(sb, sp__web_num(c, "peak_memory_bytes"));
  sp_strbuf_puts(sb, "</b> peak memory per device");
  if (sp__web_num(c, "memory_limit_bytes") > 0) {
    sp_strbuf_puts(sb, " of ");
    sp_html_bytes(sb, sp__web_num(c, "memory_limit_bytes"));
  }
  sp_strbuf_puts(sb, "</div></section>\n");
}

static void solver_table(sp_strbuf *sb, const cJSON *s) {
  sp_strbuf_puts(sb, "<h2>Solver</h2><table class=\"kv\"><tbody>");
  sp_html_printf(sb, "<tr><th>status</th><td>%s</td></tr>", sp__web_str(s, "status"));
  sp_html_printf(sb, "<tr><th>cost</th><td class=\"num\">%.0f</td></tr>", sp__web_num(s, "cost"));
  const cJSON *b = sp__web_get(s, "bound");
  if (cJSON_IsNumber(b)) sp_html_printf(sb, "<tr><th>bound</th><td class=\"num\">%.0f</td></tr>",
                                        b->valuedouble);
  else sp_strbuf_puts(sb, "<tr><th>bound</th><td>none</td></tr>");
  sp_html_printf(sb, "<tr><th>gap</th><td class=\"num\">%.4f%%</td></tr>", 100 * sp__web_num(s, "gap"));
  if (sp__web_num(s, "build_s") > 0 || sp__web_num(s, "solve_s") > 0) {
    sp_strbuf_puts(sb, "<tr><th>time</th><td class=\"num\">build ");
    sp_html_seconds(sb, sp__web_num(s, "build_s"));
    sp_strbuf_puts(sb, ", solve ");
    sp_html_seconds(sb, sp__web_num(s, "solve_s"));
    sp_strbuf_puts(sb, "</td></tr>");
  } else {
    /* the daemon keeps wall times out of cached plans (equal requests, equal bytes) */
    sp_strbuf_puts(sb, "<tr><th>time</th><td>not kept with cached plans (the daemon logs each "
                       "search's time; /metrics sums them)</td></tr>");
  }
  sp_html_printf(sb,
                 "<tr><th>model</th><td class=\"num\">%.0f nodes, %.0f edges, %.0f strategies, "
                 "%.0f pairs</td></tr>"
                 "<tr><th>after reduction</th><td class=\"num\">%.0f nodes, %.0f edges, %.0f "
                 "strategies, %.0f pairs (%.0f merged, %.0f dominated)</td></tr>"
                 "<tr><th>ILP</th><td class=\"num\">%.0f columns, %.0f rows</td></tr>",
                 sp__web_num(s, "nodes"), sp__web_num(s, "edges"), sp__web_num(s, "strategies"), sp__web_num(s, "pairs"),
                 sp__web_num(s, "reduced_nodes"), sp__web_num(s, "reduced_edges"), sp__web_num(s, "reduced_strategies"),
                 sp__web_num(s, "reduced_pairs"), sp__web_num(s, "merged_nodes"), sp__web_num(s, "dominated_strategies"),
                 sp__web_num(s, "ilp_cols"),
                 sp__web_num(s, "ilp_rows"));
  sp_strbuf_puts(sb, "</tbody></table>\n");
}

static void mesh_table(sp_strbuf *sb, const cJSON *m) {
  sp_html_printf(sb, "<h2>Mesh <code>@%s</code></h2>", sp__web_str(m, "name"));
  sp_strbuf_puts(sb, "<table><thead><tr><th>axis</th><th>size</th><th>link</th>"
                     "<th>latency</th><th>bandwidth</th><th>traffic per device</th></tr></thead><tbody>");
  const cJSON *a;
  cJSON_ArrayForEach(a, sp__web_get(m, "axes")) {
    sp_html_printf(sb, "<tr><td>%s</td><td class=\"num\">%.0f</td><td>%s</td><td class=\"num\">",
                   sp__web_str(a, "name"), sp__web_num(a, "size"), sp__web_str(a, "link"));
    sp_html_seconds(sb, sp__web_num(a, "alpha_s"));
    sp_strbuf_puts(sb, "</td><td class=\"num\">");
    sp_html_bytes(sb, sp__web_num(a, "bandwidth"));
    sp_strbuf_puts(sb, "/s</td><td class=\"num\">");
    sp_html_bytes(sb, sp__web_num(a, "traffic_bytes"));
    sp_strbuf_puts(sb, "</td></tr>");
  }
  sp_strbuf_puts(sb, "</tbody></table>");
  const cJSON *dev = sp__web_get(m, "device_of");
  int n = cJSON_GetArraySize(dev);
  if (n > 0) {
    sp_html_printf(sb, "<p>Rank mapping (%s): mesh coordinate &rarr; device: <code>",
                   cJSON_IsTrue(sp__web_get(m, "placement_auto")) ? "chosen by traffic" : "as given");
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, dev) {
      if (i >= 256) {
        sp_strbuf_puts(sb, " ...");
        break;
      }
      sp_strbuf_printf(sb, "%s%.0f", i++ ? ", " : "", cJSON_IsNumber(d) ? d->valuedouble : -1);
    }
    sp_strbuf_puts(sb, "</code></p>");
  }
}

/* One bar per op, the costliest CHART_BARS of the plan: the "op_cost" rows are stored
 * costliest first, so the chart reads one page. */
static void cost_chart(sp_web *w, const char *key, sp_strbuf *sb) {
  sp_store_row_query q = {.section = "op_cost", .limit = CHART_BARS, .skip_total = true};
  sp_store_row_page pg;
  memset(&pg, 0, sizeof pg);
  sp_err err;
  sp_err_clear(&err);
  if (sp_store_rows(w->store, key, &q, &pg, &err) != SP_OK) {
    sp_html_printf(sb, "<p class=\"error\">%s</p>", err.msg);
    return;
  }
  sp_web_bar bars[CHART_BARS];
  char labels[CHART_BARS][96], hrefs[CHART_BARS][120];
  int nb = 0;
  for (size_t i = 0; i < pg.n && nb < CHART_BARS; i++) {
    cJSON *c = cJSON_Parse(pg.rows[i].json);
    if (!c) continue;
    int op = (int)sp__web_num(c, "op");
    const char *name = sp__web_str(c, "name");
    const char *dot = strchr(name, '.');
    snprintf(labels[nb], sizeof labels[0], "%s #%d", dot ? dot + 1 : name, op);
    snprintf(hrefs[nb], sizeof hrefs[0], "/plans/%s/ops/%d", key, op);
    bars[nb] = (sp_web_bar){labels[nb], hrefs[nb], sp__web_num(c, "compute_s"), sp__web_num(c, "comm_s"),
                            sp__web_num(c, "reshard_s")};
    nb++;
    cJSON_Delete(c);
  }
  sp_web_cost_chart(sb, bars, nb, CHART_BARS);
  sp_store_row_page_free(&pg);
}

static void shardings_table(sp_web *w, const sp_web_request *req, const char *key,
                            int64_t nvalues, sp_strbuf *sb) {
  long page = sp__web_arg_long(req, "page", 0, 0, 1L << 30);
  const char *filter = sp_web_arg_get(req, "q");
  sp_store_row_page pg;
  memset(&pg, 0, sizeof pg);
  sp_err err;
  sp_err_clear(&err);
  sp_strbuf_puts(sb, "<h2 id=\"shardings\">Shardings</h2>");
  sp_html_printf(sb, "<form method=\"get\" action=\"/plans/%s#shardings\"><input type=\"search\" "
                     "name=\"q\" placeholder=\"filter by value name\" value=\"%s\"> "
                     "<button>Filter</button></form>",
                 key, filter ? filter : "");
  if (sp__web_rows_page(w, key, "value", filter, page, nvalues, &pg, &err) != SP_OK) {
    sp_html_printf(sb, "<p class=\"error\">%s</p>", err.msg);
    return;
  }
  sp_strbuf_puts(sb, "<table class=\"shardings\"><thead><tr><th>#</th><th>value</th><th>where</th>"
                     "<th>type</th><th>sharding</th><th>PartitionSpec</th></tr></thead><tbody>");
  for (size_t i = 0; i < pg.n; i++) {
    cJSON *v = cJSON_Parse(pg.rows[i].json);
    if (!v) continue;
    const cJSON *pos = sp__web_get(v, "pos"), *sh = sp__web_get(v, "sharding");
    sp_html_printf(sb, "<tr><td class=\"num\">%lld</td><td><a href=\"/plans/%s/values/%lld\">%s"
                       "</a></td><td>",
                   (long long)pg.rows[i].idx, key, (long long)pg.rows[i].idx, sp__web_str(v, "name"));
    const char *kind = sp__web_str(pos, "kind");
    if (strcmp(kind, "op_result") == 0)
      sp_html_printf(sb, "<a href=\"/plans/%s/ops/%.0f\">op %.0f</a> result %.0f", key,
                     sp__web_num(pos, "op"), sp__web_num(pos, "op"), sp__web_num(pos, "index"));
    else sp_html_printf(sb, "func %.0f %s %.0f", sp__web_num(pos, "func"),
                        strcmp(kind, "arg") == 0 ? "argument" : "result", sp__web_num(pos, "index"));
    sp_html_printf(sb, "</td><td class=\"mono\">%s</td>", sp__web_str(v, "type"));
    if (cJSON_IsObject(sh))
      sp_html_printf(sb, "<td class=\"mono\">%s</td><td class=\"mono\">%s</td>", sp__web_str(sh, "sdy"),
                     sp__web_str(sh, "pspec"));
    else sp_strbuf_puts(sb, "<td class=\"empty\">none</td><td></td>");
    sp_strbuf_puts(sb, "</tr>\n");
    cJSON_Delete(v);
  }
  sp_strbuf_puts(sb, "</tbody></table>");
  char base[128], extra[300] = "";
  snprintf(base, sizeof base, "/plans/%s", key);
  if (filter && *filter) {
    sp_strbuf f = SP_STRBUF_INIT;
    sp_strbuf_puts(&f, "&q=");
    sp_html_url(&f, filter);
    snprintf(extra, sizeof extra, "%s", sp_strbuf_str(&f));
    sp_strbuf_free(&f);
  }
  sp__web_pager(sb, base, extra, page, pg.total, SP_WEB_PAGE_SIZE);
  sp_store_row_page_free(&pg);
}

static void collectives_table(sp_web *w, const sp_web_request *req, const char *key,
                              int64_t ncollectives, sp_strbuf *sb) {
  long page = sp__web_arg_long(req, "cpage", 0, 0, 1L << 30);
  sp_store_row_page pg;
  memset(&pg, 0, sizeof pg);
  sp_err err;
  sp_err_clear(&err);
  if (sp__web_rows_page(w, key, "collective", NULL, page, ncollectives, &pg, &err) != SP_OK ||
      pg.total == 0) {
    sp_store_row_page_free(&pg);
    return;
  }
  sp_strbuf_puts(sb, "<h2 id=\"collectives\">Collectives</h2><table class=\"collectives\"><thead>"
                     "<tr><th>kind</th><th>axes</th><th>bytes</th><th>time</th><th>value</th>"
                     "<th>at op</th><th>operand</th></tr></thead><tbody>");
  for (size_t i = 0; i < pg.n; i++) {
    cJSON *c = cJSON_Parse(pg.rows[i].json);
    if (!c) continue;
    sp_html_printf(sb, "<tr><td>%s</td><td class=\"mono\">%s</td><td class=\"num\">",
                   sp__web_str(c, "kind"), sp__web_str(c, "axes"));
    sp_html_bytes(sb, sp__web_num(c, "bytes"));
    sp_strbuf_puts(sb, "</td><td class=\"num\">");
    sp_html_seconds(sb, sp__web_num(c, "seconds"));
    sp_html_printf(sb, "</td><td class=\"mono\">%s</td><td><a href=\"/plans/%s/ops/%.0f\">%s "
                       "#%.0f</a></td><td class=\"num\">",
                   sp__web_str(c, "value_name"), key, sp__web_num(c, "op"), sp__web_str(c, "op_name"), sp__web_num(c, "op"));
    if (sp__web_num(c, "operand") >= 0) sp_strbuf_printf(sb, "%.0f", sp__web_num(c, "operand"));
    else sp_strbuf_puts(sb, "own");
    sp_strbuf_puts(sb, "</td></tr>\n");
    cJSON_Delete(c);
  }
  sp_strbuf_puts(sb, "</tbody></table>");
  /* the collectives' pager keeps its own page number */
  int64_t pages = (pg.total + SP_WEB_PAGE_SIZE - 1) / SP_WEB_PAGE_SIZE;
  sp_strbuf_puts(sb, "<nav class=\"pager\">");
  if (page > 0)
    sp_html_printf(sb, "<a href=\"/plans/%s?cpage=%ld#collectives\">&larr; previous</a> ", key,
                   page - 1);
  sp_html_printf(sb, "<span>page %ld of %lld (%lld collectives)</span>", page + 1,
                 (long long)pages, (long long)pg.total);
  if (page + 1 < pages)
    sp_html_printf(sb, " <a href=\"/plans/%s?cpage=%ld#collectives\">next &rarr;</a>", key,
                   page + 1);
  sp_strbuf_puts(sb, "</nav>");
  sp_store_row_page_free(&pg);
}

void sp__web_page_plan(sp_web *w, const sp_web_request *req, const char *key,
                       sp_web_response *r) {
  sp_store_plan meta;
  if (!sp__web_plan_meta(w, key, false, &meta, r)) return;
  sp_err err;
  sp_strbuf *sb = &r->body;
  char title[128];
  snprintf(title, sizeof title, "Plan %.12s", key);
  sp_html_begin(sb, title);
  sp_html_printf(sb, "<h1>Plan <code>%.12s</code> <small>%s</small></h1>", key, meta.module_name);
  sp_html_printf(sb, "<p>key <code>%s</code> &middot; <span class=\"status %s\">%s</span>", key,
                 meta.status, meta.status);
  if (meta.gap == meta.gap && meta.gap > 0) sp_html_printf(sb, " gap %.3f%%", 100 * meta.gap);
  sp_html_printf(sb, " &middot; mesh <code>%s</code> &middot; planner %s &middot; %lld hits</p>",
                 meta.mesh, meta.planner_version, (long long)meta.hits);
  sp_html_printf(sb, "<p><a href=\"/plans/%s/conflicts\">conflicts</a> &middot; "
                     "<a href=\"/api/plans/%s\">JSON</a></p>",
                 key, key);

  sp_err_clear(&err);
  cJSON *summary = sp__web_row(w, key, "summary", 0, &err);
  if (summary && cJSON_IsObject(sp__web_get(summary, "costs"))) {
    const cJSON *costs = sp__web_get(summary, "costs");
    costs_cards(sb, costs);
    sp_html_printf(sb, "<h2>Costs per op</h2><p>The costliest ops: compute, their own collectives and the resharding of their operands, per device per step.</p>");
    cost_chart(w, key, sb);
    sp_web_memory_chart(sb, sp__web_num(costs, "peak_memory_bytes"), sp__web_num(costs, "memory_limit_bytes"));
    if (cJSON_IsObject(sp__web_get(summary, "mesh"))) mesh_table(sb, sp__web_get(summary, "mesh"));
    if (cJSON_IsObject(sp__web_get(summary, "solver"))) solver_table(sb, sp__web_get(summary, "solver"));
  } else {
    sp_strbuf_puts(sb, "<p>Propagation only: no cost search was asked for this plan.</p>");
  }
  int64_t nvalues = sp__web_count(summary, "nvalues");
  int64_t ncollectives = sp__web_count(summary, "ncollectives");
  cJSON_Delete(summary);
  shardings_table(w, req, key, nvalues, sb);
  collectives_table(w, req, key, ncollectives, sb);
  sp_html_printf(sb, "<h2>Delete</h2><form class=\"inline\" method=\"post\" "
                     "action=\"/plans/%s/delete\"><input type=\"hidden\" name=\"csrf\" "
                     "value=\"%s\"><button class=\"danger\">Delete this plan</button></form>",
                 key, w->guard.csrf);
  sp_html_end(sb);
  sp_store_plan_free(&meta);
}
