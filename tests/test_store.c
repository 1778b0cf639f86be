/*
 * test_store.c - the plan cache (store/store.h) on SQLite: put/get/list/delete/stats, row
 * paging, eviction under a size limit, purge by planner version, schema version and integrity
 * checks, WAL, use from many threads, and plans surviving kill -9 at random moments.
 *
 * Every test works in a fresh temporary folder (the checked fixture make_dir / remove_dir).
 * Plans are generated from a number, so any
 * stored plan can be checked field by field against what was put.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir/clock.h"
#include "ir/grow.h"
#include "store/store.h"
#include "store_support.h"
#include "test_support.h"

/* ---------------------------------------------------------------- fixtures */

static char g_dir[256];
static char g_db[300];

static void make_dir(void) {
  sp_test_temp_db("sp_store_test", g_dir, sizeof g_dir, g_db, sizeof g_db);
}

static void remove_dir(void) { sp_test_remove_temp_db(g_dir, g_db); }

static sp_store *open_store(int64_t max_bytes, int touch_batch) {
  sp_store_options o = {.path = g_db, .max_bytes = max_bytes, .touch_batch = touch_batch};
  return sp_test_store_open(&o);
}

static void key_of(int n, char out[SP_STORE_HASH_HEX + 1]) {
  snprintf(out, SP_STORE_HASH_HEX + 1, "%016llx%048x", (unsigned long long)n * 2654435761u,
           n);
}

static void raw_of(int n, char out[SP_STORE_HASH_HEX + 1]) {
  snprintf(out, SP_STORE_HASH_HEX + 1, "%048x%016llx", n,
           (unsigned long long)n * 40503u + 17);
}

/* A generated plan: number n, `blob` bytes of answer, `rows` rows in two sections. */
typedef struct gen_plan {
  sp_store_plan p;
  sp_store_row *rows;
  size_t n_rows;
  char *blob, *req;
  char status[32], version[32], module[32], mesh[64];
  char (*labels)[32];
  char (*jsons)[96];
} gen_plan;

static void gen(gen_plan *g, int n, size_t blob, size_t rows, const char *version) {
  memset(g, 0, sizeof *g);
  key_of(n, g->p.key);
  raw_of(n, g->p.raw_hash);
  snprintf(g->status, sizeof g->status, "%s", n % 3 ? "optimal" : "provisional");
  snprintf(g->version, sizeof g->version, "%s", version ? version : "0.1.0+test");
  snprintf(g->module, sizeof g->module, "module_%d", n);
  snprintf(g->mesh, sizeof g->mesh, "<[\"data\"=%d, \"model\"=2]>", 1 + n % 8);
  g->p.status = g->status;
  g->p.planner_version = g->version;
  g->p.module_name = g->module;
  g->p.mesh = g->mesh;
  g->p.gap = n % 3 ? NAN : 0.01 * (n % 7);
  g->p.total_cost = 1000.5 + n;
  g->blob = malloc(blob + 1);
  g->req = malloc(64);
  for (size_t i = 0; i < blob; i++) g->blob[i] = (char)((n * 31 + (int)i * 7) & 0xff);
  int rl = snprintf(g->req, 64, "request %d", n);
  g->p.plan = g->blob;
  g->p.plan_len = blob;
  g->p.request = g->req;
  g->p.request_len = (size_t)rl;
  g->n_rows = rows;
  g->rows = calloc(rows ? rows : 1, sizeof *g->rows);
  g->labels = calloc(rows ? rows : 1, sizeof *g->labels);
  g->jsons = calloc(rows ? rows : 1, sizeof *g->jsons);
  for (size_t i = 0; i < rows; i++) {
    bool op = i % 4 == 3;
    snprintf(g->labels[i], sizeof g->labels[i], op ? "op_%zu" : "%%arg%zu", i);
    snprintf(g->jsons[i], sizeof g->jsons[i], "{\"plan\":%d,\"row\":%zu}", n, i);
    g->rows[i] = (sp_store_row){op ? "op" : "value", (int64_t)i, g->labels[i], g->jsons[i]};
  }
}

static void gen_free(gen_plan *g) {
  free(g->blob);
  free(g->req);
  free(g->rows);
  free(g->labels);
  free(g->jsons);
}

static void put_gen(sp_store *s, int n, size_t blob, size_t rows) {
  gen_plan g;
  sp_err err;
  gen(&g, n, blob, rows, NULL);
  int rc = sp_store_put(s, &g.p, g.rows, g.n_rows, &err);
  ck_assert_msg(rc == SP_OK, "put %d: %s", n, err.msg);
  gen_free(&g);
}

/* Asserts that `got` is plan n as generated (with blobs when loaded). */
static void check_plan(const sp_store_plan *got, int n, size_t blob, size_t rows) {
  gen_plan g;
  gen(&g, n, blob, rows, NULL);
  ck_assert_str_eq(got->key, g.p.key);
  ck_assert_str_eq(got->raw_hash, g.p.raw_hash);
  ck_assert_str_eq(got->status, g.status);
  ck_assert_str_eq(got->planner_version, g.version);
  ck_assert_str_eq(got->module_name, g.module);
  ck_assert_str_eq(got->mesh, g.mesh);
  ck_assert(isnan(g.p.gap) ? isnan(got->gap) : got->gap == g.p.gap);
  ck_assert(got->total_cost == g.p.total_cost);
  ck_assert_int_eq(got->n_rows, (int64_t)rows);
  if (got->plan) {
    ck_assert_uint_eq(got->plan_len, blob);
    ck_assert(memcmp(got->plan, g.blob, blob) == 0);
  }
  if (got->request) {
    ck_assert_uint_eq(got->request_len, g.p.request_len);
    ck_assert(memcmp(got->request, g.req, g.p.request_len) == 0);
  }
  gen_free(&g);
}

