/*
 * plan_job.c - one search per key, shared by every caller waiting for it (how a Plan gets
 * here: plan_service.c).
 *
 * Life of a job (an sp_job): created with its first waiter and put in the in-flight table
 * (svc->mu), queued on the pool; joiners add waiters. Each waiter has an end, the time by
 * which it must have its answer: a margin before its call's deadline (the time building,
 * storing and sending the answer takes, which grows with the module, see answer_margin_ms),
 * or its time limit, whichever comes first. The search runs once, to the latest end among
 * its waiters (the engine's moving deadline, ir/run_ctl.h): a caller with an earlier end
 * neither shortens nor restarts it. When the earliest end comes before the latest, the
 * engine hands out its best plan so far at that time (a snapshot, plan.h: on_snapshot); the
 * waiters whose end has come are answered from it on a thread of their own while the search
 * goes on, and it is stored as provisional when it beats the stored plan. When the search
 * ends, its plan answers everyone left. A waiter whose end comes before any plan exists gets
 * the first one (the engine serves the snapshot at its first check with a plan), unless its
 * call's deadline passes first (DEADLINE_EXCEEDED, from gRPC's side: no plan existed); when
 * the latest end passes before propagation has finished, the search fails with
 * DEADLINE_EXCEEDED (a half-propagated module is no plan).
 *
 * Failures answer only whom they concern: a snapshot that cannot be built or stored fails the
 * waiters it was for; a search that fails fails its waiters, except when it failed because
 * its deadline passed before propagation finished while a later waiter (one that joined
 * meanwhile) still has time: the waiters due get DEADLINE_EXCEEDED and the search runs again
 * for the others.
 *
 * Storing: a plan is stored before anyone is answered from it (nothing acknowledged is lost),
 * one plan of a job at a time (keep_mu), replacing a stored plan only when better. A snapshot,
 * whose callers' deadlines are near, stores its answer, record and strategy choice first and
 * the detail rows (the dashboard's rows and the plan's JSON, seconds for a large plan) once
 * they are answered; meanwhile the plan stays listed in the service's rows_pending table,
 * from which a DETAIL_FULL request for its key is answered (GetPlan, or a Plan that hits), and
 * the dashboard says its rows are being written (rows_pending.h). So does a final plan cut
 * short by the deadline; one the search finished stores everything at once. Then the
 * provenance rows are added, off the answer path (store/plan_rows.h).
 *
 * Shutdown (sp_service_drain): a queued job answers UNAVAILABLE; a running search is stopped
 * as by a deadline, and its best plan is stored and answered (UNAVAILABLE when it had none:
 * propagation had not finished).
 *
 * Memory and threads: a job owns its module, cluster, request bytes and waiters. The engine
 * runs on a pool thread; the snapshot callback (on that thread) takes the due waiters under
 * svc->mu and gives the plan to an answerer thread. The job is freed by the last of the pool
 * thread and the answerers (refs, under svc->mu), which then counts it done.
 */
#include <limits.h>
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
#include "store/plan_rows.h"

/* Waiters whose end is this close after a snapshot's time are answered by it too. */
#define DUE_SLACK_MS 100
/* The answer margin (answer_margin_ms): a fixed part, and the bounds of the part per op of
 * the module, what the engine's next check, building, storing and sending take. */
#define ANSWER_FIXED_MS 200
#define ANSWER_NS_PER_OP_MIN 50000
#define ANSWER_NS_PER_OP_MAX 5000000

struct sp__waiter {
  sp_rpc_call *call;
  bool stream, coalesced;
  int detail;
  int64_t end_ms;              /* when it must have its answer (INT64_MAX: no limit) */
  sp_rpc_labels labels;
  sp__waiter *next;
};
typedef sp__waiter waiter;

struct sp_job {
  sp_service *svc;
  char key[SP_RPC_HEX], raw[SP_RPC_HEX];
  sp_rpc_request req;          /* module, cluster, options, message (owned) */
  uint8_t *request;            /* bytes as received */
  size_t request_len;
  sp_rpc_labels names;         /* the first requester's: addresses and function names */
  char *module_name;           /* for the plan cache (read once: the engine changes the module) */
  int64_t nops;                /* the module's size: the answer margin grows with it */
  double time_limit;           /* seconds asked for (or the default); 0: bounded by work */
  atomic_int cancel;
  /* The engine's moving deadline and snapshot time (ir/run_ctl.h, sp_clock_now() us; 0:
   * none), kept up to date under svc->mu as waiters come and go (retarget). */
  atomic_llong deadline_us, snapshot_at_us;
  double run_start;            /* sp_clock_now() when the search started */
  int64_t last_progress_ms;
  bool sent_incumbent;         /* the first incumbent went to the streams */
  int refs;                    /* the pool thread and the answerers (under svc->mu) */
  pthread_mutex_t keep_mu;     /* one plan of the job compared with the stored one and stored
                                  at a time */
  waiter *waiters;
  sp_job *next;
};

/* ------------------------------------------------------------------ waiters and the margin */

