/*
 * test_daemon_faults.c - the daemon's plan cache under injected faults, through the daemon:
 * the test build shardpland-faults (store/faults_hook.c) runs its SQLite over the failing VFS
 * and allocator of store/faults.h, armed through a Unix socket while the daemon serves.
 *
 * For each N (0, 1, 2, ... then growing steps, until the N-th call is beyond what the request
 * makes), the N-th SQLite allocation, read or write of one request fails:
 *   planning (the hit lookups, then the put after the search): the answer is the plan, stored
 *     and retrievable by its key, or an error status whose message names the cache ("the plan
 *     could not be stored: ...") when the put failed; never a crash, a hang, a different plan
 *     or a key that leads nowhere;
 *   reading (GetPlan, ListPlans, a Plan answered from the cache, a dashboard rows page): the
 *     right answer or an error status (HTTP 5xx) with a message naming the cache;
 * and after each, Health answers SERVING. A full disk is both the shim's SQLITE_FULL on every
 * write and a real RLIMIT_FSIZE (EFBIG). At the end every plan committed before or during the
 * faults reads back the same, PRAGMA integrity_check says "ok", and a plain shardpland opened
 * on the same folder (its own integrity check at start) serves them.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "shardplan/v1/planner.pb-c.h"
#include "store/faults.h"
#include "test_support.h"

enum { OK = 0, INVALID = 3 };

#define PLAN "/shardplan.v1.Planner/Plan"
#define GET "/shardplan.v1.Planner/GetPlan"
#define LIST "/shardplan.v1.Planner/ListPlans"
#define CALL_MS 30000     /* a call slower than this is a hang */

/* ---------------------------------------------------------------- the daemon and its hook */

static th_daemon g_d;
static th_channel *g_ch;
static int g_ctl = -1;
static char g_sock[100];

static void start(void) {
  char dir[] = "/tmp/sp-daemon-faults-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(g_sock, sizeof g_sock, "%s/faults.sock", dir);
  static char env[340];
  snprintf(env, sizeof env, "SHARDPLAN_TEST_FAULTS=%s", g_sock);
  const char *envs[] = {env, NULL};
  const char *extra[] = {"--http-listen", "127.0.0.1:0", "--max-searches", "1",
                         "--log-level", "warn", NULL};
  ck_assert(th_daemon_start_prog(&g_d, SP_FAULTS_DAEMON, dir, extra, envs));
  ck_assert(g_d.http_addr[0]);
  g_ch = th_connect(g_d.addr, NULL);
  g_ctl = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", g_sock);
  ck_assert_int_eq(connect(g_ctl, (struct sockaddr *)&a, sizeof a), 0);
}