static int64_t file_bytes(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* ---------------------------------------------------------------- basic operations */

START_TEST(test_put_then_get_returns_every_field_and_blob) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 7, 5000, 12);
  sp_store_plan got;
  sp_err err;
  char key[65];
  key_of(7, key);
  ck_assert_int_eq(sp_store_get(s, key, SP_STORE_WITH_PLAN | SP_STORE_WITH_REQUEST, &got, &err),
                   SP_OK);
  check_plan(&got, 7, 5000, 12);
  ck_assert_ptr_nonnull(got.plan);
  ck_assert_ptr_nonnull(got.request);
  ck_assert_int_eq(got.hits, 0);
  ck_assert(got.created_ms > 1600000000000LL);
  ck_assert(got.size_bytes > 5000);
  sp_store_plan_free(&got);
  /* Without flags: metadata only, no blobs. */
  ck_assert_int_eq(sp_store_get(s, key, 0, &got, &err), SP_OK);
  ck_assert_ptr_null(got.plan);
  ck_assert_ptr_null(got.request);
  check_plan(&got, 7, 5000, 12);
  sp_store_plan_free(&got);
  /* Upper-case keys name the same plan. */
  for (char *c = key; *c; c++)
    if (*c >= 'a' && *c <= 'f') *c = (char)(*c - 'a' + 'A');
  ck_assert_int_eq(sp_store_get(s, key, 0, &got, &err), SP_OK);
  sp_store_plan_free(&got);
  ck_assert_str_eq(sp_store_backend_name(s), "sqlite");
  sp_store_close(s);
}
END_TEST

START_TEST(test_missing_plan_is_not_found_and_counted_as_miss) {
  sp_store *s = open_store(0, 1);
  sp_store_plan got;
  sp_err err;
  char key[65];
  key_of(99, key);
  ck_assert_int_eq(sp_store_get(s, key, SP_STORE_COUNT_MISS, &got, &err), SP_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.msg, key));
  sp_store_plan_free(&got);
  ck_assert_int_eq(sp_store_delete(s, key, &err), SP_ENOTFOUND);
  sp_store_stats st;
  ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
  ck_assert_int_eq(st.misses, 1);
  ck_assert_int_eq(st.hits, 0);
  ck_assert_int_eq(st.plans, 0);
  sp_store_close(s);
}
END_TEST

START_TEST(test_raw_hash_finds_plan_and_aliases_add_more) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 3, 100, 2);
  char raw[65], other[65], key[65];
  raw_of(3, raw);
  raw_of(4, other);
  key_of(3, key);
  sp_store_plan got;
  sp_err err;
  ck_assert_int_eq(sp_store_get_by_raw(s, raw, SP_STORE_WITH_PLAN, &got, &err), SP_OK);
  check_plan(&got, 3, 100, 2);
  sp_store_plan_free(&got);
  ck_assert_int_eq(sp_store_get_by_raw(s, other, 0, &got, &err), SP_ENOTFOUND);
  ck_assert_int_eq(sp_store_add_raw_hash(s, other, key, &err), SP_OK);
  ck_assert_int_eq(sp_store_get_by_raw(s, other, 0, &got, &err), SP_OK);
  ck_assert_str_eq(got.key, key);
  sp_store_plan_free(&got);
  char nokey[65];
  key_of(5, nokey);
  ck_assert_int_eq(sp_store_add_raw_hash(s, other, nokey, &err), SP_ENOTFOUND);
  /* Deleting the plan drops both hashes. */
  ck_assert_int_eq(sp_store_delete(s, key, &err), SP_OK);
  ck_assert_int_eq(sp_store_get_by_raw(s, raw, 0, &got, &err), SP_ENOTFOUND);
  ck_assert_int_eq(sp_store_get_by_raw(s, other, 0, &got, &err), SP_ENOTFOUND);
  sp_store_close(s);
}
END_TEST

START_TEST(test_put_replaces_plan_and_keeps_hit_count) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 1, 300, 8);
  char key[65];
  key_of(1, key);
  sp_store_plan got;
  sp_err err;
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(sp_store_get(s, key, SP_STORE_COUNT_HIT, &got, &err), SP_OK);
    sp_store_plan_free(&got);
  }
  /* A better plan for the same key: other status, blob and rows. */
  gen_plan g;
  gen(&g, 1, 50, 3, NULL);
  g.p.status = "optimal";
  g.p.gap = NAN;
  ck_assert_int_eq(sp_store_put(s, &g.p, g.rows, g.n_rows, &err), SP_OK);
  ck_assert_int_eq(sp_store_get(s, key, SP_STORE_WITH_PLAN, &got, &err), SP_OK);
  ck_assert_str_eq(got.status, "optimal");
  ck_assert_uint_eq(got.plan_len, 50);
  ck_assert_int_eq(got.n_rows, 3);
  ck_assert_int_eq(got.hits, 3);
  sp_store_plan_free(&got);
  sp_store_row_page pg;
  sp_store_row_query q = {.section = "value"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_int_eq(pg.total, 3);   /* rows 0..2 of the new plan, none of the old 8 */
  sp_store_row_page_free(&pg);
  sp_store_stats st;
  ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
  ck_assert_int_eq(st.plans, 1);
  gen_free(&g);
  sp_store_close(s);
}
END_TEST