void sp__waiter_free(waiter *w) {
  if (!w) return;
  sp_rpc_labels_free(&w->labels);
  free(w);
}

/* The time an answer of a module of `nops` ops may take from the engine's snapshot time to
 * the caller (its next check, then the plan built, stored and sent), with room to spare: a
 * fixed part and twice what the daemon measured lately per op (or its starting guess). */
static int64_t answer_margin_ms(sp_service *s, int64_t nops) {
  double ns = (double)atomic_load(&s->answer_ns_per_op);
  return ANSWER_FIXED_MS + (int64_t)(2.0 * ns * (double)nops / 1e6);
}

/* An answer reached its callers `ms` after the engine's snapshot time: the per-op part of the
 * margin follows (a moving average; small modules say little about it). */
static void note_answer_time(sp_service *s, double ms, int64_t nops) {
  if (nops < 200 || !(ms > 0)) return;
  double ns = (ms - ANSWER_FIXED_MS / 2.0) * 1e6 / (double)nops;
  if (ns < ANSWER_NS_PER_OP_MIN) ns = ANSWER_NS_PER_OP_MIN;
  if (ns > ANSWER_NS_PER_OP_MAX) ns = ANSWER_NS_PER_OP_MAX;
  long long old = atomic_load(&s->answer_ns_per_op);
  atomic_store(&s->answer_ns_per_op, (long long)(0.7 * (double)old + 0.3 * ns));
}

sp__waiter *sp__waiter_new(sp_service *s, sp_rpc_call *call, bool stream, int detail,
                           sp_rpc_labels *labels, double time_limit, int64_t nops) {
  waiter *w = calloc(1, sizeof *w);
  if (!w) {
    sp_rpc_labels_free(labels);
    return NULL;
  }
  w->call = call;
  w->stream = stream;
  w->detail = detail;
  w->labels = *labels;
  memset(labels, 0, sizeof *labels);
  int64_t now = sp_clock_now_ms(), deadline = sp_rpc_call_deadline_ms(call);
  w->end_ms = INT64_MAX;
  if (deadline != INT64_MAX) {
    int64_t end = deadline - answer_margin_ms(s, nops) - (deadline - now) / 5;
    w->end_ms = end > now ? end : now;
  }
  if (time_limit > 0) {
    int64_t tl = now + (int64_t)(time_limit * 1000.0);
    if (tl < w->end_ms) w->end_ms = tl;
  }
  return w;
}

void sp__job_free(sp_job *j) {
  while (j->waiters) {
    waiter *w = j->waiters;
    j->waiters = w->next;
    sp__waiter_free(w);
  }
  sp_rpc_request_free(&j->req);
  sp_rpc_labels_free(&j->names);
  pthread_mutex_destroy(&j->keep_mu);
  free(j->module_name);
  free(j->request);
  free(j);
}

/* The engine's microseconds (ir/run_ctl.h) of time `ms`: the same clock (ir/clock.h), at
 * least 1 (0 means none). */
static long long engine_us(int64_t ms) {
  if (ms < 1) return 1;
  return ms > LLONG_MAX / 1000 ? LLONG_MAX : (long long)ms * 1000;
}

/* Under mu: the engine's deadline follows the latest end among the waiters (none when one has
 * no end), its snapshot time the earliest when that comes first; draining stops it now. */
static void retarget(sp_job *j) {
  int64_t latest = INT64_MIN, earliest = INT64_MAX;
  for (waiter *w = j->waiters; w; w = w->next) {
    if (w->end_ms > latest) latest = w->end_ms;
    if (w->end_ms < earliest) earliest = w->end_ms;
  }
  long long deadline = 0, snapshot = 0;
  if (j->svc->draining) deadline = 1;
  else if (j->waiters && latest != INT64_MAX) deadline = engine_us(latest);
  if (!j->svc->draining && j->waiters && earliest < latest) snapshot = engine_us(earliest);
  atomic_store(&j->deadline_us, deadline);
  atomic_store(&j->snapshot_at_us, snapshot);
}

/* Takes the job out of the table (no one joins it any more); under mu. */
static void unlist_job(sp_job *j) {
  for (sp_job **pj = &j->svc->jobs; *pj; pj = &(*pj)->next)
    if (*pj == j) {
      *pj = j->next;
      break;
    }
}

/* Under mu: takes out the waiters to answer now, all of them or those whose end is at or
 * before `due_ms`. When none is left the job leaves the table and, unless `all`, its search
 * is stopped (nobody waits for it); else the engine follows the waiters left. */
static waiter *take_waiters(sp_job *j, bool all, int64_t due_ms) {
  waiter *taken = NULL;
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
  if (!j->waiters) {
    unlist_job(j);
    if (!all) atomic_store(&j->cancel, 1);
  }
  retarget(j);
  return taken;
}

static waiter *take_waiters_locked(sp_job *j, bool all, int64_t due_ms) {
  pthread_mutex_lock(&j->svc->mu);
  waiter *ws = take_waiters(j, all, due_ms);
  pthread_mutex_unlock(&j->svc->mu);
  return ws;
}

