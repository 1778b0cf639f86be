/*
 * test_store_faults.c - the plan cache under injected faults, through the two doors store.h
 * documents, with the shim and allocator of store/faults.h: a SQLite VFS opened by name
 * (options.vfs) that fails the Nth write or sync with an I/O error or a full disk, and an
 * allocator installed with sqlite3_config(SQLITE_CONFIG_MALLOC) that fails the Nth allocation.
 * (tests/test_daemon_faults.c does the same through the daemon.) Every failed call must
 * return a status with a message (never crash or hang), and once the fault is gone the store
 * must work again with every plan it acknowledged intact.
 *
 * Each Check test runs in its own process, so the allocator can be swapped before SQLite
 * initialises in that process.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/faults.h"
#include "store/store.h"
#include "test_support.h"

static char g_dir[256], g_db[300];

static void make_dir(void) {
  sp_test_temp_db("sp_store_faults", g_dir, sizeof g_dir, g_db, sizeof g_db);
}

static void remove_dir(void) { sp_test_remove_temp_db(g_dir, g_db); }

/* ---------------------------------------------------------------- plans */

static void key_of(int n, char out[SP_STORE_HASH_HEX + 1]) {
  snprintf(out, SP_STORE_HASH_HEX + 1, "%032x%032x", n, n * 7 + 1);
}

/* Plan n: a blob of n-derived bytes and a few rows. */
static int put_plan(sp_store *s, int n, sp_err *err) {
  sp_store_plan p = {.planner_version = "v1", .status = "optimal", .gap = NAN,
                     .total_cost = n};
  key_of(n, p.key);
  char blob[3000], json[4][40], label[4][16];
  for (size_t i = 0; i < sizeof blob; i++) blob[i] = (char)(n + (int)i);
  p.plan = blob;
  p.plan_len = sizeof blob;
  sp_store_row rows[4];
  for (int i = 0; i < 4; i++) {
    snprintf(json[i], sizeof json[i], "{\"n\":%d,\"i\":%d}", n, i);
    snprintf(label[i], sizeof label[i], "v%d", i);
    rows[i] = (sp_store_row){"value", i, label[i], json[i]};
  }
  return sp_store_put(s, &p, rows, 4, err);
}

static void check_plan(sp_store *s, int n) {
  char key[65];
  key_of(n, key);
  sp_store_plan got;
  sp_err err;
  int rc = sp_store_get(s, key, SP_STORE_WITH_PLAN, &got, &err);
  ck_assert_msg(rc == SP_OK, "plan %d: %s", n, err.msg);
  ck_assert_uint_eq(got.plan_len, 3000);
  for (size_t i = 0; i < 3000; i++) ck_assert_int_eq(((const char *)got.plan)[i], (char)(n + (int)i));
  sp_store_plan_free(&got);
  sp_store_row_page pg;
  sp_store_row_query q = {.section = "value"};
  ck_assert_int_eq(sp_store_rows(s, key, &q, &pg, &err), SP_OK);
  ck_assert_int_eq(pg.total, 4);
  sp_store_row_page_free(&pg);
}

static void check_integrity(void) {
  char said[256];
  ck_assert_msg(sp_faults_integrity_ok(g_db, said, sizeof said), "integrity_check: %s", said);
}

/* ---------------------------------------------------------------- tests */

START_TEST(test_write_errors_fail_puts_cleanly_and_store_recovers) {
  make_dir();
  sp_err err;
  ck_assert_int_eq(sp_faults_install(false, false, &err), SP_OK);
  sp_store_options o = {.path = g_db, .vfs = SP_FAULTS_VFS, .touch_batch = 1};
  sp_store *s;
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_OK);
  int acked[200], n_acked = 0, failed = 0;
  /* Fail the k-th write or sync of a put, k = 0, 1, 2, ...: every put either commits or
   * fails with a message naming the file; the ones that committed stay. */
  for (int k = 0; k < 40; k++) {
    bool full = k % 3 == 2;
    sp_faults_arm(SP_FAULT_WRITE, k, false, full);
    int rc = put_plan(s, k, &err);
    sp_faults_off();
    if (rc == SP_OK) {
      acked[n_acked++] = k;
    } else {
      failed++;
      ck_assert_int_eq(rc, SP_EIO);
      ck_assert_msg(strstr(err.msg, g_db), "%s", err.msg);
      if (full) ck_assert_msg(strstr(err.msg, "full"), "%s", err.msg);
    }
    /* Without a fault the store answers again. */
    ck_assert_int_eq(put_plan(s, 1000 + k, &err), SP_OK);
    acked[n_acked++] = 1000 + k;
  }
  ck_assert(failed > 0);
  ck_assert(sp_faults_fired() > 0);
  for (int i = 0; i < n_acked; i++) check_plan(s, acked[i]);
  sp_store_close(s);
  check_integrity();
  /* Reopened without the shim: everything acknowledged is there. */
  o.vfs = NULL;
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_OK);
  for (int i = 0; i < n_acked; i++) check_plan(s, acked[i]);
  sp_store_close(s);
  remove_dir();
}
END_TEST

START_TEST(test_allocation_failures_give_nomem_or_error_never_crash) {
  make_dir();
  sp_err err;
  ck_assert_int_eq(sp_faults_install(false, true, &err), SP_OK);
  sp_store_options o = {.path = g_db, .touch_batch = 1};
  sp_store *s;
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_OK);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(put_plan(s, i, &err), SP_OK);
  int acked[400], n_acked = 0, failures = 0;
  for (int k = 0; k < 150; k++) {
    char key[65];
    key_of(k % 5, key);
    sp_store_plan got;
    sp_store_row_page pg;
    sp_store_row_query q = {.section = "value", .label_contains = "v"};
    sp_faults_arm(SP_FAULT_MALLOC, k, false, false);
    int rc_put = put_plan(s, 100 + k, &err);
    sp_faults_arm(SP_FAULT_MALLOC, k / 3, false, false);
    int rc_get = sp_store_get(s, key, SP_STORE_WITH_PLAN | SP_STORE_COUNT_HIT, &got, &err);
    sp_store_plan_free(&got);
    sp_faults_arm(SP_FAULT_MALLOC, k / 5, false, false);
    int rc_rows = sp_store_rows(s, key, &q, &pg, &err);
    sp_store_row_page_free(&pg);
    sp_faults_off();
    if (rc_put == SP_OK) acked[n_acked++] = 100 + k;
    int rcs[3] = {rc_put, rc_get, rc_rows};
    for (int j = 0; j < 3; j++) {
      if (rcs[j] == SP_OK) continue;
      failures++;
      ck_assert_msg(rcs[j] == SP_ENOMEM || rcs[j] == SP_EIO || rcs[j] == SP_EINTERNAL,
                    "k=%d call %d: status %d: %s", k, j, rcs[j], err.msg);
    }
  }
  ck_assert(failures > 0);
  ck_assert(sp_faults_fired() > 0);
  ck_assert_msg(put_plan(s, 999, &err) == SP_OK, "after the faults: %s", err.msg);
  check_plan(s, 999);
  for (int i = 0; i < 5; i++) check_plan(s, i);
  for (int i = 0; i < n_acked; i++) check_plan(s, acked[i]);
  sp_store_close(s);
  check_integrity();
  remove_dir();
}
END_TEST

static Suite *faults_suite(void) {
  Suite *s = suite_create("store_faults");
  TCase *tc = tcase_create("faults");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_write_errors_fail_puts_cleanly_and_store_recovers);
  tcase_add_test(tc, test_allocation_failures_give_nomem_or_error_never_crash);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(faults_suite()); }
