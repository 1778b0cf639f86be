/*
 * service.c - the service's life (open, register, drain, close), the cache-management methods
 * (GetPlan, ListPlans, DeletePlan, Purge, GetStats) and the request log. Plan and PlanStream
 * are in plan_service.c. Every handler here runs on a gRPC thread and only reads or writes the
 * store: none waits for a search.
 */
#include "rpc/service.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/clock.h"
#include "plan/plan.h"
#include "rpc/plan_proto.h"
#include "rpc/plan_request.h"
#include "rpc/service_int.h"

/* ------------------------------------------------------------------ statuses and the log */

int sp__svc_status_of(int rc) {
  switch (rc) {
    case SP_OK: return SP_RPC_OK;
    case SP_EINVAL: return SP_RPC_INVALID_ARGUMENT;
    case SP_ENOMEM: return SP_RPC_RESOURCE_EXHAUSTED;
    case SP_ELIMIT: return SP_RPC_RESOURCE_EXHAUSTED;
    case SP_EUNSUPPORTED: return SP_RPC_INVALID_ARGUMENT;
    case SP_ETIMEOUT: return SP_RPC_DEADLINE_EXCEEDED;
    case SP_ENOTFOUND: return SP_RPC_NOT_FOUND;
    case SP_EIO: return SP_RPC_UNAVAILABLE;
    default: return SP_RPC_INTERNAL;
  }
}

