/*
 * pages_op.c - `/plans/KEY/ops/N` (op number N): the op's factor table before and after
 * propagation side by side, its conflicting cells highlighted with how each was resolved,
 * and links to the ops that feed it and that it feeds; and `/plans/KEY/conflicts`, every
 * conflict of the plan, linking to the op's table.
 *
 * Rows read: "op" N, and the "conflict" rows (scanned for op N, at most MAX_CONFLICTS_SCAN).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/factor_table.h"
#include "web/web_int.h"

#define MAX_CONFLICTS_SCAN 20000
#define SCAN_PAGE 500

/* Conflict records of op `n` (a cJSON array the caller deletes). */
static cJSON *conflicts_of(sp_web *w, const char *key, long n) {
  cJSON *out = cJSON_CreateArray();
  for (int64_t off = 0; out && off < MAX_CONFLICTS_SCAN; off += SCAN_PAGE) {
    sp_store_row_query q = {.section = "conflict", .limit = SCAN_PAGE, .idx_from = off,
                            .skip_total = true};
    sp_store_row_page pg;
    memset(&pg, 0, sizeof pg);
    if (sp_store_rows(w->store, key, &q, &pg, NULL) != SP_OK) {
      sp_store_row_page_free(&pg);
      break;
    }
    for (size_t i = 0; i < pg.n; i++) {
      cJSON *c = cJSON_Parse(pg.rows[i].json);
      if (!c) continue;
      if ((long)sp__web_num(c, "op") == n) {
        cJSON_AddNumberToObject(c, "_row", (double)pg.rows[i].idx);
        cJSON_AddItemToArray(out, c);
      } else {
        cJSON_Delete(c);
      }
    }
    bool last = pg.n < SCAN_PAGE;
    sp_store_row_page_free(&pg);
    if (last) break;
  }
  return out;
}

static void axes_list(sp_strbuf *sb, const cJSON *arr) {
  sp_strbuf_puts(sb, "[");
  sp_web_axes(sb, arr);
  sp_strbuf_puts(sb, "]");
}

/* One line saying how a conflict was resolved: "aggressive: chose ["x"] (from operand 0)". */
static void resolution_text(sp_strbuf *sb, const cJSON *c) {
  sp_html_printf(sb, "%s, %s: chose ", sp__web_str(c, "level"), sp__web_str(c, "resolution"));
  axes_list(sb, sp__web_get(c, "chosen"));
  if (*sp__web_str(c, "source")) sp_html_printf(sb, " from %s", sp__web_str(c, "source"));
}

/* The cells to highlight: for each conflict, each tensor that wanted something different from
 * what it got, or that the conflict names a cause for. */
static int collect_marks(const cJSON *conflicts, sp_web_mark *marks, int cap, char (*notes)[200]) {
  int n = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, conflicts) {
    const cJSON *t;
    cJSON_ArrayForEach(t, sp__web_get(c, "tensors")) {
      if (n == cap) return n;
      sp_strbuf sb = SP_STRBUF_INIT;
      sp_strbuf_printf(&sb, "%s, %s: wanted ", sp__web_str(c, "level"), sp__web_str(c, "resolution"));
      /* the note goes into a title attribute: keep it plain (it is escaped there) */
      char *s;
      sp_strbuf_puts(&sb, (s = cJSON_PrintUnformatted(sp__web_get(t, "before"))) ? s : "[]");
      free(s);
      sp_strbuf_puts(&sb, ", got ");
      sp_strbuf_puts(&sb, (s = cJSON_PrintUnformatted(sp__web_get(t, "after"))) ? s : "[]");
      free(s);
      snprintf(notes[n], sizeof notes[0], "%s", sp_strbuf_str(&sb));
      sp_strbuf_free(&sb);
      marks[n].tensor = sp__web_str(t, "tensor");
      marks[n].factor = (int)sp__web_num(c, "factor_index");
      marks[n].note = notes[n];
      n++;
    }
  }
  return n;
}

