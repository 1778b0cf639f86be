/*
 * plan_service.c - Plan and PlanStream: the cache first, then the search for the key.
 *
 * A request is answered, in order of preference:
 *   0. from memory, by the raw-request hash (an exact repeat of a final summary answer);
 *   1. by the raw-request hash in the plan cache (an exact repeat: no parsing; the stored
 *      bytes are copied);
 *   2. by its key after reading the graph (a renamed or re-encoded graph: the stored answer
 *      with this requester's names as labels);
 *   3. by the search running for its key (coalescing: the caller becomes one more waiter);
 *   4. by a new search on the pool (UNAVAILABLE with a retry hint when the queue is full).
 * A stored plan that was cut short (provisional) answers only requests that allow no more
 * time than it had; a request that allows more searches again, and the better plan is kept.
 * A DETAIL_FULL hit is rebuilt from the plan's JSON row, or from the plan in memory while its
 * rows are being written (rows_pending.h); only a plan whose rows are not coming at all (the
 * daemon stopped between storing it and its rows) is searched again, which writes them.
 * How a search runs and answers its waiters: plan_job.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/clock.h"
#include "ir/strbuf.h"
#include "plan/plan.h"
#include "rpc/plan_job_int.h"
#include "rpc/plan_proto.h"
#include "rpc/plan_request.h"

/* ------------------------------------------------------------------ helpers */

const char *sp__plan_method(bool stream) { return stream ? "PlanStream" : "Plan"; }

