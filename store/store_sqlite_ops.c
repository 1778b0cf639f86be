/*
 * store_sqlite_ops.c - the SQLite backend's operations (see store.h for their contracts and
 * store_sqlite_int.h for connections and locking).
 *
 * Writes: the writer connection under wmu, one BEGIN IMMEDIATE ... COMMIT per call, rolled
 * back on any failure. Reads: a pooled reader; reads of more than one statement run in one
 * read transaction so they see one snapshot. Results are copied into an arena sized for them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/grow.h"

#include "store_sqlite_int.h"

#define PLAN_COLS \
  "p.id, p.key, p.raw_hash, p.planner_version, p.module_name, p.mesh, p.status, p.gap, " \
  "p.total_cost, p.created_ms, p.last_used_ms, p.hits, p.size_bytes, p.n_rows"
#define N_PLAN_COLS 14

const char *const sq_sql[SQ_N_STMT] = {
    [SQ_BEGIN_READ] = "BEGIN",
    [SQ_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [SQ_COMMIT] = "COMMIT",
    [SQ_ROLLBACK] = "ROLLBACK",
    [SQ_GET_BY_KEY] = "SELECT " PLAN_COLS ", CASE WHEN ?2 THEN b.plan END, "
                      "CASE WHEN ?3 THEN b.request END FROM plans p "
                      "JOIN plan_blobs b ON b.plan_id = p.id WHERE p.key = ?1",
    [SQ_GET_BY_RAW] = "SELECT " PLAN_COLS ", CASE WHEN ?2 THEN b.plan END, "
                      "CASE WHEN ?3 THEN b.request END FROM raw_hashes r "
                      "JOIN plans p ON p.id = r.plan_id "
                      "JOIN plan_blobs b ON b.plan_id = p.id WHERE r.raw_hash = ?1",
    [SQ_PLAN_ID] = "SELECT id FROM plans WHERE key = ?1",
    [SQ_INSERT_PLAN] = "INSERT INTO plans(key, raw_hash, planner_version, module_name, mesh, "
                       "status, gap, total_cost, created_ms, last_used_ms, hits, size_bytes, "
                       "n_rows) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, 0, ?10, ?11)",
    [SQ_UPDATE_PLAN] = "UPDATE plans SET raw_hash = ?2, planner_version = ?3, module_name = ?4, "
                       "mesh = ?5, status = ?6, gap = ?7, total_cost = ?8, created_ms = ?9, "
                       "last_used_ms = ?9, size_bytes = ?10, n_rows = ?11 WHERE id = ?12",
    [SQ_INSERT_BLOBS] = "INSERT INTO plan_blobs(plan_id, request, plan) VALUES(?1, ?2, ?3)",
    [SQ_INSERT_ROW] = "INSERT INTO plan_rows(plan_id, section, idx, label, json) "
                      "VALUES(?1, ?2, ?3, ?4, ?5)",
    [SQ_INSERT_RAW] = "INSERT OR REPLACE INTO raw_hashes(raw_hash, plan_id) VALUES(?1, ?2)",
    [SQ_DELETE_ROWS] = "DELETE FROM plan_rows WHERE plan_id = ?1",
    [SQ_DELETE_BLOBS] = "DELETE FROM plan_blobs WHERE plan_id = ?1",
    [SQ_DELETE_RAWS] = "DELETE FROM raw_hashes WHERE plan_id = ?1",
    [SQ_DELETE_PLAN] = "DELETE FROM plans WHERE id = ?1",
    [SQ_TOUCH] = "UPDATE plans SET hits = hits + ?1, last_used_ms = max(last_used_ms, ?2) "
                 "WHERE key = ?3",
    [SQ_COUNTER_ADD] = "UPDATE counters SET value = value + ?1 WHERE name = ?2",
    [SQ_COUNTERS] = "SELECT (SELECT value FROM counters WHERE name = 'hits'), "
                    "(SELECT value FROM counters WHERE name = 'misses'), "
                    "(SELECT value FROM counters WHERE name = 'evictions')",
    [SQ_LIST_LAST_USED] = "SELECT " PLAN_COLS " FROM plans p WHERE ?1 IS NULL OR "
                          "p.planner_version = ?1 ORDER BY p.last_used_ms DESC, p.id DESC "
                          "LIMIT ?2 OFFSET ?3",
    [SQ_LIST_CREATED] = "SELECT " PLAN_COLS " FROM plans p WHERE ?1 IS NULL OR "
                        "p.planner_version = ?1 ORDER BY p.created_ms DESC, p.id DESC "
                        "LIMIT ?2 OFFSET ?3",
    [SQ_LIST_KEY] = "SELECT " PLAN_COLS " FROM plans p WHERE ?1 IS NULL OR "
                    "p.planner_version = ?1 ORDER BY p.key LIMIT ?2 OFFSET ?3",
    [SQ_LIST_COUNT] = "SELECT count(*) FROM plans WHERE ?1 IS NULL OR planner_version = ?1",
    [SQ_ROWS] = "SELECT section, idx, label, json FROM plan_rows WHERE plan_id = ?1 AND "
                "section = ?2 AND (?3 IS NULL OR label LIKE ?3 ESCAPE '\\') AND idx >= ?6 "
                "ORDER BY idx LIMIT ?4 OFFSET ?5",
    [SQ_ROWS_COUNT] = "SELECT count(*) FROM plan_rows WHERE plan_id = ?1 AND section = ?2 "
                      "AND (?3 IS NULL OR label LIKE ?3 ESCAPE '\\') AND idx >= ?6",
    [SQ_SECTIONS] = "SELECT section, count(*) FROM plan_rows WHERE plan_id = ?1 "
                    "GROUP BY section ORDER BY section",
    [SQ_TOTALS] = "SELECT count(*), coalesce(sum(size_bytes), 0) FROM plans",
    [SQ_PAGE_COUNT] = "PRAGMA page_count",
    [SQ_FREELIST_COUNT] = "PRAGMA freelist_count",
    [SQ_LRU_VICTIM] = "SELECT id FROM plans WHERE key <> ?1 ORDER BY last_used_ms, id LIMIT 1",
    [SQ_PURGE_VICTIM] = "SELECT id FROM plans WHERE planner_version <> ?1 LIMIT 1",
    [SQ_SECTION_COUNT] = "SELECT count(*) FROM plan_rows WHERE plan_id = ?1 AND section = ?2",
    [SQ_GROW_PLAN] = "UPDATE plans SET size_bytes = size_bytes + ?2, n_rows = n_rows + ?3 "
                     "WHERE id = ?1",
};

/* ---------------------------------------------------------------- small helpers */

