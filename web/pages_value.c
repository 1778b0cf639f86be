/*
 * pages_value.c - `/plans/KEY/values/N`: one value (addressed by position N in the plan's
 * value list; its name is a label) and its provenance: which user annotation each of its axes
 * came from and the path it travelled.
 *
 * Two records of where each axis came from: Shardy's own, made while propagating (the value
 * row's "sharding_origins", plan/plan.h: "input: 0", "constraint_1", ... as Shardy's
 * debug-sharding-origins names them), shown as a table as soon as the plan is stored; and the
 * derived provenance (the row's "origins", plan/provenance.h, added after the answer): per
 * axis, the annotation it came from and the step before this value, with Shardy's origin next
 * to it and whether the two agree. The page follows those steps through the earlier values'
 * rows to draw the whole path (the first and last steps of a very long one). It also shows
 * the defining op's factor tables.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/factor_table.h"
#include "web/web_int.h"

#define MAX_STEPS_SHOWN 120  /* steps drawn: the last ones of a longer path */

/* One origin entry of value `v`'s row for `axis`, or NULL. */
static const cJSON *origin_for(const cJSON *value, const char *axis) {
  const cJSON *o;
  cJSON_ArrayForEach(o, sp__web_get(value, "origins"))
    if (strcmp(sp__web_str(o, "axis"), axis) == 0) return o;
  return NULL;
}

/* The path of one axis, source first: each value's origin names the step before it ("prev":
 * the value it came from and the op crossed), so the page follows those links through the
 * earlier values' rows. Steps are collected from this value backwards. */
static void path(sp_web *w, sp_strbuf *sb, const char *key, const cJSON *origin, const cJSON *self,
                 const char *axis) {
  int hops = (int)sp__web_num(origin, "hops");
  typedef struct step {
    long value, op;
    char name[64], op_name[64];
  } step;
  int cap = hops < MAX_STEPS_SHOWN ? hops : MAX_STEPS_SHOWN;
  step *steps = calloc((size_t)(cap ? cap : 1), sizeof *steps);
  if (!steps) return;
  /* the last steps: walk back from this value */
  int n = 0;
  cJSON *owned = NULL;
  const cJSON *cur = origin;
  const char *cur_name = sp__web_str(self, "name");
  long cur_value = -1;
  while (n < cap && cJSON_IsObject(sp__web_get(cur, "prev"))) {
    const cJSON *prev = sp__web_get(cur, "prev");
    step *s = &steps[n++];
    s->value = cur_value;
    s->op = (long)sp__web_num(prev, "op");
    snprintf(s->name, sizeof s->name, "%s", cur_name);
    snprintf(s->op_name, sizeof s->op_name, "%s", sp__web_str(prev, "op_name"));
    long pv = (long)sp__web_num(prev, "value");
    cJSON *row = sp__web_row(w, key, "value", pv, NULL);
    cJSON_Delete(owned);
    owned = row;
    cur = row ? origin_for(row, axis) : NULL;
    cur_name = row ? sp__web_str(row, "name") : "?";
    cur_value = pv;
  }
  const cJSON *src = sp__web_get(origin, "source");
  sp_strbuf_puts(sb, "<ol class=\"path\">");
  sp_html_printf(sb, "<li class=\"origin\"><a href=\"/plans/%s/values/%.0f\">%s</a> "
                     "<small>the annotation</small></li>",
                 key, sp__web_num(src, "value"), sp__web_str(src, "name"));
  if (hops > n)
    sp_html_printf(sb, "<li><small>%d earlier steps not shown</small></li>", hops - n);
  for (int i = n - 1; i >= 0; i--) {
    const step *s = &steps[i];
    if (s->value >= 0)
      sp_html_printf(sb, "<li><a href=\"/plans/%s/values/%ld\">%s</a>", key, s->value, s->name);
    else
      sp_html_printf(sb, "<li><b>%s</b>", s->name);
    sp_html_printf(sb, " via <a href=\"/plans/%s/ops/%ld\">%s #%ld</a></li>", key, s->op,
                   s->op_name, s->op);
  }
  sp_strbuf_puts(sb, "</ol>");
  cJSON_Delete(owned);
  free(steps);
}

static void provenance(sp_web *w, sp_strbuf *sb, const char *key, const cJSON *value) {
  const cJSON *o;
  cJSON_ArrayForEach(o, sp__web_get(value, "origins")) {
    sp_html_printf(sb, "<h3>dimension %.0f, axis <code>&quot;%s&quot;</code></h3>", sp__web_num(o, "dim"),
                   sp__web_str(o, "axis"));
    sp_html_printf(sb, "<p>came from <b>%s</b>", sp__web_str(o, "origin"));
    if (sp__web_num(o, "hops") > 0) sp_html_printf(sb, " across %.0f op%s", sp__web_num(o, "hops"),
                                           sp__web_num(o, "hops") == 1 ? "" : "s");
    const cJSON *agrees = sp__web_get(o, "agrees");
    if (cJSON_IsString(sp__web_get(o, "shardy")))
      sp_html_printf(sb, "; Shardy's origin <code>%s</code>%s", sp__web_str(o, "shardy"),
                     cJSON_IsTrue(agrees)    ? " (the same annotation)"
                     : cJSON_IsFalse(agrees) ? " (another annotation: Shardy keeps the first that "
                                               "reached it, this path is the shortest)"
                                             : "");
    sp_strbuf_puts(sb, "</p>");
    if (cJSON_IsObject(sp__web_get(o, "source"))) path(w, sb, key, o, value, sp__web_str(o, "axis"));
  }
}

