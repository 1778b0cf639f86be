/*
 * pages_value.c - `/plans/KEY/values/N`: one value (addressed by position N in the plan's
 * value list; its name is a label) and its provenance: which user annotation each of its axes
 * came from and the path it travelled.
 *
 * The provenance comes from the plan's "origins" for the value when propagation recorded them
 * (Shardy's sharding origins: per dimension, each axis with the annotation it came from and
 * the ops it crossed). Without them the page says so and shows what the plan does know: the
 * value's sharding, and its defining op's factor tables.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "web/factor_table.h"
#include "web/web_int.h"

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}
static double num(const cJSON *o, const char *k) {
  const cJSON *v = get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = get(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* A step of a path: {"value": I, "name", "op": N, "op_name", "how"}. */
static void path_step(sp_strbuf *sb, const char *key, const cJSON *s, bool origin) {
  sp_strbuf_puts(sb, origin ? "<li class=\"origin\">" : "<li>");
  if (cJSON_IsNumber(get(s, "value")))
    sp_html_printf(sb, "<a href=\"/plans/%s/values/%.0f\">%s</a>", key, num(s, "value"),
                   str(s, "name"));
  else sp_html_text(sb, str(s, "name"));
  if (cJSON_IsNumber(get(s, "op")) && num(s, "op") >= 0)
    sp_html_printf(sb, " via <a href=\"/plans/%s/ops/%.0f\">%s #%.0f</a>", key, num(s, "op"),
                   str(s, "op_name"), num(s, "op"));
  if (*str(s, "how")) sp_html_printf(sb, " <small>%s</small>", str(s, "how"));
  sp_strbuf_puts(sb, "</li>");
}

/* "origins": [{"dim": D, "axis": "x", "origin": "user annotation on %arg0" | ...,
 *              "source": {...step...}, "path": [step...]}] */
static void provenance(sp_strbuf *sb, const char *key, const cJSON *origins) {
  const cJSON *o;
  cJSON_ArrayForEach(o, origins) {
    sp_html_printf(sb, "<h3>dimension %.0f, axis <code>&quot;%s&quot;</code></h3>", num(o, "dim"),
                   str(o, "axis"));
    sp_html_printf(sb, "<p>came from <b>%s</b></p><ol class=\"path\">", str(o, "origin"));
    const cJSON *src = get(o, "source");
    if (cJSON_IsObject(src)) path_step(sb, key, src, true);
    const cJSON *s;
    cJSON_ArrayForEach(s, get(o, "path")) path_step(sb, key, s, false);
    sp_strbuf_puts(sb, "</ol>");
  }
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
  const cJSON *pos = get(v, "pos"), *sh = get(v, "sharding");
  sp_strbuf *sb = &r->body;
  char title[160];
  snprintf(title, sizeof title, "value %s", str(v, "name"));
  sp_html_begin(sb, title);
  sp_html_printf(sb, "<p><a href=\"/plans/%s\">&larr; plan %.12s</a></p>", key, key);
  sp_html_printf(sb, "<h1>Value <code>%s</code> <small>#%ld</small></h1>", str(v, "name"), n);
  sp_html_printf(sb, "<p>type <code>%s</code>, ", str(v, "type"));
  bool op_result = strcmp(str(pos, "kind"), "op_result") == 0;
  if (op_result)
    sp_html_printf(sb, "result %.0f of <a href=\"/plans/%s/ops/%.0f\">op #%.0f</a>",
                   num(pos, "index"), key, num(pos, "op"), num(pos, "op"));
  else sp_html_printf(sb, "%s %.0f of function %.0f",
                      strcmp(str(pos, "kind"), "arg") == 0 ? "argument" : "result",
                      num(pos, "index"), num(pos, "func"));
  sp_strbuf_puts(sb, "</p>");
  if (cJSON_IsObject(sh)) {
    sp_html_printf(sb, "<table class=\"kv\"><tr><th>sharding</th><td class=\"mono\">%s</td></tr>"
                       "<tr><th>PartitionSpec</th><td class=\"mono\">%s</td></tr>"
                       "<tr><th>GSPMD</th><td class=\"mono\">%s</td></tr></table>",
                   str(sh, "sdy"), str(sh, "pspec"), str(sh, "gspmd"));
  } else {
    sp_strbuf_puts(sb, "<p>This value has no sharding: it is replicated.</p>");
  }
  sp_strbuf_puts(sb, "<h2>Provenance</h2>");
  const cJSON *origins = get(v, "origins");
  if (cJSON_GetArraySize(origins) > 0) {
    provenance(sb, key, origins);
  } else if (cJSON_IsObject(sh)) {
    sp_strbuf_puts(sb, "<p>The plan recorded no origins for this value's axes.</p>");
  } else {
    sp_strbuf_puts(sb, "<p>Nothing to trace: no axis reached this value.</p>");
  }
  if (op_result) {
    cJSON *op = sp__web_row(w, key, "op", (long)num(pos, "op"), NULL);
    if (op) {
      sp_html_printf(sb, "<h2>Defining op <a href=\"/plans/%s/ops/%.0f\">%s #%.0f</a></h2>", key,
                     num(pos, "op"), str(op, "name"), num(pos, "op"));
      sp_strbuf_puts(sb, "<div class=\"side\"><div>");
      sp_web_factor_table(sb, get(op, "before"), "before propagation", NULL, 0);
      sp_strbuf_puts(sb, "</div><div>");
      sp_web_factor_table(sb, get(op, "after"), "after propagation", NULL, 0);
      sp_strbuf_puts(sb, "</div></div>");
      cJSON_Delete(op);
    }
  }
  sp_html_end(sb);
  cJSON_Delete(v);
}