static const unsigned char empty_blob[1];

/* Steps a statement expected to give at most one row. SQLITE_ROW / SQLITE_DONE or an error. */
static int step(sqlite3_stmt *st) { return sqlite3_step(st); }

/* Runs bound statement `st`, which gives no rows, and resets it; an error names `what`. */
static int step_done(sq_store *s, sq_conn *c, sqlite3_stmt *st, const char *what, sp_err *err) {
  int src = step(st);
  int rc = src == SQLITE_DONE ? SP_OK : sq_fail(s, c, src, what, err);
  sqlite3_reset(st);
  return rc;
}

/* A single integer from statement `id` with one optional text parameter. */
static int stmt_int(sq_store *s, sq_conn *c, sq_stmt_id id, const char *text, int64_t *out,
                    sp_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sq_stmt(s, c, id, &st, err);
  if (rc != SP_OK) return rc;
  if (text) sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
  int src = step(st);
  *out = 0;
  if (src == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
  else if (src != SQLITE_DONE) rc = sq_fail(s, c, src, sq_sql[id], err);
  sqlite3_reset(st);
  return rc;
}

/* The id of plan `key`: SP_OK, SP_ENOTFOUND (with a message) or an error. */
static int plan_id(sq_store *s, sq_conn *c, const char *key, int64_t *id, sp_err *err) {
  int rc = stmt_int(s, c, SQ_PLAN_ID, key, id, err);
  if (rc == SP_OK && *id == 0)
    rc = sp_err_set(err, SP_ENOTFOUND, "no plan with key %s in the cache", key);
  return rc;
}

static int run_id(sq_store *s, sq_conn *c, sq_stmt_id id, int64_t arg, sp_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sq_stmt(s, c, id, &st, err);
  if (rc != SP_OK) return rc;
  sqlite3_bind_int64(st, 1, arg);
  return step_done(s, c, st, "deleting a plan", err);
}

/* Deletes plan `id` and everything that hangs off it (inside the caller's transaction). */
static int delete_plan_id(sq_store *s, sq_conn *c, int64_t id, sp_err *err) {
  static const sq_stmt_id order[] = {SQ_DELETE_ROWS, SQ_DELETE_BLOBS, SQ_DELETE_RAWS,
                                     SQ_DELETE_PLAN};
  int rc = SP_OK;
  for (size_t i = 0; rc == SP_OK && i < sizeof order / sizeof order[0]; i++)
    rc = run_id(s, c, order[i], id, err);
  return rc;
}

static int counter_add(sq_store *s, sq_conn *c, const char *name, int64_t n, sp_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sq_stmt(s, c, SQ_COUNTER_ADD, &st, err);
  if (rc != SP_OK) return rc;
  sqlite3_bind_int64(st, 1, n);
  sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
  return step_done(s, c, st, "updating counters", err);
}

static void bind_blob(sqlite3_stmt *st, int i, const void *p, size_t n) {
  if (n == 0) sqlite3_bind_zeroblob(st, i, 0);
  else sqlite3_bind_blob64(st, i, p, n, SQLITE_STATIC);
}

static void bind_real(sqlite3_stmt *st, int i, double v) {
  if (isnan(v)) sqlite3_bind_null(st, i);
  else sqlite3_bind_double(st, i, v);
}

static double column_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Copies text column `i` into the arena; "" for NULL. NULL when out of memory. */
static const char *column_text(sp_arena *a, sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  int n = sqlite3_column_bytes(st, i);
  return sp_arena_strndup(a, t ? (const char *)t : "", t ? (size_t)n : 0);
}

/* Bytes a row of PLAN_COLS (plus blob columns from `first_blob` on) needs in an arena. */
static size_t plan_row_bytes(sqlite3_stmt *st, int n_cols) {
  size_t n = 0;
  for (int i = 2; i < n_cols; i++) n += (size_t)sqlite3_column_bytes(st, i) + 16;
  return n;
}

/* Fills `p` from a row of PLAN_COLS (+ plan, request blobs at columns 14, 15 when
 * with_blobs). SP_ENOMEM when the arena runs out. */
static int read_plan_row(sp_arena *a, sqlite3_stmt *st, bool with_blobs, sp_store_plan *p) {
  const unsigned char *t = sqlite3_column_text(st, 1);
  snprintf(p->key, sizeof p->key, "%s", t ? (const char *)t : "");
  t = sqlite3_column_text(st, 2);
  snprintf(p->raw_hash, sizeof p->raw_hash, "%s", t ? (const char *)t : "");
  p->planner_version = column_text(a, st, 3);
  p->module_name = column_text(a, st, 4);
  p->mesh = column_text(a, st, 5);
  p->status = column_text(a, st, 6);
  p->gap = column_real(st, 7);
  p->total_cost = column_real(st, 8);
  p->created_ms = sqlite3_column_int64(st, 9);
  p->last_used_ms = sqlite3_column_int64(st, 10);
  p->hits = sqlite3_column_int64(st, 11);
  p->size_bytes = sqlite3_column_int64(st, 12);
  p->n_rows = sqlite3_column_int64(st, 13);
  if (!p->planner_version || !p->module_name || !p->mesh || !p->status) return SP_ENOMEM;
  if (!with_blobs) return SP_OK;
  for (int i = 0; i < 2; i++) {
    int col = N_PLAN_COLS + i;
    if (sqlite3_column_type(st, col) == SQLITE_NULL) continue;   /* not asked for */
    const void *b = sqlite3_column_blob(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    void *copy = n ? sp_arena_alloc(a, n) : (void *)empty_blob;
    if (!copy) return SP_ENOMEM;
    if (n) memcpy(copy, b, n);
    if (i == 0) { p->plan = copy; p->plan_len = n; }
    else { p->request = copy; p->request_len = n; }
  }
  return SP_OK;
}

static int oom(sq_store *s, sp_err *err) {
  return sp_err_set(err, SP_ENOMEM, "plan cache %s: out of memory", s->path);
}

/* Gives freed pages back to the file system and lets the WAL shrink (best effort). */
static void give_back_space(sq_store *s) {
  sqlite3_exec(s->writer->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL);
  sqlite3_wal_checkpoint_v2(s->writer->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

/* ---------------------------------------------------------------- writes */

static int64_t rows_size(const sp_store_row *rows, size_t n_rows) {
  int64_t n = 0;
  for (size_t i = 0; i < n_rows; i++)
    n += (int64_t)(strlen(rows[i].section) + (rows[i].label ? strlen(rows[i].label) : 0) +
                   strlen(rows[i].json)) + 16;
  return n;
}

static int64_t plan_size(const sp_store_plan *p, const sp_store_row *rows, size_t n_rows) {
  return (int64_t)(p->request_len + p->plan_len + strlen(p->planner_version) +
                   strlen(p->module_name) + strlen(p->mesh) + strlen(p->status)) +
         2 * SP_STORE_HASH_HEX + 64 + rows_size(rows, n_rows);
}

/* Inserts rows of plan `id` (inside the caller's transaction). */
static int insert_rows(sq_store *s, sq_conn *c, int64_t id, const char *key,
                       const sp_store_row *rows, size_t n_rows, sp_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sq_stmt(s, c, SQ_INSERT_ROW, &st, err);
  if (rc != SP_OK) return rc;
  for (size_t i = 0; i < n_rows; i++) {
    const sp_store_row *r = &rows[i];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, r->section, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->idx);
    sqlite3_bind_text(st, 4, r->label ? r->label : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, r->json, -1, SQLITE_STATIC);
    int src = step(st);
    sqlite3_reset(st);
    if ((src & 0xff) == SQLITE_CONSTRAINT)
      return sp_err_set(err, SP_EINVAL, "plan %s: row %zu repeats section \"%s\" index %lld",
                        key, i, r->section, (long long)r->idx);
    if (src != SQLITE_DONE) return sq_fail(s, c, src, "storing a plan's rows", err);
  }
  return SP_OK;
}

static int evict_locked(sq_store *s, int64_t max_bytes, const char *keep_key, int64_t *n,
                        sp_err *err);

static int put_locked(sq_store *s, const sp_store_plan *p, const sp_store_row *rows,
                      size_t n_rows, int64_t size, sp_err *err) {
  sq_conn *c = s->writer;
  sqlite3_stmt *st = NULL;
  int64_t id = 0, now = sq_now_ms();
  int rc = sq_run(s, c, SQ_BEGIN_WRITE, "storing a plan", err);
  if (rc != SP_OK) return rc;
  rc = stmt_int(s, c, SQ_PLAN_ID, p->key, &id, err);
  if (rc != SP_OK) goto fail;
  if (id) {   /* replace: keep the id and hit count, drop the old parts */
    static const sq_stmt_id parts[] = {SQ_DELETE_ROWS, SQ_DELETE_BLOBS, SQ_DELETE_RAWS};
    for (size_t i = 0; rc == SP_OK && i < sizeof parts / sizeof parts[0]; i++)
      rc = run_id(s, c, parts[i], id, err);
    if (rc != SP_OK) goto fail;
  }
  rc = sq_stmt(s, c, id ? SQ_UPDATE_PLAN : SQ_INSERT_PLAN, &st, err);
  if (rc != SP_OK) goto fail;
  sqlite3_bind_text(st, 1, p->key, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, p->raw_hash, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, p->planner_version, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, p->module_name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 5, p->mesh, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 6, p->status, -1, SQLITE_STATIC);
  bind_real(st, 7, p->gap);
  bind_real(st, 8, p->total_cost);
  sqlite3_bind_int64(st, 9, now);
  sqlite3_bind_int64(st, 10, size);
  sqlite3_bind_int64(st, 11, (int64_t)n_rows);
  if (id) sqlite3_bind_int64(st, 12, id);
  rc = step_done(s, c, st, "storing a plan", err);
  if (rc != SP_OK) goto fail;
  if (!id) id = sqlite3_last_insert_rowid(c->db);

  rc = sq_stmt(s, c, SQ_INSERT_BLOBS, &st, err);
  if (rc != SP_OK) goto fail;
  sqlite3_bind_int64(st, 1, id);
  bind_blob(st, 2, p->request, p->request_len);
  bind_blob(st, 3, p->plan, p->plan_len);
  rc = step_done(s, c, st, "storing a plan's request and answer", err);
  if (rc != SP_OK) goto fail;

  rc = insert_rows(s, c, id, p->key, rows, n_rows, err);
  if (rc != SP_OK) goto fail;

  if (p->raw_hash[0]) {
    rc = sq_stmt(s, c, SQ_INSERT_RAW, &st, err);
    if (rc != SP_OK) goto fail;
    sqlite3_bind_text(st, 1, p->raw_hash, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    rc = step_done(s, c, st, "storing a raw-request hash", err);
    if (rc != SP_OK) goto fail;
  }
  rc = sq_run(s, c, SQ_COMMIT, "storing a plan", err);
  if (rc != SP_OK) goto fail;
  return SP_OK;
fail:
  sq_rollback(s, c);
  return rc;
}

int sq_op_put(void *impl, const sp_store_plan *p, const sp_store_row *rows, size_t n_rows,
              sp_err *err) {
  sq_store *s = impl;
  int64_t size = plan_size(p, rows, n_rows);
  if (s->opt.max_bytes && size > s->opt.max_bytes)
    return sp_err_set(err, SP_ELIMIT, "plan %s: %lld bytes, over the cache limit of %lld "
                      "bytes on its own; not stored", p->key, (long long)size,
                      (long long)s->opt.max_bytes);
  sq_writer_lock(s);
  int rc = put_locked(s, p, rows, n_rows, size, err);
  if (rc == SP_OK && s->opt.max_bytes) {
    int64_t n = 0;
    /* The plan is stored: a failed eviction is not the put's failure. */
    evict_locked(s, s->opt.max_bytes, p->key, &n, NULL);
  }
  sq_writer_unlock(s);
  return rc;
}

static int add_rows_locked(sq_store *s, const char *key, const sp_store_row *rows,
                           size_t n_rows, sp_err *err) {
  sq_conn *c = s->writer;
  sqlite3_stmt *st = NULL;
  int64_t id = 0, have = 0;
  int rc = sq_run(s, c, SQ_BEGIN_WRITE, "adding rows to a plan", err);
  if (rc != SP_OK) return rc;
  rc = plan_id(s, c, key, &id, err);
  if (rc == SP_OK) rc = sq_stmt(s, c, SQ_SECTION_COUNT, &st, err);
  if (rc != SP_OK) goto fail;
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, rows[0].section, -1, SQLITE_STATIC);
  int src = step(st);
  if (src == SQLITE_ROW) have = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  if (src != SQLITE_ROW) {
    rc = sq_fail(s, c, src, "counting a plan's rows", err);
    goto fail;
  }
  if (have == 0) {   /* else added before (another thread got there first): nothing to do */
    rc = insert_rows(s, c, id, key, rows, n_rows, err);
    if (rc == SP_OK) rc = sq_stmt(s, c, SQ_GROW_PLAN, &st, err);
    if (rc != SP_OK) goto fail;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, rows_size(rows, n_rows));
    sqlite3_bind_int64(st, 3, (int64_t)n_rows);
    rc = step_done(s, c, st, "adding rows to a plan", err);
    if (rc != SP_OK) goto fail;
  }
  rc = sq_run(s, c, SQ_COMMIT, "adding rows to a plan", err);
  if (rc != SP_OK) goto fail;
  return SP_OK;
fail:
  sq_rollback(s, c);
  return rc;
}

int sq_op_add_rows(void *impl, const char *key, const sp_store_row *rows, size_t n_rows,
                   sp_err *err) {
  sq_store *s = impl;
  sq_writer_lock(s);
  int rc = add_rows_locked(s, key, rows, n_rows, err);
  if (rc == SP_OK && s->opt.max_bytes) {
    int64_t n = 0;
    evict_locked(s, s->opt.max_bytes, key, &n, NULL);
  }
  sq_writer_unlock(s);
  return rc;
}

int sq_op_add_raw_hash(void *impl, const char *raw_hash, const char *key, sp_err *err) {
  sq_store *s = impl;
  sq_conn *c;
  sqlite3_stmt *st = NULL;
  int64_t id;
  sq_writer_lock(s);
  c = s->writer;
  int rc = sq_run(s, c, SQ_BEGIN_WRITE, "adding a raw-request hash", err);
  if (rc != SP_OK) goto out;
  rc = plan_id(s, c, key, &id, err);
  if (rc == SP_OK) rc = sq_stmt(s, c, SQ_INSERT_RAW, &st, err);
  if (rc == SP_OK) {
    sqlite3_bind_text(st, 1, raw_hash, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    rc = step_done(s, c, st, "adding a raw-request hash", err);
  }
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "adding a raw-request hash", err);
  if (rc != SP_OK) sq_rollback(s, c);
out:
  sq_writer_unlock(s);
  return rc;
}

int sq_op_del(void *impl, const char *key, sp_err *err) {
  sq_store *s = impl;
  int64_t id;
  sq_writer_lock(s);
  sq_conn *c = s->writer;
  int rc = sq_run(s, c, SQ_BEGIN_WRITE, "deleting a plan", err);
  if (rc != SP_OK) goto out;
  rc = plan_id(s, c, key, &id, err);
  if (rc == SP_OK) rc = delete_plan_id(s, c, id, err);
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "deleting a plan", err);
  if (rc != SP_OK) sq_rollback(s, c);
  else give_back_space(s);
out:
  sq_writer_unlock(s);
  return rc;
}

/* Pages in use times the page size, as this connection sees them (inside its transaction). */
static int used_bytes(sq_store *s, sq_conn *c, int64_t *out, sp_err *err) {
  int64_t pages, free_pages;
  int rc = stmt_int(s, c, SQ_PAGE_COUNT, NULL, &pages, err);
  if (rc == SP_OK) rc = stmt_int(s, c, SQ_FREELIST_COUNT, NULL, &free_pages, err);
  if (rc == SP_OK) *out = (pages - free_pages) * s->page_size;
  return rc;
}

/* Deletes least recently used plans other than keep_key ("" = none) until the pages in use
 * fit max_bytes; one transaction. Caller holds wmu. */
static int evict_locked(sq_store *s, int64_t max_bytes, const char *keep_key, int64_t *n,
                        sp_err *err) {
  sq_conn *c = s->writer;
  int64_t used = 0, id = 0;
  *n = 0;
  int rc = used_bytes(s, c, &used, err);
  if (rc != SP_OK || used <= max_bytes) return rc;
  rc = sq_run(s, c, SQ_BEGIN_WRITE, "evicting plans", err);
  if (rc != SP_OK) return rc;
  while (rc == SP_OK) {
    rc = used_bytes(s, c, &used, err);
    if (rc != SP_OK || used <= max_bytes) break;
    rc = stmt_int(s, c, SQ_LRU_VICTIM, keep_key, &id, err);
    if (rc != SP_OK || id == 0) break;
    rc = delete_plan_id(s, c, id, err);
    if (rc == SP_OK) ++*n;
  }
  if (rc == SP_OK && *n) rc = counter_add(s, c, "evictions", *n, err);
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "evicting plans", err);
  if (rc != SP_OK) {
    sq_rollback(s, c);
    *n = 0;
    return rc;
  }
  if (*n) give_back_space(s);
  return SP_OK;
}