START_TEST(test_bad_arguments_are_refused_and_store_stays_usable) {
  sp_store *s = open_store(0, 1);
  gen_plan g;
  sp_err err;
  gen(&g, 2, 10, 4, NULL);
  sp_store_plan bad = g.p;
  snprintf(bad.key, sizeof bad.key, "xyz");
  ck_assert_int_eq(sp_store_put(s, &bad, g.rows, g.n_rows, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "hex"));
  bad = g.p;
  bad.status = NULL;
  ck_assert_int_eq(sp_store_put(s, &bad, g.rows, g.n_rows, &err), SP_EINVAL);
  bad = g.p;
  bad.planner_version = "";
  ck_assert_int_eq(sp_store_put(s, &bad, g.rows, g.n_rows, &err), SP_EINVAL);
  /* Two rows at the same (section, idx): the whole put is rolled back. */
  g.rows[2].idx = 0;
  ck_assert_int_eq(sp_store_put(s, &g.p, g.rows, g.n_rows, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "repeats"));
  sp_store_plan got;
  ck_assert_int_eq(sp_store_get(s, g.p.key, 0, &got, &err), SP_ENOTFOUND);
  g.rows[2].idx = 2;
  g.rows[1].section = "";
  ck_assert_int_eq(sp_store_put(s, &g.p, g.rows, g.n_rows, &err), SP_EINVAL);
  g.rows[1].section = "value";
  ck_assert_int_eq(sp_store_put(s, &g.p, g.rows, g.n_rows, &err), SP_OK);
  ck_assert_int_eq(sp_store_get(s, g.p.key, 0, &got, &err), SP_OK);
  sp_store_plan_free(&got);
  ck_assert_int_eq(sp_store_get(s, "12", 0, &got, &err), SP_EINVAL);
  gen_free(&g);
  sp_store_close(s);
}
END_TEST

START_TEST(test_list_pages_orders_and_filters_by_version) {
  sp_store *s = open_store(0, 1);
  for (int i = 0; i < 25; i++) put_gen(s, i, 10, 1);
  gen_plan g;
  sp_err err;
  gen(&g, 100, 10, 1, "0.0.9");
  ck_assert_int_eq(sp_store_put(s, &g.p, g.rows, g.n_rows, &err), SP_OK);
  gen_free(&g);
  /* Plan 5 used last: first in last-used order. */
  char key[65];
  key_of(5, key);
  sp_store_plan got;
  usleep(2000);
  ck_assert_int_eq(sp_store_get(s, key, SP_STORE_COUNT_HIT, &got, &err), SP_OK);
  sp_store_plan_free(&got);
  sp_store_plan_list l;
  sp_store_list_query q = {.limit = 10};
  ck_assert_int_eq(sp_store_list(s, &q, &l, &err), SP_OK);
  ck_assert_int_eq(l.total, 26);
  ck_assert_uint_eq(l.n, 10);
  ck_assert_str_eq(l.plans[0].key, key);
  ck_assert_int_eq(l.plans[0].hits, 1);
  ck_assert_ptr_null(l.plans[0].plan);
  sp_store_plan_list_free(&l);
  /* Key order, paged: every plan exactly once, in order. */
  char prev[65] = "";
  int seen = 0;
  for (int64_t off = 0;; off += 7) {
    q = (sp_store_list_query){.offset = off, .limit = 7, .order = SP_STORE_ORDER_KEY};
    ck_assert_int_eq(sp_store_list(s, &q, &l, &err), SP_OK);
    for (size_t i = 0; i < l.n; i++) {
      ck_assert(strcmp(prev, l.plans[i].key) < 0);
      memcpy(prev, l.plans[i].key, 65);
      seen++;
    }
    size_t n = l.n;
    sp_store_plan_list_free(&l);
    if (n < 7) break;
  }
  ck_assert_int_eq(seen, 26);
  q = (sp_store_list_query){.planner_version = "0.0.9"};
  ck_assert_int_eq(sp_store_list(s, &q, &l, &err), SP_OK);
  ck_assert_int_eq(l.total, 1);
  ck_assert_str_eq(l.plans[0].module_name, "module_100");
  sp_store_plan_list_free(&l);
  q = (sp_store_list_query){.offset = -1};
  ck_assert_int_eq(sp_store_list(s, &q, &l, &err), SP_EINVAL);
  sp_store_close(s);
}
END_TEST

