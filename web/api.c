/*
 * api.c - the dashboard's data as JSON (/api/...), written with cJSON from the store's rows.
 *
 *   /api/stats                         cache statistics
 *   /api/plans?page=N                  plans, newest first (metadata)
 *   /api/plans/KEY                     one plan's metadata, its sections and its summary
 *   /api/plans/KEY/values?page=N&q=S   one page of a section (values, ops, collectives,
 *   /api/plans/KEY/ops ... /collectives, /conflicts, /warnings)
 *   /api/plans/KEY/values/N            one row
 * Pages hold SP_WEB_PAGE_SIZE rows; every answer says the total. For a plan answered moments
 * ago whose rows are still being written, /api/plans/KEY says "rows_pending": true and its
 * row paths answer 503 with Retry-After.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/web_int.h"

static cJSON *plan_meta(const sp_store_plan *p) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "key", p->key);
  cJSON_AddStringToObject(o, "module", p->module_name ? p->module_name : "");
  cJSON_AddStringToObject(o, "mesh", p->mesh ? p->mesh : "");
  cJSON_AddStringToObject(o, "status", p->status ? p->status : "");
  cJSON_AddStringToObject(o, "planner_version", p->planner_version ? p->planner_version : "");
  if (p->gap == p->gap) cJSON_AddNumberToObject(o, "gap", p->gap);
  if (p->total_cost == p->total_cost) cJSON_AddNumberToObject(o, "total_cost", p->total_cost);
  cJSON_AddNumberToObject(o, "created_ms", (double)p->created_ms);
  cJSON_AddNumberToObject(o, "last_used_ms", (double)p->last_used_ms);
  cJSON_AddNumberToObject(o, "hits", (double)p->hits);
  cJSON_AddNumberToObject(o, "size_bytes", (double)p->size_bytes);
  return o;
}

static void stats(sp_web *w, sp_web_response *r) {
  sp_store_stats st;
  sp_err err;
  sp_err_clear(&err);
  if (sp_store_stats_get(w->store, &st, &err) != SP_OK) {
    sp__web_store_error(r, &err, true);
    return;
  }
  cJSON *o = cJSON_CreateObject();
  if (o) {
    cJSON_AddNumberToObject(o, "plans", (double)st.plans);
    cJSON_AddNumberToObject(o, "total_bytes", (double)st.total_bytes);
    cJSON_AddNumberToObject(o, "hits", (double)st.hits);
    cJSON_AddNumberToObject(o, "misses", (double)st.misses);
    cJSON_AddNumberToObject(o, "evictions", (double)st.evictions);
    cJSON_AddNumberToObject(o, "max_bytes", (double)st.max_bytes);
  }
  sp__web_json(r, 200, o);
}

static void plans(sp_web *w, const sp_web_request *req, sp_web_response *r) {
  long page;
  sp_store_plan_list l;
  sp_err err;
  if (sp__web_list_page(w, req, &page, &l, &err) != SP_OK) {
    sp__web_store_error(r, &err, true);
    return;
  }
  cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < l.n; i++) cJSON_AddItemToArray(arr, plan_meta(&l.plans[i]));
  if (o) {
    cJSON_AddNumberToObject(o, "total", (double)l.total);
    cJSON_AddNumberToObject(o, "page", (double)page);
    cJSON_AddItemToObject(o, "plans", arr);
  } else {
    cJSON_Delete(arr);
  }
  sp_store_plan_list_free(&l);
  sp__web_json(r, 200, o);
}

static void plan(sp_web *w, const char *key, sp_web_response *r) {
  sp_store_plan meta;
  if (!sp__web_plan_meta(w, key, true, &meta, r)) return;
  cJSON *o = plan_meta(&meta);
  sp_store_plan_free(&meta);
  /* Answered moments ago: its rows (sections, summary) are still being written. */
  bool pending = sp__web_rows_pending(w, key);
  if (o) cJSON_AddBoolToObject(o, "rows_pending", pending);
  if (pending) r->retry_after_s = SP_WEB_PENDING_RETRY_S;
  sp_store_section_count *secs = NULL;
  size_t nsecs = 0;
  if (o && sp_store_sections(w->store, key, &secs, &nsecs, NULL) == SP_OK) {
    cJSON *s = cJSON_AddObjectToObject(o, "sections");
    for (size_t i = 0; s && i < nsecs; i++)
      cJSON_AddNumberToObject(s, secs[i].name, (double)secs[i].rows);
  }
  free(secs);
  cJSON *summary = sp__web_row(w, key, "summary", 0, NULL);
  if (o && summary) cJSON_AddItemToObject(o, "summary", summary);
  else cJSON_Delete(summary);
  sp__web_json(r, 200, o);
}

