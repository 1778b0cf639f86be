/*
 * web.c - the dashboard's front door: construction, the router and its guards, and the
 * response helpers pages share.
 *
 * Order of checks for every request: Host (DNS rebinding), then the access token when one is
 * set (/healthz and /static/ are open), then the route. POSTs (login, delete) also need a
 * same-origin Origin or Referer and the CSRF field; every other route is read-only and
 * answers GET and HEAD only.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/plan_rows.h"
#include "web/web_int.h"

int sp_web_new(const sp_web_config *cfg, sp_store *store, sp_metrics *metrics, sp_web **out,
               sp_err *err) {
  *out = NULL;
  sp_web *w = calloc(1, sizeof *w);
  if (!w) return sp_err_set(err, SP_ENOMEM, "dashboard: out of memory");
  const char *listen = cfg && cfg->listen ? cfg->listen : SP_WEB_DEFAULT_LISTEN;
  snprintf(w->listen, sizeof w->listen, "%s", listen);
  char host[256], port[16];
  int rc = sp__web_split_listen(listen, host, sizeof host, port, sizeof port, err);
  if (!rc)
    rc = sp_web_guard_init(&w->guard, host, cfg ? cfg->token : NULL,
                           cfg ? cfg->allow_hosts : NULL, cfg ? cfg->nallow_hosts : 0, err);
  if (rc) {
    free(w);
    return rc;
  }
  w->store = store;
  w->metrics = metrics;
  w->rows_pending = cfg ? cfg->rows_pending : NULL;
  w->rows_pending_ctx = cfg ? cfg->rows_pending_ctx : NULL;
  w->timeout_s = cfg && cfg->timeout_s ? cfg->timeout_s : 30;
  w->max_connections = cfg && cfg->max_connections ? cfg->max_connections : 64;
  w->threads = cfg && cfg->threads ? cfg->threads : 2;
  snprintf(w->version, sizeof w->version, "%s", cfg && cfg->version ? cfg->version : "");
  *out = w;
  return SP_OK;
}

void sp_web_free(sp_web *w) {
  if (!w) return;
  sp__web_stop_daemon(w);
  free(w);
}

int sp_web_port(const sp_web *w) { return w->port; }
const char *sp_web_address(const sp_web *w) { return w->address; }
const char *sp_web_csrf_token(const sp_web *w) { return w->guard.csrf; }

/* ------------------------------------------------------------------ responses */

void sp__web_error(sp_web_response *r, int status, const char *title, const char *detail) {
  sp_strbuf_reset(&r->body);
  r->status = status;
  r->content_type = "text/html; charset=utf-8";
  sp_html_begin(&r->body, title);
  sp_html_printf(&r->body, "<h1>%s</h1><p class=\"error\">%s</p><p><a href=\"/\">All plans</a></p>",
                 title, detail ? detail : "");
  sp_html_end(&r->body);
}

void sp__web_json(sp_web_response *r, int status, cJSON *body) {
  sp_strbuf_reset(&r->body);
  r->status = status;
  r->content_type = "application/json";
  char *text = body ? cJSON_PrintUnformatted(body) : NULL;
  cJSON_Delete(body);
  if (!text) {
    r->status = 500;
    sp_strbuf_puts(&r->body, "{\"error\":\"out of memory\"}");
    return;
  }
  sp_strbuf_puts(&r->body, text);
  sp_strbuf_putc(&r->body, '\n');
  free(text);
}

void sp__web_json_error(sp_web_response *r, int status, const char *message) {
  cJSON *o = cJSON_CreateObject();
  if (o) cJSON_AddStringToObject(o, "error", message);
  sp__web_json(r, status, o);
  r->status = status;
}

void sp__web_redirect(sp_web_response *r, const char *location) {
  sp_strbuf_reset(&r->body);
  r->status = 303;
  free(r->location);
  r->location = strdup(location);
}

void sp__web_store_error(sp_web_response *r, const sp_err *err, bool json) {
  int status = err->code == SP_ENOTFOUND ? 404 : 500;
  const char *title = status == 404 ? "Not found" : "Cache error";
  if (json) sp__web_json_error(r, status, err->msg);
  else sp__web_error(r, status, title, err->msg);
}

bool sp__web_plan_meta(sp_web *w, const char *key, bool json, sp_store_plan *meta,
                       sp_web_response *r) {
  memset(meta, 0, sizeof *meta);
  sp_err err;
  sp_err_clear(&err);
  if (sp_store_get(w->store, key, 0, meta, &err) == SP_OK) return true;
  sp_store_plan_free(meta);
  sp__web_store_error(r, &err, json);
  return false;
}