static void conflict_rows(sp_strbuf *sb, const char *key, const cJSON *conflicts, bool link_op) {
  sp_strbuf_puts(sb, "<table class=\"conflicts\"><thead><tr>");
  if (link_op) sp_strbuf_puts(sb, "<th>op</th>");
  sp_strbuf_puts(sb, "<th>factor</th><th>tensor</th><th>wanted</th><th>got</th><th>causes</th>"
                     "<th>resolution</th><th>strategy level</th><th>round</th></tr></thead><tbody>");
  const cJSON *c;
  cJSON_ArrayForEach(c, conflicts) {
    const cJSON *tensors = sp__web_get(c, "tensors");
    int nt = cJSON_GetArraySize(tensors);
    if (nt == 0) nt = 1;
    int k = 0;
    const cJSON *t = tensors ? tensors->child : NULL;
    do {
      sp_strbuf_puts(sb, "<tr>");
      if (k == 0) {
        if (link_op)
          sp_html_printf(sb, "<td rowspan=\"%d\"><a href=\"/plans/%s/ops/%.0f\">%s #%.0f</a> "
                             "<small>line %.0f</small></td>",
                         nt, key, sp__web_num(c, "op"), sp__web_str(c, "op_name"), sp__web_num(c, "op"), sp__web_num(c, "line"));
        sp_html_printf(sb, "<td rowspan=\"%d\">F%.0f <small>%s=%.0f</small></td>", nt,
                       sp__web_num(c, "factor_index"), sp__web_str(c, "factor"), sp__web_num(c, "factor_size"));
      }
      if (t) {
        sp_html_printf(sb, "<td>%s</td><td class=\"mono\">", sp__web_str(t, "tensor"));
        axes_list(sb, sp__web_get(t, "before"));
        sp_strbuf_puts(sb, "</td><td class=\"mono\">");
        axes_list(sb, sp__web_get(t, "after"));
        sp_strbuf_puts(sb, "</td><td>");
        const cJSON *cause;
        int ci = 0;
        cJSON_ArrayForEach(cause, sp__web_get(t, "causes"))
          if (cJSON_IsString(cause)) sp_html_printf(sb, "%s%s", ci++ ? ", " : "", cause->valuestring);
        sp_strbuf_puts(sb, "</td>");
      } else {
        sp_strbuf_puts(sb, "<td colspan=\"4\"></td>");
      }
      if (k == 0) {
        sp_html_printf(sb, "<td rowspan=\"%d\">", nt);
        resolution_text(sb, c);
        sp_html_printf(sb, "</td><td rowspan=\"%d\">%s%s</td><td rowspan=\"%d\" class=\"num\">"
                           "%.0f</td>",
                       nt, sp__web_str(c, "level"),
                       cJSON_IsTrue(sp__web_get(c, "conservative")) ? " (conservative)" : "", nt,
                       sp__web_num(c, "round"));
      }
      sp_strbuf_puts(sb, "</tr>\n");
      k++;
      t = t ? t->next : NULL;
    } while (t);
  }
  sp_strbuf_puts(sb, "</tbody></table>");
}

/* "operands": [{"value": I, "name": "%3", "producer": OP|-1}], "users": [OP...]: written by
 * the plan for each op when known. */
static void neighbours(sp_strbuf *sb, const char *key, const cJSON *op) {
  const cJSON *operands = sp__web_get(op, "operands"), *results = sp__web_get(op, "results"),
              *users = sp__web_get(op, "users");
  if (!operands && !users && !results) return;
  sp_strbuf_puts(sb, "<h2>Data flow</h2><ul>");
  const cJSON *o;
  int i = 0;
  cJSON_ArrayForEach(o, operands) {
    sp_html_printf(sb, "<li>operand %d (T%d): <a href=\"/plans/%s/values/%.0f\">%s</a>", i, i, key,
                   sp__web_num(o, "value"), sp__web_str(o, "name"));
    if (sp__web_num(o, "producer") >= 0 && cJSON_IsNumber(sp__web_get(o, "producer")))
      sp_html_printf(sb, " from <a href=\"/plans/%s/ops/%.0f\">op #%.0f</a>", key,
                     sp__web_num(o, "producer"), sp__web_num(o, "producer"));
    sp_strbuf_puts(sb, "</li>");
    i++;
  }
  int nops = i;
  i = 0;
  cJSON_ArrayForEach(o, results) {
    sp_html_printf(sb, "<li>result %d (T%d): <a href=\"/plans/%s/values/%.0f\">%s</a></li>", i,
                   nops + i, key, sp__web_num(o, "value"), sp__web_str(o, "name"));
    i++;
  }
  if (cJSON_GetArraySize(users) > 0) {
    sp_strbuf_puts(sb, "<li>feeds ");
    i = 0;
    cJSON_ArrayForEach(o, users)
      if (cJSON_IsNumber(o))
        sp_html_printf(sb, "%s<a href=\"/plans/%s/ops/%.0f\">op #%.0f</a>", i++ ? ", " : "", key,
                       o->valuedouble, o->valuedouble);
    sp_strbuf_puts(sb, "</li>");
  }
  sp_strbuf_puts(sb, "</ul>");
}

