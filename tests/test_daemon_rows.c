/*
 * test_daemon_rows.c - a plan answered before its detail rows are stored (a snapshot, or a
 * plan cut short by its caller's time), end to end against the daemon's test build
 * shardpland-faults, whose hold on detail rows (tests/support/rows_hold_hook.c: the rows wait
 * while a file exists) keeps that window open for as long as the test needs, whatever the
 * machine's speed:
 *   - in the window, a DETAIL_FULL Plan for the key is a cache hit answered in full (no
 *     second search), GetPlan with full detail answers the plan, the dashboard's pages say the
 *     rows are being written and reload, its API rows answer 503 with Retry-After;
 *   - afterwards the same calls answer from the stored rows, with the same plan;
 *   - a plan whose rows never came (the daemon killed in the window) is answered by GetPlan
 *     with FAILED_PRECONDITION saying why, and a DETAIL_FULL Plan searches it again, which
 *     writes them.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "daemon_requests.h"
#include "store/store.h"
#include "store_support.h"
#include "test_support.h"

#define GET_PLAN "/shardplan.v1.Planner/GetPlan"

typedef struct held {
  th_daemon d;
  th_channel *c;
  char dir[64], hold[128], reached[160];
} held;

/* The test build with the hold on detail rows at dir/hold, its dashboard on. */
static void start_held(held *h) {
  snprintf(h->dir, sizeof h->dir, "/tmp/sp-daemon-rows-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(h->dir));
  snprintf(h->hold, sizeof h->hold, "%s/hold", h->dir);
  snprintf(h->reached, sizeof h->reached, "%s/hold.reached", h->dir);
  static char env[200];
  snprintf(env, sizeof env, "SHARDPLAN_TEST_ROWS_HOLD=%s", h->hold);
  const char *envs[] = {env, NULL};
  const char *extra[] = {"--http-listen", "127.0.0.1:0", NULL};
  ck_assert(th_daemon_start_prog(&h->d, SP_FAULTS_DAEMON, h->dir, extra, envs));
  ck_assert(h->d.http_addr[0]);
  h->c = th_connect(h->d.addr, NULL);
}

static void hold_rows(held *h) {
  FILE *f = fopen(h->hold, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
}

static void release_rows(held *h) { ck_assert_int_eq(unlink(h->hold), 0); }

/* Waits (60 s at most) until the hold has a plan's rows back: the window is open. */
static void wait_reached(held *h, const char *key) {
  for (int waited = 0; access(h->reached, F_OK) != 0 && waited < 60000; waited += 10)
    usleep(10000);
  size_t n;
  char *got = sp_test_read_file(h->reached, &n);
  ck_assert_msg(got, "the plan's rows were not held: it was not answered before them");
  ck_assert_msg(strncmp(got, key, 64) == 0, "held %s, not %s", got, key);
  free(got);
}

/* The number of rows of `section` of plan `key` in the daemon's plan cache (read beside it). */
static int64_t section_rows(const th_daemon *d, const char *key, const char *section) {
  char path[400];
  snprintf(path, sizeof path, "%s/plans.db", d->data_dir);
  sp_store_options so = {.path = path, .skip_integrity_check = true};
  sp_store *st = sp_test_store_open(&so);
  sp_store_section_count *sec = NULL;
  size_t n = 0;
  sp_err err;
  ck_assert_int_eq(sp_store_sections(st, key, &sec, &n, &err), SP_OK);
  int64_t rows = 0;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(sec[i].name, section)) rows = sec[i].rows;
  free(sec);
  sp_store_close(st);
  return rows;
}

/* A daemon holding plan rows back, and a Plan of an 8-layer GPT whose answer is cut short by
 * its time limit (th_plan_cut_short: doubled from 50 ms while no plan came back), so answered
 * before its rows are stored: the answer, once the daemon holds its rows. The limit used is
 * left in o->time_limit; *gpt is the module's text (the caller frees it). */
static Shardplan__V1__PlanResponse *plan_held_back(held *h, char **gpt, req_opts *o) {
  start_held(h);
  *gpt = th_gpt_text(8, true);
  *o = (req_opts){.search = true, .shape_auto = true, .no_share = true};
  hold_rows(h);
  Shardplan__V1__PlanResponse *p = th_plan_cut_short(h->c, *gpt, o);
  ck_assert_msg(p->provisional, "the search finished within %.2f s: not cut short",
                o->time_limit);
  wait_reached(h, p->key);
  return p;
}

/* A DETAIL_FULL answer: its status, and the decoded response (NULL unless OK). */
static Shardplan__V1__PlanResponse *call_full(th_channel *c, const char *method,
                                             const uint8_t *req, size_t len, th_result *r) {
  *r = th_call(c, method, req, len, 60000, NULL);
  if (r->status != 0) return NULL;
  Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r->len, r->msg);
  ck_assert_ptr_nonnull(p);
  return p;
}

