/*
 * dashboard.c - the glue between the plan service (server/rpc) and the dashboard (web/):
 * service events become metrics, the service's counters are the scrape-time gauges, and the
 * dashboard reads plans from the service's cache.
 */
#include "daemon/dashboard.h"

#include <stdlib.h>
#include <string.h>

#include "web/metrics.h"
#include "web/web.h"

#define MAX_ALLOW_HOSTS 8

struct sp_dashboard {
  sp_metrics *metrics;
  sp_web *web;
  char *hosts_buf;
};

static void on_rpc(void *ctx, const char *method, const char *status, double seconds) {
  sp_metrics *m = ctx;
  sp_metrics_rpc(m, method, status);
  if (strcmp(method, "Plan") == 0 || strcmp(method, "PlanStream") == 0)
    sp_metrics_plan(m, seconds, 0);
}

static void on_cache(void *ctx, bool hit) { sp_metrics_cache(ctx, hit); }

static void on_search(void *ctx, double seconds) { sp_metrics_search(ctx, seconds); }
static bool rows_pending(void *svc, const char *key) { return sp_service_rows_pending(svc, key); }

static void gauges(void *ctx, sp_metrics_gauges *g) {
  sp_service_stats st;
  memset(&st, 0, sizeof st);
  sp_service_stats_get(ctx, &st);
  g->searches_in_flight = st.searches_in_flight;
  g->queue_length = st.queue_length;
  g->cache_plans = st.plans;
  g->cache_bytes = st.cache_bytes;
}

int sp_dashboard_start(const sp_daemon_config *cfg, sp_service *svc, const char *version,
                       sp_dashboard **out, const char **address, sp_err *err) {
  *out = NULL;
  sp_dashboard *d = calloc(1, sizeof *d);
  if (!d || !(d->metrics = sp_metrics_new())) {
    free(d);
    return sp_err_set(err, SP_ENOMEM, "dashboard: out of memory");
  }
  const char *hosts[MAX_ALLOW_HOSTS];
  int nhosts = 0;
  if (cfg->http_allow_hosts && !(d->hosts_buf = strdup(cfg->http_allow_hosts))) {
    sp_dashboard_stop(d);
    return sp_err_set(err, SP_ENOMEM, "dashboard: out of memory");
  }
  char *save = NULL;
  for (char *h = d->hosts_buf ? strtok_r(d->hosts_buf, ", ", &save) : NULL; h;
       h = strtok_r(NULL, ", ", &save)) {
    if (nhosts == MAX_ALLOW_HOSTS) {
      sp_dashboard_stop(d);
      return sp_err_set(err, SP_EINVAL, "--http-allow-host: at most %d names", MAX_ALLOW_HOSTS);
    }
    hosts[nhosts++] = h;
  }
  sp_web_config wc;
  memset(&wc, 0, sizeof wc);
  wc.listen = cfg->http_listen;
  wc.token = cfg->token;
  wc.allow_hosts = hosts;
  wc.nallow_hosts = nhosts;
  wc.version = version;
  wc.rows_pending = rows_pending;
  wc.rows_pending_ctx = svc;
  int rc = sp_web_new(&wc, sp_service_store(svc), d->metrics, &d->web, err);
  if (!rc) rc = sp_web_listen(d->web, err);
  if (rc) {
    sp_dashboard_stop(d);
    return rc;
  }
  sp_service_observer obs = {on_rpc, on_cache, d->metrics, on_search};
  sp_service_observe(svc, &obs);
  sp_metrics_set_gauge_source(d->metrics, gauges, svc);
  *address = sp_web_address(d->web);
  *out = d;
  return SP_OK;
}

void sp_dashboard_stop(sp_dashboard *d) {
  if (!d) return;
  sp_web_free(d->web);
  sp_metrics_free(d->metrics);
  free(d->hosts_buf);
  free(d);
}