const char *sp__svc_status_name(int st) {
  switch (st) {
    case SP_RPC_OK: return "OK";
    case SP_RPC_CANCELLED: return "CANCELLED";
    case SP_RPC_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case SP_RPC_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case SP_RPC_NOT_FOUND: return "NOT_FOUND";
    case SP_RPC_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case SP_RPC_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case SP_RPC_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case SP_RPC_INTERNAL: return "INTERNAL";
    case SP_RPC_UNAVAILABLE: return "UNAVAILABLE";
    case SP_RPC_UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

/* Called before the call is answered: once answered, a call may be freed at any moment. */
void sp__svc_log(sp_service *s, sp_rpc_call *call, const char *method, const char *key,
                 const char *outcome, int status, const char *msg) {
  if (s->obs.on_rpc && call)
    s->obs.on_rpc(s->obs.ctx, method, sp__svc_status_name(status),
                  (double)(sp_clock_now_ms() - sp_rpc_call_start_ms(call)) / 1000.0);
  int level = status == SP_RPC_OK ? 2 : status == SP_RPC_INTERNAL ? 0 : 1;
  if (level > s->o.log_level) return;
  double ms = call ? (double)(sp_clock_now_ms() - sp_rpc_call_start_ms(call)) : 0;
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char ts[32];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(s->o.log, "%s %s key=%.16s %s %s %.0fms%s%.300s\n", ts, method,
          key && *key ? key : "-", outcome ? outcome : "-", sp__svc_status_name(status), ms,
          msg && *msg ? " " : "", msg ? msg : "");
  fflush(s->o.log);
}

void sp__svc_debug(sp_service *s, const char *fmt, ...) {
  if (s->o.log_level < 3) return;
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char ts[32], line[512];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(s->o.log, "%s debug %s\n", ts, line);
  fflush(s->o.log);
}

void sp__svc_fail(sp_service *s, sp_rpc_call *call, const char *method, const char *key,
                  int status, const char *msg, int64_t retry_ms) {
  atomic_fetch_add(&s->errors, 1);
  sp__svc_log(s, call, method, key, NULL, status, msg);   /* the call may be freed once answered */
  sp_rpc_call_reply(call, status, NULL, 0, msg, retry_ms);
}

/* Replies with a packed message (or RESOURCE_EXHAUSTED when packing ran out of memory). */
#define REPLY_PACKED(s, call, method, key, outcome, type, msgp)              \
  do {                                                                       \
    size_t n_ = type##__get_packed_size(msgp);                               \
    uint8_t *b_ = malloc(n_ ? n_ : 1);                                       \
    if (!b_) {                                                               \
      sp__svc_fail(s, call, method, key, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0); \
      break;                                                                 \
    }                                                                        \
    type##__pack(msgp, b_);                                                  \
    sp__svc_log(s, call, method, key, outcome, SP_RPC_OK, NULL);             \
    sp_rpc_call_reply(call, SP_RPC_OK, b_, n_, NULL, 0);                     \
    free(b_);                                                                \
  } while (0)

/* ------------------------------------------------------------------ GetPlan */

/* The stored plan JSON of `key` into *p; false when there is no such row (*rc SP_OK) or it
 * could not be read (*rc the error). */
static bool stored_plan_json(sp_service *s, const char *key, sp_plan **p, int *rc, sp_err *err) {
  sp_store_row_query q = {.section = "plan", .limit = 1, .skip_total = true};
  sp_store_row_page pg = {0};
  *p = NULL;
  *rc = sp_store_rows(s->store, key, &q, &pg, err);
  bool found = *rc == SP_OK && pg.n > 0;
  if (found) *rc = sp_plan_from_json(pg.rows[0].json, strlen(pg.rows[0].json), p, err);
  sp_store_row_page_free(&pg);
  return found;
}

int sp__svc_full_extras(sp_service *s, const char *key, const uint8_t *bytes, size_t n,
                        const sp_rpc_func_map *map, uint8_t **out, size_t *len, bool *missing,
                        sp_err *err) {
  *out = NULL;
  *len = 0;
  *missing = false;
  sp_plan *p = NULL;
  int rc;
  if (!stored_plan_json(s, key, &p, &rc, err) && rc == SP_OK) {
    /* Not stored (yet): from the plan in memory while its rows are being written; else read
     * again, as the rows may have been committed (and the entry ended) in between. */
    rc = sp_rows_pending_extras(s->pending, key, bytes, n, map, out, len, err);
    if (rc != SP_ENOTFOUND) return rc;
    if (!stored_plan_json(s, key, &p, &rc, err) && rc == SP_OK) {
      *missing = true;
      return sp_err_set(err, SP_ENOTFOUND, "plan %.16s was stored without its detail rows (the "
                        "daemon stopped before writing them, or writing them failed); a Plan "
                        "call with DETAIL_FULL for its request plans it again and writes them",
                        key);
    }
  }
  if (rc == SP_OK) rc = sp_rpc_plan_full_extras(p, map, out, len, err);
  sp_plan_free(p);
  return rc;
}

bool sp__svc_rows_there(sp_service *s, const char *key, const uint8_t *bytes, size_t n) {
  if (sp_rows_pending_has(s->pending, key, bytes, n)) return true;
  sp_store_section_count *sec = NULL;
  size_t k = 0;
  bool ok = false;
  if (sp_store_sections(s->store, key, &sec, &k, NULL) == SP_OK)
    for (size_t i = 0; i < k && !ok; i++) ok = !strcmp(sec[i].name, "plan") && sec[i].rows > 0;
  free(sec);
  /* Committed in between: the entry ends only after the rows are. */
  return ok || sp_rows_pending_has(s->pending, key, bytes, n);
}

bool sp_service_rows_pending(sp_service *s, const char *key) {
  return sp_rows_pending_has(s->pending, key, NULL, 0);
}

static void get_plan(sp_rpc_call *call, void *data) {
  sp_service *s = data;
  const char *M = "GetPlan";
  size_t len;
  const uint8_t *buf = sp_rpc_call_payload(call, &len);
  atomic_fetch_add(&s->requests, 1);
  Shardplan__V1__GetPlanRequest *req = shardplan__v1__get_plan_request__unpack(NULL, len, buf);
  if (!req) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT,
                 "request: not a shardplan.v1.GetPlanRequest (malformed protobuf)", 0);
    return;
  }
  char key[SP_RPC_HEX];
  snprintf(key, sizeof key, "%s", req->key ? req->key : "");
  int detail = (int)req->detail;
  shardplan__v1__get_plan_request__free_unpacked(req, NULL);
  if (!sp_store_hash_valid(key)) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT,
                 "key: expected 64 hex digits (the key a Plan call returned)", 0);
    return;
  }
  for (char *p = key; *p; p++)
    if (*p >= 'A' && *p <= 'F') *p = (char)(*p - 'A' + 'a');
  sp_store_plan sp = {0};
  sp_err err;
  int rc = sp_store_get(s->store, key, SP_STORE_WITH_PLAN, &sp, &err);
  if (rc) {
    sp_store_plan_free(&sp);
    sp__svc_fail(s, call, M, key, sp__svc_status_of(rc),
                 rc == SP_ENOTFOUND ? "no plan with this key in the cache" : err.msg, 0);
    return;
  }
  uint8_t *extras = NULL, *out = NULL;
  size_t elen = 0, olen = 0;
  bool missing = false;
  if (detail == SHARDPLAN__V1__DETAIL__DETAIL_FULL &&
      (rc = sp__svc_full_extras(s, key, sp.plan, sp.plan_len, NULL, &extras, &elen, &missing,
                                &err))) {
    sp_store_plan_free(&sp);
    sp__svc_fail(s, call, M, key, missing ? SP_RPC_FAILED_PRECONDITION : sp__svc_status_of(rc),
                 rc == SP_ENOTFOUND && !missing ? "no plan with this key in the cache" : err.msg,
                 0);
    return;
  }
  double ms = (double)(sp_clock_now_ms() - sp_rpc_call_start_ms(call));
  rc = sp_rpc_repack_hit(sp.plan, sp.plan_len, ms, extras, elen, &out, &olen);
  sp_store_plan_free(&sp);
  free(extras);
  if (rc) {
    sp__svc_fail(s, call, M, key, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
    return;
  }
  sp__svc_log(s, call, M, key, "found", SP_RPC_OK, NULL);
  sp_rpc_call_reply(call, SP_RPC_OK, out, olen, NULL, 0);
  free(out);
}

