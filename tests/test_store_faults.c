/*
 * test_store_faults.c - the plan cache under injected faults, through the two doors store.h
 * documents: a SQLite VFS shim opened by name (options.vfs) that fails the Nth write or sync
 * with an I/O error or a full disk, and an allocator installed with
 * sqlite3_config(SQLITE_CONFIG_MALLOC) that fails the Nth allocation. Every failed call must
 * return a status with a message (never crash or hang), and once the fault is gone the store
 * must work again with every plan it acknowledged intact.
 *
 * Each Check test runs in its own process, so the allocator can be swapped before SQLite
 * initialises in that process.
 */
#include <check.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "test_support.h"

static char g_dir[256], g_db[300];

static void make_dir(void) {
  sp_test_temp_db("sp_store_faults", g_dir, sizeof g_dir, g_db, sizeof g_db);
}

static void remove_dir(void) { sp_test_remove_temp_db(g_dir, g_db); }

/* ---------------------------------------------------------------- the VFS shim */

/* Countdown of writes/syncs before one fails (< 0: off), and what it fails with. */
static int g_io_countdown = -1;
static int g_io_error = SQLITE_IOERR_WRITE;
static int g_io_failures;
static sqlite3_vfs *g_base;

typedef struct fault_file {
  sqlite3_file base;
  sqlite3_file *real;   /* allocated right after this struct */
} fault_file;

static bool io_fault(void) {
  if (g_io_countdown < 0) return false;
  if (g_io_countdown-- > 0) return false;
  g_io_failures++;
  return true;
}

static int f_close(sqlite3_file *f) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods ? ff->real->pMethods->xClose(ff->real) : SQLITE_OK;
}
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 off) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xRead(ff->real, b, n, off);
}
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off) {
  fault_file *ff = (fault_file *)f;
  if (io_fault()) return g_io_error;
  return ff->real->pMethods->xWrite(ff->real, b, n, off);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xTruncate(ff->real, size);
}
static int f_sync(sqlite3_file *f, int flags) {
  fault_file *ff = (fault_file *)f;
  if (io_fault()) return g_io_error == SQLITE_FULL ? SQLITE_FULL : SQLITE_IOERR_FSYNC;
  return ff->real->pMethods->xSync(ff->real, flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *size) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xFileSize(ff->real, size);
}
static int f_lock(sqlite3_file *f, int l) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xLock(ff->real, l);
}
static int f_unlock(sqlite3_file *f, int l) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xUnlock(ff->real, l);
}
static int f_check_lock(sqlite3_file *f, int *out) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xCheckReservedLock(ff->real, out);
}
static int f_control(sqlite3_file *f, int op, void *arg) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xFileControl(ff->real, op, arg);
}
static int f_sector(sqlite3_file *f) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xSectorSize(ff->real);
}
static int f_chars(sqlite3_file *f) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xDeviceCharacteristics(ff->real);
}
static int f_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xShmMap(ff->real, pg, sz, ext, pp);
}
static int f_shm_lock(sqlite3_file *f, int off, int n, int flags) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xShmLock(ff->real, off, n, flags);
}
static void f_shm_barrier(sqlite3_file *f) {
  fault_file *ff = (fault_file *)f;
  ff->real->pMethods->xShmBarrier(ff->real);
}
static int f_shm_unmap(sqlite3_file *f, int del) {
  fault_file *ff = (fault_file *)f;
  return ff->real->pMethods->xShmUnmap(ff->real, del);
}

static const sqlite3_io_methods fault_methods = {
    2, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_check_lock,
    f_control, f_sector, f_chars, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, NULL, NULL};

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
  fault_file *ff = (fault_file *)f;
  ff->real = (sqlite3_file *)(ff + 1);
  memset(ff->real, 0, (size_t)g_base->szOsFile);
  int rc = g_base->xOpen(g_base, name, ff->real, flags, out);
  ff->base.pMethods = rc == SQLITE_OK ? &fault_methods : NULL;
  return rc;
}
static int v_delete(sqlite3_vfs *v, const char *n, int d) { return g_base->xDelete(g_base, n, d); }
static int v_access(sqlite3_vfs *v, const char *n, int f, int *o) {
  return g_base->xAccess(g_base, n, f, o);
}
static int v_full(sqlite3_vfs *v, const char *n, int k, char *o) {
  return g_base->xFullPathname(g_base, n, k, o);
}
static int v_random(sqlite3_vfs *v, int n, char *o) { return g_base->xRandomness(g_base, n, o); }
static int v_sleep(sqlite3_vfs *v, int us) { return g_base->xSleep(g_base, us); }
static int v_time(sqlite3_vfs *v, double *t) { return g_base->xCurrentTime(g_base, t); }
static int v_error(sqlite3_vfs *v, int n, char *o) { return g_base->xGetLastError(g_base, n, o); }
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *t) {
  return g_base->xCurrentTimeInt64(g_base, t);
}

static sqlite3_vfs fault_vfs;

