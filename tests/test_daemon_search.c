/*
 * test_daemon_search.c - how the daemon runs searches, end to end against the real
 * build/bin/shardpland (support/daemon_harness.h): callers with different deadlines sharing
 * one search (each answered by its own deadline, the search running on for the later ones),
 * a re-search warm-started from the stored provisional plan (and the stored plan replaced only
 * by a better one), searches bounded by work so that the answer does not depend on the
 * machine's load, and the provenance rows added after the answer.
 *
 * Slow searches come from generated GPT models with mesh-shape search and no layer sharing;
 * the assertions are on what the daemon answers and reports (statuses, costs, GetStats, the
 * plan cache), and on the order in which callers are answered, not on speed.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "daemon_requests.h"
#include "ir/clock.h"
#include "store/store.h"
#include "store_support.h"
#include "test_support.h"

typedef struct timed_call {
  const char *addr;
  const uint8_t *req;
  size_t len;
  int timeout_ms;
  int start_after_ms;      /* after the test's t0 */
  double t0;
  th_result r;
  double answered_at;      /* seconds after t0 */
} timed_call;

static void *run_timed(void *arg) {
  timed_call *t = arg;
  usleep((useconds_t)t->start_after_ms * 1000);
  th_channel *c = th_connect(t->addr, NULL);
  t->r = th_call(c, TH_PLAN, t->req, t->len, t->timeout_ms, NULL);
  t->answered_at = sp_clock_now() - t->t0;
  th_close(c);
  return NULL;
}

static Shardplan__V1__PlanResponse *decode(const th_result *r) {
  ck_assert_msg(r->status == 0, "call failed: %d %s", r->status, r->details);
  Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r->len, r->msg);
  ck_assert_ptr_nonnull(p);
  return p;
}

/* ------------------------------------------------------------------ coalescing */

static int propagation_deadline_ms(const char *mlir) {
  th_daemon d;
  th_channel *c = th_daemon_open(&d, NULL);
  th_result raw;
  Shardplan__V1__PlanResponse *p = th_plan_ok(c, mlir, (req_opts){0}, &raw);
  int ms = raw.ms * 4 > 15000 ? (int)(raw.ms * 4) : 15000;
  printf("test_daemon_search: propagation alone took %.0f ms; the short deadline is %d ms\n",
         raw.ms, ms);
  th_result_free(&raw);
  shardplan__v1__plan_response__free_unpacked(p, NULL);
  th_daemon_close(&d, c);
  return ms;
}

/* Once the daemon has answered everyone: it ran one search and one caller joined it. */
static void assert_one_search_joined_once(th_channel *c) {
  int64_t run = -1, coal = -1;
  ck_assert_int_eq(th_wait_in_flight(c, 0, 10000, NULL, &run), 0);
  ck_assert(th_stats(c, NULL, NULL, &coal));
  ck_assert_int_eq(run, 1);
  ck_assert_int_eq(coal, 1);
}