/* ------------------------------------------------------------------ ListPlans */

static void list_plans(sp_rpc_call *call, void *data) {
  sp_service *s = data;
  const char *M = "ListPlans";
  size_t len;
  const uint8_t *buf = sp_rpc_call_payload(call, &len);
  atomic_fetch_add(&s->requests, 1);
  Shardplan__V1__ListPlansRequest *req =
      shardplan__v1__list_plans_request__unpack(NULL, len, buf);
  if (!req) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT,
                 "request: not a shardplan.v1.ListPlansRequest (malformed protobuf)", 0);
    return;
  }
  int64_t size = req->page_size, offset = 0;
  bool bad_size = size < 0 || size > 1000;
  bool bad_token = false;
  if (req->page_token && *req->page_token) {
    char *end;
    long long v = strtoll(req->page_token, &end, 10);
    bad_token = *end || v < 0;
    offset = v;
  }
  shardplan__v1__list_plans_request__free_unpacked(req, NULL);
  if (bad_size || bad_token) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT,
                 bad_size ? "page_size: expected 0 to 1000" : "page_token: not a token this "
                 "server returned", 0);
    return;
  }
  if (!size) size = 50;
  sp_store_list_query q = {.offset = offset, .limit = size, .order = SP_STORE_ORDER_KEY};
  sp_store_plan_list l = {0};
  sp_err err;
  int rc = sp_store_list(s->store, &q, &l, &err);
  if (rc) {
    sp_store_plan_list_free(&l);
    sp__svc_fail(s, call, M, NULL, sp__svc_status_of(rc), err.msg, 0);
    return;
  }
  Shardplan__V1__ListPlansResponse resp = SHARDPLAN__V1__LIST_PLANS_RESPONSE__INIT;
  Shardplan__V1__PlanInfo *infos = calloc(l.n ? l.n : 1, sizeof *infos);
  Shardplan__V1__PlanInfo **ptrs = calloc(l.n ? l.n : 1, sizeof *ptrs);
  char (*summaries)[256] = calloc(l.n ? l.n : 1, sizeof *summaries);
  char token[32] = "";
  if (!infos || !ptrs || !summaries) {
    rc = SP_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < l.n; i++) {
    const sp_store_plan *p = &l.plans[i];
    Shardplan__V1__PlanInfo init = SHARDPLAN__V1__PLAN_INFO__INIT;
    infos[i] = init;
    infos[i].key = (char *)p->key;
    infos[i].status = sp_rpc_status_from_word(p->status);
    infos[i].provisional = p->status && strcmp(p->status, "provisional") == 0;
    infos[i].created_unix = p->created_ms / 1000;
    infos[i].last_used_unix = p->last_used_ms / 1000;
    infos[i].hits = p->hits;
    infos[i].size_bytes = p->size_bytes;
    infos[i].planner_version = (char *)(p->planner_version ? p->planner_version : "");
    if (isnan(p->total_cost))
      snprintf(summaries[i], sizeof summaries[i], "%s, mesh %s, %s",
               p->module_name && *p->module_name ? p->module_name : "module",
               p->mesh && *p->mesh ? p->mesh : "-", p->status ? p->status : "");
    else
      snprintf(summaries[i], sizeof summaries[i], "%s, mesh %s, %.3f ms per step, %s",
               p->module_name && *p->module_name ? p->module_name : "module",
               p->mesh && *p->mesh ? p->mesh : "-", p->total_cost * 1e3,
               p->status ? p->status : "");
    infos[i].summary = summaries[i];
    ptrs[i] = &infos[i];
  }
  resp.n_plans = l.n;
  resp.plans = ptrs;
  if (offset + (int64_t)l.n < l.total) snprintf(token, sizeof token, "%lld",
                                                (long long)(offset + (int64_t)l.n));
  resp.next_page_token = token;
  REPLY_PACKED(s, call, M, NULL, NULL, shardplan__v1__list_plans_response, &resp);