static void register_fault_vfs(void) {
  g_base = sqlite3_vfs_find(NULL);
  ck_assert_ptr_nonnull(g_base);
  fault_vfs = (sqlite3_vfs){.iVersion = 2,
                            .szOsFile = (int)sizeof(fault_file) + g_base->szOsFile,
                            .mxPathname = g_base->mxPathname,
                            .zName = "sp_fault",
                            .xOpen = v_open,
                            .xDelete = v_delete,
                            .xAccess = v_access,
                            .xFullPathname = v_full,
                            .xDlOpen = NULL,
                            .xRandomness = v_random,
                            .xSleep = v_sleep,
                            .xCurrentTime = v_time,
                            .xGetLastError = v_error,
                            .xCurrentTimeInt64 = v_time64};
  ck_assert_int_eq(sqlite3_vfs_register(&fault_vfs, 0), SQLITE_OK);
}

/* ---------------------------------------------------------------- the allocator */

static int g_mem_countdown = -1;
static int g_mem_failures;

/* Each block carries its size in front (SQLite asks for it through xSize). */
static void *m_malloc(int n) {
  if (g_mem_countdown >= 0 && g_mem_countdown-- == 0) {
    g_mem_failures++;
    return NULL;
  }
  sqlite3_int64 *p = malloc((size_t)n + 8);
  if (!p) return NULL;
  p[0] = n;
  return p + 1;
}
static void m_free(void *p) {
  if (p) free((sqlite3_int64 *)p - 1);
}
static void *m_realloc(void *p, int n) {
  if (g_mem_countdown >= 0 && g_mem_countdown-- == 0) {
    g_mem_failures++;
    return NULL;
  }
  sqlite3_int64 *q = realloc((sqlite3_int64 *)p - 1, (size_t)n + 8);
  if (!q) return NULL;
  q[0] = n;
  return q + 1;
}
static int m_size(void *p) { return p ? (int)((sqlite3_int64 *)p)[-1] : 0; }
static int m_roundup(int n) { return (n + 7) & ~7; }
static int m_init(void *u) { return SQLITE_OK; }
static void m_shutdown(void *u) {}

static const sqlite3_mem_methods fault_mem = {m_malloc, m_free, m_realloc, m_size, m_roundup,
                                              m_init, m_shutdown, NULL};

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
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open_v2(g_db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* ---------------------------------------------------------------- tests */

START_TEST(test_write_errors_fail_puts_cleanly_and_store_recovers) {
  make_dir();
  register_fault_vfs();
  sp_store_options o = {.path = g_db, .vfs = "sp_fault", .touch_batch = 1};
  sp_store *s;
  sp_err err;
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_OK);
  int acked[200], n_acked = 0, failed = 0;
  /* Fail the k-th write or sync of a put, k = 0, 1, 2, ...: every put either commits or
   * fails with a message naming the file; the ones that committed stay. */
  for (int k = 0; k < 40; k++) {
    g_io_error = k % 3 == 2 ? SQLITE_FULL : SQLITE_IOERR_WRITE;
    g_io_countdown = k;
    int rc = put_plan(s, k, &err);
    g_io_countdown = -1;
    if (rc == SP_OK) {
      acked[n_acked++] = k;
    } else {
      failed++;
      ck_assert_int_eq(rc, SP_EIO);
      ck_assert_msg(strstr(err.msg, g_db), "%s", err.msg);
      if (g_io_error == SQLITE_FULL) ck_assert_msg(strstr(err.msg, "full"), "%s", err.msg);
    }
    /* Without a fault the store answers again. */
    ck_assert_int_eq(put_plan(s, 1000 + k, &err), SP_OK);
    acked[n_acked++] = 1000 + k;
  }
  ck_assert(failed > 0);
  ck_assert(g_io_failures > 0);
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
  ck_assert_int_eq(sqlite3_shutdown(), SQLITE_OK);
  ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &fault_mem), SQLITE_OK);
  ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
  sp_store_options o = {.path = g_db, .touch_batch = 1};
  sp_store *s;
  sp_err err;
  ck_assert_int_eq(sp_store_open(&o, &s, &err), SP_OK);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(put_plan(s, i, &err), SP_OK);
  int acked[400], n_acked = 0, failures = 0;
  for (int k = 0; k < 150; k++) {
    char key[65];
    key_of(k % 5, key);
    sp_store_plan got;
    sp_store_row_page pg;
    sp_store_row_query q = {.section = "value", .label_contains = "v"};
    g_mem_countdown = k;
    int rc_put = put_plan(s, 100 + k, &err);
    g_mem_countdown = k / 3;
    int rc_get = sp_store_get(s, key, SP_STORE_WITH_PLAN | SP_STORE_COUNT_HIT, &got, &err);
    sp_store_plan_free(&got);
    g_mem_countdown = k / 5;
    int rc_rows = sp_store_rows(s, key, &q, &pg, &err);
    sp_store_row_page_free(&pg);
    g_mem_countdown = -1;
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
  ck_assert(g_mem_failures > 0);
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