static uint8_t *get_plan_request(const char *key, size_t *len) {
  Shardplan__V1__GetPlanRequest g = SHARDPLAN__V1__GET_PLAN_REQUEST__INIT;
  g.key = (char *)key;
  g.detail = SHARDPLAN__V1__DETAIL__DETAIL_FULL;
  *len = shardplan__v1__get_plan_request__get_packed_size(&g);
  uint8_t *b = malloc(*len + 1);
  shardplan__v1__get_plan_request__pack(&g, b);
  return b;
}

/* The full detail of an answer: the module text, the plan JSON and the factor tables. */
static void assert_full(const Shardplan__V1__PlanResponse *p, const char *what) {
  ck_assert_msg(p->plan && p->plan->module_sdy && strstr(p->plan->module_sdy, "sdy.mesh"),
                "%s: no module text", what);
  ck_assert_msg(p->plan->json && strlen(p->plan->json) > 100, "%s: no plan JSON", what);
  ck_assert_msg(p->plan->n_factor_tables > 0, "%s: no factor tables", what);
}

static void assert_same_full(const Shardplan__V1__PlanResponse *a,
                             const Shardplan__V1__PlanResponse *b) {
  ck_assert_str_eq(a->plan->module_sdy, b->plan->module_sdy);
  ck_assert_str_eq(a->plan->json, b->plan->json);
  ck_assert_uint_eq(a->plan->n_factor_tables, b->plan->n_factor_tables);
  for (size_t i = 0; i < a->plan->n_factor_tables; i++)
    ck_assert_str_eq(a->plan->factor_tables[i]->json, b->plan->factor_tables[i]->json);
  th_assert_same_plan(a, b);
}

static int http(const held *h, const char *fmt, const char *key, char **resp) {
  char path[256];
  snprintf(path, sizeof path, fmt, key);
  int st = th_http_get(h->d.http_addr, path, resp);
  ck_assert_msg(st > 0, "GET %s: no answer", path);
  return st;
}

