/*
 * store_sqlite.c - the SQLite backend of the plan cache: opening (integrity check, schema
 * version, WAL), the schema, connections and their pool, and hit batching. The operations are
 * in store_sqlite_ops.c; the model is described in store_sqlite_int.h and store.h.
 *
 * Schema (version 1; PRAGMA user_version = 1, application_id = 'spln'):
 *   plans(id, key UNIQUE, raw_hash, planner_version, module_name, mesh, status, gap,
 *         total_cost, created_ms, last_used_ms, hits, size_bytes, n_rows)
 *   plan_blobs(plan_id, request, plan)         the large parts, apart so lists stay small
 *   plan_rows(plan_id, section, idx, label, json) + UNIQUE INDEX (plan_id, section, idx)
 *   raw_hashes(raw_hash PRIMARY KEY, plan_id)  the raw-request index
 *   counters(name PRIMARY KEY, value)          hits, misses, evictions
 * A plan's rows are keyed by the plan's integer id rather than its 64-character key (the same
 * index, a quarter of the size).
 */
#include "store_sqlite_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/grow.h"

#include "store_backend.h"

#define SQ_APPLICATION_ID 0x73706c6e  /* "spln" */

static const char *const schema_sql =
    "CREATE TABLE plans("
    " id INTEGER PRIMARY KEY,"
    " key TEXT NOT NULL UNIQUE,"
    " raw_hash TEXT NOT NULL,"
    " planner_version TEXT NOT NULL,"
    " module_name TEXT NOT NULL,"
    " mesh TEXT NOT NULL,"
    " status TEXT NOT NULL,"
    " gap REAL,"
    " total_cost REAL,"
    " created_ms INTEGER NOT NULL,"
    " last_used_ms INTEGER NOT NULL,"
    " hits INTEGER NOT NULL,"
    " size_bytes INTEGER NOT NULL,"
    " n_rows INTEGER NOT NULL);"
    "CREATE INDEX plans_lru ON plans(last_used_ms, id);"
    "CREATE INDEX plans_created ON plans(created_ms, id);"
    "CREATE INDEX plans_version ON plans(planner_version);"
    "CREATE TABLE plan_blobs("
    " plan_id INTEGER PRIMARY KEY REFERENCES plans(id),"
    " request BLOB NOT NULL,"
    " plan BLOB NOT NULL);"
    "CREATE TABLE plan_rows("
    " plan_id INTEGER NOT NULL REFERENCES plans(id),"
    " section TEXT NOT NULL,"
    " idx INTEGER NOT NULL,"
    " label TEXT NOT NULL,"
    " json TEXT NOT NULL);"
    "CREATE UNIQUE INDEX plan_rows_at ON plan_rows(plan_id, section, idx);"
    "CREATE TABLE raw_hashes("
    " raw_hash TEXT PRIMARY KEY,"
    " plan_id INTEGER NOT NULL REFERENCES plans(id)) WITHOUT ROWID;"
    "CREATE INDEX raw_hashes_plan ON raw_hashes(plan_id);"
    "CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT INTO counters VALUES('hits', 0), ('misses', 0), ('evictions', 0);";

int64_t sq_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sq_fail(sq_store *s, sq_conn *c, int rc, const char *what, sp_err *err) {
  int code;
  switch (rc & 0xff) {
    case SQLITE_NOMEM: code = SP_ENOMEM; break;
    case SQLITE_TOOBIG: code = SP_ELIMIT; break;
    case SQLITE_CONSTRAINT: code = SP_EINVAL; break;
    case SQLITE_INTERNAL: case SQLITE_MISUSE: case SQLITE_ERROR: code = SP_EINTERNAL; break;
    default: code = SP_EIO; break;   /* IOERR, FULL, CANTOPEN, BUSY, CORRUPT, NOTADB, ... */
  }
  const char *msg = c && c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc);
  const char *hint = "";
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
    hint = " (another process holds the database longer than the busy timeout)";
  else if ((rc & 0xff) == SQLITE_FULL)
    hint = " (the disk is full)";
  return sp_err_set(err, code, "plan cache %s: %s: %s%s", s->path, what, msg, hint);
}

