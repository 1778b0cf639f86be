/*
 * service_int.h - the service's shared state and helpers (internal to server/rpc).
 *
 * Locking: `mu` guards the in-flight search table (jobs and their waiters). Counters are
 * atomics. The store is thread-safe on its own.
 */
#ifndef SP_RPC_SERVICE_INT_H
#define SP_RPC_SERVICE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "rpc/hit_cache.h"
#include "rpc/plan_proto.h"
#include "rpc/rows_pending.h"
#include "rpc/rpc_server.h"
#include "rpc/search_pool.h"
#include "rpc/service.h"
#include "store/store.h"

typedef struct sp_job sp_job;

struct sp_service {
  sp_service_options o;
  char cache_path[4096];
  sp_store *store;
  sp_hit_cache *memory;       /* exact repeats, in front of the store */
  sp_rows_pending *pending;   /* plans answered whose detail rows are being written */
  sp_pool *pool;
  pthread_mutex_t mu;
  pthread_cond_t idle;        /* signalled when the last job finished */
  sp_job *jobs;               /* in flight, by key */
  int njobs;
  bool draining;
  int64_t start_ms;
  sp_service_observer obs;
  atomic_llong hits, misses, searches, coalesced, requests, errors;
  /* What an answer takes per op of its module, from the engine's snapshot time to the
   * callers, as lately measured (nanoseconds; plan_job.c sizes the answer margin by it). */
  atomic_llong answer_ns_per_op;
};

/* answer_ns_per_op until the daemon has measured it. */
#define SP_SVC_ANSWER_NS_PER_OP_START 250000

/* One log line per request: method, key (16 hex digits), outcome, status, milliseconds. */
void sp__svc_log(sp_service *s, sp_rpc_call *call, const char *method, const char *key,
                 const char *outcome, int status, const char *msg);
/* A debugging line (--log-level debug only), printf-style. */
void sp__svc_debug(sp_service *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replies with an error and logs it. */
void sp__svc_fail(sp_service *s, sp_rpc_call *call, const char *method, const char *key,
                  int status, const char *msg, int64_t retry_ms);
/* sp_status -> gRPC status code. */
int sp__svc_status_of(int rc);
const char *sp__svc_status_name(int status);

/* plan_service.c: the Plan and PlanStream handlers (their searches: plan_job.c). */
void sp__svc_plan(sp_rpc_call *call, void *svc);
void sp__svc_plan_stream(sp_rpc_call *call, void *svc);
/* The DETAIL_FULL extras of stored plan `key` (stored as bytes[0, n)), functions renamed by
 * `map` (may be NULL): rebuilt from the stored plan JSON, or, while its detail rows are being
 * written, from the plan in memory (rows_pending.h). When the rows are neither stored nor
 * coming (the daemon stopped between storing the plan and its rows, or writing them failed):
 * SP_ENOTFOUND with *missing set and a message saying so. */
int sp__svc_full_extras(sp_service *s, const char *key, const uint8_t *bytes, size_t n,
                        const sp_rpc_func_map *map, uint8_t **out, size_t *len, bool *missing,
                        sp_err *err);
/* Whether stored plan `key` (stored as bytes[0, n)) has its detail rows, stored or being
 * written. */
bool sp__svc_rows_there(sp_service *s, const char *key, const uint8_t *bytes, size_t n);

#endif /* SP_RPC_SERVICE_INT_H */