/* Shardy's sharding origins of the value, one row per axis. */
static void shardy_origins(sp_strbuf *sb, const cJSON *origins) {
  sp_strbuf_puts(sb, "<table class=\"kv\"><caption>Shardy's sharding origins</caption>");
  const cJSON *e;
  cJSON_ArrayForEach(e, origins)
    if (cJSON_IsString(e))
      sp_html_printf(sb, "<tr><th><code>&quot;%s&quot;</code></th><td class=\"mono\">%s</td></tr>",
                     e->string, e->valuestring);
  sp_strbuf_puts(sb, "</table>");
}

void sp__web_page_value(sp_web *w, const sp_web_request *req, const char *key, long n,
                        sp_web_response *r) {
  (void)req;
  sp_err err;
  sp_err_clear(&err);
  cJSON *v = sp__web_row(w, key, "value", n, &err);
  if (!v) {
    sp__web_store_error(r, &err, false);
    return;
  }
  const cJSON *pos = sp__web_get(v, "pos"), *sh = sp__web_get(v, "sharding");
  sp_strbuf *sb = &r->body;
  char title[160];
  snprintf(title, sizeof title, "value %s", sp__web_str(v, "name"));
  sp_html_begin(sb, title);
  sp_html_printf(sb, "<p><a href=\"/plans/%s\">&larr; plan %.12s</a></p>", key, key);
  sp_html_printf(sb, "<h1>Value <code>%s</code> <small>#%ld</small></h1>", sp__web_str(v, "name"), n);
  sp_html_printf(sb, "<p>type <code>%s</code>, ", sp__web_str(v, "type"));
  bool op_result = strcmp(sp__web_str(pos, "kind"), "op_result") == 0;
  if (op_result)
    sp_html_printf(sb, "result %.0f of <a href=\"/plans/%s/ops/%.0f\">op #%.0f</a>",
                   sp__web_num(pos, "index"), key, sp__web_num(pos, "op"), sp__web_num(pos, "op"));
  else sp_html_printf(sb, "%s %.0f of function %.0f",
                      strcmp(sp__web_str(pos, "kind"), "arg") == 0 ? "argument" : "result",
                      sp__web_num(pos, "index"), sp__web_num(pos, "func"));
  sp_strbuf_puts(sb, "</p>");
  if (cJSON_IsObject(sh)) {
    sp_html_printf(sb, "<table class=\"kv\"><tr><th>sharding</th><td class=\"mono\">%s</td></tr>"
                       "<tr><th>PartitionSpec</th><td class=\"mono\">%s</td></tr>"
                       "<tr><th>GSPMD</th><td class=\"mono\">%s</td></tr></table>",
                   sp__web_str(sh, "sdy"), sp__web_str(sh, "pspec"), sp__web_str(sh, "gspmd"));
  } else {
    sp_strbuf_puts(sb, "<p>This value has no sharding: it is replicated.</p>");
  }
  sp_strbuf_puts(sb, "<h2>Provenance</h2>");
  const cJSON *origins = sp__web_get(v, "origins"), *shardy = sp__web_get(v, "sharding_origins");
  bool has_shardy = cJSON_IsObject(shardy) && shardy->child;
  if (has_shardy) shardy_origins(sb, shardy);
  if (cJSON_GetArraySize(origins) > 0) {
    provenance(w, sb, key, v);
  } else if (has_shardy) {
    /* the derived paths come later (or never, for a plan stored without them) */
  } else if (cJSON_IsObject(sh)) {
    sp_strbuf_puts(sb, "<p>The plan recorded no origins for this value's axes.</p>");
  } else {
    sp_strbuf_puts(sb, "<p>Nothing to trace: no axis reached this value.</p>");
  }
  if (op_result) {
    cJSON *op = sp__web_row(w, key, "op", (long)sp__web_num(pos, "op"), NULL);
    if (op) {
      sp_html_printf(sb, "<h2>Defining op <a href=\"/plans/%s/ops/%.0f\">%s #%.0f</a></h2>", key,
                     sp__web_num(pos, "op"), sp__web_str(op, "name"), sp__web_num(pos, "op"));
      sp_strbuf_puts(sb, "<div class=\"side\"><div>");
      sp_web_factor_table(sb, sp__web_get(op, "before"), "before propagation", NULL, 0);
      sp_strbuf_puts(sb, "</div><div>");
      sp_web_factor_table(sb, sp__web_get(op, "after"), "after propagation", NULL, 0);
      sp_strbuf_puts(sb, "</div></div>");
      cJSON_Delete(op);
    }
  }
  sp_html_end(sb);
  cJSON_Delete(v);
}