START_TEST(a_plan_answered_before_its_rows_are_stored_is_served_in_full_meanwhile) {
  held h;
  char *gpt;
  req_opts o;
  Shardplan__V1__PlanResponse *p = plan_held_back(&h, &gpt, &o);
  int64_t run0 = -1;
  ck_assert(th_stats(h.c, &run0, NULL, NULL));
  /* The window is open: the plan is stored, its JSON row is not. */
  ck_assert_int_eq(section_rows(&h.d, p->key, "plan"), 0);

  /* A DETAIL_FULL Plan of the same request: a hit, in full, from the plan in memory. */
  req_opts full = o;
  full.full = true;
  size_t len, glen;
  uint8_t *req = th_plan_request(gpt, full, &len);
  th_result r;
  Shardplan__V1__PlanResponse *in_plan = call_full(h.c, TH_PLAN, req, len, &r);
  ck_assert_msg(in_plan, "Plan (full) in the window: %d %s", r.status, r.details);
  ck_assert(in_plan->cache_hit);
  assert_full(in_plan, "Plan (full) in the window");
  th_result_free(&r);
  /* GetPlan with full detail: the same. */
  uint8_t *greq = get_plan_request(p->key, &glen);
  Shardplan__V1__PlanResponse *in_get = call_full(h.c, GET_PLAN, greq, glen, &r);
  ck_assert_msg(in_get, "GetPlan (full) in the window: %d %s", r.status, r.details);
  assert_full(in_get, "GetPlan (full) in the window");
  assert_same_full(in_plan, in_get);
  th_result_free(&r);
  /* The dashboard: every page of the plan says the rows are coming and reloads; the API's
   * record says so, its rows ask to come back. */
  char *resp;
  ck_assert_int_eq(http(&h, "/plans/%s", p->key, &resp), 200);
  ck_assert_msg(strstr(resp, "being written") && strstr(resp, "http-equiv=\"refresh\"") &&
                strstr(resp, "Retry-After: 1"), "%s", resp);
  ck_assert_msg(strstr(resp, "provisional"), "the page does not show the plan's status");
  free(resp);
  ck_assert_int_eq(http(&h, "/plans/%s/values/0", p->key, &resp), 200);
  ck_assert(strstr(resp, "being written") != NULL);
  free(resp);
  ck_assert_int_eq(http(&h, "/api/plans/%s", p->key, &resp), 200);
  ck_assert(strstr(resp, "\"rows_pending\":true") != NULL);
  free(resp);
  ck_assert_int_eq(http(&h, "/api/plans/%s/values", p->key, &resp), 503);
  ck_assert_msg(strstr(resp, "Retry-After: 1") && strstr(resp, "being written"), "%s", resp);
  free(resp);
  /* No second search; and all this happened in the window. */
  int64_t run1 = -1;
  ck_assert(th_stats(h.c, &run1, NULL, NULL));
  ck_assert_int_eq(run1, run0);
  ck_assert_int_eq(section_rows(&h.d, p->key, "plan"), 0);

  /* The rows go in; then everything answers from them, the same plan. */
  release_rows(&h);
  ck_assert_int_eq(th_wait_in_flight(h.c, 0, 60000, NULL, NULL), 0);
  ck_assert_int_eq(section_rows(&h.d, p->key, "plan"), 1);
  ck_assert_int_gt(section_rows(&h.d, p->key, "value"), 0);
  Shardplan__V1__PlanResponse *after_get = call_full(h.c, GET_PLAN, greq, glen, &r);
  ck_assert_msg(after_get, "GetPlan (full) after: %d %s", r.status, r.details);
  th_result_free(&r);
  assert_same_full(in_get, after_get);
  Shardplan__V1__PlanResponse *after_plan = call_full(h.c, TH_PLAN, req, len, &r);
  ck_assert_msg(after_plan, "Plan (full) after: %d %s", r.status, r.details);
  th_result_free(&r);
  ck_assert(after_plan->cache_hit);
  assert_same_full(in_plan, after_plan);
  ck_assert_int_eq(http(&h, "/plans/%s", p->key, &resp), 200);
  ck_assert_msg(!strstr(resp, "being written") && !strstr(resp, "http-equiv=\"refresh\"") &&
                strstr(resp, "Shardings"), "%s", resp);
  free(resp);
  ck_assert_int_eq(http(&h, "/api/plans/%s/values", p->key, &resp), 200);
  free(resp);
  ck_assert(th_stats(h.c, &run1, NULL, NULL));
  ck_assert_int_eq(run1, run0);
  printf("test_daemon_rows: a plan cut short at %.2f s answered in full from memory while its "
         "rows were held, then from the rows; %lld search(es)\n", o.time_limit,
         (long long)run1);

  shardplan__v1__plan_response__free_unpacked(after_plan, NULL);
  shardplan__v1__plan_response__free_unpacked(after_get, NULL);
  shardplan__v1__plan_response__free_unpacked(in_get, NULL);
  shardplan__v1__plan_response__free_unpacked(in_plan, NULL);
  shardplan__v1__plan_response__free_unpacked(p, NULL);
  free(greq);
  free(req);
  free(gpt);
  th_daemon_close(&h.d, h.c);
}
END_TEST