/* Drops one reference; the last frees the job and counts it done (drain waits for this, so
 * no reply is started after the gRPC queues shut down). */
static void job_release(sp_job *j) {
  sp_service *s = j->svc;
  pthread_mutex_lock(&s->mu);
  bool last = --j->refs == 0;
  if (last && --s->njobs == 0) pthread_cond_broadcast(&s->idle);
  pthread_mutex_unlock(&s->mu);
  if (last) sp__job_free(j);
}

void sp__job_on_cancel(sp_rpc_call *call, void *arg) {
  sp_service *s = arg;
  waiter *found = NULL;
  pthread_mutex_lock(&s->mu);
  for (sp_job *j = s->jobs; j && !found; j = j->next) {
    for (waiter **pw = &j->waiters; *pw; pw = &(*pw)->next) {
      if ((*pw)->call != call) continue;
      found = *pw;
      *pw = found->next;
      if (!j->waiters) atomic_store(&j->cancel, 1);   /* nobody waits: stop the search */
      else retarget(j);   /* the others may allow more or less time: the search follows */
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (!found) return;   /* already being answered */
  sp__svc_log(s, call, sp__plan_method(found->stream), NULL, "cancelled", SP_RPC_CANCELLED,
              "the caller cancelled or its deadline passed");
  sp_rpc_call_reply(call, SP_RPC_CANCELLED, NULL, 0, "cancelled", 0);
  sp__waiter_free(found);
}

/* ------------------------------------------------------------------ storing */

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

/* The mesh of the answer, "data=2, model=4" (for the plan cache's listing). */
static void mesh_text(const Shardplan__V1__PlanResponse *resp, char *buf, size_t cap) {
  buf[0] = '\0';
  if (!resp->plan || !resp->plan->n_meshes) return;
  const Shardplan__V1__MeshPlan *m = resp->plan->meshes[0];
  for (size_t i = 0; i < m->n_axes; i++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s=%lld", i ? ", " : "", m->axes[i]->name,
             (long long)m->axes[i]->size);
}

/* The rows of a plan the dashboard reads (store/plan_rows.h) and the whole plan's JSON, from
 * which a DETAIL_FULL answer is rebuilt ("plan"), into *rows (malloc'd, *n of them; the rows
 * point into *pr and *full, which the caller frees too). */
static int detail_rows(const sp_plan *p, sp_plan_rows *pr, char **full, sp_store_row **rows,
                       size_t *n, sp_err *err) {
  memset(pr, 0, sizeof *pr);
  *rows = NULL;
  *full = NULL;
  int rc = sp_plan_rows_build_with(p, SP_PLAN_ROWS_NO_ORIGINS, pr, err);
  if (rc) return rc;
  *rows = malloc((pr->n + 1) * sizeof **rows);
  *full = sp_plan_to_json_text(p, false);
  if (!*rows || !*full) return sp_err_set(err, SP_ENOMEM, "out of memory storing the plan");
  if (pr->n) memcpy(*rows, pr->v, pr->n * sizeof **rows);
  (*rows)[pr->n] = (sp_store_row){"plan", 0, NULL, *full};
  *n = pr->n + 1;
  return SP_OK;
}

/* Stores job j's plan (its answer `bytes` and record) with the search's strategy choice (a
 * later search of this key starts from it), and with the detail rows unless `later` (then
 * store_details adds them once the callers have their answer). */
static int store_plan(sp_job *j, const sp_plan *p, const Shardplan__V1__PlanResponse *resp,
                      const uint8_t *bytes, size_t n, bool later, sp_err *err) {
  sp_plan_rows pr;
  char *full = NULL, *choice = choice_json(p);
  sp_store_row *detail = NULL, *rows = NULL;
  size_t ndetail = 0;
  int rc = later ? SP_OK : detail_rows(p, &pr, &full, &detail, &ndetail, err);
  if (!rc && (!choice || !(rows = malloc((ndetail + 1) * sizeof *rows))))
    rc = sp_err_set(err, SP_ENOMEM, "out of memory storing the plan");
  if (!rc) {
    if (ndetail) memcpy(rows, detail, ndetail * sizeof *rows);
    size_t nrows = ndetail;
    if (p->nchoice) rows[nrows++] = (sp_store_row){"choice", 0, NULL, choice};
    char mesh[256];
    mesh_text(resp, mesh, sizeof mesh);
    sp_store_plan rec = {0};
    snprintf(rec.key, sizeof rec.key, "%s", j->key);
    snprintf(rec.raw_hash, sizeof rec.raw_hash, "%s", j->raw);
    rec.planner_version = sp_rpc_planner_version();
    rec.module_name = j->module_name;
    rec.mesh = mesh;
    rec.status = sp_rpc_status_word(resp);
    rec.gap = resp->status == SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_PROPAGATED ? NAN
                                                                                 : resp->gap;
    rec.total_cost = resp->plan && resp->plan->costs ? resp->plan->costs->total_seconds : NAN;
    rec.request = j->request;
    rec.request_len = j->request_len;
    rec.plan = bytes;
    rec.plan_len = n;
    rc = sp_store_put(j->svc->store, &rec, rows, nrows, err);
  }
  free(rows);
  free(detail);
  free(full);
  free(choice);
  if (!later) sp_plan_rows_free(&pr);
  return rc;
}

/* The detail rows of a plan stored with store_plan(later), added once its callers have their
 * answer, section by section; nothing when the stored plan is no longer this one (a better
 * one replaced it meanwhile). The rows are built first; the check and the writes are under
 * j->keep_mu, so that no other plan of the job is stored in between. */
static int store_details(sp_job *j, const sp_plan *p, const uint8_t *bytes, size_t n,
                         sp_err *err) {
  sp_plan_rows pr;
  char *full = NULL;
  sp_store_row *rows = NULL, *one = NULL;
  size_t nrows = 0;
  int rc = detail_rows(p, &pr, &full, &rows, &nrows, err);
  if (!rc && !(one = malloc((nrows + 1) * sizeof *one)))
    rc = sp_err_set(err, SP_ENOMEM, "out of memory storing the plan");
  pthread_mutex_lock(&j->keep_mu);
  sp_store_plan cur = {0};
  if (!rc) {
    rc = sp_store_get(j->svc->store, j->key, SP_STORE_WITH_PLAN, &cur, err);
    bool ours = rc == SP_OK && cur.plan_len == n && memcmp(cur.plan, bytes, n) == 0;
    if (!ours) nrows = 0;   /* replaced, or gone: nothing to add */
    if (rc == SP_ENOTFOUND) rc = SP_OK;
  }
  /* One section at a time (sp_store_add_rows), in the order the sections first appear. */
  for (size_t i = 0; !rc && i < nrows; i++) {
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++) seen = strcmp(rows[k].section, rows[i].section) == 0;
    if (seen) continue;
    size_t m = 0;
    for (size_t k = i; k < nrows; k++)
      if (strcmp(rows[k].section, rows[i].section) == 0) one[m++] = rows[k];
    rc = sp_store_add_rows(j->svc->store, j->key, one, m, err);
    if (rc == SP_ENOTFOUND) rc = SP_OK;   /* evicted or deleted meanwhile */
  }
  pthread_mutex_unlock(&j->keep_mu);
  sp_store_plan_free(&cur);
  free(one);
  free(rows);
  free(full);
  sp_plan_rows_free(&pr);
  return rc;
}

/* The stored plan of this key when it should be answered instead of `resp`: a plan that is
 * as cheap or cheaper, unless `resp` is proven optimal, and whose detail rows are stored or
 * being written (one whose rows are not coming, the daemon having stopped between its two
 * steps, is replaced, which writes them). A plan without costs (propagation's alone, its
 * search cut before it had any) never replaces one with costs. NULL: store and answer `resp`;
 * else the stored answer, and its bytes in *old_bytes (malloc'd, *old_n). */
static Shardplan__V1__PlanResponse *better_stored(sp_job *j,
                                                 const Shardplan__V1__PlanResponse *resp,
                                                 uint8_t **old_bytes, size_t *old_n) {
  sp_service *s = j->svc;
  sp_store_plan old = {0};
  Shardplan__V1__PlanResponse *o = NULL;
  *old_bytes = NULL;
  *old_n = 0;
  bool keep = false;
  if (sp_store_get(s->store, j->key, SP_STORE_WITH_PLAN, &old, NULL) == SP_OK &&
      !isnan(old.total_cost)) {
    if (!resp->plan->costs)
      keep = true;
    else
      keep = resp->status != SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL &&
             old.total_cost <= resp->plan->costs->total_seconds;
    keep = keep && sp__svc_rows_there(s, j->key, old.plan, old.plan_len);
  }
  if (keep && (*old_bytes = malloc(old.plan_len ? old.plan_len : 1)) &&
      !(o = shardplan__v1__plan_response__unpack(NULL, old.plan_len, old.plan))) {
    free(*old_bytes);
    *old_bytes = NULL;
  }
  if (o) {
    memcpy(*old_bytes, old.plan, old.plan_len);
    *old_n = old.plan_len;
  }
  sp_store_plan_free(&old);
  return o;
}

/* ------------------------------------------------------------------ answering */

static void answer_error(sp_service *s, waiter *ws, const char *key, int status, const char *msg) {
  while (ws) {
    waiter *w = ws;
    ws = w->next;
    sp__plan_fail(s, w->call, w->stream, key, status, msg, 0);
    sp__waiter_free(w);
  }
}

/* Answers waiters with `resp`, each in its own names; DETAIL_FULL extras come from `plan`, or,
 * when `plan` is NULL (the answer is the stored one, whose bytes are stored[0, nstored)),
 * from the stored plan. `how` ends the log line. */
static void answer_waiters(sp_job *j, waiter *ws, Shardplan__V1__PlanResponse *resp,
                           const sp_plan *plan, const uint8_t *stored, size_t nstored,
                           const char *how) {
  sp_service *s = j->svc;
  uint8_t *shared = NULL;
  size_t shared_len = 0;
  bool have_shared = false;
  int shared_rc = SP_OK;
  sp_err err;
  sp_err_clear(&err);
  for (waiter *w = ws, *next; w; w = next) {
    next = w->next;
    uint8_t *ex = NULL, *out = NULL;
    size_t exl = 0, olen = 0;
    int rc = SP_OK;
    sp_rpc_func_map map;
    bool renamed = sp_rpc_func_map_of(resp, &w->labels, &map);
    bool full = w->detail == SHARDPLAN__V1__DETAIL__DETAIL_FULL;
    if (full && (renamed || !have_shared)) {
      /* A joiner whose functions have other names gets the module text in its names. */
      const sp_rpc_func_map *m = renamed ? &map : NULL;
      bool missing = false;
      rc = plan ? sp_rpc_plan_full_extras(plan, m, &ex, &exl, &err)
                : sp__svc_full_extras(s, j->key, stored, nstored, m, &ex, &exl, &missing, &err);
      if (!renamed) {
        shared = ex;
        shared_len = exl;
        shared_rc = rc;
        have_shared = true;
      }
    } else if (full) {
      ex = shared;
      exl = shared_len;
      rc = shared_rc;
    }
    double ms = (double)(sp_clock_now_ms() - sp_rpc_call_start_ms(w->call));
    if (rc) {
      /* Only memory or the cache failing gets here: better_stored answers with a stored plan
       * only when its rows are there or being written. */
      sp__plan_fail(s, w->call, w->stream, j->key, sp__svc_status_of(rc), err.msg, 0);
    } else if (sp_rpc_pack_response(resp, &w->labels, false, w->coalesced, ms, ex, exl, &out,
                                    &olen)) {
      sp__plan_fail(s, w->call, w->stream, j->key, SP_RPC_RESOURCE_EXHAUSTED, "out of memory", 0);
    } else {
      char outcome[96];
      snprintf(outcome, sizeof outcome, "%s %s", w->coalesced ? "coalesced" : "miss", how);
      sp__svc_log(s, w->call, sp__plan_method(w->stream), j->key, outcome, SP_RPC_OK, NULL);
      sp__plan_deliver(w->call, w->stream, out, olen);
    }
    if (ex != shared) free(ex);
    free(out);
    sp__waiter_free(w);
  }
  free(shared);
}

/* A plan of job j (searched for search_s seconds, given time_limit), built into an answer,
 * stored (a final one also remembered for the creator's exact bytes) unless the stored plan
 * is at least as good, which then answers instead. Waiters are taken by `take` (after the
 * store, so that callers joining meanwhile are answered too) or given in `ws`, and answered,
 * or failed when the plan could not be stored or built. With `later` (a plan handed out near
 * its callers' deadlines) the answer and the record are stored before the callers are
 * answered, the detail rows after; meanwhile the plan is listed in s->pending, which answers
 * DETAIL_FULL requests for it (rows_pending.h). *answered_ms (may be NULL) gets the time the
 * callers were answered. Returns whether the plan was stored (its provenance rows follow). */
typedef waiter *(*take_fn)(sp_job *j);

static bool answer_plan(sp_job *j, sp_plan *plan, double search_s, double time_limit,
                        take_fn take, waiter *ws, bool later, int64_t *answered_ms) {
  sp_service *s = j->svc;
  sp_err err;
  sp_err_clear(&err);
  /* Wall time is not part of the plan (equal requests get equal bytes): it goes beside it. */
  plan->solver.build_s = plan->solver.solve_s = 0;
  sp_arena *a = sp_arena_new(0);
  Shardplan__V1__PlanResponse *resp = NULL, *old = NULL;
  uint8_t *bytes = NULL, *old_bytes = NULL;
  size_t n = 0, old_n = 0;
  sp_rows_pending_entry *pending = NULL;
  double t0 = sp_clock_now(), t_built = 0, t_stored = 0;
  int rc = !a || sp_rpc_plan_summary(plan, &j->names, j->key, a, &resp, &err) ? SP_ENOMEM : SP_OK;
  if (!rc) {
    resp->search_seconds = search_s;
    resp->time_limit_seconds = time_limit;
    n = shardplan__v1__plan_response__get_packed_size(resp);
    if (!(bytes = malloc(n ? n : 1))) rc = SP_ENOMEM;
    else shardplan__v1__plan_response__pack(resp, bytes);
  }
  char msg[SP_ERR_MSG_MAX + 64] = "out of memory building the answer";
  bool stored = false;
  t_built = sp_clock_now();
  if (!rc) {
    pthread_mutex_lock(&j->keep_mu);
    if (!(old = better_stored(j, resp, &old_bytes, &old_n))) {
      /* Listed before the record is committed: a reader never finds the record without its
       * rows and without this entry while the rows are still coming. No memory for the
       * entry: the rows are stored with the record, before the answer. */
      if (later && !(pending = sp_rows_pending_add(s->pending, j->key, bytes, n, plan)))
        later = false;
      rc = store_plan(j, plan, resp, bytes, n, later, &err);
    }
    if (!old && !rc) {
      stored = true;
      if (!resp->provisional) {
        sp_store_plan mine = {.plan = bytes, .plan_len = n, .status = sp_rpc_status_word(resp)};
        snprintf(mine.key, sizeof mine.key, "%s", j->key);
        sp__plan_remember(s, j->raw, j->req.detail, &mine);
      }
    }
    pthread_mutex_unlock(&j->keep_mu);
    if (!stored) {
      sp_rows_pending_end(s->pending, pending);
      pending = NULL;
    }
    /* A plan the cache does not keep is not acknowledged: its key would lead nowhere, and the
     * next rank of the same job could get a different plan (a deadline-cut search is not
     * repeatable). The callers get the cache's error and may retry. */
    if (rc) snprintf(msg, sizeof msg, "the plan could not be stored: %s", err.msg);
  }
  t_stored = sp_clock_now();
  if (take) ws = take(j);
  if (rc) answer_error(s, ws, j->key, rc == SP_ENOMEM && !stored ? SP_RPC_RESOURCE_EXHAUSTED
                                                                  : sp__svc_status_of(rc), msg);
  else if (old) answer_waiters(j, ws, old, NULL, old_bytes, old_n, "(kept the better stored plan)");
  else answer_waiters(j, ws, resp, plan, NULL, 0, sp_rpc_status_word(resp));
  if (answered_ms) *answered_ms = sp_clock_now_ms();
  double t_sent = sp_clock_now();
  sp__svc_debug(s, "answer key=%.16s (%lld ops): built in %.0f ms, stored in %.0f ms%s, sent in "
                "%.0f ms", j->key, (long long)j->nops, (t_built - t0) * 1e3,
                (t_stored - t_built) * 1e3, pending ? " (rows after)" : "",
                (t_sent - t_stored) * 1e3);
  if (pending) {
    if (sp_test_hook_rows_pending) sp_test_hook_rows_pending(j->key);
    if (store_details(j, plan, bytes, n, &err))
      sp__svc_log(s, NULL, "Plan", j->key, "details", SP_RPC_INTERNAL, err.msg);
    sp_rows_pending_end(s->pending, pending);
    sp__svc_debug(s, "answer key=%.16s: detail rows stored %.0f ms after the answer", j->key,
                  (sp_clock_now() - t_sent) * 1e3);
  }
  if (old) shardplan__v1__plan_response__free_unpacked(old, NULL);
  free(old_bytes);
  free(bytes);
  sp_arena_free(a);
  return stored;
}

/* ------------------------------------------------------------------ snapshots */

/* A snapshot on its way to the waiters it is for. */
typedef struct answerer {
  sp_job *job;
  waiter *due;
  sp_plan *plan;               /* NULL: it could not be built, see err */
  sp_err err;
  double search_s, time_limit;
  int64_t asked_ms;            /* when the engine was asked for it (sp_clock_now_ms) */
  int64_t served_ms;           /* when the engine handed it out */
} answerer;

static void *answer_snapshot(void *arg) {
  answerer *x = arg;
  sp_job *j = x->job;
  sp_service *s = j->svc;
  int64_t done = 0;
  if (x->plan) answer_plan(j, x->plan, x->search_s, x->time_limit, NULL, x->due, true, &done);
  else answer_error(s, x->due, j->key, sp__svc_status_of(x->err.code), x->err.msg);
  if (!done) done = sp_clock_now_ms();
  sp__svc_debug(s, "snapshot key=%.16s for %s: handed out %lld ms after its time, answered "
                "%lld ms after that", j->key, x->plan ? "a plan" : "an error",
                (long long)(x->served_ms - x->asked_ms), (long long)(done - x->served_ms));
  note_answer_time(s, (double)(done - x->asked_ms), j->nops);
  sp_plan_free(x->plan);
  free(x);
  job_release(j);
  return NULL;
}

/* The engine's snapshot (plan.h: on_snapshot), on the search's thread: the waiters whose end
 * has come are taken out and answered from it on a thread of their own, so that the search
 * goes on at once; the engine's snapshot time moves to the next end. */
static void on_snapshot(void *ctx, sp_plan *plan, const sp_err *err) {
  sp_job *j = ctx;
  sp_service *s = j->svc;
  int64_t now = sp_clock_now_ms();
  answerer *x = calloc(1, sizeof *x);
  pthread_mutex_lock(&s->mu);
  long long asked_us = atomic_load(&j->snapshot_at_us);
  waiter *due = take_waiters(j, false, now + DUE_SLACK_MS);
  if (due) j->refs++;
  pthread_mutex_unlock(&s->mu);
  if (!due || !x) {
    sp_plan_free(plan);
    free(x);
    if (due)   /* out of memory: those due get the error here */
      answer_error(s, due, j->key, SP_RPC_RESOURCE_EXHAUSTED, "out of memory");
    if (due) job_release(j);
    return;
  }
  x->job = j;
  x->due = due;
  x->plan = plan;
  if (err) x->err = *err;
  else sp_err_clear(&x->err);
  if (!plan && !err) sp_err_set(&x->err, SP_EINTERNAL, "no plan");
  x->search_s = sp_clock_now() - j->run_start;
  x->time_limit = j->req.popts.time_limit;   /* read here: a search run again rewrites it */
  x->asked_ms = asked_us > 0 ? (int64_t)(asked_us / 1000) : now;
  x->served_ms = now;
  pthread_attr_t attr;
  pthread_t t;
  bool started = pthread_attr_init(&attr) == 0;
  if (started) {
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &attr, answer_snapshot, x) == 0;
    pthread_attr_destroy(&attr);
  }
  if (!started) answer_snapshot(x);   /* no thread to spare: answered here, the search waits */
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
    if (w->stream) sp__plan_progress(w->call, p->stage ? p->stage : "", p, p->seconds);
  pthread_mutex_unlock(&s->mu);
}

