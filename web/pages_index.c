/*
 * pages_index.c - `/`, the plans newest first with the cache's size and hit rate, and the
 * login page asked for when the dashboard has an access token.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "web/web_int.h"

static void when(sp_strbuf *sb, int64_t ms) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  char buf[32];
  if (gmtime_r(&t, &tm) && strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm))
    sp_strbuf_printf(sb, "%s UTC", buf);
}

static void cache_summary(sp_web *w, sp_strbuf *sb) {
  sp_store_stats st;
  sp_err err;
  sp_err_clear(&err);
  if (sp_store_stats_get(w->store, &st, &err) != SP_OK) {
    sp_html_printf(sb, "<p class=\"error\">cache statistics unavailable: %s</p>", err.msg);
    return;
  }
  int64_t asked = st.hits + st.misses;
  sp_html_printf(sb, "<section class=\"cards\"><div class=\"card\"><b>%lld</b> plans</div>",
                 (long long)st.plans);
  sp_strbuf_puts(sb, "<div class=\"card\"><b>");
  sp_html_bytes(sb, (double)st.total_bytes);
  sp_strbuf_puts(sb, "</b> stored");
  if (st.max_bytes > 0) {
    sp_strbuf_puts(sb, " of ");
    sp_html_bytes(sb, (double)st.max_bytes);
  }
  sp_strbuf_puts(sb, "</div>");
  if (asked > 0)
    sp_html_printf(sb, "<div class=\"card\"><b>%.1f%%</b> hit rate (%lld hits, %lld misses)</div>",
                   100.0 * (double)st.hits / (double)asked, (long long)st.hits,
                   (long long)st.misses);
  else sp_strbuf_puts(sb, "<div class=\"card\"><b>-</b> hit rate (no requests yet)</div>");
  sp_strbuf_puts(sb, "</section>\n");
}

void sp__web_page_index(sp_web *w, const sp_web_request *req, sp_web_response *r) {
  long page;
  sp_store_plan_list l;
  sp_err err;
  if (sp__web_list_page(w, req, &page, &l, &err) != SP_OK) {
    sp__web_store_error(r, &err, false);
    return;
  }
  sp_strbuf *sb = &r->body;
  sp_html_begin(sb, "Plans");
  sp_strbuf_puts(sb, "<h1>Plans</h1>\n");
  if (sp_web_arg_get(req, "deleted")) sp_strbuf_puts(sb, "<p class=\"note\">Plan deleted.</p>");
  cache_summary(w, sb);
  if (l.total == 0) {
    sp_strbuf_puts(sb, "<p>No plans yet. Plan a graph with <code>shardplan plan FILE</code>.</p>");
  } else {
    sp_strbuf_puts(sb, "<table class=\"plans\"><thead><tr><th>key</th><th>module</th>"
                       "<th>mesh</th><th>created</th><th>status</th><th>total cost</th>"
                       "<th>hits</th><th>size</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < l.n; i++) {
      const sp_store_plan *p = &l.plans[i];
      sp_html_printf(sb, "<tr><td><a class=\"key\" href=\"/plans/%s\">%.12s</a></td>", p->key,
                     p->key);
      sp_html_printf(sb, "<td>%s</td><td><code>%s</code></td><td>", p->module_name, p->mesh);
      when(sb, p->created_ms);
      sp_html_printf(sb, "</td><td><span class=\"status %s\">%s</span>", p->status, p->status);
      if (p->gap == p->gap && p->gap > 0) sp_html_printf(sb, " (gap %.2f%%)", 100 * p->gap);
      sp_strbuf_puts(sb, "</td><td>");
      if (p->total_cost == p->total_cost) sp_html_seconds(sb, p->total_cost);
      else sp_strbuf_puts(sb, "-");
      sp_html_printf(sb, "</td><td>%lld</td><td>", (long long)p->hits);
      sp_html_bytes(sb, (double)p->size_bytes);
      sp_strbuf_puts(sb, "</td></tr>\n");
    }
    sp_strbuf_puts(sb, "</tbody></table>\n");
    sp__web_pager(sb, "/", NULL, page, l.total, SP_WEB_PAGE_SIZE);
  }
  if (w->version[0]) sp_html_printf(sb, "<footer>shardplan %s</footer>", w->version);
  sp_html_end(sb);
  sp_store_plan_list_free(&l);
}

void sp__web_page_login(sp_web *w, const sp_web_request *req, sp_web_response *r, bool failed) {
  sp_strbuf *sb = &r->body;
  sp_strbuf_reset(sb);
  sp_html_begin(sb, "Access token");
  sp_strbuf_puts(sb, "<h1>Access token</h1><p>This dashboard needs the token the daemon was "
                     "started with (<code>--token-file</code>).</p>");
  if (failed) sp_strbuf_puts(sb, "<p class=\"error\">That token is not right.</p>");
  const char *next = req->path && strcmp(req->path, "/login") != 0 ? req->path : "/";
  sp_html_printf(sb, "<form method=\"post\" action=\"/login\"><input type=\"hidden\" "
                     "name=\"csrf\" value=\"%s\"><input type=\"hidden\" name=\"next\" "
                     "value=\"%s\"><label>token <input type=\"password\" name=\"token\" "
                     "autocomplete=\"current-password\" autofocus></label> <button>Open</button>"
                     "</form>",
                 w->guard.csrf, next);
  sp_html_end(sb);
}
