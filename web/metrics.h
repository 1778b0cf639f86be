/*
 * metrics.h - the daemon's counters, served by the dashboard at /metrics in Prometheus text
 * format (version 0.0.4).
 *
 * One registry per daemon. The RPC layer and the dashboard record events into it from any
 * thread (every function takes the registry's mutex, briefly); sp_metrics_render writes the
 * whole registry as text. Gauges that belong to someone else (searches in flight, queue
 * length, cache size) are read at scrape time through a callback, so they are never stale.
 *
 * Series:
 *   shardplan_rpc_requests_total{method,code}      gRPC calls answered
 *   shardplan_http_requests_total{method,code}     dashboard requests answered
 *   shardplan_cache_hits_total, shardplan_cache_misses_total
 *   shardplan_plan_latency_seconds (histogram)     Plan calls, receipt to answer
 *   shardplan_solver_seconds_total                 time spent in searches
 *   shardplan_searches_in_flight, shardplan_search_queue_length, shardplan_cache_plans,
 *   shardplan_cache_bytes (gauges, from the callback)
 *
 * Memory: the registry owns copies of the label values it has seen (bounded: at most
 * SP_METRICS_MAX_SERIES series per family; later ones are counted under method="other").
 */
#ifndef SP_WEB_METRICS_H
#define SP_WEB_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/strbuf.h"

#define SP_METRICS_MAX_SERIES 64

typedef struct sp_metrics sp_metrics;

/* Values the owner of the gauges reports at scrape time. */
typedef struct sp_metrics_gauges {
  int64_t searches_in_flight;
  int64_t queue_length;
  int64_t cache_plans;
  int64_t cache_bytes;
} sp_metrics_gauges;
typedef void (*sp_metrics_gauge_fn)(void *ctx, sp_metrics_gauges *out);

sp_metrics *sp_metrics_new(void);                 /* NULL when out of memory */
void sp_metrics_free(sp_metrics *m);              /* NULL is a no-op */
void sp_metrics_set_gauge_source(sp_metrics *m, sp_metrics_gauge_fn fn, void *ctx);

/* `method` e.g. "Plan"; `code` a gRPC status name such as "OK" or "INVALID_ARGUMENT". */
void sp_metrics_rpc(sp_metrics *m, const char *method, const char *code);
/* `method` "GET"/"POST"/..., `status` an HTTP status. */
void sp_metrics_http(sp_metrics *m, const char *method, int status);
void sp_metrics_cache(sp_metrics *m, bool hit);
/* A Plan call answered after `latency_s`, of which `solver_s` in the search (0: a hit or a
 * search counted with sp_metrics_search). */
void sp_metrics_plan(sp_metrics *m, double latency_s, double solver_s);
/* A search (propagation and cost search) that took `seconds`, counted once however many
 * calls it answered. */
void sp_metrics_search(sp_metrics *m, double seconds);

/* Appends the registry in Prometheus text format. */
void sp_metrics_render(sp_metrics *m, sp_strbuf *out);

#endif /* SP_WEB_METRICS_H */