void sp__web_page_op(sp_web *w, const sp_web_request *req, const char *key, long n,
                     sp_web_response *r) {
  (void)req;
  sp_err err;
  sp_err_clear(&err);
  cJSON *op = sp__web_row(w, key, "op", n, &err);
  if (!op) {
    sp__web_store_error(r, &err, false);
    return;
  }
  cJSON *conflicts = conflicts_of(w, key, n);
  int nconf = cJSON_GetArraySize(conflicts);
  sp_web_mark marks[256];
  char (*notes)[200] = calloc(256, sizeof *notes);
  int nmarks = notes ? collect_marks(conflicts, marks, 256, notes) : 0;

  sp_strbuf *sb = &r->body;
  char title[160];
  snprintf(title, sizeof title, "%s #%ld", sp__web_str(op, "name"), n);
  sp_html_begin(sb, title);
  sp_html_printf(sb, "<p><a href=\"/plans/%s\">&larr; plan %.12s</a></p>", key, key);
  sp_html_printf(sb, "<h1><code>%s</code> #%ld</h1><p>line %.0f, column %.0f", sp__web_str(op, "name"), n,
                 sp__web_num(op, "line"), sp__web_num(op, "col"));
  if (cJSON_IsTrue(sp__web_get(op, "erased"))) sp_strbuf_puts(sb, " &middot; erased by the passes");
  sp_strbuf_puts(sb, "</p>");
  if (*sp__web_str(op, "rule")) sp_html_printf(sb, "<p>rule <code>%s</code></p>", sp__web_str(op, "rule"));
  sp_html_printf(sb, "<p>%d conflict%s on this op.</p>", nconf, nconf == 1 ? "" : "s");
  sp_strbuf_puts(sb, "<div class=\"side\"><div><h2>Before propagation</h2>");
  sp_web_factor_table(sb, sp__web_get(op, "before"), NULL, NULL, 0);
  sp_strbuf_puts(sb, "</div><div><h2>After propagation</h2>");
  sp_web_factor_table(sb, sp__web_get(op, "after"), NULL, marks, nmarks);
  sp_strbuf_puts(sb, "</div></div>");
  if (nconf > 0) {
    sp_strbuf_puts(sb, "<h2>Conflicts</h2>");
    conflict_rows(sb, key, conflicts, false);
  }
  neighbours(sb, key, op);
  sp_html_end(sb);
  free(notes);
  cJSON_Delete(conflicts);
  cJSON_Delete(op);
}

void sp__web_page_conflicts(sp_web *w, const sp_web_request *req, const char *key,
                            sp_web_response *r) {
  long page = sp__web_arg_long(req, "page", 0, 0, 1L << 30);
  sp_store_row_page pg;
  memset(&pg, 0, sizeof pg);
  sp_err err;
  sp_err_clear(&err);
  cJSON *summary = sp__web_row(w, key, "summary", 0, NULL);
  int64_t nconflicts = sp__web_count(summary, "nconflicts");
  cJSON_Delete(summary);
  if (sp__web_rows_page(w, key, "conflict", NULL, page, nconflicts, &pg, &err) != SP_OK) {
    sp_store_row_page_free(&pg);
    sp__web_store_error(r, &err, false);
    return;
  }
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < pg.n; i++) {
    cJSON *c = cJSON_Parse(pg.rows[i].json);
    if (c) cJSON_AddItemToArray(arr, c);
  }
  sp_strbuf *sb = &r->body;
  sp_html_begin(sb, "Conflicts");
  sp_html_printf(sb, "<p><a href=\"/plans/%s\">&larr; plan %.12s</a></p><h1>Conflicts</h1>", key,
                 key);
  if (pg.total == 0) {
    sp_strbuf_puts(sb, "<p>Propagation met no conflict in this plan.</p>");
  } else {
    sp_html_printf(sb, "<p>%lld conflicts: for each op and factor, the axes each tensor wanted "
                       "and got, and how propagation resolved it.</p>",
                   (long long)pg.total);
    conflict_rows(sb, key, arr, true);
    char base[128];
    snprintf(base, sizeof base, "/plans/%s/conflicts", key);
    sp__web_pager(sb, base, NULL, page, pg.total, SP_WEB_PAGE_SIZE);
  }
  sp_html_end(sb);
  cJSON_Delete(arr);
  sp_store_row_page_free(&pg);
}