START_TEST(test_rows_fetch_one_row_by_sparse_idx) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 4, 10, 40);   /* "op" rows sit at idx 3, 7, 11, ...: sparse */
  char key[65];
  key_of(4, key);
  sp_err err;
  sp_store_row_page pg;
  sp_store_row_query q = {.section = "op", .limit = 1, .idx_from = 11};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_uint_eq(pg.n, 1);
  ck_assert_int_eq(pg.rows[0].idx, 11);
  sp_store_row_page_free(&pg);
  /* an idx with no row gives the next one: the caller compares */
  q.idx_from = 12;
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_uint_eq(pg.n, 1);
  ck_assert_int_eq(pg.rows[0].idx, 15);
  ck_assert_int_eq(pg.total, 7);  /* 15, 19, ..., 39 */
  sp_store_row_page_free(&pg);
  q.idx_from = 40;
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_uint_eq(pg.n, 0);
  sp_store_row_page_free(&pg);
  /* without counting: the same row, total -1 */
  q.idx_from = 12;
  q.skip_total = true;
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_uint_eq(pg.n, 1);
  ck_assert_int_eq(pg.rows[0].idx, 15);
  ck_assert_int_eq(pg.total, -1);
  sp_store_row_page_free(&pg);
  sp_store_close(s);
}
END_TEST

START_TEST(test_rows_page_by_section_with_label_filter) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 4, 10, 40);   /* 30 "value" rows (%argN), 10 "op" rows (op_N) */
  char key[65];
  key_of(4, key);
  sp_err err;
  sp_store_row_page pg;
  sp_store_row_query q = {.section = "value", .offset = 5, .limit = 10};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_int_eq(pg.total, 30);
  ck_assert_uint_eq(pg.n, 10);
  /* value rows are those with i % 4 != 3: the 6th is i = 6. */
  ck_assert_int_eq(pg.rows[0].idx, 6);
  ck_assert_str_eq(pg.rows[0].label, "%arg6");
  ck_assert_str_eq(pg.rows[0].json, "{\"plan\":4,\"row\":6}");
  for (size_t i = 1; i < pg.n; i++) ck_assert(pg.rows[i].idx > pg.rows[i - 1].idx);
  sp_store_row_page_free(&pg);
  /* Filter: labels containing "arg1" (arg1, arg10, arg13, ... but not 11/15/19: op rows). */
  q = (sp_store_row_query){.section = "value", .label_contains = "ARG1"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  int expect = 0;
  for (int i = 0; i < 40; i++) {
    char l[16];
    snprintf(l, sizeof l, "%%arg%d", i);
    if (i % 4 != 3 && strstr(l, "arg1")) expect++;
  }
  ck_assert_int_eq(pg.total, expect);
  ck_assert_uint_eq(pg.n, (size_t)expect);
  sp_store_row_page_free(&pg);
  /* LIKE's wildcards are literal in a filter: "%" matches only labels containing '%'. */
  q = (sp_store_row_query){.section = "op", .label_contains = "%"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_int_eq(pg.total, 0);
  sp_store_row_page_free(&pg);
  q = (sp_store_row_query){.section = "op", .label_contains = "p_"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_int_eq(pg.total, 10);
  sp_store_row_page_free(&pg);
  q = (sp_store_row_query){.section = "conflict"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_int_eq(pg.total, 0);
  sp_store_row_page_free(&pg);
  sp_store_section_count *sec;
  size_t nsec;
  ck_assert_int_eq(sp_store_sections(s, key, &sec, &nsec, &err), SP_OK);
  ck_assert_uint_eq(nsec, 2);
  ck_assert_str_eq(sec[0].name, "op");
  ck_assert_int_eq(sec[0].rows, 10);
  ck_assert_str_eq(sec[1].name, "value");
  ck_assert_int_eq(sec[1].rows, 30);
  free(sec);
  char nokey[65];
  key_of(5, nokey);
  ck_assert_int_eq(sp_store_rows(s, nokey, &q, &pg, &err), SP_ENOTFOUND);
  sp_store_close(s);
}
END_TEST

START_TEST(test_stats_count_hits_in_batches_and_persist) {
  sp_store *s = open_store(0, 16);
  put_gen(s, 1, 1000, 5);
  put_gen(s, 2, 2000, 5);
  char key[65], nokey[65];
  key_of(1, key);
  key_of(9, nokey);
  sp_store_plan got;
  sp_err err;
  for (int i = 0; i < 40; i++) {
    ck_assert_int_eq(sp_store_get(s, key, SP_STORE_COUNT_HIT, &got, &err), SP_OK);
    ck_assert_int_eq(got.hits, i + 1);   /* pending hits are counted in */
    sp_store_plan_free(&got);
  }
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(sp_store_get(s, nokey, SP_STORE_COUNT_HIT | SP_STORE_COUNT_MISS, &got,
                                  &err), SP_ENOTFOUND);
  sp_store_stats st;
  ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
  ck_assert_int_eq(st.plans, 2);
  ck_assert_int_eq(st.hits, 40);
  ck_assert_int_eq(st.misses, 5);
  ck_assert(st.total_bytes > 3000);
  ck_assert(st.used_bytes > 0);
  ck_assert(st.file_bytes >= st.used_bytes / 2);
  sp_store_close(s);
  s = open_store(0, 16);   /* closing wrote the pending counts */
  ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
  ck_assert_int_eq(st.hits, 40);
  ck_assert_int_eq(st.misses, 5);
  ck_assert_int_eq(sp_store_get(s, key, 0, &got, &err), SP_OK);
  ck_assert_int_eq(got.hits, 40);
  sp_store_plan_free(&got);
  sp_store_close(s);
}
END_TEST

START_TEST(test_delete_removes_plan_and_rows) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 1, 10, 6);
  put_gen(s, 2, 10, 6);
  char key[65];
  key_of(1, key);
  sp_err err;
  ck_assert_int_eq(sp_store_delete(s, key, &err), SP_OK);
  sp_store_plan got;
  ck_assert_int_eq(sp_store_get(s, key, 0, &got, &err), SP_ENOTFOUND);
  sp_store_row_page pg;
  sp_store_row_query q = {.section = "value"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_ENOTFOUND);
  sp_store_stats st;
  ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
  ck_assert_int_eq(st.plans, 1);
  /* No orphan rows are left behind. */
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(g_db, &db), SQLITE_OK);
  sqlite3_stmt *stm;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM plan_rows", -1, &stm, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(stm), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_int(stm, 0), 6);
  sqlite3_finalize(stm);
  sqlite3_close(db);
  sp_store_close(s);
}
END_TEST