int sq_op_evict(void *impl, int64_t max_bytes, int64_t *n_evicted, sp_err *err) {
  sq_store *s = impl;
  if (max_bytes < 0) max_bytes = s->opt.max_bytes;
  if (max_bytes == 0) return SP_OK;
  sq_writer_lock(s);
  int rc = evict_locked(s, max_bytes, "", n_evicted, err);
  sq_writer_unlock(s);
  return rc;
}

int sq_op_purge(void *impl, const char *keep_version, int64_t *n_purged, sp_err *err) {
  sq_store *s = impl;
  int64_t id = 0;
  sq_writer_lock(s);
  sq_conn *c = s->writer;
  int rc = sq_run(s, c, SQ_BEGIN_WRITE, "purging plans", err);
  while (rc == SP_OK) {
    rc = stmt_int(s, c, SQ_PURGE_VICTIM, keep_version, &id, err);
    if (rc != SP_OK || id == 0) break;
    rc = delete_plan_id(s, c, id, err);
    if (rc == SP_OK) ++*n_purged;
  }
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "purging plans", err);
  if (rc != SP_OK) {
    sq_rollback(s, c);
    *n_purged = 0;
  } else if (*n_purged) {
    give_back_space(s);
  }
  sq_writer_unlock(s);
  return rc;
}