bool sp__web_rows_pending(sp_web *w, const char *key) {
  return w->rows_pending && w->rows_pending(w->rows_pending_ctx, key);
}

/* Any page of a plan whose detail rows are still being written: what is known (the record),
 * a word on why the rest is missing, and a reload (a meta refresh: the CSP allows no script)
 * until the rows are there. */
static void pending_page(sp_web *w, const char *key, sp_web_response *r) {
  sp_store_plan meta;
  if (!sp__web_plan_meta(w, key, false, &meta, r)) return;
  sp_strbuf *sb = &r->body;
  char title[128];
  snprintf(title, sizeof title, "Plan %.12s", key);
  sp_html_begin_refreshing(sb, title, SP_WEB_PENDING_RETRY_S);
  sp_html_printf(sb, "<h1>Plan <code>%.12s</code> <small>%s</small></h1>", key, meta.module_name);
  sp_html_printf(sb, "<p>key <code>%s</code> &middot; <span class=\"status %s\">%s</span> "
                     "&middot; mesh <code>%s</code></p>",
                 key, meta.status, meta.status, meta.mesh);
  sp_html_printf(sb, "<p class=\"pending\">This plan was answered moments ago; its rows "
                     "(shardings, collectives, factor tables) are being written to the plan "
                     "cache. This page reloads every %d s until they are there.</p>",
                 SP_WEB_PENDING_RETRY_S);
  sp_html_end(sb);
  r->retry_after_s = SP_WEB_PENDING_RETRY_S;
  sp_store_plan_free(&meta);
}

const cJSON *sp__web_get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

double sp__web_num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

const char *sp__web_str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

long sp__web_arg_long(const sp_web_request *req, const char *key, long dflt, long lo, long hi) {
  const char *v = sp_web_arg_get(req, key);
  if (!v || !*v) return dflt;
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < lo) return dflt;
  return n > hi ? hi : n;
}

void sp__web_pager(sp_strbuf *sb, const char *base, const char *extra_q, long page,
                   int64_t total, int64_t per_page) {
  int64_t pages = total <= 0 ? 1 : (total + per_page - 1) / per_page;
  sp_strbuf_puts(sb, "<nav class=\"pager\">");
  if (page > 0) {
    sp_html_printf(sb, "<a rel=\"prev\" href=\"%s?page=%ld", base, page - 1);
    if (extra_q) sp_html_text(sb, extra_q);
    sp_strbuf_puts(sb, "\">&larr; previous</a> ");
  }
  sp_html_printf(sb, "<span>page %ld of %lld (%lld rows)</span>", page + 1, (long long)pages,
                 (long long)total);
  if (page + 1 < pages) {
    sp_html_printf(sb, " <a rel=\"next\" href=\"%s?page=%ld", base, page + 1);
    if (extra_q) sp_html_text(sb, extra_q);
    sp_strbuf_puts(sb, "\">next &rarr;</a>");
  }
  sp_strbuf_puts(sb, "</nav>\n");
}

/* One row, parsed; NULL when absent. */
static cJSON *plain_row(sp_web *w, const char *key, const char *section, int64_t idx,
                        sp_err *err) {
  sp_store_row_query q = {.section = section, .limit = 1, .idx_from = idx, .skip_total = true};
  sp_store_row_page pg;
  memset(&pg, 0, sizeof pg);
  cJSON *j = NULL;
  if (sp_store_rows(w->store, key, &q, &pg, err) == SP_OK) {
    if (pg.n == 1 && pg.rows[0].idx == idx) j = cJSON_Parse(pg.rows[0].json);
    if (!j) sp_err_set(err, SP_ENOTFOUND, "this plan has no %s %lld", section, (long long)idx);
  }
  sp_store_row_page_free(&pg);
  return j;
}

void sp__web_value_origins(sp_web *w, const char *key, cJSON *value, int64_t idx) {
  if (!value || cJSON_GetObjectItemCaseSensitive(value, "origins")) return;
  cJSON *o = plain_row(w, key, "origin", idx, NULL);
  if (!o) {
    /* Not traced yet (the daemon adds the origins after answering): trace it now. */
    if (sp_plan_rows_store_origins(w->store, key, NULL, NULL) != SP_OK) return;
    o = plain_row(w, key, "origin", idx, NULL);
  }
  if (o) cJSON_AddItemToObject(value, "origins", o);
}

cJSON *sp__web_row(sp_web *w, const char *key, const char *section, int64_t idx, sp_err *err) {
  cJSON *j = plain_row(w, key, section, idx, err);
  if (j && strcmp(section, "value") == 0) sp__web_value_origins(w, key, j, idx);
  return j;
}