START_TEST(test_add_rows_adds_a_section_once_and_grows_the_plan) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 1, 10, 6);
  char key[65], missing[65];
  key_of(1, key);
  key_of(9, missing);
  sp_err err;
  sp_store_plan before = {0}, after = {0};
  ck_assert_int_eq(sp_store_get(s, key, 0, &before, &err), SP_OK);
  sp_store_row rows[3] = {{"origin", 0, "a", "[1]"}, {"origin", 1, "b", "[]"},
                          {"origin", 2, "c", "[2]"}};
  ck_assert_int_eq(sp_store_add_rows(s, key, rows, 3, &err), SP_OK);
  /* A second add of the section (another thread traced the plan too) changes nothing. */
  sp_store_row again[1] = {{"origin", 0, "z", "[\"other\"]"}};
  ck_assert_int_eq(sp_store_add_rows(s, key, again, 1, &err), SP_OK);
  sp_store_row_page pg = {0};
  sp_store_row_query q = {.section = "origin"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_int_eq(pg.n, 3);
  ck_assert_str_eq(pg.rows[0].json, "[1]");
  ck_assert_str_eq(pg.rows[2].label, "c");
  sp_store_row_page_free(&pg);
  ck_assert_int_eq(sp_store_get(s, key, 0, &after, &err), SP_OK);
  ck_assert_int_eq(after.n_rows, before.n_rows + 3);
  ck_assert_int_gt(after.size_bytes, before.size_bytes);
  /* Mixed sections, or a plan that is gone, are refused. */
  sp_store_row mixed[2] = {{"origin", 5, "", "[]"}, {"value", 5, "", "{}"}};
  ck_assert_int_eq(sp_store_add_rows(s, key, mixed, 2, &err), SP_EINVAL);
  ck_assert(strstr(err.msg, "share a section"));
  ck_assert_int_eq(sp_store_add_rows(s, missing, rows, 3, &err), SP_ENOTFOUND);
  sp_store_plan_free(&before);
  sp_store_plan_free(&after);
  sp_store_close(s);
}
END_TEST

/* ---------------------------------------------------------------- size, purge */

START_TEST(test_eviction_keeps_database_under_limit_lru_first) {
  const int64_t limit = 1 << 20;   /* 1 MiB */
  sp_store *s = open_store(limit, 1);
  char hot[65];
  key_of(0, hot);
  sp_store_plan got;
  sp_err err;
  sp_store_stats st;
  for (int i = 0; i < 60; i++) {
    put_gen(s, i, 40000, 20);   /* ~42 KB each: about 24 fit */
    ck_assert_int_eq(sp_store_get(s, hot, SP_STORE_COUNT_HIT, &got, &err), SP_OK);
    sp_store_plan_free(&got);
    ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
    ck_assert_msg(st.used_bytes <= limit, "after put %d: %lld bytes in use over %lld", i,
                  (long long)st.used_bytes, (long long)limit);
  }
  ck_assert(st.evictions > 0);
  ck_assert(st.plans < 60 && st.plans > 10);
  ck_assert_int_eq(st.max_bytes, limit);
  /* The plan used after every put survived; the oldest unused ones went first. */
  ck_assert_int_eq(sp_store_get(s, hot, 0, &got, &err), SP_OK);
  sp_store_plan_free(&got);
  char k[65];
  key_of(1, k);
  ck_assert_int_eq(sp_store_get(s, k, 0, &got, &err), SP_ENOTFOUND);
  key_of(59, k);
  ck_assert_int_eq(sp_store_get(s, k, SP_STORE_WITH_PLAN, &got, &err), SP_OK);
  check_plan(&got, 59, 40000, 20);
  sp_store_plan_free(&got);
  sp_store_close(s);
  /* The file itself (WAL checkpointed at close) is under the limit. */
  int64_t size = file_bytes(g_db);
  ck_assert_msg(size > 0 && size <= limit, "database file %lld bytes", (long long)size);
  /* A plan bigger than the limit on its own is refused, not stored. */
  s = open_store(limit, 1);
  gen_plan g;
  gen(&g, 500, (size_t)limit + 10, 1, NULL);
  ck_assert_int_eq(sp_store_put(s, &g.p, g.rows, g.n_rows, &err), SP_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "limit"));
  gen_free(&g);
  /* Explicit eviction to a smaller bound. */
  int64_t n = 0;
  ck_assert_int_eq(sp_store_evict(s, limit / 4, &n, &err), SP_OK);
  ck_assert(n > 0);
  ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
  ck_assert(st.used_bytes <= limit / 4);
  sp_store_close(s);
}
END_TEST

