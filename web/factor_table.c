/*
 * factor_table.c - the factor table as HTML (see factor_table.h).
 */
#include "web/factor_table.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "web/html.h"
#include "web/web_int.h"

void sp_web_axes(sp_strbuf *sb, const cJSON *arr) {
  int n = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, arr) {
    if (!cJSON_IsString(a)) continue;
    if (n++) sp_strbuf_puts(sb, ", ");
    sp_strbuf_puts(sb, "&quot;");
    sp_html_text(sb, a->valuestring);
    sp_strbuf_puts(sb, "&quot;");
  }
  if (!n) sp_strbuf_puts(sb, "-");
}

static const sp_web_mark *mark_of(const sp_web_mark *marks, int n, const char *tensor, int f) {
  for (int i = 0; i < n; i++)
    if (marks[i].factor == f && tensor && marks[i].tensor && strcmp(marks[i].tensor, tensor) == 0)
      return &marks[i];
  return NULL;
}

/* "operand 0" -> "T0" style labels: operands first, then results, numbered together. */
static void row_label(sp_strbuf *sb, int row, const char *tensor) {
  sp_html_printf(sb, "<th>T%d <small>%s</small></th>", row, tensor ? tensor : "");
}

void sp_web_factor_table(sp_strbuf *sb, const cJSON *table, const char *caption,
                         const sp_web_mark *marks, int nmarks) {
  sp_strbuf_puts(sb, "<table class=\"factors\">");
  if (caption) sp_html_printf(sb, "<caption>%s</caption>", caption);
  if (!table || cJSON_IsNull(table)) {
    sp_strbuf_puts(sb, "<tr><td class=\"empty\">no sharding on a common mesh</td></tr></table>");
    return;
  }
  const cJSON *factors = cJSON_GetObjectItemCaseSensitive(table, "factors");
  const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(table, "tensors");
  int nf = cJSON_GetArraySize(factors);
  sp_strbuf_puts(sb, "<thead><tr><th></th>");
  const cJSON *f;
  int fi = 0;
  cJSON_ArrayForEach(f, factors) {
    const char *kind = sp__web_str(f, "kind");
    sp_html_printf(sb, "<th title=\"%s\">F%d <small>%s=%.0f</small><small>%s%s</small></th>",
                   sp__web_str(f, "name") ? sp__web_str(f, "name") : "", fi, sp__web_str(f, "name") ? sp__web_str(f, "name") : "?",
                   sp__web_num(f, "size"), kind ? kind : "",
                   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "blocked")) ? ", blocked" : "");
    fi++;
  }
  sp_strbuf_puts(sb, "<th>replicated</th><th>unreduced</th></tr></thead><tbody>");
  const cJSON *t;
  int row = 0;
  cJSON_ArrayForEach(t, tensors) {
    const char *tname = sp__web_str(t, "tensor");
    sp_strbuf_puts(sb, "<tr>");
    row_label(sb, row++, tname);
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(t, "cells");
    for (int i = 0; i < nf; i++) {
      const cJSON *c = cJSON_GetArrayItem(cells, i);
      const sp_web_mark *mk = mark_of(marks, nmarks, tname, i);
      bool present = c && cJSON_IsObject(c);
      const char *cls = mk ? "cell conflict" : present ? "cell" : "empty";
      sp_strbuf_puts(sb, "<td class=\"");
      sp_strbuf_puts(sb, cls);
      if (present && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "updated")))
        sp_strbuf_puts(sb, " updated");
      sp_strbuf_puts(sb, "\"");
      if (mk && mk->note) sp_html_printf(sb, " title=\"%s\"", mk->note);
      sp_strbuf_puts(sb, ">");
      if (present) {
        /* Shardy's dimension notation: {"x", "y"} closed, {"x", ?} open, {} and {?} empty */
        const cJSON *axes = cJSON_GetObjectItemCaseSensitive(c, "axes");
        bool open = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "closed"));
        int na = cJSON_GetArraySize(axes);
        sp_strbuf_puts(sb, "{");
        if (na) sp_web_axes(sb, axes);
        if (open) sp_strbuf_puts(sb, na ? ", ?" : "?");
        sp_strbuf_puts(sb, "}");
        const cJSON *ov = cJSON_GetObjectItemCaseSensitive(c, "overflow");
        if (cJSON_GetArraySize(ov) > 0) {
          sp_strbuf_puts(sb, " <small>overflow ");
          sp_web_axes(sb, ov);
          sp_strbuf_puts(sb, "</small>");
        }
      } else {
        sp_strbuf_puts(sb, "&middot;");
      }
      if (mk) sp_strbuf_puts(sb, " <b>!</b>");
      sp_strbuf_puts(sb, "</td>");
    }
    sp_strbuf_puts(sb, "<td>");
    sp_web_axes(sb, cJSON_GetObjectItemCaseSensitive(t, "replicated"));
    sp_strbuf_puts(sb, "</td><td>");
    sp_web_axes(sb, cJSON_GetObjectItemCaseSensitive(t, "unreduced"));
    sp_strbuf_puts(sb, "</td></tr>");
  }
  sp_strbuf_puts(sb, "</tbody></table>");
}
