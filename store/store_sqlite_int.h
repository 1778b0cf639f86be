/*
 * store_sqlite_int.h - the SQLite backend's internals, shared by store_sqlite.c (connections,
 * opening, schema, hit batching) and store_sqlite_ops.c (the operations). Private to store/.
 *
 * Connections. One writer connection (`writer`), used only under `wmu`; a pool of reader
 * connections (`idle` stack, at most opt.max_readers open), each used by one thread at a time
 * between sq_reader_get and sq_reader_put. Each connection prepares its statements lazily
 * (sq_stmt) and keeps them until it is closed.
 *
 * Hit batching. A counted hit is recorded in `touches` (key, hits, last time) under `tmu`;
 * counted misses in `pending_misses`. They are written by sq_flush_locked (holding wmu), which
 * every write operation calls first, and by the flusher thread: woken when a batch is full,
 * else once a second while anything is pending, so a cache hit never writes itself. A backlog
 * of four batches (the flusher cannot keep up) is written by the hit's own thread.
 */
#ifndef SP_STORE_SQLITE_INT_H
#define SP_STORE_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>

#include "store.h"

/* Statements, prepared once per connection (SQL text in store_sqlite_ops.c). */
typedef enum sq_stmt_id {
  SQ_BEGIN_READ, SQ_BEGIN_WRITE, SQ_COMMIT, SQ_ROLLBACK,
  SQ_GET_BY_KEY, SQ_GET_BY_RAW, SQ_PLAN_ID,
  SQ_INSERT_PLAN, SQ_UPDATE_PLAN, SQ_INSERT_BLOBS, SQ_INSERT_ROW, SQ_INSERT_RAW,
  SQ_DELETE_ROWS, SQ_DELETE_BLOBS, SQ_DELETE_RAWS, SQ_DELETE_PLAN,
  SQ_TOUCH, SQ_COUNTER_ADD, SQ_COUNTERS,
  SQ_LIST_LAST_USED, SQ_LIST_CREATED, SQ_LIST_KEY, SQ_LIST_COUNT,
  SQ_ROWS, SQ_ROWS_COUNT, SQ_SECTIONS,
  SQ_TOTALS, SQ_PAGE_COUNT, SQ_FREELIST_COUNT, SQ_LRU_VICTIM, SQ_PURGE_VICTIM,
  SQ_SECTION_COUNT, SQ_GROW_PLAN,
  SQ_N_STMT
} sq_stmt_id;

typedef struct sq_conn {
  sqlite3 *db;
  sqlite3_stmt *st[SQ_N_STMT];
  struct sq_conn *next;          /* in the idle stack */
} sq_conn;

typedef struct sq_touch {
  char key[SP_STORE_HASH_HEX + 1];
  int64_t hits;
  int64_t last_ms;
} sq_touch;

typedef struct sq_store {
  char *path;
  char *vfs;                     /* NULL: default */
  sp_store_options opt;          /* defaults filled in; path/vfs point at the copies above */
  int64_t page_size;

  pthread_mutex_t wmu;           /* guards writer */
  sq_conn *writer;

  pthread_mutex_t pmu;           /* guards idle, n_readers */
  pthread_cond_t pcv;
  sq_conn *idle;
  int n_readers;

  pthread_mutex_t tmu;           /* guards touches, pending_misses, flusher_stop */
  sq_touch *touches;
  int n_touches, cap_touches;
  int64_t pending_misses;
  pthread_cond_t fcv;            /* wakes the flusher (with tmu) */
  pthread_t flusher;
  bool flusher_running, flusher_stop;
} sq_store;

/* Unix time in milliseconds. */
int64_t sq_now_ms(void);

/* Turns SQLite result `rc` on `c` into an sp_status with "plan cache PATH: WHAT: message". */
int sq_fail(sq_store *s, sq_conn *c, int rc, const char *what, sp_err *err);

/* The statement `id` of `c`, prepared on first use; *st is ready to bind. */
int sq_stmt(sq_store *s, sq_conn *c, sq_stmt_id id, sqlite3_stmt **st, sp_err *err);
/* Steps a statement that returns no rows (BEGIN, INSERT, ...) and resets it. */
int sq_run(sq_store *s, sq_conn *c, sq_stmt_id id, const char *what, sp_err *err);
/* Rolls back after a failure (keeps `err`). */
void sq_rollback(sq_store *s, sq_conn *c);

/* A reader connection for this thread (opened on demand, waits when all are busy). */
int sq_reader_get(sq_store *s, sq_conn **out, sp_err *err);
void sq_reader_put(sq_store *s, sq_conn *c);

/* Writer access: takes wmu, then writes pending hit counts (a failure there is kept for the
 * next flush and not reported: the caller's own write reports its own errors). */
void sq_writer_lock(sq_store *s);
void sq_writer_unlock(sq_store *s);
/* Writes pending hit counts and misses (caller holds wmu). */
int sq_flush_locked(sq_store *s, sp_err *err);
/* Records a counted hit or miss; may flush when the batch is full. */
void sq_note_hit(sq_store *s, const char *key, int64_t now_ms);
void sq_note_miss(sq_store *s);
/* Hits of `key` not yet written, and the latest pending time (0 if none). */
int64_t sq_pending_hits(sq_store *s, const char *key, int64_t *last_ms);
/* Pending hits and misses in total. */
void sq_pending_totals(sq_store *s, int64_t *hits, int64_t *misses);

/* Operations (store_sqlite_ops.c). */
int sq_op_put(void *impl, const sp_store_plan *p, const sp_store_row *rows, size_t n_rows,
              sp_err *err);
int sq_op_get(void *impl, bool by_raw, const char *hash, unsigned flags, sp_store_plan *out,
              sp_err *err);
int sq_op_add_raw_hash(void *impl, const char *raw_hash, const char *key, sp_err *err);
int sq_op_add_rows(void *impl, const char *key, const sp_store_row *rows, size_t n_rows,
                   sp_err *err);
int sq_op_del(void *impl, const char *key, sp_err *err);
int sq_op_list(void *impl, const sp_store_list_query *q, sp_store_plan_list *out, sp_err *err);
int sq_op_rows(void *impl, const char *key, const sp_store_row_query *q, sp_store_row_page *out,
               sp_err *err);
int sq_op_sections(void *impl, const char *key, sp_store_section_count **out, size_t *n,
                   sp_err *err);
int sq_op_stats(void *impl, sp_store_stats *out, sp_err *err);
int sq_op_evict(void *impl, int64_t max_bytes, int64_t *n_evicted, sp_err *err);
int sq_op_purge(void *impl, const char *keep_version, int64_t *n_purged, sp_err *err);
int sq_op_flush(void *impl, sp_err *err);

/* The SQL of each statement. */
extern const char *const sq_sql[SQ_N_STMT];

#endif /* SP_STORE_SQLITE_INT_H */