int sp__web_rows_page(sp_web *w, const char *key, const char *section, const char *filter,
                      int64_t page, int64_t dense_total, sp_store_row_page *pg, sp_err *err) {
  sp_store_row_query q = {.section = section, .label_contains = filter,
                          .offset = page * SP_WEB_PAGE_SIZE, .limit = SP_WEB_PAGE_SIZE};
  bool keyed = (!filter || !*filter) && dense_total >= 0;
  if (keyed) { /* rows 0..n-1: page p starts at idx p * size, found through the index */
    q.offset = 0;
    q.idx_from = page * SP_WEB_PAGE_SIZE;
    q.skip_total = true;
  }
  int rc = sp_store_rows(w->store, key, &q, pg, err);
  if (rc == SP_OK && keyed) pg->total = dense_total;
  return rc;
}

int sp__web_list_page(sp_web *w, const sp_web_request *req, long *page, sp_store_plan_list *l,
                      sp_err *err) {
  *page = sp__web_arg_long(req, "page", 0, 0, 1L << 30);
  sp_store_list_query q = {.offset = *page * SP_WEB_PAGE_SIZE, .limit = SP_WEB_PAGE_SIZE,
                           .order = SP_STORE_ORDER_CREATED};
  memset(l, 0, sizeof *l);
  sp_err_clear(err);
  int rc = sp_store_list(w->store, &q, l, err);
  if (rc != SP_OK) sp_store_plan_list_free(l);
  return rc;
}

int64_t sp__web_count(const cJSON *summary, const char *field) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(summary, field);
  /* A damaged row may hold any number: only counts an int64 can hold are counts. */
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 9.2e18)) return -1;
  return (int64_t)v->valuedouble;
}

/* ------------------------------------------------------------------ router */

static bool is_get(const sp_web_request *req) {
  return strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
}

/* Parses "/plans/<key>[/<rest>]": copies the key, points *rest after it ("" or "/..."). */
static bool plan_path(const char *path, char *key, const char **rest) {
  if (strncmp(path, "/plans/", 7) != 0) return false;
  const char *k = path + 7;
  size_t n = strcspn(k, "/");
  if (n != SP_STORE_HASH_HEX) return false;
  memcpy(key, k, n);
  key[n] = '\0';
  if (!sp_store_hash_valid(key)) return false;
  for (char *p = key; *p; p++)
    if (*p >= 'A' && *p <= 'F') *p = (char)(*p - 'A' + 'a');
  *rest = k + n;
  return true;
}

/* "/ops/12" with prefix "/ops/" -> 12; -1 if not that shape. */
static long numbered(const char *rest, const char *prefix) {
  size_t pl = strlen(prefix);
  if (strncmp(rest, prefix, pl) != 0) return -1;
  const char *d = rest + pl;
  if (!*d || strlen(d) > 9) return -1;
  long n = 0;
  for (; *d; d++) {
    if (*d < '0' || *d > '9') return -1;
    n = n * 10 + (*d - '0');
  }
  return n;
}

static void healthz(sp_web *w, sp_web_response *r) {
  sp_store_stats st;
  sp_err err;
  sp_err_clear(&err);
  r->content_type = "text/plain; charset=utf-8";
  if (w->store && sp_store_stats_get(w->store, &st, &err) != SP_OK) {
    r->status = 503;
    sp_strbuf_printf(&r->body, "unhealthy: %s\n", err.msg);
    return;
  }
  sp_strbuf_puts(&r->body, "ok\n");
}

static void metrics(sp_web *w, sp_web_response *r) {
  r->content_type = "text/plain; version=0.0.4; charset=utf-8";
  if (w->metrics) sp_metrics_render(w->metrics, &r->body);
}

static void login_post(sp_web *w, const sp_web_request *req, sp_web_response *r) {
  if (!sp_web_guard_token_required(&w->guard)) {
    sp__web_redirect(r, "/");
    return;
  }
  if (!sp_web_guard_token_ok(&w->guard, sp_web_form_get(req, "token"))) {
    sp__web_page_login(w, req, r, true);
    r->status = 401;
    return;
  }
  char cookie[200];
  snprintf(cookie, sizeof cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict",
           SP_WEB_SESSION_COOKIE, w->guard.session);
  r->set_cookie = strdup(cookie);
  const char *next = sp_web_form_get(req, "next");
  /* only a local path: never "//host" or "http://..." (no open redirect) */
  bool local = next && next[0] == '/' && next[1] != '/' && next[1] != '\\' &&
               !strpbrk(next, "\r\n");
  sp__web_redirect(r, local ? next : "/");
}

