/*
 * store.h - the plan cache: finished plans kept by key, behind a small interface of its own.
 *
 * What it holds. One record per plan, addressed by its key (the hex SHA-256 of the canonical
 * request, computed by the daemon; the store only checks that it is 64 hex digits): the
 * request bytes (so a plan can be redone after an upgrade), the planner version, the module
 * name, the mesh text, the status ("optimal", "provisional" with a gap, "propagation-only",
 * ...: free text chosen by the daemon), the total cost, created and last-used times, hits,
 * size, an opaque `plan` blob (the daemon's encoding of the whole answer, returned as stored
 * so a repeat gets the same bytes), and the plan as ROWS: (section, idx, label, JSON text),
 * e.g. ("value", 3, "%arg0", "{...}"), that a dashboard page reads a page at a time
 * (sp_store_rows) without loading the whole plan. The store never parses the JSON.
 * A second index maps raw-request hashes (hex SHA-256 of the request bytes as received) to
 * keys, so an exact repeat is answered without parsing (sp_store_get_by_raw).
 *
 * Backends. sp_store_open picks a backend by name (options.backend; only "sqlite" exists);
 * every function below goes through the backend's table of operations (store_backend.h), so
 * another backend can be added without touching callers. The SQLite backend: WAL journal, a
 * busy timeout, one transaction per write, `PRAGMA integrity_check` at open, a schema version
 * (PRAGMA user_version; a database written by a newer shardplan is refused with a message
 * saying so), incremental auto-vacuum so eviction gives space back to the file system.
 *
 * Durability. sp_store_put returns SP_OK only after its transaction committed: from then on the
 * plan survives the process being killed (kill -9) at any moment; with options.durable it also
 * survives power loss (synchronous=FULL; the default NORMAL skips the fsync per commit). Hit
 * counts and last-used times are batched in memory (options.touch_batch) and written by a
 * background thread of the store (a full batch, else within a second) or by the next write:
 * a cache hit itself never writes, and a crash can lose a second of counts, never a plan.
 *
 * Size. options.max_bytes (the daemon's --cache-max-mb) bounds the database: after each put
 * the least recently used plans (never the one just stored) are evicted until the pages in use
 * fit, and the freed pages are returned to the file system. A plan larger than the limit on
 * its own is refused (SP_ELIMIT).
 *
 * Threads. An sp_store may be used from any number of threads at once. Model: writes (put,
 * delete, evict, purge, flushing hit counts) go through one writer connection under a mutex;
 * reads (get, list, rows, stats) take a connection from a pool of up to options.max_readers
 * (WAL readers never wait for the writer), so a cache hit never waits behind a large put.
 * Several processes may open the same file (e.g. `shardplan purge` beside the daemon); they
 * wait for each other up to the busy timeout.
 *
 * Fault injection. options.vfs opens the database through a named SQLite VFS (register a shim
 * with sqlite3_vfs_register to fail reads, writes or syncs on the Nth call, or to report a full
 * disk); allocation failures can be injected with sqlite3_config(SQLITE_CONFIG_MALLOC, ...)
 * before the first sp_store_open (the store never calls sqlite3_config itself and only calls
 * sqlite3_initialize, which is a no-op after the first time). Every SQLite failure becomes a
 * status (SP_ENOMEM, SP_EIO, ...) with a message naming the file and the operation; the store
 * stays usable after a failed call. tests/test_store_faults.c shows both doors in use.
 *
 * Errors: every function returns SP_OK or a negative sp_status (ir/err.h) and fills `err`
 * (may be NULL). SP_ENOTFOUND: no plan with that key. SP_EINVAL: a malformed argument.
 *
 * Memory: results (sp_store_plan, sp_store_plan_list, sp_store_row_page) own their memory and
 * are released with their _free function (safe on a zeroed or already-freed result). Inputs
 * are copied; the caller keeps ownership.
 */
#ifndef SP_STORE_H
#define SP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"

#define SP_STORE_SCHEMA_VERSION 1      /* the database layout this build reads and writes */
#define SP_STORE_HASH_HEX 64           /* hex digits of a key or raw-request hash */
#define SP_STORE_SECTION_MAX 64        /* longest section name */

typedef struct sp_store sp_store;

