/*
 * plan_service.c - Plan and PlanStream: the cache first, then one search per key.
 *
 * A request is answered, in order of preference:
 *   1. by the raw-request hash (an exact repeat: no parsing; the stored bytes are copied);
 *   2. by its key after reading the graph (a renamed or re-encoded graph: the stored answer
 *      with this requester's names as labels);
 *   3. by the search running for its key (coalescing: the caller becomes one more waiter);
 *   4. by a new search on the pool (UNAVAILABLE with a retry hint when the queue is full).
 * A stored plan that was cut short (provisional) answers only requests that allow no more
 * time than it had; a request that allows more searches again, and the better plan is kept.
 *
 * Life of a search (an sp_job): created with its first waiter and put in the in-flight table
 * (svc->mu), queued on the pool; joiners add waiters and push the deadline to the latest
 * among them. The pool thread runs the engine with the time limit clamped to that deadline,
 * a cancel flag and a progress callback (streamed to PlanStream waiters). Then it stores the
 * plan (before anyone is answered: nothing acknowledged is lost), takes the job out of the
 * table with its waiters, and answers each by its own detail and names; then it adds the
 * provenance rows the dashboard reads (store/plan_rows.h), off the answer path. A waiter whose call is
 * cancelled (or whose deadline passes) is removed by the cancel hook; when the last one goes,
 * the search is cancelled.
 *
 * Memory: a job owns its module, cluster, request bytes and waiters; the pool thread frees it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/clock.h"
#include "ir/strbuf.h"
#include "plan/plan.h"
#include "rpc/plan_proto.h"
#include "rpc/plan_request.h"
#include "rpc/service_int.h"
#include "store/plan_rows.h"

typedef struct waiter {
  sp_rpc_call *call;
  bool stream, coalesced;
  int detail;
  int64_t end_ms;              /* when it must have its answer (INT64_MAX: no limit) */
  sp_rpc_labels labels;
  struct waiter *next;
} waiter;

struct sp_job {
  sp_service *svc;
  char key[SP_RPC_HEX], raw[SP_RPC_HEX];
  sp_rpc_request req;          /* module, cluster, options, message (owned) */
  uint8_t *request;            /* bytes as received */
  size_t request_len;
  sp_rpc_labels names;         /* the first requester's: addresses and function names */
  double time_limit;           /* seconds asked for (or the default); 0: bounded by work */
  atomic_int cancel;
  /* The engine's moving deadline (run_ctl.h, sp_clock_now() us; 0: none): the earliest end
   * among the waiters not answered yet, kept up to date under svc->mu as they come and go. */
  atomic_llong deadline_us;
  int64_t last_progress_ms;
  bool sent_incumbent;         /* this segment's first incumbent went to the streams */
  waiter *waiters;
  sp_job *next;
};

/* ------------------------------------------------------------------ helpers */