START_TEST(a_short_caller_is_answered_at_its_deadline_while_a_longer_joiner_keeps_the_search_running) {
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, NULL));
  /* 24 layers: no time limit, so the search is bounded by work, which takes far longer than
   * the short deadline even on a machine twice as fast as ours (12 layers: 21 s of CPU here;
   * 8 layers reach optimal in a few seconds since partial sums made the problem easier). */
  char *gpt = th_gpt_text(24, true);
  req_opts o = {.search = true, .shape_auto = true, .no_share = true};
  /* The short deadline must leave room for propagation, which a sanitizer and a loaded machine
   * slow several-fold, and the daemon's margin (a fifth of it) must hold storing and sending
   * the plan on a loaded machine: it is 15 s or four times what propagation alone takes here
   * (timed on a daemon of its own, so this one counts a single search), whichever is longer.
   * The search, bounded by work, takes many times longer and runs on past it. */
  int short_ms = propagation_deadline_ms(gpt);
  size_t len;
  uint8_t *req = th_plan_request(gpt, o, &len);
  double t0 = sp_clock_now();
  timed_call a = {d.addr, req, len, short_ms, 0, t0, {0}, 0};
  timed_call b = {d.addr, req, len, short_ms + 15000, 700, t0, {0}, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, run_timed, &a);
  pthread_create(&tb, NULL, run_timed, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  if (a.r.status || b.r.status) {
    printf("short: %d %s at %.2f s; joiner: %d %s at %.2f s; the daemon's log:\n", a.r.status,
           a.r.details, a.answered_at, b.r.status, b.r.details, b.answered_at);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cat %s", d.log_path);
    if (system(cmd)) {}
  }
  Shardplan__V1__PlanResponse *pa = decode(&a.r), *pb = decode(&b.r);
  printf("test_daemon_search: short caller answered at %.2f s (%s, cost %.6f s/step), the joiner "
         "at %.2f s (%s, cost %.6f s/step)\n", a.answered_at, pa->provisional ? "provisional" :
         "final", pa->plan->costs->total_seconds, b.answered_at, pb->provisional ? "provisional"
         : "final", pb->plan->costs->total_seconds);
  /* The short caller got the plan found by its deadline, marked provisional. */
  ck_assert(pa->provisional);
  ck_assert(!pa->coalesced);
  ck_assert_msg(a.answered_at < short_ms / 1000.0, "short caller answered at %.2f s (deadline "
                "%d ms)", a.answered_at, short_ms);
  /* The joiner's answer came from the same search, which ran on past the short deadline. */
  ck_assert(pb->coalesced);
  ck_assert_str_eq(pa->key, pb->key);
  ck_assert_msg(b.answered_at > a.answered_at + 2.0, "the joiner was answered at %.2f s, the "
                "short caller at %.2f s: the search did not run on", b.answered_at,
                a.answered_at);
  ck_assert(pb->plan->costs->total_seconds <= pa->plan->costs->total_seconds);
  th_channel *c = th_connect(d.addr, NULL);
  assert_one_search_joined_once(c);
  th_close(c);
  /* The plans handed out near their deadlines were stored with their detail rows too (added
   * after the answer): the dashboard's value rows and the plan's JSON are there. */
  char path[400];
  snprintf(path, sizeof path, "%s/plans.db", d.data_dir);
  sp_store_options so = {.path = path, .skip_integrity_check = true};
  sp_store *st = sp_test_store_open(&so);
  sp_store_section_count *sec = NULL;
  size_t nsec = 0;
  sp_err err;
  ck_assert_int_eq(sp_store_sections(st, pa->key, &sec, &nsec, &err), SP_OK);
  int64_t plan_rows = 0, value_rows = 0;
  for (size_t i = 0; i < nsec; i++) {
    if (!strcmp(sec[i].name, "plan")) plan_rows = sec[i].rows;
    if (!strcmp(sec[i].name, "value")) value_rows = sec[i].rows;
  }
  free(sec);
  sp_store_close(st);
  ck_assert_int_eq(plan_rows, 1);
  ck_assert_int_gt(value_rows, 0);
  shardplan__v1__plan_response__free_unpacked(pa, NULL);
  shardplan__v1__plan_response__free_unpacked(pb, NULL);
  th_result_free(&a.r);
  th_result_free(&b.r);
  free(req);
  free(gpt);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

/* The daemon's CPU seconds so far (user + system, /proc/PID/stat): the work a search did,
 * whatever the machine's load. */
static double daemon_cpu_seconds(const th_daemon *d) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)d->pid);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');   /* fields after the command name, from field 3 on */
  ck_assert_ptr_nonnull(p);
  unsigned long long ut = 0, st = 0;
  int field = 2;
  for (const char *q = p + 1; *q && field < 15; q++) {
    if (*q != ' ') continue;
    field++;
    if (field == 14) ut = strtoull(q + 1, NULL, 10);
    if (field == 15) st = strtoull(q + 1, NULL, 10);
  }
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* A search bounded by work that takes seconds: an 8-layer GPT, every mesh shape. */
static char *seconds_long_search(uint8_t **req, size_t *len) {
  char *gpt = th_gpt_text(8, true);
  req_opts o = {.search = true, .shape_auto = true, .no_share = true};
  *req = th_plan_request(gpt, o, len);
  return gpt;
}