int sq_op_flush(void *impl, sp_err *err) {
  sq_store *s = impl;
  pthread_mutex_lock(&s->wmu);
  int rc = sq_flush_locked(s, err);
  pthread_mutex_unlock(&s->wmu);
  return rc;
}

/* ---------------------------------------------------------------- reads */

int sq_op_get(void *impl, bool by_raw, const char *hash, unsigned flags, sp_store_plan *out,
              sp_err *err) {
  sq_store *s = impl;
  sq_conn *c;
  sqlite3_stmt *st = NULL;
  int rc = sq_reader_get(s, &c, err);
  if (rc != SP_OK) return rc;
  rc = sq_stmt(s, c, by_raw ? SQ_GET_BY_RAW : SQ_GET_BY_KEY, &st, err);
  if (rc != SP_OK) goto out;
  sqlite3_bind_text(st, 1, hash, SP_STORE_HASH_HEX, SQLITE_STATIC);
  sqlite3_bind_int(st, 2, (flags & SP_STORE_WITH_PLAN) != 0);
  sqlite3_bind_int(st, 3, (flags & SP_STORE_WITH_REQUEST) != 0);
  int src = step(st);
  if (src == SQLITE_DONE) {
    rc = sp_err_set(err, SP_ENOTFOUND, "no plan with %s %s in the cache",
                    by_raw ? "raw-request hash" : "key", hash);
  } else if (src != SQLITE_ROW) {
    rc = sq_fail(s, c, src, "reading a plan", err);
  } else {
    out->mem_ = sp_arena_new(plan_row_bytes(st, N_PLAN_COLS + 2) + 256);
    if (!out->mem_ || read_plan_row(out->mem_, st, true, out) != SP_OK) rc = oom(s, err);
  }
  sqlite3_reset(st);
out:
  sq_reader_put(s, c);
  if (rc == SP_OK) {
    int64_t last, pending = sq_pending_hits(s, out->key, &last);
    out->hits += pending;
    if (last > out->last_used_ms) out->last_used_ms = last;
    if (flags & SP_STORE_COUNT_HIT) {
      int64_t now = sq_now_ms();
      out->hits++;
      if (now > out->last_used_ms) out->last_used_ms = now;
      sq_note_hit(s, out->key, now);
    }
  } else if (rc == SP_ENOTFOUND && (flags & SP_STORE_COUNT_MISS)) {
    sq_note_miss(s);
  }
  return rc;
}