/* PlanEvent{field: bytes} (field 1 progress, 2 plan); malloc'd. */
static uint8_t *wrap_event(int field, const uint8_t *bytes, size_t n, size_t *out_len) {
  uint8_t *buf = malloc(n + 11);
  if (!buf) return NULL;
  size_t k = 0;
  buf[k++] = (uint8_t)((field << 3) | 2);
  uint64_t v = n;
  while (v >= 0x80) {
    buf[k++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  buf[k++] = (uint8_t)v;
  memcpy(buf + k, bytes, n);
  *out_len = k + n;
  return buf;
}

/* Sends a finished answer (packed PlanResponse) to a unary or streaming call. */
void sp__plan_deliver(sp_rpc_call *call, bool stream, const uint8_t *bytes, size_t n) {
  if (!stream) {
    sp_rpc_call_reply(call, SP_RPC_OK, bytes, n, NULL, 0);
    return;
  }
  size_t en;
  uint8_t *ev = wrap_event(2, bytes, n, &en);
  if (!ev) {
    sp_rpc_call_finish(call, SP_RPC_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  sp_rpc_call_send(call, ev, en);
  free(ev);
  sp_rpc_call_finish(call, SP_RPC_OK, NULL);
}

void sp__plan_fail(sp_service *s, sp_rpc_call *call, bool stream, const char *key, int status,
                   const char *msg, int64_t retry_ms) {
  if (stream && retry_ms == 0) {
    atomic_fetch_add(&s->errors, 1);
    sp__svc_log(s, call, sp__plan_method(stream), key, NULL, status, msg);
    sp_rpc_call_finish(call, status, msg);
    return;
  }
  sp__svc_fail(s, call, sp__plan_method(stream), key, status, msg, retry_ms);
}

void sp__plan_progress(sp_rpc_call *call, const char *stage, const sp_progress *p,
                       double elapsed) {
  Shardplan__V1__Progress pr = SHARDPLAN__V1__PROGRESS__INIT;
  pr.stage = (char *)stage;
  pr.elapsed_seconds = elapsed;
  if (p) {
    pr.round = p->round;
    if (p->has_plan) pr.incumbent = (double)p->cost;
    if (p->bound != INT64_MIN) pr.bound = (double)p->bound;
    pr.gap = p->gap;
    pr.message = (char *)(p->phase ? p->phase : "");
  }
  uint8_t buf[512];
  size_t n = shardplan__v1__progress__get_packed_size(&pr);
  if (n > sizeof buf) return;
  shardplan__v1__progress__pack(&pr, buf);
  size_t en;
  uint8_t *ev = wrap_event(1, buf, n, &en);
  if (!ev) return;
  sp_rpc_call_send(call, ev, en);
  free(ev);
}

/* Seconds of search a request allows: its time limit (or the default; none: unbounded), within
 * its deadline. */
static double allowed_seconds(const sp_service *s, const sp_rpc_request *r, int64_t ms_left) {
  double asked = r->msg->options ? r->msg->options->time_limit_seconds : 0;
  double t = asked > 0 ? asked : s->o.default_time_limit > 0 ? s->o.default_time_limit
                                                              : HUGE_VAL;
  if (ms_left != INT64_MAX) {
    double left = (double)ms_left / 1000.0 * 0.9 - 0.02;
    if (left < t) t = left;
  }
  return t;
}

/* Whether a stored plan answers this request: yes unless it was cut short and the request
 * allows clearly more time than the search that made it had. */
static bool usable(const sp_service *s, const sp_store_plan *sp, const sp_rpc_request *r,
                   int64_t ms_left) {
  if (!sp->status || strcmp(sp->status, "provisional") != 0) return true;
  Shardplan__V1__PlanResponse *resp =
      shardplan__v1__plan_response__unpack(NULL, sp->plan_len, sp->plan);
  if (!resp) return false;
  double had = resp->time_limit_seconds > resp->search_seconds ? resp->time_limit_seconds
                                                                : resp->search_seconds;
  shardplan__v1__plan_response__free_unpacked(resp, NULL);
  return allowed_seconds(s, r, ms_left) <= had * 1.2 + 0.05;
}

/* What answer_stored did. */
typedef enum stored_answer {
  STORED_SAME,       /* answered, with the stored bytes (up to the appended fields) */
  STORED_RENAMED,    /* answered, in the caller's labels */
  STORED_FAILED,     /* answered with an error */
  STORED_NO_ROWS     /* not answered: DETAIL_FULL, and the plan's detail rows are not coming
                        (sp__svc_full_extras), so the search runs again and writes them */
} stored_answer;

/* Answers from a stored plan; `labels` NULL when the stored labels are the caller's. A
 * DETAIL_FULL answer is rebuilt from the plan's JSON row, or, in the second or so after the
 * plan was answered before its rows were stored, from the plan in memory (rows_pending.h). */
static stored_answer answer_stored(sp_service *s, sp_rpc_call *call, bool stream, int detail,
                                   const sp_store_plan *sp, const sp_rpc_labels *labels,
                                   const char *outcome) {
  uint8_t *extras = NULL, *out = NULL;
  size_t elen = 0, olen = 0;
  sp_err err;
  int rc;
  Shardplan__V1__PlanResponse *resp =
      labels ? shardplan__v1__plan_response__unpack(NULL, sp->plan_len, sp->plan) : NULL;
  sp_rpc_func_map map;
  bool renamed = sp_rpc_func_map_of(resp, labels, &map), missing = false;
  if (detail == SHARDPLAN__V1__DETAIL__DETAIL_FULL &&
      (rc = sp__svc_full_extras(s, sp->key, sp->plan, sp->plan_len, renamed ? &map : NULL,
                                &extras, &elen, &missing, &err))) {
    if (resp) shardplan__v1__plan_response__free_unpacked(resp, NULL);
    if (missing) return STORED_NO_ROWS;
    sp__plan_fail(s, call, stream, sp->key, sp__svc_status_of(rc), err.msg, 0);
    return STORED_FAILED;
  }
  double ms = (double)(sp_clock_now_ms() - sp_rpc_call_start_ms(call));
  bool same = true;
  if (!labels) {
    rc = sp_rpc_repack_hit(sp->plan, sp->plan_len, ms, extras, elen, &out, &olen);
  } else {
    rc = resp ? sp_rpc_pack_response(resp, labels, true, false, ms, extras, elen, &out, &olen)
              : SP_ENOMEM;
    same = rc == SP_OK && olen >= sp->plan_len && memcmp(out, sp->plan, sp->plan_len) == 0;
  }
  if (resp) shardplan__v1__plan_response__free_unpacked(resp, NULL);
  free(extras);
  if (rc) {
    sp__plan_fail(s, call, stream, sp->key, SP_RPC_RESOURCE_EXHAUSTED,
                  "out of memory re-encoding the stored plan", 0);
    return STORED_FAILED;
  }
  atomic_fetch_add(&s->hits, 1);
  if (s->obs.on_cache) s->obs.on_cache(s->obs.ctx, true);
  sp__svc_log(s, call, sp__plan_method(stream), sp->key, outcome, SP_RPC_OK, NULL);
  sp__plan_deliver(call, stream, out, olen);
  free(out);
  return same ? STORED_SAME : STORED_RENAMED;
}

void sp__plan_remember(sp_service *s, const char *raw, int detail, const sp_store_plan *sp) {
  if (detail != SHARDPLAN__V1__DETAIL__DETAIL_SUMMARY || !sp->plan ||
      (sp->status && strcmp(sp->status, "provisional") == 0))
    return;
  sp_hit_cache_put(s->memory, raw, sp->key, sp->plan, sp->plan_len, sp_clock_now_ms());
}

/* ------------------------------------------------------------------ the handlers */

/* Answers an exact repeat from the memory cache; false when it is not there. */
static bool memory_hit(sp_service *s, sp_rpc_call *call, bool stream, const char *raw) {
  uint8_t *stored, *out;
  size_t n, olen;
  char key[SP_RPC_HEX];
  bool touch;
  int64_t now = sp_clock_now_ms();
  if (!sp_hit_cache_get(s->memory, raw, &stored, &n, key, now, 1000, &touch)) return false;
  int rc = sp_rpc_repack_hit(stored, n, (double)(now - sp_rpc_call_start_ms(call)), NULL, 0,
                             &out, &olen);
  free(stored);
  if (rc) return false;
  atomic_fetch_add(&s->hits, 1);
  if (s->obs.on_cache) s->obs.on_cache(s->obs.ctx, true);
  sp__svc_log(s, call, sp__plan_method(stream), key, "hit (memory)", SP_RPC_OK, NULL);
  sp__plan_deliver(call, stream, out, olen);
  free(out);
  /* Once a second per hot plan, the plan cache counts a hit, so its LRU order stays right. */
  if (touch) {
    sp_store_plan sp = {0};
    sp_store_get(s->store, key, SP_STORE_COUNT_HIT, &sp, NULL);
    sp_store_plan_free(&sp);
  }
  return true;
}

/* 1. The request's exact bytes in the plan cache (a usable plan): answered, true. */
static bool raw_hit(sp_service *s, sp_rpc_call *call, bool stream, const char *raw,
                    const sp_rpc_request *req, int64_t ms_left) {
  sp_store_plan sp = {0};
  bool hit = sp_store_get_by_raw(s->store, req->raw, SP_STORE_WITH_PLAN | SP_STORE_COUNT_HIT,
                                 &sp, NULL) == SP_OK && usable(s, &sp, req, ms_left);
  if (hit) {
    stored_answer a = answer_stored(s, call, stream, (int)req->msg->detail, &sp, NULL,
                                    "hit (raw)");
    hit = a != STORED_NO_ROWS;
    if (a == STORED_SAME) sp__plan_remember(s, raw, (int)req->msg->detail, &sp);
  }
  sp_store_plan_free(&sp);
  return hit;
}

/* 2. The request's key (the same graph, maybe renamed) in the plan cache: answered in the
 * caller's labels, true; the request's bytes then lead to the plan directly next time. */
static bool key_hit(sp_service *s, sp_rpc_call *call, bool stream, const sp_rpc_request *req,
                    const sp_rpc_labels *labels, int64_t ms_left) {
  sp_store_plan sp = {0};
  bool hit = sp_store_get(s->store, req->key, SP_STORE_WITH_PLAN | SP_STORE_COUNT_HIT |
                          SP_STORE_COUNT_MISS, &sp, NULL) == SP_OK && usable(s, &sp, req, ms_left);
  stored_answer a = hit ? answer_stored(s, call, stream, req->detail, &sp, labels, "hit")
                        : STORED_NO_ROWS;
  hit = a != STORED_NO_ROWS;
  if (a == STORED_SAME) {
    sp_store_add_raw_hash(s->store, req->raw, req->key, NULL);   /* same bytes next time */
    sp__plan_remember(s, req->raw, req->detail, &sp);
  }
  sp_store_plan_free(&sp);
  return hit;
}

/* The search could not start: SP_ELIMIT (the queue is full, `running` and `queued` searches)
 * is UNAVAILABLE with when to retry; anything else is out of memory. */
static void refuse(sp_service *s, sp_rpc_call *call, bool stream, int rc, int running,
                   int queued) {
  if (rc == SP_ELIMIT) {
    char msg[200];
    int64_t retry = 1000 + 500 * (int64_t)queued;
    snprintf(msg, sizeof msg, "search queue full (%d running, %d waiting); retry after %lld ms",
             running, queued, (long long)retry);
    /* The waiter's call gets its answer here; its cancel hook finds nothing. */
    sp__plan_fail(s, call, stream, NULL, SP_RPC_UNAVAILABLE, msg, retry);
  } else {
    sp__plan_fail(s, call, stream, NULL, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
  }
}

static void handle(sp_rpc_call *call, sp_service *s, bool stream) {
  const char *M = sp__plan_method(stream);
  atomic_fetch_add(&s->requests, 1);
  size_t len;
  const uint8_t *buf = sp_rpc_call_payload(call, &len);
  if (!buf) buf = (const uint8_t *)"";
  /* 0. An exact repeat answered from memory: no decoding, no SQLite. */
  char raw[SP_RPC_HEX];
  sp_rpc_request_raw_hash(buf, len, raw);
  if (memory_hit(s, call, stream, raw)) return;
  sp_rpc_request req;
  sp_err err;
  sp_err_clear(&err);
  if (sp_rpc_request_decode(buf, len, raw, &req, &err)) {
    sp__plan_fail(s, call, stream, NULL, SP_RPC_INVALID_ARGUMENT, err.msg, 0);
    sp_rpc_request_free(&req);
    return;
  }
  req.max_memory_bytes = s->o.max_request_memory_bytes;
  int64_t ms_left = sp_rpc_call_ms_left(call);
  /* 1. An exact repeat. */
  if (raw_hit(s, call, stream, raw, &req, ms_left)) {
    sp_rpc_request_free(&req);
    return;
  }
  /* 2. Read the graph; the key. */
  int rc = sp_rpc_request_prepare(&req, &err);
  if (rc) {
    sp__plan_fail(s, call, stream, NULL, sp__svc_status_of(rc), err.msg, 0);
    sp_rpc_request_free(&req);
    return;
  }
  sp_rpc_labels labels;
  if (sp_rpc_labels_read(req.module, &labels, &err)) {
    sp__plan_fail(s, call, stream, req.key, SP_RPC_RESOURCE_EXHAUSTED, err.msg, 0);
    sp_rpc_request_free(&req);
    return;
  }
  if (key_hit(s, call, stream, &req, &labels, ms_left)) {
    sp_rpc_labels_free(&labels);
    sp_rpc_request_free(&req);
    return;
  }

  /* 3./4. Join the search for this key, or start one. */
  double asked = req.time_limit > 0 ? req.time_limit : s->o.default_time_limit;
  sp__waiter *w = sp__waiter_new(s, call, stream, req.detail, &labels, asked,
                                 sp_module_num_ops(req.module));
  if (!w) {
    sp__plan_fail(s, call, stream, req.key, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
    sp_rpc_request_free(&req);
    return;
  }
  pthread_mutex_lock(&s->mu);
  if (s->draining) {
    pthread_mutex_unlock(&s->mu);
    sp__waiter_free(w);
    sp__plan_fail(s, call, stream, req.key, SP_RPC_UNAVAILABLE, "the server is shutting down", 0);
    sp_rpc_request_free(&req);
    return;
  }
  if (!sp_rpc_call_on_cancel(call, sp__job_on_cancel, s)) {
    pthread_mutex_unlock(&s->mu);
    sp__waiter_free(w);
    sp__svc_log(s, call, M, req.key, "cancelled", SP_RPC_CANCELLED, NULL);
    sp_rpc_call_reply(call, SP_RPC_CANCELLED, NULL, 0, "cancelled", 0);
    sp_rpc_request_free(&req);
    return;
  }
  sp_job *unstarted = NULL;
  if (sp__job_join(s, req.key, w) ||
      (rc = sp__job_start(s, &req, w, buf, len, asked, &unstarted)) == SP_OK) {
    pthread_mutex_unlock(&s->mu);
    sp_rpc_request_free(&req);
    return;
  }
  /* Not started: the queue is full (or memory ran out). */
  int running = 0, queued = 0;
  sp_pool_gauges(s->pool, &running, &queued);
  pthread_mutex_unlock(&s->mu);
  if (unstarted) sp__job_free(unstarted);
  sp_rpc_request_free(&req);
  refuse(s, call, stream, rc, running, queued);
  sp__waiter_free(w);
}

void sp__svc_plan(sp_rpc_call *call, void *svc) { handle(call, svc, false); }
void sp__svc_plan_stream(sp_rpc_call *call, void *svc) { handle(call, svc, true); }