/* The graph again, unplanned, for a search run again (sp_plan_run transforms the module it
 * plans): read from the request bytes as the first one was. */
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

/* The engine's options for job j's search, warm-started from `seed`. */
static void search_options(sp_job *j, int *seed, int nseed) {
  sp_plan_options *o = &j->req.popts;
  double used = sp_clock_now() - j->run_start;
  o->time_limit = j->time_limit > used ? j->time_limit - used : 0;
  o->deadline = 0;
  o->moving_deadline_us = &j->deadline_us;
  o->snapshot_at_us = &j->snapshot_at_us;
  o->on_snapshot = on_snapshot;
  o->snapshot_ctx = j;
  o->cancel = &j->cancel;
  o->progress = on_progress;
  o->progress_ctx = j;
  o->incumbent = seed;
  o->nincumbent = nseed;
  j->last_progress_ms = sp_clock_now_ms();
  j->sent_incumbent = false;
}

/* The gRPC status and message (into msg) for a search of job j that failed with rc. */
static int run_failure(sp_job *j, int rc, const sp_err *err, char *msg, size_t cap) {
  sp_service *s = j->svc;
  bool down = s->draining;
  int status = down ? SP_RPC_UNAVAILABLE
               : atomic_load(&j->cancel) ? SP_RPC_CANCELLED
               : rc == SP_ENOTFOUND ? SP_RPC_FAILED_PRECONDITION
               : rc == SP_ETIMEOUT ? SP_RPC_DEADLINE_EXCEEDED
                                    : sp__svc_status_of(rc);
  snprintf(msg, cap, "%s%s", down ? "the server is shutting down; retry on another instance or "
           "after it restarts: " : rc == SP_ENOTFOUND ? "no valid plan: " : "", err->msg);
  return status;
}

