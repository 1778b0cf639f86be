/*
 * service.h - the shardplan.v1.Planner service: requests -> engine calls -> responses, with
 * the plan cache (store/store.h) and the search pool. The engine knows nothing of it.
 *
 * Methods (registered on an sp_rpc_server): Plan, PlanStream, GetPlan, ListPlans, DeletePlan,
 * Purge, GetStats. Cache hits, GetPlan, ListPlans and GetStats are answered on the gRPC
 * threads and never wait for a search; a Plan that misses the cache joins the search already
 * running for its key (coalescing) or starts one on the pool; a full queue answers
 * UNAVAILABLE with a retry hint. See plan_service.c for the life of a search.
 *
 * Thread safety: all entry points may be called from any thread once open. Shutdown order:
 * sp_service_drain (searches stop and answer), then the gRPC server's shutdown, then
 * sp_service_close.
 */
#ifndef SP_RPC_SERVICE_H
#define SP_RPC_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/err.h"
#include "rpc/rpc_server.h"

typedef struct sp_service sp_service;
typedef struct sp_store sp_store;

typedef struct sp_service_options {
  const char *data_dir;        /* the cache is data_dir/plans.db */
  const char *cache_path;      /* overrides data_dir (tests) */
  int max_searches;            /* pool threads; 0: cores */
  int max_queue;               /* searches waiting; default 64 */
  int64_t cache_max_bytes;     /* 0: none */
  double default_time_limit;   /* seconds, when a request gives none; 0: none, the search is
                                  bounded by work (the same answer under any load) and cut
                                  only by the callers' deadlines */
  int64_t max_request_memory_bytes; /* refuse a Plan whose estimate is larger (RESOURCE_EXHAUSTED,
                                       see plan_request.h); 0: no bound */
  int log_level;               /* 0 error, 1 warn, 2 info (one line per request), 3 debug */
  FILE *log;                   /* NULL: stderr */
} sp_service_options;

typedef struct sp_service_stats {
  int64_t plans, cache_bytes, cache_max_bytes;
  int64_t hits, misses, searches_run, searches_in_flight, queue_length, max_searches;
  int64_t coalesced, requests, errors;
  double uptime_seconds;
} sp_service_stats;

/* Per-request events for an observer (the dashboard's metrics): every answered call with its
 * status name ("OK", "INVALID_ARGUMENT", ...) and seconds; cache lookups of Plan calls; the
 * wall time of each search the engine ran (whatever the number of its waiters). Called
 * on the thread that answered; must not block. */
typedef struct sp_service_observer {
  void (*on_rpc)(void *ctx, const char *method, const char *status, double seconds);
  void (*on_cache)(void *ctx, bool hit);
  void *ctx;
  void (*on_search)(void *ctx, double seconds);  /* a search ended after `seconds` (may be
                                                    NULL) */
} sp_service_observer;

void sp_service_options_init(sp_service_options *o);
int sp_service_open(const sp_service_options *o, sp_service **out, sp_err *err);
int sp_service_register(sp_service *s, sp_rpc_server *srv, sp_err *err);
const char *sp_service_cache_path(const sp_service *s);
/* For the dashboard: the plan cache and the counters. */
sp_store *sp_service_store(sp_service *s);
void sp_service_stats_get(sp_service *s, sp_service_stats *out);
/* Whether plan `key` was answered and its detail rows (the dashboard's rows) are still being
 * written (for a second or so after a plan handed out near its callers' deadlines). */
bool sp_service_rows_pending(sp_service *s, const char *key);
/* Sets the observer (before the server starts). */
void sp_service_observe(sp_service *s, const sp_service_observer *obs);
/* Refuses new searches, asks running ones to stop (each stores and answers its best plan so
 * far, or an error), and waits until every search has answered. */
void sp_service_drain(sp_service *s);
void sp_service_close(sp_service *s);

#endif /* SP_RPC_SERVICE_H */