done:
  if (rc) sp__svc_fail(s, call, M, NULL, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
  free(infos);
  free(ptrs);
  free(summaries);
  sp_store_plan_list_free(&l);
}

/* ------------------------------------------------------------------ DeletePlan, Purge */

static void delete_plan(sp_rpc_call *call, void *data) {
  sp_service *s = data;
  const char *M = "DeletePlan";
  size_t len;
  const uint8_t *buf = sp_rpc_call_payload(call, &len);
  atomic_fetch_add(&s->requests, 1);
  Shardplan__V1__DeletePlanRequest *req =
      shardplan__v1__delete_plan_request__unpack(NULL, len, buf);
  if (!req) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT,
                 "request: not a shardplan.v1.DeletePlanRequest (malformed protobuf)", 0);
    return;
  }
  char key[SP_RPC_HEX];
  snprintf(key, sizeof key, "%s", req->key ? req->key : "");
  shardplan__v1__delete_plan_request__free_unpacked(req, NULL);
  if (!sp_store_hash_valid(key)) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT, "key: expected 64 hex digits", 0);
    return;
  }
  sp_err err;
  sp_hit_cache_drop(s->memory, key);
  int rc = sp_store_delete(s->store, key, &err);
  if (rc) {
    sp__svc_fail(s, call, M, key, sp__svc_status_of(rc),
                 rc == SP_ENOTFOUND ? "no plan with this key in the cache" : err.msg, 0);
    return;
  }
  Shardplan__V1__DeletePlanResponse resp = SHARDPLAN__V1__DELETE_PLAN_RESPONSE__INIT;
  resp.deleted = true;
  REPLY_PACKED(s, call, M, key, "deleted", shardplan__v1__delete_plan_response, &resp);
}

static void purge(sp_rpc_call *call, void *data) {
  sp_service *s = data;
  const char *M = "Purge";
  size_t len;
  const uint8_t *buf = sp_rpc_call_payload(call, &len);
  atomic_fetch_add(&s->requests, 1);
  Shardplan__V1__PurgeRequest *req = shardplan__v1__purge_request__unpack(NULL, len, buf);
  if (!req) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT,
                 "request: not a shardplan.v1.PurgeRequest (malformed protobuf)", 0);
    return;
  }
  bool all = req->all, older = req->older_than_version;
  shardplan__v1__purge_request__free_unpacked(req, NULL);
  if (!all && !older) {
    sp__svc_fail(s, call, M, NULL, SP_RPC_INVALID_ARGUMENT,
                 "purge: set older_than_version or all", 0);
    return;
  }
  int64_t n = 0;
  sp_err err;
  sp_hit_cache_drop(s->memory, NULL);
  int rc = sp_store_purge_version(s->store, all ? "" : sp_rpc_planner_version(), &n, &err);
  if (rc) {
    sp__svc_fail(s, call, M, NULL, sp__svc_status_of(rc), err.msg, 0);
    return;
  }
  Shardplan__V1__PurgeResponse resp = SHARDPLAN__V1__PURGE_RESPONSE__INIT;
  resp.deleted = n;
  REPLY_PACKED(s, call, M, NULL, "purged", shardplan__v1__purge_response, &resp);
}

/* ------------------------------------------------------------------ GetStats */

void sp_service_stats_get(sp_service *s, sp_service_stats *o) {
  memset(o, 0, sizeof *o);
  sp_store_stats st = {0};
  if (sp_store_stats_get(s->store, &st, NULL) == SP_OK) {
    o->plans = st.plans;
    o->cache_bytes = st.used_bytes;
    o->cache_max_bytes = st.max_bytes;
  }
  int running = 0, queued = 0;
  sp_pool_gauges(s->pool, &running, &queued);
  pthread_mutex_lock(&s->mu);
  o->searches_in_flight = s->njobs;
  pthread_mutex_unlock(&s->mu);
  o->queue_length = queued;
  o->max_searches = sp_pool_threads(s->pool);
  o->hits = atomic_load(&s->hits);
  o->misses = atomic_load(&s->misses);
  o->searches_run = atomic_load(&s->searches);
  o->coalesced = atomic_load(&s->coalesced);
  o->requests = atomic_load(&s->requests);
  o->errors = atomic_load(&s->errors);
  o->uptime_seconds = (double)(sp_clock_now_ms() - s->start_ms) / 1000.0;
}