/* How long the search alone takes (a fresh daemon, one caller, no deadline), its CPU time
 * and its answer. */
static Shardplan__V1__PlanResponse *alone(const uint8_t *req, size_t len, double *wall,
                                         double *cpu) {
  th_daemon d;
  th_channel *c = th_daemon_open(&d, NULL);
  double cpu0 = daemon_cpu_seconds(&d), t0 = sp_clock_now();
  th_result r = th_call(c, TH_PLAN, req, len, 300000, NULL);
  *wall = sp_clock_now() - t0;
  *cpu = daemon_cpu_seconds(&d) - cpu0;
  Shardplan__V1__PlanResponse *p = decode(&r);
  ck_assert(!p->provisional);
  th_result_free(&r);
  th_daemon_close(&d, c);
  return p;
}

START_TEST(a_joiner_with_an_earlier_deadline_is_answered_by_it_from_the_running_search) {
  uint8_t *req;
  size_t len;
  char *gpt = seconds_long_search(&req, &len);
  double wall, cpu;
  Shardplan__V1__PlanResponse *solo = alone(req, len, &wall, &cpu);
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, NULL));
  /* The first caller has no deadline: the search runs to its end, bounded by work. A second
   * joins at a fifth of it with a deadline at three fifths: before the search ends. */
  int join_ms = (int)(wall * 200), deadline_ms = (int)(wall * 400) + 500;
  double t0 = sp_clock_now();
  timed_call a = {d.addr, req, len, 300000, 0, t0, {0}, 0};
  timed_call b = {d.addr, req, len, deadline_ms, join_ms, t0, {0}, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, run_timed, &a);
  pthread_create(&tb, NULL, run_timed, &b);
  pthread_join(tb, NULL);
  pthread_join(ta, NULL);
  Shardplan__V1__PlanResponse *pa = decode(&a.r), *pb = decode(&b.r);
  printf("test_daemon_search: alone %.2f s; with a joiner at %.2f s whose deadline is %.2f s "
         "later: the joiner answered at %.2f s (%s, %.6f s/step), the first caller at %.2f s "
         "(%s, %.6f s/step)\n", wall, join_ms / 1e3, deadline_ms / 1e3, b.answered_at,
         pb->provisional ? "provisional" : "final", pb->plan->costs->total_seconds,
         a.answered_at, pa->provisional ? "provisional" : "final",
         pa->plan->costs->total_seconds);
  /* The joiner: from the same search, by its deadline, cut short. */
  ck_assert(pb->coalesced);
  ck_assert(pb->provisional);
  ck_assert_msg(b.answered_at < (join_ms + deadline_ms) / 1e3, "answered at %.2f s",
                b.answered_at);
  /* The first caller: the search's own end, as if alone. */
  ck_assert(!pa->coalesced);
  ck_assert(!pa->provisional);
  ck_assert(pa->plan->costs->total_seconds <= pb->plan->costs->total_seconds);
  th_assert_same_plan(pa, solo);
  th_channel *c = th_connect(d.addr, NULL);
  assert_one_search_joined_once(c);
  th_close(c);
  shardplan__v1__plan_response__free_unpacked(pa, NULL);
  shardplan__v1__plan_response__free_unpacked(pb, NULL);
  shardplan__v1__plan_response__free_unpacked(solo, NULL);
  th_result_free(&a.r);
  th_result_free(&b.r);
  free(req);
  free(gpt);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