START_TEST(test_purge_drops_plans_of_other_planner_versions) {
  sp_store *s = open_store(0, 1);
  sp_err err;
  const char *versions[] = {"0.1.0+aaa", "0.1.0+bbb", "0.2.0+ccc"};
  for (int i = 0; i < 9; i++) {
    gen_plan g;
    gen(&g, i, 100, 3, versions[i % 3]);
    ck_assert_int_eq(sp_store_put(s, &g.p, g.rows, g.n_rows, &err), SP_OK);
    gen_free(&g);
  }
  int64_t n = 0;
  ck_assert_int_eq(sp_store_purge_version(s, "0.2.0+ccc", &n, &err), SP_OK);
  ck_assert_int_eq(n, 6);
  sp_store_plan_list l;
  ck_assert_int_eq(sp_store_list(s, NULL, &l, &err), SP_OK);
  ck_assert_uint_eq(l.n, 3);
  for (size_t i = 0; i < l.n; i++) ck_assert_str_eq(l.plans[i].planner_version, "0.2.0+ccc");
  sp_store_plan_list_free(&l);
  ck_assert_int_eq(sp_store_purge_version(s, "0.2.0+ccc", &n, &err), SP_OK);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(sp_store_purge_version(s, NULL, &n, &err), SP_EINVAL);
  ck_assert_int_eq(sp_store_purge_version(s, "", &n, &err), SP_OK);   /* "": every plan */
  ck_assert_int_eq(n, 3);
  ck_assert_int_eq(sp_store_list(s, NULL, &l, &err), SP_OK);
  ck_assert_uint_eq(l.n, 0);
  sp_store_plan_list_free(&l);
  sp_store_close(s);
}
END_TEST

/* ---------------------------------------------------------------- opening */

static void exec_raw(const char *sql) {
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(g_db, &db), SQLITE_OK);
  char *msg = NULL;
  ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK, "%s", msg ? msg : "");
  sqlite3_close(db);
}

static int open_expect_fail(sp_err *err) {
  sp_store_options o = {.path = g_db};
  sp_store *s = NULL;
  int rc = sp_store_open(&o, &s, err);
  ck_assert_ptr_null(s);
  return rc;
}

START_TEST(test_newer_schema_is_refused_with_message) {
  sp_store *s = open_store(0, 1);
  put_gen(s, 1, 10, 1);
  sp_store_close(s);
  exec_raw("PRAGMA user_version=2");
  sp_err err;
  ck_assert_int_eq(open_expect_fail(&err), SP_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(err.msg, "newer"));
  ck_assert_ptr_nonnull(strstr(err.msg, g_db));
  /* Back at this version it opens again, plan intact. */
  exec_raw("PRAGMA user_version=1");
  s = open_store(0, 1);
  sp_store_plan got;
  char key[65];
  key_of(1, key);
  ck_assert_int_eq(sp_store_get(s, key, 0, &got, &err), SP_OK);
  sp_store_plan_free(&got);
  sp_store_close(s);
}
END_TEST

START_TEST(test_foreign_and_non_database_files_are_refused) {
  exec_raw("CREATE TABLE t(x)");
  sp_err err;
  ck_assert_int_eq(open_expect_fail(&err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "not a shardplan plan cache"));
  unlink(g_db);
  FILE *f = fopen(g_db, "wb");
  for (int i = 0; i < 300; i++) fputs("this is not a database. ", f);
  fclose(f);
  ck_assert_int_eq(open_expect_fail(&err), SP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "not a SQLite database"));
  unlink(g_db);
  /* A folder that does not exist. */
  sp_store_options o = {.path = "/nonexistent-sp-dir/plans.db"};
  sp_store *s = NULL;
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-sp-dir/plans.db"));
  o.path = g_db;
  o.vfs = "no-such-vfs";
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "no-such-vfs"));
  o.vfs = NULL;
  o.backend = "lmdb";
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_EINVAL);
}
END_TEST

START_TEST(test_database_is_wal_and_opens_through_named_vfs) {
  sp_store_options o = {.path = g_db, .vfs = "unix"};
  sp_store *s = sp_test_store_open(&o);
  put_gen(s, 1, 10, 1);
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(g_db, &db), SQLITE_OK);
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_int(st, 0), SP_STORE_SCHEMA_VERSION);
  sqlite3_finalize(st);
  sqlite3_close(db);
  sp_store_close(s);
}
END_TEST

START_TEST(test_corrupt_database_fails_integrity_check_at_open) {
  sp_store *s = open_store(0, 1);
  for (int i = 0; i < 40; i++) put_gen(s, i, 3000, 30);
  sp_store_close(s);
  /* Scribble over a page in the middle of the file (not the header). */
  int64_t size = file_bytes(g_db);
  ck_assert(size > 16 * 4096);
  int fd = open(g_db, O_WRONLY);
  ck_assert(fd >= 0);
  char junk[4096];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(i * 13 + 5);
  for (int pg = 3; pg < 8; pg++)
    ck_assert_int_eq(pwrite(fd, junk, sizeof junk, (off_t)pg * 4096), (ssize_t)sizeof junk);
  close(fd);
  sp_err err;
  int rc = open_expect_fail(&err);
  ck_assert_int_eq(rc, SP_EIO);
  ck_assert_msg(strstr(err.msg, "integrity") || strstr(err.msg, "malformed"), "%s", err.msg);
  ck_assert_ptr_nonnull(strstr(err.msg, g_db));
}
END_TEST