typedef struct sp_store_options {
  const char *path;            /* the database file; its folder must exist */
  const char *backend;         /* NULL or "sqlite" */
  const char *vfs;             /* NULL: SQLite's default VFS; else a registered VFS's name */
  int busy_timeout_ms;         /* 0: 5000 */
  int64_t max_bytes;           /* 0: no limit; else the size bound (see Size above) */
  bool skip_integrity_check;   /* true: no PRAGMA integrity_check at open (benchmarks) */
  bool durable;                /* true: synchronous=FULL (commits survive power loss) */
  int max_readers;             /* read connections in the pool; 0: 8 */
  int touch_batch;             /* hits kept in memory before being written; 0: 64; 1: each
                                  hit written by its own call (no background thread) */
} sp_store_options;

/* One row of a plan: a section ("value", "op", "collective", "conflict", "summary", ... at
 * most SP_STORE_SECTION_MAX bytes), its position in the section (>= 0, unique per plan
 * and section), a label to filter on (NULL = "") and the row's JSON text (not parsed). */
typedef struct sp_store_row {
  const char *section;
  int64_t idx;
  const char *label;
  const char *json;
} sp_store_row;

/* A plan's record. As an input (sp_store_put) the fields marked [out] are ignored; as an
 * output the strings and blobs point into `mem_` and live until sp_store_plan_free. */
typedef struct sp_store_plan {
  char key[SP_STORE_HASH_HEX + 1];       /* lower-case hex (upper case accepted on input) */
  char raw_hash[SP_STORE_HASH_HEX + 1];  /* "" = none; as output: the hash stored at put */
  const char *planner_version;           /* required on put */
  const char *module_name;               /* NULL = "" */
  const char *mesh;                      /* the mesh as text; NULL = "" */
  const char *status;                    /* required on put: "optimal", "provisional", ... */
  double gap;                            /* relative gap of a cut-short plan; NAN = none */
  double total_cost;                     /* NAN = none */
  const void *request;                   /* the request bytes (as output: only with
                                            SP_STORE_WITH_REQUEST, else NULL) */
  size_t request_len;
  const void *plan;                      /* the whole answer, opaque (as output: only with
                                            SP_STORE_WITH_PLAN, else NULL) */
  size_t plan_len;
  int64_t created_ms;                    /* [out] Unix time in ms when this plan was stored */
  int64_t last_used_ms;                  /* [out] last get counted as a hit (or created) */
  int64_t hits;                          /* [out] gets counted as hits, kept across replaces */
  int64_t size_bytes;                    /* [out] request + plan + rows + text fields */
  int64_t n_rows;                        /* [out] rows stored with the plan */
  sp_arena *mem_;                        /* [out] owns the output's strings and blobs */
} sp_store_plan;

/* Flags of sp_store_get / sp_store_get_by_raw. */
#define SP_STORE_WITH_PLAN    0x1u  /* load the plan blob */
#define SP_STORE_WITH_REQUEST 0x2u  /* load the request bytes */
#define SP_STORE_COUNT_HIT    0x4u  /* found: count a hit and mark the plan used now */
#define SP_STORE_COUNT_MISS   0x8u  /* not found: count a miss */

typedef enum sp_store_order {
  SP_STORE_ORDER_LAST_USED = 0,   /* most recently used first */
  SP_STORE_ORDER_CREATED,         /* newest first */
  SP_STORE_ORDER_KEY              /* by key (stable under concurrent hits) */
} sp_store_order;

typedef struct sp_store_list_query {
  int64_t offset;                 /* plans skipped */
  int64_t limit;                  /* at most this many; 0: 100 */
  sp_store_order order;
  const char *planner_version;    /* NULL: all; else only plans of this version */
} sp_store_list_query;

typedef struct sp_store_plan_list {
  sp_store_plan *plans;           /* metadata only (no blobs) */
  size_t n;
  int64_t total;                  /* plans matching the query, before offset/limit */
  sp_arena *mem_;
} sp_store_plan_list;

typedef struct sp_store_row_query {
  const char *section;            /* required */
  const char *label_contains;     /* NULL or "": all rows; else rows whose label contains it
                                     (ASCII case-insensitive) */
  int64_t offset;
  int64_t limit;                  /* 0: 100 */
  int64_t idx_from;               /* only rows with idx >= idx_from (0: all); with limit 1,
                                     fetches one row by idx */
  bool skip_total;                /* do not count the matching rows (total is -1): a page
                                     read by idx_from then costs O(log n), not O(n) */
} sp_store_row_query;

typedef struct sp_store_row_page {
  sp_store_row *rows;             /* in idx order */
  size_t n;
  int64_t total;                  /* rows matching, before offset/limit */
  sp_arena *mem_;
} sp_store_row_page;

typedef struct sp_store_section_count {
  char name[SP_STORE_SECTION_MAX + 1];
  int64_t rows;
} sp_store_section_count;