static waiter *take_all(sp_job *j) { return take_waiters_locked(j, true, 0); }

/* The search failed with rc: its waiters get the error, except when its deadline passed
 * before propagation finished while some waiter's end is still to come (it joined meanwhile):
 * then those due get DEADLINE_EXCEEDED and true says to run the search again. */
static bool search_failed(sp_job *j, int rc, const sp_err *err) {
  sp_service *s = j->svc;
  char msg[SP_ERR_MSG_MAX + 256];
  int status = run_failure(j, rc, err, msg, sizeof msg);
  if (status == SP_RPC_DEADLINE_EXCEEDED) {
    /* The caller's own deadline may still be ahead: its end came first, by the margin. */
    char why[sizeof msg];
    snprintf(why, sizeof why, "%.*s", SP_ERR_MSG_MAX, msg);
    snprintf(msg, sizeof msg, "no plan could be answered by the deadline: %.*s (a plan of "
             "this %lld-op module takes about %lld ms to build, store and send after the "
             "search)", SP_ERR_MSG_MAX, why, (long long)j->nops,
             (long long)answer_margin_ms(s, j->nops));
  }
  bool again = false;
  waiter *ws;
  pthread_mutex_lock(&s->mu);
  if (status == SP_RPC_DEADLINE_EXCEEDED) {
    ws = take_waiters(j, false, sp_clock_now_ms() + DUE_SLACK_MS);
    again = j->waiters != NULL;
  } else {
    ws = take_waiters(j, true, 0);
  }
  pthread_mutex_unlock(&s->mu);
  answer_error(s, ws, j->key, status, msg);
  return again;
}

