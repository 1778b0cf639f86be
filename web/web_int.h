/*
 * web_int.h - the dashboard's internals, shared by its .c files only.
 *
 * Pages are functions (sp_web *, request, path parameters) -> response. They read the store
 * through store/store.h only; row JSON is parsed with cJSON and rendered, every string
 * escaped through html.h.
 */
#ifndef SP_WEB_WEB_INT_H
#define SP_WEB_WEB_INT_H

#include <stdbool.h>

#include "store/store.h"
#include "web/guard.h"
#include "web/html.h"
#include "web/metrics.h"
#include "web/web.h"

struct MHD_Daemon;
typedef struct cJSON cJSON;

#define SP_WEB_PAGE_SIZE 50       /* rows per table page */

struct sp_web {
  sp_store *store;                /* borrowed */
  bool (*rows_pending)(void *ctx, const char *key);   /* sp_web_config's, may be NULL */
  void *rows_pending_ctx;
  sp_metrics *metrics;            /* borrowed, may be NULL */
  sp_web_guard guard;
  char listen[300];
  char address[300];
  char version[64];
  int port;
  unsigned timeout_s, max_connections, threads;
  struct MHD_Daemon *daemon;
};

/* Responses. */
void sp__web_error(sp_web_response *r, int status, const char *title, const char *detail);
void sp__web_json(sp_web_response *r, int status, cJSON *body);   /* takes ownership */
void sp__web_json_error(sp_web_response *r, int status, const char *message);
void sp__web_redirect(sp_web_response *r, const char *location);
/* Maps a store failure to 404 (SP_ENOTFOUND) or 500, for HTML or JSON. */
void sp__web_store_error(sp_web_response *r, const sp_err *err, bool json);
/* Plan `key`'s metadata (no blobs) into *meta, which the caller frees (sp_store_plan_free);
 * false when the store has none or fails, after answering with sp__web_store_error. */
bool sp__web_plan_meta(sp_web *w, const char *key, bool json, sp_store_plan *meta,
                       sp_web_response *r);

/* Whether plan `key`'s detail rows are being written (sp_web_config.rows_pending). */
bool sp__web_rows_pending(sp_web *w, const char *key);
/* Seconds a page or API answer for a plan whose rows are being written asks to wait. */
#define SP_WEB_PENDING_RETRY_S 1

/* Pages (pages_*.c). `key` is validated (64 hex digits) by the router. */
void sp__web_page_index(sp_web *w, const sp_web_request *req, sp_web_response *r);
void sp__web_page_plan(sp_web *w, const sp_web_request *req, const char *key, sp_web_response *r);
void sp__web_page_op(sp_web *w, const sp_web_request *req, const char *key, long n,
                     sp_web_response *r);
void sp__web_page_conflicts(sp_web *w, const sp_web_request *req, const char *key,
                            sp_web_response *r);
void sp__web_page_value(sp_web *w, const sp_web_request *req, const char *key, long n,
                        sp_web_response *r);
void sp__web_page_login(sp_web *w, const sp_web_request *req, sp_web_response *r, bool failed);

/* JSON API (api.c): /api/plans, /api/plans/KEY, /api/plans/KEY/{values,ops,collectives,
 * conflicts}[/N], /api/stats. `rest` is the path after "/api". */
void sp__web_api(sp_web *w, const sp_web_request *req, const char *rest, sp_web_response *r);

/* Reading row JSON: a member, a number (0 when absent) and a string ("" when absent). */
const cJSON *sp__web_get(const cJSON *o, const char *k);
double sp__web_num(const cJSON *o, const char *k);
const char *sp__web_str(const cJSON *o, const char *k);

/* Helpers for pages. */
long sp__web_arg_long(const sp_web_request *req, const char *key, long dflt, long lo, long hi);
/* "<nav class=pager>" with previous/next links for `base` ("?page=N" appended). */
void sp__web_pager(sp_strbuf *sb, const char *base, const char *extra_q, long page,
                   int64_t total, int64_t per_page);
/* Gives a value row that has no "origins" the plan's "origin" row idx (store/plan_rows.h),
 * tracing the stored plan first when that has not been done yet. */
void sp__web_value_origins(sp_web *w, const char *key, cJSON *value, int64_t idx);
/* Loads one row (section, idx) of a plan as parsed JSON; NULL with err set when absent. A
 * value row comes with its "origins". */
cJSON *sp__web_row(sp_web *w, const char *key, const char *section, int64_t idx, sp_err *err);

/* One page of a section's rows. A section whose rows are numbered 0..n-1 (values,
 * collectives, conflicts, warnings), read without a filter, is paged by idx through the index
 * (O(log n) whatever the page) when `dense_total` (its row count, from the summary row) is
 * known (>= 0); otherwise by offset, counting the matches. */
int sp__web_rows_page(sp_web *w, const char *key, const char *section, const char *filter,
                      int64_t page, int64_t dense_total, sp_store_row_page *pg, sp_err *err);
/* The page of the plan list a request asks for (?page=N), newest first; *l is freed by the
 * caller on success and already freed on failure. */
int sp__web_list_page(sp_web *w, const sp_web_request *req, long *page, sp_store_plan_list *l,
                      sp_err *err);
/* A count of the summary row ("nvalues", ...); -1 when absent. */
int64_t sp__web_count(const cJSON *summary, const char *field);

int sp__web_split_listen(const char *listen, char *host, size_t hcap, char *port, size_t pcap,
                         sp_err *err);
void sp__web_stop_daemon(sp_web *w);

/* The built-in stylesheet (assets.c, generated from web/assets/style.css at build time). */
extern const char sp__web_style_css[];

#endif /* SP_WEB_WEB_INT_H */