/* Sends a control line, returns the number in "ok N" (0 for a bare "ok"). */
static long long ctl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static long long ctl(const char *fmt, ...) {
  char line[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  strcat(line, "\n");
  ck_assert_int_eq(write(g_ctl, line, strlen(line)), (ssize_t)strlen(line));
  char reply[128];
  size_t n = 0;
  while (n < sizeof reply - 1) {
    ssize_t r = read(g_ctl, reply + n, 1);
    ck_assert_int_eq(r, 1);
    if (reply[n++] == '\n') break;
  }
  reply[n] = '\0';
  ck_assert_msg(strncmp(reply, "ok", 2) == 0, "fault control \"%s\": %s", line, reply);
  return atoll(reply + 2);
}

static void serving(const char *after) {
  double ms;
  ck_assert_msg(th_health_serving(g_ch, &ms), "Health after %s", after);
}

/* ---------------------------------------------------------------- requests */

/* Model i: a distinct small graph (its own key); big ones have more rows to store. */
static char *model(int i, int layers) {
  size_t cap = 4096 + (size_t)layers * 256;
  char *t = malloc(cap);
  int w = 16 + 2 * i;
  int n = snprintf(t, cap,
                   "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                   "func.func @main(%%arg0: tensor<8x%dxf32> {sdy.sharding = "
                   "#sdy.sharding<@mesh, [{\"x\"}, {}]>}) -> tensor<8x%dxf32> {\n"
                   "  %%v0 = stablehlo.add %%arg0, %%arg0 : tensor<8x%dxf32>\n",
                   w, w, w);
  for (int l = 1; l < layers; l++)
    n += snprintf(t + n, cap - (size_t)n,
                  "  %%v%d = stablehlo.multiply %%v%d, %%arg0 : tensor<8x%dxf32>\n", l, l - 1, w);
  snprintf(t + n, cap - (size_t)n, "  return %%v%d : tensor<8x%dxf32>\n}\n", layers - 1, w);
  return t;
}

static uint8_t *plan_request(const char *mlir, const char *filename, size_t *len) {
  Shardplan__V1__PlanRequest r = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions o = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  r.mlir = (char *)mlir;
  o.mode = SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH;
  o.time_limit_seconds = 10;
  r.options = &o;
  r.filename = (char *)filename;
  *len = shardplan__v1__plan_request__get_packed_size(&r);
  uint8_t *b = malloc(*len + 1);
  shardplan__v1__plan_request__pack(&r, b);
  return b;
}

/* The packed Plan message of a response (what must not change), malloc'd. */
static uint8_t *plan_bytes(const Shardplan__V1__PlanResponse *p, size_t *len) {
  ck_assert_ptr_nonnull(p->plan);
  *len = shardplan__v1__plan__get_packed_size(p->plan);
  uint8_t *b = malloc(*len + 1);
  shardplan__v1__plan__pack(p->plan, b);
  return b;
}

typedef struct planned {
  char key[65];
  uint8_t *plan;    /* packed Plan */
  size_t len;
} planned;

static planned g_committed[512];
static int g_ncommitted;

static void commit(const char *key, const Shardplan__V1__PlanResponse *p) {
  ck_assert_int_lt(g_ncommitted, 512);
  planned *c = &g_committed[g_ncommitted++];
  snprintf(c->key, sizeof c->key, "%s", key);
  c->plan = plan_bytes(p, &c->len);
}

/* The put after a search failed: the call's error says the plan was not stored. */
static bool is_store_error(const th_result *r) {
  return r->status != OK && r->details && strstr(r->details, "the plan could not be stored: ");
}

/* Plans `mlir` with no fault armed and returns the response (unpacked). */
static Shardplan__V1__PlanResponse *plan_clean(const char *mlir, const char *filename) {
  size_t len;
  uint8_t *b = plan_request(mlir, filename, &len);
  th_result r = th_call(g_ch, PLAN, b, len, CALL_MS, NULL);
  free(b);
  ck_assert_msg(r.status == OK, "status %d: %s", r.status, r.details);
  Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(p->n_warnings, 0);
  th_result_free(&r);
  return p;
}

/* GetPlan of `key`: the response, or NULL with *status set. */
static Shardplan__V1__PlanResponse *get_plan(const char *key, int *status, char **details) {
  Shardplan__V1__GetPlanRequest g = SHARDPLAN__V1__GET_PLAN_REQUEST__INIT;
  g.key = (char *)key;
  uint8_t buf[256];
  size_t len = shardplan__v1__get_plan_request__pack(&g, buf);
  th_result r = th_call(g_ch, GET, buf, len, CALL_MS, NULL);
  *status = r.status;
  Shardplan__V1__PlanResponse *p =
      r.status == OK ? shardplan__v1__plan_response__unpack(NULL, r.len, r.msg) : NULL;
  if (details) *details = strdup(r.details ? r.details : "");
  th_result_free(&r);
  return p;
}

/* Plans models first .. first + n - 1 without faults; each is committed. */
static void commit_models(int first, int n, const char *filename) {
  for (int i = first; i < first + n; i++) {
    char *m = model(i, 3);
    Shardplan__V1__PlanResponse *p = plan_clean(m, filename);
    commit(p->key, p);
    shardplan__v1__plan_response__free_unpacked(p, NULL);
    free(m);
  }
}

static void check_committed(void) {
  for (int i = 0; i < g_ncommitted; i++) {
    int st;
    char *details;
    Shardplan__V1__PlanResponse *p = get_plan(g_committed[i].key, &st, &details);
    ck_assert_msg(st == OK && p, "committed plan %s: status %d: %s", g_committed[i].key, st,
                  details);
    free(details);
    size_t len;
    uint8_t *b = plan_bytes(p, &len);
    ck_assert_msg(len == g_committed[i].len && memcmp(b, g_committed[i].plan, len) == 0,
                  "committed plan %s changed", g_committed[i].key);
    free(b);
    shardplan__v1__plan_response__free_unpacked(p, NULL);
  }
}

static void check_integrity(const char *db) {
  char said[256];
  ck_assert_msg(sp_faults_integrity_ok(db, said, sizeof said), "integrity_check: %s", said);
}

/* The daemon's cache file, checked while it serves (a second, read-only connection). */
static void check_live_integrity(void) {
  char db[320];
  snprintf(db, sizeof db, "%s/plans.db", g_d.data_dir);
  check_integrity(db);
}

/* Stops the faulty daemon, checks the file, and reopens the folder with the plain daemon:
 * every committed plan is there, unchanged. */
static void finish(void) {
  close(g_ctl);
  th_close(g_ch);
  char dir[256], db[320];
  snprintf(dir, sizeof dir, "%s", g_d.data_dir);
  snprintf(db, sizeof db, "%s/plans.db", dir);
  ck_assert_int_eq(th_daemon_stop(&g_d), 0);
  check_integrity(db);
  ck_assert(th_daemon_start(&g_d, dir, NULL));
  g_ch = th_connect(g_d.addr, NULL);
  check_committed();
  th_close(g_ch);
  ck_assert_int_eq(th_daemon_stop(&g_d), 0);
  for (int i = 0; i < g_ncommitted; i++) free(g_committed[i].plan);
  g_ncommitted = 0;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* The next N of a sweep: every N up to 24, then steps of about an eighth. */
static long long next_n(long long n) { return n < 24 ? n + 1 : n + n / 8; }

/* ---------------------------------------------------------------- planning */

/* One Plan of a new model with the fault armed at N. Returns whether the fault fired. */
static bool plan_under_fault(const char *kind, const char *flags, long long n, int model_i,
                             int *refused, int *errors) {
  char *mlir = model(model_i, 3);
  size_t len;
  uint8_t *b = plan_request(mlir, "faults.mlir", &len);
  long long before = ctl("fired");
  ctl("arm %s %lld%s", kind, n, flags);
  th_result r = th_call(g_ch, PLAN, b, len, CALL_MS, NULL);
  ctl("off");
  bool fired = ctl("fired") > before;
  char what[64];
  snprintf(what, sizeof what, "Plan with %s%s fault %lld", kind, flags, n);
  if (r.status == OK) {
    Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
    ck_assert_msg(p && p->plan && strlen(p->key) == 64, "%s: not a plan", what);
    ck_assert_int_eq(p->status, SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL);
    ck_assert_uint_eq(p->n_warnings, 0);
    /* Acknowledged (the fault hit a lookup only, or nothing): it must now be in the cache. */
    commit(p->key, p);
    shardplan__v1__plan_response__free_unpacked(p, NULL);
  } else {
    if (is_store_error(&r)) (*refused)++;
    (*errors)++;
    ck_assert_msg(fired, "%s: status %d without a fault: %s", what, r.status, r.details);
    ck_assert_msg(r.details && *r.details, "%s: status %d without a message", what, r.status);
    ck_assert_msg(r.status != 4 /* DEADLINE_EXCEEDED */, "%s: hung", what);
  }
  th_result_free(&r);
  free(b);
  free(mlir);
  serving(what);
  return fired;
}

START_TEST(test_plan_puts_under_faults_answer_an_error_and_keep_committed_plans) {
  start();
  commit_models(0, 3, "clean.mlir");
  int model_i = 10;
  const char *kinds[] = {"malloc", "write", "write", "read"};
  const char *flags[] = {"", "", " full", ""};
  for (int k = 0; k < 4; k++) {
    int refused = 0, errors = 0, sweeps = 0;
    for (long long n = 0;; n = next_n(n), sweeps++) {
      ck_assert_msg(sweeps < 200, "%s faults still firing at N=%lld", kinds[k], n);
      if (!plan_under_fault(kinds[k], flags[k], n, model_i++, &refused, &errors)) break;
    }
    fprintf(stderr, "Plan, %s%s faults: %d sweeps, %d not stored, %d errors\n", kinds[k],
            flags[k], sweeps, refused, errors);
    /* The faults hit the put: some answers said the plan was not stored. */
    if (strcmp(kinds[k], "read") != 0)
      ck_assert_msg(refused > 0, "%s%s: no put failed", kinds[k], flags[k]);
    check_committed();
    check_live_integrity();
  }
  finish();
}
END_TEST

/* ---------------------------------------------------------------- full disk */

static long long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

START_TEST(test_full_disk_refuses_puts_keeps_reads_and_recovers) {
  start();
  commit_models(0, 3, "clean.mlir");
  char db[320], wal[330];
  snprintf(db, sizeof db, "%s/plans.db", g_d.data_dir);
  snprintf(wal, sizeof wal, "%s-wal", db);
  /* A real limit: no file of the daemon grows past the cache's present size (EFBIG). */
  long long limit = file_size(db) > file_size(wal) ? file_size(db) : file_size(wal);
  ctl("fsize %lld", limit + 4096);
  int refused = 0;
  for (int i = 0; i < 40 && refused < 3; i++) {
    char *m = model(100 + i, 60);
    size_t len;
    uint8_t *b = plan_request(m, "big.mlir", &len);
    th_result r = th_call(g_ch, PLAN, b, len, CALL_MS, NULL);
    if (r.status == OK) {
      Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
      ck_assert_ptr_nonnull(p);
      commit(p->key, p);
      shardplan__v1__plan_response__free_unpacked(p, NULL);
    } else {
      ck_assert_msg(is_store_error(&r), "Plan on a full disk: status %d: %s", r.status,
                    r.details);
      refused++;
    }
    th_result_free(&r);
    free(b);
    free(m);
    serving("a Plan on a full disk");
    check_committed();   /* reads still work */
  }
  check_live_integrity();
  ck_assert_msg(refused > 0, "no put failed past RLIMIT_FSIZE");
  /* The shim's full disk: every write fails with SQLITE_FULL. */
  ctl("fsize 0");
  ctl("arm write 0 persist full");
  {
    char *m = model(200, 3);
    size_t len;
    uint8_t *b = plan_request(m, "full.mlir", &len);
    th_result r = th_call(g_ch, PLAN, b, len, CALL_MS, NULL);
    ck_assert_msg(is_store_error(&r), "Plan on the shim's full disk: status %d: %s", r.status,
                  r.details);
    ck_assert_msg(strstr(r.details, "the disk is full"), "the error does not say the disk is "
                  "full: %s", r.details);
    th_result_free(&r);
    free(b);
    free(m);
  }
  check_committed();
  ctl("off");
  /* Space again: the next plan is stored. */
  commit_models(201, 1, "after.mlir");
  serving("the disk freed");
  finish();
}
END_TEST

/* ---------------------------------------------------------------- reading */

static int http_get(const char *path, char *body, size_t cap) {
  char *resp;
  int status = th_http_get(g_d.http_addr, path, &resp);
  ck_assert_msg(status > 0, "GET %s: no HTTP answer", path);
  snprintf(body, cap, "%s", resp);
  free(resp);
  return status;
}

enum { OP_GET, OP_LIST, OP_HIT, OP_ROWS, NOPS };
static const char *const op_names[NOPS] = {"GetPlan", "ListPlans", "Plan (cache hit)",
                                           "dashboard rows"};

/* Reference answers taken without faults. */
static char *g_rows_ok;

/* One read with the fault armed at N; returns whether it fired, counts error answers. */
static bool read_under_fault(int op, const char *kind, long long n, const char *mlir,
                             int round, int *errors) {
  const planned *c = &g_committed[0];
  char what[96];
  snprintf(what, sizeof what, "%s with %s fault %lld", op_names[op], kind, n);
  long long before = ctl("fired");
  bool failed = false;
  char *details = NULL;
  if (op == OP_GET) {
    int st;
    ctl("arm %s %lld", kind, n);
    Shardplan__V1__PlanResponse *p = get_plan(c->key, &st, &details);
    ctl("off");
    if (st == OK) {
      size_t len;
      uint8_t *b = plan_bytes(p, &len);
      ck_assert_msg(len == c->len && memcmp(b, c->plan, len) == 0, "%s: a different plan", what);
      free(b);
      shardplan__v1__plan_response__free_unpacked(p, NULL);
    } else {
      failed = true;
    }
  } else if (op == OP_LIST) {
    Shardplan__V1__ListPlansRequest q = SHARDPLAN__V1__LIST_PLANS_REQUEST__INIT;
    q.page_size = 1000;
    uint8_t buf[64];
    size_t len = shardplan__v1__list_plans_request__pack(&q, buf);
    ctl("arm %s %lld", kind, n);
    th_result r = th_call(g_ch, LIST, buf, len, CALL_MS, NULL);
    ctl("off");
    if (r.status == OK) {
      /* Every committed plan, and nothing else (this suite stores no other plan). */
      Shardplan__V1__ListPlansResponse *got =
          shardplan__v1__list_plans_response__unpack(NULL, r.len, r.msg);
      ck_assert_msg(got && got->n_plans == (size_t)g_ncommitted, "%s: %zu plans listed, not %d",
                    what, got ? got->n_plans : 0, g_ncommitted);
      for (int i = 0; i < g_ncommitted; i++) {
        bool found = false;
        for (size_t j = 0; j < got->n_plans; j++)
          if (strcmp(got->plans[j]->key, g_committed[i].key) == 0) found = true;
        ck_assert_msg(found, "%s: plan %s not listed", what, g_committed[i].key);
      }
      shardplan__v1__list_plans_response__free_unpacked(got, NULL);
    } else {
      failed = true;
    }
    details = strdup(r.details ? r.details : "");
    th_result_free(&r);
  } else if (op == OP_HIT) {
    /* New request bytes for a stored graph (another file name): the key lookup, not the
     * in-memory cache of exact repeats. */
    char fname[64];
    snprintf(fname, sizeof fname, "hit-%s-%lld-%d.mlir", kind, n, round);
    size_t len;
    uint8_t *b = plan_request(mlir, fname, &len);
    ctl("arm %s %lld", kind, n);
    th_result r = th_call(g_ch, PLAN, b, len, CALL_MS, NULL);
    ctl("off");
    free(b);
    if (r.status == OK) {
      Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
      ck_assert_ptr_nonnull(p);
      ck_assert_str_eq(p->key, c->key);
      size_t pl;
      uint8_t *pb = plan_bytes(p, &pl);
      ck_assert_msg(pl == c->len && memcmp(pb, c->plan, pl) == 0, "%s: a different plan", what);
      free(pb);
      shardplan__v1__plan_response__free_unpacked(p, NULL);
    } else {
      failed = true;
    }
    details = strdup(r.details ? r.details : "");
    th_result_free(&r);
  } else {
    char path[160], body[1 << 16];
    snprintf(path, sizeof path, "/api/plans/%s/values", c->key);
    ctl("arm %s %lld", kind, n);
    int st = http_get(path, body, sizeof body);
    ctl("off");
    const char *payload = strstr(body, "\r\n\r\n");
    ck_assert_ptr_nonnull(payload);
    if (st == 200) {
      ck_assert_msg(strcmp(payload, g_rows_ok) == 0, "%s: different rows", what);
    } else {
      ck_assert_msg(st >= 500, "%s: HTTP %d", what, st);
      failed = true;
    }
    details = strdup(payload + 4);
  }
  bool fired = ctl("fired") > before;
  if (failed) {
    (*errors)++;
    ck_assert_msg(fired, "%s: an error without a fault: %s", what, details);
    ck_assert_msg(*details, "%s: an error without a message", what);
  }
  free(details);
  serving(what);
  return fired;
}

START_TEST(test_reads_under_faults_answer_right_or_with_an_error) {
  start();
  char *m0 = model(0, 3);
  commit_models(0, 3, "clean.mlir");
  char body[1 << 16], path[160];
  snprintf(path, sizeof path, "/api/plans/%s/values", g_committed[0].key);
  ck_assert_int_eq(http_get(path, body, sizeof body), 200);
  g_rows_ok = strdup(strstr(body, "\r\n\r\n"));
  const char *kinds[] = {"malloc", "read"};
  int round = 0;
  for (int op = 0; op < NOPS; op++) {
    int op_errors = 0;
    for (int k = 0; k < 2; k++) {
      int errors = 0, sweeps = 0;
      for (long long n = 0;; n = next_n(n), sweeps++, round++) {
        ck_assert_msg(sweeps < 200, "%s: %s faults still firing at N=%lld", op_names[op],
                      kinds[k], n);
        /* A commit by another connection first, so that the readers' page caches are
         * stale and the read goes to the file. */
        if (strcmp(kinds[k], "read") == 0) commit_models(1000 + round, 1, "between.mlir");
        if (!read_under_fault(op, kinds[k], n, m0, round, &errors)) break;
      }
      fprintf(stderr, "%s, %s faults: N = 0..%d sweeps, %d answered with an error\n",
              op_names[op], kinds[k], sweeps, errors);
      op_errors += errors;
      check_live_integrity();
    }
    /* The faults reached each read's error path (a Plan whose cache lookup fails is planned
     * again instead: the right answer, no error). */
    if (op != OP_HIT) ck_assert_msg(op_errors > 0, "%s: no fault gave an error", op_names[op]);
  }
  check_committed();
  free(g_rows_ok);
  free(m0);
  finish();
}
END_TEST

static Suite *daemon_faults_suite(void) {
  Suite *s = suite_create("daemon_faults");
  TCase *tc = tcase_create("faults");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_plan_puts_under_faults_answer_an_error_and_keep_committed_plans);
  tcase_add_test(tc, test_full_disk_refuses_puts_keeps_reads_and_recovers);
  tcase_add_test(tc, test_reads_under_faults_answer_right_or_with_an_error);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(daemon_faults_suite()); }