/* One search for job j (see the top comment). */
static void run_job(void *arg) {
  sp_job *j = arg;
  sp_service *s = j->svc;
  int *seed = NULL, nseed = 0;
  sp_plan *plan = NULL;
  sp_err err;
  sp_err_clear(&err);

  pthread_mutex_lock(&s->mu);
  bool stop = s->draining || atomic_load(&j->cancel);
  pthread_mutex_unlock(&s->mu);
  if (stop) {
    answer_error(s, take_all(j), j->key, s->draining ? SP_RPC_UNAVAILABLE : SP_RPC_CANCELLED,
                 s->draining ? "the server is shutting down; retry on another instance or "
                               "after it restarts" : "cancelled");
    goto done;
  }
  atomic_fetch_add(&s->searches, 1);
  stored_choice(s, j->key, &seed, &nseed);
  j->run_start = sp_clock_now();
  for (bool first = true;; first = false) {
    int rc = first ? SP_OK : fresh_module(j, &err);
    if (!rc) {
      search_options(j, seed, nseed);
      sp_plan_input in = {.module = j->req.module, .filename = j->req.module->filename};
      rc = sp_plan_run(&in, j->req.search ? j->req.cluster : NULL, &j->req.popts, &plan, &err);
    }
    if (!rc) break;
    if (!search_failed(j, rc, &err)) goto done;
  }
  double search_s = sp_clock_now() - j->run_start;
  /* Cut by its deadline: how long the answer took after it tells the answer margin. */
  long long deadline_us = atomic_load(&j->deadline_us);
  double cut_at = plan->searched && !strcmp(plan->solver.status, "timeout") && deadline_us > 1
                      ? (double)deadline_us / 1e6 : 0;
  /* Cut by a deadline, its callers are near theirs: the detail rows after the answer. */
  bool cut = plan->searched && !strcmp(plan->solver.status, "timeout");
  bool stored = answer_plan(j, plan, search_s, j->req.popts.time_limit, take_all, NULL, cut,
                            NULL);
  if (cut_at > 0 && !s->draining) note_answer_time(s, (sp_clock_now() - cut_at) * 1000.0, j->nops);
  if (s->obs.on_search) s->obs.on_search(s->obs.ctx, search_s);
  /* Everyone has the answer: now the provenance the dashboard's value pages show (seconds for
   * a large plan, so not on the answer path). A page opened before this is done traces the
   * plan itself (web.c); whichever finishes first stores the rows. */
  if (stored && sp_plan_rows_store_origins(s->store, j->key, plan, &err) != SP_OK &&
      err.code != SP_ENOTFOUND)
    sp__svc_log(s, NULL, "Plan", j->key, "provenance", SP_RPC_INTERNAL, err.msg);
done:
  free(seed);
  sp_plan_free(plan);
  job_release(j);
}