static void get_stats(sp_rpc_call *call, void *data) {
  sp_service *s = data;
  atomic_fetch_add(&s->requests, 1);
  sp_service_stats st;
  sp_service_stats_get(s, &st);
  Shardplan__V1__Stats m = SHARDPLAN__V1__STATS__INIT;
  m.plans = st.plans;
  m.cache_bytes = st.cache_bytes;
  m.cache_max_bytes = st.cache_max_bytes;
  m.hits = st.hits;
  m.misses = st.misses;
  m.searches_run = st.searches_run;
  m.searches_in_flight = st.searches_in_flight;
  m.queue_length = st.queue_length;
  m.max_searches = st.max_searches;
  m.coalesced = st.coalesced;
  m.requests = st.requests;
  m.errors = st.errors;
  m.uptime_seconds = st.uptime_seconds;
  m.planner_version = (char *)sp_rpc_planner_version();
  REPLY_PACKED(s, call, "GetStats", NULL, NULL, shardplan__v1__stats, &m);
}

/* ------------------------------------------------------------------ life */

void sp_service_options_init(sp_service_options *o) {
  memset(o, 0, sizeof *o);
  o->max_queue = 64;
  o->log_level = 2;
}

int sp_service_open(const sp_service_options *o, sp_service **out, sp_err *err) {
  *out = NULL;
  sp_service *s = calloc(1, sizeof *s);
  if (!s) return sp_err_set(err, SP_ENOMEM, "out of memory");
  s->o = *o;
  if (!s->o.log) s->o.log = stderr;
  if (s->o.max_searches <= 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    s->o.max_searches = c > 0 ? (int)c : 1;
  }
  if (s->o.max_queue < 0) s->o.max_queue = 0;
  pthread_mutex_init(&s->mu, NULL);
  atomic_store(&s->answer_ns_per_op, SP_SVC_ANSWER_NS_PER_OP_START);
  pthread_cond_init(&s->idle, NULL);
  s->start_ms = sp_clock_now_ms();
  if (o->cache_path)
    snprintf(s->cache_path, sizeof s->cache_path, "%s", o->cache_path);
  else
    snprintf(s->cache_path, sizeof s->cache_path, "%s/plans.db", o->data_dir ? o->data_dir : ".");
  sp_store_options so = {0};
  so.path = s->cache_path;
  so.max_bytes = o->cache_max_bytes;
  int rc = sp_store_open(&so, &s->store, err);
  if (rc) goto fail;
  s->memory = sp_hit_cache_new(64u << 20);
  s->pending = sp_rows_pending_new();
  if (!s->memory || !s->pending) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto fail;
  }
  if ((rc = sp_pool_new(s->o.max_searches, s->o.max_queue, sp_plan_thread_end, &s->pool, err)))
    goto fail;
  *out = s;
  return SP_OK;
fail:
  sp_service_close(s);
  return rc;
}

int sp_service_register(sp_service *s, sp_rpc_server *srv, sp_err *err) {
  static const struct {
    const char *path;
    sp_rpc_handler fn;
  } methods[] = {
      {"/shardplan.v1.Planner/Plan", sp__svc_plan},
      {"/shardplan.v1.Planner/PlanStream", sp__svc_plan_stream},
      {"/shardplan.v1.Planner/GetPlan", get_plan},
      {"/shardplan.v1.Planner/ListPlans", list_plans},
      {"/shardplan.v1.Planner/DeletePlan", delete_plan},
      {"/shardplan.v1.Planner/Purge", purge},
      {"/shardplan.v1.Planner/GetStats", get_stats},
  };
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
    int rc = sp_rpc_server_add_method(srv, methods[i].path, false, methods[i].fn, s, err);
    if (rc) return rc;
  }
  return SP_OK;
}

const char *sp_service_cache_path(const sp_service *s) { return s->cache_path; }
void sp_service_observe(sp_service *s, const sp_service_observer *obs) { s->obs = *obs; }
sp_store *sp_service_store(sp_service *s) { return s->store; }

void sp_service_close(sp_service *s) {
  if (!s) return;
  sp_service_drain(s);
  sp_pool_close(s->pool);
  sp_store_close(s->store);
  sp_hit_cache_free(s->memory);
  sp_rows_pending_free(s->pending);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->idle);
  free(s);
}