int sq_stmt(sq_store *s, sq_conn *c, sq_stmt_id id, sqlite3_stmt **st, sp_err *err) {
  if (!c->st[id]) {
    int rc = sqlite3_prepare_v3(c->db, sq_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &c->st[id],
                                NULL);
    if (rc != SQLITE_OK) {
      c->st[id] = NULL;
      return sq_fail(s, c, rc, "preparing a statement", err);
    }
  }
  *st = c->st[id];
  return SP_OK;
}

int sq_run(sq_store *s, sq_conn *c, sq_stmt_id id, const char *what, sp_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sq_stmt(s, c, id, &st, err);
  if (rc != SP_OK) return rc;
  int src = sqlite3_step(st);
  if (src != SQLITE_DONE && src != SQLITE_ROW) rc = sq_fail(s, c, src, what, err);
  sqlite3_reset(st);
  return rc;
}

void sq_rollback(sq_store *s, sq_conn *c) {
  if (!sqlite3_get_autocommit(c->db)) {
    if (sq_run(s, c, SQ_ROLLBACK, "rollback", NULL) != SP_OK)
      sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
  }
}

static void conn_close(sq_conn *c) {
  if (!c) return;
  for (int i = 0; i < SQ_N_STMT; i++) sqlite3_finalize(c->st[i]);
  sqlite3_close_v2(c->db);
  free(c);
}

/* Runs SQL text (no results needed); the error names `what`. */
static int exec_sql(sq_store *s, sq_conn *c, const char *sql, const char *what, sp_err *err) {
  int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? SP_OK : sq_fail(s, c, rc, what, err);
}

/* One integer from a query such as "PRAGMA user_version". */
static int query_int(sq_store *s, sq_conn *c, const char *sql, int64_t *out, sp_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
      *out = 0;
      rc = SQLITE_OK;
    }
  }
  int ret = rc == SQLITE_OK ? SP_OK : sq_fail(s, c, rc, sql, err);
  sqlite3_finalize(st);
  return ret;
}