/* "values" -> "value" (the store's section names are singular). */
static bool section_of(const char *plural, size_t n, char *out, size_t cap) {
  static const char *known[] = {"values", "ops", "collectives", "conflicts", "warnings"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strlen(known[i]) == n && strncmp(plural, known[i], n) == 0 && n < cap) {
      memcpy(out, plural, n - 1);
      out[n - 1] = '\0';
      return true;
    }
  return false;
}

static void rows(sp_web *w, const sp_web_request *req, const char *key, const char *section,
                 sp_web_response *r) {
  long page = sp__web_arg_long(req, "page", 0, 0, 1L << 30);
  sp_store_row_page pg;
  memset(&pg, 0, sizeof pg);
  sp_err err;
  sp_err_clear(&err);
  /* sections numbered 0..n-1 are paged by idx; their counts are in the summary row */
  static const char *const dense[][2] = {{"value", "nvalues"}, {"collective", "ncollectives"},
                                         {"conflict", "nconflicts"}, {"warning", "nwarnings"}};
  int64_t total = -1;
  for (size_t i = 0; i < sizeof dense / sizeof dense[0]; i++)
    if (strcmp(section, dense[i][0]) == 0) {
      cJSON *summary = sp__web_row(w, key, "summary", 0, NULL);
      total = sp__web_count(summary, dense[i][1]);
      cJSON_Delete(summary);
    }
  if (sp__web_rows_page(w, key, section, sp_web_arg_get(req, "q"), page, total, &pg, &err) !=
      SP_OK) {
    sp_store_row_page_free(&pg);
    sp__web_store_error(r, &err, true);
    return;
  }
  cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < pg.n; i++) {
    cJSON *row = cJSON_CreateObject();
    if (!row) break;
    cJSON_AddNumberToObject(row, "index", (double)pg.rows[i].idx);
    cJSON_AddStringToObject(row, "label", pg.rows[i].label ? pg.rows[i].label : "");
    cJSON *data = cJSON_Parse(pg.rows[i].json);
    if (strcmp(section, "value") == 0) sp__web_value_origins(w, key, data, pg.rows[i].idx);
    cJSON_AddItemToObject(row, "data", data ? data : cJSON_CreateNull());
    cJSON_AddItemToArray(arr, row);
  }
  if (o) {
    cJSON_AddNumberToObject(o, "total", (double)pg.total);
    cJSON_AddNumberToObject(o, "page", (double)page);
    cJSON_AddNumberToObject(o, "page_size", SP_WEB_PAGE_SIZE);
    cJSON_AddItemToObject(o, "rows", arr);
  } else {
    cJSON_Delete(arr);
  }
  sp_store_row_page_free(&pg);
  sp__web_json(r, 200, o);
}

void sp__web_api(sp_web *w, const sp_web_request *req, const char *rest, sp_web_response *r) {
  if (strcmp(rest, "/stats") == 0) {
    stats(w, r);
    return;
  }
  if (strcmp(rest, "/plans") == 0 || strcmp(rest, "/plans/") == 0) {
    plans(w, req, r);
    return;
  }
  if (strncmp(rest, "/plans/", 7) == 0) {
    const char *k = rest + 7;
    size_t kl = strcspn(k, "/");
    char key[SP_STORE_HASH_HEX + 1];
    if (kl != SP_STORE_HASH_HEX) goto notfound;
    memcpy(key, k, kl);
    key[kl] = '\0';
    if (!sp_store_hash_valid(key)) goto notfound;
    const char *sub = k + kl;
    if (!*sub) {
      plan(w, key, r);
      return;
    }
    sub++;
    size_t sl = strcspn(sub, "/");
    char section[32];
    if (!section_of(sub, sl, section, sizeof section)) goto notfound;
    if (sp__web_rows_pending(w, key)) {
      sp__web_json_error(r, 503, "this plan was answered moments ago and its rows are still "
                                 "being written; retry after Retry-After seconds");
      r->retry_after_s = SP_WEB_PENDING_RETRY_S;
      return;
    }
    if (!sub[sl]) {
      rows(w, req, key, section, r);
      return;
    }
    const char *idx = sub + sl + 1;
    char *end;
    long n = strtol(idx, &end, 10);
    if (!*idx || *end || n < 0) goto notfound;
    sp_err err;
    sp_err_clear(&err);
    cJSON *row = sp__web_row(w, key, section, n, &err);
    if (!row) {
      sp__web_store_error(r, &err, true);
      return;
    }
    sp__web_json(r, 200, row);
    return;
  }
notfound:
  sp__web_json_error(r, 404, "no such API path");
}