typedef struct sp_store_stats {
  int64_t plans;                  /* plans stored */
  int64_t total_bytes;            /* sum of the plans' size_bytes */
  int64_t hits;                   /* counted hits, since the database was created */
  int64_t misses;                 /* counted misses, since the database was created */
  int64_t evictions;              /* plans evicted for size, since the database was created */
  int64_t used_bytes;             /* database pages in use (what max_bytes bounds) */
  int64_t file_bytes;             /* the database file plus its WAL on disk */
  int64_t max_bytes;              /* the limit in force (0 = none) */
} sp_store_stats;

/* Opens (creating it if absent) the store at options->path. Checks integrity and the schema
 * version; refuses a database of a newer schema, a corrupt one, or a file that is not a
 * shardplan plan cache, with a message naming the file. */
int sp_store_open(const sp_store_options *options, sp_store **out, sp_err *err);
/* Writes pending hit counts and closes. NULL is a no-op. No call may be in flight. */
void sp_store_close(sp_store *s);
const char *sp_store_path(const sp_store *s);
const char *sp_store_backend_name(const sp_store *s);

/* Stores a plan and its rows in one transaction, replacing any plan of the same key (its rows
 * and raw-request hashes go; its hit count stays). rows may be NULL when n_rows is 0. Then
 * evicts for size when options.max_bytes is set. */
int sp_store_put(sp_store *s, const sp_store_plan *plan, const sp_store_row *rows,
                 size_t n_rows, sp_err *err);
/* Fetches a plan by key into *out (freed by the caller with sp_store_plan_free, also after
 * a failure). SP_ENOTFOUND when absent. */
int sp_store_get(sp_store *s, const char *key, unsigned flags, sp_store_plan *out,
                 sp_err *err);
/* The same, looked up by a raw-request hash. */
int sp_store_get_by_raw(sp_store *s, const char *raw_hash, unsigned flags, sp_store_plan *out,
                        sp_err *err);
/* Maps one more raw-request hash to the plan `key` (another byte form of a request whose
 * answer is that plan as stored). SP_ENOTFOUND when there is no such plan. */
int sp_store_add_raw_hash(sp_store *s, const char *raw_hash, const char *key, sp_err *err);
/* Adds rows of one section to a stored plan, in one transaction, when the plan has no rows
 * of that section yet (rows computed after the plan was answered, e.g. the provenance; two
 * threads adding the same section store it once: the second call changes nothing and
 * returns SP_OK). SP_ENOTFOUND when there is no such plan (evicted or replaced meanwhile). */
int sp_store_add_rows(sp_store *s, const char *key, const sp_store_row *rows, size_t n_rows,
                      sp_err *err);
/* Deletes a plan, its rows and raw-request hashes. SP_ENOTFOUND when absent. */
int sp_store_delete(sp_store *s, const char *key, sp_err *err);

int sp_store_list(sp_store *s, const sp_store_list_query *q, sp_store_plan_list *out,
                  sp_err *err);
/* One page of a plan's rows of one section. SP_ENOTFOUND when the plan does not exist (an
 * existing plan with no such rows gives an empty page). */
int sp_store_rows(sp_store *s, const char *key, const sp_store_row_query *q,
                  sp_store_row_page *out, sp_err *err);
/* The sections of a plan with their row counts, by name; *out is malloc'd (caller frees). */
int sp_store_sections(sp_store *s, const char *key, sp_store_section_count **out, size_t *n,
                      sp_err *err);

int sp_store_stats_get(sp_store *s, sp_store_stats *out, sp_err *err);
/* Evicts least recently used plans until the pages in use fit `max_bytes` (< 0: the
 * options' limit; 0 with no limit set: nothing to do). *n_evicted may be NULL. */
int sp_store_evict(sp_store *s, int64_t max_bytes, int64_t *n_evicted, sp_err *err);
/* Deletes every plan whose planner version differs from `keep_version` ("": every plan). */
int sp_store_purge_version(sp_store *s, const char *keep_version, int64_t *n_purged,
                           sp_err *err);
/* Writes the hit counts kept in memory. */
int sp_store_flush(sp_store *s, sp_err *err);

void sp_store_plan_free(sp_store_plan *p);
void sp_store_plan_list_free(sp_store_plan_list *l);
void sp_store_row_page_free(sp_store_row_page *pg);

/* Whether `s` is a key or raw hash: 64 hex digits (either case). */
bool sp_store_hash_valid(const char *s);

#endif /* SP_STORE_H */