static const char *method_name(bool stream) { return stream ? "PlanStream" : "Plan"; }

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
static void deliver(sp_rpc_call *call, bool stream, const uint8_t *bytes, size_t n) {
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

static void fail_call(sp_service *s, sp_rpc_call *call, bool stream, const char *key, int status,
                      const char *msg, int64_t retry_ms) {
  if (stream && retry_ms == 0) {
    atomic_fetch_add(&s->errors, 1);
    sp__svc_log(s, call, method_name(stream), key, NULL, status, msg);
    sp_rpc_call_finish(call, status, msg);
    return;
  }
  sp__svc_fail(s, call, method_name(stream), key, status, msg, retry_ms);
}

static void send_progress(sp_rpc_call *call, const char *stage, const sp_progress *p,
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

/* Answers from a stored plan; `labels` NULL when the stored labels are the caller's. Returns
 * whether the answer's bytes equal the stored ones up to the appended fields (same labels). */
static bool answer_stored(sp_service *s, sp_rpc_call *call, bool stream, int detail,
                          const sp_store_plan *sp, const sp_rpc_labels *labels,
                          const char *outcome) {
  uint8_t *extras = NULL, *out = NULL;
  size_t elen = 0, olen = 0;
  sp_err err;
  int rc;
  Shardplan__V1__PlanResponse *resp =
      labels ? shardplan__v1__plan_response__unpack(NULL, sp->plan_len, sp->plan) : NULL;
  sp_rpc_func_map map;
  bool renamed = sp_rpc_func_map_of(resp, labels, &map);
  if (detail == SHARDPLAN__V1__DETAIL__DETAIL_FULL &&
      (rc = sp__svc_full_extras(s, sp->key, renamed ? &map : NULL, &extras, &elen, &err))) {
    if (resp) shardplan__v1__plan_response__free_unpacked(resp, NULL);
    fail_call(s, call, stream, sp->key, sp__svc_status_of(rc), err.msg, 0);
    return false;
  }
  double ms = (double)(sp_clock_now_ms() - sp_rpc_call_start_ms(call));
  bool same = true;
  if (!labels) {
    rc = sp_rpc_repack_hit(sp->plan, sp->plan_len, ms, extras, elen, &out, &olen);
  } else {
    rc = resp ? sp_rpc_pack_response(resp, labels, true, false, ms, extras, elen, &out, &olen)
              : SP_EINTERNAL;
    same = rc == SP_OK && olen >= sp->plan_len && memcmp(out, sp->plan, sp->plan_len) == 0;
  }
  if (resp) shardplan__v1__plan_response__free_unpacked(resp, NULL);
  free(extras);
  if (rc) {
    fail_call(s, call, stream, sp->key, SP_RPC_INTERNAL, "cannot re-encode the stored plan", 0);
    return false;
  }
  atomic_fetch_add(&s->hits, 1);
  if (s->obs.on_cache) s->obs.on_cache(s->obs.ctx, true);
  sp__svc_log(s, call, method_name(stream), sp->key, outcome, SP_RPC_OK, NULL);
  deliver(call, stream, out, olen);
  free(out);
  return same;
}

/* Keeps a final summary answer for exact repeats of `raw`. */
static void remember(sp_service *s, const char *raw, int detail, const sp_store_plan *sp) {
  if (detail != SHARDPLAN__V1__DETAIL__DETAIL_SUMMARY || !sp->plan ||
      (sp->status && strcmp(sp->status, "provisional") == 0))
    return;
  sp_hit_cache_put(s->memory, raw, sp->key, sp->plan, sp->plan_len, sp_clock_now_ms());
}

/* ------------------------------------------------------------------ waiters */

static void free_waiter(waiter *w) {
  sp_rpc_labels_free(&w->labels);
  free(w);
}

static void free_job(sp_job *j) {
  while (j->waiters) {
    waiter *w = j->waiters;
    j->waiters = w->next;
    free_waiter(w);
  }
  sp_rpc_request_free(&j->req);
  sp_rpc_labels_free(&j->names);
  free(j->request);
  free(j);
}

/* When a waiter must be answered: a little before its call's deadline (the answer is built,
 * stored and sent after the search stops), and within its time limit; INT64_MAX: neither. */
static int64_t waiter_end(int64_t now, int64_t deadline_ms, double time_limit) {
  int64_t end = INT64_MAX;
  if (deadline_ms != INT64_MAX) end = now + (int64_t)((double)(deadline_ms - now) * 0.8) - 150;
  if (time_limit > 0) {
    int64_t tl = now + (int64_t)(time_limit * 1000.0);
    if (tl < end) end = tl;
  }
  return end;
}

/* Points the engine's moving deadline at the earliest end among the waiters (under mu). */
static void retarget(sp_job *j) {
  int64_t end = INT64_MAX;
  for (waiter *w = j->waiters; w; w = w->next)
    if (w->end_ms < end) end = w->end_ms;
  long long us = 0;
  if (end != INT64_MAX) {
    double at = sp_clock_now() + (double)(end - sp_clock_now_ms()) / 1000.0;
    us = (long long)(at * 1e6);
    if (us < 1) us = 1;
  }
  atomic_store(&j->deadline_us, us);
}

/* The cancel hook: the call went away while waiting. */
static void on_cancel(sp_rpc_call *call, void *arg) {
  sp_service *s = arg;
  waiter *found = NULL;
  pthread_mutex_lock(&s->mu);
  for (sp_job *j = s->jobs; j && !found; j = j->next) {
    for (waiter **pw = &j->waiters; *pw; pw = &(*pw)->next) {
      if ((*pw)->call != call) continue;
      found = *pw;
      *pw = found->next;
      if (!j->waiters) atomic_store(&j->cancel, 1);   /* nobody waits: stop the search */
      else retarget(j);   /* the others may allow more time: the search runs on for them */
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (!found) return;   /* already being answered */
  sp__svc_log(s, call, method_name(found->stream), NULL, "cancelled", SP_RPC_CANCELLED,
              "the caller cancelled or its deadline passed");
  sp_rpc_call_reply(call, SP_RPC_CANCELLED, NULL, 0, "cancelled", 0);
  free_waiter(found);
}

/* ------------------------------------------------------------------ the search */

static void on_progress(void *ctx, const sp_progress *p) {
  sp_job *j = ctx;
  sp_service *s = j->svc;
  int64_t now = sp_clock_now_ms();
  bool first = p->has_plan && !j->sent_incumbent;   /* always sent: where the search starts */
  if (now - j->last_progress_ms < 100 && !(p->has_plan && p->gap == 0) && !first) return;
  j->last_progress_ms = now;
  if (p->has_plan) j->sent_incumbent = true;
  pthread_mutex_lock(&s->mu);
  for (waiter *w = j->waiters; w; w = w->next)
    if (w->stream) send_progress(w->call, p->stage ? p->stage : "", p, p->seconds);
  pthread_mutex_unlock(&s->mu);
}

/* The plan's strategy choice as a JSON array ("[]" without a search); malloc'd. */
static char *choice_json(const sp_plan *p) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_putc(&sb, '[');
  for (int i = 0; i < p->nchoice; i++) sp_strbuf_printf(&sb, "%s%d", i ? "," : "", p->choice[i]);
  sp_strbuf_putc(&sb, ']');
  return sp_strbuf_ok(&sb) ? sp_strbuf_detach(&sb) : (sp_strbuf_free(&sb), NULL);
}

/* The stored choice of plan `key` (its "choice" row), malloc'd into *out; false when there is
 * none (or it cannot be read: the search then starts cold). */
static bool stored_choice(sp_service *s, const char *key, int **out, int *n) {
  sp_store_row_query q = {.section = "choice", .limit = 1, .skip_total = true};
  sp_store_row_page pg = {0};
  *out = NULL;
  *n = 0;
  if (sp_store_rows(s->store, key, &q, &pg, NULL) != SP_OK || pg.n == 0) {
    sp_store_row_page_free(&pg);
    return false;
  }
  cJSON *a = cJSON_Parse(pg.rows[0].json);
  sp_store_row_page_free(&pg);
  int len = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
  int *v = len > 0 ? malloc((size_t)len * sizeof *v) : NULL;
  int k = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, a) {
    if (!v || !cJSON_IsNumber(e)) break;
    v[k++] = e->valueint;
  }
  cJSON_Delete(a);
  if (!v || k != len) {
    free(v);
    return false;
  }
  *out = v;
  *n = len;
  return true;
}

static int store_plan(sp_job *j, const sp_plan *p, const Shardplan__V1__PlanResponse *resp,
                      const uint8_t *bytes, size_t n, sp_err *err) {
  /* The rows the dashboard reads (store/plan_rows.h), plus the whole plan's JSON, from which
   * a DETAIL_FULL answer is rebuilt. */
  sp_plan_rows pr = {0};
  int rc = sp_plan_rows_build_with(p, SP_PLAN_ROWS_NO_ORIGINS, &pr, err);
  if (rc) return rc;
  sp_store_row *rows = malloc((pr.n + 2) * sizeof *rows);
  char *full = sp_plan_to_json_text(p, false);
  char *choice = choice_json(p);
  if (!rows || !full || !choice) {
    free(rows);
    free(full);
    free(choice);
    sp_plan_rows_free(&pr);
    return sp_err_set(err, SP_ENOMEM, "out of memory storing the plan");
  }
  if (pr.n) memcpy(rows, pr.v, pr.n * sizeof *rows);
  size_t nrows = pr.n;
  rows[nrows++] = (sp_store_row){"plan", 0, NULL, full};
  /* The search's strategy choice: a later search of this key starts from it. */
  if (p->nchoice) rows[nrows++] = (sp_store_row){"choice", 0, NULL, choice};
  {
    char mesh[256] = "";
    if (resp->plan && resp->plan->n_meshes) {
      const Shardplan__V1__MeshPlan *m = resp->plan->meshes[0];
      for (size_t i = 0; i < m->n_axes; i++)
        snprintf(mesh + strlen(mesh), sizeof mesh - strlen(mesh), "%s%s=%lld", i ? ", " : "",
                 m->axes[i]->name, (long long)m->axes[i]->size);
    }
    const char *modname = sp_op_get_str(j->req.module->op, "sym_name");
    sp_store_plan rec = {0};
    snprintf(rec.key, sizeof rec.key, "%s", j->key);
    snprintf(rec.raw_hash, sizeof rec.raw_hash, "%s", j->raw);
    rec.planner_version = sp_rpc_planner_version();
    rec.module_name = modname ? modname
                              : (j->req.msg->filename && *j->req.msg->filename
                                     ? j->req.msg->filename : "");
    rec.mesh = mesh;
    rec.status = sp_rpc_status_word(resp);
    rec.gap = resp->status == SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_PROPAGATED ? NAN : resp->gap;
    rec.total_cost = resp->plan && resp->plan->costs ? resp->plan->costs->total_seconds : NAN;
    rec.request = j->request;
    rec.request_len = j->request_len;
    rec.plan = bytes;
    rec.plan_len = n;
    rc = sp_store_put(j->svc->store, &rec, rows, nrows, err);
  }
  free(rows);
  free(full);
  free(choice);
  sp_plan_rows_free(&pr);
  return rc;
}

/* Takes the job out of the table (no one joins it any more); under mu. */
static void unlist_job(sp_job *j) {
  for (sp_job **pj = &j->svc->jobs; *pj; pj = &(*pj)->next)
    if (*pj == j) {
      *pj = j->next;
      break;
    }
}

/* Takes out the waiters to answer now: all of them, or those whose end is at or before
 * `due_ms`. When none is left the job leaves the table (*finished); else the moving
 * deadline follows the ones left. Returns the taken waiters (the caller answers and frees
 * them; once finished it calls job_done). */
static waiter *take_waiters(sp_job *j, bool all, int64_t due_ms, bool *finished) {
  sp_service *s = j->svc;
  waiter *taken = NULL;
  pthread_mutex_lock(&s->mu);
  for (waiter **pw = &j->waiters; *pw;) {
    waiter *w = *pw;
    if (all || w->end_ms <= due_ms) {
      *pw = w->next;
      w->next = taken;
      taken = w;
    } else {
      pw = &w->next;
    }
  }
  *finished = j->waiters == NULL;
  if (*finished) unlist_job(j);
  else retarget(j);
  pthread_mutex_unlock(&s->mu);
  return taken;
}

/* The job has answered everyone: it no longer counts (drain waits for this, so no reply is
 * started after the gRPC queues shut down). */
static void job_done(sp_service *s) {
  pthread_mutex_lock(&s->mu);
  if (--s->njobs == 0) pthread_cond_broadcast(&s->idle);
  pthread_mutex_unlock(&s->mu);
}

static void answer_error(sp_service *s, waiter *ws, const char *key, int status, const char *msg) {
  while (ws) {
    waiter *w = ws;
    ws = w->next;
    fail_call(s, w->call, w->stream, key, status, msg, 0);
    free_waiter(w);
  }
}

/* Answers waiters with `resp`, each in its own names; DETAIL_FULL extras come from `plan`, or
 * from the stored plan when `plan` is NULL (the answer is the stored one). `how` ends the log
 * line. */
static void answer_waiters(sp_job *j, waiter *ws, Shardplan__V1__PlanResponse *resp,
                           const sp_plan *plan, const char *how) {
  sp_service *s = j->svc;
  uint8_t *shared = NULL;
  size_t shared_len = 0;
  bool have_shared = false;
  for (waiter *w = ws, *next; w; w = next) {
    next = w->next;
    uint8_t *ex = NULL, *out = NULL;
    size_t exl = 0, olen = 0;
    sp_rpc_func_map map;
    bool renamed = sp_rpc_func_map_of(resp, &w->labels, &map);
    bool full = w->detail == SHARDPLAN__V1__DETAIL__DETAIL_FULL;
    if (full && (renamed || !have_shared)) {
      /* A joiner whose functions have other names gets the module text in its names. */
      const sp_rpc_func_map *m = renamed ? &map : NULL;
      if (plan) sp_rpc_plan_full_extras(plan, m, &ex, &exl, NULL);
      else sp__svc_full_extras(s, j->key, m, &ex, &exl, NULL);
      if (!renamed) {
        shared = ex;
        shared_len = exl;
        have_shared = true;
      }
    } else if (full) {
      ex = shared;
      exl = shared_len;
    }
    double ms = (double)(sp_clock_now_ms() - sp_rpc_call_start_ms(w->call));
    if (sp_rpc_pack_response(resp, &w->labels, false, w->coalesced, ms, ex, exl, &out, &olen)) {
      fail_call(s, w->call, w->stream, j->key, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
    } else {
      char outcome[96];
      snprintf(outcome, sizeof outcome, "%s %s", w->coalesced ? "coalesced" : "miss", how);
      sp__svc_log(s, w->call, method_name(w->stream), j->key, outcome, SP_RPC_OK, NULL);
      deliver(w->call, w->stream, out, olen);
    }
    if (ex != shared) free(ex);
    free(out);
    free_waiter(w);
  }
  free(shared);
}

/* The graph again, unplanned, for the next segment of a search (sp_plan_run transforms the
 * module it plans): read from the request bytes as the first one was. */
static int fresh_module(sp_job *j, sp_err *err) {
  sp_rpc_request r;
  memset(&r, 0, sizeof r);
  int rc = sp_rpc_request_decode(j->request, j->request_len, j->raw, &r, err);
  if (rc == SP_OK) rc = sp_rpc_request_prepare(&r, err);
  if (rc == SP_OK) {
    sp_module_free(j->req.module);
    j->req.module = r.module;
    r.module = NULL;
  }
  sp_rpc_request_free(&r);
  return rc;
}

/* The stored plan of this key when it should be answered instead of `resp`: a plan that is
 * as cheap or cheaper, unless `resp` is proven optimal. NULL: store and answer `resp`. */
static Shardplan__V1__PlanResponse *better_stored(sp_job *j,
                                                 const Shardplan__V1__PlanResponse *resp) {
  sp_store_plan old = {0};
  Shardplan__V1__PlanResponse *o = NULL;
  if (sp_store_get(j->svc->store, j->key, SP_STORE_WITH_PLAN, &old, NULL) == SP_OK &&
      resp->plan->costs && !isnan(old.total_cost) &&
      resp->status != SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL &&
      old.total_cost <= resp->plan->costs->total_seconds)
    o = shardplan__v1__plan_response__unpack(NULL, old.plan_len, old.plan);
  sp_store_plan_free(&old);
  return o;
}

/* The engine's options for the next segment of job j's search: the time left of its limit
 * since run_start, the moving deadline, cancellation, progress, and the warm start `seed`. */
static void segment_options(sp_job *j, double run_start, int *seed, int nseed) {
  double used = sp_clock_now() - run_start;
  j->req.popts.time_limit = j->time_limit > used ? j->time_limit - used : 0;
  j->req.popts.deadline = 0;
  j->req.popts.moving_deadline_us = &j->deadline_us;
  j->req.popts.cancel = &j->cancel;
  j->req.popts.progress = on_progress;
  j->req.popts.progress_ctx = j;
  j->req.popts.incumbent = seed;
  j->req.popts.nincumbent = nseed;
  j->last_progress_ms = sp_clock_now_ms();
  j->sent_incumbent = false;
}

/* The gRPC status and message (into msg) for a segment of job j that failed with rc. */
static int run_failure(sp_job *j, int rc, const sp_err *err, char *msg, size_t cap) {
  sp_service *s = j->svc;
  int status = atomic_load(&j->cancel) ? (s->draining ? SP_RPC_UNAVAILABLE : SP_RPC_CANCELLED)
               : rc == SP_ENOTFOUND ? SP_RPC_FAILED_PRECONDITION
               : rc == SP_ETIMEOUT ? SP_RPC_DEADLINE_EXCEEDED
                                    : sp__svc_status_of(rc);
  snprintf(msg, cap, "%s%s", status == SP_RPC_UNAVAILABLE
           ? "the server is shutting down: " : rc == SP_ENOTFOUND ? "no valid plan: " : "",
           err->msg);
  return status;
}

/* The answer to job j from `plan`, searched for search_s seconds: the response *resp (in a new
 * arena *a, the caller's) and its packed bytes *bytes, *n (malloc'd, the caller's). NULL, or
 * the message of what ran out of memory. Wall time is not part of the plan (equal requests get
 * equal bytes): it goes beside it. */
static const char *build_answer(sp_job *j, sp_plan *plan, double search_s, sp_arena **a,
                                Shardplan__V1__PlanResponse **resp, uint8_t **bytes, size_t *n,
                                sp_err *err) {
  plan->solver.build_s = plan->solver.solve_s = 0;
  *a = sp_arena_new(0);
  if (!*a || sp_rpc_plan_summary(plan, &j->names, j->key, *a, resp, err))
    return "out of memory building the answer";
  (*resp)->search_seconds = search_s;
  (*resp)->time_limit_seconds = j->req.popts.time_limit;
  *n = shardplan__v1__plan_response__get_packed_size(*resp);
  *bytes = malloc(*n ? *n : 1);
  if (!*bytes) return "out of memory";
  shardplan__v1__plan_response__pack(*resp, *bytes);
  return NULL;
}

/* Stores job j's plan (store_plan); a final one is also remembered for the creator's exact
 * bytes, which it answers in the creator's labels. */
static int keep_plan(sp_job *j, const sp_plan *plan, const Shardplan__V1__PlanResponse *resp,
                     uint8_t *bytes, size_t n, sp_err *err) {
  int rc = store_plan(j, plan, resp, bytes, n, err);
  if (rc != SP_OK || resp->provisional) return rc;
  sp_store_plan mine = {.plan = bytes, .plan_len = n, .status = sp_rpc_status_word(resp)};
  snprintf(mine.key, sizeof mine.key, "%s", j->key);
  remember(j->svc, j->raw, j->req.detail, &mine);
  return SP_OK;
}

/* *seed becomes a copy of the plan's choice (the next segment's warm start); none when the
 * plan has no choice or memory runs out. */
static void reseed(const sp_plan *plan, int **seed, int *nseed) {
  free(*seed);
  *seed = NULL;
  *nseed = 0;
  if (plan->nchoice > 0 && (*seed = malloc((size_t)plan->nchoice * sizeof **seed))) {
    memcpy(*seed, plan->choice, (size_t)plan->nchoice * sizeof **seed);
    *nseed = plan->nchoice;
  }
}

/* A search, in segments: each runs the engine until the earliest end among the waiters left
 * (the moving deadline, which follows them as they join and leave), or to its own end when it
 * finishes first. A final plan answers everyone. A plan cut short (provisional) answers the
 * waiters whose end has come, and the next segment, for the others, starts from it (a warm
 * start, the engine's incumbent), on a fresh copy of the graph. The first segment starts from
 * the stored provisional plan of the key, if any. */
static void run_job(void *arg) {
  sp_job *j = arg;
  sp_service *s = j->svc;
  sp_plan *plan = NULL;
  sp_arena *a = NULL;
  uint8_t *bytes = NULL;
  int *seed = NULL, nseed = 0;
  Shardplan__V1__PlanResponse *old = NULL;
  sp_err err;
  sp_err_clear(&err);
  int status = SP_RPC_OK;
  char msg[SP_ERR_MSG_MAX + 64] = "";
  bool finished = false;

  pthread_mutex_lock(&s->mu);
  bool stop = s->draining || atomic_load(&j->cancel);
  pthread_mutex_unlock(&s->mu);
  if (stop) {
    status = s->draining ? SP_RPC_UNAVAILABLE : SP_RPC_CANCELLED;
    snprintf(msg, sizeof msg, "%s", s->draining ? "the server is shutting down; retry on "
             "another instance or after it restarts" : "cancelled");
    goto answer;
  }
  atomic_fetch_add(&s->searches, 1);
  {
    waiter *late = take_waiters(j, false, sp_clock_now_ms(), &finished);
    answer_error(s, late, j->key, SP_RPC_DEADLINE_EXCEEDED,
                 "the deadline passed while the search waited in the queue");
    if (finished) goto done;
  }
  stored_choice(s, j->key, &seed, &nseed);
  double run_start = sp_clock_now();
  for (int segment = 0;; segment++) {
    int rc = segment ? fresh_module(j, &err) : SP_OK;
    if (rc) {
      status = sp__svc_status_of(rc);
      snprintf(msg, sizeof msg, "%s", err.msg);
      goto answer;
    }
    segment_options(j, run_start, seed, nseed);
    sp_plan_input in = {.module = j->req.module, .filename = j->req.module->filename};
    rc = sp_plan_run(&in, j->req.search ? j->req.cluster : NULL, &j->req.popts, &plan, &err);
    if (rc) {
      status = run_failure(j, rc, &err, msg, sizeof msg);
      goto answer;
    }
    /* Wall time is not part of the plan (equal requests get equal bytes): it goes beside it. */
    double search_s = sp_clock_now() - run_start;
    Shardplan__V1__PlanResponse *resp = NULL;
    size_t n = 0;
    const char *oom = build_answer(j, plan, search_s, &a, &resp, &bytes, &n, &err);
    if (oom) {
      status = SP_RPC_RESOURCE_EXHAUSTED;
      snprintf(msg, sizeof msg, "%s", oom);
      goto answer;
    }

    /* A plan already stored (provisional) is replaced only by a better one. */
    bool stored_ok = false;
    old = better_stored(j, resp);
    if (!old) {
      if ((rc = keep_plan(j, plan, resp, bytes, n, &err)) != SP_OK) {
        /* A plan the cache does not keep is not acknowledged: its key would lead nowhere,
         * and the next rank of the same job could get a different plan (a deadline-cut
         * search is not repeatable). The callers get the cache's error and may retry. */
        status = sp__svc_status_of(rc);
        snprintf(msg, sizeof msg, "the plan could not be stored: %s", err.msg);
        goto answer;
      }
      stored_ok = true;
    }
    /* A final plan answers everyone; a provisional one those whose time has come. */
    waiter *ws = take_waiters(j, !resp->provisional, sp_clock_now_ms() + 50, &finished);
    if (old) answer_waiters(j, ws, old, NULL, "(kept the better stored plan)");
    else answer_waiters(j, ws, resp, plan, sp_rpc_status_word(resp));
    if (finished) {
      if (s->obs.on_search) s->obs.on_search(s->obs.ctx, search_s);
      /* Everyone has the answer: now the provenance the dashboard's value pages show
       * (seconds for a large plan, so not on the answer path). A page opened before this is
       * done traces the plan itself (web.c); whichever finishes first stores the rows. */
      if (stored_ok && sp_plan_rows_store_origins(s->store, j->key, plan, &err) != SP_OK &&
          err.code != SP_ENOTFOUND)
        sp__svc_log(s, NULL, "Plan", j->key, "provenance", SP_RPC_INTERNAL, err.msg);
      goto done;
    }
    /* Others wait longer: search on for them from this plan. */
    reseed(plan, &seed, &nseed);
    if (old) shardplan__v1__plan_response__free_unpacked(old, NULL);
    old = NULL;
    free(bytes);
    bytes = NULL;
    sp_arena_free(a);
    a = NULL;
    sp_plan_free(plan);
    plan = NULL;
  }
answer:
  answer_error(s, take_waiters(j, true, 0, &finished), j->key, status, msg);
done:
  if (old) shardplan__v1__plan_response__free_unpacked(old, NULL);
  free(seed);
  free(bytes);
  sp_arena_free(a);
  sp_plan_free(plan);
  free_job(j);
  job_done(s);
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
  sp__svc_log(s, call, method_name(stream), key, "hit (memory)", SP_RPC_OK, NULL);
  deliver(call, stream, out, olen);
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
                                 &sp, NULL) == SP_OK &&
             usable(s, &sp, req, ms_left);
  if (hit) {
    answer_stored(s, call, stream, (int)req->msg->detail, &sp, NULL, "hit (raw)");
    remember(s, raw, (int)req->msg->detail, &sp);
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
                          SP_STORE_COUNT_MISS, &sp, NULL) == SP_OK &&
             usable(s, &sp, req, ms_left);
  if (hit && answer_stored(s, call, stream, req->detail, &sp, labels, "hit")) {
    sp_store_add_raw_hash(s->store, req->raw, req->key, NULL);   /* same bytes next time */
    remember(s, req->raw, req->detail, &sp);
  }
  sp_store_plan_free(&sp);
  return hit;
}

/* 3. Under s->mu: adds waiter `w` to the running search for `key`, if there is one (true). */
static bool join_search(sp_service *s, sp_rpc_call *call, bool stream, const char *key,
                        waiter *w) {
  sp_job *j = s->jobs;
  while (j && (strcmp(j->key, key) != 0 || atomic_load(&j->cancel))) j = j->next;
  if (!j) return false;
  w->coalesced = true;
  w->next = j->waiters;
  j->waiters = w;
  retarget(j);   /* its end may come before the others': the search stops for it then */
  atomic_fetch_add(&s->coalesced, 1);
  if (stream) send_progress(call, "queued", NULL, 0);
  return true;
}

/* 4. Under s->mu: a new search job for *req (whose bytes are buf[0, len)) with waiter `w`,
 * queued on the pool. SP_OK: the job owns the request (*req is emptied) and `w`. Else
 * SP_ELIMIT (the queue is full) or SP_ENOMEM: `w` is still the caller's, and so is
 * *unstarted (NULL when none was made), a job that may own the request; the caller frees it
 * with free_job once the lock is released. */
static int start_search(sp_service *s, sp_rpc_call *call, bool stream, sp_rpc_request *req,
                        waiter *w, const uint8_t *buf, size_t len, double asked,
                        sp_job **unstarted) {
  sp_job *j = calloc(1, sizeof *j);
  uint8_t *copy = malloc(len ? len : 1);
  if (j) {
    j->request = copy;   /* owned by the job from here */
    copy = NULL;
  }
  int rc = SP_ENOMEM;
  if (j && j->request && sp_rpc_labels_read(req->module, &j->names, NULL) == SP_OK) {
    if (len) memcpy(j->request, buf, len);
    j->svc = s;
    snprintf(j->key, sizeof j->key, "%s", req->key);
    snprintf(j->raw, sizeof j->raw, "%s", req->raw);
    j->request_len = len;
    j->time_limit = asked;
    j->req = *req;    /* the job owns the request from here */
    memset(req, 0, sizeof *req);
    j->req.popts.search_options = j->req.search_options;
    j->waiters = w;
    retarget(j);
    rc = sp_pool_submit(s->pool, run_job, j);
  }
  if (rc == SP_OK) {
    j->next = s->jobs;
    s->jobs = j;
    s->njobs++;
    atomic_fetch_add(&s->misses, 1);
    if (s->obs.on_cache) s->obs.on_cache(s->obs.ctx, false);
    if (stream) send_progress(call, "queued", NULL, 0);
    return SP_OK;
  }
  free(copy);
  if (j) j->waiters = NULL;
  *unstarted = j;
  return rc;
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
    fail_call(s, call, stream, NULL, SP_RPC_UNAVAILABLE, msg, retry);
  } else {
    fail_call(s, call, stream, NULL, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
  }
}

static void handle(sp_rpc_call *call, sp_service *s, bool stream) {
  const char *M = method_name(stream);
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
    fail_call(s, call, stream, NULL, SP_RPC_INVALID_ARGUMENT, err.msg, 0);
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
    fail_call(s, call, stream, NULL, sp__svc_status_of(rc), err.msg, 0);
    sp_rpc_request_free(&req);
    return;
  }
  sp_rpc_labels labels;
  if (sp_rpc_labels_read(req.module, &labels, &err)) {
    fail_call(s, call, stream, req.key, SP_RPC_RESOURCE_EXHAUSTED, err.msg, 0);
    sp_rpc_request_free(&req);
    return;
  }
  if (key_hit(s, call, stream, &req, &labels, ms_left)) {
    sp_rpc_labels_free(&labels);
    sp_rpc_request_free(&req);
    return;
  }

  /* 3./4. Join the search for this key, or start one. */
  waiter *w = calloc(1, sizeof *w);
  if (!w) {
    sp_rpc_labels_free(&labels);
    fail_call(s, call, stream, req.key, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
    sp_rpc_request_free(&req);
    return;
  }
  w->call = call;
  w->stream = stream;
  w->detail = req.detail;
  w->labels = labels;
  double asked = req.time_limit > 0 ? req.time_limit : s->o.default_time_limit;
  w->end_ms = waiter_end(sp_clock_now_ms(), sp_rpc_call_deadline_ms(call), asked);
  pthread_mutex_lock(&s->mu);
  if (s->draining) {
    pthread_mutex_unlock(&s->mu);
    free_waiter(w);
    fail_call(s, call, stream, req.key, SP_RPC_UNAVAILABLE, "the server is shutting down", 0);
    sp_rpc_request_free(&req);
    return;
  }
  if (!sp_rpc_call_on_cancel(call, on_cancel, s)) {
    pthread_mutex_unlock(&s->mu);
    free_waiter(w);
    sp__svc_log(s, call, M, req.key, "cancelled", SP_RPC_CANCELLED, NULL);
    sp_rpc_call_reply(call, SP_RPC_CANCELLED, NULL, 0, "cancelled", 0);
    sp_rpc_request_free(&req);
    return;
  }
  sp_job *unstarted = NULL;
  if (join_search(s, call, stream, req.key, w) ||
      (rc = start_search(s, call, stream, &req, w, buf, len, asked, &unstarted)) == SP_OK) {
    pthread_mutex_unlock(&s->mu);
    sp_rpc_request_free(&req);
    return;
  }
  /* Not started: the queue is full (or memory ran out). */
  int running = 0, queued = 0;
  sp_pool_gauges(s->pool, &running, &queued);
  pthread_mutex_unlock(&s->mu);
  if (unstarted) free_job(unstarted);
  sp_rpc_request_free(&req);
  refuse(s, call, stream, rc, running, queued);
  free_waiter(w);
}

void sp__svc_plan(sp_rpc_call *call, void *svc) { handle(call, svc, false); }
void sp__svc_plan_stream(sp_rpc_call *call, void *svc) { handle(call, svc, true); }

void sp_service_drain(sp_service *s) {
  pthread_mutex_lock(&s->mu);
  s->draining = true;
  for (sp_job *j = s->jobs; j; j = j->next) atomic_store(&j->cancel, 1);
  while (s->njobs > 0) pthread_cond_wait(&s->idle, &s->mu);
  pthread_mutex_unlock(&s->mu);
}