/* ---------------------------------------------------------------- threads */

typedef struct worker {
  sp_store *s;
  int id;
  int failures;
  char msg[600];
} worker;

enum { N_THREADS = 8, PER_THREAD = 25, SHARED_PLAN = 1000000 };

static void *worker_main(void *arg) {
  worker *w = arg;
  sp_err err;
  for (int i = 0; i < PER_THREAD && !w->failures; i++) {
    int n = w->id * 1000 + i;
    gen_plan g;
    gen(&g, n, 2000 + (size_t)i * 10, 8, NULL);
    if (sp_store_put(w->s, &g.p, g.rows, g.n_rows, &err) != SP_OK) {
      w->failures++;
      snprintf(w->msg, sizeof w->msg, "put %d: %s", n, err.msg);
    }
    sp_store_plan got;
    if (!w->failures && sp_store_get(w->s, g.p.key, SP_STORE_WITH_PLAN | SP_STORE_COUNT_HIT,
                                     &got, &err) != SP_OK) {
      w->failures++;
      snprintf(w->msg, sizeof w->msg, "get %d: %s", n, err.msg);
    } else if (!w->failures && (got.plan_len != g.p.plan_len ||
                                memcmp(got.plan, g.blob, g.p.plan_len) != 0)) {
      w->failures++;
      snprintf(w->msg, sizeof w->msg, "plan %d read back differs", n);
    }
    sp_store_plan_free(&got);
    /* The shared plan, replaced by everyone: whatever version is read must be whole (its
     * status names the writer and its blob carries the same writer's bytes). */
    gen_plan sh;
    gen(&sh, SHARED_PLAN, 64, 2, NULL);
    char status[32];
    snprintf(status, sizeof status, "by-%d", w->id);
    memset(sh.blob, 'A' + w->id, 64);
    sh.p.status = status;
    if (sp_store_put(w->s, &sh.p, sh.rows, sh.n_rows, &err) != SP_OK) {
      w->failures++;
      snprintf(w->msg, sizeof w->msg, "put shared: %s", err.msg);
    }
    if (!w->failures && sp_store_get(w->s, sh.p.key, SP_STORE_WITH_PLAN, &got, &err) == SP_OK) {
      int by = atoi(got.status + 3);
      if (got.plan_len != 64 || ((const char *)got.plan)[0] != 'A' + by ||
          ((const char *)got.plan)[63] != 'A' + by) {
        w->failures++;
        snprintf(w->msg, sizeof w->msg, "shared plan torn: status %s", got.status);
      }
    }
    sp_store_plan_free(&got);
    gen_free(&sh);
    sp_store_plan_list l;
    sp_store_list_query q = {.limit = 5};
    if (!w->failures && sp_store_list(w->s, &q, &l, &err) != SP_OK) {
      w->failures++;
      snprintf(w->msg, sizeof w->msg, "list: %s", err.msg);
    }
    sp_store_plan_list_free(&l);
    if (i % 5 == 4 && !w->failures && sp_store_delete(w->s, g.p.key, &err) != SP_OK) {
      w->failures++;
      snprintf(w->msg, sizeof w->msg, "delete %d: %s", n, err.msg);
    }
    gen_free(&g);
  }
  return NULL;
}