/* ------------------------------------------------------------------ joining and starting */

bool sp__job_join(sp_service *s, const char *key, waiter *w) {
  sp_job *j = s->jobs;
  while (j && (strcmp(j->key, key) != 0 || atomic_load(&j->cancel))) j = j->next;
  if (!j) return false;
  w->coalesced = true;
  w->next = j->waiters;
  j->waiters = w;
  retarget(j);   /* its end may come before the others' (a snapshot) or after (more search) */
  atomic_fetch_add(&s->coalesced, 1);
  if (w->stream) sp__plan_progress(w->call, "queued", NULL, 0);
  return true;
}

int sp__job_start(sp_service *s, sp_rpc_request *req, waiter *w, const uint8_t *buf,
                  size_t len, double asked, sp_job **unstarted) {
  *unstarted = NULL;
  sp_job *j = calloc(1, sizeof *j);
  if (!j) return SP_ENOMEM;
  pthread_mutex_init(&j->keep_mu, NULL);
  *unstarted = j;
  const char *modname = sp_op_get_str(req->module->op, "sym_name");
  j->module_name = strdup(modname ? modname
                          : req->msg->filename && *req->msg->filename ? req->msg->filename : "");
  j->request = malloc(len ? len : 1);
  if (!j->module_name || !j->request || sp_rpc_labels_read(req->module, &j->names, NULL))
    return SP_ENOMEM;
  if (len) memcpy(j->request, buf, len);
  j->svc = s;
  snprintf(j->key, sizeof j->key, "%s", req->key);
  snprintf(j->raw, sizeof j->raw, "%s", req->raw);
  j->request_len = len;
  j->time_limit = asked;
  j->nops = sp_module_num_ops(req->module);
  j->refs = 1;
  j->req = *req;    /* the job owns the request from here */
  memset(req, 0, sizeof *req);
  j->req.popts.search_options = j->req.search_options;
  j->waiters = w;
  retarget(j);
  int rc = sp_pool_submit(s->pool, run_job, j);
  if (rc) {
    j->waiters = NULL;
    return rc;
  }
  *unstarted = NULL;
  j->next = s->jobs;
  s->jobs = j;
  s->njobs++;
  atomic_fetch_add(&s->misses, 1);
  if (s->obs.on_cache) s->obs.on_cache(s->obs.ctx, false);
  if (w->stream) sp__plan_progress(w->call, "queued", NULL, 0);
  return SP_OK;
}

void sp_service_drain(sp_service *s) {
  pthread_mutex_lock(&s->mu);
  s->draining = true;
  /* Stopped as by a deadline: each search hands its best plan to its waiters. */
  for (sp_job *j = s->jobs; j; j = j->next) retarget(j);
  while (s->njobs > 0) pthread_cond_wait(&s->idle, &s->mu);
  pthread_mutex_unlock(&s->mu);
}
