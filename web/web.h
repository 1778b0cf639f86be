/*
 * web.h - the HTTP dashboard, served by libmicrohttpd inside shardpland.
 *
 * Server-rendered HTML with inline SVG, read from the plan cache (store/): the plan list, a
 * plan's page (mesh, costs, solver statistics, a cost chart, the shardings table, the
 * collectives), each op's factor table before and after propagation, the conflicts, and a
 * value's provenance; the same data as JSON under /api/; /metrics (Prometheus text) and
 * /healthz. The stylesheet is compiled into the program; nothing is fetched from elsewhere.
 *
 * Safe by default (guard.h): loopback bind unless told otherwise, Host and Origin checks, a
 * CSRF token on the one state-changing request (POST /plans/KEY/delete), an optional access
 * token kept in an HttpOnly SameSite=Strict cookie, every name HTML-escaped, CSP
 * default-src 'self', connection timeouts and limits.
 *
 * Lifetime: sp_web_new builds the handler (no socket); sp_web_listen starts serving on its own
 * threads; sp_web_free stops and frees. The store and metrics are borrowed and must outlive
 * the dashboard. sp_web_handle is the whole router without sockets (tests, fuzzing); it is
 * safe to call from several threads at once.
 */
#ifndef SP_WEB_WEB_H
#define SP_WEB_WEB_H

#include <stdbool.h>

#include "ir/err.h"
#include "web/metrics.h"
#include "web/request.h"

typedef struct sp_store sp_store;
typedef struct sp_web sp_web;

#define SP_WEB_DEFAULT_LISTEN "127.0.0.1:8080"

typedef struct sp_web_config {
  const char *listen;             /* "HOST:PORT" ("[::1]:PORT"); NULL: SP_WEB_DEFAULT_LISTEN;
                                     port 0 picks a free one */
  const char *token;              /* required access token, or NULL */
  const char *const *allow_hosts; /* extra Host names accepted (behind a proxy), or NULL */
  int nallow_hosts;
  unsigned timeout_s;             /* idle connection timeout; 0: 30 */
  unsigned max_connections;       /* 0: 64 */
  unsigned threads;               /* 0: 2 */
  const char *version;            /* shown in the footer and /healthz, may be NULL */
  /* Whether plan `key` was answered moments ago and its detail rows are still being written
   * (the daemon: sp_service_rows_pending); its pages then say so and reload, its API rows
   * answer 503 with Retry-After. NULL: never. */
  bool (*rows_pending)(void *ctx, const char *key);
  void *rows_pending_ctx;
} sp_web_config;

int sp_web_new(const sp_web_config *cfg, sp_store *store, sp_metrics *metrics, sp_web **out,
               sp_err *err);
/* Binds and starts serving. SP_EIO naming the address when it cannot bind. */
int sp_web_listen(sp_web *w, sp_err *err);
/* The port bound (after sp_web_listen), and the "HOST:PORT" text to print. */
int sp_web_port(const sp_web *w);
const char *sp_web_address(const sp_web *w);
void sp_web_free(sp_web *w);

/* The CSRF token the dashboard's forms carry (tests post forms with it). */
const char *sp_web_csrf_token(const sp_web *w);

/* Answers one request (see the top comment). `resp` must be sp_web_response_init'ed; the
 * caller frees it. */
void sp_web_handle(sp_web *w, const sp_web_request *req, sp_web_response *resp);

#endif /* SP_WEB_WEB_H */