static int conn_open(sq_store *s, bool writer, sq_conn **out, sp_err *err) {
  sq_conn *c = calloc(1, sizeof *c);
  int ret;
  if (!c) return sp_err_set(err, SP_ENOMEM, "plan cache %s: out of memory", s->path);
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (writer ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(s->path, &c->db, flags, s->vfs);
  if (rc != SQLITE_OK) {
    if (!c->db) {
      ret = sp_err_set(err, rc == SQLITE_NOMEM ? SP_ENOMEM : SP_EIO,
                       "plan cache %s: cannot open: %s", s->path, sqlite3_errstr(rc));
    } else {
      ret = sq_fail(s, c, rc, "cannot open (does its folder exist and is it writable?)", err);
    }
    goto fail;
  }
  sqlite3_extended_result_codes(c->db, 1);
  rc = sqlite3_busy_timeout(c->db, s->opt.busy_timeout_ms);
  if (rc != SQLITE_OK) {
    ret = sq_fail(s, c, rc, "setting the busy timeout", err);
    goto fail;
  }
  if (!writer) {
    ret = exec_sql(s, c, "PRAGMA query_only=1", "setting up a reader", err);
    if (ret != SP_OK) goto fail;
  }
  *out = c;
  return SP_OK;
fail:
  conn_close(c);
  return ret;
}

/* Refuses a database this build cannot use; creates the schema in an empty one. */
static int check_and_create_schema(sq_store *s, sq_conn *c, sp_err *err) {
  int64_t version = 0, app = 0, tables = 0;
  int rc = query_int(s, c, "PRAGMA user_version", &version, err);
  if (rc == SP_OK) rc = query_int(s, c, "PRAGMA application_id", &app, err);
  if (rc == SP_OK) rc = query_int(s, c, "SELECT count(*) FROM sqlite_schema", &tables, err);
  if (rc != SP_OK) {
    if (err && strstr(err->msg, "not a database"))
      return sp_err_set(err, SP_EIO, "plan cache %s: the file is not a SQLite database (not a "
                        "shardplan plan cache); move it aside or choose another --data-dir",
                        s->path);
    return rc;
  }
  if (tables > 0 && app != SQ_APPLICATION_ID)
    return sp_err_set(err, SP_EINVAL, "plan cache %s: the database is not a shardplan plan "
                      "cache (application id %lld); move it aside or choose another "
                      "--data-dir", s->path, (long long)app);
  if (version > SP_STORE_SCHEMA_VERSION)
    return sp_err_set(err, SP_EUNSUPPORTED, "plan cache %s: schema version %lld is newer than "
                      "this shardplan's (%d): it was written by a newer shardplan; run that "
                      "version, or move the file aside to start an empty cache", s->path,
                      (long long)version, SP_STORE_SCHEMA_VERSION);
  if (tables > 0 && version < 1)
    return sp_err_set(err, SP_EINVAL, "plan cache %s: the database has no schema version; "
                      "move it aside", s->path);
  if (!s->opt.skip_integrity_check && tables > 0) {
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(c->db, "PRAGMA integrity_check(3)", -1, &st, NULL);
    char first[256] = "";
    bool ok = false;
    while (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
      const char *line = (const char *)sqlite3_column_text(st, 0);
      if (line && strcmp(line, "ok") == 0) ok = true;
      else if (line && !first[0]) snprintf(first, sizeof first, "%s", line);
      src = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (src != SQLITE_DONE) return sq_fail(s, c, src, "integrity check", err);
    if (!ok)
      return sp_err_set(err, SP_EIO, "plan cache %s: integrity check failed (%s); move the "
                        "file aside to start an empty cache", s->path, first);
  }
  if (tables == 0) {
    /* Must precede the first table; lets eviction return freed pages to the disk. */
    rc = exec_sql(s, c, "PRAGMA auto_vacuum=INCREMENTAL", "setting auto-vacuum", err);
    if (rc != SP_OK) return rc;
  }
  /* journal_mode answers with the mode in force: a VFS or file system without WAL support
   * answers something else. */
  sqlite3_stmt *st = NULL;
  int src = sqlite3_prepare_v2(c->db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
  if (src == SQLITE_OK) src = sqlite3_step(st);
  if (src != SQLITE_ROW) {
    rc = sq_fail(s, c, src, "switching to WAL", err);
    sqlite3_finalize(st);
    return rc;
  }
  const char *mode = (const char *)sqlite3_column_text(st, 0);
  bool wal = mode && strcmp(mode, "wal") == 0;
  char got[32];
  snprintf(got, sizeof got, "%s", mode ? mode : "?");
  sqlite3_finalize(st);
  if (!wal)
    return sp_err_set(err, SP_EIO, "plan cache %s: cannot use WAL (journal mode stays \"%s\")",
                      s->path, got);
  if (tables == 0) {
    /* Another process may be creating it at the same time: decide inside the transaction. */
    rc = exec_sql(s, c, "BEGIN IMMEDIATE", "creating the schema", err);
    if (rc != SP_OK) return rc;
    rc = query_int(s, c, "SELECT count(*) FROM sqlite_schema", &tables, err);
    if (rc == SP_OK && tables == 0) {
      char sql[128];
      rc = exec_sql(s, c, schema_sql, "creating the schema", err);
      snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d",
               SQ_APPLICATION_ID, SP_STORE_SCHEMA_VERSION);
      if (rc == SP_OK) rc = exec_sql(s, c, sql, "creating the schema", err);
    }
    if (rc == SP_OK) rc = exec_sql(s, c, "COMMIT", "creating the schema", err);
    if (rc != SP_OK) sq_rollback(s, c);
  }
  return rc;
}

static void sq_close(void *impl);
static void *flusher_main(void *arg);

static int sq_open(const sp_store_options *o, void **impl, sp_err *err) {
  int rc;
  sq_store *s = calloc(1, sizeof *s);
  if (!s) return sp_err_set(err, SP_ENOMEM, "plan cache %s: out of memory", o->path);
  pthread_mutex_init(&s->wmu, NULL);
  pthread_mutex_init(&s->pmu, NULL);
  pthread_mutex_init(&s->tmu, NULL);
  pthread_cond_init(&s->pcv, NULL);
  pthread_cond_init(&s->fcv, NULL);
  s->opt = *o;
  s->path = strdup(o->path);
  s->vfs = o->vfs ? strdup(o->vfs) : NULL;
  if (!s->path || (o->vfs && !s->vfs)) {
    rc = sp_err_set(err, SP_ENOMEM, "plan cache %s: out of memory", o->path);
    goto fail;
  }
  s->opt.path = s->path;
  s->opt.vfs = s->vfs;
  s->opt.backend = "sqlite";
  if (!s->opt.busy_timeout_ms) s->opt.busy_timeout_ms = 5000;
  if (!s->opt.max_readers) s->opt.max_readers = 8;
  if (!s->opt.touch_batch) s->opt.touch_batch = 64;

  int src = sqlite3_initialize();
  if (src != SQLITE_OK) {
    rc = sp_err_set(err, src == SQLITE_NOMEM ? SP_ENOMEM : SP_EIO,
                    "plan cache %s: SQLite does not initialise: %s", s->path,
                    sqlite3_errstr(src));
    goto fail;
  }
  if (s->vfs && !sqlite3_vfs_find(s->vfs)) {
    rc = sp_err_set(err, SP_EINVAL, "plan cache %s: no SQLite VFS named \"%s\"", s->path,
                    s->vfs);
    goto fail;
  }
  rc = conn_open(s, true, &s->writer, err);
  if (rc != SP_OK) goto fail;
  rc = check_and_create_schema(s, s->writer, err);
  if (rc != SP_OK) goto fail;
  rc = exec_sql(s, s->writer,
                s->opt.durable ? "PRAGMA synchronous=FULL; PRAGMA journal_size_limit=4194304"
                               : "PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=4194304",
                "setting up the writer", err);
  if (rc != SP_OK) goto fail;
  rc = query_int(s, s->writer, "PRAGMA page_size", &s->page_size, err);
  if (rc != SP_OK) goto fail;
  if (s->opt.touch_batch > 1) {
    if (pthread_create(&s->flusher, NULL, flusher_main, s) != 0) {
      rc = sp_err_set(err, SP_ENOMEM, "plan cache %s: cannot start the hit-count writer",
                      s->path);
      goto fail;
    }
    s->flusher_running = true;
  }
  *impl = s;
  return SP_OK;
fail:
  sq_close(s);
  return rc;
}

static void sq_close(void *impl) {
  sq_store *s = impl;
  if (!s) return;
  if (s->flusher_running) {
    pthread_mutex_lock(&s->tmu);
    s->flusher_stop = true;
    pthread_cond_signal(&s->fcv);
    pthread_mutex_unlock(&s->tmu);
    pthread_join(s->flusher, NULL);
  }
  if (s->writer) {
    pthread_mutex_lock(&s->wmu);
    sq_flush_locked(s, NULL);
    pthread_mutex_unlock(&s->wmu);
  }
  while (s->idle) {
    sq_conn *c = s->idle;
    s->idle = c->next;
    conn_close(c);
  }
  conn_close(s->writer);
  free(s->touches);
  free(s->path);
  free(s->vfs);
  pthread_mutex_destroy(&s->wmu);
  pthread_mutex_destroy(&s->pmu);
  pthread_mutex_destroy(&s->tmu);
  pthread_cond_destroy(&s->pcv);
  pthread_cond_destroy(&s->fcv);
  free(s);
}

/* ---------------------------------------------------------------- reader pool */

int sq_reader_get(sq_store *s, sq_conn **out, sp_err *err) {
  pthread_mutex_lock(&s->pmu);
  while (!s->idle && s->n_readers >= s->opt.max_readers) pthread_cond_wait(&s->pcv, &s->pmu);
  sq_conn *c = s->idle;
  if (c) {
    s->idle = c->next;
    pthread_mutex_unlock(&s->pmu);
    *out = c;
    return SP_OK;
  }
  s->n_readers++;
  pthread_mutex_unlock(&s->pmu);
  int rc = conn_open(s, false, &c, err);
  if (rc != SP_OK) {
    pthread_mutex_lock(&s->pmu);
    s->n_readers--;
    pthread_cond_signal(&s->pcv);
    pthread_mutex_unlock(&s->pmu);
    return rc;
  }
  *out = c;
  return SP_OK;
}

void sq_reader_put(sq_store *s, sq_conn *c) {
  sq_rollback(s, c);   /* a read transaction left open by a failure */
  pthread_mutex_lock(&s->pmu);
  c->next = s->idle;
  s->idle = c;
  pthread_cond_signal(&s->pcv);
  pthread_mutex_unlock(&s->pmu);
}

/* ---------------------------------------------------------------- hit batching */

void sq_writer_lock(sq_store *s) {
  pthread_mutex_lock(&s->wmu);
  sq_flush_locked(s, NULL);
}

void sq_writer_unlock(sq_store *s) { pthread_mutex_unlock(&s->wmu); }

/* Adds hits to the pending list (caller holds tmu). false when out of memory. */
static bool touch_add_locked(sq_store *s, const char *key, int64_t hits, int64_t last_ms) {
  for (int i = 0; i < s->n_touches; i++) {
    sq_touch *t = &s->touches[i];
    if (memcmp(t->key, key, SP_STORE_HASH_HEX) == 0) {
      t->hits += hits;
      if (last_ms > t->last_ms) t->last_ms = last_ms;
      return true;
    }
  }
  if (sp_grow((void **)&s->touches, &s->cap_touches, s->n_touches, sizeof *s->touches)) return false;
  sq_touch *t = &s->touches[s->n_touches++];
  memcpy(t->key, key, SP_STORE_HASH_HEX + 1);
  t->hits = hits;
  t->last_ms = last_ms;
  return true;
}

int sq_flush_locked(sq_store *s, sp_err *err) {
  pthread_mutex_lock(&s->tmu);
  sq_touch *v = s->touches;
  int n = s->n_touches;
  int64_t misses = s->pending_misses;
  s->touches = NULL;
  s->n_touches = s->cap_touches = 0;
  s->pending_misses = 0;
  pthread_mutex_unlock(&s->tmu);
  if (n == 0 && misses == 0) {
    free(v);
    return SP_OK;
  }
  sq_conn *c = s->writer;
  sqlite3_stmt *st = NULL;
  int64_t hits = 0;
  int rc = sq_run(s, c, SQ_BEGIN_WRITE, "writing hit counts", err);
  for (int i = 0; rc == SP_OK && i < n; i++) {
    rc = sq_stmt(s, c, SQ_TOUCH, &st, err);
    if (rc != SP_OK) break;
    sqlite3_bind_int64(st, 1, v[i].hits);
    sqlite3_bind_int64(st, 2, v[i].last_ms);
    sqlite3_bind_text(st, 3, v[i].key, SP_STORE_HASH_HEX, SQLITE_STATIC);
    int src = sqlite3_step(st);
    if (src != SQLITE_DONE) rc = sq_fail(s, c, src, "writing hit counts", err);
    sqlite3_reset(st);
    hits += v[i].hits;
  }
  const char *names[2] = {"hits", "misses"};
  int64_t adds[2] = {hits, misses};
  for (int i = 0; rc == SP_OK && i < 2; i++) {
    rc = sq_stmt(s, c, SQ_COUNTER_ADD, &st, err);
    if (rc != SP_OK) break;
    sqlite3_bind_int64(st, 1, adds[i]);
    sqlite3_bind_text(st, 2, names[i], -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    if (src != SQLITE_DONE) rc = sq_fail(s, c, src, "writing hit counts", err);
    sqlite3_reset(st);
  }
  if (rc == SP_OK) rc = sq_run(s, c, SQ_COMMIT, "writing hit counts", err);
  if (rc != SP_OK) {
    /* Keep them for the next flush. */
    sq_rollback(s, c);
    pthread_mutex_lock(&s->tmu);
    for (int i = 0; i < n; i++) touch_add_locked(s, v[i].key, v[i].hits, v[i].last_ms);
    s->pending_misses += misses;
    pthread_mutex_unlock(&s->tmu);
  }
  free(v);
  return rc;
}

/* The flusher thread: writes pending hit counts when a batch is full, or once a second while
 * anything is pending, until sq_close stops it. */
static void *flusher_main(void *arg) {
  sq_store *s = arg;
  pthread_mutex_lock(&s->tmu);
  while (!s->flusher_stop) {
    int64_t pending = s->n_touches + s->pending_misses;
    if (pending < s->opt.touch_batch) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_sec += 1;
      pthread_cond_timedwait(&s->fcv, &s->tmu, &until);
      if (s->flusher_stop) break;
      if (s->n_touches + s->pending_misses == 0) continue;
    }
    pthread_mutex_unlock(&s->tmu);
    pthread_mutex_lock(&s->wmu);
    sq_flush_locked(s, NULL);
    pthread_mutex_unlock(&s->wmu);
    pthread_mutex_lock(&s->tmu);
  }
  pthread_mutex_unlock(&s->tmu);
  return NULL;
}

/* After a hit or miss was noted (`pending` entries waiting): a full batch wakes the flusher
 * (or is written here when there is none: touch_batch 1); a backlog of four batches is
 * written here, waiting for the writer. */
static void maybe_flush(sq_store *s, int64_t pending) {
  if (pending < s->opt.touch_batch) return;
  if (s->flusher_running && pending < 4 * (int64_t)s->opt.touch_batch) {
    pthread_mutex_lock(&s->tmu);
    pthread_cond_signal(&s->fcv);
    pthread_mutex_unlock(&s->tmu);
    return;
  }
  pthread_mutex_lock(&s->wmu);
  sq_flush_locked(s, NULL);
  pthread_mutex_unlock(&s->wmu);
}

void sq_note_hit(sq_store *s, const char *key, int64_t now_ms) {
  pthread_mutex_lock(&s->tmu);
  bool ok = touch_add_locked(s, key, 1, now_ms);
  int64_t pending = s->n_touches + s->pending_misses;
  pthread_mutex_unlock(&s->tmu);
  /* Out of memory for the list: this hit is lost, flush what is there. */
  maybe_flush(s, ok ? pending : (int64_t)1 << 40);
}

void sq_note_miss(sq_store *s) {
  pthread_mutex_lock(&s->tmu);
  int64_t pending = s->n_touches + ++s->pending_misses;
  pthread_mutex_unlock(&s->tmu);
  maybe_flush(s, pending);
}

int64_t sq_pending_hits(sq_store *s, const char *key, int64_t *last_ms) {
  int64_t hits = 0;
  *last_ms = 0;
  pthread_mutex_lock(&s->tmu);
  for (int i = 0; i < s->n_touches; i++)
    if (memcmp(s->touches[i].key, key, SP_STORE_HASH_HEX) == 0) {
      hits = s->touches[i].hits;
      *last_ms = s->touches[i].last_ms;
    }
  pthread_mutex_unlock(&s->tmu);
  return hits;
}

void sq_pending_totals(sq_store *s, int64_t *hits, int64_t *misses) {
  pthread_mutex_lock(&s->tmu);
  *hits = 0;
  for (int i = 0; i < s->n_touches; i++) *hits += s->touches[i].hits;
  *misses = s->pending_misses;
  pthread_mutex_unlock(&s->tmu);
}

const sp_store_backend sp_store_sqlite_backend = {
    .name = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .put = sq_op_put,
    .get = sq_op_get,
    .add_raw_hash = sq_op_add_raw_hash,
    .add_rows = sq_op_add_rows,
    .del = sq_op_del,
    .list = sq_op_list,
    .rows = sq_op_rows,
    .sections = sq_op_sections,
    .stats = sq_op_stats,
    .evict = sq_op_evict,
    .purge = sq_op_purge,
    .flush = sq_op_flush,
};