static void delete_post(sp_web *w, const char *key, sp_web_response *r) {
  sp_err err;
  sp_err_clear(&err);
  if (sp_store_delete(w->store, key, &err) != SP_OK) {
    sp__web_store_error(r, &err, false);
    return;
  }
  sp__web_redirect(r, "/?deleted=1");
}

static void route_post(sp_web *w, const sp_web_request *req, sp_web_response *r) {
  if (!sp_web_guard_origin_ok(&w->guard, req)) {
    sp__web_error(r, 403, "Forbidden", "A form must come from this dashboard (Origin).");
    return;
  }
  if (!sp_web_guard_csrf_ok(&w->guard, sp_web_form_get(req, "csrf"))) {
    sp__web_error(r, 403, "Forbidden", "The form's CSRF token is missing or wrong.");
    return;
  }
  if (strcmp(req->path, "/login") == 0) {
    login_post(w, req, r);
    return;
  }
  if (!sp_web_guard_authenticated(&w->guard, req)) {
    sp__web_error(r, 401, "Unauthorized", "Give the access token first.");
    return;
  }
  char key[SP_STORE_HASH_HEX + 1];
  const char *rest;
  if (plan_path(req->path, key, &rest) && strcmp(rest, "/delete") == 0) {
    delete_post(w, key, r);
    return;
  }
  sp__web_error(r, 404, "Not found", "There is no such form.");
}

static void route_get(sp_web *w, const sp_web_request *req, sp_web_response *r) {
  const char *p = req->path;
  char key[SP_STORE_HASH_HEX + 1];
  const char *rest;
  long n;
  if (strcmp(p, "/metrics") == 0) {
    metrics(w, r);
  } else if (strcmp(p, "/api") == 0 || strncmp(p, "/api/", 5) == 0) {
    sp__web_api(w, req, p + 4, r);
  } else if (strcmp(p, "/") == 0) {
    sp__web_page_index(w, req, r);
  } else if (strcmp(p, "/login") == 0) {
    sp__web_page_login(w, req, r, false);
  } else if (plan_path(p, key, &rest)) {
    if (sp__web_rows_pending(w, key)) pending_page(w, key, r);
    else if (!*rest || strcmp(rest, "/") == 0) sp__web_page_plan(w, req, key, r);
    else if (strcmp(rest, "/conflicts") == 0) sp__web_page_conflicts(w, req, key, r);
    else if ((n = numbered(rest, "/ops/")) >= 0) sp__web_page_op(w, req, key, n, r);
    else if ((n = numbered(rest, "/values/")) >= 0) sp__web_page_value(w, req, key, n, r);
    else sp__web_error(r, 404, "Not found", "There is no such page of a plan.");
  } else {
    sp__web_error(r, 404, "Not found", "There is no such page.");
  }
}

void sp_web_handle(sp_web *w, const sp_web_request *req, sp_web_response *r) {
  if (!req->method || !req->path) {
    sp__web_error(r, 400, "Bad request", "No method or path.");
    return;
  }
  if (!req->host || !sp_web_guard_host_ok(&w->guard, req->host)) {
    /* plain text: the page must not echo the foreign name back into HTML */
    r->status = 421;
    r->content_type = "text/plain; charset=utf-8";
    sp_strbuf_puts(&r->body, "shardplan: this dashboard does not answer to that Host name "
                             "(start the daemon with --http-allow-host NAME to allow it)\n");
    return;
  }
  bool get = is_get(req), post = strcmp(req->method, "POST") == 0;
  if (get && strcmp(req->path, "/healthz") == 0) {
    healthz(w, r);
    return;
  }
  if (get && strcmp(req->path, "/static/style.css") == 0) {
    r->content_type = "text/css; charset=utf-8";
    sp_strbuf_puts(&r->body, sp__web_style_css);
    return;
  }
  if (post) {
    route_post(w, req, r);
    return;
  }
  if (!get) {
    sp__web_error(r, 405, "Method not allowed", "The dashboard only reads, except its forms.");
    return;
  }
  if (!sp_web_guard_authenticated(&w->guard, req) && strcmp(req->path, "/login") != 0) {
    bool api = strncmp(req->path, "/api", 4) == 0 || strcmp(req->path, "/metrics") == 0;
    if (api) sp__web_json_error(r, 401, "an access token is required (Authorization: Bearer)");
    else sp__web_page_login(w, req, r, false), r->status = 401;
    return;
  }
  route_get(w, req, r);
}