START_TEST(a_short_and_a_long_caller_share_one_search_and_the_long_one_is_not_delayed) {
  uint8_t *req;
  size_t len;
  char *gpt = seconds_long_search(&req, &len);
  double wall, cpu;
  Shardplan__V1__PlanResponse *solo = alone(req, len, &wall, &cpu);
  /* The short caller starts the search with a deadline at half of it; the long one (no
   * deadline) joins as soon as the search is in flight. */
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, NULL));
  th_channel *c = th_connect(d.addr, NULL);
  double cpu0 = daemon_cpu_seconds(&d), t0 = sp_clock_now();
  int short_ms = (int)(wall * 500) + 500;
  timed_call a = {d.addr, req, len, short_ms, 0, t0, {0}, 0};
  timed_call b = {d.addr, req, len, 300000, 0, t0, {0}, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, run_timed, &a);
  ck_assert_int_eq(th_wait_in_flight(c, 1, 10000, NULL, NULL), 1);
  pthread_create(&tb, NULL, run_timed, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  double shared_cpu = daemon_cpu_seconds(&d) - cpu0;
  Shardplan__V1__PlanResponse *pa = decode(&a.r), *pb = decode(&b.r);
  printf("test_daemon_search: alone %.2f s (%.2f s CPU); shared: the short caller (deadline "
         "%.2f s) answered at %.2f s (%s), the long one at %.2f s (%s%s); %.2f s CPU in all\n",
         wall, cpu, short_ms / 1e3, a.answered_at, pa->provisional ? "provisional" : "final",
         b.answered_at, pb->provisional ? "provisional" : "final",
         pb->coalesced ? ", coalesced" : "", shared_cpu);
  if (!pb->coalesced) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cat %s", d.log_path);
    if (system(cmd)) {}
  }
  ck_assert(pa->provisional);
  ck_assert(a.answered_at < short_ms / 1e3);
  ck_assert(pb->coalesced);
  ck_assert(!pb->provisional);
  /* One search, run to the long caller's end as if alone: the same plan, bytes and all, for
   * about the same work (the short caller's answer adds a copy of the plan, not a search);
   * the wall time, on this shared machine, only roughly. */
  th_assert_same_plan(pb, solo);
  ck_assert_msg(shared_cpu < cpu * 1.2 + 0.5, "%.2f s of CPU shared, %.2f s alone", shared_cpu,
                cpu);
  ck_assert_msg(b.answered_at < wall * 2 + 2, "%.2f s shared, %.2f s alone", b.answered_at,
                wall);
  assert_one_search_joined_once(c);
  th_close(c);
  shardplan__v1__plan_response__free_unpacked(pa, NULL);
  shardplan__v1__plan_response__free_unpacked(pb, NULL);
  shardplan__v1__plan_response__free_unpacked(solo, NULL);
  th_result_free(&a.r);
  th_result_free(&b.r);
  free(req);
  free(gpt);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

/* A PlanStream caller that notes when the first incumbent reached it. */
typedef struct first_plan {
  double t0;
  atomic_llong at_us;    /* 0 until then: microseconds after t0 */
} first_plan;

static void note_first_plan(void *ctx, const uint8_t *msg, size_t len) {
  first_plan *f = ctx;
  Shardplan__V1__PlanEvent *e = shardplan__v1__plan_event__unpack(NULL, len, msg);
  if (e && e->event_case == SHARDPLAN__V1__PLAN_EVENT__EVENT_PROGRESS &&
      e->progress->incumbent > 0 && atomic_load(&f->at_us) == 0)
    atomic_store(&f->at_us, (long long)((sp_clock_now() - f->t0) * 1e6));
  if (e) shardplan__v1__plan_event__free_unpacked(e, NULL);
}

typedef struct streamed {
  const char *addr;
  const uint8_t *req;
  size_t len;
  first_plan first;
  th_result r;
} streamed;

static void *run_streamed(void *arg) {
  streamed *s = arg;
  th_channel *c = th_connect(s->addr, NULL);
  s->r = th_call_watch(c, TH_PLAN_STREAM, s->req, s->len, 300000, note_first_plan, &s->first);
  th_close(c);
  return NULL;
}