START_TEST(test_threads_put_get_list_delete_at_once) {
  sp_store_options o = {.path = g_db, .max_readers = 4, .touch_batch = 8};
  sp_store *s = sp_test_store_open(&o);
  sp_err err;
  pthread_t th[N_THREADS];
  worker w[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    w[i] = (worker){.s = s, .id = i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < N_THREADS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < N_THREADS; i++) ck_assert_msg(w[i].failures == 0, "%s", w[i].msg);
  sp_store_stats st;
  ck_assert_int_eq(sp_store_stats_get(s, &st, &err), SP_OK);
  /* Each thread keeps 20 of its 25 plans; plus the shared one. */
  ck_assert_int_eq(st.plans, N_THREADS * (PER_THREAD - PER_THREAD / 5) + 1);
  ck_assert_int_eq(st.hits, N_THREADS * PER_THREAD);
  for (int t = 0; t < N_THREADS; t++)
    for (int i = 0; i < PER_THREAD; i++) {
      char key[65];
      key_of(t * 1000 + i, key);
      sp_store_plan got;
      int rc = sp_store_get(s, key, SP_STORE_WITH_PLAN, &got, &err);
      ck_assert_int_eq(rc, i % 5 == 4 ? SP_ENOTFOUND : SP_OK);
      if (rc == SP_OK) check_plan(&got, t * 1000 + i, 2000 + (size_t)i * 10, 8);
      sp_store_plan_free(&got);
    }
  sp_store_close(s);
}
END_TEST

/* ---------------------------------------------------------------- kill -9 */

enum { KILL_ROUNDS = 20 };

/* The child: stores plans round*100000 + i, i = 0, 1, ..., printing "n\n" after each commit. */
static void kill_child(int round, int fd) {
  sp_store_options o = {.path = g_db};
  sp_store *s = NULL;
  sp_err err;
  if (sp_store_open(&o, &s, &err) != SP_OK) {
    dprintf(fd, "open failed: %s\n", err.msg);
    _exit(3);
  }
  for (int i = 0; i < 100000; i++) {
    int n = round * 100000 + i;
    gen_plan g;
    gen(&g, n, (size_t)(n % 13) * 500, (size_t)(n % 17), NULL);
    if (sp_store_put(s, &g.p, g.rows, g.n_rows, &err) != SP_OK) {
      dprintf(fd, "put failed: %s\n", err.msg);
      _exit(4);
    }
    gen_free(&g);
    char line[32];
    int len = snprintf(line, sizeof line, "%d\n", n);
    if (write(fd, line, (size_t)len) != len) _exit(5);
  }
  _exit(0);
}

START_TEST(test_kill_9_during_writes_loses_no_acknowledged_plan) {
  unsigned seed = (unsigned)time(NULL);
  printf("kill -9 test: seed %u\n", seed);
  srand(seed);
  int *acked = NULL;
  size_t n_acked = 0, cap = 0;
  for (int round = 0; round < KILL_ROUNDS; round++) {
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
      close(p[0]);
      kill_child(round, p[1]);
    }
    close(p[1]);
    /* Read acknowledgements for a random 5-150 ms, then kill. */
    int delay_ms = 5 + rand() % 146;
    int64_t t0 = sp_clock_now_ms();
    char buf[65536];
    size_t have = 0;
    bool killed = false;
    for (;;) {
      int64_t el = sp_clock_now_ms() - t0;
      if (!killed && el >= delay_ms) {
        kill(pid, SIGKILL);
        killed = true;
      }
      struct pollfd pfd = {.fd = p[0], .events = POLLIN};
      int pr = poll(&pfd, 1, killed ? 1000 : (int)(delay_ms - el));
      if (pr <= 0) continue;
      ssize_t r = read(p[0], buf + have, sizeof buf - have - 1);
      if (r <= 0) break;   /* EOF: the child is gone and everything it wrote is read */
      have += (size_t)r;
      char *nl;
      while ((nl = memchr(buf, '\n', have))) {
        *nl = '\0';
        ck_assert_msg(buf[0] >= '0' && buf[0] <= '9', "child: %s", buf);
        ck_assert_int_eq(sp_grow_z((void **)&acked, &cap, n_acked, sizeof *acked), SP_OK);
        acked[n_acked++] = atoi(buf);
        size_t used = (size_t)(nl - buf) + 1;
        memmove(buf, nl + 1, have - used);
        have -= used;
      }
    }
    close(p[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "round %d: the child ended by itself (status %d)", round, status);
  }
  printf("kill -9 test: %d kills, %zu plans acknowledged\n", KILL_ROUNDS, n_acked);
  ck_assert(n_acked > 0);
  /* A separate connection's integrity check, then the store's own open (which checks too). */
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open(g_db, &db), SQLITE_OK);
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
  sp_store *s = open_store(0, 1);
  sp_err err;
  for (size_t i = 0; i < n_acked; i++) {
    int n = acked[i];
    char key[65];
    key_of(n, key);
    sp_store_plan got;
    int rc = sp_store_get(s, key, SP_STORE_WITH_PLAN | SP_STORE_WITH_REQUEST, &got, &err);
    ck_assert_msg(rc == SP_OK, "acknowledged plan %d: %s", n, err.msg);
    check_plan(&got, n, (size_t)(n % 13) * 500, (size_t)(n % 17));
    sp_store_plan_free(&got);
    sp_store_row_page pg;
    sp_store_row_query q = {.section = "value", .limit = 1000};
    ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
    ck_assert_int_eq(pg.total, (n % 17) - (n % 17) / 4);
    sp_store_row_page_free(&pg);
  }
  sp_store_close(s);
  free(acked);
}
END_TEST

static Suite *store_suite(void) {
  Suite *s = suite_create("store");
  TCase *tc = tcase_create("store");
  tcase_add_checked_fixture(tc, make_dir, remove_dir);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_put_then_get_returns_every_field_and_blob);
  tcase_add_test(tc, test_missing_plan_is_not_found_and_counted_as_miss);
  tcase_add_test(tc, test_raw_hash_finds_plan_and_aliases_add_more);
  tcase_add_test(tc, test_put_replaces_plan_and_keeps_hit_count);
  tcase_add_test(tc, test_bad_arguments_are_refused_and_store_stays_usable);
  tcase_add_test(tc, test_list_pages_orders_and_filters_by_version);
  tcase_add_test(tc, test_rows_page_by_section_with_label_filter);
  tcase_add_test(tc, test_rows_fetch_one_row_by_sparse_idx);
  tcase_add_test(tc, test_stats_count_hits_in_batches_and_persist);
  tcase_add_test(tc, test_delete_removes_plan_and_rows);
  tcase_add_test(tc, test_add_rows_adds_a_section_once_and_grows_the_plan);
  tcase_add_test(tc, test_eviction_keeps_database_under_limit_lru_first);
  tcase_add_test(tc, test_purge_drops_plans_of_other_planner_versions);
  tcase_add_test(tc, test_newer_schema_is_refused_with_message);
  tcase_add_test(tc, test_foreign_and_non_database_files_are_refused);
  tcase_add_test(tc, test_database_is_wal_and_opens_through_named_vfs);
  tcase_add_test(tc, test_corrupt_database_fails_integrity_check_at_open);
  tcase_add_test(tc, test_threads_put_get_list_delete_at_once);
  tcase_add_test(tc, test_kill_9_during_writes_loses_no_acknowledged_plan);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(store_suite()); }