START_TEST(a_plan_whose_rows_never_came_is_refused_in_full_by_get_plan_and_searched_again_by_plan) {
  held h;
  char *gpt;
  req_opts o;
  Shardplan__V1__PlanResponse *p = plan_held_back(&h, &gpt, &o);
  /* Killed in the window: the plan is stored (acknowledged), its rows never will be. */
  th_close(h.c);
  kill(h.d.pid, SIGKILL);
  int status;
  waitpid(h.d.pid, &status, 0);
  th_daemon d;
  ck_assert(th_daemon_start(&d, h.dir, NULL));
  th_channel *c = th_connect(d.addr, NULL);
  ck_assert_int_eq(section_rows(&d, p->key, "plan"), 0);
  size_t glen, len;
  uint8_t *greq = get_plan_request(p->key, &glen);
  th_result r;
  ck_assert_ptr_null(call_full(c, GET_PLAN, greq, glen, &r));
  printf("test_daemon_rows: GetPlan (full) of a plan without its rows: %d %s\n", r.status,
         r.details);
  ck_assert_int_eq(r.status, 9);   /* FAILED_PRECONDITION, never INTERNAL */
  ck_assert(strstr(r.details, "without its detail rows") != NULL);
  th_result_free(&r);
  /* The summary is there as acknowledged. */
  Shardplan__V1__GetPlanRequest g = SHARDPLAN__V1__GET_PLAN_REQUEST__INIT;
  g.key = p->key;
  uint8_t sbuf[128];
  size_t sn = shardplan__v1__get_plan_request__pack(&g, sbuf);
  r = th_call(c, GET_PLAN, sbuf, sn, 10000, NULL);
  ck_assert_msg(r.status == 0, "%s", r.details);
  th_result_free(&r);
  /* A DETAIL_FULL Plan searches again (the one case a stored key does) and writes the rows. */
  req_opts full = o;
  full.full = true;
  uint8_t *req = th_plan_request(gpt, full, &len);
  Shardplan__V1__PlanResponse *again = call_full(c, TH_PLAN, req, len, &r);
  ck_assert_msg(again, "Plan (full): %d %s", r.status, r.details);
  th_result_free(&r);
  ck_assert(!again->cache_hit);
  assert_full(again, "Plan (full) again");
  int64_t run = -1;
  ck_assert_int_eq(th_wait_in_flight(c, 0, 60000, NULL, &run), 0);
  ck_assert_int_eq(run, 1);
  ck_assert_int_eq(section_rows(&d, p->key, "plan"), 1);
  Shardplan__V1__PlanResponse *got = call_full(c, GET_PLAN, greq, glen, &r);
  ck_assert_msg(got, "GetPlan (full) after: %d %s", r.status, r.details);
  th_result_free(&r);
  assert_full(got, "GetPlan (full) after");
  shardplan__v1__plan_response__free_unpacked(got, NULL);
  shardplan__v1__plan_response__free_unpacked(again, NULL);
  shardplan__v1__plan_response__free_unpacked(p, NULL);
  free(req);
  free(greq);
  free(gpt);
  unlink(h.hold);
  th_daemon_close(&d, c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("daemon_rows");
  TCase *tc = tcase_create("rows");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, a_plan_answered_before_its_rows_are_stored_is_served_in_full_meanwhile);
  tcase_add_test(tc, a_plan_whose_rows_never_came_is_refused_in_full_by_get_plan_and_searched_again_by_plan);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