int sq_op_list(void *impl, const sp_store_list_query *q, sp_store_plan_list *out,
               sp_err *err) {
  sq_store *s = impl;
  sq_conn *c;
  sqlite3_stmt *st = NULL;
  int64_t ph, pm;
  sq_pending_totals(s, &ph, &pm);
  if (ph) sq_op_flush(s, NULL);   /* so hits and last-used times are current */
  int rc = sq_reader_get(s, &c, err);
  if (rc != SP_OK) return rc;
  rc = sq_run(s, c, SQ_BEGIN_READ, "listing plans", err);
  if (rc == SP_OK)
    rc = stmt_int(s, c, SQ_LIST_COUNT, q->planner_version, &out->total, err);
  if (rc != SP_OK) goto out;
  static const sq_stmt_id by_order[] = {SQ_LIST_LAST_USED, SQ_LIST_CREATED, SQ_LIST_KEY};
  rc = sq_stmt(s, c, by_order[q->order], &st, err);
  if (rc != SP_OK) goto out;
  if (q->planner_version) sqlite3_bind_text(st, 1, q->planner_version, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, 1);
  sqlite3_bind_int64(st, 2, q->limit);
  sqlite3_bind_int64(st, 3, q->offset);
  size_t cap = 0;
  int src;
  out->mem_ = sp_arena_new(0);
  if (!out->mem_) rc = oom(s, err);
  while (rc == SP_OK && (src = step(st)) == SQLITE_ROW) {
    if (out->n == cap) {
      int icap = (int)cap;
      if (sp_arena_grow(out->mem_, (void **)&out->plans, &icap, (int)out->n,
                        sizeof *out->plans) != SP_OK) {
        rc = oom(s, err);
        break;
      }
      cap = (size_t)icap;
    }
    sp_store_plan *p = &out->plans[out->n];
    memset(p, 0, sizeof *p);
    if (read_plan_row(out->mem_, st, false, p) != SP_OK) rc = oom(s, err);
    else out->n++;
  }
  if (rc == SP_OK && src != SQLITE_DONE) rc = sq_fail(s, c, src, "listing plans", err);
  sqlite3_reset(st);
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "listing plans", err);
out:
  sq_reader_put(s, c);
  if (rc != SP_OK) sp_store_plan_list_free(out);
  return rc;
}

