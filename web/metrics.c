/*
 * metrics.c - the Prometheus registry (see metrics.h).
 *
 * Labelled counters are small arrays searched linearly: the label sets are few (methods x
 * status codes) and a scrape or an update touches them under one mutex.
 */
#include "web/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds of the latency histogram's buckets, in seconds. */
static const double latency_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                        0.1,    0.25,  0.5,    1,     2.5,   5,     10,  30};
#define NBUCKETS ((int)(sizeof latency_bounds / sizeof latency_bounds[0]))

typedef struct series {
  char method[32];
  char code[32];
  uint64_t count;
} series;

typedef struct family {
  int n;
  series v[SP_METRICS_MAX_SERIES];
} family;

struct sp_metrics {
  pthread_mutex_t mu;
  family rpc, http;
  uint64_t hits, misses;
  uint64_t buckets[NBUCKETS]; /* cumulative counts are made at render time */
  uint64_t plans;
  double latency_sum, solver_sum;
  sp_metrics_gauge_fn gauge_fn;
  void *gauge_ctx;
};

sp_metrics *sp_metrics_new(void) {
  sp_metrics *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  if (pthread_mutex_init(&m->mu, NULL) != 0) {
    free(m);
    return NULL;
  }
  return m;
}

void sp_metrics_free(sp_metrics *m) {
  if (!m) return;
  pthread_mutex_destroy(&m->mu);
  free(m);
}

void sp_metrics_set_gauge_source(sp_metrics *m, sp_metrics_gauge_fn fn, void *ctx) {
  pthread_mutex_lock(&m->mu);
  m->gauge_fn = fn;
  m->gauge_ctx = ctx;
  pthread_mutex_unlock(&m->mu);
}

/* Label values come from our own code, but keep them to a safe alphabet anyway: a value
 * that is not [A-Za-z0-9_.-] is counted as "other", so the text never needs escaping. */
static void safe_label(char *dst, size_t cap, const char *src) {
  size_t n = 0;
  for (const char *p = src ? src : ""; *p; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok || n + 1 >= cap) {
      snprintf(dst, cap, "other");
      return;
    }
    dst[n++] = c;
  }
  dst[n] = '\0';
  if (n == 0) snprintf(dst, cap, "other");
}

static void bump(family *f, const char *method, const char *code) {
  char mth[32], cod[32];
  safe_label(mth, sizeof mth, method);
  safe_label(cod, sizeof cod, code);
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->v[i].method, mth) == 0 && strcmp(f->v[i].code, cod) == 0) {
      f->v[i].count++;
      return;
    }
  if (f->n == SP_METRICS_MAX_SERIES) { /* full: fold into the last series */
    f->v[f->n - 1].count++;
    return;
  }
  series *s = &f->v[f->n++];
  memcpy(s->method, mth, sizeof mth);
  memcpy(s->code, cod, sizeof cod);
  s->count = 1;
}

void sp_metrics_rpc(sp_metrics *m, const char *method, const char *code) {
  if (!m) return;
  pthread_mutex_lock(&m->mu);
  bump(&m->rpc, method, code);
  pthread_mutex_unlock(&m->mu);
}

void sp_metrics_http(sp_metrics *m, const char *method, int status) {
  if (!m) return;
  char code[16];
  snprintf(code, sizeof code, "%d", status);
  pthread_mutex_lock(&m->mu);
  bump(&m->http, method, code);
  pthread_mutex_unlock(&m->mu);
}

void sp_metrics_cache(sp_metrics *m, bool hit) {
  if (!m) return;
  pthread_mutex_lock(&m->mu);
  if (hit) m->hits++;
  else m->misses++;
  pthread_mutex_unlock(&m->mu);
}

void sp_metrics_search(sp_metrics *m, double seconds) {
  if (!m || !(seconds > 0)) return;
  pthread_mutex_lock(&m->mu);
  m->solver_sum += seconds;
  pthread_mutex_unlock(&m->mu);
}

void sp_metrics_plan(sp_metrics *m, double latency_s, double solver_s) {
  if (!m) return;
  pthread_mutex_lock(&m->mu);
  m->plans++;
  m->latency_sum += latency_s;
  m->solver_sum += solver_s > 0 ? solver_s : 0;
  for (int i = 0; i < NBUCKETS; i++)
    if (latency_s <= latency_bounds[i]) {
      m->buckets[i]++;
      break;
    }
  pthread_mutex_unlock(&m->mu);
}

static void render_family(sp_strbuf *out, const char *name, const char *help, const family *f) {
  sp_strbuf_printf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
  for (int i = 0; i < f->n; i++)
    sp_strbuf_printf(out, "%s{method=\"%s\",code=\"%s\"} %llu\n", name, f->v[i].method,
                     f->v[i].code, (unsigned long long)f->v[i].count);
}

static void render_scalar(sp_strbuf *out, const char *name, const char *type, const char *help,
                          double v) {
  sp_strbuf_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, v);
}

void sp_metrics_render(sp_metrics *m, sp_strbuf *out) {
  sp_metrics_gauges g = {0, 0, 0, 0};
  pthread_mutex_lock(&m->mu);
  sp_metrics_gauge_fn fn = m->gauge_fn;
  void *ctx = m->gauge_ctx;
  pthread_mutex_unlock(&m->mu);
  if (fn) fn(ctx, &g); /* outside the lock: the callback may take locks of its own */

  pthread_mutex_lock(&m->mu);
  render_family(out, "shardplan_rpc_requests_total", "gRPC calls answered, by method and status.",
                &m->rpc);
  render_family(out, "shardplan_http_requests_total",
                "Dashboard requests answered, by method and HTTP status.", &m->http);
  render_scalar(out, "shardplan_cache_hits_total", "counter", "Plan requests answered from the cache.",
                (double)m->hits);
  render_scalar(out, "shardplan_cache_misses_total", "counter",
                "Plan requests that had to be planned.", (double)m->misses);
  sp_strbuf_puts(out,
                 "# HELP shardplan_plan_latency_seconds Plan calls, from receipt to answer.\n"
                 "# TYPE shardplan_plan_latency_seconds histogram\n");
  uint64_t cum = 0;
  for (int i = 0; i < NBUCKETS; i++) {
    cum += m->buckets[i];
    sp_strbuf_printf(out, "shardplan_plan_latency_seconds_bucket{le=\"%g\"} %llu\n",
                     latency_bounds[i], (unsigned long long)cum);
  }
  sp_strbuf_printf(out, "shardplan_plan_latency_seconds_bucket{le=\"+Inf\"} %llu\n",
                   (unsigned long long)m->plans);
  sp_strbuf_printf(out, "shardplan_plan_latency_seconds_sum %.17g\n", m->latency_sum);
  sp_strbuf_printf(out, "shardplan_plan_latency_seconds_count %llu\n", (unsigned long long)m->plans);
  render_scalar(out, "shardplan_solver_seconds_total", "counter", "Seconds spent in searches.",
                m->solver_sum);
  pthread_mutex_unlock(&m->mu);

  render_scalar(out, "shardplan_searches_in_flight", "gauge", "Searches running now.",
                (double)g.searches_in_flight);
  render_scalar(out, "shardplan_search_queue_length", "gauge", "Searches waiting for a worker.",
                (double)g.queue_length);
  render_scalar(out, "shardplan_cache_plans", "gauge", "Plans in the cache.", (double)g.cache_plans);
  render_scalar(out, "shardplan_cache_bytes", "gauge", "Bytes of plans in the cache.",
                (double)g.cache_bytes);
}