START_TEST(a_caller_whose_deadline_passes_before_any_plan_fails_alone_and_the_later_one_is_answered) {
  th_daemon d;
  ck_assert(th_daemon_start(&d, NULL, NULL));
  /* A search whose first plan takes a while: a 96-layer GPT (forward, 8,161 ops). */
  char *gpt = th_gpt_text(96, false);
  req_opts o = {.search = true};
  size_t len;
  uint8_t *req = th_plan_request(gpt, o, &len);
  streamed l = {.addr = d.addr, .req = req, .len = len, .first = {.t0 = sp_clock_now()}};
  pthread_t tl;
  pthread_create(&tl, NULL, run_streamed, &l);
  th_channel *c = th_connect(d.addr, NULL);
  ck_assert_int_eq(th_wait_in_flight(c, 1, 30000, NULL, NULL), 1);
  /* A second caller joins while the search propagates, with a deadline of 300 ms. */
  double sent = sp_clock_now() - l.first.t0;
  th_result s = th_call(c, TH_PLAN, req, len, 300, NULL);
  pthread_join(tl, NULL);
  double first = (double)atomic_load(&l.first.at_us) / 1e6;
  printf("test_daemon_search: the short caller sent at %.2f s got %d (%s); the search's first "
         "plan at %.2f s; the long caller got %d\n", sent, s.status, s.details, first,
         l.r.status);
  /* No plan existed by the short caller's deadline: DEADLINE_EXCEEDED, for it alone. */
  ck_assert_msg(first > sent + 0.3, "the first plan came at %.2f s, before the short deadline "
                "(%.2f s): make the model larger", first, sent + 0.3);
  ck_assert_int_eq(s.status, 4);
  ck_assert_msg(l.r.status == 0, "%d %s", l.r.status, l.r.details);
  Shardplan__V1__PlanEvent *last = shardplan__v1__plan_event__unpack(NULL, l.r.len, l.r.msg);
  ck_assert(last && last->event_case == SHARDPLAN__V1__PLAN_EVENT__EVENT_PLAN);
  ck_assert(!last->plan->provisional);
  assert_one_search_joined_once(c);
  th_close(c);
  shardplan__v1__plan_event__free_unpacked(last, NULL);
  th_result_free(&s);
  th_result_free(&l.r);
  free(req);
  free(gpt);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

/* ------------------------------------------------------------------ warm start */

/* The first progress event of a PlanStream answer that carries an incumbent; NULL if none. */
static Shardplan__V1__Progress *first_incumbent(const th_result *r, Shardplan__V1__PlanEvent **ev) {
  for (int i = 0; i < r->nmsgs; i++) {
    Shardplan__V1__PlanEvent *e = shardplan__v1__plan_event__unpack(NULL, r->lens[i], r->msgs[i]);
    if (e && e->event_case == SHARDPLAN__V1__PLAN_EVENT__EVENT_PROGRESS &&
        e->progress->incumbent > 0) {
      *ev = e;
      return e->progress;
    }
    if (e) shardplan__v1__plan_event__free_unpacked(e, NULL);
  }
  return NULL;
}

static uint8_t *get_plan(th_channel *c, const char *key, size_t *n) {
  Shardplan__V1__GetPlanRequest g = SHARDPLAN__V1__GET_PLAN_REQUEST__INIT;
  g.key = (char *)key;
  uint8_t buf[128];
  size_t bn = shardplan__v1__get_plan_request__pack(&g, buf);
  th_result r = th_call(c, "/shardplan.v1.Planner/GetPlan", buf, bn, 10000, NULL);
  Shardplan__V1__PlanResponse *p = decode(&r);
  *n = shardplan__v1__plan__get_packed_size(p->plan);
  uint8_t *b = malloc(*n + 1);
  shardplan__v1__plan__pack(p->plan, b);
  shardplan__v1__plan_response__free_unpacked(p, NULL);
  th_result_free(&r);
  return b;
}

static uint8_t *plan_field(const Shardplan__V1__PlanResponse *p, size_t *n) {
  *n = shardplan__v1__plan__get_packed_size(p->plan);
  uint8_t *b = malloc(*n + 1);
  shardplan__v1__plan__pack(p->plan, b);
  return b;
}

START_TEST(a_re_search_starts_from_the_stored_provisional_plan_and_replaces_it_only_when_better) {
  th_daemon d;
  th_channel *c = th_daemon_open(&d, NULL);
  char *gpt = th_gpt_text(8, true);
  /* One search (mesh and placement as given), cut short. */
  req_opts quick = {.search = true, .no_share = true, .placement_given = true};
  Shardplan__V1__PlanResponse *p1 = th_plan_cut_short(c, gpt, &quick);
  ck_assert_msg(p1->provisional, "status %d", p1->status);
  double c1 = p1->plan->solver->objective;
  /* More time than the first search had: searched again, from the stored plan. */
  req_opts more = quick;
  /* (clearly more than the first search took, so the stored plan does not answer it) */
  more.time_limit = p1->search_seconds * 1.5 + 1.0;
  size_t len;
  uint8_t *req = th_plan_request(gpt, more, &len);
  th_result r2 = th_call(c, TH_PLAN_STREAM, req, len, 60000, NULL);
  ck_assert_msg(r2.status == 0, "%s", r2.details);
  Shardplan__V1__PlanEvent *ev = NULL;
  Shardplan__V1__Progress *first = first_incumbent(&r2, &ev);
  ck_assert_ptr_nonnull(first);
  printf("test_daemon_search: stored provisional cost %.0f; the re-search's first incumbent %.0f "
         "(%s)\n", c1, first->incumbent, first->message);
  ck_assert_str_eq(first->message, "warm start");
  ck_assert(first->incumbent <= c1);
  Shardplan__V1__PlanEvent *last = shardplan__v1__plan_event__unpack(NULL, r2.len, r2.msg);
  ck_assert(last && last->event_case == SHARDPLAN__V1__PLAN_EVENT__EVENT_PLAN);
  Shardplan__V1__PlanResponse *p2 = last->plan;
  ck_assert(!p2->cache_hit);
  double c2 = p2->plan->solver->objective;
  ck_assert(c2 <= c1);
  /* The stored plan is the better of the two: the new one when it is cheaper or proven
   * optimal, else the first one, byte for byte. */
  bool better = c2 < c1 || p2->status == SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL;
  size_t ns, nw;
  uint8_t *stored = get_plan(c, p1->key, &ns);
  uint8_t *want = plan_field(better ? p2 : p1, &nw);
  ck_assert_uint_eq(ns, nw);
  ck_assert_mem_eq(stored, want, ns);
  printf("test_daemon_search: the re-search's cost %.0f (%s): the stored plan is %s\n", c2,
         p2->provisional ? "provisional" : "final", better ? "replaced" : "kept");
  free(stored);
  free(want);
  /* All the time it needs: final, no worse, and it replaces the stored plan. */
  req_opts full = quick;
  full.time_limit = 60;
  Shardplan__V1__PlanResponse *p3 = th_plan_ok(c, gpt, full, NULL);
  ck_assert(!p3->provisional);
  ck_assert(p3->plan->solver->objective <= c2);
  stored = get_plan(c, p1->key, &ns);
  want = plan_field(p3, &nw);
  ck_assert_uint_eq(ns, nw);
  ck_assert_mem_eq(stored, want, ns);
  free(stored);
  free(want);
  shardplan__v1__plan_response__free_unpacked(p3, NULL);
  shardplan__v1__plan_event__free_unpacked(last, NULL);
  shardplan__v1__plan_event__free_unpacked(ev, NULL);
  th_result_free(&r2);
  free(req);
  shardplan__v1__plan_response__free_unpacked(p1, NULL);
  free(gpt);
  th_daemon_close(&d, c);
}
END_TEST

/* ------------------------------------------------------------------ work limits */

static atomic_int burning;

static void *burn(void *arg) {
  (void)arg;
  volatile uint64_t x = 1;
  while (atomic_load(&burning)) x = x * 6364136223846793005ULL + 1;
  return NULL;
}

START_TEST(the_same_request_gives_the_same_plan_bytes_on_fresh_folders_under_different_load) {
  char *gpt = th_gpt_text(4, true);
  /* No time limit and no deadline: the daemon's default, bounded by work. */
  req_opts o = {.search = true, .shape_auto = true, .no_share = true};
  Shardplan__V1__PlanResponse *got[2];
  pthread_t burners[3];
  for (int k = 0; k < 2; k++) {
    if (k == 1) {   /* the second plan competes with three busy threads for the cores */
      atomic_store(&burning, 1);
      for (int i = 0; i < 3; i++) pthread_create(&burners[i], NULL, burn, NULL);
    }
    th_daemon d;
    th_channel *c = th_daemon_open(&d, NULL);
    th_result raw;
    got[k] = th_plan_ok(c, gpt, o, &raw);
    printf("test_daemon_search: %s: planned in %.0f ms (%s)\n", k ? "under load" : "idle",
           raw.ms, got[k]->plan->solver->status);
    th_result_free(&raw);
    th_daemon_close(&d, c);
    if (k == 1) {
      atomic_store(&burning, 0);
      for (int i = 0; i < 3; i++) pthread_join(burners[i], NULL);
    }
    /* No wall-clock limit was set, and nothing cut the search short. */
    ck_assert(!got[k]->provisional);
    ck_assert(got[k]->time_limit_seconds == 0);
  }
  ck_assert_str_eq(got[0]->key, got[1]->key);
  th_assert_same_plan(got[0], got[1]);
  for (int k = 0; k < 2; k++) shardplan__v1__plan_response__free_unpacked(got[k], NULL);
  free(gpt);
}
END_TEST

/* ------------------------------------------------------------------ provenance */

START_TEST(provenance_rows_are_added_after_the_answer) {
  th_daemon d;
  th_channel *c = th_daemon_open(&d, NULL);
  char *mlp = th_mlp_text();
  req_opts o = {.search = true};
  Shardplan__V1__PlanResponse *p = th_plan_ok(c, mlp, o, NULL);
  ck_assert_int_eq(th_wait_in_flight(c, 0, 10000, NULL, NULL), 0);
  /* The plan cache as the dashboard reads it: the value rows were stored before the answer,
   * without origins; the origins came after, one row per value. */
  char path[400];
  snprintf(path, sizeof path, "%s/plans.db", d.data_dir);
  sp_store_options so = {.path = path, .skip_integrity_check = true};
  sp_store *st = sp_test_store_open(&so);
  sp_err err;
  sp_store_row_page values = {0}, origins = {0};
  sp_store_row_query qv = {.section = "value", .limit = 1000};
  sp_store_row_query qo = {.section = "origin", .limit = 1000};
  ck_assert_int_eq(sp_store_rows(st, p->key, &qv, &values, &err), SP_OK);
  ck_assert_int_eq(sp_store_rows(st, p->key, &qo, &origins, &err), SP_OK);
  ck_assert_uint_eq(values.n, p->plan->n_values);
  ck_assert_uint_eq(origins.n, values.n);
  int traced = 0;
  for (size_t i = 0; i < values.n; i++) {
    ck_assert_ptr_null(strstr(values.rows[i].json, "\"origins\""));
    ck_assert_int_eq(origins.rows[i].idx, values.rows[i].idx);
    traced += strstr(origins.rows[i].json, "user annotation") != NULL;
  }
  ck_assert_int_gt(traced, 0);
  sp_store_row_page_free(&values);
  sp_store_row_page_free(&origins);
  sp_store_close(st);
  shardplan__v1__plan_response__free_unpacked(p, NULL);
  free(mlp);
  th_daemon_close(&d, c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("daemon_search");
  TCase *tc = tcase_create("searches");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, a_short_caller_is_answered_at_its_deadline_while_a_longer_joiner_keeps_the_search_running);
  tcase_add_test(tc, a_joiner_with_an_earlier_deadline_is_answered_by_it_from_the_running_search);
  tcase_add_test(tc, a_short_and_a_long_caller_share_one_search_and_the_long_one_is_not_delayed);
  tcase_add_test(tc, a_caller_whose_deadline_passes_before_any_plan_fails_alone_and_the_later_one_is_answered);
  tcase_add_test(tc, a_re_search_starts_from_the_stored_provisional_plan_and_replaces_it_only_when_better);
  tcase_add_test(tc, the_same_request_gives_the_same_plan_bytes_on_fresh_folders_under_different_load);
  tcase_add_test(tc, provenance_rows_are_added_after_the_answer);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