/* "%text%" with LIKE's special characters escaped by '\'. */
static char *like_pattern(sp_arena *a, const char *text) {
  size_t n = strlen(text);
  char *p = sp_arena_alloc(a, 2 * n + 3), *w = p;
  if (!p) return NULL;
  *w++ = '%';
  for (const char *r = text; *r; r++) {
    if (*r == '%' || *r == '_' || *r == '\\') *w++ = '\\';
    *w++ = *r;
  }
  *w++ = '%';
  *w = '\0';
  return p;
}

static void bind_row_filter(sqlite3_stmt *st, int64_t id, const char *section,
                            const char *pattern) {
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, section, -1, SQLITE_STATIC);
  if (pattern) sqlite3_bind_text(st, 3, pattern, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, 3);
}

int sq_op_rows(void *impl, const char *key, const sp_store_row_query *q, sp_store_row_page *out,
               sp_err *err) {
  sq_store *s = impl;
  sq_conn *c;
  sqlite3_stmt *st = NULL;
  int64_t id;
  const char *pattern = NULL;
  int src = SQLITE_DONE;
  out->mem_ = sp_arena_new(0);
  if (!out->mem_) return oom(s, err);
  if (q->label_contains && !(pattern = like_pattern(out->mem_, q->label_contains)))
    return oom(s, err);
  int rc = sq_reader_get(s, &c, err);
  if (rc != SP_OK) goto done;
  rc = sq_run(s, c, SQ_BEGIN_READ, "reading plan rows", err);
  if (rc == SP_OK) rc = plan_id(s, c, key, &id, err);
  out->total = -1;
  if (rc == SP_OK && !q->skip_total) {
    rc = sq_stmt(s, c, SQ_ROWS_COUNT, &st, err);
    if (rc != SP_OK) goto out;
    bind_row_filter(st, id, q->section, pattern);
    sqlite3_bind_int64(st, 6, q->idx_from);
    src = step(st);
    if (src == SQLITE_ROW) out->total = sqlite3_column_int64(st, 0);
    else rc = sq_fail(s, c, src, "counting plan rows", err);
    sqlite3_reset(st);
  }
  if (rc == SP_OK) rc = sq_stmt(s, c, SQ_ROWS, &st, err);
  if (rc != SP_OK) goto out;
  bind_row_filter(st, id, q->section, pattern);
  sqlite3_bind_int64(st, 6, q->idx_from);
  sqlite3_bind_int64(st, 4, q->limit);
  sqlite3_bind_int64(st, 5, q->offset);
  int cap = 0;
  while (rc == SP_OK && (src = step(st)) == SQLITE_ROW) {
    if (sp_arena_grow(out->mem_, (void **)&out->rows, &cap, (int)out->n, sizeof *out->rows) !=
        SP_OK) {
      rc = oom(s, err);
      break;
    }
    sp_store_row *r = &out->rows[out->n];
    r->section = column_text(out->mem_, st, 0);
    r->idx = sqlite3_column_int64(st, 1);
    r->label = column_text(out->mem_, st, 2);
    r->json = column_text(out->mem_, st, 3);
    if (!r->section || !r->label || !r->json) rc = oom(s, err);
    else out->n++;
  }
  if (rc == SP_OK && src != SQLITE_DONE) rc = sq_fail(s, c, src, "reading plan rows", err);
  sqlite3_reset(st);
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "reading plan rows", err);
out:
  sq_reader_put(s, c);
