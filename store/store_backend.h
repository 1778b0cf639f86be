/*
 * store_backend.h - the table of operations a plan-cache backend provides (private to store/).
 *
 * store.c checks the arguments (keys and hashes normalised to lower-case hex, required fields
 * present, results zeroed) and then calls the backend, so a backend may assume valid input.
 * A backend's handle (`impl`) is its own; store.c never looks inside. Every operation may be
 * called from several threads at once; the backend documents how it synchronises.
 */
#ifndef SP_STORE_BACKEND_H
#define SP_STORE_BACKEND_H

#include "store.h"

typedef struct sp_store_backend {
  const char *name;
  int (*open)(const sp_store_options *o, void **impl, sp_err *err);
  void (*close)(void *impl);
  int (*put)(void *impl, const sp_store_plan *p, const sp_store_row *rows, size_t n_rows,
             sp_err *err);
  /* by_raw: `hash` is a raw-request hash, else a key. */
  int (*get)(void *impl, bool by_raw, const char *hash, unsigned flags, sp_store_plan *out,
             sp_err *err);
  int (*add_raw_hash)(void *impl, const char *raw_hash, const char *key, sp_err *err);
  /* rows: n_rows >= 1, all of one section. */
  int (*add_rows)(void *impl, const char *key, const sp_store_row *rows, size_t n_rows,
                  sp_err *err);
  int (*del)(void *impl, const char *key, sp_err *err);
  int (*list)(void *impl, const sp_store_list_query *q, sp_store_plan_list *out, sp_err *err);
  int (*rows)(void *impl, const char *key, const sp_store_row_query *q, sp_store_row_page *out,
              sp_err *err);
  int (*sections)(void *impl, const char *key, sp_store_section_count **out, size_t *n,
                  sp_err *err);
  int (*stats)(void *impl, sp_store_stats *out, sp_err *err);
  int (*evict)(void *impl, int64_t max_bytes, int64_t *n_evicted, sp_err *err);
  int (*purge)(void *impl, const char *keep_version, int64_t *n_purged, sp_err *err);
  int (*flush)(void *impl, sp_err *err);
} sp_store_backend;

extern const sp_store_backend sp_store_sqlite_backend;

#endif /* SP_STORE_BACKEND_H */