done:
  if (rc != SP_OK) sp_store_row_page_free(out);
  return rc;
}

int sq_op_sections(void *impl, const char *key, sp_store_section_count **out, size_t *n,
                   sp_err *err) {
  sq_store *s = impl;
  sq_conn *c;
  sqlite3_stmt *st = NULL;
  int64_t id;
  size_t cap = 0;
  int src = SQLITE_DONE;
  int rc = sq_reader_get(s, &c, err);
  if (rc != SP_OK) return rc;
  rc = sq_run(s, c, SQ_BEGIN_READ, "reading plan sections", err);
  if (rc == SP_OK) rc = plan_id(s, c, key, &id, err);
  if (rc == SP_OK) rc = sq_stmt(s, c, SQ_SECTIONS, &st, err);
  if (rc != SP_OK) goto out;
  sqlite3_bind_int64(st, 1, id);
  while ((src = step(st)) == SQLITE_ROW) {
    if (sp_grow_z((void **)out, &cap, *n, sizeof **out)) {
      rc = oom(s, err);
      break;
    }
    const unsigned char *name = sqlite3_column_text(st, 0);
    snprintf((*out)[*n].name, sizeof (*out)[*n].name, "%s", name ? (const char *)name : "");
    (*out)[*n].rows = sqlite3_column_int64(st, 1);
    ++*n;
  }
  if (rc == SP_OK && src != SQLITE_DONE) rc = sq_fail(s, c, src, "reading plan sections", err);
  sqlite3_reset(st);
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "reading plan sections", err);
out:
  sq_reader_put(s, c);
  if (rc != SP_OK) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

static int64_t file_size(const char *path, const char *suffix) {
  char buf[4096];
  struct stat sb;
  snprintf(buf, sizeof buf, "%s%s", path, suffix);
  return stat(buf, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

int sq_op_stats(void *impl, sp_store_stats *out, sp_err *err) {
  sq_store *s = impl;
  sq_conn *c;
  sqlite3_stmt *st = NULL;
  int64_t ph, pm;
  sq_pending_totals(s, &ph, &pm);
  int rc = sq_reader_get(s, &c, err);
  if (rc != SP_OK) return rc;
  rc = sq_run(s, c, SQ_BEGIN_READ, "reading statistics", err);
  if (rc == SP_OK) rc = sq_stmt(s, c, SQ_TOTALS, &st, err);
  if (rc != SP_OK) goto out;
  int src = step(st);
  if (src == SQLITE_ROW) {
    out->plans = sqlite3_column_int64(st, 0);
    out->total_bytes = sqlite3_column_int64(st, 1);
  } else {
    rc = sq_fail(s, c, src, "reading statistics", err);
  }
  sqlite3_reset(st);
  if (rc == SP_OK) rc = sq_stmt(s, c, SQ_COUNTERS, &st, err);
  if (rc != SP_OK) goto out;
  src = step(st);
  if (src == SQLITE_ROW) {
    out->hits = sqlite3_column_int64(st, 0) + ph;
    out->misses = sqlite3_column_int64(st, 1) + pm;
    out->evictions = sqlite3_column_int64(st, 2);
  } else {
    rc = sq_fail(s, c, src, "reading statistics", err);
  }
  sqlite3_reset(st);
  if (rc == SP_OK) rc = used_bytes(s, c, &out->used_bytes, err);
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "reading statistics", err);
out:
  sq_reader_put(s, c);
  out->file_bytes = file_size(s->path, "") + file_size(s->path, "-wal");
  out->max_bytes = s->opt.max_bytes;
  return rc;
}
